"""GMMC's isolation guard on the choice samples of LabelFreeSearch (no fit): for 20 seeds, at n = 10^4 and
10^6, with one and five choice samples, which of grid indices 3, 4, 5 are eligible (unguarded in more than
half the samples). Prints one JSON line per (n, samples, seed); benchmarks/results/label_free_stability.jsonl
holds its output (rule "guard analysis, no fit")."""

import json

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from mmcedu import GMMC
from mmcedu.datasets import blobs
from mmcedu.gmmc import MIN_AFFINITY
from mmcedu.model_selection import LabelFreeSearch

out = []
for n in (10**4, 10**6):
    X, _ = blobs(n, centers=[[0, 0], [4, 0]], cluster_std=0.8, random_state=0)
    for B in (1, 5):
        for seed in range(20):
            s = LabelFreeSearch(GMMC(n_components=100), random_state=seed, n_choice_samples=B)
            samples = s._choice_samples(X)
            grid = s._rule(samples[0])[0]
            guarded = []
            for Xc in samples:
                row = []
                for j in (3, 4, 5):
                    K = rbf_kernel(Xc, gamma=grid[j]["gamma"])
                    np.fill_diagonal(K, 0)
                    row.append(bool(K.sum(1).min() < MIN_AFFINITY))
                guarded.append(row)
            g = np.array(guarded)
            eligible = (~g).sum(0) > len(samples) / 2
            out.append(
                {
                    "n": n,
                    "B": B,
                    "seed": seed,
                    "eligible_3_4_5": eligible.tolist(),
                    "guarded_counts": g.sum(0).tolist(),
                }
            )
            print(json.dumps(out[-1]), flush=True)
