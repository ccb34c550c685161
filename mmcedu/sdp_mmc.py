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
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._box_qp import solve_box_qp
from ._cvxpy import solve_cvxpy
from ._validation import (
    all_identical,
    array_bytes,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from .balance import BALANCE_WARN_FRACTION, balanced_labelings, balanced_sign, is_balanced, max_imbalance
from .exceptions import BalanceWarning, DegenerateDataWarning, SolverWarning
from .kernels import center_kernel, check_kernel_matrix, kernel_matrix, median_gamma

__all__ = [
    "SDPMMC",
    "svm_dual_objective",
    "brute_force_mmc",
    "solve_sdp_mmc",
    "solve_sdp_mmc_lowrank",
    "sdp_lower_bound",
    "sdp_memory_bytes",
    "SDPSolution",
    "kkt_residuals",
    "eigenvector_rounding",
    "randomized_rounding",
    "balance_moves",
]


# --------------------------------------------------------------------------------------
# The exact SVM dual omega(y)
# --------------------------------------------------------------------------------------
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
    alpha, omega = solve_box_qp(G, C)  # alpha None: unbounded, no hard-margin separator
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


def solve_sdp_mmc(
    K, C=1.0, balance=0.1, *, cvxpy_solver=None, solver_options=None, fix_M=None, warn=True,
):
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
    cvxpy_solver : str or None, default=None
        cvxpy back end; ``None`` means SCS.
    solver_options : dict or None, default=None
        Passed to the back end (keyword arguments of ``cvxpy.Problem.solve``).
    fix_M : array-like of shape (n, n), default=None
        Add the constraint ``M = fix_M``. With ``fix_M = y y^T`` the optimum is exactly
        ``svm_dual_objective(K, y, C)`` (the Schur-complement step of the derivation).
    warn : bool, default=True
        Warn (:class:`~mmcedu.exceptions.SolverWarning`) when the back end stopped early;
        ``False`` leaves it to the caller, which reads ``stats["status"]``.

    Returns
    -------
    SDPSolution
        When the back end stopped at its iteration limit or inaccurately
        (``stats["status"]`` is ``"optimal_inaccurate"`` or ``"user_limit"``), its last
        iterate: ``delta`` is then not the SDP value and may even be negative; use
        :func:`sdp_lower_bound` for a certified bound.

    Memory: about ``sdp_memory_bytes(n)`` = ``2000 n^2`` bytes (cvxpy's problem data).
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}.")
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
        problem, cvxpy_solver, default="SCS", what="SDP maximum margin clustering relaxation",
        solver_options=solver_options, accept_user_limit=True, warn=warn,
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
            max(0.0, -np.linalg.eigvalsh(Z)[0], -np.linalg.eigvalsh(W)[0], -lam_up.min(),
                -lam_lo.min(), -eta.min())
        ),
    }
    if sol.nu is not None:
        xi = d["nu"]
        out["stationarity_nu"] = float(np.max(np.abs(xi - 2.0 * (sol.C * e - a))))
        out["compl_nu"] = float(np.max(np.abs(xi * sol.nu)))
        out["dual_feasibility"] = max(out["dual_feasibility"], float(-xi.min()))
    return out



# --------------------------------------------------------------------------------------
# Memory of the two solvers
# --------------------------------------------------------------------------------------
# cvxpy's canonicalization of the SDP (the block ``K o M`` with its n^2 coefficients, the two
# PSD cones and their sparse coefficient matrices) holds about this many bytes per entry of
# an n x n matrix: measured peak RSS growth from n = 100 to n = 300 with SCS.
_CVXPY_BYTES_PER_ENTRY = 2000
# Above this many samples the cvxpy path warns that the solve takes minutes.
_SLOW_CVXPY_N = 300


def sdp_memory_bytes(n, solver="cvxpy"):
    """Bytes the SDP relaxation needs for ``n`` samples (an estimate made before allocating).

    ``"cvxpy"``: ``2000 n^2`` (cvxpy's problem data for ``n (n + 1) / 2`` unknowns in ``M``,
    measured with SCS; 0.8 GB at n = 600, 8 GB at n = 2000). ``"lowrank"``: ``16 * 8 n^2`` (the
    kernel, ``K o V V^T``, ``V V^T`` and the dense matrix of the certificate's eigenvalue are
    six n x n arrays; the measured peak resident memory above the interpreter's was twice that
    count at n = 1000 and 1.6 times at n = 2000 (temporaries, the allocator and LAPACK's
    workspace), so the estimate counts sixteen: 1.2 GB at n = 3000, 12.8 GB at n = 10,000;
    benchmarks/results/sdp_mmc_scale.md).
    """
    n = int(n)
    if solver == "lowrank":
        return array_bytes((16, n, n))
    return _CVXPY_BYTES_PER_ENTRY * n * n


# --------------------------------------------------------------------------------------
# The low-rank (Burer-Monteiro) solver
# --------------------------------------------------------------------------------------
def _arc_search(x, d, g, QXX, C):
    """Exact minimizer of ``q`` along the projection arc ``P(x + t d)``, ``t >= 0``.

    ``q`` restricted to these coordinates is ``2 g^T s + s^T QXX s`` (``s`` the change of ``x``,
    ``g`` the half gradient at ``x``). Along the arc the coordinates stop one by one at their
    bounds (breakpoints) and ``q`` is a quadratic on each segment: walk the sorted
    breakpoints, updating slope and curvature in O(|x|) each, and stop in the first segment
    that contains the minimum. O(|x|^2) in all (the generalized Cauchy point of L-BFGS-B,
    with the exact Hessian). Returns the new ``x``.
    """
    x = x.copy()
    d = d.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(d < 0, -x / d, np.where(d > 0, (C - x) / d, np.inf))
    bp = np.maximum(bp, 0.0)
    order = np.argsort(bp, kind="stable")
    g = g.copy()
    h = QXX @ d
    slope = float(g @ d)
    curv = float(d @ h)
    t_prev = 0.0
    for i in order:
        if slope >= 0:
            return x
        tb = bp[i]
        tau = -slope / curv if curv > 0 else np.inf
        if t_prev + tau <= tb:
            return np.clip(x + tau * d, 0.0, C)
        if not np.isfinite(tb):
            break
        dt = tb - t_prev
        if dt > 0:
            x += dt * d
            g += dt * h
        x[i] = 0.0 if d[i] < 0 else C
        h -= QXX[:, i] * d[i]
        d[i] = 0.0
        slope = float(g @ d)
        curv = float(d @ h)
        t_prev = tb
    return np.clip(x, 0.0, C)


