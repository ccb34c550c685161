"""The low-rank (Burer-Monteiro) solver of the SDP relaxation of :mod:`mmcedu.sdp_mmc`."""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from .balance import max_imbalance

__all__ = ["solve_sdp_mmc_lowrank", "sdp_lower_bound", "solve_sdp_mmc_factor", "factor_lower_bound"]


def _arc_search(x, d, g, QXX, C):
    """The minimizer of ``q(s) = 2 g^T s + s^T QXX s`` (``s`` the change of ``x``) along the
    projection arc ``P(x + t d)``, ``t >= 0``: walk the sorted breakpoints where coordinates
    stop at their bounds, ``q`` being a quadratic on each segment (L-BFGS-B's generalized
    Cauchy point, with the exact Hessian)."""
    x, d, g = x.copy(), d.copy(), g.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(d < 0, -x / d, np.where(d > 0, (C - x) / d, np.inf))
    bp = np.maximum(bp, 0.0)
    order = np.argsort(bp, kind="stable")
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

    Projected Newton (Bertsekas 1982): on the free set ``F`` the step ``-pinv(Q_FF) g_F``
    (``Q = K o M`` is numerically singular: eigenvalues below ``rcond * max diag Q`` dropped;
    if that vanishes, the null-space part of the gradient), then the exact arc search
    (:func:`_arc_search`); a projected-gradient step with ``1 / ||Q||_inf`` (a descent) if
    that fails. Returns ``a`` and ``{"n_iter", "kkt", "value": -q(a)}``.
    """
    n = Q.shape[0]
    C = float(C)
    a = np.clip(np.zeros(n) if a0 is None else np.asarray(a0, dtype=float), 0.0, C)
    dmax = max(float(np.max(np.abs(np.diag(Q)))), 1e-300)
    # ||Q||_inf >= lambda_max(Q), in row blocks (no n x n temporary)
    Lip = max(max(float(np.max(np.abs(Q[i:i + 256]).sum(axis=1))) for i in range(0, n, 256)), 1e-300)
    scale = max(1.0, dmax * C)
    Qa = Q @ a
    q = float(a @ Qa - 2.0 * a.sum())
    it = 0
    kkt = np.inf
    for it in range(1, max_iter + 1):  # noqa: B007 (read after the loop)
        g = Qa - 1.0  # half gradient
        pg = a - np.clip(a - g, 0.0, C)
        kkt = float(np.max(np.abs(pg)))
        if kkt <= tol * scale:
            break
        F = np.flatnonzero(~(((a <= 0.0) & (g > 0)) | ((a >= C) & (g < 0))))  # the free set
        QFF = Q[np.ix_(F, F)]
        gF = g[F]
        xF = a[F]
        if F.size:
            lam, W = np.linalg.eigh(QFF)
            keep = lam > rcond * dmax
            c = W.T @ gF
            d = -(W[:, keep] @ (c[keep] / lam[keep]))
            if not np.any(np.abs(d) > 1e-15 * C):
                d = -(W[:, ~keep] @ c[~keep]) / Lip
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
    return a, {"n_iter": it, "kkt": kkt, "value": -float(a @ Qa - 2.0 * a.sum())}


def sdp_lower_bound(K, alpha, l, V=None, lam=None):
    """Certified (weak-duality) lower bound on the SDP value from any ``alpha`` in the box.

    With ``p* = min_{M PSD, diag M = e, |M e| <= l} omega(M)`` and any ``0 <= alpha <= C``,
    ``p* >= 2 alpha^T e - e^T s - l ||lam||_1`` for every ``(s, lam)`` with
    ``Diag(s) + (lam e^T + e lam^T) / 2 - K o alpha alpha^T`` PSD. ``lam`` (balance
    multipliers) defaults to 0; ``s`` is the KKT estimate from ``V`` (a factor of ``M``; the
    diagonal of ``K o alpha alpha^T`` when ``None``) plus the lift ``tau``, the largest
    eigenvalue (round-off added) that makes the matrix PSD. Returns
    ``(lower, {"tau", "s", "lam"})``.
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


