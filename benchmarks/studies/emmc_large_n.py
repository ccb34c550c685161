"""EMMC at large n: why ARI 0.70 on the resampled digits, and what (if anything) closes it.

The data and setting of ``benchmarks/bench_emmc.py``: the 1,797 scikit-learn digits (pixels /
16) resampled with replacement plus N(0, 0.05^2) pixel noise, clipped to [0, 1], ten classes;
``EMMC(10, local_search=True, max_iter=100, random_state=seed)`` (data seed = model seed, as in
bench_emmc.py), otherwise the defaults (``n_hidden=200``, ``C=1``, sigmoid, ``balance=0.1``,
k-means start). Results: ``benchmarks/results/emmc_large_n.md``.

Usage (one BLAS thread; every part prints markdown tables)::

    python benchmarks/studies/emmc_large_n.py --quick          # every part at small n (seconds)
    python benchmarks/studies/emmc_large_n.py ceiling --sizes 5000 20000 --seeds 0 1 2
    python benchmarks/studies/emmc_large_n.py grid    --sizes 5000 20000 --seeds 0 1 2
    python benchmarks/studies/emmc_large_n.py balance --sizes 5000 20000 --seeds 0 1 2
    python benchmarks/studies/emmc_large_n.py basin   --sizes 5000 20000 --seeds 0 1 2
    python benchmarks/studies/emmc_large_n.py confirm --sizes 100000 --seeds 0 1 2 \
        --settings default L1000 ward L1000_ward truth L1000_truth
    python benchmarks/studies/emmc_large_n.py million --sizes 1000000 --seeds 0 1 2 \
        --settings default balance0.02 ward

Parts:

* ``ceiling``: k-means (``KMeans(10, n_init=10)``) and a *supervised* ELM with EMMC's hidden
  layer (same draw of ``W, b`` as ``EMMC(random_state=seed)``) fitted by ridge (``C=1``) to the
  true one-hot labels: training accuracy, ARI of its argmax, and its objective, for
  ``n_hidden`` in {200, 500, 1000, 2000}.
* ``grid``: EMMC with the settings of :data:`SETTINGS` (``n_hidden`` x ``C``, activations,
  starts, ``n_init``, ``balance``, no local search). ``obj(y)/obj`` is the objective of the
  true labels (same hidden layer and ``C``, ``beta`` fitted to them) over the objective EMMC
  reached: above 1, the objective prefers EMMC's labeling to the classes (then no search can
  help); below 1, the classes are better and the search did not find them.
* ``balance``: the balance bound as a prior (:data:`BALANCE_GRID`), alone and with the other
  levers.
* ``basin``: starts between the true labels and the k-means start (a fraction ``p`` of the
  samples, drawn at random, get their k-means label, matched to the classes; ``p = 0``: the
  classes, ``p = 1``: the k-means start) for ``n_hidden`` 200 and 1000: how good must a start
  be for EMMC to reach the classes?
* ``confirm``: chosen settings at n = 10^5 (same columns as ``grid``).
* ``million``: one fit per setting in a fresh process (wall and CPU seconds, peak RSS by
  ``resource.getrusage``, the start's cost counted separately), with ``memory_bytes``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MARKER = "@@RESULT@@"

# name -> (EMMC parameters beyond the bench setting, start)
# start: "kmeans" / "random" (EMMC's own), "truth" (the class labels), "ward" (Ward linkage on a
# random subsample of 5,000, extended to all samples by the nearest subsample point)
SETTINGS = {
    "default": ({}, "kmeans"),
    **{f"L{L}" + ("" if C == 1 else f"_C{C:g}"): ({"n_hidden": L, "C": C}, "kmeans")
       for L in (200, 500, 1000, 2000) for C in (0.01, 0.1, 1, 10) if (L, C) != (200, 1)},
    "tanh": ({"activation": "tanh"}, "kmeans"),
    "relu": ({"activation": "relu"}, "kmeans"),
    "L1000_tanh": ({"n_hidden": 1000, "activation": "tanh"}, "kmeans"),
    "L1000_relu": ({"n_hidden": 1000, "activation": "relu"}, "kmeans"),
    "balance0.02": ({"balance": 0.02}, "kmeans"),
    "balance0.3": ({"balance": 0.3}, "kmeans"),
    "balance1": ({"balance": 1.0}, "kmeans"),
    "no_local_search": ({"local_search": False}, "kmeans"),
    "n_init10": ({"n_init": 10}, "kmeans"),
    "L1000_n_init10": ({"n_hidden": 1000, "n_init": 10}, "kmeans"),
    "random": ({"init": "random"}, "random"),
    "random_n_init10": ({"init": "random", "n_init": 10}, "random"),
    "L1000_random": ({"n_hidden": 1000, "init": "random"}, "random"),
    "ward": ({}, "ward"),
    "L1000_ward": ({"n_hidden": 1000}, "ward"),
    "truth": ({}, "truth"),
    "L1000_truth": ({"n_hidden": 1000}, "truth"),
    # the balance bound as a prior (the ten classes hold 9.7 % to 10.2 % of the samples)
    "balance0.01": ({"balance": 0.01}, "kmeans"),
    "balance0.05": ({"balance": 0.05}, "kmeans"),
    "C0.1_balance0.02": ({"C": 0.1, "balance": 0.02}, "kmeans"),
    "L1000_balance0.02": ({"n_hidden": 1000, "balance": 0.02}, "kmeans"),
    "n_init10_balance0.02": ({"n_init": 10, "balance": 0.02}, "kmeans"),
    "ward_balance0.02": ({"balance": 0.02}, "ward"),
    "L1000_ward_balance0.02": ({"n_hidden": 1000, "balance": 0.02}, "ward"),
    "truth_balance0.02": ({"balance": 0.02}, "truth"),
}
GRID = ["default", "L500", "L1000", "L2000",
        "L200_C0.01", "L200_C0.1", "L200_C10", "L1000_C0.01", "L1000_C0.1", "L1000_C10",
        "L2000_C0.01", "L2000_C0.1",
        "tanh", "relu", "L1000_tanh", "L1000_relu",
        "balance0.02", "balance0.3", "balance1", "no_local_search",
        "random", "random_n_init10", "L1000_random", "n_init10", "L1000_n_init10",
        "ward", "L1000_ward", "truth", "L1000_truth"]
BALANCE_GRID = ["balance0.01", "balance0.02", "balance0.05", "C0.1_balance0.02",
                "L1000_balance0.02", "n_init10_balance0.02", "ward_balance0.02",
                "L1000_ward_balance0.02", "truth_balance0.02"]
QUICK_GRID = ["default", "L500", "L200_C0.1", "tanh", "balance1", "random", "n_init10", "ward",
              "truth", "L500_truth"]
SETTINGS["L500_truth"] = ({"n_hidden": 500}, "truth")
WARD_SUBSAMPLE = 5000


def digits_data(n, seed):
    """bench_emmc.py's data, bit for bit (same draws in the same order), built in place."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    X0, y0 = digits.data / 16.0, digits.target
    rng = np.random.RandomState(seed)
    idx = rng.randint(len(y0), size=n)
    X = X0[idx]
    noise = rng.standard_normal((n, 64))
    noise *= 0.05
    X += noise
    del noise
    np.clip(X, 0.0, 1.0, out=X)
    return X, y0[idx]


