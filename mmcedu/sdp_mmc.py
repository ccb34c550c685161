"""SDP maximum margin clustering (Xu, Neufeld, Larson & Schuurmans, NIPS 2004).

The method as restated in Section 2 of Valizadegan & Jin (NIPS 2006), Eqs. (1)-(2).

Notation (the paper's symbols)
------------------------------
``K``       n x n kernel matrix, centred in feature space (:func:`mmcedu.kernels.center_kernel`)
            because the relaxation has no bias term.
``y``       labels in {-1, +1}^n; ``e`` the all-ones vector; ``o`` the elementwise product.
``alpha``   SVM dual variables, ``0 <= alpha <= C``.
``omega(y)`` the SVM dual value in Xu et al.'s scaling (twice the value of Eq. (1))::

                omega(y) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o y y^T) alpha.

            It equals ``||w||^2 + 2 C sum_i xi_i`` at the optimal bias-free soft-margin SVM,
            so a small omega is a large margin. Maximum margin clustering minimises omega over
            balanced labelings ``|e^T y| <= l``.
``M``       the relaxation of ``y y^T``: ``M`` PSD with ``diag(M) = e``.
``mu, nu``  multipliers of ``alpha >= 0`` and ``alpha <= C``; ``delta`` the epigraph variable.

The SDP (Eq. (2) with the class-balance constraint of Xu et al.)::

    min_{M, delta, mu, nu}  delta
    s.t.  [[K o M,            e + mu - nu        ],
           [(e + mu - nu)^T,  delta - 2 C nu^T e ]]  PSD,
          M PSD,  diag(M) = e,  -l e <= M e <= l e,  mu >= 0,  nu >= 0,

with ``l = floor(balance * n)`` (:func:`mmcedu.balance.max_imbalance`). For ``M = y y^T`` the
row sums are ``M e = (e^T y) y``, so each balance row says ``|e^T y| <= l``: exactly the
balance of a labeling, written linearly in ``M``. The hard margin (``C = None``) drops ``nu``.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import check_n_clusters, solve_cvxpy
from .balance import balanced_labelings, balanced_sign, is_balanced, max_imbalance
from .kernels import center_kernel, check_kernel_matrix, kernel_matrix

__all__ = [
    "SDPMMC",
    "svm_dual_objective",
    "brute_force_mmc",
    "solve_sdp_mmc",
    "SDPSolution",
    "kkt_residuals",
    "eigenvector_rounding",
    "randomized_rounding",
    "measure_sdp_mmc",
]


# --------------------------------------------------------------------------------------
# The exact SVM dual omega(y)
# --------------------------------------------------------------------------------------
def _hard_margin_unbounded(G, scale):
    """True when some ``d >= 0`` with ``G d = 0`` has ``e^T d > 0`` (``q`` unbounded below).

    ``d`` is sought in the numerical null space ``N`` of ``G`` (eigenvalues below
    ``1e-10 * scale * n``): a feasibility LP ``d = N c >= 0, e^T d = 1``.
    """
    from scipy.optimize import linprog

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


def _box_qp(G, C, max_iter=None, warm_start_above=40):
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


def svm_dual_objective(K, y, C=1.0, *, return_alpha=False):
    """Exact SVM dual ``omega(y) = max_{0 <= a <= C} 2 a^T e - a^T (K o y y^T) a``.

    This is twice the value of the source's Eq. (1) (Xu et al.'s scaling; no bias, so no
    ``alpha^T y = 0``), and the quantity the SDP relaxes: ``min_y omega(y)`` is maximum margin
    clustering.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Kernel matrix (the estimator passes the centred one).
    y : array-like of shape (n,)
        Labels in {-1, +1} (any real vector is accepted: ``G = K o y y^T``; a {0, 1}
        labeling is refused, since its zeros would silently drop samples).
    C : float or None, default=1.0
        Box bound; ``None`` or ``np.inf`` is the hard margin (``omega`` may then be ``inf``
        when no bias-free separator exists).
    return_alpha : bool, default=False
        Also return the maximiser ``alpha``.

    Returns
    -------
    omega : float
    alpha : ndarray of shape (n,) or None, only with ``return_alpha=True``
        ``None`` when ``omega`` is infinite.
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    if K.shape != (y.size, y.size):
        raise ValueError(f"K must be ({y.size}, {y.size}) to match y; got {K.shape}.")
    if y.size and np.any(y == 0) and np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError(
            "y looks like {0, 1} cluster labels; omega(y) needs labels in {-1, +1}: "
            "pass 2 * y - 1."
        )
    C = np.inf if C is None else float(C)
    if not C > 0:
        raise ValueError(f"C must be positive (or None for the hard margin); got {C}.")
    G = K * np.outer(y, y)
    G = (G + G.T) / 2.0
    alpha, omega = _box_qp(G, C)  # alpha None: unbounded, no hard-margin separator
    # omega * max|G| is invariant to the kernel's scale (hard margin); beyond 1e10 the
    # "separator" is numerically a direction of unboundedness.
    if np.isinf(C) and (alpha is None or omega * max(float(np.max(np.abs(G))), 1e-300) > 1e10):
        alpha, omega = None, np.inf
    return (omega, alpha) if return_alpha else omega


