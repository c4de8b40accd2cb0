//! The context-sensitive solver: calls and returns matched, the crash
//! stack exactly the pending calls (PLDI 2017's s-VPA semantics, Definition
//! 3, for the stack).
//!
//! [`Cs`] runs a *base* solver (FSA by default) on the whole report, then
//! refines its labels with the context-sensitive analysis of the stack in
//! [`frames`] over the graph without the nodes the base proved never ran.
//! Both are sound, so the combination is: a node is Yes if either proves
//! it ran on every consistent execution, No if either proves it ran on
//! none. The context-sensitive part reads the stack, the crash and the
//! nodes known not to have run; the other constraints (traces, ambiguous
//! sets) it leaves to the base, so its labels are never less precise than
//! the base's and are exact for reports of a stack and a crash.
//!
//! With [`Cs::exact`], bulk recovery then decides the nodes still Maybe
//! in the context-sensitive semantics with every constraint, by the
//! elimination searches of `close::close`.
//!
//! Queries are answered in the context-sensitive semantics by
//! [`product`] (tabulation with the constraint automata), with a valid
//! matched path as witness (on graphs with non-local jumps the search
//! over-approximates, see [`product`]); where it exceeds the limits, by
//! the base solver, with a weakening that says so.
//!
//! `best` is the same combination, but when the context-sensitive part
//! finds no path (the stack does not fit the graph's calls: a frame the
//! backtrace reader could not place, an inaccurate call graph) it keeps the
//! base's answer and says so, where `cs` reports the stack impossible.
//! `best` also adds the default UTL's labels of the report to the base's
//! before refining them, so that it decides every node UTL decides
//! ([`Solver::refines_utl`], which `suggest` relies on for proven
//! bounds); on the reports tried UTL adds nothing to FSA's labels, at
//! about a tenth of FSA's cost.

pub(crate) mod bulk;
mod close;
pub(crate) mod frames;
mod hyper;
mod lift;
mod limits;
pub mod product;
mod seen;

pub use lift::StageBases;
pub use limits::CsLimits;

use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{Origin, Report};
use crate::solver::{Answer, Checked, Label, Query, Recovery, SolveError, Solver, Weakening};
use frames::{CsFail, FrameGraph, SameLevel};

/// The context-sensitive solver over a base solver (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Cs<B> {
    /// The solver whose labels are refined.
    pub base: B,
    /// Limits.
    pub limits: CsLimits,
    /// `best`: fall back to the base when the stack has no valid path.
    pub best: bool,
    /// Bulk recovery decides the nodes left Maybe exactly, by the searches
    /// of [`product`] (see `close::close`): slower, by one search per
    /// path needed to clear the candidates.
    pub exact: bool,
}

