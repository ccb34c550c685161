"""SDP maximum margin clustering beside the MMC column of Table 1 of Valizadegan & Jin (2006).

The GMMC paper reports MMC (the SDP of Xu et al. 2004) "for a subset of samples (including
80 instances) due to the out of memory problem", with "the optimal kernel width that is
acquired through an exhaustive search" (the width giving the smallest error: an oracle choice
that looks at the labels, used here too so that the numbers are comparable).

Protocol here: RBF kernel ``exp(-||x - x'||^2 / (2 sigma^2))`` with ``sigma`` a fraction of
the range of pairwise distances (the paper's Fig. 2 convention,
:func:`mmcedu.kernels.gamma_grid` with ``reference="range"``), ``C = 1``, ``balance = 0.1``,
SCS, randomized rounding (100 random hyperplanes, best by the exact objective).

* ``full=False`` (the chapter): 40 samples per data set (20 per class), widths
  0.1 and 0.2 of the range: 12 SDP solves, about 15 s.
* ``full=True``: 80 samples per data set, widths 0.05, 0.10, ..., 1.00: 120 SDP solves of
  n = 80, about 10 minutes on one core.

:func:`scaling` measures the time and peak memory of one SDP solve against ``n``.
:func:`brute_force_mmc` (the exact optimum of tiny problems) and :func:`kkt_residuals` (the
optimality conditions of a cvxpy solution) are the oracles of chapter 02 and the tests.
"""

from __future__ import annotations

import warnings

import numpy as np

from mmcedu.balance import balanced_labelings, max_imbalance
from mmcedu.kernels import center_kernel, gamma_grid, rbf_kernel
from mmcedu.metrics import clustering_error
from mmcedu.sdp_mmc import SDPMMC, solve_sdp_mmc, svm_dual_objective

from . import measure as _measure
from .cache import cached
from .parallel import map_tasks
from .registry import PAPER, PaperTable, load, stand_in

__all__ = ["DATA_SETS", "SCALING_GAMMA", "protocol", "sdp_mmc_table1", "scaling", "brute_force_mmc",
           "kkt_residuals", "TABLES"]

_SOURCE = "valizadegan2006gmmc"
#: The data sets of Table 1 with an MMC number (the paper's names).
DATA_SETS = ("Two Circles", "Two Gaussian", "Digits 3-8", "Digits 1-7", "Digits 2-7", "Digits 8-9")
#: RBF parameter of the scaling study.
SCALING_GAMMA = 0.5


def _sdp_mmc_error(task):
    """Clustering error (%) of one SDP MMC fit: ``task = (registered data set, n, gamma)``."""
    data, n, gamma = task
    X, y = load(data, n)
    model = SDPMMC(gamma=gamma, solver="cvxpy", rounding="randomized", random_state=0)
    with warnings.catch_warnings():
        # an inaccurate SCS solve still gives labels; the error is what is reported
        warnings.simplefilter("ignore")
        model.fit(X)
    return 100.0 * clustering_error(y, model.labels_)


def protocol(full=False):
    """The fits of :func:`sdp_mmc_table1`: ``(n, fractions, tasks)``.

    ``tasks`` lists ``(paper's data set, fraction, (registered data set, n, gamma))``, one
    independent SDP solve each (the gammas are computed from the data here, once).
    """
    n = 80 if full else 40
    fractions = np.round(np.arange(1, 21) * 0.05, 2) if full else np.array([0.1, 0.2])
    tasks = []
    for name in DATA_SETS:
        data = stand_in(_SOURCE, name)[0]
        X, _ = load(data, n)
        for f, gamma in zip(fractions, gamma_grid(X, fractions=fractions, reference="range")):
            tasks.append((name, float(f), (data, n, float(gamma))))
    return n, fractions, tasks


