#!/usr/bin/python3
"""Peer benchmark for the return time's distribution: SciPy's expm_multiply on the same chain.

The two-loop chain of bench/scipy_peer.py (the same assembly), restricted to the overload
states (modes 1 and 2): P(T_ret > t) = e_(1,H) exp(Q_AA t) 1, computed by
scipy.sparse.linalg.expm_multiply on an even grid of t (the Al-Mohy-Higham algorithm: a
truncated Taylor series with scaling), and its p50 and p95 by linear interpolation on that grid.
Usage: /usr/bin/python3 bench/tret_peer.py R TMAX [--points N]  (L = R/4, H = R/2, lambda = 1.2,
lambda' = 0.6, mu = 1). Prints one line of key=value pairs.
"""

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scipy_peer import assemble, layout  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("R", type=int)
    ap.add_argument("tmax", type=float)
    ap.add_argument("--points", type=int, default=201)
    a = ap.parse_args()
    R = a.R
    L, H = R // 4, R // 2
    t0 = time.perf_counter()
    rows, cols, vals, ns, idx = assemble(L, H, R, 1.2, 0.6, 1.0)
    qt = sp.csc_matrix((vals, (rows, cols)), shape=(ns, ns))
    _, o1, _, _ = layout(L, H, R)
    q = qt.T.tocsr()[o1:, o1:]  # sub-generator of the overload states
    start = idx[1](H) - o1
    v = spla.expm_multiply(q, np.ones(q.shape[0]), start=0, stop=a.tmax, num=a.points,
                           endpoint=True)
    surv = v[:, start]
    dt = time.perf_counter() - t0
    t = np.linspace(0, a.tmax, a.points)

    def quantile(p):
        s = 1 - p
        k = int(np.argmax(surv <= s))
        w = (surv[k - 1] - s) / (surv[k - 1] - surv[k])
        return t[k - 1] + w * (t[k] - t[k - 1])

    print("R=%d states=%d seconds=%.4f p50=%.10g p95=%.10g" % (R, q.shape[0], dt, quantile(0.5),
                                                                quantile(0.95)))


main()
