//! The contracted product: what FSA bulk recovery and queries explore
//! first, because it stays small where the full product does not.
//!
//! * Only automata that are not subsequence automata (reliable and bursty
//!   traces, "not all", regular queries) make nodes *loud*; the silent
//!   sub-components (SCCs of the silent nodes) of every component are
//!   contracted into one *location* each.
//! * Every subsequence constraint, and every UTL element inside a component
//!   that is not wholly silent, becomes a *tracker* over locations: "visit
//!   one of these locations", in order. Inside a contracted location any
//!   sequence of its nodes can be visited, so entering it matches every
//!   consecutive element it holds (greedy matching is optimal for
//!   subsequences). Identical trackers are merged, so thousands of coverage
//!   observations in one giant location become a few trackers.
//!
//! The language of this product is the consistent executions', projected
//! onto locations, so "may run" and emptiness are exact.
//! [`Mode::Classify`] decides "must run" node by node (see [`explore`]) and
//! lists the nodes it could not decide; [`Mode::Check`] and
//! [`Mode::Avoid`] explore with antichains (a vertex whose trackers made at
//! least as much progress, with the same other states, covers another),
//! which is exact for emptiness. With antichains in [`Mode::Classify`],
//! only a sound over-approximation of "may run" is computed: every real
//! state is covered by an explored vertex at the same location, and
//! co-reachability is computed over explored edges *including* the edges
//! to covering vertices, which can only add vertices.

mod classify;
mod held;
mod keys;
mod locations;
mod search;
mod trackers;
mod trimmed;
mod witness;

use classify::Classify;
use held::Held;
use keys::Space;
use locations::Locations;
use search::{Explored, Search};
use trackers::Tracker;
use trimmed::{product_path, Cuts, SplitGraph, Step, Trimmed};
use witness::Witness;

use super::full::{estimated_bytes, EdgeId, Stop, Touch, VertexId};
use crate::algo::{bfs_tree, SccId, Sccs, Tree, Walker};
use crate::automaton::Dfa;
use crate::fxhash::FxHashMap;
use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::graph::{BitSet, Csr};
use crate::ids::{entity_id, IdVec};
use crate::lower::Split;
use crate::structure::{Core, Crossing, Ends, Leg, Segments, Verdict};
use std::collections::BinaryHeap;
use std::time::Instant;

entity_id!(
    /// A silent sub-component of a component: a contracted location when
    /// it is not trivial (see [`Locations::loc_of`]).
    SubId
);

entity_id!(
    /// A location of the contracted product: a node `l < n` of its own,
    /// or the contracted sub-component `l - n` (see
    /// [`Locations::place`]). The first word of a key.
    LocId
);

/// What a location stands for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Place {
    Node(u32),
    Sub(SubId),
}

/// What the contracted product says about every node.
pub(crate) struct Coarse {
    /// Nodes that may run (exact without subsumption, else a superset).
    pub may: BitSet,
    /// Nodes that surely run (sound; exact for nodes that are locations of
    /// their own, when explored without subsumption).
    pub must: BitSet,
    /// Nodes whose Maybe may be imprecise.
    pub unsure: BitSet,
    pub vertices: usize,
    pub trackers: usize,
    /// Members of contracted locations with element requirements that were
    /// decided (Yes or avoidable), and those left undecided.
    pub held_decided: usize,
    pub held_left: usize,
    /// Exact checks made.
    pub checks: usize,
    /// Exact checks spared: their class holds a node known to run.
    pub known: usize,
    /// Exact checks spared: an earlier check's witness misses their class
    /// ([`CoarseLimits::shared_witnesses`]).
    pub shared: usize,
    /// Checks of many classes at once, counted in `checks`.
    pub grouped: usize,
    /// Members found avoidable from dominator trees instead of their own
    /// star walk ([`CoarseLimits::sharp_stars`]).
    pub sharp: usize,
    pub exact: bool,
}

/// The UTL structure the coarse tier works on.
pub(crate) struct Structure<'a> {
    pub g: &'a Csr,
    /// The reverse of `g`.
    pub rg: &'a Csr,
    pub core: &'a Core,
    pub seg: &'a Segments,
    pub ends: &'a Ends,
    pub start: u32,
}

