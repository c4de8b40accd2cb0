//! Bulk recovery in the context-sensitive semantics with every
//! constraint: one exploration of the product and a few linear passes
//! over it, no search per node.
//!
//! The exploration is [`super::product`]'s tabulation in *bulk mode*: no
//! subsumption, no stop at the first accepting state, and every way each
//! state is reached logged. That makes a hypergraph ([`Hyper`]) whose
//! states are top-level states, path edges of invocations and escape
//! records, and whose steps have one source (a flow or call step) or two
//! (a completed call: the call site's state and the callee's exit path
//! edge; a landing jump: the call site's state and the escape record).
//! Every accepting derivation is a valid path that satisfies the report's
//! automata; observations of single nodes and ambiguous `obsNo` sets are
//! not tracked (each would be a bit of every tuple and could double the
//! states), so the paths are a superset of the consistent ones and every
//! label below is sound. The nodes already labelled No are removed first.
//!
//! * **May it have run?** A state is *live* if it is on an accepting
//!   derivation: backward from the accepting states, every source of a
//!   step into a live state is live. A callee's exit path edge becomes
//!   live only through a live completed call that uses *that* exit, and
//!   its invocation's path edges only by reaching it: forward and backward
//!   facts are paired per invocation (callee entry, entry state, exit
//!   state), never intersected per node across calling contexts. A node
//!   no live state has never ran. The observations come back *pairwise*:
//!   for every node `u` known to have run (Yes already: the observed nodes
//!   first), a node none of whose live states lies on an accepting
//!   derivation through `u` never ran ([`Hyper::apart`]: union flows,
//!   before and after each state, bit-parallel over the known nodes).
//! * **Must it have run?** For every state, the candidates (nodes still
//!   Maybe) on *every* derivation of it (`pre`: ⋂ over its steps of the
//!   union of its sources' sets, plus its own node, a greatest fixpoint)
//!   and on every continuation of it to acceptance (`post`, backward the
//!   same way). A step's two sources are derived independently, so
//!   ⋂ᵢⱼ(Aᵢ ∪ Bⱼ) = (⋂Aᵢ) ∪ (⋂Bⱼ) and both are the meet over all paths,
//!   not an approximation. A candidate must have run if it is in `pre` of
//!   every accepting state, or in `pre ∪ post` of every live state of a
//!   node known to have run (every consistent path goes through one of
//!   them); candidates so proved are known too, to a fixpoint.
//!
//! Only candidates on a few accepting derivations can be proved must
//! (one derivation of an accepting state, one through each node known to
//! run: [`Flow::provable`] argues why), so the must pass examines only
//! those (`CsLimits::must_filter`): on SQLite's plain cores about 3,000
//! of 80,000 candidates, all of them within the budget that used to
//! cover the first 4,000 in node order.
//!
//! Every pass visits the strongly connected components of "is a source
//! of a step into" in topological order (a union flow once per component,
//! an intersection flow with a worklist inside a cycle that meets again
//! only the steps whose source changed: semi-naive evaluation, as in
//! Datalog engines), so each costs about (states + steps) × words. The sets are bit sets over the
//! candidates, in chunks under a memory budget and a work budget
//! ([`FLOW_BUDGET`]); past them candidates stay Maybe.
//!
//! On the paper's failures this gives exactly the labels of the
//! elimination searches of `close::close` (`--exact`), in milliseconds.

use super::hyper::{Hyper, StateId};
use super::limits::CsLimits;
use super::product::{Prepared, Unsupported};
use crate::algo::{SccId, Sccs};
use crate::graph::{BitSet, Csr};
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::Report;
use crate::solver::Label;
use std::collections::VecDeque;
use std::time::Instant;

impl Hyper {
    /// The states on some derivation of an accepting state.
    pub fn live(&self) -> BitSet {
        let mut live = BitSet::new(self.len());
        let mut stack: Vec<StateId> = Vec::new();
        for &s in &self.accepting {
            if live.insert(s.index()) {
                stack.push(s);
            }
        }
        while let Some(s) = stack.pop() {
            for &(a, b) in self.steps_into(s.index()) {
                for x in std::iter::once(a).chain(b) {
                    if live.insert(x.index()) {
                        stack.push(x);
                    }
                }
            }
        }
        live
    }

    /// The nodes of live states: those that may have run.
    pub fn may(&self, live: &BitSet, num_nodes: usize) -> BitSet {
        let mut may = BitSet::new(num_nodes);
        for s in live.iter() {
            if let Some(v) = self.node[s] {
                may.insert(v.index());
            }
        }
        may
    }

    /// Of `candidates`, those that must have run: on every derivation of
    /// every accepting state, or on every derivation through a node of
    /// `known` (nodes known to run on every consistent execution, so
    /// every consistent path is among those through it), closed over the
    /// candidates so proved. Computed in chunks of at most `words` 64-bit
    /// words per live state, only the first `max_chunks` chunks; the
    /// candidates `skip` names (decided elsewhere) leave their chunk, and
    /// what is left of consecutive chunks is examined together while it
    /// fits one (a chunk's members are never split: the closure only
    /// gains from more of them). Returns the candidates proved, and how
    /// many were left unexamined.
    pub fn must(
        &self,
        flow: &Flow,
        num_nodes: usize,
        (candidates, skip): (&[NodeId], &dyn Fn(NodeId) -> bool),
        known: &[NodeId],
        words: usize,
        max_chunks: usize,
    ) -> (Vec<NodeId>, usize) {
        self.must_split(
            flow,
            num_nodes,
            (candidates, skip),
            known,
            (words, max_chunks),
            |states, w, rows| {
                let threads = split_pays(states, w);
                (parts_of(states, w, rows, threads), threads)
            },
        )
    }

