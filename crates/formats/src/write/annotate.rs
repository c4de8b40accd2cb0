//! The annotated source listing (`--format annotate`), in the style of
//! gcov: every source line prefixed with what the analysis says about it.
//!
//! ```text
//!         -:    0:Source:src/a.c
//!         -:    0:Legend:Yes = ran on every execution consistent with the report, No = ran on none, Maybe = ran on some (or undecided), blank = no statement
//!       Yes:    1:int main(void) {
//!       Yes:    2:  init();
//!     Maybe:    3:  if (argc > 1)
//!        No:    4:    usage();
//!          :    5:  /* comment */
//! ```
//!
//! A line's label is the per-line summary of
//! [`postmortem_core::summary::by_line`]. Files are listed in path order.
//!
//! Sources are read from disk by [`Sources::load`]: the graph's path
//! after the `--path-map` rewriting, relative paths from the current
//! directory. A file that cannot be read is a warning; it is listed with
//! its labelled lines only, without text. Labelled lines past the end of a
//! file (a source that changed since the build) are listed without text.

use postmortem_core::line_notes::LineNotes;
use postmortem_core::local::FrameLabels;
use postmortem_core::locate::PathMap;
use postmortem_core::summary::by_line;
use postmortem_core::{FileId, Icfg, Label, Report};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

/// The source texts of some files of a graph.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Indexed by [`FileId`]: where the file was looked for, and its text
    /// if it could be read.
    files: Vec<Option<(PathBuf, Option<String>)>>,
}

/// A source file that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingSource {
    /// The path in the graph.
    pub graph_path: String,
    /// Where it was looked for.
    pub looked_at: PathBuf,
    /// Why it could not be read.
    pub reason: String,
}

impl std::fmt::Display for MissingSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "source file {} cannot be read", self.graph_path)?;
        if self.looked_at.as_os_str() != self.graph_path.as_str() {
            write!(f, " at {}", self.looked_at.display())?;
        }
        write!(
            f,
            " ({}); it is listed without source text (--path-map FROM=TO may help)",
            self.reason
        )
    }
}

impl Sources {
    /// No source text at all (every file is listed without text).
    pub fn none() -> Sources {
        Sources::default()
    }

    /// Reads the files of `g` that have labelled lines, through `paths`.
    /// Returns the texts and the files that could not be read.
    pub fn load(g: &Icfg, paths: &PathMap, labels: &[Label]) -> (Sources, Vec<MissingSource>) {
        let mut s = Sources {
            files: vec![None; g.num_files()],
        };
        let mut missing = Vec::new();
        for fl in by_line(g, labels) {
            let graph_path = g.file_path(fl.file);
            let path = PathBuf::from(paths.apply(graph_path));
            // A path from the graph: bounded, and never a device.
            let limit = crate::input::Limit {
                bytes: crate::input::DEFAULT_TEXT_LIMIT,
                what: "source file",
                raise: None,
            };
            let text = match crate::input::read_bounded(&path, &limit) {
                Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) => {
                    let shown = format!("{}: ", path.display());
                    let e = e.to_string();
                    missing.push(MissingSource {
                        graph_path: graph_path.to_string(),
                        looked_at: path.clone(),
                        reason: crate::error::one_line(e.strip_prefix(&shown).unwrap_or(&e)),
                    });
                    None
                }
            };
            s.files[fl.file.index()] = Some((path, text));
        }
        (s, missing)
    }

    /// Sets a file's text directly (tests, or sources from elsewhere).
    pub fn insert(&mut self, file: FileId, text: &str) {
        if self.files.len() <= file.index() {
            self.files.resize(file.index() + 1, None);
        }
        self.files[file.index()] = Some((PathBuf::new(), Some(text.to_string())));
    }

    /// A file's text, if it was read.
    pub fn text(&self, file: FileId) -> Option<&str> {
        self.files.get(file.index())?.as_ref()?.1.as_deref()
    }

    /// A file's lines (without line ends), if it was read.
    pub fn lines(&self, file: FileId) -> Option<Vec<&str>> {
        self.text(file).map(|t| t.lines().collect())
    }
}

/// The legend line.
pub const LEGEND: &str =
    "Yes = ran on every execution consistent with the report, No = ran on none, \
Maybe = ran on some (or undecided), blank = no statement";

/// The prefix of a line with this label (`None`: no statement).
pub fn label_word(l: Option<Label>) -> &'static str {
    match l {
        Some(Label::Yes) => "Yes",
        Some(Label::No) => "No",
        Some(Label::Maybe) => "Maybe",
        None => "",
    }
}

