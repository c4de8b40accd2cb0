//! Many crashes in one run (`postmortem batch`): the crash list (a
//! JSON-lines manifest or a directory), shards of it, crash signatures,
//! graph-cache keys, and groups of crashes with one signature.
//!
//! Nothing here solves or prints: the CLI analyses each [`CrashSpec`] and
//! writes one JSON line per crash; [`Groups`] folds those lines (its own or
//! read back from files) into one line per group.
//!
//! **A group** is the crashes analysed against one graph (the same
//! [`graph_key`]) whose [`signature`]s are equal. Its line says which
//! source lines are Yes in every crash, No in every crash, and which are
//! Yes in some and No in others (where two crashes of one bug part ways),
//! naming the crashes on each side. A group's memory is two small index
//! lists per source line that some crash decided: it grows with the
//! crashes of the group, never with the graph's other crashes.

use crate::error::FormatError;
use crate::input::{read_bounded, Limit};
use crate::write::html::escape;
use postmortem_core::locate::PathMap;
use postmortem_core::{Icfg, Report};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One crash: its id and its files (any may be missing; the CLI fills
/// `cfg` and `binary` from its defaults). Paths are already resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashSpec {
    /// The crash's id, as given (or the manifest line / directory name).
    pub id: String,
    /// The graph: IR, `.pmcfg` or GraphML.
    pub cfg: Option<PathBuf>,
    /// The crashed program's binary.
    pub binary: Option<PathBuf>,
    /// A core dump.
    pub core: Option<PathBuf>,
    /// A minidump (Breakpad / Crashpad).
    pub minidump: Option<PathBuf>,
    /// A backtrace.
    pub backtrace: Option<PathBuf>,
    /// A report (postmortem, csi-grissom JSON, or a Sentry event: `event`
    /// is the same input under the name crash pipelines use).
    pub report: Option<PathBuf>,
    /// Raw coverage flags.
    pub sancov_flags: Option<PathBuf>,
    /// The program's log.
    pub log: Option<PathBuf>,
}

/// A manifest line as written (paths relative to the manifest's
/// directory). Unknown keys are an error, so that a misspelt key is not a
/// silently ignored input.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    id: Option<Value>,
    cfg: Option<PathBuf>,
    binary: Option<PathBuf>,
    core: Option<PathBuf>,
    minidump: Option<PathBuf>,
    backtrace: Option<PathBuf>,
    event: Option<PathBuf>,
    report: Option<PathBuf>,
    sancov_flags: Option<PathBuf>,
    log: Option<PathBuf>,
}

/// One entry of the crash list: a crash, or why its entry is unusable
/// (it still gets its failed output line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The position in the list (0-based), which shards select on.
    pub index: usize,
    /// The crash, or (its id, the error).
    pub spec: Result<CrashSpec, (String, String)>,
}

impl Entry {
    /// The crash's id (for a bad entry, the id it has or `line N`).
    pub fn id(&self) -> &str {
        match &self.spec {
            Ok(s) => &s.id,
            Err((id, _)) => id,
        }
    }
}

/// Why a manifest line (or a `crash.json`) names no crash.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// `id` is neither a non-empty string nor a number.
    #[error("`id` must be a non-empty string, not {0}")]
    BadId(Value),
    /// Both `event` and `report` are given (the crash's id).
    #[error("{0}: give `event` or `report`, not both (both are the report)")]
    EventAndReport(String),
    /// No failure data at all (the crash's id).
    #[error(
        "{0}: no failure data: give `core`, `minidump`, `backtrace`, `event`, `report` or `sancov_flags`"
    )]
    NoFailureData(String),
}

/// Why a crash list, or one crash directory of it, cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// A file (the manifest, a `crash.json`) could not be read.
    #[error(transparent)]
    Read(#[from] FormatError),
    /// A directory could not be listed.
    #[error("{}: {source}", .dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `crash.json` that is not valid JSON of a manifest line.
    #[error("{}: {source}", .desc.display())]
    Json {
        /// The `crash.json`.
        desc: PathBuf,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// A `crash.json` that names no crash.
    #[error("{}: {source}", .desc.display())]
    Spec {
        /// The `crash.json`.
        desc: PathBuf,
        /// Why.
        source: SpecError,
    },
    /// Several files of a crash directory match one input's names.
    #[error(
        "{}: several files could be the same input ({}): name them in {CRASH_FILE}",
        .dir.display(),
        .names.join(", ")
    )]
    Ambiguous {
        /// The crash directory.
        dir: PathBuf,
        /// The files, sorted.
        names: Vec<String>,
    },
    /// A crash directory with both `event.json` and `report.json`.
    #[error("{}: both event.json and report.json: keep one", .0.display())]
    EventAndReport(PathBuf),
    /// A crash directory without failure data or `crash.json`.
    #[error(
        "{}: no failure data (core, *.dmp, backtrace.txt, event.json, report.json, sancov_flags.bin) and no {CRASH_FILE}",
        .0.display()
    )]
    NoFailureData(PathBuf),
}

