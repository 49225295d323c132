//! The Explorer's one query: the state a path of choices reaches, judged where it stands.
//!
//! A path is a list of indices, comma-separated in the address (`3,0,5`): at each state the
//! operations the model proposes ([`memtx_model::machine::candidate_ops`], the explorers'
//! order) are tried, the enabled ones are numbered from 0, and the index picks one. The
//! same configuration always numbers them alike, so an address names one state.

use super::Explorer;
use crate::report::dag::dag_svg;
use crate::trace::changed_records;
use crate::trace::changes;
use memtx_model::display::op_line;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::{Op, State};
use serde_json::{json, Value};
use stateright::Model;

/// Longest path followed (steps).
pub const MAX_PATH: usize = 10_000;

/// Why a path was not followed.
#[derive(Debug, PartialEq, Eq)]
pub enum PathError {
    /// The address is not a list of indices (answered `400`).
    Malformed(String),
    /// An index picks no enabled operation (answered `404`).
    NotFollowed(String),
}

/// Parses `3,0,5` (or the empty string, the initial state).
pub fn parse(encoded: &str) -> Result<Vec<usize>, PathError> {
    if encoded.is_empty() {
        return Ok(Vec::new());
    }
    if encoded.len() > MAX_PATH * 6 {
        return Err(PathError::Malformed(format!(
            "the path is longer than {MAX_PATH} steps"
        )));
    }
    let indices = encoded
        .split(',')
        .map(|part| {
            part.parse::<usize>().map_err(|_| {
                PathError::Malformed(format!(
                    "'{}' is not a step index: a path reads like 3,0,5",
                    crate::input::cut(part)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if indices.len() > MAX_PATH {
        return Err(PathError::Malformed(format!(
            "the path is longer than {MAX_PATH} steps"
        )));
    }
    Ok(indices)
}

/// The operations proposed in a state: the enabled ones, each with the state it leads to, and
/// the refused ones, each with the model's reason.
pub struct Choices {
    /// Enabled, in the order the domain proposes them (an address's indices count these).
    pub enabled: Vec<(Op, State)>,
    /// Proposed but refused, with the reason.
    pub refused: Vec<(Op, String)>,
}

/// The operations proposed in `state`, split as [`Choices`] says.
pub fn choices(explorer: &Explorer, state: &State) -> Choices {
    let cfg = &explorer.model.cfg;
    let mut ops = Vec::new();
    candidate_ops(cfg, state, &mut ops);
    let mut enabled = Vec::new();
    let mut refused = Vec::new();
    for op in ops {
        match step(cfg, state, &op) {
            Ok(next) => enabled.push((op, next)),
            Err(why) => refused.push((op, why.to_string())),
        }
    }
    Choices { enabled, refused }
}

/// The index of `op` among the operations enabled in `state`, if it is one.
pub fn index_of(explorer: &Explorer, state: &State, op: &Op) -> Option<usize> {
    choices(explorer, state)
        .enabled
        .iter()
        .position(|(o, _)| o == op)
}

/// The view of the state `encoded` reaches (see the module documentation).
pub fn view(explorer: &Explorer, encoded: &str) -> Result<Value, PathError> {
    let path = parse(encoded)?;
    let model = &explorer.model;
    let mut state = model
        .init_states()
        .into_iter()
        .next()
        .ok_or_else(|| PathError::NotFollowed("the model has no initial state".into()))?;
    let properties = &model.selected;
    // Per property, the first depth on the path where it failed (an invariant) or held (an
    // example); depth 0 is the initial state.
    let mut first: Vec<Option<usize>> = vec![None; properties.len()];
    let note = |depth: usize, s: &State, first: &mut Vec<Option<usize>>| {
        for (p, at) in properties.iter().zip(first.iter_mut()) {
            let holds = (p.holds)(model, s);
            if at.is_none() && holds != p.is_invariant() {
                *at = Some(depth);
            }
        }
    };
    note(0, &state, &mut first);
    let mut steps = Vec::new();
    let mut previous: Option<State> = None;
    for (k, &index) in path.iter().enumerate() {
        let mut enabled = choices(explorer, &state).enabled;
        let count = enabled.len();
        if index >= count {
            return Err(PathError::NotFollowed(format!(
                "step {} of the path picks operation {index}, but {} enabled at depth {k}",
                k + 1,
                match count {
                    0 => "none is".to_string(),
                    1 => "only 1 (index 0) is".to_string(),
                    n => format!("only {n} (indices 0 to {}) are", n - 1),
                }
            )));
        }
        let (op, next) = enabled.swap_remove(index);
        steps.push(json!({
            "depth": k + 1,
            "action": op_line(&op),
            "changes": changes(&state, &next),
            "path": join(&path[..=k]),
        }));
        note(k + 1, &next, &mut first);
        previous = Some(std::mem::replace(&mut state, next));
    }
    let here = join(&path);
    let Choices { enabled, refused } = choices(explorer, &state);
    let next: Vec<Value> = enabled
        .iter()
        .enumerate()
        .map(|(i, (op, post))| {
            let to = if here.is_empty() {
                i.to_string()
            } else {
                format!("{here},{i}")
            };
            json!({
                "action": op_line(op),
                "changes": changes(&state, post),
                "unchanged": post == &state,
                "path": to,
            })
        })
        .collect();
    let refused: Vec<Value> = refused
        .iter()
        .map(|(op, why)| json!({ "action": op_line(op), "reason": why }))
        .collect();
    let verdicts: Vec<Value> = properties
        .iter()
        .zip(&first)
        .map(|(p, at)| {
            let holds = (p.holds)(model, &state);
            json!({
                "key": p.key,
                "name": p.name.strip_prefix(p.key).map(str::trim).unwrap_or(p.name),
                "kind": if p.is_invariant() { "invariant" } else { "example" },
                "holds": holds,
                "first": at,
            })
        })
        .collect();
    let changed = match &previous {
        Some(pre) => changed_records(pre, &state),
        None => memtx_model::RecordSet::EMPTY,
    };
    let cfg = &model.cfg;
    Ok(json!({
        "preset": cfg.preset,
        "variant": cfg.variant.name(),
        "check": explorer.check_command,
        "depth": path.len(),
        "path": here,
        "steps": steps,
        "state": format!("{state:?}"),
        "svg": dag_svg(&state, changed),
        "verdicts": verdicts,
        "next": next,
        "refused": refused,
    }))
}

fn join(path: &[usize]) -> String {
    path.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::presets::preset;
    use memtx_model::{MemTx, Variant};

    fn explorer(variant: Variant) -> Explorer {
        let cfg = preset("quick", variant).expect("quick");
        Explorer {
            model: MemTx::new(cfg),
            check_command: "memtx check --preset quick".into(),
        }
    }

    #[test]
    fn paths_parse_or_say_why() {
        assert_eq!(parse(""), Ok(vec![]));
        assert_eq!(parse("3,0,12"), Ok(vec![3, 0, 12]));
        for bad in ["3,,1", "a", "-1", "1;2", "99999999999999999999999"] {
            assert!(matches!(parse(bad), Err(PathError::Malformed(_))), "{bad}");
        }
        let long = vec!["0"; MAX_PATH + 1].join(",");
        assert!(matches!(parse(&long), Err(PathError::Malformed(_))));
    }

    #[test]
    fn the_view_follows_the_enabled_operations_and_refuses_a_wrong_index() {
        let ex = explorer(Variant::Memtx);
        let root = view(&ex, "").unwrap();
        let next = root["next"].as_array().unwrap();
        assert!(!next.is_empty());
        assert_eq!(root["depth"], 0);
        // Every listed choice is followed, and its own view lists the step taken.
        for (i, n) in next.iter().enumerate() {
            let v = view(&ex, &i.to_string()).unwrap();
            assert_eq!(v["steps"][0]["action"], n["action"]);
            assert_eq!(v["depth"], 1);
        }
        let beyond = next.len().to_string();
        match view(&ex, &beyond) {
            Err(PathError::NotFollowed(why)) => {
                assert!(why.contains("enabled at depth 0"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn verdicts_judge_the_state_shown_and_name_the_step_where_an_invariant_first_failed() {
        // Under no-action-gate, a refund on an unvalidated belief executes: walk the first
        // path the page would offer to a violated I1 or I9 and check the view says so.
        let ex = explorer(Variant::NoActionGate);
        let model = &ex.model;
        let mut state = model.init_states().remove(0);
        let mut path: Vec<usize> = Vec::new();
        // Breadth-first over paths, shortest first, until some invariant fails.
        let mut queue = std::collections::VecDeque::from([(Vec::new(), state.clone())]);
        let mut seen = std::collections::HashSet::new();
        'search: while let Some((p, s)) = queue.pop_front() {
            for (i, (_, next)) in choices(&ex, &s).enabled.into_iter().enumerate() {
                let mut q = p.clone();
                q.push(i);
                if model
                    .selected
                    .iter()
                    .any(|d| d.is_invariant() && !(d.holds)(model, &next))
                {
                    path = q;
                    state = next;
                    break 'search;
                }
                if seen.insert(next.clone()) && q.len() < 8 {
                    queue.push_back((q, next));
                }
            }
        }
        assert!(
            !path.is_empty(),
            "no-action-gate breaks an invariant within 8 steps"
        );
        let v = view(&ex, &join(&path)).unwrap();
        let failing: Vec<&Value> = v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["kind"] == "invariant" && x["holds"] == false)
            .collect();
        assert!(!failing.is_empty());
        for f in &failing {
            let key = f["key"].as_str().unwrap();
            let def = memtx_model::properties::PropertyDef::find(key).unwrap();
            assert!(
                !(def.holds)(model, &state),
                "{key} is judged at the state shown"
            );
            // Shortest path: it failed at the last step, not before.
            assert_eq!(f["first"], path.len(), "{key}");
        }
        // One step back, the same invariants hold again.
        let back = view(&ex, &join(&path[..path.len() - 1])).unwrap();
        for f in &failing {
            let again = back["verdicts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["key"] == f["key"])
                .unwrap();
            assert_eq!(again["holds"], true);
            assert_eq!(again["first"], Value::Null);
        }
    }
}
