//! Source locations to ICFG nodes: crash stacks and "this ran" selectors.
//!
//! Backtraces (gdb, lldb, sanitizers, Rust panics) and hand-written
//! reports name code by function, file, line and sometimes column. This
//! module turns such names into the [`Report`] of the model, **soundly**:
//!
//! * A location that fits several nodes becomes an ambiguous [`NodeSet`]
//!   ("one of these"), never a guess.
//! * A location that fits nothing is a [`LocateWarning`] (a diagnostic that
//!   travels with the result, not an error), and the constraint it would
//!   have produced is *weakened*: left out, or replaced by a larger set.
//!
//! # Crash stacks
//!
//! [`Locator::locate_stack`] takes frames innermost first (as debuggers
//! print them). Each frame is placed in the graph:
//!
//! 1. its function by name ([`name_keys`]: the name as given, without its
//!    parameter list, without a Rust hash; plus aliases such as demangled
//!    names, see [`Locator::add_alias`]), narrowed to the functions whose
//!    file matches the frame's file when that leaves any;
//! 2. its line: the nodes of those functions on that line. Without a name
//!    match, the nodes on that line of every function of a matching file.
//!
//! Files match by path *suffix*, component-wise (`src/a.c` matches
//! `/home/me/proj/src/a.c` and vice versa), after both paths went through
//! the [`PathMap`] prefix rewriting.
//!
//! Then, with `f0` the innermost frame found in the program:
//!
//! * **crash** = the nodes of `f0` on its line (all of them: the crash set
//!   is ambiguous when the line has several nodes). When frames inner of
//!   `f0` are outside the program (`raise`, `abort`, `strlen` in libc...),
//!   `f0` was executing a call: the crash set is narrowed to the call
//!   sites on that line whose call note names the library function, when
//!   there are such (positive evidence only; otherwise the whole line).
//!   A line on which no node has a statement but some have it as a [weak
//!   line](Icfg::weak_lines) (the lone branch of `for (;;) {`): those
//!   nodes, when the frame called no library function.
//! * **frame** `i` (report order, outermost first) pairs a caller frame
//!   and its callee: `call` = the call sites of the caller on its line,
//!   narrowed to those that may call the callee (call edges; sites with no
//!   known callee are kept), then to those whose column equals the frame's
//!   column if any does; `entry` = the callee's entry node.
//!
//! Weakenings, each with a warning naming the frame:
//!
//! * a function found but nothing on its line: the whole function is
//!   used (all its nodes for the crash, all its call sites for a call);
//! * a frame not found at all: the report frames into and out of it are
//!   dropped (the stack is an unreliable subsequence
//!   `<call₀, entry₀, call₁, …>`, and a subsequence of it is a weaker
//!   constraint), and an innermost frame that may be program code leaves
//!   the crash unconstrained;
//! * frames marked `runtime` (sanitizer, libc start-up, panic machinery)
//!   are outside the program by definition and produce no warning.
//!
//! # Selectors
//!
//! [`Locator::ran`] and [`Locator::not_ran`] turn "function `f`", "line
//! `a.c:12`" and "a call of `lock`" into `obsYes` elements and `obsNo`
//! sets (see [`Selector`]).
//!
//! Pure: no I/O, no file format. Cost: building a [`Locator`] is linear in
//! the graph; each frame costs a scan of the files plus the nodes of the
//! matched functions.

use crate::icfg::{Icfg, NodeKind};
use crate::ids::{FileId, FuncId, NodeId};
use crate::report::{Frame, NodeSet, Report};
use std::collections::HashMap;
use std::fmt;

/// Path prefix rewriting (`--path-map FROM=TO`), applied to every path
/// before paths are compared.
///
/// A rule applies when `FROM` is a prefix of the path at a component
/// boundary (`/build` applies to `/build/a.c`, not to `/builds/a.c`); the
/// longest applicable `FROM` wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathMap {
    rules: Vec<(String, String)>,
}

impl PathMap {
    /// No rewriting.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule.
    pub fn push(&mut self, from: &str, to: &str) {
        self.rules.push((from.to_string(), to.to_string()));
    }

    /// Parses and adds a rule written `FROM=TO` (the first `=` splits it).
    pub fn push_spec(&mut self, spec: &str) -> Result<(), String> {
        match spec.split_once('=') {
            Some((from, to)) if !from.is_empty() => {
                self.push(from, to);
                Ok(())
            }
            _ => Err(format!(
                "path map `{spec}` is not of the form FROM=TO (with a non-empty FROM)"
            )),
        }
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[(String, String)] {
        &self.rules
    }

    /// Rewrites `path` with the longest applicable rule, if any.
    pub fn apply(&self, path: &str) -> String {
        let mut best: Option<&(String, String)> = None;
        for r in &self.rules {
            let from = r.0.trim_end_matches(['/', '\\']);
            let applies = if from.is_empty() {
                // `FROM` was `/`: every absolute path.
                path.starts_with('/')
            } else {
                path.strip_prefix(from)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '\\']))
            };
            if applies && best.is_none_or(|b| b.0.len() < r.0.len()) {
                best = Some(r);
            }
        }
        match best {
            None => path.to_string(),
            Some((from, to)) => {
                let from = from.trim_end_matches(['/', '\\']);
                let rest = &path[from.len()..];
                let rest = rest.trim_start_matches(['/', '\\']);
                if rest.is_empty() {
                    to.clone()
                } else if to.is_empty() {
                    rest.to_string()
                } else if to.ends_with(['/', '\\']) {
                    format!("{to}{rest}")
                } else {
                    format!("{to}/{rest}")
                }
            }
        }
    }
}

