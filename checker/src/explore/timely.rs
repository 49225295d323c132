//! The explorer over processes: the same sharded level-synchronous search, with the shards
//! owned by [timely dataflow](https://docs.rs/timely) workers, in one process or across
//! several (one `host:port` per process).
//!
//! # Shape
//!
//! Each timely worker owns one shard, as a thread of the fast engine does, and runs the
//! fast engine's `Worker` (`shard.rs`) on it: the same expansion, the same batches of successor
//! records, the same absorption into the visited table and the same parent log. What
//! timely replaces is the transport and the level barrier:
//!
//! * one dataflow per worker, an input of `(target worker, message)` pairs, an
//!   [`Exchange`] pact that routes each message to its target (the owner of a batch's
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

use super::checkpoint::{self, Checkpoint};
use super::coordinator::{Coordinator, Found, Limits, Saving, Sighting};
use super::coverage::Tally;
use super::path::{self, Keyer, ParentLog};
use super::report::{read_proc_status_bytes, StopReason};
use super::shard::{Context, Msg, Shard, Worker, CHUNK};
use super::sync::{lock, Shared};
use super::{
    initial_shards, Discovery, ExploreError, ExploreOptions, ExploreReport, MemoryReport,
    PackedState, PropertyReport,
};
use ::timely::communication::allocator::{Allocator, AllocatorBuilder, Thread};
use ::timely::dataflow::channels::pact::Exchange;
use ::timely::dataflow::operators::generic::operator::Operator;
use ::timely::dataflow::operators::{Input, Probe};
use ::timely::dataflow::{InputHandle, ProbeHandle};
use serde::{Deserialize, Serialize};
use stateright::{Expectation, Model};
use std::cell::RefCell;
use std::fmt::Debug;
use std::hash::Hash;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, Once};
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

/// A batch of successor records, serialized as one byte string (not byte by byte).
#[derive(Clone, Debug, Default)]
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Bytes, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Bytes(out))
            }
        }
        d.deserialize_byte_buf(Visitor)
    }
}

/// One worker's account of a closed level, sent to every worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Summary {
    worker: u32,
    /// Cumulative: generated, new, expanded, dropped, bytes held.
    counters: [u64; 5],
    /// Per property: the smallest-key discovery of this level in this worker's share.
    discoveries: Vec<Option<Sighting>>,
    /// [`StopReason::code`] of a stop requested on this worker (0: none).
    stop: u8,
    /// Whether a checkpoint is due by this worker's clock; worker 0's decides for everyone.
    save_due: bool,
}

/// What each worker sends worker 0 at the end.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Final {
    worker: u32,
    counts: Vec<u64>,
    first: Vec<u64>,
    bytes_to_other_workers: u64,
    bytes_to_other_processes: u64,
    peak_rss: Option<u64>,
    states: u64,
    visited_bytes: u64,
    parent_log_bytes: u64,
    scratch_bytes: u64,
}

/// A message between workers; travels as `(target worker, message)`.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Wire {
    Batch(Bytes),
    Summary(Summary),
    /// Worker 0 asks for the entry `index` of level `level` of the target's parent log,
    /// for the chain of property `slot`.
    Query {
        slot: u32,
        level: u32,
        index: u64,
    },
    /// The answer: the entry's key and parent reference.
    Answer {
        slot: u32,
        key: u64,
        parent: u32,
    },
    Final(Final),
    /// A worker wrote its part of a checkpoint (or could not: why).
    Saved {
        worker: u32,
        error: Option<String>,
    },
}

type Envelope = (u32, Wire);

/// Set by the panic hook when timely's networking reports a broken connection.
static LOST: AtomicBool = AtomicBool::new(false);
/// The message of that panic.
static LOST_WHY: Mutex<Option<String>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Installs (once) a panic hook that turns timely's "timely communication error" panics
/// (a peer process went away) into the [`LOST`] flag, silently; other panics go to the
/// previous hook.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            if text.contains("timely communication error") || LOST.load(Ordering::SeqCst) {
                lock(&LOST_WHY).get_or_insert(text);
                LOST.store(true, Ordering::SeqCst);
                return;
            }
            previous(info);
        }));
    });
}

fn lost_error() -> ExploreError {
    let why = lock(&LOST_WHY).clone().unwrap_or_default();
    let why = why.lines().next().unwrap_or("").to_string();
    ExploreError::Cluster(format!(
        "lost the connection to another process of the run ({why}); a process crashed or was killed"
    ))
}

/// What the workers of one process share about their peers' liveness.
struct Liveness {
    /// [`Cluster::Processes::peer_timeout`].
    timeout: Duration,
    /// Set by the first worker of this process that finds a peer silent: the error every
    /// worker of this process then ends with.
    hung: Mutex<Option<String>>,
}

/// A `(target worker, sending worker)` heartbeat.
type Beat = (u32, u32);

/// A worker's heartbeats: a dataflow of their own (timestamps independent of the rounds),
/// each heartbeat closing its own epoch so that it is flushed to the network at once.
struct Beats<'w> {
    input: InputHandle<u64, ::timely::container::CapacityContainerBuilder<Vec<Beat>>>,
    epoch: u64,
    /// Per worker: when a heartbeat from it last arrived here.
    heard: Rc<RefCell<Vec<Instant>>>,
    sent: Instant,
    liveness: &'w Liveness,
}

