//! Variables' values from a plain `-O0 -g` core as evidence (issue 20):
//! constant stores to a local, a global, a static flag, a loop index, a
//! pointer set to NULL or not; a variable whose address escapes is not
//! used; a local overwritten behind the program's back (gdb writes it, as
//! a wild write would) is dropped with a note (a local may also be uninitialised) and the labels stay
//! sound; a global a thread writes is dropped. Truth: the programs are
//! deterministic, so which lines ran is known from their input.

mod common;

use common::{require, sh, show};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("values-{tag}"))
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/values")
        .join(name)
}

/// Builds `src` into `dir` (IR and a binary from that IR), runs it under
/// gdb with `args` until it crashes, runs `extra` gdb commands, and
/// writes a core `core`.
fn crash(dir: &Path, src: &str, args: &str, core: &str, extra: &[&str], libs: &[&str]) {
    std::fs::copy(data(src), dir.join(src)).unwrap();
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", src, "-o", "prog.bc"],
    );
    let mut link = vec!["-g", "-O0", "prog.bc", "-o", "prog"];
    link.extend(libs);
    sh(dir, "clang-14", &link);
    let mut cmd = Command::new("gdb");
    cmd.current_dir(dir).args([
        "-nx",
        "-batch",
        "-iex",
        "set debuginfod enabled off",
        "-ex",
        &format!("run {args} > /dev/null"),
    ]);
    for e in extra {
        cmd.args(["-ex", e]);
    }
    cmd.args(["-ex", &format!("generate-core-file {core}")]);
    let o = cmd.arg("./prog").stdin(Stdio::null()).output().unwrap();
    assert!(dir.join(core).exists(), "no core: {}", show(&o));
}

