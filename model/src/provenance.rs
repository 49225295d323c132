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
//! pipeline reads them is the variant's business.

use crate::record::{Kind, Record, RecordId, RecordSet};
use crate::state::State;

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