impl<'w> Beats<'w> {
    /// Builds the heartbeat dataflow on `worker` (every worker of the run must, in the same
    /// order relative to its other dataflows).
    fn new(worker: &mut ::timely::worker::Worker, liveness: &'w Liveness) -> Self {
        let heard = Rc::new(RefCell::new(vec![Instant::now(); worker.peers()]));
        let mut input = InputHandle::new();
        {
            let heard = Rc::clone(&heard);
            worker.dataflow::<u64, _, _>(|scope| {
                scope
                    .input_from(&mut input)
                    .unary::<::timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                        Exchange::new(|b: &Beat| u64::from(b.0)),
                        "Heartbeat",
                        move |_, _| {
                            move |input, _output| {
                                input.for_each(|_time, data| {
                                    let now = Instant::now();
                                    let mut heard = heard.borrow_mut();
                                    for (_, from) in data.drain(..) {
                                        if let Some(h) = heard.get_mut(from as usize) {
                                            *h = now;
                                        }
                                    }
                                });
                            }
                        },
                    );
            });
        }
        Beats {
            input,
            epoch: 0,
            heard,
            sent: Instant::now(),
            liveness,
        }
    }

    /// Sends a heartbeat to every other worker if the last is [`BEAT_EVERY`] old (it leaves
    /// with the next step).
    fn beat(&mut self, index: usize, peers: usize) {
        if self.sent.elapsed() < BEAT_EVERY {
            return;
        }
        for target in (0..peers).filter(|&t| t != index) {
            self.input.send((target as u32, index as u32));
        }
        self.epoch += 1;
        self.input.advance_to(self.epoch);
        self.sent = Instant::now();
    }

    /// The error for a worker silent for longer than the timeout, counting from `waiting`
    /// at the earliest (when this worker began to wait for the round).
    fn silent(&self, index: usize, threads: usize, waiting: Instant) -> Option<String> {
        let timeout = self.liveness.timeout;
        if waiting.elapsed() <= timeout {
            return None;
        }
        let heard = self.heard.borrow();
        let (worker, _) = heard
            .iter()
            .enumerate()
            .filter(|&(w, _)| w != index)
            .find(|&(_, &h)| h.max(waiting).elapsed() > timeout)?;
        Some(format!(
            "process {} (worker {worker}) has sent nothing for {}: it hangs or its machine is unreachable; the run is lost: look at that process (or, if it can be busy that long without a word, raise --peer-timeout)",
            worker / threads.max(1),
            super::connect::shown(timeout)
        ))
    }
}

/// A worker's end of the dataflow: sends messages at the current round, and steps the
/// dataflow until a round is complete.
struct Net<'w> {
    worker: &'w mut ::timely::worker::Worker,
    input: InputHandle<u64, ::timely::container::CapacityContainerBuilder<Vec<Envelope>>>,
    probe: ProbeHandle<u64>,
    arrived: Rc<RefCell<Vec<Wire>>>,
    round: u64,
    index: usize,
    threads: usize,
    bytes_to_other_workers: u64,
    bytes_to_other_processes: u64,
    /// Heartbeats, over processes only.
    beats: Option<Beats<'w>>,
}

impl Net<'_> {
    fn send(&mut self, target: usize, wire: Wire) {
        if let Wire::Batch(b) = &wire {
            if target != self.index {
                self.bytes_to_other_workers += b.0.len() as u64;
                if target / self.threads != self.index / self.threads {
                    self.bytes_to_other_processes += b.0.len() as u64;
                }
            }
        }
        let target = u32::try_from(target)
            .unwrap_or_else(|_| panic!("[memtx internal bug] worker index beyond 32 bits"));
        self.input.send((target, wire));
    }

    fn check(&self) -> Result<(), ExploreError> {
        if LOST.load(Ordering::SeqCst) {
            return Err(lost_error());
        }
        if let Some(beats) = &self.beats {
            if let Some(why) = lock(&beats.liveness.hung).clone() {
                return Err(ExploreError::Cluster(why));
            }
        }
        Ok(())
    }

    /// Sends this worker's heartbeats if they are due.
    fn beat(&mut self) {
        let peers = self.worker.peers();
        if let Some(beats) = &mut self.beats {
            beats.beat(self.index, peers);
        }
    }

    /// Steps the dataflow once without blocking.
    fn step(&mut self) -> Result<(), ExploreError> {
        self.beat();
        self.worker.step();
        self.check()
    }

    /// Closes the current round and steps until every worker has received everything sent
    /// at it; ends the run when a worker stays silent for the peer timeout meanwhile.
    fn finish_round(&mut self) -> Result<(), ExploreError> {
        self.round += 1;
        self.input.advance_to(self.round);
        let waiting = Instant::now();
        while self.probe.less_than(&self.round) {
            self.beat();
            self.worker.step_or_park(Some(Duration::from_millis(20)));
            self.check()?;
            if let Some(beats) = &self.beats {
                if let Some(why) = beats.silent(self.index, self.threads, waiting) {
                    lock(&beats.liveness.hung).get_or_insert(why);
                    self.check()?;
                }
            }
        }
        Ok(())
    }

    fn take(&mut self) -> Vec<Wire> {
        std::mem::take(&mut *self.arrived.borrow_mut())
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

/// One timely worker's whole run.
fn run_worker<M>(
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
        collision_probability: super::report::collision_probability(unique_states, total_states),
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
fn write_part<M>(
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
fn count_parts(
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
fn gather_chains(
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
