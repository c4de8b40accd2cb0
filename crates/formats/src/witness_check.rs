//! Is a witness a run the program's data allows? (issue 36, step 4: a
//! witness check.) A witness is a path the control flow allows and the
//! failure data does not rule out, as the solver checked it; the data
//! the solver did not check (what a store wrote, what a function
//! returned, the values the core holds) may rule it out. This walks the
//! path once, as a small symbolic execution over the front-end's
//! variables ([`VarMap`]):
//!
//! * a store of a constant makes its variable that constant; a store of
//!   another variable's value (`Origin::Copy`) copies what is known of
//!   it; a store of a call's result (`Origin::Call`) is the constant the
//!   callee's return on the path stored, when it was one; a store of an
//!   address is "not 0"; any other store, and the entry of a local's
//!   function (a new activation), forget the variable;
//! * a branch that tests a variable ([`Test`]) and goes to the successor
//!   that is the next node of the path adds a fact: "the value sends the
//!   branch there";
//! * at the end, a variable whose value the core holds (the crash
//!   frame's locals, globals) must have that value.
//!
//! The facts about a variable since its last store are a conjunction of
//! comparisons with constants (through `sext`/`zext`: a test with a
//! truncation is left out). Such a conjunction is satisfiable iff one of
//! finitely many candidates satisfies it: each constant, its neighbours,
//! 0, 1 and the extremes of the variable's width (the set it admits is a
//! union of intervals in the signed order, each starting at such a
//! point). So "infeasible" is exact for what is checked: the path
//! cannot run with those values, whatever the rest of the data.
//! Feasibility is not claimed: the check does not see memory, input or
//! arithmetic, so it says "no contradiction found".
//!
//! Left out, so that no contradiction is claimed that a real run could
//! avoid: locals of functions that may be active twice at once
//! (recursion), and globals in programs with code that runs
//! asynchronously (a handler or a thread may store off the path).

use crate::vars::{Origin, Test, VarMap, VarScope, Written};
use postmortem_core::{Icfg, NodeId};
use std::collections::HashMap;

/// What the check found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The path cannot run: why, in one sentence.
    Infeasible {
        /// ``` `r` = -1 (the store at kv.c:31, the result of the return at
        /// kv.c:12), but the branch at kv.c:33 went the way it goes only
        /// with another value ```.
        reason: String,
    },
    /// Nothing the check sees rules it out.
    NoContradiction {
        /// How many branch tests of the path it checked.
        tests: usize,
    },
}

impl Verdict {
    /// One line for people.
    pub fn line(&self) -> String {
        match self {
            Verdict::Infeasible { reason } => {
                format!("infeasible: {reason}")
            }
            Verdict::NoContradiction { tests } => format!(
                "no contradiction found among its {tests} branch tests of variables, the constants stored and returned on it, and the values the core holds (not a proof that it can run)"
            ),
        }
    }
}

/// What is known of a variable since its last store.
#[derive(Clone, Debug)]
struct Known {
    /// The facts, each with where it came from.
    facts: Vec<(Fact, String)>,
}

#[derive(Clone, Debug)]
enum Fact {
    /// The value is this constant (at the variable's width).
    Is(u64),
    /// The value is not 0.
    NotZero,
    /// The value sends test `test` of the variable to the successor
    /// whose first node is `to`.
    Sends { var: usize, test: usize, to: u32 },
}

/// A variable's value at the crash, read from the core.
#[derive(Clone, Copy, Debug)]
pub struct AtCrash {
    /// The variable (index in [`VarMap::vars`]).
    pub var: usize,
    /// Its value.
    pub value: u64,
}

