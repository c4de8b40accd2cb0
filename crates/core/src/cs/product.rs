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
//! Observations of single nodes and ambiguous `obsNo` sets are tracked as
//! bits of the tuple, only once a path violates them (counterexample-
//! guided rounds, see [`check`]). Each tracked bit could double the
//! states, so states are kept as antichains (the subsumption of
//! antichain-based language inclusion, De Wulf, Doyen, Henzinger, Raskin,
//! CAV 2006): among states at the same node and segment (or context) with
//! the same automaton states, one whose "ran" bits are a superset and
//! whose "not all" bits a subset of another's subsumes it, since every
//! continuation that satisfies the report from the other does from it.
//! A subsumed state is not added, or not expanded if it came first. On
//! the replace failure of the shared data (29 single-node observations,
//! 21 obsNo sets) this takes a may-run query from 2.9M states and a
//! fallback to about 20 ms.
//!
//! Before the search, the UTL labels of the report remove the nodes that
//! never run on any consistent path (a context-sensitive path is also a
//! context-insensitive one). (Its Yes labels cannot drop observations:
//! an observed node is Yes *because* of its observation.) Other
//! observations (vectors of several elements, reliable traces) are one
//! automaton each, so a report with thousands of them makes wide tuples
//! and may exceed the limits; the caller then answers with its base
//! solver and says so.
//!
//! Non-local jumps (`longjmp`: a flow edge between functions, or a return
//! site in another function than its call site) leave an invocation: a
//! path edge that jumps makes an *escape record* of its context, which
//! lands at each waiting caller whose function is the target's and
//! escapes that caller's context too (a jump may pop to any activation of
//! its target's function, as in the oracle). At top level it lands in
//! the current or an earlier segment whose function may be the target's
//! (or that is a gap); the path then calls the popped frames again. A
//! landing in a gap segment may assume an unreported activation the path
//! did not make: with jumps the search over-approximates (an impossible
//! answer stays exact, a witness may not be a valid path).
//!
//! Cost: O((contexts + top-level states) · edges per node) steps, each
//! stepping only the automata that move on the node; bounded by
//! [`CsLimits`].
//!
//! **Shared invocations** (bulk mode, `CsLimits::lean`). A value stage
//! adds one automaton to a report ("the last of these stores is a good
//! one"), and the contexts of every function that may store (or call one
//! that does) would be explored once per state of it on entry. Two
//! things keep an exploration near the size of the one without it:
//!
//! * A context leaves out, as `HOLE`, the state on entry of each
//!   automaton whose state after any word is either its state before or
//!   one the word alone determines (a *reset* automaton, [`Dfa::resets`]:
//!   "the last of these", "one of these ran"), and of each other one that
//!   no node of the callee or of what it may call moves
//!   (`kept_by_contexts`). Inside, a hole stays one until a node resets
//!   it; on return (or on an escape's landing) the caller's state at the
//!   call site fills it (`Search::fill`). So each path edge stands for
//!   the same path inside the callee as before, for every caller state
//!   at once, and each top-level state is reached by exactly the same
//!   paths, with the same tuples: the accepted valid paths are the same,
//!   and the derivations of every top-level state too. Where a jump may
//!   leave the callee, the context keeps every automaton.
//! * An unreported call at a gap (a top-level call that never returns)
//!   enters only a function from which a chain of calls reaches a
//!   function holding the segment's end (the next frame's call site, or
//!   a crash target): from any other, a top-level path never leaves the
//!   segment and never accepts, so every state it reaches is on no
//!   accepting derivation (`reaching_ends`). Not where the graph has
//!   jumps between functions. On SQLite's plain cores this leaves a few
//!   hundred top-level states of about 90,000.
//!
//! Both remove or merge only states: the labels of [`super::bulk`] are
//! read from the accepting derivations (may, apart: node-level, the
//! same), except that "must run through a known node" reads `pre ∪ post`
//! per live state, which a different split of the path edges may make
//! differ either way; `cs.rs::lean_exploration_keeps_the_labels`
//! compares labels with it on and off.

use super::frames::segments;
use super::hyper::{Hyper, StateId};
use super::limits::CsLimits;
use super::seen::{Group, Seen};
use crate::automaton::{Dfa, DEAD};
use crate::fxhash::FxHashMap as HashMap;
use crate::graph::BitSet;
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{entity_id, EntityId, IdVec, NodeId};
use crate::products::full::Touch;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Label, Query, SolveError, Solver, Weakening};
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

/// Logged derivation steps (bulk mode) that count as one state against
/// the limits.
const LOG_PER_STATE: usize = 4;

entity_id!(
    /// A tuple: one state per constraint automaton, then the seen bits.
    TupleId
);
entity_id!(
    /// A top-level state (node, segment, tuple).
    TopId
);
entity_id!(
    /// A path edge (context, node, tuple) inside a callee.
    PathId
);
entity_id!(
    /// A context: (callee entry, tuple on entry).
    CtxId
);
entity_id!(
    /// An escape record (see [`Esc`]).
    EscId
);

/// How a state of kind `S` ([`TopId`] or [`PathId`]) was first reached.
#[derive(Copy, Clone, Debug)]
pub(super) enum Pred<S> {
    /// An initial state (the start, or a callee's entry).
    Root,
    /// One flow or call step from this state (same kind of state).
    Step(S),
    /// A completed call: from the call site's state `call` (same kind),
    /// through the callee body that is path edge `exit`.
    Summary { call: S, exit: PathId },
    /// A non-local jump out of a call: from the call site's state `call`
    /// (same kind), through the calls that escape record `esc` left.
    Landing { call: S, esc: EscId },
}

impl<S> Pred<S> {
    /// The same step, with its states of this kind renamed by `f`.
    fn map<T>(self, f: impl Fn(S) -> T) -> Pred<T> {
        match self {
            Pred::Root => Pred::Root,
            Pred::Step(p) => Pred::Step(f(p)),
            Pred::Summary { call, exit } => Pred::Summary {
                call: f(call),
                exit,
            },
            Pred::Landing { call, esc } => Pred::Landing { call: f(call), esc },
        }
    }
}

/// What an escape record's path is made of, after its call site.
#[derive(Copy, Clone, Debug)]
pub(super) enum Body {
    /// A path edge of the callee, up to the jump (or exit).
    Path(PathId),
    /// The escape record of a deeper callee.
    Esc(EscId),
}