/// `analyze --format json` with `extra` options; (JSON, stderr).
fn analyze(dir: &Path, core: &str, extra: &[&str]) -> (Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args([
            "analyze", "--cfg", "prog.bc", "--core", core, "--binary", "prog", "--format", "json",
        ])
        // Every value staged, whatever the machine's load (see
        // `--value-budget`): the tests compare what values decide.
        .args(["--value-budget", "0"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    (
        serde_json::from_slice(&o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The lines of `file` with label `l` ("yes", "no", "maybe").
fn lines(v: &Value, file: &str, l: &str) -> Vec<u64> {
    let files = v["lines"].as_object().unwrap();
    let (_, f) = files
        .iter()
        .find(|(k, _)| k.ends_with(file))
        .unwrap_or_else(|| panic!("no {file} in {files:?}"));
    f[l].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn value_use<'a>(v: &'a Value, name: &str, place: &str) -> &'a Value {
    v["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == name && u["place"].as_str().unwrap().contains(place))
        .unwrap_or_else(|| panic!("no value of {name} in {place}: {}", v["values"]))
}

/// Checks labels against the lines that ran and did not run.
fn assert_sound(v: &Value, file: &str, ran: &[u64], not_ran: &[u64], what: &str) {
    for l in lines(v, file, "no") {
        assert!(!ran.contains(&l), "{what}: line {l} ran but is No");
    }
    for l in lines(v, file, "yes") {
        assert!(
            !not_ran.contains(&l),
            "{what}: line {l} did not run but is Yes"
        );
    }
}

#[test]
fn values_decide_what_the_stack_alone_leaves_open() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("plain");
    // kind 2: status = 30 (line 22), the loop runs twice, init and
    // mode = 3 do not run, p stays NULL.
    crash(&dir, "values.c", "2", "core2", &[], &[]);
    let ran = [
        15, 17, 18, 19, 21, 22, 24, 25, 27, 29, 30, 32, 36, 37, 39, 40,
    ];
    let not_ran = [10, 11, 12, 20, 28, 31, 38];
    for solver in ["utl", "fsa", "cs", "best"] {
        let (with, _) = analyze(&dir, "core2", &["--solver", solver]);
        let (without, _) = analyze(&dir, "core2", &["--solver", solver, "--no-values"]);
        assert_sound(&with, "values.c", &ran, &not_ran, solver);
        assert_sound(&without, "values.c", &ran, &not_ran, solver);
        assert!(without["values"].as_array().unwrap().is_empty());
        if solver == "utl" {
            continue; // UTL weakens the values (listed), see below
        }
        let decided =
            |v: &Value| lines(v, "values.c", "yes").len() + lines(v, "values.c", "no").len();
        assert!(
            decided(&with) > decided(&without),
            "{solver}: values decide nothing more"
        );
        // status = 30 is the last store: `status = 20` did not run, `status
        // = 30` did; `initialized` is still 0: init did not run; mode is
        // still 7: `mode = 3` did not run; p is NULL: `p = &counter` did
        // not run.
        let no = lines(&with, "values.c", "no");
        for l in [11, 20, 28, 31] {
            assert!(no.contains(&l), "{solver}: line {l} not No: {no:?}");
        }
        assert!(lines(&with, "values.c", "yes").contains(&22), "{solver}");
    }
    let (v, _) = analyze(&dir, "core2", &[]);
    assert_eq!(value_use(&v, "status", "handle")["value"], 30);
    assert!(value_use(&v, "status", "handle")["constraint"].is_number());
    // Address escapes (memset(&escaped), p = &counter): never read.
    for u in v["values"].as_array().unwrap() {
        assert!(u["name"] != "escaped" && u["name"] != "counter", "{u}");
    }
    let (utl, _) = analyze(&dir, "core2", &["--solver", "utl"]);
    assert!(
        utl["weakened"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["constraint"].as_str().unwrap().starts_with("value[")),
        "utl lists the values it weakened"
    );
}

#[test]
fn a_value_no_store_can_leave_is_dropped_and_labels_stay_sound() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("wild");
    // kind 1 ran `status = 20`; then memory is changed behind the
    // program's back (as a buffer overflow would): status = 99.
    crash(
        &dir,
        "values.c",
        "1",
        "core1",
        &["frame 0", "set var status = 99"],
        &[],
    );
    let ran = [15, 17, 18, 19, 20, 24, 25, 27, 29, 30, 32, 36, 37, 39, 40];
    let not_ran = [10, 11, 12, 22, 28, 31, 38];
    for solver in ["utl", "fsa", "cs", "best"] {
        let (v, err) = analyze(&dir, "core1", &["--solver", solver]);
        assert_sound(&v, "values.c", &ran, &not_ran, solver);
        let u = value_use(&v, "status", "handle");
        assert!(u["constraint"].is_null(), "{u}");
        assert!(u["unused"].as_str().unwrap().contains("wild write"), "{u}");
        assert!(err.contains("wild write"), "{err}");
    }
}

#[test]
fn a_global_another_thread_writes_is_not_used() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("threads");
    crash(&dir, "threads.c", "", "core", &[], &["-lpthread"]);
    let (v, _) = analyze(&dir, "core", &["--solver", "fsa"]);
    // `shared` is 5, left by the thread: as evidence about the main
    // thread's path it would say `shared = 1` never ran.
    assert_eq!(value_use(&v, "shared", "global")["value"], 5);
    let weakened = v["weakened"].as_array().unwrap();
    assert!(
        weakened
            .iter()
            .any(|w| w["how"].as_str().unwrap().contains("shared")
                && w["how"].as_str().unwrap().contains("another thread")),
        "{weakened:?}"
    );
    assert!(
        lines(&v, "threads.c", "yes").contains(&16),
        "shared = 1 ran"
    );
    // `mine` is 1, which only main writes: `mine = 2` did not run.
    assert!(lines(&v, "threads.c", "no").contains(&20));
}

/// The line of `fields.c` that contains `text`.
fn fields_line(text: &str) -> u64 {
    let src = std::fs::read_to_string(data("fields.c")).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no `{text}` in fields.c")) as u64
        + 1
}

#[test]
fn fields_of_local_structs_and_global_arrays_are_values() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("fields");
    // kind 2: `s.mode = 30` is the last store to s.mode; `table[3] = 7`
    // does not run; the crash is at `*s.ptr` (NULL).
    crash(&dir, "fields.c", "2", "core", &[], &[]);
    let no_line = |t: &str| fields_line(t);
    let not_ran = [no_line("s.mode = 20;"), no_line("table[3] = 7;")];
    let ran: Vec<u64> = [
        "static void fill",
        "b->a = 1;",
        "s.tag = 'x';",
        "s.count = 5;",
        "s.mode = 10;",
        "s.ptr = 0;",
        "if (kind == 1)",
        "s.mode = 30;",
        "if (kind > 5)",
        "table[5] = 9;",
        "bx.b = 2;",
        "fill(&bx);",
        "return *s.ptr",
        "return run(kind);",
    ]
    .iter()
    .map(|t| fields_line(t))
    .collect();
    for solver in ["utl", "fsa", "cs", "best"] {
        let (with, _) = analyze(&dir, "core", &["--solver", solver]);
        let (without, _) = analyze(&dir, "core", &["--solver", solver, "--no-values"]);
        assert_sound(&with, "fields.c", &ran, &not_ran, solver);
        assert_sound(&without, "fields.c", &ran, &not_ran, solver);
        if solver == "utl" {
            continue; // UTL keeps a value only with a single good store
        }
        // s.mode is 30 (the field at byte 16, after a char and a long):
        // `s.mode = 20` was overwritten or never ran: No, which the stack
        // alone does not say; table[3] is still 0: its store never ran.
        let no = lines(&with, "fields.c", "no");
        for l in not_ran {
            assert!(no.contains(&l), "{solver}: line {l} not No: {no:?}");
            assert!(
                !lines(&without, "fields.c", "no").contains(&l),
                "{solver}: line {l} is No without the values"
            );
        }
        assert!(lines(&with, "fields.c", "yes").contains(&fields_line("s.mode = 30;")));
    }
    let (v, _) = analyze(&dir, "core", &[]);
    // Each field is read at its own offset.
    for (name, value) in [("s.0", 120), ("s.1", 5), ("s.2", 30), ("s.3", 0)] {
        assert_eq!(value_use(&v, name, "run")["value"], value, "{name}");
    }
    assert!(value_use(&v, "s.2", "run")["constraint"].is_number());
    assert_eq!(value_use(&v, "table[3]", "global")["value"], 0);
    assert_eq!(value_use(&v, "table[5]", "global")["value"], 9);
    // `bx` is passed by pointer to fill: none of its fields is read.
    for u in v["values"].as_array().unwrap() {
        assert!(!u["name"].as_str().unwrap().starts_with("bx"), "{u}");
    }
}

/// The frames of `v` for function `func`, outermost first.
fn frames_of<'a>(v: &'a Value, func: &str) -> Vec<&'a Value> {
    v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["function"] == func)
        .collect()
}

