"""Robust ensemble clustering: a low-rank fit of the stacked cluster indicators with an l_{1,2} loss.

The source (a draft, *Maximum margin matrix factorization for ensemble clustering*;
``mmmf_ensemble`` in the book's bibliography) stacks the cluster indicators of ``M`` base
clusterings into ``L`` and fits a rank-``k`` matrix ``X`` under the column-wise loss
``||L - X||_{1,2}``: a base cluster that does not fit the common structure gets a non-zero
column of ``E = L - X``, its anomaly score. :class:`RobustEnsembleClustering` states the problem
and the ALM that solves it; the base clusterings are given, or built from the data by k-means.

Stationarity of the end point
-----------------------------
At a point with ``rank X = k``, ``X = U S V^T``, the first-order conditions of
``min ||E||_{1,2} s.t. E = L - X, rank X <= k`` are (i) ``L = X + E``, (ii)
``Lambda in d||E||_{1,2}`` and (iii) ``P_T(Lambda) = 0``, with ``T`` the tangent space of the
rank-k matrices at ``X`` and ``P_T(Z) = U U^T Z + Z V V^T - U U^T Z V V^T``. The E step gives
(ii) exactly at every iteration, and then (i) up to ``||L - X - E||_F <= 2 sqrt(c) / mu``
whatever the X iterates are (``c`` columns, each column of ``Lambda`` of norm at most 1), so the
primal residual alone proves nothing. The X step gives
``P_T(Lambda^{t+1}) = mu_t P_T(E^t - E^{t+1})``: the *tangent residual* ``||P_T(Lambda)||_F``
(at most the *dual residual* ``mu_t ||E^{t+1} - E^t||_F``) is the informative one, and the
estimator stops only when it is small too.

At scale: the ALM on a c x c compression of L
----------------------------------------------
With ``L = U Sigma V^T`` (``U``: N x c orthonormal columns) and ``G = L^T L = V Sigma^2 V^T``,
every step of the ALM commutes with a left multiplication by ``U``: the X step
(``best_rank_k(U B) = U best_rank_k(B)``, as ``(U B)^T (U B) = B^T B``), the column shrinkage
(column norms are invariant), the multiplier update (linear) and every residual above
(``||U B||_F = ||B||_F``, ``P_T`` likewise). Starting from ``E = Lambda = 0`` every iterate is
``U`` times the iterate of the same ALM run on ``L_hat = Sigma V^T`` (c x c): the same
iterations, residuals and anomaly scores, at ``O(c^3)`` per iteration and ``O(c^2)`` memory
instead of several N x c arrays. ``G`` (the contingency tables of all pairs of base
partitions), the embedding ``U F_hat = L (V Sigma^+ F_hat)`` and any row of ``X``, ``E`` or
``Lambda`` are computed from the label codes (sample i is in column ``codes[i, m]`` of
block m). The entry-wise l_1 loss has no such path: soft thresholding is not invariant under
rotations of the rows.

The module also holds the ALM's mathematics (the two proximal operators, the best rank-k
approximation, the tangent residual); generating base clusterings and the consensus baselines
live in :mod:`mmcedu.partitions`.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _robust_ensemble_codes as _label_codes
from ._base import LabelFreeMixin
from ._validation import check_memory, check_n_clusters, format_bytes
from .exceptions import ClusterCountWarning, DegenerateDataWarning
from .partitions import base_partitions, check_partitions

__all__ = [
    "RobustEnsembleClustering",
    "column_shrinkage",
    "soft_threshold",
    "best_rank_k",
    "l12_norm",
    "robust_low_rank",
    "tangent_residual",
]

#: Default growth factor of the ALM's penalty (see the ``rho`` parameter of the estimator).
DEFAULT_RHO = 1.01
#: Default tolerance of the relative tangent (stationarity) residual.
DEFAULT_KKT_TOL = 1e-4
#: The ALM stops as "stalled" when its primal residual is below ``tol`` but its tangent
#: residual has not halved for this many iterations (the growing penalty froze the iterates).
STALL_PATIENCE = 20
#: ... or when the penalty has grown by this factor (``rho**t``): the iterates no longer move.
MAX_MU_GROWTH = 1e10
#: The label-free grid of ``base_k``: ``n_clusters`` plus these offsets.
BASE_K_OFFSETS = tuple(range(8))
# The parameters of the ALM, shared by the estimator and robust_low_rank.
_ALM_CONSTRAINTS = {
    "loss": [StrOptions({"l12", "fro", "l1"})],
    "mu": [Interval(numbers.Real, 0, np.inf, closed="neither"), None],
    "rho": [Interval(numbers.Real, 1, np.inf, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "kkt_tol": [Interval(numbers.Real, 0, None, closed="both")],
}


# ---------------------------------------------------------------------------------------------
# The two steps of the ALM
# ---------------------------------------------------------------------------------------------
def _check_threshold(alpha):
    if not (isinstance(alpha, numbers.Real) and np.isfinite(alpha) and alpha >= 0):
        raise ValueError(
            f"alpha (the shrinkage threshold) must be a finite number >= 0; got {alpha!r}. "
            "A negative threshold would grow the columns instead of shrinking them."
        )


def column_shrinkage(Y, alpha):
    """Proximal operator of ``alpha * ||.||_{1,2}`` (column-wise shrinkage, eq. (12)).

    Solves ``min_E alpha * sum_j ||E_{:, j}||_2 + 1/2 ||E - Y||_F^2``: each column is shrunk
    towards zero by ``alpha`` in Euclidean length, and set to zero when shorter than
    ``alpha``: ``E_j = max(0, 1 - alpha / ||Y_j||_2) Y_j``. ``alpha >= 0``.
    """
    _check_threshold(alpha)
    Y = np.asarray(Y, dtype=float)
    norms = np.linalg.norm(Y, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > alpha, 1.0 - alpha / norms, 0.0)
    return Y * scale[None, :]


def soft_threshold(Y, alpha):
    """Proximal operator of ``alpha * ||.||_1`` (entry-wise soft thresholding), ``alpha >= 0``."""
    _check_threshold(alpha)
    Y = np.asarray(Y, dtype=float)
    return np.sign(Y) * np.maximum(np.abs(Y) - alpha, 0.0)


def _check_rank(k, shape, name="k"):
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= min(shape):
        raise ValueError(
            f"{name} (the rank) must be an integer from 1 to min{tuple(shape)} = {min(shape)}; "
            f"got {k!r}."
        )


def _rank_k(A, k):
    """``(X, F, V_k)``: the best rank-k approximation ``X = F V_k^T`` of ``A``, its factor
    ``F = A V_k = U_k S_k`` and the top ``k`` right singular vectors ``V_k`` (c x k)."""
    n, c = A.shape
    if c <= n:  # the top k eigenvectors of the c x c Gram matrix (LAPACK's syevr on a subset)
        _, V = scipy.linalg.eigh(A.T @ A, subset_by_index=[c - k, c - 1], driver="evr")
        Vk = V[:, ::-1]
        F = A @ Vk
        return F @ Vk.T, F, Vk
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    F = U[:, :k] * s[:k]
    return U[:, :k] @ (U[:, :k].T @ A), F, Vt[:k].T


def best_rank_k(A, k):
    """Best rank-``k`` approximation of ``A`` in Frobenius norm (Eckart-Young).

    Returns ``(X, F)`` with ``X = A V_k V_k^T`` and the factor ``F = A V_k = U_k S_k``
    (``n_samples x k``; its rows have the pairwise distances of the rows of ``X``), ``V_k``
    the top ``k`` right singular vectors of ``A``, taken from the eigendecomposition of the
    small Gram matrix ``A^T A`` when ``A`` is tall (cheaper than an SVD, but singular values
    below ``1e-8 ||A||_2`` are not resolved). ``1 <= k <= min(A.shape)``.
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"A must be a 2-D array; got {A.ndim}-D.")
    _check_rank(k, A.shape)
    X, F, _ = _rank_k(A, k)
    return X, F


