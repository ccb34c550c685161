"""Benchmark: the one-line label-free call at scale, every estimator, in fresh processes.

For every estimator with its large-data settings, ``LabelFreeSearch(estimator,
random_state=0, n_jobs=2).fit(X)``: no grid and no criterion (the estimator's own
``label_free_rule``), the defaults ``max_samples="auto"`` and ``n_choice_samples="auto"`` (the
choice is made on ``min(5, n // 2000)`` disjoint samples of 2,000 whose scores are pooled, then
the chosen grid point is fitted once on all of ``X``). Every point runs in a fresh
subprocess and reports its wall seconds, CPU seconds (the process and its joblib workers,
which are shut down and reaped before the reading), peak resident memory (the largest
``ru_maxrss`` of the process and of its workers), the
chosen grid point (its index in the rule's grid) and the ARI of ``labels_`` against the known
labels, and the 1-minute load average of the machine before and after the point. Stability
of the choice: the same distribution at a small and a large ``n`` should give the same grid
index (``benchmarks/studies/label_free_stability.py`` measures it over seeds).

Data (known labels): three Gaussian clusters in 2-D (centres (0, 0), (4, 0), (2, 3.5), standard
deviation 0.8) for the k-cluster methods; two of them for the two-cluster methods (GMMC, SDP
MMC); two moons and a disk (``bench_svc.moons_and_disk``) for support vector clustering, which
needs gaps between its clusters. Seed 0.

    python benchmarks/bench_label_free_scale.py              # n = 10^4 and 10^6 (SDP MMC 10^5)
    python benchmarks/bench_label_free_scale.py --quick      # two estimators, n = 2,500 and 3,000
    python benchmarks/bench_label_free_scale.py --csv benchmarks/results/label_free_scale.csv
    python benchmarks/bench_label_free_scale.py --jobs 3 ...  # three points at a time
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from concurrent.futures import ThreadPoolExecutor

from _child import MARKER, run_child_code

#: name -> (constructor source, number of clusters, largest n of the full run); support vector
#: clustering runs on bench_svc's two moons and a disk (it cannot separate touching Gaussians
#: with its default C = 1: one cluster at every width of its grid)
ESTIMATORS = {
    "UMCRLS": ("UMCRLS(3, n_components=100, dtype='float32', random_state=0)", 3, 10**6),
    "SupportVectorClustering": ("SupportVectorClustering(random_state=0)", 3, 10**6),
    "RobustEnsembleClustering": ("RobustEnsembleClustering(3, solver='compressed', random_state=0)",
                                 3, 10**6),
    "GMMC": ("GMMC(n_components=100, random_state=0)", 2, 10**6),
    "EMMC": ("EMMC(3, random_state=0)", 3, 10**6),
    "SDPMMC": ("SDPMMC(n_components=200, random_state=0)", 2, 10**5),
}

CHILD = """
import json, os, resource, sys, time, warnings
import numpy as np
from mmcedu import *
from mmcedu.datasets import blobs
from mmcedu.metrics import adjusted_rand_score
sys.path.insert(0, {bench_dir!r})
if {name!r} == "SupportVectorClustering":
    from bench_svc import moons_and_disk
    X, y = moons_and_disk({n}, random_state=0)
else:
    X, y = blobs({n}, centers=[[0, 0], [4, 0], [2, 3.5]][:{k}], cluster_std=0.8, random_state=0)
