#!/usr/bin/python3
"""Peer benchmark for bench_solve: the two-loop M|M|1|<L,H>|<H,R> chain solved by SciPy.

Builds the same CTMC generator as OSN's structured solver (docs/models.md, policy I) as a
scipy.sparse matrix and solves pi Q = 0 with scipy.sparse.linalg.spsolve (SuperLU). The
normalisation pins one state: the balance equation of the pinned state (its row of Q^T) is
replaced by p(pin) = 1, then the solution is scaled to sum 1. A dense row of ones would destroy
sparsity (SuperLU fills it in), so it is not used.

Which state is pinned matters at large R. With lambda > mu the probability of (0,0) relative to
the bulk is about (mu/lambda)^L, 10^-19795 at R = 1e6: with p(0,0) = 1 the exact solution does
not fit a double. (SuperLU then returns a finite vector that is wrong below level L -- at R = 1e5
its largest entry is 1.8e10 instead of ~1e1979 -- and the mode totals survive only because that
part carries no mass.) The default pin ("auto") is a state in the bulk: (0,0) when lambda <= mu,
(0,L) when lambda > mu >= lambda', (2,R) when lambda' > mu. States far below the pin then
underflow to 0, which is harmless for the measures printed here; OSN's solver keeps them in
extended range. --pin 00 gives the literal p(0,0) = 1 variant.

Usage: /usr/bin/python3 bench/scipy_peer.py R [--lambda X] [--lambda1 X] [--mu X] [--L N] [--H N]
       [--pin auto|00|0L|2R] [--min-seconds S]
Defaults: L = R/4, H = R/2, lambda = 1.2, lambda' = 0.6, mu = 1, as bench_solve.
Prints one line of key=value pairs. Needs Debian's python3-scipy (call /usr/bin/python3).
"""

import argparse
import math
import resource
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def layout(L, H, R):
    """Index offsets of modes 0, 1, 2 and the number of states."""
    n0 = H  # (0,n), n = 0..H-1
    n1 = R - 1 - L  # (1,n), n = L+1..R-1
    n2 = R - H  # (2,n), n = H+1..R
    return 0, n0, n0 + n1, n0 + n1 + n2


def assemble(L, H, R, lam, lam1, mu):
    """Q^T as CSC, with states ordered (0,0..H-1), (1,L+1..R-1), (2,H+1..R)."""
    o0, o1, o2, ns = layout(L, H, R)

    def i0(n):
        return o0 + n

    def i1(n):
        return o1 + (n - L - 1)

    def i2(n):
        return o2 + (n - H - 1)

    src, dst, rate = [], [], []

    def add(s, d, r):
        src.append(s)
        dst.append(d)
        rate.append(np.full(len(s), r))

    # Mode 0: arrivals at lambda; the one reaching H starts overload at (1,H).
    n = np.arange(0, H - 1)
    add(i0(n), i0(n + 1), lam)
    add(np.array([i0(H - 1)]), np.array([i1(H)]), lam)
    # Mode 0: departures at mu.
    n = np.arange(1, H)
    add(i0(n), i0(n - 1), mu)
    # Mode 1: arrivals at lambda'; the one reaching R starts discard at (2,R).
    n = np.arange(L + 1, R - 1)
    add(i1(n), i1(n + 1), lam1)
    add(np.array([i1(R - 1)]), np.array([i2(R)]), lam1)
    # Mode 1: departures; the one reaching L abates overload to (0,L).
    n = np.arange(L + 2, R)
    add(i1(n), i1(n - 1), mu)
    add(np.array([i1(L + 1)]), np.array([i0(L)]), mu)
    # Mode 2: no arrivals; departures, the one reaching H returns to (1,H).
    n = np.arange(H + 2, R + 1)
    add(i2(n), i2(n - 1), mu)
    add(np.array([i2(H + 1)]), np.array([i1(H)]), mu)

    src = np.concatenate(src)
    dst = np.concatenate(dst)
    rate = np.concatenate(rate)
    out = np.bincount(src, weights=rate, minlength=ns)
    diag = np.arange(ns)
    # Q^T: entry (to, from) = q(from, to); diagonal -out(i).
    rows = np.concatenate([dst, diag])
    cols = np.concatenate([src, diag])
    vals = np.concatenate([rate, -out])
    return rows, cols, vals, ns, (i0, i1, i2)


