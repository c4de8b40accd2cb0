//! What postmortem writes: the analysis as text and JSON ([`output`]),
//! gcov-style listings ([`annotate`]), the static HTML report ([`html`]),
//! LCOV tracefiles ([`lcov`]), query answers ([`answer`]), what to
//! observe next ([`suggest`]) and why it crashed ([`chain`]). Each writer takes what the analysis found
//! ([`output::Analysis`] and its extras) and reads nothing but the sources
//! it shows.

pub mod annotate;
pub mod answer;
pub mod chain;
pub mod html;
pub mod lcov;
pub mod output;
pub mod suggest;
