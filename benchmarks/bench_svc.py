"""Labeling time of support vector clustering: complete graph vs cone cluster labeling.

Lee & Daniels (2007, slide 41) give the labeling costs O(N^2 N_sv m) for the complete graph
and O(N N_sv) for cone cluster labeling, so the ratio should grow like N m. This script
measures both labelings, and the SVDD solve (libsvm) beside them, on two moons at a fixed
kernel width q = 100 for N = 200, 500, 1000, 2000, all in one run, and prints ratios.

    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py            # N = 200 ... 2000 (minutes)
    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py --quick    # N = 100, 200, 400

Timings are wall clock, best of the repeats (the cone labeling: best of at least 5 runs).

``--scale`` measures the scalable path instead (libsvm on the data, cone labeling through a
tree): ``SupportVectorClustering(gamma=200)`` on two moons and a disk (three clusters, labels
known) from n = 10^3 to 10^6, each n in a fresh subprocess (peak RSS, CPU seconds of the
process, wall seconds, SMO iterations, support vectors, ARI), and the dense and scalable fits
on a shared subsample (``max_samples``). ``--scale --quick`` stops at n = 4,000 (seconds).
Results of a full run: benchmarks/results/svc_scale.csv (see svc_scale.md there).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from mmcedu.experiments.support_vector_clustering import labeling_times
from mmcedu.report import Table

_POINT = """
import json, resource, sys, time
import numpy as np
from mmcedu import SupportVectorClustering
from mmcedu.metrics import adjusted_rand_score
sys.path.insert(0, {here!r})
from bench_svc import moons_and_disk
n, q, max_samples = {n}, {q}, {max_samples}
X, y = moons_and_disk(n)
t0, c0 = time.perf_counter(), time.process_time()
m = SupportVectorClustering(gamma=q, max_samples=max_samples, random_state=0).fit(X)
out = dict(n=n, q=q, max_samples=max_samples, fit_wall_s=time.perf_counter() - t0,
           fit_cpu_s=time.process_time() - c0, n_iter=m.n_iter_, n_support=int(m.support_.size),
           n_clusters=m.n_clusters_, ari=adjusted_rand_score(y, m.labels_),
           peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print("@@" + json.dumps(out))
"""


def moons_and_disk(n, *, width=0.1, random_state=0):
    """Two moons with bounded radial noise ``U(-width, width)`` and a uniform disk: three
    clusters of equal expected size that stay separated at any ``n``."""
    rng = np.random.RandomState(random_state)
    y = rng.randint(3, size=n)
    t = rng.uniform(0.0, np.pi, size=n)
    r = 1.0 + rng.uniform(-width, width, size=n)
    X = np.empty((n, 2))
    m0, m1, d = y == 0, y == 1, y == 2
    X[m0, 0], X[m0, 1] = r[m0] * np.cos(t[m0]), r[m0] * np.sin(t[m0])
    X[m1, 0], X[m1, 1] = 1.0 - r[m1] * np.cos(t[m1]), 0.5 - r[m1] * np.sin(t[m1])
    rad = 0.3 * np.sqrt(rng.uniform(size=d.sum()))
    ang = rng.uniform(0.0, 2 * np.pi, size=d.sum())
    X[d, 0], X[d, 1] = 2.8 + rad * np.cos(ang), 1.2 + rad * np.sin(ang)
    return X, y


def _point(n, q, max_samples=None):
    code = _POINT.format(here=os.path.dirname(os.path.abspath(__file__)), n=n, q=q,
                         max_samples=max_samples)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    line = [x for x in proc.stdout.splitlines() if x.startswith("@@")][-1]
    return json.loads(line[2:])


def scale(quick, q=200.0):
    from mmcedu import SupportVectorClustering
    from mmcedu.metrics import adjusted_rand_score

    sizes = (1000, 2000, 4000) if quick else (1000, 10_000, 100_000, 1_000_000)
    rows = [_point(n, q) for n in sizes]
    print(Table(
        [[r["n"], r["fit_cpu_s"], r["fit_wall_s"], r["peak_rss_mb"], r["n_iter"], r["n_support"],
          r["n_clusters"], r["ari"]] for r in rows],
        ["n", "fit CPU s", "fit wall s", "peak RSS MB", "SMO iterations", "N_sv", "clusters",
         "ARI"], floatfmt=".3g",
        title=f"Scalable SVC (libsvm on X, tree cone labeling), q = {q:g}, moons + disk",
    ))
    # dense (cvxpy on the n x n kernel) and scalable (libsvm on X) on one shared subsample
    n_sub = 300 if quick else 2000
    X, y = moons_and_disk(n_sub, random_state=1)
    dense = SupportVectorClustering(gamma=q, solver="cvxpy").fit(X)
    fast = SupportVectorClustering(gamma=q).fit(X)
    print(f"shared subsample n = {n_sub}: ARI dense {adjusted_rand_score(y, dense.labels_):.3f}, "
          f"scalable {adjusted_rand_score(y, fast.labels_):.3f}, between them "
          f"{adjusted_rand_score(dense.labels_, fast.labels_):.3f}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about 10 s)")
    parser.add_argument("--scale", action="store_true",
                        help="the scalable path from n = 10^3 to 10^6 (subprocess per point)")
    parser.add_argument("--q", type=float, default=100.0, help="kernel width q (default 100)")
    parser.add_argument("--repeats", type=int, default=1, help="fits per size (default 1)")
    args = parser.parse_args(argv)
    if args.scale:
        return scale(args.quick)
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
