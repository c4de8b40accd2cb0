//! The FSA solver's strategy: which product answers, in which order, and
//! what happens when one does not fit. Each step answers or hands the
//! next one why it could not; the first answer wins, and every fallback
//! is sound (a weaker report's labels, or UTL's, with what was given up
//! listed). Like regex-automata's meta strategy, the order is the
//! documentation; the steps are the functions below, in this order.
//!
//! **Bulk recovery** ([`Fsa::recover_all`], one pass [`Fsa::recover_once`]):
//!
//! 1. Reduce the report with UTL's labels ([`Fsa::reduction`], or labels
//!    known sound) and split it into UTL structure and automata
//!    ([`split`]); impossible here means impossible.
//! 2. The contracted product with every automaton, explicit
//!    ([`Fsa::contracted_first`]): its labels when it decided every node.
//! 3. If it did not fit: the contracted product with only the ambiguous
//!    `obsNo` sets that fit ([`Fsa::keep_fitting`]: none, or with
//!    `keep_search` none, 1, 2, 4, ...), the rest listed as weakened.
//! 4. The full product, explicit, classified ([`Fsa::full_product`],
//!    `classify.rs`).
//! 5. If it did not fit: the contracted product's labels merged with
//!    UTL's, explicit or with antichains ([`Fsa::coarse_fallback`]), the
//!    Maybe nodes it cannot vouch for listed as undecided;
//! 6. else UTL's labels, every Maybe undecided ([`degrade`]).
//! 7. When the pass only dropped ambiguous `obsNo` sets: confirm the
//!    labels by choices and settle the rest one by one (`confirm.rs`,
//!    `settle.rs`); when it weakened anything else: one more pass that
//!    keeps as many of the sets as fit (step 3 with `keep_search`).
//!
//! **Checks** ([`Fsa::check_with`]):
//!
//! 1. Reduce and split as above.
//! 2. The contracted product with antichains, exact for emptiness, and
//!    its witness ([`Fsa::check_contracted`]).
//! 3. If it did not fit: the full product and its witness
//!    ([`Fsa::check_full`]).
//!
//! Steps 2 and 3 of checks are `products/witness.rs`'s, which UTL's
//! witnesses share.
//! 4. If that did not fit either: the contracted product with the
//!    ambiguous `obsNo` sets that fit ([`Fsa::check_weakened`]);
//! 5. else a [`SolveError::Limit`].

use super::classify::classify;
use super::*;
use std::ops::ControlFlow::{self, Break, Continue};

/// An impossible answer (nothing weakened, no witness).
fn impossible() -> Checked {
    Checked {
        answer: Answer::Impossible,
        weakened: vec![],
        witness: None,
    }
}

/// An impossible report in bulk recovery; the culprit is found by the
/// caller (see [`Fsa::recover_all`]).
fn infeasible() -> SolveError {
    SolveError::Infeasible {
        culprit: Origin::Crash,
    }
}

/// What step 2 of bulk recovery (the contracted product with every
/// automaton) leaves to the later steps when it did not answer.
enum First {
    /// Not tried (`contracted_first` off, or no contracted product).
    Skipped,
    /// Explored, some nodes undecided: step 5 reuses it.
    Undecided(contracted::Coarse),
    /// Did not fit.
    Stopped(Stop),
    /// Did not fit under [`FsaLimits::first_states`].
    Capped(Stop),
}

/// How a pass of bulk recovery reduces its report (step 1).
enum Reduce<'r> {
    /// With UTL's labels ([`Fsa::reduction`]).
    Utl,
    /// Once, with labels known sound for it.
    Sound(&'r [Label]),
    /// Already done: [`Fsa::reduction`]'s result.
    Done(Option<&'r Reduced>),
}

/// What the bulk recovery of a choice shows ([`Fsa::choice_shown`]).
pub(super) enum Shown {
    /// The contracted product's classification, explicit: "may run"
    /// exact, "must run" exact outside `unsure`.
    Classified(contracted::Coarse),
    /// A whole pass's recovery.
    Recovered(Recovery),
    /// Nothing (a constraint was weakened).
    Nothing,
}

/// `hint`, when it may reduce `report` in place of UTL's labels (see
/// [`Reduced`]): labels sound for `report` are sound for every stronger
/// report (the confirmation's choices), but not for a weaker one, and
/// UTL's labels are also sound for `report` without its ambiguous `obsNo`
/// sets. So only for a report without such sets.
fn hinted<'h>(report: &Report, hint: Option<&'h [Label]>) -> Option<&'h [Label]> {
    hint.filter(|_| report.obs_no.iter().all(|s| s.single().is_some()))
}

