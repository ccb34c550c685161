"""The mathematics of UMC-RLS on a kernel matrix and its three searches (Algorithms 1-3).

Pahikkala, Airola, Gieseke and Kramer (2012). A labelling ``c`` of the n samples into k
clusters defines one +-1 vector per cluster, ``p_h(c)_i = +1 if c_i = h else -1`` (eq. 8), and
one regularized least squares (RLS) classifier per cluster. The cost of the best RLS fit to a
+-1 vector ``y`` is (eq. 7, with G = (K + lambda I)^-1)

    F(y) = (y - K G y)^T (y - K G y) + lambda y^T G K G y = n - y^T R y,
    R = K (K + lambda I)^-1 = V diag(s / (s + lambda)) V^T          (Lemma 1, corrected)

and UMC-RLS minimises Q(c) = sum_h F(p_h(c)) (eq. 10) over the labellings by hill climbing.

Fast path (Appendix): with ``t_h = R p_h`` cached, moving sample j from cluster a = c_j to
d != a changes Q by ``Delta(j, d) = 4 (t_a[j] - t_d[j]) - 8 R_jj`` (eq. 13), in O(1), and the
move updates ``t_a -= 2 R_j``, ``t_d += 2 R_j`` in O(n). Low-rank path (K ~ Phi Phi^T, n x r):
R = L L^T with L = Phi U (S + lambda I)^-1/2, Phi^T Phi = U S U^T; the caches
``g_h = L^T p_h`` cost O(r) per move and the n scores O(n r k), with no n x n matrix.
Algorithms 1-3 are written once against a *scorer* (exact, low-rank, or a naive oracle that
retrains every classifier from eq. (7) for every candidate), so all make the same moves. The
public names are re-exported by :mod:`mmcedu.umc_rls`.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.linalg import eigh
from sklearn.utils import check_random_state

from .kernels import _check_positive, _check_square

__all__ = ["hat_matrix", "low_rank_hat_factor", "rls_cost", "umc_objective", "flip_delta",
           "shaking_alpha", "run_search"]

# Algorithms 1 and 2 accept a move only when it lowers Q by more than this.
_TOL = 1e-9
# Entries of an n x r array handled at once (blocks of rows; bounds the temporaries).
_BLOCK_ENTRIES = 2**20


# --- the formulas --------------------------------------------------------------------------


def _check_alpha(alpha):
    return _check_positive(alpha, "alpha (the paper's lambda)")


def _check_k(n_clusters):
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive int; got {n_clusters!r}.")
    return int(n_clusters)


def _row_blocks(n, width):
    """Slices of rows covering 0..n, each of at most ``_BLOCK_ENTRIES / width`` rows."""
    step = max(1, _BLOCK_ENTRIES // max(width, 1))
    return [slice(st, st + step) for st in range(0, n, step)]


def _shrinkage(s, alpha):
    """The eigenvalues ``s / (s + alpha)`` of R for the eigenvalues s of K (clipped at 0)."""
    sc = np.clip(s, 0.0, None)
    return sc / (sc + alpha)


def _dense_hat(K, alpha):
    """``(R, s)``: R and the eigenvalues s of K (unclipped); 16 n^2 bytes besides K."""
    s, V = eigh(K, check_finite=False)
    return _hat_from_eig(s, V, alpha), s


def _hat_from_eig(s, V, alpha):
    """R = V diag(s / (s + alpha)) V^T; V is scaled in place (one more n x n array, R)."""
    V *= np.sqrt(_shrinkage(s, alpha))
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
        raise ValueError(f"labels must lie in 0..n_clusters-1 = 0..{n_clusters - 1}; got values "
                         f"from {labels.min()} to {labels.max()}. Pass n_clusters > max(labels) "
                         "or relabel.")
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
    n_clusters = _check_k(n_clusters)
    labels = _check_labels(labels, n_clusters, K.shape[0])
    return _rls_cost(K, _class_vectors(labels, n_clusters), alpha)


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


# --- scorers: Delta(j, d) and moves; a scorer shares the label vector ``c`` it was given -----


class _Scorer:
    """Bookkeeping shared by the scorers: labels, cluster sizes, counts, frozen samples.

    ``counts``: ``"scores"`` values Delta(j, d) computed; ``"evaluations"`` calls that
    computed a batch of them; ``"cache_updates"`` cache entries changed by moves;
    ``"solves"`` n x n linear systems solved (with k right-hand sides; naive scorer only).
    With ``keep_nonempty`` a sample that is alone in its cluster is frozen (no candidate).
    """

    max_chunk = 4096

    def __init__(self, c, k, keep_nonempty=False):
        self.c, self.n, self.k = c, c.shape[0], k
        self.sizes = np.bincount(c, minlength=k).astype(np.intp)
        self.keep_nonempty = bool(keep_nonempty)
        self.counts = {"scores": 0, "evaluations": 0, "cache_updates": 0, "solves": 0}
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

    def delta_all(self):
        return self.delta_rows(self._ar)

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
        P = _class_vectors(self.c, self.k).T
        return float(self.k * self.n - np.sum(P * self.T))


class _LowRankScorer(_Scorer):
    """R = L L^T; caches g_h = L^T p_h (columns of G, r x k, float64). A move costs O(r).

    ``L`` may be float32 (half the memory traffic of the O(n r k) product ``L G`` that every
    evaluation of the n scores needs); ``G`` and the row norms R_jj stay float64.
    """

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


class _NaiveScorer(_Scorer):
    """Recomputes Q(c') from eq. (7) for every candidate c' (retraining all classifiers):
    one n x n solve with k right-hand sides per Q (counted in ``counts["solves"]``)."""

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
        return np.array([np.inf if skip[j] else self._delta(j, d, Q0) for j in range(self.n)])

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
        self._relabel([j], d)

    def move_many(self, js, d):
        self._relabel(np.asarray(js), d)

    def objective(self):
        return self._Q(self.c)


# --- Algorithms 1-3, written once against the scorer interface ------------------------------


def _stochastic(scorer, on_move, max_iter, steps=0):
    """Algorithm 1: sweep j = 1..n, move j to argmin_d S(c, j, d) when that lowers Q.

    The scores of a chunk of consecutive samples are computed at once; the first sample of
    the chunk with an improving move is moved and the sweep resumes after it, so the moves
    are exactly those of the one-sample-at-a-time sweep.
    """
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
    """Algorithm 3: in rounds i = 0..s every cluster d claims alpha (eq. 11) points.

    Each claimed point is the steepest move towards d among the points outside d
    (erratum: "d = c_j" must read "c_j != d"); the move is made even when Q rises.
    """
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
    if search == "stochastic":
        return (*_stochastic(scorer, on_move, max_iter, steps), 0)
    raise ValueError(f"search must be 'stochastic', 'steepest' or 'shaking', got {search!r}.")


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


def _make_scorer(K, alpha, c, k, naive, R, L, keep_nonempty):
    """The scorer :func:`run_search` asks for (naive, low-rank ``L``, or exact ``R``)."""
    if naive:
        return _NaiveScorer(_check_square(K), alpha, c, k, keep_nonempty)
    if L is not None:
        L = np.asarray(L)
        L = L if L.dtype in (np.float32, np.float64) else L.astype(np.float64)
        return _LowRankScorer(L, c, k, keep_nonempty)
    return _ExactScorer(hat_matrix(K, alpha) if R is None else _check_square(R, "R"), c, k,
                        keep_nonempty)


def run_search(K, alpha, n_clusters, *, search="shaking", n_rounds=20, random_state=None,
               naive=False, R=None, L=None, init=None, on_move=None, on_claim=None,
               max_batches=None, max_iter=None, keep_nonempty=False, descent=False):
    """Run Algorithm 1, 2 or 3 on a kernel matrix and return what happened.

    The defaults are the paper's algorithms as printed (:class:`UMCRLS` uses
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
        Seeds the initial labelling (the same start for every scorer); ``init`` overrides it.
    naive : bool
        Recompute Q from eq. (7) for every candidate instead of using eq. (13) and the caches.
    R, L : ndarray, optional
        A precomputed R (n x n) or low-rank factor L (R = L L^T, float64 or float32).
    init : array of int, optional
    on_move : callable(j, d, delta), optional
        Called before every move with the change of Q it was predicted to make.
    on_claim : callable(i, d, labels), optional
        Algorithm 3: called after cluster d has claimed its points in round i.
    max_batches : int, optional
        Algorithm 3: claim in at most this many batches of the best-scoring points
        (``None``: one point at a time, the paper's rule).
    max_iter : int, optional
        Stop after this many moves.
    keep_nonempty : bool, default=False
        Keep n_clusters non-empty clusters: every empty cluster first claims its cheapest
        sample (for Algorithm 3, which runs as printed, at its end) and Algorithms 1-2 make
        no move that empties a cluster.
    descent : bool, default=False
        Algorithm 3 only: afterwards run Algorithm 1 from its end point to a local minimum
        (shaking's last round leaves every cluster near n/k samples, in general not one).

    Returns
    -------
    result : dict
        ``labels``, ``objective`` (Q(c), eq. 10), ``n_iter`` (moves, the descent's included),
        ``converged`` (a local minimum was reached; Algorithm 3 alone: the claims ended
        before ``max_iter``), ``descent_moves`` and ``counts`` (``scores`` values
        Delta(j, d) computed, ``evaluations`` batches of them, ``cache_updates`` cache
        entries changed by moves, ``solves`` n x n systems solved by the naive scorer).
    """
    if search not in ("stochastic", "steepest", "shaking"):
        raise ValueError(f"search must be 'stochastic', 'steepest' or 'shaking', got {search!r}.")
    n_clusters = _check_k(n_clusters)
    if K is None and R is None and L is None:
        raise ValueError("Pass the kernel matrix K, or a hat matrix R, or a factor L.")
    if K is not None or naive:
        alpha = _check_alpha(alpha)
    n = np.shape(K if K is not None else (R if R is not None else L))[0]
    if init is None:
        c = _initial_labels(n, n_clusters, check_random_state(random_state))
    else:
        c = _check_labels(np.array(init), n_clusters, n).copy()
    scorer = _make_scorer(K, alpha, c, n_clusters, naive, R, L, keep_nonempty)
    n_iter, converged, descent_moves = _run(scorer, search, n_rounds, on_move, on_claim,
                                            max_batches=max_batches, max_iter=max_iter,
                                            descent=descent)
    counts = dict(scorer.counts)
    return {"labels": scorer.c, "objective": scorer.objective(), "n_iter": int(n_iter),
            "converged": bool(converged), "descent_moves": int(descent_moves), "counts": counts}
