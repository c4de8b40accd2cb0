//! Synthetic, gcc-sized programs with a matching failure report.
//!
//! [`generate`] builds a random but deterministic (seeded) C-like program —
//! functions made of structured control flow (straight-line runs, if/else
//! diamonds, `&&` chains, switches, while/for/do loops, nested loops, early
//! returns), calls along a mostly layered call graph with some direct and
//! mutual recursion, indirect calls, library stubs and bare declarations —
//! and writes it in the csi-cc GraphML dialect of the real data
//! (`/work/shared/data/README.md`). It then *runs* the program: a
//! context-sensitive simulation with a real call stack starting at `main`,
//! with pseudo-random branch choices, bounded loops and bounded recursion,
//! which finally "crashes" at a statement reached with a call stack
//! [`SynthConfig::crash_depth`] frames deep. The csi-grissom JSON failure
//! report written next to the GraphML is true for that run: the stack is
//! exactly the pending calls, every `obsYes` call site executed and no
//! `obsNo` call site did.
//!
//! # How the program is shaped
//!
//! Defined functions are arranged in layers: `main` alone in layer 0, and
//! every other function in one of `crash_depth + max(2, crash_depth / 4)`
//! layers. Calls go "down" (to a higher layer number), which makes the call
//! graph a DAG except for the recursion added on purpose:
//!
//! * every function above the bottom layer has a *spine* call to a function
//!   of the next layer, so `main` can always reach a stack of `crash_depth`
//!   frames;
//! * the callee of an ordinary call is drawn with a heavy-tailed popularity
//!   weight, so many functions are called from many sites (this is what
//!   makes the context-insensitive ICFG condense into giant SCCs);
//! * a share of functions get a direct self call or a call back "up" to one
//!   of their callers (mutual recursion); a share of calls are indirect
//!   (several `control` edges from one call site, like function pointers);
//! * some calls go to library *stubs* (an `entry` flowing straight to its
//!   `exit`, as csi-cc emits for external functions) and a few to bare
//!   *declarations* (a node of the default kind `declaration` with no flow
//!   edge at all: readers must treat such a callee as external).
//!
//! Every block is either on the function's *cheap path* (the path that
//! skips every optional arm and leaves every loop at once) or *optional*.
//! Calls on the cheap path only go to functions that are cheap to run, and
//! recursive calls only sit in optional blocks, so "run this call to
//! completion the cheap way" always terminates quickly.
//!
//! # How the run is shaped
//!
//! 1. *Exploration.* `main` spins in its driver loop; every other branch is
//!    random (optional arms are taken less and less often deeper in the
//!    stack), loops run a random number of iterations up to
//!    [`SynthConfig::max_loop_iterations`], and a callee runs in
//!    "cheap" mode (cheap path only) once the stack is
//!    [`SynthConfig::explore_depth`] deep, when the callee already has
//!    [`SynthConfig::recursion_bound`] activations, and more and more often
//!    for functions already explored many times (which spreads the run
//!    over the program, like a long real run). Exploration stops once
//!    a little more than [`SynthConfig::coverage`] distinct call sites ran
//!    (or after [`SynthConfig::max_steps`] statements).
//! 2. *Dive.* From wherever the run is, each frame walks (by a shortest
//!    intraprocedural path, calls on the way running to completion) to a
//!    call whose callee can still reach the wanted depth, returning first if
//!    its function has none left.
//! 3. *Crash.* In the innermost frame, the run walks a few more statements
//!    and stops at an ordinary statement: that is the `crash` node.
//!
//! # Where things are
//!
//! * `config.rs`: [`SynthConfig`] (sizes and shares of the program and
//!   of its run) and [`SynthStats`].
//! * `model.rs`: the program the generator builds (functions, blocks,
//!   terminators, calls) and the names it draws from.
//! * `generator.rs`: the program generator (`build_program`).
//! * `simulator.rs`: the simulated run (`simulate`).
//! * `graphml.rs`, `report.rs`: the writers of the GraphML and of the
//!   csi-grissom JSON report.

mod config;
mod generator;
mod graphml;
mod model;
mod report;
mod simulator;
#[cfg(test)]
mod tests;

pub use config::{SynthConfig, SynthStats};
use generator::build_program;
use graphml::write_graphml;
use model::FKind;
use report::write_report;
use simulator::simulate;
use std::collections::HashSet;
use std::io::{self, BufWriter, Write};

/// Generates the program of `cfg`, writes it to `graphml` (csi-cc GraphML)
/// and the failure report of one run of it to `report` (csi-grissom JSON).
///
/// Both writers are written through an internal [`BufWriter`] and flushed
/// at the end; the GraphML is never held in memory as text (gcc-like is
pub fn generate(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
) -> io::Result<SynthStats> {
    generate_inner(cfg, graphml, report, false).map(|(s, _)| s)
}

/// [`generate`], also returning the input ids of every node the simulated
/// run executed (sorted, deduplicated): the known execution, for
/// soundness tests (a Yes node must be among them, a No node must not).
pub fn generate_traced(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
) -> io::Result<(SynthStats, Vec<String>)> {
    let (s, ran) = generate_inner(cfg, graphml, report, true)?;
    Ok((s, ran.unwrap_or_default()))
}

fn generate_inner(
    cfg: &SynthConfig,
    graphml: &mut impl Write,
    report: &mut impl Write,
    traced: bool,
) -> io::Result<(SynthStats, Option<Vec<String>>)> {
    let prog = build_program(cfg);
    let run = simulate(
        &prog,
        cfg,
        traced || cfg.reliable_trace > 0 || cfg.ambiguous_vector > 0,
    );
    let ran = traced.then(|| {
        let mut seen: HashSet<(u32, u32)> = HashSet::new();
        let mut ids: Vec<String> = run
            .trace
            .iter()
            .flatten()
            .filter(|&&x| seen.insert(x))
            .map(|&(f, l)| format!("n:-{}:{l}", prog.funcs[f as usize].num))
            .collect();
        ids.sort();
        ids
    });
    {
        let mut w = BufWriter::with_capacity(1 << 17, &mut *graphml);
        write_graphml(&prog, &mut w)?;
        w.flush()?;
    }
    let (obs_yes, obs_no) = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut *report);
        let r = write_report(&prog, &run, cfg, &mut w)?;
        w.flush()?;
        r
    };
    let defined = &prog.funcs[..prog.defined];
    let nodes = defined.iter().map(|f| 2 + f.nstmts as usize).sum::<usize>()
        + prog.funcs[prog.defined..]
            .iter()
            .map(|f| if f.kind == FKind::Stub { 2 } else { 1 })
            .sum::<usize>();
    Ok((
        SynthStats {
            nodes,
            blocks: prog.blocks.len(),
            functions: prog.defined,
            call_sites: prog.calls.len(),
            stack_depth: run.stack.len(),
            obs_yes,
            obs_no,
            executed_steps: run.steps as usize,
        },
        ran,
    ))
}
