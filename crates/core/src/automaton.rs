//! Constraint automata over the node alphabet.
//!
//! The alphabet (ICFG nodes) is huge, so transitions are labelled by node
//! *classes*: each automaton maps the few nodes it mentions to classes
//! `1..`, every other node to class 0. An automaton is deterministic but may
//! have several initial states (a nondeterministic first choice, as for
//! "at least one of these did not run").

use crate::report::{NodeSet, Origin};
use std::collections::HashMap;

/// "No state": the run is rejected.
pub const DEAD: u32 = u32::MAX;

/// A deterministic automaton over node classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dfa {
    /// Where the constraint came from.
    pub origin: Origin,
    /// Initial states (one path per choice).
    pub initial: Vec<u32>,
    /// Accepting states.
    pub accepting: Vec<bool>,
    n_classes: u32,
    /// `delta[q * n_classes + c]`.
    delta: Vec<u32>,
    class: HashMap<u32, u32>,
    /// Whether class `c` leaves every state unchanged.
    identity: Vec<bool>,
    /// Higher states accept more continuations (`L(q) ⊆ L(q')` for
    /// `q <= q'`): a product state that made more progress subsumes one
    /// that made less.
    monotone: bool,
    /// States are bit masks and a state accepts every continuation that a
    /// superset accepts (`L(q) ⊇ L(q')` when `q ⊆ q'`): "not all of S",
    /// whose state is the members seen. A product vertex that has seen a
    /// subset subsumes one that has seen more.
    mask_order: bool,
}

/// Every combination of initial states of `autos`, each after `prefix`,
/// enumerated lazily (an odometer): the caller stops when its limits are
/// reached, so many automata with several initial states never build an
/// exponential list. (Every automaton built here has one initial state; a
/// caller-built one may have more.)
pub(crate) fn initial_combinations<'a>(
    prefix: &[u32],
    autos: impl IntoIterator<Item = &'a Dfa>,
) -> InitialCombos<'a> {
    let autos: Vec<&'a Dfa> = autos.into_iter().collect();
    let done = autos.iter().any(|a| a.initial.is_empty());
    InitialCombos {
        prefix: prefix.to_vec(),
        pos: vec![0; autos.len()],
        autos,
        done,
    }
}

/// The iterator of [`initial_combinations`].
pub(crate) struct InitialCombos<'a> {
    prefix: Vec<u32>,
    autos: Vec<&'a Dfa>,
    pos: Vec<usize>,
    done: bool,
}

impl Iterator for InitialCombos<'_> {
    type Item = Vec<u32>;
    fn next(&mut self) -> Option<Vec<u32>> {
        if self.done {
            return None;
        }
        let mut c = self.prefix.clone();
        c.extend(self.autos.iter().zip(&self.pos).map(|(a, &i)| a.initial[i]));
        // Advance the odometer (last automaton fastest).
        self.done = true;
        for k in (0..self.autos.len()).rev() {
            self.pos[k] += 1;
            if self.pos[k] < self.autos[k].initial.len() {
                self.done = false;
                break;
            }
            self.pos[k] = 0;
        }
        Some(c)
    }
}

/// Largest "at least one of these did not run" set given an exact
/// automaton (2^k - 1 states); a larger one is weakened by the caller.
pub const MAX_NOT_ALL: usize = 16;

impl Dfa {
    /// Builds an automaton from its class map and transition function.
    pub fn new(
        origin: Origin,
        n_states: u32,
        initial: Vec<u32>,
        accepting: Vec<bool>,
        class: HashMap<u32, u32>,
        n_classes: u32,
        step: impl Fn(u32, u32) -> u32,
    ) -> Dfa {
        let mut delta = Vec::with_capacity((n_states * n_classes) as usize);
        for q in 0..n_states {
            for c in 0..n_classes {
                delta.push(step(q, c));
            }
        }
        let identity = (0..n_classes)
            .map(|c| (0..n_states).all(|q| delta[(q * n_classes + c) as usize] == q))
            .collect();
        Dfa {
            origin,
            initial,
            accepting,
            n_classes,
            delta,
            class,
            identity,
            monotone: false,
            mask_order: false,
        }
    }

