"""GMMC's 'objective' with a relaxed isolation guard (a natural extension of the criterion).

GMMC's objective contrast returned NaN when some sample's off-diagonal affinities summed to < 1
(the package's guard when this study ran); on moons the best widths (octaves 5-8) are often
excluded by it. Here the contrast is recomputed from the same full-data fits (LabelFreeSearch seeds
them independently of n_resamples) for guards thr in {1, 0.5, 0.25, 0.1, 0}, and the label-free
choice 'objective' evaluated per guard.

Usage: python benchmarks/studies/moons_gmmc_isolation.py TASK [TASK ...]
"""

import pickle
import sys
import warnings
from unittest import mock

import numpy as np

import mmcedu.gmmc as G
import mmcedu.model_selection as MS
from mmcedu.kernels import rbf_kernel
from mmcedu.metrics import adjusted_rand_score
from mmcedu_lab import comparison as C

THRESHOLDS = (1.0, 0.5, 0.25, 0.1, 0.0)
LOG = []


class RecordingGMMC(G.GMMC):
    """GMMC whose objective contrast (guard 1, as when the study ran) logs every threshold's."""

    def objective_contrast(self, X, *, random_state=None):
        K = rbf_kernel(X, gamma=self.gamma_)
        with mock.patch.object(G, "MIN_AFFINITY", 0.0):  # the guard is the formula's first test
            value = G.GMMC.objective_contrast(self, X)
        isolation = np.min(K.sum(axis=1) - np.diag(K))
        LOG.append({"gamma": float(self.gamma),
                    **{t: np.nan if isolation < t else value for t in THRESHOLDS}})
        return LOG[-1][1.0]


if hasattr(MS, "OBJECTIVE_CONTRASTS"):  # a LabelFreeSearch that looks the objective up by class name
    MS.OBJECTIVE_CONTRASTS["RecordingGMMC"] = lambda est, X, labels, seed: est.objective_contrast(X)

if __name__ == "__main__":
    out = {}
    for task in sys.argv[1:]:
        for seed in range(C.N_SEEDS):
            X, y, k = C.load_task(task, seed, C.N)
            est, grid = C.METHODS["GMMC"].setup(X, k, seed)[:2]
            est = RecordingGMMC(**est.get_params())
            LOG.clear()
            s = C._Search(est, grid, criterion="objective", random_state=seed, refit=False, n_jobs=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    s.fit(X)
                except ValueError:
                    pass
            aris = np.array([adjusted_rand_score(y, l) for l in s.full_labels_])
            out[(task, seed)] = {"aris": aris, "log": list(LOG)}
            line = []
            for t in THRESHOLDS:
                v = np.array([r[t] for r in LOG], dtype=float)
                line.append(float(aris[int(np.nanargmax(v))]) if np.isfinite(v).any() else 0.0)
            print(
                task,
                seed,
                "best",
                aris.max().round(3),
                "chosen per guard",
                dict(zip(THRESHOLDS, np.round(line, 3))),
                flush=True,
            )
    pickle.dump(out, open(f"/tmp/gmmc_iso_{'_'.join(a.replace(' ', '') for a in sys.argv[1:])}.pkl", "wb"))
