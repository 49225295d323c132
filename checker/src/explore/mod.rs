//! The fast explorer: a level-synchronous, sharded, parallel breadth-first search over any
//! [`stateright::Model`].
//!
//! Stateright's own BFS keeps every pending state as a Rust value together with its action
//! path, and its visited set in a concurrent hash map of fingerprints. This engine visits
//! the same states and reports the same counts, but stores far less per state and never
//! makes two threads contend on one data structure. This documentation explains how.
//!
//! # Example
//!
//! ```
//! use memtx_checker::explore::{explore, ExploreOptions};
//! use memtx_checker::bench::two_phase_commit::{canonicalize, locality, TwoPhaseSys};
//!
//! let model = TwoPhaseSys::new(3).expect("3 resource managers are supported");
//! let report = explore(&model, &ExploreOptions::new().threads(2)).expect("no eventually");
//! assert_eq!(report.unique_states, 288);
//! assert!(report.is_complete());
//! let commit = report.discovery("commit agreement").expect("commit is reachable");
//! // Shortest: 3 × RMPrepare, 3 × TMRcvPrepared, TMCommit, 3 × RMRcvCommitMsg.
//! assert_eq!(commit.steps(), 10);
//! let reduced = explore(&model, &ExploreOptions::new().symmetry(|_, s| canonicalize(s)))
//!     .expect("no eventually");
//! assert!(reduced.unique_states < report.unique_states);
//! // A locality key decides which worker owns a state: it moves work, never results.
//! let local = explore(&model, &ExploreOptions::new().threads(2).locality(locality))
//!     .expect("no eventually");
//! assert_eq!(local.unique_states, report.unique_states);
//! assert_eq!(local.total_states, report.total_states);
//! ```
//!
//! # Levels
//!
//! The search proceeds one BFS *level* at a time. Level 0 holds the initial states (within
//! the boundary); level `d + 1` holds the states first reached by expanding level `d`. A
//! level is fully expanded before the next one starts, and every worker waits at a barrier
//! at the end of each level. That synchronization is the price; what it buys is:
//!
//! * every state is found at its shortest distance from an initial state, so a discovery
//!   found at level `d` has a shortest path, whatever the thread count and timing;
//! * the *set* of states of each level is a property of the model, not of the schedule, so
//!   counts per level, total counts and the choice of discovery can be made deterministic;
//! * the stopping conditions "all properties discovered" and `target_max_depth` are
//!   checked when a level ends, so those early stops are deterministic too. The memory
//!   budget, `max_states` and an interrupt must act sooner: they stop the level at the next
//!   check point, and the counts of such a run depend on timing (it proves nothing beyond
//!   the states it visited anyway).
//!
//! # Shards
//!
//! With `T` threads the states are cut into `T` shards and worker `w` *owns* shard `w`: the
//! visited set and parent log of its states and the part of each level made of them. By
//! default a state's shard is drawn from its fingerprint (the top 32 bits, see
//! [`shard_of`]); a model can instead supply a *locality key*
//! ([`ExploreOptions::locality`]) that most actions leave unchanged, so that a state's
//! successors mostly stay with the worker that expanded it (MemTX's is
//! `memtx_model::packed::locality`, two-phase commit's [`crate::bench::two_phase_commit::locality`]). Only
//! the owner ever touches a shard's tables, so they are plain single-threaded open-addressing
//! tables with no locks and no atomics. A worker expands the states of its own frontier, then
//! helps with what is left of its peers' (work stealing: during a level each frontier and its
//! keys are shared read-only, and states are claimed a chunk at a time through one atomic
//! cursor per frontier); each successor is fingerprinted and packed into an outgoing *batch*
//! for its owner.
//! Batches of about 128 KiB travel over the owner's `mpsc` channel (the worker's own batches
//! are absorbed directly). The owner looks the records up in its tables and appends new
//! states to its part of the next level. When no state of the level is left to claim a worker sends
//! `Done` to every peer and keeps absorbing until every peer sent `Done`; then the level is
//! complete (`shard/` has the details). Fingerprints are uniformly distributed, so the
//! shards get about equal shares of the work (with a locality key, as equal as the states
//! are spread over its values), and stealing evens out the expansion.
//!
//! With one thread the very same loop runs on the calling thread with a single shard.
//!
//! # Packed frontier
//!
//! The frontier of a level is not a `Vec<M::State>` but one `Vec<u8>` per shard into which
//! states are packed back to back, plus end offsets (`frontier.rs`; the keys are the level's
//! keys in the parent log, in the same order). The model's
//! state type implements [`PackedState`]. A state is unpacked into a reused value when it is
//! expanded; successors are packed straight into outgoing batches and copied, still packed,
//! into the next frontier. The hot path performs no per-state heap allocation of its own
//! (only what the model's `actions`, `next_state` and symmetry functions allocate).
//! A model whose states are large inline values can also hand the explorer an in-place
//! successor function ([`ExploreOptions::next_state_into`]); each worker then keeps one
//! successor value and lets the model overwrite it instead of returning a new one.
//!
//! # Visited set and parent log: 8 + 12 bytes per state
//!
//! A state is known by its 64-bit fingerprint: FxHash of the packed state passed through
//! MurmurHash3's `fmix64` finalizer (`visited.rs`). FxHash alone is fast but leaves the low
//! bits of small states nearly constant, and a hash table indexed by those bits then uses
//! a fraction of its buckets. `fmix64` is a bijection that makes every bit depend on every
//! input bit, so the top bits can pick the shard and the low bits the bucket. Distinct
//! states with equal fingerprints are merged (the second is never explored); the report
//! gives TLC's estimate of the probability that this happened, `n·(g−n)/2^64`. *Exact mode*
//! removes the risk: the visited set also stores every packed state, compares bytes on a
//! fingerprint match, and stores a colliding state under a secondary key.
//!
//! What is kept per state is split by lifetime (`visited.rs` explains why):
//!
//! * the **visited set**, a table of 8-byte keys of every state of the closed levels, sized
//!   to any number of buckets and grown by half at 7/8 load, so that it stays between 9.1
//!   and 13.7 bytes per state (at most 16) at any state count;
//! * the **parent log** (`path.rs`), per closed level the keys in discovery order and a
//!   32-bit reference to each one's parent: 12 bytes per state, exactly;
//! * while a level is open, a **fresh table** of its new states (key, smallest parent key
//!   so far, index in the level), which is working memory sized for about one level and
//!   drained into the visited set when the level closes.
//!
//! The report gives the first two per state ([`MemoryReport`]), and the fresh tables
//! separately.
//!
//! # Determinism of discoveries and paths
//!
//! A discovery is a state where an Always property is false or a Sometimes property is
//! true. Properties are evaluated on each state when it is expanded, until the property
//! has a discovery. Among the discoveries of the first level that has any, the one with the
//! **smallest fingerprint** (key) is kept. Since the level's set of states is independent
//! of the thread count, so is this choice.
//!
//! The path is rebuilt from the parent log (`path.rs`), whose links must therefore also be
//! independent of timing. The first parent to reach a state depends on thread timing, so
//! the engine does not keep the first one: while the level that discovered a state is
//! open, the state is in its shard's fresh table, and any further arrival of the same state
//! from a parent with a smaller key replaces the stored parent. Only when every arrival of
//! the level has been absorbed is the level closed and the parent written to the log, so
//! each new state's parent is the **smallest-key parent among all its parents at the
//! previous depth**, a function of the model alone. (A worker does not even send a
//! successor it sent lately from a parent with a key no larger, `recent.rs`: that record
//! could not change the stored parent.) Finally the path is re-executed from the
//! initial state choosing, at each step, the **first action in `model.actions()` order**
//! whose successor has the next key of the chain. No action index is stored, which is why
//! this also works under symmetry reduction, where the stored state is a canonical
//! representative and not the state the action was taken from.
//!
//! The choice depends on fingerprints, so it is stable across runs and thread counts of the
//! same build, but a change to the state type's `Hash` implementation or to the hash
//! functions can select a different (equally short) path.
//!
//! # Semantics shared with stateright's BFS
//!
//! * Initial states outside `within_boundary` are dropped; a successor outside the boundary
//!   is neither counted nor visited.
//! * `total_states` counts the initial states plus every successor (within the boundary)
//!   of every expanded state, repeats included: stateright's `state_count()`.
//! * `max_depth` is the 1-based depth of the deepest level taken from the queue (initial
//!   states have depth 1): stateright's `max_depth()`.
//! * With `target_max_depth = Some(t)` (t > 0), states at depth `t` are counted but neither
//!   checked nor expanded. `Some(0)` means no bound, like stateright's `target_max_depth(0)`.
//!
//! Differences: properties are never all-discovered "at one state" (stateright does not
//! expand a state that is a discovery for every property; this engine does); a model
//! without properties is fully explored (stateright explores only its initial states);
//! duplicate initial states are expanded once (stateright expands each copy); counts after
//! an early stop differ from stateright's (both are timing-dependent for `max_states`). Eventually properties are rejected.
//!
//! # Symmetry
//!
//! With `symmetry = Some(canonical)`, every successor (and initial state) is replaced by
//! `canonical(state)` before it is fingerprinted, stored and expanded. Storing the
//! canonical representative, rather than whichever member of the class arrived first,
//! keeps the expansion, and hence the counts, independent of timing.
//!
//! # Memory
//!
//! Each worker publishes the bytes it holds (visited table, fresh table, parent log,
//! frontiers, batch buffers). When the sum exceeds `max_memory_bytes`, or a table would
//! have to grow past it, the workers stop expanding at their next check point, finish the
//! level's exchange, close the level, and the report says [`StopReason::Memory`]. A table
//! that may not grow fills up to 15/16 of its slots (the visited table counting the open
//! level's states, which will move in); states that find it full are counted in
//! `dropped_states`.

