//! Test and benchmark tools for postmortem, kept out of the shipping
//! libraries: the analysis crates (`postmortem-core`, `-formats`, `-llvm`)
//! only take this crate as a dev-dependency; the `postmortem` binary uses
//! it for its `bench` and `synth` subcommands.
//!
//! * [`rng`]: the one pseudo-random generator every tool here uses.
//! * [`testgen`]: random small ICFGs and failure reports for differential
//!   tests and fuzz targets.
//! * [`oracle`]: brute-force reference solvers (bounded path enumeration)
//!   every solver is checked against.
//! * [`oracle_cs`]: the same for the context-sensitive solver: valid
//!   paths with matched calls and returns, bounded stack.
//! * [`synth`]: the synthetic gcc-sized program and the report of a
//!   simulated run of it, for benchmarks.

#![deny(missing_docs)]

pub mod oracle;
pub mod oracle_cs;
pub mod rng;
pub mod synth;
pub mod testgen;
