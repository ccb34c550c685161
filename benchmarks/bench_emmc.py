"""Benchmark EMMC at scale: time, peak memory and ARI from n = 10^3 to 10^5 in one run.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py          # n = 10^3 .. 10^5 (minutes)
    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py --quick  # small sizes (seconds)
    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py --save   # also write benchmarks/results/
    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py --defaults --out benchmarks/results/emmc_defaults.csv
        # EMMC(k) with its defaults vs KMeans(k) on standardized real data, seeds 0-4
        # (with --quick: seed 0 only)

Data with known labels at any size: scikit-learn's 8 x 8 digits (pixels / 16) resampled with
replacement plus N(0, 0.05^2) pixel noise, clipped to [0, 1]; ten clusters.
``EMMC(10, local_search=True, max_iter=100)``, otherwise the defaults (``n_hidden=200``,
``C=1``, ``balance=0.1``, k-means start, ``output="auto"`` = ten one-hot outputs); at
n = 10^5 the alternation needs about 52 alternations, above the default ``max_iter=50``.

Every size runs in a fresh subprocess, which reports its own peak resident memory
(``ru_maxrss``, imports included) and CPU seconds (``time.process_time``, one BLAS thread):
CPU seconds are what the fit needs from one free core; wall seconds depend on the load of
the machine, printed with every row. The fit is split into k-means (the start), the setup
(hidden layer, ``H^T H``, Cholesky factor, ``Z`` of the local search), the alternations
(CPU seconds per alternation) and the local search (moves made). Counts (alternations, flips,
swaps) are deterministic; times are not.

A second table compares the fit at the largest n with a fit on a shared subsample (its first
5,000 samples): ARI against the digit labels on those samples, and the ARI of the two
labelings. A third shows the ridge system's two forms (primal ``L x L`` vs dual ``n x n``)
and the fit time against ``L`` (ratios, not absolute claims).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

CHILD = r"""
import json, os, resource, sys, time, warnings
import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score
import mmcedu.emmc as E

n, seed, n_hidden, subsample = (int(v) for v in sys.argv[1:5])
digits = load_digits()
X0, y0 = digits.data / 16.0, digits.target
rng = np.random.RandomState(seed)
idx = rng.randint(len(y0), size=n)
X = np.clip(X0[idx] + 0.05 * rng.standard_normal((n, 64)), 0.0, 1.0)
y = y0[idx]

