mod common;
use common::*;
use memtx_model::machine::{candidate_ops, step, MemTx};
use memtx_model::*;
use std::collections::BTreeMap;

fn group(op: &Op) -> u8 {
    match op {
        Op::Tick => 0,
        Op::Observe { .. } => 1,
        Op::Begin { .. } => 2,
        Op::Stage { .. } => 3,
        Op::Adopt { .. } => 4,
        Op::Commit { .. } => 5,
        Op::Abort { .. } => 6,
        Op::CallTool { .. } => 7,
        Op::RequestRevocation { .. } => 8,
        Op::ApplyRevocation { .. } => 9,
        Op::Revalidate { .. } => 10,
        Op::Rebuild { .. } => 11,
        Op::Resolve { .. } => 12,
    }
}

#[test]
fn walk() {
    let mut cfg = wide(Variant::Memtx);
    if let Some(a) = std::env::var("AGENTS").ok().and_then(|s| s.parse().ok()) {
        cfg.bounds.agents = a;
    }
    if let Some(a) = std::env::var("RECORDS").ok().and_then(|s| s.parse().ok()) {
        cfg.bounds.records = a;
    }
    let model = MemTx::new(cfg.clone());
    let mut rng: u64 = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12345);
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut found: BTreeMap<&str, (usize, String)> = BTreeMap::new();
    let mut ops = Vec::new();
    for _ in 0..runs {
        let mut s = State::initial();
        let mut trace = Vec::new();
        for _ in 0..std::env::var("LEN")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(40usize)
        {
            ops.clear();
            candidate_ops(&cfg, &s, &mut ops);
            if ops.is_empty() {
                break;
            }
            let mut groups: Vec<u8> = ops.iter().map(group).collect();
            groups.dedup();
            groups.sort();
            groups.dedup();
            let g = groups[(next() % groups.len() as u64) as usize];
            let cands: Vec<&Op> = ops.iter().filter(|o| group(o) == g).collect();
            let op = cands[(next() % cands.len() as u64) as usize].clone();
            if let Ok(n) = step(&cfg, &s, &op) {
                s = n;
                trace.push(op);
                let v = violated_invariants(&model, &s);
                if !v.is_empty() {
                    for k in v {
                        let e = found.entry(k).or_insert((usize::MAX, String::new()));
                        if trace.len() < e.0 {
                            *e = (trace.len(), format!("{}{:?}", trace_text(&trace), s));
                        }
                    }
                    break;
                }
            }
        }
    }
    for (k, (n, t)) in &found {
        println!("=== {k} (len {n})\n{t}");
    }
}
