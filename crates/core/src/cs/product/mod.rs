//! Context-sensitive queries: is there a valid path (calls and returns
//! matched, the pending calls at the crash the report's frames) that
//! satisfies every constraint of the report and the query?
//!
//! The report and the query become automata over nodes exactly as for
//! the FSA solver ([`crate::fsa::split`]); a *tuple* is one state per
//! automaton. The search is Reps–Horwitz–Sagiv tabulation (POPL 1995)
//! with tuples as the facts, split by the stack's segments as
//! [`super::frames`] describes:
//!
//! * **Top-level states** `(node, segment, tuple)`: the path so far, with
//!   the pending calls of the segments before. Edges: flow inside the
//!   function; frame `j`'s call into segment `j + 1`; at a gap, an
//!   unreported call that never returns; and a completed call, through a
//!   summary of its callee.
//! * **Summaries** per *context* `(callee entry, tuple on entry)`: the
//!   tuples with which an invocation can reach the callee's exit, found by
//!   path edges `(context, node, tuple)` inside the callee. A caller waits
//!   on a context; each exit tuple found later resumes every waiter at the
//!   call's return sites. Recursion needs nothing more.
//!
//! Only what is reached is built (contexts only for tuples that reach a
//! call), with explicit worklists. A witness is read back from the
//! predecessor of each state: a top-level state or path edge was first
//! reached by one flow or call step, or by a summary whose callee body is
//! the path edge that reached the exit, so expanding them (with an
//! explicit stack) gives a valid path.
//!
//! Observations of single nodes and ambiguous `obsNo` sets are tracked as
//! bits of the tuple, only once a path violates them (counterexample-
//! guided rounds, see [`check`]). Each tracked bit could double the
//! states, so states are kept as antichains (the subsumption of
//! antichain-based language inclusion, De Wulf, Doyen, Henzinger, Raskin,
//! CAV 2006): among states at the same node and segment (or context) with
//! the same automaton states, one whose "ran" bits are a superset and
//! whose "not all" bits a subset of another's subsumes it, since every
//! continuation that satisfies the report from the other does from it.
//! A subsumed state is not added, or not expanded if it came first. On
//! the replace failure of the shared data (29 single-node observations,
//! 21 obsNo sets) this takes a may-run query from 2.9M states and a
//! fallback to about 20 ms.
//!
//! Before the search, the UTL labels of the report remove the nodes that
//! never run on any consistent path (a context-sensitive path is also a
//! context-insensitive one). (Its Yes labels cannot drop observations:
//! an observed node is Yes *because* of its observation.) Other
//! observations (vectors of several elements, reliable traces) are one
//! automaton each, so a report with thousands of them makes wide tuples
//! and may exceed the limits; the caller then answers with its base
//! solver and says so.
//!
//! Non-local jumps (`longjmp`: a flow edge between functions, or a return
//! site in another function than its call site) leave an invocation: a
//! path edge that jumps makes an *escape record* of its context, which
//! lands at each waiting caller whose function is the target's and
//! escapes that caller's context too (a jump may pop to any activation of
//! its target's function, as in the oracle). At top level it lands in
//! the current or an earlier segment whose function may be the target's
//! (or that is a gap); the path then calls the popped frames again. A
//! landing in a gap segment may assume an unreported activation the path
//! did not make: with jumps the search over-approximates (an impossible
//! answer stays exact, a witness may not be a valid path).
//!
//! Cost: O((contexts + top-level states) · edges per node) steps, each
//! stepping only the automata that move on the node; bounded by
//! [`CsLimits`].
//!
//! **Shared invocations** (bulk mode, `CsLimits::lean`). A value stage
//! adds one automaton to a report ("the last of these stores is a good
//! one"), and the contexts of every function that may store (or call one
//! that does) would be explored once per state of it on entry. Two
//! things keep an exploration near the size of the one without it:
//!
//! * A context leaves out, as `HOLE`, the state on entry of each
//!   automaton whose state after any word is either its state before or
//!   one the word alone determines (a *reset* automaton, [`Dfa::resets`]:
//!   "the last of these", "one of these ran"), and of each other one that
//!   no node of the callee or of what it may call moves
//!   (`kept_by_contexts`). Inside, a hole stays one until a node resets
//!   it; on return (or on an escape's landing) the caller's state at the
//!   call site fills it (`Search::fill`). So each path edge stands for
//!   the same path inside the callee as before, for every caller state
//!   at once, and each top-level state is reached by exactly the same
//!   paths, with the same tuples: the accepted valid paths are the same,
//!   and the derivations of every top-level state too. Where a jump may
//!   leave the callee, the context keeps every automaton.
//! * An unreported call at a gap (a top-level call that never returns)
//!   enters only a function from which a chain of calls reaches a
//!   function holding the segment's end (the next frame's call site, or
//!   a crash target): from any other, a top-level path never leaves the
//!   segment and never accepts, so every state it reaches is on no
//!   accepting derivation (`reaching_ends`). Not where the graph has
//!   jumps between functions. On SQLite's plain cores this leaves a few
//!   hundred top-level states of about 90,000.
//!
//! Both remove or merge only states: the labels of [`super::bulk`] are
//! read from the accepting derivations (may, apart: node-level, the
//! same), except that "must run through a known node" reads `pre ∪ post`
//! per live state, which a different split of the path edges may make
//! differ either way; `cs.rs::lean_exploration_keeps_the_labels`
//! compares labels with it on and off.

