#!/usr/bin/env python3
"""Writes a run's figures into docs/performance.md as a dated table (`make bench`, `make testbed`).

    scripts/perf_record.py SECTION DOC CSV --load-start "1.00 0.90 0.80" [--columns a,b,c]
                           [--keep N] [--note TEXT]

SECTION names a block of DOC between two marker lines,

    <!-- osn-perf SECTION: written by scripts/perf_record.py, newest first -->
    <!-- osn-perf SECTION end -->

and the run goes in at its top as a heading and a table: the date and time (UTC), the machine
(processor, the cores this process may use, the kernel), the load average when the run started
(--load-start, read by the caller before the run: /proc/loadavg's first three fields) and now,
at its end, and the CSV's rows (the columns named by --columns, in that order, or all). A
shared machine's speed changes by a factor of two from hour to hour, so a figure is read beside
its date and load. The block keeps the newest --keep runs (default 8); older ones drop out, so
the page does not grow without end. DOC is replaced atomically (a temporary file beside it,
then rename), and is left untouched on any error.

Exit status: 0 written; 2 for bad input (the message names the file and line, or the flag).
"""
import argparse
import csv
import datetime
import os
import platform
import re
import sys
import tempfile

BEGIN = "<!-- osn-perf {}: written by scripts/perf_record.py, newest first -->"
END = "<!-- osn-perf {} end -->"
# A run's heading; the block is split into runs at these lines.
RUN = re.compile(r"^#### \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def die(msg):
    print(f"perf_record: {msg}", file=sys.stderr)
    sys.exit(2)


def machine():
    """Processor model, usable cores and kernel: what decides the figures besides the load."""
    cpu = "unknown processor"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0))
    return f"{cpu}, {cores} cores, {platform.system()} {platform.release()}"


def load_now():
    with open("/proc/loadavg", encoding="utf-8") as f:
        return " ".join(f.read().split()[:3])


def parse_load(text):
    fields = text.split()
    if len(fields) != 3 or not all(re.fullmatch(r"\d+(\.\d+)?", x) for x in fields):
        die(f"--load-start '{text}': want three numbers, as /proc/loadavg's first fields")
    return " ".join(fields)


def cell(text):
    # A pipe would end the cell early; a newline would end the row.
    return short(text).replace("|", "\\|").replace("\n", " ").strip()


def short(text):
    # A number written with more than 6 significant digits (51.88333333, as the CSVs hold them)
    # reads as 4 (51.88): no figure in these tables is known that closely. Counts (integers) and
    # the rest stay as written.
    t = text.strip()
    if t.lstrip("+-").isdigit():
        return text
    try:
        v = float(t)
    except ValueError:
        return text
    digits = len(t.lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0"))
    return f"{v:.4g}" if digits > 6 else text


def read_table(path, columns):
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        die(f"{path}: cannot open: {e.strerror}")
    with f:
        rows = list(csv.reader(f))
    if not rows or not rows[0]:
        die(f"{path}:1: no header row")
    head = rows[0]
    if columns:
        want = [c.strip() for c in columns.split(",")]
        unknown = [c for c in want if c not in head]
        if unknown:
            die(f"--columns: {', '.join(unknown)} not in {path}:1 ({', '.join(head)})")
        idx = [head.index(c) for c in want]
    else:
        want, idx = head, list(range(len(head)))
    body = []
    for n, row in enumerate(rows[1:], 2):
        if not row:
            continue
        if len(row) != len(head):
            die(f"{path}:{n}: {len(row)} fields, the header has {len(head)}")
        body.append([row[i] for i in idx])
    if not body:
        die(f"{path}: a header and no rows: nothing measured to record")
    return want, body


def render(heading, note, head, body):
    out = [heading, ""]
    if note:
        out += [note, ""]
    out.append("| " + " | ".join(cell(h) for h in head) + " |")
    out.append("|" + "---|" * len(head))
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in body]
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("section")
    ap.add_argument("doc")
    ap.add_argument("csv")
    ap.add_argument("--load-start", required=True)
    ap.add_argument("--columns")
    ap.add_argument("--keep", type=int, default=8)
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z][a-z0-9-]*", a.section):
        die(f"SECTION '{a.section}': lower-case letters, digits and '-'")
    if a.keep < 1:
        die(f"--keep {a.keep}: at least 1")
    start = parse_load(a.load_start)
    head, body = read_table(a.csv, a.columns)

    try:
        with open(a.doc, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        die(f"{a.doc}: cannot open: {e.strerror}")
    begin, end = BEGIN.format(a.section), END.format(a.section)
    try:
        b = lines.index(begin)
        e = lines.index(end, b + 1)
    except ValueError:
        die(f"{a.doc}: no block for '{a.section}' (the lines '{begin}' and '{end}')")

    # The runs already there, each from its heading to the next.
    old, cur = [], None
    for line in lines[b + 1:e]:
        if RUN.match(line):
            cur = [line]
            old.append(cur)
        elif cur is not None:
            cur.append(line)
    now = datetime.datetime.now(datetime.timezone.utc)
    heading = (f"#### {now:%Y-%m-%d %H:%M} UTC; {machine()}; "
               f"load average {start} at the start, {load_now()} at the end")
    new = render(heading, a.note, head, body)
    kept = [new] + old[: a.keep - 1]
    block = [""] + [line for run in kept for line in run]
    while block and block[-1] == "":
        block.pop()
    block.append("")
    text = "\n".join(lines[: b + 1] + block + lines[e:])

    # Atomically, keeping the page's mode; a symlink is followed to the page it names.
    doc = os.path.realpath(a.doc)
    d = os.path.dirname(doc)
    fd, tmp = tempfile.mkstemp(prefix=".perf_record.", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(doc).st_mode & 0o7777)
        os.replace(tmp, doc)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"perf_record: {a.doc}: '{a.section}' run of {now:%Y-%m-%d %H:%M} UTC, "
          f"{len(body)} rows ({len(kept)} runs kept)")


if __name__ == "__main__":
    main()
