//! Local labels: for each frame on the crash stack, what ran *in that
//! activation* before its pending call (or, for the crash frame, before
//! the crash) — CSIclipse's Local view beside the Global one.
//!
//! **Meaning.** For frame `k` of function `F`: Yes = on every execution
//! consistent with the report, this activation of `F` ran the node between
//! its entry and the call still pending (or the crash); No = on none.
//! Loops: Yes means "at least one iteration of this activation ran it".
//! Recursion: nodes of `F` run by a nested activation of `F` (a call that
//! returned) do not count for this one, and each frame of `F` on the stack
//! has labels of its own.
//!
//! **Method.** The activation's own nodes form a path of `F`'s local graph
//! from its entry to the pending point: `F`'s flow edges, each call site to
//! its return sites (the callee's activation is summarised), and each call
//! site (every node, when signal handlers exist) to `F`'s non-local jump
//! targets (a `longjmp` from below lands there). Nodes the global labels
//! say never ran are removed (they ran in no activation). A node on no
//! such path is No; a node whose removal disconnects the entry from the
//! pending point is Yes. The pending point is the next frame's call (or
//! the crash); where the report has a stack gap after the frame
//! (unreported calls *may* be pending: none, or some), it is that or any
//! call of `F`. The values of the activation's own local
//! variables (the report's [`LastWrite`]s over the function's nodes and
//! entry) constrain it too: one at a time, the walk carries the value's
//! automaton and ends in an accepting state. Sound, not exact: the rest
//! of the report constrains the activation only through the global No
//! labels.
//!
//! **Values of a recursive function's locals** ([`Report::frame_values`],
//! each read from one frame) constrain that frame alone. A local whose
//! address never escapes is written only by its own activation's stores:
//! a nested activation of `F` stores to its own copy. The walk summarises
//! every call, so the stores on it are exactly this activation's, from
//! its entry (the variable's start: any value) to the pending call, which
//! stores nothing (a call node holds only the call; the store of its
//! result is in the return site's node, not yet run). So "the last store
//! on the walk can leave the value read from this frame" holds on the
//! activation's real path, and the walk with the value's automaton still
//! contains that path: Yes and No stay sound. The same value says nothing
//! about the other activations of `F`, nor about the whole run (a nested
//! activation's last store may be any of them), so solvers never read
//! these (`vars::constraints` keeps them out of [`Report::values`]).
//!
//! **Lifting.** A node Local-Yes in some frame ran on the real path, since
//! the walk's only context is the global No labels, themselves sound: so
//! it is Global-Yes too. [`crate::staged::recover_lifted`] feeds such
//! nodes back to the solver as observations.

use crate::icfg::{EdgeKind, Icfg, NodeKind};
use crate::ids::{FuncId, NodeId};
use crate::report::{LastWrite, Report};
use crate::solver::Label;

/// The Local labels of one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameLabels {
    /// The activation: 0 = the outermost function (the caller of the
    /// report's first frame), `k + 1` = the callee of stack frame `k`;
    /// the crash frame is `stack.len()`.
    pub frame: usize,
    /// Its function.
    pub function: FuncId,
    /// Where the activation stopped: the pending call site(s), or the
    /// crash node(s).
    pub stop: Vec<NodeId>,
    /// Every node of the function with its Local label.
    pub labels: Vec<(NodeId, Label)>,
}

/// Most words of [`must_pass`]'s sets (8 bytes each; one set of the
/// function's nodes per product state): 32 MiB.
const MAX_MUST_WORDS: usize = 1 << 22;

/// Whether [`must_pass`] over `n` nodes and `q` automaton states stays
/// within [`MAX_MUST_WORDS`].
fn must_pass_fits(n: usize, q: usize) -> bool {
    n.saturating_mul(q).saturating_mul(n.div_ceil(64)) <= MAX_MUST_WORDS
}

