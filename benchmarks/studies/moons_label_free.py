"""Moons label-free study (issue 12): every criterion of LabelFreeSearch from the same fits.

For each (method, task, seed) one search with every applicable criterion is run (the
comparison's grid, seeds, n_resamples=3 as in the quick protocol); cv_results_ and the ARI of
every grid point's full-data fit are pickled, so any rule "a", "a > b @ t" is evaluated
offline with LabelFreeSearch's own _best_index (identical to running the search with that rule:
subsamples, seeds and permutations derive from random_state only).

Usage: [MOONS_LF_R=6] python benchmarks/studies/moons_label_free.py METHOD TASK [SEEDS...]
(R = n_resamples: 3 in the quick protocol, 6 in the full one)
"""

import os
import pickle
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import ParameterGrid

from mmcedu.metrics import adjusted_rand_score
from mmcedu_lab import comparison as C

R_DEFAULT = int(os.environ.get("MOONS_LF_R", "3"))
OUT = "/tmp/moons_lf" + ("" if R_DEFAULT == 3 else f"_R{R_DEFAULT}")
os.makedirs(OUT, exist_ok=True)


def criteria_for(est, grid):
    crit = ["stability", "transfer_stability", "silhouette", "kernel_silhouette"]
    if hasattr(est, "objective_contrast"):
        crit.append("objective")
    if "gamma" in est.get_params(deep=False):
        crit.append("eigengap")
    crit.append("plateau")
    return crit


def run(method, task, seed, R=R_DEFAULT):
    path = f"{OUT}/{method.replace(' ', '_')}__{task.replace(' ', '_')}__{seed}.pkl"
    if os.path.exists(path):
        return pickle.load(open(path, "rb"))
    X, y, k = C.load_task(task, seed, C.N)
    est, grid = C.METHODS[method].setup(X, k, seed)[:2]
    crit = criteria_for(est, grid)
    t0 = time.perf_counter()
    search = C._Search(est, grid, criterion=crit, n_resamples=R, random_state=seed, refit=False, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            search.fit(X)
        except ValueError as e:
            print("ValueError", method, task, seed, str(e)[:100])
    cv = search.cv_results_
    labs = search.full_labels_
    aris = [np.nan if l is None else adjusted_rand_score(y, l) for l in labs]
    rec = {
        "method": method,
        "task": task,
        "seed": seed,
        "crit": crit,
        "params": [dict(p) for p in ParameterGrid(grid)],
        "aris": np.array(aris),
        "cv": {
            kk: np.asarray(v) for kk, v in cv.items() if kk.startswith(("mean_score", "full_n", "mean_n"))
        },
        "time": time.perf_counter() - t0,
    }
    pickle.dump(rec, open(path, "wb"))
    return rec


if __name__ == "__main__":
    method, task = sys.argv[1], sys.argv[2]
    seeds = [int(s) for s in sys.argv[3:]] or list(range(C.N_SEEDS))
    for s in seeds:
        r = run(method, task, s)
        print(method, task, s, f"{r['time']:.1f}s", "best", np.nanmax(r["aris"]).round(3), flush=True)
