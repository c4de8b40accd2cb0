//! Soundness on real programs (issue 8, item 2): real C programs, from
//! sources that crates.io crates bundle, crashed at many points, every
//! Yes and No line checked against llvm-cov's truth for the same run.
//!
//! **The programs** ([`PROGRAMS`]): Lua (an interpreter; errors are
//! `longjmp`s to a `setjmp`), bzip2 (a compressor, its own CLI), PCRE2 (a
//! regex engine), SQLite (a database), the lz4 CLI, and nlohmann/json
//! (C++ with exceptions: header-only, from Debian's `nlohmann-json3-dev`,
//! built with clang++-14; its crash points chosen automatically are
//! linkage names, checked against gdb's `linkage_name` of the frame).
//! Their sources are
//! fetched by `cargo metadata --manifest-path realprogs/Cargo.toml` (a
//! throwaway manifest, not part of the workspace; its Cargo.lock pins the
//! versions) and compiled with clang-14 at `-O0 -g` twice from the same
//! paths: the linked IR for the graph (`prog.bc`, cached as
//! `prog.pmcfg`) and a binary with source coverage. Where a crate ships
//! no `main`, a small driver of `realprogs/drivers/` is one; the workloads'
//! inputs are in `realprogs/inputs/`. Builds are cached in
//! `target/realprogs/NAME/` (rebuilt when their recipe changes).
//!
//! **The crash points.** A gdb breakpoint at the N-th call of a function:
//! `break F`, `ignore 1 N-1`, `run ARGS > out.log`, `bt`, then the
//! process flushes its stdio and writes its coverage profile (`call
//! __llvm_profile_write_file()`) and is killed: no program code runs after
//! the backtrace. The points are pinned by hand ([`Program::pinned`]) and
//! chosen automatically ([`auto_points`]): from a full run of the
//! workload, the functions that ran (unique names, not `main`: stopping
//! at its entry tells nothing), sorted by call count
//! then name, taken evenly from the rarest to the hottest, each stopped at
//! its middle call (at most [`MAX_HIT`]). Deterministic, and spread from
//! shallow start-up functions to deep hot ones.
//!
//! **The check.** For each crash point, `postmortem analyze --format json`
//! with `--solver utl` and `--solver fsa`, on the gdb backtrace, on the
//! same stack written as an AddressSanitizer report, and (where the
//! program prints something meaningful) on the gdb backtrace plus the log.
//! Every Yes line must have run and every No line must not have, per
//! `common::Truth::ran` (frames still on the stack make some counts
//! unknown; those lines are not checked). Lines whose source starts with
//! `}` are left out of the comparison: llvm-cov gives them the count of
//! the region around them (or 0 right after a `return`), not of the
//! instructions on them. Likewise a line where a macro is expanded takes
//! the count of the region around it: when the expansion's own count is
//! not above the line's active frames, a No on it is not checked (the
//! macro's code may not have run; `if (!p) FAIL("...");` is counted as
//! its condition). And a line's count may be that of a region that only
//! continues onto it (`if (a && f() &&` / `b == 0)`: the second line has
//! the condition's count, but `b == 0` has its own region, which did not
//! run; `return x; };` after a block that did not run has the count of
//! the empty statement `;`): when the count in effect at the line's first
//! token is not above its active frames, a No on it is not checked. Cores
//! of `bb` builds decide such lines, which llvm-cov's line counts cannot
//! confirm. A test fails with the list of unsound lines
//! (file:line, label, llvm-cov count, solver, report, crash point).
//!
//! **From cores** (issue 12; programs with [`Program::sancov`]): each
//! crash point is also analysed from a core alone (`--core` + `--binary`)
//! of a `-fsanitize-coverage=func,inline-bool-flag,pc-table` build and of
//! a `bb,...` build ([`sancov_build`]: the graph is the instrumented IR
//! linked by llvm-link-14, the binary is built from it with the callback
//! stub), run with the same inputs to the same breakpoint hit
//! ([`crash_core`], which checks the stack is the same and steps past the
//! entry flag's store), and checked against the coverage build's truth
//! like the backtrace analyses. Where llvm-cov contradicts a core
//! analysis's label, gdb referees ([`referee`]). The precision table
//! gives the share of lines decided with the backtrace alone and from each
//! core, per solver.
//!
//! **From `-O2 -g` cores** (programs with [`Program::o2`]): the same,
//! from a core of an optimised build ([`O2`] says how it is built and
//! what its truth is), with and without values.
//!
//! **Threads** (programs with [`Program::threads`]: zstd with
//! `ZSTD_MULTITHREAD`). A label means "ran in some thread of the
//! process", and llvm-cov's counts are process-wide, so the truth is the
//! same; what changes is the run. gdb stops every thread at the
//! breakpoint (all-stop), the crash point may be in a worker (its stack
//! starts at the thread routine), and the other threads are anywhere:
//! their functions are *active* too (`thread apply all bt`, written to
//! `threads.txt`; a line of a function active k times in all threads with
//! a count up to k is unknown), and the profile is written with
//! `scheduler-locking on` (otherwise gdb lets every thread run during the
//! call). The backtrace analyses are checked against that very run. The
//! core analyses are not: their cores come from other runs (other
//! builds), whose schedule differs, and with it what ran by the crash
//! point (how far a busy worker got, whether a wait loop's body ran). So
//! a point is analysed from cores only where every other thread waits
//! (a condition variable, a join, a lock: [`others_wait`]) in the
//! coverage run, in a second run to the same point ([`again`]) and in the
//! core's own run (a core whose run had a busy thread is left out); the
//! others are counted as busy points. (The driver gives zstd's workers
//! 100 ms after each compression to go back to waiting for a job.) The core analyses are checked
//! against the second run's truth, on the lines whose verdict the two
//! runs agree on (the rest are counted as `scheduling`); disputes go to
//! gdb as for any core (the referee is a run of its own too). This is a
//! sampling argument, not a proof: a line the two runs agree on could
//! still differ in the core's run; the referee's run is a third sample.
//!
//! The figures (runs, lines checked, unsound lines, share of lines
//! decided, time) are printed per program. `scripts/real-programs.sh` runs
//! the whole (`#[ignore]`d here); the CI part is two programs at a few
//! points each (bzip2's also from cores), and nlohmann/json at two.
//!
//! Needs clang-14, llvm-link-14, llvm-profdata-14, llvm-cov-14, gdb and
//! cargo: without them the tests fail, they do not skip.

mod common;
#[path = "real_programs/suggestions.rs"]
mod suggestions;

use common::{active_frames, line_counts, require, sh, show, source_frames, Frame, Ran, Truth};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// A real program: where its sources are and how to build and run it.
struct Program {
    name: &'static str,
    /// The crate of `realprogs/Cargo.toml` that ships the sources; empty
    /// for a header-only library of a Debian package (`dir` is then its
    /// absolute include folder).
    krate: &'static str,
    /// The sources' folder in the crate.
    dir: &'static str,
    /// The C files, relative to `dir`; `F/*.c` is every C file of F.
    /// C++ files (the driver's `.cpp`) are compiled and linked with
    /// clang++-14 and `-fexceptions` (libstdc++).
    sources: &'static [&'static str],
    /// Files of `sources` left out (included by others, or not for us).
    exclude: &'static [&'static str],
    /// Our `main`, in `realprogs/drivers/`, when the crate ships none.
    driver: Option<&'static str>,
    /// Include folders, relative to `dir`.
    includes: &'static [&'static str],
    defines: &'static [&'static str],
    libs: &'static [&'static str],
    workloads: &'static [Workload],
    /// Crash points chosen by hand: workload, function, hit.
    pinned: &'static [(usize, &'static str, u64)],
    /// Crash points chosen automatically, per workload.
    auto: usize,
    /// Also analysed from cores of SanitizerCoverage builds (full run).
    sancov: bool,
    /// Also analysed from cores of an optimised `-O2 -g` build.
    o2: bool,
    /// Multi-threaded: the truth takes every thread's stack into account,
    /// and core analyses (of another run) are checked only on the lines
    /// two coverage runs agree on (see the module doc).
    threads: bool,
    /// With `best`, a plain core's variables' values decide more lines
    /// than the core without them (checked). Not for zstd: its state is
    /// in heap structs, and the one global its driver stores constants
    /// in (`step`) tells what the crash stack already shows.
    values_decide: bool,
}

/// One run of a program. In `args`, `@IN/` is `realprogs/inputs/` and
/// `@SRC/` the sources' folder.
struct Workload {
    args: &'static [&'static str],
    /// Its standard output is a meaningful log (printf-like calls).
    log: bool,
}

const LUA: Program = Program {
    name: "lua",
    krate: "lua-src",
    dir: "lua-5.4.9",
    sources: &["*.c"],
    exclude: &[],
    driver: Some("lua_main.c"),
    includes: &["."],
    // luai_makeseed: Lua seeds its string hashes from the time and from
    // addresses, which differ between builds and runs; a fixed seed makes
    // the coverage and the sancov builds take the same path.
    defines: &["LUA_USE_POSIX", "luai_makeseed(L)=0u"],
    libs: &["-lm"],
    workloads: &[Workload {
        args: &["@IN/workload.lua"],
        log: true,
    }],
    // After caught errors: Lua's errors are longjmps to the setjmp of
    // luaD_rawrunprotected, and what runs after one is only on a path
    // through the second return of setjmp.
    // `subexpr` at its 61st call: the innermost of the 60 nested
    // parentheses the workload starts with, a deep recursion of the
    // parser (`-O2` inlines parts of it into each other).
    pinned: &[
        (0, "luaD_throw", 3),
        (0, "luaB_print", 10),
        (0, "luaG_typeerror", 1),
        (0, "subexpr", 61),
        (0, "str_rep", 1),
        (0, "lua_close", 1),
    ],
    auto: 8,
    sancov: true,
    o2: true,
    threads: false,
    values_decide: true,
};

const BZIP2: Program = Program {
    name: "bzip2",
    krate: "bzip2-sys",
    dir: "bzip2-1.0.8",
    sources: &[
        "blocksort.c",
        "huffman.c",
        "crctable.c",
        "randtable.c",
        "compress.c",
        "decompress.c",
        "bzlib.c",
        "bzip2.c",
    ],
    exclude: &[],
    driver: None,
    includes: &["."],
    defines: &[],
    libs: &[],
    workloads: &[
        Workload {
            args: &["-z", "-c", "-v", "@SRC/bzip2.c"],
            log: false,
        },
        Workload {
            args: &["-d", "-c", "@SRC/sample1.bz2"],
            log: false,
        },
        Workload {
            args: &["-t", "-v", "@SRC/sample3.bz2"],
            log: false,
        },
    ],
    pinned: &[(0, "BZ2_compressBlock", 1), (1, "BZ2_decompress", 3)],
    auto: 4,
    sancov: true,
    o2: true,
    threads: false,
    values_decide: true,
};

const PCRE2: Program = Program {
    name: "pcre2",
    krate: "pcre2-sys",
    dir: "upstream",
    sources: &["src/*.c"],
    // Included by other files.
    exclude: &[
        "src/pcre2_jit_match.c",
        "src/pcre2_jit_misc.c",
        "src/pcre2_ucptables.c",
    ],
    driver: Some("pcre2_main.c"),
    includes: &["src", "include"],
    defines: &[
        "HAVE_CONFIG_H",
        "PCRE2_CODE_UNIT_WIDTH=8",
        "PCRE2_STATIC",
        "SUPPORT_UNICODE",
        "SUPPORT_PCRE2_8",
        "HAVE_STDLIB_H",
        "HAVE_MEMMOVE",
    ],
    libs: &[],
    workloads: &[Workload {
        args: &["@IN/patterns.txt", "@IN/subjects.txt"],
        log: true,
    }],
    // The API's names are macros for these (8-bit code units).
    pinned: &[
        (0, "pcre2_get_error_message_8", 2),
        (0, "pcre2_substitute_8", 20),
    ],
    auto: 10,
    sancov: false,
    o2: false,
    threads: false,
    values_decide: true,
};

