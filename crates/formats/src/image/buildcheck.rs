//! Is the binary the graph's build?
//!
//! A core (or a minidump, or a flag dump) is read with the binary given
//! as `--binary`; the graph is read from `--cfg`. When the two are of
//! different builds (the source edited between them: lines shifted,
//! functions added), every frame and value still finds *some* node, and
//! the labels come out confident and wrong. A coverage build is caught
//! by its flag count ([`crate::image::native::check_order`]); a plain `-g` build
//! has no such count, so this module compares the binary's DWARF line
//! table with the graph. In the supported recipes the binary is compiled
//! from the very IR the graph is made of, so each row of its line table
//! is the location of an IR instruction, and the front-end gives every
//! instruction's line (in its function's file) to a node, strongly or
//! weakly. So:
//!
//! * every row (line 0 left out) whose address is in a function the
//!   graph has, of that function's file, must be on a line the graph
//!   has for that file (a node's line or weak line). Rows of another
//!   file (a header's code inlined, a macro's) are left out: the
//!   front-end leaves such locations out too. Code generation makes two
//!   kinds of rows of its own, allowed: a function's *scope line* (the
//!   opening `{`: the row at its first address, where the prologue and,
//!   optimised, the epilogue are), after its declaration line; and in an
//!   optimised function (one with weak lines) one row at a loop's start
//!   line (`do {`, `while (1) {`: a preheader at the location of the
//!   loop's `llvm.loop` metadata) followed within two lines by a line of
//!   the graph;
//! * every function whose code starts with a row of a file the graph has
//!   functions of must be a function of the graph (by its symbol name; a
//!   static function `llvm-link` renamed `f.3` matches `f` and `f.7`).
//!
//! Measured on bzip2, Lua, PCRE2, SQLite, lz4, zstd and nlohmann/json at
//! `-O0` and at `-O2` (`-Xclang -disable-llvm-passes`): no difference on
//! the graph's own builds; two lines added at the top of a file are found.
//!
//! [`read_compiled`] reads what the binary says into a [`Compiled`];
//! [`compare`] is the comparison itself, a pure function of the graph and
//! that (unit-tested without ELF files).

use crate::image::native::{Binary, NativeError};
use addr2line::gimli;
use object::{Object, ObjectSection};
use postmortem_core::locate::{same_file, PathMap};
use postmortem_core::{FileId, FuncId, Icfg};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// What the binary's line table says was compiled: the rows' lines, per
/// source file and function symbol, and where each function's code
/// starts. Files and functions are interned; rows are distinct.
#[derive(Clone, Debug, Default)]
pub struct Compiled {
    files: Vec<String>,
    file_ix: HashMap<String, u32>,
    functions: Vec<String>,
    func_ix: HashMap<String, u32>,
    /// (file, line, function) of every row with a line, in a function.
    rows: Vec<(u32, u32, u32)>,
    /// (function, file, line) of the first row at each function's first
    /// address (its scope line), one per function.
    starts: Vec<(u32, u32, u32)>,
    /// (file, line) of every call whose callee was inlined (a DWARF
    /// inlined subroutine's call site): its code is the callee's rows.
    inlined_calls: Vec<(u32, u32)>,
}

impl Compiled {
    /// The id of a source file (as the line table names it).
    pub fn file(&mut self, path: &str) -> u32 {
        intern(&mut self.files, &mut self.file_ix, path)
    }
    /// The id of a function (its symbol name).
    pub fn function(&mut self, name: &str) -> u32 {
        intern(&mut self.functions, &mut self.func_ix, name)
    }
    /// A row: code of `function` at `line` of `file` (ids from
    /// [`Compiled::file`] and [`Compiled::function`]).
    pub fn row(&mut self, file: u32, line: u32, function: u32) {
        if self.rows.last() != Some(&(file, line, function)) {
            self.rows.push((file, line, function));
        }
    }
    /// `function`'s code starts with a row at `line` of `file` (the first
    /// such row of a function is kept).
    pub fn start(&mut self, function: u32, file: u32, line: u32) {
        self.starts.push((function, file, line));
    }
    /// Whether there is no row at all (a binary without a line table).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// The source files the line table names, by id.
    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }
    /// Every row: (file, line, function), ids as [`Compiled::row`] takes.
    pub(crate) fn rows(&self) -> &[(u32, u32, u32)] {
        &self.rows
    }
    /// A call at `line` of `file` whose callee was inlined.
    pub fn inlined_call(&mut self, file: u32, line: u32) {
        self.inlined_calls.push((file, line));
    }
    /// The inlined calls' (file, line), as [`Compiled::inlined_call`]
    /// takes them.
    pub(crate) fn inlined_calls(&self) -> &[(u32, u32)] {
        &self.inlined_calls
    }
    pub(crate) fn finish(&mut self) {
        self.rows.sort_unstable();
        self.rows.dedup();
        // The first start of each function, in the order given.
        let mut seen = std::collections::HashSet::new();
        self.starts.retain(|s| seen.insert(s.0));
    }
}

