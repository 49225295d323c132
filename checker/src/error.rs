//! Errors: what the user can fix, and what only a developer can.
//!
//! memtx distinguishes two kinds of failure, and prints them differently:
//!
//! * A [`UserError`] is caused by the input: a missing or edited trace file, a trace from another
//!   configuration, an unwritable output directory. Its message is **one line** that names the
//!   cause *and* the fix, e.g. `cannot write in directory out/: Permission denied (os error 13);
//!   choose an output directory you can write to`. The CLI prints it to stderr and exits with
//!   [`USER_ERROR_EXIT_CODE`] (2). Every user error carries an [`ErrorKind`], so tests and
//!   callers can tell the causes apart without parsing messages.
//! * An [`InternalBug`] is a broken invariant of memtx itself. Its message begins with
//!   [`INTERNAL_BUG_PREFIX`] (`[memtx internal bug]`), the same prefix the model's assertions use,
//!   so a user who sees it knows to report it rather than to change their input.
//!
//! [`MemtxError`] holds either, for functions that can fail both ways.
//!
//! ```
//! use memtx_checker::error::{ErrorKind, UserError};
//! let e = UserError::with_fix(ErrorKind::Usage, "unknown preset \"tiny\"", "use quick, paper or large");
//! assert_eq!(e.to_string(), "unknown preset \"tiny\"; use quick, paper or large");
//! assert_eq!(e.kind(), ErrorKind::Usage);
//! ```

use std::fmt;
use std::path::Path;

/// The exit status of the CLI when it stops on a [`UserError`].
pub const USER_ERROR_EXIT_CODE: i32 = 2;

/// The exit status of the CLI when it stops on an [`InternalBug`].
pub const INTERNAL_BUG_EXIT_CODE: i32 = 3;

/// The prefix of every internal-bug message.
pub const INTERNAL_BUG_PREFIX: &str = "[memtx internal bug]";

/// What kind of user mistake an error reports (one variant per distinct cause).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A command-line usage mistake (unknown preset, bad option combination, ...).
    Usage,
    /// A file or directory could not be read or written.
    Io,
    /// An input file is not JSON at all.
    NotJson,
    /// A JSON input has the right format tag but a field is missing, mistyped or inconsistent.
    Malformed,
    /// A JSON input is not the kind of file expected (wrong `format` tag).
    WrongFormat,
    /// A file format version this memtx cannot read.
    UnknownVersion,
    /// A protocol variant name memtx does not know.
    UnknownVariant,
    /// A property key memtx does not know.
    UnknownProperty,
    /// A configuration that fails [`memtx_model::Config::validate`].
    InvalidConfig,
    /// A trace replayed against a configuration other than the one that made it.
    ConfigMismatch,
    /// A trace that does not replay (a step not enabled, a recorded state that differs).
    Replay,
    /// A run over processes (`--local`, `--processes`) could not start or lost a process.
    Cluster,
    /// Standard output was closed by its reader (`| head -1` gone): the command ends quietly
    /// with [`crate::output::CLOSED_EXIT_CODE`], printing nothing more.
    ClosedOutput,
}

/// An error caused by the input, with a one-line message naming the cause and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserError {
    kind: ErrorKind,
    message: String,
}

impl UserError {
    /// A user error of `kind` with `message` (made one line: line breaks become spaces; other
    /// control characters, which a file may carry into a message, are shown escaped, `\u{1b}`,
    /// never sent raw to the terminal).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        UserError {
            kind,
            message: escape_controls(&one_line(&message.into())),
        }
    }

    /// A user error whose message is `"<cause>; <fix>"`.
    pub fn with_fix(kind: ErrorKind, cause: impl fmt::Display, fix: impl fmt::Display) -> Self {
        UserError::new(kind, format!("{cause}; {fix}"))
    }

    /// A failed file operation: names the verb, the path, the OS error and a generic fix.
    pub fn io(doing: &str, path: &Path, err: &std::io::Error) -> Self {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot {doing} {}: {err}", path.display()),
            "check that the path exists and that you have permission",
        )
    }

    /// The cause of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exit status the CLI uses for it ([`USER_ERROR_EXIT_CODE`]; a closed standard
    /// output ends with [`crate::output::CLOSED_EXIT_CODE`]).
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::ClosedOutput => i32::from(crate::output::CLOSED_EXIT_CODE),
            _ => USER_ERROR_EXIT_CODE,
        }
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}

/// A broken invariant of memtx itself (not the user's fault).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalBug(String);

impl InternalBug {
    /// An internal bug described by `what` (without the prefix; it is added on display).
    pub fn new(what: impl Into<String>) -> Self {
        InternalBug(one_line(&what.into()))
    }
    /// The description, without the prefix.
    pub fn what(&self) -> &str {
        &self.0
    }
    /// The exit status the CLI uses for it ([`INTERNAL_BUG_EXIT_CODE`]).
    pub fn exit_code(&self) -> i32 {
        INTERNAL_BUG_EXIT_CODE
    }
}

impl fmt::Display for InternalBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{INTERNAL_BUG_PREFIX} {}", self.0)
    }
}

impl std::error::Error for InternalBug {}

/// Shorthand for [`InternalBug::new`].
pub fn internal_bug(what: impl Into<String>) -> InternalBug {
    InternalBug::new(what)
}

/// Either kind of failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemtxError {
    /// The input is at fault; the message says how to fix it.
    User(UserError),
    /// memtx is at fault.
    Internal(InternalBug),
}

impl MemtxError {
    /// The exit status for this error (2 for user errors, 3 for internal bugs).
    pub fn exit_code(&self) -> i32 {
        match self {
            MemtxError::User(e) => e.exit_code(),
            MemtxError::Internal(e) => e.exit_code(),
        }
    }
}

impl fmt::Display for MemtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemtxError::User(e) => e.fmt(f),
            MemtxError::Internal(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MemtxError {}

impl From<UserError> for MemtxError {
    fn from(e: UserError) -> Self {
        MemtxError::User(e)
    }
}

impl From<InternalBug> for MemtxError {
    fn from(e: InternalBug) -> Self {
        MemtxError::Internal(e)
    }
}

/// `text` with every control character but the tab written as a Rust escape (`\u{1b}`).
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` on one line: every run of whitespace that contains a line break becomes one space.
pub fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let mut in_ws = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            if c == '\n' || c == '\r' {
                pending_space = true;
            }
            in_ws.push(c);
        } else {
            if pending_space {
                out.push(' ');
            } else {
                out.push_str(&in_ws);
            }
            in_ws.clear();
            pending_space = false;
            out.push(c);
        }
    }
    if !pending_space {
        out.push_str(&in_ws);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_not_sent_raw() {
        let e = UserError::new(ErrorKind::Malformed, "value \u{1b}[31mred\u{0} and\ttab");
        assert_eq!(e.message(), "value \\u{1b}[31mred\\u{0} and\ttab");
        assert_eq!(escape_controls("plain"), "plain");
    }

    #[test]
    fn messages_are_one_line() {
        assert_eq!(one_line("a\n  b\r\nc d"), "a b c d");
        assert_eq!(one_line("no break "), "no break ");
        let e = UserError::new(ErrorKind::Malformed, "x\ny");
        assert_eq!(e.message(), "x y");
        assert_eq!(
            internal_bug("broken\ninvariant").to_string(),
            "[memtx internal bug] broken invariant"
        );
    }
}
