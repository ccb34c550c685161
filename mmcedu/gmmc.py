"""GMMC: generalized maximum margin clustering (Valizadegan & Jin, NIPS 2006, Section 3).

Notation (the paper's symbols)
------------------------------
``K`` (n x n) kernel, ``e`` all-ones vector, ``y`` labels in {-1, +1}^n, ``nu >= 0`` the
multipliers of the margin constraints, ``lambda`` the multiplier of the bias constraint
``alpha^T y = 0``. With ``z = diag(y)(e + nu)`` (so ``z_i^2 >= 1``) the hard-margin problem (3)
becomes (4)-(5)::

    min_{z, lambda}  (z + lambda e)^T K^-1 (z + lambda e) + Ce (e^T z)^2   s.t. z_i^2 >= 1   (5)

``w = (z; lambda)`` and ``P = (I_n, e)`` give the homogeneous quadratic (6)
``w^T A w`` with ``A = P^T K^-1 P + Ce e0 e0^T`` (``e0 = (e; 0)``) whose Lagrangian dual is the
linear matrix inequality (7)::

    max_gamma  sum_i gamma_i   s.t.  A - diag(gamma_1..gamma_n, 0) >= 0,  0 <= gamma_i <= C   (7), (10)

(the paper's Lagrange multipliers are also called lambda_i; we write ``gamma`` to keep
``lambda`` for the bias). Remark II replaces ``K^-1`` by the normalized Laplacian
``L = I - D^-1/2 K D^-1/2``. The source needs three corrections (see the book's errata):

* ``variant="printed"``: ``K^-1 := L`` as printed. ``L D^1/2 e = 0`` makes (7) degenerate: the
  optimum is ``gamma = 0`` and the labels threshold the degree.
* ``variant="repaired"``: the kernel ``L^+`` of Remark II requires ``z + lambda e`` to lie in
  the range of ``L``, i.e. ``(D^1/2 e)^T (z + lambda e) = 0``; this fixes ``lambda``.
* ``laplacian="unnormalized"``: ``K^-1 := D - K`` (null vector ``e``: the bias is free and the
  printed and repaired variants coincide).

Eliminating ``lambda`` (its row of ``A``, or the range condition) leaves an n x n PSD matrix
``M`` (:func:`gmmc_matrix`) and the pair of semidefinite programs::

    primal:  min_W <M, W>  s.t. W >= 0, W_ii >= 1        dual:  max sum gamma  s.t. M - diag(gamma) >= 0, gamma >= 0

solved either by cvxpy (:func:`solve_dual_cvxpy`, for clarity and checking) or by a low-rank
Burer-Monteiro factorization ``W = V V^T`` with L-BFGS (:func:`solve_lowrank`), whose answer
is certified by a dual point built from ``lambda_min(M - diag(gamma))`` (:func:`certify`).
Labels come from the leading eigenvector of the primal matrix ``W`` (not from "the eigenvector
of the zero eigenvalue" of (7), which is unstable when the relaxation is not tight).
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import check_n_clusters, solve_cvxpy
from .kernels import (
    check_kernel_matrix,
    check_positive_degree,
    degree,
    kernel_matrix,
    normalized_laplacian,
    unnormalized_laplacian,
)

__all__ = [
    "GMMC",
    "bias_from_z",
    "certify",
    "contrast_score",
    "gmmc_matrix",
    "labels_from_primal",
    "laplacian_matrix",
    "learn_kernel_weights",
    "primal_matrix",
    "resolve_Ce",
    "solve_dual_cvxpy",
    "solve_lowrank",
    "theorem1_vector",
]


# ----------------------------------------------------------------------------------------
# The matrices of (6) and of the reduced problem
# ----------------------------------------------------------------------------------------
def _check_affinity(K):
    K = check_kernel_matrix(K)
    if K.shape[0] < 2:
        raise ValueError(f"GMMC needs at least 2 samples; got n_samples={K.shape[0]}.")
    if np.any(K < 0):
        raise ValueError(
            "GMMC builds a graph Laplacian from the kernel, which needs nonnegative affinities; "
            f"the kernel has a negative entry ({K.min():.3g}). Use the rbf kernel or clip K at 0."
        )
    check_positive_degree(K, "the graph Laplacian of GMMC needs every degree > 0")
    return K


def laplacian_matrix(K, laplacian="normalized"):
    """The matrix that replaces ``K^-1`` (Remark II) and its null vector.

    Returns
    -------
    L : ndarray (n, n)
        ``I - D^-1/2 K D^-1/2`` (``"normalized"``) or ``D - K`` (``"unnormalized"``).
    null : ndarray (n,)
        Unit null vector: ``D^1/2 e / ||D^1/2 e||`` or ``e / sqrt(n)``.
    """
    K = _check_affinity(K)
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


def primal_matrix(K, *, laplacian="normalized", Ce="auto"):
    """``A = P^T L P + Ce e0 e0^T`` of (6), shape (n + 1, n + 1), with ``w = (z; lambda)``.

    This is the printed form: ``lambda`` is free. :func:`gmmc_matrix` eliminates it.
    """
    L, _ = laplacian_matrix(K, laplacian)
    n = L.shape[0]
    Ce = resolve_Ce(Ce, L)
    P = np.hstack([np.eye(n), np.ones((n, 1))])
    e0 = np.r_[np.ones(n), 0.0]
    A = P.T @ L @ P + Ce * np.outer(e0, e0)
    return (A + A.T) / 2


def gmmc_matrix(K, *, laplacian="normalized", variant="repaired", Ce="auto"):
    """The reduced n x n matrix ``M`` (bias eliminated) and the bias map ``lambda = b^T z``.

    ``variant="printed"``: ``lambda`` minimizes ``w^T A w`` (Schur complement of ``A``).
    ``variant="repaired"``: ``lambda`` meets the range condition ``u^T (z + lambda e) = 0`` of
    the pseudo-inverse kernel ``L^+`` (``u`` the null vector of ``L``), so
    ``M = Pi^T L Pi + Ce e e^T`` with ``Pi = I - e u^T / (u^T e)``.
    For the unnormalized Laplacian both give ``M = (D - K) + Ce e e^T`` (``lambda`` has no
    effect; we return ``b = -e / n``, the bias that centres ``z``).

    Returns
    -------
    M : ndarray (n, n), symmetric PSD
    b : ndarray (n,)
    """
    if variant not in ("printed", "repaired"):
        raise ValueError(f"variant must be 'printed' or 'repaired'; got {variant!r}.")
    L, u = laplacian_matrix(K, laplacian)
    n = L.shape[0]
    e = np.ones(n)
    Ce = resolve_Ce(Ce, L)
    if laplacian == "unnormalized":
        M = L + Ce * np.outer(e, e)
        b = -e / n
    elif variant == "printed":
        Le = L @ e
        eLe = float(e @ Le)
        M = L + Ce * np.outer(e, e) - np.outer(Le, Le) / eLe
        b = -Le / eLe
    else:
        b = -u / float(u @ e)
        # Pi = I + e b^T maps z to z + lambda e with lambda = b^T z; expand Pi^T L Pi in O(n^2)
        Le = L @ e
        M = L + np.outer(b, Le) + np.outer(Le, b) + float(e @ Le) * np.outer(b, b)
        M += Ce * np.outer(e, e)
    return (M + M.T) / 2, b


def resolve_Ce(Ce, L):
    """``Ce="auto"`` means ``10 trace(L) / n^2``: the balance direction ``e`` then gets the
    eigenvalue ``Ce n = 10 x`` (the mean eigenvalue of ``L``), stiff enough to act as the
    exact constraint ``e^T z = 0`` (the relaxed objective moves by ~1e-4 relative) and mild
    enough for first-order solvers. For the normalized Laplacian this is about ``10 / n``."""
    if isinstance(Ce, str):
        if Ce != "auto":
            raise ValueError(f"Ce must be a nonnegative number or 'auto'; got {Ce!r}.")
        n = L.shape[0]
        return 10.0 * float(np.trace(L)) / n**2
    if not Ce >= 0:
        raise ValueError(f"Ce must be nonnegative; got {Ce!r}.")
    return float(Ce)


def bias_from_z(z, b):
    """The bias multiplier ``lambda = b^T z`` that goes with ``z`` (see :func:`gmmc_matrix`)."""
    return float(np.asarray(b) @ np.asarray(z))


# ----------------------------------------------------------------------------------------
# Solvers
# ----------------------------------------------------------------------------------------
def solve_dual_cvxpy(M, *, C=1e5, solver=None, **solver_options):
    """Solve the dual (7)/(10) on the reduced matrix with cvxpy.

    ``max sum(gamma)  s.t.  M - diag(gamma) >= 0,  0 <= gamma <= C``.

    Returns
    -------
    gamma : ndarray (n,)
    W : ndarray (n, n), the primal matrix (dual variable of the LMI)
    stats : dict from :func:`mmcedu._validation.solve_cvxpy`
    """
    import cvxpy as cp

    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    gamma = cp.Variable(n)
    lmi = M - cp.diag(gamma) >> 0
    cons = [lmi, gamma >= 0]
    if np.isfinite(C):
        cons.append(gamma <= C)
    prob = cp.Problem(cp.Maximize(cp.sum(gamma)), cons)
    stats = solve_cvxpy(prob, solver, default="CLARABEL", what="GMMC dual (7)", **solver_options)
    W = np.asarray(lmi.dual_value, dtype=float)
    W = (W + W.T) / 2
    # the dual of an equality is defined up to sign conventions; W must be PSD with W_ii >= 1
    if np.trace(W) < 0:
        W = -W
    return np.asarray(gamma.value, dtype=float), W, stats


def _lambda_min(S):
    return float(eigh(S, eigvals_only=True, subset_by_index=[0, 0], check_finite=False)[0])


def certify(M, V, *, C=np.inf, lam_min_M=None):
    """Certified duality gap of a primal point ``W = V V^T`` (rows ``||v_i|| >= 1``).

    The multipliers ``gamma_i = (M V)_i . v_i / ||v_i||^2`` (KKT), clipped to ``[0, C]``, are
    first shifted by ``mu = lambda_min(M - diag(gamma))`` and clipped at 0 (up to three times,
    while this raises ``mu``), then made dual feasible by shrinking: ``lambda_min`` is concave, so with
    ``mu = lambda_min(M - diag(gamma)) < 0`` and ``m0 = lambda_min(M) >= 0``,
    ``theta = m0 / (m0 - mu)`` gives ``M - theta diag(gamma) >= 0``.

    Returns
    -------
    primal : float, ``<M, V V^T>`` (a feasible value: an upper bound on the optimum)
    lower : float, ``theta * sum(gamma)`` (a lower bound on the optimum)
    gamma : ndarray, the dual feasible point ``theta * gamma``
    """
    M = np.asarray(M, dtype=float)
    MV = M @ V
    primal = float(np.sum(MV * V))
    r2 = np.sum(V * V, axis=1)
    if np.any(r2 < 1 - 1e-9):
        raise ValueError("certify needs a feasible primal point: every ||v_i|| >= 1.")
    gamma = np.clip(np.sum(MV * V, axis=1) / r2, 0.0, C)
    mu = _lambda_min(M - np.diag(gamma))
    for _ in range(3):  # shift down and clip at 0: cheap repairs before shrinking
        if mu >= 0:
            break
        shifted = np.maximum(gamma + mu, 0.0)
        mu_shifted = _lambda_min(M - np.diag(shifted))
        if mu_shifted <= mu:
            break
        gamma, mu = shifted, mu_shifted
    if mu >= 0:
        theta = 1.0
    else:
        m0 = _lambda_min(M) if lam_min_M is None else lam_min_M
        m0 = max(m0, 0.0)
        theta = m0 / (m0 - mu)
    gamma = theta * gamma
    return primal, float(gamma.sum()), gamma


def _bm_fun(x, M, n, p):
    U = x[: n * p].reshape(n, p)
    s = x[n * p :]
    nu = np.linalg.norm(U, axis=1)
    nu = np.maximum(nu, 1e-300)
    Om = U / nu[:, None]
    r = 1.0 + s * s
    V = r[:, None] * Om
    MV = M @ V
    f = float(np.sum(MV * V))
    G = 2.0 * MV  # df/dV
    gOm = np.sum(G * Om, axis=1)
    gU = (r / nu)[:, None] * (G - gOm[:, None] * Om)
    gs = 2.0 * s * gOm
    return f, np.concatenate([gU.ravel(), gs])


def _default_rank(n):
    return int(max(1, min(n, int(np.ceil(np.sqrt(2 * n))) + 1, 10)))


def solve_lowrank(
    M, *, C=np.inf, rank=None, V0="spectral", random_state=None, max_iter=3000, tol=0.0,
    gap_tol=1e-4, certify_gap=True, check_every=300,
):
    """Burer-Monteiro solver of ``min <M, V V^T> s.t. ||v_i|| >= 1`` with L-BFGS.

    Row ``i`` of ``V`` is ``v_i = (1 + s_i^2) u_i / ||u_i||``: every norm ``>= 1`` is reachable
    and the objective is smooth in ``(U, s)``. The answer is certified by :func:`certify`;
    L-BFGS is restarted from where it stopped until the relative gap is below ``gap_tol`` or
    ``max_iter`` iterations are spent.

    Parameters
    ----------
    M : ndarray (n, n), symmetric PSD (from :func:`gmmc_matrix`)
    C : float
        Upper bound of the multipliers (soft margin (10)); only used by the certificate.
    rank : int, default=None
        Columns of ``V``. ``None`` means ``min(ceil(sqrt(2 n)) + 1, 10)``. Above the
        Barvinok-Pataki bound ``sqrt(2 n)`` second-order critical points are optimal for
        generic costs (Boumal, Voroninski & Bandeira 2016); the cap at 10 is for speed and is
        safe because the certificate reports any shortfall as a positive gap.
    V0 : "spectral", "random" or ndarray, default="spectral"
        Starting point: the ``rank`` bottom eigenvectors of ``M`` with unit rows (the
        normalized spectral embedding), random Gaussian rows, or a given factor.
    max_iter, tol : L-BFGS iterations (in total) and its relative-reduction tolerance
        (``0``: L-BFGS never stops on its own test; the certified gap decides).
    gap_tol : float
        Stop when ``gap <= gap_tol * max(primal, 1)``.
    check_every : int or None, default=300
        Certify (and stop if the gap is small enough) every ``check_every`` L-BFGS
        iterations; ``None`` certifies only when L-BFGS stops by itself. Each check costs
        one to five smallest-eigenvalue computations (O(n^3) with a dense solver).

    Returns
    -------
    V : ndarray (n, rank)
    info : dict with ``primal``, ``lower`` (certified), ``gap`` (>= 0), ``gamma``,
        ``n_iter``, ``solve_time``, ``rank``, ``message``.
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    p = int(rank) if rank is not None else _default_rank(n)
    p = max(1, min(p, n))
    rng = check_random_state(random_state)
    t0 = time.perf_counter()
    lam_min_M = None
    if isinstance(V0, str) and V0 == "spectral":
        w, Q = eigh(M, subset_by_index=[0, p - 1], check_finite=False)
        lam_min_M = float(w[0])
        U0 = Q + 1e-6 * rng.standard_normal((n, p))
    elif isinstance(V0, str) and V0 == "random":
        U0 = rng.standard_normal((n, p))
    elif isinstance(V0, str):
        raise ValueError(f"V0 must be 'spectral', 'random' or an array; got {V0!r}.")
    else:
        U0 = np.array(V0, dtype=float)[:, :p]
        if U0.shape[1] < p:
            U0 = np.hstack([U0, 1e-3 * rng.standard_normal((n, p - U0.shape[1]))])
    s0 = 1e-3 * rng.standard_normal(n)
    x = np.concatenate([U0.ravel(), s0])
    n_iter, rounds, natural_stops, info = 0, 0, 0, {}
    while True:
        chunk = min(max_iter - n_iter, check_every or max_iter)
        res = minimize(
            _bm_fun, x, args=(M, n, p), jac=True, method="L-BFGS-B",
            options={
                "maxiter": chunk,
                "maxcor": 20, "ftol": tol, "gtol": 1e-12,
            },
        )
        x, n_iter, rounds = res.x, n_iter + int(res.nit), rounds + 1
        U = x[: n * p].reshape(n, p)
        s = x[n * p :]
        V = ((1.0 + s * s) / np.maximum(np.linalg.norm(U, axis=1), 1e-300))[:, None] * U
        if not certify_gap:
            info = {"primal": float(np.sum((M @ V) * V))}
            break
        primal, lower, gamma = certify(M, V, C=C, lam_min_M=lam_min_M)
        info = {"primal": primal, "lower": lower, "gap": max(primal - lower, 0.0), "gamma": gamma}
        # L-BFGS stopped by its own test (not by the chunk limit): restart at most 20 times
        natural_stops += int(res.nit < chunk)
        if (info["gap"] <= gap_tol * max(primal, 1.0) or n_iter >= max_iter or res.nit == 0
                or natural_stops >= 20):
            break
    info.update(
        n_iter=n_iter, rank=p, rounds=rounds, message=str(res.message), solver="lowrank",
        solve_time=time.perf_counter() - t0,
    )
    return V, info


