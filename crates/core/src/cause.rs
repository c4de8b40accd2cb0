//! Where the bad value came from: the definitions of a variable that can
//! reach the crash on an execution the report allows (issue 36, the
//! slice's first step: reaching definitions of the variables that held
//! the faulting operand, over the executions the report allows).
//!
//! A variable of the front-end's variable map (a scalar whose address
//! never escapes: every write is one of its stores) holds, at the crash,
//! what its last store before the crash wrote; or, when no store ran,
//! its initial value (a global's initializer) or whatever its stack slot
//! held (a local whose activation stored nothing). For each candidate
//! definition `d` (a store that can have left the value read from the
//! core, the uninitialised slot, the initial value), the report with one
//! more last-write constraint, "the last write of the variable is `d`",
//! is checked with the solver ([`Solver::possible`]). `d` is the cause on
//! every execution the report allows when it is the only candidate whose
//! check is not Impossible ([`Made::Every`]); else each possible one is
//! a cause on some ([`Made::Some`]).
//!
//! Sound as the solver's Impossible is: a candidate is dropped only when
//! no execution consistent with the report (and the program) has it as
//! the last write; a check the limits stopped counts as possible. The
//! candidates must be all the ways the value can have been made, so only
//! variables the front-end tracks completely are asked about, and not in
//! programs with code that may run asynchronously (a signal handler or
//! another thread may store to a global off the crashing path).

use crate::icfg::{Icfg, NodeKind};
use crate::ids::NodeId;
use crate::report::{LastWrite, NodeSet, Report};
use crate::solver::{Answer, Label, Solver};

/// One way a variable's value can have been made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Definition {
    /// A store of the program.
    Store(NodeId),
    /// No store ran in the local's activation (its function's entry): the
    /// slot holds what it held before.
    Uninitialised(NodeId),
    /// No store ran at all: a global's initial value.
    Initial,
}

/// Whether a definition made the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    /// On every execution the report allows (the only possible one).
    Every,
    /// On some of them.
    Some,
}

/// The variable, as the question needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Every store of the variable, and (for a local) its function's
    /// entry, where its activation starts.
    pub writes: NodeSet,
    /// The definitions that can have left the value read (the others
    /// cannot: a store of another constant, a null pointer's `&x`).
    pub candidates: Vec<Definition>,
    /// For messages: ``e = 0x0 (frame #0 `get`)``.
    pub what: String,
}

/// The candidates of `v` that made its value on some execution the
/// report allows, each with [`Made`]; empty when the report itself is
/// impossible. With `hint` (labels sound for the report and the evidence
/// the caller holds: the analysis's), each candidate is first tried
/// against the hint refined ([`Solver::refine_hint`]: a candidate it
/// shows impossible is dropped), then, while two or more are left, one
/// whole check per candidate (with one candidate, none).
pub fn reaching(
    s: &dyn Solver,
    g: &Icfg,
    report: &Report,
    v: &Variable,
    hint: Option<&[Label]>,
) -> Vec<(Definition, Made)> {
    let with = |d: Definition| {
        let mut r = report.clone();
        r.values.push(last_is(v, d));
        r
    };
    let possible: Vec<Definition> = if v.candidates.len() < 2 {
        v.candidates.clone()
    } else {
        // First the hint refined (the bulk pass over what the analysis
        // left open: cheap), then a whole check of those it did not rule
        // out, while more than one is left.
        let refuted = |d: Definition| {
            hint.is_some_and(|h| {
                matches!(
                    s.refine_hint(g, &with(d), h, &[]),
                    Err(crate::solver::SolveError::Infeasible { .. })
                )
            })
        };
        let left: Vec<Definition> = v
            .candidates
            .iter()
            .copied()
            .filter(|&d| !refuted(d))
            .collect();
        if left.len() < 2 {
            left
        } else {
            left.into_iter()
                // A check the limits stopped is a possible one.
                .filter(|&d| !matches!(s.possible(g, &with(d), None), Ok(Answer::Impossible)))
                .collect()
        }
    };
    let made = if possible.len() == 1 {
        Made::Every
    } else {
        Made::Some
    };
    possible.into_iter().map(|d| (d, made)).collect()
}

