"""EMMC: maximum margin clustering with an extreme learning machine (Zhang, Xia and Liu).

An extreme learning machine (ELM) maps every input ``x`` through a random hidden layer,

    h(x) = g(x W + b)          (W: d x L, b: L, drawn once; g: sigmoid / tanh / relu),

and fits only the output weights ``beta`` by ridge regression on targets ``T``:

    min_beta  1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2                 (1), (4)
    beta = (H^T H + I_L / C)^{-1} H^T T         (primal, L x L system)
         = H^T (H H^T + I_n / C)^{-1} T         (dual, n x n system).

EMMC makes the targets unknown and alternates (the paper's (2) and (5), with ``t`` added to
the minimisation variables, see the errata in the book):

1. fix the labels ``t``, fit ``beta`` (one ridge solve: the matrix is factorized once per
   fit, only ``T`` changes);
2. fix ``beta``, choose the labels that minimise ``sum_i ||h(x_i) beta - t_i||^2`` under the
   class-balance constraint ``|N_p - N_q| <= l``;

until the labels stop changing. Both steps minimise the same objective exactly, so it never
increases and the iteration cannot cycle (ties aside). The end point is a *partial* minimum
(``t`` is optimal for ``beta(t)`` and ``beta(t)`` for ``t``), not a local minimum: a single
label flip can still lower the objective. ``EMMC(local_search=True)`` therefore adds a local
search that stops only where no single move inside the balance box and no balanced swap of two
labels lowers it (see "Local search" below).

Label steps (``f = H beta``):

* one output, two clusters, ``t_i in {-1, +1}``: ``t = sign(f)``, moved the least to meet
  ``|e^T t| <= l`` (:func:`mmcedu.balance.balanced_sign`; Proposition 1).
* one output, ``m > 2`` clusters, ``t_i in {1, ..., m}``: the nearest integer to ``f_i``
  clipped to ``[1, m]`` (not the paper's ``i - 1 < f <= i``, see the errata).
* ``m`` outputs, one-hot targets: ``argmax_k f_ik``.

When the unconstrained labels violate the balance constraint, an exact balanced assignment
is solved in O(n m) memory (:func:`box_assignment`: shortest paths on the m-cluster residual
graph, with an optimality certificate, :func:`box_optimality_gap`): cluster sizes ``lo <= N_k <= hi``,
``hi - lo <= l`` (for two clusters this box is exactly ``|N_1 - N_2| <= l``; for more
clusters it is a sufficient condition centred at ``n / m``).

Local search. With ``K = H H^T`` and ``R = K (K + I/C)^{-1} = H (H^T H + I/C)^{-1} H^T`` the
objective minimised over ``beta`` is ``J*(T) = C/2 tr(T^T (I - R) T)`` and ``F = H beta = R T``.
Changing the target of sample ``i`` by ``Delta`` changes it by exactly

    C (Delta . (t_i - f_i) + (1 - R_ii) ||Delta||^2 / 2),

``2 C (t_i f_i - R_ii)`` for a flip of ``t_i in {-1, +1}`` (``= 2 C (1 - R_ii) t_i f_i^(-i)``
with the leave-one-out output ``f_i^(-i)``); a swap of two labels adds the cross term
``C R_ij ||t_a - t_b||^2``. Every candidate costs O(1) given ``F`` and ``diag(R)``; a move
updates ``F`` by a column of ``R`` (``R = Z Z^T`` with ``Z = H L^{-T}``, ``L`` the Cholesky
factor of the primal system: O(n L) per move).

Memory of a fit (bytes, float64; ``d`` features, ``L`` hidden nodes, ``q`` outputs, ``m``
clusters): :func:`fit_bytes`.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import (
    all_identical,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
)
from .balance import balanced_sign, count_bounds, max_imbalance
from .exceptions import BalanceWarning, DegenerateDataWarning, KMeansStartWarning

__all__ = [
    "EMMC",
    "ELMRidge",
    "hidden_layer",
    "elm_objective",
    "assign_labels",
    "fit_bytes",
    "box_assignment",
    "box_optimality_gap",
    "ordered_cost",
    "edge_weights",
    "shortest_paths",
    "label_step_bytes",
]

_ACTIVATIONS = {
    "sigmoid": lambda Z: 0.5 * (1.0 + np.tanh(0.5 * Z)),  # 1 / (1 + exp(-Z)) without overflow
    "tanh": np.tanh,
    "relu": lambda Z: np.maximum(Z, 0.0),
}

#: Below this ratio of the hidden outputs' spread over the samples to their size, the
#: hidden layer is called (nearly) constant: DegenerateDataWarning.
SATURATION_RATIO = 1e-3

#: A BalanceWarning is emitted when the balance constraint decided the labels of more than
#: this fraction of the samples (``balance_decided_``).
BALANCE_WARN_FRACTION = 0.02

#: A KMeansStartWarning is emitted when a fit from k-means labels (``init="kmeans"``)
#: relabelled more than this fraction of the samples and ended with a larger k-means objective
#: (within-cluster sum of squares in X) than its start. The threshold and the condition were
#: written down before they were measured (benchmarks/studies/emmc_default_rule.md).
START_MOVED_FRACTION = 0.05

_STANDARDIZE = "Standardize X (sklearn.preprocessing.StandardScaler)"


# --------------------------------------------------------------------------------------------
# The balanced label step (more than two clusters, or several outputs)
# --------------------------------------------------------------------------------------------
def _check(cost, lo, hi):
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2:
        raise ValueError(f"cost must be 2-D (n_samples, n_clusters); got shape {cost.shape}.")
    n, m = cost.shape
    if not m * lo <= n <= m * hi:
        raise ValueError(f"No labeling of {n} samples into {m} clusters has {lo} <= N_k <= {hi}.")
    if not np.all(np.isfinite(cost)):
        raise ValueError("The cost matrix of the label step contains NaN or infinity.")
    return cost, n, m


def _inertia(X, labels):
    """k-means objective of ``labels``: the within-cluster sum of squared distances to the
    cluster means."""
    total = 0.0
    for c in np.unique(labels):
        Xc = X[labels == c]
        total += float(np.sum((Xc - Xc.mean(axis=0)) ** 2))
    return total


def label_step_bytes(n_samples, n_clusters):
    """Peak bytes of :func:`box_assignment` besides the ``n x m`` cost matrix itself.

    A shifted copy of the costs and the argmin temporaries (``3 x 8 n m``) and a few
    length-``n`` arrays (labels, sort order, margins: ``6 x 8 n``).
    """
    return 24 * int(n_samples) * int(n_clusters) + 48 * int(n_samples)


def ordered_cost(f, n_clusters):
    """``cost[i, k] = (f_i - (k + 1))^2``: one output regressing the ids ``1..m``."""
    f = np.asarray(f, dtype=np.float64).ravel()
    return (f[:, None] - np.arange(1, int(n_clusters) + 1, dtype=np.float64)[None, :]) ** 2


def _min_excluding(R, k):
    """Row-wise minimum of ``R`` over the columns other than ``k``."""
    if R.shape[1] == 2:
        return R[:, 1 - k].copy()
    saved = R[:, k].copy()
    R[:, k] = np.inf
    out = R.min(axis=1)
    R[:, k] = saved
    return out


def _kth(values, j):
    """The ``j``-th smallest entry (0-based) of ``values``; ``inf`` when ``j >= len``."""
    if j >= values.size:
        return np.inf
    return float(np.partition(values, j)[j])


def _dual_prices(cost, lo, hi, max_sweeps):
    """Cyclic coordinate ascent on the Lagrangian dual: prices ``p`` and sweeps made.

    Coordinate ``k``: with ``margin_i = cost[i, k] - min_{j != k} (cost[i, j] - p_j)``,
    sample ``i`` takes ``k`` iff ``margin_i < p_k``. The dual is maximised in ``p_k`` by
    ``0`` when ``lo <= #{margin < 0} <= hi``, else by a value between the ``lo``-th and
    ``(lo + 1)``-th (or ``hi``-th and ``(hi + 1)``-th) smallest margins.
    """
    n, m = cost.shape
    p = np.zeros(m)
    R = cost.copy()  # cost - p
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        changed = False
        for k in range(m):
            margin = cost[:, k] - _min_excluding(R, k)
            taken = int(np.count_nonzero(margin < 0))
            if lo <= taken <= hi:
                new = 0.0
            else:
                j = lo if taken < lo else hi
                a, b = _kth(margin, j - 1), _kth(margin, j)
                new = 0.5 * (a + b) if np.isfinite(b) else a + 1.0
            if new != p[k]:
                changed = True
                R[:, k] += p[k] - new
                p[k] = new
        if not changed:
            break
        # stop early at a dual optimum: counts in the box and complementary slackness
        # (p_k > 0 only where N_k = lo, p_k < 0 only where N_k = hi)
        counts = np.bincount(np.argmin(R, axis=1), minlength=m)
        if (counts.min() >= lo and counts.max() <= hi and np.all(counts[p > 0] == lo)
                and np.all(counts[p < 0] == hi)):
            break
    return p, sweeps


def edge_weights(cost, labels, n_clusters):
    """Residual edge weights ``w[a, b] = min_{label_i = a} cost[i, b] - cost[i, a]``.

    Returns ``w`` (``w[a, a] = 0``; a row of ``inf`` for an empty cluster) and ``arg``, the
    sample attaining each minimum. O(n m) time and memory.
    """
    m = int(n_clusters)
    w = np.full((m, m), np.inf)
    arg = np.full((m, m), -1, dtype=np.intp)
    order = np.argsort(labels, kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(labels, minlength=m))]
    for a in range(m):
        idx = order[starts[a]:starts[a + 1]]
        if idx.size == 0:
            continue
        D = cost[idx] - cost[idx, a][:, None]
        j = D.argmin(axis=0)
        w[a] = D[j, np.arange(m)]
        arg[a] = idx[j]
    np.fill_diagonal(w, 0.0)
    return w, arg


def shortest_paths(w):
    """Floyd-Warshall on the ``m x m`` weights: distances ``d`` and next hops ``nxt``.

    A negative diagonal entry of ``d`` reveals a negative cycle.
    """
    m = w.shape[0]
    d = w.copy()
    nxt = np.tile(np.arange(m), (m, 1))
    for k in range(m):
        via = d[:, k:k + 1] + d[k:k + 1, :]
        better = via < d
        if better.any():
            d = np.where(better, via, d)
            nxt = np.where(better, nxt[:, k:k + 1], nxt)
    return d, nxt


def _path(nxt, s, t):
    path = [s]
    while path[-1] != t:
        path.append(int(nxt[path[-1], t]))
        if len(path) > nxt.shape[0] + 1:  # pragma: no cover - excluded by the invariant
            raise RuntimeError("negative cycle in the residual graph of the label step")
    return path


def _violation(counts, lo, hi):
    return int(np.maximum(counts - hi, 0).sum() + np.maximum(lo - counts, 0).sum())


def _violation_change(counts, lo, hi):
    """``dv[s, t]``: change of the box violation when one sample moves from ``s`` to ``t``."""
    leave = np.where(counts > hi, -1, np.where(counts <= lo, 1, 0))
    enter = np.where(counts >= hi, 1, np.where(counts < lo, -1, 0))
    dv = leave[:, None] + enter[None, :]
    np.fill_diagonal(dv, 0)
    return dv


def box_optimality_gap(cost, labels, lo, hi):
    """Certificate: the least change of the cost by any exchange, for a labeling in the box.

    The minimum over the cycles of the residual graph (the diagonal of the shortest-path
    matrix) and over the paths ``s -> t`` with ``N_s > lo``, ``N_t < hi``. A value ``>= 0``
    (up to round-off) proves that ``labels`` minimise ``sum_i cost[i, label_i]`` under
    ``lo <= N_k <= hi``; a negative value is the gain of a better labeling.

    Raises
    ------
    ValueError
        When ``labels`` violate the box.
    """
    cost, n, m = _check(cost, lo, hi)
    labels = np.asarray(labels)
    counts = np.bincount(labels, minlength=m)
    if counts.min() < lo or counts.max() > hi:
        raise ValueError(f"The labeling violates the box: counts {counts.tolist()}, [{lo}, {hi}].")
    w, _ = edge_weights(cost, labels, m)
    d, _ = shortest_paths(w)
    ok = (counts[:, None] > lo) & (counts[None, :] < hi)
    np.fill_diagonal(ok, False)
    gap = float(np.diag(d).min())
    if ok.any():
        gap = min(gap, float(d[ok].min()))
    return gap


def box_assignment(cost, lo, hi, *, max_sweeps=20, rtol=1e-12, return_info=False):
    """Labels minimising ``sum_i cost[i, label_i]`` subject to ``lo <= N_k <= hi``, exactly.

    EMMC's label step for ``m > 2`` clusters: ``cost[i, k]`` is the cost of giving sample
    ``i`` label ``k``, ``-2 f_ik`` with one-hot targets, ``(f_i - k)^2`` with one output
    regressing the ids ``1..m`` (:func:`ordered_cost`). It is a transportation problem (``n``
    sources of one unit, ``m`` sinks whose intake lies in ``[lo, hi]``): a linear programme
    has ``n m`` variables, the dynamic programme for one output needs ``(n + 1) x (hi - lo +
    1)`` tables (:mod:`mmcedu.balance`); here the flow argument is reduced to the ``m``
    cluster nodes.

    *Residual graph on the clusters.* For a labeling, moving one sample from cluster ``a``
    to ``b`` costs at best ``w_ab = min_{label_i = a} cost[i, b] - cost[i, a]``
    (:func:`edge_weights`). A simple path ``s -> ... -> t`` moves one (distinct) sample along
    each edge and changes only ``N_s`` (-1) and ``N_t`` (+1); a cycle changes no count. These
    are the residual paths and cycles of the transportation network, so (negative-cycle
    optimality of min-cost flows) a labeling is optimal among those with its own counts iff
    the graph has no negative cycle, and a labeling inside the box is optimal iff moreover
    no pair ``s != t`` with ``N_s > lo``, ``N_t < hi`` has a shortest-path length
    ``d(s, t) < 0`` (:func:`box_optimality_gap`, O(n m + m^3): the certificate).

    *Algorithm.* (1) Prices: for any ``p`` the labeling ``argmin_k cost[i, k] - p_k`` has no
    negative cycle (every reduced weight ``w_ab + p_a - p_b >= 0``); sweeps of
    coordinate ascent on the Lagrangian dual ``g(p) = sum_i min_k (cost[i, k] - p_k) +
    sum_k min(lo p_k, hi p_k)`` (each coordinate maximised exactly by an order statistic),
    until no price changes or the counts are in the box with complementary slackness
    (then the labeling is already optimal), bring the counts (nearly) into the box and
    close to the optimum: a warm start only (a sweep stopped at the first feasible counts
    left hundreds of one-sample repairs at n = 10^5). (2) Successive shortest
    paths: while the box is violated, move samples along a shortest path from an over-full
    cluster (or to an under-full one); once it holds, along a shortest path with
    ``d(s, t) < 0``. Moving along a *shortest* path keeps "no negative cycle" (with
    potentials ``d(s, .)`` every new edge has a non-negative reduced weight), every step
    lowers (violation, cost) lexicographically, and the loop stops exactly when the
    certificate holds. Several samples per edge move at once when the result keeps the
    invariant (checked, else halved; once the box holds, only while the marginal path cost
    is negative), so thousands of unit moves become a handful.

    Time O(n m^2) per price sweep and O(n m + m^3) per repair; memory
    :func:`label_step_bytes` ``= 24 n m + 48 n`` bytes besides ``cost``.

    Parameters
    ----------
    cost : ndarray of shape (n_samples, n_clusters)
    lo, hi : int
        Bounds on every cluster's size (``n_clusters * lo <= n_samples <= n_clusters * hi``).
    max_sweeps : int, default=20
        Sweeps of the price phase (a warm start only; the result is exact for any value).
    rtol : float, default=1e-12
        Gains below ``rtol * max(1, max |cost|)`` count as zero (round-off).
    return_info : bool, default=False

    Returns
    -------
    labels : ndarray of int of shape (n_samples,)
    info : dict, only with ``return_info=True``
        ``sweeps`` (price phase), ``repairs`` (shortest-path moves), ``moved`` (samples moved
        by them), ``gap`` (the final certificate, ``>= -tol``).
    """
    cost, n, m = _check(cost, lo, hi)
    labels = np.argmin(cost, axis=1)
    counts = np.bincount(labels, minlength=m)
    sweeps = 0
    if counts.min() < lo or counts.max() > hi:
        p, sweeps = _dual_prices(cost, lo, hi, max_sweeps)
        labels = np.argmin(cost - p[None, :], axis=1)
        counts = np.bincount(labels, minlength=m)
    tol = rtol * max(1.0, float(np.abs(cost).max()))
    max_repairs = 10 * n + 100
    repairs = moved = 0
    gap = 0.0
    while True:
        w, arg = edge_weights(cost, labels, m)
        d, nxt = shortest_paths(w)
        valid = np.isfinite(d)
        np.fill_diagonal(valid, False)
        viol = _violation(counts, lo, hi)
        if viol > 0:
            cand = valid & (_violation_change(counts, lo, hi) < 0)
            if not cand.any():  # pragma: no cover - the box is feasible (checked above)
                raise RuntimeError("no violation-reducing move although the box is feasible")
        else:
            cand = valid & (counts[:, None] > lo) & (counts[None, :] < hi)
            gap = min(float(np.diag(d).min()), float(d[cand].min()) if cand.any() else 0.0)
            if gap >= -tol:
                break
        score = np.where(cand, d, np.inf)
        s, t = (int(v) for v in np.unravel_index(int(np.argmin(score)), score.shape))
        path = _path(nxt, s, t)
        edges = list(zip(path[:-1], path[1:]))
        # u samples per edge at once: never past the count segments of s and t (so that each
        # unit reduces the violation while it is positive), never more than a cluster has
        seg_s = counts[s] - hi if counts[s] > hi else counts[s] - lo
        seg_t = lo - counts[t] if counts[t] < lo else hi - counts[t]
        u = int(max(1, min(seg_s, seg_t, counts[path[:-1]].min())))
        if u > 1:
            # the cheapest u samples of every edge, in order of their cost of moving
            ranked = []
            for a, b in edges:
                members = np.flatnonzero(labels == a)
                D = cost[members, b] - cost[members, a]
                j = np.argpartition(D, u - 1)[:u]
                j = j[np.argsort(D[j], kind="stable")]
                ranked.append((members[j], D[j]))
            if viol == 0:
                # once the box holds, move only while the marginal path cost is negative
                marginal = np.sum([D for _, D in ranked], axis=0)
                u = int(max(1, np.count_nonzero(marginal < -tol)))
        while True:
            if u == 1:
                movers = [np.array([arg[a, b]]) for a, b in edges]
            else:
                movers = [idx[:u] for idx, _ in ranked]
            old = labels.copy() if u > 1 else None
            for (_, b), idx in zip(edges, movers):
                labels[idx] = b
            if u == 1:
                break
            # keep the batch only if the labeling is still optimal for its new counts
            d2, _ = shortest_paths(edge_weights(cost, labels, m)[0])
            if np.diag(d2).min() >= -tol:
                break
            labels = old
            u //= 2
        counts[s] -= u
        counts[t] += u
        repairs += 1
        moved += u * len(edges)
        if repairs > max_repairs:  # pragma: no cover - each repair lowers (violation, cost)
            raise RuntimeError(f"The balanced label step made more than {max_repairs} repairs.")
    if return_info:
        return labels, {"sweeps": sweeps, "repairs": repairs, "moved": moved, "gap": gap}
    return labels


# --------------------------------------------------------------------------------------------
# The ELM
# --------------------------------------------------------------------------------------------
def hidden_layer(X, W, b, activation="sigmoid"):
    """ELM hidden-layer outputs ``H[i] = h(x_i) = g(x_i W + b)``, shape (n_samples, L)."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}; got {activation!r}.")
    return _ACTIVATIONS[activation](np.asarray(X, dtype=float) @ W + b)