/// A non-local jump that leaves an invocation (a context): to `node`
/// with `tuple`. Its path from the context's entry is path edge `call`
/// (up to a call site) followed by `inner`, or `inner` alone.
#[derive(Copy, Clone, Debug)]
struct Esc {
    node: NodeId,
    tuple: TupleId,
    call: Option<PathId>,
    inner: Body,
}

/// A state waiting on a context's exits: a top-level state or a path
/// edge, at a call site.
#[derive(Copy, Clone, Debug)]
enum Waiter {
    Top(TopId),
    Path(PathId),
}

/// The states of one kind, keyed (A, B, tuple): the top-level states
/// (node, segment, tuple) and the path edges (context, node, tuple).
struct States<I, A, B> {
    key: IdVec<I, (A, B, TupleId)>,
    pred: IdVec<I, Pred<I>>,
    ids: HashMap<(A, B, TupleId), I>,
    /// With tracked bits: the states not subsumed, per (A, B, base
    /// tuple), and those subsumed after they were added (not expanded:
    /// the state that subsumes them is).
    live: HashMap<(A, B, TupleId), Group<I>>,
    dead: Vec<bool>,
}

impl<I: EntityId, A, B> States<I, A, B> {
    fn new() -> Self {
        States {
            key: IdVec::new(),
            pred: IdVec::new(),
            ids: HashMap::default(),
            live: HashMap::default(),
            dead: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.key.len()
    }
}

impl<I: EntityId, A, B> std::ops::Index<I> for States<I, A, B> {
    type Output = (A, B, TupleId);
    fn index(&self, id: I) -> &Self::Output {
        &self.key[id]
    }
}

/// A kind of state ([`Tops`] or [`Paths`]): its table, its log of
/// incoming steps and its work item, for [`Search::add`].
trait Kind {
    type Id: EntityId;
    type A: Copy + Eq + std::hash::Hash;
    type B: Copy + Eq + std::hash::Hash;
    fn pick<'s>(
        top: &'s mut States<TopId, NodeId, u32>,
        path: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<Self::Id, Self::A, Self::B>;
    fn log(log: &mut Log) -> &mut Vec<(Self::Id, Pred<Self::Id>)>;
    fn waiter(id: Self::Id) -> Waiter;
}

/// Top-level states.
enum Tops {}
/// Path edges.
enum Paths {}

impl Kind for Tops {
    type Id = TopId;
    type A = NodeId;
    type B = u32;
    fn pick<'s>(
        top: &'s mut States<TopId, NodeId, u32>,
        _: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<TopId, NodeId, u32> {
        top
    }
    fn log(log: &mut Log) -> &mut Vec<(TopId, Pred<TopId>)> {
        &mut log.top_in
    }
    fn waiter(id: TopId) -> Waiter {
        Waiter::Top(id)
    }
}

impl Kind for Paths {
    type Id = PathId;
    type A = CtxId;
    type B = NodeId;
    fn pick<'s>(
        _: &'s mut States<TopId, NodeId, u32>,
        path: &'s mut States<PathId, CtxId, NodeId>,
    ) -> &'s mut States<PathId, CtxId, NodeId> {
        path
    }
    fn log(log: &mut Log) -> &mut Vec<(PathId, Pred<PathId>)> {
        &mut log.path_in
    }
    fn waiter(id: PathId) -> Waiter {
        Waiter::Path(id)
    }
}

struct Search<'a> {
    g: &'a Icfg,
    autos: Vec<&'a Dfa>,
    touch: Touch,
    /// Observations tracked as bits (see [`Seen`]).
    seen: Seen,
    removed: BitSet,
    tuples: IdVec<TupleId, Box<[u32]>>,
    tuple_ids: HashMap<Box<[u32]>, TupleId>,
    /// Per tuple, the tuple with no bits set (its automaton states).
    base: IdVec<TupleId, TupleId>,
    /// Top-level states: (node, segment, tuple).
    top: States<TopId, NodeId, u32>,
    /// (callee entry, tuple on entry).
    ctx: IdVec<CtxId, (NodeId, TupleId)>,
    ctx_ids: HashMap<(NodeId, TupleId), CtxId>,
    /// Per context: (exit tuple, the path edge that reached the exit).
    exits: IdVec<CtxId, Vec<(TupleId, PathId)>>,
    waiters: IdVec<CtxId, Vec<Waiter>>,
    /// Path edges: (context, node, tuple).
    path: States<PathId, CtxId, NodeId>,
    /// States not added or not expanded because another subsumes them.
    subsumed: usize,
    /// The stack's segments (where a jump may land, see [`Search::jump`]).
    segs: Vec<super::frames::Segment>,
    /// Escape records, per context the ids of its own, and their keys
    /// (context, node, tuple).
    esc: IdVec<EscId, Esc>,
    escapes: IdVec<CtxId, Vec<EscId>>,
    esc_ids: HashMap<(CtxId, NodeId, TupleId), EscId>,
    work: Vec<Waiter>,
    max_states: usize,
    deadline: Option<Instant>,
    limits: &'a CsLimits,
    /// Bulk mode (see [`super::bulk`]): every way each state is reached,
    /// the accepting top-level states, no subsumption, no early stop.
    log: Option<Log>,
    /// Per function, the automata whose states its contexts keep (bit
    /// `i`: automaton `i`), when they leave out the others (see the
    /// module docs, "Shared invocations").
    kept: Option<Vec<u64>>,
    /// Per automaton, with [`Search::kept`], its transformations when its
    /// holes are kept as functions of the entry state ([`Sym`]); `None`
    /// for a reset automaton (a hole is the entry state until a node
    /// resets it) and for those the contexts keep.
    sym: Vec<Option<Sym>>,
    /// Per gap segment, the functions an unreported call may enter: those
    /// that can reach the segment's end by calls (see the module docs,
    /// "Shared invocations"); `None`: any.
    ends: Option<Vec<Option<BitSet>>>,
}

/// An automaton's state in a path edge's tuple that stands for its state
/// on entry to the invocation (the caller's at the call site, filled back
/// in on return): never a DFA state. `HOLE - j` (`j` < [`MAX_SYM`]) stands
/// for transformation `j` of a [`Sym`] applied to it.
const HOLE: u32 = DEAD - 1;

/// Most transformations a [`Sym`] may have.
const MAX_SYM: usize = 64;

/// Whether a tuple's state is a hole (the entry state, or a
/// transformation of it).
#[inline]
fn is_hole(q: u32) -> bool {
    q != DEAD && q > HOLE - MAX_SYM as u32
}

