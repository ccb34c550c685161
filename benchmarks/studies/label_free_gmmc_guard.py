"""GMMC's isolation guard on the choice samples of LabelFreeSearch (no fit): for 20 seeds, at n = 10^4
and 10^6, with one and five choice samples, which of grid indices 3-6 are eligible (unguarded in more
than half the samples). A sample of m points is guarded at a width when more than ``--fraction`` times
m of its points (default ``ISOLATED_FRACTION``, as ``GMMC.objective_contrast``) have affinities to the
others summing to less than ``MIN_AFFINITY``; ``--fraction 0``: when one has (the former guard). One
JSON line per (n, samples, seed); benchmarks/results/label_free_stability.jsonl holds its output
(rule "guard analysis, no fit"; the lines without a "guard" key are GMMC's guard, indices 3-5;
those with ``"guard": "more than n/400 isolated"`` the count studied and not adopted)."""

import argparse
import json

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from mmcedu import GMMC
from mmcedu.datasets import blobs
from mmcedu.gmmc import ISOLATED_FRACTION, MIN_AFFINITY
from mmcedu.model_selection import LabelFreeSearch

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--fraction", type=float, default=ISOLATED_FRACTION, help="0: the former guard")
fraction = p.parse_args().fraction
guard = f"more than n/{1 / fraction:g} isolated" if fraction else "former: one isolated point"
INDICES = (3, 4, 5, 6)
for n in (10**4, 10**6):
    X, _ = blobs(n, centers=[[0, 0], [4, 0]], cluster_std=0.8, random_state=0)
    for B in (1, 5):
        for seed in range(20):
            s = LabelFreeSearch(GMMC(n_components=100), random_state=seed, n_choice_samples=B)
            samples = s._choice_samples(X)
            grid = s._rule(samples[0])[0]
            isolated = []  # per sample, per index: the number of isolated points
            for Xc in samples:
                row = []
                for j in INDICES:
                    K = rbf_kernel(Xc, gamma=grid[j]["gamma"])
                    row.append(int(np.sum(K.sum(axis=1) - np.diag(K) < MIN_AFFINITY)))
                isolated.append(row)
            counts = np.array(isolated)
            guarded = counts > fraction * np.array([len(Xc) for Xc in samples])[:, None]
            line = {"estimator": "GMMC", "n": n, "seed": seed, "rule": "guard analysis, no fit",
                    "guard": guard, "n_choice_samples": B,
                    "eligible_index_3_4_5_6": ((~guarded).sum(0) > len(samples) / 2).tolist(),
                    "samples_guarded_index_3_4_5_6": guarded.sum(0).tolist(),
                    "isolated_per_sample_index_3_4_5_6": isolated}
            print(json.dumps(line), flush=True)