def l12_norm(E):
    """``||E||_{1,2} = sum_j ||E_{:, j}||_2``: the sum of the Euclidean norms of the columns."""
    return float(np.linalg.norm(np.asarray(E, dtype=float), axis=0).sum())


def _tangent_norm(Z, F, Vk):
    """``||P_T(Z)||_F`` for the tangent space ``T`` at ``X = F V_k^T`` (``F = U_k S_k``).

    ``P_T(Z) = U U^T Z + (I - U U^T) Z V V^T`` is a sum of two orthogonal parts, so
    ``||P_T(Z)||^2 = ||U^T Z||^2 + ||Z V||^2 - ||U^T Z V||^2``. Columns of ``F`` of
    (numerically) zero length are left out (then ``rank X < k``).
    """
    s = np.linalg.norm(F, axis=0)
    keep = s > 1e-12 * max(float(s.max(initial=0.0)), 1e-300)
    U, V = F[:, keep] / s[keep], Vk[:, keep]
    UZ = U.T @ Z
    value = np.linalg.norm(UZ) ** 2 + np.linalg.norm(Z @ V) ** 2 - np.linalg.norm(UZ @ V) ** 2
    return float(np.sqrt(max(value, 0.0)))


def tangent_residual(L, X, Lam, rank):
    """Relative tangent (stationarity) residual ``||P_T(Lambda)||_F / max(||Lambda||_F, 1)``.

    ``T`` is the tangent space of the rank-``rank`` matrices at ``X``; ``Lambda`` the
    multipliers (``multipliers_`` of a fitted :class:`RobustEnsembleClustering`). Zero at a
    first-order stationary point of the rank-constrained problem. The scale
    ``max(||Lambda||_F, 1)`` is ``||Lambda||_F`` as soon as one column of ``E`` is non-zero
    (its column of ``Lambda`` has norm 1). ``L`` is only used for its shape.
    """
    X = _check_matrix(X, "X")
    Lam = _check_matrix(Lam, "Lam")
    if X.shape != Lam.shape or np.shape(L) != X.shape:
        raise ValueError(f"L, X and Lam must have one shape; got {np.shape(L)}, {X.shape}, {Lam.shape}.")
    _check_rank(rank, X.shape, "rank")
    _, F, Vk = _rank_k(X, rank)
    return _tangent_norm(Lam, F, Vk) / max(float(np.linalg.norm(Lam)), 1.0)


