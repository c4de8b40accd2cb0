//! Bulk recovery with variables' values in stages ([`recover_with_values`]),
//! so that many values never multiply into one product.
//!
//! A core of a real program gives tens of value constraints
//! ([`crate::report::LastWrite`]); each is a small automaton, but the
//! product of 25 of them with the rest of a report does not fit (bzip2
//! with a coverage core: over two minutes, then limits). Values are mostly
//! local facts, so:
//!
//! 1. the report without values is recovered (labels `L0`, sound for the
//!    whole report, which is stronger);
//! 2. each value is simplified with `L0`: writes that never run leave it;
//!    one whose bad writes never run (and whose need a good write that
//!    surely runs meets) is already satisfied and leaves the report; one
//!    whose every node is decided by `L0` is not staged
//!    (`reads_only_decided`: such stages decided nothing on the harness's
//!    cores and were its slowest; counted as `values_skipped_decided`);
//!    with the Local lift after the stages ([`Staging::lifted`]), a
//!    local of a function that may have run other activations is left to
//!    its frame's Local walk (`local::walked_locals`: it constrains only
//!    the pending activation, whose Local-Yes nodes the lift feeds back;
//!    counted as `values_left_to_frames`);
//! 3. the rest are recovered in groups of at most [`GROUP`], each group
//!    with the whole report without the other values, at most
//!    [`MAX_GROUPS`] groups (the values beyond are dropped and listed).
//!    Values that rule out a store come first; of those known only from
//!    branch tests, [`MAX_TEST_ONLY`] or more within a budget are staged
//!    ([`TEST_ONLY_NODES`]; on a plain SQLite
//!    core 10 such global values took the value stages from 0.9 s to
//!    5.8 s and decided 28 more nodes of 92,035);
//!    One value per group: on bzip2's function-flag core (19 values left)
//!    groups of 4 took 274 s (the products did not fit and ran into the
//!    limits), groups of 1 take 10 s with the same labels;
//! 4. the labels are merged: every run's labels are sound for a weaker
//!    report than the whole one, so each decided label holds; a group that
//!    finds its values impossible with the rest, or whose labels
//!    contradict those of an earlier group, is dropped and listed (the
//!    values contradict the report: memory the graph cannot explain).
//!
//! Sound, and exact for each group; what joint reasoning over values of
//! different groups would add is given up.
//!
//! Stack residue ([`Report::residue`]: "one of these call sites ran") is a
//! stage between 1 and 2: each set that the labels without values do not
//! already satisfy (a Yes node in it) and do not rule out (every node No:
//! dropped and listed) becomes a single-element `obsYes` trace, all of
//! them in one recovery; if that recovery is impossible or fails, every
//! residue set is dropped and listed, and the labels stay those without
//! it. Otherwise the report with residue is the base the values are
//! staged on. So residue never makes a report impossible. First, though
//! ([`Staging::residue_at_once`]), the report with every residue set is
//! recovered in one go: when that succeeds with nothing weakened it
//! stands for both stages (one recovery instead of two); otherwise the
//! stages run as above.
//!
//! **Marked evidence** ([`Staging::marked`], what `analyze` does; the
//! reference [`recover_with_values`] and `--full-evidence` recover as
//! above). Residue and the Local lift say that nodes ran. Instead of a
//! whole recovery with them as observations, what that implies is marked
//! in the labels ([`crate::local::Implied`]): the node and its activation
//! dominators ran; a call before it (or the node itself, when no pending
//! call can be it: [`known_stack`]) whose only way on is through its one
//! callee ran what every completed activation of that callee runs; in a
//! function that runs once, the nodes neither before nor after it in the
//! activation did not run; and then (`mark`) every node no path from the
//! start reaches over nodes that are not No did not run either (this also
//! closes the merged labels of the stages, which each left some such
//! nodes Maybe). Marks that contradict the labels or cut off the crash
//! stack drop the evidence, listed, as a recovery that finds it
//! impossible does. The values are then staged on the report without the
//! residue. On the harness's bzip2 and Lua cores this took Lua's plain
//! cores from 0.22-0.35 s to 0.12-0.22 s (whole process) and bzip2's
//! from 0.24-0.33 s to 0.13-0.17 s, with as many labels or more (the
//! closure decides nodes the recoveries left open; a few that only joint
//! reasoning with the residue decides are lost).
//!
//! A value that needs a write ([`LastWrite::need`]: not the variable's
//! first value) is evidence of the same kind: one of its good writes ran.
//! It is marked so too, before the value stages (`mark_needs`), and the
//! writes and the function entries that marks make Yes join the
//! residue's refinement. On SQLite's plain core the 98 labels of a
//! global list head's stage (268,000 states, never within the time
//! budget) come from that instead, in the same refinement pass.
//!
//! **Hints** ([`Staging::hints`], on by default). Every stage's report is
//! stronger than the one its base labels came from (the report without
//! values for residue, the report with residue for each value), so those
//! labels are sound for it, and each stage is run with
//! [`Solver::recover_hinted`]: the context-sensitive bulk pass then skips
//! the candidates they already decide (each stage's pass spends its work
//! budget on the same first candidates; most of them stay Maybe, so this
//! saves a part of a stage, not all of it). Its labels, merged, are never
//! less decided than without hints; the test
//! `staged_hints_keep_the_labels` compares both on random reports.
//!
//! **Refined hints** ([`Staging::lean`], on by default; issue 35). A
//! value stage adds one small automaton to a report whose labels the
//! hint already holds, so most of a whole recovery repeats the base's:
//! FSA's products, UTL, the frame graph. Each value stage instead
//! refines the hint ([`Solver::refine_hint`]: with `best`, the
//! context-sensitive bulk pass alone, with the value's automaton), and
//! recovers only where that pass gives no answer of its own (no
//! consistent valid path: then the whole stage decides, as before,
//! whether the value contradicts the report). The pass checks the
//! evidence it does not track as automata: every Yes node of the hint
//! must have a live state, and the report's observed nodes pairwise
//! (`cs::bulk`'s lean `apart`); a value that contradicts only three or
//! more observations jointly is not found out, where FSA's product
//! would drop it. Its known nodes are the report's observed ones, not
//! every Yes node of the hint (those its own recovery used): on SQLite
//! each stage took 3-4x longer with them, for no label of its value.
//! The residue's marks get one such refinement ([`refine_marked`], the
//! residue's call sites known to run): what runs on every path through
//! them (541 labels on SQLite's plain core, more than half of Lua's
//! evidence labels), which the first value stage found before, with the
//! hint's every Yes node known. On the harness's 36 cores this kept 96.9%
//! of the labels every value decides (93.3% before) in 2.2x the base's
//! time (2.4x), geometric means; SQLite's plain core 1.7x (2.6x), 93% of
//! the labels (76%).
//!
//! **Lifted explorations** ([`Staging::lift`], on by default; issue 35's
//! incremental recovery). The residue's refinement and every value
//! stage refine the base report (the latter with one automaton more)
//! over the graph without the hint's No nodes, a superset of those the
//! base recovery's own bulk pass left out: its exploration holds every
//! state of theirs. So within a staged run the bulk passes keep their
//! explorations ([`crate::cs::StageBases`]) and these refinements lift
//! theirs from the base's (`cs::lift`: the kept hypergraph's live part
//! without the removed nodes, times the value's automaton) instead of
//! searching, with the same labels
//! (`cs.rs::lifted_stages_are_the_stages_searched`). Where none was
//! kept (asynchronous rounds weaken the report), three value stages or
//! more explore the report they share once ([`LIFT_MIN_STAGES`]). On
//! Lua's plain cores the one value stage went from about 45 ms to 17 ms.
//!
//! Rounds of [`crate::concurrency::ProcessWide`] whose weakening drops
//! nothing reuse the crash path alone's labels (`async_reused`), which
//! halved each value stage of bzip2 (signal handlers).
//!
//! A value stage's automaton is a *reset* one (each store sets its state
//! whatever it was), so the context-sensitive bulk pass's exploration
//! does not multiply the callees' contexts by it (`cs::product`'s
//! "Shared invocations", `CsLimits::lean`): the same accepted paths in
//! fewer states (a SQLite value stage: 149k, its base 89k; 415k before).
//! With branch tests it is one only where
//! [`LastWrite::tests_as_writes`] applies; elsewhere the exploration
//! keeps a callee's entry state as a map of it (`Sym`).
//!
//! **Cases** ([`Report::cases`], issue 36: a variable whose value is not
//! known, split into the classes of values its branch tests tell apart,
//! one [`LastWrite`] each). Each class is a stage after the values',
//! within the same budget (`cases_to_stage`: only a variable with a
//! test the labels decide and another they leave open); what every class
//! that can hold says is merged (`merge_cases`). Sound: on every path
//! one class holds, and each stage's labels hold on the paths that keep
//! to its class (`cs.rs::cases_hold_on_every_path_that_keeps_to_one`).
//!
//! Each stage's milliseconds are in the stats (`staged_base_ms`,
//! `staged_residue_ms`, `staged_values_ms`), and the nodes the residue
//! stage and the value stages decided that were Maybe before them
//! (`staged_residue_gained`, `staged_values_gained`).

use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{LastWrite, NodeSet, Origin, Report, Trace};
use crate::solver::{Label, Recovery, SolveError, Solver, Weakening};

/// Values per group.
pub const GROUP: usize = 1;

