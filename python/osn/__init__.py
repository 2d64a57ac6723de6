"""OSN from Python: `osn solve` and `osn optimize` in the process, over libosn (ctypes).

    import osn
    r = osn.solve(kind="two-loop", rate=1.2, overload_rate=0.6, L=10, H=15, R=20)
    r["P0"], r["T_ret"], r["T_ret_sd"]

    # Vectorised: one dict of keys per point, over keys common to all; a list of results back.
    curve = osn.solve([{"rate": x / 10} for x in range(5, 31)], L=10, H=15, R=20)

    # Best thresholds under constraints, as `osn optimize --json` gives them.
    best = osn.optimize(rate=1.2, R=20, max_throttle=0.5, max_discard=1e-3)
    best["found"], best["L"], best["H"], best["binding"]

    # ... or the least 99% quantile of the return time instead of its mean.
    tail = osn.optimize(rate=1.2, R=20, max_throttle=0.5, max_discard=1e-3, objective="T_ret_p99")
    tail["objective"], tail["objective_value"], tail["T_ret"]

A result is the dict that `osn solve --json` writes for the same scenario, number for number:
every measure as a float, None where it does not exist (T_disc when discard mode is never
entered), the scenario as solved under "scenario" and the OSN version under "osn_version". A
value outside the double range (T_ret = 9.07e+1400 at extreme load) stays exact as a string,
is listed in "beyond_double_range", and has a float KEY_log10 beside it.

Keys are those of `osn solve --help`, by their short name or as "section.key":

    kind policy                          [model]
    L H R B L1 H1 L2 H2                  [thresholds]
    rate overload_rate overload_accept flows rate1 rate2
    process phase_rates phase_switch overload_rates              [arrivals]
    mu (= service.rate) law k probs rates cv sigma samples (= service.file)  [service]
    objective max_throttle max_loss max_discard min_cycle        [optimize], osn.optimize

A list or tuple value is written comma-separated (phase_rates=[0.4, 3]). `scenario=` names a
scenario file read first, as `osn solve FILE`; `method=` is "auto", "general" or "closed".
A bad key or value raises osn.ScenarioError with the command's message, naming the key.

The library is found beside the installed module (make install), or where the environment
variable OSN_LIBRARY points (a build tree: OSN_LIBRARY=build/libosn.so PYTHONPATH=python).
"""

import ctypes
import json
import os
import warnings

__all__ = ["solve", "optimize", "version", "ScenarioError", "KEYS"]

# Short name -> scenario key.
KEYS = {
    "kind": "model.kind",
    "policy": "model.policy",
    "L": "thresholds.L",
    "H": "thresholds.H",
    "R": "thresholds.R",
    "B": "thresholds.B",
    "L1": "thresholds.L1",
    "H1": "thresholds.H1",
    "L2": "thresholds.L2",
    "H2": "thresholds.H2",
    "rate": "arrivals.rate",
    "overload_rate": "arrivals.overload_rate",
    "overload_accept": "arrivals.overload_accept",
    "flows": "arrivals.flows",
    "rate1": "arrivals.rate1",
    "rate2": "arrivals.rate2",
    "process": "arrivals.process",
    "phase_rates": "arrivals.phase_rates",
    "phase_switch": "arrivals.phase_switch",
    "overload_rates": "arrivals.overload_rates",
    "mu": "service.rate",
    "law": "service.law",
    "k": "service.k",
    "probs": "service.probs",
    "rates": "service.rates",
    "cv": "service.cv",
    "sigma": "service.sigma",
    "samples": "service.file",
    "objective": "optimize.objective",
    "max_throttle": "optimize.max_throttle",
    "max_loss": "optimize.max_loss",
    "max_discard": "optimize.max_discard",
    "min_cycle": "optimize.min_cycle",
}


class ScenarioError(ValueError):
    """A scenario the solver refuses: the message is `osn solve`'s, naming the key."""