/// An automaton whose state inside an invocation is kept as a function
/// of its state on entry (see the module docs, "Shared invocations"):
/// the transformations of its states that words can make (its
/// transformation monoid; Pin, *Mathematical Foundations of Automata
/// Theory*, II.1), when they are few and none rejects. A reset automaton
/// has only the identity and constants; a variable's last write with
/// branch tests also has "pending test `i` if no write or test failed
/// yet", which lasts one node but keeps it from being a reset automaton.
/// A constant transformation is the state it maps to.
struct Sym {
    /// The transformations that are not constant, `maps[0]` the identity.
    maps: Vec<Vec<u32>>,
    n_classes: usize,
    /// `step[j * n_classes + c]`: transformation `j` then class `c`,
    /// encoded as a tuple's state (a state, or `HOLE - j'`).
    step: Vec<u32>,
    /// `after[k * maps.len() + j]`: transformation `k` then `j`, encoded.
    after: Vec<u32>,
}

impl Sym {
    /// `None` when `a` has an order on its states (its numbers matter),
    /// rejects on some transition, moves on nodes it does not mention, or
    /// has more than [`MAX_SYM`] transformations that are not constant.
    fn of(a: &Dfa) -> Option<Sym> {
        let (n, nc) = (a.num_states() as usize, a.num_classes() as usize);
        if a.has_order() || !a.silent_elsewhere() || n as u32 >= HOLE - MAX_SYM as u32 {
            return None;
        }
        let mut maps: Vec<Vec<u32>> = vec![(0..n as u32).collect()];
        let mut index: HashMap<Vec<u32>, u32> = HashMap::default();
        index.insert(maps[0].clone(), 0);
        let mut step = Vec::new();
        let mut j = 0;
        while j < maps.len() {
            for c in 0..nc as u32 {
                let to: Vec<u32> = maps[j].iter().map(|&q| a.step_class(q, c)).collect();
                if to.contains(&DEAD) {
                    return None;
                }
                let code = encode(&to, &mut maps, &mut index)?;
                step.push(code);
            }
            j += 1;
        }
        let m = maps.len();
        let mut after = Vec::with_capacity(m * m);
        for k in 0..m {
            for j in 0..m {
                let to: Vec<u32> = maps[k].iter().map(|&q| maps[j][q as usize]).collect();
                // The monoid is closed under composition: never a new map.
                let code = encode(&to, &mut maps, &mut index)?;
                after.push(code);
            }
        }
        (maps.len() == m).then_some(Sym {
            maps,
            n_classes: nc,
            step,
            after,
        })
    }

    /// Transformation-or-state `q` (a hole) after a node of class `c`.
    fn next(&self, q: u32, c: u32) -> u32 {
        self.step[(HOLE - q) as usize * self.n_classes + c as usize]
    }

    /// Hole `q` of a callee, given the caller's state `before` at the
    /// call (itself a hole when the caller is an invocation too).
    fn fill(&self, q: u32, before: u32) -> u32 {
        let j = (HOLE - q) as usize;
        if is_hole(before) {
            self.after[(HOLE - before) as usize * self.maps.len() + j]
        } else {
            self.maps[j][before as usize]
        }
    }
}

/// `to` as a tuple's state: its constant, or `HOLE - j` (added to `maps`
/// when new; `None` past [`MAX_SYM`]).
fn encode(to: &[u32], maps: &mut Vec<Vec<u32>>, index: &mut HashMap<Vec<u32>, u32>) -> Option<u32> {
    if to.iter().all(|&q| q == to[0]) {
        return Some(to[0]);
    }
    if let Some(&j) = index.get(to) {
        return Some(HOLE - j);
    }
    if maps.len() >= MAX_SYM {
        return None;
    }
    let j = maps.len() as u32;
    maps.push(to.to_vec());
    index.insert(to.to_vec(), j);
    Some(HOLE - j)
}

/// Per segment of `segs`, for a gap, the functions from which a chain of
/// calls reaches a function holding the segment's end (the next frame's
/// call site, or for the last segment a crash target; `None` there when
/// any node may end it): a path that enters another function by an
/// unreported call never returns from it at top level and cannot end the
/// segment. `None` when the graph has jumps between functions (a jump
/// leaves an unreported call without reaching the end).
fn reaching_ends(
    g: &Icfg,
    report: &Report,
    segs: &[super::frames::Segment],
    targets: Option<&[NodeId]>,
) -> Option<Vec<Option<BitSet>>> {
    let nf = g.functions().len();
    let mut callers: Vec<(u32, u32)> = Vec::new();
    for v in g.nodes() {
        let f = g.func_of(v);
        for (w, kind) in g.succs(v) {
            match kind {
                EdgeKind::Local if g.func_of(w) != f => return None,
                EdgeKind::Call => {
                    if g.return_sites(v).any(|r| g.func_of(r) != f) {
                        return None;
                    }
                    callers.push((g.func_of(w).index() as u32, f.index() as u32));
                }
                _ => {}
            }
        }
    }
    callers.sort_unstable();
    callers.dedup();
    let up = crate::graph::Csr::from_edges(nf, &callers);
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

/// Per function, the automata of `autos` whose states a context of it
/// keeps (bit `i`: automaton `i`; at most 64 automata); the others are
/// [`HOLE`] on entry (see the module docs, "Shared invocations"). Kept:
/// an automaton that is not a reset automaton ([`Dfa::resets`]) and that
/// some node of the function or of one it may call (transitively) is not
/// silent on; every automaton where such a function may leave by a jump
/// or return to another function.
fn kept_by_contexts(g: &Icfg, autos: &[&Dfa], sym: &[Option<Sym>]) -> Vec<u64> {
    debug_assert!(autos.len() <= 64);
    let all = if autos.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << autos.len()) - 1
    };
    let nf = g.functions().len();
    let mut direct = vec![0u64; nf];
    let mut always = 0u64;
    let mut resets = 0u64;
    for (i, a) in autos.iter().enumerate() {
        if a.resets() || sym[i].is_some() {
            resets |= 1 << i;
        } else if !a.silent_elsewhere() {
            always |= 1 << i;
        } else {
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    direct[g.func_of(NodeId::new(v as usize)).index()] |= 1 << i;
                }
            }
        }
    }
    let mut calls: Vec<(u32, u32)> = Vec::new();
    for v in g.nodes() {
        let f = g.func_of(v);
        for (w, kind) in g.succs(v) {
            let other = g.func_of(w) != f;
            match kind {
                EdgeKind::Local if other => direct[f.index()] = all,
                EdgeKind::Call => {
                    calls.push((f.index() as u32, g.func_of(w).index() as u32));
                    if g.return_sites(v).any(|r| g.func_of(r) != f) {
                        direct[f.index()] = all;
                    }
                }
                _ => {}
            }
        }
    }
    calls.sort_unstable();
    calls.dedup();
    let cg = crate::graph::Csr::from_edges(nf, &calls);
    let sccs: crate::algo::Sccs = crate::algo::Sccs::compute(&cg, |_| true);
    // Callees' components come after their callers': visit them first.
    let mut by_comp = vec![0u64; sccs.count()];
    for c in sccs.ids().rev() {
        let mut m = always;
        for &f in sccs.members_of(c) {
            m |= direct[f as usize];
            for &h in cg.succs(f) {
                let ch = sccs.comp(h).expect("every function is in a component");
                if ch != c {
                    m |= by_comp[ch.index()];
                }
            }
        }
        by_comp[c.index()] = m;
    }
    (0..nf)
        .map(|f| {
            let m = by_comp[sccs.comp(f as u32).expect("a component").index()];
            // A jump keeps every automaton, resets too.
            if m == all {
                all
            } else {
                m & !resets
            }
        })
        .collect()
}

