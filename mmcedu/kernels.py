"""Kernels, kernel widths, graph Laplacians, centring and low-rank factors.

Every method in :mod:`mmcedu` that needs one of these pieces imports it from here; the
kernel matrices themselves come from :mod:`sklearn.metrics.pairwise` and the Nystroem factor
from :class:`sklearn.kernel_approximation.Nystroem`.

Conventions
-----------
All Gaussian (RBF) kernels follow scikit-learn::

    K(x, y) = exp(-gamma * ||x - y||^2)

``gamma=None`` means the *median heuristic* (:func:`median_gamma`) in every estimator and
helper of the package: ``gamma = 1 / (2 median_{i<j} ||x_i - x_j||^2)``.

The source documents write the width differently; :func:`gamma_from_sigma` and
:func:`sigma_from_gamma` convert:

=====================  ==============================  =======================
convention             kernel                          gamma
=====================  ==============================  =======================
``"two_sigma_squared"``  exp(-d^2 / (2 sigma^2))        1 / (2 sigma^2)
``"sigma_squared"``      exp(-d^2 / sigma^2)            1 / sigma^2
=====================  ==============================  =======================

UMC-RLS (Pahikkala et al. 2012) uses ``"sigma_squared"`` with sigma a fraction of the
largest pairwise distance (:func:`max_distance_gamma`); GMMC (Valizadegan & Jin 2006) takes
sigma as a fraction of the *range* of pairwise distances (maximum minus minimum,
:func:`gamma_grid` with ``reference="range"``); the slides on support vector clustering use
gamma directly and call it ``q``. These rules reproduce the papers; none of them is a default.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import euclidean_distances, pairwise_kernels
from sklearn.metrics.pairwise import rbf_kernel as _sklearn_rbf_kernel
from sklearn.utils import check_array

from ._validation import check_finite_result, check_scale

__all__ = [
    "median_gamma",
    "max_distance_gamma",
    "rbf_kernel",
    "kernel_matrix",
    "gamma_from_sigma",
    "sigma_from_gamma",
    "pairwise_distance_range",
    "width_grid",
    "gamma_grid",
    "degree",
    "check_positive_degree",
    "normalized_laplacian",
    "unnormalized_laplacian",
    "center_kernel",
    "nystroem_factor",
    "check_kernel_matrix",
]

_CONVENTIONS = ("two_sigma_squared", "sigma_squared")
#: Seed of the subsample :func:`median_gamma` draws for large data sets (fixed: deterministic).
_MEDIAN_SEED = 0
_OVERFLOW_HINT = (
    "squared distances between the samples overflow or underflow float64; standardize the data "
    "(sklearn.preprocessing.StandardScaler) or divide it by its scale."
)


def _check_data(X, name="X", *, min_samples=1):
    """``X`` as a finite 2-D float array, or a clear error."""
    if not sp.issparse(X) and np.ndim(X) != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got shape {np.shape(X)}. Reshape one "
            f"feature with {name}.reshape(-1, 1), one sample with {name}.reshape(1, -1)."
        )
    X = check_array(X, dtype=np.float64, ensure_min_samples=min_samples, input_name=name)
    check_scale(X, name=name)
    return X


def _check_positive(value, name, *, allow_none=False):
    """A positive finite real number, or a ``ValueError`` naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(value) and value > 0
    ):
        raise ValueError(f"{name} must be a positive finite number; got {value!r}.")
    return float(value)


