//! Choosing and configuring a solver.

use clap::{Args, ValueEnum};
use postmortem_core::concurrency::ProcessWide;
use postmortem_core::fsa::{Fsa, FsaLimits};
use postmortem_core::utl::Utl;
use postmortem_core::Solver;
use std::time::Duration;

/// Which solver, and its limits.
#[derive(Args, Clone)]
pub struct SolverArgs {
    /// The solver. `utl`: unreliable trace languages over the
    /// context-insensitive ICFG (PLDI 2017, section 4.2); polynomial, but
    /// ambiguous sets, reliable traces and regular queries are weakened or
    /// refused. `fsa`: any regular constraint and query, exactly, by
    /// exploring the product of the ICFG with one automaton per constraint.
    #[arg(long, value_enum, default_value_t = SolverName::Utl)]
    pub solver: SolverName,
    /// fsa: give up after this many product states, in the contracted
    /// product and in the full one (answers then degrade soundly to Maybe /
    /// the UTL answer, and the output says so).
    #[arg(long, value_name = "N", default_value_t = 4_000_000)]
    pub max_states: usize,
    /// fsa: give up after this many seconds per exploration (same
    /// degradation).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

/// A solver by name.
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum SolverName {
    /// Unreliable trace languages (polynomial, one pass for all nodes).
    Utl,
    /// Finite automata (any regular constraint or query).
    Fsa,
}

impl SolverArgs {
    /// The configured solver `name`, answering for the whole process
    /// (signal handlers and threads included, see
    /// `postmortem_core::concurrency`).
    pub fn build(&self, name: SolverName) -> Box<dyn Solver> {
        match name {
            SolverName::Utl => Box::new(ProcessWide(Utl::default())),
            SolverName::Fsa => Box::new(ProcessWide(Fsa {
                limits: FsaLimits {
                    max_states: self.max_states,
                    coarse_states: self.max_states,
                    timeout: self
                        .timeout
                        .filter(|t| t.is_finite() && *t > 0.0)
                        .map(Duration::from_secs_f64),
                    ..FsaLimits::default()
                },
            })),
        }
    }
}
