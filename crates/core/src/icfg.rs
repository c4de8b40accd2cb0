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
    async_regs: Vec<(NodeId, FuncId)>,
    weak_lines: Vec<(NodeId, u32)>,
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
        self.functions.push(Function {
            name: name.into(),
            file: None,
            entry: None,
            exit: None,
        });
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

    /// The flow edges added so far, in the order they were added.
    pub fn flow_edges(&self) -> impl Iterator<Item = (NodeId, NodeId)> + '_ {
        self.flow.iter().map(|&(a, b)| (NodeId(a), NodeId(b)))
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

    /// Records that function `f` may start running asynchronously, outside
    /// the path of the thread that crashed, once the call site
    /// `registered_at` ran: a signal handler installed there or a thread
    /// started there (see [`Icfg::async_registrations`]).
    pub fn mark_async(&mut self, f: FuncId, registered_at: NodeId) {
        self.async_regs.push((registered_at, f));
    }

    /// Records that node `n` executes an instruction located on `line`
    /// whose location may be borrowed from another statement (a branch
    /// alone in its block: a `case` label falling through carries the
    /// previous case's `break;`, but a loop's entry branch is the loop's
    /// own line). A weak line cannot make its line Yes, and keeps it from
    /// being No while `n` may have run (see [`Icfg::weak_lines`]).
    pub fn add_weak_line(&mut self, n: NodeId, line: u32) {
        self.weak_lines.push((n, line));
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
        let (edges, return_sites) = self.edges()?;
        let fwd_pairs: Vec<(u32, u32)> = edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let succ = Csr::from_edges(n, &fwd_pairs);
        let succ_kind: Vec<EdgeKind> = edges.iter().map(|e| e.2).collect();
        let mut rev: Vec<(u32, u32, EdgeKind)> = edges.iter().map(|&(a, b, k)| (b, a, k)).collect();
        rev.sort_unstable_by_key(|&(a, b, _)| (a, b));
        let pred = Csr::from_edges(n, &rev.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>());
        let pred_kind: Vec<EdgeKind> = rev.iter().map(|e| e.2).collect();
        let start = self.start_node()?;
        let columns = if self.columns.is_empty() {
            Vec::new()
        } else {
            let mut c = vec![0u32; n];
            for &(v, col) in &self.columns {
                c[v as usize] = col;
            }
            c
        };
        let call_notes = merged_call_notes(std::mem::take(&mut self.call_notes));
        let func_lookup = self.func_lookup;
        let mut async_regs = self.async_regs;
        async_regs.sort_unstable();
        async_regs.dedup();
        let mut weak_lines = self.weak_lines;
        weak_lines.sort_unstable();
        weak_lines.dedup();
        Ok(Icfg {
            weak_lines,
            async_funcs: async_functions_of(&async_regs),
            async_regs,
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
            return_sites,
            start,
        })
    }

    /// The edges of the frozen graph, sorted by (from, to), one per pair:
    /// flow edges (a call site with a callee in the program loses its
    /// fall-through edge, unless it also calls external code), call edges,
    /// and return edges from each callee's exit to every return site of
    /// its call sites; and the return sites of every call site.
    fn edges(&mut self) -> Result<(Vec<KindedEdge>, Csr), BuildError> {
        let n = self.kinds.len();
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
        let mut edges: Vec<KindedEdge> = Vec::with_capacity(self.flow.len() + 2 * self.calls.len());
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
        Ok((edges, rs_csr))
    }

    /// The start node: the one set, else `main`'s entry, else the only
    /// function entry.
    fn start_node(&self) -> Result<NodeId, BuildError> {
        if let Some(s) = self.start {
            return Ok(s);
        }
        let main = self
            .func_lookup
            .get("main")
            .and_then(|&f| self.functions[f.index()].entry);
        if let Some(m) = main {
            return Ok(m);
        }
        let entries: Vec<_> = self.functions.iter().filter_map(|f| f.entry).collect();
        if entries.len() == 1 {
            Ok(entries[0])
        } else {
            Err(BuildError::NoStart {
                entries: entries.len(),
            })
        }
    }
}

/// An edge (from, to) and its kind.
type KindedEdge = (u32, u32, EdgeKind);