/// The evidence stages' time budget by default ([`Staging::value_budget`]),
/// as a multiple of the analysis without evidence, with
/// [`VALUE_FLOOR_MS`] at least: the residue's refinement
/// ([`refine_marked`]) may last until that multiple of the analysis so
/// far (from [`Staging::started`]: the inputs read, the base recovered),
/// the value stages until that multiple of the base recovery alone, and
/// not past the residue's deadline (see [`evidence_deadline`]; with the
/// base recovery alone for both, SQLite's plain core ran out of it
/// inside the residue's refinement on most runs, keeping 63% of the
/// labels the evidence decides, against 94%). Each deadline holds through
/// [`crate::budget::with_deadline`]; a stage that reaches it keeps the
/// sound labels its solver had (the searches stop as at a time limit),
/// and the stages not started are dropped and listed. Without it 16
/// stages of bzip2's block-flag core took 1.7 s after a base of 10 ms, to
/// decide 2 more nodes. Issue 35 asks for the analysis with evidence in
/// at most 1.5x the time of the analysis without it: half the base.
pub const VALUE_BUDGET_FACTOR: f64 = 0.5;
/// The least time budget of the evidence stages, in milliseconds: below
/// 200 ms of base, the stages may take 100 ms (on bzip2's cores of a 20 ms
/// analysis that stages every value).
pub const VALUE_FLOOR_MS: u64 = 100;

/// The evidence stages' deadline, the base recovery having taken `base`
/// and ended now: see [`VALUE_BUDGET_FACTOR`]. `whole`: of the analysis
/// so far (the residue's refinement); else of the base recovery alone
/// (the value stages). The residue's refinement is one bulk pass that
/// decides most of the evidence's labels on large programs (541 of
/// SQLite's plain core's 1,723), where the value stages are many and
/// mostly decide nothing (its function-flag core: three stages, 280 ms,
/// no label, when they too had the whole analysis's budget).
fn evidence_deadline(
    how: Staging,
    base: std::time::Duration,
    whole: bool,
) -> Option<std::time::Instant> {
    how.value_budget.map(|factor| {
        let so_far = match how.started {
            Some(t) if whole => t.elapsed().max(base),
            _ => base,
        };
        let budget = so_far
            .mul_f64(factor)
            .max(std::time::Duration::from_millis(VALUE_FLOOR_MS));
        std::time::Instant::now() + budget
    })
}

/// The error of a value stage not started: the value stages' time budget
/// ran out.
const OUT_OF_BUDGET: &str = "the value stages' time budget ran out";
/// Groups per recovery.
pub const MAX_GROUPS: usize = 32;

/// Most values known only from branch tests (no store ruled out, none
/// needed) that get a stage of their own on a large graph: at least this
/// many, and more while their stages stay within [`TEST_ONLY_NODES`].
/// On bzip2's plain cores (34 such values) staging up to 32 of them
/// decides nothing the first 4 do not.
pub const MAX_TEST_ONLY: usize = 4;

/// Budget of the stages of values known only from branch tests, in graph
/// nodes (stages times nodes): every one on small programs, 4 on
/// SQLite's 92,035 nodes.
pub const TEST_ONLY_NODES: usize = 400_000;

/// How [`recover_staged`] runs its stages.
#[derive(Clone, Copy, Debug)]
pub struct Staging {
    /// Run each stage with its base's labels as a hint (see the module
    /// docs). Off: every stage a plain [`Solver::recover`], the reference.
    pub hints: bool,
    /// With hints, a value stage only refines its hint
    /// ([`Solver::refine_hint`]: with `best`, the context-sensitive bulk
    /// pass alone; see the module docs). Off: [`Solver::recover_hinted`].
    pub lean: bool,
    /// Value stages run at once (each on its own thread; they are
    /// independent, and merged in order as if run one by one, so the
    /// labels do not depend on it). 1: one by one, as `batch` runs them
    /// (its crashes already use every core).
    pub threads: usize,
    /// The budget of values known only from branch tests, in graph nodes
    /// ([`TEST_ONLY_NODES`] by default).
    pub test_only_nodes: usize,
    /// First recover the report with all its residue at once (the base
    /// and residue stages in one recovery), and stage the residue only
    /// when that fails (see `with_residue`).
    pub residue_at_once: bool,
    /// The evidence stages' time budget as a multiple of the base
    /// recovery ([`VALUE_BUDGET_FACTOR`] by default, [`VALUE_FLOOR_MS`] at
    /// least); `None`: every stage runs to its solver's own limits (the
    /// reference, and labels that do not depend on the machine's speed).
    pub value_budget: Option<f64>,
    /// The Local lift follows (`recover_lifted`): the values that the
    /// Local walk of their own frame reads and that constrain only one
    /// activation of a function called again are not staged
    /// (`local::walked_locals`).
    pub lifted: bool,
    /// Evidence that a node ran (a stack residue set, a node the Local
    /// lift proves ran) marks the node and its activation dominators Yes
    /// ([`mark_ran`]) instead of a whole recovery with it as an
    /// observation. On the harness's bzip2 and Lua cores this kept 98% of
    /// the labels the recoveries decide (the rest are what joint
    /// reasoning adds: alternatives ruled out, callees' code) and halved
    /// Lua's analyses (0.22-0.29 s to 0.12 s, whole process). Off
    /// (`--full-evidence`): the recoveries, as before.
    pub marked: bool,
    /// Stage every variable's cases ([`Report::cases`]) that the labels
    /// neither satisfy nor decide, not only those with a test the labels
    /// decide and another they leave open (the cases' reference: what
    /// the filter leaves out is what it could only gain).
    pub every_case: bool,
    /// Mark No, before the value stages, the values' bad writes that no
    /// good write can follow (`mark_bad_writes`; with
    /// [`Staging::marked`]). Off: the values reach the stages as they
    /// are (the tests of the stages' own mechanics).
    pub bad_writes: bool,
    /// When the analysis began, reading its inputs included: the evidence
    /// stages' time budget is then a multiple of the time from it to the
    /// base recovery's end (the analysis without evidence, as its user
    /// waits for it). `None`: of the base recovery alone.
    pub started: Option<std::time::Instant>,
    /// The time a value stage is expected to take, under which none
    /// starts before the deadline (set by the staging itself from what
    /// the base recovery and the residue's refinement measured, see
    /// `expected_stage_cost`; zero elsewhere).
    pub stage_cost: std::time::Duration,
    /// With [`Staging::lean`], the evidence stages' bulk passes (the
    /// residue's refinement, each value's) lift their explorations from
    /// the base recovery's, kept (`crate::cs::StageBases`). Off: each
    /// searches on its own (the reference of the tests).
    pub lift: bool,
}

impl Default for Staging {
    fn default() -> Self {
        Staging {
            hints: true,
            lean: true,
            threads: 1,
            test_only_nodes: TEST_ONLY_NODES,
            residue_at_once: true,
            value_budget: Some(VALUE_BUDGET_FACTOR),
            lifted: false,
            marked: true,
            every_case: false,
            bad_writes: true,
            started: None,
            stage_cost: std::time::Duration::ZERO,
            lift: true,
        }
    }
}

/// Stages run under the thread's deadline (see `staged`): past it, none
/// starts.
fn within_budget() -> Result<(), SolveError> {
    within_budget_for(std::time::Duration::ZERO)
}

/// [`within_budget`], and at least `need` left before the deadline: a
/// value stage that cannot finish before it is not started (its bulk pass
/// stopped by the deadline decides little, at the whole budget's cost: on
/// SQLite's function-flag core, three of six stages ran to the deadline
/// and gained nothing).
fn within_budget_for(need: std::time::Duration) -> Result<(), SolveError> {
    let short = crate::budget::deadline()
        .is_some_and(|d| d.saturating_duration_since(std::time::Instant::now()) < need);
    if short || crate::budget::past_deadline() {
        return Err(SolveError::Limit(OUT_OF_BUDGET.to_string()));
    }
    Ok(())
}

/// A stage's recovery: with `hint` (labels sound for `r`) when hints are
/// on.
fn stage(
    s: &dyn Solver,
    g: &Icfg,
    r: &Report,
    hint: &[Label],
    how: Staging,
) -> Result<Recovery, SolveError> {
    within_budget()?;
    if how.hints {
        s.recover_hinted(g, r, hint)
    } else {
        s.recover(g, r)
    }
}

/// A value stage's recovery: [`stage`], or with [`Staging::lean`] the
/// hint refined ([`Solver::refine_hint`]), and [`stage`] where that
/// gives no answer. (The residue and the lifted nodes are observations
/// of single nodes, which the bulk pass does not track: their stages
/// recover.)
fn value_stage(
    s: &dyn Solver,
    g: &Icfg,
    r: &Report,
    hint: &[Label],
    how: Staging,
    slowest: &Slowest,
) -> Result<Recovery, SolveError> {
    if how.hints && how.lean {
        within_budget_for(how.stage_cost.max(slowest.get()))?;
        let t = std::time::Instant::now();
        let res = s.refine_hint(g, r, hint, &[]);
        slowest.saw(t.elapsed());
        match res {
            Err(SolveError::Unsupported(_)) => {}
            res => return res,
        }
    }
    stage(s, g, r, hint, how)
}

/// The longest a refined value stage of one staged run took so far: a
/// stage starts only if that, and [`Staging::stage_cost`] (measured
/// before any of them), fit in the budget left. On SQLite's
/// function-flag core a lifted value stage took 90-140 ms on two
/// threads against the residue refinement's 60-72 ms, and the second
/// pair of stages ran 30 ms past the budget.
#[derive(Default)]
struct Slowest(std::sync::atomic::AtomicU64);

