//! The hypergraph of a bulk exploration: the state table that
//! [`super::product`]'s tabulation fills in bulk mode and the passes of
//! [`super::bulk`] read. Below both, so that neither imports the other
//! for it.

use crate::ids::{entity_id, NodeId};

entity_id!(
    /// A state of a bulk exploration: a top-level state, a path edge or an
    /// escape record.
    StateId
);

/// One way a state is reached: from one state, or from two (a call
/// site's state and the callee's exit path edge or escape record).
pub(super) type Step = (StateId, Option<StateId>);

/// The hypergraph of a bulk exploration (see the module docs).
#[derive(Debug)]
pub(crate) struct Hyper {
    /// Node of each state (none for escape records).
    pub(super) node: Vec<Option<NodeId>>,
    /// Initial states: the start, or an invocation's entry.
    pub(super) root: Vec<bool>,
    /// The steps into each state: `ins[start[s]..start[s + 1]]`.
    pub(super) start: Vec<usize>,
    pub(super) ins: Vec<Step>,
    /// Accepting top-level states.
    pub(super) accepting: Vec<StateId>,
    /// From a search ([`super::product`]'s `Search::hyper`): its states
    /// are the top-level states below this number, then the path edges,
    /// then the escape records. `None` elsewhere.
    pub(super) tops: Option<usize>,
    /// From a search: each escape record's landing node (the escape
    /// records are the last states).
    pub(super) jumps: Vec<NodeId>,
}

impl Hyper {
    /// From the states' nodes, which are initial, the steps `(to, from,
    /// also from)` and the accepting states.
    pub(super) fn new(
        node: Vec<Option<NodeId>>,
        root: Vec<bool>,
        mut steps: Vec<(StateId, StateId, Option<StateId>)>,
        accepting: Vec<StateId>,
    ) -> Hyper {
        let n = node.len();
        // Grouped by target with a counting sort, then each group sorted
        // and deduplicated on its own: the order of one sort of the whole
        // list (by target, then sources), without sorting it whole.
        let mut start = vec![0usize; n + 1];
        for &(to, _, _) in &steps {
            start[to.index() + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut ins: Vec<Step> = vec![(StateId::new(0), None); steps.len()];
        for (to, a, b) in steps.drain(..) {
            let slot = &mut fill[to.index()];
            ins[*slot] = (a, b);
            *slot += 1;
        }
        let mut kept = 0;
        for s in 0..n {
            let (lo, hi) = (start[s], start[s + 1]);
            start[s] = kept;
            let group = &mut ins[lo..hi];
            group.sort_unstable();
            let mut last = None;
            for j in lo..hi {
                let x = ins[j];
                if last != Some(x) {
                    ins[kept] = x;
                    kept += 1;
                    last = Some(x);
                }
            }
        }
        start[n] = kept;
        ins.truncate(kept);
        Hyper {
            node,
            root,
            start,
            ins,
            accepting,
            tops: None,
            jumps: Vec::new(),
        }
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    pub(super) fn steps_into(&self, s: usize) -> &[Step] {
        &self.ins[self.start[s]..self.start[s + 1]]
    }

    /// Whether some valid path is accepted.
    pub fn feasible(&self) -> bool {
        !self.accepting.is_empty()
    }
}
