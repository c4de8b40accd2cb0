//! Evidence stages' explorations lifted from one they share (issue 35's
//! incremental recovery).
//!
//! After the base recovery, [`crate::staged`] refines its labels with
//! the evidence: the residue's marks ([`crate::staged`]'s
//! `refine_marked`: the base report, the marks as known nodes) and each
//! value (the base report plus the value's automaton `V`). Each is a
//! bulk pass ([`super::bulk::refine`]) whose exploration is the product
//! of the graph without the hint's No nodes, the report's automata (and
//! `V`). The base recovery's own bulk pass explored that same report,
//! over the graph without fewer nodes: its hypergraph `H0` holds every
//! state of theirs. So within one staged run (a [`StageBases`] installed
//! by [`StageBases::scope`]) the bulk passes keep their explorations, and
//! a later one of the same report, or of it plus one value, over the
//! graph without as many nodes or more, is lifted from it ([`lift`])
//! instead of searched. (Where none was kept, a value stage of three or
//! more explores the shared report once for all of them.) On bzip2's
//! plain cores (17 value stages) a stage's search was half of its time.
//!
//! **Why it is the stage's exploration.** Top-level states of `H0` pair
//! with `V`'s state; path edges and escape records (inside an
//! invocation, shared by every caller with the same entry tuple) with a
//! function from `V`'s state at the invocation's entry to its state
//! now, the identity until a node of the invocation moves `V` (as the
//! search's own "shared invocations" keep an automaton as a hole).
//! Each step of `H0` reads its target's node (an escape record's: its
//! landing node) in the search; a completed call's step takes the
//! callee's function applied to the caller's value; a landing (a jump
//! out of a callee) takes the escape record's, applied to the caller's,
//! and reads nothing more. States at removed nodes are left out and
//! only what is derivable without them is built. So a derivation of the
//! lifted hypergraph is a derivation of `H0` over the graph without the
//! removed nodes (a valid path the report's automata accept) along
//! which `V` runs, accepting where `V` accepts: the paths the stage's own
//! search accepts. Only `H0`'s live states (on an accepting derivation)
//! are lifted: every path the stage accepts is among `H0`'s.
//!
//! **When.** The stage's prepared report must be the kept one's: the
//! same automata (plus `V`), relaxed observations and targets, its
//! removed nodes a superset ([`lifted`] compares them); otherwise it
//! searches as before.

