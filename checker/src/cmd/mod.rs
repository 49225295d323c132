//! Subcommands that are a module of their own: `memtx explore`.

pub mod explore;
