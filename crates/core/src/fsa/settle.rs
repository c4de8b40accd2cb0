//! Settling, one by one, the Maybe nodes that no choice confirmed
//! (see [`Fsa::settle`]).

use super::confirm::Evidence;
use super::*;

/// [`Fsa::settle`] runs one bulk recovery with the sets it tracks when
/// deciding a node left at least this many nodes to settle.
const SETTLE_BULK_AT: usize = 8;

impl Fsa {
    /// Settles the Maybe nodes that no choice confirmed, one by one, by
    /// counterexample-guided refinement: asks whether the node may run (may
    /// be skipped) under the report with only the ambiguous `obsNo` sets
    /// tracked so far; a witness that satisfies every set is evidence (for
    /// every node, on or off it); one that violates sets adds them to the
    /// tracked ones; an impossible answer is exact (a weaker report), and
    /// decides the node. Returns the checks made and the nodes decided.
    pub(super) fn settle(
        &self,
        g: &Icfg,
        report: &Report,
        labels: &mut [Label],
        ev: &mut Evidence,
        started: Instant,
        red: Option<&Reduced>,
    ) -> SettleStats {
        // The report reduced once (UTL ignores ambiguous `obsNo` sets, so
        // its labels hold for every subset of them).
        let Some(red) = red else {
            return SettleStats::default();
        };
        let base = &red.report;
        let ambiguous: Vec<usize> = (0..base.obs_no.len())
            .filter(|&i| base.obs_no[i].nodes().len() > 1)
            .collect();
        let mut st = Settler {
            red,
            report,
            tried: HashSet::new(),
            tracked: vec![false; ambiguous.len()],
            bulk_tracked: vec![false; ambiguous.len()],
            ambiguous,
            original: report
                .obs_no
                .iter()
                .filter(|s| s.nodes().len() > 1)
                .collect(),
            stats: SettleStats::default(),
            started,
        };
        for k in 0..ev.maybe.len() {
            for need in [Need::Run, Need::Skip] {
                if Evidence::confirmed(ev.seen[k]) || ev.seen[k] & need.bit() != 0 {
                    continue;
                }
                let next = loop {
                    match st.check(self, g, labels, ev, k, need) {
                        Settle::Again => continue,
                        next => break next,
                    }
                };
                match next {
                    Settle::Stop => return st.stats,
                    Settle::NextNode => break,
                    Settle::NextNeed | Settle::Again => {}
                }
            }
        }
        st.stats
    }
}

/// What [`Fsa::settle`] asks of a node: an execution that runs it, or
/// one that skips it.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Need {
    Run,
    Skip,
}

impl Need {
    /// Its bit in [`Evidence::seen`].
    fn bit(self) -> u8 {
        match self {
            Need::Run => 1,
            Need::Skip => 2,
        }
    }
}

/// Where one check of [`Fsa::settle`] leads.
enum Settle {
    /// Ask again: the witness violated sets, now tracked.
    Again,
    /// On to the other need of the node: evidence was recorded.
    NextNeed,
    /// On to the next node: it is decided, or nothing can be learnt.
    NextNode,
    /// Out of time or checks.
    Stop,
}

/// [`Fsa::settle`]'s state: the reduced report, which of its ambiguous
/// `obsNo` sets are tracked, and the counters.
struct Settler<'r> {
    red: &'r Reduced,
    /// The report itself.
    report: &'r Report,
    /// Witness choices already recovered (the member chosen per set).
    tried: HashSet<Vec<NodeId>>,
    /// Indices in `red.report.obs_no` of its ambiguous sets.
    ambiguous: Vec<usize>,
    /// The ambiguous `obsNo` sets of the original report.
    original: Vec<&'r NodeSet>,
    /// Per ambiguous set: tracked.
    tracked: Vec<bool>,
    /// What was tracked at the last bulk recovery.
    bulk_tracked: Vec<bool>,
    stats: SettleStats,
    started: Instant,
}

