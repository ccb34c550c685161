"""GMMC: generalized maximum margin clustering (Valizadegan & Jin, NIPS 2006, Section 3).

With the kernel ``K``, ``e`` the all-ones vector, labels ``y`` in {-1, +1}^n, margin multipliers
``nu >= 0``, the bias multiplier ``lambda`` and ``z = diag(y)(e + nu)`` (so ``z_i^2 >= 1``), the
hard-margin problem (3) becomes (4)-(5)::

    min_{z, lambda}  (z + lambda e)^T K^-1 (z + lambda e) + C_e (e^T z)^2   s.t. z_i^2 >= 1   (5)

``w = (z; lambda)`` and ``P = (I_n, e)`` give (6), ``w^T A w`` with ``A = P^T K^-1 P + C_e e0 e0^T``
(``e0 = (e; 0)``), whose Lagrangian dual is the LMI (7) (``gamma`` are the paper's lambda_i)::

    max_gamma  sum_i gamma_i   s.t.  A - diag(gamma_1..gamma_n, 0) >= 0,  0 <= gamma_i <= C   (7), (10)

Remark II replaces ``K^-1`` by the normalized Laplacian ``L = I - D^-1/2 K D^-1/2``: degenerate as
printed (``variant="printed"``), since ``L D^1/2 e = 0`` (optimum ``gamma = 0``, labels that
threshold the degree). ``variant="repaired"`` imposes the range condition of the kernel ``L^+``,
``(D^1/2 e)^T (z + lambda e) = 0``, which fixes ``lambda``; ``laplacian="unnormalized"`` uses
``D - K`` (null vector ``e``: both variants coincide). Eliminating ``lambda`` leaves an n x n PSD
matrix ``M`` (:func:`gmmc_matrix`) and the SDP ``min <M, W>`` over ``W >= 0``, ``W_ii >= 1``, with
dual ``max sum(gamma)`` s.t. ``M - diag(gamma) >= 0``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import eigh, qr
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import LabelFreeMixin
from ._cvxpy import solve_cvxpy
from ._gmmc_solver import (
    _default_rank,
    _lambda_min,
    _make_feasible,
    _solve_lowrank_operator,
    certify,
    solve_dual_cvxpy,
    solve_lowrank,
)
from ._validation import (
    all_identical,
    array_bytes,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
)
from .balance import BALANCE_WARN_FRACTION
from .exceptions import BalanceWarning, ClusterCountWarning, DegenerateDataWarning, SolverWarning
from .kernels import (
    check_kernel_matrix,
    check_positive_degree,
    degree,
    gamma_grid,
    kernel_matrix,
    median_gamma,
    normalized_laplacian,
    nystroem_factor,
    rbf_kernel,
    unnormalized_laplacian,
)

__all__ = [
    "contrast_score",
    "learn_kernel_weights",
    "GMMC", "balance_penalty_weight", "certify", "gmmc_matrix", "labels_from_primal",
    "normalized_cut_sweep", "laplacian_matrix", "solve_dual_cvxpy", "solve_lowrank",
]

#: ``balance_penalty="auto"`` is ``AUTO_BALANCE_FACTOR[laplacian] * trace(L) / n^2``.
AUTO_BALANCE_FACTOR = {"normalized": 1.0, "unnormalized": 10.0}
#: ``balance_penalty="stiff"`` is ``STIFF_BALANCE_FACTOR * trace(L) / n^2``.
STIFF_BALANCE_FACTOR = 10.0
#: The octaves of GMMC's label-free width grid, ``gamma_grid(X, octaves=LABEL_FREE_OCTAVES)``.
LABEL_FREE_OCTAVES = (-2, 0, 2, 4, 5, 6, 7, 8)
#: The isolation guard of :meth:`GMMC.objective_contrast`: affinity sum, tolerated fraction.
MIN_AFFINITY, ISOLATED_FRACTION = 0.5, 1 / 2000


# -- The matrices of (6) and of the reduced problem ----------------------------------------------
def laplacian_matrix(K, laplacian="normalized"):
    """The matrix ``L`` that replaces ``K^-1`` (Remark II) and its unit null vector.

    ``"normalized"``: ``I - D^-1/2 K D^-1/2`` and ``D^1/2 e / ||D^1/2 e||``; ``"unnormalized"``:
    ``D - K`` and ``e / sqrt(n)``. Returns ``(L, null)``.
    """
    K = check_kernel_matrix(K)
    if K.shape[0] < 2:
        raise ValueError(f"GMMC needs at least 2 samples; got n_samples={K.shape[0]}.")
    if np.any(K < 0):
        raise ValueError("GMMC builds a graph Laplacian from the kernel, which needs nonnegative "
                         f"affinities; the kernel has a negative entry ({K.min():.3g}). Use the rbf "
                         "kernel or clip K at 0.")
    check_positive_degree(K, "the graph Laplacian of GMMC needs every degree > 0")
    d = degree(K)
    if laplacian == "normalized":
        L = normalized_laplacian(K)
        null = np.sqrt(d)
    elif laplacian == "unnormalized":
        L = unnormalized_laplacian(K)
        null = np.ones(K.shape[0])
    else:
        raise ValueError(f"laplacian must be 'normalized' or 'unnormalized'; got {laplacian!r}.")
    L = (L + L.T) / 2
    return L, null / np.linalg.norm(null)


def _weight(balance_penalty, trace_L, n, laplacian):
    """``C_e`` from the trace of the Laplacian (:func:`balance_penalty_weight`)."""
    if isinstance(balance_penalty, str):
        if balance_penalty not in ("auto", "stiff"):
            raise ValueError("balance_penalty must be a nonnegative number, 'auto' or 'stiff'; "
                             f"got {balance_penalty!r}.")
        if laplacian not in AUTO_BALANCE_FACTOR:
            raise ValueError(f"laplacian must be 'normalized' or 'unnormalized'; got {laplacian!r}.")
        factor = STIFF_BALANCE_FACTOR if balance_penalty == "stiff" else AUTO_BALANCE_FACTOR[laplacian]
        return factor * trace_L / n**2
    if not balance_penalty >= 0:
        raise ValueError(f"balance_penalty must be nonnegative; got {balance_penalty!r}.")
    return float(balance_penalty)


def balance_penalty_weight(balance_penalty, L, *, laplacian="normalized"):
    """The weight ``C_e`` of the penalty ``C_e (e^T z)^2`` of (5) for ``balance_penalty`` as in
    :class:`GMMC` (a number is returned as it is) and the Laplacian ``L`` named by ``laplacian``."""
    return _weight(balance_penalty, float(np.trace(L)), L.shape[0], laplacian)


def _reduce(L, u, laplacian, variant, Ce):
    """``M`` (not symmetrized) and ``b`` of :func:`gmmc_matrix` from ``L`` and its null vector ``u``."""
    n = L.shape[0]
    e = np.ones(n)
    if laplacian == "unnormalized":
        return L + Ce * np.outer(e, e), -e / n
    Le = L @ e
    eLe = float(e @ Le)
    if variant == "printed":
        return L + Ce * np.outer(e, e) - np.outer(Le, Le) / eLe, -Le / eLe
    b = -u / float(u @ e)
    # Pi = I + e b^T maps z to z + lambda e with lambda = b^T z; expand Pi^T L Pi in O(n^2)
    return L + np.outer(b, Le) + np.outer(Le, b) + eLe * np.outer(b, b) + Ce * np.outer(e, e), b


def gmmc_matrix(K, *, laplacian="normalized", variant="repaired", balance_penalty="auto"):
    """The reduced n x n matrix ``M`` (bias eliminated) and the bias map ``lambda = b^T z``.

    ``variant="printed"``: ``lambda`` minimizes ``w^T A w`` (Schur complement of ``A``).
    ``variant="repaired"``: ``lambda`` meets the range condition ``u^T (z + lambda e) = 0`` (``u``
    the null vector of ``L``), so ``M = Pi^T L Pi + C_e e e^T`` with ``Pi = I - e u^T / (u^T e)``.
    For the unnormalized Laplacian both give ``M = (D - K) + C_e e e^T`` (``b = -e / n`` centres
    ``z``). ``balance_penalty`` as in :class:`GMMC`. Returns ``(M, b)``, ``M`` symmetric PSD.
    """
    if variant not in ("printed", "repaired"):
        raise ValueError(f"variant must be 'printed' or 'repaired'; got {variant!r}.")
    L, u = laplacian_matrix(K, laplacian)
    Ce = balance_penalty_weight(balance_penalty, L, laplacian=laplacian)
    M, b = _reduce(L, u, laplacian, variant, Ce)
    return (M + M.T) / 2, b


def labels_from_primal(W=None, V=None):
    """Labels ``sign(w)`` in {0, 1} from the leading eigenvector ``w`` of the primal matrix ``W = V V^T``
    (its sign chosen so that sample 0 gets label 0). Returns ``(labels, w)``."""
    if V is not None:
        Uv, sv, _ = np.linalg.svd(np.asarray(V, dtype=float), full_matrices=False)
        w = Uv[:, 0] * sv[0]
    else:
        vals, vecs = np.linalg.eigh((np.asarray(W, dtype=float) + np.asarray(W).T) / 2)
        w = vecs[:, -1] * np.sqrt(max(vals[-1], 0.0))
    if w[0] > 0:
        w = -w
    return (w > 0).astype(int), w


# -- The reduced matrix through a low-rank kernel factor (GMMC(n_components=...)) ----------------
class _LowRankMatrix:
    """The reduced matrix ``M`` ("repaired", normalized Laplacian) of the kernel ``Phi Phi^T``.

    With ``d = Phi (Phi^T e)`` and ``B = D^-1/2 Phi``, ``M = I - G H G^T``, ``G = [Pi^T B, e, b]``
    (n x (r + 2)): ``M V`` costs O(n r p), the spectrum is exact from a thin QR of ``G``, and
    ``lambda_min(M - diag(gamma)) >= t`` is an (r + 2) x (r + 2) eigenproblem (:meth:`secular_step`).
    Repairs: a degree below its self-affinity (Nystroem affinities can be negative) adds to every
    pair the smallest uniform affinity ``tau / n`` with which each point's affinity to the others
    is at least its self-affinity (no point isolated); eigenvalues of
    ``D^-1/2 K D^-1/2`` above 1 are clipped (``clip``, ``n_clipped``). ``b``: the bias map.
    """

    def __init__(self, Phi, *, Ce="auto"):
        Phi = np.asarray(Phi, dtype=float)
        n = Phi.shape[0]
        e = np.ones(n)
        d = Phi @ (Phi.T @ e)
        self_aff = np.einsum("ij,ij->i", Phi, Phi)
        self.tau = 0.0
        if np.max(self_aff - d) > 0 or np.min(d) <= 0:
            # smallest uniform affinity tau / n with which every point's affinity to the others is at
            # least its self-affinity: d_i + tau >= 2 (K_ii + tau / n); with only d_i + tau >= K_ii,
            # the worst point is isolated and M gets a spurious null vector spread over all points
            tau = (max(float(np.max(2 * self_aff - d)), 0.0) * n / (n - 2) if n > 2
                   else max(float(np.max(self_aff - d)), 0.0) * n / (n - 1))
            tau = tau * (1 + 1e-12) + 1e-300
            if np.min(d + tau) <= 0:  # only if some Phi_i = 0 and d_i = 0: any tau > 0 works
                tau += 1e-12 * max(float(np.mean(np.abs(d))), 1e-300)
            Phi = np.hstack([Phi, np.full((n, 1), np.sqrt(tau / n))])
            d = d + tau
            self.tau = tau
        B = Phi / np.sqrt(d)[:, None]
        w, Q = eigh(B.T @ B)
        self.clip = float(w[-1] - 1.0)
        self.n_clipped = int(np.sum(w > 1.0 + 1e-10))
        if self.n_clipped:
            scale = np.zeros_like(w)
            pos = w > 1e-300
            scale[pos] = np.sqrt(np.minimum(w[pos], 1.0) / w[pos])
            B = B @ (Q * scale)
            w = np.minimum(w, 1.0)
        u = np.sqrt(d)
        u = u / np.linalg.norm(u)
        b = -u / float(u @ e)
        self.Ce = _weight(Ce, n - float(np.sum(np.clip(w, 0.0, None))), n, "normalized")
        self.n, self.b = n, b
        # M = Pi^T (I - B B^T) Pi + Ce e e^T = I - G H G^T, with G = [Pi^T B, e, b] (columns
        # e / sqrt(n) and b / ||b|| scaled to unit norm) and Pi^T B = B + b (e^T B)
        nb = float(np.linalg.norm(b))
        B += np.outer(b, B.sum(axis=0))
        self.G = np.hstack([B, (e / np.sqrt(n))[:, None], (b / nb)[:, None]])
        k = self.k = self.G.shape[1]
        self.H = np.zeros((k, k))
        self.H[: k - 2, : k - 2] = np.eye(k - 2)
        self.H[k - 2 :, k - 2 :] = -np.array([[self.Ce * n, np.sqrt(n) * nb], [np.sqrt(n) * nb, n * nb * nb]])
        self._eig = None  # (values of G H G^T, Q, W) from the thin QR, computed on demand
        self.n_matvec = 0

    def matvec(self, V):
        """``M V = V - G (H (G^T V))`` in O(n r p) for ``V`` of shape (n,) or (n, p)."""
        V = np.asarray(V, dtype=float)
        self.n_matvec += 1 if V.ndim == 1 else V.shape[1]
        return V - self.G @ (self.H @ (self.G.T @ V))

    def _spectrum(self):
        if self._eig is None:
            Qg, R = qr(self.G, mode="economic", check_finite=False)
            S = R @ self.H @ R.T
            nu, W = eigh((S + S.T) / 2)
            self._eig = (nu, Qg, W)
        return self._eig

    def lambda_min(self):
        """Exact ``lambda_min(M)`` (``1 - lambda_max(G H G^T)``; 1 has multiplicity n - k)."""
        nu, _, _ = self._spectrum()
        lo = 1.0 - float(nu[-1])
        return min(lo, 1.0) if self.n > self.k else lo

    def bottom_eigvecs(self, p):
        """The ``p`` smallest eigenvalues of ``M`` and their eigenvectors (at most ``k``)."""
        nu, Qg, W = self._spectrum()
        p = int(min(p, self.k))
        return 1.0 - nu[::-1][:p], Qg @ W[:, ::-1][:, :p]

    def secular_step(self, gamma, t):
        """Exact PSD test of ``M - diag(gamma) - t I`` for ``t < min(1 - gamma)``, and a Ritz vector.

        With ``A = (1 - t) I - diag(gamma) > 0``: ``A - G H G^T >= 0`` iff ``nu_max =
        lambda_max(X^1/2 H X^1/2) <= 1``, ``X = G^T A^-1 G`` (congruence with ``A^-1/2``). Else the
        top eigenvector ``z`` gives ``x = A^-1 G H X^1/2 z``, one shift-and-invert step. O(n r^2).
        Returns ``(nu_max, x)``; ``(inf, None)`` when ``t >= min(1 - gamma)``.
        """
        a = 1.0 - np.asarray(gamma, dtype=float) - t
        if not np.all(a > 0):
            return np.inf, None
        Ga = self.G / a[:, None]
        X = self.G.T @ Ga
        xv, Wx = eigh((X + X.T) / 2)
        Xh = (Wx * np.sqrt(np.clip(xv, 0.0, None))) @ Wx.T
        T = Xh @ self.H @ Xh
        nu, Z = eigh((T + T.T) / 2)
        return float(nu[-1]), Ga @ (self.H @ (Xh @ Z[:, -1]))


# -- The normalized cut of an embedding, and the objective's chance level ----------------------
def normalized_cut_sweep(K, z, *, block=256):
    """The best normalized cut among the ``n - 1`` threshold splits of an embedding ``z``.

    For every split of the samples sorted by ``z`` into the first ``j`` and the last ``n - j``:
    Shi and Malik's ``cut(A, B) / vol(A) + cut(A, B) / vol(B)`` of the nonnegative symmetric
    affinity ``K`` (``vol`` the sum of degrees). Unlike the balance penalty of (5), it does not
    prefer equal sizes. Time O(n^2), memory O(block n) (``block`` rows of ``K`` at a time).
    Returns ``(labels, ncut)``: label 1 for the samples above the best threshold, and its cut.
    """
    K = np.asarray(K, dtype=float)
    z = np.asarray(z, dtype=float)
    n = z.shape[0]
    order = np.argsort(z, kind="stable")
    d = K.sum(axis=1)[order]
    # the cut grows by (degree - self-affinity) and shrinks by twice the affinities to the
    # samples already on the left: delta_i = d_i - K_ii - 2 sum_{a < i} K_ia (sorted order)
    left = np.empty(n)
    for start in range(0, n, block):
        rows = order[start:start + block]
        Kb = K[rows][:, order]
        idx = np.arange(start, start + len(rows))
        mask = np.arange(n)[None, :] < idx[:, None]
        left[start:start + len(rows)] = np.sum(Kb * mask, axis=1)
    diag = np.diag(K)[order]
    cut = np.cumsum(d - diag - 2.0 * left)[:-1]
    vol_a = np.cumsum(d)[:-1]
    vol_b = d.sum() - vol_a
    with np.errstate(divide="ignore", invalid="ignore"):
        ncut = cut / vol_a + cut / vol_b
    ncut = np.where(np.isfinite(ncut), ncut, np.inf)
    j = int(np.argmin(ncut)) + 1
    labels = np.zeros(n, dtype=int)
    labels[order[j:]] = 1
    return labels, float(ncut[j - 1])


def _mean_cut(M):
    """``tr(H M H) / (n - 1)``, ``H = I - e e^T / n`` (:meth:`GMMC.objective_contrast`)."""
    Mc = M - M.mean(axis=0)[None, :] - M.mean(axis=1)[:, None] + M.mean()
    return float(np.trace(Mc)) / (M.shape[0] - 1)


# -- Estimator -----------------------------------------------------------------------------------
def _warn_degenerate_kernel(K, gamma, *, stacklevel):
    """Warn when the kernel is numerically the identity or all ones (to within 1e-8)."""
    n = K.shape[0]
    off = K - np.diag(np.diag(K))
    if float(np.max(off.sum(axis=1))) < 1e-8:
        msg = (f"GMMC: the rbf kernel at gamma={gamma:.3g} is numerically the identity: every "
               "sample is isolated from all others and every split looks alike. Use a smaller "
               "gamma (gamma=None is the median heuristic) or standardize X.")
    elif float(np.min(off + np.eye(n))) > 1 - 1e-8:
        msg = (f"GMMC: the rbf kernel at gamma={gamma:.3g} is numerically all ones: every "
               "sample looks like every other and the split is decided by rounding. Use a "
               "larger gamma (gamma=None is the median heuristic) or standardize X.")
    else:
        return
    warnings.warn(msg, DegenerateDataWarning, stacklevel=stacklevel)


def _penalty_of(balance_penalty, K, laplacian):
    """:func:`balance_penalty_weight` from the kernel without forming ``L`` (its trace only)."""
    d = K.sum(axis=1)
    diag = np.diag(K)
    trace = float(np.sum(1.0 - diag / d)) if laplacian == "normalized" else float(np.sum(d - diag))
    return _weight(balance_penalty, trace, K.shape[0], laplacian)


def contrast_score(M, value=None, K=None, *, min_affinity=1.0, **lowrank_options):
    """Relaxed margin objective ``value`` of ``M`` relative to that of an average balanced cut.

    ``value / (n avg)`` with ``avg = trace(H M H) / (n - 1)`` (``H = I - e e^T / n``), as in
    :meth:`mmcedu.GMMC.objective_contrast` (``1 -`` this score). Small means that the best (relaxed)
    balanced partition is much better than a random one. ``value=None``: solved by
    :func:`mmcedu.gmmc.solve_lowrank` with ``lowrank_options``. With the kernel ``K`` given,
    ``inf`` when some sample's affinities to the others sum to less than ``min_affinity`` (the
    isolation guard; 1 as in the kernel choice published in chapter 03).
    """
    M = np.asarray(M, dtype=float)
    if K is not None:
        K = np.asarray(K, dtype=float)
        if np.min(K.sum(axis=1) - np.diag(K)) < min_affinity:
            return np.inf
    if value is None:
        _, info = solve_lowrank(M, **lowrank_options)
        value = info["primal"]
    return value / (M.shape[0] * _mean_cut(M))


def learn_kernel_weights(
    Ks, *, method="printed", laplacian="normalized", variant="repaired", balance_penalty="auto",
    C=1e5, cvxpy_solver=None, solver_options=None, random_state=0,
):
    """Weights ``beta`` of a combination of the m kernel matrices ``Ks``, without labels.

    ``method="printed"``: problem (12) of the paper, ``max_{gamma, beta} sum(gamma)`` s.t.
    ``sum_k beta_k M_k - diag(gamma) >= 0``, ``0 <= gamma <= C``, ``beta`` in the simplex (cvxpy
    with ``cvxpy_solver`` and ``solver_options``, CLARABEL by default; small n). Maximizing the
    relaxed objective over the kernel picks the flattest (widest) kernel. ``"contrast"``:
    ``min_beta max_gamma`` with every ``M_k`` scaled to unit average cut (trace normalization, as
    in supervised kernel learning); the inner value is concave in ``beta``, so the minimum is at a
    vertex: the single kernel with the smallest :func:`contrast_score` (low-rank solves seeded by
    ``random_state``). The ``M_k`` are the reduced matrices of ``laplacian``, ``variant`` and
    ``balance_penalty`` (as in :class:`mmcedu.GMMC`): (12) combines the Laplacians.

    Returns
    -------
    beta : ndarray (m,)
    info : dict (``scores`` for ``"contrast"``, ``gamma`` and ``stats`` for ``"printed"``)
    """
    Ms = [gmmc_matrix(K, laplacian=laplacian, variant=variant, balance_penalty=balance_penalty)[0]
          for K in Ks]
    m = len(Ms)
    if m == 0:
        raise ValueError("learn_kernel_weights needs at least one kernel matrix.")
    if method == "printed":
        import cvxpy as cp

        beta, gamma = cp.Variable(m, nonneg=True), cp.Variable(Ms[0].shape[0])
        cons = [sum(beta[k] * Ms[k] for k in range(m)) - cp.diag(gamma) >> 0,
                gamma >= 0, gamma <= C, cp.sum(beta) == 1]
        stats = solve_cvxpy(cp.Problem(cp.Maximize(cp.sum(gamma)), cons), cvxpy_solver, default="CLARABEL",
                            what="kernel learning (12)", solver_options=solver_options)
        b = np.clip(np.asarray(beta.value, dtype=float), 0, None)
        return b / b.sum(), {"gamma": np.asarray(gamma.value), "stats": stats}
    if method == "contrast":
        scores = np.array([contrast_score(M, K=K, random_state=random_state) for M, K in zip(Ms, Ks)])
        if not np.isfinite(scores).any():
            raise ValueError("Every kernel leaves some sample nearly isolated (affinities to the others "
                             "sum to < 1); add wider kernels.")
        b = np.zeros(m)
        b[int(np.argmin(scores))] = 1.0
        return b, {"scores": scores}
    raise ValueError(f"method must be 'printed' or 'contrast'; got {method!r}.")


class GMMC(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """Generalized maximum margin clustering (two clusters), Valizadegan & Jin (2006).

    Solves the semidefinite relaxation whose dual is (7) (hard margin) or (10) (soft margin) of
    [1]_, with ``K^-1`` replaced by a graph Laplacian of the kernel (Remark II; the mathematics is
    in :mod:`mmcedu.gmmc`), and labels the samples by the signs of the leading eigenvector of the
    primal matrix ``W`` (that of the zero eigenvalue of (7) is unstable when the relaxation is not
    tight).

    Parameters
    ----------
    C : float, default=1e5
        Inverse regularization: the upper bound of the dual coefficients, ``0 <= gamma_i <= C`` in
        (10) (soft margin); the paper's 100,000 makes the margin hard in practice.
    balance_penalty : float, "auto" or "stiff", default="auto"
        The paper's ``C_e`` of the penalty ``C_e (e^T z)^2`` in (5): it removes the invariance
        ``z -> z + t e`` of (4) and keeps the one-cluster labeling ``z = e`` (relaxed objective
        ``C_e n^2``) from winning. A penalty weight (``e^T z = sum_i y_i (1 + nu_i)`` mixes labels and
        multipliers), not the fraction ``balance`` of :class:`SDPMMC` and :class:`EMMC`. ``"auto"``:
        ``c trace(L) / n^2``, ``c = AUTO_BALANCE_FACTOR[laplacian]`` (1 for the normalized Laplacian:
        ``e`` gets the mean eigenvalue of ``L``; 10 for the unnormalized one); when this gives one
        cluster (tiny data) the fit is repeated with ``"stiff"``: ``10 trace(L) / n^2``, which acts like
        the exact constraint ``e^T z = 0`` (the paper's ``C_e = 10,000`` without its ill-conditioning).
        A stiffer weight moves samples of overlapping classes towards equal sizes.
    laplacian : {"normalized", "unnormalized"}, default="normalized"
        ``I - D^-1/2 K D^-1/2`` (Remark II) or ``D - K``.
    variant : {"repaired", "printed"}, default="repaired"
        With the range condition of the kernel ``L^+``, or (7) as printed (degenerate with the
        normalized Laplacian: the labels threshold the degree).
    kernel : {"rbf", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is an n x n nonnegative PSD affinity matrix.
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``; ``None``: the median heuristic
        :func:`mmcedu.kernels.median_gamma`. Ignored with ``kernel="precomputed"``.
    solver : {"auto", "lowrank", "cvxpy"}, default="auto"
        Algorithm. ``"lowrank"`` (``"auto"``): Burer-Monteiro [2]_ + L-BFGS with a certified
        duality gap (:func:`certify`), O(n^2 rank) per iteration. ``"cvxpy"``: the dual (10) by an
        interior-point method, whose time grows like n^5.
    cvxpy_solver : str or None, default=None
        cvxpy back end for ``solver="cvxpy"``; ``None`` means CLARABEL.
    solver_options : dict or None, default=None
        Passed to the back end (keyword arguments of ``cvxpy.Problem.solve``); ``solver="cvxpy"`` only.
    rank : int, default=None
        Rank bound of the low-rank solution: the columns of the factor ``V`` of the primal matrix
        ``W = V V^T``; ``None`` means ``min(ceil(sqrt(2 n)) + 1, 10)``.
    n_components : int or None, default=None
        Rank of a kernel approximation. ``None``: the exact n x n kernel. ``r``: the Nystroem factor
        ``K ~ Phi Phi^T`` with ``r`` landmarks (:func:`mmcedu.kernels.nystroem_factor`): no n x n
        array, O(n r rank) per preconditioned L-BFGS iteration, and a gap certified for the
        relaxation of the approximated kernel (its repairs are reported in ``solver_info_``; a
        clipped eigenvalue also warns). Only
        with ``kernel="rbf"``, ``solver="auto"``/``"lowrank"``, ``laplacian="normalized"`` and
        ``variant="repaired"``.
    max_iter : int, default=5000
        Maximum number of L-BFGS iterations of the low-rank solver.
    tol : float, default=1e-4
        Stop when the certified duality gap ``duality_gap_ <= tol * max(objective_, 1)``.
    random_state : int, RandomState instance or None, default=None
        Seed of the low-rank solver's starting point.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in {0, 1}.
    n_clusters_ : int
        Number of clusters in ``labels_`` (2).
    objective_ : float
        Optimal value of the relaxation: ``sum(gamma)`` of (7)/(10) with ``solver="cvxpy"``, else
        the primal value ``<M, V V^T>``.
    duality_gap_ : float
        Certified bound ``>= 0`` on the distance of ``objective_`` from the optimum.
    dual_coef_ : ndarray of shape (n_samples,)
        Dual-feasible multipliers ``gamma`` of (7)/(10) (the paper's ``lambda_i``).
    gamma_ : float or None
        The RBF parameter used (``None`` for a precomputed kernel).
    z_ : ndarray of shape (n_samples,)
        Leading eigenvector of the primal matrix (scaled): ``labels_ = (z_ > 0)``.
    n_iter_ : int
        Iterations of the solver (L-BFGS, or the cvxpy back end's ``num_iters``).
    balance_penalty_ : float or None
        The weight ``C_e`` used (``None`` for identical samples: no solve).
    balance_decided_ : int or None
        Samples the balance penalty decided: how many the best normalized cut of ``z_``
        (:func:`normalized_cut_sweep`) moves to a less balanced split (``None`` with ``n_components``).
    solver_info_ : dict
        ``solver``, ``n_iter``, time and status; the low-rank solver's ``primal``, ``lower``,
        ``gap`` and ``rank``; with ``n_components`` also ``tau``, ``clip``, ``n_clipped`` and ``n_matvec``.
    n_features_in_ : int

    Raises
    ------
    MemoryBudgetError
        When :meth:`memory_bytes` exceeds ``mmcedu.get_config()["memory_budget"]`` (before allocating).
    ValueError
        Data whose squared distances overflow or underflow float64; ``balance_penalty=0``.

    Warns
    -----
    * :class:`sklearn.exceptions.ConvergenceWarning`: the certified duality gap is above ``tol``.
    * :class:`~mmcedu.exceptions.DegenerateDataWarning`: all samples are identical (one cluster),
      or the rbf kernel is numerically the identity or all ones, or (``n_components``) the Nystroem
      factor needed an eigenvalue clipped at 1 (the relaxation can then be degenerate).
    * :class:`~mmcedu.exceptions.ClusterCountWarning`: the labels form one cluster.
    * :class:`~mmcedu.exceptions.BalanceWarning`: ``balance_decided_ >= 0.05 n`` (``BALANCE_WARN_FRACTION``).
    * :class:`~mmcedu.exceptions.SolverWarning`: ``solver="cvxpy"`` on more than 50 samples.
    * ``UserWarning``: ``variant="printed"`` with the normalized Laplacian (degenerate).

    See Also
    --------
    SDPMMC : the SDP relaxation with n^2 unknowns that GMMC improves on.

    Notes
    -----
    GMMC is a two-cluster method (the relaxation lifts a +-1 labeling; the paper's multi-class
    extension is not implemented), so it has no ``n_clusters``; :class:`UMCRLS` and :class:`EMMC`
    cluster into ``k > 2`` clusters.

    Label-free rule (:meth:`label_free_rule`): of the widths ``2^j median_gamma(X)``, ``j`` in
    ``LABEL_FREE_OCTAVES = (-2, 0, 2, 4, ..., 8)`` (GMMC needs narrow kernels), the one with the
    largest :meth:`objective_contrast` (the relaxed optimum relative to a random balanced cut).

    References
    ----------
    .. [1] H. Valizadegan and R. Jin. Generalized maximum margin clustering and unsupervised
       kernel learning. NIPS 19, 2006. Equations (3)-(7), (10), Remark II, Theorem 1.
    .. [2] S. Burer and R. D. C. Monteiro. A nonlinear programming algorithm for solving
       semidefinite programs via low-rank factorization. Math. Programming 95, 2003.

    Examples
    --------
    >>> from mmcedu import GMMC, datasets, metrics
    >>> X, y = datasets.two_circles(100, random_state=0)
    >>> model = GMMC(gamma=20.0, random_state=0).fit(X)
    >>> metrics.clustering_error(y, model.labels_), model.duality_gap_ >= 0
    (0.0, True)
    """

    _label_free_criterion = ("objective",)
    _label_free_tolerance = 0.0

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "balance_penalty": [Interval(numbers.Real, 0, None, closed="left"),
                            StrOptions({"auto", "stiff"})],
        "laplacian": [StrOptions({"normalized", "unnormalized"})],
        "variant": [StrOptions({"printed", "repaired"})],
        "kernel": [StrOptions({"rbf", "precomputed"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "solver": [StrOptions({"auto", "lowrank", "cvxpy"})],
        "cvxpy_solver": [str, None],
        "solver_options": [dict, None],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, C=1e5, balance_penalty="auto", laplacian="normalized", variant="repaired",
        kernel="rbf", gamma=None, solver="auto", cvxpy_solver=None, solver_options=None,
        rank=None, n_components=None, max_iter=5000, tol=1e-4, random_state=None,
    ):
        self.C = C
        self.balance_penalty = balance_penalty
        self.laplacian = laplacian
        self.variant = variant
        self.kernel = kernel
        self.gamma = gamma
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.solver_options = solver_options
        self.rank = rank
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _label_free_grid(self, X):
        return {"gamma": gamma_grid(X, octaves=LABEL_FREE_OCTAVES)}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        ``1 - J* / (n avg)``: ``J* = objective_``, the optimum of the relaxation, and
        ``avg = tr(H M H) / (n - 1)`` (``H = I - e e^T / n``), the mean of ``z^T M z / ||z||^2``
        over random ``z`` orthogonal to ``e``: the exact value per sample of a random balanced cut
        (``M``: the fitted reduced matrix without ``C_e e e^T``, which ``H`` annihilates). 0: no
        better than chance; 1: a cut of value 0; a ratio, as the raw optimum changes with the width.
        NaN when ``n < 3``, ``avg <= 0``, or more than ``n / 2000`` samples are isolated: their
        affinities to the others sum to ``s < 0.5`` (the guard). Such a sample's row of ``L`` has
        l1 norm at most ``2 s`` (unit kernel diagonal): nearly a component of its own, it weighs
        little on ``J*`` and ``avg``; as the width shrinks all become so and the ratio tends to
        0/0. A fraction, not the least affinity sum, which changes with the draw and tends to 0 as
        n grows: the fraction estimates a property of the distribution at this width.

        ``X``: the data of the fit (the kernel for ``kernel="precomputed"``); ``random_state`` is ignored.
        """
        check_is_fitted(self, "objective_")
        K = np.asarray(X, dtype=float) if self.gamma_ is None else rbf_kernel(X, gamma=self.gamma_)
        n = K.shape[0]
        if n < 3 or np.sum(K.sum(axis=1) - np.diag(K) < MIN_AFFINITY) > ISOLATED_FRACTION * n:
            return np.nan
        L, u = laplacian_matrix(K, self.laplacian)
        avg = _mean_cut(_reduce(L, u, self.laplacian, self.variant, 0.0)[0])
        return float(1.0 - float(self.objective_) / (n * avg)) if avg > 0 else np.nan

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once (an int).

        The exact kernel: six n x n float64 arrays (kernel, Laplacian, reduced matrix, eigensolver
        copies), ``48 n^2``; ``solver="cvxpy"`` adds the dense PSD-cone block, ``8 (n (n + 1) / 2)^2``.
        ``n_components = r``: ``8 n (5 (r + 3) + 20 (rank + 1) + 10 rank)`` (factors of n x (r + 3),
        one of them the certificate's while L-BFGS holds its pairs, and the solver's n x rank
        arrays). ``n_features`` does not enter.
        """
        n = int(n_samples)
        if self.n_components is not None:
            r = int(self.n_components)
            p = int(self.rank) if self.rank is not None else _default_rank(n)
            return 8 * n * (5 * (r + 3) + 2 * 10 * (p + 1) + 10 * p)
        m = n * (n + 1) // 2 if self.solver == "cvxpy" else 0
        return array_bytes((6, n, n), (m, m))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` of shape (n_samples, n_features), or the precomputed kernel ``X`` of shape
        (n_samples, n_samples), into two clusters; ``y`` is ignored. Returns ``self``."""
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        check_n_clusters(n, 2)
        self._check_options(n)
        if self.kernel != "precomputed":
            check_scale(X)
            if all_identical(X):
                warnings.warn(f"GMMC: all {n} samples are identical; there is no cluster structure and "
                              "every split would be arbitrary, so all samples get label 0 (one cluster).",
                              DegenerateDataWarning, stacklevel=3)
                return self._fit_one_cluster(n)
        self._check_memory(n)
        fit_path = self._fit_dense if self.n_components is None else self._fit_nystroem
        self._penalty = self.balance_penalty
        fit_path(X, check_random_state(self.random_state))
        if self.balance_penalty == "auto" and self.n_clusters_ < 2:  # "stiff" always splits
            self._penalty = "stiff"
            fit_path(X, check_random_state(self.random_state))
        self._warn_doubtful()
        return self

    def _check_options(self, n):
        if not isinstance(self.balance_penalty, str) and self.balance_penalty == 0:
            raise ValueError("balance_penalty=0 removes the penalty C_e (e^T z)^2, the only term of (5) "
                             "that keeps the relaxation from putting every sample in one cluster. Use "
                             "balance_penalty='auto' (the default) or a positive number.")
        if self.variant == "printed" and self.laplacian == "normalized":
            warnings.warn("GMMC(variant='printed', laplacian='normalized') solves (7) as printed, which is "
                          "degenerate: the optimum is gamma = 0 and the labels threshold the degree, not a "
                          "margin. Use variant='repaired' (the default) or laplacian='unnormalized'.",
                          UserWarning, stacklevel=4)
        if self.n_components is None:
            return
        bad = [text for text, wrong in [
            ("kernel='precomputed' (the factor is built from X)", self.kernel == "precomputed"),
            ("solver='cvxpy'", self.solver == "cvxpy"),
            (f"laplacian={self.laplacian!r}", self.laplacian != "normalized"),
            (f"variant={self.variant!r}", self.variant != "repaired")] if wrong]
        if bad:
            raise ValueError("n_components (the Nystroem low-rank path) supports only kernel='rbf', "
                             "solver='auto'/'lowrank', laplacian='normalized' and variant='repaired'; "
                             f"got {', '.join(bad)}. Set n_components=None for the exact kernel.")
        if self.n_components > n:
            raise ValueError(f"n_components={self.n_components} exceeds n_samples={n}: the Nystroem "
                             "factor has at most one landmark per sample.")

    def _check_memory(self, n):
        if self.n_components is not None:
            what = f"GMMC(n_components={self.n_components})"
            alternative = "Lower n_components or rank, or fit a subsample."
        elif self.solver == "cvxpy":
            what = "GMMC(solver='cvxpy') (the interior-point solver's dense PSD-cone block)"
            alternative = "Use solver='lowrank' (the default), n_components for large n, or fewer samples."
        else:
            what = "GMMC on the exact kernel (about six n x n float64 arrays)"
            alternative = "Pass n_components=300 (a Nystroem factor, no n x n array) or fit a subsample."
        check_memory(self.memory_bytes(n), what=f"{what} for n = {n:,}", alternative=alternative)
        if self.solver == "cvxpy" and n > 50:
            warnings.warn(f"GMMC(solver='cvxpy') on n_samples={n}: the interior-point solve grows like n^5 "
                          "(minutes past n = 100) and Ctrl-C waits for it. Use solver='lowrank' (the "
                          "default, with a certified duality gap) for more than 50 samples.",
                          SolverWarning, stacklevel=4)

    def _rbf(self, X):
        """The rbf kernel of ``X`` at ``gamma_`` (finite, or an error), with the degenerate-width warning."""
        K = kernel_matrix(X, "rbf", self.gamma_)
        _warn_degenerate_kernel(K, self.gamma_, stacklevel=6)
        return K

    def _fit_dense(self, X, rng):
        if self.kernel == "precomputed":
            K = check_kernel_matrix(X, psd=True)
            self.gamma_ = None
        else:
            self.gamma_ = median_gamma(X) if self.gamma is None else float(self.gamma)
            K = self._rbf(X)
        M, _ = gmmc_matrix(K, laplacian=self.laplacian, variant=self.variant, balance_penalty=self._penalty)
        self.balance_penalty_ = _penalty_of(self._penalty, K, self.laplacian)
        if self.solver == "cvxpy":
            labels, z = self._solve_cvxpy(M)
        else:
            V, info = solve_lowrank(M, C=self.C, rank=self.rank, random_state=rng, max_iter=self.max_iter,
                                    gap_tol=self.tol)
            labels, z = labels_from_primal(V=V)
            self._set_solution(info)
        del M
        self._set_labels(labels, z)
        self._check_balance(K)

    def _solve_cvxpy(self, M):
        gamma, W, stats = solve_dual_cvxpy(M, C=self.C, cvxpy_solver=self.cvxpy_solver,
                                           solver_options=self.solver_options)
        labels, z = labels_from_primal(W=W)
        # certify the cvxpy answer as the low-rank one: the dual point made exactly feasible
        g = np.clip(gamma, 0, self.C)
        g = _make_feasible(g, _lambda_min(M - np.diag(g)), None, lambda: _lambda_min(M), shifts=0)
        primal = float(np.sum(M * W)) + self.C * float(np.sum(np.clip(1 - np.diag(W), 0, None)))
        self.objective_ = float(np.sum(g))
        self.duality_gap_ = max(primal - self.objective_, 0.0)
        self.dual_coef_ = g
        n_iter = stats.get("num_iters", stats.get("n_iter"))
        self.solver_info_ = dict(stats, n_iter=int(n_iter) if n_iter is not None else 1)
        return labels, z

    def _fit_nystroem(self, X, rng):
        n = X.shape[0]
        self.gamma_ = median_gamma(X) if self.gamma is None else float(self.gamma)
        # the degenerate-width test on a subsample (no n x n array)
        self._rbf(X if n <= 500 else X[np.sort(check_random_state(0).choice(n, 500, replace=False))])
        Phi, _ = nystroem_factor(X, int(self.n_components), gamma=self.gamma_, random_state=rng)
        check_finite_result(Phi, what="The Nystroem factor of the rbf kernel",
                            hint="standardize X (sklearn.preprocessing.StandardScaler) or change gamma.")
        Mop = _LowRankMatrix(Phi, Ce=self._penalty)
        self.balance_penalty_ = float(Mop.Ce)
        if Mop.n_clipped:
            warnings.warn(
                f"GMMC: the Nystroem factor's normalized kernel has {Mop.n_clipped} eigenvalue(s) above 1 "
                "(negative affinities), clipped to 1; the reduced matrix then has a null vector and the "
                "relaxation's optimum can drop to 0, with labels that mean nothing. Use more "
                "n_components or a smaller gamma (a wider kernel).", DegenerateDataWarning, stacklevel=3)
        del Phi
        p = int(self.rank) if self.rank is not None else _default_rank(n)
        V, info = _solve_lowrank_operator(Mop, C=self.C, rank=p, random_state=rng, max_iter=self.max_iter,
                                          gap_tol=self.tol, check_every=300)
        labels, z = labels_from_primal(V=V)
        self._set_solution(
            info, solver="lowrank-nystroem", n_components=int(self.n_components), tau=Mop.tau,
            clip=Mop.clip, n_clipped=Mop.n_clipped, balance_penalty=Mop.Ce,
            memory_estimate=format_bytes(self.memory_bytes(n)),
        )
        self._set_labels(labels, z)
        self.balance_decided_ = None

    def _set_solution(self, info, **extra):
        self.objective_ = info["primal"]
        self.duality_gap_ = info["gap"]
        self.dual_coef_ = info["gamma"]
        self.solver_info_ = {k: v for k, v in info.items() if k != "gamma"} | extra

    def _set_labels(self, labels, z):
        self.n_iter_ = int(self.solver_info_["n_iter"])
        self.labels_ = labels
        self.n_clusters_ = int(np.unique(labels).size)
        self.z_ = z

    def _fit_one_cluster(self, n):
        self.gamma_ = 1.0 if self.gamma is None else float(self.gamma)  # identical rows of X, not a kernel
        self.objective_ = self.duality_gap_ = 0.0
        self.dual_coef_ = np.zeros(n)
        self.solver_info_ = {"solver": "none (identical samples)", "n_iter": 0}
        self.n_iter_ = self.balance_decided_ = 0
        self.labels_ = np.zeros(n, dtype=int)
        self.n_clusters_ = 1
        self.z_ = np.zeros(n)
        self.balance_penalty_ = None
        return self

    def _check_balance(self, K):
        """Did the balance penalty, rather than the best normalized cut of ``z_``, decide the split?"""
        n = self.labels_.shape[0]
        self.balance_decided_ = 0
        if self.n_clusters_ < 2 or n < 4:
            return
        sweep, _ = normalized_cut_sweep(K, self.z_)
        moved = int(min(np.sum(sweep != self.labels_), np.sum(sweep == self.labels_)))
        sizes = np.bincount(self.labels_, minlength=2)
        sweep_sizes = np.bincount(sweep, minlength=2)
        if abs(int(sweep_sizes[0] - sweep_sizes[1])) <= abs(int(sizes[0] - sizes[1])):
            return  # the cut itself is at least as balanced: the penalty did not pull it
        self.balance_decided_ = moved
        if moved >= BALANCE_WARN_FRACTION * n:
            warnings.warn(
                f"GMMC: the balance penalty C_e (e^T z)^2 (balance_penalty={self._penalty!r}, C_e = "
                f"{self.balance_penalty_:.3g}) pulled the clusters towards equal sizes: the labels have "
                f"sizes {sorted(sizes.tolist())}, the best normalized cut of the embedding z_ has sizes "
                f"{sorted(sweep_sizes.tolist())} and moves {moved} of {n} samples. If the clusters may "
                "differ in size, compare with k-means, or choose the width without labels: "
                "LabelFreeSearch(GMMC()).fit(X) (mmcedu.model_selection).",
                BalanceWarning, stacklevel=5,
            )

    def _warn_doubtful(self):
        if self.duality_gap_ > self.tol * max(abs(self.objective_), 1.0):
            if self.solver == "cvxpy":
                advice = "Try another cvxpy_solver or tighter solver_options, or solver='lowrank'."
            else:
                advice = (f"Increase max_iter (now {self.max_iter}), raise tol, or standardize X and use "
                          "a wider kernel (smaller gamma); a large balance_penalty also slows the solver.")
                if self.n_components is None:
                    advice += " n_components=... uses a preconditioned solver (far fewer iterations)."
                if np.isfinite(self.C) and np.any(self.dual_coef_ >= self.C * (1 - 1e-9)):
                    advice = (f"The multipliers reach C={self.C:g}: the low-rank solver solves the "
                              "hard-margin primal, so with a binding C (soft margin) the gap cannot "
                              "close. Use a larger C, or solver='cvxpy' for the soft margin. " + advice)
            warnings.warn(
                f"GMMC did not solve the relaxation to tol={self.tol:g}: after {self.n_iter_} iterations "
                f"the certified duality gap is {self.duality_gap_:.3g} for the objective "
                f"{self.objective_:.4g} (relative {self.duality_gap_ / max(abs(self.objective_), 1.0):.2g}); "
                f"the labels may be wrong. {advice}",
                ConvergenceWarning, stacklevel=4,
            )
        if self.n_clusters_ < 2:
            warnings.warn("GMMC put every sample in one cluster. The relaxation found no balanced split: "
                          "raise balance_penalty (or use 'auto') or change gamma.",
                          ClusterCountWarning, stacklevel=4)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