pub mod checkpoint;
mod connect;
mod coordinator;
mod coverage;
mod fit;
mod fresh;
mod frontier;
mod options;
mod packed;
mod path;
mod recent;
mod report;
mod shard;
mod sync;
pub mod timely;
mod visited;

pub use checkpoint::{load, Checkpoint, CheckpointPlan};
pub(crate) use coverage::Tally;
pub use coverage::{CoverageProbe, CoverageTally};
pub use options::{Canonicalizer, ExploreOptions, Locality, NextStateInto, Repeats, Trace};
pub use packed::PackedState;
pub use path::check_path;
pub use report::{
    read_proc_status_bytes, reset_peak_rss, Discovery, ExploreError, ExploreReport, MemoryReport,
    Progress, PropertyReport, StopReason,
};
pub use timely::{
    explore_timely, Cluster, ClusterReport, ProcessReport, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_PEER_TIMEOUT,
};
pub use visited::{fingerprint, fingerprint_packed, fmix64, shard_of};

use coordinator::{Coordinator, Limits};
use path::Keyer;
use path::{ParentLog, NO_PARENT_REF};
use shard::{owner_of, Context, Insert, Msg, Shard, Worker};
use stateright::{Expectation, Model};
use std::any::Any;
use std::fmt::Debug;
use std::hash::Hash;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Instant;
use sync::{Poisoned, Shared};
use visited::{VisitedTable, NO_PARENT};

