//! The observations a context-sensitive search tracks as bits of its
//! tuples ([`Seen`]), and the antichains of states they allow
//! ([`Group`]).

use crate::fxhash::FxHashMap as HashMap;

/// Relaxed observations tracked as bits of the tuple: "n ran" (its bit
/// set at the end) and "not all of S ran" (never all of S's bits). Both
/// only record which nodes were seen, so the effect of a completed call is
/// the union of the caller's and the callee's bits, and a context needs
/// no caller bits: contexts do not multiply with them.
#[derive(Default)]
pub(super) struct Seen {
    /// Bit of each tracked node.
    pub(super) bit: HashMap<u32, usize>,
    /// Words of bits in a tuple.
    pub(super) words: usize,
    /// Bits that must be set at the end.
    pub(super) ran: Vec<usize>,
    /// Sets of bits that must never be all set.
    pub(super) not_all: Vec<Vec<usize>>,
    /// Per word, the bits of "ran" observations only (more is better).
    pub(super) up: Vec<u32>,
    /// Per word, the bits of "not all" sets only (fewer is better). Bits
    /// in neither mask are in both kinds and must be equal to compare.
    pub(super) down: Vec<u32>,
}

impl Seen {
    pub(super) fn new(tracked: &[(&[u32], bool)]) -> Seen {
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
        s.up = vec![0; s.words];
        s.down = vec![0; s.words];
        for &b in &s.ran {
            s.up[b / 32] |= 1 << (b % 32);
        }
        for &b in s.not_all.iter().flatten() {
            s.down[b / 32] |= 1 << (b % 32);
        }
        for (u, d) in s.up.iter_mut().zip(s.down.iter_mut()) {
            let both = *u & *d;
            *u &= !both;
            *d &= !both;
        }
        s
    }

    /// Whether bits `a` subsume bits `b`: every continuation that
    /// completes `b` without breaking it completes `a` too. "Ran" bits
    /// only help (`a` has all of `b`'s), "not all" bits only hurt (`b` has
    /// all of `a`'s): steps and returns only add bits, acceptance is
    /// upward closed in the first and breaking upward closed in the
    /// second.
    pub(super) fn subsumes(&self, a: &[u32], b: &[u32]) -> bool {
        a.iter()
            .zip(b)
            .zip(self.up.iter().zip(&self.down))
            .all(|((&a, &b), (&up, &down))| {
                let eq = !(up | down);
                b & up & !a == 0 && a & down & !b == 0 && (a ^ b) & eq == 0
            })
    }

    pub(super) fn has(bits: &[u32], b: usize) -> bool {
        bits[b / 32] & (1 << (b % 32)) != 0
    }

    /// Some "not all" set is all seen.
    pub(super) fn broken(&self, bits: &[u32]) -> bool {
        self.not_all
            .iter()
            .any(|set| set.iter().all(|&b| Seen::has(bits, b)))
    }

    /// Every "ran" bit is set.
    pub(super) fn complete(&self, bits: &[u32]) -> bool {
        self.ran.iter().all(|&b| Seen::has(bits, b))
    }
}

/// Live states of one place (same automaton states): their ids, and
/// their bits inline (`Seen::words` per state) for a fast scan.
pub(super) struct Group<S> {
    pub(super) ids: Vec<S>,
    pub(super) bits: Vec<u32>,
}

impl<S> Default for Group<S> {
    fn default() -> Self {
        Group {
            ids: Vec::new(),
            bits: Vec::new(),
        }
    }
}
