"""Benchmark: RobustEnsembleClustering from N = 1,000 to N = 1,000,000 samples, 50 base clusterings.

Data with known labels: 10 unit-variance Gaussian clusters in 10-D (centres uniform in a cube
of side ``6 * 10**0.1``). Ensemble: ``mmcedu.partitions.base_partitions`` with 50 k-means
members (K = 10, a random half of the features each), 10 of them replaced by random
labelings, so ``c = sum_m k_m = 500`` columns. Every measurement runs in a fresh subprocess
(one BLAS thread) and reports its wall and CPU seconds and its peak resident memory
(``ru_maxrss``, imports and the loaded labels included):

* ``generate``: the data and the 50 base clusterings (reported separately from the fit);
* ``fit``: ``RobustEnsembleClustering(10, partitions="precomputed")`` with the default
  ``solver="auto"`` (the compressed c x c path at these sizes) and, up to ``--dense-max``
  samples, ``solver="dense"`` (the same iterates on the N x c matrix);
* ``shared``: the labels of the largest fit on its first ``--shared`` samples against the
  dense fit of those samples alone (ARI against the truth and against each other).

    python benchmarks/bench_ensemble.py                       # N = 1e3 ... 1e6 (about 15 min)
    python benchmarks/bench_ensemble.py --quick               # N = 500, 2000; M = 10, K = 5
    python benchmarks/bench_ensemble.py --csv benchmarks/results/ensemble_scale.csv
    python benchmarks/bench_ensemble.py --coassoc             # vs co-association and vote

Timings on a shared machine are noisy: the load average is printed with every row, and CPU
seconds (one core) are the figure to judge when the machine is busy.
"""

import argparse
import csv
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _child import run_child_code  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M, K, D, N_RANDOM = 50, 10, 10, 10

_CHILD = """
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import bench_ensemble as b
out = getattr(b, {fn!r})(**json.loads({kw!r}))
ru = resource.getrusage(resource.RUSAGE_SELF)
out["peak_rss_mb"] = ru.ru_maxrss / 1024.0
out["cpu_s_process"] = ru.ru_utime + ru.ru_stime
print("@@RESULT@@" + json.dumps(out))
"""


def run_child(fn, timeout=3600, **kwargs):
    """Run ``fn(**kwargs)`` of this module in a fresh Python process; return its dict."""
    code = _CHILD.format(root=ROOT, here=os.path.dirname(os.path.abspath(__file__)), fn=fn,
                         kw=json.dumps(kwargs))
    out, error, wall = run_child_code(code, timeout=timeout,
                                      env=dict(os.environ, OMP_NUM_THREADS="1"))
    if out is None:
        raise RuntimeError(f"{fn}({kwargs}) failed:\n{error[-3000:]}")
    out["wall_s_process"] = wall
    return out


# ------------------------------------------------------------------- run inside the children
def gaussian_mixture(n, n_clusters=K, n_features=D, separation=6.0, random_state=0):
    rng = np.random.RandomState(random_state)
    side = separation * n_clusters ** (1.0 / n_features)
    centres = rng.uniform(0, side, size=(n_clusters, n_features))
    y = rng.randint(n_clusters, size=n)
    return centres[y] + rng.standard_normal((n, n_features)), y


def generate(n, path, seed=0, m=M, k=K, n_random=N_RANDOM):
    from mmcedu.partitions import base_partitions

    c0, t0 = time.process_time(), time.perf_counter()
    X, y = gaussian_mixture(n, n_clusters=k, random_state=seed)
    P = base_partitions(X, m, k, n_random=n_random, random_state=seed)
    out = {"generate_s": time.perf_counter() - t0, "generate_cpu_s": time.process_time() - c0}
    np.save(path + "_P.npy", P.astype(np.int32))
    np.save(path + "_y.npy", y)
    return out


