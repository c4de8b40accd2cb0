//! The reader of gdb's `bt` output (all threads: the crashing one is kept).

use super::*;

/// `Thread 2 (Thread 0x7f.. (LWP 12)):` -> 2.
pub(super) fn gdb_thread_header(l: &str) -> Option<u32> {
    let rest = l.strip_prefix("Thread ")?;
    if !l.ends_with(':') {
        return None;
    }
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    digits(&rest[..end])
}

/// `Thread 3 "prog" received signal SIGSEGV` / `[Current thread is 3 (...)]`.
pub(super) fn gdb_crashing_thread(l: &str) -> Option<u32> {
    if let Some(rest) = l.strip_prefix("[Current thread is ") {
        let end = rest.find(|c: char| !c.is_ascii_digit())?;
        return digits(&rest[..end]);
    }
    let rest = l.strip_prefix("Thread ")?;
    if !l.contains(" received signal ") {
        return None;
    }
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    digits(&rest[..end])
}

pub(super) fn parse_gdb(text: &str) -> Result<Backtrace, ParseError> {
    let mut stacks: Vec<Stack> = Vec::new();
    let mut thread: Option<u32> = None;
    let mut crashing: Option<u32> = None;
    let mut pending: Option<(u32, String)> = None;
    let mut notes = Vec::new();
    let flush =
        |pending: &mut Option<(u32, String)>, stacks: &mut Vec<Stack>, thread: Option<u32>| {
            if let Some((n, body)) = pending.take() {
                let frame = parse_gdb_frame(n, &body);
                match stacks.last_mut() {
                    Some(s) if n != 0 && s.thread == thread => s.frames.push(frame),
                    _ => stacks.push(Stack {
                        thread,
                        frames: vec![frame],
                    }),
                }
            }
        };
    for raw in text.lines() {
        let l = raw.trim();
        if let Some((_, body)) = &mut pending {
            if parens_open(body) && !l.is_empty() && frame_number(l).is_none() {
                body.push(' ');
                body.push_str(l);
                continue;
            }
        }
        flush(&mut pending, &mut stacks, thread);
        if let Some(t) = gdb_crashing_thread(l) {
            crashing = Some(t);
        }
        if let Some(t) = gdb_thread_header(l) {
            thread = Some(t);
            continue;
        }
        let l = l.strip_prefix("(gdb) ").unwrap_or(l);
        if let Some((n, rest)) = frame_number(l) {
            pending = Some((n, rest.to_string()));
        }
    }
    flush(&mut pending, &mut stacks, thread);
    drop_stop_locations(&mut stacks);
    if stacks.len() > 1 && stacks.iter().all(|s| s.thread.is_none()) {
        // Several `bt` outputs of one session: the last is the latest.
        let frames = take_last(stacks, &mut notes);
        return Ok(Backtrace {
            format: BacktraceFormat::Gdb,
            frames,
            notes,
        });
    }
    let frames = choose(stacks, crashing, "gdb thread", &mut notes)?;
    Ok(Backtrace {
        format: BacktraceFormat::Gdb,
        frames,
        notes,
    })
}

/// Drops the stop location gdb prints when it loads a core or stops
/// (`#0  0x... in foo (p=0x0) at a.c:12`, then the source line) before
/// the `bt` output: a lone `#0` outside any thread block whose frame is
/// the `#0` of a later stack. `gdb -batch -ex bt ./prog core` prints it,
/// and it is not an earlier backtrace.
pub(super) fn drop_stop_locations(stacks: &mut Vec<Stack>) {
    let same = |a: &RawFrame, b: &RawFrame| {
        a.function == b.function && a.file == b.file && a.line == b.line && a.address == b.address
    };
    let mut i = 0;
    while i < stacks.len() {
        let lone = match stacks[i].frames.as_slice() {
            [f] if stacks[i].thread.is_none() && f.index == Some(0) => Some(f),
            _ => None,
        };
        let repeated = lone.is_some_and(|f| {
            stacks[i + 1..]
                .iter()
                .any(|later| later.frames.first().is_some_and(|g| same(f, g)))
        });
        if repeated {
            stacks.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Several backtraces of one session: keeps the last (the latest) and says
/// how many were left out.
pub(super) fn take_last(mut stacks: Vec<Stack>, notes: &mut Vec<String>) -> Vec<RawFrame> {
    let n = stacks.len();
    notes.push(format!(
        "{} earlier backtrace{} left out: the last one is used",
        n - 1,
        if n == 2 { "" } else { "s" }
    ));
    stacks.pop().map(|s| s.frames).unwrap_or_default()
}

/// The body of a gdb frame line, after `#N`.
pub(super) fn parse_gdb_frame(n: u32, body: &str) -> RawFrame {
    let mut f = RawFrame {
        index: Some(n),
        ..RawFrame::default()
    };
    let mut rest = body.trim();
    if let Some(r) = rest.strip_prefix("0x") {
        let end = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len());
        f.address = hex(&rest[..end + 2]);
        rest = r[end..].trim_start();
        rest = rest.strip_prefix("in ").unwrap_or(rest);
    }
    if rest.starts_with("<signal handler called>") {
        f.function = Some("<signal handler called>".into());
        f.runtime = true;
        return f;
    }
    if let Some(i) = rest.rfind(" at ") {
        if let Some((file, line, col)) = parse_location(&rest[i + 4..]) {
            f.file = Some(file);
            f.line = Some(line);
            f.column = col;
            rest = &rest[..i];
        }
    }
    if f.file.is_none() {
        if let Some(i) = rest.rfind(" from ") {
            let module = rest[i + 6..].trim();
            if !module.is_empty() && !module.contains(['(', ')']) {
                f.module = Some(module.to_string());
                rest = &rest[..i];
            }
        }
    }
    let (name, _args) = split_trailing_group(rest);
    f.function = clean_name(name);
    f
}