/// Checks the witness `path` against the data of `map` and the values
/// the core holds at the crash (`at_crash`: the crash frame's locals and
/// globals).
pub fn check(g: &Icfg, map: &VarMap, path: &[NodeId], at_crash: &[AtCrash]) -> Verdict {
    let async_code = !g.async_functions().is_empty();
    let usable: Vec<bool> = map
        .vars
        .iter()
        .map(|v| match &v.scope {
            VarScope::Global { .. } => !async_code,
            VarScope::Local { entry, .. } => {
                !crate::vars::may_reenter(g, NodeId::new(*entry as usize))
            }
        })
        .collect();
    // Per node: the writes (var, what it leaves), the tests (var, test).
    let mut writes: HashMap<u32, Vec<(usize, Written)>> = HashMap::new();
    let mut tests: HashMap<u32, Vec<(usize, usize)>> = HashMap::new();
    let mut entries: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, v) in map.vars.iter().enumerate() {
        if !usable[i] {
            continue;
        }
        for &(n, w) in &v.writes {
            writes.entry(n).or_default().push((i, w));
        }
        for (k, t) in v.tests.iter().enumerate() {
            if t.casts
                .iter()
                .all(|c| !matches!(c, crate::vars::Cast::Trunc(_)))
            {
                tests.entry(t.branch).or_default().push((i, k));
            }
        }
        if let VarScope::Local { entry, .. } = v.scope {
            entries.entry(entry).or_default().push(i);
        }
    }
    // Each function's return nodes and what they return.
    let mut returns: HashMap<u32, (&str, Written)> = HashMap::new();
    for (f, rs) in &map.returns {
        for r in rs {
            returns.insert(r.node, (f.as_str(), r.written));
        }
    }
    let mut known: Vec<Known> = vec![Known { facts: Vec::new() }; map.vars.len()];
    let mut returned: HashMap<&str, (Written, NodeId)> = HashMap::new();
    let mut checked = 0;
    let at = |n: NodeId| crate::vars::where_is(g, n);
    for (i, &n) in path.iter().enumerate() {
        let id = n.as_u32();
        for &v in entries.get(&id).into_iter().flatten() {
            known[v].facts.clear();
        }
        if let Some(&(f, w)) = returns.get(&id) {
            returned.insert(f, (w, n));
        }
        for &(v, w) in writes.get(&id).into_iter().flatten() {
            let origin = map.vars[v]
                .from
                .iter()
                .find(|(x, _)| *x == id)
                .map(|(_, o)| o);
            let var = &map.vars[v];
            let shown = |c: u64| {
                if var.pointer {
                    format!("{c:#x}")
                } else {
                    crate::vars::signed(c, 8 * var.bytes).to_string()
                }
            };
            let store = format!("the store at {}", at(n));
            known[v].facts = match (w, origin) {
                (Written::Const(c), _) => vec![(Fact::Is(c), format!("{store} left {}", shown(c)))],
                (Written::NonNull, _) => vec![(Fact::NotZero, format!("{store} left an address"))],
                (Written::Unknown, Some(Origin::Call(f))) => match returned.get(f.as_str()) {
                    Some(&(Written::Const(c), r)) => vec![(
                        Fact::Is(c),
                        format!(
                            "{store} left {}, the result of `{f}` from the return at {}",
                            shown(c),
                            at(r)
                        ),
                    )],
                    Some(&(Written::NonNull, r)) => vec![(
                        Fact::NotZero,
                        format!(
                            "{store} left an address, the result of `{f}` from the return at {}",
                            at(r)
                        ),
                    )],
                    _ => Vec::new(),
                },
                (Written::Unknown, Some(Origin::Copy(u)))
                    if (*u as usize) < map.vars.len()
                        && usable[*u as usize]
                        && map.vars[*u as usize].bytes == map.vars[v].bytes =>
                {
                    // What is known of `u` holds of the copy, as facts
                    // about the same value.
                    known[*u as usize]
                        .facts
                        .iter()
                        .map(|(f, why)| (f.clone(), format!("{store} copied what {why}")))
                        .collect()
                }
                _ => Vec::new(),
            };
        }
        let Some(&next) = path.get(i + 1) else {
            continue;
        };
        for &(v, k) in tests.get(&id).into_iter().flatten() {
            let t = &map.vars[v].tests[k];
            if !t.successors().contains(&next.as_u32()) {
                continue;
            }
            checked += 1;
            known[v].facts.push((
                Fact::Sends {
                    var: v,
                    test: k,
                    to: next.as_u32(),
                },
                format!("the branch at {} went to {}", at(n), at(next)),
            ));
            if !satisfiable(map, v, &known[v].facts, None) {
                return Verdict::Infeasible {
                    reason: contradiction(map, v, &known[v].facts, None),
                };
            }
        }
    }
    for c in at_crash {
        if c.var >= map.vars.len() || !usable[c.var] {
            continue;
        }
        if !satisfiable(map, c.var, &known[c.var].facts, Some(c.value)) {
            return Verdict::Infeasible {
                reason: contradiction(map, c.var, &known[c.var].facts, Some(c.value)),
            };
        }
    }
    Verdict::NoContradiction { tests: checked }
}