    /// The same language with the fewest states: the states reachable
    /// from an initial state, those no continuation tells apart merged
    /// (Moore's partition refinement; Hopcroft, Motwani and Ullman,
    /// *Introduction to Automata Theory*, 4.4). Blocks are numbered in the
    /// order a breadth-first walk from the initial states meets them, so a
    /// single initial state stays 0. The product's work grows with the
    /// states a constraint can be in: a variable's last write with branch
    /// tests has 3 x (tests + 2) states, of which "no write yet" and "a
    /// good write last" are one when no write is needed.
    ///
    /// Only for automata without an order on their states (the order is
    /// one of numbers, which renumbering would break): others are returned
    /// as they are.
    pub fn minimized(self) -> Dfa {
        if self.has_order() {
            return self;
        }
        let (n, nc) = (self.num_states() as usize, self.n_classes as usize);
        let next = |q: usize, c: usize| self.delta[q * nc + c];
        // Reachable states, in breadth-first order.
        let mut order: Vec<usize> = Vec::new();
        let mut seen = vec![false; n];
        for &q in &self.initial {
            if q != DEAD && !seen[q as usize] {
                seen[q as usize] = true;
                order.push(q as usize);
            }
        }
        let mut i = 0;
        while i < order.len() {
            let q = order[i];
            i += 1;
            for c in 0..nc {
                let t = next(q, c);
                if t != DEAD && !seen[t as usize] {
                    seen[t as usize] = true;
                    order.push(t as usize);
                }
            }
        }
        // Refine by (block, blocks of the successors) until stable.
        let mut block: Vec<u32> = vec![DEAD; n];
        for &q in &order {
            block[q] = u32::from(self.accepting[q]);
        }
        let mut count = 0;
        loop {
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
            let mut refined = vec![DEAD; n];
            for &q in &order {
                let mut sig = Vec::with_capacity(nc + 1);
                sig.push(block[q]);
                for c in 0..nc {
                    let t = next(q, c);
                    sig.push(if t == DEAD { DEAD } else { block[t as usize] });
                }
                let fresh = ids.len() as u32;
                refined[q] = *ids.entry(sig).or_insert(fresh);
            }
            let blocks = ids.len();
            block = refined;
            if blocks == count {
                break;
            }
            count = blocks;
        }
        // `ids` numbered the blocks in `order`'s order: the first state of
        // `order` is in block 0.
        let mut rep = vec![usize::MAX; count];
        for &q in &order {
            let b = block[q] as usize;
            if rep[b] == usize::MAX {
                rep[b] = q;
            }
        }
        let map = |t: u32| if t == DEAD { DEAD } else { block[t as usize] };
        let mut initial: Vec<u32> = self.initial.iter().map(|&q| map(q)).collect();
        initial.dedup();
        let accepting = rep.iter().map(|&q| self.accepting[q]).collect();
        let delta: Vec<u32> = (0..count * nc)
            .map(|i| map(next(rep[i / nc], i % nc)))
            .collect();
        Dfa::new(
            self.origin,
            count as u32,
            initial,
            accepting,
            self.class,
            nc as u32,
            |q, c| delta[q as usize * nc + c as usize],
        )
    }

    /// Does state `a` accept every continuation that state `b` accepts
    /// (equal, or by the automaton's order)?
    #[inline]
    pub fn covers(&self, a: u32, b: u32) -> bool {
        a == b
            || (self.monotone && a >= b)
            || (self.mask_order && a != DEAD && b != DEAD && a & b == a)
    }

    /// Whether some state covers another that is not equal to it.
    pub fn has_order(&self) -> bool {
        self.monotone || self.mask_order
    }

    /// See the `monotone` field.
    pub fn is_monotone(&self) -> bool {
        self.monotone
    }

    /// Number of states.
    pub fn num_states(&self) -> u32 {
        self.accepting.len() as u32
    }

    /// The class of node `v`.
    #[inline]
    pub fn class_of(&self, v: u32) -> u32 {
        if self.class.is_empty() {
            0
        } else {
            self.class.get(&v).copied().unwrap_or(0)
        }
    }

    /// The state after reading node `v` in state `q`.
    #[inline]
    pub fn step(&self, q: u32, v: u32) -> u32 {
        self.delta[(q * self.n_classes + self.class_of(v)) as usize]
    }

    /// Number of classes (class 0: the nodes not mentioned).
    pub fn num_classes(&self) -> u32 {
        self.n_classes
    }

