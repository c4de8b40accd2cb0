//! The frozen graph from plain arrays, for readers of stored graphs (the
//! `.pmcfg` codec of postmortem-formats): [`IcfgParts`] in,
//! [`Icfg::from_parts`] checks every index and offset, so that parts read
//! from a corrupt or crafted file give an error, never a panic (and a
//! graph it accepts never panics its accessors).

use super::*;

/// Strings stored back to back: string `i` is
/// `bytes[ends[i - 1]..ends[i]]` (from 0 for the first).
#[derive(Clone, Debug, Default)]
pub struct StrTable {
    bytes: String,
    ends: Vec<u32>,
}

impl StrTable {
    /// A table, if `ends` is non-decreasing, on character boundaries of
    /// `bytes`, and the last end is the length of `bytes` (`bytes` is
    /// empty when there is no string).
    pub fn new(bytes: String, ends: Vec<u32>) -> Option<StrTable> {
        let mut prev = 0u32;
        for &e in &ends {
            if e < prev || e as usize > bytes.len() || !bytes.is_char_boundary(e as usize) {
                return None;
            }
            prev = e;
        }
        if ends
            .last()
            .map_or(!bytes.is_empty(), |&e| e as usize != bytes.len())
        {
            return None;
        }
        Some(StrTable { bytes, ends })
    }
    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    /// Whether there is no string.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    /// String `i` (`i < len()`).
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
}

/// A graph as plain arrays, `n` nodes. Indices are raw `u32`s or typed ids;
/// [`Icfg::from_parts`] checks all of them.
#[derive(Clone, Debug, Default)]
pub struct IcfgParts {
    /// Node kinds (`n`).
    pub kinds: Vec<NodeKind>,
    /// Owning function of every node (`n`).
    pub funcs_of: Vec<u32>,
    /// Input ids of the nodes (`n`, distinct).
    pub ids: StrTable,
    /// Labels of the nodes (`n`).
    pub labels: StrTable,
    /// End offset in `lines` of every node's lines (`n`, non-decreasing).
    pub line_ends: Vec<u32>,
    /// The source lines of all nodes, back to back.
    pub lines: Vec<u32>,
    /// Empty, or the column of every node (`n`, 0 = unknown).
    pub columns: Vec<u32>,
    /// The functions (names distinct; entry and exit of the right kind,
    /// owned by the function).
    pub functions: Vec<Function>,
    /// The files' paths.
    pub files: Vec<Box<str>>,
    /// Forward adjacency: CSR offsets (`n + 1`) ...
    pub succ_offsets: Vec<u32>,
    /// ... targets ...
    pub succ_targets: Vec<u32>,
    /// ... and the kind of every edge (call edges enter a function,
    /// return edges leave one).
    pub succ_kinds: Vec<EdgeKind>,
    /// Return sites of every call site: CSR offsets (`n + 1`) ...
    pub return_offsets: Vec<u32>,
    /// ... and targets.
    pub return_targets: Vec<u32>,
    /// The start node.
    pub start: u32,
    /// Call notes, sites strictly increasing.
    pub call_notes: Vec<(u32, CallNote)>,
    /// Asynchronous-function registrations, strictly increasing.
    pub async_regs: Vec<(NodeId, FuncId)>,
    /// Weak lines, strictly increasing.
    pub weak_lines: Vec<(NodeId, u32)>,
    /// Lines only inlined code has, strictly increasing (see
    /// [`Icfg::inlined_lines`]).
    pub inlined_lines: Vec<(FuncId, u32)>,
    /// Instructions' columns per node, strictly increasing (see
    /// [`Icfg::instruction_columns`]).
    pub instruction_columns: Vec<(NodeId, u32)>,
    /// Call sites that may be tail calls, strictly increasing.
    pub tail_calls: Vec<NodeId>,
}

/// Why [`Icfg::from_parts`] rejected some parts: the first check that
/// failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartsError(pub &'static str);

