//! A static HTML report (`--format html -o DIR`), for a developer with one
//! crash and ten minutes.
//!
//! `DIR/index.html` starts from the crash: a headline naming the crashing
//! function and line, then the stack as a list of frames, innermost first
//! (as gdb prints it), each linked to its function's source page scrolled
//! to the call it is waiting in (or the crash line), with the values of
//! its locals read from a core. Then the log, each line with the print
//! statements that can have printed it; the source files with their share
//! of Yes / No / Maybe lines (files on the stack first), one click away;
//! then, folded (`<details>`), an example path: one execution the control
//! flow allows that fits the failure data, said not to be necessarily
//! what the program did, in the program's own code only (no `<external
//! code>` steps, no runtime constructors, loop iterations folded); every
//! value read from the core, the weakened constraints and the node
//! counts. Paths are shown relative to the
//! sources' common directory, which the page names once. A crash or call
//! that the report places on several nodes of one line is named once.
//!
//! `DIR/file-<N>.html` (one per file with labelled lines, `N` the file's
//! index in the graph) lists the source, every line an anchor `#L<line>`,
//! with the labels in the gutter: the Global label (what ran anywhere
//! before the crash: green Yes, red No, amber Maybe), then, for each frame
//! of the stack whose function is in the file, that frame's Local label
//! (what ran in that activation before its pending call or the crash; see
//! [`postmortem_core::local`]), and a badge on each frame's stop line.
//! After the source text: on a frame's stop line the values of that
//! frame's locals and of the globals the line names, on a local's
//! declaration line its value, and beside a print statement the log lines
//! matched to it. Values and log lines are shown, never used here.
//!
//! Pages are self-contained (inline CSS, no script, no external resource),
//! so the directory works offline and from anywhere; every text from the
//! inputs is HTML-escaped.

use crate::logs::{LogMatch, Outcome};
use crate::vars::ValueUse;
use crate::write::annotate::{label_word, local_lines, Sources};
use postmortem_core::local::FrameLabels;
use postmortem_core::summary::{by_line, Counts, FileLines};
use postmortem_core::why::Why;
use postmortem_core::{
    EdgeKind, FileId, FuncId, Icfg, Label, NodeId, NodeKind, NodeSet, Origin, Report, Weakening,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// Everything the HTML report shows.
pub struct HtmlReport<'a> {
    /// The graph.
    pub graph: &'a Icfg,
    /// One label per node.
    pub labels: &'a [Label],
    /// The report analysed (its stack and crash are shown).
    pub report: &'a Report,
    /// A witness path (an execution consistent with the report), if any.
    pub witness: Option<&'a [NodeId]>,
    /// What the witness check found ([`crate::witness_check`]).
    pub witness_check: Option<&'a crate::witness_check::Verdict>,
    /// Why the example paths found before this one were set aside (each
    /// infeasible by the check).
    pub witness_set_aside: &'a [String],
    /// Source texts.
    pub sources: &'a Sources,
    /// Constraints the solver weakened.
    pub weakened: &'a [Weakening],
    /// The page title (e.g. the inputs' names).
    pub title: &'a str,
    /// The Local labels of the stack's frames
    /// ([`postmortem_core::local::frame_labels`]; empty: none shown).
    pub frames: &'a [FrameLabels],
    /// Why lines are Yes or No ([`postmortem_core::why`]), shown when the
    /// mouse rests on a line's Global label.
    pub why: &'a Why,
    /// What to observe next (`suggest`), when it was computed: a section
    /// linking each point to its line.
    pub suggestions: Option<&'a postmortem_core::suggest::Suggestions>,
    /// Variables' values read from a core ([`crate::vars::constraints`]):
    /// each local beside its frame, and on its declaration line and the
    /// line its frame stopped on when that line names it.
    pub values: &'a [ValueUse],
    /// The logs matched to the program's print statements: each line
    /// listed, and shown beside the statements that can have printed it.
    pub logs: &'a [LogMatch],
    /// What killed the process, when a core or minidump says: shown
    /// above the stack.
    pub fault: Option<&'a crate::image::fault::Fault>,
    /// Lines the optimiser moved, lines with no code in the binary: a
    /// note beside each.
    pub line_notes: Option<&'a postmortem_core::line_notes::LineNotes>,
}

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page of a file.
pub fn file_page(f: FileId) -> String {
    format!("file-{}.html", f.index())
}

