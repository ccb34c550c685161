"""Support vector clustering with kernel-width exploration and cone cluster labeling.

Support vector clustering (SVC, Ben-Hur et al. 2001) maps the data with the Gaussian kernel
``K(x, y) = exp(-q ||x - y||^2)`` and finds the smallest sphere (centre ``a``, radius ``R``)
enclosing the images ``Phi(x_j)`` in feature space, allowing outliers at a price ``C``
(support vector data description, Tax & Duin 2004). Its Wolfe dual is (Lee & Daniels 2007,
slide 18, "Wolfe dual form")

    max_beta   sum_j beta_j K_jj - sum_{i,j} beta_i beta_j K_ij
    subject to 0 <= beta_j <= C,  sum_j beta_j = 1,

and the squared feature-space distance of any point ``x`` to the centre ``a = sum_j beta_j
Phi(x_j)`` is (slide 19)

    R^2(x) = K(x, x) - 2 sum_j beta_j K(x_j, x) + sum_{i,j} beta_i beta_j K_ij.

Points with ``0 < beta < C`` lie on the sphere (support vectors, SV), points with
``beta = C`` outside it (bounded support vectors, BSV), all others inside. The sphere, read
back in data space, is a set of contours; the connected pieces they enclose are the clusters.

Two cluster-labeling rules are implemented:

``"complete_graph"`` (Ben-Hur et al. 2001)
    Two points inside the sphere are adjacent when ``m`` sample points on the segment
    joining them all lie inside the sphere; clusters are the connected components.
    Cost ``n_in (n_in - 1) / 2 * m * N_sv`` kernel evaluations, O(N^2 N_sv m) (slide 41).
``"cone"`` (cone cluster labeling, Lee & Daniels 2007, slides 34-38)
    Every image lies on the unit sphere of feature space (``K(x, x) = 1``). The support
    vector cones with apex at the origin, axis ``Phi(v_i)`` and half-angle ``theta`` with
    ``cos(theta) = sqrt(1 - R^2)`` cover the intersection of the unit sphere and the
    minimal sphere; in data space each cone meets the image of the data in the ball of
    radius ``Z = sqrt(-ln(cos theta) / q)`` around ``v_i``. The slides' algorithm (slide 38)
    calls ``ConstructConnectivity(V, Z)`` without stating its rule; we join two support
    vectors when their data-space balls meet, ``||v_i - v_j|| <= 2 Z`` (our reconstruction).
    This is *not* the intersection of the feature-space cones: two cones of half-angle
    ``theta`` meet iff the angle between their axes is at most ``2 theta``, i.e.
    ``K(v_i, v_j) >= cos(2 theta) = 1 - 2 R^2``, which holds for every pair once
    ``R^2 >= 1/2`` (most of a q-list), so that rule would put everything in one cluster.
    The ball rule is stricter (``||v_i - v_j|| <= 2 Z`` iff ``K(v_i, v_j) >= (1 - R^2)^2 >
    1 - 2 R^2``: its edges are a subset of the cone edges) and, the Gaussian map being no
    isometry, a data-space heuristic. Clusters are the connected components of the
    support vectors; every other point takes the label of its nearest support vector.
    Cost ``N_sv^2 + N N_sv`` distance evaluations (slide 41: O(N N_sv)); with a neighbour
    structure (a KD-tree or ball tree), O((N + N_sv) log N_sv) in low dimension.

Bounded support vectors (outliers) are given the label of their nearest labeled point: the
nearest support vector (cone labeling) or the nearest point inside the sphere (complete
graph). :meth:`SupportVectorClustering.predict` uses the same rule for new points.

Every distance is computed on centred data (``X - mean``): the method is translation
invariant, and ``||x||^2 + ||y||^2 - 2 x.y`` cancels catastrophically far from the origin.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import namedtuple
from numbers import Integral, Real

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.neighbors import NearestNeighbors
from sklearn.svm import OneClassSVM
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._cvxpy import solve_cvxpy
from ._validation import all_identical, array_bytes, check_memory, check_scale
from .exceptions import ClusterCountWarning, DegenerateDataWarning
from .kernels import median_gamma, rbf_kernel

__all__ = [
    "SupportVectorClustering",
    "svdd_dual",
    "svdd_radius_squared",
    "cone_radius",
    "gamma_path",
    "GammaPath",
    "cluster_counts",
    "ClusterCounts",
    "complete_graph_labels",
    "cone_labels",
]

#: libsvm stopping tolerance of :func:`svdd_dual` (a precomputed kernel): tight, so that
#: libsvm and cvxpy agree to about 1e-7 in beta.
_LIBSVM_TOL = 1e-9
#: CLARABEL tolerances for solver="cvxpy" (the default back end; ``solver_options`` overrides).
_CLARABEL_OPTIONS = {
    "tol_gap_abs": 1e-12,
    "tol_gap_rel": 1e-12,
    "tol_feas": 1e-12,
    "tol_ktratio": 1e-10,
}
#: beta below this (relative to 1 = sum beta) counts as zero.
_ZERO_TOL = 1e-7
#: beta within this (relative to C) of C counts as bounded.
_BOUND_RTOL = 1e-6
#: tol=None: the relative tolerance up to this many samples, and above it.
_TOL_SWITCH = 10_000
_TOL_SMALL = 1e-7
_TOL_LARGE = 0.05
#: libsvm tolerance of the probe fit that estimates ||a||^2 (libsvm's default).
_PROBE_TOL = 1e-3
#: the largest temporary block (bytes) of the blocked kernel and distance computations.
_BLOCK_BYTES = 2**25
#: complete-graph labeling warns above this many kernel evaluations (after the solve) or
#: segment points (before it: each costs N_sv kernel evaluations).
_CG_WARN_EVALUATIONS = 1e9
_CG_WARN_SEGMENT_POINTS = 5e7


# ============================================================================ helpers
def _check_C(C, n_samples, *, what="n_samples"):
    if C * n_samples < 1.0 - 1e-12:
        raise ValueError(
            f"C={C!r} is infeasible for {what}={n_samples}: the SVDD dual needs "
            f"sum(beta) = 1 with 0 <= beta_j <= C, which requires C >= 1/{what} = "
            f"{1.0 / n_samples:.6g}. Increase C (C >= 1 means no outliers)."
        )


def _check_gamma(q, name="q"):
    if not (isinstance(q, Real) and math.isfinite(q) and q > 0):
        raise ValueError(
            f"{name} (the RBF parameter gamma) must be a positive finite number; got {q!r}."
        )


def _rows_per_block(n_cols, per_entry=8, budget=_BLOCK_BYTES):
    """Rows of an ``(rows, n_cols)`` block of ``per_entry`` bytes per entry within ``budget``."""
    return max(1, int(budget // max(1, per_entry * n_cols)))


def _sq_norms(A):
    return np.einsum("ij,ij->i", A, A)


def _kernel_weighted_sum(A, B, w, q, *, count=None):
    """``exp(-q ||a_i - b_j||^2) @ w`` for every row ``a_i`` of ``A``, in row blocks.

    Memory O(block * len(B)) with blocks of at most 32 MiB; no ``len(A) x len(B)`` array.
    ``count`` (a dict) accumulates ``kernel_evaluations``.
    """
    out = np.empty(A.shape[0])
    if B.shape[0] == 0:
        out[:] = 0.0
        return out
    bb = _sq_norms(B)
    step = _rows_per_block(B.shape[0])
    for s in range(0, A.shape[0], step):
        D2 = euclidean_distances(A[s : s + step], B, Y_norm_squared=bb[None, :], squared=True)
        np.multiply(D2, -q, out=D2)
        np.exp(D2, out=D2)
        out[s : s + step] = D2 @ w
    if count is not None:
        count["kernel_evaluations"] = count.get("kernel_evaluations", 0) + A.shape[0] * B.shape[0]
    return out


def _nearest_index(X, Y):
    """Index of the nearest row of ``Y`` for every row of ``X`` (both centred).

    One BLAS product per block while ``len(X) x len(Y)`` distances fit in 32 MiB (exact
    ties go to the smaller index), otherwise a KD-tree / ball tree on ``Y``
    (:class:`sklearn.neighbors.NearestNeighbors`): O((len(X) + len(Y)) d) memory.
    """
    if 8 * X.shape[0] * Y.shape[0] <= _BLOCK_BYTES:
        return euclidean_distances(X, Y, squared=True).argmin(axis=1)
    nn = NearestNeighbors(n_neighbors=1).fit(Y)
    return nn.kneighbors(X, return_distance=False)[:, 0]


def _components(adjacency):
    _, labels = connected_components(csr_matrix(adjacency), directed=False)
    return labels.astype(np.intp)


def _merge_edges(comp, rows, cols):
    """Components after adding edges ``rows[k] -- cols[k]`` to the forest ``comp``.

    ``comp[v]`` is the smallest vertex of ``v``'s component so far (a star forest); the
    result is again such a forest. Memory O(len(comp) + len(rows)).
    """
    m = comp.size
    r = np.r_[rows, np.arange(m)]
    c = np.r_[cols, comp]
    A = coo_matrix((np.ones(r.size, dtype=np.int8), (r, c)), shape=(m, m)).tocsr()
    _, lab = connected_components(A, directed=False)
    rep = np.full(lab.max() + 1, m)
    np.minimum.at(rep, lab, np.arange(m))
    return rep[lab]


def _forest_labels(comp):
    """``0 .. k-1`` numbered by the smallest vertex of each component."""
    return np.unique(comp, return_inverse=True)[1].astype(np.intp).ravel()


def _sv_masks(beta, C):
    """Support vectors and bounded ones. With ``C >= 1`` nothing is bounded: ``beta_i = 1``
    leaves every other beta at zero and ``R^2(x_i) = 0``, so ``x_i`` is on the (point) sphere."""
    sv = beta > _ZERO_TOL
    if C >= 1.0:
        return sv, np.zeros_like(sv)
    bounded = sv & (beta >= C * (1.0 - _BOUND_RTOL))
    return sv, bounded


def _radius_from_points(R2_points, beta, C):
    """``R^2`` from the points' ``R^2(x_i)`` (see :func:`svdd_radius_squared`)."""
    sv, bounded = _sv_masks(beta, C)
    free = sv & ~bounded
    if free.any():
        R2 = float(R2_points[free].mean())
    else:
        lo = float(R2_points[~sv].max()) if (~sv).any() else None
        hi = float(R2_points[bounded].min()) if bounded.any() else None
        R2 = hi if lo is None else (lo if hi is None else 0.5 * (lo + hi))
    return max(R2, 0.0)