const SQLITE: Program = Program {
    name: "sqlite",
    krate: "libsqlite3-sys",
    dir: "sqlite3",
    sources: &["sqlite3.c"],
    exclude: &[],
    driver: Some("sqlite_main.c"),
    includes: &["."],
    // SQLITE_OMIT_RANDOMNESS: the PRNG starts from zeros, not /dev/urandom,
    // so that the coverage and sancov builds take the same path (journal
    // nonces and temporary names are random otherwise: the cores then
    // showed another run's path, unsound-looking labels in the pager).
    defines: &[
        "SQLITE_THREADSAFE=0",
        "SQLITE_OMIT_LOAD_EXTENSION",
        "SQLITE_OMIT_RANDOMNESS",
    ],
    libs: &["-lm"],
    workloads: &[Workload {
        args: &["@IN/workload.sql"],
        log: true,
    }],
    // After the syntax error and the failed constraints, and the end.
    pinned: &[
        (0, "sqlite3ErrorMsg", 1),
        (0, "sqlite3HaltConstraint", 2),
        (0, "jsonObjectFunc", 1),
        (0, "print_row", 2),
    ],
    auto: 10,
    sancov: true,
    o2: false,
    threads: false,
    values_decide: true,
};

const LZ4: Program = Program {
    name: "lz4",
    krate: "lz4-sys",
    dir: "liblz4",
    sources: &["lib/*.c", "programs/*.c"],
    exclude: &["lib/lz4file.c"],
    driver: None,
    includes: &["lib", "programs"],
    // One thread: a crash's backtrace is then the whole process.
    defines: &["LZ4IO_MULTITHREAD=0"],
    libs: &[],
    workloads: &[
        Workload {
            args: &["-c", "-1", "-v", "@SRC/lib/lz4.c"],
            log: false,
        },
        Workload {
            args: &["-c", "-12", "-BD", "@SRC/lib/lz4hc.c"],
            log: false,
        },
    ],
    pinned: &[(1, "LZ4HC_compress_generic", 1)],
    auto: 5,
    sancov: false,
    o2: true,
    threads: false,
    values_decide: true,
};

/// nlohmann/json (C++, header-only: Debian's `nlohmann-json3-dev`, which
/// `.ci/run` installs), driven by `json_main.cpp`: documents parsed,
/// walked, queried, diffed and patched; parse errors and failed queries
/// throw, are caught and the run goes on.
const JSON: Program = Program {
    name: "json",
    krate: "",
    dir: "/usr/include/nlohmann",
    sources: &[],
    exclude: &[],
    driver: Some("json_main.cpp"),
    includes: &[],
    defines: &[],
    libs: &[],
    workloads: &[Workload {
        args: &["@IN/documents.json"],
        // std::cout, no format strings to match.
        log: false,
    }],
    // After caught exceptions (landing pads reached through __cxa_throw):
    // the summary after a parse_error caught in main, the report of a
    // type_error caught in query, and template code after them.
    pinned: &[
        (0, "summary", 8),
        (0, "report_error", 2),
        (0, "sum_as<double>", 5),
        (0, "name_and_first", 6),
        (0, "transform", 9),
    ],
    auto: 10,
    // Its cores work (3 points: 0 unsound, see README), but each core
    // analysis parses the 2,283-function IR anew: about 5 minutes a point
    // with five solvers, values and `--exact`, too long for the whole
    // harness. `sancov: true` and REALPROGS_POINTS=3 run them.
    sancov: false,
    o2: false,
    threads: false,
    values_decide: true,
};

/// zstd 1.5.7 built with `ZSTD_MULTITHREAD` (pthreads), driven by
/// `zstd_main.c`: a multi-threaded program. Its inputs (its own sources,
/// concatenated and repeated: over 1 MB) are compressed with 2 or 3
/// workers in jobs of 512 KB (the smallest `ZSTD_c_jobSize`), which
/// `ZSTDMT_compressionJob` runs in the pool's threads (`POOL_thread`),
/// once in one call and once streamed; then a piece under the job size,
/// which zstd compresses in the calling thread.
const ZSTD: Program = Program {
    name: "zstd",
    krate: "zstd-sys",
    dir: "zstd/lib",
    sources: &["common/*.c", "compress/*.c", "decompress/*.c"],
    exclude: &[],
    driver: Some("zstd_main.c"),
    includes: &[".", "common"],
    // No assembly (huf_decompress_amd64.S): the program is C only.
    defines: &["ZSTD_MULTITHREAD", "ZSTD_DISABLE_ASM"],
    libs: &["-lpthread"],
    workloads: &[
        Workload {
            args: &[
                "3",
                "2",
                "524288",
                "2",
                "@SRC/compress/zstd_compress.c",
                "@SRC/compress/zstd_lazy.c",
                "@SRC/compress/zstd_opt.c",
                "@SRC/decompress/zstd_decompress.c",
            ],
            log: true,
        },
        Workload {
            args: &[
                "6",
                "3",
                "524288",
                "2",
                "@SRC/compress/zstd_compress.c",
                "@SRC/compress/zstdmt_compress.c",
                "@SRC/compress/huf_compress.c",
                "@SRC/decompress/huf_decompress.c",
                "@SRC/decompress/zstd_decompress_block.c",
                "@SRC/common/xxhash.h",
            ],
            log: true,
        },
    ],
    // In the main thread after the workers ran (checking the round trip,
    // the workers waiting; freeing the context, which joins them; after
    // that, one thread left), in a worker (the stack starts at the thread
    // routine), and in the main thread while workers run a job.
    pinned: &[
        (0, "roundtrip", 2),
        (0, "ZSTDMT_compressionJob", 2),
        (0, "ZSTDMT_createCompressionJob", 2),
        (0, "POOL_thread", 2),
        (0, "ZSTD_freeCCtx", 1),
        (0, "stream_back", 1),
    ],
    auto: 5,
    sancov: true,
    o2: false,
    threads: true,
    values_decide: false,
};

const PROGRAMS: [&Program; 7] = [&LUA, &BZIP2, &PCRE2, &SQLITE, &LZ4, &JSON, &ZSTD];

/// The largest N of an automatically chosen N-th call (gdb stops at every
/// call it ignores).
const MAX_HIT: u64 = 2000;

/// The solvers every crash point is analysed with: the CI part leaves
/// out `--exact` (minutes on Lua), the whole harness runs it.
const SOLVERS: [&str; 5] = ["utl", "fsa", "cs", "best", "best --exact"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn realprogs() -> PathBuf {
    workspace().join("realprogs")
}

/// Where each crate of `realprogs/Cargo.toml` is (downloading it if
/// needed).
fn crate_dirs() -> HashMap<String, PathBuf> {
    let manifest = realprogs().join("Cargo.toml");
    let o = sh(
        &realprogs(),
        env!("CARGO"),
        &[
            "metadata",
            "--format-version",
            "1",
            "--manifest-path",
            manifest.to_str().unwrap(),
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let m = Path::new(p["manifest_path"].as_str().unwrap());
            (
                p["name"].as_str().unwrap().to_string(),
                m.parent().unwrap().to_path_buf(),
            )
        })
        .collect()
}

/// A program built: its graph and its binary with coverage.
struct Built {
    src: PathBuf,
    dir: PathBuf,
    pmcfg: PathBuf,
    bin: PathBuf,
    /// The C files and compiler flags (for the sancov builds).
    files: Vec<PathBuf>,
    flags: Vec<String>,
}

/// The builds of the core analyses: SanitizerCoverage's `func` and `bb`
/// modes, and `plain` (no instrumentation: an ordinary `-O0 -g` build,
/// whose core gives the stack and the variables' values).
const SANCOV_MODES: [&str; 3] = ["func", "bb", "plain"];

/// The optimised build of the core analyses ([`Program::o2`]): `-O2 -g`,
/// no instrumentation. Each file is compiled to optimised IR (`clang -O2
/// -emit-llvm`), the files' IR linked by llvm-link-14 into `prog.bc` (the
/// graph), and the binary compiled from that very IR with the middle-end
/// off (`-Xclang -disable-llvm-passes`: no pass runs again on the linked
/// module, so nothing is inlined across files that the graph does not
/// show) and `-O2` code generation (sibling calls, block placement,
/// tail duplication, as a release build has).
///
/// Its truth: llvm-cov's line counts of the `-O0` coverage build's run of
/// the same input to the same breakpoint hit (the programs are
/// deterministic), which executes the same source statements; the gdb
/// referee settles disputes on the `-O2` binary itself (a breakpoint on
/// every instruction of the line, to the same crash point), because the
/// optimiser moves code between lines (a hoisted load carries the line it
/// came from, and runs where the source's line would not have).
const O2: &str = "O2";

/// A SanitizerCoverage build of a program: the instrumented IR (the graph)
/// and the binary built from it.
struct SancovBuild {
    mode: &'static str,
    bc: PathBuf,
    bin: PathBuf,
}

/// Builds `p` with `-fsanitize-coverage=MODE,inline-bool-flag,pc-table`
/// into `target/realprogs/NAME/sancov-MODE/` (cached with its own recipe):
/// each file to instrumented IR, linked by llvm-link-14 into `prog.bc`
/// (the graph), the binary `prog` compiled from that very IR and linked
/// with the callback stub of `tests/data/sancov/sancov_stub.c`: as
/// deployed, without llvm-cov's instrumentation (whose counter updates
/// carry stale line numbers, e.g. a `case` block's counter the line of
/// the `break` before it, which would give the graph nodes on lines that
/// did not run).
fn sancov_build(p: &Program, b: &Built, mode: &'static str) -> SancovBuild {
    let dir = b.dir.join(format!("sancov-{mode}"));
    let out = SancovBuild {
        mode,
        bc: dir.join("prog.bc"),
        bin: dir.join("prog"),
    };
    let stub = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sancov/sancov_stub.c");
    let plain = mode == "plain" || mode == O2;
    let opt = if mode == O2 { "-O2" } else { "-O0" };
    let flags: Vec<&str> = b
        .flags
        .iter()
        .map(|f| if f == "-O0" { opt } else { f.as_str() })
        .collect();
    let cov = if plain {
        "-g".to_string() // already in the flags: no instrumentation
    } else {
        format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table")
    };
    let recipe = format!(
        "{cov}\n{:?}\n{:?}\n{:?}\n{}",
        flags,
        b.files,
        p.libs,
        std::fs::read_to_string(&stub).unwrap()
    );
    let stamp = dir.join("recipe");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(recipe.as_str())
        && out.bc.exists()
        && out.bin.exists()
    {
        return out;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let obj = dir.join("obj");
    std::fs::create_dir_all(&obj).unwrap();
    let mut bcs = Vec::new();
    for (i, f) in b.files.iter().enumerate() {
        let bc = obj.join(format!(
            "{i}-{}.bc",
            f.file_stem().unwrap().to_str().unwrap()
        ));
        let (cc, extra) = compiler(f);
        let mut args = flags.clone();
        args.extend(extra);
        args.extend([
            cov.as_str(),
            "-emit-llvm",
            "-c",
            f.to_str().unwrap(),
            "-o",
            bc.to_str().unwrap(),
        ]);
        sh(&dir, cc, &args);
        bcs.push(bc.to_str().unwrap().to_string());
    }
    let mut args: Vec<&str> = bcs.iter().map(|s| s.as_str()).collect();
    args.extend(["-o", "prog.bc"]);
    sh(&dir, "llvm-link-14", &args);
    if !plain {
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-c",
                stub.to_str().unwrap(),
                "-o",
                "sancov_stub.o",
            ],
        );
    }
    let mut args: Vec<&str> = if mode == O2 {
        vec!["-g", "-O2", "-Xclang", "-disable-llvm-passes", "prog.bc"]
    } else {
        vec!["-g", "-O0", "prog.bc"]
    };
    if !plain {
        args.push("sancov_stub.o");
    }
    args.extend(p.libs);
    args.extend(["-o", "prog"]);
    sh(&dir, linker(&b.files), &args);
    std::fs::write(&stamp, recipe).unwrap();
    out
}

