//! The subcommands, one module each: `check` (and `resume`), `suite`, `list`, `bench`,
//! `reference`, `explore`. (`memtx replay` lives with the trace format, in
//! [`crate::trace::command`].)

pub mod bench;
pub mod check;
pub mod explore;
pub mod list;
pub mod reference;
pub mod suite;