class _BalanceLagrangian:
    """The augmented Lagrangian of the balance rows ``-l <= (V V^T e)_i <= l`` (multipliers
    ``lam_up``, ``lam_lo``, penalty ``rho``), shared by both low-rank objectives."""

    def _init_balance(self, n, l):
        self.l = l
        self.lam_up, self.lam_lo = np.zeros(n), np.zeros(n)
        self.rho = 1.0

    def _balance_terms(self, V):
        """The penalty's value and its gradient in ``V``."""
        w = V.sum(axis=0)
        m = V @ w  # balance rows m_i = v_i . w, w = V^T e
        mu_up = np.maximum(0.0, self.lam_up + self.rho * (m - self.l))
        mu_lo = np.maximum(0.0, self.lam_lo + self.rho * (-m - self.l))
        f = float((mu_up @ mu_up - self.lam_up @ self.lam_up
                   + mu_lo @ mu_lo - self.lam_lo @ self.lam_lo) / (2.0 * self.rho))
        mu = mu_up - mu_lo
        return f, np.outer(mu, w) + np.outer(np.ones(V.shape[0]), V.T @ mu)

    def update_multipliers(self, V):
        """The augmented Lagrangian's multiplier step; the penalty grows while rows are violated."""
        m = V @ V.sum(axis=0)  # the balance rows (V V^T) e
        self.lam_up = np.maximum(0.0, self.lam_up + self.rho * (m - self.l))
        self.lam_lo = np.maximum(0.0, self.lam_lo + self.rho * (-m - self.l))
        if np.max(np.abs(m)) > self.l * (1 + 1e-3):
            self.rho = min(self.rho * 4.0, 1e6)


def _tangent(GV, V, norms):
    """The gradient in ``U`` of a function of ``V = U / ||rows of U||`` with gradient ``GV``."""
    return (GV - np.sum(GV * V, axis=1)[:, None] * V) / norms[:, None]


class _BMObjective(_BalanceLagrangian):
    """``omega(V V^T)`` + augmented Lagrangian of the balance rows, as a function of ``U``."""

    def __init__(self, K, C, l, n, p):
        self.K, self.C, self.n, self.p = K, C, n, p
        self._init_balance(n, l)
        self.alpha = np.zeros(n)
        self.smooth = 0.0  # the QP's smoothing
        self.n_eval = self.qp_iters = 0

    def factor(self, x):
        return _unit_rows(x.reshape(self.n, self.p))[0]

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
        aV = a[:, None] * V
        GV = -2.0 * a[:, None] * (self.K @ aV)  # d omega / dV
        penalty, G_balance = self._balance_terms(V)
        GV += G_balance
        return qinfo["value"] + penalty, _tangent(GV, V, nu).ravel()


def _feasible_mix(V, l):
    """The least ``t`` in [0, 1) with ``M = (1 - t) V V^T + t I`` meeting ``|M e| <= l``."""
    m = V @ V.sum(axis=0)  # the balance rows (V V^T) e
    if float(np.max(np.abs(m))) <= l:
        return 0.0
    if l <= 1.0:
        raise ValueError(
            "solver='lowrank' needs floor(balance n) >= 2 (the identity must be strictly "
            "feasible for the certificate); raise balance."
        )
    # |(1-t) m_i + t| <= l  <=>  t >= (m_i - l) / (m_i - 1) if m_i > l, (-m_i - l) / (-m_i + 1) if m_i < -l
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(m > l, (m - l) / (m - 1.0), np.where(m < -l, (-m - l) / (-m + 1.0), 0.0))
    return min(float(np.max(t)) * (1 + 1e-12), 1.0)


def _certify(K, V, C, l, obj):
    """``(upper, lower, alpha, mix, tau)`` at ``V``: ``upper`` bounds ``omega`` at the feasible
    ``M = (1 - mix) V V^T + mix I`` from above; ``lower`` is :func:`sdp_lower_bound` at the
    QP's ``alpha`` for ``V V^T``, with the balance multipliers."""
    n = K.shape[0]
    mix = _feasible_mix(V, l)
    Q = _kernel_times_gram(K, V)
    if mix > 0:
        Q *= 1.0 - mix
        Q[np.diag_indices(n)] += mix * np.diag(K)
    a, _ = _box_qp_warm(Q, C, obj.alpha)
    # omega <= f(a) + sum_i [C (g_i)_+ - g_i a_i] with f(a) = 2 a^T e - a^T Q a and its gradient
    # g = 2 (e - Q a), by concavity
    Qa = Q @ a
    g = 2.0 * (1.0 - Qa)
    upper = float(2.0 * a.sum() - a @ Qa) + float(np.sum(C * np.clip(g, 0.0, None) - g * a))
    del Q  # the certificate below builds its own n x n matrix
    alpha = a if mix == 0 else _box_qp_warm(_kernel_times_gram(K, V), C, a)[0]
    lower, linfo = sdp_lower_bound(K, alpha, l, V=V, lam=obj.lam_up - obj.lam_lo)
    return upper, lower, alpha, mix, linfo["tau"]


