"""SDP maximum margin clustering (Xu, Neufeld, Larson & Schuurmans, NIPS 2004).

Notation of Valizadegan & Jin (NIPS 2006), Section 2, Eqs. (1)-(2): ``K`` the n x n kernel
matrix, centred in feature space (:func:`mmcedu.kernels.center_kernel`; the relaxation has no
bias term); ``y`` in {-1, +1}^n; ``e`` the all-ones vector; ``o`` the elementwise product;
``alpha`` the SVM dual variables. The SVM dual value in Xu et al.'s scaling (twice Eq. (1))::

    omega(y) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o y y^T) alpha

equals ``||w||^2 + 2 C sum_i xi_i`` at the optimal bias-free soft-margin SVM, so a small
``omega`` is a large margin. Maximum margin clustering minimises ``omega`` over balanced
labelings ``|e^T y| <= l``, ``l = floor(balance n)`` (:func:`mmcedu.balance.max_imbalance`).
The SDP (written out in :class:`SDPMMC`) relaxes ``y y^T`` to ``M`` PSD with ``diag(M) = e``;
``mu, nu`` are the multipliers of ``alpha >= 0`` and ``alpha <= C``, ``delta`` the epigraph
variable; the hard margin (``C = None``) drops ``nu``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.kernel_approximation import Nystroem
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import LabelFreeMixin
from ._box_qp import solve_box_qp
from ._cvxpy import solve_cvxpy
from ._sdp_mmc_lowrank import (
    _factor_omega,
    _factor_rank,
    _unit_rows,
    factor_lower_bound,
    sdp_lower_bound,
    solve_sdp_mmc_factor,
    solve_sdp_mmc_lowrank,
)
from ._validation import (
    all_identical,
    array_bytes,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from .balance import BALANCE_WARN_FRACTION, balanced_sign, max_imbalance
from .exceptions import BalanceWarning, DegenerateDataWarning, SolverWarning
from .kernels import center_kernel, check_kernel_matrix, gamma_grid, kernel_matrix, median_gamma, rbf_kernel

__all__ = ["SDPMMC", "LABEL_FREE_OCTAVES", "svm_dual_objective", "solve_sdp_mmc", "solve_sdp_mmc_lowrank",
           "solve_sdp_mmc_factor", "sdp_lower_bound", "factor_lower_bound", "SDPSolution",
           "eigenvector_rounding", "randomized_rounding", "balance_moves"]

#: Octaves ``j`` of the label-free width grid ``gamma_j = median_gamma(X) * 2**j``
#: (:meth:`SDPMMC.label_free_rule`), dense among the narrow widths that curved clusters need.
LABEL_FREE_OCTAVES = (-2, 0, 2, 4, 5, 6, 7, 8)
_CVXPY_BYTES_PER_ENTRY = 2000  # cvxpy's problem data per entry of an n x n matrix
_LOWRANK_ARRAYS = 16  # n x n float64 arrays counted for solver="lowrank"
_SLOW_CVXPY_N = 300  # above this n, solver="cvxpy" warns that the solve takes minutes
_AUTO_CVXPY_MAX_N = 200  # solver="auto": cvxpy up to this n, lowrank above
_SLOW_LOWRANK_N = 3000  # above this n, solver="lowrank" on the exact kernel warns (tens of minutes)
_FACTOR_BLOCK = 8192  # rows of the Nystroem factor built at once
_AUTO_RANDOMIZED_MAX_N_LOWRANK = 200  # rounding="auto" with solver="lowrank": randomized up to this n
_N_CHANCE_LABELINGS = 5  # random labelings of the chance level of objective_contrast


def svm_dual_objective(K, y, C=1.0, *, return_alpha=False):
    """Exact SVM dual ``omega(y) = max_{0 <= a <= C} 2 a^T e - a^T (K o y y^T) a``.

    Twice the source's Eq. (1), without the bias constraint ``alpha^T y = 0``; the quantity the
    SDP relaxes.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Kernel matrix (the estimator passes the centred one).
    y : array-like of shape (n,)
        Labels in {-1, +1} (any real vector gives ``K o y y^T``; {0, 1} labels are refused).
    C : float or None, default=1.0
        Box bound; ``None`` or ``np.inf`` is the hard margin (``omega`` is then ``inf`` when
        no bias-free separator exists).
    return_alpha : bool, default=False
        Also return the maximiser ``alpha`` (``None`` when ``omega`` is infinite).

    Returns
    -------
    omega : float
    alpha : ndarray of shape (n,) or None, only with ``return_alpha=True``
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    if K.shape != (y.size, y.size):
        raise ValueError(f"K must be ({y.size}, {y.size}) to match y; got {K.shape}.")
    if y.size and np.any(y == 0) and np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y looks like {0, 1} cluster labels; omega(y) needs labels in {-1, +1}: "
                         "pass 2 * y - 1.")
    C = np.inf if C is None else float(C)
    if not C > 0:
        raise ValueError(f"C must be positive (or None for the hard margin); got {C}.")
    G = K * np.outer(y, y)
    G = (G + G.T) / 2.0
    alpha, omega = solve_box_qp(G, C)  # alpha None: unbounded, no hard-margin separator
    # omega * max|G| is invariant to the kernel's scale (hard margin); beyond 1e10 the
    # "separator" is numerically a direction of unboundedness.
    if np.isinf(C) and (alpha is None or omega * max(float(np.max(np.abs(G))), 1e-300) > 1e10):
        alpha, omega = None, np.inf
    return (omega, alpha) if return_alpha else omega


