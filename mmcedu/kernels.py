"""Kernels, kernel widths, graph Laplacians, centring and low-rank factors.

Every method in :mod:`mmcedu` that needs one of these pieces imports it from here.

Conventions
-----------
All Gaussian (RBF) kernels follow scikit-learn::

    K(x, y) = exp(-gamma * ||x - y||^2)

The source documents write the width differently; :func:`gamma_from_sigma` and
:func:`sigma_from_gamma` convert:

=====================  ==============================  =======================
convention             kernel                          gamma
=====================  ==============================  =======================
``"two_sigma_squared"``  exp(-d^2 / (2 sigma^2))        1 / (2 sigma^2)
``"sigma_squared"``      exp(-d^2 / sigma^2)            1 / sigma^2
=====================  ==============================  =======================

UMC-RLS (Pahikkala et al. 2012) uses ``"sigma_squared"`` with sigma a fraction of the
largest pairwise distance; GMMC (Valizadegan & Jin 2006) takes sigma as a fraction of the
*range* of pairwise distances (maximum minus minimum); the slides on support vector
clustering use gamma directly and call it ``q``.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils import check_random_state

__all__ = [
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


def rbf_kernel(X, Y=None, gamma=None):
    """Gaussian kernel ``K_ij = exp(-gamma ||x_i - y_j||^2)`` (scikit-learn's convention).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
    Y : array-like of shape (n_samples_Y, n_features), default=None
        ``None`` means ``Y = X``.
    gamma : float, default=None
        Inverse squared width; ``None`` means ``1 / n_features`` as in scikit-learn.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
    """
    X = np.asarray(X, dtype=float)
    Y = X if Y is None else np.asarray(Y, dtype=float)
    if gamma is None:
        gamma = 1.0 / X.shape[1]
    D2 = euclidean_distances(X, Y, squared=True)
    if Y is X:
        np.fill_diagonal(D2, 0.0)  # remove round-off so that K_ii = 1 exactly
    return np.exp(-gamma * D2)


def kernel_matrix(X, kernel="rbf", gamma=None):
    """The n x n kernel matrix an estimator works with.

    ``kernel="rbf"`` uses :func:`rbf_kernel`, ``"linear"`` uses ``X X^T`` and
    ``"precomputed"`` checks ``X`` with :func:`check_kernel_matrix` and returns it.
    """
    if kernel == "precomputed":
        return check_kernel_matrix(X)
    if kernel == "rbf":
        return rbf_kernel(X, gamma=gamma)
    if kernel == "linear":
        X = np.asarray(X, dtype=float)
        return X @ X.T
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
    if np.any(sigma <= 0):
        raise ValueError("Kernel widths sigma must be positive.")
    if convention == "two_sigma_squared":
        gamma = 1.0 / (2.0 * sigma**2)
    elif convention == "sigma_squared":
        gamma = 1.0 / sigma**2
    else:
        raise ValueError(f"convention must be one of {_CONVENTIONS}, got {convention!r}.")
    return gamma if gamma.ndim else float(gamma)


def sigma_from_gamma(gamma, *, convention="two_sigma_squared"):
    """Inverse of :func:`gamma_from_sigma`."""
    gamma = np.asarray(gamma, dtype=float)
    if np.any(gamma <= 0):
        raise ValueError("gamma must be positive.")
    if convention == "two_sigma_squared":
        sigma = np.sqrt(1.0 / (2.0 * gamma))
    elif convention == "sigma_squared":
        sigma = np.sqrt(1.0 / gamma)
    else:
        raise ValueError(f"convention must be one of {_CONVENTIONS}, got {convention!r}.")
    return sigma if sigma.ndim else float(sigma)


def pairwise_distance_range(X, *, block_size=2**20):
    """Smallest and largest Euclidean distance between two distinct samples of ``X``.

    Duplicated samples (distance 0) are ignored for the minimum. Distances are computed in
    blocks of about ``block_size`` entries, so memory stays O(n) even for large n.
    """
    X = np.asarray(X, dtype=float)
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
    dmin, dmax = pairwise_distance_range(X)
    fractions = np.asarray(fractions, dtype=float)
    if reference == "max":
        return fractions * dmax
    if reference == "range":
        return fractions * (dmax - dmin)
    raise ValueError(f"reference must be 'max' or 'range', got {reference!r}.")


def gamma_grid(X, fractions, *, reference="max", convention="two_sigma_squared"):
    """:func:`width_grid` converted to scikit-learn ``gamma`` values."""
    return gamma_from_sigma(width_grid(X, fractions, reference=reference), convention=convention)


def degree(K):
    """Degrees d_i = sum_j K_ij of the graph with weight matrix ``K``."""
    return np.asarray(K, dtype=float).sum(axis=1)


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
    K = np.asarray(K, dtype=float)
    return np.diag(degree(K)) - K


def normalized_laplacian(K):
    """Normalized graph Laplacian ``I - D^-1/2 K D^-1/2``. Its null vector is D^1/2 e.

    Raises
    ------
    ValueError
        When a sample has zero degree (an isolated point), for which D^-1/2 is undefined.
    """
    K = np.asarray(K, dtype=float)
    d = check_positive_degree(K, "the normalized Laplacian needs D^-1/2")
    s = 1.0 / np.sqrt(d)
    return np.eye(K.shape[0]) - s[:, None] * K * s[None, :]


def center_kernel(K):
    """Centre a kernel matrix in feature space: ``H K H`` with ``H = I - e e^T / n``.

    This is the kernel of the feature vectors phi(x_i) - mean_j phi(x_j); it equals
    :class:`sklearn.preprocessing.KernelCenterer` on the training matrix.
    """
    K = np.asarray(K, dtype=float)
    row = K.mean(axis=0)
    return K - row[None, :] - row[:, None] + row.mean()


def nystroem_factor(X, n_components, *, gamma=None, random_state=None, rcond=1e-10):
    """Nystroem low-rank factor ``Phi`` with ``Phi Phi^T ~ K`` for the RBF kernel.

    Chooses ``n_components`` landmark samples at random, then
    ``Phi = K_nm U diag(s)^-1/2`` where ``K_mm = U diag(s) U^T`` (eigenvalues below
    ``rcond * s_max`` are dropped). Memory is O(n * n_components); no n x n matrix is formed.

    Returns
    -------
    Phi : ndarray of shape (n_samples, r) with r <= n_components
    landmarks : ndarray of int, the indices of the landmark samples
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if not 1 <= n_components <= n:
        raise ValueError(f"n_components must be in [1, n_samples={n}], got {n_components}.")
    rng = check_random_state(random_state)
    landmarks = np.sort(rng.choice(n, size=n_components, replace=False))
    K_mm = rbf_kernel(X[landmarks], gamma=gamma)
    s, U = np.linalg.eigh(K_mm)
    keep = s > rcond * s.max()
    W = U[:, keep] / np.sqrt(s[keep])
    Phi = np.empty((n, int(keep.sum())))
    step = max(1, 2**22 // max(1, n_components))  # bounded memory for the n x m block
    for start in range(0, n, step):
        Phi[start : start + step] = rbf_kernel(X[start : start + step], X[landmarks], gamma=gamma) @ W
    return Phi, landmarks