def pin_state(pin, L, H, R, lam, lam1, mu, idx):
    i0, i1, i2 = idx
    if pin == "auto":
        pin = "00" if lam <= mu else ("0L" if lam1 <= mu else "2R")
    return pin, {"00": i0(0), "0L": i0(L), "2R": i2(R)}[pin]


def solve(rows, cols, vals, ns, k):
    """Replaces the balance equation of state k by p(k) = 1 and solves; returns pi unnormalised."""
    keep = rows != k
    rows = np.concatenate([rows[keep], [k]])
    cols = np.concatenate([cols[keep], [k]])
    vals = np.concatenate([vals[keep], [1.0]])
    A = sp.csc_matrix((vals, (rows, cols)), shape=(ns, ns))
    b = np.zeros(ns)
    b[k] = 1.0
    return spla.spsolve(A, b)


def closed_t_ret(L, H, R, lam1, mu):
    """docs/models.md closed form for T_ret, evaluated without overflow."""
    if lam1 == mu:
        return (H - L) * (R - L + 2) / (2 * mu)
    lr = math.log(mu / lam1)
    # (r^H - r^L) / (r^R - r^H), each power scaled by the largest of the pair.
    if lr > 0:
        q = math.exp((H - R) * lr) * (-math.expm1((L - H) * lr)) / (-math.expm1((H - R) * lr))
    else:
        q = math.exp((L - H) * lr) * math.expm1((H - L) * lr) / math.expm1((R - H) * lr)
    return (H - L) / (mu - lam1) - (R - H) * lam1 * q / (mu * (mu - lam1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("R", type=float)
    ap.add_argument("--lambda", dest="lam", type=float, default=1.2)
    ap.add_argument("--lambda1", dest="lam1", type=float, default=0.6)
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--L", type=int)
    ap.add_argument("--H", type=int)
    ap.add_argument("--pin", choices=["auto", "00", "0L", "2R"], default="auto")
    ap.add_argument("--min-seconds", type=float, default=0.5)
    a = ap.parse_args()
    R = int(a.R)
    L = a.L if a.L is not None else R // 4
    H = a.H if a.H is not None else R // 2
    if not (0 <= L < H < R):
        sys.exit("scipy_peer: need 0 <= L < H < R")

    # Assemble and solve until min-seconds have passed or 3 repeats, at most 50; medians.
    t_asm, t_sol, t_tot = [], [], []
    while True:
        t0 = time.monotonic()
        rows, cols, vals, ns, idx = assemble(L, H, R, a.lam, a.lam1, a.mu)
        pin, k = pin_state(a.pin, L, H, R, a.lam, a.lam1, a.mu, idx)
        t1 = time.monotonic()
        x = solve(rows, cols, vals, ns, k)
        t2 = time.monotonic()
        with np.errstate(over="ignore", invalid="ignore"):
            p = x / x.sum()
            o0, o1, o2, _ = layout(L, H, R)
            P = [p[o0:o1].sum(), p[o1:o2].sum(), p[o2:].sum()]
            nu01 = a.lam * p[idx[0](H - 1)]
            t_ret = (P[1] + P[2]) / nu01
        t3 = time.monotonic()
        t_asm.append(t1 - t0)
        t_sol.append(t2 - t1)
        t_tot.append(t3 - t0)
        if len(t_tot) >= 50 or (len(t_tot) >= 3 and sum(t_tot) >= a.min_seconds):
            break

    med = float(np.median(t_tot))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
    print(
        f"scipy_peer R={R} L={L} H={H} states={ns} pin={pin} reps={len(t_tot)}"
        f" assemble_s={np.median(t_asm):.4g} solve_s={np.median(t_sol):.4g}"
        f" median_s={med:.4g} states_per_s={ns / med:.4g} peak_rss_mib={rss:.1f}"
        f" P0={P[0]:.12g} T_ret={t_ret:.12g}"
        f" T_ret_closed={closed_t_ret(L, H, R, a.lam1, a.mu):.12g}"
        f" scipy={scipy.__version__}"
    )
    return 0 if math.isfinite(t_ret) else 1


if __name__ == "__main__":
    sys.exit(main())
