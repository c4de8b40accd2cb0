//! Lowering of one `llvm-ir` module into an [`Icfg`]. See the crate docs
//! for the mapping; this module follows it in four passes, each a type of
//! its own whose output the next one reads:
//!
//! 1. [`index::ModuleIndex`]: the functions, declarations, aliases and
//!    globals of the module by name, each function with a typed [`FnId`];
//!    the address-taken functions (every reference to a function other
//!    than as the callee of a direct call, in instructions and in global
//!    initializers), constructors and destructors;
//! 2. [`ends::Ends`]: every defined function's entry and exit nodes (so
//!    that call edges can be added in any order);
//! 3. [`bodies::Bodies`]: each function body, block by block, into
//!    statements and call sites; indirect-call and callback targets are
//!    resolved by [`targets::Targets`], constant string arguments read by
//!    [`strings::Strings`]. Its output, [`bodies::CallFacts`], lists the
//!    calls with effects no call edge shows;
//! 4. [`hidden::HiddenFlow`]: the control flow that no call instruction
//!    shows: `longjmp` to every `setjmp` resume point, the `external code`
//!    function that calls back every address-taken function, the
//!    `<program>` start that runs constructors, exit handlers and
//!    destructors around `main`, and the asynchronous functions.

mod bodies;
pub(crate) use bodies::optimised;
mod ends;
mod hidden;
mod index;
mod strings;
mod targets;

use crate::{FrontendReport, LlvmError};
use llvm_ir::{DebugLoc, Function, Instruction, Module, Name};
use postmortem_core::{FuncId, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSpec};
use std::collections::HashMap;

use crate::decls::DeclAttributes;

/// A function of the module, defined or declared: its index in
/// [`index::ModuleIndex`]'s table (definitions first, in module order,
/// then declarations).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) struct FnId(u32);

impl FnId {
    fn new(index: usize) -> Self {
        FnId(u32::try_from(index).expect("function index overflows u32"))
    }

    fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the lowering gives besides the graph and its report.
pub(crate) struct Extras {
    /// The nodes each block produced (for `sancov.rs`).
    pub block_nodes: crate::sancov::BlockNodes,
    /// The node of every `store` instruction (by address in the module).
    pub store_nodes: HashMap<*const Instruction, NodeId>,
    /// The call site node of every `call` that is one.
    pub call_nodes: HashMap<*const Instruction, NodeId>,
    /// The node of every `load`.
    pub load_nodes: HashMap<*const Instruction, NodeId>,
    /// Each defined function's entry node.
    pub entries: HashMap<String, NodeId>,
}

/// Lowers module `m` (`path` names it in errors): the four passes in
/// order, then the graph frozen.
pub(crate) fn lower(
    m: &Module,
    decl_attrs: &DeclAttributes,
    path: &str,
) -> Result<(Icfg, FrontendReport, Extras), LlvmError> {
    let mut report = FrontendReport::default();
    let index = index::ModuleIndex::build(m, decl_attrs, &mut report);
    let mut b = IcfgBuilder::new();
    let ends = ends::Ends::make(&index, &mut b, path, &mut report)?;
    let bodies =
        bodies::Bodies::lower(&index, &ends, b, path, &mut report, &decl_attrs.inlined_at)?;
    let mut b = bodies.builder;
    hidden::HiddenFlow {
        index: &index,
        ends: &ends,
        b: &mut b,
        facts: &bodies.facts,
        path,
        report: &mut report,
    }
    .add()?;
    let g = b.build().map_err(|source| LlvmError::Graph {
        path: path.to_string(),
        source,
    })?;
    report.nodes = g.num_nodes();
    report.edges = g.num_edges();
    report.call_sites = g.num_call_sites();
    let entries = index
        .ids()
        .filter(|&i| index.info(i).def.is_some())
        .filter_map(|i| Some((index.info(i).name.to_string(), ends.entry(i)?)))
        .collect();
    let extras = Extras {
        block_nodes: bodies.block_nodes,
        store_nodes: bodies.store_nodes,
        call_nodes: bodies.call_nodes,
        load_nodes: bodies.load_nodes,
        entries,
    };
    Ok((g, report, extras))
}

/// Adds a node to `b`; a builder error names the module `path`.
fn add_node(
    b: &mut IcfgBuilder,
    path: &str,
    id: &str,
    kind: NodeKind,
    func: FuncId,
    label: &str,
    lines: &[u32],
) -> Result<NodeId, LlvmError> {
    b.add_node(NodeSpec {
        ext_id: id,
        kind,
        func,
        label,
        lines,
    })
    .map_err(|source| LlvmError::Graph {
        path: path.to_string(),
        source,
    })
}

fn name_str(n: &Name) -> String {
    match n {
        Name::Name(s) => s.to_string(),
        Name::Number(k) => k.to_string(),
    }
}

/// A debug-info file as clang wrote it: directory + filename (or the
/// filename alone when it is absolute).
fn file_of(loc: &DebugLoc) -> String {
    match &loc.directory {
        Some(d) if !d.is_empty() && !loc.filename.starts_with('/') => {
            format!("{d}/{}", loc.filename)
        }
        _ => loc.filename.clone(),
    }
}

fn same_file(a: &DebugLoc, b: &DebugLoc) -> bool {
    a.filename == b.filename && a.directory == b.directory
}

/// The source position of an instruction, if it has one in its function's
/// file: (line, column).
type Pos = Option<(u32, u32)>;

/// Where a location is for function `f`.
enum Located {
    /// (line, column) in `f`'s own file.
    At(u32, u32),
    /// No location, or line 0 (compiler-generated code).
    Nowhere,
    /// In another file than `f`'s (inlined from a header, a macro).
    Foreign,
}

fn locate(f: &Function, loc: Option<&DebugLoc>) -> Located {
    let Some(loc) = loc.filter(|l| l.line != 0) else {
        return Located::Nowhere;
    };
    match &f.debugloc {
        Some(fl) if same_file(fl, loc) => Located::At(loc.line, loc.col.unwrap_or(0)),
        _ => Located::Foreign,
    }
}
