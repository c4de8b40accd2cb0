//! Log lines to the call sites that may have printed them.
//!
//! A front-end records, for every call site, the names of library callees
//! and the constant string arguments ([`postmortem_core::CallNote`]). A
//! call of a *logging function* with a constant format string can print
//! only lines of a certain shape; [`LogMatcher`] turns each format string
//! into regular expressions and finds, for every line of a log, the call
//! sites that may have printed it.
//!
//! **Logging functions** ([`LogConfig`]): the printf family (`printf`,
//! `fprintf`, `dprintf`, `sprintf`, `snprintf`, `syslog`, `err`, `warn`,
//! their `v` forms and glibc's fortified `__*_chk` forms), `puts` (which
//! adds a newline), `fputs`, `perror`, plus any configured function with
//! the index of its format argument ([`Logger::custom`]). Call notes hold
//! the *constant* string arguments in order but not their positions: for
//! the built-in functions every argument before the format is a stream,
//! descriptor, buffer, size or flag, so the format is the first constant
//! string; for a configured function whose format is argument `k`, any of
//! the first `k + 1` constant strings may be it, and all are tried.
//!
//! **Format strings to regexes** ([`format_regex`]): text is literal;
//! `%d`/`%i` -> `-?[0-9]+` (`[-+ ]?` with the `+` or space flag), `%u`
//! -> `[0-9]+`, `%o` -> octal, `%x`/`%X` -> hex digits (`0x` allowed with
//! `#`), `%f %F %e %E %g %G` -> a decimal or exponent number, `inf` or
//! `nan`, `%a %A` -> a hex float, `%c` -> one character, `%s`/`%m` ->
//! anything (`.*`), `%p` -> `0x...` or `(nil)`, `%n` -> nothing, `%%` ->
//! `%`. Flags, widths (`*` too), precisions and length modifiers
//! (`hh h l ll L q j z Z t`) are understood; a width allows padding
//! spaces. An unknown conversion matches anything.
//!
//! **Lines** ([`line_patterns`]): a format is split at its newlines. Its
//! first line may end a line that other output began, so it is not
//! anchored at the start; it is anchored at the end when a newline
//! follows it (`puts` adds one). Later lines of a multi-line format are
//! anchored at the start. A log line that fits a format's *first* line
//! gets that call site as a candidate. A log line that fits a *later*
//! line of some format may be the continuation of an earlier line printed
//! by the same call: it is left out of the trace (one call cannot account
//! for two trace elements).
//!
//! **The trace** ([`LogMatch::trace`]): every log line with candidates
//! becomes one element, "one of these call sites ran", and the elements in
//! log order form *one unreliable trace* (a subsequence of the run). A
//! line with no candidate is a [`LogWarning`] and is left out (a weaker
//! constraint). Blank lines are skipped.
//!
//! Assumptions (stated, since soundness rests on them): every log line
//! was printed by a call with a constant format string found in the
//! graph, and no argument printed with `%s` holds a newline (otherwise
//! one call could print two lines that become two trace elements).

use postmortem_core::{Icfg, NodeId, NodeSet, Trace};
use regex::{RegexSet, RegexSetBuilder};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};

/// How a logging function prints its format argument.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LoggerKind {
    /// A printf-style format; the format is the first constant string.
    Printf,
    /// `puts`: the string, then a newline.
    Puts,
    /// `fputs`: the string as is.
    Fputs,
    /// `perror`: the string, `": "`, an error message, a newline.
    Perror,
    /// A configured printf-style function whose format is argument
    /// `format_arg` (0-based): any of the first `format_arg + 1` constant
    /// strings may be the format.
    Custom,
}

/// Where a printing function writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Standard output (`printf`, `puts`).
    Stdout,
    /// Standard error (`perror`, `err`, `warn`, `error`).
    Stderr,
    /// The `FILE *` argument at this index (`fprintf`, `fputs`).
    Stream(u32),
    /// The file descriptor argument at this index (`dprintf`, `write`).
    Fd(u32),
    /// Memory (`sprintf`, `snprintf`, `asprintf`): nothing is printed
    /// until another call prints the buffer.
    Memory,
    /// The system log (`syslog`; also standard error with `LOG_PERROR`).
    Syslog,
    /// Unknown (a configured logging function).
    Unknown,
}

/// The stream a call site writes to, as far as its arguments tell
/// ([`postmortem_core::CallNote::arg_sources`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiteStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// A stream held in this global variable.
    Global(String),
    /// The system log.
    Syslog,
    /// Memory.
    Memory,
    /// Not known: any stream.
    Unknown,
}

/// Which output a log holds (`--log-stream`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LogStream {
    /// Anything the program printed, to any stream (the default).
    #[default]
    Any,
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// What the program wrote to the stream in this global `FILE *`.
    Global(String),
    /// What calls of this logging function printed.
    Function(String),
}

/// A `--log-stream` that is none of the streams [`LogStream::parse`]
/// knows (the text as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "log stream `{0}` is none of any, stdout, stderr, global:NAME (a FILE * variable), fn:NAME (a logging function)"
)]
pub struct LogStreamError(pub String);

/// A `--log-fn` that is not `NAME:ARG` with ARG >= 1 (the text as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "logging function `{0}` is not of the form NAME:ARG (ARG = the format argument, counting from 1)"
)]
pub struct LoggerSpecError(pub String);

impl LogStream {
    /// Parses `any`, `stdout`, `stderr`, `global:NAME` or `fn:NAME`.
    pub fn parse(spec: &str) -> Result<LogStream, LogStreamError> {
        Ok(match spec.trim() {
            "any" => LogStream::Any,
            "stdout" => LogStream::Stdout,
            "stderr" => LogStream::Stderr,
            s => match s.split_once(':') {
                Some(("global", n)) if !n.trim().is_empty() => LogStream::Global(n.trim().into()),
                Some(("fn", n)) if !n.trim().is_empty() => LogStream::Function(n.trim().into()),
                _ => return Err(LogStreamError(spec.to_string())),
            },
        })
    }

    /// Whether a call of `logger` writing to `stream` may have printed
    /// lines of this log. A stream that is not known may be this one.
    fn holds(&self, logger: &str, stream: &SiteStream) -> bool {
        match (self, stream) {
            (LogStream::Function(f), _) => f == logger,
            (_, SiteStream::Memory) => false,
            (LogStream::Any, _) | (_, SiteStream::Unknown) => true,
            (LogStream::Stdout, s) => *s == SiteStream::Stdout,
            // `syslog` with `LOG_PERROR` copies to standard error.
            (LogStream::Stderr, s) => matches!(s, SiteStream::Stderr | SiteStream::Syslog),
            (LogStream::Global(g), SiteStream::Global(h)) => g == h,
            (LogStream::Global(_), _) => false,
        }
    }
}