def _check_square(K, name="K"):
    """``K`` as a finite square float matrix, or a clear ``ValueError``."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square (n_samples, n_samples) matrix; got shape {K.shape}.")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return K


def median_gamma(X, *, max_samples=1000):
    """The median heuristic for the RBF parameter: ``gamma = 1 / (2 m)``, ``m = median ||x_i - x_j||^2``.

    The median runs over the distinct pairs ``i < j`` with a positive distance. It is the
    kernel width ``sigma`` equal to the median distance between samples,
    ``exp(-||x - y||^2 / (2 sigma^2))`` with ``sigma^2 = m`` [1]_ [2]_: the kernel then
    neither sees every point as its own cluster (``gamma`` too large, ``K -> I``) nor all
    points as one (``gamma`` too small, ``K -> e e^T``). It is the meaning of ``gamma=None``
    in every estimator and helper of :mod:`mmcedu`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    max_samples : int, default=1000
        With more samples than this, the median is taken over the pairs of ``max_samples``
        rows drawn without replacement with a fixed seed: the result is deterministic, and
        time and memory stay bounded (``max_samples^2 / 2`` distances; no n x n array).

    Returns
    -------
    gamma : float
        ``1.0`` when no two samples differ (no positive distance).

    Raises
    ------
    ValueError
        When ``X`` is not a finite 2-D array, or its scale makes squared distances overflow or
        underflow float64 (standardize it).

    See Also
    --------
    max_distance_gamma : the width rule of the UMC-RLS paper.
    gamma_grid : widths as fractions of the largest distance or of the distance range.

    References
    ----------
    .. [1] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schoelkopf and A. Smola. A kernel
       two-sample test. JMLR 13:723-773, 2012 (Section 8: the median heuristic).
    .. [2] B. Schoelkopf and A. J. Smola. Learning with Kernels. MIT Press, 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from mmcedu.kernels import median_gamma
    >>> X = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 4, 9: median 4
    >>> median_gamma(X)
    0.125
    """
    X = _check_data(X)
    if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Integral) or max_samples < 2:
        raise ValueError(f"max_samples must be an integer >= 2; got {max_samples!r}.")
    n = X.shape[0]
    if n > max_samples:
        rows = np.random.RandomState(_MEDIAN_SEED).choice(n, max_samples, replace=False)
        X = X[np.sort(rows)]
    d2 = pdist(X, "sqeuclidean")
    d2 = d2[d2 > 0]
    if d2.size == 0:
        return 1.0
    gamma = float(1.0 / (2.0 * np.median(d2)))
    check_finite_result(np.array([gamma, np.median(d2)]), what="The median heuristic",
                        hint=_OVERFLOW_HINT)
    return gamma


def max_distance_gamma(X, fraction=0.5, *, convention="sigma_squared"):
    """The UMC-RLS paper's width: ``sigma = fraction x`` the largest pairwise distance.

    Pahikkala et al. (2012, Section IV-C) use the kernel ``exp(-d^2 / sigma^2)``
    (``convention="sigma_squared"``, so ``gamma = 1 / sigma^2``) with ``sigma`` a fraction
    of the largest distance between two samples. For reproducing the paper only: the
    package's default is :func:`median_gamma`. Finding the largest distance takes O(n^2)
    time (in blocks, O(n) memory, :func:`pairwise_distance_range`).

    Returns
    -------
    gamma : float
        ``1.0`` when no two samples differ.
    """
    fraction = _check_positive(fraction, "fraction")
    d = pairwise_distance_range(X)[1]
    if d <= 0:
        return 1.0
    return gamma_from_sigma(fraction * d, convention=convention)


def rbf_kernel(X, Y=None, gamma=None):
    """Gaussian kernel ``K_ij = exp(-gamma ||x_i - y_j||^2)`` (scikit-learn's convention).

    :func:`sklearn.metrics.pairwise.rbf_kernel`, with ``K_ii = 1`` exactly when ``Y`` is
    ``None`` (no round-off on the diagonal) and the package's meaning of ``gamma=None``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
        ``None`` means ``Y = X``.
    gamma : float, default=None
        RBF parameter of ``exp(-gamma ||x - y||^2)``; ``None`` means the median heuristic
        :func:`median_gamma` computed on ``X``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)

    Raises
    ------
    ValueError
        When ``X`` or ``Y`` is not a finite 2-D array (a 1-D array: reshape it), their
        numbers of features differ, ``gamma`` is not a positive finite number, or the data's
        scale makes squared distances overflow or underflow float64 (standardize it).
    """
    X = _check_data(X, min_samples=0)
    if Y is not None:
        Y = _check_data(Y, "Y", min_samples=0)
        if Y.shape[1] != X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features and Y has {Y.shape[1]}; they must have the same."
            )
    gamma = median_gamma(X) if gamma is None else _check_positive(gamma, "gamma")
    K = _sklearn_rbf_kernel(X, Y, gamma=gamma)
    if Y is None:
        np.fill_diagonal(K, 1.0)  # exact unit diagonal, whatever the round-off
    check_finite_result(K, what="The rbf kernel matrix", hint=_OVERFLOW_HINT)
    return K


def kernel_matrix(X, kernel="rbf", gamma=None):
    """The n x n kernel matrix an estimator works with.

    ``kernel="rbf"`` uses :func:`rbf_kernel` (``gamma=None``: the median heuristic),
    ``"linear"`` :func:`sklearn.metrics.pairwise.pairwise_kernels` (``X X^T``) and
    ``"precomputed"`` checks ``X`` with :func:`check_kernel_matrix` and returns it.
    """
    if kernel == "precomputed":
        return check_kernel_matrix(X)
    if kernel == "rbf":
        return rbf_kernel(X, gamma=gamma)
    if kernel == "linear":
        K = pairwise_kernels(_check_data(X), metric="linear")
        check_finite_result(K, what="The linear kernel matrix", hint=_OVERFLOW_HINT)
        return K
    raise ValueError(f"kernel must be 'rbf', 'linear' or 'precomputed', got {kernel!r}.")


def check_kernel_matrix(K, *, psd=False, tol=1e-8, name="precomputed kernel"):
    """Check that ``K`` is a finite, square, symmetric (and optionally PSD) matrix.

    Raises
    ------
    ValueError
        Saying what is wrong: shape, non-finite entries, the largest asymmetry, or
        (with ``psd=True``) the most negative eigenvalue.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"The {name} must be a square (n_samples, n_samples) matrix; got shape {K.shape}."
        )
    if not np.all(np.isfinite(K)):
        raise ValueError(f"The {name} contains NaN or infinity; compute it from finite data.")
    scale = max(1.0, float(np.max(np.abs(K)))) if K.size else 1.0
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asym > tol * scale:
        raise ValueError(
            f"The {name} must be symmetric; max |K - K^T| = {asym:.3g}. "
            "Symmetrize it, e.g. (K + K.T) / 2."
        )
    if psd and K.size:
        lam_min = float(np.linalg.eigvalsh((K + K.T) / 2)[0])
        if lam_min < -tol * scale * K.shape[0]:
            raise ValueError(
                f"The {name} is not positive semidefinite: its smallest eigenvalue is "
                f"{lam_min:.3g} (relative {lam_min / scale:.3g}). Use a valid kernel, or "
                "clip the negative eigenvalues to zero."
            )
    return K


