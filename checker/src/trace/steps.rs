//! What each step of a trace did, for reports and pages: the step table, the records a step
//! changed, and [`changes`], the short description of everything it changed (the replay's
//! text, the pages, the Explorer).

use super::{replay, scenario, Trace};
use memtx_model::display::{life_name, record_row};
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

/// A short description of what changed from `pre` to `post`.
pub fn changes(pre: &State, post: &State) -> Vec<String> {
    let mut out = Vec::new();
    if pre.clock != post.clock {
        out.push(format!("clock {}→{}", pre.clock, post.clock));
    }
    for id in post.ids() {
        let r = post.record(id);
        if !pre.exists(id) {
            let row = record_row(id, r);
            out.push(format!(
                "added {}",
                row.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
            continue;
        }
        let q = pre.record(id);
        let mut parts = Vec::new();
        if q.life() != r.life() {
            let why = match r.reason {
                Some(reason) if q.reason != r.reason => format!(" ({reason:?})"),
                _ => String::new(),
            };
            parts.push(format!(
                "{}→{}{why}",
                life_name(q.life()),
                life_name(r.life())
            ));
        } else if q.reason != r.reason {
            parts.push(format!("reason {:?}→{:?}", q.reason, r.reason));
        }
        if q.seq != r.seq {
            if let Some(seq) = r.seq {
                parts.push(format!("seq={seq}"));
            }
        }
        if q.effect != r.effect {
            parts.push(format!("effect {:?}→{:?}", q.effect, r.effect));
        }
        if q.pending_revocation != r.pending_revocation {
            parts.push(
                if r.pending_revocation {
                    "revocation requested"
                } else {
                    "no longer pending revocation"
                }
                .to_string(),
            );
        }
        if q.writer != r.writer {
            parts.push(match r.writer {
                Some(w) => format!("staged by a{w}"),
                None => "no longer staged".to_string(),
            });
        }
        if q.parents != r.parents {
            parts.push(format!("parents {:?}→{:?}", q.parents, r.parents));
        }
        if q.doubted_at_execution != r.doubted_at_execution {
            parts.push(format!("doubted at execution {:?}", r.doubted_at_execution));
        }
        if !parts.is_empty() {
            out.push(format!("r{id} {}", parts.join(", ")));
        }
    }
    for (agent, (a, b)) in pre.txns().iter().zip(post.txns()).enumerate() {
        match (a, b) {
            (None, Some(t)) => out.push(format!(
                "a{agent} opened {:?} {:?} snapshot={:?} snapshot_seq={}",
                t.tier, t.isolation, t.snapshot, t.snapshot_seq
            )),
            (Some(_), None) => out.push(format!("a{agent} closed")),
            (Some(x), Some(y)) if x != y => out.push(format!("a{agent} transaction changed")),
            _ => {}
        }
    }
    for (agent, (&a, &b)) in pre.contexts().iter().zip(post.contexts()).enumerate() {
        if a == b {
            continue;
        }
        let names = |set: memtx_model::RecordSet| {
            set.iter()
                .map(|id| format!("r{id}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let served: memtx_model::RecordSet = b.iter().filter(|&id| !a.contains(id)).collect();
        let dropped: memtx_model::RecordSet = a.iter().filter(|&id| !b.contains(id)).collect();
        if b.is_empty() {
            out.push(format!("a{agent} context emptied (was {})", names(a)));
        } else {
            if !served.is_empty() {
                out.push(format!("a{agent} context +{}", names(served)));
            }
            if !dropped.is_empty() {
                out.push(format!("a{agent} context -{}", names(dropped)));
            }
        }
    }
    if pre.next_seq != post.next_seq {
        out.push(format!("next_seq {}→{}", pre.next_seq, post.next_seq));
    }
    for id in post.ids() {
        let after = post.audit(id);
        let before = if pre.exists(id) {
            *pre.audit(id)
        } else {
            Default::default()
        };
        let added: Vec<String> = after
            .repairs()
            .filter(|r| !before.has(*r))
            .map(|r| format!("{r:?}"))
            .collect();
        if !added.is_empty() || before.cause != after.cause {
            let cause = after.cause.map_or("-".to_string(), |c| format!("r{c}"));
            let what = if added.is_empty() {
                "cause changed".to_string()
            } else {
                format!("+{}", added.join("+"))
            };
            out.push(format!("log r{id} {what} (cause {cause})"));
        }
    }
    let newly: Vec<String> = post
        .ghost
        .violated
        .numbers()
        .filter(|&n| !pre.ghost.is_violated(n))
        .map(|n| format!("I{n}"))
        .collect();
    if !newly.is_empty() {
        out.push(format!("ghost: {} violated", newly.join(", ")));
    }
    out
}
