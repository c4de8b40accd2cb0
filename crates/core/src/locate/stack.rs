//! Crash stacks: frames to the report's `stack` and `crash`.

use super::names::library_name_keys;
use super::{Action, LocateWarning, Located, Locator, Problem};
use crate::icfg::{Icfg, NodeKind};
use crate::ids::{FileId, FuncId, NodeId};
use crate::report::{Frame, NodeSet, Report};
use std::collections::{HashMap, HashSet};

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
    /// Other places of the same activation, innermost first, when the
    /// frame's location is in inlined code: the call sites of the inline
    /// chain, ending with the physical frame's own location (DWARF inline
    /// records at the pc, or a debugger's frames without an address). A
    /// location in another file than the function's is not a line of the
    /// function: one of these is used instead (see [`Locator::locate_stack`]).
    pub sites: Vec<SourceLoc>,
    /// The call this frame was making (its return address's call
    /// instruction, read from the binary) is a direct call of the function
    /// of the frame inside it: no sibling call hid a frame between them,
    /// and the graph's tail-call markers are not consulted for this pair
    /// (see [`Locator::locate_stack`]). False when unknown (backtraces).
    pub direct_call: bool,
    /// The frames inlined into this one, innermost first, each with its
    /// own function and location (the first one's is this frame's
    /// `file`/`line`/`column`). A graph built before inlining has some of
    /// them as functions called from the frame's code: those are placed
    /// as frames of their own.
    pub inlined: Vec<SourceFrame>,
}

/// A source location: file, line, column, each when known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceLoc {
    /// The source file, as the input wrote it.
    pub file: Option<String>,
    /// The 1-based source line.
    pub line: Option<u32>,
    /// The 1-based source column.
    pub column: Option<u32>,
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

/// Where a frame is in the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    /// Nodes of `funcs` on the frame's line.
    Line {
        funcs: Vec<FuncId>,
        nodes: Vec<NodeId>,
    },
    /// Somewhere in `funcs` (the line is unknown, has no node, or is in
    /// another file).
    Function {
        funcs: Vec<FuncId>,
        missing: Missing,
    },
    /// Outside the program.
    Outside,
    /// Maybe program code, but where is unknown.
    Unknown,
}

/// Why a frame found in a function is not on a line of it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Missing {
    /// The frame gives no line.
    NoLine,
    /// The function has no node on the frame's line.
    Line(u32),
    /// The frame's location is in another file than its function's (code
    /// inlined from there, or a binary of another build), and no site of
    /// its inline chain is in the function's file.
    OtherFile(String),
}

impl Missing {
    /// The warning's problem, if the frame gave a location that was not
    /// used.
    fn problem(&self) -> Option<Problem> {
        match self {
            Missing::NoLine => None,
            Missing::Line(l) => Some(Problem::NoNodeOnLine(*l)),
            Missing::OtherFile(f) => Some(Problem::OtherFile(f.clone())),
        }
    }
}

/// The last path component (a file's name).
fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

