//! Stack residue from a plain `-O0 -g` core (issue 20): a function that
//! returned before the crash left its return address on the stack, and
//! the line it ran becomes Yes only with residue, sound against the run
//! (the program is deterministic: which lines ran is known from its
//! argument). Then each guard of `formats::residue` on stack memory made
//! by hand around the same binary's real after-call addresses, and random
//! stack contents that must never panic.

mod common;

use common::{require, sh, show};
use postmortem_formats::image::native::Binary;
use postmortem_formats::image::residue::{scan_stack, Callee, Sites};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("residue-{tag}"))
}

const SRC: &str = "residue.c";
/// The same calls after a second thread started (it waits in `pause`).
const THREADED: &str = "residue_threads.c";

fn source_of(src: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/residue")
            .join(src),
    )
    .unwrap()
}

/// The 1-based line of `src` holding `marker`.
fn line_in(src: &str, marker: &str) -> u64 {
    source_of(src)
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker}")) as u64
        + 1
}

fn line_of(marker: &str) -> u64 {
    line_in(SRC, marker)
}

/// Builds `src` into `dir` (IR and a binary from that IR).
fn build_src(dir: &Path, src: &str) {
    std::fs::write(dir.join(src), source_of(src)).unwrap();
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", src, "-o", "prog.bc"],
    );
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", "-pthread", "prog.bc", "-o", "prog"],
    );
}

fn build(dir: &Path) {
    build_src(dir, SRC)
}

/// Runs the program under gdb with `arg` until it crashes and writes the
/// core `core`.
fn crash(dir: &Path, arg: &str, core: &str) {
    let o = Command::new("gdb")
        .current_dir(dir)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            &format!("run {arg} > /dev/null"),
            "-ex",
            &format!("generate-core-file {core}"),
            "./prog",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(dir.join(core).exists(), "no core: {}", show(&o));
}

