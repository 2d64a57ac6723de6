"""Helpers shared by the studies: run osn, read its JSON, a gnuplot figure, table printing.

Each study's study.py imports this file (it sits one directory up). The osn binary is
$OSN, else build/osn at the top of the repository.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OSN = os.environ.get("OSN", os.path.join(ROOT, "build", "osn"))


def osn(cmd, ini, sets=(), extra=()):
    """Runs `osn CMD [INI] --set ... -q --json -` and returns the JSON summary as a dict."""
    args = [OSN, cmd] + ([ini] if ini else []) + ["-q", "--json", "-"] + list(extra)
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def table(rows, header, fmt=None):
    """A readable fixed-width table (list of tuples) as a string."""
    fmt = fmt or {}
    cells = [[(fmt.get(h, "{}").format(v) if v is not None else "-") for h, v in zip(header, r)]
             for r in rows]
    w = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    line = lambda xs: "  ".join(x.rjust(w[i]) for i, x in enumerate(xs))
    return "\n".join([line(header), line(["-" * n for n in w])] + [line(c) for c in cells]) + "\n"


def write_csv(path, rows, header):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join("" if v is None else f"{v:.10g}" if isinstance(v, float) else str(v)
                             for v in r) + "\n")


def gnuplot(script, *args):
    """Runs a gnuplot script with `gnuplot -c`; file names reach it as ARG1.., never as text."""
    p = subprocess.run(["gnuplot", "-c", "/dev/stdin", *args], input=script, text=True,
                       capture_output=True)
    if p.returncode != 0:
        sys.exit(f"gnuplot failed: {p.stderr.strip()}")


def verdict(ok, what):
    """Prints one line of a reduced check and returns ok."""
    print(("ok   " if ok else "FAIL ") + what)
    return ok
