//! `--exact`: the Maybe nodes decided by elimination over
//! [`super::product`]'s searches (see [`close`]).

use super::limits::CsLimits;
use super::product::*;
use crate::automaton::Dfa;
use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::Label;
use std::time::Instant;

/// The cap of one search of [`close`]: this many times the states of
/// the search of the report alone, and at least [`MIN_CAP`].
const CAP_FACTOR: usize = 8;
const MIN_CAP: usize = 1 << 16;

/// The states all searches of [`close`] may build: this many times the
/// search of the report alone, at least [`CLOSE_MIN`] and at most
/// [`CLOSE_MAX`] times `--max-states`; past it the candidates left stay
/// Maybe, and the output says so. (Deterministic, unlike a time limit:
/// a few seconds of searching at the default `--max-states`.)
const CLOSE_FACTOR: usize = 256;
const CLOSE_MIN: usize = 1 << 22;
const CLOSE_MAX: usize = 2;

/// Most Yes-candidates of one search of [`close`].
const BATCH: usize = 32;

/// What [`close`] did.
#[derive(Clone, Debug, Default)]
pub(crate) struct Closed {
    /// Searches run.
    pub searches: u64,
    /// Labels turned from Maybe to Yes, and to No.
    pub yes: u64,
    pub no: u64,
    /// Why it stopped before deciding every candidate, if it did.
    pub stopped: Option<String>,
    /// The report has no consistent valid path (labels unchanged).
    pub infeasible: bool,
}

/// Decides the Maybe nodes of `labels` (sound labels of `report`) in the
/// context-sensitive semantics, by elimination rather than one search per
/// node: every consistent valid path found clears the nodes on it of
/// being No and the nodes off it of being Yes. One search asks for a path
/// through some remaining No-candidate (an automaton of two states): when
/// there is none, all of them are No. One asks for a path that misses
/// some remaining Yes-candidate (a "not all" set of bits): when there is
/// none, all of them are Yes. So the searches number the paths needed to
/// clear the candidates, plus two.
///
/// Stops at the first search over the limits (or `deadline`), leaving
/// the remaining candidates Maybe; every label it sets is exact.
pub(crate) fn close(
    g: &Icfg,
    report: &Report,
    labels: &mut [Label],
    limits: &CsLimits,
    deadline: Option<Instant>,
) -> Closed {
    let mut out = Closed::default();
    let mut p = match Prepared::new(g, report, limits, deadline) {
        Ok(Some(p)) => p,
        Ok(None) => return out,
        Err(Unsupported(why)) => {
            out.stopped = Some(why);
            return out;
        }
    };
    let n = g.num_nodes();
    let mut c = Candidates {
        n,
        budget: usize::MAX,
        no: BitSet::new(n),
        yes: BitSet::new(n),
    };
    let mut gone = Vec::new();
    for (v, l) in labels.iter().enumerate() {
        if *l == Label::Maybe {
            if p.removed(v) {
                gone.push(v);
            } else {
                c.no.insert(v);
                c.yes.insert(v);
            }
        }
    }
    // One search of the report alone: is there a path at all, and how
    // large is a search (the cap of the others, and their budget)?
    out.searches += 1;
    match p.run(&[], &[], None, false) {
        Ok(Some(path)) => {
            c.clear(&path);
            p.cap = p.last.saturating_mul(CAP_FACTOR).max(MIN_CAP);
            c.budget = p
                .last
                .saturating_mul(CLOSE_FACTOR)
                .max(CLOSE_MIN)
                .min(limits.max_states.saturating_mul(CLOSE_MAX));
        }
        Ok(None) => {
            out.infeasible = true;
            return out;
        }
        Err(Unsupported(why)) => {
            out.stopped = Some(why);
            return out;
        }
    }
    for v in gone {
        labels[v] = Label::No;
        out.no += 1;
    }
    // Candidates for Yes first: their paths clear most candidates for No.
    if let Err(Unsupported(why)) = close_yes(&mut p, &mut c, labels, &mut out, deadline) {
        out.stopped = Some(why);
        return out;
    }
    if let Err(Unsupported(why)) = close_no(&mut p, &mut c, labels, &mut out) {
        out.stopped = Some(why);
    }
    out
}