impl fmt::Display for LogStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogStream::Any => write!(f, "any stream"),
            LogStream::Stdout => write!(f, "standard output"),
            LogStream::Stderr => write!(f, "standard error"),
            LogStream::Global(g) => write!(f, "the stream in `{g}`"),
            LogStream::Function(n) => write!(f, "the output of `{n}`"),
        }
    }
}

/// A logging function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logger {
    /// Its name, as call notes or the graph name it.
    pub name: String,
    /// How it prints.
    pub kind: LoggerKind,
    /// The 0-based index of its format argument.
    pub format_arg: usize,
    /// Where it writes.
    pub output: Output,
}

impl Logger {
    /// The stream a call of it with this note writes to.
    fn stream(&self, note: &postmortem_core::CallNote) -> SiteStream {
        stream_of(self.output, note)
    }
}

/// The stream a call writing to `output` with this note writes to.
fn stream_of(output: Output, note: &postmortem_core::CallNote) -> SiteStream {
    match output {
        Output::Stdout => SiteStream::Stdout,
        Output::Stderr => SiteStream::Stderr,
        Output::Memory => SiteStream::Memory,
        Output::Syslog => SiteStream::Syslog,
        Output::Unknown => SiteStream::Unknown,
        Output::Stream(i) => match note.source_of(i) {
            Some("stdout") => SiteStream::Stdout,
            Some("stderr") => SiteStream::Stderr,
            Some(g) if !g.starts_with('#') => SiteStream::Global(g.to_string()),
            _ => SiteStream::Unknown,
        },
        Output::Fd(i) => match note.source_of(i) {
            Some("#1") => SiteStream::Stdout,
            Some("#2") => SiteStream::Stderr,
            _ => SiteStream::Unknown,
        },
    }
}

/// Library functions that print text no format string describes (bytes,
/// characters, a buffer), with where they write: a call of one of these,
/// or a printing call whose string is not a constant, may print any line
/// (see [`LogMatcher::new`] on `sprintf`).
const RAW_PRINTERS: &[(&str, Output)] = &[
    ("fwrite", Output::Stream(3)),
    ("fwrite_unlocked", Output::Stream(3)),
    ("write", Output::Fd(0)),
    ("putc", Output::Stream(1)),
    ("fputc", Output::Stream(1)),
    ("putc_unlocked", Output::Stream(1)),
    ("fputc_unlocked", Output::Stream(1)),
    ("putchar", Output::Stdout),
    ("putchar_unlocked", Output::Stdout),
    ("fputws", Output::Stream(1)),
    ("fputwc", Output::Stream(1)),
    ("putwchar", Output::Stdout),
];

impl Logger {
    /// A configured printf-style logging function whose format is
    /// argument `format_arg` (0-based).
    pub fn custom(name: &str, format_arg: usize) -> Logger {
        Logger {
            name: name.to_string(),
            kind: LoggerKind::Custom,
            format_arg,
            output: Output::Unknown,
        }
    }

    /// Parses `NAME:ARG` (ARG 1-based, as on the command line:
    /// `log_msg:2` is `log_msg(level, fmt, ...)`).
    pub fn parse_spec(spec: &str) -> Result<Logger, LoggerSpecError> {
        let bad = || LoggerSpecError(spec.to_string());
        let (name, arg) = spec.rsplit_once(':').ok_or_else(bad)?;
        let arg: usize = arg.trim().parse().map_err(|_| bad())?;
        if name.trim().is_empty() || arg == 0 {
            return Err(bad());
        }
        Ok(Logger::custom(name.trim(), arg - 1))
    }
}

/// Which functions log, and which of their output the log holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// The logging functions.
    pub loggers: Vec<Logger>,
    /// The output the log holds (`--log-stream`).
    pub stream: LogStream,
}

impl Default for LogConfig {
    /// The C library's printing functions.
    fn default() -> Self {
        use Output::{Fd, Memory, Stderr, Stdout, Stream, Syslog};
        let printf = [
            ("printf", 0, Stdout),
            ("vprintf", 0, Stdout),
            ("fprintf", 1, Stream(0)),
            ("vfprintf", 1, Stream(0)),
            ("dprintf", 1, Fd(0)),
            ("vdprintf", 1, Fd(0)),
            ("sprintf", 1, Memory),
            ("vsprintf", 1, Memory),
            ("snprintf", 2, Memory),
            ("vsnprintf", 2, Memory),
            ("asprintf", 1, Memory),
            ("vasprintf", 1, Memory),
            ("syslog", 1, Syslog),
            ("vsyslog", 1, Syslog),
            ("err", 1, Stderr),
            ("errx", 1, Stderr),
            ("verr", 1, Stderr),
            ("verrx", 1, Stderr),
            ("warn", 0, Stderr),
            ("warnx", 0, Stderr),
            ("vwarn", 0, Stderr),
            ("vwarnx", 0, Stderr),
            ("error", 2, Stderr),
            ("__printf_chk", 1, Stdout),
            ("__vprintf_chk", 1, Stdout),
            ("__fprintf_chk", 2, Stream(0)),
            ("__vfprintf_chk", 2, Stream(0)),
            ("__dprintf_chk", 2, Fd(0)),
            ("__vdprintf_chk", 2, Fd(0)),
            ("__sprintf_chk", 3, Memory),
            ("__vsprintf_chk", 3, Memory),
            ("__snprintf_chk", 4, Memory),
            ("__vsnprintf_chk", 4, Memory),
            ("__asprintf_chk", 2, Memory),
            ("__vasprintf_chk", 2, Memory),
            ("__syslog_chk", 2, Syslog),
            ("__vsyslog_chk", 2, Syslog),
        ];
        let mut loggers: Vec<Logger> = printf
            .iter()
            .map(|&(n, a, output)| Logger {
                name: n.into(),
                kind: LoggerKind::Printf,
                format_arg: a,
                output,
            })
            .collect();
        for (name, kind, output) in [
            ("puts", LoggerKind::Puts, Stdout),
            ("fputs", LoggerKind::Fputs, Stream(1)),
            ("fputs_unlocked", LoggerKind::Fputs, Stream(1)),
            ("perror", LoggerKind::Perror, Stderr),
        ] {
            loggers.push(Logger {
                name: name.into(),
                kind,
                format_arg: 0,
                output,
            });
        }
        LogConfig {
            loggers,
            stream: LogStream::Any,
        }
    }
}

impl LogConfig {
    /// Adds a logging function (a later one of the same name replaces an
    /// earlier one).
    pub fn add(&mut self, logger: Logger) {
        self.loggers.retain(|l| l.name != logger.name);
        self.loggers.push(logger);
    }
}