class ELMRidge:
    """Ridge output weights of an ELM, factorized once for many target matrices.

    Solves ``min_beta 1/2 ||beta||^2 + C/2 ||H beta - T||_F^2`` (the paper's (1) and (4)):

    * ``form="primal"``: ``beta = (H^T H + I_L / C)^{-1} H^T T`` (an L x L Cholesky factor,
      ``8 L^2`` bytes);
    * ``form="dual"``: ``beta = H^T alpha`` with ``alpha = (H H^T + I_n / C)^{-1} T`` (an
      n x n Cholesky factor, ``8 n^2`` bytes). The residuals are then ``T - H beta = alpha / C``.
    * ``form="auto"``: primal when ``L <= n``, dual otherwise (the smaller system).

    Both forms give the same ``beta`` (push-through identity
    ``(H^T H + I/C)^{-1} H^T = H^T (H H^T + I/C)^{-1}``).

    Parameters
    ----------
    H : ndarray of shape (n_samples, L)
    C : float > 0
    form : {"auto", "primal", "dual"}

    Raises
    ------
    ValueError
        When the system overflows or is not positive definite in floating point (hidden
        outputs far from the unit scale): the message says to standardize ``X`` or to
        decrease ``C``.
    """

    def __init__(self, H, C, form="auto"):
        H = np.asarray(H, dtype=float)
        if H.ndim != 2:
            raise ValueError(f"H must be 2-D; got shape {H.shape}.")
        if not C > 0:
            raise ValueError(f"C must be positive; got {C}.")
        n, L = H.shape
        if form == "auto":
            form = "primal" if L <= n else "dual"
        if form not in ("primal", "dual"):
            raise ValueError(f"form must be 'auto', 'primal' or 'dual'; got {form!r}.")
        self.H, self.C, self.form = H, float(C), form
        A = H.T @ H if form == "primal" else H @ H.T
        hmax = float(np.max(np.abs(H))) if H.size else 0.0
        hint = (
            f"hidden outputs up to {hmax:.3g}, C={self.C:g}. {_STANDARDIZE}, or decrease C "
            "(a larger ridge penalty 1/C)."
        )
        check_finite_result(A, what="The ridge system of the ELM output weights", hint=hint)
        A[np.diag_indices_from(A)] += 1.0 / self.C
        try:
            self._factor = cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError as exc:
            raise ValueError(
                f"The ridge system of the ELM output weights is not positive definite in "
                f"floating point ({hint})"
            ) from exc
        if not np.all(np.isfinite(np.diag(self._factor[0]))):
            raise ValueError(f"The ridge system of the ELM output weights overflowed ({hint})")

    def solve(self, T):
        """Output weights ``beta`` (shape (L,) or (L, m), like ``T``) for targets ``T``."""
        T = np.asarray(T, dtype=float)
        if self.form == "primal":
            return cho_solve(self._factor, self.H.T @ T, check_finite=False)
        return self.H.T @ cho_solve(self._factor, T, check_finite=False)