fn intern(v: &mut Vec<String>, ix: &mut HashMap<String, u32>, s: &str) -> u32 {
    if let Some(&i) = ix.get(s) {
        return i;
    }
    let i = v.len() as u32;
    v.push(s.to_string());
    ix.insert(s.to_string(), i);
    i
}

/// How a binary differs from the graph's build.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildMismatch {
    /// Lines of a file with code in the binary that the graph has no
    /// statement on.
    #[error("the binary is not of the graph's build: {missing} of {total} source lines of {file} with code in the binary have no statement in the graph (first: {file}:{first}){}; rebuild the graph from the binary's IR", others(*.other_files))]
    Lines {
        /// The file (the graph's path).
        file: String,
        /// Its lines with code in the binary and none in the graph.
        missing: usize,
        /// Its lines with code in the binary, in functions of the graph.
        total: usize,
        /// The first of the missing lines.
        first: u32,
        /// Other files with such lines.
        other_files: usize,
    },
    /// A function with code in the binary, in a file the graph has
    /// functions of, that the graph does not have.
    #[error("the binary is not of the graph's build: function `{name}` ({file}:{line}) has code in the binary but is no function of the graph{}; rebuild the graph from the binary's IR", also(*.more))]
    Function {
        /// Its symbol name.
        name: String,
        /// Its file (the graph's path).
        file: String,
        /// The line its code starts at.
        line: u32,
        /// How many other such functions there are.
        more: usize,
    },
}

fn others(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => ", and lines of 1 other file".into(),
        n => format!(", and lines of {n} other files"),
    }
}

fn also(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (nor is 1 other)".into(),
        n => format!(" (nor are {n} others)"),
    }
}

/// What [`compare`] compared, when the binary is the graph's build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Source files of the graph with code in the binary.
    pub files: usize,
    /// Their lines with code in the binary, all in the graph.
    pub lines: usize,
    /// Functions of the binary found in the graph.
    pub functions: usize,
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the binary is the graph's build ({} lines of {} files and {} functions compared)",
            self.lines, self.files, self.functions
        )
    }
}

