"""Figure 1 of Valizadegan & Jin (2006): time of SDP MMC and GMMC versus n, in one run.

Usage::

    python benchmarks/bench_gmmc.py            # n = 20 ... 80 for both, GMMC up to 2,000
    python benchmarks/bench_gmmc.py --quick    # n = 20, 40, 60 for both, GMMC up to 500

Both methods fit the same data (``datasets.two_gaussians(n)``, RBF kernel, gamma = 0.5):
SDP MMC (:class:`mmcedu.SDPMMC`, SCS) has n(n+1)/2 unknowns, GMMC (:class:`mmcedu.GMMC`,
low-rank Burer-Monteiro solver with L-BFGS, certified duality gap) has n x rank. The script
prints the ratio SDP MMC / GMMC at each n and the fitted log-log slopes (time ~ n^a), which
mean something on a loaded machine where absolute seconds do not. Past a few thousand points
GMMC is limited by the dense n x n kernel (memory 8 n^2 bytes, O(n^2 rank) per iteration).
Set OMP_NUM_THREADS=1 for comparable numbers.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from mmcedu.experiments.gmmc import scaling
from mmcedu.report import Table


def slope(ns, values):
    """Least-squares slope of log(value) against log(n)."""
    pairs = [(n, v) for n, v in zip(ns, values) if v is not None and v > 0]
    if len(pairs) < 2:
        return float("nan")
    a, b = np.log(np.array(pairs, dtype=float)).T
    return float(np.polyfit(a, b, 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (about a minute)")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the list of n")
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = args.sizes
    elif args.quick:
        sizes = [20, 40, 60, 200, 500]
    else:
        sizes = [20, 40, 60, 80, 200, 500, 1000, 2000]
    sdp_max = 60 if args.quick else 80
    rows = scaling(sizes, sdp_max_n=sdp_max, progress=lambda d, t: print(f"  {d}/{t}", flush=True))
    table = []
    for r in rows:
        ratio = r["sdp_mmc"] / r["gmmc"] if r["sdp_mmc"] else None
        table.append([r["n"], r["sdp_mmc"], r["gmmc"], ratio, r["gap"], r["error_gmmc"]])
    print(Table(table, ["n", "SDP MMC s", "GMMC s", "SDP/GMMC", "GMMC gap", "GMMC error %"],
                floatfmt=".3g", title="Figure 1: one fit, same data"))
    ns = [r["n"] for r in rows]
    small = [r for r in rows if r["sdp_mmc"]]
    print(f"slope SDP MMC (n <= {sdp_max}): {slope([r['n'] for r in small], [r['sdp_mmc'] for r in small]):.2f}")
    print(f"slope GMMC   (n <= {sdp_max}): {slope([r['n'] for r in small], [r['gmmc'] for r in small]):.2f}")
    print(f"slope GMMC   (all n):     {slope(ns, [r['gmmc'] for r in rows]):.2f}")


if __name__ == "__main__":
    main()
