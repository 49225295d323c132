//! Standard output as the commands write it: never a panic on a closed or full stdout.
//!
//! Rust's `print!` panics when a write fails (exit 101): `memtx check | head -1` did, once
//! `head` had gone, and so did `memtx list > /dev/full` (issue 26). Every command prints
//! through [`print()`]: a pipe whose reader has gone ends the command quietly with
//! [`CLOSED_EXIT_CODE`] (141, what a shell reports for a process that SIGPIPE ended, as
//! `grep` and `cargo` end there); any other write error is one line, exit 2.

use crate::error::{ErrorKind, UserError};
use std::io::Write;

/// The exit status of a command whose standard output was closed by its reader.
pub const CLOSED_EXIT_CODE: u8 = 141;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), UserError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| stdout_error(&e))
}

/// [`print()`] of `text` and a line break.
pub fn println(text: &str) -> Result<(), UserError> {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    print(&line)
}

/// The error a failed write to standard output becomes.
fn stdout_error(e: &std::io::Error) -> UserError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        UserError::new(
            ErrorKind::ClosedOutput,
            "standard output closed by its reader",
        )
    } else {
        UserError::new(
            ErrorKind::Io,
            format!("cannot write to standard output: {e}"),
        )
    }
}