/// The C files of `p` whose sources are in `src`, in a fixed order.
fn c_files(p: &Program, src: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for s in p.sources {
        if let Some(folder) = s.strip_suffix("*.c") {
            let mut found: Vec<PathBuf> = std::fs::read_dir(src.join(folder))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|f| f.extension().is_some_and(|e| e == "c"))
                .filter(|f| !p.exclude.iter().any(|x| *f == src.join(x)))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(src.join(s));
        }
    }
    if let Some(d) = p.driver {
        files.push(realprogs().join("drivers").join(d));
    }
    files
}

/// Builds `p` into `target/realprogs/NAME/` (compiled unless the same
/// recipe is already there; the graph always anew).
fn build(p: &Program, crates: &HashMap<String, PathBuf>) -> Built {
    for tool in [
        "clang-14",
        "llvm-link-14",
        "gdb",
        "llvm-profdata-14",
        "llvm-cov-14",
    ] {
        require(tool);
    }
    if p.driver.is_some_and(is_cpp) {
        require("clang++-14");
    }
    let src = if p.krate.is_empty() {
        let dir = PathBuf::from(p.dir);
        assert!(
            dir.is_dir(),
            "{}: {} is missing (install its package; see .ci/run)",
            p.name,
            p.dir
        );
        dir
    } else {
        crates
            .get(p.krate)
            .unwrap_or_else(|| panic!("{} is not in realprogs/Cargo.toml", p.krate))
            .join(p.dir)
    };
    let dir = workspace().join("target/realprogs").join(p.name);
    let built = Built {
        pmcfg: dir.join("prog.pmcfg"),
        bin: dir.join("prog-cov"),
        src: src.clone(),
        dir: dir.clone(),
        files: Vec::new(),
        flags: Vec::new(),
    };
    let files = c_files(p, &src);
    let mut flags: Vec<String> = vec!["-g".into(), "-O0".into()];
    flags.extend(
        p.includes
            .iter()
            .map(|i| format!("-I{}", src.join(i).display())),
    );
    flags.extend(p.defines.iter().map(|d| format!("-D{d}")));
    if p.krate.is_empty() {
        // A header-only library of a Debian package (`/usr/include/NAME`)
        // is the program's code, not a system header's: clang maps no
        // coverage for system headers, which would leave its truth empty.
        let name = Path::new(p.dir).file_name().unwrap().to_str().unwrap();
        flags.push(format!("--no-system-header-prefix={name}/"));
    }
    // The recipe: flags, files, and our drivers' text.
    let mut recipe = format!("{flags:?}\n{files:?}\n{:?}\n", p.libs);
    if let Some(d) = p.driver {
        recipe += &std::fs::read_to_string(realprogs().join("drivers").join(d)).unwrap();
    }
    let stamp = dir.join("recipe");
    let cached = std::fs::read_to_string(&stamp).ok().as_deref() == Some(recipe.as_str())
        && dir.join("prog.bc").exists()
        && built.bin.exists();
    if !cached {
        compile(p, &dir, &files, &flags);
        std::fs::write(&stamp, recipe).unwrap();
    }
    // Always anew: the graph is the front-end's, which changes.
    let pm = env!("CARGO_BIN_EXE_postmortem");
    sh(&dir, pm, &["cfg", "build", "prog.bc", "-o", "prog.pmcfg"]);
    Built {
        files,
        flags,
        ..built
    }
}

/// Whether `file` is C++ (compiled with clang++-14, see [`Program::sources`]).
fn is_cpp(file: impl AsRef<Path>) -> bool {
    file.as_ref()
        .extension()
        .is_some_and(|e| e == "cpp" || e == "cc" || e == "cxx")
}

/// The compiler of `file` and the flags it adds: clang++-14 with
/// exceptions for C++, clang-14 for C.
fn compiler(file: &Path) -> (&'static str, &'static [&'static str]) {
    if is_cpp(file) {
        ("clang++-14", &["-fexceptions"])
    } else {
        ("clang-14", &[])
    }
}

/// The linker driver of `files`: clang++-14 (libstdc++) if any is C++.
fn linker(files: &[PathBuf]) -> &'static str {
    if files.iter().any(is_cpp) {
        "clang++-14"
    } else {
        "clang-14"
    }
}

/// Compiles `files` into `dir`: `prog.bc`, the linked IR, and `prog-cov`,
/// the binary with coverage.
fn compile(p: &Program, dir: &Path, files: &[PathBuf], flags: &[String]) {
    let _ = std::fs::remove_dir_all(dir);
    let obj = dir.join("obj");
    std::fs::create_dir_all(&obj).unwrap();
    let (mut bcs, mut objs) = (Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        let stem = format!("{i}-{}", f.file_stem().unwrap().to_str().unwrap());
        let (bc, o) = (
            obj.join(format!("{stem}.bc")),
            obj.join(format!("{stem}.o")),
        );
        let (cc, extra) = compiler(f);
        let f = f.to_str().unwrap();
        let mut args: Vec<&str> = flags.iter().map(|s| s.as_str()).collect();
        args.extend(extra);
        args.extend(["-emit-llvm", "-c", f, "-o", bc.to_str().unwrap()]);
        sh(dir, cc, &args);
        let mut args: Vec<&str> = flags.iter().map(|s| s.as_str()).collect();
        args.extend(extra);
        args.extend([
            "-fprofile-instr-generate",
            "-fcoverage-mapping",
            "-c",
            f,
            "-o",
            o.to_str().unwrap(),
        ]);
        sh(dir, cc, &args);
        bcs.push(bc.to_str().unwrap().to_string());
        objs.push(o.to_str().unwrap().to_string());
    }
    let mut args: Vec<&str> = bcs.iter().map(|s| s.as_str()).collect();
    args.extend(["-o", "prog.bc"]);
    sh(dir, "llvm-link-14", &args);
    let mut args: Vec<&str> = vec!["-fprofile-instr-generate"];
    args.extend(objs.iter().map(|s| s.as_str()));
    args.extend(p.libs);
    args.extend(["-o", "prog-cov"]);
    sh(dir, linker(files), &args);
}

fn expand(arg: &str, b: &Built) -> String {
    if let Some(rest) = arg.strip_prefix("@IN/") {
        realprogs().join("inputs").join(rest).display().to_string()
    } else if let Some(rest) = arg.strip_prefix("@SRC/") {
        b.src.join(rest).display().to_string()
    } else {
        arg.to_string()
    }
}

/// Where a run stops: the `hit`-th call of `func` in workload `workload`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Point {
    workload: usize,
    func: String,
    hit: u64,
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{} (workload {})", self.func, self.hit, self.workload)
    }
}

/// `llvm-cov export` of the profile `profraw` of the binary of `b`.
fn coverage(bin: &Path, dir: &Path, profraw: &Path) -> Value {
    let profdata = dir.join("prog.profdata");
    sh(
        dir,
        "llvm-profdata-14",
        &[
            "merge",
            "-o",
            profdata.to_str().unwrap(),
            profraw.to_str().unwrap(),
        ],
    );
    let export = sh(
        dir,
        "llvm-cov-14",
        &[
            "export",
            "-format=text",
            // Segments and functions are the same without the expansions,
            // which are most of the text (100 times less for Lua).
            "-skip-expansions",
            &format!("-instr-profile={}", profdata.display()),
            bin.to_str().unwrap(),
        ],
    );
    let v: Value = serde_json::from_slice(&export.stdout).unwrap();
    v["data"][0].clone()
}

/// `n` crash points of workload `w`, chosen from a full run (see the
/// module doc), leaving out the functions of `taken`.
fn auto_points(p: &Program, b: &Built, w: usize, n: usize, taken: &[Point]) -> Vec<Point> {
    let dir = b.dir.join(format!("full-{w}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let profraw = dir.join("prog.profraw");
    let args: Vec<String> = p.workloads[w].args.iter().map(|a| expand(a, b)).collect();
    let o = Command::new(&b.bin)
        .current_dir(&dir)
        .args(&args)
        .env("LLVM_PROFILE_FILE", &profraw)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        profraw.exists(),
        "{}: full run wrote no profile: {}",
        p.name,
        show(&o)
    );
    let cov = coverage(&b.bin, &dir, &profraw);
    let mut names: HashMap<String, (u64, usize)> = HashMap::new();
    for f in cov["functions"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap().rsplit(':').next().unwrap();
        let e = names.entry(name.to_string()).or_default();
        e.0 = f["count"].as_u64().unwrap();
        e.1 += 1;
    }
    let mut ran: Vec<(u64, String)> = names
        .into_iter()
        .filter(|(name, (count, copies))| {
            *count > 0 && *copies == 1 && name != "main" && !taken.iter().any(|t| t.func == *name)
        })
        .map(|(name, (count, _))| (count, name))
        .collect();
    ran.sort();
    if ran.is_empty() || n == 0 {
        return Vec::new();
    }
    let n = n.min(ran.len());
    (0..n)
        .map(|i| {
            let (count, func) = &ran[if n == 1 {
                0
            } else {
                i * (ran.len() - 1) / (n - 1)
            }];
            Point {
                workload: w,
                func: func.clone(),
                hit: count.div_ceil(2).min(MAX_HIT),
            }
        })
        .collect()
}

/// The crash points of `p`: the pinned ones, then the automatic ones; at
/// most `limit`.
fn points(p: &Program, b: &Built, limit: Option<usize>) -> Vec<Point> {
    let mut points: Vec<Point> = p
        .pinned
        .iter()
        .map(|&(workload, func, hit)| Point {
            workload,
            func: func.to_string(),
            hit,
        })
        .collect();
    for w in 0..p.workloads.len() {
        if limit.is_some_and(|n| points.len() >= n) {
            break;
        }
        let more = auto_points(p, b, w, p.auto, &points);
        points.extend(more);
    }
    points.truncate(limit.unwrap_or(usize::MAX));
    points
}

/// One crash: its reports and the truth of its run.
struct Crash {
    dir: PathBuf,
    /// Per SanitizerCoverage build: the core of its run stopped at the same
    /// point (the same path, so `truth` is its truth too).
    cores: Vec<CoreRun>,
    frames: Vec<Frame>,
    truth: RunTruth,
    /// The truth the core analyses are checked against, for a
    /// multi-threaded program: a second run's ([`again`]).
    core_truth: Option<RunTruth>,
}

/// A run of a SanitizerCoverage build to a crash point.
struct CoreRun {
    mode: &'static str,
    /// The graph (the build's linked IR) and the binary.
    bc: PathBuf,
    bin: PathBuf,
    core: PathBuf,
    /// The crash frame's file and line in this run, where it differs from
    /// the coverage build's: a frame's line, so it ran (as in
    /// [`Truth::ran`]).
    crash_line: Option<(PathBuf, u64)>,
    /// The `-O2` build's frames' lines (file, line): they ran.
    frame_lines: Vec<(PathBuf, u64)>,
}

/// The lines of each file where a macro is expanded, with the lowest count
/// of an expansion there: from the `functions` of an `llvm-cov export`
/// (regions `[line, col, end line, end col, count, file, expanded file,
/// kind]`, kind 1 an expansion).
fn expansions(functions: &[Value]) -> HashMap<PathBuf, BTreeMap<u64, u64>> {
    let mut out: HashMap<PathBuf, BTreeMap<u64, u64>> = HashMap::new();
    for func in functions {
        let files = func["filenames"].as_array().unwrap();
        for r in func["regions"].as_array().unwrap() {
            if r[7] != 1 {
                continue;
            }
            let file = files[r[5].as_u64().unwrap() as usize].as_str().unwrap();
            let (line, count) = (r[0].as_u64().unwrap(), r[4].as_u64().unwrap());
            let lowest = out
                .entry(canonical(file))
                .or_default()
                .entry(line)
                .or_insert(count);
            *lowest = (*lowest).min(count);
        }
    }
    out
}

fn canonical(path: &str) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path))
}