/// The normalised components of a path: separators `/` and `\`, no `.`
/// components, `x/..` folded, leading `..` components dropped (they say
/// nothing about the suffix).
pub fn path_components(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split(['/', '\\']) {
        match c {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    let lead = out.iter().take_while(|c| **c == "..").count();
    out.drain(..lead);
    out
}

/// Do two paths name the same file, judged by suffix? True when the
/// components of one end the components of the other (and neither is
/// empty).
pub fn same_file(a: &str, b: &str) -> bool {
    suffix_match(&path_components(a), &path_components(b))
}

fn suffix_match(a: &[&str], b: &[&str]) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let n = a.len().min(b.len());
    a[a.len() - n..] == b[b.len() - n..]
}

/// The keys a function name is looked up by, most specific first: the
/// name itself, the name without its parameter list and trailing
/// qualifiers (`ns::f(int) const` -> `ns::f`), and without a Rust hash
/// (`app::f::h0123456789abcdef` -> `app::f`).
pub fn name_keys(name: &str) -> Vec<String> {
    let mut keys = Vec::with_capacity(3);
    let name = name.trim();
    if name.is_empty() {
        return keys;
    }
    keys.push(name.to_string());
    let no_params = strip_params(name);
    if no_params != name && !no_params.is_empty() {
        keys.push(no_params.to_string());
    }
    let base = keys.last().expect("one key").clone();
    let no_hash = strip_rust_hash(&base);
    if no_hash != base && !no_hash.is_empty() {
        keys.push(no_hash.to_string());
    }
    keys
}

/// `ns::f(int, char*) const` -> `ns::f`. Leaves names without a trailing
/// parameter list alone; never strips a group that starts the name
/// (`(anonymous namespace)`).
fn strip_params(name: &str) -> &str {
    let mut s = name.trim_end();
    // Trailing qualifiers after the parameter list.
    loop {
        let before = s;
        for q in ["const", "volatile", "&&", "&", "noexcept"] {
            if let Some(r) = s.strip_suffix(q) {
                if q.starts_with('&') || r.ends_with([' ', ')']) {
                    s = r.trim_end();
                }
            }
        }
        if s == before {
            break;
        }
    }
    if !s.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let head = s[..i].trim_end();
                    return if head.is_empty() || head.ends_with("::") {
                        name
                    } else {
                        head
                    };
                }
            }
            _ => {}
        }
    }
    name
}

/// `app::f::h0123456789abcdef` -> `app::f`.
fn strip_rust_hash(name: &str) -> &str {
    if let Some((head, tail)) = name.rsplit_once("::") {
        if tail.len() == 17
            && tail.starts_with('h')
            && tail[1..].bytes().all(|b| b.is_ascii_hexdigit())
        {
            return head;
        }
    }
    name
}

/// One frame of a crash stack as a backtrace or a report names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceFrame {
    /// The function's name (demangled), when known.
    pub function: Option<String>,
    /// Another name of the same function (the raw, mangled symbol).
    pub symbol: Option<String>,
    /// The source file, as the input wrote it.
    pub file: Option<String>,
    /// The 1-based source line.
    pub line: Option<u32>,
    /// The 1-based source column.
    pub column: Option<u32>,
    /// Known runtime or library code (sanitizer runtime, libc start-up,
    /// panic machinery): outside the program, and not worth a warning.
    pub runtime: bool,
    /// The frame's code comes from a shared library (a module such as
    /// `libc.so.6`): when nothing in the graph matches it, it is taken as
    /// outside the program rather than as unknown program code.
    pub library: bool,
    /// How messages name the frame, e.g. ``frame #2 `foo` (a.c:12)``.
    pub label: String,
}

impl SourceFrame {
    /// A label for messages: ``NAME `function` (file:line:column)``.
    pub fn describe(
        prefix: &str,
        function: Option<&str>,
        file: Option<&str>,
        line: Option<u32>,
        column: Option<u32>,
    ) -> String {
        let mut s = prefix.to_string();
        if let Some(f) = function {
            s.push_str(&format!(" `{f}`"));
        }
        if let Some(file) = file {
            s.push_str(&format!(" ({file}"));
            if let Some(l) = line {
                s.push_str(&format!(":{l}"));
                if let Some(c) = column {
                    s.push_str(&format!(":{c}"));
                }
            }
            s.push(')');
        } else if let Some(l) = line {
            s.push_str(&format!(" (line {l})"));
        }
        s
    }
}

/// What a selector of a hand-written report names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// A function (by name, as for frames).
    Function(String),
    /// A source line of a file (suffix-matched path).
    Line {
        /// The file.
        file: String,
        /// The 1-based line.
        line: u32,
    },
    /// The calls of a function (in the program, or a library function
    /// named in call notes).
    Call(String),
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Function(n) => write!(f, "function `{n}`"),
            Selector::Line { file, line } => write!(f, "line {file}:{line}"),
            Selector::Call(n) => write!(f, "calls of `{n}`"),
        }
    }
}

/// What could not be matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Nothing in the graph matches the frame's function or file: code
    /// outside the program (a library).
    NotInProgram,
    /// The frame names no function and no known file (`??`), or names a
    /// file of the program but a line with no node and no known function.
    Unplaceable,
    /// The function was found but has no node on this line.
    NoNodeOnLine(u32),
    /// The line has nodes but no call site.
    NoCallSiteOnLine(u32),
    /// The function has no entry node in the graph.
    NoEntryNode,
    /// A selector matches nothing in the graph.
    NoMatch,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotInProgram => write!(
                f,
                "matches no function or file of the program (library code?)"
            ),
            Problem::Unplaceable => write!(f, "cannot be placed in the program"),
            Problem::NoNodeOnLine(l) => write!(f, "its function has no statement on line {l}"),
            Problem::NoCallSiteOnLine(l) => write!(f, "line {l} has no call site"),
            Problem::NoEntryNode => write!(f, "its function has no entry node in the graph"),
            Problem::NoMatch => write!(f, "matches nothing in the graph"),
        }
    }
}

/// What was done about a [`Problem`] (always a sound weakening).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The crash is placed at the call its caller frame was executing.
    CrashAtCaller {
        /// The caller frame's label.
        caller: String,
    },
    /// The crash set is every node of the function(s) (`count` nodes).
    CrashInFunction {
        /// Size of the crash set.
        count: usize,
    },
    /// The crash location is left unconstrained.
    CrashUnconstrained,
    /// The call is one of all `count` call sites of the function(s).
    CallAnywhereInFunction {
        /// Size of the call set.
        count: usize,
    },
    /// These report frames (stack positions, outermost first) were left
    /// out of the stack.
    FramesDropped {
        /// How many report frames were dropped.
        count: usize,
    },
    /// The selector is left out of the report.
    Dropped,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::CrashAtCaller { caller } => {
                write!(f, "the crash is placed at the call in {caller}")
            }
            Action::CrashInFunction { count } => {
                write!(
                    f,
                    "the crash is taken as anywhere in the function ({count} nodes)"
                )
            }
            Action::CrashUnconstrained => write!(f, "the crash location is left unconstrained"),
            Action::CallAnywhereInFunction { count } => {
                write!(
                    f,
                    "the call is taken as any call site of the function ({count})"
                )
            }
            Action::FramesDropped { count } => write!(
                f,
                "{count} stack frame{} left out of the stack constraint (a weaker constraint)",
                if *count == 1 { "" } else { "s" }
            ),
            Action::Dropped => write!(f, "it is left out of the report (a weaker constraint)"),
        }
    }
}

/// A diagnostic of the mapping: what could not be matched and the sound
/// weakening applied instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocateWarning {
    /// The frame or selector, as the input named it.
    pub subject: String,
    /// What could not be matched.
    pub problem: Problem,
    /// What was done about it.
    pub action: Action,
}