/// The regex (without anchors) of the text a printf format prints, for
/// a format without newlines (a newline in it is matched literally).
pub fn format_regex(format: &str) -> String {
    let mut out = String::with_capacity(format.len() * 2);
    let mut lit = String::new();
    let b = format.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let start = i;
            while i < b.len() && b[i] != b'%' {
                i += 1;
            }
            lit.push_str(&format[start..i]);
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            lit.push('%');
            i += 2;
            continue;
        }
        out.push_str(&regex::escape(&lit));
        lit.clear();
        let spec = ConversionSpec::parse(format, i + 1);
        let Some(&conv) = b.get(spec.conv) else {
            // A format ending in the middle of a conversion: anything.
            out.push_str(".*");
            break;
        };
        let pat = conversion_regex(conv, &spec.flags);
        let conv_len = format[spec.conv..].chars().next().map_or(1, char::len_utf8);
        if spec.width && !pat.is_empty() && pat != ".*" {
            out.push_str(&format!(" *(?:{pat}) *"));
        } else if !pat.is_empty() {
            out.push_str(&format!("(?:{pat})"));
        }
        i = spec.conv + conv_len;
    }
    out.push_str(&regex::escape(&lit));
    out
}

/// The parts of a conversion `%[pos$][flags][width][.prec][length]conv`
/// that shape its regex.
struct ConversionSpec {
    /// The flag characters.
    flags: String,
    /// Whether a width is given (a number or `*`).
    width: bool,
    /// The byte index of the conversion character (the format's length
    /// when it ends before one).
    conv: usize,
}

impl ConversionSpec {
    /// Parses the conversion whose `%` is just before byte `j` of `format`.
    fn parse(format: &str, mut j: usize) -> ConversionSpec {
        let b = format.as_bytes();
        // Positional argument `2$`.
        j = skip_positional(b, j);
        let mut flags = String::new();
        while j < b.len() && matches!(b[j], b'-' | b'+' | b' ' | b'#' | b'0' | b'\'' | b'I') {
            flags.push(b[j] as char);
            j += 1;
        }
        let width;
        if j < b.len() && b[j] == b'*' {
            width = true;
            j = skip_positional(b, j + 1);
        } else {
            let w = j;
            j = skip_digits(b, j);
            width = j > w;
        }
        if j < b.len() && b[j] == b'.' {
            j += 1;
            if j < b.len() && b[j] == b'*' {
                j = skip_positional(b, j + 1);
            } else {
                j = skip_digits(b, j);
            }
        }
        while j < b.len() && matches!(b[j], b'h' | b'l' | b'L' | b'q' | b'j' | b'z' | b'Z' | b't') {
            j += 1;
        }
        // Microsoft's I64 / I32 length.
        if format[j..].starts_with("I64") || format[j..].starts_with("I32") {
            j += 3;
        }
        ConversionSpec {
            flags,
            width,
            conv: j,
        }
    }
}

/// The index after the ASCII digits that start at `j`.
fn skip_digits(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// The index after a positional argument `N$` at `j` (`j` itself when
/// there is none).
fn skip_positional(b: &[u8], j: usize) -> usize {
    let k = skip_digits(b, j);
    if k > j && k < b.len() && b[k] == b'$' {
        k + 1
    } else {
        j
    }
}

/// The regex of what conversion `conv` with `flags` prints (empty for
/// `%n`, which prints nothing).
fn conversion_regex(conv: u8, flags: &str) -> String {
    let sign = if flags.contains(['+', ' ']) {
        "[-+ ]?"
    } else {
        "-?"
    };
    let grouped = flags.contains('\'');
    let alt = flags.contains('#');
    match conv {
        b'd' | b'i' => format!("{sign}{}", if grouped { "[0-9][0-9,.' ]*" } else { "[0-9]+" }),
        b'u' => (if grouped { "[0-9][0-9,.' ]*" } else { "[0-9]+" }).into(),
        b'o' => "[0-7]+".into(),
        b'x' | b'X' => (if alt { "(?:0[xX])?[0-9a-fA-F]+" } else { "[0-9a-fA-F]+" }).into(),
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
            "[-+ ]?(?:[0-9][0-9,.']*(?:[eE][-+]?[0-9]+)?|\\.[0-9]+(?:[eE][-+]?[0-9]+)?|(?i:inf(?:inity)?|nan))"
                .into()
        }
        b'a' | b'A' => "[-+ ]?(?i:0x[0-9a-f]*\\.?[0-9a-f]*p[-+]?[0-9]+|inf(?:inity)?|nan)".into(),
        b'c' | b'C' => ".".into(),
        b's' | b'S' | b'm' => ".*".into(),
        b'p' => "(?:0[xX][0-9a-fA-F]+|\\(nil\\)|\\(null\\)|0)".into(),
        b'n' => String::new(),
        _ => ".*".into(),
    }
}

/// The regex of one line of a format's output (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinePattern {
    /// The anchored regex.
    pub regex: String,
    /// `true` for the format's first line (which yields a candidate);
    /// `false` for later lines (continuations).
    pub first: bool,
}

/// The line patterns of a printf format (`newline`: the function prints
/// a newline after it, as `puts` does). Empty lines yield no pattern.
pub fn line_patterns(format: &str, newline: bool) -> Vec<LinePattern> {
    let text = if newline {
        format!("{format}\n")
    } else {
        format.to_string()
    };
    let parts: Vec<&str> = text.split('\n').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, p)| {
            let start = if i > 0 { "^" } else { "" };
            let end = if i < last { "$" } else { "" };
            LinePattern {
                regex: format!("{start}{}{end}", format_regex(p)),
                first: i == 0,
            }
        })
        .collect()
}

/// One call site that logs, with the format it was matched by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSite {
    /// The call site.
    pub site: NodeId,
    /// The logging function.
    pub logger: String,
    /// The format string (one of several for a custom logger).
    pub format: String,
}

/// What became of one log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It is element `i` of the trace.
    Element(usize),
    /// It fits a later line of a multi-line format: left out.
    Continuation,
    /// No format fits it: left out, with a warning.
    Unmatched,
    /// A blank line: skipped.
    Blank,
    /// The log's last line, with no newline after it: the crash may have
    /// cut it short (its text a prefix of what the call printed, which
    /// can fit another format, or none), so it is left out.
    CutShort,
}

/// One log line and the call sites that may have printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineMatch {
    /// 1-based line number in the log.
    pub number: usize,
    /// The line.
    pub text: String,
    /// Indices into [`LogMatch::sites`] whose first line fits.
    pub sites: Vec<usize>,
    /// Indices into [`LogMatch::sites`] of which a later line fits.
    pub continues: Vec<usize>,
    /// What became of it.
    pub outcome: Outcome,
}

/// A diagnostic of log matching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogWarning {
    /// A line no format fits.
    Unmatched {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// Lines left out as possible continuations of multi-line messages.
    Continuations {
        /// How many.
        count: usize,
    },
    /// The graph has no call of a logging function with a constant
    /// string (no call notes): the log says nothing.
    NoLoggingCalls,
}

impl fmt::Display for LogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogWarning::Unmatched { line, text } => write!(
                f,
                "log line {line} {} matches no format string of the program; left out of the trace",
                crate::error::quote(text)
            ),
            LogWarning::Continuations { count } => write!(
                f,
                "{count} log line{} may continue a multi-line message printed by one call; left out of the trace (see --explain-log)",
                if *count == 1 { "" } else { "s" }
            ),
            LogWarning::NoLoggingCalls => write!(
                f,
                "the graph records no call of a logging function with a constant format string; the log is ignored"
            ),
        }
    }
}

