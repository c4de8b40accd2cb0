//! postmortem's readers and writers: everything that touches a file
//! format, so that `postmortem-core` stays free of I/O.
//!
//! **Graphs.** [`graphml`] (csi-cc GraphML, streamed, gzip-aware),
//! [`pmcfg`] (the `.pmcfg` binary cache: [`pmcfg::encode`],
//! [`pmcfg::decode`]), [`frontend`] (what the LLVM front-end reports,
//! without LLVM).
//!
//! **Failure inputs as text.** [`report_json`] (csi-grissom JSON),
//! [`pmreport`] (postmortem's own JSON), [`sentry`] (Sentry events),
//! [`report_kind`] and [`any_report`] (which JSON format a `--report`
//! is), [`backtrace`] (gdb, lldb, sanitizers, Rust panics), [`logs`] (log
//! lines to the calls that may have printed them), [`input`] (reading
//! with a bound, and what a file in the wrong slot looks like).
//!
//! **The crashed process's image** ([`image`]): [`image::native`] (ELF
//! cores and binaries: the crash stack unwound, libraries' and signal
//! frames included), [`image::minidump`] (Breakpad and Crashpad),
//! [`image::sancov`] (SanitizerCoverage flags to graph nodes),
//! [`image::values`] (variables' values read from the image),
//! [`image::residue`] (return addresses left on the stack),
//! [`image::buildcheck`] (is the binary the graph's build),
//! [`image::no_code`] (the graph's lines without code in the binary),
//! [`image::fault`] (what killed the process), all opened by
//! [`image::open`]; [`vars`] says which values become evidence.
//!
//! **Assembly.** [`failure`]: one [`postmortem_core::Report`] from every
//! input of a failure.
//!
//! **Writers** ([`write`]): [`write::output`] (text and JSON),
//! [`write::annotate`] (gcov-style listing), [`write::html`] (the static
//! report), [`write::lcov`] (LCOV tracefiles), [`write::answer`] (query
//! answers), [`write::suggest`] (what to observe next); [`batch`] (many
//! crashes: manifest, groups, pages).
//!
//! [`error`]: [`FormatError`], the one error type of the readers, whose
//! messages are one line naming the input and the place in it (an XML
//! line and byte, or a JSON path like `$.obsYes[3].entries[0][1]`).
//!
//! The semantics follow `shared/data/README.md`.
#![deny(missing_docs)]

pub mod any_report;
pub mod backtrace;
pub mod batch;
pub mod correlate;
pub mod error;
pub mod failure;
pub mod frontend;
pub mod graphml;
pub mod image;
pub mod input;
pub mod logs;
pub mod origins;
pub mod pmcfg;
pub mod pmreport;
pub mod report_json;
pub mod report_kind;
pub mod sentry;
pub mod vars;
pub mod witness_check;
pub mod write;

pub use error::{FormatError, XmlPosition};
pub use graphml::{read_graphml, read_graphml_path};
pub use report_json::{read_report_path, read_report_str};
