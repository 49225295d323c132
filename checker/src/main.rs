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
            if let Some(dir) = &args.report {
                // Refuse an unusable report directory before spending minutes on the check.
                std::fs::create_dir_all(dir)
                    .map_err(|e| UserError::io("create the report directory", dir, &e))?;
            }
            let result = check::check(&args, line)?;
            if let Some(dir) = &args.report {
                let name = args.name.clone().unwrap_or_else(|| {
                    format!("{}-{}", result.config.preset, result.variant.name())
                });
                result.write_json(&dir.join(format!("{name}.json")))?;
                result.write_markdown(&dir.join(format!("{name}.md")))?;
            }
            if args.json {
                println!("{}", result.to_json_string());
            } else {
                print!("{}", check::render_text(&result));
            }
            Ok(if result.passed() { 0 } else { 1 })
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
