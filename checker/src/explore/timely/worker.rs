//! One timely worker's run: its levels, its part of a checkpoint, and the rounds that
//! rebuild each discovery's chain and gather the final tallies at worker 0.

use super::net::{Beats, Liveness, Net};
use super::wire::{Bytes, Envelope, Final, Summary, Wire};
use super::{ClusterReport, ProcessReport, Resumed, WorkerResult};
use crate::explore::checkpoint::{self, Checkpoint};
use crate::explore::coordinator::{Coordinator, Found, Limits, Saving};
use crate::explore::coverage::Tally;
use crate::explore::path::{self, Keyer, ParentLog};
use crate::explore::report::{read_proc_status_bytes, StopReason};
use crate::explore::shard::{Context, Msg, Shard, Worker, CHUNK};
use crate::explore::sync::{lock, Shared};
use crate::explore::{
    initial_shards, Discovery, ExploreError, ExploreOptions, ExploreReport, MemoryReport,
    PackedState, PropertyReport,
};
use ::timely::dataflow::channels::pact::Exchange;
use ::timely::dataflow::operators::generic::operator::Operator;
use ::timely::dataflow::operators::{Input, Probe};
use ::timely::dataflow::{InputHandle, ProbeHandle};
use stateright::Model;
use std::cell::RefCell;
use std::fmt::Debug;
use std::hash::Hash;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

