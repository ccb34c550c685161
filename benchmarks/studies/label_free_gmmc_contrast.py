"""GMMC's label-free choice under any isolation guard, from the search's own fits (grid indices 3-5).

For each seed of ``LabelFreeSearch(GMMC(n_components=100), random_state=seed)`` on the data of
``bench_label_free_scale.py`` (two blobs), at n = 10^4 and 10^6: the search's 5 choice samples of 2,000,
its grid, and for each sample and grid index 3, 4, 5 the fit the search makes there (``random_state`` =
the search's full-data seed), its objective contrast with the guard off, the number of isolated points
(affinities to the others summing to less than ``MIN_AFFINITY``), the relative duality gap and the
iterations. One JSON line per (n, seed); ``benchmarks/results/label_free_gmmc_contrast.jsonl``.

``--evaluate FILE``: the choice of the search under the guard "more than c isolated points of 2,000",
c = 0..6, for every line of FILE (majority of the 5 samples, mean contrast over the unguarded ones,
as ``LabelFreeSearch``). Indices 6 and 7 are guarded in every seed for c <= 6
(``label_free_gmmc_guard.py``), and index 3's contrast is below index 4's in every sample.

    python benchmarks/studies/label_free_gmmc_contrast.py 1000000 $(seq 0 19) >> OUT
    python benchmarks/studies/label_free_gmmc_contrast.py 10000 $(seq 0 19) >> OUT
    python benchmarks/studies/label_free_gmmc_contrast.py --evaluate OUT
"""

import json
import sys
import time
import warnings
from unittest import mock

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

import mmcedu.gmmc as G
from mmcedu import GMMC
from mmcedu.datasets import blobs
from mmcedu.model_selection import LabelFreeSearch


def choice(line, c):
    """The grid index the search chooses when more than ``c`` isolated points guard a sample."""
    C, iso = np.array(line["contrast"]), np.array(line["isolated"])  # (samples, indices 3-5)
    guarded = iso > c
    eligible = (~guarded).sum(axis=0) > len(C) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(np.where(guarded, np.nan, C), axis=0)
    return 3 + int(np.argmax(np.where(eligible & np.isfinite(mean), mean, -np.inf)))


def evaluate(path):
    lines = [json.loads(s) for s in open(path)]
    for c in range(7):
        by_n = {n: [choice(x, c) for x in lines if x["n"] == n] for n in sorted({x["n"] for x in lines})}
        same = sum(a == b for a, b in zip(*by_n.values())) if len(by_n) == 2 else None
        print(json.dumps({"tolerated": c, "choices": by_n, "same_at_both_n": same}))


def measure(n, seeds):
    warnings.simplefilter("ignore")
    X, _ = blobs(n, centers=[[0, 0], [4, 0]], cluster_std=0.8, random_state=0)
    for seed in seeds:
        t = time.time()
        s = LabelFreeSearch(GMMC(n_components=100), random_state=seed)
        samples = s._choice_samples(X)
        grid = s._rule(samples[0])[0]
        rs = s._plan(samples[0].shape[0], ["objective"]).full_seed
        out = {"n": n, "seed": seed, "contrast": [], "isolated": [], "rel_gap": [], "n_iter": []}
        for Xc in samples:
            c, i, gap, it = [], [], [], []
            for j in (3, 4, 5):
                g = grid[j]["gamma"]
                K = rbf_kernel(Xc, gamma=g)
                i.append(int(np.sum(K.sum(1) - np.diag(K) < G.MIN_AFFINITY)))
                m = GMMC(n_components=100, gamma=g, random_state=rs).fit(Xc)
                with mock.patch.object(G, "MIN_AFFINITY", 0.0):  # the contrast with the guard off
                    c.append(round(float(m.objective_contrast(Xc)), 6))
                gap.append(round(m.duality_gap_ / max(abs(m.objective_), 1.0), 4))
                it.append(int(m.n_iter_))
            for k, v in zip(("contrast", "isolated", "rel_gap", "n_iter"), (c, i, gap, it)):
                out[k].append(v)
        out["s"] = round(time.time() - t)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--evaluate":
        evaluate(sys.argv[2])
    else:
        measure(int(sys.argv[1]), [int(a) for a in sys.argv[2:]])
