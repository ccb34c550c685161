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
    Cost O(N^2 N_sv m) (slide 41).
``"cone"`` (cone cluster labeling, Lee & Daniels 2007, slides 34-38)
    Every image lies on the unit sphere of feature space (``K(x, x) = 1``). The support
    vector cones with apex at the origin, axis ``Phi(v_i)`` and half-angle ``theta`` with
    ``cos(theta) = sqrt(1 - R^2)`` cover the intersection of the unit sphere and the
    minimal sphere; in data space each cone is the ball of radius
    ``Z = sqrt(-ln(cos theta) / q)`` around ``v_i``. Support vectors are adjacent when their
    balls meet (``||v_i - v_j|| <= 2 Z``), clusters are the connected components, and every
    other point takes the label of its nearest support vector. Cost O(N N_sv).

Bounded support vectors (outliers) are given the label of their nearest labeled point: the
nearest support vector (cone labeling) or the nearest point inside the sphere (complete
graph). :meth:`SupportVectorClustering.predict` uses the same rule for new points.
"""

from __future__ import annotations

import math
import time
from collections import namedtuple
from numbers import Integral, Real

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.svm import OneClassSVM
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import solve_cvxpy
from .kernels import rbf_kernel

__all__ = [
    "SupportVectorClustering",
    "svdd_dual",
    "svdd_radius_squared",
    "cone_radius",
    "q_list",
    "QList",
    "complete_graph_labels",
    "cone_labels",
]

#: libsvm stopping tolerance; tight so that libsvm and cvxpy agree to about 1e-6 in beta.
_LIBSVM_TOL = 1e-9
#: CLARABEL tolerances for solver="cvxpy".
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


def _check_C(C, n_samples):
    if C * n_samples < 1.0 - 1e-12:
        raise ValueError(
            f"C={C!r} is infeasible for n_samples={n_samples}: the SVDD dual needs "
            f"sum(beta) = 1 with 0 <= beta_j <= C, which requires C >= 1/n_samples = "
            f"{1.0 / n_samples:.6g}. Increase C (C >= 1 means no outliers)."
        )


def svdd_dual(K, C=1.0, *, solver="libsvm", cvxpy_solver=None):
    """Solve the SVDD / SVC Wolfe dual for a kernel matrix with constant diagonal.

    ``max_beta sum_j beta_j K_jj - beta^T K beta`` subject to ``0 <= beta <= C`` and
    ``sum beta = 1`` (Lee & Daniels 2007, slide 18; Ben-Hur et al. 2001, Sec. 2).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix. For ``solver="libsvm"`` its diagonal must be constant (true for the
        Gaussian kernel, ``K_jj = 1``): then the linear term is constant on the simplex and the
        problem equals the one-class SVM of Schoelkopf et al. (2001).
    C : float
        Upper bound on each beta; must satisfy ``C >= 1/n``.
    solver : {"libsvm", "cvxpy"}
        ``"libsvm"``: scikit-learn's :class:`~sklearn.svm.OneClassSVM` on the precomputed
        kernel with ``nu = 1/(n C)``; its dual variables ``alpha`` in ``[0, 1]`` with
        ``sum alpha = nu n`` give ``beta = alpha / (nu n)``. ``"cvxpy"``: the dual solved
        directly as a quadratic program.
    cvxpy_solver : str, default=None
        cvxpy solver name (default CLARABEL).

    Returns
    -------
    beta : ndarray of shape (n,)
    info : dict
        ``solver``, ``solve_time`` (seconds, wall clock) and solver-specific entries.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    if n < 2:
        raise ValueError(f"SVDD needs at least 2 samples; got n_samples={n}.")
    _check_C(C, n)
    t0 = time.perf_counter()
    if solver == "libsvm":
        diag = np.diag(K)
        if np.ptp(diag) > 1e-10 * max(1.0, float(np.abs(diag).max())):
            raise ValueError(
                "solver='libsvm' needs a kernel with constant diagonal (such as the Gaussian "
                "kernel); use solver='cvxpy' for other kernels."
            )
        nu = min(1.0, 1.0 / (n * C))
        if nu >= 1.0 - 1e-12:
            # C = 1/n: beta = 1/n is the only feasible point (libsvm's offset is then
            # undefined and scikit-learn refuses the fit).
            beta = np.full(n, 1.0 / n)
            return beta, {"solver": "libsvm", "nu": nu, "solve_time": time.perf_counter() - t0}
        ocsvm = OneClassSVM(kernel="precomputed", nu=nu, tol=_LIBSVM_TOL, shrinking=False)
        ocsvm.fit(K)
        alpha = np.zeros(n)
        alpha[ocsvm.support_] = ocsvm.dual_coef_.ravel()
        beta = alpha / alpha.sum()  # alpha.sum() = nu n
        info = {"solver": "libsvm", "nu": nu}
    elif solver == "cvxpy":
        import cvxpy as cp

        b = cp.Variable(n)
        # K_jj = 1 for the Gaussian kernel, but keep the linear term for general kernels.
        objective = cp.Maximize(np.diag(K) @ b - cp.quad_form(b, cp.psd_wrap((K + K.T) / 2)))
        cons = [b >= 0, b <= C, cp.sum(b) == 1]
        name = "CLARABEL" if cvxpy_solver is None else cvxpy_solver
        # Default CLARABEL tolerances (1e-8 on the gap) leave beta errors of ~1e-5 near
        # zero; tightened, beta agrees with libsvm to ~1e-7 and so do the support sets.
        opts = _CLARABEL_OPTIONS if name == "CLARABEL" else {}
        stats = solve_cvxpy(cp.Problem(objective, cons), name, what="SVDD dual", **opts)
        beta = np.clip(np.asarray(b.value, dtype=float).ravel(), 0.0, C)
        beta /= beta.sum()
        info = {"solver": f"cvxpy/{stats['solver']}", "status": stats["status"]}
    else:
        raise ValueError(f"solver must be 'libsvm' or 'cvxpy', got {solver!r}.")
    info["solve_time"] = time.perf_counter() - t0
    return beta, info