def gamma_from_sigma(sigma, *, convention="two_sigma_squared"):
    """Convert a kernel width sigma to scikit-learn's ``gamma``.

    ``convention="two_sigma_squared"``: exp(-d^2/(2 sigma^2)), gamma = 1/(2 sigma^2).
    ``convention="sigma_squared"``: exp(-d^2/sigma^2), gamma = 1/sigma^2.
    """
    sigma = np.asarray(sigma, dtype=float)
    if not np.all(np.isfinite(sigma) & (sigma > 0)):
        raise ValueError(f"Kernel widths sigma must be positive and finite; got {sigma.tolist()!r}.")
    if convention not in _CONVENTIONS:
        raise ValueError(f"convention must be one of {_CONVENTIONS}, got {convention!r}.")
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        gamma = 1.0 / (2.0 * sigma**2) if convention == "two_sigma_squared" else 1.0 / sigma**2
    if not np.all(np.isfinite(gamma) & (gamma > 0)):
        raise ValueError(
            f"Kernel widths sigma = {sigma.tolist()!r} are too small or too large for float64: "
            "gamma overflows or underflows. Rescale the data."
        )
    return gamma if gamma.ndim else float(gamma)


def sigma_from_gamma(gamma, *, convention="two_sigma_squared"):
    """Inverse of :func:`gamma_from_sigma`."""
    gamma = np.asarray(gamma, dtype=float)
    if not np.all(np.isfinite(gamma) & (gamma > 0)):
        raise ValueError(f"gamma must be positive and finite; got {gamma.tolist()!r}.")
    if convention not in _CONVENTIONS:
        raise ValueError(f"convention must be one of {_CONVENTIONS}, got {convention!r}.")
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        sigma = np.sqrt(1.0 / (2.0 * gamma)) if convention == "two_sigma_squared" else np.sqrt(1.0 / gamma)
    if not np.all(np.isfinite(sigma) & (sigma > 0)):
        raise ValueError(f"gamma = {gamma.tolist()!r} is too small or too large for float64.")
    return sigma if sigma.ndim else float(sigma)