/// The Yes test with a value's automaton: per node, whether it lies on
/// every path of product states (node × automaton state, `q` per node)
/// from a member of `starts` to a member of `targets`, over the states of
/// `live` (those on some such path; `pred` the predecessors of each, all
/// live for a live state; `succ` the successors, `pred` reversed). Per
/// live state, the nodes on every path to it from a start: the greatest
/// fixpoint of "its own node, and those of every predecessor" (a start:
/// its own node alone, the empty path), a distributive problem, so the
/// fixpoint is the meet over all paths
/// (Kildall 1973); the answer is their intersection over the targets.
/// Round-robin in reverse postorder from the starts until nothing
/// changes, a state met again only when a predecessor's set changed
/// since its last meet (chaotic iteration from the top reaches the same
/// greatest fixpoint in any order). In state order (about program order)
/// Lua's 1,403-node `luaV_execute` took 5 rounds, each meeting every
/// state, for each of its values' walks, which made the Local labels a
/// fifth of its core's analysis. The reference is one search per node
/// without it (`labels_with`'s `slow`).
fn must_pass(
    n: usize,
    q: usize,
    live: &[bool],
    (starts, targets): (&[usize], &[usize]),
    pred: &crate::graph::Csr,
    succ: &crate::graph::Csr,
    open: Option<&[bool]>,
) -> Vec<bool> {
    // One bit per node asked about: those of `open` (all without it) on
    // one path, since a node on every path is on that one (in
    // `luaV_execute`'s walks, 1,380 of whose 1,403 nodes were open: a few
    // dozen). The meet is per bit, so the others are left out, not
    // answered.
    let Some(path) = one_path(n, q, live, starts, succ, targets) else {
        return vec![false; n];
    };
    let mut bit = vec![u32::MAX; n];
    let mut asked = 0u32;
    for (i, b) in bit.iter_mut().enumerate() {
        if path[i] && open.is_none_or(|o| o[i]) {
            *b = asked;
            asked += 1;
        }
    }
    if asked == 0 {
        return vec![false; n];
    }
    let w = (asked as usize).div_ceil(64);
    let own = |x: usize| bit[x / q];
    // Compact positions of the live states.
    let mut at = vec![u32::MAX; live.len()];
    let order: Vec<usize> = (0..live.len()).filter(|&x| live[x]).collect();
    for (k, &x) in order.iter().enumerate() {
        at[x] = k as u32;
    }
    let mut sets = vec![!0u64; order.len() * w];
    let mut start = vec![false; order.len()];
    for &x in starts.iter().filter(|&&x| live[x]) {
        let k = at[x] as usize;
        start[k] = true;
        let set = &mut sets[k * w..(k + 1) * w];
        set.fill(0);
        if let Some(b) = Some(own(x)).filter(|&b| b != u32::MAX) {
            set[b as usize / 64] |= 1 << (b % 64);
        }
    }
    // Reverse postorder of the live states from the starts (then any
    // live state no start reaches, which cannot happen for live states
    // but costs nothing to keep).
    let mut rpo: Vec<u32> = Vec::with_capacity(order.len());
    let mut seen = vec![false; order.len()];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for &x in starts.iter().filter(|&&x| live[x]) {
        let k = at[x];
        if seen[k as usize] {
            continue;
        }
        seen[k as usize] = true;
        stack.push((k, 0));
        while let Some(&mut (k, ref mut i)) = stack.last_mut() {
            let out = succ.succs(order[k as usize] as u32);
            if let Some(&y) = out.get(*i) {
                *i += 1;
                let j = at[y as usize];
                if j != u32::MAX && !seen[j as usize] {
                    seen[j as usize] = true;
                    stack.push((j, 0));
                }
            } else {
                rpo.push(k);
                stack.pop();
            }
        }
    }
    rpo.reverse();
    rpo.extend((0..order.len() as u32).filter(|&k| !seen[k as usize]));
    // When each state's set last changed, and when it was last met (0:
    // never): a state is met again only after a predecessor changed.
    let (mut tick, mut changed_at, mut met_at) =
        (1u64, vec![0u64; order.len()], vec![0u64; order.len()]);
    let mut acc = vec![0u64; w];
    loop {
        let mut changed = false;
        for &k in &rpo {
            let k = k as usize;
            if start[k] {
                continue;
            }
            let x = order[k];
            let preds = pred.succs(x as u32);
            if met_at[k] != 0
                && preds
                    .iter()
                    .all(|&p| changed_at[at[p as usize] as usize] <= met_at[k])
            {
                continue;
            }
            met_at[k] = tick;
            acc.fill(!0);
            for &p in preds {
                let j = at[p as usize] as usize;
                for (a, b) in acc.iter_mut().zip(&sets[j * w..(j + 1) * w]) {
                    *a &= b;
                }
            }
            if let Some(b) = Some(own(x)).filter(|&b| b != u32::MAX) {
                acc[b as usize / 64] |= 1 << (b % 64);
            }
            let set = &mut sets[k * w..(k + 1) * w];
            if *set != acc[..] {
                set.copy_from_slice(&acc);
                tick += 1;
                changed_at[k] = tick;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    acc.fill(!0);
    for &x in targets.iter().filter(|&&x| live[x]) {
        let k = at[x] as usize;
        for (a, b) in acc.iter_mut().zip(&sets[k * w..(k + 1) * w]) {
            *a &= b;
        }
    }
    bit.iter()
        .map(|&b| b != u32::MAX && acc[b as usize / 64] >> (b % 64) & 1 == 1)
        .collect()
}

/// The nodes of one path of live product states (`q` per node) from a
/// member of `starts` to a member of `targets`, the first found breadth
/// first; `None` if there is none.
fn one_path(
    n: usize,
    q: usize,
    live: &[bool],
    starts: &[usize],
    succ: &crate::graph::Csr,
    targets: &[usize],
) -> Option<Vec<bool>> {
    const UNSEEN: u32 = u32::MAX;
    const START: u32 = u32::MAX - 1;
    let mut target = vec![false; live.len()];
    for &x in targets {
        target[x] = live[x];
    }
    let mut parent = vec![UNSEEN; live.len()];
    let mut queue = std::collections::VecDeque::new();
    for &x in starts.iter().filter(|&&x| live[x]) {
        if parent[x] == UNSEEN {
            parent[x] = START;
            queue.push_back(x);
        }
    }
    while let Some(x) = queue.pop_front() {
        if target[x] {
            let mut on = vec![false; n];
            let mut y = x;
            loop {
                on[y / q] = true;
                match parent[y] {
                    START => return Some(on),
                    p => y = p as usize,
                }
            }
        }
        for &y in succ.succs(x as u32) {
            let y = y as usize;
            if live[y] && parent[y] == UNSEEN {
                parent[y] = x as u32;
                queue.push_back(y);
            }
        }
    }
    None
}

/// Local labels of every frame of `report`'s stack whose function is
/// known (a frame with entries in several functions is skipped), given
/// sound global labels.
pub fn frame_labels(g: &Icfg, report: &Report, global: &[Label]) -> Vec<FrameLabels> {
    frame_labels_by(g, report, global, &|_, _| None)
}

/// [`frame_labels`] under `global`, given those computed before under
/// `prior_global` (`prior`): a frame whose function's nodes the two
/// label alike as No (the only labels a frame's walk reads, see
/// [`LocalGraph::new`]) keeps its earlier labels. The analysis asks for
/// the frames' labels twice, for the lift and after it, and on Lua's
/// plain core the second time cost as much as the first (its values'
/// walks of `luaV_execute`), for the same answer.
pub fn frame_labels_reusing(
    g: &Icfg,
    report: &Report,
    global: &[Label],
    prior_global: &[Label],
    prior: &[FrameLabels],
) -> Vec<FrameLabels> {
    frame_labels_by(g, report, global, &|f, frame| {
        let alike = g
            .function_nodes(f)
            .iter()
            .all(|v| (global[v.index()] == Label::No) == (prior_global[v.index()] == Label::No));
        if !alike {
            return None;
        }
        prior
            .iter()
            .find(|p| p.frame == frame && p.function == f)
            .cloned()
    })
}

/// [`frame_labels`], a frame's labels taken from `known` (given its
/// function and frame number) where it has them.
fn frame_labels_by(
    g: &Icfg,
    report: &Report,
    global: &[Label],
    known: &dyn Fn(FuncId, usize) -> Option<FrameLabels>,
) -> Vec<FrameLabels> {
    let mut out = Vec::new();
    let frames = frame_specs(g, report);
    let async_code = !g.async_functions().is_empty();
    for (k, entries, stop, gap) in frames {
        let Some(&e0) = entries.first() else { continue };
        let f = g.func_of(e0);
        if entries.iter().any(|&e| g.func_of(e) != f) {
            continue;
        }
        let frame = if k == usize::MAX { 0 } else { k + 1 };
        if let Some(known) = known(f, frame) {
            out.push(known);
            continue;
        }
        let nodes: Vec<NodeId> = g.function_nodes(f).to_vec();
        // With a gap, unreported calls *may* be pending: none, or some.
        let stop = pending_stop(g, f, &nodes, stop, gap);
        let local = LocalGraph::new(g, f, &nodes, global, async_code);
        let mut labels = local.labels(&entries, &stop, None);
        // The values of this activation's locals (`own_local`), and the
        // values read from this frame of a recursive F.
        let own = report
            .frame_values
            .iter()
            .filter(|v| v.frame == frame)
            .map(|v| &v.value);
        for v in report.values.iter().chain(own) {
            if !own_local(g, v, f) || entries.len() != 1 {
                continue;
            }
            // Only the Maybe labels can gain (a Yes needs a live node,
            // and the value's live nodes are among those without it).
            let open: Vec<bool> = labels.iter().map(|&(_, l)| l == Label::Maybe).collect();
            if !open.contains(&true) {
                // Nothing left to gain (bzip2's crash frame, 900 nodes
                // all decided: 25 walks, 3.7 ms).
                break;
            }
            let plain = v.tests_as_writes(g);
            let v = plain.as_ref().unwrap_or(v);
            let mut more = local.labels_of(&entries, &stop, v, &open);
            if !v.tests.is_empty() && !must_pass_fits(nodes.len(), v.num_states()) {
                // Too large for the Yes test with the branch tests: the
                // value without them (a weaker constraint, as sound) still
                // gets it.
                let bare = LastWrite {
                    tests: Vec::new(),
                    ..v.clone()
                };
                let plain = local.labels_of(&entries, &stop, &bare, &open);
                for (a, b) in more.iter_mut().zip(&plain) {
                    if a.1 == Label::Maybe {
                        a.1 = b.1;
                    }
                }
            }
            if more.iter().all(|&(_, l)| l == Label::Maybe) {
                continue; // not explained: nothing learned
            }
            let clash = labels
                .iter()
                .zip(&more)
                .any(|(a, b)| a.1 != Label::Maybe && b.1 != Label::Maybe && a.1 != b.1);
            if clash {
                continue; // the value contradicts: memory the graph cannot explain
            }
            for (a, b) in labels.iter_mut().zip(&more) {
                if a.1 == Label::Maybe {
                    a.1 = b.1;
                }
            }
        }
        out.push(FrameLabels {
            frame,
            function: f,
            stop,
            labels,
        });
    }
    out
}

/// Whether `v` is the value of a local of `f`: its writes start with
/// `f`'s entry and it reads only `f`'s nodes (see `vars::constraints`).
fn own_local(g: &Icfg, v: &LastWrite, f: FuncId) -> bool {
    g.function(f).entry.is_some_and(|e| v.writes.contains(e))
        && v.alphabet().iter().all(|&w| g.func_of(w) == f)
}

/// For each of `report`'s values, whether [`frame_labels`] walks it with
/// a frame of its function (a local of a function on the stack, in a
/// frame it places in one function) *and* that function may have run
/// other activations ([`runs_once`] does not hold). Such a value
/// constrains only the pending activation, whose Local labels it refines;
/// the Local-Yes nodes are fed back by the lift
/// ([`crate::staged::recover_lifted`]), and a Global No from it needs
/// every other activation ruled out as well. So a stage of its own
/// decides little beyond that. On the harness's 28 bzip2 and Lua cores
/// (plain, function-flag, block-flag, `-O2`), leaving them to their frames
/// cost 8 of the 3,872 labels values and residue decide, and took bzip2's
/// plain cores from 0.22-0.32 s to 0.13-0.19 s (whole process; 17 of the
/// 32 value stages of one were `BZ2_decompress`'s locals, and none of
/// them decided a node).
pub fn walked_locals(g: &Icfg, report: &Report) -> Vec<bool> {
    let walked: Vec<FuncId> = frame_specs(g, report)
        .into_iter()
        .filter(|(_, entries, _, _)| entries.len() == 1)
        .map(|(_, entries, _, _)| g.func_of(entries[0]))
        .collect();
    let mut once = RunsOnce::new(g);
    report
        .values
        .iter()
        .map(|v| {
            walked
                .iter()
                .any(|&f| own_local(g, v, f) && !once.runs_once(f))
        })
        .collect()
}

/// Which functions run at most once in any execution the graph allows
/// (memoised): the start function when no call reaches it; a function
/// called from exactly one call site that is on no cycle of its
/// function's local graph (the
/// Local walk's: flow edges, call to return sites, calls to the
/// function's non-local jump targets), in a function that runs at most
/// once. Not an asynchronous function (a handler may run any number of
/// times), nor one no call reaches.
pub(crate) struct RunsOnce<'g> {
    g: &'g Icfg,
    /// Per function: `None` not asked yet, else the answer (`false`
    /// while being computed, which makes call-graph cycles `false`).
    memo: Vec<Option<bool>>,
    none_ran_no: Vec<Label>,
}

impl<'g> RunsOnce<'g> {
    pub(crate) fn new(g: &'g Icfg) -> Self {
        RunsOnce {
            g,
            memo: vec![None; g.functions().len()],
            none_ran_no: vec![Label::Maybe; g.num_nodes()],
        }
    }

    pub(crate) fn runs_once(&mut self, f: FuncId) -> bool {
        if let Some(known) = self.memo[f.index()] {
            return known;
        }
        self.memo[f.index()] = Some(false);
        let g = self.g;
        let start = g.func_of(g.start()) == f;
        let known = if g.async_functions().contains(&f) {
            false
        } else {
            let sites: Vec<NodeId> = g
                .function(f)
                .entry
                .map(|e| {
                    g.preds(e)
                        .filter(|&(_, k)| k == EdgeKind::Call)
                        .map(|(p, _)| p)
                        .collect()
                })
                .unwrap_or_default();
            match sites[..] {
                // The start runs once unless something calls it.
                [] => start,
                [site] if !start => self.runs_once(g.func_of(site)) && !self.on_cycle(site),
                _ => false,
            }
        };
        self.memo[f.index()] = Some(known);
        known
    }

    /// Whether `site` can run twice in one activation of its function.
    fn on_cycle(&self, site: NodeId) -> bool {
        let g = self.g;
        let local = LocalGraph::of_function(g, g.func_of(site), &self.none_ran_no);
        let Some(i) = local.nodes.iter().position(|&v| v == site) else {
            return true;
        };
        local.reach(&local.succ[i], None)[i]
    }
}

/// What evidence that a node ran implies, without a recovery
/// (`crate::staged`'s marked residue and lift): the node and its
/// activation dominators ran ([`activation_dominators`]); a call among
/// them whose activation ended (it ran before the node, or it is the node
/// and no pending call can be it) ran the nodes every completed
/// activation of its callee runs ([`Implied::completed`]); and in a
/// function that runs once ([`RunsOnce`]), the nodes that are neither
/// before nor after the node on any path of its activation did not run.
pub(crate) struct Implied<'g> {
    g: &'g Icfg,
    once: RunsOnce<'g>,
    /// The graph has non-local jumps (a `Local` edge across functions):
    /// a callee may leave at any call.
    jumps: bool,
    async_code: bool,
    /// Per function, its completed activations' nodes (memoised).
    completed: std::collections::HashMap<FuncId, Vec<NodeId>>,
    /// Per function, its local graph and dominators (memoised; `None`:
    /// no entry).
    dominance: std::collections::HashMap<FuncId, Option<Dominance>>,
}

impl<'g> Implied<'g> {
    pub(crate) fn new(g: &'g Icfg) -> Self {
        let jumps = g.nodes().any(|v| {
            g.succs(v)
                .any(|(w, k)| k == EdgeKind::Local && g.func_of(w) != g.func_of(v))
        });
        Implied {
            g,
            once: RunsOnce::new(g),
            jumps,
            async_code: !g.async_functions().is_empty(),
            completed: Default::default(),
            dominance: Default::default(),
        }
    }

    /// The [`Dominance`] of `f` under `global` (memoised: an `Implied`
    /// is asked under one set of labels, as `completed` assumes too).
    fn dominance(&mut self, global: &[Label], f: FuncId) -> Option<&Dominance> {
        let (g, async_code) = (self.g, self.async_code);
        self.dominance
            .entry(f)
            .or_insert_with(|| Dominance::new(g, f, global, async_code))
            .as_ref()
    }

    /// The graph.
    pub(crate) fn graph(&self) -> &'g Icfg {
        self.g
    }

    /// [`RunsOnce::runs_once`].
    pub(crate) fn runs_once(&mut self, f: FuncId) -> bool {
        self.once.runs_once(f)
    }

    /// What `n` having run implies, given sound `global` labels: (nodes
    /// that ran, nodes that did not). `ended`: `n`'s own callee's
    /// activation ended (no pending call of the report can be `n`). An
    /// error (from [`activation_dominators`]) when the labels say `n`
    /// cannot have run.
    pub(crate) fn ran(
        &mut self,
        global: &[Label],
        n: NodeId,
        ended: bool,
    ) -> Result<(Vec<NodeId>, Vec<NodeId>), NodeId> {
        let g = self.g;
        // As `activation_dominators(g, global, &[n])`, the function's
        // dominators built once.
        let mut yes = vec![n];
        if let Some(dom) = self.dominance(global, g.func_of(n)) {
            dom.dominators(n, &mut yes)?;
        }
        yes.sort_unstable();
        yes.dedup();
        let calls: Vec<NodeId> = yes
            .iter()
            .copied()
            .filter(|&c| g.kind(c) == NodeKind::CallSite && (c != n || ended))
            .collect();
        for c in calls {
            // The callee surely ran: the call has one callee and no way
            // past it but through it (no fall-through edge, which a call
            // that may run unknown code instead keeps).
            let callees: Vec<FuncId> = g.callees(c).collect();
            let only_through = g.succs(c).all(|(_, k)| k == EdgeKind::Call);
            if let ([callee], true) = (&callees[..], only_through) {
                yes.extend(self.completed(global, *callee));
            }
        }
        yes.sort_unstable();
        yes.dedup();
        let f = g.func_of(n);
        let no = if self.once.runs_once(f) {
            self.apart(global, n)
        } else {
            Vec::new()
        };
        Ok((yes, no))
    }

    /// The nodes every completed activation of `f` runs: on every path of
    /// the Local walk's graph from its entry to an end (its exit, a node
    /// without successors; with non-local jumps every call site too, a
    /// callee may jump out; with asynchronous code as well every node).
    /// Without nodes that `global` says never ran.
    fn completed(&mut self, global: &[Label], f: FuncId) -> Vec<NodeId> {
        if let Some(c) = self.completed.get(&f) {
            return c.clone();
        }
        let g = self.g;
        let out = (|| {
            let entry = g.function(f).entry?;
            let nodes: Vec<NodeId> = g.function_nodes(f).to_vec();
            let local = LocalGraph::new(g, f, &nodes, global, self.async_code);
            let ends: Vec<NodeId> = nodes
                .iter()
                .enumerate()
                .filter(|&(i, &v)| {
                    local.succ[i].is_empty()
                        || g.kind(v) == NodeKind::Exit
                        || (self.jumps && (self.async_code || g.kind(v) == NodeKind::CallSite))
                })
                .map(|(_, &v)| v)
                .collect();
            let labels = local.labels(&[entry], &ends, None);
            Some(
                labels
                    .into_iter()
                    .filter(|&(_, l)| l == Label::Yes)
                    .map(|(v, _)| v)
                    .collect::<Vec<NodeId>>(),
            )
        })()
        .unwrap_or_default();
        self.completed.insert(f, out.clone());
        out
    }

    /// The nodes of `n`'s function that are neither before nor after `n`
    /// on any path of the Local walk's graph (without nodes that never
    /// ran): none of them can run in the activation that ran `n`.
    fn apart(&mut self, global: &[Label], n: NodeId) -> Vec<NodeId> {
        let f = self.g.func_of(n);
        self.dominance(global, f)
            .map(|d| d.apart(n))
            .unwrap_or_default()
    }
}