/// Runs workload `point.workload` of `p` under gdb to the crash point:
/// `bt.txt` (gdb), `asan.txt` (the same stack as a sanitizer report),
/// `out.log`, and the truth.
fn crash(p: &Program, b: &Built, point: &Point, dir: &Path) -> Crash {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let profraw = dir.join("prog.profraw");
    let args: Vec<String> = p.workloads[point.workload]
        .args
        .iter()
        .map(|a| format!("'{}'", expand(a, b)))
        .collect();
    let gdb = Command::new("gdb")
        .current_dir(dir)
        .env("LLVM_PROFILE_FILE", &profraw)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "set breakpoint pending off"])
        .args(["-ex", &format!("break {}", point.func)])
        .args(["-ex", &format!("ignore 1 {}", point.hit - 1)])
        .args(["-ex", &format!("run {} > out.log", args.join(" "))])
        .args(["-ex", "bt"])
        .args(["-ex", "printf \"crash pc %p\\n\", $pc"])
        // C++ crash points chosen automatically are linkage names.
        .args([
            "-ex",
            "python print('crash linkage', gdb.selected_frame().function().linkage_name)",
        ])
        // Other threads stay where they stopped while the profile is
        // written (gdb lets every thread run during a call otherwise), and
        // their stacks are written to threads.txt (the truth's active
        // frames).
        .args(["-ex", "set scheduler-locking on"])
        .args(["-ex", "python print('crash thread', gdb.selected_thread().num)"])
        .args([
            "-ex",
            "python open('threads.txt', 'w').write(gdb.execute('thread apply all bt', to_string=True))",
        ])
        .args(["-ex", "call (int)fflush(0)"])
        .args(["-ex", "call (int)__llvm_profile_write_file()"])
        .args(["-ex", "kill"])
        .arg(&b.bin)
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let bt =
        String::from_utf8_lossy(&gdb.stdout).to_string() + &String::from_utf8_lossy(&gdb.stderr);
    std::fs::write(dir.join("bt.txt"), &bt).unwrap();
    let frames = source_frames(&bt);
    let linkage = bt.lines().find_map(|l| l.strip_prefix("crash linkage "));
    assert!(
        (frames.first().is_some_and(|f| f.func == point.func)
            || linkage == Some(point.func.as_str()))
            && profraw.exists(),
        "{}: the run did not stop at {point} (or wrote no profile):\n{bt}",
        p.name
    );
    let pc = bt
        .lines()
        .find_map(|l| l.strip_prefix("crash pc "))
        .expect("gdb printed the pc");
    std::fs::write(dir.join("asan.txt"), sanitizer_report(&frames, pc)).unwrap();

    let others = other_threads(&bt, dir);
    Crash {
        dir: dir.to_path_buf(),
        cores: Vec::new(),
        truth: run_truth(&b.bin, dir, &profraw, &frames, &others),
        core_truth: None,
        frames,
    }
}

/// The frames of the threads other than the crashing one (from the
/// `threads.txt` that [`crash`] writes, `thread apply all bt`; the
/// crashing thread's number is printed in `bt` as `crash thread N`).
fn other_threads(bt: &str, dir: &Path) -> Vec<Frame> {
    let crashing = bt
        .lines()
        .find_map(|l| l.strip_prefix("crash thread "))
        .map(|n| n.trim().to_string());
    let all = std::fs::read_to_string(dir.join("threads.txt")).unwrap_or_default();
    let mut out = Vec::new();
    // `Thread 2 (Thread 0x7ffff799c6c0 (LWP 5521) "prog"):`, then its frames.
    for section in all.split("\nThread ").skip(1) {
        let num = section.split_whitespace().next().unwrap_or("");
        if Some(num) != crashing.as_deref() {
            out.extend(source_frames(section));
        }
    }
    out
}

/// For a multi-threaded program's `func` or `bb` build, a gdb script that
/// writes `ran-MODE.txt` in `dir`: the file and line of the first
/// instruction of each block whose coverage flag is set at the crash
/// point (from the `__sancov_bools` flags and the `__sancov_pcs` table,
/// through gdb's line table). Those lines ran in the core's own run,
/// whatever the schedule of the coverage runs was: a Yes label there is
/// confirmed by the core's run itself (a line of a wait loop, or of a
/// branch that depends on which worker's context a job got, may run in
/// one run and not another). Nothing is refuted this way.
fn flags_script(p: &Program, sb: &SancovBuild, dir: &Path) -> Option<PathBuf> {
    if !p.threads || sb.mode == "plain" || sb.mode == O2 {
        return None;
    }
    let script = format!(
        r#"import gdb
inf = gdb.selected_inferior()
def addr(name):
    return int(gdb.parse_and_eval("(long)&%s" % name))
b0, b1 = addr("__start___sancov_bools"), addr("__stop___sancov_bools")
p0 = addr("__start___sancov_pcs")
bools = inf.read_memory(b0, b1 - b0).tobytes()
pcs = inf.read_memory(p0, 16 * (b1 - b0)).tobytes()
with open("ran-{mode}.txt", "w") as out:
    for i, f in enumerate(bools):
        if f:
            pc = int.from_bytes(pcs[16 * i:16 * i + 8], "little")
            sal = gdb.find_pc_line(pc)
            if sal.symtab is not None and sal.line > 0:
                out.write("%s %d\n" % (sal.symtab.fullname(), sal.line))
"#,
        mode = sb.mode
    );
    let path = dir.join(format!("flags-{}.py", sb.mode));
    std::fs::write(&path, script).unwrap();
    Some(path)
}

/// Whether every thread but the crashing one waits (a condition
/// variable, a join, a lock) in the run of `dir` (its `threads.txt` and
/// `bt.txt`, see [`other_threads`]): no other thread runs program code,
/// so what ran by the crash point does not depend on how far another
/// thread got.
fn others_wait(dir: &Path) -> bool {
    others_wait_in(dir, "bt.txt", "threads.txt")
}

/// [`others_wait`] with the files `bt` and `threads` of `dir`.
fn others_wait_in(dir: &Path, bt: &str, threads: &str) -> bool {
    let bt = std::fs::read_to_string(dir.join(bt)).unwrap_or_default();
    let crashing = bt
        .lines()
        .find_map(|l| l.strip_prefix("crash thread "))
        .map(|n| n.trim().to_string());
    let all = std::fs::read_to_string(dir.join(threads)).unwrap_or_default();
    all.split("\nThread ").skip(1).all(|section| {
        let num = section.split_whitespace().next().unwrap_or("");
        Some(num) == crashing.as_deref()
            || [
                "pthread_cond_wait",
                "pthread_join",
                "clockjoin",
                "lll_lock_wait",
            ]
            .iter()
            .any(|w| section.contains(w))
    })
}

/// A second run of the coverage build to the crash point `point` (a
/// multi-threaded program, [`Program::threads`]): its truth, with the
/// lines whose verdict differs from the first run's (`first`) marked
/// unstable. Core analyses, whose cores come from other runs, are checked
/// against it: the threads' schedule differs between runs, and so may
/// what ran by the crash point (whether a wait loop's body ran).
fn again(p: &Program, b: &Built, point: &Point, dir: &Path, first: &RunTruth) -> RunTruth {
    let c = crash(p, b, point, &dir.join("again"));
    let mut truth = c.truth;
    for (path, t) in &mut truth.truth {
        let Some(f) = first.truth.get(path) else {
            continue;
        };
        let lines: BTreeSet<u64> = t.counts.keys().chain(f.counts.keys()).copied().collect();
        let unstable: BTreeSet<u64> = lines
            .into_iter()
            .filter(|&l| t.ran(l) != f.ran(l))
            .collect();
        truth.unstable.insert(path.clone(), unstable);
    }
    for path in first.truth.keys() {
        if !truth.truth.contains_key(path) {
            truth.unstable.insert(path.clone(), BTreeSet::new());
        }
    }
    truth
}

/// What really ran in one run, from its profile (see the module doc).
struct RunTruth {
    /// The truth per source file (canonical path).
    truth: HashMap<PathBuf, Truth>,
    /// Per source file, the lines where a macro expansion starts, with the
    /// lowest count of such an expansion.
    expansions: HashMap<PathBuf, BTreeMap<u64, u64>>,
    /// Per source file and line, the count at the line's first token.
    first_code: HashMap<PathBuf, BTreeMap<u64, u64>>,
    /// Per source file, the lines whose verdict two runs of a
    /// multi-threaded program disagree on ([`again`]): not checked.
    unstable: HashMap<PathBuf, BTreeSet<u64>>,
}

/// The truth of the run of `bin` that wrote `profraw` and stopped with
/// the stack `frames` (the crashing thread's), the other threads stopped
/// with the frames `others`: their functions are active too.
fn run_truth(
    bin: &Path,
    dir: &Path,
    profraw: &Path,
    frames: &[Frame],
    others: &[Frame],
) -> RunTruth {
    let cov = coverage(bin, dir, profraw);
    let all: Vec<Frame> = frames.iter().chain(others).cloned().collect();
    let mut active = active_frames(cov["functions"].as_array().unwrap(), &all);
    let mut truth = HashMap::new();
    let mut first_code = HashMap::new();
    for f in cov["files"].as_array().unwrap() {
        let name = f["filename"].as_str().unwrap();
        let path = canonical(name);
        first_code.insert(
            path.clone(),
            first_code_counts(&path, f["segments"].as_array().unwrap()),
        );
        let frame_lines: BTreeSet<u64> = frames
            .iter()
            .filter(|fr| canonical(&fr.file) == path)
            .map(|fr| fr.line)
            .collect();
        truth.insert(
            path,
            Truth {
                counts: line_counts(f["segments"].as_array().unwrap()),
                active: active.remove(name).unwrap_or_default(),
                frame_lines,
                brace_lines: BTreeSet::new(),
            },
        );
    }
    RunTruth {
        truth,
        expansions: expansions(cov["functions"].as_array().unwrap()),
        first_code,
        unstable: HashMap::new(),
    }
}

/// For each line of `file` (segments of `llvm-cov export`), the count of
/// the segment in effect at the line's first non-blank column: whether its
/// first token ran (from the last segment starting at or before it).
fn first_code_counts(file: &Path, segments: &[Value]) -> BTreeMap<u64, u64> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let segs: Vec<(u64, u64, u64)> = segments
        .iter()
        .map(|s| {
            let has = s[3].as_bool().unwrap();
            (
                s[0].as_u64().unwrap(),
                s[1].as_u64().unwrap(),
                if has { s[2].as_u64().unwrap() } else { 0 },
            )
        })
        .collect();
    let mut out = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        let Some(col) = l.find(|ch: char| !ch.is_whitespace()) else {
            continue;
        };
        let at = ((i + 1) as u64, col as u64 + 1);
        let k = segs.partition_point(|s| (s.0, s.1) <= at);
        if k > 0 {
            out.insert(at.0, segs[k - 1].2);
        }
    }
    out
}