    /// The state after reading a node of class `c` in state `q`.
    #[inline]
    pub fn step_class(&self, q: u32, c: u32) -> u32 {
        self.delta[(q * self.n_classes + c) as usize]
    }

    /// Reading a node of class `c` never changes the state.
    pub fn silent_class(&self, c: u32) -> bool {
        self.identity[c as usize]
    }

    /// Reading `v` never changes the state.
    pub fn silent_on(&self, v: u32) -> bool {
        self.identity[self.class_of(v) as usize]
    }

    /// The nodes this automaton gives a class other than 0.
    pub fn mentioned(&self) -> impl Iterator<Item = u32> + '_ {
        self.class.keys().copied()
    }

    /// Whether class 0 (nodes not mentioned) leaves every state unchanged.
    pub fn silent_elsewhere(&self) -> bool {
        self.identity[0]
    }

    /// Whether every class either leaves every state unchanged or sends
    /// every state to one same state (a *reset* automaton: "the last of
    /// these", "one of these ran"): then the state after a word is the
    /// state before it, or a state the word alone determines.
    pub fn resets(&self) -> bool {
        let n = self.n_classes as usize;
        let states = self.delta.len() / n.max(1);
        (0..n).all(|c| {
            self.identity[c] || (1..states).all(|q| self.delta[q * n + c] == self.delta[c])
        })
    }

    /// Classes: one per distinct membership signature of the nodes in
    /// `sets` (class 0 = in none). Returns the class map and, per class,
    /// the indices of the sets holding it.
    fn classes_of(sets: &[&NodeSet]) -> (HashMap<u32, u32>, Vec<Vec<usize>>) {
        let mut member: HashMap<u32, Vec<usize>> = HashMap::new();
        for (i, s) in sets.iter().enumerate() {
            for n in s.nodes() {
                member.entry(n.as_u32()).or_default().push(i);
            }
        }
        let mut sig_class: HashMap<Vec<usize>, u32> = HashMap::new();
        let mut sigs: Vec<Vec<usize>> = vec![vec![]];
        let mut class = HashMap::new();
        let mut nodes: Vec<_> = member.into_iter().collect();
        nodes.sort();
        for (n, sig) in nodes {
            let c = *sig_class.entry(sig.clone()).or_insert_with(|| {
                sigs.push(sig);
                sigs.len() as u32 - 1
            });
            class.insert(n, c);
        }
        (class, sigs)
    }

    /// `Σ* e₀ Σ* e₁ … Σ*`: the elements occur in order (an unreliable
    /// trace). State = number matched; matching greedily is optimal.
    pub fn subsequence(origin: Origin, elems: &[NodeSet]) -> Dfa {
        let refs: Vec<&NodeSet> = elems.iter().collect();
        let (class, sigs) = Self::classes_of(&refs);
        let len = elems.len() as u32;
        let mut accepting = vec![false; len as usize + 1];
        accepting[len as usize] = true;
        let mut d = Dfa::new(
            origin,
            len + 1,
            vec![0],
            accepting,
            class,
            sigs.len() as u32,
            |q, c| {
                if q < len && sigs[c as usize].contains(&(q as usize)) {
                    q + 1
                } else {
                    q
                }
            },
        );
        d.monotone = true;
        d
    }

    /// A reliable trace: the occurrences of the nodes it mentions are
    /// exactly the elements, in order (PLDI 2017, section 5.3).
    pub fn reliable(origin: Origin, elems: &[NodeSet]) -> Dfa {
        let refs: Vec<&NodeSet> = elems.iter().collect();
        let (class, sigs) = Self::classes_of(&refs);
        let len = elems.len() as u32;
        let mut accepting = vec![false; len as usize + 1];
        accepting[len as usize] = true;
        Dfa::new(
            origin,
            len + 1,
            vec![0],
            accepting,
            class,
            sigs.len() as u32,
            |q, c| {
                if c == 0 {
                    q
                } else if q < len && sigs[c as usize].contains(&(q as usize)) {
                    q + 1
                } else {
                    DEAD
                }
            },
        )
    }

    /// A bursty trace: bursts (each a reliable trace of the nodes the whole
    /// trace mentions) separated by unconstrained execution (PLDI 2017,
    /// section 5.3). Built as an NFA (an occurrence of a burst's first
    /// element may be unobserved, so the burst may start later) and
    /// determinised. `None` if the DFA would exceed `max_states` states.
    pub fn bursty(origin: Origin, bursts: &[Vec<NodeSet>], max_states: usize) -> Option<Dfa> {
        let elems: Vec<NodeSet> = bursts.iter().flatten().cloned().collect();
        let refs: Vec<&NodeSet> = elems.iter().collect();
        let (class, sigs) = Self::classes_of(&refs);
        let len = elems.len() as u32;
        let mut burst_end = vec![false; elems.len()];
        let mut acc = 0;
        for b in bursts {
            acc += b.len();
            if acc > 0 {
                burst_end[acc - 1] = true;
            }
        }
        // NFA state q = elements matched so far; inside a burst iff the
        // last matched element does not end its burst.
        let step = |q: u32, c: u32| -> Vec<u32> {
            if c == 0 {
                return vec![q];
            }
            let matches = q < len && sigs[c as usize].contains(&(q as usize));
            let inside = q > 0 && !burst_end[q as usize - 1];
            match (inside, matches) {
                (true, true) => vec![q + 1],
                (true, false) => vec![],
                (false, true) => vec![q, q + 1],
                (false, false) => vec![q],
            }
        };
        determinize(
            origin,
            vec![0],
            |q| q == len,
            class,
            sigs.len() as u32,
            step,
            max_states,
        )
    }

    /// "At least one of these did not run", deterministically: the state
    /// is the set of members seen so far (a bit mask), and the run dies
    /// when it has seen them all. Exact, no guess: `2^k - 1` states for `k`
    /// members. `None` when `k` exceeds [`MAX_NOT_ALL`] (the caller weakens
    /// the constraint).
    pub fn not_all(origin: Origin, set: &NodeSet) -> Option<Dfa> {
        let k = set.nodes().len();
        if k > MAX_NOT_ALL {
            return None;
        }
        let class: HashMap<u32, u32> = set
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_u32(), i as u32 + 1))
            .collect();
        let full: u32 = ((1u64 << k) - 1) as u32;
        let mut d = Dfa::new(
            origin,
            full, // masks 0..full; the full mask is dead
            vec![0],
            vec![true; full as usize],
            class,
            k as u32 + 1,
            |q, c| {
                if c == 0 {
                    return q;
                }
                let t = q | 1 << (c - 1);
                if t == full {
                    DEAD
                } else {
                    t
                }
            },
        );
        d.mask_order = true;
        Some(d)
    }

    /// A variable's last write ([`crate::report::LastWrite`]): state 0
    /// before any node of `writes`, 1 after a good one last, 2 after a bad
    /// one last. Accepting: 1, and 0 unless `need`. Class 1 = good, 2 =
    /// bad.
    ///
    /// With branch tests ([`crate::report::LastWrite::tests`]) it is the
    /// product automaton of [`crate::report::LastWrite::step`], one class
    /// per node of the alphabet.
    pub fn last_write(origin: Origin, w: &crate::report::LastWrite) -> Dfa {
        if !w.tests.is_empty() {
            let alphabet = w.alphabet();
            let class: HashMap<u32, u32> = alphabet
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_u32(), i as u32 + 1))
                .collect();
            let n_states = w.num_states() as u32;
            return Dfa::new(
                origin,
                n_states,
                vec![0],
                (0..n_states as usize).map(|q| w.accepts(q)).collect(),
                class,
                alphabet.len() as u32 + 1,
                |q, c| {
                    if c == 0 {
                        q
                    } else {
                        w.step(q as usize, alphabet[c as usize - 1]) as u32
                    }
                },
            )
            .minimized();
        }
        let class: HashMap<u32, u32> = w
            .writes
            .nodes()
            .iter()
            .map(|n| {
                let bad = w.bad.binary_search(n).is_ok();
                (n.as_u32(), if bad { 2 } else { 1 })
            })
            .collect();
        Dfa::new(
            origin,
            3,
            vec![0],
            vec![!w.need, true, false],
            class,
            3,
            |q, c| if c == 0 { q } else { c },
        )
        .minimized()
    }

    /// The automaton of the words both `self` and `other` accept: their
    /// product, reachable states only, a class per pair of classes a node
    /// has; `self`'s origin. `None` past `max_states` states (a question
    /// and the paths a witness check rules out: `query`).
    pub fn intersect(&self, other: &Dfa, max_states: usize) -> Option<Dfa> {
        let mut nodes: Vec<u32> = self.mentioned().chain(other.mentioned()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut pairs: Vec<(u32, u32)> = vec![(0, 0)];
        let mut pair_class: HashMap<(u32, u32), u32> = HashMap::from([((0, 0), 0)]);
        let mut class = HashMap::new();
        for n in nodes {
            let p = (self.class_of(n), other.class_of(n));
            let c = *pair_class.entry(p).or_insert_with(|| {
                pairs.push(p);
                pairs.len() as u32 - 1
            });
            if c != 0 {
                class.insert(n, c);
            }
        }
        let mut id: HashMap<(u32, u32), u32> = HashMap::new();
        let mut states: Vec<(u32, u32)> = Vec::new();
        let mut intern = |s: (u32, u32), states: &mut Vec<(u32, u32)>| {
            *id.entry(s).or_insert_with(|| {
                states.push(s);
                states.len() as u32 - 1
            })
        };
        let mut initial = Vec::new();
        for &a in &self.initial {
            for &b in &other.initial {
                initial.push(intern((a, b), &mut states));
            }
        }
        initial.sort_unstable();
        initial.dedup();
        let mut delta: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < states.len() {
            if states.len() > max_states {
                return None;
            }
            let (a, b) = states[i];
            for &(ca, cb) in &pairs {
                let (x, y) = (self.step_class(a, ca), other.step_class(b, cb));
                delta.push(if x == DEAD || y == DEAD {
                    DEAD
                } else {
                    intern((x, y), &mut states)
                });
            }
            i += 1;
        }
        let accepting = states
            .iter()
            .map(|&(a, b)| self.accepting[a as usize] && other.accepting[b as usize])
            .collect();
        let n = pairs.len() as u32;
        Some(Dfa::new(
            self.origin,
            states.len() as u32,
            initial,
            accepting,
            class,
            n,
            |q, c| delta[(q * n + c) as usize],
        ))
    }

    /// A general automaton over caller-defined classes (used by queries).
    pub fn from_table(
        origin: Origin,
        initial: u32,
        accepting: Vec<bool>,
        class: HashMap<u32, u32>,
        n_classes: u32,
        delta: Vec<u32>,
    ) -> Dfa {
        let n_states = accepting.len() as u32;
        Dfa::new(
            origin,
            n_states,
            vec![initial],
            accepting,
            class,
            n_classes,
            |q, c| delta[(q * n_classes + c) as usize],
        )
    }
}