    /// [`Hyper::must`], a chunk solved in parts, on two threads or one,
    /// as `split(live states, words, candidates and known nodes)` says.
    fn must_split(
        &self,
        flow: &Flow,
        num_nodes: usize,
        (candidates, skip): (&[NodeId], &dyn Fn(NodeId) -> bool),
        known: &[NodeId],
        (words, max_chunks): (usize, usize),
        split: impl Fn(usize, usize, usize) -> (usize, bool),
    ) -> (Vec<NodeId>, usize) {
        if candidates.is_empty() || self.accepting.is_empty() {
            return (Vec::new(), 0);
        }
        let per_chunk = words.clamp(1, candidates.len().div_ceil(64)) * 64;
        let mut groups: Vec<Vec<NodeId>> = Vec::new();
        let mut left = 0;
        for (c, chunk) in candidates.chunks(per_chunk).enumerate() {
            if c >= max_chunks {
                left += chunk.len();
                continue;
            }
            let open: Vec<NodeId> = chunk.iter().copied().filter(|&v| !skip(v)).collect();
            match groups.last_mut() {
                _ if open.is_empty() => {}
                Some(last) if last.len() + open.len() <= per_chunk => last.extend(open),
                _ => groups.push(open),
            }
        }
        let mut proved = Vec::new();
        // One allocation of each for every chunk.
        let (mut pre, mut post) = (Sets::new(0, 1, 0), Sets::new(0, 1, 0));
        for (k, chunk) in groups.iter().enumerate() {
            // The run's deadline (a value stage's time budget, --timeout)
            // holds here too: the chunks not examined stay Maybe.
            if crate::budget::past_deadline() {
                left += groups[k..].iter().map(Vec::len).sum::<usize>();
                break;
            }
            let w = chunk.len().div_ceil(64);
            let states = flow.order.len();
            let (parts, threads) = split(states, w, chunk.len() + known.len());
            let yes = if parts > 1 {
                flow.closure_in_parts(
                    self,
                    num_nodes,
                    chunk,
                    known,
                    parts,
                    threads,
                    (&mut pre, &mut post),
                )
            } else {
                let bit = candidate_bits(num_nodes, chunk);
                flow.pre(self, &bit, w, &mut pre);
                // Without known nodes, the closure starts from the
                // candidates on every accepting derivation: with none, it
                // proves none, and the backward pass is not needed (most
                // of bzip2's value stages).
                if known.is_empty() && flow.on_every_derivation(&pre).iter().all(|&x| x == 0) {
                    continue;
                }
                flow.post(self, &bit, &pre, &mut post);
                flow.closure(&pre, &post, chunk, known)
            };
            proved.extend(
                chunk
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| yes[i / 64] & (1 << (i % 64)) != 0)
                    .map(|(_, &v)| v),
            );
        }
        (proved, left)
    }

    /// Of `candidates`, those on no accepting derivation that also goes
    /// through `targets[i]`, for some `i` (nodes known to have run, so
    /// every consistent path goes through each): they never ran. Only
    /// the first `words` words of targets are used.
    pub fn apart(
        &self,
        flow: &Flow,
        num_nodes: usize,
        candidates: &[NodeId],
        targets: &[NodeId],
        words: usize,
    ) -> Vec<NodeId> {
        if candidates.is_empty() || targets.is_empty() || self.accepting.is_empty() {
            return Vec::new();
        }
        let targets = &targets[..targets.len().min(words.max(1) * 64)];
        let w = targets.len().div_ceil(64);
        let mut bit = vec![u32::MAX; num_nodes];
        for (i, v) in targets.iter().enumerate() {
            bit[v.index()] = i as u32;
        }
        let through = flow.through(self, &bit, w);
        let mut all = vec![0u64; w];
        for i in 0..targets.len() {
            all[i / 64] |= 1 << (i % 64);
        }
        let mut acc = vec![0u64; w];
        candidates
            .iter()
            .copied()
            .filter(|v| {
                acc.fill(0);
                for &i in flow.at(*v).unwrap_or(&[]) {
                    or_into(&mut acc, through.get(i));
                }
                acc != all
            })
            .collect()
    }
}

/// The live states of a [`Hyper`] numbered densely, with the steps out of
/// each (for the backward passes), the strongly connected components of
/// "is a source of a step into" (every pass visits them in topological
/// order, forward or backward, iterating only inside a cycle), and the
/// live states of each node.
pub(crate) struct Flow {
    /// Live states, in id order.
    order: Vec<usize>,
    /// Per live state, the steps into it, in dense numbers.
    ins: Vec<(u32, Option<u32>)>,
    in_start: Vec<usize>,
    /// Per live state, the steps it is a source of: (target, the other
    /// source).
    out_start: Vec<u32>,
    outs: Vec<(u32, Option<u32>)>,
    /// Components, numbered so that sources come before targets.
    sccs: Sccs,
    /// Whether each live state is initial.
    root: Vec<bool>,
    /// Per node, its live states (`at`): a CSR by node index.
    at_start: Vec<u32>,
    at: Vec<u32>,
    /// Live accepting states.
    accepting: Vec<u32>,
}

/// [`Flow::step_index`]'s arrays.
struct StepIndex {
    target: Vec<u32>,
    src_start: Vec<usize>,
    src_steps: Vec<u32>,
    sources: Vec<u8>,
}

/// Bit sets of `w` words per live state.
struct Sets {
    w: usize,
    bits: Vec<u64>,
}

impl Sets {
    fn new(n: usize, w: usize, fill: u64) -> Sets {
        Sets {
            w,
            bits: vec![fill; n * w],
        }
    }

    fn get(&self, i: u32) -> &[u64] {
        &self.bits[i as usize * self.w..(i as usize + 1) * self.w]
    }

    /// Reuses the allocation for `n` states of `w` words, all `fill`.
    fn reset(&mut self, n: usize, w: usize, fill: u64) {
        self.w = w;
        self.bits.clear();
        self.bits.resize(n * w, fill);
    }

    /// Sets state `i` to `acc` (once-visited states: no comparison).
    fn put(&mut self, i: u32, acc: &[u64]) {
        self.bits[i as usize * self.w..(i as usize + 1) * self.w].copy_from_slice(acc);
    }

    /// Meets state `i`'s set with `x`; whether it changed.
    fn meet(&mut self, i: u32, x: &[u64]) -> bool {
        let cur = &mut self.bits[i as usize * self.w..(i as usize + 1) * self.w];
        let mut changed = false;
        for (c, x) in cur.iter_mut().zip(x) {
            let m = *c & x;
            changed |= m != *c;
            *c = m;
        }
        changed
    }

    /// Sets state `i` to `acc`; whether it changed.
    fn set(&mut self, i: u32, acc: &[u64]) -> bool {
        let cur = &mut self.bits[i as usize * self.w..(i as usize + 1) * self.w];
        if cur == acc {
            return false;
        }
        cur.copy_from_slice(acc);
        true
    }
}

fn set_bit(acc: &mut [u64], b: Option<u32>) {
    if let Some(b) = b {
        acc[b as usize / 64] |= 1 << (b % 64);
    }
}

fn or_into(acc: &mut [u64], x: &[u64]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a |= x;
    }
}

impl Flow {
    /// Built once per exploration, for all the passes over it.
    fn new(h: &Hyper, live: &BitSet) -> Flow {
        let order: Vec<usize> = live.iter().collect();
        let mut local = vec![u32::MAX; h.len()];
        for (i, &s) in order.iter().enumerate() {
            local[s] = u32::try_from(i).expect("states fit in u32");
        }
        let n = order.len();
        let mut ins = Vec::new();
        let mut in_start = Vec::with_capacity(n + 1);
        // Steps out of each state, as (source, (target, other source)),
        // in target order; grouped by source below by a stable counting
        // sort (`Csr::from_edges`' way), with no sort of the list.
        let mut outs: Vec<(u32, (u32, Option<u32>))> = Vec::new();
        let mut nodes = 0;
        for (i, &s) in order.iter().enumerate() {
            let i = i as u32;
            in_start.push(ins.len());
            if let Some(v) = h.node[s] {
                nodes = nodes.max(v.index() + 1);
            }
            for &(a, b) in h.steps_into(s) {
                let la = local[a.index()];
                let lb = b.map(|b| local[b.index()]);
                ins.push((la, lb));
                outs.push((la, (i, lb)));
                if let Some(lb) = lb {
                    outs.push((lb, (i, Some(la))));
                }
            }
        }
        in_start.push(ins.len());
        let (out_start, outs) = crate::graph::group_by_source(n, &outs);
        // Each node's live states, in state order: a CSR by node.
        let by_node: Vec<(u32, u32)> = order
            .iter()
            .enumerate()
            .filter_map(|(i, &s)| h.node[s].map(|v| (v.index() as u32, i as u32)))
            .collect();
        let (at_start, at) = crate::graph::group_by_source(nodes, &by_node);
        // "Is a source of a step into": the steps out, grouped already
        // (a repeated edge changes no component).
        let deps = Csr::from_parts(out_start.clone(), outs.iter().map(|&(to, _)| to).collect());
        let sccs = Sccs::compute(&deps, |_| true);
        let accepting = h.accepting.iter().map(|s| local[s.index()]).collect();
        let root = order.iter().map(|&s| h.root[s]).collect();
        Flow {
            order,
            ins,
            in_start,
            out_start,
            outs,
            sccs,
            root,
            at_start,
            at,
            accepting,
        }
    }

