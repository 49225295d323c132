//! The subcommands, one module each: `check`, `resume`, `suite`, `list`, `bench` (and
//! `bench --simulate`, `bench_simulate`), `reference`, `explore`, `simulate`, `validate_log`, `conformance`. (`memtx replay` lives with the trace format, in
//! [`crate::trace::command`].) [`cluster`] runs `check` and `bench` over processes for both.

pub mod bench;
pub mod bench_simulate;
pub mod check;
pub mod cluster;
pub mod conformance;
pub mod explore;
pub mod list;
pub mod reference;
pub mod resume;
pub mod simulate;
pub mod suite;
pub mod validate_log;
