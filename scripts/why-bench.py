#!/usr/bin/env python3
"""The injected-bug benchmark of `postmortem why` (issue 36): fault
localisation judged as it is judged, on bugs with known root causes.

Each bug of realprogs/bugs/*.json is a source change to a real program
(one unique `find` text replaced by `replace`) whose root cause is the
line of the patched file that holds the marker `/* BUG */`. The program
is built with that file patched (clang-14 -g -O0: the IR for the graph,
the binary from the same flags), run on the bug's arguments under gdb
until it crashes, and a core is made; then `postmortem why` is asked
(graph cached with `cfg build`, binary and core) and the rank of the
first suspect on the root cause's line (file name and line) is noted.

Per bug: the signal, the rank (or `-` when no suspect is on the line;
`none` when why named no suspect), the suspects' count, how many of the
Yes suspects really ran before the crash (gdb: the program run again on
the same input with a temporary breakpoint on each Yes suspect's line)
and why's time.
In all: how many root causes were ranked first, in the first 3, in the
first 10, missed, and how many crashes why found nothing for.

Usage: scripts/why-bench.py [PROGRAM...] [--bug ID[,ID...]] [--keep]
Needs clang-14, llvm-link-14 and gdb. Uses the postmortem binary $PM
(with postmortem-llvm beside it), else builds the workspace's release
one with cargo. Builds are cached in
target/why-bench/. Prints a Markdown table.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "why-bench")
BUGS = os.path.join(ROOT, "realprogs", "bugs")
MARK = "/* BUG */"

# The programs, as the harness builds them (crates/cli/tests/real_programs.rs).
PROGRAMS = {
    "bzip2": {
        "krate": "bzip2-sys",
        "dir": "bzip2-1.0.8",
        "sources": ["blocksort.c", "huffman.c", "crctable.c", "randtable.c",
                    "compress.c", "decompress.c", "bzlib.c", "bzip2.c"],
        "exclude": [],
        "driver": None,
        "includes": ["."],
        "defines": [],
        "libs": [],
    },
    "lua": {
        "krate": "lua-src",
        "dir": "lua-5.4.9",
        "sources": ["*.c"],
        "exclude": [],
        "driver": "lua_main.c",
        "includes": ["."],
        "defines": ["LUA_USE_POSIX", "luai_makeseed(L)=0u"],
        "libs": ["-lm"],
    },
    "lz4": {
        "krate": "lz4-sys",
        "dir": "liblz4",
        "sources": ["lib/*.c", "programs/*.c"],
        "exclude": ["lib/lz4file.c"],
        "driver": None,
        "includes": ["lib", "programs"],
        "defines": ["LZ4IO_MULTITHREAD=0"],
        "libs": [],
    },
}


def run(cmd, cwd=None, timeout=600, check=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


def crate_dirs():
    manifest = os.path.join(ROOT, "realprogs", "Cargo.toml")
    out = run(["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest])
    meta = json.loads(out.stdout)
    return {p["name"]: os.path.dirname(p["manifest_path"]) for p in meta["packages"]}


def files_of(prog, src):
    out = []
    for s in prog["sources"]:
        if s.endswith("*.c"):
            found = sorted(glob.glob(os.path.join(src, s)))
            out += [f for f in found if os.path.relpath(f, src) not in prog["exclude"]]
        else:
            out.append(os.path.join(src, s))
    if prog["driver"]:
        out.append(os.path.join(ROOT, "realprogs", "drivers", prog["driver"]))
    return out


def flags_of(prog, src):
    f = ["-g", "-O0"]
    f += [f"-I{os.path.join(src, i)}" for i in prog["includes"]]
    f += [f"-D{d}" for d in prog["defines"]]
    return f


def compile_one(path, flags, out_stem):
    run(["clang-14", *flags, "-emit-llvm", "-c", path, "-o", out_stem + ".bc"])
    run(["clang-14", *flags, "-c", path, "-o", out_stem + ".o"])


def base_build(name, prog, src):
    """Every file compiled once (cached by recipe)."""
    files = files_of(prog, src)
    flags = flags_of(prog, src)
    d = os.path.join(WORK, name, "base")
    recipe = json.dumps([files, flags])
    stamp = os.path.join(d, "recipe")
    stems = [os.path.join(d, f"{i}-{os.path.splitext(os.path.basename(f))[0]}")
             for i, f in enumerate(files)]
    if os.path.exists(stamp) and open(stamp).read() == recipe:
        return files, flags, stems
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f, s in zip(files, stems):
        compile_one(f, flags, s)
    open(stamp, "w").write(recipe)
    return files, flags, stems


def expand(arg, src):
    if arg.startswith("@SRC/"):
        return os.path.join(src, arg[5:])
    if arg.startswith("@IN/"):
        return os.path.join(ROOT, "realprogs", "inputs", arg[4:])
    return arg


def gdb_quote(a):
    return "'" + a.replace("'", "'\\''") + "'" if re.search(r"[\s'\"<>|&;]", a) else a


def yes_ran(d, suspects, run_args):
    """How many of the Yes suspects really ran before the crash, by gdb:
    the program is run again on the same input (it is deterministic)
    with a temporary breakpoint on each Yes suspect's line; a suspect
    ran if its breakpoint was hit. Returns (ran, Yes suspects)."""
    yes = []
    for s in suspects:
        m = re.search(r" at ([^ :]+):(\d+)", s["at"])
        if s.get("label") == "yes" and m:
            yes.append((m.group(1), int(m.group(2))))
    if not yes:
        return 0, 0
    cmd = ["gdb", "-q", "-batch", "-iex", "set debuginfod enabled off"]
    for i, (f, l) in enumerate(yes):
        cmd += ["-ex", f"tbreak {f}:{l}", "-ex", f"echo PMSET {i}\\n"]
    cmd += ["-ex", f"run {run_args} > /dev/null 2>&1"]
    cmd += ["-ex", "continue"] * (len(yes) + 1)
    g = run(cmd + ["./prog"], cwd=d, timeout=300, check=False)
    # Breakpoint number -> (suspect, address); gdb reports a hit of
    # several breakpoints at one address (a parameter's line and the
    # function's first statement) by the first one's number only.
    number, last = {}, None
    for line in g.stdout.splitlines():
        m = re.match(r"Temporary breakpoint (\d+) at (0x[0-9a-f]+)", line)
        if m:
            last = (int(m.group(1)), m.group(2))
        m = re.match(r"PMSET (\d+)", line)
        if m:
            if last is not None:
                number[last[0]] = (int(m.group(1)), last[1])
            last = None
    hit = {number[int(n)][1] for n in re.findall(r"^Temporary breakpoint (\d+), ", g.stdout, re.M)
           if int(n) in number}
    return len({i for i, addr in number.values() if addr in hit}), len(yes)


def bench_bug(bug, name, prog, src, base, pm):
    files, flags, stems = base
    d = os.path.join(WORK, name, "bugs", bug["id"])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    target = os.path.join(src, bug["file"])
    text = open(target).read()
    if text.count(bug["find"]) != 1:
        return {"error": f"`find` occurs {text.count(bug['find'])} times in {bug['file']}"}
    patched = text.replace(bug["find"], bug["replace"])
    lines = [i + 1 for i, l in enumerate(patched.splitlines()) if MARK in l]
    if len(lines) != 1:
        return {"error": f"the patched file has {len(lines)} lines marked {MARK}"}
    root = (os.path.basename(bug["file"]), lines[0])
    # The patched file keeps its name (DWARF and why name it so) in its
    # own folder; its includes resolve through the flags and its folder.
    pdir = os.path.join(d, "src")
    os.makedirs(pdir)
    ppath = os.path.join(pdir, os.path.basename(bug["file"]))
    open(ppath, "w").write(patched)
    k = files.index(target)
    pflags = flags + [f"-I{os.path.dirname(target)}"]
    stem = os.path.join(d, "patched")
    compile_one(ppath, pflags, stem)
    bcs = [stem + ".bc" if i == k else s + ".bc" for i, s in enumerate(stems)]
    objs = [stem + ".o" if i == k else s + ".o" for i, s in enumerate(stems)]
    run(["llvm-link-14", *bcs, "-o", os.path.join(d, "prog.bc")])
    run(["clang-14", *objs, *prog["libs"], "-o", os.path.join(d, "prog")])
    args = " ".join(gdb_quote(expand(a, src)) for a in bug["args"])
    stdin = bug.get("stdin")
    redirect = f" < {gdb_quote(expand(stdin, src))}" if stdin else ""
    g = run(["gdb", "-q", "-batch", "-ex", f"run {args}{redirect} > /dev/null 2>&1",
             "-ex", "generate-core-file core", "./prog"], cwd=d, timeout=120, check=False)
    sig = re.search(r"received signal (\w+)", g.stdout)
    if not sig or not os.path.exists(os.path.join(d, "core")):
        return {"error": "no crash: " + g.stdout[-300:]}
    run([pm, "cfg", "build", "prog.bc", "-o", "prog.pmcfg"], cwd=d)
    t = time.monotonic()
    w = run([pm, "why", "--cfg", "prog.pmcfg", "--binary", "prog", "--core", "core",
             "--format", "json"], cwd=d, check=False, timeout=300)
    secs = time.monotonic() - t
    if w.returncode != 0:
        return {"error": f"why exit {w.returncode}: {w.stderr[-300:]}", "signal": sig.group(1)}
    v = json.loads(w.stdout)
    suspects = v.get("suspects", [])
    rank = None
    for s in suspects:
        m = re.search(r" at ([^ :]+):(\d+)", s["at"])
        if m and (m.group(1), int(m.group(2))) == root:
            rank = s["rank"]
            break
    ran, yes = yes_ran(d, suspects, f"{args}{redirect}")
    out = {"signal": sig.group(1), "rank": rank, "suspects": len(suspects),
           "yes": yes, "yes_ran": ran,
           "secs": secs, "root": f"{root[0]}:{root[1]}",
           "top": suspects[0]["at"] if suspects else None,
           "crash": v.get("fault", {}).get("suspects", [])}
    if not bug.get("keep"):
        for f in ("core", "prog.bc"):
            try:
                os.remove(os.path.join(d, f))
            except OSError:
                pass
    return out


def main():
    argv = sys.argv[1:]
    only_bug = None
    if "--bug" in argv:
        i = argv.index("--bug")
        only_bug = argv[i + 1]
        del argv[i:i + 2]
    keep = "--keep" in argv
    argv = [a for a in argv if a != "--keep"]
    names = argv or list(PROGRAMS)
    pm = os.environ.get("PM")
    if not pm:
        pm = os.path.join(ROOT, "target", "release", "postmortem")
        run(["cargo", "build", "--release", "-q", "-p", "postmortem"], cwd=ROOT, timeout=1800)
    # The LLVM front-end beside it (`cfg build` of the IR).
    os.environ.setdefault("POSTMORTEM_LLVM", os.path.join(os.path.dirname(pm), "postmortem-llvm"))
    crates = crate_dirs()
    rows = []
    for name in names:
        prog = PROGRAMS[name]
        path = os.path.join(BUGS, f"{name}.json")
        if not os.path.exists(path):
            continue
        bugs = json.load(open(path))
        if only_bug:
            bugs = [b for b in bugs if b["id"] in only_bug.split(",")]
        if not bugs:
            continue
        src = os.path.join(crates[prog["krate"]], prog["dir"])
        base = base_build(name, prog, src)
        for bug in bugs:
            bug["keep"] = keep
            print(f"{name} {bug['id']} ...", file=sys.stderr, flush=True)
            r = bench_bug(bug, name, prog, src, base, pm)
            print(f"  {r}", file=sys.stderr, flush=True)
            rows.append((name, bug, r))
    print("| program | bug | kind | signal | root cause | rank | suspects | Yes suspects ran (gdb) | time |")
    print("|---|---|---|---|---|---|---|---|---|")
    counts = {"1": 0, "3": 0, "10": 0, "missed": 0, "none": 0, "error": 0}
    yes_all, ran_all = 0, 0
    for name, bug, r in rows:
        if "error" in r:
            counts["error"] += 1
            print(f"| {name} | {bug['id']} | {bug.get('kind', '')} | | | error: {r['error'][:80]} | | | |")
            continue
        rank = r["rank"]
        if r["suspects"] == 0:
            counts["none"] += 1
            shown = "none"
        elif rank is None:
            counts["missed"] += 1
            shown = "-"
        else:
            shown = str(rank)
            for k in ("1", "3", "10"):
                if rank <= int(k):
                    counts[k] += 1
        yes_all += r["yes"]
        ran_all += r["yes_ran"]
        print(f"| {name} | {bug['id']} | {bug.get('kind', '')} | {r['signal']} | {r['root']} "
              f"| {shown} | {r['suspects']} | {r['yes_ran']} of {r['yes']} | {r['secs']:.2f} s |")
    n = len(rows)
    print()
    print(f"{n} bugs: root cause first {counts['1']}, in the first 3 {counts['3']}, "
          f"in the first 10 {counts['10']}; missed (suspects, none on the root cause) "
          f"{counts['missed']}; no suspect {counts['none']}; errors {counts['error']}; "
          f"Yes suspects that ran before the crash (gdb): {ran_all} of {yes_all}")


if __name__ == "__main__":
    main()
