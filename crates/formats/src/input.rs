//! Reading input files with a bound.
//!
//! Every input file goes through here: a device (`/dev/zero`,
//! `/dev/urandom`) or a pipe that never ends, passed by mistake, must be one
//! error line, not a process that grows until the machine runs out of
//! memory. So:
//!
//! * an input that is mapped or whose size matters (ELF binaries and cores,
//!   graphs) must be a regular file ([`require_regular`]);
//! * an input read as a stream (reports, backtraces, logs, flag dumps) may
//!   be a regular file or a pipe (`<(zcat bt.gz)`), never a device, and is
//!   read up to a [`Limit`] ([`read_bounded`], [`open_bounded`]). A regular
//!   file over the limit is refused before anything is read; a pipe as soon
//!   as it has given more. Decompressed data is bounded by wrapping the
//!   decompressor in a [`Bounded`] reader.
//!
//! A FIFO is opened without waiting for a writer: one that has none reads as
//! empty.

use crate::error::FormatError;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The default ceiling of a report, a backtrace or a log: 64 MiB (a
/// 100,000-frame backtrace is about 20 MB).
pub const DEFAULT_TEXT_LIMIT: u64 = 64 << 20;

/// How much of an input may be read, and how to say so when it is more.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// At most this many bytes.
    pub bytes: u64,
    /// What the input is, for messages ("backtrace", "log").
    pub what: &'static str,
    /// How to raise the limit ("--max-input-size"), if it can be.
    pub raise: Option<&'static str>,
}

impl Limit {
    /// A limit of `bytes` for a `what`, raised by the option `raise`.
    pub fn new(bytes: u64, what: &'static str, raise: &'static str) -> Limit {
        Limit {
            bytes,
            what,
            raise: Some(raise),
        }
    }

    /// The error for an input `file` of `size` bytes (None: a stream that
    /// gave more than the limit).
    pub fn exceeded(&self, file: &str, size: Option<u64>) -> FormatError {
        FormatError::text(file, &self.message(size))
    }

    /// [`Limit::exceeded`]'s message, without the file's name.
    pub fn message(&self, size: Option<u64>) -> String {
        let fix = match self.raise {
            Some(opt) => format!(
                " (if it really is one, raise the limit with {opt}, e.g. {opt} {})",
                suggest(size.unwrap_or(self.bytes))
            ),
            None => String::new(),
        };
        match size {
            Some(s) => format!(
                "{} ({s} bytes), more than the {} a {} may have{fix}",
                human(s),
                human(self.bytes),
                self.what
            ),
            None => format!(
                "gave more than {}, the most a {} may have: is it a device or a pipe that does not end?{fix}",
                human(self.bytes),
                self.what
            ),
        }
    }
}

/// `12 MiB`, `300 KiB`, `17 bytes`.
pub fn human(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 {
        format!("{} MiB", n.div_ceil(1 << 20))
    } else if n >= 1 << 10 {
        format!("{} KiB", n.div_ceil(1 << 10))
    } else {
        format!("{n} bytes")
    }
}

/// A value for a limit option that admits `n` bytes: `n` rounded up to
/// MiB, doubled.
fn suggest(n: u64) -> String {
    format!("{}M", n.div_ceil(1 << 20).max(1).saturating_mul(2))
}

/// What a file that is not regular is, for messages.
fn kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a pipe (FIFO)"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn metadata(path: &Path) -> Result<std::fs::Metadata, FormatError> {
    std::fs::metadata(path).map_err(|e| cannot_read(path, e))
}

/// `FILE: cannot read: ERROR`.
fn cannot_read(path: &Path, e: io::Error) -> FormatError {
    let msg = format!("cannot read: {e}");
    FormatError::io(&path.display().to_string(), io::Error::new(e.kind(), msg))
}