fn spec_from_raw(raw: RawSpec, base: &Path, default_id: String) -> Result<CrashSpec, SpecError> {
    let id = match raw.id {
        None => default_id,
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(Value::Number(n)) => n.to_string(),
        Some(v) => return Err(SpecError::BadId(v)),
    };
    if raw.event.is_some() && raw.report.is_some() {
        return Err(SpecError::EventAndReport(id));
    }
    let abs = |p: Option<PathBuf>| p.map(|p| base.join(p));
    let spec = CrashSpec {
        id,
        cfg: abs(raw.cfg),
        binary: abs(raw.binary),
        core: abs(raw.core),
        minidump: abs(raw.minidump),
        backtrace: abs(raw.backtrace),
        report: abs(raw.report.or(raw.event)),
        sancov_flags: abs(raw.sancov_flags),
        log: abs(raw.log),
    };
    if spec.core.is_none()
        && spec.minidump.is_none()
        && spec.backtrace.is_none()
        && spec.report.is_none()
        && spec.sancov_flags.is_none()
    {
        return Err(SpecError::NoFailureData(spec.id));
    }
    Ok(spec)
}

/// Reads a JSON-lines manifest of at most `limit` bytes: one crash per
/// non-empty line (`#` lines are comments). A line that does not parse
/// is a bad entry, not an error: its crash fails alone. Ids must be
/// unique: a repeated id is a bad entry too.
pub fn read_manifest(path: &Path, limit: u64) -> Result<Vec<Entry>, ListError> {
    let lim = Limit::new(limit, "manifest", "--max-input-size");
    let bytes = read_bounded(path, &lim)?;
    let text = String::from_utf8_lossy(&bytes);
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let default_id = format!("line {}", no + 1);
        let spec = serde_json::from_str::<RawSpec>(line)
            .map_err(|e| {
                (
                    default_id.clone(),
                    format!("{}:{}: {e}", path.display(), no + 1),
                )
            })
            .and_then(|raw| {
                spec_from_raw(raw, base, default_id.clone()).map_err(|e| {
                    (
                        default_id.clone(),
                        format!("{}:{}: {e}", path.display(), no + 1),
                    )
                })
            });
        out.push(Entry {
            index: out.len(),
            spec,
        });
    }
    dedup_ids(&mut out);
    Ok(out)
}

/// The file name of a crash directory's description.
pub const CRASH_FILE: &str = "crash.json";

