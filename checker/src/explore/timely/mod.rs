//! The explorer over processes: the same sharded level-synchronous search, with the shards
//! owned by [timely dataflow](https://docs.rs/timely) workers, in one process or across
//! several (one `host:port` per process).
//!
//! # Shape
//!
//! Each timely worker owns one shard, as a thread of the fast engine does, and runs the
//! fast engine's `Worker` (`shard/worker.rs`) on it: the same expansion, the same batches of successor
//! records, the same absorption into the visited table and the same parent log. What
//! timely replaces is the transport and the level barrier:
//!
//! * one dataflow per worker, an input of `(target worker, message)` pairs, an
//!   [`Exchange`](::timely::dataflow::channels::pact::Exchange) pact that routes each message to its target (the owner of a batch's
//!   records, chosen by the fingerprint or the locality key modulo the *total* number of workers), and an operator
//!   that hands what arrives to the worker;
//! * timestamps are rounds. Level `L`'s successors are sent at one round; the worker
//!   advances its input past it and steps the dataflow until timely's progress tracking
//!   says the round is complete everywhere (the probe passes it): every record of the
//!   level has then been absorbed by its owner, on every worker, and the level closes.
//!   That is the fast engine's `Done` exchange and barrier, done by timely;
//! * the next round carries each worker's *summary* of the level (counters, its
//!   smallest-key discovery per property, a stop request) to every worker. Every worker
//!   feeds the same summaries into its own replica of the coordinator, which therefore
//!   takes the same decision everywhere (go on, which properties are still pending,
//!   stop), without a leader.
//!
//! After the last level, a few rounds of lookups rebuild each discovery's key chain: worker
//! 0 asks the owner of each link for its key and parent reference, one level down per
//! round, then re-executes the chain exactly as the threaded engine does
//! (`path.rs`). Coverage tallies and sizes are summed at worker 0 in a last round.
//!
//! Everything that decides a result (the set of states per level, the smallest-key
//! parent, the smallest-key discovery, the chain re-execution) is the threaded engine's,
//! so counts, levels, verdicts, coverage and counterexamples are those of one thread.
//!
//! # Limits
//!
//! No exact mode, no work stealing across workers (a worker expands its own share only).
//! Checkpoints are written as one part per worker at a level boundary, when worker 0's clock
//! says one is due (its summary carries that, so every worker writes its part or none does),
//! and a resumed run deals the saved states to this run's workers ([`super::checkpoint`]). The memory budget is per process: each process stops requesting growth
//! when its own workers hold the budget, and the stop request reaches every worker with the
//! level's summaries. A process that loses its connection to another (the other crashed
//! or was killed) ends with [`ExploreError::Cluster`], not a hang.
//!
//! # Processes that never come up or hang
//!
//! * Connecting: the processes connect within [`Cluster::Processes::connect_timeout`]
//!   (`memtx check --connect-timeout`, 60 s by default), or the run ends with one line naming
//!   the processes that were not reached (`connect.rs`; timely's own connection loop would
//!   retry for ever).
//! * Liveness: over processes, every worker sends a heartbeat to every other worker at
//!   least every second while it steps the dataflow (between chunks of a level and while it
//!   waits for a round to complete). The heartbeats travel in a dataflow of their own, with
//!   timestamps of their own, so they never enter the rounds' accounting nor the messages of
//!   a level. A worker waiting for a round that has heard nothing from some worker for
//!   [`Cluster::Processes::peer_timeout`] (`--peer-timeout`, 120 s by default) ends the run
//!   with [`ExploreError::Cluster`] naming that process and worker.
//! * The rule for silent phases: silence is counted from the later of the peer's last
//!   heartbeat and the moment this worker began to wait for the round. A phase in which a
//!   worker does not step the dataflow (absorbing a level, building the initial states,
//!   writing a file) therefore trips the timeout only when it outlasts the same phase on the
//!   waiting worker by more than the timeout; runs where one process can be that much slower
//!   than another at such a phase (a large file on a slow disk) need a larger
//!   `--peer-timeout`.

mod net;
mod wire;
mod worker;

use net::{install_hook, lost_error, Liveness, LOST};
use worker::run_worker;

use super::checkpoint::{self};
use super::coordinator::Found;
use super::shard::Shard;
use super::sync::lock;
use super::{ExploreError, ExploreOptions, ExploreReport, PackedState};
use ::timely::communication::allocator::{Allocator, AllocatorBuilder, Thread};
use serde::{Deserialize, Serialize};
use stateright::{Expectation, Model};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the workers of a run are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cluster {
    /// `n` workers as threads of this process (timely's `Config::process(n)`).
    InProcess(usize),
    /// Process `process` of `addresses.len()` processes with `threads` workers each; every
    /// process runs the same command with its own index. `addresses[i]` is `host:port` of
    /// process `i`.
    Processes {
        /// Workers in each process.
        threads: usize,
        /// This process's index in `addresses`.
        process: usize,
        /// `host:port` of every process, in index order.
        addresses: Vec<String>,
        /// How long this process waits for every other process to connect before it gives
        /// up ([`DEFAULT_CONNECT_TIMEOUT`] from the command line).
        connect_timeout: Duration,
        /// How long a worker waiting for a round accepts to hear nothing from another
        /// worker before it ends the run ([`DEFAULT_PEER_TIMEOUT`] from the command line);
        /// see the [module documentation](self).
        peer_timeout: Duration,
    },
}

