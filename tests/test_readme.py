#!/usr/bin/env python3
"""The commands of the README and of docs/ run as written, and print what the page shows.

    tests/test_readme.py BUILD_DIR SOURCE_DIR

Every indented command line of README.md and docs/**/*.md that starts with `build/osn` or `$ build/osn` (with
its `\\` continuations) runs in bash from a scratch directory where `build`, `examples` and
`studies` point into the build and source trees, as they do in a clone after `make`:

- a `$ ` command must print the lines shown under it, in that order (the README trims: rows
  may be left out, "..." stands for more, a row may be cut short by `| grep`/`| head` in the
  command itself); the exit status must be 0, or 2 when the shown output is an error line
  (one line, `osn CMD: ...`);
- a plain command must exit 0.

Left out, each for a reason: `osn node` (a server: tests/node/ starts it), `mpirun` (CTest
cli_study_mpi). The README's other command lines are each accounted for: `python3` runs with
the module and library of the build tree and must warn of nothing; `make TARGET [VAR=...]` must
be a target (`make -n`; CTest install, .ci/run and the demo loop run them for real);
`export PKG_CONFIG_PATH=` must name where the `make install PREFIX=` above it puts osn.pc; any
other command is a failure. Lines that report the wall clock (`events: ... in ... s`) are not compared:
the machine's speed is not the README's to promise. Stale sentences ("not written yet" of a
shipped feature) are tests/test_docs_stale.py's.
"""
import os
import re
import subprocess
import sys
import tempfile

build, src = (os.path.abspath(p) for p in sys.argv[1:3])
PAGES = ["README.md"] + sorted(
    os.path.relpath(os.path.join(d, f), src)
    for d, _, files in os.walk(os.path.join(src, "docs")) for f in files if f.endswith(".md"))

SKIP = re.compile(r"^(build/osn node|mpirun|make|python3)\b")
WALL = re.compile(r"^events: .* in .* s")


def blocks(lines):
    """(line number, [indented lines]) for each indented block outside fences."""
    fenced, cur, start = False, [], 0
    for i, raw in enumerate(lines + [""], 1):
        if raw.startswith("```"):
            fenced = not fenced
        if not fenced and raw.startswith("    ") and not raw.lstrip().startswith("- "):
            if not cur:
                start = i
            cur.append(raw[4:])
        elif cur:
            yield start, cur
            cur = []


def commands(lines):
    """(line, command, shown output or None) for each command a page shows."""
    for start, blk in blocks(lines):
        i = 0
        while i < len(blk):
            text, lineno = blk[i], start + i
            shown = text.startswith("$ ")
            cmd = text[2:] if shown else text
            if not (cmd.startswith("build/osn") or (shown and cmd.startswith("cat "))):
                i += 1
                continue
            while cmd.rstrip().endswith("\\") and i + 1 < len(blk):
                i += 1
                cmd = cmd.rstrip()[:-1] + " " + blk[i].strip()
            i += 1
            out = []
            if shown:
                while i < len(blk) and not blk[i].startswith("$ "):
                    out.append(blk[i])
                    i += 1
            yield lineno, cmd, out if shown else None


def other_commands(lines):
    """(line, command) of each indented command line that commands() does not run: the first
    word of a line of a block, bar comments, `$ ` commands and the lines shown under them."""
    for start, blk in blocks(lines):
        if any(b.startswith("$ ") for b in blk):
            continue
        for k, text in enumerate(blk):
            cmd = re.sub(r"\s+#.*$", "", text).strip()
            if not cmd or cmd.startswith("#") or text.startswith(" "):
                continue
            if cmd.startswith("build/osn"):
                continue
            yield start + k, cmd


def matches(shown, got):
    """Every shown line, in order, among the printed ones ("..." and wall-clock lines aside)."""
    want = [s.rstrip() for s in shown if s.strip() not in ("", "...") and not WALL.match(s)]
    have = [g.rstrip() for g in got.split("\n")]
    k = 0
    for w in want:
        while k < len(have) and have[k] != w:
            k += 1
        if k == len(have):
            return w
        k += 1
    return None


