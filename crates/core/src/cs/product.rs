//! Context-sensitive queries: is there a valid path (calls and returns
//! matched, the pending calls at the crash the report's frames) that
//! satisfies every constraint of the report and the query?
//!
//! The report and the query become automata over nodes exactly as for
//! the FSA solver ([`crate::fsa::split`]); a *tuple* is one state per
//! automaton. The search is Reps–Horwitz–Sagiv tabulation (POPL 1995)
//! with tuples as the facts, split by the stack's segments as
//! [`super::frames`] describes:
//!
//! * **Top-level states** `(node, segment, tuple)`: the path so far, with
//!   the pending calls of the segments before. Edges: flow inside the
//!   function; frame `j`'s call into segment `j + 1`; at a gap, an
//!   unreported call that never returns; and a completed call, through a
//!   summary of its callee.
//! * **Summaries** per *context* `(callee entry, tuple on entry)`: the
//!   tuples with which an invocation can reach the callee's exit, found by
//!   path edges `(context, node, tuple)` inside the callee. A caller waits
//!   on a context; each exit tuple found later resumes every waiter at the
//!   call's return sites. Recursion needs nothing more.
//!
//! Only what is reached is built (contexts only for tuples that reach a
//! call), with explicit worklists. A witness is read back from the
//! predecessor of each state: a top-level state or path edge was first
//! reached by one flow or call step, or by a summary whose callee body is
//! the path edge that reached the exit, so expanding them (with an
//! explicit stack) gives a valid path.
//!
//! Before the search, the UTL labels of the report remove the nodes that
//! never run on any consistent path (a context-sensitive path is also a
//! context-insensitive one). (Its Yes labels cannot drop observations:
//! an observed node is Yes *because* of its observation.) Every
//! observation is one automaton, so a report with thousands of coverage
//! observations makes wide tuples and usually exceeds the limits; the
//! caller then answers with its base solver and says so.
//!
//! Not handled, reported as [`Unsupported`] so that the caller answers
//! with its base solver: graphs with non-local jumps (`longjmp`), whose
//! pending calls this search does not pop.
//!
//! Cost: O((contexts + top-level states) · edges per node) steps, each
//! stepping only the automata that move on the node; bounded by
//! [`CsLimits`].

use super::frames::segments;
use super::CsLimits;
use crate::automaton::{Dfa, DEAD};
use crate::fsa::product::Touch;
use crate::graph::BitSet;
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::NodeId;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Label, Query, SolveError, Solver, Weakening};
use std::collections::HashMap;
use std::time::Instant;

/// Why the search did not answer (a limit, or an unsupported graph).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The answer of [`check`].
#[derive(Clone, Debug)]
pub struct CsAnswer {
    /// Possible or impossible in the context-sensitive semantics.
    pub answer: Answer,
    /// A valid path, when possible and asked for.
    pub witness: Option<Vec<NodeId>>,
    /// Constraints weakened on the way (the answer is then sound for the
    /// weaker report: an impossible one stays impossible).
    pub weakened: Vec<Weakening>,
    /// States built (top-level states, path edges, contexts, tuples).
    pub states: usize,
}

/// Longest witness expanded; a longer one is not built.
const MAX_WITNESS: usize = 10_000_000;

/// Estimated bytes per state (key, id map entry, predecessor, waiters).
const BYTES_PER_STATE: usize = 80;

/// How a state was first reached.
#[derive(Copy, Clone, Debug)]
enum Pred {
    /// An initial state (the start, or a callee's entry).
    Root,
    /// One flow or call step from this state (same kind of state).
    Step(u32),
    /// A completed call: from the call site's state `call` (same kind),
    /// through the callee body that is path edge `exit`.
    Summary { call: u32, exit: u32 },
}

/// A state waiting on a context's exits: a top-level state or a path
/// edge, at a call site.
#[derive(Copy, Clone, Debug)]
enum Waiter {
    Top(u32),
    Path(u32),
}

