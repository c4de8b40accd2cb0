//! The failure report: what the field told us about one failing run,
//! independent of any file format.
//!
//! Every element of a report becomes one or more *constraints* on the
//! execution path. Constraints are numbered in **report order**, which is
//! the order used to name the culprit of an impossible report:
//!
//! 1. the crash (where the run stopped);
//! 2. the stack frames, outermost first;
//! 3. the `obsYes` traces, in input order;
//! 4. the `obsNo` sets, in input order;
//! 5. bursty traces, in input order;
//! 6. values of variables (last writes), in input order.

use crate::icfg::{EdgeKind, Icfg};
use crate::ids::NodeId;

/// A non-empty set of nodes meaning "one of these" (sorted, deduplicated).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NodeSet(Vec<NodeId>);

impl NodeSet {
    /// Builds a set; returns `None` if `nodes` is empty.
    pub fn new(mut nodes: Vec<NodeId>) -> Option<NodeSet> {
        if nodes.is_empty() {
            return None;
        }
        nodes.sort_unstable();
        nodes.dedup();
        Some(NodeSet(nodes))
    }
    /// A one-node set.
    pub fn one(n: NodeId) -> NodeSet {
        NodeSet(vec![n])
    }
    /// The members, sorted.
    pub fn nodes(&self) -> &[NodeId] {
        &self.0
    }
    /// The only member, if there is exactly one.
    pub fn single(&self) -> Option<NodeId> {
        match self.0.as_slice() {
            [n] => Some(*n),
            _ => None,
        }
    }
    /// Membership.
    pub fn contains(&self, n: NodeId) -> bool {
        self.0.binary_search(&n).is_ok()
    }
}

/// One frame still on the stack at the crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The call site(s) in the caller.
    pub call: NodeSet,
    /// The entry node(s) of the callee.
    pub entry: NodeSet,
}

/// An ordered observation: these statements were seen in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// `true` if the trace holds *every* occurrence of the traced nodes
    /// (a complete call trace), `false` if it is a subsequence.
    pub reliable: bool,
    /// The observed elements, in order; each is "one of these".
    pub entries: Vec<NodeSet>,
}

/// A bursty call trace: bursts of complete tracing (each burst holds every
/// occurrence of the traced nodes while it lasted, in order) separated by
/// untraced execution. The traced nodes are those the bursts mention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bursty {
    /// The bursts, in order; each a sequence of "one of these" elements.
    pub bursts: Vec<Vec<NodeSet>>,
}

/// What a variable's value, read from the crashed process's memory, says
/// about the path: the *last* node of `writes` on the path is not one of
/// `bad`; with `need`, some node of `writes` ran.
///
/// `writes` are the nodes that store to the variable (each with the net
/// effect of its instructions) and, for a local variable, its function's
/// entry (a new activation: any value). `bad` are the stores that cannot
/// have written the value found. `need` holds when the variable's initial
/// value differs from it, so that some compatible store must have run.
/// A regular constraint (a three-state automaton); UTL keeps only what a
/// vector expresses and lists the rest as weakened.
///
/// `tests` add what branches on the variable say: each is a branch node
/// `B` whose test loaded the variable with nothing that can write it
/// between the load and the branch, and `taken` the successor the test
/// sends the value found to. An occurrence of `B` after which no node of
/// `writes` runs saw that value, so the next node of the constraint's
/// alphabet (writes, branches, successors) after it is `taken` (or the
/// path ends). The automaton: the three write states times {ok, pending
/// on test `i`, dirty}; at each node, first a pending test is settled
/// (`taken`: ok, any other: dirty), then a write resets to ok, then a test
/// branch in ok becomes pending. Accepting: the write part accepts and
/// the test part is not dirty. At most one test per branch node (the
/// first one counts). Without tests it is exactly the three-state
/// automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastWrite {
    /// The nodes that write the variable (or start its activation).
    pub writes: NodeSet,
    /// The members of `writes` that cannot have written the value: sorted,
    /// deduplicated.
    pub bad: Vec<NodeId>,
    /// Whether some node of `writes` must have run.
    pub need: bool,
    /// What it says, for messages: ``status = 20 in `handle` ``.
    pub what: String,
    /// Branches on the variable and where its value sends them (empty:
    /// the plain last-write constraint).
    pub tests: Vec<BranchTest>,
}