/// The constraint "the last write of `v` is `d`".
fn last_is(v: &Variable, d: Definition) -> LastWrite {
    let (keep, need) = match d {
        Definition::Store(n) | Definition::Uninitialised(n) => (Some(n), true),
        Definition::Initial => (None, false),
    };
    let bad: Vec<NodeId> = v
        .writes
        .nodes()
        .iter()
        .copied()
        .filter(|&n| Some(n) != keep)
        .collect();
    LastWrite {
        writes: v.writes.clone(),
        bad,
        need,
        what: format!("{}: made by {d:?}", v.what),
        tests: Vec::new(),
    }
}

/// The branch that kept `store` (a node that ran on no execution the
/// report allows) from running: the nearest branch before it in its
/// function that ran or may have run (`labels` not No) and has a
/// successor, itself not No, from which the function can end without
/// passing `store` (the branch on which the store is control dependent,
/// Ferrante, Ottenstein and Warren's sense, taken from the store
/// backwards: the first such branch a breadth-first search over
/// predecessors meets). Branches that did not run are passed over: what
/// skipped the store is further up. The function's local graph is the
/// Local walk's ([`crate::local::LocalGraph`]: flow edges, each call site
/// to its return sites and to the function's non-local jump targets).
/// `None` when no such branch exists (the whole function did not run).
pub fn skipped_by(g: &Icfg, labels: &[Label], store: NodeId) -> Option<NodeId> {
    skipped_all(g, labels, &[store])
}

/// [`skipped_by`] for several stores of one function at once: the
/// nearest branch before any of them that has a successor from which the
/// function can end without passing any of them (`if (!ready) { if (hc)
/// p->s = a(); else p->s = b(); }`: the test of `ready`, not of `hc`,
/// which only chooses between them). `None` when the stores are not all
/// in one function or no such branch exists.
pub fn skipped_all(g: &Icfg, labels: &[Label], stores: &[NodeId]) -> Option<NodeId> {
    let f = g.func_of(*stores.first()?);
    if stores.iter().any(|&s| g.func_of(s) != f) {
        return None;
    }
    let local = crate::local::LocalGraph::of_function(g, f, labels);
    let (nodes, succ) = (&local.nodes, &local.succ);
    let pred = local.preds();
    let mut is_store = vec![false; nodes.len()];
    for &store in stores {
        is_store[nodes.iter().position(|&v| v == store)?] = true;
    }
    // `avoid[v]`: from v the function can end (its exit, or a node with
    // no successor: a call that never returns) without passing a store.
    let mut avoid = vec![false; nodes.len()];
    let mut stack: Vec<usize> = (0..nodes.len())
        .filter(|&i| !is_store[i] && (succ[i].is_empty() || g.kind(nodes[i]) == NodeKind::Exit))
        .collect();
    for &i in &stack {
        avoid[i] = true;
    }
    while let Some(v) = stack.pop() {
        for &p in &pred[v] {
            if !is_store[p] && !avoid[p] {
                avoid[p] = true;
                stack.push(p);
            }
        }
    }
    let not_no = |i: usize| labels.get(nodes[i].index()) != Some(&Label::No);
    let mut seen = is_store.clone();
    let mut queue: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    for s in (0..nodes.len()).filter(|&i| is_store[i]) {
        for &p in &pred[s] {
            if !seen[p] {
                seen[p] = true;
                queue.push_back(p);
            }
        }
    }
    while let Some(b) = queue.pop_front() {
        // A branch: two successors at least (the Local walk's graph may
        // list one twice: a call's fall-through and its return site).
        let branch = succ[b].iter().any(|&t| t != succ[b][0]);
        let decides = branch
            && not_no(b)
            && succ[b]
                .iter()
                .any(|&t| !is_store[t] && avoid[t] && not_no(t));
        if decides {
            return Some(nodes[b]);
        }
        for &p in &pred[b] {
            if !seen[p] {
                seen[p] = true;
                queue.push_back(p);
            }
        }
    }
    None
}

