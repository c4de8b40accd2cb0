//! Path sensitivity from the program's own branches (issue 36, item 3):
//! the same unmodified variable, tested twice, goes the same way.
//!
//! A variable the front-end keeps ([`VarMap`]: only direct stores write
//! it) and whose value the report does not give is split into the
//! classes of values its branch tests tell apart. After the last write of
//! the variable on an execution, its value lies in one class, so every
//! test after that write goes where that class sends it: one of the
//! classes' [`LastWrite`] constraints holds ([`Cases`]). The stores of
//! constants of other classes are that class's `bad` writes, and a
//! global whose initial value is of another class needs a write. The
//! staged recovery keeps what every class that can hold says
//! (`postmortem_core::staged`).
//!
//! The classes must cover every value, or a class left out would rule
//! out executions that happen. A test compares the loaded value, widened
//! by sign or zero extensions (after at most one leading truncation, the
//! same for every test of the variable), with a constant. On each half of
//! the loaded value's range (the sign bit clear, then set) the compared
//! value grows with the loaded one, so a comparison changes its outcome
//! only next to the constant's one preimage or at the ends of the halves:
//! each combination of outcomes is a union of intervals starting at such
//! points, so the points ([`crate::vars::boundary_points`], as the witness
//! check decides its conjunctions) meet every combination. Variables
//! whose tests load different widths or convert otherwise are left out.
//!
//! Left out as well, as for values: a local of a function that may be
//! active twice at once (a nested activation's stores are to another
//! variable, but its tests would be read as the outer one's), and a
//! variable stored where the program crashed (the crash may have come
//! before or after that store).

use crate::vars::{Cast, Test, Var, VarMap, VarScope, Written};
use postmortem_core::report::{BranchTest, Cases, LastWrite, NodeSet};
use postmortem_core::{Icfg, NodeId};

/// At most this many classes per variable (each is a stage).
pub const MAX_CLASSES: usize = 8;

/// At most this many tests per variable (the first ones; leaving tests
/// out is sound).
const MAX_TESTS: usize = 32;

/// The cases of every variable of `map` that some branch tests, except
/// those in `known` (indices in [`VarMap::vars`]: variables whose value
/// the report gives), and those the module docs leave out. `crash` is the
/// report's crash set: a test whose branch may be where the program
/// stopped is left out (its block may have stopped before the branch).
pub fn cases(g: &Icfg, map: &VarMap, known: &[usize], crash: Option<&NodeSet>) -> Vec<Cases> {
    let recursive = recursive_functions(g);
    let mut out = Vec::new();
    for (i, v) in map.vars.iter().enumerate() {
        if v.tests.is_empty() || known.contains(&i) {
            continue;
        }
        if let Some(c) = crash {
            if v.writes.iter().any(|&(x, _)| c.contains(node(x))) {
                continue;
            }
        }
        if let VarScope::Local { entry, .. } = v.scope {
            if (entry as usize) >= g.num_nodes() || recursive[g.func_of(node(entry)).index()] {
                continue;
            }
        }
        if let Some(c) = of_var(v, crash) {
            out.push(c);
        }
    }
    out
}

