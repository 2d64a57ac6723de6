#!/usr/bin/env python3
"""The judgements of bench/node_maxrate.sh, apart from its processes, so that they can be tested.

    node_maxrate.py step KEY=VALUE...
        one step's row and verdict: prints "VERDICT WHY ROW" (VERDICT yes or no, WHY the
        bottleneck or "-"); exit 2 on a missing or malformed key
    node_maxrate.py summary RESULTS TOP DURATION
        RESULTS has one line per step, "RUN GEN PROXY RATE VERDICT WHY" (VERDICT yes, no or
        error); TOP is the highest rate asked. Prints the highest rate each generator and
        proxy held in each run, then the ratios pair by pair: osn/kamailio for each run and
        generator that raced both proxies, osn/sipp (the generators) for each run and proxy
        both drove, each as median and range over the pairs.

A step is held when every call asked for was answered, the generator offered at least 95% of
the rate, the p99 INVITE -> answer time stayed below T1 (500 ms) and nothing was refused for
want of room (the node's refused_at_cap, Kamailio's memory errors). With SIPp as the generator
the calls asked are RATE x DURATION (SIPp's -m), its rate is that of its INVITEs, first to last
(-trace_rtt), and the time is INVITE -> 200. OSN's generator draws Poisson arrivals, so the
calls asked are those it started: all must end good (no failure, abandonment or unfinished
call), and the start count may fall short of RATE x DURATION by 5% plus Poisson's own noise
(3 standard deviations, sqrt(RATE x DURATION)); a generator that falls behind drops the
arrivals still due at the end (gen_drain), so a lagging generator fails this. Its time is
INVITE -> 180 (setup_delay_p99); both uas (osn's, SIPp's built-in) send the 200 right after the
180, so the two times differ by one turn of the uas.
"""
import csv
import glob
import json
import math
import statistics
import sys

T1_MS = 500.0


class Bad(Exception):
    pass


def kv(args):
    d = {}
    for a in args:
        k, eq, v = a.partition("=")
        if not eq:
            raise Bad("'%s' is not KEY=VALUE" % a)
        d[k] = v
    return d


def num(d, k, default=None):
    v = d.get(k, "")
    if v in ("", "-"):
        if default is None:
            raise Bad("step: key %s missing" % k)
        return default
    try:
        return float(v)
    except ValueError:
        raise Bad("step: %s='%s' is not a number" % (k, v))


def sipp_rtt(dirname):
    """(INVITE rate achieved, p99 INVITE -> 200 in ms) from SIPp's -trace_rtt rows (answer
    time ms, INVITE -> 200 ms, rtd): the INVITEs went at time - rtt, so their span gives the
    rate SIPp achieved."""
    sent, rtt = [], []
    for f in glob.glob(dirname + "/*_rtt.csv"):
        for r in csv.reader(open(f), delimiter=";"):
            try:
                t, d, k = float(r[0]), float(r[1]), r[2].strip()
            except (ValueError, IndexError):
                continue
            if k == "1":
                sent.append(t - d)
                rtt.append(d)
    sent.sort()
    rtt.sort()
    crate = 0.0
    if len(sent) > 1 and sent[-1] > sent[0]:
        crate = (len(sent) - 1) / ((sent[-1] - sent[0]) / 1000)
    p99 = rtt[min(len(rtt) - 1, int(0.99 * len(rtt)))] if rtt else float("nan")
    return crate, p99


