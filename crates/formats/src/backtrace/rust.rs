//! The reader of Rust panic messages and `RUST_BACKTRACE` backtraces.

use super::*;

/// `   6: myapp::compute` or `   6:     0x55d6c2d8a0a1 - myapp::compute::h0123...`.
pub(super) fn rust_frame_start(l: &str) -> Option<(u32, &str)> {
    let end = l.find(|c: char| !c.is_ascii_digit())?;
    let n = digits(&l[..end])?;
    let rest = l[end..].strip_prefix(':')?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut rest = rest.trim();
    if let Some((addr, name)) = rest.split_once(" - ") {
        if hex(addr.trim()).is_some() {
            rest = name.trim();
        }
    } else if hex(rest).is_some() {
        rest = "";
    }
    Some((n, rest))
}

/// The text after `panicked at ` of `thread 'main' panicked at ...` or
/// `thread 'main' (12345) panicked at ...`.
pub(super) fn rust_panic_line(l: &str) -> Option<&str> {
    let rest = l.strip_prefix("thread '")?;
    let (_, after_name) = rest.split_once('\'')?;
    let after_name = after_name.trim_start();
    let after_id = match after_name.strip_prefix('(') {
        Some(r) => r.split_once(')')?.1.trim_start(),
        None => after_name,
    };
    after_id.strip_prefix("panicked at ")
}

/// `thread 'main' panicked at src/main.rs:10:5:` (Rust >= 1.73) or
/// `thread 'main' panicked at 'msg', src/main.rs:10:5`.
pub(super) fn rust_panic_location(l: &str) -> Option<RawFrame> {
    let rest = rust_panic_line(l)?.trim_end().trim_end_matches(':');
    let loc = if rest.starts_with(['\'', '"']) {
        rest.rsplit(", ").next()?
    } else {
        rest
    };
    let (file, line, col) = parse_location(loc)?;
    Some(RawFrame {
        file: Some(file),
        line: Some(line),
        column: col,
        ..RawFrame::default()
    })
}

pub(super) fn parse_rust(text: &str) -> Backtrace {
    let mut notes = Vec::new();
    let mut frames: Vec<RawFrame> = Vec::new();
    let mut panic_at: Option<RawFrame> = None;
    let mut in_bt = false;
    let mut panics = 0usize;
    for raw in text.lines() {
        let l = raw.trim();
        if rust_panic_line(l).is_some() {
            panics += 1;
            if panics > 1 {
                // A second panic (e.g. in a destructor while unwinding): the
                // first backtrace is the failure.
                notes.push("a later panic and its backtrace left out".into());
                break;
            }
            panic_at = rust_panic_location(l);
            continue;
        }
        if l == "stack backtrace:" {
            in_bt = true;
            continue;
        }
        if !in_bt {
            continue;
        }
        if let Some(loc) = l.strip_prefix("at ") {
            if let (Some(last), Some((file, line, col))) = (frames.last_mut(), parse_location(loc))
            {
                if last.file.is_none() {
                    last.file = Some(file);
                    last.line = Some(line);
                    last.column = col;
                }
            }
            continue;
        }
        if let Some((n, name)) = rust_frame_start(l) {
            frames.push(RawFrame {
                index: Some(n),
                function: clean_name(name),
                ..RawFrame::default()
            });
            continue;
        }
        if l.starts_with("note:") {
            in_bt = false;
            continue;
        }
        // An inlined frame (`full` mode): a name line without a number,
        // sharing the previous frame's number.
        if !l.is_empty() && raw.starts_with([' ', '\t']) {
            if let Some(prev) = frames.last() {
                let index = prev.index;
                frames.push(RawFrame {
                    index,
                    function: clean_name(l),
                    ..RawFrame::default()
                });
            }
        }
    }
    // Frames inner of the panic entry (`rust_begin_unwind`, and in `full`
    // mode the backtrace printing under `__rust_end_short_backtrace`) are
    // the panic machinery.
    if let Some(i) = frames.iter().rposition(|f| {
        f.function.as_deref().is_some_and(|n| {
            n.ends_with("rust_begin_unwind") || n.contains("__rust_end_short_backtrace")
        })
    }) {
        for f in &mut frames[..=i] {
            f.runtime = true;
        }
    }
    // Frames outer of the start-up code are runtime; so is the C `main`
    // that calls `std::rt::lang_start`.
    if let Some(i) = frames.iter().position(|f| {
        f.function.as_deref().is_some_and(|n| {
            n.starts_with("std::rt::lang_start") || n.contains("__rust_begin_short_backtrace")
        })
    }) {
        for f in &mut frames[i..] {
            f.runtime = true;
        }
    }
    if frames.is_empty() {
        if let Some(f) = panic_at {
            notes.push(
                "no stack backtrace (RUST_BACKTRACE=1 adds one): only the panic location is known"
                    .into(),
            );
            frames.push(f);
        }
    }
    Backtrace {
        format: BacktraceFormat::RustPanic,
        frames,
        notes,
    }
}
