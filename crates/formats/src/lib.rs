//! postmortem's input formats.
//!
//! * [`graphml`]: the csi-cc GraphML control-flow graphs, read into a
//!   [`postmortem_core::Icfg`] (streamed, gzip-aware, entity-safe).
//! * [`report_json`]: the csi-grissom JSON failure reports, read into a
//!   [`postmortem_core::Report`] against a graph.
//! * [`output`]: analysis results as text and JSON.
//! * [`pmcfg`]: the `.pmcfg` binary graph cache ([`pmcfg::encode`],
//!   [`pmcfg::decode`]).
//! * [`error`]: [`FormatError`], the one error type, whose messages are
//!   one line naming the input and the place in it (an XML line and byte,
//!   or a JSON path like `$.obsYes[3].entries[0][1]`).
//!
//! The semantics follow `shared/data/README.md`.
#![deny(missing_docs)]

pub mod annotate;
pub mod answer;
pub mod any_report;
pub mod backtrace;
pub mod batch;
pub mod buildcheck;
pub mod error;
pub mod failure;
pub mod frontend;
pub mod graphml;
pub mod html;
pub mod image;
pub mod input;
pub mod lcov;
pub mod logs;
pub mod minidump;
pub mod native;
pub mod output;
pub mod pmcfg;
pub mod pmreport;
pub mod report_json;
pub mod report_kind;
pub mod residue;
pub mod sancov;
pub mod sentry;
pub mod suggest;
pub mod values;
pub mod vars;

pub use error::{FormatError, XmlPosition};
pub use graphml::{read_graphml, read_graphml_path};
pub use report_json::{read_report_path, read_report_str};
