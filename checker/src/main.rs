//! The `memtx` command. See `memtx --help` and README.md.

use clap::Parser;
use memtx_checker::cli::{Cli, Command};
use memtx_checker::cmd::{check, list, resume};
use memtx_checker::error::{ErrorKind, UserError};
use memtx_checker::output;
use memtx_checker::trace::shell_quote;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    // The command as a user would type it again: `memtx` and the arguments, quoted for a
    // shell, without the local path of the binary.
    // A process started by `--local` records the command of the run it belongs to.
    let command =
        std::env::var(memtx_checker::cmd::cluster::COMMAND_VARIABLE).unwrap_or_else(|_| {
            std::iter::once("memtx".to_string())
                .chain(std::env::args().skip(1).map(|a| shell_quote(&a)))
                .collect::<Vec<_>>()
                .join(" ")
        });
    match run(cli.command, &command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.kind() != ErrorKind::ClosedOutput {
                // A closed standard error must not turn a one-line error into a panic.
                let _ = writeln!(std::io::stderr(), "memtx: {}", e.message());
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn run(command: Command, line: &str) -> Result<u8, UserError> {
    match command {
        Command::Check(args) => check::check_command(&args, line),
        Command::Resume(args) => resume::resume_command(&args, line),
        Command::List(args) => {
            if args.json {
                output::println(&memtx_checker::fsutil::json_pretty(&list::as_json()))?;
            } else {
                output::print(&list::as_text())?;
            }
            Ok(0)
        }
        Command::Replay(args) => memtx_checker::trace::command::replay_command(&args),
        Command::Bench(args) => memtx_checker::cmd::bench::bench_command(&args),
        Command::Reference(args) => memtx_checker::cmd::reference::reference_command(&args),
        Command::Explore(args) => memtx_checker::cmd::explore::explore_command(&args),
        Command::Simulate(args) => memtx_checker::cmd::simulate::simulate_command(&args, line),
        Command::Suite(args) => memtx_checker::cmd::suite::suite_command(&args, line),
        Command::Conformance(args) => memtx_checker::cmd::conformance::conformance_command(&args),
        Command::ValidateLog(args) => memtx_checker::cmd::validate_log::validate_log_command(&args),
    }
}

/// Help and version go to stdout as clap prints them; a usage mistake becomes one line on stderr
/// (clap's own message is several lines) and exit code 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    // clap's first paragraph, on one line: a message that ends in a colon lists what it is
    // about on the lines below ("required arguments were not provided:" and the arguments).
    let text = e.to_string();
    let paragraph: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let joined = paragraph.join(" ");
    let first = if joined.is_empty() {
        "invalid command line"
    } else {
        joined.as_str()
    };
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let _ = writeln!(std::io::stderr(), "memtx: {first} (see `memtx --help`)");
    ExitCode::from(memtx_checker::error::USER_ERROR_EXIT_CODE as u8)
}