/// What to do with the contracted product.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Mode {
    /// Explore all of it and classify every node; with `subsume`, only an
    /// over-approximation of "may run" (antichains).
    Classify { subsume: bool },
    /// Only decide whether some consistent execution avoids this node
    /// (antichains, which are exact for emptiness; stops at the first
    /// accepting vertex), and give one if the flag is set
    /// ([`Outcome::Witness`] instead of [`Outcome::Possible`]).
    Avoid(u32, bool),
    /// Only decide whether some consistent execution exists, and give one
    /// if `witness` (antichains; stops at the first accepting vertex).
    Check { witness: bool },
}

/// The result of [`explore`].
pub(crate) enum Outcome {
    /// No consistent execution (avoiding the node, in [`Mode::Avoid`]).
    Impossible,
    /// Some consistent execution avoids the node ([`Mode::Avoid`] without
    /// a witness), or exists ([`Mode::Check`] without a witness).
    Possible,
    /// The classification ([`Mode::Classify`]).
    Classified(Coarse),
    /// A consistent execution ([`Mode::Check`], or [`Mode::Avoid`] with a
    /// witness: one that avoids the node): consecutive ICFG nodes from the
    /// start to a crash node.
    Witness(Vec<u32>),
}

/// Limits of the coarse tier.
#[derive(Copy, Clone, Debug)]
pub(crate) struct CoarseLimits {
    pub max_states: usize,
    pub deadline: Option<Instant>,
    /// Memory budget of the exploration, in bytes (estimated).
    pub max_memory: usize,
    /// Exact checks ([`Mode::Avoid`] explorations) allowed for members of
    /// locations with requirements that witnesses and dominators leave.
    pub checks: usize,
    /// A member of such a location whose own star walk (from the entry,
    /// avoiding just it) would miss it is found avoidable from the
    /// dominator trees of the star's root, without building the walk
    /// (issue 25; the labels are the same without it).
    pub sharp_stars: bool,
    /// Exact checks give their witness (an execution avoiding the node),
    /// and a class of members that a witness found so far misses is
    /// avoidable without a check of its own; the classes of a location
    /// are first checked all at once ([`avoid_all`]), so that one
    /// execution missing them all settles them with one check (issue 25;
    /// the labels are the same without it, or fewer undecided).
    pub shared_witnesses: bool,
}

impl Coarse {
    /// Whether every node is decided: none it may not vouch for is Maybe.
    pub fn decided(&self) -> bool {
        self.unsure
            .iter()
            .all(|v| !self.may.contains(v) || self.must.contains(v))
    }

    /// Statistics for the recovery.
    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("coarse_vertices", self.vertices as u64),
            ("coarse_trackers", self.trackers as u64),
            ("coarse_held_decided", self.held_decided as u64),
            ("coarse_held_left", self.held_left as u64),
            ("coarse_checks", self.checks as u64),
            ("coarse_checks_known", self.known as u64),
            ("coarse_checks_shared", self.shared as u64),
            ("coarse_checks_grouped", self.grouped as u64),
            ("coarse_sharp", self.sharp as u64),
        ]
    }
}

/// Explores the contracted product. In [`Mode::Classify`] without
/// `subsume` the exploration is explicit, "may run" is exact and "must
/// run" is decided by cuts of the trimmed graph and, inside contracted
/// locations, by the crossing analysis, star witnesses and (under
/// `limits.checks`) exact [`Mode::Avoid`] explorations. With `subsume`,
/// only an over-approximation of "may run" is computed.
///
/// The phases, each a type with its own output, in order: the
/// [`Locations`] (`locations.rs`), the key [`Space`] with the trackers
/// (`keys.rs`, `trackers.rs`), the [`Search`] that builds the
/// [`Explored`] graph (`search.rs`), then the [`Witness`] read from it
/// when the search stopped at an accepting vertex (`witness.rs`), or its
/// [`Classify`] (`classify.rs`, with `trimmed.rs` and `held.rs`).
pub(crate) fn explore(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    mode: Mode,
) -> Result<Outcome, Stop> {
    explore_caring(st, sp, limits, mode, None, None)
}