impl fmt::Display for LocateWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}; {}", self.subject, self.problem, self.action)
    }
}

/// A report built from source locations, with its diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Located {
    /// The report (stack and crash for a backtrace).
    pub report: Report,
    /// What could not be matched, and what was weakened instead.
    pub warnings: Vec<LocateWarning>,
}

/// Where a frame is in the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    /// Nodes of `funcs` on the frame's line.
    Line {
        funcs: Vec<FuncId>,
        nodes: Vec<NodeId>,
    },
    /// Somewhere in `funcs` (the line is unknown, or has no node).
    Function {
        funcs: Vec<FuncId>,
        missing_line: Option<u32>,
    },
    /// Outside the program.
    Outside,
    /// Maybe program code, but where is unknown.
    Unknown,
}

/// Indexes a graph for locating source positions.
pub struct Locator<'g> {
    g: &'g Icfg,
    paths: PathMap,
    /// `func_nodes[func_start[f]..func_start[f+1]]`: the nodes of `f`.
    func_start: Vec<u32>,
    func_nodes: Vec<NodeId>,
    names: HashMap<String, Vec<FuncId>>,
    /// Components of every file path, after the path map.
    files: Vec<Vec<String>>,
    /// Call sites by the external callee names of their notes.
    external_calls: HashMap<String, Vec<NodeId>>,
}