/// Call notes sorted by site, the notes of one site (added at different
/// times) merged.
fn merged_call_notes(mut notes: Vec<(u32, CallNote)>) -> Vec<(u32, CallNote)> {
    notes.sort_by_key(|x| x.0);
    let mut call_notes: Vec<(u32, CallNote)> = Vec::with_capacity(notes.len());
    for (site, note) in notes {
        match call_notes.last_mut() {
            Some((s, acc)) if *s == site => {
                acc.external_callees.extend(note.external_callees);
                acc.string_args.extend(note.string_args);
            }
            _ => call_notes.push((site, note)),
        }
    }
    call_notes
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
}

/// The distinct functions of a registration list, sorted.
fn async_functions_of(regs: &[(NodeId, FuncId)]) -> Vec<FuncId> {
    let mut f: Vec<FuncId> = regs.iter().map(|r| r.1).collect();
    f.sort_unstable();
    f.dedup();
    f
}

impl Icfg {
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

// ---------------------------------------------------------------------------
// Binary cache
// ---------------------------------------------------------------------------

/// Why [`Icfg::decode`] rejected some bytes. Every variant is one line of
/// text; none of them is ever a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// The bytes do not start with the graph-cache magic.
    NotACache,
    /// The cache was written by another version of the format.
    Version {
        /// The version in the file.
        found: u16,
        /// The version this code reads.
        expected: u16,
    },
    /// The bytes end before the length the header announces (or before a
    /// complete header).
    Truncated {
        /// The length the file should have (0 if the header itself is cut).
        expected: u64,
        /// Its actual length.
        found: u64,
    },
    /// The checksum over the content does not match: the file is corrupt.
    Checksum,
    /// The content passed the checksum but is not a valid graph (a crafted
    /// or mis-written file). Names the first check that failed.
    Corrupt(&'static str),
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::NotACache => write!(f, "not a postmortem graph cache (bad magic bytes)"),
            CacheError::Version { found, expected } => write!(
                f,
                "graph cache format version {found}, but this postmortem reads version {expected}; rebuild it with `postmortem cfg build`"
            ),
            CacheError::Truncated { expected, found } => {
                write!(f, "truncated graph cache: {found} bytes, expected {expected}")
            }
            CacheError::Checksum => write!(f, "corrupt graph cache: checksum mismatch"),
            CacheError::Corrupt(what) => write!(f, "corrupt graph cache: {what}"),
        }
    }
}

impl std::error::Error for CacheError {}

/// Magic bytes at the start of every graph cache (`.pmcfg`).
pub const CACHE_MAGIC: [u8; 6] = *b"PMCFG\0";
/// The cache format version [`Icfg::encode`] writes and [`Icfg::decode`]
/// reads.
pub const CACHE_VERSION: u16 = 3;
/// Header: magic, version (u16), total length (u64).
const CACHE_HEADER: usize = 6 + 2 + 8;
/// Sentinel for "none" in optional `u32` fields.
const CACHE_NONE: u32 = u32::MAX;

/// The cache checksum: a word-at-a-time multiply-xorshift hash. Every step
/// is a bijection of the running state for a fixed input word, so any
/// change confined to one 8-byte word (in particular any single bit flip)
/// always changes the result.
fn cache_checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    let r = chunks.remainder();
    tail[..r.len()].copy_from_slice(r);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}

struct CacheWriter {
    out: Vec<u8>,
}

