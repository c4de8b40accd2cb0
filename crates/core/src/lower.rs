//! One lowering of a report (and query) into the constraints the solvers
//! read (PLDI 2017, section 5): absent nodes, *vectors* (unreliable traces
//! of single nodes, UTL's constraints), crash targets, and automata for
//! the rest.
//!
//! * the crash set is the set of targets (an ambiguous crash set is exact);
//! * the stack is one trace: each frame's call site, then its entry,
//!   outermost first;
//! * every `obsYes` trace, and every bursty trace, is a trace;
//! * a query that a node ran is a one-node vector, that it was skipped an
//!   absent node; a trace query is a trace;
//! * a single-node `obsNo` set is an absent node;
//! * a variable's value ([`crate::report::LastWrite`]) is an automaton.
//!
//! A trace of single nodes is a vector. The solvers differ only in what
//! becomes of the other constraints, the [`Strategy`]:
//!
//! * [`Strategy::Weaken`] (UTL) replaces each by a weaker constraint and
//!   lists it in [`Constraints::weakened`]: an element of several nodes is
//!   dropped from its trace, a reliable trace is read as unreliable, an
//!   ambiguous `obsNo` set is dropped, a bursty trace becomes one
//!   unreliable trace of all its elements;
//! * [`Strategy::Automata`] (FSA, and the context-sensitive solver's
//!   searches) makes each one deterministic automaton
//!   ([`crate::automaton`]), after reducing the report exactly with sound
//!   labels when it has them (see [`crate::fsa::split`]), and weakens only
//!   what no automaton of bounded size expresses.

use crate::automaton::{self, Dfa};
use crate::graph::BitSet;
use crate::icfg::Icfg;
use crate::ids::NodeId;
use crate::report::{NodeSet, Origin, Report};
use crate::solver::{Label, Query, Weakening};
use crate::structure::{Core, Instance};

/// What every solver reads of a report: the constraints UTL expresses,
/// and what was weakened.
#[derive(Clone)]
pub(crate) struct Constraints {
    /// Removed nodes.
    pub absent: BitSet,
    /// Unreliable traces of single nodes.
    pub vectors: Vec<Vec<u32>>,
    /// Crash candidates; `None` when the path may end anywhere.
    pub targets: Option<Vec<u32>>,
    /// What was weakened, in report order.
    pub weakened: Vec<Weakening>,
}

/// A lowered report: the [`Constraints`] (read through `Deref`, as every
/// solver does), plus the automata for the rest (none with
/// [`Strategy::Weaken`]).
pub(crate) struct Split {
    pub base: Constraints,
    pub autos: Vec<Dfa>,
    /// The elements of every subsequence automaton in `autos` (same order
    /// among them), for the contracted product.
    pub traces: Vec<Vec<NodeSet>>,
    /// Indices in `autos` of the automata that may be dropped (weakened)
    /// when the product does not fit: ambiguous `obsNo`, in report order.
    pub droppable: Vec<usize>,
}

impl std::ops::Deref for Split {
    type Target = Constraints;
    fn deref(&self) -> &Constraints {
        &self.base
    }
}

/// What becomes of a constraint that is not a vector, a target or an
/// absent node.
#[derive(Copy, Clone)]
pub(crate) enum Strategy<'r> {
    /// It is weakened and listed (UTL).
    Weaken,
    /// It becomes an automaton (FSA).
    Automata {
        /// Labels sound for the report, to reduce it with first.
        reduction: Option<Reduction<'r>>,
        /// Most states of a bursty trace's automaton; beyond, the trace
        /// is weakened to an unreliable one.
        max_bursty: usize,
    },
}

/// Most states of a bursty trace's automaton under
/// [`Strategy::Automata`] (its `max_bursty` is at most this); beyond, the
/// trace is weakened to an unreliable one.
pub(crate) const MAX_BURSTY_STATES: usize = 1 << 16;

/// Sound labels of a report (every consistent execution runs the Yes nodes
/// and none of the No nodes), to reduce it with while lowering.
#[derive(Copy, Clone)]
pub(crate) struct Reduction<'r> {
    pub labels: &'r [Label],
    /// The original index of every `obsNo` set of the report lowered.
    pub no_origin: &'r [usize],
}

