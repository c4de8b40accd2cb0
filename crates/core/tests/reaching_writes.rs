//! `cause::reaching_writes` against a brute-force oracle: on random
//! programs (calls, recursion, loops), every matched path from the start
//! to a node `at` (at most 14 nodes, 3 pending calls) is walked with an
//! activation stack, and the last of a variable's writes in the
//! activation of `at`'s function that reaches `at` (or none: its entry)
//! must be among what the walk back from `at` finds. This is what `why`
//! relies on when it names the only definition of a local's value.

use postmortem_core::cause::reaching_writes;
use postmortem_core::icfg::{EdgeKind, Icfg, NodeKind};
use postmortem_core::{Label, NodeId};
use postmortem_testkit::rng::Rng;
use postmortem_testkit::testgen::{random_icfg, GraphShape};

/// What the oracle saw at `at`: per activation of `at`'s function, the
/// last write of `writes` before `at`, or None (none since its entry).
fn observed(g: &Icfg, at: NodeId, writes: &[NodeId]) -> Vec<Option<NodeId>> {
    let f = g.func_of(at);
    let mut out = Vec::new();
    // (node, activations: (function, last write, return sites))
    type Frame = (postmortem_core::ids::FuncId, Option<NodeId>, Vec<NodeId>);
    fn walk(
        g: &Icfg,
        v: NodeId,
        stack: &mut Vec<Frame>,
        len: usize,
        f: postmortem_core::ids::FuncId,
        at: NodeId,
        writes: &[NodeId],
        out: &mut Vec<Option<NodeId>>,
    ) {
        if len > 14 || out.len() > 2000 {
            return;
        }
        let top = stack.last().expect("an activation");
        if v == at {
            out.push(top.1);
        }
        // The step's effect on the current activation: a write of `f`.
        let saved = stack.last().unwrap().1;
        if stack.last().unwrap().0 == f && writes.contains(&v) {
            stack.last_mut().unwrap().1 = Some(v);
        }
        if g.kind(v) == NodeKind::Exit {
            if stack.len() > 1 {
                let frame = stack.pop().unwrap();
                for &r in &frame.2 {
                    walk(g, r, stack, len + 1, f, at, writes, out);
                }
                stack.push(frame);
            }
        } else {
            for (w, k) in g.succs(v) {
                match k {
                    EdgeKind::Local if g.func_of(w) == g.func_of(v) => {
                        walk(g, w, stack, len + 1, f, at, writes, out)
                    }
                    EdgeKind::Call if stack.len() < 4 => {
                        stack.push((g.func_of(w), None, g.return_sites(v).collect()));
                        walk(g, w, stack, len + 1, f, at, writes, out);
                        stack.pop();
                    }
                    _ => {}
                }
            }
        }
        stack.last_mut().unwrap().1 = saved;
    }
    let start = g.start();
    let mut stack = vec![(g.func_of(start), None, Vec::new())];
    walk(g, start, &mut stack, 0, f, at, writes, &mut out);
    out
}

#[test]
fn every_write_that_reaches_a_read_in_its_activation_is_found() {
    let mut rng = Rng::new(0x5eed_0036);
    let mut checked = 0;
    for case in 0..3000 {
        let g = random_icfg(&mut rng, &GraphShape::default());
        let nodes: Vec<NodeId> = g.nodes().collect();
        let at = nodes[rng.below(nodes.len())];
        if matches!(g.kind(at), NodeKind::Entry) {
            continue;
        }
        let f = g.func_of(at);
        let body: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&v| g.func_of(v) == f && g.kind(v) != NodeKind::Entry)
            .collect();
        let writes: Vec<NodeId> = body.iter().copied().filter(|_| rng.below(3) == 0).collect();
        let labels = vec![Label::Maybe; g.num_nodes()];
        let none = |_: NodeId, _: NodeId| false;
        let r = reaching_writes(&g, &labels, at, &writes, &none);
        for last in observed(&g, at, &writes) {
            checked += 1;
            match last {
                Some(w) => assert!(
                    r.writes.contains(&w),
                    "case {case}: the write {w:?} reaches {at:?} but was not found: {r:?}"
                ),
                None => assert!(
                    r.entry,
                    "case {case}: no write before {at:?}, entry not met: {r:?}"
                ),
            }
        }
    }
    assert!(checked > 1000, "only {checked} paths checked");
}
