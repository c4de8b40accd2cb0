//! The products of the ICFG with constraint automata, and the witnesses
//! read from them: the layer below the UTL and FSA solvers (and the
//! context-sensitive solver's searches), so that no solver imports another
//! for them.
//!
//! * [`Prepared`]: a split report's UTL structure plus its automata (with
//!   trackers for UTL elements in components where automata act), what
//!   both products are built on.
//! * `full.rs`: the full product, explored on the fly (locations are
//!   nodes or whole silent components).
//! * `contracted/`: the contracted product, far smaller, one type per
//!   phase (see its module doc).
//! * `witness.rs`: one consistent execution, from the contracted product
//!   (antichains) or, when that does not fit, the full product expanded
//!   into consecutive ICFG nodes. FSA's checks run these two steps
//!   (`fsa/strategy.rs`, steps 2 and 3 of checks); UTL's witness is the
//!   same search on the constraints UTL checked (no automaton), so UTL
//!   needs nothing of the FSA solver.
//!
//! How FSA classifies these products (bulk recovery), and which it tries
//! in which order, is the FSA solver's (`fsa/strategy.rs`,
//! `fsa/classify.rs`).

pub(crate) mod contracted;
pub(crate) mod full;
pub(crate) mod witness;

use crate::algo::SccId;
use crate::automaton::Dfa;
use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::{IdVec, NodeId};
use crate::lower::Split;
use crate::report::{NodeSet, Origin};
use crate::structure::{Core, Ends, Segments};
use full::Product;

/// The default vertex limit of a product exploration (the FSA solver's
/// `max_states` and `coarse_states`, and UTL's witness search).
pub(crate) const MAX_STATES: usize = 4_000_000;

/// The default memory budget, in bytes, of a product exploration (the FSA
/// solver's `max_memory`, and UTL's witness search).
pub(crate) const MAX_MEMORY: usize = 4 << 30;

/// The UTL structure plus the automata (with trackers for UTL elements in
/// components where automata act).
pub(crate) struct Prepared {
    pub core: Core,
    pub seg: Segments,
    pub ends: Ends,
    pub autos: Vec<Dfa>,
}

impl Prepared {
    /// The structure of `sp` from `start`; `None` when no path satisfies
    /// its UTL constraints.
    pub fn new(g: &Icfg, sp: &Split, start: &[u32]) -> Option<Prepared> {
        let inst = sp.instance(g, start);
        let core = sp.solve(&inst)?;
        let ends = Ends::new(&inst);
        let seg = core.segments(&inst, &ends);
        // Components where some automaton acts get trackers for the UTL
        // elements they hold.
        let sccs = &core.sccs;
        let mut autos = sp.autos.clone();
        let mut loud = BitSet::new(g.num_nodes());
        let all_loud = autos.iter().any(|a| !a.silent_elsewhere());
        for a in &autos {
            for v in a.mentioned() {
                if !a.silent_on(v) {
                    loud.insert(v as usize);
                }
            }
        }
        let active: IdVec<SccId, bool> = sccs
            .ids()
            .map(|c| {
                !sccs.is_trivial(c)
                    && (all_loud
                        || sccs
                            .members_of(c)
                            .iter()
                            .any(|&v| loud.contains(v as usize)))
            })
            .collect();
        for (i, vec) in sp.vectors.iter().enumerate() {
            let inside: Vec<NodeSet> = vec
                .iter()
                .filter(|&&e| active[sccs.comp(e).expect("a live element")])
                .map(|&e| NodeSet::one(NodeId::new(e as usize)))
                .collect();
            if !inside.is_empty() {
                autos.push(Dfa::subsequence(Origin::ObsYes(i), &inside));
            }
        }
        Some(Prepared {
            core,
            seg,
            ends,
            autos,
        })
    }
}

/// The full product.
pub(crate) fn product<'a>(g: &'a Icfg, prep: &'a Prepared, start: u32) -> Product<'a> {
    Product::new(
        g.succ_csr(),
        &prep.core,
        &prep.seg,
        &prep.ends,
        &prep.autos,
        start,
    )
}

/// The UTL structure for the contracted product.
pub(crate) fn structure<'a>(
    g: &'a Icfg,
    prep: &'a Prepared,
    start: u32,
) -> contracted::Structure<'a> {
    contracted::Structure {
        g: g.succ_csr(),
        rg: g.pred_csr(),
        core: &prep.core,
        seg: &prep.seg,
        ends: &prep.ends,
        start,
    }
}