/// The default of `memtx check --connect-timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of `memtx check --peer-timeout`.
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(120);
/// The most time between two heartbeats of a worker that steps the dataflow.
const BEAT_EVERY: Duration = Duration::from_secs(1);

impl Cluster {
    fn threads(&self) -> usize {
        match self {
            Cluster::InProcess(n) => (*n).max(1),
            Cluster::Processes { threads, .. } => (*threads).max(1),
        }
    }

    /// Timely workers in the whole run.
    fn workers(&self) -> usize {
        match self {
            Cluster::InProcess(n) => (*n).max(1),
            Cluster::Processes {
                threads, addresses, ..
            } => (*threads).max(1) * addresses.len(),
        }
    }

    /// The indices of this process's workers.
    fn mine(&self) -> std::ops::Range<usize> {
        match self {
            Cluster::InProcess(n) => 0..(*n).max(1),
            Cluster::Processes {
                threads, process, ..
            } => {
                let t = (*threads).max(1);
                process * t..(process + 1) * t
            }
        }
    }
}

/// What one process of a cluster run did, in [`ClusterReport::processes`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessReport {
    /// Peak resident set size of the process (`VmHWM`), if known.
    pub peak_rss_bytes: Option<u64>,
    /// Bytes of successor records its workers sent to workers of other processes.
    pub bytes_to_other_processes: u64,
    /// Bytes of successor records its workers sent to any other worker.
    pub bytes_to_other_workers: u64,
    /// Distinct states its workers own.
    pub states: u64,
}

/// How a run over timely workers was spread; in [`ExploreReport::cluster`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterReport {
    /// Number of processes.
    pub processes: usize,
    /// Workers in each process.
    pub threads_per_process: usize,
    /// Per process, in index order.
    pub per_process: Vec<ProcessReport>,
    /// Bytes of successor records sent from one process to another, all processes.
    pub bytes_to_other_processes: u64,
    /// Bytes of successor records sent from one worker to another, all workers.
    pub bytes_to_other_workers: u64,
}

impl ClusterReport {
    /// One line for summaries and reports: processes × workers, each process's peak memory,
    /// and the bytes of successor records sent between processes (per distinct state of a
    /// run of `unique_states`) and between workers.
    pub fn summary(&self, unique_states: u64) -> String {
        let rss: Vec<String> = self
            .per_process
            .iter()
            .map(|p| {
                p.peak_rss_bytes
                    .map_or("?".to_string(), |b| format!("{}", b >> 20))
            })
            .collect();
        format!(
            "{} process(es) x {} worker(s); peak memory per process {} MiB; {} bytes of successor records between processes ({:.1} B per state), {} between workers",
            self.processes,
            self.threads_per_process,
            rss.join(", "),
            self.bytes_to_other_processes,
            self.bytes_to_other_processes as f64 / unique_states.max(1) as f64,
            self.bytes_to_other_workers
        )
    }
}

