//! Confirming the labels of a recovery that dropped ambiguous `obsNo`
//! sets: rounds of *choices* (see [`Fsa::confirm`]).

use super::*;
use std::collections::HashSet;
use strategy::Shown;

/// Rounds of [`Fsa::confirm`]: choices tried at most. Rounds stop earlier
/// once at most [`SETTLE_AT`] nodes are left unconfirmed, or after a batch
/// of rounds that did not confirm half of those left: the rest are
/// cheaper settled one by one.
const CONFIRM_ROUNDS: u64 = 16;

pub(super) const SETTLE_AT: usize = 16;

/// Choices tried at once, in parallel (at most one per core).
const MAX_PARALLEL_CHOICES: usize = 4;

impl Fsa {
    /// Makes labels computed with ambiguous `obsNo` sets weakened (dropped
    /// because the product with them did not fit) exact where it can.
    ///
    /// The labels are sound, but a Maybe may be a Yes or a No that the
    /// dropped sets would have shown. A *choice* names, for every
    /// ambiguous `obsNo` set, one member that did not run; the report with
    /// each set replaced by its chosen member (a single node, no automaton)
    /// has only executions of the report, so whatever it shows possible is
    /// possible: a node that is Maybe under one choice, or Yes under one
    /// and No under another, is really Maybe. Rounds of choices (members
    /// drawn pseudo-randomly, never a Yes one, preferring members still
    /// lacking an execution that skips them and avoiding those lacking one
    /// that runs them) run while they confirm nodes, each as cheap as one
    /// recovery without ambiguous sets (see [`CONFIRM_ROUNDS`]); the few
    /// nodes left are settled one by one ([`Fsa::settle`]), which may also
    /// turn a Maybe into the Yes or No it really is. When every Maybe is
    /// confirmed the labels are exact and the weakenings are withdrawn;
    /// otherwise the unconfirmed Maybe nodes are listed as undecided (and
    /// the weakenings stay listed). `red`: the report reduced by
    /// [`Fsa::reduction`]. `beside` (see [`Solver::recover_beside`]): the
    /// Maybe nodes it decides from these labels are the caller's to
    /// decide, and neither confirmed nor settled here (they count as
    /// confirmed).
    pub(super) fn confirm(
        &self,
        g: &Icfg,
        report: &Report,
        mut rec: Recovery,
        red: Option<&Reduced>,
        started: Instant,
        beside: Option<strategy::BesideRef<'_>>,
    ) -> Recovery {
        if !confirmable(report, &rec) {
            return rec;
        }
        // `red`, the report reduced with UTL's labels: they are sound for
        // every choice (a stronger report) and every report with fewer
        // ambiguous `obsNo` sets (UTL ignores them), so they spare a UTL
        // run each.
        let sound = red.map(|r| &r.labels[..]);
        let mut ev = Evidence::new(&rec.labels);
        if let Some(beside) = beside {
            let t = Instant::now();
            let theirs = beside.labels(&rec.labels);
            let left = ev.maybe.len();
            ev.leave(&theirs);
            rec.stats
                .push(("confirm_beside", (left - ev.left(0)) as u64));
            rec.stats.push(("confirm_beside_ms", millis(t)));
        }
        let undecided: HashSet<NodeId> = rec.undecided.iter().copied().collect();
        let t = Instant::now();
        let rounds = self.confirm_rounds(g, report, &rec.labels, &mut ev, sound, started);
        rec.stats.push(("confirm_rounds", rounds));
        rec.stats.push(("confirm_ms", millis(t)));
        rec.stats.push(("confirm_left", ev.left(0) as u64));
        let t = Instant::now();
        let settled = self.settle(g, report, &mut rec.labels, &mut ev, started, red);
        settled.push_to(&mut rec.stats);
        rec.stats.push(("settle_left", ev.left(0) as u64));
        rec.stats.push(("settle_ms", millis(t)));
        let unconfirmed = ev.unconfirmed();
        if unconfirmed.is_empty() {
            // Every label is exact: nothing was given up either.
            rec.weakened.retain(|w| !dropped(report, w) && !gave_up(w));
            rec.undecided.clear();
        } else {
            let mut all: Vec<NodeId> = undecided.into_iter().chain(unconfirmed).collect();
            all.sort_unstable();
            all.dedup();
            rec.undecided = all;
        }
        rec
    }