/// The call sites of `site`'s function that may run before it in one
/// activation, nearest first (a breadth-first search back from `site`
/// over the function's local graph, [`skipped_by`]'s, through nodes
/// `labels` does not say are No), that `wanted` accepts: at most `max`.
pub fn calls_before(
    g: &Icfg,
    labels: &[Label],
    site: NodeId,
    wanted: &dyn Fn(NodeId) -> bool,
    max: usize,
) -> Vec<NodeId> {
    let local = crate::local::LocalGraph::of_function(g, g.func_of(site), labels);
    let pred = local.preds();
    let nodes = &local.nodes;
    let Some(s) = nodes.iter().position(|&v| v == site) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = vec![false; nodes.len()];
    seen[s] = true;
    let mut queue: std::collections::VecDeque<usize> = std::collections::VecDeque::from([s]);
    while let Some(v) = queue.pop_front() {
        for &p in &pred[v] {
            if seen[p] || local.dead[p] {
                continue;
            }
            seen[p] = true;
            let n = nodes[p];
            if g.kind(n) == NodeKind::CallSite && wanted(n) {
                out.push(n);
                if out.len() == max {
                    return out;
                }
            }
            queue.push_back(p);
        }
    }
    out
}

/// The branch that ends the loop around `store` (a store to one element
/// of an array per pass, `a[i] = v`): the nearest branch before it that
/// can leave without passing it ([`skipped_by`]) and that `store` reaches
/// again (over the function's local graph, through nodes `labels` does
/// not say are No). An element the loop did not reach keeps another
/// value: the loop's bound decides which are set. `None` when no such
/// branch exists or the store is in no loop.
pub fn loop_exit(g: &Icfg, labels: &[Label], store: NodeId) -> Option<NodeId> {
    let b = skipped_by(g, labels, store)?;
    let local = crate::local::LocalGraph::of_function(g, g.func_of(store), labels);
    let (nodes, succ) = (&local.nodes, &local.succ);
    let s = nodes.iter().position(|&v| v == store)?;
    let not_no = |i: usize| labels.get(nodes[i].index()) != Some(&Label::No);
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![s];
    seen[s] = true;
    while let Some(v) = stack.pop() {
        for &t in &succ[v] {
            if nodes[t] == b {
                return Some(b);
            }
            if !seen[t] && not_no(t) {
                seen[t] = true;
                stack.push(t);
            }
        }
    }
    None
}

