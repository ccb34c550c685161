"""Robust ensemble clustering: a low-rank fit of the stacked cluster indicators with an l_{1,2} loss.

The source paper (a draft, *Maximum margin matrix factorization for ensemble clustering*;
``mmmf_ensemble`` in the book's bibliography) stacks the indicator matrices of ``M`` base
clusterings side by side into ``L`` (:func:`mmcedu.partitions.indicator_matrix`) and looks for
a rank-``k`` matrix ``X`` close to ``L`` under the column-wise ``l_{1,2}`` loss
``||L - X||_{1,2} = sum_j ||(L - X)_{:, j}||_2`` (problem (3)). A base cluster (a column of
``L``) that does not fit the common low-rank structure is then explained by a non-zero column
of the residual ``E = L - X``: the column norms of ``E`` are anomaly scores of the base
clusters. The problem is solved by the augmented Lagrangian method (ALM) of the source's
Algorithm 1, with

* the X step (problem (9)) solved exactly by a truncated SVD (Eckart-Young theorem);
* the E step (problems (10)-(12)) solved exactly by column-wise shrinkage with threshold
  ``1/mu`` (the source writes ``2/mu``; see the book's errata).

The consensus labels are k-means on the rows of the rank-``k`` factor of ``X``.

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

This module holds the estimator and the ALM's mathematics (the two proximal operators, the
best rank-k approximation, an independent IRLS solver of the same loss). Generating base
clusterings and the consensus baselines live in :mod:`mmcedu.partitions`.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import check_memory, check_n_clusters, format_bytes
from .exceptions import ClusterCountWarning, DegenerateDataWarning
from .partitions import MISSING, check_partitions

__all__ = [
    "RobustEnsembleClustering",
    "column_shrinkage",
    "soft_threshold",
    "best_rank_k",
    "l12_norm",
    "l12_low_rank_irls",
    "robust_low_rank",
    "tangent_residual",
    "dense_bytes",
    "compressed_bytes",
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
#: Peak of the dense fit in N x c float64 arrays, by loss (tracemalloc at N = 4,000 and 8,000,
#: c = 500, M = 50: 7.35 / 7.22 for "l12", 3.24 / 3.18 for "fro"; see ``dense_bytes``).
DENSE_ARRAYS = {"l12": 7.5, "l1": 7.5, "fro": 3.5}


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
    (``n_samples x k``), where ``V_k`` holds the top ``k`` right singular vectors of ``A``.
    The top right singular vectors are taken from the eigendecomposition of the small Gram
    matrix ``A^T A`` (``c x c`` for ``c`` columns), which is much cheaper than an SVD of the
    tall ``A`` (but squares its condition number: singular values below ``1e-8 ||A||_2`` are
    not resolved); the rows of ``F`` have the same pairwise distances as the rows of ``X``.
    ``1 <= k <= min(A.shape)``.
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


def l12_low_rank_irls(L, k, *, max_iter=300, tol=1e-10, eps=1e-8):
    """An independent local solver of problem (3), for checking the ALM.

    Iteratively reweighted least squares (a majorize-minimize scheme): with column weights
    ``w_j = 1 / max(||(L - X)_{:, j}||_2, eps)``, the weighted problem
    ``min_{rank X <= k} sum_j w_j ||L_j - X_j||^2`` is solved exactly by
    ``X = best_rank_k(L W^{1/2}) W^{-1/2}`` (scaling columns does not change the rank), and
    each step does not increase the (``eps``-smoothed) l_{1,2} loss.
    """
    L = _check_matrix(L)
    _check_rank(k, L.shape)
    w = np.ones(L.shape[1])
    prev = np.inf
    for _ in range(max_iter):
        s = np.sqrt(w)
        X = _rank_k(L * s, k)[0] / s
        r = np.linalg.norm(L - X, axis=0)
        w = 1.0 / np.maximum(r, eps)
        value = r.sum()
        if prev - value <= tol * max(1.0, value):
            break
        prev = value
    return X


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
    p, g, t = fit["primal"][-1], fit["tangent"][-1], fit["n_iter"]
    where = (
        f"relative primal residual ||L - X - E||/||L|| = {p:.2e} (tol={tol:g}), relative "
        f"tangent (stationarity) residual ||P_T(Lambda)||/||Lambda|| = {g:.2e} (kkt_tol={kkt_tol:g})"
    )
    if fit["status"] == "max_iter":
        return (
            f"The ALM stopped after max_iter={max_iter} iterations without converging: {where}. "
            "Increase max_iter, or loosen tol / kkt_tol."
        )
    why = (
        "the penalty mu, multiplied by rho at every iteration, has grown so large that the "
        "iterates no longer move"
    )
    if fit["status"] == "stalled":
        head = (
            f"The ALM stalled after {t} iterations at a point that is feasible but not "
            f"stationary (the tangent residual has not halved in {STALL_PATIENCE} iterations)"
        )
    else:
        head = f"The ALM stopped after {t} iterations because mu grew by {MAX_MU_GROWTH:.0e}"
    return (
        f"{head}: {where}; {why}. Use a rho closer to 1 (rho={rho:g} now; e.g. "
        f"rho={1 + (rho - 1) / 4:.4g}), or loosen kkt_tol."
    )


def _check_matrix(L, name="L"):
    L = np.asarray(L, dtype=float)
    if L.ndim != 2 or min(L.shape) < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array; got shape {L.shape}.")
    if not np.all(np.isfinite(L)):
        raise ValueError(f"{name} contains NaN or infinity; the low-rank fit needs finite entries.")
    return L


def _check_alm_parameters(mu, rho, max_iter, tol, kkt_tol):
    if mu is not None and not (isinstance(mu, numbers.Real) and 0 < mu < np.inf):
        raise ValueError(f"mu must be a positive finite number or None; got {mu!r}.")
    if not (isinstance(rho, numbers.Real) and 1 < rho < np.inf):
        raise ValueError(f"rho must be a finite number > 1; got {rho!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
    for name, value in (("tol", tol), ("kkt_tol", kkt_tol)):
        if not (isinstance(value, numbers.Real) and value >= 0):  # NaN fails too
            raise ValueError(f"{name} must be a number >= 0; got {value!r}.")


def robust_low_rank(L, rank, *, loss="l12", mu=None, rho=DEFAULT_RHO, max_iter=500, tol=1e-7,
                    kkt_tol=DEFAULT_KKT_TOL):
    """The matrix part of :class:`RobustEnsembleClustering` on any real matrix ``L``.

    Useful when ``L`` holds scores rather than 0/1 indicators (late fusion of classifier
    scores). Returns ``(X, F, E, n_iter, residuals)`` with ``X`` of rank ``rank``, its
    factor ``F = U_k S_k``, ``E = L - X`` (up to ``tol``) and the relative primal residual
    of each iteration; parameters as in the estimator. Emits a ``ConvergenceWarning`` when
    the ALM ends without both residuals below their tolerances. Memory: about
    ``7.5 * 8 * L.size`` bytes (see :func:`dense_bytes`).
    """
    if loss not in ("l12", "fro", "l1"):
        raise ValueError(f"loss must be 'l12', 'fro' or 'l1'; got {loss!r}.")
    L = _check_matrix(L)
    _check_rank(rank, L.shape, "rank")
    _check_alm_parameters(mu, rho, max_iter, tol, kkt_tol)
    if loss == "fro":
        X, F = best_rank_k(L, rank)
        return X, F, L - X, 1, [0.0]
    mu = 1.25 / max(float(np.linalg.norm(L, 2)), 1e-300) if mu is None else mu
    fit = _alm(L, rank, loss, mu, rho, max_iter, tol, kkt_tol)
    if fit["status"] != "converged":
        warnings.warn(_convergence_message(fit, tol, kkt_tol, rho, max_iter), ConvergenceWarning,
                      stacklevel=2)
    return fit["X"], fit["F"], fit["E"], fit["n_iter"], fit["primal"].tolist()


# ---------------------------------------------------------------------------------------------
# L from the label codes: Gram matrix, compression, embedding (the scale path)
# ---------------------------------------------------------------------------------------------
def _encode(P):
    """Label codes of validated partitions ``P`` (int64, N x M): ``codes[i, m]`` is the column
    of ``L`` that sample ``i`` is in for partition ``m`` (``-1`` for a missing label), with
    the columns ordered as :func:`mmcedu.partitions.indicator_matrix` orders them.

    Returns ``codes`` (int32, N x M), ``owner`` and ``label`` (c,). Time O(N M log N).
    """
    N, M = P.shape
    codes = np.empty((N, M), dtype=np.int32)
    owner, label = [], []
    offset = 0
    for m in range(M):
        labels, inv = np.unique(P[:, m], return_inverse=True)
        inv = inv.reshape(-1)
        j = int(np.searchsorted(labels, MISSING))  # other negative labels sort before -1
        if j < labels.size and labels[j] == MISSING:
            labels = np.delete(labels, j)
            codes[:, m] = np.where(inv == j, -1, inv - (inv > j) + offset)
        else:
            codes[:, m] = inv + offset
        owner.append(np.full(labels.size, m))
        label.append(labels)
        offset += labels.size
    return codes, np.concatenate(owner), np.concatenate(label)


def _indicator_from_codes(codes, c):
    """The dense ``L`` (N x c float64) from the codes: ``indicator_matrix`` without re-validating."""
    N, M = codes.shape
    L = np.zeros((N, c))
    rows = np.broadcast_to(np.arange(N)[:, None], codes.shape)
    ok = codes >= 0
    L[rows[ok], codes[ok]] = 1.0
    return L


#: Rows of L written at a time by ``_gram_from_codes`` (float32 counts are exact below 2^24).
_GRAM_BLOCK = 8192


def _gram_from_codes(codes, c):
    """``G = L^T L`` (c x c float64; block ``(m, m')`` is the contingency table of partitions
    ``m`` and ``m'``), one block of rows of ``L`` at a time: ``G += L_b^T L_b`` in float32
    (exact: the entries of a block product are counts below ``_GRAM_BLOCK < 2^24``).
    Time O(N c^2) BLAS flops, memory ``8 c^2 + 4 _GRAM_BLOCK c`` bytes."""
    N, M = codes.shape
    G = np.zeros((c, c))
    Lb = np.zeros((min(_GRAM_BLOCK, N), c), dtype=np.float32)
    for s in range(0, N, _GRAM_BLOCK):
        cb = codes[s:s + _GRAM_BLOCK]
        nb = cb.shape[0]
        Lb[:nb] = 0.0
        rows = np.broadcast_to(np.arange(nb)[:, None], cb.shape)
        ok = cb >= 0
        Lb[rows[ok], cb[ok]] = 1.0
        G += Lb[:nb].T @ Lb[:nb]
    return G


def _compress(G, rcond=1e-10):
    """``(L_hat, V, sigma, keep)`` with ``L_hat = Sigma V^T`` (c x c), ``L_hat^T L_hat = G``.

    ``sigma`` (descending) are the singular values of ``L``. Eigenvalues of ``G`` below
    ``rcond * max`` are set to exactly zero: they are the null space of ``L`` (the columns of
    a fully labelled partition sum to the all-ones vector, so ``rank L <= c - M + 1``) computed
    as round-off, whose square roots (~1e-8 ||L||) would otherwise sit in ``L_hat``.
    """
    w, V = np.linalg.eigh((G + G.T) / 2.0)
    w, V = w[::-1], V[:, ::-1]
    keep = w > rcond * max(float(w[0]), 1e-300)
    sigma = np.sqrt(np.where(keep, w, 0.0))
    return sigma[:, None] * V.T, V, sigma, keep


def _gather_rows(codes, B, rows=None, *, block=65536):
    """``L[rows] @ B`` from the codes: row ``i`` is ``sum_m B[codes[i, m]]`` (-1 skipped).

    Time O(N M B.shape[1]); memory the output plus one block."""
    codes = np.asarray(codes) if rows is None else np.asarray(codes)[rows]
    N, M = codes.shape
    Bz = np.vstack([np.asarray(B, dtype=float), np.zeros((1, B.shape[1]))])  # code -1 -> 0
    out = np.empty((N, B.shape[1]))
    for s in range(0, N, block):
        cb = codes[s:s + block]
        acc = np.zeros((cb.shape[0], B.shape[1]))
        for m in range(M):
            acc += Bz[cb[:, m]]
        out[s:s + block] = acc
    return out


def dense_bytes(n_samples, n_columns, n_partitions, loss="l12"):
    """Peak bytes of the dense path of :class:`RobustEnsembleClustering` (``solver="dense"``).

    ``a * 8 N c + 12 N M`` with ``a = 7.5`` for ``loss="l12"`` or ``"l1"`` (L, X, E, Lambda and
    the temporaries of one iteration, float64) and ``a = 3.5`` for ``"fro"`` (``DENSE_ARRAYS``,
    measured with tracemalloc), plus the labels as int64 and their int32 codes.
    """
    return DENSE_ARRAYS[loss] * 8.0 * n_samples * n_columns + 12.0 * n_samples * n_partitions


def compressed_bytes(n_samples, n_columns, n_partitions, rank):
    """Peak bytes of the compressed path (``solver="compressed"``), k-means included.

    ``12 N M`` (the labels as int64 and their int32 codes) ``+ 40 N k`` (the embedding and
    k-means' copies of it, its distances and labels) ``+ 24 N`` ``+ 100 c^2`` (G, its
    eigenvectors and the c x c iterates and temporaries) ``+ 4 * 8192 c`` (one block of L).
    """
    n, c, M, k = n_samples, n_columns, n_partitions, rank
    return 12.0 * n * M + 40.0 * n * k + 24.0 * n + 100.0 * c * c + 4.0 * _GRAM_BLOCK * c


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------
class RobustEnsembleClustering(ClusterMixin, BaseEstimator):
    """Robust ensemble clustering: rank-k fit of stacked indicators with an l_{1,2} loss.

    Given ``M`` base clusterings of ``N`` samples, build ``L = [L_1, ..., L_M]``, the 0/1
    indicator matrices side by side (``N x c`` with ``c = sum_m k_m``; ``N x MK`` in the
    source, where all base clusterings have ``K`` clusters) and solve problem (5) of the
    source [1]_,

    .. math:: \\min_{X, E} \\|E\\|_{1,2} \\;\\text{s.t.}\\; E = L - X,\\; \\operatorname{rank}(X) \\le k,

    with ``||E||_{1,2} = sum_j ||E_{:, j}||_2`` (a sum of column norms: whole base clusters
    are flagged as outliers), by the ALM of Algorithm 1 [2]_: the X step (9) is the best
    rank-k approximation of ``L - E + Lambda/mu`` (Eckart-Young [3]_, an exact truncated SVD
    instead of the source's LRGeomCG), the E step (11)-(12) is column-wise shrinkage of
    ``L - X + Lambda/mu`` with threshold ``1/mu``, then ``Lambda += mu (L - X - E)`` and
    ``mu *= rho``. The consensus labels are k-means (``n_clusters``) on the rows of the
    rank-k factor ``U_k S_k`` of ``X``.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters of the consensus. ``None`` means the (lower) median of the numbers
        of clusters of the base partitions.
    rank : int, default=None
        Rank bound of the low-rank solution: the ``k`` of (3)-(5), ``rank(X) <= k``; ``None``
        means ``n_clusters_`` (our reading of the source's ambiguous "we could set k = K").
        Must be at most ``min(N, c)``.
    loss : {"l12", "fro", "l1"}, default="l12"
        ``"l12"``: the column-wise l_{1,2} loss (3) by ALM. ``"fro"``: the least-squares
        problem (1), solved in closed form by one truncated SVD (``n_iter_ = 1``). ``"l1"``:
        entry-wise l_1 loss (the source's "another option"), ALM with soft thresholding
        (dense path only).
    solver : {"auto", "dense", "compressed"}, default="auto"
        Algorithm used to run the ALM. ``"dense"``: on the N x c matrix ``L``, memory
        :func:`dense_bytes` ``= 7.5 * 8 N c + 12 N M`` bytes (``3.5 * 8 N c`` for ``"fro"``) (raises
        :class:`~mmcedu.exceptions.MemoryBudgetError` before allocating when that exceeds
        the budget). ``"compressed"``: the same iterates on the c x c matrix
        ``Sigma V^T`` (``L = U Sigma V^T``; only ``G = L^T L`` is formed, from the labels),
        memory :func:`compressed_bytes` ``~ 12 N M + 40 N k + 100 c^2`` bytes; ``loss`` must
        be ``"l12"`` or ``"fro"``. ``"auto"``: ``"compressed"`` when ``loss`` allows it and
        ``N > c``, else ``"dense"``.
    mu : float, default=None
        Initial penalty ``mu^(0)`` of the ALM; ``None`` means ``1.25 / ||L||_2`` (spectral
        norm), the usual choice of the inexact ALM [2]_.
    rho : float, default=1.01
        Growth factor of ``mu`` (``rho > 1``). A larger ``rho`` reaches a small primal residual
        in fewer iterations but freezes the iterates before they are stationary (measured:
        ``rho = 1.1`` stalls at tangent residuals of 1e-4 to 2e-3 and, on ensembles with many
        random members, at a higher loss and a lower ARI); ``1.01`` reaches ``kkt_tol``
        in 200 to 600 iterations on the book's ensembles.
    max_iter : int, default=1000
        Maximum number of iterations of the ALM.
    tol : float, default=1e-7
        Stop when the relative primal residual ``||L - X - E||_F / ||L||_F`` is below ``tol``
        and the relative tangent residual is below ``kkt_tol``.
    kkt_tol : float, default=1e-4
        Tolerance of the relative tangent (stationarity) residual
        ``||P_T(Lambda)||_F / max(||Lambda||_F, 1)`` (see :func:`tangent_residual`): the
        first-order condition of the rank-constrained problem that the iteration does not
        satisfy by construction. ``numpy.inf`` gives the source's primal-only stopping rule.
    random_state : int, RandomState instance or None, default=None
        Seed of the final k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Consensus cluster labels ``0 .. n_clusters_ - 1``.
    n_clusters_ : int
        Number of clusters in ``labels_``.
    embedding_ : ndarray of shape (n_samples, rank)
        The factor ``U_k S_k`` of ``X`` on which k-means runs (the compressed path gives the
        same factor up to the signs of its columns).
    low_rank_ : ndarray of shape (n_samples, c)
        The rank-k matrix ``X``. With ``solver_ == "compressed"`` it is rebuilt from the codes
        when read (``8 N c`` bytes, checked against the memory budget); read a few rows with
        :meth:`reconstruct_rows`.
    error_ : ndarray of shape (n_samples, c)
        The residual ``E`` (column-sparse for ``loss="l12"``); rebuilt like ``low_rank_``.
    multipliers_ : ndarray of shape (n_samples, c)
        The multipliers ``Lambda`` (for ``loss="fro"``: the gradient ``L - X``); rebuilt like
        ``low_rank_``.
    anomaly_scores_ : ndarray of shape (c,)
        ``||E_{:, j}||_2``, one per base cluster, ordered partition by partition (and by
        label within a partition), as the columns of ``L``.
    partition_scores_ : ndarray of shape (n_partitions,)
        ``||E_m||_F / ||L_m||_F`` for each base clustering ``m``: the share of the base
        clustering the low-rank model does not explain (0 = fully explained).
    column_partition_, column_label_ : ndarray of shape (c,)
        Base partition and label of each column of ``L``.
    n_iter_ : int
        Number of ALM iterations run.
    residuals_ : list of float
        Relative primal residual ``||L - X - E||_F / ||L||_F`` after each iteration (it decays
        like ``rho^-t`` for any iterates; see ``kkt_residuals_`` for stationarity).
    kkt_residuals_ : dict of ndarray
        Per iteration: ``"primal"`` (as ``residuals_``), ``"tangent"``
        (``||P_T(Lambda)||_F / s``) and ``"dual"`` (``mu_t ||E^{t+1} - E^t||_F / s``, an upper
        bound of the tangent residual), with ``s = max(||Lambda||_F, 1)``.
    tangent_residual_ : float
        The last relative tangent residual (``kkt_residuals_["tangent"][-1]``).
    converged_ : bool
        Whether both residuals ended below ``tol`` and ``kkt_tol``.
    singular_values_ : ndarray of shape (min(n_samples, c),)
        Singular values of ``L``, descending.
    singular_value_gap_ : float
        ``(sigma_k - sigma_{k+1}) / sigma_k`` for ``k = rank``: 0 when the k-th and
        (k+1)-th singular values of ``L`` tie. A small gap (a few per cent) makes the end point
        depend on round-off: another BLAS, or a perturbation of ``L`` of size 1e-12, can end
        at a different local solution.
    solver_ : str
        ``"dense"`` or ``"compressed"``, the path used.
    n_features_in_ : int
        Number of base partitions ``M`` seen in ``fit``.

    See Also
    --------
    mmcedu.partitions.base_partitions : generate a (corrupted) k-means ensemble.
    mmcedu.partitions.coassociation_clustering : the co-association baseline.
    mmcedu.partitions.majority_vote : the majority-vote baseline.

    Notes
    -----
    ``X`` holds base partitions, not features: column ``m`` is the labels of base
    clustering ``m`` (integers, ``-1`` = missing). Missing labels give all-zero rows in that
    partition's block of ``L`` (the sample casts no vote there). Bad input raises
    ``ValueError``: non-integer labels, a base partition with a single label, a sample
    without any label, a boolean ``n_clusters`` or ``rank``, ``rank`` above ``min(N, c)``,
    ``solver="compressed"`` with ``loss="l1"``; a path above the memory budget raises
    :class:`~mmcedu.exceptions.MemoryBudgetError` naming ``solver="compressed"``.

    Warnings: :class:`~sklearn.exceptions.ConvergenceWarning` when the ALM ends without both
    residuals below their tolerances (``max_iter`` reached, or stalled at a feasible but not
    stationary point: use a smaller ``rho``);
    :class:`~mmcedu.exceptions.DegenerateDataWarning` when ``rank`` is at least the rank of
    ``L`` (then ``X = L``, ``E = 0`` and the anomaly scores say nothing).

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
    >>> from mmcedu.metrics import adjusted_rand_score
    >>> truth = np.repeat([0, 1, 2], 10)
    >>> P = np.column_stack([truth, (truth + 1) % 3, truth, np.arange(30) % 3])
    >>> est = RobustEnsembleClustering(random_state=0).fit(P)
    >>> est.n_clusters_
    3
    >>> float(adjusted_rand_score(truth, est.labels_))
    1.0
    >>> bool(est.converged_), est.solver_
    (True, 'compressed')
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "loss": [StrOptions({"l12", "fro", "l1"})],
        "solver": [StrOptions({"auto", "dense", "compressed"})],
        "mu": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "rho": [Interval(numbers.Real, 1, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "kkt_tol": [Interval(numbers.Real, 0, None, closed="both")],
        "random_state": ["random_state"],
    }

    _expected_failed_checks = {
        "check_clustering": (
            "it fits continuous blob features, which are not base partitions: fit rejects "
            "non-integer labels with a ValueError by design"
        ),
    }

    def __init__(
        self,
        n_clusters=None,
        *,
        rank=None,
        loss="l12",
        solver="auto",
        mu=None,
        rho=DEFAULT_RHO,
        max_iter=1000,
        tol=1e-7,
        kkt_tol=DEFAULT_KKT_TOL,
        random_state=None,
    ):
        self.n_clusters = n_clusters
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
        tags.input_tags.categorical = True
        return tags

    def _check_params(self):
        for name in ("n_clusters", "rank", "max_iter"):
            if isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(
                    f"{name} must be an integer, not a boolean; got {name}={getattr(self, name)!r}."
                )
        _check_alm_parameters(self.mu, self.rho, self.max_iter, self.tol, self.kkt_tol)
        if self.loss == "l1" and self.solver == "compressed":
            raise ValueError(
                "solver='compressed' needs loss='l12' or 'fro': the entry-wise l1 loss's soft "
                "thresholding is not invariant under rotations of the rows, so its ALM cannot "
                "run on the c x c compression of L. Use solver='dense' (or 'auto') with "
                "loss='l1'."
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the low-rank model to the base partitions and compute consensus labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_partitions)
            The base partitions ("partitions" in the book): integer labels, ``-1`` missing.
        y : Ignored

        Returns
        -------
        self
        """
        self._check_params()
        P = validate_data(self, X, dtype="numeric", ensure_min_samples=1)
        check_n_clusters(P.shape[0], 2 if self.n_clusters is None else self.n_clusters)
        P = check_partitions(P)
        codes, owner, label = _encode(P)
        del P
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
        solver = self.solver
        if solver == "auto":
            solver = "compressed" if self.loss != "l1" and n > c else "dense"
        if solver == "dense":
            alternative = (
                "Use solver='compressed' (or the default solver='auto'): the same iterates on a "
                f"c x c matrix, about {format_bytes(compressed_bytes(n, c, M, k))}."
                if self.loss != "l1" else
                "loss='l1' has no compressed path: use loss='l12' or 'fro' with "
                "solver='compressed', or fit a subsample of the samples."
            )
            check_memory(
                dense_bytes(n, c, M, self.loss),
                what=f"The dense ALM on the {n} x {c} indicator matrix L (L, X, E, Lambda and "
                "their temporaries in float64)",
                alternative=alternative,
            )
            fit, sigma, F = self._fit_dense(codes, c, k)
        else:
            check_memory(
                compressed_bytes(n, c, M, k),
                what=f"The compressed ALM for {n} samples and {c} base clusters (label codes, "
                "embedding, k-means)",
                alternative="Fit a subsample of the samples.",
            )
            fit, sigma, F = self._fit_compressed(codes, c, k)
        self._store(fit, sigma, F, k, n, c, M, owner, label, solver, codes)
        rng = check_random_state(self.random_state)
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
                ClusterCountWarning,
                stacklevel=3,
            )
        if not self.converged_:
            warnings.warn(
                _convergence_message(fit, self.tol, self.kkt_tol, self.rho, self.max_iter),
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    # ------------------------------------------------------------------------------ the paths
    def _run(self, L, k, sigma_max):
        if self.loss == "fro":
            X, F, Vk = _rank_k(L, k)
            E = L - X
            scale = max(float(np.linalg.norm(E)), 1.0)
            return {
                "X": X, "F": F, "Vk": Vk, "E": E, "Lam": E, "n_iter": 1, "mu": None,
                "primal": np.zeros(1), "tangent": np.array([_tangent_norm(E, F, Vk) / scale]),
                "dual": np.zeros(1), "status": "converged",
            }
        mu = 1.25 / max(sigma_max, 1e-300) if self.mu is None else self.mu
        return _alm(L, k, self.loss, mu, self.rho, self.max_iter, self.tol, self.kkt_tol)

    def _fit_dense(self, codes, c, k):
        L = _indicator_from_codes(codes, c)
        n = L.shape[0]
        if c <= n:  # as in _compress: eigenvalues of L^T L below 1e-10 x max are round-off
            w = np.linalg.eigvalsh(L.T @ L)[::-1]
            sigma = np.sqrt(np.where(w > 1e-10 * max(float(w[0]), 1e-300), w, 0.0))
        else:
            sigma = np.linalg.svd(L, compute_uv=False)
        fit = self._run(L, k, float(sigma[0]))
        self._dense = {"low_rank": fit["X"], "error": fit["E"], "multipliers": fit["Lam"]}
        return fit, sigma, fit["F"]

    def _fit_compressed(self, codes, c, k):
        G = _gram_from_codes(codes, c)
        L_hat, V, sigma, keep = _compress(G)
        fit = self._run(L_hat, k, float(sigma[0]))
        # F = U F_hat = L V Sigma^+ F_hat: a gather-sum over the codes.
        Vs = V[:, keep] / sigma[keep]
        F = _gather_rows(codes, Vs @ fit["F"][keep])
        self._compressed = {"Vs": Vs, "keep": keep, "low_rank": fit["X"], "error": fit["E"],
                            "multipliers": fit["Lam"]}
        self._dense = None
        return fit, sigma, F

    def _store(self, fit, sigma, F, k, n, c, M, owner, label, solver, codes):
        self.solver_ = solver
        self._codes = codes if solver == "compressed" else None
        if solver == "dense":
            self._compressed = None
        self.embedding_ = F
        E = fit["E"]
        self.anomaly_scores_ = np.linalg.norm(E, axis=0)
        e2 = np.bincount(owner, weights=self.anomaly_scores_**2, minlength=M)
        col_sizes = np.zeros(c)  # ||L_j||^2: the size of each base cluster
        for m in range(M):
            col = codes[:, m]
            col_sizes += np.bincount(col[col >= 0], minlength=c)
        l2 = np.bincount(owner, weights=col_sizes, minlength=M)  # ||L_m||_F^2: labelled samples
        self.partition_scores_ = np.sqrt(e2 / l2)
        self.column_partition_ = owner
        self.column_label_ = label
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
                DegenerateDataWarning,
                stacklevel=4,
            )

    # ------------------------------------------------------------------- the N x c matrices
    def _matrix(self, name):
        if not hasattr(self, "solver_"):
            raise NotFittedError(
                f"This RobustEnsembleClustering instance is not fitted yet; call fit before "
                f"reading {name}_."
            )
        if self._dense is not None:
            return self._dense[name]
        n, c = self._codes.shape[0], self.anomaly_scores_.size
        check_memory(
            8.0 * n * c,
            what=f"{name}_ ({n} x {c}, rebuilt from the compressed fit)",
            alternative=f"Read some rows with reconstruct_rows({name!r}, rows).",
        )
        return self.reconstruct_rows(name)

    @property
    def low_rank_(self):
        return self._matrix("low_rank")

    @property
    def error_(self):
        return self._matrix("error")

    @property
    def multipliers_(self):
        return self._matrix("multipliers")

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
        if not hasattr(self, "solver_"):
            raise NotFittedError("This RobustEnsembleClustering instance is not fitted yet.")
        if self._dense is not None:
            Z = self._dense[name]
            return Z if rows is None else Z[rows]
        comp = self._compressed
        return _gather_rows(self._codes, comp["Vs"] @ comp[name][comp["keep"]], rows)
