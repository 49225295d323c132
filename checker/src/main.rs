//! The `memtx` command. See `memtx --help` and README.md.

use clap::Parser;
use memtx_checker::cli::{Cli, Command};
use memtx_checker::error::UserError;
use memtx_checker::{check, list};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    match run(cli.command, &command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("memtx: {}", e.message());
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn run(command: Command, line: &str) -> Result<u8, UserError> {
    match command {
        Command::Check(args) => {
            let result = check::check(&args, line)?;
            if args.json {
                println!("{}", memtx_checker::fsutil::json_pretty(&result));
            } else {
                print!("{}", check::render_text(&result));
            }
            if let Some(dir) = &args.report {
                let name = args.name.clone().unwrap_or_else(|| {
                    format!("{}-{}", result.config.preset, result.config.variant.name())
                });
                memtx_checker::reporting::write_check_report(&result, dir, &name)?;
            }
            Ok(if result.passed { 0 } else { 1 })
        }
        Command::List(args) => {
            if args.json {
                println!("{}", memtx_checker::fsutil::json_pretty(&list::as_json()));
            } else {
                print!("{}", list::as_text());
            }
            Ok(0)
        }
        Command::Replay(args) => memtx_checker::replaying::replay_command(&args),
        Command::Bench(args) => memtx_checker::benching::bench_command(&args),
        Command::Reference(args) => memtx_checker::reference::reference_command(&args),
    }
}