/// The log mapped to the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogMatch {
    /// Every line, in order.
    pub lines: Vec<LineMatch>,
    /// The unreliable trace of the matched lines (`None` if none matched).
    pub trace: Option<Trace>,
    /// Diagnostics.
    pub warnings: Vec<LogWarning>,
    /// The logging call sites that were tried ([`LineMatch::sites`] and
    /// [`LineMatch::continues`] index into it).
    pub sites: Vec<LogSite>,
    /// The output the log was taken to hold.
    pub stream: LogStream,
    /// Logging call sites left out as writing to another stream.
    pub other_streams: usize,
    /// Those call sites.
    pub other_stream_sites: Vec<NodeId>,
    /// Memory formatters' call sites (`sprintf`, ...) left out: no call
    /// of the program prints a computed string to the log's stream, so
    /// what they format never reaches it but through a logging call
    /// whose format is matched itself.
    pub memory_left_out: usize,
}

/// How much a log told ([`LogMatch::summary`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogSummary {
    /// Lines of the log (blank lines too).
    pub lines: usize,
    /// Lines that became trace elements.
    pub in_trace: usize,
    /// Of those, lines that more than one call site may have printed.
    pub ambiguous: usize,
    /// The most call sites one line matched.
    pub most_sites: usize,
    /// Lines no format fits.
    pub unmatched: usize,
    /// Logging call sites tried / left out as writing to another stream
    /// / memory formatters left out.
    pub sites: usize,
    /// See [`LogMatch::other_streams`].
    pub other_streams: usize,
    /// See [`LogMatch::memory_left_out`].
    pub memory_left_out: usize,
}

impl LogMatch {
    /// How much the log told.
    pub fn summary(&self) -> LogSummary {
        let mut s = LogSummary {
            lines: self.lines.len(),
            sites: self.sites.len(),
            other_streams: self.other_streams,
            memory_left_out: self.memory_left_out,
            ..LogSummary::default()
        };
        for l in &self.lines {
            match l.outcome {
                Outcome::Element(i) => {
                    s.in_trace += 1;
                    let n = self
                        .trace
                        .as_ref()
                        .map_or(0, |t| t.entries[i].nodes().len());
                    s.ambiguous += usize::from(n > 1);
                    s.most_sites = s.most_sites.max(n);
                }
                Outcome::Unmatched => s.unmatched += 1,
                _ => {}
            }
        }
        s
    }
}

/// Why the logs did not decide whether the print at `n` ran, when `n` is
/// a printing call (`None` otherwise): it writes to another stream than
/// the log's; every log line its format fits may have come from other
/// calls too; or no log line fits it (it did not print, or its line was
/// lost, as buffered output is at a crash).
pub fn why_not_decided(logs: &[LogMatch], n: NodeId) -> Option<String> {
    for m in logs {
        if m.other_stream_sites.binary_search(&n).is_ok() {
            return Some(format!(
                "it prints to another stream than the log's ({}; --log-stream)",
                m.stream
            ));
        }
        let mine: Vec<usize> = (0..m.sites.len())
            .filter(|&i| m.sites[i].site == n)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let fits: Vec<&LineMatch> = m
            .lines
            .iter()
            .filter(|l| l.sites.iter().any(|s| mine.contains(s)))
            .collect();
        let shared = fits.iter().all(|l| {
            l.sites
                .iter()
                .map(|&s| m.sites[s].site)
                .any(|other| other != n)
        });
        return Some(match fits.len() {
            0 => "no log line fits its format: it did not print, or its line was lost (buffered output)".to_string(),
            k if shared => format!(
                "its format fits {k} log line{}, each of which other calls may have printed too",
                if k == 1 { "" } else { "s" }
            ),
            _ => return None,
        });
    }
    None
}

impl fmt::Display for LogSummary {
    /// One line: what the log gave, so that a weak log is seen.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} lines in the trace; {} of them match more than one call site (at most {})",
            self.in_trace, self.lines, self.ambiguous, self.most_sites
        )?;
        if self.other_streams > 0 {
            write!(
                f,
                "; {} logging calls left out as writing to another stream",
                self.other_streams
            )?;
        }
        if self.memory_left_out > 0 {
            write!(
                f,
                "; {} sprintf-like calls left out (nothing prints a computed string)",
                self.memory_left_out
            )?;
        }
        Ok(())
    }
}

/// Patterns compiled into regex sets (in chunks, to stay within the
/// regex size limits).
struct Sets {
    sets: Vec<RegexSet>,
    /// For each pattern (in set order): the sites it stands for.
    owners: Vec<Vec<usize>>,
}

impl Sets {
    fn build(patterns: Vec<(String, Vec<usize>)>) -> Sets {
        const CHUNK: usize = 256;
        let mut sets = Vec::new();
        let mut owners = Vec::new();
        for chunk in patterns.chunks(CHUNK) {
            let mut regexes: Vec<String> = chunk.iter().map(|p| p.0.clone()).collect();
            let build = |rs: &[String]| {
                RegexSetBuilder::new(rs)
                    .size_limit(64 << 20)
                    .dfa_size_limit(16 << 20)
                    .build()
            };
            let set = match build(&regexes) {
                Ok(s) => s,
                Err(_) => {
                    // One pattern too large or broken: it matches anything
                    // (more candidates, never fewer).
                    for r in &mut regexes {
                        if build(std::slice::from_ref(r)).is_err() {
                            *r = String::new();
                        }
                    }
                    build(&regexes).unwrap_or_else(|_| {
                        regexes.iter_mut().for_each(|r| r.clear());
                        build(&regexes).expect("empty patterns compile")
                    })
                }
            };
            sets.push(set);
            owners.extend(chunk.iter().map(|p| p.1.clone()));
        }
        Sets { sets, owners }
    }

    fn matching(&self, line: &str, out: &mut Vec<usize>) {
        let mut base = 0;
        for s in &self.sets {
            for i in s.matches(line).iter() {
                out.extend(&self.owners[base + i]);
            }
            base += s.len();
        }
        out.sort_unstable();
        out.dedup();
    }
}

/// The logging call sites of a graph and their compiled patterns.
pub struct LogMatcher {
    sites: Vec<LogSite>,
    first: Sets,
    later: Sets,
    /// The output the log holds.
    stream: LogStream,
    /// Logging call sites left out: they write to another stream.
    other_streams: usize,
    /// Those call sites.
    other_sites: Vec<NodeId>,
    /// Memory formatters' call sites left out (see [`LogMatcher::new`]).
    memory_left_out: usize,
}