@cached("sdp_mmc_table1")
def sdp_mmc_table1(full=False, progress=None, n_jobs=None):
    """Clustering error (%) of :class:`mmcedu.SDPMMC` beside the paper's MMC column.

    Parameters
    ----------
    full : bool, default=False
        ``True``: 80 samples and 20 widths (paper protocol); ``False``: 40 samples, 2 widths.
    progress : callable, default=None
        Called as ``progress(done, total)`` after every SDP solve.
    n_jobs : int, default=None
        Solves run at the same time (:func:`mmcedu_lab.parallel.map_tasks`; ``None``:
        ``$MMCEDU_N_JOBS``, else one). The table does not depend on it.

    Returns
    -------
    PaperTable
        Columns ``data set | paper | mmcedu | n | width | note``; ``width`` is the best
        fraction of the distance range.
    """
    n, _, tasks = protocol(full)
    errors = map_tasks(_sdp_mmc_error, [t[2] for t in tasks], n_jobs=n_jobs, progress=progress)
    rows = []
    for name in DATA_SETS:
        runs = [(err, f) for (nm, f, _), err in zip(tasks, errors) if nm == name]
        best = min(runs, key=lambda r: r[0])  # the first of equal errors: the narrowest width
        paper = PAPER[_SOURCE]["Table 1"][name]["MMC"]
        rows.append([name, paper, best[0], n, best[1], stand_in(_SOURCE, name)[1]])
    return PaperTable(
        rows,
        ["data set", "paper", "mmcedu", "n", "width", "note"],
        floatfmt=".2f",
        title="Clustering error (%) of SDP MMC at the best RBF width (GMMC paper, Table 1, MMC)",
    )


def scaling(sizes, *, methods=None, max_n=None, max_seconds=np.inf, repeats=1, memory=None,
            random_state=0, progress=None):
    """Wall time and peak memory of one SDP solve for each ``n`` in ``sizes``.

    Data: the registered ``"two Gaussians"`` with ``n`` samples, RBF kernel with
    ``gamma = SCALING_GAMMA`` (centred; built outside the timing), ``C = 1``,
    ``balance = 0.1``, SCS with its default tolerances (:func:`mmcedu.sdp_mmc.solve_sdp_mmc`).
    A tiny warm-up solve runs first so that import and cache costs are not charged to the
    first size.

    Parameters
    ----------
    sizes : sequence of int
    methods : list of str, default=None
        The only method is ``"SDP MMC"``.
    max_n : dict, default=None
        ``{method: largest n}``; ``None``: no limit.
    max_seconds, repeats, memory, progress
        As in :func:`mmcedu_lab.measure.scaling`. ``memory="rss"`` measures the
        whole process, solver included (Linux); ``"tracemalloc"`` the Python heap.
    random_state : int, default=0
        Seed of the data.

    Returns
    -------
    list of dict
        ``n``, ``method``, ``seconds``, ``peak_mb``, ``memory``, ``skipped``, ``n_iter``
        (SCS iterations), ``status``.
    """
    all_methods = {"SDP MMC": lambda K: solve_sdp_mmc(K, 1.0, 0.1)}
    chosen = _measure.select_methods(methods, all_methods)

    def make_data(n):
        X, _ = load("two Gaussians", int(n), random_state)
        return center_kernel(rbf_kernel(X, gamma=SCALING_GAMMA))

    def describe(name, sol, K):
        return {"n_iter": sol.info.get("n_iter"), "status": sol.info.get("status")}

    return _measure.scaling(
        sizes, chosen, make_data, max_n=max_n, max_seconds=max_seconds, repeats=repeats,
        memory=memory, describe=describe, warm_up=8, progress=progress,
    )