/// The caller of [`Solver::recover_beside`]: labels it will merge, from
/// labels sound for the report, and UTL's labels it reuses.
pub(super) type BesideRef<'b> = &'b dyn crate::solver::Beside;

/// The stat a pass of bulk recovery records when step 2 stopped at
/// [`FsaLimits::first_states`].
const FIRST_CAPPED: &str = "fsa_first_capped";

impl Fsa {
    /// Bulk recovery: an optimistic pass (see [`FsaLimits::first_states`]),
    /// then, if that left nodes unconfirmed, the exact flow
    /// ([`Fsa::recover_uncapped`]). `beside`: see [`Solver::recover_beside`].
    pub(super) fn recover_all(
        &self,
        g: &Icfg,
        report: &Report,
        beside: Option<BesideRef<'_>>,
    ) -> Result<Recovery, SolveError> {
        let started = Instant::now();
        // Reduced once for every pass and for the confirmation: with the
        // caller's hint where it may stand for UTL's labels, else UTL's.
        let hint = beside.and_then(|b| hinted(report, b.hint()));
        let (red, utl) = match hint {
            Some(hint) => (
                Some(Reduced::with(report, hint).map_err(|_| infeasible())?),
                None,
            ),
            None => self
                .reduction_with_utl(g, report)
                .map_err(|_| self.explained(g, report, infeasible()))?,
        };
        if let (Some(b), Some(u)) = (beside, &utl) {
            // `best` merges UTL's labels of the report: these are they.
            b.utl(u);
        }
        drop(utl);
        let reduce_ms = millis(started);
        let hinted = hint.is_some();
        let cap = self.limits.first_states;
        if cap >= self.limits.coarse_states || !self.limits.contracted_first {
            let mut rec = self.recover_uncapped(g, report, red.as_ref(), None, beside, started)?;
            rec.stats.push(("fsa_reduce_ms", reduce_ms));
            rec.stats.push(("fsa_hinted", u64::from(hinted)));
            return Ok(rec);
        }
        let mut rec = self.recover_uncapped(g, report, red.as_ref(), Some(cap), beside, started)?;
        rec.stats.push(("fsa_reduce_ms", reduce_ms));
        rec.stats.push(("fsa_hinted", u64::from(hinted)));
        let capped = rec.stats.iter().any(|&(k, _)| k == FIRST_CAPPED);
        let exact = rec.undecided.is_empty()
            && !rec
                .weakened
                .iter()
                .any(|w| dropped(report, w) || gave_up(w));
        if !capped || exact {
            // Step 2 fitted under the cap (the same passes as without
            // it), or the choices confirmed every label: exact.
            return Ok(rec);
        }
        // The cap may have cost labels: the flow without it, whose labels
        // are those it always gave.
        let mut again =
            self.recover_uncapped(g, report, red.as_ref(), None, beside, Instant::now())?;
        again.stats.push(("fsa_reduce_ms", reduce_ms));
        again.stats.push(("fsa_hinted", u64::from(hinted)));
        again.stats.push((FIRST_CAPPED, 1));
        again.stats.push(("fsa_first_capped_ms", millis(started)));
        Ok(again)
    }

    /// The Yes nodes of `labels` (UTL's of the reduced report, sound for
    /// every report a pass classifies), which spare the classification
    /// exact checks ([`FsaLimits::known_checks`]).
    fn known_yes(&self, labels: Option<&[Label]>) -> Option<BitSet> {
        let labels = labels.filter(|_| self.limits.known_checks)?;
        let mut yes = BitSet::new(labels.len());
        for (v, &l) in labels.iter().enumerate() {
            if l == Label::Yes {
                yes.insert(v);
            }
        }
        Some(yes)
    }

