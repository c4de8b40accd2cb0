//! `analyze --minidump` on minidumps written by a real writer, the
//! `minidump-writer` crate (Rust's port of Breakpad's Linux writer),
//! dumping a crashed child: the test runs the program under ptrace, stops
//! it at its fatal signal (the registers are those of the faulting
//! instruction), hands it stopped to the writer with the crash context
//! (signal, registers) a crash handler would send, and kills it.
//!
//! The same crash (the programs are deterministic) is also written as an
//! ELF core by gdb's `generate-core-file`, and the labels of both are
//! compared: equal when the dump holds the memory the core analysis
//! reads (the writer's "app memory": the flag array, the data sections),
//! and never more decided than the core's when it holds only the stacks
//! (minidump-writer's default). Then the bad dumps: truncated, of another
//! binary (build ids differ), without an exception stream, an ELF core
//! given to `--minidump`: one error line each, exit code 2.
//!
//! Needs clang-14 and gdb (fails, never skips, without them).

mod common;

use common::{require, sh, show};
use minidump_writer::app_memory::AppMemory;
use minidump_writer::minidump_writer::MinidumpWriterConfig;
use object::{Object, ObjectSection};
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn data(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
        .join(name)
}

/// Writes an ELF core of `bin ARGS`'s crash with gdb.
fn gdb_core(dir: &Path, bin: &str, args: &str, core: &str) {
    let o = Command::new("gdb")
        .current_dir(dir)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            &format!("run {args} > /dev/null"),
            "-ex",
            &format!("generate-core-file {core}"),
        ])
        .arg(bin)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(dir.join(core).exists(), "no core: {}", show(&o));
}

/// Runs `bin ARGS` in `dir` under ptrace until its fatal signal, then has
/// minidump-writer dump it into `out`, adding the memory of the binary's
/// `sections` (the "app memory" a crash handler registers). The signal
/// is returned.
fn write_minidump(dir: &Path, bin: &str, args: &[&str], out: &str, sections: &[&str]) -> i32 {
    write_minidump_at(dir, bin, args, out, sections, None)
}