/// Every derivation step of a bulk exploration, for the backward passes
/// of [`super::bulk`]: each state's incoming steps (its first one is also
/// its `Pred`), every production of every escape record, and the
/// accepting top-level states.
#[derive(Default)]
pub(super) struct Log {
    pub top_in: Vec<(TopId, Pred<TopId>)>,
    pub path_in: Vec<(PathId, Pred<PathId>)>,
    pub esc_in: Vec<(EscId, Option<PathId>, Body)>,
    pub accepting: Vec<TopId>,
}

impl<'a> Search<'a> {
    fn size(&self) -> usize {
        let logged = self.log.as_ref().map_or(0, |l| {
            (l.top_in.len() + l.path_in.len() + l.esc_in.len()) / LOG_PER_STATE
        });
        self.top.len()
            + self.path.len()
            + self.ctx.len()
            + self.tuples.len()
            + self.esc.len()
            + logged
    }

    /// States are kept as antichains (not in bulk mode, which needs every
    /// state).
    fn subsuming(&self) -> bool {
        self.seen.words > 0 && self.log.is_none()
    }

    fn budget(&self) -> Result<(), Unsupported> {
        let n = self.size();
        if n >= self.max_states {
            let by_memory = self.limits.max_memory / BYTES_PER_STATE < self.limits.max_states;
            return Err(Unsupported(if by_memory {
                format!(
                    "the context-sensitive search exceeds the memory budget ({} MiB)",
                    self.limits.max_memory >> 20
                )
            } else if self.log.is_some() {
                format!(
                    "the context-sensitive exploration exceeds {} states",
                    self.max_states
                )
            } else {
                format!(
                    "the context-sensitive search exceeds {} states (all rounds)",
                    self.limits.max_states
                )
            }));
        }
        if n.is_multiple_of(1024) {
            if self.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Unsupported(format!(
                    "the context-sensitive search exceeds the time limit ({:.1} s)",
                    self.limits.timeout.map_or(0.0, |t| t.as_secs_f64())
                )));
            }
            if let Some(why) = crate::budget::stop() {
                return Err(Unsupported(format!(
                    "the context-sensitive search exceeds {why}"
                )));
            }
        }
        Ok(())
    }

    fn tuple(&mut self, t: Box<[u32]>) -> TupleId {
        if let Some(&id) = self.tuple_ids.get(&t) {
            return id;
        }
        let id = self.tuples.next_id();
        let na = self.autos.len();
        let bare = t[na..].iter().all(|&w| w == 0);
        let base = (!bare).then(|| {
            let mut b = t.clone();
            b[na..].iter_mut().for_each(|w| *w = 0);
            b
        });
        self.tuples.push(t.clone());
        self.tuple_ids.insert(t, id);
        self.base.push(id);
        if let Some(b) = base {
            let b = self.tuple(b);
            self.base[id] = b;
        }
        id
    }

    /// Whether state `t` is subsumed by a live state of `group` (then it
    /// is not added); otherwise the live states it subsumes are marked
    /// dead and it joins the group.
    fn subsume<S: EntityId>(
        seen: &Seen,
        bits: &[u32],
        group: &mut Group<S>,
        dead: &mut [bool],
        id: S,
    ) -> bool {
        let w = bits.len();
        let covered = if w == 1 {
            // The common case, one word of bits: a tight scan.
            let (b, up, down) = (bits[0], seen.up[0], seen.down[0]);
            let eq = !(up | down);
            group
                .bits
                .iter()
                .any(|&a| b & up & !a == 0 && a & down & !b == 0 && (a ^ b) & eq == 0)
        } else {
            group.bits.chunks_exact(w).any(|m| seen.subsumes(m, bits))
        };
        if covered {
            return true;
        }
        let mut i = 0;
        while i < group.ids.len() {
            if seen.subsumes(bits, &group.bits[i * w..(i + 1) * w]) {
                dead[group.ids[i].index()] = true;
                let last = group.ids.len() - 1;
                group.ids.swap_remove(i);
                group.bits.copy_within(last * w..(last + 1) * w, i * w);
                group.bits.truncate(last * w);
            } else {
                i += 1;
            }
        }
        group.ids.push(id);
        group.bits.extend_from_slice(bits);
        false
    }

    /// The tuple after reading `w`, or `None` if an automaton rejects.
    fn step(&mut self, t: TupleId, w: NodeId) -> Option<TupleId> {
        if self.removed.contains(w.index()) {
            return None;
        }
        let bit = self.seen.bit.get(&w.as_u32()).copied();
        if !self.touch.moves(w.as_u32()) && bit.is_none() {
            return Some(t);
        }
        let mut out = self.tuples[t].clone();
        let na = self.autos.len();
        if self.kept.is_some() && out[..na].iter().any(|&q| is_hole(q)) {
            // A reset automaton reads its new state off the node alone; a
            // `Sym` one composes its transformation; the others are silent
            // on every node a hole meets.
            for ((q, a), sym) in out[..na].iter_mut().zip(&self.autos).zip(&self.sym) {
                if a.silent_on(w.as_u32()) {
                    continue;
                }
                if let (true, Some(sym)) = (is_hole(*q), sym) {
                    *q = sym.next(*q, a.class_of(w.as_u32()));
                    continue;
                }
                debug_assert!(*q != HOLE || a.resets(), "a hole where {w:?} moves");
                let from = if *q == HOLE { 0 } else { *q };
                *q = a.step(from, w.as_u32());
                if *q == DEAD {
                    return None;
                }
            }
        } else if !self.touch.step(&self.autos, &mut out[..na], w.as_u32()) {
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
    fn with_bits(&mut self, t: TupleId, bits: TupleId, union: bool) -> Option<TupleId> {
        let na = self.autos.len();
        let mut out = self.tuples[t].clone();
        let other = &self.tuples[bits][na..];
        for (o, &b) in out[na..].iter_mut().zip(other) {
            *o = if union { *o | b } else { b };
        }
        if self.seen.broken(&out[na..]) {
            return None;
        }
        Some(self.tuple(out))
    }

    fn accepting(&self, t: TupleId) -> bool {
        let t = &self.tuples[t];
        let na = self.autos.len();
        t[..na]
            .iter()
            .zip(&self.autos)
            .all(|(&q, a)| q != DEAD && a.accepting[q as usize])
            && self.seen.complete(&t[na..])
    }

    fn add_top(
        &mut self,
        key: (NodeId, u32, TupleId),
        pred: Pred<TopId>,
    ) -> Result<(), Unsupported> {
        self.add::<Tops>(key, pred)
    }

    fn add_path(
        &mut self,
        key: (CtxId, NodeId, TupleId),
        pred: Pred<PathId>,
    ) -> Result<(), Unsupported> {
        self.add::<Paths>(key, pred)
    }

    /// Adds the state `key` of kind `K`, reached by `pred`: logged (bulk
    /// mode) even if known; dropped if a live state subsumes it (which
    /// kills the live states it subsumes); else given the next id and
    /// queued.
    fn add<K: Kind>(
        &mut self,
        key: (K::A, K::B, TupleId),
        pred: Pred<K::Id>,
    ) -> Result<(), Unsupported> {
        let subsuming = self.subsuming();
        let na = self.autos.len();
        let Search {
            top,
            path,
            log,
            seen,
            tuples,
            base,
            subsumed,
            ..
        } = self;
        let table = K::pick(top, path);
        if let Some(&id) = table.ids.get(&key) {
            if let Some(log) = log.as_mut() {
                K::log(log).push((id, pred));
            }
            return Ok(());
        }
        let id = table.key.next_id();
        if let (Some(log), false) = (log.as_mut(), matches!(pred, Pred::Root)) {
            K::log(log).push((id, pred));
        }
        if subsuming {
            let (a, b, t) = key;
            let group = table.live.entry((a, b, base[t])).or_default();
            table.dead.push(false);
            let bits = &tuples[t][na..];
            if Search::subsume(seen, bits, group, &mut table.dead, id) {
                table.dead.pop();
                *subsumed += 1;
                return Ok(());
            }
        }
        self.budget()?;
        let table = K::pick(&mut self.top, &mut self.path);
        table.key.push(key);
        table.pred.push(pred);
        table.ids.insert(key, id);
        self.work.push(K::waiter(id));
        Ok(())
    }

    /// Whether context `c` has an exit with tuple `t`, or one that
    /// subsumes it (same automaton states).
    fn exit_known(&self, c: CtxId, t: TupleId) -> bool {
        let na = self.autos.len();
        self.exits[c].iter().any(|&(tx, _)| {
            tx == t
                || (self.subsuming()
                    && self.base[tx] == self.base[t]
                    && self
                        .seen
                        .subsumes(&self.tuples[tx][na..], &self.tuples[t][na..]))
        })
    }

    /// Whether a state was subsumed after it was added.
    fn dead(&self, w: Waiter) -> bool {
        match w {
            Waiter::Top(id) => self.top.dead.get(id.index()).copied().unwrap_or(false),
            Waiter::Path(id) => self.path.dead.get(id.index()).copied().unwrap_or(false),
        }
    }

    /// The context of a call into `entry` with tuple `t` (after reading
    /// the entry), created with its first path edge when new.
    fn context(&mut self, entry: NodeId, t: TupleId) -> Result<CtxId, Unsupported> {
        let t = self.entry_bits(entry, t);
        let key = (entry, t);
        if let Some(&c) = self.ctx_ids.get(&key) {
            return Ok(c);
        }
        self.budget()?;
        let c = self.ctx.push(key);
        self.ctx_ids.insert(key, c);
        self.exits.push(Vec::new());
        self.escapes.push(Vec::new());
        self.waiters.push(Vec::new());
        self.add_path((c, entry, t), Pred::Root)?;
        Ok(c)
    }

    /// Tuple `t` (just after reading `entry`) with only `entry`'s bit: a
    /// context does not depend on what the caller saw, its callers add
    /// their bits back on return.
    fn entry_bits(&mut self, entry: NodeId, t: TupleId) -> TupleId {
        if self.seen.words == 0 {
            return t;
        }
        let na = self.autos.len();
        let mut out = self.tuples[t].clone();
        out[na..].iter_mut().for_each(|w| *w = 0);
        if let Some(&b) = self.seen.bit.get(&entry.as_u32()) {
            out[na + b / 32] |= 1 << (b % 32);
        }
        self.tuple(out)
    }

    /// Tuple `t` at a call of `entry`, before reading it, with [`HOLE`]
    /// for the automata the callee's contexts leave out (with
    /// [`Search::kept`]).
    fn holes(&mut self, entry: NodeId, t: TupleId) -> TupleId {
        let Some(kept) = &self.kept else { return t };
        let m = kept[self.g.func_of(entry).index()];
        let na = self.autos.len();
        let cur = &self.tuples[t];
        if (0..na).all(|i| m & (1 << i) != 0 || cur[i] == HOLE) {
            return t;
        }
        let mut out = cur.clone();
        for (i, q) in out[..na].iter_mut().enumerate() {
            if m & (1 << i) == 0 {
                *q = HOLE;
            }
        }
        self.tuple(out)
    }

    /// Tuple `t` (a callee's, on return or escape) with its [`HOLE`]s
    /// filled from `before`, the caller's tuple at the call site: the
    /// invocation did not move those automata.
    fn fill(&mut self, t: TupleId, before: TupleId) -> TupleId {
        if self.kept.is_none() {
            return t;
        }
        let na = self.autos.len();
        if !self.tuples[t][..na].iter().any(|&q| is_hole(q)) {
            return t;
        }
        let mut out = self.tuples[t].clone();
        let before = &self.tuples[before][..na];
        for ((q, &b), sym) in out[..na].iter_mut().zip(before).zip(&self.sym) {
            match sym {
                Some(sym) if is_hole(*q) => *q = sym.fill(*q, b),
                _ if *q == HOLE => *q = b,
                _ => {}
            }
        }
        self.tuple(out)
    }

    /// Resumes `waiter` (at call site `site`) after a callee reached its
    /// exit with tuple `t` on path edge `exit`: the callee's automaton
    /// states, with the caller's bits added to the callee's.
    fn resume(&mut self, waiter: Waiter, t: TupleId, exit: PathId) -> Result<(), Unsupported> {
        let g = self.g;
        let (site, before) = match waiter {
            Waiter::Top(id) => (self.top[id].0, self.top[id].2),
            Waiter::Path(id) => (self.path[id].1, self.path[id].2),
        };
        let t = self.fill(t, before);
        let Some(t) = self.with_bits(t, before, true) else {
            return Ok(());
        };
        for r in g.return_sites(site) {
            let Some(t2) = self.step(t, r) else { continue };
            if g.func_of(r) != g.func_of(site) {
                // A jump from the caller's activation to an outer one.
                match waiter {
                    Waiter::Top(id) => {
                        let j = self.top[id].1;
                        self.jump(j, r, t2, Pred::Summary { call: id, exit })?;
                    }
                    Waiter::Path(id) => {
                        let c = self.path[id].0;
                        let e = Esc {
                            node: r,
                            tuple: t2,
                            call: Some(id),
                            inner: Body::Path(exit),
                        };
                        self.escape(c, e)?;
                    }
                }
                continue;
            }
            match waiter {
                Waiter::Top(id) => {
                    let seg = self.top[id].1;
                    self.add_top((r, seg, t2), Pred::Summary { call: id, exit })?;
                }
                Waiter::Path(id) => {
                    let c = self.path[id].0;
                    self.add_path((c, r, t2), Pred::Summary { call: id, exit })?;
                }
            }
        }
        Ok(())
    }

    /// A call from `waiter` at call site `v` (tuple `t`) into `w`: waits
    /// on the callee's context and resumes at the exits found so far.
    fn call(&mut self, waiter: Waiter, w: NodeId, t: TupleId) -> Result<(), Unsupported> {
        let t = self.holes(w, t);
        let Some(t1) = self.step(t, w) else {
            return Ok(());
        };
        let c = self.context(w, t1)?;
        self.waiters[c].push(waiter);
        let exits = self.exits[c].clone();
        for (tx, exit) in exits {
            self.resume(waiter, tx, exit)?;
        }
        let escapes = self.escapes[c].clone();
        for e in escapes {
            self.land(waiter, e)?;
        }
        Ok(())
    }

    /// A jump to `w` (tuple `t`) from a top-level state of segment `j`:
    /// it lands in an activation of `w`'s function, in segment `j` or an
    /// earlier one (popping frames the path must then call again), where
    /// the segment's function may be it or unreported calls may be
    /// pending (a gap). (Landing in segment `j` may assume an unreported
    /// activation the path did not make: more paths, never fewer.)
    fn jump(
        &mut self,
        j: u32,
        w: NodeId,
        t: TupleId,
        pred: Pred<TopId>,
    ) -> Result<(), Unsupported> {
        let f = self.g.func_of(w);
        for i in 0..=j {
            let seg = &self.segs[i as usize];
            if seg.gap || seg.home.contains(&f) {
                self.add_top((w, i, t), pred)?;
            }
        }
        Ok(())
    }

    /// Records that an invocation of context `c` may leave by a jump, and
    /// lands it at every caller waiting on `c`.
    fn escape(&mut self, c: CtxId, e: Esc) -> Result<(), Unsupported> {
        let key = (c, e.node, e.tuple);
        if let Some(&id) = self.esc_ids.get(&key) {
            if let Some(log) = &mut self.log {
                log.esc_in.push((id, e.call, e.inner));
            }
            return Ok(());
        }
        self.budget()?;
        let id = self.esc.push(e);
        if let Some(log) = &mut self.log {
            log.esc_in.push((id, e.call, e.inner));
        }
        self.esc_ids.insert(key, id);
        self.escapes[c].push(id);
        let waiters = self.waiters[c].clone();
        for wt in waiters {
            if !self.dead(wt) {
                self.land(wt, id)?;
            }
        }
        Ok(())
    }

    /// Escape record `e` of a callee reaches `waiter` (at its call site):
    /// the jump lands in the caller's activation if it is of the target's
    /// function, and may go on to outer ones (any activation of it).
    fn land(&mut self, waiter: Waiter, e: EscId) -> Result<(), Unsupported> {
        let Esc { node, tuple, .. } = self.esc[e];
        let w = node;
        let (site, before) = match waiter {
            Waiter::Top(id) => (self.top[id].0, self.top[id].2),
            Waiter::Path(id) => (self.path[id].1, self.path[id].2),
        };
        let tuple = self.fill(tuple, before);
        let Some(t) = self.with_bits(tuple, before, true) else {
            return Ok(());
        };
        match waiter {
            Waiter::Top(id) => {
                let j = self.top[id].1;
                self.jump(j, w, t, Pred::Landing { call: id, esc: e })?;
            }
            Waiter::Path(id) => {
                let c = self.path[id].0;
                if self.g.func_of(site) == self.g.func_of(w) {
                    self.add_path((c, node, t), Pred::Landing { call: id, esc: e })?;
                }
                let up = Esc {
                    node,
                    tuple: t,
                    call: Some(id),
                    inner: Body::Esc(e),
                };
                self.escape(c, up)?;
            }
        }
        Ok(())
    }

    /// The path that reaches top-level state `id`.
    fn witness(&self, id: TopId) -> Option<Vec<NodeId>> {
        enum Item {
            Node(NodeId),
            Top(TopId),
            Path(PathId),
            Esc(EscId),
        }
        let mut out = Vec::new();
        let mut stack = vec![Item::Top(id)];
        while let Some(it) = stack.pop() {
            match it {
                Item::Node(v) => {
                    out.push(v);
                    if out.len() > MAX_WITNESS {
                        return None;
                    }
                }
                Item::Top(mut s) => loop {
                    stack.push(Item::Node(self.top[s].0));
                    match self.top.pred[s] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                        Pred::Landing { call, esc } => {
                            stack.push(Item::Esc(esc));
                            s = call;
                        }
                    }
                },
                Item::Path(mut s) => loop {
                    stack.push(Item::Node(self.path[s].1));
                    match self.path.pred[s] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                        Pred::Landing { call, esc } => {
                            stack.push(Item::Esc(esc));
                            s = call;
                        }
                    }
                },
                Item::Esc(e) => {
                    let r = self.esc[e];
                    stack.push(match r.inner {
                        Body::Path(p) => Item::Path(p),
                        Body::Esc(x) => Item::Esc(x),
                    });
                    if let Some(c) = r.call {
                        stack.push(Item::Path(c));
                    }
                }
            }
        }
        Some(out)
    }
}