/// `name` without a `.N` suffix (`llvm-link`'s renaming of a static
/// function whose name another module also has), if it has one.
fn unsuffixed(name: &str) -> Option<&str> {
    let (base, n) = name.rsplit_once('.')?;
    (!base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

/// Each function of the binary's line table `c`: the graph's function of
/// its name, else those of its name without `.N` (`llvm-link` numbers its
/// renamings as it meets them, so the numbers need not agree).
fn graph_funcs(g: &Icfg, c: &Compiled) -> Vec<Vec<FuncId>> {
    // The graph's functions by name, and by name without `.N`.
    let mut by_base: HashMap<&str, Vec<FuncId>> = HashMap::new();
    for (i, f) in g.functions().iter().enumerate() {
        if let Some(base) = unsuffixed(&f.name) {
            by_base.entry(base).or_default().push(FuncId::new(i));
        }
    }
    c.functions
        .iter()
        .map(|name| match g.function_by_name(name) {
            Some(f) => vec![f],
            None => {
                // `llvm-link` numbers its renamings as it meets them.
                let key = unsuffixed(name).unwrap_or(name);
                let mut v = by_base.get(key).cloned().unwrap_or_default();
                v.extend(g.function_by_name(key));
                v
            }
        })
        .collect()
}

/// Each binary file's graph files (indices into `graph_files`): by path
/// (suffix match after the path map `paths`), else, for a binary built
/// elsewhere, by the name of the file of the graph's function (of
/// `funcs`) whose code starts in it.
fn matched_files(
    g: &Icfg,
    c: &Compiled,
    paths: &PathMap,
    funcs: &[Vec<FuncId>],
    graph_files: &[&str],
) -> Vec<Vec<u32>> {
    let mut matched: Vec<Vec<u32>> = c
        .files
        .iter()
        .map(|p| {
            let p = paths.apply(p);
            (0..graph_files.len() as u32)
                .filter(|&f| same_file(&p, graph_files[f as usize]))
                .collect()
        })
        .collect();
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let unmatched: Vec<bool> = matched.iter().map(Vec::is_empty).collect();
    for &(func, file, _) in &c.starts {
        if !unmatched[file as usize] {
            continue;
        }
        for &f in &funcs[func as usize] {
            if let Some(gf) = g.function(f).file {
                let gf = gf.index() as u32;
                let m = &mut matched[file as usize];
                if base(&c.files[file as usize]) == base(graph_files[gf as usize])
                    && !m.contains(&gf)
                {
                    m.push(gf);
                }
            }
        }
    }
    matched
}

/// The graph's lines per file (strong and weak); per function, its last
/// line and whether it has weak lines (optimised code).
struct GraphLines {
    /// Per file, sorted.
    lines: Vec<Vec<u32>>,
    /// Per function.
    last_line: Vec<u32>,
    /// Per function.
    optimised: Vec<bool>,
}

impl GraphLines {
    fn of(g: &Icfg) -> GraphLines {
        let mut lines: Vec<Vec<u32>> = vec![Vec::new(); g.num_files()];
        let mut last_line: Vec<u32> = vec![0; g.functions().len()];
        let mut optimised: Vec<bool> = vec![false; g.functions().len()];
        for n in g.nodes() {
            if let Some(file) = g.file_of(n) {
                let f = g.func_of(n).index();
                let v = &mut lines[file.index()];
                for l in g.lines(n).iter().copied().chain(g.weak_lines(n)) {
                    v.push(l);
                    last_line[f] = last_line[f].max(l);
                }
                optimised[f] |= g.weak_lines(n).next().is_some();
            }
        }
        for v in &mut lines {
            v.sort_unstable();
            v.dedup();
        }
        GraphLines {
            lines,
            last_line,
            optimised,
        }
    }

    /// Whether one of the graph files `files` has line `l`.
    fn has(&self, files: &[u32], l: u32) -> bool {
        files
            .iter()
            .any(|&f| self.lines[f as usize].binary_search(&l).is_ok())
    }
}

/// Per binary file: its lines with code in graph functions (`total`),
/// and those of them missing from the graph (`missing`), both sorted.
/// `funcs` and `matched` are the binary's functions' and files' in the
/// graph ([`graph_funcs`], [`matched_files`]).
fn missing_lines(
    g: &Icfg,
    c: &Compiled,
    funcs: &[Vec<FuncId>],
    matched: &[Vec<u32>],
    gl: &GraphLines,
) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let decl_line = |f: FuncId| -> Option<u32> {
        let e = g.function(f).entry?;
        g.lines(e).first().copied()
    };
    // The line of the row at each function's first address: its scope
    // line (the opening `{`), which holds its prologue (and, optimised,
    // its epilogue) but no instruction of the IR.
    let mut scope: HashMap<u32, u32> = HashMap::new();
    for &(func, _, line) in &c.starts {
        scope.entry(func).or_insert(line);
    }
    // Allowed without a graph line: a function's scope line, after its
    // declaration line and before its last line, or, when the line
    // table starts elsewhere, after its declaration line with no line of
    // the graph in between.
    let scope_line = |files: &[u32], fs: &[FuncId], func: u32, l: u32| {
        fs.iter().any(|&f| {
            decl_line(f).is_some_and(|d| {
                let after = files.iter().all(|&file| {
                    let v = &gl.lines[file as usize];
                    v.get(v.partition_point(|&x| x <= d))
                        .is_none_or(|&next| next > l)
                });
                d <= l && (after || (scope.get(&func) == Some(&l) && l <= gl.last_line[f.index()]))
            })
        })
    };
    // Per binary file: lines with code in graph functions; the rows
    // missing from the graph, with their functions.
    let mut total: Vec<Vec<u32>> = vec![Vec::new(); c.files.len()];
    let mut absent_rows: Vec<(u32, u32, u32)> = Vec::new();
    let mut own_of: HashMap<(u32, u32), Vec<FuncId>> = HashMap::new();
    for &(file, line, func) in &c.rows {
        let m = &matched[file as usize];
        if m.is_empty() {
            continue;
        }
        let own = own_of.entry((file, func)).or_insert_with(|| {
            funcs[func as usize]
                .iter()
                .copied()
                .filter(|&f| {
                    g.function(f)
                        .file
                        .is_some_and(|ff| m.contains(&(ff.index() as u32)))
                })
                .collect()
        });
        if own.is_empty() {
            continue;
        }
        total[file as usize].push(line);
        if !gl.has(m, line) && !scope_line(m, own, func, line) {
            absent_rows.push((file, func, line));
        }
    }
    // An optimised function may also have a row at the start of a loop
    // whose first line has no code (a `do {` line): code generation puts
    // a loop's preheader at the location its `llvm.loop` metadata gives
    // (no instruction's). Allowed: one such line in an optimised
    // function whose other rows are all the graph's, followed within two
    // lines by a line of the graph.
    absent_rows.sort_unstable();
    let mut missing: Vec<Vec<u32>> = vec![Vec::new(); c.files.len()];
    for group in absent_rows.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let (file, func, line) = group[0];
        let m = &matched[file as usize];
        let loop_start = group.len() == 1
            && own_of[&(file, func)]
                .iter()
                .any(|f| gl.optimised[f.index()])
            && (gl.has(m, line + 1) || gl.has(m, line + 2));
        if loop_start {
            continue;
        }
        missing[file as usize].extend(group.iter().map(|r| r.2));
    }
    for v in total.iter_mut().chain(missing.iter_mut()) {
        v.sort_unstable();
        v.dedup();
    }
    (total, missing)
}

