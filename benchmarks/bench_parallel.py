"""Speed-up of a full paper-table reproduction with two jobs instead of one.

Usage::

    python benchmarks/bench_parallel.py            # EMMC Table 1, full protocol (a few minutes)
    python benchmarks/bench_parallel.py --quick    # EMMC Table 1, quick protocol (under a minute)
    python benchmarks/bench_parallel.py --table sdp_mmc_table1 --jobs 1 2
    python benchmarks/bench_parallel.py --search   # LabelFreeSearch over a 12-point grid

With ``--search`` the timed work is a :class:`mmcedu.LabelFreeSearch` of UMC-RLS over 12
kernel widths (stability criterion, 10 resamples each) on 600 points of the moons: the
label-free issue's target is a ratio of at least 1.6 on two cores; ``cv_results_`` must be
identical for both ``n_jobs``.

The table is computed with ``n_jobs=1`` and with ``n_jobs=2``
(:func:`mmcedu_lab.parallel.map_tasks`), bypassing the cache, and the script prints
the wall time of each, the ratio (target >= 1.7 on two cores) and whether the two tables are
equal (they must be, but for measured-time columns). EMMC's Table 1 (Zhang, Xia & Liu) is the
default: its full protocol is 225 independent fits of similar size (5 seeds x 45 digit pairs,
seven schemes each). The pool of worker processes is started (and ``mmcedu`` imported in it)
before the timing, as it is once per session; ``--rounds`` repeats the pair of runs in
alternating order. Every task runs with one BLAS thread whatever ``n_jobs``, so the ratio
measures the parallel runner, not BLAS threading. Timings are noisy on a shared machine: run
it on an otherwise idle one.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from mmcedu_lab import all_tables  # noqa: E402
from mmcedu_lab.parallel import map_tasks  # noqa: E402
from mmcedu_lab.report import Table  # noqa: E402


def _warm(_):
    import mmcedu.emmc  # noqa: F401  (imports in the worker, outside the timing)
    import mmcedu_lab.emmc  # noqa: F401

    return os.getpid()


def _comparable(table, timed):
    """The rows without the measured-time columns ``timed``."""
    timed = set(timed) if timed != "all" else set(table.headers)
    keep = [j for j, h in enumerate(table.headers) if h not in timed]
    return [[r[j] for j in keep] for r in table.rows]


def _search(n_jobs, n_samples):
    import numpy as np

    from mmcedu import UMCRLS, LabelFreeSearch
    from mmcedu.datasets import moons
    from mmcedu.kernels import gamma_grid

    X, _ = moons(n_samples, random_state=0)
    grid = {"gamma": gamma_grid(X, octaves=tuple(np.linspace(-2, 5, 12)))}
    search = LabelFreeSearch(UMCRLS(2, alpha=2.0**-3, random_state=0), grid, criterion="stability",
                             n_resamples=10, n_jobs=n_jobs, random_state=0)
    search.fit(X)
    return search


def _time_pair(args, run, describe, same_label, fmt):
    """Time ``run(n_jobs)`` for both job counts, alternating; print the table and the ratio.

    ``run`` returns what must agree between the two job counts; ``describe`` titles the table.
    """
    n1, n2 = args.jobs
    pids = set(map_tasks(_warm, range(4 * max(n1, n2)), n_jobs=max(n1, n2)))
    times, results = {n1: [], n2: []}, {}
    for r in range(args.rounds):
        for n in ((n1, n2) if r % 2 == 0 else (n2, n1)):
            t0 = time.perf_counter()
            results[n] = run(n)
            times[n].append(time.perf_counter() - t0)
    same = results[n1] == results[n2]
    rows = [[n, len(times[n]), min(times[n]), sum(times[n]) / len(times[n])] for n in (n1, n2)]
    print(Table(rows, ["n_jobs", "runs", "best s", "mean s"], floatfmt=fmt,
                title=f"{describe}, {os.cpu_count()} cores, {len(pids)} worker processes"))
    print(f"ratio n_jobs={n1} / n_jobs={n2} (best times): {min(times[n1]) / min(times[n2]):.2f}")
    print(f"{same_label}: {same}")
    return 0 if same else 1


def _search_results(n_jobs, n_samples):
    s = _search(n_jobs, n_samples)
    return repr(list(zip(s.cv_results_["params"], s.cv_results_["mean_score"])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick protocol (a smoke test)")
    parser.add_argument("--table", default="emmc_table1", help="a registered table name")
    parser.add_argument("--jobs", type=int, nargs=2, default=[1, 2], metavar=("N1", "N2"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--search", action="store_true", help="time a 12-point LabelFreeSearch instead")
    parser.add_argument("--n-samples", type=int, default=600, help="points of the moons (--search)")
    args = parser.parse_args(argv)
    if args.search:
        return _time_pair(args, lambda n: _search_results(n, args.n_samples),
                          f"LabelFreeSearch, UMC-RLS, 12 widths x 10 resamples, n = {args.n_samples}",
                          "cv_results_ equal", ".2f")
    wrapped = all_tables()[args.table]
    fn = getattr(wrapped, "__wrapped__", wrapped)  # the table function itself: no cache
    timed = getattr(wrapped, "cache_timings", ())
    full = not args.quick
    return _time_pair(args, lambda n: _comparable(fn(full=full, n_jobs=n), timed),
                      f"{args.table}, {'full' if full else 'quick'} protocol",
                      "tables equal but measured times", ".1f")

if __name__ == "__main__":
    raise SystemExit(main())