/// Runs the same workload on the SanitizerCoverage build `sb` under gdb
/// to the same crash point and writes a core there (`generate-core-file`,
/// not the kernel's core_pattern, which CI does not control). The truth is
/// that of the coverage build's run (`c`): the two builds are run with the
/// same inputs to the same breakpoint hit of a deterministic program (Lua
/// is made so, [`LUA`]'s `luai_makeseed`), and this run must stop with the
/// same stack (functions, files and lines; the crash frame's line may
/// differ, see below).
///
/// gdb's `break F` stops right after the prologue, which in a sancov build
/// is the load of F's entry flag, before the store that sets it: a state
/// no real crash has (a flag load cannot fault), in which the flag of the
/// running block is clear. So the run is stopped where the flag check
/// joins ([`past_flag_store`]), still on the breakpoint's line, with no
/// other code run.
/// Returns false (no core kept) when a multi-threaded program's other
/// threads did not all wait in this run ([`others_wait`]).
fn crash_core(p: &Program, b: &Built, sb: &SancovBuild, point: &Point, c: &mut Crash) -> bool {
    let core = c.dir.join(format!("core-{}", sb.mode));
    // A plain build (and the -O2 one) has no entry flag to step past.
    let join = if sb.mode == "plain" || sb.mode == O2 {
        None
    } else {
        past_flag_store(&sb.bin, &point.func)
    };
    let args: Vec<String> = p.workloads[point.workload]
        .args
        .iter()
        .map(|a| format!("'{}'", expand(a, b)))
        .collect();
    let gdb = Command::new("gdb")
        .current_dir(&c.dir)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "set breakpoint pending off"])
        .args(["-ex", &format!("break {}", point.func)])
        .args(["-ex", &format!("ignore 1 {}", point.hit - 1)])
        .args([
            "-ex",
            &format!("run {} > out-{}.log", args.join(" "), sb.mode),
        ])
        // Only this thread steps past the flag's store (a multi-threaded
        // program's other threads stay where the breakpoint stopped them).
        .args(["-ex", "set scheduler-locking on"])
        .args(match join {
            Some(off) => vec![
                "-ex".to_string(),
                format!("tbreak *((char *){} + {off})", point.func),
                "-ex".to_string(),
                "continue".to_string(),
            ],
            None => Vec::new(),
        })
        .args(["-ex", "bt"])
        .args(["-ex", "python print('crash thread', gdb.selected_thread().num)"])
        .args([
            "-ex",
            &format!(
                "python open('threads-{}.txt', 'w').write(gdb.execute('thread apply all bt', to_string=True))",
                sb.mode
            ),
        ])
        .args(match flags_script(p, sb, &c.dir) {
            Some(script) => vec!["-ex".to_string(), format!("source {}", script.display())],
            None => Vec::new(),
        })
        .args(["-ex", &format!("generate-core-file {}", core.display())])
        .args(["-ex", "kill"])
        .arg(&sb.bin)
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let bt =
        String::from_utf8_lossy(&gdb.stdout).to_string() + &String::from_utf8_lossy(&gdb.stderr);
    std::fs::write(c.dir.join(format!("bt-{}.txt", sb.mode)), &bt).unwrap();
    let here: Vec<(String, String, u64)> = source_frames(&bt)
        .into_iter()
        .map(|f| (f.func, f.file, f.line))
        .collect();
    let there: Vec<(String, String, u64)> = c
        .frames
        .iter()
        .map(|f| (f.func.clone(), f.file.clone(), f.line))
        .collect();
    // The crash frame's line may differ: both runs stop at gdb's breakpoint
    // of the function's entry, which is the line of its first counter or
    // flag, or of its first statement when sancov left the entry block
    // alone (`noreturn`): the same state, before any statement ran.
    let same = if sb.mode == O2 {
        same_point_optimised(&here, &there)
    } else {
        here.len() == there.len()
            && here.first().map(|f| &f.0) == there.first().map(|f| &f.0)
            && here.get(1..) == there.get(1..)
    };
    assert!(
        same && core.exists(),
        "{}: the {} sancov build did not stop where the coverage build did at {point} (or wrote no core):\n{bt}\ncoverage build's stack: {there:?}",
        p.name,
        sb.mode
    );
    // A multi-threaded program: where another thread was running program
    // code in this run, its core is not checked (module doc).
    if p.threads
        && !others_wait_in(
            &c.dir,
            &format!("bt-{}.txt", sb.mode),
            &format!("threads-{}.txt", sb.mode),
        )
    {
        return false;
    }
    let crash_line = here
        .first()
        .filter(|f| Some(*f) != there.first())
        .map(|f| (canonical(&f.1), f.2));
    // The optimised build's stack may lack frames (sibling calls compiled
    // as jumps) and its frames' lines are those of its own line table:
    // each frame's line ran, in this run.
    let mut frame_lines: Vec<(PathBuf, u64)> = if sb.mode == O2 {
        here.iter().map(|f| (canonical(&f.1), f.2)).collect()
    } else {
        Vec::new()
    };
    // The lines of the blocks whose flags are set in this run (a
    // multi-threaded program's cores: see [`flags_script`]).
    let flagged = std::fs::read_to_string(c.dir.join(format!("ran-{}.txt", sb.mode)));
    for l in flagged.unwrap_or_default().lines() {
        if let Some((file, line)) = l.rsplit_once(' ') {
            if let Ok(line) = line.parse() {
                frame_lines.push((canonical(file), line));
            }
        }
    }
    c.cores.push(CoreRun {
        mode: sb.mode,
        bc: sb.bc.clone(),
        bin: sb.bin.clone(),
        core,
        crash_line,
        frame_lines,
    });
    true
}

/// Whether an optimised build's stack `here` (innermost first: function,
/// file, line) is at the same point as the `-O0` coverage build's `there`:
/// the same crash function, and the rest of `here` a subsequence of
/// `there` (frames of sibling calls are missing from an optimised stack;
/// inlined frames are shown by gdb as frames), matched by function, and
/// the same outermost frame.
fn same_point_optimised(here: &[(String, String, u64)], there: &[(String, String, u64)]) -> bool {
    let (Some(h0), Some(t0)) = (here.first(), there.first()) else {
        return false;
    };
    if h0.0 != t0.0 || here.last().map(|f| &f.0) != there.last().map(|f| &f.0) {
        return false;
    }
    // Each -O2 frame's function in order among the -O0 stack's (sibling
    // calls and inlining remove frames). Its line may differ: a call the
    // optimiser merged with others has the line of one of them, or none.
    let mut rest = there[1..].iter();
    here[1..].iter().all(|h| rest.by_ref().any(|t| t.0 == h.0))
}

/// The offset in `func` of the instruction after the store that sets its
/// entry flag (`movb $0x1,FLAG(%rip)`), which both paths of the flag
/// check reach next: the first such store within a few instructions of
/// gdb's breakpoint address (the sancov check sits at the entry block's
/// first insertion point).
///
/// None when there is no such store: sancov leaves a block that ends in
/// `unreachable` (a `noreturn` function's body) without a flag, and the
/// breakpoint is then a state a crash may have.
fn past_flag_store(bin: &Path, func: &str) -> Option<u64> {
    let o = Command::new("gdb")
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("break {func}")])
        .args(["-ex", &format!("disassemble {func}")])
        .arg(bin)
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let bp = text
        .lines()
        .find_map(|l| l.strip_prefix("Breakpoint 1 at 0x"))
        .and_then(|r| u64::from_str_radix(r.split(':').next()?.trim(), 16).ok())
        .unwrap_or_else(|| panic!("no breakpoint address for {func}:\n{text}"));
    // `   0x000000000000b385 <+37>:\tmovb   $0x1,0x14ac1(%rip)   # 0x1fe4d`
    let insns: Vec<(u64, u64, &str)> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches("=> ");
            let (addr, rest) = l.strip_prefix("0x")?.split_once(' ')?;
            let addr = u64::from_str_radix(addr, 16).ok()?;
            let (off, insn) = rest.trim().strip_prefix("<+")?.split_once(">:")?;
            Some((addr, off.parse().ok()?, insn.trim()))
        })
        .collect();
    let at = insns
        .iter()
        .position(|i| i.0 == bp)
        .unwrap_or_else(|| panic!("{func}: the breakpoint address is not an instruction:\n{text}"));
    let store = (at..(at + 8).min(insns.len()))
        .find(|&i| insns[i].2.starts_with("movb   $0x1,") && insns[i].2.contains("(%rip)"))?;
    Some(
        insns
            .get(store + 1)
            .unwrap_or_else(|| panic!("{func}: nothing after the flag store"))
            .1,
    )
}

/// The stack of `frames` as an AddressSanitizer report prints it. gdb
/// prints a pc only for the innermost frame of each physical frame, not
/// for the crash frame and not for the frames that the code they are in
/// was inlined into; the sanitizer prints the pc on each, the same for all
/// frames of one physical frame.
fn sanitizer_report(frames: &[Frame], crash_pc: &str) -> String {
    let mut out = format!(
        "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc {crash_pc})\n"
    );
    let mut pc = crash_pc;
    for (i, f) in frames.iter().enumerate() {
        pc = f.pc.as_deref().unwrap_or(pc);
        writeln!(out, "    #{i} {pc} in {} {}:{}", f.func, f.file, f.line).unwrap();
    }
    out
}

/// A label that contradicts the run.
struct Unsound {
    file: String,
    line: u64,
    /// The line's source text.
    text: String,
    label: &'static str,
    count: Option<u64>,
    active: u64,
    solver: &'static str,
    report: &'static str,
    point: String,
}

impl Unsound {
    fn truth(&self) -> String {
        match self.count {
            Some(0) => "did not run (llvm-cov count 0)".to_string(),
            Some(c) => format!("ran (llvm-cov count {c}, {} active frames)", self.active),
            None => "ran (a frame's line)".to_string(),
        }
    }
}

/// The unsound labels of `found`, one paragraph per line and label: the
/// source, then each crash point with its truth, solvers and reports.
fn describe(found: &[Unsound]) -> String {
    let mut by_line: BTreeMap<(&str, u64, &str), Vec<&Unsound>> = BTreeMap::new();
    for u in found {
        by_line
            .entry((&u.file, u.line, u.label))
            .or_default()
            .push(u);
    }
    let mut out = String::new();
    for ((file, line, label), all) in by_line {
        writeln!(out, "{file}:{line} is {label}: `{}`", all[0].text.trim()).unwrap();
        let mut by_point: BTreeMap<(&str, String), Vec<String>> = BTreeMap::new();
        for u in all {
            by_point
                .entry((&u.point, u.truth()))
                .or_default()
                .push(format!("{} on {}", u.solver, u.report));
        }
        for ((point, truth), how) in by_point {
            writeln!(out, "    at {point}: {truth}; {}", how.join(", ")).unwrap();
        }
    }
    out
}

/// What the checks of one program found.
#[derive(Default)]
struct Figures {
    /// The CI part (a few crash points): cores of coverage builds are
    /// analysed without values (values take seconds per analysis there;
    /// the plain cores test them).
    quick: bool,
    /// Local (per-activation) labels of plain-core analyses checked
    /// against gdb's per-activation truth: (lines checked, unsound
    /// descriptions, lines decided, lines of the frames' functions).
    local_checked: usize,
    local_unsound: Vec<String>,
    local_decided: usize,
    local_all: usize,
    /// Crash points whose per-activation truth was not computed.
    local_skipped: usize,
    /// The solvers each crash point is analysed with.
    solvers: &'static [&'static str],
    runs: usize,
    /// Crash points also analysed from cores.
    core_runs: usize,
    analyses: usize,
    /// Analyses that warned (e.g. a frame that cannot be placed).
    warned: usize,
    checked: usize,
    yes_confirmed: usize,
    no_confirmed: usize,
    unknown: usize,
    braces: usize,
    /// Lines that ran per llvm-cov but whose macro may not have: unknown.
    macros: usize,
    /// Lines that ran per llvm-cov but whose first token did not: unknown.
    continued: usize,
    /// Lines of core analyses whose verdict two runs of a multi-threaded
    /// program disagree on: unknown.
    scheduling: usize,
    /// Crash points of a multi-threaded program not analysed from cores:
    /// another thread was running program code (module doc).
    busy_points: usize,
    /// Cores of such a program left out: another thread was running
    /// program code in the core's own run.
    busy_cores: usize,
    unsound: Vec<Unsound>,
    /// Labels of core analyses that llvm-cov contradicts and gdb confirms
    /// ([`referee`]).
    refereed: Vec<Unsound>,
    /// Per solver: (Yes + No, Yes + No + Maybe) summed over analyses.
    decided: BTreeMap<&'static str, (usize, usize)>,
    /// The same per kind of report (`backtrace`: the gdb backtrace alone;
    /// `func flags`, `bb flags`: a core of that sancov build) and solver,
    /// over the crash points analysed from cores.
    precision: BTreeMap<(&'static str, &'static str), (usize, usize)>,
    seconds: f64,
    /// The checks of `suggest`'s guarantees (issue 24).
    suggest: suggestions::SuggestFigures,
}

/// Source lines of a file, cached.
struct Sources(HashMap<PathBuf, Vec<String>>);

