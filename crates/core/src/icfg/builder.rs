//! [`IcfgBuilder`]: nodes, flow edges and call edges in any order, then
//! frozen into an [`Icfg`] by [`IcfgBuilder::build`].

use super::*;

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
    pub(super) kinds: Vec<NodeKind>,
    pub(super) funcs_of: Vec<FuncId>,
    pub(super) ext: StrPool,
    pub(super) labels: StrPool,
    pub(super) line_ends: Vec<u32>,
    pub(super) lines: Vec<u32>,
    pub(super) ext_index: ExtIndex,
    pub(super) functions: Vec<Function>,
    pub(super) func_lookup: HashMap<Box<str>, FuncId>,
    pub(super) files: Vec<Box<str>>,
    pub(super) file_lookup: HashMap<Box<str>, FileId>,
    pub(super) flow: Vec<(u32, u32)>,
    pub(super) calls: Vec<(u32, u32)>,
    pub(super) external_callee: Vec<u32>,
    pub(super) start: Option<NodeId>,
    pub(super) columns: Vec<(u32, u32)>,
    pub(super) call_notes: Vec<(u32, CallNote)>,
    pub(super) async_regs: Vec<(NodeId, FuncId)>,
    pub(super) weak_lines: Vec<(NodeId, u32)>,
    pub(super) inlined_lines: Vec<(FuncId, u32)>,
    pub(super) instruction_columns: Vec<(NodeId, u32)>,
    pub(super) tail_calls: Vec<NodeId>,
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
    /// The argument index of each of `string_args`; empty when the
    /// front-end does not record them (GraphML, JSON graphs).
    pub string_arg_index: Vec<u32>,
    /// More constant strings an argument may be, `(argument index,
    /// string)`: an argument that is a `select` or `phi` of constant
    /// strings (as `-O2` makes of two calls it merges into one) has its
    /// first string in `string_args` and the others here.
    pub string_choices: Vec<(u32, Box<str>)>,
    /// Where some of the first arguments come from, `(argument index,
    /// source)`: a value loaded from a global variable (its name, e.g.
    /// `stderr`), or a constant integer (`#2`). Which output stream a
    /// printing call writes to.
    pub arg_sources: Vec<(u32, Box<str>)>,
}

impl CallNote {
    /// Whether the argument index of every string argument is known
    /// ([`CallNote::string_arg_index`]).
    pub fn indexed(&self) -> bool {
        self.string_arg_index.len() == self.string_args.len()
    }

    /// Every constant string argument `index` may be (empty: not a
    /// constant string, or unknown when not [`CallNote::indexed`]).
    pub fn strings_at(&self, index: u32) -> Vec<&str> {
        if !self.indexed() {
            return Vec::new();
        }
        let first = self
            .string_arg_index
            .iter()
            .zip(&self.string_args)
            .filter(|(&i, _)| i == index)
            .map(|(_, s)| &**s);
        let more = self
            .string_choices
            .iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, s)| &**s);
        first.chain(more).collect()
    }

    /// Where argument `index` comes from ([`CallNote::arg_sources`]).
    pub fn source_of(&self, index: u32) -> Option<&str> {
        self.arg_sources
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, s)| &**s)
    }
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
        let note = self.note(site);
        note.string_args.push(s.into());
        note.string_arg_index.clear();
    }

    /// Records that argument `index` of call site `site` is the constant
    /// string `s` (a later call for the same argument adds a choice: see
    /// [`CallNote::string_choices`]).
    pub fn add_string_arg_at(&mut self, site: NodeId, index: u32, s: &str) {
        let note = self.note(site);
        if note.string_arg_index.contains(&index) {
            note.string_choices.push((index, s.into()));
        } else {
            note.string_args.push(s.into());
            note.string_arg_index.push(index);
        }
    }

    /// Records where argument `index` of call site `site` comes from (see
    /// [`CallNote::arg_sources`]).
    pub fn add_arg_source(&mut self, site: NodeId, index: u32, source: &str) {
        self.note(site).arg_sources.push((index, source.into()));
    }

    pub(super) fn note(&mut self, site: NodeId) -> &mut CallNote {
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

    /// Records that `line` of function `f`'s nodes comes only from code
    /// inlined into `f` (instructions with an inline chain, none of `f`'s
    /// own statements; see [`Icfg::inlined_lines`]).
    pub fn add_inlined_line(&mut self, f: FuncId, line: u32) {
        self.inlined_lines.push((f, line));
    }

    /// Records that node `n` has an instruction at column `col` of its
    /// line (see [`Icfg::instruction_columns`]).
    pub fn add_instruction_column(&mut self, n: NodeId, col: u32) {
        self.instruction_columns.push((n, col));
    }

    /// Records that call site `site` may be compiled as a jump (a tail
    /// or sibling call; see [`Icfg::tail_calls`]). Ignored on a node that
    /// is not a call site.
    pub fn mark_tail_call(&mut self, site: NodeId) {
        self.tail_calls.push(site);
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
        let mut inlined_lines = self.inlined_lines;
        inlined_lines.sort_unstable();
        inlined_lines.dedup();
        let mut instruction_columns = self.instruction_columns;
        instruction_columns.sort_unstable();
        instruction_columns.dedup();
        let mut tail_calls = self.tail_calls;
        tail_calls.sort_unstable();
        tail_calls.dedup();
        tail_calls.retain(|v| self.kinds.get(v.index()) == Some(&NodeKind::CallSite));
        Ok(Icfg {
            weak_lines,
            inlined_lines,
            instruction_columns,
            tail_calls,
            call_graph: Default::default(),
            func_nodes: Default::default(),
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
    pub(super) fn edges(&mut self) -> Result<(Vec<KindedEdge>, Csr), BuildError> {
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
    pub(super) fn start_node(&self) -> Result<NodeId, BuildError> {
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
pub(super) type KindedEdge = (u32, u32, EdgeKind);

/// Call notes sorted by site, the notes of one site (added at different
/// times) merged.
pub(super) fn merged_call_notes(mut notes: Vec<(u32, CallNote)>) -> Vec<(u32, CallNote)> {
    notes.sort_by_key(|x| x.0);
    let mut call_notes: Vec<(u32, CallNote)> = Vec::with_capacity(notes.len());
    for (site, note) in notes {
        match call_notes.last_mut() {
            Some((s, acc)) if *s == site => {
                acc.external_callees.extend(note.external_callees);
                // Indices stay parallel to the strings only when both
                // notes have them.
                if acc.string_arg_index.len() == acc.string_args.len()
                    && note.string_arg_index.len() == note.string_args.len()
                {
                    acc.string_arg_index.extend(note.string_arg_index);
                } else {
                    acc.string_arg_index.clear();
                }
                acc.string_args.extend(note.string_args);
                acc.string_choices.extend(note.string_choices);
                acc.arg_sources.extend(note.arg_sources);
            }
            _ => call_notes.push((site, note)),
        }
    }
    call_notes
}

#[cfg(test)]
impl IcfgBuilder {
    /// A node of `func` whose id and label are `id`, on `line` (the unit
    /// tests' small graphs).
    pub(crate) fn test_node(
        &mut self,
        id: &str,
        kind: NodeKind,
        func: FuncId,
        line: u32,
    ) -> NodeId {
        self.add_node(NodeSpec {
            ext_id: id,
            kind,
            func,
            label: id,
            lines: &[line],
        })
        .unwrap()
    }
}