_PROX = {"l12": column_shrinkage, "l1": soft_threshold}


def _alm(L, k, loss, mu, rho, max_iter, tol, kkt_tol):
    """Inexact ALM for ``min ||E|| s.t. E = L - X, rank(X) <= k`` (Algorithm 1, corrected).

    Returns a dict: ``X, F, Vk, E, Lam`` (the last iterates), ``n_iter``, ``primal``,
    ``tangent``, ``dual`` (relative residuals after each iteration: ``||L - X - E||_F /
    ||L||_F``, ``||P_T(Lambda)||_F / s`` and ``mu_t ||E^{t+1} - E^t||_F / s`` with
    ``s = max(||Lambda||_F, 1)``), ``mu`` (the last penalty used) and ``status``:
    ``"converged"`` (primal < tol and tangent < kkt_tol), ``"stalled"`` (primal < tol, but
    the tangent residual has not halved in ``STALL_PATIENCE`` iterations), ``"frozen"`` (the
    penalty grew by ``MAX_MU_GROWTH``) or ``"max_iter"``.
    """
    prox = _PROX[loss]
    norm_L = max(float(np.linalg.norm(L)), 1e-300)
    E = np.zeros_like(L)
    Lam = np.zeros_like(L)  # Lambda: N x sum_m k_m, the shape of L (erratum: not MK x N)
    mu0 = mu
    primal, tangent, dual = [], [], []
    best, t_best = np.inf, 0
    status = "max_iter"
    for t in range(1, max_iter + 1):
        # Step numbers as in the book's corrected Algorithm 1.
        X, F, Vk = _rank_k(L - E + Lam / mu, k)  # step 2: problem (9)
        E_new = prox(L - X + Lam / mu, 1.0 / mu)  # step 3: problem (11)-(12), threshold 1/mu
        R = L - X - E_new
        Lam = Lam + mu * R  # step 4: multiplier update with X^(t+1), E^(t+1)
        step = float(np.linalg.norm(E_new - E))
        E = E_new
        scale = max(float(np.linalg.norm(Lam)), 1.0)
        primal.append(float(np.linalg.norm(R)) / norm_L)
        tangent.append(_tangent_norm(Lam, F, Vk) / scale)
        dual.append(mu * step / scale)
        if tangent[-1] < 0.5 * best:
            best, t_best = tangent[-1], t
        if primal[-1] < tol and tangent[-1] < kkt_tol:
            status = "converged"
            break
        if primal[-1] < tol and t - t_best >= STALL_PATIENCE:
            status = "stalled"
            break
        if mu >= MAX_MU_GROWTH * mu0:
            status = "frozen"
            break
        mu = rho * mu  # step 5
    return {
        "X": X, "F": F, "Vk": Vk, "E": E, "Lam": Lam, "n_iter": t, "mu": mu,
        "primal": np.array(primal), "tangent": np.array(tangent), "dual": np.array(dual),
        "status": status,
    }


def _convergence_message(fit, tol, kkt_tol, rho, max_iter):
    where = (
        f"relative primal residual ||L - X - E||/||L|| = {fit['primal'][-1]:.2e} (tol={tol:g}), "
        f"relative tangent (stationarity) residual ||P_T(Lambda)||/||Lambda|| = "
        f"{fit['tangent'][-1]:.2e} (kkt_tol={kkt_tol:g})"
    )
    if fit["status"] == "max_iter":
        return (f"The ALM stopped after max_iter={max_iter} iterations without converging: "
                f"{where}. Increase max_iter, or loosen tol / kkt_tol.")
    head = (f"stalled at a point that is feasible but not stationary (the tangent residual has "
            f"not halved in {STALL_PATIENCE} iterations)" if fit["status"] == "stalled"
            else f"stopped because mu grew by {MAX_MU_GROWTH:.0e}")
    return (
        f"The ALM {head} after {fit['n_iter']} iterations: {where}; the penalty mu, multiplied "
        "by rho at every iteration, has grown so large that the iterates no longer move. Use a "
        f"rho closer to 1 (rho={rho:g} now; e.g. rho={1 + (rho - 1) / 4:.4g}), or loosen kkt_tol."
    )


def _check_matrix(L, name="L"):
    L = np.asarray(L, dtype=float)
    if L.ndim != 2 or min(L.shape) < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array; got shape {L.shape}.")
    if not np.all(np.isfinite(L)):
        raise ValueError(f"{name} contains NaN or infinity; the low-rank fit needs finite entries.")
    return L


def _reject_booleans(**params):
    for name, value in params.items():
        if isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be an integer, not a boolean; got {name}={value!r}.")


