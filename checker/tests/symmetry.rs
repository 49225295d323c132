//! Symmetry reduction over agents, values and sources, proven sound by comparison:
//!
//! * the reduced run finds the same verdicts and discoveries of the same lengths as the
//!   unreduced run, on `quick` under every variant, on the small suite presets, and on `paper`
//!   (against its pinned reference report, computed without symmetry);
//! * the number of states the reduced run visits is the number of orbits of the reachable
//!   states, counted independently: every reachable state is enumerated without reduction, and
//!   its orbit is named by the least of its images under *every* renaming of the group (not
//!   the model's first-appearance relabelling), on `quick` and on a variant of `quick` whose
//!   two mid sources write alike (so sources are renamed too);
//! * all values and sources renamings of a domain that does not allow them are refused.

use memtx_checker::engine::{run, RunOptions, RunOutcome};
use memtx_checker::report::RunReport;
use memtx_model::config::{Config, VARIANTS};
use memtx_model::presets::preset;
use memtx_model::symmetry::Symmetry;
use memtx_model::{Kind, MemTx, Scope, State, Variant};
use stateright::Model;
use std::collections::HashSet;
use std::path::Path;

fn outcome(model: &MemTx, symmetry: bool) -> RunOutcome {
    let opts = RunOptions {
        symmetry,
        ..RunOptions::fast(2)
    };
    let out = run(model, &opts, None).expect("runs");
    assert!(out.stopped_early.is_none());
    out
}

/// Per property: the length of its discovery, if any.
fn lengths(out: &RunOutcome) -> Vec<(&'static str, Option<usize>)> {
    out.discoveries
        .iter()
        .map(|(k, p)| (*k, p.as_ref().map(Vec::len)))
        .collect()
}

fn assert_same_verdicts(cfg: Config) {
    let model = MemTx::new(cfg.clone());
    let plain = outcome(&model, false);
    let reduced = outcome(&model, true);
    assert_eq!(
        lengths(&plain),
        lengths(&reduced),
        "{} × {}: symmetry changed a verdict or a discovery's length",
        cfg.preset,
        cfg.variant.name()
    );
    assert!(
        reduced.unique < plain.unique,
        "{}: no reduction",
        cfg.preset
    );
}

#[test]
fn quick_under_every_variant_keeps_its_verdicts_and_lengths() {
    for v in VARIANTS {
        assert_same_verdicts(preset("quick", v.variant).unwrap());
    }
}

#[test]
fn small_suite_presets_keep_their_verdicts_and_lengths() {
    for name in ["evidence", "lineage", "observations", "scopes"] {
        assert_same_verdicts(preset(name, Variant::Memtx).unwrap());
    }
}

/// `paper` reduced (agents, values) against its reference report, computed without symmetry:
/// the same verdicts and lengths, and fewer states than agent symmetry alone.
#[test]
fn paper_reduced_agrees_with_its_unreduced_reference_and_beats_agents_alone() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports");
    let reference = RunReport::read_json(&reports.join("paper-memtx.json")).unwrap();
    assert!(!reference.symmetry);
    let cfg = preset("paper", Variant::Memtx).unwrap();
    let model = MemTx::new(cfg.clone());
    let reduced = outcome(&model, true);
    for (key, path) in &reduced.discoveries {
        let pinned = reference.property(key).unwrap();
        assert_eq!(
            path.as_ref().map(|p| p.len() - 1),
            pinned.trace_len,
            "{key}: the length differs from the unreduced reference"
        );
    }
    let mut agents_only = MemTx::new(cfg.clone());
    agents_only.symmetry = Symmetry::agents_only(&cfg);
    let by_agents = outcome(&agents_only, true);
    assert!(
        reduced.unique < by_agents.unique && by_agents.unique < reference.unique_states,
        "all {} < agents only {} < none {}",
        reduced.unique,
        by_agents.unique,
        reference.unique_states
    );
}

/// Every reachable state, by breadth-first search without reduction.
fn reachable(model: &MemTx) -> Vec<State> {
    let mut seen: HashSet<State> = HashSet::new();
    let mut queue: Vec<State> = model.init_states();
    for s in &queue {
        seen.insert(s.clone());
    }
    let mut actions = Vec::new();
    while let Some(s) = queue.pop() {
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            if let Some(next) = model.next_state(&s, a) {
                if model.within_boundary(&next) && seen.insert(next.clone()) {
                    queue.push(next);
                }
            }
        }
    }
    seen.into_iter().collect()
}

