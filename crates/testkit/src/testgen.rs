//! Random small ICFGs and failure reports for differential tests (used by
//! this crate's tests and by the other crates' test suites). Deterministic
//! in a seed, so a failing case is reproduced by its seed.

pub use crate::rng::Rng;
use postmortem_core::icfg::{Icfg, IcfgBuilder, NodeKind, NodeSpec};
use postmortem_core::ids::NodeId;
use postmortem_core::report::{Frame, NodeSet, Report, Trace};

/// Shape of the random graphs.
#[derive(Clone, Debug)]
pub struct GraphShape {
    /// Maximum number of functions (at least 1: `main`).
    pub max_functions: usize,
    /// Maximum body nodes per function (besides entry and exit).
    pub max_body: usize,
}

impl Default for GraphShape {
    fn default() -> Self {
        GraphShape {
            max_functions: 3,
            max_body: 4,
        }
    }
}

/// A random ICFG with calls, recursion, loops and library calls. Node `i`
/// gets input id `"v<i>"`.
pub fn random_icfg(rng: &mut Rng, shape: &GraphShape) -> Icfg {
    random_builder(rng, shape)
        .0
        .build()
        .expect("random graph builds")
}

/// A random ICFG as [`random_icfg`] makes, plus non-local jumps
/// (`longjmp`): flow edges from a few nodes to nodes of other functions.
pub fn random_icfg_with_jumps(rng: &mut Rng, shape: &GraphShape) -> Icfg {
    let (mut b, funcs_nodes) = random_builder(rng, shape);
    if funcs_nodes.len() > 1 {
        for _ in 0..1 + rng.below(2) {
            let fa = rng.below(funcs_nodes.len());
            let mut fb = rng.below(funcs_nodes.len());
            if fb == fa {
                fb = (fb + 1) % funcs_nodes.len();
            }
            let (a, c) = (&funcs_nodes[fa], &funcs_nodes[fb]);
            b.add_flow_edge(a[rng.below(a.len())], c[rng.below(c.len())]);
        }
    }
    b.build().expect("random graph builds")
}

/// A random ICFG as [`random_icfg`] makes, with about `percent` % of its
/// call sites tail-marked (they may be sibling calls,
/// [`Icfg::tail_calls`]).
pub fn random_icfg_with_tail_calls(rng: &mut Rng, shape: &GraphShape, percent: u32) -> Icfg {
    let (mut b, bodies) = random_builder(rng, shape);
    for body in &bodies {
        for &n in body {
            if b.kind_of(n) == NodeKind::CallSite && rng.chance(percent) {
                b.mark_tail_call(n);
            }
        }
    }
    b.build().expect("random graph builds")
}

/// The builder of [`random_icfg`], and the body nodes of each function.
fn random_builder(rng: &mut Rng, shape: &GraphShape) -> (IcfgBuilder, Vec<Vec<NodeId>>) {
    let nf = 1 + rng.below(shape.max_functions.max(1));
    let mut b = IcfgBuilder::new();
    let mut funcs = Vec::new();
    let mut count = 0usize;
    let mut next_id = |b: &mut IcfgBuilder, kind, f| {
        let id = format!("v{count}");
        count += 1;
        b.add_node(NodeSpec {
            ext_id: &id,
            kind,
            func: f,
            label: &id,
            lines: &[count as u32],
        })
        .expect("fresh id")
    };
    // (entry, exit, body)
    let mut parts: Vec<(NodeId, NodeId, Vec<NodeId>)> = Vec::new();
    for fi in 0..nf {
        let name = if fi == 0 {
            "main".to_string()
        } else {
            format!("f{fi}")
        };
        let f = b.function(&name);
        b.set_function_file(f, if fi % 2 == 0 { "a.c" } else { "b.c" });
        funcs.push(f);
        let entry = next_id(&mut b, NodeKind::Entry, f);
        let nb = 1 + rng.below(shape.max_body.max(1));
        let body: Vec<NodeId> = (0..nb)
            .map(|_| {
                let kind = if nf > 1 && rng.chance(35) {
                    NodeKind::CallSite
                } else {
                    NodeKind::Statement
                };
                next_id(&mut b, kind, f)
            })
            .collect();
        let exit = next_id(&mut b, NodeKind::Exit, f);
        parts.push((entry, exit, body));
    }
    for (entry, exit, body) in parts.iter() {
        // A spine entry -> body... -> exit, plus random extra edges.
        b.add_flow_edge(*entry, body[0]);
        for w in body.windows(2) {
            b.add_flow_edge(w[0], w[1]);
        }
        b.add_flow_edge(*body.last().expect("body"), *exit);
        let all: Vec<NodeId> = body.clone();
        for _ in 0..rng.below(body.len() + 2) {
            let from = all[rng.below(all.len())];
            let to = if rng.chance(20) {
                *exit
            } else {
                all[rng.below(all.len())]
            };
            b.add_flow_edge(from, to);
        }
        if rng.chance(30) {
            b.add_flow_edge(*entry, *exit);
        }
        for &n in body {
            if b.kind_of(n) == NodeKind::CallSite {
                // Callee: any function but main (main may recurse rarely).
                let callee = if nf > 1 && !rng.chance(10) {
                    1 + rng.below(nf - 1)
                } else {
                    rng.below(nf)
                };
                b.add_call_edge(n, parts[callee].0);
                if rng.chance(15) {
                    let other = rng.below(nf);
                    b.add_call_edge(n, parts[other].0);
                }
                if rng.chance(10) {
                    b.add_external_callee(n);
                }
            }
        }
    }
    let bodies = parts.iter().map(|p| p.2.clone()).collect();
    (b, bodies)
}