/// Reads a directory of crashes: each subdirectory (in name order) is one
/// crash whose id is its name. Its files are those its `crash.json`
/// names (a manifest line, paths relative to the subdirectory), or else
/// found by name: `core` (or one `core.*`), `minidump.dmp` (or one
/// `*.dmp`), `backtrace.txt`,
/// `event.json`, `report.json`, `sancov_flags.bin`, `log.txt`, and
/// `cfg.*` / `binary` when the crash has its own build. Files directly in
/// the directory are ignored.
pub fn read_dir(dir: &Path, limit: u64) -> Result<Vec<Entry>, ListError> {
    let rd = std::fs::read_dir(dir).map_err(|source| ListError::Dir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut subdirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    let mut out = Vec::new();
    for sub in subdirs {
        let id = sub
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let spec = crash_dir(&sub, &id, limit).map_err(|e| (id.clone(), e.to_string()));
        out.push(Entry {
            index: out.len(),
            spec,
        });
    }
    dedup_ids(&mut out);
    Ok(out)
}

fn crash_dir(sub: &Path, id: &str, limit: u64) -> Result<CrashSpec, ListError> {
    let desc = sub.join(CRASH_FILE);
    if desc.exists() {
        let lim = Limit::new(limit, "crash description", "--max-input-size");
        let bytes = read_bounded(&desc, &lim)?;
        let raw: RawSpec = match serde_json::from_slice(&bytes) {
            Ok(raw) => raw,
            Err(source) => return Err(ListError::Json { desc, source }),
        };
        return spec_from_raw(raw, sub, id.to_string())
            .map_err(|source| ListError::Spec { desc, source });
    }
    let names: Vec<String> = std::fs::read_dir(sub)
        .map_err(|source| ListError::Dir {
            dir: sub.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n).then(|| sub.join(n));
    let one_of = |pred: &dyn Fn(&str) -> bool| -> Result<Option<PathBuf>, ListError> {
        let mut m: Vec<&String> = names.iter().filter(|n| pred(n)).collect();
        m.sort();
        match m.len() {
            0 => Ok(None),
            1 => Ok(Some(sub.join(m[0]))),
            _ => Err(ListError::Ambiguous {
                dir: sub.to_path_buf(),
                names: m.into_iter().cloned().collect(),
            }),
        }
    };
    let raw = CrashSpec {
        id: id.to_string(),
        cfg: one_of(&|n| n.starts_with("cfg."))?,
        binary: has("binary"),
        core: one_of(&|n| n == "core" || n.starts_with("core."))?,
        minidump: one_of(&|n| n.ends_with(".dmp"))?,
        backtrace: has("backtrace.txt"),
        report: match (has("event.json"), has("report.json")) {
            (Some(_), Some(_)) => return Err(ListError::EventAndReport(sub.to_path_buf())),
            (a, b) => a.or(b),
        },
        sancov_flags: has("sancov_flags.bin"),
        log: has("log.txt"),
    };
    if raw.core.is_none()
        && raw.minidump.is_none()
        && raw.backtrace.is_none()
        && raw.report.is_none()
        && raw.sancov_flags.is_none()
    {
        return Err(ListError::NoFailureData(sub.to_path_buf()));
    }
    Ok(raw)
}

/// A repeated id makes every later entry with it a bad entry.
fn dedup_ids(entries: &mut [Entry]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for e in entries.iter_mut() {
        let id = e.id().to_string();
        if let Some(&first) = seen.get(&id) {
            e.spec = Err((
                id.clone(),
                format!("the id {id:?} is already that of entry {}", first + 1),
            ));
        } else {
            seen.insert(id, e.index);
        }
    }
}

/// Why `--shard` is not `I/N` with 0 <= I < N (the text at fault).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// No `/`.
    #[error("not a shard: {0:?} (I/N, e.g. 0/4)")]
    NotAShard(String),
    /// `I` is not a number.
    #[error("not a shard index: {0:?} (I/N, 0 <= I < N)")]
    Index(String),
    /// `N` is not a number.
    #[error("not a shard count: {0:?} (I/N, N >= 1)")]
    Count(String),
    /// `I >= N` or `N == 0` (the whole argument).
    #[error("shard {0}: need 0 <= I < N and N >= 1")]
    Range(String),
}

/// `--shard I/N`: the entries whose index modulo N is I.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// I, from 0.
    pub index: usize,
    /// N, at least 1.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (0 <= I < N).
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NotAShard(s.to_string()))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| ShardError::Index(i.to_string()))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| ShardError::Count(n.to_string()))?;
        if count == 0 || index >= count {
            return Err(ShardError::Range(s.to_string()));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard takes the entry at `index`.
    pub fn takes(&self, index: usize) -> bool {
        index % self.count == self.index
    }
}

/// A crash's signature: the functions of its top `depth` frames,
/// innermost first, joined by ` | ` (the crashing function, then its
/// callers, as crash pipelines group them). A frame that the report
/// leaves ambiguous (several candidate nodes) names each function once,
/// joined by `/`; a crash with no location starts with `<unknown>`.
pub fn signature(g: &Icfg, report: &Report, depth: usize) -> String {
    let funcs = |nodes: &[postmortem_core::NodeId]| -> String {
        let mut names: Vec<&str> = nodes
            .iter()
            .map(|&n| &*g.function(g.func_of(n)).name)
            .collect();
        names.sort_unstable();
        names.dedup();
        names.join("/")
    };
    let mut parts = Vec::new();
    match &report.crash {
        Some(c) => parts.push(funcs(c.nodes())),
        None => parts.push("<unknown>".to_string()),
    }
    for f in report.stack.iter().rev() {
        parts.push(funcs(f.call.nodes()));
    }
    parts.truncate(depth.max(1));
    parts.join(" | ")
}

/// The cache key of a graph: the binary's build id (hex, or `nobuild`),
/// the xxh3 hash and the length of the graph file (IR, GraphML), and
/// `tag` (what else the cached graph depends on: the tool's version).
/// Equal keys mean the same graph. Reads the file in 1 MiB pieces.
pub fn graph_key(cfg: &Path, build_id: Option<&[u8]>, tag: &str) -> std::io::Result<String> {
    let mut f = std::fs::File::open(cfg)?;
    let mut h = twox_hash::XxHash3_64::with_seed(0);
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        len += n as u64;
        h.write(&buf[..n]);
    }
    let bid = match build_id {
        Some(b) if !b.is_empty() => b.iter().map(|x| format!("{x:02x}")).collect(),
        _ => "nobuild".to_string(),
    };
    let tag: String = tag
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Ok(format!("{bid}-{:016x}-{len}-{tag}", h.finish()))
}

/// Groups of crash lines (see the module doc).
#[derive(Default)]
pub struct Groups {
    groups: BTreeMap<(String, String), Group>,
}

/// Per line of a file: the crashes (indices into `Group::crashes`) that
/// had it Yes, and those that had it No.
type Sides = BTreeMap<u64, (Runs, Runs)>;

/// A set of crash indices, added in increasing order, kept as runs of
/// consecutive indices: a line with one label in every crash of a group
/// takes one run however many crashes the group has, so a batch's memory
/// grows with the lines where crashes differ, not with the crashes.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
struct Runs(Vec<(u32, u32)>);

