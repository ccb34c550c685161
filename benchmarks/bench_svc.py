"""Labeling time of support vector clustering: complete graph vs cone cluster labeling.

Lee & Daniels (2007, slide 41) give the labeling costs O(N^2 N_sv m) for the complete graph
and O(N N_sv) for cone cluster labeling, so the ratio should grow like N m. This script
measures both labelings, and the SVDD solve (libsvm) beside them, on two moons at a fixed
kernel width q = 100 for N = 200, 500, 1000, 2000, all in one run, and prints ratios.

    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py            # N = 200 ... 2000 (minutes)
    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py --quick    # N = 100, 200, 400

Timings are wall clock, best of the repeats (the cone labeling: best of at least 5 runs).

``--scale`` measures the scalable path instead, in one run, each point in a fresh subprocess
(peak RSS ``ru_maxrss`` of the process after the fit, imports included, as in
bench_ensemble.py and bench_umc_rls.py; wall and CPU seconds of the fit; ARI with the known
labels; support vectors, SMO iterations and the labeling counts of the estimator), on two
moons and a disk (three clusters, labels known, :func:`moons_and_disk`):

* ``scalable``: ``SupportVectorClustering(gamma=200)`` (libsvm on the data, tree cone
  labeling) at n = 10^3, 3 10^3, ..., 10^6, stopping after a size over 10 min or 8 GB;
* ``dense``: ``solver="cvxpy"`` (the n x n kernel) at q = 200, n = 1,000, 2,000, 4,000;
* ``max_samples``: q = 5000 (thousands of support vectors), ``max_samples=5000``, n = 10^4,
  10^5, 10^6;
* every ``scalable`` point also fits the dense path on its first 2,000 points alone:
  ``ari_shared_vs_dense`` is the ARI between the two labelings there.

    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py --scale --csv benchmarks/results/svc_scale.csv
    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py --scale --quick     # n <= 4,000 (a minute)

Results of a full run: benchmarks/results/svc_scale.csv (columns in svc_scale.md there).
"""

import argparse
import csv
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from _child import run_child_code  # noqa: E402

from mmcedu_lab.report import Table  # noqa: E402
from mmcedu_lab.scale import moons_and_disk  # noqa: E402  (the data of this benchmark, also read by the chapters)
from mmcedu_lab.support_vector_clustering import labeling_times  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
LIMIT_WALL_S, LIMIT_PEAK_MB = 600.0, 8192.0  # the target: < 10 min and < 8 GB

# one measurement in a fresh process, as bench_ensemble.py / bench_umc_rls.py do: peak RSS
# (ru_maxrss, imports included) of the fit itself, read before the shared-subsample fit
_CHILD = """
import json, resource, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import bench_svc as b
out = b.point(**json.loads({kw!r}))
ru = resource.getrusage(resource.RUSAGE_SELF)
out["process_peak_rss_mb"] = ru.ru_maxrss / 1024.0
out["process_cpu_s"] = ru.ru_utime + ru.ru_stime
print("@@RESULT@@" + json.dumps(out))
"""


def point(n, q, max_samples=None, solver="libsvm", n_shared=0, data_seed=0):
    """One fit of the scale study (run in a fresh subprocess by :func:`run_point`).

    ``SupportVectorClustering(gamma=q, solver=solver, max_samples=max_samples)`` on
    ``moons_and_disk(n)``: wall and CPU seconds of the fit, peak RSS of the process after it,
    ARI with the known labels and the estimator's deterministic counts. With ``n_shared``,
    then the dense path (``solver="cvxpy"``, the n x n kernel) on the first ``n_shared``
    points alone, and the ARI between its labels and the fit's labels on those points.
    """
    import resource

    from mmcedu import SupportVectorClustering
    from mmcedu.metrics import adjusted_rand_score

    X, y = moons_and_disk(n, random_state=data_seed)
    t0, c0 = time.perf_counter(), time.process_time()
    m = SupportVectorClustering(gamma=q, solver=solver, max_samples=max_samples,
                                random_state=0).fit(X)
    fit_wall, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    counts = m.labeling_counts_
    out = dict(
        n=n, q=q, solver=solver, max_samples=max_samples, fit_wall_s=fit_wall,
        fit_cpu_s=fit_cpu, solve_s=m.solve_time_, labeling_s=m.labeling_time_,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        ari=adjusted_rand_score(y, m.labels_), n_clusters=m.n_clusters_,
        n_fitted=n if m.subsample_ is None else int(m.subsample_.size),
        n_support=int(m.support_.size), n_bounded=int(m.bounded_support_.size),
        n_iter=m.n_iter_, n_fits=m.solver_info_.get("n_fits"),
        libsvm_tol=m.solver_info_.get("libsvm_tol"), radius_squared=m.radius_squared_,
        radius_kernel_evaluations=counts.get("radius_kernel_evaluations"),
        labeling_kernel_evaluations=counts.get("kernel_evaluations"),
        labeling_distance_evaluations=counts.get("distance_evaluations"),
        adjacent_pairs=counts.get("adjacent_pairs"),
    )
    if n_shared:
        dense = SupportVectorClustering(gamma=q, solver="cvxpy").fit(X[:n_shared])
        out.update(
            n_shared=n_shared,
            ari_shared_vs_dense=adjusted_rand_score(dense.labels_, m.labels_[:n_shared]),
            ari_shared_vs_truth=adjusted_rand_score(y[:n_shared], m.labels_[:n_shared]),
            ari_shared_dense_vs_truth=adjusted_rand_score(y[:n_shared], dense.labels_),
            dense_shared_n_support=int(dense.support_.size),
            dense_shared_n_clusters=dense.n_clusters_,
        )
    return out


