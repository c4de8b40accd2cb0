//! The UTL solver (placeholder until the engine lands).
use crate::icfg::Icfg;
use crate::report::Report;
use crate::solver::{Checked, Query, Recovery, SolveError, Solver};

/// The unreliable-trace-language solver.
#[derive(Clone, Debug, Default)]
pub struct Utl;

impl Solver for Utl {
    fn name(&self) -> &'static str {
        "utl"
    }
    fn check(&self, _g: &Icfg, _r: &Report, _q: Option<&Query>) -> Checked {
        unimplemented!("engine lands next")
    }
    fn recover(&self, _g: &Icfg, _r: &Report) -> Result<Recovery, SolveError> {
        unimplemented!("engine lands next")
    }
}