impl Runs {
    /// Adds `k`, no smaller than every index in the set.
    fn push(&mut self, k: u32) {
        match self.0.last_mut() {
            Some((_, end)) if *end == k + 1 => {}
            Some((_, end)) if *end == k => *end = k + 1,
            _ => self.0.push((k, k + 1)),
        }
    }
    fn len(&self) -> usize {
        self.0.iter().map(|&(a, b)| (b - a) as usize).sum()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn contains(&self, k: u32) -> bool {
        self.0.iter().any(|&(a, b)| a <= k && k < b)
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(a, b)| a..b)
    }
}

#[derive(Default)]
struct Group {
    /// In the order they were added (which, with crashes analysed in
    /// parallel, is the order they finished in).
    crashes: Vec<String>,
    /// Per file.
    lines: BTreeMap<String, Sides>,
}

impl Group {
    /// The crashes' ids, sorted: what a group line lists, the same
    /// whatever order the crashes finished in.
    fn sorted_ids(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.crashes.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

impl Groups {
    /// Adds one crash line (`analyze --format json` plus `id`,
    /// `signature`, `graph`, `status`). Failed crashes and lines that are
    /// no crash line (group lines) are skipped; false then.
    pub fn add(&mut self, line: &Value) -> bool {
        let (Some("ok"), Some(id), Some(sig), Some(graph)) = (
            line["status"].as_str(),
            line["id"].as_str(),
            line["signature"].as_str(),
            line["graph"].as_str(),
        ) else {
            return false;
        };
        let g = self
            .groups
            .entry((graph.to_string(), sig.to_string()))
            .or_default();
        let k = g.crashes.len() as u32;
        g.crashes.push(id.to_string());
        if let Some(files) = line["lines"].as_object() {
            for (file, ls) in files {
                let per = g.lines.entry(file.clone()).or_default();
                for (label, yes) in [("yes", true), ("no", false)] {
                    for l in ls[label].as_array().into_iter().flatten() {
                        if let Some(l) = l.as_u64() {
                            let e = per.entry(l).or_default();
                            if yes {
                                e.0.push(k)
                            } else {
                                e.1.push(k)
                            }
                        }
                    }
                }
            }
        }
        true
    }

    /// One line per group of at least `min` crashes, in (graph,
    /// signature) order: `group` (the signature), `graph`, `crashes`
    /// (ids), `yes` and `no` (per file, the lines with that label in every
    /// crash), `differ` (per file, the lines Yes in some crashes and No in
    /// others: `{line, yes: [ids], no: [ids], maybe: [ids]}`).
    pub fn lines(&self, min: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for ((graph, sig), g) in &self.groups {
            if g.crashes.len() < min {
                continue;
            }
            let n = g.crashes.len();
            let ids = |ks: &Runs| -> Vec<&str> {
                let mut v: Vec<&str> = ks.iter().map(|k| g.crashes[k as usize].as_str()).collect();
                v.sort_unstable();
                v
            };
            let (mut yes, mut no, mut differ) = (Map::new(), Map::new(), Map::new());
            for (file, per) in &g.lines {
                let (mut y, mut nn, mut d) = (Vec::new(), Vec::new(), Vec::new());
                for (&line, (ys, ns)) in per {
                    if ys.len() == n {
                        y.push(line);
                    } else if ns.len() == n {
                        nn.push(line);
                    } else if !ys.is_empty() && !ns.is_empty() {
                        let mut maybe = Runs::default();
                        for k in (0..n as u32).filter(|&k| !ys.contains(k) && !ns.contains(k)) {
                            maybe.push(k);
                        }
                        d.push(json!({
                            "line": line, "yes": ids(ys), "no": ids(ns), "maybe": ids(&maybe),
                        }));
                    }
                }
                if !y.is_empty() {
                    yes.insert(file.clone(), json!(y));
                }
                if !nn.is_empty() {
                    no.insert(file.clone(), json!(nn));
                }
                if !d.is_empty() {
                    differ.insert(file.clone(), json!(d));
                }
            }
            out.push(json!({
                "group": sig,
                "graph": graph,
                "crashes": g.sorted_ids(),
                "yes": yes,
                "no": no,
                "differ": differ,
            }));
        }
        out
    }

    /// The crashes not in a group line of [`Groups::lines`]`(min)`: one
    /// value per signature shared by fewer than `min` ok crashes (one
    /// crash alone, by default), `{group, graph, crashes}`, in (graph,
    /// signature) order.
    pub fn alone(&self, min: usize) -> Vec<Value> {
        self.groups
            .iter()
            .filter(|(_, g)| g.crashes.len() < min)
            .map(|((graph, sig), g)| json!({"group": sig, "graph": graph, "crashes": g.sorted_ids()}))
            .collect()
    }
}

/// Source lines for the group pages, read through a path map, each file
/// once (a file that cannot be read gives no text).
pub struct SourceFiles {
    paths: PathMap,
    files: HashMap<String, Option<Vec<String>>>,
}

impl SourceFiles {
    /// Reads the graph's paths as `paths` rewrites them.
    pub fn new(paths: PathMap) -> SourceFiles {
        SourceFiles {
            paths,
            files: HashMap::new(),
        }
    }

    /// Line `line` (1-based) of `file` (a path as the graph has it),
    /// trimmed, when it can be read.
    pub fn line(&mut self, file: &str, line: u64) -> Option<String> {
        let paths = &self.paths;
        let lines = self.files.entry(file.to_string()).or_insert_with(|| {
            let limit = Limit {
                bytes: crate::input::DEFAULT_TEXT_LIMIT,
                what: "source file",
                raise: None,
            };
            let bytes = read_bounded(Path::new(&paths.apply(file)), &limit).ok()?;
            Some(
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_string)
                    .collect(),
            )
        });
        let i = usize::try_from(line).ok()?.checked_sub(1)?;
        Some(lines.as_ref()?.get(i)?.trim().to_string())
    }
}

fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        crate::write::html::CSS,
        escape(title)
    )
}

