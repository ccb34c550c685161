"""Unsupervised multi-class regularized least squares clustering (UMC-RLS).

Pahikkala, Airola, Gieseke and Kramer (2012). A labelling c of n samples into k clusters
defines one +-1 vector per cluster, ``p_h(c)_i = +1 if c_i = h else -1`` (eq. 8). The cost of
the best regularized least squares (RLS) fit to a +-1 vector y is (eq. 7; Lemma 1, corrected)

    F(y) = ||y - K a||^2 + lambda a^T K a = n - y^T R y,   a = (K + lambda I)^-1 y,
    R = K (K + lambda I)^-1 = V diag(s / (s + lambda)) V^T   (K = V diag(s) V^T; eq. 12)

and :class:`UMCRLS` minimises ``Q(c) = sum_h F(p_h(c))`` (eq. 10) by hill climbing: with the
caches ``t_h = R p_h``, moving sample j from cluster a to d != a changes Q by
``Delta(j, d) = 4 (t_a[j] - t_d[j]) - 8 R_jj`` (eq. 13), in O(1), and updates
``t_a -= 2 R_j``, ``t_d += 2 R_j`` in O(n). For a rank-r kernel K = Phi Phi^T, R = L L^T with
``L = Phi U (S + lambda I)^-1/2`` (Phi^T Phi = U S U^T): caches ``g_h = L^T p_h``, O(r) per
move, O(n r k) for the n scores.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import LabelFreeMixin
from ._validation import (
    all_identical,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from .balance import BALANCE_WARN_FRACTION, _check_int
from .exceptions import BalanceWarning, ClusterCountWarning, DegenerateDataWarning
from .kernels import _check_positive, _check_square, gamma_grid, kernel_matrix, median_gamma, rbf_kernel
from .metrics import permutation_mean_quadratic

__all__ = ["UMCRLS", "LABEL_FREE_OCTAVES", "hat_matrix", "low_rank_hat_factor", "shaking_alpha"]

#: Octaves j of the label-free width grid ``gamma = 2^j gamma_0`` (``gamma_0`` the median
#: heuristic) of :meth:`UMCRLS.label_free_rule`.
LABEL_FREE_OCTAVES = tuple(range(-2, 6))
# Algorithm 3 on the low-rank path: at most this many score evaluations (batches) per claim.
_MAX_BATCHES = 64
# The dense path warns about its O(n^3) eigendecomposition from this n on.
_DENSE_SLOW_N = 10_000
# Algorithms 1-2 on the low-rank path warn from this n on (about n moves of O(n r k) each).
_LOW_RANK_DESCENT_SLOW_N = 20_000
# Algorithms 1 and 2 accept a move only when it lowers Q by more than this.
_TOL = 1e-9
# Entries of an n x r array handled at once (blocks of rows; bounds the temporaries).
_BLOCK_ENTRIES = 2**20


def _check_alpha(alpha):
    return _check_positive(alpha, "alpha (the paper's lambda)")


def _row_blocks(n, width):
    """Slices of rows covering 0..n, each of at most ``_BLOCK_ENTRIES / width`` rows."""
    step = max(1, _BLOCK_ENTRIES // max(width, 1))
    return [slice(st, st + step) for st in range(0, n, step)]


def _shrinkage(s, alpha):
    """The eigenvalues ``s / (s + alpha)`` of R for the eigenvalues s of K (clipped at 0)."""
    sc = np.clip(s, 0.0, None)
    return sc / (sc + alpha)


def _hat_from_eig(s, V, alpha):
    """R = V diag(s / (s + alpha)) V^T; V is scaled in place (one more n x n array, R)."""
    V *= np.sqrt(_shrinkage(s, alpha))
    return V @ V.T


def hat_matrix(K, alpha):
    """R = K (K + alpha I)^-1 = V diag(s / (s + alpha)) V^T (eq. 12), alpha the paper's lambda.

    Eigenvalues of K below zero (round-off) are clipped to zero. Memory: 16 n^2 bytes besides K.
    """
    alpha = _check_alpha(alpha)
    s, V = eigh(_check_square(K), check_finite=False)
    return _hat_from_eig(s, V, alpha)


def _hat_factor_inplace(Phi, alpha):
    """Overwrite Phi (n x r, float32 or float64) with L = Phi U (S + alpha I)^-1/2, block by block
    (no second n x r array). Returns S, the eigenvalues of Phi^T Phi clipped at 0."""
    blocks = _row_blocks(*Phi.shape)
    PtP = np.zeros((Phi.shape[1], Phi.shape[1]))
    for rows in blocks:
        B = np.asarray(Phi[rows], dtype=np.float64)
        PtP += B.T @ B
    S, U = np.linalg.eigh(PtP)
    S = np.clip(S, 0.0, None)
    M = U / np.sqrt(S + alpha)
    for rows in blocks:
        Phi[rows] = np.asarray(Phi[rows], dtype=np.float64) @ M
    return S


def low_rank_hat_factor(Phi, alpha):
    """L (n x r, a new float64 array) with L L^T = R = K (K + alpha I)^-1 for K = Phi Phi^T.

    ``L = Phi U (S + alpha I)^-1/2`` with Phi^T Phi = U S U^T (push-through identity), O(n r^2).
    """
    alpha = _check_alpha(alpha)
    L = np.array(Phi, dtype=float)
    if L.ndim != 2:
        raise ValueError(f"Phi must be a 2-D (n, r) factor; got shape {L.shape}.")
    _hat_factor_inplace(L, alpha)
    return L


def _class_vectors(labels, n_clusters):
    """The k vectors p_h(c) of eq. (8) as the columns of an n x k matrix of +-1."""
    labels = np.asarray(labels)
    P = -np.ones((labels.shape[0], n_clusters))
    P[np.arange(labels.shape[0]), labels] = 1.0
    return P


def shaking_alpha(n, n_clusters, i, size):
    """Points cluster d claims in round i of Algorithm 3 (eq. 11), never negative.

    alpha = floor(n / (2^i k) + n / k - |{h : c_h = d}|), computed in exact integer
    arithmetic as floor(n (1 + 2^i) / (2^i k)) - size, and clipped to [0, n - size].
    """
    for name, v, low in (("n", n, 0), ("n_clusters", n_clusters, 1), ("i", i, 0), ("size", size, 0)):
        _check_int(v, f"shaking_alpha: {name}", low)
    if size > n:
        raise ValueError(f"shaking_alpha: size={size} exceeds n={n}.")
    a = (n * (1 + 2**i)) // (2**i * n_clusters) - size
    return int(min(max(a, 0), n - size))


# --- scorers: Delta(j, d) and moves; a scorer shares the label vector ``c`` it was given -----


class _Scorer:
    """Labels, cluster sizes and ``counts`` (``"scores"`` Delta(j, d) computed, ``"evaluations"``
    batches of them, ``"cache_updates"``); with ``keep_nonempty`` a lone sample cannot move."""

    max_chunk = 4096

    def __init__(self, c, k, keep_nonempty=False):
        self.c, self.n, self.k = c, c.shape[0], k
        self.sizes = np.bincount(c, minlength=k).astype(np.intp)
        self.keep_nonempty = bool(keep_nonempty)
        self.counts = {"scores": 0, "evaluations": 0, "cache_updates": 0}
        self._ar = np.arange(self.n)

    def _frozen(self, cj):
        return self.sizes[cj] <= 1

    def _relabel(self, js, d):
        np.subtract.at(self.sizes, self.c[js], 1)
        self.sizes[d] += len(js)
        self.c[js] = d

    def _finish_to(self, delta, d):
        delta[self.c == d] = np.inf
        if self.keep_nonempty:
            delta[self._frozen(self.c)] = np.inf
        self.counts["evaluations"] += 1
        self.counts["scores"] += self.n - int(self.sizes[d])
        return delta

    def _finish_rows(self, D, js, cj):
        D[np.arange(len(js)), cj] = 0.0
        if self.keep_nonempty:
            D[self._frozen(cj)] = 0.0
        self.counts["evaluations"] += 1
        self.counts["scores"] += len(js) * (self.k - 1)
        return D

    def copy(self):
        """An independent scorer at the same labels (the big arrays R, L, K are shared)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.c, twin.sizes, twin.counts = self.c.copy(), self.sizes.copy(), dict(self.counts)
        for name in ("T", "G"):
            if hasattr(self, name):
                setattr(twin, name, getattr(self, name).copy())
        return twin

    def move_many(self, js, d):
        for j in np.asarray(js):
            self.move(int(j), d)