/// The call sites [`LogMatcher::new`] found, as it finds them.
#[derive(Default)]
struct Found {
    /// Sites that may have printed lines of the log.
    sites: Vec<LogSite>,
    /// Sites of memory formatters (`sprintf`, ...).
    memory: Vec<LogSite>,
    /// Whether some call may print a computed string (no format string
    /// describes it) to the log's stream.
    raw_printer: bool,
    /// Sites left out as writing to another stream.
    other_streams: usize,
    /// Those sites.
    other_sites: Vec<NodeId>,
}

impl Found {
    /// A call of `name` (a logging function if `logger`) at `site`.
    fn call(
        &mut self,
        site: NodeId,
        note: &postmortem_core::CallNote,
        name: &str,
        logger: Option<&Logger>,
        stream: &LogStream,
    ) {
        if let Some(&(_, out)) = RAW_PRINTERS.iter().find(|(n, _)| *n == name) {
            // What the compiler makes of `fputs`, `printf` and `putchar`
            // of constants: `fwrite` of a constant string, `putchar` or
            // `fputc` of a constant character.
            let text: Vec<String> = match out {
                Output::Stream(3) => note.strings_at(0).iter().map(|s| s.to_string()).collect(),
                _ => note
                    .source_of(0)
                    .and_then(|c| c.strip_prefix('#')?.parse::<u8>().ok())
                    .filter(|c| c.is_ascii())
                    .map(|c| vec![char::from(c).to_string()])
                    .unwrap_or_default(),
            };
            let to = stream_of(out, note);
            if text.is_empty() || matches!(out, Output::Fd(_)) {
                self.raw_printer |= stream.holds(name, &to);
            } else if stream.holds(name, &to) {
                for t in text {
                    self.sites.push(LogSite {
                        site,
                        logger: name.to_string(),
                        format: t,
                    });
                }
            } else {
                self.other_streams += 1;
                self.other_sites.push(site);
            }
            return;
        }
        let Some(logger) = logger else { return };
        let at = logger.format_arg;
        let formats: Vec<&str> = if note.indexed() {
            note.strings_at(at as u32)
        } else if logger.kind == LoggerKind::Custom {
            let k = (at + 1).min(note.string_args.len());
            note.string_args[..k].iter().map(|s| &**s).collect()
        } else {
            note.string_args.iter().take(1).map(|s| &**s).collect()
        };
        let to = logger.stream(note);
        if formats.is_empty() {
            // A computed format or string: it may print anything.
            self.raw_printer |= to != SiteStream::Memory && stream.holds(name, &to);
            return;
        }
        let into = if to == SiteStream::Memory {
            &mut self.memory
        } else if stream.holds(name, &to) {
            &mut self.sites
        } else {
            self.other_streams += 1;
            self.other_sites.push(site);
            return;
        };
        for f in formats {
            into.push(LogSite {
                site,
                logger: name.to_string(),
                format: f.to_string(),
            });
        }
    }
}

impl LogMatcher {
    /// Finds the logging call sites of `g` (see the module docs) and
    /// compiles their patterns.
    pub fn new(g: &Icfg, cfg: &LogConfig) -> LogMatcher {
        let by_name: HashMap<&str, &Logger> =
            cfg.loggers.iter().map(|l| (l.name.as_str(), l)).collect();
        let mut found = Found::default();
        // Argument indices come from the LLVM front-end; without them
        // (GraphML, JSON graphs) the format is the first constant string
        // and any call may print a computed string.
        let indexed = g
            .call_notes()
            .filter(|(_, n)| !n.string_args.is_empty())
            .all(|(_, n)| n.indexed());
        found.raw_printer = !indexed;
        for (site, note) in g.call_notes() {
            let internal = g.callees(site).map(|f| g.function(f).name.to_string());
            let names: Vec<String> = note
                .external_callees
                .iter()
                .map(|s| s.to_string())
                .chain(internal)
                .collect();
            for name in &names {
                found.call(
                    site,
                    note,
                    name,
                    by_name.get(name.as_str()).copied(),
                    &cfg.stream,
                );
            }
        }
        let Found {
            mut sites,
            memory,
            raw_printer,
            other_streams,
            mut other_sites,
        } = found;
        other_sites.sort_unstable();
        other_sites.dedup();
        let memory_left_out = if raw_printer {
            sites.extend(memory);
            0
        } else {
            memory.len()
        };
        let mut first: HashMap<String, Vec<usize>> = HashMap::new();
        let mut later: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in sites.iter().enumerate() {
            // The raw printers' sites print their text as is.
            let kind = by_name
                .get(s.logger.as_str())
                .map_or(LoggerKind::Fputs, |l| l.kind);
            let pats = match kind {
                LoggerKind::Puts => line_patterns(&escape_percent(&s.format), true),
                LoggerKind::Fputs => line_patterns(&escape_percent(&s.format), false),
                LoggerKind::Perror => {
                    line_patterns(&format!("{}: %s\n", escape_percent(&s.format)), false)
                }
                LoggerKind::Printf | LoggerKind::Custom => line_patterns(&s.format, false),
            };
            for p in pats {
                let map = if p.first { &mut first } else { &mut later };
                map.entry(p.regex).or_default().push(i);
            }
        }
        let sorted = |m: HashMap<String, Vec<usize>>| {
            let mut v: Vec<(String, Vec<usize>)> = m.into_iter().collect();
            v.sort();
            v
        };
        LogMatcher {
            sites,
            first: Sets::build(sorted(first)),
            later: Sets::build(sorted(later)),
            stream: cfg.stream.clone(),
            other_streams,
            other_sites,
            memory_left_out,
        }
    }

    /// The logging call sites found (one entry per candidate format).
    pub fn sites(&self) -> &[LogSite] {
        &self.sites
    }