class _HatMatrix:
    """``R = H (H^T H + I/C)^{-1} H^T = K (K + I/C)^{-1}`` (``K = H H^T``) by rows and blocks.

    Primal form: ``R = Z Z^T`` with ``Z = H L^{-T}`` (``L`` the Cholesky factor of the primal
    system), ``8 n L`` bytes, a column in O(n L). Dual form: ``R = I - (K + I/C)^{-1} / C``
    stored (``8 n^2`` bytes, and ``8 n^2`` more while it is computed).
    """

    def __init__(self, ridge):
        c, lower = ridge._factor
        n = ridge.H.shape[0]
        if ridge.form == "primal":
            self.Z = np.ascontiguousarray(
                solve_triangular(c, ridge.H.T, lower=lower, check_finite=False).T
            )
            self.R = None
            self.diag = np.einsum("ij,ij->i", self.Z, self.Z)
        else:
            M = cho_solve(ridge._factor, np.eye(n), check_finite=False)
            M *= -1.0 / ridge.C
            M[np.diag_indices(n)] += 1.0
            self.R, self.Z = M, None
            self.diag = np.diag(M).copy()

    def column(self, i):
        if self.R is not None:
            return self.R[:, i]
        return self.Z @ self.Z[i]

    def block(self, rows, cols):
        if self.R is not None:
            return self.R[np.ix_(rows, cols)]
        return self.Z[rows] @ self.Z[cols].T


