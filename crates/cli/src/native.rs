//! `--core CORE --binary PROG` and `--sancov-flags FILE`: the crash stack
//! unwound from a core dump, and SanitizerCoverage flags (from the core or
//! a raw dump) turned into report constraints.
//!
//! The flags need the graph's flag map, which only the LLVM front-end
//! gives (`--cfg prog.ll|prog.bc` of the same instrumented build, or a
//! `.pmcfg` cache built from it with `cfg build`). Before a flag is used, the binary's
//! flag order is checked against the map: one pc-table entry per flag,
//! each array's first entry a function entry at that function's symbol
//! address (see `postmortem_formats::native::check_order`).

use crate::Failure;
use postmortem_core::locate::SourceFrame;
use postmortem_core::Icfg;
use postmortem_formats::native::{self, Binary, Core};
use postmortem_formats::sancov::{FlagConstraints, SancovMap};

/// What the native inputs gave.
#[derive(Default)]
pub struct Native {
    /// The unwound crash stack, innermost first (None: no core, a
    /// --backtrace was given, or the stack could not be unwound soundly).
    pub frames: Option<Vec<SourceFrame>>,
    /// The flags' constraints.
    pub flags: Option<FlagConstraints>,
}

fn no_map(cfg: &std::path::Path) -> Failure {
    Failure::input(format!(
        "{}: the graph has no coverage flag map: pass the instrumented build's .ll/.bc as --cfg, or a .pmcfg that `cfg build` made from it (GraphML, and caches of other graphs, have none)",
        cfg.display()
    ))
}

fn arrays(map: &SancovMap) -> Vec<(Option<String>, usize)> {
    map.arrays
        .iter()
        .map(|a| (a.function.clone(), a.len))
        .collect()
}