    /// Matches log lines (in log order) and builds the trace.
    pub fn match_lines<'a>(&self, lines: impl IntoIterator<Item = &'a str>) -> LogMatch {
        let mut out = LogMatch {
            lines: Vec::new(),
            trace: None,
            warnings: Vec::new(),
            sites: self.sites.clone(),
            stream: self.stream.clone(),
            other_streams: self.other_streams,
            other_stream_sites: self.other_sites.clone(),
            memory_left_out: self.memory_left_out,
        };
        let mut entries: Vec<NodeSet> = Vec::new();
        let mut continuations = 0;
        let mut unmatched = Vec::new();
        for (i, raw) in lines.into_iter().enumerate() {
            let text = raw.strip_suffix('\r').unwrap_or(raw);
            let mut m = LineMatch {
                number: i + 1,
                text: text.to_string(),
                sites: vec![],
                continues: vec![],
                outcome: Outcome::Blank,
            };
            if !text.trim().is_empty() {
                self.first.matching(text, &mut m.sites);
                self.later.matching(text, &mut m.continues);
                m.outcome = if !m.continues.is_empty() {
                    continuations += 1;
                    Outcome::Continuation
                } else if let Some(set) =
                    NodeSet::new(m.sites.iter().map(|&s| self.sites[s].site).collect())
                {
                    entries.push(set);
                    Outcome::Element(entries.len() - 1)
                } else {
                    unmatched.push(LogWarning::Unmatched {
                        line: m.number,
                        text: m.text.clone(),
                    });
                    Outcome::Unmatched
                };
            }
            out.lines.push(m);
        }
        if self.sites.is_empty() && !unmatched.is_empty() {
            out.warnings.push(LogWarning::NoLoggingCalls);
        } else {
            out.warnings.extend(unmatched);
        }
        if continuations > 0 {
            out.warnings.push(LogWarning::Continuations {
                count: continuations,
            });
        }
        if !entries.is_empty() {
            out.trace = Some(Trace {
                reliable: false,
                entries,
            });
        }
        out
    }

    /// Matches the lines of a log text. A last line with no newline after
    /// it is left out ([`Outcome::CutShort`]; the caller warns, see
    /// `failure::buffering_warning`).
    pub fn match_text(&self, text: &str) -> LogMatch {
        let cut = match text.rfind('\n') {
            _ if text.is_empty() || text.ends_with('\n') => None,
            Some(i) => Some((&text[..=i], &text[i + 1..])),
            None => Some(("", text)),
        };
        let Some((whole, last)) = cut else {
            return self.match_lines(text.lines());
        };
        let mut m = self.match_lines(whole.lines());
        m.lines.push(LineMatch {
            number: whole.lines().count() + 1,
            text: last.strip_suffix('\r').unwrap_or(last).to_string(),
            sites: vec![],
            continues: vec![],
            outcome: Outcome::CutShort,
        });
        m
    }
}

/// Writes which log line matched which call sites (`--explain-log`):
/// one line per log line, then one indented line per candidate with
/// its location, input id, function and format.
pub fn write_explain(out: &mut dyn Write, g: &Icfg, m: &LogMatch) -> io::Result<()> {
    let site = |out: &mut dyn Write, i: usize| -> io::Result<()> {
        let s = &m.sites[i];
        let f = g.function(g.func_of(s.site));
        let file = f.file.map_or("?", |x| g.file_path(x));
        let line = g
            .lines(s.site)
            .first()
            .map_or(String::new(), |l| format!(":{l}"));
        writeln!(
            out,
            "    {file}{line} [{}] in {}: {}({})",
            g.ext_id(s.site),
            f.name,
            s.logger,
            c_quote(&s.format)
        )
    };
    for l in &m.lines {
        let what = match &l.outcome {
            Outcome::Element(i) => {
                format!("trace element {i}, one of {} call site(s)", l.sites.len())
            }
            Outcome::Continuation => "left out: may continue a multi-line message".into(),
            Outcome::Unmatched => "left out: no format string fits".into(),
            Outcome::CutShort => {
                "left out: the last line, with no newline after it, may be cut short".into()
            }
            Outcome::Blank => continue,
        };
        writeln!(
            out,
            "log line {} {}: {what}",
            l.number,
            crate::error::quote(&l.text)
        )?;
        for &i in &l.sites {
            site(out, i)?;
        }
        if !l.continues.is_empty() {
            writeln!(out, "  continues a message of:")?;
            for &i in &l.continues {
                site(out, i)?;
            }
        }
    }
    Ok(())
}

/// `puts`/`fputs` print their string verbatim: `%` is literal.
fn escape_percent(s: &str) -> String {
    s.replace('%', "%%")
}