    /// The live states of node `v`, in state order; `None` if it has none.
    fn at(&self, v: NodeId) -> Option<&[u32]> {
        let (a, b) = (
            self.at_start.get(v.index()).copied()?,
            self.at_start.get(v.index() + 1).copied()?,
        );
        (a < b).then(|| &self.at[a as usize..b as usize])
    }

    fn ins(&self, i: u32) -> &[(u32, Option<u32>)] {
        &self.ins[self.in_start[i as usize]..self.in_start[i as usize + 1]]
    }

    fn outs(&self, i: u32) -> &[(u32, Option<u32>)] {
        &self.outs[self.out_start[i as usize] as usize..self.out_start[i as usize + 1] as usize]
    }

    /// The candidate bit of live state `i`'s node, if it is a candidate.
    fn own(&self, h: &Hyper, bit: &[u32], i: u32) -> Option<u32> {
        h.node[self.order[i as usize]]
            .map(|v| bit[v.index()])
            .filter(|&b| b != u32::MAX)
    }

    /// [`Flow::own`] of every live state, for the passes that read it per
    /// step.
    fn own_bits(&self, h: &Hyper, bit: &[u32]) -> Vec<Option<u32>> {
        (0..self.order.len() as u32)
            .map(|i| self.own(h, bit, i))
            .collect()
    }

    /// The components in topological order (sources of steps first), or
    /// the reverse.
    fn components(&self, forward: bool) -> Vec<SccId> {
        let mut ids: Vec<SccId> = self.sccs.ids().collect();
        if !forward {
            ids.reverse();
        }
        ids
    }

    /// Solves a meet (greatest fixpoint) flow over the components in
    /// topological order (`forward`) or its reverse: a state outside a
    /// cycle once (`eval`); in a cycle, each state once, then
    /// semi-naively: when a state's set shrinks, only the steps it is a
    /// source of (forward; backward, those into it) are met again into
    /// their dependents (`narrow`), not every step of each dependent.
    /// `eval(i, sets, acc)` computes state `i`'s set into `acc`;
    /// `narrow(d, c, sets, tmp, changed)` meets into each dependent of
    /// `d` in component `c` what `d`'s steps bring it now, and lists
    /// those that shrank.
    ///
    /// The same fixpoint as re-evaluating each dependent: every set only
    /// shrinks from all-ones, and a meet over steps whose contributions
    /// only shrink is its old value met with the changed steps' new
    /// contributions (`⋂ᵢ cᵢ' = (⋂ᵢ cᵢ) ∩ ⋂_{changed} cⱼ'` when `cᵢ' ⊆ cᵢ`).
    /// On SQLite's value stages a state with thousands of steps (the
    /// exit of a function called from everywhere) was met whole each time
    /// one of them changed.
    fn solve(
        &self,
        sets: &mut Sets,
        forward: bool,
        mut eval: impl FnMut(u32, &Sets, &mut [u64]),
        mut narrow: impl FnMut(u32, SccId, &mut Sets, &mut [u64], &mut Vec<u32>),
    ) {
        let mut acc = vec![0u64; sets.w];
        let mut tmp = vec![0u64; sets.w];
        let mut changed: Vec<u32> = Vec::new();
        let mut queue: VecDeque<u32> = VecDeque::new();
        let mut queued = BitSet::new(self.order.len());
        for c in self.components(forward) {
            let members = self.sccs.members_of(c);
            if self.sccs.is_trivial(c) {
                eval(members[0], sets, &mut acc);
                sets.put(members[0], &acc);
                continue;
            }
            // State ids follow the forward exploration: a backward pass
            // starts from the last ones (fewer re-evaluations, same
            // fixpoint).
            let mut first = members.to_vec();
            if !forward {
                first.reverse();
            }
            for i in first {
                eval(i, sets, &mut acc);
                if sets.set(i, &acc) && queued.insert(i as usize) {
                    queue.push_back(i);
                }
            }
            while let Some(d) = queue.pop_front() {
                queued.remove(d as usize);
                changed.clear();
                narrow(d, c, sets, &mut tmp, &mut changed);
                for &t in &changed {
                    if queued.insert(t as usize) {
                        queue.push_back(t);
                    }
                }
            }
        }
    }

    /// Solves a union (least fixpoint) flow: in a cycle every state has
    /// the same set, the union of what flows into any of them, so one
    /// visit per component. `eval(i, sets, acc)` ORs into `acc` what flows
    /// into state `i` (its own contribution, and the sets of the states it
    /// depends on, its component's included).
    fn solve_union(
        &self,
        sets: &mut Sets,
        forward: bool,
        mut eval: impl FnMut(u32, &Sets, &mut [u64]),
    ) {
        let mut acc = vec![0u64; sets.w];
        for c in self.components(forward) {
            acc.fill(0);
            for &i in self.sccs.members_of(c) {
                eval(i, sets, &mut acc);
            }
            for &i in self.sccs.members_of(c) {
                sets.put(i, &acc);
            }
        }
    }

    /// Per live state, the candidates on every derivation of it (for an
    /// invocation's path edge, from the invocation's entry): the greatest
    /// fixpoint of ⋂ over its steps of the union of their sources', plus
    /// its own node.
    fn pre(&self, h: &Hyper, bit: &[u32], w: usize, sets: &mut Sets) {
        let own = self.own_bits(h, bit);
        sets.reset(self.order.len(), w, !0);
        let eval = |i: u32, sets: &Sets, acc: &mut [u64]| {
            if self.root[i as usize] {
                // Its own derivation is just itself.
                acc.fill(0);
            } else {
                acc.fill(!0);
                for &(a, b) in self.ins(i) {
                    let x = sets.get(a);
                    match b {
                        None => acc.iter_mut().zip(x).for_each(|(c, x)| *c &= x),
                        Some(b) => {
                            let y = sets.get(b);
                            for ((c, x), y) in acc.iter_mut().zip(x).zip(y) {
                                *c &= x | y;
                            }
                        }
                    }
                    // Nothing more can leave (an all-empty meet stays so).
                    if acc.iter().all(|&c| c == 0) {
                        break;
                    }
                }
            }
            set_bit(acc, own[i as usize]);
        };
        let narrow =
            |d: u32, c: SccId, sets: &mut Sets, tmp: &mut [u64], changed: &mut Vec<u32>| {
                for &(to, other) in self.outs(d) {
                    if self.root[to as usize] || self.sccs.comp(to) != Some(c) {
                        continue;
                    }
                    tmp.copy_from_slice(sets.get(d));
                    if let Some(o) = other {
                        or_into(tmp, sets.get(o));
                    }
                    set_bit(tmp, own[to as usize]);
                    if sets.meet(to, tmp) {
                        changed.push(to);
                    }
                }
            };
        self.solve(sets, true, eval, narrow);
    }