/// A branch on a variable's value (see [`LastWrite`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchTest {
    /// The branch node (the last node of the block that tests).
    pub branch: NodeId,
    /// The first node of the successor the value found goes to.
    pub taken: NodeId,
    /// The first nodes of the branch's other successors.
    pub others: Vec<NodeId>,
}

impl LastWrite {
    /// Number of states of the test part: 1 without tests, else ok, one
    /// pending state per test, dirty.
    fn test_states(&self) -> usize {
        if self.tests.is_empty() {
            1
        } else {
            self.tests.len() + 2
        }
    }

    /// Number of states of the constraint's automaton ([`Self::step`]):
    /// the write part (0 none yet, 1 a good write last, 2 a bad one)
    /// times the test part.
    pub fn num_states(&self) -> usize {
        3 * self.test_states()
    }

    /// The nodes the automaton reads (every other node leaves its state
    /// unchanged): writes, test branches and their successors. Sorted,
    /// deduplicated.
    pub fn alphabet(&self) -> Vec<NodeId> {
        let mut a: Vec<NodeId> = self.writes.nodes().to_vec();
        for t in &self.tests {
            a.push(t.branch);
            a.push(t.taken);
            a.extend(&t.others);
        }
        a.sort_unstable();
        a.dedup();
        a
    }

    /// The automaton's transition on node `n` from state `s` (state 0 is
    /// initial; see the type's docs).
    pub fn step(&self, s: usize, n: NodeId) -> usize {
        let k = self.test_states();
        let (mut lw, mut ts) = (s / k, s % k);
        let dirty = k - 1;
        // Without tests `dirty` is 0 and no state is pending.
        if ts >= 1 && ts < dirty {
            let t = &self.tests[ts - 1];
            if n == t.taken {
                ts = 0;
            } else if self.in_alphabet(n) {
                ts = dirty;
            }
        }
        if self.writes.contains(n) {
            lw = if self.bad.binary_search(&n).is_ok() {
                2
            } else {
                1
            };
            ts = 0;
        }
        if ts == 0 {
            if let Some(i) = self.tests.iter().position(|t| t.branch == n) {
                ts = i + 1;
            }
        }
        lw * k + ts
    }

    /// Whether state `s` accepts.
    pub fn accepts(&self, s: usize) -> bool {
        let k = self.test_states();
        let (lw, ts) = (s / k, s % k);
        let tests_ok = self.tests.is_empty() || ts != k - 1;
        tests_ok && (lw == 1 || (lw == 0 && !self.need))
    }

    fn in_alphabet(&self, n: NodeId) -> bool {
        self.writes.contains(n)
            || self
                .tests
                .iter()
                .any(|t| t.branch == n || t.taken == n || t.others.contains(&n))
    }

    /// The members of `writes` that may be the last one.
    pub fn good(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.writes
            .nodes()
            .iter()
            .copied()
            .filter(|n| self.bad.binary_search(n).is_err())
    }

