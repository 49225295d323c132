//! What each step of a trace did, for reports and pages: the step table and the records a step
//! changed.

use super::{replay, scenario, Trace};
use memtx_model::State;
use serde::{Deserialize, Serialize};

/// One row of a trace's step table (for reports): the action, what it changed, and the
/// invariants failing after it. See [`step_rows`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRow {
    /// Step number (1 = the first action).
    pub step: usize,
    /// The action's label, e.g. `a0 Commit`.
    pub action: String,
    /// The records whose lifecycle state, reason or effect changed, e.g. `r1
    /// Tentative→Committed, r2 added (Tentative)`; `refused: <rule>` for a refused step;
    /// `—` when no record changed.
    pub changed: String,
    /// Keys of the `always` properties failing in the state after the step.
    pub failing: Vec<String>,
}

/// The step table of `trace`: one [`StepRow`] per action, from a replay under the trace's own
/// configuration (the states are recomputed, so a hand-written scenario has rows too).
pub fn step_rows(trace: &Trace) -> Result<Vec<StepRow>, replay::ReplayError> {
    let report = replay::replay(trace, None)?;
    Ok(report
        .steps
        .windows(2)
        .map(|w| {
            let (pre, post) = (&w[0], &w[1]);
            let changed = match &post.refused {
                Some(r) => format!("refused: {}", r.rules.first().unwrap_or(&r.message)),
                None => record_changes(&pre.state, &post.state),
            };
            StepRow {
                step: post.step,
                action: post.label.clone(),
                changed,
                failing: post.failing.clone(),
            }
        })
        .collect())
}

/// The records a step changed: added, or with another lifecycle state, reason, effect or
/// pending revocation (the records [`record_changes`] describes).
pub fn changed_records(pre: &State, post: &State) -> memtx_model::RecordSet {
    let mut out = memtx_model::RecordSet::EMPTY;
    for id in post.ids() {
        let r = post.record(id);
        let changed = !pre.exists(id) || {
            let q = pre.record(id);
            q.life() != r.life()
                || q.reason != r.reason
                || q.effect != r.effect
                || q.pending_revocation != r.pending_revocation
        };
        if changed {
            out.insert(id);
        }
    }
    out
}

/// The records whose lifecycle state, reason, effect or pending revocation differ from `pre` to
/// `post`, in one short line (`—` when none did).
pub fn record_changes(pre: &State, post: &State) -> String {
    use memtx_model::display::life_name;
    let mut parts = Vec::new();
    for id in post.ids() {
        let r = post.record(id);
        if !pre.exists(id) {
            let effect = r
                .effect
                .map_or(String::new(), |e| format!(", {}", scenario::serde_name(&e)));
            parts.push(format!("r{id} added ({}{effect})", life_name(r.life())));
            continue;
        }
        let q = pre.record(id);
        let mut what = Vec::new();
        if q.life() != r.life() {
            what.push(format!("{}→{}", life_name(q.life()), life_name(r.life())));
        }
        if q.reason != r.reason {
            if let Some(reason) = r.reason {
                what.push(format!("({})", scenario::serde_name(&reason)));
            }
        }
        if q.effect != r.effect {
            let name = |e: Option<memtx_model::record::Effect>| {
                e.map_or("none".to_string(), |e| scenario::serde_name(&e))
            };
            what.push(format!("effect {}→{}", name(q.effect), name(r.effect)));
        }
        if q.pending_revocation != r.pending_revocation {
            what.push(if r.pending_revocation {
                "revocation requested".to_string()
            } else {
                "revocation no longer pending".to_string()
            });
        }
        if !what.is_empty() {
            parts.push(format!("r{id} {}", what.join(" ")));
        }
    }
    if parts.is_empty() {
        "—".to_string()
    } else {
        parts.join(", ")
    }
}
