//! Brute-force reference solvers, for tests. They read the report with its
//! full, unweakened meaning over context-insensitive ICFG paths:
//!
//! * the path starts at the start node and ends at a crash node;
//! * the stack `<call₀, entry₀, …>` occurs as a subsequence (each element
//!   "one of these");
//! * an unreliable `obsYes` trace occurs as a subsequence; a reliable one
//!   is exactly the sequence of occurrences of the nodes it mentions;
//! * for every `obsNo` set, at least one member does not occur.
//!
//! [`enumerate_paths`] lists paths up to a length bound (simple and slow);
//! [`Product`] explores the product of the ICFG with one small automaton per
//! constraint, breadth first, and is exact (no bound).

use postmortem_core::icfg::Icfg;
use postmortem_core::ids::NodeId;
use postmortem_core::report::{NodeSet, Report};
use postmortem_core::solver::{Answer, Label, Query};
use std::collections::{HashSet, VecDeque};

/// Calls `visit` on every path from the start with at most `max_len`
/// nodes (every prefix of a longer path included).
pub fn enumerate_paths(g: &Icfg, max_len: usize, mut visit: impl FnMut(&[NodeId])) {
    let mut path = vec![g.start()];
    let mut iters: Vec<usize> = vec![0];
    visit(&path);
    while let Some(pos) = iters.last_mut() {
        let v = *path.last().expect("path");
        let succs: Vec<NodeId> = g.succs(v).map(|(w, _)| w).collect();
        if path.len() < max_len && *pos < succs.len() {
            let w = succs[*pos];
            *pos += 1;
            path.push(w);
            iters.push(0);
            visit(&path);
        } else {
            path.pop();
            iters.pop();
        }
    }
}

fn subsequence(path: &[NodeId], elems: &[NodeSet]) -> bool {
    let mut i = 0;
    for &x in path {
        if i < elems.len() && elems[i].contains(x) {
            i += 1;
        }
    }
    i == elems.len()
}

fn stack_vector(report: &Report) -> Vec<NodeSet> {
    report
        .stack
        .iter()
        .flat_map(|f| [f.call.clone(), f.entry.clone()])
        .collect()
}

/// Does `path` (which starts at the start node) satisfy the report and the
/// query?
pub fn path_consistent(report: &Report, query: Option<&Query>, path: &[NodeId]) -> bool {
    let Some(&last) = path.last() else {
        return false;
    };
    if let Some(c) = &report.crash {
        if !c.contains(last) {
            return false;
        }
    }
    if !subsequence(path, &stack_vector(report)) {
        return false;
    }
    for t in &report.obs_yes {
        if t.reliable {
            let occ: Vec<NodeId> = path
                .iter()
                .copied()
                .filter(|&x| t.entries.iter().any(|e| e.contains(x)))
                .collect();
            if occ.len() != t.entries.len()
                || occ.iter().zip(&t.entries).any(|(&x, e)| !e.contains(x))
            {
                return false;
            }
        } else if !subsequence(path, &t.entries) {
            return false;
        }
    }
    for s in &report.obs_no {
        if s.nodes().iter().all(|n| path.contains(n)) {
            return false;
        }
    }
    for b in &report.bursty {
        if !bursty_ok(path, &b.bursts) {
            return false;
        }
    }
    // By the constraint's definition (not its automaton).
    if !report.values.iter().all(|v| v.holds(path)) {
        return false;
    }
    match query {
        None => true,
        Some(Query::MayRun(n)) => path.contains(n),
        Some(Query::MaySkip(n)) => !path.contains(n),
        Some(Query::Trace(t)) => subsequence(path, t),
        Some(Query::Language(d)) => d.initial.iter().any(|&q0| {
            let mut q = q0;
            for x in path {
                q = d.step(q, x.as_u32());
                if q == postmortem_core::automaton::DEAD {
                    return false;
                }
            }
            d.accepting[q as usize]
        }),
        Some(q) => unimplemented!("the oracle does not know the query {q:?}"),
    }
}

/// Bursty-trace semantics, directly: the occurrences of the traced nodes
/// split as `u₀ B₁ u₁ … Bₖ uₖ` with burst `Bᵢ` matched element by element
/// and the `uᵢ` unobserved. Dynamic programme over (occurrence, element).
fn bursty_ok(path: &[NodeId], bursts: &[Vec<NodeSet>]) -> bool {
    let elems: Vec<&NodeSet> = bursts.iter().flatten().collect();
    let traced = |x: NodeId| elems.iter().any(|e| e.contains(x));
    let occ: Vec<NodeId> = path.iter().copied().filter(|&x| traced(x)).collect();
    let mut starts = Vec::new();
    let mut acc = 0;
    for b in bursts {
        starts.push(acc);
        acc += b.len();
    }
    let is_start = |j: usize| starts.contains(&j) || j == elems.len();
    // ok[j]: after some prefix of occ, exactly j elements matched and we are
    // outside a burst (j is a burst boundary) or inside (otherwise).
    let mut ok = vec![false; elems.len() + 1];
    ok[0] = true;
    for &x in &occ {
        let mut next = vec![false; elems.len() + 1];
        for j in 0..=elems.len() {
            if !ok[j] {
                continue;
            }
            let outside = is_start(j);
            if outside {
                next[j] = true; // unobserved occurrence
            }
            if j < elems.len() && elems[j].contains(x) {
                next[j + 1] = true;
            }
        }
        ok = next;
    }
    ok[elems.len()]
}

