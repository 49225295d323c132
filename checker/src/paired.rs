//! Two protocols driven by one sequence of operations, side by side: the paired comparison of
//! `reports/availability.md` (issue 35).
//!
//! Counting what each protocol executes over its own reachable states compares totals, not
//! decisions: the two protocols reach different states. Here one agent behaviour (a sequence of
//! operations) is played under both at once. A state of the product is the pair of states the
//! same operations lead to under the *left* protocol (the one judged, `memtx`) and the *right*
//! one (the one it is compared with). An operation is proposed when either side proposes it
//! and is a step of the product when both perform it; then the product goes on in lockstep.
//! Every attempted irreversible call is classified by what each side does with it:
//!
//! | outcome | left | right |
//! |---|---|---|
//! | [`Outcome::BothExecute`] | executes | executes |
//! | [`Outcome::LeftOnlyGate`] | executes | the action gate blocks it |
//! | [`Outcome::LeftOnlyDisabled`] | executes | not enabled (e.g. its support is not visible) |
//! | [`Outcome::RightOnlyGate`] | the action gate blocks it | executes |
//! | [`Outcome::RightOnlyDisabled`] | not enabled | executes |
//! | [`Outcome::NeitherExecutes`] | refuses | refuses |
//!
//! and any other operation that only one side performs ends the lockstep there
//! ([`Outcome::OtherLeftOnly`], [`Outcome::OtherRightOnly`]): after it the same operations
//! would no longer mean the same thing on both sides. A call executed under one side only
//! leads to a *parted* state with no successors, which the two "sometimes" properties
//! ([`LEFT_ONLY`], [`RIGHT_ONLY`]) find: the explorer's shortest path to it is the shortest
//! operation sequence whose last call one protocol executes and the other does not.
//!
//! Each outcome is counted once per distinct product state it is attempted from, through the
//! explorer's coverage probe ([`take_outcomes`]): the same counting as the per-protocol columns
//! of the report, over the product instead of one protocol. Nothing here judges the protocol:
//! both sides run the model's own step function; this only compares what they decide.

use crate::explore::{self, ExploreOptions, PackedState, Progress};
use memtx_model::machine::{candidate_ops, step_into};
use memtx_model::ops::Refusal;
use memtx_model::{Config, Op, State};
use stateright::{Model, Property};
use std::cell::Cell;
use std::time::Duration;

/// What the two sides did with one attempted operation (a bit of the coverage probe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    /// An irreversible call both sides execute.
    BothExecute = 0,
    /// An irreversible call the left side executes and the right side's action gate blocks.
    LeftOnlyGate = 1,
    /// An irreversible call the left side executes and the right side does not enable.
    LeftOnlyDisabled = 2,
    /// An irreversible call the right side executes and the left side's action gate blocks.
    RightOnlyGate = 3,
    /// An irreversible call the right side executes and the left side does not enable.
    RightOnlyDisabled = 4,
    /// An irreversible call neither side executes.
    NeitherExecutes = 5,
    /// Another operation only the left side performs (the lockstep ends).
    OtherLeftOnly = 6,
    /// Another operation only the right side performs (the lockstep ends).
    OtherRightOnly = 7,
}

impl Outcome {
    /// Every outcome, in bit order.
    pub const ALL: [Outcome; 8] = [
        Outcome::BothExecute,
        Outcome::LeftOnlyGate,
        Outcome::LeftOnlyDisabled,
        Outcome::RightOnlyGate,
        Outcome::RightOnlyDisabled,
        Outcome::NeitherExecutes,
        Outcome::OtherLeftOnly,
        Outcome::OtherRightOnly,
    ];
}

/// Where a product state stands: in lockstep, or just after a call one side executed alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Parting {
    /// Both sides performed every operation so far.
    #[default]
    Lockstep,
    /// The last operation was an irreversible call only the left side executed.
    LeftOnly,
    /// The last operation was an irreversible call only the right side executed.
    RightOnly,
}

/// A state of the product: the state of each side after the same operations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PairedState {
    /// The left protocol's state.
    pub left: State,
    /// The right protocol's state.
    pub right: State,
    /// Lockstep or parted.
    pub parting: Parting,
}

/// Name of the property that finds a call the left side executes alone.
pub const LEFT_ONLY: &str = "an irreversible call executes under the left protocol only";
/// Name of the property that finds a call the right side executes alone.
pub const RIGHT_ONLY: &str = "an irreversible call executes under the right protocol only";

/// The product of two configurations of one domain (they differ in their variant).
pub struct Paired {
    /// The protocol judged.
    pub left: Config,
    /// The protocol it is compared with.
    pub right: Config,
}