use super::hyper::{Hyper, StateId};
use super::limits::CsLimits;
use super::product::Prepared;
use crate::automaton::{Dfa, DEAD};
use crate::fxhash::FxHashMap as HashMap;
use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{Origin, Report};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The explorations kept for the evidence stages of one staged run (see
/// the module docs).
#[derive(Default)]
pub struct StageBases {
    entries: Mutex<Vec<Arc<Kept>>>,
    /// Held while a value stage explores the report the stages share.
    exploring: Mutex<()>,
    /// Whether value stages explore the report they share when no
    /// exploration of it was kept ([`StageBases::share_stages`]).
    share: AtomicBool,
    /// How many times value stages explored the report they share.
    shared_explorations: AtomicUsize,
}

/// At most this many explorations are kept (the base's, and with
/// asynchronous code a round's weakened report's), each at most the
/// bulk pass's states: the oldest goes first.
const MAX_KEPT: usize = 2;

/// One report's exploration, and what its preparation made of it.
struct Kept {
    graph: (usize, usize),
    report: Report,
    max_states: usize,
    fixed: Vec<Dfa>,
    relaxed: Vec<(Vec<u32>, bool)>,
    removed: BitSet,
    targets: Option<Vec<NodeId>>,
    /// `None` when it could not be built within the limits: the stages
    /// then search on their own.
    h0: Option<(Hyper, Index)>,
}

thread_local! {
    static BASES: RefCell<Option<Arc<StageBases>>> = const { RefCell::new(None) };
}

impl StageBases {
    /// Runs `f` with these explorations on the calling thread: its bulk
    /// passes keep theirs, and the refinements of a hint lift theirs
    /// from them.
    pub fn scope<T>(self: &Arc<Self>, f: impl FnOnce() -> T) -> T {
        let before = BASES.with(|b| b.replace(Some(Arc::clone(self))));
        let out = f();
        BASES.with(|b| *b.borrow_mut() = before);
        out
    }

    /// The explorations installed on the calling thread, if any (for the
    /// threads it spawns).
    pub fn current() -> Option<Arc<StageBases>> {
        BASES.with(|b| b.borrow().clone())
    }

    /// Whether value stages explore the report they share once, where
    /// no exploration of it was kept: with enough of them to pay for it.
    pub fn share_stages(&self, on: bool) {
        self.share.store(on, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Kept>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept exploration of `report` as prepared in `p` (same automata
    /// but `extra`, relaxed observations and targets; removed nodes a
    /// subset of `p`'s), the smallest; one that could not be built only
    /// where no other matches (so that it is not tried again).
    fn find(
        &self,
        g: &Icfg,
        report: &Report,
        p: &Prepared,
        max_states: usize,
        extra: bool,
    ) -> Option<Arc<Kept>> {
        let graph = graph_id(g);
        let (removed, targets) = p.shape();
        self.lock()
            .iter()
            .filter(|k| {
                k.graph == graph
                    && k.max_states == max_states
                    && k.report == *report
                    && k.targets.as_deref() == targets
                    && k.relaxed == p.relaxed()
                    && (if extra {
                        extra_automaton(p.fixed(), &k.fixed).is_some()
                    } else {
                        k.fixed == p.fixed()
                    })
                    && subset(&k.removed, removed)
            })
            .max_by_key(|k| (k.h0.is_some(), k.removed.count()))
            .cloned()
    }

    /// Keeps `h`, the exploration of `report` as prepared in `p`.
    fn keep(&self, g: &Icfg, report: &Report, p: &Prepared, max_states: usize, h: Option<Hyper>) {
        let h0 = h.and_then(|h| Index::of(&h).map(|ix| (h, ix)));
        let (removed, targets) = p.shape();
        let kept = Arc::new(Kept {
            graph: graph_id(g),
            report: report.clone(),
            max_states,
            fixed: p.fixed().to_vec(),
            relaxed: p.relaxed().to_vec(),
            removed: removed.clone(),
            targets: targets.map(<[NodeId]>::to_vec),
            h0,
        });
        let mut entries = self.lock();
        if entries.len() >= MAX_KEPT {
            entries.remove(0);
        }
        entries.push(kept);
    }
}

fn graph_id(g: &Icfg) -> (usize, usize) {
    (g as *const Icfg as usize, g.num_nodes())
}

fn subset(a: &BitSet, b: &BitSet) -> bool {
    a.iter().all(|v| b.contains(v))
}

/// Keeps exploration `h` of `report` (prepared in `p`, with every
/// automaton) for the stages after it, if a [`StageBases`] is installed
/// and `report` has no value (a value stage's is of use to no other).
pub(super) fn keep(g: &Icfg, report: &Report, p: &Prepared, max_states: usize, h: Hyper) {
    if !report.values.is_empty() {
        return;
    }
    if let Some(b) = BASES.with(|b| b.borrow().clone()) {
        b.keep(g, report, p, max_states, Some(h));
    }
}

/// The hypergraph of `report`'s exploration as prepared in `p`, lifted
/// from a kept one of the same report, or of the report without its one
/// value (see the module docs); `None` where that does not apply: the
/// caller searches.
pub(super) fn lifted(
    g: &Icfg,
    report: &Report,
    p: &Prepared,
    (limits, deadline, max_states): (&CsLimits, Option<Instant>, usize),
) -> Option<Hyper> {
    let bases = BASES.with(|b| b.borrow().clone())?;
    let (removed, _) = p.shape();
    if let Some(k) = bases.find(g, report, p, max_states, false) {
        let (h0, ix) = k.h0.as_ref()?;
        return lift(h0, ix, &silent(), removed, max_states);
    }
    if report.values.len() != 1 {
        return None;
    }
    let shared = Report {
        values: Vec::new(),
        ..report.clone()
    };
    // A kept exploration that could not be built stops here too: the
    // stage searches on its own rather than try it again.
    let k = match bases.find(g, &shared, p, max_states, true) {
        Some(k) => k,
        None if bases.share.load(Ordering::Relaxed) => {
            // Explored once for the value stages (the others wait for it
            // rather than explore it too).
            let _one = bases.exploring.lock().unwrap_or_else(|e| e.into_inner());
            match bases.find(g, &shared, p, max_states, true) {
                Some(k) => k,
                None => {
                    let sp = Prepared::with_removed(g, &shared, limits, deadline, removed.clone())?;
                    bases.shared_explorations.fetch_add(1, Ordering::Relaxed);
                    let h = sp.explode(true, max_states).ok();
                    bases.keep(g, &shared, &sp, max_states, h);
                    bases.find(g, &shared, p, max_states, true)?
                }
            }
        }
        None => return None,
    };
    let (h0, ix) = k.h0.as_ref()?;
    let v = extra_automaton(p.fixed(), &k.fixed)?;
    lift(h0, ix, v, removed, max_states)
}

/// The automaton that accepts everything and never moves: a lift of
/// the same report.
fn silent() -> Dfa {
    Dfa::new(
        Origin::Crash,
        1,
        vec![0],
        vec![true],
        std::collections::HashMap::new(),
        1,
        |q, _| q,
    )
}

/// The one automaton of `fixed` that `shared` lacks, when `fixed` is
/// `shared` with one more.
fn extra_automaton<'d>(fixed: &'d [Dfa], shared: &[Dfa]) -> Option<&'d Dfa> {
    if fixed.len() != shared.len() + 1 {
        return None;
    }
    let i = (0..shared.len())
        .find(|&i| fixed[i] != shared[i])
        .unwrap_or(shared.len());
    (fixed[i + 1..] == shared[i..]).then_some(&fixed[i])
}

/// How a step of `H0` makes its target's value from its sources' (`a`,
/// then `b`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Make {
    /// One source: it, after reading the target's node.
    Read,
    /// A completed call (`a` the call, `b` the callee's exit; or, into an
    /// escape record, `a` the exit and `b` the call): the callee's
    /// function of the caller's value, after reading the target's node.
    Call { inner_first: bool },
    /// A landing (`a` the call, `b` the escape record; or, into an escape
    /// record that goes on out, `a` the inner one and `b` the call): the
    /// escape record's function of the caller's value, nothing read.
    Land { inner_first: bool },
}

/// What every lift of one `H0` reads, whatever the automaton: its live
/// states, each one's node read, and per live state the steps into live
/// states it is a source of.
pub(super) struct Index {
    live: BitSet,
    /// The node a step into each state reads: its node, or an escape
    /// record's landing node.
    reads: Vec<NodeId>,
    /// One past the largest of `reads`.
    nodes: usize,
    /// `outs[out_start[s]..out_start[s + 1]]`: the steps `s` is a source
    /// of, and whether as `a`.
    out_start: Vec<u32>,
    outs: Vec<(u32, bool)>,
    /// Each step's target and how it makes it.
    target: Vec<u32>,
    make: Vec<Make>,
}

impl Index {
    /// `None` if `h0` is not a search's.
    pub(super) fn of(h0: &Hyper) -> Option<Index> {
        h0.tops?;
        let n0 = h0.len();
        let first_esc = n0 - h0.jumps.len();
        let reads: Vec<NodeId> = (0..n0)
            .map(|s| h0.node[s].unwrap_or_else(|| h0.jumps[s - first_esc]))
            .collect();
        let is_esc = |s: StateId| s.index() >= first_esc;
        let live = h0.live();
        let mut out_start = vec![0u32; n0 + 1];
        for t in live.iter() {
            for &(a, b) in h0.steps_into(t) {
                out_start[a.index() + 1] += 1;
                if let Some(b) = b.filter(|&b| b != a) {
                    out_start[b.index() + 1] += 1;
                }
            }
        }
        for i in 0..n0 {
            out_start[i + 1] += out_start[i];
        }
        let mut fill = out_start.clone();
        let mut outs = vec![(0u32, false); out_start[n0] as usize];
        let mut target = vec![0u32; h0.ins.len()];
        let mut make = vec![Make::Read; h0.ins.len()];
        for t in live.iter() {
            let (lo, hi) = (h0.start[t], h0.start[t + 1]);
            target[lo..hi].fill(t as u32);
            let into_esc = t >= first_esc;
            for (k, &(a, b)) in h0.ins[lo..hi].iter().enumerate() {
                let k = lo + k;
                make[k] = match b {
                    None => Make::Read,
                    Some(b) if !into_esc && is_esc(b) => Make::Land { inner_first: false },
                    Some(_) if !into_esc => Make::Call { inner_first: false },
                    Some(_) if is_esc(a) => Make::Land { inner_first: true },
                    Some(_) => Make::Call { inner_first: true },
                };
                outs[fill[a.index()] as usize] = (k as u32, true);
                fill[a.index()] += 1;
                if let Some(b) = b.filter(|&b| b != a) {
                    outs[fill[b.index()] as usize] = (k as u32, false);
                    fill[b.index()] += 1;
                }
            }
        }
        Some(Index {
            live,
            nodes: reads.iter().map(|w| w.index() + 1).max().unwrap_or(0),
            reads,
            out_start,
            outs,
            target,
            make,
        })
    }

    fn outs(&self, s: usize) -> &[(u32, bool)] {
        &self.outs[self.out_start[s] as usize..self.out_start[s + 1] as usize]
    }
}

/// Most distinct functions of `V`'s states one lift keeps.
const MAX_FUNCTIONS: usize = 1 << 12;

/// `V`'s values in a lift: below `V`'s number of states, a state (of a
/// top-level state); from it on, the interned function from `V`'s state
/// at the invocation's entry to its state now (of a path edge or escape
/// record), the identity first.
struct Values<'v> {
    v: &'v Dfa,
    nv: u32,
    funcs: Vec<Box<[u32]>>,
    ids: HashMap<Box<[u32]>, u32>,
}