/// The mask of a variable's width.
fn mask(bytes: u32) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bytes)) - 1
    }
}

fn holds(map: &VarMap, fact: &Fact, value: u64, m: u64) -> bool {
    match *fact {
        Fact::Is(c) => c & m == value & m,
        Fact::NotZero => value & m != 0,
        Fact::Sends { var, test, to } => map.vars[var].tests[test].target(value & m) == to,
    }
}

/// Whether some value satisfies every fact about variable `v` (and is
/// `value`, when given): see the module docs for why the candidates
/// suffice.
fn satisfiable(map: &VarMap, v: usize, facts: &[(Fact, String)], value: Option<u64>) -> bool {
    let m = mask(map.vars[v].bytes);
    let all = |x: u64| facts.iter().all(|(f, _)| holds(map, f, x, m));
    if let Some(x) = value {
        return all(x);
    }
    let mut points: Vec<u64> = vec![0, 1, m, m >> 1, (m >> 1).wrapping_add(1)];
    for (f, _) in facts {
        let cs: Vec<u64> = match f {
            Fact::Is(c) => vec![*c],
            Fact::NotZero => vec![],
            Fact::Sends { var, test, .. } => constants(&map.vars[*var].tests[*test]),
        };
        for c in cs {
            points.extend([c, c.wrapping_add(1), c.wrapping_sub(1)]);
            // A constant compared after a sign extension, seen at the
            // variable's width.
            points.extend([c & m, c.wrapping_add(1) & m, c.wrapping_sub(1) & m]);
        }
    }
    points.into_iter().any(all)
}

/// The constants a test compares with.
fn constants(t: &Test) -> Vec<u64> {
    match &t.kind {
        crate::vars::TestKind::Cmp { constant, .. } => vec![*constant],
        crate::vars::TestKind::Switch { cases, .. } => cases.iter().map(|c| c.0).collect(),
    }
}

