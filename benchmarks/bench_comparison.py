"""The comparison protocol (chapter 09) and its four label-free targets.

Usage::

    python benchmarks/bench_comparison.py              # quick protocol (chapter 09's settings)
    python benchmarks/bench_comparison.py --full       # full protocol (adds tasks and SDP MMC)
    python benchmarks/bench_comparison.py --jobs 2     # runs in parallel (same records)
    python benchmarks/bench_comparison.py --quick      # smoke run: 3 tasks, 3 methods, 2 seeds

Runs :func:`mmcedu_lab.comparison.run_comparison` (no cache) and prints the four
targets as chapter 09 measures them on the same records: (a) the mean gap of every mmcedu
method's label-free choice to its own best grid point (<= 0.10); (b) on every real data set the
best label-free mmcedu method against k-means (to 0.01); (c) some label-free mmcedu method at
ARI >= 0.95 (mean over the seeds) on two circles and on the moons. Then the CPU and wall time.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from mmcedu_lab import comparison as C  # noqa: E402


def targets(records):
    """``[(target, measured, met)]`` of chapter 09's targets table, from the records."""
    S = C.summarize(records)
    tasks = list(dict.fromkeys(r["task"] for r in records))
    methods = list(dict.fromkeys(r["method"] for r in records))
    mm = [m for m in C.MMCEDU if m in methods]

    def free(t, m):
        return S[t, m]["free"][0]

    rows = []
    for m in mm:
        gaps = [S[t, m]["best"][0] - free(t, m) for t in tasks if (t, m) in S]
        rows.append((f"(a) mean gap of {m}", f"{np.mean(gaps):.3f} (max {np.max(gaps):.2f})",
                     np.mean(gaps) <= 0.10))
    for t in [t for t in tasks if t in C.REAL]:
        top = max((m for m in mm if (t, m) in S), key=lambda m: free(t, m))
        rows.append((f"(b) {t}", f"{top} {free(t, top):.3f} vs k-means {free(t, 'k-means'):.3f}",
                     free(t, top) >= free(t, "k-means") - 0.01))
    for t in ("two circles", "moons"):
        top = max((m for m in mm if (t, m) in S), key=lambda m: free(t, m))
        rows.append((f"(c) {t} >= 0.95", f"{top} {free(t, top):.3f} ± {S[t, top]['free'][1]:.3f}",
                     free(t, top) >= 0.95))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the full protocol")
    ap.add_argument("--jobs", type=int, default=1, help="n_jobs of run_comparison")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (the test suite's): two circles, moons and iris at n = 100, "
                         "k-means, UMC-RLS and SVC, seeds 0-1; its targets are not chapter 09's")
    args = ap.parse_args()
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")
    smoke = dict(tasks=["two circles", "moons", "iris"], methods=["k-means", "UMC-RLS", "SVC (cone)"],
                 seeds=[0, 1], n_samples=100) if args.quick else {}
    t0, c0 = time.perf_counter(), time.process_time()
    records = C.run_comparison(full=args.full, n_jobs=args.jobs, **smoke)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(C.comparison(records=records))
    print()
    label = "smoke run" if args.quick else ("full" if args.full else "quick") + " protocol"
    seeds = sorted({r["seed"] for r in records}) if records and "seed" in records[0] else None
    print(f"Targets ({label}, seeds {seeds if seeds else f'0-{C.N_SEEDS - 1}'}, "
          f"n = {100 if args.quick else C.N}):")
    for name, measured, met in targets(records):
        print(f"  {name:32s} {measured:40s} {'met' if met else 'NOT MET'}")
    per_method = {}
    for r in records:
        per_method[r["method"]] = per_method.get(r["method"], 0.0) + r["time"]
    print()
    print("Time of the runs per method (s, summed over tasks and seeds): "
          + ", ".join(f"{m} {s:.1f}" for m, s in per_method.items()))
    print(f"Wall {wall:.1f} s; CPU of this process {cpu:.1f} s (with --jobs > 1 the workers' "
          "CPU is not included)")


if __name__ == "__main__":
    main()
