//! Loading a control-flow graph from any supported file, and writing the
//! binary graph cache (`cfg build`).
//!
//! The format is told by content first, then by extension:
//!
//! * a graph cache (`.pmcfg`, written by `cfg build`): magic `PMCFG\0`;
//! * LLVM IR from clang-14: bitcode by its magic, textual IR by the `.ll`
//!   extension or a leading `; ModuleID` line (and `.bc` by extension),
//!   through the `postmortem-llvm` front-end, run as its own process
//!   (`frontend.rs`: this binary does not link LLVM), whose diagnostics
//!   summary goes to stderr as one `postmortem: note: ...` line;
//! * otherwise csi-cc GraphML, optionally gzip-compressed.

use crate::exit::Failure;
use postmortem_core::Icfg;
use postmortem_formats::frontend::{decode_loaded, encode_loaded, IrFormat, WIRE_MAGIC};
use postmortem_formats::image::sancov::SancovMap;
use postmortem_formats::input::{read_bounded, require_regular, Limit};
use postmortem_formats::pmcfg::{self, CACHE_MAGIC};
use postmortem_formats::vars::VarMap;
use std::io::Read;
use std::path::Path;

/// The kinds of graph file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum GraphFormat {
    Cache,
    /// A cache of an instrumented build: the graph with its coverage flag
    /// map (the front-end's wire format, see `cfg build`).
    CacheWithFlags,
    Llvm,
    GraphMl,
}

