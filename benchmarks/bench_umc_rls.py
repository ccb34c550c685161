"""Benchmark of UMC-RLS (mmcedu.UMCRLS): ratios measured in one run.

1. Fast path (eq. 13 + cached t_h = R p_h) vs the naive oracle that retrains every RLS
   classifier from eq. (7) for every candidate move, at n = 200 (Algorithm 3, k = 3).
   The naive search is run for its first few moves only (asserted identical to the fast
   path's first moves); the ratio is per move, and for the whole fit extrapolated with the
   fast path's number of moves.
2. Fit time over the time of one eigendecomposition of K at n = 3000 (the paper: the
   eigendecomposition dominates).
3. The low-rank path (n_components = r, Nystroem) at n = 50,000: time, peak memory
   (tracemalloc) and ARI; and, at a smaller n, batched claims vs one point at a time on the
   same factor (same ARI, same Q up to a small relative difference).

Run ``python benchmarks/bench_umc_rls.py`` (a few minutes) or with ``--quick``.
Set OMP_NUM_THREADS=1 for stable timings.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

from mmcedu import UMCRLS
from mmcedu.datasets import blobs
from mmcedu.kernels import gamma_from_sigma, nystroem_factor, pairwise_distance_range, rbf_kernel
from mmcedu.metrics import adjusted_rand_score
from mmcedu.umc_rls import hat_matrix, low_rank_hat_factor, run_search

LAMBDA = 2.0**-7


def three_gaussians(n, seed=0):
    """Three Gaussian clusters in 2-D (as in Fig. 4)."""
    return blobs(n, centers=[[0, 0], [4, 0], [2, 3.5]], cluster_std=0.8, random_state=seed)


def paper_gamma(X, fraction=0.5):
    return gamma_from_sigma(fraction * pairwise_distance_range(X)[1], convention="sigma_squared")


def fast_vs_naive(n=200, naive_moves=8):
    X, _ = three_gaussians(n)
    K = rbf_kernel(X, gamma=paper_gamma(X))
    t0 = time.perf_counter()
    R = hat_matrix(K, LAMBDA)
    t_init = time.perf_counter() - t0
    log_fast = []
    t0 = time.perf_counter()
    fast = run_search(None, LAMBDA, 3, R=R, random_state=0,
                      on_move=lambda j, d, _: log_fast.append((j, d)))
    t_search = time.perf_counter() - t0
    log_naive = []
    t0 = time.perf_counter()
    run_search(K, LAMBDA, 3, naive=True, random_state=0, max_steps=naive_moves,
               on_move=lambda j, d, _: log_naive.append((j, d)))
    t_naive = time.perf_counter() - t0
    assert log_naive == log_fast[:naive_moves], "naive and fast paths disagree"
    per_move_fast = t_search / fast["n_steps"]
    per_move_naive = t_naive / naive_moves
    whole_naive = per_move_naive * fast["n_steps"]
    return {
        "n": n,
        "moves": fast["n_steps"],
        "per_move_ratio": per_move_naive / per_move_fast,
        "whole_fit_ratio": whole_naive / (t_init + t_search),
        "fast_fit_s": t_init + t_search,
        "naive_fit_s_extrapolated": whole_naive,
    }


def fit_over_eig(n=3000):
    X, _ = three_gaussians(n)
    gamma = paper_gamma(X)
    K = rbf_kernel(X, gamma=gamma)
    t0 = time.perf_counter()
    np.linalg.eigh(K)
    t_eig = time.perf_counter() - t0
    del K
    t0 = time.perf_counter()
    model = UMCRLS(3, alpha=LAMBDA, gamma=gamma, random_state=0).fit(X)
    t_fit = time.perf_counter() - t0
    return {"n": n, "eig_s": t_eig, "fit_s": t_fit, "ratio": t_fit / t_eig,
            "moves_per_n": model.n_steps_ / n}


def low_rank(n=50_000, r=100):
    X, y = three_gaussians(n)
    gamma = paper_gamma(X[:2000])  # sigma from a subsample: pdist on 50,000 points is O(n^2)
    tracemalloc.start()
    t0 = time.perf_counter()
    model = UMCRLS(3, alpha=LAMBDA, gamma=gamma, n_components=r, random_state=0).fit(X)
    t_fit = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "n": n, "r": r, "fit_s": t_fit, "peak_MB": peak / 2**20,
        "nxn_MB": 8 * n * n / 2**20, "ari": adjusted_rand_score(y, model.labels_),
        "moves_per_n": model.n_steps_ / n,
        "maxrss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def batching(n=4000, r=60):
    X, y = three_gaussians(n, seed=1)
    Phi, _ = nystroem_factor(X, r, gamma=paper_gamma(X), random_state=0)
    L = low_rank_hat_factor(Phi, LAMBDA)
    out = {}
    for name, mb in (("one point at a time", None), ("batched (<= 64 per claim)", 64)):
        t0 = time.perf_counter()
        res = run_search(None, LAMBDA, 3, L=L, random_state=0, max_batches=mb)
        out[name] = {"s": time.perf_counter() - t0, "Q": res["objective"],
                     "ari": adjusted_rand_score(y, res["labels"])}
    return n, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    args = parser.parse_args(argv)
    q = args.quick

    r = fast_vs_naive(n=100 if q else 200, naive_moves=4 if q else 8)
    print(f"[1] fast vs naive oracle, n={r['n']}, {r['moves']} moves (Algorithm 3, k=3)")
    print(f"    speed-up per move: {r['per_move_ratio']:.0f}x; whole fit (extrapolated): "
          f"{r['whole_fit_ratio']:.0f}x  (fast fit {r['fast_fit_s']:.3f} s, naive "
          f"~{r['naive_fit_s_extrapolated']:.0f} s)")

    r = fit_over_eig(n=1500 if q else 3000)
    print(f"[2] n={r['n']}: fit / one eigendecomposition of K = {r['ratio']:.2f}  "
          f"(eigh {r['eig_s']:.2f} s, fit {r['fit_s']:.2f} s, {r['moves_per_n']:.2f} n moves)")

    n_b, res = batching(n=1500 if q else 4000)
    print(f"[3a] batched claims vs one point at a time (low-rank factor, n={n_b}):")
    for name, v in res.items():
        print(f"     {name:28s} ARI {v['ari']:.3f}  Q {v['Q']:.2f}  time {v['s']:.2f} s")
    a, b = res.values()
    print(f"     speed-up {a['s'] / b['s']:.1f}x, |dARI| = {abs(a['ari'] - b['ari']):.3f}, "
          f"relative dQ = {abs(a['Q'] - b['Q']) / abs(a['Q']):.4f}")

    r = low_rank(n=10_000 if q else 50_000)
    print(f"[3b] low-rank path n={r['n']}, r={r['r']}: fit {r['fit_s']:.1f} s, peak traced "
          f"memory {r['peak_MB']:.0f} MB = {r['peak_MB'] / r['nxn_MB']:.4f} x one n x n matrix "
          f"({r['nxn_MB']:.0f} MB); ARI {r['ari']:.3f}; {r['moves_per_n']:.2f} n moves; "
          f"process max RSS {r['maxrss_MB']:.0f} MB")


if __name__ == "__main__":
    main()