impl CacheWriter {
    fn u8s(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.out.extend_from_slice(v);
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32s(&mut self, v: impl Iterator<Item = u32>) {
        let at = self.out.len();
        self.u64(0);
        let mut count = 0u64;
        for x in v {
            self.out.extend_from_slice(&x.to_le_bytes());
            count += 1;
        }
        self.out[at..at + 8].copy_from_slice(&count.to_le_bytes());
    }
    /// A string pool: its bytes, then its end offsets.
    fn pool(&mut self, bytes: &str, ends: &[u32]) {
        self.u8s(bytes.as_bytes());
        self.u32s(ends.iter().copied());
    }
    fn csr(&mut self, g: &Csr, n: usize) {
        self.u32s((0..=n).map(|v| {
            if v == 0 {
                0
            } else {
                g.edge_range(v as u32 - 1).end as u32
            }
        }));
        self.u32s((0..n).flat_map(|v| g.succs(v as u32).iter().copied()));
    }
}

struct CacheReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

const TRUNCATED_BODY: CacheError = CacheError::Corrupt("a section runs past the end of the file");

impl<'a> CacheReader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], CacheError> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.buf.len())
            .ok_or(TRUNCATED_BODY)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, CacheError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, CacheError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// A length prefix, checked against what is left (`unit` bytes each)
    /// and against `expected` when given.
    fn len(
        &mut self,
        unit: usize,
        expected: Option<usize>,
        what: &'static str,
    ) -> Result<usize, CacheError> {
        let len = self.u64()?;
        let len = usize::try_from(len).map_err(|_| CacheError::Corrupt(what))?;
        if len
            .checked_mul(unit)
            .is_none_or(|b| b > self.buf.len() - self.pos)
        {
            return Err(TRUNCATED_BODY);
        }
        if expected.is_some_and(|e| e != len) {
            return Err(CacheError::Corrupt(what));
        }
        Ok(len)
    }
    fn u8s(&mut self, expected: Option<usize>, what: &'static str) -> Result<&'a [u8], CacheError> {
        let len = self.len(1, expected, what)?;
        self.take(len)
    }
    fn u32s(
        &mut self,
        expected: Option<usize>,
        what: &'static str,
    ) -> Result<Vec<u32>, CacheError> {
        let len = self.len(4, expected, what)?;
        let bytes = self.take(len * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect())
    }
    fn pool(&mut self, count: Option<usize>, what: &'static str) -> Result<StrPool, CacheError> {
        let bytes = self.u8s(None, what)?;
        let bytes = std::str::from_utf8(bytes).map_err(|_| CacheError::Corrupt(what))?;
        let ends = self.u32s(count, what)?;
        let mut prev = 0u32;
        for &e in &ends {
            if e < prev || e as usize > bytes.len() || !bytes.is_char_boundary(e as usize) {
                return Err(CacheError::Corrupt(what));
            }
            prev = e;
        }
        if ends
            .last()
            .map_or(!bytes.is_empty(), |&e| e as usize != bytes.len())
        {
            return Err(CacheError::Corrupt(what));
        }
        Ok(StrPool {
            bytes: bytes.to_string(),
            ends,
        })
    }
    /// A CSR over `n` vertices, as (offsets, targets).
    fn csr(&mut self, n: usize, what: &'static str) -> Result<(Vec<u32>, Vec<u32>), CacheError> {
        let offsets = self.u32s(Some(n + 1), what)?;
        let targets = self.u32s(None, what)?;
        if offsets[0] != 0
            || offsets.windows(2).any(|w| w[0] > w[1])
            || offsets[n] as usize != targets.len()
        {
            return Err(CacheError::Corrupt(what));
        }
        if targets.iter().any(|&t| t as usize >= n) {
            return Err(CacheError::Corrupt(what));
        }
        Ok((offsets, targets))
    }
}

fn edges_of(offsets: &[u32], targets: &[u32]) -> Vec<(u32, u32)> {
    let mut edges = Vec::with_capacity(targets.len());
    for (v, w) in offsets.windows(2).enumerate() {
        for &t in &targets[w[0] as usize..w[1] as usize] {
            edges.push((v as u32, t));
        }
    }
    edges
}

fn node_kind_code(k: NodeKind) -> u8 {
    match k {
        NodeKind::Entry => 0,
        NodeKind::Exit => 1,
        NodeKind::CallSite => 2,
        NodeKind::Statement => 3,
    }
}

fn edge_kind_code(k: EdgeKind) -> u8 {
    match k {
        EdgeKind::Local => 0,
        EdgeKind::Call => 1,
        EdgeKind::Return => 2,
    }
}

fn opt_u32(v: Option<u32>) -> u32 {
    v.unwrap_or(CACHE_NONE)
}

impl Icfg {
    /// Serializes the graph into the binary cache format (`.pmcfg`), read
    /// back by [`Icfg::decode`]. Pure: the caller writes the bytes.
    ///
    /// Layout: the magic [`CACHE_MAGIC`], the version [`CACHE_VERSION`]
    /// (u16), the total length (u64), then sections of little-endian
    /// arrays, each prefixed by its element count (u64): node kinds,
    /// owning functions, the id and label string pools, lines, columns,
    /// functions (names, files, entries, exits), files, forward adjacency
    /// (CSR offsets, targets, edge kinds), return sites (CSR), the start
    /// node, the call notes, the asynchronous functions and the weak lines; last a 64-bit checksum of everything before
    /// it. Backward adjacency, the id index and the function lookup are
    /// rebuilt on decode rather than stored. The output is deterministic:
    /// equal graphs give equal bytes.
    pub fn encode(&self) -> Vec<u8> {
        let n = self.kinds.len();
        let mut w = CacheWriter {
            out: Vec::with_capacity(self.heap_bytes() / 2 + 64),
        };
        w.out.extend_from_slice(&CACHE_MAGIC);
        w.out.extend_from_slice(&CACHE_VERSION.to_le_bytes());
        w.u64(0); // total length, patched below
        w.u8s(
            &self
                .kinds
                .iter()
                .map(|&k| node_kind_code(k))
                .collect::<Vec<u8>>(),
        );
        w.u32s(self.funcs_of.iter().map(|f| f.0));
        w.pool(&self.ext.bytes, &self.ext.ends);
        w.pool(&self.labels.bytes, &self.labels.ends);
        w.u32s(self.line_ends.iter().copied());
        w.u32s(self.lines.iter().copied());
        w.u32s(self.columns.iter().copied());
        // Functions.
        let mut names = StrPool::default();
        for f in &self.functions {
            names.push(&f.name);
        }
        w.u64(self.functions.len() as u64);
        w.pool(&names.bytes, &names.ends);
        w.u32s(self.functions.iter().map(|f| opt_u32(f.file.map(|x| x.0))));
        w.u32s(self.functions.iter().map(|f| opt_u32(f.entry.map(|x| x.0))));
        w.u32s(self.functions.iter().map(|f| opt_u32(f.exit.map(|x| x.0))));
        let mut files = StrPool::default();
        for f in &self.files {
            files.push(f);
        }
        w.u64(self.files.len() as u64);
        w.pool(&files.bytes, &files.ends);
        // Edges.
        w.csr(&self.succ, n);
        w.u8s(
            &self
                .succ_kind
                .iter()
                .map(|&k| edge_kind_code(k))
                .collect::<Vec<u8>>(),
        );
        w.csr(&self.return_sites, n);
        w.u32(self.start.0);
        // Call notes.
        w.u32s(self.call_notes.iter().map(|(s, _)| *s));
        w.u32s(
            self.call_notes
                .iter()
                .map(|(_, c)| c.external_callees.len() as u32),
        );
        w.u32s(
            self.call_notes
                .iter()
                .map(|(_, c)| c.string_args.len() as u32),
        );
        let mut strs = StrPool::default();
        for (_, c) in &self.call_notes {
            for s in c.external_callees.iter().chain(&c.string_args) {
                strs.push(s);
            }
        }
        w.u64(strs.ends.len() as u64);
        w.pool(&strs.bytes, &strs.ends);
        w.u32s(self.async_regs.iter().map(|r| r.0 .0));
        w.u32s(self.async_regs.iter().map(|r| r.1 .0));
        w.u32s(self.weak_lines.iter().map(|r| r.0 .0));
        w.u32s(self.weak_lines.iter().map(|r| r.1));
        let total = (w.out.len() + 8) as u64;
        w.out[8..16].copy_from_slice(&total.to_le_bytes());
        let sum = cache_checksum(&w.out);
        w.u64(sum);
        w.out
    }