def _box_qp_warm(Q, C, a0=None, *, tol=1e-10, max_iter=500, rcond=1e-10, eps=0.0):
    """Minimize ``q(a) = a^T Q a - 2 e^T a`` over ``0 <= a <= C`` (``Q`` PSD, ``C`` finite).

    Projected Newton (Bertsekas 1982) with pseudo-inverse steps. ``Q = K o M`` has a
    numerical rank far below n (the RBF kernel's spectrum decays fast), so the face problems
    are singular. Each iteration: the binding bounds (within ``eps`` of a bound, gradient
    pushing outward) are snapped to it (``eps = 0``, the default, snaps nothing: the exact arc
    search stops coordinates at their bounds; Bertsekas's epsilon-active snapping,
    ``eps = min(1e-3 C, kkt)``, made the combined step fail on the late-stage QPs at n = 1000
    and fall back to gradient steps, so the QP hit ``max_iter`` inexactly and L-BFGS stalled);
    on the free set ``F`` the direction is
    ``-pinv(Q_FF) g_F`` (eigenvalues below ``rcond * max diag Q`` dropped; if that vanishes,
    the null-space part of the gradient, along which ``q`` decreases linearly); Armijo
    backtracking along the projection arc costs O(|S|^2) per trial with ``Q_SS`` of the moving
    coordinates; a projected-gradient step with ``1 / ||Q||_inf`` (always a descent) if it fails.
    Warm-started from the previous ``a`` it takes a few tens of steps, each
    O(n |F| + |F|^3); the free set of an SVM dual (free support vectors) is small.

    Returns
    -------
    a : ndarray, the minimizer
    info : dict ``n_iter``, ``kkt`` (max projected-gradient entry), ``value`` (``-q(a)``)
    """
    Q = np.asarray(Q, dtype=float)
    n = Q.shape[0]
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError("box_qp needs a finite C > 0 (the hard margin is not supported here).")
    a = np.clip(np.zeros(n) if a0 is None else np.asarray(a0, dtype=float), 0.0, C)
    dmax = max(float(np.max(np.abs(np.diag(Q)))) if n else 1.0, 1e-300)
    # ||Q||_inf >= lambda_max(Q), in row blocks (no n x n temporary)
    Lip = max(max((float(np.max(np.abs(Q[i:i + 256]).sum(axis=1))) for i in range(0, n, 256)),
                  default=1.0), 1e-300)
    scale = max(1.0, dmax * C)
    Qa = Q @ a
    q = float(a @ Qa - 2.0 * a.sum())
    it = 0
    kkt = np.inf
    for it in range(1, max_iter + 1):  # noqa: B007 (read after the loop)
        g = Qa - 1.0  # half gradient
        pg = a - np.clip(a - g, 0.0, C)
        kkt = float(np.max(np.abs(pg))) if n else 0.0
        if kkt <= tol * scale:
            break
        # the active bounds: at a bound, with the gradient pushing outward. No epsilon-active
        # snapping (Bertsekas 1982): the exact arc search already stops coordinates at their
        # bounds, and snapping the near-bound ones made the combined step fail and fall back
        # to short gradient steps (hundreds of iterations on the late-stage QPs at n = 1000).
        lo = (a <= eps) & (g > 0)
        hi = (a >= C - eps) & (g < 0)
        F = np.flatnonzero(~(lo | hi))
        snap = np.flatnonzero((lo & (a > 0)) | (hi & (a < C)))
        S = np.concatenate([F, snap])  # the coordinates that may move
        QSS = Q[np.ix_(S, S)]
        nF = F.size
        target = np.where(lo[snap], 0.0, C)
        d = np.zeros(nF)
        if nF:
            lam, W = np.linalg.eigh(QSS[:nF, :nF])
            keep = lam > rcond * dmax
            c = W.T @ g[F]
            d = -(W[:, keep] @ (c[keep] / lam[keep]))
            if not np.any(np.abs(d) > 1e-15 * C):
                d = -(W[:, ~keep] @ c[~keep]) / Lip
        gS = g[S]
        # snap the binding bounds, then the exact search along the projected Newton arc
        x0 = a[S].copy()
        x0[nF:] = target
        g0 = gS + QSS[:, nF:] @ (target - a[snap])
        xS = x0.copy()
        if nF:
            xS[:nF] = _arc_search(x0[:nF], d, g0[:nF], QSS[:nF, :nF], C)
        step = xS - a[S]
        slope = float(gS @ step)
        q_new = q + 2.0 * slope + float(step @ (QSS @ step))
        if slope < 0 and q_new < q:
            a[S] = xS
            Qa += Q[:, S] @ step
            q = q_new
            continue
        # projected gradient step with 1 / ||Q||_inf <= 1 / lambda_max: always a descent
        a_new = np.clip(a - g / Lip, 0.0, C)
        Qa_new = Q @ a_new
        q_new = float(a_new @ Qa_new - 2.0 * a_new.sum())
        if q_new >= q:
            break
        a, Qa, q = a_new, Qa_new, q_new
    Qa = Q @ a  # refresh the accumulated products
    q = float(a @ Qa - 2.0 * a.sum())
    return a, {"n_iter": it, "kkt": kkt, "value": -q}


def _omega_bounds(Q, a, C):
    """Certified bracket of ``omega = max_{0<=b<=C} f(b)``, ``f(b) = 2 b^T e - b^T Q b``, from
    any ``a`` in the box: ``f(a) <= omega <= f(a) + sum_i [C (g_i)_+ - g_i a_i]`` with
    ``g = 2 (e - Q a)`` (concavity). Returns ``(lower, upper)``."""
    Qa = Q @ a
    f = float(2.0 * a.sum() - a @ Qa)
    g = 2.0 * (1.0 - Qa)
    return f, f + float(np.sum(C * np.clip(g, 0.0, None) - g * a))


