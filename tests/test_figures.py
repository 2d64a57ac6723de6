#!/usr/bin/env python3
"""Every figure of the repository says what it averages, and draws its intervals (issue 35).

    tests/test_figures.py SOURCE_DIR

For each PNG that git tracks, the program that draws it (the table below; a PNG missing from it
fails, so a new figure is held to the same rule) must put in its title how many replications a
point is the mean of, or that it shows one run, or that it is exact or deterministic; and a
figure of means over replications must draw error bars. This reads the programs, not the
images: a PNG cannot be read back here, but a title comes only from its program.
"""
import os
import re
import subprocess
import sys

src = os.path.abspath(sys.argv[1])

# figure -> the program that draws it
DRAWN_BY = {
    "docs/burst.png": "scripts/burst_trace.sh",
    "docs/collapse.png": "scripts/collapse_curve.sh",
    "docs/fluid-burst.png": "src/io/fluid_report.c",
    "docs/testbed.png": "scripts/testbed_plot.sh",
    "docs/testbed-osn.png": "src/cli/testbed_plot.c",
    "studies/01-lboc-vs-rboc-rtt/figure.png": "studies/01-lboc-vs-rboc-rtt/study.py",
    "studies/02-mm1-vs-md1/figure.png": "studies/02-mm1-vs-md1/study.py",
    "studies/03-optimal-thresholds/figure.png": "studies/03-optimal-thresholds/study.py",
    "studies/03-optimal-thresholds/map.png": "src/cli/optimize_out.c",
    "studies/04-retransmission-collapse-pi/figure.png":
        "studies/04-retransmission-collapse-pi/study.py",
    "studies/05-prsm/figure.png": "studies/05-prsm/study.py",
    "studies/06-bistability-map/figure.png": "studies/06-bistability-map/study.py",
    "studies/07-tandem-propagation/figure.png": "studies/07-tandem-propagation/study.py",
    "studies/08-pi-design/figure.png": "studies/08-pi-design/study.py",
    "studies/09-prsm-slowdown-bulk/figure.png": "studies/09-prsm-slowdown-bulk/study.py",
    "studies/10-fairness-clients/figure.png": "studies/10-fairness-clients/study.py",
    "studies/11-abandonment-retrials/figure.png": "studies/11-abandonment-retrials/study.py",
    "studies/12-quantile-objective/figure.png": "studies/12-quantile-objective/study.py",
}
# What a title must say: a count of replications (a number or the variable that holds it),
# or one run / a single sample path, or exact / deterministic values.
MEANS = re.compile(r"(\d+|\$\w+|\{[^}]*\}|\"\.ARG\d\.\"|%\w+) (replications|reps)\b|"
                   r"mean of (\d+|\$\w+|\{[^}]*\}) ", re.I)
SINGLE = re.compile(r"\bone run\b|single (run|sample path)|\bdeterministic\b|\bexact\b", re.I)
BARS = re.compile(r"errorbars|errorlines|yerrorbars|yerrorlines|errorbar\(")
TITLE = re.compile(r"title\b[^\n]*", re.I)

failures = 0
tracked = subprocess.run(["git", "-C", src, "ls-files", "*.png"], capture_output=True,
                         text=True).stdout.split()
if not tracked:
    tracked = [f for f in DRAWN_BY if os.path.exists(os.path.join(src, f))]
for png in sorted(tracked):
    prog = DRAWN_BY.get(png)
    if not prog:
        failures += 1
        print(f"FAIL {png}: no program known to draw it (add it to DRAWN_BY)")
        continue
    text = open(os.path.join(src, prog), encoding="utf-8").read()
    titles = "\n".join(TITLE.findall(text))
    # C code writes its title with fprintf over several string pieces: read the whole file.
    where = (text if prog.endswith(".c") else titles).replace("\\n", " ")  # gnuplot's \n
    means, single = MEANS.search(where), SINGLE.search(where)
    if not means and not single:
        failures += 1
        print(f"FAIL {png}: {prog}'s titles say neither how many replications nor one run / "
              "exact / deterministic")
    elif means and not BARS.search(text):
        failures += 1
        print(f"FAIL {png}: {prog} draws means over replications without error bars")
    else:
        print(f"ok   {png}: {(means or single).group(0)!r}"
              f"{', with error bars' if means else ''}")
print(f"{failures} failed")
sys.exit(1 if failures else 0)
