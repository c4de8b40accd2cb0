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

/// Append-only string pool addressed by `u32` offsets.
#[derive(Clone, Debug, Default)]
struct StrPool {
    bytes: String,
    ends: Vec<u32>,
}

impl StrPool {
    fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len() as u32);
    }
    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
    fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 4
    }
}

/// Open-addressing hash index from input ids (strings in a [`StrPool`])
/// to node indices: 4 bytes per slot, no per-node allocation.
#[derive(Clone, Debug, Default)]
struct ExtIndex {
    slots: Vec<u32>,
    len: usize,
}

const EMPTY: u32 = u32::MAX;

/// A fast non-cryptographic string hash (word-at-a-time multiply-rotate,
/// in the spirit of FxHash). Input ids are not adversarial keys: a
/// collision only costs time.
fn hash_str(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = s.len() as u64;
    let b = s.as_bytes();
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    let r = chunks.remainder();
    tail[..r.len()].copy_from_slice(r);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 29)
}

impl ExtIndex {
    fn find(&self, pool: &StrPool, key: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash_str(key) as usize & mask;
        loop {
            let v = self.slots[i];
            if v == EMPTY {
                return None;
            }
            if pool.get(v as usize) == key {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }
    /// Inserts node `v` (whose id is `pool.get(v)`); returns false if the
    /// id is already present.
    fn insert(&mut self, pool: &StrPool, v: u32) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(pool);
        }
        let key = pool.get(v as usize);
        let mask = self.slots.len() - 1;
        let mut i = hash_str(key) as usize & mask;
        loop {
            let w = self.slots[i];
            if w == EMPTY {
                self.slots[i] = v;
                self.len += 1;
                return true;
            }
            if pool.get(w as usize) == key {
                return false;
            }
            i = (i + 1) & mask;
        }
    }
    fn grow(&mut self, pool: &StrPool) {
        let cap = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; cap]);
        let mask = cap - 1;
        for v in old.into_iter().filter(|&v| v != EMPTY) {
            let mut i = hash_str(pool.get(v as usize)) as usize & mask;
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = v;
        }
    }
    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
    }
}

/// Everything needed to add one node.
#[derive(Clone, Debug)]
pub struct NodeSpec<'a> {
    /// The id it had in the input (unique).
    pub ext_id: &'a str,
    /// Its kind.
    pub kind: NodeKind,
    /// Its owning function.
    pub func: FuncId,
    /// A short display label.
    pub label: &'a str,
    /// Source lines it comes from (may be empty).
    pub lines: &'a [u32],
}

/// Errors found while freezing a graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// Two nodes carry the same input id.
    DuplicateNode(String),
    /// A function has two entry (or two exit) nodes.
    DuplicateEntryOrExit {
        /// The function's name.
        function: String,
        /// The second node's input id.
        node: String,
    },
    /// A call edge does not lead to an entry node.
    CallToNonEntry {
        /// The call site's input id.
        site: String,
        /// The target's input id.
        target: String,
    },
    /// No start node: no explicit start, no `main`, and not exactly one entry.
    NoStart {
        /// How many entry nodes there are.
        entries: usize,
    },
    /// The graph has no node at all.
    Empty,
    /// More nodes or edges than 32-bit ids can hold.
    TooLarge,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::DuplicateNode(id) => write!(f, "node id `{id}` is defined twice"),
            BuildError::DuplicateEntryOrExit { function, node } => {
                write!(f, "function `{function}` has a second entry or exit node `{node}`")
            }
            BuildError::CallToNonEntry { site, target } => {
                write!(f, "call edge from `{site}` leads to `{target}`, which is not a function entry")
            }
            BuildError::NoStart { entries } => write!(
                f,
                "cannot tell where the program starts: no explicit start node, no `main`, and {entries} entry nodes"
            ),
            BuildError::Empty => write!(f, "the graph has no control-flow node"),
            BuildError::TooLarge => write!(f, "the graph is too large for 32-bit ids"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Builds an [`Icfg`]. Nodes and edges may be added in any order; edges refer
/// to nodes by the [`NodeId`] returned by [`IcfgBuilder::add_node`].
#[derive(Default)]
pub struct IcfgBuilder {
    kinds: Vec<NodeKind>,
    funcs_of: Vec<FuncId>,
    ext: StrPool,
    labels: StrPool,
    line_ends: Vec<u32>,
    lines: Vec<u32>,
    ext_index: ExtIndex,
    functions: Vec<Function>,
    func_lookup: HashMap<Box<str>, FuncId>,
    files: Vec<Box<str>>,
    file_lookup: HashMap<Box<str>, FileId>,
    flow: Vec<(u32, u32)>,
    calls: Vec<(u32, u32)>,
    external_callee: Vec<u32>,
    start: Option<NodeId>,
    columns: Vec<(u32, u32)>,
    call_notes: Vec<(u32, CallNote)>,
}

/// What a front-end knows about a call site beyond its call edges: the
/// names of callees outside the program and constant string arguments
/// (format strings, for matching log lines).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallNote {
    /// Names of callees that are not in the graph (library functions).
    pub external_callees: Vec<Box<str>>,
    /// Constant string arguments, in argument order.
    pub string_args: Vec<Box<str>>,
}

