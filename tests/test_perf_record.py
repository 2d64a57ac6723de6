#!/usr/bin/env python3
"""scripts/perf_record.py writes dated tables into docs/performance.md, as `make bench` and
`make testbed` call it.

    tests/test_perf_record.py SOURCE_DIR

On a scratch copy of docs/performance.md: a run goes in as a heading (date and time UTC, the
machine, the load average at the start and the end) and a table of the CSV's cells; the date is
the clock's, the machine is /proc/cpuinfo's model name, the cores this process may use and
uname's release, the start load is the one given; a second run goes above the first; --keep
drops the oldest; --columns picks and orders; nothing outside the block changes. Bad input exits
2, names the file and line (or the flag), and leaves the page as it was. Last, the real page
has both blocks, and `make -n bench` and `make -n testbed` call the script.
"""
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

src = os.path.abspath(sys.argv[1])
script = os.path.join(src, "scripts", "perf_record.py")
page = os.path.join(src, "docs", "performance.md")
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
    print(("ok   " if ok else "FAIL ") + what)


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def block(text, section):
    b = text.index(f"<!-- osn-perf {section}: ")
    e = text.index(f"<!-- osn-perf {section} end -->")
    return text[b:e]


def outside(text, section):
    b = text.index(f"<!-- osn-perf {section}: ")
    e = text.index(f"<!-- osn-perf {section} end -->")
    return text[:b] + text[e:]


with tempfile.TemporaryDirectory() as tmp:
    doc = os.path.join(tmp, "performance.md")
    shutil.copy(page, doc)
    before = open(doc).read()
    # the runs the page already records (make bench and make testbed write theirs into it)
    n0 = block(before, "bench").count("\n#### ")
    table = os.path.join(tmp, "figures.csv")
    with open(table, "w") as f:
        f.write("what,osn,peer,peer/osn\nsolve R=1e6,0.30 s,5.1 s,17.0\n"
                "\"parse, one core\",2.1 M/s,0.3 M/s,7.0\n"
                "sim mean,51.88333333,2452789,1.058850395\n")

    t0 = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    p = run("bench", doc, table, "--load-start", "12.5 9.25 4.00", "--note", "run one")
    t1 = datetime.datetime.now(datetime.timezone.utc)
    check(p.returncode == 0, f"a run is recorded (exit {p.returncode}: {p.stderr.strip()})")
    text = open(doc).read()
    blk = block(text, "bench")
    heads = re.findall(r"^#### (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC; (.*); load average "
                       r"(\S+ \S+ \S+) at the start, (\S+ \S+ \S+) at the end$", blk, re.M)
    check(len(heads) == n0 + 1, f"one more dated heading in the block ({n0} before): {heads}")
    if heads:
        when, mach, start, end = heads[0]
        at = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M").replace(
            tzinfo=datetime.timezone.utc)
        check(t0 <= at <= t1, f"the date is the clock's, UTC: {when} in [{t0:%H:%M}, {t1:%H:%M}]")
        model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                      if l.startswith("model name")), "unknown processor")
        cores = len(os.sched_getaffinity(0))
        check(mach == f"{model}, {cores} cores, {platform.system()} {platform.release()}",
              f"the machine: {mach!r}")
        check(start == "12.5 9.25 4.00", f"the load at the start as given: {start}")
        check(all(re.fullmatch(r"\d+\.\d+", x) for x in end.split()),
              f"the load at the end, /proc/loadavg's three fields: {end}")
    check("| what | osn | peer | peer/osn |\n|---|---|---|---|\n"
          "| solve R=1e6 | 0.30 s | 5.1 s | 17.0 |\n| parse, one core | 2.1 M/s | 0.3 M/s | 7.0 |"
          in blk, "the table holds the CSV's cells, row by row")
    check("| sim mean | 51.88 | 2452789 | 1.059 |" in blk,
          "a number with more than 6 significant digits is shown with 4; a count as it is")
    check("run one" in blk, "the note is printed")
    check(outside(text, "bench") == outside(before, "bench"), "nothing outside the block changed")
    check(block(text, "testbed") == block(before, "testbed"), "the other block is untouched")

    # Newest first; --keep drops the oldest.
    run("bench", doc, table, "--load-start", "1 1 1", "--note", "run two")
    blk = block(open(doc).read(), "bench")
    check(blk.count("\n#### ") == n0 + 2 and blk.index("run two") < blk.index("run one"),
          "a second run goes above the first")
    p = run("bench", doc, table, "--load-start", "1 1 1", "--note", "run three", "--keep", "2")
    blk = block(open(doc).read(), "bench")
    check(p.returncode == 0 and blk.count("\n#### ") == 2 and "run one" not in blk
          and blk.index("run three") < blk.index("run two"), "--keep 2 drops the oldest run")

    # --columns: a subset, in the order asked.
    p = run("testbed", doc, table, "--load-start", "1 1 1", "--columns", "peer/osn,what")
    blk = block(open(doc).read(), "testbed")
    check(p.returncode == 0 and "| peer/osn | what |\n|---|---|\n| 17.0 | solve R=1e6 |" in blk,
          "--columns picks and orders the columns")

    # Bad input: exit 2, the place named, the page unchanged.
    with open(os.path.join(tmp, "ragged.csv"), "w") as f:
        f.write("a,b\n1,2\n3\n")
    with open(os.path.join(tmp, "empty.csv"), "w") as f:
        f.write("a,b\n")
    nomark = os.path.join(tmp, "nomark.md")
    with open(nomark, "w") as f:
        f.write("# no markers\n")
    bad = [
        (("bench", doc, os.path.join(tmp, "ragged.csv"), "--load-start", "1 1 1"),
         "ragged.csv:3: 1 fields, the header has 2"),
        (("bench", doc, os.path.join(tmp, "empty.csv"), "--load-start", "1 1 1"),
         "empty.csv: a header and no rows"),
        (("bench", doc, os.path.join(tmp, "absent.csv"), "--load-start", "1 1 1"),
         "absent.csv: cannot open"),
        (("bench", doc, table, "--load-start", "high"), "--load-start 'high'"),
        (("bench", doc, table, "--load-start", "1 1 1", "--columns", "what,speed"),
         "--columns: speed not in"),
        (("nosuch", doc, table, "--load-start", "1 1 1"), "no block for 'nosuch'"),
        (("bench", nomark, table, "--load-start", "1 1 1"), "nomark.md: no block for 'bench'"),
    ]
    for args, want in bad:
        was = open(args[1]).read()
        p = run(*args)
        check(p.returncode == 2 and want in p.stderr and open(args[1]).read() == was,
              f"refused with exit 2 and '{want}' (got {p.returncode}: {p.stderr.strip()})")

# The page has both blocks, and the make targets write them.
text = open(page).read()
for section in ("bench", "testbed"):
    check(f"<!-- osn-perf {section}: " in text and f"<!-- osn-perf {section} end -->" in text,
          f"docs/performance.md has the '{section}' block")
    # Without a calling make's flags (make check runs this under make).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
    p = subprocess.run(["make", "-n", "-C", src, section], capture_output=True, text=True,
                       env=env)
    check(p.returncode == 0 and f"scripts/perf_record.py {section} docs/performance.md"
          in p.stdout, f"`make -n {section}` records its run in docs/performance.md")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