/// One timely worker's whole run.
pub(super) fn run_worker<M>(
    model: &M,
    options: &ExploreOptions<'_, M>,
    worker: &mut ::timely::worker::Worker,
    threads: usize,
    start: Instant,
    resumed: Option<Resumed<'_>>,
    liveness: Option<&Liveness>,
) -> WorkerResult<M>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState,
    M::Action: Clone + Debug + Send,
{
    let index = worker.index();
    let peers = worker.peers();
    let properties = model.properties();
    let arrived: Rc<RefCell<Vec<Wire>>> = Rc::default();
    let mut input = InputHandle::new();
    let probe = ProbeHandle::new();
    {
        let arrived = Rc::clone(&arrived);
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .unary::<::timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Exchange::new(|m: &Envelope| u64::from(m.0)),
                    "Deliver",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|_time, data| {
                                arrived
                                    .borrow_mut()
                                    .extend(data.drain(..).map(|(_, wire)| wire));
                            });
                        }
                    },
                )
                .probe_with(&probe);
        });
    }
    let beats = liveness.map(|l| Beats::new(worker, l));
    let mut net = Net {
        worker,
        input,
        probe,
        arrived,
        round: 0,
        index,
        threads,
        bytes_to_other_workers: 0,
        bytes_to_other_processes: 0,
        beats,
    };

    let saved = options.resume;
    let (shard, init_generated, init_distinct, found) = match (resumed, saved) {
        (Some(r), Some(saved)) => (r.shard, saved.generated, saved.distinct, Some(r.found)),
        _ => {
            let (shards, init_generated) = initial_shards(model, options, peers)?;
            let init_distinct: u64 = shards.iter().map(Shard::len).sum();
            let Some(shard) = shards.into_iter().nth(index) else {
                panic!("[memtx internal bug] no shard for worker {index}");
            };
            (shard, init_generated, init_distinct, None)
        }
    };
    let limits = Limits {
        finish_when_all_discovered: options.finish_when_all_discovered,
        max_states: options.max_states,
        max_transitions: options.max_transitions,
        // Per process, enforced below, not by the (replicated) coordinator.
        max_memory: None,
        target_max_depth: options.target_max_depth,
        progress: if index == 0 { options.progress } else { None },
        progress_interval: options.progress_interval,
        interrupt: options.interrupt,
    };
    let mut coordinator = Coordinator::new(
        limits,
        start,
        init_generated,
        init_distinct,
        properties.len(),
    );
    coordinator.saving = options.checkpoint.map(|plan| Saving {
        plan,
        last: Instant::now(),
        written: 0,
        error: None,
    });
    // The coverage of the run before a resume, counted once: by worker 0.
    let mut base_tally = Tally::default();
    if let (Some(saved), Some(found)) = (saved, found) {
        coordinator.level = saved.level();
        coordinator.states_per_depth = saved.states_per_depth().to_vec();
        coordinator.max_depth = saved.max_depth;
        coordinator.discoveries = found.to_vec();
        coordinator.base_expanded = saved.expanded;
        if index == 0 {
            base_tally = saved.tally.clone();
        }
    }
    let shared = Shared::new(peers, options.max_memory_bytes, coordinator.decision(false));
    let cx = Context {
        model,
        properties: &properties,
        symmetry: options.symmetry,
        next_state_into: options.next_state_into,
        repeats: options.repeats,
        coverage: options.coverage,
        exact: false,
        locality: options.locality_in_effect(),
        shared: &shared,
    };
    let (senders, outgoing): (Vec<_>, Vec<_>) = (0..peers).map(|_| mpsc::channel::<Msg>()).unzip();
    let (inbox_sender, inbox) = mpsc::channel::<Msg>();
    let mut w = Worker::new(index, cx, senders, inbox, shard, coordinator.level);
    w.reset_coverage();
    let mut stash: Vec<Wire> = Vec::new();

    // Hands the worker's outgoing batches to timely, steps once, and routes what arrived.
    let pump = |net: &mut Net<'_>, stash: &mut Vec<Wire>, step: bool| -> Result<(), ExploreError> {
        for (owner, receiver) in outgoing.iter().enumerate() {
            while let Ok(msg) = receiver.try_recv() {
                if let Msg::Batch(batch) = msg {
                    net.send(owner, Wire::Batch(Bytes(batch)));
                }
            }
        }
        if step {
            net.step()?;
        }
        for wire in net.take() {
            match wire {
                Wire::Batch(b) => {
                    // The receiver lives as long as the worker, which outlives this call.
                    let _ = inbox_sender.send(Msg::Batch(b.0));
                }
                other => stash.push(other),
            }
        }
        Ok(())
    };

    let mut pending = coordinator.decision(false).pending;
    let mut expand = init_distinct > 0;
    if expand && found.is_none() && coordinator.beyond_depth(0) {
        coordinator.max_depth = 1;
        coordinator.stopped_early = Some(StopReason::MaxDepth);
        expand = false;
    }
    while expand {
        let part = w.begin_level();
        let evaluate = pending.iter().any(|p| *p).then_some(&pending[..]);
        while shared.stop_requested().is_none() {
            let Some(chunk) = part.claim(CHUNK) else {
                break;
            };
            w.expand_chunk(&part, index, chunk, evaluate);
            pump(&mut net, &mut stash, true)?;
            w.absorb_inbox();
            w.checkpoint(Some(&mut coordinator));
        }
        w.flush_all();
        pump(&mut net, &mut stash, false)?;
        net.finish_round()?;
        pump(&mut net, &mut stash, false)?;
        w.absorb_inbox();
        let found = w.close_level(part);
        if let Some(max) = options.max_memory_bytes {
            if shared.sum(|c| &c.memory) > max {
                shared.request_stop(StopReason::Memory);
            }
        }
        let summary = Summary {
            worker: index as u32,
            counters: w.counters(),
            discoveries: found,
            stop: shared.stop.load(Ordering::Relaxed),
            save_due: coordinator.checkpoint_due(),
        };
        for target in 0..peers {
            net.send(target, Wire::Summary(summary.clone()));
        }
        net.finish_round()?;
        pump(&mut net, &mut stash, false)?;
        let mut summaries: Vec<Summary> = Vec::with_capacity(peers);
        stash.retain(|wire| match wire {
            Wire::Summary(s) => {
                summaries.push(s.clone());
                false
            }
            _ => true,
        });
        assert_eq!(
            summaries.len(),
            peers,
            "[memtx internal bug] a level closed without every worker's summary"
        );
        summaries.sort_by_key(|s| s.worker);
        let mut stop = 0;
        for s in &summaries {
            let c = &shared.counters[s.worker as usize];
            let [generated, new, expanded, dropped, memory] = s.counters;
            c.generated.store(generated, Ordering::Relaxed);
            c.new.store(new, Ordering::Relaxed);
            c.expanded.store(expanded, Ordering::Relaxed);
            c.dropped.store(dropped, Ordering::Relaxed);
            // Memory counts towards this process's budget only.
            if s.worker as usize / threads == index / threads {
                c.memory.store(memory, Ordering::Relaxed);
            }
            *lock(&shared.level_discoveries[s.worker as usize]) = s.discoveries.clone();
            if stop == 0 {
                stop = s.stop;
            }
        }
        // The same stop on every worker: the first requested, in worker order.
        shared.stop.store(stop, Ordering::Relaxed);
        coordinator.end_level(&shared);
        let decision = lock(&shared.decision).clone();
        expand = !decision.stop;
        if expand {
            // Worker 0's clock decides, so that every worker writes its part or none does.
            if summaries[0].save_due {
                write_part(&mut net, &mut coordinator, &shared, &mut w, &base_tally);
                net.finish_round()?;
                // Faster workers may already send the next level's batches: to the inbox.
                pump(&mut net, &mut stash, false)?;
                count_parts(&mut stash, &mut coordinator, net.index, net.threads, peers);
            }
            pending = decision.pending;
            w.next_level();
        }
    }
    assert!(
        !stash.iter().any(|wire| matches!(wire, Wire::Batch(_))),
        "[memtx internal bug] successor records were left undelivered"
    );
    let (shard, mut tally) = w.finish();
    std::mem::take(&mut base_tally).merge_into(&mut tally);

    let chains = gather_chains(&mut net, &mut stash, &shard.log, &coordinator.discoveries)?;

    let (counts, first) = tally.raw();
    let last = Final {
        worker: index as u32,
        counts: counts.to_vec(),
        first: first.iter().map(|&f| f as u64).collect(),
        bytes_to_other_workers: net.bytes_to_other_workers,
        bytes_to_other_processes: net.bytes_to_other_processes,
        peak_rss: read_proc_status_bytes("VmHWM"),
        states: shard.len(),
        visited_bytes: shard.table.bytes(),
        parent_log_bytes: shard.log.bytes(),
        scratch_bytes: shard.fresh.bytes() + shard.log.staging_bytes(),
    };
    net.send(0, Wire::Final(last));
    net.finish_round()?;
    pump(&mut net, &mut stash, false)?;
    if index != 0 {
        return Ok(None);
    }
    let mut finals: Vec<Final> = stash
        .drain(..)
        .filter_map(|w| match w {
            Wire::Final(f) => Some(f),
            _ => None,
        })
        .collect();
    finals.sort_by_key(|f| f.worker);
    assert_eq!(
        finals.len(),
        peers,
        "[memtx internal bug] worker 0 did not hear from every worker at the end"
    );

    let unique_states: u64 = finals.iter().map(|f| f.states).sum();
    let counted = init_distinct + shared.sum(|c| &c.new);
    assert_eq!(
        unique_states, counted,
        "[memtx internal bug] parent logs hold {unique_states} states, counters say {counted}"
    );
    let total_states = init_generated + shared.sum(|c| &c.generated);
    let mut coverage_tally = Tally::default();
    for f in &finals {
        let counts: [u64; 128] = f.counts.as_slice().try_into().unwrap_or_else(|_| {
            panic!("[memtx internal bug] a coverage tally without 128 counters")
        });
        let mut firsts = [usize::MAX; 128];
        for (to, from) in firsts.iter_mut().zip(&f.first) {
            *to = usize::try_from(*from).unwrap_or(usize::MAX);
        }
        Tally::from_raw(counts, firsts).merge_into(&mut coverage_tally);
    }

    let mut keyer = Keyer::<M> {
        model,
        symmetry: options.symmetry,
        tables: &[],
        exact: false,
        buffer: Vec::new(),
    };
    let mut reports = Vec::with_capacity(properties.len());
    for ((property, found), chain) in properties.iter().zip(&coordinator.discoveries).zip(&chains) {
        let discovery = match found {
            Some(((key, _), _)) => Some(Discovery {
                path: path::replay(model, &mut keyer, chain, property.name)?,
                fingerprint: *key,
            }),
            None => None,
        };
        reports.push(PropertyReport {
            name: property.name,
            expectation: property.expectation.clone(),
            discovery,
        });
    }

    let processes = peers / threads;
    let mut per_process = vec![ProcessReport::default(); processes];
    for f in &finals {
        let p = &mut per_process[f.worker as usize / threads];
        p.peak_rss_bytes = p.peak_rss_bytes.max(f.peak_rss);
        p.bytes_to_other_processes += f.bytes_to_other_processes;
        p.bytes_to_other_workers += f.bytes_to_other_workers;
        p.states += f.states;
    }
    let visited_bytes: u64 = finals.iter().map(|f| f.visited_bytes).sum();
    let parent_log_bytes: u64 = finals.iter().map(|f| f.parent_log_bytes).sum();
    Ok(Some(ExploreReport {
        unique_states,
        total_states,
        max_depth: coordinator.max_depth,
        states_per_depth: coordinator.states_per_depth,
        properties: reports,
        elapsed: start.elapsed(),
        stopped_early: coordinator.stopped_early,
        memory: MemoryReport::new(
            per_process.iter().filter_map(|p| p.peak_rss_bytes).max(),
            coordinator.peak_memory,
            visited_bytes,
            parent_log_bytes,
            finals.iter().map(|f| f.scratch_bytes).sum(),
            unique_states,
        ),
        collision_probability: crate::explore::report::collision_probability(
            unique_states,
            total_states,
        ),
        fingerprint_collisions: 0,
        states_per_worker: finals.iter().map(|f| f.states).collect(),
        coverage: options.coverage.map(|_| coverage_tally.finish()),
        dropped_states: shared.sum(|c| &c.dropped),
        threads: peers,
        exact: false,
        symmetry: options.symmetry.is_some(),
        resumed_from_level: saved.map(Checkpoint::level),
        checkpoints_written: coordinator.saving.as_ref().map_or(0, |s| s.written),
        checkpoint_error: coordinator.saving.as_ref().and_then(|s| s.error.clone()),
        cluster: Some(ClusterReport {
            processes,
            threads_per_process: threads,
            bytes_to_other_processes: per_process.iter().map(|p| p.bytes_to_other_processes).sum(),
            bytes_to_other_workers: per_process.iter().map(|p| p.bytes_to_other_workers).sum(),
            per_process,
        }),
    }))
}

