//! The parameters of an exploration: [`ExploreOptions`], and the type aliases
//! [`Canonicalizer`], [`NextStateInto`], [`Repeats`], [`Locality`] and [`Trace`].

use super::checkpoint::{Checkpoint, CheckpointPlan};
use super::coverage::CoverageProbe;
use super::report::Progress;
use stateright::Model;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A symmetry canonicalizer: maps a state of the model to the representative of its
/// symmetry class (the model is passed so that the renamings may depend on its
/// configuration).
pub type Canonicalizer<M> = fn(&M, &<M as Model>::State) -> <M as Model>::State;

/// An in-place successor function: writes the state that `action` leads to from `state`
/// into `out` and returns `true`, or returns `false` where `next_state` returns `None`. It
/// must agree with [`Model::next_state`] exactly; `out` holds an arbitrary earlier state of
/// the model on entry (its allocations can be reused). See [`ExploreOptions::next_state_into`].
pub type NextStateInto<M> =
    fn(&M, &<M as Model>::State, <M as Model>::Action, &mut <M as Model>::State) -> bool;

/// The step an action takes, where the model's environment offers several actions that the
/// protocol makes into one: `Some((key, extra))` promises that actions of one state with the
/// same key, proposed one right after the other, take the same step. If the first was refused,
/// the next is refused with the same rules fired; if it was taken, the next is taken, leads to
/// the very same successor and fires the first's rules and the bits of its own `extra`
/// (coverage bits, as the probe returns them). `None` promises nothing. See
/// [`ExploreOptions::repeats`].
pub type Repeats<M> = fn(&M, &<M as Model>::State, &<M as Model>::Action) -> Option<(u64, u128)>;

/// A locality key, computed from a packed state: states with equal keys belong to the same
/// worker. See [`ExploreOptions::locality`].
pub type Locality = fn(&[u8]) -> u64;

/// A path through a model, in stateright's format: each state with the action taken from
/// it, the last state with `None`.
pub type Trace<M> = Vec<(<M as Model>::State, Option<<M as Model>::Action>)>;

/// Parameters of one exploration. Build with [`ExploreOptions::new`] and the chaining
/// setters, or set the fields directly.
pub struct ExploreOptions<'a, M: Model> {
    /// Worker threads (0 is treated as 1). With 1, everything runs on the calling thread.
    pub threads: usize,
    /// Symmetry canonicalizer applied to every state before it is fingerprinted.
    pub symmetry: Option<Canonicalizer<M>>,
    /// States at this 1-based depth are counted but not checked or expanded (stateright's
    /// `target_max_depth`; `Some(0)` means no bound).
    pub target_max_depth: Option<usize>,
    /// In-place successor function used instead of [`Model::next_state`] while exploring.
    pub next_state_into: Option<NextStateInto<M>>,
    /// Recognizes actions that repeat the one before them; see [`ExploreOptions::repeats`].
    pub repeats: Option<Repeats<M>>,
    /// Decides which worker owns a state (by default its fingerprint does); ignored in exact
    /// mode. See [`ExploreOptions::locality`].
    pub locality: Option<Locality>,
    /// Stop once at least this many distinct states were found (checked between chunks;
    /// the run stops within about one batch of the limit, mid-level).
    pub max_states: Option<u64>,
    /// Stop once at least this many transitions (generated successors, the total states of
    /// the report) were taken, checked like `max_states`: a bound on total work, for a
    /// configuration whose branching is high while few of its successors are new.
    pub max_transitions: Option<u64>,
    /// Stop (at the next check point) when the engine's own accounting exceeds this.
    pub max_memory_bytes: Option<u64>,
    /// Store whole packed states in the visited set so fingerprint collisions are detected
    /// and resolved.
    pub exact: bool,
    /// Stop when a level ends and every property has a discovery (stateright's default).
    pub finish_when_all_discovered: bool,
    /// Called from the calling thread about every `progress_interval`.
    pub progress: Option<&'a (dyn Fn(&Progress) + Sync)>,
    /// Interval between progress callbacks (default 1 s).
    pub progress_interval: Duration,
    /// Called after every attempted step to collect which rules of the model it fired;
    /// see [`ExploreOptions::coverage`].
    pub coverage: Option<CoverageProbe>,
    /// Polled at every check point (about every 256 expanded states and every 20 ms while
    /// waiting): once it reads `true` the run stops as [`super::StopReason::Interrupted`].
    /// A signal handler sets it; see [`ExploreOptions::interrupt`].
    pub interrupt: Option<&'static AtomicBool>,
    /// Write checkpoints at level boundaries; see [`ExploreOptions::checkpoint`].
    pub checkpoint: Option<&'a CheckpointPlan>,
    /// Continue the run saved in this checkpoint; see [`ExploreOptions::resume_from`].
    pub resume: Option<&'a Checkpoint>,
}

