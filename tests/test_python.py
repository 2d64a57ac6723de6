"""The Python module (python/osn) against the command: `osn.solve(...)` must give the dict that
`osn solve --set ... --json` writes for the same scenario, value for value (`osn.optimize` that
of `osn optimize --json`, on every example of examples/optimize/), over the models the
solver has (two-loop, single-loop, bi-level, two flows, MMPP, policy II, constant service,
extreme load beyond the double range), one at a time and vectorised; bad keys must raise with
the command's message; the T_ret of the tour's model must equal its closed form.

    PYTHONPATH=<installed module dir> python3 tests/test_python.py OSN SOURCE_DIR
"""

import json
import math
import os
import subprocess
import sys
import re
import tempfile
import warnings

import osn

OSN, SRC = sys.argv[1], sys.argv[2]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def cli(sets, scenario=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [OSN, "solve", "-q", "--json", out]
        if scenario:
            cmd.insert(2, scenario)
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        with open(out) as f:
            return json.load(f)


def same(a, b, where):
    """Equal documents, except scenario.source/keys, which differ by design only in origin."""
    for k in set(a) | set(b):
        if k == "scenario":
            continue
        check(k in a and k in b, f"{where}: key {k} only in one of module / command")
        if k in a and k in b:
            check(a[k] == b[k], f"{where}: {k}: module {a[k]!r} vs command {b[k]!r}")
    sa, sb = a.get("scenario", {}), b.get("scenario", {})
    for k in set(sa) | set(sb):
        if k in ("keys",):
            continue
        check(sa.get(k) == sb.get(k), f"{where}: scenario.{k}: {sa.get(k)!r} vs {sb.get(k)!r}")
    check(sa.get("keys") == sb.get("keys"), f"{where}: scenario.keys differ")


CASES = [
    dict(kind="two-loop", rate=1.2, overload_rate=0.6, L=10, H=15, R=20),
    dict(kind="single-loop", rate=1.5, overload_accept=0.5, L=5, H=10, B=20),
    dict(kind="bi-level", rate=1.2, L1=5, H1=10, L2=15, H2=20, R=20),
    dict(flows=2, rate1=0.7, rate2=0.6, L=5, H=10, R=20),
    dict(policy="II", rate=1.2, L=5, H=10, R=20),
    dict(law="det", rate=0.9, L=5, H=10, R=20),
    dict(process="mmpp", phase_rates=[0.4, 3.0], phase_switch=[0.1, 0.3], L=5, H=10, R=20),
    dict(rate=50, L=0, H=1000, R=2000),
]

for case in CASES:
    r = osn.solve(**case)
    c = cli([f"{osn.KEYS[k]}={osn._value(v)}" for k, v in case.items()])
    same(r, c, f"osn.solve({case})")

# The tour's model: T_ret has a closed form, 12.5 - 7.5 * 0.6^5 (docs/models.md).
r = osn.solve(kind="two-loop", rate=1.2, overload_rate=0.6, L=10, H=15, R=20)
ref = 12.5 - 7.5 * 0.6**5
check(abs(r["T_ret"] - ref) < 1e-12 * ref, f"T_ret {r['T_ret']} vs closed form {ref}")
check(abs(r["P0"] + r["P1"] + r["P2"] - 1) < 1e-14, "P0 + P1 + P2 = 1")
check(r.get("osn_version") == osn.version(), "osn_version in the result is the library's")
# The return time's quantiles come with the measures (exponential service), in order.
check(r["T_ret_p50"] < r["T_ret_p90"] < r["T_ret_p95"] < r["T_ret_p99"], "T_ret quantiles ordered")

# Beyond the double range: exact string, listed, and a numeric log10 beside it.
x = osn.solve(rate=50, L=0, H=1000, R=2000)
check(isinstance(x["T_ret"], str) and "T_ret" in x["beyond_double_range"], "T_ret beyond doubles")
check(
    isinstance(x.get("T_ret_log10"), float) and abs(x["T_ret_log10"] - 1400.957) < 1e-3,
    f"T_ret_log10 = {x.get('T_ret_log10')!r}, expected 1400.957...",
)

# A scenario file, and keys over it.
path = os.path.join(SRC, "examples", "two_loop_l1.2_5_10.ini")
same(osn.solve(scenario=path, rate=1.5), cli(["arrivals.rate=1.5"], path), "scenario file")

# Vectorised: one call, a list back, each as the command gives it.
rates = [0.5, 0.9, 1.2, 1.5, 3.0]
curve = osn.solve([{"rate": x} for x in rates], L=10, H=15, R=20)
check(len(curve) == len(rates), "one result per point")
for x, r in zip(rates, curve):
    same(
        r,
        cli([f"arrivals.rate={x!r}", "thresholds.L=10", "thresholds.H=15", "thresholds.R=20"]),
        f"vectorised rate={x}",
    )
check(all(a["T_ret"] < b["T_ret"] for a, b in zip(curve, curve[1:])), "T_ret grows with load")

# Errors: the command's message, naming the key; nothing returned.
for bad, text in [
    (dict(H=30), "H = 30 must be less than R = 20"),
    (dict(rate=-1), "arrivals.rate"),
    (dict(colour="red"), "unknown key 'colour'"),
    ({"arrivals.colour": "red"}, "colour"),
]:
    try:
        osn.solve(**bad)
        check(False, f"osn.solve({bad}) did not raise")
    except osn.ScenarioError as e:
        check(text in str(e), f"osn.solve({bad}): message {e} lacks {text!r}")
try:
    osn.solve(method="closed", kind="bi-level")
    check(False, "method closed on bi-level did not raise")
except osn.ScenarioError as e:
    check("closed" in str(e), f"method closed message: {e}")

# osn.optimize against `osn optimize --json`: the example files, keys over a file, a list.
def cli_opt(sets, scenario=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [OSN, "optimize", "-q", "--json", out] + ([scenario] if scenario else [])
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        with open(out) as f:
            return json.load(f)


opt_dir = os.path.join(SRC, "examples", "optimize")
for name in sorted(os.listdir(opt_dir)):
    path = os.path.join(opt_dir, name)
    same(osn.optimize(scenario=path), cli_opt([], path), f"osn.optimize({name})")
path = os.path.join(opt_dir, "two_loop_constrained.ini")
same(
    osn.optimize(scenario=path, max_discard=2e-3),
    cli_opt(["optimize.max_discard=0.002"], path),
    "osn.optimize with a key over the file",
)
# The objective as a keyword: a quantile of the return time, as `osn optimize` gives it; a name
# it does not know raises, naming the key.
q = osn.optimize(scenario=path, objective="T_ret_p95")
same(q, cli_opt(["optimize.objective=T_ret_p95"], path), "osn.optimize objective=T_ret_p95")
check(q["objective"] == "T_ret_p95" and q["objective_value"] == q["T_ret_p95"],
      f"objective T_ret_p95: {q['objective']} {q['objective_value']}")
try:
    osn.optimize(scenario=path, objective="p95")
    check(False, "optimize objective=p95 did not raise")
except osn.ScenarioError as e:
    check("optimize.objective" in str(e), f"optimize objective=p95 message: {e}")
pts = osn.optimize([{"rate": 0.9}, {"rate": 1.5}], R=20, max_throttle=0.5, max_discard=1e-3)
for x, r in zip((0.9, 1.5), pts):
    c = cli_opt([f"arrivals.rate={x}", "thresholds.R=20", "optimize.max_throttle=0.5",
                 "optimize.max_discard=0.001"])
    same(r, c, f"osn.optimize vectorised rate={x}")
    # Found: every bound met at the optimum; not found: the closest pair violates some.
    met = all(
        (c["value"] <= c["bound"]) if k != "min_cycle" else (c["value"] >= c["bound"])
        for k, c in r["constraints"].items()
    )
    check(met == r["found"], f"rate={x}: found = {r['found']} but bounds met = {met}")
    check(r["found"] or r["closest_violation"] > 0, f"rate={x}: closest pair violation")
try:  # hours even screened (the two-loop M|M|1 scan; R = 5000 runs in seconds now)
    osn.optimize(R=400000)
    check(False, "optimize R=400000 did not raise")
except osn.ScenarioError as e:
    check("thresholds.R" in str(e) and "hours" in str(e), f"optimize R=400000 message: {e}")

# The examples of osn.optimize in the README and the module's docstring are feasible: found is
# True and the constraints hold at L, H by osn.solve's own measures; a bound no pair meets gives
# found False and one osn.InfeasibleWarning per such point (the README's example once returned
# found False with L and H filled in, and nothing said so).
for page in ("README.md", os.path.join("python", "osn", "__init__.py")):
    with open(os.path.join(SRC, page)) as f:
        calls = re.findall(r"osn\.optimize\((rate=[^()]*)\)", f.read())
    check(calls, f"{page}: no osn.optimize(rate=...) example found")
    for args in calls:
        kw = eval(f"dict({args})")
        with warnings.catch_warnings():
            warnings.simplefilter("error", osn.InfeasibleWarning)
            best = osn.optimize(**kw)
        check(best["found"] is True, f"{page}: osn.optimize({args}) is infeasible")
        at = osn.solve(rate=kw["rate"], R=kw["R"], L=best["L"], H=best["H"])
        check(at["P1"] + at["P2"] <= kw["max_throttle"] and at["P2"] <= kw["max_discard"],
              f"{page}: osn.optimize({args}): L={best['L']}, H={best['H']} break a bound "
              f"(P1+P2={at['P1'] + at['P2']}, P2={at['P2']})")
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    bad = osn.optimize(rate=1.2, R=20, max_throttle=0.3, max_discard=1e-3)
at = osn.solve(rate=1.2, R=20, L=bad["L"], H=bad["H"])
check(bad["found"] is False and (at["P1"] + at["P2"] > 0.3 or at["P2"] > 1e-3),
      f"max_throttle=0.3: expected found False at a pair breaking a bound: {bad['found']}, {at}")
check([w.category for w in seen] == [osn.InfeasibleWarning]
      and "found: False" in str(seen[0].message),
      f"max_throttle=0.3: expected one InfeasibleWarning, got {[str(w.message) for w in seen]}")
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    two = osn.optimize([{"max_throttle": 0.5}, {"max_throttle": 0.3}], rate=1.2, R=20,
                       max_discard=1e-3)
check([r["found"] for r in two] == [True, False] and len(seen) == 1
      and "point 1:" in str(seen[0].message),
      f"a list with one infeasible point: {[r['found'] for r in two]}, "
      f"{[str(w.message) for w in seen]}")


print(f"test_python: {'FAILED, ' + str(failures) + ' failures' if failures else 'all passed'}")
sys.exit(1 if failures else 0)
