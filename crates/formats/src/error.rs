//! The one error type of this crate.
//!
//! Every variant displays as a single line that starts with the name of the
//! input (a path or the `source_name` given to the `*_str`/reader
//! functions), followed by where in the input the problem is (an XML line
//! and byte offset, or a JSON path such as `$.obsYes[3].entries[0][1]`),
//! followed by what is wrong, quoting the offending value.

use std::fmt;

/// A position in an XML input.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct XmlPosition {
    /// 1-based line the reader had reached when the problem was found.
    pub line: u64,
    /// 0-based byte offset of the problem in the (decompressed) input.
    pub byte: u64,
}

impl fmt::Display for XmlPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} (byte {})", self.line, self.byte)
    }
}

/// Everything that can go wrong while reading an input of this crate.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The input could not be opened or read.
    #[error("{file}: {message}")]
    Io {
        /// The input's name.
        file: String,
        /// What failed (the I/O error, on one line).
        message: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The input holds no data at all.
    #[error("{file}: empty file")]
    Empty {
        /// The input's name.
        file: String,
    },
    /// The input is not well-formed XML, or uses an XML feature that is
    /// refused (entity declarations).
    #[error("{file}: {pos}: malformed XML: {message}")]
    Xml {
        /// The input's name.
        file: String,
        /// Where the reader was.
        pos: XmlPosition,
        /// What is wrong.
        message: String,
    },
    /// Well-formed XML that is not a valid csi-cc GraphML control-flow
    /// graph (undefined or duplicate node ids, bad attribute values, or a
    /// graph the model refuses to build).
    #[error("{file}: {}{message}", fmt_opt_pos(.pos))]
    Graph {
        /// The input's name.
        file: String,
        /// Where the reader was, when the problem is tied to one place.
        pos: Option<XmlPosition>,
        /// What is wrong.
        message: String,
    },
    /// The input is not valid JSON.
    #[error("{file}: invalid JSON: {message}")]
    JsonSyntax {
        /// The input's name.
        file: String,
        /// serde_json's description, with line and column.
        message: String,
    },
    /// Valid JSON that is not a valid failure report.
    #[error("{file}: {path}: {message}")]
    Json {
        /// The input's name.
        file: String,
        /// The JSON path of the offending value, like `$.crash[0]`.
        path: String,
        /// What is wrong, quoting the offending value.
        message: String,
    },
    /// Text that is not a valid input of its kind (a backtrace).
    #[error("{file}: {message}")]
    Text {
        /// The input's name.
        file: String,
        /// What is wrong.
        message: String,
    },
}

fn fmt_opt_pos(pos: &Option<XmlPosition>) -> String {
    match pos {
        Some(p) => format!("{p}: "),
        None => String::new(),
    }
}

impl FormatError {
    /// The name of the input the error is about.
    pub fn file(&self) -> &str {
        match self {
            FormatError::Io { file, .. }
            | FormatError::Empty { file }
            | FormatError::Xml { file, .. }
            | FormatError::Graph { file, .. }
            | FormatError::JsonSyntax { file, .. }
            | FormatError::Json { file, .. }
            | FormatError::Text { file, .. } => file,
        }
    }

    pub(crate) fn io(file: &str, source: std::io::Error) -> FormatError {
        FormatError::Io {
            file: one_line(file),
            message: one_line(&source.to_string()),
            source,
        }
    }

    pub(crate) fn empty(file: &str) -> FormatError {
        FormatError::Empty {
            file: one_line(file),
        }
    }

    pub(crate) fn xml(file: &str, pos: XmlPosition, message: &str) -> FormatError {
        FormatError::Xml {
            file: one_line(file),
            pos,
            message: one_line(message),
        }
    }

    pub(crate) fn graph(file: &str, pos: Option<XmlPosition>, message: &str) -> FormatError {
        FormatError::Graph {
            file: one_line(file),
            pos,
            message: one_line(message),
        }
    }

    pub(crate) fn json_syntax(file: &str, message: &str) -> FormatError {
        FormatError::JsonSyntax {
            file: one_line(file),
            message: one_line(message),
        }
    }

    pub(crate) fn text(file: &str, message: &str) -> FormatError {
        FormatError::Text {
            file: one_line(file),
            message: one_line(message),
        }
    }

    pub(crate) fn json(file: &str, path: &str, message: &str) -> FormatError {
        FormatError::Json {
            file: one_line(file),
            path: one_line(path),
            message: one_line(message),
        }
    }
}

/// Replaces control characters (newlines included) so that a message
/// always fits on one line.
pub(crate) fn one_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Quotes a string for a message: `"..."` with escapes, cut after 80
/// characters.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}...", &s[..cut]),
        None => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        let e = FormatError::json("a\nb.json", "$.x", "bad\r\nvalue");
        assert_eq!(e.to_string(), "a\\nb.json: $.x: bad\\r\\nvalue");
        let e = FormatError::graph("g.graphml", Some(XmlPosition { line: 3, byte: 40 }), "oops");
        assert_eq!(e.to_string(), "g.graphml: line 3 (byte 40): oops");
        let e = FormatError::graph("g.graphml", None, "oops");
        assert_eq!(e.to_string(), "g.graphml: oops");
        assert_eq!(e.file(), "g.graphml");
    }

    #[test]
    fn quote_escapes_and_truncates() {
        assert_eq!(quote("a\"b"), "\"a\\\"b\"");
        let long = "x".repeat(200);
        let q = quote(&long);
        assert!(q.len() < 100 && q.ends_with("..."), "{q}");
    }
}

/// A warning or a note about an input, in the order they arose (see
/// [`crate::failure::assemble`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Diagnostic {
    /// A part of the input that was left out or widened.
    Warning(String),
    /// Information (how many coverage flags were set, how much a log told).
    Note(String),
}
