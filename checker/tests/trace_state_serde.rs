//! The compact JSON form of `State` (model/src/state_serde.rs): roundtrip and validation.

use memtx_model::machine::{candidate_ops, step};
use memtx_model::presets::preset;
use memtx_model::record::MAX_RECORDS;
use memtx_model::state::MAX_AGENTS;
use memtx_model::{State, Variant};

/// Every state reachable from the initial state of `quick` in `depth` steps, breadth first.
fn reachable(depth: usize) -> Vec<State> {
    let cfg = preset("quick", Variant::Memtx).expect("quick preset");
    let mut all = vec![State::initial()];
    let mut level = vec![State::initial()];
    for _ in 0..depth {
        let mut next = Vec::new();
        for s in &level {
            let mut ops = Vec::new();
            candidate_ops(&cfg, s, &mut ops);
            for op in &ops {
                if let Ok(t) = step(&cfg, s, op) {
                    next.push(t);
                }
            }
        }
        next.sort();
        next.dedup();
        all.extend(next.iter().cloned());
        level = next;
    }
    all
}

#[test]
fn roundtrip_of_reachable_states() {
    let states = reachable(5);
    assert!(states.iter().any(|s| s.len() >= 2));
    assert!(states
        .iter()
        .any(|s| (0..s.len() as u8).any(|id| s.audit(id).cause.is_some())));
    for s in &states {
        let json = serde_json::to_string(s).expect("serialise");
        let back: State = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(&back, s, "{json}");
    }
}

#[test]
fn shape_is_compact() {
    let s = reachable(2)
        .into_iter()
        .find(|s| s.len() == 1)
        .expect("a record");
    let v = serde_json::to_value(&s).expect("serialise");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["records"][0]["life"], "Tentative");
    assert_eq!(v["txns"].as_array().map(Vec::len), Some(MAX_AGENTS));
    assert_eq!(v["log"][0]["repairs"], serde_json::json!([]));
    assert_eq!(v["ghost_violated"], serde_json::json!([]));
}

#[test]
fn ghost_roundtrip() {
    let mut s = State::initial();
    s.ghost.violate(4);
    s.ghost.violate(9);
    let v = serde_json::to_value(&s).expect("serialise");
    assert_eq!(v["ghost_violated"], serde_json::json!([4, 9]));
    let back: State = serde_json::from_value(v).expect("deserialise");
    assert_eq!(back, s);
}

fn bad(mutate: impl FnOnce(&mut serde_json::Value)) -> String {
    let s = reachable(2)
        .into_iter()
        .find(|s| s.len() == 1)
        .expect("a record");
    let mut v = serde_json::to_value(&s).expect("serialise");
    mutate(&mut v);
    match serde_json::from_value::<State>(v) {
        Ok(_) => panic!("accepted an invalid state"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn invalid_states_are_refused_not_panicked() {
    let e = bad(|v| {
        let r = v["records"][0].clone();
        v["records"] = serde_json::Value::Array(vec![r; MAX_RECORDS + 1]);
    });
    assert!(e.contains("at most"), "{e}");
    assert!(bad(|v| v["records"][0]["parents"] = serde_json::json!([0])).contains("parent"));
    assert!(bad(|v| v["records"][0]["parents"] = serde_json::json!([99])).contains("range"));
    assert!(bad(|v| v["records"][0]["owner"] = serde_json::json!(9)).contains("agent"));
    assert!(bad(|v| v["records"][0]["writer"] = serde_json::json!(4)).contains("agent"));
    assert!(bad(|v| v["log"] = serde_json::json!([])).contains("log"));
    assert!(
        bad(|v| v["log"][0] = serde_json::json!({"repairs": ["revoked"], "cause": 5}))
            .contains("cause")
    );
    assert!(
        bad(|v| v["log"][0] = serde_json::json!({"repairs": [], "cause": 0})).contains("neither")
    );
    assert!(
        bad(|v| v["txns"] = serde_json::json!([null, null, null, null, null])).contains("txns")
    );
    assert!(bad(|v| v["txns"][0]["snapshot"] = serde_json::json!([3])).contains("snapshot"));
    assert!(bad(|v| v["ghost_violated"] = serde_json::json!([19])).contains("ghost"));
    // Revision 3: contexts and the labels name existing records only.
    assert!(bad(|v| v["contexts"] = serde_json::json!([[5], [], [], []])).contains("context"));
    assert!(bad(|v| v["contexts"] = serde_json::json!([[], [], [], [], []])).contains("contexts"));
    assert!(bad(|v| v["records"][0]["implicit"] = serde_json::json!([3])).contains("implicit"));
    assert!(
        bad(|v| v["records"][0]["transcribed"] = serde_json::json!([3])).contains("transcribed")
    );
    assert!(bad(|v| v["ghost_contexts"] = serde_json::json!([[7]])).contains("ghost context"));
    assert!(bad(|v| v["clock"] = serde_json::json!(-1)).contains("-1"));
    assert!(bad(|v| v["extra"] = serde_json::json!(1)).contains("extra"));
}