/// How many functions of the binary whose code starts in a file of the
/// graph (`matched`) the graph has (`funcs`), or the first it lacks.
fn found_functions(
    c: &Compiled,
    funcs: &[Vec<FuncId>],
    matched: &[Vec<u32>],
    graph_files: &[&str],
) -> Result<usize, BuildMismatch> {
    let mut absent = Vec::new();
    let mut found = Vec::new();
    for &(func, file, line) in &c.starts {
        let m = &matched[file as usize];
        if m.is_empty() {
            continue;
        }
        if funcs[func as usize].is_empty() {
            absent.push((func, file, line));
        } else {
            found.push(func);
        }
    }
    found.sort_unstable();
    found.dedup();
    absent.dedup_by_key(|a| a.0);
    if let Some(&(func, file, line)) = absent.first() {
        return Err(BuildMismatch::Function {
            name: c.functions[func as usize].clone(),
            file: graph_files[matched[file as usize][0] as usize].to_string(),
            line,
            more: absent.len() - 1,
        });
    }
    Ok(found.len())
}

/// Compares the binary's line table `c` with the graph `g` (the module
/// doc says how); `paths` rewrites the binary's paths as it does a
/// backtrace's. Ok with what was compared, or the first difference.
pub fn compare(g: &Icfg, c: &Compiled, paths: &PathMap) -> Result<Checked, BuildMismatch> {
    let funcs = graph_funcs(g, c);
    let graph_files: Vec<&str> = (0..g.num_files())
        .map(|i| g.file_path(FileId::new(i)))
        .collect();
    let matched = matched_files(g, c, paths, &funcs, &graph_files);
    let (total, missing) = missing_lines(g, c, &funcs, &matched, &GraphLines::of(g));
    let bad: Vec<usize> = (0..c.files.len())
        .filter(|&i| !missing[i].is_empty())
        .collect();
    if let Some(&worst) = bad
        .iter()
        .max_by_key(|&&i| (missing[i].len(), usize::MAX - i))
    {
        let file = graph_files[matched[worst][0] as usize].to_string();
        return Err(BuildMismatch::Lines {
            file,
            missing: missing[worst].len(),
            total: total[worst].len(),
            first: missing[worst][0],
            other_files: bad.len() - 1,
        });
    }
    // Functions of the binary in the graph's files.
    let functions = found_functions(c, &funcs, &matched, &graph_files)?;
    Ok(Checked {
        files: total.iter().filter(|v| !v.is_empty()).count(),
        lines: total.iter().map(Vec::len).sum(),
        functions,
    })
}