impl Locator<'_> {
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
            if narrowed.is_empty() {
                if let Some(path) = fr.file.as_deref() {
                    if self.in_other_file(&by_name, path, &files) {
                        return self.place_at_sites(fr, by_name, path);
                    }
                }
            }
            let funcs = if narrowed.is_empty() {
                by_name
            } else {
                narrowed
            };
            return match fr.line {
                Some(line) => {
                    let nodes = self.by_inline_chain(fr, self.nodes_on_line(&funcs, line));
                    if nodes.is_empty() {
                        Place::Function {
                            funcs,
                            missing: Missing::Line(line),
                        }
                    } else {
                        Place::Line { funcs, nodes }
                    }
                }
                None => Place::Function {
                    funcs,
                    missing: Missing::NoLine,
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

    /// Of `nodes` (on the crash frame's line), those that may hold the
    /// instruction at the crash's column (a core's pc, in the binary's
    /// line table): the nodes with an instruction at `column`, and those
    /// whose instructions' columns are not known
    /// ([`Icfg::instruction_columns`]); every node when none fits, or
    /// without a column.
    fn at_column(&self, nodes: &[NodeId], column: Option<u32>) -> Vec<NodeId> {
        let Some(col) = column.filter(|&c| c != 0) else {
            return nodes.to_vec();
        };
        let mut known = false;
        let fit: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&n| {
                let mut cols = self.g.instruction_columns(n).peekable();
                if cols.peek().is_none() {
                    return true;
                }
                let has = cols.any(|c| c == col);
                known |= has;
                has
            })
            .collect();
        if known {
            fit
        } else {
            nodes.to_vec()
        }
    }

    /// Of `nodes` (on the frame's line), those whose inline chain is the
    /// frame's. Where the optimiser inlined a function several times
    /// into one, each copy of a statement is its own node, and the LLVM
    /// front-end gives each the call sites of its inline chain as lines
    /// or weak lines; the frame's `sites` (its inline chain, from DWARF
    /// or a debugger's inlined frames) name the copy that was running.
    /// Only the sites in the file of the nodes' function are compared (the
    /// front-end keeps only those), only in functions with inlined code
    /// ([`Icfg::inlined_lines`]: a graph built before inlining has no
    /// inline chains, and a weak line of another kind must not narrow),
    /// and when no node has all of them (another build) every node is
    /// kept.
    fn by_inline_chain(&self, fr: &SourceFrame, nodes: Vec<NodeId>) -> Vec<NodeId> {
        if fr.sites.is_empty() || nodes.len() < 2 {
            return nodes;
        }
        let inlined = |n: NodeId| self.g.inlined_lines(self.g.func_of(n)).next().is_some();
        if !nodes.iter().all(|&n| inlined(n)) {
            return nodes;
        }
        let has = |n: NodeId, l: u32| {
            self.g.lines(n).contains(&l) || self.g.weak_lines(n).any(|w| w == l)
        };
        let kept: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&n| {
                let Some(file) = self.g.file_of(n) else {
                    return true;
                };
                fr.sites.iter().all(|site| {
                    let (Some(f), Some(l)) = (site.file.as_deref(), site.line) else {
                        return true;
                    };
                    Some(l) == fr.line || !self.files_matching(f).contains(&file) || has(n, l)
                })
            })
            .collect();
        if kept.is_empty() {
            nodes
        } else {
            kept
        }
    }

    /// Whether `path` (a frame's file, which matches the graph files
    /// `files`) is another file than every function of `funcs`: it names
    /// a file of the graph that is not theirs, or a file of another name.
    /// A path that differs only in its folders is taken as the same file
    /// (a build tree moved), as before.
    fn in_other_file(&self, funcs: &[FuncId], path: &str, files: &[FileId]) -> bool {
        funcs.iter().all(|&f| match self.g.function(f).file {
            None => false,
            Some(x) if !files.is_empty() => !files.contains(&x),
            Some(x) => base_name(self.g.file_path(x)) != base_name(path),
        })
    }

    /// A frame of `funcs` whose location `path` is in another file: the
    /// innermost of its [sites](SourceFrame::sites) in a function's file
    /// (the call of the inlined code there: the nodes on that line, and
    /// the nodes of inlined code that have it as a weak line), else
    /// anywhere in the functions. Never a line of another file.
    fn place_at_sites(&self, fr: &SourceFrame, funcs: Vec<FuncId>, path: &str) -> Place {
        for site in &fr.sites {
            let (Some(file), Some(line)) = (site.file.as_deref(), site.line) else {
                continue;
            };
            let files = self.files_matching(file);
            if self.in_other_file(&funcs, file, &files) {
                continue;
            }
            // The nodes of the site's line, and those whose code is all
            // borrowed from it (a node with lines of its own would claim
            // they ran: see `crash_set`).
            let mut nodes = self.nodes_on_line(&funcs, line);
            nodes.extend(
                self.nodes_weakly_on_line(&funcs, line)
                    .into_iter()
                    .filter(|&n| self.g.lines(n).is_empty()),
            );
            nodes.sort_unstable();
            nodes.dedup();
            if !nodes.is_empty() {
                return Place::Line { funcs, nodes };
            }
        }
        Place::Function {
            funcs,
            missing: Missing::OtherFile(path.to_string()),
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
                    self.unknown_callee(s) || self.g.callees(s).any(|f| callees.contains(&f))
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

    /// Whether call site `s` may call one of `callees` (a call edge to
    /// one, or no known callee at all).
    fn may_call(&self, s: NodeId, callees: &[FuncId]) -> bool {
        self.unknown_callee(s) || self.g.callees(s).any(|f| callees.contains(&f))
    }

    /// A call site with no known callee, in the program or not: it may
    /// call any function.
    fn unknown_callee(&self, s: NodeId) -> bool {
        self.g.callees(s).next().is_none()
            && self
                .g
                .call_note(s)
                .is_none_or(|n| n.external_callees.is_empty())
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
                    self.at_column(nodes, frame.column)
                } else {
                    calls
                })
            }
            Place::Function { funcs, missing } => {
                // A line without a statement whose only code is borrowed
                // (the branch of `for (;;) {`): the crash stopped in that
                // code, unless the frame called a library function (the
                // pc is then after a call, which is never such code).
                if let (Missing::Line(line), true) = (missing, lib_names.is_empty()) {
                    // Only nodes whose code is all borrowed: a node with
                    // lines of its own (optimised code that hoisted the
                    // line's load into another statement's block) would
                    // claim those lines ran, and the crash may come
                    // before them.
                    let weak: Vec<NodeId> = self
                        .nodes_weakly_on_line(funcs, *line)
                        .into_iter()
                        .filter(|&n| self.g.lines(n).is_empty())
                        .collect();
                    if !weak.is_empty() {
                        return NodeSet::new(weak);
                    }
                }
                let all = self.all_nodes(funcs);
                let calls = self.calling_external(&all, lib_names);
                let set = if calls.is_empty() { all } else { calls };
                if let Some(problem) = missing.problem() {
                    warnings.push(LocateWarning {
                        subject: frame.label.clone(),
                        problem,
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
                } else if !callee_funcs.is_empty()
                    && !sites.iter().any(|&s| self.may_call(s, callee_funcs))
                {
                    // No call on the line may call the frame above: the
                    // call is elsewhere in the function (the optimiser
                    // merged call sites into one whose line is another's,
                    // or 0, and the debugger named the row before it).
                    let all: Vec<NodeId> = self
                        .call_sites(&self.all_nodes(funcs))
                        .into_iter()
                        .filter(|&s| self.may_call(s, callee_funcs))
                        .collect();
                    if all.is_empty() {
                        return NodeSet::new(self.narrow_calls(sites, callee_funcs, frame.column));
                    }
                    warnings.push(LocateWarning {
                        subject: frame.label.clone(),
                        problem: Problem::NoCallOfCalleeOnLine(frame.line.unwrap_or(0)),
                        action: Action::CallAnywhereInFunction { count: all.len() },
                    });
                    NodeSet::new(all)
                } else {
                    NodeSet::new(self.narrow_calls(sites, callee_funcs, frame.column))
                }
            }
            Place::Function { funcs, missing } => {
                let all =
                    self.narrow_calls(self.call_sites(&self.all_nodes(funcs)), callee_funcs, None);
                if let (Some(problem), false) = (missing.problem(), all.is_empty()) {
                    warnings.push(LocateWarning {
                        subject: frame.label.clone(),
                        problem,
                        action: Action::CallAnywhereInFunction { count: all.len() },
                    });
                }
                NodeSet::new(all)
            }
            Place::Outside | Place::Unknown => None,
        }
    }

    /// The call-site nodes a call instruction at `frame` (its function,
    /// file, line and column, from the DWARF line table at the call) may
    /// be, for stack residue: on the frame's line only (never the whole
    /// function), and only those that may call what the instruction calls:
    /// `Program(name)`, a site with a call edge to a function of that
    /// name; `Library(name)`, a site whose note names it as an external
    /// callee; `None` (an indirect call), any call site. Then only those on
    /// the frame's column, when it has one. Empty when nothing fits: a call the
    /// graph does not show (a library call the compiler made up, such as
    /// `memcpy` for a struct copy) must not be taken for another.
    pub fn residue_call_sites(
        &self,
        frame: &SourceFrame,
        program: Option<&str>,
        library: Option<&str>,
    ) -> Vec<NodeId> {
        let Place::Line { nodes, .. } = self.place(frame) else {
            return Vec::new();
        };
        let sites = self.call_sites(&nodes);
        let sites: Vec<NodeId> = match (program, library) {
            (Some(name), _) => {
                let fs = self.functions_named(name);
                sites
                    .into_iter()
                    .filter(|&s| self.g.callees(s).any(|f| fs.contains(&f)))
                    .collect()
            }
            (None, Some(name)) => self.calling_external(&sites, &super::names::name_keys(name)),
            (None, None) => sites,
        };
        // The machine call has its IR call's location: a column that no
        // site has means the call is not one of them.
        match frame.column {
            Some(col) => sites
                .into_iter()
                .filter(|&s| self.g.column(s) == Some(col))
                .collect(),
            None => sites,
        }
    }

    /// The frames with each inline chain restored where the graph has the
    /// inlined call: a graph built before inlining (an `-O0` graph, a
    /// binary optimised from it) calls the inlined function from the
    /// line of its inline site, and the activation is a frame of its own
    /// there (merged into its host, the crash or call would be placed
    /// before the call and the inlined function's code taken as not run).
    /// From the outermost inlined frame inwards, a frame is restored while
    /// its host's site has a call site with a call edge to it. Returns
    /// the frames and, for each, its position in `frames` when it is a
    /// physical frame (`None` for a restored one).
    fn restore_inlined(&self, frames: &[SourceFrame]) -> (Vec<SourceFrame>, Vec<Option<usize>>) {
        let mut out = Vec::with_capacity(frames.len());
        let mut origin = Vec::with_capacity(frames.len());
        for (i, f) in frames.iter().enumerate() {
            let k = f.inlined.len();
            if k == 0 || f.sites.len() != k || f.runtime {
                out.push(f.clone());
                origin.push(Some(i));
                continue;
            }
            // `host`: the frame whose code the inlined frame `j` is
            // called from, at location `sites[j]`.
            let mut host_funcs = self.name_candidates(f);
            let mut kept = k; // c_kept..c_{k-1} are restored
            for j in (0..k).rev() {
                let site = &f.sites[j];
                let callee = self.name_candidates(&f.inlined[j]);
                if callee.is_empty() || host_funcs.is_empty() {
                    break;
                }
                let Some(line) = site.line else { break };
                let nodes = self.nodes_on_line(&host_funcs, line);
                let calls = self
                    .call_sites(&nodes)
                    .into_iter()
                    .any(|s| self.g.callees(s).any(|c| callee.contains(&c)));
                if !calls {
                    break;
                }
                kept = j;
                host_funcs = callee;
            }
            if kept == k {
                out.push(f.clone());
                origin.push(Some(i));
                continue;
            }
            // Innermost: the innermost restored frame, with what stays
            // inlined in it.
            let inner = &f.inlined[kept];
            out.push(SourceFrame {
                function: inner.function.clone(),
                symbol: inner.symbol.clone(),
                file: f.file.clone(),
                line: f.line,
                column: f.column,
                runtime: false,
                library: f.library,
                label: inner.label.clone(),
                sites: f.sites[..kept].to_vec(),
                inlined: f.inlined[..kept].to_vec(),
                // The physical call instruction is the innermost code's.
                direct_call: f.direct_call,
            });
            origin.push(None);
            // The calls between restored frames were inlined: no sibling
            // call can hide a frame there.
            for j in kept + 1..k {
                let c = &f.inlined[j];
                let at = &f.sites[j - 1];
                out.push(SourceFrame {
                    file: at.file.clone(),
                    line: at.line,
                    column: at.column,
                    sites: Vec::new(),
                    inlined: Vec::new(),
                    library: f.library,
                    runtime: false,
                    direct_call: true,
                    ..c.clone()
                });
                origin.push(None);
            }
            let own = &f.sites[k - 1];
            out.push(SourceFrame {
                file: own.file.clone(),
                line: own.line,
                column: own.column,
                sites: Vec::new(),
                inlined: Vec::new(),
                direct_call: true,
                ..f.clone()
            });
            origin.push(Some(i));
        }
        (out, origin)
    }

    /// The report frame of pair `k` of `frames` (caller `k + 1` calls
    /// callee `k`; `places` are theirs), and whether the caller's call may
    /// have entered the callee through sibling calls (`tails`). Err with
    /// the frame to blame and why when it cannot be built: the callee when
    /// its entry is missing, else the caller.
    fn pair_frame(
        &self,
        k: usize,
        frames: &[SourceFrame],
        places: &[Place],
        tails: &TailChains,
        warnings: &mut Vec<LocateWarning>,
    ) -> Result<(Frame, bool), (usize, Problem)> {
        let (callee, caller) = (&places[k], &places[k + 1]);
        let callee_funcs: &[FuncId] = match callee {
            Place::Line { funcs, .. } | Place::Function { funcs, .. } => funcs,
            _ => &[],
        };
        // Functions whose sibling calls may have entered the callee:
        // the caller's pending call may be a call of one of them
        // (unless the binary shows a direct call of the callee).
        let starts = if frames[k + 1].direct_call {
            Vec::new()
        } else {
            tails.starts(callee_funcs)
        };
        let mut wanted = callee_funcs.to_vec();
        wanted.extend(starts.iter().copied());
        let call = self.frame_call(caller, &frames[k + 1], &wanted, warnings);
        let via_sibling = call.as_ref().is_some_and(|c| {
            !starts.is_empty()
                && c.nodes().iter().any(|&s| {
                    self.unknown_callee(s) || self.g.callees(s).any(|f| starts.contains(&f))
                })
        });
        let entered: &[FuncId] = if via_sibling { &wanted } else { callee_funcs };
        let entry = NodeSet::new(self.entries(entered));
        match (call, entry) {
            (Some(call), Some(entry)) => Ok((Frame { call, entry }, via_sibling)),
            (_, None) => Err((
                k,
                match callee {
                    Place::Outside => Problem::NotInProgram,
                    Place::Unknown => Problem::Unplaceable,
                    _ => Problem::NoEntryNode,
                },
            )),
            (None, Some(_)) => Err((
                k + 1,
                match caller {
                    Place::Outside => Problem::NotInProgram,
                    Place::Unknown => Problem::Unplaceable,
                    _ => Problem::NoCallSiteOnLine(frames[k + 1].line.unwrap_or(0)),
                },
            )),
        }
    }

    /// Maps a crash stack, innermost frame first, to a report's `stack`
    /// and `crash` (see the module docs for the rules and weakenings).
    pub fn locate_stack(&self, frames: &[SourceFrame]) -> Located {
        let (expanded, origin) = self.restore_inlined(frames);
        let frames = &expanded[..];
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
            return Located {
                report,
                warnings,
                callee_frames: Vec::new(),
            };
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
        // Pairs k whose caller's call may have entered its callee through
        // sibling calls (frames hidden between the two).
        let mut hidden: Vec<usize> = Vec::new();
        let tails = TailChains::new(self.g);
        let mut blame: Vec<Option<(Problem, usize)>> = vec![None; frames.len()];
        let mut charge = |k: usize, p: Problem| {
            let e = blame[k].get_or_insert((p, 0));
            e.1 += 1;
        };
        for k in c..frames.len().saturating_sub(1) {
            match self.pair_frame(k, frames, &places, &tails, &mut warnings) {
                Ok((frame, via_sibling)) => {
                    if via_sibling {
                        hidden.push(k);
                    }
                    built.push(k);
                    stack_inner_first.push(frame);
                }
                Err((at, problem)) => charge(at, problem),
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
        report.stack_gaps = stack_gaps(&built, &hidden, c, frames.len());
        // The gaps that only sibling calls left (no frame dropped there).
        let dropped = stack_gaps(&built, &[], c, frames.len());
        report.sibling_gaps = report
            .stack_gaps
            .iter()
            .copied()
            .filter(|g| !dropped.contains(g))
            .collect();
        let callee_frames = built.iter().rev().map(|&k| origin[k]).collect();
        Located {
            report,
            warnings,
            callee_frames,
        }
    }
}

/// Chains of sibling calls: which functions may, through one or more
/// tail-marked calls ([`Icfg::tail_calls`]), enter a given function with
/// their own frame gone from the stack.
pub(crate) struct TailChains {
    /// For each function, the functions owning a tail call of it.
    tail_callers: HashMap<FuncId, Vec<FuncId>>,
    /// Functions with a tail call of an unknown callee (it may be any
    /// function).
    wild: Vec<FuncId>,
}

impl TailChains {
    pub(crate) fn new(g: &Icfg) -> Self {
        let mut tail_callers: HashMap<FuncId, Vec<FuncId>> = HashMap::new();
        let mut wild = Vec::new();
        for &t in g.tail_calls() {
            let owner = g.func_of(t);
            let mut known = false;
            for f in g.callees(t) {
                known = true;
                tail_callers.entry(f).or_default().push(owner);
            }
            if !known && g.call_note(t).is_none_or(|n| n.external_callees.is_empty()) {
                wild.push(owner);
            }
        }
        TailChains { tail_callers, wild }
    }

    /// The functions from which a chain of one or more tail-marked calls
    /// may reach one of `targets` (sorted; empty for a graph without
    /// tail calls, such as any `-O0` build's).
    pub(crate) fn starts(&self, targets: &[FuncId]) -> Vec<FuncId> {
        let mut seen: HashSet<FuncId> = HashSet::new();
        let mut work: Vec<FuncId> = targets.to_vec();
        work.extend(self.wild.iter().copied());
        seen.extend(self.wild.iter().copied());
        while let Some(f) = work.pop() {
            for &h in self.tail_callers.get(&f).into_iter().flatten() {
                if seen.insert(h) {
                    work.push(h);
                }
            }
        }
        let mut v: Vec<FuncId> = seen.into_iter().collect();
        v.sort_unstable();
        v
    }
}

/// Where frames were dropped, as [`Report::stack_gaps`] positions (outer
/// first), given the pair index `k` of every frame built (innermost first;
/// pair `k` joins backtrace frames `k` and `k + 1`), the crash frame `c`
/// and the number of backtrace frames; a frame of a pair in `hidden` is
/// followed by a gap too (sibling calls may have hidden frames between
/// its call and the next frame or the crash).
fn stack_gaps(built: &[usize], hidden: &[usize], c: usize, n_frames: usize) -> Vec<usize> {
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
            for (p, k) in built.iter().enumerate() {
                if hidden.contains(k) {
                    gaps.push(m - p);
                }
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