/// Subset construction: the DFA of an NFA given by `step` over `n_classes`
/// classes, from the initial set `init`. `None` if it would have more than
/// `max_states` states (checked as each state is built).
pub fn determinize(
    origin: Origin,
    init: Vec<u32>,
    accepting: impl Fn(u32) -> bool,
    class: HashMap<u32, u32>,
    n_classes: u32,
    step: impl Fn(u32, u32) -> Vec<u32>,
    max_states: usize,
) -> Option<Dfa> {
    let mut init = init;
    init.sort_unstable();
    init.dedup();
    let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let mut delta: Vec<u32> = Vec::new();
    ids.insert(init.clone(), 0);
    sets.push(init);
    let mut i = 0;
    while i < sets.len() {
        if sets.len() > max_states {
            return None;
        }
        for c in 0..n_classes {
            let mut next: Vec<u32> = sets[i].iter().flat_map(|&q| step(q, c)).collect();
            next.sort_unstable();
            next.dedup();
            let t = if next.is_empty() {
                DEAD
            } else {
                let len = sets.len() as u32;
                *ids.entry(next.clone()).or_insert_with(|| {
                    sets.push(next);
                    len
                })
            };
            delta.push(t);
        }
        i += 1;
    }
    let acc: Vec<bool> = sets
        .iter()
        .map(|s| s.iter().any(|&q| accepting(q)))
        .collect();
    Some(Dfa::from_table(origin, 0, acc, class, n_classes, delta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;

    fn set(v: &[usize]) -> NodeSet {
        NodeSet::new(v.iter().map(|&i| NodeId::new(i)).collect()).unwrap()
    }

    fn run(d: &Dfa, word: &[u32]) -> bool {
        d.initial.iter().any(|&q0| {
            let mut q = q0;
            for &v in word {
                q = d.step(q, v);
                if q == DEAD {
                    return false;
                }
            }
            d.accepting[q as usize]
        })
    }

    /// The intersection accepts exactly the words both accept (every word
    /// of up to 5 nodes over 4, against automata of several kinds).
    #[test]
    fn intersect_is_both_languages() {
        let autos = [
            Dfa::subsequence(Origin::Query, &[set(&[1]), set(&[2])]),
            Dfa::not_all(Origin::Query, &set(&[2, 3])).unwrap(),
            Dfa::reliable(Origin::Query, &[set(&[0]), set(&[3])]),
            Dfa::subsequence(Origin::Query, &[set(&[3, 1])]),
        ];
        let mut words: Vec<Vec<u32>> = vec![vec![]];
        for len in 1..=5 {
            let mut w = vec![0u32; len];
            loop {
                words.push(w.clone());
                let mut k = 0;
                while k < len && w[k] == 3 {
                    w[k] = 0;
                    k += 1;
                }
                if k == len {
                    break;
                }
                w[k] += 1;
            }
        }
        for a in &autos {
            for b in &autos {
                let both = a.intersect(b, 1000).unwrap();
                for w in &words {
                    assert_eq!(run(&both, w), run(a, w) && run(b, w), "{w:?}");
                }
            }
        }
        assert!(autos[0].intersect(&autos[2], 1).is_none());
    }

    #[test]
    fn subsequence_with_sets() {
        let d = Dfa::subsequence(Origin::Query, &[set(&[1, 2]), set(&[3])]);
        assert!(run(&d, &[9, 2, 9, 3]));
        assert!(run(&d, &[1, 1, 3, 3]));
        assert!(!run(&d, &[3, 1]));
        assert!(d.silent_on(9) && !d.silent_on(1));
    }

    #[test]
    fn reliable_forbids_extra_occurrences() {
        let d = Dfa::reliable(Origin::Query, &[set(&[1]), set(&[2]), set(&[1])]);
        assert!(run(&d, &[1, 5, 2, 1]));
        assert!(!run(&d, &[1, 2, 2, 1]));
        assert!(!run(&d, &[1, 2]));
        assert!(!run(&d, &[1, 2, 1, 1]));
    }

    #[test]
    fn bursty_allows_unobserved_occurrences_between_bursts() {
        // Bursts [1, 2] and [1]: traced nodes {1, 2}.
        let d = Dfa::bursty(
            Origin::Query,
            &[vec![set(&[1]), set(&[2])], vec![set(&[1])]],
            1000,
        )
        .unwrap();
        assert!(run(&d, &[2, 1, 2, 2, 1]));
        assert!(
            run(&d, &[1, 1, 2, 1]),
            "the first 1 may be unobserved, before the burst"
        );
        assert!(!run(&d, &[1, 2]), "the second burst is missing");
        assert!(!run(&d, &[2, 1, 1]), "no 2 follows a burst-starting 1");
        assert!(run(&d, &[1, 2, 9, 1]));
        assert!(!run(&d, &[2, 2]));
    }

    #[test]
    fn not_all_is_deterministic_and_exact() {
        let d = Dfa::not_all(Origin::Query, &set(&[1, 2])).unwrap();
        assert_eq!(d.initial, vec![0]);
        assert!(run(&d, &[1, 1]));
        assert!(run(&d, &[]));
        assert!(!run(&d, &[2, 1]));
        let d = Dfa::not_all(Origin::Query, &set(&[1, 2, 3])).unwrap();
        assert_eq!(d.num_states(), 7);
        assert!(run(&d, &[1, 2, 9, 2, 1]));
        assert!(run(&d, &[3, 3, 1]));
        assert!(!run(&d, &[3, 2, 1]));
        let big: Vec<usize> = (0..=MAX_NOT_ALL).collect();
        assert!(Dfa::not_all(Origin::Query, &set(&big)).is_none());
    }

    #[test]
    fn initial_combinations_are_lazy() {
        let mut d = Dfa::not_all(Origin::Query, &set(&[1, 2])).unwrap();
        d.initial = vec![0, 1];
        // 2^200 combinations: taking three must not enumerate them all.
        let autos = vec![d; 200];
        let got: Vec<Vec<u32>> = initial_combinations(&[7], &autos).take(3).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0][0], 7);
        assert_eq!(got[1][200], 1);
        assert_eq!(got[2][199], 1);
    }
}