type Slice<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// Reads the binary's line table: every row with a line, by the
/// function symbol its address is in (rows outside every function
/// symbol are left out). An empty [`Compiled`] when the binary has no
/// DWARF.
pub fn read_compiled(bin: &Binary) -> Result<Compiled, NativeError> {
    let data = bin.data();
    let file =
        object::File::parse(data).map_err(|e| NativeError(format!("not an ELF binary: {e}")))?;
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let dwarf_err = |e: gimli::Error| NativeError(format!("unreadable DWARF: {e}"));
    let sections = gimli::DwarfSections::load(load).map_err(dwarf_err)?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, gimli::RunTimeEndian::Little));
    let funcs = bin.funcs();
    let mut out = Compiled::default();
    // Function symbol index -> interned function id.
    let mut func_ids: Vec<Option<u32>> = vec![None; funcs.len()];
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(dwarf_err)? {
        let unit = dwarf.unit(header).map_err(dwarf_err)?;
        read_unit(&dwarf, &unit, bin, &mut func_ids, &mut out).map_err(dwarf_err)?;
    }
    out.finish();
    Ok(out)
}

fn read_unit(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    bin: &Binary,
    func_ids: &mut [Option<u32>],
    out: &mut Compiled,
) -> gimli::Result<()> {
    let Some(program) = unit.line_program.clone() else {
        return Ok(());
    };
    let funcs = bin.funcs();
    let comp_dir = unit
        .comp_dir
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    // File index -> interned file id (None: not yet seen).
    let mut file_ids: HashMap<u64, u32> = HashMap::new();
    // The function symbol of the last row: [start, end) and its index.
    let mut current: Option<(u64, u64, usize)> = None;
    let mut rows = program.clone().rows();
    while let Some((header, row)) = rows.next_row()? {
        if row.end_sequence() {
            continue;
        }
        let Some(line) = row.line() else {
            continue;
        };
        let Ok(line) = u32::try_from(line.get()) else {
            continue;
        };
        let addr = row.address();
        let sym = match current {
            Some((a, b, i)) if addr >= a && addr < b => Some(i),
            _ => {
                let i = funcs.partition_point(|f| f.addr <= addr);
                let hit = i.checked_sub(1).filter(|&i| {
                    let f = &funcs[i];
                    f.size != 0 && addr - f.addr < f.size
                });
                current = hit.map(|i| (funcs[i].addr, funcs[i].addr + funcs[i].size, i));
                hit
            }
        };
        let Some(sym) = sym else {
            continue;
        };
        let file = match file_ids.get(&row.file_index()) {
            Some(&f) => f,
            None => {
                let path = row
                    .file(header)
                    .map(|entry| path_of(dwarf, unit, header, entry, &comp_dir))
                    .unwrap_or_default();
                let f = out.file(&path);
                file_ids.insert(row.file_index(), f);
                f
            }
        };
        let func = match func_ids[sym] {
            Some(f) => f,
            None => {
                let f = out.function(&funcs[sym].name);
                func_ids[sym] = Some(f);
                f
            }
        };
        out.row(file, line, func);
        if addr == funcs[sym].addr {
            out.start(func, file, line);
        }
    }
    read_inlined_calls(dwarf, unit, &program, &comp_dir, out)
}

