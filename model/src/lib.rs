//! # memtx-model: the MemTX protocol as an executable, checkable state machine
//!
//! MemTX separates *recording* a memory write from *committing* a belief. This crate encodes the
//! protocol described in the repository's `docs/protocol.md` (section numbers as there), with its
//! names, one rule in one place:
//!
//! | docs/protocol.md | here |
//! |---|---|
//! | §1 bounded universe, presets | [`config`], [`presets`] |
//! | §2 records (governed objects) | [`record`] |
//! | §3 lifecycle and its table | [`lifecycle`] ([`lifecycle::allowed`], [`State::move_record`]) |
//! | §4 tiers, isolation, snapshots, visibility | [`txn`] |
//! | §5 operations | [`ops`] ([`Op`], [`ops::apply`]) |
//! | §6 commit pipeline | [`pipeline`] (one function per check) |
//! | §7 action gate | [`gate`] |
//! | §8 typed cascading repair, rollback log | [`cascade`], [`state::AuditEntry`] |
//! | §9 properties, ghost variables | [`properties`], [`ghost`] |
//! | §10 variants | [`config::Variant`], consulted where each rule lives |
//! | rule coverage (§1) | [`rules`] (every rule with a stable id, fired where it lives) |
//!
//! [`machine::MemTx`] is the `stateright::Model`: it only enumerates which operations to try.
//!
//! ```
//! use memtx_model::{presets::preset, ops::Op, machine::step, Variant, State};
//! use memtx_model::txn::{Tier, Isolation};
//! let cfg = preset("quick", Variant::Memtx).unwrap();
//! let s = step(&cfg, &State::initial(), &Op::Begin { agent: 0, tier: Tier::Medium, isolation: Isolation::CommittedRead }).unwrap();
//! assert!(s.txn(0).is_some());
//! ```

#![deny(missing_docs)]

pub mod cascade;
pub mod config;
pub mod display;
pub mod evidence;
pub mod gate;
pub mod ghost;
pub mod lifecycle;
pub mod machine;
pub mod ops;
pub mod packed;
pub mod pipeline;
pub mod presets;
pub mod properties;
pub mod provenance;
pub mod record;
pub mod rules;
pub mod state;
pub mod state_serde;
pub mod symmetry;
pub mod txn;

pub use config::{Config, Domain, Variant};
pub use lifecycle::Life;
pub use machine::MemTx;
pub use ops::Op;
pub use record::{Kind, Record, RecordId, RecordSet, Scope};
pub use state::State;