def _sv_masks(beta, C):
    sv = beta > _ZERO_TOL
    bounded = sv & (beta >= C * (1.0 - _BOUND_RTOL))
    return sv, bounded


def svdd_radius_squared(K, beta, C):
    """Squared radius of the minimal sphere and every point's squared distance to its centre.

    ``R^2(x_i) = K_ii - 2 (K beta)_i + beta^T K beta`` (slide 19). ``R^2`` is the mean of
    ``R^2(x_i)`` over the unbounded support vectors (``0 < beta_i < C``), which all lie on the
    sphere. Without unbounded support vectors (only possible for ``C = 1/n``: every beta at
    its bound) the KKT conditions only bracket ``R^2`` between the largest ``R^2(x_i)`` with
    ``beta_i = 0`` and the smallest with ``beta_i = C``; the midpoint is returned.

    Returns
    -------
    R2 : float
    R2_points : ndarray of shape (n,)
    """
    K = np.asarray(K, dtype=float)
    Kb = K @ beta
    quad = float(beta @ Kb)
    R2_points = np.diag(K) - 2.0 * Kb + quad
    sv, bounded = _sv_masks(beta, C)
    free = sv & ~bounded
    if free.any():
        R2 = float(R2_points[free].mean())
    else:
        lo = float(R2_points[~sv].max()) if (~sv).any() else None
        hi = float(R2_points[bounded].min()) if bounded.any() else None
        R2 = hi if lo is None else (lo if hi is None else 0.5 * (lo + hi))
    return max(R2, 0.0), R2_points


def cone_radius(radius_squared, q):
    """Data-space radius of a support vector cone (Lee & Daniels 2007, slides 36-37).

    ``cos(theta) = sqrt(1 - R^2)`` (Pythagoras in feature space, exact without bounded
    support vectors) and ``exp(-q Z^2) = cos(theta)``, so
    ``Z = sqrt(-ln(cos theta) / q) = sqrt(-ln(1 - R^2) / (2 q))``.
    """
    if not 0.0 <= radius_squared < 1.0:
        raise ValueError(f"R^2 must lie in [0, 1) for the Gaussian kernel; got {radius_squared}.")
    return math.sqrt(-math.log1p(-radius_squared) / (2.0 * q))


def _components(adjacency):
    n, labels = connected_components(csr_matrix(adjacency), directed=False)
    return labels.astype(np.intp)