fn ids_html(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str())
        .map(escape)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes `dir/index.html` (every group: its signature, crashes and how
/// many lines differ; then every crash alone in its group, from
/// [`Groups::alone`]) and `dir/group-K.html` per group line of
/// [`Groups::lines`] (its crashes, its Yes and No lines per file, and a
/// table of the lines that differ, with their source text and the
/// crashes on each side). Returns how many group pages were written.
pub fn write_group_pages(
    dir: &Path,
    groups: &[Value],
    alone: &[Value],
    sources: &mut SourceFiles,
) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    for (k, g) in groups.iter().enumerate() {
        std::fs::write(dir.join(format!("group-{k}.html")), group_page(g, sources))?;
    }
    std::fs::write(dir.join("index.html"), index_page(groups, alone))?;
    Ok(groups.len())
}

fn index_page(groups: &[Value], alone: &[Value]) -> String {
    let mut index = page_head("postmortem: crash groups");
    index.push_str("<table><tr><th>group (signature)</th><th class=\"num\">crashes</th><th class=\"num\">lines that differ</th></tr>\n");
    for (k, g) in groups.iter().enumerate() {
        let n = g["crashes"].as_array().map_or(0, |a| a.len());
        let differ: usize = g["differ"].as_object().map_or(0, |m| {
            m.values()
                .filter_map(|v| v.as_array())
                .map(|a| a.len())
                .sum()
        });
        let _ = writeln!(
            index,
            "<tr><td><a href=\"group-{k}.html\">{}</a></td><td class=\"num\">{n}</td><td class=\"num\">{differ}</td></tr>",
            escape(g["group"].as_str().unwrap_or(""))
        );
    }
    index.push_str("</table>\n");
    let singles: usize = alone
        .iter()
        .map(|g| g["crashes"].as_array().map_or(0, |a| a.len()))
        .sum();
    if groups.is_empty() && singles > 0 {
        index.push_str(
            "<p>No group: fewer than <code>--min-group</code> crashes share each signature.</p>\n",
        );
    }
    if singles > 0 {
        let _ = writeln!(
            index,
            "<h2 id=\"alone\">Crashes not in a group ({singles})</h2>\n<p class=\"sub\">Fewer crashes than <code>--min-group</code> have their signature; each crash's labels are its line in <code>crashes.jsonl</code>.</p>\n<table><tr><th>crash</th><th>signature</th><th>graph</th></tr>"
        );
        for g in alone {
            for id in g["crashes"].as_array().into_iter().flatten() {
                let _ = writeln!(
                    index,
                    "<tr><td>{}</td><td>{}</td><td class=\"sub\">{}</td></tr>",
                    escape(id.as_str().unwrap_or("")),
                    escape(g["group"].as_str().unwrap_or("")),
                    escape(g["graph"].as_str().unwrap_or(""))
                );
            }
        }
        index.push_str("</table>\n");
    }
    index.push_str("</body></html>\n");
    index
}

