//! `cause::reaching_writes` against a brute-force oracle: on random
//! programs (calls, recursion, loops), every matched path from the start
//! to a node `at` (at most 14 nodes, 3 pending calls) is walked with an
//! activation stack, and the last of a variable's writes in the
//! activation of `at`'s function that reaches `at` (or none: its entry)
//! must be among what the walk back from `at` finds. This is what `why`
//! relies on when it names the only definition of a local's value.

use postmortem_core::cause::reaching_writes;
use postmortem_core::icfg::{EdgeKind, Icfg, NodeKind};
use postmortem_core::ids::FuncId;
use postmortem_core::{Label, NodeId};
use postmortem_testkit::rng::Rng;
use postmortem_testkit::testgen::{random_icfg, GraphShape};

/// An activation: its function, the last write of the variable in it
/// (for `at`'s function), and where it returns to.
type Frame = (FuncId, Option<NodeId>, Vec<NodeId>);

/// The brute-force walk: every matched path from the start, bounded.
struct Oracle<'a> {
    g: &'a Icfg,
    /// `at`'s function, whose activations track the last write.
    f: FuncId,
    at: NodeId,
    writes: &'a [NodeId],
    /// What was seen at `at`: the current activation's last write, or
    /// None (none since its entry).
    out: Vec<Option<NodeId>>,
}

impl Oracle<'_> {
    fn walk(&mut self, v: NodeId, stack: &mut Vec<Frame>, len: usize) {
        let g = self.g;
        if len > 14 || self.out.len() > 2000 {
            return;
        }
        if v == self.at {
            self.out.push(stack.last().expect("an activation").1);
        }
        // The step's effect on the current activation: a write of `f`.
        let saved = stack.last().unwrap().1;
        if stack.last().unwrap().0 == self.f && self.writes.contains(&v) {
            stack.last_mut().unwrap().1 = Some(v);
        }
        if g.kind(v) == NodeKind::Exit {
            if stack.len() > 1 {
                let frame = stack.pop().unwrap();
                for &r in &frame.2 {
                    self.walk(r, stack, len + 1);
                }
                stack.push(frame);
            }
        } else {
            for (w, k) in g.succs(v) {
                match k {
                    EdgeKind::Local if g.func_of(w) == g.func_of(v) => self.walk(w, stack, len + 1),
                    EdgeKind::Call if stack.len() < 4 => {
                        stack.push((g.func_of(w), None, g.return_sites(v).collect()));
                        self.walk(w, stack, len + 1);
                        stack.pop();
                    }
                    _ => {}
                }
            }
        }
        stack.last_mut().unwrap().1 = saved;
    }
}

/// What the oracle saw at `at` (see [`Oracle::out`]).
fn observed(g: &Icfg, at: NodeId, writes: &[NodeId]) -> Vec<Option<NodeId>> {
    let mut o = Oracle {
        g,
        f: g.func_of(at),
        at,
        writes,
        out: Vec::new(),
    };
    let start = g.start();
    o.walk(start, &mut vec![(g.func_of(start), None, Vec::new())], 0);
    o.out
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