/// Most rounds of [`check`]'s refinement of relaxed observations.
const MAX_ROUNDS: usize = 32;

/// Is there a valid path for `report` (and `query`)? With `witness`, one
/// such path is returned. See the module docs and [`Prepared`].
pub fn check(
    g: &Icfg,
    report: &Report,
    query: Option<&Query>,
    limits: &CsLimits,
    witness: bool,
) -> Result<CsAnswer, Unsupported> {
    let deadline = limits.timeout.map(|t| Instant::now() + t);
    let mut p = match Prepared::new(g, report, limits, deadline)? {
        Some(p) => p,
        None => return Ok(CsAnswer::impossible(Vec::new(), 0)),
    };
    let Ok(sq) = crate::fsa::split(g, &Report::default(), query, None, limits.max_states) else {
        return Ok(CsAnswer::impossible(p.weakened, 0));
    };
    let mut extra: Vec<Dfa> = sq.autos.clone();
    extra.extend(sq.vectors.iter().map(|v| subsequence(v)));
    let absent: Vec<u32> = sq.absent.iter().map(|v| v as u32).collect();
    p.weakened.extend(sq.weakened.iter().cloned());
    let found = p.run(&extra, &absent, None, true)?;
    let weakened = std::mem::take(&mut p.weakened);
    Ok(match found {
        None => CsAnswer::impossible(weakened, p.states),
        Some(path) => CsAnswer {
            answer: Answer::Possible,
            witness: witness.then_some(path),
            weakened,
            states: p.states,
        },
    })
}