/// A string as a C literal, for display.
fn c_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars().take(120) {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    if s.chars().count() > 120 {
        out.push_str("...");
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn spec_errors_keep_their_messages() {
        assert_eq!(
            LogStream::parse(" stdin").unwrap_err().to_string(),
            "log stream ` stdin` is none of any, stdout, stderr, global:NAME (a FILE * variable), fn:NAME (a logging function)"
        );
        assert_eq!(
            Logger::parse_spec("log_msg:0").unwrap_err().to_string(),
            "logging function `log_msg:0` is not of the form NAME:ARG (ARG = the format argument, counting from 1)"
        );
    }
    use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};
    use regex::Regex;

    fn full(format: &str) -> Regex {
        Regex::new(&format!("^{}$", format_regex(format))).unwrap()
    }

    #[test]
    fn conversions() {
        let r = full("Processed %d items (%5.2f%%) in %s");
        assert!(r.is_match("Processed -12 items ( 3.14%) in main"));
        assert!(r.is_match("Processed 3 items (100.00%) in "));
        assert!(!r.is_match("Processed x items (1%) in a"));
        assert!(full("%x/%#X/%o").is_match("ff/0XAB/17"));
        assert!(!full("%o").is_match("9"));
        assert!(full("%u").is_match("42") && !full("%u").is_match("-42"));
        assert!(full("%+d").is_match("+5"));
        assert!(full("%ld %lld %zu %hhx %jd").is_match("1 -2 3 ff 4"));
        assert!(full("%e|%g|%G").is_match("1.500000e+00|0.0001|INF"));
        assert!(full("%f").is_match("-nan"));
        assert!(full("%c%c").is_match("ab") && !full("%c").is_match("ab"));
        assert!(full("%p %p").is_match("0x7ffd5e8 (nil)"));
        assert!(full("%*d|%-*s|%.*s").is_match("   7|ab   |xyz"));
        assert!(full("%2$s %1$d").is_match("x 3"));
        assert!(full("100%%").is_match("100%") && !full("100%%").is_match("100%%"));
        assert!(full("a.b*c").is_match("a.b*c") && !full("a.b*c").is_match("axb*c"));
        assert!(full("%n%d").is_match("1"));
        assert!(full("%a").is_match("0x1.8p+1"));
        // Unknown or cut conversions match anything.
        assert!(full("x%y").is_match("x whatever"));
        assert!(full("x%").is_match("x whatever"));
        assert!(full("x%5").is_match("x whatever"));
    }

    #[test]
    fn lines_and_anchors() {
        let p = line_patterns("Value %d\n", false);
        assert_eq!(
            p,
            vec![LinePattern {
                regex: "Value (?:-?[0-9]+)$".into(),
                first: true
            }]
        );
        let re = Regex::new(&p[0].regex).unwrap();
        assert!(
            re.is_match("Value 5")
                && re.is_match("prefix: Value 5")
                && !re.is_match("Value 5 more")
        );
        let p = line_patterns("Start\nnext %s\nend", false);
        assert_eq!(
            p.iter()
                .map(|p| (p.regex.as_str(), p.first))
                .collect::<Vec<_>>(),
            vec![("Start$", true), ("^next (?:.*)$", false), ("^end", false)]
        );
        assert_eq!(line_patterns("done", true)[0].regex, "done$");
        assert!(line_patterns("\n", false).is_empty());
    }

    /// main: printf("Processed %d items\n") [p1], fprintf(stderr, "error: %s\n") [p2],
    /// puts("done") [p3], log_msg(level=?, "x=%d") custom [p4], printf("a\nb %d\n") [p5],
    /// and a printf with no constant format [p6].
    fn graph() -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let log_fn = b.function("log_msg");
        b.set_function_file(main, "m.c");
        let me = b
            .add_node(NodeSpec {
                ext_id: "me",
                kind: NodeKind::Entry,
                func: main,
                label: "",
                lines: &[1],
            })
            .unwrap();
        let le = b
            .add_node(NodeSpec {
                ext_id: "le",
                kind: NodeKind::Entry,
                func: log_fn,
                label: "",
                lines: &[50],
            })
            .unwrap();
        let mut sites = Vec::new();
        let calls: [(&str, &[&str]); 6] = [
            ("printf", &["Processed %d items\n"]),
            ("fprintf", &["error: %s\n"]),
            ("puts", &["done"]),
            ("log_msg", &["net", "x=%d"]),
            ("printf", &["a\nb %d\n"]),
            ("printf", &[]),
        ];
        let mut prev = me;
        for (i, (callee, args)) in calls.iter().enumerate() {
            let id = format!("p{}", i + 1);
            let line = [10 + i as u32];
            let s = b
                .add_node(NodeSpec {
                    ext_id: &id,
                    kind: NodeKind::CallSite,
                    func: main,
                    label: "",
                    lines: &line,
                })
                .unwrap();
            b.add_flow_edge(prev, s);
            if *callee == "log_msg" {
                b.add_call_edge(s, le);
            } else {
                b.add_external_callee(s);
                b.add_external_callee_name(s, callee);
            }
            for a in *args {
                b.add_string_arg(s, a);
            }
            sites.push(s);
            prev = s;
        }
        (b.build().unwrap(), sites)
    }

    /// A straight-line `main` of call sites as the LLVM front-end notes
    /// them: `(callee, [(argument index, constant string)], [(argument
    /// index, source)])`.
    type Call<'a> = (&'a str, &'a [(u32, &'a str)], &'a [(u32, &'a str)]);

    fn indexed_graph(calls: &[Call<'_>]) -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        b.set_function_file(main, "m.c");
        let mut prev = b
            .add_node(NodeSpec {
                ext_id: "me",
                kind: NodeKind::Entry,
                func: main,
                label: "",
                lines: &[1],
            })
            .unwrap();
        let mut sites = Vec::new();
        for (i, (callee, strs, sources)) in calls.iter().enumerate() {
            let id = format!("p{}", i + 1);
            let s = b
                .add_node(NodeSpec {
                    ext_id: &id,
                    kind: NodeKind::CallSite,
                    func: main,
                    label: "",
                    lines: &[10 + i as u32],
                })
                .unwrap();
            b.add_flow_edge(prev, s);
            b.add_external_callee(s);
            b.add_external_callee_name(s, callee);
            for (k, a) in *strs {
                b.add_string_arg_at(s, *k, a);
            }
            for (k, src) in *sources {
                b.add_arg_source(s, *k, src);
            }
            sites.push(s);
            prev = s;
        }
        (b.build().unwrap(), sites)
    }

    fn candidates(g: &Icfg, stream: LogStream, line: &str) -> Vec<NodeId> {
        let cfg = LogConfig {
            stream,
            ..LogConfig::default()
        };
        let m = LogMatcher::new(g, &cfg).match_text(&format!("{line}\n"));
        m.trace
            .map(|t| t.entries[0].nodes().to_vec())
            .unwrap_or_default()
    }

    /// `--log-stream`: only the calls that may write to the log's stream
    /// are candidates; a call whose stream is not a global or a constant
    /// may write anywhere.
    #[test]
    fn a_log_of_one_stream_matches_only_the_calls_that_write_there() {
        let (g, s) = indexed_graph(&[
            ("printf", &[(0, "%s\n")], &[]),
            ("fprintf", &[(1, "note %d\n")], &[(0, "stderr")]),
            ("fprintf", &[(1, "note %d\n")], &[]),
            (
                "__fprintf_chk",
                &[(2, "note %d\n")],
                &[(0, "logfile"), (1, "#1")],
            ),
            ("dprintf", &[(1, "note %d\n")], &[(0, "#1")]),
            ("perror", &[(0, "note 5")], &[]),
        ]);
        let any = candidates(&g, LogStream::Any, "note 5");
        assert_eq!(any, s[..5].to_vec(), "perror prints `note 5: ...`");
        assert_eq!(
            candidates(&g, LogStream::Stderr, "note 5"),
            vec![s[1], s[2]]
        );
        assert_eq!(
            candidates(&g, LogStream::Stdout, "note 5"),
            vec![s[0], s[2], s[4]]
        );
        assert_eq!(
            candidates(&g, LogStream::Global("logfile".into()), "note 5"),
            vec![s[2], s[3]]
        );
        assert_eq!(
            candidates(&g, LogStream::Stderr, "note 5: No such file"),
            vec![s[5]]
        );
        assert_eq!(
            LogStream::parse("global:logfile"),
            Ok(LogStream::Global("logfile".into()))
        );
        assert_eq!(
            LogStream::parse("fn:log_msg"),
            Ok(LogStream::Function("log_msg".into()))
        );
        assert!(LogStream::parse("stdin").is_err());
    }

    /// `snprintf` and its kind write to memory: their formats match only
    /// when some call may print a computed string to the log's stream
    /// (then the line may be the buffer printed).
    #[test]
    fn memory_formatters_match_only_when_a_computed_string_may_be_printed() {
        let calls: [Call<'_>; 2] = [
            ("snprintf", &[(2, "%ld")], &[]),
            ("fprintf", &[(1, "n=%ld\n")], &[(0, "stderr")]),
        ];
        let (g, s) = indexed_graph(&calls);
        assert_eq!(candidates(&g, LogStream::Any, "42"), Vec::<NodeId>::new());
        let m = LogMatcher::new(&g, &LogConfig::default()).match_text("n=42\n");
        assert_eq!(m.summary().memory_left_out, 1);
        // `fputs(buf, stderr)`: a computed string to standard error.
        let mut with_raw = calls.to_vec();
        with_raw.push(("fputs", &[], &[(1, "stderr")]));
        let (g, s2) = indexed_graph(&with_raw);
        assert_eq!(candidates(&g, LogStream::Any, "42"), vec![s2[0]]);
        assert_eq!(candidates(&g, LogStream::Stderr, "42"), vec![s2[0]]);
        // ... but not when the log is standard output.
        assert_eq!(
            candidates(&g, LogStream::Stdout, "42"),
            Vec::<NodeId>::new()
        );
        // `fwrite` of a constant string prints that string.
        let (g, s3) = indexed_graph(&[
            ("snprintf", &[(2, "%ld")], &[]),
            (
                "fwrite",
                &[(0, "ok\n")],
                &[(1, "#1"), (2, "#3"), (3, "stderr")],
            ),
            ("fputc", &[], &[(0, "#120"), (1, "stderr")]),
        ]);
        assert_eq!(candidates(&g, LogStream::Stderr, "ok"), vec![s3[1]]);
        assert_eq!(
            candidates(&g, LogStream::Stderr, "42"),
            Vec::<NodeId>::new()
        );
        // `fputc('x', stderr)` may end a line with an `x`.
        assert_eq!(candidates(&g, LogStream::Stderr, "1x"), vec![s3[2]]);
        let _ = s;
    }

    /// Why a print did not get decided by the log: another stream, a
    /// format whose lines other calls may have printed, no line at all;
    /// nothing for a print the log pins down, or a call that prints not.
    #[test]
    fn a_print_says_why_the_log_did_not_decide_it() {
        let (g, s) = indexed_graph(&[
            ("printf", &[(0, "out %d\n")], &[]),
            ("fprintf", &[(1, "note %d\n")], &[(0, "stderr")]),
            ("fprintf", &[(1, "note %d\n")], &[(0, "stderr")]),
            ("fprintf", &[(1, "done\n")], &[(0, "stderr")]),
            ("fprintf", &[(1, "never %s\n")], &[(0, "stderr")]),
            ("abort", &[], &[]),
        ]);
        let cfg = LogConfig {
            stream: LogStream::Stderr,
            ..LogConfig::default()
        };
        let m = vec![LogMatcher::new(&g, &cfg).match_text("note 5\ndone\n")];
        let why = |k: usize| why_not_decided(&m, s[k]);
        assert!(why(0).unwrap().contains("another stream"), "{:?}", why(0));
        assert!(why(1)
            .unwrap()
            .contains("fits 1 log line, each of which other calls"));
        assert_eq!(why(1), why(2));
        assert_eq!(why(3), None, "`done` is this call's alone");
        assert!(why(4).unwrap().starts_with("no log line fits its format"));
        assert_eq!(why(5), None, "not a print");
    }

    /// `-O2` merges two `fprintf` calls that differ in their format into
    /// one whose format is a `select` of both: each is matched.
    #[test]
    fn a_format_that_is_a_choice_of_constants_matches_each() {
        let (g, s) = indexed_graph(&[(
            "fprintf",
            &[(1, "inserted %s\n"), (1, "updated %s\n")],
            &[(0, "stderr")],
        )]);
        assert_eq!(candidates(&g, LogStream::Stderr, "inserted a"), vec![s[0]]);
        assert_eq!(candidates(&g, LogStream::Stderr, "updated a"), vec![s[0]]);
        let note = g.call_note(s[0]).unwrap();
        assert_eq!(note.string_args.len(), 1);
        assert_eq!(note.strings_at(1), vec!["inserted %s\n", "updated %s\n"]);
    }

    #[test]
    fn log_lines_become_one_ordered_trace_of_candidate_sets() {
        let (g, s) = graph();
        let mut cfg = LogConfig::default();
        cfg.add(Logger::parse_spec("log_msg:2").unwrap());
        let m = LogMatcher::new(&g, &cfg);
        let got = m.match_text(
            "Processed 3 items\nerror: disk full\n\ndone\nx=5\nnet\nunknown line\na\nb 7\r\n",
        );
        let t = got.trace.as_ref().unwrap();
        assert!(!t.reliable);
        let sets: Vec<Vec<NodeId>> = t.entries.iter().map(|e| e.nodes().to_vec()).collect();
        // "net" fits log_msg's first string taken as the format (either of
        // its first two constant strings may be the format).
        assert_eq!(
            sets,
            vec![
                vec![s[0]],
                vec![s[1]],
                vec![s[2]],
                vec![s[3]],
                vec![s[3]],
                vec![s[4]]
            ]
        );
        assert_eq!(got.lines[2].outcome, Outcome::Blank);
        assert_eq!(got.lines[6].outcome, Outcome::Unmatched);
        assert_eq!(got.lines[8].outcome, Outcome::Continuation);
        assert_eq!(
            got.warnings,
            vec![
                LogWarning::Unmatched {
                    line: 7,
                    text: "unknown line".into()
                },
                LogWarning::Continuations { count: 1 }
            ]
        );
        let mut buf = Vec::new();
        write_explain(&mut buf, &g, &got).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("log line 1 \"Processed 3 items\": trace element 0"),
            "{text}"
        );
        assert!(
            text.contains("m.c:10 [p1] in main: printf(\"Processed %d items\\n\")"),
            "{text}"
        );
        assert!(
            text.contains("log line 7 \"unknown line\": left out"),
            "{text}"
        );
    }

    #[test]
    fn an_ambiguous_line_lists_every_candidate() {
        let (g, s) = graph();
        let m = LogMatcher::new(&g, &LogConfig::default());
        // "error: Processed 1 items" fits both the fprintf (%s) and the printf
        // (unanchored start).
        let got = m.match_text("error: Processed 1 items\n");
        assert_eq!(got.trace.unwrap().entries[0].nodes(), &[s[0], s[1]]);
    }

    /// A last line with no newline may be a prefix of what its call
    /// printed ("error: disk" of "error: disk full"), which can fit another
    /// format ("error: %s"): it is left out, the lines before it kept.
    #[test]
    fn a_last_line_without_newline_is_left_out() {
        let (g, s) = graph();
        let m = LogMatcher::new(&g, &LogConfig::default());
        let whole = m.match_text("Processed 3 items\nerror: disk\n");
        assert_eq!(whole.trace.as_ref().unwrap().entries.len(), 2);
        let got = m.match_text("Processed 3 items\nerror: disk");
        let t = got.trace.as_ref().unwrap();
        assert_eq!(t.entries.len(), 1);
        assert_eq!(t.entries[0].nodes(), &[s[0]]);
        assert_eq!(got.lines.len(), 2);
        assert_eq!(got.lines[1].outcome, Outcome::CutShort);
        assert_eq!(got.lines[1].text, "error: disk");
        let only = m.match_text("error: disk");
        assert!(only.trace.is_none());
        assert_eq!(only.lines[0].number, 1);
        let mut buf = Vec::new();
        write_explain(&mut buf, &g, &got).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("log line 2 \"error: disk\": left out: the last line"),
            "{text}"
        );
    }

    #[test]
    fn without_logging_calls_one_warning() {
        let mut b = IcfgBuilder::new();
        let f = b.function("main");
        b.add_node(NodeSpec {
            ext_id: "e",
            kind: NodeKind::Entry,
            func: f,
            label: "",
            lines: &[],
        })
        .unwrap();
        let g = b.build().unwrap();
        let got = LogMatcher::new(&g, &LogConfig::default()).match_text("a\nb\n");
        assert_eq!(got.warnings, vec![LogWarning::NoLoggingCalls]);
        assert!(got.trace.is_none());
    }

    #[test]
    fn logger_specs() {
        assert_eq!(
            Logger::parse_spec("log_msg:2").unwrap(),
            Logger::custom("log_msg", 1)
        );
        assert!(Logger::parse_spec("log_msg").is_err());
        assert!(Logger::parse_spec("log_msg:0").is_err());
        assert!(Logger::parse_spec(":1").is_err());
    }
}
