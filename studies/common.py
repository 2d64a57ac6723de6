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


def write_tables(path, tables, fmt=None):
    """A study's table.txt: the tables (pairs of rows and header, each as table() prints it, a
    blank line between two) written to path and printed; returns the text."""
    txt = "\n".join(table(rows, header, fmt) for rows, header in tables)
    with open(path, "w") as f:
        f.write(txt)
    print(txt)
    return txt


def study_main(check, full, plot=None):
    """A study's command line: `--check` runs check(), the reduced verdict of make check, and
    exits 1 when one of its verdicts failed (0 when all held); `--plot` redraws the figure with
    plot() from the CSVs, running nothing; anything else runs full(), the whole study."""
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    if plot and sys.argv[1:] == ["--plot"]:
        plot()
        return
    full()


# Student's t, 97.5 % quantile (two-sided 95 % interval) for 1..30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df):
    """The 97.5 % quantile of Student's t with df degrees of freedom (table to 30, then
    1.96 + 2.4 / df, within 0.002 of the exact value)."""
    if df < 1:
        raise ValueError("t975: df < 1")
    return _T975[df - 1] if df <= 30 else 1.96 + 2.4 / df


def mean_hw(xs):
    """Mean of xs and the half-width of its 95 % t-interval (n - 1 degrees of freedom)."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    s2 = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, t975(n - 1) * (s2 / n) ** 0.5


def paired(a, b):
    """Paired comparison of two runs on common random numbers: mean and 95 % t half-width of
    the per-replication differences a[i] - b[i] (a, b: lists in replication order)."""
    if len(a) != len(b):
        raise ValueError("paired: runs of different sizes")
    return mean_hw([x - y for x, y in zip(a, b)])


def osn_reps(cmd, ini, sets=()):
    """Like osn(), and also returns the per-replication rows of --replications-out (a list of
    dicts, numbers as floats, in replication order)."""
    import csv
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "reps.csv")
        r = osn(cmd, ini, sets, ["--replications-out", path])
        with open(path) as f:
            rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        o = {}
        for k, v in row.items():
            try:
                o[k] = float(v)
            except (TypeError, ValueError):
                o[k] = v
        out.append(o)
    out.sort(key=lambda o: o["replication"])
    return r, out


def welch(a, b):
    """Unpaired difference mean(a) - mean(b) with the half-width of its 95 % Welch interval
    (Welch-Satterthwaite degrees of freedom). Shown beside a paired interval only as a note: on
    common random numbers the paired one is the right one, and usually the narrower."""
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    if na < 2 or nb < 2:
        return ma - mb, float("nan")
    va = sum((x - ma) ** 2 for x in a) / (na - 1) / na
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1) / nb
    if va + vb == 0:
        return ma - mb, 0.0
    df = (va + vb) ** 2 / ((va ** 2 / (na - 1) if va else 0) + (vb ** 2 / (nb - 1) if vb else 0))
    return ma - mb, t975(max(1, int(df))) * (va + vb) ** 0.5


def osn_sweep_reps(cmd, ini, sets=()):
    """Like osn_reps() for a run with one --set range (a sweep): the JSON list, and the
    per-replication rows grouped by sweep point, {float(value): [rows in replication order]}."""
    import csv
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "reps.csv")
        r = osn(cmd, ini, sets, ["--replications-out", path])
        with open(path) as f:
            reader = csv.reader(f)
            header = next(reader)
            rows = list(reader)
    key = header[0]  # the swept key's column comes first
    out = {}
    for row in rows:
        o = {}
        for k, v in zip(header, row):
            try:
                o[k] = float(v)
            except ValueError:
                o[k] = v
        out.setdefault(float(row[0]), []).append(o)
    for v in out.values():
        v.sort(key=lambda o: o["replication"])
    return r, out, key


def crossing(xs, ys, level):
    """The first x at which the curve (xs ascending, ys) falls below level, by linear
    interpolation between the grid points; None if it never does (xs[0] if it starts below)."""
    for i, (x, y) in enumerate(zip(xs, ys)):
        if y < level:
            if i == 0:
                return x
            x0, y0 = xs[i - 1], ys[i - 1]
            return x0 + (x - x0) * (y0 - level) / (y0 - y)
    return None


def jain(xs):
    """Jain's fairness index of xs, (sum x)^2 / (n * sum x^2): 1 when all are equal, 1/n when one
    has everything; None when every x is 0 (nothing to share). Scale-free, so the index of the
    ratios admitted_i / offered_i is also that of the shares' ratios (admitted share / offered
    share)."""
    n = len(xs)
    s2 = sum(x * x for x in xs)
    if n == 0 or s2 == 0:
        return None
    return sum(xs) ** 2 / (n * s2)