    /// [`Fsa::confirm`]'s rounds of choices, a batch of them in parallel
    /// (choices are independent), while they confirm nodes; the number of
    /// choices tried.
    fn confirm_rounds(
        &self,
        g: &Icfg,
        report: &Report,
        labels: &[Label],
        ev: &mut Evidence,
        sound: Option<&[Label]>,
        started: Instant,
    ) -> u64 {
        let mut rounds = 0;
        let mut left = ev.maybe.len();
        let mut stalled = false;
        let width = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_PARALLEL_CHOICES);
        while rounds < CONFIRM_ROUNDS && left > 0 && (rounds == 0 || left > SETTLE_AT) && !stalled {
            let remaining = match self.limits.timeout {
                Some(t) => match t.checked_sub(started.elapsed()) {
                    Some(r) if !r.is_zero() => Some(r),
                    _ => break,
                },
                None => None,
            };
            let choices: Vec<Report> = (0..width).map(|_| ev.choice(report, labels)).collect();
            let care = ev.care(labels.len());
            let mut inner = self.clone();
            inner.limits.timeout = remaining;
            rounds += choices.len() as u64;
            if crate::budget::past_deadline() {
                break;
            }
            let results: Vec<Result<Shown, SolveError>> = std::thread::scope(|scope| {
                let (inner, care) = (&inner, &care);
                // The thread's deadline (a value stage's) holds in the
                // threads it spawns.
                let deadline = crate::budget::deadline();
                let runs: Vec<_> = choices
                    .iter()
                    .map(|c| {
                        scope.spawn(move || {
                            crate::budget::with_deadline(deadline, || {
                                if self.limits.confirm_care {
                                    inner.choice_shown(g, c, sound, care)
                                } else {
                                    inner.recover_once(g, c, false, sound).map(Shown::Recovered)
                                }
                            })
                        })
                    })
                    .collect();
                runs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            // An impossible (or too large) choice shows nothing.
            for r in results.into_iter().flatten() {
                ev.record_shown(&r);
            }
            let now = ev.left(0);
            stalled = now > left / 2;
            left = now;
        }
        rounds
    }
}

/// What [`Fsa::confirm`] knows of the nodes Maybe: per node, what the
/// results of choices showed, and the draws that make choices.
pub(super) struct Evidence {
    /// The Maybe nodes (indices, sorted).
    pub(super) maybe: Vec<usize>,
    /// Per Maybe node: 1 seen Yes, 2 seen No, 4 seen Maybe (or decided).
    pub(super) seen: Vec<u8>,
    /// SplitMix64 (Steele, Lea, Flood 2014): deterministic draws.
    rng: u64,
}

impl Evidence {
    fn new(labels: &[Label]) -> Evidence {
        let maybe: Vec<usize> = (0..labels.len())
            .filter(|&i| labels[i] == Label::Maybe)
            .collect();
        Evidence {
            seen: vec![0u8; maybe.len()],
            maybe,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Leaves out the Maybe nodes `theirs` decides (they count as
    /// confirmed): another analysis decides them.
    fn leave(&mut self, theirs: &[Label]) {
        for (k, &i) in self.maybe.iter().enumerate() {
            if theirs.get(i).is_some_and(|&l| l != Label::Maybe) {
                self.seen[k] = 4;
            }
        }
    }

    /// Whether a node with evidence `m` is confirmed Maybe (or decided).
    pub(super) fn confirmed(m: u8) -> bool {
        m & 4 != 0 || m & 3 == 3
    }

    /// Nodes not confirmed, from the `from`-th Maybe node on.
    pub(super) fn left(&self, from: usize) -> usize {
        self.seen[from..]
            .iter()
            .filter(|&&m| !Self::confirmed(m))
            .count()
    }

    fn unconfirmed(&self) -> Vec<NodeId> {
        self.maybe
            .iter()
            .zip(&self.seen)
            .filter(|&(_, &m)| !Self::confirmed(m))
            .map(|(&i, _)| NodeId::new(i))
            .collect()
    }

    /// A number below `n`.
    pub(super) fn below(&mut self, n: usize) -> usize {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    /// What member `n`'s not running would show: best (0) a node still
    /// lacking an execution that skips it, worst (3) one lacking an
    /// execution that runs it.
    pub(super) fn rank(&self, n: NodeId) -> u8 {
        match self.maybe.binary_search(&n.index()) {
            Ok(k) if !Self::confirmed(self.seen[k]) => match self.seen[k] & 3 {
                1 => 0,
                2 => 3,
                _ => 2,
            },
            _ => 1,
        }
    }

    /// A choice: `report` with every ambiguous `obsNo` set replaced by one
    /// of its members that `labels` does not say ran, drawn among the best
    /// ranked.
    fn choice(&mut self, report: &Report, labels: &[Label]) -> Report {
        let mut chosen = report.clone();
        for set in &mut chosen.obs_no {
            if set.nodes().len() < 2 {
                continue;
            }
            let open = set
                .nodes()
                .iter()
                .copied()
                .filter(|&n| labels[n.index()] != Label::Yes);
            let Some(best) = open.clone().map(|n| self.rank(n)).min() else {
                continue;
            };
            let open: Vec<NodeId> = open.filter(|&n| self.rank(n) == best).collect();
            let pick = open[self.below(open.len())];
            *set = NodeSet::new(vec![pick]).expect("one node");
        }
        chosen
    }

    /// The Maybe nodes that lack an execution skipping them and are not
    /// confirmed: only their "must run" can confirm them (one that lacks
    /// only an execution running it is confirmed by "may run"); of `n`
    /// nodes.
    pub(super) fn care(&self, n: usize) -> BitSet {
        let mut care = BitSet::new(n);
        for (&i, &m) in self.maybe.iter().zip(&self.seen) {
            if !Self::confirmed(m) && m & 2 == 0 {
                care.insert(i);
            }
        }
        care
    }

    /// What [`Fsa::choice_shown`] shows. A classification of the
    /// contracted product, explicit, that found executions shows the
    /// choice possible: a node it says may run runs on one of them, a
    /// node it says need not run (outside `unsure`) is skipped by one.
    pub(super) fn record_shown(&mut self, shown: &Shown) {
        let c = match shown {
            Shown::Recovered(r) => return self.record(r),
            Shown::Nothing => return,
            Shown::Classified(c) => c,
        };
        if !c.exact {
            return;
        }
        for (k, &i) in self.maybe.iter().enumerate() {
            self.seen[k] |= match (c.may.contains(i), c.must.contains(i)) {
                (false, _) => 2,
                (true, true) => 1,
                (true, false) if c.unsure.contains(i) => 1,
                (true, false) => 1 | 2,
            };
        }
    }

    /// What the recovery `r` of a choice shows. Nothing if it dropped a
    /// constraint. Yes and No show an execution that runs (skips) the
    /// node only if the choice is surely possible: an exact result
    /// (nothing weakened, nothing undecided). Its Maybe nodes not listed
    /// as undecided are real.
    pub(super) fn record(&mut self, r: &Recovery) {
        if !r.weakened.iter().all(gave_up) {
            return;
        }
        let exact = r.undecided.is_empty() && r.weakened.is_empty();
        let open: HashSet<NodeId> = r.undecided.iter().copied().collect();
        for (k, &i) in self.maybe.iter().enumerate() {
            self.seen[k] |= match r.labels[i] {
                Label::Yes if exact => 1,
                Label::No if exact => 2,
                Label::Yes | Label::No => 0,
                Label::Maybe if !open.contains(&NodeId::new(i)) => 4,
                Label::Maybe => 0,
            };
        }
    }
}
