//! The commit pipeline of docs/protocol.md §6: one test per outcome.
//!
//! Check 1 evidence, check 2 validity, check 3 semantic conflict (stale late write, higher and
//! lower authority, equal authority with a different or the same source, non-overlapping
//! validity), lineage (revoked parent, inactive parent), permission inheritance, check 4
//! dependency stability, the pass (Committed, or ActionSafe in an external-action transaction),
//! and the "Decided" rules: the first failing check decides; an adjudication's effect on a rival
//! happens only if the record commits; staged records are decided in id order.
//!
//! Sources (see `common`): `MID_A` and `MID_B` are two different sources of mid authority (0.8),
//! `HIGH` is 0.95 and `LOW` 0.5. Every accepted step is checked against every `always` property.
//!
//! One test binary, one module per check or subject: `evidence_validity`, `conflict`,
//! `lineage`, `decision`, `regressions`, `scopes`, `provenance`.

#[path = "../common/mod.rs"]
mod common;

mod conflict;
mod decision;
mod evidence_validity;
mod lineage;
mod provenance;
mod regressions;
mod scopes;

use common::*;
use memtx_model::pipeline::{self, CommitContext, Verdict};
use memtx_model::record::{Reason, RecordSet, Scope};
use memtx_model::state::Repair;
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Life, Variant};

/// r0: a committed Shared belief `slot 0 = value 0` from `source`, then a new transaction of a0.
fn rival_committed(name: &str, source: u8) -> Scenario {
    scenario(name)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(source))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .step(begin_medium(0))
}