def fit(path, solver="auto", rows=None, save_labels=False, k=K):
    from mmcedu import RobustEnsembleClustering
    from mmcedu.metrics import adjusted_rand_score

    P, y = np.load(path + "_P.npy"), np.load(path + "_y.npy")
    if rows is not None:
        P, y = P[:rows], y[:rows]
    c0, t0 = time.process_time(), time.perf_counter()
    est = RobustEnsembleClustering(k, partitions="precomputed", solver=solver, random_state=0).fit(P)
    out = {"fit_s": time.perf_counter() - t0, "fit_cpu_s": time.process_time() - c0}
    if save_labels:
        np.save(path + f"_labels_{solver}.npy", est.labels_)
    out.update(
        n=int(P.shape[0]), c=int(est.anomaly_scores_.size), solver=est.solver_info_["solver"],
        ari=float(adjusted_rand_score(y, est.labels_)), n_iter=int(est.n_iter_),
        converged=bool(est.converged_), tangent_residual=float(est.tangent_residual_),
        singular_value_gap=float(est.singular_value_gap_),
    )
    if rows is not None:
        np.save(path + f"_labels_sub_{solver}.npy", est.labels_)
    return out


# ------------------------------------------------------------------------------- the driver
def _row(part, r, load, m=M):
    keys = ["n", "c", "solver", "generate_s", "generate_cpu_s", "fit_s", "fit_cpu_s",
            "peak_rss_mb", "ari", "n_iter", "converged", "tangent_residual",
            "singular_value_gap"]
    # "run": the column of the committed ensemble_scale.csv (read by chapter 07); all rows of
    # one invocation share it
    return {"run": "one_run", "part": part, "M": m, **{k: r.get(k) for k in keys},
            "load_1min": round(load, 2)}