    /// The constraint without its branch tests, as a plain last write,
    /// when every test can be read from nodes alone: each of its `others`
    /// is entered only from its `branch` (its one predecessor in `g`, by a
    /// local edge; never a path's first node), the branch has no successor
    /// but `taken` and `others`, and no two tests share a branch. Then, on every path of `g`, "after
    /// a test that no write follows, the next node of the alphabet is the
    /// test's `taken`" ([`Self::holds`]) says exactly that no node of
    /// the `others` comes after the last write: each occurrence of one comes
    /// right after its branch, and each occurrence of a branch is followed by
    /// `taken` or one of the `others`. So the `others` that are not writes
    /// join the writes as bad ones ("the last of these is a good write").
    ///
    /// The automaton has 3 states instead of 3 x (tests + 2), and resets on
    /// every node it reads, which the context-sensitive exploration keeps
    /// lean (a callee's contexts leave out its entry state). `None` when some
    /// test is not of that shape (then the automaton of [`Self::step`]).
    pub fn tests_as_writes(&self, g: &Icfg) -> Option<LastWrite> {
        let w = self;
        if w.tests.is_empty() {
            return None;
        }
        let mut branches: Vec<NodeId> = w.tests.iter().map(|t| t.branch).collect();
        branches.sort_unstable();
        branches.dedup();
        if branches.len() != w.tests.len() {
            return None;
        }
        let mut writes: Vec<NodeId> = w.writes.nodes().to_vec();
        let mut bad = w.bad.clone();
        for t in &w.tests {
            let succ_ok = g
                .succs(t.branch)
                .all(|(s, _)| s == t.taken || t.others.contains(&s));
            if !succ_ok || t.others.contains(&t.taken) {
                return None;
            }
            for &o in &t.others {
                // Entered only from the branch, by a local edge, and never
                // the first node of a path (the program's start, or an
                // activation's entry for Local labels).
                let mut preds = g.preds(o);
                let only = preds.len() == 1
                    && preds.next() == Some((t.branch, EdgeKind::Local))
                    && o != g.start()
                    && g.function(g.func_of(o)).entry != Some(o);
                if !only {
                    return None;
                }
                if w.tests.iter().any(|u| u.taken == o) {
                    return None;
                }
                if !w.writes.contains(o) {
                    writes.push(o);
                    bad.push(o);
                }
            }
        }
        bad.sort_unstable();
        bad.dedup();
        Some(LastWrite {
            writes: NodeSet::new(writes)?,
            bad,
            need: w.need,
            what: w.what.clone(),
            tests: Vec::new(),
        })
    }

    /// Whether `path` satisfies the constraint, by its definition (not
    /// through [`Self::step`], so that tests can compare the two): the
    /// last write is good (or none ran and none is needed), and after
    /// every occurrence of a test's branch that no write follows, the
    /// next node of the alphabet, if any, is the test's `taken`.
    pub fn holds(&self, path: &[NodeId]) -> bool {
        let last = match path.iter().rev().find(|n| self.writes.contains(**n)) {
            Some(n) => self.bad.binary_search(n).is_err(),
            None => !self.need,
        };
        if !last {
            return false;
        }
        let alphabet = self.alphabet();
        let after_writes = path
            .iter()
            .rposition(|n| self.writes.contains(*n))
            .unwrap_or(0);
        for (i, &b) in path.iter().enumerate().skip(after_writes) {
            // A write in the branch's own node comes before its load.
            let Some(t) = self.tests.iter().find(|t| t.branch == b) else {
                continue;
            };
            let next = path[i + 1..]
                .iter()
                .find(|n| alphabet.binary_search(n).is_ok());
            if next.is_some_and(|&n| n != t.taken) {
                return false;
            }
        }
        true
    }
}