def _sdp_lower_bound(K, alpha, l, V=None, lam=None):
    """Weak-duality lower bound on the SDP value from any ``alpha`` in the box.

    ``p* >= 2 alpha^T e - e^T s - l ||lam||_1`` for any ``(s, lam)`` with
    ``Diag(s) + (lam e^T + e lam^T)/2 - K o alpha alpha^T >= 0``. ``lam`` (balance
    multipliers) defaults to 0; ``s`` is the KKT estimate from ``V`` (unit rows; the diagonal of
    ``B`` when ``V`` is None), lifted by ``tau = lambda_max(...)_+`` so that the matrix is PSD.

    Returns
    -------
    lower : float
    info : dict ``tau``, ``s``, ``lam``
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    alpha = np.asarray(alpha, dtype=float)
    lam = np.zeros(n) if lam is None else np.asarray(lam, dtype=float)
    # A = B - (lam e^T + e lam^T) / 2, built in place: one n x n array (memory at large n)
    A = K * alpha[:, None]
    A *= alpha[None, :]
    A -= lam[:, None] / 2.0
    A -= lam[None, :] / 2.0
    if V is None:
        s = np.diag(A).copy()
    else:
        s = np.einsum("ij,ij->i", A @ V, V) / np.einsum("ij,ij->i", V, V)
    A[np.diag_indices(n)] -= s
    amax = max(float(np.max(A)), -float(np.min(A)))
    tau = float(eigh(A, eigvals_only=True, subset_by_index=[n - 1, n - 1], check_finite=False,
                     overwrite_a=True)[0])
    del A
    # the eigenvalue is backward stable: error ~ n eps ||A||; add it so the bound stays valid
    tau = max(tau + n * np.finfo(float).eps * amax, 0.0)
    lower = float(2.0 * alpha.sum() - s.sum() - n * tau - l * np.abs(lam).sum())
    return lower, {"tau": tau, "s": s, "lam": lam}


def _kernel_times_gram(K, V):
    """``K o (V V^T)``, the Q of the inner box QP, built in place (one n x n array)."""
    Q = V @ V.T
    Q *= K
    return Q


class _BMObjective:
    """``omega(V V^T)`` + augmented Lagrangian of the balance rows, as a function of ``U``."""

    def __init__(self, K, C, l, n, p):
        self.K, self.C, self.l, self.n, self.p = K, C, l, n, p
        self.alpha = np.zeros(n)
        self.lam_up = np.zeros(n)
        self.lam_lo = np.zeros(n)
        self.rho = 1.0
        self.smooth = 0.0
        self.n_eval = 0
        self.qp_iters = 0

    def __call__(self, x):
        n, p = self.n, self.p
        U = x.reshape(n, p)
        nu = np.maximum(np.linalg.norm(U, axis=1), 1e-300)
        V = U / nu[:, None]
        Q = _kernel_times_gram(self.K, V)
        if self.smooth:
            Q[np.diag_indices(n)] += self.smooth
        a, qinfo = _box_qp_warm(Q, self.C, self.alpha)
        self.alpha = a
        self.n_eval += 1
        self.qp_iters += qinfo["n_iter"]
        f = qinfo["value"]
        aV = a[:, None] * V
        GV = -2.0 * a[:, None] * (self.K @ aV)  # d omega / dV
        # balance rows m_i = v_i . w, w = V^T e: AL for m_i - l <= 0 and -m_i - l <= 0
        w = V.sum(axis=0)
        m = V @ w
        mu_up = np.maximum(0.0, self.lam_up + self.rho * (m - self.l))
        mu_lo = np.maximum(0.0, self.lam_lo + self.rho * (-m - self.l))
        f += float((mu_up @ mu_up - self.lam_up @ self.lam_up
                    + mu_lo @ mu_lo - self.lam_lo @ self.lam_lo) / (2.0 * self.rho))
        mu = mu_up - mu_lo
        GV += np.outer(mu, w) + np.outer(np.ones(n), V.T @ mu)
        gU = (GV - np.sum(GV * V, axis=1)[:, None] * V) / nu[:, None]
        return f, gU.ravel()

    def balance(self, V):
        return V @ V.sum(axis=0)


def _feasible_mix(V, l):
    """Mix ``V V^T`` with ``I`` just enough to meet ``|M e| <= l``: returns ``t`` in [0, 1)
    for ``M = (1 - t) V V^T + t I`` (``t = 0`` if ``V V^T`` is feasible)."""
    m = V @ V.sum(axis=0)
    worst = float(np.max(np.abs(m)))
    if worst <= l:
        return 0.0
    if l <= 1.0:
        raise ValueError(
            "solver='lowrank' needs floor(balance n) >= 2 (the identity must be strictly "
            "feasible for the certificate); raise balance."
        )
    # |(1-t) m_i + t| <= l for all i  <=>  t >= (|m_i| - l) / (|m_i| -+ 1) per sign
    t = 0.0
    for mi in m:
        if mi > l:
            t = max(t, (mi - l) / (mi - 1.0))
        elif mi < -l:
            t = max(t, (-mi - l) / (-mi + 1.0))
    return min(t * (1 + 1e-12), 1.0)




def sdp_lower_bound(K, alpha, l, V=None, lam=None):
    """Certified (weak-duality) lower bound on the SDP value from any ``alpha`` in the box.

    With ``p* = min_{M PSD, diag M = e, |M e| <= l} omega(M)`` and any ``0 <= alpha <= C``,
    ``p* >= 2 alpha^T e - e^T s - l ||lam||_1`` for every ``(s, lam)`` with
    ``Diag(s) + (lam e^T + e lam^T) / 2 - K o alpha alpha^T`` PSD. ``lam`` (balance
    multipliers) defaults to 0; ``s`` is estimated from ``V`` (rows of a factor of ``M``; the
    diagonal when ``None``) and lifted by the largest eigenvalue so that the matrix is PSD (the
    O(n^3) step). The bound holds for any input, accurate or not, and is never above ``p*``
    (up to round-off, which is added).

    Returns
    -------
    lower : float
    info : dict ``tau`` (the lift), ``s``, ``lam``
    """
    return _sdp_lower_bound(K, alpha, l, V=V, lam=lam)


def solve_sdp_mmc_lowrank(
    K, C=1.0, balance=0.1, *, rank=None, max_iter=1000, tol=1e-3, check_every=50,
    random_state=None, smooth=(1e-3, 1e-4), callback=None,
):
    """Solve the SDP relaxation with ``M = V V^T`` (Burer-Monteiro), with a certified gap.

    Eliminating ``delta``, ``mu`` and ``nu`` by the Schur complement, the SDP of
    :func:`solve_sdp_mmc` is ``p* = min_M omega(M)`` over ``M`` PSD, ``diag(M) = e``,
    ``|M e| <= l``, with ``omega(M) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o M) alpha``
    convex in ``M`` (gradient ``-(K o alpha alpha^T)`` at the maximizer, Danskin). ``M`` is
    factored as ``V V^T`` with ``V`` n x ``rank`` with unit rows (``diag(M) = e`` by
    construction); ``omega(V V^T)`` is evaluated by a warm-started projected Newton method on
    the box QP and minimized over ``V`` by L-BFGS, the balance rows by an augmented
    Lagrangian; ``omega`` is smoothed by ``mu ||alpha||^2`` for the first chunks
    (``smooth``, relative to ``max diag K``), then exact.

    Every ``check_every`` iterations the iterate is certified: ``upper`` is ``omega`` at a
    feasible ``M`` (``V V^T``, mixed with ``I`` if a balance row is violated), bounded from
    above by concavity; ``lower`` is :func:`sdp_lower_bound` at the QP's ``alpha``. Both are
    rigorous, so ``lower <= p* <= upper``. It stops when
    ``upper - lower <= tol * max(|upper|, 1)`` or after ``max_iter`` L-BFGS iterations and
    returns the best certified iterate.

    Memory: ``sdp_memory_bytes(n, "lowrank")`` = ``128 n^2`` bytes. Time: each evaluation is
    O(n^2 rank) plus the QP; each certificate one O(n^3) eigenvalue.

    Parameters
    ----------
    K : ndarray of shape (n, n), the (centred) kernel
    C : float, the finite box bound (the hard margin is not supported)
    balance : float, ``l = floor(balance n)``, which must be at least 2
    rank : int or None, columns of ``V``; ``None`` means ``ceil(sqrt(2 n)) + 1`` (a rank
        at which an optimal ``M`` exists, Barvinok-Pataki)
    max_iter : int, L-BFGS iterations in total
    tol : float, relative gap at which to stop
    check_every : int, iterations between certificates
    random_state : seed of the small perturbation of the spectral start
    smooth : sequence of float, the smoothing per chunk (the last one is kept)
    callback : callable or None, called with each certificate (a dict)

    Returns
    -------
    V : ndarray of shape (n, rank), unit rows
    info : dict ``upper``, ``lower``, ``gap``, ``rel_gap``, ``alpha``, ``n_iter``,
        ``n_eval``, ``qp_iters``, ``rank``, ``l``, ``mix`` (weight of ``I`` in the certified
        ``M = (1 - mix) V V^T + mix I``), ``converged``, ``history``, ``solve_time``
    """
    K = np.asarray(K, dtype=float)
    if not np.array_equal(K, K.T):  # SDPMMC passes a symmetric K: no copy then
        K = (K + K.T) / 2.0
    n = K.shape[0]
    if C is None or not np.isfinite(C):
        raise ValueError("solver='lowrank' needs a finite C (the hard margin C=None is cvxpy only).")
    l = max_imbalance(n, balance)
    p = int(min(n, rank if rank is not None else int(np.ceil(np.sqrt(2 * n))) + 1))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    w, Qe = eigh(K, subset_by_index=[n - p, n - 1])
    U0 = Qe * np.sqrt(np.clip(w, 0.0, None)) + 1e-3 * rng.standard_normal((n, p)) / np.sqrt(n)
    obj = _BMObjective(K, float(C), l, n, p)
    kscale = max(float(np.max(np.diag(K))), 1e-300)
    smooth = list(smooth) if smooth else [0.0]
    x = U0.ravel().copy()
    history = []
    n_iter = 0
    best = None
    while True:
        chunk = max(1, min(check_every, max_iter - n_iter))
        obj.smooth = smooth[min(len(history), len(smooth) - 1)] * kscale
        res = minimize(obj, x, jac=True, method="L-BFGS-B",
                       options={"maxiter": chunk, "maxcor": 20, "ftol": 0.0, "gtol": 1e-12})
        x = res.x
        n_iter += int(res.nit)
        U = x.reshape(n, p)
        V = U / np.maximum(np.linalg.norm(U, axis=1), 1e-300)[:, None]
        m = obj.balance(V)
        obj.lam_up = np.maximum(0.0, obj.lam_up + obj.rho * (m - l))
        obj.lam_lo = np.maximum(0.0, obj.lam_lo + obj.rho * (-m - l))
        if np.max(np.abs(m)) > l * (1 + 1e-3):
            obj.rho = min(obj.rho * 4.0, 1e6)
        mix = _feasible_mix(V, l)
        Q = _kernel_times_gram(K, V)
        if mix > 0:
            Q *= 1.0 - mix
            Q[np.diag_indices(n)] += mix * np.diag(K)
        a, _ = _box_qp_warm(Q, C, obj.alpha)
        _, upper = _omega_bounds(Q, a, C)
        del Q  # the certificate below builds its own n x n matrix
        alpha = a if mix == 0 else _box_qp_warm(_kernel_times_gram(K, V), C, a)[0]
        lower, linfo = _sdp_lower_bound(K, alpha, l, V=V, lam=obj.lam_up - obj.lam_lo)
        gap = upper - lower
        entry = {"n_iter": n_iter, "smooth": obj.smooth, "upper": upper, "lower": lower,
                 "gap": gap, "rel_gap": gap / max(abs(upper), 1.0), "tau": linfo["tau"],
                 "mix": mix, "n_eval": obj.n_eval}
        history.append(entry)
        if callback is not None:
            callback(entry)
        if best is None or gap < best[0]:
            best = (gap, V.copy(), upper, lower, alpha.copy(), mix)
        converged = gap <= tol * max(abs(upper), 1.0)
        if converged or n_iter >= max_iter or (res.nit == 0 and len(history) >= len(smooth)):
            break
    gap, V, upper, lower, alpha, mix = best
    rel_gap = gap / max(abs(upper), 1.0)
    info = {
        "upper": upper, "lower": lower, "gap": gap, "rel_gap": rel_gap, "alpha": alpha,
        "n_iter": n_iter, "n_eval": obj.n_eval, "qp_iters": obj.qp_iters, "rank": p, "l": l,
        "mix": mix, "converged": bool(rel_gap <= tol), "history": history,
        "solve_time": time.perf_counter() - t0,
    }
    return V, info

# --------------------------------------------------------------------------------------
# Rounding M to labels
# --------------------------------------------------------------------------------------
def _canonical(y):
    """Fix the sign symmetry y ~ -y: the first sample gets +1."""
    y = np.asarray(y, dtype=int)
    return y if y[0] > 0 else -y


def balance_moves(M, l):
    """Samples that the bound ``|e^T y| <= l`` moves from the sign of the leading eigenvector.

    ``sign(v)`` (``v`` the leading eigenvector of ``M``) is the labeling the relaxation points
    to; :func:`~mmcedu.balance.balanced_sign` moves ``ceil((|e^T sign(v)| - l) / 2)`` of its
    samples when ``|e^T sign(v)| > l``, and none otherwise.

    Returns
    -------
    moved : int
    sizes : list of int, the sorted cluster sizes of ``sign(v)``
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    _, v = eigh(M, subset_by_index=[n - 1, n - 1])
    y = np.where(v[:, 0] >= 0, 1, -1)
    excess = abs(int(y.sum()))
    n_pos = int(np.sum(y > 0))
    moved = int(np.ceil((excess - l) / 2)) if excess > l else 0
    return moved, sorted([n_pos, n - n_pos])


