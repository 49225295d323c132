//! # memtx: bounded exhaustive checking of the MemTX protocol
//!
//! The library behind the `memtx` command. Map (see ARCHITECTURE.md for the flow of one check):
//!
//! | module | holds |
//! |---|---|
//! | [`cli`], [`setup`] | the command line; turning it into a checked configuration |
//! | [`cmd`] ([`cmd::check`] and resume, [`cmd::suite`], [`cmd::list`], [`cmd::bench`], [`cmd::reference`], [`cmd::explore`]), [`trace::command`] (replay) | one module per subcommand |
//! | [`engine`], [`cmd::cluster`] | the explorers behind one result type; running `check` and `bench` over processes |
//! | [`explore`] | the fast explorer: sharded, level-synchronous BFS over packed states, checkpoints, its timely transport |
//! | [`trace`] ([`trace::itf`], [`trace::replay`]) | counterexample traces, ITF export, re-execution |
//! | [`report`] | run reports, the ablation matrix, the manifest of pinned counts, the HTML pages |
//! | [`error`], [`fsutil`], [`input`], [`interrupt`], [`output`] | one-line user errors (exit 2); atomic file writes and output checks; reading user files safely; SIGINT/SIGTERM; standard output without panics |
//! | [`bench`](mod@bench) ([`bench::two_phase_commit`]) | benchmarks and their Gray–Lamport two-phase-commit test model |
//! | [`progress`] | progress on stderr |
//! | [`conformance`] | the conformance suite generated from the model (`memtx conformance`) |
//! | [`log`] | implementations' event logs read and validated against the model (`memtx validate-log`) |
//! | [`web`] | the Explorer `memtx explore` serves: its page and JSON API, over std's TCP |

#![deny(missing_docs)]

// `eprintln!` and `eprint!` that never panic: std's panic when standard error is full or
// broken (`2>/dev/full` ended `memtx check --json` with exit 101). A line that cannot be
// written is lost; the run goes on. Defined before the modules, so it is the one they use.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

pub mod bench;
pub mod cli;
pub mod cmd;
pub mod conformance;
pub mod engine;
pub mod error;
pub mod explore;
pub mod fsutil;
pub mod input;
pub mod interrupt;
pub mod log;
pub mod output;
pub mod paired;
pub mod progress;
pub mod report;
pub mod setup;
pub mod simulate;
pub mod trace;
pub mod web;