def solve_sdp_mmc_lowrank(K, C=1.0, balance=0.1, *, rank=None, max_iter=1000, tol=1e-3, check_every=50,
                          random_state=None, smooth=(1e-3, 1e-4), callback=None):
    """Solve the SDP relaxation with ``M = V V^T`` (Burer-Monteiro), with a certified gap.

    Eliminating ``delta``, ``mu`` and ``nu`` (Schur complement), the SDP is
    ``p* = min omega(M)`` over ``M`` PSD, ``diag(M) = e``, ``|M e| <= l``, with
    ``omega(M) = max_{0 <= alpha <= C} 2 alpha^T e - alpha^T (K o M) alpha`` convex in ``M``
    (gradient ``-(K o alpha alpha^T)``, Danskin). ``V`` (n x ``rank``, unit rows, so
    ``diag(M) = e``) starts from the leading eigenvectors of ``K``; ``omega(V V^T)`` (a
    warm-started projected Newton method on the box QP, smoothed by ``mu ||alpha||^2`` for the
    first chunks) is minimized over ``V`` by L-BFGS, the balance rows by an augmented
    Lagrangian. Every ``check_every`` iterations a certified bracket ``lower <= p* <= upper``:
    ``upper`` is ``omega`` at a feasible ``M`` (``V V^T``, mixed with ``I`` if a balance row
    is violated) bounded by concavity, ``lower`` is :func:`sdp_lower_bound`. It stops when
    ``upper - lower <= tol * max(|upper|, 1)`` or after ``max_iter`` iterations and returns
    the best certified iterate. Memory: about ``128 n^2`` bytes; each certificate is one
    O(n^3) eigenvalue.

    Parameters
    ----------
    K : ndarray of shape (n, n), the (centred) kernel
    C : float, the finite box bound (no hard margin)
    balance : float, ``l = floor(balance n)``, which must be at least 2
    rank : int or None, columns of ``V``; ``None`` means ``ceil(sqrt(2 n)) + 1``, a heuristic
        (Pataki's bound needs a linear objective; here an optimal ``M`` of rank about
        ``2 sqrt(n)`` exists), made safe by the certified bracket
    max_iter : int, L-BFGS iterations in total
    tol : float, relative gap at which to stop
    check_every : int, iterations between certificates
    random_state : seed of the small perturbation of the spectral start
    smooth : sequence of float, ``mu`` per chunk relative to ``max diag K`` (the last is kept)
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
    _check_finite_c(C)
    l = max_imbalance(n, balance)
    p = int(min(n, rank if rank is not None else int(np.ceil(np.sqrt(2 * n))) + 1))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    w, Qe = eigh(K, subset_by_index=[n - p, n - 1])  # start: the p leading eigenpairs, perturbed
    x = (Qe * np.sqrt(np.clip(w, 0.0, None)) + 1e-3 * rng.standard_normal((n, p)) / np.sqrt(n)).ravel()
    obj = _BMObjective(K, float(C), l, n, p)
    kscale = max(float(np.max(np.diag(K))), 1e-300)

    def certify(V):
        upper, lower, alpha, mix, tau = _certify(K, V, C, l, obj)
        return upper, lower, alpha, mix, {"tau": tau}

    V, info = _certified_lbfgs(obj, x, certify, [kscale * s for s in (smooth or [0.0])], max_iter=max_iter,
                               tol=tol, check_every=check_every, callback=callback)
    info.pop("x")
    info.update(qp_iters=obj.qp_iters, rank=p, l=l, solve_time=time.perf_counter() - t0)
    return V, info


def _check_finite_c(C):
    if C is None or not 0 < C < np.inf:
        raise ValueError("solver='lowrank' needs a finite C > 0 (the hard margin C=None is cvxpy only).")


def _certified_lbfgs(obj, x, certify, smooth, *, max_iter, tol, check_every, callback, maxcor=20):
    """L-BFGS on ``obj`` in chunks of ``check_every`` iterations, each ended by a certificate.

    Chunk ``k`` runs with ``obj.smooth = smooth[min(k, len(smooth) - 1)]``; after it, the balance
    multipliers are updated and ``certify(V)`` returns ``(upper, lower, alpha, mix, extra)``.
    Stops when ``upper - lower <= tol * max(|upper|, 1)``, after ``max_iter`` iterations, or when
    L-BFGS no longer moves; returns the factor with the smallest certified gap and its ``info``.
    """
    history, n_iter, best = [], 0, None
    while True:
        obj.smooth = smooth[min(len(history), len(smooth) - 1)]
        res = minimize(obj, x, jac=True, method="L-BFGS-B",
                       options={"maxiter": max(1, min(check_every, max_iter - n_iter)),
                                "maxcor": maxcor, "ftol": 0.0, "gtol": 1e-12})
        x = res.x
        n_iter += int(res.nit)
        V = obj.factor(x)
        obj.update_multipliers(V)
        upper, lower, alpha, mix, extra = certify(V)
        gap = upper - lower
        entry = {"n_iter": n_iter, "smooth": obj.smooth, "upper": upper, "lower": lower, "gap": gap,
                 "rel_gap": gap / max(abs(upper), 1.0), **extra, "mix": mix, "n_eval": obj.n_eval}
        history.append(entry)
        if callback is not None:
            callback(entry)
        if best is None or gap < best[0]:
            best = (gap, V.copy(), upper, lower, alpha.copy(), mix, x.copy())
        stalled = res.nit == 0 and len(history) >= len(smooth)
        if gap <= tol * max(abs(upper), 1.0) or n_iter >= max_iter or stalled:
            break
    gap, V, upper, lower, alpha, mix, x = best
    rel_gap = gap / max(abs(upper), 1.0)
    return V, {"upper": upper, "lower": lower, "gap": gap, "rel_gap": rel_gap, "alpha": alpha,
               "n_iter": n_iter, "n_eval": obj.n_eval, "mix": mix, "converged": bool(rel_gap <= tol),
               "history": history, "x": x}


# -- The factor path: K = Z Z^T (n x m) and M = V V^T, nothing n x n -------------------------------
def _rowdot(A, B):
    return np.einsum("ij,ij->i", A, B)


def _huber_hinge(s, eps):
    """The hinge ``max(s, 0)`` with its kink rounded on ``(0, eps)``: ``s^2 / (2 eps)`` there."""
    return np.where(s <= 0.0, 0.0, np.where(s < eps, s * s / (2.0 * eps), s - eps / 2.0))


def _gram_rows(Z, V, rows, block=2048):
    """``Phi^T Phi`` for the rows ``phi_i = z_i (x) v_i``, ``i`` in ``rows``, in blocks of rows."""
    d = Z.shape[1] * V.shape[1]
    H = np.zeros((d, d))
    for lo in range(0, rows.size, block):
        b = rows[lo:lo + block]
        Phi = (Z[b][:, :, None] * V[b][:, None, :]).reshape(b.size, d)
        H += Phi.T @ Phi
    return H


def _newton_direction(Z, V, S, G, C, eps, cache):
    """The Newton step ``D`` of ``J(U) = ||U||^2 + 2 C sum_i h(1 - z_i^T U v_i)`` with gradient ``G``.

    The Hessian is ``2 I + (2 C / eps) Phi_S^T Phi_S`` (rows ``phi_i = z_i (x) v_i``, ``i`` in the
    band ``S`` where ``h`` is quadratic). Solved through the ``|S| x |S|`` matrix
    ``(Z_S Z_S^T) o (V_S V_S^T)`` (Woodbury, for ``|S| <= m r``) or the ``m r x m r`` Hessian,
    whichever costs less;
    ``cache`` keeps ``Phi_S^T Phi_S`` of an earlier band at the same ``V``, updated by the rows
    that entered or left it.
    """
    m, r = G.shape
    d, k = m * r, S.size
    band = np.zeros(Z.shape[0], dtype=bool)
    band[S] = True
    H = cache.get("H")
    changed = k if H is None else int(np.count_nonzero(band != cache["band"]))
    if k <= d and k * k * (m + r) + k ** 3 / 3 < min(changed, k) * d * d + d ** 3 / 3:
        ZS, VS = Z[S], V[S]
        A = (ZS @ ZS.T) * (VS @ VS.T)
        A[np.diag_indices(k)] += eps / C
        y = cho_solve(cho_factor(A, check_finite=False), _rowdot(ZS @ G, VS), check_finite=False)
        return -(G - ZS.T @ (y[:, None] * VS)) / 2.0
    if H is not None and changed < k:
        entered, left = np.flatnonzero(band & ~cache["band"]), np.flatnonzero(cache["band"] & ~band)
        H = H + _gram_rows(Z, V, entered) - _gram_rows(Z, V, left)
    else:
        H = _gram_rows(Z, V, S)
    cache.update(H=H, band=band)
    A = (2.0 * C / eps) * H
    A[np.diag_indices(d)] += 2.0
    return -cho_solve(cho_factor(A, check_finite=False), G.ravel(), check_finite=False).reshape(m, r)


def _line_search(t, dt, UD, DD, C, eps):
    """The exact minimizer ``tau >= 0`` of the convex piecewise quadratic ``J(U + tau D)``
    (``t``, ``dt``: the margins ``z_i^T U v_i`` and their change along ``D``), by a safeguarded
    Newton iteration on its derivative."""

    def slope(tau):
        s = 1.0 - t - tau * dt
        return 2.0 * (UD + tau * DD - C * float(np.clip(s / eps, 0.0, 1.0) @ dt)), s

    lo, hi = 0.0, 1.0
    while slope(hi)[0] < 0 and hi < 1e6:
        lo, hi = hi, 2.0 * hi
    tau = hi
    for _ in range(60):
        g, s = slope(tau)
        if g > 0:
            hi = tau
        else:
            lo = tau
        if g == 0 or hi - lo <= 1e-14 * hi:
            break
        band = (s > 0) & (s < eps)
        curv = 2.0 * (DD + C / eps * float(dt[band] @ dt[band]))
        step = tau - g / curv
        tau = step if lo < step < hi else (lo + hi) / 2.0
    return tau


def _factor_svm(Z, V, C, eps, U, *, max_steps=50, tol=1e-10):
    """``min_U J(U) = ||U||_F^2 + 2 C sum_i h_eps(1 - z_i^T U v_i)`` by Newton from ``U``.

    The Huber-smoothed primal of ``omega_eps(V V^T)``; ``J`` is convex and piecewise quadratic,
    its Newton steps (:func:`_newton_direction`) take the exact step length
    (:func:`_line_search`). Returns ``(J, U, alpha, t, n_steps)``: ``t_i = z_i^T U v_i`` and
    ``alpha_i = C clip((1 - t_i) / eps, 0, 1)``, the dual point in ``[0, C]^n``.
    """
    t = _rowdot(Z @ U, V)
    w = np.clip((1.0 - t) / eps, 0.0, 1.0)
    W = Z.T @ (w[:, None] * V)  # Z^T diag(alpha / C) V, updated by the rows whose alpha changed
    steps, cache, exact = 0, {}, True
    while steps < max_steps:
        G = 2.0 * U - 2.0 * C * W
        if float(np.sqrt(np.sum(G * G))) <= tol * max(1.0, float(np.sqrt(np.sum(U * U)))):
            if exact:
                break
            W, exact = Z.T @ (w[:, None] * V), True  # confirm with the gradient recomputed
            continue
        s = 1.0 - t
        D = _newton_direction(Z, V, np.flatnonzero((s > 0) & (s < eps)), G, C, eps, cache)
        dt = _rowdot(Z @ D, V)
        tau = _line_search(t, dt, float(np.sum(U * D)), float(np.sum(D * D)), C, eps)
        U, t = U + tau * D, t + tau * dt
        w_new = np.clip((1.0 - t) / eps, 0.0, 1.0)
        moved = np.flatnonzero(w_new != w)
        W += Z[moved].T @ ((w_new - w)[moved, None] * V[moved])
        w, exact = w_new, False
        steps += 1
    s = 1.0 - t
    value = float(np.sum(U * U)) + 2.0 * C * float(_huber_hinge(s, eps).sum())
    return value, U, C * np.clip(s / eps, 0.0, 1.0), t, steps


def _factor_svm_continued(Z, V, C, eps, U, *, max_steps=50, tol=1e-10, plain_steps=15):
    """:func:`_factor_svm`, continued through the bands ``100 eps`` and ``10 eps`` when
    ``plain_steps`` Newton steps at ``eps`` do not converge (its kinks then move too many rows
    per step); the same return values, ``n_steps`` counting every step."""
    out = _factor_svm(Z, V, C, eps, U, max_steps=plain_steps, tol=tol)
    if out[4] < plain_steps:
        return out
    steps, U = out[4], out[1]
    for band in (10.0 * eps,):
        _, U, _, _, k = _factor_svm(Z, V, C, band, U, max_steps=max_steps, tol=1e-6)
        steps += k
    value, U, alpha, t, k = _factor_svm(Z, V, C, eps, U, max_steps=max_steps, tol=tol)
    return value, U, alpha, t, steps + k


def _svm_start(Z, V, C, eps):
    """A starting ``U`` for :func:`_factor_svm`: the best multiple of ``Z^T V``."""
    U = Z.T @ V
    t = _rowdot(Z @ U, V)
    scales = np.logspace(-4, 2, 61) / max(float(np.median(np.abs(t))), 1e-300)
    uu = float(np.sum(U * U))
    values = [c * c * uu + 2.0 * C * float(_huber_hinge(1.0 - c * t, eps).sum()) for c in scales]
    return U * scales[int(np.argmin(values))]


def _factor_omega(Z, y, C, *, eps=1e-8):
    """``omega(y)`` on the kernel ``Z Z^T``, from its primal ``min_u ||u||^2 + 2 C sum_i
    (1 - y_i z_i^T u)_+`` evaluated at the Newton solution ``u`` of its smoothing with band
    ``eps``: an upper bound on ``omega(y)``, above it by at most ``C eps`` times the number of
    samples with ``y_i z_i^T u < 1``."""
    V = np.asarray(y, dtype=float).reshape(-1, 1)
    _, U, _, t, _ = _factor_svm_continued(Z, V, float(C), eps, _svm_start(Z, V, C, eps), max_steps=200)
    return float(np.sum(U * U)) + 2.0 * C * float(np.sum(np.maximum(1.0 - t, 0.0)))


class _FactorObjective(_BalanceLagrangian):
    """``omega_eps(V V^T)`` + the balance Lagrangian as a function of ``T`` (m x r), ``V`` =
    the rows of ``Z T`` scaled to unit length, or with ``free`` of ``U`` (n x r) itself; the SVM
    is solved in its primal."""

    def __init__(self, Z, C, l, p):
        self.Z, self.C, self.p = Z, C, p
        self._init_balance(Z.shape[0], l)
        self.smooth = 1e-4  # the band eps of the smoothed hinge
        self.U = self.alpha = None
        self.free = False
        self.n_eval = self.newton_steps = 0

    def _rows(self, x):
        return x.reshape(-1, self.p) if self.free else self.Z @ x.reshape(-1, self.p)

    def factor(self, x):
        return _unit_rows(self._rows(x))[0]

    def svm(self, V):
        """The smoothed SVM at ``V``, warm-started from the last ``U`` or from the last ``alpha``."""
        Z, C, eps = self.Z, self.C, self.smooth
        if self.U is None:
            U = _svm_start(Z, V, C, eps)
        else:
            U = Z.T @ (self.alpha[:, None] * V)  # exact if no margin changed side
            if _factor_value(Z, self.U, V, C, eps) < _factor_value(Z, U, V, C, eps):
                U = self.U
        value, self.U, self.alpha, t, steps = _factor_svm_continued(Z, V, C, eps, U)
        self.newton_steps += steps
        return value, t

    def __call__(self, x):
        V, nu = _unit_rows(self._rows(x))
        value, _ = self.svm(V)
        self.n_eval += 1
        GV = -2.0 * self.alpha[:, None] * (self.Z @ self.U)  # Danskin: -2 diag(a) K diag(a) V
        penalty, G_balance = self._balance_terms(V)
        GV += G_balance
        G = _tangent(GV, V, nu)
        return value + penalty, (G if self.free else self.Z.T @ G).ravel()


def _factor_value(Z, U, V, C, eps):
    return float(np.sum(U * U)) + 2.0 * C * float(_huber_hinge(1.0 - _rowdot(Z @ U, V), eps).sum())


def _factor_rank(n, m, rank=None):
    """The columns of ``V`` on the factor path: ``rank``, else ``min(ceil(sqrt(2 n)) + 1, 10)``;
    at most ``m``."""
    return int(min(m, n, rank if rank is not None else min(int(np.ceil(np.sqrt(2 * n))) + 1, 10)))


def _factor_gram(Z, alpha, s, extra=None, block=8192):
    """``B^T Diag(s)^-1 B``, ``sum_i ||b_i||^2 / s_i`` and the number of rows, over the rows with
    ``s_i > 0`` of ``B = [diag(alpha) Z, extra]``, built in row blocks (no n x m copy)."""
    rows = np.flatnonzero(s > 0)
    k = Z.shape[1] + (0 if extra is None else extra.shape[1])
    G, trace = np.zeros((k, k)), 0.0
    for lo in range(0, rows.size, block):
        b = rows[lo:lo + block]
        Bb = alpha[b, None] * Z[b] if extra is None else np.hstack([alpha[b, None] * Z[b], extra[b]])
        Bs = Bb / s[b, None]
        G += Bb.T @ Bs
        trace += float(np.sum(Bb * Bs))
    return (G + G.T) / 2.0, trace, rows.size


def factor_lower_bound(Z, alpha, l, V, lam=None):
    """Certified lower bound on the SDP value for the kernel ``Z Z^T`` from any ``alpha`` in the box.

    The bound of :func:`sdp_lower_bound`, ``p* >= 2 alpha^T e - e^T s - l ||lam||_1`` whenever
    ``Diag(s) + (lam e^T + e lam^T) / 2 - A A^T`` is PSD, ``A = diag(alpha) Z``, with
    ``s = kappa s0``: ``s0`` the KKT estimate from ``V`` (kept positive), ``kappa`` the least
    scale that makes the matrix PSD. With ``B = [A, lam, e]`` and ``J^-1 = I_m (+) [[0, -2],
    [-2, 0]]``, the matrix is ``kappa Diag(s0) - B J B^T``, which is PSD iff
    ``J^-1 - B^T (kappa Diag(s0))^-1 B`` has as many negative eigenvalues as ``J^-1``
    (Haynsworth's inertia additivity): an ``(m + 2)``-square test, passed with a margin for the
    round-off of forming that matrix (``n eps sum_i ||b_i||^2 / s0_i``). Without balance
    multipliers the rows with ``alpha_i = 0`` drop out and ``J = I_m``. Returns
    ``(lower, kappa)``; O(n m^2) time, no n x n array.
    """
    Z = np.asarray(Z, dtype=float)
    n, m = Z.shape
    alpha = np.asarray(alpha, dtype=float)
    lam = np.zeros(n) if lam is None else np.asarray(lam, dtype=float)
    R = alpha[:, None] * (Z @ (Z.T @ (alpha[:, None] * V)))  # A A^T V, A = diag(alpha) Z
    aa = alpha * alpha * _rowdot(Z, Z)
    if np.any(lam):
        R -= (np.outer(lam, V.sum(axis=0)) + np.outer(np.ones(n), lam @ V)) / 2.0
        s = _rowdot(R, V) / _rowdot(V, V)
        s = np.maximum(s, np.maximum(1e-3 * aa, 1e-12 * max(float(np.mean(np.abs(s))), 1e-300)))
        G, trace, rows = _factor_gram(Z, alpha, s, np.column_stack([lam, np.ones(n)]))
        n_neg, Jinv = 1, np.eye(m + 2)
        Jinv[m:, m:] = [[0.0, -2.0], [-2.0, 0.0]]
    else:
        s = np.where(aa > 0, np.maximum(_rowdot(R, V) / _rowdot(V, V), 1e-3 * aa), 0.0)
        if not np.any(s > 0):
            return float(2.0 * alpha.sum()), 1.0
        G, trace, rows = _factor_gram(Z, alpha, s)
        n_neg, Jinv = 0, np.eye(m)
    if not np.all(np.isfinite(G)):
        return -np.inf, np.inf
    k = G.shape[0]
    # |G - fl(G)| <= gamma_n |B|^T Diag(s0)^-1 |B|, of norm at most gamma_n sum_i ||b_i||^2 / s0_i
    err = (rows + 4) * _EPS * trace + 8 * k * _EPS * float(np.linalg.norm(G))
    kappa = max(float(np.max(np.linalg.eigvals(np.linalg.solve(Jinv, G)).real)), 1e-300)
    step = 1e-12 * kappa + err
    while np.linalg.eigvalsh(Jinv - G / (kappa + step))[n_neg] < err / (kappa + step) + 32 * k * _EPS:
        step *= 10.0
    kappa += step
    return float(2.0 * alpha.sum() - kappa * s.sum() - l * np.abs(lam).sum()), float(kappa)


_EPS = np.finfo(float).eps


def _factor_upper_bound(Z, U, t, C, mix):
    """``omega((1 - mix) V V^T + mix I) <=`` the SVM primal at ``U`` (``t_i = z_i^T U v_i``),
    the identity part's weights ``x_i`` (feature ``sqrt(mix) ||z_i||``) chosen optimally."""
    if mix == 0:
        return float(np.sum(U * U)) + 2.0 * C * float(np.sum(np.maximum(1.0 - t, 0.0)))
    c = 1.0 - np.sqrt(1.0 - mix) * t
    b2 = mix * _rowdot(Z, Z)
    with np.errstate(divide="ignore", invalid="ignore"):  # min_x x^2 + 2 C (c - b x)_+
        best = np.where(C * b2 <= c, 2.0 * C * c - C * C * b2, c * c / b2)
    return float(np.sum(U * U)) + float(np.sum(np.where(c <= 0, 0.0, best)))


def solve_sdp_mmc_factor(Z, C=1.0, balance=0.1, *, rank=None, max_iter=1000, tol=1e-3, check_every=25,
                         random_state=None, smooth=1e-4, coarse=10_000, callback=None):
    """Solve the SDP relaxation for the kernel ``K = Z Z^T`` (``Z``: n x m), with a certified gap.

    For ``M = V V^T`` (unit rows ``v_i``), ``K o M`` has the rows ``phi_i = z_i (x) v_i``, so
    by SVM duality ``omega(V V^T) = min_U ||U||_F^2 + 2 C sum_i (1 - z_i^T U v_i)_+`` over
    ``U`` (m x r). Without active balance rows an optimal ``M`` has ``v_i`` parallel to
    ``U^T z_i`` (the KKT conditions ``s_i v_i = alpha_i U^T z_i``), so ``V`` is taken as the rows
    of ``Z T`` scaled to unit length, ``T`` (m x ``rank``) the variables of L-BFGS, started from
    the leading right singular vectors of ``Z``; if that stalls above ``tol`` (active balance
    rows), L-BFGS continues on ``V`` itself (n x ``rank``). ``omega`` is evaluated with the
    hinge's kink rounded on a band of width ``smooth`` (Newton's method in ``U``; the dual's
    term ``(smooth / C) ||alpha||^2``); its gradient in ``V`` is ``-2 diag(alpha) Z U``
    (Danskin); the balance rows by an augmented Lagrangian, as in
    :func:`solve_sdp_mmc_lowrank`. Every ``check_every`` iterations a certified bracket
    ``lower <= p* <= upper`` for ``Z Z^T``: ``upper`` is the exact hinge primal at ``U`` for a
    feasible ``M`` (``V V^T`` mixed with ``I`` if a balance row is violated), ``lower`` is
    :func:`factor_lower_bound`. Above ``4 coarse`` samples the start is the solution on a
    random tenth (at least ``coarse`` samples, ``C`` scaled by ``n / n_sub``). Memory and time
    per iteration O(n m rank), a certificate O(n m^2); nothing n x n.

    Parameters
    ----------
    Z : ndarray of shape (n, m), the kernel factor, used as given (centre its columns first)
    C : float, the finite box bound (no hard margin)
    balance : float, ``l = floor(balance n)``, which must be at least 2
    rank : int or None, columns of ``V``; ``None`` means ``min(ceil(sqrt(2 n)) + 1, 10)``, at
        most ``m``
    max_iter : int, L-BFGS iterations in total (at this size)
    tol : float, relative gap at which to stop
    check_every : int, iterations between certificates
    random_state : seed of the start's perturbation and of the coarse subsample
    smooth : float, the width of the rounded band of the hinge
    coarse : int, the smallest coarse size
    callback : callable or None, called with each certificate (a dict)

    Returns
    -------
    V : ndarray of shape (n, rank), unit rows
    info : dict as :func:`solve_sdp_mmc_lowrank` (``kappa`` in place of ``tau``), with ``T``,
        ``newton_steps``, ``free_n_iter`` (iterations on ``V`` itself) and ``coarse_n_iter``
        (iterations at the coarser sizes)
    """
    Z = np.asarray(Z, dtype=float)
    n, m = Z.shape
    _check_finite_c(C)
    l = max_imbalance(n, balance)
    p = _factor_rank(n, m, rank)
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    obj = _FactorObjective(Z, float(C), l, p)
    coarse_n_iter = 0
    if n >= 4 * coarse:
        sub = np.sort(rng.choice(n, max(coarse, n // 10), replace=False))
        _, sub_info = solve_sdp_mmc_factor(Z[sub], C * n / sub.size, balance, rank=p, max_iter=max_iter,
                                           tol=tol, check_every=check_every, random_state=rng,
                                           smooth=smooth, coarse=coarse)
        T, obj.U = sub_info["T"], sub_info["U"]
        obj.alpha = np.zeros(n)
        coarse_n_iter = sub_info["n_iter"] + sub_info["coarse_n_iter"]
    else:
        T = eigh(Z.T @ Z, subset_by_index=[m - p, m - 1])[1] + 1e-3 * rng.standard_normal((m, p)) / np.sqrt(m)

    def certify(V):
        mix = _feasible_mix(V, l)
        _, t = obj.svm(V)
        upper = _factor_upper_bound(Z, obj.U, t, C, mix)
        lam = obj.lam_up - obj.lam_lo
        lower, kappa = factor_lower_bound(Z, obj.alpha, l, V, lam)
        if np.any(lam):  # the bound holds for any lam: keep the better of the two
            lower, kappa = max((lower, kappa), factor_lower_bound(Z, obj.alpha, l, V))
        return upper, lower, obj.alpha, mix, {"kappa": kappa}

    if coarse_n_iter:  # started near the optimum: certify sooner
        check_every = max(1, check_every // 5)
    V, info = _certified_lbfgs(obj, T.ravel(), certify, [float(smooth)], max_iter=max_iter, tol=tol,
                               check_every=check_every, callback=callback)
    info.update(T=info.pop("x").reshape(m, p), free_n_iter=0)
    if not info["converged"] and info["n_iter"] < max_iter:  # the family Z T stalled: V itself
        V, info = _continue_free(obj, V, info, certify, smooth=smooth, max_iter=max_iter, tol=tol,
                                 check_every=check_every, callback=callback)
    info.update(U=obj.U, newton_steps=obj.newton_steps, rank=p, l=l, coarse_n_iter=coarse_n_iter,
                solve_time=time.perf_counter() - t0)
    return V, info


def _continue_free(obj, V, info, certify, *, smooth, max_iter, tol, check_every, callback):
    """L-BFGS on ``V`` itself from the best factor of the ``Z T`` family; the better certified
    of the two, with the iterations and certificates of both."""
    obj.free = True
    V_free, free = _certified_lbfgs(obj, V.ravel(), certify, [float(smooth)], tol=tol,
                                    max_iter=max_iter - info["n_iter"], check_every=check_every,
                                    callback=callback)
    free.pop("x")
    counts = {"n_iter": info["n_iter"] + free["n_iter"], "free_n_iter": free["n_iter"],
              "n_eval": free["n_eval"], "history": info["history"] + free["history"]}
    if free["gap"] <= info["gap"]:
        V, info = V_free, {**free, "T": info["T"]}
    info.update(counts)
    return V, info