/// Too many functions: the lift gives up.
struct TooMany;

impl<'v> Values<'v> {
    fn new(v: &'v Dfa) -> Values<'v> {
        let nv = v.num_states();
        let identity: Box<[u32]> = (0..nv).collect();
        let mut ids = HashMap::default();
        ids.insert(identity.clone(), 0);
        Values {
            v,
            nv,
            funcs: vec![identity],
            ids,
        }
    }

    /// The identity: no node of the invocation moved `V` yet.
    fn id(&self) -> u32 {
        self.nv
    }

    /// Value `x` after reading a node of class `c`; `None` if `V`
    /// rejects.
    fn read(&mut self, x: u32, c: u32) -> Result<Option<u32>, TooMany> {
        if self.v.silent_class(c) {
            return Ok(Some(x));
        }
        if x < self.nv {
            let y = self.v.step_class(x, c);
            return Ok((y != DEAD).then_some(y));
        }
        let f: Box<[u32]> = self.funcs[(x - self.nv) as usize]
            .iter()
            .map(|&q| {
                if q == DEAD {
                    DEAD
                } else {
                    self.v.step_class(q, c)
                }
            })
            .collect();
        self.intern(f)
    }

    /// The caller's value `call` after an invocation's value `inner`.
    fn apply(&mut self, inner: u32, call: u32) -> Result<Option<u32>, TooMany> {
        if inner == self.id() {
            return Ok(Some(call));
        }
        let f = &self.funcs[(inner - self.nv) as usize];
        if call < self.nv {
            let y = f[call as usize];
            return Ok((y != DEAD).then_some(y));
        }
        let h: Box<[u32]> = self.funcs[(call - self.nv) as usize]
            .iter()
            .map(|&q| if q == DEAD { DEAD } else { f[q as usize] })
            .collect();
        self.intern(h)
    }

    /// The value of function `f`; `None` when it rejects every state.
    fn intern(&mut self, f: Box<[u32]>) -> Result<Option<u32>, TooMany> {
        if f.iter().all(|&q| q == DEAD) {
            return Ok(None);
        }
        if let Some(&i) = self.ids.get(&f) {
            return Ok(Some(self.nv + i));
        }
        if self.funcs.len() >= MAX_FUNCTIONS {
            return Err(TooMany);
        }
        let i = self.funcs.len() as u32;
        self.funcs.push(f.clone());
        self.ids.insert(f, i);
        Ok(Some(self.nv + i))
    }
}

/// `h0`'s live part (as `ix` indexes it), without the states at
/// `removed` nodes, times automaton `v` (see the module docs), at most
/// `max_states` states; `None` if `h0` is not a search's or the product
/// is too large.
pub(super) fn lift(
    h0: &Hyper,
    ix: &Index,
    v: &Dfa,
    removed: &BitSet,
    max_states: usize,
) -> Option<Hyper> {
    let tops = h0.tops?;
    let n0 = h0.len();
    // Per live state, the class of the node its steps read; none where
    // that node is removed (no state there).
    // (`V`'s classes by node first: a map lookup per state was a fifth
    // of a lift.)
    const GONE: u32 = u32::MAX;
    let mut by_node = vec![0u32; ix.nodes];
    for w in v.mentioned() {
        if let Some(c) = by_node.get_mut(w as usize) {
            *c = v.class_of(w);
        }
    }
    let mut class = vec![GONE; n0];
    for s in ix.live.iter() {
        let w = ix.reads[s].index();
        if !removed.contains(w) {
            class[s] = by_node[w];
        }
    }
    let mut vals = Values::new(v);
    let mut p = Product {
        head: vec![u32::MAX; n0],
        next: Vec::new(),
        state: Vec::new(),
        root: Vec::new(),
        work: Vec::new(),
        max_states,
    };
    for s in ix.live.iter().filter(|&s| h0.root[s] && class[s] != GONE) {
        if s < tops {
            for &i in &v.initial {
                if let Some(x) = vals.read(i, class[s]).ok()? {
                    p.add(s, x, true)?;
                }
            }
        } else if let Some(x) = vals.read(vals.id(), class[s]).ok()? {
            p.add(s, x, true)?;
        }
    }
    let mut steps: Vec<(StateId, StateId, Option<StateId>)> = Vec::new();
    let mut others: Vec<(u32, u32)> = Vec::new();
    while let Some(q) = p.work.pop() {
        let (s, x) = p.state[q as usize];
        let me = StateId::new(q as usize);
        for &(k, as_a) in ix.outs(s as usize) {
            let t = ix.target[k as usize] as usize;
            if class[t] == GONE {
                continue;
            }
            let (a, b) = h0.ins[k as usize];
            let make = ix.make[k as usize];
            let Some(b) = b else {
                if let Some(y) = vals.read(x, class[t]).ok()? {
                    let r = p.add(t, y, false)?;
                    steps.push((r, me, None));
                }
                continue;
            };
            // The pairs with the other source's values so far (those
            // found later make theirs when they are); with `a == b`, the
            // pairs of this value with itself and the others.
            let other = if as_a { b } else { a };
            others.clear();
            others.extend(p.values(other.index()));
            for &(o, xo) in &others {
                let (xa, xb, sa, sb) = if as_a {
                    (x, xo, me, StateId::new(o as usize))
                } else {
                    (xo, x, StateId::new(o as usize), me)
                };
                let y = match make {
                    Make::Read => unreachable!("a step of two sources"),
                    Make::Call { inner_first } | Make::Land { inner_first } => {
                        let (inner, call) = if inner_first { (xa, xb) } else { (xb, xa) };
                        let Some(y) = vals.apply(inner, call).ok()? else {
                            continue;
                        };
                        if matches!(make, Make::Call { .. }) {
                            let Some(y) = vals.read(y, class[t]).ok()? else {
                                continue;
                            };
                            y
                        } else {
                            y
                        }
                    }
                };
                let r = p.add(t, y, false)?;
                steps.push((r, sa, Some(sb)));
            }
        }
    }
    let mut accepting = Vec::new();
    for &s in &h0.accepting {
        for (q, x) in p.values(s.index()) {
            if x < vals.nv && v.accepting[x as usize] {
                accepting.push(StateId::new(q as usize));
            }
        }
    }
    let node = p.state.iter().map(|&(s, _)| h0.node[s as usize]).collect();
    let mut h = Hyper::new(node, p.root, steps, accepting);
    h.tops = None;
    Some(h)
}

/// The lifted states as they are found: per state of `H0`, a list of
/// its lifted ones (few: one per value met there).
struct Product {
    head: Vec<u32>,
    next: Vec<u32>,
    /// Per lifted state: (state of `H0`, value).
    state: Vec<(u32, u32)>,
    root: Vec<bool>,
    work: Vec<u32>,
    max_states: usize,
}

impl Product {
    /// The lifted states of `H0`'s state `s`: (number, value).
    fn values(&self, s: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut q = self.head[s];
        std::iter::from_fn(move || {
            (q != u32::MAX).then(|| {
                let out = (q, self.state[q as usize].1);
                q = self.next[q as usize];
                out
            })
        })
    }