fn frame_lines(f: &Value, l: &str) -> Vec<u64> {
    f["lines"][l]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn local_labels_answer_per_activation() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    // The crash frame of values.c: its own locals' values decide its
    // lines (status = 30 ran in it, status = 20 did not, the loop ran).
    let dir = scratch("local");
    crash(&dir, "values.c", "2", "core2", &[], &[]);
    let (v, _) = analyze(&dir, "core2", &[]);
    let handle = frames_of(&v, "handle");
    assert_eq!(handle.len(), 1, "{}", v["frames"]);
    let (yes, no) = (frame_lines(handle[0], "yes"), frame_lines(handle[0], "no"));
    for l in [15, 22, 24, 25, 29] {
        assert!(yes.contains(&l), "line {l} not Local Yes: {yes:?}");
    }
    for l in [20, 28, 31] {
        assert!(no.contains(&l), "line {l} not Local No: {no:?}");
    }
    // Without values, only what the graph and the stack say.
    let (nv, _) = analyze(&dir, "core2", &["--no-values"]);
    let yes_nv = frame_lines(frames_of(&nv, "handle")[0], "yes");
    assert!(!yes_nv.contains(&22), "{yes_nv:?}");

    // Recursion: depth(3) -> depth(2) -> depth(1) -> depth(0) crashes.
    // Four activations of one function, each with its own labels: the
    // crash frame ran `int *p = 0;` (line 6), the others did not (they
    // are at their recursive call, line 11); globally line 6 is Yes.
    let dir = scratch("recurse");
    crash(&dir, "recurse.c", "", "core", &[], &[]);
    let (v, _) = analyze(&dir, "core", &[]);
    let acts = frames_of(&v, "depth");
    assert_eq!(acts.len(), 4, "{}", v["frames"]);
    let crash_frame = acts.last().unwrap();
    assert!(frame_lines(crash_frame, "yes").contains(&6));
    for a in &acts[..3] {
        assert!(frame_lines(a, "no").contains(&6), "{a}");
        assert!(frame_lines(a, "yes").contains(&11), "{a}");
    }
    assert!(lines(&v, "recurse.c", "yes").contains(&6));
    assert!(frame_lines(crash_frame, "no").contains(&11));
}

/// The line of `recurse_values.c` that contains `text`.
fn recurse_line(text: &str) -> u64 {
    let src = std::fs::read_to_string(data("recurse_values.c")).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no `{text}` in recurse_values.c")) as u64
        + 1
}