    /// Per live state, the candidates on every continuation of it to an
    /// accepting state, and (for a path edge) on everything outside its
    /// invocation: ⋂ over the steps it is a source of, of the target's
    /// node and set, and the other source's `pre`; nothing at an
    /// accepting state.
    fn post(&self, h: &Hyper, bit: &[u32], pre: &Sets, sets: &mut Sets) {
        let mut accepting = vec![false; self.order.len()];
        for &a in &self.accepting {
            accepting[a as usize] = true;
        }
        let own = self.own_bits(h, bit);
        sets.reset(self.order.len(), pre.w, !0);
        let eval = |i: u32, sets: &Sets, acc: &mut [u64]| {
            if accepting[i as usize] {
                acc.fill(0);
                return;
            }
            acc.fill(!0);
            for &(to, other) in self.outs(i) {
                let x = sets.get(to);
                // The word of the target's own bit, before the meet (the
                // bit is in the target's side of it).
                let mine = own[to as usize].map(|b| (b as usize / 64, b % 64));
                let kept = mine.map(|(k, _)| acc[k]);
                match other {
                    None => acc.iter_mut().zip(x).for_each(|(c, x)| *c &= x),
                    Some(o) => {
                        let y = pre.get(o);
                        for ((c, x), y) in acc.iter_mut().zip(x).zip(y) {
                            *c &= x | y;
                        }
                    }
                }
                if let (Some((k, b)), Some(was)) = (mine, kept) {
                    acc[k] |= was & (1 << b);
                }
                // Nothing more can leave (an all-empty meet stays so).
                if acc.iter().all(|&c| c == 0) {
                    break;
                }
            }
        };
        // What a step brings a source: the target's set and own node, and
        // the other source's derivation.
        let narrow =
            |d: u32, c: SccId, sets: &mut Sets, tmp: &mut [u64], changed: &mut Vec<u32>| {
                for &(a, b) in self.ins(d) {
                    for (src, other) in [(Some(a), b), (b, Some(a))] {
                        let Some(src) = src else { continue };
                        if accepting[src as usize] || self.sccs.comp(src) != Some(c) {
                            continue;
                        }
                        tmp.copy_from_slice(sets.get(d));
                        if let Some(o) = other {
                            or_into(tmp, pre.get(o));
                        }
                        set_bit(tmp, own[d as usize]);
                        if sets.meet(src, tmp) {
                            changed.push(src);
                        }
                    }
                }
            };
        self.solve(sets, false, eval, narrow);
    }

    /// Per live state, for each target (bit `i` of `w` words): whether some
    /// accepting derivation through the state contains it. A derivation
    /// through the state is one of it (`pre`: either source of a step may
    /// bring the target) with one of its continuations (`post`: through
    /// the target of a step it is a source of, the target's node, its
    /// continuation, or the other source's derivation), chosen
    /// independently, so the union is exact. Both are least fixpoints.
    fn through(&self, h: &Hyper, bit: &[u32], w: usize) -> Sets {
        let n = self.order.len();
        let mut pre = Sets::new(n, w, 0);
        self.solve_union(&mut pre, true, |i, sets, acc| {
            set_bit(acc, self.own(h, bit, i));
            for &(a, b) in self.ins(i) {
                or_into(acc, sets.get(a));
                if let Some(b) = b {
                    or_into(acc, sets.get(b));
                }
            }
        });
        let mut post = Sets::new(n, w, 0);
        self.solve_union(&mut post, false, |i, sets, acc| {
            for &(to, other) in self.outs(i) {
                set_bit(acc, self.own(h, bit, to));
                or_into(acc, sets.get(to));
                if let Some(o) = other {
                    or_into(acc, pre.get(o));
                }
            }
        });
        for (p, q) in pre.bits.iter_mut().zip(&post.bits) {
            *p |= q;
        }
        pre
    }

    /// The nodes of a few accepting derivations: one of an accepting
    /// state, and one through a live state of each node of `known`.
    /// Every candidate [`Hyper::must`] can prove is among them, so the
    /// must pass need examine no other (`CsLimits::must_filter`):
    ///
    /// * `pre` and `post` are fixpoints of their equations, so for any
    ///   one step into `s`, `pre(s)` is within `s`'s node and its
    ///   sources' `pre`, and for any one step `s` is a source of,
    ///   `post(s)` is within the target's node, its `post` and the other
    ///   source's `pre`. By induction over a derivation tree `T` (finite,
    ///   its leaves initial states, whose `pre` is their own node), every
    ///   state `i` of `T` has `pre(i) ∪ post(i)` within the nodes of `T`.
    /// * A candidate proved by the accepting states is in `pre` of the
    ///   one whose tree is taken; one proved through a node `u` (known, or
    ///   proved before it: a node of some tree taken, by induction) is in
    ///   `pre ∪ post` of every live state of `u`, among them one on a tree
    ///   taken.
    ///
    /// The trees: each state's derivation by the first step all of whose
    /// sources were derived before (hypergraph reachability from the
    /// initial states, so well founded), and each state's continuation
    /// to acceptance by the step through which the backward search from
    /// the accepting states first reached it (its other source with its
    /// derivation). Two such families, their choices made in opposite
    /// orders, each bound the candidates provable, so their nodes'
    /// intersection does. Linear in states and steps. `None` if some live
    /// state has no derivation or continuation (never, for a live state;
    /// then nothing is filtered).
    fn provable(
        &self,
        h: &Hyper,
        num_nodes: usize,
        known: &[NodeId],
        (candidates, enough): (&[NodeId], usize),
    ) -> Option<BitSet> {
        let index = self.step_index()?;
        let one = self.trees(h, num_nodes, known, &index, false)?;
        // At most `enough` candidates left (one word of the must pass):
        // the other order could only leave out more, at no gain.
        if candidates
            .iter()
            .filter(|v| one.contains(v.index()))
            .count()
            <= enough
        {
            return Some(one);
        }
        let other = self.trees(h, num_nodes, known, &index, true)?;
        let mut on = BitSet::new(num_nodes);
        for v in one.iter().filter(|&v| other.contains(v)) {
            on.insert(v);
        }
        Some(on)
    }

