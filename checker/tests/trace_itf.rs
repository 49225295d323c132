//! The ITF export is readable by the `itf` crate (Apalache ADR-015).

mod binary_support;
mod trace_support;

use memtx_checker::trace::itf::{to_itf, write_itf, ITF_VARS};
use memtx_checker::trace::itf_path_for;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use trace_support::*;

/// ITF has no null: optional values are variants, as Quint writes its `Option`.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "tag", content = "value")]
enum Opt<T> {
    Some(T),
    None,
}

#[derive(Debug, Deserialize)]
struct Validity {
    from: i64,
    until: Opt<i64>,
}

#[derive(Debug, Deserialize)]
struct Record {
    id: i64,
    kind: String,
    life: String,
    parents: BTreeSet<i64>,
    validity: Validity,
    reason: Opt<String>,
    writer: Opt<i64>,
    pending_revocation: bool,
}

#[derive(Debug, Deserialize)]
struct Txn {
    tier: String,
    isolation: String,
    snapshot: BTreeSet<i64>,
    snapshot_seq: i64,
}

#[derive(Debug, Deserialize)]
struct LogEntry {
    repairs: BTreeSet<String>,
    cause: Opt<i64>,
}

#[derive(Debug, Deserialize)]
struct ItfState {
    action: String,
    clock: i64,
    next_seq: i64,
    records: Vec<Record>,
    txns: BTreeMap<i64, Txn>,
    log: Vec<LogEntry>,
    ghost_violated: BTreeSet<i64>,
}

#[test]
fn typed_read_back() {
    let trace = missed_cascade_trace();
    let dir = temp_dir("itf");
    let trace_file = dir.join("missed-cascade-I2.trace.json");
    let itf_file = itf_path_for(&trace_file);
    write_itf(&trace, "missed-cascade-I2.trace.json", &itf_file).expect("write ITF");
    let text = std::fs::read_to_string(&itf_file).expect("read");

    let itf: itf::Trace<ItfState> = itf::trace_from_str(&text).expect("the itf crate reads it");
    assert_eq!(itf.states.len(), trace.len() + 1);
    assert_eq!(
        itf.vars,
        ITF_VARS.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(itf.meta.format.as_deref(), Some("ITF"));
    assert_eq!(
        itf.meta.source.as_deref(),
        Some("missed-cascade-I2.trace.json")
    );

    let first = &itf.states[0];
    assert_eq!(first.meta.index, Some(0));
    assert_eq!(first.value.action, "init");
    assert_eq!(first.value.clock, 0);
    assert!(first.value.records.is_empty() && first.value.txns.is_empty());

    // Step 1 opens agent 0's transaction.
    let s1 = &itf.states[1].value;
    assert_eq!(s1.action, trace.steps[0].label);
    assert_eq!(
        itf.states[1].meta.other.get("action"),
        Some(&trace.steps[0].label)
    );
    let tx = s1.txns.get(&0).expect("a0's transaction");
    assert_eq!(tx.tier, "medium");
    assert_eq!(tx.isolation, "committed-read");
    assert!(tx.snapshot.is_empty());
    assert_eq!(tx.snapshot_seq, 0);

    // The last state: r0 revoked by the revocation, r1 a view quarantined with r0 as parent.
    let last = &itf.states.last().expect("states").value;
    let final_state = trace.final_state().expect("a saved trace has states");
    assert_eq!(last.records.len(), final_state.len());
    assert_eq!(last.next_seq, final_state.next_seq as i64);
    assert_eq!(last.records[0].id, 0);
    assert_eq!(last.records[0].kind, "belief");
    assert_eq!(last.records[0].life, "Revoked");
    assert_eq!(last.records[0].reason, Opt::Some("revocation".to_string()));
    assert_eq!(last.records[0].validity.from, 0);
    assert_eq!(last.records[0].validity.until, Opt::None);
    assert!(!last.records[0].pending_revocation);
    assert_eq!(last.records[1].parents, BTreeSet::from([0]));
    assert_eq!(last.records[1].writer, Opt::None);
    assert_eq!(last.log.len(), final_state.len());
    assert!(last.log[0].repairs.contains("retracted"));
    assert_eq!(last.log[1].cause, Opt::Some(0));
    // Revision 2's I2 judges the retracting step too: the ghost marks it.
    assert_eq!(last.ghost_violated, BTreeSet::from([2]));
}

#[test]
fn untyped_read_back_and_encoding() {
    let trace = scripted_trace();
    let doc = to_itf(&trace, "scripted.trace.json");
    // Integers are always {"#bigint": "n"}, sets {"#set": [...]}, optional values variants.
    assert_eq!(
        doc["states"][3]["clock"],
        serde_json::json!({"#bigint": "0"})
    );
    assert_eq!(
        doc["states"][3]["next_seq"],
        serde_json::json!({"#bigint": "1"})
    );
    assert_eq!(
        doc["states"][3]["records"][0]["parents"],
        serde_json::json!({"#set": []})
    );
    assert_eq!(
        doc["states"][3]["records"][0]["seq"],
        serde_json::json!({"tag": "Some", "value": {"#bigint": "0"}})
    );
    assert_eq!(doc["states"][0]["txns"], serde_json::json!({"#map": []}));

    let text = serde_json::to_string_pretty(&doc).expect("JSON");
    // The itf crate's ITF value parser. (`itf::trace_from_str::<itf::Value>` would re-decode each
    // value into `itf::Value` and itf 0.4 cannot do that for an empty record, the unit value of
    // `None` that Quint itself writes; typed decoding, as above, handles it.)
    let itf: itf::Trace<itf::Value> = serde_json::from_str(&text).expect("the itf crate reads it");
    assert_eq!(itf.states.len(), 5);
    let itf::Value::Record(last) = &itf.states[4].value else {
        panic!("a state is a record");
    };
    assert_eq!(
        last.get("action"),
        Some(&itf::Value::String("RequestRevocation r0".into()))
    );
    let Some(itf::Value::List(records)) = last.get("records") else {
        panic!("records is a sequence");
    };
    let itf::Value::Record(r0) = &records[0] else {
        panic!("a record is a record");
    };
    assert_eq!(r0.get("pending_revocation"), Some(&itf::Value::Bool(true)));
    assert_eq!(
        r0.get("life"),
        Some(&itf::Value::String("Committed".into()))
    );
}