def labels_from_primal(W=None, V=None):
    """Labels ``sign(w)`` from the leading eigenvector ``w`` of the primal matrix ``W = V V^T``.

    The sign of the eigenvector is fixed so that sample 0 gets label 0. Returns ``(labels, w)``
    with labels in {0, 1}.
    """
    if V is not None:
        Uv, sv, _ = np.linalg.svd(np.asarray(V, dtype=float), full_matrices=False)
        w = Uv[:, 0] * sv[0]
    else:
        vals, vecs = np.linalg.eigh((np.asarray(W, dtype=float) + np.asarray(W).T) / 2)
        w = vecs[:, -1] * np.sqrt(max(vals[-1], 0.0))
    if w[0] > 0:
        w = -w
    return (w > 0).astype(int), w


def theorem1_vector(M):
    """Theorem 1's special case: all ``gamma_i`` equal, so (7) is ``max n gamma0 s.t. M >= gamma0 I``.

    The optimum is ``gamma0 = lambda_min(M)`` and the primal vector is its eigenvector.
    Returns ``(gamma0, z)``.
    """
    vals, vecs = eigh(np.asarray(M, dtype=float), subset_by_index=[0, 0])
    return float(vals[0]), vecs[:, 0]


# ----------------------------------------------------------------------------------------
# Kernel learning (11)/(12) and a label-free alternative
# ----------------------------------------------------------------------------------------
def contrast_score(M, value=None, K=None, **lowrank_options):
    """Relaxed margin objective of ``M`` relative to that of an average balanced cut.

    ``value / (n avg)`` with ``avg = trace(H M H) / (n - 1)`` (``H = I - e e^T / n``): the mean
    of ``z^T M z / ||z||^2`` over random directions ``z`` orthogonal to ``e``. Small means that
    the best (relaxed) balanced partition is much better than a random one. With the kernel
    ``K`` given, widths at which some sample is nearly isolated (its affinities to the others
    sum to less than 1) score ``inf``: there ``L`` degenerates (``K -> I`` gives ``L -> 0``) and
    the ratio is 0/0.
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    if K is not None:
        K = np.asarray(K, dtype=float)
        if np.min(K.sum(axis=1) - np.diag(K)) < 1.0:
            return np.inf
    if value is None:
        _, info = solve_lowrank(M, **lowrank_options)
        value = info["primal"]
    Mc = M - M.mean(axis=0)[None, :] - M.mean(axis=1)[:, None] + M.mean()
    avg = float(np.trace(Mc)) / (n - 1)
    return value / (n * avg)


def learn_kernel_weights(
    Ks, *, method="printed", laplacian="normalized", variant="repaired", Ce="auto", C=1e5,
    solver=None, random_state=0,
):
    """Weights ``beta`` of a combination of kernels, without labels.

    Parameters
    ----------
    Ks : sequence of m kernel matrices (n x n)
    method : {"printed", "contrast"}
        ``"printed"``: problem (12) of the paper: ``max_{gamma, beta} sum(gamma)`` s.t.
        ``sum_k beta_k M_k - diag(gamma) >= 0``, ``0 <= gamma <= C``, ``beta`` in the simplex
        (cvxpy; small n). Maximizing the relaxed objective over the kernel picks the flattest
        (widest) kernel.
        ``"contrast"``: ``min_beta max_gamma`` with every ``M_k`` scaled to unit average cut
        (trace normalization, as in supervised kernel learning). The inner value is concave in
        ``beta`` so the minimum is at a vertex: the single kernel with the smallest
        :func:`contrast_score`.
    laplacian, variant, Ce : as in :class:`GMMC` (for ``"printed"`` with the normalized
        Laplacian the combination is taken of the reduced matrices ``M_k``, as (12) combines
        the Laplacians)

    Returns
    -------
    beta : ndarray (m,)
    info : dict (``scores`` for ``"contrast"``, ``gamma`` and ``stats`` for ``"printed"``)
    """
    Ms = [gmmc_matrix(K, laplacian=laplacian, variant=variant, Ce=Ce)[0] for K in Ks]
    m = len(Ms)
    if m == 0:
        raise ValueError("learn_kernel_weights needs at least one kernel matrix.")
    if method == "printed":
        import cvxpy as cp

        n = Ms[0].shape[0]
        beta = cp.Variable(m, nonneg=True)
        gamma = cp.Variable(n)
        cons = [sum(beta[k] * Ms[k] for k in range(m)) - cp.diag(gamma) >> 0,
                gamma >= 0, gamma <= C, cp.sum(beta) == 1]
        prob = cp.Problem(cp.Maximize(cp.sum(gamma)), cons)
        stats = solve_cvxpy(prob, solver, default="CLARABEL", what="kernel learning (12)")
        b = np.clip(np.asarray(beta.value, dtype=float), 0, None)
        return b / b.sum(), {"gamma": np.asarray(gamma.value), "stats": stats}
    if method == "contrast":
        scores = np.array(
            [contrast_score(M, K=K, random_state=random_state) for M, K in zip(Ms, Ks)]
        )
        if not np.isfinite(scores).any():
            raise ValueError(
                "Every kernel leaves some sample nearly isolated (affinities to the others sum "
                "to < 1); add wider kernels."
            )
        b = np.zeros(m)
        b[int(np.argmin(scores))] = 1.0
        return b, {"scores": scores}
    raise ValueError(f"method must be 'printed' or 'contrast'; got {method!r}.")


# ----------------------------------------------------------------------------------------
# Estimator
# ----------------------------------------------------------------------------------------
class GMMC(ClusterMixin, BaseEstimator):
    """Generalized maximum margin clustering (two clusters), Valizadegan & Jin (2006).

    Solves the semidefinite relaxation whose dual is (7) (hard margin) or (10) (soft margin,
    ``gamma_i <= C``), with ``K^-1`` replaced by a graph Laplacian of the kernel (Remark II),
    and labels the samples by the sign of the leading eigenvector of the primal matrix.

    Parameters
    ----------
    C : float, default=1e5
        Upper bound on the multipliers ``gamma_i`` in (10) (soft margin); the paper uses
        100,000, which makes the margin hard in practice.
    Ce : float or "auto", default="auto"
        Weight of ``Ce (e^T z)^2`` in (5), which removes the translation invariance (and acts
        as a class-balance constraint). ``"auto"`` is ``10 trace(L) / n^2`` (about ``10 / n``
        for the normalized Laplacian). The paper's 10,000 only ill-conditions solvers: past
        a moderate value the relaxed objective no longer moves (< 1e-4 relative).
    laplacian : {"normalized", "unnormalized"}, default="normalized"
        ``I - D^-1/2 K D^-1/2`` (Remark II) or ``D - K``.
    variant : {"repaired", "printed"}, default="repaired"
        ``"printed"`` uses (7) as printed (degenerate with the normalized Laplacian: the labels
        threshold the degree); ``"repaired"`` adds the range condition of the kernel ``L^+``.
    kernel : {"rbf", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is an n x n nonnegative PSD affinity matrix.
    gamma : float, default=None
        RBF parameter ``exp(-gamma ||x - y||^2)``; ``None`` means ``1 / n_features``.
    solver : {"auto", "lowrank", "cvxpy"}, default="auto"
        ``"lowrank"``: Burer-Monteiro + L-BFGS with a certified duality gap (scales to
        thousands of samples; ``"auto"`` uses it). ``"cvxpy"``: the dual (10) with Clarabel.
    rank : int, default=None
        Rank of the low-rank factor; ``None`` means ``ceil(sqrt(2 n)) + 1``.
    max_iter : int, default=5000
        L-BFGS iterations of the low-rank solver.
    random_state : int, RandomState instance or None, default=None
        Seed of the low-rank solver's starting point.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in {0, 1}.
    objective_ : float
        Optimal value of the relaxation (``sum(gamma)`` of (7)/(10); for the low-rank solver
        the primal value ``<M, V V^T>``).
    duality_gap_ : float
        Certified bound ``>= 0`` on the distance of ``objective_`` from the optimum.
    gamma_ : ndarray of shape (n_samples,)
        Dual-feasible multipliers of (7)/(10).
    z_ : ndarray of shape (n_samples,)
        Leading eigenvector of the primal matrix (scaled): ``labels_ = (z_ > 0)``.
    bias_ : float
        The multiplier ``lambda = b^T z_`` of the bias constraint.
    solver_stats_ : dict
        Solver name, time, iterations and status.
    n_iter_ : int
        Iterations of the solver (L-BFGS or interior point).
    n_features_in_ : int

    References
    ----------
    H. Valizadegan and R. Jin. Generalized maximum margin clustering and unsupervised kernel
    learning. NIPS 19, 2006. Equations (3)-(7), (10), Remark II, Theorem 1.
    S. Burer and R. D. C. Monteiro. A nonlinear programming algorithm for solving semidefinite
    programs via low-rank factorization. Math. Programming 95, 2003.

    Examples
    --------
    >>> from mmcedu import GMMC
    >>> from mmcedu.datasets import two_circles
    >>> from mmcedu.metrics import clustering_error
    >>> X, y = two_circles(100, random_state=0)
    >>> model = GMMC(gamma=20.0, random_state=0).fit(X)
    >>> clustering_error(y, model.labels_)
    0.0
    >>> model.duality_gap_ >= 0
    True
    """

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "Ce": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "laplacian": [StrOptions({"normalized", "unnormalized"})],
        "variant": [StrOptions({"printed", "repaired"})],
        "kernel": [StrOptions({"rbf", "precomputed"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "solver": [StrOptions({"auto", "lowrank", "cvxpy"})],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, C=1e5, Ce="auto", laplacian="normalized", variant="repaired",
        kernel="rbf", gamma=None, solver="auto", rank=None, max_iter=5000, random_state=None,
    ):
        self.C = C
        self.Ce = Ce
        self.laplacian = laplacian
        self.variant = variant
        self.kernel = kernel
        self.gamma = gamma
        self.solver = solver
        self.rank = rank
        self.max_iter = max_iter
        self.random_state = random_state

    def _kernel(self, X):
        if self.kernel == "precomputed":
            return check_kernel_matrix(X, psd=True)
        return kernel_matrix(X, "rbf", self.gamma)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` (or the precomputed kernel ``X``) into two clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        check_n_clusters(X.shape[0], 2)
        rng = check_random_state(self.random_state)
        K = self._kernel(X)
        M, b = gmmc_matrix(K, laplacian=self.laplacian, variant=self.variant, Ce=self.Ce)
        if self.solver == "cvxpy":
            gamma, W, stats = solve_dual_cvxpy(M, C=self.C)
            labels, z = labels_from_primal(W=W)
            # certify the cvxpy answer the same way: the dual point made exactly feasible
            mu = _lambda_min(M - np.diag(np.clip(gamma, 0, self.C)))
            g = np.clip(gamma, 0, self.C)
            if mu < 0:
                m0 = max(_lambda_min(M), 0.0)
                g = g * (m0 / (m0 - mu))
            primal = float(np.sum(M * W)) + self.C * float(np.sum(np.clip(1 - np.diag(W), 0, None)))
            self.objective_ = float(np.sum(g))
            self.duality_gap_ = max(primal - self.objective_, 0.0)
            self.gamma_ = g
            self.solver_stats_ = dict(stats)
        else:
            V, info = solve_lowrank(
                M, C=self.C, rank=self.rank, random_state=rng, max_iter=self.max_iter
            )
            labels, z = labels_from_primal(V=V)
            self.objective_ = info["primal"]
            self.duality_gap_ = info["gap"]
            self.gamma_ = info["gamma"]
            self.solver_stats_ = {k: v for k, v in info.items() if k != "gamma"}
        self.n_iter_ = max(1, int(self.solver_stats_.get("n_iter") or 1))
        self.labels_ = labels
        self.z_ = z
        self.bias_ = bias_from_z(z, b)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