fn group_page(g: &Value, sources: &mut SourceFiles) -> String {
    use crate::write::output::ranges;
    let lines_of = |v: &Value| -> Vec<u32> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_u64().map(|l| l as u32))
            .collect()
    };
    let sig = g["group"].as_str().unwrap_or("");
    let n = g["crashes"].as_array().map_or(0, |a| a.len());
    let mut page = page_head(&format!("group: {sig}"));
    let _ = writeln!(
        page,
        "<p class=\"sub\">graph {}<br>{n} crashes: {}</p>\n<p><a href=\"index.html\">all groups</a></p>",
        escape(g["graph"].as_str().unwrap_or("")),
        ids_html(&g["crashes"])
    );
    for (key, title) in [
        ("yes", "Yes in every crash (ran before each)"),
        ("no", "No in every crash (ran before none)"),
    ] {
        let _ = writeln!(page, "<h2>{title}</h2>");
        match g[key].as_object() {
            Some(m) if !m.is_empty() => {
                page.push_str("<table>\n");
                for (file, ls) in m {
                    let _ = writeln!(
                        page,
                        "<tr><td>{}</td><td>{}</td></tr>",
                        escape(file),
                        escape(&ranges(lines_of(ls)))
                    );
                }
                page.push_str("</table>\n");
            }
            _ => page.push_str("<p>none</p>\n"),
        }
    }
    page.push_str("<h2>Lines that differ (Yes in some crashes, No in others: where the crashes part ways)</h2>\n");
    match g["differ"].as_object() {
        Some(m) if !m.is_empty() => {
            page.push_str("<table class=\"src\"><tr><th>file</th><th class=\"num\">line</th><th>source</th><th>Yes in</th><th>No in</th><th>Maybe in</th></tr>\n");
            for (file, rows) in m {
                for r in rows.as_array().into_iter().flatten() {
                    let text = r["line"]
                        .as_u64()
                        .and_then(|l| sources.line(file, l))
                        .unwrap_or_default();
                    let _ = writeln!(
                        page,
                        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"s\">{}</td><td class=\"y\">{}</td><td class=\"no\">{}</td><td>{}</td></tr>",
                        escape(file),
                        r["line"],
                        escape(&text),
                        ids_html(&r["yes"]),
                        ids_html(&r["no"]),
                        ids_html(&r["maybe"])
                    );
                }
            }
            page.push_str("</table>\n");
        }
        _ => page.push_str("<p>none</p>\n"),
    }
    page.push_str("</body></html>\n");
    page
}

/// The line of a crash whose analysis failed: its id, `"status":
/// "failed"`, the error, and its signature when the report was read.
pub fn failed_line(id: &str, signature: Option<&str>, error: &str) -> Value {
    let mut v = json!({ "id": id, "status": "failed", "error": error });
    if let Some(s) = signature {
        v["signature"] = json!(s);
    }
    v
}

/// What a crash's line adds to its analysis's JSON ([`ok_line`]).
pub struct OkLine<'a> {
    /// The crash's id.
    pub id: &'a str,
    /// Its stack signature.
    pub signature: &'a str,
    /// Its graph's key (build id and hash).
    pub graph: &'a str,
    /// Whether the graph came from the cache: built, hit, or none.
    pub cache: &'a str,
    /// The warnings its inputs gave.
    pub warnings: &'a [String],
    /// Milliseconds spent building the analysis's JSON (what batch adds
    /// to `analyze`'s timings; see the README on the batch's overhead).
    pub json_ms: f64,
}