def _svm_dual_lbfgs(G, C):
    """``max_{0 <= a <= C} 2 e^T a - a^T G a`` by L-BFGS-B (the value of
    :meth:`SDPMMC.objective_contrast`; :func:`svm_dual_objective` is the exact solver)."""
    n = G.shape[0]

    def f(a):
        Ga = G @ a
        return float(a @ Ga - 2.0 * a.sum()), 2.0 * Ga - 2.0

    res = minimize(f, np.full(n, min(C, 1.0) / 2), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, C)] * n, options={"maxiter": 5000, "ftol": 1e-12, "gtol": 1e-9})
    return -float(res.fun)


@dataclass
class SDPSolution:
    """Primal and dual solution of :func:`solve_sdp_mmc`.

    ``alpha`` is read from the dual matrix ``Z = [[A, -alpha], [-alpha^T, 1]]`` of the block
    constraint: ``alpha = -Z[:n, n] / Z[n, n]``. ``duals`` holds cvxpy's dual values by
    constraint name, ``info`` the back end's report (``solver``, ``status``, ``n_iter``,
    ``objective``, times).
    """

    M: np.ndarray
    delta: float
    mu: np.ndarray
    nu: np.ndarray | None
    C: float | None
    l: int
    alpha: np.ndarray
    duals: dict = field(repr=False)
    info: dict = field(default_factory=dict)


def solve_sdp_mmc(K, C=1.0, balance=0.1, *, cvxpy_solver=None, solver_options=None, fix_M=None, warn=True):
    """Solve the SDP relaxation (source Eq. (2), written out in :class:`SDPMMC`) with cvxpy.

    Parameters
    ----------
    K : array-like of shape (n, n)
        The kernel, used as given: centre it first (:func:`mmcedu.kernels.center_kernel`).
    C : float or None, default=1.0
        ``None``: hard margin (no ``nu``).
    balance : float, default=0.1
        ``l = floor(balance n)`` bounds ``|M e|`` row-wise.
    cvxpy_solver : str or None, default=None
        cvxpy back end; ``None`` means SCS.
    solver_options : dict or None, default=None
        Keyword arguments of ``cvxpy.Problem.solve``.
    fix_M : array-like of shape (n, n), default=None
        Add the constraint ``M = fix_M``. With ``fix_M = y y^T`` the optimum is exactly
        ``svm_dual_objective(K, y, C)`` (the Schur-complement step of the derivation).
    warn : bool, default=True
        Warn (:class:`~mmcedu.exceptions.SolverWarning`) when the back end stopped early;
        ``False`` leaves it to the caller, which reads ``info["status"]``.

    Returns
    -------
    SDPSolution
        After an early stop (``info["status"]`` ``"optimal_inaccurate"`` or ``"user_limit"``)
        the last iterate, whose ``delta`` is no bound: :func:`sdp_lower_bound`
        gives a certified one.
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}.")
    n = K.shape[0]
    l = max_imbalance(n, balance)
    e = np.ones(n)
    M = cp.Variable((n, n), symmetric=True, name="M")
    mu = cp.Variable(n, name="mu")
    delta = cp.Variable(name="delta")
    nu = None if C is None else cp.Variable(n, name="nu")
    g = e + mu if nu is None else e + mu - nu
    corner = delta if nu is None else delta - 2.0 * C * cp.sum(nu)
    g = cp.reshape(g, (n, 1), order="F")
    block = cp.bmat([[cp.multiply(K, M), g], [g.T, cp.reshape(corner, (1, 1), order="F")]])
    cons = {"block": block >> 0, "M_psd": M >> 0, "diag": cp.diag(M) == 1, "balance_upper": M @ e <= l,
            "balance_lower": M @ e >= -l, "mu": mu >= 0}
    if nu is not None:
        cons["nu"] = nu >= 0
    if fix_M is not None:
        cons["fix_M"] = M == np.asarray(fix_M, dtype=float)
    problem = cp.Problem(cp.Minimize(delta), list(cons.values()))
    info = solve_cvxpy(problem, cvxpy_solver, default="SCS", what="SDP maximum margin clustering relaxation",
                       solver_options=solver_options, accept_user_limit=True, warn=warn)
    Mv = np.asarray(M.value)
    Mv = (Mv + Mv.T) / 2.0
    duals = {k: (None if c.dual_value is None else np.asarray(c.dual_value)) for k, c in cons.items()}
    Z = duals["block"]
    alpha = -Z[:n, n] / Z[n, n] if Z is not None and Z[n, n] > 0 else np.full(n, np.nan)
    return SDPSolution(M=Mv, delta=float(delta.value), mu=np.asarray(mu.value),
                       nu=None if nu is None else np.asarray(nu.value), C=C, l=l, alpha=alpha,
                       duals=duals, info=info)


def _canonical(y):
    """Fix the sign symmetry y ~ -y: the first sample gets +1."""
    y = np.asarray(y, dtype=int)
    return y if y[0] > 0 else -y


def _psd_factor(M):
    """``V`` with ``M = V V^T`` (eigenvalues clipped at 0)."""
    w, U = np.linalg.eigh(np.asarray(M, dtype=float))
    return U * np.sqrt(np.clip(w, 0.0, None))


def balance_moves(M, l):
    """Samples that the bound ``|e^T y| <= l`` moves from ``sign(v)``, ``v`` the leading
    eigenvector of ``M``: ``ceil((|e^T sign(v)| - l) / 2)`` when positive, else 0.

    Returns ``(moved, sizes)``, ``sizes`` the sorted cluster sizes of ``sign(v)``.
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    _, v = eigh(M, subset_by_index=[n - 1, n - 1])
    return _sign_moves(v[:, 0], l)


