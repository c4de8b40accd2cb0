//! A value stage's exploration lifted from the one its stages share
//! (issue 35's incremental recovery).
//!
//! Each value stage of [`crate::staged`] refines the hint with one more
//! automaton `V`, the value's: its bulk pass explores the product of the
//! graph (without the hint's No nodes), the report's automata and `V`.
//! All the stages of one run share everything but `V`: the report
//! without values and the hint. So the exploration of that shared
//! report, `H0` (the bulk hypergraph of [`super::product`]'s search), is
//! built once, and each stage's hypergraph is `H0`'s live part times `V`
//! ([`lift`]), instead of a search of its own. On bzip2's plain cores
//! (17 stages) a stage's search was about half of its time.
//!
//! **Why it is the stage's exploration.** `V` is a *reset* automaton
//! ([`Dfa::resets`]): each node leaves its state alone or sets it
//! whatever it was. A top-level state of `H0` is paired with `V`'s state;
//! a path edge (inside an invocation, shared by every caller with the
//! same entry tuple) with `V`'s state relative to the invocation's entry:
//! [`ID`] until a node of the invocation sets it, as the search's own
//! "shared invocations" keep a reset automaton (a hole). Every step of
//! `H0` into a state at node `w` reads `w`; a completed call's step
//! takes the callee's state at its exit, or the caller's at the call
//! where that is `ID`. So a derivation of the lifted hypergraph is a
//! derivation of `H0` (a valid path the report's automata accept, over
//! the graph without the removed nodes) along which `V` runs, accepting
//! where `V` accepts: exactly the paths the stage's own search accepts.
//! Only `H0`'s live states (on an accepting derivation) are lifted: a
//! path `V` accepts too is among `H0`'s accepted ones.
//!
//! **When.** Only for a stage whose report is the shared one plus one
//! value, whose prepared automata are the shared report's plus one reset
//! automaton, with the same removed nodes, targets and relaxed
//! observations ([`lifted`] compares them), and an `H0` without escape
//! records (non-local jumps: a landing's state is not its step's node's
//! reading of one source). Otherwise the stage searches as before. The
//! shared explorations live in a [`StageBases`] that `staged` installs on
//! the stages' threads for one run ([`StageBases::scope`]).