/// Solver counters, as in [`Recovery::stats`].
pub type Stats = Vec<(&'static str, u64)>;

/// The labels of the context-sensitive part alone, for the report's stack
/// and crash, with the nodes in `removed` known not to have run.
pub fn stack_labels(
    g: &Icfg,
    report: &Report,
    removed: &BitSet,
    limits: &CsLimits,
) -> Result<(Vec<Label>, Stats), SolveError> {
    let sl = SameLevel::compute(g, removed);
    match FrameGraph::compute(g, report, removed, &sl, limits) {
        Ok(fg) => {
            let labels = Label::all_from(g.num_nodes(), &fg.may, &fg.must);
            let stats = vec![
                ("cs_states", fg.states as u64),
                ("cs_kept", fg.kept as u64),
                ("cs_invoked_functions", fg.invoked as u64),
            ];
            Ok((labels, stats))
        }
        Err(CsFail::Infeasible) => Err(SolveError::Infeasible {
            culprit: stack_culprit(g, report, limits),
        }),
        Err(CsFail::TooLarge(what)) => Err(SolveError::Limit(format!(
            "the context-sensitive frame graph exceeds {what}"
        ))),
    }
}

/// The first frame (or the crash) whose addition makes the stack
/// impossible.
fn stack_culprit(g: &Icfg, report: &Report, limits: &CsLimits) -> Origin {
    let none = BitSet::new(g.num_nodes());
    let sl = SameLevel::compute(g, &none);
    for i in 1..=report.stack.len() {
        let keep: Vec<Origin> = (0..i).map(Origin::Frame).collect();
        let r = report.restrict(&keep);
        if matches!(
            FrameGraph::compute(g, &r, &none, &sl, limits),
            Err(CsFail::Infeasible)
        ) {
            return Origin::Frame(i - 1);
        }
    }
    Origin::Crash
}

impl<B: Solver> Cs<B> {
    /// The base's labels `rec` refined by the frame graph, the bulk pass
    /// and (with `exact`) the closure, in that order.
    /// `hint`: labels known sound for `report` (see
    /// [`Solver::recover_hinted`]), read by the bulk pass only.
    fn refine(
        &self,
        g: &Icfg,
        report: &Report,
        mut rec: Recovery,
        hint: Option<&[Label]>,
    ) -> Result<Recovery, SolveError> {
        let base = rec.labels.clone();
        let deadline = self.limits.timeout.map(|t| std::time::Instant::now() + t);
        let steps = [Self::frames, Self::bulk, Self::close];
        let phases = ["cs_frames_ms", "cs_bulk_ms", "cs_close_ms"];
        for (i, step) in steps.into_iter().enumerate() {
            // The frame graph always runs: it also finds a stack that fits
            // no valid path.
            if i > 0 && !rec.labels.contains(&Label::Maybe) {
                break;
            }
            let t = std::time::Instant::now();
            let done = step(self, g, report, &mut rec, deadline, hint);
            rec.stats.push((phases[i], t.elapsed().as_millis() as u64));
            match done {
                Ok(Step::Done) => {}
                Ok(Step::Stop) => return Ok(rec),
                Err(Conflict(_)) if self.best => {
                    // The base's labels, as if cs had not run: the stack
                    // (with the rest) fits no valid path of this graph.
                    rec.labels = base;
                    rec.stats.push(("cs_conflict", 1));
                    let how = format!(
                        "no valid context-sensitive path is consistent with the report; labels of the {} solver kept",
                        self.base.name()
                    );
                    weaken(&mut rec, how);
                    return Ok(rec);
                }
                Err(Conflict(culprit)) => {
                    let culprit = culprit
                        .or_else(|| self.culprit(g, report))
                        .unwrap_or(Origin::Crash);
                    return Err(SolveError::Infeasible { culprit });
                }
            }
        }
        rec.undecided
            .retain(|n| rec.labels[n.index()] == Label::Maybe);
        Ok(rec)
    }

    /// The frame graph's labels (the stack, the crash and the nodes known
    /// not to run).
    fn frames(
        &self,
        g: &Icfg,
        report: &Report,
        rec: &mut Recovery,
        _deadline: Option<std::time::Instant>,
        _hint: Option<&[Label]>,
    ) -> Result<Step, Conflict> {
        let removed = removed_by(g, report, &rec.labels);
        let (labels, stats) = match stack_labels(g, report, &removed, &self.limits) {
            Ok(x) => x,
            // The stack alone: its culprit is known.
            Err(SolveError::Infeasible { culprit }) => return Err(Conflict(Some(culprit))),
            Err(e) => {
                let how = format!(
                    "context-sensitive refinement skipped ({e}); labels of the {} solver kept",
                    self.base.name()
                );
                weaken(rec, how);
                rec.stats.push(("cs_skipped", 1));
                return Ok(Step::Stop);
            }
        };
        let (mut yes, mut no) = (0u64, 0u64);
        for (v, l) in labels.into_iter().enumerate() {
            match (rec.labels[v], l) {
                // Both sound: no execution is consistent at all.
                (Label::Yes, Label::No) | (Label::No, Label::Yes) => return Err(Conflict(None)),
                (Label::Maybe, Label::Yes) => {
                    rec.labels[v] = Label::Yes;
                    yes += 1;
                }
                (Label::Maybe, Label::No) => {
                    rec.labels[v] = Label::No;
                    no += 1;
                }
                _ => {}
            }
        }
        rec.stats.extend(stats);
        rec.stats.push(("cs_yes_added", yes));
        rec.stats.push(("cs_no_added", no));
        Ok(Step::Done)
    }

    /// The bulk pass ([`bulk`]): the other constraints too.
    fn bulk(
        &self,
        g: &Icfg,
        report: &Report,
        rec: &mut Recovery,
        deadline: Option<std::time::Instant>,
        hint: Option<&[Label]>,
    ) -> Result<Step, Conflict> {
        self.bulk_pass(g, report, rec, deadline, (hint, None))
    }

    /// [`Cs::bulk`]; with `lean`, `rec`'s labels are the hint's, and only
    /// the report's observed nodes and `lean`'s count as known to run
    /// ([`Cs::refine_lean`]).
    fn bulk_pass(
        &self,
        g: &Icfg,
        report: &Report,
        rec: &mut Recovery,
        deadline: Option<std::time::Instant>,
        (hint, lean): (Option<&[Label]>, Option<&[NodeId]>),
    ) -> Result<Step, Conflict> {
        if self.limits.bulk_states == 0 {
            return Ok(Step::Done);
        }
        let b = bulk::refine(
            g,
            report,
            &mut rec.labels,
            &self.limits,
            deadline,
            self.limits.bulk_states,
            (hint, lean),
        );
        if b.infeasible {
            return Err(Conflict(None));
        }
        if let Some(why) = b.partial {
            rec.stats.push(("cs_bulk_skipped", 1));
            let how = format!(
                "context-sensitive bulk pass skipped ({why}); labels of the frame graph and the {} solver kept",
                self.base.name()
            );
            weaken(rec, how);
        }
        if let Some(why) = &b.dropped_why {
            let how = format!(
                "context-sensitive bulk pass without the report's {} automata ({why}); they count through the {} solver's labels",
                b.automata_dropped,
                self.base.name()
            );
            weaken(rec, how);
        }
        rec.stats
            .push(("cs_bulk_automata_dropped", b.automata_dropped as u64));
        rec.stats.push(("cs_bulk_states", b.states as u64));
        rec.stats.push(("cs_bulk_yes", b.yes));
        rec.stats.push(("cs_bulk_no", b.no));
        rec.stats.push(("cs_bulk_relaxed", b.relaxed as u64));
        rec.stats.push(("cs_bulk_must_left", b.must_left as u64));
        rec.stats.push(("cs_bulk_must_off", b.must_off as u64));
        rec.stats.push(("cs_bulk_lifted", u64::from(b.lifted)));
        let phases = [
            "cs_bulk_prepare_ms",
            "cs_bulk_explore_ms",
            "cs_bulk_may_ms",
            "cs_bulk_filter_ms",
            "cs_bulk_must_ms",
        ];
        rec.stats.extend(phases.into_iter().zip(b.ms));
        Ok(Step::Done)
    }

    /// With `exact`, the closure's searches (`close::close`) decide
    /// what is still Maybe.
    fn close(
        &self,
        g: &Icfg,
        report: &Report,
        rec: &mut Recovery,
        deadline: Option<std::time::Instant>,
        _hint: Option<&[Label]>,
    ) -> Result<Step, Conflict> {
        if !self.exact {
            return Ok(Step::Done);
        }
        let c = close::close(g, report, &mut rec.labels, &self.limits, deadline);
        if c.infeasible {
            return Err(Conflict(None));
        }
        if let Some(why) = c.stopped {
            let left = rec.labels.iter().filter(|&&l| l == Label::Maybe).count();
            weaken(
                rec,
                format!("context-sensitive closure stopped ({why}); {left} nodes left Maybe"),
            );
        }
        rec.stats.push(("cs_close_searches", c.searches));
        rec.stats.push(("cs_close_yes", c.yes));
        rec.stats.push(("cs_close_no", c.no));
        Ok(Step::Done)
    }
}

/// Notes in `rec` that a step kept labels it could not refine (why).
fn weaken(rec: &mut Recovery, how: String) {
    rec.weakened.push(Weakening {
        origin: Origin::Crash,
        how,
    });
}

/// How a step of [`Cs::refine`] ended.
enum Step {
    /// Go on with the next step.
    Done,
    /// Keep the labels as they are now (a step was skipped, said so).
    Stop,
}

/// A step found no consistent valid path (both its labels and the base's
/// are sound, so they conflict only when there is none), and the
/// constraint to blame if it knows it (else the searches find it).
struct Conflict(Option<Origin>);

impl<B: Solver> Solver for Cs<B> {
    fn name(&self) -> &'static str {
        if self.best {
            "best"
        } else {
            "cs"
        }
    }

    fn check(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Checked, SolveError> {
        let impossible = Checked {
            answer: Answer::Impossible,
            weakened: Vec::new(),
            witness: None,
        };
        if let Some(Answer::Impossible) = self.decided(g, report, query)? {
            return Ok(impossible);
        }
        let why = match self.search(g, report, query, true) {
            Ok(a) => {
                return Ok(Checked {
                    answer: a.answer,
                    weakened: a.weakened,
                    witness: a.witness,
                })
            }
            Err(product::Unsupported(why)) => why,
        };
        let mut c = self.base.check(g, report, query)?;
        c.weakened.push(Weakening {
            origin: Origin::Query,
            how: format!("answered by the {} solver: {why}", self.base.name()),
        });
        // Keep only a witness that is a valid path here too.
        if let Some(w) = &c.witness {
            if !valid_path(g, report, w) {
                c.witness = None;
                c.weakened.push(Weakening {
                    origin: Origin::Query,
                    how: format!(
                        "no witness: the {} solver's path does not match calls with returns or the stack",
                        self.base.name()
                    ),
                });
            }
        }
        Ok(c)
    }

    fn possible(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Answer, SolveError> {
        if let Some(Answer::Impossible) = self.decided(g, report, query)? {
            return Ok(Answer::Impossible);
        }
        match self.search(g, report, query, false) {
            Ok(a) => Ok(a.answer),
            Err(_) => self.base.possible(g, report, query),
        }
    }

    fn recover(&self, g: &Icfg, report: &Report) -> Result<Recovery, SolveError> {
        self.recover_with(g, report, None)
    }

    /// The bulk pass skips the candidates `hint` decides (and knows its
    /// Yes nodes ran); the base does not read it.
    fn recover_hinted(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
    ) -> Result<Recovery, SolveError> {
        self.recover_with(g, report, Some(hint))
    }

    /// The bulk pass alone on `hint` ([`Cs::refine_lean`]).
    fn refine_hint(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
        known: &[NodeId],
    ) -> Result<Recovery, SolveError> {
        self.refine_lean(g, report, hint, known).ok_or_else(|| {
            SolveError::Unsupported(
                "the context-sensitive bulk pass gave no answer of its own".into(),
            )
        })
    }

    fn refines_utl(&self) -> bool {
        self.best
    }
}

impl<B: Solver> Cs<B> {
    /// Bulk recovery, with the frame graph beside the base when the
    /// limits allow it, and `hint` for the bulk pass.
    fn recover_with(
        &self,
        g: &Icfg,
        report: &Report,
        hint: Option<&[Label]>,
    ) -> Result<Recovery, SolveError> {
        if self.limits.beside {
            if let Some(rec) = self.recover_beside_base(g, report, hint)? {
                return Ok(rec);
            }
        }
        let t = std::time::Instant::now();
        let mut rec = self.base.recover(g, report)?;
        rec.stats
            .push(("cs_base_ms", t.elapsed().as_millis() as u64));
        if self.best {
            self.merge_utl(g, report, &mut rec)?;
        }
        self.refine(g, report, rec, hint)
    }

    /// `hint`'s labels refined by the bulk pass alone, with every
    /// automaton of `report`: no base solver, UTL or frame graph, whose
    /// labels of a report that adds a value to the hint's would mostly
    /// repeat the hint's (issue 35: they took half of each value stage,
    /// and the value stages kept the same labels without them on the
    /// harness's cores). Known to run are the report's observed nodes and
    /// `known`, not every Yes node of `hint`: the recovery that gave
    /// those used them already (on a SQLite core, each stage took 3-4x
    /// longer with them, for no label of its value). `None` where the
    /// bulk pass gives no answer of its own: no consistent valid path
    /// (unhinted, `best` falls back to the base's labels then), or the
    /// pass skipped.
    fn refine_lean(
        &self,
        g: &Icfg,
        report: &Report,
        hint: &[Label],
        known: &[NodeId],
    ) -> Option<Recovery> {
        if self.limits.bulk_states == 0 {
            return None;
        }
        let t = std::time::Instant::now();
        let mut rec = Recovery {
            labels: hint.to_vec(),
            weakened: Vec::new(),
            undecided: Vec::new(),
            stats: Vec::new(),
        };
        let deadline = self.limits.timeout.map(|t| std::time::Instant::now() + t);
        self.bulk_pass(g, report, &mut rec, deadline, (Some(hint), Some(known)))
            .ok()?;
        if rec.has_stat("cs_bulk_skipped") {
            return None;
        }
        rec.stats
            .push(("cs_lean_ms", t.elapsed().as_millis() as u64));
        Some(rec)
    }

    /// Bulk recovery with the frame graph beside the base
    /// ([`Solver::recover_beside`]): the base leaves to the frame graph the
    /// Maybe nodes it decides from the base's first labels, whose labels
    /// are merged before [`Cs::refine`]. `None` when the frame graph then
    /// conflicts with the base, or the refinement failed or kept the
    /// base's labels: the caller recovers as without it, so the base's
    /// own labels are never ones left unconfirmed for the frame graph.
    fn recover_beside_base(
        &self,
        g: &Icfg,
        report: &Report,
        hint: Option<&[Label]>,
    ) -> Result<Option<Recovery>, SolveError> {
        let t = std::time::Instant::now();
        let beside = FramesBeside {
            cs: self,
            g,
            report,
            hint,
            hint_taken: Default::default(),
            frames: Default::default(),
            utl: Default::default(),
        };
        let mut rec = self.base.recover_beside(g, report, &beside)?;
        rec.stats
            .push(("cs_base_ms", t.elapsed().as_millis() as u64));
        let taken = beside.hint_taken.get();
        let (frames, utl) = (beside.frames.into_inner(), beside.utl.into_inner());
        let (mut yes, mut no) = (0u64, 0u64);
        for (l, &f) in rec.labels.iter_mut().zip(&frames) {
            match (*l, f) {
                (Label::Yes, Label::No) | (Label::No, Label::Yes) => return Ok(None),
                (Label::Maybe, Label::Yes) => yes += 1,
                (Label::Maybe, Label::No) => no += 1,
                _ => continue,
            }
            *l = f;
        }
        rec.stats.push(("cs_beside_yes", yes));
        rec.stats.push(("cs_beside_no", no));
        // UTL's labels are merged unless the base took the hint instead of
        // computing them and its labels are exact (nothing weakened or
        // undecided: with the frame graph's, they decide every node UTL,
        // being sound, decides).
        let exact = rec.weakened.is_empty() && rec.undecided.is_empty();
        if self.best && (utl.is_some() || !taken || !exact) {
            self.merge_utl_from(g, report, &mut rec, utl)?;
        }
        // An impossible refinement is decided again without it.
        let Ok(rec) = self.refine(g, report, rec, hint) else {
            return Ok(None);
        };
        let kept_base = rec
            .stats
            .iter()
            .any(|&(k, _)| k == "cs_conflict" || k == "cs_skipped");
        Ok((!kept_base).then_some(rec))
    }
}

/// `best`'s side of [`Solver::recover_beside`]: the frame graph's labels
/// (the nodes the base's labels say No removed), kept for the merge, and
/// UTL's labels of the report when the base hands them over.
struct FramesBeside<'c, 'g, B> {
    cs: &'c Cs<B>,
    g: &'g Icfg,
    report: &'g Report,
    hint: Option<&'g [Label]>,
    /// Whether the base asked for `hint` (see [`crate::solver::Beside::hint`]).
    hint_taken: std::cell::Cell<bool>,
    frames: std::cell::RefCell<Vec<Label>>,
    utl: std::cell::RefCell<Option<Vec<Label>>>,
}

impl<B> crate::solver::Beside for FramesBeside<'_, '_, B> {
    fn labels(&self, sound: &[Label]) -> Vec<Label> {
        let removed = removed_by(self.g, self.report, sound);
        let mine = match stack_labels(self.g, self.report, &removed, &self.cs.limits) {
            Ok((mine, _)) => mine,
            Err(_) => Vec::new(),
        };
        self.frames.replace(mine.clone());
        mine
    }

    fn utl(&self, labels: &[Label]) {
        self.utl.replace(Some(labels.to_vec()));
    }

    fn hint(&self) -> Option<&[Label]> {
        self.hint_taken.set(self.hint.is_some());
        self.hint
    }
}

/// The nodes known not to run: those labelled No, and single-node
/// `obsNo` observations.
fn removed_by(g: &Icfg, report: &Report, labels: &[Label]) -> BitSet {
    let mut removed = BitSet::new(g.num_nodes());
    for (v, &l) in labels.iter().enumerate() {
        if l == Label::No {
            removed.insert(v);
        }
    }
    for s in &report.obs_no {
        if let Some(n) = s.single() {
            removed.insert(n.index());
        }
    }
    removed
}

impl<B: Solver> Cs<B> {
    /// `best`: the default UTL's labels of the report added to the base's
    /// (both sound), before the refinement, so that `best` decides every
    /// node UTL decides ([`Solver::refines_utl`]; the refinement only
    /// decides Maybe nodes, and its fallback keeps these labels). Its
    /// cost is one UTL run (a tenth of an FSA run or less). UTL finding
    /// the report impossible, or a node decided both ways, is an
    /// impossible report.
    fn merge_utl(&self, g: &Icfg, report: &Report, rec: &mut Recovery) -> Result<(), SolveError> {
        self.merge_utl_from(g, report, rec, None)
    }

    /// [`Cs::merge_utl`], with UTL's labels of `report` when the base
    /// already computed them ([`crate::solver::Beside::utl`]; issue 25:
    /// FSA runs UTL on an ambiguous report to reduce it).
    fn merge_utl_from(
        &self,
        g: &Icfg,
        report: &Report,
        rec: &mut Recovery,
        known: Option<Vec<Label>>,
    ) -> Result<(), SolveError> {
        let t = std::time::Instant::now();
        let reused = known.is_some();
        let labels = match known {
            Some(l) => l,
            None => match crate::utl::Utl::default().recover(g, report) {
                Ok(u) => u.labels,
                Err(e @ SolveError::Infeasible { .. }) => return Err(e),
                // A limit of UTL: nothing to add.
                Err(_) => return Ok(()),
            },
        };
        rec.stats.push(("cs_utl_reused", u64::from(reused)));
        let mut added = 0u64;
        for (l, &x) in rec.labels.iter_mut().zip(&labels) {
            match (*l, x) {
                (_, Label::Maybe) => {}
                (Label::Maybe, x) => {
                    *l = x;
                    added += 1;
                }
                (a, b) if a != b => {
                    let culprit = self.culprit(g, report).unwrap_or(Origin::Crash);
                    return Err(SolveError::Infeasible { culprit });
                }
                _ => {}
            }
        }
        rec.stats.push(("cs_utl_added", added));
        rec.stats
            .push(("cs_utl_ms", t.elapsed().as_millis() as u64));
        Ok(())
    }

    /// The context-sensitive search of [`product`]. With `best`, an
    /// impossible answer because the report itself has no valid path (the
    /// stack does not fit the graph's calls) is left to the base.
    fn search(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<product::CsAnswer, product::Unsupported> {
        let a = product::check(g, report, query, &self.limits, witness)?;
        if self.best && a.answer == Answer::Impossible {
            let alone = match query {
                None => true,
                Some(_) => {
                    product::check(g, report, None, &self.limits, false)?.answer
                        == Answer::Impossible
                }
            };
            if alone {
                return Err(product::Unsupported(
                    "the report has no valid context-sensitive path".into(),
                ));
            }
        }
        Ok(a)
    }

    /// What the context-sensitive labels alone say about a query:
    /// `Some(Impossible)` when the report is impossible with the stack, or
    /// the query asks whether a node that is No ran (or whether a Yes one
    /// was skipped); `None` when the base must answer.
    fn decided(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
    ) -> Result<Option<Answer>, SolveError> {
        let mut removed = BitSet::new(g.num_nodes());
        for s in &report.obs_no {
            if let Some(n) = s.single() {
                removed.insert(n.index());
            }
        }
        let labels = match stack_labels(g, report, &removed, &self.limits) {
            Ok((l, _)) => l,
            Err(SolveError::Infeasible { .. }) if !self.best => {
                return Ok(Some(Answer::Impossible))
            }
            Err(_) => return Ok(None),
        };
        Ok(match query {
            Some(Query::MayRun(n)) if labels[n.index()] == Label::No => Some(Answer::Impossible),
            Some(Query::MaySkip(n)) if labels[n.index()] == Label::Yes => Some(Answer::Impossible),
            _ => None,
        })
    }
}

/// Whether `path` (from the start) is a valid path for the report's stack:
/// every return goes back to its call's return site, and the calls pending
/// at the end are the report's frames (unreported ones only at gaps, see
/// [`frames`]). A non-local jump pops to the nearest activation of its
/// target's function (so a valid path may be rejected, never the reverse).
pub fn valid_path(g: &Icfg, report: &Report, path: &[crate::ids::NodeId]) -> bool {
    use crate::icfg::EdgeKind;
    use crate::ids::NodeId;
    if path.first() != Some(&g.start()) {
        return false;
    }
    let mut stack: Vec<(NodeId, NodeId)> = Vec::new();
    let activation = |stack: &[(NodeId, NodeId)], d: usize| {
        if d == 0 {
            g.func_of(g.start())
        } else {
            g.func_of(stack[d - 1].1)
        }
    };
    let pop_to = |stack: &mut Vec<(NodeId, NodeId)>, target| -> bool {
        match (0..=stack.len())
            .rev()
            .find(|&d| activation(stack, d) == target)
        {
            Some(d) => {
                stack.truncate(d);
                true
            }
            None => false,
        }
    };
    for w in path.windows(2) {
        let (v, x) = (w[0], w[1]);
        let Some(kind) = g.succs(v).find(|&(t, _)| t == x).map(|(_, k)| k) else {
            return false;
        };
        match kind {
            EdgeKind::Call => stack.push((v, x)),
            EdgeKind::Local => {
                if g.func_of(x) != g.func_of(v) && !pop_to(&mut stack, g.func_of(x)) {
                    return false;
                }
            }
            EdgeKind::Return => {
                let Some((site, _)) = stack.pop() else {
                    return false;
                };
                if !g.return_sites(site).any(|r| r == x) {
                    return false;
                }
                if g.func_of(x) != g.func_of(site) && !pop_to(&mut stack, g.func_of(x)) {
                    return false;
                }
            }
        }
    }
    if let (Some(c), Some(last)) = (&report.crash, path.last()) {
        if !c.contains(*last) {
            return false;
        }
    }
    frames::stack_matches(g, report, &stack)
}