    /// Each step's target, the steps each live state is a source of, and
    /// each step's number of distinct sources: what both of
    /// [`Flow::trees`]' orders read. `None` without states or with more
    /// steps than `u32` numbers.
    fn step_index(&self) -> Option<StepIndex> {
        let n = self.order.len();
        let steps = self.ins.len();
        if n == 0 || steps >= (u32::MAX - 1) as usize {
            return None;
        }
        let mut target = vec![0u32; steps];
        let mut src_start = vec![0usize; n + 1];
        for t in 0..n {
            let (lo, hi) = (self.in_start[t], self.in_start[t + 1]);
            target[lo..hi].fill(t as u32);
            for &(a, b) in &self.ins[lo..hi] {
                src_start[a as usize + 1] += 1;
                if let Some(b) = b.filter(|&b| b != a) {
                    src_start[b as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            src_start[i + 1] += src_start[i];
        }
        let mut fill = src_start.clone();
        let mut src_steps = vec![0u32; src_start[n]];
        let mut sources = vec![0u8; steps];
        for (k, &(a, b)) in self.ins.iter().enumerate() {
            src_steps[fill[a as usize]] = k as u32;
            fill[a as usize] += 1;
            sources[k] = 1;
            if let Some(b) = b.filter(|&b| b != a) {
                src_steps[fill[b as usize]] = k as u32;
                fill[b as usize] += 1;
                sources[k] = 2;
            }
        }
        Some(StepIndex {
            target,
            src_start,
            src_steps,
            sources,
        })
    }

    /// The nodes of the trees of [`Flow::provable`], its choices made
    /// in one order or (`flip`) in the reverse one. It stays long (over
    /// 100 lines): its three passes (the derivations, the continuations,
    /// the marking) share the same index arrays and the `flip` order,
    /// which helpers would each have to be handed.
    fn trees(
        &self,
        h: &Hyper,
        num_nodes: usize,
        known: &[NodeId],
        index: &StepIndex,
        flip: bool,
    ) -> Option<BitSet> {
        const NONE: u32 = u32::MAX;
        // For a derivation: initial; for a continuation: accepting.
        const END: u32 = u32::MAX - 1;
        let n = self.order.len();
        let (target, src_start, src_steps) = (&index.target, &index.src_start, &index.src_steps);
        let mut pending = index.sources.clone();
        // Derivations, forward from the initial states.
        let mut derived = vec![NONE; n];
        let mut queue: VecDeque<u32> = VecDeque::new();
        for k in 0..n {
            let i = if flip { n - 1 - k } else { k };
            if self.root[i] {
                derived[i] = END;
                queue.push_back(i as u32);
            }
        }
        while let Some(s) = queue.pop_front() {
            let out = &src_steps[src_start[s as usize]..src_start[s as usize + 1]];
            for j in 0..out.len() {
                let k = if flip { out[out.len() - 1 - j] } else { out[j] };
                pending[k as usize] -= 1;
                let t = target[k as usize] as usize;
                if pending[k as usize] == 0 && derived[t] == NONE {
                    derived[t] = k;
                    queue.push_back(t as u32);
                }
            }
        }
        // Continuations, backward from the accepting states.
        let mut next = vec![NONE; n];
        let accepting: Vec<u32> = if flip {
            self.accepting.iter().rev().copied().collect()
        } else {
            self.accepting.clone()
        };
        for &a in &accepting {
            if next[a as usize] == NONE {
                next[a as usize] = END;
                queue.push_back(a);
            }
        }
        while let Some(t) = queue.pop_front() {
            let t = t as usize;
            let (lo, hi) = (self.in_start[t], self.in_start[t + 1]);
            for j in 0..hi - lo {
                let k = if flip { hi - 1 - j } else { lo + j };
                let (a, b) = self.ins[k];
                for x in std::iter::once(a).chain(b) {
                    if next[x as usize] == NONE {
                        next[x as usize] = k as u32;
                        queue.push_back(x);
                    }
                }
            }
        }
        if derived.contains(&NONE) || next.contains(&NONE) {
            return None;
        }
        let mut nodes = BitSet::new(num_nodes);
        let mut in_tree = BitSet::new(n);
        let mut on_spine = BitSet::new(n);
        let mut stack: Vec<u32> = Vec::new();
        let node_of = |i: u32, nodes: &mut BitSet| {
            if let Some(v) = h.node[self.order[i as usize]] {
                nodes.insert(v.index());
            }
        };
        // Marks the derivation of `s` (its states and nodes).
        let derivation =
            |s: u32, nodes: &mut BitSet, in_tree: &mut BitSet, stack: &mut Vec<u32>| {
                stack.push(s);
                while let Some(i) = stack.pop() {
                    if !in_tree.insert(i as usize) {
                        continue;
                    }
                    node_of(i, nodes);
                    let k = derived[i as usize];
                    if k != END {
                        let (a, b) = self.ins[k as usize];
                        stack.push(a);
                        stack.extend(b);
                    }
                }
            };
        let first = accepting.first().copied()?;
        derivation(first, &mut nodes, &mut in_tree, &mut stack);
        for u in known {
            let Some(states) = self.at(*u) else {
                continue;
            };
            // A state of `u` on a tree taken: candidates proved through
            // `u` are on that tree.
            if states
                .iter()
                .any(|&i| in_tree.contains(i as usize) || on_spine.contains(i as usize))
            {
                continue;
            }
            let i = if flip {
                states[states.len() - 1]
            } else {
                states[0]
            };
            derivation(i, &mut nodes, &mut in_tree, &mut stack);
            // Its continuation: each step's target and other source's
            // derivation, up to acceptance or a spine already marked.
            let mut s = i;
            while on_spine.insert(s as usize) {
                let k = next[s as usize];
                if k == END {
                    break;
                }
                let t = target[k as usize];
                let (a, b) = self.ins[k as usize];
                let other = if a == s { b } else { Some(a) };
                if let Some(o) = other.filter(|&o| o != s) {
                    derivation(o, &mut nodes, &mut in_tree, &mut stack);
                }
                node_of(t, &mut nodes);
                s = t;
            }
        }
        Some(nodes)
    }

    /// The candidates on every accepting derivation (of `pre`'s chunk).
    fn on_every_derivation(&self, pre: &Sets) -> Vec<u64> {
        let mut yes = vec![!0u64; pre.w];
        for &a in &self.accepting {
            for (y, x) in yes.iter_mut().zip(pre.get(a)) {
                *y &= x;
            }
        }
        yes
    }

    /// The candidates on every accepting derivation, then on every one
    /// through a node of `known` or a candidate so proved, to a fixpoint.
    fn closure(&self, pre: &Sets, post: &Sets, chunk: &[NodeId], known: &[NodeId]) -> Vec<u64> {
        let w = pre.w;
        let mut yes = self.on_every_derivation(pre);
        let mut acc = vec![0u64; w];
        let through = |v: NodeId, out: &mut [u64], acc: &mut [u64]| {
            if self.through_node(pre, post, v, acc) {
                or_into(out, acc);
            }
        };
        for &v in known {
            through(v, &mut yes, &mut acc);
        }
        close(&mut yes, chunk.len(), |i, yes| {
            through(chunk[i], yes, &mut acc)
        });
        yes
    }

    /// Into `acc`, the candidates on every derivation through a live
    /// state of `v` (of `pre`'s and `post`'s words); false if `v` has
    /// none (`acc` untouched).
    fn through_node(&self, pre: &Sets, post: &Sets, v: NodeId, acc: &mut [u64]) -> bool {
        let Some(states) = self.at(v) else {
            return false;
        };
        acc.fill(!0);
        for &i in states {
            let (p, q) = (pre.get(i), post.get(i));
            for k in 0..pre.w {
                acc[k] &= p[k] | q[k];
            }
        }
        true
    }

    /// [`Flow::closure`] with `chunk`'s words solved in `parts` parts, on
    /// two threads if `threads`: each part's `pre` and `post` sets are
    /// kept only until its share of [`Flow::through_node`] of every candidate
    /// and known node is taken (the bits are independent), so that at
    /// most one part's sets per thread are held. SQLite's residue
    /// refinement: 89,000 live states, 35 words, 50 MB of sets in one
    /// part.
    #[allow(clippy::too_many_arguments)]
    fn closure_in_parts(
        &self,
        h: &Hyper,
        num_nodes: usize,
        chunk: &[NodeId],
        known: &[NodeId],
        parts: usize,
        threads: bool,
        (pre, post): (&mut Sets, &mut Sets),
    ) -> Vec<u64> {
        let w = chunk.len().div_ceil(64);
        let per = w.div_ceil(parts.max(1)) * 64;
        let pieces: Vec<&[NodeId]> = chunk.chunks(per).collect();
        let rows = chunk.len() + known.len();
        // A part's words of the candidates on every accepting derivation,
        // and of `through_node` of each candidate, then each known node.
        let summary = |part: &[NodeId], pre: &mut Sets, post: &mut Sets| {
            let bit = candidate_bits(num_nodes, part);
            let wp = part.len().div_ceil(64);
            self.pre(h, &bit, wp, pre);
            self.post(h, &bit, pre, post);
            let mut through = vec![0u64; rows * wp];
            for (r, &v) in chunk.iter().chain(known).enumerate() {
                self.through_node(pre, post, v, &mut through[r * wp..(r + 1) * wp]);
            }
            (self.on_every_derivation(pre), through)
        };
        let slots: Vec<std::sync::Mutex<Option<PartSummary>>> =
            pieces.iter().map(|_| Default::default()).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = |pre: &mut Sets, post: &mut Sets| loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(part) = pieces.get(k) else { break };
            let s = summary(part, pre, post);
            *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        };
        std::thread::scope(|scope| {
            if threads {
                scope.spawn(|| {
                    let (mut pre, mut post) = (Sets::new(0, 1, 0), Sets::new(0, 1, 0));
                    work(&mut pre, &mut post);
                });
            }
            work(pre, post);
        });
        let parts: Vec<PartSummary> = slots
            .into_iter()
            .map(|s| {
                s.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every part solved")
            })
            .collect();
        let mut yes: Vec<u64> = parts.iter().flat_map(|(y, _)| y.iter().copied()).collect();
        let or_row = |r: usize, yes: &mut [u64]| {
            let mut o = 0;
            for (y, through) in &parts {
                let wp = y.len();
                or_into(&mut yes[o..o + wp], &through[r * wp..(r + 1) * wp]);
                o += wp;
            }
        };
        for j in 0..known.len() {
            or_row(chunk.len() + j, &mut yes);
        }
        close(&mut yes, chunk.len(), or_row);
        yes
    }
}

/// One part's words of [`Flow::closure_in_parts`]: the candidates on
/// every accepting derivation, and per candidate, then per known node,
/// those on every derivation through it.
type PartSummary = (Vec<u64>, Vec<u64>);

/// The closure's fixpoint: each candidate (of `n`) proved in `yes` and
/// not yet taken is taken (`through(i, yes)`: what runs on every
/// derivation through it), until none is left.
fn close(yes: &mut [u64], n: usize, mut through: impl FnMut(usize, &mut [u64])) {
    let mut done = vec![0u64; yes.len()];
    loop {
        let fresh: Vec<usize> = (0..n)
            .filter(|&i| yes[i / 64] & !done[i / 64] & (1 << (i % 64)) != 0)
            .collect();
        if fresh.is_empty() {
            break;
        }
        for &i in &fresh {
            done[i / 64] |= 1 << (i % 64);
        }
        for i in fresh {
            through(i, yes);
        }
    }
}

/// Per node, its bit among `part`'s candidates (`u32::MAX`: none).
fn candidate_bits(num_nodes: usize, part: &[NodeId]) -> Vec<u32> {
    let mut bit = vec![u32::MAX; num_nodes];
    for (i, v) in part.iter().enumerate() {
        bit[v.index()] = i as u32;
    }
    bit
}

/// How many parts [`Hyper::must`] solves a chunk of `w` words in, over
/// `states` live states, with `rows` candidates and known nodes: as many
/// as keep each part's sets within [`PART_WORDS`], at least two where
/// `split` says two threads pay; one where the parts' summaries (`rows`
/// words per word of candidates) would outgrow the sets.
fn parts_of(states: usize, w: usize, rows: usize, split: bool) -> usize {
    if rows > states {
        return 1;
    }
    let by_memory = w.div_ceil((PART_WORDS / states.max(1)).max(1));
    by_memory.max(if split { 2 } else { 1 })
}

/// Most words of one part's `pre` (and `post`) sets in
/// [`Hyper::must`]: 8 MiB each.
const PART_WORDS: usize = 1 << 20;

/// Whether [`Hyper::must`] solves a chunk of `w` words over `states` live
/// states in two halves on two threads: with a second core, and work
/// enough to pay for a thread (about 4 ms of passes).
fn split_pays(states: usize, w: usize) -> bool {
    w >= 4
        && states.saturating_mul(w) >= SPLIT_WORK
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// Live states times words from which [`split_pays`].
const SPLIT_WORK: usize = 1 << 17;

/// Words of candidate bits per live state in one chunk of [`Hyper::must`]
/// (with the live states, its memory: 32 MiB per set kept).
const MUST_WORDS: usize = 1 << 22;
/// The work of the passes of one [`apply`]: live states times words of
/// bits, summed over the passes. With observations, where the passes
/// decide most (SQLite with a core's function flags: 72,000 live states,
/// every one of 15,000 candidates examined in 0.3 s; the gcc-sized
/// synthetic program: 300,000 live states, about a second); a quarter
/// of it with only a stack, where the frame graph has decided nearly
/// everything already (a sixteenth lost Yes labels on Lua's backtrace
/// analyses: 2.6% -> 2.4% of lines decided; a quarter costs SQLite's
/// 0.4 s instead of 0.2). Milliseconds on the paper's programs,
/// where it never binds. Past it, candidates stay Maybe (counted in
/// `Refined::must_left`) and fewer known nodes are used.
const FLOW_BUDGET: usize = 1 << 25;

/// What [`refine`] did.
#[derive(Clone, Debug, Default)]
pub(crate) struct Refined {
    /// Labels turned from Maybe to Yes, and to No.
    pub yes: u64,
    pub no: u64,
    /// States of the explorations.
    pub states: usize,
    /// Observations not tracked (single nodes, ambiguous `obsNo` sets).
    pub relaxed: usize,
    /// The report's other automata, when the exploration with them did
    /// not fit and ran without them, and why.
    pub automata_dropped: usize,
    pub dropped_why: Option<String>,
    /// Candidates the must pass did not examine (past its budget).
    pub must_left: usize,
    /// Candidates the must pass left out because it cannot prove them
    /// (`Flow::provable`).
    pub must_off: usize,
    /// Why the labels may be less than exact, if they may.
    pub partial: Option<String>,
    /// The report has no consistent valid path (labels unchanged).
    pub infeasible: bool,
    /// The exploration was lifted from a shared one (`super::lift`).
    pub lifted: bool,
    /// Milliseconds of each phase: preparing the automata, the
    /// exploration, the may and apart passes, the filter, the must pass.
    pub ms: [u64; 5],
}

/// Refines `labels` (sound labels of `report`) with the
/// context-sensitive labels of one exploration with every automaton of the
/// report (see the module docs), within `max_states` states.
pub(crate) fn refine(
    g: &Icfg,
    report: &Report,
    labels: &mut [Label],
    limits: &CsLimits,
    deadline: Option<Instant>,
    max_states: usize,
    (hint, lean): (Option<&[Label]>, Option<&[NodeId]>),
) -> Refined {
    let mut out = Refined::default();
    let n = g.num_nodes();
    let mut removed = BitSet::new(n);
    for (v, &l) in labels.iter().enumerate() {
        if l == Label::No {
            removed.insert(v);
        }
    }
    let t = Instant::now();
    let Some(p) = Prepared::with_removed(g, report, limits, deadline, removed) else {
        out.partial = Some("the report's automata could not be built".into());
        return out;
    };
    out.relaxed = p.relaxed().len();
    out.ms[0] = millis(t);
    let t = Instant::now();
    // An evidence stage's exploration lifted from one kept before it,
    // where that applies (see `super::lift`). Else with the report's
    // automata; past the budget, without them (every state a node of a
    // frame, one context per function), the known nodes bringing them
    // back pairwise. (A quarter of the budget for the first attempt lost
    // Yes labels on Lua's log analyses.)
    let lifted =
        lean.and_then(|_| super::lift::lifted(g, report, &p, (limits, deadline, max_states)));
    out.lifted = lifted.is_some();
    let attempt = if let Some(h) = lifted {
        Ok(h)
    } else if p.automata() > 0 {
        p.explode(true, max_states).or_else(|Unsupported(why)| {
            out.automata_dropped = p.automata();
            out.dropped_why = Some(why);
            p.explode(false, max_states)
        })
    } else {
        p.explode(false, max_states)
    };
    let h = match attempt {
        Ok(h) => h,
        Err(Unsupported(why)) => {
            out.partial = Some(why);
            return out;
        }
    };
    out.states += h.len();
    out.ms[1] = millis(t);
    let mut observed = BitSet::new(n);
    for (nodes, ran) in p.relaxed() {
        if *ran {
            observed.insert(nodes[0] as usize);
        }
    }
    // With nothing but a stack, a crash and nodes that never ran, every
    // node known to run is on every path the exploration has: going
    // through one says nothing more.
    let observations = !report.obs_yes.is_empty()
        || !report.bursty.is_empty()
        || !report.values.is_empty()
        || report.obs_no.iter().any(|s| s.single().is_none())
        || lean.is_some_and(|k| !k.is_empty());
    apply(
        &h,
        n,
        labels,
        &observed,
        observations,
        (
            hint,
            limits.must_filter.then_some(limits.must_filter_over),
            lean,
        ),
        &mut out,
    );
    // Searched with every automaton: kept for the evidence stages after
    // it (`super::lift`).
    if !out.lifted && out.automata_dropped == 0 {
        super::lift::keep(g, report, &p, max_states, h);
    }
    out
}

/// Applies one exploration's labels (sound: it tracks a subset of the
/// report's constraints) to `labels`: No for the nodes of no live state,
/// Yes for those on every accepting derivation or every one through a
/// node already Yes.
///
/// `hint` (labels sound for the report, from elsewhere) changes only the
/// must pass: the candidates it decides are not examined (their chunks'
/// other members are, together, as without it), and its Yes nodes are
/// known to run in the closure. Everything that decides which candidates
/// are examined (the exploration, the live states, the budget, `known`)
/// is as without it, so each label the pass gives without the hint is
/// given with it or by the hint itself. With `filter` (some threshold), the must pass
/// examines only the candidates [`Flow::provable`] leaves, when there are more than it.
fn apply(
    h: &Hyper,
    n: usize,
    labels: &mut [Label],
    observed: &BitSet,
    use_known: bool,
    (hint, filter, lean): (Option<&[Label]>, Option<usize>, Option<&[NodeId]>),
    out: &mut Refined,
) {
    if !h.feasible() {
        out.infeasible = true;
        return;
    }
    let t = Instant::now();
    let live = h.live();
    let may = h.may(&live, n);
    // The report's observed nodes first: the other Yes nodes are mostly
    // on every path anyway.
    let mut known: Vec<NodeId> = observed
        .iter()
        .filter(|&v| labels[v] == Label::Yes && may.contains(v))
        .map(NodeId::new)
        .collect();
    let Some(mut candidates) = sort_by_may(labels, &may, observed, &mut known, out) else {
        // Sound both: no consistent execution at all.
        out.infeasible = true;
        return;
    };
    if !use_known {
        known.clear();
    } else if let Some(fresh) = lean {
        // The observed nodes and `fresh`: the labels are the hint's, whose
        // other Yes nodes its own recovery already used.
        known.retain(|v| observed.contains(v.index()));
        known.extend(
            fresh
                .iter()
                .filter(|v| labels[v.index()] == Label::Yes && may.contains(v.index())),
        );
    }
    let states = live.count().max(1);
    let total = if use_known {
        FLOW_BUDGET
    } else {
        FLOW_BUDGET / 4
    };
    let budget = (total / states).max(2);
    let apart_words = known
        .len()
        .div_ceil(64)
        .min(budget / 2)
        .min((MUST_WORDS / states).max(1));
    let flow = Flow::new(h, &live);
    // Lean: no base solver checked the report with the hint's evidence,
    // so the known nodes are checked here, pairwise (one with no live
    // state was checked above): two that no accepting derivation goes
    // through together make the report impossible (a value that
    // contradicts the residue is memory the graph cannot explain, which
    // the caller drops).
    let apart = match lean {
        Some(_) => {
            let examined: Vec<NodeId> = candidates.iter().chain(&known).copied().collect();
            h.apart(&flow, n, &examined, &known, apart_words)
        }
        None => h.apart(&flow, n, &candidates, &known, apart_words),
    };
    if apart.iter().any(|v| labels[v.index()] == Label::Yes) {
        out.infeasible = true;
        return;
    }
    if !apart.is_empty() {
        for &v in &apart {
            labels[v.index()] = Label::No;
            out.no += 1;
        }
        candidates.retain(|v| labels[v.index()] == Label::Maybe);
    }
    out.ms[2] = millis(t);
    let t = Instant::now();
    let must_words = (budget - apart_words).max(1);
    let chunk = (MUST_WORDS / states).clamp(1, must_words);
    let skip = |v: NodeId| hint.is_some_and(|h| h[v.index()] != Label::Maybe);
    if let (Some(hint), None) = (hint, lean) {
        known.extend(
            candidates
                .iter()
                .copied()
                .filter(|v| hint[v.index()] == Label::Yes),
        );
    }
    // Only candidates the must pass can prove (see `Flow::provable`):
    // the budget then reaches as far, or further. Only past
    // `CsLimits::must_filter_over` of them.
    if let Some(over) = filter.filter(|&over| candidates.len() > over) {
        if let Some(on) = flow.provable(h, n, &known, (&candidates, over)) {
            let before = candidates.len();
            candidates.retain(|v| on.contains(v.index()));
            out.must_off = before - candidates.len();
        }
    }
    out.ms[3] = millis(t);
    let t = Instant::now();
    let (proved, left) = h.must(
        &flow,
        n,
        (&candidates, &skip),
        &known,
        chunk,
        must_words.div_ceil(chunk),
    );
    out.must_left = left;
    out.ms[4] = millis(t);
    for v in proved {
        if labels[v.index()] == Label::Maybe {
            labels[v.index()] = Label::Yes;
            out.yes += 1;
        }
    }
}

/// Labels No the Maybe nodes of no live state (those not in `may`) and
/// returns the Maybe nodes left, the must pass's candidates; adds the Yes
/// nodes not `observed` to `known`. None when a Yes node has no live
/// state.
fn sort_by_may(
    labels: &mut [Label],
    may: &BitSet,
    observed: &BitSet,
    known: &mut Vec<NodeId>,
    out: &mut Refined,
) -> Option<Vec<NodeId>> {
    let mut candidates: Vec<NodeId> = Vec::new();
    for (v, label) in labels.iter_mut().enumerate() {
        if !may.contains(v) {
            match *label {
                Label::Maybe => {
                    *label = Label::No;
                    out.no += 1;
                }
                Label::Yes => return None,
                Label::No => {}
            }
        } else if *label == Label::Maybe {
            candidates.push(NodeId::new(v));
        } else if *label == Label::Yes && !observed.contains(v) {
            known.push(NodeId::new(v));
        }
    }
    Some(candidates)
}

fn millis(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::icfg::{IcfgBuilder, NodeKind};
    use crate::report::NodeSet;

    /// The must pass stops at the thread's deadline (a value stage's time
    /// budget): the chunks it did not examine are counted as left, and
    /// nothing is proved from them. Without a deadline the same pass
    /// proves `a` and `b` (on the only path to the crash).
    #[test]
    fn the_must_pass_stops_at_the_deadline() {
        let mut bld = IcfgBuilder::new();
        let f = bld.function("main");
        let mut add = |id: &str, kind: NodeKind| bld.test_node(id, kind, f, 1);
        let e = add("e", NodeKind::Entry);
        let a = add("a", NodeKind::Statement);
        let b = add("b", NodeKind::Statement);
        let c = add("c", NodeKind::Statement);
        for (p, q) in [(e, a), (a, b), (b, c)] {
            bld.add_flow_edge(p, q);
        }
        bld.set_start(e);
        let g = bld.build().unwrap();
        let report = Report {
            crash: Some(NodeSet::one(c)),
            ..Report::default()
        };
        let limits = CsLimits::default();
        let removed = BitSet::new(g.num_nodes());
        let p = Prepared::with_removed(&g, &report, &limits, None, removed).unwrap();
        let h = p.explode(false, usize::MAX).unwrap();
        let live = h.live();
        let flow = Flow::new(&h, &live);
        let candidates = [a, b];
        let run = || h.must(&flow, g.num_nodes(), (&candidates, &|_| false), &[], 1, 8);
        let (proved, left) = run();
        assert_eq!((proved.len(), left), (2, 0));
        let past = Instant::now() - std::time::Duration::from_secs(1);
        let (proved, left) = crate::budget::with_deadline(Some(past), run);
        assert_eq!((proved.len(), left), (0, 2));
    }

    /// Random hypergraphs: states with a node or none, a few roots and
    /// accepting states, steps of one or two sources.
    fn arb_hyper() -> impl proptest::strategy::Strategy<Value = Hyper> {
        use proptest::prelude::*;
        (2usize..24).prop_flat_map(|n| {
            (
                proptest::collection::vec(proptest::option::weighted(0.8, 0u32..6), n),
                proptest::collection::vec(proptest::bool::weighted(0.15), n),
                proptest::collection::vec((0..n, 0..n, proptest::option::of(0..n)), 0..3 * n),
                proptest::collection::vec(0..n, 1..3),
            )
                .prop_map(move |(node, mut root, steps, accepting)| {
                    root[0] = true;
                    let id = |i: usize| StateId::new(i);
                    let steps = steps
                        .into_iter()
                        .filter(|&(to, _, _)| !root[to])
                        .map(|(to, a, b)| (id(to), id(a), b.map(id)))
                        .collect();
                    Hyper::new(
                        node.into_iter()
                            .map(|v| v.map(|v| NodeId::new(v as usize)))
                            .collect(),
                        root,
                        steps,
                        accepting.into_iter().map(id).collect(),
                    )
                })
        })
    }

    /// The must pass with its chunks solved in parts (on one thread or
    /// two) proves what it proves in one, with known nodes or without:
    /// on random hypergraphs over hundreds of candidate nodes (4 to 8
    /// words).
    #[test]
    fn parts_prove_what_the_whole_proves() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m.max(1) as u64) as usize
        };
        let (mut compared, mut proved, mut wide) = (0, 0, 0);
        for _ in 0..40 {
            let nodes = 200 + next(300);
            let n = 1000 + next(1000);
            let id = StateId::new;
            let mut root = vec![false; n];
            root[0] = true;
            // Chains with branches back and forth, some binary steps.
            let mut steps = Vec::new();
            for t in 1..n {
                steps.push((id(t), id(t - 1), None));
                for _ in 0..next(3) {
                    let a = next(n);
                    let b = (next(4) == 0).then(|| id(next(n)));
                    steps.push((id(t), id(a), b));
                }
            }
            let node = (0..n)
                .map(|_| (next(10) != 0).then(|| NodeId::new(next(nodes))))
                .collect();
            let h = Hyper::new(node, root, steps, vec![id(n - 1)]);
            let live = h.live();
            let flow = Flow::new(&h, &live);
            let may = h.may(&live, nodes);
            let candidates: Vec<NodeId> = may.iter().map(NodeId::new).collect();
            let known: Vec<NodeId> = candidates
                .iter()
                .copied()
                .filter(|_| next(40) == 0)
                .collect();
            wide += usize::from(candidates.len() > 192);
            for known in [&[][..], &known[..]] {
                let run = |parts: usize, threads: bool| {
                    h.must_split(
                        &flow,
                        nodes,
                        (&candidates, &|_| false),
                        known,
                        (64, 1),
                        |_, _, _| (parts, threads),
                    )
                };
                let whole = run(1, false);
                for (parts, threads) in [(2, false), (3, false), (2, true), (5, true)] {
                    assert_eq!(
                        whole,
                        run(parts, threads),
                        "{parts} parts, threads {threads}"
                    );
                }
                compared += 1;
                proved += whole.0.len();
            }
        }
        assert!(
            compared == 80 && proved > 500 && wide > 30,
            "{compared} {proved} {wide}"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The semi-naive meet flows (`Flow::pre`, `Flow::post`) reach the
        /// fixpoint of their equations that every state re-evaluated in
        /// turn, until nothing changes, reaches from all-ones.
        #[test]
        fn semi_naive_flows_are_the_naive_fixpoint(h in arb_hyper()) {
            let live = h.live();
            let flow = Flow::new(&h, &live);
            let n = flow.order.len();
            // Every node a candidate, node v bit v.
            let bit: Vec<u32> = (0..6).collect();
            let own: Vec<Option<u32>> = (0..n as u32).map(|i| flow.own(&h, &bit, i)).collect();
            let one = |b: Option<u32>| b.map_or(0u64, |b| 1 << b);
            let mut pre = Sets::new(0, 1, 0);
            flow.pre(&h, &bit, 1, &mut pre);
            let mut naive = vec![!0u64; n];
            loop {
                let mut changed = false;
                for i in 0..n {
                    let mut acc = !0u64;
                    if flow.root[i] {
                        acc = 0;
                    } else {
                        for &(a, b) in flow.ins(i as u32) {
                            acc &= naive[a as usize] | b.map_or(0, |b| naive[b as usize]);
                        }
                    }
                    acc |= one(own[i]);
                    changed |= acc != naive[i];
                    naive[i] = acc;
                }
                if !changed {
                    break;
                }
            }
            for (i, &want) in naive.iter().enumerate() {
                proptest::prop_assert_eq!(pre.get(i as u32)[0], want, "pre of {}", i);
            }
            let mut post = Sets::new(0, 1, 0);
            flow.post(&h, &bit, &pre, &mut post);
            let mut naive_post = vec![!0u64; n];
            loop {
                let mut changed = false;
                for i in 0..n {
                    let mut acc = !0u64;
                    if flow.accepting.contains(&(i as u32)) {
                        acc = 0;
                    } else {
                        for &(to, other) in flow.outs(i as u32) {
                            acc &= naive_post[to as usize]
                                | other.map_or(0, |o| naive[o as usize])
                                | one(own[to as usize]);
                        }
                    }
                    changed |= acc != naive_post[i];
                    naive_post[i] = acc;
                }
                if !changed {
                    break;
                }
            }
            for (i, &want) in naive_post.iter().enumerate() {
                proptest::prop_assert_eq!(post.get(i as u32)[0], want, "post of {}", i);
            }
        }
    }
}