def pairwise_distance_range(X, *, block_size=2**20):
    """Smallest and largest Euclidean distance between two distinct samples of ``X``.

    Duplicated samples (distance 0) are ignored for the minimum. Distances are computed in
    blocks of about ``block_size`` entries, so memory stays O(n) even for large n.

    Raises
    ------
    ValueError
        With fewer than two samples, non-finite or non-2-D data, or a scale at which squared
        distances overflow or underflow float64 (standardize the data).
    """
    X = _check_data(X)
    n = X.shape[0]
    if n < 2:
        raise ValueError("Need at least two samples to measure pairwise distances.")
    step = max(1, block_size // n)
    dmin, dmax = np.inf, 0.0
    for start in range(0, n, step):
        D2 = euclidean_distances(X[start : start + step], X, squared=True)
        rows = np.arange(start, min(start + step, n))
        D2[rows - start, rows] = 0.0  # exact zero on the diagonal
        dmax = max(dmax, float(D2.max()))
        D2[D2 <= 0] = np.inf  # in place: duplicates and the diagonal do not count for the minimum
        dmin = min(dmin, float(D2.min()))
    check_finite_result(np.array([dmax]), what="The largest pairwise distance", hint=_OVERFLOW_HINT)
    return (float(np.sqrt(dmin)) if np.isfinite(dmin) else 0.0), float(np.sqrt(dmax))


def width_grid(X, fractions, *, reference="max"):
    """Kernel widths sigma as fractions of the data's pairwise distances.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    fractions : array-like of float
    reference : {"max", "range"}
        ``"max"``: sigma = f * max distance (UMC-RLS, Pahikkala et al. 2012, Sec. V).
        ``"range"``: sigma = f * (max - min distance) (GMMC, Valizadegan & Jin 2006, Fig. 2,
        "the percentage of the distance range").

    Returns
    -------
    sigmas : ndarray of the same length as ``fractions``
    """
    if reference not in ("max", "range"):
        raise ValueError(f"reference must be 'max' or 'range', got {reference!r}.")
    fractions = np.asarray(fractions, dtype=float)
    if fractions.ndim > 1 or not np.all(np.isfinite(fractions) & (fractions > 0)):
        raise ValueError(f"fractions must be positive finite numbers; got {fractions.tolist()!r}.")
    dmin, dmax = pairwise_distance_range(X)
    if dmax <= 0 or (reference == "range" and dmax - dmin <= 0):
        raise ValueError(
            "The samples are all identical (or all equally far apart, with reference='range'): "
            "there is no distance to scale the kernel widths by. Give gamma directly."
        )
    if reference == "max":
        return fractions * dmax
    if reference == "range":
        return fractions * (dmax - dmin)
    raise ValueError(f"reference must be 'max' or 'range', got {reference!r}.")


def gamma_grid(X, *, octaves=None, fractions=None, reference="max", convention="two_sigma_squared"):
    """RBF widths ``gamma`` for a grid search: the package's one width-grid builder.

    By octaves (the default, ``octaves=range(-3, 6)``): ``gamma_j = median_gamma(X) * 2**j``,
    so ``j = 0`` is the width of ``gamma=None`` in every estimator. By fractions (the papers'
    rule): :func:`width_grid` ``sigma = f * (largest distance, or the distance range)``
    converted to ``gamma`` with ``convention``. Give one of ``octaves`` and ``fractions``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> gamma_grid(X, octaves=[0, 1])
    [0.5, 1.0]
    """
    if fractions is not None:
        if octaves is not None:
            raise ValueError("Give octaves or fractions, not both.")
        return gamma_from_sigma(width_grid(X, fractions, reference=reference), convention=convention)
    g0 = median_gamma(X)
    return [float(g0 * 2.0**j) for j in (range(-3, 6) if octaves is None else octaves)]


def degree(K):
    """Degrees d_i = sum_j K_ij of the graph with weight matrix ``K`` (square, finite)."""
    return _check_square(K).sum(axis=1)


def check_positive_degree(K, why="the graph Laplacian needs every degree > 0"):
    """Degrees of ``K``, or a clear ``ValueError`` naming the isolated samples (degree <= 0)."""
    d = degree(K)
    isolated = np.flatnonzero(d <= 0)
    if isolated.size:
        raise ValueError(
            f"{isolated.size} sample(s) have zero degree (isolated points, first index "
            f"{isolated[0]}): {why}. Use a wider kernel (smaller gamma) or remove the "
            "isolated samples."
        )
    return d


def unnormalized_laplacian(K):
    """Unnormalized graph Laplacian ``D - K`` with ``D = diag(K e)``. Its null vector is e."""
    K = _check_square(K)
    return np.diag(degree(K)) - K


def normalized_laplacian(K):
    """Normalized graph Laplacian ``I - D^-1/2 K D^-1/2``. Its null vector is D^1/2 e.

    Raises
    ------
    ValueError
        When a sample has zero degree (an isolated point), for which D^-1/2 is undefined.
    """
    K = _check_square(K)
    d = check_positive_degree(K, "the normalized Laplacian needs D^-1/2")
    s = 1.0 / np.sqrt(d)
    return np.eye(K.shape[0]) - s[:, None] * K * s[None, :]


def center_kernel(K):
    """Centre a kernel matrix in feature space: ``H K H`` with ``H = I - e e^T / n``.

    This is the kernel of the feature vectors phi(x_i) - mean_j phi(x_j); it equals
    :class:`sklearn.preprocessing.KernelCenterer` on the training matrix.
    """
    K = _check_square(K)
    row = K.mean(axis=0)
    return K - row[None, :] - row[:, None] + row.mean()


def nystroem_factor(X, n_components, *, gamma=None, random_state=None):
    """Nystroem low-rank factor ``Phi`` with ``Phi Phi^T ~ K`` for the RBF kernel.

    :class:`sklearn.kernel_approximation.Nystroem` with ``n_components`` landmark samples
    chosen at random: ``Phi = K_nm K_mm^{-1/2}`` [1]_. Memory is O(n * n_components); no
    n x n matrix is formed.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_components : int
        Number of landmarks, the rank of the approximation (``1 <= n_components <= n``).
    gamma : float, default=None
        RBF parameter; ``None`` means the median heuristic :func:`median_gamma`.
    random_state : int, RandomState instance or None, default=None
        Seed of the landmark choice.

    Returns
    -------
    Phi : ndarray of shape (n_samples, n_components)
    landmarks : ndarray of int, the indices of the landmark samples

    References
    ----------
    .. [1] C. K. I. Williams and M. Seeger. Using the Nystroem method to speed up kernel
       machines. NIPS 13, 2001.
    """
    X = _check_data(X)
    n = X.shape[0]
    if (isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral)
            or not 1 <= n_components <= n):
        raise ValueError(f"n_components must be an integer in [1, n_samples={n}]; got {n_components!r}.")
    gamma = median_gamma(X) if gamma is None else _check_positive(gamma, "gamma")
    ny = Nystroem(kernel="rbf", gamma=gamma, n_components=int(n_components),
                  random_state=random_state)
    Phi = ny.fit_transform(X)
    check_finite_result(Phi, what="The Nystroem factor", hint=_OVERFLOW_HINT)
    return Phi, np.asarray(ny.component_indices_)
