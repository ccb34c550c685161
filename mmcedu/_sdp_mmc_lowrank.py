"""The low-rank (Burer-Monteiro) solver of the SDP relaxation of :mod:`mmcedu.sdp_mmc`.

``M = V V^T`` with unit rows, ``omega(V V^T)`` by a warm-started projected Newton method on
the SVM's box QP, minimized over ``V`` by L-BFGS with the balance rows in an augmented
Lagrangian; every few iterations a certified bracket ``lower <= p* <= upper`` of the SDP
value ``p*`` (weak duality below, concavity above).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from .balance import max_imbalance

__all__ = ["solve_sdp_mmc_lowrank", "sdp_lower_bound"]


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


def _box_qp_warm(Q, C, a0=None, *, tol=1e-10, max_iter=500, rcond=1e-10):
    """Minimize ``q(a) = a^T Q a - 2 e^T a`` over ``0 <= a <= C`` (``Q`` PSD, ``C`` finite).

    Projected Newton (Bertsekas 1982) with pseudo-inverse steps. ``Q = K o M`` has a
    numerical rank far below n (the RBF kernel's spectrum decays fast), so the face problems
    are singular. Each iteration: on the free set ``F`` (coordinates not at a bound with the
    gradient pushing outward) the direction is ``-pinv(Q_FF) g_F`` (eigenvalues below
    ``rcond * max diag Q`` dropped; if that vanishes, the null-space part of the gradient,
    along which ``q`` decreases linearly), followed by the exact search along the projection
    arc (:func:`_arc_search`, which stops coordinates at their bounds); a projected-gradient
    step with ``1 / ||Q||_inf`` (always a descent) if that fails. Warm-started from the
    previous ``a`` it takes a few tens of steps, each O(n |F| + |F|^3); the free set of an SVM
    dual (free support vectors) is small.

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
        F = np.flatnonzero(~(((a <= 0.0) & (g > 0)) | ((a >= C) & (g < 0))))
        QFF = Q[np.ix_(F, F)]
        d = np.zeros(F.size)
        if F.size:
            lam, W = np.linalg.eigh(QFF)
            keep = lam > rcond * dmax
            c = W.T @ g[F]
            d = -(W[:, keep] @ (c[keep] / lam[keep]))
            if not np.any(np.abs(d) > 1e-15 * C):
                d = -(W[:, ~keep] @ c[~keep]) / Lip
        gF = g[F]
        xF = a[F].copy()
        if F.size:
            xF = _arc_search(xF, d, gF, QFF, C)
        step = xF - a[F]
        slope = float(gF @ step)
        q_new = q + 2.0 * slope + float(step @ (QFF @ step))
        if slope < 0 and q_new < q:
            a[F] = xF
            Qa += Q[:, F] @ step
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


def sdp_lower_bound(K, alpha, l, V=None, lam=None):
    """Certified (weak-duality) lower bound on the SDP value from any ``alpha`` in the box.

    With ``p* = min_{M PSD, diag M = e, |M e| <= l} omega(M)`` and any ``0 <= alpha <= C``,
    ``p* >= 2 alpha^T e - e^T s - l ||lam||_1`` for every ``(s, lam)`` with
    ``Diag(s) + (lam e^T + e lam^T) / 2 - K o alpha alpha^T`` PSD. ``lam`` (balance
    multipliers) defaults to 0; ``s`` is the KKT estimate from ``V`` (rows of a factor of
    ``M``; the diagonal of ``K o alpha alpha^T`` when ``None``), lifted by
    ``tau = lambda_max(...)_+`` so that the matrix is PSD (the O(n^3) step). The bound holds
    for any input, accurate or not, and is never above ``p*`` (up to round-off, which is
    added).

    Returns
    -------
    lower : float
    info : dict ``tau`` (the lift), ``s``, ``lam``
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


def _unit_rows(U):
    """``U`` with its rows scaled to unit length, and the row norms."""
    norms = np.maximum(np.linalg.norm(U, axis=1), 1e-300)
    return U / norms[:, None], norms


def _row_sums(V):
    """``(V V^T) e``, the balance rows of ``M = V V^T``."""
    return V @ V.sum(axis=0)


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
        V, nu = _unit_rows(x.reshape(n, p))
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

    def update_multipliers(self, V):
        """The augmented Lagrangian's multiplier step; the penalty grows while rows are violated."""
        m = _row_sums(V)
        self.lam_up = np.maximum(0.0, self.lam_up + self.rho * (m - self.l))
        self.lam_lo = np.maximum(0.0, self.lam_lo + self.rho * (-m - self.l))
        if np.max(np.abs(m)) > self.l * (1 + 1e-3):
            self.rho = min(self.rho * 4.0, 1e6)


def _feasible_mix(V, l):
    """Mix ``V V^T`` with ``I`` just enough to meet ``|M e| <= l``: returns ``t`` in [0, 1)
    for ``M = (1 - t) V V^T + t I`` (``t = 0`` if ``V V^T`` is feasible)."""
    m = _row_sums(V)
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


def _spectral_start(K, p, rng):
    """The start of L-BFGS: the ``p`` leading eigenpairs of ``K`` as a factor ``Q sqrt(w)``,
    slightly perturbed, flattened."""
    n = K.shape[0]
    w, Qe = eigh(K, subset_by_index=[n - p, n - 1])
    U0 = Qe * np.sqrt(np.clip(w, 0.0, None)) + 1e-3 * rng.standard_normal((n, p)) / np.sqrt(n)
    return U0.ravel().copy()


def _certify(K, V, C, l, obj):
    """Bracket of the SDP value at the iterate ``V``: ``(upper, lower, alpha, mix, tau)``.

    ``upper`` bounds ``omega`` at the feasible ``M = (1 - mix) V V^T + mix I`` from above
    (:func:`_omega_bounds`); ``lower`` is :func:`sdp_lower_bound` at the QP's ``alpha`` for
    ``V V^T`` with the balance multipliers; ``tau`` its lift.
    """
    n = K.shape[0]
    mix = _feasible_mix(V, l)
    Q = _kernel_times_gram(K, V)
    if mix > 0:
        Q *= 1.0 - mix
        Q[np.diag_indices(n)] += mix * np.diag(K)
    a, _ = _box_qp_warm(Q, C, obj.alpha)
    _, upper = _omega_bounds(Q, a, C)
    del Q  # the certificate below builds its own n x n matrix
    alpha = a if mix == 0 else _box_qp_warm(_kernel_times_gram(K, V), C, a)[0]
    lower, linfo = sdp_lower_bound(K, alpha, l, V=V, lam=obj.lam_up - obj.lam_lo)
    return upper, lower, alpha, mix, linfo["tau"]


def solve_sdp_mmc_lowrank(
    K, C=1.0, balance=0.1, *, rank=None, max_iter=1000, tol=1e-3, check_every=50,
    random_state=None, smooth=(1e-3, 1e-4), callback=None,
):
    """Solve the SDP relaxation with ``M = V V^T`` (Burer-Monteiro), with a certified gap.

    Eliminating ``delta``, ``mu`` and ``nu`` by the Schur complement, the SDP of
    :func:`mmcedu.sdp_mmc.solve_sdp_mmc` is ``p* = min_M omega(M)`` over ``M`` PSD,
    ``diag(M) = e``, ``|M e| <= l``, with
    ``omega(M) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o M) alpha`` convex in ``M``
    (gradient ``-(K o alpha alpha^T)`` at the maximizer, Danskin). ``M`` is factored as
    ``V V^T`` with ``V`` n x ``rank`` with unit rows (``diag(M) = e`` by construction),
    started from the leading eigenvectors of ``K``; ``omega(V V^T)`` is evaluated by a
    warm-started projected Newton method on the box QP and minimized over ``V`` by L-BFGS,
    the balance rows by an augmented Lagrangian; ``omega`` is smoothed by ``mu ||alpha||^2``
    for the first chunks (``smooth``, relative to ``max diag K``), then exact.

    Every ``check_every`` iterations the iterate is certified: ``upper`` is ``omega`` at a
    feasible ``M`` (``V V^T``, mixed with ``I`` if a balance row is violated), bounded from
    above by concavity; ``lower`` is :func:`sdp_lower_bound` at the QP's ``alpha``. Both are
    rigorous, so ``lower <= p* <= upper``. It stops when
    ``upper - lower <= tol * max(|upper|, 1)`` or after ``max_iter`` L-BFGS iterations and
    returns the best certified iterate.

    Memory: about ``128 n^2`` bytes (:meth:`mmcedu.SDPMMC.memory_bytes`). Time: each
    evaluation is O(n^2 rank) plus the QP; each certificate one O(n^3) eigenvalue.

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
    x = _spectral_start(K, p, rng)
    obj = _BMObjective(K, float(C), l, n, p)
    kscale = max(float(np.max(np.diag(K))), 1e-300)
    smooth = list(smooth) if smooth else [0.0]
    history = []
    n_iter = 0
    best = None
    while True:
        obj.smooth = smooth[min(len(history), len(smooth) - 1)] * kscale
        res = minimize(obj, x, jac=True, method="L-BFGS-B",
                       options={"maxiter": max(1, min(check_every, max_iter - n_iter)),
                                "maxcor": 20, "ftol": 0.0, "gtol": 1e-12})
        x = res.x
        n_iter += int(res.nit)
        V, _ = _unit_rows(x.reshape(n, p))
        obj.update_multipliers(V)
        upper, lower, alpha, mix, tau = _certify(K, V, C, l, obj)
        gap = upper - lower
        entry = {"n_iter": n_iter, "smooth": obj.smooth, "upper": upper, "lower": lower,
                 "gap": gap, "rel_gap": gap / max(abs(upper), 1.0), "tau": tau,
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