cpu = {"kmeans": 0.0, "alternations": 0.0, "local_search": 0.0}
def timed(key, f):
    def wrapper(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            cpu[key] += time.process_time() - t
    return wrapper
KMeans.fit = timed("kmeans", KMeans.fit)
E.EMMC._alternate = timed("alternations", E.EMMC._alternate)
E._local_search = timed("local_search", E._local_search)

def fit(Xf):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, w0 = time.process_time(), time.perf_counter()
        model = E.EMMC(10, n_hidden=n_hidden, local_search=True, max_iter=100,
                       random_state=seed).fit(Xf)
        return model, time.process_time() - t0, time.perf_counter() - w0, caught

model, fit_cpu, fit_wall, caught = fit(X)
out = {
    "n": n, "n_hidden": n_hidden, "n_clusters": 10, "seed": seed,
    "fit_cpu_s": fit_cpu, "fit_wall_s": fit_wall, "kmeans_cpu_s": cpu["kmeans"],
    "alternation_cpu_s": cpu["alternations"], "local_search_cpu_s": cpu["local_search"],
    "setup_cpu_s": fit_cpu - cpu["kmeans"] - cpu["alternations"] - cpu["local_search"],
    "alternations": int(model.n_iter_), "flips": int(model.n_flips_), "swaps": int(model.n_swaps_),
    "per_alternation_cpu_s": cpu["alternations"] / max(1, model.n_iter_),
    "objective": float(model.objective_), "balance_decided": int(model.balance_decided_),
    "ari": adjusted_rand_score(y, model.labels_),
    "ari_kmeans_start": adjusted_rand_score(y, model.init_labels_),
    "warnings": sorted({w.category.__name__ for w in caught}),
    "load_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"),
}
if subsample:
    small, _, _, _ = fit(X[:subsample])
    out.update({
        "subsample": subsample,
        "ari_large_on_subsample": adjusted_rand_score(y[:subsample], model.labels_[:subsample]),
        "ari_small_fit": adjusted_rand_score(y[:subsample], small.labels_),
        "ari_large_vs_small": adjusted_rand_score(small.labels_, model.labels_[:subsample]),
    })
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("@@" + json.dumps(out))
"""


def run_point(n, *, seed=0, n_hidden=200, subsample=0, timeout=3600):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(seed), str(n_hidden), str(subsample)],
        capture_output=True, text=True, timeout=timeout, env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"n={n} failed:\n{proc.stderr[-2000:]}")
    line = [l for l in proc.stdout.splitlines() if l.startswith("@@")][-1]
    return json.loads(line[2:])


COLUMNS = [
    ("n", "{:>7d}"), ("fit_cpu_s", "{:9.2f}"), ("fit_wall_s", "{:9.2f}"),
    ("kmeans_cpu_s", "{:8.2f}"), ("setup_cpu_s", "{:8.2f}"), ("alternations", "{:5d}"),
    ("per_alternation_cpu_s", "{:9.4f}"), ("flips", "{:6d}"), ("swaps", "{:6d}"),
    ("local_search_cpu_s", "{:8.2f}"), ("peak_rss_mb", "{:8.0f}"), ("ari", "{:6.3f}"),
    ("ari_kmeans_start", "{:6.3f}"), ("load_1min", "{:5.1f}"),
]
HEADER = ("      n   fit cpu  fit wall  kmeans    setup  alts  cpu/alt  flips  swaps  "
          "ls cpu   RSS MB   ARI  ARIkm  load")


def _forms(quick):
    import math

    from mmcedu_lab.emmc import timing_study

    if quick:
        res = timing_study(ns=(200, 400), Ls=(50, 200), n_fixed=300, form_cases=((800, 100), (100, 800)),
                           repeats=1)
    else:
        res = timing_study(ns=(500, 1000), Ls=(50, 100, 200, 400, 800, 1600), n_fixed=1000,
                           form_cases=((2000, 100), (2000, 500), (500, 2000), (100, 2000)), repeats=3)
    print("\nEMMC fit time vs L (n fixed; best of repeats)")
    print("     L    fit s   s / alternation")
    for L, t, per in res["L"]:
        print(f"{L:>6}  {t:7.4f}  {per:10.5f}")
    (l1, _, p1), (l2, _, p2) = res["L"][-2], res["L"][-1]
    print(f"log-log slope of time per alternation between L={l1} and {l2}: "
          f"{math.log(p2 / p1) / math.log(l2 / l1):.2f}")
    print("Ridge output weights: one factorization + solve")
    print("     n      L  primal s    dual s    dual/primal  auto picks")
    for n, L, tp, td, ratio, auto in res["forms"]:
        print(f"{n:>6} {L:>6}  {tp:8.4f}  {td:8.4f}  {ratio:11.3f}  {auto}")


def _default_sets(which):
    """Standardized data with known classes: ``"held-out"`` (reported, not used to choose any
    default) or ``"chosen-on"`` (the sets EMMC's defaults were chosen on by the rule written
    down before measuring in benchmarks/studies/emmc_default_rule.md)."""
    from _default_sets import chosen_on_pairs, digit_classes, held_out, standardized
    from sklearn.datasets import load_wine, make_blobs, make_classification

    if which == "held-out":
        data = held_out()
        data["digits 1-4"] = digit_classes(1, 2, 3, 4)
    else:
        data = chosen_on_pairs()
        for c in [(0, 1, 2), (5, 6, 9), (4, 7, 9)]:
            data["digits " + ", ".join(map(str, c))] = digit_classes(*c)
        Xw, yw = load_wine(return_X_y=True)
        data["wine 0 vs 1"] = (Xw[yw < 2], yw[yw < 2])
        data["wine 1 vs 2"] = (Xw[yw > 0], yw[yw > 0])
        for rs in (10, 11):
            data[f"blobs 3 x 100 (seed {rs})"] = make_blobs([100, 100, 100], 2, cluster_std=2.5,
                                                            random_state=rs)
        for rs in (10, 11):
            data[f"blobs 100/300 (seed {rs})"] = make_blobs([100, 300], 2, cluster_std=2.5,
                                                            random_state=rs)
        data["classification 3 classes"] = make_classification(
            450, 10, n_informative=5, n_classes=3, class_sep=1.5, random_state=10)
    return standardized(data)


def defaults(out=None, seeds=(0, 1, 2, 3, 4), sets=("held-out", "chosen-on"), params=None,
             names=None):
    """``EMMC(k, **params)`` (default: its defaults) versus ``KMeans(k, n_init=10)`` on
    standardized data, ``k`` = number of true classes: ARI with the classes, the ARI of EMMC's
    labels with its own k-means start (1 = it kept the start), sizes and warnings."""
    import warnings

    import numpy as np
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from mmcedu import EMMC

    params = dict(params or {})
    rows = []
    print(f"EMMC(k, {params}) vs KMeans(k, n_init=10), standardized data")
    print(f"{'set':<9} {'data':<28} {'seed':>4} {'ARI':>6} {'k-means':>7} {'vs start':>8} "
          f"{'sizes':>12} {'s':>5}  warnings")
    for which in sets:
        for name, (X, y) in _default_sets(which).items():
            if names is not None and name not in names:
                continue
            k = int(np.unique(y).size)
            for seed in seeds:
                t0 = time.perf_counter()
                with warnings.catch_warnings(record=True) as ws:
                    warnings.simplefilter("always")
                    model = EMMC(k, random_state=seed, **params).fit(X)
                sec = time.perf_counter() - t0
                km = KMeans(k, n_init=10, random_state=seed).fit(X)
                sizes = "/".join(str(int(c)) for c in sorted(np.bincount(model.labels_, minlength=k)))
                row = {"set": which, "data": name, "k": k, "seed": seed,
                       "ari": adjusted_rand_score(y, model.labels_),
                       "kmeans_ari": adjusted_rand_score(y, km.labels_),
                       "ari_vs_start": adjusted_rand_score(model.init_labels_, model.labels_),
                       "sizes": sizes, "seconds": sec,
                       "warnings": " ".join(sorted({w.category.__name__ for w in ws}))}
                rows.append(row)
                print(f"{which:<9} {name:<28} {seed:>4} {row['ari']:6.3f} {row['kmeans_ari']:7.3f} "
                      f"{row['ari_vs_start']:8.3f} {sizes:>12} {sec:5.2f}  {row['warnings']}",
                      flush=True)
    if out:
        keys = ["set", "data", "k", "seed", "ari", "kmeans_ari", "ari_vs_start", "sizes",
                "seconds", "warnings"]
        with open(out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(keys)
            for r in rows:
                w.writerow([f"{r[c]:.4f}" if c in ("ari", "kmeans_ari", "ari_vs_start")
                            else f"{r[c]:.2f}" if c == "seconds" else r[c] for c in keys])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--save", action="store_true",
                        help="write benchmarks/results/emmc_scale.csv and emmc_shared_subsample.csv")
    parser.add_argument("--sizes", type=int, nargs="*", default=None,
                        help="sample sizes to run instead of the default ones")
    parser.add_argument("--no-forms", action="store_true",
                        help="skip the primal / dual and L tables")
    parser.add_argument("--out", type=Path, default=None,
                        help="directory for --save (default benchmarks/results); CSV file for --defaults")
    parser.add_argument("--defaults", action="store_true",
                        help="EMMC(k) with its defaults vs KMeans(k) on standardized real data "
                             "(seeds 0-4; seed 0 and the held-out sets only with --quick)")
    args = parser.parse_args(argv)
    if args.defaults:
        if args.quick:
            return defaults(args.out, seeds=(0,), sets=("held-out",),
                            names=("iris", "digits 3 vs 8"))
        return defaults(args.out)
    if args.out is None:
        args.out = RESULTS
    if args.sizes:
        sizes = args.sizes
    elif args.quick:
        sizes = [500, 1000, 2000]
    else:
        sizes = [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000]
    subsample = 500 if args.quick else 5000
    print(f"EMMC(10) on resampled noisy digits, one BLAS thread, load {os.getloadavg()[0]:.1f} "
          "(CPU s: one core; wall s: this machine now)")
    print(HEADER)
    rows = []
    for n in sizes:
        t0 = time.perf_counter()
        row = run_point(n, subsample=subsample if n == sizes[-1] else 0)
        rows.append(row)
        print("  ".join(fmt.format(row[key]) for key, fmt in COLUMNS),
              f"(subprocess {time.perf_counter() - t0:.0f} s)", flush=True)
    last = rows[-1]
    print(f"\nShared subsample: the first {last['subsample']} of the n = {last['n']} samples")
    print("  ARI vs digits, n-fit restricted to them  ARI vs digits, fit on them alone  "
          "ARI between the two")
    print(f"  {last['ari_large_on_subsample']:38.3f}  {last['ari_small_fit']:32.3f}  "
          f"{last['ari_large_vs_small']:19.3f}")
    if not args.no_forms:
        _forms(args.quick)
    if args.save:
        args.out.mkdir(parents=True, exist_ok=True)
        keys = [k for k, _ in COLUMNS] + ["objective", "balance_decided", "n_hidden", "n_clusters", "seed"]
        with open(args.out / "emmc_scale.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(keys)
            for row in rows:
                w.writerow([row[k] for k in keys])
        with open(args.out / "emmc_shared_subsample.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            keys = ["n", "subsample", "ari_large_on_subsample", "ari_small_fit", "ari_large_vs_small",
                    "load_1min"]
            w.writerow(keys)
            w.writerow([last[k] for k in keys])
    return rows


if __name__ == "__main__":
    main()