/// [`write_minidump`], or, with `stop_at`, at the first call of that
/// function instead of a fatal signal (an `int3` at its entry; the dump's
/// signal is then SIGTRAP and the pc the function's entry).
fn write_minidump_at(
    dir: &Path,
    bin: &str,
    args: &[&str],
    out: &str,
    sections: &[&str],
    stop_at: Option<&str>,
) -> i32 {
    let mut cmd = Command::new(dir.join(bin));
    cmd.current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only an async-signal-safe system call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // No address randomisation, as under gdb: pointer values in
            // the dump and the core are then the same.
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let path = std::fs::canonicalize(dir.join(bin)).unwrap();
    let file = std::fs::read(&path).unwrap();
    let elf = object::File::parse(&*file).unwrap();
    let load_base = || {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        if elf.kind() == object::ObjectKind::Dynamic {
            maps.lines()
                .find(|l| l.ends_with(path.to_str().unwrap()))
                .map(|l| u64::from_str_radix(l.split('-').next().unwrap(), 16).unwrap())
                .expect("the binary's mapping")
        } else {
            0
        }
    };
    // (address, original word) of the breakpoint.
    let mut brk: Option<(u64, i64)> = None;
    let (sig, siginfo, regs) = loop {
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFSTOPPED(status),
            "{bin} {args:?} ended without crashing (status {status:#x})"
        );
        let sig = libc::WSTOPSIG(status);
        if let (libc::SIGTRAP, Some((at, word))) = (sig, brk) {
            let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
            let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
            unsafe {
                assert_eq!(libc::ptrace(libc::PTRACE_GETREGS, pid, 0, &mut regs), 0);
                assert_eq!(regs.rip, at + 1, "the breakpoint");
                regs.rip = at;
                assert_eq!(libc::ptrace(libc::PTRACE_SETREGS, pid, 0, &regs), 0);
                assert_eq!(libc::ptrace(libc::PTRACE_POKETEXT, pid, at, word), 0);
                // In a sancov build, step past the store of the function's
                // entry flag (a crash before it is an impossible report:
                // see the README).
                if let Some(flag) = entry_flag(&elf, at - load_base()) {
                    let flag = load_base() + flag;
                    for _ in 0..200 {
                        let w = libc::ptrace(libc::PTRACE_PEEKDATA, pid, flag, 0);
                        if w & 0xff != 0 {
                            break;
                        }
                        assert_eq!(libc::ptrace(libc::PTRACE_SINGLESTEP, pid, 0, 0), 0);
                        let mut st = 0;
                        assert_eq!(libc::waitpid(pid, &mut st, 0), pid);
                    }
                    assert_eq!(libc::ptrace(libc::PTRACE_GETREGS, pid, 0, &mut regs), 0);
                }
                assert_eq!(libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0, &mut si), 0);
                assert_eq!(libc::ptrace(libc::PTRACE_DETACH, pid, 0, libc::SIGSTOP), 0);
            }
            break (sig, si, regs);
        }
        if let (libc::SIGTRAP, Some(f), None) = (sig, stop_at, brk) {
            // The exec stop: the binary is mapped; plant the int3.
            use object::ObjectSymbol;
            let sym = elf
                .symbols()
                .find(|s| s.name() == Ok(f))
                .unwrap_or_else(|| panic!("no {f} in {bin}"));
            let at = load_base() + sym.address();
            unsafe {
                *libc::__errno_location() = 0;
                let word = libc::ptrace(libc::PTRACE_PEEKTEXT, pid, at, 0);
                assert_eq!(*libc::__errno_location(), 0);
                let int3 = (word & !0xff) | 0xcc;
                assert_eq!(libc::ptrace(libc::PTRACE_POKETEXT, pid, at, int3), 0);
                brk = Some((at, word));
            }
            assert_eq!(unsafe { libc::ptrace(libc::PTRACE_CONT, pid, 0, 0) }, 0);
            continue;
        }
        if [
            libc::SIGSEGV,
            libc::SIGABRT,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
        ]
        .contains(&sig)
        {
            let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
            unsafe {
                assert_eq!(libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0, &mut si), 0);
                assert_eq!(libc::ptrace(libc::PTRACE_GETREGS, pid, 0, &mut regs), 0);
                // Leave it stopped at the fault for the writer, which
                // attaches on its own.
                assert_eq!(libc::ptrace(libc::PTRACE_DETACH, pid, 0, libc::SIGSTOP), 0);
            }
            break (sig, si, regs);
        }
        // The exec stop (SIGTRAP), or a signal the program handles.
        let pass = if sig == libc::SIGTRAP { 0 } else { sig };
        assert_eq!(unsafe { libc::ptrace(libc::PTRACE_CONT, pid, 0, pass) }, 0);
    };
    // The app memory: the sections at the load base (from /proc/PID/maps).
    let base = load_base();
    let app: Vec<AppMemory> = sections
        .iter()
        .map(|s| {
            let sec = elf
                .section_by_name(s)
                .unwrap_or_else(|| panic!("no {s} in {bin}"));
            AppMemory {
                ptr: (base + sec.address()) as usize,
                length: sec.size() as usize,
            }
        })
        .collect();
    // The crash context a handler would send: signal and registers.
    let mut ctx: minidump_writer::crash_context::CrashContext = unsafe { std::mem::zeroed() };
    {
        let g = &mut ctx.context.uc_mcontext.gregs;
        let r = &regs;
        for (i, v) in [
            (libc::REG_R8, r.r8),
            (libc::REG_R9, r.r9),
            (libc::REG_R10, r.r10),
            (libc::REG_R11, r.r11),
            (libc::REG_R12, r.r12),
            (libc::REG_R13, r.r13),
            (libc::REG_R14, r.r14),
            (libc::REG_R15, r.r15),
            (libc::REG_RDI, r.rdi),
            (libc::REG_RSI, r.rsi),
            (libc::REG_RBP, r.rbp),
            (libc::REG_RBX, r.rbx),
            (libc::REG_RDX, r.rdx),
            (libc::REG_RAX, r.rax),
            (libc::REG_RCX, r.rcx),
            (libc::REG_RSP, r.rsp),
            (libc::REG_RIP, r.rip),
            (libc::REG_EFL, r.eflags),
        ] {
            g[i as usize] = v as i64;
        }
    }
    ctx.siginfo.ssi_signo = sig as u32;
    ctx.siginfo.ssi_code = siginfo.si_code;
    ctx.siginfo.ssi_addr = unsafe { siginfo.si_addr() } as u64;
    ctx.pid = pid;
    ctx.tid = pid;
    let mut f = std::fs::File::create(dir.join(out)).unwrap();
    let mut w = MinidumpWriterConfig::new(pid, pid);
    w.set_crash_context(minidump_writer::CrashContextExt { inner: ctx })
        .set_app_memory(app);
    let written = w.write(&mut f);
    // Stopped, so kill(), and reap it.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = child.wait();
    written.unwrap_or_else(|e| panic!("minidump-writer: {e}"));
    sig
}

