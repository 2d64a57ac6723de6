#!/usr/bin/env python3
"""Study 10: fairness of overload feedback across several upstream clients (RFC 7339's point).

  study.py            the full study: runs.csv, paired.csv, figure.csv, table.txt and figure.png
  study.py --check    the reduced verdict of make check: exit 1 if a claim fails
  study.py --plot     figure.png again from figure.csv, without rerunning

examples/fanin.ini (N edges, each with its own source, into one core of 370.4 calls/s) with 2
edges offering 1 : 2 and 4 edges offering 1 : 1 : 2 : 4 (source.shares), at 2 and 4 times the
core's capacity in total, under every control of the network simulator. Each edge's own calls
come from the simulator's per-source results (uacI.src_offered, src_admitted, src_goodput).

Fairness notion: RFC 7339 sends every client the same oc, a percentage of its own requests to
shed (RFC 7339 5.3), and RFC 6357 7 calls "basic" fairness each request's equal chance; both
mean throttling in proportion to the offer, so the measure is Jain's index of the ratios
x_i = admitted_i / offered_i (1: every edge admitted the same fraction; 1/N: one edge has
everything). The other reading, equal absolute rates (what RFC 7415's rate with the core's
X / N per client gives, RFC 6357 9.1), is reported beside it as Jain's index of admitted_i.

Replication k of every run is `osn sim` with net.seed = k and one replication, so the controls
of a case see the same calls (common random numbers) and are compared replication by
replication (paired t-intervals; Welch's beside them only as a note).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FANIN = os.path.join(common.ROOT, "examples", "fanin.ini")
CAP = 1 / 2.7e-3  # the core's capacity, calls/s (osn sim prints it: 370.37)
SPLITS = {2: (1, 2), 4: (1, 1, 2, 4)}
LOADS = (2, 4)
CONTROLS = ("none", "local", "loss", "rate", "rate_dyn", "prsm", "pi")
WORKERS = int(os.environ.get("STUDY10_WORKERS", "2"))


def closed_form_rate(w):
    """Jain's index of admitted / offered when every client gets the same rate X / N and each
    offers more than that: x_i is proportional to 1 / w_i, whatever X."""
    return common.jain([1 / x for x in w])


def run(control, n, load, seed, warmup, time):
    """One replication: per edge (offered, admitted, goodput) in calls/s."""
    w = SPLITS[n]
    sets = [f"control.kind={control}", f"net.edges={n}",
            "source.shares=" + " ".join(str(x) for x in w), f"source.rate={load * CAP:.6f}",
            "net.replications=1", f"net.seed={seed}", f"net.warmup={warmup}", f"net.time={time}"]
    d = common.osn("sim", FANIN, sets)
    src = [e for e in d["elements"] if e["src_offered"] is not None]
    assert len(src) == n, f"{control}: {len(src)} sources, want {n}"
    return [(e["src_offered"], e["src_admitted"], e["src_goodput"]) for e in src]


def measures(edges):
    """The fairness measures of one replication's edges."""
    x = [a / o for o, a, _ in edges]
    g = [gd / o for o, _, gd in edges]
    so, sa = sum(o for o, _, _ in edges), sum(a for _, a, _ in edges)
    return dict(jain_admitted=common.jain(x), jain_goodput=common.jain(g),
                jain_equal_rate=common.jain([a for _, a, _ in edges]), admitted=sa,
                goodput=sum(gd for _, _, gd in edges),
                share_ratio=[(a / sa) / (o / so) if sa > 0 else None for o, a, _ in edges],
                ratio=x)