/// The checkpoint phase of a level boundary over timely workers ([`super::checkpoint`]):
/// every worker writes its own part (its closed levels, its share of the level just closed,
/// its coverage tally) into the checkpoint directory, then tells every worker whether it
/// could ([`count_parts`] hears the answers). Only when every part is written is the
/// checkpoint counted, and the previous one removed (by the first worker of each process,
/// from the directory it sees: on a cluster without a shared file system each machine keeps
/// its own processes' parts). A kill at any moment leaves the previous checkpoint whole, or
/// the new one whole.
pub(super) fn write_part<M>(
    net: &mut Net<'_>,
    coordinator: &mut Coordinator<'_>,
    shared: &Shared,
    w: &mut Worker<'_, M>,
    base_tally: &Tally,
) where
    M: Model,
    M::State: Hash + Clone + PackedState,
{
    let peers = net.worker.peers();
    let index = net.index;
    let snapshot = w.lend();
    let mut tally = snapshot.tally.clone();
    base_tally.clone().merge_into(&mut tally);
    let result = coordinator.save_part(shared, &snapshot, &tally, index, peers);
    w.take_back(snapshot);
    for target in 0..peers {
        net.send(
            target,
            Wire::Saved {
                worker: index as u32,
                error: result.clone().err(),
            },
        );
    }
}