impl IcfgBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the function called `name`, creating it if needed.
    pub fn function(&mut self, name: &str) -> FuncId {
        if let Some(&f) = self.func_lookup.get(name) {
            return f;
        }
        let f = FuncId::new(self.functions.len());
        self.functions.push(Function { name: name.into(), file: None, entry: None, exit: None });
        self.func_lookup.insert(name.into(), f);
        f
    }

    /// Sets the source file of a function.
    pub fn set_function_file(&mut self, f: FuncId, file: &str) {
        let id = match self.file_lookup.get(file) {
            Some(&id) => id,
            None => {
                let id = FileId::new(self.files.len());
                self.files.push(file.into());
                self.file_lookup.insert(file.into(), id);
                id
            }
        };
        self.functions[f.index()].file = Some(id);
    }

    /// Adds a node. Its input id must be new.
    pub fn add_node(&mut self, spec: NodeSpec<'_>) -> Result<NodeId, BuildError> {
        if self.ext_index.find(&self.ext, spec.ext_id).is_some() {
            return Err(BuildError::DuplicateNode(spec.ext_id.to_string()));
        }
        if self.kinds.len() >= u32::MAX as usize - 2 {
            return Err(BuildError::TooLarge);
        }
        let id = NodeId::new(self.kinds.len());
        let func = &mut self.functions[spec.func.index()];
        let slot = match spec.kind {
            NodeKind::Entry => Some(&mut func.entry),
            NodeKind::Exit => Some(&mut func.exit),
            _ => None,
        };
        if let Some(slot) = slot {
            if slot.is_some() {
                return Err(BuildError::DuplicateEntryOrExit {
                    function: func.name.to_string(),
                    node: spec.ext_id.to_string(),
                });
            }
            *slot = Some(id);
        }
        self.kinds.push(spec.kind);
        self.funcs_of.push(spec.func);
        self.ext.push(spec.ext_id);
        self.labels.push(spec.label);
        self.lines.extend_from_slice(spec.lines);
        self.line_ends.push(self.lines.len() as u32);
        self.ext_index.insert(&self.ext, id.0);
        Ok(id)
    }

    /// The node added with input id `ext_id`, if any.
    pub fn lookup(&self, ext_id: &str) -> Option<NodeId> {
        self.ext_index.find(&self.ext, ext_id).map(NodeId)
    }

    /// The kind of a node added so far.
    pub fn kind_of(&self, n: NodeId) -> NodeKind {
        self.kinds[n.index()]
    }

    /// Number of nodes added so far.
    pub fn num_nodes(&self) -> usize {
        self.kinds.len()
    }

    /// Adds an intraprocedural flow edge.
    pub fn add_flow_edge(&mut self, from: NodeId, to: NodeId) {
        self.flow.push((from.0, to.0));
    }

    /// Adds a call edge from a call site to a callee's entry.
    pub fn add_call_edge(&mut self, site: NodeId, callee_entry: NodeId) {
        self.calls.push((site.0, callee_entry.0));
    }

    /// Records that `site` may also call code outside the program, so that
    /// control may flow straight on to its return site.
    pub fn add_external_callee(&mut self, site: NodeId) {
        self.external_callee.push(site.0);
    }

    /// Sets the source column of a node (debug info; 0 = unknown).
    pub fn set_column(&mut self, n: NodeId, col: u32) {
        self.columns.push((n.0, col));
    }

    /// Records that call site `site` calls `name`, a function outside the
    /// program (this does not add an edge: see [`IcfgBuilder::add_external_callee`]).
    pub fn add_external_callee_name(&mut self, site: NodeId, name: &str) {
        self.note(site).external_callees.push(name.into());
    }

    /// Records a constant string argument of call site `site`.
    pub fn add_string_arg(&mut self, site: NodeId, s: &str) {
        self.note(site).string_args.push(s.into());
    }

    fn note(&mut self, site: NodeId) -> &mut CallNote {
        if self.call_notes.last().is_none_or(|(n, _)| *n != site.0) {
            self.call_notes.push((site.0, CallNote::default()));
        }
        &mut self.call_notes.last_mut().expect("just pushed").1
    }

    /// Sets the program's start node explicitly.
    pub fn set_start(&mut self, start: NodeId) {
        self.start = Some(start);
    }

    /// Freezes the graph (see the module docs for the edge semantics).
    pub fn build(mut self) -> Result<Icfg, BuildError> {
        let n = self.kinds.len();
        if n == 0 {
            return Err(BuildError::Empty);
        }
        for &(site, target) in &self.calls {
            if self.kinds[target as usize] != NodeKind::Entry {
                return Err(BuildError::CallToNonEntry {
                    site: self.ext.get(site as usize).to_string(),
                    target: self.ext.get(target as usize).to_string(),
                });
            }
        }
        self.calls.sort_unstable();
        self.calls.dedup();
        self.flow.sort_unstable();
        self.flow.dedup();
        let mut has_callee = vec![false; n];
        for &(site, _) in &self.calls {
            has_callee[site as usize] = true;
        }
        let mut falls_through = vec![false; n];
        for &site in &self.external_callee {
            falls_through[site as usize] = true;
        }
        // Return sites: the flow successors of every call site with a callee.
        let mut return_sites: Vec<(u32, u32)> = Vec::new();
        let mut edges: Vec<(u32, u32, EdgeKind)> = Vec::with_capacity(self.flow.len() + 2 * self.calls.len());
        for &(a, b) in &self.flow {
            if has_callee[a as usize] {
                return_sites.push((a, b));
                if !falls_through[a as usize] {
                    continue;
                }
            }
            edges.push((a, b, EdgeKind::Local));
        }
        // Index return sites by call site.
        let rs_csr = Csr::from_edges(n, &return_sites);
        for &(site, entry) in &self.calls {
            edges.push((site, entry, EdgeKind::Call));
            let callee = self.funcs_of[entry as usize];
            if let Some(exit) = self.functions[callee.index()].exit {
                for &r in rs_csr.succs(site) {
                    edges.push((exit.0, r, EdgeKind::Return));
                }
            }
        }
        edges.sort_unstable_by_key(|&(a, b, k)| (a, b, k as u8));
        edges.dedup_by_key(|e| (e.0, e.1));
        if edges.len() >= u32::MAX as usize {
            return Err(BuildError::TooLarge);
        }
        let fwd_pairs: Vec<(u32, u32)> = edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let succ = Csr::from_edges(n, &fwd_pairs);
        let succ_kind: Vec<EdgeKind> = edges.iter().map(|e| e.2).collect();
        let mut rev: Vec<(u32, u32, EdgeKind)> = edges.iter().map(|&(a, b, k)| (b, a, k)).collect();
        rev.sort_unstable_by_key(|&(a, b, _)| (a, b));
        let pred = Csr::from_edges(n, &rev.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>());
        let pred_kind: Vec<EdgeKind> = rev.iter().map(|e| e.2).collect();

        let start = match self.start {
            Some(s) => s,
            None => {
                let main = self.func_lookup.get("main").and_then(|&f| self.functions[f.index()].entry);
                match main {
                    Some(m) => m,
                    None => {
                        let entries: Vec<_> = self.functions.iter().filter_map(|f| f.entry).collect();
                        if entries.len() == 1 {
                            entries[0]
                        } else {
                            return Err(BuildError::NoStart { entries: entries.len() });
                        }
                    }
                }
            }
        };
        let columns = if self.columns.is_empty() {
            Vec::new()
        } else {
            let mut c = vec![0u32; n];
            for &(v, col) in &self.columns {
                c[v as usize] = col;
            }
            c
        };
        // Merge notes of the same site (added at different times).
        self.call_notes.sort_by_key(|x| x.0);
        let mut call_notes: Vec<(u32, CallNote)> = Vec::with_capacity(self.call_notes.len());
        for (site, note) in self.call_notes {
            match call_notes.last_mut() {
                Some((s, acc)) if *s == site => {
                    acc.external_callees.extend(note.external_callees);
                    acc.string_args.extend(note.string_args);
                }
                _ => call_notes.push((site, note)),
            }
        }
        let func_lookup = self.func_lookup;
        Ok(Icfg {
            columns,
            call_notes,
            func_lookup,
            kinds: self.kinds,
            funcs_of: self.funcs_of,
            ext: self.ext,
            ext_index: self.ext_index,
            labels: self.labels,
            line_ends: self.line_ends,
            lines: self.lines,
            functions: self.functions,
            files: self.files,
            succ,
            succ_kind,
            pred,
            pred_kind,
            return_sites: rs_csr,
            start,
        })
    }
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
}

