"""Seeded, offline data sets used throughout the book.

Every function returns ``(X, y)`` with ``X`` of shape (n_samples, n_features) and ``y`` the
reference labels (used for evaluation only, never for fitting). Everything is generated here
or loaded from the data that scikit-learn ships, so nothing is downloaded.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn import datasets as _skd
from sklearn.utils import check_random_state

__all__ = [
    "two_circles",
    "jointed_circles",
    "two_gaussians",
    "moons",
    "iris",
    "digits",
    "blobs",
]


def _check_int(value, name, minimum):
    """``value`` as an int ``>= minimum``, or a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_nonnegative(value, name):
    """``value`` as a finite float ``>= 0``, or a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(value) and value >= 0
    ):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    return float(value)


def two_circles(n_samples=200, *, noise=0.05, factor=0.5, random_state=0):
    """Two concentric rings (inner radius ``factor``, outer radius 1), as the GMMC paper's Fig. 3a.

    ``n_samples >= 2`` (both rings get samples), ``noise >= 0`` (the standard deviation of
    the Gaussian noise), ``0 <= factor < 1``.
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    noise = _check_nonnegative(noise, "noise")
    X, y = _skd.make_circles(
        n_samples=n_samples, noise=noise, factor=factor, random_state=random_state
    )
    return X, y


def jointed_circles(n_samples=200, *, noise=0.03, random_state=0):
    """Two unit circles that touch at the origin (centres (-1, 0) and (1, 0)).

    Like the "two jointed circles" of the GMMC paper's Fig. 3c: two rings side by side that
    meet at one point. Angles are drawn uniformly, then Gaussian noise of standard deviation
    ``noise >= 0`` is added; ``n_samples >= 2``.
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    noise = _check_nonnegative(noise, "noise")
    rng = check_random_state(random_state)
    n0 = n_samples // 2
    y = np.r_[np.zeros(n0, dtype=int), np.ones(n_samples - n0, dtype=int)]
    theta = rng.uniform(0, 2 * np.pi, n_samples)
    centres = np.where(y[:, None] == 0, [-1.0, 0.0], [1.0, 0.0])
    X = centres + np.c_[np.cos(theta), np.sin(theta)] + noise * rng.standard_normal((n_samples, 2))
    return X, y


def two_gaussians(n_samples=200, *, distance=3.0, std=1.0, weights=(0.5, 0.5), random_state=0):
    """Two overlapping isotropic Gaussians in 2-D whose means are ``distance`` apart.

    ``weights`` sets the class proportions (unbalanced clusters for the SDP-MMC chapter);
    both classes must get at least one of the ``n_samples >= 2`` samples. ``std >= 0`` is the
    standard deviation of each Gaussian.
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    std = _check_nonnegative(std, "std")
    if isinstance(distance, bool) or not isinstance(distance, numbers.Real) or not math.isfinite(distance):
        raise ValueError(f"distance must be a finite number; got {distance!r}.")
    rng = check_random_state(random_state)
    w = np.asarray(weights, dtype=float)
    if w.shape != (2,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(
            f"weights must be two finite non-negative numbers with a positive sum; got {weights!r}."
        )
    n0 = int(round(n_samples * w[0] / w.sum()))
    if not 0 < n0 < n_samples:
        raise ValueError(
            f"weights={weights!r} leave a class without samples at n_samples={n_samples} "
            f"({n0} and {n_samples - n0}); use more samples or less extreme weights."
        )
    y = np.r_[np.zeros(n0, dtype=int), np.ones(n_samples - n0, dtype=int)]
    means = np.array([[-distance / 2, 0.0], [distance / 2, 0.0]])
    X = means[y] + std * rng.standard_normal((n_samples, 2))
    return X, y


def moons(n_samples=500, *, noise=0.1, random_state=0):
    """Two interleaving half circles (scikit-learn's ``make_moons``); ``n_samples >= 2``, ``noise >= 0``."""
    n_samples = _check_int(n_samples, "n_samples", 2)
    noise = _check_nonnegative(noise, "noise")
    return _skd.make_moons(n_samples=n_samples, noise=noise, random_state=random_state)


def iris():
    """Fisher's iris data (150 x 4, three classes), raw features, as shipped by scikit-learn."""
    data = _skd.load_iris()
    return data.data.astype(float), data.target


def digits(classes=None, n_per_class=None, *, scale=False, random_state=0):
    """scikit-learn's 8 x 8 handwritten digits (1797 x 64, pixel values 0..16).

    Parameters
    ----------
    classes : sequence of int, default=None
        Digits to keep (e.g. ``(3, 8)``); ``None`` keeps all ten. ``y`` keeps the digit values.
    n_per_class : int, default=None
        Draw this many samples of every kept class at random (balanced subsample);
        ``None`` keeps them all.
    scale : bool, default=False
        Divide the pixels by 16 so that inputs lie in [0, 1].
    random_state : int, RandomState instance or None
        Seed of the subsampling.
    """
    if n_per_class is not None:
        n_per_class = _check_int(n_per_class, "n_per_class", 1)
    data = _skd.load_digits()
    X, y = data.data.astype(float), data.target
    if classes is not None:
        classes = np.asarray(classes)
        if classes.ndim != 1 or classes.size == 0:
            raise ValueError(
                f"classes must be a non-empty sequence of digits 0..9 (or None for all ten); "
                f"got {classes.tolist()!r}."
            )
        unknown = np.setdiff1d(classes, np.arange(10))
        if unknown.size:
            raise ValueError(f"classes must be digits 0..9; got {unknown.tolist()}.")
        keep = np.isin(y, classes)
        X, y = X[keep], y[keep]
    if n_per_class is not None:
        rng = check_random_state(random_state)
        idx = []
        for c in np.unique(y):
            members = np.flatnonzero(y == c)
            if n_per_class > members.size:
                raise ValueError(
                    f"n_per_class={n_per_class} but digit {c} has only {members.size} samples."
                )
            idx.append(np.sort(rng.choice(members, n_per_class, replace=False)))
        idx = np.concatenate(idx)
        X, y = X[idx], y[idx]
    if scale:
        X = X / 16.0
    return X, y


def blobs(n_samples=300, *, centers=3, n_features=2, cluster_std=1.0, random_state=0):
    """Isotropic Gaussian blobs (scikit-learn's ``make_blobs``); ``n_samples >= 1``, ``cluster_std >= 0``."""
    n_samples = _check_int(n_samples, "n_samples", 1)
    if not np.all(np.isfinite(np.asarray(cluster_std, dtype=float))) or np.any(np.asarray(cluster_std) < 0):
        raise ValueError(f"cluster_std must be finite and >= 0; got {cluster_std!r}.")
    return _skd.make_blobs(
        n_samples=n_samples,
        centers=centers,
        n_features=n_features,
        cluster_std=cluster_std,
        random_state=random_state,
    )