impl Sources {
    /// The line starts with `}`: left out of the comparison (module doc).
    fn text(&mut self, file: &Path, line: u64) -> &str {
        let lines = self.0.entry(file.to_path_buf()).or_insert_with(|| {
            std::fs::read_to_string(file)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default()
        });
        lines
            .get(line as usize - 1)
            .map(|l| l.as_str())
            .unwrap_or("")
    }

    /// The line starts with `}`: left out of the comparison (module doc).
    fn is_brace(&mut self, file: &Path, line: u64) -> bool {
        self.text(file, line).trim_start().starts_with('}')
    }
}

/// Runs the analyses of one crash and checks their labels into `fig`.
fn check_crash(
    p: &Program,
    b: &Built,
    point: &Point,
    c: &Crash,
    fig: &mut Figures,
    src: &mut Sources,
) {
    let pm = env!("CARGO_BIN_EXE_postmortem");
    let pmcfg = b.pmcfg.to_str().unwrap().to_string();
    let args = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.to_string()).collect() };
    // (report, its kind in the precision table, graph, inputs, the truth,
    // lines known to have run that the truth's stack may not show: the
    // crash frame's line where it differs, an optimised build's frames)
    #[allow(clippy::type_complexity)]
    let mut reports: Vec<(
        &'static str,
        Option<&'static str>,
        String,
        Vec<String>,
        &RunTruth,
        Vec<(PathBuf, u64)>,
    )> = vec![
        (
            "gdb backtrace",
            (!c.cores.is_empty()).then_some("backtrace"),
            pmcfg.clone(),
            args(&["--backtrace", "bt.txt"]),
            &c.truth,
            Vec::new(),
        ),
        (
            "sanitizer backtrace",
            None,
            pmcfg.clone(),
            args(&["--backtrace", "asan.txt"]),
            &c.truth,
            Vec::new(),
        ),
    ];
    if p.workloads[point.workload].log {
        reports.push((
            "gdb backtrace + log",
            None,
            pmcfg.clone(),
            args(&["--backtrace", "bt.txt", "--log", "out.log"]),
            &c.truth,
            Vec::new(),
        ));
    }
    for run in &c.cores {
        let (bc, bin, core) = (&run.bc, &run.bin, &run.core);
        for (report, kind, extra) in core_reports(run.mode) {
            let mut inputs = vec![
                "--core".into(),
                core.display().to_string(),
                "--binary".into(),
                bin.display().to_string(),
            ];
            inputs.extend(extra.iter().map(|s| s.to_string()));
            // Every value staged: the figures compare the lines values
            // decide, which a time budget would make depend on the
            // machine's load.
            inputs.extend(["--value-budget".into(), "0".into()]);
            if fig.quick && run.mode != "plain" && run.mode != O2 {
                inputs.push("--no-values".into());
            }
            let ran: Vec<(PathBuf, u64)> = run
                .crash_line
                .iter()
                .chain(&run.frame_lines)
                .cloned()
                .collect();
            reports.push((
                report,
                Some(kind),
                bc.display().to_string(),
                inputs,
                c.core_truth.as_ref().unwrap_or(&c.truth),
                ran,
            ));
        }
    }
    for (report, kind, cfg, inputs, run, ran_lines) in &reports {
        for &solver in fig.solvers {
            let what = format!("{} {point}: {report}, --solver {solver}", p.name);
            let o = Command::new(pm)
                .current_dir(&c.dir)
                .args(["analyze", "--cfg", cfg, "--format", "json", "--solver"])
                .args(solver.split(' '))
                .args(["--timeout", "60"])
                .args(inputs)
                .args(extra_args())
                .output()
                .unwrap();
            assert!(o.status.success(), "{what}: {}", show(&o));
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            fig.analyses += 1;
            if String::from_utf8_lossy(&o.stderr).contains("warning") {
                fig.warned += 1;
            }
            let core = inputs.iter().any(|a| a == "--core");
            let (decided, all) = check_labels(&v, run, ran_lines, solver, report, point, fig, src);
            if !core {
                let d = fig.decided.entry(solver).or_default();
                d.0 += decided;
                d.1 += all;
            }
            if let Some(kind) = kind {
                let p = fig.precision.entry((kind, solver)).or_default();
                p.0 += decided;
                p.1 += all;
            }
        }
    }
}

/// The line labels of the analysis `v` (`analyze --format json`) per
/// canonical path (with the path as printed): llvm-cov counts a file under
/// its path with `..` removed, so the copies of a header's static
/// functions that zstd's files include as `compress/../common/mem.h` and
/// `decompress/../common/mem.h` are one file in the truth, and two in
/// the labels (the decompressor's copy is rightly No before anything was
/// decompressed). The labels of every spelling of a path are merged as
/// those of copies under one spelling: Yes if one is Yes, No if every
/// one is No, Maybe otherwise.
fn merged_labels(v: &Value) -> BTreeMap<PathBuf, (String, BTreeMap<u64, &'static str>)> {
    let mut merged: BTreeMap<PathBuf, (String, BTreeMap<u64, &'static str>)> = BTreeMap::new();
    for (file, labels) in v["lines"].as_object().unwrap() {
        let entry = merged
            .entry(canonical(file))
            .or_insert_with(|| (file.clone(), BTreeMap::new()));
        for (key, label) in [("yes", "Yes"), ("no", "No"), ("maybe", "Maybe")] {
            for l in labels[key].as_array().unwrap() {
                let e = entry.1.entry(l.as_u64().unwrap()).or_insert(label);
                *e = match (*e, label) {
                    ("Yes", _) | (_, "Yes") => "Yes",
                    ("No", "No") => "No",
                    _ => "Maybe",
                };
            }
        }
    }
    merged
}

/// Checks every Yes and No line of the analysis `v` (`analyze --format
/// json`) against the truth `run` (and the lines `ran_lines` known to have
/// run) into `fig` (see the module doc), as got by `solver` on `report`
/// at `point`; returns (lines decided, lines labelled).
#[allow(clippy::too_many_arguments)]
fn check_labels(
    v: &Value,
    run: &RunTruth,
    ran_lines: &[(PathBuf, u64)],
    solver: &'static str,
    report: &'static str,
    point: &dyn std::fmt::Display,
    fig: &mut Figures,
    src: &mut Sources,
) -> (usize, usize) {
    let (mut decided, mut all) = (0, 0);
    for (path, (file, labels)) in merged_labels(v) {
        decided += labels.values().filter(|l| **l != "Maybe").count();
        all += labels.len();
        let file = &file;
        let none = Truth::default();
        let truth = run.truth.get(&path).unwrap_or(&none);
        let labelled = labels.into_iter().filter(|(_, l)| *l != "Maybe");
        for (line, label) in labelled {
            if src.is_brace(&path, line) {
                fig.braces += 1;
                continue;
            }
            let mut ran = truth.ran(line);
            if ran_lines.iter().any(|(f, l)| *f == path && *l == line) {
                ran = Ran::Yes;
            } else if run.unstable.get(&path).is_some_and(|u| u.contains(&line)) {
                // Two runs of a multi-threaded program disagree: the
                // core's run may have done either.
                fig.scheduling += 1;
                fig.unknown += 1;
                continue;
            }
            let k = truth.active.get(&line).copied().unwrap_or(0);
            let expanded = run.expansions.get(&path).and_then(|m| m.get(&line));
            if ran == Ran::Yes
                && !truth.frame_lines.contains(&line)
                && expanded.is_some_and(|e| *e <= k)
            {
                // The line's count may be the region around a macro
                // that did not run (module doc).
                ran = Ran::Unknown;
                fig.macros += 1;
            } else if ran == Ran::Yes
                && !truth.frame_lines.contains(&line)
                && run
                    .first_code
                    .get(&path)
                    .and_then(|m| m.get(&line))
                    .is_some_and(|n| *n <= k)
            {
                // The count is of a region whose code on this line
                // may not have run (module doc).
                ran = Ran::Unknown;
                fig.continued += 1;
            }
            let wrong = match (label, ran) {
                ("Yes", Ran::No) | ("No", Ran::Yes) => true,
                (_, Ran::Yes | Ran::No) => false,
                _ => {
                    fig.unknown += 1;
                    continue;
                }
            };
            fig.checked += 1;
            if wrong {
                fig.unsound.push(Unsound {
                    file: file.clone(),
                    line,
                    text: src.text(&path, line).to_string(),
                    label,
                    count: truth.counts.get(&line).copied(),
                    active: truth.active.get(&line).copied().unwrap_or(0),
                    solver,
                    report,
                    point: point.to_string(),
                });
            } else if label == "Yes" {
                fig.yes_confirmed += 1;
            } else {
                fig.no_confirmed += 1;
            }
        }
    }
    (decided, all)
}

/// The lines each activation on the crash stack ran, outermost first:
/// (function, lines), from a run of `bin` under gdb to the crash point
/// with a non-stopping breakpoint on every line-table row of the stack's
/// functions (recording the line under the frame's CFA, gdb's frame id)
/// and on each function's first instruction (a new activation at that
/// CFA forgets what an older one there ran). None if gdb fails.
fn local_truth(p: &Program, b: &Built, point: &Point, c: &Crash, bin: &Path) -> Option<LocalTruth> {
    let funcs: BTreeSet<&str> = c.frames.iter().map(|f| f.func.as_str()).collect();
    let args: Vec<String> = p.workloads[point.workload]
        .args
        .iter()
        .map(|a| format!("'{}'", expand(a, b)))
        .collect();
    let script = format!(
        r#"import gdb, re
funcs = [{funcs}]
gdb.execute("set breakpoint pending off")
gdb.execute("starti {args} > /dev/null", to_string=True)
ran = {{}}
budget = [400000]
SLEEP = {sleep}
def cfa():
    m = re.search(r"stack=(0x[0-9a-f]+)", str(gdb.newest_frame()))
    return m.group(1) if m else None
def spend():
    budget[0] -= 1
    if budget[0] == 0:
        print("BUDGET")
        gdb.execute("kill")
rows = {{}}
asleep = {{}}
def enable(f):
    for b in asleep.pop(f, []):
        b.enabled = True
class Row(gdb.Breakpoint):
    # Records its line under the frame's CFA once, then sleeps until an
    # activation of its function starts or ends (Entry, Exit).
    def __init__(self, pc, line, f):
        super().__init__("*%#x" % pc, internal=True)
        self.line = line
        self.f = f
    def stop(self):
        spend()
        ran.setdefault(cfa(), set()).add(self.line)
        # Not with threads: another thread's activation of the function
        # would not wake it.
        if SLEEP:
            self.enabled = False
            asleep.setdefault(self.f, []).append(self)
        return False
class Exit(gdb.FinishBreakpoint):
    def __init__(self, frame, f):
        super().__init__(frame, internal=True)
        self.f = f
    def stop(self):
        spend()
        enable(self.f)
        return False
    def out_of_scope(self):
        enable(self.f)
class Entry(gdb.Breakpoint):
    def __init__(self, pc, f, line):
        super().__init__("*%#x" % pc, internal=True)
        self.f = f
        self.line = line
    def stop(self):
        spend()
        # A new activation (the row at the entry, if it fired first, is
        # this activation's too).
        ran[cfa()] = set([self.line]) if self.line else set()
        enable(self.f)
        try:
            Exit(gdb.newest_frame(), self.f)
        except (gdb.error, ValueError):
            pass
        return False
seen = set()
for f in funcs:
    try:
        block = gdb.block_for_pc(int(gdb.parse_and_eval("(long)&%s" % f)))
    except gdb.error:
        continue
    while block.superblock is not None and block.superblock.function is not None:
        block = block.superblock
    lo, hi = block.start, block.end
    sal = gdb.find_pc_line(lo)
    Entry(lo, f, sal.line)
    lines = set()
    for e in sal.symtab.linetable():
        if lo <= e.pc < hi and e.line > 0:
            lines.add(e.line)
            if e.pc not in seen:
                seen.add(e.pc)
                Row(e.pc, e.line, f)
    print("ROWS %s %s" % (f, " ".join(str(l) for l in sorted(lines))))
stop = gdb.Breakpoint({func:?})
stop.ignore_count = {ignore}
gdb.execute("continue", to_string=True)
f = gdb.newest_frame()
while f is not None:
    name = f.name()
    m = re.search(r"stack=(0x[0-9a-f]+)", str(f))
    lines = sorted(ran.get(m.group(1), set())) if m else []
    print("FRAME %s %s" % (name, " ".join(str(l) for l in lines)))
    f = f.older()
gdb.execute("kill", to_string=True)
"#,
        funcs = funcs
            .iter()
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        args = args.join(" ").replace('"', "\\\""),
        func = point.func,
        ignore = point.hit - 1,
        sleep = if p.threads { "False" } else { "True" },
    );
    let path = c.dir.join("local-truth.py");
    std::fs::write(&path, script).unwrap();
    // gdb re-inserts every breakpoint at each hit: a hot stack can take
    // minutes; past 120 s the point is not checked (counted).
    let o = Command::new("timeout")
        .arg("120")
        .arg("gdb")
        .current_dir(&c.dir)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-x", path.to_str().unwrap()])
        .arg(bin)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let out = String::from_utf8_lossy(&o.stdout);
    if out.contains("BUDGET") || !o.status.success() {
        return None;
    }
    let mut frames: Vec<(String, BTreeSet<u64>)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("FRAME "))
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap_or("").to_string();
            (name, w.filter_map(|x| x.parse().ok()).collect())
        })
        .collect();
    if frames.is_empty() {
        return None;
    }
    frames.reverse(); // outermost first
    let rows = out
        .lines()
        .filter_map(|l| l.strip_prefix("ROWS "))
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap_or("").to_string();
            (name, w.filter_map(|x| x.parse().ok()).collect())
        })
        .collect();
    Some(LocalTruth { frames, rows })
}