impl Slowest {
    fn get(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn saw(&self, d: std::time::Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.0.fetch_max(us, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The time a value stage is expected to take ([`Staging::stage_cost`]),
/// from what `rec` (the recovery the values are staged on) measured:
/// with lifted stages ([`Staging::lift`]), twice the residue's
/// refinement where it was lifted (a bulk pass of the same report with
/// nodes known, lifted as a value stage is: no exploration; a value
/// stage lifts one automaton more, beside another stage on the second
/// thread); else, and at most, the base recovery's whole bulk pass,
/// exploration included. Measured: on Lua's function-flag cores the one
/// value stage took 16-30 ms, the residue's refinement 14-42 ms, the
/// base's bulk pass 55-125 ms, and under load the budget left for the
/// values (57-84 ms) fell below the last, leaving the stage and its
/// labels (7% of the evidence's) out in 4 of 8 runs; on SQLite's
/// function-flag core two value stages at once took 90-140 ms each,
/// the refinement 60-72 ms.
fn expected_stage_cost(rec: &Recovery, how: Staging) -> std::time::Duration {
    let bulk = rec.stat("cs_bulk_ms");
    let ms = if how.lift && how.lean && how.hints && rec.stat("residue_lifted") > 0 {
        rec.stat("residue_refine_ms").saturating_mul(2).min(bulk)
    } else {
        bulk
    };
    std::time::Duration::from_millis(ms)
}

/// Whether a stage's result stops the stages after it (an error, except
/// a stage left out by the time budget: the next ones are left out too,
/// each listed; and a stage whose report is impossible: its value is
/// dropped and listed, its case cannot hold).
fn stops(res: &Result<Recovery, SolveError>) -> bool {
    matches!(res, Err(e) if !out_of_budget(e) && !matches!(e, SolveError::Infeasible { .. }))
}

fn out_of_budget(e: &SolveError) -> bool {
    matches!(e, SolveError::Limit(m) if m == OUT_OF_BUDGET)
}

/// [`Solver::recover`] of `report`, its values taken in stages (see the
/// module docs), one by one, with hints, every value staged (no time
/// budget), the residue recovered (not [`Staging::marked`]): the
/// reference. Without values, exactly `s.recover(report)`.
pub fn recover_with_values(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
) -> Result<Recovery, SolveError> {
    let how = Staging {
        value_budget: None,
        marked: false,
        lean: false,
        ..Staging::default()
    };
    staged(s, g, report, how, &|reports, hint, how| {
        one_by_one(s, g, reports, hint, how)
    })
    .map(|(rec, _)| rec)
}

/// The report the values were staged on (without values; with the
/// residue it kept) and its labels: sound for it, hence for any report
/// that adds to it (the Local lift's hint).
struct Base {
    report: Report,
    labels: Vec<Label>,
    /// With [`Staging::lifted`], where the value stages left a thread
    /// free: the frames' Local labels under `labels`, computed beside
    /// the stages (see `staged` and [`recover_lifted_framed`]).
    frames: Option<Vec<crate::local::FrameLabels>>,
}

/// [`recover_with_values`], its stages run as `how` says (value stages
/// on up to `how.threads` threads: what `analyze` runs).
pub fn recover_staged(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<Recovery, SolveError> {
    staged_by(s, g, report, how).map(|(rec, _)| rec)
}

/// [`staged`] with the value stages run as `how` says.
fn staged_by(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<(Recovery, Base), SolveError> {
    staged(s, g, report, how, &|reports, hint, how| {
        if how.threads <= 1 || reports.len() <= 1 {
            return one_by_one(s, g, reports, hint, how);
        }
        at_once(s, g, reports, hint, how)
    })
}

/// The value stages' recoveries, in order, up to the first error.
type Runs = Vec<Result<Recovery, SolveError>>;

/// Recovers the value stages' reports, given the hint.
type RunStages<'a> = dyn Fn(&[Report], &[Label], Staging) -> Runs + 'a;

fn one_by_one(s: &dyn Solver, g: &Icfg, reports: &[Report], hint: &[Label], how: Staging) -> Runs {
    let mut out = Vec::with_capacity(reports.len());
    let bases = shared_bases(reports);
    let slowest = Slowest::default();
    for r in reports {
        let res = with_bases(&bases, || value_stage(s, g, r, hint, how, &slowest));
        let stop = stops(&res);
        out.push(res);
        if stop {
            break;
        }
    }
    out
}

/// The explorations the value stages lift theirs from
/// ([`crate::cs::StageBases`], installed by [`staged`]), for their
/// threads; where none was kept of the report they share, they explore
/// it once if there are at least [`LIFT_MIN_STAGES`] of them (with
/// fewer, that costs more than it saves).
fn shared_bases(reports: &[Report]) -> Option<std::sync::Arc<crate::cs::StageBases>> {
    let bases = crate::cs::StageBases::current()?;
    bases.share_stages(reports.len() >= LIFT_MIN_STAGES);
    Some(bases)
}

/// Fewest value stages that explore the report they share once (see
/// [`shared_bases`]).
pub const LIFT_MIN_STAGES: usize = 3;

/// `f` with `bases` installed, if any.
fn with_bases<T>(
    bases: &Option<std::sync::Arc<crate::cs::StageBases>>,
    f: impl FnOnce() -> T,
) -> T {
    match bases {
        Some(b) => b.scope(f),
        None => f(),
    }
}

/// [`one_by_one`]'s result, the stages spread over `how.threads` threads,
/// the calling one and scoped ones (each takes the next stage not taken),
/// all of them run.
fn at_once(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    reports: &[Report],
    hint: &[Label],
    how: Staging,
) -> Runs {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Recovery, SolveError>>>> =
        reports.iter().map(|_| Mutex::new(None)).collect();
    // The caller's deadline holds in the stages' threads.
    let deadline = crate::budget::deadline();
    let bases = shared_bases(reports);
    let slowest = Slowest::default();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(r) = reports.get(i) else { break };
        let res = with_bases(&bases, || value_stage(s, g, r, hint, how, &slowest));
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(res);
    };
    // The calling thread takes stages too (it is under the deadline
    // already): its allocator's pages are warm from the base recovery,
    // where a new thread's are not.
    std::thread::scope(|scope| {
        for _ in 1..how.threads.min(reports.len()) {
            scope.spawn(|| crate::budget::with_deadline(deadline, work));
        }
        work();
    });
    let mut out: Runs = Vec::with_capacity(reports.len());
    for slot in slots {
        let res = slot
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .expect("every stage ran");
        let stop = stops(&res);
        out.push(res);
        if stop {
            break;
        }
    }
    out
}

/// The stages (module docs), and the [`Base`] the values were staged
/// on; `run` recovers the value stages' reports.
fn staged(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    how: Staging,
    run: &RunStages,
) -> Result<(Recovery, Base), SolveError> {
    if report.values.is_empty() && report.residue.is_empty() && report.cases.is_empty() {
        let rec = s.recover(g, report)?;
        let labels = rec.labels.clone();
        let base = Base {
            report: report.clone(),
            labels,
            frames: None,
        };
        return Ok((rec, base));
    }
    // The bulk passes keep their explorations for the evidence stages
    // after them, which lift theirs from them (`crate::cs::StageBases`).
    let bases = (how.hints && how.lean && how.lift)
        .then(|| std::sync::Arc::new(crate::cs::StageBases::default()));
    with_bases(&bases, || staged_evidence(s, g, report, how, run))
}

/// [`staged`] of a report with evidence.
fn staged_evidence(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    how: Staging,
    run: &RunStages,
) -> Result<(Recovery, Base), SolveError> {
    let (base_report, mut rec, deadline) = base_and_residue(s, g, report, how)?;
    let t = std::time::Instant::now();
    let left = values_to_stage(g, report, how, &mut rec);
    let chunks: Vec<&[(usize, LastWrite)]> = left.chunks(GROUP).collect();
    let (staged, over) = chunks.split_at(chunks.len().min(MAX_GROUPS));
    let mut reports: Vec<Report> = staged
        .iter()
        .map(|chunk| Report {
            values: chunk.iter().map(|(_, v)| v.clone()).collect(),
            ..base_report.clone()
        })
        .collect();
    let n_values = reports.len();
    // The cases after the values: each case a stage of its own.
    let cases = cases_to_stage(g, report, how, &mut rec);
    reports.extend(cases.iter().flatten().map(|w| Report {
        values: vec![w.clone()],
        ..base_report.clone()
    }));
    // `rec`'s labels now are sound for every value's stage (each adds to
    // `base_report`).
    let base_labels = rec.labels.clone();
    let hint = if how.hints {
        base_labels.clone()
    } else {
        Vec::new()
    };
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(std::time::Instant::now());
        rec.stats
            .push(("values_budget_ms", left.as_millis() as u64));
    }
    let how = Staging {
        stage_cost: expected_stage_cost(&rec, how),
        ..how
    };
    // The Local lift reads the frames' labels under the staged labels.
    // Under the labels before the stages they are the same for every
    // frame whose function's No labels the stages leave alone (the only
    // labels a frame's walk reads): computed beside the stages on a
    // second thread, they are reused there (on Lua's plain cores the
    // stage is one, on one thread, and the frames' walks about 20 ms).
    // Only where the stages leave a thread free: beside bzip2's 17
    // stages on two threads, the walks only slowed them.
    let beside = how.lifted && reports.len() < how.threads;
    let (mut runs, frames) = std::thread::scope(|scope| {
        let frames =
            beside.then(|| scope.spawn(|| crate::local::frame_labels(g, report, &base_labels)));
        let runs = crate::budget::with_deadline(deadline, || run(&reports, &hint, how));
        (runs, frames.and_then(|h| h.join().ok()))
    });
    let case_runs = runs.split_off(n_values.min(runs.len()));
    merge_stages(&mut rec, staged, runs, how)?;
    merge_cases(&mut rec, &cases, case_runs);
    for chunk in over {
        for (i, v) in *chunk {
            rec.weakened.push(Weakening {
                origin: Origin::Value(*i),
                how: format!(
                    "{}: dropped: more than {} values",
                    v.what,
                    GROUP * MAX_GROUPS
                ),
            });
        }
    }
    rec.undecided
        .retain(|n| rec.labels[n.index()] == Label::Maybe);
    rec.stats.push(("value_groups", staged.len() as u64));
    rec.stats.push(("staged_values_ms", ms(t)));
    let base = Base {
        report: base_report,
        labels: base_labels,
        frames,
    };
    Ok((rec, base))
}

/// Stages 1 and 1' (module docs): the report without values, with the
/// residue it keeps, and its recovery.
fn base_and_residue(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<(Report, Recovery, Option<std::time::Instant>), SolveError> {
    let mut base_report = Report {
        values: Vec::new(),
        residue: Vec::new(),
        cases: Vec::new(),
        ..report.clone()
    };
    let t = std::time::Instant::now();
    if how.marked {
        let mut rec = s.recover(g, &base_report)?;
        rec.stats.push(("staged_base_ms", ms(t)));
        let base = t.elapsed();
        let residue_deadline = evidence_deadline(how, base, true);
        let deadline = match (evidence_deadline(how, base, false), residue_deadline) {
            (Some(v), Some(r)) => Some(v.min(r)),
            (v, r) => v.or(r),
        };
        let t = std::time::Instant::now();
        let before = rec.labels.clone();
        if !report.residue.is_empty() {
            mark_residue(g, report, &mut rec);
        }
        let residue = report
            .residue
            .iter()
            .flat_map(|set| set.nodes().iter().copied());
        let fresh = |nodes: Vec<NodeId>, rec: &Recovery| -> Vec<NodeId> {
            nodes
                .into_iter()
                .filter(|n| rec.labels[n.index()] == Label::Yes && before[n.index()] != Label::Yes)
                .collect()
        };
        // Nodes marked No leave fewer paths: what runs on all of them is
        // the refinement's to find (the value whose branch sides they
        // are may then need no stage of its own).
        let bad = how.bad_writes && mark_bad_writes(g, report, &mut rec);
        if how.lean {
            let refine = |known: Vec<NodeId>, rec: &mut Recovery| {
                (known.is_empty() && !bad)
                    || crate::budget::with_deadline(residue_deadline, || {
                        refine_marked(s, g, &base_report, known, rec)
                    })
            };
            // The needed writes' marks stand only where the refinement
            // confirms them: a bulk pass with them known that finds a
            // consistent path (a value the graph cannot explain, whose
            // write can run only where the stack says it did not, is
            // caught there, as its stage would catch it).
            // Kept only where `mark_needs` can mark anything.
            let can_mark = report.values.iter().any(|v| v.need) && g.async_functions().is_empty();
            let without = can_mark.then(|| rec.clone());
            let needs = mark_needs(g, report, &mut rec);
            let marked = !needs.is_empty();
            let known = fresh(residue.clone().chain(needs).collect(), &rec);
            rec.stats.push(("staged_marks_ms", ms(t)));
            if let (false, Some(without)) = (refine(known, &mut rec), without.filter(|_| marked)) {
                rec = without;
                rec.stats.push(("values_needs_unconfirmed", 1));
                let known = fresh(residue.collect(), &rec);
                refine(known, &mut rec);
            }
        }
        rec.stats.push(("staged_residue_ms", ms(t)));
        return Ok((base_report, rec, deadline));
    }
    let at_once = how
        .residue_at_once
        .then(|| with_residue(s, g, &report.residue, &base_report))
        .flatten();
    let rec = match at_once {
        Some((with, rec)) => {
            base_report = with;
            rec
        }
        None => {
            let mut rec = s.recover(g, &base_report)?;
            rec.stats.push(("staged_base_ms", ms(t)));
            let t = std::time::Instant::now();
            if !report.residue.is_empty() {
                add_residue(s, g, &report.residue, &mut base_report, &mut rec, how);
            }
            rec.stats.push(("staged_residue_ms", ms(t)));
            rec
        }
    };
    let deadline = evidence_deadline(how, t.elapsed(), false);
    Ok((base_report, rec, deadline))
}

/// The labels the residue and the values' needed writes marked (`fresh`:
/// residue call sites, needed writes and the entries they imply, Yes in
/// `rec` and not before the marks) refined with the report
/// ([`Solver::refine_hint`], those nodes known to run): what runs on
/// every path through them (on Lua's plain cores, more than half of the
/// labels the evidence adds). Kept where it answers and agrees with
/// `rec`; else `rec` stays as marked. Whether it answered and agreed.
fn refine_marked(
    s: &dyn Solver,
    g: &Icfg,
    base_report: &Report,
    mut fresh: Vec<NodeId>,
    rec: &mut Recovery,
) -> bool {
    let t = std::time::Instant::now();
    fresh.sort_unstable();
    fresh.dedup();
    let res = s.refine_hint(g, base_report, &rec.labels, &fresh);
    let lifted = res
        .as_ref()
        .map_or(0, |more| more.stat("cs_bulk_lifted").min(1));
    let (gained, answered) = match res {
        Ok(more) if !conflicts(&rec.labels, &more.labels) => {
            (merge(&mut rec.labels, &more.labels), true)
        }
        _ => (0, false),
    };
    rec.stats.push(("residue_refined", gained));
    rec.stats.push(("residue_lifted", lifted));
    rec.stats.push(("residue_refine_ms", ms(t)));
    answered
}

/// Stage 2 (module docs): the values simplified with `rec`'s labels, in
/// the order they are staged (values that rule out a store or need one
/// first, a capped number of those known only from branch tests after);
/// those satisfied, impossible, reading only decided nodes or over the
/// cap are left out (the impossible and capped ones listed in `rec`).
fn values_to_stage(
    g: &Icfg,
    report: &Report,
    how: Staging,
    rec: &mut Recovery,
) -> Vec<(usize, LastWrite)> {
    let mut left: Vec<(usize, LastWrite)> = Vec::new();
    for (i, v) in report.values.iter().enumerate() {
        match simplify(v, &rec.labels) {
            Simplified::Satisfied => {}
            Simplified::Impossible => rec.weakened.push(Weakening {
                origin: Origin::Value(i),
                how: format!(
                    "{}: dropped: no store that can leave the value runs on a path the rest of the report allows",
                    v.what
                ),
            }),
            Simplified::Keep(w) => left.push((i, w)),
        }
    }
    // A value whose every node is decided is not staged (see
    // `reads_only_decided`).
    let before = left.len();
    left.retain(|(_, v)| !reads_only_decided(v, &rec.labels));
    rec.stats
        .push(("values_skipped_decided", (before - left.len()) as u64));
    // A local of a function called again is left to its frame's Local
    // walk and the lift that follows (see `local::walked_locals`).
    if how.lifted {
        let walked = crate::local::walked_locals(g, report);
        let before = left.len();
        left.retain(|(i, _)| !walked[*i]);
        rec.stats
            .push(("values_left_to_frames", (before - left.len()) as u64));
    }
    // Values that rule out a store (or need one) first; those known only
    // from branch tests after, at most `MAX_TEST_ONLY` of them (each stage
    // is a whole recovery, and on large programs most such values decide
    // nothing: see the module docs).
    // Within each kind, the values that read the most nodes the labels
    // leave open first: when the time budget stops the stages, those
    // most likely to decide something have run (on bzip2's plain cores
    // with no floor to the budget, 77% of the labels the stages decide
    // were kept this way, 16-23% in report order).
    left.sort_by_cached_key(|(_, v)| {
        let open = v
            .alphabet()
            .iter()
            .filter(|n| rec.labels[n.index()] == Label::Maybe)
            .count();
        (v.bad.is_empty() && !v.need, std::cmp::Reverse(open))
    });
    let test_only = left
        .iter()
        .filter(|(_, v)| v.bad.is_empty() && !v.need)
        .count();
    let most = MAX_TEST_ONLY.max(how.test_only_nodes / g.num_nodes().max(1));
    let keep = left.len() - test_only.saturating_sub(most);
    for (i, v) in left.split_off(keep) {
        rec.weakened.push(Weakening {
            origin: Origin::Value(i),
            how: format!(
                "{}: dropped: known only from branch tests, and {most} such values are staged already",
                v.what
            ),
        });
    }
    left
}

/// Most variables whose cases ([`Report::cases`]) are staged: each case
/// is a stage, as long as a value's.
pub const MAX_CASES: usize = 32;

/// The cases of [`Report::cases`] worth staging, each variable's cases
/// simplified with `rec`'s labels as a value's are ([`simplify`]): not a
/// variable one of whose cases the labels already satisfy (every path
/// keeps to it: the cases together exclude nothing), nor one whose cases
/// read only decided nodes. A case that cannot hold is left out (the
/// others cover every path); a variable none of whose cases can hold is
/// left out too (something the graph does not show writes it); and one
/// none of whose tests has a successor the labels decide while another
/// has one they leave open. Those with the most tests decided come
/// first; at most [`MAX_CASES`], fewer on large graphs (the budget of
/// values known only from branch tests).
fn cases_to_stage(
    g: &Icfg,
    report: &Report,
    how: Staging,
    rec: &mut Recovery,
) -> Vec<Vec<LastWrite>> {
    if report.cases.is_empty() {
        return Vec::new();
    }
    let labels = &rec.labels;
    let mut left: Vec<(usize, Vec<LastWrite>)> = Vec::new();
    for c in &report.cases {
        let mut kept = Vec::new();
        let mut satisfied = false;
        for w in &c.each {
            match simplify(w, labels) {
                Simplified::Satisfied => satisfied = true,
                Simplified::Impossible => {}
                Simplified::Keep(w) => kept.push(w),
            }
        }
        if satisfied || kept.is_empty() || kept.iter().all(|w| reads_only_decided(w, labels)) {
            continue;
        }
        // What one test decided, the cases carry to another: worth a
        // stage only when some test has a successor the labels decide
        // (it surely ran, or surely did not) and another test one they
        // leave open. (On the harness's crashes, the variables without
        // such a pair decided nothing, at 2-3x the analysis's time.)
        let decided = |n: &NodeId| labels[n.index()] != Label::Maybe;
        let tests: Vec<&crate::report::BranchTest> = kept.iter().flat_map(|w| &w.tests).collect();
        let successors = |t: &crate::report::BranchTest| {
            std::iter::once(t.taken)
                .chain(t.others.iter().copied())
                .collect::<Vec<_>>()
        };
        let told: Vec<NodeId> = tests
            .iter()
            .filter(|t| successors(t).iter().any(decided))
            .map(|t| t.branch)
            .collect();
        let open = tests.iter().any(|t| {
            labels[t.branch.index()] != Label::No
                && successors(t).iter().any(|n| !decided(n))
                && told.iter().any(|&b| b != t.branch)
        });
        if !how.every_case && (told.is_empty() || !open) {
            continue;
        }
        let mut seen = told;
        seen.sort_unstable();
        seen.dedup();
        left.push((seen.len(), kept));
    }
    let found = left.len();
    left.sort_by_key(|(score, each)| (std::cmp::Reverse(*score), each.len()));
    let most = MAX_CASES.min(MAX_TEST_ONLY.max(how.test_only_nodes / g.num_nodes().max(1)));
    left.truncate(most);
    rec.stats.push(("cases", report.cases.len() as u64));
    rec.stats.push(("cases_staged", left.len() as u64));
    rec.stats
        .push(("cases_over_cap", (found - left.len()) as u64));
    left.into_iter().map(|(_, each)| each).collect()
}

/// The cases' stages merged: for each variable, what every case that can
/// hold says (a case whose stage is impossible cannot hold), merged into
/// `rec` where it does not contradict it. A variable one of whose cases
/// the time budget left out (or that failed) gives nothing; one none of
/// whose cases can hold, or that contradicts the labels, is counted as
/// dropped (its tests are not what the graph says they are). A case
/// with no valid context-sensitive path where the labels it started from
/// had some cannot hold either (`best` would keep its base's labels
/// there). Sound: on every path one case holds, and each case's labels
/// are sound for the paths that keep to it.
fn merge_cases(rec: &mut Recovery, cases: &[Vec<LastWrite>], runs: Runs) {
    if cases.is_empty() && !rec.has_stat("cases") {
        return;
    }
    let base_conflict = rec.has_stat("cs_conflict");
    let mut runs = runs.into_iter();
    let (mut gained, mut used, mut left_out, mut dropped) = (0u64, 0u64, 0u64, 0u64);
    for each in cases {
        let mut union: Option<Vec<Label>> = None;
        let mut whole = true;
        for _ in each {
            match runs.next() {
                Some(Ok(more)) if !more.has_stat("cs_conflict") || base_conflict => {
                    union = Some(match union {
                        None => more.labels,
                        Some(mut u) => {
                            for (a, &b) in u.iter_mut().zip(&more.labels) {
                                if *a != b {
                                    *a = Label::Maybe;
                                }
                            }
                            u
                        }
                    })
                }
                // `best` keeps its base's labels where no valid
                // context-sensitive path fits (the graph may miss control
                // flow); where the report without the case had such
                // paths, the case is what rules them all out.
                Some(Ok(more)) if more.has_stat("cs_conflict") && !base_conflict => {}
                Some(Err(SolveError::Infeasible { .. })) => {}
                _ => whole = false,
            }
        }
        match union {
            _ if !whole => left_out += 1,
            Some(u) if !conflicts(&rec.labels, &u) => {
                used += 1;
                gained += merge(&mut rec.labels, &u);
            }
            _ => dropped += 1,
        }
    }
    rec.stats.push(("cases_used", used));
    rec.stats.push(("cases_gained", gained));
    rec.stats.push(("cases_over_budget", left_out));
    rec.stats.push(("cases_dropped", dropped));
}

/// Stage 3's merge (module docs): each group's labels into `rec`, in
/// order; a group that contradicts the report or an earlier group, or
/// that the time budget left out, is listed.
fn merge_stages(
    rec: &mut Recovery,
    staged: &[&[(usize, LastWrite)]],
    runs: Runs,
    how: Staging,
) -> Result<(), SolveError> {
    let (mut gained, mut left_out, mut refined, mut lifted) = (0u64, 0u64, 0u64, 0u64);
    let drop_all = |rec: &mut Recovery, chunk: &[(usize, LastWrite)], why: &str| {
        for (i, v) in chunk {
            rec.weakened.push(Weakening {
                origin: Origin::Value(*i),
                how: format!("{}: {why}", v.what),
            });
        }
    };
    for (chunk, res) in staged.iter().zip(runs) {
        match res {
            // Each group fits the rest of the report, but not together
            // with the groups before: the values contradict each other.
            Ok(more) if conflicts(&rec.labels, &more.labels) => drop_all(
                rec,
                chunk,
                "dropped: its group of values contradicts the values of an earlier group (memory changed by something the graph does not show?)",
            ),
            Ok(more) => {
                refined += u64::from(more.has_stat("cs_lean_ms"));
                lifted += u64::from(more.stat("cs_bulk_lifted") > 0);
                gained += merge(&mut rec.labels, &more.labels);
                // Origins inside the group's report are 0..chunk.len().
                for mut w in more.weakened {
                    if let Origin::Value(k) = w.origin {
                        w.origin = Origin::Value(chunk[k].0);
                    }
                    if !rec.weakened.contains(&w) {
                        rec.weakened.push(w);
                    }
                }
            }
            Err(SolveError::Infeasible { .. }) => drop_all(
                rec,
                chunk,
                "dropped: its group of values contradicts the rest of the report (memory changed by something the graph does not show?)",
            ),
            Err(e) if out_of_budget(&e) => {
                left_out += 1;
                let why = format!(
                    "not used: {OUT_OF_BUDGET} ({}x the analysis without evidence, {VALUE_FLOOR_MS} ms at least; --value-budget)",
                    how.value_budget.unwrap_or(0.0)
                );
                drop_all(rec, chunk, &why);
            }
            Err(e) => return Err(e),
        }
    }
    rec.stats.push(("value_groups_over_budget", left_out));
    rec.stats.push(("staged_values_gained", gained));
    rec.stats.push(("value_stages_refined", refined));
    rec.stats.push(("value_stages_lifted", lifted));
    Ok(())
}

/// "One of `set` ran": an unreliable `obsYes` trace of one element (how
/// residue and lifted nodes join a report).
fn ran(set: NodeSet) -> Trace {
    Trace {
        reliable: false,
        entries: vec![set],
    }
}

fn ms(t: std::time::Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

/// The report `base` with every residue set as an `obsYes` trace, and its
/// recovery, when that recovery succeeds with nothing weakened: then it
/// is what the base stage and the residue stage give together, in one
/// recovery (a residue set the base stage would drop, one whose calls
/// cannot run, makes it impossible). `None` without residue, or
/// otherwise: the caller stages them.
/// What one set of nodes, one of which ran, implies
/// ([`crate::local::Implied`]): what every member that can have run
/// implies (the intersections). `None` when no member can have run.
fn implied_by(
    imp: &mut crate::local::Implied<'_>,
    report: &Report,
    labels: &[Label],
    set: &[NodeId],
) -> Option<(Vec<NodeId>, Vec<NodeId>)> {
    // A call's activation ended unless it may be pending: a frame's call,
    // or any call where unreported frames may be (see `known_stack`).
    let known = known_stack(imp, report);
    let ended = |n: NodeId| known && !report.stack.iter().any(|f| f.call.contains(n));
    let mut out: Option<(Vec<NodeId>, Vec<NodeId>)> = None;
    for &n in set {
        let Ok((yes, no)) = imp.ran(labels, n, ended(n)) else {
            continue;
        };
        out = Some(match out {
            None => (yes, no),
            Some((y, o)) => (
                y.into_iter().filter(|v| yes.contains(v)).collect(),
                o.into_iter().filter(|v| no.contains(v)).collect(),
            ),
        });
    }
    out
}

/// Whether the report's stack holds every pending call: no gap it says
/// (`stack_gaps`) or shows (a frame whose next call, or the crash, is not
/// in the function it entered), and the outermost frame's call (the
/// crash, without frames) is in the start function, which runs once
/// (nothing calls it), so no unreported call can be pending below it.
fn known_stack(imp: &mut crate::local::Implied<'_>, report: &Report) -> bool {
    let g = imp.graph();
    // The outermost known point: the first frame's call, or the crash.
    let Some(first) = report
        .stack
        .first()
        .map(|f| &f.call)
        .or(report.crash.as_ref())
    else {
        return false;
    };
    let start = g.func_of(g.start());
    let in_start = first.nodes().iter().all(|&c| g.func_of(c) == start);
    let ends = |j: usize| -> Option<&NodeSet> {
        if j < report.stack.len() {
            Some(&report.stack[j].call)
        } else {
            report.crash.as_ref()
        }
    };
    let no_plain_gap = (1..=report.stack.len()).all(|j| {
        let home: Vec<crate::ids::FuncId> = report.stack[j - 1]
            .entry
            .nodes()
            .iter()
            .map(|&e| g.func_of(e))
            .collect();
        ends(j).is_some_and(|e| e.nodes().iter().all(|&v| home.contains(&g.func_of(v))))
    });
    report.stack_gaps.is_empty() && in_start && no_plain_gap && imp.runs_once(start)
}

/// Marks `yes` Yes and `no` No in `labels`, then No every node no path
/// from the program's start (or an asynchronous function's entry)
/// reaches over nodes not No. Returns how many Maybe labels it decided,
/// or why the marks contradict the labels or the report (a Yes made No,
/// the crash or a frame left unreachable); `labels` is then unchanged.
fn mark(
    g: &Icfg,
    report: &Report,
    labels: &mut [Label],
    yes: &[NodeId],
    no: &[NodeId],
) -> Result<usize, &'static str> {
    let mut next = labels.to_vec();
    for &v in yes {
        match next[v.index()] {
            Label::No => return Err("they would have run nodes that never ran"),
            _ => next[v.index()] = Label::Yes,
        }
    }
    for &v in no {
        match next[v.index()] {
            Label::Yes => return Err("they rule out nodes that surely ran"),
            _ => next[v.index()] = Label::No,
        }
    }
    let mut seen = vec![false; g.num_nodes()];
    let mut stack: Vec<NodeId> = std::iter::once(g.start())
        .chain(
            g.async_functions()
                .iter()
                .filter_map(|&f| g.function(f).entry),
        )
        .filter(|v| next[v.index()] != Label::No)
        .collect();
    for v in &stack {
        seen[v.index()] = true;
    }
    while let Some(v) = stack.pop() {
        for (w, _) in g.succs(v) {
            if !seen[w.index()] && next[w.index()] != Label::No {
                seen[w.index()] = true;
                stack.push(w);
            }
        }
    }
    for v in g.nodes() {
        if !seen[v.index()] {
            if next[v.index()] == Label::Yes {
                return Err("they cut off nodes that surely ran");
            }
            next[v.index()] = Label::No;
        }
    }
    let reached = |set: &NodeSet| set.nodes().iter().any(|v| seen[v.index()]);
    if report.crash.as_ref().is_some_and(|c| !reached(c))
        || report
            .stack
            .iter()
            .any(|f| !reached(&f.call) || !reached(&f.entry))
    {
        return Err("they cut off the crash stack");
    }
    let gained = labels
        .iter()
        .zip(&next)
        .filter(|(a, b)| **a == Label::Maybe && **b != Label::Maybe)
        .count();
    labels.copy_from_slice(&next);
    Ok(gained)
}

/// The residue without a recovery ([`Staging::marked`]): what each set
/// not already satisfied (one of its call sites ran) implies is marked
/// ([`implied_by`], [`mark`]). A set none of whose members can have run
/// is dropped and listed, as the residue stage drops it; when the marks
/// contradict the labels, every set is (the labels stay without them).
fn mark_residue(g: &Icfg, report: &Report, rec: &mut Recovery) {
    let residue = &report.residue;
    let mut imp = crate::local::Implied::new(g);
    let (mut yes, mut no, mut used) = (Vec::new(), Vec::new(), Vec::new());
    for (i, set) in residue.iter().enumerate() {
        if set
            .nodes()
            .iter()
            .any(|n| rec.labels[n.index()] == Label::Yes)
        {
            continue;
        }
        match implied_by(&mut imp, report, &rec.labels, set.nodes()) {
            Some((y, n)) => {
                yes.extend(y);
                no.extend(n);
                used.push(i);
            }
            None => rec.weakened.push(Weakening {
                origin: Origin::Residue(i),
                how: "stack residue: dropped: the call cannot run on a path the rest of the report allows".into(),
            }),
        }
    }
    let gained = match mark(g, report, &mut rec.labels, &yes, &no) {
        Ok(k) => k,
        Err(why) => {
            for &i in &used {
                rec.weakened.push(Weakening {
                    origin: Origin::Residue(i),
                    how: format!("stack residue: dropped with the rest of the residue: {why}"),
                });
            }
            used.clear();
            0
        }
    };
    rec.undecided
        .retain(|n| rec.labels[n.index()] == Label::Maybe);
    rec.stats.push(("residue_marked", used.len() as u64));
    rec.stats.push(("staged_residue_gained", gained as u64));
}

/// The values' bad writes that no good write can follow, marked No
/// before the value stages: a bad write (one that cannot have left the
/// value, or the other side of a branch the value decides, read as a
/// write by [`LastWrite::tests_as_writes`]) that ran is followed, before
/// the crash, by a later write, and the last one is good; so one from
/// which no good write is reachable in the graph (every edge, calls and
/// returns matched or not: more paths than the valid ones) never ran.
/// Then [`mark`] closes the labels (what only it leads to never ran
/// either), and the residue's refinement runs (what every path left
/// runs; the value may then be satisfied and need no stage); marks that
/// contradict the labels are not kept. Whether it marked any. Not with
/// asynchronous code (a handler or thread may write between any two
/// nodes). On SQLite's function-flag core a value known only from a
/// branch test (`sqlite3Autoext.nExt == 0`: the loop over extensions
/// never ran) gives 18 labels whose stage (0.2 s) never fits the budget.
fn mark_bad_writes(g: &Icfg, report: &Report, rec: &mut Recovery) -> bool {
    if !g.async_functions().is_empty() || report.values.is_empty() {
        return false;
    }
    let labels = &rec.labels;
    let runs = |n: &NodeId| labels[n.index()] != Label::No;
    let mut no: Vec<NodeId> = Vec::new();
    let mut reach = vec![false; g.num_nodes()];
    let mut stack: Vec<NodeId> = Vec::new();
    for v in &report.values {
        let w = v.tests_as_writes(g).unwrap_or_else(|| LastWrite {
            tests: Vec::new(),
            ..v.clone()
        });
        let bad: Vec<NodeId> = w.bad.iter().copied().filter(runs).collect();
        let good: Vec<NodeId> = w.good().filter(runs).collect();
        if bad.is_empty() || (w.need && good.is_empty()) {
            continue;
        }
        // The nodes from which a good write is reachable.
        reach.fill(false);
        stack.clear();
        for &n in &good {
            reach[n.index()] = true;
            stack.push(n);
        }
        while let Some(n) = stack.pop() {
            for (p, _) in g.preds(n) {
                if !reach[p.index()] && runs(&p) {
                    reach[p.index()] = true;
                    stack.push(p);
                }
            }
        }
        no.extend(bad.into_iter().filter(|b| !reach[b.index()]));
    }
    if no.is_empty() {
        return false;
    }
    no.sort_unstable();
    no.dedup();
    let Ok(gained) = mark(g, report, &mut rec.labels, &[], &no) else {
        return false;
    };
    rec.undecided
        .retain(|n| rec.labels[n.index()] == Label::Maybe);
    rec.stats
        .push(("values_bad_writes_marked", no.len() as u64));
    rec.stats.push(("values_bad_writes_gained", gained as u64));
    true
}

/// The values that need a write (their value is not the one the
/// variable starts with, [`LastWrite::need`]) without a recovery
/// ([`Staging::marked`]): one of their good writes ran, and the last
/// write is one of them, so what that implies is marked as for the
/// residue's call sites ([`implied_by`], [`mark`]). Returns the nodes
/// the residue's refinement may take as known to run: the good writes
/// and the functions' entries the marks made Yes. A value already met (a
/// good write Yes) is left to its stage; when the marks contradict the
/// labels none is kept, nor when the refinement with them known finds no
/// consistent path or gives no answer (`values_needs_unconfirmed`; the
/// stages then find which values contradict the report, and drop them).
///
/// On SQLite's plain core a global list's head, set by one function
/// called once at start-up, has a stage of 268,000 states that never
/// fits the time budget; marked, its write's function ran, and the
/// refinement finds what runs on every path through it (98 labels).
fn mark_needs(g: &Icfg, report: &Report, rec: &mut Recovery) -> Vec<NodeId> {
    // With threads or signal handlers a value may have been left by
    // another thread: the stages decide whether it says anything of this
    // one's path (`concurrency`), and list it when not.
    if !g.async_functions().is_empty() {
        return Vec::new();
    }
    let mut imp = crate::local::Implied::new(g);
    let (mut yes, mut no, mut sets) = (Vec::new(), Vec::new(), Vec::new());
    for v in report.values.iter().filter(|v| v.need) {
        let good: Vec<NodeId> = v
            .good()
            .filter(|n| rec.labels[n.index()] != Label::No)
            .collect();
        if good.is_empty() || good.iter().any(|n| rec.labels[n.index()] == Label::Yes) {
            continue;
        }
        if let Some((y, o)) = implied_by(&mut imp, report, &rec.labels, &good) {
            yes.extend(y);
            no.extend(o);
            sets.push(good);
        }
    }
    if sets.is_empty() {
        return Vec::new();
    }
    let before = rec.labels.clone();
    let gained = match mark(g, report, &mut rec.labels, &yes, &no) {
        Ok(k) => k,
        Err(_) => return Vec::new(),
    };
    rec.undecided
        .retain(|n| rec.labels[n.index()] == Label::Maybe);
    rec.stats.push(("values_needs_marked", sets.len() as u64));
    rec.stats.push(("values_needs_gained", gained as u64));
    let entries = yes
        .into_iter()
        .filter(|&n| g.kind(n) == crate::icfg::NodeKind::Entry && before[n.index()] != Label::Yes);
    sets.into_iter().flatten().chain(entries).collect()
}

fn with_residue(
    s: &dyn Solver,
    g: &Icfg,
    residue: &[NodeSet],
    base: &Report,
) -> Option<(Report, Recovery)> {
    if residue.is_empty() {
        return None;
    }
    let t = std::time::Instant::now();
    let mut r = base.clone();
    r.obs_yes.extend(residue.iter().cloned().map(ran));
    let mut rec = s.recover(g, &r).ok()?;
    // Anything weakened (a solver that fell back to a weaker one's labels,
    // a constraint it could not express) may hide what the stages would
    // find: that the residue contradicts the rest.
    if !rec.weakened.is_empty() {
        return None;
    }
    rec.stats.push(("residue_staged", residue.len() as u64));
    rec.stats.push(("staged_with_residue_ms", ms(t)));
    Some((r, rec))
}

/// The residue stage (see the module docs): on success `base` gains the
/// residue's `obsYes` traces and `rec` its labels.
fn add_residue(
    s: &dyn Solver,
    g: &Icfg,
    residue: &[NodeSet],
    base: &mut Report,
    rec: &mut Recovery,
    how: Staging,
) {
    let mut keep: Vec<(usize, NodeSet)> = Vec::new();
    let mut satisfied = 0u64;
    for (i, set) in residue.iter().enumerate() {
        let l = |n: &crate::ids::NodeId| rec.labels[n.index()];
        if set.nodes().iter().any(|n| l(n) == Label::Yes) {
            satisfied += 1;
        } else if set.nodes().iter().all(|n| l(n) == Label::No) {
            rec.weakened.push(Weakening {
                origin: Origin::Residue(i),
                how: "stack residue: dropped: the call cannot run on a path the rest of the report allows".into(),
            });
        } else {
            keep.push((i, set.clone()));
        }
    }
    rec.stats.push(("residue_satisfied", satisfied));
    rec.stats.push(("residue_staged", keep.len() as u64));
    if keep.is_empty() {
        return;
    }
    let first = base.obs_yes.len();
    let mut r = base.clone();
    r.obs_yes
        .extend(keep.iter().map(|(_, set)| ran(set.clone())));
    let why = match stage(s, g, &r, &rec.labels, how) {
        Ok(more) if conflicts(&rec.labels, &more.labels) => {
            "its labels contradict those without it".to_string()
        }
        Ok(more) => {
            let gained = merge(&mut rec.labels, &more.labels);
            rec.stats.push(("staged_residue_gained", gained));
            for mut w in more.weakened {
                if let Origin::ObsYes(k) = w.origin {
                    if k >= first {
                        w.origin = Origin::Residue(keep[k - first].0);
                    }
                }
                if !rec.weakened.contains(&w) {
                    rec.weakened.push(w);
                }
            }
            *base = r;
            return;
        }
        Err(SolveError::Infeasible { .. }) => {
            "with the rest of the report it is impossible (memory the graph cannot explain?)"
                .to_string()
        }
        Err(e) => format!("its recovery failed: {e}"),
    };
    for (i, _) in keep {
        rec.weakened.push(Weakening {
            origin: Origin::Residue(i),
            how: format!("stack residue: dropped with all residue: {why}"),
        });
    }
}

/// What the Local lift did (see [`recover_lifted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lift {
    /// The nodes fed back as "ran": Local-Yes in a frame (the first such
    /// frame, numbered as [`crate::local::FrameLabels::frame`]) and Maybe
    /// in the global labels.
    pub nodes: Vec<(usize, NodeId)>,
    /// Nodes the lifted recovery decided that were Maybe before (the fed
    /// nodes among them).
    pub gained: usize,
    /// Why the lifted nodes were all dropped, if they were (the labels are
    /// then those without them).
    pub dropped: Option<String>,
}

/// [`recover_with_values`], then the Local lift: the nodes some frame's
/// Local labels ([`crate::local::frame_labels`]) prove ran, but the global
/// labels leave Maybe, are added to the staged report as single-node
/// `obsYes` traces in one more recovery, whose labels are merged (the
/// solver then propagates them: a call that ran entered its callee, the
/// dominators of a node that ran ran, ...). Only when there are such
/// nodes. A Local Yes holds on the real path (the Local walk's only
/// context is the global No labels, which are sound; see `local.rs`), so
/// the report with them is still true of the crash; if the solver finds
/// it impossible (a graph that misses control flow) or its labels
/// contradict the others, every lifted node is dropped and listed
/// ([`Origin::Lift`]).
///
/// Not part of [`recover_with_values`]: a Local Yes rests on the stack
/// being exactly the pending calls (true of a crash), which the
/// context-insensitive solvers' own semantics (the stack as a
/// subsequence) does not assume, so their labels are kept exactly theirs
/// there; `analyze` and `batch` print the lifted labels.
pub fn recover_lifted(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<(Recovery, Lift), SolveError> {
    recover_lifted_keeping(s, g, report, how).map(|(rec, lift, _)| (rec, lift))
}

/// [`recover_lifted`], and the labels before the lift (those of
/// [`recover_staged`]): `suggest` bounds what the lifted labels decide
/// from those (the lift only adds to them).
pub fn recover_lifted_keeping(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<(Recovery, Lift, Vec<Label>), SolveError> {
    recover_lifted_framed(s, g, report, how).map(|(rec, lift, before, _)| (rec, lift, before))
}

/// [`recover_lifted_keeping`], and the frames' Local labels under the
/// labels before the lift, which the lift read (for
/// [`crate::local::frame_labels_reusing`]).
pub(crate) fn recover_lifted_framed(
    s: &(dyn Solver + Sync),
    g: &Icfg,
    report: &Report,
    how: Staging,
) -> Result<(Recovery, Lift, Vec<Label>, Vec<crate::local::FrameLabels>), SolveError> {
    let how = Staging {
        lifted: true,
        ..how
    };
    let (mut rec, base) = staged_by(s, g, report, how)?;
    let before = rec.labels.clone();
    let t = std::time::Instant::now();
    let frames = match &base.frames {
        Some(prior) => {
            rec.stats.push(("lift_frames_beside", 1));
            crate::local::frame_labels_reusing(g, report, &rec.labels, &base.labels, prior)
        }
        None => crate::local::frame_labels(g, report, &rec.labels),
    };
    let lift = add_lift(s, g, report, &base, &mut rec, how, &frames);
    rec.stats.push(("staged_lift_ms", ms(t)));
    Ok((rec, lift, before, frames))
}

/// The lift stage of [`recover_lifted`] on `rec`, the labels of the
/// staged recovery of `report` whose base (no values) is `base`.
fn add_lift(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    base: &Base,
    rec: &mut Recovery,
    how: Staging,
    frames: &[crate::local::FrameLabels],
) -> Lift {
    let mut lift = Lift::default();
    let mut fed = vec![false; g.num_nodes()];
    for f in frames {
        for &(n, l) in &f.labels {
            if l == Label::Yes && rec.labels[n.index()] == Label::Maybe && !fed[n.index()] {
                fed[n.index()] = true;
                lift.nodes.push((f.frame, n));
            }
        }
    }
    rec.stats.push(("lift_nodes", lift.nodes.len() as u64));
    if lift.nodes.is_empty() {
        return lift;
    }
    if how.marked {
        // Each lifted node ran: what that implies is marked.
        let mut imp = crate::local::Implied::new(g);
        let (mut yes, mut no) = (Vec::new(), Vec::new());
        for &(_, n) in &lift.nodes {
            match implied_by(&mut imp, report, &rec.labels, &[n]) {
                Some((y, o)) => {
                    yes.extend(y);
                    no.extend(o);
                }
                None => yes.push(n),
            }
        }
        match mark(g, report, &mut rec.labels, &yes, &no) {
            Ok(k) => lift.gained = k,
            Err(why) => {
                rec.weakened.push(Weakening {
                    origin: Origin::Lift,
                    how: format!(
                        "the {} Local-Yes nodes fed back as ran: dropped: {why}",
                        lift.nodes.len()
                    ),
                });
                lift.dropped = Some(why.to_string());
            }
        }
        rec.undecided
            .retain(|n| rec.labels[n.index()] == Label::Maybe);
        rec.stats.push(("lift_gained", lift.gained as u64));
        return lift;
    }
    let first = base.report.obs_yes.len();
    let mut r = base.report.clone();
    r.obs_yes
        .extend(lift.nodes.iter().map(|&(_, n)| ran(NodeSet::one(n))));
    // The lifted report adds to the base's: its labels are a sound hint
    // (not `rec`'s, which the values decided too).
    let why = match stage(s, g, &r, &base.labels, how) {
        Ok(more) if conflicts(&rec.labels, &more.labels) => {
            "their labels contradict those without them".to_string()
        }
        Ok(more) => {
            let maybe = |l: &[Label]| l.iter().filter(|&&x| x == Label::Maybe).count();
            let before = maybe(&rec.labels);
            merge(&mut rec.labels, &more.labels);
            lift.gained = before - maybe(&rec.labels);
            for mut w in more.weakened {
                if matches!(w.origin, Origin::ObsYes(k) if k >= first) {
                    w.origin = Origin::Lift;
                }
                if !rec.weakened.contains(&w) {
                    rec.weakened.push(w);
                }
            }
            rec.undecided
                .retain(|n| rec.labels[n.index()] == Label::Maybe);
            rec.stats.push(("lift_gained", lift.gained as u64));
            return lift;
        }
        Err(SolveError::Infeasible { .. }) => {
            "with the rest of the report they are impossible (the graph misses control flow?)"
                .to_string()
        }
        Err(e) => format!("their recovery failed: {e}"),
    };
    rec.weakened.push(Weakening {
        origin: Origin::Lift,
        how: format!(
            "the {} Local-Yes nodes fed back as ran: dropped: {why}",
            lift.nodes.len()
        ),
    });
    lift.dropped = Some(why);
    lift
}

/// Whether every node `v`'s automaton reads is decided by `labels` (its
/// writes and its branch tests' nodes all Yes or No). Such a value is not
/// staged: its constraint can only tell apart paths by the order and the
/// number of times they run nodes that every path runs, and on the
/// harness's cores (bzip2 plain, function-flag, block-flag and `-O2`
/// cores: 362 stages) not one such stage decided a node, while they were
/// the slowest stages (up to 2.8 s of a block-flag core's 2.9 s).
/// Leaving a constraint out is sound: the labels hold for a weaker
/// report.
fn reads_only_decided(v: &LastWrite, labels: &[Label]) -> bool {
    v.alphabet()
        .iter()
        .all(|n| labels[n.index()] != Label::Maybe)
}

enum Simplified {
    Satisfied,
    Impossible,
    Keep(LastWrite),
}

/// A value with sound labels: its writes that never run removed.
fn simplify(v: &LastWrite, labels: &[Label]) -> Simplified {
    let runs = |n: &crate::ids::NodeId| labels[n.index()] != Label::No;
    let writes: Vec<_> = v.writes.nodes().iter().copied().filter(runs).collect();
    let bad: Vec<_> = v.bad.iter().copied().filter(runs).collect();
    let good_sure = v.good().any(|n| labels[n.index()] == Label::Yes);
    let good_any = v.good().any(|n| runs(&n));
    // A test whose branch never runs says nothing, nor one whose other
    // successors never run (the branch then goes to `taken` on every
    // path the labels allow). Another test's claim (after its branch, the
    // next node of the alphabet is its `taken`) holds of the real path
    // whatever else the alphabet holds, so dropping these stays sound.
    let tests: Vec<_> = v
        .tests
        .iter()
        .filter(|t| runs(&t.branch) && t.others.iter().any(runs))
        .cloned()
        .collect();
    if bad.is_empty() && (!v.need || good_sure) && tests.is_empty() {
        return Simplified::Satisfied;
    }
    if v.need && !good_any {
        return Simplified::Impossible;
    }
    match crate::report::NodeSet::new(writes) {
        Some(writes) => Simplified::Keep(LastWrite {
            writes,
            bad,
            need: v.need,
            what: v.what.clone(),
            tests,
        }),
        // No write runs and none is needed.
        None if tests.is_empty() => Simplified::Satisfied,
        // No write runs: the entry (a local's) or nothing resets the
        // tests; keep them over an empty write set, which `NodeSet` cannot
        // hold: keep the original writes (none of them runs anyway).
        None => Simplified::Keep(LastWrite {
            writes: v.writes.clone(),
            bad: v.bad.clone(),
            need: v.need,
            what: v.what.clone(),
            tests,
        }),
    }
}

/// Whether two label vectors decide a node in opposite ways (then no
/// execution satisfies both reports).
fn conflicts(a: &[Label], b: &[Label]) -> bool {
    a.iter()
        .zip(b)
        .any(|(&x, &y)| x != Label::Maybe && y != Label::Maybe && x != y)
}

/// Adds to `into` every label `from` decides (both sound, and not in
/// conflict); how many were Maybe in `into`.
fn merge(into: &mut [Label], from: &[Label]) -> u64 {
    let mut gained = 0;
    for (i, (a, &b)) in into.iter_mut().zip(from).enumerate() {
        if *a == Label::Maybe {
            gained += u64::from(b != Label::Maybe);
            *a = b;
        } else {
            debug_assert!(
                b == Label::Maybe || b == *a,
                "sound labels disagree at node {i}: {a:?} then {b:?}"
            );
        }
    }
    gained
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A value stage starts only if the slowest one so far fits in the
    /// budget left: with 50 ms left, none after one that took 100 ms
    /// (listed as out of budget), the next one after one of 1 ms; and
    /// the stage's own time is what counts next.
    #[test]
    fn no_stage_starts_where_the_slowest_one_would_not_fit() {
        use crate::icfg::{IcfgBuilder, NodeKind};
        let mut b = IcfgBuilder::new();
        let f = b.function("main");
        let e = b.test_node("e", NodeKind::Entry, f, 1);
        let x = b.test_node("x", NodeKind::Statement, f, 2);
        b.set_start(e);
        b.add_flow_edge(e, x);
        let g = b.build().unwrap();
        let r = Report {
            crash: NodeSet::new(vec![x]),
            ..Report::default()
        };
        let s = crate::cs::Cs::<crate::fsa::Fsa> {
            best: true,
            ..Default::default()
        };
        let hint = vec![Label::Maybe; g.num_nodes()];
        let how = Staging::default();
        let run = |slowest: &Slowest| {
            crate::budget::with_deadline(Some(Instant::now() + Duration::from_millis(50)), || {
                value_stage(&s, &g, &r, &hint, how, slowest)
            })
        };
        let slow = Slowest::default();
        slow.saw(Duration::from_millis(100));
        match run(&slow) {
            Err(e) => assert!(out_of_budget(&e), "{e}"),
            Ok(_) => panic!("a stage started with 50 ms left after one of 100 ms"),
        }
        let fast = Slowest::default();
        fast.saw(Duration::from_millis(1));
        let res = run(&fast);
        assert!(
            !matches!(&res, Err(e) if out_of_budget(e)),
            "{:?}",
            res.err()
        );
        assert!(fast.get() >= Duration::from_millis(1));
        assert!(fast.get() < Duration::from_millis(100));
    }

    /// A value stage's expected cost is twice the lifted residue
    /// refinement's time where there was one and stages are lifted, at
    /// most the base's bulk pass; the base's bulk pass otherwise.
    #[test]
    fn a_lifted_stage_costs_what_a_lifted_refinement_took() {
        let how = Staging::default();
        let unlifted = Staging { lift: false, ..how };
        // (base bulk pass, residue refinement lifted, its time), the
        // staging, the cost expected (ms).
        let cases = [
            ((90, Some(1), Some(20)), how, 40),
            ((90, Some(0), Some(20)), how, 90),
            ((90, None, None), how, 90),
            ((60, Some(1), Some(40)), how, 60),
            ((90, Some(1), Some(20)), unlifted, 90),
        ];
        for ((bulk, lifted, refine), how, want) in cases {
            let mut stats = vec![("cs_bulk_ms", bulk)];
            stats.extend(lifted.map(|l| ("residue_lifted", l)));
            stats.extend(refine.map(|r| ("residue_refine_ms", r)));
            let rec = Recovery {
                labels: Vec::new(),
                weakened: Vec::new(),
                undecided: Vec::new(),
                stats,
            };
            assert_eq!(
                expected_stage_cost(&rec, how),
                Duration::from_millis(want),
                "{bulk} {lifted:?} {refine:?}"
            );
        }
    }

    /// The residue's budget is a multiple of the analysis so far when it
    /// began at `started` (2 s ago: 1 s at 0.5), of the base recovery
    /// otherwise (10 ms: the 100 ms floor); the value stages' is always
    /// of the base recovery.
    #[test]
    fn the_budget_counts_the_analysis_from_its_start() {
        let base = Duration::from_millis(10);
        let how = Staging {
            value_budget: Some(0.5),
            ..Staging::default()
        };
        let left = |how: Staging| {
            evidence_deadline(how, base, true)
                .unwrap()
                .saturating_duration_since(Instant::now())
        };
        assert!(left(how) <= Duration::from_millis(VALUE_FLOOR_MS));
        let Some(started) = Instant::now().checked_sub(Duration::from_secs(2)) else {
            return;
        };
        let since = Staging {
            started: Some(started),
            ..how
        };
        let l = left(since);
        assert!(
            l > Duration::from_millis(900) && l <= Duration::from_millis(1001),
            "{l:?}"
        );
        // The value stages' budget: of the base recovery alone.
        let values = evidence_deadline(since, base, false)
            .unwrap()
            .saturating_duration_since(Instant::now());
        assert!(values <= Duration::from_millis(VALUE_FLOOR_MS));
        // No budget: no deadline.
        let none = Staging {
            value_budget: None,
            ..since
        };
        assert!(evidence_deadline(none, base, true).is_none());
    }

    /// A value stage needs its cost left before the deadline to start.
    #[test]
    fn a_stage_that_cannot_finish_is_not_started() {
        let d = Instant::now() + Duration::from_secs(5);
        crate::budget::with_deadline(Some(d), || {
            assert!(within_budget_for(Duration::from_secs(1)).is_ok());
            let e = within_budget_for(Duration::from_secs(60)).unwrap_err();
            assert!(out_of_budget(&e), "{e:?}");
        });
        // No deadline: every stage starts.
        assert!(within_budget_for(Duration::from_secs(60)).is_ok());
    }
}