/// A random report. Most are derived from a real random walk (so they are
/// usually feasible); some are arbitrary. `expressible` restricts to what
/// UTL expresses exactly: single-node sets, unreliable traces, single-node
/// `obsNo`.
pub fn random_report(rng: &mut Rng, g: &Icfg, expressible: bool) -> Report {
    let n = g.num_nodes();
    let any = |rng: &mut Rng| NodeId::new(rng.below(n));
    let walk = random_walk(rng, g);
    let truthful = rng.chance(75);
    let set = |rng: &mut Rng, first: NodeId| {
        let mut v = vec![first];
        if !expressible && rng.chance(25) {
            v.push(any(rng));
        }
        NodeSet::new(v).expect("non-empty")
    };
    let mut r = Report::default();
    let crash = if truthful {
        *walk.last().expect("walk")
    } else {
        any(rng)
    };
    let crash_set = {
        let mut v = vec![crash];
        if rng.chance(25) {
            v.push(any(rng));
        }
        NodeSet::new(v).expect("non-empty")
    };
    r.crash = Some(crash_set);
    // Stack: pairs (call site, callee entry) taken in walk order when truthful.
    if rng.chance(40) {
        r.stack = random_stack(rng, g, &walk, truthful, &set, &any);
    }
    for _ in 0..rng.below(3) {
        let k = 1 + rng.below(3);
        let mut idx: Vec<usize> = (0..k).map(|_| rng.below(walk.len())).collect();
        idx.sort_unstable();
        let entries = idx
            .iter()
            .map(|&i| {
                let x = if truthful { walk[i] } else { any(rng) };
                set(rng, x)
            })
            .collect();
        let reliable = !expressible && rng.chance(20);
        r.obs_yes.push(Trace { reliable, entries });
    }
    if !expressible && rng.chance(15) {
        let bursts = random_bursts(rng, &walk, truthful, &any);
        r.bursty.push(postmortem_core::report::Bursty { bursts });
    }
    for _ in 0..rng.below(3) {
        let mut x = any(rng);
        if truthful {
            for _ in 0..4 {
                if !walk.contains(&x) {
                    break;
                }
                x = any(rng);
            }
        }
        r.obs_no.push(set(rng, x));
    }
    // Values draw from their own generator, so that the rest of a test's
    // random stream is the same with or without them.
    let mut vr = Rng::new(walk.iter().fold(n as u64 ^ 0x7A1E, |h, x| {
        h.wrapping_mul(31).wrapping_add(x.index() as u64)
    }));
    if !expressible && vr.chance(30) {
        r.values.push(last_write(&mut vr, &walk, truthful, &any));
    }
    r
}

/// A random walk from the start of `g`, of 1 to 12 nodes (fewer where
/// a node has no successor).
fn random_walk(rng: &mut Rng, g: &Icfg) -> Vec<NodeId> {
    let mut walk = vec![g.start()];
    let len = 1 + rng.below(12);
    while walk.len() < len {
        let v = *walk.last().expect("walk");
        let s: Vec<NodeId> = g.succs(v).map(|x| x.0).collect();
        if s.is_empty() {
            break;
        }
        walk.push(s[rng.below(s.len())]);
    }
    walk
}