def collect(cases, controls, reps, warmup, time):
    """{(n, load, control): [measures of replication 1..reps]}, the runs WORKERS at a time."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(n, x, c, k) for n, x in cases for c in controls for k in range(1, reps + 1)]
    with ThreadPoolExecutor(max_workers=WORKERS) as ex:
        out = list(ex.map(lambda j: run(j[2], j[0], j[1], j[3], warmup, time), jobs))
    res = {}
    for (n, x, c, k), edges in zip(jobs, out):
        res.setdefault((n, x, c), []).append((edges, measures(edges)))
    return res


def col(rr, m):
    return [r[1][m] if r[1][m] is not None else float("nan") for r in rr]


PLOT = r"""
set terminal pngcairo size 1500,1000 font ",10" noenhanced
set output ARG2
set datafile separator ","
set multiplot layout 2,1 title "Fairness across upstream clients, examples/fanin.ini (core 370 calls/s): mean of ".ARG3." replications per bar, 95 % t-intervals; the controls of a case share their calls (common random numbers)"
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set grid ytics
set key outside right top box
set title "Jain's index of admitted / offered over the edges (1: every edge admitted the same fraction of its offer, as RFC 7339 expects; 1/N: one edge has all)"
set ylabel "Jain's index"
set yrange [0.5:1.05]
plot ARG1 skip 1 using 2:3:xtic(1) lc rgb "#1f77b4" title "2 edges 1:2, 2x capacity", \
     '' skip 1 using 4:5 lc rgb "#aec7e8" title "2 edges 1:2, 4x", \
     '' skip 1 using 6:7 lc rgb "#d62728" title "4 edges 1:1:2:4, 2x", \
     '' skip 1 using 8:9 lc rgb "#ff9896" title "4 edges 1:1:2:4, 4x", \
     0.9 with lines dt 2 lw 2 lc rgb "#1f77b4" title "equal rate per edge, closed form, 1:2 (0.900)", \
     0.8176 with lines dt 2 lw 2 lc rgb "#d62728" title "equal rate per edge, closed form, 1:1:2:4 (0.818)"
set title "4 edges offering 1:1:2:4 at 4x capacity: each edge's admitted share / offered share (1: admitted in proportion to the offer)"
set ylabel "admitted share / offered share"
set xlabel "overload control (server half at the core, client half at each edge)"
set yrange [0:2.2]
plot ARG1 skip 1 using 10:11:xtic(1) lc rgb "#9467bd" title "edge0 (1/8 of the offer)", \
     '' skip 1 using 12:13 lc rgb "#c5b0d5" title "edge1 (1/8)", \
     '' skip 1 using 14:15 lc rgb "#2ca02c" title "edge2 (2/8)", \
     '' skip 1 using 16:17 lc rgb "#98df8a" title "edge3 (4/8)", \
     1 with lines dt 2 lw 2 lc rgb "black" title "proportional to the offer"
