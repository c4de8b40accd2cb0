//! Reader for the csi-cc GraphML control-flow graphs.
//!
//! The format is described in `shared/data/README.md`; in short:
//!
//! * `<key id=.. for=.. attr.name=..>` declarations map the `key` of each
//!   `<data>` element to an attribute name, and may carry a `<default>`.
//!   Without a declared default, an edge's `type` is `flow`, its `scope` is
//!   `intraprocedural`, and a node's `kind` is `declaration`.
//! * Edges of `type=flow` are intraprocedural control flow; edges of
//!   `type=control, scope=interprocedural` are calls (call site -> callee
//!   entry). Every other edge (`type=data`, intraprocedural `control`) is a
//!   dependence edge and is ignored.
//! * A node with no incoming or outgoing flow edge is a declaration, not a
//!   control-flow node: it is left out of the model. A call edge to such a
//!   node means the call site calls code outside the program, so control
//!   may flow straight on to the return site
//!   ([`IcfgBuilder::add_external_callee`]).
//! * Node ids are `n:<function-id>:<index>`; every node belongs to the
//!   function named by the middle part. The function is named by the
//!   `procedure` data of its entry node (or, without one, by the function
//!   id text); its file is the entry's `file` data. Should two functions
//!   carry the same procedure name, the later one is renamed
//!   `name [<function-id>]` so that both stay distinct.
//! * `kind` `entry`, `exit` and `call-site` map to [`NodeKind::Entry`],
//!   [`NodeKind::Exit`] and [`NodeKind::CallSite`]; any other kind to
//!   [`NodeKind::Statement`]. `lines` like `( 0 )` or `(12 13)` list source
//!   lines, 0 meaning none. The label is the trimmed `label` data.
//! * A graph-level `program-start` data names the start node.
//!
//! The reader streams the document with `quick_xml` (no DOM, the XML text
//! is not kept) and decompresses gzip input transparently. Entity
//! declarations are refused, and references to unknown entities are
//! errors, so entity bombs cannot expand. Error positions (line, byte) are
//! those of the decompressed text.
//!
//! Memory stays modest: node ids are interned once into one string pool,
//! labels and lines go to flat pools, and edges are pairs of `u32`; a
//! 700k-node, 200 MB file peaks at about 160 MB of resident memory.

use crate::error::{quote, FormatError, XmlPosition};
use postmortem_core::{FuncId, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSpec};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

const NONE: u32 = u32::MAX;

/// Reads a csi-cc GraphML control-flow graph from a file (plain or gzip).
///
/// Errors name the file by `path` as displayed.
pub fn read_graphml_path(path: &Path) -> Result<Icfg, FormatError> {
    read_graphml_path_limited(path, u64::MAX)
}

/// [`read_graphml_path`], refusing a file (or its gzip-decompressed
/// content) of more than `limit` bytes, and anything but a regular file.
pub fn read_graphml_path_limited(path: &Path, limit: u64) -> Result<Icfg, FormatError> {
    let name = path.display().to_string();
    let size = crate::input::require_regular(path, "a graph")?;
    let limit = crate::input::Limit::new(limit, "graph", "--max-memory");
    if size > limit.bytes {
        return Err(limit.exceeded(&name, Some(size)));
    }
    let file = File::open(path).map_err(|e| FormatError::io(&name, e))?;
    read_graphml_limited(BufReader::with_capacity(1 << 16, file), &name, limit)
}

/// Reads a csi-cc GraphML control-flow graph from `reader`, decompressing
/// it first if it starts with the gzip magic bytes `1f 8b`.
///
/// `source_name` names the input in error messages.
pub fn read_graphml<R: BufRead>(reader: R, source_name: &str) -> Result<Icfg, FormatError> {
    read_graphml_limited(
        reader,
        source_name,
        crate::input::Limit::new(u64::MAX, "graph", "--max-memory"),
    )
}

/// [`read_graphml`], failing once more than `limit` bytes (after
/// decompression) have been read.
pub fn read_graphml_limited<R: BufRead>(
    mut reader: R,
    source_name: &str,
    limit: crate::input::Limit,
) -> Result<Icfg, FormatError> {
    let mut head = [0u8; 2];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FormatError::io(source_name, e)),
        }
    }
    if n == 0 {
        return Err(FormatError::empty(source_name));
    }
    let input = io::Cursor::new(head[..n].to_vec()).chain(reader);
    let bounded = |r| crate::input::Bounded::new(r, limit, source_name);
    if head[..n] == [0x1f, 0x8b] {
        let r = bounded(Box::new(flate2::bufread::MultiGzDecoder::new(input)) as Box<dyn Read>);
        Parser::new(r, source_name).run()
    } else {
        Parser::new(bounded(Box::new(input) as Box<dyn Read>), source_name).run()
    }
}

// ---------------------------------------------------------------------------
// Input plumbing: our own buffer, so that lines are counted in bulk (per
// buffer) rather than per token, and only up to where they are asked for.

struct Counting<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    filled: usize,
    /// Bytes before `buf`.
    base: u64,
    /// Newlines before offset `counted` of `buf`.
    lines: Cell<u64>,
    counted: Cell<usize>,
}

impl<R: Read> Counting<R> {
    fn new(inner: R) -> Self {
        Counting {
            inner,
            buf: vec![0; 1 << 16].into_boxed_slice(),
            pos: 0,
            filled: 0,
            base: 0,
            lines: Cell::new(0),
            counted: Cell::new(0),
        }
    }

    /// Bytes handed out so far.
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The 1-based line of the current position.
    fn line(&self) -> u64 {
        let c = self.counted.get();
        if self.pos > c {
            self.lines
                .set(self.lines.get() + count_newlines(&self.buf[c..self.pos]));
            self.counted.set(self.pos);
        }
        self.lines.get() + 1
    }
}