/// [`explore`], and in [`Mode::Classify`] with `care`, "must run" decided
/// only where it may tell a node of `care` (issue 25: a confirmation
/// round needs only the nodes still unconfirmed): a contracted location
/// with no member in `care`, or a class of members left for an exact
/// check with none, is left unsure (listed in [`Coarse::unsure`]) without
/// the work. "May run" stays exact. `yes`: nodes known to run on every
/// execution of the report `sp` was split from (labels sound for it): a
/// class of members left for an exact check that holds one must run,
/// without the check (issue 25).
pub(crate) fn explore_caring(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    mode: Mode,
    care: Option<&BitSet>,
    yes: Option<&BitSet>,
) -> Result<Outcome, Stop> {
    let skip = match mode {
        Mode::Avoid(v, _) => vec![v],
        _ => Vec::new(),
    };
    explore_skipping(st, sp, limits, mode, care, yes, skip)
}

/// [`Mode::Avoid`] for every node of `nodes` at once: whether some
/// consistent execution runs none of them, with such an execution
/// ([`Outcome::Witness`]) when `witness`. One search can show many nodes
/// avoidable (issue 25: the classes an exact check would take one by
/// one, see [`CoarseLimits::shared_witnesses`]).
pub(super) fn avoid_all(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    nodes: &[u32],
    witness: bool,
) -> Result<Outcome, Stop> {
    let mut skip = nodes.to_vec();
    skip.sort_unstable();
    skip.dedup();
    let Some(&first) = skip.first() else {
        return Ok(Outcome::Impossible);
    };
    explore_skipping(
        st,
        sp,
        limits,
        Mode::Avoid(first, witness),
        None,
        None,
        skip,
    )
}

/// [`explore_caring`], the nodes of `skip` (sorted) avoided.
fn explore_skipping(
    st: &Structure<'_>,
    sp: &Split,
    limits: CoarseLimits,
    mode: Mode,
    care: Option<&BitSet>,
    yes: Option<&BitSet>,
    skip: Vec<u32>,
) -> Result<Outcome, Stop> {
    let (subsume, early) = match mode {
        Mode::Classify { subsume } => (subsume, false),
        Mode::Avoid(..) => (true, true),
        Mode::Check { .. } => (true, true),
    };
    let others: Vec<&Dfa> = sp.autos.iter().filter(|a| !a.is_monotone()).collect();
    let locs = Locations::new(st, &others, skip);
    if !locs.alive(st.start) {
        return Ok(Outcome::Impossible);
    }
    let space = Space::new(locs, sp, others);
    let mut search = Search::new(&space, limits, subsume, early);
    let found = match search.seed()? {
        Some(found) => Some(found),
        None => search.search()?,
    };
    if let Some((qs, by)) = found {
        let w = Witness {
            st,
            sp,
            mode,
            space: &space,
            graph: &search.graph,
        };
        return Ok(w.witness(&qs, by));
    }
    if early {
        return Ok(Outcome::Impossible);
    }
    Classify {
        st,
        sp,
        limits,
        subsume,
        care,
        yes,
        space: &space,
        graph: &search.graph,
    }
    .classify()
}

/// How a product vertex was first reached: from `vertex` (none for an
/// initial one) along the graph edge `from` → `to` (no `from` at the
/// start).
#[derive(Copy, Clone, Debug)]
struct By {
    vertex: Option<VertexId>,
    from: Option<u32>,
    to: u32,
}

/// A step of a witness: a key, the node it was entered by, and the node
/// the move came from (none for the first).
type WitnessStep = (Vec<u32>, u32, Option<u32>);

/// Whether node `v` can be on a consistent path (its component is alive)
/// and is not in `skip` (sorted).
fn alive_in(st: &Structure<'_>, skip: &[u32], v: u32) -> bool {
    st.core.sccs.comp(v).is_some_and(|c| st.seg.alive[c])
        && (skip.is_empty() || skip.binary_search(&v).is_err())
}