def _solve(L, k, loss, mu, rho, max_iter, tol, kkt_tol, sigma_max=None):
    """The rank-k fit of ``L``: problem (1) in closed form (``loss="fro"``) or the ALM, as the
    dict of :func:`_alm`; ``mu=None``: ``1.25 / sigma_max`` (default ``||L||_2``)."""
    if loss == "fro":
        X, F, Vk = _rank_k(L, k)
        E = L - X
        scale = max(float(np.linalg.norm(E)), 1.0)
        return {
            "X": X, "F": F, "Vk": Vk, "E": E, "Lam": E, "n_iter": 1, "mu": None,
            "primal": np.zeros(1), "tangent": np.array([_tangent_norm(E, F, Vk) / scale]),
            "dual": np.zeros(1), "status": "converged",
        }
    if mu is None:
        sigma_max = float(np.linalg.norm(L, 2)) if sigma_max is None else sigma_max
        mu = 1.25 / max(sigma_max, 1e-300)
    return _alm(L, k, loss, mu, rho, max_iter, tol, kkt_tol)


@validate_params({"L": ["array-like"], "rank": [Interval(numbers.Integral, 1, None, closed="left")],
                  **_ALM_CONSTRAINTS}, prefer_skip_nested_validation=True)
def robust_low_rank(L, rank, *, loss="l12", mu=None, rho=DEFAULT_RHO, max_iter=500, tol=1e-7,
                    kkt_tol=DEFAULT_KKT_TOL):
    """The matrix part of :class:`RobustEnsembleClustering` on any real matrix ``L``.

    Useful when ``L`` holds scores rather than 0/1 indicators (late fusion of classifier
    scores). Returns ``(X, F, E, n_iter, residuals)`` with ``X`` of rank ``rank``, its
    factor ``F = U_k S_k``, ``E = L - X`` (up to ``tol``) and the relative primal residual
    of each iteration; parameters as in the estimator. Emits a ``ConvergenceWarning`` when
    the ALM ends without both residuals below their tolerances. Memory: about
    ``7.5 * 8 * L.size`` bytes (L, X, E, Lambda and one iteration's temporaries).
    """
    _reject_booleans(rank=rank, max_iter=max_iter)
    L = _check_matrix(L)
    _check_rank(rank, L.shape, "rank")
    fit = _solve(L, rank, loss, mu, rho, max_iter, tol, kkt_tol)
    if fit["status"] != "converged":
        warnings.warn(_convergence_message(fit, tol, kkt_tol, rho, max_iter), ConvergenceWarning,
                      stacklevel=2)
    return fit["X"], fit["F"], fit["E"], fit["n_iter"], fit["primal"].tolist()


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------
class RobustEnsembleClustering(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """Robust ensemble clustering: rank-k fit of stacked indicators with an l_{1,2} loss.

    Given ``M`` base clusterings of ``N`` samples (built from the data by k-means, or given),
    build ``L = [L_1, ..., L_M]``, the 0/1 indicator matrices side by side (``N x c`` with
    ``c = sum_m k_m``; ``N x MK`` in the source) and solve problem (5) of the source [1]_,

    .. math:: \\min_{X, E} \\|E\\|_{1,2} \\;\\text{s.t.}\\; E = L - X,\\; \\operatorname{rank}(X) \\le k,

    with ``||E||_{1,2} = sum_j ||E_{:, j}||_2`` (a sum of column norms: whole base clusters
    are flagged as outliers), by the ALM of Algorithm 1 [2]_: the X step (9) is the best
    rank-k approximation of ``L - E + Lambda/mu`` (Eckart-Young [3]_, an exact truncated SVD
    instead of the source's LRGeomCG), the E step (11)-(12) is column-wise shrinkage of
    ``L - X + Lambda/mu`` with threshold ``1/mu`` (the source's ``2/mu`` is an erratum), then
    ``Lambda += mu (L - X - E)`` and ``mu *= rho``. The consensus labels are k-means
    (``n_clusters``) on the rows of the rank-k factor ``U_k S_k`` of ``X``.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters of the consensus. ``None`` means the (lower) median of the numbers
        of clusters of the base partitions (on data: ``base_k``, or 2).
    partitions : {"kmeans", "precomputed"}, default="kmeans"
        What ``X`` is. ``"kmeans"``: the data; the fit builds ``n_partitions`` base
        clusterings with :func:`mmcedu.partitions.base_partitions` (k-means with ``base_k``
        clusters, each on a random half of the features). ``"precomputed"``: the base
        partitions, column ``m`` the integer labels of base clustering ``m`` (``-1``: missing).
    base_k : int or None, default=None
        Number of clusters of each k-means base clustering; ``None`` means ``n_clusters`` (2
        when that is ``None`` too). Not used with ``partitions="precomputed"``.
    n_partitions : int, default=10
        Number of base clusterings built from the data. Not used with ``"precomputed"``.
    rank : int, default=None
        Rank bound of the low-rank solution: the ``k`` of (3)-(5), at most ``min(N, c)``;
        ``None`` means ``n_clusters_`` (our reading of the source's "we could set k = K").
    loss : {"l12", "fro", "l1"}, default="l12"
        ``"l12"``: the column-wise loss (3) by ALM. ``"fro"``: the least-squares problem (1),
        in closed form by one truncated SVD (``n_iter_ = 1``). ``"l1"``: the entry-wise loss
        (the source's "another option"), ALM with soft thresholding (dense path only).
    solver : {"auto", "dense", "compressed"}, default="auto"
        Algorithm. ``"dense"``: the ALM on the N x c matrix ``L``. ``"compressed"``: the same iterates on
        the c x c matrix ``Sigma V^T`` (``L = U Sigma V^T``; only ``G = L^T L`` is formed,
        from the labels); ``loss`` must be ``"l12"`` or ``"fro"``. ``"auto"``:
        ``"compressed"`` when ``loss`` allows it and ``N > c``. See :meth:`memory_bytes`.
    mu : float, default=None
        Initial penalty ``mu^(0)``; ``None`` means ``1.25 / ||L||_2`` (spectral norm), the
        usual choice of the inexact ALM [2]_.
    rho : float, default=1.01
        Growth factor of ``mu`` (``rho > 1``). A larger ``rho`` reaches a small primal residual
        in fewer iterations but can freeze the iterates before they are stationary (the
        usual ``rho = 1.1`` of the inexact ALM often does).
    max_iter : int, default=1000
        Maximum number of iterations of the ALM.
    tol : float, default=1e-7
        Stop when the relative primal residual ``||L - X - E||_F / ||L||_F`` is below ``tol``
        and the tangent residual below ``kkt_tol``.
    kkt_tol : float, default=1e-4
        Tolerance of the relative tangent (stationarity) residual
        ``||P_T(Lambda)||_F / max(||Lambda||_F, 1)`` (:func:`tangent_residual`), the
        first-order condition that the iteration does not satisfy by construction.
        ``numpy.inf`` gives the usual primal-only rule of the inexact ALM.
    random_state : int, RandomState instance or None, default=None
        Seeds one generator that draws the k-means base clusterings (on data), then the final
        k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Consensus cluster labels ``0 .. n_clusters_ - 1``.
    n_clusters_ : int
        Number of clusters in ``labels_``.
    embedding_ : ndarray of shape (n_samples, rank)
        The factor ``U_k S_k`` of ``X`` on which k-means runs (the compressed path gives the
        same factor up to the signs of its columns).
    low_rank_, error_, multipliers_ : ndarray of shape (n_samples, c)
        ``X``, ``E`` (column-sparse for ``loss="l12"``) and ``Lambda`` (for ``"fro"``: the
        gradient ``L - X``). On the compressed path they are rebuilt from the labels when read
        (``8 N c`` bytes each, checked against the memory budget); read a few rows with
        :meth:`reconstruct_rows`.
    anomaly_scores_ : ndarray of shape (c,)
        ``||E_{:, j}||_2``, one per base cluster, in the order of the columns of ``L``
        (partition by partition, by label within a partition).
    partition_scores_ : ndarray of shape (n_partitions,)
        ``||E_m||_F / ||L_m||_F`` for each base clustering ``m``: the share of it that the
        low-rank model does not explain (0 = fully explained).
    column_partition_ : ndarray of shape (c,)
        Base partition of each column of ``L``.
    n_iter_ : int
        Number of ALM iterations run.
    residuals_ : list of float
        Relative primal residual after each iteration (it decays like ``rho^-t`` for any
        iterates; see ``kkt_residuals_`` for stationarity).
    kkt_residuals_ : dict of ndarray
        Per iteration: ``"primal"`` (as ``residuals_``), ``"tangent"``
        (``||P_T(Lambda)||_F / s``) and ``"dual"`` (``mu_t ||E^{t+1} - E^t||_F / s``, an upper
        bound of the tangent residual), with ``s = max(||Lambda||_F, 1)``.
    tangent_residual_ : float
        The last relative tangent residual.
    converged_ : bool
        Whether both residuals ended below ``tol`` and ``kkt_tol``.
    singular_values_ : ndarray of shape (min(n_samples, c),)
        Singular values of ``L``, descending.
    singular_value_gap_ : float
        ``(sigma_k - sigma_{k+1}) / sigma_k`` for ``k = rank``. A small gap (a few per cent)
        makes the end point depend on round-off (another BLAS can end elsewhere).
    solver_info_ : dict
        ``"solver"`` (``"dense"`` or ``"compressed"``), ``"n_iter"`` and ``"status"``
        (``"converged"``, ``"stalled"``: feasible but not stationary, ``"frozen"``: the
        penalty stopped the iterates, or ``"max_iter"``).
    n_features_in_ : int
        Number of features (on data) or of base partitions seen in ``fit``.

    See Also
    --------
    mmcedu.partitions.base_partitions : generate a (corrupted) k-means ensemble.
    mmcedu.partitions.coassociation_clustering : the co-association baseline.
    mmcedu.partitions.majority_vote : the majority-vote baseline.

    Notes
    -----
    A missing label gives an all-zero row in that partition's block of ``L`` (the sample
    casts no vote there). Bad input raises ``ValueError`` (non-integer labels, a base partition
    with a single label, a sample without any label, ``rank`` above ``min(N, c)``); a path
    above the memory budget raises :class:`~mmcedu.exceptions.MemoryBudgetError`. A
    :class:`~sklearn.exceptions.ConvergenceWarning` says when the ALM ends without both
    residuals below their tolerances, a :class:`~mmcedu.exceptions.DegenerateDataWarning`
    when ``rank`` is at least the rank of ``L`` (then ``E = 0``). There is no ``predict``:
    the consensus labels only the samples of the fit.

    Label-free rule (:meth:`label_free_rule`, on data): ``base_k`` over ``n_clusters, ...,
    n_clusters + 7`` at a fixed ``n_clusters``, the largest silhouette on ``X`` (tolerance 0):
    every candidate clusters the same data into the same number of clusters, so the
    silhouette compares them on one scale.

    References
    ----------
    .. [1] Maximum margin matrix factorization for ensemble clustering (draft): problems
       (1)-(5), the ALM (6)-(12) and Algorithm 1.
    .. [2] Z. Lin, M. Chen and Y. Ma. The augmented Lagrange multiplier method for exact
       recovery of corrupted low-rank matrices. arXiv:1009.5055, 2010.
    .. [3] C. Eckart and G. Young. The approximation of one matrix by another of lower rank.
       Psychometrika 1:211-218, 1936.

    Examples
    --------
    >>> import numpy as np
    >>> from mmcedu import RobustEnsembleClustering
    >>> from mmcedu.datasets import blobs
    >>> from mmcedu.metrics import adjusted_rand_score
    >>> X, y = blobs(90, centers=3, n_features=4, random_state=0)
    >>> est = RobustEnsembleClustering(3, random_state=0).fit(X)
    >>> float(adjusted_rand_score(y, est.labels_))
    1.0
    >>> truth = np.repeat([0, 1, 2], 10)
    >>> P = np.column_stack([truth, (truth + 1) % 3, truth, np.arange(30) % 3])
    >>> est = RobustEnsembleClustering(partitions="precomputed", random_state=0).fit(P)
    >>> est.n_clusters_, float(adjusted_rand_score(truth, est.labels_))
    (3, 1.0)
    >>> bool(est.converged_), est.solver_info_["solver"]
    (True, 'compressed')
    """

    _label_free_criterion = ("silhouette",)
    _label_free_tolerance = 0.0

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "partitions": [StrOptions({"kmeans", "precomputed"})],
        "base_k": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "n_partitions": [Interval(numbers.Integral, 1, None, closed="left")],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "dense", "compressed"})],
        **_ALM_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=None, *, partitions="kmeans", base_k=None, n_partitions=10,
                 rank=None, loss="l12", solver="auto", mu=None, rho=DEFAULT_RHO, max_iter=1000,
                 tol=1e-7, kkt_tol=DEFAULT_KKT_TOL, random_state=None):
        self.n_clusters = n_clusters
        self.partitions = partitions
        self.base_k = base_k
        self.n_partitions = n_partitions
        self.rank = rank
        self.loss = loss
        self.solver = solver
        self.mu = mu
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.kkt_tol = kkt_tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Base partitions are categorical: scikit-learn's checks then feed rounded integers.
        tags.input_tags.categorical = self.partitions == "precomputed"
        return tags

    def _check_params(self):
        _reject_booleans(**{name: getattr(self, name) for name in
                            ("n_clusters", "base_k", "n_partitions", "rank", "max_iter")})
        if self.loss == "l1" and self.solver == "compressed":
            raise ValueError(
                "solver='compressed' needs loss='l12' or 'fro': the entry-wise l1 loss's soft "
                "thresholding is not invariant under rotations of the rows, so its ALM cannot run "
                "on the c x c compression of L. Use solver='dense' (or 'auto') with loss='l1'."
            )

    def _base_k(self):
        return int(self.base_k or max(2, self.n_clusters or 2))

    def _solver(self, n, c):
        if self.solver != "auto":
            return self.solver
        return "compressed" if self.loss != "l1" and n > c else "dense"

    # ------------------------------------------------------------------------------ the fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Build or read the base partitions, fit the low-rank model, cluster its factor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_partitions)
            The data (``partitions="kmeans"``), or the base partitions
            (``partitions="precomputed"``): integer labels, ``-1`` missing.
        y : Ignored

        Returns
        -------
        self
        """
        self._check_params()
        rng = check_random_state(self.random_state)
        codes, owner, label = _label_codes.encode(self._partitions(X, rng))
        n, M = codes.shape
        c = owner.size
        if self.n_clusters is None:
            k_m = np.sort(np.bincount(owner))  # clusters of each base partition
            n_clusters = int(k_m[(k_m.size - 1) // 2])
        else:
            n_clusters = int(self.n_clusters)
        check_n_clusters(n, n_clusters)
        k = n_clusters if self.rank is None else int(self.rank)
        if k > min(n, c):
            raise ValueError(
                f"rank={k} exceeds min(n_samples, sum_m k_m) = min({n}, {c}): a rank-{k} "
                "approximation is then L itself. Pass a smaller rank (or n_clusters)."
            )
        solver = self._solver(n, c)
        self._check_budget(n, c, M, k, solver)
        if solver == "dense":
            fit, sigma, F = self._fit_dense(codes, c, k)
        else:
            fit, sigma, F = self._fit_compressed(codes, c, k)
        self._store(fit, sigma, F, k, owner, label, solver, codes)
        self._cluster(n_clusters, codes, rng)
        if not self.converged_:
            warnings.warn(_convergence_message(fit, self.tol, self.kkt_tol, self.rho, self.max_iter),
                          ConvergenceWarning, stacklevel=3)
        return self

    def _partitions(self, X, rng):
        """The validated base partitions: ``X`` itself, or k-means clusterings of ``X``."""
        precomputed = self.partitions == "precomputed"
        X = validate_data(self, X, dtype="numeric" if precomputed else np.float64,
                          ensure_min_samples=1)
        n = X.shape[0]
        check_n_clusters(n, 2 if self.n_clusters is None else self.n_clusters)
        if precomputed:
            return check_partitions(X)
        base_k = self._base_k()
        if base_k > n:
            raise ValueError(
                f"base_k={base_k} exceeds n_samples={n}: a k-means base clustering needs a "
                "sample per cluster. Pass a smaller base_k."
            )
        P = base_partitions(X, self.n_partitions, base_k, random_state=rng)
        try:
            return check_partitions(P)
        except ValueError as err:
            raise ValueError(
                f"X has too few distinct samples for k-means base clusterings with "
                f"base_k={base_k} on random halves of its features: {err}"
            ) from None

    def _check_budget(self, n, c, M, k, solver):
        def need(path):
            return _label_codes.path_bytes(n, c, M, k, self.loss, path)

        if solver == "compressed":
            what = f"The compressed ALM for {n} samples and {c} base clusters (codes, embedding, k-means)"
            alternative = "Fit a subsample of the samples."
        else:
            what = f"The dense ALM on the {n} x {c} indicator matrix L (L, X, E, Lambda, temporaries)"
            alternative = (
                "loss='l1' has no compressed path: use loss='l12' or 'fro' with "
                "solver='compressed', or fit a subsample of the samples." if self.loss == "l1" else
                "Use solver='compressed' (or the default solver='auto'): the same iterates on a c x c "
                f"matrix, about {format_bytes(need('compressed'))}."
            )
        check_memory(need(solver), what=what, alternative=alternative)

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once.

        The arrays of the path that ``solver`` chooses, for ``c = M * base_k`` base clusters
        (``base_k=None``: ``n_clusters``, or 2), and the data in float64. A fit checks the
        same formula, with its own ``c``, against the memory budget before allocating.

        Parameters
        ----------
        n_samples : int
        n_features : int or None, default=None
            On data, the number of features (``None``: the data are not counted); with
            ``partitions="precomputed"``, the number of base partitions ``M`` (``None``:
            ``n_partitions``).

        Returns
        -------
        int
        """
        n = int(n_samples)
        precomputed = self.partitions == "precomputed"
        M = int(n_features if precomputed and n_features is not None else self.n_partitions)
        c = M * self._base_k()
        k = int(self.rank or self.n_clusters or self._base_k())
        data = 0 if precomputed or n_features is None else 8 * n * int(n_features)
        return int(_label_codes.path_bytes(n, c, M, k, self.loss, self._solver(n, c)) + data)

    def _label_free_grid(self, X):
        if self.partitions == "precomputed":
            raise ValueError(
                "partitions='precomputed' has no label-free rule: the rule searches base_k, the "
                "number of clusters of the k-means base clusterings built from the data, and "
                "given base partitions leave nothing to search. Use partitions='kmeans'."
            )
        if self.n_clusters is None:
            raise ValueError(
                "label_free_rule needs n_clusters: it compares consensus clusterings with "
                "n_clusters clusters over base_k = n_clusters, ..., n_clusters + 7."
            )
        return {"base_k": [int(self.n_clusters) + j for j in BASE_K_OFFSETS]}

    def _run(self, L, k, sigma_max):
        return _solve(L, k, self.loss, self.mu, self.rho, self.max_iter, self.tol, self.kkt_tol,
                      sigma_max)

    def _fit_dense(self, codes, c, k):
        L = _label_codes.indicator(codes, c)
        if c <= L.shape[0]:  # as in compress: eigenvalues of L^T L below 1e-10 x max are round-off
            w = np.linalg.eigvalsh(L.T @ L)[::-1]
            sigma = np.sqrt(np.where(w > 1e-10 * max(float(w[0]), 1e-300), w, 0.0))
        else:
            sigma = np.linalg.svd(L, compute_uv=False)
        self._lift = None
        fit = self._run(L, k, float(sigma[0]))
        return fit, sigma, fit["F"]

    def _fit_compressed(self, codes, c, k):
        L_hat, V, sigma, keep = _label_codes.compress(_label_codes.gram(codes, c))
        fit = self._run(L_hat, k, float(sigma[0]))
        # U Z_hat = L V Sigma^+ Z_hat for any iterate: a gather-sum over the codes.
        self._lift = (V[:, keep] / sigma[keep], keep)
        return fit, sigma, self._lifted(codes, fit["F"])

    def _lifted(self, codes, Z_hat, rows=None):
        Vs, keep = self._lift
        return _label_codes.gather_rows(codes, Vs @ Z_hat[keep], rows)

    def _store(self, fit, sigma, F, k, owner, label, solver, codes):
        n, M = codes.shape
        c = owner.size
        self.solver_info_ = {"solver": solver, "n_iter": int(fit["n_iter"]), "status": fit["status"]}
        self._matrices = {"low_rank": fit["X"], "error": fit["E"], "multipliers": fit["Lam"]}
        self._codes = codes if solver == "compressed" else None
        self.embedding_ = F
        self.anomaly_scores_ = np.linalg.norm(fit["E"], axis=0)
        e2 = np.bincount(owner, weights=self.anomaly_scores_**2, minlength=M)
        col_sizes = np.bincount(codes[codes >= 0], minlength=c)  # ||L_j||^2: base cluster sizes
        l2 = np.bincount(owner, weights=col_sizes, minlength=M)  # ||L_m||_F^2: labelled samples
        self.partition_scores_ = np.sqrt(e2 / l2)
        self.column_partition_ = owner
        self._column_label = label
        self.n_iter_ = int(fit["n_iter"])
        self.residuals_ = fit["primal"].tolist()
        self.kkt_residuals_ = {"primal": fit["primal"], "tangent": fit["tangent"],
                               "dual": fit["dual"]}
        self.tangent_residual_ = float(fit["tangent"][-1])
        self.converged_ = fit["status"] == "converged"
        sigma = np.asarray(sigma)[: min(n, c)]
        self.singular_values_ = sigma
        s_k = float(sigma[k - 1])
        s_next = float(sigma[k]) if k < sigma.size else 0.0
        tiny = 1e-8 * float(sigma[0])
        self.singular_value_gap_ = (s_k - s_next) / s_k if s_k > tiny else 0.0
        if s_k <= tiny:
            warnings.warn(
                f"rank={k} exceeds the rank of L ({int(np.sum(sigma > tiny))}): the rank-{k} "
                "model fits L exactly (X = L, E = 0), so the anomaly scores are all zero and "
                "the consensus is k-means on L itself. Pass a smaller rank.",
                DegenerateDataWarning, stacklevel=4,
            )

    def _cluster(self, n_clusters, codes, rng):
        """The consensus: k-means on the rows of the embedding, and a warning when it finds
        fewer clusters than asked."""
        with warnings.catch_warnings():  # said below, with the reason and what to change
            warnings.filterwarnings("ignore", "Number of distinct clusters", ConvergenceWarning)
            km = KMeans(n_clusters, n_init=10, random_state=rng).fit(self.embedding_)
        self.labels_ = km.labels_.astype(np.int64)
        self.n_clusters_ = int(np.unique(self.labels_).size)
        if self.n_clusters_ < n_clusters:
            n_rows = int(np.unique(codes, axis=0).shape[0])
            warnings.warn(
                f"Found {self.n_clusters_} distinct clusters for n_clusters={n_clusters}: the "
                f"base partitions give only {n_rows} distinct label vectors (samples labelled "
                "alike by every base partition coincide in the embedding). Ask for at most "
                f"{min(n_rows, self.n_clusters_)} clusters.",
                ClusterCountWarning, stacklevel=4,
            )

    # ------------------------------------------------------------------- the N x c matrices
    def _matrix(self, name):
        check_is_fitted(self)
        if self._lift is not None:
            n, c = self._codes.shape[0], self.anomaly_scores_.size
            check_memory(8.0 * n * c, what=f"{name}_ ({n} x {c}, rebuilt from the compressed fit)",
                         alternative=f"Read some rows with reconstruct_rows({name!r}, rows).")
        return self.reconstruct_rows(name)

    low_rank_ = property(lambda self: self._matrix("low_rank"))
    error_ = property(lambda self: self._matrix("error"))
    multipliers_ = property(lambda self: self._matrix("multipliers"))

    def reconstruct_rows(self, name, rows=None):
        """Rows of ``low_rank_``, ``error_`` or ``multipliers_`` without forming the others.

        Parameters
        ----------
        name : {"low_rank", "error", "multipliers"}
        rows : index array, slice or None
            The rows (samples) to return; ``None`` means all of them (``8 N c`` bytes).

        Returns
        -------
        ndarray of shape (n_rows, c)
            On the compressed path the rows of ``U Z_hat = L V Sigma^+ Z_hat``, a sum of ``M``
            rows of a c x c matrix per sample (time O(n_rows M c)).
        """
        if name not in ("low_rank", "error", "multipliers"):
            raise ValueError(f"name must be 'low_rank', 'error' or 'multipliers'; got {name!r}.")
        check_is_fitted(self)
        Z = self._matrices[name]
        if self._lift is None:
            return Z if rows is None else Z[rows]
        return self._lifted(self._codes, Z, rows)