def ward_start(X, seed, size=WARD_SUBSAMPLE):
    """Ward linkage (10 clusters) on a random subsample, every sample labelled like its nearest
    subsample point (no class labels used)."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.RandomState(1000 + seed)
    sub = rng.choice(X.shape[0], min(size, X.shape[0]), replace=False)
    lab = AgglomerativeClustering(10).fit_predict(X[sub])
    return KNeighborsClassifier(1, algorithm="brute").fit(X[sub], lab).predict(X)


def matched_kmeans(y, km_labels):
    """k-means labels renamed to the classes they best match (Hungarian on the contingency)."""
    from scipy.optimize import linear_sum_assignment
    from sklearn.metrics.cluster import contingency_matrix

    cont = contingency_matrix(y, km_labels)
    rows, cols = linear_sum_assignment(-cont)
    mapping = np.empty(cont.shape[1], dtype=int)
    mapping[cols] = rows
    return mapping[km_labels]


def truth_objective(model, X, y):
    """EMMC's objective of the class labels: same hidden layer and C, beta fitted to them."""
    from mmcedu.emmc import ELMRidge, elm_objective

    H = model._hidden(X)
    T = np.eye(model.n_clusters)[y]
    beta = ELMRidge(H, model.C).solve(T)
    return elm_objective(H, beta, T, model.C)