/// A frame of the walk: its activation (`usize::MAX` for the outermost
/// function), its entries, its stop set, and whether a gap follows it.
type FrameSpec = (usize, Vec<NodeId>, Option<Vec<NodeId>>, bool);

/// The frames of `report`'s stack to label: each stack frame's entry with
/// the next frame's call or, for the innermost one, the crash; and first
/// the outermost function's, below the first frame's call, unless a gap
/// is there.
fn frame_specs(g: &Icfg, report: &Report) -> Vec<FrameSpec> {
    let crash = report.crash.as_ref().map(|c| c.nodes().to_vec());
    // Frames are (entry set, stop set): each stack frame's entry with the
    // next frame's call, or the crash for the innermost one. The crash
    // frame's entry is the last frame's callee when the crash is in it.
    let n = report.stack.len();
    let mut frames: Vec<FrameSpec> = Vec::new();
    for k in 0..n {
        // The frame's stop set, and whether a gap follows the frame (then
        // the activation may also have stopped at any of its calls).
        let stop = if k + 1 < n {
            Some(report.stack[k + 1].call.nodes().to_vec())
        } else {
            crash.clone()
        };
        let gap = report.stack_gaps.contains(&(k + 1));
        frames.push((k, report.stack[k].entry.nodes().to_vec(), stop, gap));
    }
    // The outermost function (main, below the first frame's call).
    if let Some(first) = report.stack.first() {
        let f = g.func_of(first.call.nodes()[0]);
        if let Some(e) = g.function(f).entry {
            if !report.stack_gaps.contains(&0) {
                frames.insert(
                    0,
                    (
                        usize::MAX,
                        vec![e],
                        Some(first.call.nodes().to_vec()),
                        false,
                    ),
                );
            }
        }
    }
    frames
}

