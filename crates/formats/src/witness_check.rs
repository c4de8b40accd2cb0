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
//!
//! An infeasible verdict carries the events of the path that contradict
//! each other ([`Chain`]: the store, the return it stored, the branches,
//! each with what would break it); [`exclusion`] is the automaton of the
//! paths without any of them, a query under which the solver finds
//! another witness (the HTML report's example path is sought so, a few
//! times).

use crate::vars::{Origin, VarMap, VarScope, Written};
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
        /// The events of the path that contradict each other, when they
        /// are all on it (not a value of the core): any path with them
        /// in this order cannot run ([`exclusion`]).
        #[serde(skip)]
        chain: Option<Chain>,
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
            Verdict::Infeasible { reason, .. } => {
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
    /// The events of the path that made each fact, with the nodes that
    /// break each one's hold before the next (a store of the variable);
    /// None when a fact came along a way a chain does not follow (a
    /// copy of another variable).
    events: Option<Vec<(Event, Vec<u32>)>>,
}

/// One event of a [`Chain`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The path passes this node.
    Node(u32),
    /// The path goes from this branch straight to this node.
    Took(u32, u32),
}

/// Events of a path that cannot all happen in this order, each with the
/// nodes that, passed after it and before the next, break the chain (a
/// store of the variable, another return of the function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    /// The events, in order, each with the nodes that break it.
    pub events: Vec<(Event, Vec<u32>)>,
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
    let mut known: Vec<Known> = vec![
        Known {
            facts: Vec::new(),
            events: Some(Vec::new()),
        };
        map.vars.len()
    ];
    // What breaks a fact about each variable: its stores, and for a
    // local its function's entry (a new activation).
    let clears: Vec<Vec<u32>> = map
        .vars
        .iter()
        .map(|v| {
            let mut c: Vec<u32> = v.writes.iter().map(|w| w.0).collect();
            if let VarScope::Local { entry, .. } = v.scope {
                c.push(entry);
            }
            c
        })
        .collect();
    // Each function's return nodes.
    let mut returns_of: HashMap<&str, Vec<u32>> = HashMap::new();
    for (f, rs) in &map.returns {
        returns_of.insert(f.as_str(), rs.iter().map(|r| r.node).collect());
    }
    let mut returned: HashMap<&str, (Written, NodeId)> = HashMap::new();
    let mut checked = 0;
    let at = |n: NodeId| crate::vars::where_is(g, n);
    for (i, &n) in path.iter().enumerate() {
        let id = n.as_u32();
        for &v in entries.get(&id).into_iter().flatten() {
            known[v].facts.clear();
            known[v].events = Some(Vec::new());
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
            let wrote = (Event::Node(id), clears[v].clone());
            // A value known from a copy is not followed by a chain; a
            // value not known at all starts an empty one.
            known[v].events = match (w, origin) {
                (Written::Const(_) | Written::NonNull, _) => Some(vec![wrote]),
                (Written::Unknown, Some(Origin::Call(f))) => match returned.get(f.as_str()) {
                    Some(&(Written::Const(_) | Written::NonNull, r)) => {
                        let others = returns_of.get(f.as_str()).cloned().unwrap_or_default();
                        Some(vec![(Event::Node(r.as_u32()), others), wrote])
                    }
                    _ => Some(Vec::new()),
                },
                (Written::Unknown, Some(Origin::Copy(u)))
                    if known.get(*u as usize).is_some_and(|k| !k.facts.is_empty()) =>
                {
                    None
                }
                _ => Some(Vec::new()),
            };
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
            if let Some(e) = known[v].events.as_mut() {
                e.push((Event::Took(id, next.as_u32()), clears[v].clone()));
            }
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
                    chain: known[v].events.clone().map(|events| Chain { events }),
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
                chain: None,
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
    let constants = facts.iter().flat_map(|(f, _)| match f {
        Fact::Is(c) => vec![*c],
        Fact::NotZero => vec![],
        Fact::Sends { var, test, .. } => map.vars[*var].tests[*test].constants(),
    });
    let points = crate::vars::boundary_points(constants, m);
    points.into_iter().any(all)
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

/// The automaton of the paths that contain none of `chains` (each a
/// [`Chain`] of an infeasible witness): a query under which the solver
/// finds another witness. Each chain is followed by its progress (how
/// many of its events the path has passed, in order, without a node that
/// breaks the last one since); a path that completes one is rejected.
/// Every such path cannot run, so no run is left out. `None` for no
/// chain or an empty one, or when the product would pass
/// `max_states`.
pub fn exclusion(chains: &[Chain], max_states: usize) -> Option<postmortem_core::automaton::Dfa> {
    use postmortem_core::automaton::{Dfa, DEAD};
    if chains.is_empty() || chains.iter().any(|c| c.events.is_empty()) {
        return None;
    }
    // The nodes any chain names, each a class of its own (0: the rest).
    let mut class: HashMap<u32, u32> = HashMap::new();
    for c in chains {
        for (e, breaks) in &c.events {
            let nodes: Vec<u32> = match *e {
                Event::Node(n) => vec![n],
                Event::Took(b, t) => vec![b, t],
            };
            for n in nodes.into_iter().chain(breaks.iter().copied()) {
                let k = class.len() as u32 + 1;
                class.entry(n).or_insert(k);
            }
        }
    }
    let n_classes = class.len() as u32 + 1;
    let node_of: HashMap<u32, u32> = class.iter().map(|(&n, &c)| (c, n)).collect();
    // Per chain: states 2p (p events passed) and 2p + 1 (the branch of
    // event p just passed, its target next).
    let sizes: Vec<u32> = chains.iter().map(|c| 2 * c.events.len() as u32).collect();
    let total = sizes
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s as usize))?;
    if total > max_states {
        return None;
    }
    let step_one = |c: &Chain, q: u32, node: Option<u32>| -> Option<u32> {
        let (p, pending) = ((q / 2) as usize, q % 2 == 1);
        let len = c.events.len();
        let Some(n) = node else {
            // A node no chain names: a pending branch went elsewhere.
            return Some(2 * p as u32);
        };
        if pending {
            if let Event::Took(_, t) = c.events[p].0 {
                if t == n {
                    return (p + 1 < len).then_some(2 * (p as u32 + 1));
                }
            }
        }
        let advance = |p: usize| -> Option<Option<u32>> {
            match c.events.get(p).map(|e| &e.0) {
                Some(Event::Node(m)) if *m == n => {
                    Some((p + 1 < len).then_some(2 * (p as u32 + 1)))
                }
                Some(Event::Took(b, _)) if *b == n => Some(Some(2 * p as u32 + 1)),
                _ => None,
            }
        };
        if let Some(next) = advance(p) {
            return next;
        }
        if p > 0 && c.events[p - 1].1.contains(&n) {
            // The chain broke: it may start again at this node.
            return advance(0).unwrap_or(Some(0));
        }
        Some(2 * p as u32)
    };
    let step = |q: u32, cl: u32| -> u32 {
        let node = node_of.get(&cl).copied();
        let mut rest = q as usize;
        let mut out = 0usize;
        let mut radix = 1usize;
        for (c, &size) in chains.iter().zip(&sizes) {
            let qi = (rest % size as usize) as u32;
            rest /= size as usize;
            match step_one(c, qi, node) {
                Some(next) => out += next as usize * radix,
                None => return DEAD,
            }
            radix *= size as usize;
        }
        out as u32
    };
    Some(Dfa::new(
        postmortem_core::Origin::Query,
        total as u32,
        vec![0],
        vec![true; total],
        class,
        n_classes,
        step,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vars::{Cast, Pred, Test, TestKind, Var};

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

    /// The exclusion automaton rejects exactly the paths that contain a
    /// chain's events in order with nothing that breaks them between: a
    /// store (node 1) then the branch at 2 straight to 3, broken by
    /// another store (5) or the store again; with a second chain (the
    /// branch at 7 straight to 8), the product rejects either.
    #[test]
    fn the_exclusion_rejects_the_paths_with_a_chain() {
        use postmortem_core::automaton::DEAD;
        let a = Chain {
            events: vec![
                (Event::Node(1), vec![1, 5]),
                (Event::Took(2, 3), vec![1, 5]),
            ],
        };
        let b = Chain {
            events: vec![(Event::Took(7, 8), vec![])],
        };
        let dfa = exclusion(&[a.clone(), b], 1 << 12).expect("small");
        let runs = |path: &[u32]| {
            let mut q = dfa.initial[0];
            for &v in path {
                q = dfa.step(q, v);
                if q == DEAD {
                    return false;
                }
            }
            dfa.accepting[q as usize]
        };
        for (path, ok) in [
            (&[0, 1, 4, 2, 3, 9][..], false),
            (&[0, 1, 5, 2, 3], true),
            (&[0, 1, 2, 4, 2, 3], false),
            (&[0, 2, 3, 1], true),
            (&[1, 1, 2, 3], false),
            (&[1, 5, 1, 2, 3], false),
            (&[1, 2, 4, 3], true),
            (&[7, 8], false),
            (&[7, 9, 8], true),
            (&[1, 7, 2, 3], false),
        ] {
            assert_eq!(runs(path), ok, "{path:?}");
        }
        assert!(exclusion(&[], 1 << 12).is_none());
        assert!(exclusion(&[Chain::default()], 1 << 12).is_none());
        assert!(exclusion(&[a.clone(), a.clone(), a], 8).is_none());
    }
}