use super::hyper::{Hyper, StateId};
use super::limits::CsLimits;
use super::product::Prepared;
use crate::automaton::{Dfa, DEAD};
use crate::fxhash::FxHashMap as HashMap;
use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::Report;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The explorations the value stages of one run share (see the module
/// docs), built by the first stage that needs one.
#[derive(Default)]
pub struct StageBases {
    entries: Mutex<Vec<Arc<Shared>>>,
}

/// At most this many shared reports are kept (asynchronous rounds weaken
/// the stages' report in one or two ways).
const MAX_SHARED: usize = 4;

/// One shared report's exploration, and what its preparation made of it.
struct Shared {
    graph: (usize, usize),
    report: Report,
    removed_in: BitSet,
    max_states: usize,
    fixed: Vec<Dfa>,
    relaxed: Vec<(Vec<u32>, bool)>,
    removed: BitSet,
    targets: Option<Vec<NodeId>>,
    /// `None` when it could not be built within the limits (or has
    /// escape records): the stages then search on their own.
    h0: Option<(Hyper, Index)>,
}

thread_local! {
    static BASES: RefCell<Option<Arc<StageBases>>> = const { RefCell::new(None) };
}

impl StageBases {
    /// Runs `f` with these shared explorations on the calling thread (the
    /// value stages' bulk passes then lift theirs from them).
    pub fn scope<T>(self: &Arc<Self>, f: impl FnOnce() -> T) -> T {
        let before = BASES.with(|b| b.replace(Some(Arc::clone(self))));
        let out = f();
        BASES.with(|b| *b.borrow_mut() = before);
        out
    }

    /// How many shared explorations were built (and within the limits).
    pub fn built(&self) -> (usize, usize) {
        let e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        (e.len(), e.iter().filter(|s| s.h0.is_some()).count())
    }

    /// The shared exploration of `report` over the graph without
    /// `removed_in`, built (under the lock: the other stages wait for it
    /// rather than build it too) when new.
    fn get(
        &self,
        g: &Icfg,
        report: &Report,
        removed_in: &BitSet,
        (limits, deadline, max_states): (&CsLimits, Option<Instant>, usize),
    ) -> Option<Arc<Shared>> {
        let graph = (g as *const Icfg as usize, g.num_nodes());
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = entries.iter().find(|s| {
            s.graph == graph
                && s.max_states == max_states
                && s.removed_in == *removed_in
                && s.report == *report
        }) {
            return Some(Arc::clone(s));
        }
        let p = Prepared::with_removed(g, report, limits, deadline, removed_in.clone())?;
        let h0 = p
            .explode(true, max_states)
            .ok()
            .and_then(|h| Index::of(&h).map(|ix| (h, ix)));
        let (removed, targets) = p.shape();
        let shared = Arc::new(Shared {
            graph,
            report: report.clone(),
            removed_in: removed_in.clone(),
            max_states,
            fixed: p.fixed().to_vec(),
            relaxed: p.relaxed().to_vec(),
            removed: removed.clone(),
            targets: targets.map(<[NodeId]>::to_vec),
            h0,
        });
        if entries.len() >= MAX_SHARED {
            entries.remove(0);
        }
        entries.push(Arc::clone(&shared));
        Some(shared)
    }
}

/// The hypergraph of `report`'s exploration as prepared in `p` (over the
/// graph without `removed_in` first), lifted from the shared one of the
/// report without its value (see the module docs); `None` where it does
/// not apply: the caller searches.
pub(super) fn lifted(
    g: &Icfg,
    report: &Report,
    p: &Prepared,
    removed_in: &BitSet,
    (limits, deadline, max_states): (&CsLimits, Option<Instant>, usize),
) -> Option<Hyper> {
    if report.values.len() != 1 {
        return None;
    }
    let bases = BASES.with(|b| b.borrow().clone())?;
    let shared_report = Report {
        values: Vec::new(),
        ..report.clone()
    };
    let s = bases.get(
        g,
        &shared_report,
        removed_in,
        (limits, deadline, max_states),
    )?;
    let (h0, ix) = s.h0.as_ref()?;
    let (removed, targets) = p.shape();
    if *removed != s.removed || targets != s.targets.as_deref() || p.relaxed() != s.relaxed {
        return None;
    }
    let v = extra_automaton(p.fixed(), &s.fixed)?;
    lift(h0, ix, v, max_states)
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

/// What every lift of one `H0` reads, whatever the value: its live
/// states and, per live state, the steps into live states it is a
/// source of.
pub(super) struct Index {
    live: BitSet,
    /// `outs[out_start[s]..out_start[s + 1]]`: (step, role) of the steps
    /// `s` is a source of; role 0 the only source, 1 a completed call's
    /// call, 2 its callee's exit.
    out_start: Vec<u32>,
    outs: Vec<(u32, u8)>,
    /// Each step's target.
    target: Vec<u32>,
}

impl Index {
    /// `None` if `h0` is not a search's or has escape records.
    pub(super) fn of(h0: &Hyper) -> Option<Index> {
        h0.tops?;
        if h0.node.iter().any(Option::is_none) {
            return None;
        }
        let n0 = h0.len();
        let live = h0.live();
        let mut out_start = vec![0u32; n0 + 1];
        for t in live.iter() {
            for &(a, b) in h0.steps_into(t) {
                out_start[a.index() + 1] += 1;
                if let Some(b) = b {
                    out_start[b.index() + 1] += 1;
                }
            }
        }
        for i in 0..n0 {
            out_start[i + 1] += out_start[i];
        }
        let mut fill = out_start.clone();
        let mut outs = vec![(0u32, 0u8); out_start[n0] as usize];
        let mut target = vec![0u32; h0.ins.len()];
        for t in live.iter() {
            let (lo, hi) = (h0.start[t], h0.start[t + 1]);
            target[lo..hi].fill(t as u32);
            for (k, &(a, b)) in h0.ins[lo..hi].iter().enumerate() {
                let k = lo + k;
                outs[fill[a.index()] as usize] = (k as u32, if b.is_some() { 1 } else { 0 });
                fill[a.index()] += 1;
                if let Some(b) = b {
                    outs[fill[b.index()] as usize] = (k as u32, 2);
                    fill[b.index()] += 1;
                }
            }
        }
        Some(Index {
            live,
            out_start,
            outs,
            target,
        })
    }

    fn outs(&self, s: usize) -> &[(u32, u8)] {
        &self.outs[self.out_start[s] as usize..self.out_start[s + 1] as usize]
    }
}

/// Most distinct functions of `V`'s states one lift keeps.
const MAX_FUNCTIONS: usize = 1 << 12;

/// `V`'s values in a lift: below `V`'s number of states, a state (of a
/// top-level state); from it on, the interned function from `V`'s state
/// at the invocation's entry to its state now (of a path edge), the
/// identity first.
struct Values<'v> {
    v: &'v Dfa,
    nv: u32,
    funcs: Vec<Box<[u32]>>,
    ids: HashMap<Box<[u32]>, u32>,
}

impl<'v> Values<'v> {
    fn new(v: &'v Dfa) -> Values<'v> {
        let nv = v.num_states();
        let mut out = Values {
            v,
            nv,
            funcs: Vec::new(),
            ids: HashMap::default(),
        };
        out.intern((0..nv).collect());
        out
    }

    /// The identity: no node of the invocation moved `V` yet.
    fn id(&self) -> u32 {
        self.nv
    }

    /// The value of function `f`; `None` when it rejects every state or
    /// there are too many.
    fn intern(&mut self, f: Box<[u32]>) -> Option<u32> {
        if f.iter().all(|&q| q == DEAD) {
            return None;
        }
        if let Some(&i) = self.ids.get(&f) {
            return Some(self.nv + i);
        }
        if self.funcs.len() >= MAX_FUNCTIONS {
            return None;
        }
        let i = self.funcs.len() as u32;
        self.funcs.push(f.clone());
        self.ids.insert(f, i);
        Some(self.nv + i)
    }

    /// Value `x` after reading a node of class `c`; `Err(())` when there
    /// are too many functions.
    fn read(&mut self, x: u32, c: u32) -> Result<Option<u32>, ()> {
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
        self.interned(f)
    }

    /// The caller's value `call` after a callee's body of value `exit`.
    fn fill(&mut self, exit: u32, call: u32) -> Result<Option<u32>, ()> {
        if exit == self.id() {
            return Ok(Some(call));
        }
        let f = &self.funcs[(exit - self.nv) as usize];
        if call < self.nv {
            let y = f[call as usize];
            return Ok((y != DEAD).then_some(y));
        }
        let h: Box<[u32]> = self.funcs[(call - self.nv) as usize]
            .iter()
            .map(|&q| if q == DEAD { DEAD } else { f[q as usize] })
            .collect();
        self.interned(h)
    }

    fn interned(&mut self, f: Box<[u32]>) -> Result<Option<u32>, ()> {
        if f.iter().all(|&q| q == DEAD) {
            return Ok(None);
        }
        match self.intern(f) {
            Some(x) => Ok(Some(x)),
            None => Err(()),
        }
    }
}

/// `h0`'s live part (as `ix` indexes it) times automaton `v` (see the
/// module docs), at most `max_states` states; `None` if `h0` is not a
/// search's or the product is too large.
pub(super) fn lift(h0: &Hyper, ix: &Index, v: &Dfa, max_states: usize) -> Option<Hyper> {
    let tops = h0.tops?;
    let n0 = h0.len();
    let node_of = |s: usize| h0.node[s].expect("no escape records");
    let mut class = vec![0u32; n0];
    for s in ix.live.iter() {
        class[s] = v.class_of(node_of(s).as_u32());
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
    for s in ix.live.iter().filter(|&s| h0.root[s]) {
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
        let sid = StateId::new(q as usize);
        for &(k, role) in ix.outs(s as usize) {
            let t = ix.target[k as usize] as usize;
            let (a, b) = h0.ins[k as usize];
            match role {
                0 => {
                    if let Some(y) = vals.read(x, class[t]).ok()? {
                        let r = p.add(t, y, false)?;
                        steps.push((r, sid, None));
                    }
                }
                _ => {
                    // The other source's values so far (the pairs with
                    // those found later are made when they are).
                    let other = if role == 1 {
                        b.expect("a completed call")
                    } else {
                        a
                    };
                    others.clear();
                    others.extend(p.values(other.index()));
                    for &(o, xo) in &others {
                        let (exit, call) = if role == 1 { (xo, x) } else { (x, xo) };
                        let Some(y) = vals.fill(exit, call).ok()? else {
                            continue;
                        };
                        if let Some(y) = vals.read(y, class[t]).ok()? {
                            let r = p.add(t, y, false)?;
                            let o = StateId::new(o as usize);
                            steps.push(if role == 1 {
                                (r, sid, Some(o))
                            } else {
                                (r, o, Some(sid))
                            });
                        }
                    }
                }
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
    Some(Hyper::new(node, p.root, steps, accepting))
}

/// The lifted states as they are found: per state of `H0`, a list of
/// its lifted ones (few: one per value of `V` met there).
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
