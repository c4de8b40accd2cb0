//! Output formats of the analysis commands.

use clap::ValueEnum;
use postmortem_formats::output::{self, Analysis};
use std::io::Write;

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Human-readable summary.
    Text,
    /// One JSON object.
    Json,
}

/// Writes an analysis in `format`.
pub fn write_analysis(out: &mut dyn Write, format: Format, view: &Analysis<'_>) -> std::io::Result<()> {
    match format {
        Format::Text => output::write_text(out, view),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &output::to_json(view))?;
            writeln!(out)
        }
    }
}
