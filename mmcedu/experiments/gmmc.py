"""GMMC beside Table 1 of Valizadegan & Jin (2006): optimal width and kernel learning.

Protocol (the paper's "optimal kernel width acquired through an exhaustive search"): RBF
kernel ``exp(-||x - x'||^2 / (2 sigma^2))`` with ``sigma`` a fraction of the *range* of
pairwise distances (:func:`mmcedu.kernels.gamma_grid`, ``reference="range"``); for every
method the width with the smallest error is kept (an oracle that looks at the labels, as in
the paper). Methods on the same kernel:

* NC: normalized cut, :class:`sklearn.cluster.SpectralClustering` with the precomputed kernel;
* SDP MMC: :class:`mmcedu.SDPMMC` on an 80-sample subset (the paper: "a subset of samples
  (including 80 instances)"; 40 in the quick protocol);
* GMMC (``mmcedu``): :class:`mmcedu.GMMC` repaired, normalized Laplacian, low-rank solver;
* printed: (7) as printed with the normalized Laplacian. Its relaxation is degenerate (optimum
  0, attained only along ``z0 = D^1/2 e - mean``), so its labels are ``sign(z0)`` exactly;
  the chapter checks this against both solvers and the table uses the closed form;
* label-free: GMMC at the width chosen by :func:`mmcedu.gmmc.contrast_score` (the smallest
  relaxed objective relative to an average balanced cut), beside the paper's unsupervised
  kernel learning column.

``full=False`` (the chapter): 120-sample data sets (60 per class), widths
0.05, 0.1, 0.2, 0.4 of the range, SDP MMC on 40 samples at 0.1 and 0.2; about 30-60 s.
``full=True``: the paper's 180-sample digit subsets (90 per class), 200-sample synthetic
sets, widths 0.02 ... 1.0 (12 values), SDP MMC on 80 samples and 10 widths; 10-20 minutes.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import SpectralClustering

from .. import datasets
from ..gmmc import (
    contrast_score,
    gmmc_matrix,
    labels_from_primal,
    learn_kernel_weights,
    solve_lowrank,
)
from ..kernels import degree, gamma_grid, rbf_kernel
from ..metrics import clustering_error
from ..report import Table
from . import best_time, cached

__all__ = ["PAPER", "TABLES", "kernel_learning_table", "load", "printed_labels", "scaling", "table1"]

# Table 1 of Valizadegan & Jin (2006), clustering error (%):
# (NC, MMC, GMMC, GMMC with unsupervised kernel learning), optimal kernel width.
PAPER = {
    "Two Circles": (2.0, 0.0, 0.0, 0.0),
    "Two Jointed Circles": (7.0, 6.25, 0.0, 0.0),
    "Two Gaussian": (1.25, 2.5, 1.25, 3.75),
    "Digits 3-8": (35.0, 10.0, 5.6, 5.6),
    "Digits 1-7": (45.0, 31.25, 2.2, 3.0),
    "Digits 2-7": (34.0, 1.25, 0.5, 5.6),
    "Digits 8-9": (48.0, 3.75, 16.0, 12.0),
}

_NOTES = {
    "Two Circles": "stand-in: datasets.two_circles",
    "Two Jointed Circles": "stand-in: datasets.jointed_circles",
    "Two Gaussian": "stand-in: datasets.two_gaussians (Bayes error ~7 %)",
}
_DIGITS_NOTE = "scikit-learn 8x8 digits, balanced subset"

FRACTIONS_QUICK = (0.05, 0.1, 0.2, 0.4)
FRACTIONS_FULL = (0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0)
MMC_FRACTIONS_QUICK = (0.1, 0.2)
MMC_FRACTIONS_FULL = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def load(name, n, random_state=0):
    """The stand-in for one data set of Table 1 with ``n`` samples."""
    if name == "Two Circles":
        return datasets.two_circles(n, random_state=random_state)
    if name == "Two Jointed Circles":
        return datasets.jointed_circles(n, random_state=random_state)
    if name == "Two Gaussian":
        return datasets.two_gaussians(n, random_state=random_state)
    a, b = (int(c) for c in name.split()[1].split("-"))
    return datasets.digits((a, b), n_per_class=n // 2, scale=True, random_state=random_state)


def printed_labels(K):
    """Labels of the printed relaxation (normalized Laplacian): ``sign(D^1/2 e - mean)``."""
    s = np.sqrt(degree(K))
    z0 = s - s.mean()
    return (z0 > 0).astype(int)


def _nc_labels(K):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # disconnected-graph warnings at narrow widths
        return SpectralClustering(2, affinity="precomputed", random_state=0).fit_predict(K)


def _sdp_mmc_error(name, n, fractions):
    try:
        from ..sdp_mmc import SDPMMC
    except ImportError:  # pragma: no cover - the module is part of the package
        return None
    X, y = load(name, n)
    best = np.inf
    for g in gamma_grid(X, fractions, reference="range"):
        model = SDPMMC(gamma=float(g), rounding="randomized", random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X)
        best = min(best, 100.0 * clustering_error(y, model.labels_))
    return best


@cached("gmmc_table1")
def table1(full=False, progress=None):
    """Clustering error (%) of NC, SDP MMC, GMMC (repaired and printed) beside Table 1.

    Returns
    -------
    mmcedu.report.Table
        Columns ``data set | paper | mmcedu | printed | paper NC | NC | paper MMC | SDP MMC |
        paper UKL | label-free | width | gap | n | note``: ``paper``/``mmcedu`` are GMMC,
        ``width`` the best fraction of the distance range for GMMC, ``gap`` the largest
        certified duality gap over the grid, relative to ``max(objective, 1)``.
    """
    names = list(PAPER)
    n = 200 if full else 120
    fractions = FRACTIONS_FULL if full else FRACTIONS_QUICK
    mmc_n = 80 if full else 40
    mmc_fr = MMC_FRACTIONS_FULL if full else MMC_FRACTIONS_QUICK
    total, done = len(names) * (len(fractions) + 1), 0
    rows = []
    for name in names:
        nn = 180 if (full and name.startswith("Digits")) else n
        X, y = load(name, nn)
        errs, nc, pr, scores, gaps = [], [], [], [], []
        for g in gamma_grid(X, fractions, reference="range"):
            K = rbf_kernel(X, gamma=float(g))
            M, _ = gmmc_matrix(K)
            V, info = solve_lowrank(M, random_state=0, gap_tol=1e-3, max_iter=10_000)
            labels, _ = labels_from_primal(V=V)
            errs.append(100.0 * clustering_error(y, labels))
            scores.append(contrast_score(M, value=info["primal"], K=K))
            gaps.append(info["gap"] / max(info["primal"], 1.0))
            nc.append(100.0 * clustering_error(y, _nc_labels(K)))
            pr.append(100.0 * clustering_error(y, printed_labels(K)))
            done += 1
            if progress is not None:
                progress(done, total)
        mmc = _sdp_mmc_error(name, mmc_n, mmc_fr)
        done += 1
        if progress is not None:
            progress(done, total)
        i = int(np.argmin(errs))
        p_nc, p_mmc, p_gmmc, p_ukl = PAPER[name]
        rows.append([
            name, p_gmmc, errs[i], min(pr), p_nc, min(nc), p_mmc, mmc, p_ukl,
            errs[int(np.argmin(scores))], float(fractions[i]), float(max(gaps)), nn,
            _NOTES.get(name, _DIGITS_NOTE),
        ])
    return Table(
        rows,
        ["data set", "paper", "mmcedu", "printed", "paper NC", "NC", "paper MMC", "SDP MMC",
         "paper UKL", "label-free", "width", "gap", "n", "note"],
        floatfmt=".2f",
        formats={"gap": ".1e"},
        pairs=[("paper", "mmcedu", "GMMC"), ("paper NC", "NC", "normalized cut"),
               ("paper MMC", "SDP MMC", "SDP MMC (80 samples)"),
               ("paper UKL", "label-free", "GMMC, unsupervised kernel learning")],
        title="Clustering error (%) at the best RBF width (Valizadegan & Jin 2006, Table 1)",
    )


@cached("gmmc_kernel_learning")
def kernel_learning_table(full=False, progress=None):
    """Weights of the kernel learning (12) as printed, on 10 widths (10 %, ..., 100 % of the range).

    Returns a table ``data set | weight on widest | mean width | error (12) | label-free error |
    n``: (12) maximizes the relaxed objective over the kernel weights, so the weight goes to the
    flattest kernel. ``error (12)`` is GMMC on the learned combination of reduced matrices.
    Quick: 30 samples, three data sets; full: 60 samples, all seven (cvxpy, small n).
    """
    names = ["Two Circles", "Two Gaussian", "Digits 3-8"] if not full else list(PAPER)
    n = 60 if full else 30
    fractions = np.round(np.arange(1, 11) * 0.1, 2)
    rows = []
    for k, name in enumerate(names):
        X, y = load(name, n)
        Ks = [rbf_kernel(X, gamma=float(g)) for g in gamma_grid(X, fractions, reference="range")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            beta, _ = learn_kernel_weights(Ks, method="printed")
        Ms = [gmmc_matrix(K)[0] for K in Ks]
        Mb = sum(b * M for b, M in zip(beta, Ms))
        V, _ = solve_lowrank(Mb, random_state=0, gap_tol=1e-3)
        err12 = 100.0 * clustering_error(y, labels_from_primal(V=V)[0])
        bc, _ = learn_kernel_weights(Ks, method="contrast")
        V, _ = solve_lowrank(Ms[int(np.argmax(bc))], random_state=0, gap_tol=1e-3)
        errc = 100.0 * clustering_error(y, labels_from_primal(V=V)[0])
        rows.append([name, float(beta[-1]), float(beta @ fractions), err12, errc, n])
        if progress is not None:
            progress(k + 1, len(names))
    return Table(
        rows,
        ["data set", "weight on widest", "mean width", "error (12)", "label-free error", "n"],
        floatfmt=".2f",
        title="Unsupervised kernel learning (12) as printed: where the weight goes",
    )


TABLES = {"gmmc_table1": table1, "gmmc_kernel_learning": kernel_learning_table}


def scaling(sizes, *, sdp_max_n=80, gamma=0.5, random_state=0, repeats=3, progress=None):
    """Figure 1: wall time of one fit of SDP MMC and of GMMC on the same data, versus n.

    Data: :func:`mmcedu.datasets.two_gaussians` with ``n`` samples, RBF kernel ``gamma``
    (both methods get the same kernel). SDP MMC (:class:`mmcedu.SDPMMC`, SCS, eigenvector
    rounding) runs only for ``n <= sdp_max_n``; GMMC uses the low-rank solver. A tiny warm-up
    fit of each runs first so import costs are not charged to the first size, and a fit
    that takes less than a second or two is timed as the best of ``repeats`` runs.

    Returns
    -------
    list of dict with ``n``, ``sdp_mmc`` (seconds or None), ``gmmc`` (seconds), ``gap``
    (certified, relative to ``max(objective, 1)``), ``error_gmmc`` (%).
    """

    from ..gmmc import GMMC

    try:
        from ..sdp_mmc import SDPMMC
    except ImportError:  # pragma: no cover
        SDPMMC = None
    Xw, _ = datasets.two_gaussians(10, random_state=random_state)
    GMMC(gamma=gamma, random_state=0).fit(Xw)
    if SDPMMC is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SDPMMC(gamma=gamma).fit(Xw)
    out = []
    for k, n in enumerate(sizes):
        X, y = datasets.two_gaussians(int(n), random_state=random_state)
        row = {"n": int(n), "sdp_mmc": None}
        if SDPMMC is not None and n <= sdp_max_n:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row["sdp_mmc"], _ = best_time(lambda: SDPMMC(gamma=gamma).fit(X), repeats, 2.0)
        row["gmmc"], model = best_time(lambda: GMMC(gamma=gamma, random_state=0).fit(X), repeats, 2.0)
        row["gap"] = model.duality_gap_ / max(model.objective_, 1.0)
        row["error_gmmc"] = 100.0 * clustering_error(y, model.labels_)
        out.append(row)
        if progress is not None:
            progress(k + 1, len(sizes))
    return out