/// What a worker thread hands back: its shard, or why it has none.
type WorkerResult = Result<Result<Shard, Poisoned>, Box<dyn Any + Send>>;

/// Explores the state space of `model`; see the [module documentation](self).
///
/// # Errors
///
/// [`ExploreError::EventuallyUnsupported`] if the model has an Eventually property,
/// [`ExploreError::PackRoundTrip`] if an initial state does not survive `pack`/`unpack`,
/// [`ExploreError::PathReplay`] if a discovery path cannot be re-executed (nondeterministic
/// model or invalid symmetry).
///
/// # Panics
///
/// Re-raises a panic of the model code in any worker. Panics starting with
/// `[memtx internal bug]` are bugs of this engine.
pub fn explore<M>(
    model: &M,
    options: &ExploreOptions<'_, M>,
) -> Result<ExploreReport<M::State, M::Action>, ExploreError>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState,
    M::Action: Clone + Debug,
{
    let start = Instant::now();
    let properties = model.properties();
    if let Some(p) = properties
        .iter()
        .find(|p| p.expectation == Expectation::Eventually)
    {
        return Err(ExploreError::EventuallyUnsupported(p.name));
    }
    let threads = options.threads.max(1);
    if options.exact && (options.checkpoint.is_some() || options.resume.is_some()) {
        return Err(ExploreError::Checkpoint(
            "checkpoints are not supported in exact mode".to_string(),
        ));
    }

    let (mut shards, init_generated, init_distinct, restored) = match options.resume {
        None => {
            let (shards, generated) = initial_shards(model, options, threads)?;
            let distinct: u64 = shards.iter().map(Shard::len).sum();
            (shards, generated, distinct, None)
        }
        Some(saved) => {
            fit::check_fits(model, options.symmetry, saved).map_err(|why| {
                ExploreError::Checkpoint(format!("the checkpoint does not fit this model: {why}"))
            })?;
            let unpacks = |bytes: &[u8]| M::State::unpack(bytes).is_some();
            let (shards, found) = checkpoint::restore(
                saved,
                threads,
                options.locality_in_effect(),
                properties.len(),
                &unpacks,
                0..threads,
            )
            .map_err(ExploreError::Checkpoint)?;
            (
                shards,
                saved.generated,
                saved.distinct,
                Some((saved, found)),
            )
        }
    };

    let limits = Limits {
        finish_when_all_discovered: options.finish_when_all_discovered,
        max_states: options.max_states,
        max_transitions: options.max_transitions,
        max_memory: options.max_memory_bytes,
        target_max_depth: options.target_max_depth,
        progress: options.progress,
        progress_interval: options.progress_interval,
        interrupt: options.interrupt,
    };
    // A resumed run's clock starts where the saved run's stopped.
    let start = match restored {
        Some((saved, _)) => start.checked_sub(saved.elapsed).unwrap_or(start),
        None => start,
    };
    let mut coordinator = Coordinator::new(
        limits,
        start,
        init_generated,
        init_distinct,
        properties.len(),
    );
    coordinator.saving = options.checkpoint.map(|plan| coordinator::Saving {
        plan,
        last: Instant::now(),
        written: 0,
        error: None,
    });
    if let Some((saved, found)) = &restored {
        coordinator.level = saved.level();
        coordinator.states_per_depth = saved.states_per_depth().to_vec();
        coordinator.max_depth = saved.max_depth;
        coordinator.discoveries.clone_from(found);
        coordinator.base_expanded = saved.expanded;
    }
    let shared = Shared::new(
        threads,
        options.max_memory_bytes,
        coordinator.decision(false),
    );
    if let Some((saved, _)) = &restored {
        *sync::lock(&shared.coverage) = saved.tally.clone();
    }

    if restored.is_some() {
        shards = run_workers(
            model,
            &properties,
            options,
            &shared,
            shards,
            &mut coordinator,
        );
    } else if init_distinct > 0 && coordinator.beyond_depth(0) {
        coordinator.max_depth = 1;
        coordinator.stopped_early = Some(StopReason::MaxDepth);
    } else if init_distinct > 0 {
        shards = run_workers(
            model,
            &properties,
            options,
            &shared,
            shards,
            &mut coordinator,
        );
    }

    let unique_states: u64 = shards.iter().map(Shard::len).sum();
    let counted = init_distinct + shared.sum(|c| &c.new);
    assert_eq!(
        unique_states, counted,
        "[memtx internal bug] parent logs hold {unique_states} states, counters say {counted}"
    );
    let restored_keys = shards
        .first()
        .and_then(|s| s.restored.as_ref())
        .map_or(0, |t| t.len() as u64);
    let table_keys: u64 = shards.iter().map(|s| s.table.len() as u64).sum();
    assert_eq!(
        table_keys + restored_keys,
        unique_states,
        "[memtx internal bug] the visited tables and the parent logs disagree"
    );
    let total_states = init_generated + shared.sum(|c| &c.generated);

    let tables: Vec<&VisitedTable> = shards.iter().map(|s| &s.table).collect();
    let logs: Vec<&ParentLog> = shards.iter().map(|s| &s.log).collect();
    let mut keyer = Keyer::<M> {
        model,
        symmetry: options.symmetry,
        tables: &tables,
        exact: options.exact,
        buffer: Vec::new(),
    };
    let mut reports = Vec::with_capacity(properties.len());
    for (property, found) in properties.iter().zip(&coordinator.discoveries) {
        let discovery = match *found {
            Some(((key, reference), steps)) => Some(Discovery {
                path: path::rebuild(
                    model,
                    &mut keyer,
                    &logs,
                    property.name,
                    (key, reference),
                    steps,
                )?,
                fingerprint: key,
            }),
            None => None,
        };
        reports.push(PropertyReport {
            name: property.name,
            expectation: property.expectation.clone(),
            discovery,
        });
    }

    let visited_bytes: u64 = shards.iter().map(|s| s.table.bytes()).sum::<u64>()
        + shards
            .first()
            .and_then(|s| s.restored.as_ref())
            .map_or(0, |t| t.bytes());
    let parent_log_bytes: u64 = shards.iter().map(|s| s.log.bytes()).sum();
    let level_scratch_bytes: u64 = shards
        .iter()
        .map(|s| s.fresh.bytes() + s.log.staging_bytes())
        .sum();
    let held: u64 = shards.iter().map(Shard::bytes).sum();
    Ok(ExploreReport {
        unique_states,
        total_states,
        max_depth: coordinator.max_depth,
        states_per_depth: coordinator.states_per_depth,
        properties: reports,
        elapsed: start.elapsed(),
        stopped_early: coordinator.stopped_early,
        memory: MemoryReport::new(
            read_proc_status_bytes("VmHWM"),
            coordinator.peak_memory.max(held),
            visited_bytes,
            parent_log_bytes,
            level_scratch_bytes,
            unique_states,
        ),
        collision_probability: if options.exact {
            0.0
        } else {
            report::collision_probability(unique_states, total_states)
        },
        fingerprint_collisions: shards.iter().map(Shard::collisions).sum(),
        states_per_worker: shards.iter().map(Shard::len).collect(),
        coverage: options
            .coverage
            .map(|_| sync::lock(&shared.coverage).finish()),
        dropped_states: shared.sum(|c| &c.dropped),
        threads,
        exact: options.exact,
        symmetry: options.symmetry.is_some(),
        resumed_from_level: restored.map(|(saved, _)| saved.level()),
        checkpoints_written: coordinator.saving.as_ref().map_or(0, |s| s.written),
        checkpoint_error: coordinator.saving.and_then(|s| s.error),
        cluster: None,
    })
}