fn analyze(dir: &Path, core: &str, extra: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args([
            "analyze", "--cfg", "prog.bc", "--core", core, "--binary", "prog", "--format", "json",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn lines(v: &Value, l: &str) -> Vec<u64> {
    lines_of(v, SRC, l)
}

fn lines_of(v: &Value, src: &str, l: &str) -> Vec<u64> {
    let files = v["lines"].as_object().unwrap();
    let (_, f) = files.iter().find(|(k, _)| k.ends_with(src)).unwrap();
    f[l].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn residue_of_a_returned_call_decides_its_lines_soundly() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("e2e");
    build(&dir);
    let twice = [line_of("twice body"), line_of("call twice")];
    let next = [line_of("next body"), line_of("call next")];
    for (arg, ran, not_ran) in [("1", twice, next), ("2", next, twice)] {
        let core = format!("core{arg}");
        crash(&dir, arg, &core);
        // Residue alone (values off: `k`'s branch tests decide the branch
        // too, checked below).
        let with = analyze(&dir, &core, &["--no-values"]);
        let without = analyze(&dir, &core, &["--no-values", "--no-residue"]);
        let values = analyze(&dir, &core, &["--no-residue"]);
        for l in ran {
            assert!(
                lines(&values, "yes").contains(&l),
                "arg {arg}: line {l} ran but is not Yes from k's tests: {}",
                values["values"]
            );
        }
        for l in not_ran {
            assert!(
                lines(&values, "no").contains(&l),
                "arg {arg}: line {l} did not run but is not No from k's tests: {}",
                values["values"]
            );
        }
        // Without residue the stack says nothing of the branch.
        for l in ran.iter().chain(&not_ran) {
            assert!(
                lines(&without, "maybe").contains(l),
                "arg {arg}: line {l} decided without residue: {without}"
            );
        }
        // With it, the call that returned ran and the other did not.
        for l in ran {
            assert!(
                lines(&with, "yes").contains(&l),
                "arg {arg}: line {l} ran but is not Yes: {}",
                with["residue"]
            );
        }
        for l in not_ran {
            assert!(
                lines(&with, "no").contains(&l),
                "arg {arg}: line {l} did not run but is not No: {}",
                with["residue"]
            );
        }
        // Sound for every line (main's lines before the branch ran).
        let yes = lines(&with, "yes");
        for l in not_ran {
            assert!(!yes.contains(&l));
        }
        for l in lines(&with, "no") {
            assert!(!ran.contains(&l), "arg {arg}: line {l} ran but is No");
        }
        let r = &with["residue"];
        assert!(r["matched"].as_u64().unwrap() >= 1, "{r}");
        let used: Vec<&Value> = r["sites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["unused"].is_null())
            .collect();
        assert!(
            used.iter()
                .any(|s| s["callee"] == if arg == "1" { "twice" } else { "next" }),
            "{r}"
        );
        assert!(without["residue"].is_null());
        // Marked (the default) or recovered with the rest of the report
        // (`--full-evidence`): the same lines decided here, the marks
        // without a recovery of their own.
        let full = analyze(&dir, &core, &["--no-values", "--full-evidence"]);
        for l in ["yes", "no"] {
            assert_eq!(lines(&full, l), lines(&with, l), "arg {arg}: {l}");
        }
        let stat = |v: &Value, k: &str| v["solver_stats"][k].as_u64();
        assert_eq!(stat(&with, "residue_marked"), Some(1), "arg {arg}");
        assert_eq!(stat(&full, "residue_marked"), None, "arg {arg}");
        prepared_reads_as_fresh(&dir, &core);
    }
}

/// What `analyze` reads of the binary and core while the graph loads
/// (`failure::prepare`) gives the same report, residue, values and
/// messages as reading it all after the graph (`failure::assemble`).
fn prepared_reads_as_fresh(dir: &Path, core: &str) {
    use postmortem_formats::failure::{
        assemble, assemble_prepared, prepare, FailureFiles, FailureOptions,
    };
    sh(
        dir,
        env!("CARGO_BIN_EXE_postmortem"),
        &["cfg", "build", "prog.bc", "-o", "prog.pmcfg"],
    );
    let bytes = std::fs::read(dir.join("prog.pmcfg")).unwrap();
    let loaded = postmortem_formats::frontend::decode_loaded(&bytes).unwrap();
    let (bin, core, cfg) = (dir.join("prog"), dir.join(core), dir.join("prog.pmcfg"));
    let files = FailureFiles {
        cfg: Some(&cfg),
        core: Some(&core),
        binary: Some(&bin),
        ..FailureFiles::default()
    };
    let opts = FailureOptions::default();
    let pre = prepare(&files, &opts);
    assert!(pre.has_line_tables() && pre.has_residue());
    let (g, flags, vars) = (&loaded.icfg, loaded.sancov.as_ref(), loaded.vars.as_ref());
    let fresh = assemble(g, flags, vars, &files, &opts).unwrap();
    let prepared = assemble_prepared(g, flags, vars, &files, &opts, pre).unwrap();
    assert!(fresh.residue.is_some() && !fresh.values.is_empty());
    assert_eq!(format!("{fresh:?}"), format!("{prepared:?}"));
}

/// A core with two threads: the crashing thread's stack may have been a
/// finished thread's, so its residue says only that a call ran in some
/// thread. The call that returned is Yes (with the lines before it in
/// `main`), nothing is No because of it (the other call stays Maybe: no
/// path is constrained), and the JSON says so. The other thread's stack
/// is read too: its last call (`pause`, pending, or one before it, if
/// the core caught it earlier) is Yes, and with it its first line.
#[test]
fn residue_of_a_threaded_core_says_only_that_the_call_ran_somewhere() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("threads");
    build_src(&dir, THREADED);
    let line = |m: &str| line_in(THREADED, m);
    for (arg, ran, not_ran) in [
        ("1", line("call twice"), line("call next")),
        ("2", line("call next"), line("call twice")),
    ] {
        let core = format!("core{arg}");
        crash(&dir, arg, &core);
        let with = analyze(&dir, &core, &["--no-values"]);
        let without = analyze(&dir, &core, &["--no-values", "--no-residue"]);
        let r = &with["residue"];
        assert_eq!(r["some_thread"], true, "{r}");
        assert!(
            lines_of(&without, THREADED, "maybe").contains(&ran),
            "arg {arg}: line {ran} decided without residue: {without}"
        );
        assert!(
            lines_of(&with, THREADED, "yes").contains(&ran),
            "arg {arg}: line {ran} ran but is not Yes: {r}"
        );
        assert!(
            lines_of(&with, THREADED, "maybe").contains(&not_ran),
            "arg {arg}: line {not_ran} decided by residue of some thread: {r}"
        );
        let locks = line("worker locks");
        assert!(
            lines_of(&without, THREADED, "maybe").contains(&locks),
            "arg {arg}: line {locks} decided without residue: {without}"
        );
        assert!(
            lines_of(&with, THREADED, "yes").contains(&locks),
            "arg {arg}: the other thread's first line ({locks}) is not Yes: {r}"
        );
        // Sound: what is No did not run, the line that did not run is
        // not Yes.
        assert!(!lines_of(&with, THREADED, "no").contains(&ran));
        assert!(!lines_of(&with, THREADED, "yes").contains(&not_ran));
        assert!(
            r["sites"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["unused"].is_null()
                    && s["callee"] == if arg == "1" { "twice" } else { "next" }),
            "{r}"
        );
    }
}

/// A stack image at `LO` built word by word.
const LO: u64 = 0x7ffd_0000_0000;
const BASE: u64 = 0x5555_5555_4000;

struct Stack(Vec<u64>);

impl Stack {
    fn new(words: usize) -> Stack {
        Stack(vec![0; words])
    }
    fn addr(&self, i: usize) -> u64 {
        LO + 8 * i as u64
    }
    fn bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
    /// A return address at word `i` with a saved frame pointer below it.
    fn call(&mut self, i: usize, after: u64) {
        self.0[i] = BASE + after;
        self.0[i - 1] = self.addr(i + 10);
    }
}

fn used(st: &Stack, sites: &Sites, restorers: &HashSet<u64>) -> Vec<u64> {
    let s = scan_stack(LO, &st.bytes(), BASE, sites, restorers);
    assert!(s.off.is_none(), "{:?}", s.off);
    s.hits.iter().map(|h| h.after).collect()
}

/// The usable after-call address of the call of the program's `name`.
fn site_of(sites: &Sites, name: &str) -> u64 {
    sites
        .addresses()
        .into_iter()
        .find(|&a| sites.callee(a) == Some(&Callee::Program(name.into())))
        .unwrap_or_else(|| panic!("no call of {name}"))
}

/// The residue test program built in a scratch directory `tag`, its
/// binary and usable sites.
fn built_sites(tag: &str) -> (PathBuf, Binary, Sites) {
    let dir = scratch(tag);
    build(&dir);
    let bin = Binary::read(&dir.join("prog")).unwrap();
    let sites = Sites::of(&bin);
    assert!(sites.off.is_none(), "{:?}", sites.off);
    (dir, bin, sites)
}

#[test]
fn each_guard_keeps_a_word_out() {
    require("clang-14");
    let (_, bin, sites) = built_sites("guards");
    let addrs = sites.addresses();
    let (twice, next) = (site_of(&sites, "twice"), site_of(&sites, "next"));
    let atoi = *addrs
        .iter()
        .find(|&&a| sites.callee(a) == Some(&Callee::Library("atoi".into())))
        .expect("a call of atoi through the PLT");
    // A call of a function that never returns: its next address is out.
    let abort = sites
        .excluded_at
        .iter()
        .find(|(_, why)| why.contains("never returns"))
        .expect("the call of abort is excluded")
        .0;
    assert!(!addrs.contains(&abort));
    let none = HashSet::new();

    // A well-shaped word is used (the control for every guard below).
    let mut st = Stack::new(4096);
    st.call(100, twice);
    assert_eq!(used(&st, &sites, &none), vec![twice]);

    // Noreturn: the word after `call abort`, with the shape, is not used.
    let mut st = Stack::new(4096);
    st.call(100, abort);
    assert!(used(&st, &sites, &none).is_empty());

    // A function start (the address of `twice` itself) is never an
    // after-call address.
    let start = bin.func_named("twice").unwrap().addr;
    assert!(!addrs.contains(&start));
    let mut st = Stack::new(4096);
    st.call(100, start);
    assert!(used(&st, &sites, &none).is_empty());

    // No saved frame pointer below a direct call of a function with the
    // prologue: not used (0, a pointer below it, outside the stack).
    for fp in [0, LO + 8 * 50, 0x1234_5678] {
        let mut st = Stack::new(4096);
        st.0[100] = BASE + next;
        st.0[99] = fp;
        assert!(used(&st, &sites, &none).is_empty(), "fp {fp:#x}");
    }

    // Inside a signal frame: the restorer word below it marks the frame.
    let restorer = 0x7f00_1234_5678u64;
    let restorers: HashSet<u64> = [restorer].into();
    let mut st = Stack::new(8192);
    st.0[200] = restorer;
    st.call(200 + 22, twice); // the saved rip's place in the frame
    st.call(200 + 1000, next); // still within 16 KiB
    st.call(200 + 2100, atoi); // above the skipped area
    assert_eq!(used(&st, &sites, &restorers), vec![atoi]);
    // The same without the restorer word: all used.
    let mut all = used(&st, &sites, &none);
    all.sort_unstable();
    let mut want = vec![twice, next, atoi];
    want.sort_unstable();
    assert_eq!(all, want);

    // A stale signal frame whose restorer word is gone: the saved rip is
    // followed by eflags and the code selector 0x33.
    let mut st = Stack::new(4096);
    st.call(100, twice);
    st.0[101] = 0x246;
    st.0[102] = 0x002b_0000_0000_0033;
    assert!(used(&st, &sites, &none).is_empty());
}

/// Guard 4 from the binary's side: an after-call address that is also a
/// word of its data (aligned, or at a 4-byte step of a packed table) is
/// never usable, since the word may be a taken address. Written into a
/// copy of the binary's largest data section; the other sites stay.
#[test]
fn an_after_call_address_in_data_is_not_usable() {
    use object::{Object, ObjectSection, SectionKind};
    require("clang-14");
    let (dir, bin, sites) = built_sites("taken");
    let addrs = sites.addresses();
    let (twice, next) = (site_of(&sites, "twice"), site_of(&sites, "next"));
    let mut bytes = bin.data().to_vec();
    let (off, size) = {
        let file = object::File::parse(&*bytes).unwrap();
        file.sections()
            .filter(|s| matches!(s.kind(), SectionKind::Data | SectionKind::ReadOnlyData))
            .filter_map(|s| s.file_range())
            .max_by_key(|&(_, size)| size)
            .expect("a data section")
    };
    assert!(size >= 32, "{size} bytes of data");
    let off = off as usize;
    // At a 4-byte step (off + 4) and at an aligned word (off + 16).
    bytes[off + 4..off + 12].copy_from_slice(&twice.to_le_bytes());
    bytes[off + 16..off + 24].copy_from_slice(&next.to_le_bytes());
    let patched = Binary::from_bytes(bytes, &dir.join("prog")).unwrap();
    let after = Sites::of(&patched);
    let left = after.addresses();
    for a in [twice, next] {
        assert!(!left.contains(&a), "{a:#x} still usable");
        assert!(
            after
                .excluded_at
                .iter()
                .any(|&(x, why)| x == a && why.contains("also data")),
            "{a:#x}: {:?}",
            after.excluded_at
        );
    }
    let mut rest: Vec<u64> = addrs
        .into_iter()
        .filter(|a| ![twice, next].contains(a))
        .collect();
    rest.sort_unstable();
    assert_eq!(left, rest);
}

#[test]
fn random_stack_contents_never_panic() {
    require("clang-14");
    let dir = scratch("fuzz");
    build(&dir);
    let bin = Binary::read(&dir.join("prog")).unwrap();
    let sites = Sites::of(&bin);
    let addrs = sites.addresses();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let restorers: HashSet<u64> = [BASE + 0x1000].into();
    for round in 0..300 {
        let len = (rnd() % 5000) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rnd() as u8).collect();
        // Sprinkle real after-call addresses, restorer words and selectors.
        for _ in 0..(rnd() % 40) {
            if len < 8 {
                break;
            }
            let at = (rnd() as usize) % (len - 7);
            let w = match rnd() % 4 {
                0 => restorers.iter().next().copied().unwrap(),
                1 => 0x33,
                _ => BASE + addrs[(rnd() as usize) % addrs.len()],
            };
            bytes[at..at + 8].copy_from_slice(&w.to_le_bytes());
        }
        // Any start, aligned or not, even at the top of the address space.
        let lo = match round % 3 {
            0 => LO + rnd() % 8,
            1 => u64::MAX - (rnd() % 10_000),
            _ => rnd(),
        };
        let s = scan_stack(lo, &bytes, BASE, &sites, &restorers);
        assert!(s.hits.len() <= s.matched && s.matched <= s.words);
        for h in &s.hits {
            assert!(addrs.contains(&h.after));
        }
    }
}