def osn_gen(paths):
    """The generators' summaries (comma-separated files, one per process): (calls started,
    good, achieved rate, p99 ms, lag s, failures, retransmissions). Counts add up; the p99 is
    the largest of the processes' p99s, an upper bound of the p99 of all their calls (when no
    process has more than 1% of its calls above a bound, neither have all of them together);
    the lag is the largest."""
    started = good = bad = retr = 0
    dur, lag, p99 = 0.0, 0.0, -1.0
    for path in paths.split(","):
        try:
            j = json.load(open(path))
            u = j["uac"]
            started += int(u["calls_started"])
            good += int(u["good"])
            bad += sum(int(u[k]) for k in ("failed_timeout", "failed_rejected", "failed_other",
                                           "abandoned", "unfinished"))
            dur, lag = float(u["duration"]), max(lag, float(j["lag_max"]))
            retr += int(j.get("retrans_sent", 0))
            v = j["setup_delay_p99"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise Bad("step: the generator's summary %s: %s" % (path, e))
        p99 = float("nan") if v is None or p99 != p99 else max(p99, 1000 * float(v))
    return started, good, started / dur if dur > 0 else 0.0, p99, lag, bad, retr


def step(d):
    gen, px = d.get("gen", ""), d.get("px", "")
    if gen not in ("sipp", "osn") or px not in ("direct", "osn", "kamailio"):
        raise Bad("step: gen='%s' px='%s' (gen sipp|osn, px direct|osn|kamailio)" % (gen, px))
    rate, dur, hz, el = num(d, "rate"), num(d, "duration"), num(d, "hz"), num(d, "el")
    pu0, ps0, pu1, ps1 = (num(d, k, 0) for k in ("pu0", "ps0", "pu1", "ps1"))
    uc = 100 * num(d, "uac_ticks", 0) / hz / el
    sc = 100 * num(d, "uas_ticks", 0) / hz / el
    pu, ps = 100 * (pu1 - pu0) / hz / el, 100 * (ps1 - ps0) / hz / el
    cap = d.get("cap", "0")
    cap = int(cap) if cap.isdigit() else -1
    d_uac, d_px, d_uas = (int(num(d, k, 0)) for k in ("d_uac", "d_px", "d_uas"))
    wd, retr, lag = d.get("wd", "-"), d.get("retr", "-"), None
    if gen == "sipp":
        asked = int(rate * dur)
        ok, out = int(num(d, "ok", 0)), int(num(d, "out", 0))
        crate, p99 = sipp_rtt(d.get("uac_dir", ""))
        offered_ok = out == asked and crate >= 0.95 * rate
        answered = ok == asked
    else:
        out, ok, crate, p99, lag, bad, retr = osn_gen(d.get("gen_json", ""))
        asked = out
        need = 0.95 * rate * dur - 3 * math.sqrt(rate * dur)
        offered_ok = out >= need
        answered = ok == out and bad == 0 and out > 0
    held = answered and offered_ok and p99 < T1_MS and cap == 0
    gname = "SIPp-uac" if gen == "sipp" else "osn-uac"
    uname = d.get("uas_kind", "SIPp") + "-uas"
    if held:
        why = "-"
    elif cap != 0:
        why = "refusals-at-the-cap"
    elif uc >= 90 or wd not in ("0/0", "/", "-") or (lag is not None and lag >= 0.5):
        why = gname
    elif pu + ps >= 90:
        why = "proxy"
    elif sc >= 90:
        why = uname
    elif max(d_uac, d_px, d_uas) > 0:
        # no process had a whole core (a shared machine starves them all): the socket that
        # overflowed most belongs to the one that fell furthest behind; ties to the generator
        why = max(((d_uac, 2, gname), (d_px, 1, "proxy"), (d_uas, 0, uname)))[2]
    else:
        why = "losses-or-delay"
    dpc = "-"
    lim = num(d, "lim", 0)
    din, dout = d.get("din", "-"), d.get("dout", "-")
    if px == "osn" and din.isdigit() and dout.isdigit() and pu1 + ps1 > pu0 + ps0:
        v = (int(din) + int(dout)) / 2 / ((pu1 + ps1 - pu0 - ps0) / hz)
        dpc = "%.0f" % v + ("(%.2f)" % (v / lim) if lim > 0 else "")
    notes = "held=%s" % ("yes" if held else "no")
    if gen == "sipp":
        notes += " watchdog(major/minor)=%s" % wd
    else:
        notes += " lag_max=%.0fms" % (1000 * lag)
    notes += " retrans=%s refused(cap/mem)=%s rcvbuf-drops(uac/proxy/uas)=%d/%d/%d" % (
        retr, str(cap) if px != "direct" or gen == "osn" else "-", d_uac, d_px, d_uas)
    if d.get("rss_kb", "-").isdigit():
        notes += " proxy-rss=%dMiB" % (int(d["rss_kb"]) // 1024)
    row = "%-4s %-9s %6d %7d %7d %7.0f %7.0f | %5.0f%% %5.0f%% %7s %7s | %-15s | %s" % (
        gen, px, rate, asked, ok, crate, p99, pu, ps, "%.0f%%" % uc, "%.0f%%" % sc, dpc, notes)
    return "yes" if held else "no", why, row


def span(v):
    return "%.2f [%.2f, %.2f] over %d pair%s" % (
        statistics.median(v), min(v), max(v), len(v), "" if len(v) == 1 else "s")


def summary(path, top, duration):
    """Highest held per (run, gen, proxy): the last rate of the unbroken run of 'yes' from the
    lowest rate (a contestant leaves the race at its first rate not held)."""
    steps = {}
    order = []
    for n, line in enumerate(open(path), 1):
        f = line.split(None, 5)
        if not f:
            continue
        if len(f) < 5 or not f[3].isdigit() or f[4] not in ("yes", "no", "error"):
            raise Bad("%s:%d: not 'RUN GEN PROXY RATE VERDICT [WHY]'" % (path, n))
        key = (f[0], f[1], f[2])
        if key not in steps:
            steps[key] = []
            order.append(key)
        steps[key].append((int(f[3]), f[4], f[5].strip() if len(f) > 5 else ""))
    best, lower = {}, {}
    for key in order:
        b, limit = 0, "every rate asked was held"
        for rate, verdict, why in sorted(steps[key]):
            if verdict != "yes":
                limit = ("a failed step" if verdict == "error" else why or "?") + \
                    " at %d calls/s" % rate
                break
            b = rate
        best[key] = b
        lower[key] = b >= top  # held the highest rate asked: its own limit is above it
        print("run %s, generator %s, %s: highest held: %d calls/s for %d s (limited by: %s)"
              % (key[0], key[1], "no proxy" if key[2] == "direct" else "proxy " + key[2], b,
                 duration, limit))
    # ratios: proxies against each other under one generator, generators under one proxy
    for what, num_k, den_k, goal in (
            ("osn/kamailio highest rate held", lambda r, g: (r, g, "osn"),
             lambda r, g: (r, g, "kamailio"), "goal >= 2"),
            ("osn/sipp generator highest rate held", lambda r, p: (r, "osn", p),
             lambda r, p: (r, "sipp", p), "goal >= 2")):
        vals, bounds, none = [], 0, 0
        groups = sorted({(k[0], k[2] if "generator" in what else k[1]) for k in order})
        for r, x in groups:
            a, b = num_k(r, x), den_k(r, x)
            if a not in best or b not in best:
                continue
            if best[b] == 0:
                none += 1
                continue
            vals.append(best[a] / best[b])
            bounds += lower[a]
        if not vals and not none:
            continue
        line = what + ": "
        line += span(vals) if vals else "n/a"
        if none:
            line += "; %d pair%s where the second held no rate" % (none, "" if none == 1 else "s")
        line += " (%s" % goal
        if bounds:
            line += "; %d of %d a lower bound: the first held the highest rate asked" % (
                bounds, len(vals))
        print(line + "; rates from the list RATES, so only as fine as the list)")


def main(argv):
    try:
        if len(argv) >= 2 and argv[1] == "step":
            print(*step(kv(argv[2:])))
            return 0
        if len(argv) == 5 and argv[1] == "summary":
            summary(argv[2], int(argv[3]), int(argv[4]))
            return 0
    except Bad as e:
        print("node_maxrate.py: %s" % e, file=sys.stderr)
        return 2
    print("usage: node_maxrate.py step KEY=VALUE... | summary RESULTS TOP DURATION",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