fn sniff(path: &Path) -> GraphFormat {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| read_head(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let ext = path.extension().and_then(|e| e.to_str());
    if head.starts_with(&WIRE_MAGIC) {
        GraphFormat::CacheWithFlags
    } else if head.starts_with(&CACHE_MAGIC) || ext == Some("pmcfg") {
        GraphFormat::Cache
    } else if IrFormat::sniff(path, head).is_some() || ext == Some("bc") {
        GraphFormat::Llvm
    } else {
        // Also for unreadable files: the GraphML reader names the problem.
        GraphFormat::GraphMl
    }
}

fn read_head(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Whether `path` is a graph cache (`.pmcfg`, with or without flag maps).
pub fn is_cache(path: &Path) -> bool {
    matches!(
        sniff(path),
        GraphFormat::Cache | GraphFormat::CacheWithFlags
    )
}

/// Whether `path` is LLVM IR (read by the front-end).
pub fn is_ir(path: &Path) -> bool {
    sniff(path) == GraphFormat::Llvm
}

/// Reads a control-flow graph: a graph cache, LLVM IR (`.ll`/`.bc`) or
/// csi-cc GraphML (optionally gzip-compressed).
pub fn load_graph(path: &Path) -> Result<Icfg, Failure> {
    load_graph_with_sancov(path, crate::solvers::default_memory_budget() as u64).map(|(g, _)| g)
}

/// The limit of a graph file of at most `limit` bytes (`--max-memory`).
fn graph_limit(limit: u64) -> Limit {
    Limit::new(limit, "graph", "--max-memory")
}

/// Checks that `path` is a regular file of at most `limit` bytes (a
/// device or a pipe given as the graph is an error, not a hang).
fn check_graph_file(path: &Path, limit: u64) -> Result<(), Failure> {
    let size = require_regular(path, "the graph").map_err(Failure::input)?;
    if size > limit {
        return Err(Failure::input(
            graph_limit(limit).exceeded(&path.display().to_string(), Some(size)),
        ));
    }
    Ok(())
}

/// [`load_graph`], with the SanitizerCoverage flag map of LLVM IR input
/// or of a `.pmcfg` cache built from it (None for other inputs). The
/// graph file (decompressed, for gzip GraphML) may have at most `limit`
/// bytes, and must be a regular file.
pub fn load_graph_with_sancov(
    path: &Path,
    limit: u64,
) -> Result<(Icfg, Option<SancovMap>), Failure> {
    load_graph_with_maps(path, limit).map(|(g, s, _)| (g, s))
}

/// [`load_graph_with_sancov`], with the front-end's variable map too.
pub fn load_graph_with_maps(
    path: &Path,
    limit: u64,
) -> Result<(Icfg, Option<SancovMap>, Option<VarMap>), Failure> {
    check_graph_file(path, limit)?;
    // Large inputs take a second or more: say what is happening, on a terminal.
    let big = std::fs::metadata(path)
        .map(|m| m.len() > 32 << 20)
        .unwrap_or(false);
    if big && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let mib = std::fs::metadata(path).map(|m| m.len() >> 20).unwrap_or(0);
        eprintln!("postmortem: reading {} ({mib} MiB) ...", path.display());
    }
    match sniff(path) {
        GraphFormat::Cache => {
            let bytes = read_bounded(path, &graph_limit(limit)).map_err(Failure::input)?;
            pmcfg::decode(&bytes).map(|g| (g, None, None)).map_err(|e| {
                if bytes.starts_with(&CACHE_MAGIC) {
                    bad_cache(path, e)
                } else {
                    // Named .pmcfg, but no cache at all: the decoder says so.
                    Failure::input(format!("{}: {e}", path.display()))
                }
            })
        }
        GraphFormat::CacheWithFlags => {
            let bytes = read_bounded(path, &graph_limit(limit)).map_err(Failure::input)?;
            decode_loaded(&bytes)
                .map(|l| (l.icfg, l.sancov, l.vars))
                .map_err(|e| {
                    bad_cache(
                        path,
                        e.to_string().replace("front-end output", "graph cache"),
                    )
                })
        }
        GraphFormat::Llvm => {
            let loaded = crate::frontend::load_ir(path, limit)?;
            eprintln!("postmortem: note: {}", loaded.report.summary());
            Ok((loaded.icfg, loaded.sancov, loaded.vars))
        }
        GraphFormat::GraphMl => postmortem_formats::graphml::read_graphml_path_limited(path, limit)
            .map(|g| (g, None, None))
            .map_err(|e| {
                // Not GraphML: say what it looks like and where it goes.
                let head = postmortem_formats::input::head(path, 4096);
                match postmortem_formats::input::kind_hint(&head) {
                    Some(hint) if !head.starts_with(b"PMCFG") => Failure::input(format!(
                        "{}: not a control-flow graph: this looks like {hint}",
                        path.display()
                    )),
                    _ => Failure::input(e),
                }
            }),
    }
}

/// A graph cache that does not decode: what it looks like and the fix.
fn bad_cache(path: &Path, e: impl std::fmt::Display) -> Failure {
    let e = e.to_string();
    // Written by another version: not damaged, only old (or new).
    if e.starts_with("graph cache format version") {
        let e = e.split(';').next().unwrap_or(&e);
        return Failure::input(format!(
            "{}: {e}: it was written by another version of postmortem; build it again with `postmortem cfg build PROG.bc -o {}` (PROG.bc: the program's LLVM IR)",
            path.display(),
            path.display()
        ));
    }
    Failure::input(format!(
        "{}: {e}: this graph cache (.pmcfg) is cut short or corrupt (an interrupted copy or `cfg build`?); build it again with `postmortem cfg build PROG.bc -o {}`, or pass the .ll/.bc or GraphML itself as --cfg",
        path.display(),
        path.display()
    ))
}

/// `cfg build`: reads any graph and writes its binary cache to `output`.
///
/// The cache of an instrumented build (IR with SanitizerCoverage flags)
/// keeps the flag map too, so that `--core` works with it: it is then the
/// front-end's wire format (graph, front-end report, flag map), told apart
/// from a plain cache by its magic.
pub fn build_cache(input: &Path, output: &Path) -> Result<(), Failure> {
    let limit = crate::solvers::default_memory_budget() as u64;
    check_graph_file(input, limit)?;
    let (bytes, g, flags) = if sniff(input) == GraphFormat::Llvm {
        let loaded = crate::frontend::load_ir(input, limit)?;
        eprintln!("postmortem: note: {}", loaded.report.summary());
        let has_vars = loaded.vars.as_ref().is_some_and(|v| !v.vars.is_empty());
        match &loaded.sancov {
            Some(m) => (
                encode_loaded(&loaded),
                loaded.icfg.clone(),
                Some(m.flags.len()),
            ),
            None if has_vars => (encode_loaded(&loaded), loaded.icfg.clone(), None),
            None => (pmcfg::encode(&loaded.icfg), loaded.icfg, None),
        }
    } else {
        let (g, flags, vars) = load_graph_with_maps(input, limit)?;
        let n = flags.as_ref().map(|m| m.flags.len());
        if flags.is_some() || vars.is_some() {
            let loaded = postmortem_formats::frontend::Loaded {
                icfg: g,
                report: Default::default(),
                sancov: flags,
                vars,
            };
            (encode_loaded(&loaded), loaded.icfg, n)
        } else {
            (pmcfg::encode(&g), g, None)
        }
    };
    std::fs::write(output, &bytes)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", output.display())))?;
    crate::exit::write_out(|out| {
        writeln!(
            out,
            "wrote {}: {} nodes, {} edges, {} functions, {} bytes{}",
            output.display(),
            g.num_nodes(),
            g.num_edges(),
            g.functions().len(),
            bytes.len(),
            match flags {
                Some(n) => format!(", with the map of {n} coverage flags"),
                None => String::new(),
            }
        )
    })
}