    /// Reads a graph written by [`Icfg::encode`]. Checks the magic, the
    /// version, the length and the checksum, then validates every index
    /// and offset, so that a truncated, corrupt or crafted file gives an
    /// error and never a panic (and a graph it accepts never panics its
    /// accessors).
    pub fn decode(bytes: &[u8]) -> Result<Icfg, CacheError> {
        let body = cache_body(bytes)?;
        let mut r = CacheReader {
            buf: body,
            pos: CACHE_HEADER,
        };
        let kinds: Vec<NodeKind> = r
            .u8s(None, "node kinds")?
            .iter()
            .map(|&k| match k {
                0 => Ok(NodeKind::Entry),
                1 => Ok(NodeKind::Exit),
                2 => Ok(NodeKind::CallSite),
                3 => Ok(NodeKind::Statement),
                _ => Err(CacheError::Corrupt("unknown node kind")),
            })
            .collect::<Result<_, _>>()?;
        let n = kinds.len();
        if n == 0 {
            return Err(CacheError::Corrupt("the graph has no node"));
        }
        if n >= u32::MAX as usize - 2 {
            return Err(CacheError::Corrupt("too many nodes"));
        }
        let funcs_of = r.u32s(Some(n), "owning functions")?;
        let ext = r.pool(Some(n), "node ids")?;
        let labels = r.pool(Some(n), "node labels")?;
        let line_ends = r.u32s(Some(n), "line offsets")?;
        let lines = r.u32s(None, "lines")?;
        if line_ends.windows(2).any(|w| w[0] > w[1]) || line_ends[n - 1] as usize != lines.len() {
            return Err(CacheError::Corrupt("line offsets"));
        }
        let columns = r.u32s(None, "columns")?;
        if !columns.is_empty() && columns.len() != n {
            return Err(CacheError::Corrupt("columns"));
        }
        let (functions, func_lookup, files) = read_functions(&mut r, &kinds, &funcs_of)?;
        let (succ, succ_kind, pred, pred_kind) = read_edges(&mut r, &kinds)?;
        let (rs_offsets, rs_targets) = r.csr(n, "return sites")?;
        let return_sites = Csr::from_edges(n, &edges_of(&rs_offsets, &rs_targets));
        let start = r.u32()?;
        if start as usize >= n {
            return Err(CacheError::Corrupt("start node"));
        }
        let call_notes = read_call_notes(&mut r, n)?;
        let async_regs = read_async_regs(&mut r, n, functions.len())?;
        let weak_lines = read_weak_lines(&mut r, n)?;
        if r.pos != body.len() {
            return Err(CacheError::Corrupt("trailing bytes after the last section"));
        }
        let mut ext_index = ExtIndex::default();
        for v in 0..n as u32 {
            if !ext_index.insert(&ext, v) {
                return Err(CacheError::Corrupt("two nodes have the same id"));
            }
        }
        Ok(Icfg {
            kinds,
            funcs_of: funcs_of.into_iter().map(FuncId).collect(),
            ext,
            ext_index,
            labels,
            line_ends,
            lines,
            functions,
            files,
            succ,
            succ_kind,
            pred,
            pred_kind,
            return_sites,
            start: NodeId(start),
            columns,
            call_notes,
            func_lookup,
            async_funcs: async_functions_of(&async_regs),
            async_regs,
            weak_lines,
        })
    }
}

/// Checks a cache's magic, version, length and checksum; returns the
/// body (without the checksum).
fn cache_body(bytes: &[u8]) -> Result<&[u8], CacheError> {
    if bytes.len() < CACHE_MAGIC.len() || bytes[..CACHE_MAGIC.len()] != CACHE_MAGIC {
        return Err(CacheError::NotACache);
    }
    if bytes.len() < CACHE_HEADER + 8 {
        return Err(CacheError::Truncated {
            expected: 0,
            found: bytes.len() as u64,
        });
    }
    let version = u16::from_le_bytes([bytes[6], bytes[7]]);
    if version != CACHE_VERSION {
        return Err(CacheError::Version {
            found: version,
            expected: CACHE_VERSION,
        });
    }
    let total = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    if total != bytes.len() as u64 {
        return Err(CacheError::Truncated {
            expected: total,
            found: bytes.len() as u64,
        });
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if cache_checksum(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
        return Err(CacheError::Checksum);
    }
    Ok(body)
}

/// The functions section: names, files, entries and exits (checked
/// against the nodes' kinds and owners), and the files.
#[allow(clippy::type_complexity)]
fn read_functions(
    r: &mut CacheReader<'_>,
    kinds: &[NodeKind],
    funcs_of: &[u32],
) -> Result<(Vec<Function>, HashMap<Box<str>, FuncId>, Vec<Box<str>>), CacheError> {
    let n = kinds.len();
    let nf = r.u64()?;
    let nf = usize::try_from(nf)
        .ok()
        .filter(|&x| x <= u32::MAX as usize)
        .ok_or(CacheError::Corrupt("functions"))?;
    let names = r.pool(Some(nf), "function names")?;
    let ffile = r.u32s(Some(nf), "function files")?;
    let fentry = r.u32s(Some(nf), "function entries")?;
    let fexit = r.u32s(Some(nf), "function exits")?;
    let nfiles = r.u64()?;
    let nfiles = usize::try_from(nfiles).map_err(|_| CacheError::Corrupt("files"))?;
    let file_pool = r.pool(Some(nfiles), "files")?;
    let files: Vec<Box<str>> = (0..nfiles).map(|i| file_pool.get(i).into()).collect();
    if funcs_of.iter().any(|&f| f as usize >= nf) {
        return Err(CacheError::Corrupt("a node belongs to no function"));
    }
    let mut functions = Vec::with_capacity(nf);
    let mut func_lookup = HashMap::with_capacity(nf);
    for i in 0..nf {
        let file = match ffile[i] {
            CACHE_NONE => None,
            x if (x as usize) < nfiles => Some(FileId(x)),
            _ => return Err(CacheError::Corrupt("function file")),
        };
        let node = |x: u32, kind: NodeKind| match x {
            CACHE_NONE => Ok(None),
            x if (x as usize) < n
                && kinds[x as usize] == kind
                && funcs_of[x as usize] as usize == i =>
            {
                Ok(Some(NodeId(x)))
            }
            _ => Err(CacheError::Corrupt("function entry or exit")),
        };
        let entry = node(fentry[i], NodeKind::Entry)?;
        let exit = node(fexit[i], NodeKind::Exit)?;
        let name: Box<str> = names.get(i).into();
        if func_lookup.insert(name.clone(), FuncId(i as u32)).is_some() {
            return Err(CacheError::Corrupt("two functions have the same name"));
        }
        functions.push(Function {
            name,
            file,
            entry,
            exit,
        });
    }
    Ok((functions, func_lookup, files))
}

/// The edges section: successors with their kinds (checked), and the
/// predecessors exactly as `build` makes them.
fn read_edges(
    r: &mut CacheReader<'_>,
    kinds: &[NodeKind],
) -> Result<(Csr, Vec<EdgeKind>, Csr, Vec<EdgeKind>), CacheError> {
    let n = kinds.len();
    let (offsets, targets) = r.csr(n, "successors")?;
    let succ_kind: Vec<EdgeKind> = r
        .u8s(Some(targets.len()), "edge kinds")?
        .iter()
        .map(|&k| match k {
            0 => Ok(EdgeKind::Local),
            1 => Ok(EdgeKind::Call),
            2 => Ok(EdgeKind::Return),
            _ => Err(CacheError::Corrupt("unknown edge kind")),
        })
        .collect::<Result<_, _>>()?;
    let edges = edges_of(&offsets, &targets);
    for (&(a, b), &k) in edges.iter().zip(&succ_kind) {
        let ok = match k {
            EdgeKind::Local => true,
            EdgeKind::Call => kinds[b as usize] == NodeKind::Entry,
            EdgeKind::Return => kinds[a as usize] == NodeKind::Exit,
        };
        if !ok {
            return Err(CacheError::Corrupt(
                "a call edge does not enter a function or a return edge does not leave one",
            ));
        }
    }
    let succ = Csr::from_edges(n, &edges);
    // Backward adjacency, exactly as `build` makes it: edges are sorted
    // by (source, target), so a stable counting sort by target yields
    // every target's predecessors in increasing order.
    let rev: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
    let pred = Csr::from_edges(n, &rev);
    let mut pred_kind = vec![EdgeKind::Local; edges.len()];
    {
        let mut fill: Vec<usize> = (0..n).map(|v| pred.edge_range(v as u32).start).collect();
        for (&(_, b), &k) in edges.iter().zip(&succ_kind) {
            pred_kind[fill[b as usize]] = k;
            fill[b as usize] += 1;
        }
    }
    drop(edges);
    Ok((succ, succ_kind, pred, pred_kind))
}

/// The call notes section (sites in increasing order).
fn read_call_notes(r: &mut CacheReader<'_>, n: usize) -> Result<Vec<(u32, CallNote)>, CacheError> {
    let sites = r.u32s(None, "call notes")?;
    let ne = r.u32s(Some(sites.len()), "call notes")?;
    let ns = r.u32s(Some(sites.len()), "call notes")?;
    if sites.iter().any(|&s| s as usize >= n) || sites.windows(2).any(|w| w[0] >= w[1]) {
        return Err(CacheError::Corrupt("call note sites"));
    }
    let nstr = r.u64()?;
    let want: u64 = ne.iter().chain(&ns).map(|&x| x as u64).sum();
    if nstr != want {
        return Err(CacheError::Corrupt("call note strings"));
    }
    let strs = r.pool(usize::try_from(nstr).ok(), "call note strings")?;
    let mut next = 0usize;
    let mut take = |k: u32| -> Vec<Box<str>> {
        let v = (next..next + k as usize)
            .map(|i| strs.get(i).into())
            .collect();
        next += k as usize;
        v
    };
    let call_notes: Vec<(u32, CallNote)> = sites
        .iter()
        .zip(ne.iter().zip(&ns))
        .map(|(&s, (&e, &a))| {
            (
                s,
                CallNote {
                    external_callees: take(e),
                    string_args: take(a),
                },
            )
        })
        .collect();
    Ok(call_notes)
}

/// The asynchronous-function registrations (sorted, in range).
fn read_async_regs(
    r: &mut CacheReader<'_>,
    n: usize,
    nf: usize,
) -> Result<Vec<(NodeId, FuncId)>, CacheError> {
    let reg_sites = r.u32s(None, "asynchronous functions")?;
    let reg_funcs = r.u32s(Some(reg_sites.len()), "asynchronous functions")?;
    let async_regs: Vec<(NodeId, FuncId)> = reg_sites
        .iter()
        .zip(&reg_funcs)
        .map(|(&s, &f)| (NodeId(s), FuncId(f)))
        .collect();
    if reg_sites.iter().any(|&s| s as usize >= n)
        || reg_funcs.iter().any(|&f| f as usize >= nf)
        || async_regs.windows(2).any(|w| w[0] >= w[1])
    {
        return Err(CacheError::Corrupt("asynchronous functions"));
    }
    Ok(async_regs)
}

/// The weak lines (sorted, in range).
fn read_weak_lines(r: &mut CacheReader<'_>, n: usize) -> Result<Vec<(NodeId, u32)>, CacheError> {
    let weak_nodes = r.u32s(None, "weak lines")?;
    let weak_line_nos = r.u32s(Some(weak_nodes.len()), "weak lines")?;
    let weak_lines: Vec<(NodeId, u32)> = weak_nodes
        .iter()
        .zip(&weak_line_nos)
        .map(|(&v, &l)| (NodeId(v), l))
        .collect();
    if weak_nodes.iter().any(|&v| v as usize >= n) || weak_lines.windows(2).any(|w| w[0] >= w[1]) {
        return Err(CacheError::Corrupt("weak lines"));
    }
    Ok(weak_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(b: &mut IcfgBuilder, id: &str, kind: NodeKind, f: FuncId) -> NodeId {
        b.add_node(NodeSpec {
            ext_id: id,
            kind,
            func: f,
            label: id,
            lines: &[1],
        })
        .unwrap()
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
        assert_eq!(
            g.succs(lib).collect::<Vec<_>>(),
            vec![(mx, EdgeKind::Local)]
        );
        assert_eq!(g.return_sites(c2).collect::<Vec<_>>(), vec![lib]);
        assert_eq!(g.lookup("r1"), Some(r1));
        assert_eq!(g.lookup("nope"), None);
        assert_eq!(
            g.preds(r1).collect::<Vec<_>>(),
            vec![(fx, EdgeKind::Return)]
        );
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
        let e = b.add_node(NodeSpec {
            ext_id: "x",
            kind: NodeKind::Statement,
            func: f,
            label: "",
            lines: &[],
        });
        assert_eq!(e.unwrap_err(), BuildError::DuplicateNode("x".into()));
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use proptest::prelude::*;

    /// Everything an accessor can see, in one comparable value.
    fn observe(g: &Icfg) -> String {
        let mut s = String::new();
        use std::fmt::Write;
        for n in g.nodes() {
            let mut succs: Vec<_> = g.succs(n).collect();
            succs.sort_by_key(|e| e.0);
            let preds: Vec<_> = g.preds(n).collect();
            let rs: Vec<_> = g.return_sites(n).collect();
            writeln!(
                s,
                "{n} {} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                g.ext_id(n),
                g.kind(n),
                g.label(n),
                g.func_of(n),
                g.lines(n),
                g.column(n),
                g.file_of(n).map(|f| g.file_path(f)),
                succs,
                preds,
                rs,
                g.call_note(n)
            )
            .unwrap();
            assert_eq!(g.lookup(g.ext_id(n)), Some(n));
        }
        for (i, f) in g.functions().iter().enumerate() {
            writeln!(s, "{i} {f:?}").unwrap();
            assert_eq!(g.function_by_name(&f.name), Some(FuncId::new(i)));
        }
        writeln!(
            s,
            "start {} files {} calls {}",
            g.start(),
            g.num_files(),
            g.num_call_sites()
        )
        .unwrap();
        s
    }

    fn sample() -> Icfg {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
        b.set_function_file(main, "/src/main.c");
        b.set_function_file(f, "/src/f\u{e9}.c");
        let node = |b: &mut IcfgBuilder, id: &str, kind, func, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines,
            })
            .unwrap()
        };
        let me = node(&mut b, "main:entry", NodeKind::Entry, main, &[3]);
        let c = node(&mut b, "main:4:3", NodeKind::CallSite, main, &[4]);
        let p = node(&mut b, "main:5:3", NodeKind::CallSite, main, &[5]);
        let mx = node(&mut b, "main:exit", NodeKind::Exit, main, &[]);
        let fe = node(&mut b, "f:entry", NodeKind::Entry, f, &[9]);
        let fs = node(&mut b, "f:10:1", NodeKind::Statement, f, &[10, 11]);
        let fx = node(&mut b, "f:exit", NodeKind::Exit, f, &[12]);
        b.add_flow_edge(me, c);
        b.add_flow_edge(c, p);
        b.add_flow_edge(p, mx);
        b.add_flow_edge(fe, fs);
        b.add_flow_edge(fs, fx);
        b.add_flow_edge(fs, fs);
        b.add_call_edge(c, fe);
        b.add_external_callee(p);
        b.add_external_callee_name(p, "printf");
        b.add_string_arg(p, "%d\n");
        b.add_string_arg(c, "");
        b.set_column(c, 3);
        b.set_column(fs, 1);
        b.add_weak_line(fs, 13);
        b.add_weak_line(me, 2);
        b.build().unwrap()
    }

    #[test]
    fn round_trip_keeps_everything() {
        let g = sample();
        let bytes = g.encode();
        let h = Icfg::decode(&bytes).unwrap();
        assert_eq!(observe(&g), observe(&h));
        assert_eq!(h.encode(), bytes, "encoding is deterministic");
        for n in g.nodes() {
            let w: Vec<u32> = h.weak_lines(n).collect();
            assert_eq!(g.weak_lines(n).collect::<Vec<_>>(), w);
        }
        assert_eq!(h.weak_lines(NodeId(5)).collect::<Vec<_>>(), vec![13]);
        assert_eq!(h.weak_lines(NodeId(0)).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn wrong_magic_version_and_length_are_named() {
        let bytes = sample().encode();
        assert_eq!(
            Icfg::decode(b"<?xml version").unwrap_err(),
            CacheError::NotACache
        );
        assert_eq!(Icfg::decode(b"").unwrap_err(), CacheError::NotACache);
        let mut v = bytes.clone();
        v[6] = 9;
        assert_eq!(
            Icfg::decode(&v).unwrap_err(),
            CacheError::Version {
                found: 9,
                expected: CACHE_VERSION
            }
        );
        let e = Icfg::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(matches!(e, CacheError::Truncated { .. }), "{e:?}");
        assert!(e.to_string().starts_with("truncated graph cache"));
        let mut v = bytes.clone();
        v.push(0);
        assert!(matches!(
            Icfg::decode(&v).unwrap_err(),
            CacheError::Truncated { .. }
        ));
    }

    /// Recomputes the checksum after a deliberate change, so that the
    /// structural validation is what has to catch it.
    fn reseal(v: &mut [u8]) {
        let len = v.len();
        let sum = cache_checksum(&v[..len - 8]);
        v[len - 8..].copy_from_slice(&sum.to_le_bytes());
    }

    proptest! {
        #[test]
        fn every_truncation_is_an_error(cut in 0usize..10_000) {
            let bytes = sample().encode();
            let cut = cut % bytes.len();
            prop_assert!(Icfg::decode(&bytes[..cut]).is_err());
        }

        #[test]
        fn every_bit_flip_is_an_error(pos in 0usize..100_000, bit in 0u8..8) {
            let mut bytes = sample().encode();
            let pos = pos % bytes.len();
            bytes[pos] ^= 1 << bit;
            prop_assert!(Icfg::decode(&bytes).is_err());
        }

        /// Changes that keep a valid checksum (a crafted file) never panic
        /// the decoder, and a graph it accepts never panics its accessors.
        #[test]
        fn resealed_corruption_never_panics(edits in proptest::collection::vec((0usize..100_000, any::<u8>()), 1..6)) {
            // (Random graphs live in the testkit crate, out of reach of
            // unit tests; the pmcfg fuzz target covers those.)
            let mut bytes = sample().encode();
            for (pos, val) in edits {
                let pos = CACHE_HEADER + pos % (bytes.len() - CACHE_HEADER - 8);
                bytes[pos] = val;
            }
            reseal(&mut bytes);
            if let Ok(h) = Icfg::decode(&bytes) {
                let _ = observe(&h);
            }
        }

        #[test]
        fn random_bytes_never_panic(mut v in proptest::collection::vec(any::<u8>(), 0..400)) {
            if v.len() >= CACHE_HEADER + 8 {
                v[..6].copy_from_slice(&CACHE_MAGIC);
                v[6..8].copy_from_slice(&CACHE_VERSION.to_le_bytes());
                let len = v.len() as u64;
                v[8..16].copy_from_slice(&len.to_le_bytes());
                reseal(&mut v);
            }
            let _ = Icfg::decode(&v);
        }
    }
}
