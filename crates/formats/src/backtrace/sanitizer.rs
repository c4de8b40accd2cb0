//! The reader of AddressSanitizer / UBSan / other sanitizer reports.

use super::*;

pub(super) fn parse_sanitizer(text: &str) -> Result<Backtrace, ParseError> {
    let mut notes = Vec::new();
    let mut stacks: Vec<Vec<RawFrame>> = Vec::new();
    let mut runtime_error: Option<RawFrame> = None;
    let mut in_stack = false;
    for raw in text.lines() {
        let l = raw.trim();
        if l.contains("ERROR: LeakSanitizer") {
            return Err(ParseError::Leak);
        }
        if runtime_error.is_none() {
            if let Some(i) = l.find(": runtime error: ") {
                if let Some((file, line, col)) = parse_location(&l[..i]) {
                    runtime_error = Some(RawFrame {
                        file: Some(file),
                        line: Some(line),
                        column: col,
                        ..RawFrame::default()
                    });
                }
            }
        }
        match frame_number(l) {
            Some((n, rest)) => {
                let frame = parse_sanitizer_frame(n, rest);
                if n == 0 || !in_stack {
                    stacks.push(Vec::new());
                }
                stacks.last_mut().expect("pushed").push(frame);
                in_stack = true;
            }
            None => in_stack = false,
        }
    }
    let frames = match stacks.len() {
        0 => match runtime_error {
            Some(f) => {
                notes.push("no stack trace in the report (UBSAN_OPTIONS=print_stacktrace=1 adds one): only the error location is known".into());
                vec![f]
            }
            None => Vec::new(),
        },
        n => {
            if n > 1 {
                notes.push(format!(
                    "{} later stack{} (allocation, deallocation, other threads) left out: the first stack is the failure",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ));
            }
            stacks.swap_remove(0)
        }
    };
    Ok(Backtrace {
        format: BacktraceFormat::Sanitizer,
        frames,
        notes,
    })
}

/// `0x4f2b3c in foo /path/a.c:12:5`, `0x7f.. in f (/lib/libc.so.6+0x21b96)`,
/// `0x41b2e9 (/path/bin+0x41b2e9)`, with an optional `(BuildId: ...)`.
pub(super) fn parse_sanitizer_frame(n: u32, body: &str) -> RawFrame {
    let mut f = RawFrame {
        index: Some(n),
        ..RawFrame::default()
    };
    let (address, mut rest) = leading_address(body.trim());
    f.address = address;
    if let Some(i) = rest.rfind(" (BuildId: ") {
        if rest.ends_with(')') {
            rest = rest[..i].trim_end();
        }
    } else if rest.starts_with("(BuildId: ") {
        rest = "";
    }
    // `(module+0xoffset)` at the end.
    if rest.ends_with(')') {
        if let Some(i) = rest.rfind('(') {
            let inner = &rest[i + 1..rest.len() - 1];
            if let Some((module, off)) = inner.rsplit_once('+') {
                if hex(off).is_some() {
                    f.module = Some(module.to_string());
                    rest = rest[..i].trim_end();
                }
            }
        }
    }
    let rest = rest.strip_prefix("in ").unwrap_or(rest);
    if f.module.is_none() {
        let tok = last_token(rest);
        if tok.len() < rest.len() || rest.starts_with('/') {
            if let Some((file, line, col)) = sanitizer_location(tok) {
                f.file = Some(file);
                f.line = line;
                f.column = col;
                f.function = clean_name(&rest[..rest.len() - tok.len()]);
                return f;
            }
        }
    }
    f.function = clean_name(rest);
    f
}