    /// The lifted state `(s, x)`, added when new; `None` past
    /// `max_states`.
    fn add(&mut self, s: usize, x: u32, root: bool) -> Option<StateId> {
        let found = self.values(s).find(|&(_, y)| y == x).map(|(q, _)| q);
        let q = match found {
            Some(q) => q,
            None => {
                if self.state.len() >= self.max_states {
                    return None;
                }
                let q = self.state.len() as u32;
                self.next.push(self.head[s]);
                self.head[s] = q;
                self.state.push((s as u32, x));
                self.root.push(false);
                self.work.push(q);
                q
            }
        };
        if root {
            self.root[q as usize] = true;
        }
        Some(StateId::new(q as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icfg::{IcfgBuilder, NodeKind};
    use crate::report::{LastWrite, NodeSet, Trace};

    /// A small xorshift generator (the testkit's graphs are of another
    /// build of this crate inside its own unit tests).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, m: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % m.max(1) as u64) as usize
        }
    }

    /// Functions of entry, body and exit, with branches, loops, calls
    /// (recursion too) and one or two non-local jumps.
    fn graph(rng: &mut Rng) -> Option<Icfg> {
        let mut b = IcfgBuilder::new();
        let nf = 2 + rng.below(3);
        let funcs: Vec<_> = (0..nf).map(|i| b.function(&format!("f{i}"))).collect();
        let mut nodes: Vec<Vec<NodeId>> = Vec::new();
        let mut line = 0;
        for &f in &funcs {
            let n = 3 + rng.below(5);
            let body: Vec<NodeId> = (0..n)
                .map(|i| {
                    line += 1;
                    let kind = if i == 0 {
                        NodeKind::Entry
                    } else if i == n - 1 {
                        NodeKind::Exit
                    } else if rng.below(3) == 0 {
                        NodeKind::CallSite
                    } else {
                        NodeKind::Statement
                    };
                    b.test_node(&format!("n{line}"), kind, f, line)
                })
                .collect();
            for i in 0..n - 1 {
                b.add_flow_edge(body[i], body[i + 1]);
                if rng.below(3) == 0 {
                    b.add_flow_edge(body[i], body[1 + rng.below(n - 1)]);
                }
            }
            nodes.push(body);
        }
        for fi in 0..nf {
            for &v in &nodes[fi] {
                if b.kind_of(v) == NodeKind::CallSite {
                    b.add_call_edge(v, nodes[rng.below(nf)][0]);
                }
            }
        }
        for _ in 0..1 + rng.below(2) {
            let (fa, fb) = (rng.below(nf), rng.below(nf));
            if fa != fb {
                let (a, c) = (&nodes[fa], &nodes[fb]);
                b.add_flow_edge(a[rng.below(a.len() - 1)], c[1 + rng.below(c.len() - 1)]);
            }
        }
        b.set_start(nodes[0][0]);
        b.build().ok()
    }

    fn set(rng: &mut Rng, n: usize) -> NodeSet {
        let k = 1 + rng.below(2);
        NodeSet::new((0..k).map(|_| NodeId::new(rng.below(n))).collect()).expect("non-empty")
    }

    /// A crash, some observations, maybe a value.
    fn report(rng: &mut Rng, n: usize, value: bool) -> Report {
        let mut r = Report {
            crash: Some(set(rng, n)),
            ..Report::default()
        };
        for _ in 0..rng.below(3) {
            r.obs_yes.push(Trace {
                reliable: false,
                entries: vec![set(rng, n)],
            });
        }
        for _ in 0..rng.below(3) {
            r.obs_no.push(set(rng, n));
        }
        if value {
            let writes = set(rng, n);
            let bad = writes
                .nodes()
                .iter()
                .copied()
                .filter(|_| rng.below(2) == 0)
                .collect();
            r.values.push(LastWrite {
                writes,
                bad,
                need: rng.below(3) == 0,
                what: "v".into(),
                tests: Vec::new(),
            });
        }
        r
    }

    /// A lift of an exploration over the graph without some nodes, over
    /// the graph without more of them and with a value's automaton (or
    /// none), has the nodes that may run and the feasibility of the
    /// search of that report over that graph: on random graphs with
    /// non-local jumps.
    #[test]
    fn a_lift_is_the_search_over_fewer_nodes() {
        let limits = CsLimits::default();
        let (mut compared, mut fewer, mut jumps, mut feasible) = (0, 0, 0, 0);
        for seed in 0..3000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let Some(g) = graph(&mut rng) else { continue };
            let n = g.num_nodes();
            let mut more = report(&mut rng, n, true);
            let base = Report {
                values: Vec::new(),
                ..more.clone()
            };
            if rng.below(2) == 0 {
                more = base.clone();
            }
            let mut r0 = BitSet::new(n);
            for _ in 0..rng.below(2) {
                r0.insert(rng.below(n));
            }
            let mut r1 = r0.clone();
            for _ in 0..rng.below(4) {
                r1.insert(rng.below(n));
            }
            let Some(p0) = Prepared::with_removed(&g, &base, &limits, None, r0) else {
                continue;
            };
            let Ok(h0) = p0.explode(true, 1 << 16) else {
                continue;
            };
            let ix = Index::of(&h0).expect("a search's");
            let Some(p) = Prepared::with_removed(&g, &more, &limits, None, r1) else {
                continue;
            };
            let Ok(direct) = p.explode(true, 1 << 16) else {
                continue;
            };
            let v = if more.values.is_empty() {
                assert!(p.fixed() == p0.fixed());
                silent()
            } else {
                match extra_automaton(p.fixed(), p0.fixed()) {
                    Some(v) => v.clone(),
                    None => continue,
                }
            };
            assert_eq!(p.relaxed(), p0.relaxed());
            let lifted = lift(&h0, &ix, &v, p.shape().0, 1 << 16).expect("fits");
            let may = |h: &Hyper| h.may(&h.live(), n);
            assert_eq!(lifted.feasible(), direct.feasible(), "seed {seed}");
            assert_eq!(may(&lifted), may(&direct), "seed {seed}");
            compared += 1;
            feasible += usize::from(direct.feasible());
            fewer += usize::from(p.shape().0 != p0.shape().0);
            jumps += usize::from(!h0.jumps.is_empty());
        }
        assert!(
            compared > 1000 && feasible > 300 && fewer > 300 && jumps > 100,
            "{compared} {feasible} {fewer} {jumps}"
        );
    }