def scale(sizes, dense_sizes, n_shared, csv_path=None, m=M, k=K, n_random=N_RANDOM):
    rows = []
    tmp = tempfile.mkdtemp(prefix="bench_ensemble_")
    head = (f"{'part':8s} {'N':>9s} {'solver':10s} {'gen s':>7s} {'gen cpu':>7s} {'fit s':>7s} "
            f"{'fit cpu':>7s} {'peak MB':>8s} {'ARI':>6s} {'iter':>5s} {'conv':>5s} "
            f"{'tangent':>8s} {'load':>5s}")
    print(head, flush=True)

    def show(row):
        def f(v, fmt):
            width = int(fmt.split(".")[0].rstrip("d"))
            return format(v, fmt) if v is not None else "-".rjust(width)

        print(f"{row['part']:8s} {row['n']:>9d} {row['solver'] or '-':10s} "
              f"{f(row['generate_s'], '7.1f')} {f(row['generate_cpu_s'], '7.1f')} "
              f"{f(row['fit_s'], '7.1f')} {f(row['fit_cpu_s'], '7.1f')} "
              f"{f(row['peak_rss_mb'], '8.0f')} {f(row['ari'], '6.3f')} {f(row['n_iter'], '5d')} "
              f"{str(row['converged']):>5s} {f(row['tangent_residual'], '8.1e')} "
              f"{row['load_1min']:5.1f}", flush=True)

    for n in sizes:
        path = os.path.join(tmp, str(n))
        g = run_child("generate", n=n, path=path, m=m, k=k, n_random=n_random)
        g.update(n=n, peak_rss_mb=g["peak_rss_mb"])
        rows.append(_row("generate", g, os.getloadavg()[0], m))
        show(rows[-1])
        for solver in ["auto"] + (["dense"] if n in dense_sizes else []):
            r = run_child("fit", path=path, solver=solver, save_labels=n == sizes[-1], k=k)
            rows.append(_row("fit", r, os.getloadavg()[0], m))
            show(rows[-1])
            if solver == "dense":  # the same iterates: same count and residuals
                auto = next(x for x in rows if x["part"] == "fit" and x["n"] == n)
                print(f"         same iterations as the compressed path: "
                      f"{auto['n_iter'] == r['n_iter']}", flush=True)
    # Shared subsample: the largest fit's labels on its first n_shared samples vs the dense fit.
    from mmcedu.metrics import adjusted_rand_score

    n = sizes[-1]
    path = os.path.join(tmp, str(n))
    r = run_child("fit", path=path, solver="dense", rows=n_shared, k=k)
    y = np.load(path + "_y.npy")[:n_shared]
    big = np.load(path + "_labels_auto.npy")[:n_shared]
    dense = np.load(path + "_labels_sub_dense.npy")
    shared = {
        "n": n, "n_shared": n_shared, "ari_big_vs_truth": float(adjusted_rand_score(y, big)),
        "ari_dense_vs_truth": float(adjusted_rand_score(y, dense)),
        "ari_big_vs_dense": float(adjusted_rand_score(dense, big)),
    }
    rows.append(_row("shared", {**r, "n": n_shared}, os.getloadavg()[0], m))
    show(rows[-1])
    print(f"\nshared subsample (first {n_shared} of N = {n}): ARI vs truth "
          f"{shared['ari_big_vs_truth']:.4f} (N = {n} fit) vs {shared['ari_dense_vs_truth']:.4f} "
          f"(dense fit of the subsample); ARI between them {shared['ari_big_vs_dense']:.4f}; "
          f"difference {abs(shared['ari_big_vs_truth'] - shared['ari_dense_vs_truth']):.4f} "
          "(target < 0.05)")
    if csv_path:
        rows[-1].update(ari_big_vs_dense=shared["ari_big_vs_dense"],
                        ari_big_on_shared_vs_truth=shared["ari_big_vs_truth"])
        fields = list(rows[0]) + ["ari_big_vs_dense", "ari_big_on_shared_vs_truth"]
        with open(csv_path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            for row in rows:
                w.writerow(row)
        print(f"wrote {csv_path}")
    return rows, shared


def coassoc(quick):
    """The low-rank fits against co-association (O(N^2) memory) and majority vote."""
    from mmcedu_lab.robust_ensemble import scaling

    sizes = [500, 1000, 2000] if quick else [1000, 2000, 5000, 10000, 20000]
    rows = scaling(sizes, memory="tracemalloc")
    by = {(r["n"], r["method"]): r for r in rows}
    methods = ["l12 ALM", "fro", "co-assoc", "vote"]
    print("seconds | peak MiB (tracemalloc) | ARI vs truth")
    print(f"{'N':>6}  " + "  ".join(f"{m:>24}" for m in methods))
    for n in sizes:
        cells = []
        for m in methods:
            r = by[(n, m)]
            cells.append(f"{'skipped':>24}" if r["skipped"] else
                         f"{r['seconds']:7.2f}s {r['peak_mb']:8.0f}MiB {r['ari']:5.2f}")
        print(f"{n:>6}  " + "  ".join(cells))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 500, 2000 with M = 10, K = 5 (seconds)")
    parser.add_argument("--csv", default=None, help="write the rows to this CSV file")
    parser.add_argument("--dense-max", type=int, default=10_000,
                        help="also fit solver='dense' up to this N (default 10,000)")
    parser.add_argument("--shared", type=int, default=10_000,
                        help="size of the shared subsample (default 10,000)")
    parser.add_argument("--coassoc", action="store_true",
                        help="instead: the low-rank fits against co-association and vote")
    args = parser.parse_args(argv)
    if args.coassoc:
        coassoc(args.quick)
        return
    if args.quick:  # a small ensemble (c = 50 columns) so that the smoke test takes seconds
        sizes, n_shared, m, k, n_random = [500, 2000], 500, 10, 5, 2
    else:
        sizes, n_shared, m, k, n_random = [1000, 10_000, 100_000, 1_000_000], args.shared, M, K, N_RANDOM
    dense = [n for n in sizes if n <= (2000 if args.quick else args.dense_max)]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}, "
          f"M = {m} base clusterings, K = {k}, {n_random} random members")
    scale(sizes, dense, n_shared, args.csv, m, k, n_random)


if __name__ == "__main__":
    main()