def brute_force_mmc(K, C=1.0, balance=0.1):
    """Maximum margin clustering by enumeration: ``min omega(y)`` over balanced labelings.

    Enumerates every ``y`` with ``y_1 = +1`` and ``|e^T y| <= floor(balance n)``
    (:func:`mmcedu.balance.balanced_labelings`), so only for tiny ``n`` (at most 20).

    Returns
    -------
    y : ndarray of int in {-1, +1}, the best labeling
    omega : float, its objective ``svm_dual_objective(K, y, C)``
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    l = max_imbalance(n, balance)
    best_y, best = None, np.inf
    for y in balanced_labelings(n, l):
        if np.all(y == y[0]):
            continue  # one cluster only
        w = svm_dual_objective(K, y, C)
        if w < best:
            best_y, best = y, w
    if best_y is None:
        raise ValueError(f"No balanced labeling of n={n} points into two clusters exists.")
    return best_y, float(best)


# --------------------------------------------------------------------------------------
# The SDP relaxation
# --------------------------------------------------------------------------------------
@dataclass
class SDPSolution:
    """Primal and dual solution of the SDP of :func:`solve_sdp_mmc`.

    ``alpha`` is read from the dual of the block constraint: its dual matrix is
    ``[[A, -alpha], [-alpha^T, 1]]`` (see the chapter), so ``alpha = -Z[:n, n] / Z[n, n]``.
    """

    M: np.ndarray
    delta: float
    mu: np.ndarray
    nu: np.ndarray | None
    C: float | None
    l: int
    alpha: np.ndarray
    duals: dict = field(repr=False)
    stats: dict = field(default_factory=dict)


def _as_column(v, n):
    import cvxpy as cp

    return cp.reshape(v, (n, 1), order="F")


def solve_sdp_mmc(K, C=1.0, balance=0.1, *, solver=None, solver_options=None, fix_M=None):
    """Solve the SDP relaxation of maximum margin clustering (source Eq. (2)) with cvxpy.

    ``K`` is used as given: centre it first (:func:`mmcedu.kernels.center_kernel`), as
    :class:`SDPMMC` does. See the module docstring for the program.

    Parameters
    ----------
    K : array-like of shape (n, n)
    C : float or None, default=1.0
        ``None``: hard margin (no ``nu``).
    balance : float, default=0.1
        ``l = floor(balance n)`` bounds ``|M e|`` row-wise.
    solver : str, default=None
        cvxpy solver, ``None`` means SCS.
    solver_options : dict, default=None
        Passed to ``problem.solve``.
    fix_M : array-like of shape (n, n), default=None
        Add the constraint ``M = fix_M``. With ``fix_M = y y^T`` the optimum is exactly
        ``svm_dual_objective(K, y, C)`` (the Schur-complement step of the derivation).

    Returns
    -------
    SDPSolution
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    l = max_imbalance(n, balance)
    e = np.ones(n)
    M = cp.Variable((n, n), symmetric=True, name="M")
    mu = cp.Variable(n, name="mu")
    delta = cp.Variable(name="delta")
    if C is None:
        nu = None
        g = e + mu
        corner = delta
    else:
        nu = cp.Variable(n, name="nu")
        g = e + mu - nu
        corner = delta - 2.0 * C * cp.sum(nu)
    block = cp.bmat(
        [
            [cp.multiply(K, M), _as_column(g, n)],
            [_as_column(g, n).T, cp.reshape(corner, (1, 1), order="F")],
        ]
    )
    cons = {
        "block": block >> 0,
        "M_psd": M >> 0,
        "diag": cp.diag(M) == 1,
        "balance_upper": M @ e <= l,
        "balance_lower": M @ e >= -l,
        "mu": mu >= 0,
    }
    if nu is not None:
        cons["nu"] = nu >= 0
    if fix_M is not None:
        cons["fix_M"] = M == np.asarray(fix_M, dtype=float)
    problem = cp.Problem(cp.Minimize(delta), list(cons.values()))
    stats = solve_cvxpy(
        problem, solver, default="SCS", what="SDP maximum margin clustering relaxation",
        **(solver_options or {}),
    )
    Mv = np.asarray(M.value)
    Mv = (Mv + Mv.T) / 2.0
    duals = {k: (None if c.dual_value is None else np.asarray(c.dual_value)) for k, c in cons.items()}
    Z = duals["block"]
    alpha = -Z[:n, n] / Z[n, n] if Z is not None and Z[n, n] > 0 else np.full(n, np.nan)
    return SDPSolution(
        M=Mv,
        delta=float(delta.value),
        mu=np.asarray(mu.value),
        nu=None if nu is None else np.asarray(nu.value),
        C=C,
        l=l,
        alpha=alpha,
        duals=duals,
        stats=stats,
    )