/// The pending point in `f` (whose nodes are `nodes`) of a frame that
/// stopped at `stop`: the stop set's members in `f`; with a gap after the
/// frame, or members outside `f`, also any call site of `f`.
fn pending_stop(
    g: &Icfg,
    f: FuncId,
    nodes: &[NodeId],
    stop: Option<Vec<NodeId>>,
    gap: bool,
) -> Vec<NodeId> {
    match stop {
        Some(s) if !gap && s.iter().all(|&v| g.func_of(v) == f) => s,
        s => {
            let mut all: Vec<NodeId> = s
                .unwrap_or_default()
                .into_iter()
                .filter(|&v| g.func_of(v) == f)
                .chain(
                    nodes
                        .iter()
                        .copied()
                        .filter(|&v| g.kind(v) == NodeKind::CallSite),
                )
                .collect();
            all.sort_unstable();
            all.dedup();
            all
        }
    }
}

/// One function's local graph (see the module docs).
#[derive(Debug)]
pub(crate) struct LocalGraph {
    pub(crate) nodes: Vec<NodeId>,
    /// Successors by position in `nodes`.
    pub(crate) succ: Vec<Vec<usize>>,
    /// Nodes that never ran (removed).
    pub(crate) dead: Vec<bool>,
}

impl LocalGraph {
    /// The local graph of `f` (all its nodes), the nodes `global` says
    /// never ran marked dead.
    pub(crate) fn of_function(g: &Icfg, f: FuncId, global: &[Label]) -> Self {
        let nodes: Vec<NodeId> = g.function_nodes(f).to_vec();
        LocalGraph::new(g, f, &nodes, global, !g.async_functions().is_empty())
    }