/// Lowers a report and an optional query. With a [`Reduction`], the
/// report is reduced first, exactly: an ambiguous `obsNo` set with a No
/// member is already satisfied and is dropped, its Yes members cannot be
/// the one that did not run and are removed (one member left: an absent
/// node; none: the report is impossible); members labelled No are removed
/// from "one of these" elements (none left: impossible). Returns the
/// origin of the constraint that the reduction found impossible.
pub(crate) fn lower(
    g: &Icfg,
    report: &Report,
    query: Option<&Query>,
    strategy: Strategy<'_>,
) -> Result<Split, Origin> {
    let mut b = Lowering {
        g,
        strategy,
        out: Split {
            base: Constraints {
                absent: BitSet::new(g.num_nodes()),
                vectors: Vec::new(),
                targets: report
                    .crash
                    .as_ref()
                    .map(|c| c.nodes().iter().map(|n| n.as_u32()).collect()),
                weakened: Vec::new(),
            },
            autos: Vec::new(),
            traces: Vec::new(),
            droppable: Vec::new(),
        },
    };
    b.stack(report)?;
    b.obs_yes(report)?;
    b.obs_no(report)?;
    b.bursty(report)?;
    b.values(report)?;
    b.query(query);
    Ok(b.out)
}

/// [`lower`] with [`Strategy::Weaken`] (which never finds a report
/// impossible): the constraints UTL checks.
pub(crate) fn weakened(g: &Icfg, report: &Report, query: Option<&Query>) -> Constraints {
    let sp = lower(g, report, query, Strategy::Weaken).expect("weakening finds nothing impossible");
    debug_assert!(sp.autos.is_empty());
    sp.base
}

/// [`lower`]'s state: the strategy and the lowering so far; one method per
/// kind of constraint.
struct Lowering<'r> {
    g: &'r Icfg,
    strategy: Strategy<'r>,
    out: Split,
}