#[test]
fn a_recursive_functions_locals_decide_each_frame_apart() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    // main -> walk(3) -> walk(2) -> walk(1) -> walk(0), which crashes.
    // `mode` is 1 in the odd activations and 2 in the even ones: each
    // frame's own value says which branch ran in it, though walk
    // recurses (the value constrains that frame alone).
    let dir = scratch("recurse-values");
    crash(&dir, "recurse_values.c", "", "core", &[], &[]);
    let (odd, even) = (recurse_line("mode = 1;"), recurse_line("mode = 2;"));
    let (v, _) = analyze(&dir, "core", &[]);
    let acts = frames_of(&v, "walk");
    assert_eq!(acts.len(), 4, "{}", v["frames"]);
    for (k, a) in acts.iter().enumerate() {
        // Outermost first: walk(3), walk(2), walk(1), walk(0).
        let (ran, not) = if k % 2 == 0 { (odd, even) } else { (even, odd) };
        assert!(frame_lines(a, "yes").contains(&ran), "frame {k}: {a}");
        assert!(frame_lines(a, "no").contains(&not), "frame {k}: {a}");
    }
    let uses: Vec<&Value> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["name"] == "mode")
        .collect();
    assert_eq!(uses.len(), 4, "{uses:?}");
    for u in &uses {
        assert!(u["frame"].is_number() && u["constraint"].is_null(), "{u}");
    }
    // Without values the frames cannot tell the branches apart.
    let (nv, _) = analyze(&dir, "core", &["--no-values"]);
    for a in frames_of(&nv, "walk") {
        for l in [odd, even] {
            assert!(
                !frame_lines(a, "yes").contains(&l) && !frame_lines(a, "no").contains(&l),
                "{a}"
            );
        }
    }
}

#[test]
fn local_yes_is_lifted_to_global_yes() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    // Only the frames' values prove that an even activation of walk ran
    // `note_even(n)`; fed back as "ran", the call makes note_even's body
    // Yes globally (no frame of note_even is on the stack), and both
    // branches of walk too.
    let dir = scratch("lift");
    crash(&dir, "recurse_values.c", "", "core", &[], &[]);
    let body = recurse_line("int k = n * 3;");
    let branches = [recurse_line("mode = 1;"), recurse_line("mode = 2;")];
    let ran: Vec<u64> = [
        "static int note_even",
        "int k = n * 3;",
        "return k;",
        "int mode = 0;",
        "mode = 2;",
        "note_even(n);",
        "mode = 1;",
        "return walk(n - 1) + mode;",
        "return walk(argc + 2);",
    ]
    .iter()
    .map(|t| recurse_line(t))
    .collect();
    for solver in ["utl", "fsa", "cs", "best"] {
        // The residue of the call of note_even (its return address is
        // still on the stack) would prove it too: left out.
        let (with, _) = analyze(&dir, "core", &["--solver", solver, "--no-residue"]);
        let (without, _) = analyze(
            &dir,
            "core",
            &["--solver", solver, "--no-residue", "--no-values"],
        );
        assert_sound(&with, "recurse_values.c", &ran, &[], solver);
        assert_sound(&without, "recurse_values.c", &ran, &[], solver);
        let yes = lines(&with, "recurse_values.c", "yes");
        for l in branches.iter().chain([&body]) {
            assert!(yes.contains(l), "{solver}: line {l} not Yes: {yes:?}");
            assert!(
                !lines(&without, "recurse_values.c", "yes").contains(l),
                "{solver}: line {l} is Yes without the values"
            );
        }
        let lift = &with["lift"];
        assert!(lift["dropped"].is_null(), "{solver}: {lift}");
        assert!(lift["gained"].as_u64().unwrap() > 0, "{solver}: {lift}");
        let fed: Vec<u64> = lift["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| n["lines"].as_array().unwrap().iter())
            .map(|l| l.as_u64().unwrap())
            .collect();
        assert!(!fed.contains(&body), "{solver}: the body is not in a frame");
    }
}

/// The line of `file` (in the data directory) that contains `text`.
fn src_line(file: &str, text: &str) -> u64 {
    let src = std::fs::read_to_string(data(file)).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no `{text}` in {file}")) as u64
        + 1
}

