"""Support vector clustering with kernel-width exploration and cone cluster labeling.

:class:`SupportVectorClustering` (Ben-Hur et al. 2001; Lee & Daniels 2007), the slides' q-list of
kernel widths (:func:`gamma_path`) and the method's steps on their own (:func:`svdd_dual`,
:func:`svdd_radius_squared`, :func:`cone_radius`, :func:`complete_graph_labels`,
:func:`cone_labels`). Every distance is computed on centred data (``X - mean``): the method is
translation invariant, and ``||x||^2 + ||y||^2 - 2 x.y`` cancels catastrophically far from the
origin.
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

from ._base import LabelFreeMixin
from ._cvxpy import solve_cvxpy
from ._validation import all_identical, array_bytes, check_memory, check_scale
from .exceptions import ClusterCountWarning, DegenerateDataWarning
from .kernels import median_gamma, rbf_kernel

__all__ = [
    "SupportVectorClustering",
    "LABEL_FREE_WIDTHS",
    "svdd_dual",
    "svdd_radius_squared",
    "cone_radius",
    "gamma_path",
    "GammaPath",
    "complete_graph_labels",
    "cone_labels",
]

#: Number of widths of the q-list in :meth:`SupportVectorClustering.label_free_rule`
#: (evenly spaced indices of ``gamma_path(X).gamma``, the first and the last included).
LABEL_FREE_WIDTHS = 8
#: libsvm stopping tolerance of :func:`svdd_dual` on a precomputed kernel.
_LIBSVM_TOL = 1e-9
#: CLARABEL tolerances for solver="cvxpy" (the default back end; ``solver_options`` overrides).
_CLARABEL_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10}
#: beta below this (relative to 1 = sum beta) counts as zero.
_ZERO_TOL = 1e-7
#: beta within this (relative to C) of C counts as bounded.
_BOUND_RTOL = 1e-6
#: tol=None: the relative tolerance up to _TOL_SWITCH samples, and above.
_TOL_SWITCH, _TOL_SMALL, _TOL_LARGE = 10_000, 1e-7, 0.05
#: libsvm tolerance of the probe fit that estimates ||a||^2 (libsvm's default).
_PROBE_TOL = 1e-3
#: the largest temporary block (bytes) of the blocked kernel and distance computations.
_BLOCK_BYTES = 2**25
#: libsvm's kernel cache by default, in MB of 2**20 bytes (scikit-learn's ``cache_size``).
_CACHE_MB = 200
#: the complete-graph labeling warns above this many kernel evaluations (after the solve)
#: or segment points (before it: each costs N_sv kernel evaluations).
_CG_WARN_EVALUATIONS, _CG_WARN_SEGMENT_POINTS = 1e9, 5e7


# ============================================================================ helpers
def _check_C(C, n_samples, *, what="n_samples"):
    if C * n_samples < 1.0 - 1e-12:
        raise ValueError(
            f"C={C!r} is infeasible for {what}={n_samples}: the SVDD dual needs "
            f"sum(beta) = 1 with 0 <= beta_j <= C, which requires C >= 1/{what} = "
            f"{1.0 / n_samples:.6g}. Increase C (C >= 1 means no outliers)."
        )


def _check_gamma(q):
    if not (isinstance(q, Real) and math.isfinite(q) and q > 0):
        raise ValueError(f"q (the RBF parameter gamma) must be a positive finite number; got {q!r}.")


def _rows_per_block(n_cols, per_entry=8):
    """Rows of an ``(rows, n_cols)`` block of ``per_entry`` bytes per entry within 32 MiB."""
    return max(1, int(_BLOCK_BYTES // max(1, per_entry * n_cols)))


def _sq_norms(A):
    return np.einsum("ij,ij->i", A, A)


def _kernel_weighted_sum(A, B, w, q, *, count=None):
    """``exp(-q ||a_i - b_j||^2) @ w`` for every row ``a_i`` of ``A``, in blocks of at most
    32 MiB; ``count`` (a dict) accumulates ``kernel_evaluations``."""
    if B.shape[0] == 0:
        return np.zeros(A.shape[0])
    out = np.empty(A.shape[0])
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


def _centre_norm(V, b, q, count=None):
    """``||a||^2 = sum_{i,j} b_i b_j K(v_i, v_j)`` over the support vectors ``V``."""
    return float(b @ _kernel_weighted_sum(V, V, b, q, count=count))


def _nearest_index(X, Y):
    """Index of the nearest row of ``Y`` for every row of ``X``: one BLAS product while the
    distances fit in 32 MiB (ties to the smaller index), otherwise a KD-tree / ball tree."""
    if 8 * X.shape[0] * Y.shape[0] <= _BLOCK_BYTES:
        return euclidean_distances(X, Y, squared=True).argmin(axis=1)
    return NearestNeighbors(n_neighbors=1).fit(Y).kneighbors(X, return_distance=False)[:, 0]


def _merge_edges(comp, rows, cols):
    """Add the edges ``rows[k] -- cols[k]`` to the star forest ``comp`` (``comp[v]``: the
    smallest vertex of ``v``'s component); memory O(len(comp) + len(rows))."""
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
    """Support vectors, bounded ones and unbounded ones. With ``C >= 1`` nothing is bounded:
    ``beta_i = 1`` leaves every other beta at zero and ``x_i`` is the (point) sphere."""
    sv = beta > _ZERO_TOL
    bounded = np.zeros_like(sv) if C >= 1.0 else sv & (beta >= C * (1.0 - _BOUND_RTOL))
    return sv, bounded, sv & ~bounded


def _radius_from_points(R2_points, beta, C):
    """``R^2`` from the points' ``R^2(x_i)`` (see :func:`svdd_radius_squared`)."""
    sv, bounded, free = _sv_masks(beta, C)
    if free.any():
        R2 = float(R2_points[free].mean())
    else:
        lo = float(R2_points[~sv].max()) if (~sv).any() else None
        hi = float(R2_points[bounded].min()) if bounded.any() else None
        R2 = hi if lo is None else (lo if hi is None else 0.5 * (lo + hi))
    return max(R2, 0.0)


def _inside(R2_points, R2, free):
    """The points inside the sphere, ``R^2(x) <= thr``, and ``thr`` (:func:`complete_graph_labels`)."""
    scatter = float(np.max(np.abs(R2_points[free] - R2))) if free.any() else 0.0
    thr = R2 + max(scatter, 1e-10 * max(1.0, R2))
    inside = (R2_points <= thr) | free
    if not inside.any():
        inside = R2_points <= R2_points.min()
    return inside, thr


# ============================================================================ the dual
def _cvxpy_bytes(n):
    """The cvxpy SVDD solve: the ``n x n`` kernel and about three copies inside cvxpy."""
    return 4 * array_bytes((n, n))


def svdd_dual(K, C=1.0, *, solver="libsvm", cvxpy_solver=None, solver_options=None):
    """Solve the SVDD Wolfe dual ``max_beta sum_j beta_j K_jj - beta^T K beta`` subject to
    ``0 <= beta <= C``, ``sum beta = 1`` for a kernel matrix ``K`` (slide 18 of Lee & Daniels
    2007), with ``C >= 1/n`` (``C >= 1`` is the problem at ``C = 1``).

    ``solver="libsvm"`` needs a constant diagonal (the Gaussian kernel's ``K_jj = 1``), where the
    problem is the one-class SVM of Schoelkopf et al. (2001): :class:`~sklearn.svm.OneClassSVM` on the
    precomputed kernel with ``nu = 1/(n min(C, 1))``, whose ``alpha`` (summing to ``nu n``) give
    ``beta = alpha / (nu n)``; ``solver_options`` are its keyword arguments (default ``tol=1e-9``,
    ``shrinking=False``). ``solver="cvxpy"`` solves the quadratic program with ``cvxpy_solver``
    (``None`` means CLARABEL, tolerances 1e-12, replaced by ``solver_options``); the ``n x n`` kernel
    and about three copies inside cvxpy are checked against the memory budget.

    Returns
    -------
    beta : ndarray of shape (n,)
    info : dict
        ``solver``, ``n_iter``, ``solve_time`` (wall-clock seconds); ``nu`` or ``status``.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}.")
    n = K.shape[0]
    if n < 2:
        raise ValueError(f"SVDD needs at least 2 samples; got n_samples={n}.")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinity; compute the kernel from finite data (a Gaussian kernel "
                         "of finite data is finite unless its squared distances overflow: standardize it).")
    _check_C(C, n)
    t0 = time.perf_counter()
    if solver == "libsvm":
        diag = np.diag(K)
        if np.ptp(diag) > 1e-10 * max(1.0, float(np.abs(diag).max())):
            raise ValueError("solver='libsvm' needs a kernel with constant diagonal (such as the Gaussian "
                             "kernel); use solver='cvxpy' for other kernels.")
        options = {"tol": _LIBSVM_TOL, **(solver_options or {})}
        beta, info = _svdd_libsvm(K, C, kernel="precomputed", solver_options=options, shrinking=False)
    elif solver == "cvxpy":
        beta, info = _svdd_cvxpy(K, C, cvxpy_solver, solver_options)
    else:
        raise ValueError(f"solver must be 'libsvm' or 'cvxpy', got {solver!r}.")
    info["solve_time"] = time.perf_counter() - t0
    return beta, info


def _svdd_cvxpy(K, C, cvxpy_solver, solver_options):
    import cvxpy as cp

    n = K.shape[0]
    check_memory(_cvxpy_bytes(n), what=f"The cvxpy SVDD solve for n = {n:,} (the n x n kernel and about "
                 "three copies inside cvxpy and its back end)",
                 alternative="Use solver='libsvm' (kernel columns on demand, no n x n array).")
    b = cp.Variable(n)
    # K_jj = 1 for the Gaussian kernel, but keep the linear term for general kernels.
    objective = cp.Maximize(np.diag(K) @ b - cp.quad_form(b, cp.psd_wrap((K + K.T) / 2)))
    name = "CLARABEL" if cvxpy_solver is None else cvxpy_solver
    if solver_options is None:
        solver_options = _CLARABEL_OPTIONS if name == "CLARABEL" else {}
    problem = cp.Problem(objective, [b >= 0, b <= C, cp.sum(b) == 1])
    stats = solve_cvxpy(problem, name, what="SVDD dual", solver_options=solver_options)
    beta = np.clip(np.asarray(b.value, dtype=float).ravel(), 0.0, C)
    beta /= beta.sum()
    return beta, {"solver": f"cvxpy/{stats['solver']}", "status": stats["status"], "n_iter": stats["n_iter"]}


def _svdd_libsvm(X, C, *, kernel="rbf", gamma="scale", tol=None, solver_options=None, shrinking=True):
    """The SVDD dual by libsvm's one-class SVM, on the (centred) data with the RBF kernel of
    parameter ``gamma`` (no n x n array) or on a precomputed kernel ``X``.

    libsvm stops on an absolute tolerance on the gradients ``(K alpha)_i = nu n (K beta)_i``, which
    fixes the points' ``R^2(x_i) = 1 - 2 (K beta)_i + ||a||^2`` to ``2 tol_libsvm / (nu n)``. Asking
    ``tol_libsvm = tol nu n ||a||^2`` makes ``R^2(x)`` exact to about ``2 tol (1 - R^2)``: a probe fit
    at libsvm's default tolerance estimates ``||a||^2`` and, if its tolerance was looser, the fit is
    repeated once. ``solver_options["tol"]`` skips the rule.
    """
    n = X.shape[0]
    t0 = time.perf_counter()
    nu = min(1.0, 1.0 / (n * min(C, 1.0)))  # C >= 1 is the problem at C = 1
    info = {"solver": "libsvm", "nu": nu, "n_iter": 0, "n_fits": 0, "libsvm_tol": None}
    options = dict(solver_options or {})
    fixed_tol = options.pop("tol", None)
    options.setdefault("shrinking", shrinking)
    rel = (_TOL_SMALL if n <= _TOL_SWITCH else _TOL_LARGE) if tol is None else float(tol)

    def run(libsvm_tol):
        oc = OneClassSVM(kernel=kernel, gamma=gamma, nu=nu, tol=libsvm_tol, **options).fit(X)
        info["n_iter"] += int(np.sum(oc.n_iter_))
        info["n_fits"] += 1
        info["libsvm_tol"] = libsvm_tol
        alpha = np.zeros(n)
        alpha[oc.support_] = oc.dual_coef_.ravel()
        return alpha / alpha.sum()  # beta = alpha / (nu n)

    if nu >= 1.0 - 1e-12:  # C = 1/n: beta = 1/n is the only feasible point (libsvm refuses it)
        beta = np.full(n, 1.0 / n)
    elif fixed_tol is not None:
        beta = run(float(fixed_tol))
    else:
        beta = run(_PROBE_TOL)
        sv = np.flatnonzero(beta > 0)  # ||a||^2 from two copies of X[sv] (A @ A.T rounds otherwise)
        quad = float(beta[sv] @ _kernel_weighted_sum(X[sv], X[sv], beta[sv], gamma))
        target = rel * nu * n * max(quad, 1.0 / n)
        if target < _PROBE_TOL:
            beta = run(target)
    info["solve_time"] = time.perf_counter() - t0
    return beta, info


def svdd_radius_squared(K, beta, C):
    """``(R^2, R^2(x_i))``: the squared radius of the minimal sphere and the points' ``R^2(x_i)
    = K_ii - 2 (K beta)_i + beta^T K beta`` (slide 19).

    ``R^2`` is the mean ``R^2(x_i)`` of the unbounded support vectors (``0 < beta_i < C``), all on the
    sphere. Without them (every beta at a bound, e.g. ``C = 1/n``) the KKT conditions only bracket
    ``R^2`` between the largest ``R^2(x_i)`` with ``beta_i = 0`` and the smallest with ``beta_i = C``:
    the midpoint is returned.
    """
    K = np.asarray(K, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or beta.shape != (K.shape[0],):
        raise ValueError(f"K must be (n, n) and beta (n,); got shapes {K.shape} and {beta.shape}.")
    Kb = K @ beta
    R2_points = np.diag(K) - 2.0 * Kb + float(beta @ Kb)
    return _radius_from_points(R2_points, beta, C), R2_points


def cone_radius(radius_squared, q):
    """Data-space radius ``Z`` of a support vector cone (Lee & Daniels 2007, slides 36-37).

    ``cos(theta) = sqrt(1 - R^2)`` (Pythagoras in feature space, exact without bounded support vectors)
    and ``exp(-q Z^2) = cos(theta)``, so ``Z = sqrt(-ln(1 - R^2) / (2 q))``.
    """
    if not (isinstance(radius_squared, Real) and 0.0 <= radius_squared < 1.0):
        raise ValueError(f"R^2 must lie in [0, 1) for the Gaussian kernel; got {radius_squared}.")
    _check_gamma(q)
    return math.sqrt(-math.log1p(-radius_squared) / (2.0 * q))


# ============================================================================ labelings
def _segment_max_R2(Xin, P, A, sq, beta_sv, quad, q, m, rows, cols, count):
    """Largest ``R^2(y)`` over the ``m`` interior points ``y = x_i + t (x_j - x_i)`` of the
    segments ``i = rows[k], j = cols[k]`` (rows of ``Xin``; ``P = Xin V^T``, ``A = ||x_i -
    v||^2`` for the support vectors ``v``, ``sq = ||x_i||^2``), in blocks of at most 32 MiB:
    ``||y - v||^2 = ||x_i - v||^2 + 2 t (x_i - v).(x_j - x_i) + t^2 ||x_j - x_i||^2`` costs
    ``m N_sv`` kernel evaluations a segment whatever the dimension."""
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
    check_memory(array_bytes((n_in, Vc.shape[0]), (n_in, Vc.shape[0])) + _BLOCK_BYTES,
                 what=f"The complete-graph labeling of {n_in:,} points inside the sphere with "
                 f"{Vc.shape[0]:,} support vectors",
                 alternative="Use labeling='cone', or fit on a subsample (max_samples=...).")
    Xin = Xc[idx]
    P = Xin @ Vc.T                                           # x_i . v
    sq = _sq_norms(Xin)
    A = np.maximum(sq[:, None] + _sq_norms(Vc)[None, :] - 2.0 * P, 0.0)   # ||x_i - v||^2
    comp = np.arange(n_in)
    count["pairs"] = count["adjacent_pairs"] = 0
    rows_per = max(1, (_BLOCK_BYTES // 16) // max(1, n_in))  # rows of pairs (i, j > i) at once
    for r0 in range(0, n_in - 1, rows_per):
        ii, jj = np.nonzero(np.arange(n_in)[None, :] > np.arange(r0, min(n_in, r0 + rows_per))[:, None])
        ii += r0
        ok = _segment_max_R2(Xin, P, A, sq, beta_sv, quad, q, m, ii, jj, count) <= thr
        count["pairs"] += ii.size
        count["adjacent_pairs"] += int(ok.sum())
        comp = _merge_edges(comp, ii[ok], jj[ok])
    return idx, _forest_labels(comp)


def complete_graph_labels(X, beta, q, radius_squared, R2_points, *, n_segment_points=10, C=None,
                          return_counts=False):
    """Complete-graph cluster labeling (Ben-Hur et al. 2001; slide 22): ``(labels, inside)``,
    and the counts ``pairs``, ``adjacent_pairs``, ``segment_points``, ``kernel_evaluations``
    (``pairs * n_segment_points * N_sv``) and ``distance_evaluations`` with ``return_counts=True``.

    Two points inside the sphere are adjacent when the ``n_segment_points`` interior points of the
    segment joining them all are; points outside take the label of the nearest point inside. "Inside"
    allows the scatter ``max |R^2(x_i) - R^2|`` of the unbounded support vectors (all on the sphere, up
    to the solver's accuracy): ``R^2(x) <= R^2 + max(scatter, 1e-10 max(1, R^2))``, and with ``C`` given
    every unbounded support vector is inside. Cost: ``n_in (n_in - 1) / 2`` pairs of
    ``n_segment_points N_sv`` kernel evaluations, whatever the dimension; memory ``16 n_in N_sv`` bytes
    and blocks of at most 32 MiB, checked against the memory budget.
    """
    X = np.asarray(X, dtype=float)
    beta = np.asarray(beta, dtype=float)
    R2_points = np.asarray(R2_points, dtype=float)
    _check_gamma(q)
    Xc = X - X.mean(axis=0)
    sv = beta > _ZERO_TOL
    free = np.zeros_like(sv) if C is None else _sv_masks(beta, C)[2]
    Vc, bs, count = Xc[sv], beta[sv], {}
    inside, thr = _inside(R2_points, radius_squared, free)
    idx, lab = _complete_graph(Xc, inside, Vc, bs, q, _centre_norm(Vc, bs, q), thr, n_segment_points, count)
    labels = np.empty(X.shape[0], dtype=np.intp)
    labels[idx] = lab
    out = ~inside
    count["distance_evaluations"] = int(out.sum()) * idx.size
    if out.any():
        labels[out] = lab[_nearest_index(Xc[out], Xc[idx])]
    return (labels, inside, count) if return_counts else (labels, inside)


def _cone_components(Vc, radius, count):
    """Components of ``||v_i - v_j|| <= radius``: dense while N_sv^2 distances fit in 32 MiB,
    otherwise radius queries on a tree, block by block, merged into a spanning forest."""
    m = Vc.shape[0]
    if 8 * m * m <= _BLOCK_BYTES:
        A = euclidean_distances(Vc, squared=True) <= radius**2
        count["distance_evaluations"] = m * m
        count["adjacent_pairs"] = int((A.sum() - m) // 2)
        return connected_components(csr_matrix(A), directed=False)[1].astype(np.intp)
    nn = NearestNeighbors(radius=radius).fit(Vc)
    comp = np.arange(m)
    n_edges = 0
    block = max(1, min(m, _BLOCK_BYTES // (16 * m)))  # <= 32 MiB of edges per block
    for s in range(0, m, block):
        G = nn.radius_neighbors_graph(Vc[s : s + block], radius=radius, mode="connectivity").tocoo()
        n_edges += G.nnz
        comp = _merge_edges(comp, G.row + s, G.col)
    count["distance_evaluations"] = None  # a tree prunes: not a fixed count
    count["adjacent_pairs"] = int((n_edges - m) // 2)
    return _forest_labels(comp)


def cone_labels(X, support_vectors, q, radius_squared, *, return_counts=False):
    """Cone cluster labeling (Lee & Daniels 2007, slide 38; see :class:`SupportVectorClustering`).

    ``support_vectors`` (boolean mask or indices) are the points on the sphere; two are adjacent when
    ``||v_i - v_j|| <= 2 Z`` (``Z``: :func:`cone_radius`), clusters are the connected components and
    every other point takes its nearest support vector's label. Dense distances while they fit in 32
    MiB, otherwise radius and nearest-neighbour queries on a KD-tree / ball tree. Returns ``labels``
    and, with ``return_counts=True``, the counts ``distance_evaluations`` (``N_sv^2 + N N_sv``; ``None``
    on the tree path), ``adjacent_pairs`` and ``kernel_evaluations`` (0).
    """
    X = np.asarray(X, dtype=float)
    sv = np.asarray(support_vectors)
    idx = np.flatnonzero(sv) if sv.dtype == bool else sv.astype(np.intp)
    if idx.size == 0:
        raise ValueError("cone_labels needs at least one support vector.")
    Z = cone_radius(radius_squared, q)
    Xc = X - X.mean(axis=0)
    count = {"kernel_evaluations": 0}
    sv_labels = _cone_components(Xc[idx], 2.0 * Z, count)
    labels = sv_labels[_nearest_index(Xc, Xc[idx])]
    labels[idx] = sv_labels
    if count["distance_evaluations"] is not None:
        n_distances = count["distance_evaluations"] + X.shape[0] * idx.size
        count["distance_evaluations"] = n_distances if 8 * X.shape[0] * idx.size <= _BLOCK_BYTES else None
    return (labels, count) if return_counts else labels


# ============================================================================ estimator
class SupportVectorClustering(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """Support vector clustering with complete-graph or cone cluster labeling.

    Solves the SVDD Wolfe dual [1]_ [3]_ (slide 18 of [2]_) for the Gaussian kernel
    ``K(x, y) = exp(-q ||x - y||^2)``,

        max_beta   sum_j beta_j K_jj - sum_{i,j} beta_i beta_j K_ij
        subject to 0 <= beta_j <= C,  sum_j beta_j = 1,

    whose solution is the smallest sphere (centre ``a = sum_j beta_j Phi(x_j)``, radius ``R``) enclosing
    the images ``Phi(x_j)``, outliers allowed at the price ``C``. A point's squared distance to the
    centre is ``R^2(x) = K(x, x) - 2 sum_j beta_j K(x_j, x) + ||a||^2`` (slide 19). Points with
    ``0 < beta < C`` lie on the sphere (support vectors), points with ``beta = C`` outside it (bounded
    support vectors, outliers), all others inside. Read back in data space, the sphere is a set of
    contours; the connected pieces they enclose are the clusters, found by ``labeling`` (Notes).

    Parameters
    ----------
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)`` (the slides' ``q``). ``None`` means the
        median heuristic :func:`mmcedu.kernels.median_gamma`. Larger values give more support vectors
        and more clusters; :func:`gamma_path` lists the widths to explore (the slides' q-list).
    C : float, default=1.0
        Inverse regularization: the upper bound of ``0 <= beta_j <= C``, at least ``1/n_samples``.
        ``C >= 1`` allows no bounded support vectors, otherwise at most ``1/C``.
    labeling : {"cone", "complete_graph"}, default="cone"
        Cluster-labeling rule.
    n_segment_points : int, default=10
        Number ``m`` of interior points tested on each segment by ``"complete_graph"``.
    solver : {"libsvm", "cvxpy"}, default="libsvm"
        Algorithm for the dual. ``"libsvm"``: :class:`sklearn.svm.OneClassSVM` with the RBF kernel on
        the data, ``nu = 1/(N min(C, 1))`` and ``beta = alpha/(nu N)``; it computes kernel columns on
        demand and caches ``cache_size`` MB of them (200 by default): no ``N x N`` array. ``"cvxpy"``:
        the dual as a quadratic program on the ``N x N`` kernel.
    cvxpy_solver : str or None, default=None
        cvxpy back end for ``solver="cvxpy"``; ``None`` means CLARABEL (tolerances 1e-12).
    solver_options : dict or None, default=None
        Passed to the back end of ``solver`` (``OneClassSVM`` or ``cvxpy.Problem.solve``);
        ``{"tol": ...}`` for ``"libsvm"`` is libsvm's own absolute tolerance, replacing ``tol``.
    tol : float or None, default=None
        Stop when libsvm's largest violation of the KKT conditions is below ``tol nu N ||a||^2`` (the
        scale of its gradients), so that the points' ``R^2(x)`` agree to about ``2 tol (1 - R^2)``; a
        probe fit at libsvm's default tolerance estimates ``||a||^2`` and the fit is repeated once if
        that was looser. ``None`` means 1e-7 up to 10,000 samples and 0.05 above, where a tight
        tolerance costs millions of SMO iterations for the same clusters. Only for ``solver="libsvm"``.
    max_samples : int, float or None, default=None
        Solve the dual on a random subsample of this many samples (a float: this fraction of
        ``n_samples``) and label the others as :meth:`predict` does; ``None``: all samples. The
        subsample must be dense enough at the width ``gamma`` (check that ``n_clusters_`` is stable when
        ``max_samples`` doubles); ``C`` applies to the subsample.
    random_state : int, RandomState instance or None, default=None
        Seed of the subsample drawn for ``max_samples`` (unused otherwise).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point, ``0 .. n_clusters_ - 1``.
    n_clusters_ : int
        Number of clusters found.
    dual_coef_ : ndarray of shape (n_samples,)
        ``beta``, summing to 1 (zero outside the subsample of ``max_samples``).
    support_, bounded_support_ : ndarray of int
        Indices with ``beta > 0`` (support vectors, bounded or not) and with ``beta = C``.
    subsample_ : ndarray of int or None
        The samples the dual was solved on (``max_samples``), else ``None``.
    radius_squared_, distances_squared_ : float, ndarray of shape (n_samples,)
        ``R^2`` (:func:`svdd_radius_squared`) and ``R^2(x_i)`` of every training point.
    cone_radius_ : float
        ``Z`` of the cone labeling (:func:`cone_radius`; for both labelings).
    pythagoras_residual_ : float
        ``1 - ||a||^2 - R^2``: zero without bounded support vectors (then ``cos(theta) = sqrt(1 - R^2)``
        is exact), ``C sum_j xi_j`` otherwise.
    gamma_ : float
        The RBF parameter used.
    n_iter_ : int
        Iterations of the dual solver (summed over libsvm's fits).
    solver_info_ : dict
        ``solver`` and ``n_iter``; ``nu``, ``n_fits`` and ``libsvm_tol`` (the last fit's absolute
        tolerance) for ``"libsvm"``, ``status`` for ``"cvxpy"``.
    labeling_counts_ : dict
        Cost of the labeling, counted (:func:`complete_graph_labels`, :func:`cone_labels`), and
        ``radius_kernel_evaluations`` (``N N_sv + N_sv^2``, for ``R^2(x)`` and ``||a||^2``).
    solve_time_, labeling_time_ : float
        Wall-clock seconds of the solve and of the labeling.
    n_features_in_ : int

    See Also
    --------
    gamma_path : the kernel widths to explore (the slides' q-list).
    UMCRLS, GMMC : kernel clustering with a given number of clusters.

    Notes
    -----
    Support vector clustering has no ``n_clusters`` parameter: the number of clusters is found and grows
    with ``gamma``. ``labeling="complete_graph"`` [1]_: two points inside the sphere are adjacent when
    the ``m`` interior points of the segment joining them all are; clusters are the connected components
    (``n_in (n_in - 1) / 2 * m * N_sv`` kernel evaluations, slide 41). ``labeling="cone"`` (slides
    34-38): every image lies on the unit sphere (``K(x, x) = 1``); the cones with apex 0, axis
    ``Phi(v_i)`` of a support vector and half-angle ``theta``, ``cos(theta) = sqrt(1 - R^2)``, cover its
    intersection with the minimal sphere, and each meets the data's image in the data-space ball of
    radius ``Z = sqrt(-ln(cos theta) / q)`` around ``v_i``. Two support vectors are joined when their
    balls meet, ``||v_i - v_j|| <= 2 Z``, i.e. ``K(v_i, v_j) >= (1 - R^2)^2``: our reading of the
    slides' unstated ``ConstructConnectivity(V, Z)``, a data-space heuristic, stricter than the
    intersection of the cones themselves (``K(v_i, v_j) >= cos(2 theta) = 1 - 2 R^2``, true of every
    pair once ``R^2 >= 1/2``). Clusters are the components (``N_sv^2 + N N_sv`` distance evaluations, or
    a KD-tree / ball tree). Bounded support vectors, the other points of the cone labeling and new
    points (:meth:`predict`) take the label of the nearest labeled point.

    Label-free rule (:meth:`label_free_rule`): ``LABEL_FREE_WIDTHS`` evenly spaced widths of the q-list
    (:func:`gamma_path`) and the criterion ``"plateau"``, the middle of the longest run of equal cluster
    counts: a count that persists over the widths of the slides' exploration is structure, not an
    accident of one width.

    Memory (:meth:`memory_bytes`) is checked against the memory budget (:func:`mmcedu.get_config`)
    before the solve. A ``UserWarning`` announces a complete-graph labeling of more than 1e9 kernel
    evaluations; a :class:`~mmcedu.exceptions.ClusterCountWarning`, one cluster (singletons aside) at
    ``gamma=None``, the median heuristic, often too small for SVC; a
    :class:`~mmcedu.exceptions.DegenerateDataWarning`, every sample a support vector or its own cluster
    (``gamma`` too large), every support vector bounded, or identical samples.

    References
    ----------
    .. [1] A. Ben-Hur, D. Horn, H. T. Siegelmann, V. Vapnik. Support vector clustering.
       JMLR 2:125-137, 2001.
    .. [2] S.-H. Lee, K. Daniels. Gaussian kernel width exploration and cone cluster labeling
       for support vector clustering. Slides, UMass Lowell, 2007.
    .. [3] D. M. J. Tax, R. P. W. Duin. Support vector data description. Mach. Learn.
       54:45-66, 2004.

    Examples
    --------
    >>> from mmcedu import SupportVectorClustering
    >>> from mmcedu.datasets import two_circles
    >>> X, y = two_circles(100, noise=0.03, random_state=0)
    >>> SupportVectorClustering(gamma=80.0, labeling="cone").fit(X).n_clusters_
    2
    """

    _label_free_criterion = ("plateau",)
    _label_free_tolerance = 0.0

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "labeling": [StrOptions({"cone", "complete_graph"})],
        "n_segment_points": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"libsvm", "cvxpy"})],
        "cvxpy_solver": [str, None],
        "solver_options": [dict, None],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "max_samples": [Interval(Integral, 2, None, closed="left"),
                        Interval(RealNotInt, 0, 1, closed="right"), None],
        "random_state": ["random_state"],
    }

    def __init__(self, *, gamma=None, C=1.0, labeling="cone", n_segment_points=10, solver="libsvm",
                 cvxpy_solver=None, solver_options=None, tol=None, max_samples=None, random_state=None):
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

    # ------------------------------------------------------------------ parameters
    def _label_free_grid(self, X):
        q = np.asarray(gamma_path(X, C=self.C).gamma, dtype=float)
        idx = np.unique(np.linspace(0, q.size - 1, min(LABEL_FREE_WIDTHS, q.size)).round().astype(int))
        return {"gamma": [float(v) for v in q[idx]]}

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once.

        With ``m`` the samples the dual is solved on (``max_samples``, else ``n_samples``): ``32 m^2``
        for ``solver="cvxpy"`` (the kernel and about three copies inside cvxpy); for ``solver="libsvm"``
        its kernel cache, at most ``min(cache_size MB, 4 m^2)``, and a block of kernel sums, at most
        ``min(32 MiB, 8 n_samples m)``; both plus the centred data and the fitted rows,
        ``8 (n_samples + m) n_features`` (``n_features=None``: not counted). The fit checks it against
        the memory budget before allocating; the complete graph's ``16 n_in N_sv`` bytes depend on the
        solution and are checked after the solve.
        """
        self._validate_params()
        n = int(n_samples)
        m = self._n_fit(n)
        data = 0 if n_features is None else array_bytes((n, n_features), (m, n_features))
        if self.solver == "cvxpy":
            return data + _cvxpy_bytes(m)
        cache = min(int((self.solver_options or {}).get("cache_size", _CACHE_MB) * 2**20),
                    array_bytes((m, m), itemsize=4))
        return data + cache + min(_BLOCK_BYTES, array_bytes((n, m)))

    # ------------------------------------------------------------------ fit
    def _n_fit(self, n):
        """The number of samples the dual is solved on."""
        if self.max_samples is None:
            return n
        if isinstance(self.max_samples, Integral):
            return min(n, int(self.max_samples))
        return min(n, max(2, int(math.ceil(float(self.max_samples) * n))))

    def _fit_identical(self, X, q):
        n = X.shape[0]
        warnings.warn(f"All {n} samples are identical: there is no cluster structure; every sample "
                      "is put in cluster 0 (n_clusters_=1).", DegenerateDataWarning, stacklevel=3)
        self.gamma_ = q
        self.dual_coef_ = np.full(n, 1.0 / n)
        self.support_ = np.arange(n)
        self.bounded_support_ = np.arange(n) if self.C * n <= 1.0 + 1e-12 else np.arange(0)
        self.subsample_ = None
        self.radius_squared_ = self.cone_radius_ = self.pythagoras_residual_ = 0.0
        self.distances_squared_ = np.zeros(n)
        self.n_iter_ = 0
        self.solver_info_ = {"solver": self.solver, "n_iter": 0, "n_fits": 0}
        self.labeling_counts_ = {"kernel_evaluations": 0, "radius_kernel_evaluations": 0}
        self.solve_time_ = self.labeling_time_ = 0.0
        self.labels_ = np.zeros(n, dtype=np.intp)
        self.n_clusters_ = 1
        self._center = X[0].copy()
        self._label_points = self._support_vectors = X[:1] - self._center
        self._label_point_labels = np.zeros(1, dtype=np.intp)
        self._support_beta = np.ones(1)
        self._quad = 1.0
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Solve the SVDD dual on ``X`` (array-like of shape (n_samples, n_features)) and label
        the clusters; ``y`` is ignored."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"Support vector clustering needs at least 2 samples; got n_samples={n}.")
        check_scale(X)
        _check_C(self.C, n)
        q = median_gamma(X) if self.gamma is None else float(self.gamma)
        if all_identical(X):
            return self._fit_identical(X, q)
        m = self._n_fit(n)
        sub = None
        if m < n:
            _check_C(self.C, m, what="max_samples")
            sub = np.sort(check_random_state(self.random_state).choice(n, size=m, replace=False))
        fit_idx = np.arange(n) if sub is None else sub
        self._announce_labeling(m)
        alternative = "Fit on a subsample (max_samples=...)."
        if self.solver == "cvxpy":
            alternative = "Use solver='libsvm' (no n x n array), or fit on a subsample (max_samples=...)."
        check_memory(self.memory_bytes(n, X.shape[1]), alternative=alternative,
                     what=f"SupportVectorClustering(solver={self.solver!r}) on {m:,} of {n:,} samples")
        center = X[fit_idx].mean(axis=0)
        Xc = X - center
        Xf = Xc[fit_idx]
        beta_f, info = self._solve(Xf, q)
        sv_f, bounded_f, free_f = _sv_masks(beta_f, self.C)

        # R^2(x) of every point and R^2, in blocks over the support vectors
        Vc, bs = Xf[sv_f], beta_f[sv_f]
        rcount = {}
        quad = _centre_norm(Vc, bs, q, count=rcount)
        R2_points = 1.0 - 2.0 * _kernel_weighted_sum(Xc, Vc, bs, q, count=rcount) + quad
        R2 = _radius_from_points(R2_points[fit_idx], beta_f, self.C)
        R2c = min(R2, 1.0 - 1e-15)

        t0 = time.perf_counter()
        if self.labeling == "cone":
            R2_fit = R2_points[fit_idx]
            label_points = fit_idx[free_f if free_f.any() else R2_fit <= R2_fit.min()]
            labels, counts = cone_labels(Xc, label_points, q, R2c, return_counts=True)
        else:
            labels, counts, label_points = self._label_complete_graph(Xc, fit_idx, beta_f, R2_points, R2, q)
        self.labeling_time_ = time.perf_counter() - t0
        counts["radius_kernel_evaluations"] = rcount.get("kernel_evaluations", 0)

        self.gamma_ = q
        self.dual_coef_ = np.zeros(n)
        self.dual_coef_[fit_idx] = beta_f
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

    def _solve(self, Xf, q):
        if self.solver == "libsvm":
            return _svdd_libsvm(Xf, self.C, gamma=q, tol=self.tol, solver_options=self.solver_options)
        return svdd_dual(rbf_kernel(Xf, gamma=q), self.C, solver="cvxpy",
                         cvxpy_solver=self.cvxpy_solver, solver_options=self.solver_options)

    def _announce_labeling(self, m, n_in=None, n_sv=None):
        """Warn of a long complete-graph labeling of ``m`` samples: before the solve (``n_sv=None``)
        above 5e7 segment points, after it above 1e9 kernel evaluations (``n_in`` points inside)."""
        k = self.n_segment_points
        early = self.labeling == "complete_graph" and m * (m - 1) / 2 * k > _CG_WARN_SEGMENT_POINTS
        if n_sv is None and early:
            pairs = m * (m - 1) // 2
            cost = (f"tests up to {pairs:,} pairs x {k} segment points, each point costing one kernel "
                    f"evaluation per support vector: at least {pairs * k:.2g} kernel evaluations after "
                    "the SVDD solve")
        elif n_sv is not None and not early and n_in * (n_in - 1) / 2 * k * n_sv > _CG_WARN_EVALUATIONS:
            pairs = n_in * (n_in - 1) // 2
            cost = (f"will evaluate the kernel about {pairs * k * n_sv:.2g} times ({pairs:,} pairs x {k} "
                    f"segment points x {n_sv:,} support vectors)")
        else:
            return
        warnings.warn(f"The complete-graph labeling {cost}: minutes to hours. labeling='cone' needs "
                      "about (n_samples + N_sv) N_sv distance evaluations; max_samples=... fits on a "
                      "subsample.", UserWarning, stacklevel=3)

    def _label_complete_graph(self, Xc, fit_idx, beta_f, R2_points, R2, q):
        """Complete-graph labels of the fitted rows; the other rows take the nearest label."""
        n = Xc.shape[0]
        m = fit_idx.size
        R2_fit = R2_points[fit_idx]
        n_sv = int(np.count_nonzero(beta_f > _ZERO_TOL))
        self._announce_labeling(m, int(_inside(R2_fit, R2, _sv_masks(beta_f, self.C)[2])[0].sum()), n_sv)
        labels_f, inside_f, counts = complete_graph_labels(
            Xc[fit_idx], beta_f, q, R2, R2_fit, n_segment_points=self.n_segment_points, C=self.C,
            return_counts=True)
        label_points = fit_idx[inside_f]
        labels = np.empty(n, dtype=np.intp)
        labels[fit_idx] = labels_f
        if m < n:
            rest = np.setdiff1d(np.arange(n), fit_idx)
            labels[rest] = labels_f[inside_f][_nearest_index(Xc[rest], Xc[label_points])]
            counts["distance_evaluations"] += rest.size * label_points.size
        return labels, counts, label_points

    def _warn_degenerate(self, X, m, sv_f, free_f):
        n_sv, k = int(sv_f.sum()), self.n_clusters_
        if not free_f.any():
            warnings.warn(
                f"No sample lies on the sphere: every support vector is bounded (C={self.C:g}, "
                f"{n_sv} bounded support vectors of beta = C). R^2 is only bracketed and the "
                "labeling rests on the point closest to the centre. "
                + ("C = 1/n_samples makes every sample an outlier; " if self.C * m <= 1 + 1e-9 else "")
                + "use a larger C (C >= 1 allows no outliers).", DegenerateDataWarning, stacklevel=3)
            return
        n_distinct = np.unique(X, axis=0).shape[0] if X.shape[0] <= 100_000 else X.shape[0]
        if (n_sv == m and m > 2) or (k == n_distinct and n_distinct > 2):
            what = (f"every sample is a support vector ({m} of {m})" if n_sv == m
                    else f"every distinct sample is its own cluster ({k} clusters)")
            warnings.warn(
                f"gamma={self.gamma_:.3g} is too large for these data: {what}, n_clusters_={k}. "
                "Decrease gamma (see gamma_path(X) for the widths to explore; gamma=None is the "
                "median heuristic).", DegenerateDataWarning, stacklevel=3)
            return
        sizes = np.sort(np.bincount(self.labels_))
        if self.gamma is None and (k == 1 or (sizes.size > 1 and sizes[-2] == 1 and sizes[-1] > 2)):
            found = ("a single cluster" if k == 1 else f"a single cluster of {sizes[-1]} samples and "
                     f"{k - 1} singleton cluster(s) (isolated points, e.g. outliers)")
            warnings.warn(
                f"SupportVectorClustering found {found} at gamma={self.gamma_:.3g} (gamma=None: the "
                "median heuristic). The number of clusters grows with gamma: explore larger values, "
                "e.g. the widths of gamma_path(X) (the slides' q-list), or choose gamma by a "
                "label-free search (label_free_rule(X)).", ClusterCountWarning, stacklevel=3)

    # ------------------------------------------------------------------ new points
    def _centred(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False) - self._center

    def predict(self, X):
        """Label new points by their nearest labeled training point: the support vectors on
        the sphere (cone labeling) or the points inside it (complete graph), as ``fit``
        labels the other training points (so ``predict(X_train)`` returns ``labels_``)."""
        Xc = self._centred(X)
        return self._label_point_labels[_nearest_index(Xc, self._label_points)]

    def distance_squared(self, X):
        """``R^2(x) = ||Phi(x) - a||^2`` of the rows of ``X`` (slide 19); the sphere is ``R^2(x) = R^2``."""
        wsum = _kernel_weighted_sum(self._centred(X), self._support_vectors, self._support_beta, self.gamma_)
        return 1.0 - 2.0 * wsum + self._quad


# ============================================================================ widths
GammaPath = namedtuple(
    "GammaPath", ["gamma", "radius_squared", "n_support", "estimated_length", "radius_squared_limit"]
)
GammaPath.__doc__ = "Result of :func:`gamma_path`: the kernel widths to explore and what they give."


def _radius_squared_limit(group_sizes, C):
    """``lim R^2`` as ``q -> infinity`` for groups of identical points of the given sizes.

    ``K`` tends to all-ones blocks on the groups, so ``beta^T K beta -> sum_g m_g^2`` with the group
    masses ``m_g = sum_{i in g} beta_i <= C |g|``. The dual minimises it by water-filling,
    ``m_g = min(C |g|, lam)`` with ``sum_g m_g = 1``; a point of an uncapped group (on the sphere) has
    ``R^2 = 1 - 2 lam + sum_g m_g^2``, ``1 - 1/U`` without caps.
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


def _path_data(X, C, max_length, rtol):
    """The checked input of :func:`gamma_path`: the centred data, the sizes of its groups of
    identical points and its positive squared distances."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"gamma_path needs a 2-D array with at least 2 samples; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; remove or impute those entries.")
    if not (isinstance(max_length, Integral) and max_length >= 1):
        raise ValueError(f"max_length must be a positive integer; got {max_length!r}.")
    if not (isinstance(rtol, Real) and 0 < rtol < 1):
        raise ValueError(f"rtol must lie in (0, 1); got {rtol!r}.")
    check_scale(X)
    n = X.shape[0]
    _check_C(C, n)
    check_memory(array_bytes((n * (n - 1) // 2,)) + 3 * array_bytes((n, n)),
                 what=f"gamma_path on {n:,} samples (all pairwise distances and an n x n kernel per width)",
                 alternative="Run it on a subsample, e.g. gamma_path(X[rng.choice(len(X), 2000, "
                 "replace=False)]), and fit SupportVectorClustering(gamma=...) on all samples.")
    Xc = X - X.mean(axis=0)
    _, group_sizes = np.unique(Xc, axis=0, return_counts=True)
    if group_sizes.size == 1:
        raise ValueError("All samples are identical: there is no kernel width to explore.")
    d2 = pdist(Xc, "sqeuclidean")
    pos = d2[d2 > 0]
    if pos.size == 0:
        raise ValueError("The samples differ by less than the float64 resolution of their squared "
                         "distances: standardize X (sklearn.preprocessing.StandardScaler).")
    return Xc, group_sizes, pos


def gamma_path(X, C=1.0, *, solver="libsvm", cvxpy_solver=None, solver_options=None,
               max_length=100, rtol=1e-3):
    """Increasing kernel widths for exploring SVC: the slides' q-list (Lee & Daniels 2007, slides 28-29).

    ``R^2`` as a function of ``q`` (the RBF parameter ``gamma``) starts at ``R^2(0) = 0``, is
    non-decreasing and tends to ``R^2_inf``: ``1 - 1/N`` for ``N`` distinct points (slide 28),
    ``1 - 1/U`` for ``U`` distinct points with duplicates (identical points keep ``K = 1``). The path
    starts at ``q_1 = 1 / max ||x_i - x_j||^2``; the line through the two latest points of the curve
    (first through the lemma's ``(0, 0)``) is extended to the level ``R^2_inf``, and its crossing is the
    next width,

        q_{k+1} = q_k + (R^2_inf - R^2(q_k)) (q_k - q_{k-1}) / (R^2(q_k) - R^2(q_{k-1})),

    at least ``1.01 q_k`` (``2 q_k`` if the curve did not rise): our reconstruction of the slides'
    unstated "secant-like algorithm". Where the curve is concave the widths grow about geometrically: if
    the gap ``R^2_inf - R^2`` decays like ``q^-p``, the ratio ``r`` of two widths solves
    ``r^(p+1) = r + 1``. The path stops when every point is a support vector, when ``R^2`` is within
    ``rtol`` (relative) of ``R^2_inf``, or after ``max_length`` widths (with a
    :class:`~sklearn.exceptions.ConvergenceWarning`). Memory: the pairwise distances and an ``N x N``
    kernel per width (``28 N^2`` bytes at most, checked against the memory budget): for large ``N``, run
    it on a subsample. ``solver``, ``cvxpy_solver`` and ``solver_options`` are those of
    :func:`svdd_dual`.

    Returns
    -------
    GammaPath
        ``gamma`` (increasing), ``radius_squared`` (``R^2`` at each, non-decreasing), ``n_support``
        (support vectors at each), ``estimated_length`` (the slides' estimate of the length,
        ``lg(max ||x_i - x_j||^2) - lg(min ||x_i - x_j||^2)`` over distinct points, slide 29) and
        ``radius_squared_limit`` (``R^2_inf``, by water-filling over the groups of identical points
        where ``C`` caps them).
    """
    Xc, group_sizes, pos = _path_data(X, C, max_length, rtol)
    n = Xc.shape[0]
    target = _radius_squared_limit(group_sizes, C)
    qs, R2s, nsv = [], [], []
    q_prev, R2_prev = 0.0, 0.0  # lemma: q = 0 gives R^2 = 0
    q = 1.0 / pos.max()
    while len(qs) < max_length:
        K = rbf_kernel(Xc, gamma=q)
        beta, _ = svdd_dual(K, C, solver=solver, cvxpy_solver=cvxpy_solver, solver_options=solver_options)
        R2, _ = svdd_radius_squared(K, beta, C)
        del K
        qs.append(q)
        R2s.append(R2)
        nsv.append(int(np.count_nonzero(beta > _ZERO_TOL)))
        if nsv[-1] == n or target - R2 <= rtol * target:
            break
        slope = (R2 - R2_prev) / (q - q_prev)
        q_next = q + (target - R2) / slope if slope > 0 else 2.0 * q
        q_prev, R2_prev = q, R2
        q = max(q_next, 1.01 * q)
    else:
        warnings.warn(f"gamma_path stopped at max_length={max_length} widths before R^2 came within "
                      f"rtol={rtol:g} of its limit {target:.6g} (last R^2 = {R2s[-1]:.6g}, {nsv[-1]} of "
                      f"{n} samples support vectors). Increase max_length or rtol.",
                      ConvergenceWarning, stacklevel=2)
    estimate = float(np.log2(pos.max()) - np.log2(pos.min()))
    return GammaPath(np.array(qs), np.array(R2s), np.array(nsv), estimate, target)