impl<M: Model> Clone for ExploreOptions<'_, M> {
    fn clone(&self) -> Self {
        ExploreOptions {
            threads: self.threads,
            symmetry: self.symmetry,
            next_state_into: self.next_state_into,
            repeats: self.repeats,
            locality: self.locality,
            target_max_depth: self.target_max_depth,
            max_states: self.max_states,
            max_transitions: self.max_transitions,
            max_memory_bytes: self.max_memory_bytes,
            exact: self.exact,
            finish_when_all_discovered: self.finish_when_all_discovered,
            progress: self.progress,
            progress_interval: self.progress_interval,
            coverage: self.coverage,
            interrupt: self.interrupt,
            checkpoint: self.checkpoint,
            resume: self.resume,
        }
    }
}

impl<M: Model> Default for ExploreOptions<'_, M> {
    fn default() -> Self {
        ExploreOptions {
            threads: 1,
            symmetry: None,
            next_state_into: None,
            repeats: None,
            locality: None,
            target_max_depth: None,
            max_states: None,
            max_transitions: None,
            max_memory_bytes: None,
            exact: false,
            finish_when_all_discovered: false,
            progress: None,
            progress_interval: Duration::from_secs(1),
            coverage: None,
            interrupt: None,
            checkpoint: None,
            resume: None,
        }
    }
}

impl<'a, M: Model> ExploreOptions<'a, M> {
    /// Defaults: 1 thread, no symmetry, no limits, fingerprint mode, explore everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`ExploreOptions::threads`].
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets [`ExploreOptions::symmetry`].
    pub fn symmetry(mut self, canonical: Canonicalizer<M>) -> Self {
        self.symmetry = Some(canonical);
        self
    }

    /// Sets [`ExploreOptions::next_state_into`].
    ///
    /// `next_state` returns each successor by value, so a model whose state is a few hundred
    /// bytes of inline data pays for building a fresh value and moving it out, once per
    /// generated state (several times per distinct state). With this function the explorer
    /// keeps one successor value per worker and lets the model overwrite it. The result must
    /// be exactly `next_state`'s; the explorer's counts are then unchanged (the tests of
    /// MemTX's model compare both engines' counts with it in use).
    pub fn next_state_into(mut self, step: NextStateInto<M>) -> Self {
        self.next_state_into = Some(step);
        self
    }

    /// Sets [`ExploreOptions::repeats`]: a model whose environment offers several actions that
    /// the protocol makes into one (MemTX offers an external-action `Begin` at every isolation
    /// level and forces each to action-safe-read) says so, and the explorer counts such a
    /// repeat as the step it repeats (a generated successor, its rules fired) without taking
    /// it: no step, no packing, no fingerprint. Only consecutive actions are compared. The
    /// counts, coverage tallies and paths are exactly those of a run without it (a test
    /// compares both on MemTX's presets).
    pub fn repeats(mut self, repeats: Repeats<M>) -> Self {
        self.repeats = Some(repeats);
        self
    }

    /// Sets [`ExploreOptions::locality`]: a state's owner becomes a function of `key(bytes)`,
    /// `bytes` being its packed form (after symmetry), instead of its fingerprint. The
    /// explorer has packed every successor anyway, so a key that reads a few bytes costs a
    /// few loads.
    ///
    /// Every state belongs to one worker, which alone stores it and decides whether an
    /// arrival is new; a successor travels to its owner in a batch. By default the owner is
    /// drawn from the fingerprint, which spreads states evenly and at random, and so also
    /// splits the children of a state across the workers. That costs twice over:
    ///
    /// * a *diamond* (two actions that commute, reaching one state from two siblings) is
    ///   caught by the repeat filter only when one worker expands both siblings: on `paper`
    ///   two workers absorb 116 M records where one absorbs 90 M;
    /// * each worker's frontier loses one thread's order, in which consecutive states are
    ///   siblings and cousins: measured on one saved level of `paper`, the model's work per
    ///   state (unpack, invariants, actions, successors) took 19 % longer in a two-worker
    ///   frontier's order than in a one-worker frontier's order, because its branches
    ///   predict worse.
    ///
    /// A key that most actions leave unchanged keeps a state's successors, and so the
    /// siblings of a diamond, with the worker that expanded it. For MemTX it is the part of
    /// every record fixed when the record is created ([`memtx_model::packed::locality`]): on
    /// `paper` with two workers, 93 % of the successors a worker sends are then its own
    /// (half by fingerprint), the workers absorb 92 M records instead of 116 M (one worker
    /// absorbs 90 M), and the run takes about 6 % less wall time and 7 % less CPU time
    /// (medians of 8 interleaved runs).
    ///
    /// The key must take many values, evenly: the workers' shares are only as balanced as
    /// the states are spread over its values. It must be a function of the bytes alone
    /// (packing is canonical, so equal states get equal keys), or one state could be stored
    /// by two workers. Nothing
    /// else depends on it: keys in the visited set are still fingerprints, so counts,
    /// levels, verdicts and counterexamples are the same with or without it, on any number
    /// of threads. (One exception, as unlikely as the collision estimate every report
    /// prints: two different states with one fingerprint are merged when one worker owns
    /// both and kept apart when two do, so after such a collision the count could depend on
    /// the thread count.)
    ///
    /// Exact mode ignores it: there a state's key is the first free one along its
    /// fingerprint's probe sequence in the owner's table, and two different states with one
    /// fingerprint must therefore meet in one table to get different keys.
    pub fn locality(mut self, key: Locality) -> Self {
        self.locality = Some(key);
        self
    }