/// The address of the entry flag of the function at `addr` (file
/// addresses), from the pc table, in a sancov build.
fn entry_flag(elf: &object::File<'_>, addr: u64) -> Option<u64> {
    let pcs = elf.section_by_name("__sancov_pcs")?;
    let bools = elf.section_by_name("__sancov_bools")?;
    let data = pcs.data().ok()?;
    let i = data
        .chunks_exact(16)
        .position(|c| u64::from_le_bytes(c[..8].try_into().unwrap()) == addr)?;
    Some(bools.address() + i as u64)
}

/// Builds everything once: `crash.c` as `crash-bb`, `crash-func`
/// (sancov builds, each with its `.bc`), `values.c` as `values` (plain
/// `-O0 -g`); per crash a gdb core and minidumps with and without app
/// memory.
fn setup() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        for t in ["clang-14", "gdb"] {
            require(t);
        }
        let dir = common::scratch("minidump");
        for f in ["crash.c", "sancov_stub.c"] {
            std::fs::copy(data("sancov", f), dir.join(f)).unwrap();
        }
        std::fs::copy(data("values", "values.c"), dir.join("values.c")).unwrap();
        for mode in ["bb", "func"] {
            let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
            let bc = format!("crash-{mode}.bc");
            sh(
                &dir,
                "clang-14",
                &["-g", "-O0", &cov, "-emit-llvm", "-c", "crash.c", "-o", &bc],
            );
            let exe = format!("crash-{mode}");
            sh(
                &dir,
                "clang-14",
                &["-g", "-O0", &bc, "sancov_stub.c", "-o", &exe],
            );
        }
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-emit-llvm",
                "-c",
                "values.c",
                "-o",
                "values.bc",
            ],
        );
        sh(
            &dir,
            "clang-14",
            &["-g", "-O0", "values.bc", "-o", "values"],
        );
        let data_sections: &[&str] = &[".data", ".bss"];
        let flags: &[&str] = &["__sancov_bools", ".data", ".bss"];
        let crashes: &[(&str, &str, &str, &[&str])] = &[
            ("crash-bb", "segv 5", "bb-segv", flags),
            ("crash-bb", "abort 20", "bb-abort", flags),
            ("crash-func", "segv 3", "func-segv", flags),
            ("values", "2", "values", data_sections),
        ];
        for &(bin, args, tag, sections) in crashes {
            gdb_core(&dir, &format!("./{bin}"), args, &format!("{tag}.core"));
            let argv: Vec<&str> = args.split(' ').collect();
            write_minidump(&dir, bin, &argv, &format!("{tag}.dmp"), sections);
            write_minidump(&dir, bin, &argv, &format!("{tag}-stacks.dmp"), &[]);
        }
        dir
    })
}