def _sign_moves(v, l):
    """:func:`balance_moves` for the leading eigenvector ``v``."""
    y = np.where(v >= 0, 1, -1)
    n_pos = int(np.sum(y > 0))
    moved = max(0, int(np.ceil((abs(int(y.sum())) - l) / 2)))
    return moved, sorted([n_pos, y.size - n_pos])


def eigenvector_rounding(M, l):
    """Labels ``balanced_sign(v, l)`` from the leading eigenvector ``v`` of ``M`` (``y`` itself,
    up to sign, for a rank-one ``M = y y^T``)."""
    _, V = np.linalg.eigh(np.asarray(M, dtype=float))
    return _canonical(balanced_sign(V[:, -1], l))


def randomized_rounding(M, K, C, l, *, n_hyperplanes=100, random_state=None):
    """Goemans-Williamson rounding: the balanced labeling with the smallest exact ``omega``.

    With ``M = V V^T`` (eigenvalues clipped at 0), the candidates are
    ``balanced_sign(V r, l)`` for ``n_hyperplanes`` Gaussian directions ``r`` and the
    :func:`eigenvector_rounding` (so never worse than it by ``omega``). Returns ``(y, omega)``,
    ``y`` an int array in {-1, +1}.
    """
    rng = check_random_state(random_state)
    V = _psd_factor(M)
    return _hyperplane_rounding(lambda: V @ rng.standard_normal(V.shape[1]), eigenvector_rounding(M, l),
                                lambda y: svm_dual_objective(K, y, C), l, n_hyperplanes)


def _hyperplane_rounding(draw, first, omega, l, n_hyperplanes):
    """The labeling with the smallest ``omega`` among ``first`` and ``balanced_sign(draw(), l)``."""
    candidates = {tuple(first)}
    for _ in range(n_hyperplanes):
        candidates.add(tuple(_canonical(balanced_sign(draw(), l))))
    best_y, best = None, np.inf
    for cand in sorted(candidates):  # sorted: the result does not depend on set order
        y = np.array(cand)
        if np.all(y == y[0]):
            continue
        value = omega(y)
        if value < best:
            best_y, best = y, value
    if best_y is None:  # every candidate was a single cluster (degenerate M)
        best_y, best = first, omega(first)
    return best_y, float(best)


def _resolve_rounding(rounding, solver, n):
    """The rounding ``SDPMMC`` uses: ``rounding`` itself, or for ``"auto"`` the cheap choice."""
    if rounding != "auto":
        return rounding
    return "randomized" if solver == "cvxpy" or n <= _AUTO_RANDOMIZED_MAX_N_LOWRANK else "eigenvector"