failures, ran = 0, 0
with tempfile.TemporaryDirectory() as tmp:
    os.symlink(build, os.path.join(tmp, "build"))
    for d in ("examples", "studies"):
        os.symlink(os.path.join(src, d), os.path.join(tmp, d))
    for page in PAGES:
        lines = open(os.path.join(src, page), encoding="utf-8").read().split("\n")
        for lineno, cmd, shown in commands(lines):
            if SKIP.match(cmd):
                continue
            ran += 1
            p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp,
                               capture_output=True, text=True, timeout=600)
            got = p.stdout + p.stderr
            # An error is shown as its one line, "osn CMD: what is wrong".
            rows = [s for s in shown or [] if s.strip()]
            is_error = len(rows) == 1 and re.match(r"^osn \w+: ", rows[0]) is not None
            want_rc = 2 if is_error else 0
            # `| grep`/`| head` may end the pipe early: head's SIGPIPE to osn is not a failure.
            ok_rc = p.returncode == want_rc or ("| head" in cmd and p.returncode == 141)
            missing = matches(shown, got) if shown else None
            if ok_rc and missing is None:
                print(f"ok   {page}:{lineno}: {cmd[:90]}")
                continue
            failures += 1
            print(f"FAIL {page}:{lineno}: {cmd}")
            if not ok_rc:
                print(f"     exit status {p.returncode}, expected {want_rc}")
            if missing is not None:
                print(f"     shown but not printed: {missing!r}")
            print("     printed:\n" + "\n".join("       " + g for g in got.split("\n")[:40]))

    # The README's other commands: each run, or checked, here; none left unaccounted for.
    lines = open(os.path.join(src, "README.md"), encoding="utf-8").read().split("\n")
    libdir = "lib"
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        m = re.search(r"^CMAKE_INSTALL_LIBDIR:[A-Z]*=(.*)$", open(cache).read(), re.M)
        libdir = m.group(1) if m else libdir
    # A sanitized libosn cannot be loaded into python without preloading its runtime: the
    # plain build's readme test runs the python lines; a sanitized one says it left them.
    sanitized = os.path.exists(cache) and re.search(r"^OSN_SANITIZE:BOOL=ON$", open(cache).read(),
                                                    re.M) is not None
    prefix = None
    for lineno, cmd in other_commands(lines):
        ran += 1
        word = cmd.split()[0]
        why = None
        if word == "python3" and sanitized:
            print(f"skip README.md:{lineno}: {cmd[:60]} (sanitized build: run by the plain build)")
            continue
        if word == "python3":
            # The module from the build tree, as bench/run.sh loads it; a warning (such as
            # osn.InfeasibleWarning) is a failure: the README's examples are feasible.
            # Debian's python3 (the README's), which has matplotlib from the test tier, before
            # another one on the PATH, as tests/test_install.sh does.
            env = dict(os.environ, PYTHONPATH=os.path.join(src, "python"),
                       OSN_LIBRARY=os.path.join(build, "libosn.so"))
            if os.access("/usr/bin/python3", os.X_OK):
                env["PATH"] = "/usr/bin:" + env.get("PATH", "")
            p = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, capture_output=True,
                               text=True, timeout=300)
            if p.returncode != 0 or "Warning" in p.stderr:
                why = f"exit {p.returncode}: {(p.stdout + p.stderr)[-600:]}"
        elif word == "make":
            # A target of the Makefile with the variables shown (make -n runs no recipe): `make`
            # itself is run by CTest install (a staged and a private prefix), .ci/run (check)
            # and by hand (demo, testbed).
            args = [a for a in cmd.split() if a != "make"]
            args = [a.replace("$HOME", os.path.join(tmp, "home")) for a in args]
            env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
            p = subprocess.run(["make", "-n", "-C", src] + args, capture_output=True, text=True,
                               env=env)
            if p.returncode != 0:
                why = f"make -n: exit {p.returncode}: {p.stderr[-300:]}"
            m = re.search(r"PREFIX=(\S+)", cmd)
            prefix = m.group(1) if m and args and args[0] == "install" else prefix
        elif word == "export" and cmd.startswith("export PKG_CONFIG_PATH="):
            # Where `make install PREFIX=...` just above puts osn.pc (cmake/install.cmake).
            want = f"{prefix}/{libdir}/pkgconfig" if prefix else None
            got = cmd.split("=", 1)[1]
            if got != want:
                why = f"PKG_CONFIG_PATH={got}, but make install PREFIX={prefix} puts osn.pc in {want}"
        else:
            why = "a command this test neither runs nor checks"
        if why:
            failures += 1
            print(f"FAIL README.md:{lineno}: {cmd}\n     {why}")
        else:
            print(f"ok   README.md:{lineno}: {cmd[:90]}")

# The README is a front door (issue 35: about 200 lines); the manual is docs/.
n = len(open(os.path.join(src, "README.md"), encoding="utf-8").read().splitlines())
if n > 220:
    failures += 1
    print(f"FAIL README.md: {n} lines, at most 220: the rest belongs in docs/")
print(f"{ran - failures} of {ran} commands of the README and docs/ as shown; README {n} lines")
sys.exit(1 if failures or ran < 20 else 0)