    /// Value stages explore the report they share once, whether that
    /// exploration fits the limits or not: a later stage never tries a
    /// failed one again (it searches on its own).
    #[test]
    fn the_shared_exploration_is_tried_once() {
        let limits = CsLimits::default();
        let (mut failed, mut fitted) = (0, 0);
        for seed in 0..400u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let Some(g) = graph(&mut rng) else { continue };
            let r = report(&mut rng, g.num_nodes(), true);
            for max_states in [1, 1 << 16] {
                let bases = Arc::new(StageBases::default());
                bases.share_stages(true);
                let lifts = bases.scope(|| {
                    (0..3)
                        .filter_map(|_| {
                            let removed = BitSet::new(g.num_nodes());
                            let p = Prepared::with_removed(&g, &r, &limits, None, removed)?;
                            Some(lifted(&g, &r, &p, (&limits, None, max_states)).is_some())
                        })
                        .collect::<Vec<_>>()
                });
                let explored = bases.shared_explorations.load(Ordering::Relaxed);
                if lifts.len() < 3 || explored == 0 {
                    continue;
                }
                assert_eq!(explored, 1, "seed {seed}, {max_states} states");
                if lifts.iter().all(|&l| !l) && max_states == 1 {
                    failed += 1;
                } else if lifts.iter().all(|&l| l) {
                    fitted += 1;
                }
            }
        }
        assert!(failed > 100 && fitted > 100, "{failed} {fitted}");
    }
}