    /// Predecessors by position (the successors reversed).
    pub(crate) fn preds(&self) -> Vec<Vec<usize>> {
        let mut pred = vec![Vec::new(); self.nodes.len()];
        for (a, ss) in self.succ.iter().enumerate() {
            for &b in ss {
                pred[b].push(a);
            }
        }
        pred
    }

    fn new(g: &Icfg, f: FuncId, nodes: &[NodeId], global: &[Label], async_code: bool) -> Self {
        let pos: std::collections::HashMap<NodeId, usize> =
            nodes.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut succ = vec![Vec::new(); nodes.len()];
        // Targets of non-local jumps into F: an incoming edge from another
        // function that is not a call or a return.
        let mut jump_targets = Vec::new();
        for (i, &v) in nodes.iter().enumerate() {
            for (w, k) in g.preds(v) {
                if g.func_of(w) != f && k == EdgeKind::Local {
                    jump_targets.push(i);
                    break;
                }
            }
        }
        for (i, &v) in nodes.iter().enumerate() {
            for (w, k) in g.succs(v) {
                if k == EdgeKind::Local && g.func_of(w) == f {
                    succ[i].push(pos[&w]);
                }
            }
            for r in g.return_sites(v) {
                if let Some(&j) = pos.get(&r) {
                    succ[i].push(j);
                }
            }
            if g.kind(v) == NodeKind::CallSite || async_code {
                succ[i].extend(jump_targets.iter().copied());
            }
        }
        let dead = nodes
            .iter()
            .map(|v| global[v.index()] == Label::No)
            .collect();
        LocalGraph {
            nodes: nodes.to_vec(),
            succ,
            dead,
        }
    }