/// Labels from all consistent paths of at most `max_len` nodes; `None` if
/// there is none. Exact only when `max_len` is long enough.
pub fn recover_by_paths(g: &Icfg, report: &Report, max_len: usize) -> Option<Vec<Label>> {
    let n = g.num_nodes();
    let mut ran_some = vec![false; n];
    let mut skipped_some = vec![false; n];
    let mut any = false;
    let mut on = vec![false; n];
    enumerate_paths(g, max_len, |p| {
        if !path_consistent(report, None, p) {
            return;
        }
        any = true;
        on.iter_mut().for_each(|x| *x = false);
        for &x in p {
            on[x.index()] = true;
        }
        for i in 0..n {
            if on[i] {
                ran_some[i] = true;
            } else {
                skipped_some[i] = true;
            }
        }
    });
    any.then(|| {
        (0..n)
            .map(|i| label(ran_some[i], skipped_some[i]))
            .collect()
    })
}

fn label(may_run: bool, may_skip: bool) -> Label {
    match (may_run, may_skip) {
        (true, false) => Label::Yes,
        (false, _) => Label::No,
        (true, true) => Label::Maybe,
    }
}

/// One constraint automaton of the product.
enum Auto {
    /// Subsequence of these sets; state = matched prefix length.
    Subseq(Vec<NodeSet>),
    /// Exactly these occurrences of the mentioned nodes; state = matched.
    Reliable(Vec<NodeSet>, NodeSet),
    /// Not all of these; state = bit mask of members seen.
    NotAll(NodeSet),
    /// Must see this node; state = 0/1.
    Must(NodeId),
    /// A bursty trace; state = bit set of possible matched counts.
    Bursty(Vec<NodeSet>, Vec<bool>),
    /// A query automaton (one initial state); state = its state.
    Lang(postmortem_core::automaton::Dfa),
    /// A variable's last write: [`postmortem_core::report::LastWrite::step`]'s
    /// state.
    Last(postmortem_core::report::LastWrite),
}

const DEAD: u16 = u16::MAX;

impl Auto {
    fn step(&self, s: u16, x: NodeId) -> u16 {
        match self {
            Auto::Subseq(e) => {
                if (s as usize) < e.len() && e[s as usize].contains(x) {
                    s + 1
                } else {
                    s
                }
            }
            Auto::Reliable(e, all) => {
                if !all.contains(x) {
                    s
                } else if (s as usize) < e.len() && e[s as usize].contains(x) {
                    s + 1
                } else {
                    DEAD
                }
            }
            Auto::NotAll(set) => match set.nodes().iter().position(|&m| m == x) {
                Some(i) => {
                    let s = s | (1 << i);
                    if s.count_ones() as usize == set.nodes().len() {
                        DEAD
                    } else {
                        s
                    }
                }
                None => s,
            },
            Auto::Must(n) => u16::from(s == 1 || *n == x),
            Auto::Last(v) => v.step(usize::from(s), x) as u16,
            Auto::Lang(d) => {
                let t = d.step(u32::from(s), x.as_u32());
                if t == postmortem_core::automaton::DEAD {
                    DEAD
                } else {
                    t as u16
                }
            }
            Auto::Bursty(e, boundary) => {
                if !e.iter().any(|s| s.contains(x)) {
                    return s;
                }
                let mut t = 0u16;
                for j in 0..=e.len() {
                    if s & (1 << j) == 0 {
                        continue;
                    }
                    if boundary[j] {
                        t |= 1 << j;
                    }
                    if j < e.len() && e[j].contains(x) {
                        t |= 1 << (j + 1);
                    }
                }
                if t == 0 {
                    DEAD
                } else {
                    t
                }
            }
        }
    }
    fn accepts(&self, s: u16) -> bool {
        match self {
            Auto::Subseq(e) | Auto::Reliable(e, _) => s as usize == e.len(),
            Auto::NotAll(_) => true,
            Auto::Must(_) => s == 1,
            Auto::Bursty(e, _) => s & (1 << e.len()) != 0,
            Auto::Lang(d) => d.accepting[s as usize],
            Auto::Last(v) => v.accepts(usize::from(s)),
        }
    }
}

/// Exact reference: breadth-first exploration of the product of the ICFG
/// with one automaton per constraint.
pub struct Product<'a> {
    g: &'a Icfg,
    crash: Option<NodeSet>,
    autos: Vec<Auto>,
    forbidden: Option<NodeId>,
}