/// `postmortem analyze --format json` in the test directory.
fn analyze(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(setup())
        .arg("analyze")
        .args(args)
        // Every value staged: dump and core labels are compared.
        .args(["--format", "json", "--value-budget", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> (Value, String) {
    let o = analyze(args);
    assert!(o.status.success(), "{args:?}: {}", show(&o));
    (
        serde_json::from_slice(&o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn nodes(v: &Value, l: &str) -> BTreeSet<String> {
    v["nodes"][l]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.to_string())
        .collect()
}

/// The labels of a core analysis and a minidump analysis of one crash.
fn both(tag: &str, bin: &str, dump: &str, extra: &[&str]) -> ((Value, String), (Value, String)) {
    let cfg = format!("{bin}.bc");
    let core = format!("{tag}.core");
    let mut a = vec!["--cfg", &cfg, "--binary", bin, "--core", &core];
    a.extend(extra);
    let c = ok(&a);
    let mut a = vec!["--cfg", &cfg, "--binary", bin, "--minidump", dump];
    a.extend(extra);
    (c, ok(&a))
}

fn assert_same(tag: &str, core: &Value, dump: &Value) {
    for l in ["yes", "no", "maybe"] {
        assert_eq!(
            nodes(core, l),
            nodes(dump, l),
            "{tag}: {l} nodes differ between the core and the minidump"
        );
    }
}

/// A dump decides no more than the core, and agrees where it decides.
fn assert_weaker(tag: &str, core: &Value, dump: &Value) {
    for l in ["yes", "no"] {
        let (c, d) = (nodes(core, l), nodes(dump, l));
        assert!(
            d.is_subset(&c),
            "{tag}: {l} nodes of the minidump not {l} from the core: {:?}",
            d.difference(&c).collect::<Vec<_>>()
        );
    }
}

#[test]
fn minidumps_with_the_flags_label_as_the_core() {
    for (tag, bin) in [
        ("bb-segv", "crash-bb"),
        ("bb-abort", "crash-bb"),
        ("func-segv", "crash-func"),
    ] {
        let dump = format!("{tag}.dmp");
        let ((core, _), (md, err)) = both(tag, bin, &dump, &[]);
        assert!(err.contains("minidump, crashing thread"), "{tag}: {err}");
        assert!(err.contains("coverage flags set"), "{tag}: {err}");
        assert!(!err.contains("crash stack is not used"), "{tag}: {err}");
        assert_same(tag, &core, &md);
        assert!(!nodes(&md, "yes").is_empty() && !nodes(&md, "no").is_empty());
        // Given to --core, a minidump is told by its magic.
        let cfg = format!("{bin}.bc");
        let (as_core, _) = ok(&["--cfg", &cfg, "--binary", bin, "--core", &dump]);
        assert_same(tag, &md, &as_core);
    }
}

#[test]
fn minidumps_of_stacks_only_use_the_stack_and_say_the_flags_are_missing() {
    for (tag, bin) in [("bb-segv", "crash-bb"), ("func-segv", "crash-func")] {
        let dump = format!("{tag}-stacks.dmp");
        let ((core, _), (md, err)) = both(tag, bin, &dump, &[]);
        assert!(
            err.contains("does not hold the coverage flags' memory"),
            "{tag}: {err}"
        );
        assert!(!err.contains("crash stack is not used"), "{tag}: {err}");
        assert_weaker(tag, &core, &md);
        // Without values and residue, exactly the core's stack-only
        // labels: the stack is the same.
        let cfg = format!("{bin}.bc");
        let core_file = format!("{tag}.core");
        let (stack, _) = ok(&[
            "--cfg",
            &cfg,
            "--binary",
            bin,
            "--core",
            &core_file,
            "--stack-only",
            "--no-values",
        ]);
        let (md, _) = ok(&[
            "--cfg",
            &cfg,
            "--binary",
            bin,
            "--minidump",
            &dump,
            "--no-values",
            "--no-residue",
        ]);
        assert_same(tag, &stack, &md);
    }
}

#[test]
fn minidump_values_match_the_core_where_the_dump_holds_them() {
    // With the data sections: every value the core gives.
    let ((core, _), (md, err)) = both("values", "values", "values.dmp", &[]);
    assert!(err.contains("variable values read"), "{err}");
    assert_same("values", &core, &md);
    // The same uses; the same values where they are evidence (a pointer
    // into the stack, `argv`, moves with the environment, which gdb sets).
    let strip = |v: &Value| -> Vec<Value> {
        v["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                let mut u = u.clone();
                if u["constraint"].is_null() {
                    u.as_object_mut().unwrap().remove("value");
                }
                u
            })
            .collect()
    };
    assert_eq!(strip(&core), strip(&md));
    assert!(!md["values"].as_array().unwrap().is_empty());
    // Stacks only: the locals, not the globals; never more decided.
    let ((core, _), (md, _)) = both("values", "values", "values-stacks.dmp", &[]);
    assert_weaker("values-stacks", &core, &md);
    let places: Vec<&str> = md["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["place"].as_str().unwrap())
        .collect();
    assert!(places.iter().all(|p| *p != "global"), "{places:?}");
    assert!(places.iter().any(|p| p.contains("handle")), "{places:?}");
}

/// A threaded program (`residue/residue_threads.c`: a worker waits in
/// `pause` while `main` crashes): the dump's other thread's stack is read
/// for residue like the core's, so the worker's last call (`pause`, or one
/// before it if the crash came first) and its first line are Yes ("ran in
/// some thread") from the minidump as from the core.
#[test]
fn minidump_residue_reads_every_threads_stack() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = common::scratch("minidump-threads");
    let src = "residue_threads.c";
    std::fs::copy(data("residue", src), dir.join(src)).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", src, "-o", "prog.bc"],
    );
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-pthread", "prog.bc", "-o", "prog"],
    );
    gdb_core(&dir, "./prog", "1", "prog.core");
    write_minidump(&dir, "prog", &["1"], "prog.dmp", &[]);
    let locks = std::fs::read_to_string(dir.join(src))
        .unwrap()
        .lines()
        .position(|l| l.contains("worker locks"))
        .expect("the marker") as u64
        + 1;
    let run = |input: &str, file: &str, extra: &[&str]| -> Value {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .current_dir(&dir)
            .args([
                "analyze", "--cfg", "prog.bc", "--binary", "prog", input, file,
            ])
            .args(["--format", "json", "--no-values"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{input} {file}: {}", show(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let yes = |v: &Value| -> bool {
        let files = v["lines"].as_object().unwrap();
        let (_, f) = files.iter().find(|(k, _)| k.ends_with(src)).unwrap();
        f["yes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_u64() == Some(locks))
    };
    for (input, file) in [("--core", "prog.core"), ("--minidump", "prog.dmp")] {
        let with = run(input, file, &[]);
        assert_eq!(
            with["residue"]["some_thread"], true,
            "{file}: {}",
            with["residue"]
        );
        assert!(
            yes(&with),
            "{file}: the other thread's first line ({locks}) is not Yes: {}",
            with["residue"]
        );
        assert!(!yes(&run(input, file, &["--no-residue"])), "{file}");
    }
}

fn bad(args: &[&str], what: &str) {
    let o = analyze(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("postmortem: warning") && !l.starts_with("postmortem: note"))
        .collect();
    assert_eq!(errors.len(), 1, "{args:?}: {err}");
    assert!(errors[0].contains(what), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_minidumps_are_one_error_line() {
    let dir = setup();
    let dump = std::fs::read(dir.join("bb-segv.dmp")).unwrap();
    for (name, len) in [("trunc-half.dmp", dump.len() / 2), ("trunc-head.dmp", 20)] {
        std::fs::write(dir.join(name), &dump[..len]).unwrap();
        bad(
            &[
                "--cfg",
                "crash-bb.bc",
                "--binary",
                "crash-bb",
                "--minidump",
                name,
            ],
            name,
        );
    }
    // No exception stream: its directory entry made an unused stream (0).
    let mut noexc = dump.clone();
    let count = u32::from_le_bytes(noexc[8..12].try_into().unwrap()) as usize;
    let dir_at = u32::from_le_bytes(noexc[12..16].try_into().unwrap()) as usize;
    let mut found = false;
    for i in 0..count {
        let e = dir_at + 12 * i;
        if u32::from_le_bytes(noexc[e..e + 4].try_into().unwrap()) == 6 {
            noexc[e..e + 4].copy_from_slice(&0u32.to_le_bytes());
            found = true;
        }
    }
    assert!(found, "the writer's dump has an exception stream");
    std::fs::write(dir.join("noexc.dmp"), &noexc).unwrap();
    bad(
        &[
            "--cfg",
            "crash-bb.bc",
            "--binary",
            "crash-bb",
            "--minidump",
            "noexc.dmp",
        ],
        "no exception stream",
    );
    // Another binary's dump: the build ids differ.
    bad(
        &[
            "--cfg",
            "crash-bb.bc",
            "--binary",
            "crash-bb",
            "--minidump",
            "func-segv.dmp",
        ],
        "build id",
    );
    // An ELF core is not a minidump.
    bad(
        &[
            "--cfg",
            "crash-bb.bc",
            "--binary",
            "crash-bb",
            "--minidump",
            "bb-segv.core",
        ],
        "not a minidump",
    );
}

/// Fuzz-style: truncations and mutations of a real dump (bytes flipped,
/// header and directory words set to boundary values) are read, checked
/// against the binary, unwound and searched for flags without a panic,
/// and the unbroken dump is not refused. Fixed seed, so a failure
/// reproduces.
#[test]
fn mutated_minidumps_never_panic() {
    use postmortem_formats::image::native::{load_base, read_flags, unwind, Binary, Core};
    let dir = setup();
    let dump = std::fs::read(dir.join("bb-segv.dmp")).unwrap();
    let bin = Binary::read(&dir.join("crash-bb")).unwrap();
    let name = Path::new("mutated.dmp");
    let core = Core::from_bytes(dump.clone(), name).unwrap();
    let base = load_base(&core, &bin).unwrap();
    assert!(unwind(&core, &bin, base).is_ok());
    assert!(read_flags(&core, &bin).is_ok());
    let mut rng = postmortem_testkit::rng::Rng::new(22);
    let dir_at = u32::from_le_bytes(dump[12..16].try_into().unwrap()) as usize;
    let (mut parsed, mut unwound) = (0, 0);
    for _ in 0..3000 {
        let mut d = dump.clone();
        match rng.below(4) {
            0 => d.truncate(rng.below(dump.len())),
            1 => {
                for _ in 0..1 + rng.below(16) {
                    let i = rng.below(d.len());
                    d[i] = rng.next_u64() as u8;
                }
            }
            _ => {
                // A word of the header or the stream directory, or of
                // the streams' own headers (the first pages).
                let limit = if rng.chance(50) {
                    dir_at + 12 * 18
                } else {
                    8192
                };
                let i = 4 * rng.below(limit.min(d.len()) / 4);
                let v: u32 = match rng.below(4) {
                    0 => 0,
                    1 => u32::MAX,
                    2 => d.len() as u32,
                    _ => rng.next_u64() as u32,
                };
                d[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        let Ok(core) = Core::from_bytes(d, name) else {
            continue;
        };
        parsed += 1;
        if let Ok(base) = load_base(&core, &bin) {
            if unwind(&core, &bin, base).is_ok() {
                unwound += 1;
            }
            let _ = read_flags(&core, &bin);
        }
    }
    eprintln!("3000 mutated dumps: {parsed} parsed, {unwound} unwound");
    assert!(parsed > 0 && unwound > 0);
}

/// Not a test: writes a minidump of a program of your own, stopped at the
/// first call of a function, for measurements (README: the SQLite
/// figure). `MINIDUMP_DIR`, `MINIDUMP_BIN` (in that directory),
/// `MINIDUMP_ARGS` (space-separated), `MINIDUMP_STOP_AT` (a function),
/// `MINIDUMP_OUT`, `MINIDUMP_SECTIONS` (comma-separated, e.g.
/// `__sancov_bools,.data,.bss`). Run with `cargo test -p postmortem
/// --test minidump -- --ignored write_minidump_from_env`.
#[test]
#[ignore]
fn write_minidump_from_env() {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("set {k}"));
    let dir = PathBuf::from(var("MINIDUMP_DIR"));
    let args = var("MINIDUMP_ARGS");
    let argv: Vec<&str> = args.split_whitespace().collect();
    let sections = var("MINIDUMP_SECTIONS");
    let sections: Vec<&str> = sections.split(',').filter(|s| !s.is_empty()).collect();
    let stop = var("MINIDUMP_STOP_AT");
    write_minidump_at(
        &dir,
        &var("MINIDUMP_BIN"),
        &argv,
        &var("MINIDUMP_OUT"),
        &sections,
        Some(&stop),
    );
}
