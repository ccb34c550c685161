"""Labeling time of support vector clustering: complete graph vs cone cluster labeling.

Lee & Daniels (2007, slide 41) give the labeling costs O(N^2 N_sv m) for the complete graph
and O(N N_sv) for cone cluster labeling, so the ratio should grow like N m. This script
measures both labelings, and the SVDD solve (libsvm) beside them, on two moons at a fixed
kernel width q = 100 for N = 200, 500, 1000, 2000, all in one run, and prints ratios.

    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py            # N = 200 ... 2000 (minutes)
    OMP_NUM_THREADS=1 python benchmarks/bench_svc.py --quick    # N = 100, 200, 400

Timings are wall clock, best of the repeats (the cone labeling: best of at least 5 runs).
"""

import argparse
import time

from mmcedu.experiments.svc import labeling_times
from mmcedu.report import Table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about 10 s)")
    parser.add_argument("--q", type=float, default=100.0, help="kernel width q (default 100)")
    parser.add_argument("--repeats", type=int, default=1, help="fits per size (default 1)")
    args = parser.parse_args(argv)
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
