//! What the LLVM IR front-end gives, without LLVM: its report
//! ([`FrontendReport`]), the graph with the SanitizerCoverage map
//! ([`Loaded`]), telling IR files apart ([`IrFormat`]), and the format in
//! which the front-end process hands all of that to `postmortem`
//! ([`encode_loaded`], [`decode_loaded`]).
//!
//! The front-end (crate `postmortem-llvm`) links LLVM 14's shared library,
//! which takes the dynamic loader ~15 ms and ~35 MB to map. So it runs as a
//! separate executable, `postmortem-llvm`, only when an IR file is read;
//! the `postmortem` binary reads its output with [`decode_loaded`].
//!
//! # Wire format
//!
//! `PMLLVM\0` and a version byte (8 bytes), the length of a JSON header
//! (u64, little-endian), the JSON header (`{"report": ..., "sancov":
//! ...}`: the [`FrontendReport`] and the [`SancovMap`] with node indices),
//! then the graph as a `.pmcfg` cache ([`crate::pmcfg::encode`], versioned and
//! checksummed). Every node index of the map is checked against the graph.

use crate::image::sancov::{SancovArray, SancovFlag, SancovMap};
use crate::pmcfg::CacheError;
use crate::vars::{NodeOutOfRange, VarMap};
use postmortem_core::{Icfg, NodeId};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What the front-end had to approximate or wants the user to know, with
/// the sizes of what it built. Returned alongside the graph.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FrontendReport {
    /// Defined functions (each with an entry and an exit node).
    pub functions: usize,
    /// Declared functions (outside the program), intrinsics excluded.
    pub declarations: usize,
    /// Nodes of the graph.
    pub nodes: usize,
    /// Edges of the graph (all kinds).
    pub edges: usize,
    /// Call-site nodes.
    pub call_sites: usize,
    /// Call sites with a known callee.
    pub direct_calls: usize,
    /// Direct calls to declarations (they flow through).
    pub external_calls: usize,
    /// Indirect call sites (through a function pointer).
    pub indirect_calls: usize,
    /// Indirect calls with at least one compatible address-taken function.
    pub indirect_resolved: usize,
    /// Indirect calls with no candidate, treated as calls outside the
    /// program.
    pub indirect_unresolved: usize,
    /// Call edges added for indirect calls.
    pub indirect_edges: usize,
    /// Defined functions whose address is taken.
    pub address_taken: usize,
    /// Calls to declarations that got call edges to callbacks passed to
    /// them.
    pub callback_sites: usize,
    /// Calls that never return (their path ends there).
    pub noreturn_calls: usize,
    /// Calls marked `tail`/`musttail`: they may be compiled as a jump
    /// (see [`postmortem_core::Icfg::tail_calls`]).
    pub tail_calls: usize,
    /// Call sites of `setjmp`-like (`returns_twice`) functions.
    pub setjmp_sites: usize,
    /// Non-local jump edges: from `longjmp`-like sites and from external
    /// code to the resume point of every `setjmp`-like site.
    pub longjmp_edges: usize,
    /// Call sites that may run unknown external code (they call the
    /// synthetic `<external code>` function).
    pub external_code_sites: usize,
    /// Address-taken functions that `<external code>` may call back.
    pub external_code_targets: usize,
    /// Calls that register asynchronous roots (signal handlers, thread
    /// start routines).
    pub async_registrations: usize,
    /// Functions that may run asynchronously (see
    /// [`postmortem_core::Icfg::async_functions`]).
    pub async_functions: usize,
    /// C++: plain calls that may throw, given an edge to their function's
    /// exit (the exception leaves the frame).
    pub unwind_edges: usize,
    /// Constructors and destructors (`llvm.global_ctors`/`_dtors`): the
    /// synthetic `<program>` start calls them before and after `main`.
    pub constructors: usize,
    /// `invoke`/`callbr` of inline assembly or an intrinsic (call sites
    /// with no callee in the program).
    pub opaque_calls: usize,
    /// Inline-assembly calls (ordinary instructions).
    pub inline_asm: usize,
    /// `callbr` instructions, whose site flows to every block of its
    /// function.
    pub callbr: usize,
    /// Instructions located in another file than their function (their
    /// line is not recorded).
    pub foreign_locations: usize,
    /// Defined functions without debug info (nodes without lines).
    pub functions_without_debug_info: usize,
    /// Branches to a block that does not exist (malformed input; dropped).
    pub bad_branches: usize,
}

