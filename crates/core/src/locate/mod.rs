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
//! A frame's location in another file than its function's (code inlined
//! from a header or another file, or a binary of another build) is never
//! taken as a line of the function's file: the innermost site of the
//! frame's inline chain in the function's file is used (the inline call's
//! line, with the nodes of inlined code that have it as a weak line), else
//! the whole function, with a warning. An inline chain whose calls the
//! graph has (a graph built before inlining) is restored as frames of
//! their own, from the outermost inwards, while the host's site calls the
//! inlined function.
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
//!
//! # Files
//!
//! * `mod.rs`: the [`Locator`] and its index (names, files, lines, call
//!   notes);
//! * `paths.rs`: path normalisation, suffix matching, [`PathMap`];
//! * `names.rs`: the keys a function name is looked up by ([`name_keys`]),
//!   library names of call notes;
//! * `stack.rs`: [`SourceFrame`] and crash stacks
//!   ([`Locator::locate_stack`]);
//! * `selectors.rs`: [`Selector`], [`Locator::ran`], [`Locator::not_ran`];
//! * `diagnostics.rs`: [`LocateWarning`] and [`Located`].

mod diagnostics;
mod names;
mod paths;
mod selectors;
mod stack;
#[cfg(test)]
mod tests;

pub use diagnostics::{Action, LocateWarning, Located, Problem};
pub use names::name_keys;
pub use paths::{path_components, same_file, PathMap, PathMapError};
pub use selectors::Selector;
pub(crate) use stack::TailChains;
pub use stack::{SourceFrame, SourceLoc};

use crate::icfg::{Icfg, NodeKind};
use crate::ids::{FileId, FuncId, NodeId};
use paths::suffix_match;
use std::collections::HashMap;

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
            // An entry node's weak lines are the lines of functions
            // inlined into it (the LLVM front-end): never a crash place.
            .filter(|&n| self.g.kind(n) != NodeKind::Entry)
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
}
