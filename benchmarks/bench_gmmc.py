"""GMMC at scale: time, CPU, peak memory and ARI of ``GMMC(n_components=...)`` versus n.

Usage::

    python benchmarks/bench_gmmc.py                  # n = 1,000 ... 100,000 (about 20 min)
    python benchmarks/bench_gmmc.py --quick          # n = 1,000 and 2,000 (about 20 CPU s)
    python benchmarks/bench_gmmc.py --sizes 1000 10000 --out results.csv
    python benchmarks/bench_gmmc.py --figure1        # Figure 1 of the paper: SDP MMC vs GMMC
    python benchmarks/bench_gmmc.py --defaults       # GMMC() vs k-means on real data, 5 seeds
    python benchmarks/bench_gmmc.py --defaults --sdpmmc  # SDPMMC() likewise (n <= 150 only)

Data: the registered two circles (labels known), RBF kernel with ``gamma = 50``,
``balance_penalty="stiff"`` (the weight the committed scale results were measured with). Each size
runs in its own process with one BLAS thread; that process reports its wall-clock and CPU
seconds (user + system: what an idle core would need, robust to other load on the machine)
and its peak resident memory (``ru_maxrss``, data generation included). The path is the
Nystroem factor of rank ``n_components`` (default 300) with the structured reduced matrix
(no n x n array) and the preconditioned Burer-Monteiro solver; its duality gap is certified
for the relaxation of the approximated kernel. The exact-kernel path (``n_components=None``)
then labels a shared subsample (2,000 points) of the largest data set, in
its own process, and the ARI of the two labelings on that subsample is printed (300 points
in quick mode).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

GAMMA = 50.0


def _data(n):
    from mmcedu.datasets import two_circles

    return two_circles(n, random_state=0)


def _subsample(n, m):
    return np.sort(np.random.default_rng(0).choice(n, size=min(m, n), replace=False))


def child(args):
    """One fit in this process; prints one JSON line."""
    import warnings

    from sklearn.metrics import adjusted_rand_score

    from mmcedu import GMMC

    X, y = _data(args["n"])
    sub = None
    if args.get("sub"):
        sub = _subsample(args["n"], args["sub"])
        if args["dense"]:
            X, y = X[sub], y[sub]
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        model = GMMC(gamma=GAMMA, n_components=None if args["dense"] else args["r"],
                     balance_penalty="stiff", random_state=0).fit(X)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "n": len(X), "seconds": time.perf_counter() - t0,
        "cpu_seconds": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
        "peak_mb": r1.ru_maxrss / 1024.0, "n_iter": int(model.n_iter_),
        "rel_gap": model.duality_gap_ / max(model.objective_, 1.0),
        "ari": adjusted_rand_score(y, model.labels_),
        "warnings": [w.category.__name__ for w in ws],
        "rank": model.solver_info_.get("rank"), "n_matvec": model.solver_info_.get("n_matvec"),
        "tau": model.solver_info_.get("tau"),
    }
    if sub is not None:
        out["sub_labels"] = (model.labels_ if args["dense"] else model.labels_[sub]).tolist()
    print("RESULT " + json.dumps(out), flush=True)


def run(args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(args)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    line = [s for s in proc.stdout.splitlines() if s.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def scale(sizes, r, m_sub, out=None):
    from sklearn.metrics import adjusted_rand_score

    rows = []
    print(f"GMMC(n_components={r}, gamma={GAMMA}) on two circles, one process per size")
    print(f"{'n':>8} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'iters':>6} {'rel gap':>9} "
          f"{'ARI':>6}")
    for i, n in enumerate(sizes):
        res = run({"n": n, "r": min(r, n), "dense": False,
                   "sub": m_sub if i == len(sizes) - 1 else None})
        rows.append(res)
        print(f"{n:>8} {res['seconds']:8.1f} {res['cpu_seconds']:8.1f} {res['peak_mb']:8.0f} "
              f"{res['n_iter']:6d} {res['rel_gap']:9.2e} {res['ari']:6.3f} "
              f"{' '.join(res['warnings'])}", flush=True)
    dense = run({"n": sizes[-1], "r": None, "dense": True, "sub": m_sub})
    ari = adjusted_rand_score(dense["sub_labels"], rows[-1]["sub_labels"])
    print(f"shared subsample of {dense['n']} points of n = {sizes[-1]}: exact kernel "
          f"{dense['seconds']:.1f} s (CPU {dense['cpu_seconds']:.1f} s), "
          f"{dense['peak_mb']:.0f} MB, rel gap {dense['rel_gap']:.2e}, ARI vs truth "
          f"{dense['ari']:.3f}; ARI exact vs n_components={r}: {ari:.3f} "
          f"{' '.join(dense['warnings'])}")
    if out:
        with open(out, "w", newline="") as fh:
            w = csv.writer(fh)
            # the columns of the committed gmmc_scale.csv (read by chapter 03); CPU seconds and
            # warnings are printed above and recorded in gmmc_scale.md
            w.writerow(["n", "n_components", "rank", "seconds", "peak_mb", "n_iter", "n_matvec",
                        "rel_gap", "ari", "tau", "source"])
            for res in rows:
                w.writerow([res["n"], min(r, res["n"]), res["rank"], f"{res['seconds']:.2f}",
                            f"{res['peak_mb']:.0f}", res["n_iter"], res["n_matvec"],
                            f"{res['rel_gap']:.3g}", f"{res['ari']:.4f}", res["tau"], "package"])
            w.writerow([dense["n"], "exact", dense["rank"] if dense["rank"] is not None else "",
                        f"{dense['seconds']:.2f}", f"{dense['peak_mb']:.0f}", dense["n_iter"],
                        dense["n_matvec"] if dense["n_matvec"] is not None else "",
                        f"{dense['rel_gap']:.3g}", f"{dense['ari']:.4f}", "",
                        "package (exact kernel, shared subsample)"])
    return rows, dense, ari


def figure1(quick):
    """Figure 1 of Valizadegan & Jin (2006): time of SDP MMC and GMMC versus n."""
    from mmcedu_lab.gmmc import scaling
    from mmcedu_lab.report import Table

    sizes = [20, 40, 60, 200, 500] if quick else [20, 40, 60, 80, 200, 500, 1000, 2000]
    sdp_max = 60 if quick else 80
    runs = scaling(sizes, max_n={"SDP MMC": sdp_max}, repeats=3)
    sdp = {r["n"]: r for r in runs if r["method"] == "SDP MMC" and not r["skipped"]}
    gmmc = {r["n"]: r for r in runs if r["method"] == "GMMC"}
    table = []
    for n in sizes:
        s, g = sdp.get(n, {}).get("seconds"), gmmc[n]
        table.append([n, s, g["seconds"], s / g["seconds"] if s else None, g["gap"], g["error"]])
    print(Table(table, ["n", "SDP MMC s", "GMMC s", "SDP/GMMC", "GMMC gap", "GMMC error %"],
                floatfmt=".3g", title="Figure 1: one fit, same data"))


def _default_sets(which):
    """Standardized real data: ``"held-out"`` (the four sets the package reports, not used to
    choose any default) or ``"chosen-on"`` (the sets the balance default was chosen on,
    benchmarks/studies/gmmc_default_rule.md)."""
    from _default_sets import chosen_on_pairs, held_out, standardized
    from sklearn.datasets import load_iris, load_wine, make_blobs, make_classification

    if which == "held-out":
        data = held_out()
    else:
        data = chosen_on_pairs()
        Xi, yi = load_iris(return_X_y=True)
        data["iris versicolor vs virginica"] = (Xi[yi > 0], yi[yi > 0])
        Xw, yw = load_wine(return_X_y=True)
        data["wine 0 vs 1"] = (Xw[yw < 2], yw[yw < 2])
        for rs in (10, 11, 12):
            data[f"blobs 100/300 (seed {rs})"] = make_blobs([100, 300], 2, cluster_std=2.5,
                                                            random_state=rs)
        data["classification 0.3/0.7"] = make_classification(
            400, 10, n_informative=5, weights=[0.3, 0.7], class_sep=1.5, random_state=10)
    return standardized(data)


def defaults(out=None, seeds=(0, 1, 2, 3, 4), sets=("held-out", "chosen-on"), estimator="GMMC"):
    """``GMMC()`` (or ``SDPMMC()`` on the sets with n <= 150) with its defaults versus
    ``KMeans(2)`` on standardized real data (ARI with the true classes; both methods make two
    clusters). Reports the cluster sizes and the warnings of each fit."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from mmcedu import GMMC, SDPMMC

    rows = []
    print(f"{'set':<9} {'data':<30} {'seed':>4} {'ARI':>6} {'k-means':>7} {'sizes':>10} "
          f"{'s':>6} {'rel gap':>8}  warnings")
    for which in sets:
        for name, (X, y) in _default_sets(which).items():
            if estimator == "SDPMMC" and len(X) > 150:
                continue
            for seed in seeds:
                t0 = time.perf_counter()
                with warnings.catch_warnings(record=True) as ws:
                    warnings.simplefilter("always")
                    if estimator == "SDPMMC":
                        model = SDPMMC(rounding="eigenvector", random_state=seed).fit(X)  # as recorded
                    else:
                        model = GMMC(random_state=seed).fit(X)
                sec = time.perf_counter() - t0
                km = KMeans(2, n_init=10, random_state=seed).fit(X)
                gap = getattr(model, "duality_gap_", None)
                rel = np.nan if gap is None else gap / max(abs(model.objective_), 1.0)
                sizes = "/".join(str(int(c)) for c in sorted(np.bincount(model.labels_, minlength=2)))
                row = [which, name, seed, adjusted_rand_score(y, model.labels_),
                       adjusted_rand_score(y, km.labels_), sizes, sec, rel,
                       " ".join(sorted({w.category.__name__ for w in ws}))]
                rows.append(row)
                print(f"{which:<9} {name:<30} {seed:>4} {row[3]:6.3f} {row[4]:7.3f} {sizes:>10} "
                      f"{sec:6.1f} {rel:8.1e}  {row[8]}", flush=True)
    if out:
        with open(out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["set", "data", "seed", "ari", "kmeans_ari", "sizes", "seconds",
                        "rel_gap", "warnings"])
            for r in rows:
                w.writerow([r[0], r[1], r[2], f"{r[3]:.4f}", f"{r[4]:.4f}", r[5], f"{r[6]:.2f}",
                            f"{r[7]:.3g}", r[8]])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the list of n")
    parser.add_argument("--n-components", type=int, default=None,
                        help="rank of the Nystroem factor (default 300)")
    parser.add_argument("--sub", type=int, default=None,
                        help="size of the shared subsample (default 2,000; 300 with --quick)")
    parser.add_argument("--out", help="write the table to this CSV file")
    parser.add_argument("--figure1", action="store_true",
                        help="the paper's Figure 1 (SDP MMC vs GMMC, small n) instead")
    parser.add_argument("--defaults", action="store_true",
                        help="GMMC() vs k-means on standardized real data (5 seeds) instead")
    parser.add_argument("--sdpmmc", action="store_true",
                        help="with --defaults: SDPMMC() instead of GMMC() (sets with n <= 150)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    if args.figure1:
        return figure1(args.quick)
    if args.defaults:
        return defaults(args.out, seeds=(0,) if args.quick else (0, 1, 2, 3, 4),
                        estimator="SDPMMC" if args.sdpmmc else "GMMC")
    sizes = args.sizes or ([1000, 2000] if args.quick else [1000, 3000, 10000, 30000, 100000])
    r = args.n_components or 300
    scale(sizes, r, args.sub or (300 if args.quick else 2000), args.out)


if __name__ == "__main__":
    main()
