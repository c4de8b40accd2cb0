//! The interprocedural control-flow graph (ICFG).
//!
//! Nodes are statements, call sites, function entries and exits, with dense
//! [`NodeId`]s. Edges are of three kinds ([`EdgeKind`]):
//!
//! * `Local`: intraprocedural flow;
//! * `Call`: call site -> callee entry (several callees allowed);
//! * `Return`: callee exit -> the return site of every call site calling it.
//!
//! A call site with at least one callee in the program does *not* flow
//! directly to its return site: control goes through the callee. A call
//! whose callee is not in the program (library code) just flows on. The
//! return sites of every call site are kept in a side table for the
//! context-sensitive solver, which matches calls with returns.
//!
//! The graph is built once with [`IcfgBuilder`] and then frozen: forward and
//! backward adjacency are CSR arrays, strings live in pools, and lookup of an
//! input id goes through an open-addressing hash index (4 bytes per slot), so a million-node program
//! stays far below 1 GB.

use crate::graph::Csr;
use crate::ids::{FileId, FuncId, NodeId};
use std::collections::HashMap;

mod builder;
mod parts;
mod pool;
#[cfg(test)]
mod tests;

pub use builder::{BuildError, CallNote, IcfgBuilder, NodeSpec};
pub use parts::{IcfgParts, PartsError, StrTable};
use pool::{ExtIndex, StrPool};

/// What a node is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A function's entry.
    Entry,
    /// A function's exit.
    Exit,
    /// A call instruction.
    CallSite,
    /// Any other statement.
    Statement,
}

impl NodeKind {
    /// Lower-case name, as used in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exit => "exit",
            NodeKind::CallSite => "call-site",
            NodeKind::Statement => "statement",
        }
    }
}

/// What an edge is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Intraprocedural flow.
    Local,
    /// Call site to callee entry.
    Call,
    /// Callee exit to a return site.
    Return,
}

/// A function of the program.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its name.
    pub name: Box<str>,
    /// Its source file, when known.
    pub file: Option<FileId>,
    /// Its entry node, when it has one in the graph.
    pub entry: Option<NodeId>,
    /// Its exit node, when it has one in the graph.
    pub exit: Option<NodeId>,
}

/// A frozen interprocedural control-flow graph.
#[derive(Clone, Debug)]
pub struct Icfg {
    kinds: Vec<NodeKind>,
    funcs_of: Vec<FuncId>,
    ext: StrPool,
    ext_index: ExtIndex,
    labels: StrPool,
    line_ends: Vec<u32>,
    lines: Vec<u32>,
    functions: Vec<Function>,
    files: Vec<Box<str>>,
    succ: Csr,
    succ_kind: Vec<EdgeKind>,
    pred: Csr,
    pred_kind: Vec<EdgeKind>,
    return_sites: Csr,
    start: NodeId,
    columns: Vec<u32>,
    call_notes: Vec<(u32, CallNote)>,
    func_lookup: HashMap<Box<str>, FuncId>,
    async_funcs: Vec<FuncId>,
    async_regs: Vec<(NodeId, FuncId)>,
    weak_lines: Vec<(NodeId, u32)>,
    /// (function, line) pairs, sorted: see [`Icfg::inlined_lines`].
    inlined_lines: Vec<(FuncId, u32)>,
    /// (node, column) pairs, sorted: see [`Icfg::instruction_columns`].
    instruction_columns: Vec<(NodeId, u32)>,
    tail_calls: Vec<NodeId>,
    /// The functions' call graph, built on first use ([`Icfg::call_graph`]).
    call_graph: std::sync::OnceLock<CallGraph>,
    /// Each function's nodes, built on first use ([`Icfg::function_nodes`]):
    /// offsets by function index, then the nodes.
    func_nodes: std::sync::OnceLock<(Vec<usize>, Vec<NodeId>)>,
}