/// Relaxed observations tracked as bits of the tuple: "n ran" (its bit
/// set at the end) and "not all of S ran" (never all of S's bits). Both
/// only record which nodes were seen, so the effect of a completed call is
/// the union of the caller's and the callee's bits, and a context needs
/// no caller bits: contexts do not multiply with them.
#[derive(Default)]
struct Seen {
    /// Bit of each tracked node.
    bit: HashMap<u32, usize>,
    /// Words of bits in a tuple.
    words: usize,
    /// Bits that must be set at the end.
    ran: Vec<usize>,
    /// Sets of bits that must never be all set.
    not_all: Vec<Vec<usize>>,
}

impl Seen {
    fn new(tracked: &[(&[u32], bool)]) -> Seen {
        let mut s = Seen::default();
        for &(nodes, ran) in tracked {
            let bits: Vec<usize> = nodes
                .iter()
                .map(|&n| {
                    let next = s.bit.len();
                    *s.bit.entry(n).or_insert(next)
                })
                .collect();
            if ran {
                s.ran.extend(bits);
            } else {
                s.not_all.push(bits);
            }
        }
        s.words = s.bit.len().div_ceil(32);
        s
    }

    fn has(bits: &[u32], b: usize) -> bool {
        bits[b / 32] & (1 << (b % 32)) != 0
    }

    /// Some "not all" set is all seen.
    fn broken(&self, bits: &[u32]) -> bool {
        self.not_all
            .iter()
            .any(|set| set.iter().all(|&b| Seen::has(bits, b)))
    }

    /// Every "ran" bit is set.
    fn complete(&self, bits: &[u32]) -> bool {
        self.ran.iter().all(|&b| Seen::has(bits, b))
    }
}

struct Search<'a> {
    g: &'a Icfg,
    autos: Vec<&'a Dfa>,
    touch: Touch,
    /// Observations tracked as bits (see [`Seen`]).
    seen: Seen,
    removed: BitSet,
    tuples: Vec<Box<[u32]>>,
    tuple_ids: HashMap<Box<[u32]>, u32>,
    /// (node, segment, tuple).
    top: Vec<(u32, u32, u32)>,
    top_pred: Vec<Pred>,
    top_ids: HashMap<(u32, u32, u32), u32>,
    /// (callee entry, tuple on entry).
    ctx: Vec<(u32, u32)>,
    ctx_ids: HashMap<(u32, u32), u32>,
    /// Per context: (exit tuple, the path edge that reached the exit).
    exits: Vec<Vec<(u32, u32)>>,
    waiters: Vec<Vec<Waiter>>,
    /// (context, node, tuple).
    path: Vec<(u32, u32, u32)>,
    path_pred: Vec<Pred>,
    path_ids: HashMap<(u32, u32, u32), u32>,
    work: Vec<Waiter>,
    max_states: usize,
    deadline: Option<Instant>,
    limits: &'a CsLimits,
}

impl<'a> Search<'a> {
    fn size(&self) -> usize {
        self.top.len() + self.path.len() + self.ctx.len() + self.tuples.len()
    }

