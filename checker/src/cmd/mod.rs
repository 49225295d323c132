//! The subcommands, one module each: `check` (and `resume`), `suite`, `list`, `bench`,
//! `reference`, `explore`, `simulate`. (`memtx replay` lives with the trace format, in
//! [`crate::trace::command`].) [`cluster`] runs `check` and `bench` over processes for both.

pub mod bench;
pub mod check;
pub mod cluster;
pub mod explore;
pub mod list;
pub mod reference;
pub mod simulate;
pub mod suite;
