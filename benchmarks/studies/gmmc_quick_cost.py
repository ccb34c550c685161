"""GMMC's iteration cap in chapter 09's comparison (benchmarks/results/gmmc_quick_cost.md).

Usage::

    python benchmarks/studies/gmmc_quick_cost.py choices 1500 [TASK,TASK,...]
    python benchmarks/studies/gmmc_quick_cost.py capped 1500

``choices CAP``: ``run_comparison`` for GMMC with ``max_iter=CAP`` (default tasks: the four
quick two-class tasks), printing the CPU time and, per (task, seed), the label-free ARI, the
best grid point's ARI and the chosen width; run it with 1500 and 5000 and compare.
``capped CAP``: every fit of the seven two-class tasks x 5 seeds x 8 widths; prints the fits
that reach the cap with their objective, gap, normalized objective (NaN: excluded by the
isolation guard) and ARI.
"""

import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

from sklearn.metrics import adjusted_rand_score as ari  # noqa: E402

from mmcedu import GMMC  # noqa: E402
from mmcedu_lab import comparison as c  # noqa: E402

# GMMC's tasks: the two-class tasks of the quick protocol, and those the full one adds
QUICK = [t for t in c.TASKS_QUICK if c.n_clusters_of_task(t) == 2]
FULL_ONLY = [t for t in c.TASKS if t not in c.TASKS_QUICK and c.n_clusters_of_task(t) == 2]


def choices(cap, tasks):
    c.METHODS["GMMC"] = c.Method(lambda X, k, s: GMMC(random_state=s, max_iter=cap), binary=True,
                                 mmcedu=True)
    t = time.process_time()
    recs = c.run_comparison(methods=["GMMC"], tasks=tasks, n_jobs=1)
    print("max_iter", cap, "cpu", round(time.process_time() - t, 1))
    for r in recs:
        print(r["task"], r["seed"], round(r["ari_free"], 3), round(r["ari_best"], 3), r["param_free"])


def capped(cap):
    n_fits, rows = 0, []
    for task in QUICK + FULL_ONLY:
        for s in range(c.N_SEEDS):
            X, y, _ = c.load_task(task, s, c.N)
            for g in c.gamma_grid(X, octaves=c.NARROW_OCTAVES):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = GMMC(random_state=s, max_iter=cap, gamma=g).fit(X)
                n_fits += 1
                if m.n_iter_ >= cap:
                    crit = m.objective_contrast(X)
                    rows.append((task, s, round(g, 4), m.objective_, m.duality_gap_, crit, ari(y, m.labels_)))
    print("fits", n_fits, "capped", len(rows))
    for r in rows:
        print(*r)


if __name__ == "__main__":
    what, cap = sys.argv[1], int(sys.argv[2])
    if what == "choices":
        choices(cap, sys.argv[3].split(",") if len(sys.argv) > 3 else QUICK)
    else:
        capped(cap)