/// A random stack: pairs (call site, callee entry) taken in `walk`'s
/// order, as sets made by `set`, and when not `truthful` sometimes one
/// more pair of arbitrary nodes (from `any`).
fn random_stack(
    rng: &mut Rng,
    g: &Icfg,
    walk: &[NodeId],
    truthful: bool,
    set: &impl Fn(&mut Rng, NodeId) -> NodeSet,
    any: &impl Fn(&mut Rng) -> NodeId,
) -> Vec<Frame> {
    let mut frames = Vec::new();
    for w in walk.windows(2) {
        let is_call = g
            .succs(w[0])
            .any(|(t, k)| t == w[1] && k == postmortem_core::icfg::EdgeKind::Call);
        if is_call && rng.chance(60) {
            frames.push(Frame {
                call: set(rng, w[0]),
                entry: set(rng, w[1]),
            });
        }
    }
    if !truthful && rng.chance(50) {
        frames.push(Frame {
            call: NodeSet::one(any(rng)),
            entry: NodeSet::one(any(rng)),
        });
    }
    frames
}

/// One or two random bursts of one or two nodes: stretches of `walk`
/// when `truthful`, else arbitrary nodes (from `any`).
fn random_bursts(
    rng: &mut Rng,
    walk: &[NodeId],
    truthful: bool,
    any: &impl Fn(&mut Rng) -> NodeId,
) -> Vec<Vec<NodeSet>> {
    let mut bursts = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let k = 1 + rng.below(2);
        let start = rng.below(walk.len());
        let burst: Vec<NodeSet> = (0..k)
            .map(|i| {
                NodeSet::one(if truthful {
                    walk[(start + i).min(walk.len() - 1)]
                } else {
                    any(rng)
                })
            })
            .collect();
        bursts.push(burst);
    }
    bursts
}

/// A variable's last write: some writes (on the walk or anywhere), bad
/// ones (never the walk's last one when truthful), and whether one must
/// have run.
fn last_write(
    rng: &mut Rng,
    walk: &[NodeId],
    truthful: bool,
    any: &impl Fn(&mut Rng) -> NodeId,
) -> postmortem_core::report::LastWrite {
    let k = 1 + rng.below(4);
    let writes: Vec<NodeId> = (0..k)
        .map(|_| {
            if truthful && rng.chance(50) {
                walk[rng.below(walk.len())]
            } else {
                any(rng)
            }
        })
        .collect();
    let writes = NodeSet::new(writes).expect("k >= 1");
    let last = walk.iter().rev().find(|n| writes.contains(**n)).copied();
    let bad: Vec<NodeId> = writes
        .nodes()
        .iter()
        .copied()
        .filter(|&n| {
            if truthful {
                Some(n) != last && rng.chance(60)
            } else {
                rng.chance(40)
            }
        })
        .collect();
    let need = if truthful {
        last.is_some() && rng.chance(50)
    } else {
        rng.chance(30)
    };
    let mut w = postmortem_core::report::LastWrite {
        writes,
        bad,
        need,
        what: "v".into(),
        tests: Vec::new(),
    };
    // Branch tests: a branch (often on the walk), where it goes (often
    // where the walk went after it), other successors; when truthful,
    // kept only if the walk still satisfies the constraint.
    for _ in 0..rng.below(4) {
        let on_walk = rng.chance(70);
        let i = rng.below(walk.len());
        let branch = if on_walk { walk[i] } else { any(rng) };
        if w.tests.iter().any(|t| t.branch == branch) {
            continue;
        }
        let taken = if on_walk && i + 1 < walk.len() && rng.chance(60) {
            walk[i + 1]
        } else {
            any(rng)
        };
        let others: Vec<NodeId> = (0..rng.below(3))
            .map(|_| any(rng))
            .filter(|&o| o != taken)
            .collect();
        w.tests.push(postmortem_core::report::BranchTest {
            branch,
            taken,
            others,
        });
        if truthful && !w.holds(walk) {
            w.tests.pop();
        }
    }
    w
}

/// The report with every constraint UTL cannot express weakened the way
/// the UTL solver does (for exactness tests against an oracle).
pub fn utl_weakened(r: &Report) -> Report {
    let mut stack_vec: Vec<NodeSet> = Vec::new();
    for f in &r.stack {
        for s in [&f.call, &f.entry] {
            if s.single().is_some() {
                stack_vec.push(s.clone());
            }
        }
    }
    // The stack as a vector is the same constraint as an unreliable trace.
    let mut out = Report {
        crash: r.crash.clone(),
        ..Report::default()
    };
    if !stack_vec.is_empty() {
        out.obs_yes.push(Trace {
            reliable: false,
            entries: stack_vec,
        });
    }
    for t in &r.obs_yes {
        let entries: Vec<NodeSet> = t
            .entries
            .iter()
            .filter(|e| e.single().is_some())
            .cloned()
            .collect();
        if !entries.is_empty() {
            out.obs_yes.push(Trace {
                reliable: false,
                entries,
            });
        }
    }
    out.obs_no = r
        .obs_no
        .iter()
        .filter(|s| s.single().is_some())
        .cloned()
        .collect();
    for b in &r.bursty {
        let entries: Vec<NodeSet> = b
            .bursts
            .iter()
            .flatten()
            .filter(|e| e.single().is_some())
            .cloned()
            .collect();
        if !entries.is_empty() {
            out.obs_yes.push(Trace {
                reliable: false,
                entries,
            });
        }
    }
    // A value keeps only "its one good write ran", when it must have.
    for v in &r.values {
        let good: Vec<NodeId> = v.good().collect();
        if let ([n], true) = (good.as_slice(), v.need) {
            out.obs_yes.push(Trace {
                reliable: false,
                entries: vec![NodeSet::one(*n)],
            });
        }
    }
    out
}