    fn budget(&self) -> Result<(), Unsupported> {
        let n = self.size();
        if n >= self.max_states {
            return Err(Unsupported(if self.max_states < self.limits.max_states {
                format!(
                    "the context-sensitive search exceeds the memory budget ({} MiB)",
                    self.limits.max_memory >> 20
                )
            } else {
                format!(
                    "the context-sensitive search exceeds {} states",
                    self.limits.max_states
                )
            }));
        }
        if n.is_multiple_of(1024) && self.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Unsupported(format!(
                "the context-sensitive search exceeds the time limit ({:.1} s)",
                self.limits.timeout.map_or(0.0, |t| t.as_secs_f64())
            )));
        }
        Ok(())
    }

    fn tuple(&mut self, t: Box<[u32]>) -> u32 {
        if let Some(&id) = self.tuple_ids.get(&t) {
            return id;
        }
        let id = self.tuples.len() as u32;
        self.tuples.push(t.clone());
        self.tuple_ids.insert(t, id);
        id
    }

    /// The tuple after reading `w`, or `None` if an automaton rejects.
    fn step(&mut self, t: u32, w: NodeId) -> Option<u32> {
        if self.removed.contains(w.index()) {
            return None;
        }
        let bit = self.seen.bit.get(&w.as_u32()).copied();
        if !self.touch.moves(w.as_u32()) && bit.is_none() {
            return Some(t);
        }
        let mut out = self.tuples[t as usize].clone();
        let na = self.autos.len();
        if !self.touch.step(&self.autos, &mut out[..na], w.as_u32()) {
            return None;
        }
        if let Some(b) = bit {
            out[na + b / 32] |= 1 << (b % 32);
            if self.seen.broken(&out[na..]) {
                return None;
            }
        }
        Some(self.tuple(out))
    }

    /// Tuple `t` with its bits replaced by those of `bits` (a tuple).
    fn with_bits(&mut self, t: u32, bits: u32, union: bool) -> Option<u32> {
        let na = self.autos.len();
        let mut out = self.tuples[t as usize].clone();
        let other = &self.tuples[bits as usize][na..];
        for (o, &b) in out[na..].iter_mut().zip(other) {
            *o = if union { *o | b } else { b };
        }
        if self.seen.broken(&out[na..]) {
            return None;
        }
        Some(self.tuple(out))
    }

    fn accepting(&self, t: u32) -> bool {
        let t = &self.tuples[t as usize];
        let na = self.autos.len();
        t[..na]
            .iter()
            .zip(&self.autos)
            .all(|(&q, a)| q != DEAD && a.accepting[q as usize])
            && self.seen.complete(&t[na..])
    }

    fn add_top(&mut self, key: (u32, u32, u32), pred: Pred) -> Result<(), Unsupported> {
        if self.top_ids.contains_key(&key) {
            return Ok(());
        }
        self.budget()?;
        let id = self.top.len() as u32;
        self.top.push(key);
        self.top_pred.push(pred);
        self.top_ids.insert(key, id);
        self.work.push(Waiter::Top(id));
        Ok(())
    }

    fn add_path(&mut self, key: (u32, u32, u32), pred: Pred) -> Result<(), Unsupported> {
        if self.path_ids.contains_key(&key) {
            return Ok(());
        }
        self.budget()?;
        let id = self.path.len() as u32;
        self.path.push(key);
        self.path_pred.push(pred);
        self.path_ids.insert(key, id);
        self.work.push(Waiter::Path(id));
        Ok(())
    }

    /// The context of a call into `entry` with tuple `t` (after reading
    /// the entry), created with its first path edge when new.
    fn context(&mut self, entry: NodeId, t: u32) -> Result<u32, Unsupported> {
        let t = self.entry_bits(entry, t);
        let key = (entry.as_u32(), t);
        if let Some(&c) = self.ctx_ids.get(&key) {
            return Ok(c);
        }
        self.budget()?;
        let c = self.ctx.len() as u32;
        self.ctx.push(key);
        self.ctx_ids.insert(key, c);
        self.exits.push(Vec::new());
        self.waiters.push(Vec::new());
        self.add_path((c, entry.as_u32(), t), Pred::Root)?;
        Ok(c)
    }

    /// Tuple `t` (just after reading `entry`) with only `entry`'s bit: a
    /// context does not depend on what the caller saw, its callers add
    /// their bits back on return.
    fn entry_bits(&mut self, entry: NodeId, t: u32) -> u32 {
        if self.seen.words == 0 {
            return t;
        }
        let na = self.autos.len();
        let mut out = self.tuples[t as usize].clone();
        out[na..].iter_mut().for_each(|w| *w = 0);
        if let Some(&b) = self.seen.bit.get(&entry.as_u32()) {
            out[na + b / 32] |= 1 << (b % 32);
        }
        self.tuple(out)
    }

    /// Resumes `waiter` (at call site `site`) after a callee reached its
    /// exit with tuple `t` on path edge `exit`: the callee's automaton
    /// states, with the caller's bits added to the callee's.
    fn resume(&mut self, waiter: Waiter, t: u32, exit: u32) -> Result<(), Unsupported> {
        let g = self.g;
        let (site, before) = match waiter {
            Waiter::Top(id) => (self.top[id as usize].0, self.top[id as usize].2),
            Waiter::Path(id) => (self.path[id as usize].1, self.path[id as usize].2),
        };
        let Some(t) = self.with_bits(t, before, true) else {
            return Ok(());
        };
        let site = NodeId::new(site as usize);
        for r in g.return_sites(site) {
            let Some(t2) = self.step(t, r) else { continue };
            match waiter {
                Waiter::Top(id) => {
                    let seg = self.top[id as usize].1;
                    self.add_top((r.as_u32(), seg, t2), Pred::Summary { call: id, exit })?;
                }
                Waiter::Path(id) => {
                    let c = self.path[id as usize].0;
                    self.add_path((c, r.as_u32(), t2), Pred::Summary { call: id, exit })?;
                }
            }
        }
        Ok(())
    }

    /// A call from `waiter` at call site `v` (tuple `t`) into `w`: waits
    /// on the callee's context and resumes at the exits found so far.
    fn call(&mut self, waiter: Waiter, w: NodeId, t: u32) -> Result<(), Unsupported> {
        let Some(t1) = self.step(t, w) else {
            return Ok(());
        };
        let c = self.context(w, t1)?;
        self.waiters[c as usize].push(waiter);
        let exits = self.exits[c as usize].clone();
        for (tx, exit) in exits {
            self.resume(waiter, tx, exit)?;
        }
        Ok(())
    }

    /// The path that reaches top-level state `id`.
    fn witness(&self, id: u32) -> Option<Vec<NodeId>> {
        enum Item {
            Node(u32),
            Top(u32),
            Path(u32),
        }
        let mut out = Vec::new();
        let mut stack = vec![Item::Top(id)];
        while let Some(it) = stack.pop() {
            match it {
                Item::Node(v) => {
                    out.push(NodeId::new(v as usize));
                    if out.len() > MAX_WITNESS {
                        return None;
                    }
                }
                Item::Top(mut s) => loop {
                    stack.push(Item::Node(self.top[s as usize].0));
                    match self.top_pred[s as usize] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                    }
                },
                Item::Path(mut s) => loop {
                    stack.push(Item::Node(self.path[s as usize].1));
                    match self.path_pred[s as usize] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                    }
                },
            }
        }
        Some(out)
    }
}