/// Branch tests on the final value (`tests.c`, run with 3): computed
/// values that every store can have left decide through the branches
/// that test them: `rc = compute(x); if (rc)`, `p = find(x); if (p ==
/// NULL)`, a `switch` on a computed local, a loop left by its `break`
/// (the final `n` passed the loop's test), a global flag tested in
/// another function. Not used: a test followed by a store (`t`), and
/// nothing unsound from the test on the crash line.
#[test]
fn branch_tests_decide_with_computed_values() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("tests");
    crash(&dir, "tests.c", "3", "core", &[], &[]);
    let l = |text: &str| src_line("tests.c", text);
    // What ran with x = 3: rc = 3, p = "found", op = 3, n = 5, 3, 1 (the
    // break), flag = 1, t = 107 then 5, z = 7 (the crash).
    let ran = [
        l("\"rc nonzero"),
        l("\"op other"),
        l("\"early"),
        l("n = step(n)"),
        l("\"flag set"),
        l("\"big"),
        l("t = 5;"),
        l("if (z == 7)"),
    ];
    let not_ran = [
        l("\"rc zero"),
        l("\"not found"),
        l("\"op zero"),
        l("\"op one"),
        l("\"flag clear"),
    ];
    for solver in ["fsa", "cs", "best"] {
        let (with, _) = analyze(&dir, "core", &["--solver", solver]);
        let (without, _) = analyze(&dir, "core", &["--solver", solver, "--no-values"]);
        assert_sound(&with, "tests.c", &ran, &not_ran, solver);
        assert_sound(&without, "tests.c", &ran, &not_ran, solver);
        let (yes, no) = (
            lines(&with, "tests.c", "yes"),
            lines(&with, "tests.c", "no"),
        );
        for line in not_ran {
            assert!(no.contains(&line), "{solver}: line {line} not No: {no:?}");
            assert!(
                !lines(&without, "tests.c", "no").contains(&line),
                "{solver}: line {line} No without values: the test shows nothing"
            );
        }
        for line in [
            l("\"rc nonzero"),
            l("\"op other"),
            l("\"early"),
            l("\"flag set"),
        ] {
            assert!(
                yes.contains(&line),
                "{solver}: line {line} not Yes: {yes:?}"
            );
        }
        // `t > 100` saw 107, not the final 5: `big` must not be No.
        assert!(!no.contains(&l("\"big")), "{solver}");
    }
    let (v, _) = analyze(&dir, "core", &[]);
    let tests = |name: &str, place: &str| -> Vec<String> {
        let u = value_use(&v, name, place);
        u["tests"]
            .as_array()
            .map(|a| a.iter().map(|t| t.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let rc = tests("rc", "main");
    assert!(
        rc.iter().any(|t| t.starts_with(&format!(
            "tests.c:{} goes to line {}",
            l("if (rc)"),
            l("\"rc nonzero")
        ))),
        "{rc:?}"
    );
    assert!(value_use(&v, "rc", "main")["constraint"].is_number());
    assert!(value_use(&v, "flag", "global")["constraint"].is_number());
    // The crash line's own test (`z == 7`, in the crash's block) is left
    // out when its branch is a crash candidate; whether or not, the crash
    // line ran and is not No.
    let (fsa, _) = analyze(&dir, "core", &["--solver", "fsa"]);
    assert!(!lines(&fsa, "tests.c", "no").contains(&l("if (z == 7)")));
    eprintln!("z's tests: {:?}", tests("z", "check_flag"));
}

/// A function inlined twice into one (`always_inline`, which clang
/// inlines at `-O0` too): each copy's locals are read, told apart by the
/// call they were inlined at (the IR's `inlinedAt`, DWARF's call line and
/// column). Before, the two copies shared a key (function, name, line)
/// and neither was read.
#[test]
fn the_locals_of_a_function_inlined_twice_are_read_apart() {
    require("clang-14");
    require("gdb");
    let dir = scratch("inlined");
    crash(&dir, "inlined.c", "", "core", &[], &[]);
    let (v, _) = analyze(&dir, "core", &[]);
    let ks: Vec<(u64, bool)> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["name"] == "k")
        .map(|u| (u["value"].as_u64().unwrap(), u["unused"].is_null()))
        .collect();
    assert_eq!(ks, vec![(1, true), (11, true)], "{}", v["values"]);
    let ps: Vec<u64> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["name"] == "p")
        .map(|u| u["value"].as_u64().unwrap())
        .collect();
    assert!(ps.len() == 2 && ps[0] != 0 && ps[1] == 0, "{ps:?}");
    // `puts("big")` ran (the second copy), the lines after the crash did
    // not.
    let src = std::fs::read_to_string(data("inlined.c")).unwrap();
    let line = |t: &str| src.lines().position(|l| l.contains(t)).unwrap() as u64 + 1;
    assert_sound(
        &v,
        "inlined.c",
        &[line("puts(\"big\")"), line("*q = 1")],
        &[line("return argv")],
        "inlined",
    );
}
