//! Property-based tests: on random graphs (with a boundary, actions that change nothing,
//! cycles and self-loops) the fast explorer agrees with stateright's BFS on every count and
//! finds discoveries at the true BFS distance, whatever the thread count.

use memtx_checker::explore::{check_path, explore, ExploreOptions};
use proptest::prelude::*;
use stateright::{Checker, Model, Property};
use std::collections::VecDeque;

/// A directed graph over nodes `0..n`; node 0 is initial; `target` is what the Sometimes
/// property looks for. An edge to `n` (not a node) makes `next_state` return `None`.
#[derive(Clone, Debug)]
struct Graph {
    edges: Vec<Vec<u16>>,
    inside: Vec<bool>,
    target: u16,
}

impl Model for Graph {
    type State = u16;
    type Action = u16;

    fn init_states(&self) -> Vec<u16> {
        vec![0]
    }

    fn actions(&self, node: &u16, actions: &mut Vec<u16>) {
        actions.extend_from_slice(&self.edges[usize::from(*node)]);
    }

    fn next_state(&self, _: &u16, to: u16) -> Option<u16> {
        (usize::from(to) < self.edges.len()).then_some(to)
    }

    fn within_boundary(&self, node: &u16) -> bool {
        self.inside[usize::from(*node)]
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::always("true", |_, _| true),
            Property::<Self>::sometimes("target", |g, node| *node == g.target),
        ]
    }
}

impl Graph {
    /// Distance from node 0 to `target` within the boundary, by a plain BFS.
    fn distance_to_target(&self) -> Option<usize> {
        if !self.inside[0] {
            return None;
        }
        let mut distance = vec![usize::MAX; self.edges.len()];
        distance[0] = 0;
        let mut queue = VecDeque::from([0u16]);
        while let Some(node) = queue.pop_front() {
            if node == self.target {
                return Some(distance[usize::from(node)]);
            }
            for &to in &self.edges[usize::from(node)] {
                let to_index = usize::from(to);
                if to_index < self.edges.len()
                    && self.inside[to_index]
                    && distance[to_index] == usize::MAX
                {
                    distance[to_index] = distance[usize::from(node)] + 1;
                    queue.push_back(to);
                }
            }
        }
        None
    }
}

fn graph() -> impl Strategy<Value = Graph> {
    (2usize..120).prop_flat_map(|n| {
        let edge = 0..=(n as u16); // n itself is the "no change" edge
        (
            prop::collection::vec(prop::collection::vec(edge, 0..5), n),
            prop::collection::vec(prop::bool::weighted(0.9), n),
            0..(n as u16),
        )
            .prop_map(|(edges, inside, target)| Graph {
                edges,
                inside,
                target,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn explorer_agrees_with_stateright_on_random_graphs(graph in graph(), threads in 1usize..5) {
        let stateright = graph.clone().checker().spawn_bfs().join();
        let report = explore(&graph, &ExploreOptions::new().threads(threads))
            .expect("no eventually property");
        prop_assert!(report.is_complete());
        prop_assert_eq!(report.unique_states, stateright.unique_state_count() as u64);
        prop_assert_eq!(report.total_states, stateright.state_count() as u64);
        prop_assert_eq!(report.max_depth, stateright.max_depth());
        let discovery = report.discovery("target");
        prop_assert_eq!(discovery.map(|d| d.steps()), graph.distance_to_target());
        prop_assert_eq!(stateright.discovery("target").is_some(), discovery.is_some());
        if let Some(d) = discovery {
            prop_assert_eq!(check_path(&graph, &d.path), Ok(()));
            prop_assert_eq!(d.last_state(), Some(&graph.target));
        }
        let exact = explore(&graph, &ExploreOptions::new().threads(threads).exact(true))
            .expect("no eventually property");
        prop_assert_eq!(exact.unique_states, report.unique_states);
        prop_assert_eq!(&exact.properties, &report.properties);
        let single = explore(&graph, &ExploreOptions::new()).expect("no eventually property");
        prop_assert_eq!(&single.properties, &report.properties);
        prop_assert_eq!(&single.states_per_depth, &report.states_per_depth);
    }
}
