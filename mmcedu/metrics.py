"""Evaluating a clustering against reference labels.

A clustering is only defined up to renaming its clusters, so the error counts the samples
that are misassigned under the *best one-to-one matching* of predicted to true clusters
(found by the Hungarian algorithm, :func:`scipy.optimize.linear_sum_assignment`). When the
numbers of clusters differ, clusters left without a partner count every one of their samples
as misassigned. The adjusted Rand index (ARI) and normalized mutual information (NMI) are
re-exported from scikit-learn. :func:`permutation_mean_quadratic` is the exact mean of a
quadratic form over random relabelings with the same cluster sizes: the chance level of the
methods' own objectives (``objective_contrast``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = [
    "clustering_error",
    "clustering_accuracy",
    "best_matching",
    "adjusted_rand_score",
    "normalized_mutual_info_score",
    "permutation_mean_quadratic",
]


def _check_labels(y, name):
    """``y`` as a 1-D array of labels (a column vector is accepted), or a clear ``ValueError``."""
    if y is None or isinstance(y, (dict, set, str, bytes)):
        raise ValueError(f"{name} must be a 1-D array of labels, one per sample; got {type(y).__name__}.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        what = "a scalar" if y.ndim == 0 else f"an array of shape {y.shape}"
        raise ValueError(f"{name} must be a 1-D array of labels, one per sample; got {what}.")
    if y.dtype == object:
        bad = [v for v in y if v is None or isinstance(v, (dict, list, set, np.ndarray))
               or (isinstance(v, float) and not np.isfinite(v))]
        if bad:
            raise ValueError(f"{name} must hold labels (numbers or strings); found {bad[0]!r}.")
        try:
            np.unique(y)
        except TypeError:
            raise ValueError(
                f"{name} mixes labels of types that cannot be compared "
                f"({sorted({type(v).__name__ for v in y})}); use one type."
            ) from None
    elif y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity: labels must be finite.")
    elif y.dtype.kind == "c":
        raise ValueError(f"{name} has complex values: labels must be numbers or strings.")
    return y


def _check_pair(y_true, y_pred):
    y_true = _check_labels(y_true, "y_true")
    y_pred = _check_labels(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same length; got {y_true.size} and {y_pred.size}."
        )
    if y_true.size == 0:
        raise ValueError("Cannot evaluate an empty clustering.")
    return y_true, y_pred


def best_matching(y_true, y_pred):
    """Best one-to-one matching of predicted clusters to true classes.

    Returns
    -------
    mapping : dict
        ``{predicted label: true label}`` for the matched clusters.
    n_correct : int
        Number of samples whose matched label equals the true label.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    classes, class_idx = np.unique(y_true, return_inverse=True)
    clusters, cluster_idx = np.unique(y_pred, return_inverse=True)
    C = contingency_matrix(class_idx, cluster_idx)  # rows: true classes, cols: clusters
    rows, cols = linear_sum_assignment(C, maximize=True)
    mapping = {clusters[c]: classes[r] for r, c in zip(rows, cols)}
    return mapping, int(C[rows, cols].sum())


def clustering_error(y_true, y_pred):
    """Fraction of samples misassigned under the best one-to-one matching of clusters.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Any hashable labels; the numbers of clusters may differ.

    Returns
    -------
    error : float in [0, 1]
    """
    y_true, _ = _check_pair(y_true, y_pred)
    _, n_correct = best_matching(y_true, y_pred)
    return 1.0 - n_correct / y_true.size


def clustering_accuracy(y_true, y_pred):
    """``1 - clustering_error(y_true, y_pred)``."""
    return 1.0 - clustering_error(y_true, y_pred)


def permutation_mean_quadratic(A, v):
    """Exact ``E_sigma[v_sigma^T A v_sigma]`` over uniformly random permutations ``sigma``.

    With ``s1 = sum_i v_i``, ``s2 = sum_i v_i^2``: ``E[v_i^2] = s2 / n`` and, for ``i != j``,
    ``E[v_i v_j] = (s1^2 - s2) / (n (n - 1))``, so

    ``E = (s2 / n) tr(A) + (s1^2 - s2) / (n (n - 1)) (e^T A e - tr(A))``.

    ``v`` may be a matrix; the expectations of its columns are summed.
    """
    A = np.asarray(A, dtype=float)
    V = np.asarray(v, dtype=float)
    V = V[:, None] if V.ndim == 1 else V
    n = A.shape[0]
    trA = float(np.trace(A))
    eAe = float(A.sum())
    s1 = V.sum(axis=0)
    s2 = (V**2).sum(axis=0)
    return float(np.sum(s2 / n * trA + (s1**2 - s2) / (n * (n - 1)) * (eAe - trA)))
