//! Provenance follows content (revision 3, docs/protocol.md §4, §6, §11): what the middleware
//! serves each agent, the labels it puts on what the agent then stages, and the **content**
//! and **observation** those labels define.
//!
//! The middleware serves every read, so it knows what each agent holds in its prompt: its
//! **context**, every record served to it since its session began (a `Read`, the declared
//! parents and the records of a `Stage`, an `Adopt`, the support of an executed call, a
//! record restaged into its transaction). A record staged now may transcribe any of it,
//! declared or not, so the writer's context at staging is the record's **implicit**
//! provenance ([`crate::record::Record::implicit`]), and its **content** is itself, the
//! content of its declared parents and the content of its implicit provenance.
//!
//! The labels are kept under every variant (they are what the middleware knows); whether the
//! pipeline reads them is the variant's business: under `memtx` (provenance follows content,
//! §6) permission inheritance judges the content ([`content_readable_by_all_readers`]),
//! staleness judges the observation, lineage and the gate count transcribed records as parents
//! ([`lineage_ancestors`]), and a record is visible only with its whole content permitted
//! ([`content_permitted`]). `paper-provenance` reads none of it; `txn-provenance` forgets the
//! context when a transaction begins.

use crate::config::{Config, Variant};
use crate::record::{Kind, Record, RecordId, RecordSet, Scope};
use crate::state::State;
use crate::txn::permitted;

/// Does the pipeline read the labels (provenance follows content)? Not under
/// `paper-provenance`.
pub fn follows_content(cfg: &Config) -> bool {
    cfg.variant != Variant::PaperProvenance
}

/// The commit sequence number after which a rival makes belief `r`, judged in a transaction
/// whose snapshot is `snapshot`, a stale write (§6 (iii)): its observation under provenance
/// follows content, else the snapshot. Under `no-snapshot-reads` reads see the latest state, so
/// what a record observed is the latest state too (`snapshot` is then the latest sequence
/// number, [`crate::txn::snapshot_seq`]).
pub fn stale_from(cfg: &Config, r: &Record, snapshot: u8) -> u8 {
    match r.observed {
        Some(o) if follows_content(cfg) && cfg.variant != Variant::NoSnapshotReads => {
            o.min(snapshot)
        }
        _ => snapshot,
    }
}

/// Is the context forgotten when a transaction begins (`txn-provenance`)?
pub fn forgets_at_begin(cfg: &Config) -> bool {
    cfg.variant == Variant::TxnProvenance
}

/// Serves `records` to `agent`: they join its context (and so the read set of its open
/// transaction).
pub fn serve(state: &mut State, agent: u8, records: RecordSet) {
    let context = state.context(agent).union(records);
    state.set_context(agent, context);
}

/// The content of `roots`: each of them and, transitively, their declared parents and
/// implicit provenance. (A rebuilt view's implicit provenance may name records older than
/// itself and an adopted record younger ones than what it is read with, so this is a
/// fixpoint, not an ascending walk.)
pub fn content_of(state: &State, roots: RecordSet) -> RecordSet {
    let mut out = RecordSet::EMPTY;
    let mut todo = roots;
    while let Some(x) = todo.max() {
        todo.remove(x);
        if out.contains(x) {
            continue;
        }
        out.insert(x);
        let r = state.record(x);
        todo = todo.union(r.parents.union(r.implicit));
    }
    out
}

/// The content of record `id` (itself included).
pub fn content(state: &State, id: RecordId) -> RecordSet {
    content_of(state, RecordSet::single(id))
}

/// Does `x` assert what `r` asserts, over a validity that covers `r`'s (docs/protocol.md §6
/// (iii), revision 3.2)? Only beliefs assert anything.
pub fn asserts_over(x: &Record, r: &Record) -> bool {
    x.kind == Kind::Belief
        && r.kind == Kind::Belief
        && x.slot == r.slot
        && x.value == r.value
        && x.validity.from <= r.validity.from
        && r.validity.until <= x.validity.until
}

/// The observation of a belief `r` staged now (as `id`) by a transaction whose snapshot
/// sequence number is `snapshot` (docs/protocol.md §6 (iii)): the snapshot when what `r`
/// asserts was not in its content, else the freshest observation among the records of its
/// content other than itself that assert it over a validity covering `r`'s. `None` for views
/// and tool actions, which assert nothing.
///
/// Decided: a raw observation not yet adopted has no observation of its own (it asserts what
/// the tool returned; the transaction that adopts or transcribes it observes it at its
/// snapshot), so it is no candidate.
pub fn observation(state: &State, id: RecordId, snapshot: u8) -> Option<u8> {
    let r = state.record(id);
    if r.kind != Kind::Belief {
        return None;
    }
    let mut others = content_of(state, r.parents.union(r.implicit));
    others.remove(id);
    let freshest = others
        .iter()
        .map(|x| state.record(x))
        .filter(|x| asserts_over(x, r))
        .filter_map(|x| x.observed)
        .max();
    Some(freshest.unwrap_or(snapshot))
}

/// The records of `agent`'s context that a belief `r` staged now transcribes (§6 (ii)): those
/// staged by another transaction (not `agent`'s open one) that assert the same slot and value.
pub fn transcribed(state: &State, agent: u8, r: &Record) -> RecordSet {
    if r.kind != Kind::Belief {
        return RecordSet::EMPTY;
    }
    state
        .context(agent)
        .iter()
        .filter(|&x| {
            let o = state.record(x);
            o.writer != Some(agent)
                && o.kind == Kind::Belief
                && o.slot == r.slot
                && o.value == r.value
        })
        .collect()
}

/// The ancestors lineage and the gate's support closure judge (§6 (ii)): the transitive
/// declared parents and, under provenance follows content, the transcribed records, and theirs.
pub fn lineage_ancestors(cfg: &Config, state: &State, id: RecordId) -> RecordSet {
    if follows_content(cfg) {
        state.closure(id, |r| r.parents.union(r.transcribed))
    } else {
        state.ancestors(id)
    }
}

/// May `agent` see every record of the content of `id` (§4, revision 3.2: visibility needs the
/// whole content permitted)? Always under `paper-provenance`.
pub fn content_permitted(cfg: &Config, state: &State, agent: u8, id: RecordId) -> bool {
    let r = state.record(id);
    if !follows_content(cfg) || (r.parents.is_empty() && r.implicit.is_empty()) {
        return true;
    }
    content(state, id)
        .iter()
        .all(|x| permitted(agent, state.record(x)))
}

/// Permission inheritance over content (§6 (i), revision 3.2: who may read, not scope rank):
/// is every agent permitted to see `id` permitted to see every record of its content? A
/// Private record is seen by its owner only; a Shared or Public one by every agent.
pub fn content_readable_by_all_readers(state: &State, id: RecordId) -> bool {
    let r = state.record(id);
    content(state, id).iter().all(|x| {
        let o = state.record(x);
        o.scope != Scope::Private || (r.scope == Scope::Private && o.owner == r.owner)
    })
}