use super::frames::segments;
use super::hyper::{Hyper, StateId};
use super::limits::CsLimits;
use super::seen::{Group, Seen};
use crate::automaton::{Dfa, DEAD};
use crate::fxhash::FxHashMap as HashMap;
use crate::graph::BitSet;
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{entity_id, EntityId, IdVec, NodeId};
use crate::products::full::Touch;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Answer, Label, Query, SolveError, Solver, Weakening};
use std::time::Instant;

mod lean;
mod prepared;
mod search;
mod witness;

use lean::*;
pub(crate) use prepared::Prepared;
pub(in crate::cs) use search::*;

/// Why the search did not answer (a limit, or an unsupported graph).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The answer of [`check`].
#[derive(Clone, Debug)]
pub struct CsAnswer {
    /// Possible or impossible in the context-sensitive semantics.
    pub answer: Answer,
    /// A valid path, when possible and asked for.
    pub witness: Option<Vec<NodeId>>,
    /// Constraints weakened on the way (the answer is then sound for the
    /// weaker report: an impossible one stays impossible).
    pub weakened: Vec<Weakening>,
    /// States built (top-level states, path edges, contexts, tuples).
    pub states: usize,
}

/// Longest witness expanded; a longer one is not built.
const MAX_WITNESS: usize = 10_000_000;

/// Estimated bytes per state (key, id map entry, predecessor, waiters).
const BYTES_PER_STATE: usize = 80;

/// Logged derivation steps (bulk mode) that count as one state against
/// the limits.
const LOG_PER_STATE: usize = 4;

entity_id!(
    /// A tuple: one state per constraint automaton, then the seen bits.
    TupleId
);
entity_id!(
    /// A top-level state (node, segment, tuple).
    TopId
);
entity_id!(
    /// A path edge (context, node, tuple) inside a callee.
    PathId
);
entity_id!(
    /// A context: (callee entry, tuple on entry).
    CtxId
);
entity_id!(
    /// An escape record (see [`Esc`]).
    EscId
);

/// Most rounds of [`check`]'s refinement of relaxed observations.
const MAX_ROUNDS: usize = 32;

/// Is there a valid path for `report` (and `query`)? With `witness`, one
/// such path is returned. See the module docs and [`Prepared`].
pub fn check(
    g: &Icfg,
    report: &Report,
    query: Option<&Query>,
    limits: &CsLimits,
    witness: bool,
) -> Result<CsAnswer, Unsupported> {
    let deadline = limits.timeout.map(|t| Instant::now() + t);
    let mut p = match Prepared::new(g, report, limits, deadline)? {
        Some(p) => p,
        None => return Ok(CsAnswer::impossible(Vec::new(), 0)),
    };
    let Ok(sq) = crate::fsa::split(g, &Report::default(), query, None, limits.max_states) else {
        return Ok(CsAnswer::impossible(p.weakened, 0));
    };
    let mut extra: Vec<Dfa> = sq.autos.clone();
    extra.extend(sq.vectors.iter().map(|v| subsequence(v)));
    let absent: Vec<u32> = sq.absent.iter().map(|v| v as u32).collect();
    p.weakened.extend(sq.weakened.iter().cloned());
    let found = p.run(&extra, &absent, None, true)?;
    let weakened = std::mem::take(&mut p.weakened);
    Ok(match found {
        None => CsAnswer::impossible(weakened, p.states),
        Some(path) => CsAnswer {
            answer: Answer::Possible,
            witness: witness.then_some(path),
            weakened,
            states: p.states,
        },
    })
}

impl CsAnswer {
    fn impossible(weakened: Vec<Weakening>, states: usize) -> CsAnswer {
        CsAnswer {
            answer: Answer::Impossible,
            witness: None,
            weakened,
            states,
        }
    }
}

/// The automaton of paths through some node of `v` in this order.
fn subsequence(v: &[u32]) -> Dfa {
    let elems: Vec<NodeSet> = v
        .iter()
        .map(|&n| NodeSet::one(NodeId::new(n as usize)))
        .collect();
    Dfa::subsequence(Origin::Query, &elems)
}