impl std::fmt::Display for PartsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for PartsError {}

fn check(ok: bool, what: &'static str) -> Result<(), PartsError> {
    if ok {
        Ok(())
    } else {
        Err(PartsError(what))
    }
}

/// Checks CSR arrays over `n` vertices; returns the edges.
fn csr_edges(
    n: usize,
    offsets: &[u32],
    targets: &[u32],
    what: &'static str,
) -> Result<Vec<(u32, u32)>, PartsError> {
    check(
        offsets.len() == n + 1
            && offsets[0] == 0
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets[n] as usize == targets.len()
            && targets.iter().all(|&t| (t as usize) < n),
        what,
    )?;
    let mut edges = Vec::with_capacity(targets.len());
    for (v, w) in offsets.windows(2).enumerate() {
        for &t in &targets[w[0] as usize..w[1] as usize] {
            edges.push((v as u32, t));
        }
    }
    Ok(edges)
}

impl Icfg {
    /// The raw column table: empty, or one entry per node, 0 when the
    /// column is unknown (for serializers; readers use [`Icfg::column`]).
    pub fn column_table(&self) -> &[u32] {
        &self.columns
    }

    /// A graph from plain arrays (see [`IcfgParts`]), after checking every
    /// index, offset and invariant the accessors rely on. The backward
    /// adjacency, the id index and the function lookup are rebuilt here.
    pub fn from_parts(p: IcfgParts) -> Result<Icfg, PartsError> {
        let n = p.kinds.len();
        check(n != 0, "the graph has no node")?;
        check(n < u32::MAX as usize - 2, "too many nodes")?;
        check(p.funcs_of.len() == n, "owning functions")?;
        check(p.ids.len() == n, "node ids")?;
        check(p.labels.len() == n, "node labels")?;
        check(
            p.line_ends.len() == n
                && p.line_ends.windows(2).all(|w| w[0] <= w[1])
                && p.line_ends[n - 1] as usize == p.lines.len(),
            "line offsets",
        )?;
        check(p.columns.is_empty() || p.columns.len() == n, "columns")?;
        let func_lookup = check_functions(&p)?;
        let (succ, pred, pred_kind) = check_edges(&p)?;
        let rs = csr_edges(n, &p.return_offsets, &p.return_targets, "return sites")?;
        let return_sites = Csr::from_edges(n, &rs);
        check((p.start as usize) < n, "start node")?;
        check(
            p.call_notes.iter().all(|&(s, _)| (s as usize) < n)
                && p.call_notes.windows(2).all(|w| w[0].0 < w[1].0),
            "call note sites",
        )?;
        let nf = p.functions.len();
        check(
            p.async_regs
                .iter()
                .all(|&(s, f)| s.index() < n && f.index() < nf)
                && p.async_regs.windows(2).all(|w| w[0] < w[1]),
            "asynchronous functions",
        )?;
        check(
            p.weak_lines.iter().all(|&(v, _)| v.index() < n)
                && p.weak_lines.windows(2).all(|w| w[0] < w[1]),
            "weak lines",
        )?;
        check(
            p.inlined_lines.iter().all(|&(f, _)| f.index() < nf)
                && p.inlined_lines.windows(2).all(|w| w[0] < w[1]),
            "inlined lines",
        )?;
        check(
            p.instruction_columns.iter().all(|&(v, _)| v.index() < n)
                && p.instruction_columns.windows(2).all(|w| w[0] < w[1]),
            "instruction columns",
        )?;
        check(
            p.tail_calls
                .iter()
                .all(|&v| v.index() < n && p.kinds[v.index()] == NodeKind::CallSite)
                && p.tail_calls.windows(2).all(|w| w[0] < w[1]),
            "tail calls",
        )?;
        let ext = StrPool {
            bytes: p.ids.bytes,
            ends: p.ids.ends,
        };
        let mut ext_index = ExtIndex::default();
        for v in 0..n as u32 {
            check(ext_index.insert(&ext, v), "two nodes have the same id")?;
        }
        Ok(Icfg {
            kinds: p.kinds,
            funcs_of: p.funcs_of.into_iter().map(FuncId).collect(),
            ext,
            ext_index,
            labels: StrPool {
                bytes: p.labels.bytes,
                ends: p.labels.ends,
            },
            line_ends: p.line_ends,
            lines: p.lines,
            functions: p.functions,
            files: p.files,
            succ,
            succ_kind: p.succ_kinds,
            pred,
            pred_kind,
            return_sites,
            start: NodeId(p.start),
            columns: p.columns,
            call_notes: p.call_notes,
            func_lookup,
            async_funcs: async_functions_of(&p.async_regs),
            async_regs: p.async_regs,
            weak_lines: p.weak_lines,
            inlined_lines: p.inlined_lines,
            instruction_columns: p.instruction_columns,
            tail_calls: p.tail_calls,
            call_graph: Default::default(),
            func_nodes: Default::default(),
        })
    }
}

