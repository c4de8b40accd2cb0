//! postmortem's core: the ICFG model, the failure-report model, and the
//! solvers that recover what a crashed program did. Pure Rust, no I/O.
//!
//! The model:
//!
//! * [`icfg`]: the interprocedural control-flow graph, frozen into flat
//!   arrays with typed dense ids ([`ids`]).
//! * [`report`]: what a failure report says, independent of file formats.
//! * [`locate`]: source-level facts (stack frames, `ran` selectors) to
//!   nodes, soundly: what cannot be placed becomes a warning and a
//!   weakening.
//!
//! The interface:
//!
//! * [`solver`]: the [`solver::Solver`] trait every solver implements
//!   (`explain` and `culprit` come free).
//! * [`query`]: the query language (selectors, formulas, regexes) compiled
//!   to automata.
//! * [`automaton`]: the constraint automata queries and the solvers use.
//!
//! The solvers, over the layers they share:
//!
//! * `lower` (crate-private): the one lowering of a report into the
//!   constraints every solver reads, with a strategy for what a solver
//!   cannot express (weaken it, or make it an automaton).
//! * `structure` (crate-private): the condensation, segments and crossings
//!   every solver builds on, and UTL's one-pass bulk recovery.
//! * `products` (crate-private): the products of the ICFG with the
//!   constraint automata (full and contracted) and the witnesses read
//!   from them, below the solvers: UTL's witnesses and FSA's checks share
//!   them, so neither solver imports the other for them.
//! * [`utl`]: the unreliable-trace-language solver of Ohmann et al.
//!   (PLDI 2017, section 4.2), with one-pass bulk recovery.
//! * [`fsa`]: the FSA solver: any regular constraint or query, explored on
//!   the fly in the product with the ICFG, with witnesses.
//! * [`cs`]: the context-sensitive solver (matched calls and returns, the
//!   crash stack as the pending calls) over a base solver's labels.
//! * [`concurrency`]: signal handlers and threads: [`concurrency::ProcessWide`]
//!   keeps any solver's labels sound for the whole process.
//!
//! What runs on top of a solver:
//!
//! * [`pipeline`]: the analysis every command runs on one failure
//!   ([`pipeline::analyse`]: staged recovery, the Local lift, flags set in
//!   some thread, Local labels).
//! * [`staged`]: bulk recovery with variables' values, one value at a
//!   time, labels merged.
//! * [`local`]: Local labels, per activation on the crash stack.
//! * [`summary`]: node labels to per-file, per-line labels.
//! * [`why`]: why a line is Yes or No (a minimal set of the report's
//!   constraints that forces it), for the HTML report.
//! * [`suggest`]: what to observe next, each point's guarantee computed
//!   by re-running the solver.
//!
//! Shared machinery: [`algo`] and [`graph`] (iterative SCCs, dominators,
//! reachability over CSR graphs, bit sets), and a fast hasher for the
//! solvers' maps.
//!
//! Random graphs and reports, the brute-force oracles and the synthetic
//! program generator are in the `postmortem-testkit` crate (tests only).
#![deny(missing_docs)]

pub mod algo;
pub mod automaton;
pub mod budget;
pub mod cause;
pub mod concurrency;
pub mod cs;
pub mod fsa;
mod fxhash;
pub mod graph;
pub mod icfg;
pub mod ids;
pub mod line_notes;
pub mod local;
pub mod locate;
pub(crate) mod lower;
pub mod pipeline;
pub(crate) mod products;
pub mod query;
pub mod report;
pub mod solver;
pub mod staged;
pub(crate) mod structure;
pub mod suggest;
pub mod summary;
pub mod utl;
pub mod why;

pub use icfg::{CallNote, EdgeKind, Icfg, IcfgBuilder, NodeKind, NodeSpec};
pub use ids::{FileId, FuncId, NodeId};
pub use report::{BranchTest, Cases, Frame, LastWrite, NodeSet, Origin, Report, Trace};
pub use solver::{Answer, Beside, Label, Query, Recovery, SolveError, Solver, Weakening};
