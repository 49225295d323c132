//! Symmetry reduction's representative, judged against the whole group by brute force.
//!
//! For states reached by seeded random walks over a configuration with three agents, two slots
//! of three values and two interchangeable sources (a group of 432 renamings), and for renamings
//! drawn at random from that group:
//!
//! * **complete**: a renamed state has the same representative as the state
//!   (`canonical(g·s) == canonical(s)`): states of one orbit are explored once;
//! * **sound**: the representative is one of the state's own images under the group: states of
//!   different orbits are never merged.
//!
//! The renamings are applied here, field by field, not by the code under test (agents through
//! `State::permute_agents`, which the checker's orbit counts also use). `checker/tests/symmetry.rs`
//! counts orbits of whole reachable state spaces; this test reaches the group's larger cases
//! (three agents, two slots) that no state space small enough to count covers.

mod common;

use memtx_model::evidence::Authority;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::record::Kind;
use memtx_model::symmetry::Symmetry;
use memtx_model::{State, Variant};

/// SplitMix64: the walks and renamings of this test, the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A uniformly random permutation of `0..n` (Fisher–Yates).
    fn permutation(&mut self, n: usize) -> Vec<u8> {
        let mut p: Vec<u8> = (0..n as u8).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i + 1));
        }
        p
    }
}

/// Every permutation of `0..n`, built by insertion (not by the model's `next_permutation`).
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

/// One renaming of the group: agents, each slot's values, and a source map that permutes
/// within each class.
#[derive(Clone, Debug)]
struct Renaming {
    agents: Vec<u8>,
    values: Vec<Vec<u8>>,
    sources: Vec<u8>,
}

impl Renaming {
    fn apply(&self, s: &State) -> State {
        let mut out = s.permute_agents(&self.agents);
        let ids: Vec<_> = out.ids().collect();
        for id in ids {
            let r = out.record_mut(id);
            // Only beliefs carry a value and a source (views and tool calls hold placeholders).
            if r.kind != Kind::Belief {
                continue;
            }
            r.value = self.values[r.slot as usize][r.value as usize];
            r.source = self.sources[r.source as usize];
        }
        out
    }
}

/// A source map from one permutation per class.
fn source_map(group: &Symmetry, perms: &[Vec<u8>]) -> Vec<u8> {
    let mut map: Vec<u8> = (0..16).collect();
    for (class, p) in group.source_classes.iter().zip(perms) {
        for (i, &member) in class.iter().enumerate() {
            map[member as usize] = class[p[i] as usize];
        }
    }
    map
}

/// Every way of choosing one permutation from each of `choices`, in order.
fn one_of_each(choices: &[Vec<Vec<u8>>]) -> Vec<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    for options in choices {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                options.iter().map(move |p| {
                    let mut c = prefix.clone();
                    c.push(p.clone());
                    c
                })
            })
            .collect();
    }
    out
}

/// Every renaming of the group.
fn every_renaming(group: &Symmetry) -> Vec<Renaming> {
    let per_slot = one_of_each(&vec![permutations(group.values); group.slots as usize]);
    let class_perms: Vec<_> = group
        .source_classes
        .iter()
        .map(|class| permutations(class.len() as u8))
        .collect();
    let class_choices = one_of_each(&class_perms);
    let mut out = Vec::new();
    for agents in permutations(group.agents) {
        for values in &per_slot {
            for classes in &class_choices {
                out.push(Renaming {
                    agents: agents.clone(),
                    values: values.clone(),
                    sources: source_map(group, classes),
                });
            }
        }
    }
    out
}

fn random_renaming(group: &Symmetry, rng: &mut Rng) -> Renaming {
    let perms: Vec<Vec<u8>> = group
        .source_classes
        .iter()
        .map(|c| rng.permutation(c.len()))
        .collect();
    Renaming {
        agents: rng.permutation(group.agents as usize),
        values: (0..group.slots)
            .map(|_| rng.permutation(group.values as usize))
            .collect(),
        sources: source_map(group, &perms),
    }
}