/// A failure report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Frames on the stack at the crash, outermost first.
    pub stack: Vec<Frame>,
    /// Where the run stopped: one of these nodes was the last executed.
    pub crash: Option<NodeSet>,
    /// Ordered observations.
    pub obs_yes: Vec<Trace>,
    /// Each set: at least one of these nodes never executed.
    pub obs_no: Vec<NodeSet>,
    /// Bursty traces.
    pub bursty: Vec<Bursty>,
    /// What variables' values say (see [`LastWrite`]).
    pub values: Vec<LastWrite>,
    /// Where the stack may have frames the report does not show: `i` in
    /// this list means unreported calls may be pending between frame
    /// `i - 1` (or the start, for 0) and frame `i` (or the crash, for
    /// `stack.len()`). A backtrace frame that could not be placed in the
    /// graph (library code calling back into the program, a function not
    /// found) leaves such a gap. The context-insensitive solvers read the
    /// stack as a subsequence anyway; the context-sensitive solver reads
    /// it as exactly the pending calls except at these gaps (and where
    /// consecutive frames do not chain). Sorted, deduplicated.
    pub stack_gaps: Vec<usize>,
    /// The members of `stack_gaps` left only by sibling calls: the
    /// unreported calls pending there can only be calls made at
    /// tail-marked call sites ([`Icfg::is_tail_call`]: a sibling call,
    /// compiled as a jump, took its caller's frame off the stack). A
    /// solver may read them as plain gaps (sound, less precise). Sorted.
    pub sibling_gaps: Vec<usize>,
    /// Nodes known to have run in *some* thread of the process, not
    /// necessarily on the crashing path: the set coverage flags of a
    /// multi-threaded process (a flag is process-wide). They are no
    /// constraint on the path: solvers ignore them, and
    /// [`crate::concurrency::mark_ran_somewhere`] makes them Yes after
    /// recovery (labels mean "ran in some thread of the process").
    /// Sorted, deduplicated.
    pub ran_somewhere: Vec<NodeId>,
    /// Stack residue (return addresses of returned calls left in a
    /// core's stack): each set is "one of these call sites ran on the
    /// crashing path". Solvers do not read it: [`crate::staged`] adds the
    /// sets as single-element `obsYes` traces in a stage of their own,
    /// dropped (and listed) if they contradict the rest of the report.
    pub residue: Vec<NodeSet>,
    /// Stack residue of a multi-threaded process: call sites whose return
    /// address the crashing thread's stack holds. That stack may have
    /// been another thread's before (a thread library reuses the stacks
    /// of finished threads), so each only ran in *some* thread: like
    /// [`Report::ran_somewhere`], no constraint on the path, Yes after
    /// recovery; but evidence, not a fact (a word can equal an after-call
    /// address by chance), so one the labels contradict is dropped
    /// ([`crate::concurrency::mark_ran_somewhere`]), never an impossible
    /// report. Sorted, deduplicated.
    pub residue_somewhere: Vec<NodeId>,
    /// Values of a recursive function's locals, each read from one
    /// activation's frame: a [`LastWrite`] that holds for that activation
    /// alone (its stores in nested activations are to other variables).
    /// Solvers do not read them; [`crate::local::frame_labels`] constrains
    /// the frame's Local labels with them.
    pub frame_values: Vec<FrameValue>,
    /// What the program's own branches say where a variable's value is
    /// not known (path sensitivity: the same unmodified variable tested
    /// twice goes the same way): each is "one of these cases holds"
    /// ([`Cases`]). Solvers do not read them; [`crate::staged`] recovers
    /// each case in a stage of its own and keeps what every case that can
    /// hold says.
    pub cases: Vec<Cases>,
}

/// A variable whose value is not known, split into the classes of values
/// its branch tests tell apart: on every execution, after the last write
/// of the variable, its value lies in one of them, so one of `each`
/// holds (each a [`LastWrite`] of that class: its tests' successors, and
/// the stores of constants of other classes as `bad`). What holds under
/// every case that can hold holds under the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cases {
    /// The variable, for messages.
    pub what: String,
    /// One constraint per class of values, at least two.
    pub each: Vec<LastWrite>,
}

/// A value of one activation's local (see [`Report::frame_values`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameValue {
    /// The activation, numbered as [`crate::local::FrameLabels::frame`]:
    /// 0 = the caller of the first stack frame, `k + 1` = the callee of
    /// stack frame `k`.
    pub frame: usize,
    /// The constraint, over the function's stores and its entry.
    pub value: LastWrite,
}

/// Where a constraint came from in the report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The crash location.
    Crash,
    /// Stack frame `i` (0 = outermost).
    Frame(usize),
    /// `obsYes[i]`.
    ObsYes(usize),
    /// `obsNo[i]`.
    ObsNo(usize),
    /// `bursty[i]`.
    Bursty(usize),
    /// `values[i]`.
    Value(usize),
    /// `residue[i]`.
    Residue(usize),
    /// `residue_somewhere[i]`.
    ResidueSomewhere(usize),
    /// The nodes Local labels proved ran, fed back to the solver
    /// ([`crate::staged::recover_lifted`]).
    Lift,
    /// The query being asked.
    Query,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Crash => write!(f, "crash"),
            Origin::Frame(i) => write!(f, "stack[{i}]"),
            Origin::ObsYes(i) => write!(f, "obsYes[{i}]"),
            Origin::ObsNo(i) => write!(f, "obsNo[{i}]"),
            Origin::Bursty(i) => write!(f, "bursty[{i}]"),
            Origin::Value(i) => write!(f, "value[{i}]"),
            Origin::Residue(i) => write!(f, "residue[{i}]"),
            Origin::ResidueSomewhere(i) => write!(f, "residue_somewhere[{i}]"),
            Origin::Lift => write!(f, "lift"),
            Origin::Query => write!(f, "query"),
        }
    }
}