/// Checks that `path` is a regular file (following symbolic links) and
/// returns its size. `what` says what it must be and why ("the core (it
/// is mapped)").
pub fn require_regular(path: &Path, what: &str) -> Result<u64, FormatError> {
    let m = metadata(path)?;
    if m.file_type().is_file() {
        return Ok(m.len());
    }
    Err(FormatError::text(
        &path.display().to_string(),
        &format!(
            "is {}, but {what} must be a regular file: pass the file itself (copy a pipe's data to a file first)",
            kind(&m.file_type())
        ),
    ))
}

/// Opens `path` to be read up to `limit`: a regular file no larger than
/// the limit, or a pipe (read until it ends or gives more than the
/// limit). Devices, directories and sockets are refused.
pub fn open_bounded(path: &Path, limit: &Limit) -> Result<Bounded<File>, FormatError> {
    let name = path.display().to_string();
    let m = metadata(path)?;
    let ft = m.file_type();
    let file = if ft.is_file() {
        if m.len() > limit.bytes {
            return Err(limit.exceeded(&name, Some(m.len())));
        }
        File::open(path).map_err(|e| cannot_read(path, e))?
    } else if ft.is_fifo() {
        open_fifo(path).map_err(|e| cannot_read(path, e))?
    } else {
        return Err(FormatError::text(
            &name,
            &format!(
                "is {}, not a file: the {} must be a regular file or a pipe",
                kind(&ft),
                limit.what
            ),
        ));
    };
    Ok(Bounded::new(file, *limit, &name))
}

/// A FIFO opened without blocking until a writer comes (a FIFO nobody
/// writes to reads as empty), then read with blocking reads.
fn open_fifo(path: &Path) -> io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a file descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(f)
}

/// Reads all of `path` (see [`open_bounded`]) into memory.
pub fn read_bounded(path: &Path, limit: &Limit) -> Result<Vec<u8>, FormatError> {
    let mut r = open_bounded(path, limit)?;
    // A regular file's size is known: one allocation instead of doubling
    // from 8 KiB (a 4 MiB graph cache took 10 ms of copies and page
    // faults that way).
    let size = metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len().min(limit.bytes));
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    match r.read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(e) => Err(r.error(e)),
    }
}

/// A reader that fails once more than its limit has been read from it.
pub struct Bounded<R> {
    inner: R,
    left: u64,
    limit: Limit,
    name: String,
    over: bool,
}

impl<R: Read> Bounded<R> {
    /// `inner`, read up to `limit`; `name` names it in the error.
    pub fn new(inner: R, limit: Limit, name: &str) -> Bounded<R> {
        Bounded {
            inner,
            left: limit.bytes,
            limit,
            name: name.to_string(),
            over: false,
        }
    }

    /// Whether the limit was exceeded.
    pub fn exceeded(&self) -> bool {
        self.over
    }

    /// The error for `e`, an error of a read from this reader: the limit's
    /// when it was exceeded, else the I/O error.
    pub fn error(&self, e: io::Error) -> FormatError {
        if self.over {
            self.limit.exceeded(&self.name, None)
        } else {
            FormatError::io(&self.name, e)
        }
    }

    /// The limit's error.
    pub fn limit_error(&self) -> FormatError {
        self.limit.exceeded(&self.name, None)
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // One byte more tells a stream of exactly the limit from a
            // longer one.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.over = true;
                    Err(io::Error::other(self.limit.message(None)))
                }
            };
        }
        let n = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let k = self.inner.read(&mut buf[..n])?;
        self.left -= k as u64;
        Ok(k)
    }
}

/// What a file given in the wrong slot looks like, by its first bytes,
/// and the option it belongs to: a hint for the error (or warning) of the
/// reader that could not use it. `None` when it looks like nothing known.
pub fn kind_hint(head: &[u8]) -> Option<&'static str> {
    kind_of(head).map(|k| k.0)
}

