"""EMMC's balanced label step: labels of least cost with every cluster size in ``[lo, hi]``
(:func:`box_assignment`, exact in O(n m) memory, with its certificate
:func:`box_optimality_gap`); :mod:`mmcedu.emmc` re-exports the public functions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_assignment", "box_optimality_gap", "ordered_cost", "edge_weights", "shortest_paths"]


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


def _certificate(d, counts, lo, hi):
    """The pairs ``s != t`` with a finite path and ``N_s > lo``, ``N_t < hi``, and the gap:
    the least of ``d``'s diagonal (cycles) and of ``d`` on those pairs."""
    cand = np.isfinite(d) & (counts[:, None] > lo) & (counts[None, :] < hi)
    np.fill_diagonal(cand, False)
    gap = float(np.diag(d).min())
    if cand.any():
        gap = min(gap, float(d[cand].min()))
    return cand, gap


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
    d, _ = shortest_paths(edge_weights(cost, labels, m)[0])
    return _certificate(d, counts, lo, hi)[1]


def _repair_path(cost, labels, counts, lo, hi, tol):
    """The shortest path to move samples along next, or ``None`` where the certificate holds.

    Returns ``(path, arg, violation, gap)``: while the box is violated, the shortest path
    that reduces the violation; once it holds, the shortest path or cycle of negative length.
    """
    w, arg = edge_weights(cost, labels, counts.size)
    d, nxt = shortest_paths(w)
    viol = _violation(counts, lo, hi)
    gap = 0.0
    if viol > 0:
        cand = np.isfinite(d) & (_violation_change(counts, lo, hi) < 0)
        np.fill_diagonal(cand, False)
        if not cand.any():  # pragma: no cover - the box is feasible (checked above)
            raise RuntimeError("no violation-reducing move although the box is feasible")
    else:
        cand, gap = _certificate(d, counts, lo, hi)
        if gap >= -tol:
            return None, arg, viol, gap
    score = np.where(cand, d, np.inf)
    s, t = (int(v) for v in np.unravel_index(int(np.argmin(score)), score.shape))
    return _path(nxt, s, t), arg, viol, gap


def _move_batch(cost, labels, counts, path, arg, lo, hi, viol, tol):
    """Move ``u`` samples along every edge of ``path``: ``(labels, u)``.

    ``u`` never passes the count segments of the path's ends (so that each unit reduces the
    violation while it is positive) nor the size of a cluster; once the box holds, only while
    the marginal path cost is negative. A batch is kept only if the labeling stays optimal for
    its new counts (no negative cycle), else ``u`` is halved.
    """
    m, s, t = counts.size, path[0], path[-1]
    edges = list(zip(path[:-1], path[1:]))
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
            return labels, u
        d2, _ = shortest_paths(edge_weights(cost, labels, m)[0])
        if np.diag(d2).min() >= -tol:
            return labels, u
        labels = old
        u //= 2


def box_assignment(cost, lo, hi, *, max_sweeps=20, rtol=1e-12, return_info=False):
    """Labels minimising ``sum_i cost[i, label_i]`` subject to ``lo <= N_k <= hi``, exactly.

    EMMC's balanced label step: ``cost[i, k]`` is the cost of giving sample ``i`` label ``k``,
    ``-2 f_ik`` with one-hot targets, ``(f_i - k)^2`` with one output regressing the ids
    ``1..m`` (:func:`ordered_cost`). It is a transportation problem (``n`` sources of one unit,
    ``m`` sinks whose intake lies in ``[lo, hi]``), solved here on the ``m`` cluster nodes.

    *Residual graph on the clusters.* For a labeling, moving one sample from cluster ``a`` to
    ``b`` costs at best ``w_ab = min_{label_i = a} cost[i, b] - cost[i, a]``
    (:func:`edge_weights`). A simple path ``s -> ... -> t`` moves one sample along each edge
    and changes only ``N_s`` (-1) and ``N_t`` (+1); a cycle changes no count. By the
    negative-cycle optimality of min-cost flows, a labeling inside the box is optimal iff the
    graph has no negative cycle and no pair ``s != t`` with ``N_s > lo``, ``N_t < hi`` has a
    shortest-path length ``d(s, t) < 0`` (:func:`box_optimality_gap`, O(n m + m^3)).

    *Algorithm.* (1) Prices: for any ``p`` the labeling ``argmin_k cost[i, k] - p_k`` has no
    negative cycle; sweeps of coordinate ascent on the Lagrangian dual
    ``g(p) = sum_i min_k (cost[i, k] - p_k) + sum_k min(lo p_k, hi p_k)`` (each coordinate
    maximised exactly by an order statistic), until no price changes or the counts are in the
    box with complementary slackness, give a warm start close to the optimum. (2) Successive
    shortest paths: while the box is violated, move samples along a shortest path from an
    over-full cluster (or to an under-full one); once it holds, along a shortest path with
    ``d(s, t) < 0``. Moving along a *shortest* path keeps "no negative cycle", every step
    lowers (violation, cost) lexicographically, and the loop stops exactly when the
    certificate holds. Several samples per edge move at once when the result keeps the
    invariant.

    Time O(n m^2) per price sweep and O(n m + m^3) per repair; memory ``24 n m + 48 n`` bytes
    besides ``cost`` (a shifted copy of the costs, argmin temporaries, a few length-``n``
    arrays).

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
    while True:
        path, arg, viol, gap = _repair_path(cost, labels, counts, lo, hi, tol)
        if path is None:
            break
        labels, u = _move_batch(cost, labels, counts, path, arg, lo, hi, viol, tol)
        counts[path[0]] -= u
        counts[path[-1]] += u
        repairs += 1
        moved += u * (len(path) - 1)
        if repairs > max_repairs:  # pragma: no cover - each repair lowers (violation, cost)
            raise RuntimeError(f"The balanced label step made more than {max_repairs} repairs.")
    if return_info:
        return labels, {"sweeps": sweeps, "repairs": repairs, "moved": moved, "gap": gap}
    return labels