impl<'g> Locator<'g> {
    /// Indexes `g` (linear time). Paths of the graph and of frames both
    /// go through `paths` before being compared.
    pub fn new(g: &'g Icfg, paths: PathMap) -> Self {
        let nf = g.functions().len();
        let mut count = vec![0u32; nf + 1];
        for n in g.nodes() {
            count[g.func_of(n).index() + 1] += 1;
        }
        for i in 0..nf {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut func_nodes = vec![NodeId::new(0); g.num_nodes()];
        for n in g.nodes() {
            let f = g.func_of(n).index();
            func_nodes[fill[f] as usize] = n;
            fill[f] += 1;
        }
        let files = (0..g.num_files())
            .map(|i| {
                path_components(&paths.apply(g.file_path(FileId::new(i))))
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        let mut external_calls: HashMap<String, Vec<NodeId>> = HashMap::new();
        for (site, note) in g.call_notes() {
            for name in &note.external_callees {
                external_calls
                    .entry(name.to_string())
                    .or_default()
                    .push(site);
            }
        }
        let mut loc = Locator {
            g,
            paths,
            func_start: count,
            func_nodes,
            names: HashMap::new(),
            files,
            external_calls,
        };
        for (i, f) in g.functions().iter().enumerate() {
            loc.add_alias(FuncId::new(i), &f.name.clone());
        }
        loc
    }

    /// Lets function `f` also be found by `name` (e.g. the demangled form
    /// of a mangled graph name). All of `name`'s [`name_keys`] are indexed.
    pub fn add_alias(&mut self, f: FuncId, name: &str) {
        for k in name_keys(name) {
            let v = self.names.entry(k).or_default();
            if !v.contains(&f) {
                v.push(f);
            }
        }
    }

    /// The graph.
    pub fn graph(&self) -> &'g Icfg {
        self.g
    }

    /// The path map in use.
    pub fn path_map(&self) -> &PathMap {
        &self.paths
    }

    /// The nodes of a function.
    pub fn nodes_of(&self, f: FuncId) -> &[NodeId] {
        let i = f.index();
        &self.func_nodes[self.func_start[i] as usize..self.func_start[i + 1] as usize]
    }

    /// The functions a name may denote: the first of its [`name_keys`]
    /// that is known wins (so `f(int)` prefers an exact `f(int)` to every
    /// overload of `f`).
    pub fn functions_named(&self, name: &str) -> Vec<FuncId> {
        for k in name_keys(name) {
            if let Some(v) = self.names.get(&k) {
                let mut v = v.clone();
                v.sort_unstable();
                return v;
            }
        }
        Vec::new()
    }

    /// The files of the graph that `path` may denote (suffix match after
    /// the path map).
    pub fn files_matching(&self, path: &str) -> Vec<FileId> {
        let mapped = self.paths.apply(path);
        let want = path_components(&mapped);
        self.files
            .iter()
            .enumerate()
            .filter(|(_, have)| {
                let have: Vec<&str> = have.iter().map(String::as_str).collect();
                suffix_match(&want, &have)
            })
            .map(|(i, _)| FileId::new(i))
            .collect()
    }

    fn functions_in(&self, files: &[FileId]) -> Vec<FuncId> {
        self.g
            .functions()
            .iter()
            .enumerate()
            .filter(|(_, f)| f.file.is_some_and(|x| files.contains(&x)))
            .map(|(i, _)| FuncId::new(i))
            .collect()
    }

    /// The nodes of `funcs` on `line`, sorted.
    pub fn nodes_on_line(&self, funcs: &[FuncId], line: u32) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = funcs
            .iter()
            .flat_map(|&f| self.nodes_of(f))
            .copied()
            .filter(|&n| self.g.lines(n).contains(&line))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The nodes of `funcs` that have `line` only as a [weak
    /// line](Icfg::weak_lines): a branch alone in its block (a loop's
    /// `for (;;)`), a coverage flag check.
    fn nodes_weakly_on_line(&self, funcs: &[FuncId], line: u32) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = funcs
            .iter()
            .flat_map(|&f| self.nodes_of(f))
            .copied()
            .filter(|&n| self.g.weak_lines(n).any(|l| l == line))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn all_nodes(&self, funcs: &[FuncId]) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = funcs
            .iter()
            .flat_map(|&f| self.nodes_of(f))
            .copied()
            .collect();
        v.sort_unstable();
        v
    }

    fn entries(&self, funcs: &[FuncId]) -> Vec<NodeId> {
        funcs
            .iter()
            .filter_map(|&f| self.g.function(f).entry)
            .collect()
    }

    /// Every call site that may call `name`: call sites with a call edge
    /// to a function of that name, and call sites whose call note names an
    /// external callee `name`. Sorted.
    pub fn call_sites_of(&self, name: &str) -> Vec<NodeId> {
        let funcs = self.functions_named(name);
        let mut v: Vec<NodeId> = Vec::new();
        for &f in &funcs {
            if let Some(e) = self.g.function(f).entry {
                v.extend(
                    self.g
                        .preds(e)
                        .filter(|(_, k)| *k == crate::icfg::EdgeKind::Call)
                        .map(|(n, _)| n),
                );
            }
        }
        for k in name_keys(name) {
            if let Some(sites) = self.external_calls.get(&k) {
                v.extend(sites);
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    fn name_candidates(&self, fr: &SourceFrame) -> Vec<FuncId> {
        for name in [&fr.function, &fr.symbol].into_iter().flatten() {
            let v = self.functions_named(name);
            if !v.is_empty() {
                return v;
            }
        }
        Vec::new()
    }

    fn place(&self, fr: &SourceFrame) -> Place {
        if fr.runtime {
            return Place::Outside;
        }
        let by_name = self.name_candidates(fr);
        let files = fr
            .file
            .as_deref()
            .map(|p| self.files_matching(p))
            .unwrap_or_default();
        let in_files = |funcs: &[FuncId]| -> Vec<FuncId> {
            funcs
                .iter()
                .copied()
                .filter(|&f| self.g.function(f).file.is_some_and(|x| files.contains(&x)))
                .collect()
        };
        let unknown_or_outside = |maybe_program: bool| {
            if maybe_program && !fr.library {
                Place::Unknown
            } else {
                Place::Outside
            }
        };
        if !by_name.is_empty() {
            let narrowed = in_files(&by_name);
            let funcs = if narrowed.is_empty() {
                by_name
            } else {
                narrowed
            };
            return match fr.line {
                Some(line) => {
                    let nodes = self.nodes_on_line(&funcs, line);
                    if nodes.is_empty() {
                        Place::Function {
                            funcs,
                            missing_line: Some(line),
                        }
                    } else {
                        Place::Line { funcs, nodes }
                    }
                }
                None => Place::Function {
                    funcs,
                    missing_line: None,
                },
            };
        }
        let file_funcs = self.functions_in(&files);
        match (file_funcs.is_empty(), fr.line) {
            (false, Some(line)) => {
                let nodes = self.nodes_on_line(&file_funcs, line);
                if nodes.is_empty() {
                    unknown_or_outside(true)
                } else {
                    let mut funcs: Vec<FuncId> = nodes.iter().map(|&n| self.g.func_of(n)).collect();
                    funcs.sort_unstable();
                    funcs.dedup();
                    Place::Line { funcs, nodes }
                }
            }
            (false, None) => unknown_or_outside(true),
            // A name or a file was given, and neither is in the program.
            (true, _) if fr.function.is_some() || fr.symbol.is_some() || fr.file.is_some() => {
                Place::Outside
            }
            // `??`: no name, no file.
            (true, _) => unknown_or_outside(true),
        }
    }

    /// Narrows call-site candidates to those that may call one of `callees`
    /// (sites with a call edge to one of them, and sites with no known
    /// callee at all), then to those on `column`; each step only if it
    /// leaves some.
    fn narrow_calls(
        &self,
        sites: Vec<NodeId>,
        callees: &[FuncId],
        column: Option<u32>,
    ) -> Vec<NodeId> {
        let mut sites = sites;
        if !callees.is_empty() {
            let keep: Vec<NodeId> = sites
                .iter()
                .copied()
                .filter(|&s| {
                    let mut known = self.g.callees(s).peekable();
                    let unknown_callee = known.peek().is_none()
                        && self
                            .g
                            .call_note(s)
                            .is_none_or(|n| n.external_callees.is_empty());
                    unknown_callee || self.g.callees(s).any(|f| callees.contains(&f))
                })
                .collect();
            if !keep.is_empty() {
                sites = keep;
            }
        }
        if let Some(col) = column {
            let keep: Vec<NodeId> = sites
                .iter()
                .copied()
                .filter(|&s| self.g.column(s) == Some(col))
                .collect();
            if !keep.is_empty() {
                sites = keep;
            }
        }
        sites
    }

    fn call_sites(&self, nodes: &[NodeId]) -> Vec<NodeId> {
        nodes
            .iter()
            .copied()
            .filter(|&n| self.g.kind(n) == NodeKind::CallSite)
            .collect()
    }

    /// Call sites among `nodes` whose note names one of `names` (or an
    /// alias of it, see [`Locator::add_callee_alias`]) as an external
    /// callee.
    fn calling_external(&self, nodes: &[NodeId], names: &[String]) -> Vec<NodeId> {
        let sites: Vec<&Vec<NodeId>> = names
            .iter()
            .filter_map(|k| self.external_calls.get(k))
            .collect();
        nodes
            .iter()
            .copied()
            .filter(|n| sites.iter().any(|v| v.contains(n)))
            .collect()
    }

    /// Lets the external callee `name` of call notes also be found by
    /// `alias` (e.g. the demangled form of a mangled symbol), with all of
    /// the alias's [`name_keys`].
    pub fn add_callee_alias(&mut self, name: &str, alias: &str) {
        let Some(sites) = self.external_calls.get(name).cloned() else {
            return;
        };
        for k in name_keys(alias) {
            let v = self.external_calls.entry(k).or_default();
            for &s in &sites {
                if !v.contains(&s) {
                    v.push(s);
                }
            }
        }
    }

    /// The external callee names of the call notes.
    pub fn external_callee_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.external_calls.keys().map(String::as_str)
    }

    /// The crash nodes of the innermost program frame: on its line (or in
    /// its function) the calls of the library function it called, if any,
    /// narrowed by column; else every node there (on a line of borrowed
    /// code only, the nodes that have it as a weak line).
    fn crash_set(
        &self,
        place: &Place,
        frame: &SourceFrame,
        lib_names: &[String],
        warnings: &mut Vec<LocateWarning>,
    ) -> Option<NodeSet> {
        match place {
            Place::Line { nodes, .. } => {
                let calls = self.calling_external(nodes, lib_names);
                let calls = match frame.column {
                    Some(col) if calls.len() > 1 => {
                        let on: Vec<NodeId> = calls
                            .iter()
                            .copied()
                            .filter(|&s| self.g.column(s) == Some(col))
                            .collect();
                        if on.is_empty() {
                            calls
                        } else {
                            on
                        }
                    }
                    _ => calls,
                };
                NodeSet::new(if calls.is_empty() {
                    nodes.clone()
                } else {
                    calls
                })
            }
            Place::Function {
                funcs,
                missing_line,
            } => {
                // A line without a statement whose only code is borrowed
                // (the branch of `for (;;) {`): the crash stopped in that
                // code, unless the frame called a library function (the
                // pc is then after a call, which is never such code).
                if let (Some(line), true) = (missing_line, lib_names.is_empty()) {
                    let weak = self.nodes_weakly_on_line(funcs, *line);
                    if !weak.is_empty() {
                        return NodeSet::new(weak);
                    }
                }
                let all = self.all_nodes(funcs);
                let calls = self.calling_external(&all, lib_names);
                let set = if calls.is_empty() { all } else { calls };
                if let Some(line) = missing_line {
                    warnings.push(LocateWarning {
                        subject: frame.label.clone(),
                        problem: Problem::NoNodeOnLine(*line),
                        action: Action::CrashInFunction { count: set.len() },
                    });
                }
                NodeSet::new(set)
            }
            Place::Unknown => {
                warnings.push(LocateWarning {
                    subject: frame.label.clone(),
                    problem: Problem::Unplaceable,
                    action: Action::CrashUnconstrained,
                });
                None
            }
            Place::Outside => unreachable!("the crash frame is the first one in the program"),
        }
    }

    /// The call sites of a report frame in its caller's `frame`, calling
    /// `callee_funcs` (on the frame's line, else anywhere in its function,
    /// with a warning).
    fn frame_call(
        &self,
        caller: &Place,
        frame: &SourceFrame,
        callee_funcs: &[FuncId],
        warnings: &mut Vec<LocateWarning>,
    ) -> Option<NodeSet> {
        match caller {
            Place::Line { funcs, nodes } => {
                let sites = self.call_sites(nodes);
                if sites.is_empty() {
                    let all = self.narrow_calls(
                        self.call_sites(&self.all_nodes(funcs)),
                        callee_funcs,
                        None,
                    );
                    if !all.is_empty() {
                        warnings.push(LocateWarning {
                            subject: frame.label.clone(),
                            problem: Problem::NoCallSiteOnLine(frame.line.unwrap_or(0)),
                            action: Action::CallAnywhereInFunction { count: all.len() },
                        });
                    }
                    NodeSet::new(all)
                } else {
                    NodeSet::new(self.narrow_calls(sites, callee_funcs, frame.column))
                }
            }
            Place::Function {
                funcs,
                missing_line,
            } => {
                let all =
                    self.narrow_calls(self.call_sites(&self.all_nodes(funcs)), callee_funcs, None);
                if let (Some(line), false) = (missing_line, all.is_empty()) {
                    warnings.push(LocateWarning {
                        subject: frame.label.clone(),
                        problem: Problem::NoNodeOnLine(*line),
                        action: Action::CallAnywhereInFunction { count: all.len() },
                    });
                }
                NodeSet::new(all)
            }
            Place::Outside | Place::Unknown => None,
        }
    }

    /// Maps a crash stack, innermost frame first, to a report's `stack`
    /// and `crash` (see the module docs for the rules and weakenings).
    pub fn locate_stack(&self, frames: &[SourceFrame]) -> Located {
        let places: Vec<Place> = frames.iter().map(|f| self.place(f)).collect();
        let mut warnings = Vec::new();
        let mut report = Report::default();
        let Some(c) = places.iter().position(|p| *p != Place::Outside) else {
            if let Some(fr) = frames.iter().find(|f| !f.runtime) {
                warnings.push(LocateWarning {
                    subject: fr.label.clone(),
                    problem: Problem::NotInProgram,
                    action: Action::CrashUnconstrained,
                });
            }
            return Located { report, warnings };
        };
        // Library frames inner of the first program frame.
        let caller_label = frames[c].label.clone();
        for fr in frames[..c].iter().filter(|f| !f.runtime) {
            warnings.push(LocateWarning {
                subject: fr.label.clone(),
                problem: Problem::NotInProgram,
                action: Action::CrashAtCaller {
                    caller: caller_label.clone(),
                },
            });
        }
        // Names of the library function the program frame called.
        let lib_names = if c > 0 {
            library_names(&frames[c - 1])
        } else {
            Vec::new()
        };
        let crash_fr = &frames[c];
        report.crash = self.crash_set(&places[c], crash_fr, &lib_names, &mut warnings);
        // Frames: caller k+1 calls callee k, for k >= c. A report frame
        // that cannot be built is blamed on the callee when its entry is
        // missing, else on the caller.
        let mut stack_inner_first: Vec<Frame> = Vec::new();
        // The pair index k of every frame built, innermost first.
        let mut built: Vec<usize> = Vec::new();
        let mut blame: Vec<Option<(Problem, usize)>> = vec![None; frames.len()];
        let mut charge = |k: usize, p: Problem| {
            let e = blame[k].get_or_insert((p, 0));
            e.1 += 1;
        };
        for k in c..frames.len().saturating_sub(1) {
            let (callee, caller) = (&places[k], &places[k + 1]);
            let callee_funcs: &[FuncId] = match callee {
                Place::Line { funcs, .. } | Place::Function { funcs, .. } => funcs,
                _ => &[],
            };
            let entry = NodeSet::new(self.entries(callee_funcs));
            let call = self.frame_call(caller, &frames[k + 1], callee_funcs, &mut warnings);
            match (call, entry) {
                (Some(call), Some(entry)) => {
                    built.push(k);
                    stack_inner_first.push(Frame { call, entry });
                }
                (_, None) => charge(
                    k,
                    match callee {
                        Place::Outside => Problem::NotInProgram,
                        Place::Unknown => Problem::Unplaceable,
                        _ => Problem::NoEntryNode,
                    },
                ),
                (None, Some(_)) => charge(
                    k + 1,
                    match caller {
                        Place::Outside => Problem::NotInProgram,
                        Place::Unknown => Problem::Unplaceable,
                        _ => Problem::NoCallSiteOnLine(frames[k + 1].line.unwrap_or(0)),
                    },
                ),
            }
        }
        for (k, b) in blame.into_iter().enumerate() {
            if let Some((problem, count)) = b {
                if !frames[k].runtime {
                    warnings.push(LocateWarning {
                        subject: frames[k].label.clone(),
                        problem,
                        action: Action::FramesDropped { count },
                    });
                }
            }
        }
        stack_inner_first.reverse();
        report.stack = stack_inner_first;
        report.stack_gaps = stack_gaps(&built, c, frames.len());
        Located { report, warnings }
    }

    /// The `obsYes` element for "`sel` ran": one node, or "one of these".
    pub fn ran(&self, sel: &Selector) -> Result<NodeSet, LocateWarning> {
        let nodes = match sel {
            Selector::Function(name) => self.entries(&self.functions_named(name)),
            Selector::Line { file, line } => {
                self.nodes_on_line(&self.functions_in(&self.files_matching(file)), *line)
            }
            Selector::Call(name) => self.call_sites_of(name),
        };
        NodeSet::new(nodes).ok_or_else(|| self.no_match(sel))
    }

    /// The `obsNo` sets for "`sel` did not run": a function's entry (one
    /// set, "one of these" only if the name is ambiguous), one singleton
    /// per node of a line, one singleton per call site of a callee.
    pub fn not_ran(&self, sel: &Selector) -> Result<Vec<NodeSet>, LocateWarning> {
        let sets: Vec<NodeSet> = match sel {
            Selector::Function(name) => NodeSet::new(self.entries(&self.functions_named(name)))
                .into_iter()
                .collect(),
            Selector::Line { .. } | Selector::Call(_) => match self.ran(sel) {
                Ok(s) => s.nodes().iter().map(|&n| NodeSet::one(n)).collect(),
                Err(_) => Vec::new(),
            },
        };
        if sets.is_empty() {
            Err(self.no_match(sel))
        } else {
            Ok(sets)
        }
    }

    fn no_match(&self, sel: &Selector) -> LocateWarning {
        LocateWarning {
            subject: sel.to_string(),
            problem: Problem::NoMatch,
            action: Action::Dropped,
        }
    }
}

/// Where frames were dropped, as [`Report::stack_gaps`] positions (outer
/// first), given the pair index `k` of every frame built (innermost first;
/// pair `k` joins backtrace frames `k` and `k + 1`), the crash frame `c`
/// and the number of backtrace frames.
fn stack_gaps(built: &[usize], c: usize, n_frames: usize) -> Vec<usize> {
    let m = built.len();
    let pairs_end = n_frames.saturating_sub(1); // pairs c..pairs_end
    let mut gaps = Vec::new();
    match (built.first(), built.last()) {
        (Some(&first), Some(&last)) => {
            if last + 1 < pairs_end {
                gaps.push(0);
            }
            for p in (0..m - 1).rev() {
                if built[p + 1] > built[p] + 1 {
                    gaps.push(m - 1 - p);
                }
            }
            if first > c {
                gaps.push(m);
            }
        }
        _ => {
            if pairs_end > c {
                gaps.push(0);
            }
        }
    }
    gaps.sort_unstable();
    gaps.dedup();
    gaps
}

/// Names a library function may carry in call notes, given the name a
/// backtrace printed: the name itself (without parameters), and without
/// glibc / sanitizer prefixes (`__GI_raise` -> `raise`,
/// `__interceptor_strlen` -> `strlen`, `__strlen_avx2` -> `strlen`).
fn library_name_keys(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let base = strip_params(name.trim());
    if base.is_empty() {
        return out;
    }
    // Every prefix stripping, one after the other:
    // `__GI___assert_fail` -> `__assert_fail` -> `assert_fail`.
    let mut s = base;
    loop {
        let mut v = s;
        // glibc's IFUNC variants: `strlen_avx2`, `memcpy_evex_unaligned_erms`.
        for suffix in [
            "_avx2",
            "_avx",
            "_sse2",
            "_sse4",
            "_evex",
            "_erms",
            "_ssse3",
            "_unaligned",
        ] {
            if let Some(i) = v.find(suffix).filter(|&i| i > 0) {
                v = &v[..i];
            }
        }
        for k in [s, v] {
            if !k.is_empty() && !out.iter().any(|o| o == k) {
                out.push(k.to_string());
            }
        }
        match [
            "___interceptor_",
            "__interceptor_",
            "__GI_",
            "__libc_",
            "__",
        ]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        {
            Some(r) if !r.is_empty() => s = r,
            _ => break,
        }
    }
    out
}

/// The name keys of the library function a frame shows (its function and
/// symbol names).
fn library_names(fr: &SourceFrame) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for n in [&fr.function, &fr.symbol].into_iter().flatten() {
        for k in library_name_keys(n) {
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icfg::{IcfgBuilder, NodeSpec};

    /// `main` (m.c) calls `f` twice on line 10 (columns 3 and 12) and `g`
    /// on line 11; `f` (lib/f.c) has two nodes on line 20 and calls
    /// `strlen` (external) on line 21; `g` (m.c) has line 30; a static
    /// `h` exists in both m.c and other.c... names are unique in the
    /// builder, so `h` is one function here.
    struct G {
        g: Icfg,
        c10a: NodeId,
        c10b: NodeId,
        c11: NodeId,
        f20a: NodeId,
        f20b: NodeId,
        f21: NodeId,
        fe: NodeId,
        ge: NodeId,
        g30: NodeId,
    }

    fn graph() -> G {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f");
        let g = b.function("g");
        b.set_function_file(main, "/home/me/proj/src/m.c");
        b.set_function_file(f, "/home/me/proj/lib/f.c");
        b.set_function_file(g, "/home/me/proj/src/m.c");
        let add = |b: &mut IcfgBuilder, id: &str, kind: NodeKind, func: FuncId, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines,
            })
            .unwrap()
        };
        let me = add(&mut b, "me", NodeKind::Entry, main, &[9]);
        let c10a = add(&mut b, "c10a", NodeKind::CallSite, main, &[10]);
        let s10 = add(&mut b, "s10", NodeKind::Statement, main, &[10]);
        let c10b = add(&mut b, "c10b", NodeKind::CallSite, main, &[10]);
        let c11 = add(&mut b, "c11", NodeKind::CallSite, main, &[11]);
        let mx = add(&mut b, "mx", NodeKind::Exit, main, &[12]);
        let fe = add(&mut b, "fe", NodeKind::Entry, f, &[19]);
        let f20a = add(&mut b, "f20a", NodeKind::Statement, f, &[20]);
        let f20b = add(&mut b, "f20b", NodeKind::Statement, f, &[20]);
        let f21 = add(&mut b, "f21", NodeKind::CallSite, f, &[21]);
        let fx = add(&mut b, "fx", NodeKind::Exit, f, &[22]);
        let ge = add(&mut b, "ge", NodeKind::Entry, g, &[29]);
        let g30 = add(&mut b, "g30", NodeKind::Statement, g, &[30]);
        let gx = add(&mut b, "gx", NodeKind::Exit, g, &[31]);
        for (a, c) in [
            (me, c10a),
            (c10a, s10),
            (s10, c10b),
            (c10b, c11),
            (c11, mx),
            (fe, f20a),
            (f20a, f20b),
            (f20b, f21),
            (f21, fx),
            (ge, g30),
            (g30, gx),
        ] {
            b.add_flow_edge(a, c);
        }
        b.add_call_edge(c10a, fe);
        b.add_call_edge(c10b, fe);
        b.add_call_edge(c11, ge);
        b.set_column(c10a, 3);
        b.set_column(c10b, 12);
        b.add_external_callee(f21);
        b.add_external_callee_name(f21, "strlen");
        let g = b.build().unwrap();
        G {
            g,
            c10a,
            c10b,
            c11,
            f20a,
            f20b,
            f21,
            fe,
            ge,
            g30,
        }
    }

    fn frame(
        function: Option<&str>,
        file: Option<&str>,
        line: Option<u32>,
        column: Option<u32>,
    ) -> SourceFrame {
        SourceFrame {
            function: function.map(str::to_string),
            file: file.map(str::to_string),
            line,
            column,
            label: SourceFrame::describe("frame", function, file, line, column),
            ..SourceFrame::default()
        }
    }

    fn set(v: &[NodeId]) -> NodeSet {
        NodeSet::new(v.to_vec()).unwrap()
    }

    #[test]
    fn paths_match_by_component_suffix() {
        assert!(same_file("src/m.c", "/home/me/proj/src/m.c"));
        assert!(same_file("/home/me/proj/src/m.c", "m.c"));
        assert!(same_file("./src/./m.c", "/x/src/m.c"));
        assert!(same_file("../src/m.c", "/x/src/m.c"));
        assert!(same_file("a/b/../m.c", "a/m.c"));
        assert!(!same_file("rc/m.c", "/x/src/m.c"));
        assert!(!same_file("src/m.c", "/x/lib/m.c"));
        assert!(!same_file("", "m.c"));
        assert!(same_file("C:\\proj\\src\\m.c", "src/m.c"));
    }

    #[test]
    fn path_map_rewrites_the_longest_prefix_at_a_component_boundary() {
        let mut m = PathMap::new();
        m.push_spec("/build=/home/me/proj").unwrap();
        m.push_spec("/build/gen=/tmp/gen/").unwrap();
        assert_eq!(m.apply("/build/src/a.c"), "/home/me/proj/src/a.c");
        assert_eq!(m.apply("/build/gen/x.c"), "/tmp/gen/x.c");
        assert_eq!(m.apply("/builds/a.c"), "/builds/a.c");
        assert_eq!(m.apply("/build"), "/home/me/proj");
        assert!(m.push_spec("nothing").is_err());
        assert!(m.push_spec("=x").is_err());
        let mut strip = PathMap::new();
        strip.push_spec("/build/=").unwrap();
        assert_eq!(strip.apply("/build/src/a.c"), "src/a.c");
    }

    #[test]
    fn name_keys_strip_parameters_qualifiers_and_rust_hashes() {
        assert_eq!(
            name_keys("ns::f(int, char*) const"),
            vec!["ns::f(int, char*) const", "ns::f"]
        );
        assert_eq!(name_keys("f"), vec!["f"]);
        assert_eq!(
            name_keys("(anonymous namespace)::g"),
            vec!["(anonymous namespace)::g"]
        );
        assert_eq!(
            name_keys("S::operator()(int)"),
            vec!["S::operator()(int)", "S::operator()"]
        );
        assert_eq!(
            name_keys("app::main::h0123456789abcdef"),
            vec!["app::main::h0123456789abcdef", "app::main"]
        );
        assert!(name_keys("  ").is_empty());
        assert_eq!(library_name_keys("__GI_raise"), vec!["__GI_raise", "raise"]);
        assert_eq!(
            library_name_keys("__strlen_avx2"),
            vec!["__strlen_avx2", "__strlen", "strlen_avx2", "strlen"]
        );
        assert_eq!(
            library_name_keys("__interceptor_strlen"),
            vec!["__interceptor_strlen", "strlen"]
        );
        assert_eq!(
            library_name_keys("__GI___assert_fail"),
            vec!["__GI___assert_fail", "__assert_fail", "assert_fail"]
        );
    }

    #[test]
    fn a_simple_stack_maps_to_call_entry_frames_and_a_crash_line() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let frames = [
            frame(Some("g"), Some("src/m.c"), Some(30), None),
            frame(Some("main"), Some("m.c"), Some(11), None),
        ];
        let l = loc.locate_stack(&frames);
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
        assert_eq!(
            l.report.stack,
            vec![Frame {
                call: NodeSet::one(t.c11),
                entry: NodeSet::one(t.ge)
            }]
        );
    }

    #[test]
    fn several_nodes_on_the_crash_line_make_an_ambiguous_crash_set() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let l = loc.locate_stack(&[frame(Some("f"), Some("f.c"), Some(20), Some(7))]);
        assert_eq!(l.report.crash, Some(set(&[t.f20a, t.f20b])));
    }

