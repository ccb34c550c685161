"""Time and peak memory of the SDP maximum margin clustering relaxation (SCS) versus n.

Usage::

    python benchmarks/bench_sdp_mmc.py            # n = 50, 100, 200, 400 (a few minutes)
    python benchmarks/bench_sdp_mmc.py --quick    # n = 25, 50, 100 (under a minute)

Each size solves the SDP of :func:`mmcedu.sdp_mmc.solve_sdp_mmc` once on
``datasets.two_gaussians(n)`` (RBF kernel, gamma = 0.5, C = 1, balance = 0.1) with SCS's
default tolerances. Memory is the growth of the resident set size during the solve (Linux
peak counter reset through /proc/self/clear_refs). The script prints ratios between
consecutive sizes and the fitted log-log slopes (time ~ n^a, memory ~ n^b), which are
meaningful on a loaded machine where absolute times are not. Set OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

from mmcedu.report import Table  # noqa: E402
from mmcedu.sdp_mmc import measure_sdp_mmc  # noqa: E402


def slope(ns, values):
    """Least-squares slope of log(value) against log(n)."""
    ns, values = np.asarray(ns, float), np.asarray(values, float)
    ok = values > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(values[ok]), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 25, 50, 100 only")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the list of n")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([25, 50, 100] if args.quick else [50, 100, 200, 400])
    rows = measure_sdp_mmc(sizes)
    table = []
    for i, r in enumerate(rows):
        prev = rows[i - 1] if i else None
        table.append(
            [
                r["n"],
                r["n"] * (r["n"] + 1) // 2,
                r["seconds"],
                r["peak_mb"],
                r["iterations"],
                r["status"],
                r["seconds"] / prev["seconds"] if prev else None,
                r["peak_mb"] / prev["peak_mb"] if prev and prev["peak_mb"] > 0 else None,
            ]
        )
    print(
        Table(
            table,
            ["n", "unknowns in M", "seconds", "peak MB", "SCS iters", "status",
             "time ratio", "memory ratio"],
            floatfmt=".2f",
            title=f"SDP MMC with SCS (memory: {rows[0]['memory']})",
        )
    )
    ns = [r["n"] for r in rows]
    print(f"\ntime ~ n^{slope(ns, [r['seconds'] for r in rows]):.2f}, "
          f"memory ~ n^{slope(ns, [r['peak_mb'] for r in rows]):.2f}")
    return rows


if __name__ == "__main__":
    main()
