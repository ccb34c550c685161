"""Every mmcedu method and three scikit-learn baselines under one protocol.

The protocol (the same for every method):

* **Data**: six two-cluster tasks (two circles, jointed circles, two Gaussians, moons,
  digits 3 vs 8, digits 1 vs 7) and three multi-class tasks (iris, three blobs, digits 1-4),
  each standardized to zero mean and unit variance per feature. Binary-only methods (SDP MMC,
  GMMC) run on the binary tasks only. Quick: ``N_QUICK`` samples per task; full: ``N_FULL``.
* **Kernel widths**: every kernel method gets the same grid
  ``gamma = 1 / (2 sigma^2)`` with ``sigma`` a fraction of the largest pairwise distance
  (:func:`mmcedu.kernels.gamma_grid`). Support vector clustering explores its own widths,
  the q-list of Lee & Daniels (:func:`mmcedu.svc.q_list`; six of them in the quick protocol).
  EMMC has no kernel; its grid is over ``C``. k-means, GMM and the ensemble have no grid.
* **Selection**: two numbers per method and task. *Best*: the grid point with the highest
  mean ARI (it looks at the labels: an upper bound, as the papers report). *Label-free*: the
  grid point with the highest silhouette score of the labels in the (standardized) input
  space, a heuristic that every method can use.
* **Restarts**: every grid point is run with ``n_restarts`` seeds (quick 1, full 10) and the
  ARI, error and time are averaged.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.metrics import silhouette_score
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler

from .. import datasets
from ..kernels import gamma_grid, rbf_kernel
from ..metrics import adjusted_rand_score, clustering_error
from ..report import Table
from . import cached

__all__ = ["TASKS", "METHODS", "load_task", "run_comparison", "comparison_table", "scaling", "TABLES"]

N_QUICK, N_FULL = 60, 200
FRACTIONS_QUICK = (0.05, 0.15, 0.4)
FRACTIONS_FULL = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0)
EMMC_C_QUICK, EMMC_C_FULL = (0.1, 1.0), (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)

# name -> (number of clusters, loader(n, seed))
TASKS = {
    "two circles": (2, lambda n, s: datasets.two_circles(n, random_state=s)),
    "jointed circles": (2, lambda n, s: datasets.jointed_circles(n, random_state=s)),
    "two Gaussians": (2, lambda n, s: datasets.two_gaussians(n, random_state=s)),
    "moons": (2, lambda n, s: datasets.moons(n, random_state=s)),
    "digits 3-8": (2, lambda n, s: datasets.digits((3, 8), n // 2, random_state=s)),
    "digits 1-7": (2, lambda n, s: datasets.digits((1, 7), n // 2, random_state=s)),
    "iris": (3, lambda n, s: datasets.iris()),
    "blobs": (3, lambda n, s: datasets.blobs(n, random_state=s)),
    "digits 1-4": (4, lambda n, s: datasets.digits((1, 2, 3, 4), n // 4, random_state=s)),
}


def load_task(name, n_samples, random_state=0):
    """``(X, y, k)`` of a comparison task, features standardized."""
    k, loader = TASKS[name]
    X, y = loader(n_samples, random_state)
    return StandardScaler().fit_transform(X), y, k


def _mmcedu(name):
    import mmcedu

    return getattr(mmcedu, name)


def _kmeans(k, gamma, seed, X):
    return KMeans(k, n_init=10, random_state=seed).fit_predict(X)


def _gmm(k, gamma, seed, X):
    return GaussianMixture(k, n_init=3, random_state=seed).fit(X).predict(X)


def _spectral(k, gamma, seed, X):
    K = rbf_kernel(X, gamma=gamma)
    return SpectralClustering(k, affinity="precomputed", random_state=seed).fit_predict(K)


def _sdp_mmc(k, gamma, seed, X):
    return _mmcedu("SDPMMC")(gamma=gamma, random_state=seed).fit_predict(X)


def _gmmc(k, gamma, seed, X):
    return _mmcedu("GMMC")(gamma=gamma, random_state=seed).fit_predict(X)


def _umc_rls(k, gamma, seed, X):
    return _mmcedu("UMCRLS")(k, alpha=2.0**-7, gamma=gamma, random_state=seed).fit_predict(X)


def _emmc(k, C, seed, X):
    output = "single" if k == 2 else "multi"
    return _mmcedu("EMMC")(k, C=C, output=output, random_state=seed).fit_predict(X)


def _svc(k, gamma, seed, X):
    return _mmcedu("SupportVectorClustering")(gamma=gamma, labeling="cone").fit_predict(X)


def _ensemble(k, gamma, seed, X):
    from ..ensemble import base_partitions

    P = base_partitions(X, 20, k, random_state=seed)
    return _mmcedu("RobustEnsembleClustering")(k, random_state=seed).fit_predict(P)


# name -> (function, grid kind, binary only)
METHODS = {
    "k-means": (_kmeans, None, False),
    "GMM": (_gmm, None, False),
    "spectral": (_spectral, "gamma", False),
    "SDP MMC": (_sdp_mmc, "gamma", True),
    "GMMC": (_gmmc, "gamma", True),
    "UMC-RLS": (_umc_rls, "gamma", False),
    "EMMC": (_emmc, "C", False),
    "SVC (cone)": (_svc, "qlist", False),
    "ensemble l12": (_ensemble, None, False),
}


def _silhouette(X, labels):
    n_labels = np.unique(labels).size
    if n_labels < 2 or n_labels >= len(labels):
        return -1.0
    return float(silhouette_score(X, labels))


def _grid(kind, X, full):
    if kind == "gamma":
        return list(gamma_grid(X, FRACTIONS_FULL if full else FRACTIONS_QUICK))
    if kind == "qlist":  # support vector clustering explores its own widths (the q-list)
        from ..svc import q_list

        q = np.asarray(q_list(X).q)
        if not full and q.size > 6:
            q = q[np.linspace(0, q.size - 1, 6).round().astype(int)]
        return list(q)
    if kind == "C":
        return list(EMMC_C_FULL if full else EMMC_C_QUICK)
    return [None]


def run_comparison(full=False, progress=None, methods=None, tasks=None, n_samples=None):
    """Run the protocol; return one record per (task, method).

    Each record: ``task``, ``method``, ``ari_best``, ``ari_free``, ``error_free``,
    ``time`` (mean seconds per fit), ``param_best``, ``param_free``.
    """
    methods = list(METHODS) if methods is None else list(methods)
    tasks = list(TASKS) if tasks is None else list(tasks)
    n = n_samples or (N_FULL if full else N_QUICK)
    seeds = range(10 if full else 1)
    jobs = [(t, m) for t in tasks for m in methods if not (METHODS[m][2] and TASKS[t][0] != 2)]
    records = []
    for done, (task, method) in enumerate(jobs):
        X, y, k = load_task(task, n)
        fn, kind, _ = METHODS[method]
        per_param = []
        for p in _grid(kind, X, full):
            aris, errs, sils, secs = [], [], [], []
            for seed in seeds:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    labels = fn(k, p, seed, X)
                secs.append(time.perf_counter() - t0)
                aris.append(adjusted_rand_score(y, labels))
                errs.append(clustering_error(y, labels))
                sils.append(_silhouette(X, labels))
            per_param.append((p, np.mean(aris), np.mean(errs), np.mean(sils), np.mean(secs)))
        best = max(per_param, key=lambda r: r[1])
        free = max(per_param, key=lambda r: r[3])
        records.append({
            "task": task, "method": method, "ari_best": best[1], "ari_free": free[1],
            "error_free": free[2], "time": float(np.mean([r[4] for r in per_param])),
            "param_best": best[0], "param_free": free[0],
        })
        if progress is not None:
            progress(done + 1, len(jobs))
    return records


def comparison_table(full=False, progress=None, records=None):
    """Comparison: ARI with label-free / best parameters, every method on every task."""
    records = run_comparison(full, progress) if records is None else records
    tasks = list(dict.fromkeys(r["task"] for r in records))
    methods = list(dict.fromkeys(r["method"] for r in records))
    cell = {(r["task"], r["method"]): r for r in records}
    rows = []
    for m in methods:
        row = [m]
        for t in tasks:
            r = cell.get((t, m))
            row.append("" if r is None else f"{r['ari_free']:.2f} / {r['ari_best']:.2f}")
        times = [cell[(t, m)]["time"] for t in tasks if (t, m) in cell]
        row.append(float(np.mean(times)))
        rows.append(row)
    return Table(rows, ["method"] + tasks + ["mean s / fit"], floatfmt=".3f",
                 title="ARI: label-free selection / best grid point")


def scaling(sizes, methods=None, *, max_seconds=20.0, random_state=0):
    """Fit time of every method vs n on moons (binary), measured in one run.

    A method is not run at larger n once one fit took longer than ``max_seconds``.

    Returns
    -------
    times : dict ``{method: [(n, seconds), ...]}``
    """
    methods = list(METHODS) if methods is None else list(methods)
    times = {}
    for m in methods:
        fn, kind, _ = METHODS[m]
        times[m] = []
        for n in sizes:
            X, y, k = load_task("moons", n, random_state)
            grid = _grid(kind, X, False)
            p = grid[len(grid) // 2]
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(k, p, random_state, X)
            t = time.perf_counter() - t0
            times[m].append((n, t))
            if t > max_seconds:
                break
    return times


TABLES = {"comparison": cached("comparison")(comparison_table)}