def _segment_max_R2(X, pairs, X_sv, beta_sv, quad, q, m, chunk=2_000_000):
    """Largest ``R^2(y)`` over ``m`` interior points ``y`` of each segment ``[x_i, x_j]``."""
    t = np.arange(1, m + 1) / (m + 1.0)
    out = np.empty(len(pairs))
    sv_sq = np.einsum("ij,ij->i", X_sv, X_sv)
    step = max(1, chunk // max(1, m * len(X_sv)))
    for s in range(0, len(pairs), step):
        p = pairs[s : s + step]
        A, B = X[p[:, 0]], X[p[:, 1]]
        Y = (A[:, None, :] + t[None, :, None] * (B - A)[:, None, :]).reshape(-1, X.shape[1])
        D2 = np.einsum("ij,ij->i", Y, Y)[:, None] - 2.0 * Y @ X_sv.T + sv_sq[None, :]
        np.maximum(D2, 0.0, out=D2)
        R2 = 1.0 - 2.0 * np.exp(-q * D2) @ beta_sv + quad
        out[s : s + step] = R2.reshape(len(p), m).max(axis=1)
    return out


def complete_graph_labels(
    X, beta, q, radius_squared, R2_points, *, n_segment_points=10, tol=1e-10
):
    """Complete-graph cluster labeling (Ben-Hur et al. 2001; slide 22, "CG").

    Every pair of points inside the sphere (``R^2(x) <= R^2``) is tested: adjacent when all
    ``n_segment_points`` interior points of the segment joining them are inside the sphere.
    Points outside the sphere (bounded support vectors) take the label of the nearest point
    inside it.

    Returns
    -------
    labels : ndarray of shape (n,)
    inside : ndarray of bool, shape (n,)
        The points that define the clusters.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    sv = beta > _ZERO_TOL
    quad = float(beta[sv] @ rbf_kernel(X[sv], gamma=q) @ beta[sv])
    thr = radius_squared + tol * max(1.0, radius_squared)
    inside = R2_points <= thr
    if not inside.any():
        inside = R2_points <= R2_points.min()
    idx = np.flatnonzero(inside)
    iu, ju = np.triu_indices(len(idx), k=1)
    pairs = np.column_stack([idx[iu], idx[ju]])
    ok = _segment_max_R2(X, pairs, X[sv], beta[sv], quad, q, n_segment_points) <= thr
    A = np.zeros((len(idx), len(idx)), dtype=bool)
    A[iu[ok], ju[ok]] = True
    labels = np.empty(n, dtype=np.intp)
    labels[idx] = _components(A)
    out = ~inside
    if out.any():
        nearest = euclidean_distances(X[out], X[idx], squared=True).argmin(axis=1)
        labels[out] = labels[idx][nearest]
    return labels, inside


def cone_labels(X, support_vectors, q, radius_squared):
    """Cone cluster labeling (Lee & Daniels 2007, slide 38).

    ``support_vectors`` (boolean mask or indices) are the points on the sphere. Two of them
    are adjacent when their data-space balls of radius ``Z`` (:func:`cone_radius`) meet,
    ``||v_i - v_j|| <= 2 Z``; clusters are the connected components and every other point
    takes the label of its nearest support vector.

    Returns
    -------
    labels : ndarray of shape (n,)
    """
    X = np.asarray(X, dtype=float)
    idx = np.flatnonzero(support_vectors) if np.asarray(support_vectors).dtype == bool else (
        np.asarray(support_vectors, dtype=np.intp)
    )
    Z = cone_radius(radius_squared, q)
    V = X[idx]
    A = euclidean_distances(V, squared=True) <= (2.0 * Z) ** 2
    sv_labels = _components(A)
    nearest = euclidean_distances(X, V, squared=True).argmin(axis=1)
    labels = sv_labels[nearest]
    labels[idx] = sv_labels
    return labels


class SupportVectorClustering(ClusterMixin, BaseEstimator):
    """Support vector clustering with complete-graph or cone cluster labeling.

    Solves the SVDD Wolfe dual (Lee & Daniels 2007, slide 18; Ben-Hur et al. 2001, Sec. 2)

    ``max_beta sum_j beta_j K(x_j, x_j) - sum_{i,j} beta_i beta_j K(x_i, x_j)``,
    ``0 <= beta_j <= C``, ``sum_j beta_j = 1``,

    with the Gaussian kernel ``K(x, y) = exp(-q ||x - y||^2)``, then labels clusters by the
    complete graph (slide 22) or by cone cluster labeling (slides 34-38).

    Symbols: ``q`` is the kernel width (scikit-learn's ``gamma``), ``C`` the soft-margin
    constant, ``beta`` the Lagrange multipliers, ``a = sum_j beta_j Phi(x_j)`` the centre and
    ``R`` the radius of the minimal sphere, ``R^2(x) = ||Phi(x) - a||^2`` (slide 19),
    ``theta`` the half-angle of a support vector cone and ``Z`` its data-space radius.

    Parameters
    ----------
    gamma : float, default=None
        The slides' ``q`` in ``K(x, y) = exp(-q ||x - y||^2)``. ``None`` means
        ``1 / (n_features * X.var())`` (scikit-learn's ``"scale"``). Larger ``q`` gives more
        support vectors and more clusters; :func:`q_list` generates a sequence of values.
    C : float, default=1.0
        Upper bound on each ``beta_j``; must be at least ``1/n_samples`` (otherwise
        ``sum beta = 1`` is infeasible). ``C >= 1`` allows no bounded support vectors
        (outliers); otherwise there are at most ``1/C`` of them (each carries ``beta = C``).
    labeling : {"cone", "complete_graph"}, default="cone"
        Cluster-labeling rule.
    n_segment_points : int, default=10
        Number ``m`` of interior sample points on each segment for ``"complete_graph"``.
    solver : {"libsvm", "cvxpy"}, default="libsvm"
        ``"libsvm"``: :class:`sklearn.svm.OneClassSVM` with ``nu = 1/(N C)`` and
        ``beta = alpha/(nu N)`` (identical to SVDD for the Gaussian kernel);
        ``"cvxpy"``: the dual as a quadratic program (CLARABEL).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point, ``0 .. n_clusters_ - 1``.
    n_clusters_ : int
    beta_ : ndarray of shape (n_samples,)
        Dual solution; sums to 1.
    support_ : ndarray of int
        Indices with ``beta > 0`` (support vectors, bounded or not).
    bounded_support_ : ndarray of int
        Indices with ``beta = C`` (bounded support vectors: outside the sphere, outliers).
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
        The ``q`` used.
    solve_time_, labeling_time_ : float
        Wall-clock seconds of the SVDD solve and of the labeling.
    n_features_in_ : int

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
    }

    def __init__(
        self, *, gamma=None, C=1.0, labeling="cone", n_segment_points=10, solver="libsvm"
    ):
        self.gamma = gamma
        self.C = C
        self.labeling = labeling
        self.n_segment_points = n_segment_points
        self.solver = solver

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
        _check_C(self.C, n)
        if self.gamma is None:
            var = float(X.var())
            q = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            q = float(self.gamma)
        K = rbf_kernel(X, gamma=q)
        beta, info = svdd_dual(K, self.C, solver=self.solver)
        R2, R2_points = svdd_radius_squared(K, beta, self.C)
        sv, bounded = _sv_masks(beta, self.C)
        free = sv & ~bounded
        quad = float(beta @ K @ beta)

        t0 = time.perf_counter()
        if self.labeling == "cone":
            V = free if free.any() else (R2_points <= R2_points.min())
            labels = cone_labels(X, V, q, min(R2, 1.0 - 1e-15))
            label_points = np.flatnonzero(V)
        else:
            labels, inside = complete_graph_labels(
                X, beta, q, R2, R2_points, n_segment_points=self.n_segment_points
            )
            label_points = np.flatnonzero(inside)
        self.labeling_time_ = time.perf_counter() - t0

        self.gamma_ = q
        self.beta_ = beta
        self.support_ = np.flatnonzero(sv)
        self.bounded_support_ = np.flatnonzero(bounded)
        self.radius_squared_ = R2
        self.distances_squared_ = R2_points
        self.cone_radius_ = cone_radius(min(R2, 1.0 - 1e-15), q)
        self.pythagoras_residual_ = 1.0 - quad - R2
        self.solve_time_ = info["solve_time"]
        self.labels_ = labels
        self.n_clusters_ = int(labels.max()) + 1
        self._support_vectors = X[sv]
        self._label_points = X[label_points]
        self._label_point_labels = labels[label_points]
        return self

    def predict(self, X):
        """Label new points by their nearest labeled training point.

        The labeled points are the support vectors on the sphere (cone labeling) or the
        training points inside the sphere (complete graph); this is the rule ``fit`` uses for
        the remaining training points, so ``predict`` on the training data returns
        ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        nearest = euclidean_distances(X, self._label_points, squared=True).argmin(axis=1)
        return self._label_point_labels[nearest]

    def distance_squared(self, X):
        """``R^2(x) = ||Phi(x) - a||^2`` for new points (slide 19); the sphere is ``R^2(x) = R^2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        r2 : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xtr = self._support_vectors
        b = self.beta_[self.support_]
        quad = float(b @ rbf_kernel(Xtr, gamma=self.gamma_) @ b)
        return 1.0 - 2.0 * rbf_kernel(X, Xtr, gamma=self.gamma_) @ b + quad


QList = namedtuple(
    "QList", ["q", "radius_squared", "n_support", "estimated_length", "target"]
)
QList.__doc__ = """Result of :func:`q_list`.

q : ndarray
    The kernel widths, increasing.
radius_squared : ndarray
    ``R^2(q)`` at each (non-decreasing).
n_support : ndarray of int
    Number of support vectors at each.
estimated_length : float
    The slides' estimate ``lg(max ||x_i - x_j||^2) - lg(min ||x_i - x_j||^2)`` (slide 29).
target : float
    ``1 - 1/N``, the limit of ``R^2`` as ``q -> infinity`` (slide 28).
"""


def q_list(X, C=1.0, *, solver="libsvm", max_length=100, rtol=1e-3):
    """The slides' q-list: kernel widths for exploring SVC (Lee & Daniels 2007, slides 28-29).

    ``R^2`` as a function of ``q`` starts at ``R^2(0) = 0``, is non-decreasing and tends to
    ``1 - 1/N`` (slide 28). The list starts at ``q_1 = 1 / max ||x_i - x_j||^2`` and uses a
    secant-like step: the line through the two latest points of the curve (the first step
    uses the lemma's point ``(0, 0)``) is extended to the level ``R^2 = 1 - 1/N`` and its
    crossing is the next ``q``,

        q_{k+1} = q_k + (1 - 1/N - R^2(q_k)) (q_k - q_{k-1}) / (R^2(q_k) - R^2(q_{k-1})).

    Because the curve is concave where the list runs, the secant stays above it and the
    sequence grows about geometrically: if the gap ``1 - 1/N - R^2`` decays like
    ``q^-p``, the step ratio ``r`` solves ``r^(p+1) = r + 1`` (the golden ratio for ``p = 1``;
    in practice the ratios fall from about 3 to 1.5-1.75), so its length is close to the
    slides' estimate ``lg(max ||x_i - x_j||^2) - lg(min ||x_i - x_j||^2)``. The list stops when
    every point is a support vector, when ``R^2`` is within ``rtol`` (relative) of
    ``1 - 1/N``, or after ``max_length`` values. The slides do not spell the step out; this
    is our reconstruction from "secant-like algorithm" and the lemmas.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    C : float, default=1.0
    solver : {"libsvm", "cvxpy"}
    max_length : int, default=100
    rtol : float, default=1e-3

    Returns
    -------
    QList
        ``q``, ``radius_squared``, ``n_support``, ``estimated_length``, ``target``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"q_list needs a 2-D array with at least 2 samples; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; remove or impute those entries.")
    n = X.shape[0]
    _check_C(C, n)
    d2 = pdist(X, "sqeuclidean")
    pos = d2[d2 > 0]
    if pos.size == 0:
        raise ValueError("All samples are identical: there is no kernel width to explore.")
    estimate = float(np.log2(pos.max()) - np.log2(pos.min()))
    target = 1.0 - 1.0 / n
    qs, R2s, nsv = [], [], []
    q_prev, R2_prev = 0.0, 0.0  # lemma: q = 0 gives R^2 = 0
    q = 1.0 / pos.max()
    while len(qs) < max_length:
        K = rbf_kernel(X, gamma=q)
        beta, _ = svdd_dual(K, C, solver=solver)
        R2, _ = svdd_radius_squared(K, beta, C)
        qs.append(q)
        R2s.append(R2)
        nsv.append(int(np.count_nonzero(beta > _ZERO_TOL)))
        if nsv[-1] == n or target - R2 <= rtol * target:
            break
        slope = (R2 - R2_prev) / (q - q_prev)
        q_next = q + (target - R2) / slope if slope > 0 else 2.0 * q
        q_prev, R2_prev = q, R2
        q = max(q_next, 1.01 * q)
    return QList(np.array(qs), np.array(R2s), np.array(nsv), estimate, target)
