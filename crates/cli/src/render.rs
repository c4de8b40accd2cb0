//! Output formats of the analysis commands.

use crate::exit::Failure;
use crate::inputs::Inputs;
use clap::{Args, ValueEnum};
use postmortem_core::why::Why;
use postmortem_core::{NodeId, Report};
use postmortem_formats::write::annotate::{numbered_frames, write_annotate, Sources};
use postmortem_formats::write::html::{write_html, HtmlReport};
use postmortem_formats::write::lcov::write_lcov;
use postmortem_formats::write::output::{self, Analysis};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Text or JSON (commands other than `analyze`).
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Human-readable summary.
    Text,
    /// One JSON object.
    Json,
}

/// The output formats of `analyze`.
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum AnalyzeFormat {
    /// Human-readable summary: counts, then each file's Yes, No and Maybe lines.
    Text,
    /// One JSON object (nodes and lines per label, counts, weakenings).
    Json,
    /// The source files, every line prefixed Yes / No / Maybe (gcov style).
    Annotate,
    /// A static HTML report in the directory given by -o.
    Html,
    /// An LCOV tracefile (Yes covered, No not covered, Maybe partial).
    Lcov,
}

/// How `analyze` writes its result.
#[derive(Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Text)]
    pub format: AnalyzeFormat,
    /// The directory `--format html` writes its pages to (created if
    /// needed).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        required_if_eq("format", "html")
    )]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// The directory `--format html` writes to.
    fn html_dir(&self) -> PathBuf {
        self.output
            .clone()
            .unwrap_or_else(|| PathBuf::from("postmortem-html"))
    }

    /// Checks, before any work, that the output can be written: for
    /// `--format html`, creates the `-o` directory and writes (and
    /// removes) a probe file in it. A directory that cannot be created or
    /// written is bad usage: exit code 2, with the path and the OS error.
    pub fn prepare(&self) -> Result<(), Failure> {
        if self.format != AnalyzeFormat::Html {
            return Ok(());
        }
        let dir = self.html_dir();
        let bad = |p: &Path, e: std::io::Error| {
            Failure::input(format!(
                "{}: cannot write the HTML report there: {e} (-o must name a directory that can be created and written)",
                p.display()
            ))
        };
        std::fs::create_dir_all(&dir).map_err(|e| bad(&dir, e))?;
        let probe = dir.join(format!(".postmortem-probe-{}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(|e| bad(&dir, e))?;
        let _ = std::fs::remove_file(&probe);
        Ok(())
    }
}

/// Writes an analysis in `format` (text or JSON).
pub fn write_analysis(
    out: &mut dyn Write,
    format: Format,
    view: &Analysis<'_>,
) -> std::io::Result<()> {
    match format {
        Format::Text => output::write_text(out, view),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &output::to_json(view))?;
            writeln!(out)
        }
    }
}

/// What only the HTML report shows, beside the analysis.
#[derive(Clone, Copy)]
pub struct HtmlExtras<'a> {
    /// One execution that fits the report (an example path).
    pub witness: Option<&'a [NodeId]>,
    /// What checking the example path against the program's data found.
    pub witness_check: Option<&'a postmortem_formats::witness_check::Verdict>,
    /// Why the example paths before it were set aside.
    pub witness_set_aside: &'a [String],
    /// Why lines are Yes or No.
    pub why: &'a Why,
    /// What to observe next, when `suggest` computed it.
    pub suggestions: Option<&'a postmortem_core::suggest::Suggestions>,
    /// The logs as they were matched to the program's print statements.
    pub logs: &'a [postmortem_formats::logs::LogMatch],
}

/// Writes an analysis as `opts` say: text, JSON, annotated sources and
/// LCOV to `out`; HTML pages to the `-o` directory (and one line saying so
/// to `out`). Sources are read through the inputs' path map; a source
/// that cannot be read is a warning on stderr.
pub fn write_analysis_as(
    out: &mut dyn Write,
    opts: &OutputArgs,
    inputs: &Inputs,
    report: &Report,
    extras: &HtmlExtras<'_>,
    view: &Analysis<'_>,
) -> std::io::Result<()> {
    let HtmlExtras {
        witness,
        witness_check,
        witness_set_aside,
        why,
        suggestions,
        logs,
    } = *extras;
    if opts.output.is_some() && opts.format != AnalyzeFormat::Html {
        eprintln!(
            "postmortem: warning: -o is only used by --format html; writing to standard output"
        );
    }
    let sources = || {
        let (s, missing) = Sources::load(view.graph, &inputs.path_map(), view.labels);
        for m in missing {
            eprintln!("postmortem: warning: {m}");
        }
        s
    };
    match opts.format {
        AnalyzeFormat::Text => write_analysis(out, Format::Text, view),
        AnalyzeFormat::Json => write_analysis(out, Format::Json, view),
        AnalyzeFormat::Annotate => write_annotate(
            out,
            view.graph,
            view.labels,
            &sources(),
            &numbered_frames(report, view.frames),
            view.line_notes,
        ),
        AnalyzeFormat::Lcov => write_lcov(out, view.graph, view.labels, &inputs.path_map()),
        AnalyzeFormat::Html => {
            let dir = opts.html_dir();
            let title = format!("postmortem: {} + {}", view.cfg_path, view.report_path);
            let sources = sources();
            let page = HtmlReport {
                graph: view.graph,
                labels: view.labels,
                report,
                witness,
                witness_check,
                witness_set_aside,
                sources: &sources,
                weakened: view.weakened,
                title: &title,
                frames: view.frames,
                why,
                suggestions,
                values: view.values,
                logs,
                fault: view.fault,
                line_notes: view.line_notes,
            };
            let written = write_html(&dir, &page)?;
            writeln!(
                out,
                "wrote {} ({} file page{})",
                dir.join("index.html").display(),
                written.len() - 1,
                if written.len() == 2 { "" } else { "s" }
            )
        }
    }
}