    /// The locality key that decides ownership: none in exact mode, which ignores it.
    pub(crate) fn locality_in_effect(&self) -> Option<Locality> {
        self.locality.filter(|_| !self.exact)
    }

    /// Sets [`ExploreOptions::target_max_depth`].
    pub fn target_max_depth(mut self, depth: usize) -> Self {
        self.target_max_depth = Some(depth);
        self
    }

    /// Sets [`ExploreOptions::max_states`].
    pub fn max_states(mut self, states: u64) -> Self {
        self.max_states = Some(states);
        self
    }

    /// Sets [`ExploreOptions::max_transitions`].
    pub fn max_transitions(mut self, transitions: u64) -> Self {
        self.max_transitions = Some(transitions);
        self
    }

    /// Sets [`ExploreOptions::max_memory_bytes`].
    pub fn max_memory_bytes(mut self, bytes: u64) -> Self {
        self.max_memory_bytes = Some(bytes);
        self
    }

    /// Sets [`ExploreOptions::exact`].
    pub fn exact(mut self, exact: bool) -> Self {
        self.exact = exact;
        self
    }

    /// Sets [`ExploreOptions::finish_when_all_discovered`].
    pub fn finish_when_all_discovered(mut self, finish: bool) -> Self {
        self.finish_when_all_discovered = finish;
        self
    }

    /// Sets [`ExploreOptions::coverage`]: `probe` is called right after every attempted
    /// step, refused ones included, and returns the set of the model's rules the step fired
    /// (one bit per rule) while forgetting them. The report then holds, per set, how many
    /// steps fired it and after how few steps it first did
    /// ([`super::ExploreReport::coverage`]); the checker turns that into per-rule coverage.
    pub fn coverage(mut self, probe: CoverageProbe) -> Self {
        self.coverage = Some(probe);
        self
    }

    /// Sets [`ExploreOptions::interrupt`]: the run stops soon after `flag` becomes true, with
    /// everything found so far reported as for any early stop.
    pub fn interrupt(mut self, flag: &'static AtomicBool) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// Sets [`ExploreOptions::checkpoint`]: at the first level boundary after `plan.every`
    /// since the last checkpoint (or the start), if the run continues, the whole state of the
    /// search is written to `plan.dir` ([`super::checkpoint`]). Not with exact mode
    /// ([`super::ExploreError::Checkpoint`]).
    pub fn checkpoint(mut self, plan: &'a CheckpointPlan) -> Self {
        self.checkpoint = Some(plan);
        self
    }

    /// Sets [`ExploreOptions::resume`]: instead of starting from the initial states, continue
    /// the run saved in `checkpoint` ([`super::load`]), on this run's thread count. The other
    /// options must be the saved run's (the caller keeps them, e.g. in
    /// [`CheckpointPlan::run`]); the result is then the uninterrupted run's: counts, levels,
    /// discoveries and their paths, coverage.
    pub fn resume_from(mut self, checkpoint: &'a Checkpoint) -> Self {
        self.resume = Some(checkpoint);
        self
    }

    /// Sets [`ExploreOptions::progress`] and [`ExploreOptions::progress_interval`].
    pub fn progress(mut self, callback: &'a (dyn Fn(&Progress) + Sync), every: Duration) -> Self {
        self.progress = Some(callback);
        self.progress_interval = every;
        self
    }
}