impl Report {
    /// What constraint `origin` of this report says, in program terms
    /// (functions, files, lines), for messages such as the one of an
    /// impossible report; `None` for an origin the report does not have.
    pub fn describe(&self, g: &Icfg, origin: Origin) -> Option<String> {
        Some(match origin {
            Origin::Crash => format!("the crash at {}", places(g, self.crash.as_ref()?.nodes())),
            Origin::Frame(i) => {
                let f = self.stack.get(i)?;
                let callee = f
                    .entry
                    .nodes()
                    .iter()
                    .map(|&n| format!("`{}`", g.function(g.func_of(n)).name))
                    .collect::<Vec<_>>()
                    .join(" or ");
                format!(
                    "stack frame {i} from the outermost: the call of {callee} at {}",
                    places(g, f.call.nodes())
                )
            }
            Origin::ObsYes(i) => {
                let t = self.obs_yes.get(i)?;
                match t.entries.as_slice() {
                    [one] => format!("ran: {}", places(g, one.nodes())),
                    [first, ..] => format!(
                        "a trace of {} events (first: {})",
                        t.entries.len(),
                        places(g, first.nodes())
                    ),
                    [] => return None,
                }
            }
            Origin::ObsNo(i) => {
                let set = self.obs_no.get(i)?;
                let what = if set.nodes().len() == 1 {
                    "did not run"
                } else {
                    "did not run (at least one of them)"
                };
                format!("{what}: {}", places(g, set.nodes()))
            }
            Origin::Bursty(i) => format!("bursty trace {i}"),
            Origin::Value(i) => self.values.get(i)?.what.clone(),
            Origin::Residue(i) => format!(
                "a return address on the stack: ran: {}",
                places(g, self.residue.get(i)?.nodes())
            ),
            Origin::ResidueSomewhere(i) => format!(
                "a return address on a stack: ran: {}",
                places(g, &[*self.residue_somewhere.get(i)?])
            ),
            Origin::Lift | Origin::Query => return None,
        })
    }

    /// The report without `obsYes`, `obsNo` and values (grissom's
    /// `-stackonly`).
    pub fn stack_only(&self) -> Report {
        Report {
            stack: self.stack.clone(),
            crash: self.crash.clone(),
            stack_gaps: self.stack_gaps.clone(),
            sibling_gaps: self.sibling_gaps.clone(),
            ..Report::default()
        }
    }

    /// Every constraint origin, in report order.
    pub fn origins(&self) -> Vec<Origin> {
        let mut v =
            Vec::with_capacity(1 + self.stack.len() + self.obs_yes.len() + self.obs_no.len());
        if self.crash.is_some() {
            v.push(Origin::Crash);
        }
        v.extend((0..self.stack.len()).map(Origin::Frame));
        v.extend((0..self.obs_yes.len()).map(Origin::ObsYes));
        v.extend((0..self.obs_no.len()).map(Origin::ObsNo));
        v.extend((0..self.bursty.len()).map(Origin::Bursty));
        v.extend((0..self.values.len()).map(Origin::Value));
        v
    }

    /// The sub-report holding only the constraints in `keep`.
    ///
    /// Frames keep their order; dropping a frame drops its two elements
    /// from the stack vector, a weaker constraint for the context-insensitive
    /// solvers.
    pub fn restrict(&self, keep: &[Origin]) -> Report {
        // In report order whatever the order of `keep` (explanations pass
        // subsets in any order; the stack's order is meaningful).
        let mut keep = keep.to_vec();
        keep.sort_unstable();
        keep.dedup();
        let mut r = Report::default();
        // Original index of each kept frame, to mark the gaps left by
        // dropped ones.
        let mut kept: Vec<usize> = Vec::new();
        for o in keep {
            match o {
                Origin::Crash => r.crash = self.crash.clone(),
                Origin::Frame(i) => {
                    kept.push(i);
                    r.stack.push(self.stack[i].clone());
                }
                Origin::ObsYes(i) => r.obs_yes.push(self.obs_yes[i].clone()),
                Origin::ObsNo(i) => r.obs_no.push(self.obs_no[i].clone()),
                Origin::Bursty(i) => r.bursty.push(self.bursty[i].clone()),
                Origin::Value(i) => r.values.push(self.values[i].clone()),
                Origin::Residue(i) => r.residue.push(self.residue[i].clone()),
                // Neither constrains a path.
                Origin::ResidueSomewhere(_) | Origin::Lift | Origin::Query => {}
            }
        }
        r.stack_gaps = self.gaps_after_keeping(&kept);
        r
    }

