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
O(n r k) per evaluation; no n x n matrix is ever formed (memory O(n r)). Because one
evaluation now costs O(n r) instead of O(n), Algorithm 3 lets a cluster claim its alpha
points in at most ``_MAX_BATCHES`` batches of the best-scoring points (a batch of one point,
i.e. the paper's exact rule, whenever alpha <= ``_MAX_BATCHES``).

Three search strategies (Section III): ``"stochastic"`` (Algorithm 1), ``"steepest"``
(Algorithm 2) and ``"shaking"`` (Algorithm 3, the paper's UMC-RLS). All three are written
once, against a *scorer* that provides Delta(j, d) and performs moves; the fast scorer, the
low-rank scorer and a naive scorer that retrains every classifier from eq. (7) for every
candidate (:func:`run_search` with ``naive=True``) are interchangeable, so the naive oracle
makes exactly the moves the fast path makes.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import check_n_clusters
from .kernels import (
    check_kernel_matrix,
    gamma_from_sigma,
    kernel_matrix,
    nystroem_factor,
    pairwise_distance_range,
)

__all__ = [
    "UMCRLS",
    "hat_matrix",
    "low_rank_hat_factor",
    "rls_cost",
    "umc_objective",
    "flip_delta",
    "shaking_alpha",
    "run_search",
    "default_gamma",
]

# Algorithm 3 on the low-rank path: a claim of alpha points uses at most this many score
# evaluations (batches of ceil(alpha / _MAX_BATCHES) best points).
_MAX_BATCHES = 64
# Algorithms 1 and 2 accept a move only when it lowers Q by more than this.
_TOL = 1e-9


# ---------------------------------------------------------------------------------------
# The mathematics, one function per formula (used by the chapter and the tests)
# ---------------------------------------------------------------------------------------


def hat_matrix(K, alpha):
    """R = K (K + alpha I)^-1 = V diag(s / (s + alpha)) V^T (Lemma 1, eq. 12).

    ``alpha`` is the paper's lambda. Eigenvalues of K below zero (round-off of a PSD
    kernel) are clipped to zero.
    """
    K = np.asarray(K, dtype=float)
    s, V = np.linalg.eigh(K)
    s = np.clip(s, 0.0, None)
    return (V * (s / (s + alpha))) @ V.T


def low_rank_hat_factor(Phi, alpha):
    """L (n x r) with L L^T = R = Phi Phi^T (Phi Phi^T + alpha I)^-1, in O(n r^2).

    With Phi^T Phi = U S U^T, ``L = Phi U (S + alpha I)^-1/2`` (push-through identity:
    K (K + alpha I)^-1 = Phi (Phi^T Phi + alpha I)^-1 Phi^T for K = Phi Phi^T).
    """
    Phi = np.asarray(Phi, dtype=float)
    S, U = np.linalg.eigh(Phi.T @ Phi)
    S = np.clip(S, 0.0, None)
    return Phi @ (U / np.sqrt(S + alpha))


def rls_cost(K, y, alpha):
    """F(y) of eq. (7), computed the long way: train RLS (eq. 5), then evaluate eq. (4).

    ``a = (K + alpha I)^-1 y`` (eq. 5) and ``F(y) = ||y - K a||^2 + alpha a^T K a``.
    ``y`` may be a matrix whose columns are several label vectors; the costs are summed.
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    a = np.linalg.solve(K + alpha * np.eye(K.shape[0]), y)
    Ka = K @ a
    return float(np.sum((y - Ka) ** 2) + alpha * np.sum(a * Ka))


def _class_vectors(labels, n_clusters):
    """The k vectors p_h(c) of eq. (8) as the columns of an n x k matrix of +-1."""
    labels = np.asarray(labels)
    P = -np.ones((labels.shape[0], n_clusters))
    P[np.arange(labels.shape[0]), labels] = 1.0
    return P


def umc_objective(K, labels, alpha, n_clusters=None):
    """Q(c) = sum_h F(p_h(c)) (eq. 10) with F from eq. (7), retraining every classifier.

    This is the naive oracle: O(n^3) per call. ``n_clusters`` defaults to ``max(labels)+1``;
    empty clusters still count (their p_h is -e).
    """
    labels = np.asarray(labels, dtype=int)
    k = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    return rls_cost(K, _class_vectors(labels, k), alpha)


def flip_delta(R, y, j):
    """F(y') - F(y) for y' = y with entry j flipped: ``4 y_j (R y)_j - 4 R_jj`` (eq. 13)."""
    R = np.asarray(R, dtype=float)
    y = np.asarray(y, dtype=float)
    return float(4.0 * y[j] * (R[j] @ y) - 4.0 * R[j, j])


def shaking_alpha(n, n_clusters, i, size):
    """Points cluster d claims in round i of Algorithm 3 (eq. 11), never negative.

    alpha = floor(n / (2^i k) + n / k - |{h : c_h = d}|), computed in exact integer
    arithmetic as floor(n (1 + 2^i) / (2^i k)) - size, and clipped to [0, n - size].
    """
    a = (n * (1 + 2**i)) // (2**i * n_clusters) - size
    return int(min(max(a, 0), n - size))


def default_gamma(X, fraction=0.5):
    """gamma of the paper's kernel exp(-d^2 / sigma^2) with sigma = fraction x max distance."""
    d = pairwise_distance_range(X)[1]
    if d <= 0:
        return 1.0
    return gamma_from_sigma(fraction * d, convention="sigma_squared")


# ---------------------------------------------------------------------------------------
# Scorers: Delta(j, d) and moves. Every scorer shares the label vector ``c`` it was given.
# ---------------------------------------------------------------------------------------


class _ExactScorer:
    """Caches t_h = R p_h (rows of T, k x n). Delta in O(1), a move in O(n)."""

    def __init__(self, R, c, k):
        self.R = R
        self.c = c
        self.n, self.k = c.shape[0], k
        self.diag = np.diag(R).copy()
        self._ar = np.arange(self.n)
        self.T = _class_vectors(c, k).T @ R  # row h: t_h = R p_h (R symmetric)

    def delta_to(self, d):
        own = self.T[self.c, self._ar]
        delta = 4.0 * (own - self.T[d]) - 8.0 * self.diag
        delta[self.c == d] = np.inf
        return delta

    def delta_row(self, j):
        t = self.T[:, j]
        row = 4.0 * (t[self.c[j]] - t) - 8.0 * self.diag[j]
        row[self.c[j]] = 0.0
        return row

    def delta_all(self):
        own = self.T[self.c, self._ar]
        D = 4.0 * (own[None, :] - self.T) - 8.0 * self.diag[None, :]
        D[self.c, self._ar] = 0.0
        return D.T

    def move(self, j, d):
        a = self.c[j]
        Rj = self.R[j]
        self.T[a] -= 2.0 * Rj
        self.T[d] += 2.0 * Rj
        self.c[j] = d

    def move_many(self, js, d):
        for j in js:
            self.move(j, d)

    def objective(self):
        P = _class_vectors(self.c, self.k).T
        return float(self.k * self.n - np.sum(P * self.T))


class _LowRankScorer:
    """R = L L^T; caches g_h = L^T p_h (columns of G, r x k). A move costs O(r)."""

    def __init__(self, L, c, k):
        self.L = L
        self.c = c
        self.n, self.k = c.shape[0], k
        self.diag = np.einsum("ij,ij->i", L, L)
        self._ar = np.arange(self.n)
        self.G = L.T @ _class_vectors(c, k)

    def _T(self):
        return self.L @ self.G  # n x k, column h is t_h

    def delta_to(self, d):
        T = self._T()
        delta = 4.0 * (T[self._ar, self.c] - T[:, d]) - 8.0 * self.diag
        delta[self.c == d] = np.inf
        return delta

    def delta_row(self, j):
        t = self.L[j] @ self.G
        row = 4.0 * (t[self.c[j]] - t) - 8.0 * self.diag[j]
        row[self.c[j]] = 0.0
        return row

    def delta_all(self):
        T = self._T()
        D = 4.0 * (T[self._ar, self.c][:, None] - T) - 8.0 * self.diag[:, None]
        D[self._ar, self.c] = 0.0
        return D

    def move(self, j, d):
        a = self.c[j]
        self.G[:, a] -= 2.0 * self.L[j]
        self.G[:, d] += 2.0 * self.L[j]
        self.c[j] = d

    def move_many(self, js, d):
        js = np.asarray(js)
        src = self.c[js]
        for a in np.unique(src):
            self.G[:, a] -= 2.0 * self.L[js[src == a]].sum(axis=0)
        self.G[:, d] += 2.0 * self.L[js].sum(axis=0)
        self.c[js] = d

    def objective(self):
        return float(self.k * self.n - np.sum(self.G**2))


class _NaiveScorer:
    """Recomputes Q(c') from eq. (7) for every candidate c' (retraining all classifiers)."""

    def __init__(self, K, alpha, c, k):
        self.K, self.alpha = K, alpha
        self.c = c
        self.n, self.k = c.shape[0], k

    def _Q(self, c):
        return umc_objective(self.K, c, self.alpha, self.k)

    def _delta(self, j, d, Q0):
        trial = self.c.copy()
        trial[j] = d
        return self._Q(trial) - Q0

    def delta_to(self, d):
        Q0 = self._Q(self.c)
        return np.array(
            [np.inf if self.c[j] == d else self._delta(j, d, Q0) for j in range(self.n)]
        )

    def delta_row(self, j):
        Q0 = self._Q(self.c)
        return np.array([0.0 if self.c[j] == d else self._delta(j, d, Q0) for d in range(self.k)])

    def delta_all(self):
        return np.array([self.delta_row(j) for j in range(self.n)])

    def move(self, j, d):
        self.c[j] = d

    def move_many(self, js, d):
        self.c[np.asarray(js)] = d

    def objective(self):
        return self._Q(self.c)


# ---------------------------------------------------------------------------------------
# Algorithms 1-3, written once against the scorer interface
# ---------------------------------------------------------------------------------------


def _stochastic(scorer, on_move, max_steps):
    """Algorithm 1: sweep j = 1..n, move j to argmin_d S(c, j, d) when that lowers Q."""
    steps = 0
    while True:
        moved = False
        for j in range(scorer.n):
            row = scorer.delta_row(j)
            d = int(np.argmin(row))
            if row[d] < -_TOL:  # erratum: "if c_j = d" must read "if c_j != d"
                if on_move is not None:
                    on_move(j, d, float(row[d]))
                scorer.move(j, d)
                steps += 1
                moved = True
                if steps >= max_steps:
                    return steps, False
        if not moved:
            return steps, True


def _steepest(scorer, on_move, max_steps):
    """Algorithm 2: make the single best move (j, d) while it lowers Q."""
    steps = 0
    while steps < max_steps:
        D = scorer.delta_all()
        j, d = divmod(int(np.argmin(D)), scorer.k)
        if not D[j, d] < -_TOL:
            return steps, True
        if on_move is not None:
            on_move(j, d, float(D[j, d]))
        scorer.move(j, d)
        steps += 1
    return steps, False


def _shaking(scorer, n_rounds, on_move, on_claim, max_batches, max_steps):
    """Algorithm 3: in rounds i = 0..s every cluster d claims alpha (eq. 11) points.

    Each claimed point is the steepest move towards d among the points outside d
    (erratum: "d = c_j" must read "c_j != d"); the move is made even when Q rises.
    """
    n, k = scorer.n, scorer.k
    steps = 0
    for i in range(n_rounds + 1):
        for d in range(k):
            size = int(np.count_nonzero(scorer.c == d))
            alpha = shaking_alpha(n, k, i, size)
            batch = 1 if max_batches is None else max(1, -(-alpha // max_batches))
            remaining = alpha
            while remaining > 0 and steps < max_steps:
                delta = scorer.delta_to(d)
                b = min(batch, remaining)
                if b == 1:
                    j = int(np.argmin(delta))
                    if on_move is not None:
                        on_move(j, d, float(delta[j]))
                    scorer.move(j, d)
                else:
                    js = np.argpartition(delta, b - 1)[:b]
                    if on_move is not None:
                        for j in js:
                            on_move(int(j), d, float(delta[j]))
                    scorer.move_many(js, d)
                remaining -= b
                steps += b
            if on_claim is not None:
                on_claim(i, d, scorer.c.copy())
    return steps, steps < max_steps


def _run(scorer, search, n_rounds, on_move=None, on_claim=None, max_batches=None, max_steps=None):
    if max_steps is None:
        max_steps = np.iinfo(np.int64).max
    if search == "shaking":
        return _shaking(scorer, n_rounds, on_move, on_claim, max_batches, max_steps)
    if search == "steepest":
        return _steepest(scorer, on_move, max_steps)
    if search == "stochastic":
        return _stochastic(scorer, on_move, max_steps)
    raise ValueError(f"search must be 'stochastic', 'steepest' or 'shaking', got {search!r}.")


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
    max_steps=None,
):
    """Run Algorithm 1, 2 or 3 on a kernel matrix and return what happened.

    Parameters
    ----------
    K : ndarray of shape (n, n) or None
        Kernel matrix (needed when ``naive=True`` or when neither ``R`` nor ``L`` is given).
    alpha : float
        The paper's lambda.
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
        A precomputed R (n x n) or low-rank factor L (R = L L^T) to search with.
    init : array of int, optional
        Initial labels (otherwise drawn from ``random_state``).
    on_move : callable(j, d, delta), optional
        Called before every move with the change of Q it was predicted to make.
    on_claim : callable(i, d, labels), optional
        Algorithm 3: called after cluster d has claimed its points in round i.
    max_batches : int, optional
        Algorithm 3: claim in at most this many batches (``None``: one point at a time).
    max_steps : int, optional
        Stop after this many moves.

    Returns
    -------
    result : dict
        ``labels`` (final c), ``objective`` (Q(c), eq. 10), ``n_steps``, ``converged``.
    """
    if init is None:
        rng = check_random_state(random_state)
        n = (K if K is not None else (R if R is not None else L)).shape[0]
        c = _initial_labels(n, n_clusters, rng)
    else:
        c = np.array(init, dtype=np.intp)
    if naive:
        scorer = _NaiveScorer(np.asarray(K, dtype=float), alpha, c, n_clusters)
    elif L is not None:
        scorer = _LowRankScorer(np.asarray(L, dtype=float), c, n_clusters)
    else:
        scorer = _ExactScorer(hat_matrix(K, alpha) if R is None else R, c, n_clusters)
    n_steps, converged = _run(
        scorer, search, n_rounds, on_move, on_claim, max_batches=max_batches, max_steps=max_steps
    )
    return {
        "labels": scorer.c,
        "objective": scorer.objective(),
        "n_steps": int(n_steps),
        "converged": bool(converged),
    }


# ---------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------


class UMCRLS(ClusterMixin, BaseEstimator):
    """Unsupervised multi-class regularized least squares clustering (UMC-RLS).

    Finds labels ``c`` in {0..k-1}^n that minimise ``Q(c) = sum_h F(p_h(c))`` (eq. 10),
    the summed cost of k one-vs-all regularized least squares classifiers trained on the
    +-1 vectors ``p_h(c)`` (eq. 8), by hill climbing with O(1) evaluation of every
    single-point move (Appendix, eq. 13), as in Pahikkala et al. (2012).

    Symbols: n samples, k = ``n_clusters`` clusters (the paper's |C|), lambda = ``alpha``,
    K the kernel matrix, ``R = K (K + lambda I)^-1`` (eq. 12), ``F(y) = n - y^T R y``
    (Lemma 1, corrected), s = ``n_rounds``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    alpha : float, default=1.0
        Regularization parameter lambda > 0 of eq. (3) (named as in ``KernelRidge``).
        The paper selects it from 2^-10..2^-1.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is the (n, n) kernel matrix K (square, finite, symmetric).
    gamma : float, default=None
        RBF parameter of ``exp(-gamma ||x - y||^2)``. ``None``: the paper's kernel
        ``exp(-d^2 / sigma^2)`` with sigma = 0.5 x the largest pairwise distance, i.e.
        ``gamma = 1 / sigma^2`` (:func:`mmcedu.kernels.gamma_from_sigma` with
        ``convention="sigma_squared"``). Finding the largest distance takes O(n^2) time
        (in blocks, without an n x n matrix); pass ``gamma`` for very large n.
    search : {"shaking", "steepest", "stochastic"}, default="shaking"
        ``"stochastic"``: Algorithm 1 (Stoc-RLS); ``"steepest"``: Algorithm 2 (Steep-RLS);
        ``"shaking"``: Algorithm 3 (UMC-RLS), whose moves are made even when Q rises.
    n_rounds : int, default=20
        The paper's s: Algorithm 3 runs the rounds i = 0, 1, ..., s. Ignored otherwise.
    n_components : int, default=None
        ``None``: exact R (O(n^2) memory). An int r: rank-r factor R = L L^T (Nystroem for
        ``"rbf"``, truncated SVD for ``"linear"``, truncated eigendecomposition for
        ``"precomputed"``); memory O(n r). Algorithm 3 then claims points in at most 64
        batches per claim (exactly one point at a time when a claim has <= 64 points).
    random_state : int, RandomState instance or None, default=None
        Seeds the random initial labelling (line 1 of Algorithms 1-3) and the Nystroem
        landmarks.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every sample, 0..k-1 (clusters left empty by Algorithms 1-2 are dropped
        and the labels renumbered consecutively).
    objective_ : float
        Q(c) of eq. (10) for the found labelling (with k clusters; under the rank-r kernel
        when ``n_components`` is set).
    n_steps_ : int
        Number of single-point moves made (the "steepest descent steps" of Fig. 5).
    converged_ : bool
        Algorithms 1-2: a local minimum was reached. Algorithm 3: always True.
    gamma_ : float or None
        The RBF gamma used.
    n_features_in_ : int

    References
    ----------
    T. Pahikkala, A. Airola, F. Gieseke, O. Kramer. Unsupervised multi-class regularized
    least squares classification. ICDM 2012. Eqs. (7), (8), (10), (11), (12), (13);
    Algorithms 1-3; Lemmas 1-3.

    Examples
    --------
    >>> from mmcedu import UMCRLS
    >>> from mmcedu.datasets import blobs
    >>> X, y = blobs(n_samples=150, centers=3, random_state=0)
    >>> model = UMCRLS(n_clusters=3, alpha=2**-7, random_state=0).fit(X)
    >>> sorted(set(model.labels_.tolist()))
    [0, 1, 2]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "search": [StrOptions({"stochastic", "steepest", "shaking"})],
        "n_rounds": [Interval(Integral, 0, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        alpha=1.0,
        kernel="rbf",
        gamma=None,
        search="shaking",
        n_rounds=20,
        n_components=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.search = search
        self.n_rounds = n_rounds
        self.n_components = n_components
        self.random_state = random_state

    def _low_rank_factor(self, X, rng):
        r = self.n_components
        n = X.shape[0]
        if self.kernel == "rbf":
            Phi, _ = nystroem_factor(X, min(r, n), gamma=self.gamma_, random_state=rng)
        elif self.kernel == "linear":
            U, s, _ = np.linalg.svd(X, full_matrices=False)
            Phi = U[:, :r] * s[:r]
        else:  # precomputed: truncated eigendecomposition
            s, V = np.linalg.eigh(X)
            s, V = s[::-1][:r], V[:, ::-1][:, :r]
            Phi = V * np.sqrt(np.clip(s, 0.0, None))
        return low_rank_hat_factor(Phi, self.alpha)

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
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        n = X.shape[0]
        if self.kernel == "precomputed":
            X = check_kernel_matrix(X)
        check_n_clusters(n, self.n_clusters)
        rng = check_random_state(self.random_state)
        k = self.n_clusters
        c = _initial_labels(n, k, rng)
        if self.kernel == "rbf":
            self.gamma_ = float(default_gamma(X) if self.gamma is None else self.gamma)
        else:
            self.gamma_ = None
        max_steps = 100 * n * k + 1000
        if self.n_components is None:
            K = kernel_matrix(X, self.kernel, self.gamma_)
            scorer = _ExactScorer(hat_matrix(K, self.alpha), c, k)
            max_batches = None
        else:
            scorer = _LowRankScorer(self._low_rank_factor(X, rng), c, k)
            max_batches = _MAX_BATCHES
        n_steps, converged = _run(
            scorer, self.search, self.n_rounds, max_batches=max_batches, max_steps=max_steps
        )
        if not converged:
            warnings.warn(
                f"UMCRLS search={self.search!r} stopped after {n_steps} moves without "
                "reaching a local minimum.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.objective_ = scorer.objective()
        self.n_steps_ = int(n_steps)
        self.converged_ = bool(converged)
        self.labels_ = np.unique(scorer.c, return_inverse=True)[1].astype(np.intp)
        return self