/// Level 0: the initial states (within the boundary, canonicalized), inserted into their
/// owners' shards and closed as the first level; also returns how many were generated.
fn initial_shards<M>(
    model: &M,
    options: &ExploreOptions<'_, M>,
    threads: usize,
) -> Result<(Vec<Shard>, u64), ExploreError>
where
    M: Model,
    M::State: Hash + Clone + Eq + PackedState,
{
    let mut shards: Vec<Shard> = (0..threads).map(|_| Shard::new(options.exact)).collect();
    let mut init_generated = 0u64;
    let locality = options.locality_in_effect();
    let mut buffer = Vec::new();
    for state in model.init_states() {
        if !model.within_boundary(&state) {
            continue;
        }
        init_generated += 1;
        let state = match options.symmetry {
            Some(canonical) => canonical(model, &state),
            None => state,
        };
        buffer.clear();
        state.pack(&mut buffer);
        if M::State::unpack(&buffer).as_ref() != Some(&state) {
            return Err(ExploreError::PackRoundTrip);
        }
        let fp = fingerprint_packed(&buffer);
        let shard = &mut shards[owner_of(&buffer, fp, locality, threads)];
        while shard.needs_growth() {
            shard.grow();
        }
        if shard.insert(fp, NO_PARENT, NO_PARENT_REF, &buffer) == Insert::Full {
            panic!("[memtx internal bug] no room for an initial state in a growable table");
        }
    }
    for shard in &mut shards {
        shard.end_level(|_| true);
        std::mem::swap(&mut shard.current, &mut shard.next);
    }
    Ok((shards, init_generated))
}