/// Writes the annotated listing of every file with labelled lines; a
/// line with a note (`notes`: moved by the optimiser, no code in the
/// binary) has it after its text, after ` <- `.
pub fn write_annotate(
    out: &mut dyn Write,
    g: &Icfg,
    labels: &[Label],
    sources: &Sources,
    frames: &[(usize, &FrameLabels)],
    notes: Option<&LineNotes>,
) -> io::Result<()> {
    for (i, fl) in by_line(g, labels).iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let path = g.file_path(fl.file);
        let lines = sources.lines(fl.file);
        // The Local column: each frame of a function of this file.
        let locals: Vec<(usize, &FrameLabels, BTreeMap<u32, Label>)> = frames
            .iter()
            .map(|&(k, f)| (k, f, local_lines(g, f, fl.file)))
            .filter(|(_, _, l)| !l.is_empty())
            .collect();
        let local_at = |n: u32| -> String {
            locals
                .iter()
                .filter_map(|(k, _, l)| Some(format!("#{k} {}", label_word(Some(*l.get(&n)?)))))
                .collect::<Vec<_>>()
                .join(",")
        };
        let width = fl
            .lines
            .keys()
            .map(|&n| local_at(n).len())
            .max()
            .unwrap_or(0)
            .max(9);
        let prefix = |global: &str, n: usize, local: &str| -> String {
            if locals.is_empty() {
                format!("{global:>9}:{n:>5}:")
            } else {
                format!("{global:>9}:{local:>width$}:{n:>5}:")
            }
        };
        match &lines {
            Some(_) => writeln!(out, "{}Source:{path}", prefix("-", 0, "-"))?,
            None => writeln!(
                out,
                "{}Source:{path} (not found: labelled lines only, without source text)",
                prefix("-", 0, "-")
            )?,
        }
        writeln!(out, "{}Legend:{LEGEND}", prefix("-", 0, "-"))?;
        if !locals.is_empty() {
            let named: Vec<String> = locals
                .iter()
                .map(|(k, f, _)| format!("#{k} {}", g.function(f.function).name))
                .collect();
            writeln!(
                out,
                "{}Local:the second column is what ran in stack frame {} (that call of its function) before it stopped",
                prefix("-", 0, "-"),
                named.join(", ")
            )?;
        }
        let note = |n: u32| -> String {
            notes
                .and_then(|x| x.get(fl.file, n))
                .map(|x| format!(" <- {x}"))
                .unwrap_or_default()
        };
        let text = lines.unwrap_or_default();
        let last_labelled = fl.lines.keys().next_back().copied().unwrap_or(0) as usize;
        if text.is_empty() {
            for (&n, &l) in &fl.lines {
                writeln!(
                    out,
                    "{}{}",
                    prefix(label_word(Some(l)), n as usize, &local_at(n)),
                    note(n)
                )?;
            }
            continue;
        }
        for n in 1..=text.len().max(last_labelled) {
            let l = fl.lines.get(&(n as u32)).copied();
            let src = text.get(n - 1).copied().unwrap_or("");
            writeln!(
                out,
                "{}{src}{}",
                prefix(label_word(l), n, &local_at(n as u32)),
                note(n as u32)
            )?;
        }
    }
    Ok(())
}

/// The frames with Local labels, each with gdb's frame number (0 the
/// innermost: the crash when there is one), innermost first.
pub fn numbered_frames<'f>(
    report: &Report,
    frames: &'f [FrameLabels],
) -> Vec<(usize, &'f FrameLabels)> {
    let top = report.stack.len() + usize::from(report.crash.is_some());
    let mut v: Vec<(usize, &FrameLabels)> = frames
        .iter()
        .filter(|f| f.frame < top)
        .map(|f| (top - 1 - f.frame, f))
        .collect();
    v.sort_by_key(|&(k, _)| k);
    v
}