impl<R: Read> Counting<R> {
    /// Counts the lines of the spent buffer and reads the next one.
    #[inline(never)]
    fn refill(&mut self) -> io::Result<()> {
        let c = self.counted.get();
        if self.filled > c {
            self.lines
                .set(self.lines.get() + count_newlines(&self.buf[c..self.filled]));
        }
        self.base += self.filled as u64;
        self.pos = 0;
        self.filled = 0;
        self.counted.set(0);
        self.filled = loop {
            match self.inner.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        Ok(())
    }
}

impl<R: Read> BufRead for Counting<R> {
    #[inline]
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.filled {
            self.refill()?;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    #[inline]
    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.filled);
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

fn count_newlines(b: &[u8]) -> u64 {
    // Byte counters summed per 32-byte block: this vectorizes well.
    let mut blocks = b.chunks_exact(32);
    let mut n = 0u64;
    for block in &mut blocks {
        let block: &[u8; 32] = block.try_into().expect("32-byte block");
        let mut k = 0u8;
        for &c in block {
            k += u8::from(c == b'\n');
        }
        n += u64::from(k);
    }
    n + blocks.remainder().iter().filter(|&&c| c == b'\n').count() as u64
}

// ---------------------------------------------------------------------------
// Node-id interner: one string pool, an open-addressing table of indices.

enum InternError {
    Utf8(std::str::Utf8Error),
    Full,
}

struct Interner {
    bytes: String,
    ends: Vec<u32>,
    hashes: Vec<u32>,
    table: Vec<u32>,
    state: RandomState,
    /// The last few ids interned or found: in csi-cc files an edge names
    /// the nodes just before and just after it, so most look-ups hit here.
    recent: [u32; 4],
    next_recent: usize,
}

impl Interner {
    fn new() -> Self {
        Interner {
            bytes: String::new(),
            ends: Vec::new(),
            hashes: Vec::new(),
            table: vec![0; 1024],
            state: RandomState::new(),
            recent: [NONE; 4],
            next_recent: 0,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get_str(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    fn hash(&self, s: &[u8]) -> u32 {
        let h = self.state.hash_one(s);
        (h ^ (h >> 32)) as u32
    }

    /// `Ok(index)` if present, else `Err(free slot)`.
    fn find(&self, s: &[u8], h: u32) -> Result<u32, usize> {
        let mask = self.table.len() - 1;
        let mut slot = h as usize & mask;
        loop {
            match self.table[slot] {
                0 => return Err(slot),
                v => {
                    let i = v - 1;
                    if self.hashes[i as usize] == h && self.get_str(i).as_bytes() == s {
                        return Ok(i);
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    fn get(&self, s: &str) -> Option<u32> {
        self.find(s.as_bytes(), self.hash(s.as_bytes())).ok()
    }

    /// The index of `s`, and whether it is new.
    fn intern(&mut self, s: &[u8]) -> Result<(u32, bool), InternError> {
        // Most recent first; ids mostly differ in their last bytes.
        let n = self.recent.len();
        for k in 1..=n {
            let r = self.recent[(self.next_recent + n - k) % n];
            if r != NONE {
                let t = self.get_str(r).as_bytes();
                if t.len() == s.len() && t.iter().rev().zip(s.iter().rev()).all(|(x, y)| x == y) {
                    return Ok((r, false));
                }
            }
        }
        let h = self.hash(s);
        match self.find(s, h) {
            Ok(i) => {
                self.remember(i);
                Ok((i, false))
            }
            Err(mut slot) => {
                // Only new ids are checked, once.
                let text = std::str::from_utf8(s).map_err(InternError::Utf8)?;
                let i = self.ends.len();
                if i >= (NONE - 1) as usize || self.bytes.len() + s.len() > u32::MAX as usize {
                    return Err(InternError::Full);
                }
                self.bytes.push_str(text);
                self.ends.push(self.bytes.len() as u32);
                self.hashes.push(h);
                if (i + 1) * 2 > self.table.len() {
                    self.grow();
                    slot = self.find(s, h).expect_err("new id is not in the table yet");
                }
                self.table[slot] = i as u32 + 1;
                self.remember(i as u32);
                Ok((i as u32, true))
            }
        }
    }

    fn remember(&mut self, i: u32) {
        self.recent[self.next_recent] = i;
        self.next_recent = (self.next_recent + 1) % self.recent.len();
    }

    fn grow(&mut self) {
        let size = self.table.len() * 2;
        let mask = size - 1;
        let mut table = vec![0u32; size];
        // Re-insert every entry but the one just pushed (inserted by caller).
        for i in 0..self.ends.len() - 1 {
            let mut slot = self.hashes[i] as usize & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = i as u32 + 1;
        }
        self.table = table;
    }
}

// ---------------------------------------------------------------------------
// GraphML vocabulary.

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Attr {
    Kind,
    Label,
    Lines,
    Procedure,
    File,
    Type,
    Scope,
    ProgramStart,
    Other,
}

impl Attr {
    fn from_name(name: &str) -> Attr {
        match name {
            "kind" => Attr::Kind,
            "label" => Attr::Label,
            "lines" => Attr::Lines,
            "procedure" => Attr::Procedure,
            "file" => Attr::File,
            "type" => Attr::Type,
            "scope" => Attr::Scope,
            "program-start" => Attr::ProgramStart,
            _ => Attr::Other,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Domain {
    Node,
    Edge,
    Graph,
    All,
    Other,
}

struct Key {
    id: Box<[u8]>,
    attr: Attr,
    domain: Domain,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum RawKind {
    Entry,
    Exit,
    CallSite,
    Statement,
}

impl RawKind {
    fn parse(s: &str) -> RawKind {
        match s.trim() {
            "entry" => RawKind::Entry,
            "exit" => RawKind::Exit,
            "call-site" => RawKind::CallSite,
            _ => RawKind::Statement,
        }
    }
    fn to_kind(self) -> NodeKind {
        match self {
            RawKind::Entry => NodeKind::Entry,
            RawKind::Exit => NodeKind::Exit,
            RawKind::CallSite => NodeKind::CallSite,
            RawKind::Statement => NodeKind::Statement,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum EdgeType {
    Flow,
    Control,
    Other,
}

impl EdgeType {
    fn parse(s: &str) -> EdgeType {
        match s.trim() {
            "flow" => EdgeType::Flow,
            "control" => EdgeType::Control,
            _ => EdgeType::Other,
        }
    }
}

/// Declared defaults, per domain.
struct Defaults {
    kind: RawKind,
    label: String,
    lines: Vec<u32>,
    procedure: Option<String>,
    file: Option<String>,
    edge_type: EdgeType,
    interprocedural: bool,
    program_start: Option<String>,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            kind: RawKind::Statement,
            label: String::new(),
            lines: Vec::new(),
            procedure: None,
            file: None,
            edge_type: EdgeType::Flow,
            interprocedural: false,
            program_start: None,
        }
    }
}

/// What an open element is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Elem {
    Graphml,
    Key(usize),
    KeyDefault(usize),
    Graph,
    Node,
    Edge,
    Data(Attr),
    Other,
}

impl Elem {
    fn describe(self) -> &'static str {
        match self {
            Elem::Graphml => "<graphml>",
            Elem::Key(_) => "<key>",
            Elem::KeyDefault(_) => "<default>",
            Elem::Graph => "<graph>",
            Elem::Node => "<node>",
            Elem::Edge => "<edge>",
            Elem::Data(_) => "<data>",
            Elem::Other => "an element",
        }
    }
}

/// What an entry node said about its function.
struct EntryInfo {
    func: u32,
    procedure: Option<String>,
    file: Option<String>,
}

// ---------------------------------------------------------------------------
// The parser.

struct Parser<'n, R> {
    reader: Reader<Counting<R>>,
    name: &'n str,
    stack: Vec<Elem>,
    seen_root: bool,
    seen_graph: bool,

    keys: HashMap<Box<[u8]>, usize>,
    key_list: Vec<Key>,
    defaults: Defaults,

    ids: Interner,
    /// Per interned id: the record defining it, or NONE.
    def_of: Vec<u32>,
    /// Edge endpoints referenced before their definition, with where.
    forward_refs: Vec<(u32, XmlPosition)>,

    // Node records, in document order.
    rec_id: Vec<u32>,
    rec_kind: Vec<RawKind>,
    rec_func: Vec<u32>,
    labels: String,
    label_ends: Vec<u32>,
    lines: Vec<u32>,
    line_ends: Vec<u32>,
    entries: Vec<EntryInfo>,

    funcs: HashMap<Box<str>, u32>,
    func_names: Vec<Box<str>>,

    flow: Vec<(u32, u32)>,
    calls: Vec<(u32, u32)>,
    program_start: Option<(String, XmlPosition)>,

    // The element being read.
    text: String,
    cur_id: u32,
    cur_kind: RawKind,
    cur_func: u32,
    cur_label: String,
    cur_lines: Vec<u32>,
    cur_proc: Option<String>,
    cur_file: Option<String>,
    cur_edge: (u32, u32),
    cur_edge_type: EdgeType,
    cur_interprocedural: bool,
}

type PResult<T> = Result<T, FormatError>;

impl<'n, R: Read> Parser<'n, R> {
    fn new(input: R, name: &'n str) -> Self {
        let mut reader = Reader::from_reader(Counting::new(input));
        let config = reader.config_mut();
        config.trim_text(false);
        config.check_end_names = true;
        config.expand_empty_elements = false;
        Parser {
            reader,
            name,
            stack: Vec::with_capacity(8),
            seen_root: false,
            seen_graph: false,
            keys: HashMap::new(),
            key_list: Vec::new(),
            defaults: Defaults::default(),
            ids: Interner::new(),
            def_of: Vec::new(),
            forward_refs: Vec::new(),
            rec_id: Vec::new(),
            rec_kind: Vec::new(),
            rec_func: Vec::new(),
            labels: String::new(),
            label_ends: Vec::new(),
            lines: Vec::new(),
            line_ends: Vec::new(),
            entries: Vec::new(),
            funcs: HashMap::new(),
            func_names: Vec::new(),
            flow: Vec::new(),
            calls: Vec::new(),
            program_start: None,
            text: String::new(),
            cur_id: NONE,
            cur_kind: RawKind::Statement,
            cur_func: NONE,
            cur_label: String::new(),
            cur_lines: Vec::new(),
            cur_proc: None,
            cur_file: None,
            cur_edge: (NONE, NONE),
            cur_edge_type: EdgeType::Flow,
            cur_interprocedural: false,
        }
    }

    // --- positions and errors -------------------------------------------

    fn pos(&self) -> XmlPosition {
        XmlPosition {
            line: self.reader.get_ref().line(),
            byte: self.reader.buffer_position(),
        }
    }

    fn graph_err(&self, message: &str) -> FormatError {
        FormatError::graph(self.name, Some(self.pos()), message)
    }

    fn xml_err(&self, message: &str) -> FormatError {
        FormatError::xml(self.name, self.pos(), message)
    }

    /// An error of the XML reader itself (syntax, I/O): positioned where
    /// the reader says it is.
    fn read_err(&self, e: quick_xml::Error) -> FormatError {
        match e {
            quick_xml::Error::Io(io) => {
                let what = match io.kind() {
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
                        format!("corrupt input: {io}")
                    }
                    io::ErrorKind::UnexpectedEof => format!("unexpected end of input: {io}"),
                    _ => io.to_string(),
                };
                FormatError::io(self.name, io::Error::new(io.kind(), what))
            }
            other => {
                let pos = XmlPosition {
                    line: self.reader.get_ref().line(),
                    byte: self.reader.error_position(),
                };
                FormatError::xml(self.name, pos, &describe_xml_error(&other))
            }
        }
    }

    /// An error in the content of the current event (escapes, encoding).
    fn content_err(&self, e: quick_xml::Error) -> FormatError {
        self.xml_err(&describe_xml_error(&e))
    }

    fn attr_err(&self, e: quick_xml::events::attributes::AttrError) -> FormatError {
        self.xml_err(&format!("bad attribute: {e}"))
    }

    // --- main loop --------------------------------------------------------

    fn run(mut self) -> PResult<Icfg> {
        let mut buf = Vec::with_capacity(4096);
        loop {
            buf.clear();
            let event = match self.reader.read_event_into(&mut buf) {
                Ok(ev) => ev,
                Err(e) => return Err(self.read_err(e)),
            };
            match event {
                Event::Start(e) => {
                    let elem = self.open(&e)?;
                    self.stack.push(elem);
                }
                Event::Empty(e) => {
                    let elem = self.open(&e)?;
                    self.close(elem)?;
                }
                Event::End(_) => {
                    // quick_xml checks that end names match.
                    let Some(elem) = self.stack.pop() else {
                        return Err(self.xml_err("unexpected end tag"));
                    };
                    self.close(elem)?;
                }
                Event::Text(t) => {
                    if self.collecting_text() {
                        let text = t.unescape().map_err(|e| self.content_err(e))?;
                        self.text.push_str(&text);
                    } else if self.stack.is_empty() && !is_blank(&t) {
                        return Err(self.xml_err("text outside the root element"));
                    }
                    // Other text (indentation, text in ignored elements) is
                    // not looked at: no entity in it is ever expanded.
                }
                Event::CData(t) => {
                    if self.collecting_text() {
                        let text = std::str::from_utf8(&t)
                            .map_err(|e| self.xml_err(&format!("invalid UTF-8: {e}")))?;
                        self.text.push_str(text);
                    }
                }
                Event::DocType(t) => {
                    if t.windows(6).any(|w| w == b"ENTITY") {
                        return Err(
                            self.xml_err("the DOCTYPE declares entities, which are refused")
                        );
                    }
                }
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
                Event::Eof => break,
            }
        }
        if let Some(&open) = self.stack.last() {
            return Err(self.xml_err(&format!(
                "unexpected end of file inside {} (truncated?)",
                open.describe()
            )));
        }
        if self.reader.get_ref().offset() == 0 {
            return Err(FormatError::empty(self.name));
        }
        if !self.seen_root {
            return Err(self.xml_err("no root element"));
        }
        if !self.seen_graph {
            return Err(self.graph_err("no <graph> element"));
        }
        self.finish()
    }

    fn collecting_text(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Elem::Data(_)) | Some(Elem::KeyDefault(_))
        )
    }

    /// Handles a start (or empty) tag; returns what it opens.
    fn open(&mut self, e: &BytesStart<'_>) -> PResult<Elem> {
        let parent = self.stack.last().copied();
        let local = e.local_name();
        let name = local.as_ref();
        let elem = match (parent, name) {
            (None, _) => {
                if self.seen_root {
                    return Err(self.xml_err("more than one root element"));
                }
                self.seen_root = true;
                if name != b"graphml" {
                    let shown = String::from_utf8_lossy(name);
                    return Err(
                        self.graph_err(&format!("the root element is <{shown}>, not <graphml>"))
                    );
                }
                Elem::Graphml
            }
            (Some(Elem::Graphml), b"key") => self.open_key(e)?,
            (Some(Elem::Key(k)), b"default") => {
                self.text.clear();
                Elem::KeyDefault(k)
            }
            (Some(Elem::Graphml), b"graph") => {
                if self.seen_graph {
                    return Err(self.graph_err("more than one <graph> element"));
                }
                self.seen_graph = true;
                self.program_start = self.defaults.program_start.clone().map(|s| (s, self.pos()));
                Elem::Graph
            }
            (Some(Elem::Node), b"graph") | (Some(Elem::Edge), b"graph") => {
                return Err(self.graph_err("nested graphs are not supported"));
            }
            (Some(Elem::Graph), b"node") => {
                self.open_node(e)?;
                Elem::Node
            }
            (Some(Elem::Graph), b"edge") => {
                self.open_edge(e)?;
                Elem::Edge
            }
            (Some(Elem::Graph), b"data")
            | (Some(Elem::Node), b"data")
            | (Some(Elem::Edge), b"data") => {
                self.text.clear();
                Elem::Data(self.data_attr(e)?)
            }
            _ => Elem::Other,
        };
        Ok(elem)
    }

    /// The (unescaped) values of attributes `names` of `e`, as bytes (not
    /// yet checked to be UTF-8).
    fn attrs<'e, const N: usize>(
        &self,
        e: &'e BytesStart<'e>,
        names: [&str; N],
    ) -> PResult<[Option<Cow<'e, [u8]>>; N]> {
        let mut out = [const { None }; N];
        // Fast path for the plain `name="value"` attributes of csi-cc files.
        if let Some(found) = scan_attrs(e.attributes_raw(), names.map(str::as_bytes)) {
            for (slot, raw) in out.iter_mut().zip(found) {
                *slot = raw.map(Cow::Borrowed);
            }
            return Ok(out);
        }
        for (slot, name) in out.iter_mut().zip(names) {
            if let Some(a) = e
                .try_get_attribute(name)
                .map_err(|err| self.attr_err(err))?
            {
                *slot = Some(
                    match a.unescape_value().map_err(|err| self.content_err(err))? {
                        Cow::Borrowed(v) => Cow::Borrowed(v.as_bytes()),
                        Cow::Owned(v) => Cow::Owned(v.into_bytes()),
                    },
                );
            }
        }
        Ok(out)
    }

    fn utf8_err(&self, err: std::str::Utf8Error) -> FormatError {
        self.xml_err(&format!("cannot decode input using UTF-8: {err}"))
    }

    fn intern_err(&self, err: InternError) -> FormatError {
        match err {
            InternError::Utf8(err) => self.utf8_err(err),
            InternError::Full => self.graph_err("too many nodes"),
        }
    }

    fn attr_value(&self, e: &BytesStart<'_>, name: &str) -> PResult<Option<String>> {
        let [v] = self.attrs(e, [name])?;
        match v {
            None => Ok(None),
            Some(v) => String::from_utf8(v.into_owned())
                .map(Some)
                .map_err(|err| self.utf8_err(err.utf8_error())),
        }
    }

    fn open_key(&mut self, e: &BytesStart<'_>) -> PResult<Elem> {
        let Some(id) = self.attr_value(e, "id")? else {
            return Err(self.graph_err("<key> without an id"));
        };
        let attr_name = self.attr_value(e, "attr.name")?.unwrap_or_default();
        let domain = match self.attr_value(e, "for")?.as_deref() {
            Some("node") => Domain::Node,
            Some("edge") => Domain::Edge,
            Some("graph") => Domain::Graph,
            Some("all") | None => Domain::All,
            Some(_) => Domain::Other,
        };
        let index = self.key_list.len();
        if self
            .keys
            .insert(id.clone().into_bytes().into_boxed_slice(), index)
            .is_some()
        {
            return Err(self.graph_err(&format!("key id {} is declared twice", quote(&id))));
        }
        self.key_list.push(Key {
            id: id.into_bytes().into_boxed_slice(),
            attr: Attr::from_name(&attr_name),
            domain,
        });
        Ok(Elem::Key(index))
    }

    fn data_attr(&self, e: &BytesStart<'_>) -> PResult<Attr> {
        let [key] = self.attrs(e, ["key"])?;
        let Some(key) = key else {
            return Err(self.graph_err("<data> without a key"));
        };
        match self.find_key(&key) {
            Some(a) => Ok(a),
            None => {
                let key = String::from_utf8_lossy(&key);
                Err(self.graph_err(&format!("<data> refers to undeclared key {}", quote(&key))))
            }
        }
    }

    /// The attribute a key id stands for. Few keys are declared in
    /// practice, and a linear scan beats hashing them.
    fn find_key(&self, id: &[u8]) -> Option<Attr> {
        if self.key_list.len() <= 32 {
            self.key_list
                .iter()
                .find(|k| k.id.len() == id.len() && k.id.last() == id.last() && *k.id == *id)
                .map(|k| k.attr)
        } else {
            self.keys.get(id).map(|&k| self.key_list[k].attr)
        }
    }

    fn open_node(&mut self, e: &BytesStart<'_>) -> PResult<()> {
        let [id] = self.attrs(e, ["id"])?;
        let Some(id) = id else {
            return Err(self.graph_err("<node> without an id"));
        };
        let index = match self.ids.intern(&id) {
            Ok((index, _)) => index,
            Err(err) => return Err(self.intern_err(err)),
        };
        let id = self.ids.get_str(index);
        if index as usize == self.def_of.len() {
            self.def_of.push(NONE);
        }
        if self.def_of[index as usize] != NONE {
            return Err(self.graph_err(&format!("node id {} is defined twice", quote(id))));
        }
        // n:<function-id>:<index>
        let func_text = id
            .split_once(':')
            .and_then(|(_, rest)| rest.rsplit_once(':'))
            .map_or("", |(mid, _)| mid);
        if func_text.is_empty() {
            return Err(self.graph_err(&format!(
                "node id {} is not of the form n:<function-id>:<index>",
                quote(id)
            )));
        }
        let same = self.cur_func != NONE && *self.func_names[self.cur_func as usize] == *func_text;
        if !same {
            self.cur_func = match self.funcs.get(func_text) {
                Some(&f) => f,
                None => {
                    let f = self.func_names.len() as u32;
                    self.funcs.insert(func_text.into(), f);
                    self.func_names.push(func_text.into());
                    f
                }
            };
        }
        self.cur_id = index;
        self.cur_kind = self.defaults.kind;
        self.cur_label.clear();
        self.cur_label.push_str(&self.defaults.label);
        self.cur_lines.clear();
        self.cur_lines.extend_from_slice(&self.defaults.lines);
        self.cur_proc.clone_from(&self.defaults.procedure);
        self.cur_file.clone_from(&self.defaults.file);
        // Mark it defined now, so that a duplicate is caught even inside.
        self.def_of[index as usize] = self.rec_id.len() as u32;
        Ok(())
    }

    fn endpoint(&mut self, id: Option<&[u8]>, which: &str) -> PResult<u32> {
        let Some(id) = id else {
            return Err(self.graph_err(&format!("<edge> without a {which}")));
        };
        let (index, new) = match self.ids.intern(id) {
            Ok(found) => found,
            Err(err) => return Err(self.intern_err(err)),
        };
        if new {
            self.def_of.push(NONE);
        }
        if self.def_of[index as usize] == NONE {
            let pos = self.pos();
            self.forward_refs.push((index, pos));
        }
        Ok(index)
    }

    fn open_edge(&mut self, e: &BytesStart<'_>) -> PResult<()> {
        let [source, target] = self.attrs(e, ["source", "target"])?;
        let s = self.endpoint(source.as_deref(), "source")?;
        let t = self.endpoint(target.as_deref(), "target")?;
        self.cur_edge = (s, t);
        self.cur_edge_type = self.defaults.edge_type;
        self.cur_interprocedural = self.defaults.interprocedural;
        Ok(())
    }

    /// Handles the end of an element.
    fn close(&mut self, elem: Elem) -> PResult<()> {
        match elem {
            Elem::KeyDefault(k) => self.set_default(k),
            Elem::Node => self.close_node(),
            Elem::Edge => {
                match (self.cur_edge_type, self.cur_interprocedural) {
                    (EdgeType::Flow, _) => self.flow.push(self.cur_edge),
                    (EdgeType::Control, true) => self.calls.push(self.cur_edge),
                    _ => {}
                }
                Ok(())
            }
            Elem::Data(attr) => self.close_data(attr),
            _ => Ok(()),
        }
    }

    fn set_default(&mut self, k: usize) -> PResult<()> {
        let (attr, domain) = (self.key_list[k].attr, self.key_list[k].domain);
        let text = std::mem::take(&mut self.text);
        let node = matches!(domain, Domain::Node | Domain::All);
        let edge = matches!(domain, Domain::Edge | Domain::All);
        let graph = matches!(domain, Domain::Graph | Domain::All);
        let d = &mut self.defaults;
        match attr {
            Attr::Kind if node => d.kind = RawKind::parse(&text),
            Attr::Label if node => d.label = text.trim().to_string(),
            Attr::Lines if node => {
                let mut lines = Vec::new();
                if parse_lines(&text, &mut lines).is_err() {
                    return Err(
                        self.graph_err(&format!("bad default lines value {}", quote(&text)))
                    );
                }
                self.defaults.lines = lines;
            }
            Attr::Procedure if node => d.procedure = Some(text.trim().to_string()),
            Attr::File if node => d.file = Some(text.trim().to_string()),
            Attr::Type if edge => d.edge_type = EdgeType::parse(&text),
            Attr::Scope if edge => d.interprocedural = text.trim() == "interprocedural",
            Attr::ProgramStart if graph => d.program_start = Some(text.trim().to_string()),
            _ => {}
        }
        self.text = text;
        Ok(())
    }

    fn close_data(&mut self, attr: Attr) -> PResult<()> {
        let owner = self.stack.last().copied();
        let value = self.text.trim();
        match owner {
            Some(Elem::Node) => match attr {
                Attr::Kind => self.cur_kind = RawKind::parse(value),
                Attr::Label => {
                    self.cur_label.clear();
                    self.cur_label.push_str(value);
                }
                Attr::Lines => {
                    let mut lines = std::mem::take(&mut self.cur_lines);
                    lines.clear();
                    let ok = parse_lines(value, &mut lines);
                    self.cur_lines = lines;
                    if ok.is_err() {
                        let id = self.ids.get_str(self.cur_id);
                        return Err(self.graph_err(&format!(
                            "node {}: bad lines value {}",
                            quote(id),
                            quote(value)
                        )));
                    }
                }
                Attr::Procedure => self.cur_proc = Some(value.to_string()),
                Attr::File => self.cur_file = Some(value.to_string()),
                _ => {}
            },
            Some(Elem::Edge) => match attr {
                Attr::Type => self.cur_edge_type = EdgeType::parse(value),
                Attr::Scope => self.cur_interprocedural = value == "interprocedural",
                _ => {}
            },
            Some(Elem::Graph) if attr == Attr::ProgramStart => {
                self.program_start = Some((value.to_string(), self.pos()));
            }
            _ => {}
        }
        Ok(())
    }

    fn close_node(&mut self) -> PResult<()> {
        let too_large = || FormatError::graph(self.name, None, "the graph is too large");
        self.labels.push_str(&self.cur_label);
        self.label_ends
            .push(u32::try_from(self.labels.len()).map_err(|_| too_large())?);
        self.lines.extend_from_slice(&self.cur_lines);
        self.line_ends
            .push(u32::try_from(self.lines.len()).map_err(|_| too_large())?);
        self.rec_id.push(self.cur_id);
        self.rec_kind.push(self.cur_kind);
        self.rec_func.push(self.cur_func);
        if self.cur_kind == RawKind::Entry {
            self.entries.push(EntryInfo {
                func: self.cur_func,
                procedure: self.cur_proc.take(),
                file: self.cur_file.take(),
            });
        }
        Ok(())
    }

    // --- building ---------------------------------------------------------

    fn finish(self) -> PResult<Icfg> {
        let name = self.name;
        self.check_forward_refs()?;
        let mut b = IcfgBuilder::new();
        let node_of = self.add_nodes(&mut b)?;
        self.add_edges(&mut b, &node_of);
        self.set_start(&mut b, &node_of)?;
        // Free the parse-time tables before the builder's peak.
        drop(self);
        b.build()
            .map_err(|e| FormatError::graph(name, None, &e.to_string()))
    }

    /// Every edge endpoint must be defined.
    fn check_forward_refs(&self) -> PResult<()> {
        for &(index, pos) in &self.forward_refs {
            if self.def_of[index as usize] == NONE {
                let id = self.ids.get_str(index);
                return Err(FormatError::graph(
                    self.name,
                    Some(pos),
                    &format!("edge refers to undefined node id {}", quote(id)),
                ));
            }
        }
        Ok(())
    }

    /// The record defining an interned id (NONE as usize for none).
    fn rec_of(&self, interned: u32) -> usize {
        self.def_of[interned as usize] as usize
    }

    /// Adds the records with a flow edge (the control-flow nodes) to `b`,
    /// in document order, with their functions. Returns each record's
    /// node (NONE for the others).
    fn add_nodes(&self, b: &mut IcfgBuilder) -> PResult<Vec<u32>> {
        let n = self.rec_id.len();
        let mut is_cfg = vec![false; n];
        for &(a, c) in &self.flow {
            is_cfg[self.rec_of(a)] = true;
            is_cfg[self.rec_of(c)] = true;
        }
        let mut functions = FunctionNames::new(&self.func_names, &self.entries);
        let mut node_of = vec![NONE; n];
        for rec in 0..n {
            if !is_cfg[rec] {
                continue;
            }
            let func = functions.id(b, self.rec_func[rec] as usize);
            let id = b
                .add_node(self.node_spec(rec, func))
                .map_err(|e| FormatError::graph(self.name, None, &e.to_string()))?;
            node_of[rec] = id.as_u32();
        }
        Ok(node_of)
    }

    /// The node of record `rec`, in function `func`.
    fn node_spec(&self, rec: usize, func: FuncId) -> NodeSpec<'_> {
        let label_start = if rec == 0 {
            0
        } else {
            self.label_ends[rec - 1] as usize
        };
        let lines_start = if rec == 0 {
            0
        } else {
            self.line_ends[rec - 1] as usize
        };
        NodeSpec {
            ext_id: self.ids.get_str(self.rec_id[rec]),
            kind: self.rec_kind[rec].to_kind(),
            func,
            label: &self.labels[label_start..self.label_ends[rec] as usize],
            lines: &self.lines[lines_start..self.line_ends[rec] as usize],
        }
    }

    /// Adds the flow edges and the calls (`node_of` from
    /// [`Parser::add_nodes`]).
    fn add_edges(&self, b: &mut IcfgBuilder, node_of: &[u32]) {
        let node = |interned: u32| NodeId::new(node_of[self.rec_of(interned)] as usize);
        for &(a, c) in &self.flow {
            b.add_flow_edge(node(a), node(c));
        }
        for &(site, target) in &self.calls {
            if node_of[self.rec_of(site)] == NONE {
                // A call from a declaration: not control flow.
                continue;
            }
            if node_of[self.rec_of(target)] == NONE {
                b.add_external_callee(node(site));
            } else {
                b.add_call_edge(node(site), node(target));
            }
        }
    }

    /// Sets the start to the `program-start` node, if the graph names one.
    fn set_start(&self, b: &mut IcfgBuilder, node_of: &[u32]) -> PResult<()> {
        let Some((start, pos)) = &self.program_start else {
            return Ok(());
        };
        let rec = self
            .ids
            .get(start)
            .map(|i| self.rec_of(i))
            .filter(|&r| r != NONE as usize);
        match rec {
            None => Err(FormatError::graph(
                self.name,
                Some(*pos),
                &format!("program-start names an undefined node {}", quote(start)),
            )),
            Some(r) if node_of[r] == NONE => Err(FormatError::graph(
                self.name,
                Some(*pos),
                &format!(
                    "program-start names {}, which is not a control-flow node",
                    quote(start)
                ),
            )),
            Some(r) => {
                b.set_start(NodeId::new(node_of[r] as usize));
                Ok(())
            }
        }
    }
}

/// The graph's function names: an entry's procedure name (else the
/// function key), made unique with ` [KEY]`, ` [KEY#2]`, ...; functions are
/// added to the builder when their first node is.
struct FunctionNames<'p> {
    func_names: &'p [Box<str>],
    /// Per function key: the first entry's procedure and file.
    proc_of: Vec<Option<&'p str>>,
    file_of: Vec<Option<&'p str>>,
    func_ids: Vec<Option<FuncId>>,
    used: HashSet<String>,
}

impl<'p> FunctionNames<'p> {
    fn new(func_names: &'p [Box<str>], entries: &'p [EntryInfo]) -> Self {
        let mut proc_of: Vec<Option<&str>> = vec![None; func_names.len()];
        let mut file_of: Vec<Option<&str>> = vec![None; func_names.len()];
        for entry in entries {
            let f = entry.func as usize;
            if proc_of[f].is_none() {
                proc_of[f] = entry.procedure.as_deref();
            }
            if file_of[f].is_none() {
                file_of[f] = entry.file.as_deref();
            }
        }
        FunctionNames {
            func_names,
            proc_of,
            file_of,
            func_ids: vec![None; func_names.len()],
            used: HashSet::new(),
        }
    }

    /// The builder's function for function key `f`, added on first use.
    fn id(&mut self, b: &mut IcfgBuilder, f: usize) -> FuncId {
        if let Some(id) = self.func_ids[f] {
            return id;
        }
        let key = &self.func_names[f];
        let base = self.proc_of[f].filter(|p| !p.is_empty()).unwrap_or(key);
        let mut fname = base.to_string();
        let mut k = 1;
        while self.used.contains(&fname) {
            fname = if k == 1 {
                format!("{base} [{key}]")
            } else {
                format!("{base} [{key}#{k}]")
            };
            k += 1;
        }
        let id = b.function(&fname);
        self.used.insert(fname);
        if let Some(file) = self.file_of[f] {
            b.set_function_file(id, file);
        }
        self.func_ids[f] = Some(id);
        id
    }
}

/// Whitespace, or a UTF-8 byte-order mark followed by whitespace.
fn is_blank(text: &[u8]) -> bool {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    text.iter().all(u8::is_ascii_whitespace)
}

/// Finds attributes `names` in the raw attribute text of a start tag, when
/// that text is plain `name="value"` pairs without entity references: the
/// raw value of each (the first, if repeated), or `None` where absent.
/// Returns `None` for anything else (spaces around `=`, references,
/// malformed text), which is left to quick_xml's attribute parser.
fn scan_attrs<'a, const N: usize>(
    raw: &'a [u8],
    names: [&[u8]; N],
) -> Option<[Option<&'a [u8]>; N]> {
    let mut out = [None; N];
    let n = raw.len();
    let mut i = 0;
    loop {
        while i < n && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == n {
            return Some(out);
        }
        let key_start = i;
        while i < n && raw[i] != b'=' {
            if raw[i].is_ascii_whitespace() {
                return None;
            }
            i += 1;
        }
        if i == key_start || i + 1 >= n {
            return None;
        }
        let key = &raw[key_start..i];
        let quote = raw[i + 1];
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        i += 2;
        let value_start = i;
        while i < n && raw[i] != quote {
            if raw[i] == b'&' {
                return None;
            }
            i += 1;
        }
        if i == n {
            return None;
        }
        for (slot, name) in out.iter_mut().zip(names) {
            if slot.is_none() && key == name {
                *slot = Some(&raw[value_start..i]);
            }
        }
        i += 1;
        if i < n && !raw[i].is_ascii_whitespace() {
            return None;
        }
    }
}

/// A quick_xml error, described without quick_xml's relative ranges.
fn describe_xml_error(e: &quick_xml::Error) -> String {
    use quick_xml::escape::EscapeError;
    match e {
        quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(_, name)) => {
            format!("reference to an unknown entity &{name}; (entities are not expanded)")
        }
        quick_xml::Error::Escape(EscapeError::UnterminatedEntity(_)) => {
            "`&` without a closing `;`".to_string()
        }
        quick_xml::Error::Escape(EscapeError::InvalidCharRef(err)) => {
            format!("invalid character reference: {err}")
        }
        other => other.to_string(),
    }
}

/// Parses a `lines` value like `( 0 )`, `(72)` or `(12 13)` into `out`,
/// dropping 0 (no line).
fn parse_lines(text: &str, out: &mut Vec<u32>) -> Result<(), ()> {
    let t = text.trim();
    let t = t.strip_prefix('(').unwrap_or(t);
    let t = t.strip_suffix(')').unwrap_or(t);
    for tok in t
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
    {
        let v: u32 = tok.parse().map_err(|_| ())?;
        if v != 0 {
            out.push(v);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_scan() {
        fn one<'a>(raw: &'a [u8], name: &[u8]) -> Option<Option<&'a [u8]>> {
            scan_attrs(raw, [name]).map(|[v]| v)
        }
        assert_eq!(one(b" id=\"n:-1:1\"", b"id"), Some(Some(&b"n:-1:1"[..])));
        assert_eq!(
            one(b" source='a' target=\"b\"", b"target"),
            Some(Some(&b"b"[..]))
        );
        assert_eq!(one(b" source='a' target=\"b\" ", b"id"), Some(None));
        assert_eq!(one(b"", b"id"), Some(None));
        assert_eq!(one(b" id=\"\"", b"id"), Some(Some(&b""[..])));
        assert_eq!(one(b" id=\"a\" id=\"b\"", b"id"), Some(Some(&b"a"[..])));
        assert_eq!(one(b" id=\"a&amp;b\"", b"id"), None);
        assert_eq!(one(b" id = \"x\"", b"id"), None);
        assert_eq!(one(b" id=x", b"id"), None);
        assert_eq!(one(b" id=\"x", b"id"), None);
        assert_eq!(one(b" a=\"x\"b=\"y\"", b"b"), None);
        assert_eq!(one(b" id", b"id"), None);
        assert_eq!(one(b" =\"x\"", b"id"), None);
        assert_eq!(one(b" id=", b"id"), None);
        assert_eq!(
            scan_attrs(
                b" source=\"s\"\n\ttarget='t' directed=\"true\"",
                [&b"source"[..], b"target"]
            ),
            Some([Some(&b"s"[..]), Some(&b"t"[..])])
        );
    }

    #[test]
    fn lines_parse() {
        let mut v = Vec::new();
        parse_lines("( 0 )", &mut v).unwrap();
        assert!(v.is_empty());
        parse_lines("(72)", &mut v).unwrap();
        parse_lines("(12 13)", &mut v).unwrap();
        parse_lines("", &mut v).unwrap();
        parse_lines("()", &mut v).unwrap();
        assert_eq!(v, vec![72, 12, 13]);
        assert!(parse_lines("(1 x)", &mut v).is_err());
        assert!(parse_lines("(-1)", &mut v).is_err());
        assert!(parse_lines("(99999999999)", &mut v).is_err());
    }

    #[test]
    fn interner_grows_and_finds() {
        let mut i = Interner::new();
        for k in 0..5000 {
            let found = i.intern(format!("n:-{}:{}", k % 7, k).as_bytes());
            assert!(matches!(found, Ok((idx, true)) if idx as usize == k));
        }
        for k in (0..5000).rev() {
            let s = format!("n:-{}:{}", k % 7, k);
            assert!(matches!(i.intern(s.as_bytes()), Ok((idx, false)) if idx == k as u32));
            assert_eq!(i.get(&s), Some(k as u32));
            assert_eq!(i.get_str(k as u32), s);
        }
        assert_eq!(i.get("nope"), None);
        assert!(matches!(i.intern(b"\xff\xfe"), Err(InternError::Utf8(_))));
        assert_eq!(i.len(), 5000);
    }

    #[test]
    fn counting_reader_counts_lines() {
        let text = "a\nb\nc".repeat(50_000);
        let mut c = Counting::new(text.as_bytes());
        assert_eq!(c.fill_buf().unwrap().len(), 1 << 16);
        c.consume(3);
        assert_eq!((c.line(), c.offset()), (2, 3));
        assert_eq!(c.line(), 2);
        let mut rest = String::new();
        c.read_to_string(&mut rest).unwrap();
        assert_eq!(rest.len(), text.len() - 3);
        assert_eq!((c.line(), c.offset()), (100_001, text.len() as u64));
        assert_eq!(count_newlines(text.as_bytes()), 100_000);
    }
}