impl FrontendReport {
    /// One line for the user, e.g. for `postmortem: note: ...`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "llvm front-end: {} functions, {} nodes, {} call sites; ",
            self.functions, self.nodes, self.call_sites
        );
        if self.indirect_calls == 0 {
            s.push_str("no indirect calls");
        } else {
            s.push_str(&format!(
                "{} of {} indirect calls resolved to address-taken functions of a compatible type ({} call edges, {} unresolved calls treated as external)",
                self.indirect_resolved, self.indirect_calls, self.indirect_edges, self.indirect_unresolved
            ));
        }
        let extras = [
            (self.callback_sites, "library calls given callback edges"),
            (
                self.external_code_sites,
                "calls into unknown external code (which may call back an address-taken function)",
            ),
            (self.setjmp_sites, "setjmp sites"),
            (self.longjmp_edges, "longjmp edges to setjmp resume points"),
            (
                self.async_functions,
                "functions that may run asynchronously (signal handlers, threads)",
            ),
            (self.unwind_edges, "calls that may throw out of their frame"),
            (
                self.constructors,
                "constructors/destructors run around main",
            ),
            (self.noreturn_calls, "noreturn calls"),
            (self.tail_calls, "tail-marked calls (may be sibling calls)"),
            (self.callbr, "callbr sites over-approximated"),
            (
                self.inline_asm,
                "inline-assembly calls taken as ordinary instructions",
            ),
            (
                self.foreign_locations,
                "instructions located in another file",
            ),
            (
                self.functions_without_debug_info,
                "functions without debug info",
            ),
            (self.bad_branches, "branches to missing blocks dropped"),
        ];
        for (n, what) in extras {
            if n > 0 {
                s.push_str(&format!("; {n} {what}"));
            }
        }
        s
    }
}

/// A graph built from LLVM IR, with the front-end's report.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The graph.
    pub icfg: Icfg,
    /// What the front-end approximated.
    pub report: FrontendReport,
    /// The SanitizerCoverage flags of the module mapped to nodes (see
    /// [`crate::image::sancov`]); None when the module has none.
    pub sancov: Option<SancovMap>,
    /// The variables whose values are evidence (see [`crate::vars`]);
    /// None when not computed (a graph from GraphML or an old cache).
    pub vars: Option<VarMap>,
}

/// The two input forms of LLVM IR.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IrFormat {
    /// Textual IR (`.ll`).
    Text,
    /// Bitcode (`.bc`), raw or in the wrapper format.
    Bitcode,
}

impl IrFormat {
    /// The format of a file from its first bytes and its name: bitcode by
    /// its magic number, textual IR by the `.ll` extension or a leading
    /// `; ModuleID` / `source_filename` line. `None`: not LLVM IR.
    pub fn sniff(path: &Path, head: &[u8]) -> Option<IrFormat> {
        if is_bitcode(head) {
            return Some(IrFormat::Bitcode);
        }
        let ext = path.extension().and_then(|e| e.to_str());
        if ext == Some("ll")
            || head.starts_with(b"; ModuleID")
            || head.starts_with(b"source_filename")
        {
            return Some(IrFormat::Text);
        }
        None
    }
}