impl CsAnswer {
    fn impossible(weakened: Vec<Weakening>, states: usize) -> CsAnswer {
        CsAnswer {
            answer: Answer::Impossible,
            witness: None,
            weakened,
            states,
        }
    }
}

/// The automaton of paths through some node of `v` in this order.
fn subsequence(v: &[u32]) -> Dfa {
    let elems: Vec<NodeSet> = v
        .iter()
        .map(|&n| NodeSet::one(NodeId::new(n as usize)))
        .collect();
    Dfa::subsequence(Origin::Query, &elems)
}

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
    fn assemble(
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

    /// How many automata the report needs besides the relaxed
    /// observations.
    pub(crate) fn automata(&self) -> usize {
        self.fixed.len()
    }

    /// Every state of the valid paths of the report with its automata
    /// (none without `automata`; no relaxed observation tracked), and
    /// every way each is reached: the hypergraph of [`super::bulk`]. At
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
    let segs = segments(g, report);
    let k = report.stack.len();
    let max_states = limits
        .max_states
        .saturating_sub(*states)
        .min(limits.max_memory / BYTES_PER_STATE)
        .max(1);
    let mut s = Search::new(
        g,
        autos,
        seen,
        removed,
        segs.clone(),
        limits,
        deadline,
        max_states,
    );
    let result = s.run(report, &segs, k, targets);
    *states += s.size();
    result
}