/// A crash's line: its analysis's JSON `v` (`write::output::to_json_with`)
/// with the batch's fields.
pub fn ok_line(v: &mut Value, line: &OkLine<'_>) {
    let Some(m) = v.as_object_mut() else { return };
    if let Some(t) = m.get_mut("timings_ms").and_then(|t| t.as_object_mut()) {
        t.insert("json".into(), json!(line.json_ms));
    }
    m.insert("id".into(), json!(line.id));
    m.insert("status".into(), json!("ok"));
    m.insert("signature".into(), json!(line.signature));
    m.insert("graph".into(), json!(line.graph));
    m.insert("cache".into(), json!(line.cache));
    m.insert("warnings".into(), json!(line.warnings));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn list_errors_keep_their_messages() {
        let d = PathBuf::from("crashes/c1");
        assert_eq!(
            SpecError::BadId(json!(3.5)).to_string(),
            "`id` must be a non-empty string, not 3.5"
        );
        assert_eq!(
            SpecError::EventAndReport("c1".into()).to_string(),
            "c1: give `event` or `report`, not both (both are the report)"
        );
        assert_eq!(
            SpecError::NoFailureData("c1".into()).to_string(),
            "c1: no failure data: give `core`, `minidump`, `backtrace`, `event`, `report` or `sancov_flags`"
        );
        assert_eq!(
            ListError::Spec {
                desc: d.join(CRASH_FILE),
                source: SpecError::NoFailureData("c1".into()),
            }
            .to_string(),
            "crashes/c1/crash.json: c1: no failure data: give `core`, `minidump`, `backtrace`, `event`, `report` or `sancov_flags`"
        );
        assert_eq!(
            ListError::Ambiguous {
                dir: d.clone(),
                names: vec!["a.dmp".into(), "b.dmp".into()],
            }
            .to_string(),
            "crashes/c1: several files could be the same input (a.dmp, b.dmp): name them in crash.json"
        );
        assert_eq!(
            ListError::EventAndReport(d.clone()).to_string(),
            "crashes/c1: both event.json and report.json: keep one"
        );
        assert_eq!(
            ListError::NoFailureData(d).to_string(),
            "crashes/c1: no failure data (core, *.dmp, backtrace.txt, event.json, report.json, sancov_flags.bin) and no crash.json"
        );
        let shard = |s: &str| Shard::parse(s).unwrap_err().to_string();
        assert_eq!(shard("3"), "not a shard: \"3\" (I/N, e.g. 0/4)");
        assert_eq!(shard("x/4"), "not a shard index: \"x\" (I/N, 0 <= I < N)");
        assert_eq!(shard("0/y"), "not a shard count: \"y\" (I/N, N >= 1)");
        assert_eq!(shard("4/4"), "shard 4/4: need 0 <= I < N and N >= 1");
    }

    #[test]
    fn runs_hold_consecutive_crashes_in_one_run() {
        let mut r = Runs::default();
        for k in [0, 1, 1, 2, 3, 7, 8, 10] {
            r.push(k);
        }
        assert_eq!(r.0, vec![(0, 4), (7, 9), (10, 11)]);
        assert_eq!(r.len(), 7);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 7, 8, 10]);
        assert!(r.contains(8) && !r.contains(9) && !r.contains(4));
        assert!(!r.is_empty() && Runs::default().is_empty());
    }

    #[test]
    fn shards_partition_the_entries() {
        let s: Vec<Shard> = (0..3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for idx in 0..20 {
            assert_eq!(s.iter().filter(|s| s.takes(idx)).count(), 1);
        }
        for bad in ["3/3", "1/0", "x/2", "2", "-1/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn groups_split_yes_no_and_differ() {
        let line = |id: &str, yes: &[u64], no: &[u64], maybe: &[u64]| {
            json!({"status": "ok", "id": id, "signature": "f | main", "graph": "k",
                   "lines": {"a.c": {"yes": yes, "no": no, "maybe": maybe}}})
        };
        let mut g = Groups::default();
        assert!(g.add(&line("c1", &[1, 2, 3], &[4, 5], &[6])));
        assert!(g.add(&line("c2", &[1, 4], &[2, 5], &[3, 6])));
        assert!(!g.add(&json!({"status": "failed", "id": "c3"})));
        let mut other = line("c4", &[1], &[], &[]);
        other["graph"] = json!("k2");
        assert!(g.add(&other));
        let ls = g.lines(2);
        assert_eq!(ls.len(), 1, "{ls:?}");
        let l = &ls[0];
        assert_eq!(l["crashes"], json!(["c1", "c2"]));
        assert_eq!(l["yes"]["a.c"], json!([1]));
        assert_eq!(l["no"]["a.c"], json!([5]));
        assert_eq!(
            l["differ"]["a.c"],
            json!([{"line": 2, "yes": ["c1"], "no": ["c2"], "maybe": []},
                   {"line": 4, "yes": ["c2"], "no": ["c1"], "maybe": []}])
        );
        assert_eq!(g.lines(1).len(), 2);
    }

    /// A group line does not depend on the order its crashes were added
    /// in (the order parallel analyses finish in): the ids are sorted.
    #[test]
    fn groups_do_not_depend_on_the_order_crashes_finish_in() {
        let line = |id: &str, yes: &[u64], no: &[u64]| {
            json!({"status": "ok", "id": id, "signature": "f | main", "graph": "k",
                   "lines": {"a.c": {"yes": yes, "no": no, "maybe": []}}})
        };
        let crashes = [
            line("a", &[1, 2], &[3]),
            line("b", &[1, 2], &[3]),
            line("d", &[1, 3], &[2]),
        ];
        let of = |order: &[usize]| {
            let mut g = Groups::default();
            for &i in order {
                assert!(g.add(&crashes[i]));
            }
            (g.lines(2), g.alone(4))
        };
        let (lines, alone) = of(&[0, 1, 2]);
        assert_eq!(lines[0]["crashes"], json!(["a", "b", "d"]));
        assert_eq!(
            lines[0]["differ"]["a.c"][0],
            json!({"line": 2, "yes": ["a", "b"], "no": ["d"], "maybe": []})
        );
        assert_eq!(alone[0]["crashes"], json!(["a", "b", "d"]));
        for order in [[2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            assert_eq!(of(&order), (lines.clone(), alone.clone()), "{order:?}");
        }
    }

    /// The index lists the crashes alone in their group as well as the
    /// groups; a group page's lines that differ come with their source.
    #[test]
    fn pages_list_lone_crashes_and_the_source_of_differing_lines() {
        let d = std::env::temp_dir().join(format!("pm-group-pages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(
            d.join("src/a.c"),
            "int main() {\n    if (x < 1)\n        step_a(&x);\n}\n",
        )
        .unwrap();
        let line = |id: &str, sig: &str, yes: &[u64], no: &[u64]| {
            json!({"status": "ok", "id": id, "signature": sig, "graph": "k",
                   "lines": {"/build/a.c": {"yes": yes, "no": no, "maybe": []}}})
        };
        let mut g = Groups::default();
        g.add(&line("c1", "f | main", &[1, 2, 3], &[]));
        g.add(&line("c2", "f | main", &[1, 2], &[3]));
        g.add(&line("lone<1>", "g | main", &[1], &[]));
        assert_eq!(
            g.alone(2),
            vec![json!({"group": "g | main", "graph": "k", "crashes": ["lone<1>"]})]
        );
        assert!(g.alone(1).is_empty());
        assert_eq!(g.alone(3).len(), 2);
        let mut paths = PathMap::new();
        paths
            .push_spec(&format!("/build={}", d.join("src").display()))
            .unwrap();
        let out = d.join("html");
        let n = write_group_pages(&out, &g.lines(2), &g.alone(2), &mut SourceFiles::new(paths))
            .unwrap();
        assert_eq!(n, 1);
        let index = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(
            index.contains("<a href=\"group-0.html\">f | main</a>"),
            "{index}"
        );
        assert!(
            index.contains("<h2 id=\"alone\">Crashes not in a group (1)</h2>"),
            "{index}"
        );
        assert!(
            index.contains(
                "<tr><td>lone&lt;1&gt;</td><td>g | main</td><td class=\"sub\">k</td></tr>"
            ),
            "{index}"
        );
        let page = std::fs::read_to_string(out.join("group-0.html")).unwrap();
        assert!(
            page.contains("<tr><td>/build/a.c</td><td class=\"num\">3</td><td class=\"s\">step_a(&amp;x);</td><td class=\"y\">c1</td><td class=\"no\">c2</td><td></td></tr>"),
            "{page}"
        );
        // A source that cannot be read: the row without text.
        let out2 = d.join("html2");
        write_group_pages(
            &out2,
            &g.lines(2),
            &[],
            &mut SourceFiles::new(PathMap::new()),
        )
        .unwrap();
        let page = std::fs::read_to_string(out2.join("group-0.html")).unwrap();
        assert!(
            page.contains("<td class=\"num\">3</td><td class=\"s\"></td>"),
            "{page}"
        );
        // No group at all: the lone crashes still listed.
        let out3 = d.join("html3");
        write_group_pages(
            &out3,
            &g.lines(4),
            &g.alone(4),
            &mut SourceFiles::new(PathMap::new()),
        )
        .unwrap();
        let index = std::fs::read_to_string(out3.join("index.html")).unwrap();
        assert!(index.contains("<p>No group: fewer than"), "{index}");
        assert!(index.contains("Crashes not in a group (3)"), "{index}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn manifest_lines_fail_alone() {
        let d = std::env::temp_dir().join(format!("pm-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let m = d.join("m.jsonl");
        std::fs::write(
            &m,
            "{\"id\": \"a\", \"backtrace\": \"bt.txt\"}\n\n# c\nnot json\n{\"id\": \"a\", \"core\": \"c\"}\n{\"id\": \"b\", \"cores\": \"c\"}\n{\"id\": \"e\", \"cfg\": \"p.bc\"}\n",
        )
        .unwrap();
        let e = read_manifest(&m, 1 << 20).unwrap();
        assert_eq!(e.len(), 5);
        assert_eq!(
            e[0].spec.as_ref().unwrap().backtrace,
            Some(d.join("bt.txt"))
        );
        assert_eq!(e[1].id(), "line 4");
        assert!(e[1].spec.is_err());
        assert!(e[2].spec.as_ref().unwrap_err().1.contains("already"));
        assert!(e[3].spec.as_ref().unwrap_err().1.contains("unknown field"));
        assert!(e[4]
            .spec
            .as_ref()
            .unwrap_err()
            .1
            .contains("no failure data"));
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A minidump alone is failure data, in a manifest (`minidump`) and
    /// in a crash directory (one `*.dmp`; two are ambiguous).
    #[test]
    fn a_minidump_is_a_crash_input() {
        let d = std::env::temp_dir().join(format!("pm-manifest-dmp-{}", std::process::id()));
        std::fs::create_dir_all(d.join("c1")).unwrap();
        std::fs::create_dir_all(d.join("c2")).unwrap();
        let m = d.join("m.jsonl");
        std::fs::write(&m, "{\"id\": \"x\", \"minidump\": \"x.dmp\"}\n").unwrap();
        let e = read_manifest(&m, 1 << 20).unwrap();
        assert_eq!(e[0].spec.as_ref().unwrap().minidump, Some(d.join("x.dmp")));
        std::fs::write(d.join("c1/crash.dmp"), b"MDMP").unwrap();
        std::fs::write(d.join("c2/a.dmp"), b"MDMP").unwrap();
        std::fs::write(d.join("c2/b.dmp"), b"MDMP").unwrap();
        let e = read_dir(&d, 1 << 20).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            e[0].spec.as_ref().unwrap().minidump,
            Some(d.join("c1/crash.dmp"))
        );
        assert!(e[1].spec.as_ref().unwrap_err().1.contains("several files"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