/// What [`local_truth`] found: the lines each activation ran (outermost
/// first), and per function the lines gdb can see (with a line-table
/// row; others, such as a function's declaration line, are not checked).
struct LocalTruth {
    frames: Vec<(String, BTreeSet<u64>)>,
    rows: HashMap<String, BTreeSet<u64>>,
}

/// Checks the Local labels of the plain-core analysis (default solver)
/// of crash point `point` against each activation's own run
/// ([`local_truth`]): a Local Yes line must have run in that activation,
/// a Local No line must not have. Frames are matched by function, in
/// order from the outermost. `}` lines are left out, as for Global.
fn check_local(
    p: &Program,
    b: &Built,
    point: &Point,
    c: &Crash,
    run: &CoreRun,
    fig: &mut Figures,
    src: &mut Sources,
) {
    let Some(truth) = local_truth(p, b, point, c, &run.bin) else {
        // Too many line hits to follow (a hot loop), or gdb failed: not
        // checked, and counted.
        fig.local_skipped += 1;
        return;
    };
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(&c.dir)
        .args([
            "analyze",
            "--cfg",
            run.bc.to_str().unwrap(),
            "--format",
            "json",
        ])
        .args([
            "--core",
            run.core.to_str().unwrap(),
            "--binary",
            run.bin.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut t = truth.frames.iter();
    for f in v["frames"].as_array().unwrap() {
        let func = f["function"].as_str().unwrap();
        let Some((_, ran)) = t.by_ref().find(|(name, _)| name == func) else {
            break;
        };
        let path = canonical(f["file"].as_str().unwrap_or(""));
        let lines = |k: &str| -> Vec<u64> {
            f["lines"][k]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect()
        };
        let (yes, no, maybe) = (lines("yes"), lines("no"), lines("maybe"));
        fig.local_decided += yes.len() + no.len();
        fig.local_all += yes.len() + no.len() + maybe.len();
        for (l, label) in yes
            .iter()
            .map(|l| (*l, "Yes"))
            .chain(no.iter().map(|l| (*l, "No")))
        {
            let visible = truth.rows.get(func).is_some_and(|r| r.contains(&l));
            // A loop header with a constant condition (`while (True) {`,
            // `for (;;) {`, `do {`) has no instruction where the loop is
            // entered (the branch to the next block is elided at -O0): its
            // only rows are the back edge's, which a first iteration never
            // reaches. gdb cannot see it run; not checked.
            // (Spacing aside: SQLite writes `while( 1 ){`.)
            let text: String = src
                .text(&path, l)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let constant_loop = ["while(True)", "while(1)", "for(;;)", "do{"]
                .iter()
                .any(|p| text.starts_with(p))
                || text == "do";
            if src.is_brace(&path, l) || !visible || constant_loop {
                continue;
            }
            fig.local_checked += 1;
            let wrong = (label == "Yes") != ran.contains(&l);
            if wrong {
                fig.local_unsound.push(format!(
                    "{}:{l} is {label} in the activation of `{func}` at {point}, which {} it: `{}`",
                    path.display(),
                    if ran.contains(&l) {
                        "ran"
                    } else {
                        "did not run"
                    },
                    src.text(&path, l).trim()
                ));
            }
        }
    }
}

/// The analyses of a core of build `mode`: (report name, precision kind,
/// extra options). A plain core is analysed with the variables' values
/// and its stack residue (the default), with values only
/// (`--no-residue`), and with neither.
fn core_reports(mode: &str) -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    match mode {
        "func" => vec![("core, func flags", "func flags", &[])],
        "bb" => vec![("core, bb flags", "bb flags", &[])],
        O2 => vec![
            ("core, O2", "O2 core", &[]),
            (
                "core, O2, no values",
                "O2 core, no values",
                &["--no-values"],
            ),
        ],
        _ => vec![
            ("core, plain", "plain core, residue", &[]),
            ("core, plain, no residue", "plain core", &["--no-residue"]),
            (
                "core, plain, no values",
                "plain core, no values",
                &["--no-values", "--no-residue"],
            ),
        ],
    }
}

/// Builds `p`, crashes it at its crash points (the first `limit`), checks
/// every label and returns the figures.
fn run(p: &Program, limit: Option<usize>, cores: bool) -> Figures {
    let start = Instant::now();
    let crates = crate_dirs();
    let b = build(p, &crates);
    let points = points(p, &b, limit);
    let mut fig = Figures {
        quick: limit.is_some(),
        solvers: if limit.is_some() {
            &SOLVERS[..4]
        } else {
            &SOLVERS
        },
        ..Figures::default()
    };
    let mut src = Sources(HashMap::new());
    let mut modes: Vec<&'static str> = Vec::new();
    if cores && p.sancov {
        modes.extend(SANCOV_MODES);
    }
    if cores && p.o2 {
        modes.push(O2);
    }
    let sancov: Vec<SancovBuild> = modes.iter().map(|m| sancov_build(p, &b, m)).collect();
    let mut crashes = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let mut c = crash(
            p,
            &b,
            point,
            // (a C++ linkage name is too long for a file name)
            &b.dir.join(format!(
                "runs/{i:02}-{}",
                point.func.get(..60).unwrap_or(&point.func)
            )),
        );
        // A multi-threaded program's cores (other runs) only where every
        // other thread waits, in this run and in a second one (module doc).
        let mut quiet = true;
        if p.threads && !sancov.is_empty() {
            let again = again(p, &b, point, &c.dir, &c.truth);
            quiet = others_wait(&c.dir) && others_wait(&c.dir.join("again"));
            c.core_truth = Some(again);
            if !quiet {
                fig.busy_points += 1;
            }
        }
        for sb in sancov.iter().filter(|_| quiet) {
            if !crash_core(p, &b, sb, point, &mut c) {
                fig.busy_cores += 1;
            }
        }
        fig.runs += 1;
        if !c.cores.is_empty() {
            fig.core_runs += 1;
        }
        let before = fig.unsound.len();
        check_crash(p, &b, point, &c, &mut fig, &mut src);
        referee(p, &b, point, &c, &mut fig, before);
        if let Some(run) = c.cores.iter().find(|r| r.mode == "plain") {
            check_local(p, &b, point, &c, run, &mut fig, &mut src);
        }
        suggestions::check_point(p, &b, i, point, &c, &mut fig, &mut src);
        eprintln!(
            "{}: crash point {point}: {} frames, {} unsound so far",
            p.name,
            c.frames.len(),
            fig.unsound.len()
        );
        crashes.push((point.clone(), c));
    }
    suggestions::check_group(p, &b, &crashes, &mut fig, &mut src);
    fig.seconds = start.elapsed().as_secs_f64();
    if fig.local_all > 0 {
        eprintln!(
            "{}: Local labels from plain cores: {} of {} lines of the stack's functions decided ({:.1}%), {} checked against each activation's run, {} unsound, {} crash points not checked (too many line hits)",
            p.name,
            fig.local_decided,
            fig.local_all,
            100.0 * fig.local_decided as f64 / fig.local_all as f64,
            fig.local_checked,
            fig.local_unsound.len(),
            fig.local_skipped
        );
    }
    if fig.busy_points + fig.busy_cores > 0 {
        eprintln!(
            "{}: {} crash points not analysed from cores and {} cores left out (another thread was running program code); {} lines of core analyses not checked (two runs disagree)",
            p.name, fig.busy_points, fig.busy_cores, fig.scheduling
        );
    }
    if !fig.refereed.is_empty() {
        eprintln!(
            "{}: labels that llvm-cov contradicts and gdb confirms:\n{}",
            p.name,
            describe(&fig.refereed)
        );
    }
    eprintln!("{}", table(&[(p.name, &fig)]));
    eprintln!("{}", suggestions::table(&[(p.name, &fig)]));
    if !fig.precision.is_empty() {
        eprintln!("{}", precision_table(&[(p.name, &fig)]));
    }
    fig
}

/// The share of lines decided (Yes + No of all lines with a node, summed
/// over the crash points analysed from cores) with the gdb backtrace
/// alone, and from the cores of the `func` and `bb` sancov builds, per
/// program and solver, as a Markdown table.
fn precision_table(results: &[(&str, &Figures)]) -> String {
    let mut out = String::from(
        "| program | solver | crash points | backtrace only | plain core, no values | plain core, values | plain core, values + residue | core, func flags | core, bb flags | -O2 core, no values | -O2 core, values |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, f) in results {
        if f.precision.is_empty() {
            continue;
        }
        for solver in SOLVERS {
            let share = |kind: &str| {
                f.precision
                    .get(&(kind, solver))
                    .map(|(d, all)| format!("{:.1}%", 100.0 * *d as f64 / (*all).max(1) as f64))
                    .unwrap_or_default()
            };
            writeln!(
                out,
                "| {name} | {solver} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f.core_runs,
                share("backtrace"),
                share("plain core, no values"),
                share("plain core"),
                share("plain core, residue"),
                share("func flags"),
                share("bb flags"),
                share("O2 core, no values"),
                share("O2 core")
            )
            .unwrap();
        }
    }
    out
}

/// Settles the unsound labels that the analyses of crash point `point`
/// got (`fig.unsound[from..]`) by running the binary again (the sancov
/// build for a core analysis, the coverage build for the others) under
/// gdb with a breakpoint on every instruction of each disputed line (of
/// every line-table row of it, not only the rows' starts: a C++ landing
/// pad jumps into the middle of a row), to the crash point: a line hit
/// before the crash ran, a line not hit did not. llvm-cov miscounts some lines (clang-14 gives a loop body that is
/// a single macro the loop condition's count, the code after a `do ...
/// while` left by `break` or after a block closed by `}` the count 0, and
/// the rest of a function left by `longjmp` the count of a full run). A label gdb confirms is moved to `fig.refereed`;
/// one it contradicts, or a line without a line-table address, stays.
fn referee(p: &Program, b: &Built, point: &Point, c: &Crash, fig: &mut Figures, from: usize) {
    // (which reports, the binary that ran them, a tag): each core with its
    // sancov build; the backtrace and log reports with the coverage build.
    let mut groups: Vec<(Vec<&str>, PathBuf, &str)> = c
        .cores
        .iter()
        .map(|run| {
            let reports = core_reports(run.mode).iter().map(|r| r.0).collect();
            (reports, run.bin.clone(), run.mode)
        })
        .collect();
    groups.push((
        vec![
            "gdb backtrace",
            "sanitizer backtrace",
            "gdb backtrace + log",
        ],
        b.bin.clone(),
        "cov",
    ));
    for (reports, bin, tag) in &groups {
        let lines: BTreeSet<(String, u64)> = fig.unsound[from..]
            .iter()
            .filter(|u| reports.contains(&u.report))
            .map(|u| (u.file.clone(), u.line))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let lines: Vec<(String, u64)> = lines.into_iter().collect();
        let verdict = gdb_hits(p, b, point, c, bin, &lines, tag);
        let mut keep = Vec::new();
        for u in fig.unsound.drain(from..) {
            let v = verdict.get(&(u.file.clone(), u.line));
            let settled = reports.contains(&u.report)
                && matches!((u.label, v), ("Yes", Some(true)) | ("No", Some(false)));
            if settled {
                fig.refereed.push(u);
            } else {
                keep.push(u);
            }
        }
        fig.unsound.extend(keep);
    }
}