class SDPMMC(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """SDP maximum margin clustering into two clusters (Xu et al. 2004).

    Solves the semidefinite relaxation of ``min_y omega(y)`` (Eq. (2) of [2]_, restating
    [1]_; notation of :mod:`mmcedu.sdp_mmc`)::

        min_{M, delta, mu, nu}  delta
        s.t. [[K o M, e + mu - nu], [(e + mu - nu)^T, delta - 2 C nu^T e]] PSD,
             M PSD, diag(M) = e, -l e <= M e <= l e, mu >= 0, nu >= 0,

    then rounds ``M`` to labels [3]_. The rows ``-l e <= M e <= l e`` are Xu et al.'s form of
    ``|e^T y| <= l`` (for ``M = y y^T``, ``M e = (e^T y) y``). With ``n_components`` the kernel
    is a rank-``m`` factor ``K = Z Z^T`` and nothing n x n is formed (:func:`solve_sdp_mmc_factor`).

    Parameters
    ----------
    C : float or None, default=1.0
        Inverse regularization: the SVM box ``0 <= alpha <= C``; ``None`` is the hard margin.
    balance : float in [0, 1], default=0.1
        Class balance as a fraction of n: the cluster sizes differ by at most ``floor(balance n)``.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        With ``"precomputed"``, ``X`` is the n x n kernel matrix (checked to be PSD).
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``; ``None`` means the median
        heuristic :func:`mmcedu.kernels.median_gamma`. Only for ``kernel="rbf"``.
    center : bool, default=True
        Centre ``K`` in feature space, ``H K H`` with ``H = I - e e^T / n`` (the relaxation
        has no bias; ``False`` only to show why).
    rounding : {"auto", "eigenvector", "randomized"}, default="auto"
        ``"eigenvector"``: :func:`eigenvector_rounding`; ``"randomized"``:
        :func:`randomized_rounding` (never worse by ``omega``); ``"auto"``: randomized where
        it costs under about a CPU second or a tenth of the solve (always with
        ``solver="cvxpy"``, up to n = 200 with ``solver="lowrank"``), else eigenvector.
    n_hyperplanes : int, default=100
        Number of random hyperplanes of the randomized rounding.
    solver : {"auto", "cvxpy", "lowrank"}, default="auto"
        Algorithm for the relaxation: ``"cvxpy"`` solves the SDP with the back end
        ``cvxpy_solver`` (``n (n + 1) / 2`` unknowns: minutes beyond a few hundred samples);
        ``"lowrank"`` factors ``M = V V^T`` and certifies the gap (:func:`solve_sdp_mmc_lowrank`:
        thousands of samples; with ``n_components``, :func:`solve_sdp_mmc_factor`: hundreds of
        thousands; finite ``C`` only). ``"auto"`` chooses by n, as :class:`GMMC`'s default
        does, so that no default fit is an interior-point solve past a few hundred samples:
        ``"cvxpy"`` up to n = 200 and for the hard margin ``C=None`` (which ``"lowrank"`` does not
        solve), ``"lowrank"`` above n = 200 and whenever ``n_components`` is set. It never
        approximates the kernel: on the exact kernel, past the memory budget, ``fit`` raises an
        error that names ``n_components``.
    cvxpy_solver : str or None, default=None
        cvxpy back end; ``None`` means SCS (Clarabel's memory grows like n^4 here).
    solver_options : dict or None, default=None
        Passed to the back end (keyword arguments of ``cvxpy.Problem.solve``), e.g.
        ``{"eps": 1e-6}`` or ``{"max_iters": 10000}`` for SCS; a key the back end does not
        accept raises a ``ValueError`` listing the valid ones.
    n_components : int or None, default=None
        Rank of a kernel approximation. ``None``: the exact n x n kernel. An integer ``m``:
        the centred factor ``K ~ Z Z^T``, ``Z`` n x m (Nystroem
        with ``m`` landmarks for ``"rbf"``, as :func:`mmcedu.kernels.nystroem_factor`; the ``m``
        leading principal directions for ``"linear"``), centred by subtracting its column
        means (``H Z Z^T H = (H Z)(H Z)^T``); memory O(n m), no n x n array. What is certified
        is then the SDP with the kernel ``Z Z^T`` (the relaxation of the approximated problem),
        not the SDP with ``K``: ``objective_``, ``duality_gap_`` and ``labeling_objective_``
        refer to ``Z Z^T``. Not with ``kernel="precomputed"`` or ``solver="cvxpy"``.
    rank : int or None, default=None
        Rank bound of the low-rank solution ``M = V V^T`` (columns of ``V``) with
        ``solver="lowrank"``; ``None`` means ``ceil(sqrt(2 n)) + 1``, a rank at which the SDP
        has an optimal solution, and with ``n_components`` ``min(ceil(sqrt(2 n)) + 1, 10,
        n_components)`` (a rank too small shows as a certified gap that does not close).
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations of ``solver="lowrank"`` (the cvxpy back end's
        limit is set through ``solver_options``).
    tol : float, default=1e-3
        Stop when the certified relative gap of ``solver="lowrank"``,
        ``(upper - lower) / max(|upper|, 1)``, is at most ``tol``.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized rounding and of the start of ``solver="lowrank"``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in {0, 1} (sample 0 is in cluster 0).
    n_clusters_ : int
        Number of clusters in ``labels_`` (2, unless ``balance`` allows a single cluster).
    M_ : ndarray of shape (n_samples, n_samples) or None
        Solution of the relaxation (``y y^T`` when the relaxation is tight); ``None`` with
        ``n_components`` (then ``M = (1 - mix) V V^T + mix I`` with ``V = M_factor_`` and
        ``mix = solver_info_["mix"]``).
    objective_ : float
        A lower bound on ``min_y omega(y)``: the SDP value ``delta`` when the back end solved
        it (status ``"optimal"``), else the certified bound :func:`sdp_lower_bound`;
        ``0 <= objective_ <= labeling_objective_``.
    duality_gap_ : float or None
        ``solver="lowrank"``: the SDP value lies in ``[objective_, objective_ +
        duality_gap_]``; ``None`` with ``solver="cvxpy"``.
    M_factor_ : ndarray of shape (n_samples, rank) or None
        ``V`` with ``M_ = (1 - mix) V V^T + mix I`` (``solver="lowrank"``; ``None`` otherwise).
    labeling_objective_ : float
        Exact ``omega(y)`` of the returned labels.
    dual_coef_ : ndarray of shape (n_samples,)
        The SVM dual variables ``alpha`` of the relaxation.
    kernel_matrix_ : ndarray of shape (n_samples, n_samples) or None
        The (centred) kernel the SDP used; ``None`` with ``n_components``.
    gamma_ : float or None
        The RBF parameter used (``None`` for the linear and precomputed kernels).
    n_iter_ : int or None
        Iterations of the cvxpy back end (``None`` if unreported) or of L-BFGS; 0 without a
        solve (identical samples).
    balance_decided_ : int
        Samples that the balance bound moved from the sign of the leading eigenvector of
        ``M_`` (:func:`balance_moves`), whatever the rounding.
    rounding_ : {"eigenvector", "randomized"} or None
        The rounding used (``None``: identical samples, no rounding).
    solver_info_ : dict
        ``solver`` (the one used), ``status`` and ``n_iter``; from cvxpy the back end's
        ``objective`` and times, from ``solver="lowrank"`` the certificate (``upper``,
        ``lower``, ``gap``, ``rel_gap``, ``converged``, ``history``, ``mix``, ...), with
        ``n_components`` also ``n_components`` and ``newton_steps``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    GMMC : a relaxation with n instead of n^2 unknowns, with a bias term.
    UMCRLS, EMMC : maximum-margin-type clustering into k >= 2 clusters.

    Notes
    -----
    A two-cluster method (``M`` lifts one +-1 labeling), so there is no ``n_clusters``;
    :class:`UMCRLS` and :class:`EMMC` cluster into ``k > 2`` clusters. On real data the
    relaxation is often not tight (``M_`` far from rank one) and the rounding matters; a
    smaller ``omega(y)`` is not necessarily a higher agreement with classes.
    ``fit`` checks :meth:`memory_bytes` against ``mmcedu.get_config()["memory_budget"]``
    before allocating anything n x n (:class:`~mmcedu.exceptions.MemoryBudgetError`, naming
    ``n_components``).

    Label-free rule (:meth:`label_free_rule`): the RBF width over
    ``gamma_grid(X, octaves=LABEL_FREE_OCTAVES)`` (``median_gamma(X) / 4`` to
    ``256 median_gamma(X)``), chosen by ``"transfer_stability"`` alone, which needs no
    objective comparable across widths. Widths whose mean transfer stability is within 0.01 of
    the best are tied, and the tie goes to the widest of them (the next tie-break, the mean
    number of clusters, is 2 at every width). The tolerance is an addition to the sources, chosen
    on ten held-out two-class tasks, where it matched or beat tolerance 0 on every task (one seed
    each); it keeps near-equal widths from being decided by the draw of the subsamples. The
    rule fits every width on ``n_resamples`` subsamples, so :class:`~mmcedu.LabelFreeSearch`
    chooses on samples of at most 500 (not 2,000): 80 fits of
    400 samples per choice sample. :meth:`objective_contrast` is SDP MMC's own objective
    relative to chance.

    Warnings (:mod:`mmcedu.exceptions`): ``SolverWarning`` when the back end stopped early or
    ``solver="lowrank"`` reached ``max_iter`` above ``tol`` (``objective_`` is then the
    certified bound); ``BalanceWarning`` when the bound moved at least
    :data:`mmcedu.balance.BALANCE_WARN_FRACTION` of the samples (e.g. ``SDPMMC()`` on
    standardized iris, 50/100, where ``balance=0.1`` allows at most 68/82);
    ``DegenerateDataWarning`` for identical samples (one cluster, no solve) or a degenerate
    RBF kernel; ``UserWarning`` for ``solver="cvxpy"`` above 300 samples and for the exact
    kernel with ``solver="lowrank"`` above 3,000.

    References
    ----------
    .. [1] L. Xu, J. Neufeld, B. Larson and D. Schuurmans. Maximum margin clustering.
       NIPS 17, 2004.
    .. [2] H. Valizadegan and R. Jin. Generalized maximum margin clustering and unsupervised
       kernel learning. NIPS 19, 2006 (Section 2, Eqs. (1)-(2)).
    .. [3] M. X. Goemans and D. P. Williamson. Improved approximation algorithms for maximum
       cut and satisfiability problems using semidefinite programming. J. ACM 42(6), 1995.

    Examples
    --------
    >>> from mmcedu import SDPMMC, datasets, metrics
    >>> X, y = datasets.two_gaussians(40, distance=6.0, random_state=0)
    >>> model = SDPMMC(gamma=0.1, random_state=0).fit(X)
    >>> float(metrics.clustering_error(y, model.labels_))
    0.0
    >>> bool(model.objective_ <= model.labeling_objective_ + 1e-3)
    True
    """

    _label_free_criterion = ("transfer_stability",)
    _label_free_tolerance = 0.01
    _label_free_max_samples = 500

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "balance": [Interval(Real, 0, 1, closed="both")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "center": ["boolean"],
        "rounding": [StrOptions({"auto", "eigenvector", "randomized"})],
        "n_hyperplanes": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", "cvxpy", "lowrank"})],
        "cvxpy_solver": [str, None],
        "solver_options": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, C=1.0, balance=0.1, kernel="rbf", gamma=None, center=True, rounding="auto",
                 n_hyperplanes=100, solver="auto", cvxpy_solver=None, solver_options=None, n_components=None,
                 rank=None, max_iter=1000, tol=1e-3, random_state=None):
        self.C = C
        self.balance = balance
        self.kernel = kernel
        self.gamma = gamma
        self.center = center
        self.rounding = rounding
        self.n_hyperplanes = n_hyperplanes
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.solver_options = solver_options
        self.n_components = n_components
        self.rank = rank
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once (an int).

        The solver is the one ``fit`` uses at ``n_samples`` (``"auto"`` resolved).
        ``solver="cvxpy"``: ``2000 n^2``, cvxpy's problem data for the ``n (n + 1) / 2``
        unknowns in ``M`` (0.7 GB at n = 600). ``solver="lowrank"``: sixteen n x n float64
        arrays, ``128 n^2`` (1.2 GB at n = 3000): six live ones (the kernel, ``K o V V^T``,
        ``V V^T``, the certificate's matrix...) and as much again for temporaries and LAPACK's
        workspace. ``n_components = m`` (rank ``r``): ``8 (1.1 n (m + 2) + 24 n r + 40 n +
        5 (m r)^2 + 4096 m r + 24576 (m + 2))``, linear in n: the factor ``Z`` and the coarse
        start's tenth of it, the n x r and n-vectors of the solver, its Newton systems of order
        at most ``m r`` and the certificate's blocks of rows. ``n_features`` does not enter.
        """
        n = int(n_samples)
        if self.n_components is not None:
            m = min(int(self.n_components), n)
            r = _factor_rank(n, m, self.rank)
            return 8 * (11 * n * (m + 2) // 10 + 24 * n * r + 40 * n + 5 * (m * r) ** 2 + 4096 * m * r
                        + 24576 * (m + 2))
        if self._resolved_solver(n) == "lowrank":
            return array_bytes((_LOWRANK_ARRAYS, n, n))
        return _CVXPY_BYTES_PER_ENTRY * n * n

    def _resolved_solver(self, n):
        """The solver ``fit`` uses at ``n`` samples: ``solver``, or for ``"auto"`` the rule."""
        if self.solver != "auto":
            return self.solver
        if self.n_components is None and (n <= _AUTO_CVXPY_MAX_N or self.C is None):
            return "cvxpy"
        return "lowrank"

    def _label_free_grid(self, X):
        return {"gamma": gamma_grid(X, octaves=LABEL_FREE_OCTAVES)}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        ``1 - omega(y) / E_sigma omega(sigma(y))``, with ``y`` the +-1 form of ``labels_``
        (cluster 0 is +1) and ``omega(y) = max_{0 <= a <= C} 2 a^T e - a^T (K o y y^T) a``
        (small ``omega`` = large margin) on the kernel of ``X`` with the fitted width, centred
        in feature space when ``center``. The chance level is the mean of ``omega`` over five
        random permutations ``sigma`` of ``y`` (same cluster sizes), drawn by ``random_state``:
        ``omega`` is a maximum, not a quadratic form in ``y``, so there is no closed form. A
        ratio, because raw ``omega`` values are not comparable across kernel widths. ``omega``
        is evaluated by L-BFGS-B on the box (with ``n_components``: on the kernel ``Z Z^T`` of
        the fitted factor map, by Newton's method in the primal). ``X`` is the data the estimator was
        fitted on (the kernel matrix with ``kernel="precomputed"``).

        Returns a float: NaN for the hard margin ``C=None`` (a random labeling's value is
        infinite), for fewer than two clusters, or when the chance level is not positive.
        """
        check_is_fitted(self)
        if self.C is None or self.n_clusters_ != 2:
            return np.nan
        if self.n_components is not None:
            Z = self._kernel_factor(np.asarray(X, dtype=float))
            omega = lambda y: _factor_omega(Z, y, self.C)  # noqa: E731
        else:
            K = self._raw_kernel(X)
            if self.center:
                K = K - K.mean(axis=0)[None, :] - K.mean(axis=1)[:, None] + K.mean()
            omega = lambda y: _svm_dual_lbfgs(K * np.outer(y, y), self.C)  # noqa: E731
        y = np.where(self.labels_ == 0, 1.0, -1.0)
        rng = check_random_state(random_state)
        value = omega(y)
        chance = np.mean([omega(ys) for ys in (rng.permutation(y) for _ in range(_N_CHANCE_LABELINGS))])
        if not chance > 0:
            return np.nan
        return float(1.0 - value / chance)

    def _raw_kernel(self, X):
        """The uncentred kernel of ``X`` with the fitted width (``X`` for "precomputed")."""
        if self.kernel == "precomputed":
            return np.asarray(X, dtype=float)
        return kernel_matrix(np.asarray(X, dtype=float), self.kernel, self.gamma_)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Solve the SDP relaxation on ``X`` (n_samples x n_features, or the n x n kernel with
        ``kernel="precomputed"``) and round ``M`` to two clusters; ``y`` is ignored."""
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n = X.shape[0]
        check_n_clusters(n, 2)
        rng = check_random_state(self.random_state)
        solver = self._resolved_solver(n)
        self._check_memory(n, solver)
        if self.n_components is not None:
            return self._fit_factor(X, rng)
        K, identical = self._centred_kernel(X)
        if identical:
            return self._fit_identical(n, svm_dual_objective(K, np.ones(n), self.C), K)
        l = max_imbalance(n, self.balance)
        if solver == "lowrank":
            M, alpha, info, objective = self._solve_lowrank(K, l, rng)
        else:
            M, alpha, info, objective = self._solve_cvxpy(K, l)
        self.rounding_ = _resolve_rounding(self.rounding, solver, n)
        if self.rounding_ == "eigenvector":
            y_pm = eigenvector_rounding(M, l)
            omega = svm_dual_objective(K, y_pm, self.C)
        else:
            y_pm, omega = randomized_rounding(M, K, self.C, l, n_hyperplanes=self.n_hyperplanes,
                                              random_state=rng)
        self.M_, self.kernel_matrix_ = M, K
        return self._set_result(y_pm, omega, objective, alpha, info, l, balance_moves(M, l))

    def _set_result(self, y_pm, omega, objective, alpha, info, l, moves):
        """The fitted attributes from the rounded labels ``y_pm`` and the solve."""
        self.labels_ = (y_pm < 0).astype(int)
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self._check_balance_decided(l, moves)
        self.objective_ = float(objective)
        self.labeling_objective_ = float(omega)
        self.dual_coef_ = alpha
        self.solver_info_ = info
        self.n_iter_ = info.get("n_iter")
        return self

    def _check_memory(self, n, solver):
        """:meth:`memory_bytes` against the memory budget, before anything is allocated."""
        factor = ("Pass n_components=200 (a Nystroem kernel factor: memory O(n n_components), no n x n "
                  "array), or fit a subsample.")
        if self.n_components is not None:
            if self.kernel == "precomputed" or solver == "cvxpy" or self.C is None:
                raise ValueError(f"n_components={self.n_components} (the kernel factor Z Z^T) needs the "
                                 "samples (kernel 'rbf' or 'linear'), solver 'auto' or 'lowrank' and a "
                                 f"finite C; got kernel={self.kernel!r}, solver={self.solver!r}, "
                                 f"C={self.C!r}. Set n_components=None for the exact kernel.")
            what = (f"SDPMMC(n_components={self.n_components}) for n = {n:,} (the n x n_components factor "
                    "and the solver's n x rank arrays)")
            check_memory(self.memory_bytes(n), what=what,
                         alternative="Lower n_components, or fit a subsample.")
            return
        what = f"SDPMMC(solver={solver!r}) for n = {n:,} ({n * (n + 1) // 2:,} unknowns in M)"
        lowrank = "Use solver='lowrank' (about 128 n^2 bytes), or " if solver == "cvxpy" else ""
        check_memory(self.memory_bytes(n), what=what, alternative=lowrank + factor)

    def _centred_kernel(self, X):
        """The symmetric (centred) kernel of ``X`` and whether all samples are identical."""
        self.gamma_ = None
        if self.kernel == "precomputed":
            K = check_kernel_matrix(X, psd=True)
            identical = False
        else:
            X, identical = self._checked_samples(X)
            K = self._raw_kernel(X)
            check_finite_result(K, what=f"The {self.kernel} kernel matrix", hint="the squared distances / "
                                "inner products overflow float64; standardize X.")
            if self.kernel == "rbf" and not identical:
                warn_degenerate_kernel(K, self.gamma_, who="SDPMMC", stacklevel=4)
        if self.center:
            K = center_kernel(K)
        K = (K + K.T) / 2.0
        if self.kernel == "precomputed" and self.center:
            identical = float(np.max(np.abs(K))) <= 1e-12 * max(1.0, float(np.max(np.abs(X))))
        return K, identical

    def _checked_samples(self, X):
        """``X`` in float64 and whether its samples are all identical; sets ``gamma_``."""
        X = X.astype(np.float64)
        identical = all_identical(X)
        if not identical:
            check_scale(X)
        if self.kernel == "rbf":
            self.gamma_ = float(self.gamma) if self.gamma is not None else (
                1.0 if identical else median_gamma(X))
        return X, identical

    def _kernel_factor(self, X, rng=None):
        """The centred factor ``Z`` (n x m) with ``Z Z^T ~`` the kernel of ``X``, built in row blocks;
        with ``rng`` the map (Nystroem landmarks, principal directions) is fitted first."""
        n, m = X.shape[0], min(int(self.n_components), X.shape[0])
        if rng is not None and self.kernel == "rbf":
            self._factor_map = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=m,
                                        random_state=rng).fit(X)
        elif rng is not None:
            self._factor_map = None if m >= X.shape[1] else np.linalg.svd(
                X - X.mean(axis=0), full_matrices=False)[2][:m].T
        Z = np.empty((n, m if self.kernel == "rbf" or self._factor_map is not None else X.shape[1]))
        for lo in range(0, n, _FACTOR_BLOCK):
            rows = slice(lo, lo + _FACTOR_BLOCK)
            if self.kernel == "rbf":
                Z[rows] = self._factor_map.transform(X[rows])
            else:
                Z[rows] = X[rows] if self._factor_map is None else X[rows] @ self._factor_map
        Z -= Z.mean(axis=0)
        check_finite_result(Z, what="The kernel factor", hint="standardize X.")
        return Z

    def _fit_factor(self, X, rng):
        """``n_components``: the SDP for the centred factor ``Z Z^T ~ K``, nothing n x n."""
        n = X.shape[0]
        self.gamma_ = None
        X, identical = self._checked_samples(X)
        if self.kernel == "rbf" and not identical:  # the width test on at most 500 samples
            sub = X if n <= 500 else X[np.sort(check_random_state(0).choice(n, 500, replace=False))]
            warn_degenerate_kernel(rbf_kernel(sub, gamma=self.gamma_), self.gamma_, who="SDPMMC",
                                   stacklevel=4)
        if identical:
            return self._fit_identical(n, 2.0 * n * float(self.C))
        Z = self._kernel_factor(X, rng)
        l = max_imbalance(n, self.balance)
        V, info = solve_sdp_mmc_factor(Z, self.C, self.balance, rank=self.rank, max_iter=self.max_iter,
                                       tol=self.tol, random_state=rng)
        alpha, lower = self._lowrank_result(V, info)
        del info["T"], info["U"]
        info.update(n_components=Z.shape[1])
        lead = np.linalg.svd(V, full_matrices=False)[0][:, 0]  # the leading eigenvector of M
        first = _canonical(balanced_sign(lead, l))
        omega = lambda y: _factor_omega(Z, y, self.C)  # noqa: E731
        self.rounding_ = _resolve_rounding(self.rounding, "lowrank", n)
        if self.rounding_ == "eigenvector":
            y_pm, value = first, omega(first)
        else:  # Gaussian hyperplanes for M = (1 - mix) V V^T + mix I
            a, b = np.sqrt(1.0 - info["mix"]), np.sqrt(info["mix"])
            y_pm, value = _hyperplane_rounding(
                lambda: a * (V @ rng.standard_normal(V.shape[1])) + b * rng.standard_normal(n), first, omega,
                l, self.n_hyperplanes)
        self.M_ = self.kernel_matrix_ = None
        return self._set_result(y_pm, value, lower, alpha, info, l, _sign_moves(lead, l))

    def _lowrank_result(self, V, info):
        """``duality_gap_``, ``M_factor_``, the warning of an unconverged ``solver="lowrank"``, and
        ``(alpha, certified lower bound)``."""
        lower = max(0.0, info["lower"])
        self.duality_gap_ = float(info["upper"] - lower)
        self.M_factor_ = V
        if not info["converged"]:
            warnings.warn(f"SDPMMC(solver='lowrank') stopped after {info['n_iter']} iterations "
                          f"(max_iter={self.max_iter}) with certified relative gap {info['rel_gap']:.3g} > "
                          f"tol={self.tol:g} (SDP value in [{lower:.6g}, {info['upper']:.6g}]): M_ is not "
                          "optimal. Increase max_iter or tol.", SolverWarning, stacklevel=4)
        info.update(solver="lowrank", status="optimal" if info["converged"] else "max_iter")
        return info.pop("alpha"), lower

    def _solve_lowrank(self, K, l, rng):
        """``solver="lowrank"``: ``(M, alpha, info, certified lower bound)``, with its warning."""
        n = K.shape[0]
        if n > _SLOW_LOWRANK_N:
            warnings.warn(f"SDPMMC(solver='lowrank') on the exact kernel for n_samples={n}: each "
                          "certificate is an eigenvalue of an n x n matrix, O(n^3); the fit takes tens of "
                          "minutes or more. Pass n_components=200 (a Nystroem kernel factor, time and memory "
                          "linear in n).",
                          UserWarning, stacklevel=3)
        V, info = solve_sdp_mmc_lowrank(K, self.C, self.balance, rank=self.rank, max_iter=self.max_iter,
                                        tol=self.tol, random_state=rng)
        M = (1.0 - info["mix"]) * (V @ V.T)
        M[np.diag_indices(n)] += info["mix"]
        alpha, lower = self._lowrank_result(V, info)
        return M, alpha, info, lower

    def _solve_cvxpy(self, K, l):
        """``solver="cvxpy"``: ``(M, alpha, info, delta or a certified lower bound)``."""
        n = K.shape[0]
        self.M_factor_ = self.duality_gap_ = None
        if n > _SLOW_CVXPY_N:
            warnings.warn(f"SDPMMC(solver='cvxpy'): the SDP has n(n+1)/2 = {n * (n + 1) // 2:,} unknowns "
                          f"for n_samples={n}; the cvxpy back end takes minutes to hours (and about "
                          f"{format_bytes(self.memory_bytes(n))}). Use solver='lowrank' or fewer samples.",
                          UserWarning, stacklevel=3)
        sol = solve_sdp_mmc(K, self.C, self.balance, cvxpy_solver=self.cvxpy_solver,
                            solver_options=self.solver_options, warn=False)
        objective = sol.delta
        if sol.info["status"] != "optimal":
            objective = self._certify_early_stop(K, sol, l)
        return sol.M, sol.alpha, sol.info, objective

    def _certify_early_stop(self, K, sol, l):
        """Certified lower bound when the cvxpy back end stopped early, with the warning."""
        st, d = sol.info, sol.duals
        alpha = np.clip(np.nan_to_num(sol.alpha, nan=0.0), 0.0, np.inf if self.C is None else float(self.C))
        V, _ = _unit_rows(_psd_factor(sol.M))
        lam = None
        if d.get("balance_upper") is not None and d.get("balance_lower") is not None:
            lam = np.nan_to_num(d["balance_upper"] - d["balance_lower"])
        lower = max(0.0, sdp_lower_bound(K, alpha, l, V=V, lam=lam)[0])
        if lam is not None:  # the bound holds for any lam: keep the better of the two
            lower = max(lower, sdp_lower_bound(K, alpha, l, V=V)[0])
        limit = "max_iters" if st["solver"].upper() == "SCS" else "max_iter"
        warnings.warn(f"SDPMMC: the cvxpy back end {st['solver']} stopped early (status '{st['status']}' "
                      f"after {st['n_iter']} iterations); its value delta = {sol.delta:.6g} is not the SDP "
                      f"value and not a lower bound. objective_ is the certified lower bound {lower:.6g} "
                      f"instead (n = {K.shape[0]}); the labels come from an unconverged M. Allow more "
                      f"iterations (solver_options={{{limit!r}: ...}}) or try solver='lowrank'.",
                      SolverWarning, stacklevel=4)
        return lower

    def _check_balance_decided(self, l, moves):
        """``balance_decided_`` from ``moves = balance_moves(M, l)``, with a :class:`BalanceWarning`
        when the bound decided the split."""
        n = self.labels_.size
        self.balance_decided_, free_sizes = moves
        if self.balance_decided_ < BALANCE_WARN_FRACTION * n:
            return
        sizes = sorted(np.bincount(self.labels_, minlength=2).tolist())
        warnings.warn(f"SDPMMC: the balance bound |N+ - N-| <= floor(balance n) = {l} (balance="
                      f"{self.balance:g}) decided the split: the leading eigenvector of M_ points to "
                      f"clusters of sizes {free_sizes}, and meeting the bound moves "
                      f"{self.balance_decided_} of {n} samples from that sign (the returned clusters, "
                      f"{self.rounding_} rounding, have sizes {sizes}). If the clusters may differ in "
                      "size, raise balance (balance=0.5 allows sizes 1:3; 1.0 removes the bound) or choose "
                      "it without labels: LabelFreeSearch(SDPMMC(), {'balance': [0.1, 0.3, 0.5]}, "
                      "criterion='transfer_stability').fit(X) (mmcedu.model_selection).",
                      BalanceWarning, stacklevel=3)

    def _fit_identical(self, n, omega, K=None):
        """All samples identical: one cluster, no solve (``omega``: that of the single cluster)."""
        warnings.warn(f"SDPMMC: all {n} samples are identical (for the kernel): there is no cluster "
                      "structure and every split has the same objective; every sample is put in cluster 0 "
                      "(n_clusters_=1).", DegenerateDataWarning, stacklevel=3)
        self.labels_ = np.zeros(n, dtype=int)
        self.n_clusters_ = 1
        self.M_ = None if K is None else np.ones((n, n))
        self.M_factor_ = self.duality_gap_ = self.rounding_ = None
        self.objective_ = self.labeling_objective_ = float(omega)
        self.dual_coef_ = np.full(n, np.inf if self.C is None else float(self.C))
        self.kernel_matrix_ = K
        self.solver_info_ = {"solver": None, "status": "identical samples", "n_iter": 0}
        self.n_iter_ = self.balance_decided_ = 0
        return self