/// The nodes [`close`] has yet to decide.
struct Candidates {
    /// Nodes of the graph.
    n: usize,
    /// States all searches may build (see [`CLOSE_FACTOR`]).
    budget: usize,
    /// Not yet seen on a consistent path.
    no: BitSet,
    /// Not yet seen missed by one.
    yes: BitSet,
}

impl Candidates {
    /// An error once the searches have built more states than the budget;
    /// else the next search is capped by what is left of it.
    fn spent(&self, p: &mut Prepared<'_>) -> Result<(), Unsupported> {
        if p.states >= self.budget {
            return Err(Unsupported(format!(
                "its searches built {} states, its budget",
                self.budget
            )));
        }
        p.cap = p.cap.min(self.budget - p.states);
        Ok(())
    }

    /// A consistent valid path clears the nodes on it of being No and
    /// those off it of being Yes.
    fn clear(&mut self, path: &[NodeId]) {
        let mut on = BitSet::new(self.n);
        for v in path {
            on.insert(v.index());
            self.no.remove(v.index());
        }
        let off: Vec<usize> = self.yes.iter().filter(|&v| !on.contains(v)).collect();
        for v in off {
            self.yes.remove(v);
        }
    }
}

/// The Yes side of [`close`], in batches: a path that misses some node of
/// the batch clears at least one; none proves the whole batch. Each node
/// of a batch is one bit, and subsumption keeps only the states that saw
/// fewest of them, so a batch over the cap is halved; a single node over
/// it stays Maybe (noted in `out.stopped`). Past the deadline, the error.
fn close_yes(
    p: &mut Prepared<'_>,
    c: &mut Candidates,
    labels: &mut [Label],
    out: &mut Closed,
    deadline: Option<Instant>,
) -> Result<(), Unsupported> {
    let mut size = BATCH / 4;
    let mut given_up = 0usize;
    while c.yes.iter().next().is_some() {
        c.spent(p)?;
        let nodes: Vec<u32> = c.yes.iter().take(size).map(|v| v as u32).collect();
        out.searches += 1;
        match p.run(&[], &[], Some(&nodes), false) {
            Ok(Some(path)) => c.clear(&path),
            Ok(None) => {
                for &v in &nodes {
                    labels[v as usize] = Label::Yes;
                    c.yes.remove(v as usize);
                    out.yes += 1;
                }
                size = (size * 2).min(BATCH);
            }
            Err(e) if deadline.is_some_and(|d| Instant::now() > d) => return Err(e),
            Err(Unsupported(why)) if nodes.len() == 1 => {
                c.yes.remove(nodes[0] as usize);
                given_up += 1;
                out.stopped = Some(format!("{why}, for {given_up} nodes"));
            }
            Err(_) => size = nodes.len() / 2,
        }
    }
    Ok(())
}

/// The No side of [`close`]: a path through some remaining candidate (an
/// automaton of two states) clears at least one; none proves them all.
fn close_no(
    p: &mut Prepared<'_>,
    c: &mut Candidates,
    labels: &mut [Label],
    out: &mut Closed,
) -> Result<(), Unsupported> {
    while c.no.iter().next().is_some() {
        c.spent(p)?;
        let nodes: Vec<NodeId> = c.no.iter().map(NodeId::new).collect();
        let some = NodeSet::new(nodes).expect("candidates");
        let dfa = Dfa::subsequence(Origin::Query, &[some]);
        out.searches += 1;
        match p.run(std::slice::from_ref(&dfa), &[], None, false)? {
            Some(path) => c.clear(&path),
            None => {
                for v in c.no.iter() {
                    labels[v] = Label::No;
                    c.yes.remove(v);
                    out.no += 1;
                }
                break;
            }
        }
    }
    Ok(())
}
