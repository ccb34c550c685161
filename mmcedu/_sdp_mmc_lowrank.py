"""The low-rank (Burer-Monteiro) solver of the SDP relaxation of :mod:`mmcedu.sdp_mmc`."""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from .balance import max_imbalance

__all__ = ["solve_sdp_mmc_lowrank", "sdp_lower_bound"]


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


class _BMObjective:
    """``omega(V V^T)`` + augmented Lagrangian of the balance rows, as a function of ``U``."""

    def __init__(self, K, C, l, n, p):
        self.K, self.C, self.l, self.n, self.p = K, C, l, n, p
        self.alpha, self.lam_up, self.lam_lo = np.zeros(n), np.zeros(n), np.zeros(n)
        self.rho, self.smooth = 1.0, 0.0  # the penalty of the balance rows, the QP's smoothing
        self.n_eval = self.qp_iters = 0

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
        m = V @ V.sum(axis=0)  # the balance rows (V V^T) e
        self.lam_up = np.maximum(0.0, self.lam_up + self.rho * (m - self.l))
        self.lam_lo = np.maximum(0.0, self.lam_lo + self.rho * (-m - self.l))
        if np.max(np.abs(m)) > self.l * (1 + 1e-3):
            self.rho = min(self.rho * 4.0, 1e6)


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
    if C is None or not 0 < C < np.inf:
        raise ValueError("solver='lowrank' needs a finite C > 0 (the hard margin C=None is cvxpy only).")
    l = max_imbalance(n, balance)
    p = int(min(n, rank if rank is not None else int(np.ceil(np.sqrt(2 * n))) + 1))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    w, Qe = eigh(K, subset_by_index=[n - p, n - 1])  # start: the p leading eigenpairs, perturbed
    x = (Qe * np.sqrt(np.clip(w, 0.0, None)) + 1e-3 * rng.standard_normal((n, p)) / np.sqrt(n)).ravel()
    obj = _BMObjective(K, float(C), l, n, p)
    kscale = max(float(np.max(np.diag(K))), 1e-300)
    smooth = list(smooth) if smooth else [0.0]
    history, n_iter, best = [], 0, None
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
        stalled = res.nit == 0 and len(history) >= len(smooth)
        if gap <= tol * max(abs(upper), 1.0) or n_iter >= max_iter or stalled:
            break
    gap, V, upper, lower, alpha, mix = best
    rel_gap = gap / max(abs(upper), 1.0)
    return V, {"upper": upper, "lower": lower, "gap": gap, "rel_gap": rel_gap, "alpha": alpha,
               "n_iter": n_iter, "n_eval": obj.n_eval, "qp_iters": obj.qp_iters, "rank": p, "l": l,
               "mix": mix, "converged": bool(rel_gap <= tol), "history": history,
               "solve_time": time.perf_counter() - t0}
