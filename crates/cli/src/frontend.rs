//! LLVM IR input through the front-end executable `postmortem-llvm`.
//!
//! The front-end links LLVM 14's shared library; mapping it costs every
//! start of a process ~15 ms and ~35 MB, so `postmortem` does not link it:
//! it runs `postmortem-llvm FILE` only when an IR file is read, and reads
//! the graph, the front-end report and the SanitizerCoverage map from its
//! standard output (`postmortem_formats::frontend::decode_loaded`).
//!
//! The executable is `$POSTMORTEM_LLVM` when set, else `postmortem-llvm`
//! next to this executable (for `cargo test` also one directory up, from
//! `target/*/deps`), else `postmortem-llvm` on the `PATH`. A missing or
//! failing front-end is one error line, exit code 2.

use crate::exit::Failure;
use postmortem_formats::frontend::{decode_loaded, Loaded};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The environment variable naming the front-end executable.
pub const ENV: &str = "POSTMORTEM_LLVM";
/// The front-end executable's file name.
pub const EXE: &str = "postmortem-llvm";

/// Where the front-end executable is.
fn locate() -> PathBuf {
    if let Some(p) = std::env::var_os(ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let exe = format!("{EXE}{}", std::env::consts::EXE_SUFFIX);
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let here = dir.join(&exe);
        if here.is_file() {
            return here;
        }
        if dir.file_name().is_some_and(|n| n == "deps") {
            if let Some(up) = dir.parent().map(|d| d.join(&exe)).filter(|p| p.is_file()) {
                return up;
            }
        }
    }
    PathBuf::from(exe)
}

/// The exact command that puts the front-end where [`locate`] looks,
/// for the way this `postmortem` was built: `cargo run` builds only the
/// binary it runs, so a `postmortem` in a cargo target directory
/// (`target/release`, `target/debug`) is missing its sibling until
/// `cargo build` builds every binary of the package.
fn fix_hint() -> String {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    // `target/release`, `target/debug` (or their `deps`, under `cargo test`).
    let profile = dir.as_deref().and_then(|d| {
        let d = if d.file_name()? == "deps" {
            d.parent()?
        } else {
            d
        };
        let name = d.file_name()?.to_str()?;
        matches!(name, "release" | "debug").then_some(name == "release")
    });
    let build = match profile {
        Some(true) => "run `cargo build --release -p postmortem` in postmortem's source tree (it builds postmortem-llvm next to postmortem; `cargo run` builds only postmortem)",
        Some(false) => "run `cargo build -p postmortem` in postmortem's source tree (it builds postmortem-llvm next to postmortem; `cargo run` builds only postmortem)",
        None => "run `cargo install --path crates/cli` in postmortem's source tree (it installs postmortem and postmortem-llvm)",
    };
    format!("{build}, or set {ENV} to the path of {EXE}")
}

/// Reads a `.ll`/`.bc` file of at most `limit` bytes through the
/// front-end process.
pub fn load_ir(path: &Path, limit: u64) -> Result<Loaded, Failure> {
    let exe = locate();
    let shown = path.display();
    let out = Command::new(&exe)
        .arg("--max-input-size")
        .arg(limit.to_string())
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Failure::input(format!(
                "{shown}: cannot run the LLVM front-end {}: {e} ({})",
                exe.display(),
                fix_hint()
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The front-end's own error: one line, `postmortem-llvm: MESSAGE`.
        let own = stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(&format!("{EXE}: ")));
        return Err(Failure::input(match own {
            Some(message) => message.to_string(),
            None => {
                let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                format!(
                    "{shown}: the LLVM front-end {} failed ({}){}{}",
                    exe.display(),
                    out.status,
                    if first.is_empty() { "" } else { ": " },
                    first.trim()
                )
            }
        }));
    }
    decode_loaded(&out.stdout)
        .map_err(|e| Failure::input(format!("{shown}: {} ({}): {e}", EXE, exe.display())))
}