    /// An impossible report's error, with its culprit.
    fn explained(&self, g: &Icfg, report: &Report, e: SolveError) -> SolveError {
        match e {
            SolveError::Infeasible { .. } => SolveError::Infeasible {
                culprit: self.culprit(g, report).unwrap_or(Origin::Crash),
            },
            e => e,
        }
    }

    /// Bulk recovery of `report`, reduced to `red` ([`Fsa::reduction`]):
    /// passes of [`Fsa::recover_once`], then step 7. With `first`, step 2
    /// of the first pass explores at most that many vertices. `started`:
    /// when the recovery started (for its time limit).
    fn recover_uncapped(
        &self,
        g: &Icfg,
        report: &Report,
        red: Option<&Reduced>,
        first: Option<usize>,
        beside: Option<BesideRef<'_>>,
        started: Instant,
    ) -> Result<Recovery, SolveError> {
        // Ambiguous `obsNo` sets that do not fit are dropped from the
        // product at once; [`Fsa::confirm`] then makes the labels exact.
        let explained = |e: SolveError| self.explained(g, report, e);
        let mut rec = self
            .recover_pass(g, report, false, Reduce::Done(red), first)
            .map_err(explained)?;
        rec.stats.push(("fsa_bulk_ms", millis(started)));
        if confirmable(report, &rec) {
            return Ok(self.confirm(g, report, rec, red, started, beside));
        }
        if rec.weakened.iter().any(|w| dropped(report, w)) {
            // Nothing can undo some other weakening: keep as many of the
            // sets as fit instead.
            let mut again = self
                .recover_pass(g, report, true, Reduce::Done(red), None)
                .map_err(explained)?;
            // (Still the pass whose step 2 was capped.)
            again
                .stats
                .extend(rec.stats.iter().filter(|&&(k, _)| k == FIRST_CAPPED));
            return Ok(again);
        }
        Ok(rec)
    }

    /// One pass of bulk recovery, steps 1 to 6. When the product with
    /// every ambiguous `obsNo` set does not fit, `keep_search` keeps as
    /// many as fit (none, 1, 2, 4, ...); without it, all of them are
    /// dropped at once. `sound`: labels known sound for `report` (from a
    /// weaker report whose ambiguous `obsNo` sets they ignore, see
    /// [`Fsa::reduction`]), used to reduce it instead of running UTL on it.
    pub(super) fn recover_once(
        &self,
        g: &Icfg,
        report: &Report,
        keep_search: bool,
        sound: Option<&[Label]>,
    ) -> Result<Recovery, SolveError> {
        let reduce = match sound {
            Some(labels) => Reduce::Sound(labels),
            None => Reduce::Utl,
        };
        self.recover_pass(g, report, keep_search, reduce, None)
    }

    /// What the bulk recovery of a choice ([`Fsa::confirm`]) shows, with
    /// "must run" wanted only for `care` (see [`contracted::explore_caring`]):
    /// steps 1 and 2 of a pass, `sound` as in [`Fsa::recover_once`]; when
    /// step 2 does not classify, the whole pass.
    pub(super) fn choice_shown(
        &self,
        g: &Icfg,
        report: &Report,
        sound: Option<&[Label]>,
        care: &BitSet,
    ) -> Result<Shown, SolveError> {
        if self.limits.contracted_first && self.limits.coarse_states > 0 {
            let own = match sound {
                Some(labels) => Some(Reduced::with(report, labels).map_err(|_| infeasible())?),
                None => self.reduction(g, report).map_err(|_| infeasible())?,
            };
            let sp = split(g, report, None, own.as_ref(), self.limits.max_states)
                .map_err(|_| infeasible())?;
            let start = [g.start().as_u32()];
            let Some(prep) = Prepared::new(g, &sp, &start) else {
                return Err(infeasible());
            };
            if !sp.weakened.is_empty() {
                // Shows nothing (see [`Evidence::record`]).
                return Ok(Shown::Nothing);
            }
            let st = structure(g, &prep, start[0]);
            let mode = contracted::Mode::Classify { subsume: false };
            let yes = self.known_yes(own.as_ref().map(|r| &r.labels[..]));
            let limits = self.coarse_limits();
            match contracted::explore_caring(&st, &sp, limits, mode, Some(care), yes.as_ref()) {
                Ok(contracted::Outcome::Classified(c)) => return Ok(Shown::Classified(c)),
                Ok(_) => return Err(infeasible()),
                Err(_) => {}
            }
        }
        self.recover_once(g, report, false, sound)
            .map(Shown::Recovered)
    }