/// Runs one worker per shard (worker 0 on the calling thread, with the coordinator) until
/// the coordinator stops the search; returns the shards in order. Re-raises worker panics.
fn run_workers<M>(
    model: &M,
    properties: &[stateright::Property<M>],
    options: &ExploreOptions<'_, M>,
    shared: &Shared,
    shards: Vec<Shard>,
    coordinator: &mut Coordinator<'_>,
) -> Vec<Shard>
where
    M: Model + Sync,
    M::State: Hash + Clone + PackedState,
{
    let threads = shards.len();
    let first_level = coordinator.level;
    let (senders, inboxes): (Vec<_>, Vec<_>) = (0..threads).map(|_| mpsc::channel::<Msg>()).unzip();
    let context = || Context {
        model,
        properties,
        symmetry: options.symmetry,
        next_state_into: options.next_state_into,
        repeats: options.repeats,
        coverage: options.coverage,
        exact: options.exact,
        locality: options.locality_in_effect(),
        shared,
    };
    let guarded = |body: &mut dyn FnMut() -> Result<Shard, Poisoned>| -> WorkerResult {
        let result = catch_unwind(AssertUnwindSafe(body));
        if result.is_err() {
            shared.barrier.poison();
        }
        result
    };
    let mut work = shards.into_iter().zip(inboxes).enumerate();
    let Some((_, (shard0, inbox0))) = work.next() else {
        panic!("[memtx internal bug] no shard for worker 0");
    };
    let results: Vec<WorkerResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .map(|(id, (shard, inbox))| {
                let senders = senders.clone();
                let mut slot = Some((shard, inbox));
                scope.spawn(move || {
                    guarded(&mut || {
                        let (shard, inbox) = slot.take().unwrap_or_else(|| {
                            panic!("[memtx internal bug] worker {id} started twice")
                        });
                        Worker::new(id, context(), senders.clone(), inbox, shard, first_level)
                            .run(None)
                    })
                })
            })
            .collect();
        let mut slot = Some((shard0, inbox0));
        let mut results = vec![guarded(&mut || {
            let (shard, inbox) = slot
                .take()
                .unwrap_or_else(|| panic!("[memtx internal bug] worker 0 started twice"));
            Worker::new(0, context(), senders.clone(), inbox, shard, first_level)
                .run(Some(&mut *coordinator))
        })];
        for handle in handles {
            results.push(handle.join().unwrap_or_else(Err));
        }
        results
    });

    let mut shards = Vec::with_capacity(threads);
    let mut poisoned = false;
    for result in results {
        match result {
            Ok(Ok(shard)) => shards.push(shard),
            Ok(Err(Poisoned)) => poisoned = true,
            Err(payload) => resume_unwind(payload),
        }
    }
    assert!(
        !poisoned,
        "[memtx internal bug] a worker stopped on a poisoned barrier but none panicked"
    );
    shards
}