def eigenvector_rounding(M, l):
    """Labels from the leading eigenvector ``v`` of ``M``: ``balanced_sign(v, l)``.

    For a rank-one ``M = y y^T`` this returns ``y`` (up to sign) exactly.
    """
    _, V = np.linalg.eigh(np.asarray(M, dtype=float))
    return _canonical(balanced_sign(V[:, -1], l))


def randomized_rounding(M, K, C, l, *, n_hyperplanes=100, random_state=None):
    """Goemans-Williamson style rounding, keeping the best balanced labeling by ``omega``.

    Factor ``M = V V^T`` (eigenvalues clipped at 0); for each of ``n_hyperplanes`` Gaussian
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
    for _ in range(n_hyperplanes):
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


#: ``rounding="auto"`` rounds by random hyperplanes with ``solver="cvxpy"`` (any n) and with
#: ``solver="lowrank"`` up to this many samples, by the leading eigenvector beyond: the
#: randomized rounding where it costs under about one CPU second or at most 10 % of the solve.
#: Measured (benchmarks/bench_sdp_rounding_cost.py; benchmarks/results/sdp_mmc_defaults.md),
#: 100 hyperplanes: cvxpy 0.2-0.3 s at n = 50, 1-5 % of the solve at n = 100 and 200; lowrank
#: 0.7-0.9 s at n = 200, 2.2-2.5 s (28-32 %) at n = 500, 10.7 s (4-18 %) at n = 1000.
_AUTO_RANDOMIZED_MAX_N_LOWRANK = 200


def _resolve_rounding(rounding, solver, n):
    """The rounding ``SDPMMC`` uses: ``rounding`` itself, or for ``"auto"`` the cheap choice."""
    if rounding != "auto":
        return rounding
    if solver == "cvxpy" or n <= _AUTO_RANDOMIZED_MAX_N_LOWRANK:
        return "randomized"
    return "eigenvector"


# --------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------
class SDPMMC(ClusterMixin, BaseEstimator):
    """SDP maximum margin clustering into two clusters (Xu et al. 2004).

    Solves the semidefinite relaxation Eq. (2) of Valizadegan & Jin (2006, Section 2) [2]_,
    which restates Xu et al. (2004) [1]_: the SVM dual Eq. (1) in Xu et al.'s scaling,
    ``omega(y) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o y y^T) alpha``, is minimised
    over the relaxation ``M`` of ``y y^T``::

        min_{M, delta, mu, nu}  delta
        s.t. [[K o M, e + mu - nu], [(e + mu - nu)^T, delta - 2 C nu^T e]] PSD,
             M PSD, diag(M) = e, -l e <= M e <= l e, mu >= 0, nu >= 0,

    then ``M`` is rounded to labels [3]_. The relaxation has no bias term, so the kernel is
    centred in feature space first (``H K H``, ``H = I - e e^T / n``); the balance
    constraint ``|e^T y| <= l`` with ``l = floor(balance n)`` is the row-wise form
    ``-l e <= M e <= l e`` of Xu et al. (for ``M = y y^T``, ``M e = (e^T y) y``).

    Parameters
    ----------
    C : float or None, default=1.0
        Inverse regularization: the SVM box ``0 <= alpha <= C`` on the dual coefficients;
        ``None`` is the hard margin (no ``nu``).
    balance : float in [0, 1], default=0.1
        Class balance as a fraction of n: the two cluster sizes differ by at most
        ``floor(balance n)``, ``|N_+ - N_-| <= floor(balance n)`` (a hard bound).
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        With ``"precomputed"``, ``X`` is the n x n kernel matrix (checked to be PSD).
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``. ``None`` means the median
        heuristic :func:`mmcedu.kernels.median_gamma`. Ignored unless ``kernel="rbf"``.
    center : bool, default=True
        Centre ``K`` in feature space (needed by the bias-free relaxation; ``False`` only to
        show why).
    rounding : {"auto", "eigenvector", "randomized"}, default="auto"
        ``"eigenvector"``: balanced sign of the leading eigenvector of ``M``.
        ``"randomized"``: Goemans-Williamson random hyperplanes through a factor of ``M``,
        keeping the balanced labeling with the smallest exact ``omega(y)``; the eigenvector
        labeling is among the candidates, so it is never worse by the objective.
        ``"auto"``: ``"randomized"`` where it is cheap, ``"eigenvector"`` otherwise: always
        randomized with ``solver="cvxpy"``, and with ``solver="lowrank"`` up to n = 200
        samples (see Notes; ``rounding_`` says which one was used).
    n_hyperplanes : int, default=100
        Number of random hyperplanes of the randomized rounding.
    solver : {"cvxpy", "lowrank"}, default="cvxpy"
        Algorithm for the relaxation: ``"cvxpy"`` solves the SDP with the cvxpy back end
        ``cvxpy_solver`` (memory ``2000 n^2`` bytes, minutes beyond n = 300);
        ``"lowrank"`` factors ``M = V V^T`` (Burer-Monteiro, :func:`solve_sdp_mmc_lowrank`)
        and certifies the gap of the same SDP (memory ``128 n^2`` bytes; at n = 1000 about
        200 iterations and half a CPU minute reach a certified gap of 1e-3;
        benchmarks/results/sdp_mmc_scale.md). It needs a finite
        ``C``.
    cvxpy_solver : str or None, default=None
        cvxpy back end; ``None`` means SCS (Clarabel's memory grows like n^4 here).
    solver_options : dict or None, default=None
        Passed to the back end (keyword arguments of ``cvxpy.Problem.solve``, e.g.
        ``{"eps": 1e-6}`` or ``{"max_iters": 10000}`` for SCS, ``{"max_iter": 200}`` for
        CLARABEL); a key the back end does not accept raises a ``ValueError`` listing the
        valid ones.
    rank : int or None, default=None
        Rank bound of the low-rank solution ``M = V V^T`` (columns of ``V``) with
        ``solver="lowrank"``; ``None`` means ``ceil(sqrt(2 n)) + 1``, a rank at which the SDP
        has an optimal solution. Ignored by ``solver="cvxpy"``.
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations of ``solver="lowrank"`` (the cvxpy back end's
        limit is set through ``solver_options``).
    tol : float, default=1e-3
        Stop when the certified relative duality gap of ``solver="lowrank"``,
        ``(upper - lower) / max(|upper|, 1)``, is at most ``tol``.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized rounding (which the default ``rounding="auto"`` uses with
        ``solver="cvxpy"``, and with ``solver="lowrank"`` up to n = 200) and of the start of
        ``solver="lowrank"``. With ``None`` the labels can change from run to run.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in {0, 1} (sample 0 is in cluster 0).
    n_clusters_ : int
        Number of clusters in ``labels_`` (2, unless ``balance`` allows a single cluster).
    M_ : ndarray of shape (n_samples, n_samples)
        Solution of the relaxation (approximately ``y y^T`` when the relaxation is tight).
    objective_ : float
        A lower bound on ``min_y omega(y)``: the SDP value ``delta`` when the back end
        solved it (status ``"optimal"``); otherwise (back end stopped early,
        ``solver="lowrank"``) the certified weak-duality bound :func:`sdp_lower_bound`, which
        is never above the SDP value. Always ``0 <= objective_ <= labeling_objective_``.
    duality_gap_ : float or None
        ``solver="lowrank"``: the certified gap ``upper - objective_`` of the SDP (``upper``
        is ``omega`` at the returned ``M``, so the SDP value lies in
        ``[objective_, objective_ + duality_gap_]``); ``None`` with ``solver="cvxpy"`` (the
        back end's own value is ``solver_stats_["objective"]``).
    M_factor_ : ndarray of shape (n_samples, rank) or None
        ``V`` with ``M_ = V V^T`` (``solver="lowrank"``; ``None`` otherwise).
    labeling_objective_ : float
        Exact ``omega(y)`` of the returned labels (``>= objective_``).
    dual_coef_ : ndarray of shape (n_samples,)
        The SVM dual variables ``alpha`` of the source, read from the dual of the block
        constraint.
    kernel_matrix_ : ndarray of shape (n_samples, n_samples)
        The (centred) kernel the SDP used.
    gamma_ : float or None
        The RBF parameter used (``None`` for the linear and precomputed kernels).
    n_iter_ : int or None
        Iterations of the cvxpy back end (``None`` if it does not report them), or L-BFGS
        iterations of ``solver="lowrank"``; 0 when no solve was needed (identical samples).
    balance_decided_ : int
        Samples that the balance bound moved from the sign of the leading eigenvector of
        ``M_`` (:func:`balance_moves`; 0 when that sign already meets the bound). It does not
        depend on the rounding that labelled the samples.
    rounding_ : {"eigenvector", "randomized"} or None
        The rounding used (``rounding`` itself, or what ``"auto"`` chose); ``None`` when no
        rounding was needed (identical samples).
    solver_stats_ : dict
        Back end, status, objective, times and iterations (from cvxpy); with
        ``solver="lowrank"`` the certificate (``upper``, ``lower``, ``gap``, ``rel_gap``,
        ``converged``, ``history``, ...).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    GMMC : a relaxation with n instead of n^2 unknowns, with a bias term.
    UMCRLS, EMMC : maximum-margin-type clustering into k >= 2 clusters.

    Notes
    -----
    SDP MMC is a two-cluster method (its relaxation lifts a +-1 labeling ``y`` to
    ``M = y y^T``), so it has no ``n_clusters`` parameter; :class:`UMCRLS` and :class:`EMMC`
    cluster into ``k > 2`` clusters. There are ``n (n + 1) / 2`` unknowns in ``M``: the
    cvxpy path is slow beyond a few hundred samples (a ``UserWarning`` says so above 300)
    and ``solver="lowrank"`` reached the certified gap ``tol = 1e-3`` at n = 1000 in about 25
    CPU seconds and at n = 2000 in about 3 CPU minutes
    (``benchmarks/results/sdp_mmc_scale.md``).

    Defaults on standardized real data: the relaxation is rarely tight (``M_`` far from rank
    one) at the default width, including on data where the labels are perfect, so no warning
    signals a loose relaxation: neither the leading-eigenvalue share of ``M_`` nor the gap
    between ``objective_`` and ``labeling_objective_`` separated the sets where ``SDPMMC()``
    falls below k-means (``benchmarks/studies/sdp_mmc_tightness.md``). There the rounding
    matters, and the default ``rounding="auto"`` rounds by random hyperplanes where that is
    cheap: on iris versicolor vs virginica the eigenvector rounding gives ARI 0.20 (k-means
    0.43) and the randomized rounding 0.81 ± 0.04 (over five hyperplane seeds) on the same
    ``M_`` (the case that prompted the study); on each of twelve fresh sets its mean ARI over
    five hyperplane seeds was at most 0.012 below the eigenvector rounding's and 0.035 to 0.125
    above it on four (up to 0.031 below on the study's other sets;
    ``benchmarks/results/sdp_mmc_defaults.md``). A smaller ``omega(y)`` is not a higher ARI:
    the randomized rounding is never worse by the objective, not by agreement with classes
    (chapter 02's unbalanced example shows a wrong labeling with a smaller ``omega``). It costs
    ``n_hyperplanes`` exact evaluations of ``omega(y)``, and its labels depend on
    ``random_state`` (with ``random_state=None`` they can change from run to run). The rule of
    ``"auto"``: randomized where it costs under about one CPU second or at most 10 % of the
    solve on both measured sets, expressed as a sample-count threshold
    (``_AUTO_RANDOMIZED_MAX_N_LOWRANK = 200``; nothing was measured between 200 and 500),
    measured with 100 hyperplanes on standardized two
    Gaussians and moons (CPU seconds; the same file). With ``solver="cvxpy"`` it took
    0.2-0.3 s at n = 50 and 1-5 % of the solve at n = 100 and 200, so ``"auto"`` always uses
    it; with ``solver="lowrank"`` 0.7-0.9 s at n = 200 (the solve 0.4-1.8 s), 2.2-2.5 s at
    n = 500 (28-32 % of the solve) and 10.7 s at n = 1000 (4-18 %), so ``"auto"`` uses it up
    to n = 200 and the eigenvector rounding above. Pass ``rounding="randomized"`` to round
    large low-rank fits by hyperplanes too.

    Memory, checked against ``mmcedu.get_config()["memory_budget"]`` before anything n x n
    is allocated (:class:`~mmcedu.exceptions.MemoryBudgetError` otherwise):
    ``solver="cvxpy"`` about ``2000 n^2`` bytes (0.7 GB at n = 600, 8 GB at n = 2000);
    ``solver="lowrank"`` about ``128 n^2`` bytes (:func:`sdp_memory_bytes`).

    Warnings and errors:

    * :class:`~mmcedu.exceptions.SolverWarning` -- the back end stopped early (status
      ``optimal_inaccurate`` with SCS, ``user_limit`` at Clarabel's ``max_iter``: both return
      the last iterate) or ``solver="lowrank"`` stopped at ``max_iter`` above ``tol``. The
      message gives the certified bound and gap; ``objective_`` is the certified bound.
    * :class:`~mmcedu.exceptions.SolverError` -- the back end failed (no iterate).
    * :class:`~mmcedu.exceptions.BalanceWarning` -- the balance bound decided the split:
      it moved at least ``BALANCE_WARN_FRACTION = 5 %`` of the samples from the sign of the
      leading eigenvector of ``M_`` (``balance_decided_``; e.g. ``SDPMMC()`` on standardized
      iris, 50/100, where the default ``balance=0.1`` allows at most 68/82). The message
      says to raise ``balance`` and names :class:`mmcedu.model_selection.LabelFreeSearch`.
    * :class:`~mmcedu.exceptions.DegenerateDataWarning` -- all samples are identical (one
      cluster is returned, ``n_clusters_ = 1``, no solve), or the RBF kernel is numerically
      the identity or all ones (the split is arbitrary).
    * ``ValueError`` -- data whose squared distances overflow or underflow, a kernel that is
      not finite, or an unknown ``solver_options`` key. ``KeyboardInterrupt`` (Ctrl-C) stops
      a solve as it does any Python code.

    References
    ----------
    .. [1] L. Xu, J. Neufeld, B. Larson and D. Schuurmans. Maximum margin clustering.
       NIPS 17, 2004.
    .. [2] H. Valizadegan and R. Jin. Generalized maximum margin clustering and unsupervised
       kernel learning. NIPS 19, 2006 (Section 2, Eqs. (1)-(2)).
    .. [3] M. X. Goemans and D. P. Williamson. Improved approximation algorithms for maximum
       cut and satisfiability problems using semidefinite programming. J. ACM 42(6), 1995.

    Examples
    --------
    >>> from mmcedu import SDPMMC, datasets, metrics
    >>> X, y = datasets.two_gaussians(40, distance=6.0, random_state=0)
    >>> model = SDPMMC(gamma=0.1, random_state=0).fit(X)
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
        "rounding": [StrOptions({"auto", "eigenvector", "randomized"})],
        "n_hyperplanes": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"cvxpy", "lowrank"})],
        "cvxpy_solver": [str, None],
        "solver_options": [dict, None],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    # scikit-learn's check_clustering (ARI > 0.4 against three blobs of 50 points, which a
    # two-cluster method under |N+ - N-| <= 5 must cut) passes with the default rounding="auto"
    # (ARI 0.44-0.46 at random_state 0-2); the eigenvector rounding gives 0.39 there.

    def __init__(
        self,
        *,
        C=1.0,
        balance=0.1,
        kernel="rbf",
        gamma=None,
        center=True,
        rounding="auto",
        n_hyperplanes=100,
        solver="cvxpy",
        cvxpy_solver=None,
        solver_options=None,
        rank=None,
        max_iter=1000,
        tol=1e-3,
        random_state=None,
    ):
        self.C = C
        self.balance = balance
        self.kernel = kernel
        self.gamma = gamma
        self.center = center
        self.rounding = rounding
        self.n_hyperplanes = n_hyperplanes
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.solver_options = solver_options
        self.rank = rank
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

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
        alternative = (
            "Use solver='lowrank' (about 128 n^2 bytes) or fewer samples."
            if self.solver == "cvxpy"
            else "Use fewer samples (a subsample), or GMMC(solver='lowrank')."
        )
        check_memory(
            sdp_memory_bytes(n, self.solver),
            what=f"SDPMMC(solver={self.solver!r}) for n = {n:,} ({n * (n + 1) // 2:,} unknowns in M)",
            alternative=alternative,
        )
        if self.kernel == "precomputed":
            K = check_kernel_matrix(X, psd=True)
            self.gamma_ = None
            identical = False
        else:
            X = X.astype(np.float64)
            identical = all_identical(X)
            if not identical:
                check_scale(X)
            if self.kernel == "rbf":
                self.gamma_ = (
                    (median_gamma(X) if not identical else 1.0) if self.gamma is None
                    else float(self.gamma)
                )
                K = kernel_matrix(X, "rbf", self.gamma_)
            else:
                K = kernel_matrix(X, "linear")
                self.gamma_ = None
            check_finite_result(
                K, what=f"The {self.kernel} kernel matrix",
                hint="the squared distances / inner products overflow float64; standardize X.",
            )
            if self.kernel == "rbf" and not identical:
                warn_degenerate_kernel(K, self.gamma_, who="SDPMMC")
        if self.center:
            K = center_kernel(K)
        K = (K + K.T) / 2.0
        if self.kernel == "precomputed" and self.center:
            identical = float(np.max(np.abs(K))) <= 1e-12 * max(1.0, float(np.max(np.abs(X))))
        if identical:
            return self._fit_identical(K, n)
        l = max_imbalance(n, self.balance)
        self.M_factor_ = None
        self.duality_gap_ = None
        if self.solver == "lowrank":
            V, info = solve_sdp_mmc_lowrank(
                K, self.C, self.balance, rank=self.rank, max_iter=self.max_iter, tol=self.tol,
                random_state=rng,
            )
            M = (1.0 - info["mix"]) * (V @ V.T)
            M[np.diag_indices(n)] += info["mix"]
            lower = max(0.0, info["lower"])
            self.duality_gap_ = float(info["upper"] - lower)
            if not info["converged"]:
                warnings.warn(
                    f"SDPMMC(solver='lowrank') stopped after {info['n_iter']} iterations "
                    f"(max_iter={self.max_iter}) with certified relative gap "
                    f"{info['rel_gap']:.3g} > tol={self.tol:g} (SDP value in "
                    f"[{lower:.6g}, {info['upper']:.6g}]): M_ is not optimal. Increase max_iter "
                    "or tol.",
                    SolverWarning,
                    stacklevel=2,
                )
            alpha = info["alpha"]
            stats = {k: v for k, v in info.items() if k != "alpha"}
            stats.update(solver="lowrank", status="optimal" if info["converged"] else "max_iter")
            self.M_factor_ = V
            objective = lower
        else:
            if n > _SLOW_CVXPY_N:
                warnings.warn(
                    f"SDPMMC(solver='cvxpy'): the SDP has n(n+1)/2 = {n * (n + 1) // 2:,} "
                    f"unknowns for n_samples={n}; the cvxpy back end takes minutes to hours "
                    f"(and about {format_bytes(sdp_memory_bytes(n))}). Use solver='lowrank' or "
                    "fewer samples.",
                    UserWarning,
                    stacklevel=2,
                )
            sol = solve_sdp_mmc(
                K, self.C, self.balance, cvxpy_solver=self.cvxpy_solver,
                solver_options=self.solver_options, warn=False,
            )
            M, alpha, stats, objective = sol.M, sol.alpha, sol.stats, sol.delta
            if stats["status"] != "optimal":
                objective = self._certify_early_stop(K, sol, l)
        self.rounding_ = _resolve_rounding(self.rounding, self.solver, n)
        if self.rounding_ == "eigenvector":
            y_pm = eigenvector_rounding(M, l)
            omega = svm_dual_objective(K, y_pm, self.C)
        else:
            y_pm, omega = randomized_rounding(
                M, K, self.C, l, n_hyperplanes=self.n_hyperplanes, random_state=rng
            )
        if not is_balanced(y_pm, l):  # the roundings return balanced labels by construction
            raise RuntimeError(f"internal error: the rounded labels break |e^T y| <= {l}.")
        self.labels_ = (y_pm < 0).astype(int)
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.M_ = M
        self.balance_decided_, free_sizes = balance_moves(M, l)
        if self.balance_decided_ >= BALANCE_WARN_FRACTION * n:
            sizes = sorted(np.bincount(self.labels_, minlength=2).tolist())
            warnings.warn(
                f"SDPMMC: the balance bound |N+ - N-| <= floor(balance n) = {l} "
                f"(balance={self.balance:g}) decided the split: the leading eigenvector of M_ "
                f"points to clusters of sizes {free_sizes}, and meeting the bound moves "
                f"{self.balance_decided_} of {n} samples from that sign (the returned clusters, "
                f"{self.rounding_} rounding, have sizes {sizes}). If the clusters "
                "may differ in size, raise balance (balance=0.5 allows sizes 1:3; 1.0 "
                "removes the bound) or choose it without labels: LabelFreeSearch(SDPMMC(), "
                "{'balance': [0.1, 0.3, 0.5]}, criterion='transfer_stability').fit(X) "
                "(mmcedu.model_selection).",
                BalanceWarning,
                stacklevel=2,
            )
        self.objective_ = float(objective)
        self.labeling_objective_ = float(omega)
        self.dual_coef_ = alpha
        self.kernel_matrix_ = K
        self.solver_stats_ = stats
        self.n_iter_ = stats.get("n_iter")
        return self

    def _certify_early_stop(self, K, sol, l):
        """Certified lower bound when the cvxpy back end stopped early, with the warning."""
        st = sol.stats
        n = K.shape[0]
        box = np.inf if self.C is None else float(self.C)
        alpha = np.clip(np.nan_to_num(sol.alpha, nan=0.0), 0.0, box)
        w, U = np.linalg.eigh(sol.M)
        V = U * np.sqrt(np.clip(w, 0.0, None))
        V = V / np.maximum(np.linalg.norm(V, axis=1), 1e-300)[:, None]
        d = sol.duals
        lam = None
        if d.get("balance_upper") is not None and d.get("balance_lower") is not None:
            lam = np.nan_to_num(d["balance_upper"] - d["balance_lower"])
        lower = max(0.0, sdp_lower_bound(K, alpha, l, V=V, lam=lam)[0])
        if lam is not None:  # the bound holds for any lam: keep the better of the two
            lower = max(lower, sdp_lower_bound(K, alpha, l, V=V)[0])
        limit = "max_iters" if st["solver"].upper() == "SCS" else "max_iter"
        warnings.warn(
            f"SDPMMC: the cvxpy back end {st['solver']} stopped early (status "
            f"'{st['status']}' after {st['n_iter']} iterations); its value delta = "
            f"{sol.delta:.6g} is not the SDP value and not a lower bound. objective_ is the "
            f"certified lower bound {lower:.6g} instead (n = {n}); the labels come from an "
            f"unconverged M. Allow more iterations (solver_options={{{limit!r}: ...}}) or try "
            "solver='lowrank'.",
            SolverWarning,
            stacklevel=3,
        )
        return lower

    def _fit_identical(self, K, n):
        """All samples identical: one cluster, no solve."""
        warnings.warn(
            f"SDPMMC: all {n} samples are identical (for the kernel): there is no "
            "cluster structure and every split has the same objective; every sample is put "
            "in cluster 0 (n_clusters_=1).",
            DegenerateDataWarning,
            stacklevel=3,
        )
        C = np.inf if self.C is None else float(self.C)
        self.labels_ = np.zeros(n, dtype=int)
        self.n_clusters_ = 1
        self.M_ = np.ones((n, n))
        self.M_factor_ = None
        self.duality_gap_ = None
        self.objective_ = self.labeling_objective_ = float(svm_dual_objective(K, np.ones(n), self.C))
        self.dual_coef_ = np.full(n, C)
        self.kernel_matrix_ = K
        self.solver_stats_ = {"solver": None, "status": "identical samples", "n_iter": 0}
        self.n_iter_ = 0
        self.balance_decided_ = 0
        self.rounding_ = None
        return self
