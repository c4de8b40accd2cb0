//! The `.pmcfg` binary cache of a frozen graph: [`Icfg::encode`] and
//! [`Icfg::decode`] (versioned, checksummed, validated on load).

use super::*;

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