    /// [`Fsa::recover_once`], step 2 under at most `first` vertices (when
    /// it stops there, the result's stats name [`FIRST_CAPPED`]).
    fn recover_pass(
        &self,
        g: &Icfg,
        report: &Report,
        keep_search: bool,
        reduce: Reduce<'_>,
        first: Option<usize>,
    ) -> Result<Recovery, SolveError> {
        // 1. Reduce and split.
        let own;
        let red = match reduce {
            // Labels sound for a weaker report hold here: one reduction
            // with them, no UTL run.
            Reduce::Sound(labels) => {
                own = Some(Reduced::with(report, labels).map_err(|_| infeasible())?);
                own.as_ref()
            }
            Reduce::Utl => {
                own = self.reduction(g, report).map_err(|_| infeasible())?;
                own.as_ref()
            }
            Reduce::Done(red) => red,
        };
        let sp = split(g, report, None, red, self.limits.max_states).map_err(|_| infeasible())?;
        let start = [g.start().as_u32()];
        let Some(prep) = Prepared::new(g, &sp, &start) else {
            return Err(infeasible());
        };
        let st = structure(g, &prep, start[0]);
        let runs = CoarseRuns {
            st: &st,
            limits: self.coarse_limits(),
            yes: self.known_yes(red.map(|r| &r.labels[..])),
        };
        // 2. The contracted product with every automaton.
        let first = match self.contracted_first(g, &runs, &sp, first)? {
            Break(rec) => return Ok(rec),
            Continue(first) => first,
        };
        let capped = matches!(first, First::Capped(_));
        let mut rec = self.after_first(g, report, &prep, &runs, &sp, first, keep_search)?;
        if capped {
            rec.stats.push((FIRST_CAPPED, 1));
        }
        Ok(rec)
    }

    /// Steps 3 to 6 of a pass, after step 2 left `first`.
    #[allow(clippy::too_many_arguments)]
    fn after_first(
        &self,
        g: &Icfg,
        report: &Report,
        prep: &Prepared,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        first: First,
        keep_search: bool,
    ) -> Result<Recovery, SolveError> {
        // 3. The ambiguous `obsNo` sets that fit.
        if let First::Stopped(s) | First::Capped(s) = &first {
            if let Some(rec) = Self::keep_fitting(g, report, runs, sp, s, keep_search)? {
                return Ok(rec);
            }
        }
        // 4. The full product.
        let why = match self.full_product(g, prep, sp)? {
            Break(rec) => return Ok(rec),
            Continue(why) => why,
        };
        // 5. and 6. The contracted product merged with UTL, or UTL.
        self.coarse_fallback(g, report, runs, sp, first, why)
    }

    /// Step 2: the contracted product with every automaton, explicit: far
    /// smaller than the full product, and exact unless it lists nodes it
    /// could not decide.
    fn contracted_first(
        &self,
        g: &Icfg,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        cap: Option<usize>,
    ) -> Result<ControlFlow<Recovery, First>, SolveError> {
        if !self.limits.contracted_first || self.limits.coarse_states == 0 {
            return Ok(Continue(First::Skipped));
        }
        let mut limits = runs.limits;
        // Only a report with ambiguous `obsNo` sets (which a stop drops)
        // is explored under the cap.
        let cap = cap.filter(|&c| c < limits.max_states && !sp.droppable.is_empty());
        if let Some(c) = cap {
            limits.max_states = c;
        }
        match runs.run_within(sp, false, limits) {
            Err(Stop::States(s)) if cap.is_some() => Ok(Continue(First::Capped(Stop::States(s)))),
            Ok(contracted::Outcome::Classified(c)) if c.decided() => {
                Ok(Break(contracted_recovery(g, &c, sp.weakened.clone())))
            }
            Ok(contracted::Outcome::Classified(c)) => Ok(Continue(First::Undecided(c))),
            Ok(_) => Err(infeasible()),
            Err(s) => Ok(Continue(First::Stopped(s))),
        }
    }