/// Explores `model` with its shards owned by timely workers placed as `cluster` says; see
/// the [module documentation](self). Every process of a cluster calls this with the same
/// model and options; the report is returned by the process holding worker 0 (`Some`),
/// the others return `None`.
///
/// # Errors
///
/// As [`super::explore`], plus [`ExploreError::Cluster`] when exact mode or checkpoints
/// are asked for, the cluster cannot be set up (its processes did not all connect within
/// the connect timeout), or a process is lost or stays silent for the peer timeout during the
/// run.
pub fn explore_timely<M>(
    model: &M,
    options: &ExploreOptions<'_, M>,
    cluster: &Cluster,
) -> WorkerResult<M>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState,
    M::Action: Clone + Debug + Send,
{
    if let Some(p) = model
        .properties()
        .iter()
        .find(|p| p.expectation == Expectation::Eventually)
    {
        return Err(ExploreError::EventuallyUnsupported(p.name));
    }
    if options.exact {
        return Err(ExploreError::Cluster(
            "exact mode is not supported over timely workers".to_string(),
        ));
    }
    // A resumed run: this process's shards, dealt for the whole run's workers once here
    // (not once per worker), each taken by its worker.
    let mine = cluster.mine();
    let restored: Option<(Vec<ShardSlot>, Vec<Found>)> = match options.resume {
        None => None,
        Some(saved) => {
            super::fit::check_fits(model, options.symmetry, saved).map_err(|why| {
                ExploreError::Checkpoint(format!("the checkpoint does not fit this model: {why}"))
            })?;
            let unpacks = |bytes: &[u8]| M::State::unpack(bytes).is_some();
            let (shards, found) = checkpoint::restore(
                saved,
                cluster.workers(),
                options.locality_in_effect(),
                model.properties().len(),
                &unpacks,
                mine.clone(),
            )
            .map_err(ExploreError::Checkpoint)?;
            let shards = shards
                .into_iter()
                .skip(mine.start)
                .take(mine.len())
                .map(|s| Mutex::new(Some(s)))
                .collect();
            Some((shards, found))
        }
    };
    install_hook();
    let (builders, others) = build(cluster)?;
    let liveness = match cluster {
        Cluster::Processes { peer_timeout, .. } => Some(Liveness {
            timeout: *peer_timeout,
            hung: Mutex::new(None),
        }),
        Cluster::InProcess(_) => None,
    };
    let liveness = liveness.as_ref();
    // The clock starts once the processes are connected: the report times the search (a
    // resumed run's clock starts where the saved run's stopped).
    let start = Instant::now();
    let start = match options.resume {
        Some(saved) => start.checked_sub(saved.elapsed()).unwrap_or(start),
        None => start,
    };
    let restored = restored.as_ref();
    let threads = cluster.threads();
    let results: Vec<std::thread::Result<WorkerResult<M>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = builders
            .into_iter()
            .map(|builder| {
                scope.spawn(move || {
                    let allocator = match builder {
                        AllocatorBuilder::Thread(_) => Allocator::Thread(Thread::default()),
                        AllocatorBuilder::Process(p) => Allocator::Process(p.build()),
                        AllocatorBuilder::Tcp(t) => Allocator::Tcp(t.build()),
                    };
                    let mut worker = ::timely::worker::Worker::new(
                        ::timely::WorkerConfig::default(),
                        allocator,
                        Some(Instant::now()),
                    );
                    let resumed = restored.map(|(shards, found)| {
                        let Some(shard) = shards
                            .get(worker.index() - mine.start)
                            .and_then(|slot| lock(slot).take())
                        else {
                            panic!("[memtx internal bug] no restored shard for a worker");
                        };
                        Resumed { shard, found }
                    });
                    run_worker(
                        model,
                        options,
                        &mut worker,
                        threads,
                        start,
                        resumed,
                        liveness,
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let mut report = None;
    let mut first_error = None;
    for result in results {
        match result {
            Ok(Ok(r)) => report = report.or(r),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(payload) => {
                if LOST.load(Ordering::SeqCst) {
                    first_error.get_or_insert(lost_error());
                } else {
                    std::panic::resume_unwind(payload);
                }
            }
        }
    }
    if let Some(e) = first_error {
        // The network threads may be blocked on a dead peer: do not wait for them.
        std::mem::forget(others);
        return Err(e);
    }
    drop(others);
    Ok(report)
}

/// The communication of `cluster`: timely's, with the connections between processes made
/// by [`super::connect`] (within the connect timeout).
fn build(
    cluster: &Cluster,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), ExploreError> {
    let Cluster::Processes {
        threads,
        process,
        addresses,
        connect_timeout,
        ..
    } = cluster
    else {
        // Workers in this process only: timely's own allocators (processes connect below,
        // with a deadline, in `connect.rs`).
        let config = match cluster.workers() {
            1 => ::timely::CommunicationConfig::Thread,
            n => ::timely::CommunicationConfig::Process(n),
        };
        return config
            .try_build()
            .map_err(|e| ExploreError::Cluster(format!("cannot set up the cluster: {e}")));
    };
    use ::timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
    let sockets = super::connect::connect(addresses, *process, *connect_timeout)
        .map_err(ExploreError::Cluster)?;
    let threads = (*threads).max(1);
    let hooks = ::timely::communication::Hooks::default();
    let local = ::timely::communication::allocator::ProcessBuilder::new_typed_vector(
        threads,
        hooks.refill.clone(),
        hooks.spill.clone(),
    );
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, *process, threads, hooks)
            .map_err(|e| ExploreError::Cluster(format!("cannot set up the cluster: {e}")))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// What [`explore_timely`] returns: the report on the process of worker 0, `None` on the
/// others.
pub type WorkerResult<M> =
    Result<Option<ExploreReport<<M as Model>::State, <M as Model>::Action>>, ExploreError>;

/// A restored shard waiting for its worker to take it.
type ShardSlot = Mutex<Option<Shard>>;

/// A worker's share of a resumed run: its shard and the discoveries so far.
struct Resumed<'x> {
    shard: Shard,
    found: &'x [Found],
}