/// The call sites of the unit's inlined subroutines (`DW_AT_call_file`,
/// `DW_AT_call_line`), into `out`.
fn read_inlined_calls(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    program: &gimli::IncompleteLineProgram<Slice<'_>>,
    comp_dir: &str,
    out: &mut Compiled,
) -> gimli::Result<()> {
    let header = program.header();
    let mut paths: HashMap<u64, u32> = HashMap::new();
    let mut entries = unit.entries();
    while let Some(entry) = entries.next_dfs()? {
        if entry.tag() != gimli::DW_TAG_inlined_subroutine {
            continue;
        }
        let index = match entry.attr_value(gimli::DW_AT_call_file) {
            Some(gimli::AttributeValue::FileIndex(i)) => i,
            Some(v) => match v.udata_value() {
                Some(i) => i,
                None => continue,
            },
            None => continue,
        };
        let Some(line) = entry
            .attr_value(gimli::DW_AT_call_line)
            .and_then(|v| v.udata_value())
            .and_then(|l| u32::try_from(l).ok())
        else {
            continue;
        };
        let file = match paths.get(&index) {
            Some(&f) => f,
            None => {
                let path = header
                    .file(index)
                    .map(|e| path_of(dwarf, unit, header, e, comp_dir))
                    .unwrap_or_default();
                let f = out.file(&path);
                paths.insert(index, f);
                f
            }
        };
        out.inlined_call(file, line);
    }
    Ok(())
}