/// States of seeded random walks: `walks` walks of up to `depth` steps, every state kept.
fn walked_states(cfg: &memtx_model::Config, walks: u64, depth: usize) -> Vec<State> {
    let mut states = Vec::new();
    let mut ops = Vec::new();
    for walk in 0..walks {
        let mut rng = Rng(walk.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 7);
        let mut s = State::initial();
        for _ in 0..depth {
            ops.clear();
            candidate_ops(cfg, &s, &mut ops);
            let mut next = None;
            while next.is_none() && !ops.is_empty() {
                let op = ops.swap_remove(rng.below(ops.len()));
                next = step(cfg, &s, &op).ok();
            }
            let Some(n) = next else { break };
            s = n;
            states.push(s.clone());
        }
    }
    states
}

/// Judges the representative of `cfg`'s group on states of seeded random walks (see the
/// module documentation).
fn assert_representative_exact(cfg: &memtx_model::Config) {
    let group = Symmetry::of(cfg);
    let everything = every_renaming(&group);
    assert_eq!(everything.len() as u64, group.order());

    let states = walked_states(cfg, 40, 24);
    assert!(
        states.len() > 500,
        "too few states walked: {}",
        states.len()
    );
    let mut rng = Rng(42);
    let (mut moved, mut several_agents, mut both_slots) = (0, 0, 0);
    for s in states.iter().step_by(3) {
        let canonical = group.canonical(s);
        for _ in 0..4 {
            let g = random_renaming(&group, &mut rng);
            let image = g.apply(s);
            moved += usize::from(image != *s);
            assert_eq!(
                group.canonical(&image),
                canonical,
                "one orbit, two representatives ({}): {s:?} renamed by {g:?}",
                group.describe()
            );
        }
        assert!(
            everything.iter().any(|g| g.apply(s) == canonical),
            "the representative is not an image of the state ({}): {s:?}",
            group.describe()
        );
        let beliefs: Vec<_> = s
            .ids()
            .map(|id| s.record(id))
            .filter(|r| r.kind == Kind::Belief)
            .collect();
        several_agents += usize::from(
            beliefs
                .iter()
                .any(|r| beliefs.iter().any(|q| q.owner != r.owner)),
        );
        both_slots += usize::from(
            beliefs
                .iter()
                .any(|r| beliefs.iter().any(|q| q.slot != r.slot)),
        );
    }
    // The renamings were put to the test: states that change under them, beliefs of
    // several agents and of both slots.
    assert!(moved > 1_000, "renamings moved only {moved} states");
    assert!(several_agents > 50, "{several_agents}");
    assert!(both_slots > 50, "{both_slots}");
}

/// Three agents, two slots of three values, and the two mid sources writing alike: 432
/// renamings.
#[test]
fn the_representative_is_one_per_orbit_and_in_the_orbit() {
    let mut cfg = common::wide(Variant::Memtx);
    cfg.bounds.agents = 3;
    cfg.bounds.values = 3;
    cfg.bounds.records = 6;
    let group = Symmetry::of(&cfg);
    // Both mid sources write every shape: one class of two.
    assert_eq!(
        group.source_classes,
        vec![vec![0, 1]],
        "{}",
        group.describe()
    );
    assert_eq!((group.agents, group.slots, group.values), (3, 2, 3));
    assert_eq!(group.order(), 6 * 36 * 2);
    assert_representative_exact(&cfg);
}

/// The same without interchangeable sources (each source its own authority): agents and
/// values alone, 216 renamings.
#[test]
fn values_are_renamed_without_interchangeable_sources() {
    let mut cfg = common::wide(Variant::Memtx);
    cfg.bounds.agents = 3;
    cfg.bounds.values = 3;
    cfg.bounds.records = 6;
    cfg.bounds.sources = vec![Authority::Mid, Authority::High];
    cfg.domain.writes.retain(|w| w.source < 2);
    let group = Symmetry::of(&cfg);
    assert!(group.source_classes.is_empty(), "{}", group.describe());
    assert_eq!(group.order(), 6 * 36);
    assert_representative_exact(&cfg);
}

/// What the preamble of a reduced run says the group is.
#[test]
fn the_group_is_described_as_it_is() {
    assert_eq!(Symmetry::none().describe(), "agents (1): 1 renamings");
    let mut cfg = common::wide(Variant::Memtx);
    cfg.bounds.agents = 3;
    cfg.bounds.values = 3;
    assert_eq!(
        Symmetry::of(&cfg).describe(),
        "agents (3), values within each of 2 slot(s) (3), sources {src0, src1}: 432 renamings"
    );
    cfg.bounds.values = 1;
    assert_eq!(
        Symmetry::of(&cfg).describe(),
        "agents (3), sources {src0, src1}: 12 renamings"
    );
}