/// The pages' style sheet (also `postmortem batch`'s group pages).
pub const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:70em}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}.sub{color:#555}\
table{border-collapse:collapse}td,th{padding:.15em .6em;text-align:left}\
th{border-bottom:1px solid #999}.num{text-align:right}\
ol.stack{list-style:none;padding-left:1em}ol.stack li{margin:.4em 0}ol.stack .fn{font-weight:bold}\
ol.stack pre{margin:.2em 0 0 1.5em;font-family:ui-monospace,monospace;color:#333}\
.src td{padding:0 .5em;vertical-align:top}.src td.s{white-space:pre;font-family:ui-monospace,monospace}\
.src td.n{color:#777;text-align:right;font-family:ui-monospace,monospace}.src td.n a{color:inherit;text-decoration:none}\
.src td.g,.src td.l{font-size:.85em;white-space:nowrap}.src th{font-size:.85em;font-weight:normal;white-space:nowrap}\
.y{background:#d5f5d5}.no{background:#f8d0d0}.m{background:#fbe6b0}\
.bar{display:inline-block;height:.8em;vertical-align:middle}\
.badge{font-size:.8em;background:#333;color:#fff;border-radius:.3em;padding:0 .3em;margin-right:.2em;white-space:nowrap}\
.badge.crash{background:#b00}.badge.yes{background:#2a7a2a}.badge.maybe{background:#a07000}\
details{margin-top:1.2em}summary{cursor:pointer;font-weight:bold}\
code{font-family:ui-monospace,monospace}:target{outline:2px solid #36c}\
.val,.log,.opt{font-size:.85em;border-radius:.3em;padding:0 .3em;margin-right:.3em;white-space:nowrap}\
.val{background:#e4e8f8}.opt{color:#555;font-style:italic}.log{background:#e8f0e0;font-family:ui-monospace,monospace}\
.vals{margin:.2em 0 0 1.5em}.src td.note{white-space:nowrap}";

/// The legend of the labels.
const LEGEND_HTML: &str = "<span class=\"y\">Yes</span> surely ran before the crash, \
<span class=\"no\">No</span> surely did not run, <span class=\"m\">Maybe</span> not decided \
(on every execution of the program that fits the failure data).";

fn class(l: Option<Label>) -> &'static str {
    match l {
        Some(Label::Yes) => "y",
        Some(Label::No) => "no",
        Some(Label::Maybe) => "m",
        None => "",
    }
}

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        escape(title)
    )
}

fn pct(part: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// Where a node is: its file and first line, when known.
fn place(g: &Icfg, n: NodeId) -> Option<(FileId, u32)> {
    Some((g.file_of(n)?, *g.lines(n).first()?))
}

/// The longest directory prefix (ending in `/`) common to `paths`; empty
/// when they share none.
pub fn common_root<'p>(paths: impl IntoIterator<Item = &'p str>) -> String {
    let mut root: Option<Vec<&str>> = None;
    for p in paths {
        let mut dirs: Vec<&str> = p.split('/').collect();
        dirs.pop(); // the file name
        root = Some(match root {
            None => dirs,
            Some(r) => r
                .iter()
                .zip(&dirs)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    match root {
        Some(r) if !r.is_empty() && r != [""] => format!("{}/", r.join("/")),
        _ => String::new(),
    }
}

/// What the pages share: the graph, and how paths are shown.
struct Ctx<'a, 'r> {
    r: &'r HtmlReport<'a>,
    /// The common source directory, stripped from every shown path.
    root: String,
}

impl Ctx<'_, '_> {
    fn path(&self, f: FileId) -> &str {
        let p = self.r.graph.file_path(f);
        p.strip_prefix(self.root.as_str())
            .filter(|s| !s.is_empty())
            .unwrap_or(p)
    }

    fn func(&self, f: FuncId) -> String {
        format!(
            "<code class=\"fn\">{}</code>",
            escape(&self.r.graph.function(f).name)
        )
    }

    /// A link to a line: `crash.c:16`.
    fn line_link(&self, f: FileId, l: u32) -> String {
        format!(
            "<a href=\"{}#L{l}\">{}:{l}</a>",
            file_page(f),
            escape(self.path(f))
        )
    }

    /// The distinct places of a node set, as links, each with its function:
    /// nodes of one line are named once.
    fn places(&self, s: &NodeSet) -> Vec<String> {
        let g = self.r.graph;
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for &n in s.nodes() {
            let func = g.func_of(n);
            let shown = match place(g, n) {
                Some((f, l)) => {
                    if !seen.insert((func, Some((f, l)), String::new())) {
                        continue;
                    }
                    format!("{} at {}", self.func(func), self.line_link(f, l))
                }
                None => {
                    if !seen.insert((func, None, g.ext_id(n).to_string())) {
                        continue;
                    }
                    format!(
                        "{} node <code>{}</code>",
                        self.func(func),
                        escape(g.ext_id(n))
                    )
                }
            };
            out.push(shown);
        }
        out
    }

    /// A node set in words: one place, or "one of N: ...".
    fn set(&self, s: &NodeSet) -> String {
        let p = self.places(s);
        if p.len() == 1 {
            p.into_iter().next().unwrap_or_default()
        } else {
            format!("one of {}: {}", p.len(), p.join("; "))
        }
    }

    /// A node set as plain text (for a tooltip): `fn at file:line`, or
    /// "one of N: ..." (the first three places, then how many more).
    fn plain_set(&self, s: &NodeSet) -> String {
        let g = self.r.graph;
        let mut seen = BTreeSet::new();
        for &n in s.nodes() {
            let func = &g.function(g.func_of(n)).name;
            let at = match place(g, n) {
                Some((f, l)) => format!("{func} at {}:{l}", self.path(f)),
                None => format!("{func} node {}", g.ext_id(n)),
            };
            seen.insert(at);
        }
        let all: Vec<String> = seen.into_iter().collect();
        match all.len() {
            1 => all[0].clone(),
            k if k <= 3 => format!("one of {k}: {}", all.join("; ")),
            k => format!("one of {k}: {}; ...", all[..3].join("; ")),
        }
    }

    /// One constraint of the report in a developer's words.
    fn because(&self, o: Origin) -> String {
        let r = self.r.report;
        match o {
            Origin::Crash => match &r.crash {
                Some(c) => format!("the crash in {}", self.plain_set(c)),
                None => "the crash".into(),
            },
            Origin::Frame(i) => format!(
                "stack frame #{}, the call in {}",
                r.stack.len() - i,
                self.plain_set(&r.stack[i].call)
            ),
            Origin::ObsYes(i) => {
                let e: Vec<String> = r.obs_yes[i]
                    .entries
                    .iter()
                    .map(|s| self.plain_set(s))
                    .collect();
                if e.len() == 1 {
                    format!("observed to have run: {}", e[0])
                } else {
                    format!("observed to have run in this order: {}", e.join(", then "))
                }
            }
            Origin::ObsNo(i) => {
                format!("observed not to have run: {}", self.plain_set(&r.obs_no[i]))
            }
            Origin::Bursty(i) => format!("bursty observation {i}"),
            Origin::Value(i) => format!("the value in the core of {}", r.values[i].what),
            Origin::Residue(i) => format!(
                "a return address left on the stack by the call in {}",
                self.plain_set(&r.residue[i])
            ),
            Origin::ResidueSomewhere(i) => format!(
                "a return address left on the stack by the call in {}, in some thread",
                self.plain_set(&postmortem_core::NodeSet::one(r.residue_somewhere[i]))
            ),
            Origin::Lift => "nodes the Local labels of a stack frame prove ran".into(),
            Origin::Query => "the question".into(),
        }
    }

    /// Each explained line's tooltip: its label and the constraints that
    /// force it.
    fn why_by_line(&self) -> BTreeMap<(FileId, u32), String> {
        let g = self.r.graph;
        let mut out = BTreeMap::new();
        for (n, because) in &self.r.why.nodes {
            let Some(at) = place(g, *n) else { continue };
            let label = match self.r.labels[n.index()] {
                Label::Yes => "Yes (ran on every execution that fits the failure data)",
                Label::No => "No (ran on no execution that fits the failure data)",
                Label::Maybe => continue,
            };
            let text = if because.is_empty() {
                format!("{label}, forced by the program alone, with no observation at all")
            } else {
                let parts: Vec<String> = because.iter().map(|&o| self.because(o)).collect();
                let n = parts.len();
                let these = if n == 1 {
                    "this".to_string()
                } else {
                    format!("these {n} together")
                };
                format!("{label}, forced by {these}: {}", parts.join("; "))
            };
            out.entry(at).or_insert(text);
        }
        out
    }

    fn entry_names(&self, s: &NodeSet) -> String {
        let g = self.r.graph;
        let funcs: BTreeSet<FuncId> = s.nodes().iter().map(|&n| g.func_of(n)).collect();
        funcs
            .into_iter()
            .map(|f| self.func(f))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// One frame of the stack as the pages show it, innermost first.
struct ShownFrame<'r> {
    /// gdb's frame number: 0 is the innermost (the crash).
    number: usize,
    /// Where it stopped: the crash, or the pending call.
    stop: &'r NodeSet,
    /// The functions entered by the pending call (None: the crash).
    callee: Option<&'r NodeSet>,
    /// Its Local labels, when known.
    local: Option<&'r FrameLabels>,
    /// Its activation, numbered as [`FrameLabels::frame`].
    activation: usize,
}

impl ShownFrame<'_> {
    fn badge(&self) -> String {
        match self.callee {
            None => format!("<span class=\"badge crash\">#{} crash</span>", self.number),
            Some(_) => format!("<span class=\"badge\">#{} call</span>", self.number),
        }
    }
}

/// The stack, innermost first: the crash, then the pending calls from the
/// innermost to the outermost. Local labels by their activation number
/// (0 the outermost; the crash frame is `stack.len()`).
fn shown_frames<'r>(r: &'r HtmlReport<'_>) -> Vec<ShownFrame<'r>> {
    let local = |k: usize| r.frames.iter().find(|f| f.frame == k);
    let mut out = Vec::new();
    if let Some(c) = &r.report.crash {
        out.push(ShownFrame {
            number: 0,
            stop: c,
            callee: None,
            local: local(r.report.stack.len()),
            activation: r.report.stack.len(),
        });
    }
    for (k, f) in r.report.stack.iter().enumerate().rev() {
        out.push(ShownFrame {
            number: out.len(),
            stop: &f.call,
            callee: Some(&f.entry),
            local: local(k),
            activation: k,
        });
    }
    out
}

/// Line `line` (1-based) of a source, trimmed.
fn source_line(lines: &[&str], line: u32) -> Option<String> {
    let i = (line as usize).checked_sub(1)?;
    Some(lines.get(i)?.trim().to_string())
}

/// The files a stop set is in.
fn stop_files(g: &Icfg, s: &NodeSet) -> BTreeSet<FileId> {
    s.nodes().iter().filter_map(|&n| g.file_of(n)).collect()
}

fn line_counts(fl: &FileLines) -> (usize, usize, usize) {
    (
        fl.with(Label::Yes).count(),
        fl.with(Label::No).count(),
        fl.with(Label::Maybe).count(),
    )
}

/// The most values listed beside one frame.
const MAX_FRAME_VALUES: usize = 24;

/// `name = value`, with where it was read and what became of it in a
/// tooltip; `prefix` names its frame (`#1 `) where that is needed. On the
/// line its frame stopped on (`stop`), a store to it on that line may not
/// have run yet: said.
fn value_html(c: &Ctx<'_, '_>, u: &ValueUse, prefix: &str, stop: Option<(FileId, u32)>) -> String {
    let used = if u.constraint.is_some() || u.local.is_some() {
        "used as evidence".to_string()
    } else {
        format!(
            "not used as evidence: {}",
            u.unused.as_deref().unwrap_or("-")
        )
    };
    let pending = stop.is_some_and(|at| {
        u.shown
            .stores
            .iter()
            .any(|&n| place(c.r.graph, n) == Some(at))
    });
    let (mark, why) = if pending {
        (
            " (before this line's store?)",
            "; the frame stopped on this line, which stores to it: the value may be what the memory held before that store",
        )
    } else {
        ("", "")
    };
    format!(
        "<code class=\"val\" title=\"{}\">{prefix}{} = {}{mark}</code>",
        escape(&format!("read from the core, {}; {used}{why}", u.place)),
        escape(&u.name),
        escape(&u.value_text())
    )
}

/// The source line frame `f` stopped on, when its stop is one line.
fn stop_line(c: &Ctx<'_, '_>, f: &ShownFrame<'_>) -> Option<(FileId, u32)> {
    let lines: BTreeSet<(FileId, u32)> = f
        .stop
        .nodes()
        .iter()
        .filter_map(|&n| place(c.r.graph, n))
        .collect();
    match lines.iter().next() {
        Some(&at) if lines.len() == 1 => Some(at),
        _ => None,
    }
}

/// The values of a frame's locals, beside it in the stack.
fn frame_values_html(c: &Ctx<'_, '_>, f: &ShownFrame<'_>) -> String {
    let stop = stop_line(c, f);
    let vals: Vec<&ValueUse> =
        c.r.values
            .iter()
            .filter(|u| u.shown.activation == Some(f.activation))
            .collect();
    if vals.is_empty() {
        return String::new();
    }
    let mut shown: Vec<String> = vals
        .iter()
        .take(MAX_FRAME_VALUES)
        .map(|u| value_html(c, u, "", stop))
        .collect();
    if vals.len() > MAX_FRAME_VALUES {
        shown.push(format!("and {} more", vals.len() - MAX_FRAME_VALUES));
    }
    format!("<div class=\"vals\">in the core: {}</div>", shown.join(" "))
}

/// The most rows of the values table.
const MAX_VALUE_ROWS: usize = 2000;

/// Every value read from the core, folded: globals, and locals whatever
/// their frame.
fn values_section(r: &HtmlReport<'_>) -> String {
    if r.values.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<details>\n<summary>Values read from the core ({})</summary>\n<p class=\"sub\">The locals are also shown beside their frames, and on their lines in the files' pages. A value is evidence where some stores of the program cannot have left it.</p>\n<table>\n<tr><th>variable</th><th>value</th><th>read from</th><th>as evidence</th></tr>\n",
        r.values.len()
    );
    for u in r.values.iter().take(MAX_VALUE_ROWS) {
        let used = match (&u.unused, u.constraint.or(u.local)) {
            (_, Some(_)) => "used".to_string(),
            (Some(why), None) => format!("not used: {why}"),
            (None, None) => "not used".to_string(),
        };
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&u.name),
            escape(&u.value_text()),
            escape(&u.place),
            escape(&used)
        );
    }
    if r.values.len() > MAX_VALUE_ROWS {
        let _ = writeln!(
            s,
            "<tr><td colspan=\"4\">... {} more</td></tr>",
            r.values.len() - MAX_VALUE_ROWS
        );
    }
    s.push_str("</table>\n</details>\n");
    s
}

/// The identifiers of a line of C-like source.
fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .collect()
}

/// A value's variable as the source names it (`s` for the field `s.1`).
fn base_name(name: &str) -> &str {
    name.split(['.', '[']).next().unwrap_or(name)
}

/// The notes after each line of a file's page: the values read from the
/// core (on the line a frame stopped on, the values of that frame and the
/// globals the line names; on a local's declaration line, its value), then
/// the log lines the line's print statements can have printed.
fn line_notes(c: &Ctx<'_, '_>, file: FileId, frames: &[ShownFrame<'_>]) -> BTreeMap<u32, String> {
    let mut notes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    if let Some(n) = c.r.line_notes {
        for (line, note) in n.of_file(file) {
            notes.entry(line).or_default().push(format!(
                "<span class=\"opt\">{}</span>",
                escape(&note.to_string())
            ));
        }
    }
    value_notes(c, file, frames, &mut notes);
    log_notes(c, file, &mut notes);
    notes.into_iter().map(|(l, v)| (l, v.concat())).collect()
}

fn value_notes(
    c: &Ctx<'_, '_>,
    file: FileId,
    frames: &[ShownFrame<'_>],
    notes: &mut BTreeMap<u32, Vec<String>>,
) {
    let r = c.r;
    let g = r.graph;
    if r.values.is_empty() {
        return;
    }
    let prefix = |a: Option<usize>| {
        frames
            .iter()
            .find(|f| Some(f.activation) == a)
            .map(|f| format!("#{} ", f.number))
            .unwrap_or_default()
    };
    // Each value once per line (the stop line's words first).
    let mut seen = BTreeSet::new();
    let mut add = |line: u32, value: usize, html: String| {
        if seen.insert((line, value)) {
            notes.entry(line).or_default().push(html);
        }
    };
    if let Some(lines) = r.sources.lines(file) {
        for f in frames {
            let stops: BTreeSet<(FileId, u32)> =
                f.stop.nodes().iter().filter_map(|&n| place(g, n)).collect();
            for (_, line) in stops.into_iter().filter(|&(sf, _)| sf == file) {
                let Some(src) = (line as usize).checked_sub(1).and_then(|i| lines.get(i)) else {
                    continue;
                };
                let named = identifiers(src);
                for (i, u) in r.values.iter().enumerate() {
                    let of_frame = match u.shown.activation {
                        Some(a) => a == f.activation,
                        None => u.shown.decl.is_none(), // a global
                    };
                    if of_frame && named.contains(base_name(&u.name)) {
                        add(
                            line,
                            i,
                            value_html(c, u, &prefix(u.shown.activation), Some((file, line))),
                        );
                    }
                }
            }
        }
    }
    for (i, u) in r.values.iter().enumerate() {
        if let Some((entry, line)) = u.shown.decl {
            if g.file_of(entry) == Some(file) {
                add(line, i, value_html(c, u, &prefix(u.shown.activation), None));
            }
        }
    }
}

/// The most log lines shown beside one source line.
const MAX_LOG_NOTES: usize = 3;

/// `text` cut to at most `max` characters.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// The lines of a log's match each line's print statements can have
/// printed (lines that are elements of the trace only), by source line.
fn log_lines_at(c: &Ctx<'_, '_>, m: &LogMatch) -> Vec<(usize, BTreeSet<(FileId, u32)>)> {
    let g = c.r.graph;
    m.lines
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.outcome, Outcome::Element(_)))
        .map(|(i, l)| {
            let at = l
                .sites
                .iter()
                .filter_map(|&k| place(g, m.sites[k].site))
                .collect();
            (i, at)
        })
        .collect()
}

fn log_notes(c: &Ctx<'_, '_>, file: FileId, notes: &mut BTreeMap<u32, Vec<String>>) {
    let mut more: BTreeMap<u32, usize> = BTreeMap::new();
    let mut shown: BTreeMap<u32, usize> = BTreeMap::new();
    for m in c.r.logs {
        for (i, at) in log_lines_at(c, m) {
            let l = &m.lines[i];
            let who = match at.len() {
                1 => "printed by the statement on this line".to_string(),
                k => format!("printed by one of {k} lines' statements (listed on the first page)"),
            };
            for &(_, line) in at.iter().filter(|&&(f, _)| f == file) {
                let n = shown.entry(line).or_default();
                if *n == MAX_LOG_NOTES {
                    *more.entry(line).or_default() += 1;
                    continue;
                }
                *n += 1;
                notes.entry(line).or_default().push(format!(
                    "<span class=\"log\" title=\"log line {}, {}\">log {}: {}</span>",
                    l.number,
                    escape(&who),
                    l.number,
                    escape(&shorten(&l.text, 120))
                ));
            }
        }
    }
    for (line, k) in more {
        notes
            .entry(line)
            .or_default()
            .push(format!("<span class=\"sub\">and {k} more log lines</span>"));
    }
}

/// The most log lines listed on the first page.
const MAX_LOG_ROWS: usize = 200;

/// The log, each line with the print statements that can have printed it.
fn log_section(c: &Ctx<'_, '_>) -> String {
    let lines = || {
        c.r.logs.iter().flat_map(|m| {
            m.lines
                .iter()
                .filter(|l| l.outcome != Outcome::Blank)
                .map(move |l| (m, l))
        })
    };
    let total = lines().count();
    if total == 0 {
        return String::new();
    }
    let matched = lines()
        .filter(|(_, l)| matches!(l.outcome, Outcome::Element(_)))
        .count();
    let mut s = format!(
        "<h2 id=\"log\">Log</h2>\n<p class=\"sub\">{matched} of {total} log lines matched to the print statements that can have printed them (for each line, one of its statements ran, in the log's order); each statement's page shows its lines beside it.</p>\n<table class=\"loglines\">\n<tr><th class=\"num\">#</th><th>log line</th><th>printed by</th></tr>\n"
    );
    for (m, l) in lines().take(MAX_LOG_ROWS) {
        let by = match l.outcome {
            Outcome::Element(_) => {
                let nodes: Vec<NodeId> = l.sites.iter().map(|&k| m.sites[k].site).collect();
                match NodeSet::new(nodes) {
                    Some(set) => {
                        let p = c.places(&set);
                        match p.len() {
                            1 => p[0].clone(),
                            k if k <= 5 => format!("one of {k}: {}", p.join("; ")),
                            k => format!("one of {k}: {}; ...", p[..5].join("; ")),
                        }
                    }
                    None => String::new(),
                }
            }
            Outcome::Continuation => "left out: may continue a multi-line message".into(),
            Outcome::Unmatched => "left out: no format string of the program fits".into(),
            Outcome::CutShort => {
                "left out: the last line, with no newline after it, may be cut short".into()
            }
            Outcome::Blank => continue,
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"num\">{}</td><td><code>{}</code></td><td>{by}</td></tr>",
            l.number,
            escape(&shorten(&l.text, 200))
        );
    }
    if total > MAX_LOG_ROWS {
        let _ = writeln!(
            s,
            "<tr><td></td><td colspan=\"2\">... {} more lines (--explain-log lists them all)</td></tr>",
            total - MAX_LOG_ROWS
        );
    }
    s.push_str("</table>\n");
    s
}

/// "Why it crashed": the suspects of the faulting value, ranked as
/// `postmortem why` ranks them ([`super::chain::suspects`]), each linked
/// to its line. Empty without suspects.
fn why_panel(c: &Ctx<'_, '_>, f: &crate::image::fault::Fault) -> String {
    let suspects = super::chain::suspects(f, 10);
    if suspects.is_empty() {
        return String::new();
    }
    let g = c.r.graph;
    let mut s = String::from(
        "<h2>Why it crashed</h2>\n<p class=\"sub\">The statements that made the faulting value and the checks that let it through, most likely root cause first, as <code>postmortem why</code> ranks them (Yes: on every execution the report allows).</p>\n<ol class=\"why\">\n",
    );
    for x in &suspects {
        // The line the text names (a parameter's is its declaration, not
        // its store's node's), else the node's first.
        let named =
            x.at.rsplit_once(':')
                .and_then(|(_, l)| l.parse::<u32>().ok());
        let place = x
            .node
            .and_then(|n| Some((g.file_of(n)?, named.or(g.lines(n).first().copied())?)))
            .map(|(file, line)| {
                let kind = x.at.rsplit_once(" at ").map_or(x.at.as_str(), |(k, _)| k);
                format!("{} at {}", escape(kind), c.line_link(file, line))
            })
            .unwrap_or_else(|| escape(&x.at));
        let _ = writeln!(
            s,
            "<li><span class=\"badge {}\">{}</span> {place}: {}: {}</li>",
            x.label,
            x.label,
            escape(&x.variable),
            escape(&x.reason)
        );
    }
    s.push_str("</ol>\n");
    s
}

/// The headline and the stack.
fn stack_section(c: &Ctx<'_, '_>, frames: &[ShownFrame<'_>]) -> String {
    let mut s = String::new();
    if let Some(f) = c.r.fault {
        let _ = writeln!(
            s,
            "<p class=\"fault\"><b>Crash:</b> {}</p>",
            escape(&f.line())
        );
        for cause in &f.causes {
            let _ = writeln!(
                s,
                "<p class=\"fault\"><b>Cause:</b> {}</p>",
                escape(&cause.line())
            );
        }
        s.push_str(&why_panel(c, f));
    }
    if frames.is_empty() {
        s.push_str("<p>The report gives no crash stack.</p>\n");
        return s;
    }
    let _ = writeln!(
        s,
        "<h2>Stack, innermost first (as gdb prints it)</h2>\n<p class=\"sub\">Each frame links to its line; its function's page shows, beside the labels, what ran in that frame before it stopped.</p>\n<ol class=\"stack\" start=\"0\">"
    );
    for f in frames {
        let what = match f.callee {
            None => format!("{} {}", f.badge(), c.set(f.stop)),
            Some(callee) => format!(
                "{} {}, calling {}",
                f.badge(),
                c.set(f.stop),
                c.entry_names(callee)
            ),
        };
        let local = f
            .local
            .map(|l| {
                let count = |want: Label| l.labels.iter().filter(|&&(_, x)| x == want).count();
                format!(
                    " <span class=\"sub\">(in this frame: {} Yes, {} No, {} Maybe statements)</span>",
                    count(Label::Yes),
                    count(Label::No),
                    count(Label::Maybe)
                )
            })
            .unwrap_or_default();
        // The source line it stopped on, when it is one line.
        let text = match stop_line(c, f) {
            Some((file, line)) => {
                c.r.sources
                    .lines(file)
                    .and_then(|ls| source_line(&ls, line))
                    .filter(|t| !t.is_empty())
                    .map(|t| format!("<pre>{}</pre>", escape(&t)))
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        let vals = frame_values_html(c, f);
        let _ = writeln!(
            s,
            "<li id=\"frame{}\">{what}{local}{text}{vals}</li>",
            f.number
        );
    }
    s.push_str("</ol>\n");
    s
}

/// One step of the witness, in the program's own code.
#[derive(Clone, PartialEq, Eq)]
enum Step {
    Enter(FuncId),
    Back(FuncId),
    Line(FileId, u32),
}

/// A step or a run of steps repeated (loop iterations).
enum Folded {
    One(Step),
    Repeat(Vec<Step>, usize),
}

/// Folds immediately repeated runs (length 1 to 12) of steps.
fn fold(steps: &[Step]) -> Vec<Folded> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let mut best: Option<(usize, usize)> = None;
        for len in 1..=12.min(steps.len() - i) {
            let mut reps = 1;
            while i + (reps + 1) * len <= steps.len()
                && steps[i..i + len] == steps[i + reps * len..i + (reps + 1) * len]
            {
                reps += 1;
            }
            if reps > 1 && best.is_none_or(|(l, r)| len * reps > l * r) {
                best = Some((len, reps));
            }
        }
        match best {
            Some((len, reps)) => {
                out.push(Folded::Repeat(steps[i..i + len].to_vec(), reps));
                i += len * reps;
            }
            None => {
                out.push(Folded::One(steps[i].clone()));
                i += 1;
            }
        }
    }
    out
}

/// Whether a function is the program's own code: it has a source file,
/// and is neither synthetic (`<external code>`) nor a module constructor
/// of the instrumentation or a sanitizer runtime callback.
fn own_code(g: &Icfg, f: FuncId) -> bool {
    let func = g.function(f);
    let name = &*func.name;
    func.file.is_some()
        && !name.starts_with('<')
        && !name.contains("module_ctor")
        && !name.starts_with("__sanitizer")
        && !name.starts_with("_GLOBAL__sub_I")
        && !name.starts_with("__cxx_global_var_init")
}

/// The witness as steps of the program's own code.
fn witness_steps(g: &Icfg, path: &[NodeId]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut prev: Option<NodeId> = None;
    for &n in path {
        let f = g.func_of(n);
        if own_code(g, f) {
            let kind_in = prev.and_then(|p| g.succs(p).find(|&(w, _)| w == n).map(|(_, k)| k));
            match (g.kind(n), kind_in) {
                (NodeKind::Entry, _) => steps.push(Step::Enter(f)),
                (_, Some(EdgeKind::Return)) => steps.push(Step::Back(f)),
                _ => {}
            }
            if let Some((file, line)) = place(g, n) {
                let st = Step::Line(file, line);
                if steps.last() != Some(&st) {
                    steps.push(st);
                }
            }
        }
        prev = Some(n);
    }
    steps
}

/// What the example path is, and what it is not.
pub const WITNESS_NOTE: &str = "This is one path that the program's control flow allows \
and that fits the failure data as the solver checked it, <b>not necessarily what the program \
did</b>: the program's data (variable values, input) may rule it out. The Yes and No labels \
hold for every such path; this is just an example.";

/// The most witness items listed.
const MAX_WITNESS_ITEMS: usize = 2000;

fn witness_section(c: &Ctx<'_, '_>, line_label: &dyn Fn(FileId, u32) -> Option<Label>) -> String {
    let r = c.r;
    let Some(w) = r.witness else {
        return String::new();
    };
    let g = r.graph;
    let steps = witness_steps(g, w);
    let folded = fold(&steps);
    let step_html = |st: &Step| -> String {
        match st {
            Step::Enter(f) => format!("enter {}", c.func(*f)),
            Step::Back(f) => format!("back in {}", c.func(*f)),
            Step::Line(file, line) => {
                let text = r
                    .sources
                    .lines(*file)
                    .and_then(|ls| source_line(&ls, *line))
                    .unwrap_or_default();
                format!(
                    "<span class=\"{}\">{}</span> <code>{}</code>",
                    class(line_label(*file, *line)),
                    c.line_link(*file, *line),
                    escape(&text)
                )
            }
        }
    };
    let mut check = r.witness_check.map_or(String::new(), |v| {
        format!(
            "<p>Checked against the program's data (constants stored and returned on it, its branches' tests, the core's values): {}</p>\n",
            escape(&v.line())
        )
    });
    if !r.witness_set_aside.is_empty() {
        check += "<p>Example paths found before this one, set aside because the program's data rules them out:</p>\n<ul>\n";
        for why in r.witness_set_aside {
            let _ = writeln!(check, "<li>{}</li>", escape(why));
        }
        check += "</ul>\n";
    }
    let mut s = format!(
        "<details>\n<summary>An example path ({} steps in the program's own code; library and runtime code left out, loop iterations folded)</summary>\n<p>{WITNESS_NOTE}</p>\n{check}<ol>\n",
        steps.len()
    );
    for item in folded.iter().take(MAX_WITNESS_ITEMS) {
        match item {
            Folded::One(st) => {
                let _ = writeln!(s, "<li>{}</li>", step_html(st));
            }
            Folded::Repeat(run, reps) => {
                let _ = writeln!(
                    s,
                    "<li>{reps} times: {}</li>",
                    run.iter().map(step_html).collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    if folded.len() > MAX_WITNESS_ITEMS {
        let _ = writeln!(s, "<li>... {} more</li>", folded.len() - MAX_WITNESS_ITEMS);
    }
    s.push_str("</ol>\n</details>\n");
    s
}

/// The source files with their share of Yes, No and Maybe lines: those
/// of the stack first, the crash's first of all.
fn files_section(c: &Ctx<'_, '_>, files: &[FileLines], frames: &[ShownFrame<'_>]) -> String {
    let g = c.r.graph;
    let mut s = String::new();
    let mut rank: BTreeMap<FileId, usize> = BTreeMap::new();
    for (i, f) in frames.iter().enumerate() {
        for file in stop_files(g, f.stop) {
            rank.entry(file).or_insert(i);
        }
    }
    let mut ordered: Vec<&FileLines> = files.iter().collect();
    ordered.sort_by_key(|fl| rank.get(&fl.file).copied().unwrap_or(usize::MAX));
    s.push_str("<h2>Source files</h2>\n");
    if !c.root.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"sub\">Paths are relative to <code>{}</code>.</p>",
            escape(&c.root)
        );
    }
    s.push_str("<table>\n<tr><th>file</th><th class=\"num\">lines</th><th class=\"num\">Yes</th><th class=\"num\">No</th><th class=\"num\">Maybe</th><th></th><th></th></tr>\n");
    for fl in ordered {
        let (y, n, m) = line_counts(fl);
        let total = fl.lines.len();
        let bar = |cls: &str, k: usize| {
            format!(
                "<span class=\"bar {cls}\" style=\"width:{:.1}px\"></span>",
                1.5 * pct(k, total)
            )
        };
        let on_stack: Vec<String> = frames
            .iter()
            .filter(|f| stop_files(g, f.stop).contains(&fl.file))
            .map(|f| format!("#{}", f.number))
            .collect();
        let on_stack = if on_stack.is_empty() {
            String::new()
        } else {
            format!("frames {}", on_stack.join(", "))
        };
        let _ = writeln!(
            s,
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{total}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td>{}{}{}</td><td class=\"sub\">{on_stack}</td></tr>",
            file_page(fl.file),
            escape(c.path(fl.file)),
            pct(y, total),
            pct(n, total),
            pct(m, total),
            bar("y", y),
            bar("no", n),
            bar("m", m)
        );
    }
    s.push_str("</table>\n");
    s
}

/// The index page.
pub fn index_html(r: &HtmlReport<'_>, files: &[FileLines]) -> String {
    let g = r.graph;
    let c = Ctx {
        r,
        root: common_root(files.iter().map(|fl| g.file_path(fl.file))),
    };
    let frames = shown_frames(r);
    let mut s = head(r.title);
    match frames.first() {
        Some(f) => {
            let what = if f.callee.is_none() {
                "Crash in"
            } else {
                "Stopped in"
            };
            let funcs: BTreeSet<FuncId> = f.stop.nodes().iter().map(|&n| g.func_of(n)).collect();
            let names: Vec<String> = funcs.into_iter().map(|f| c.func(f)).collect();
            let places: BTreeSet<(FileId, u32)> =
                f.stop.nodes().iter().filter_map(|&n| place(g, n)).collect();
            let at = match places.iter().next() {
                Some(&(file, line)) if places.len() == 1 => {
                    format!(" at {}", c.line_link(file, line))
                }
                _ => String::new(),
            };
            let _ = writeln!(s, "<h1>{what} {}{at}</h1>", names.join(" or "));
        }
        None => {
            let _ = writeln!(s, "<h1>{}</h1>", escape(r.title));
        }
    }
    let _ = writeln!(s, "<p class=\"sub\">{}. {LEGEND_HTML}</p>", escape(r.title));
    s.push_str(&stack_section(&c, &frames));
    if let Some(sug) = r.suggestions {
        s.push_str(&suggest_section(&c, sug));
    }
    s.push_str(&log_section(&c));
    s.push_str(&files_section(&c, files, &frames));
    let line_label = |file: FileId, line: u32| {
        files
            .iter()
            .find(|fl| fl.file == file)
            .and_then(|fl| fl.lines.get(&line).copied())
    };
    s.push_str(&witness_section(&c, &line_label));
    s.push_str(&values_section(r));
    if !r.weakened.is_empty() {
        let _ = writeln!(
            s,
            "<details>\n<summary>Weakened constraints ({}): the answers stay sound but may be less precise</summary>\n<ul>",
            r.weakened.len()
        );
        for w in r.weakened {
            let _ = writeln!(
                s,
                "<li><code>{}</code>: {}</li>",
                escape(&w.origin.to_string()),
                escape(&w.how)
            );
        }
        s.push_str("</ul>\n</details>\n");
    }
    let counts = Counts::of(r.labels);
    let t = counts.total();
    let _ = writeln!(
        s,
        "<details>\n<summary>Node counts</summary>\n<p>{t} nodes of the control-flow graph: <span class=\"y\">{} Yes ({:.1}%)</span>, <span class=\"no\">{} No ({:.1}%)</span>, <span class=\"m\">{} Maybe ({:.1}%)</span>.</p>\n</details>",
        counts.yes,
        pct(counts.yes, t),
        counts.no,
        pct(counts.no, t),
        counts.maybe,
        pct(counts.maybe, t),
    );
    s.push_str("</body>\n</html>\n");
    s
}

/// "What to observe next": each point linked to its line, with the lines
/// its observation decides either way.
fn suggest_section(c: &Ctx<'_, '_>, sug: &postmortem_core::suggest::Suggestions) -> String {
    let g = c.r.graph;
    let mut s = String::from("<h2 id=\"suggest\">What to observe next</h2>\n");
    let _ = writeln!(
        s,
        "<p class=\"sub\">Observing one of these points (a log line, a coverage flag, a breakpoint in a reproduction) decides at least <em>worst</em> of the {} Maybe lines, whatever it shows: {}.</p>",
        sug.maybe_lines,
        escape(&crate::write::suggest::summary_line(sug))
    );
    if sug.top.is_empty() {
        s.push_str("<p>Nothing to suggest: no single point's observation is sure to decide a Maybe line both ways.</p>\n");
        return s;
    }
    s.push_str("<table class=\"suggest\">\n<tr><th>#</th><th>point</th><th>function</th><th>if ran</th><th>if not</th><th>worst</th></tr>\n");
    for (i, t) in sug.top.iter().enumerate() {
        let at = match place(g, t.point) {
            Some((file, line)) => c.line_link(file, line),
            None => escape(g.ext_id(t.point)),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{at}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            c.func(g.func_of(t.point)),
            escape(&crate::write::suggest::count(t, t.if_ran)),
            escape(&crate::write::suggest::count(t, t.if_not)),
            escape(&crate::write::suggest::count(t, t.worst()))
        );
    }
    s.push_str("</table>\n");
    s
}

/// The most Local-label columns on a file page (frames of the file
/// beyond it are listed, not shown).
const MAX_FRAME_COLUMNS: usize = 8;

/// The badges on the stop lines of the frames in a file.
fn stop_badges(g: &Icfg, frames: &[ShownFrame<'_>], file: FileId) -> BTreeMap<u32, Vec<String>> {
    let mut badges: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for f in frames {
        let lines: BTreeSet<u32> = f
            .stop
            .nodes()
            .iter()
            .filter_map(|&n| place(g, n))
            .filter(|&(at, _)| at == file)
            .map(|(_, l)| l)
            .collect();
        for l in lines {
            badges.entry(l).or_default().push(f.badge());
        }
    }
    badges
}

/// A frame's Local-label column: its labels by line.
type Column<'f, 'r> = (&'f ShownFrame<'r>, BTreeMap<u32, Label>);

/// The Local-label columns of a file's page: the frames whose function
/// is in the file, with their labels by line (at most
/// [`MAX_FRAME_COLUMNS`]), and how many more frames there are.
fn frame_columns<'f, 'r>(
    g: &Icfg,
    frames: &'f [ShownFrame<'r>],
    file: FileId,
) -> (Vec<Column<'f, 'r>>, usize) {
    let mut columns: Vec<Column<'_, '_>> = frames
        .iter()
        .filter_map(|f| {
            let local = f.local?;
            let lines = local_lines(g, local, file);
            (!lines.is_empty()).then_some((f, lines))
        })
        .collect();
    let left = columns.len().saturating_sub(MAX_FRAME_COLUMNS);
    columns.truncate(MAX_FRAME_COLUMNS);
    (columns, left)
}

/// The page of one file.
pub fn file_html(r: &HtmlReport<'_>, fl: &FileLines, root: &str) -> String {
    let g = r.graph;
    let c = Ctx {
        r,
        root: root.to_string(),
    };
    let path = c.path(fl.file).to_string();
    let mut s = head(&format!("{path} - {}", r.title));
    let (y, n, m) = line_counts(fl);
    let total = fl.lines.len();
    let _ = writeln!(
        s,
        "<p><a href=\"index.html\">&larr; the crash</a></p>\n<h1>{}</h1>",
        escape(&path)
    );
    let _ = writeln!(
        s,
        "<p>{total} lines with statements: <span class=\"y\">{y} Yes ({:.1}%)</span>, <span class=\"no\">{n} No ({:.1}%)</span>, <span class=\"m\">{m} Maybe ({:.1}%)</span>. {LEGEND_HTML}</p>",
        pct(y, total),
        pct(n, total),
        pct(m, total)
    );
    if !r.why.nodes.is_empty() {
        s.push_str("<p class=\"sub\">Rest the mouse on a line's Global label to see which observations force it (a smallest set that does).</p>\n");
    }
    let frames = shown_frames(r);
    let badges = stop_badges(g, &frames, fl.file);
    let (shown, left) = frame_columns(g, &frames, fl.file);
    if !shown.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"sub\">Gutter: <b>Global</b> is what ran anywhere before the crash; <b>#N</b> is what ran in stack frame #N (that call of its function) before it stopped at its badge.{}</p>",
            if left == 0 {
                String::new()
            } else {
                format!(" {left} more frames of this file are not shown.")
            }
        );
    }
    let text = r.sources.lines(fl.file);
    if text.is_none() {
        s.push_str("<p>The source file could not be read: only the lines with statements are listed.</p>\n");
    }
    s.push_str("<table class=\"src\">\n<tr><th></th><th>Global</th>");
    for (f, _) in &shown {
        let func = f.local.map(|l| c.func(l.function)).unwrap_or_default();
        let _ = write!(
            s,
            "<th><a href=\"index.html#frame{}\">#{}</a> {func}</th>",
            f.number, f.number
        );
    }
    s.push_str("<th></th><th></th></tr>\n");
    let why = c.why_by_line();
    let notes = line_notes(&c, fl.file, &frames);
    let row = |s: &mut String, line: u32, src: &str| {
        let l = fl.lines.get(&line).copied();
        let badge: String = badges.get(&line).map(|v| v.concat()).unwrap_or_default();
        let locals: String = shown
            .iter()
            .map(|(_, lines)| {
                let ll = lines.get(&line).copied();
                format!("<td class=\"l {}\">{}</td>", class(ll), label_word(ll))
            })
            .collect();
        let _ = writeln!(
            s,
            "<tr id=\"L{line}\" class=\"{}\"><td class=\"n\"><a href=\"#L{line}\">{line}</a></td><td class=\"g\"{}>{}</td>{locals}<td>{badge}</td><td class=\"s\">{}</td>{}</tr>",
            class(l),
            why.get(&(fl.file, line))
                .map(|w| format!(" title=\"{}\"", escape(w)))
                .unwrap_or_default(),
            label_word(l),
            escape(src),
            notes
                .get(&line)
                .map(|n| format!("<td class=\"note\">{n}</td>"))
                .unwrap_or_default()
        );
    };
    match text {
        Some(lines) => {
            let last = (lines.len() as u32).max(fl.lines.keys().next_back().copied().unwrap_or(0));
            for line in 1..=last {
                row(
                    &mut s,
                    line,
                    lines.get(line as usize - 1).copied().unwrap_or(""),
                );
            }
        }
        None => {
            for &line in fl.lines.keys() {
                row(&mut s, line, "");
            }
        }
    }
    s.push_str("</table>\n</body>\n</html>\n");
    s
}

/// Writes `dir/index.html` and one page per file (creating `dir`).
/// Returns the paths written.
pub fn write_html(dir: &Path, r: &HtmlReport<'_>) -> io::Result<Vec<PathBuf>> {
    let ctx = |e: io::Error, p: &Path| io::Error::new(e.kind(), format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| ctx(e, dir))?;
    let files = by_line(r.graph, r.labels);
    let root = common_root(files.iter().map(|fl| r.graph.file_path(fl.file)));
    let mut written = Vec::with_capacity(files.len() + 1);
    let index = dir.join("index.html");
    std::fs::write(&index, index_html(r, &files)).map_err(|e| ctx(e, &index))?;
    written.push(index);
    for fl in &files {
        let p = dir.join(file_page(fl.file));
        std::fs::write(&p, file_html(r, fl, &root)).map_err(|e| ctx(e, &p))?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use postmortem_core::{Frame, IcfgBuilder, NodeKind, NodeSpec, Origin};

    fn graph() -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let f = b.function("f<int>");
        let ext = b.function("<external code>");
        b.set_function_file(main, "/src/app/<main>.c");
        b.set_function_file(f, "/src/app/lib/f.c");
        let mut v = Vec::new();
        for (id, kind, func, line) in [
            ("me", NodeKind::Entry, main, 1),
            ("c", NodeKind::CallSite, main, 2),
            ("fe", NodeKind::Entry, f, 1),
            ("fs", NodeKind::Statement, f, 3),
            ("fl", NodeKind::Statement, f, 4),
            ("xe", NodeKind::Entry, ext, 0),
            ("fs#2", NodeKind::Statement, f, 3),
        ] {
            let lines: &[u32] = if line == 0 { &[] } else { &[line] };
            v.push(
                b.add_node(NodeSpec {
                    ext_id: id,
                    kind,
                    func,
                    label: "",
                    lines,
                })
                .unwrap(),
            );
        }
        b.add_flow_edge(v[0], v[1]);
        b.add_flow_edge(v[2], v[3]);
        b.add_flow_edge(v[3], v[4]);
        b.add_flow_edge(v[4], v[3]);
        b.add_flow_edge(v[4], v[6]);
        b.add_call_edge(v[1], v[2]);
        (b.build().unwrap(), v)
    }

    #[test]
    fn common_root_is_a_directory() {
        assert_eq!(common_root(["/a/b/c.c", "/a/b/d/e.c"]), "/a/b/");
        assert_eq!(common_root(["/a/b/c.c"]), "/a/b/");
        assert_eq!(common_root(["a.c", "b.c"]), "");
        assert_eq!(common_root(["/x/a.c", "/y/b.c"]), "");
        assert_eq!(common_root(std::iter::empty()), "");
    }

    #[test]
    fn pages_start_from_the_crash_and_are_escaped_and_linked() {
        let (g, v) = graph();
        let labels = vec![
            Label::Yes,
            Label::Yes,
            Label::Yes,
            Label::Maybe,
            Label::Maybe,
            Label::No,
            Label::Maybe,
        ];
        let report = Report {
            stack: vec![Frame {
                call: NodeSet::one(v[1]),
                entry: NodeSet::one(v[2]),
            }],
            // Two nodes of one line: named once.
            crash: NodeSet::new(vec![v[3], v[6]]),
            ..Report::default()
        };
        let mut sources = Sources::none();
        sources.insert(
            g.file_of(v[0]).unwrap(),
            "int main() {\n  if (a < b && c > \"d\") f();\n}\n",
        );
        let weakened = [Weakening {
            origin: Origin::ObsYes(0),
            how: "dropped <x>".into(),
        }];
        // Through external code, and a loop on line 3.
        let witness = [v[0], v[5], v[1], v[2], v[3], v[4], v[3], v[4], v[3]];
        let frames = [FrameLabels {
            frame: 1,
            function: g.func_of(v[2]),
            stop: vec![v[3]],
            labels: vec![(v[2], Label::Yes), (v[3], Label::No), (v[6], Label::No)],
        }];
        let r = HtmlReport {
            graph: &g,
            labels: &labels,
            report: &report,
            witness: Some(&witness),
            witness_check: None,
            witness_set_aside: &[],
            sources: &sources,
            weakened: &weakened,
            title: "postmortem: a & b",
            frames: &frames,
            why: &Why {
                nodes: vec![(v[1], vec![Origin::Frame(0)])],
                left: 0,
            },
            suggestions: None,
            values: &[],
            logs: &[],
            fault: None,
            line_notes: None,
        };
        let files = by_line(&g, &labels);
        let index = index_html(&r, &files);
        assert!(
            index.contains("<title>postmortem: a &amp; b</title>"),
            "{index}"
        );
        // The headline, then the stack innermost first.
        let h1 = index.find("<h1>Crash in <code class=\"fn\">f&lt;int&gt;</code> at <a href=\"file-1.html#L3\">lib/f.c:3</a></h1>");
        let crash = index.find("<li id=\"frame0\"><span class=\"badge crash\">#0 crash</span> <code class=\"fn\">f&lt;int&gt;</code> at <a href=\"file-1.html#L3\">lib/f.c:3</a> <span class=\"sub\">(in this frame: 1 Yes, 2 No, 0 Maybe statements)</span></li>");
        let call = index.find("<li id=\"frame1\"><span class=\"badge\">#1 call</span> <code class=\"fn\">main</code> at <a href=\"file-0.html#L2\">&lt;main&gt;.c:2</a>, calling <code class=\"fn\">f&lt;int&gt;</code><pre>if (a &lt; b &amp;&amp; c &gt; &quot;d&quot;) f();</pre></li>");
        let files_at = index.find("<h2>Source files</h2>");
        let witness_at = index.find("<details>\n<summary>An example path");
        assert!(h1.is_some() && crash.is_some() && call.is_some(), "{index}");
        assert!(
            h1 < crash && crash < call && call < files_at && files_at < witness_at,
            "{index}"
        );
        assert!(!index.contains("one of"), "{index}");
        assert!(
            index.contains("Paths are relative to <code>/src/app/</code>"),
            "{index}"
        );
        // The crash's file first.
        assert!(
            index.find("lib/f.c</a>") < index.find("&lt;main&gt;.c</a></td>"),
            "{index}"
        );
        // The witness: no external code, the loop folded.
        assert!(!index.contains("external"), "{index}");
        assert!(index.contains("<li>2 times: "), "{index}");
        assert!(index.contains("dropped &lt;x&gt;"));
        assert!(!index.contains("<x>") && !index.contains("<main>"));
        let root = common_root(files.iter().map(|fl| g.file_path(fl.file)));
        let main_page = file_html(&r, &files[0], &root);
        assert!(main_page.contains("<tr id=\"L2\" class=\"y\"><td class=\"n\"><a href=\"#L2\">2</a></td><td class=\"g\" title=\"Yes (ran on every execution that fits the failure data), forced by this: stack frame #1, the call in main at &lt;main&gt;.c:2\">Yes</td><td><span class=\"badge\">#1 call</span></td><td class=\"s\">  if (a &lt; b &amp;&amp; c &gt; &quot;d&quot;) f();</td></tr>"), "{main_page}");
        assert!(
            main_page.contains("<tr id=\"L3\" class=\"\">"),
            "{main_page}"
        );
        let f_page = file_html(&r, &files[1], &root);
        assert!(f_page.contains("could not be read"));
        // The crash frame's Local labels beside the Global ones.
        assert!(f_page.contains("<th><a href=\"index.html#frame0\">#0</a> <code class=\"fn\">f&lt;int&gt;</code></th>"), "{f_page}");
        assert!(f_page.contains("<tr id=\"L3\" class=\"m\"><td class=\"n\"><a href=\"#L3\">3</a></td><td class=\"g\">Maybe</td><td class=\"l no\">No</td><td><span class=\"badge crash\">#0 crash</span></td>"), "{f_page}");
        // Without a witness the section is left out.
        let r2 = HtmlReport { witness: None, ..r };
        assert!(!index_html(&r2, &files).contains("An example path"));
        // Suggestions, when computed: each point linked to its line.
        assert!(!index.contains("What to observe next"));
        let sug = postmortem_core::suggest::Suggestions {
            top: vec![postmortem_core::suggest::Suggestion {
                point: v[4],
                equivalent: vec![v[4]],
                if_ran: 3,
                if_not: 2,
                worst: 2,
                exact: true,
                utl_bound: false,
                alternatives: Vec::new(),
            }],
            maybe_lines: 5,
            complete: true,
            ..Default::default()
        };
        let r3 = HtmlReport {
            suggestions: Some(&sug),
            ..r2
        };
        let index3 = index_html(&r3, &files);
        assert!(
            index3.contains("<h2 id=\"suggest\">What to observe next</h2>"),
            "{index3}"
        );
        assert!(index3.contains("<tr><td>1</td><td><a href=\"file-1.html#L4\">lib/f.c:4</a></td><td><code class=\"fn\">f&lt;int&gt;</code></td><td>3</td><td>2</td><td>2</td></tr>"), "{index3}");
    }

    fn value(name: &str, value: u64, place: &str, shown: crate::vars::Shown) -> ValueUse {
        ValueUse {
            name: name.into(),
            place: place.into(),
            value,
            constraint: Some(0),
            shown,
            ..ValueUse::default()
        }
    }

    /// The values read from a core beside their frame, on the crash line
    /// that names them and on the declaration line; each log line beside
    /// the print statement it was matched to, and in the log's list; the
    /// example path folded and said to be one path, not the run.
    #[test]
    fn values_and_log_lines_are_shown_at_their_lines() {
        use crate::logs::{LineMatch, LogSite};
        use crate::vars::Shown;
        let (g, v) = graph();
        let labels = vec![Label::Yes; 7];
        let report = Report {
            stack: vec![Frame {
                call: NodeSet::one(v[1]),
                entry: NodeSet::one(v[2]),
            }],
            crash: Some(NodeSet::one(v[3])),
            ..Report::default()
        };
        let mut sources = Sources::none();
        let f_file = g.file_of(v[2]).unwrap();
        sources.insert(
            f_file,
            "void f(struct e *e, int unused) {\n  int k = 0;\n  e->next = count + k;\n  log(\"inserted %s\", e->key);\n}\n",
        );
        let values = [
            // The crash frame's local, declared on line 1.
            value(
                "e",
                0,
                "frame #0 `f`",
                Shown {
                    bytes: 8,
                    pointer: true,
                    decl: Some((v[2], 1)),
                    activation: Some(1),
                    stores: vec![],
                },
            ),
            // main's local: beside frame #1 only (line 2 does not name it).
            value(
                "argc",
                u64::from(u32::MAX),
                "frame #1 `main`",
                Shown {
                    bytes: 4,
                    pointer: false,
                    decl: None,
                    activation: Some(0),
                    stores: vec![],
                },
            ),
            // A global the crash line also stores to.
            value(
                "count",
                3,
                "global",
                Shown {
                    stores: vec![v[6]],
                    ..Shown::default()
                },
            ),
        ];
        let log = LogMatch {
            lines: vec![
                LineMatch {
                    number: 1,
                    text: "inserted <a>".into(),
                    sites: vec![0],
                    continues: vec![],
                    outcome: Outcome::Element(0),
                },
                LineMatch {
                    number: 2,
                    text: "noise".into(),
                    sites: vec![],
                    continues: vec![],
                    outcome: Outcome::Unmatched,
                },
            ],
            trace: None,
            warnings: vec![],
            sites: vec![LogSite {
                site: v[4],
                logger: "printf".into(),
                format: "inserted %s".into(),
            }],
            stream: crate::logs::LogStream::Any,
            other_streams: 0,
            other_stream_sites: Vec::new(),
            memory_left_out: 0,
        };
        let witness = [v[0], v[1], v[2], v[3]];
        let r = HtmlReport {
            graph: &g,
            labels: &labels,
            report: &report,
            witness: Some(&witness),
            witness_check: None,
            witness_set_aside: &[],
            sources: &sources,
            weakened: &[],
            title: "t",
            frames: &[],
            why: &Why::default(),
            suggestions: None,
            values: &values,
            logs: std::slice::from_ref(&log),
            fault: None,
            line_notes: None,
        };
        let files = by_line(&g, &labels);
        let index = index_html(&r, &files);
        let e = "<code class=\"val\" title=\"read from the core, frame #0 `f`; used as evidence\">e = 0x0</code>";
        let argc = "argc = 4294967295 (-1)</code>";
        let frame0 = index.find("<li id=\"frame0\">").unwrap();
        let frame1 = index.find("<li id=\"frame1\">").unwrap();
        let at_e = index.find(e).expect(&index);
        let at_argc = index.find(argc).expect(&index);
        assert!(
            frame0 < at_e && at_e < frame1 && frame1 < at_argc,
            "{index}"
        );
        // The log, each line with what printed it.
        assert!(
            index.contains("<h2 id=\"log\">Log</h2>\n<p class=\"sub\">1 of 2 log lines matched"),
            "{index}"
        );
        assert!(index.contains("<tr><td class=\"num\">1</td><td><code>inserted &lt;a&gt;</code></td><td><code class=\"fn\">f&lt;int&gt;</code> at <a href=\"file-1.html#L4\">lib/f.c:4</a></td></tr>"), "{index}");
        assert!(index.contains("<tr><td class=\"num\">2</td><td><code>noise</code></td><td>left out: no format string of the program fits</td></tr>"), "{index}");
        // Every value in a folded table.
        assert!(
            index.contains("<details>\n<summary>Values read from the core (3)</summary>"),
            "{index}"
        );
        // The example path: folded, one path the control flow allows.
        assert!(
            index.contains("<details>\n<summary>An example path ("),
            "{index}"
        );
        assert!(
            index.contains(WITNESS_NOTE) && !index.contains("<details open"),
            "{index}"
        );
        assert!(WITNESS_NOTE.contains("not necessarily what the program did"));
        let root = common_root(files.iter().map(|fl| g.file_path(fl.file)));
        let f_page = file_html(&r, &files[1], &root);
        let row = |l: u32| {
            let from = f_page.find(&format!("<tr id=\"L{l}\"")).expect(&f_page);
            let to = from + f_page[from..].find("</tr>").unwrap();
            f_page[from..to].to_string()
        };
        // The crash line names `e` and `count`, not `argc` (another frame).
        let crash_row = row(3);
        assert!(crash_row.contains("<td class=\"note\"><code class=\"val\" title=\"read from the core, frame #0 `f`; used as evidence\">#0 e = 0x0</code><code class=\"val\" title=\"read from the core, global; used as evidence; the frame stopped on this line, which stores to it: the value may be what the memory held before that store\">count = 3 (before this line's store?)</code></td>"), "{crash_row}");
        assert!(!f_page.contains("argc"), "{f_page}");
        // The declaration line.
        assert!(row(1).contains(">#0 e = 0x0</code>"), "{}", row(1));
        // The print statement's line: its log line.
        assert!(row(4).contains("<td class=\"note\"><span class=\"log\" title=\"log line 1, printed by the statement on this line\">log 1: inserted &lt;a&gt;</span></td>"), "{}", row(4));
        assert!(!row(2).contains("note"), "{}", row(2));
        assert!(!f_page.contains("noise"), "{f_page}");
    }

    #[test]
    fn writes_the_directory() {
        let (g, _) = graph();
        let labels = vec![Label::No; 7];
        let report = Report::default();
        let sources = Sources::none();
        let dir = std::env::temp_dir().join(format!("pm-html-test-{}", std::process::id()));
        let r = HtmlReport {
            graph: &g,
            labels: &labels,
            report: &report,
            witness: None,
            witness_check: None,
            witness_set_aside: &[],
            sources: &sources,
            weakened: &[],
            title: "t",
            frames: &[],
            why: &Why::default(),
            suggestions: None,
            values: &[],
            logs: &[],
            fault: None,
            line_notes: None,
        };
        let written = write_html(&dir, &r).unwrap();
        assert_eq!(written.len(), 3);
        assert!(std::fs::read_to_string(dir.join("index.html"))
            .unwrap()
            .contains("no crash stack"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