    /// Reachability from `from` over live nodes, without node `skip`.
    pub(crate) fn reach(&self, from: &[usize], skip: Option<usize>) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = Vec::new();
        for &s in from {
            if !self.dead[s] && Some(s) != skip && !seen[s] {
                seen[s] = true;
                stack.push(s);
            }
        }
        while let Some(v) = stack.pop() {
            for &w in &self.succ[v] {
                if !seen[w] && !self.dead[w] && Some(w) != skip {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        seen
    }

    /// Local labels from `entries` to `stop`, with a variable's value of
    /// this activation (a [`LastWrite`] over `F`'s nodes) when given: the
    /// walk then carries its automaton's state ([`LastWrite::step`]: 0 none
    /// yet, 1 good last, 2 bad last, times its branch tests' part) and
    /// ends only in an accepting one. It stays long (over 100 lines): its
    /// forward and backward searches and the Yes test all run over the
    /// same product states through closures (`step`, `accepts`, `forward`)
    /// that capture the value's automaton.
    fn labels(
        &self,
        entries: &[NodeId],
        stop: &[NodeId],
        value: Option<&LastWrite>,
    ) -> Vec<(NodeId, Label)> {
        self.labels_with(entries, stop, value, false, None)
    }

    /// [`LocalGraph::labels`] with a value, its Yes test only of the
    /// nodes `open` names (by position in `nodes`): every other node is
    /// No (no path runs it) or Maybe. A frame's walk with a value only
    /// fills in the labels its walk without one left Maybe (on Lua's
    /// `luaV_execute`, 1,403 nodes, a few dozen), and the test's bits
    /// are independent, so asking about those alone answers them alike.
    fn labels_of(
        &self,
        entries: &[NodeId],
        stop: &[NodeId],
        value: &LastWrite,
        open: &[bool],
    ) -> Vec<(NodeId, Label)> {
        self.labels_with(entries, stop, Some(value), false, Some(open))
    }

    /// [`LocalGraph::labels`]; with `slow`, its Yes test done one search
    /// per node (the reference for [`must_pass`] in tests).
    fn labels_with(
        &self,
        entries: &[NodeId],
        stop: &[NodeId],
        value: Option<&LastWrite>,
        slow: bool,
        open: Option<&[bool]>,
    ) -> Vec<(NodeId, Label)> {
        let n = self.nodes.len();
        let q = value.map_or(1, |w| w.num_states());
        // The nodes the value's automaton reads; every other node leaves
        // its state as it is (`LastWrite::alphabet`).
        let read: Vec<bool> = match value {
            Some(w) => {
                let a = w.alphabet();
                self.nodes
                    .iter()
                    .map(|v| a.binary_search(v).is_ok())
                    .collect()
            }
            None => Vec::new(),
        };
        let step = |st: usize, v: usize| -> usize {
            match value {
                Some(w) if read[v] => w.step(st, self.nodes[v]),
                _ => st,
            }
        };
        let accepts = |st: usize| match value {
            Some(w) => w.accepts(st),
            None => true,
        };
        let idx = |set: &[NodeId]| -> Vec<usize> {
            set.iter()
                .filter_map(|v| self.nodes.iter().position(|x| x == v))
                .filter(|&i| !self.dead[i])
                .collect()
        };
        let (s, t) = (idx(entries), idx(stop));
        let starts: Vec<usize> = s.iter().map(|&i| i * q + step(0, i)).collect();
        let is_target = |x: usize| t.contains(&(x / q)) && accepts(x % q);
        // Forward over product states, without node `skip`.
        let forward = |skip: Option<usize>| -> Vec<bool> {
            let mut seen = vec![false; n * q];
            let mut stack = Vec::new();
            for &x in &starts {
                if Some(x / q) != skip && !seen[x] {
                    seen[x] = true;
                    stack.push(x);
                }
            }
            while let Some(x) = stack.pop() {
                for &w in &self.succ[x / q] {
                    if self.dead[w] || Some(w) == skip {
                        continue;
                    }
                    let y = w * q + step(x % q, w);
                    if !seen[y] {
                        seen[y] = true;
                        stack.push(y);
                    }
                }
            }
            seen
        };
        let fwd = forward(None);
        // Backward over product states from the accepting targets, over
        // the states reached. Their successors, state by state in order,
        // are a CSR as they come (each state's sorted: `must_pass`'s
        // order); the predecessors are that, reversed.
        let mut offsets: Vec<u32> = Vec::with_capacity(n * q + 1);
        let mut heads: Vec<u32> = Vec::new();
        for (x, &reached) in fwd.iter().enumerate() {
            offsets.push(heads.len() as u32);
            if reached {
                let k = x % q;
                let from = heads.len();
                heads.extend(
                    self.succ[x / q]
                        .iter()
                        .filter(|&&w| !self.dead[w])
                        .map(|&w| (w * q + step(k, w)) as u32),
                );
                heads[from..].sort_unstable();
            }
        }
        offsets.push(heads.len() as u32);
        let succ = crate::graph::Csr::from_parts(offsets, heads);
        let pred = succ.reversed();
        let mut bwd = vec![false; n * q];
        let mut stack: Vec<usize> = t
            .iter()
            .flat_map(|&i| (0..q).map(move |k| i * q + k))
            .filter(|&x| fwd[x] && accepts(x % q))
            .collect();
        stack.sort_unstable();
        stack.dedup();
        let targets = stack.clone();
        for &x in &stack {
            bwd[x] = true;
        }
        while let Some(x) = stack.pop() {
            for &y in pred.succs(x as u32) {
                let y = y as usize;
                if !bwd[y] {
                    bwd[y] = true;
                    stack.push(y);
                }
            }
        }
        if !starts.iter().any(|&x| bwd[x]) {
            // The graph does not explain the activation: claim nothing.
            return self.nodes.iter().map(|&v| (v, Label::Maybe)).collect();
        }
        let live: Vec<bool> = (0..n)
            .map(|i| (0..q).any(|k| fwd[i * q + k] && bwd[i * q + k]))
            .collect();
        // The Yes test: the nodes without which no start reaches an
        // accepting target. Without a value (one state per node), the
        // dominators of a sink after every target, from a root before every
        // start: one dominator tree. With one, the nodes on every path of
        // product states (`must_pass`), where its sets fit.
        let cut = if slow {
            let reaches = |skip: Option<usize>| {
                forward(skip)
                    .iter()
                    .enumerate()
                    .any(|(x, &b)| b && is_target(x))
            };
            Some((0..n).map(|i| live[i] && !reaches(Some(i))).collect())
        } else if q == 1 {
            Some(self.cut_nodes(&s, &t))
        } else if must_pass_fits(n, q) {
            let states: Vec<bool> = fwd.iter().zip(&bwd).map(|(&a, &b)| a && b).collect();
            Some(must_pass(
                n,
                q,
                &states,
                (&starts, &targets),
                &pred,
                &succ,
                open,
            ))
        } else {
            None
        };
        (0..n)
            .map(|i| {
                let l = if !live[i] {
                    Label::No
                } else if cut.as_ref().is_some_and(|c: &Vec<bool>| c[i])
                    && open.is_none_or(|o| o[i])
                {
                    Label::Yes
                } else {
                    Label::Maybe
                };
                (self.nodes[i], l)
            })
            .collect()
    }

    /// Per node: every path from a live member of `starts` to a live
    /// member of `targets` over live nodes passes through it (positions
    /// in `nodes`, both lists already live). The dominators of a sink
    /// (after every target) from a root (before every start): Cooper,
    /// Harvey and Kennedy's algorithm, O(n + e) per pass.
    fn cut_nodes(&self, starts: &[usize], targets: &[usize]) -> Vec<bool> {
        let n = self.nodes.len();
        let (root, sink) = (n as u32, n as u32 + 1);
        let mut edges: Vec<(u32, u32)> = starts.iter().map(|&v| (root, v as u32)).collect();
        for (v, ws) in self.succ.iter().enumerate() {
            if self.dead[v] {
                continue;
            }
            edges.extend(
                ws.iter()
                    .filter(|&&w| !self.dead[w])
                    .map(|&w| (v as u32, w as u32)),
            );
        }
        edges.extend(targets.iter().map(|&v| (v as u32, sink)));
        let csr = crate::graph::Csr::from_edges(n + 2, &edges);
        let idom = crate::algo::dominators(&csr, &csr.reversed(), root, |_| true);
        let mut cut = vec![false; n];
        if idom[sink as usize] == crate::algo::NONE {
            return cut;
        }
        let mut v = idom[sink as usize];
        while v != root {
            cut[v as usize] = true;
            v = idom[v as usize];
        }
        cut
    }

    /// [`LocalGraph::labels`]'s Yes test done the slow way, one search
    /// per node (the reference for [`LocalGraph::cut_nodes`] in tests).
    #[cfg(test)]
    fn cut_nodes_slow(&self, starts: &[usize], targets: &[usize]) -> Vec<bool> {
        (0..self.nodes.len())
            .map(|i| {
                let from: Vec<usize> = starts.iter().copied().filter(|&s| s != i).collect();
                let seen = self.reach(&from, Some(i));
                !targets.iter().any(|&t| seen[t])
            })
            .collect()
    }
}

/// The nodes that surely ran in the activation that ran `ran` (a node
/// known to have run, in some thread, at some time): `ran` itself and its
/// dominators in its function's local graph from the function's entry
/// (the module docs' graph, without the nodes `global` labels No). Every
/// activation starts at its function's entry, and the nodes that never
/// ran cannot be on its way to `ran`; nothing after `ran` is claimed (a
/// thread may have stopped anywhere). Sorted, deduplicated, each member
/// of `ran` included. An error, naming the member, when `global` says
/// that its function's entry, or every way to it from there, never ran.
pub fn activation_dominators(
    g: &Icfg,
    global: &[Label],
    ran: &[NodeId],
) -> Result<Vec<NodeId>, NodeId> {
    let mut out: Vec<NodeId> = ran.to_vec();
    let mut by_func: Vec<(FuncId, NodeId)> = ran.iter().map(|&n| (g.func_of(n), n)).collect();
    by_func.sort_unstable();
    by_func.dedup();
    let async_code = !g.async_functions().is_empty();
    let mut i = 0;
    while i < by_func.len() {
        let f = by_func[i].0;
        let j = i + by_func[i..].iter().take_while(|(h, _)| *h == f).count();
        let targets = &by_func[i..j];
        i = j;
        let Some(dom) = Dominance::new(g, f, global, async_code) else {
            continue;
        };
        for &(_, t) in targets {
            dom.dominators(t, &mut out)?;
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A function's local graph under fixed labels, with its dominator tree
/// from the entry: what [`activation_dominators`] and
/// [`Implied::apart`] ask of a function, built once per function (an
/// [`Implied`] asks it of the same function for every node that ran: on
/// bzip2's plain core, 9 lifted nodes of `main` rebuilt its graph and
/// dominators 9 times).
struct Dominance {
    local: LocalGraph,
    /// Position of each node in `local.nodes`.
    pos: std::collections::HashMap<NodeId, u32>,
    /// Position of the entry.
    root: u32,
    /// Immediate dominators by position ([`crate::algo::NONE`]: not
    /// reached from the entry without dead nodes).
    idom: Vec<u32>,
    /// What the entry reaches with dead nodes too (built when asked).
    reach_all: std::cell::OnceCell<Vec<bool>>,
    /// The predecessors' graph (built when asked).
    before: std::cell::OnceCell<LocalGraph>,
}

impl Dominance {
    /// `None` for a function without an entry (or whose entry is not
    /// among its nodes): nothing is claimed of it.
    fn new(g: &Icfg, f: FuncId, global: &[Label], async_code: bool) -> Option<Dominance> {
        let entry = g.function(f).entry?;
        let nodes = g.function_nodes(f).to_vec();
        let local = LocalGraph::new(g, f, &nodes, global, async_code);
        let pos: std::collections::HashMap<NodeId, u32> = nodes
            .iter()
            .enumerate()
            .map(|(k, &v)| (v, k as u32))
            .collect();
        let root = *pos.get(&entry)?;
        let idom = if local.dead[root as usize] {
            Vec::new()
        } else {
            let edges: Vec<(u32, u32)> = local
                .succ
                .iter()
                .enumerate()
                .flat_map(|(v, ws)| ws.iter().map(move |&w| (v as u32, w as u32)))
                .collect();
            let csr = crate::graph::Csr::from_edges(nodes.len(), &edges);
            crate::algo::dominators(&csr, &csr.reversed(), root, |v| !local.dead[v as usize])
        };
        Some(Dominance {
            local,
            pos,
            root,
            idom,
            reach_all: Default::default(),
            before: Default::default(),
        })
    }

    /// Pushes onto `out` the dominators of `t` (a node of the function)
    /// from the entry; the error of [`activation_dominators`].
    fn dominators(&self, t: NodeId, out: &mut Vec<NodeId>) -> Result<(), NodeId> {
        if self.local.dead[self.root as usize] {
            // Every activation starts at the entry, which never ran.
            return Err(t);
        }
        let mut v = self.pos[&t];
        if self.idom[v as usize] == crate::algo::NONE {
            // Only nodes that never ran separate it from the entry: a
            // contradiction. Not reachable at all: the local graph
            // does not explain it, claim nothing more.
            let all = self.reach_all.get_or_init(|| {
                let l = LocalGraph {
                    nodes: self.local.nodes.clone(),
                    succ: self.local.succ.clone(),
                    dead: vec![false; self.local.nodes.len()],
                };
                l.reach(&[self.root as usize], None)
            });
            if all[v as usize] {
                return Err(t);
            }
            return Ok(());
        }
        while v != self.root {
            v = self.idom[v as usize];
            out.push(self.local.nodes[v as usize]);
        }
        Ok(())
    }

    /// [`Implied::apart`] of `n`, a node of the function.
    fn apart(&self, n: NodeId) -> Vec<NodeId> {
        let local = &self.local;
        let Some(&i) = self.pos.get(&n) else {
            return Vec::new();
        };
        let i = i as usize;
        let after = local.reach(&[i], None);
        let before = self
            .before
            .get_or_init(|| LocalGraph {
                nodes: local.nodes.clone(),
                succ: local.preds(),
                dead: local.dead.clone(),
            })
            .reach(&[i], None);
        (0..local.nodes.len())
            .filter(|&j| !after[j] && !before[j] && !local.dead[j])
            .map(|j| local.nodes[j])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dominator test for Yes agrees with one search per node on
    /// random local graphs (random edges, dead nodes, starts, targets).
    #[test]
    fn cut_nodes_equal_one_search_per_node() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let mut cuts = 0;
        for _ in 0..3000 {
            let n = 1 + next(24);
            let succ: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..next(4)).map(|_| next(n)).collect())
                .collect();
            let dead: Vec<bool> = (0..n).map(|_| next(6) == 0).collect();
            let mut live = |k: usize| -> Vec<usize> {
                let m = 1 + next(k);
                (0..m).map(|_| next(n)).filter(|&v| !dead[v]).collect()
            };
            let starts = live(2);
            let targets = live(3);
            let g = LocalGraph {
                nodes: (0..n).map(NodeId::new).collect(),
                succ,
                dead,
            };
            let slow = g.cut_nodes_slow(&starts, &targets);
            // The reference says every node is a cut when no start
            // reaches a target; `labels` never asks then.
            let reached = {
                let seen = g.reach(&starts, None);
                targets.iter().any(|&t| seen[t])
            };
            if reached {
                assert_eq!(
                    g.cut_nodes(&starts, &targets),
                    slow,
                    "{g:?} {starts:?} {targets:?}"
                );
                cuts += slow.iter().filter(|&&c| c).count();
            }
        }
        assert!(cuts > 1000, "too few cut nodes to test anything: {cuts}");
    }

    /// A function of thousands of nodes gets the Yes test too, with and
    /// without a value (it used to stop at 4,000 nodes, or product states,
    /// where it took one search per node): a chain with a detour.
    #[test]
    fn large_functions_get_the_yes_test() {
        use crate::report::NodeSet;
        let n = 6000;
        // 0 -> 1 -> ... -> n-1, and 10 -> 12 around 11.
        let mut succ: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        succ[10].push(12);
        let g = LocalGraph {
            nodes: (0..n).map(NodeId::new).collect(),
            succ,
            dead: vec![false; n],
        };
        let (entry, stop) = ([NodeId::new(0)], [NodeId::new(n - 1)]);
        let yes = |l: &[(NodeId, Label)], i: usize| l[i].1 == Label::Yes;
        let plain = g.labels(&entry, &stop, None);
        assert!(yes(&plain, 0) && yes(&plain, 5000) && yes(&plain, n - 1));
        assert_eq!(plain[11].1, Label::Maybe);
        // The value's last write must be node 11: the detour is ruled out.
        let value = LastWrite {
            writes: NodeSet::new(vec![NodeId::new(3), NodeId::new(11)]).expect("writes"),
            bad: vec![NodeId::new(3)],
            need: true,
            what: "v = 1".into(),
            tests: Vec::new(),
        };
        let with = g.labels(&entry, &stop, Some(&value));
        assert!(yes(&with, 11) && yes(&with, 5000), "{:?}", &with[..20]);
    }

    /// The Yes test with a value (`must_pass` over the product states)
    /// agrees with one search per node, on random local graphs with random
    /// values: writes, bad writes, and branch tests.
    #[test]
    fn must_pass_equals_one_search_per_node() {
        use crate::report::{BranchTest, NodeSet};
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let (mut yes, mut with_tests, mut partial) = (0, 0, 0);
        for _ in 0..3000 {
            let n = 2 + next(20);
            let succ: Vec<Vec<usize>> = (0..n)
                .map(|_| (0..next(4)).map(|_| next(n)).collect())
                .collect();
            let dead: Vec<bool> = (0..n).map(|_| next(8) == 0).collect();
            let g = LocalGraph {
                nodes: (0..n).map(NodeId::new).collect(),
                succ,
                dead,
            };
            fn pick(next: &mut impl FnMut(usize) -> usize, n: usize, k: usize) -> Vec<NodeId> {
                let mut v: Vec<NodeId> = (0..1 + next(k)).map(|_| NodeId::new(next(n))).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            let writes = pick(&mut next, n, 4);
            let bad: Vec<NodeId> = writes.iter().copied().filter(|_| next(3) == 0).collect();
            let tests: Vec<BranchTest> = (0..next(3))
                .map(|_| BranchTest {
                    branch: NodeId::new(next(n)),
                    taken: NodeId::new(next(n)),
                    others: vec![NodeId::new(next(n))],
                })
                .collect();
            with_tests += usize::from(!tests.is_empty());
            let value = LastWrite {
                writes: NodeSet::new(writes).expect("one write at least"),
                bad,
                need: next(2) == 0,
                what: "v".into(),
                tests,
            };
            let (entries, stop) = (pick(&mut next, n, 2), pick(&mut next, n, 3));
            let fast = g.labels_with(&entries, &stop, Some(&value), false, None);
            let slow = g.labels_with(&entries, &stop, Some(&value), true, None);
            assert_eq!(fast, slow, "{g:?} {value:?} {entries:?} {stop:?}");
            // Asked of some nodes only: those answered alike, the others
            // No where they are No, else Maybe.
            let open: Vec<bool> = (0..n).map(|_| next(3) != 0).collect();
            let some = g.labels_of(&entries, &stop, &value, &open);
            for (i, (a, b)) in some.iter().zip(&fast).enumerate() {
                let expect = match b.1 {
                    Label::Yes if !open[i] => Label::Maybe,
                    l => l,
                };
                assert_eq!(
                    a.1, expect,
                    "node {i}: {g:?} {value:?} {entries:?} {stop:?}"
                );
                partial += usize::from(b.1 == Label::Yes && open[i]);
            }
            yes += fast.iter().filter(|(_, l)| *l == Label::Yes).count();
        }
        assert!(yes > 1000, "too few Yes nodes to test anything: {yes}");
        assert!(partial > 500, "too few Yes nodes asked about: {partial}");
        assert!(with_tests > 1000, "too few values with tests: {with_tests}");
    }

    /// [`Implied::apart`] the slow way: the nodes `j` (not never-run)
    /// such that no path of the local graph leads from `n` to `j` nor
    /// from `j` to `n`, one search per node.
    fn apart_slow(g: &Icfg, global: &[Label], n: NodeId) -> Vec<NodeId> {
        let local = LocalGraph::of_function(g, g.func_of(n), global);
        let Some(i) = local.nodes.iter().position(|&v| v == n) else {
            return Vec::new();
        };
        let after = local.reach(&[i], None);
        (0..local.nodes.len())
            .filter(|&j| !local.dead[j] && !after[j] && !local.reach(&[j], None)[i])
            .map(|j| local.nodes[j])
            .collect()
    }

    /// One [`Implied`] asked of every node in turn (its functions'
    /// dominators and graphs built once) answers as a new one asked of
    /// each node alone, and as [`activation_dominators`] and the
    /// node-by-node `apart`, on random two-function graphs with random
    /// nodes that never ran.
    #[test]
    fn one_implied_answers_as_fresh_ones() {
        use crate::icfg::IcfgBuilder;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let (mut asked, mut errors, mut apart_found) = (0, 0, 0);
        for _ in 0..400 {
            let mut b = IcfgBuilder::new();
            let main = b.function("main");
            let f = b.function("f");
            let mut funcs: Vec<Vec<NodeId>> = Vec::new();
            for (name, func) in [("m", main), ("f", f)] {
                let n = 3 + next(9);
                let nodes: Vec<NodeId> = (0..n)
                    .map(|i| {
                        let kind = if i == 0 {
                            NodeKind::Entry
                        } else if i == n - 1 {
                            NodeKind::Exit
                        } else if name == "m" && next(4) == 0 {
                            NodeKind::CallSite
                        } else {
                            NodeKind::Statement
                        };
                        b.test_node(&format!("{name}{i}"), kind, func, i as u32 + 1)
                    })
                    .collect();
                funcs.push(nodes);
            }
            let fe = funcs[1][0];
            for nodes in &funcs {
                for i in 0..nodes.len() - 1 {
                    b.add_flow_edge(nodes[i], nodes[i + 1]);
                    if next(3) == 0 {
                        // A branch or a loop (not out of the exit).
                        b.add_flow_edge(nodes[i], nodes[1 + next(nodes.len() - 1)]);
                    }
                }
            }
            for &v in &funcs[0] {
                if b.kind_of(v) == NodeKind::CallSite {
                    b.add_call_edge(v, fe);
                }
            }
            let Ok(g) = b.build() else { continue };
            let labels: Vec<Label> = (0..g.num_nodes())
                .map(|_| {
                    if next(6) == 0 {
                        Label::No
                    } else {
                        Label::Maybe
                    }
                })
                .collect();
            let mut shared = Implied::new(&g);
            let mut order: Vec<NodeId> = g.nodes().collect();
            for i in (1..order.len()).rev() {
                order.swap(i, next(i + 1));
            }
            for n in order {
                let ended = next(2) == 0;
                let got = shared.ran(&labels, n, ended);
                assert_eq!(got, Implied::new(&g).ran(&labels, n, ended), "node {n:?}");
                let doms = activation_dominators(&g, &labels, &[n]);
                match (&got, &doms) {
                    (Ok((yes, _)), Ok(d)) => {
                        assert!(d.iter().all(|v| yes.contains(v)), "node {n:?}")
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    _ => panic!("node {n:?}: {got:?} against {doms:?}"),
                }
                let apart = shared.apart(&labels, n);
                assert_eq!(apart, apart_slow(&g, &labels, n), "node {n:?}");
                asked += 1;
                errors += usize::from(got.is_err());
                apart_found += usize::from(!apart.is_empty());
            }
        }
        assert!(
            asked > 2000 && errors > 100 && apart_found > 100,
            "{asked} {errors} {apart_found}"
        );
    }
}