/// The functions: owners, files, entries and exits (kinds and owners),
/// distinct names; returns the name lookup.
fn check_functions(p: &IcfgParts) -> Result<HashMap<Box<str>, FuncId>, PartsError> {
    let (n, nf) = (p.kinds.len(), p.functions.len());
    check(nf <= u32::MAX as usize, "functions")?;
    check(
        p.funcs_of.iter().all(|&f| (f as usize) < nf),
        "a node belongs to no function",
    )?;
    let mut func_lookup = HashMap::with_capacity(nf);
    for (i, f) in p.functions.iter().enumerate() {
        check(
            f.file.is_none_or(|x| x.index() < p.files.len()),
            "function file",
        )?;
        let node_ok = |x: Option<NodeId>, kind: NodeKind| {
            x.is_none_or(|x| {
                x.index() < n && p.kinds[x.index()] == kind && p.funcs_of[x.index()] as usize == i
            })
        };
        check(
            node_ok(f.entry, NodeKind::Entry) && node_ok(f.exit, NodeKind::Exit),
            "function entry or exit",
        )?;
        check(
            func_lookup
                .insert(f.name.clone(), FuncId(i as u32))
                .is_none(),
            "two functions have the same name",
        )?;
    }
    Ok(func_lookup)
}

/// The successors with their kinds (checked), and the predecessors
/// exactly as `build` makes them.
fn check_edges(p: &IcfgParts) -> Result<(Csr, Csr, Vec<EdgeKind>), PartsError> {
    let n = p.kinds.len();
    let edges = csr_edges(n, &p.succ_offsets, &p.succ_targets, "successors")?;
    check(p.succ_kinds.len() == edges.len(), "edge kinds")?;
    for (&(a, b), &k) in edges.iter().zip(&p.succ_kinds) {
        let ok = match k {
            EdgeKind::Local => true,
            EdgeKind::Call => p.kinds[b as usize] == NodeKind::Entry,
            EdgeKind::Return => p.kinds[a as usize] == NodeKind::Exit,
        };
        check(
            ok,
            "a call edge does not enter a function or a return edge does not leave one",
        )?;
    }
    let succ = Csr::from_edges(n, &edges);
    // Backward adjacency, exactly as `build` makes it: edges are sorted
    // by (source, target), so a stable counting sort by target yields
    // every target's predecessors in increasing order.
    let rev: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
    let pred = Csr::from_edges(n, &rev);
    let mut pred_kind = vec![EdgeKind::Local; edges.len()];
    let mut fill: Vec<usize> = (0..n).map(|v| pred.edge_range(v as u32).start).collect();
    for (&(_, b), &k) in edges.iter().zip(&p.succ_kinds) {
        pred_kind[fill[b as usize]] = k;
        fill[b as usize] += 1;
    }
    Ok((succ, pred, pred_kind))
}
