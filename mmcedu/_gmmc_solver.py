"""GMMC's solvers of ``min <M, W>`` s.t. ``W >= 0``, ``W_ii >= 1`` (``M`` from :mod:`mmcedu.gmmc`).

The dual is ``max sum(gamma)`` s.t. ``M - diag(gamma) >= 0``, ``0 <= gamma <= C``: by cvxpy
(:func:`solve_dual_cvxpy`), or by Burer-Monteiro factors ``W = V V^T`` and L-BFGS
(:func:`solve_lowrank`; :func:`_solve_lowrank_operator` for the implicit ``M`` of the Nystroem path),
each chunk of iterations certified by a dual feasible ``gamma``: ``sum(gamma) <= optimum <= <M, V V^T>``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy.linalg import eigh, qr
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from ._cvxpy import solve_cvxpy

__all__ = ["certify", "solve_dual_cvxpy", "solve_lowrank"]


def solve_dual_cvxpy(M, *, C=1e5, cvxpy_solver=None, solver_options=None):
    """Solve the dual (7)/(10) of the reduced matrix ``M`` by cvxpy (``C = np.inf``: no upper bound).

    ``cvxpy_solver`` is the back end (``None``: CLARABEL), ``solver_options`` its keyword arguments.
    Returns ``gamma``, the primal matrix ``W`` (the dual variable of the LMI) and the ``stats``.
    """
    import cvxpy as cp

    M = np.asarray(M, dtype=float)
    gamma = cp.Variable(M.shape[0])
    lmi = M - cp.diag(gamma) >> 0
    cons = [lmi, gamma >= 0] + ([gamma <= C] if np.isfinite(C) else [])
    stats = solve_cvxpy(cp.Problem(cp.Maximize(cp.sum(gamma)), cons), cvxpy_solver, default="CLARABEL",
                        what="GMMC dual (7)", solver_options=solver_options)
    W = np.asarray(lmi.dual_value, dtype=float)
    W = (W + W.T) / 2
    # the dual of an equality is defined up to sign conventions; W must be PSD with W_ii >= 1
    if np.trace(W) < 0:
        W = -W
    return np.asarray(gamma.value, dtype=float), W, stats


# -- The certificate: a dual feasible point from a primal one ------------------------------------
def _lambda_min(S):
    return float(eigh(S, eigvals_only=True, subset_by_index=[0, 0], check_finite=False)[0])


def _kkt_multipliers(MV, V, C):
    """``<M, V V^T>`` and the KKT multipliers of :func:`certify`."""
    primal = float(np.sum(MV * V))
    r2 = np.sum(V * V, axis=1)
    if np.any(r2 < 1 - 1e-9):
        raise ValueError("certify needs a feasible primal point: every ||v_i|| >= 1.")
    return primal, np.clip(np.sum(MV * V, axis=1) / r2, 0.0, C)


def _make_feasible(gamma, mu, lower, lam_min, shifts=3):
    """Shift, then shrink ``gamma`` until ``M - diag(gamma) >= 0``; returns the feasible point.

    ``mu`` is (a lower bound on) ``lambda_min(M - diag(gamma))``, ``lower(g)`` the same for ``g``.
    While ``mu < 0`` (at most ``shifts`` times, while this raises ``mu``): ``gamma <- max(gamma + mu, 0)``.
    Then ``theta gamma`` with ``theta = m0 / (m0 - mu)``, ``m0 = lam_min() = lambda_min(M) >= 0``, is
    feasible because ``lambda_min`` is concave.
    """
    for _ in range(shifts):
        if mu >= 0:
            break
        shifted = np.maximum(gamma + mu, 0.0)
        mu_shifted = lower(shifted)
        if mu_shifted <= mu:
            break
        gamma, mu = shifted, mu_shifted
    if mu >= 0:
        return gamma
    m0 = max(lam_min(), 0.0)
    return m0 / (m0 - mu) * gamma


def certify(M, V, *, C=np.inf, lam_min_M=None):
    """Certified duality gap of a primal point ``W = V V^T`` (rows ``||v_i|| >= 1``).

    The KKT multipliers ``gamma_i = (M V)_i . v_i / ||v_i||^2``, clipped to ``[0, C]``, made dual
    feasible (shifted, then shrunk; ``lam_min_M``: ``lambda_min(M)`` if known). Returns the upper
    bound ``primal = <M, V V^T>`` on the optimum, the lower bound ``lower = sum(gamma)`` and ``gamma``.
    """
    M = np.asarray(M, dtype=float)
    primal, gamma = _kkt_multipliers(M @ V, V, C)
    gamma = _make_feasible(gamma, _lambda_min(M - np.diag(gamma)), lambda g: _lambda_min(M - np.diag(g)),
                           lambda: _lambda_min(M) if lam_min_M is None else lam_min_M)
    return primal, float(gamma.sum()), gamma


def _rayleigh(Mop, gamma, X):
    """Smallest Ritz value of ``M - diag(gamma)`` on ``span(X)`` (>= ``lambda_min``) and its vector."""
    X = np.linalg.qr(X.reshape(Mop.n, -1))[0]
    S = X.T @ (Mop.matvec(X) - gamma[:, None] * X)
    w, Z = eigh((S + S.T) / 2)
    return float(w[0]), X @ Z[:, 0]


def _certified_lower(Mop, gamma, X0, *, margin=1e-9, max_steps=12):
    """A certified ``t <= lambda_min(M - diag(gamma))`` within about ``margin`` of it, and a Ritz vector.

    ``t = hi - margin``, ``hi`` a Rayleigh quotient (first on ``span(X0)``), is tested exactly
    (``Mop.secular_step``); a failed test's vector lowers ``hi``, else the margin grows tenfold.
    Falls back to the always valid ``lambda_min(M) - max(gamma)`` (Weyl).
    """
    hi, v = _rayleigh(Mop, gamma, X0)
    top = float(np.min(1.0 - gamma))
    cap = top - 1e-12 * max(1.0, abs(top))
    for _ in range(max_steps):
        t = min(hi - margin, cap)
        nu_max, x = Mop.secular_step(gamma, t)
        if nu_max <= 1.0 - 1e-9:
            return t, v
        if x is None:
            margin *= 10.0
            continue
        hx, vx = _rayleigh(Mop, gamma, np.column_stack([v, x]))
        if hx < hi - 1e-3 * margin:
            hi, v = hx, vx
        else:
            margin *= 10.0
    return Mop.lambda_min() - float(np.max(gamma)), v


def _certify_lowrank(Mop, V, *, C=np.inf):
    """:func:`certify` for the implicit ``M``, with the eigenvalues of :func:`_certified_lower`."""
    primal, gamma = _kkt_multipliers(Mop.matvec(V), V, C)
    t, v = _certified_lower(Mop, gamma, V)
    ritz = [v]

    def lower(g):
        t_g, ritz[0] = _certified_lower(Mop, g, np.column_stack([V, ritz[0]]))
        return t_g

    gamma = _make_feasible(gamma, t, lower, Mop.lambda_min)
    return primal, float(gamma.sum()), gamma


# -- Burer-Monteiro factorization, L-BFGS in certified chunks ------------------------------------
def _bm_value(U, r, matvec):
    """``f = <M, V V^T>`` for ``v_i = r_i u_i / ||u_i||``; its gradients in ``U`` and in ``r``."""
    nu = np.maximum(np.linalg.norm(U, axis=1), 1e-300)
    Om = U / nu[:, None]
    V = r[:, None] * Om
    MV = matvec(V)
    f = float(np.sum(MV * V))
    G = 2.0 * MV  # df/dV
    g_r = np.sum(G * Om, axis=1)
    return f, (r / nu)[:, None] * (G - g_r[:, None] * Om), g_r


def _bm_dense(x, M, n, p):
    """``<M, V V^T>`` and its gradient in ``x = (U, s)``, ``r = 1 + s^2``."""
    s = x[n * p :]
    f, g_U, g_r = _bm_value(x[: n * p].reshape(n, p), 1.0 + s * s, M.__matmul__)
    return f, np.concatenate([g_U.ravel(), 2.0 * s * g_r])


def _bm_preconditioned(x, Mop, n, p, P):
    """The same in ``x = (Y, rho)``, ``U = S Y`` (:class:`_Preconditioner`), ``r = rho``."""
    f, g_U, g_r = _bm_value(P.S(x[: n * p].reshape(n, p)), x[n * p :], Mop.matvec)
    return f, np.concatenate([P.ST(g_U).ravel(), g_r])


def _scaled_rows(U, r):
    return (r / np.maximum(np.linalg.norm(U, axis=1), 1e-300))[:, None] * U


def _unit_rows(U):
    return U / np.maximum(np.linalg.norm(U, axis=1), 1e-300)[:, None]


def _default_rank(n):
    return int(max(1, min(n, int(np.ceil(np.sqrt(2 * n))) + 1, 10)))


def _start_rows(V0, n, p, rng, bottom):
    """Unit rows (the gradient in ``u_i`` scales like ``1 / ||u_i||``) of the start ``V0`` (fewer than
    ``p`` columns padded; ``bottom(p)``: bottom eigenpairs of ``M``) and ``lambda_min(M)`` if known."""
    lam_min = None
    if isinstance(V0, str) and V0 in ("spectral", "random"):
        if V0 == "random":
            return _unit_rows(rng.standard_normal((n, p))), None
        w, U0 = bottom(p)
        lam_min = float(w[0])
    elif isinstance(V0, str):
        raise ValueError(f"V0 must be 'spectral', 'random' or an array; got {V0!r}.")
    else:
        U0 = np.array(V0, dtype=float)[:, :p]
    if U0.shape[1] < p:
        U0 = np.hstack([U0, 1e-3 * rng.standard_normal((n, p - U0.shape[1]))])
    if lam_min is not None:
        U0 = U0 + 1e-6 * rng.standard_normal((n, p))
    return _unit_rows(U0), lam_min


def _closed(info, gap_tol):
    """Is the certified gap within ``gap_tol * max(primal, 1)``?"""
    return info["gap"] <= gap_tol * max(info["primal"], 1.0)


def _lbfgs_chunks(run, certify_at, *, max_iter, check_every, gap_tol):
    """L-BFGS in chunks of ``check_every`` iterations (``run(chunk)`` -> scipy's result, ``V``),
    each certified (``certify_at(V)`` -> info, without ``"gap"``: stop). Stops at
    ``gap <= gap_tol * max(primal, 1)``, ``max_iter``, no step, or 20 stops by L-BFGS's own test.
    """
    n_iter = n_fev = rounds = natural_stops = 0
    while True:
        chunk = min(max_iter - n_iter, check_every or max_iter)
        res, V = run(chunk)
        nit, message = int(res.nit), str(res.message)
        n_iter, n_fev, rounds = n_iter + nit, n_fev + int(res.nfev), rounds + 1
        del res  # its L-BFGS pairs (2 maxcor arrays of the size of x) are not needed by the next chunk
        info = certify_at(V)
        if "gap" not in info:
            break
        natural_stops += int(nit < chunk)
        if _closed(info, gap_tol) or n_iter >= max_iter or nit == 0 or natural_stops >= 20:
            break
    info.update(n_iter=n_iter, n_fev=n_fev, rounds=rounds, message=message)
    return V, info


def solve_lowrank(
    M, *, C=np.inf, rank=None, V0="spectral", random_state=None, max_iter=3000, tol=0.0,
    gap_tol=1e-4, certify_gap=True, check_every=300,
):
    """Burer-Monteiro solver of ``min <M, V V^T> s.t. ||v_i|| >= 1`` with L-BFGS.

    Row ``i`` of ``V`` is ``v_i = (1 + s_i^2) u_i / ||u_i||``: every norm ``>= 1`` is reachable and
    the objective is smooth in ``(U, s)``. L-BFGS runs in chunks of ``check_every`` iterations
    (``None``: until it stops by itself), each certified by :func:`certify`, until
    ``gap <= gap_tol * max(primal, 1)`` or ``max_iter`` iterations in total.

    Parameters
    ----------
    M : ndarray (n, n), symmetric PSD (from :func:`mmcedu.gmmc.gmmc_matrix`)
    C : float
        Upper bound of the multipliers (soft margin (10)); only used by the certificate.
    rank : int, default=None
        Columns of ``V``; ``None``: ``min(ceil(sqrt(2 n)) + 1, 10)``. Above ``sqrt(2 n)`` second-order
        critical points are optimal for generic costs (Boumal, Voroninski & Bandeira 2016); below
        it the certificate reports any shortfall as a gap.
    V0 : "spectral", "random" or ndarray, default="spectral"
        Start: the ``rank`` bottom eigenvectors of ``M`` (the normalized spectral embedding),
        Gaussian rows, or a given factor; rows scaled to unit norm.
    max_iter, tol, gap_tol : int, float, float
        L-BFGS iterations in total, its relative-reduction tolerance (``0``: only the gap stops it),
        the relative gap that stops.
    certify_gap : bool, default=True
        ``False``: no certificate (``info`` has ``primal`` only).

    Returns
    -------
    V : ndarray (n, rank)
    info : dict with ``primal``, ``lower`` (certified), ``gap`` (>= 0), ``gamma``, ``n_iter``,
        ``n_fev``, ``solve_time``, ``rank``, ``rounds``, ``message``.
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    if rank is not None and not (isinstance(rank, numbers.Integral) and rank >= 1):
        raise ValueError(f"rank must be a positive integer or None; got {rank!r}.")
    if not (isinstance(max_iter, numbers.Integral) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}.")
    if not (isinstance(V0, str) or np.shape(V0)[0] == n and np.ndim(V0) == 2):
        raise ValueError(f"V0 must be 'spectral', 'random' or an array with n = {n} rows; got shape "
                         f"{np.shape(V0)}.")
    p = max(1, min(int(rank) if rank is not None else _default_rank(n), n))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    U, lam_min_M = _start_rows(V0, n, p, rng, lambda k: eigh(M, subset_by_index=[0, k - 1]))
    x = np.concatenate([U.ravel(), 1e-3 * rng.standard_normal(n)])

    def run(chunk):
        nonlocal x
        res = minimize(_bm_dense, x, args=(M, n, p), jac=True, method="L-BFGS-B", options={
            "maxiter": chunk, "maxcor": 20, "ftol": tol, "gtol": 1e-12})
        x = res.x
        s = x[n * p :]
        return res, _scaled_rows(x[: n * p].reshape(n, p), 1.0 + s * s)

    def certify_at(V):
        if not certify_gap:
            return {"primal": float(np.sum((M @ V) * V))}
        primal, lower, gamma = certify(M, V, C=C, lam_min_M=lam_min_M)
        return {"primal": primal, "lower": lower, "gap": max(primal - lower, 0.0), "gamma": gamma}

    V, info = _lbfgs_chunks(run, certify_at, max_iter=max_iter, check_every=check_every,
                            gap_tol=gap_tol)
    info.update(rank=p, solver="lowrank", solve_time=time.perf_counter() - t0)
    return V, info


# -- The same through an implicit M, preconditioned ----------------------------------------------
class _Preconditioner:
    """``S`` with ``S S^T = (M - diag(gamma) + sigma I)^-1``, applied in O(n q p), setup O(n r^2).

    With ``A = (1 + sigma) I - diag(gamma)``, ``F = A^-1/2 G = Q_F R`` and ``R H R^T = E diag(lam) E^T``:
    ``M - diag(gamma) + sigma I = A^1/2 (I - F H F^T) A^1/2``, so ``S = A^-1/2 (I + Q_F E
    diag((1 - lam)^-1/2 - 1) E^T Q_F^T)`` and ``S^-1`` likewise; L-BFGS on ``Y``, ``U = S Y``, is
    preconditioned by (a shift of) the Hessian at the optimum. Only the ``q`` eigenpairs with
    ``(1 - lam)^-1/2 - 1 > keep`` (the ill-conditioned smooth graph modes near ``lam = 1``) are
    kept: ``S`` stays SPD, exactly invertible, within a factor ``1 + keep``.
    """

    def __init__(self, Mop, gamma, sigma, keep=0.1):
        a = np.maximum(1.0 - np.asarray(gamma, dtype=float) + sigma, sigma)
        self.ih = 1.0 / np.sqrt(a)
        self.h = np.sqrt(a)
        Qf, R = qr(Mop.G * self.ih[:, None], mode="economic", check_finite=False)
        T = R @ Mop.H @ R.T
        lam, E = eigh((T + T.T) / 2)
        lam = np.minimum(lam, 1.0 - 1e-8)  # SPD guard (only if gamma is not dual feasible)
        m_inv = 1.0 / np.sqrt(1.0 - lam) - 1.0
        sel = m_inv > keep
        self.QE = Qf @ E[:, sel]
        self.m_inv = m_inv[sel]
        self.m_fwd = np.sqrt(1.0 - lam[sel]) - 1.0

    def _mix(self, Z, m):
        return Z + self.QE @ (m[:, None] * (self.QE.T @ Z))

    def S(self, Y):
        return self.ih[:, None] * self._mix(Y, self.m_inv)

    def ST(self, W):
        return self._mix(self.ih[:, None] * W, self.m_inv)

    def Sinv(self, U):
        return self._mix(self.h[:, None] * U, self.m_fwd)


def _solve_lowrank_operator(
    Mop, *, C=np.inf, rank=10, random_state=None, max_iter=3000, gap_tol=1e-4, check_every=300,
    certify_every=10, maxcor=10, sigma=1e-2,
):
    """:func:`solve_lowrank` for the implicit ``M`` of :class:`mmcedu.gmmc._LowRankMatrix`.

    Rows ``v_i = rho_i u_i / ||u_i||`` with the bound ``rho_i >= 1`` in L-BFGS-B (``1 + s_i^2`` has a
    saddle at 0, which rows with ``gamma_i = 0`` leave slowly); a spectral start; variables
    ``U = S Y`` (:class:`_Preconditioner` with shift ``sigma``, rebuilt before every chunk from the
    last certified ``gamma``); ``maxcor`` L-BFGS pairs. Within a chunk the iterate is also
    certified once the objective has moved by at most a tenth of ``gap_tol`` (relative) over the
    last ``certify_every`` iterations (at most once per ``certify_every``), and L-BFGS stops there
    if the gap is within ``gap_tol``. ``info`` adds ``n_precond``, ``n_matvec``.
    """
    n = Mop.n
    p = int(max(1, min(rank, n)))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    U, _ = _start_rows("spectral", n, p, rng, Mop.bottom_eigvecs)
    state = {"U": U, "rho": np.ones(n), "gamma": _certify_lowrank(Mop, U, C=C)[2]}
    bounds = [(None, None)] * (n * p) + [(1.0, None)] * n

    def run(chunk):
        P = _Preconditioner(Mop, state["gamma"], sigma)
        x = np.concatenate([P.Sinv(state["U"]).ravel(), state["rho"]])

        def rows(x):
            return _unit_rows(P.S(x[: n * p].reshape(n, p))), np.maximum(x[n * p :], 1.0)

        def check(intermediate_result):
            f = state["f"]
            f.append(float(intermediate_result.fun))
            # certify once the objective moved by at most a tenth of the tolerance over certify_every steps
            if (certify_every and len(f) > certify_every
                    and f[-1 - certify_every] - f[-1] <= 0.1 * gap_tol * max(f[-1], 1.0)
                    and len(f) - state["last"] >= certify_every):
                state["last"] = len(f)
                if _closed(certify_at(_scaled_rows(*rows(intermediate_result.x))), gap_tol):
                    raise StopIteration

        state["f"], state["last"] = [], 0
        res = minimize(
            _bm_preconditioned, x, args=(Mop, n, p, P), jac=True, method="L-BFGS-B", callback=check,
            bounds=bounds, options={"maxiter": chunk, "maxcor": maxcor, "ftol": 0.0, "gtol": 1e-12},
        )
        state["U"], state["rho"] = rows(res.x)
        return res, _scaled_rows(state["U"], state["rho"])

    def certify_at(V):
        if state.get("certified") is not None and np.array_equal(state["certified"][0], V):
            return dict(state["certified"][1])  # already certified by the check within the chunk
        primal, lower, state["gamma"] = _certify_lowrank(Mop, V, C=C)
        info = {"primal": primal, "lower": lower, "gap": max(primal - lower, 0.0), "gamma": state["gamma"]}
        state["certified"] = (V, info)
        return info

    V, info = _lbfgs_chunks(run, certify_at, max_iter=max_iter, check_every=check_every,
                            gap_tol=gap_tol)
    info.update(rank=p, n_precond=info["rounds"], n_matvec=Mop.n_matvec,
                solve_time=time.perf_counter() - t0)
    return V, info
