//! A worker's end of the network: sending at the current round, stepping the dataflow until a
//! round is complete, heartbeats between processes, and a lost connection turned into an error.

use super::wire::{Envelope, Wire};
use super::BEAT_EVERY;
use crate::explore::sync::lock;
use crate::explore::ExploreError;
use ::timely::dataflow::channels::pact::Exchange;
use ::timely::dataflow::operators::generic::operator::Operator;
use ::timely::dataflow::operators::Input;
use ::timely::dataflow::{InputHandle, ProbeHandle};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Set by the panic hook when timely's networking reports a broken connection.
pub(super) static LOST: AtomicBool = AtomicBool::new(false);
/// The message of that panic.
static LOST_WHY: Mutex<Option<String>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Installs (once) a panic hook that turns timely's "timely communication error" panics
/// (a peer process went away) into the [`LOST`] flag, silently; other panics go to the
/// previous hook.
pub(super) fn install_hook() {
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

pub(super) fn lost_error() -> ExploreError {
    let why = lock(&LOST_WHY).clone().unwrap_or_default();
    let why = why.lines().next().unwrap_or("").to_string();
    ExploreError::Cluster(format!(
        "lost the connection to another process of the run ({why}); a process crashed or was killed"
    ))
}

/// What the workers of one process share about their peers' liveness.
pub(super) struct Liveness {
    /// [`Cluster::Processes::peer_timeout`](super::Cluster::Processes::peer_timeout).
    pub(super) timeout: Duration,
    /// Set by the first worker of this process that finds a peer silent: the error every
    /// worker of this process then ends with.
    pub(super) hung: Mutex<Option<String>>,
}

/// A `(target worker, sending worker)` heartbeat.
pub(super) type Beat = (u32, u32);

/// A worker's heartbeats: a dataflow of their own (timestamps independent of the rounds),
/// each heartbeat closing its own epoch so that it is flushed to the network at once.
pub(super) struct Beats<'w> {
    pub(super) input: InputHandle<u64, ::timely::container::CapacityContainerBuilder<Vec<Beat>>>,
    pub(super) epoch: u64,
    /// Per worker: when a heartbeat from it last arrived here.
    pub(super) heard: Rc<RefCell<Vec<Instant>>>,
    pub(super) sent: Instant,
    pub(super) liveness: &'w Liveness,
}

impl<'w> Beats<'w> {
    /// Builds the heartbeat dataflow on `worker` (every worker of the run must, in the same
    /// order relative to its other dataflows).
    pub(super) fn new(worker: &mut ::timely::worker::Worker, liveness: &'w Liveness) -> Self {
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
    pub(super) fn beat(&mut self, index: usize, peers: usize) {
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
    pub(super) fn silent(&self, index: usize, threads: usize, waiting: Instant) -> Option<String> {
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
            crate::explore::connect::shown(timeout)
        ))
    }
}

/// A worker's end of the dataflow: sends messages at the current round, and steps the
/// dataflow until a round is complete.
pub(super) struct Net<'w> {
    pub(super) worker: &'w mut ::timely::worker::Worker,
    pub(super) input:
        InputHandle<u64, ::timely::container::CapacityContainerBuilder<Vec<Envelope>>>,
    pub(super) probe: ProbeHandle<u64>,
    pub(super) arrived: Rc<RefCell<Vec<Wire>>>,
    pub(super) round: u64,
    pub(super) index: usize,
    pub(super) threads: usize,
    pub(super) bytes_to_other_workers: u64,
    pub(super) bytes_to_other_processes: u64,
    /// Heartbeats, over processes only.
    pub(super) beats: Option<Beats<'w>>,
}

impl Net<'_> {
    pub(super) fn send(&mut self, target: usize, wire: Wire) {
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

    pub(super) fn check(&self) -> Result<(), ExploreError> {
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
    pub(super) fn beat(&mut self) {
        let peers = self.worker.peers();
        if let Some(beats) = &mut self.beats {
            beats.beat(self.index, peers);
        }
    }

    /// Steps the dataflow once without blocking.
    pub(super) fn step(&mut self) -> Result<(), ExploreError> {
        self.beat();
        self.worker.step();
        self.check()
    }

    /// Closes the current round and steps until every worker has received everything sent
    /// at it; ends the run when a worker stays silent for the peer timeout meanwhile.
    pub(super) fn finish_round(&mut self) -> Result<(), ExploreError> {
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

    pub(super) fn take(&mut self) -> Vec<Wire> {
        std::mem::take(&mut *self.arrived.borrow_mut())
    }
}
