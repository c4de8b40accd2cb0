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
//! errors, so entity bombs cannot expand.

use crate::error::{quote, FormatError, XmlPosition};
use postmortem_core::{FuncId, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSpec};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
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
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| FormatError::io(&name, e))?;
    read_graphml(BufReader::with_capacity(1 << 16, file), &name)
}

/// Reads a csi-cc GraphML control-flow graph from `reader`, decompressing
/// it first if it starts with the gzip magic bytes `1f 8b`.
///
/// `source_name` names the input in error messages.
pub fn read_graphml<R: BufRead>(mut reader: R, source_name: &str) -> Result<Icfg, FormatError> {
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
    if head[..n] == [0x1f, 0x8b] {
        let decoder = flate2::bufread::MultiGzDecoder::new(input);
        Parser::new(BufReader::with_capacity(1 << 16, decoder), source_name).run()
    } else {
        Parser::new(input, source_name).run()
    }
}

// ---------------------------------------------------------------------------
// Input plumbing: a BufRead that counts the lines it has handed out.

struct Counting<R> {
    inner: R,
    lines: u64,
    bytes: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines += count_newlines(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        if amt == 0 {
            return;
        }
        // The data being consumed is what the last `fill_buf` returned, so
        // this does no I/O.
        if let Ok(buf) = self.inner.fill_buf() {
            let k = amt.min(buf.len());
            self.lines += count_newlines(&buf[..k]);
        }
        self.bytes += amt as u64;
        self.inner.consume(amt)
    }
}

fn count_newlines(b: &[u8]) -> u64 {
    // Byte counters summed per 128-byte chunk: this vectorizes well.
    let mut chunks = b.chunks_exact(128);
    let mut n = 0u64;
    for chunk in &mut chunks {
        let k: u8 = chunk.iter().fold(0u8, |k, &c| k + u8::from(c == b'\n'));
        n += u64::from(k);
    }
    n + chunks.remainder().iter().filter(|&&c| c == b'\n').count() as u64
}

