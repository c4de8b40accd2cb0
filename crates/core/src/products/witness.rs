//! One consistent execution of a split report (a *witness*): consecutive
//! ICFG nodes from the start to a crash node. The FSA solver's checks run
//! [`contracted`] then [`full`] (steps 2 and 3 of checks in
//! `fsa/strategy.rs`); UTL's witness ([`of_constraints`]) is the same two
//! steps on the constraints UTL checked, under the default limits.

use super::contracted::{self as coarse, CoarseLimits, Mode, Outcome};
use super::full::{Loc, Product, Stop, VertexId};
use super::{product, structure, Prepared, MAX_MEMORY, MAX_STATES};
use crate::algo::{SccId, Walker};
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::lower::{lower, Constraints, Split, Strategy, MAX_BURSTY_STATES};
use crate::solver::{Answer, Checked};
use std::ops::ControlFlow::{self, Break, Continue};
use std::time::Instant;

/// Limits of one exploration of the full product.
#[derive(Copy, Clone, Debug)]
pub(crate) struct FullLimits {
    pub max_states: usize,
    pub max_memory: usize,
    pub deadline: Option<Instant>,
}

/// An impossible answer (nothing weakened, no witness).
fn impossible() -> Checked {
    Checked {
        answer: Answer::Impossible,
        weakened: vec![],
        witness: None,
    }
}

/// The contracted product with antichains, exact for emptiness, and its
/// witness if `witness`. `Ok(None)` when it gave no answer; `Err` when it
/// did not fit (or its deadline passed).
pub(crate) fn contracted(
    g: &Icfg,
    prep: &Prepared,
    sp: &Split,
    limits: CoarseLimits,
    witness: bool,
) -> Result<Option<Checked>, Stop> {
    let st = structure(g, prep, g.start().as_u32());
    let possible = |witness| Checked {
        answer: Answer::Possible,
        weakened: sp.weakened.clone(),
        witness,
    };
    Ok(
        match coarse::explore(&st, sp, limits, Mode::Check { witness })? {
            Outcome::Witness(w) => {
                let w = w.into_iter().map(|v| NodeId::new(v as usize)).collect();
                Some(possible(Some(w)))
            }
            Outcome::Impossible => Some(impossible()),
            Outcome::Possible => Some(possible(None)),
            Outcome::Classified(_) => None,
        },
    )
}

/// The full product, explicit (stops at the first accepting vertex), and
/// its witness if `witness`; what stopped it if it did not fit.
pub(crate) fn full(
    g: &Icfg,
    prep: &Prepared,
    sp: &Split,
    limits: FullLimits,
    witness: bool,
) -> ControlFlow<Checked, Stop> {
    let mut p = product(g, prep, g.start().as_u32());
    match p.explore(true, limits.max_states, limits.max_memory, limits.deadline) {
        Ok(false) => Break(impossible()),
        Ok(true) => {
            let last = p.first_accepting().expect("accepting vertex");
            let witness = witness.then(|| expand(g, &p, &sp.vectors, last));
            Break(Checked {
                answer: Answer::Possible,
                weakened: sp.weakened.clone(),
                witness,
            })
        }
        Err(s) => Continue(s),
    }
}

/// A witness of the constraints UTL checked (`c`, all UTL-expressible:
/// no automaton), found as the FSA solver's check of them finds it
/// ([`contracted`], then [`full`], under the default limits); `None` if
/// neither product fits.
pub(crate) fn of_constraints(g: &Icfg, c: &Constraints) -> Option<Vec<NodeId>> {
    let report = c.as_report();
    let strategy = Strategy::Automata {
        reduction: None,
        max_bursty: MAX_STATES.min(MAX_BURSTY_STATES),
    };
    let sp = lower(g, &report, None, strategy).ok()?;
    let start = [g.start().as_u32()];
    let prep = Prepared::new(g, &sp, &start)?;
    // A witness must satisfy every constraint: none if one was weakened.
    let witness = sp.weakened.is_empty();
    let coarse = CoarseLimits {
        max_states: MAX_STATES,
        deadline: None,
        max_memory: MAX_MEMORY,
        // (Exact checks are for classification only.)
        checks: 0,
        sharp_stars: true,
        shared_witnesses: true,
    };
    match contracted(g, &prep, &sp, coarse, witness) {
        Ok(Some(c)) => return c.witness,
        Err(Stop::Time) => return None,
        Ok(None) | Err(_) => {}
    }
    let limits = FullLimits {
        max_states: MAX_STATES,
        max_memory: MAX_MEMORY,
        deadline: None,
    };
    match full(g, &prep, &sp, limits, witness) {
        Break(c) => c.witness,
        Continue(_) => None,
    }
}

/// Expands a full product path (from the start to `last`) into
/// consecutive ICFG nodes.
fn expand(g: &Icfg, p: &Product<'_>, vectors: &[Vec<u32>], last: VertexId) -> Vec<NodeId> {
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