    /// The gaps of the stack made of the frames `kept` (original indices,
    /// increasing): a gap wherever frames were dropped or there was one.
    fn gaps_after_keeping(&self, kept: &[usize]) -> Vec<usize> {
        let has_gap = |lo: usize, hi: usize| {
            // Dropped frames lo..hi, or a gap at some position lo..=hi.
            hi > lo || self.stack_gaps.iter().any(|&g| g >= lo && g <= hi)
        };
        let mut gaps = Vec::new();
        let mut prev = 0usize; // first original index not yet accounted for
        for (new_i, &orig) in kept.iter().enumerate() {
            if has_gap(prev, orig) {
                gaps.push(new_i);
            }
            prev = orig + 1;
        }
        if has_gap(prev, self.stack.len()) {
            gaps.push(kept.len());
        }
        gaps
    }

    /// Every node the report mentions (for validation and display).
    pub fn mentioned_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        let frames = self
            .stack
            .iter()
            .flat_map(|f| f.call.nodes().iter().chain(f.entry.nodes()));
        let crash = self.crash.iter().flat_map(|c| c.nodes());
        let yes = self
            .obs_yes
            .iter()
            .flat_map(|t| t.entries.iter().flat_map(|e| e.nodes()));
        let no = self.obs_no.iter().flat_map(|s| s.nodes());
        let bursty = self
            .bursty
            .iter()
            .flat_map(|b| b.bursts.iter().flatten().flat_map(|e| e.nodes()));
        let values = self
            .values
            .iter()
            .flat_map(|v| {
                v.writes.nodes().iter().chain(v.tests.iter().flat_map(|t| {
                    std::iter::once(&t.branch)
                        .chain(std::iter::once(&t.taken))
                        .chain(&t.others)
                }))
            })
            .chain(self.residue.iter().flat_map(|s| s.nodes()));
        frames
            .chain(crash)
            .chain(yes)
            .chain(no)
            .chain(bursty)
            .chain(values)
            .chain(&self.ran_somewhere)
            .chain(&self.residue_somewhere)
            .copied()
    }
}

/// Nodes in program terms: `` `f` (a.c:12, 14), `g` (b.c:3) ``, at most
/// three functions, each with its file's name and the nodes' lines.
fn places(g: &Icfg, nodes: &[NodeId]) -> String {
    let mut by_func: Vec<(crate::ids::FuncId, Vec<u32>)> = Vec::new();
    for &n in nodes {
        let f = g.func_of(n);
        let lines = g.lines(n);
        match by_func.iter_mut().find(|(x, _)| *x == f) {
            Some((_, v)) => v.extend(lines),
            None => by_func.push((f, lines.to_vec())),
        }
    }
    let mut out: Vec<String> = by_func
        .iter_mut()
        .take(3)
        .map(|(f, lines)| {
            lines.sort_unstable();
            lines.dedup();
            let func = g.function(*f);
            let file = func
                .file
                .map(|x| g.file_path(x).rsplit('/').next().unwrap_or("").to_string());
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            match (file, lines.is_empty()) {
                (Some(file), false) => format!("`{}` ({file}:{})", func.name, lines.join(", ")),
                (Some(file), true) => format!("`{}` ({file})", func.name),
                (None, false) => format!("`{}` (line {})", func.name, lines.join(", ")),
                (None, true) => format!("`{}`", func.name),
            }
        })
        .collect();
    if by_func.len() > 3 {
        out.push(format!("and {} more functions", by_func.len() - 3));
    }
    out.join(", ")
}
