"""Label-free criteria: how good is a clustering, judged without labels?

:class:`mmcedu.LabelFreeSearch` scores every grid point with one of these criteria; the
functions here are the criteria themselves, usable on their own. Every criterion is oriented
so that **larger is better**.

Notation: ``X`` holds ``n`` samples; resample ``r`` is a subset ``S_r`` of ``m`` samples; the
estimator with parameters ``theta`` fitted on ``S_r`` gives labels ``c_r^theta``. A labeling
is *trivial* when it has fewer than two clusters or one cluster per sample (label ``-1``,
scikit-learn's noise, is not counted as a cluster).

Criteria
--------
``"stability"`` (Ben-Hur, Elisseeff & Guyon 2002)
    ``s(theta) = mean over pairs r < t of ARI(c_r, c_t restricted to S_r & S_t)``: the
    adjusted Rand index of two clusterings of overlapping subsamples on their common points.
    The ARI is already normalized by random labelings *with the same cluster sizes*
    (its expectation under the permutation model is 0, Hubert & Arabie 1985). Correction for
    trivial answers: a pair of two trivial labelings scores NaN instead of the ARI's
    conventional 1 (so "one cluster everywhere" is never perfectly stable), a trivial
    labeling against a non-trivial one scores 0 (the ARI's value).
``"transfer_stability"`` (Lange, Roth, Braun & Buhmann 2004)
    Every fit labels all ``n`` points: its own labels on ``S_r``, and on the other points the
    estimator's ``predict`` (or, without one, the label of the nearest point of ``S_r``).
    For two such labelings ``a, b`` of the ``n`` points, ``d(a, b) = 1 - max_pi (1/n)
    #{i : pi(a_i) = b_i}`` is the disagreement after the best one-to-one matching ``pi`` of
    the clusters (Hungarian algorithm), and
    ``S(a, b) = 1 - d(a, b) / E_sigma d(a, sigma(b))``
    with ``sigma`` a uniformly random permutation of the ``n`` entries of ``b`` (random
    labels with the same cluster sizes; the expectation is a Monte Carlo mean over
    ``n_permutations=20`` permutations). This is Lange et al.'s normalized instability,
    turned into a score: 1 for identical partitions, 0 for chance agreement.
``"silhouette"`` (Rousseeuw 1987)
    Mean silhouette of ``c_r`` in the input space (Euclidean), averaged over resamples.
    Noise points (label ``-1``) are left out of the distances and contribute 0 to the mean,
    so declaring points noise is not rewarded.
``"kernel_silhouette"``
    The silhouette in the feature space of the fitted estimator's kernel, with squared
    distances ``d_ij^2 = K_ii + K_jj - 2 K_ij``. The kernel is read from the fitted estimator:
    ``kernel="precomputed"`` (``X`` is ``K``), or an RBF kernel (``kernel="rbf"``,
    ``affinity="rbf"``, or an estimator with a ``gamma`` and no ``kernel`` parameter) whose
    width is the fitted ``gamma_`` when it is a positive number, else the ``gamma``
    parameter when it is a positive number. **Fallback rule**: when no kernel can be
    determined this way (no kernel, ``kernel="linear"``, ``gamma=None`` with no fitted scalar
    ``gamma_``, another kernel), the input-space silhouette is used; for ``"linear"`` it is
    the same number, for the others a warning says how many fits fell back.
``"objective"``
    The method's own quantity relative to its value for random labelings with the same
    cluster sizes, computed by the fitted estimator's ``objective_contrast(X)``:
    ``1 - J(c) / E_sigma J(sigma(c))`` for UMC-RLS, SDP MMC and EMMC, and ``1 - J* / (n avg)``
    for GMMC's relaxed objective (each estimator's docstring gives its ``J``). Raw objectives
    are not comparable across kernel widths: they change with the width for *every* labeling
    (e.g. UMC-RLS's ``Q`` tends to ``k n alpha / (1 + alpha)`` as ``gamma -> inf`` whatever
    the labels); the ratio asks how much better the found labels are than chance at the same
    width.
``"eigengap"`` (von Luxburg 2007)
    ``lambda_{k+1} - lambda_k`` of the normalized Laplacian ``I - D^-1/2 K D^-1/2`` of the
    subsample's kernel, ``lambda_1 <= lambda_2 <= ...``, with ``k`` the number of clusters
    the fit found. Eigenvalues lie in ``[0, 2]`` at every width, so gaps are comparable.
    Needs an RBF or precomputed kernel (as for ``"kernel_silhouette"``, without fallback).
``"plateau"`` (Lee & Daniels 2007, the q-list)
    Along the width parameter (``gamma`` if it is in the grid, else the only numeric
    parameter the grid varies), the number of clusters found forms runs of equal values.
    A grid point scores its distance, in octaves (``log2`` of the width), to the nearer end of
    its run; a run ends half-way (in ``log2``) between two grid points with different counts
    and at the last grid point on each side. The best point is the middle of the longest run.
    Runs of trivial counts (1 or one cluster per sample) score 0.

References
----------
.. [1] A. Ben-Hur, A. Elisseeff, I. Guyon. A stability based method for discovering structure
   in clustered data. Pacific Symposium on Biocomputing 7:6-17, 2002.
.. [2] T. Lange, V. Roth, M. L. Braun, J. M. Buhmann. Stability-based validation of
   clustering solutions. Neural Computation 16(6):1299-1323, 2004.
.. [3] L. Hubert, P. Arabie. Comparing partitions. Journal of Classification 2:193-218, 1985.
.. [4] P. J. Rousseeuw. Silhouettes: a graphical aid to the interpretation and validation of
   cluster analysis. J. Comput. Appl. Math. 20:53-65, 1987.
.. [5] U. von Luxburg. A tutorial on spectral clustering. Statistics and Computing
   17(4):395-416, 2007 (Section 8.3, the eigengap heuristic).
.. [6] S. Ben-David, U. von Luxburg, D. Pal. A sober look at clustering stability. COLT 2006.
.. [7] S.-H. Lee, K. Daniels. Gaussian kernel width exploration and cone cluster labeling for
   support vector clustering. UMass Lowell, 2007 (the q-list).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, silhouette_samples
from sklearn.metrics.pairwise import rbf_kernel as _sk_rbf_kernel
from sklearn.utils import check_random_state

__all__ = [
    "CRITERIA",
    "n_clusters_of",
    "is_trivial",
    "pair_stability",
    "matched_disagreement",
    "transfer_stability",
    "silhouette",
    "kernel_silhouette",
    "feature_space_distances",
    "estimator_kernel",
    "laplacian_eigengap",
    "plateau_scores",
]

#: Criteria known to :class:`mmcedu.LabelFreeSearch`; all are "larger is better".
CRITERIA = (
    "stability",
    "transfer_stability",
    "silhouette",
    "kernel_silhouette",
    "objective",
    "eigengap",
    "plateau",
)
N_PERMUTATIONS = 20


def n_clusters_of(labels):
    """Number of clusters of a labeling; label ``-1`` (noise) is not a cluster."""
    labels = np.asarray(labels)
    u = np.unique(labels)
    return int(np.sum(u != -1))


def is_trivial(labels):
    """True when ``labels`` has fewer than 2 clusters or one cluster per (non-noise) sample."""
    labels = np.asarray(labels)
    k = n_clusters_of(labels)
    return k < 2 or k >= np.count_nonzero(labels != -1)


def _positive_number(value):
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and np.isfinite(value)
        and value > 0
    ) or (isinstance(value, np.ndarray) and value.ndim == 0 and np.isfinite(value) and value > 0)


def pair_stability(labels_a, labels_b):
    """Adjusted Rand index of two labelings of the same points, with the trivial-answer rule.

    Ben-Hur et al. (2002) compare clusterings of two overlapping subsamples on their common
    points; the ARI (Hubert & Arabie 1985) is their agreement corrected by its expectation
    for random labelings with the same cluster sizes.

    Returns
    -------
    float
        The ARI; NaN when both labelings are trivial (:func:`is_trivial`), where the ARI's
        convention would give a perfect 1 to "one cluster" against "one cluster".
    """
    a, b = np.asarray(labels_a), np.asarray(labels_b)
    if a.shape != b.shape:
        raise ValueError(f"labelings must have the same shape; got {a.shape} and {b.shape}.")
    if a.size == 0 or (is_trivial(a) and is_trivial(b)):
        return np.nan
    return float(adjusted_rand_score(a, b))


def _contingency(a, b):
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    C = np.zeros((ai.max() + 1, bi.max() + 1), dtype=np.int64)
    np.add.at(C, (ai, bi), 1)
    return C, ai, bi


def matched_disagreement(labels_a, labels_b):
    """``1 - max_pi (1/n) #{i : pi(a_i) = b_i}``: disagreement after the best matching.

    ``pi`` ranges over one-to-one matchings of the clusters of ``a`` to those of ``b``
    (Hungarian algorithm on the contingency table); unmatched clusters count as disagreement.
    """
    a, b = np.asarray(labels_a), np.asarray(labels_b)
    C, _, _ = _contingency(a, b)
    rows, cols = linear_sum_assignment(C, maximize=True)
    return 1.0 - C[rows, cols].sum() / a.size


def transfer_stability(labels_a, labels_b, *, n_permutations=N_PERMUTATIONS, random_state=None):
    """Lange et al.'s normalized stability of two labelings of the same ``n`` points.

    ``S = 1 - d(a, b) / E_sigma d(a, sigma(b))`` with ``d`` the matched disagreement
    (:func:`matched_disagreement`) and ``sigma`` a random permutation of the entries of ``b``
    (random labels with the same cluster sizes), the expectation estimated from
    ``n_permutations`` permutations. 1: identical partitions; 0: chance agreement.

    Returns NaN when both labelings are trivial, 0 when exactly one is (then ``d`` equals its
    expectation).

    References
    ----------
    T. Lange, V. Roth, M. L. Braun, J. M. Buhmann. Stability-based validation of clustering
    solutions. Neural Computation 16(6):1299-1323, 2004 (Section 3, normalization by the
    stability of random labelings).
    """
    a, b = np.asarray(labels_a), np.asarray(labels_b)
    if a.shape != b.shape:
        raise ValueError(f"labelings must have the same shape; got {a.shape} and {b.shape}.")
    ta, tb = is_trivial(a), is_trivial(b)
    if ta and tb:
        return np.nan
    if ta or tb:
        return 0.0
    rng = check_random_state(random_state)
    d = matched_disagreement(a, b)
    d_rand = np.mean([matched_disagreement(a, rng.permutation(b)) for _ in range(n_permutations)])
    if d_rand <= 0:
        return np.nan
    return float(1.0 - d / d_rand)


def _silhouette_from(data, labels, metric):
    labels = np.asarray(labels)
    if is_trivial(labels):
        return np.nan
    keep = labels != -1
    if metric == "precomputed":
        data = data[np.ix_(keep, keep)]
    else:
        data = data[keep]
    kept = labels[keep]
    if not 2 <= n_clusters_of(kept) <= kept.size - 1:
        return np.nan
    s = silhouette_samples(data, kept, metric=metric)
    return float(s.sum() / labels.size)  # noise points contribute 0


def silhouette(X, labels):
    """Mean silhouette (Rousseeuw 1987) of ``labels`` in the input space.

    ``s_i = (b_i - a_i) / max(a_i, b_i)`` with ``a_i`` the mean distance of sample ``i`` to its
    own cluster and ``b_i`` the smallest mean distance to another cluster. Noise points
    (label ``-1``) are left out of ``a`` and ``b`` and count 0 in the mean; a trivial labeling
    gives NaN.
    """
    return _silhouette_from(np.asarray(X, dtype=float), labels, "euclidean")


def feature_space_distances(K):
    """Distances in the feature space of a kernel: ``sqrt(K_ii + K_jj - 2 K_ij)``."""
    K = np.asarray(K, dtype=float)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    np.maximum(D2, 0.0, out=D2)
    D = np.sqrt(D2)
    np.fill_diagonal(D, 0.0)
    return D


def kernel_silhouette(K, labels):
    """Mean silhouette of ``labels`` in the feature space of the kernel matrix ``K``.

    The silhouette of :func:`silhouette` with distances ``d_ij^2 = K_ii + K_jj - 2 K_ij``
    (:func:`feature_space_distances`). For the linear kernel ``K = X X^T`` this is the
    input-space silhouette; for the RBF kernel ``d_ij^2 = 2 - 2 exp(-gamma ||x_i - x_j||^2)``,
    which tends to ``2 gamma ||x_i - x_j||^2`` as ``gamma -> 0`` (the input-space silhouette
    again) and saturates at 2 for points farther apart than about ``1 / sqrt(gamma)``.
    """
    return _silhouette_from(feature_space_distances(K), labels, "precomputed")


def _params(est):
    try:
        return est.get_params(deep=False)
    except Exception:  # pragma: no cover - not a scikit-learn estimator
        return {}


def estimator_kernel(estimator, X, Y=None):
    """The kernel matrix a fitted estimator used, or ``None`` when it cannot be determined.

    Rules (in this order): ``kernel`` or ``affinity`` equal to ``"precomputed"``: ``X`` is the
    kernel matrix (returned as is; ``Y`` is ignored). ``"linear"``: ``X Y^T``. ``"rbf"`` (or
    no ``kernel``/``affinity`` parameter but a ``gamma`` parameter): the RBF kernel with
    width the fitted ``gamma_`` if it is a positive number, else the ``gamma`` parameter if
    it is a positive number. Anything else: ``None``.

    Returns
    -------
    K : ndarray or None
    kind : str, ``"precomputed"``, ``"linear"``, ``"rbf"`` or the reason for ``None``.
    """
    params = _params(estimator)
    kind = params.get("kernel", params.get("affinity", None))
    if kind is None and "gamma" in params:
        kind = "rbf"
    X = np.asarray(X, dtype=float)
    Y = X if Y is None else np.asarray(Y, dtype=float)
    if kind == "precomputed":
        return X, "precomputed"
    if kind == "linear":
        return X @ Y.T, "linear"
    if kind == "rbf":
        g = getattr(estimator, "gamma_", None)
        if not _positive_number(g):
            g = params.get("gamma")
        if not _positive_number(g):
            return None, "no numeric RBF width (gamma=None and no scalar gamma_)"
        return _sk_rbf_kernel(X, Y, gamma=float(g)), "rbf"
    return None, f"no kernel (kernel/affinity={kind!r})"


def _normalized_laplacian_parts(K):
    d = K.sum(axis=1)
    if np.any(d <= 0):
        return None, None
    r = 1.0 / np.sqrt(d)
    L = np.eye(K.shape[0]) - r[:, None] * K * r[None, :]
    return (L + L.T) / 2, d


def laplacian_eigengap(K, n_clusters):
    """``lambda_{k+1} - lambda_k`` of the normalized Laplacian ``I - D^-1/2 K D^-1/2``.

    ``lambda_1 <= lambda_2 <= ...`` are its eigenvalues (in ``[0, 2]``), ``k = n_clusters``.
    A large gap after the ``k``-th eigenvalue says that the graph of ``K`` has ``k`` nearly
    disconnected parts (von Luxburg 2007, Section 8.3). NaN when a degree is 0 or
    ``k`` is not in ``1 .. n - 1``.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    k = int(n_clusters)
    if not 1 <= k <= n - 1:
        return np.nan
    L, _ = _normalized_laplacian_parts(K)
    if L is None:
        return np.nan
    lam = eigh(L, eigvals_only=True, subset_by_index=[0, k], check_finite=False)
    return float(lam[k] - lam[k - 1])