    /// Step 3: when the contracted product with every ambiguous `obsNo`
    /// did not fit (stopped by `s`): the recovery with the ones that fit (in report
    /// order: none, then 1, 2, 4, ... with `keep_search`, so that only the
    /// last attempt fails; else none), the rest weakened. `None` if even
    /// none did not fit (or a deadline stopped it).
    fn keep_fitting(
        g: &Icfg,
        report: &Report,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        s: &Stop,
        keep_search: bool,
    ) -> Result<Option<Recovery>, SolveError> {
        if matches!(s, Stop::Time) || sp.droppable.is_empty() {
            return Ok(None);
        }
        let why = format!(
            "the product with it did not fit ({})",
            stop_message(s.clone())
        );
        let total = sp.droppable.len();
        let mut best: Option<(contracted::Coarse, Split)> = None;
        let mut keep = 0;
        let mut within = runs.limits;
        loop {
            let drop: Vec<usize> = (keep..total).collect();
            let weak = sp.without(&drop, &why);
            match runs.run_within(&weak, false, within) {
                Ok(contracted::Outcome::Classified(c)) => {
                    // Each attempt may grow the product by KEEP_GROWTH over
                    // the last one that fit: the attempt that does not fit
                    // stops early.
                    within.max_states = runs
                        .limits
                        .max_states
                        .min((c.vertices * KEEP_GROWTH).max(KEEP_FLOOR));
                    best = Some((c, weak))
                }
                // The weaker report is impossible only if the report is.
                Ok(_) => return Err(infeasible()),
                Err(_) => break,
            }
            if keep + 1 >= total || !keep_search {
                break;
            }
            keep = (keep * 2).max(1).min(total - 1);
        }
        let Some((c, weak)) = best else {
            return Ok(None);
        };
        if c.decided() {
            return Ok(Some(contracted_recovery(g, &c, weak.base.weakened)));
        }
        let mut rec = coarse_recovery(g, report, &c, "some nodes were left undecided".into())?;
        rec.weakened.extend(weak.base.weakened);
        Ok(Some(rec))
    }

    /// Step 4: the full product, explicit, and its classification; why
    /// not if it did not fit.
    fn full_product(
        &self,
        g: &Icfg,
        prep: &Prepared,
        sp: &Split,
    ) -> Result<ControlFlow<Recovery, String>, SolveError> {
        let mut p = product(g, prep, g.start().as_u32());
        match p.explore(
            false,
            self.limits.max_states,
            self.limits.max_memory,
            self.deadline(),
        ) {
            Ok(false) => Err(infeasible()),
            Ok(true) => {
                let mut rec = classify(g, &p, sp, self.limits);
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(Break(rec))
            }
            Err(s) => Ok(Continue(stop_message(s))),
        }
    }

    /// Steps 5 and 6: when the full product did not fit (`why`): the
    /// contracted product's labels merged with UTL's (`first`: step 2's
    /// attempt with every automaton), explicitly first (exact "may run"), with antichains if
    /// that is too big; else UTL's alone.
    fn coarse_fallback(
        &self,
        g: &Icfg,
        report: &Report,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        first: First,
        why: String,
    ) -> Result<Recovery, SolveError> {
        if self.limits.coarse_states == 0 {
            return degrade(g, report, why);
        }
        let first = match first {
            First::Skipped => runs.run(sp, false),
            First::Undecided(c) => Ok(contracted::Outcome::Classified(c)),
            First::Stopped(s) | First::Capped(s) => Err(s),
        };
        let c = match first {
            Err(Stop::States(_)) | Err(Stop::Memory(_)) => runs.run(sp, true),
            other => other,
        };
        match c {
            Ok(contracted::Outcome::Classified(c)) => {
                let mut rec = coarse_recovery(g, report, &c, why)?;
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(rec)
            }
            Ok(_) => Err(infeasible()),
            Err(s2) => degrade(
                g,
                report,
                format!("{why}; coarse tier: {}", stop_message(s2)),
            ),
        }
    }

    /// [`Solver::check`] (steps 1 to 5 of checks), building the witness
    /// only if `witness`.
    pub(super) fn check_with(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        let red = match self.reduction(g, report) {
            Ok(r) => r,
            Err(_) => return Ok(impossible()),
        };
        self.check_reduced(g, report, red.as_ref(), query, witness)
    }

