//! Helpers shared by the integration tests.

use std::path::PathBuf;
use std::process::Command;

/// An LLVM 14 tool (`clang-14`, `llvm-as-14`, `llvm-link-14`), failing the
/// test with a clear message when it is missing: these tests never skip
/// silently. CI installs the tools (see .ci/run).
pub fn tool(name: &str) -> Command {
    let found = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{name}` is not installed, and this test needs LLVM 14's tools: run `apt-get install -y clang-14 llvm-14-dev` (as .ci/run does)"
    );
    Command::new(name)
}

/// A fresh scratch directory for one test, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("postmortem-llvm-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