class _ExactScorer(_Scorer):
    """Caches t_h = R p_h (rows of T, k x n). Delta in O(1), a move in O(n)."""

    def __init__(self, R, c, k, keep_nonempty=False):
        super().__init__(c, k, keep_nonempty)
        self.R, self.diag = R, np.diag(R).copy()
        self.T = _class_vectors(c, k).T @ R  # row h: t_h = R p_h (R symmetric)

    def delta_to(self, d):
        own = self.T[self.c, self._ar]
        return self._finish_to(4.0 * (own - self.T[d]) - 8.0 * self.diag, d)

    def delta_rows(self, js):
        cj = self.c[js]
        t = self.T[:, js]
        own = t[cj, np.arange(len(js))]
        D = (4.0 * (own[None, :] - t) - 8.0 * self.diag[js][None, :]).T
        return self._finish_rows(D, js, cj)

    def move(self, j, d):
        Rj = self.R[j]
        self.T[self.c[j]] -= 2.0 * Rj
        self.T[d] += 2.0 * Rj
        self._relabel([j], d)
        self.counts["cache_updates"] += 2 * self.n

    def objective(self):
        return float(self.k * self.n - np.sum(_class_vectors(self.c, self.k).T * self.T))


class _LowRankScorer(_Scorer):
    """R = L L^T; caches g_h = L^T p_h (columns of G, r x k). A move costs O(r). ``L`` may be
    float32 (half the memory traffic of the product ``L G``); G and the R_jj stay float64."""

    def __init__(self, L, c, k, keep_nonempty=False):
        super().__init__(c, k, keep_nonempty)
        self.L, self.diag, self.G = L, np.empty(self.n), np.zeros((L.shape[1], k))
        for rows in _row_blocks(self.n, L.shape[1]):  # float64, no n x r float64 copy
            B = np.asarray(L[rows], dtype=np.float64)
            self.diag[rows] = np.einsum("ij,ij->i", B, B)
            self.G += B.T @ _class_vectors(c[rows], k)

    def delta_to(self, d):
        T = self.L @ self.G.astype(self.L.dtype, copy=False)  # n x k, column h is t_h
        own = np.take_along_axis(T, self.c[:, None], axis=1)[:, 0]
        return self._finish_to(4.0 * (own.astype(np.float64) - T[:, d]) - 8.0 * self.diag, d)

    def delta_rows(self, js):
        cj = self.c[js]
        t = np.empty((len(js), self.k))
        for rows in _row_blocks(len(js), self.L.shape[1]):  # float64 rows of L
            t[rows] = np.asarray(self.L[js[rows]], dtype=np.float64) @ self.G
        own = t[np.arange(len(js)), cj]
        return self._finish_rows(4.0 * (own[:, None] - t) - 8.0 * self.diag[js][:, None], js, cj)

    def move(self, j, d):
        Lj = np.asarray(self.L[j], dtype=np.float64)
        self.G[:, self.c[j]] -= 2.0 * Lj
        self.G[:, d] += 2.0 * Lj
        self._relabel([j], d)
        self.counts["cache_updates"] += 2 * self.L.shape[1]

    def move_many(self, js, d):
        js = np.asarray(js)
        src = self.c[js]
        for a in np.unique(src):
            self.G[:, a] -= 2.0 * self.L[js[src == a]].sum(axis=0, dtype=np.float64)
        self.G[:, d] += 2.0 * self.L[js].sum(axis=0, dtype=np.float64)
        self._relabel(js, d)
        self.counts["cache_updates"] += 2 * self.L.shape[1] * (np.unique(src).size + 1)

    def objective(self):
        return float(self.k * self.n - np.sum(self.G**2))