thread_local! {
    /// The outcomes of the step just attempted on this thread (bits of [`Outcome`]).
    static OUTCOMES: Cell<u128> = const { Cell::new(0) };
}

fn record(outcome: Outcome) {
    OUTCOMES.with(|o| o.set(o.get() | 1 << outcome as u8));
}

/// The coverage probe of a paired run: the outcomes of the step just attempted, cleared.
/// (The model's own rule firings are cleared too: they are not what a paired run counts.)
pub fn take_outcomes() -> u128 {
    let _ = memtx_model::rules::take_fired();
    OUTCOMES.with(|o| o.replace(0))
}

/// What one side did with an operation: performed it, blocked it at the gate, or not enabled.
fn side(cfg: &Config, pre: &State, op: &Op, post: &mut State) -> Result<(), Refusal> {
    post.clone_from(pre);
    step_into(cfg, pre, op, post)
}

impl Paired {
    /// The product's successor of `s` by `op` into `out`; `false` when it has none.
    fn step(&self, s: &PairedState, op: &Op, out: &mut PairedState) -> bool {
        if s.parting != Parting::Lockstep {
            return false;
        }
        let left = side(&self.left, &s.left, op, &mut out.left);
        let right = side(&self.right, &s.right, op, &mut out.right);
        let call = matches!(
            op,
            Op::CallTool {
                reversible: false,
                ..
            }
        );
        let parting = match (&left, &right) {
            (Ok(()), Ok(())) => {
                if call {
                    record(Outcome::BothExecute);
                }
                Parting::Lockstep
            }
            (Err(_), Err(_)) => {
                if call {
                    record(Outcome::NeitherExecutes);
                }
                return false;
            }
            (Ok(()), Err(why)) if call => {
                record(match why {
                    Refusal::Blocked(_) => Outcome::LeftOnlyGate,
                    _ => Outcome::LeftOnlyDisabled,
                });
                Parting::LeftOnly
            }
            (Err(why), Ok(())) if call => {
                record(match why {
                    Refusal::Blocked(_) => Outcome::RightOnlyGate,
                    _ => Outcome::RightOnlyDisabled,
                });
                Parting::RightOnly
            }
            (Ok(()), Err(_)) => {
                record(Outcome::OtherLeftOnly);
                return false;
            }
            (Err(_), Ok(())) => {
                record(Outcome::OtherRightOnly);
                return false;
            }
        };
        out.parting = parting;
        true
    }

    /// [`Model::next_state`] in place (the explorer's hot path).
    fn next_state_into(&self, s: &PairedState, op: Op, out: &mut PairedState) -> bool {
        self.step(s, &op, out)
    }
}

impl Model for Paired {
    type State = PairedState;
    type Action = Op;

    fn init_states(&self) -> Vec<PairedState> {
        vec![PairedState::default()]
    }

    /// Every operation either side proposes (once), from a state in lockstep.
    fn actions(&self, s: &PairedState, actions: &mut Vec<Op>) {
        if s.parting != Parting::Lockstep {
            return;
        }
        candidate_ops(&self.left, &s.left, actions);
        // The right side's proposals are appended to the same buffer (no allocation per
        // state) and those the left side already proposed are dropped, in order.
        let left = actions.len();
        candidate_ops(&self.right, &s.right, actions);
        let mut kept = left;
        for i in left..actions.len() {
            if !actions[..left].contains(&actions[i]) {
                actions.swap(kept, i);
                kept += 1;
            }
        }
        actions.truncate(kept);
    }

    fn next_state(&self, s: &PairedState, op: Op) -> Option<PairedState> {
        let mut out = s.clone();
        self.step(s, &op, &mut out).then_some(out)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::sometimes(LEFT_ONLY, |_, s| s.parting == Parting::LeftOnly),
            Property::<Self>::sometimes(RIGHT_ONLY, |_, s| s.parting == Parting::RightOnly),
        ]
    }
}

/// Encoded as the parting (one byte), the left state's length (two bytes, little-endian), the
/// left state's encoding, then the right state's.
impl PackedState for PairedState {
    fn pack(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[self.parting as u8, 0, 0]);
        self.left.pack(out);
        let len = u16::try_from(out.len() - start - 3)
            .expect("[memtx internal bug] a packed state longer than 64 KiB");
        out[start + 1..start + 3].copy_from_slice(&len.to_le_bytes());
        self.right.pack(out);
    }

    fn unpack(bytes: &[u8]) -> Option<Self> {
        let mut s = PairedState::default();
        s.unpack_into(bytes).then_some(s)
    }

    fn unpack_into(&mut self, bytes: &[u8]) -> bool {
        let Some((&[parting, l0, l1], rest)) = bytes.split_first_chunk::<3>() else {
            return false;
        };
        let Some((left, right)) = rest.split_at_checked(u16::from_le_bytes([l0, l1]) as usize)
        else {
            return false;
        };
        self.parting = match parting {
            0 => Parting::Lockstep,
            1 => Parting::LeftOnly,
            2 => Parting::RightOnly,
            _ => return false,
        };
        self.left.unpack_into(left) && self.right.unpack_into(right)
    }
}