/// The Local label of each line of `file` in a frame (a line is Yes if a
/// node on it is, No if all are, Maybe otherwise).
pub fn local_lines(g: &Icfg, f: &FrameLabels, file: FileId) -> BTreeMap<u32, Label> {
    let mut by: BTreeMap<u32, Vec<Label>> = BTreeMap::new();
    for &(n, l) in &f.labels {
        if g.file_of(n) == Some(file) {
            for &line in g.lines(n) {
                by.entry(line).or_default().push(l);
            }
        }
    }
    by.into_iter()
        .map(|(line, ls)| {
            let l = if ls.contains(&Label::Yes) {
                Label::Yes
            } else if ls.iter().all(|&l| l == Label::No) {
                Label::No
            } else {
                Label::Maybe
            };
            (line, l)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use postmortem_core::{IcfgBuilder, NodeId, NodeKind, NodeSet, NodeSpec};

    pub(crate) fn sample() -> (Icfg, Vec<Label>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        b.set_function_file(main, "src/a.c");
        let other = b.function("other");
        b.set_function_file(other, "/nonexistent/b.c");
        let mut prev = None;
        for (i, (f, line)) in [(main, 1), (main, 2), (main, 4), (other, 7)]
            .iter()
            .enumerate()
        {
            let kind = if i == 0 {
                NodeKind::Entry
            } else {
                NodeKind::Statement
            };
            let kind = if i == 3 { NodeKind::Entry } else { kind };
            let id = format!("n{i}");
            let n = b
                .add_node(NodeSpec {
                    ext_id: &id,
                    kind,
                    func: *f,
                    label: "",
                    lines: &[*line],
                })
                .unwrap();
            if let (Some(p), true) = (prev, i < 3) {
                b.add_flow_edge(p, n);
            }
            prev = Some(n);
        }
        (
            b.build().unwrap(),
            vec![Label::Yes, Label::Maybe, Label::No, Label::No],
        )
    }

    #[test]
    fn listing_with_and_without_sources() {
        let (g, labels) = sample();
        let mut s = Sources::none();
        s.insert(FileId::new(0), "int main() {\n  f();\n  // x\n  g();\n}\n");
        let mut out = Vec::new();
        write_annotate(&mut out, &g, &labels, &s, &[], None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let want = "        -:    0:Source:/nonexistent/b.c (not found: labelled lines only, without source text)\n        -:    0:Legend:";
        assert!(text.starts_with(want), "{text}");
        assert!(text.contains("       No:    7:\n"), "{text}");
        assert!(text.contains("        -:    0:Source:src/a.c\n"), "{text}");
        assert!(text.contains("      Yes:    1:int main() {\n    Maybe:    2:  f();\n         :    3:  // x\n       No:    4:  g();\n         :    5:}\n"), "{text}");
    }

    /// A frame of `main` (the crash frame: #0): its Local labels in a
    /// second column of main's file only, lines of other functions blank.
    #[test]
    fn local_labels_beside_the_global_ones() {
        let (g, labels) = sample();
        let mut s = Sources::none();
        s.insert(FileId::new(0), "int main() {\n  f();\n  // x\n  g();\n}\n");
        let n = |i| NodeId::new(i);
        let report = Report {
            crash: NodeSet::new(vec![n(1)]),
            ..Report::default()
        };
        let frames = [FrameLabels {
            frame: 0,
            function: g.func_of(n(0)),
            stop: vec![n(1)],
            labels: vec![(n(0), Label::Yes), (n(1), Label::Maybe), (n(2), Label::No)],
        }];
        let numbered = numbered_frames(&report, &frames);
        assert_eq!(numbered.len(), 1);
        assert_eq!(numbered[0].0, 0);
        let mut out = Vec::new();
        write_annotate(&mut out, &g, &labels, &s, &numbered, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("        -:        -:    0:Local:the second column is what ran in stack frame #0 main"), "{text}");
        assert!(text.contains("      Yes:   #0 Yes:    1:int main() {\n    Maybe: #0 Maybe:    2:  f();\n         :         :    3:  // x\n       No:    #0 No:    4:  g();\n"), "{text}");
        // The other file keeps the classic columns.
        assert!(text.contains("       No:    7:\n"), "{text}");
        // With a stack of two frames below the crash, the crash is #0
        // and the outermost activation #2.
        let two = Report {
            stack: vec![
                postmortem_core::Frame {
                    call: NodeSet::one(n(1)),
                    entry: NodeSet::one(n(3))
                };
                2
            ],
            ..report
        };
        let outer = FrameLabels {
            frame: 0,
            ..frames[0].clone()
        };
        let crash = FrameLabels {
            frame: 2,
            ..frames[0].clone()
        };
        let all = [outer, crash];
        let v: Vec<usize> = numbered_frames(&two, &all).iter().map(|x| x.0).collect();
        assert_eq!(v, vec![0, 2]);
    }

    #[test]
    fn missing_files_are_reported() {
        let (g, labels) = sample();
        let mut m = PathMap::new();
        m.push("/nonexistent", "/also-nonexistent");
        let (s, missing) = Sources::load(&g, &m, &labels);
        assert!(s.text(FileId::new(1)).is_none());
        let b = missing
            .iter()
            .find(|x| x.graph_path == "/nonexistent/b.c")
            .unwrap();
        assert_eq!(b.looked_at, PathBuf::from("/also-nonexistent/b.c"));
        assert!(
            b.to_string()
                .contains("cannot be read at /also-nonexistent/b.c"),
            "{b}"
        );
    }
}