/// What [`Fsa::settle`] did (its `solver_stats`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SettleStats {
    /// Checks (and bulk recoveries) made.
    checks: u64,
    /// Nodes it turned from Maybe into Yes or No.
    decided: u64,
    /// Checks whose witness violated sets not tracked yet (asked again).
    again: u64,
    /// Witnesses that satisfied every set (evidence for every node).
    witnesses: u64,
    /// Checks that gave up (a limit, a weakening): nothing learnt.
    gave_up: u64,
    /// Bulk recoveries of witness choices (counted in `checks` too).
    choices: u64,
}

impl SettleStats {
    /// Appends its counters to `stats` (`solver_stats`).
    pub(super) fn push_to(&self, stats: &mut Vec<(&'static str, u64)>) {
        stats.push(("settle_checks", self.checks));
        stats.push(("settle_decided", self.decided));
        stats.push(("settle_again", self.again));
        stats.push(("settle_witnesses", self.witnesses));
        stats.push(("settle_gave_up", self.gave_up));
        stats.push(("settle_choices", self.choices));
    }
}

impl Settler<'_> {
    /// The reduced report with only the ambiguous `obsNo` sets tracked.
    fn tracked_report(&self) -> Reduced {
        let (base, red) = (&self.red.report, self.red);
        let keep = |i: usize| {
            base.obs_no[i].nodes().len() < 2
                || self
                    .ambiguous
                    .binary_search(&i)
                    .is_ok_and(|j| self.tracked[j])
        };
        let mut sub = Reduced {
            report: base.clone(),
            labels: red.labels.clone(),
            no_origin: Vec::new(),
        };
        sub.report.obs_no.retain({
            let mut i = 0;
            move |_| {
                i += 1;
                keep(i - 1)
            }
        });
        sub.no_origin = (0..base.obs_no.len())
            .filter(|&i| keep(i))
            .map(|i| red.no_origin[i])
            .collect();
        sub
    }

    /// One check for the `k`-th Maybe node of `ev`: may it run (skip)
    /// under the tracked sets?
    fn check(
        &mut self,
        fsa: &Fsa,
        g: &Icfg,
        labels: &mut [Label],
        ev: &mut Evidence,
        k: usize,
        need: Need,
    ) -> Settle {
        let remaining = match fsa.limits.timeout {
            Some(t) => match t.checked_sub(self.started.elapsed()) {
                Some(r) if !r.is_zero() => Some(r),
                _ => return Settle::Stop,
            },
            None => None,
        };
        if self.stats.checks >= fsa.limits.settle_checks as u64 || crate::budget::past_deadline() {
            return Settle::Stop;
        }
        let sub = self.tracked_report();
        let v = NodeId::new(ev.maybe[k]);
        let q = match need {
            Need::Run => Query::MayRun(v),
            Need::Skip => Query::MaySkip(v),
        };
        let mut inner = fsa.clone();
        inner.limits.timeout = remaining;
        self.stats.checks += 1;
        let c = inner.check_reduced(g, &sub.report, Some(&sub), Some(&q), true);
        let Ok(c) = c else {
            self.stats.gave_up += 1;
            return Settle::NextNode;
        };
        if c.answer == Answer::Impossible {
            // Exact: no execution of a weaker report does it.
            labels[ev.maybe[k]] = match need {
                Need::Run => Label::No,
                Need::Skip => Label::Yes,
            };
            ev.seen[k] = 4; // decided, nothing left to confirm
            self.stats.decided += 1;
            // The sets that decided it may decide others: one bulk
            // recovery with them decides every node it labels Yes or No
            // (a weaker report's labels).
            if ev.left(k + 1) >= SETTLE_BULK_AT && self.bulk_tracked != self.tracked {
                self.bulk_tracked.clone_from(&self.tracked);
                self.stats.checks += 1;
                if let Some(theirs) = self.bulk_labels(&inner, g, &sub.report, ev, k + 1) {
                    for kk in k + 1..ev.maybe.len() {
                        let l = theirs[ev.maybe[kk]];
                        if !Evidence::confirmed(ev.seen[kk]) && l != Label::Maybe {
                            labels[ev.maybe[kk]] = l;
                            ev.seen[kk] = 4;
                            self.stats.decided += 1;
                        }
                    }
                }
            }
            return Settle::NextNode;
        }
        let (true, Some(w)) = (c.weakened.is_empty(), c.witness) else {
            self.stats.gave_up += 1;
            return Settle::NextNode;
        };
        let mut on = vec![false; g.num_nodes()];
        for n in &w {
            on[n.index()] = true;
        }
        let base = &self.red.report;
        let mut violated = false;
        for (j, &i) in self.ambiguous.iter().enumerate() {
            if !self.tracked[j] && base.obs_no[i].nodes().iter().all(|n| on[n.index()]) {
                self.tracked[j] = true;
                violated = true;
            }
        }
        if violated {
            self.stats.again += 1;
            return Settle::Again;
        }
        // Sets the reduction dropped are satisfied by every path of the
        // reduced report; checked all the same.
        if self
            .original
            .iter()
            .any(|s| s.nodes().iter().all(|n| on[n.index()]))
        {
            return Settle::NextNode;
        }
        for (kk, &i) in ev.maybe.iter().enumerate() {
            ev.seen[kk] |= if on[i] { 1 } else { 2 };
        }
        self.stats.witnesses += 1;
        if ev.left(0) > fsa.limits.witness_choices {
            self.witness_choice(&inner, g, ev, &on);
        }
        Settle::NextNeed
    }

