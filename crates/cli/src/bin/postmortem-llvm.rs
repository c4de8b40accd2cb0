//! `postmortem-llvm FILE`: the LLVM IR front-end as its own executable.
//! Reads a clang-14 `.ll`/`.bc` file (`postmortem_llvm::load_path`) and
//! writes the graph, the front-end report and the SanitizerCoverage map to
//! standard output in the format of
//! `postmortem_formats::frontend::encode_loaded`, for `postmortem`, which
//! runs it for IR input so that it does not itself link LLVM.
//!
//! Exit codes: 0 success; 2 bad usage or unreadable input (one line on
//! stderr, `postmortem-llvm: MESSAGE`).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let usage = || {
        eprintln!(
            "postmortem-llvm: usage: postmortem-llvm [--max-input-size BYTES] FILE.ll|FILE.bc > OUT (run by postmortem for LLVM IR input)"
        );
        ExitCode::from(2)
    };
    let (limit, path) = match args.as_slice() {
        [path] => (u64::MAX, path),
        [opt, n, path] if opt == "--max-input-size" => {
            match n.to_str().and_then(|n| n.parse::<u64>().ok()) {
                Some(n) => (n, path),
                None => return usage(),
            }
        }
        _ => return usage(),
    };
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        eprintln!("postmortem-llvm: the output is binary: redirect it to a file");
        return ExitCode::from(2);
    }
    let loaded = match postmortem_llvm::load_path_limited(std::path::Path::new(path), limit) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("postmortem-llvm: {e}");
            return ExitCode::from(2);
        }
    };
    let bytes = postmortem_formats::frontend::encode_loaded(&loaded);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(&bytes).and_then(|()| out.flush()) {
        eprintln!("postmortem-llvm: cannot write the output: {e}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
