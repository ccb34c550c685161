"""Unsupervised multi-class regularized least squares clustering (UMC-RLS).

Pahikkala, Airola, Gieseke and Kramer (2012), "Unsupervised multi-class regularized least
squares classification". A labelling ``c`` of the n samples into k clusters defines one
+-1 vector per cluster (eq. 8),

    p_h(c)_i = +1 if c_i = h else -1,

and one regularized least squares (RLS) classifier per cluster. The cost of the best RLS fit
to a +-1 vector ``y`` is (eq. 7, with G = (K + lambda I)^-1)

    F(y) = (y - K G y)^T (y - K G y) + lambda y^T G K G y = n - y^T R y,
    R = K (K + lambda I)^-1 = V diag(s / (s + lambda)) V^T          (Lemma 1, corrected)

and UMC-RLS minimises Q(c) = sum_h F(p_h(c)) (eq. 10) over the labellings by hill climbing.

Fast path (Appendix, Lemmas 2-3). Keep ``t_h = R p_h`` for every cluster. Flipping entry j
of ``y`` changes F by ``4 y_j t_j - 4 R_jj`` (eq. 13), so moving sample j from cluster
a = c_j to d != a changes Q by

    Delta(j, d) = 4 (t_a[j] - t_d[j]) - 8 R_jj,

in O(1); after the move ``t_a -= 2 R_j`` and ``t_d += 2 R_j`` in O(n).

Low-rank path (``n_components=r``). With K ~ Phi Phi^T (Nystroem factor, n x r),
R = L L^T with L = Phi U (S + lambda I)^-1/2 where Phi^T Phi = U S U^T. The caches become
``g_h = L^T p_h`` (r numbers per cluster, O(r) per move) and the scores of all n samples cost
O(n r k) per evaluation; no n x n matrix is ever formed (memory O(n r)). ``L`` is built block
by block in one n x r array (float64, or float32 to halve it). Because one evaluation now
costs O(n r k) instead of O(n), Algorithm 3 lets a cluster claim its alpha points in at most
``_MAX_BATCHES`` batches of the best-scoring points (a batch of one point, i.e. the paper's
exact rule, whenever alpha <= ``_MAX_BATCHES``).

Three search strategies (Section III): ``"stochastic"`` (Algorithm 1), ``"steepest"``
(Algorithm 2) and ``"shaking"`` (Algorithm 3, the paper's UMC-RLS). All three are written
once, against a *scorer* that provides Delta(j, d) and performs moves; the fast scorer, the
low-rank scorer and a naive scorer that retrains every classifier from eq. (7) for every
candidate (:func:`run_search` with ``naive=True``) are interchangeable, so the naive oracle
makes exactly the moves the fast path makes. Every scorer counts its work in ``counts``
(move scores computed, score evaluations, cache entries updated, linear systems solved), so
complexity claims can be checked on counts rather than clocks.

Two options that the estimator uses and :func:`run_search` offers:

* ``keep_nonempty``: the search space is the labellings with k non-empty clusters. A move
  of Algorithms 1-2 (and of the final descent) that would empty a cluster is not a
  candidate, and a cluster left empty by the random start (or by the last claims of
  Algorithm 3, which run as printed) first claims one sample (the one whose move costs
  least).
* ``descent``: after Algorithm 3, run Algorithm 1 from shaking's end point until no single
  move lowers Q. Shaking's last round makes every cluster claim up to about n/k samples, so
  its end point has (nearly) equal cluster sizes and is in general not a local minimum of Q.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import (
    all_identical,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from .balance import BALANCE_WARN_FRACTION
from .exceptions import BalanceWarning, ClusterCountWarning, DegenerateDataWarning
from .kernels import check_kernel_matrix, kernel_matrix, median_gamma, rbf_kernel

__all__ = [
    "UMCRLS",
    "hat_matrix",
    "low_rank_hat_factor",
    "rls_cost",
    "umc_objective",
    "flip_delta",
    "shaking_alpha",
    "run_search",
    "dense_path_bytes",
    "low_rank_path_bytes",
]

# Algorithm 3 on the low-rank path: a claim of alpha points uses at most this many score
# evaluations (batches of ceil(alpha / _MAX_BATCHES) best points).
_MAX_BATCHES = 64
# Algorithms 1 and 2 accept a move only when it lowers Q by more than this.
_TOL = 1e-9
# Rows of the n x r factor handled at once while it is built (bounds the temporaries).
_BLOCK_ENTRIES = 2**20
# The dense path warns about its O(n^3) eigendecomposition from this n on.
_DENSE_SLOW_N = 10_000
# Algorithms 1-2 on the low-rank path warn from this n on (about n moves of O(n r k) each).
_LOW_RANK_DESCENT_SLOW_N = 20_000
# A BalanceWarning is raised when the final descent moves more than BALANCE_WARN_FRACTION of n
# (mmcedu.balance).


# ---------------------------------------------------------------------------------------
# The mathematics, one function per formula (used by the chapter and the tests)
# ---------------------------------------------------------------------------------------


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not (
        math.isfinite(alpha) and alpha > 0
    ):
        raise ValueError(
            f"alpha (the paper's lambda) must be a positive finite number; got {alpha!r}. "
            "The paper selects it from 2^-10 .. 2^-1."
        )
    return float(alpha)


def _check_square(K, name="K"):
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix; got shape {K.shape}.")
    return K


def _dense_hat(K, alpha, *, overwrite=False):
    """``(R, s)``: R = V diag(s / (s + alpha)) V^T and the eigenvalues s of K (unclipped).

    Memory: the eigenvectors V (8 n^2 bytes, scaled in place by sqrt(s / (s + alpha))) and R
    (8 n^2); with ``overwrite=True`` LAPACK works in K's memory (then K is destroyed).
    """
    s, V = eigh(K, overwrite_a=overwrite, check_finite=False)
    return _hat_from_eig(s, V, alpha), s


def _hat_from_eig(s, V, alpha):
    """R = V diag(s / (s + alpha)) V^T; V is scaled in place (one more n x n array, R)."""
    sc = np.clip(s, 0.0, None)
    V *= np.sqrt(sc / (sc + alpha))
    return V @ V.T


def hat_matrix(K, alpha):
    """R = K (K + alpha I)^-1 = V diag(s / (s + alpha)) V^T (Lemma 1, eq. 12).

    ``alpha`` is the paper's lambda (> 0). Eigenvalues of K below zero (round-off of a PSD
    kernel) are clipped to zero. Memory: 16 n^2 bytes besides K.
    """
    alpha = _check_alpha(alpha)
    return _dense_hat(_check_square(K), alpha)[0]


def _hat_factor_inplace(Phi, alpha):
    """Overwrite Phi (n x r, float32 or float64) with L = Phi U (S + alpha I)^-1/2.

    ``Phi^T Phi = U S U^T`` is accumulated block by block, and L replaces Phi block by
    block, so no second n x r array exists. Returns ``S`` (the eigenvalues, clipped at 0).
    """
    n, r = Phi.shape
    block = max(1, _BLOCK_ENTRIES // max(r, 1))
    PtP = np.zeros((r, r))
    for st in range(0, n, block):
        B = np.asarray(Phi[st : st + block], dtype=np.float64)
        PtP += B.T @ B
    S, U = np.linalg.eigh(PtP)
    S = np.clip(S, 0.0, None)
    M = U / np.sqrt(S + alpha)
    for st in range(0, n, block):
        Phi[st : st + block] = np.asarray(Phi[st : st + block], dtype=np.float64) @ M
    return S


def low_rank_hat_factor(Phi, alpha):
    """L (n x r) with L L^T = R = Phi Phi^T (Phi Phi^T + alpha I)^-1, in O(n r^2).

    With Phi^T Phi = U S U^T, ``L = Phi U (S + alpha I)^-1/2`` (push-through identity:
    K (K + alpha I)^-1 = Phi (Phi^T Phi + alpha I)^-1 Phi^T for K = Phi Phi^T). Returns a new
    float64 array (Phi is not changed).
    """
    alpha = _check_alpha(alpha)
    L = np.array(Phi, dtype=float)
    if L.ndim != 2:
        raise ValueError(f"Phi must be a 2-D (n, r) factor; got shape {L.shape}.")
    _hat_factor_inplace(L, alpha)
    return L


def rls_cost(K, y, alpha):
    """F(y) of eq. (7), computed the long way: train RLS (eq. 5), then evaluate eq. (4).

    ``a = (K + alpha I)^-1 y`` (eq. 5) and ``F(y) = ||y - K a||^2 + alpha a^T K a``.
    ``y`` may be a matrix whose columns are several label vectors; the costs are summed.
    """
    alpha = _check_alpha(alpha)
    K = _check_square(K)
    y = np.asarray(y, dtype=float)
    if y.shape[0] != K.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but K is {K.shape[0]} x {K.shape[0]}.")
    return _rls_cost(K, y, alpha)


def _rls_cost(K, y, alpha):
    a = np.linalg.solve(K + alpha * np.eye(K.shape[0]), y)
    Ka = K @ a
    return float(np.sum((y - Ka) ** 2) + alpha * np.sum(a * Ka))


def _class_vectors(labels, n_clusters):
    """The k vectors p_h(c) of eq. (8) as the columns of an n x k matrix of +-1."""
    labels = np.asarray(labels)
    P = -np.ones((labels.shape[0], n_clusters))
    P[np.arange(labels.shape[0]), labels] = 1.0
    return P


def _check_labels(labels, n_clusters, n=None):
    labels = np.asarray(labels)
    if labels.ndim != 1 or (n is not None and labels.shape[0] != n):
        raise ValueError(f"labels must be a 1-D array of {n or 'n'} cluster indices; got shape "
                         f"{labels.shape}.")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        if not np.all(np.equal(np.mod(labels, 1), 0)):
            raise ValueError("labels must be integers 0..n_clusters-1.")
    labels = labels.astype(np.intp)
    if labels.size and (labels.min() < 0 or labels.max() >= n_clusters):
        raise ValueError(
            f"labels must lie in 0..n_clusters-1 = 0..{n_clusters - 1}; got values from "
            f"{labels.min()} to {labels.max()}. Pass n_clusters > max(labels) or relabel."
        )
    return labels


def umc_objective(K, labels, alpha, n_clusters=None):
    """Q(c) = sum_h F(p_h(c)) (eq. 10) with F from eq. (7), retraining every classifier.

    This is the naive oracle: O(n^3) per call. ``n_clusters`` defaults to ``max(labels)+1``;
    empty clusters still count (their p_h is -e).
    """
    alpha = _check_alpha(alpha)
    K = _check_square(K)
    labels = np.asarray(labels)
    if n_clusters is None:
        n_clusters = int(np.max(labels)) + 1 if labels.size else 1
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive int; got {n_clusters!r}.")
    labels = _check_labels(labels, int(n_clusters), K.shape[0])
    return _rls_cost(K, _class_vectors(labels, int(n_clusters)), alpha)


def flip_delta(R, y, j):
    """F(y') - F(y) for y' = y with entry j flipped: ``4 y_j (R y)_j - 4 R_jj`` (eq. 13)."""
    R = _check_square(R, "R")
    y = np.asarray(y, dtype=float)
    return float(4.0 * y[j] * (R[j] @ y) - 4.0 * R[j, j])


def shaking_alpha(n, n_clusters, i, size):
    """Points cluster d claims in round i of Algorithm 3 (eq. 11), never negative.

    alpha = floor(n / (2^i k) + n / k - |{h : c_h = d}|), computed in exact integer
    arithmetic as floor(n (1 + 2^i) / (2^i k)) - size, and clipped to [0, n - size].
    """
    for name, v, low in (("n", n, 0), ("n_clusters", n_clusters, 1), ("i", i, 0),
                         ("size", size, 0)):
        if isinstance(v, bool) or not isinstance(v, Integral) or v < low:
            raise ValueError(f"shaking_alpha: {name} must be an int >= {low}; got {v!r}.")
    if size > n:
        raise ValueError(f"shaking_alpha: size={size} exceeds n={n}.")
    a = (n * (1 + 2**i)) // (2**i * n_clusters) - size
    return int(min(max(a, 0), n - size))


def dense_path_bytes(n, n_clusters=2):
    """Peak bytes of ``UMCRLS(n_components=None)`` besides X:
    ``16 n^2 + 8 n (3 k + 40) + 8 MiB``.

    Two n x n arrays at once: computing the RBF kernel (distances, then the kernel in
    place), the kernel and its eigenvectors (LAPACK works in the kernel's memory, with O(n)
    workspace; the kernel is then dropped), the eigenvectors and R. The caches T (k x n)
    and the search's n-vectors are the ``8 n (3 k + 40)``; the median heuristic's sample
    of at most 1,000 rows the 8 MiB. (A precomputed kernel is the caller's array, besides
    these bytes.) Checked against ``tracemalloc`` in the tests.
    """
    return int(16 * n * n + 8 * n * (3 * n_clusters + 40) + 8 * 2**20)


def low_rank_path_bytes(n, n_components, n_clusters=2, *, itemsize=8, n_features=0,
                        kernel="rbf"):
    """Peak bytes of ``UMCRLS(n_components=r)`` besides X.

    ``itemsize n r`` for the factor L (one array), ``n (itemsize k + 72)`` for the product
    L G of one score evaluation and the search's n-vectors, ``40 x 2^20`` for the blocks in
    which L is built, plus for ``kernel="linear"`` the thin SVD of X (``16 n min(n, d)``) and
    for ``"precomputed"`` LAPACK's copy of the n x n input (``8 n^2``).
    """
    r = min(n_components, n)
    b = itemsize * n * r + n * (itemsize * n_clusters + 72) + 40 * _BLOCK_ENTRIES
    if kernel == "linear":
        b += 16 * n * min(n, max(n_features, 1))
    elif kernel == "precomputed":
        b += 8 * n * n
    return int(b)


# ---------------------------------------------------------------------------------------
# Scorers: Delta(j, d) and moves. Every scorer shares the label vector ``c`` it was given.
# ---------------------------------------------------------------------------------------


class _Scorer:
    """Bookkeeping shared by the scorers: labels, cluster sizes, counts, frozen samples.

    ``counts``: ``"scores"`` values Delta(j, d) computed; ``"evaluations"`` calls that
    computed a batch of them; ``"cache_updates"`` cache entries changed by moves;
    ``"solves"`` n x n linear systems solved (with k right-hand sides; naive scorer only).
    With ``keep_nonempty`` a sample that is alone in its cluster is frozen (no candidate).
    """

    max_chunk = 4096

    def __init__(self, c, k, keep_nonempty=False):
        self.c = c
        self.n, self.k = c.shape[0], k
        self.sizes = np.bincount(c, minlength=k).astype(np.intp)
        self.keep_nonempty = bool(keep_nonempty)
        self.counts = {"scores": 0, "evaluations": 0, "cache_updates": 0, "solves": 0}
        self._ar = np.arange(self.n)

    def _frozen(self, cj):
        return self.sizes[cj] <= 1

    def _relabel(self, j, d):
        self.sizes[self.c[j]] -= 1
        self.sizes[d] += 1
        self.c[j] = d

    def _relabel_many(self, js, d):
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
        m = len(js)
        D[np.arange(m), cj] = 0.0
        if self.keep_nonempty:
            D[self._frozen(cj)] = 0.0
        self.counts["evaluations"] += 1
        self.counts["scores"] += m * (self.k - 1)
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

    def delta_row(self, j):
        return self.delta_rows(np.array([j]))[0]

    def delta_all(self):
        return self.delta_rows(self._ar)

    def move_many(self, js, d):
        for j in np.asarray(js):
            self.move(int(j), d)


class _ExactScorer(_Scorer):
    """Caches t_h = R p_h (rows of T, k x n). Delta in O(1), a move in O(n)."""

    def __init__(self, R, c, k, keep_nonempty=False):
        super().__init__(c, k, keep_nonempty)
        self.R = R
        self.diag = np.diag(R).copy()
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
        a = self.c[j]
        Rj = self.R[j]
        self.T[a] -= 2.0 * Rj
        self.T[d] += 2.0 * Rj
        self._relabel(j, d)
        self.counts["cache_updates"] += 2 * self.n

    def objective(self):
        P = _class_vectors(self.c, self.k).T
        return float(self.k * self.n - np.sum(P * self.T))


class _LowRankScorer(_Scorer):
    """R = L L^T; caches g_h = L^T p_h (columns of G, r x k, float64). A move costs O(r).

    ``L`` may be float32 (half the memory traffic of the O(n r k) product ``L G`` that every
    evaluation of the n scores needs); ``G`` and the row norms R_jj stay float64.
    """

    def __init__(self, L, c, k, keep_nonempty=False):
        super().__init__(c, k, keep_nonempty)
        self.L = L
        self.diag = np.empty(self.n)
        self.G = np.zeros((L.shape[1], k))
        block = max(1, _BLOCK_ENTRIES // max(L.shape[1], 1))
        for st in range(0, self.n, block):  # in float64, without an n x r float64 copy
            B = np.asarray(L[st : st + block], dtype=np.float64)
            self.diag[st : st + block] = np.einsum("ij,ij->i", B, B)
            self.G += B.T @ _class_vectors(c[st : st + block], k)

    def _T(self):
        return self.L @ self.G.astype(self.L.dtype, copy=False)  # n x k, column h is t_h

    def delta_to(self, d):
        T = self._T()
        own = np.take_along_axis(T, self.c[:, None], axis=1)[:, 0]
        delta = 4.0 * (own.astype(np.float64) - T[:, d]) - 8.0 * self.diag
        return self._finish_to(delta, d)

    def delta_rows(self, js):
        cj = self.c[js]
        block = max(1, _BLOCK_ENTRIES // max(self.L.shape[1], 1))
        t = np.empty((len(js), self.k))
        for st in range(0, len(js), block):  # float64 rows of L, a block at a time
            t[st : st + block] = np.asarray(self.L[js[st : st + block]], dtype=np.float64) @ self.G
        own = t[np.arange(len(js)), cj]
        D = 4.0 * (own[:, None] - t) - 8.0 * self.diag[js][:, None]
        return self._finish_rows(D, js, cj)

    def move(self, j, d):
        a = self.c[j]
        Lj = np.asarray(self.L[j], dtype=np.float64)
        self.G[:, a] -= 2.0 * Lj
        self.G[:, d] += 2.0 * Lj
        self._relabel(j, d)
        self.counts["cache_updates"] += 2 * self.L.shape[1]

    def move_many(self, js, d):
        js = np.asarray(js)
        src = self.c[js]
        for a in np.unique(src):
            self.G[:, a] -= 2.0 * self.L[js[src == a]].sum(axis=0, dtype=np.float64)
        self.G[:, d] += 2.0 * self.L[js].sum(axis=0, dtype=np.float64)
        self._relabel_many(js, d)
        self.counts["cache_updates"] += 2 * self.L.shape[1] * (np.unique(src).size + 1)

    def objective(self):
        return float(self.k * self.n - np.sum(self.G**2))


class _NaiveScorer(_Scorer):
    """Recomputes Q(c') from eq. (7) for every candidate c' (retraining all classifiers).

    Each Q costs one n x n solve with k right-hand sides (counted in ``counts["solves"]``).
    """

    max_chunk = 1

    def __init__(self, K, alpha, c, k, keep_nonempty=False):
        super().__init__(c, k, keep_nonempty)
        self.K, self.alpha = K, alpha

    def _Q(self, c):
        self.counts["solves"] += 1
        return _rls_cost(self.K, _class_vectors(c, self.k), self.alpha)

    def _delta(self, j, d, Q0):
        trial = self.c.copy()
        trial[j] = d
        return self._Q(trial) - Q0

    def delta_to(self, d):
        Q0 = self._Q(self.c)
        skip = self.c == d
        if self.keep_nonempty:
            skip |= self._frozen(self.c)
        self.counts["evaluations"] += 1
        self.counts["scores"] += int(np.count_nonzero(~skip))
        return np.array(
            [np.inf if skip[j] else self._delta(j, d, Q0) for j in range(self.n)]
        )

    def delta_rows(self, js):
        Q0 = self._Q(self.c)
        D = np.zeros((len(js), self.k))
        for i, j in enumerate(js):
            if self.keep_nonempty and self._frozen(self.c[j]):
                continue
            for d in range(self.k):
                if d != self.c[j]:
                    D[i, d] = self._delta(j, d, Q0)
        self.counts["evaluations"] += 1
        self.counts["scores"] += int(np.count_nonzero(D))
        return D

    def move(self, j, d):
        self._relabel(j, d)

    def move_many(self, js, d):
        self._relabel_many(np.asarray(js), d)

    def objective(self):
        return self._Q(self.c)


# ---------------------------------------------------------------------------------------
# Algorithms 1-3, written once against the scorer interface
# ---------------------------------------------------------------------------------------


def _stochastic(scorer, on_move, max_iter, steps=0):
    """Algorithm 1: sweep j = 1..n, move j to argmin_d S(c, j, d) when that lowers Q.

    The scores of a chunk of consecutive samples are computed at once; the first sample of
    the chunk with an improving move is moved and the sweep resumes after it, so the moves
    are exactly those of the one-sample-at-a-time sweep.
    """
    n = scorer.n
    chunk = 1
    while True:
        moved = False
        j0 = 0
        while j0 < n:
            js = np.arange(j0, min(j0 + chunk, n))
            D = scorer.delta_rows(js)
            best = D.min(axis=1)
            hit = np.flatnonzero(best < -_TOL)  # erratum: "if c_j = d" must read "c_j != d"
            if hit.size == 0:
                j0 = int(js[-1]) + 1
                chunk = min(2 * chunk, scorer.max_chunk)
                continue
            i = int(hit[0])
            j, d = int(js[i]), int(np.argmin(D[i]))
            if on_move is not None:
                on_move(j, d, float(D[i, d]))
            scorer.move(j, d)
            steps += 1
            moved = True
            if steps >= max_iter:
                return steps, False
            j0 = j + 1
            chunk = max(1, min(chunk, scorer.max_chunk) // 4)
        if not moved:
            return steps, True


def _steepest(scorer, on_move, max_iter, steps=0):
    """Algorithm 2: make the single best move (j, d) while it lowers Q."""
    while steps < max_iter:
        D = scorer.delta_all()
        j, d = divmod(int(np.argmin(D)), scorer.k)
        if not D[j, d] < -_TOL:
            return steps, True
        if on_move is not None:
            on_move(j, d, float(D[j, d]))
        scorer.move(j, d)
        steps += 1
    return steps, False


def _best_claims(scorer, delta, b):
    """The b samples with the smallest finite ``delta`` (a claim of cluster d).

    With ``keep_nonempty`` no claim takes the last sample of a cluster: a cluster of size m
    gives at most m - 1 samples to one batch.
    """
    finite = int(np.count_nonzero(np.isfinite(delta)))
    b = min(b, finite)
    if b == 0:
        return np.empty(0, dtype=np.intp)
    js = np.argpartition(delta, b - 1)[:b]
    if not scorer.keep_nonempty:
        return js
    give = np.bincount(scorer.c[js], minlength=scorer.k)
    if np.all(give <= scorer.sizes - 1):
        return js
    cap = scorer.sizes - 1
    out = []
    for j in np.argsort(delta, kind="stable")[:finite]:
        a = scorer.c[j]
        if cap[a] > 0:
            cap[a] -= 1
            out.append(j)
            if len(out) == b:
                break
    return np.asarray(out, dtype=np.intp)


def _shaking(scorer, n_rounds, on_move, on_claim, max_batches, max_iter, steps=0):
    """Algorithm 3: in rounds i = 0..s every cluster d claims alpha (eq. 11) points.

    Each claimed point is the steepest move towards d among the points outside d
    (erratum: "d = c_j" must read "c_j != d"); the move is made even when Q rises.
    """
    n, k = scorer.n, scorer.k
    for i in range(n_rounds + 1):
        for d in range(k):
            alpha = shaking_alpha(n, k, i, int(scorer.sizes[d]))
            batch = 1 if max_batches is None else max(1, -(-alpha // max_batches))
            remaining = alpha
            while remaining > 0 and steps < max_iter:
                delta = scorer.delta_to(d)
                b = min(batch, remaining)
                if b == 1:
                    j = int(np.argmin(delta))
                    if not np.isfinite(delta[j]):
                        break  # every other sample is the last of its cluster
                    if on_move is not None:
                        on_move(j, d, float(delta[j]))
                    scorer.move(j, d)
                else:
                    js = _best_claims(scorer, delta, b)
                    if js.size == 0:
                        break
                    if on_move is not None:
                        for j in js:
                            on_move(int(j), d, float(delta[j]))
                    scorer.move_many(js, d)
                    b = js.size
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
            delta = scorer.delta_to(d)
            j = int(np.argmin(delta))
            if not np.isfinite(delta[j]):
                break
            if on_move is not None:
                on_move(j, d, float(delta[j]))
            scorer.move(j, d)
            steps += 1
    return steps


def _run(scorer, search, n_rounds, on_move=None, on_claim=None, max_batches=None, max_iter=None,
         descent=False):
    """Run one search on ``scorer``; returns ``(moves, converged, descent_moves)``."""
    if max_iter is None:
        max_iter = np.iinfo(np.int64).max
    keep = scorer.keep_nonempty
    if search == "shaking":
        # the claims run as printed: a cluster emptied in the middle of the rounds claims
        # again in the next round; only the end point is repaired
        scorer.keep_nonempty = False
        try:
            steps, converged = _shaking(scorer, n_rounds, on_move, on_claim, max_batches,
                                        max_iter)
        finally:
            scorer.keep_nonempty = keep
        if keep:
            steps += _fill_empty(scorer, on_move)
        if not (descent and converged):
            return steps, converged, 0
        before = steps
        steps, converged = _stochastic(scorer, on_move, max_iter, steps)
        return steps, converged, steps - before
    steps = _fill_empty(scorer, on_move) if keep else 0
    if search == "steepest":
        return (*_steepest(scorer, on_move, max_iter, steps), 0)
    if search == "stochastic":
        return (*_stochastic(scorer, on_move, max_iter, steps), 0)
    raise ValueError(f"search must be 'stochastic', 'steepest' or 'shaking', got {search!r}.")


def _descent_moves_from(scorer, max_iter):
    """Moves Algorithm 1 would make from the scorer's labels (run on a copy; a diagnosis)."""
    twin = scorer.copy()
    return _stochastic(twin, None, max_iter)[0], twin


def _held_clusters(scorer):
    """Clusters of one sample whose sample would lower Q by moving: only ``keep_nonempty``
    keeps them (a diagnosis; not counted)."""
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


def _initial_labels(n, k, rng):
    """Line 1 of Algorithms 1-3: c drawn uniformly from C^n."""
    return rng.randint(k, size=n).astype(np.intp)


def run_search(
    K,
    alpha,
    n_clusters,
    *,
    search="shaking",
    n_rounds=20,
    random_state=None,
    naive=False,
    R=None,
    L=None,
    init=None,
    on_move=None,
    on_claim=None,
    max_batches=None,
    max_iter=None,
    keep_nonempty=False,
    descent=False,
):
    """Run Algorithm 1, 2 or 3 on a kernel matrix and return what happened.

    The defaults are the paper's algorithms as printed (the estimator :class:`UMCRLS` uses
    ``keep_nonempty=True`` and, with shaking, ``descent=True``).

    Parameters
    ----------
    K : ndarray of shape (n, n) or None
        Kernel matrix (needed when ``naive=True`` or when neither ``R`` nor ``L`` is given).
    alpha : float
        The paper's lambda (> 0).
    n_clusters : int
    search : {"stochastic", "steepest", "shaking"}
    n_rounds : int
        The paper's s (Algorithm 3 runs rounds i = 0..s).
    random_state : int, RandomState or None
        Seeds the random initial labelling; the same seed gives the same start for the
        fast and the naive scorer.
    naive : bool
        Recompute Q from eq. (7) for every candidate instead of using eq. (13) and the caches.
    R, L : ndarray, optional
        A precomputed R (n x n) or low-rank factor L (R = L L^T, float64 or float32) to
        search with.
    init : array of int, optional
        Initial labels (otherwise drawn from ``random_state``).
    on_move : callable(j, d, delta), optional
        Called before every move with the change of Q it was predicted to make.
    on_claim : callable(i, d, labels), optional
        Algorithm 3: called after cluster d has claimed its points in round i.
    max_batches : int, optional
        Algorithm 3: claim in at most this many batches (``None``: one point at a time).
    max_iter : int, optional
        Stop after this many moves.
    keep_nonempty : bool, default=False
        Return n_clusters non-empty clusters: Algorithms 1-2 start by letting every empty
        cluster claim its cheapest sample and then make no move that empties a cluster;
        Algorithm 3 runs as printed and the empty clusters at its end claim their cheapest
        sample (before the descent, which keeps them non-empty).
    descent : bool, default=False
        Algorithm 3 only: afterwards run Algorithm 1 from its end point to a local minimum.

    Returns
    -------
    result : dict
        ``labels`` (final c), ``objective`` (Q(c), eq. 10), ``n_iter`` (moves made, the
        descent's included), ``converged`` (Algorithms 1-2 and the descent: a local minimum
        was reached; Algorithm 3 alone: the claims ended before ``max_iter``),
        ``descent_moves`` and ``counts`` (the scorer's work: ``scores`` move values
        Delta(j, d) computed, ``evaluations`` batches of them, ``cache_updates`` cache
        entries changed by moves, ``solves`` n x n linear systems solved -- only the naive
        scorer solves any; the final objective is not counted).
    """
    if search not in ("stochastic", "steepest", "shaking"):
        raise ValueError(f"search must be 'stochastic', 'steepest' or 'shaking', got {search!r}.")
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive int; got {n_clusters!r}.")
    if K is None and R is None and L is None:
        raise ValueError("Pass the kernel matrix K, or a hat matrix R, or a factor L.")
    if K is not None or naive:
        alpha = _check_alpha(alpha)
    source = K if K is not None else (R if R is not None else L)
    n = np.shape(source)[0]
    if init is None:
        rng = check_random_state(random_state)
        c = _initial_labels(n, n_clusters, rng)
    else:
        c = _check_labels(np.array(init), n_clusters, n).copy()
    if naive:
        scorer = _NaiveScorer(_check_square(K), alpha, c, n_clusters, keep_nonempty)
    elif L is not None:
        L = np.asarray(L)
        if L.dtype not in (np.float32, np.float64):
            L = L.astype(np.float64)
        scorer = _LowRankScorer(L, c, n_clusters, keep_nonempty)
    else:
        scorer = _ExactScorer(hat_matrix(K, alpha) if R is None else _check_square(R, "R"), c,
                              n_clusters, keep_nonempty)
    n_iter, converged, descent_moves = _run(
        scorer, search, n_rounds, on_move, on_claim, max_batches=max_batches, max_iter=max_iter,
        descent=descent,
    )
    counts = dict(scorer.counts)
    return {
        "labels": scorer.c,
        "objective": scorer.objective(),
        "n_iter": int(n_iter),
        "converged": bool(converged),
        "descent_moves": int(descent_moves),
        "counts": counts,
    }


# ---------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------


def _check_psd(s, scale, n, what="precomputed kernel", tol=1e-8):
    lam_min = float(np.min(s))
    if lam_min < -tol * scale * n:
        raise ValueError(
            f"The {what} is not positive semidefinite: its smallest eigenvalue is "
            f"{lam_min:.3g} (relative {lam_min / scale:.3g}). Use a valid kernel, or clip the "
            "negative eigenvalues to zero."
        )


def _warn_tiny_alpha(alpha, s, who="UMCRLS"):
    """R = I up to round-off when alpha is below the eigenvalues' round-off (n eps s_max)."""
    s_max = float(np.max(s)) if np.size(s) else 0.0
    noise = 100.0 * np.size(s) * np.finfo(float).eps * s_max
    if s_max > 0 and alpha < noise:
        warnings.warn(
            f"{who}: alpha={alpha:.3g} is below the round-off of the kernel's eigenvalues "
            f"(largest {s_max:.3g}, round-off ~{noise:.2g}): R = K (K + alpha I)^-1 is the "
            "identity up to round-off, every labelling has nearly the same cost and the "
            "labels are arbitrary. Use alpha in [2^-10, 2^-1] (the paper's range).",
            DegenerateDataWarning,
            stacklevel=3,
        )
        return True
    return False


class UMCRLS(ClusterMixin, BaseEstimator):
    """Unsupervised multi-class regularized least squares clustering (UMC-RLS).

    Finds labels ``c`` in {0..k-1}^n that minimise ``Q(c) = sum_h F(p_h(c))`` (eq. 10),
    the summed cost of k one-vs-all regularized least squares classifiers trained on the
    +-1 vectors ``p_h(c)`` (eq. 8), by hill climbing with O(1) evaluation of every
    single-point move (Appendix, eq. 13), as in Pahikkala et al. (2012) [1]_.

    Symbols: n samples, k = ``n_clusters`` clusters (the paper's |C|), lambda = ``alpha``,
    K the kernel matrix, ``R = K (K + lambda I)^-1`` (eq. 12), ``F(y) = n - y^T R y``
    (Lemma 1, corrected), s = ``n_rounds``, r = ``n_components``.

    Every search returns k non-empty clusters (the paper's search space C^n with every
    class present): Algorithms 1-2 and the final descent make no move that empties a
    cluster, and a cluster left empty by the random start or by the end of Algorithm 3
    claims the sample whose move costs least. So ``n_clusters_ == n_clusters`` except for
    identical samples (one cluster, with a warning).

    Clusters of very different sizes are a limitation of the *search*, not of Q. Algorithm
    3's claims (eq. 11) push every cluster towards n/k samples and the final descent, made
    of single-point moves, does not undo the split of a large cluster. On one blob of 38
    points and 2 far points (k = 2) the true labelling has Q = 0.94 while every search ends
    in a local minimum with Q = 12.1 (sizes 23/17). When small clusters are expected,
    compare ``objective_`` with :func:`umc_objective` of a candidate labelling (k-means',
    say): a candidate with a lower Q is a better answer to the same problem.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    alpha : float, default=0.125
        Regularization parameter lambda > 0 of eq. (3) (named as in ``KernelRidge``).
        The paper selects it from 2^-10..2^-1; the default 2^-3 is the value that did best
        with the median-heuristic width on standardized data (the book's defaults study).
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is the (n, n) kernel matrix K (square, finite, symmetric
        and positive semidefinite).
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``. ``None`` means the median
        heuristic :func:`mmcedu.kernels.median_gamma`. The paper's width (sigma = 0.5 x the
        largest pairwise distance in ``exp(-d^2 / sigma^2)``) is
        :func:`mmcedu.kernels.max_distance_gamma`. Ignored unless ``kernel="rbf"``.
    search : {"shaking", "steepest", "stochastic"}, default="shaking"
        ``"stochastic"``: Algorithm 1 (Stoc-RLS); ``"steepest"``: Algorithm 2 (Steep-RLS);
        ``"shaking"``: Algorithm 3 (UMC-RLS), whose moves are made even when Q rises.
    n_rounds : int, default=20
        The paper's s, the shaking rounds: Algorithm 3 runs the rounds i = 0, 1, ..., s.
        Ignored by the other searches.
    final_descent : bool, default=True
        With ``search="shaking"``: after Algorithm 3, run Algorithm 1 from its end point
        until no single move lowers Q. Algorithm 3 ends with every cluster at about n/k
        samples, which is in general not a local minimum of Q; the descent keeps shaking's
        choice of basin but lets the sizes follow the objective. ``False`` is the paper's
        algorithm as printed. Ignored by the other searches.
    n_components : int, default=None
        Rank of a kernel approximation. ``None``: exact R (memory about ``16 n^2`` bytes, see
        :func:`dense_path_bytes`; time O(n^3) for the eigendecomposition). An int r: rank-r
        factor R = L L^T (Nystroem for ``"rbf"``, truncated SVD for ``"linear"``, the r
        leading eigenvectors for ``"precomputed"``); memory ``itemsize n r`` plus O(n k)
        (:func:`low_rank_path_bytes`), time O(n r^2) for the factor and O(n r k) per score
        evaluation. Algorithm 3 then claims points in at most 64 batches per claim (exactly
        one point at a time when a claim has <= 64 points).
    dtype : {"float64", "float32"}, default="float64"
        Floating type of the low-rank factor L (``n_components`` set): ``"float32"``
        halves its memory (4 n r bytes) and the memory traffic of each score evaluation;
        the caches and Q stay float64. Ignored on the dense path.
    random_state : int, RandomState instance or None, default=None
        Seed of the random initial labelling (line 1 of Algorithms 1-3) and of the Nystroem
        landmarks.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every sample, 0..n_clusters_-1.
    n_clusters_ : int
        Number of clusters in ``labels_``: ``n_clusters``, or 1 for identical samples.
    objective_ : float
        Q(c) of eq. (10) for the found labelling (with k clusters; under the rank-r kernel
        when ``n_components`` is set).
    n_iter_ : int
        Number of single-point moves made (the "steepest descent steps" of Fig. 5; the
        final descent's moves included).
    n_descent_moves_ : int
        Moves of the final descent (0 unless ``search="shaking"`` and ``final_descent``).
    n_evaluations_ : int
        Number of evaluations of a batch of move scores Delta(j, d) (one claim step of
        Algorithm 3, one chunk of Algorithm 1, one step of Algorithm 2). On the low-rank
        path each costs one product L G, O(n r k): the cost of the search.
    converged_ : bool
        A single-move local minimum of Q was reached (Algorithms 1-2, and Algorithm 3 with
        ``final_descent``). Algorithm 3 alone: True when its claims ended before the move
        limit.
    gamma_ : float or None
        The RBF parameter used (``None`` for the linear and precomputed kernels).
    n_features_in_ : int

    Warns
    -----
    DegenerateDataWarning
        The samples are all identical (one cluster is returned), the RBF kernel is
        numerically the identity or all ones (the labels are arbitrary: change ``gamma``),
        or ``alpha`` is so small that R is the identity up to round-off.
    ClusterCountWarning
        ``X`` has fewer distinct samples than ``n_clusters`` (copies of one sample were put
        in different clusters), or a cluster of a single sample survives only because
        clusters must stay non-empty (Q would move that sample: Q prefers fewer clusters,
        or a descent search is stuck).
    BalanceWarning
        With ``final_descent=False``: a descent of Q from the end point of Algorithm 3
        would move more than 5 % of the samples, so the claims of eq. (11), which force
        every cluster towards n/k samples, decided the labels. Check the sizes, or use
        ``final_descent=True``.
    ConvergenceWarning
        The search stopped at its move limit (100 n k + 1000 moves) before a local minimum.
    UserWarning
        A path that will take minutes: the dense path from n = 10,000 on (an O(n^3)
        eigendecomposition), Algorithms 1-2 on the low-rank path from n = 20,000 on.

    Raises
    ------
    MemoryBudgetError
        Before allocating, when the chosen path needs more than the memory budget
        (:func:`mmcedu.get_config`); the message names ``n_components``.
    ValueError
        Fewer samples than clusters; entries so large or so close that squared distances
        overflow or underflow; a precomputed kernel that is not square, finite, symmetric
        and positive semidefinite.

    See Also
    --------
    EMMC : alternating optimization of a regularized least-squares (ELM) fit and the labels.
    SDPMMC, GMMC : convex relaxations of maximum margin clustering (two clusters).

    References
    ----------
    .. [1] T. Pahikkala, A. Airola, F. Gieseke, O. Kramer. Unsupervised multi-class
       regularized least squares classification. ICDM 2012. Eqs. (7), (8), (10), (11),
       (12), (13); Algorithms 1-3; Lemmas 1-3.

    Examples
    --------
    >>> from mmcedu import UMCRLS
    >>> from mmcedu.datasets import blobs
    >>> X, y = blobs(n_samples=150, centers=3, random_state=0)
    >>> model = UMCRLS(n_clusters=3, random_state=0).fit(X)
    >>> model.n_clusters_, sorted(set(model.labels_.tolist()))
    (3, [0, 1, 2])
    """

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

    def __init__(
        self,
        n_clusters=2,
        *,
        alpha=0.125,
        kernel="rbf",
        gamma=None,
        search="shaking",
        n_rounds=20,
        final_descent=True,
        n_components=None,
        dtype="float64",
        random_state=None,
    ):
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # -- checks ---------------------------------------------------------------------------

    def _check_params(self):
        for name in ("n_clusters", "n_rounds", "n_components"):
            if isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"The {name!r} parameter of UMCRLS must be an int, not a bool; got "
                    f"{getattr(self, name)!r}."
                )
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}.")
        return dtype

    def _identical(self, X):
        if self.kernel == "precomputed":
            return X.size > 0 and bool(np.all(X == X[0, 0]))
        return all_identical(X)

    def _fit_identical(self, X):
        """Every sample identical: one cluster, with the closed-form Q (K = kappa e e^T)."""
        n, k = X.shape[0], self.n_clusters
        warnings.warn(
            f"UMCRLS: all {n} samples are identical: there is no cluster structure; every "
            "sample is put in cluster 0 (n_clusters_=1).",
            DegenerateDataWarning,
            stacklevel=3,
        )
        if self.kernel == "rbf":
            kappa = 1.0
        elif self.kernel == "linear":
            kappa = float(X[0] @ X[0])
        else:
            kappa = float(X[0, 0])
        # K = kappa e e^T: e^T R e = n (n kappa) / (n kappa + lambda), the same for every p_h
        self.objective_ = float(k * n * self.alpha / (n * kappa + self.alpha))
        self.labels_ = np.zeros(n, dtype=np.intp)
        self.n_clusters_ = 1
        self.n_iter_ = 0
        self.n_descent_moves_ = 0
        self.n_evaluations_ = 0
        self.converged_ = True
        return self

    def _warn_distinct(self, X):
        if self.n_clusters <= 2 or self.kernel == "precomputed":
            return
        m = np.unique(X, axis=0).shape[0]
        if m < self.n_clusters:
            warnings.warn(
                f"UMCRLS: X has only {m} distinct samples, fewer than n_clusters="
                f"{self.n_clusters}: copies of one sample are put in different clusters. Ask "
                f"for at most n_clusters={m}.",
                ClusterCountWarning,
                stacklevel=3,
            )

    # -- the two paths --------------------------------------------------------------------

    def _dense_scorer(self, X, c):
        n, k = X.shape[0], self.n_clusters
        check_memory(
            dense_path_bytes(n, k),
            what=f"UMCRLS's dense path (the n x n kernel, its eigenvectors and R for n = {n:,})",
            alternative=(
                f"Pass n_components (e.g. n_components=200) for the low-rank path: "
                f"{format_bytes(low_rank_path_bytes(n, 200, k, n_features=X.shape[1], kernel=self.kernel))}"
                " at r = 200, or less with dtype='float32'."
            ),
        )
        if n >= _DENSE_SLOW_N:
            warnings.warn(
                f"UMCRLS: the dense path at n = {n:,} needs an eigendecomposition of the n x n "
                f"kernel, about {9 * float(n) ** 3:.1e} floating-point operations (minutes). "
                "Pass n_components (e.g. 200) for the low-rank path, O(n r^2).",
                UserWarning,
                stacklevel=3,
            )
        if self.kernel == "precomputed":
            scale = max(1.0, float(np.max(np.abs(X))))
            R, s = _dense_hat(X, self.alpha, overwrite=False)
            _check_psd(s, scale, n)
        else:
            K = kernel_matrix(X, self.kernel, self.gamma_)
            check_finite_result(
                K, what=f"The {self.kernel} kernel matrix of X",
                hint="the squared distances or inner products overflow; standardize X.",
            )
            if self.kernel == "rbf":
                warn_degenerate_kernel(K, self.gamma_, who="UMCRLS", stacklevel=4)
            # K is dropped before R is formed: at most two n x n arrays live at once
            s, V = eigh(K.T, overwrite_a=True, check_finite=False)  # K.T: Fortran order, no copy
            del K
            R = _hat_from_eig(s, V, self.alpha)
            del V
        _warn_tiny_alpha(self.alpha, np.clip(s, 0.0, None))
        return _ExactScorer(R, c, k, keep_nonempty=True)

    def _low_rank_scorer(self, X, c, rng, dtype):
        n, k = X.shape[0], self.n_clusters
        r = min(self.n_components, n)
        check_memory(
            low_rank_path_bytes(n, r, k, itemsize=dtype.itemsize, n_features=X.shape[1],
                                kernel=self.kernel),
            what=f"UMCRLS's low-rank path (an n x r factor for n = {n:,}, r = {r})",
            alternative="Use a smaller n_components, or dtype='float32' (half the factor).",
        )
        if self.search != "shaking" and n >= _LOW_RANK_DESCENT_SLOW_N:
            warnings.warn(
                f"UMCRLS: search={self.search!r} on the low-rank path at n = {n:,} makes "
                "about n moves of O(n r k) each (hours). Use search='shaking'.",
                UserWarning,
                stacklevel=3,
            )
        if self.kernel == "rbf":
            ny = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=r, random_state=rng)
            ny.fit(X)
            warn_degenerate_kernel(rbf_kernel(ny.components_, gamma=self.gamma_), self.gamma_,
                                   who="UMCRLS", stacklevel=4)
            L = np.empty((n, r), dtype=dtype)
            block = max(1, _BLOCK_ENTRIES // r)
            for st in range(0, n, block):
                L[st : st + block] = ny.transform(X[st : st + block])
        elif self.kernel == "linear":
            U, sv, _ = np.linalg.svd(X, full_matrices=False)
            L = np.asarray(U[:, :r] * sv[:r], dtype=dtype)
            del U
        else:  # precomputed: only the r leading eigenpairs (a truncated eigensolver)
            scale = max(1.0, float(np.max(np.abs(X))))
            _check_psd(eigh(X, eigvals_only=True, subset_by_index=[0, 0]), scale, n)
            s, V = eigh(X, subset_by_index=[n - r, n - 1])
            L = np.asarray(V * np.sqrt(np.clip(s, 0.0, None)), dtype=dtype)
            del V
        check_finite_result(
            L, what="The low-rank kernel factor of X",
            hint="the kernel overflows; standardize X.",
        )
        S = _hat_factor_inplace(L, self.alpha)
        _warn_tiny_alpha(self.alpha, S)
        return _LowRankScorer(L, c, k, keep_nonempty=True)

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
        n = X.shape[0]
        if self.kernel == "precomputed":
            X = check_kernel_matrix(X)
        else:
            check_scale(X)
        check_n_clusters(n, self.n_clusters)
        rng = check_random_state(self.random_state)
        k = self.n_clusters
        if self.kernel == "rbf":
            self.gamma_ = median_gamma(X) if self.gamma is None else float(self.gamma)
        else:
            self.gamma_ = None
        if self._identical(X):
            return self._fit_identical(X)
        self._warn_distinct(X)
        c = _initial_labels(n, k, rng)
        if self.n_components is None:
            scorer = self._dense_scorer(X, c)
            max_batches = None
        else:
            scorer = self._low_rank_scorer(X, c, rng, dtype)
            max_batches = _MAX_BATCHES
        max_iter = 100 * n * k + 1000
        descent = self.final_descent and self.search == "shaking"
        n_iter, converged, descent_moves = _run(
            scorer, self.search, self.n_rounds, max_batches=max_batches, max_iter=max_iter,
            descent=descent,
        )
        if not converged:
            warnings.warn(
                f"UMCRLS search={self.search!r} stopped after {n_iter} moves (the limit "
                f"100 n k + 1000) without reaching a local minimum. Use search='shaking'.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.objective_ = scorer.objective()
        check_finite_result(
            np.asarray(self.objective_), what="UMCRLS's objective Q",
            hint="the kernel or R overflowed; standardize X or use a larger alpha.",
        )
        self.n_iter_ = int(n_iter)
        self.n_descent_moves_ = int(descent_moves)
        self.n_evaluations_ = int(scorer.counts["evaluations"])
        self.converged_ = bool(converged)
        self.labels_ = np.unique(scorer.c, return_inverse=True)[1].astype(np.intp)
        self.n_clusters_ = int(self.labels_.max()) + 1
        if self.n_clusters_ < k:  # not expected: every search keeps the clusters non-empty
            warnings.warn(
                f"UMCRLS returned {self.n_clusters_} of n_clusters={k} clusters.",
                ClusterCountWarning,
                stacklevel=2,
            )
        held = _held_clusters(scorer)
        if held:
            warnings.warn(
                f"UMCRLS: {len(held)} of the n_clusters={k} clusters hold a single sample that "
                "would lower Q by joining another cluster; only the rule that every cluster is "
                "non-empty keeps them. Q prefers fewer clusters here (a kernel too wide or an "
                "alpha too large for this k), or the search is stuck: search='shaking' finds "
                "better labellings.",
                ClusterCountWarning,
                stacklevel=2,
            )
        if self.search == "shaking" and not descent and converged:
            m, twin = _descent_moves_from(scorer, max_iter)
            if m > BALANCE_WARN_FRACTION * n:
                sizes = np.bincount(self.labels_, minlength=k)
                warnings.warn(
                    f"UMCRLS: the shaking rounds, whose claims (eq. 11) force every cluster "
                    f"towards n/k = {n / k:.0f} samples, decided the labels: a descent of Q "
                    f"from their end point would move {m} of {n} samples (sizes "
                    f"{sorted(sizes.tolist())} -> {sorted(twin.sizes.tolist())}). Set "
                    "final_descent=True to let Q decide, or check the cluster sizes.",
                    BalanceWarning,
                    stacklevel=2,
                )
        return self