/// Everything a graph's accessors can see, in one comparable value
/// (round-trip tests of graph codecs); checks the id and name lookups.
pub fn observe(g: &Icfg) -> String {
    let mut s = String::new();
    use std::fmt::Write;
    for n in g.nodes() {
        let mut succs: Vec<_> = g.succs(n).collect();
        succs.sort_by_key(|e| e.0);
        let preds: Vec<_> = g.preds(n).collect();
        let rs: Vec<_> = g.return_sites(n).collect();
        writeln!(
            s,
            "{n} {} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            g.ext_id(n),
            g.kind(n),
            g.label(n),
            g.func_of(n),
            g.lines(n),
            g.column(n),
            g.file_of(n).map(|f| g.file_path(f)),
            succs,
            preds,
            rs,
            g.call_note(n)
        )
        .unwrap();
        assert_eq!(g.lookup(g.ext_id(n)), Some(n));
    }
    for (i, f) in g.functions().iter().enumerate() {
        writeln!(s, "{i} {f:?}").unwrap();
        assert_eq!(
            g.function_by_name(&f.name),
            Some(postmortem_core::ids::FuncId::new(i))
        );
    }
    writeln!(
        s,
        "async {:?} {:?}",
        g.async_registrations(),
        g.async_functions()
    )
    .unwrap();
    writeln!(
        s,
        "start {} files {} calls {}",
        g.start(),
        g.num_files(),
        g.num_call_sites()
    )
    .unwrap();
    s
}

/// Percent chances of a [`random_value`]'s parts.
#[derive(Clone, Copy, Debug)]
pub struct ValueMix {
    /// Most writes (at least 1).
    pub writes: usize,
    /// Each write bad (cannot leave the value).
    pub bad: u32,
    /// A good write needed (the value differs from the initial one).
    pub need: u32,
}

/// A random value constraint on `g` without branch tests: 1 to
/// `mix.writes` random writes, each bad with `mix.bad`% chance, needed
/// with `mix.need`% (draws in that order, which the seeds of the tests
/// that use it depend on).
pub fn random_value(
    rng: &mut Rng,
    g: &Icfg,
    mix: ValueMix,
    what: String,
) -> postmortem_core::report::LastWrite {
    let n = g.num_nodes();
    let writes: Vec<NodeId> = (0..1 + rng.below(mix.writes))
        .map(|_| NodeId::new(rng.below(n)))
        .collect();
    let writes = NodeSet::new(writes).expect("non-empty");
    let bad = writes
        .nodes()
        .iter()
        .copied()
        .filter(|_| rng.chance(mix.bad))
        .collect();
    postmortem_core::report::LastWrite {
        writes,
        bad,
        need: rng.chance(mix.need),
        what,
        tests: Vec::new(),
    }
}

/// Up to 2 random branch tests (none half of the time): a node with its successors split into
/// the one taken and the others (or, sometimes, random nodes).
pub fn random_branch_tests(rng: &mut Rng, g: &Icfg) -> Vec<postmortem_core::BranchTest> {
    let n = g.num_nodes();
    let mut tests: Vec<postmortem_core::BranchTest> = Vec::new();
    if rng.chance(50) {
        return tests;
    }
    for _ in 0..1 + rng.below(2) {
        let branch = NodeId::new(rng.below(n));
        if tests.iter().any(|t| t.branch == branch) {
            continue;
        }
        let mut succs: Vec<NodeId> = g.succs(branch).map(|(t, _)| t).collect();
        succs.sort_unstable();
        succs.dedup();
        if succs.is_empty() || rng.chance(15) {
            succs = (0..1 + rng.below(3))
                .map(|_| NodeId::new(rng.below(n)))
                .collect();
            succs.sort_unstable();
            succs.dedup();
        }
        let taken = succs.remove(rng.below(succs.len()));
        tests.push(postmortem_core::BranchTest {
            branch,
            taken,
            others: succs,
        });
    }
    tests
}