/// Which of `lines` (file, line) ran before the crash at `point`, by gdb:
/// `bin` run with the workload to the crash point with a breakpoint on
/// every instruction of each line ([`referee`]): true if one was hit,
/// false if none was; lines without a line-table address are left out.
/// `tag` names the script in the crash's folder.
fn gdb_hits(
    p: &Program,
    b: &Built,
    point: &Point,
    c: &Crash,
    bin: &Path,
    lines: &[(String, u64)],
    tag: &str,
) -> HashMap<(String, u64), bool> {
    let args: Vec<String> = p.workloads[point.workload]
        .args
        .iter()
        .map(|a| format!("'{}'", expand(a, b)))
        .collect();
    let targets: Vec<String> = lines.iter().map(|(f, l)| format!("({f:?}, {l})")).collect();
    let script = format!(
        r#"import gdb
targets = [{targets}]
gdb.execute("set breakpoint pending off")
gdb.execute("starti {args} > /dev/null", to_string=True)
arch = gdb.selected_frame().architecture()
keys_at = {{}}
bps_of = {{}}
placed = set()
for key, (path, line) in enumerate(targets):
    try:
        sals = gdb.decode_line("%s:%d" % (path, line))[1] or []
    except gdb.error:
        continue
    for sal in sals:
        table = sal.symtab.linetable()
        starts = sorted(set(e.pc for e in table))
        for e in table.line(line) or []:
            # Every instruction of the row, not only its start: a C++
            # landing pad can jump into the middle of a row.
            later = [pc for pc in starts if pc > e.pc]
            end = later[0] if later else e.pc + 1
            for insn in arch.disassemble(e.pc, end - 1):
                pc = insn["addr"]
                if key in keys_at.get(pc, []):
                    continue
                if pc not in keys_at:
                    bps_of.setdefault(key, []).append(gdb.Breakpoint("*%#x" % pc, internal=True))
                keys_at.setdefault(pc, []).append(key)
                placed.add(key)
# A breakpoint serves every key at its pc; it goes when all of them are hit.
owner = {{}}
for key, bs in bps_of.items():
    for b in bs:
        owner[b.location] = b
main = gdb.Breakpoint({func:?})
main.ignore_count = {ignore}
hit = set()
while gdb.selected_inferior().pid != 0:
    gdb.execute("continue", to_string=True)
    if gdb.selected_inferior().pid == 0:
        break
    pc = gdb.selected_frame().pc()
    if pc in keys_at:
        for key in keys_at[pc]:
            hit.add(key)
        done = [a for a, ks in keys_at.items() if all(k in hit for k in ks)]
        for a in done:
            del keys_at[a]
            b = owner.pop("*%#x" % a, None)
            if b is not None:
                b.delete()
        continue
    break
for key in range(len(targets)):
    print("LINE %d %s %s" % (key, "placed" if key in placed else "none", "hit" if key in hit else "not-hit"))
gdb.execute("kill", to_string=True)
"#,
        targets = targets.join(", "),
        args = args.join(" ").replace('"', "\\\""),
        func = point.func,
        ignore = point.hit - 1,
    );
    let path = c.dir.join(format!("referee-{tag}.py"));
    std::fs::write(&path, script).unwrap();
    let o = Command::new("gdb")
        .current_dir(&c.dir)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-x", path.to_str().unwrap()])
        .arg(bin)
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let out = String::from_utf8_lossy(&o.stdout);
    let mut verdict: HashMap<(String, u64), bool> = HashMap::new();
    for l in out.lines() {
        let mut w = l.split_whitespace();
        if let (Some("LINE"), Some(k), Some("placed"), Some(h)) =
            (w.next(), w.next(), w.next(), w.next())
        {
            if let Ok(k) = k.parse::<usize>() {
                verdict.insert(lines[k].clone(), h == "hit");
            }
        }
    }
    verdict
}

/// The figures of `results` as a Markdown table.
fn table(results: &[(&str, &Figures)]) -> String {
    let mut out = String::from(
        "| program | crash points | analyses (warned) | lines checked | unsound (distinct lines) | llvm-cov wrong, gdb agrees (distinct lines) | decided utl | decided fsa | decided cs | decided best | time |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, f) in results {
        let share = |s: &str| {
            f.decided
                .get(s)
                .map(|(d, all)| format!("{:.1}%", 100.0 * *d as f64 / (*all).max(1) as f64))
                .unwrap_or_default()
        };
        let distinct: BTreeSet<(&str, u64)> = f
            .unsound
            .iter()
            .map(|u| (u.file.as_str(), u.line))
            .collect();
        writeln!(
            out,
            "| {name} | {} | {} ({}) | {} ({} Yes, {} No confirmed; {} unknown, of which {} macro lines, {} continued, {} scheduling; {} `}}` lines left out) | {} ({}) | {} ({}) | {} | {} | {} | {} | {:.0} s |",
            f.runs,
            f.analyses,
            f.warned,
            f.checked,
            f.yes_confirmed,
            f.no_confirmed,
            f.unknown,
            f.macros,
            f.continued,
            f.scheduling,
            f.braces,
            f.unsound.len(),
            distinct.len(),
            f.refereed.len(),
            f.refereed
                .iter()
                .map(|u| (u.file.as_str(), u.line))
                .collect::<BTreeSet<_>>()
                .len(),
            share("utl"),
            share("fsa"),
            share("cs"),
            share("best"),
            f.seconds
        )
        .unwrap();
    }
    out
}

/// Fails with every unsound label of `results`.
fn assert_sound(results: &[(&str, &Figures)]) {
    let mut msg = String::new();
    for (name, f) in results {
        if !f.unsound.is_empty() {
            write!(msg, "{name}:\n{}", describe(&f.unsound)).unwrap();
        }
        for u in &f.local_unsound {
            writeln!(msg, "{name}: Local: {u}").unwrap();
        }
    }
    assert!(
        msg.is_empty(),
        "unsound labels (a Yes line that did not run, a No line that ran):\n{msg}"
    );
}

fn check_programs(programs: &[&Program], limit: Option<usize>, cores: bool) {
    let figures: Vec<Figures> = programs.iter().map(|p| run(p, limit, cores)).collect();
    let results: Vec<(&str, &Figures)> = programs.iter().map(|p| p.name).zip(&figures).collect();
    if programs.len() > 1 || std::env::var("REALPROGS").is_ok() {
        eprintln!("{}", table(&results));
        eprintln!("{}", precision_table(&results));
        eprintln!("{}", suggestions::table(&results));
    }
    if cores && programs.iter().any(|p| p.sancov) {
        assert!(
            results.iter().any(|(_, f)| f.core_runs > 0),
            "no crash point was analysed from a core"
        );
    }
    for ((name, f), p) in results.iter().zip(programs) {
        let values_decide = p.values_decide;
        assert!(
            f.yes_confirmed > 0 && f.no_confirmed > 0,
            "nothing learned and confirmed"
        );
        // The stack counts: with backtraces alone the context-sensitive
        // solver decides strictly more lines than the others.
        let share = |s: &str| {
            f.decided
                .get(s)
                .map_or(0.0, |(d, all)| *d as f64 / (*all).max(1) as f64)
        };
        assert!(
            share("cs") > share("fsa")
                && share("fsa") >= share("utl")
                && share("best") >= share("cs"),
            "{name}: decided utl {:.3}, fsa {:.3}, cs {:.3}, best {:.3}",
            share("utl"),
            share("fsa"),
            share("cs"),
            share("best")
        );
        // Variables' values from a plain core: never fewer lines decided
        // than without them, and more with the default solver.
        if f.precision.keys().any(|k| k.0 == "plain core") {
            for solver in f.solvers {
                let get = |kind: &str| f.precision.get(&(kind, *solver)).map_or(0, |p| p.0);
                let (with, without) = (get("plain core"), get("plain core, no values"));
                assert!(
                    with >= without,
                    "{name}, {solver}: {with} lines decided with values, {without} without"
                );
                // Residue is staged on top of the values: never fewer.
                let residue = get("plain core, residue");
                assert!(
                    residue >= with,
                    "{name}, {solver}: {residue} lines decided with residue, {with} without"
                );
                if *solver == "best" && values_decide {
                    assert!(
                        with > without,
                        "{name}: the values decide nothing ({with} lines)"
                    );
                }
            }
        }
    }
    assert_sound(&results);
    suggestions::assert_held(&results);
}

/// CI: Lua at its first four pinned points (after caught errors: fails
/// until `longjmp` is modelled, issue 8 item 1; and a deep recursion of
/// its parser).
#[test]
fn lua_labels_match_the_run_after_caught_errors() {
    check_programs(&[&LUA], Some(4), false);
}

/// CI: bzip2 at its two pinned points (compressing and decompressing),
/// also from cores of its `func` and `bb` SanitizerCoverage builds.
#[test]
fn bzip2_labels_match_the_run_also_from_cores() {
    check_programs(&[&BZIP2], Some(2), true);
}

/// CI: nlohmann/json (C++) at its first two pinned points, after caught
/// exceptions (landing pads reached through `__cxa_throw`).
#[test]
fn json_labels_match_the_run_after_caught_exceptions() {
    check_programs(&[&JSON], Some(2), false);
}

/// Every program at every crash point; run by `scripts/real-programs.sh`,
/// which prints the figures.
#[test]
#[ignore = "the whole harness: several minutes; run scripts/real-programs.sh"]
fn all_real_programs_label_soundly() {
    // Every crash point's suggestions, with every solver, and groups.
    suggestions::ALL.store(true, std::sync::atomic::Ordering::Relaxed);
    // REALPROGS=lz4,sqlite: only those programs.
    let only = std::env::var("REALPROGS").unwrap_or_default();
    let programs: Vec<&Program> = PROGRAMS
        .iter()
        .copied()
        .filter(|p| only.is_empty() || only.split(',').any(|n| n == p.name))
        .collect();
    // REALPROGS_POINTS=N: only the first N crash points of each (the CI
    // mode: coverage-build cores without values).
    let limit = std::env::var("REALPROGS_POINTS")
        .ok()
        .and_then(|n| n.parse().ok());
    check_programs(&programs, limit, true);
}

/// CI: zstd (multi-threaded, `ZSTD_MULTITHREAD`) at its first two pinned
/// points, from backtraces: in the main thread after the workers ran, and
/// in a worker thread (its stack starts at the thread routine). Its cores
/// (a 3-thread process: coverage flags as `ran_somewhere`) take minutes
/// on the shared machine: `REALPROGS=zstd REALPROGS_POINTS=2
/// scripts/real-programs.sh` runs them.
#[test]
fn zstd_labels_match_the_run_with_threads() {
    check_programs(&[&ZSTD], Some(2), false);
}

/// Options added to every analysis of the figures (`REALPROGS_ARGS`,
/// split at spaces): to check an option that is off by default
/// (`--correlations`) against the same truth.
fn extra_args() -> Vec<String> {
    std::env::var("REALPROGS_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}