def brute_force_mmc(K, C=1.0, balance=0.1):
    """Maximum margin clustering by enumeration: ``min omega(y)`` over balanced labelings.

    Enumerates every ``y`` with ``y_1 = +1`` and ``|e^T y| <= floor(balance n)``
    (:func:`mmcedu.balance.balanced_labelings`), so only for tiny ``n`` (at most 20).

    Returns
    -------
    y : ndarray of int in {-1, +1}, the best labeling
    omega : float, its objective ``svm_dual_objective(K, y, C)``
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    l = max_imbalance(n, balance)
    best_y, best = None, np.inf
    for y in balanced_labelings(n, l):
        if np.all(y == y[0]):
            continue  # one cluster only
        w = svm_dual_objective(K, y, C)
        if w < best:
            best_y, best = y, w
    if best_y is None:
        raise ValueError(f"No balanced labeling of n={n} points into two clusters exists.")
    return best_y, float(best)


def kkt_residuals(K, sol):
    """KKT residuals of an :class:`mmcedu.sdp_mmc.SDPSolution` (solved without ``fix_M``), from cvxpy's duals.

    With dual matrices ``Z`` (block constraint) and ``W`` (``M`` PSD), multipliers ``s``
    (``diag(M) = e``, cvxpy's sign), ``lam_up, lam_lo >= 0`` (balance rows), ``eta``
    (``mu >= 0``) and ``xi`` (``nu >= 0``), the Lagrangian's stationarity conditions are

    * delta: ``Z[n, n] = 1``;
    * mu: ``eta = 2 alpha``; nu: ``xi = 2 (C e - alpha)``, with ``alpha = -Z[:n, n]``;
    * M: ``W = Diag(s) - (Z[:n,:n] o K) + (lam e^T + e lam^T) / 2``, ``lam = lam_up - lam_lo``;

    and complementary slackness is ``S Z = 0``, ``M W = 0``, ``lam_up o (l e - M e) = 0``,
    ``lam_lo o (l e + M e) = 0``, ``eta o mu = 0``, ``xi o nu = 0``. The dual objective is
    ``2 alpha^T e - e^T s - l e^T (lam_up + lam_lo)`` and equals ``delta`` at the optimum.

    Returns
    -------
    dict of non-negative floats (all near 0 at an accurate solution): ``gap`` (primal minus
    dual objective, relative), ``stationarity_*``, ``compl_*`` (complementary slackness),
    ``dual_feasibility`` (most negative eigenvalue / entry of the duals).
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    d = sol.duals
    e = np.ones(n)
    Z, W, t = d["block"], d["M_psd"], d["diag"]
    lam_up, lam_lo, eta = d["balance_upper"], d["balance_lower"], d["mu"]
    M, l = sol.M, sol.l
    a = -Z[:n, n]
    g = e + sol.mu - (0 if sol.nu is None else sol.nu)
    corner = sol.delta - (0 if sol.nu is None else 2.0 * sol.C * sol.nu.sum())
    S = np.block([[K * M, g[:, None]], [g[None, :], np.array([[corner]])]])
    lam = lam_up - lam_lo
    W_pred = np.diag(t) - Z[:n, :n] * K + (np.outer(lam, e) + np.outer(e, lam)) / 2.0
    rowsum = M @ e
    dual_obj = 2.0 * a.sum() - t.sum() - l * (lam_up.sum() + lam_lo.sum())
    scale = max(1.0, abs(sol.delta))
    out = {
        "gap": float(abs(sol.delta - dual_obj) / scale),
        "stationarity_delta": float(abs(Z[n, n] - 1.0)),
        "stationarity_mu": float(np.max(np.abs(eta - 2.0 * a))),
        "stationarity_M": float(np.max(np.abs(W - W_pred))),
        "compl_block": float(np.linalg.norm(S @ Z)) / scale,
        "compl_M": float(np.linalg.norm(M @ W)) / scale,
        "compl_balance": float(np.max(np.abs(lam_up * (l - rowsum))) + np.max(np.abs(lam_lo * (l + rowsum)))),
        "compl_mu": float(np.max(np.abs(eta * sol.mu))),
        "dual_feasibility": float(
            max(0.0, -np.linalg.eigvalsh(Z)[0], -np.linalg.eigvalsh(W)[0], -lam_up.min(),
                -lam_lo.min(), -eta.min())
        ),
    }
    if sol.nu is not None:
        xi = d["nu"]
        out["stationarity_nu"] = float(np.max(np.abs(xi - 2.0 * (sol.C * e - a))))
        out["compl_nu"] = float(np.max(np.abs(xi * sol.nu)))
        out["dual_feasibility"] = max(out["dual_feasibility"], float(-xi.min()))
    return out


TABLES = {"sdp_mmc_table1": sdp_mmc_table1}
