"""EMMC's balanced label step (:func:`box_assignment`), re-exported by :mod:`mmcedu.emmc`."""

from __future__ import annotations

import numpy as np

__all__ = ["box_assignment", "ordered_cost", "edge_weights", "shortest_paths"]


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
    """Prices ``p`` and the sweeps made by cyclic coordinate ascent on the Lagrangian dual: sample ``i``
    takes ``k`` iff ``margin_i = cost[i, k] - min_{j != k} (cost[i, j] - p_j) < p_k``, so the best ``p_k``
    is 0 or halfway between two consecutive order statistics of the margins (at ``lo`` or ``hi``)."""
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
    """Residual edge weights ``w[a, b] = min_{label_i = a} cost[i, b] - cost[i, a]`` (``w[a, a] = 0``,
    a row of ``inf`` for an empty cluster) and ``arg``, the sample attaining each minimum; O(n m)."""
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
    """Floyd-Warshall on the ``m x m`` weights: distances ``d`` and next hops ``nxt``; a negative
    diagonal entry of ``d`` reveals a negative cycle."""
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


def _violation_change(counts, lo, hi):
    """``dv[s, t]``: change of the box violation when one sample moves from ``s`` to ``t``."""
    leave = np.where(counts > hi, -1, np.where(counts <= lo, 1, 0))
    enter = np.where(counts >= hi, 1, np.where(counts < lo, -1, 0))
    dv = leave[:, None] + enter[None, :]
    np.fill_diagonal(dv, 0)
    return dv


def _repair_path(cost, labels, counts, lo, hi, tol):
    """``(path, arg, violation, gap)``: while the box is violated, the shortest path that reduces
    the violation; once it holds, the shortest negative path or cycle, or ``None`` when the
    certificate ``gap >= -tol`` holds (the least of ``d``'s diagonal and of ``d[s, t]`` over the
    pairs with ``N_s > lo``, ``N_t < hi``)."""
    w, arg = edge_weights(cost, labels, counts.size)
    d, nxt = shortest_paths(w)
    viol = int(np.maximum(counts - hi, 0).sum() + np.maximum(lo - counts, 0).sum())
    gap = 0.0
    if viol > 0:
        cand = np.isfinite(d) & (_violation_change(counts, lo, hi) < 0)
        np.fill_diagonal(cand, False)
        if not cand.any():  # pragma: no cover - the box is feasible (checked above)
            raise RuntimeError("no violation-reducing move although the box is feasible")
    else:
        cand = np.isfinite(d) & (counts[:, None] > lo) & (counts[None, :] < hi)
        np.fill_diagonal(cand, False)
        gap = float(np.diag(d).min())
        if cand.any():
            gap = min(gap, float(d[cand].min()))
        if gap >= -tol:
            return None, arg, viol, gap
    score = np.where(cand, d, np.inf)
    s, t = (int(v) for v in np.unravel_index(int(np.argmin(score)), score.shape))
    return _path(nxt, s, t), arg, viol, gap


def _move_batch(cost, labels, counts, path, arg, lo, hi, viol, tol):
    """Move ``u`` samples along every edge of ``path``: ``(labels, u)``. ``u`` keeps each unit reducing
    the violation (or, once the box holds, the cost) and is halved while a negative cycle appears."""
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

    EMMC's balanced label step (``cost[i, k] = -2 f_ik`` for one-hot targets, :func:`ordered_cost`
    for one output regressing the ids): a transportation problem, solved on the ``m`` cluster nodes.
    Moving one sample from cluster ``a`` to ``b`` costs at best
    ``w_ab = min_{label_i = a} cost[i, b] - cost[i, a]`` (:func:`edge_weights`); a path
    ``s -> ... -> t`` changes only ``N_s`` (-1) and ``N_t`` (+1), a cycle no count. A labeling in the
    box is optimal iff this graph has no negative cycle and no shortest path ``d(s, t) < 0`` with
    ``N_s > lo``, ``N_t < hi`` (negative-cycle optimality of min-cost flows).

    Algorithm: (1) a warm start ``argmin_k cost[i, k] - p_k`` (no negative cycle for any ``p``), with
    prices ``p`` from sweeps of coordinate ascent on the Lagrangian dual
    ``g(p) = sum_i min_k (cost[i, k] - p_k) + sum_k min(lo p_k, hi p_k)``; (2) successive shortest
    paths (:func:`shortest_paths`): while the box is violated, along a shortest path that reduces the
    violation, then along negative shortest paths, until the certificate holds. Moving along
    *shortest* paths keeps "no negative cycle", and every step lowers (violation, cost)
    lexicographically. Time O(n m^2) per sweep and O(n m + m^3) per repair; memory
    ``24 n m + 48 n`` bytes besides ``cost``.

    Parameters
    ----------
    cost : ndarray of shape (n_samples, n_clusters)
    lo, hi : int
        Bounds on every cluster's size (``n_clusters * lo <= n_samples <= n_clusters * hi``).
    max_sweeps : int, default=20
        Sweeps of the price phase (a warm start: the result is exact for any value).
    rtol : float, default=1e-12
        Gains below ``rtol * max(1, max |cost|)`` count as zero (round-off).
    return_info : bool, default=False
        Also return a dict: ``sweeps`` (price phase), ``repairs`` (shortest-path moves), ``moved``
        (samples moved by them) and ``gap`` (the final certificate, ``>= -tol``).

    Returns
    -------
    labels : ndarray of int of shape (n_samples,), and the dict with ``return_info=True``.
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2:
        raise ValueError(f"cost must be 2-D (n_samples, n_clusters); got shape {cost.shape}.")
    n, m = cost.shape
    if not m * lo <= n <= m * hi:
        raise ValueError(f"No labeling of {n} samples into {m} clusters has {lo} <= N_k <= {hi}.")
    if not np.all(np.isfinite(cost)):
        raise ValueError("The cost matrix of the label step contains NaN or infinity.")
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