def fit_setting(name, X, y, seed, *, start_labels=None, with_truth_objective=True):
    """One EMMC fit; returns a record (ARI, start ARI, objectives, counts, CPU seconds)."""
    from sklearn.metrics import adjusted_rand_score as ari

    from mmcedu import EMMC

    params, start = SETTINGS[name]
    params = dict(params)
    start_cpu = 0.0
    if start_labels is not None:
        params["init"] = start_labels
    elif start == "truth":
        params["init"] = y
    elif start == "ward":
        t = time.process_time()
        params["init"] = ward_start(X, seed)
        start_cpu = time.process_time() - t
    model = EMMC(10, local_search=params.pop("local_search", True), max_iter=100,
                 random_state=seed, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.process_time()
        model.fit(X)
        cpu = time.process_time() - t
    n = X.shape[0]
    rec = {
        "setting": name, "n": n, "seed": seed, "ari": ari(y, model.labels_),
        "ari_start": ari(y, model.init_labels_), "objective": model.objective_,
        "alternations": int(model.n_iter_), "flips": int(model.n_flips_),
        "swaps": int(model.n_swaps_), "moved": int(model.start_moved_) / n,
        "fit_cpu_s": cpu, "start_cpu_s": start_cpu,
        "mem_gb_1e6": model.memory_bytes(10**6, 64) / 1e9,
        "warnings": sorted({w.category.__name__ for w in caught}),
    }
    if with_truth_objective:
        rec["truth_ratio"] = truth_objective(model, X, y) / model.objective_
    return rec


def _mean_sd(vals):
    vals = np.asarray(vals, dtype=float)
    return f"{vals.mean():.3f} ± {vals.std(ddof=1):.3f}" if vals.size > 1 else f"{vals[0]:.3f}"


def _log(log, rec):
    if log:
        with open(log, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


# --------------------------------------------------------------------------------------------
def ceiling(sizes, seeds, hidden=(200, 500, 1000, 2000), log=None):
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score as ari

    from mmcedu.emmc import ELMRidge, elm_objective, hidden_layer

    print("\n### Ceiling: k-means and a supervised ELM (ridge, C=1) on the true labels\n")
    print("| n | k-means ARI | n_hidden | supervised train accuracy | ARI of its argmax | "
          "objective of the classes | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        km, acc, ar, obj, cpu = {}, {}, {}, {}, {}
        for seed in seeds:
            X, y = digits_data(n, seed)
            km.setdefault("ari", []).append(
                ari(y, KMeans(10, n_init=10, random_state=seed).fit(X).labels_))
            for L in hidden:
                t = time.process_time()
                rng = np.random.RandomState(seed)  # EMMC's draw: W first, then b
                W = rng.uniform(-1.0, 1.0, size=(64, L))
                b = rng.uniform(-1.0, 1.0, size=L)
                H = hidden_layer(X, W, b)
                T = np.eye(10)[y]
                beta = ELMRidge(H, 1.0).solve(T)
                pred = np.argmax(H @ beta, axis=1)
                acc.setdefault(L, []).append(float(np.mean(pred == y)))
                ar.setdefault(L, []).append(ari(y, pred))
                obj.setdefault(L, []).append(elm_objective(H, beta, T, 1.0))
                cpu.setdefault(L, []).append(time.process_time() - t)
                _log(log, {"part": "ceiling", "n": n, "seed": seed, "n_hidden": L,
                           "acc": acc[L][-1], "ari": ar[L][-1], "objective": obj[L][-1],
                           "kmeans_ari": km["ari"][-1]})
                del H
        for j, L in enumerate(hidden):
            print(f"| {n:,} | {_mean_sd(km['ari']) if j == 0 else ''} | {L} | "
                  f"{_mean_sd(acc[L])} | {_mean_sd(ar[L])} | {np.mean(obj[L]):.1f} | "
                  f"{np.mean(cpu[L]):.1f} |", flush=True)


def grid(sizes, seeds, names, log=None, title="EMMC settings"):
    print(f"\n### {title}\n")
    print("| n | setting | ARI | ARI of start | obj(y)/obj | moved | alternations | "
          "flips/swaps | fit CPU s | start CPU s | memory_bytes(10^6) GB | warnings |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        data = {seed: digits_data(n, seed) for seed in seeds}
        for name in names:
            recs = []
            for seed in seeds:
                X, y = data[seed]
                rec = fit_setting(name, X, y, seed)
                rec["part"] = "grid"
                _log(log, rec)
                recs.append(rec)
            warn = sorted({w for r in recs for w in r["warnings"]})
            print(f"| {n:,} | {name} | {_mean_sd([r['ari'] for r in recs])} | "
                  f"{np.mean([r['ari_start'] for r in recs]):.3f} | "
                  f"{np.mean([r['truth_ratio'] for r in recs]):.3f} | "
                  f"{np.mean([r['moved'] for r in recs]):.1%} | "
                  f"{np.mean([r['alternations'] for r in recs]):.0f} | "
                  f"{np.mean([r['flips'] for r in recs]):.0f}/{np.mean([r['swaps'] for r in recs]):.0f} | "
                  f"{np.mean([r['fit_cpu_s'] for r in recs]):.1f} | "
                  f"{np.mean([r['start_cpu_s'] for r in recs]):.1f} | "
                  f"{recs[0]['mem_gb_1e6']:.1f} | {' '.join(w.replace('Warning', '') for w in warn)} |",
                  flush=True)


def basin(sizes, seeds, fractions=(0.0, 0.25, 0.5, 0.75, 1.0), names=("default", "L1000"), log=None):
    from sklearn.metrics import adjusted_rand_score as ari

    from mmcedu import EMMC

    print("\n### Starts between the classes (p = 0) and the k-means start (p = 1)\n")
    print("| n | p (share of k-means labels) | ARI of start | "
          + " | ".join(f"ARI {nm}" for nm in names) + " | "
          + " | ".join(f"obj(y)/obj {nm}" for nm in names) + " |")
    print("|---" * (3 + 2 * len(names)) + "|")
    for n in sizes:
        rows = {p: {"start": [], **{nm: [] for nm in names}, **{nm + "_r": [] for nm in names}}
                for p in fractions}
        for seed in seeds:
            X, y = digits_data(n, seed)
            # EMMC's own k-means start (the fitted model's init_labels_), matched to the classes
            km = EMMC(10, max_iter=1, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                km_labels = matched_kmeans(y, km.fit(X).init_labels_)
            u = np.random.RandomState(2000 + seed).rand(n)
            for p in fractions:
                start = np.where(u < p, km_labels, y)
                rows[p]["start"].append(ari(y, start))
                for nm in names:
                    rec = fit_setting(nm, X, y, seed, start_labels=start)
                    rec.update({"part": "basin", "p": p})
                    _log(log, rec)
                    rows[p][nm].append(rec["ari"])
                    rows[p][nm + "_r"].append(rec["truth_ratio"])
            del X
        for p in fractions:
            r = rows[p]
            print(f"| {n:,} | {p:g} | {np.mean(r['start']):.3f} | "
                  + " | ".join(_mean_sd(r[nm]) for nm in names) + " | "
                  + " | ".join(f"{np.mean(r[nm + '_r']):.3f}" for nm in names) + " |", flush=True)


# --------------------------------------------------------------------------------------------
def _child(n, name, seed):
    """One fit in this (fresh) process: times, peak RSS, ARI."""
    from sklearn.metrics import adjusted_rand_score as ari

    from mmcedu import EMMC

    t_wall = time.perf_counter()
    X, y = digits_data(n, seed)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    params, start = SETTINGS[name]
    params = dict(params)
    t_cpu, t_w = time.process_time(), time.perf_counter()
    if start == "ward":
        params["init"] = ward_start(X, seed)
    elif start == "truth":
        params["init"] = y
    start_cpu, start_wall = time.process_time() - t_cpu, time.perf_counter() - t_w
    model = EMMC(10, local_search=params.pop("local_search", True), max_iter=100,
                 random_state=seed, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_cpu, t_w = time.process_time(), time.perf_counter()
        model.fit(X)
        fit_cpu, fit_wall = time.process_time() - t_cpu, time.perf_counter() - t_w
    out = {
        "n": n, "setting": name, "seed": seed, "ari": ari(y, model.labels_),
        "ari_start": ari(y, model.init_labels_), "alternations": int(model.n_iter_),
        "flips": int(model.n_flips_), "swaps": int(model.n_swaps_),
        "fit_cpu_s": fit_cpu, "fit_wall_s": fit_wall, "start_cpu_s": start_cpu,
        "start_wall_s": start_wall, "memory_bytes": model.memory_bytes(n, 64),
        "peak_rss_mb_after_data": rss_data,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "process_wall_s": time.perf_counter() - t_wall,
        "warnings": sorted({w.category.__name__ for w in caught}),
        "load_1min": os.getloadavg()[0],
    }
    print(MARKER + json.dumps(out), flush=True)


def million(sizes, seeds, names, log=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    print("\n### One fit per process (peak RSS: ru_maxrss, imports and data included)\n")
    print("| n | setting | seed | ARI | ARI of start | alternations | flips/swaps | start CPU s | "
          "fit CPU s | fit wall s | process wall s | memory_bytes GB (10^9) | peak RSS GiB | "
          "RSS after data GiB | load | warnings |")
    print("|---" * 16 + "|")
    for n in sizes:
        for name in names:
            for seed in seeds:
                proc = subprocess.run(
                    [sys.executable, __file__, "_child", "--sizes", str(n), "--seeds", str(seed),
                     "--settings", name], capture_output=True, text=True, env=env, timeout=3600)
                lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARKER)]
                if not lines:
                    print(f"| {n:,} | {name} | {seed} | failed: "
                          f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'} |")
                    continue
                r = json.loads(lines[-1][len(MARKER):])
                r["part"] = "million"
                _log(log, r)
                print(f"| {n:,} | {name} | {seed} | {r['ari']:.3f} | {r['ari_start']:.3f} | "
                      f"{r['alternations']} | {r['flips']}/{r['swaps']} | {r['start_cpu_s']:.1f} | "
                      f"{r['fit_cpu_s']:.1f} | {r['fit_wall_s']:.1f} | {r['process_wall_s']:.1f} | "
                      f"{r['memory_bytes'] / 1e9:.2f} | {r['peak_rss_mb'] / 1024:.2f} | "
                      f"{r['peak_rss_mb_after_data'] / 1024:.2f} | {r['load_1min']:.1f} | "
                      f"{' '.join(w.replace('Warning', '') for w in r['warnings'])} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all",
                        choices=["all", "ceiling", "grid", "balance", "basin", "confirm", "million",
                                 "_child"])
    parser.add_argument("--quick", action="store_true", help="every part at small n (seconds)")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--seeds", type=int, nargs="*", default=None)
    parser.add_argument("--settings", nargs="*", default=None, choices=sorted(SETTINGS),
                        help="settings of grid / confirm / million (default: GRID; million: "
                             "default and balance0.02)")
    parser.add_argument("--log", default=None, help="append every record as a JSON line here")
    args = parser.parse_args(argv)
    if args.part == "_child":
        return _child(args.sizes[0], args.settings[0], args.seeds[0])
    seeds = args.seeds if args.seeds is not None else ([0] if args.quick else [0, 1, 2])
    load = os.getloadavg()[0]
    print(f"emmc_large_n {args.part}{' --quick' if args.quick else ''}: "
          f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load (1 min) {load:.1f}")
    t0 = time.perf_counter()
    if args.quick:
        sizes = args.sizes or [1000]
        ceiling(sizes, seeds, hidden=(200, 500), log=args.log)
        grid(sizes, seeds, args.settings or QUICK_GRID, log=args.log)
        basin(sizes, seeds, fractions=(0.0, 0.5, 1.0), names=("default", "L500"), log=args.log)
        million([2000], seeds[:1], ["default"], log=args.log)
    elif args.part in ("ceiling", "all"):
        ceiling(args.sizes or [5000, 20000], seeds, log=args.log)
    if not args.quick and args.part in ("grid", "all"):
        grid(args.sizes or [5000, 20000], seeds, args.settings or GRID, log=args.log)
    if not args.quick and args.part in ("balance", "all"):
        grid(args.sizes or [5000, 20000], seeds, args.settings or BALANCE_GRID, log=args.log,
             title="The balance bound as a prior")
    if not args.quick and args.part in ("basin", "all"):
        basin(args.sizes or [5000, 20000], seeds, log=args.log)
    if not args.quick and args.part in ("confirm", "all"):
        grid(args.sizes or [100_000], seeds,
             args.settings or ["default", "L1000", "ward", "L1000_ward", "truth", "L1000_truth"],
             log=args.log, title="Confirmation at large n")
    if not args.quick and args.part in ("million", "all"):
        million(args.sizes or [1_000_000], seeds if args.seeds is not None else [0],
                args.settings or ["default", "balance0.02"],
                log=args.log)
    print(f"\n(wall {time.perf_counter() - t0:.0f} s, load (1 min) now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