// ---------------------------------------------------------------------------
// Node-id interner: one string pool, an open-addressing table of indices.

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

    fn hash(&self, s: &str) -> u32 {
        let h = self.state.hash_one(s);
        (h ^ (h >> 32)) as u32
    }

    /// `Ok(index)` if present, else `Err(free slot)`.
    fn find(&self, s: &str, h: u32) -> Result<u32, usize> {
        let mask = self.table.len() - 1;
        let mut slot = h as usize & mask;
        loop {
            match self.table[slot] {
                0 => return Err(slot),
                v => {
                    let i = v - 1;
                    if self.hashes[i as usize] == h && self.get_str(i) == s {
                        return Ok(i);
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    fn get(&self, s: &str) -> Option<u32> {
        self.find(s, self.hash(s)).ok()
    }

    /// The index of `s`, and whether it is new. `None` if the pool is full.
    fn intern(&mut self, s: &str) -> Option<(u32, bool)> {
        for &r in &self.recent {
            if r != NONE && self.get_str(r) == s {
                return Some((r, false));
            }
        }
        let h = self.hash(s);
        match self.find(s, h) {
            Ok(i) => {
                self.remember(i);
                Some((i, false))
            }
            Err(mut slot) => {
                let i = self.ends.len();
                if i >= (NONE - 1) as usize || self.bytes.len() + s.len() > u32::MAX as usize {
                    return None;
                }
                self.bytes.push_str(s);
                self.ends.push(self.bytes.len() as u32);
                self.hashes.push(h);
                if (i + 1) * 2 > self.table.len() {
                    self.grow();
                    slot = self.find(s, h).expect_err("new id is not in the table yet");
                }
                self.table[slot] = i as u32 + 1;
                self.remember(i as u32);
                Some((i as u32, true))
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

impl<'n, R: BufRead> Parser<'n, R> {
    fn new(input: R, name: &'n str) -> Self {
        let mut reader = Reader::from_reader(Counting { inner: input, lines: 0, bytes: 0 });
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
        XmlPosition { line: self.reader.get_ref().lines + 1, byte: self.reader.buffer_position() }
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
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => format!("corrupt input: {io}"),
                    io::ErrorKind::UnexpectedEof => format!("unexpected end of input: {io}"),
                    _ => io.to_string(),
                };
                FormatError::io(self.name, io::Error::new(io.kind(), what))
            }
            other => {
                let pos = XmlPosition { line: self.reader.get_ref().lines + 1, byte: self.reader.error_position() };
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
        let t0 = std::time::Instant::now();
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
                    } else if self.stack.is_empty() && !t.iter().all(u8::is_ascii_whitespace) {
                        return Err(self.xml_err("text outside the root element"));
                    }
                    // Other text (indentation, text in ignored elements) is
                    // not looked at: no entity in it is ever expanded.
                }
                Event::CData(t) => {
                    if self.collecting_text() {
                        let text = std::str::from_utf8(&t).map_err(|e| self.xml_err(&format!("invalid UTF-8: {e}")))?;
                        self.text.push_str(text);
                    }
                }
                Event::DocType(t) => {
                    if t.windows(6).any(|w| w == b"ENTITY") {
                        return Err(self.xml_err("the DOCTYPE declares entities, which are refused"));
                    }
                }
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
                Event::Eof => break,
            }
        }
        if let Some(&open) = self.stack.last() {
            return Err(self.xml_err(&format!("unexpected end of file inside {} (truncated?)", open.describe())));
        }
        if self.reader.get_ref().bytes == 0 {
            return Err(FormatError::empty(self.name));
        }
        if !self.seen_root {
            return Err(self.xml_err("no root element"));
        }
        if !self.seen_graph {
            return Err(self.graph_err("no <graph> element"));
        }
        eprintln!("xml loop {:?}", t0.elapsed());
        self.finish()
    }

    fn collecting_text(&self) -> bool {
        matches!(self.stack.last(), Some(Elem::Data(_)) | Some(Elem::KeyDefault(_)))
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
                    return Err(self.graph_err(&format!("the root element is <{shown}>, not <graphml>")));
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
            (Some(Elem::Graph), b"data") | (Some(Elem::Node), b"data") | (Some(Elem::Edge), b"data") => {
                self.text.clear();
                Elem::Data(self.data_attr(e)?)
            }
            _ => Elem::Other,
        };
        Ok(elem)
    }

    fn attr_value(&self, e: &BytesStart<'_>, name: &str) -> PResult<Option<String>> {
        match e.try_get_attribute(name).map_err(|err| self.attr_err(err))? {
            None => Ok(None),
            Some(a) => Ok(Some(a.unescape_value().map_err(|err| self.content_err(err))?.into_owned())),
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
        if self.keys.insert(id.clone().into_bytes().into_boxed_slice(), index).is_some() {
            return Err(self.graph_err(&format!("key id {} is declared twice", quote(&id))));
        }
        self.key_list.push(Key { id: id.into_bytes().into_boxed_slice(), attr: Attr::from_name(&attr_name), domain });
        Ok(Elem::Key(index))
    }

    fn data_attr(&self, e: &BytesStart<'_>) -> PResult<Attr> {
        let attr = e.try_get_attribute("key").map_err(|err| self.attr_err(err))?;
        let Some(attr) = attr else {
            return Err(self.graph_err("<data> without a key"));
        };
        if !attr.value.contains(&b'&') {
            if let Some(a) = self.find_key(&attr.value) {
                return Ok(a);
            }
        }
        let key = attr.unescape_value().map_err(|err| self.content_err(err))?;
        match self.find_key(key.as_bytes()) {
            Some(a) => Ok(a),
            None => Err(self.graph_err(&format!("<data> refers to undeclared key {}", quote(&key)))),
        }
    }

    /// The attribute a key id stands for. Few keys are declared in
    /// practice, and a linear scan beats hashing them.
    fn find_key(&self, id: &[u8]) -> Option<Attr> {
        if self.key_list.len() <= 32 {
            self.key_list.iter().find(|k| &*k.id == id).map(|k| k.attr)
        } else {
            self.keys.get(id).map(|&k| self.key_list[k].attr)
        }
    }

    fn open_node(&mut self, e: &BytesStart<'_>) -> PResult<()> {
        let attr = e.try_get_attribute("id").map_err(|err| self.attr_err(err))?;
        let Some(attr) = attr else {
            return Err(self.graph_err("<node> without an id"));
        };
        let id = attr.unescape_value().map_err(|err| self.content_err(err))?;
        let Some((index, _)) = self.ids.intern(&id) else {
            return Err(self.graph_err("too many nodes"));
        };
        if index as usize == self.def_of.len() {
            self.def_of.push(NONE);
        }
        if self.def_of[index as usize] != NONE {
            return Err(self.graph_err(&format!("node id {} is defined twice", quote(&id))));
        }
        // n:<function-id>:<index>
        let func_text =
            id.split_once(':').and_then(|(_, rest)| rest.rsplit_once(':')).map_or("", |(mid, _)| mid);
        if func_text.is_empty() {
            return Err(self.graph_err(&format!(
                "node id {} is not of the form n:<function-id>:<index>",
                quote(&id)
            )));
        }
        self.cur_func = match self.funcs.get(func_text) {
            Some(&f) => f,
            None => {
                let f = self.func_names.len() as u32;
                self.funcs.insert(func_text.into(), f);
                self.func_names.push(func_text.into());
                f
            }
        };
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

    fn endpoint(&mut self, e: &BytesStart<'_>, which: &str) -> PResult<u32> {
        let attr = e.try_get_attribute(which).map_err(|err| self.attr_err(err))?;
        let Some(attr) = attr else {
            return Err(self.graph_err(&format!("<edge> without a {which}")));
        };
        let id = attr.unescape_value().map_err(|err| self.content_err(err))?;
        let Some((index, new)) = self.ids.intern(&id) else {
            return Err(self.graph_err("too many nodes"));
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
        let s = self.endpoint(e, "source")?;
        let t = self.endpoint(e, "target")?;
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
                    return Err(self.graph_err(&format!("bad default lines value {}", quote(&text))));
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
                        return Err(self.graph_err(&format!("node {}: bad lines value {}", quote(id), quote(value))));
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
            Some(Elem::Graph) => {
                if attr == Attr::ProgramStart {
                    self.program_start = Some((value.to_string(), self.pos()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn close_node(&mut self) -> PResult<()> {
        let too_large = || FormatError::graph(self.name, None, "the graph is too large");
        self.labels.push_str(&self.cur_label);
        self.label_ends.push(u32::try_from(self.labels.len()).map_err(|_| too_large())?);
        self.lines.extend_from_slice(&self.cur_lines);
        self.line_ends.push(u32::try_from(self.lines.len()).map_err(|_| too_large())?);
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
        // Every edge endpoint must be defined.
        for &(index, pos) in &self.forward_refs {
            if self.def_of[index as usize] == NONE {
                let id = self.ids.get_str(index);
                return Err(FormatError::graph(
                    name,
                    Some(pos),
                    &format!("edge refers to undefined node id {}", quote(id)),
                ));
            }
        }
        let n = self.rec_id.len();
        let rec_of = |interned: u32| self.def_of[interned as usize] as usize;
        let mut is_cfg = vec![false; n];
        for &(a, b) in &self.flow {
            is_cfg[rec_of(a)] = true;
            is_cfg[rec_of(b)] = true;
        }

        // Function names and files, from the entries.
        let mut proc_of: Vec<Option<&str>> = vec![None; self.func_names.len()];
        let mut file_of: Vec<Option<&str>> = vec![None; self.func_names.len()];
        for entry in &self.entries {
            let f = entry.func as usize;
            if proc_of[f].is_none() {
                proc_of[f] = entry.procedure.as_deref();
            }
            if file_of[f].is_none() {
                file_of[f] = entry.file.as_deref();
            }
        }

        let mut b = IcfgBuilder::new();
        let mut func_ids: Vec<Option<FuncId>> = vec![None; self.func_names.len()];
        let mut used: HashSet<String> = HashSet::new();
        let mut node_of = vec![NONE; n];
        for rec in 0..n {
            if !is_cfg[rec] {
                continue;
            }
            let f = self.rec_func[rec] as usize;
            let func = match func_ids[f] {
                Some(id) => id,
                None => {
                    let key = &self.func_names[f];
                    let base = proc_of[f].filter(|p| !p.is_empty()).unwrap_or(key);
                    let mut fname = base.to_string();
                    let mut k = 1;
                    while used.contains(&fname) {
                        fname = if k == 1 { format!("{base} [{key}]") } else { format!("{base} [{key}#{k}]") };
                        k += 1;
                    }
                    let id = b.function(&fname);
                    used.insert(fname);
                    if let Some(file) = file_of[f] {
                        b.set_function_file(id, file);
                    }
                    func_ids[f] = Some(id);
                    id
                }
            };
            let label_start = if rec == 0 { 0 } else { self.label_ends[rec - 1] as usize };
            let lines_start = if rec == 0 { 0 } else { self.line_ends[rec - 1] as usize };
            let spec = NodeSpec {
                ext_id: self.ids.get_str(self.rec_id[rec]),
                kind: self.rec_kind[rec].to_kind(),
                func,
                label: &self.labels[label_start..self.label_ends[rec] as usize],
                lines: &self.lines[lines_start..self.line_ends[rec] as usize],
            };
            let id = b.add_node(spec).map_err(|e| FormatError::graph(name, None, &e.to_string()))?;
            node_of[rec] = id.as_u32();
        }
        let node = |interned: u32| NodeId::new(node_of[rec_of(interned)] as usize);
        for &(a, c) in &self.flow {
            b.add_flow_edge(node(a), node(c));
        }
        for &(site, target) in &self.calls {
            if node_of[rec_of(site)] == NONE {
                // A call from a declaration: not control flow.
                continue;
            }
            if node_of[rec_of(target)] == NONE {
                b.add_external_callee(node(site));
            } else {
                b.add_call_edge(node(site), node(target));
            }
        }
        if let Some((start, pos)) = &self.program_start {
            let rec = self.ids.get(start).map(rec_of).filter(|&r| r != NONE as usize);
            match rec {
                None => {
                    return Err(FormatError::graph(
                        name,
                        Some(*pos),
                        &format!("program-start names an undefined node {}", quote(start)),
                    ))
                }
                Some(r) if node_of[r] == NONE => {
                    return Err(FormatError::graph(
                        name,
                        Some(*pos),
                        &format!("program-start names {}, which is not a control-flow node", quote(start)),
                    ))
                }
                Some(r) => b.set_start(NodeId::new(node_of[r] as usize)),
            }
        }
        // Free the parse-time tables before the builder's peak.
        drop(self);
        let t1 = std::time::Instant::now();
        let r = b.build().map_err(|e| FormatError::graph(name, None, &e.to_string()));
        eprintln!("build {:?}", t1.elapsed());
        return r;
        b.build().map_err(|e| FormatError::graph(name, None, &e.to_string()))
    }
}

/// A quick_xml error, described without quick_xml's relative ranges.
fn describe_xml_error(e: &quick_xml::Error) -> String {
    use quick_xml::escape::EscapeError;
    match e {
        quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(_, name)) => {
            format!("reference to an unknown entity &{name}; (entities are not expanded)")
        }
        quick_xml::Error::Escape(EscapeError::UnterminatedEntity(_)) => "`&` without a closing `;`".to_string(),
        quick_xml::Error::Escape(EscapeError::InvalidCharRef(err)) => format!("invalid character reference: {err}"),
        other => other.to_string(),
    }
}

/// Parses a `lines` value like `( 0 )`, `(72)` or `(12 13)` into `out`,
/// dropping 0 (no line).
fn parse_lines(text: &str, out: &mut Vec<u32>) -> Result<(), ()> {
    let t = text.trim();
    let t = t.strip_prefix('(').unwrap_or(t);
    let t = t.strip_suffix(')').unwrap_or(t);
    for tok in t.split(|c: char| c.is_whitespace() || c == ',').filter(|s| !s.is_empty()) {
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
            let (idx, new) = i.intern(&format!("n:-{}:{}", k % 7, k)).unwrap();
            assert_eq!((idx as usize, new), (k, true));
        }
        for k in 0..5000 {
            let s = format!("n:-{}:{}", k % 7, k);
            assert_eq!(i.intern(&s), Some((k as u32, false)));
            assert_eq!(i.get(&s), Some(k as u32));
            assert_eq!(i.get_str(k as u32), s);
        }
        assert_eq!(i.get("nope"), None);
        assert_eq!(i.len(), 5000);
    }

    #[test]
    fn counting_reader_counts_lines() {
        let mut c = Counting { inner: io::Cursor::new(b"a\nb\nc".to_vec()), lines: 0, bytes: 0 };
        let buf = c.fill_buf().unwrap().to_vec();
        c.consume(3);
        assert_eq!((c.lines, c.bytes), (1, 3));
        assert_eq!(buf.len(), 5);
        let mut rest = String::new();
        c.read_to_string(&mut rest).unwrap();
        assert_eq!((c.lines, c.bytes, rest.as_str()), (2, 5, "\nc"));
    }
}
