//! A report prepared for the search: its automata, the relaxed
//! observations, the gaps' reaching ends.

use super::*;

/// A report made ready for searches with more constraints (a query, or
/// the candidates of bulk recovery): what every search shares, computed
/// once.
///
/// Observations of single nodes ("n ran") and ambiguous `obsNo` sets are
/// *relaxed* first, unless implied (n is Yes for a weaker report: UTL
/// without these observations, or the stack alone): each one tracked
/// may double the tuples. A search runs with the tracked constraints
/// only; an impossible answer is then final (fewer constraints), and a
/// path that also satisfies every relaxed one is a witness. Otherwise the
/// relaxed constraints it violates are tracked and the search runs again
/// (counterexample-guided refinement), at most [`MAX_ROUNDS`] times.
/// What is tracked stays tracked for the next searches.
pub(crate) struct Prepared<'a> {
    g: &'a Icfg,
    report: &'a Report,
    limits: &'a CsLimits,
    deadline: Option<Instant>,
    /// Nodes on no consistent path.
    removed: BitSet,
    /// The report's automata that are always tracked.
    fixed: Vec<Dfa>,
    /// Relaxable observations: (nodes, "ran"), else "not all of nodes".
    relaxed: Vec<(Vec<u32>, bool)>,
    tracked: Vec<bool>,
    targets: Option<Vec<NodeId>>,
    /// Constraints weakened while splitting the report.
    pub weakened: Vec<Weakening>,
    /// States built by all searches so far.
    pub states: usize,
    /// Most states of one search that does not count against the total.
    pub cap: usize,
    /// States of the last search.
    pub last: usize,
}