/// Whether the graph has a non-local jump: a flow edge between functions,
/// or a return site in another function than its call site.
fn has_jumps(g: &Icfg) -> bool {
    g.nodes().any(|v| {
        g.succs(v)
            .any(|(w, k)| k == EdgeKind::Local && g.func_of(w) != g.func_of(v))
            || g.return_sites(v).any(|r| g.func_of(r) != g.func_of(v))
    })
}

/// Most rounds of [`check`]'s refinement of relaxed observations.
const MAX_ROUNDS: usize = 32;

/// Is there a valid path for `report` (and `query`)? With `witness`, one
/// such path is returned. See the module docs.
///
/// Observations of single nodes ("n ran") and ambiguous `obsNo` sets are
/// *relaxed* first, unless implied (n is Yes for a weaker report: UTL
/// without these observations, or the stack alone): each one tracked
/// would double the tuples. The search runs with the tracked constraints
/// only; an impossible answer is then final (fewer constraints), and a
/// path that also satisfies every relaxed one is a witness. Otherwise the
/// relaxed constraints it violates are tracked and the search runs again
/// (counterexample-guided refinement), at most [`MAX_ROUNDS`] times.
pub fn check(
    g: &Icfg,
    report: &Report,
    query: Option<&Query>,
    limits: &CsLimits,
    witness: bool,
) -> Result<CsAnswer, Unsupported> {
    let impossible = |weakened: Vec<Weakening>, states: usize| CsAnswer {
        answer: Answer::Impossible,
        witness: None,
        weakened,
        states,
    };
    if has_jumps(g) {
        return Err(Unsupported(
            "the graph has non-local jumps (longjmp), which the context-sensitive search does not model"
                .into(),
        ));
    }
    let started = Instant::now();
    let deadline = limits.timeout.map(|t| started + t);
    // UTL's labels: sound for the report, so for every valid path of it.
    let utl = crate::utl::Utl::default();
    let labels = match utl.recover(g, report) {
        Ok(rec) => Some(rec.labels),
        Err(SolveError::Infeasible { .. }) => return Ok(impossible(Vec::new(), 0)),
        Err(_) => None,
    };
    // The stack is the frame structure here, not a trace.
    let plain = Report {
        stack: Vec::new(),
        stack_gaps: Vec::new(),
        ..report.clone()
    };
    let Ok(sp) = crate::fsa::split(g, &plain, None, None, limits.max_states) else {
        return Ok(impossible(Vec::new(), 0));
    };
    let Ok(sq) = crate::fsa::split(g, &Report::default(), query, None, limits.max_states) else {
        return Ok(impossible(Vec::new(), 0));
    };
    let mut removed = sp.absent.clone();
    for v in sq.absent.iter() {
        removed.insert(v);
    }
    if let Some(l) = &labels {
        for (v, &x) in l.iter().enumerate() {
            if x == Label::No {
                removed.insert(v);
            }
        }
    }
    // Implied observations: Yes for the stack alone (on the graph without
    // the nodes that never run), or for UTL without the observations of
    // single nodes.
    let mut implied = BitSet::new(g.num_nodes());
    match super::stack_labels(g, report, &removed, limits) {
        Ok((l, _)) => {
            for (v, &x) in l.iter().enumerate() {
                match x {
                    Label::Yes => implied.insert(v),
                    Label::No => removed.insert(v),
                    Label::Maybe => false,
                };
            }
        }
        Err(SolveError::Infeasible { .. }) => return Ok(impossible(Vec::new(), 0)),
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
        Err(SolveError::Infeasible { .. }) => return Ok(impossible(Vec::new(), 0)),
        Err(_) => {}
    }
    let subsequence = |v: &[u32]| {
        let elems: Vec<NodeSet> = v
            .iter()
            .map(|&n| NodeSet::one(NodeId::new(n as usize)))
            .collect();
        Dfa::subsequence(Origin::Query, &elems)
    };
    // Always tracked: the query, and every report constraint but the
    // relaxable ones.
    let mut fixed: Vec<Dfa> = sq.autos.clone();
    fixed.extend(sq.vectors.iter().map(|v| subsequence(v)));
    let mut relaxed: Vec<(Vec<u32>, bool)> = Vec::new(); // (nodes, "ran")
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
    let targets: Option<Vec<NodeId>> = sp
        .targets
        .as_ref()
        .map(|t| t.iter().map(|&n| NodeId::new(n as usize)).collect());
    let mut weakened = sp.weakened.clone();
    weakened.extend(sq.weakened.iter().cloned());
    let mut tracked = vec![false; relaxed.len()];
    let mut states = 0;
    for _ in 0..MAX_ROUNDS {
        let autos: Vec<&Dfa> = fixed.iter().collect();
        let seen: Vec<(&[u32], bool)> = relaxed
            .iter()
            .zip(&tracked)
            .filter(|(_, &t)| t)
            .map(|((nodes, ran), _)| (&nodes[..], *ran))
            .collect();
        let found = search(
            g,
            report,
            autos,
            Seen::new(&seen),
            removed.clone(),
            targets.as_deref(),
            limits,
            deadline,
            &mut states,
        )?;
        let Some(found) = found else {
            return Ok(impossible(weakened, states));
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
        for (i, (nodes, ran)) in relaxed.iter().enumerate() {
            let ok = if *ran {
                on.contains(nodes[0] as usize)
            } else {
                nodes.iter().any(|&n| !on.contains(n as usize))
            };
            if !ok && !violated {
                // One at a time: each tracked one may double the tuples.
                debug_assert!(!tracked[i], "a tracked constraint violated");
                tracked[i] = true;
                violated = true;
            }
        }
        if !violated {
            return Ok(CsAnswer {
                answer: Answer::Possible,
                witness: witness.then_some(path),
                weakened,
                states,
            });
        }
    }
    Err(Unsupported(format!(
        "the context-sensitive search did not settle the report's observations in {MAX_ROUNDS} rounds"
    )))
}

/// One search with these automata: `None` if no valid path is accepted,
/// else the path found (`None` inside if too long to expand).
#[allow(clippy::too_many_arguments)]
fn search(
    g: &Icfg,
    report: &Report,
    autos: Vec<&Dfa>,
    seen: Seen,
    removed: BitSet,
    targets: Option<&[NodeId]>,
    limits: &CsLimits,
    deadline: Option<Instant>,
    states: &mut usize,
) -> Result<Option<Option<Vec<NodeId>>>, Unsupported> {
    let touch = Touch::new(autos.iter().copied());
    let segs = segments(g, report);
    let k = report.stack.len();
    let mut s = Search {
        g,
        autos,
        touch,
        seen,
        removed,
        tuples: Vec::new(),
        tuple_ids: HashMap::new(),
        top: Vec::new(),
        top_pred: Vec::new(),
        top_ids: HashMap::new(),
        ctx: Vec::new(),
        ctx_ids: HashMap::new(),
        exits: Vec::new(),
        waiters: Vec::new(),
        path: Vec::new(),
        path_pred: Vec::new(),
        path_ids: HashMap::new(),
        work: Vec::new(),
        max_states: limits
            .max_states
            .saturating_sub(*states)
            .min(limits.max_memory / BYTES_PER_STATE)
            .max(1),
        deadline,
        limits,
    };
    let result = s.run(report, &segs, k, targets);
    *states += s.size();
    result
}

impl Search<'_> {
    fn run(
        &mut self,
        report: &Report,
        segs: &[super::frames::Segment],
        k: usize,
        targets: Option<&[NodeId]>,
    ) -> Result<Option<Option<Vec<NodeId>>>, Unsupported> {
        let s = self;
        let g = s.g;
        let start = g.start();
        let combos: Vec<Vec<u32>> =
            crate::automaton::initial_combinations(&[], s.autos.iter().copied())
                .take(s.max_states)
                .collect();
        for mut c in combos {
            c.extend(std::iter::repeat_n(0, s.seen.words));
            let t = s.tuple(c.into_boxed_slice());
            if let Some(t) = s.step(t, start) {
                s.add_top((start.as_u32(), 0, t), Pred::Root)?;
            }
        }
        let is_target = |v: NodeId| targets.is_none_or(|t| t.contains(&v));
        while let Some(item) = s.work.pop() {
            match item {
                Waiter::Top(id) => {
                    let (v, j, t) = s.top[id as usize];
                    let vn = NodeId::new(v as usize);
                    let j = j as usize;
                    if j == k && is_target(vn) && s.accepting(t) {
                        return Ok(Some(s.witness(id)));
                    }
                    for (w, kind) in g.succs(vn) {
                        match kind {
                            EdgeKind::Local => {
                                if let Some(t2) = s.step(t, w) {
                                    s.add_top((w.as_u32(), j as u32, t2), Pred::Step(id))?;
                                }
                            }
                            EdgeKind::Call => {
                                s.call(Waiter::Top(id), w, t)?;
                                let frame = j < k
                                    && report.stack[j].call.contains(vn)
                                    && report.stack[j].entry.contains(w);
                                if segs[j].gap || frame {
                                    if let Some(t2) = s.step(t, w) {
                                        if segs[j].gap {
                                            s.add_top((w.as_u32(), j as u32, t2), Pred::Step(id))?;
                                        }
                                        if frame {
                                            s.add_top(
                                                (w.as_u32(), j as u32 + 1, t2),
                                                Pred::Step(id),
                                            )?;
                                        }
                                    }
                                }
                            }
                            EdgeKind::Return => {}
                        }
                    }
                }
                Waiter::Path(id) => {
                    let (c, v, t) = s.path[id as usize];
                    let vn = NodeId::new(v as usize);
                    if g.function(g.func_of(vn)).exit == Some(vn)
                        && !s.exits[c as usize].iter().any(|&(tx, _)| tx == t)
                    {
                        s.exits[c as usize].push((t, id));
                        let waiters = s.waiters[c as usize].clone();
                        for wt in waiters {
                            s.resume(wt, t, id)?;
                        }
                    }
                    for (w, kind) in g.succs(vn) {
                        match kind {
                            EdgeKind::Local => {
                                if let Some(t2) = s.step(t, w) {
                                    s.add_path((c, w.as_u32(), t2), Pred::Step(id))?;
                                }
                            }
                            EdgeKind::Call => s.call(Waiter::Path(id), w, t)?,
                            EdgeKind::Return => {}
                        }
                    }
                }
            }
        }
        Ok(None)
    }
}