/// Whether `a` and `b`, nodes of one function, are in one loop of it:
/// each reaches the other over the function's local graph (as
/// [`skipped_by`]'s, through nodes `labels` does not say are No).
pub fn in_one_loop(g: &Icfg, labels: &[Label], a: NodeId, b: NodeId) -> bool {
    if g.func_of(a) != g.func_of(b) {
        return false;
    }
    let local = crate::local::LocalGraph::of_function(g, g.func_of(a), labels);
    let (nodes, succ) = (&local.nodes, &local.succ);
    let reaches = |from: NodeId, to: NodeId| {
        let (Some(s), Some(t)) = (
            nodes.iter().position(|&v| v == from),
            nodes.iter().position(|&v| v == to),
        ) else {
            return false;
        };
        let mut seen = vec![false; nodes.len()];
        let mut stack = vec![s];
        seen[s] = true;
        while let Some(v) = stack.pop() {
            for &w in &succ[v] {
                if w == t {
                    return true;
                }
                if !seen[w] && labels.get(nodes[w].index()) != Some(&Label::No) {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        false
    };
    reaches(a, b) && reaches(b, a)
}

/// The definitions of a local variable of `at`'s function that can have
/// made its value at `at` (read there, before any store of `at`): walking
/// back from `at` over the function's local graph (as [`skipped_by`]'s)
/// through nodes `labels` does not say are No, each of `writes` met ends
/// the walk there and is such a definition, as is the function's entry
/// (no store in the activation: uninitialised). `cut(b, s)` says that
/// the step from `b` to its successor `s` cannot have been taken with
/// the value (a branch that tests the variable and sends it elsewhere:
/// the value is the variable's from the test on, since no store to it
/// comes between). `at` itself, when it is one of `writes`, is kept (its
/// store may come before the read).
pub fn reaching_writes(
    g: &Icfg,
    labels: &[Label],
    at: NodeId,
    writes: &[NodeId],
    cut: &dyn Fn(NodeId, NodeId) -> bool,
) -> Reached {
    let local = crate::local::LocalGraph::of_function(g, g.func_of(at), labels);
    let nodes = &local.nodes;
    let pred = local.preds();
    let mut out = Reached::default();
    let Some(a) = nodes.iter().position(|&v| v == at) else {
        return out;
    };
    if writes.contains(&at) {
        out.writes.push(at);
    }
    let mut seen = vec![false; nodes.len()];
    seen[a] = true;
    let mut stack = vec![a];
    while let Some(v) = stack.pop() {
        for &p in &pred[v] {
            if seen[p] || local.dead[p] || cut(nodes[p], nodes[v]) {
                continue;
            }
            seen[p] = true;
            out.passed.push(nodes[p]);
            if writes.contains(&nodes[p]) {
                out.writes.push(nodes[p]);
            } else if g.kind(nodes[p]) == NodeKind::Entry {
                out.entry = true;
            } else {
                stack.push(p);
            }
        }
    }
    out.writes.sort_unstable();
    out.writes.dedup();
    out.passed.sort_unstable();
    out
}

/// What [`reaching_writes`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// The writes met, sorted.
    pub writes: Vec<NodeId>,
    /// Whether the function's entry was met (no store on some way).
    pub entry: bool,
    /// Every node the walk went through (the writes and the entry
    /// included), sorted: where the value may have been before `at`.
    pub passed: Vec<NodeId>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsa::Fsa;
    use crate::icfg::{IcfgBuilder, NodeKind};

    /// `main` of `N` nodes, the first its entry and the start, each of
    /// the given kind on lines 1, 2, ... in order, with flow edges
    /// between the nodes of the given positions.
    fn function<const N: usize>(
        kinds: [NodeKind; N],
        edges: &[(usize, usize)],
    ) -> (Icfg, [NodeId; N]) {
        let mut b = IcfgBuilder::new();
        let f = b.function("main");
        b.set_function_file(f, "m.c");
        let nodes =
            std::array::from_fn(|i| b.test_node(&format!("n{i}"), kinds[i], f, i as u32 + 1));
        b.set_start(nodes[0]);
        for &(p, q) in edges {
            b.add_flow_edge(nodes[p], nodes[q]);
        }
        (b.build().unwrap(), nodes)
    }

    /// main: entry, `x = 0` (s0), a branch to `x = 1` (s1) or `x = 2`
    /// (s2), then the crash (c).
    fn graph() -> (Icfg, [NodeId; 5]) {
        use NodeKind::{Entry, Statement};
        function(
            [Entry, Statement, Statement, Statement, Statement],
            &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4)],
        )
    }

    #[test]
    fn the_only_store_the_report_allows_made_the_value() {
        let (g, [_, s0, s1, s2, c]) = graph();
        let v = Variable {
            writes: NodeSet::new(vec![s0, s1, s2]).unwrap(),
            candidates: vec![
                Definition::Store(s0),
                Definition::Store(s1),
                Definition::Store(s2),
            ],
            what: "x".into(),
        };
        let report = Report {
            crash: Some(NodeSet::one(c)),
            ..Report::default()
        };
        // Both branches are possible; s0 is always overwritten.
        let r = reaching(&Fsa::default(), &g, &report, &v, None);
        assert_eq!(
            r,
            vec![
                (Definition::Store(s1), Made::Some),
                (Definition::Store(s2), Made::Some)
            ]
        );
        // s2 seen not to run: s1 made it, on every execution.
        let mut seen = report.clone();
        seen.obs_no.push(NodeSet::one(s2));
        let r = reaching(&Fsa::default(), &g, &seen, &v, None);
        assert_eq!(r, vec![(Definition::Store(s1), Made::Every)]);
        // A global never stored on the way: its initial value, if the
        // stores can be avoided (they cannot here).
        let v = Variable {
            candidates: vec![Definition::Initial, Definition::Store(s2)],
            ..v
        };
        let r = reaching(&Fsa::default(), &g, &report, &v, None);
        assert_eq!(r, vec![(Definition::Store(s2), Made::Every)]);
    }

    /// Back from the crash (c): both `x = 1` (s1) and `x = 2` (s2) reach
    /// it, `x = 0` (s0) never does (overwritten on every way); a cut step
    /// (s2 to c: a test sent the value elsewhere) or a No label leaves a
    /// write out; with no store on a way, the entry is met.
    #[test]
    fn the_writes_that_reach_a_read_are_found_walking_back() {
        let (g, [e, s0, s1, s2, c]) = graph();
        let labels = vec![Label::Maybe; g.num_nodes()];
        let none = |_: NodeId, _: NodeId| false;
        let got = |r: Reached| (r.writes, r.entry);
        let r = reaching_writes(&g, &labels, c, &[s0, s1, s2], &none);
        assert_eq!(r.passed, vec![s1, s2]);
        assert_eq!(got(r), (vec![s1, s2], false));
        let cut = |b: NodeId, t: NodeId| (b, t) == (s2, c);
        let r = reaching_writes(&g, &labels, c, &[s0, s1, s2], &cut);
        assert_eq!(got(r), (vec![s1], false));
        let mut no = labels.clone();
        no[s1.index()] = Label::No;
        let r = reaching_writes(&g, &no, c, &[s0, s2], &none);
        assert_eq!(got(r), (vec![s2], false));
        let r = reaching_writes(&g, &labels, c, &[s2], &none);
        assert_eq!(r.passed, vec![e, s0, s1, s2]);
        assert_eq!(got(r), (vec![s2], true));
    }

    /// `x = 1` (s1) did not run: the branch after `x = 0` (s0) skipped
    /// it; when s0 did not run either, nothing in the function ran.
    #[test]
    fn the_branch_that_skipped_a_store_is_named() {
        let (g, [e, s0, s1, s2, c]) = graph();
        let mut labels = vec![Label::Yes; g.num_nodes()];
        labels[s1.index()] = Label::No;
        assert_eq!(skipped_by(&g, &labels, s1), Some(s0));
        // Either way: the branch may have run.
        labels[s0.index()] = Label::Maybe;
        assert_eq!(skipped_by(&g, &labels, s1), Some(s0));
        // The other way did not run either: nothing decided it here.
        labels[s2.index()] = Label::No;
        assert_eq!(skipped_by(&g, &labels, s1), None);
        labels[s2.index()] = Label::Yes;
        // A branch that did not run is passed over (none is above it).
        labels[s0.index()] = Label::No;
        assert_eq!(skipped_by(&g, &labels, s1), None);
        let _ = (e, c);
    }

    /// The calls before a node, nearest first, as `wanted` picks them:
    /// calls c0 and c1 (each to its return site) before the call x.
    #[test]
    fn the_calls_before_a_node_are_found_nearest_first() {
        use NodeKind::{CallSite, Entry, Statement};
        let (g, [_, c0, r0, c1, _, x]) = function(
            [Entry, CallSite, Statement, CallSite, Statement, CallSite],
            &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
        );
        let labels = vec![Label::Yes; g.num_nodes()];
        let any = |_: NodeId| true;
        assert_eq!(calls_before(&g, &labels, x, &any, 5), vec![c1, c0]);
        assert_eq!(calls_before(&g, &labels, x, &any, 1), vec![c1]);
        let not_c1 = |n: NodeId| n != c1;
        assert_eq!(calls_before(&g, &labels, x, &not_c1, 5), vec![c0]);
        // Nothing is found through a node that did not run.
        let mut no = labels.clone();
        no[r0.index()] = Label::No;
        assert_eq!(calls_before(&g, &no, x, &any, 5), vec![c1]);
    }

    /// `if (!ready) { if (hc) p->s = a(); else p->s = b(); }`: the test
    /// of `ready` (r) may have skipped both stores; the test of `hc` (h)
    /// only chose between them, though it is the nearest to each.
    #[test]
    fn the_branch_that_skipped_every_store_of_a_set_is_named() {
        use NodeKind::{Entry, Statement};
        let (g, [_, r, h, s1, s2, c]) = function(
            [Entry, Statement, Statement, Statement, Statement, Statement],
            &[(0, 1), (1, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)],
        );
        let labels = vec![Label::Maybe; g.num_nodes()];
        assert_eq!(skipped_by(&g, &labels, s1), Some(h));
        assert_eq!(skipped_all(&g, &labels, &[s1]), Some(h));
        assert_eq!(skipped_all(&g, &labels, &[s1, s2]), Some(r));
        assert_eq!(skipped_all(&g, &labels, &[s2, s1]), Some(r));
        // The way around them did not run: nothing here skipped them.
        let mut no = labels.clone();
        no[c.index()] = Label::No;
        assert_eq!(skipped_all(&g, &no, &[s1, s2]), None);
        assert_eq!(skipped_all(&g, &labels, &[]), None);
    }
}
