"""Table I of Pahikkala et al. (2012), UMC-RLS: the rows that run offline.

Protocol of the paper (Sec. IV-C): Gaussian kernel exp(-d^2 / sigma^2); lambda from
{2^-10, ..., 2^-1} and sigma from {0.1, ..., 1.0} x sigma_0 (sigma_0 the largest pairwise
distance); for every grid point the mean ARI over 10 random initialisations; the best grid
point (selected *with* the labels, as the paper does) is then run 10 more times and the
mean (std) ARI of those runs is reported. k-means (k-means++), GMM (full covariances) and
spectral clustering (10-nearest-neighbour graph) from scikit-learn run 10 times each.

``full=False`` (the chapter's quick protocol) uses a 3 x 2 grid (sigma in {0.2, 0.4, 0.5}
sigma_0, lambda in {2^-7, 2^-1}), 3 initialisations per grid point and 5 final runs;
``full=True`` the paper's 10 x 10 grid with 10 + 10 runs.

Data stand-ins: USPS is not shipped with scikit-learn; its 8 x 8 ``digits`` (500-sample
subsets of digits 1-4 and 5-8, 125 per class) stand in for USPS 1-4 / 5-8. Moons is
``make_moons(500, noise=0.1)``; the paper does not state its noise level.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.metrics import silhouette_score
from sklearn.mixture import GaussianMixture

from .. import datasets
from ..kernels import gamma_from_sigma, pairwise_distance_range, rbf_kernel
from ..metrics import adjusted_rand_score
from ..report import Table
from ..umc_rls import run_search
from . import cached

__all__ = ["table1", "label_free_selection", "TABLES", "PAPER_TABLE1", "load"]

# Table I of the paper: mean ARI (standard deviation) over ten repetitions.
PAPER_TABLE1 = {
    "Iris": {
        "UMC-RLS": (0.96, 0.00), "Steep-RLS": (0.56, 0.13), "Stoc-RLS": (0.45, 0.25),
        "k-means": (0.70, 0.09), "GMM": (0.96, 0.00), "SC": (0.43, 0.00),
    },
    "Moons": {
        "UMC-RLS": (1.00, 0.00), "Steep-RLS": (0.07, 0.05), "Stoc-RLS": (0.21, 0.35),
        "k-means": (0.65, 0.00), "GMM": (0.78, 0.00), "SC": (0.99, 0.00),
    },
    "USPS 1-4": {
        "UMC-RLS": (0.85, 0.02), "Steep-RLS": (0.38, 0.08), "Stoc-RLS": (0.38, 0.12),
        "k-means": (0.61, 0.01), "GMM": (0.48, 0.00), "SC": (0.66, 0.00),
    },
    "USPS 5-8": {
        "UMC-RLS": (0.91, 0.02), "Steep-RLS": (0.34, 0.14), "Stoc-RLS": (0.26, 0.12),
        "k-means": (0.67, 0.00), "GMM": (0.64, 0.00), "SC": (0.93, 0.00),
    },
}

_SEARCH = {"UMC-RLS": "shaking", "Steep-RLS": "steepest", "Stoc-RLS": "stochastic"}
_STAND_IN = {
    "Iris": "raw features",
    "Moons": "make_moons(500, noise=0.1)",
    "USPS 1-4": "stand-in: sklearn digits 1-4, 125/class",
    "USPS 5-8": "stand-in: sklearn digits 5-8, 125/class",
}


def load(name):
    """``(X, y, k)`` of one Table I data set (or its offline stand-in)."""
    if name == "Iris":
        X, y = datasets.iris()
    elif name == "Moons":
        X, y = datasets.moons(500, noise=0.1, random_state=0)
    elif name == "USPS 1-4":
        X, y = datasets.digits(classes=(1, 2, 3, 4), n_per_class=125, random_state=0)
    elif name == "USPS 5-8":
        X, y = datasets.digits(classes=(5, 6, 7, 8), n_per_class=125, random_state=0)
    else:
        raise ValueError(f"Unknown data set {name!r}; choose from {list(PAPER_TABLE1)}.")
    return X, y, len(np.unique(y))


def _protocol(full):
    if full:
        return {
            "fractions": np.round(np.arange(1, 11) / 10, 1),
            "log2_lambdas": np.arange(-10, 0),
            "n_select": 10,
            "n_final": 10,
        }
    return {
        "fractions": np.array([0.2, 0.4, 0.5]),
        "log2_lambdas": np.array([-7, -1]),
        "n_select": 3,
        "n_final": 5,
    }


def _hat_from_eig(s, V, lam):
    return (V * (s / (s + lam))) @ V.T


_CACHE = {}


def _grid(name, full, progress=None, done=0, total=1):
    """Every RLS variant on every grid point of one data set (cached per process).

    Returns a dict ``{method: {(fraction, log2_lambda): {"ari", "Q", "sil"}}}`` holding the
    mean over the selection runs, and ``final``: the fresh runs at the best grid point.
    """
    key = (name, bool(full))
    if key in _CACHE:
        return _CACHE[key]
    X, y, k = load(name)
    p = _protocol(full)
    sigma0 = pairwise_distance_range(X)[1]
    out = {m: {} for m in _SEARCH}
    eig = {}
    step = 0
    for f in p["fractions"]:
        gamma = gamma_from_sigma(f * sigma0, convention="sigma_squared")
        s, V = np.linalg.eigh(rbf_kernel(X, gamma=gamma))
        s = np.clip(s, 0.0, None)
        eig[f] = (s, V)
        for e in p["log2_lambdas"]:
            R = _hat_from_eig(s, V, 2.0**e)
            for method, search in _SEARCH.items():
                aris, qs, sils = [], [], []
                for seed in range(p["n_select"]):
                    res = run_search(None, 2.0**e, k, search=search, R=R, random_state=seed)
                    lab = res["labels"]
                    aris.append(adjusted_rand_score(y, lab))
                    qs.append(res["objective"])
                    if method == "UMC-RLS":  # label-free selection is studied for UMC-RLS only
                        sils.append(silhouette_score(X, lab) if len(np.unique(lab)) > 1 else -1.0)
                out[method][(float(f), int(e))] = {
                    "ari": float(np.mean(aris)),
                    "Q": float(np.mean(qs)),
                    "sil": float(np.mean(sils)) if sils else float("nan"),
                }
            step += 1
            if progress is not None:
                progress(done + step, total)
    final = {}
    for method, search in _SEARCH.items():
        (f, e) = max(out[method], key=lambda fe: out[method][fe]["ari"])
        s, V = eig[f]
        R = _hat_from_eig(s, V, 2.0**e)
        aris = [
            adjusted_rand_score(
                y, run_search(None, 2.0**e, k, search=search, R=R, random_state=1000 + r)["labels"]
            )
            for r in range(p["n_final"])
        ]
        final[method] = {"fraction": f, "log2_lambda": e, "aris": np.array(aris)}
    result = {"grid": out, "final": final, "X": X, "y": y, "k": k}
    _CACHE[key] = result
    return result


def _baselines(X, y, k, n_runs):
    makers = {
        "k-means": lambda s: KMeans(k, init="k-means++", n_init=1, random_state=s),
        "GMM": lambda s: GaussianMixture(k, covariance_type="full", random_state=s),
        "SC": lambda s: SpectralClustering(
            k, affinity="nearest_neighbors", n_neighbors=10, random_state=s
        ),
    }
    out = {}
    with warnings.catch_warnings():
        # SC on Iris: the 10-NN graph has two components (setosa alone); scikit-learn warns
        # and the clustering still runs. The split finds setosa exactly, which raises our
        # score: the paper's low SC score on Iris stays unexplained (see the chapter).
        warnings.filterwarnings("ignore", message="Graph is not fully connected")
        for name, make in makers.items():
            out[name] = np.array(
                [adjusted_rand_score(y, make(s).fit_predict(X)) for s in range(n_runs)]
            )
    return out


def _n_grid(full):
    p = _protocol(full)
    return len(p["fractions"]) * len(p["log2_lambdas"])


@cached("umc_rls_table1")
def table1(full=False, progress=None):
    """Table I rows (Iris, Moons, USPS 1-4 / 5-8 stand-ins): paper vs mmcedu, mean ARI."""
    names = list(PAPER_TABLE1)
    total = len(names) * _n_grid(full)
    rows = []
    for i, name in enumerate(names):
        g = _grid(name, full, progress, i * _n_grid(full), total)
        p = _protocol(full)
        for method in _SEARCH:
            fin = g["final"][method]
            note = (
                f"sigma={fin['fraction']:g} sigma0, lambda=2^{fin['log2_lambda']}; "
                f"{_STAND_IN[name]}"
            )
            rows.append(
                [name, method, PAPER_TABLE1[name][method][0], float(fin["aris"].mean()),
                 float(fin["aris"].std()), note]
            )
        for method, aris in _baselines(g["X"], g["y"], g["k"], p["n_final"]).items():
            rows.append(
                [name, method, PAPER_TABLE1[name][method][0], float(aris.mean()),
                 float(aris.std()), f"scikit-learn; {_STAND_IN[name]}"]
            )
    grid = "full 10 x 10 grid, 10 + 10 runs" if full else "quick 3 x 2 grid, 3 + 5 runs"
    return Table(
        rows,
        ["data set", "method", "paper", "mmcedu", "std", "note"],
        floatfmt=".2f",
        title=f"Table I (mean ARI), {grid}",
    )


@cached("umc_rls_selection")
def label_free_selection(full=False, progress=None):
    """UMC-RLS: ARI reached when the grid point is chosen without labels.

    Columns: the mean ARI over the selection runs at the label-selected grid point (the
    paper's protocol; optimistic, as it is the maximum over the grid), at the grid point with
    the lowest mean Q(c), and at the one with the highest mean silhouette (computed on the
    input features).
    """
    names = list(PAPER_TABLE1)
    total = len(names) * _n_grid(full)
    rows = []
    for i, name in enumerate(names):
        grid = _grid(name, full, progress, i * _n_grid(full), total)["grid"]["UMC-RLS"]
        best = max(grid, key=lambda fe: grid[fe]["ari"])
        low_q = min(grid, key=lambda fe: grid[fe]["Q"])
        high_sil = max(grid, key=lambda fe: grid[fe]["sil"])
        rows.append(
            [name, grid[best]["ari"], grid[low_q]["ari"], grid[high_sil]["ari"],
             f"lowest Q at sigma={low_q[0]:g} sigma0, lambda=2^{low_q[1]}"]
        )
    return Table(
        rows,
        ["data set", "selected with labels", "lowest Q", "best silhouette", "note"],
        floatfmt=".2f",
        title="UMC-RLS mean ARI under three ways of choosing (sigma, lambda)",
    )


TABLES = {"umc_rls_table1": table1, "umc_rls_selection": label_free_selection}