def _hat_diagonal(ridge, block=4096):
    """``diag(R)`` of :class:`_HatMatrix` by blocks of rows, without storing ``Z`` or ``R``."""
    c, lower = ridge._factor
    H = ridge.H
    n = H.shape[0]
    out = np.empty(n)
    for start in range(0, n, block):
        rows = slice(start, start + block)
        if ridge.form == "primal":
            Zt = solve_triangular(c, H[rows].T, lower=lower, check_finite=False)
            out[rows] = np.einsum("ij,ij->j", Zt, Zt)
        else:
            E = np.zeros((n, min(block, n - start)))
            E[np.arange(start, start + E.shape[1]), np.arange(E.shape[1])] = 1.0
            M = cho_solve(ridge._factor, E, check_finite=False)
            out[rows] = 1.0 - M[np.arange(start, start + E.shape[1]), np.arange(E.shape[1])] / ridge.C
    return out


def elm_objective(H, beta, T, C):
    """The ELM objective ``1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2`` ((1), (4))."""
    xi = np.asarray(T, dtype=float) - H @ beta
    return 0.5 * float(np.sum(beta**2)) + 0.5 * C * float(np.sum(xi**2))


def fit_bytes(n_samples, n_features, n_hidden, n_clusters, output="multi", local_search=True):
    """Peak bytes of an :class:`EMMC` fit (float64), computed before allocating anything.

    ``16 n d`` (the validated data and k-means' copy) ``+ 24 n L`` (the hidden layer and its
    temporaries) ``+ 8 n L`` (``Z`` of the local search, primal form) ``+ 8 s^2`` (the
    Cholesky factor of the ``s x s`` ridge system, ``s = min(n, L)``) ``+ 16 n^2`` (the
    matrix ``R`` of the local search and its temporary, dual form ``L > n`` only)
    ``+ 8 n (2 q + m)`` (targets, outputs, costs; ``q = 1`` or ``m`` outputs) ``+ 24 n m +
    48 n`` (the balanced label step).
    """
    n, d, L, m = (int(v) for v in (n_samples, n_features, n_hidden, n_clusters))
    q = 1 if output == "single" else m
    dual = L > n
    total = 16 * n * d + 24 * n * L + 8 * min(n, L) ** 2 + 8 * n * (2 * q + m)
    total += label_step_bytes(n, m)
    if local_search:
        total += 16 * n * n if dual else 8 * n * L
    return total


def assign_labels(F, n_clusters, output, lo, hi, l=None):
    """The label step: targets minimising ``sum_i ||f_i - t_i||^2`` under the balance box.

    Parameters
    ----------
    F : ndarray of shape (n_samples,) for one output or (n_samples, n_clusters) for several.
    n_clusters : int
    output : {"single", "multi"}
    lo, hi : int
        Count bounds from :func:`mmcedu.balance.count_bounds`.
    l : int, default=None
        The bound on ``|N_+ - N_-|`` (one output, two clusters: :func:`balanced_sign`).

    Returns
    -------
    labels : ndarray of int in ``{0, ..., n_clusters - 1}``

    Notes
    -----
    Exact in every case: sorting for two clusters with one output, otherwise the unconstrained
    minimiser if it meets the box, else :func:`box_assignment`
    (O(n m) memory).
    """
    m = n_clusters
    if output == "single" and m == 2:
        if l is None:
            l = hi - lo
        return (balanced_sign(F, l) > 0).astype(int)
    if output == "single":
        # nearest integer in {1..m} (the minimiser of (3)), as a 0-based label
        labels = np.clip(np.rint(F), 1, m).astype(int) - 1
    else:
        labels = np.argmax(F, axis=1)
    counts = np.bincount(labels, minlength=m)
    if counts.min() >= lo and counts.max() <= hi:
        return labels
    if output == "single":
        return box_assignment(ordered_cost(F, m), lo, hi)
    return box_assignment(-2.0 * F, lo, hi)  # ||f_i - e_k||^2 = ||f_i||^2 - 2 f_ik + 1


