//! Shared invocations ("lean" exploration, see the module docs of
//! `product`): a callee entered once per tuple of its non-reset
//! automata, the others as maps ([`Sym`]).

use super::*;

/// An automaton's state in a path edge's tuple that stands for its state
/// on entry to the invocation (the caller's at the call site, filled back
/// in on return): never a DFA state. `HOLE - j` (`j` < [`MAX_SYM`]) stands
/// for transformation `j` of a [`Sym`] applied to it.
pub(super) const HOLE: u32 = DEAD - 1;

/// Most transformations a [`Sym`] may have.
pub(super) const MAX_SYM: usize = 64;

/// Whether a tuple's state is a hole (the entry state, or a
/// transformation of it).
#[inline]
pub(super) fn is_hole(q: u32) -> bool {
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
pub(super) struct Sym {
    /// The transformations that are not constant, `maps[0]` the identity.
    pub(super) maps: Vec<Vec<u32>>,
    pub(super) n_classes: usize,
    /// `step[j * n_classes + c]`: transformation `j` then class `c`,
    /// encoded as a tuple's state (a state, or `HOLE - j'`).
    pub(super) step: Vec<u32>,
    /// `after[k * maps.len() + j]`: transformation `k` then `j`, encoded.
    pub(super) after: Vec<u32>,
}

impl Sym {
    /// `None` when `a` has an order on its states (its numbers matter),
    /// rejects on some transition, moves on nodes it does not mention, or
    /// has more than [`MAX_SYM`] transformations that are not constant.
    pub(super) fn of(a: &Dfa) -> Option<Sym> {
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
    pub(super) fn next(&self, q: u32, c: u32) -> u32 {
        self.step[(HOLE - q) as usize * self.n_classes + c as usize]
    }

    /// Hole `q` of a callee, given the caller's state `before` at the
    /// call (itself a hole when the caller is an invocation too).
    pub(super) fn fill(&self, q: u32, before: u32) -> u32 {
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
pub(super) fn encode(
    to: &[u32],
    maps: &mut Vec<Vec<u32>>,
    index: &mut HashMap<Vec<u32>, u32>,
) -> Option<u32> {
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

/// Per function, the automata of `autos` whose states a context of it
/// keeps (bit `i`: automaton `i`; at most 64 automata); the others are
/// [`HOLE`] on entry (see the module docs, "Shared invocations"). Kept:
/// an automaton that is not a reset automaton ([`Dfa::resets`]) and that
/// some node of the function or of one it may call (transitively) is not
/// silent on; every automaton where such a function may leave by a jump
/// or return to another function.
pub(super) fn kept_by_contexts(g: &Icfg, autos: &[&Dfa], sym: &[Option<Sym>]) -> Vec<u64> {
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
    let calls = g.call_graph();
    for (f, d) in direct.iter_mut().enumerate() {
        if calls.leaves[f] {
            *d = all;
        }
    }
    let (cg, sccs) = (&calls.callees, &calls.sccs);
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