    /// Labels sound for `sub` (the reduced report with the tracked sets),
    /// by its bulk recovery; with [`FsaLimits::confirm_care`], "must run"
    /// decided only for the unconfirmed Maybe nodes from the `from`-th on
    /// (the only ones read).
    fn bulk_labels(
        &self,
        fsa: &Fsa,
        g: &Icfg,
        sub: &Report,
        ev: &Evidence,
        from: usize,
    ) -> Option<Vec<Label>> {
        let sound = Some(&self.red.labels[..]);
        if fsa.limits.confirm_care {
            let mut care = BitSet::new(g.num_nodes());
            for kk in from..ev.maybe.len() {
                if !Evidence::confirmed(ev.seen[kk]) {
                    care.insert(ev.maybe[kk]);
                }
            }
            match fsa.choice_shown(g, sub, sound, &care) {
                Ok(strategy::Shown::Classified(c)) => {
                    return Some(Label::all_from(g.num_nodes(), &c.may, &c.must))
                }
                Ok(strategy::Shown::Recovered(r)) => return Some(r.labels),
                Ok(strategy::Shown::Nothing) => {}
                Err(_) => return None,
            }
        }
        fsa.recover_once(g, sub, false, sound)
            .ok()
            .map(|r| r.labels)
    }

    /// The choice a witness shows possible (`on`: its nodes): every
    /// ambiguous `obsNo` set of the report replaced by a member the
    /// witness skips (among those, one still lacking an execution that
    /// skips it, if any). The witness is an execution of that choice, so
    /// its bulk recovery is exact unless a limit stops it, and confirms
    /// what [`Evidence::record`] says; far more than the witness alone,
    /// which confirms only the nodes it shows run.
    fn witness_choice(&mut self, fsa: &Fsa, g: &Icfg, ev: &mut Evidence, on: &[bool]) {
        if self.stats.checks >= fsa.limits.settle_checks as u64 {
            return;
        }
        let mut choice = self.report.clone();
        let mut picks = Vec::new();
        for set in &mut choice.obs_no {
            if set.nodes().len() < 2 {
                continue;
            }
            let off = set.nodes().iter().copied().filter(|n| !on[n.index()]);
            let Some(best) = off.clone().map(|n| ev.rank(n)).min() else {
                return; // the witness violates the set: not an execution
            };
            let off: Vec<NodeId> = off.filter(|&n| ev.rank(n) == best).collect();
            let pick = off[ev.below(off.len())];
            picks.push(pick);
            *set = NodeSet::new(vec![pick]).expect("one node");
        }
        if !self.tried.insert(picks) {
            return;
        }
        self.stats.checks += 1;
        self.stats.choices += 1;
        // UTL's labels of the reduced report are sound for the choice (a
        // stronger report).
        let sound = Some(&self.red.labels[..]);
        let shown = if fsa.limits.confirm_care {
            fsa.choice_shown(g, &choice, sound, &ev.care(g.num_nodes()))
        } else {
            fsa.recover_once(g, &choice, false, sound)
                .map(strategy::Shown::Recovered)
        };
        if let Ok(shown) = shown {
            ev.record_shown(&shown);
        }
    }
}