def _target_table(n_clusters, output):
    """Row ``k`` is the target of label ``k``: ``-1 / +1``, the id ``k + 1``, or ``e_k``."""
    if output == "single" and n_clusters == 2:
        return np.array([[-1.0], [1.0]])
    if output == "single":
        return np.arange(1.0, n_clusters + 1.0)[:, None]
    return np.eye(n_clusters)


def _targets(labels, n_clusters, output):
    T = _target_table(n_clusters, output)[labels]
    return T[:, 0] if output == "single" else T


def _decide(F, n_clusters, output):
    """Unconstrained labels of new points (no balance constraint)."""
    if output == "single" and n_clusters == 2:
        return (F >= 0).astype(int)  # as balanced_sign: f = 0 goes to +1
    if output == "single":
        return np.clip(np.rint(F), 1, n_clusters).astype(int) - 1
    return np.argmax(F, axis=1)


def _move_deltas(F, labels, V, G, g, r, C):
    """``delta[i, b]``: exact change of ``J*`` when sample ``i`` takes label ``b`` (own: inf)."""
    n = F.shape[0]
    a = labels
    D = F if V.shape[1] > 1 else F @ V.T  # one-hot targets: V = I
    Ga = G[a]  # G[a_i, b]
    gaa = g[a][:, None]
    Dia = D[np.arange(n), a][:, None]
    delta = C * ((Ga - gaa) - (D - Dia) + 0.5 * (1.0 - r)[:, None] * (g[None, :] - 2.0 * Ga + gaa))
    delta[np.arange(n), a] = np.inf
    return delta