/// A line-table file entry's path: its directory (relative ones under the
/// unit's compilation directory) and name.
fn path_of(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    header: &gimli::LineProgramHeader<Slice<'_>>,
    entry: &gimli::FileEntry<Slice<'_>>,
    comp_dir: &str,
) -> String {
    let string = |v| {
        dwarf
            .attr_string(unit, v)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let name = string(entry.path_name());
    if name.starts_with('/') {
        return name;
    }
    let dir = entry.directory(header).map(string).unwrap_or_default();
    let dir = if dir.starts_with('/') || comp_dir.is_empty() {
        dir
    } else if dir.is_empty() {
        comp_dir.to_string()
    } else {
        format!("{comp_dir}/{dir}")
    };
    if dir.is_empty() {
        name
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};

    /// main.c: `main` (declared on line 3, statements on 5-6, returns on
    /// 7) and the static `helper`, which `llvm-link` renamed `helper.2`
    /// (declared on 10, a statement on 11 and one with weak line 12);
    /// util.c: `util` (2, 3) and the optimised `opt` (declared on 20, a
    /// parameter's store on 21, statements on 23 and 25, weak line 26).
    fn graph() -> Icfg {
        let mut b = IcfgBuilder::new();
        let add = |b: &mut IcfgBuilder, name: &str, file: &str, lines: &[&[u32]]| {
            let f = b.function(name);
            b.set_function_file(f, file);
            let mut prev = None;
            let mut nodes = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                let kind = match i {
                    0 => NodeKind::Entry,
                    i if i + 1 == lines.len() => NodeKind::Exit,
                    _ => NodeKind::Statement,
                };
                let n = b
                    .add_node(NodeSpec {
                        ext_id: &format!("{name}:{i}"),
                        kind,
                        func: f,
                        label: "",
                        lines: l,
                    })
                    .unwrap();
                if let Some(p) = prev {
                    b.add_flow_edge(p, n);
                }
                prev = Some(n);
                nodes.push(n);
            }
            nodes
        };
        let main = add(&mut b, "main", "/src/main.c", &[&[3], &[5], &[6], &[7]]);
        let helper = add(&mut b, "helper.2", "/src/main.c", &[&[10], &[11], &[], &[]]);
        b.add_weak_line(helper[2], 12);
        add(&mut b, "util", "/src/util.c", &[&[2], &[3], &[]]);
        let opt = add(
            &mut b,
            "opt",
            "/src/util.c",
            &[&[20], &[21], &[23], &[25], &[]],
        );
        b.add_weak_line(opt[3], 26);
        b.set_start(main[0]);
        b.build().unwrap()
    }

    /// Rows (file, line, function) and starts (function, file, line).
    fn compiled(rows: &[(&str, u32, &str)], starts: &[(&str, &str, u32)]) -> Compiled {
        let mut c = Compiled::default();
        for &(file, line, func) in rows {
            let (file, func) = (c.file(file), c.function(func));
            c.row(file, line, func);
        }
        for &(func, file, line) in starts {
            let (file, func) = (c.file(file), c.function(func));
            c.start(func, file, line);
        }
        c.finish();
        c
    }

    /// The rows of the graph's own build: main's prologue at its scope
    /// line 4 (no statement there, none between its declaration and it),
    /// helper under another renaming, util built in another folder, a
    /// header inlined into main, util.c code inlined into main (not
    /// main's own file: left out), opt's scope line 22 (after a line of
    /// the graph) and a loop's start on 24.
    const SAME: &[(&str, u32, &str)] = &[
        ("/src/main.c", 4, "main"),
        ("/src/main.c", 5, "main"),
        ("/src/main.c", 6, "main"),
        ("/src/main.c", 7, "main"),
        ("/src/inc.h", 99, "main"),
        ("/src/util.c", 40, "main"),
        ("/src/main.c", 10, "helper.5"),
        ("/src/main.c", 11, "helper.5"),
        ("/src/main.c", 12, "helper.5"),
        ("/elsewhere/util.c", 2, "util"),
        ("/elsewhere/util.c", 3, "util"),
        ("/elsewhere/util.c", 22, "opt"),
        ("/elsewhere/util.c", 23, "opt"),
        ("/elsewhere/util.c", 24, "opt"),
        ("/elsewhere/util.c", 25, "opt"),
    ];
    const STARTS: &[(&str, &str, u32)] = &[
        ("main", "/src/main.c", 4),
        ("helper.5", "/src/main.c", 10),
        ("util", "/elsewhere/util.c", 2),
        ("opt", "/elsewhere/util.c", 22),
    ];

    #[test]
    fn the_graphs_build_passes() {
        let g = graph();
        let c = compiled(SAME, STARTS);
        assert_eq!(
            compare(&g, &c, &PathMap::new()),
            Ok(Checked {
                files: 2,
                lines: 13,
                functions: 4
            })
        );
    }

    #[test]
    fn shifted_lines_are_refused() {
        let g = graph();
        // Two lines inserted above main's body: 5-7 became 7-9.
        let mut rows = SAME.to_vec();
        for r in rows.iter_mut().filter(|r| r.2 == "main" && r.1 < 8) {
            r.1 += 2;
        }
        let e = compare(&g, &compiled(&rows, STARTS), &PathMap::new()).unwrap_err();
        assert_eq!(
            e,
            BuildMismatch::Lines {
                file: "/src/main.c".into(),
                missing: 2,
                total: 7,
                first: 8,
                other_files: 0,
            }
        );
        let m = e.to_string();
        assert!(
            m.contains("2 of 7 source lines of /src/main.c") && m.contains("/src/main.c:8"),
            "{m}"
        );
        // A line after a statement is no scope line.
        let mut rows = SAME.to_vec();
        rows.push(("/src/main.c", 8, "main"));
        assert!(matches!(
            compare(&g, &compiled(&rows, STARTS), &PathMap::new()),
            Err(BuildMismatch::Lines { first: 8, .. })
        ));
        // Nor is a second loop start (19, before 20) in one function.
        let mut rows = SAME.to_vec();
        rows.push(("/elsewhere/util.c", 19, "opt"));
        assert!(matches!(
            compare(&g, &compiled(&rows, STARTS), &PathMap::new()),
            Err(BuildMismatch::Lines {
                first: 19,
                missing: 2,
                ..
            })
        ));
    }

    #[test]
    fn a_function_the_graph_lacks_is_refused() {
        let g = graph();
        let mut rows = SAME.to_vec();
        rows.push(("/src/util.c", 5, "added"));
        let mut starts = STARTS.to_vec();
        starts.push(("added", "/src/util.c", 5));
        let e = compare(&g, &compiled(&rows, &starts), &PathMap::new()).unwrap_err();
        assert_eq!(
            e,
            BuildMismatch::Function {
                name: "added".into(),
                file: "/src/util.c".into(),
                line: 5,
                more: 0
            }
        );
        // One of a file the graph has no function of (a library's, the
        // C runtime's) is not.
        let mut starts = STARTS.to_vec();
        starts.push(("_start", "/libc/start.S", 1));
        assert!(compare(&g, &compiled(SAME, &starts), &PathMap::new()).is_ok());
    }

    #[test]
    fn link_suffixes() {
        assert_eq!(unsuffixed("helper.2"), Some("helper"));
        assert_eq!(unsuffixed("helper"), None);
        assert_eq!(unsuffixed("a.b"), None);
        assert_eq!(unsuffixed(".3"), None);
    }
}