/// The sentence for an unsatisfiable set of facts: the first fact that
/// made it so, after the ones before it; or the core's value that none
/// of the values they allow is.
fn contradiction(map: &VarMap, v: usize, facts: &[(Fact, String)], value: Option<u64>) -> String {
    let var = &map.vars[v];
    let name = &var.name;
    let whys = |fs: &[(Fact, String)]| {
        fs.iter()
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>()
            .join(", then ")
    };
    if let Some(x) = value {
        if satisfiable(map, v, facts, None) {
            let x = if var.pointer {
                format!("{x:#x}")
            } else {
                crate::vars::signed(x, 8 * var.bytes).to_string()
            };
            return format!(
                "`{name}` holds {x} in the core, but after {} it cannot",
                whys(facts)
            );
        }
    }
    let k = (1..=facts.len())
        .find(|&k| !satisfiable(map, v, &facts[..k], None))
        .unwrap_or(facts.len());
    match k {
        0 => format!("`{name}` can hold no value"),
        1 => format!("`{name}`: {}, which no value allows", facts[0].1),
        _ => format!(
            "`{name}`: after {}, {}, which no value of `{name}` allows",
            whys(&facts[..k - 1]),
            facts[k - 1].1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vars::{Cast, Pred, TestKind, Var};

    /// A tiny deterministic generator (xorshift), so the test needs no
    /// crate and always checks the same cases.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[(self.next() % xs.len() as u64) as usize]
        }
    }

    fn var(bytes: u32, tests: Vec<Test>) -> Var {
        Var {
            name: "x".into(),
            scope: VarScope::Global {
                symbol: "x".into(),
                init: None,
            },
            offset: 0,
            bytes,
            pointer: false,
            writes: Vec::new(),
            tests,
            from: Vec::new(),
            reads: None,
        }
    }

    /// The candidates decide a conjunction of facts exactly: on 8- and
    /// 16-bit variables, with tests through sign and zero extensions,
    /// signed and unsigned predicates, switches, constants and "not 0",
    /// `satisfiable` agrees with trying every value of the width.
    #[test]
    fn the_candidates_decide_every_conjunction_exactly() {
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
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut sat, mut unsat) = (0, 0);
        for case in 0..3000 {
            let bytes = if case % 3 == 0 { 2 } else { 1 };
            let bits = 8 * bytes;
            let m = mask(bytes);
            let n_tests = 1 + rng.next() % 4;
            let mut tests = Vec::new();
            for k in 0..n_tests {
                let casts = match rng.next() % 3 {
                    0 => vec![],
                    1 => vec![Cast::Sext(32)],
                    _ => vec![Cast::Zext(64)],
                };
                let width = match casts.first() {
                    Some(Cast::Sext(w)) | Some(Cast::Zext(w)) => *w,
                    _ => bits,
                };
                let wm = if width >= 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                // Constants near the interesting points, at the compared
                // width.
                let near = [0u64, 1, 2, m >> 1, (m >> 1) + 1, m, wm, wm - 1, 5, 100];
                let c = rng.pick(&near).wrapping_add(rng.next() % 3).wrapping_sub(1) & wm;
                let kind = if rng.next().is_multiple_of(5) {
                    TestKind::Switch {
                        cases: vec![(c, 10), (rng.pick(&near) & wm, 11)],
                        default: 12,
                    }
                } else {
                    TestKind::Cmp {
                        pred: rng.pick(&preds),
                        constant: c,
                        swapped: rng.next().is_multiple_of(2),
                        then_node: 10,
                        else_node: 11,
                    }
                };
                tests.push(Test {
                    branch: k as u32,
                    load_bits: bits,
                    casts,
                    kind,
                });
            }
            let map = VarMap {
                vars: vec![var(bytes, tests.clone())],
                ..VarMap::default()
            };
            let mut facts: Vec<(Fact, String)> = tests
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let succ = t.successors();
                    let to = succ[(rng.next() % succ.len() as u64) as usize];
                    (
                        Fact::Sends {
                            var: 0,
                            test: k,
                            to,
                        },
                        String::new(),
                    )
                })
                .collect();
            match rng.next() % 6 {
                0 => facts.push((Fact::NotZero, String::new())),
                1 => facts.push((Fact::Is(rng.next() & m), String::new())),
                _ => {}
            }
            let brute = (0..=m).any(|x| facts.iter().all(|(f, _)| holds(&map, f, x, m)));
            assert_eq!(
                satisfiable(&map, 0, &facts, None),
                brute,
                "case {case}: {tests:?} {facts:?}"
            );
            if brute {
                sat += 1;
            } else {
                unsat += 1;
            }
        }
        // Both answers were exercised.
        assert!(sat > 300 && unsat > 300, "{sat} satisfiable, {unsat} not");
    }
}