/// Every permutation of `0..n`.
fn permutations(n: u8) -> Vec<Vec<u8>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// The orbit's name: the least image of `s` under every renaming of the group (agents, each
/// slot's values, each source class), applied directly.
fn least_image(s: &State, group: &Symmetry) -> State {
    let agent_perms = permutations(group.agents);
    let value_perms = permutations(group.values);
    assert_eq!(group.slots, 1, "this brute force renames one slot's values");
    let class_perms: Vec<Vec<Vec<u8>>> = group
        .source_classes
        .iter()
        .map(|c| permutations(c.len() as u8))
        .collect();
    // Every combination of one permutation per source class.
    let mut source_maps: Vec<Vec<u8>> = vec![(0..16).collect()];
    for (class, perms) in group.source_classes.iter().zip(&class_perms) {
        let mut next = Vec::new();
        for map in &source_maps {
            for p in perms {
                let mut m = map.clone();
                for (i, &member) in class.iter().enumerate() {
                    m[member as usize] = class[p[i] as usize];
                }
                next.push(m);
            }
        }
        source_maps = next;
    }
    let mut best: Option<State> = None;
    for ap in &agent_perms {
        let renamed_agents = s.permute_agents(ap);
        for vp in &value_perms {
            for sm in &source_maps {
                let mut image = renamed_agents.clone();
                let ids: Vec<_> = image.ids().collect();
                for id in ids {
                    let r = image.record_mut(id);
                    // Only beliefs carry a value and a source (views and tool calls hold
                    // placeholders).
                    if r.kind != Kind::Belief {
                        continue;
                    }
                    r.value = vp[r.value as usize];
                    r.source = sm[r.source as usize];
                }
                if best.as_ref().is_none_or(|b| image < *b) {
                    best = Some(image);
                }
            }
        }
    }
    best.expect("the group has the identity")
}

fn assert_orbits_counted(cfg: Config) {
    let model = MemTx::new(cfg.clone());
    let states = reachable(&model);
    let orbits: HashSet<State> = states
        .iter()
        .map(|s| least_image(s, &model.symmetry))
        .collect();
    let reduced = outcome(&model, true);
    assert_eq!(
        reduced.unique,
        orbits.len() as u64,
        "{}: the reduced run visits one state per orbit ({} reachable states, {})",
        cfg.preset,
        states.len(),
        model.symmetry.describe()
    );
    assert!(orbits.len() < states.len());
}

#[test]
fn quick_reduced_visits_exactly_one_state_per_orbit() {
    let cfg = preset("quick", Variant::Memtx).unwrap();
    assert_eq!(MemTx::new(cfg.clone()).symmetry.order(), 2);
    assert_orbits_counted(cfg);
}

/// `quick` with its two mid sources writing alike (both high confidence, shared): the
/// sources are detected interchangeable and renamed too.
#[test]
fn interchangeable_sources_are_detected_and_reduced_exactly() {
    let mut cfg = preset("quick", Variant::Memtx).unwrap();
    for w in &mut cfg.domain.writes {
        w.scope = Scope::Shared;
    }
    cfg.bounds.records = 2;
    let group = Symmetry::of(&cfg);
    assert_eq!(
        group.source_classes,
        vec![vec![0, 1]],
        "{}",
        group.describe()
    );
    assert_orbits_counted(cfg.clone());
    assert_same_verdicts(cfg);
}

/// Sources of equal authority that write differently are not interchangeable, nor are
/// sources of different authority that write alike.
#[test]
fn sources_that_differ_are_never_renamed() {
    let cfg = preset("quick", Variant::Memtx).unwrap();
    // src0 and src1 are both mid, but src1 writes private records only.
    assert!(Symmetry::of(&cfg).source_classes.is_empty());
    let mut alike = cfg.clone();
    for w in &mut alike.domain.writes {
        w.scope = Scope::Shared;
    }
    // src2 (high) writes like src0 and src1 (mid), but its authority differs.
    assert_eq!(Symmetry::of(&alike).source_classes, vec![vec![0, 1]]);
}