/// The end of a checkpoint phase, once the round of [`write_part`]'s answers is complete:
/// counts the checkpoint if every worker wrote its part, and then removes the previous one.
pub(super) fn count_parts(
    stash: &mut Vec<Wire>,
    coordinator: &mut Coordinator<'_>,
    index: usize,
    threads: usize,
    peers: usize,
) {
    let mut heard = 0;
    let mut failed: Option<String> = None;
    stash.retain(|wire| match wire {
        Wire::Saved { worker, error } => {
            heard += 1;
            if let Some(e) = error {
                if failed.is_none() {
                    failed = Some(format!("worker {worker}: {e}"));
                }
            }
            false
        }
        _ => true,
    });
    assert_eq!(
        heard, peers,
        "[memtx internal bug] a checkpoint round without every worker's answer"
    );
    let level = coordinator.level;
    if let Some(saving) = &mut coordinator.saving {
        match failed {
            None => {
                saving.written += 1;
                // The first worker of each process.
                if index.checked_rem(threads) == Some(0) {
                    checkpoint::remove_obsolete(&saving.plan.dir, Some((level, peers)));
                }
            }
            Some(e) => {
                saving.error.get_or_insert(e);
            }
        }
    }
}

/// Rebuilds the key chain of every discovery across workers: each round worker 0 asks the
/// owner of every chain's next link (one level down) for its key and parent reference.
/// Every worker takes part in the same number of rounds (the deepest discovery's level plus
/// one), known to all from the replicated coordinator. Returns, on worker 0, per property
/// the chain from an initial state to the discovery (empty without a discovery; empty
/// everywhere on the other workers).
pub(super) fn gather_chains(
    net: &mut Net<'_>,
    stash: &mut Vec<Wire>,
    log: &ParentLog,
    discoveries: &[Found],
) -> Result<Vec<Vec<u64>>, ExploreError> {
    let peers = net.worker.peers();
    let index = net.index;
    let mut chains: Vec<Vec<u64>> = vec![Vec::new(); discoveries.len()];
    // Per property: the next link to look up, (level, reference).
    let mut cursor: Vec<Option<(usize, u32)>> = discoveries
        .iter()
        .map(|f| f.map(|((_, reference), level)| (level, reference)))
        .collect();
    let rounds = discoveries
        .iter()
        .filter_map(|f| f.map(|(_, level)| level + 1))
        .max()
        .unwrap_or(0);
    for _ in 0..rounds {
        if index == 0 {
            for (slot, c) in cursor.iter().enumerate() {
                if let Some((level, reference)) = *c {
                    net.send(
                        reference as usize % peers,
                        Wire::Query {
                            slot: slot as u32,
                            level: level as u32,
                            index: (reference as usize / peers) as u64,
                        },
                    );
                }
            }
        }
        net.finish_round()?;
        stash.extend(net.take());
        for wire in std::mem::take(stash) {
            match wire {
                Wire::Query { slot, level, index } => {
                    let Some((key, parent)) = log.entry(level as usize, index as usize) else {
                        panic!("[memtx internal bug] a chain link to a missing parent log entry");
                    };
                    net.send(0, Wire::Answer { slot, key, parent });
                }
                other => stash.push(other),
            }
        }
        net.finish_round()?;
        stash.extend(net.take());
        for wire in std::mem::take(stash) {
            match wire {
                Wire::Answer { slot, key, parent } => {
                    let slot = slot as usize;
                    chains[slot].push(key);
                    cursor[slot] = match cursor[slot] {
                        Some((level, _)) if level > 0 => Some((level - 1, parent)),
                        _ => None,
                    };
                }
                other => stash.push(other),
            }
        }
    }
    for chain in &mut chains {
        chain.reverse();
    }
    if index == 0 {
        for (found, chain) in discoveries.iter().zip(&chains) {
            if let Some(((key, _), level)) = found {
                assert!(
                    chain.len() == level + 1 && chain.last() == Some(key),
                    "[memtx internal bug] a discovery's chain was not gathered whole"
                );
            }
        }
    }
    Ok(chains)
}