/// For each function, whether it may call itself (a cycle of the call
/// graph through it: every call edge counts, so more functions than
/// [`crate::vars::may_reenter`] finds, which is what the cases need).
/// One pass over the graph; `may_reenter` walks it once per function
/// (SQLite: seconds).
fn recursive_functions(g: &Icfg) -> Vec<bool> {
    use postmortem_core::algo::Sccs;
    use postmortem_core::graph::Csr;
    use postmortem_core::EdgeKind;
    let nf = g.functions().len();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut out = vec![false; nf];
    for n in g.nodes() {
        let f = g.func_of(n).index();
        for (t, k) in g.succs(n) {
            if k == EdgeKind::Call {
                let h = g.func_of(t).index();
                out[f] |= f == h;
                edges.push((f as u32, h as u32));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let csr = Csr::from_edges(nf, &edges);
    let sccs: Sccs = Sccs::compute(&csr, |_| true);
    for c in sccs.ids() {
        let members = sccs.members_of(c);
        if members.len() > 1 {
            for &m in members {
                out[m as usize] = true;
            }
        }
    }
    out
}

fn node(x: u32) -> NodeId {
    NodeId::new(x as usize)
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The cases of one variable, `None` when it has none worth a stage or
/// its tests cannot be split soundly (module docs).
fn of_var(v: &Var, crash: Option<&NodeSet>) -> Option<Cases> {
    let mut tests: Vec<&Test> = Vec::new();
    for t in &v.tests {
        let b = node(t.branch);
        if crash.is_some_and(|c| c.contains(b)) || tests.iter().any(|u| u.branch == t.branch) {
            continue;
        }
        if tests.len() == MAX_TESTS {
            break;
        }
        tests.push(t);
    }
    if tests.is_empty() || v.writes.is_empty() && matches!(v.scope, VarScope::Local { .. }) {
        return None;
    }
    let bits = domain(&tests)?;
    let outcome = |x: u64| -> Vec<u32> { tests.iter().map(|t| t.target(x)).collect() };
    // One value per class, every class (module docs).
    let mut classes: Vec<(Vec<u32>, u64)> = Vec::new();
    for x in samples(&tests, bits) {
        let o = outcome(x);
        if !classes.iter().any(|(c, _)| *c == o) {
            classes.push((o, x));
        }
    }
    // The classes its value can be in: those of the constants stored and
    // of a global's initial value, unless a store leaves a value not
    // known or the variable starts unset (a local's activation, a global
    // whose initial value is not a constant).
    let init = match v.scope {
        VarScope::Global { init, .. } => init,
        VarScope::Local { .. } => None,
    };
    let only_constants = init.is_some()
        && v.writes
            .iter()
            .all(|&(_, w)| matches!(w, Written::Const(_)));
    if only_constants {
        let possible: Vec<Vec<u32>> = v
            .writes
            .iter()
            .filter_map(|&(_, w)| match w {
                Written::Const(k) => Some(k),
                _ => None,
            })
            .chain(init)
            .map(outcome)
            .collect();
        classes.retain(|(c, _)| possible.contains(c));
    }
    if classes.len() > MAX_CLASSES || classes.is_empty() {
        return None;
    }
    let start = match v.scope {
        VarScope::Local { entry, .. } => Some(entry),
        VarScope::Global { .. } => None,
    };
    let writes: Vec<NodeId> = v
        .writes
        .iter()
        .map(|w| w.0)
        .chain(start)
        .map(node)
        .collect();
    let writes = NodeSet::new(writes)?;
    let n = classes.len();
    let each = classes
        .iter()
        .enumerate()
        .map(|(k, (class, x))| {
            let mut bad: Vec<NodeId> = v
                .writes
                .iter()
                .filter(|&&(_, w)| matches!(w, Written::Const(c) if outcome(c) != *class))
                .map(|&(x, _)| node(x))
                .collect();
            bad.sort_unstable();
            bad.dedup();
            LastWrite {
                writes: writes.clone(),
                bad,
                need: init.is_some_and(|i| outcome(i) != *class),
                what: format!("{}: case {} of {n} (like {x})", v.name, k + 1),
                tests: tests
                    .iter()
                    .zip(class)
                    .map(|(t, &taken)| BranchTest {
                        branch: node(t.branch),
                        taken: node(taken),
                        others: t
                            .successors()
                            .into_iter()
                            .filter(|&s| s != taken)
                            .map(node)
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    Some(Cases {
        what: v.name.clone(),
        each,
    })
}

/// The width of the value every test compares, after the truncation
/// they share (module docs); `None` when the tests load different widths
/// or convert otherwise.
fn domain(tests: &[&Test]) -> Option<u32> {
    let mut out: Option<(u32, u32)> = None;
    for t in tests {
        let (bits, rest) = match t.casts.split_first() {
            Some((Cast::Trunc(to), rest)) => (*to, rest),
            _ => (t.load_bits, t.casts.as_slice()),
        };
        if bits == 0 || bits > 64 || bits > t.load_bits {
            return None;
        }
        if rest.iter().any(|c| matches!(c, Cast::Trunc(_))) {
            return None;
        }
        match out {
            None => out = Some((t.load_bits, bits)),
            Some(o) if o == (t.load_bits, bits) => {}
            Some(_) => return None,
        }
    }
    out.map(|(_, bits)| bits)
}

/// Values of `bits` bits that meet every combination of the tests'
/// outcomes: [`crate::vars::boundary_points`] of their constants, cut to
/// the width (module docs).
fn samples(tests: &[&Test], bits: u32) -> Vec<u64> {
    let max = mask(bits);
    let mut out: Vec<u64> =
        crate::vars::boundary_points(tests.iter().flat_map(|t| t.constants()), max)
            .into_iter()
            .map(|x| x & max)
            .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vars::Pred;

    fn cmp(pred: Pred, constant: u64, load_bits: u32, casts: Vec<Cast>) -> Test {
        Test::cmp(load_bits, casts, pred, constant, false)
    }

    /// Every combination of outcomes that some value of the domain gives
    /// is among the samples' (brute force over 8-bit domains, with sign
    /// and zero extensions, every predicate, constants all over).
    #[test]
    fn the_samples_meet_every_combination_of_outcomes() {
        let preds = [
            Pred::Eq,
            Pred::Ne,
            Pred::Ugt,
            Pred::Uge,
            Pred::Ult,
            Pred::Ule,
            Pred::Sgt,
            Pred::Sge,
            Pred::Slt,
            Pred::Sle,
        ];
        let casts = [
            vec![],
            vec![Cast::Sext(32)],
            vec![Cast::Zext(32)],
            vec![Cast::Sext(16), Cast::Zext(64)],
        ];
        let constants = [
            0u64,
            1,
            5,
            127,
            128,
            200,
            255,
            256,
            1000,
            u64::MAX,
            u64::MAX - 3,
            0xffff_ff80,
        ];
        let mut checked = 0;
        for (i, &p1) in preds.iter().enumerate() {
            for &p2 in &preds[i..] {
                for c1 in &constants {
                    for c2 in &constants {
                        for cs in &casts {
                            let a = cmp(p1, *c1, 8, cs.clone());
                            let b = cmp(p2, *c2, 8, cs.clone());
                            let tests = [&a, &b];
                            let bits = domain(&tests).unwrap();
                            let got: Vec<(u32, u32)> = samples(&tests, bits)
                                .into_iter()
                                .map(|x| (a.target(x), b.target(x)))
                                .collect();
                            for x in 0..=255u64 {
                                let o = (a.target(x), b.target(x));
                                assert!(
                                    got.contains(&o),
                                    "{p1:?} {c1} / {p2:?} {c2} / {cs:?}: value {x} gives {o:?}, no sample does"
                                );
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    /// A truncation to one bit (a `bool` branched on) splits by the low
    /// bit; tests that load different widths are not split.
    #[test]
    fn truncations_and_mixed_widths() {
        let a = cmp(Pred::Ne, 0, 8, vec![Cast::Trunc(1)]);
        let b = cmp(Pred::Eq, 1, 8, vec![Cast::Trunc(1)]);
        let bits = domain(&[&a, &b]).unwrap();
        assert_eq!(bits, 1);
        let got: Vec<u32> = samples(&[&a, &b], bits)
            .into_iter()
            .map(|x| a.target(x))
            .collect();
        assert!(got.contains(&1) && got.contains(&2));
        let c = cmp(Pred::Eq, 1, 32, vec![]);
        assert_eq!(domain(&[&a, &c]), None);
        let d = cmp(Pred::Eq, 1, 32, vec![Cast::Zext(64), Cast::Trunc(8)]);
        assert_eq!(domain(&[&d]), None);
    }
}