# ============================================================================ the dual
def svdd_dual(K, C=1.0, *, solver="libsvm", cvxpy_solver=None, solver_options=None):
    """Solve the SVDD / SVC Wolfe dual for a kernel matrix.

    ``max_beta sum_j beta_j K_jj - beta^T K beta`` subject to ``0 <= beta <= C`` and
    ``sum beta = 1`` (Lee & Daniels 2007, slide 18; Ben-Hur et al. 2001, Sec. 2).

    Memory: the ``n x n`` matrix ``K`` itself (8 n^2 bytes), plus, for ``solver="cvxpy"``,
    about three more copies inside cvxpy and its back end (checked against the memory budget
    before solving). :class:`SupportVectorClustering` with ``solver="libsvm"`` never forms
    ``K``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix. For ``solver="libsvm"`` its diagonal must be constant (true for the
        Gaussian kernel, ``K_jj = 1``): then the linear term is constant on the simplex and the
        problem equals the one-class SVM of Schoelkopf et al. (2001).
    C : float
        Upper bound on each beta; must satisfy ``C >= 1/n``. ``C >= 1`` is the same problem as
        ``C = 1`` (``beta <= 1`` anyway).
    solver : {"libsvm", "cvxpy"}, default="libsvm"
        Algorithm. ``"libsvm"``: scikit-learn's :class:`~sklearn.svm.OneClassSVM` on the
        precomputed kernel with ``nu = 1/(n min(C, 1))``; its dual variables ``alpha`` in
        ``[0, 1]`` with ``sum alpha = nu n`` give ``beta = alpha / (nu n)``. ``"cvxpy"``: the
        dual solved directly as a quadratic program.
    cvxpy_solver : str or None, default=None
        cvxpy back end for ``solver="cvxpy"``; ``None`` means CLARABEL (with tolerances
        tightened to 1e-12).
    solver_options : dict or None, default=None
        Passed to the back end: keyword arguments of ``cvxpy.Problem.solve`` (replacing the
        tightened CLARABEL tolerances) or of :class:`~sklearn.svm.OneClassSVM` (for example
        ``{"tol": 1e-6}``; the default is ``tol=1e-9``, ``shrinking=False``).

    Returns
    -------
    beta : ndarray of shape (n,)
    info : dict
        ``solver``, ``n_iter`` (iterations of the back end), ``solve_time`` (seconds, wall
        clock) and solver-specific entries.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}.")
    n = K.shape[0]
    if n < 2:
        raise ValueError(f"SVDD needs at least 2 samples; got n_samples={n}.")
    if not np.all(np.isfinite(K)):
        raise ValueError(
            "K contains NaN or infinity; compute the kernel from finite data (a Gaussian "
            "kernel of finite data is finite unless its squared distances overflow: "
            "standardize the data)."
        )
    _check_C(C, n)
    t0 = time.perf_counter()
    if solver == "libsvm":
        diag = np.diag(K)
        if np.ptp(diag) > 1e-10 * max(1.0, float(np.abs(diag).max())):
            raise ValueError(
                "solver='libsvm' needs a kernel with constant diagonal (such as the Gaussian "
                "kernel); use solver='cvxpy' for other kernels."
            )
        nu = min(1.0, 1.0 / (n * min(C, 1.0)))
        if nu >= 1.0 - 1e-12:
            # C = 1/n: beta = 1/n is the only feasible point (libsvm's offset is then
            # undefined and scikit-learn refuses the fit).
            beta = np.full(n, 1.0 / n)
            return beta, {
                "solver": "libsvm", "nu": nu, "n_iter": 0, "solve_time": time.perf_counter() - t0,
            }
        options = {"tol": _LIBSVM_TOL, "shrinking": False, **(solver_options or {})}
        ocsvm = OneClassSVM(kernel="precomputed", nu=nu, **options)
        ocsvm.fit(K)
        alpha = np.zeros(n)
        alpha[ocsvm.support_] = ocsvm.dual_coef_.ravel()
        beta = alpha / alpha.sum()  # alpha.sum() = nu n
        info = {"solver": "libsvm", "nu": nu, "n_iter": int(np.sum(ocsvm.n_iter_))}
    elif solver == "cvxpy":
        import cvxpy as cp

        check_memory(
            4 * array_bytes((n, n)),
            what=f"The cvxpy SVDD solve for n = {n:,} (the n x n kernel and about three "
            "copies inside cvxpy and its back end)",
            alternative="Use solver='libsvm' (kernel columns on demand, no n x n array).",
        )
        b = cp.Variable(n)
        # K_jj = 1 for the Gaussian kernel, but keep the linear term for general kernels.
        objective = cp.Maximize(np.diag(K) @ b - cp.quad_form(b, cp.psd_wrap((K + K.T) / 2)))
        cons = [b >= 0, b <= C, cp.sum(b) == 1]
        name = "CLARABEL" if cvxpy_solver is None else cvxpy_solver
        # Default CLARABEL tolerances (1e-8 on the gap) leave beta errors of ~1e-5 near
        # zero; tightened, beta agrees with libsvm to ~1e-7 and so do the support sets.
        if solver_options is None:
            solver_options = _CLARABEL_OPTIONS if name == "CLARABEL" else {}
        stats = solve_cvxpy(
            cp.Problem(objective, cons), name, what="SVDD dual", solver_options=solver_options
        )
        beta = np.clip(np.asarray(b.value, dtype=float).ravel(), 0.0, C)
        beta /= beta.sum()
        info = {"solver": f"cvxpy/{stats['solver']}", "status": stats["status"],
                "n_iter": stats["n_iter"]}
    else:
        raise ValueError(f"solver must be 'libsvm' or 'cvxpy', got {solver!r}.")
    info["solve_time"] = time.perf_counter() - t0
    return beta, info


def _default_tol(n):
    return _TOL_SMALL if n <= _TOL_SWITCH else _TOL_LARGE


def _svdd_libsvm_data(Xc, q, C, *, tol=None, solver_options=None):
    """The SVDD dual by libsvm's one-class SVM on the (centred) data, no n x n array.

    libsvm computes kernel columns on demand and caches ``cache_size`` MB of them (200 by
    default; ``solver_options={"cache_size": ...}``). Its stopping rule is absolute on the
    gradients ``(K alpha)_i = nu n (K beta)_i``; the points' ``R^2(x_i) = 1 - 2 (K beta)_i +
    ||a||^2`` are then known to ``2 tol_libsvm / (nu n)``. We ask for
    ``tol_libsvm = tol * nu n ||a||^2`` (``||a||^2 = 1 - R^2`` without bounded support
    vectors), so that ``R^2(x)`` is exact to about ``2 tol (1 - R^2)``: a probe fit at
    libsvm's default tolerance (1e-3) estimates ``||a||^2`` and, if its tolerance was looser
    than that, the fit is repeated once. ``solver_options["tol"]`` (libsvm's own tolerance)
    skips the rule.
    """
    n = Xc.shape[0]
    t0 = time.perf_counter()
    nu = min(1.0, 1.0 / (n * min(C, 1.0)))  # C >= 1 is the problem with C = 1; keeps nu n >= 1
    info = {"solver": "libsvm", "nu": nu, "n_iter": 0, "n_fits": 0, "libsvm_tol": None}
    if nu >= 1.0 - 1e-12:
        info["solve_time"] = time.perf_counter() - t0
        return np.full(n, 1.0 / n), info
    options = dict(solver_options or {})
    fixed_tol = options.pop("tol", None)
    options.setdefault("shrinking", True)
    rel = _default_tol(n) if tol is None else float(tol)

    def run(libsvm_tol):
        oc = OneClassSVM(kernel="rbf", gamma=q, nu=nu, tol=libsvm_tol, **options).fit(Xc)
        alpha = np.zeros(n)
        alpha[oc.support_] = oc.dual_coef_.ravel()
        info["n_iter"] += int(np.sum(oc.n_iter_))
        info["n_fits"] += 1
        info["libsvm_tol"] = libsvm_tol
        return alpha / alpha.sum()  # alpha.sum() = nu n

    if fixed_tol is not None:
        beta = run(float(fixed_tol))
    else:
        beta = run(_PROBE_TOL)
        sv = np.flatnonzero(beta > 0)
        quad = float(beta[sv] @ _kernel_weighted_sum(Xc[sv], Xc[sv], beta[sv], q))
        target = rel * nu * n * max(quad, 1.0 / n)
        if target < _PROBE_TOL:
            beta = run(target)
    info["solve_time"] = time.perf_counter() - t0
    return beta, info


def svdd_radius_squared(K, beta, C):
    """Squared radius of the minimal sphere and every point's squared distance to its centre.

    ``R^2(x_i) = K_ii - 2 (K beta)_i + beta^T K beta`` (slide 19). ``R^2`` is the mean of
    ``R^2(x_i)`` over the unbounded support vectors (``0 < beta_i < C``), which all lie on the
    sphere. Without unbounded support vectors (only possible when every beta is at its bound,
    e.g. ``C = 1/n``) the KKT conditions only bracket ``R^2`` between the largest ``R^2(x_i)``
    with ``beta_i = 0`` and the smallest with ``beta_i = C``; the midpoint is returned.

    Returns
    -------
    R2 : float
    R2_points : ndarray of shape (n,)
    """
    K = np.asarray(K, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or beta.shape != (K.shape[0],):
        raise ValueError(
            f"K must be (n, n) and beta (n,); got shapes {K.shape} and {beta.shape}."
        )
    Kb = K @ beta
    quad = float(beta @ Kb)
    R2_points = np.diag(K) - 2.0 * Kb + quad
    return _radius_from_points(R2_points, beta, C), R2_points


def cone_radius(radius_squared, q):
    """Data-space radius of a support vector cone (Lee & Daniels 2007, slides 36-37).

    ``cos(theta) = sqrt(1 - R^2)`` (Pythagoras in feature space, exact without bounded
    support vectors) and ``exp(-q Z^2) = cos(theta)``, so
    ``Z = sqrt(-ln(cos theta) / q) = sqrt(-ln(1 - R^2) / (2 q))``.
    """
    if not (isinstance(radius_squared, Real) and 0.0 <= radius_squared < 1.0):
        raise ValueError(f"R^2 must lie in [0, 1) for the Gaussian kernel; got {radius_squared}.")
    _check_gamma(q)
    return math.sqrt(-math.log1p(-radius_squared) / (2.0 * q))


# ============================================================================ labelings
def _segment_max_R2(Xin, P, A, sq, beta_sv, quad, q, m, rows, cols, count):
    """Largest ``R^2(y)`` over the ``m`` interior points ``y`` of each segment.

    ``Xin`` (centred points), ``P = Xin V^T`` and ``A = ||x_i - v||^2`` for the support
    vectors ``v``, ``sq = ||x_i||^2``; ``rows, cols`` index pairs of rows of ``Xin``. With
    ``y = x_i + t (x_j - x_i)``,

        ||y - v||^2 = ||x_i - v||^2 + 2 t (x_i - v).(x_j - x_i) + t^2 ||x_j - x_i||^2,

    so a segment costs ``m N_sv`` kernel evaluations whatever the dimension; memory is
    O(pairs of one block x N_sv) with blocks of at most 32 MiB.
    """
    t = np.arange(1, m + 1) / (m + 1.0)
    n_sv = P.shape[1]
    out = np.empty(rows.size)
    step = _rows_per_block(n_sv, per_entry=8 * 6)
    for s in range(0, rows.size, step):
        i, j = rows[s : s + step], cols[s : s + step]
        gij = np.einsum("ij,ij->i", Xin[i], Xin[j])
        E = np.maximum(sq[i] + sq[j] - 2.0 * gij, 0.0)       # ||x_j - x_i||^2
        B = P[i] - P[j]
        B += (gij - sq[i])[:, None]                          # (x_i - v).(x_j - x_i)
        Ai = A[i]
        best = np.full(i.size, -np.inf)
        for tk in t:
            D2 = Ai + (2.0 * tk) * B
            D2 += (tk * tk) * E[:, None]
            np.maximum(D2, 0.0, out=D2)
            np.multiply(D2, -q, out=D2)
            np.exp(D2, out=D2)
            np.maximum(best, 1.0 - 2.0 * (D2 @ beta_sv) + quad, out=best)
        out[s : s + step] = best
    count["kernel_evaluations"] = count.get("kernel_evaluations", 0) + rows.size * m * n_sv
    count["segment_points"] = count.get("segment_points", 0) + rows.size * m
    return out


def _complete_graph(Xc, inside, Vc, beta_sv, q, quad, thr, m, count):
    """Components of the complete graph on the rows ``inside`` of ``Xc``; pairs in blocks."""
    idx = np.flatnonzero(inside)
    n_in = idx.size
    check_memory(
        array_bytes((n_in, Vc.shape[0]), (n_in, Vc.shape[0])) + _BLOCK_BYTES,
        what=f"The complete-graph labeling of {n_in:,} points inside the sphere with "
        f"{Vc.shape[0]:,} support vectors",
        alternative="Use labeling='cone', or fit on a subsample (max_samples=...).",
    )
    Xin = Xc[idx]
    P = Xin @ Vc.T                                           # x_i . v
    sq = _sq_norms(Xin)
    A = np.maximum(sq[:, None] + _sq_norms(Vc)[None, :] - 2.0 * P, 0.0)   # ||x_i - v||^2
    comp = np.arange(n_in)
    pend_r, pend_c, n_pend = [], [], 0
    # rows r0 .. r1 with every j > i: at most _BLOCK_BYTES / 16 pairs at a time
    rows_per = max(1, (_BLOCK_BYTES // 16) // max(1, n_in))
    n_pairs = n_adjacent = 0
    for r0 in range(0, n_in, rows_per):
        r1 = min(n_in, r0 + rows_per)
        ii, jj = np.nonzero(np.arange(n_in)[None, :] > np.arange(r0, r1)[:, None])
        ii += r0
        if ii.size == 0:
            continue
        ok = _segment_max_R2(Xin, P, A, sq, beta_sv, quad, q, m, ii, jj, count) <= thr
        n_pairs += ii.size
        n_adjacent += int(ok.sum())
        pend_r.append(ii[ok])
        pend_c.append(jj[ok])
        n_pend += int(ok.sum())
        if n_pend > 4 * n_in + 100_000:
            comp = _merge_edges(comp, np.concatenate(pend_r), np.concatenate(pend_c))
            pend_r, pend_c, n_pend = [], [], 0
    if pend_r:
        comp = _merge_edges(comp, np.concatenate(pend_r), np.concatenate(pend_c))
    count["pairs"] = n_pairs
    count["adjacent_pairs"] = n_adjacent
    return idx, _forest_labels(comp)


def complete_graph_labels(
    X, beta, q, radius_squared, R2_points, *, n_segment_points=10, tol=None, C=None,
    return_counts=False,
):
    """Complete-graph cluster labeling (Ben-Hur et al. 2001; slide 22, "CG").

    Every pair of points inside the sphere is tested: adjacent when all
    ``n_segment_points`` interior points of the segment joining them are inside the sphere.
    Points outside the sphere (bounded support vectors) take the label of the nearest point
    inside it.

    "Inside" is ``R^2(x) <= R^2 + tol``. The sphere is only known as accurately as the dual
    was solved: the unbounded support vectors, all *on* the sphere, have ``R^2(x_i)``
    scattered around ``R^2`` by the solver's accuracy (about 1e-8 for libsvm's default
    tolerance here). ``tol=None`` uses that scatter, ``max_i |R^2(x_i) - R^2|`` over the
    unbounded support vectors (at least ``1e-10 max(1, R^2)``), and with ``C`` given every
    unbounded support vector counts as inside.

    Cost: ``n_in (n_in - 1) / 2`` pairs, ``m = n_segment_points`` segment points each,
    ``N_sv`` kernel evaluations per segment point, independent of the number of features;
    memory ``16 n_in N_sv`` bytes plus blocks of at most 32 MiB (checked against the memory
    budget). Distances are computed on centred data (translation invariant).

    Returns
    -------
    labels : ndarray of shape (n,)
    inside : ndarray of bool, shape (n,)
        The points that define the clusters.
    counts : dict (only with ``return_counts=True``)
        ``pairs`` (tested), ``adjacent_pairs``, ``segment_points``, ``kernel_evaluations``
        (``pairs * m * N_sv``) and ``distance_evaluations`` (labeling the outside points).
    """
    X = np.asarray(X, dtype=float)
    beta = np.asarray(beta, dtype=float)
    R2_points = np.asarray(R2_points, dtype=float)
    n = X.shape[0]
    _check_gamma(q)
    Xc = X - X.mean(axis=0)
    sv = beta > _ZERO_TOL
    free = np.zeros(n, dtype=bool)
    if C is not None:
        sv_, bounded = _sv_masks(beta, C)
        free = sv_ & ~bounded
    count = {}
    Vc, bs = Xc[sv], beta[sv]
    quad = float(bs @ _kernel_weighted_sum(Vc, Vc, bs, q))
    if tol is None:
        scatter = float(np.max(np.abs(R2_points[free] - radius_squared))) if free.any() else 0.0
        tol_abs = max(scatter, 1e-10 * max(1.0, radius_squared))
    else:
        tol_abs = float(tol) * max(1.0, radius_squared)
    thr = radius_squared + tol_abs
    inside = (R2_points <= thr) | free
    if not inside.any():
        inside = R2_points <= R2_points.min()
    idx, lab = _complete_graph(Xc, inside, Vc, bs, q, quad, thr, n_segment_points, count)
    labels = np.empty(n, dtype=np.intp)
    labels[idx] = lab
    out = ~inside
    count["distance_evaluations"] = int(out.sum()) * idx.size
    if out.any():
        labels[out] = lab[_nearest_index(Xc[out], Xc[idx])]
    if return_counts:
        return labels, inside, count
    return labels, inside


def _cone_components(Vc, radius, count):
    """Components of ``||v_i - v_j|| <= radius``: dense while N_sv^2 distances fit in 32 MiB,
    otherwise radius queries on a tree, block by block, merged into a spanning forest."""
    m = Vc.shape[0]
    if 8 * m * m <= _BLOCK_BYTES:
        A = euclidean_distances(Vc, squared=True) <= radius**2
        count["distance_evaluations"] = count.get("distance_evaluations", 0) + m * m
        count["adjacent_pairs"] = int((A.sum() - m) // 2)
        return _components(A)
    nn = NearestNeighbors(radius=radius).fit(Vc)
    comp = np.arange(m)
    n_edges = 0
    block = max(1, min(m, _BLOCK_BYTES // (16 * m)))  # <= 32 MiB of edges per block
    for s in range(0, m, block):
        G = nn.radius_neighbors_graph(Vc[s : s + block], radius=radius, mode="connectivity")
        G = G.tocoo()
        n_edges += G.nnz
        comp = _merge_edges(comp, G.row + s, G.col)
    count["distance_evaluations"] = None  # a tree prunes: not a fixed count
    count["adjacent_pairs"] = int((n_edges - m) // 2)
    return _forest_labels(comp)


def cone_labels(X, support_vectors, q, radius_squared, *, return_counts=False):
    """Cone cluster labeling (Lee & Daniels 2007, slide 38).

    ``support_vectors`` (boolean mask or indices) are the points on the sphere. Two of them
    are adjacent when their data-space balls of radius ``Z`` (:func:`cone_radius`) meet,
    ``||v_i - v_j|| <= 2 Z``: our reconstruction of the slides' ``ConstructConnectivity(V, Z)``,
    a data-space rule, stricter than the intersection of the feature-space cones (see the
    module docstring). Clusters are the connected components and every other point takes
    the label of its nearest support vector.

    Cost and memory: while ``N_sv x N_sv`` and ``N x N_sv`` distances fit in 32 MiB each,
    they are computed densely (``N_sv^2 + N N_sv`` distance evaluations, counted); beyond,
    radius queries and nearest-neighbour queries on a KD-tree / ball tree
    (:class:`sklearn.neighbors.NearestNeighbors`): O((N + N_sv) log N_sv) time in low
    dimension, O((N + N_sv) d) memory plus the adjacent pairs of one block of queries.

    Returns
    -------
    labels : ndarray of shape (n,)
    counts : dict (only with ``return_counts=True``)
        ``distance_evaluations`` (``None`` on the tree path), ``adjacent_pairs``,
        ``kernel_evaluations`` (0: the labeling evaluates no kernel).
    """
    X = np.asarray(X, dtype=float)
    sv = np.asarray(support_vectors)
    idx = np.flatnonzero(sv) if sv.dtype == bool else sv.astype(np.intp)
    if idx.size == 0:
        raise ValueError("cone_labels needs at least one support vector.")
    Z = cone_radius(radius_squared, q)
    Xc = X - X.mean(axis=0)
    Vc = Xc[idx]
    count = {"kernel_evaluations": 0}
    sv_labels = _cone_components(Vc, 2.0 * Z, count)
    near = _nearest_index(Xc, Vc)
    if count["distance_evaluations"] is not None:
        dense = 8 * X.shape[0] * idx.size <= _BLOCK_BYTES
        count["distance_evaluations"] = (count["distance_evaluations"] + X.shape[0] * idx.size
                                         if dense else None)
    labels = sv_labels[near]
    labels[idx] = sv_labels
    if return_counts:
        return labels, count
    return labels


# ============================================================================ estimator
class SupportVectorClustering(ClusterMixin, BaseEstimator):
    """Support vector clustering with complete-graph or cone cluster labeling.

    Solves the SVDD Wolfe dual [1]_ [3]_ (Lee & Daniels 2007, slide 18 [2]_)

    ``max_beta sum_j beta_j K(x_j, x_j) - sum_{i,j} beta_i beta_j K(x_i, x_j)``,
    ``0 <= beta_j <= C``, ``sum_j beta_j = 1``,

    with the Gaussian kernel ``K(x, y) = exp(-q ||x - y||^2)``, then labels clusters by the
    complete graph (slide 22) or by cone cluster labeling (slides 34-38).

    Symbols: ``q`` is the kernel width (the estimator's ``gamma``), ``C`` the soft-margin
    constant, ``beta`` the Lagrange multipliers (``dual_coef_``), ``a = sum_j beta_j Phi(x_j)``
    the centre and ``R`` the radius of the minimal sphere, ``R^2(x) = ||Phi(x) - a||^2``
    (slide 19), ``theta`` the half-angle of a support vector cone and ``Z`` its data-space
    radius.

    Parameters
    ----------
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)`` (the slides' ``q``). ``None``
        means the median heuristic :func:`mmcedu.kernels.median_gamma`. Larger values give
        more support vectors and more clusters; :func:`gamma_path` generates the slides'
        sequence of values (the q-list) and :func:`cluster_counts` the number of clusters
        along it.
    C : float, default=1.0
        Inverse regularization: the upper bound of the box ``0 <= beta_j <= C`` on the dual
        coefficients. Must be at least ``1/n_samples`` (otherwise ``sum beta = 1`` is
        infeasible). ``C >= 1`` allows no bounded support vectors (outliers); otherwise
        there are at most ``1/C`` of them (each carries ``beta = C``).
    labeling : {"cone", "complete_graph"}, default="cone"
        Cluster-labeling rule.
    n_segment_points : int, default=10
        Number ``m`` of interior sample points on each segment for ``"complete_graph"``.
    solver : {"libsvm", "cvxpy"}, default="libsvm"
        Algorithm for the dual. ``"libsvm"``: :class:`sklearn.svm.OneClassSVM` with the RBF
        kernel on the data, ``nu = 1/(N min(C, 1))`` and ``beta = alpha/(nu N)`` (identical
        to SVDD for the Gaussian kernel); libsvm computes kernel columns on demand and keeps
        a cache of ``cache_size`` MB (200 by default, ``solver_options={"cache_size": ...}``),
        so no ``N x N`` array is formed. ``"cvxpy"``: the dual as a quadratic program on the
        ``N x N`` kernel matrix.
    cvxpy_solver : str or None, default=None
        cvxpy back end for ``solver="cvxpy"``; ``None`` means CLARABEL (tolerances 1e-12).
    solver_options : dict or None, default=None
        Passed to the back end of ``solver`` (``OneClassSVM`` or ``cvxpy.Problem.solve``).
        ``{"tol": ...}`` for ``solver="libsvm"`` is libsvm's own absolute tolerance and
        replaces the rule of ``tol``.
    tol : float or None, default=None
        Stop when libsvm's largest violation of the KKT conditions is below
        ``tol nu N ||a||^2`` (the scale of its gradients): the points' ``R^2(x)`` are then
        consistent to about ``2 tol (1 - R^2)``, which is what the cone radius ``Z`` and the
        complete graph's inside test need. A probe fit at libsvm's default tolerance
        estimates ``||a||^2``; the fit is repeated once at the requested tolerance if the
        probe's was looser. ``None`` means 1e-7 for up to 10,000 samples (beta then agrees
        with ``solver="cvxpy"`` to about 1e-6 and so do the support vectors) and 0.05 above,
        where a tight tolerance costs millions of SMO iterations (at n = 20,000 and
        ``gamma=200`` on two moons and a disk: 1.9 million iterations at 1e-7, 900 at 0.05,
        with the same clusters). Only for ``solver="libsvm"``.
    max_samples : int, float or None, default=None
        Fit on a random subsample of this many samples (a float: this fraction of
        ``n_samples``), drawn without replacement with ``random_state``, and label every
        sample by the rule of :meth:`predict` (the nearest labeled point of the subsample).
        ``None`` fits on all samples. For data sets where libsvm's solve is too slow: its
        cost grows like ``N N_sv`` SMO work. ``gamma`` is in data units, so the subsample must
        be dense enough at that width (check that ``n_clusters_`` is stable when
        ``max_samples`` doubles). ``C`` keeps its meaning on the subsample: at most ``1/C``
        bounded support vectors among ``max_samples`` points, and ``C >= 1/max_samples``.
    random_state : int, RandomState instance or None, default=None
        Seed of the subsample drawn for ``max_samples`` (unused otherwise).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point, ``0 .. n_clusters_ - 1``.
    n_clusters_ : int
        Number of clusters in ``labels_`` (found by the labeling, not given).
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``beta`` of the SVDD dual; they sum to 1 (zero outside the subsample
        with ``max_samples``).
    support_ : ndarray of int
        Indices with ``beta > 0`` (support vectors, bounded or not).
    bounded_support_ : ndarray of int
        Indices with ``beta = C`` (bounded support vectors: outside the sphere, outliers).
    subsample_ : ndarray of int or None
        The samples the dual was solved on (``max_samples``), else ``None``.
    radius_squared_ : float
        ``R^2``, from the unbounded support vectors.
    distances_squared_ : ndarray of shape (n_samples,)
        ``R^2(x_i)`` for every training point.
    cone_radius_ : float
        ``Z`` of the cone labeling (computed for both labelings).
    pythagoras_residual_ : float
        ``1 - ||a||^2 - R^2``: zero when the Pythagorean step ``cos(theta) = sqrt(1 - R^2)`` is
        exact (no bounded support vectors); equals ``C * sum_j xi_j`` otherwise.
    gamma_ : float
        The RBF parameter (``q``) used.
    n_iter_ : int
        Iterations of the dual solver (libsvm's SMO iterations summed over its fits, or the
        cvxpy back end's).
    solver_info_ : dict
        ``solver``, ``n_iter``, ``n_fits`` and ``libsvm_tol`` (libsvm's absolute tolerance of
        the last fit) for ``solver="libsvm"``.
    labeling_counts_ : dict
        Deterministic cost of the labeling, counted by the code: ``kernel_evaluations``
        (complete graph: ``pairs * n_segment_points * N_sv``; cone: 0),
        ``distance_evaluations`` (cone, dense path: ``N_sv^2 + N N_sv``; ``None`` on the
        tree path), ``pairs``, ``segment_points`` (complete graph), ``adjacent_pairs``; and
        ``radius_kernel_evaluations``, the kernel evaluations of ``R^2(x)`` for all points
        and of ``||a||^2`` (``N N_sv + N_sv^2``).
    solve_time_, labeling_time_ : float
        Wall-clock seconds of the SVDD solve and of the labeling.
    n_features_in_ : int

    See Also
    --------
    gamma_path : the kernel widths to explore (the slides' q-list).
    cluster_counts : the number of clusters at each width of a path.
    UMCRLS, GMMC : kernel clustering with a given number of clusters.

    Notes
    -----
    Support vector clustering has no ``n_clusters`` parameter: the number of clusters is
    found (``n_clusters_``) and grows with ``gamma``.

    Memory (bytes; ``N`` samples, ``d`` features, ``N_sv`` support vectors):

    - ``solver="libsvm"`` (default): the centred data ``8 N d``, libsvm's copy of it, its
      kernel cache (``cache_size`` MB, 200 by default), O(N) dual variables and gradients;
      ``R^2(x)`` of every point in blocks of at most 32 MiB. No ``N x N`` array.
    - ``solver="cvxpy"``: the ``N x N`` kernel and about three copies inside cvxpy,
      ``32 N^2``, checked against the memory budget (:func:`mmcedu.get_config`) before
      allocating; the error names ``solver="libsvm"``.
    - ``labeling="cone"``: dense ``N_sv x N_sv`` and ``N x N_sv`` distances while each fits
      in 32 MiB, otherwise a KD-tree / ball tree (O((N + N_sv) d)); :meth:`predict` uses
      the same rule.
    - ``labeling="complete_graph"``: ``16 n_in N_sv`` for the ``n_in`` points inside the
      sphere plus 32 MiB blocks (checked against the budget); its time,
      ``n_in (n_in - 1) / 2 * n_segment_points * N_sv`` kernel evaluations, is announced
      by a warning above 1e9, and before the solve when ``n (n - 1) / 2 *
      n_segment_points`` exceeds 5e7 (n = 3,163 with ``n_segment_points=10``).

    Warnings: :class:`~mmcedu.exceptions.ClusterCountWarning` when ``gamma=None`` (the median
    heuristic) finds a single cluster, or a single cluster and singleton clusters only (on
    standardized real data the median width is usually too small for SVC: explore ``gamma``);
    :class:`~mmcedu.exceptions.DegenerateDataWarning` when every sample is a support vector
    or its own cluster (``gamma`` too large), when no sample lies on the sphere (every
    support vector bounded, e.g. ``C = 1/n_samples``) and for identical samples; a
    ``UserWarning`` before a complete-graph labeling of more than 1e9 kernel evaluations.

    References
    ----------
    .. [1] A. Ben-Hur, D. Horn, H. T. Siegelmann, V. Vapnik. Support vector clustering.
       JMLR 2:125-137, 2001.
    .. [2] S.-H. Lee, K. Daniels. Gaussian kernel width exploration and cone cluster labeling
       for support vector clustering. Slides, UMass Lowell, 2007 (slides 18-19: SVDD dual and
       R^2(x); 28-29: q-list; 34-38: cone cluster labeling; 41: complexity table).
    .. [3] D. M. J. Tax, R. P. W. Duin. Support vector data description. Mach. Learn.
       54:45-66, 2004.

    Examples
    --------
    >>> from mmcedu import SupportVectorClustering
    >>> from mmcedu.datasets import two_circles
    >>> X, y = two_circles(100, noise=0.03, random_state=0)
    >>> model = SupportVectorClustering(gamma=80.0, labeling="cone").fit(X)
    >>> model.n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "labeling": [StrOptions({"cone", "complete_graph"})],
        "n_segment_points": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"libsvm", "cvxpy"})],
        "cvxpy_solver": [str, None],
        "solver_options": [dict, None],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "max_samples": [
            Interval(Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        gamma=None,
        C=1.0,
        labeling="cone",
        n_segment_points=10,
        solver="libsvm",
        cvxpy_solver=None,
        solver_options=None,
        tol=None,
        max_samples=None,
        random_state=None,
    ):
        self.gamma = gamma
        self.C = C
        self.labeling = labeling
        self.n_segment_points = n_segment_points
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.solver_options = solver_options
        self.tol = tol
        self.max_samples = max_samples
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _subsample(self, n):
        if self.max_samples is None:
            return None
        if isinstance(self.max_samples, Integral):
            m = int(self.max_samples)
        else:
            m = max(2, int(math.ceil(float(self.max_samples) * n)))
        if m >= n:
            return None
        rng = check_random_state(self.random_state)
        return np.sort(rng.choice(n, size=m, replace=False))

    def _fit_identical(self, X, q):
        n = X.shape[0]
        warnings.warn(
            f"All {n} samples are identical: there is no cluster structure; every sample is "
            "put in cluster 0 (n_clusters_=1).",
            DegenerateDataWarning,
            stacklevel=3,
        )
        self.gamma_ = q
        self.dual_coef_ = np.full(n, 1.0 / n)
        self.support_ = np.arange(n)
        self.bounded_support_ = np.arange(n) if self.C * n <= 1.0 + 1e-12 else np.arange(0)
        self.subsample_ = None
        self.radius_squared_ = 0.0
        self.distances_squared_ = np.zeros(n)
        self.cone_radius_ = 0.0
        self.pythagoras_residual_ = 0.0
        self.n_iter_ = 0
        self.solver_info_ = {"solver": self.solver, "n_iter": 0, "n_fits": 0}
        self.labeling_counts_ = {"kernel_evaluations": 0, "radius_kernel_evaluations": 0}
        self.solve_time_ = self.labeling_time_ = 0.0
        self.labels_ = np.zeros(n, dtype=np.intp)
        self.n_clusters_ = 1
        self._center = X[0].copy()
        self._label_points = X[:1] - self._center
        self._label_point_labels = np.zeros(1, dtype=np.intp)
        self._support_vectors = X[:1] - self._center
        self._support_beta = np.ones(1)
        self._quad = 1.0
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Solve the SVDD dual and label the clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        n = X.shape[0]
        if n < 2:
            raise ValueError(
                f"Support vector clustering needs at least 2 samples; got n_samples={n}."
            )
        check_scale(X)
        _check_C(self.C, n)
        q = median_gamma(X) if self.gamma is None else float(self.gamma)
        if all_identical(X):
            return self._fit_identical(X, q)

        sub = self._subsample(n)
        fit_idx = np.arange(n) if sub is None else sub
        m = fit_idx.size
        if sub is not None:
            _check_C(self.C, m, what="max_samples")
        center = X[fit_idx].mean(axis=0)
        Xc = X - center
        Xf = Xc[fit_idx]

        # ---- a complete-graph labeling that is long whatever the support vectors: say so now
        seg_points = m * (m - 1) / 2 * self.n_segment_points
        warned_early = self.labeling == "complete_graph" and seg_points > _CG_WARN_SEGMENT_POINTS
        if warned_early:
            warnings.warn(
                f"The complete-graph labeling of {m:,} samples tests up to {m * (m - 1) // 2:,} "
                f"pairs x {self.n_segment_points} segment points, each point costing one kernel "
                f"evaluation per support vector: at least {seg_points:.2g} kernel evaluations "
                "after the SVDD solve (minutes to hours). labeling='cone' needs about "
                "(n_samples + N_sv) N_sv distance evaluations; max_samples=... fits on a "
                "subsample.",
                UserWarning,
                stacklevel=2,
            )

        # ---- the dual
        if self.solver == "libsvm":
            beta_f, info = _svdd_libsvm_data(
                Xf, q, self.C, tol=self.tol, solver_options=self.solver_options
            )
        else:
            check_memory(
                4 * array_bytes((m, m)),
                what=f"SupportVectorClustering(solver='cvxpy') on {m:,} samples (the n x n "
                "kernel and about three copies inside cvxpy and its back end)",
                alternative="Use solver='libsvm' (kernel columns on demand, no n x n array), "
                "or fit on a subsample (max_samples=...).",
            )
            beta_f, info = svdd_dual(
                rbf_kernel(Xf, gamma=q), self.C, solver="cvxpy",
                cvxpy_solver=self.cvxpy_solver, solver_options=self.solver_options,
            )
        sv_f, bounded_f = _sv_masks(beta_f, self.C)
        free_f = sv_f & ~bounded_f

        # ---- R^2(x) for every point and R^2, in blocks over the support vectors
        S = np.flatnonzero(sv_f)
        Vc, bs = Xf[S], beta_f[S]
        rcount = {}
        quad = float(bs @ _kernel_weighted_sum(Vc, Vc, bs, q, count=rcount))
        R2_points = 1.0 - 2.0 * _kernel_weighted_sum(Xc, Vc, bs, q, count=rcount) + quad
        R2 = _radius_from_points(R2_points[fit_idx], beta_f, self.C)
        R2c = min(R2, 1.0 - 1e-15)

        # ---- labeling
        t0 = time.perf_counter()
        if self.labeling == "cone":
            Vmask = free_f if free_f.any() else (R2_points[fit_idx] <= R2_points[fit_idx].min())
            V = fit_idx[Vmask]
            labels, counts = cone_labels(Xc, V, q, R2c, return_counts=True)
            label_points = V
        else:
            inside_f = self._cg_inside(R2_points[fit_idx], R2, free_f)
            n_in = int(inside_f.sum())
            evals = n_in * (n_in - 1) / 2 * self.n_segment_points * S.size
            if evals > _CG_WARN_EVALUATIONS and not warned_early:
                warnings.warn(
                    f"The complete-graph labeling will evaluate the kernel about {evals:.2g} "
                    f"times (n_in (n_in - 1) / 2 = {n_in * (n_in - 1) // 2:,} pairs x "
                    f"{self.n_segment_points} segment points x {S.size:,} support vectors): "
                    "minutes to hours. labeling='cone' needs about "
                    f"{(n + S.size) * S.size:.2g} distance evaluations; max_samples=... fits "
                    "on a subsample.",
                    UserWarning,
                    stacklevel=2,
                )
            labels_f, inside_f, counts = complete_graph_labels(
                Xf, beta_f, q, R2, R2_points[fit_idx], n_segment_points=self.n_segment_points,
                tol=None, C=self.C, return_counts=True,
            )
            label_points = fit_idx[inside_f]
            labels = np.empty(n, dtype=np.intp)
            labels[fit_idx] = labels_f
            if sub is not None:
                rest = np.setdiff1d(np.arange(n), fit_idx)
                labels[rest] = labels_f[inside_f][_nearest_index(Xc[rest], Xc[label_points])]
                counts["distance_evaluations"] += rest.size * label_points.size
        self.labeling_time_ = time.perf_counter() - t0
        counts["radius_kernel_evaluations"] = rcount.get("kernel_evaluations", 0)

        beta = np.zeros(n)
        beta[fit_idx] = beta_f
        self.gamma_ = q
        self.dual_coef_ = beta
        self.support_ = fit_idx[sv_f]
        self.bounded_support_ = fit_idx[bounded_f]
        self.subsample_ = sub
        self.radius_squared_ = R2
        self.distances_squared_ = R2_points
        self.cone_radius_ = cone_radius(R2c, q)
        self.pythagoras_residual_ = 1.0 - quad - R2
        self.solve_time_ = info["solve_time"]
        self.n_iter_ = int(info["n_iter"])
        self.solver_info_ = {k: v for k, v in info.items() if k != "solve_time"}
        self.labeling_counts_ = counts
        self.labels_ = labels
        self.n_clusters_ = int(np.unique(labels).size)
        self._center = center
        self._support_vectors = Vc
        self._support_beta = bs
        self._quad = quad
        self._label_points = Xc[label_points]
        self._label_point_labels = labels[label_points]
        self._warn_degenerate(X, m, sv_f, free_f)
        return self

    @staticmethod
    def _cg_inside(R2_fit, R2, free_f):
        scatter = float(np.max(np.abs(R2_fit[free_f] - R2))) if free_f.any() else 0.0
        return (R2_fit <= R2 + max(scatter, 1e-10 * max(1.0, R2))) | free_f

    def _warn_degenerate(self, X, m, sv_f, free_f):
        n = X.shape[0]
        if not free_f.any():
            warnings.warn(
                f"No sample lies on the sphere: every support vector is bounded (C={self.C:g}, "
                f"{int(sv_f.sum())} bounded support vectors of beta = C). R^2 is only "
                "bracketed and the labeling rests on the point closest to the centre. "
                + ("C = 1/n_samples makes every sample an outlier; " if self.C * m <= 1 + 1e-9
                   else "")
                + "use a larger C (C >= 1 allows no outliers).",
                DegenerateDataWarning,
                stacklevel=3,
            )
            return
        n_distinct = np.unique(X, axis=0).shape[0] if n <= 100_000 else n
        if (int(sv_f.sum()) == m and m > 2) or (self.n_clusters_ == n_distinct and n_distinct > 2):
            warnings.warn(
                f"gamma={self.gamma_:.3g} is too large for these data: "
                + (f"every sample is a support vector ({m} of {m})" if int(sv_f.sum()) == m
                   else f"every distinct sample is its own cluster ({self.n_clusters_} clusters)")
                + f", n_clusters_={self.n_clusters_}. Decrease gamma (see gamma_path(X) for "
                "the widths to explore; gamma=None is the median heuristic).",
                DegenerateDataWarning,
                stacklevel=3,
            )
        elif self.gamma is None and self._singletons_only():
            sizes = np.bincount(self.labels_)
            found = ("a single cluster" if self.n_clusters_ == 1 else
                     f"a single cluster of {sizes.max()} samples and {self.n_clusters_ - 1} "
                     "singleton cluster(s) (isolated points, e.g. outliers)")
            warnings.warn(
                f"SupportVectorClustering found {found} at gamma={self.gamma_:.3g} "
                "(gamma=None: the median heuristic). The number of clusters grows with gamma: "
                "explore larger values, e.g. the widths of gamma_path(X) (the slides' q-list) "
                "with their cluster counts (cluster_counts(X)), or choose gamma by a "
                "label-free search.",
                ClusterCountWarning,
                stacklevel=3,
            )

    def _singletons_only(self):
        """One cluster, or one cluster and clusters of a single sample each."""
        sizes = np.sort(np.bincount(self.labels_))
        return self.n_clusters_ == 1 or (sizes.size > 1 and sizes[-2] == 1 and sizes[-1] > 2)

    # ------------------------------------------------------------------ new points
    def predict(self, X):
        """Label new points by their nearest labeled training point.

        The labeled points are the support vectors on the sphere (cone labeling) or the
        training points inside the sphere (complete graph); this is the rule ``fit`` uses for
        the remaining training points, so ``predict`` on the training data returns
        ``labels_``. Distances as in ``fit``: one BLAS product per block while they fit in
        32 MiB, otherwise a KD-tree / ball tree on the labeled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xc = X - self._center
        return self._label_point_labels[_nearest_index(Xc, self._label_points)]

    def distance_squared(self, X):
        """``R^2(x) = ||Phi(x) - a||^2`` for new points (slide 19); the sphere is ``R^2(x) = R^2``.

        Computed in blocks over the support vectors (``len(X) N_sv`` kernel evaluations,
        memory at most 32 MiB per block).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        r2 : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xc = X - self._center
        return 1.0 - 2.0 * _kernel_weighted_sum(
            Xc, self._support_vectors, self._support_beta, self.gamma_
        ) + self._quad


# ============================================================================ widths
GammaPath = namedtuple(
    "GammaPath", ["gamma", "radius_squared", "n_support", "estimated_length", "radius_squared_limit"]
)
GammaPath.__doc__ = """Result of :func:`gamma_path`: the kernel widths to explore and what they give.

gamma : ndarray
    The RBF parameters (the slides' q), increasing.
radius_squared : ndarray
    ``R^2`` at each (non-decreasing).
n_support : ndarray of int
    Number of support vectors at each.
estimated_length : float
    The slides' estimate of the length, ``lg(max ||x_i - x_j||^2) - lg(min ||x_i - x_j||^2)``
    (slide 29; the minimum over distinct points).
radius_squared_limit : float
    The limit of ``R^2`` as ``gamma -> infinity``: ``1 - 1/U`` for ``U`` distinct points and
    ``C >= 1/U`` (slide 28 states ``1 - 1/N`` for distinct points).
"""


def _radius_squared_limit(group_sizes, C):
    """``lim R^2`` as ``q -> infinity`` for groups of identical points of the given sizes.

    ``K -> `` block diagonal with all-ones blocks on the groups, so ``beta^T K beta ->
    sum_g m_g^2`` with the group masses ``m_g = sum_{i in g} beta_i <= C |g|``. The dual
    minimises it: water-filling, ``m_g = min(C |g|, lam)`` with ``sum_g m_g = 1``. A point of
    an uncapped group (on the sphere) has ``R^2 = 1 - 2 lam + sum_g m_g^2``; without capped
    groups ``lam = 1/U`` and ``R^2 = 1 - 1/U``.
    """
    caps = np.sort(np.minimum(min(C, 1.0) * np.asarray(group_sizes, dtype=float), 1.0))
    U = caps.size
    if caps[0] >= 1.0 / U:
        return 1.0 - 1.0 / U  # no group capped (always for C >= 1/U)
    lam = 1.0 / U
    used = 0.0
    for k in range(U):  # caps ascending: cap the smallest groups first
        lam = (1.0 - used) / (U - k)
        if caps[k] >= lam:
            break
        used += caps[k]
    else:
        return float(1.0 - np.sum(caps**2))  # every group capped: no point on the sphere
    masses = np.minimum(caps, lam)
    return float(1.0 - 2.0 * lam + np.sum(masses**2))


def gamma_path(X, C=1.0, *, solver="libsvm", cvxpy_solver=None, solver_options=None,
               max_length=100, rtol=1e-3):
    """Increasing kernel widths for exploring SVC: the slides' q-list (Lee & Daniels 2007, slides 28-29).

    ``R^2`` as a function of ``q`` (the RBF parameter ``gamma``) starts at ``R^2(0) = 0``, is
    non-decreasing and tends to a limit ``R^2_inf`` (slide 28: ``1 - 1/N`` for ``N`` distinct
    points; with duplicates ``1 - 1/U`` for ``U`` distinct points, since identical points
    keep ``K = 1`` at every width). The path starts at ``q_1 = 1 / max ||x_i - x_j||^2`` and
    uses a secant-like step: the line through the two latest points of the curve (the first
    step uses the lemma's point ``(0, 0)``) is extended to the level ``R^2_inf`` and its
    crossing is the next ``q``,

        q_{k+1} = q_k + (R^2_inf - R^2(q_k)) (q_k - q_{k-1}) / (R^2(q_k) - R^2(q_{k-1})).

    Where the curve is concave the secant stays above it and the sequence grows about
    geometrically: if the gap ``R^2_inf - R^2`` decays like ``q^-p``, the step ratio ``r``
    solves ``r^(p+1) = r + 1``. The path stops when every point is a support vector, when
    ``R^2`` is within ``rtol`` (relative) of ``R^2_inf``, or after ``max_length`` values (then
    with a :class:`~sklearn.exceptions.ConvergenceWarning`). The slides do not spell the
    step out; this is our reconstruction from "secant-like algorithm" and the lemmas.

    Memory and time: the pairwise distances (``4 N^2`` bytes) and, per width, the ``N x N``
    kernel (``24 N^2`` while it is computed) and one SVDD solve; checked against the memory
    budget before allocating. For large ``N``, run it on a subsample.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    C : float, default=1.0
    solver, cvxpy_solver, solver_options
        The SVDD solver on the kernel matrix, as in :func:`svdd_dual`.
    max_length : int, default=100
    rtol : float, default=1e-3

    Returns
    -------
    GammaPath
        ``gamma``, ``radius_squared``, ``n_support``, ``estimated_length``,
        ``radius_squared_limit``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(
            f"gamma_path needs a 2-D array with at least 2 samples; got shape {X.shape}."
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; remove or impute those entries.")
    if not (isinstance(max_length, Integral) and max_length >= 1):
        raise ValueError(f"max_length must be a positive integer; got {max_length!r}.")
    if not (isinstance(rtol, Real) and 0 < rtol < 1):
        raise ValueError(f"rtol must lie in (0, 1); got {rtol!r}.")
    check_scale(X)
    n = X.shape[0]
    _check_C(C, n)
    check_memory(
        array_bytes((n * (n - 1) // 2,)) + 3 * array_bytes((n, n)),
        what=f"gamma_path on {n:,} samples (all pairwise distances and an n x n kernel per "
        "width)",
        alternative="Run it on a subsample, e.g. gamma_path(X[rng.choice(len(X), 2000, "
        "replace=False)]), and fit SupportVectorClustering(gamma=...) on all samples.",
    )
    Xc = X - X.mean(axis=0)
    _, group_sizes = np.unique(Xc, axis=0, return_counts=True)
    if group_sizes.size == 1:
        raise ValueError("All samples are identical: there is no kernel width to explore.")
    d2 = pdist(Xc, "sqeuclidean")
    pos = d2[d2 > 0]
    if pos.size == 0:
        raise ValueError(
            "The samples differ by less than the float64 resolution of their squared "
            "distances: standardize X (sklearn.preprocessing.StandardScaler)."
        )
    estimate = float(np.log2(pos.max()) - np.log2(pos.min()))
    target = _radius_squared_limit(group_sizes, C)
    qs, R2s, nsv = [], [], []
    q_prev, R2_prev = 0.0, 0.0  # lemma: q = 0 gives R^2 = 0
    q = 1.0 / pos.max()
    stopped = False
    while len(qs) < max_length:
        K = rbf_kernel(Xc, gamma=q)
        beta, _ = svdd_dual(
            K, C, solver=solver, cvxpy_solver=cvxpy_solver, solver_options=solver_options
        )
        R2, _ = svdd_radius_squared(K, beta, C)
        del K
        qs.append(q)
        R2s.append(R2)
        nsv.append(int(np.count_nonzero(beta > _ZERO_TOL)))
        if nsv[-1] == n or target - R2 <= rtol * target:
            stopped = True
            break
        slope = (R2 - R2_prev) / (q - q_prev)
        q_next = q + (target - R2) / slope if slope > 0 else 2.0 * q
        q_prev, R2_prev = q, R2
        q = max(q_next, 1.01 * q)
    if not stopped:
        warnings.warn(
            f"gamma_path stopped at max_length={max_length} widths before R^2 came within "
            f"rtol={rtol:g} of its limit {target:.6g} (last R^2 = {R2s[-1]:.6g}, "
            f"{nsv[-1]} of {n} samples support vectors). Increase max_length or rtol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return GammaPath(np.array(qs), np.array(R2s), np.array(nsv), estimate, target)


ClusterCounts = namedtuple(
    "ClusterCounts", ["gamma", "n_clusters", "n_support", "n_bounded", "labels"]
)
ClusterCounts.__doc__ = """Result of :func:`cluster_counts`: what SVC finds at each width.

gamma : ndarray
    The RBF parameters, as given (or the widths of :func:`gamma_path`).
n_clusters : ndarray of int
    ``n_clusters_`` at each.
n_support, n_bounded : ndarray of int
    Support vectors and bounded support vectors at each.
labels : ndarray of shape (len(gamma), n_samples)
    ``labels_`` at each.
"""


def cluster_counts(X, gamma=None, **params):
    """The number of clusters SVC finds along a sequence of widths (e.g. the q-list).

    Fits :class:`SupportVectorClustering` with ``params`` at every width and records
    ``n_clusters_`` and ``labels_``: the raw material of label-free width choices such as a
    plateau of the cluster count along the q-list (Lee & Daniels 2007, slides 28-33 explore
    the widths; choosing one is left to the user). The warnings of the single fits are
    silenced: a one-cluster or all-singletons answer at the ends of a path is expected.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    gamma : array-like of float or None, default=None
        The widths; ``None`` means ``gamma_path(X, C=params.get("C", 1.0)).gamma``.
    **params
        Parameters of :class:`SupportVectorClustering` other than ``gamma``.

    Returns
    -------
    ClusterCounts
    """
    X = np.asarray(X, dtype=float)
    if "gamma" in params:
        raise ValueError("Pass the widths as the argument gamma, not in **params.")
    if gamma is None:
        gamma = gamma_path(X, C=params.get("C", 1.0)).gamma
    gamma = np.atleast_1d(np.asarray(gamma, dtype=float))
    if gamma.ndim != 1 or gamma.size == 0:
        raise ValueError(f"gamma must be a non-empty 1-D sequence of widths; got {gamma!r}.")
    k, nsv, nb, labels = [], [], [], []
    for q in gamma:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (ClusterCountWarning, DegenerateDataWarning))
            m = SupportVectorClustering(gamma=float(q), **params).fit(X)
        k.append(m.n_clusters_)
        nsv.append(m.support_.size)
        nb.append(m.bounded_support_.size)
        labels.append(m.labels_)
    return ClusterCounts(gamma, np.array(k), np.array(nsv), np.array(nb), np.array(labels))