    /// [`Fsa::check_with`] once `report` is reduced to `red`.
    pub(super) fn check_reduced(
        &self,
        g: &Icfg,
        report: &Report,
        red: Option<&Reduced>,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        // 1. Split.
        let Ok(sp) = split(g, report, query, red, self.limits.max_states) else {
            return Ok(impossible());
        };
        let start = [g.start().as_u32()];
        let Some(prep) = Prepared::new(g, &sp, &start) else {
            return Ok(impossible());
        };
        // A witness must satisfy every constraint: none if one was weakened.
        let witness = witness && sp.weakened.is_empty();
        // 2. The contracted product (antichains, exact for emptiness).
        if let Break(c) = self.check_contracted(g, &prep, &sp, witness)? {
            return Ok(c);
        }
        // 3. The full product.
        let s = match self.check_full(g, &prep, &sp, witness) {
            Break(c) => return Ok(c),
            Continue(s) => s,
        };
        // 4. The ambiguous `obsNo` sets that fit; 5. else a limit.
        match self.check_weakened(g, &prep, &sp, start[0], &stop_message(s.clone())) {
            Some(c) => Ok(c),
            None => Err(SolveError::Limit(stop_message(s))),
        }
    }

    /// Step 2 of checks: the contracted product with antichains, when it
    /// fits.
    fn check_contracted(
        &self,
        g: &Icfg,
        prep: &Prepared,
        sp: &Split,
        witness: bool,
    ) -> Result<ControlFlow<Checked>, SolveError> {
        if !self.limits.contracted_first || self.limits.coarse_states == 0 {
            return Ok(Continue(()));
        }
        match witness::contracted(g, prep, sp, self.coarse_limits(), witness) {
            Ok(Some(c)) => Ok(Break(c)),
            Err(Stop::Time) => Err(SolveError::Limit(stop_message(Stop::Time))),
            Ok(None) | Err(_) => Ok(Continue(())),
        }
    }

    /// Step 3 of checks: the full product, explicit (stops at the first
    /// accepting vertex); what stopped it if it did not fit.
    fn check_full(
        &self,
        g: &Icfg,
        prep: &Prepared,
        sp: &Split,
        witness: bool,
    ) -> ControlFlow<Checked, Stop> {
        let limits = witness::FullLimits {
            max_states: self.limits.max_states,
            max_memory: self.limits.max_memory,
            deadline: self.deadline(),
        };
        witness::full(g, prep, sp, limits, witness)
    }

    /// Step 4 of checks: when both products are too large: the contracted
    /// product with only
    /// the ambiguous `obsNo` automata that fit (none, 1, 2, 4, ...). An
    /// impossible answer is exact (a weaker report already is); a witness
    /// that happens to satisfy the dropped sets too is a real one, and the
    /// answer exact; otherwise the answer is "possible" for the weakened
    /// report, each dropped set listed, without a witness.
    fn check_weakened(
        &self,
        g: &Icfg,
        prep: &Prepared,
        sp: &Split,
        start: u32,
        why: &str,
    ) -> Option<Checked> {
        let total = sp.droppable.len();
        if total == 0 || !self.limits.contracted_first || self.limits.coarse_states == 0 {
            return None;
        }
        let st = structure(g, prep, start);
        let limits = self.coarse_limits();
        let why = format!("the product with it did not fit ({why})");
        let mut best: Option<Vec<crate::solver::Weakening>> = None;
        let mut keep = 0;
        loop {
            let drop: Vec<usize> = (keep..total).collect();
            let weak = sp.without(&drop, &why);
            match contracted::explore(
                &st,
                &weak,
                limits,
                contracted::Mode::Check { witness: true },
            ) {
                Ok(contracted::Outcome::Impossible) => {
                    return Some(Checked {
                        answer: Answer::Impossible,
                        weakened: sp.weakened.clone(),
                        witness: None,
                    })
                }
                Ok(contracted::Outcome::Witness(w)) => {
                    let dropped = drop.iter().map(|&i| &sp.autos[sp.droppable[i]]);
                    if dropped.into_iter().all(|a| accepts(a, &w)) && sp.weakened.is_empty() {
                        return Some(Checked {
                            answer: Answer::Possible,
                            weakened: vec![],
                            witness: Some(w.into_iter().map(|v| NodeId::new(v as usize)).collect()),
                        });
                    }
                    best = Some(weak.base.weakened);
                }
                Ok(_) => {}
                Err(_) => break,
            }
            if keep + 1 >= total {
                break;
            }
            keep = (keep * 2).max(1).min(total - 1);
        }
        best.map(|weakened| Checked {
            answer: Answer::Possible,
            weakened,
            witness: None,
        })
    }
}