impl<'a> Search<'a> {
    /// A search with these automata and tracked observations, over the
    /// graph without `removed`; `max_states` bounds it.
    #[allow(clippy::too_many_arguments)]
    fn new(
        g: &'a Icfg,
        autos: Vec<&'a Dfa>,
        seen: Seen,
        removed: BitSet,
        segs: Vec<super::frames::Segment>,
        limits: &'a CsLimits,
        deadline: Option<Instant>,
        max_states: usize,
    ) -> Search<'a> {
        Search {
            g,
            touch: Touch::new(autos.iter().copied()),
            autos,
            seen,
            removed,
            tuples: IdVec::new(),
            tuple_ids: HashMap::default(),
            base: IdVec::new(),
            top: States::new(),
            ctx: IdVec::new(),
            ctx_ids: HashMap::default(),
            exits: IdVec::new(),
            waiters: IdVec::new(),
            path: States::new(),
            subsumed: 0,
            segs,
            esc: IdVec::new(),
            escapes: IdVec::new(),
            esc_ids: HashMap::default(),
            work: Vec::new(),
            max_states,
            deadline,
            limits,
            log: None,
            kept: None,
            sym: Vec::new(),
            ends: None,
        }
    }

    /// The logged exploration as a hypergraph over one id space: top-level
    /// states, then path edges, then escape records.
    fn hyper(self) -> Hyper {
        let log = self.log.expect("a bulk exploration");
        let (nt, np, ne) = (self.top.len(), self.path.len(), self.esc.len());
        let top = |id: TopId| StateId::new(id.index());
        let path = |id: PathId| StateId::new(nt + id.index());
        let esc = |id: EscId| StateId::new(nt + np + id.index());
        let body = |b: Body| match b {
            Body::Path(p) => path(p),
            Body::Esc(e) => esc(e),
        };
        let mut node = Vec::with_capacity(nt + np + ne);
        let mut root = Vec::with_capacity(nt + np + ne);
        for i in 0..nt {
            let id = TopId::new(i);
            node.push(Some(self.top[id].0));
            root.push(matches!(self.top.pred[id], Pred::Root));
        }
        for i in 0..np {
            let id = PathId::new(i);
            node.push(Some(self.path[id].1));
            root.push(matches!(self.path.pred[id], Pred::Root));
        }
        node.resize(nt + np + ne, None);
        root.resize(nt + np + ne, false);
        let mut recs = Vec::with_capacity(log.top_in.len() + log.path_in.len() + log.esc_in.len());
        let mut step = |to: StateId, pred: Pred<StateId>| match pred {
            Pred::Root => {}
            Pred::Step(p) => recs.push((to, p, None)),
            Pred::Summary { call, exit } => recs.push((to, call, Some(path(exit)))),
            Pred::Landing { call, esc: e } => recs.push((to, call, Some(esc(e)))),
        };
        for (id, p) in log.top_in {
            step(top(id), p.map(top));
        }
        for (id, p) in log.path_in {
            step(path(id), p.map(path));
        }
        for (id, call, inner) in log.esc_in {
            recs.push((esc(id), body(inner), call.map(path)));
        }
        Hyper::new(
            node,
            root,
            recs,
            log.accepting.into_iter().map(top).collect(),
        )
    }

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
                s.add_top((start, 0, t), Pred::Root)?;
            }
        }
        let is_target = |v: NodeId| targets.is_none_or(|t| t.contains(&v));
        while let Some(item) = s.work.pop() {
            if s.dead(item) {
                continue;
            }
            match item {
                Waiter::Top(id) => {
                    let (vn, j, t) = s.top[id];
                    let j = j as usize;
                    if j == k && is_target(vn) && s.accepting(t) {
                        match &mut s.log {
                            Some(log) => log.accepting.push(id),
                            None => return Ok(Some(s.witness(id))),
                        }
                    }
                    for (w, kind) in g.succs(vn) {
                        match kind {
                            EdgeKind::Local if g.func_of(w) != g.func_of(vn) => {
                                if let Some(t2) = s.step(t, w) {
                                    s.jump(j as u32, w, t2, Pred::Step(id))?;
                                }
                            }
                            EdgeKind::Local => {
                                if let Some(t2) = s.step(t, w) {
                                    s.add_top((w, j as u32, t2), Pred::Step(id))?;
                                }
                            }
                            EdgeKind::Call => {
                                s.call(Waiter::Top(id), w, t)?;
                                let frame = j < k
                                    && report.stack[j].call.contains(vn)
                                    && report.stack[j].entry.contains(w);
                                if segs[j].gap || frame {
                                    if let Some(t2) = s.step(t, w) {
                                        let reaches = |f: crate::ids::FuncId| {
                                            s.ends
                                                .as_ref()
                                                .and_then(|e| e[j].as_ref())
                                                .is_none_or(|r| r.contains(f.index()))
                                        };
                                        if segs[j].pending_at(g, vn, g.func_of(w))
                                            && reaches(g.func_of(w))
                                        {
                                            s.add_top((w, j as u32, t2), Pred::Step(id))?;
                                        }
                                        if frame {
                                            s.add_top((w, j as u32 + 1, t2), Pred::Step(id))?;
                                        }
                                    }
                                }
                            }
                            EdgeKind::Return => {}
                        }
                    }
                }
                Waiter::Path(id) => {
                    let (c, vn, t) = s.path[id];
                    if g.function(g.func_of(vn)).exit == Some(vn) && !s.exit_known(c, t) {
                        s.exits[c].push((t, id));
                        let waiters = s.waiters[c].clone();
                        for wt in waiters {
                            if !s.dead(wt) {
                                s.resume(wt, t, id)?;
                            }
                        }
                    }
                    for (w, kind) in g.succs(vn) {
                        match kind {
                            EdgeKind::Local if g.func_of(w) != g.func_of(vn) => {
                                if let Some(t2) = s.step(t, w) {
                                    let e = Esc {
                                        node: w,
                                        tuple: t2,
                                        call: None,
                                        inner: Body::Path(id),
                                    };
                                    s.escape(c, e)?;
                                }
                            }
                            EdgeKind::Local => {
                                if let Some(t2) = s.step(t, w) {
                                    s.add_path((c, w, t2), Pred::Step(id))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{BranchTest, LastWrite, NodeSet, Origin};

    /// A tiny xorshift, for words.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    fn run(a: &Dfa, q: u32, word: &[u32]) -> u32 {
        word.iter().fold(q, |q, &v| a.step(q, v))
    }

    /// A [`Sym`] hole run over a callee's word, then filled with the
    /// caller's state, is the automaton's state after both words; and
    /// so with the caller itself a hole (nested invocations). Fails if a
    /// transformation is composed the wrong way round or a constant is
    /// mistaken for the identity.
    #[test]
    fn sym_holes_compose_like_the_automaton() {
        // Nodes 0..8: writes 1 (good), 2 (bad); tests at 3 (taken 4, other
        // 5) and 6 (taken 7, other 4); 0 is silent.
        let mut checked = 0;
        for need in [false, true] {
            let w = LastWrite {
                writes: NodeSet::new(vec![NodeId::new(1), NodeId::new(2)]).unwrap(),
                bad: vec![NodeId::new(2)],
                need,
                what: "v".into(),
                tests: vec![
                    BranchTest {
                        branch: NodeId::new(3),
                        taken: NodeId::new(4),
                        others: vec![NodeId::new(5)],
                    },
                    BranchTest {
                        branch: NodeId::new(6),
                        taken: NodeId::new(7),
                        others: vec![NodeId::new(4)],
                    },
                ],
            };
            let a = Dfa::last_write(Origin::Value(0), &w);
            assert!(!a.resets(), "branch tests make it no reset automaton");
            let sym = Sym::of(&a).expect("few transformations");
            assert!(sym.maps.len() > 1, "more than the identity");
            let hole = |word: &[u32]| {
                word.iter().fold(HOLE, |q, &v| {
                    if a.silent_on(v) {
                        q
                    } else if is_hole(q) {
                        sym.next(q, a.class_of(v))
                    } else {
                        a.step(q, v)
                    }
                })
            };
            let mut rng = Rng(0x5EED + u64::from(need));
            for _ in 0..3000 {
                let mut word = || -> Vec<u32> {
                    let len = rng.below(7);
                    (0..len).map(|_| rng.below(8) as u32).collect()
                };
                let (u, v, x) = (word(), word(), word());
                // A callee's state `s` with its entry state `entry`.
                let fill = |s: u32, entry: u32| if is_hole(s) { sym.fill(s, entry) } else { s };
                let before = run(&a, a.initial[0], &u);
                let filled = fill(hole(&v), before);
                let uv: Vec<u32> = u.iter().chain(&v).copied().collect();
                assert_eq!(filled, run(&a, a.initial[0], &uv), "{u:?} {v:?}");
                // Nested: the caller (word v) is itself an invocation
                // whose callee reads x.
                let both = fill(hole(&x), hole(&v));
                let vx: Vec<u32> = v.iter().chain(&x).copied().collect();
                let full = fill(both, before);
                let uvx: Vec<u32> = uv.iter().chain(&x).copied().collect();
                assert_eq!(full, run(&a, a.initial[0], &uvx), "{u:?} {vx:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 6000);
    }
}
