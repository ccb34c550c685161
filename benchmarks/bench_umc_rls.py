"""Benchmark of UMC-RLS (mmcedu.UMCRLS): counted work, ratios, and time / memory / ARI vs n.

1. Fast path (eq. 13 + cached t_h = R p_h) vs the naive oracle that retrains every RLS
   classifier from eq. (7) for every candidate move (Algorithm 3, k = 3). Counted work per
   move (move scores, cache entries, linear solves; deterministic) and the measured time per
   move. The naive search runs for its first few moves only (asserted identical to the fast
   path's first moves).
2. Fit time over the time of one eigendecomposition of K (the paper: the eigendecomposition
   dominates).
3. Batched claims on the low-rank path vs one point at a time (same factor): ARI, Q, time.
4. Scale: three Gaussians in 2-D (known labels), ``UMCRLS(3, n_components=100)`` with the
   default alpha, gamma (median heuristic) and final descent, from n = 10^3 to 10^6, and the
   dense path from 10^3 to 8,000. Every point runs in a fresh subprocess, which reports its
   CPU seconds, wall seconds and peak resident memory (imports included, ~150 MB). Then the
   largest low-rank fit against the dense fit on a shared subsample of 5,000 points.

Run ``python benchmarks/bench_umc_rls.py`` (the full scale study: about an hour on a loaded
2-core machine; results in ``benchmarks/results/umc_rls_scale.csv``) or with ``--quick``
(seconds to a minute). Set OMP_NUM_THREADS=1 for comparable numbers: on a loaded machine
judge the time targets by CPU seconds (one core), not wall seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _child import run_child_code  # noqa: E402

from mmcedu.datasets import blobs  # noqa: E402
from mmcedu.kernels import max_distance_gamma, nystroem_factor, rbf_kernel  # noqa: E402
from mmcedu.metrics import adjusted_rand_score  # noqa: E402
from mmcedu.umc_rls import hat_matrix, low_rank_hat_factor  # noqa: E402
from mmcedu_lab.report import Table  # noqa: E402
from mmcedu_lab.umc_rls import run_search  # noqa: E402

LAMBDA = 2.0**-7
CENTERS = [[0, 0], [4, 0], [2, 3.5]]
RESULTS = Path(__file__).resolve().parent / "results"


def three_gaussians(n, seed=0):
    """Three Gaussian clusters in 2-D (as in Fig. 4), with their labels."""
    return blobs(n, centers=CENTERS, cluster_std=0.8, random_state=seed)


def fast_vs_naive(n=200, naive_moves=8):
    X, _ = three_gaussians(n)
    K = rbf_kernel(X, gamma=max_distance_gamma(X))
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
    naive = run_search(K, LAMBDA, 3, naive=True, random_state=0, max_iter=naive_moves,
                       on_move=lambda j, d, _: log_naive.append((j, d)))
    t_naive = time.perf_counter() - t0
    assert log_naive == log_fast[:naive_moves], "naive and fast paths disagree"
    cf, cn = fast["counts"], naive["counts"]
    return {
        "n": n, "moves": fast["n_iter"],
        "fast_scores_per_move": cf["scores"] / fast["n_iter"],
        "fast_cache_per_move": cf["cache_updates"] / fast["n_iter"],
        "fast_solves": cf.get("solves", 0),
        "naive_solves_per_move": cn["solves"] / naive_moves,
        "per_move_ratio": (t_naive / naive_moves) / (t_search / fast["n_iter"]),
        "fast_fit_s": t_init + t_search,
        "naive_fit_s_extrapolated": t_naive / naive_moves * fast["n_iter"],
    }


def fit_over_eig(n=3000):
    from mmcedu import UMCRLS

    X, _ = three_gaussians(n)
    gamma = max_distance_gamma(X)
    K = rbf_kernel(X, gamma=gamma)
    t0 = time.perf_counter()
    np.linalg.eigh(K)
    t_eig = time.perf_counter() - t0
    del K
    t0 = time.perf_counter()
    model = UMCRLS(3, alpha=LAMBDA, gamma=gamma, random_state=0).fit(X)
    t_fit = time.perf_counter() - t0
    return {"n": n, "eig_s": t_eig, "fit_s": t_fit, "ratio": t_fit / t_eig,
            "moves_per_n": model.n_iter_ / n}


def batching(n=4000, r=60):
    X, y = three_gaussians(n, seed=1)
    Phi, _ = nystroem_factor(X, r, gamma=max_distance_gamma(X), random_state=0)
    L = low_rank_hat_factor(Phi, LAMBDA)
    out = {}
    for name, mb in (("one point at a time", None), ("batched (<= 64 per claim)", 64)):
        t0 = time.perf_counter()
        res = run_search(None, LAMBDA, 3, L=L, random_state=0, max_batches=mb)
        out[name] = {"s": time.perf_counter() - t0, "Q": res["objective"],
                     "ari": adjusted_rand_score(y, res["labels"]),
                     "evaluations": res["counts"]["evaluations"]}
    return n, out


# ------------------------------------------------------------------------------ scale study
_CHILD = r"""
import json, resource, sys, time, warnings
sys.path.insert(0, {root!r})
from bench_umc_rls import point
out = point(**json.loads({kw!r}))
ru = resource.getrusage(resource.RUSAGE_SELF)
out["peak_rss_mb"] = out.pop("fit_peak_rss_mb", ru.ru_maxrss / 1024.0)
out["process_peak_rss_mb"] = ru.ru_maxrss / 1024.0
out["process_cpu_s"] = ru.ru_utime + ru.ru_stime
print("@@RESULT@@" + json.dumps(out))
"""


def point(path, n, r=100, dtype="float64", seed=0, n_sub=0):
    """One fit of the scale study (run inside a fresh subprocess by :func:`run_point`)."""
    import warnings

    from mmcedu import UMCRLS

    X, y = three_gaussians(n, seed)
    params = {} if path == "dense" else {"n_components": r, "dtype": dtype}
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        m = UMCRLS(3, random_state=0, **params).fit(X)
    out = {"path": path, "n": n, "r": r if path != "dense" else None,
           "dtype": dtype if path != "dense" else "float64",
           "fit_cpu_s": time.process_time() - c0, "fit_wall_s": time.perf_counter() - t0,
           "ari": adjusted_rand_score(y, m.labels_), "moves": m.n_iter_,
           "descent_moves": m.solver_info_["n_descent_moves"],
           "evaluations": m.solver_info_["n_evaluations"],
           "objective": m.objective_, "gamma": m.gamma_,
           "warnings": sorted({w.category.__name__ for w in ws})}
    if n_sub:  # peak RSS of the scale fit itself, before the dense fit of the subsample
        import resource

        out["fit_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        dense = UMCRLS(3, random_state=0).fit(X[:n_sub])
        out.update({"n_sub": n_sub,
                    "ari_sub_scale_vs_truth": adjusted_rand_score(y[:n_sub], m.labels_[:n_sub]),
                    "ari_sub_dense_vs_truth": adjusted_rand_score(y[:n_sub], dense.labels_),
                    "ari_sub_scale_vs_dense": adjusted_rand_score(dense.labels_,
                                                                  m.labels_[:n_sub])})
    return out


def run_point(kwargs, timeout=3600):
    code = _CHILD.format(root=str(Path(__file__).resolve().parent), kw=json.dumps(kwargs))
    out, error, wall = run_child_code(code, timeout=timeout)
    if out is None:
        return {**kwargs, "error": error.splitlines()[-1]}
    out["process_wall_s"] = wall
    return out


def scale_study(quick):
    if quick:
        plan = [("low-rank", 1000, "float64"), ("low-rank", 3000, "float64"),
                ("low-rank", 3000, "float32"), ("dense", 1000, "float64")]
        shared = {"path": "low-rank", "n": 3000, "dtype": "float32", "n_sub": 1000}
    else:
        # one run: both dtypes to 10^5, the exact path to 4,000, and the largest point
        # (10^6, float32) fitted once, as the shared-subsample comparison (first 5,000 samples)
        plan = [("low-rank", n, dt) for n in (1000, 10_000, 100_000)
                for dt in ("float64", "float32")]
        plan += [("dense", n, "float64") for n in (1000, 2000, 4000)]
        shared = {"path": "low-rank", "n": 1_000_000, "dtype": "float32", "n_sub": 5000}
    rows = []
    for path, n, dt in plan:
        r = run_point({"path": path, "n": n, "dtype": dt})
        r["load_avg_1min"] = os.getloadavg()[0]
        print("   ", json.dumps(r), flush=True)
        rows.append(r)
    r = run_point(shared)
    r["load_avg_1min"] = os.getloadavg()[0]
    print("   ", json.dumps(r), flush=True)
    return rows, r


def write_csv(rows, shared, path):
    """The columns of the committed umc_rls_scale.csv (read by chapter 04); the shared point is
    the last row (the largest fit, with the ``n_sub`` / ``ari_sub_*`` columns)."""
    from mmcedu.umc_rls import _MAX_BATCHES

    cols = ["source", "path", "n", "r", "dtype", "alpha", "max_batches", "final_descent",
            "fit_cpu_s", "fit_wall_s", "process_cpu_s", "process_wall_s", "peak_rss_mb", "ari",
            "moves", "descent_moves", "evaluations", "objective", "load_avg_1min", "n_sub",
            "ari_sub_scale_vs_truth", "ari_sub_dense_vs_truth", "ari_sub_scale_vs_dense", "error"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        fh.write(f"# UMCRLS scale study (three Gaussians in 2-D, k = 3, r = n_components = 100), "
                 f"one run of bench_umc_rls.py, {time.strftime('%Y-%m-%d %H:%M')}, "
                 f"{os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
                 "provenance and load in umc_rls_scale.md\n")
        w = csv.DictWriter(fh, cols, extrasaction="ignore")
        w.writeheader()
        for r in list(rows) + [shared]:
            w.writerow({"source": "estimator:one_run", "alpha": 0.125,
                        "max_batches": _MAX_BATCHES if r.get("path") == "low-rank" else None,
                        "final_descent": True, **r})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--no-save", action="store_true", help="do not write the CSV")
    parser.add_argument("--scale-only", action="store_true", help="run part [4] only")
    args = parser.parse_args(argv)
    q = args.quick
    if args.scale_only:
        return _scale_part(q, args.no_save)

    r = fast_vs_naive(n=60 if q else 200, naive_moves=3 if q else 8)
    print(f"[1] fast vs naive oracle, n={r['n']}, {r['moves']} moves (Algorithm 3, k=3)")
    print(f"    counted per move: fast {r['fast_scores_per_move']:.0f} move scores (O(1) each) + "
          f"{r['fast_cache_per_move']:.0f} cache entries, {r['fast_solves']} solves; naive "
          f"{r['naive_solves_per_move']:.0f} solves of an {r['n']} x {r['n']} system")
    print(f"    measured speed-up per move: {r['per_move_ratio']:.0f}x (fast fit "
          f"{r['fast_fit_s']:.3f} s, naive ~{r['naive_fit_s_extrapolated']:.0f} s extrapolated)")

    r = fit_over_eig(n=500 if q else 3000)
    print(f"[2] n={r['n']}: fit / one eigendecomposition of K = {r['ratio']:.2f}  "
          f"(eigh {r['eig_s']:.2f} s, fit {r['fit_s']:.2f} s, {r['moves_per_n']:.2f} n moves)")

    n_b, res = batching(n=800 if q else 4000)
    print(f"[3] batched claims vs one point at a time (low-rank factor, n={n_b}):")
    for name, v in res.items():
        print(f"     {name:28s} ARI {v['ari']:.3f}  Q {v['Q']:.2f}  {v['evaluations']} "
              f"evaluations  time {v['s']:.2f} s")

    return _scale_part(q, args.no_save)


def _scale_part(q, no_save):
    print("[4] scale (fresh subprocess per point; CPU s of one core; peak RSS):", flush=True)
    rows, shared = scale_study(q)
    table = [[r["path"], r["n"], r.get("dtype"), r.get("fit_cpu_s"), r.get("fit_wall_s"),
              r.get("peak_rss_mb"), r.get("ari"), r.get("evaluations"), r.get("moves"),
              r.get("error", "")] for r in rows]
    print(Table(table, ["path", "n", "dtype", "fit CPU s", "fit wall s", "peak RSS MB", "ARI",
                        "evaluations", "moves", "error"], floatfmt=".3g"))
    if "error" not in shared:
        print(f"    shared subsample: first {shared['n_sub']} of n = {shared['n']}: ARI vs truth "
              f"scale path {shared['ari_sub_scale_vs_truth']:.3f}, dense path "
              f"{shared['ari_sub_dense_vs_truth']:.3f}; scale vs dense "
              f"{shared['ari_sub_scale_vs_dense']:.3f}")
    if not q and not no_save:
        write_csv(rows, shared, RESULTS / "umc_rls_scale.csv")
        print(f"    saved {RESULTS / 'umc_rls_scale.csv'}")


if __name__ == "__main__":
    main()