impl<'a> Prepared<'a> {
    /// `None` when the report alone is already known impossible.
    pub(crate) fn new(
        g: &'a Icfg,
        report: &'a Report,
        limits: &'a CsLimits,
        deadline: Option<Instant>,
    ) -> Result<Option<Prepared<'a>>, Unsupported> {
        // UTL's labels: sound for the report, so for every valid path of it.
        let utl = crate::utl::Utl::default();
        let labels = match utl.recover(g, report) {
            Ok(rec) => Some(rec.labels),
            Err(SolveError::Infeasible { .. }) => return Ok(None),
            Err(_) => None,
        };
        // The stack is the frame structure here, not a trace.
        let plain = Report {
            stack: Vec::new(),
            stack_gaps: Vec::new(),
            sibling_gaps: Vec::new(),
            ..report.clone()
        };
        let Ok(sp) = crate::fsa::split(g, &plain, None, None, limits.max_states) else {
            return Ok(None);
        };
        let mut removed = sp.absent.clone();
        if let Some(l) = &labels {
            for (v, &x) in l.iter().enumerate() {
                if x == Label::No {
                    removed.insert(v);
                }
            }
        }
        // Implied observations: Yes for the stack alone (on the graph
        // without the nodes that never run), or for UTL without the
        // observations of single nodes.
        let mut implied = BitSet::new(g.num_nodes());
        match crate::cs::stack_labels(g, report, &removed, limits) {
            Ok((l, _)) => {
                for (v, &x) in l.iter().enumerate() {
                    match x {
                        Label::Yes => implied.insert(v),
                        Label::No => removed.insert(v),
                        Label::Maybe => false,
                    };
                }
            }
            Err(SolveError::Infeasible { .. }) => return Ok(None),
            Err(_) => {}
        }
        let single = |t: &crate::report::Trace| {
            !t.reliable && t.entries.len() == 1 && t.entries[0].single().is_some()
        };
        let weaker = Report {
            obs_yes: report
                .obs_yes
                .iter()
                .filter(|t| !single(t))
                .cloned()
                .collect(),
            ..report.clone()
        };
        match utl.recover(g, &weaker) {
            Ok(rec) => {
                for (v, &x) in rec.labels.iter().enumerate() {
                    if x == Label::Yes {
                        implied.insert(v);
                    }
                }
            }
            Err(SolveError::Infeasible { .. }) => return Ok(None),
            Err(_) => {}
        }
        Ok(Some(Prepared::assemble(
            g, report, limits, deadline, &sp, removed, &implied,
        )))
    }

    /// A report made ready with the nodes of `removed` known to be on no
    /// consistent path, and no observation known implied.
    pub(crate) fn with_removed(
        g: &'a Icfg,
        report: &'a Report,
        limits: &'a CsLimits,
        deadline: Option<Instant>,
        mut removed: BitSet,
    ) -> Option<Prepared<'a>> {
        let plain = Report {
            stack: Vec::new(),
            stack_gaps: Vec::new(),
            sibling_gaps: Vec::new(),
            ..report.clone()
        };
        let sp = crate::fsa::split(g, &plain, None, None, limits.max_states).ok()?;
        for v in sp.absent.iter() {
            removed.insert(v);
        }
        let implied = BitSet::new(g.num_nodes());
        Some(Prepared::assemble(
            g, report, limits, deadline, &sp, removed, &implied,
        ))
    }

    /// The automata of split report `sp`: observations of single nodes
    /// and ambiguous `obsNo` sets relaxed unless `implied`, the rest fixed.
    pub(super) fn assemble(
        g: &'a Icfg,
        report: &'a Report,
        limits: &'a CsLimits,
        deadline: Option<Instant>,
        sp: &crate::lower::Split,
        removed: BitSet,
        implied: &BitSet,
    ) -> Prepared<'a> {
        let mut fixed: Vec<Dfa> = Vec::new();
        let mut relaxed: Vec<(Vec<u32>, bool)> = Vec::new();
        for v in &sp.vectors {
            match v.as_slice() {
                [n] if implied.contains(*n as usize) => {}
                [n] => relaxed.push((vec![*n], true)),
                _ => fixed.push(subsequence(v)),
            }
        }
        for (i, a) in sp.autos.iter().enumerate() {
            if sp.droppable.contains(&i) {
                let mut members: Vec<u32> = a.mentioned().collect();
                members.sort_unstable();
                relaxed.push((members, false));
            } else {
                fixed.push(a.clone());
            }
        }
        let targets = sp
            .targets
            .as_ref()
            .map(|t| t.iter().map(|&n| NodeId::new(n as usize)).collect());
        Prepared {
            g,
            report,
            limits,
            deadline,
            removed,
            fixed,
            tracked: vec![false; relaxed.len()],
            relaxed,
            targets,
            weakened: sp.weakened.clone(),
            states: 0,
            cap: usize::MAX,
            last: 0,
        }
    }

    /// Whether `v` is on no consistent path (known before any search).
    pub(crate) fn removed(&self, v: usize) -> bool {
        self.removed.contains(v)
    }

    /// The relaxable observations: (nodes, "ran"), else "not all of
    /// nodes".
    pub(crate) fn relaxed(&self) -> &[(Vec<u32>, bool)] {
        &self.relaxed
    }

    /// The automata always tracked.
    pub(crate) fn fixed(&self) -> &[Dfa] {
        &self.fixed
    }

    /// The nodes removed before any search, and the crash's targets:
    /// with [`Prepared::fixed`] and [`Prepared::relaxed`], all that an
    /// exploration of the same report and graph depends on.
    pub(crate) fn shape(&self) -> (&BitSet, Option<&[NodeId]>) {
        (&self.removed, self.targets.as_deref())
    }

    /// How many automata the report needs besides the relaxed
    /// observations.
    pub(crate) fn automata(&self) -> usize {
        self.fixed.len()
    }

    /// Every state of the valid paths of the report with its automata
    /// (none without `automata`; no relaxed observation tracked), and
    /// every way each is reached: the hypergraph of [`crate::cs::bulk`]. At
    /// most `max_states` states (with the derivation steps logged).
    pub(crate) fn explode(&self, automata: bool, max_states: usize) -> Result<Hyper, Unsupported> {
        let autos: Vec<&Dfa> = if automata {
            self.fixed.iter().collect()
        } else {
            Vec::new()
        };
        let segs = segments(self.g, self.report);
        let k = self.report.stack.len();
        let max_states = max_states
            .min(self.limits.max_states)
            .min(self.limits.max_memory / BYTES_PER_STATE)
            .max(1);
        let mut s = Search::new(
            self.g,
            autos,
            Seen::new(&[]),
            self.removed.clone(),
            segs.clone(),
            self.limits,
            self.deadline,
            max_states,
        );
        s.log = Some(Log::default());
        // A bulk exploration keeps every state: about one path edge per
        // node that may run, on graphs of one context per function.
        let open = self.g.num_nodes() - self.removed.count();
        s.path.reserve(open);
        s.top.reserve(open / 8);
        if self.limits.lean && !s.autos.is_empty() && s.autos.len() <= 64 {
            s.sym = s
                .autos
                .iter()
                .map(|a| if a.resets() { None } else { Sym::of(a) })
                .collect();
            s.kept = Some(kept_by_contexts(self.g, &s.autos, &s.sym));
        }
        if self.limits.lean {
            s.ends = reaching_ends(self.g, self.report, &segs, self.targets.as_deref());
        }
        s.run(self.report, &segs, k, self.targets.as_deref())?;
        Ok(s.hyper())
    }

    /// Is there a valid path for the report that is also accepted by
    /// `extra`, avoids `absent`, and (with `not_all`) misses some node of
    /// `not_all`? Returns one, or `None`. Only `total` searches count
    /// their states against the limit; others count one search's.
    pub(crate) fn run(
        &mut self,
        extra: &[Dfa],
        absent: &[u32],
        not_all: Option<&[u32]>,
        total: bool,
    ) -> Result<Option<Vec<NodeId>>, Unsupported> {
        let g = self.g;
        let mut removed = self.removed.clone();
        for &v in absent {
            removed.insert(v as usize);
        }
        for _ in 0..MAX_ROUNDS {
            let autos: Vec<&Dfa> = self.fixed.iter().chain(extra).collect();
            let mut seen: Vec<(&[u32], bool)> = self
                .relaxed
                .iter()
                .zip(&self.tracked)
                .filter(|(_, &t)| t)
                .map(|((nodes, ran), _)| (&nodes[..], *ran))
                .collect();
            if let Some(s) = not_all {
                seen.push((s, false));
            }
            let before = self.states;
            let mut used = if total { self.states } else { 0 };
            let capped = CsLimits {
                max_states: if total {
                    self.limits.max_states
                } else {
                    self.limits.max_states.min(self.cap)
                },
                ..self.limits.clone()
            };
            let found = search(
                g,
                self.report,
                autos,
                Seen::new(&seen),
                removed.clone(),
                self.targets.as_deref(),
                &capped,
                self.deadline,
                &mut used,
            );
            self.states += if total { used - self.states } else { used };
            self.last = if total { used - before } else { used };
            let Some(found) = found? else {
                return Ok(None);
            };
            let Some(path) = found else {
                return Err(Unsupported(format!(
                    "no witness to check: it is longer than {MAX_WITNESS} nodes"
                )));
            };
            let mut on = BitSet::new(g.num_nodes());
            for v in &path {
                on.insert(v.index());
            }
            let mut violated = false;
            for (i, (nodes, ran)) in self.relaxed.iter().enumerate() {
                let ok = if *ran {
                    on.contains(nodes[0] as usize)
                } else {
                    nodes.iter().any(|&n| !on.contains(n as usize))
                };
                if !ok && !violated {
                    // One at a time: each tracked one may double the tuples.
                    debug_assert!(!self.tracked[i], "a tracked constraint violated");
                    self.tracked[i] = true;
                    violated = true;
                }
            }
            if !violated {
                return Ok(Some(path));
            }
        }
        Err(Unsupported(format!(
            "the context-sensitive search did not settle the report's observations in {MAX_ROUNDS} rounds"
        )))
    }
}