def plateau_scores(widths, counts, n_samples):
    """Distance (in octaves) of each width to the nearer end of its constant-count run.

    Parameters
    ----------
    widths : array-like of shape (p,)
        Positive widths (any order).
    counts : array-like of shape (p,)
        Number of clusters found at each width.
    n_samples : int
        Counts ``< 2`` or ``>= n_samples`` are trivial: their runs score 0.

    Returns
    -------
    scores : ndarray of shape (p,)
        For a point in a run of equal counts over the sorted widths ``w_a .. w_b``, the run
        spans ``[l, r]`` in ``log2`` width, with ``l`` half-way between ``log2 w_{a-1}`` and
        ``log2 w_a`` (``log2 w_a`` at the first grid point) and ``r`` likewise; the score is
        ``min(log2 w - l, r - log2 w)``. It is largest at the middle of the longest run.
    """
    w = np.asarray(widths, dtype=float)
    c = np.asarray(counts)
    if np.any(~(w > 0)):
        raise ValueError("plateau_scores needs positive widths.")
    order = np.argsort(w, kind="stable")
    lw, cs = np.log2(w[order]), c[order]
    p = lw.size
    out = np.zeros(p)
    a = 0
    while a < p:
        b = a
        while b + 1 < p and cs[b + 1] == cs[a]:
            b += 1
        if 2 <= cs[a] < n_samples:
            left = lw[a] if a == 0 else (lw[a - 1] + lw[a]) / 2
            right = lw[b] if b == p - 1 else (lw[b] + lw[b + 1]) / 2
            out[a : b + 1] = np.minimum(lw[a : b + 1] - left, right - lw[a : b + 1])
        a = b + 1
    scores = np.empty(p)
    scores[order] = out
    return scores
