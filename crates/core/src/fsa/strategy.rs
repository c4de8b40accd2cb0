//! The strategy (filled in below).

use super::classify::classify;
use super::*;

impl Fsa {
    /// [`Solver::check`], building the witness only if `witness`.
    pub(super) fn check_with(
        &self,
        g: &Icfg,
        report: &Report,
        query: Option<&Query>,
        witness: bool,
    ) -> Result<Checked, SolveError> {
        let impossible = Checked {
            answer: Answer::Impossible,
            weakened: vec![],
            witness: None,
        };
        let red = match self.reduction(g, report) {
            Ok(r) => r,
            Err(_) => return Ok(impossible),
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
        let impossible = Checked {
            answer: Answer::Impossible,
            weakened: vec![],
            witness: None,
        };
        let Ok(sp) = split(g, report, query, red, self.limits.max_states) else {
            return Ok(impossible);
        };
        let start = [g.start().as_u32()];
        let Some(prep) = self.prepare(g, &sp, &start) else {
            return Ok(impossible);
        };
        // A witness must satisfy every constraint: none if one was weakened.
        let witness = witness && sp.weakened.is_empty();
        let weakened = sp.weakened.clone();
        // The contracted product first (antichains, exact for emptiness);
        // the full product if that reaches its limit.
        if self.limits.contracted_first && self.limits.coarse_states > 0 {
            let st = structure(g, &prep, start[0]);
            match contracted::explore(
                &st,
                &sp,
                self.coarse_limits(),
                contracted::Mode::Check { witness },
            ) {
                Ok(contracted::Outcome::Witness(w)) => {
                    let witness = w.into_iter().map(|v| NodeId::new(v as usize)).collect();
                    return Ok(Checked {
                        answer: Answer::Possible,
                        weakened,
                        witness: Some(witness),
                    });
                }
                Ok(contracted::Outcome::Impossible) => return Ok(impossible),
                Ok(contracted::Outcome::Possible) => {
                    return Ok(Checked {
                        answer: Answer::Possible,
                        weakened,
                        witness: None,
                    });
                }
                Ok(_) | Err(Stop::States(_)) | Err(Stop::Memory(_)) => {}
                Err(Stop::Time) => return Err(SolveError::Limit(stop_message(Stop::Time))),
            }
        }
        let mut p = product(g, &prep, start[0]);
        match p.explore(
            true,
            self.limits.max_states,
            self.limits.max_memory,
            self.deadline(),
        ) {
            Ok(false) => Ok(impossible),
            Ok(true) => {
                let last = p.first_accepting().expect("accepting vertex");
                let witness = witness.then(|| Self::witness(g, &p, &sp.vectors, last));
                Ok(Checked {
                    answer: Answer::Possible,
                    weakened,
                    witness,
                })
            }
            Err(s) => {
                drop(p);
                match self.check_weakened(g, &prep, &sp, start[0], &stop_message(s.clone())) {
                    Some(c) => Ok(c),
                    None => Err(SolveError::Limit(stop_message(s))),
                }
            }
        }
    }

    /// When both products are too large: the contracted product with only
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

    /// One bulk recovery. When the product with every ambiguous `obsNo`
    /// set does not fit, `keep_search` keeps as many as fit (none, 1, 2,
    /// 4, ...); without it, all of them are dropped at once. `sound`:
    /// labels known sound for `report` (from a weaker report whose
    /// ambiguous `obsNo` sets they ignore, see [`Fsa::reduction`]), used
    /// to reduce it instead of running UTL on it.
    pub(super) fn recover_once(
        &self,
        g: &Icfg,
        report: &Report,
        keep_search: bool,
        sound: Option<&[Label]>,
    ) -> Result<Recovery, SolveError> {
        // The culprit is found by the caller (see `Fsa::recover`).
        let infeasible = || SolveError::Infeasible {
            culprit: Origin::Crash,
        };
        let red = match sound {
            // Labels sound for a weaker report hold here: one reduction
            // with them, no UTL run.
            Some(labels) => {
                let (r, kept) = reduced(report, labels).map_err(|_| infeasible())?;
                Some(Reduced {
                    report: r,
                    labels: labels.to_vec(),
                    no_origin: kept,
                })
            }
            None => self.reduction(g, report).map_err(|_| infeasible())?,
        };
        let sp = split(g, report, None, red.as_ref(), self.limits.max_states)
            .map_err(|_| infeasible())?;
        let start = [g.start().as_u32()];
        let Some(prep) = self.prepare(g, &sp, &start) else {
            return Err(infeasible());
        };
        let st = structure(g, &prep, start[0]);
        let runs = CoarseRuns {
            st: &st,
            limits: self.coarse_limits(),
        };
        // The contracted product first: far smaller, and exact unless it
        // lists nodes it could not decide.
        let mut first: Option<Result<contracted::Outcome, Stop>> = None;
        if self.limits.contracted_first && self.limits.coarse_states > 0 {
            match runs.run(&sp, false) {
                Ok(contracted::Outcome::Classified(c)) if c.decided() => {
                    return Ok(contracted_recovery(g, &c, sp.weakened.clone()))
                }
                Ok(contracted::Outcome::Classified(c)) => {
                    first = Some(Ok(contracted::Outcome::Classified(c)))
                }
                Ok(_) => return Err(infeasible()),
                Err(s) => {
                    if let Some(rec) = Self::keep_fitting(g, report, &runs, &sp, &s, keep_search)? {
                        return Ok(rec);
                    }
                    first = Some(Err(s))
                }
            }
        }
        // The full product.
        let mut p = product(g, &prep, start[0]);
        match p.explore(
            false,
            self.limits.max_states,
            self.limits.max_memory,
            self.deadline(),
        ) {
            Ok(false) => Err(infeasible()),
            Ok(true) => {
                let mut rec = classify(g, &p, &sp, self.limits);
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(rec)
            }
            Err(s) => {
                drop(p);
                self.coarse_fallback(g, report, &runs, &sp, first, stop_message(s))
            }
        }
    }

    /// When the contracted product with every ambiguous `obsNo` did not
    /// fit (stopped by `s`): the recovery with the ones that fit (in report
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
                Ok(_) => {
                    return Err(SolveError::Infeasible {
                        culprit: Origin::Crash,
                    })
                }
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

    /// When the full product did not fit (`why`): the contracted product's
    /// labels merged with UTL's (`first`: its attempt with every automaton,
    /// if made), explicitly first (exact "may run"), with antichains if
    /// that is too big; else UTL's alone.
    fn coarse_fallback(
        &self,
        g: &Icfg,
        report: &Report,
        runs: &CoarseRuns<'_, '_>,
        sp: &Split,
        first: Option<Result<contracted::Outcome, Stop>>,
        why: String,
    ) -> Result<Recovery, SolveError> {
        if self.limits.coarse_states == 0 {
            return degrade(g, report, why);
        }
        let c = match first.unwrap_or_else(|| runs.run(sp, false)) {
            Err(Stop::States(_)) | Err(Stop::Memory(_)) => runs.run(sp, true),
            other => other,
        };
        match c {
            Ok(contracted::Outcome::Classified(c)) => {
                let mut rec = coarse_recovery(g, report, &c, why)?;
                rec.weakened.extend(sp.weakened.iter().cloned());
                Ok(rec)
            }
            Ok(_) => Err(SolveError::Infeasible {
                culprit: Origin::Crash,
            }),
            Err(s2) => degrade(
                g,
                report,
                format!("{why}; coarse tier: {}", stop_message(s2)),
            ),
        }
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
        contracted::explore(self.st, sp, limits, contracted::Mode::Classify { subsume })
    }
}

/// Labels from a contracted product that decided every node.
fn contracted_recovery(
    g: &Icfg,
    c: &contracted::Coarse,
    weakened: Vec<crate::solver::Weakening>,
) -> Recovery {
    let labels = (0..g.num_nodes())
        .map(|i| {
            if !c.may.contains(i) {
                Label::No
            } else if c.must.contains(i) {
                Label::Yes
            } else {
                Label::Maybe
            }
        })
        .collect();
    Recovery {
        labels,
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
        let new = if !c.may.contains(i) {
            Label::No
        } else if c.must.contains(i) {
            Label::Yes
        } else {
            *l
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