/// Reads `--core`/`--binary`/`--sancov-flags`.
///
/// The flags are process-wide: with several threads in the core, a set
/// flag may be another thread's, so only the clear flags are used (and a
/// `--sancov-flags` dump is taken to be of a single-threaded run).
pub fn load(
    inputs: &crate::inputs::Inputs,
    g: &Icfg,
    map: Option<&SancovMap>,
    warnings: &mut Vec<String>,
) -> Result<Native, Failure> {
    let mut out = Native::default();
    if inputs.core.is_some() && inputs.sancov_flags.is_some() {
        return Err(Failure::input(
            "give the coverage flags either in --core or in --sancov-flags, not both",
        ));
    }
    let bin = match &inputs.binary {
        Some(p) => Some(Binary::read(p).map_err(Failure::input)?),
        None => None,
    };
    if let Some(path) = &inputs.sancov_flags {
        let name = path.display().to_string();
        let map = map.ok_or_else(|| no_map(&inputs.cfg))?;
        let bytes =
            std::fs::read(path).map_err(|e| Failure::input(format!("{name}: cannot read: {e}")))?;
        if let Some(bin) = &bin {
            let pcs = bin.pcs().ok_or_else(|| {
                Failure::input(format!(
                    "{}: no {} section: build with -fsanitize-coverage=...,inline-bool-flag,pc-table",
                    inputs.binary.as_ref().unwrap().display(),
                    native::PCS
                ))
            })?;
            native::check_order(bin, &pcs, &arrays(map)).map_err(Failure::input)?;
        } else {
            warn(
                warnings,
                format!("{name}: the flag order is not checked against the binary (pass --binary PROG to check it)"),
            );
        }
        let c = map
            .constraints(&bytes)
            .map_err(|e| Failure::input(format!("{name}: {e}")))?;
        check_reachable(g, map, &c, &name)?;
        note_flags(&name, &c);
        out.flags = Some(c);
    }
    if let Some(path) = &inputs.core {
        let name = path.display().to_string();
        let bin = bin.as_ref().expect("clap requires --binary with --core");
        let core = Core::read(path).map_err(Failure::input)?;
        let base = native::load_base(&core, bin).map_err(Failure::input)?;
        match (bin.bools.is_some(), map) {
            (true, Some(map)) => {
                let cf = native::read_flags(&core, bin).map_err(Failure::input)?;
                native::check_order(bin, &cf.pcs, &arrays(map)).map_err(Failure::input)?;
                let mut c = map
                    .constraints(&cf.flags)
                    .map_err(|e| Failure::input(format!("{name}: {e}")))?;
                if core.threads > 1 {
                    // The flags are process-wide: a set flag may be another
                    // thread's. A clear flag holds for every thread.
                    warn(
                        warnings,
                        format!(
                            "{name}: {} threads: the {} set coverage flags may have been set by other threads and are not used (the clear ones are)",
                            core.threads, c.set
                        ),
                    );
                    c.ran.clear();
                    c.ran_flags.clear();
                }
                check_reachable(g, map, &c, &name)?;
                note_flags(&name, &c);
                out.flags = Some(c);
            }
            (true, None) => return Err(no_map(&inputs.cfg)),
            (false, Some(_)) => {
                return Err(Failure::input(format!(
                    "{}: no {} section, but the graph has coverage flags: the binary is not built from --cfg's instrumented IR",
                    inputs.binary.as_ref().unwrap().display(),
                    native::BOOLS
                )))
            }
            (false, None) => warn(
                warnings,
                format!(
                    "{}: no coverage flags (build with -fsanitize-coverage=func,inline-bool-flag,pc-table for them); only the crash stack is used",
                    inputs.binary.as_ref().unwrap().display()
                ),
            ),
        }
        if inputs.backtrace.is_none() {
            match native::unwind(&core, bin, base) {
                Ok(frames) => {
                    // As for backtraces: an inlined call is no call in the
                    // graph (the unwinder lists inlined frames with the pc
                    // of the frame they are inlined in).
                    let (frames, note) =
                        postmortem_formats::backtrace::merge_inlined_by_address(frames);
                    if let Some(n) = note {
                        warn(warnings, format!("{name}: {n}"));
                    }
                    out.frames = Some(
                        frames
                            .into_iter()
                            .enumerate()
                            .map(|(i, mut f)| {
                                f.index = Some(i as u32);
                                f.to_source_frame()
                            })
                            .collect(),
                    )
                }
                Err(e) => warn(warnings, format!("{e}; the crash stack is not used")),
            }
        }
    }
    Ok(out)
}

fn warn(warnings: &mut Vec<String>, w: String) {
    eprintln!("postmortem: warning: {w}");
    warnings.push(w);
}

fn note_flags(name: &str, c: &FlagConstraints) {
    eprintln!(
        "postmortem: note: {name}: {} coverage flags set, {} clear",
        c.set, c.clear
    );
}

/// A set flag in code the graph cannot reach from the start: the graph is
/// not of this program, or misses control flow. Exit 3, naming the flag.
fn check_reachable(
    g: &Icfg,
    map: &SancovMap,
    c: &FlagConstraints,
    name: &str,
) -> Result<(), Failure> {
    let mut seen = vec![false; g.num_nodes()];
    let mut stack = vec![g.start()];
    seen[g.start().index()] = true;
    while let Some(n) = stack.pop() {
        for (s, _) in g.succs(n) {
            if !seen[s.index()] {
                seen[s.index()] = true;
                stack.push(s);
            }
        }
    }
    for (t, &i) in c.ran.iter().zip(&c.ran_flags) {
        let n = t.entries[0].nodes()[0];
        if !seen[n.index()] {
            let f = &map.flags[i];
            return Err(Failure {
                code: 3,
                message: format!(
                    "{name}: coverage flag {i} (function `{}`, block {}, node {}) is set, but the graph says that code cannot run: the flags are not of this program, or the graph misses control flow that reaches it (constructors, signal and atexit handlers, threads are not on the graph's paths from the start)",
                    f.function,
                    f.block,
                    g.ext_id(n)
                ),
            });
        }
    }
    Ok(())
}