/// While searching how many ambiguous `obsNo` sets fit in the contracted
/// product, each attempt may have this many times the vertices of the last
/// one that fit (and at least [`KEEP_FLOOR`]).
const KEEP_GROWTH: usize = 4;
const KEEP_FLOOR: usize = 100_000;

/// Bulk classifications of the contracted product of one structure, all
/// under the same limits (one deadline for every attempt).
struct CoarseRuns<'s, 'a> {
    st: &'s contracted::Structure<'a>,
    limits: contracted::CoarseLimits,
    /// Nodes UTL's labels say run (see [`Fsa::known_yes`]).
    yes: Option<BitSet>,
}

impl CoarseRuns<'_, '_> {
    fn run(&self, sp: &Split, subsume: bool) -> Result<contracted::Outcome, Stop> {
        self.run_within(sp, subsume, self.limits)
    }

    fn run_within(
        &self,
        sp: &Split,
        subsume: bool,
        limits: contracted::CoarseLimits,
    ) -> Result<contracted::Outcome, Stop> {
        let mode = contracted::Mode::Classify { subsume };
        contracted::explore_caring(self.st, sp, limits, mode, None, self.yes.as_ref())
    }
}

/// Labels from a contracted product that decided every node.
fn contracted_recovery(
    g: &Icfg,
    c: &contracted::Coarse,
    weakened: Vec<crate::solver::Weakening>,
) -> Recovery {
    Recovery {
        labels: Label::all_from(g.num_nodes(), &c.may, &c.must),
        weakened,
        undecided: vec![],
        stats: c.stats(),
    }
}

/// The coarse tier's result: No where it shows a node cannot run, Yes where
/// it or UTL (sound for the full report) shows it must, Maybe elsewhere;
/// Maybe nodes it cannot vouch for are listed as undecided.
fn coarse_recovery(
    g: &Icfg,
    report: &Report,
    c: &contracted::Coarse,
    why: String,
) -> Result<Recovery, SolveError> {
    let mut rec = crate::utl::Utl::default().recover(g, report)?;
    let mut refined = 0u64;
    for (i, l) in rec.labels.iter_mut().enumerate() {
        // UTL's label where the contracted product says Maybe.
        let new = match Label::from_may_must(c.may.contains(i), c.must.contains(i)) {
            Label::Maybe => *l,
            decided => decided,
        };
        if new != *l {
            refined += 1;
            *l = new;
        }
    }
    rec.undecided = (0..rec.labels.len())
        .filter(|&i| rec.labels[i] == Label::Maybe && c.unsure.contains(i))
        .map(NodeId::new)
        .collect();
    rec.weakened.push(crate::solver::Weakening {
        origin: Origin::Query,
        how: format!(
            "fsa gave up on the exact product ({why}); coarse tier used instead ({}): Maybe nodes listed as \
             undecided may be imprecise, every Yes and No is sound",
            if c.exact { "contracted product, explicit" } else { "contracted product with antichains" }
        ),
    });
    rec.stats.push(("coarse_refined", refined));
    rec.stats.extend(c.stats());
    Ok(rec)
}

/// When the product is too large: UTL's labels, which are sound for the
/// full report, with every Maybe marked undecided.
fn degrade(g: &Icfg, report: &Report, why: String) -> Result<Recovery, SolveError> {
    let mut rec = crate::utl::Utl::default().recover(g, report)?;
    rec.undecided = (0..rec.labels.len())
        .filter(|&i| rec.labels[i] == Label::Maybe)
        .map(NodeId::new)
        .collect();
    rec.weakened.push(crate::solver::Weakening {
        origin: Origin::Query,
        how: format!("fsa gave up ({why}); labels are the UTL solver's, sound but less precise"),
    });
    Ok(rec)
}
