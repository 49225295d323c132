//! Rule coverage: every rule of the protocol (docs/protocol.md §3–§8) with a stable id, and the
//! cheap record of which rules a step exercised.
//!
//! "Exhaustive" is only worth what the enumerated domain lets happen: a check that never
//! lets the evidence check fail proves nothing about it. So each rule of the protocol has an
//! entry in [`RULES`] (one lifecycle row, one operation's effect, one part of an enabling
//! condition, one pipeline outcome or reason code, one conflict sub-case, one gate condition
//! or block reason, one repair type, one audit entry kind), and the code that implements the
//! rule calls [`fire`] at the moment the rule decides something. The explorer collects, per
//! transition, the set of rules that fired ([`take_fired`]) and reports how often each rule
//! fired and at which depth it first did: TLC's per-action coverage, over the protocol's own
//! rules.
//!
//! The ids are stable (reports, the suite and `docs/protocol.md` refer to them); a new rule
//! gets a new id, and the id of a rule that goes away is not reused.
//!
//! What "fired" means by family:
//!
//! * `life.*`: a record took that row of the lifecycle table;
//! * `op.*`: the operation was performed (a transition);
//! * `enable.*`: the operation was **refused** because that part of its enabling condition does
//!   not hold (every failing part fires, not only the first: the parts are independent rules);
//! * `pipe.*`, `gate.*`, `cascade.*`, `audit.*`: that outcome, block, repair or log entry
//!   happened, inside an attempted step (a blocked irreversible call is not a transition, but
//!   its block reason fires).
//!
//! Collection is a thread-local bit set (one `or` per firing): a step cannot report what it
//! did through `stateright::Model::next_state`, and threading a collector through every rule
//! would put a parameter on every function of the protocol for the sake of the checker.

use std::cell::Cell;

/// How many rules the table may hold (the bit set is a `u128`).
pub const MAX_RULES: usize = 128;

/// The set of rules a step fired, one bit per [`Rule`] (bit `r as u8`).
pub type Fired = u128;

thread_local! {
    static FIRED: Cell<Fired> = const { Cell::new(0) };
}

/// Records that `rule` fired in the step being taken on this thread.
#[inline(always)]
pub fn fire(rule: Rule) {
    FIRED.with(|f| f.set(f.get() | (1u128 << rule as u8)));
}

/// The rules fired on this thread since the last call, and forgets them.
#[inline(always)]
pub fn take_fired() -> Fired {
    FIRED.with(|f| f.replace(0))
}

/// The family of a rule: which part of the protocol it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// A row of the lifecycle table (§3).
    Lifecycle,
    /// An operation's effect (§5).
    Operation,
    /// A part of an operation's enabling condition, firing when it refuses (§5).
    Enabling,
    /// A commit-pipeline outcome or reason code, or a conflict sub-case (§6).
    Pipeline,
    /// An action-gate condition or block reason (§7).
    Gate,
    /// A repair type of the cascade (§8).
    Cascade,
    /// An audit entry kind of the rollback log (§8).
    Audit,
}

/// One row of the rule table.
#[derive(Debug)]
pub struct RuleDef {
    /// The rule.
    pub rule: Rule,
    /// Stable id, `family.name`.
    pub id: &'static str,
    /// Family.
    pub family: Family,
    /// docs/protocol.md section.
    pub section: &'static str,
    /// The rule as a sentence. For `enable.*` rules, the reason a refused operation gives.
    pub statement: &'static str,
    /// The function that implements it (`module::function`).
    pub implemented_by: &'static str,
    /// The properties that judge it (keys).
    pub judged_by: &'static [&'static str],
}

macro_rules! rules {
    ($( $variant:ident = $id:literal, $family:ident, $section:literal, $impl:literal, [$($judge:literal),*], $statement:literal; )*) => {
        /// Every rule of the protocol, in table order (see [`RULES`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum Rule {
            $(
                #[doc = $statement]
                $variant,
            )*
        }
        /// The rule table: one row per [`Rule`], in declaration order.
        pub const RULES: &[RuleDef] = &[
            $(
                RuleDef {
                    rule: Rule::$variant,
                    id: $id,
                    family: Family::$family,
                    section: $section,
                    statement: $statement,
                    implemented_by: $impl,
                    judged_by: &[$($judge),*],
                },
            )*
        ];
    };
}

