//! A static HTML report (`--format html -o DIR`).
//!
//! `DIR/index.html` holds the node counts, the crash stack (outermost
//! frame first, every call site and crash node linked to its source line),
//! the witness path when one is given, the weakened constraints, and the
//! list of files with their Yes / No / Maybe line counts and percentages.
//! `DIR/file-<N>.html` (one per file with labelled lines, `N` the file's
//! index in the graph) lists the source with every line coloured: green
//! Yes, red No, amber Maybe; lines of the crash stack carry a badge, and
//! every line has an anchor `#L<line>`.
//!
//! Pages are self-contained (inline CSS, no script, no external resource)
//! and every text from the inputs is HTML-escaped.

use crate::annotate::{label_word, Sources, LEGEND};
use postmortem_core::summary::{by_line, Counts, FileLines};
use postmortem_core::{FileId, Icfg, Label, NodeId, NodeSet, Report, Weakening};
use std::collections::BTreeMap;
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
    /// Source texts.
    pub sources: &'a Sources,
    /// Constraints the solver weakened.
    pub weakened: &'a [Weakening],
    /// The page title (e.g. the inputs' names).
    pub title: &'a str,
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

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse}td,th{padding:.15em .6em;text-align:left}\
th{border-bottom:1px solid #999}.num{text-align:right}\
.src td{padding:0 .5em;vertical-align:top}.src td.s{white-space:pre;font-family:ui-monospace,monospace}\
.src td.n{color:#777;text-align:right;font-family:ui-monospace,monospace}.src td.n a{color:inherit;text-decoration:none}\
.y{background:#d5f5d5}.no{background:#f8d0d0}.m{background:#fbe6b0}\
.bar{display:inline-block;height:.8em;vertical-align:middle}\
.badge{font-size:.8em;background:#333;color:#fff;border-radius:.3em;padding:0 .3em;margin-right:.2em}\
code{font-family:ui-monospace,monospace}:target{outline:2px solid #36c}";

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

/// A link to a node's line (or its id when it has no line).
fn node_link(g: &Icfg, n: NodeId, prefix: &str) -> String {
    let func = escape(&g.function(g.func_of(n)).name);
    match place(g, n) {
        Some((f, l)) => format!(
            "<code>{func}</code> at <a href=\"{prefix}{}#L{l}\">{}:{l}</a>",
            file_page(f),
            escape(g.file_path(f))
        ),
        None => format!(
            "<code>{func}</code> node <code>{}</code>",
            escape(g.ext_id(n))
        ),
    }
}

fn set_links(g: &Icfg, s: &NodeSet, prefix: &str) -> String {
    let links: Vec<String> = s.nodes().iter().map(|&n| node_link(g, n, prefix)).collect();
    if links.len() == 1 {
        links.into_iter().next().unwrap_or_default()
    } else {
        format!("one of {}: {}", links.len(), links.join("; "))
    }
}

fn entry_names(g: &Icfg, s: &NodeSet) -> String {
    let names: Vec<String> = s
        .nodes()
        .iter()
        .map(|&n| format!("<code>{}</code>", escape(&g.function(g.func_of(n)).name)))
        .collect();
    names.join(" or ")
}

/// The crash-stack section.
fn stack_section(r: &HtmlReport<'_>) -> String {
    let g = r.graph;
    let mut s = String::from("<h2>Crash stack</h2>\n");
    if r.report.stack.is_empty() && r.report.crash.is_none() {
        s.push_str("<p>The report gives no crash stack.</p>\n");
        return s;
    }
    s.push_str("<ol start=\"0\">\n");
    for f in &r.report.stack {
        let _ = writeln!(
            s,
            "<li>call in {} &rarr; enters {}</li>",
            set_links(g, &f.call, ""),
            entry_names(g, &f.entry)
        );
    }
    if let Some(c) = &r.report.crash {
        let _ = writeln!(
            s,
            "<li><span class=\"badge\">crash</span> {}</li>",
            set_links(g, c, "")
        );
    }
    s.push_str("</ol>\n");
    s
}

fn witness_section(r: &HtmlReport<'_>) -> String {
    let Some(w) = r.witness else {
        return String::new();
    };
    let mut s = format!(
        "<h2>Witness path</h2>\n<p>An execution consistent with the report ({} nodes).</p>\n<ol>\n",
        w.len()
    );
    for &n in w {
        let label = r.labels.get(n.index()).copied();
        let _ = writeln!(
            s,
            "<li class=\"{}\">{}</li>",
            class(label),
            node_link(r.graph, n, "")
        );
    }
    s.push_str("</ol>\n");
    s
}

fn line_counts(fl: &FileLines) -> (usize, usize, usize) {
    (
        fl.with(Label::Yes).count(),
        fl.with(Label::No).count(),
        fl.with(Label::Maybe).count(),
    )
}

/// The index page.
pub fn index_html(r: &HtmlReport<'_>, files: &[FileLines]) -> String {
    let g = r.graph;
    let mut s = head(r.title);
    let _ = writeln!(s, "<h1>{}</h1>", escape(r.title));
    let c = Counts::of(r.labels);
    let t = c.total();
    let _ = writeln!(
        s,
        "<p>{t} nodes: <span class=\"y\">{} Yes ({:.1}%)</span>, <span class=\"no\">{} No ({:.1}%)</span>, <span class=\"m\">{} Maybe ({:.1}%)</span>.</p>\n<p>{}.</p>",
        c.yes,
        pct(c.yes, t),
        c.no,
        pct(c.no, t),
        c.maybe,
        pct(c.maybe, t),
        escape(LEGEND)
    );
    s.push_str(&stack_section(r));
    s.push_str(&witness_section(r));
    if !r.weakened.is_empty() {
        s.push_str("<h2>Weakened constraints</h2>\n<p>Answers stay sound but may be less precise.</p>\n<ul>\n");
        for w in r.weakened {
            let _ = writeln!(
                s,
                "<li><code>{}</code>: {}</li>",
                escape(&w.origin.to_string()),
                escape(&w.how)
            );
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Files</h2>\n<table>\n<tr><th>file</th><th class=\"num\">lines</th><th class=\"num\">Yes</th><th class=\"num\">No</th><th class=\"num\">Maybe</th><th></th></tr>\n");
    for fl in files {
        let (y, n, m) = line_counts(fl);
        let total = fl.lines.len();
        let bar = |cls: &str, k: usize| {
            format!(
                "<span class=\"bar {cls}\" style=\"width:{:.1}px\"></span>",
                1.5 * pct(k, total)
            )
        };
        let _ = writeln!(
            s,
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{total}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td>{}{}{}</td></tr>",
            file_page(fl.file),
            escape(g.file_path(fl.file)),
            pct(y, total),
            pct(n, total),
            pct(m, total),
            bar("y", y),
            bar("no", n),
            bar("m", m)
        );
    }
    s.push_str("</table>\n</body>\n</html>\n");
    s
}

/// Badges for the lines of `file` that the crash stack names.
fn stack_badges(r: &HtmlReport<'_>, file: FileId) -> BTreeMap<u32, Vec<String>> {
    let mut b: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let g = r.graph;
    let mut mark = |set: &NodeSet, what: String| {
        for &n in set.nodes() {
            if let Some((f, l)) = place(g, n) {
                if f == file {
                    let v = b.entry(l).or_default();
                    if !v.contains(&what) {
                        v.push(what.clone());
                    }
                }
            }
        }
    };
    for (i, f) in r.report.stack.iter().enumerate() {
        mark(&f.call, format!("frame {i}"));
    }
    if let Some(c) = &r.report.crash {
        mark(c, "crash".into());
    }
    b
}

/// The page of one file.
pub fn file_html(r: &HtmlReport<'_>, fl: &FileLines) -> String {
    let g = r.graph;
    let path = g.file_path(fl.file);
    let mut s = head(&format!("{path} - {}", r.title));
    let (y, n, m) = line_counts(fl);
    let total = fl.lines.len();
    let _ = writeln!(
        s,
        "<p><a href=\"index.html\">&larr; {}</a></p>",
        escape(r.title)
    );
    let _ = writeln!(s, "<h1>{}</h1>", escape(path));
    let _ = writeln!(
        s,
        "<p>{total} lines with statements: <span class=\"y\">{y} Yes ({:.1}%)</span>, <span class=\"no\">{n} No ({:.1}%)</span>, <span class=\"m\">{m} Maybe ({:.1}%)</span>.</p>",
        pct(y, total),
        pct(n, total),
        pct(m, total)
    );
    let badges = stack_badges(r, fl.file);
    let text = r.sources.lines(fl.file);
    if text.is_none() {
        s.push_str("<p>The source file could not be read: only the lines with statements are listed.</p>\n");
    }
    s.push_str("<table class=\"src\">\n");
    let row = |s: &mut String, line: u32, src: &str| {
        let l = fl.lines.get(&line).copied();
        let badge: String = badges
            .get(&line)
            .map(|v| {
                v.iter()
                    .map(|b| format!("<span class=\"badge\">{}</span>", escape(b)))
                    .collect()
            })
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<tr id=\"L{line}\" class=\"{}\"><td class=\"n\"><a href=\"#L{line}\">{line}</a></td><td>{}</td><td>{badge}</td><td class=\"s\">{}</td></tr>",
            class(l),
            label_word(l),
            escape(src)
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
    let mut written = Vec::with_capacity(files.len() + 1);
    let index = dir.join("index.html");
    std::fs::write(&index, index_html(r, &files)).map_err(|e| ctx(e, &index))?;
    written.push(index);
    for fl in &files {
        let p = dir.join(file_page(fl.file));
        std::fs::write(&p, file_html(r, fl)).map_err(|e| ctx(e, &p))?;
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
        b.set_function_file(main, "src/<main>.c");
        b.set_function_file(f, "src/f.c");
        let mut v = Vec::new();
        for (id, kind, func, line) in [
            ("me", NodeKind::Entry, main, 1),
            ("c", NodeKind::CallSite, main, 2),
            ("fe", NodeKind::Entry, f, 1),
            ("fs", NodeKind::Statement, f, 3),
        ] {
            v.push(
                b.add_node(NodeSpec {
                    ext_id: id,
                    kind,
                    func,
                    label: "",
                    lines: &[line],
                })
                .unwrap(),
            );
        }
        b.add_flow_edge(v[0], v[1]);
        b.add_flow_edge(v[2], v[3]);
        b.add_call_edge(v[1], v[2]);
        (b.build().unwrap(), v)
    }

    #[test]
    fn pages_are_escaped_and_linked() {
        let (g, v) = graph();
        let labels = vec![Label::Yes, Label::Yes, Label::Yes, Label::Maybe];
        let report = Report {
            stack: vec![Frame {
                call: NodeSet::one(v[1]),
                entry: NodeSet::one(v[2]),
            }],
            crash: Some(NodeSet::one(v[3])),
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
        let witness = [v[0], v[1], v[2], v[3]];
        let r = HtmlReport {
            graph: &g,
            labels: &labels,
            report: &report,
            witness: Some(&witness),
            sources: &sources,
            weakened: &weakened,
            title: "postmortem: a & b",
        };
        let files = by_line(&g, &labels);
        let index = index_html(&r, &files);
        assert!(
            index.contains("<title>postmortem: a &amp; b</title>"),
            "{index}"
        );
        assert!(
            index.contains("<a href=\"file-0.html\">src/&lt;main&gt;.c</a>"),
            "{index}"
        );
        assert!(index.contains("call in <code>main</code> at <a href=\"file-0.html#L2\">src/&lt;main&gt;.c:2</a> &rarr; enters <code>f&lt;int&gt;</code>"), "{index}");
        assert!(index.contains("<span class=\"badge\">crash</span> <code>f&lt;int&gt;</code> at <a href=\"file-1.html#L3\">src/f.c:3</a>"), "{index}");
        assert!(index.contains("<h2>Witness path</h2>"));
        assert!(index.contains("dropped &lt;x&gt;"));
        assert!(!index.contains("<x>") && !index.contains("<main>"));
        let main_page = file_html(&r, &files[0]);
        assert!(main_page.contains("<tr id=\"L2\" class=\"y\"><td class=\"n\"><a href=\"#L2\">2</a></td><td>Yes</td><td><span class=\"badge\">frame 0</span></td><td class=\"s\">  if (a &lt; b &amp;&amp; c &gt; &quot;d&quot;) f();</td></tr>"), "{main_page}");
        assert!(
            main_page.contains("<tr id=\"L3\" class=\"\">"),
            "{main_page}"
        );
        let f_page = file_html(&r, &files[1]);
        assert!(f_page.contains("could not be read"));
        assert!(f_page.contains("<tr id=\"L3\" class=\"m\">"), "{f_page}");
        // Without a witness the section is left out.
        let r2 = HtmlReport { witness: None, ..r };
        assert!(!index_html(&r2, &files).contains("Witness"));
    }

    #[test]
    fn writes_the_directory() {
        let (g, _) = graph();
        let labels = vec![Label::No; 4];
        let report = Report::default();
        let sources = Sources::none();
        let dir = std::env::temp_dir().join(format!("pm-html-test-{}", std::process::id()));
        let r = HtmlReport {
            graph: &g,
            labels: &labels,
            report: &report,
            witness: None,
            sources: &sources,
            weakened: &[],
            title: "t",
        };
        let written = write_html(&dir, &r).unwrap();
        assert_eq!(written.len(), 3);
        assert!(std::fs::read_to_string(dir.join("index.html"))
            .unwrap()
            .contains("no crash stack"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