def run_point(kwargs, timeout=3600):
    """``point(**kwargs)`` in a fresh Python process (one BLAS thread); its dict."""
    code = _CHILD.format(root=ROOT, here=HERE, kw=json.dumps(kwargs))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out, error, wall = run_child_code(code, timeout=timeout, env=env)
    if out is None:
        return {**kwargs, "error": error.splitlines()[-1]}
    out["process_wall_s"] = wall
    return out


COLUMNS = ["series", "n", "q", "solver", "max_samples", "fit_wall_s", "fit_cpu_s", "solve_s",
           "labeling_s", "process_wall_s", "process_cpu_s", "peak_rss_mb", "ari", "n_clusters",
           "n_fitted", "n_support", "n_bounded", "n_iter", "n_fits", "libsvm_tol",
           "radius_squared", "radius_kernel_evaluations", "labeling_kernel_evaluations",
           "labeling_distance_evaluations", "adjacent_pairs", "n_shared", "ari_shared_vs_dense",
           "ari_shared_vs_truth", "ari_shared_dense_vs_truth", "dense_shared_n_support",
           "dense_shared_n_clusters", "load_1min", "error"]


def scale(quick, q=200.0, q_many=5000.0, csv_path=None):
    """The three series of the scale study, one run, each point in a fresh process.

    ``scalable``: the default path (libsvm on the data, tree cone labeling) at q = 200 from
    n = 10^3 up, stopping after the first size over 10 minutes or 8 GB; ``dense``: the n x n
    kernel path (``solver="cvxpy"``) at q = 200 on small n; ``max_samples``: q = 5000 (thousands
    of support vectors) fitted on a subsample of 5,000 points, the rest labeled by the nearest
    labeled point. Every point of ``scalable`` also fits the dense path on its first ``n_shared``
    points and reports the ARI between the two labelings there (not ``max_samples``: at
    q = 5000, 2,000 points are too sparse for the dense fit to be a reference).
    """
    if quick:
        plan = [("scalable", n, q, "libsvm", None) for n in (1000, 2000, 4000)]
        plan += [("dense", 1000, q, "cvxpy", None), ("max_samples", 4000, q_many, "libsvm", 1000)]
        n_shared = 500
    else:
        plan = [("scalable", n, q, "libsvm", None)
                for n in (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000)]
        plan += [("dense", n, q, "cvxpy", None) for n in (1000, 2000, 4000)]
        plan += [("max_samples", n, q_many, "libsvm", 5000) for n in (10_000, 100_000, 1_000_000)]
        n_shared = 2000
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}", flush=True)
    rows, stopped = [], set()
    for series, n, qq, solver, ms in plan:
        if series in stopped:
            continue
        kw = dict(n=n, q=qq, solver=solver, max_samples=ms,
                  n_shared=n_shared if series == "scalable" else 0)
        r = run_point(kw)
        r.update(series=series, load_1min=round(os.getloadavg()[0], 2))
        rows.append(r)
        if "error" in r:
            print(f"  {series} n = {n}: {r['error']}", flush=True)
            stopped.add(series)
            continue
        print(f"  {series:12s} n = {n:>9,d} q = {qq:g}: fit {r['fit_wall_s']:7.1f} s wall "
              f"{r['fit_cpu_s']:7.1f} s CPU, peak {r['peak_rss_mb']:6.0f} MB, ARI {r['ari']:.3f}, "
              f"N_sv {r['n_support']}, SMO it. {r['n_iter']}, clusters {r['n_clusters']}, "
              + (f"shared-subsample ARI vs dense {r['ari_shared_vs_dense']:.3f}, "
                 if "ari_shared_vs_dense" in r else "")
              + f"load {r['load_1min']}", flush=True)
        if r["process_wall_s"] > LIMIT_WALL_S or r["peak_rss_mb"] > LIMIT_PEAK_MB:
            print(f"  {series}: over 10 min or 8 GB at n = {n}; larger n skipped", flush=True)
            stopped.add(series)
    ok = [r for r in rows if "error" not in r]
    print(Table(
        [[r["series"], r["n"], r["q"], r["fit_cpu_s"], r["fit_wall_s"], r["peak_rss_mb"],
          r["n_iter"], r["n_support"], r["n_clusters"], r["ari"], r.get("ari_shared_vs_dense")]
         for r in ok],
        ["series", "n", "q", "fit CPU s", "fit wall s", "peak RSS MB", "SMO iterations", "N_sv",
         "clusters", "ARI", "ARI vs dense (shared)"], floatfmt=".3g",
        title="SVC at scale (moons + disk, three clusters); one process per point",
    ))
    big = max((r for r in ok if r["series"] == "scalable" and r["process_wall_s"] <= LIMIT_WALL_S
               and r["peak_rss_mb"] <= LIMIT_PEAK_MB), key=lambda r: r["n"], default=None)
    if big is not None:
        print(f"largest n within 10 min and 8 GB: {big['n']:,} ({big['process_wall_s']:.0f} s "
              f"wall for the process, {big['peak_rss_mb']:.0f} MB peak, ARI {big['ari']:.3f}); "
              f"first {big['n_shared']} points: ARI with the dense fit of them "
              f"{big['ari_shared_vs_dense']:.3f}, vs truth {big['ari_shared_vs_truth']:.3f} "
              f"(scalable) and {big['ari_shared_dense_vs_truth']:.3f} (dense)")
    if csv_path:
        with open(csv_path, "w", newline="") as fh:
            fh.write(f"# bench_svc.py --scale, one run, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}"
                     f" UTC, {os.cpu_count()} cores, OMP_NUM_THREADS="
                     f"{os.environ.get('OMP_NUM_THREADS')}; columns and load in svc_scale.md\n")
            w = csv.DictWriter(fh, COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
        print(f"wrote {csv_path}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about 10 s)")
    parser.add_argument("--scale", action="store_true",
                        help="the scalable path from n = 10^3 to 10^6 (subprocess per point)")
    parser.add_argument("--q", type=float, default=100.0, help="kernel width q (default 100)")
    parser.add_argument("--repeats", type=int, default=1, help="fits per size (default 1)")
    parser.add_argument("--csv", default=None,
                        help="with --scale: write the rows to this CSV (the committed one is "
                        "benchmarks/results/svc_scale.csv)")
    args = parser.parse_args(argv)
    if args.scale:
        return scale(args.quick, csv_path=args.csv)
    sizes = (100, 200, 400) if args.quick else (200, 500, 1000, 2000)

    def progress(done, total):
        print(f"  N = {sizes[done - 1]} done ({done}/{total}), {time.perf_counter() - t0:.1f} s",
              flush=True)

    t0 = time.perf_counter()
    rows = labeling_times(sizes, q=args.q, repeats=args.repeats, progress=progress)
    table = Table(
        [[r["N"], r["n_support"], r["solve"], r["complete_graph"], r["cone"], r["ratio"],
          r["predicted"], r["complete_graph"] / r["solve"]] for r in rows],
        ["N", "N_sv", "SVDD solve (s)", "complete graph (s)", "cone (s)",
         "CG / cone", "N m (slide 41)", "CG / solve"],
        floatfmt=".3g",
        title=f"SVC labeling time, two moons, q = {args.q:g}, m = 10 segment points",
    )
    print(table)
    by_n = {r["N"]: r for r in rows}
    if 1000 in by_n:
        print(f"\nCG / cone at N = 1000: {by_n[1000]['ratio']:.0f}x (expected >= 1000x)")
    first, last = rows[0], rows[-1]
    growth_cg = last["complete_graph"] / first["complete_graph"]
    growth_cone = last["cone"] / first["cone"]
    print(f"N x{last['N'] / first['N']:.0f}: complete graph time x{growth_cg:.0f}, "
          f"cone time x{growth_cone:.1f}, SVDD solve x{last['solve'] / first['solve']:.1f}")
    return rows


if __name__ == "__main__":
    main()
