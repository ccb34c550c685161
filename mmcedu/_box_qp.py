"""Exact minimisation of a convex quadratic over a box, ``min a^T G a - 2 e^T a``, ``0 <= a <= C``.

The SVM dual of maximum margin clustering (:func:`mmcedu.sdp_mmc.svm_dual_objective`) is
this problem with ``G = K o y y^T``. ``G`` is only positive *semi*definite (a linear kernel
gives a singular ``G``), and for the hard margin (``C = inf``) the minimum may be ``-inf``;
:func:`solve_box_qp` handles both exactly, by a primal active-set method started from an
L-BFGS-B point. It is private: the package uses it, the book teaches the dual, not this solver.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize

__all__ = ["solve_box_qp"]


def _hard_margin_unbounded(G, scale):
    """True when some ``d >= 0`` with ``G d = 0`` has ``e^T d > 0`` (``q`` unbounded below).

    ``d`` is sought in the numerical null space ``N`` of ``G`` (eigenvalues below
    ``1e-10 * scale * n``): a feasibility LP ``d = N c >= 0, e^T d = 1``.
    """
    n = G.shape[0]
    lam, V = np.linalg.eigh(G)
    N = V[:, lam <= 1e-10 * scale * n]
    if N.shape[1] == 0:
        return False
    k = N.shape[1]
    if k == 1:  # d = c N: feasible iff N has one sign (up to round-off)
        v = N[:, 0] * np.sign(N[np.argmax(np.abs(N[:, 0])), 0])
        return bool(np.all(v >= -1e-9))
    res = linprog(
        np.zeros(k),
        A_ub=-N,
        b_ub=np.zeros(n),
        A_eq=(N.sum(axis=0))[None, :],
        b_eq=[1.0],
        bounds=[(None, None)] * k,
        method="highs",
    )
    return res.status == 0


def _active_set(G, a, hi, max_iter, scale):
    """Primal active-set iterations from the feasible ``a``; returns ``(a, converged)``."""
    n = G.shape[0]
    e = np.ones(n)
    finite_hi = np.isfinite(hi)
    tol_b = 1e-9 * max(1.0, hi if finite_hi else float(np.max(a, initial=1.0)))
    lower = a <= tol_b
    upper = (a >= hi - tol_b) if finite_hi else np.zeros(n, bool)
    a = a.copy()
    a[lower] = 0.0
    a[upper] = hi if finite_hi else 0.0
    for _ in range(max_iter):
        W = lower | upper
        F = np.flatnonzero(~W)
        if F.size:
            r = e[F] - G[np.ix_(F, np.flatnonzero(W))] @ a[W]
            lam, V = np.linalg.eigh(G[np.ix_(F, F)])
            keep = lam > 1e-11 * scale * max(1, F.size)
            coef = V.T @ r
            null_part = V[:, ~keep] @ coef[~keep]
            if np.linalg.norm(null_part) > 1e-10 * max(1.0, np.linalg.norm(r)):
                p, full_step = null_part, np.inf  # q decreases linearly along p
            else:
                p, full_step = V[:, keep] @ (coef[keep] / lam[keep]) - a[F], 1.0
            # ratio test: the longest feasible step along p
            with np.errstate(divide="ignore", invalid="ignore"):
                t_lo = np.where(p < 0, -a[F] / p, np.inf)
                t_hi = np.where(p > 0, (hi - a[F]) / p, np.inf) if finite_hi else np.full(F.size, np.inf)
            t_each = np.minimum(t_lo, t_hi)
            k = int(np.argmin(t_each))
            if t_each[k] < full_step:
                a[F] = a[F] + t_each[k] * p
                if t_lo[k] <= t_hi[k]:
                    a[F[k]], lower[F[k]] = 0.0, True
                else:
                    a[F[k]], upper[F[k]] = hi, True
                continue
            if not np.isfinite(full_step):
                return None, True  # no bound blocks a direction of unbounded decrease
            a[F] = np.clip(a[F] + p, 0.0, hi)
        g = 2.0 * (G @ a) - 2.0 * e
        tol_g = 1e-10 * scale * max(1.0, float(np.max(np.abs(a), initial=0.0)))
        viol = np.where(lower, -g, 0.0) + np.where(upper, g, 0.0)  # > 0: the bound should go
        k = int(np.argmax(viol)) if n else 0
        if n == 0 or viol[k] <= tol_g:
            return a, True
        lower[k] = upper[k] = False
    return a, False


def solve_box_qp(G, C, max_iter=None, warm_start_above=40):
    """Minimise ``q(a) = a^T G a - 2 e^T a`` over ``0 <= a <= C`` (``C = inf``: ``a >= 0``).

    ``G`` is symmetric PSD, possibly singular. A primal active-set method solves it exactly:
    on the free coordinates ``F`` it solves the stationarity system
    ``G_FF a_F = e_F - G_FW a_W`` (pseudo-inverse; when the system is inconsistent ``q``
    decreases linearly along the null-space residual), takes the longest feasible step,
    adds the blocking bound or releases the bound with the most negative multiplier, until
    every KKT condition holds. It starts from ``a = 0`` for small ``n`` and from an L-BFGS-B
    solution otherwise (or when the first run does not converge). For the hard margin an LP
    first decides whether ``q`` is unbounded below.

    Returns
    -------
    a : ndarray, the minimiser (``None`` when ``q`` is unbounded below: hard margin only)
    value : float, ``-min q`` (``inf`` when unbounded)
    """
    n = G.shape[0]
    hi = float(C)
    finite_hi = np.isfinite(hi)
    scale = max(1.0, float(np.max(np.abs(G))) if n else 1.0)
    if max_iter is None:
        max_iter = 20 * n + 100

    def fun(a):
        Ga = G @ a
        return float(a @ Ga - 2.0 * a.sum()), 2.0 * Ga - 2.0 * np.ones(n)

    if not finite_hi and _hard_margin_unbounded(G, scale):
        return None, np.inf
    a, converged = (None, False)
    if n <= warm_start_above:
        a, converged = _active_set(G, np.zeros(n), hi, max_iter, scale)
    if not converged:
        res = minimize(
            fun,
            np.full(n, min(hi, 1.0) / 2.0),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, hi if finite_hi else None)] * n,
            options={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-10},
        )
        start = np.clip(np.nan_to_num(res.x), 0.0, hi)
        a, converged = _active_set(G, start, hi, max_iter, scale)
        if not converged and a is not None:
            a = start if fun(start)[0] < fun(a)[0] else a
    if a is None:
        return None, np.inf
    return a, -fun(a)[0]