# --- Algorithms 1-3, written once against the scorer interface ------------------------------


def _stochastic(scorer, on_move, max_iter, steps=0):
    """Algorithm 1: sweep j = 1..n, move j to argmin_d S(c, j, d) when that lowers Q. (Scores come
    in chunks; the first improving sample of a chunk moves: the one-at-a-time sweep's moves.)"""
    chunk = 1
    while True:
        moved, j0 = False, 0
        while j0 < scorer.n:
            js = np.arange(j0, min(j0 + chunk, scorer.n))
            D = scorer.delta_rows(js)
            hit = np.flatnonzero(D.min(axis=1) < -_TOL)  # erratum: "if c_j = d": "c_j != d"
            if hit.size == 0:
                j0, chunk = int(js[-1]) + 1, min(2 * chunk, scorer.max_chunk)
                continue
            i = int(hit[0])
            j, d = int(js[i]), int(np.argmin(D[i]))
            if on_move is not None:
                on_move(j, d, float(D[i, d]))
            scorer.move(j, d)
            steps, moved = steps + 1, True
            if steps >= max_iter:
                return steps, False
            j0, chunk = j + 1, max(1, min(chunk, scorer.max_chunk) // 4)
        if not moved:
            return steps, True


def _steepest(scorer, on_move, max_iter, steps=0):
    """Algorithm 2: make the single best move (j, d) while it lowers Q."""
    while steps < max_iter:
        D = scorer.delta_rows(scorer._ar)
        j, d = divmod(int(np.argmin(D)), scorer.k)
        if not D[j, d] < -_TOL:
            return steps, True
        if on_move is not None:
            on_move(j, d, float(D[j, d]))
        scorer.move(j, d)
        steps += 1
    return steps, False


def _best_claims(scorer, delta, b):
    """The b samples with the smallest finite ``delta`` (a claim of cluster d); with
    ``keep_nonempty`` a cluster of size m gives at most m - 1 samples to one batch."""
    finite = int(np.count_nonzero(np.isfinite(delta)))
    b = min(b, finite)
    if b == 0:
        return np.empty(0, dtype=np.intp)
    js = np.argpartition(delta, b - 1)[:b]
    cap = scorer.sizes - 1
    if not scorer.keep_nonempty or np.all(np.bincount(scorer.c[js], minlength=scorer.k) <= cap):
        return js
    out = []
    for j in np.argsort(delta, kind="stable")[:finite]:
        if cap[scorer.c[j]] > 0:
            cap[scorer.c[j]] -= 1
            out.append(j)
            if len(out) == b:
                break
    return np.asarray(out, dtype=np.intp)


def _claim(scorer, d, b, on_move):
    """Cluster d claims the b samples whose moves to d cost least; returns how many it took."""
    delta = scorer.delta_to(d)
    if b == 1:
        j = int(np.argmin(delta))
        if not np.isfinite(delta[j]):
            return 0  # every other sample is the last of its cluster
        if on_move is not None:
            on_move(j, d, float(delta[j]))
        scorer.move(j, d)
        return 1
    js = _best_claims(scorer, delta, b)
    if on_move is not None:
        for j in js:
            on_move(int(j), d, float(delta[j]))
    if js.size:
        scorer.move_many(js, d)
    return js.size


def _shaking(scorer, n_rounds, on_move, on_claim, max_batches, max_iter, steps=0):
    """Algorithm 3: in rounds i = 0..s every cluster d claims alpha (eq. 11) points, each the
    steepest move towards d among the points outside d (erratum: "d = c_j" must read
    "c_j != d"), made even when Q rises."""
    for i in range(n_rounds + 1):
        for d in range(scorer.k):
            remaining = shaking_alpha(scorer.n, scorer.k, i, int(scorer.sizes[d]))
            batch = 1 if max_batches is None else max(1, -(-remaining // max_batches))
            while remaining > 0 and steps < max_iter:
                b = _claim(scorer, d, min(batch, remaining), on_move)
                if b == 0:
                    break
                remaining -= b
                steps += b
            if on_claim is not None:
                on_claim(i, d, scorer.c.copy())
    return steps, steps < max_iter


def _fill_empty(scorer, on_move):
    """Every empty cluster claims the one sample whose move to it costs least."""
    steps = 0
    for d in range(scorer.k):
        if scorer.sizes[d] == 0:
            if _claim(scorer, d, 1, on_move) == 0:
                break
            steps += 1
    return steps


def _run(scorer, search, n_rounds, *, max_iter, on_move=None, on_claim=None, max_batches=None,
         descent=False):
    """Run one search on ``scorer``; returns ``(moves, converged, descent_moves)``."""
    keep = scorer.keep_nonempty
    if search == "shaking":
        # the claims run as printed: a cluster emptied in the middle of the rounds claims
        # again in the next round; only the end point is repaired
        scorer.keep_nonempty = False
        try:
            steps, converged = _shaking(scorer, n_rounds, on_move, on_claim, max_batches, max_iter)
        finally:
            scorer.keep_nonempty = keep
        if keep:
            steps += _fill_empty(scorer, on_move)
        if not (descent and converged):
            return steps, converged, 0
        total, converged = _stochastic(scorer, on_move, max_iter, steps)
        return total, converged, total - steps
    steps = _fill_empty(scorer, on_move) if keep else 0
    if search == "steepest":
        return (*_steepest(scorer, on_move, max_iter, steps), 0)
    return (*_stochastic(scorer, on_move, max_iter, steps), 0)


def _held_clusters(scorer):
    """Single-sample clusters that only ``keep_nonempty`` keeps (a diagnosis, not counted)."""
    single = np.flatnonzero(scorer.sizes == 1)
    if single.size == 0:
        return []
    js = np.flatnonzero(np.isin(scorer.c, single))
    counts, keep = dict(scorer.counts), scorer.keep_nonempty
    scorer.keep_nonempty = False
    try:
        D = scorer.delta_rows(js)
    finally:
        scorer.keep_nonempty, scorer.counts = keep, counts
    return sorted(int(scorer.c[j]) for j, row in zip(js, D) if row.min() < -_TOL)


def _memory_bytes(n, n_clusters, n_components=None, itemsize=8, n_features=None, kernel="rbf"):
    """The formula of :meth:`UMCRLS.memory_bytes` (``n_components=None``: the dense path)."""
    if n_components is None:
        return int(16 * n * n + 8 * n * (3 * n_clusters + 40) + 8 * 2**20)
    r = min(n_components, n)
    b = itemsize * n * r + n * (itemsize * n_clusters + 72) + 40 * _BLOCK_ENTRIES
    if kernel == "linear":
        b += 16 * n * min(n, max(n if n_features is None else n_features, 1))
    elif kernel == "precomputed":
        b += 8 * n * n
    return int(b)


def _check_psd(s, K):
    """Refuse the precomputed kernel ``K`` when its smallest eigenvalue (in ``s``) is negative."""
    lam_min, scale = float(np.min(s)), max(1.0, float(np.max(np.abs(K))))
    if lam_min < -1e-8 * scale * K.shape[0]:
        raise ValueError(f"The precomputed kernel is not positive semidefinite: its smallest "
                         f"eigenvalue is {lam_min:.3g} (relative {lam_min / scale:.3g}). Use a "
                         "valid kernel, or clip the negative eigenvalues to zero.")


def _warn_tiny_alpha(alpha, s):
    """Warn when alpha is below the round-off of the eigenvalues s (n eps s_max): R = I."""
    s_max = float(np.max(s)) if np.size(s) else 0.0
    noise = 100.0 * np.size(s) * np.finfo(float).eps * s_max
    if s_max > 0 and alpha < noise:
        warnings.warn(
            f"UMCRLS: alpha={alpha:.3g} is below the round-off of the kernel's eigenvalues "
            f"(largest {s_max:.3g}, round-off ~{noise:.2g}): R = K (K + alpha I)^-1 is the "
            "identity up to round-off, every labelling has nearly the same cost and the "
            "labels are arbitrary. Use alpha in [2^-10, 2^-1] (the paper's range).",
            DegenerateDataWarning, stacklevel=3)


class UMCRLS(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """Unsupervised multi-class regularized least squares clustering (UMC-RLS).

    Finds labels c in {0..k-1}^n that minimise ``Q(c) = sum_h (n - p_h^T R p_h)`` (eq. 10),
    the summed cost of k one-vs-all RLS classifiers, by hill climbing with O(1) scores of
    single-point moves (Pahikkala et al. 2012 [1]_; the mathematics: :mod:`mmcedu.umc_rls`).

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k (the paper's |C|).
    alpha : float, default=0.125
        Regularization parameter lambda > 0 of eq. (3) (named as in ``KernelRidge``); the
        paper selects it from 2^-10..2^-1.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is the (n, n) kernel matrix K (square, finite, symmetric
        and positive semidefinite).
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``, for ``kernel="rbf"``; ``None``:
        the median heuristic (:func:`mmcedu.kernels.median_gamma`). The paper's width is
        :func:`mmcedu.kernels.max_distance_gamma`.
    search : {"shaking", "steepest", "stochastic"}, default="shaking"
        ``"stochastic"``: Algorithm 1 (Stoc-RLS); ``"steepest"``: Algorithm 2 (Steep-RLS);
        ``"shaking"``: Algorithm 3 (UMC-RLS), whose moves are made even when Q rises.
    n_rounds : int, default=20
        The paper's s, the number of shakings: Algorithm 3 runs the rounds i = 0, 1, ..., s.
    final_descent : bool, default=True
        With ``search="shaking"``: then run Algorithm 1 until no single move lowers Q
        (Algorithm 3 ends with every cluster near n/k samples, in general not a local minimum).
        ``False``: the paper's algorithm as printed.
    n_components : int, default=None
        Rank of a kernel approximation. ``None``: the exact R (memory about ``16 n^2`` bytes,
        time O(n^3)). An int r: a rank-r factor R = L L^T (Nystroem for ``"rbf"``, truncated
        SVD for ``"linear"``, the r leading eigenvectors for ``"precomputed"``); memory
        ``itemsize n r`` plus O(n k), time O(n r^2) plus O(n r k) per score evaluation.
        Algorithm 3 then claims points in at most 64 batches per claim.
    dtype : {"float64", "float32"}, default="float64"
        Type of the low-rank factor L (``"float32"`` halves its memory); the caches and Q stay
        float64. Ignored on the dense path.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial labelling (line 1 of Algorithms 1-3) and the Nystroem landmarks.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        ``n_clusters`` (no search leaves a cluster empty), or 1 for identical samples.
    objective_ : float
        Q(c) of eq. (10) (under the rank-r kernel when ``n_components`` is set).
    n_iter_ : int
        Single-point moves made, the final descent's included.
    converged_ : bool
        A single-move local minimum of Q was reached (Algorithm 3 without the final descent:
        its claims ended before the move limit).
    solver_info_ : dict
        ``"solver"`` (the search), ``"n_iter"``, ``"status"`` (``"converged"`` or
        ``"move limit"``), ``"n_descent_moves"`` (moves of the final descent) and
        ``"n_evaluations"`` (batches of move scores computed).
    gamma_ : float or None
        The RBF parameter used (``None`` for the linear and precomputed kernels).
    n_features_in_ : int

    Warns
    -----
    DegenerateDataWarning
        Identical samples (one cluster), an RBF kernel that is numerically the identity or
        all ones, or an ``alpha`` so small that R is the identity up to round-off.
    ClusterCountWarning
        Fewer distinct samples than ``n_clusters``, or a single-sample cluster that only the
        rule "every cluster is non-empty" keeps.
    BalanceWarning
        ``final_descent=False`` and a descent of Q from the end of Algorithm 3 would move more
        than 5 % of the samples (the claims of eq. 11 decided the sizes).
    ConvergenceWarning
        The search stopped at its move limit (100 n k + 1000 moves).
    UserWarning
        A fit of minutes: the dense path from n = 10,000 on, Algorithms 1-2 on the low-rank
        path from n = 20,000 on.

    Raises
    ------
    MemoryBudgetError
        Before allocating, when the fit needs more than the memory budget
        (:func:`mmcedu.get_config`); the message names ``n_components``.
    ValueError
        Fewer samples than clusters; squared distances that overflow or underflow; a
        precomputed kernel that is not square, finite, symmetric and positive semidefinite.

    See Also
    --------
    EMMC : alternating optimization of a regularized least-squares (ELM) fit and the labels.
    SDPMMC, GMMC : convex relaxations of maximum margin clustering (two clusters).

    Notes
    -----
    Clusters of very different sizes are a limitation of the *search*, not of Q: Algorithm
    3's claims push every cluster towards n/k samples. When small clusters are expected,
    compare ``objective_`` with Q of a candidate labelling (``R`` from :func:`hat_matrix`):
    a lower Q is a better answer to the same problem.

    Label-free rule (:meth:`label_free_rule`): the widths ``gamma = 2^j gamma_0``, j = -2..5
    (``gamma_0`` the median heuristic), chosen by transfer stability, near-ties (within 0.1)
    broken by :meth:`objective_contrast`. Q itself always prefers the narrowest kernel; a
    labelling that is stable and fits far better than chance marks a width with real clusters.

    References
    ----------
    .. [1] T. Pahikkala, A. Airola, F. Gieseke, O. Kramer. Unsupervised multi-class
       regularized least squares classification. ICDM 2012.

    Examples
    --------
    >>> from mmcedu import UMCRLS
    >>> from mmcedu.datasets import blobs
    >>> X, y = blobs(n_samples=150, centers=3, random_state=0)
    >>> model = UMCRLS(n_clusters=3, random_state=0).fit(X)
    >>> model.n_clusters_, sorted(set(model.labels_.tolist()))
    (3, [0, 1, 2])
    """

    _label_free_criterion = ("transfer_stability", "objective")
    _label_free_tolerance = 0.1

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "search": [StrOptions({"stochastic", "steepest", "shaking"})],
        "n_rounds": [Interval(Integral, 0, None, closed="left")],
        "final_descent": ["boolean"],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": [StrOptions({"float64", "float32"}), type],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, alpha=0.125, kernel="rbf", gamma=None, search="shaking",
                 n_rounds=20, final_descent=True, n_components=None, dtype="float64",
                 random_state=None):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.search = search
        self.n_rounds = n_rounds
        self.final_descent = final_descent
        self.n_components = n_components
        self.dtype = dtype
        self.random_state = random_state

    def _label_free_grid(self, X):
        return {"gamma": gamma_grid(X, octaves=LABEL_FREE_OCTAVES)}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        ``1 - Q(c) / E_sigma Q(sigma(c))`` with ``Q(c) = sum_h (n - p_h^T R p_h)`` (eq. 10), the
        exact ``R = K (K + alpha I)^-1`` of the kernel of ``X`` (after a low-rank fit too), c =
        ``labels_`` and ``n_clusters`` vectors p_h (an empty cluster's is -e); the chance level
        is the exact mean of Q over the labellings sigma(c) with the same cluster sizes
        (:func:`mmcedu.metrics.permutation_mean_quadratic`). 0: no better than chance; 1: Q = 0.
        A ratio because Q of *every* labelling falls as the kernel narrows (to
        ``k n alpha / (1 + alpha)``): raw Q values are not comparable across widths.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            The data of the fit (the kernel matrix for ``kernel="precomputed"``).
        random_state : ignored (the contrast is exact)

        Returns
        -------
        contrast : float
            NaN when the chance level is not positive.
        """
        check_is_fitted(self, "labels_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if X.shape[0] != self.labels_.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but the estimator was fitted on "
                             f"{self.labels_.shape[0]}: pass the data it was fitted on.")
        K = X if self.kernel == "precomputed" else kernel_matrix(X, self.kernel, self.gamma_)
        s, V = np.linalg.eigh((K + K.T) / 2)
        R = (V * _shrinkage(s, float(self.alpha))) @ V.T
        P = _class_vectors(self.labels_, max(self.n_clusters_, self.n_clusters))
        Q, Q_rand = P.size - float(np.sum(P * (R @ P))), P.size - permutation_mean_quadratic(R, P)
        return float(1.0 - Q / Q_rand) if Q_rand > 0 else np.nan

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once (besides X).

        The fit checks this number against the memory budget before it allocates. Dense path:
        ``16 n^2 + 8 n (3 k + 40) + 8 MiB`` (the kernel, then its eigenvectors and R; the caches;
        the median heuristic's sample). Low-rank path (r = min(n_components, n)):
        ``itemsize n r + n (itemsize k + 72) + 40 MiB`` (L, the product L G, the blocks of L),
        plus ``16 n min(n, d)`` for the thin SVD of ``kernel="linear"`` (d = ``n_features``, n
        when ``None``) or ``8 n^2`` for LAPACK's copy of a precomputed kernel.
        """
        return _memory_bytes(n_samples, self.n_clusters, self.n_components,
                             self._check_params().itemsize, n_features, self.kernel)

    def _check_params(self):
        for name in ("n_clusters", "n_rounds", "n_components"):
            if isinstance(getattr(self, name), bool):
                raise ValueError(f"The {name!r} parameter of UMCRLS must be an int, not a bool; "
                                 f"got {getattr(self, name)!r}.")
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}.")
        return dtype

    def _fit_identical(self, X):
        """Every sample identical: one cluster, with the closed-form Q (K = kappa e e^T)."""
        n = X.shape[0]
        warnings.warn(f"UMCRLS: all {n} samples are identical: there is no cluster structure; "
                      "every sample is put in cluster 0 (n_clusters_=1).",
                      DegenerateDataWarning, stacklevel=3)
        kappa = {"rbf": 1.0, "linear": float(X[0] @ X[0])}.get(self.kernel, float(X[0, 0]))
        # e^T R e = n (n kappa) / (n kappa + lambda), the same for every p_h
        self.objective_ = float(self.n_clusters * n * self.alpha / (n * kappa + self.alpha))
        self.labels_, self.n_clusters_, self.n_iter_, self.converged_ = np.zeros(n, np.intp), 1, 0, True
        self.solver_info_ = {"solver": None, "n_iter": 0, "status": "identical samples",
                             "n_descent_moves": 0, "n_evaluations": 0}
        return self

    def _dense_scorer(self, X, c):
        n = X.shape[0]
        low_rank = format_bytes(_memory_bytes(n, self.n_clusters, 200, 8, X.shape[1], self.kernel))
        check_memory(
            self.memory_bytes(n, X.shape[1]),
            what=f"UMCRLS's dense path (the n x n kernel, its eigenvectors and R for n = {n:,})",
            alternative=(f"Pass n_components (e.g. n_components=200) for the low-rank path: "
                         f"{low_rank} at r = 200, or less with dtype='float32'."))
        if n >= _DENSE_SLOW_N:
            warnings.warn(f"UMCRLS: the dense path at n = {n:,} needs an eigendecomposition of the "
                          f"n x n kernel, about {9 * float(n) ** 3:.1e} floating-point operations "
                          "(minutes). Pass n_components (e.g. 200) for the low-rank path, O(n r^2).",
                          UserWarning, stacklevel=3)
        if self.kernel == "precomputed":
            s, V = eigh(X, check_finite=False)
            _check_psd(s, X)
        else:
            K = kernel_matrix(X, self.kernel, self.gamma_)
            check_finite_result(
                K, what=f"The {self.kernel} kernel matrix of X",
                hint="the squared distances or inner products overflow; standardize X.")
            if self.kernel == "rbf":
                warn_degenerate_kernel(K, self.gamma_, who="UMCRLS", stacklevel=4)
            # K is dropped before R is formed: at most two n x n arrays live at once
            s, V = eigh(K.T, overwrite_a=True, check_finite=False)  # K.T: Fortran order, no copy
            del K
        R = _hat_from_eig(s, V, self.alpha)
        del V
        _warn_tiny_alpha(self.alpha, np.clip(s, 0.0, None))
        return _ExactScorer(R, c, self.n_clusters, keep_nonempty=True)

    def _low_rank_factor(self, X, r, rng, dtype):
        """Phi (n x r, ``dtype``) with K ~ Phi Phi^T, built block by block."""
        n = X.shape[0]
        if self.kernel == "rbf":
            ny = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=r, random_state=rng).fit(X)
            warn_degenerate_kernel(rbf_kernel(ny.components_, gamma=self.gamma_), self.gamma_,
                                   who="UMCRLS", stacklevel=5)
            Phi = np.empty((n, r), dtype=dtype)
            for rows in _row_blocks(n, r):
                Phi[rows] = ny.transform(X[rows])
            return Phi
        if self.kernel == "linear":
            U, sv, _ = np.linalg.svd(X, full_matrices=False)
            return np.asarray(U[:, :r] * sv[:r], dtype=dtype)
        # precomputed: only the r leading eigenpairs (a truncated eigensolver)
        _check_psd(eigh(X, eigvals_only=True, subset_by_index=[0, 0]), X)
        s, V = eigh(X, subset_by_index=[n - r, n - 1])
        return np.asarray(V * np.sqrt(np.clip(s, 0.0, None)), dtype=dtype)

    def _low_rank_scorer(self, X, c, rng, dtype):
        n, r = X.shape[0], min(self.n_components, X.shape[0])
        check_memory(self.memory_bytes(n, X.shape[1]),
                     what=f"UMCRLS's low-rank path (an n x r factor for n = {n:,}, r = {r})",
                     alternative="Use a smaller n_components, or dtype='float32' (half the factor).")
        if self.search != "shaking" and n >= _LOW_RANK_DESCENT_SLOW_N:
            warnings.warn(f"UMCRLS: search={self.search!r} on the low-rank path at n = {n:,} "
                          "makes about n moves of O(n r k) each (hours). Use search='shaking'.",
                          UserWarning, stacklevel=3)
        L = self._low_rank_factor(X, r, rng, dtype)
        check_finite_result(L, what="The low-rank kernel factor of X",
                            hint="the kernel overflows; standardize X.")
        _warn_tiny_alpha(self.alpha, _hat_factor_inplace(L, self.alpha))
        return _LowRankScorer(L, c, self.n_clusters, keep_nonempty=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` (or the precomputed kernel ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : ignored

        Returns
        -------
        self
        """
        dtype = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        if self.kernel == "precomputed":
            X = kernel_matrix(X, "precomputed")  # checked: square, finite, symmetric
        else:
            check_scale(X)
        n, k = X.shape[0], self.n_clusters
        check_n_clusters(n, k)
        rng = check_random_state(self.random_state)
        self.gamma_ = None
        if self.kernel == "rbf":
            self.gamma_ = median_gamma(X) if self.gamma is None else float(self.gamma)
        if bool(np.all(X == X[0, 0])) if self.kernel == "precomputed" else all_identical(X):
            return self._fit_identical(X)
        m = np.unique(X, axis=0).shape[0] if k > 2 and self.kernel != "precomputed" else k
        if m < k:
            warnings.warn(f"UMCRLS: X has only {m} distinct samples, fewer than n_clusters={k}: "
                          f"copies of one sample are put in different clusters. Ask for at most "
                          f"n_clusters={m}.", ClusterCountWarning, stacklevel=2)
        c = rng.randint(k, size=n).astype(np.intp)  # line 1 of Algorithms 1-3: uniform on C^n
        if self.n_components is None:
            self._search(self._dense_scorer(X, c), None)
        else:
            self._search(self._low_rank_scorer(X, c, rng, dtype), _MAX_BATCHES)
        return self

    def _search(self, scorer, max_batches):
        """Run the search on ``scorer``, set the fitted attributes, warn about the result."""
        n, k = scorer.n, self.n_clusters
        max_iter = 100 * n * k + 1000
        descent = self.final_descent and self.search == "shaking"
        n_iter, converged, descent_moves = _run(scorer, self.search, self.n_rounds,
                                                max_batches=max_batches, max_iter=max_iter,
                                                descent=descent)
        if not converged:
            warnings.warn(f"UMCRLS search={self.search!r} stopped after {n_iter} moves (the "
                          "limit 100 n k + 1000) without reaching a local minimum. Use "
                          "search='shaking'.", ConvergenceWarning, stacklevel=3)
        self.objective_ = scorer.objective()
        check_finite_result(np.asarray(self.objective_), what="UMCRLS's objective Q",
                            hint="the kernel or R overflowed; standardize X or use a larger alpha.")
        self.n_iter_, self.converged_ = int(n_iter), bool(converged)
        self.solver_info_ = {"solver": self.search, "n_iter": self.n_iter_,
                             "status": "converged" if converged else "move limit",
                             "n_descent_moves": int(descent_moves),
                             "n_evaluations": int(scorer.counts["evaluations"])}
        self.labels_ = np.unique(scorer.c, return_inverse=True)[1].astype(np.intp)
        self.n_clusters_ = int(self.labels_.max()) + 1
        held = _held_clusters(scorer)
        if held:
            warnings.warn(
                f"UMCRLS: {len(held)} of the n_clusters={k} clusters hold a single sample that "
                "would lower Q by joining another cluster; only the rule that every cluster is "
                "non-empty keeps them. Q prefers fewer clusters here (a kernel too wide or an "
                "alpha too large for this k), or the search is stuck: search='shaking' finds "
                "better labellings.", ClusterCountWarning, stacklevel=3)
        if self.search == "shaking" and not descent and converged:
            twin = scorer.copy()  # a descent from shaking's end point, on a copy: a diagnosis
            m = _stochastic(twin, None, max_iter)[0]
            if m > BALANCE_WARN_FRACTION * n:
                warnings.warn(
                    f"UMCRLS: the shaking rounds, whose claims (eq. 11) force every cluster "
                    f"towards n/k = {n / k:.0f} samples, decided the labels: a descent of Q "
                    f"from their end point would move {m} of {n} samples (sizes "
                    f"{sorted(np.bincount(self.labels_, minlength=k).tolist())} -> "
                    f"{sorted(twin.sizes.tolist())}). Set final_descent=True to let Q decide, "
                    "or check the cluster sizes.", BalanceWarning, stacklevel=3)
