"""Benchmark: robust ensemble clustering (l12 ALM) vs co-association as the number of samples grows.

The low-rank method works on the N x sum_m k_m indicator matrix (memory O(N M k)); the
co-association matrix is N x N (memory O(N^2)) and average linkage on it is O(N^2) time.
One run measures every size; the printout gives ratios to the l12 ALM, not absolute claims
(timings on a shared machine are noisy).

    python benchmarks/bench_ensemble.py            # N = 1,000 ... 20,000
    python benchmarks/bench_ensemble.py --quick    # N = 500 ... 2,000
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from mmcedu.experiments.ensemble import scaling  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument(
        "--coassoc-max-gb", type=float, default=8.0,
        help="skip co-association when its estimated 16 N^2 bytes exceed this (default 8)",
    )
    args = parser.parse_args(argv)
    sizes = [500, 1000, 2000] if args.quick else [1000, 2000, 5000, 10000, 20000]
    rows = scaling(
        sizes, coassoc_max_gb=args.coassoc_max_gb,
        progress=lambda d, t: print(f"  size {d}/{t} done", flush=True),
    )
    by = {(r["n"], r["method"]): r for r in rows}
    methods = ["l12 ALM", "fro", "co-assoc", "vote"]
    print("\nseconds (ratio to l12 ALM) | peak MB (ratio) | ARI vs truth")
    print(f"{'N':>6}  " + "  ".join(f"{m:>30}" for m in methods))
    for n in sizes:
        base = by[(n, "l12 ALM")]
        cells = []
        for m in methods:
            r = by[(n, m)]
            if r["skipped"]:
                cells.append(f"{'skipped (~%.0f MB)' % r['peak_mb']:>30}")
                continue
            cells.append(
                f"{r['seconds']:7.2f}s x{r['seconds'] / base['seconds']:5.2f} "
                f"{r['peak_mb']:7.0f}MB x{r['peak_mb'] / base['peak_mb']:5.1f} {r['ari']:.2f}"
            )
        print(f"{n:>6}  " + "  ".join(cells))
    # Growth exponents: least-squares slope in log-log over the three largest measured sizes.
    print("\nempirical growth exponents (log-log slope over the three largest sizes):")
    for m in methods:
        pts = [(n, by[(n, m)]["seconds"], by[(n, m)]["peak_mb"]) for n in sizes
               if not by[(n, m)]["skipped"]][-3:]
        if len(pts) >= 2:
            n, sec, mb = (np.array(v, dtype=float) for v in zip(*pts))
            t_exp = np.polyfit(np.log(n), np.log(sec), 1)[0]
            m_exp = np.polyfit(np.log(n), np.log(np.maximum(mb, 1e-3)), 1)[0]
            print(f"  {m:10s} time ~ N^{t_exp:.2f}   memory ~ N^{m_exp:.2f}")


if __name__ == "__main__":
    main()