def kkt_residuals(K, sol):
    """KKT residuals of an :class:`SDPSolution` (solved without ``fix_M``), from cvxpy's duals.

    With dual matrices ``Z`` (block constraint) and ``W`` (``M`` PSD), multipliers ``s``
    (``diag(M) = e``, cvxpy's sign), ``lam_up, lam_lo >= 0`` (balance rows), ``eta``
    (``mu >= 0``) and ``xi`` (``nu >= 0``), the Lagrangian's stationarity conditions are

    * delta: ``Z[n, n] = 1``;
    * mu: ``eta = 2 alpha``; nu: ``xi = 2 (C e - alpha)``, with ``alpha = -Z[:n, n]``;
    * M: ``W = Diag(s) - (Z[:n,:n] o K) + (lam e^T + e lam^T) / 2``, ``lam = lam_up - lam_lo``;

    and complementary slackness is ``S Z = 0``, ``M W = 0``, ``lam_up o (l e - M e) = 0``,
    ``lam_lo o (l e + M e) = 0``, ``eta o mu = 0``, ``xi o nu = 0``. The dual objective is
    ``2 alpha^T e - e^T s - l e^T (lam_up + lam_lo)`` and equals ``delta`` at the optimum.

    Returns
    -------
    dict of non-negative floats (all near 0 at an accurate solution): ``gap`` (primal minus
    dual objective, relative), ``stationarity_*``, ``compl_*`` (complementary slackness),
    ``dual_feasibility`` (most negative eigenvalue / entry of the duals).
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    d = sol.duals
    e = np.ones(n)
    Z, W, t = d["block"], d["M_psd"], d["diag"]
    lam_up, lam_lo, eta = d["balance_upper"], d["balance_lower"], d["mu"]
    M, l = sol.M, sol.l
    a = -Z[:n, n]
    g = e + sol.mu - (0 if sol.nu is None else sol.nu)
    corner = sol.delta - (0 if sol.nu is None else 2.0 * sol.C * sol.nu.sum())
    S = np.block([[K * M, g[:, None]], [g[None, :], np.array([[corner]])]])
    lam = lam_up - lam_lo
    W_pred = np.diag(t) - Z[:n, :n] * K + (np.outer(lam, e) + np.outer(e, lam)) / 2.0
    rowsum = M @ e
    dual_obj = 2.0 * a.sum() - t.sum() - l * (lam_up.sum() + lam_lo.sum())
    scale = max(1.0, abs(sol.delta))
    out = {
        "gap": float(abs(sol.delta - dual_obj) / scale),
        "stationarity_delta": float(abs(Z[n, n] - 1.0)),
        "stationarity_mu": float(np.max(np.abs(eta - 2.0 * a))),
        "stationarity_M": float(np.max(np.abs(W - W_pred))),
        "compl_block": float(np.linalg.norm(S @ Z)) / scale,
        "compl_M": float(np.linalg.norm(M @ W)) / scale,
        "compl_balance": float(np.max(np.abs(lam_up * (l - rowsum))) + np.max(np.abs(lam_lo * (l + rowsum)))),
        "compl_mu": float(np.max(np.abs(eta * sol.mu))),
        "dual_feasibility": float(
            max(0.0, -np.linalg.eigvalsh(Z)[0], -np.linalg.eigvalsh(W)[0], -lam_up.min(), -lam_lo.min(), -eta.min())
        ),
    }
    if sol.nu is not None:
        xi = d["nu"]
        out["stationarity_nu"] = float(np.max(np.abs(xi - 2.0 * (sol.C * e - a))))
        out["compl_nu"] = float(np.max(np.abs(xi * sol.nu)))
        out["dual_feasibility"] = max(out["dual_feasibility"], float(-xi.min()))
    return out


# --------------------------------------------------------------------------------------
# Rounding M to labels
# --------------------------------------------------------------------------------------
def _canonical(y):
    """Fix the sign symmetry y ~ -y: the first sample gets +1."""
    y = np.asarray(y, dtype=int)
    return y if y[0] > 0 else -y


def eigenvector_rounding(M, l):
    """Labels from the leading eigenvector ``v`` of ``M``: ``balanced_sign(v, l)``.

    For a rank-one ``M = y y^T`` this returns ``y`` (up to sign) exactly.
    """
    w, V = np.linalg.eigh(np.asarray(M, dtype=float))
    return _canonical(balanced_sign(V[:, -1], l))


def randomized_rounding(M, K, C, l, *, n_rounds=100, random_state=None):
    """Goemans-Williamson style rounding, keeping the best balanced labeling by ``omega``.

    Factor ``M = V V^T`` (eigenvalues clipped at 0); for each of ``n_rounds`` Gaussian
    directions ``r`` take ``y = balanced_sign(V r, l)`` (random hyperplane, then the fewest
    moves to meet the balance), evaluate the exact ``omega(y)`` with
    :func:`svm_dual_objective` and keep the smallest. The eigenvector labeling is a candidate
    too, so this is never worse than :func:`eigenvector_rounding` by the objective.

    Returns
    -------
    y : ndarray of int in {-1, +1}
    omega : float
    """
    rng = check_random_state(random_state)
    w, U = np.linalg.eigh(np.asarray(M, dtype=float))
    V = U * np.sqrt(np.clip(w, 0.0, None))
    candidates = {tuple(eigenvector_rounding(M, l))}
    for _ in range(n_rounds):
        y = _canonical(balanced_sign(V @ rng.standard_normal(V.shape[1]), l))
        candidates.add(tuple(y))
    best_y, best = None, np.inf
    for cand in sorted(candidates):  # sorted: the result does not depend on set order
        y = np.array(cand)
        if np.all(y == y[0]):
            continue
        omega = svm_dual_objective(K, y, C)
        if omega < best:
            best_y, best = y, omega
    if best_y is None:  # every candidate was a single cluster (degenerate M)
        best_y = eigenvector_rounding(M, l)
        best = svm_dual_objective(K, best_y, C)
    return best_y, float(best)


# --------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------
class SDPMMC(ClusterMixin, BaseEstimator):
    """SDP maximum margin clustering into two clusters (Xu et al. 2004).

    Solves the semidefinite relaxation Eq. (2) of Valizadegan & Jin (2006, Section 2), which
    restates Xu et al. (2004): the SVM dual Eq. (1) in Xu et al.'s scaling,
    ``omega(y) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o y y^T) alpha``, is minimised
    over the relaxation ``M`` of ``y y^T``::

        min_{M, delta, mu, nu}  delta
        s.t. [[K o M, e + mu - nu], [(e + mu - nu)^T, delta - 2 C nu^T e]] PSD,
             M PSD, diag(M) = e, -l e <= M e <= l e, mu >= 0, nu >= 0,

    then ``M`` is rounded to labels. The relaxation has no bias term, so the kernel is
    centred in feature space first (``H K H``, ``H = I - e e^T / n``); the balance
    constraint ``|e^T y| <= l`` with ``l = floor(balance n)`` is the row-wise form
    ``-l e <= M e <= l e`` of Xu et al. (for ``M = y y^T``, ``M e = (e^T y) y``). There are
    ``n (n + 1) / 2`` unknowns in ``M``: the method is slow beyond a few hundred samples.

    Parameters
    ----------
    C : float or None, default=1.0
        Soft-margin constant (the box ``0 <= alpha <= C``); ``None`` is the hard margin
        (no ``nu``).
    balance : float in [0, 1], default=0.1
        Largest allowed class imbalance ``|N+ - N-| <= floor(balance n)``.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        With ``"precomputed"``, ``X`` is the n x n kernel matrix (checked to be PSD).
    gamma : float, default=None
        RBF width ``exp(-gamma ||x - x'||^2)``; ``None`` means ``1 / n_features``.
    center : bool, default=True
        Centre ``K`` in feature space (needed by the bias-free relaxation; ``False`` only to
        show why).
    rounding : {"eigenvector", "randomized"}, default="eigenvector"
        ``"eigenvector"``: balanced sign of the leading eigenvector of ``M``.
        ``"randomized"``: Goemans-Williamson random hyperplanes through a factor of ``M``,
        keeping the balanced labeling with the smallest exact ``omega(y)``.
    n_rounds : int, default=100
        Number of random hyperplanes of the randomized rounding.
    solver : str, default=None
        cvxpy solver; ``None`` means SCS (Clarabel's memory grows like n^4 here).
    solver_options : dict, default=None
        Keyword arguments of ``cvxpy.Problem.solve`` (e.g. ``{"eps": 1e-6}`` for SCS).
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized rounding.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in {0, 1} (sample 0 is in cluster 0).
    M_ : ndarray of shape (n_samples, n_samples)
        Solution of the relaxation (approximately ``y y^T`` when the relaxation is tight).
    objective_ : float
        Optimal value ``delta`` of the SDP: a lower bound on ``min_y omega(y)``.
    labeling_objective_ : float
        Exact ``omega(y)`` of the returned labels (``>= objective_``).
    alpha_ : ndarray of shape (n_samples,)
        SVM dual variables read from the dual of the block constraint.
    kernel_matrix_ : ndarray of shape (n_samples, n_samples)
        The (centred) kernel the SDP used.
    solver_stats_ : dict
        Solver name, status, objective, times and iterations (from cvxpy).
    n_features_in_ : int
        Number of features seen in ``fit``.

    References
    ----------
    L. Xu, J. Neufeld, B. Larson and D. Schuurmans. Maximum margin clustering. NIPS 17, 2004.
    H. Valizadegan and R. Jin. Generalized maximum margin clustering and unsupervised kernel
    learning. NIPS 19, 2006 (Section 2, Eqs. (1)-(2)).
    M. X. Goemans and D. P. Williamson. Improved approximation algorithms for maximum cut and
    satisfiability problems using semidefinite programming. J. ACM 42(6), 1995.

    Examples
    --------
    >>> from mmcedu import SDPMMC, datasets, metrics
    >>> X, y = datasets.two_gaussians(40, distance=6.0, random_state=0)
    >>> model = SDPMMC(gamma=0.1).fit(X)
    >>> float(metrics.clustering_error(y, model.labels_))
    0.0
    >>> bool(model.objective_ <= model.labeling_objective_ + 1e-3)
    True
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "balance": [Interval(Real, 0, 1, closed="both")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "center": ["boolean"],
        "rounding": [StrOptions({"eigenvector", "randomized"})],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "solver": [str, None],
        "solver_options": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        C=1.0,
        balance=0.1,
        kernel="rbf",
        gamma=None,
        center=True,
        rounding="eigenvector",
        n_rounds=100,
        solver=None,
        solver_options=None,
        random_state=None,
    ):
        self.C = C
        self.balance = balance
        self.kernel = kernel
        self.gamma = gamma
        self.center = center
        self.rounding = rounding
        self.n_rounds = n_rounds
        self.solver = solver
        self.solver_options = solver_options
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Solve the SDP relaxation on ``X`` and round ``M`` to two clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) with
            ``kernel="precomputed"``
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n = X.shape[0]
        check_n_clusters(n, 2)
        rng = check_random_state(self.random_state)
        if self.kernel == "precomputed":
            K = check_kernel_matrix(X, psd=True)
        else:
            K = kernel_matrix(X.astype(np.float64), self.kernel, self.gamma)
        if self.center:
            K = center_kernel(K)
        K = (K + K.T) / 2.0
        l = max_imbalance(n, self.balance)
        sol = solve_sdp_mmc(
            K, self.C, self.balance, solver=self.solver, solver_options=self.solver_options
        )
        if self.rounding == "eigenvector":
            y_pm = eigenvector_rounding(sol.M, l)
            omega = svm_dual_objective(K, y_pm, self.C)
        else:
            y_pm, omega = randomized_rounding(
                sol.M, K, self.C, l, n_rounds=self.n_rounds, random_state=rng
            )
        assert is_balanced(y_pm, l)
        self.labels_ = (y_pm < 0).astype(int)
        self.M_ = sol.M
        self.objective_ = sol.delta
        self.labeling_objective_ = float(omega)
        self.alpha_ = sol.alpha
        self.kernel_matrix_ = K
        self.solver_stats_ = sol.stats
        return self


# --------------------------------------------------------------------------------------
# Scaling measurement (used by the benchmark and the chapter)
# --------------------------------------------------------------------------------------
def _rss_status(field):
    """``VmRSS`` / ``VmHWM`` of this process in MB (Linux ``/proc``), or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _reset_peak_rss():
    """Reset the kernel's peak-RSS counter (``echo 5 > /proc/self/clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _rss_status("VmRSS") is not None
    except OSError:
        return False


def _measure_one(n, gamma, solver, solver_options, random_state, memory):
    from .datasets import two_gaussians

    X, _ = two_gaussians(int(n), random_state=random_state)
    K = center_kernel(kernel_matrix(X, "rbf", gamma))
    if memory == "rss" and not _reset_peak_rss():
        memory = "tracemalloc"
    if memory == "tracemalloc":
        tracemalloc.start()
    rss0 = _rss_status("VmRSS")
    t0 = time.perf_counter()
    sol = solve_sdp_mmc(K, 1.0, 0.1, solver=solver, solver_options=solver_options)
    seconds = time.perf_counter() - t0
    if memory == "tracemalloc":
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    else:
        peak = _rss_status("VmHWM") - rss0
    return {
        "n": int(n),
        "seconds": seconds,
        "peak_mb": peak,
        "memory": memory,
        "iterations": sol.stats.get("num_iters"),
        "status": sol.stats.get("status"),
    }


def measure_sdp_mmc(
    sizes, *, gamma=0.5, solver=None, solver_options=None, random_state=0, memory="rss"
):
    """Wall time and peak memory of one SDP solve for each ``n`` in ``sizes``.

    Data: :func:`mmcedu.datasets.two_gaussians` with ``n`` samples, RBF kernel, ``C = 1``,
    ``balance = 0.1``. A tiny warm-up solve runs first so that import and cache costs are
    not charged to the first size.

    Parameters
    ----------
    memory : {"rss", "tracemalloc"}
        ``"rss"``: growth of the resident set size during the solve, peak minus start
        (everything, including the solver's C heap); Linux only: the kernel's peak counter
        is reset through ``/proc/self/clear_refs``. Falls back to ``"tracemalloc"`` elsewhere.
        ``"tracemalloc"``: peak of the Python-traced heap (numpy, scipy and cvxpy's
        canonicalization; not the solver's C heap).

    Returns
    -------
    list of dict with ``n``, ``seconds``, ``peak_mb``, ``memory`` (the method used),
    ``iterations``, ``status``.
    """
    if memory not in ("rss", "tracemalloc"):
        raise ValueError(f"memory must be 'rss' or 'tracemalloc', got {memory!r}.")
    _measure_one(8, gamma, solver, solver_options, random_state, "none")  # warm-up
    return [
        _measure_one(n, gamma, solver, solver_options, random_state, memory) for n in sizes
    ]