/// Whether `head` starts with LLVM's bitcode magic (raw `BC 0xC0DE` or the
/// wrapper `0x0B17C0DE`).
pub fn is_bitcode(head: &[u8]) -> bool {
    head.starts_with(&[0x42, 0x43, 0xC0, 0xDE]) || head.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// The first 8 bytes of the front-end's output: `PMLLVM\0` and the
/// version of the format.
pub const WIRE_MAGIC: [u8; 8] = *b"PMLLVM\0\x01";

#[derive(Serialize, Deserialize)]
struct WireHeader {
    report: FrontendReport,
    sancov: Option<WireSancov>,
    #[serde(default)]
    vars: Option<VarMap>,
}

#[derive(Serialize, Deserialize)]
struct WireSancov {
    arrays: Vec<SancovArray>,
    flags: Vec<WireFlag>,
    inexact: usize,
    unmapped: usize,
}

#[derive(Serialize, Deserialize)]
struct WireFlag {
    array: usize,
    function: String,
    block: String,
    ran: Option<u32>,
    not_ran: Vec<u32>,
    exact: bool,
}

/// The front-end's output for `postmortem` (see the module docs).
pub fn encode_loaded(loaded: &Loaded) -> Vec<u8> {
    let header = WireHeader {
        report: loaded.report.clone(),
        sancov: loaded.sancov.as_ref().map(|m| WireSancov {
            arrays: m.arrays.clone(),
            flags: m
                .flags
                .iter()
                .map(|f| WireFlag {
                    array: f.array,
                    function: f.function.clone(),
                    block: f.block.clone(),
                    ran: f.ran.map(|n| n.as_u32()),
                    not_ran: f.not_ran.iter().map(|n| n.as_u32()).collect(),
                    exact: f.exact,
                })
                .collect(),
            inexact: m.inexact,
            unmapped: m.unmapped,
        }),
        vars: loaded.vars.clone(),
    };
    let json = serde_json::to_vec(&header).expect("the header serializes");
    let graph = crate::pmcfg::encode(&loaded.icfg);
    let mut out = Vec::with_capacity(16 + json.len() + graph.len());
    out.extend_from_slice(&WIRE_MAGIC);
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&graph);
    out
}