unset multiplot
"""


def plot(reps):
    common.gnuplot(PLOT, os.path.join(HERE, "figure.csv"), os.path.join(HERE, "figure.png"),
                   str(reps))


def check():
    ok = True
    # Jain's index by hand: (1 + 0.5)^2 / (2 (1 + 0.25)) = 2.25 / 2.5 = 0.9; one edge with all
    # of four: 1 / 4; equal: 1; nothing admitted: undefined.
    j = common.jain([1, 0.5])
    ok &= common.verdict(abs(j - 0.9) < 1e-12 and common.jain([3, 0, 0, 0]) == 0.25 and
                         abs(common.jain([0.2] * 4) - 1) < 1e-12 and common.jain([0, 0]) is None
                         and abs(closed_form_rate((1, 1, 2, 4)) - 7.5625 / 9.25) < 1e-12,
                         f"jain(): 0.9, 0.25, 1, none by hand; closed form for 1:1:2:4 "
                         f"{closed_form_rate((1, 1, 2, 4)):.4f} = 7.5625 / 9.25")
    reps = 3
    res = collect([(2, 4)], ("loss", "rate"), reps, 35, 5)
    lo, ra = res[(2, 4, "loss")], res[(2, 4, "rate")]
    d, hw = common.paired(col(lo, "jain_admitted"), col(ra, "jain_admitted"))
    jl = common.mean_hw(col(lo, "jain_admitted"))
    jr = common.mean_hw(col(ra, "jain_admitted"))
    ok &= common.verdict(jl[0] > 0.98 and d - hw > 0,
                         f"2 edges 1:2 at 4x: loss admits in proportion to the offer (Jain "
                         f"{jl[0]:.4f} +- {jl[1]:.4f}), above rate by {d:.4f} +- {hw:.4f} "
                         f"(paired, {reps} replications)")
    ok &= common.verdict(abs(jr[0] - closed_form_rate(SPLITS[2])) < 0.03,
                         f"rate gives each edge the same rate: Jain {jr[0]:.4f} +- {jr[1]:.4f} "
                         f"against the closed form {closed_form_rate(SPLITS[2]):.4f}")
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    reps = int(os.environ.get("STUDY10_REPS", "6"))
    if sys.argv[1:] == ["--plot"]:
        plot(reps)
        return
    warmup, time = 35, float(os.environ.get("STUDY10_TIME", "10"))
    cases = [(n, x) for n in SPLITS for x in LOADS]
    res = collect(cases, CONTROLS, reps, warmup, time)
    with open(os.path.join(HERE, "raw.json"), "w") as f:  # every replication's edges
        json.dump([[n, x, c, [e[0] for e in rr]] for (n, x, c), rr in res.items()], f)
    rows, prows, erows = [], [], []
    for n, x in cases:
        for c in CONTROLS:
            rr = res[(n, x, c)]
            r = (n, ":".join(str(w) for w in SPLITS[n]), x, c, reps)
            for m in ("jain_admitted", "jain_goodput", "jain_equal_rate", "admitted", "goodput"):
                r += common.mean_hw(col(rr, m))
            rows.append(r)
            for i in range(n):
                off = common.mean_hw([e[0][i][0] for e in rr])
                adm = common.mean_hw([e[0][i][1] for e in rr])
                rat = common.mean_hw([e[1]["ratio"][i] for e in rr])
                sh = common.mean_hw([e[1]["share_ratio"][i] or float("nan") for e in rr])
                erows.append((n, x, c, i) + off + adm + rat + sh)
            if c != "loss":
                base = res[(n, x, "loss")]
                for m in ("jain_admitted", "jain_goodput"):
                    a, b = col(rr, m), col(base, m)
                    if any(v != v for v in a + b):  # an index undefined: nothing admitted
                        prows.append((n, x, f"{c} - loss", m, reps, None, None, None, None))
                        continue
                    d, hw = common.paired(a, b)
                    wd, whw = common.welch(a, b)
                    prows.append((n, x, f"{c} - loss", m, reps, d, hw, wd, whw))
    h = ["edges", "shares", "load", "control", "reps", "jain_admitted", "hw", "jain_goodput",
         "hw_g", "jain_equal_rate", "hw_e", "admitted", "hw_a", "goodput", "hw_gp"]
    hp = ["edges", "load", "pair", "measure", "reps", "paired", "paired_hw", "welch", "welch_hw"]
    he = ["edges", "load", "control", "edge", "offered", "hw_o", "admitted", "hw_a",
          "admitted_over_offered", "hw_x", "share_ratio", "hw_s"]
    common.write_csv(os.path.join(HERE, "runs.csv"), rows, h)
    common.write_csv(os.path.join(HERE, "paired.csv"), prows, hp)
    common.write_csv(os.path.join(HERE, "edges.csv"), erows, he)
    frows = []
    for c in CONTROLS:
        r = [c]
        for n, x in cases:
            r += list(common.mean_hw(col(res[(n, x, c)], "jain_admitted")))
        rr = res[(4, 4, c)]
        for i in range(4):
            r += list(common.mean_hw([e[1]["share_ratio"][i] or float("nan") for e in rr]))
        frows.append(tuple(r))
    common.write_csv(os.path.join(HERE, "figure.csv"), frows,
                     ["control"] + [f"j{n}_{x}{s}" for n, x in cases for s in ("", "_hw")] +
                     [f"s{i}{s}" for i in range(4) for s in ("", "_hw")])
    fmt = {k: "{:.4f}" for k in h + hp + he}
    fmt.update({k: "{}" for k in ("edges", "shares", "load", "control", "reps", "pair",
                                  "measure", "edge")})
    for k in ("admitted", "hw_a", "goodput", "hw_gp", "offered", "hw_o"):
        fmt[k] = "{:.1f}"
    txt = (f"window {time:g} s after {warmup} s of warm-up, seeds 1..{reps} (one replication "
           f"each); closed form for equal rates: 1:2 {closed_form_rate(SPLITS[2]):.4f}, 1:1:2:4 "
           f"{closed_form_rate(SPLITS[4]):.4f}\n\n" + common.table(rows, h, fmt) + "\n" +
           common.table(prows, hp, fmt) + "\n" + common.table(erows, he, fmt))
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    plot(reps)


if __name__ == "__main__":
    main()