/// Per segment of `segs`, for a gap, the functions from which a chain of
/// calls reaches a function holding the segment's end (the next frame's
/// call site, or for the last segment a crash target; `None` there when
/// any node may end it): a path that enters another function by an
/// unreported call never returns from it at top level and cannot end the
/// segment. `None` when the graph has jumps between functions (a jump
/// leaves an unreported call without reaching the end).
pub(super) fn reaching_ends(
    g: &Icfg,
    report: &Report,
    segs: &[crate::cs::frames::Segment],
    targets: Option<&[NodeId]>,
) -> Option<Vec<Option<BitSet>>> {
    let nf = g.functions().len();
    let calls = g.call_graph();
    if calls.any_leaves {
        return None;
    }
    let up = &calls.callers;
    let k = report.stack.len();
    let out = segs
        .iter()
        .enumerate()
        .map(|(j, seg)| {
            if !seg.gap {
                return None;
            }
            let ends: Vec<NodeId> = if j < k {
                report.stack[j].call.nodes().to_vec()
            } else {
                targets?.to_vec()
            };
            let mut reach = BitSet::new(nf);
            let mut stack: Vec<u32> = Vec::new();
            for e in ends {
                let f = g.func_of(e).index();
                if reach.insert(f) {
                    stack.push(f as u32);
                }
            }
            while let Some(f) = stack.pop() {
                for &c in up.succs(f) {
                    if reach.insert(c as usize) {
                        stack.push(c);
                    }
                }
            }
            Some(reach)
        })
        .collect();
    Some(out)
}