/// The locality key of a product state: the left state's ([`memtx_model::packed::locality`]),
/// which most operations leave unchanged.
fn locality(bytes: &[u8]) -> u64 {
    let left = bytes
        .get(1..3)
        .map_or(0, |l| u16::from_le_bytes([l[0], l[1]]) as usize);
    memtx_model::packed::locality(bytes.get(3..3 + left).unwrap_or(&[]))
}

/// One outcome's count over a paired run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    /// Attempted operations with this outcome (distinct product state × operation).
    pub steps: u64,
    /// The fewest operations after which it first happened (0 if it never did).
    pub first_step: usize,
}

/// A shortest sequence of operations whose last call one protocol executes and the other
/// refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The operations, the last an irreversible call.
    pub ops: Vec<Op>,
    /// Why the protocol that does not execute the call refuses it (its gate's reply, or the
    /// part of the enabling condition that fails), as `memtx replay` says it.
    pub refusal: String,
}

/// What a paired run found.
#[derive(Clone, Debug)]
pub struct PairedOutcome {
    /// Distinct product states.
    pub states: u64,
    /// Per outcome, in [`Outcome::ALL`] order.
    pub counts: Vec<Count>,
    /// The shortest operation sequence whose last call the left side executes alone, if any.
    pub left_only: Option<Witness>,
    /// The shortest operation sequence whose last call the right side executes alone, if any.
    pub right_only: Option<Witness>,
}

impl PairedOutcome {
    /// The count of one outcome.
    pub fn count(&self, outcome: Outcome) -> Count {
        self.counts[outcome as usize]
    }
}

/// Explores the product of `left` and `right` exhaustively on `threads` threads (no symmetry).
/// An error if the run stopped early (interrupted): its counts would not be totals.
pub fn run(
    left: Config,
    right: Config,
    threads: usize,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
) -> Result<PairedOutcome, String> {
    let model = Paired { left, right };
    let mut options: ExploreOptions<'_, Paired> = ExploreOptions::new()
        .threads(threads)
        .next_state_into(Paired::next_state_into)
        .locality(locality)
        .coverage(take_outcomes)
        .interrupt(crate::interrupt::flag());
    if let Some(p) = progress {
        options = options.progress(p, Duration::from_millis(200));
    }
    let report = explore::explore(&model, &options)
        .map_err(|e| format!("[memtx internal bug] the paired run failed: {e}"))?;
    if let Some(why) = report.stopped_early {
        return Err(format!(
            "the paired run stopped early ({why}): its counts are not totals"
        ));
    }
    let tallies = report.coverage.clone().unwrap_or_default();
    let counts = Outcome::ALL
        .iter()
        .map(|&o| {
            tallies.iter().find(|t| t.bit == o as u8).map_or(
                Count {
                    steps: 0,
                    first_step: 0,
                },
                |t| Count {
                    steps: t.steps,
                    first_step: t.first_step,
                },
            )
        })
        .collect();
    let witness = |name: &str, refuses: &Config| -> Result<Option<Witness>, String> {
        let Some(d) = report.discovery(name) else {
            return Ok(None);
        };
        let ops: Vec<Op> = d.path.iter().filter_map(|(_, op)| op.clone()).collect();
        Ok(Some(Witness {
            refusal: refusal_of_last(refuses, &ops)?,
            ops,
        }))
    };
    let left_only = witness(LEFT_ONLY, &model.right)?;
    let right_only = witness(RIGHT_ONLY, &model.left)?;
    Ok(PairedOutcome {
        states: report.unique_states,
        counts,
        left_only,
        right_only,
    })
}

/// Replays `ops` under `cfg`, which must perform every operation but the last and refuse that
/// one: why it refuses it.
fn refusal_of_last(cfg: &Config, ops: &[Op]) -> Result<String, String> {
    let mut s = State::initial();
    for (i, op) in ops.iter().enumerate() {
        match memtx_model::machine::step(cfg, &s, op) {
            Ok(next) if i + 1 < ops.len() => s = next,
            Err(why) if i + 1 == ops.len() => return Ok(why.to_string()),
            _ => break,
        }
    }
    Err(
        "[memtx internal bug] a paired run's witness does not replay as the product found it"
            .to_string(),
    )
}
