"""Study: how stable is the label-free choice of ``LabelFreeSearch(..., max_samples="auto")``?

For each estimator of ``bench_label_free_scale.py`` (its large-data settings and data set, data
seed 0) and each ``n`` in ``--sizes``, the search is run with ``refit=False`` for every seed
in ``--seeds`` (``random_state`` of the search: it draws the choice sample(s) and the
resamples). With ``refit=False`` the search never fits on all of ``X``: the choice is made
on the choice sample(s) alone, so it can be measured on 10^6-point data at the cost of a
2,000-point search. One line of JSON per (estimator, n, seed): the chosen grid index and,
per criterion, the mean score at every grid point.

    python benchmarks/studies/label_free_stability.py --only UMCRLS GMMC --seeds 0 1 2 3 4 \
        --out benchmarks/results/label_free_stability.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
from bench_label_free_scale import ESTIMATORS  # noqa: E402

import mmcedu  # noqa: E402, F401
from mmcedu import *  # noqa: E402, F403
from mmcedu.model_selection import LabelFreeSearch  # noqa: E402
from mmcedu_lab.scale import data  # noqa: E402  (the benchmark's data sets)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--sizes", nargs="*", type=int, default=[10**4, 10**6])
    p.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--params", default="{}", help="JSON of extra LabelFreeSearch parameters")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    extra = json.loads(args.params)
    for name in args.only or [k for k in ESTIMATORS if k != "SDPMMC"]:
        ctor = ESTIMATORS[name][0]
        for n in args.sizes:
            X, _ = data(name, n)
            for seed in args.seeds:
                est = eval(ctor)  # noqa: S307 - the benchmark's own constructor source
                t0, c0 = time.perf_counter(), time.process_time()
                s = LabelFreeSearch(est, random_state=seed, n_jobs=args.n_jobs, refit=False, **extra).fit(X)
                res = s.cv_results_
                crit = s.criteria_
                keys = ["mean_score"] if len(crit) == 1 else [f"mean_score_{c}" for c in crit]
                row = {
                    "estimator": name,
                    "n": n,
                    "seed": seed,
                    "params": extra,
                    "best_index": int(s.best_index_),
                    "criteria": crit,
                    "scores": {c: np.round(res[k], 4).tolist() for c, k in zip(crit, keys)},
                    "wall_s": round(time.perf_counter() - t0, 1),
                    "own_cpu_s": round(time.process_time() - c0, 1),
                }
                line = json.dumps(row)
                print(line, flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(line + "\n")


if __name__ == "__main__":
    main()