    #[test]
    fn columns_pick_one_call_site_and_are_ignored_when_none_matches() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let at = |col| {
            loc.locate_stack(&[
                frame(Some("f"), None, Some(20), None),
                frame(Some("main"), Some("m.c"), Some(10), col),
            ])
            .report
            .stack[0]
                .call
                .clone()
        };
        assert_eq!(at(Some(12)), NodeSet::one(t.c10b));
        assert_eq!(at(Some(3)), NodeSet::one(t.c10a));
        assert_eq!(at(Some(99)), set(&[t.c10a, t.c10b]));
        assert_eq!(at(None), set(&[t.c10a, t.c10b]));
    }

    #[test]
    fn path_map_applies_before_matching() {
        let t = graph();
        // A relative path matches by suffix...
        let fr = frame(None, Some("src/m.c"), Some(30), None);
        let plain = Locator::new(&t.g, PathMap::new());
        assert_eq!(
            plain.locate_stack(std::slice::from_ref(&fr)).report.crash,
            Some(NodeSet::one(t.g30))
        );
        // ...but two absolute paths under different roots (the backtrace
        // was taken on a build machine under /build) need the map.
        let fr = frame(None, Some("/build/sources/m.c"), Some(30), None);
        let l = plain.locate_stack(std::slice::from_ref(&fr));
        assert_eq!(l.report.crash, None);
        let mut m = PathMap::new();
        m.push("/build/sources", "/home/me/proj/src");
        let mapped = Locator::new(&t.g, m);
        assert_eq!(
            mapped.locate_stack(&[fr]).report.crash,
            Some(NodeSet::one(t.g30))
        );
    }

    #[test]
    fn a_library_crash_is_placed_at_the_calling_site() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let mut strlen = frame(Some("__strlen_avx2"), None, None, None);
        strlen.library = true;
        let frames = [
            strlen,
            frame(Some("f"), Some("lib/f.c"), Some(21), None),
            frame(Some("main"), None, Some(10), Some(12)),
        ];
        let l = loc.locate_stack(&frames);
        assert_eq!(l.report.crash, Some(NodeSet::one(t.f21)));
        assert_eq!(
            l.report.stack,
            vec![Frame {
                call: NodeSet::one(t.c10b),
                entry: NodeSet::one(t.fe)
            }]
        );
        assert_eq!(l.warnings.len(), 1);
        assert_eq!(l.warnings[0].problem, Problem::NotInProgram);
        assert!(matches!(l.warnings[0].action, Action::CrashAtCaller { .. }));
        // A runtime frame (abort) is silent; without a note naming it the
        // crash is the whole line.
        let mut abort = frame(Some("abort"), None, None, None);
        abort.runtime = true;
        let l = loc.locate_stack(&[abort, frame(Some("f"), None, Some(20), None)]);
        assert!(l.warnings.is_empty());
        assert_eq!(l.report.crash, Some(set(&[t.f20a, t.f20b])));
    }

    #[test]
    fn an_unmatched_middle_frame_drops_the_frames_into_and_out_of_it() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        // main -> qsort (library) -> g: the calls into and out of qsort go.
        let frames = [
            frame(Some("g"), None, Some(30), None),
            frame(Some("qsort"), Some("msort.c"), Some(297), None),
            frame(Some("main"), Some("m.c"), Some(11), None),
        ];
        let l = loc.locate_stack(&frames);
        assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
        assert!(l.report.stack.is_empty());
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        assert_eq!(l.warnings[0].problem, Problem::NotInProgram);
        assert_eq!(l.warnings[0].action, Action::FramesDropped { count: 2 });
        assert!(
            l.warnings[0].to_string().contains("qsort"),
            "{}",
            l.warnings[0]
        );
        // The surviving frames stay a subsequence of the full stack.
        let full = loc.locate_stack(&[frames[0].clone(), frames[2].clone()]);
        assert_eq!(full.report.stack.len(), 1);
    }

    #[test]
    fn an_outer_unknown_frame_drops_one_frame_and_keeps_the_inner_ones() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let frames = [
            frame(Some("f"), None, Some(20), None),
            frame(Some("main"), None, Some(10), Some(3)),
            frame(Some("mystery_outer"), Some("nowhere.c"), Some(5), None),
        ];
        let l = loc.locate_stack(&frames);
        assert_eq!(
            l.report.stack,
            vec![Frame {
                call: NodeSet::one(t.c10a),
                entry: NodeSet::one(t.fe)
            }]
        );
        assert_eq!(l.warnings.len(), 1);
        assert_eq!(l.warnings[0].action, Action::FramesDropped { count: 1 });
    }

    #[test]
    fn a_line_without_nodes_widens_to_the_function() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let l = loc.locate_stack(&[frame(Some("g"), None, Some(99), None)]);
        assert_eq!(l.report.crash.as_ref().unwrap().nodes().len(), 3);
        assert_eq!(l.warnings[0].problem, Problem::NoNodeOnLine(99));
        // As a caller: any call site of main that may call f.
        let l = loc.locate_stack(&[
            frame(Some("f"), None, Some(20), None),
            frame(Some("main"), None, Some(99), None),
        ]);
        assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
        assert_eq!(
            l.warnings[0].action,
            Action::CallAnywhereInFunction { count: 2 }
        );
    }

    #[test]
    fn an_unplaceable_innermost_frame_leaves_the_crash_open() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        let l = loc.locate_stack(&[
            frame(None, None, None, None),
            frame(Some("main"), None, Some(11), None),
        ]);
        assert_eq!(l.report.crash, None);
        assert_eq!(l.warnings[0].action, Action::CrashUnconstrained);
        assert!(l.report.stack.is_empty());
        let l = loc.locate_stack(&[]);
        assert_eq!(l, Located::default());
    }

    #[test]
    fn callee_edges_narrow_the_call_sites() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        // Line 10 has two calls of f; frames naming g on line 10 would keep both
        // (no site calls g there), frames naming f keep the two f calls.
        let l = loc.locate_stack(&[
            frame(Some("f"), None, Some(20), None),
            frame(Some("main"), None, Some(10), None),
        ]);
        assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
        let l = loc.locate_stack(&[
            frame(Some("g"), None, Some(30), None),
            frame(Some("main"), None, Some(10), None),
        ]);
        assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
    }

    #[test]
    fn selectors() {
        let t = graph();
        let loc = Locator::new(&t.g, PathMap::new());
        assert_eq!(
            loc.ran(&Selector::Function("f".into())).unwrap(),
            NodeSet::one(t.fe)
        );
        assert_eq!(
            loc.ran(&Selector::Line {
                file: "f.c".into(),
                line: 20
            })
            .unwrap(),
            set(&[t.f20a, t.f20b])
        );
        assert_eq!(
            loc.ran(&Selector::Call("f".into())).unwrap(),
            set(&[t.c10a, t.c10b])
        );
        assert_eq!(
            loc.ran(&Selector::Call("strlen".into())).unwrap(),
            NodeSet::one(t.f21)
        );
        assert_eq!(
            loc.not_ran(&Selector::Function("g".into())).unwrap(),
            vec![NodeSet::one(t.ge)]
        );
        assert_eq!(
            loc.not_ran(&Selector::Line {
                file: "lib/f.c".into(),
                line: 20
            })
            .unwrap(),
            vec![NodeSet::one(t.f20a), NodeSet::one(t.f20b)]
        );
        assert_eq!(
            loc.not_ran(&Selector::Call("g".into())).unwrap(),
            vec![NodeSet::one(t.c11)]
        );
        let w = loc.ran(&Selector::Function("nope".into())).unwrap_err();
        assert_eq!(w.problem, Problem::NoMatch);
        assert!(loc
            .not_ran(&Selector::Line {
                file: "m.c".into(),
                line: 500
            })
            .is_err());
    }

    #[test]
    fn callee_aliases_narrow_a_library_crash() {
        let t = graph();
        let mut loc = Locator::new(&t.g, PathMap::new());
        let mut lib = frame(
            Some("core::panicking::panic_bounds_check"),
            None,
            None,
            None,
        );
        lib.runtime = true;
        let frames = [lib, frame(Some("f"), None, Some(21), None)];
        // Without an alias the note's `strlen` says nothing about this frame:
        // the whole line.
        assert_eq!(
            loc.locate_stack(&frames).report.crash,
            Some(NodeSet::one(t.f21))
        );
        let frames2 = [frames[0].clone(), frame(Some("f"), None, Some(20), None)];
        assert_eq!(
            loc.locate_stack(&frames2).report.crash,
            Some(set(&[t.f20a, t.f20b]))
        );
        loc.add_callee_alias(
            "strlen",
            "core::panicking::panic_bounds_check::h0123456789abcdef",
        );
        assert_eq!(
            loc.call_sites_of("core::panicking::panic_bounds_check"),
            vec![t.f21]
        );
        assert_eq!(loc.external_callee_names().count(), 3);
    }

    #[test]
    fn aliases_find_mangled_functions() {
        let mut b = IcfgBuilder::new();
        let f = b.function("_Z3fooi");
        let e = b
            .add_node(NodeSpec {
                ext_id: "e",
                kind: NodeKind::Entry,
                func: f,
                label: "",
                lines: &[1],
            })
            .unwrap();
        let g = b.build().unwrap();
        let mut loc = Locator::new(&g, PathMap::new());
        assert!(loc.functions_named("foo(int)").is_empty());
        loc.add_alias(f, "foo(int)");
        assert_eq!(loc.functions_named("foo(int)"), vec![f]);
        assert_eq!(loc.functions_named("foo"), vec![f]);
        assert_eq!(
            loc.ran(&Selector::Function("foo".into())).unwrap(),
            NodeSet::one(e)
        );
    }
}
