"""EMMC's local search: exact changes of the objective for single label moves and swaps.

The formulas are those of :mod:`mmcedu.emmc` (module docstring, "Local search"): with
``R = K (K + I/C)^{-1}`` (:class:`_HatMatrix`) and ``F = R T``, a move of sample ``i`` to label
``b`` changes ``J*`` by ``delta[i, b]`` (:func:`_move_deltas`), a swap adds ``C R_ij ||t_a -
t_b||^2`` (:func:`_best_swap`), and :func:`_local_search` descends until neither improves.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

__all__ = []  # private helpers of mmcedu.emmc


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