/// Why [`decode_loaded`] refused some bytes: one line, without a file
/// name.
#[derive(Debug, thiserror::Error)]
pub enum LoadedError {
    /// Not the magic bytes of this version's output.
    #[error("not the output of this version of postmortem-llvm")]
    NotOurs,
    /// The bytes end inside the header.
    #[error("truncated front-end output")]
    Truncated,
    /// The JSON header does not parse.
    #[error("corrupt front-end output: {0}")]
    Header(serde_json::Error),
    /// The graph does not decode (its message says "graph cache").
    #[error(transparent)]
    Graph(#[from] CacheError),
    /// A flag's node index past the end of the graph.
    #[error("corrupt front-end output: node {node} of a graph of {nodes}")]
    Node {
        /// The index.
        node: u32,
        /// The graph's nodes.
        nodes: usize,
    },
    /// A flag's array index past the end of the arrays.
    #[error("corrupt front-end output: flag array {0}")]
    FlagArray(usize),
    /// A variable's node index past the end of the graph.
    #[error("corrupt front-end output: {0}")]
    Vars(NodeOutOfRange),
}

/// Reads [`encode_loaded`]'s output. The error is one line (no file
/// name: the caller knows where the bytes came from).
pub fn decode_loaded(bytes: &[u8]) -> Result<Loaded, LoadedError> {
    if bytes.len() < 16 || bytes[..8] != WIRE_MAGIC {
        return Err(LoadedError::NotOurs);
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    let json_end = usize::try_from(len)
        .ok()
        .and_then(|l| l.checked_add(16))
        .filter(|&e| e <= bytes.len())
        .ok_or(LoadedError::Truncated)?;
    let header: WireHeader =
        serde_json::from_slice(&bytes[16..json_end]).map_err(LoadedError::Header)?;
    // The graph's own errors already say "corrupt graph cache: ...".
    let icfg = crate::pmcfg::decode(&bytes[json_end..])?;
    let n = icfg.num_nodes();
    let node = |i: u32| -> Result<NodeId, LoadedError> {
        if (i as usize) < n {
            Ok(NodeId::new(i as usize))
        } else {
            Err(LoadedError::Node { node: i, nodes: n })
        }
    };
    let sancov = match header.sancov {
        None => None,
        Some(w) => {
            let mut flags = Vec::with_capacity(w.flags.len());
            for f in w.flags {
                if f.array >= w.arrays.len() {
                    return Err(LoadedError::FlagArray(f.array));
                }
                flags.push(SancovFlag {
                    array: f.array,
                    function: f.function,
                    block: f.block,
                    ran: f.ran.map(node).transpose()?,
                    not_ran: f.not_ran.into_iter().map(node).collect::<Result<_, _>>()?,
                    exact: f.exact,
                });
            }
            Some(SancovMap {
                arrays: w.arrays,
                flags,
                inexact: w.inexact,
                unmapped: w.unmapped,
            })
        }
    };
    if let Some(v) = &header.vars {
        v.check(n).map_err(LoadedError::Vars)?;
    }
    Ok(Loaded {
        icfg,
        report: header.report,
        sancov,
        vars: header.vars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn loaded_errors_keep_their_messages() {
        assert_eq!(
            decode_loaded(b"nothing").unwrap_err().to_string(),
            "not the output of this version of postmortem-llvm"
        );
        assert_eq!(
            LoadedError::FlagArray(5).to_string(),
            "corrupt front-end output: flag array 5"
        );
        let vars = NodeOutOfRange {
            var: "x".into(),
            node: 9,
            nodes: 4,
        };
        assert_eq!(
            LoadedError::Vars(vars).to_string(),
            "corrupt front-end output: variable `x`: node 9 out of range (graph of 4 nodes)"
        );
        assert_eq!(
            LoadedError::Graph(CacheError::Checksum).to_string(),
            "corrupt graph cache: checksum mismatch"
        );
    }
    use postmortem_testkit::testgen::{random_icfg, GraphShape, Rng};

    fn loaded() -> Loaded {
        let icfg = random_icfg(&mut Rng::new(7), &GraphShape::default());
        let n = icfg.num_nodes();
        Loaded {
            icfg,
            report: FrontendReport {
                functions: 3,
                nodes: n,
                indirect_calls: 2,
                ..FrontendReport::default()
            },
            sancov: Some(SancovMap {
                arrays: vec![SancovArray {
                    global: "__sancov_gen_.1".into(),
                    function: Some("main".into()),
                    len: 2,
                    first_flag: 0,
                }],
                flags: vec![
                    SancovFlag {
                        array: 0,
                        function: "main".into(),
                        block: "%3".into(),
                        ran: Some(NodeId::new(n - 1)),
                        not_ran: vec![NodeId::new(0), NodeId::new(1)],
                        exact: true,
                    },
                    SancovFlag {
                        array: 0,
                        function: "main".into(),
                        block: "%9".into(),
                        ran: None,
                        not_ran: vec![],
                        exact: false,
                    },
                ],
                inexact: 1,
                unmapped: 0,
            }),
            vars: None,
        }
    }

    #[test]
    fn the_wire_format_round_trips() {
        let l = loaded();
        let back = decode_loaded(&encode_loaded(&l)).unwrap();
        assert_eq!(
            crate::pmcfg::encode(&back.icfg),
            crate::pmcfg::encode(&l.icfg)
        );
        assert_eq!(back.report, l.report);
        assert_eq!(back.sancov, l.sancov);
        let plain = Loaded { sancov: None, ..l };
        assert_eq!(decode_loaded(&encode_loaded(&plain)).unwrap().sancov, None);
    }

    #[test]
    fn corrupt_wire_output_is_an_error_not_a_panic() {
        let bytes = encode_loaded(&loaded());
        for cut in [0, 7, 15, 16, 40, bytes.len() - 1] {
            assert!(decode_loaded(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = bytes.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_loaded(&huge).is_err());
        // A node index out of the graph.
        let mut l = loaded();
        let n = l.icfg.num_nodes();
        l.sancov.as_mut().unwrap().flags[1].not_ran = vec![NodeId::new(n)];
        let e = decode_loaded(&encode_loaded(&l)).unwrap_err();
        let e = e.to_string();
        assert!(e.contains(&format!("node {n} of a graph of {n}")), "{e}");
    }
}
