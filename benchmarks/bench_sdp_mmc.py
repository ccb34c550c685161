"""Time, peak memory and ARI of SDP maximum margin clustering: cvxpy (SCS), the low-rank solver
on the exact kernel, and the low-rank solver on a Nystroem factor (``n_components``).

Usage::

    python benchmarks/bench_sdp_mmc.py            # cvxpy n = 50..200, lowrank n = 200..1000
    python benchmarks/bench_sdp_mmc.py --quick    # cvxpy n = 25, 50; lowrank n = 50, 100
    python benchmarks/bench_sdp_mmc.py --lowrank 1000 2000 --cvxpy 100 --out results.csv
    python benchmarks/bench_sdp_mmc.py --cvxpy --lowrank --nystroem 10000 100000 \
        --n-components 200 --out benchmarks/results/sdp_mmc_scale.csv --append

Data with known labels: ``two_gaussians(n, random_state=0)`` (two unit Gaussians 3 apart),
RBF ``gamma = 0.5`` (centred), ``C = 1``, ``balance = 0.1``. Every fit runs in its own
process with one BLAS thread: wall seconds, CPU seconds (user + system of that process,
close to what one idle core needs on a loaded machine) and its peak resident memory
(``ru_maxrss``). ``SDPMMC(solver="cvxpy")`` (SCS, default tolerances) and
``SDPMMC(solver="lowrank")`` (Burer-Monteiro, certified relative gap ``tol = 1e-3``,
``max_iter``) are fitted on the same data; the ARI of each against the true labels and, where
both ran, between them. ``--nystroem`` sizes fit ``SDPMMC(n_components=...)`` (the factor
path, no n x n array; the certificate is for the factor's kernel ``Z Z^T``; solver column
``nystroem``). Wall-clock times on a shared machine are noisy; iterations and gaps
are deterministic given the seed. The full run takes a few minutes (``lowrank`` at n = 1000
about 40 CPU seconds, at n = 2000 a few CPU minutes; ``uptime`` is printed before and after).
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
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

# the columns of the committed sdp_mmc_scale.csv (read by chapter 02); ARI vs cvxpy is printed
FIELDS = ["source", "solver", "n", "seconds", "cpu_seconds", "peak_mb", "n_iter", "status",
          "objective", "upper", "rel_gap", "clustering_error", "ari", "n_components", "rank",
          "coarse_n_iter", "memory_bytes_mb"]


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(spec):
    """Fit one estimator in this process and print one JSON line."""
    from sklearn.metrics import adjusted_rand_score

    from mmcedu import SDPMMC
    from mmcedu.datasets import two_gaussians
    from mmcedu.metrics import clustering_error

    X, y = two_gaussians(spec["n"], random_state=0)
    nystroem = spec["solver"] == "nystroem"
    est = SDPMMC(gamma=0.5, solver="lowrank" if nystroem else spec["solver"], max_iter=spec["max_iter"],
                 n_components=spec["n_components"] if nystroem else None, rank=spec.get("rank"),
                 rounding="eigenvector", random_state=0)  # the rounding of the recorded runs
    c0, t0 = _cpu(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    stats = est.solver_info_
    out = {
        "solver": spec["solver"], "n": spec["n"], "seconds": time.perf_counter() - t0,
        "cpu_seconds": _cpu() - c0,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "n_iter": est.n_iter_, "status": stats.get("status"), "objective": est.objective_,
        "duality_gap": est.duality_gap_, "rel_gap": stats.get("rel_gap"),
        "ari": adjusted_rand_score(y, est.labels_), "labels": est.labels_.tolist(),
        "source": "package", "clustering_error": clustering_error(y, est.labels_),
        "upper": (est.objective_ + est.duality_gap_ if spec["solver"] != "cvxpy" else None),
        "n_components": spec["n_components"] if nystroem else None,
        "rank": est.M_factor_.shape[1] if est.M_factor_ is not None else None,
        "coarse_n_iter": stats.get("coarse_n_iter"),
        "memory_bytes_mb": est.memory_bytes(spec["n"]) / 2**20,
    }
    print("RESULT " + json.dumps(out), flush=True)


def spawn(solver, n, max_iter, n_components=None, rank=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    spec = json.dumps({"solver": solver, "n": n, "max_iter": max_iter, "n_components": n_components,
                       "rank": rank})
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec],
                          capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(proc.stderr[-3000:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--cvxpy", type=int, nargs="*", help="sizes for solver='cvxpy'")
    parser.add_argument("--lowrank", type=int, nargs="*", help="sizes for solver='lowrank'")
    parser.add_argument("--nystroem", type=int, nargs="*", default=[],
                        help="sizes for SDPMMC(n_components=...), the factor path")
    parser.add_argument("--n-components", type=int, default=200, help="n_components of --nystroem")
    parser.add_argument("--rank", type=int, help="rank of 'lowrank' and --nystroem (default: SDPMMC's)")
    parser.add_argument("--max-iter", type=int, default=1000, help="max_iter of 'lowrank'")
    parser.add_argument("--out", help="write the rows to this CSV file")
    parser.add_argument("--append", action="store_true", help="add the rows to those already in --out")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    from sklearn.metrics import adjusted_rand_score

    from mmcedu_lab.report import Table

    cvx = args.cvxpy if args.cvxpy is not None else ([25, 50] if args.quick else [50, 100, 200])
    low = args.lowrank if args.lowrank is not None else (
        [50, 100] if args.quick else [200, 400, 1000])
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          file=sys.stderr, flush=True)
    rows, labels, old = [], {}, []
    if args.out and args.append and os.path.exists(args.out):
        with open(args.out, newline="") as fh:
            old = list(csv.DictReader(fh))
    for solver, sizes in (("cvxpy", cvx), ("lowrank", low), ("nystroem", args.nystroem)):
        for n in sizes:
            r = spawn(solver, n, args.max_iter, args.n_components, args.rank)
            labels[solver, n] = r.pop("labels")
            if solver == "lowrank" and ("cvxpy", n) in labels:
                r["ari_vs_cvxpy"] = adjusted_rand_score(labels["cvxpy", n], labels[solver, n])
            rows.append(r)
            if args.out:
                _write(args.out, old, rows)
            print(f"{solver:8s} n={n:>5} {r['seconds']:8.1f} s (cpu {r['cpu_seconds']:7.1f} s) "
                  f"peak {r['peak_mb']:6.0f} MiB iter {r['n_iter']} {r['status']} "
                  f"gap {r.get('rel_gap')} ARI {r['ari']:.3f} ({time.strftime('%H:%M:%S')})",
                  file=sys.stderr, flush=True)
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          file=sys.stderr, flush=True)
    print(Table(
        [[r["solver"], r["n"], r["seconds"], r["cpu_seconds"], r["peak_mb"], r["n_iter"],
          r["status"], r["objective"], r.get("rel_gap"), r["ari"], r.get("ari_vs_cvxpy")]
         for r in rows],
        ["solver", "n", "wall s", "CPU s", "peak MiB", "iterations", "status", "objective_",
         "certified rel. gap", "ARI", "ARI vs cvxpy"],
        floatfmt=".3g",
        title="SDPMMC on two_gaussians(n): cvxpy (SCS) and solver='lowrank' (one process each)",
    ))
    return rows


def _write(path, old, rows):
    """``old`` and the rows measured so far to ``path`` (after every fit: a stopped run keeps them)."""
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(old + rows)


if __name__ == "__main__":
    main()
