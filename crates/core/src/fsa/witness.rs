//! A witness from the full product: a product path expanded into
//! consecutive ICFG nodes.

use super::*;

impl Fsa {
    /// Expands a product path into consecutive ICFG nodes.
    pub(super) fn witness(
        g: &Icfg,
        p: &Product<'_>,
        vectors: &[Vec<u32>],
        last: VertexId,
    ) -> Vec<NodeId> {
        let sccs = &p.core.sccs;
        let csr = g.succ_csr();
        let edges = p.tree_path(last);
        let mut path: Vec<u32> = vec![p.start];
        let mut walker = Walker::new(g.num_nodes());
        // Inside a silent component: from `entry`, visit the UTL elements it
        // holds (vector by vector, in order), then reach `exit`.
        let mut cross = |path: &mut Vec<u32>, c: SccId, entry: u32, exit: Option<u32>| {
            let mut cur = entry;
            let in_c = |v: u32| sccs.comp(v) == Some(c);
            let mut goals: Vec<u32> = vectors
                .iter()
                .flat_map(|v| v.iter().copied().filter(|&e| in_c(e)))
                .collect();
            match exit {
                Some(x) => goals.push(x),
                None => {
                    // End at a target inside the component.
                    let t = sccs
                        .members_of(c)
                        .iter()
                        .copied()
                        .find(|&v| p.ends.is_target(v))
                        .expect("target");
                    goals.push(t);
                }
            }
            let last_goal = goals.len() - 1;
            for (i, goal) in goals.into_iter().enumerate() {
                // The entry visit matches a first goal equal to it, and the
                // exit needs no new visit; any other repeated visit of the
                // current node needs a real cycle.
                let stay = i == 0 || i == last_goal;
                let leg = walker
                    .walk(csr, cur, |x| x == goal, in_c, stay, usize::MAX)
                    .expect("strongly connected");
                path.extend_from_slice(&leg);
                cur = goal;
            }
        };
        let mut entry = p.start;
        for e in &edges {
            if let Loc::Comp(c) = p.loc(e.from) {
                cross(&mut path, c, entry, Some(e.from_node));
            }
            path.push(e.to_node);
            entry = e.to_node;
        }
        if let Loc::Comp(c) = p.loc(last) {
            cross(&mut path, c, entry, None);
        }
        path.into_iter().map(|v| NodeId::new(v as usize)).collect()
    }
}