impl Lowering<'_> {
    fn reduction(&self) -> Option<Reduction<'_>> {
        match self.strategy {
            Strategy::Automata { reduction, .. } => reduction,
            Strategy::Weaken => None,
        }
    }

    fn label(&self, n: NodeId) -> Label {
        self.reduction()
            .map_or(Label::Maybe, |r| r.labels[n.index()])
    }

    /// An element without the members that never run.
    fn reduce(&self, e: &NodeSet, origin: Origin) -> Result<NodeSet, Origin> {
        if self.reduction().is_none() || e.single().is_some() {
            return Ok(e.clone());
        }
        NodeSet::new(
            e.nodes()
                .iter()
                .copied()
                .filter(|&n| self.label(n) != Label::No)
                .collect(),
        )
        .ok_or(origin)
    }

    fn reduce_all(&self, elems: &[NodeSet], origin: Origin) -> Result<Vec<NodeSet>, Origin> {
        elems.iter().map(|e| self.reduce(e, origin)).collect()
    }

    fn weaken(&mut self, origin: Origin, how: String) {
        self.out.base.weakened.push(Weakening { origin, how });
    }

    /// An unreliable trace: a vector if every element is one node; else a
    /// subsequence automaton, or (weakening) the vector of its single-node
    /// elements, each other element dropped as `dropped(j, element)` says.
    fn elements(
        &mut self,
        origin: Origin,
        elems: &[NodeSet],
        dropped: impl Fn(usize, &NodeSet) -> Weakening,
    ) {
        if elems.is_empty() {
            return;
        }
        if let Some(v) = singles(elems) {
            self.out.base.vectors.push(v);
            return;
        }
        match self.strategy {
            Strategy::Automata { .. } => {
                self.out.autos.push(Dfa::subsequence(origin, elems));
                self.out.traces.push(elems.to_vec());
            }
            Strategy::Weaken => {
                let mut v = Vec::with_capacity(elems.len());
                for (j, e) in elems.iter().enumerate() {
                    match e.single() {
                        Some(n) => v.push(n.as_u32()),
                        None => self.out.base.weakened.push(dropped(j, e)),
                    }
                }
                if !v.is_empty() {
                    self.out.base.vectors.push(v);
                }
            }
        }
    }

    /// An unreliable trace of the report or the query (see
    /// [`Lowering::elements`]).
    fn trace(&mut self, origin: Origin, elems: &[NodeSet]) {
        self.elements(origin, elems, |j, e| Weakening {
            origin,
            how: format!(
                "element {j}: \"one of these {} nodes\" dropped from the trace (UTL cannot express disjunction)",
                e.nodes().len()
            ),
        });
    }

    /// The stack as one trace: each frame's call site, then its entry.
    fn stack(&mut self, report: &Report) -> Result<(), Origin> {
        let mut stack: Vec<NodeSet> = Vec::with_capacity(2 * report.stack.len());
        for (i, f) in report.stack.iter().enumerate() {
            stack.push(self.reduce(&f.call, Origin::Frame(i))?);
            stack.push(self.reduce(&f.entry, Origin::Frame(i))?);
        }
        self.elements(Origin::Frame(0), &stack, |j, set| Weakening {
            origin: Origin::Frame(j / 2),
            how: format!(
                "ambiguous {} (one of {} nodes) dropped from the stack trace (UTL cannot express disjunction)",
                ["call", "entry"][j % 2],
                set.nodes().len()
            ),
        });
        Ok(())
    }

    /// `obsYes` traces; a reliable one is an automaton of its own, or
    /// (weakening) read as unreliable.
    fn obs_yes(&mut self, report: &Report) -> Result<(), Origin> {
        for (i, t) in report.obs_yes.iter().enumerate() {
            let origin = Origin::ObsYes(i);
            let entries = self.reduce_all(&t.entries, origin)?;
            if t.reliable {
                match self.strategy {
                    Strategy::Automata { .. } => {
                        self.out.autos.push(Dfa::reliable(origin, &entries));
                        continue;
                    }
                    Strategy::Weaken => self.weaken(
                        origin,
                        "reliable trace treated as unreliable: other occurrences of the traced nodes are no longer excluded"
                            .into(),
                    ),
                }
            }
            self.trace(origin, &entries);
        }
        Ok(())
    }

    /// Single `obsNo` sets are absent nodes; ambiguous ones, after the
    /// reduction, "not all" automata (droppable) or weakened.
    fn obs_no(&mut self, report: &Report) -> Result<(), Origin> {
        for (i, s) in report.obs_no.iter().enumerate() {
            let origin = Origin::ObsNo(self.reduction().map_or(i, |r| r.no_origin[i]));
            if let Some(n) = s.single() {
                self.out.base.absent.insert(n.index());
                continue;
            }
            if s.nodes().iter().any(|&n| self.label(n) == Label::No) {
                continue; // already satisfied
            }
            let left: Vec<NodeId> = s
                .nodes()
                .iter()
                .copied()
                .filter(|&n| self.label(n) != Label::Yes)
                .collect();
            match left.as_slice() {
                [] => return Err(origin),
                [n] => {
                    self.out.base.absent.insert(n.index());
                }
                _ => self.not_all(origin, &NodeSet::new(left).expect("non-empty")),
            }
        }
        Ok(())
    }

    /// "At least one of `set` did not run".
    fn not_all(&mut self, origin: Origin, set: &NodeSet) {
        let how = match self.strategy {
            Strategy::Weaken => format!(
                "\"at least one of these {} nodes did not run\" dropped (UTL cannot express it)",
                set.nodes().len()
            ),
            Strategy::Automata { .. } => match Dfa::not_all(origin, set) {
                Some(d) => {
                    self.out.droppable.push(self.out.autos.len());
                    self.out.autos.push(d);
                    return;
                }
                None => format!(
                    "\"at least one of these {} nodes did not run\" dropped (more than {} \
                     members the UTL labels leave open)",
                    set.nodes().len(),
                    automaton::MAX_NOT_ALL
                ),
            },
        };
        self.weaken(origin, how);
    }

    /// Bursty traces: one automaton each, or (weakening, or past the state
    /// bound) one unreliable trace of all their elements.
    fn bursty(&mut self, report: &Report) -> Result<(), Origin> {
        for (i, b) in report.bursty.iter().enumerate() {
            let origin = Origin::Bursty(i);
            let bursts: Vec<Vec<NodeSet>> = b
                .bursts
                .iter()
                .map(|burst| self.reduce_all(burst, origin))
                .collect::<Result<_, _>>()?;
            let how = match self.strategy {
                Strategy::Weaken => "bursty trace treated as one unreliable trace: the bursts' completeness is no longer enforced".into(),
                Strategy::Automata { max_bursty, .. } => match Dfa::bursty(origin, &bursts, max_bursty) {
                    Some(d) => {
                        self.out.autos.push(d);
                        continue;
                    }
                    None => format!(
                        "bursty trace treated as one unreliable trace: its automaton exceeds \
                         {max_bursty} states (--max-states)"
                    ),
                },
            };
            self.weaken(origin, how);
            let all: Vec<NodeSet> = bursts.into_iter().flatten().collect();
            self.trace(origin, &all);
        }
        Ok(())
    }

    /// Values of variables: one automaton each, or (weakening)
    /// the vector of the only write that can have left the value, when it
    /// must have run.
    fn values(&mut self, report: &Report) -> Result<(), Origin> {
        for (i, w) in report.values.iter().enumerate() {
            let origin = Origin::Value(i);
            let good: Vec<NodeId> = w.good().filter(|&n| self.label(n) != Label::No).collect();
            if w.need && good.is_empty() && matches!(self.strategy, Strategy::Automata { .. }) {
                return Err(origin);
            }
            match self.strategy {
                Strategy::Automata { .. } => {
                    let plain = w.tests_as_writes(self.g);
                    self.out
                        .autos
                        .push(Dfa::last_write(origin, plain.as_ref().unwrap_or(w)))
                }
                Strategy::Weaken => {
                    if let ([n], true) = (good.as_slice(), w.need) {
                        self.out.base.vectors.push(vec![n.as_u32()]);
                    }
                    self.weaken(
                        origin,
                        format!(
                            "{}: \"the last write is one of {} nodes\"{} dropped (UTL cannot express it)",
                            w.what,
                            good.len(),
                            if w.tests.is_empty() {
                                String::new()
                            } else {
                                format!(" and {} branch test(s)", w.tests.len())
                            }
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn query(&mut self, query: Option<&Query>) {
        match query {
            None => {}
            Some(Query::MayRun(n)) => self.out.base.vectors.push(vec![n.as_u32()]),
            Some(Query::MaySkip(n)) => {
                self.out.base.absent.insert(n.index());
            }
            Some(Query::Trace(t)) => self.trace(Origin::Query, t),
            Some(Query::Language(d)) => match self.strategy {
                Strategy::Automata { .. } => self.out.autos.push(d.clone()),
                // UTL refuses such a query before lowering it.
                Strategy::Weaken => {}
            },
        }
    }
}

fn singles(elems: &[NodeSet]) -> Option<Vec<u32>> {
    elems
        .iter()
        .map(|e| e.single().map(|n| n.as_u32()))
        .collect()
}

impl Constraints {
    /// The UTL instance of these constraints on `g`, paths starting at
    /// `sources`.
    pub(crate) fn instance<'a>(&'a self, g: &'a Icfg, sources: &'a [u32]) -> Instance<'a> {
        Instance {
            g: g.succ_csr(),
            rg: g.pred_csr(),
            sources,
            targets: self.targets.as_deref(),
            vectors: &self.vectors,
        }
    }

    /// Decides `inst` (of these constraints) without the absent nodes.
    pub(crate) fn solve(&self, inst: &Instance<'_>) -> Option<Core> {
        inst.solve(|v| self.absent.contains(v as usize))
    }

    /// The constraints as a report of their own: the crash set, one
    /// unreliable trace per vector, one `obsNo` per absent node.
    pub(crate) fn as_report(&self) -> Report {
        let node = |v: u32| NodeId::new(v as usize);
        Report {
            crash: self
                .targets
                .as_ref()
                .and_then(|t| NodeSet::new(t.iter().map(|&v| node(v)).collect())),
            obs_yes: self
                .vectors
                .iter()
                .map(|v| crate::report::Trace {
                    reliable: false,
                    entries: v.iter().map(|&x| NodeSet::one(node(x))).collect(),
                })
                .collect(),
            obs_no: self
                .absent
                .iter()
                .map(|v| NodeSet::one(NodeId::new(v)))
                .collect(),
            ..Report::default()
        }
    }
}