def _best_swap(delta, labels, G, g, r, hat, C, tol, block=1 << 20):
    """The best exchange of the labels of two samples: ``(gain, i, j)`` (``gain`` >= 0: none).

    Exchanging ``i`` (label ``a``) and ``j`` (label ``b``) changes ``J*`` by
    ``delta[i, b] + delta[j, a] + C R_ij ||t_a - t_b||^2``. Pairs are pruned with
    ``R_ij >= -sqrt(R_ii R_jj)`` (``R`` is positive semidefinite), the rest evaluated exactly
    by blocks of at most ``block`` pairs.
    """
    m = G.shape[0]
    s = np.sqrt(np.maximum(r, 0.0))
    members = [np.flatnonzero(labels == k) for k in range(m)]
    best = (0.0, -1, -1)
    for a in range(m):
        for b in range(a + 1, m):
            Ia, Jb = members[a], members[b]
            if Ia.size == 0 or Jb.size == 0:
                continue
            u, v = delta[Ia, b], delta[Jb, a]
            w = C * (g[a] - 2.0 * G[a, b] + g[b])
            ci = u + v.min() - w * s[Ia] * s[Jb].max() < -tol
            cj = v + u.min() - w * s[Jb] * s[Ia].max() < -tol
            if not ci.any() or not cj.any():
                continue
            I, J, uI, vJ = Ia[ci], Jb[cj], u[ci], v[cj]
            step = max(1, block // J.size)
            for start in range(0, I.size, step):
                rows = slice(start, start + step)
                vals = uI[rows, None] + vJ[None, :] + w * hat.block(I[rows], J)
                k = int(np.argmin(vals))
                if vals.flat[k] < best[0]:
                    p, q = divmod(k, J.size)
                    best = (float(vals.flat[k]), int(I[rows][p]), int(J[q]))
    return best


def _local_search(F, labels, V, hat, C, lo, hi, max_moves):
    """Steepest descent over single moves inside the box and balanced swaps.

    ``F`` (n x q, ``= R T``) is updated in place by a column of ``R`` per move. Returns
    ``(labels, flips, swaps, finished)``; ``finished`` is False when ``max_moves`` ran out.
    """
    m = V.shape[0]
    G = V @ V.T
    g = np.diag(G).copy()
    r = hat.diag
    counts = np.bincount(labels, minlength=m)
    tol = 1e-9 * C * max(1.0, float(g.max()))
    flips = swaps = 0
    while flips + swaps < max_moves:
        delta = _move_deltas(F, labels, V, G, g, r, C)
        feasible = (counts[labels] > lo)[:, None] & (counts < hi)[None, :]
        masked = np.where(feasible, delta, np.inf)
        k = int(np.argmin(masked))
        i, b = divmod(k, m)
        if masked[i, b] < -tol:
            a = labels[i]
            F += np.outer(hat.column(i), V[b] - V[a])
            labels[i] = b
            counts[a] -= 1
            counts[b] += 1
            flips += 1
            continue
        gain, i, j = _best_swap(delta, labels, G, g, r, hat, C, tol)
        if gain < -tol:
            a, b = labels[i], labels[j]
            F += np.outer(hat.column(i), V[b] - V[a]) + np.outer(hat.column(j), V[a] - V[b])
            labels[i], labels[j] = b, a
            swaps += 1
            continue
        return labels, flips, swaps, True
    return labels, flips, swaps, False


class EMMC(ClusterMixin, BaseEstimator):
    """Maximum margin clustering with an extreme learning machine (EMMC).

    Alternating optimisation of the ELM problems (2) (one output) and (5) (``m`` outputs)
    of Zhang, Xia and Liu [1]_ over the output weights ``beta`` and the labels ``t``
    (alternating as in [3]_, with the ELM of [2]_), followed by a local search over single
    label moves and balanced swaps:

    ``min_{t, beta} 1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2``
    subject to ``|N_p - N_q| <= l`` for every pair of clusters.

    Symbols: ``h(x)`` is the hidden-layer row vector (``L`` = ``n_hidden`` random sigmoid
    nodes), ``beta`` the output weights, ``t_i`` the target of sample ``i`` (``+-1`` for two
    clusters with one output, ``1..m`` for ``m`` clusters with one output, a one-hot vector
    with ``m`` outputs), ``xi_i = t_i - h(x_i) beta`` the training error, ``C`` the
    regularisation trade-off and ``l = floor(balance * n)`` the class-balance bound.

    What a fit guarantees. The alternation alone (the default) stops at a *partial* minimum:
    the labels are optimal for ``beta`` and ``beta`` for the labels, but a single label
    change can still lower the objective. With ``local_search=True`` the labels are moreover
    a *local* minimum of the objective minimised over
    ``beta``: no single label change that keeps every cluster size in ``count_bounds_`` and
    no exchange of the labels of two samples lowers ``objective_`` (checked with the exact
    formula of the module docstring; counts in ``n_flips_`` and ``n_swaps_``). The objective
    never ends above the one of the plain alternation from the same start.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters ``m`` (``1`` is allowed and puts every sample in cluster 0).
    n_hidden : int, default=200
        Number of hidden nodes ``L``. The ridge system is ``L x L`` (primal) when
        ``L <= n`` and ``n x n`` (dual) otherwise.
    C : float, default=1.0
        Inverse regularization: the weight of the squared training errors in (1) / (4); the
        ridge penalty is ``1 / C``.
    activation : {"sigmoid", "tanh", "relu"}, default="sigmoid"
        Hidden-node activation ``g``. Input weights and biases are drawn uniformly from
        ``[-1, 1]`` once per fit, which suits standardized features (a
        ``DegenerateDataWarning`` says when the hidden outputs are nearly constant).
    balance : float in [0, 1], default=0.1
        Class balance as a fraction of n: every two cluster sizes differ by at most
        ``l = floor(balance n)``, ``|N_p - N_q| <= floor(balance n)`` (a hard bound; capped at
        ``n - 2`` for two clusters so that neither is empty). A ``BalanceWarning`` says when
        the bound moved samples at the final labels.
    init : {"kmeans", "random"} or array-like of shape (n_samples,), default="kmeans"
        Initial labels: k-means (10 restarts), uniformly random labels, or given labels
        (then a single run is made whatever ``n_init``).
    output : {"auto", "single", "multi"}, default="auto"
        One output node (targets ``+-1`` or integer cluster ids ``1..m``, the paper's (2))
        or ``m`` output nodes with one-hot targets ((5)). One output with ``m > 2`` regresses
        the ids, so the result depends on how the clusters are numbered and is often worse
        than the k-means start; ``"auto"`` is ``"single"`` for two clusters and ``"multi"``
        for more (the one used is ``output_``).
    local_search : bool, default=False
        After the alternation, move single labels (inside the balance box) and exchange
        pairs of labels while the objective decreases, then alternate again, until neither
        changes anything: the labels end at a local minimum instead of a partial one. It
        never ends above the plain alternation from the same start; measured on the 45
        digit-pair tasks of the paper's Table 1 (``C=0.1``, k-means start, 2 seeds) the mean
        error drops from 3.00 % to 2.46 % (better on 34 of 90 runs, worse on 7). ``False``
        (the default) is the paper's algorithm, which the reproductions use. Costs an
        ``n x L`` array (``n x n`` in the dual form) and O(n L) per move.
    n_init : int, default=1
        Number of runs from different initial labels (same hidden layer, so the objectives
        are comparable); the run with the lowest objective is kept (no labels used).
    max_iter : int, default=50
        Maximum number of alternations per run (local-search rounds included).
    random_state : int, RandomState instance or None, default=None
        Seed of the hidden layer and the initialisations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in ``{0, ..., n_clusters - 1}``.
    n_clusters_ : int
        Number of clusters in ``labels_`` (``n_clusters``: the balance box keeps every
        cluster non-empty; 1 for identical samples).
    objective_ : float
        Objective (2) / (5) of the kept run at its final labels.
    objective_path_ : list of float
        Objective after every alternation and after every local-search round of the kept run
        (non-increasing).
    n_iter_ : int
        Alternations made by the kept run.
    n_flips_ : int
        Single label moves made by the local search of the kept run.
    n_swaps_ : int
        Exchanges of two labels made by the local search of the kept run.
    balance_decided_ : int
        A lower bound on the number of samples whose label the balance constraint decided:
        the larger of (a) the samples the initial labels (when they use all ``n_clusters``
        labels) had to give up to meet ``count_bounds_`` and (b) the samples that, at the
        end, the label step without the constraint would move, or whose move alone to
        another cluster would lower the objective but take a cluster size out of
        ``count_bounds_``.
    init_labels_ : ndarray of shape (n_samples,)
        Initial labels of the kept run.
    start_moved_ : int
        Samples whose final label differs from their initial label (``init_labels_``).
    inertia_ratio_ : float
        k-means objective (within-cluster sum of squares in ``X``) of ``labels_`` over that
        of ``init_labels_``: above 1 when the fit ended with less compact clusters than its
        start.
    beta_ : ndarray of shape (n_hidden,) or (n_hidden, n_clusters)
        Output weights.
    input_weights_ : ndarray of shape (n_features, n_hidden)
        Hidden-layer input weights ``W``.
    biases_ : ndarray of shape (n_hidden,)
        Hidden-layer biases ``b``.
    output_ : {"single", "multi"}
        The output scheme used (``output="auto"`` resolved).
    l_ : int
        Balance bound used, ``floor(balance * n)``.
    count_bounds_ : tuple of int
        ``(lo, hi)``: every cluster size lies in ``[lo, hi]`` with ``hi - lo <= l_``.
    form_ : {"primal", "dual"}
        Which ridge system was factorized.
    n_features_in_ : int
        Number of features seen during fit.

    Warns
    -----
    DegenerateDataWarning
        All samples are identical (every sample is put in cluster 0), or the hidden-layer
        outputs are nearly constant over the samples (the features are not standardized:
        the random layer saturates and the labels are close to arbitrary).
    BalanceWarning
        The balance constraint decided the labels of more than 2 % of the samples
        (``balance_decided_ > 0.02 n``): if the clusters may differ in size, raise
        ``balance``.
    KMeansStartWarning
        From a k-means start (``init="kmeans"``), the fit relabelled more than 5 % of the
        samples (``start_moved_ > 0.05 n``) and ended with a larger k-means objective than
        the start (``inertia_ratio_ > 1``); the message points to ``init_labels_`` and
        ``balance``.
    ConvergenceWarning
        ``max_iter`` alternations (or the local search's budget of ``n`` moves per round)
        ran out before a fixed point.

    Raises
    ------
    MemoryBudgetError
        Before anything is allocated (before k-means), when :func:`fit_bytes` exceeds the
        memory budget (``mmcedu.get_config()["memory_budget"]``); the message names
        ``n_hidden``.
    ValueError
        Entries so large or so close that distances overflow / underflow, or a ridge system
        that is not positive definite in floating point: standardize ``X``.

    Notes
    -----
    Defaults on standardized real data. The alternation of (2) / (5) leaves the k-means start
    for the partition the ELM ridge fit (1) / (4) prefers, which need not be closer to the
    classes: with the defaults on standardized iris (``EMMC(3)``, seeds 0-4) it relabels 4 to
    6 of the 150 samples and the ARI falls from 0.620 (the start) to 0.578 ± 0.008 (k-means
    0.618 ± 0.004), with no warning (below the 5 % of ``KMeansStartWarning``). The balance
    box is not the cause (``balance=1``: 0.572); ``activation="tanh"`` or ``"relu"`` keep
    the start on iris (0.616, 0.618) but did not help on the sets the defaults were chosen on
    (mean ARI minus k-means' -0.110 and -0.108 against -0.106 for the sigmoid), so the
    paper's sigmoid stays the default (``benchmarks/studies/emmc_default_rule.md``; held-out
    results in ``benchmarks/results/emmc_defaults.md``: wine 0.897 and digits 1-4 0.706 as
    k-means, digits 3 vs 8 0.782 against 0.778, breast cancer 0.575 against 0.660 with a
    ``BalanceWarning`` and a ``KMeansStartWarning``). On data like iris, ``init_labels_``
    holds the k-means labels.

    Memory (bytes, float64): :func:`fit_bytes`, about ``16 n d + 32 n L + 8 min(n, L)^2 +
    32 n m`` in the primal form (``L <= n``), plus ``16 n^2`` for the local search in the
    dual form. Time per alternation: O(n L q) for ``H^T T`` and ``H beta`` plus the label
    step (O(n m) for the unconstrained labels; O(n m^2) per price sweep and
    O(n m + m^3) per repair of the balanced step); once per fit: the hidden layer
    O(n d L), ``H^T H`` O(n L^2) and its Cholesky factor O(L^3).

    See Also
    --------
    UMCRLS : the same least-squares cost of the labels, with a kernel and a local search.
    SDPMMC, GMMC : convex relaxations of maximum margin clustering (two clusters).

    References
    ----------
    .. [1] C. Zhang, S. Xia, B. Liu. Maximum margin clustering using extreme learning
       machine. (Equations (1)-(5), Proposition 1, Tables 1-3.)
    .. [2] G.-B. Huang, H. Zhou, X. Ding, R. Zhang. Extreme learning machine for regression
       and multiclass classification. IEEE Trans. SMC-B 42(2):513-529, 2012.
    .. [3] K. Zhang, I. W. Tsang, J. T. Kwok. Maximum margin clustering made practical. IEEE
       Trans. Neural Networks 20 (2009) 583-596.

    Examples
    --------
    >>> from mmcedu import EMMC, datasets
    >>> from mmcedu.metrics import clustering_error
    >>> X, y = datasets.digits(classes=(3, 8), scale=True)
    >>> model = EMMC(C=0.1, random_state=0).fit(X)
    >>> clustering_error(y, model.labels_) < 0.1
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_hidden": [Interval(numbers.Integral, 1, None, closed="left")],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "balance": [Interval(numbers.Real, 0, 1, closed="both")],
        "init": [StrOptions({"kmeans", "random"}), "array-like"],
        "output": [StrOptions({"auto", "single", "multi"})],
        "local_search": ["boolean"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        n_hidden=200,
        C=1.0,
        activation="sigmoid",
        balance=0.1,
        init="kmeans",
        output="auto",
        local_search=False,
        n_init=1,
        max_iter=50,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_hidden = n_hidden
        self.C = C
        self.activation = activation
        self.balance = balance
        self.init = init
        self.output = output
        self.local_search = local_search
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def _hidden(self, X):
        return hidden_layer(X, self.input_weights_, self.biases_, self.activation)

    def _initial_labels(self, X, rng):
        m = self.n_clusters
        if not isinstance(self.init, str):
            init = np.asarray(self.init)
            if init.shape != (X.shape[0],):
                raise ValueError(
                    f"init labels must have shape ({X.shape[0]},); got {init.shape}."
                )
            values, labels = np.unique(init, return_inverse=True)
            if values.size > m:
                raise ValueError(
                    f"init has {values.size} distinct labels but n_clusters={m}."
                )
            return labels.astype(int)
        if self.init == "random":
            return rng.randint(m, size=X.shape[0])
        km = KMeans(n_clusters=m, n_init=10, random_state=rng.randint(np.iinfo(np.int32).max))
        return km.fit(X).labels_.astype(int)

    def _check_memory(self, n, d, output):
        L, m = self.n_hidden, self.n_clusters
        nbytes = fit_bytes(n, d, L, m, output, self.local_search)
        form = "primal (L x L)" if L <= n else "dual (n x n)"
        check_memory(
            nbytes,
            what=(
                f"EMMC on n={n} samples with n_hidden={L} ({form} ridge system, "
                f"{m} clusters{', local search' if self.local_search else ''})"
            ),
            alternative=(
                "Decrease n_hidden (memory grows as n * n_hidden, plus n_hidden^2 or, "
                "when n_hidden > n_samples, n_samples^2)"
                + (", or set local_search=False" if self.local_search else "")
                + ", or fit a subsample and predict the rest."
            ),
        )

    def _warn_saturation(self, H):
        """DegenerateDataWarning when the hidden outputs hardly vary over the samples."""
        spread = float(np.sqrt(np.mean(np.var(H, axis=0))))
        size = float(np.sqrt(np.mean(H**2)))
        if size == 0.0 or spread < SATURATION_RATIO * size:
            ratio = 0.0 if size == 0.0 else spread / size
            warnings.warn(
                f"EMMC: the hidden-layer outputs are nearly constant over the samples (their "
                f"spread is {ratio:.2g} of their size; activation={self.activation!r}): the "
                f"random input weights in [-1, 1] expect standardized features, and the "
                f"labels are close to arbitrary. {_STANDARDIZE}.",
                DegenerateDataWarning,
                stacklevel=4,
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` by alternating ELM training and balanced label assignment.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored

        Returns
        -------
        self : EMMC
        """
        if isinstance(self.n_clusters, (bool, np.bool_)):
            raise InvalidParameterError(
                "The 'n_clusters' parameter of EMMC must be an int in the range [1, inf). "
                f"Got {self.n_clusters!r} instead."
            )
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        m = self.n_clusters
        check_n_clusters(n, m)
        check_scale(X)
        output = self.output
        if output == "auto":
            output = "single" if m <= 2 else "multi"
        self.output_ = output

        # balance bound l (the paper's |N_p - N_q| <= l); infeasible -> clear error, not cycling
        if m == 2:
            l = max_imbalance(n, self.balance)
            l = min(l, n - 2)  # neither cluster empty
        else:
            l = int(np.floor(self.balance * n + 1e-12))
        lo, hi = count_bounds(n, m, l)
        self.l_, self.count_bounds_ = l, (lo, hi)
        self._check_memory(n, d, output)  # before any large array and before k-means
        rng = check_random_state(self.random_state)

        # random hidden layer, drawn once per fit; ridge system factorized once per fit
        L = self.n_hidden
        self.input_weights_ = rng.uniform(-1.0, 1.0, size=(d, L))
        self.biases_ = rng.uniform(-1.0, 1.0, size=L)
        H = self._hidden(X)
        check_finite_result(
            H, what="EMMC's hidden-layer output", hint=f"X is too large. {_STANDARDIZE}."
        )
        ridge = ELMRidge(H, self.C)
        self.form_ = ridge.form
        if all_identical(X):
            return self._fit_identical(H, ridge, n, output)
        self._warn_saturation(H)
        hat = _HatMatrix(ridge) if self.local_search else None

        n_runs = self.n_init if isinstance(self.init, str) else 1
        best = None
        for _ in range(n_runs):
            run = self._run(H, ridge, hat, self._initial_labels(X, rng), l, lo, hi, output)
            if best is None or run["objective"] < best["objective"]:
                best = run
        if not best["converged"]:
            warnings.warn(
                f"EMMC did not converge in max_iter={self.max_iter} alternations (labels still "
                "changing"
                + (", or the local search's budget of n moves ran out" if self.local_search
                   else "")
                + "). Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.labels_ = best["labels"]
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.beta_ = best["beta"]
        self.objective_ = best["objective"]
        self.objective_path_ = best["path"]
        self.n_iter_ = best["n_iter"]
        self.n_flips_ = best["flips"]
        self.n_swaps_ = best["swaps"]
        self.init_labels_ = best["init"]
        start = np.bincount(self.init_labels_, minlength=m)
        excess = 0
        if np.all(start > 0):  # a partition into m clusters (not a one-cluster start)
            excess = int(max(np.maximum(start - hi, 0).sum(), np.maximum(lo - start, 0).sum()))
        at_end = self._balance_decided(H, ridge, hat, output, lo, hi)
        self.balance_decided_ = max(excess, at_end)
        if self.balance_decided_ > BALANCE_WARN_FRACTION * n:
            sizes = np.bincount(self.labels_, minlength=m).tolist()
            warnings.warn(
                f"EMMC: the balance constraint (balance={self.balance:g}: every cluster size "
                f"in [{lo}, {hi}], |N_p - N_q| <= {l}) decided the label of at least "
                f"{self.balance_decided_} of {n} samples (the initial labels had cluster sizes "
                f"{start.tolist()}; at the end {at_end} samples would lower the objective in "
                f"another cluster; final sizes {sizes}). If the clusters may differ in size, "
                "raise balance.",
                BalanceWarning,
                stacklevel=3,
            )
        self._warn_left_kmeans_start(X)
        return self

    def _warn_left_kmeans_start(self, X):
        """KMeansStartWarning: many samples relabelled into less compact clusters than the
        k-means start (``init="kmeans"`` only; sets ``start_moved_`` and
        ``inertia_ratio_``)."""
        n = X.shape[0]
        moved = int(np.count_nonzero(self.labels_ != self.init_labels_))
        end, start = _inertia(X, self.labels_), _inertia(X, self.init_labels_)
        self.start_moved_ = moved
        self.inertia_ratio_ = end / start if start > 0 else 1.0
        if not (isinstance(self.init, str) and self.init == "kmeans"):
            return
        if moved > START_MOVED_FRACTION * n and end > start * (1 + 1e-12):
            warnings.warn(
                f"EMMC moved {moved} of {n} samples ({moved / n:.0%}) away from its k-means "
                f"start (init_labels_) to clusters that are less compact: the within-cluster "
                f"sum of squares grew by {self.inertia_ratio_ - 1:.1%}. EMMC's objective "
                "prefers these labels, but on standardized real data such fits agreed less "
                "with the classes than k-means (benchmarks/results/emmc_defaults.md). If "
                "compact clusters are wanted, use the k-means labels init_labels_; if the "
                "clusters may differ in size, raise balance.",
                KMeansStartWarning,
                stacklevel=4,
            )

    def _fit_identical(self, H, ridge, n, output):
        warnings.warn(
            f"All {n} samples are identical: there is no cluster structure; every sample is "
            "put in cluster 0 (n_clusters_=1).",
            DegenerateDataWarning,
            stacklevel=4,
        )
        labels = np.zeros(n, dtype=int)
        T = _targets(labels, self.n_clusters, output)
        self.beta_ = ridge.solve(T)
        self.objective_ = elm_objective(H, self.beta_, T, self.C)
        self.labels_, self.init_labels_ = labels, labels.copy()
        self.n_clusters_ = 1
        self.objective_path_ = [self.objective_]
        self.n_iter_ = self.n_flips_ = self.n_swaps_ = self.balance_decided_ = 0
        self.start_moved_, self.inertia_ratio_ = 0, 1.0
        return self

    def _balance_decided(self, H, ridge, hat, output, lo, hi):
        """Samples whose final label the box decided (moved, or kept from a better cluster).

        A sample counts when the label step of the final outputs without the box would give
        it another label, or when moving it alone to another cluster would lower the
        objective but leaves a cluster size outside ``[lo, hi]``.
        """
        m, labels = self.n_clusters, self.labels_
        if m == 1:
            return 0
        V = _target_table(m, output)
        F = (H @ self.beta_).reshape(H.shape[0], V.shape[1])
        moved = _decide(F if output == "multi" else F[:, 0], m, output) != labels
        r = hat.diag if hat is not None else _hat_diagonal(ridge)
        G = V @ V.T
        g = np.diag(G).copy()
        delta = _move_deltas(F, labels, V, G, g, r, self.C)
        counts = np.bincount(labels, minlength=m)
        forbidden = ~((counts[labels] > lo)[:, None] & (counts < hi)[None, :])
        tol = 1e-9 * self.C * max(1.0, float(g.max()))
        blocked = np.any(forbidden & (delta < -tol), axis=1)
        return int(np.count_nonzero(moved | blocked))

    def _alternate(self, H, ridge, labels, l, lo, hi, output, budget):
        """Alternations from ``labels`` until a fixed point or ``budget`` alternations."""
        m = self.n_clusters
        path = []
        n_iter = 0
        while n_iter < budget:
            n_iter += 1
            T = _targets(labels, m, output)
            beta = ridge.solve(T)  # step 2: ELM training with the labels fixed
            F = H @ beta
            new = assign_labels(F, m, output, lo, hi, l)  # steps 3-4
            T_new = _targets(new, m, output)
            obj = 0.5 * float(np.sum(beta**2)) + 0.5 * self.C * float(np.sum((T_new - F) ** 2))
            path.append(obj)
            if np.array_equal(new, labels):
                return labels, n_iter, True, path
            labels = new
            # exact alternating minimisation never increases the objective: a tie means a
            # fixed point up to ties, stop instead of cycling
            if len(path) > 1 and path[-1] >= path[-2] * (1 - 1e-12):
                return labels, n_iter, True, path
        return labels, n_iter, False, path

    def _run(self, H, ridge, hat, labels, l, lo, hi, output):
        m, n = self.n_clusters, H.shape[0]
        init = labels.copy()
        V = _target_table(m, output)
        path, n_iter, flips, swaps = [], 0, 0, 0
        while True:
            labels, it, converged, p = self._alternate(
                H, ridge, labels, l, lo, hi, output, self.max_iter - n_iter
            )
            n_iter += it
            path += p
            if hat is None:
                break
            F = (H @ ridge.solve(V[labels])).reshape(n, V.shape[1])
            labels, f, s, finished = _local_search(F, labels.copy(), V, hat, self.C, lo, hi, n)
            flips, swaps = flips + f, swaps + s
            if f + s == 0:
                break
            T = _targets(labels, m, output)
            path.append(elm_objective(H, ridge.solve(T), T, self.C))
            converged = False  # the polished labels are not yet a fixed point
            if not finished or n_iter >= self.max_iter:
                break
        # final beta for the final labels (labels and beta consistent for predict)
        T = _targets(labels, m, output)
        beta = ridge.solve(T)
        obj = elm_objective(H, beta, T, self.C)
        return {
            "labels": labels,
            "beta": beta,
            "objective": obj,
            "path": path + [obj],
            "n_iter": n_iter,
            "flips": flips,
            "swaps": swaps,
            "init": init,
            "converged": converged,
        }

    def decision_function(self, X):
        """ELM outputs ``h(x) beta`` of new points: shape (n,) or (n, n_clusters)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._hidden(X) @ self.beta_

    def predict(self, X):
        """Assign new points with the trained ELM (sign / nearest id / largest output).

        The balance constraint is not applied to new points.
        """
        return _decide(self.decision_function(X), self.n_clusters, self.output_)