def _load_library():
    path = os.environ.get("OSN_LIBRARY")
    if not path:
        try:
            from . import _where
        except ImportError as e:  # the source tree, not an installed module
            raise ImportError(
                "osn: libosn not found: install OSN (make install) or set OSN_LIBRARY to "
                "the path of libosn.so"
            ) from e
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.normpath(os.path.join(here, _where.LIBDIR_FROM_MODULE, _where.LIBRARY))
    lib = ctypes.CDLL(path)
    lib.osn_solve_json.argtypes = [
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.osn_solve_json.restype = ctypes.c_int
    lib.osn_optimize_json.argtypes = [
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.osn_optimize_json.restype = ctypes.c_int
    lib.osn_json_free.argtypes = [ctypes.c_void_p]
    lib.osn_json_free.restype = ctypes.c_void_p
    lib.osn_version.argtypes = []
    lib.osn_version.restype = ctypes.c_char_p
    return lib


_lib = _load_library()


def version():
    """The OSN version of the library (git describe at build time)."""
    return _lib.osn_version().decode()


def _value(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    if isinstance(v, float):
        return repr(v)  # shortest string that reads back as the same double
    return str(v)


def _sets(keys):
    out = []
    for name, v in keys.items():
        key = name if "." in name else KEYS.get(name)
        if key is None:
            raise ScenarioError(
                f"unknown key '{name}': use a short name ({', '.join(KEYS)}) or 'section.key'"
            )
        out.append(f"{key}={_value(v)}")
    return out


def _call(fn, scenario, keys, *extra):
    """fn(scenario, sets, nsets, *extra, &json, err, errsize) -> the document as a dict."""
    sets = [s.encode() for s in _sets(keys)]
    argv = (ctypes.c_char_p * max(len(sets), 1))(*sets)
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    rc = fn(
        os.fsencode(scenario) if scenario is not None else None,
        argv,
        len(sets),
        *extra,
        ctypes.byref(out),
        err,
        len(err),
    )
    if rc != 0:
        raise ScenarioError(err.value.decode(errors="replace"))
    try:
        return json.loads(ctypes.string_at(out.value).decode())
    finally:
        _lib.osn_json_free(out)


def _solve_one(scenario, method, keys):
    return _call(_lib.osn_solve_json, scenario, keys, method.encode() if method else None)


def _optimize_one(scenario, keys):
    return _call(_lib.osn_optimize_json, scenario, keys)


def _each(one, points, keys):
    if points is None:
        return one(keys)
    if isinstance(points, dict):
        raise TypeError("osn: points is a list of dicts; for one model pass keywords")
    return [one({**keys, **p}) for p in points]


def solve(points=None, *, scenario=None, method=None, **keys):
    """Exact measures of one model (keyword keys), or of each point of a list.

    solve(rate=1.2, L=10, H=15, R=20) -> dict
    solve([{"rate": 0.9}, {"rate": 1.2}], L=10, H=15, R=20) -> [dict, dict]

    A point's keys are applied over the keyword keys, which apply over `scenario` (a file).
    """
    return _each(lambda k: _solve_one(scenario, method, k), points, keys)


class InfeasibleWarning(UserWarning):
    """osn.optimize found no thresholds that meet every constraint (the result's found is False)."""


def optimize(points=None, *, scenario=None, **keys):
    """The best thresholds under constraints (`osn optimize --json`), for one model or each point.

    optimize(rate=1.2, R=20, max_throttle=0.5, max_discard=1e-3) -> dict with L, H, found,
    binding, constraints, next_better, unconstrained, and every measure at the optimum.
    objective="T_ret_p95" or "T_ret_p99" minimises that quantile of the return time instead of
    its mean (exponential service only); the result's objective and objective_value say which.
    The searched pair's keys (L, H; L1, H1 for bi-level) are ignored, as by the command.
    When no pair meets the constraints, found is False (L and H are still filled in) and an
    osn.InfeasibleWarning is issued for each such point.
    """
    out = _each(lambda k: _optimize_one(scenario, k), points, keys)
    # The command prints "no feasible thresholds"; a dict says it only in "found", with L and H
    # filled in even then, so a caller reading only L and H would take them for an answer.
    for i, r in enumerate(out if isinstance(out, list) else [out]):
        if r.get("found") is False:
            where = f"point {i}: " if isinstance(out, list) else ""
            warnings.warn(
                f"osn.optimize: {where}no thresholds meet the constraints (found: False); "
                f"L={r.get('L')}, H={r.get('H')} break at least one (see the result's "
                "'constraints'): loosen a bound or raise R",
                InfeasibleWarning,
                stacklevel=2,
            )
    return out