/// Whether `head` starts like a binary file of another slot (a core, a
/// binary, a minidump, bitcode, a graph cache): never a log.
pub fn is_binary_kind(head: &[u8]) -> bool {
    kind_of(head).is_some_and(|k| k.1)
}

/// [`kind_hint`], and whether the kind is binary data.
fn kind_of(head: &[u8]) -> Option<(&'static str, bool)> {
    binary_kind(head)
        .map(|h| (h, true))
        .or_else(|| text_kind(head).map(|h| (h, false)))
}

fn binary_kind(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x7fELF") {
        // e_type at offset 16 (little-endian): 4 is a core.
        return Some(if head.get(16) == Some(&4) {
            "an ELF core dump: pass it with --core (and the program with --binary)"
        } else {
            "an ELF binary: pass it with --binary (the graph comes from its LLVM IR: clang-14 -g -O0 -emit-llvm -c prog.c -o prog.bc, then --cfg prog.bc)"
        });
    }
    if head.starts_with(b"MDMP") {
        return Some("a minidump: pass it with --minidump (and the program with --binary)");
    }
    if head.starts_with(b"BC\xc0\xde") || head.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        return Some("LLVM bitcode: pass it with --cfg");
    }
    if head.starts_with(b"PMCFG") {
        return Some("a graph cache: pass it with --cfg");
    }
    None
}

fn text_kind(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let t = text.trim_start();
    if t.starts_with("; ModuleID") {
        return Some("LLVM IR: pass it with --cfg");
    }
    let lines: Vec<&str> = t.lines().take(40).collect();
    let frames = lines
        .iter()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with('#') && l[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .count();
    if frames >= 1
        && lines.iter().any(|l| {
            let l = l.trim_start();
            l.starts_with("#0 ") || l.starts_with("#0\t")
        })
    {
        return Some("a backtrace: pass it with --backtrace");
    }
    let c_like = lines.iter().any(|l| {
        let l = l.trim_start();
        l.starts_with("#include") || l.starts_with("#define")
    }) || t.contains("int main(");
    if c_like {
        return Some("C source: compile it to LLVM IR (clang-14 -g -O0 -emit-llvm -c prog.c -o prog.bc) and pass that with --cfg");
    }
    None
}

/// The first `n` bytes of the file at `path` (fewer if it is shorter;
/// none if it cannot be read).
pub fn head(path: &Path, n: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    if !path.metadata().is_ok_and(|m| m.is_file()) {
        return buf;
    }
    if let Ok(f) = File::open(path) {
        let _ = f.take(n as u64).read_to_end(&mut buf);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_stops_one_byte_past_the_limit() {
        let limit = Limit::new(4, "test", "--max");
        let mut out = Vec::new();
        let mut r = Bounded::new(&b"abcd"[..], limit, "x");
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abcd");
        let mut r = Bounded::new(&b"abcde"[..], limit, "x");
        let e = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(r.exceeded());
        let msg = r.error(e).to_string();
        assert!(msg.starts_with("x: gave more than 4 bytes"), "{msg}");
        assert!(msg.contains("--max"), "{msg}");
    }

    #[test]
    fn devices_are_refused_and_regular_files_checked() {
        let limit = Limit::new(1 << 20, "backtrace", "--max-input-size");
        let e = read_bounded(Path::new("/dev/zero"), &limit).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/dev/zero: is a character device"),
            "{e}"
        );
        let e = require_regular(Path::new("/dev/zero"), "the core").unwrap_err();
        assert!(e.to_string().contains("must be a regular file"), "{e}");
        let dir = std::env::temp_dir().join(format!("pm-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big");
        std::fs::write(&f, vec![b'x'; 100]).unwrap();
        let e = read_bounded(&f, &Limit::new(10, "log", "--max-input-size")).unwrap_err();
        assert!(
            e.to_string()
                .contains("(100 bytes), more than the 10 bytes a log"),
            "{e}"
        );
        assert_eq!(read_bounded(&f, &limit).unwrap().len(), 100);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