est = {ctor}
load_before = os.getloadavg()[0]
t0, c0 = time.perf_counter(), time.process_time()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    search = LabelFreeSearch(est, random_state=0, n_jobs=2).fit(X)
wall = time.perf_counter() - t0
from joblib.externals.loky import get_reusable_executor
get_reusable_executor().shutdown(wait=True)  # reap the workers: their CPU and peak memory count
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print({marker!r} + json.dumps({{
    "wall_s": wall, "cpu_s": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
    "peak_rss_mb": max(own.ru_maxrss, kids.ru_maxrss) / 1024,
    "best_index": int(search.best_index_), "grid_size": len(search.cv_results_["params"]),
    "n_choice_samples": int(search.n_choice_samples_),
    "load_before": load_before, "load_after": os.getloadavg()[0],
    "best_params": {{k: float(v) for k, v in search.best_params_.items()}},
    "ari": float(adjusted_rand_score(y, search.labels_)), "n_clusters": int(search.n_clusters_),
    "criteria": search.criteria_, "tolerance": float(search.tolerance_),
    # the pooled score of every grid point per criterion and its numbers of clusters (the
    # choice's inputs, so a near-tie can be read from the table)
    "scores": {{c: [float(v) for v in search.cv_results_[
        "mean_score" if len(search.criteria_) == 1 else "mean_score_" + c]] for c in search.criteria_}},
    "grid_n_clusters": {{k: [float(v) for v in search.cv_results_[k]] for k in
                        ("mean_n_clusters", "full_n_clusters") if k in search.cv_results_}},
    "warnings": sorted({{str(w.category.__name__) for w in caught}}),
}}))
"""


def run_point(name, n, timeout, pythonpath=None):
    ctor, k, _ = ESTIMATORS[name]
    code = CHILD.format(n=int(n), k=k, ctor=ctor, marker=MARKER, name=name,
                        bench_dir=os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    result, error, wall = run_child_code(code, timeout=timeout, env=env)
    row = {"estimator": name, "n": int(n), "process_wall_s": round(wall, 1), "error": error[-300:]}
    if result:
        row.update(result)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="EMMC and the ensemble, n = 2,500 and 3,000")
    parser.add_argument("--only", nargs="*", default=None, help="estimator names")
    parser.add_argument("--csv", default=None, help="write the rows to this file")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--jobs", type=int, default=1,
                        help="points measured at the same time (each in its own process; the "
                             "largest n start first, the costliest estimator first)")
    parser.add_argument("--markdown", default=None, metavar="CSV",
                        help="print the results' and the README's tables from this CSV and stop")
    parser.add_argument("--pythonpath", nargs="*", default=[], metavar="NAME=PATH",
                        help="run this estimator's points with PYTHONPATH=PATH")
    args = parser.parse_args(argv)
    if args.markdown:
        with open(args.markdown, newline="") as f:
            table = list(csv.DictReader(f))
        print("\n".join(results_table(table)) + "\n\n" + "\n".join(readme_table(table)))
        return
    # BLAS threads: with one point at a time none is set, so the final fit on all of X uses every
    # core and joblib gives each of a point's workers cores / n_jobs (it keeps a value that is
    # set, which would oversubscribe); points measured at once share the cores
    if args.jobs > 1:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(max(1, (os.cpu_count() or 1) // (2 * args.jobs))))
    names = args.only or (["EMMC", "RobustEnsembleClustering"] if args.quick else list(ESTIMATORS))
    paths = dict(item.split("=", 1) for item in args.pythonpath)
    points = [(name, n) for name in names
              for n in ((2500, 3000) if args.quick else (10**4, ESTIMATORS[name][2]))]

    measured = []

    def measure(point):
        row = run_point(*point, args.timeout, paths.get(point[0]))
        measured.append(row)
        if args.csv:  # every finished point is kept, in the order measured
            write_csv(args.csv + ".partial", measured)
        print(f"{row['estimator']:26s} n={row['n']:>9,d}  wall {row.get('wall_s', float('nan')):8.1f} s  "
              f"cpu {row.get('cpu_s', float('nan')):8.1f} s  "
              f"peak {row.get('peak_rss_mb', float('nan')):7.0f} MB  "
              f"ARI {row.get('ari', float('nan')):.3f}  "
              f"index {row.get('best_index', '?')}/{row.get('grid_size', '?')}  "
              f"{row['error'][:80]}", flush=True)
        return row

    heavy = ["GMMC", "SDPMMC", "UMCRLS", "EMMC", "SupportVectorClustering", "RobustEnsembleClustering"]
    order = sorted(points, key=lambda p: (-p[1], heavy.index(p[0]))) if args.jobs > 1 else points
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done = dict(zip(order, pool.map(measure, order)))
    rows = [done[p] for p in points]
    for name in names:
        small, large = [r for r in rows if r["estimator"] == name]
        same = small.get("best_index") is not None and small.get("best_index") == large.get("best_index")
        print(f"{name:26s} same grid point at both sizes: {same}", flush=True)
    if args.csv:
        write_csv(args.csv, rows)


KEYS = ["estimator", "n", "wall_s", "cpu_s", "peak_rss_mb", "ari", "n_clusters", "best_index",
        "grid_size", "n_choice_samples", "best_params", "criteria", "tolerance", "scores",
        "grid_n_clusters", "warnings", "load_before",
        "load_after", "process_wall_s", "error"]


def settings(name):
    """The constructor as shown in the tables (without its seed)."""
    return ESTIMATORS[name][0].replace(", random_state=0", "").replace("random_state=0", "")


def power(n):
    n = int(n)
    k = len(str(n)) - 1
    return f"10^{k}" if n == 10**k else f"{n:,d}"


def results_table(table):
    """The table of ``benchmarks/results/label_free_scale.md``: every row of the CSV."""
    out = ["| estimator (settings) | n | CPU s | wall s | peak MB | ARI | grid index (of 8) | "
           "choice samples |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table:
        if not r.get("cpu_s"):
            out.append(f"| `{settings(r['estimator'])}` | {power(r['n'])} | not measured: "
                       f"{r['error'][:60]} | | | | | |")
            continue
        out.append(f"| `{settings(r['estimator'])}` | {power(r['n'])} | {float(r['cpu_s']):,.1f} | "
                   f"{float(r['wall_s']):,.1f} | {float(r['peak_rss_mb']):,.0f} | "
                   f"{float(r['ari']):.3f} | {r['best_index']} | {r.get('n_choice_samples') or 1} |")
    return out


def readme_table(table):
    """The README's Large-data table: each estimator at its largest n, the choice at both n."""
    out = ["| estimator, large-data settings | n | wall s on 2 cores (CPU s) | peak memory | ARI | "
           "grid point at 10^4 / largest n |", "|---|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(r["estimator"] for r in table):
        small, large = sorted((r for r in table if r["estimator"] == name), key=lambda r: int(r["n"]))
        if not large.get("cpu_s"):
            out.append(f"| `{settings(name)}` | {power(large['n'])} | not measured: "
                       f"{large['error'][:60]} | | | {small.get('best_index') or '?'} / ? |")
            continue
        out.append(f"| `{settings(name)}` | {power(large['n'])} | {float(large['wall_s']):,.0f} "
                   f"({float(large['cpu_s']):,.0f}) | {float(large['peak_rss_mb']):,.0f} MB | "
                   f"{float(large['ari']):.2f} | {small['best_index']} / {large['best_index']} |")
    return out


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, KEYS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(r[k]) if isinstance(r.get(k), (dict, list)) else r.get(k)
                        for k in KEYS})


if __name__ == "__main__":
    main()