impl<'a> Product<'a> {
    /// The product for a report and an optional query.
    ///
    /// # Panics
    /// If an `obsNo` set has more than 15 nodes (the oracle is for small tests).
    pub fn new(g: &'a Icfg, report: &Report, query: Option<&Query>) -> Product<'a> {
        let mut autos = Vec::new();
        let stack = stack_vector(report);
        if !stack.is_empty() {
            autos.push(Auto::Subseq(stack));
        }
        for t in &report.obs_yes {
            if t.reliable {
                let all = NodeSet::new(
                    t.entries
                        .iter()
                        .flat_map(|e| e.nodes().iter().copied())
                        .collect(),
                );
                if let Some(all) = all {
                    autos.push(Auto::Reliable(t.entries.clone(), all));
                }
            } else {
                autos.push(Auto::Subseq(t.entries.clone()));
            }
        }
        for s in &report.obs_no {
            assert!(
                s.nodes().len() <= 15,
                "oracle supports obsNo sets of at most 15 nodes"
            );
            autos.push(Auto::NotAll(s.clone()));
        }
        for b in &report.bursty {
            let e: Vec<NodeSet> = b.bursts.iter().flatten().cloned().collect();
            assert!(
                e.len() < 15,
                "oracle supports bursty traces of at most 14 elements"
            );
            let mut boundary = vec![false; e.len() + 1];
            let mut acc = 0;
            for burst in &b.bursts {
                boundary[acc] = true;
                acc += burst.len();
            }
            boundary[e.len()] = true;
            autos.push(Auto::Bursty(e, boundary));
        }
        for v in &report.values {
            autos.push(Auto::Last(v.clone()));
        }
        let mut forbidden = None;
        match query {
            None => {}
            Some(Query::MayRun(n)) => autos.push(Auto::Must(*n)),
            Some(Query::MaySkip(n)) => forbidden = Some(*n),
            Some(Query::Trace(t)) => autos.push(Auto::Subseq(t.clone())),
            Some(Query::Language(d)) => {
                assert_eq!(
                    d.initial.len(),
                    1,
                    "oracle supports query automata with one initial state"
                );
                autos.push(Auto::Lang(d.clone()));
            }
            Some(q) => unimplemented!("the oracle does not know the query {q:?}"),
        }
        Product {
            g,
            crash: report.crash.clone(),
            autos,
            forbidden,
        }
    }

    fn step_all(&self, state: &[u16], x: NodeId) -> Option<Vec<u16>> {
        if Some(x) == self.forbidden {
            return None;
        }
        let mut next = Vec::with_capacity(state.len() + 1);
        next.push(x.as_u32() as u16);
        for (a, &s) in self.autos.iter().zip(&state[1..]) {
            let t = a.step(s, x);
            if t == DEAD {
                return None;
            }
            next.push(t);
        }
        Some(next)
    }

    /// Is some path consistent?
    ///
    /// # Panics
    /// On graphs of 65,535 nodes or more (the oracle is for small tests).
    pub fn answer(&self) -> Answer {
        assert!(
            self.g.num_nodes() < u16::MAX as usize,
            "oracle is for small graphs"
        );
        let init: Vec<u16> = std::iter::once(0)
            .chain(self.autos.iter().map(|a| match a {
                Auto::Bursty(..) => 1,
                Auto::Lang(d) => d.initial[0] as u16,
                _ => 0,
            }))
            .collect();
        let Some(first) = self.step_all(&init, self.g.start()) else {
            return Answer::Impossible;
        };
        let mut seen: HashSet<Vec<u16>> = HashSet::new();
        let mut queue = VecDeque::new();
        seen.insert(first.clone());
        queue.push_back(first);
        while let Some(s) = queue.pop_front() {
            let x = NodeId::new(s[0] as usize);
            let at_end = self.crash.as_ref().is_none_or(|c| c.contains(x));
            if at_end && self.autos.iter().zip(&s[1..]).all(|(a, &q)| a.accepts(q)) {
                return Answer::Possible;
            }
            for (w, _) in self.g.succs(x) {
                if let Some(t) = self.step_all(&s, w) {
                    if seen.insert(t.clone()) {
                        queue.push_back(t);
                    }
                }
            }
        }
        Answer::Impossible
    }
}

/// Exact answer to one query.
pub fn check(g: &Icfg, report: &Report, query: Option<&Query>) -> Answer {
    Product::new(g, report, query).answer()
}

/// Exact bulk recovery by two product explorations per node; `None` if the
/// report is impossible.
pub fn recover(g: &Icfg, report: &Report) -> Option<Vec<Label>> {
    if check(g, report, None) == Answer::Impossible {
        return None;
    }
    Some(
        g.nodes()
            .map(|n| {
                let run = check(g, report, Some(&Query::MayRun(n))) == Answer::Possible;
                let skip = check(g, report, Some(&Query::MaySkip(n))) == Answer::Possible;
                label(run, skip)
            })
            .collect(),
    )
}
