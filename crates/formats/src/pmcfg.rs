//! The `.pmcfg` binary cache of a frozen graph: [`encode`] and [`decode`]
//! (versioned, checksummed, validated on load: the format's lengths and
//! encodings here, every index and invariant of the graph by
//! [`Icfg::from_parts`]).

use postmortem_core::graph::Csr;
use postmortem_core::icfg::{
    CallNote, EdgeKind, Function, Icfg, IcfgParts, NodeKind, PartsError, StrTable,
};
use postmortem_core::ids::{FileId, FuncId, NodeId};

/// Why [`decode`] rejected some bytes. Every variant is one line of
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
/// The cache format version [`encode`] writes and [`decode`] reads.
/// Version 5: the front-end header of a cache with a variable map
/// (`vars::Var::tests`, branch tests) is new; a version 4 cache would
/// read as one without tests, so it is rebuilt instead. Version 7: the
/// inlined lines ([`Icfg::inlined_lines`]). Version 8: the instructions'
/// columns ([`Icfg::instruction_columns`]). Version 9: indirect calls'
/// callees among the variable map's accesses (`vars::Deref::call`).
/// Version 10: an update's other operand (`vars::Origin::Update`).
/// Version 11: the origins `vars::Origin::Either` (a `phi`) and
/// `vars::Origin::Element` (an element's address). Version 12: the
/// out-parameters (`vars::VarMap::out_locals`, `param_writes`). Version
/// 13: pointer parameters passed on (`vars::ParamWrite::passed_on`).
pub const CACHE_VERSION: u16 = 13;
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
    /// Strings as a pool, written straight from `strs` (walked three
    /// times, no copy).
    fn strings<'s>(&mut self, strs: impl Iterator<Item = &'s str> + Clone) {
        self.u64(strs.clone().map(|s| s.len() as u64).sum());
        for s in strs.clone() {
            self.out.extend_from_slice(s.as_bytes());
        }
        let mut end = 0u32;
        self.u32s(strs.map(|s| {
            end += s.len() as u32;
            end
        }));
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
    fn pool(&mut self, count: Option<usize>, what: &'static str) -> Result<StrTable, CacheError> {
        let bytes = self.u8s(None, what)?;
        let bytes = std::str::from_utf8(bytes).map_err(|_| CacheError::Corrupt(what))?;
        let ends = self.u32s(count, what)?;
        StrTable::new(bytes.to_string(), ends).ok_or(CacheError::Corrupt(what))
    }
    /// A CSR over `n` vertices, as (offsets, targets) (checked by
    /// [`Icfg::from_parts`]).
    fn csr(&mut self, n: usize, what: &'static str) -> Result<(Vec<u32>, Vec<u32>), CacheError> {
        let offsets = self.u32s(Some(n + 1), what)?;
        let targets = self.u32s(None, what)?;
        Ok((offsets, targets))
    }
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

/// Serializes the graph into the binary cache format (`.pmcfg`), read
/// back by [`decode`]. Pure: the caller writes the bytes.
///
/// Layout: the magic [`CACHE_MAGIC`], the version [`CACHE_VERSION`]
/// (u16), the total length (u64), then sections of little-endian
/// arrays, each prefixed by its element count (u64): node kinds,
/// owning functions, the id and label string pools, lines, columns,
/// functions (names, files, entries, exits), files, forward adjacency
/// (CSR offsets, targets, edge kinds), return sites (CSR), the start
/// node, the call notes, the asynchronous functions, the weak lines,
/// the tail calls (since version 4), the inlined lines (since
/// version 7) and the instructions' columns (since version 8);
/// last a 64-bit checksum of everything before it. Backward adjacency,
/// the id index and the function lookup are rebuilt on decode rather
/// than stored. The output is deterministic: equal graphs give equal
/// bytes.
pub fn encode(g: &Icfg) -> Vec<u8> {
    let n = g.num_nodes();
    let mut w = CacheWriter {
        out: Vec::with_capacity(g.heap_bytes() / 2 + 64),
    };
    w.out.extend_from_slice(&CACHE_MAGIC);
    w.out.extend_from_slice(&CACHE_VERSION.to_le_bytes());
    w.u64(0); // total length, patched below
    w.u8s(
        &g.nodes()
            .map(|v| node_kind_code(g.kind(v)))
            .collect::<Vec<u8>>(),
    );
    w.u32s(g.nodes().map(|v| g.func_of(v).as_u32()));
    w.strings(g.nodes().map(|v| g.ext_id(v)));
    w.strings(g.nodes().map(|v| g.label(v)));
    let mut end = 0u32;
    w.u32s(g.nodes().map(|v| {
        end += g.lines(v).len() as u32;
        end
    }));
    w.u32s(g.nodes().flat_map(|v| g.lines(v).iter().copied()));
    w.u32s(g.column_table().iter().copied());
    // Functions.
    let functions = g.functions();
    w.u64(functions.len() as u64);
    w.strings(functions.iter().map(|f| &*f.name));
    w.u32s(
        functions
            .iter()
            .map(|f| opt_u32(f.file.map(FileId::as_u32))),
    );
    w.u32s(
        functions
            .iter()
            .map(|f| opt_u32(f.entry.map(NodeId::as_u32))),
    );
    w.u32s(
        functions
            .iter()
            .map(|f| opt_u32(f.exit.map(NodeId::as_u32))),
    );
    w.u64(g.num_files() as u64);
    w.strings((0..g.num_files()).map(|i| g.file_path(FileId::new(i))));
    // Edges.
    w.csr(g.succ_csr(), n);
    w.u8s(
        &g.nodes()
            .flat_map(|v| g.succs(v).map(|(_, k)| edge_kind_code(k)))
            .collect::<Vec<u8>>(),
    );
    let mut end = 0u32;
    w.u32s(std::iter::once(0).chain(g.nodes().map(|v| {
        end += g.return_sites(v).len() as u32;
        end
    })));
    w.u32s(
        g.nodes()
            .flat_map(|v| g.return_sites(v).map(NodeId::as_u32)),
    );
    w.u32(g.start().as_u32());
    write_call_notes(&mut w, g);
    let regs = g.async_registrations();
    w.u32s(regs.iter().map(|r| r.0.as_u32()));
    w.u32s(regs.iter().map(|r| r.1.as_u32()));
    let weak = || g.nodes().flat_map(|v| g.weak_lines(v).map(move |l| (v, l)));
    w.u32s(weak().map(|r| r.0.as_u32()));
    w.u32s(weak().map(|r| r.1));
    w.u32s(g.tail_calls().iter().map(|&v| v.as_u32()));
    let inlined = || {
        (0..g.functions().len()).flat_map(|f| {
            let f = FuncId::new(f);
            g.inlined_lines(f).map(move |l| (f, l))
        })
    };
    w.u32s(inlined().map(|r| r.0.as_u32()));
    w.u32s(inlined().map(|r| r.1));
    let cols = || {
        g.nodes()
            .flat_map(|v| g.instruction_columns(v).map(move |c| (v, c)))
    };
    w.u32s(cols().map(|r| r.0.as_u32()));
    w.u32s(cols().map(|r| r.1));
    let total = (w.out.len() + 8) as u64;
    w.out[8..16].copy_from_slice(&total.to_le_bytes());
    let sum = cache_checksum(&w.out);
    w.u64(sum);
    w.out
}

/// The call notes section: sites, callee names and constant strings, then
/// (version 6) the strings' argument indices, their choices and the
/// arguments' sources.
fn write_call_notes(w: &mut CacheWriter, g: &Icfg) {
    let notes: Vec<(NodeId, &CallNote)> = g.call_notes().collect();
    w.u32s(notes.iter().map(|(s, _)| s.as_u32()));
    w.u32s(notes.iter().map(|(_, c)| c.external_callees.len() as u32));
    w.u32s(notes.iter().map(|(_, c)| c.string_args.len() as u32));
    let strs = notes
        .iter()
        .flat_map(|(_, c)| c.external_callees.iter().chain(&c.string_args))
        .map(|s| &**s);
    w.u64(strs.clone().count() as u64);
    w.strings(strs);
    // Argument indices, string choices and argument sources (version 6).
    w.u32s(notes.iter().map(|(_, c)| c.string_arg_index.len() as u32));
    w.u32s(
        notes
            .iter()
            .flat_map(|(_, c)| c.string_arg_index.iter().copied()),
    );
    for pairs in [
        notes
            .iter()
            .map(|(_, c)| &c.string_choices)
            .collect::<Vec<_>>(),
        notes
            .iter()
            .map(|(_, c)| &c.arg_sources)
            .collect::<Vec<_>>(),
    ] {
        w.u32s(pairs.iter().map(|p| p.len() as u32));
        w.u32s(pairs.iter().flat_map(|p| p.iter().map(|x| x.0)));
        let strs = pairs.iter().flat_map(|p| p.iter().map(|x| &*x.1));
        w.u64(strs.clone().count() as u64);
        w.strings(strs);
    }
}

/// Reads a graph written by [`encode`]. Checks the magic, the version,
/// the length and the checksum, reads the sections (lengths, encodings),
/// and [`Icfg::from_parts`] validates every index and offset, so that a
/// truncated, corrupt or crafted file gives an error and never a panic
/// (and a graph it accepts never panics its accessors).
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
    let ids = r.pool(Some(n), "node ids")?;
    let labels = r.pool(Some(n), "node labels")?;
    let line_ends = r.u32s(Some(n), "line offsets")?;
    let lines = r.u32s(None, "lines")?;
    let columns = r.u32s(None, "columns")?;
    let (functions, files) = read_functions(&mut r)?;
    let (succ_offsets, succ_targets) = r.csr(n, "successors")?;
    let succ_kinds: Vec<EdgeKind> = r
        .u8s(Some(succ_targets.len()), "edge kinds")?
        .iter()
        .map(|&k| match k {
            0 => Ok(EdgeKind::Local),
            1 => Ok(EdgeKind::Call),
            2 => Ok(EdgeKind::Return),
            _ => Err(CacheError::Corrupt("unknown edge kind")),
        })
        .collect::<Result<_, _>>()?;
    let (return_offsets, return_targets) = r.csr(n, "return sites")?;
    let start = r.u32()?;
    let call_notes = read_call_notes(&mut r)?;
    let async_regs = read_pairs(&mut r, "asynchronous functions")?
        .into_iter()
        .map(|(s, f)| (NodeId::new(s as usize), FuncId::new(f as usize)))
        .collect();
    let weak_lines = read_pairs(&mut r, "weak lines")?
        .into_iter()
        .map(|(v, l)| (NodeId::new(v as usize), l))
        .collect();
    let tail_calls = r
        .u32s(None, "tail calls")?
        .into_iter()
        .map(|v| NodeId::new(v as usize))
        .collect();
    let inlined_lines = read_pairs(&mut r, "inlined lines")?
        .into_iter()
        .map(|(f, l)| (FuncId::new(f as usize), l))
        .collect();
    let instruction_columns = read_pairs(&mut r, "instruction columns")?
        .into_iter()
        .map(|(v, c)| (NodeId::new(v as usize), c))
        .collect();
    if r.pos != body.len() {
        return Err(CacheError::Corrupt("trailing bytes after the last section"));
    }
    Icfg::from_parts(IcfgParts {
        kinds,
        funcs_of,
        ids,
        labels,
        line_ends,
        lines,
        columns,
        functions,
        files,
        succ_offsets,
        succ_targets,
        succ_kinds,
        return_offsets,
        return_targets,
        start,
        call_notes,
        async_regs,
        weak_lines,
        inlined_lines,
        instruction_columns,
        tail_calls,
    })
    .map_err(|PartsError(what)| CacheError::Corrupt(what))
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

/// The functions section: names, files, entries and exits, and the files
/// (indices checked by [`Icfg::from_parts`]).
fn read_functions(r: &mut CacheReader<'_>) -> Result<(Vec<Function>, Vec<Box<str>>), CacheError> {
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
    let opt = |x: u32| (x != CACHE_NONE).then_some(x as usize);
    let functions = (0..nf)
        .map(|i| Function {
            name: names.get(i).into(),
            file: opt(ffile[i]).map(FileId::new),
            entry: opt(fentry[i]).map(NodeId::new),
            exit: opt(fexit[i]).map(NodeId::new),
        })
        .collect();
    Ok((functions, files))
}

/// The call notes section (sites checked by [`Icfg::from_parts`]).
fn read_call_notes(r: &mut CacheReader<'_>) -> Result<Vec<(u32, CallNote)>, CacheError> {
    let sites = r.u32s(None, "call notes")?;
    let ne = r.u32s(Some(sites.len()), "call notes")?;
    let ns = r.u32s(Some(sites.len()), "call notes")?;
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
    let mut call_notes: Vec<(u32, CallNote)> = sites
        .iter()
        .zip(ne.iter().zip(&ns))
        .map(|(&s, (&e, &a))| {
            (
                s,
                CallNote {
                    external_callees: take(e),
                    string_args: take(a),
                    ..CallNote::default()
                },
            )
        })
        .collect();
    let ni = r.u32s(Some(sites.len()), "call note argument indices")?;
    let total: u64 = ni.iter().map(|&x| x as u64).sum();
    let flat = r.u32s(usize::try_from(total).ok(), "call note argument indices")?;
    let mut at = 0usize;
    for ((_, note), &k) in call_notes.iter_mut().zip(&ni) {
        if k != 0 && k as usize != note.string_args.len() {
            return Err(CacheError::Corrupt("call note argument indices"));
        }
        note.string_arg_index = flat[at..at + k as usize].to_vec();
        at += k as usize;
    }
    for choices in [true, false] {
        let pairs = read_indexed_strings(r, sites.len())?;
        for ((_, note), p) in call_notes.iter_mut().zip(pairs) {
            if choices {
                note.string_choices = p;
            } else {
                note.arg_sources = p;
            }
        }
    }
    Ok(call_notes)
}

/// `(argument index, string)` pairs of one call note.
type IndexedStrings = Vec<(u32, Box<str>)>;

/// Per call note, `(argument index, string)` pairs: counts, indices,
/// then the strings.
fn read_indexed_strings(
    r: &mut CacheReader<'_>,
    notes: usize,
) -> Result<Vec<IndexedStrings>, CacheError> {
    const WHAT: &str = "call note string choices";
    let counts = r.u32s(Some(notes), WHAT)?;
    let total: u64 = counts.iter().map(|&x| x as u64).sum();
    let total = usize::try_from(total).map_err(|_| CacheError::Corrupt(WHAT))?;
    let index = r.u32s(Some(total), WHAT)?;
    if r.u64()? != total as u64 {
        return Err(CacheError::Corrupt(WHAT));
    }
    let strs = r.pool(Some(total), WHAT)?;
    let mut at = 0usize;
    Ok(counts
        .iter()
        .map(|&k| {
            let v = (at..at + k as usize)
                .map(|i| (index[i], strs.get(i).into()))
                .collect();
            at += k as usize;
            v
        })
        .collect())
}

/// Two `u32` arrays of the same length, as pairs.
fn read_pairs(r: &mut CacheReader<'_>, what: &'static str) -> Result<Vec<(u32, u32)>, CacheError> {
    let a = r.u32s(None, what)?;
    let b = r.u32s(Some(a.len()), what)?;
    Ok(a.into_iter().zip(b).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use postmortem_core::icfg::{IcfgBuilder, NodeSpec};
    use proptest::prelude::*;

    use postmortem_testkit::testgen::observe;

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
        b.mark_tail_call(c);
        b.add_inlined_line(f, 11);
        b.add_inlined_line(main, 40);
        b.add_instruction_column(fs, 7);
        b.add_instruction_column(fs, 3);
        b.build().unwrap()
    }

    #[test]
    fn round_trip_keeps_everything() {
        let g = sample();
        let bytes = encode(&g);
        let h = decode(&bytes).unwrap();
        assert_eq!(observe(&g), observe(&h));
        assert_eq!(encode(&h), bytes, "encoding is deterministic");
        for n in g.nodes() {
            let w: Vec<u32> = h.weak_lines(n).collect();
            assert_eq!(g.weak_lines(n).collect::<Vec<_>>(), w);
        }
        assert_eq!(h.weak_lines(NodeId::new(5)).collect::<Vec<_>>(), vec![13]);
        assert_eq!(h.weak_lines(NodeId::new(0)).collect::<Vec<_>>(), vec![2]);
        assert_eq!(h.tail_calls(), &[NodeId::new(1)]);
        assert!(h.is_tail_call(NodeId::new(1)) && !h.is_tail_call(NodeId::new(2)));
        let main = h.function_by_name("main").unwrap();
        let f = h.function_by_name("f").unwrap();
        assert_eq!(h.inlined_lines(main).collect::<Vec<_>>(), vec![40]);
        assert_eq!(h.inlined_lines(f).collect::<Vec<_>>(), vec![11]);
        assert_eq!(
            h.instruction_columns(NodeId::new(5)).collect::<Vec<_>>(),
            vec![3, 7]
        );
    }

    #[test]
    fn wrong_magic_version_and_length_are_named() {
        let bytes = encode(&sample());
        assert_eq!(decode(b"<?xml version").unwrap_err(), CacheError::NotACache);
        assert_eq!(decode(b"").unwrap_err(), CacheError::NotACache);
        let mut v = bytes.clone();
        let other = CACHE_VERSION + 1;
        v[6..8].copy_from_slice(&other.to_le_bytes());
        assert_eq!(
            decode(&v).unwrap_err(),
            CacheError::Version {
                found: other,
                expected: CACHE_VERSION
            }
        );
        let e = decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(matches!(e, CacheError::Truncated { .. }), "{e:?}");
        assert!(e.to_string().starts_with("truncated graph cache"));
        let mut v = bytes.clone();
        v.push(0);
        assert!(matches!(
            decode(&v).unwrap_err(),
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
            let bytes = encode(&sample());
            let cut = cut % bytes.len();
            prop_assert!(decode(&bytes[..cut]).is_err());
        }

        #[test]
        fn every_bit_flip_is_an_error(pos in 0usize..100_000, bit in 0u8..8) {
            let mut bytes = encode(&sample());
            let pos = pos % bytes.len();
            bytes[pos] ^= 1 << bit;
            prop_assert!(decode(&bytes).is_err());
        }

        /// Changes that keep a valid checksum (a crafted file) never panic
        /// the decoder, and a graph it accepts never panics its accessors.
        #[test]
        fn resealed_corruption_never_panics(edits in proptest::collection::vec((0usize..100_000, any::<u8>()), 1..6)) {
            // (Random graphs live in the testkit crate, out of reach of
            // unit tests; the pmcfg fuzz target covers those.)
            let mut bytes = encode(&sample());
            for (pos, val) in edits {
                let pos = CACHE_HEADER + pos % (bytes.len() - CACHE_HEADER - 8);
                bytes[pos] = val;
            }
            reseal(&mut bytes);
            if let Ok(h) = decode(&bytes) {
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
            let _ = decode(&v);
        }
    }
}