impl Icfg {
    /// A node's source column, when the front-end knew it.
    pub fn column(&self, n: NodeId) -> Option<u32> {
        self.columns.get(n.index()).copied().filter(|&c| c != 0)
    }
    /// What the front-end recorded about a call site, if anything.
    pub fn call_note(&self, site: NodeId) -> Option<&CallNote> {
        self.call_notes.binary_search_by_key(&site.0, |x| x.0).ok().map(|i| &self.call_notes[i].1)
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
        self.succs(site).filter(|e| e.1 == EdgeKind::Call).map(|(e, _)| self.func_of(e))
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
        let start = if i == 0 { 0 } else { self.line_ends[i - 1] as usize };
        &self.lines[start..self.line_ends[i] as usize]
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
        self.succ.succs(n.0).iter().zip(&self.succ_kind[r]).map(|(&t, &k)| (NodeId(t), k))
    }
    /// Predecessors with the kind of each edge.
    pub fn preds(&self, n: NodeId) -> impl ExactSizeIterator<Item = (NodeId, EdgeKind)> + '_ {
        let r = self.pred.edge_range(n.0);
        self.pred.succs(n.0).iter().zip(&self.pred_kind[r]).map(|(&t, &k)| (NodeId(t), k))
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
        self.kinds.iter().filter(|&&k| k == NodeKind::CallSite).count()
    }
    /// Approximate heap bytes held by the graph.
    pub fn heap_bytes(&self) -> usize {
        self.kinds.capacity()
            + self.funcs_of.capacity() * 4
            + self.ext.heap_bytes()
            + self.ext_index.heap_bytes()
            + self.labels.heap_bytes()
            + (self.line_ends.capacity() + self.lines.capacity()) * 4
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(b: &mut IcfgBuilder, id: &str, kind: NodeKind, f: FuncId) -> NodeId {
        b.add_node(NodeSpec { ext_id: id, kind, func: f, label: id, lines: &[1] }).unwrap()
    }

    #[test]
    fn calls_go_through_the_callee_and_return_to_every_return_site() {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
        let me = node(&mut b, "me", NodeKind::Entry, main);
        let c1 = node(&mut b, "c1", NodeKind::CallSite, main);
        let r1 = node(&mut b, "r1", NodeKind::Statement, main);
        let c2 = node(&mut b, "c2", NodeKind::CallSite, main);
        let mx = node(&mut b, "mx", NodeKind::Exit, main);
        let fe = node(&mut b, "fe", NodeKind::Entry, f);
        let fx = node(&mut b, "fx", NodeKind::Exit, f);
        let lib = node(&mut b, "lib", NodeKind::CallSite, main);
        b.add_flow_edge(me, c1);
        b.add_flow_edge(c1, r1);
        b.add_flow_edge(r1, c2);
        b.add_flow_edge(c2, lib);
        b.add_flow_edge(lib, mx);
        b.add_flow_edge(fe, fx);
        b.add_call_edge(c1, fe);
        b.add_call_edge(c2, fe);
        let g = b.build().unwrap();
        assert_eq!(g.start(), me);
        let s: Vec<_> = g.succs(c1).collect();
        assert_eq!(s, vec![(fe, EdgeKind::Call)]);
        let mut s: Vec<_> = g.succs(fx).collect();
        s.sort_by_key(|x| x.0);
        assert_eq!(s, vec![(r1, EdgeKind::Return), (lib, EdgeKind::Return)]);
        assert_eq!(g.succs(lib).collect::<Vec<_>>(), vec![(mx, EdgeKind::Local)]);
        assert_eq!(g.return_sites(c2).collect::<Vec<_>>(), vec![lib]);
        assert_eq!(g.lookup("r1"), Some(r1));
        assert_eq!(g.lookup("nope"), None);
        assert_eq!(g.preds(r1).collect::<Vec<_>>(), vec![(fx, EdgeKind::Return)]);
    }

    #[test]
    fn start_falls_back_to_the_only_entry_and_errors_otherwise() {
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        let g = b.function("g");
        node(&mut b, "fe", NodeKind::Entry, f);
        node(&mut b, "ge", NodeKind::Entry, g);
        assert_eq!(b.build().unwrap_err(), BuildError::NoStart { entries: 2 });
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        let fe = node(&mut b, "fe", NodeKind::Entry, f);
        assert_eq!(b.build().unwrap().start(), fe);
    }

    #[test]
    fn columns_and_call_notes_survive_the_build() {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let me = node(&mut b, "me", NodeKind::Entry, main);
        let c = node(&mut b, "c", NodeKind::CallSite, main);
        let mx = node(&mut b, "mx", NodeKind::Exit, main);
        b.add_flow_edge(me, c);
        b.add_flow_edge(c, mx);
        b.add_external_callee(c);
        b.add_external_callee_name(c, "printf");
        b.set_column(c, 7);
        b.add_string_arg(c, "Processed %d\n");
        let g = b.build().unwrap();
        assert_eq!(g.column(c), Some(7));
        assert_eq!(g.column(me), None);
        let note = g.call_note(c).unwrap();
        assert_eq!(&*note.external_callees[0], "printf");
        assert_eq!(&*note.string_args[0], "Processed %d\n");
        assert!(g.call_note(me).is_none());
        assert_eq!(g.function_by_name("main"), Some(main));
        assert_eq!(g.callees(c).count(), 0);
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        node(&mut b, "x", NodeKind::Statement, f);
        let e = b.add_node(NodeSpec { ext_id: "x", kind: NodeKind::Statement, func: f, label: "", lines: &[] });
        assert_eq!(e.unwrap_err(), BuildError::DuplicateNode("x".into()));
    }
}