rules! {
    // §3 lifecycle: one rule per row of the table.
    LifeStage = "life.stage", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Raw -> Tentative: a raw observation is adopted into a transaction";
    LifeValidate = "life.validate", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Tentative -> Validated: the record passed the commit pipeline";
    LifeCommit = "life.commit", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Validated -> Committed: commit";
    LifeActionSafe = "life.action-safe", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Committed -> ActionSafe: commit inside an external-action transaction";
    LifeQuarantine = "life.quarantine", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Tentative, Validated -> Quarantined: a failed check";
    LifeRequeue = "life.requeue", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Quarantined -> Tentative: re-validation or rebuild";
    LifeReviewKeep = "life.review-keep", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "Quarantined -> Validated: Resolve(keep)";
    LifeSupersede = "life.supersede", Lifecycle, "§3", "state::State::move_record", ["I4", "I12"],
        "Committed, ActionSafe -> Superseded: a rival wins adjudication";
    LifeRevoke = "life.revoke", Lifecycle, "§3", "state::State::move_record", ["I4"],
        "any but Revoked -> Revoked: abort, revocation or cascade";
    LifeRequarantine = "life.requarantine", Lifecycle, "§3", "state::State::move_record", ["I4", "I2"],
        "Committed, ActionSafe, Quarantined -> Quarantined: cascade on a derived view, or (revision 3.1) scope review of a narrower rival";

    // §5 operations: the effect of each, when performed.
    OpTick = "op.tick", Operation, "§5", "ops::tick", ["I11"],
        "Tick advances the logical clock";
    OpObserve = "op.observe", Operation, "§5", "ops::write::observe", ["I5"],
        "Observe records a Raw belief outside any transaction";
    OpBegin = "op.begin", Operation, "§5", "ops::txn::begin", ["I5", "I14"],
        "Begin opens a transaction and captures its snapshot";
    OpBeginForcedIsolation = "op.begin.forced-isolation", Operation, "§4", "ops::txn::begin", ["I14"],
        "an external-action Begin that asked for a weaker isolation level reads at action-safe-read";
    OpStage = "op.stage", Operation, "§5", "ops::write::stage", ["I5"],
        "Stage adds a Tentative record to the agent's transaction";
    OpAdopt = "op.adopt", Operation, "§5", "ops::write::adopt", ["I5", "I1"],
        "Adopt stages a visible Raw record into the agent's transaction";
    OpCommit = "op.commit", Operation, "§5", "ops::txn::commit", ["I6", "I7", "I10", "I11", "I13"],
        "Commit runs the pipeline over the staged records and closes the transaction";
    OpAbort = "op.abort", Operation, "§5", "ops::txn::abort", ["I2"],
        "Abort retracts every staged record (with cascade) and closes the transaction";
    OpCallReversible = "op.call-reversible", Operation, "§5", "ops::write::call_tool", ["I2", "I5"],
        "a reversible tool call executes (no gate)";
    OpCallIrreversible = "op.call-irreversible", Operation, "§5", "ops::write::call_tool", ["I1", "I9"],
        "an irreversible tool call passes the gate and executes";
    OpRequestRevocation = "op.request-revocation", Operation, "§5", "ops::repair::request_revocation", ["I9"],
        "RequestRevocation marks a committed record pending revocation";
    OpApplyRevocation = "op.apply-revocation", Operation, "§5", "ops::repair::apply_revocation", ["I2", "I8"],
        "ApplyRevocation revokes a pending record and cascades";
    OpRevalidate = "op.revalidate", Operation, "§5", "ops::repair::revalidate", ["I4"],
        "Revalidate stages a quarantined belief again in its owner's transaction";
    OpRebuild = "op.rebuild", Operation, "§5", "ops::repair::rebuild", ["I2"],
        "Rebuild stages a quarantined view again from its active parents";
    OpResolveKeep = "op.resolve-keep", Operation, "§5", "ops::repair::resolve", ["I7", "I12", "I13"],
        "Resolve(keep) commits a reviewed record and supersedes the rivals it wins against";
    OpResolveReject = "op.resolve-reject", Operation, "§5", "ops::repair::resolve", ["I2"],
        "Resolve(reject) revokes a reviewed record and cascades";
    OpRead = "op.read", Operation, "§5", "ops::session::read", ["I5"],
        "Read (revision 3) serves a visible record to the agent: it joins the transaction's read set and the agent's context";
    OpEndSession = "op.end-session", Operation, "§5", "ops::session::end_session", [],
        "EndSession (revision 3) clears the agent's context: a new session, the prompt is gone";

    // §5 enabling conditions: each part fires when it refuses the operation.
    EnTickBound = "enable.tick.clock-bound", Enabling, "§5", "ops::tick", [],
        "the clock is at its bound";
    EnObserveFree = "enable.observe.free-id", Enabling, "§5", "ops::free_record", [],
        "no free record id";
    EnBeginOpen = "enable.begin.txn-open", Enabling, "§5", "ops::txn::begin", [],
        "the agent already has an open transaction";
    EnStageNoTxn = "enable.stage.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to stage in";
    EnStageFree = "enable.stage.free-id", Enabling, "§5", "ops::free_record", [],
        "no free record id to stage";
    EnStageViewParent = "enable.stage.view-parent", Enabling, "§5", "ops::write::stage", [],
        "a view needs at least one parent";
    EnStageParentVisible = "enable.stage.parent-visible", Enabling, "§4", "ops::write::parents_readable", ["I5"],
        "a declared parent is not visible to the transaction";
    EnStageParentRevoked = "enable.stage.parent-revoked", Enabling, "§4", "ops::write::parents_readable", ["I2"],
        "a declared parent is Revoked (branch states are never visible)";
    EnStageParentAction = "enable.stage.parent-action", Enabling, "§2", "ops::write::parents_readable", [],
        "a tool action cannot be a parent (nothing is derived from an effect)";
    EnAdoptNoTxn = "enable.adopt.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to adopt into";
    EnAdoptNotRaw = "enable.adopt.not-raw", Enabling, "§5", "ops::write::adopt", ["I4"],
        "only a Raw record can be adopted";
    EnAdoptNotVisible = "enable.adopt.not-visible", Enabling, "§4", "ops::write::adopt", ["I5"],
        "the Raw record is not visible to the transaction";
    EnCommitNoTxn = "enable.commit.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to commit";
    EnAbortNoTxn = "enable.abort.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to abort";
    EnCallNoTxn = "enable.call.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to call a tool from";
    EnCallFree = "enable.call.free-id", Enabling, "§5", "ops::free_record", [],
        "no free record id for the tool action";
    EnCallSupportVisible = "enable.call.support-visible", Enabling, "§4", "ops::write::call_tool", ["I5"],
        "a declared support record is not visible to the transaction";
    EnCallSupportAction = "enable.call.support-action", Enabling, "§2", "ops::write::call_tool", [],
        "a tool action cannot support a call";
    EnCallReversibleNotInForce = "enable.call.reversible-not-in-force", Enabling, "§7", "ops::write::call_tool", ["I2"],
        "a reversible call's support is not in force (not Committed or ActionSafe)";
    EnRequestAction = "enable.request.action", Enabling, "§5", "ops::repair::request_revocation", [],
        "tool actions are repaired by cascade, not revoked";
    EnRequestNotCommitted = "enable.request.not-committed", Enabling, "§5", "ops::repair::request_revocation", [],
        "only a Committed or ActionSafe record can be revoked";
    EnRequestPending = "enable.request.pending", Enabling, "§5", "ops::repair::request_revocation", [],
        "a revocation is already pending";
    EnApplyNotPending = "enable.apply.not-pending", Enabling, "§5", "ops::repair::apply_revocation", [],
        "no revocation is pending";
    EnRevalidateNotBelief = "enable.revalidate.not-belief", Enabling, "§5", "ops::repair::revalidate", [],
        "only a belief is revalidated (views are rebuilt)";
    EnRevalidateNotQuarantined = "enable.revalidate.not-quarantined", Enabling, "§5", "ops::repair::revalidate", ["I4"],
        "only a Quarantined record is revalidated";
    EnRevalidateAncestor = "enable.revalidate.ancestor-inactive", Enabling, "§5", "ops::repair::revalidate", ["I13"],
        "an ancestor is not active";
    EnRevalidateNoTxn = "enable.revalidate.no-txn", Enabling, "§5", "ops::repair::restage", [],
        "the owner has no open transaction to revalidate in";
    EnRebuildNotView = "enable.rebuild.not-view", Enabling, "§5", "ops::repair::rebuild", [],
        "only a view is rebuilt";
    EnRebuildNotQuarantined = "enable.rebuild.not-quarantined", Enabling, "§5", "ops::repair::rebuild", ["I4"],
        "only a Quarantined view is rebuilt";
    EnRebuildNoParent = "enable.rebuild.no-active-parent", Enabling, "§5", "ops::repair::rebuild", ["I2"],
        "no parent of the view is active";
    EnRebuildNoTxn = "enable.rebuild.no-txn", Enabling, "§5", "ops::repair::restage", [],
        "the owner has no open transaction to rebuild in";
    EnResolveNotReview = "enable.resolve.not-review", Enabling, "§5", "ops::repair::resolve", [],
        "only a record quarantined for review (or, revision 3, scope review) is resolved";
    EnKeepExpired = "enable.keep.expired", Enabling, "§5", "ops::repair::keep_refusals", ["I11"],
        "keep: the record is not valid now";
    EnKeepLineage = "enable.keep.lineage", Enabling, "§5", "ops::repair::keep_refusals", ["I13"],
        "keep: an ancestor is inactive, or (revision 3) not yet committed";
    EnKeepPermission = "enable.keep.permission", Enabling, "§5", "ops::repair::keep_refusals", ["I3"],
        "keep: the scope is wider than the narrowest ancestor's (permission laundering)";
    EnKeepUnstable = "enable.keep.unstable", Enabling, "§5", "ops::repair::keep_refusals", ["I13"],
        "keep: an ancestor is pending revocation";
    EnKeepStale = "enable.keep.stale", Enabling, "§5", "ops::repair::keep_refusals", ["I7"],
        "keep: a rival was committed after the staging transaction's snapshot (stale late write)";
    EnKeepOutranked = "enable.keep.outranked", Enabling, "§5", "ops::repair::keep_refusals", ["I12"],
        "keep: a rival of higher authority stands";
    EnKeepWiderRival = "enable.keep.wider-rival", Enabling, "§5", "ops::repair::keep_refusals", ["I17"],
        "keep (revision 3): a rival wider in scope stands; to contest a shared truth, write a record as wide";
    EnReadNoTxn = "enable.read.no-txn", Enabling, "§5", "ops::open_txn", [],
        "the agent has no open transaction to read in";
    EnReadNotVisible = "enable.read.not-visible", Enabling, "§4", "ops::session::read", ["I5"],
        "the record is not visible to the transaction";
    EnReadContentNotPermitted = "enable.read.content-not-permitted", Enabling, "§4", "ops::session::read", ["I15"],
        "revision 3.2: a record of its content is one the agent may not see (visibility needs the whole content permitted)";
    EnReadAction = "enable.read.action", Enabling, "§2", "ops::session::read", [],
        "a tool action is an effect, not content to read";
    EnEndSessionTxnOpen = "enable.end-session.txn-open", Enabling, "§5", "ops::session::end_session", [],
        "the agent has an open transaction (a session ends between transactions)";
    EnEndSessionEmpty = "enable.end-session.empty", Enabling, "§5", "ops::session::end_session", [],
        "the agent's context is already empty";

    // §6 the commit pipeline.
    PipeEvidenceFail = "pipe.evidence.fail", Pipeline, "§6.1", "pipeline::check_evidence", ["I10"],
        "evidence: confidence < 0.6 and authority < 0.9 -> Quarantined(evidence)";
    PipeEvidenceByAuthority = "pipe.evidence.by-authority", Pipeline, "§6.1", "pipeline::check_evidence", ["I10"],
        "evidence: a low-confidence write passes on its source's authority (>= 0.9)";
    PipeValidityFail = "pipe.validity.fail", Pipeline, "§6.2", "pipeline::check_validity", ["I11"],
        "validity: now outside [from, until) -> Quarantined(expired)";
    PipeConflictStale = "pipe.conflict.stale", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I7"],
        "conflict: a rival committed after the snapshot -> aborted as a stale late write";
    PipeConflictOutranked = "pipe.conflict.outranked", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I6", "I12"],
        "conflict: a rival of higher authority -> aborted";
    PipeConflictReview = "pipe.conflict.review", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I6", "I12"],
        "conflict: an equal-authority rival from another source -> Quarantined(review)";
    PipeConflictSupersede = "pipe.conflict.supersede-lower", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I6", "I12"],
        "conflict: a rival of lower authority is superseded";
    PipeConflictCorrection = "pipe.conflict.correction", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I6", "I12"],
        "conflict: an older record of the same source is superseded (a correction)";
    PipeConflictDisjoint = "pipe.conflict.disjoint", Pipeline, "§6.3", "pipeline::rivals", ["I6"],
        "conflict: a contradicting record with non-overlapping validity coexists";
    PipeConflictHiddenRival = "pipe.conflict.hidden-rival", Pipeline, "§6.3", "pipeline::rivals", ["I6", "I17"],
        "scope non-interference (a): a contradicting record its writer may not see is no rival (neither aborts, outranks nor sends to review)";
    PipeConflictWiderRival = "pipe.conflict.wider-rival", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I17"],
        "scope non-interference (b): the record would displace a rival wider than itself -> Quarantined(scope-review)";
    PipeConflictNarrowerReview = "pipe.conflict.narrower-rival-review", Pipeline, "§6.3", "pipeline::hidden_narrower_rivals", ["I6", "I17"],
        "scope non-interference (c): a narrower rival its writer may not see -> Quarantined(scope-review) for its owner when the record commits";
    PipeConflictStaleContent = "pipe.conflict.stale-content", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I16"],
        "provenance follows content (iii): a rival committed after the observation of what the record asserts -> aborted (a retried stale write)";
    PipeConflictSeveral = "pipe.conflict.several", Pipeline, "§6.3", "pipeline::check_semantic_conflict", ["I7", "I12"],
        "conflict: several rivals with different outcomes are judged together and the outcomes rank";
    PipeLineageRevoked = "pipe.lineage.revoked", Pipeline, "§6.3", "pipeline::check_lineage", ["I2", "I13"],
        "lineage: a Revoked ancestor -> aborted and cascaded";
    PipeLineageInactive = "pipe.lineage.inactive", Pipeline, "§6.3", "pipeline::check_lineage", ["I13"],
        "lineage: a Superseded or Quarantined parent -> Quarantined(inactive-parent)";
    PipeLineageUncommitted = "pipe.lineage.uncommitted-parent", Pipeline, "§6.3", "pipeline::check_lineage", ["I13", "I18"],
        "lineage over committed parents: an ancestor still Raw, Tentative or Validated -> Quarantined(uncommitted-parent)";
    PipePermissionFail = "pipe.permission.fail", Pipeline, "§6.3", "pipeline::check_permission_inheritance", ["I3"],
        "permission inheritance: a scope wider than the narrowest ancestor's -> Quarantined(permission)";
    PipePermissionContent = "pipe.permission.content", Pipeline, "§6.3", "pipeline::check_permission_inheritance", ["I15"],
        "provenance follows content (i): an agent permitted to see the record may not see a record of its content -> Quarantined(content-permission)";
    PipeStabilityFail = "pipe.stability.fail", Pipeline, "§6.4", "pipeline::check_dependency_stability", ["I13"],
        "dependency stability: an ancestor pending revocation -> Quarantined(unstable-dependency)";
    PipePassCommitted = "pipe.pass.committed", Pipeline, "§6", "ops::txn::promote", ["I10", "I11", "I13"],
        "every check passed -> Committed, with the next commit sequence number";
    PipePassActionSafe = "pipe.pass.action-safe", Pipeline, "§6", "ops::txn::promote", ["I1"],
        "every check passed inside an external-action transaction -> ActionSafe";
    PipeDeferredEffect = "pipe.deferred-effect", Pipeline, "§6", "ops::txn::commit", ["I12"],
        "a record that fails a later check leaves the rivals it would have won against untouched";

    // §7 the action gate.
    GateInFlight = "gate.block.in-flight", Gate, "§7.1", "gate::check_no_tentative_in_flight", ["I1"],
        "condition 1: a Tentative record outside the snapshot is in flight";
    GateNoActionSafe = "gate.block.no-action-safe", Gate, "§7.2", "gate::check_action_safe_support", ["I1"],
        "condition 2: the external-action snapshot holds no ActionSafe record";
    GateNoPermittedActionSafe = "gate.block.no-permitted-action-safe", Gate, "§7.2", "gate::check_action_safe_support", ["I17"],
        "condition 2: the snapshot's only ActionSafe records are ones the caller may not see";
    GateSupportNotActionSafe = "gate.block.support-not-action-safe", Gate, "§7.2", "gate::check_action_safe_support", ["I1"],
        "condition 2 (strong form): a support record is not ActionSafe";
    GateSupportExpired = "gate.block.support-expired", Gate, "§7", "gate::check_support_in_force", ["I1", "I18"],
        "a support record is not valid now (in force includes valid now, in every tier; rev2-lineage: the strong form only)";
    GateSupportNotInForce = "gate.block.support-not-in-force", Gate, "§7", "gate::check_support_in_force", ["I1", "I2", "I9"],
        "a support record is not in force (staged, quarantined, superseded, revoked or pending revocation)";
    GateUnstableSupport = "gate.block.unstable-support", Gate, "§7", "gate::check_support_stable", ["I9"],
        "an ancestor of a support record is pending revocation";
    GateAncestorNotInForce = "gate.block.ancestor-not-in-force", Gate, "§7", "gate::check_ancestors_in_force", ["I18"],
        "an ancestor of a support record is not in force (not committed, or not valid now), in every tier";
    GatePassWeak = "gate.pass.weak", Gate, "§7", "gate::check", ["I1"],
        "the weak form (low and medium tiers) lets an irreversible call through";
    GatePassStrong = "gate.pass.strong", Gate, "§7", "gate::check", ["I1"],
        "the strong form (external-action) lets an irreversible call through";

    // §8 typed cascading repair and the rollback log.
    CascadeRevokeBelief = "cascade.revoke-belief", Cascade, "§8", "cascade::apply_repair", ["I2"],
        "a descendant belief is Revoked";
    CascadeQuarantineView = "cascade.quarantine-view", Cascade, "§8", "cascade::apply_repair", ["I2"],
        "a descendant view is Quarantined for rebuild";
    CascadeCompensate = "cascade.compensate", Cascade, "§8", "cascade::apply_repair", ["I2", "I8"],
        "a descendant reversible action is compensated";
    CascadeLeak = "cascade.leak", Cascade, "§8", "cascade::apply_repair", ["I2", "I8", "I9"],
        "a descendant irreversible action is recorded as leaked";
    CascadeBelowView = "cascade.below-view", Cascade, "§8", "cascade::retract", ["I2"],
        "the walk continues below a quarantined view";
    CascadeStagedDescendant = "cascade.staged-descendant", Cascade, "§8", "cascade::retract", ["I2"],
        "a staged record of another open transaction is repaired";
    AuditRetracted = "audit.retracted", Audit, "§8", "state::State::log_repair", ["I8"],
        "the rollback log records a retraction (root)";
    AuditRevoked = "audit.revoked", Audit, "§8", "state::State::log_repair", ["I8"],
        "the rollback log records a revoked descendant";
    AuditQuarantined = "audit.quarantined", Audit, "§8", "state::State::log_repair", ["I8"],
        "the rollback log records a quarantined view";
    AuditCompensated = "audit.compensated", Audit, "§8", "state::State::log_repair", ["I8"],
        "the rollback log records a compensation";
    AuditLeaked = "audit.leaked", Audit, "§8", "state::State::log_repair", ["I8"],
        "the rollback log records a leak";
}