/// The functions' call graph ([`Icfg::call_graph`]): built once per graph
/// for what every exploration of the context-sensitive solver asks of it
/// (which callees' contexts keep an automaton, which functions can reach
/// a segment's end). Before, each exploration walked every edge of the
/// graph for it: about a sixth of a value stage's exploration on bzip2.
#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Caller to callees, by function index, deduplicated.
    pub callees: Csr,
    /// Callee to callers, by function index, deduplicated.
    pub callers: Csr,
    /// Per function: it may leave other than by returning to its caller
    /// (a `Local` edge into another function, a jump, or a call whose
    /// return site is in another function).
    pub leaves: Vec<bool>,
    /// Whether any function may leave so.
    pub any_leaves: bool,
    /// The strongly connected components of `callees`.
    pub sccs: crate::algo::Sccs,
}

impl CallGraph {
    fn of(g: &Icfg) -> CallGraph {
        let nf = g.functions().len();
        let mut calls: Vec<(u32, u32)> = Vec::new();
        let mut leaves = vec![false; nf];
        for v in g.nodes() {
            let f = g.func_of(v);
            for (w, kind) in g.succs(v) {
                let other = g.func_of(w) != f;
                match kind {
                    EdgeKind::Local if other => leaves[f.index()] = true,
                    EdgeKind::Call => {
                        calls.push((f.index() as u32, g.func_of(w).index() as u32));
                        if g.return_sites(v).any(|r| g.func_of(r) != f) {
                            leaves[f.index()] = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        calls.sort_unstable();
        calls.dedup();
        let callees = Csr::from_edges(nf, &calls);
        let mut back: Vec<(u32, u32)> = calls.iter().map(|&(a, b)| (b, a)).collect();
        back.sort_unstable();
        let callers = Csr::from_edges(nf, &back);
        let sccs = crate::algo::Sccs::compute(&callees, |_| true);
        CallGraph {
            callees,
            callers,
            any_leaves: leaves.iter().any(|&l| l),
            leaves,
            sccs,
        }
    }
}

/// The distinct functions of a registration list, sorted.
fn async_functions_of(regs: &[(NodeId, FuncId)]) -> Vec<FuncId> {
    let mut f: Vec<FuncId> = regs.iter().map(|r| r.1).collect();
    f.sort_unstable();
    f.dedup();
    f
}

impl Icfg {
    /// The functions' call graph (built on first use, then shared).
    pub fn call_graph(&self) -> &CallGraph {
        self.call_graph.get_or_init(|| CallGraph::of(self))
    }

    /// The nodes of function `f`, in node order (the index is built on
    /// first use, then shared): what a scan of every node for `f`'s gave,
    /// which the marks of stack residue made once per call site (on
    /// SQLite's plain core, 0.1 s of hash lookups).
    pub fn function_nodes(&self, f: FuncId) -> &[NodeId] {
        let (start, nodes) = self.func_nodes.get_or_init(|| {
            let nf = self.functions.len();
            let mut start = vec![0usize; nf + 1];
            for f in &self.funcs_of {
                start[f.index() + 1] += 1;
            }
            for i in 0..nf {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            let mut nodes = vec![NodeId(0); self.funcs_of.len()];
            for (v, f) in self.funcs_of.iter().enumerate() {
                nodes[fill[f.index()]] = NodeId(v as u32);
                fill[f.index()] += 1;
            }
            (start, nodes)
        });
        &nodes[start[f.index()]..start[f.index() + 1]]
    }

    /// Where asynchronous functions are registered: (the call site that
    /// installs the signal handler or starts the thread, the function),
    /// sorted. The function may run only after its site ran.
    pub fn async_registrations(&self) -> &[(NodeId, FuncId)] {
        &self.async_regs
    }

    /// Functions that may start running asynchronously, outside the path
    /// of the crashing thread (signal handlers, thread start routines),
    /// sorted. Their code may have run whatever that path was; see
    /// [`crate::concurrency`].
    pub fn async_functions(&self) -> &[FuncId] {
        &self.async_funcs
    }

    /// Call sites the front-end marked as possible tail calls (LLVM's
    /// `tail` or `musttail`), sorted: only those may be compiled as a
    /// jump (a sibling call), which leaves the caller's frame off the
    /// stack. `-O0` code has none.
    pub fn tail_calls(&self) -> &[NodeId] {
        &self.tail_calls
    }
    /// Whether `site` may be compiled as a jump (see [`Icfg::tail_calls`]).
    pub fn is_tail_call(&self, site: NodeId) -> bool {
        self.tail_calls.binary_search(&site).is_ok()
    }

    /// A node's source column, when the front-end knew it.
    pub fn column(&self, n: NodeId) -> Option<u32> {
        self.columns.get(n.index()).copied().filter(|&c| c != 0)
    }
    /// What the front-end recorded about a call site, if anything.
    pub fn call_note(&self, site: NodeId) -> Option<&CallNote> {
        self.call_notes
            .binary_search_by_key(&site.0, |x| x.0)
            .ok()
            .map(|i| &self.call_notes[i].1)
    }
    /// All call sites with a [`CallNote`].
    pub fn call_notes(&self) -> impl Iterator<Item = (NodeId, &CallNote)> + '_ {
        self.call_notes.iter().map(|(n, c)| (NodeId(*n), c))
    }
    /// The function called `name`.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.func_lookup.get(name).copied()
    }
    /// The in-program callees of a call site (targets of its call edges).
    pub fn callees(&self, site: NodeId) -> impl Iterator<Item = FuncId> + '_ {
        self.succs(site)
            .filter(|e| e.1 == EdgeKind::Call)
            .map(|(e, _)| self.func_of(e))
    }
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.kinds.len()
    }
    /// Number of edges (all kinds).
    pub fn num_edges(&self) -> usize {
        self.succ.num_edges()
    }
    /// All node ids.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeId> + Clone {
        (0..self.kinds.len() as u32).map(NodeId)
    }
    /// The program's start node.
    pub fn start(&self) -> NodeId {
        self.start
    }
    /// A node's kind.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.kinds[n.index()]
    }
    /// A node's owning function.
    pub fn func_of(&self, n: NodeId) -> FuncId {
        self.funcs_of[n.index()]
    }
    /// The id the node had in the input.
    pub fn ext_id(&self, n: NodeId) -> &str {
        self.ext.get(n.index())
    }
    /// A node's display label.
    pub fn label(&self, n: NodeId) -> &str {
        self.labels.get(n.index())
    }
    /// The source lines of a node (possibly none).
    pub fn lines(&self, n: NodeId) -> &[u32] {
        let i = n.index();
        let start = if i == 0 {
            0
        } else {
            self.line_ends[i - 1] as usize
        };
        &self.lines[start..self.line_ends[i] as usize]
    }
    /// The node's weak lines (see [`IcfgBuilder::add_weak_line`]): lines of
    /// instructions it executes whose location may be borrowed. They are
    /// not in [`Icfg::lines`]; a line summary counts them only against No.
    pub fn weak_lines(&self, n: NodeId) -> impl Iterator<Item = u32> + '_ {
        let start = self.weak_lines.partition_point(|&(m, _)| m < n);
        self.weak_lines[start..]
            .iter()
            .take_while(move |&&(m, _)| m == n)
            .map(|&(_, l)| l)
    }
    /// The lines of `f`'s nodes that come only from code inlined into it
    /// (an optimised build: a callee's statements, in `f`'s file), none of
    /// `f`'s own statements; ascending. Empty when the front-end does not
    /// know (GraphML, JSON graphs) or nothing was inlined.
    pub fn inlined_lines(&self, f: FuncId) -> impl Iterator<Item = u32> + '_ {
        let start = self.inlined_lines.partition_point(|&(g, _)| g < f);
        self.inlined_lines[start..]
            .iter()
            .take_while(move |&&(g, _)| g == f)
            .map(|&(_, l)| l)
    }
    /// The columns of the instructions of node `n` (all on its line),
    /// ascending, when the front-end records them: the LLVM front-end
    /// does for unoptimised functions, whose instructions keep their own
    /// locations in the binary. Empty: not known. With them, the pc of a
    /// crash (its line and column in the binary's line table) names the
    /// nodes it may be in.
    pub fn instruction_columns(&self, n: NodeId) -> impl Iterator<Item = u32> + '_ {
        let start = self.instruction_columns.partition_point(|&(m, _)| m < n);
        self.instruction_columns[start..]
            .iter()
            .take_while(move |&&(m, _)| m == n)
            .map(|&(_, c)| c)
    }
    /// The source file of a node (its function's file).
    pub fn file_of(&self, n: NodeId) -> Option<FileId> {
        self.functions[self.func_of(n).index()].file
    }
    /// Looks a node up by its input id.
    pub fn lookup(&self, ext_id: &str) -> Option<NodeId> {
        self.ext_index.find(&self.ext, ext_id).map(NodeId)
    }
    /// All functions, indexed by [`FuncId`].
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }
    /// One function.
    pub fn function(&self, f: FuncId) -> &Function {
        &self.functions[f.index()]
    }
    /// A file's path.
    pub fn file_path(&self, f: FileId) -> &str {
        &self.files[f.index()]
    }
    /// Number of distinct files.
    pub fn num_files(&self) -> usize {
        self.files.len()
    }
    /// Successors with the kind of each edge.
    pub fn succs(&self, n: NodeId) -> impl ExactSizeIterator<Item = (NodeId, EdgeKind)> + '_ {
        let r = self.succ.edge_range(n.0);
        self.succ
            .succs(n.0)
            .iter()
            .zip(&self.succ_kind[r])
            .map(|(&t, &k)| (NodeId(t), k))
    }
    /// Predecessors with the kind of each edge.
    pub fn preds(&self, n: NodeId) -> impl ExactSizeIterator<Item = (NodeId, EdgeKind)> + '_ {
        let r = self.pred.edge_range(n.0);
        self.pred
            .succs(n.0)
            .iter()
            .zip(&self.pred_kind[r])
            .map(|(&t, &k)| (NodeId(t), k))
    }
    /// The forward adjacency as raw CSR (for the solvers).
    pub fn succ_csr(&self) -> &Csr {
        &self.succ
    }
    /// The backward adjacency as raw CSR (for the solvers).
    pub fn pred_csr(&self) -> &Csr {
        &self.pred
    }
    /// The return sites of a call site (its flow successors in the input).
    pub fn return_sites(&self, site: NodeId) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.return_sites.succs(site.0).iter().map(|&t| NodeId(t))
    }
    /// Number of call sites (nodes of kind [`NodeKind::CallSite`]).
    pub fn num_call_sites(&self) -> usize {
        self.kinds
            .iter()
            .filter(|&&k| k == NodeKind::CallSite)
            .count()
    }
    /// Approximate heap bytes held by the graph.
    pub fn heap_bytes(&self) -> usize {
        self.kinds.capacity()
            + self.funcs_of.capacity() * 4
            + self.ext.heap_bytes()
            + self.ext_index.heap_bytes()
            + self.labels.heap_bytes()
            + (self.line_ends.capacity() + self.lines.capacity()) * 4
            + self.weak_lines.capacity() * 8
            + self.inlined_lines.capacity() * 8
            + self.instruction_columns.capacity() * 8
            + self.tail_calls.capacity() * 4
            + self.succ.heap_bytes()
            + self.pred.heap_bytes()
            + self.return_sites.heap_bytes()
            + self.succ_kind.capacity()
            + self.pred_kind.capacity()
            + self.functions.capacity() * std::mem::size_of::<Function>()
            + self.functions.iter().map(|f| f.name.len()).sum::<usize>()
            + self.files.iter().map(|f| f.len()).sum::<usize>()
    }
}