impl Rule {
    /// This rule's row of [`RULES`].
    pub fn def(self) -> &'static RuleDef {
        &RULES[self as usize]
    }
    /// Its stable id.
    pub fn id(self) -> &'static str {
        self.def().id
    }
    /// The reason a refused operation gives (the statement of an `enable.*` rule).
    pub fn statement(self) -> &'static str {
        self.def().statement
    }
}

/// Looks a rule up by its stable id.
pub fn find(id: &str) -> Option<&'static RuleDef> {
    RULES.iter().find(|r| r.id == id)
}

/// The rules in a fired set, in table order.
pub fn in_set(fired: Fired) -> impl Iterator<Item = &'static RuleDef> {
    RULES
        .iter()
        .filter(move |r| fired & (1u128 << r.rule as u8) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_declaration_order_with_unique_ids() {
        assert!(RULES.len() <= MAX_RULES);
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.rule as usize, i, "{} is out of order", r.id);
            let family = r.id.split('.').next().unwrap_or_default();
            let expected = match r.family {
                Family::Lifecycle => "life",
                Family::Operation => "op",
                Family::Enabling => "enable",
                Family::Pipeline => "pipe",
                Family::Gate => "gate",
                Family::Cascade => "cascade",
                Family::Audit => "audit",
            };
            assert_eq!(family, expected, "{} has the wrong family prefix", r.id);
        }
        for (i, a) in RULES.iter().enumerate() {
            assert!(
                RULES[i + 1..].iter().all(|b| b.id != a.id),
                "duplicate id {}",
                a.id
            );
        }
    }

    #[test]
    fn firing_sets_bits_and_take_clears_them() {
        let _ = take_fired();
        fire(Rule::OpTick);
        fire(Rule::AuditLeaked);
        let fired = take_fired();
        let ids: Vec<_> = in_set(fired).map(|r| r.id).collect();
        assert_eq!(ids, ["op.tick", "audit.leaked"]);
        assert_eq!(take_fired(), 0);
    }
}
