"""Robust ensemble clustering: a low-rank fit of the stacked cluster indicators with an l_{1,2} loss.

The source (document 003, a draft; ``mmmf_ensemble`` in the book's bibliography) stacks the
indicator matrices of ``M`` base clusterings side by side into ``L`` and looks for a rank-``k`` matrix ``X`` close to
``L`` under the column-wise ``l_{1,2}`` loss ``||L - X||_{1,2} = sum_j ||(L - X)_{:, j}||_2``
(problem (3)). A base cluster (a column of ``L``) that does not fit the common low-rank
structure is then explained by a non-zero column of the residual ``E = L - X``: the column
norms of ``E`` are anomaly scores of the base clusters. The problem is solved by the
augmented Lagrangian method (ALM) of the source's Algorithm 1, with

* the X step (problem (9)) solved exactly by a truncated SVD (Eckart-Young theorem);
* the E step (problems (10)-(12)) solved exactly by column-wise shrinkage with threshold
  ``1/mu`` (the source writes ``2/mu``; see the book's errata).

The consensus labels are k-means on the rows of the rank-``k`` factor of ``X``.

Besides the estimator, this module holds what the book's experiment needs: the indicator
matrix, the two proximal operators, k-means ensembles with corrupted members
(:func:`base_partitions`) and two baselines, co-association + average linkage
(:func:`coassociation_clustering`) and majority vote after Hungarian alignment
(:func:`majority_vote`).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import squareform
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data
from threadpoolctl import threadpool_limits

from ._validation import check_n_clusters

__all__ = [
    "RobustEnsembleClustering",
    "check_partitions",
    "indicator_matrix",
    "column_shrinkage",
    "soft_threshold",
    "best_rank_k",
    "l12_norm",
    "l12_low_rank_irls",
    "robust_low_rank",
    "base_partitions",
    "coassociation_matrix",
    "coassociation_clustering",
    "majority_vote",
    "align_labels",
]

MISSING = -1


# ---------------------------------------------------------------------------------------------
# Input: partitions -> indicator matrix L
# ---------------------------------------------------------------------------------------------
def check_partitions(partitions):
    """Validate a label matrix of base clusterings and return it as ``int64``.

    Parameters
    ----------
    partitions : array-like of shape (n_samples, n_partitions)
        Column ``m`` holds the labels given by base clustering ``m``: integers used as names
        only (they need not be consecutive or non-negative), except ``-1``, which is
        reserved for "no label" (as in DBSCAN's noise). Floats are accepted when they are
        integer-valued.

    Returns
    -------
    P : ndarray of int64, same shape

    Raises
    ------
    ValueError
        On non-integer values, a column with fewer than two distinct
        labels (a one-cluster base clustering carries no information), or a sample that no
        base clustering labels.
    """
    P = np.asarray(partitions)
    if P.ndim != 2:
        raise ValueError(
            f"partitions must be a 2-D array (n_samples, n_partitions); got {P.ndim}-D. "
            "Stack the base labelings as columns, e.g. np.column_stack(labelings)."
        )
    if P.dtype.kind not in "iub":
        if P.dtype.kind != "f":
            raise ValueError(
                f"partitions must hold integer labels; got dtype {P.dtype}. Encode each base "
                "clustering's labels as integers 0, 1, ... (and -1 for a missing label)."
            )
        if not np.all(np.isfinite(P)):
            raise ValueError("partitions contain NaN or infinity; use -1 for a missing label.")
        if not np.array_equal(P, np.round(P)):
            raise ValueError(
                "partitions must hold integer labels (cluster ids, -1 = missing); got "
                "non-integer values such as "
                f"{P[P != np.round(P)][0]!r}. Pass the base clusterings' labels, not features "
                "or scores (use base_partitions(X, ...) to cluster features first)."
            )
    P = P.astype(np.int64)
    for m in range(P.shape[1]):
        n_labels = np.unique(P[:, m][P[:, m] != MISSING]).size
        if n_labels < 2:
            raise ValueError(
                f"base partition (column) {m} has {n_labels} distinct label(s): a base "
                "clustering must split the samples into at least 2 clusters to carry "
                "information. Drop that column."
            )
    unlabelled = np.flatnonzero(np.all(P == MISSING, axis=1))
    if unlabelled.size:
        raise ValueError(
            f"{unlabelled.size} sample(s) have no label in any base partition (all -1), "
            f"e.g. sample {unlabelled[0]}; the ensemble says nothing about them. Drop those "
            "rows (or give them a label in at least one base clustering)."
        )
    return P


def indicator_matrix(partitions):
    """Stack the cluster-indicator matrices of the base clusterings: ``L = [L_1, ..., L_M]``.

    ``L_m`` has one 0/1 column per distinct label of partition ``m`` (sorted), so ``L`` has
    ``sum_m k_m`` columns (``M K`` when every base clustering has ``K`` clusters). A sample
    without a label in partition ``m`` (``-1``) gets an all-zero row in ``L_m``: it casts no
    vote there.

    Returns
    -------
    L : ndarray of shape (n_samples, sum_m k_m)
    column_partition : ndarray of int, shape (sum_m k_m,)
        The base partition each column belongs to.
    column_label : ndarray of int, shape (sum_m k_m,)
        The label (in its partition) each column indicates.
    """
    P = check_partitions(partitions)
    blocks, owner, label = [], [], []
    for m in range(P.shape[1]):
        labels = np.unique(P[:, m][P[:, m] != MISSING])
        blocks.append((P[:, m][:, None] == labels[None, :]).astype(float))
        owner.append(np.full(labels.size, m))
        label.append(labels)
    return np.hstack(blocks), np.concatenate(owner), np.concatenate(label)


# ---------------------------------------------------------------------------------------------
# The two steps of the ALM
# ---------------------------------------------------------------------------------------------
def column_shrinkage(Y, alpha):
    """Proximal operator of ``alpha * ||.||_{1,2}`` (column-wise shrinkage, eq. (12)).

    Solves ``min_E alpha * sum_j ||E_{:, j}||_2 + 1/2 ||E - Y||_F^2``: each column is shrunk
    towards zero by ``alpha`` in Euclidean length, and set to zero when shorter than
    ``alpha``: ``E_j = max(0, 1 - alpha / ||Y_j||_2) Y_j``.
    """
    Y = np.asarray(Y, dtype=float)
    norms = np.linalg.norm(Y, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > alpha, 1.0 - alpha / norms, 0.0)
    return Y * scale[None, :]


def soft_threshold(Y, alpha):
    """Proximal operator of ``alpha * ||.||_1`` (entry-wise soft thresholding)."""
    Y = np.asarray(Y, dtype=float)
    return np.sign(Y) * np.maximum(np.abs(Y) - alpha, 0.0)


def best_rank_k(A, k):
    """Best rank-``k`` approximation of ``A`` in Frobenius norm (Eckart-Young).

    Returns ``(X, F)`` with ``X = A V_k V_k^T`` and the factor ``F = A V_k = U_k S_k``
    (``n_samples x k``), where ``V_k`` holds the top ``k`` right singular vectors of ``A``.
    The top right singular vectors are taken from the eigendecomposition of the small Gram
    matrix ``A^T A`` (``c x c`` for ``c`` columns), which is much cheaper than an SVD of the
    tall ``A``; the rows of ``F`` have the same pairwise distances as the rows of ``X``.
    """
    A = np.asarray(A, dtype=float)
    n, c = A.shape
    if c <= n:
        w, V = np.linalg.eigh(A.T @ A)
        Vk = V[:, ::-1][:, :k]
        F = A @ Vk
        return F @ Vk.T, F
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    F = U[:, :k] * s[:k]
    return U[:, :k] @ (U[:, :k].T @ A), F


def l12_norm(E):
    """``||E||_{1,2} = sum_j ||E_{:, j}||_2``: the sum of the Euclidean norms of the columns."""
    return float(np.linalg.norm(np.asarray(E, dtype=float), axis=0).sum())


def l12_low_rank_irls(L, k, *, max_iter=300, tol=1e-10, eps=1e-8):
    """An independent local solver of problem (3), for checking the ALM.

    Iteratively reweighted least squares (a majorize-minimize scheme): with column weights
    ``w_j = 1 / max(||(L - X)_{:, j}||_2, eps)``, the weighted problem
    ``min_{rank X <= k} sum_j w_j ||L_j - X_j||^2`` is solved exactly by
    ``X = best_rank_k(L W^{1/2}) W^{-1/2}`` (scaling columns does not change the rank), and
    each step does not increase the (``eps``-smoothed) l_{1,2} loss.
    """
    L = np.asarray(L, dtype=float)
    w = np.ones(L.shape[1])
    prev = np.inf
    for _ in range(max_iter):
        s = np.sqrt(w)
        X = best_rank_k(L * s, k)[0] / s
        r = np.linalg.norm(L - X, axis=0)
        w = 1.0 / np.maximum(r, eps)
        value = r.sum()
        if prev - value <= tol * max(1.0, value):
            break
        prev = value
    return X


_PROX = {"l12": column_shrinkage, "l1": soft_threshold}


def _alm(L, k, loss, mu, rho, max_iter, tol):
    """Inexact ALM for ``min ||E|| s.t. E = L - X, rank(X) <= k`` (Algorithm 1, corrected)."""
    prox = _PROX[loss]
    norm_L = np.linalg.norm(L)
    E = np.zeros_like(L)
    Lam = np.zeros_like(L)  # Lambda: N x sum_m k_m, the shape of L (erratum: not MK x N)
    residuals = []
    for t in range(1, max_iter + 1):
        # Step numbers as in the book's corrected Algorithm 1.
        X, F = best_rank_k(L - E + Lam / mu, k)  # step 2: problem (9)
        E = prox(L - X + Lam / mu, 1.0 / mu)  # step 3: problem (11)-(12), threshold 1/mu
        R = L - X - E
        Lam = Lam + mu * R  # step 4: multiplier update with X^(t+1), E^(t+1)
        mu = rho * mu  # step 5
        residuals.append(np.linalg.norm(R) / norm_L)
        if residuals[-1] < tol:
            return X, F, E, t, residuals, True
    return X, F, E, max_iter, residuals, False


def robust_low_rank(L, rank, *, loss="l12", mu=None, rho=1.1, max_iter=500, tol=1e-7):
    """The matrix part of :class:`RobustEnsembleClustering` on any real matrix ``L``.

    Useful when ``L`` holds scores rather than 0/1 indicators (late fusion of classifier
    scores). Returns ``(X, F, E, n_iter, residuals)`` with ``X`` of rank ``rank``, its
    factor ``F = U_k S_k`` and ``E = L - X`` (up to ``tol``); parameters as in the estimator.
    """
    L = np.asarray(L, dtype=float)
    if loss == "fro":
        X, F = best_rank_k(L, rank)
        return X, F, L - X, 1, [0.0]
    if loss not in _PROX:
        raise ValueError(f"loss must be 'l12', 'fro' or 'l1'; got {loss!r}.")
    mu = 1.25 / np.linalg.norm(L, 2) if mu is None else mu
    X, F, E, n_iter, residuals, converged = _alm(L, rank, loss, mu, rho, max_iter, tol)
    if not converged:
        warnings.warn(
            f"ALM stopped after max_iter={max_iter} iterations with relative residual "
            f"{residuals[-1]:.2e} > tol={tol}. Increase max_iter or rho, or loosen tol.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return X, F, E, n_iter, residuals


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------
class RobustEnsembleClustering(ClusterMixin, BaseEstimator):
    """Robust ensemble clustering: rank-k fit of stacked indicators with an l_{1,2} loss.

    Given ``M`` base clusterings of ``N`` samples, build ``L = [L_1, ..., L_M]``, the 0/1
    indicator matrices side by side (``N x sum_m k_m``; ``N x MK`` in the source, where all
    base clusterings have ``K`` clusters) and solve problem (5) of the source,

    .. math:: \\min_{X, E} \\|E\\|_{1,2} \\;\\text{s.t.}\\; E = L - X,\\; \\operatorname{rank}(X) \\le k,

    with ``||E||_{1,2} = sum_j ||E_{:, j}||_2`` (a sum of column norms: whole base clusters
    are flagged as outliers), by the ALM of Algorithm 1: the X step (9) is the best rank-k
    approximation of ``L - E + Lambda/mu`` (Eckart-Young, an exact truncated SVD instead of
    the source's LRGeomCG), the E step (11)-(12) is column-wise shrinkage of
    ``L - X + Lambda/mu`` with threshold ``1/mu``, then ``Lambda += mu (L - X - E)`` and
    ``mu *= rho``; stop when ``||L - X - E||_F / ||L||_F < tol``. The consensus labels are
    k-means (``n_clusters``) on the rows of the rank-k factor ``U_k S_k`` of ``X``.

    Parameters
    ----------
    n_clusters : int
        Number of consensus clusters.
    rank : int, default=None
        The rank bound ``k`` of (3)-(5); ``None`` means ``n_clusters`` (the source's
        "we could set k = K"). Must be at most ``min(N, sum_m k_m)``.
    loss : {"l12", "fro", "l1"}, default="l12"
        ``"l12"``: the column-wise l_{1,2} loss (3) by ALM. ``"fro"``: the least-squares
        problem (1), solved in closed form by one truncated SVD (``n_iter_ = 1``). ``"l1"``:
        entry-wise l_1 loss (the source's "another option"), ALM with soft thresholding.
    mu : float, default=None
        Initial penalty ``mu^(0)`` of the ALM; ``None`` means ``1.25 / ||L||_2`` (spectral
        norm), the usual choice of the inexact ALM (Lin et al. 2010).
    rho : float, default=1.1
        Growth factor of ``mu`` (``rho > 1``).
    max_iter : int, default=500
        Maximum number of ALM iterations.
    tol : float, default=1e-7
        Stop when the relative primal residual ``||L - X - E||_F / ||L||_F`` is below ``tol``.
    random_state : int, RandomState instance or None, default=None
        Seed of the final k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Consensus cluster labels ``0 .. n_clusters - 1``.
    low_rank_ : ndarray of shape (n_samples, sum_m k_m)
        The rank-k matrix ``X``.
    embedding_ : ndarray of shape (n_samples, rank)
        The factor ``U_k S_k`` of ``X`` on which k-means runs.
    error_ : ndarray of shape (n_samples, sum_m k_m)
        The residual ``E`` (column-sparse for ``loss="l12"``).
    anomaly_scores_ : ndarray of shape (sum_m k_m,)
        ``||E_{:, j}||_2``, one per base cluster, ordered partition by partition (and by
        label within a partition), as the columns of ``L``.
    partition_scores_ : ndarray of shape (n_partitions,)
        ``||E_m||_F / ||L_m||_F`` for each base clustering ``m``: the share of the base
        clustering the low-rank model does not explain (0 = fully explained).
    column_partition_, column_label_ : ndarray of shape (sum_m k_m,)
        Base partition and label of each column of ``L``.
    n_iter_ : int
        Number of ALM iterations run.
    residuals_ : list of float
        Relative primal residual after each iteration.
    n_features_in_ : int
        Number of base partitions ``M`` seen in ``fit``.

    Notes
    -----
    Missing labels (``-1``) give all-zero rows in that partition's block of ``L`` (the sample
    casts no vote there). Bad input raises ``ValueError``: non-integer labels, a base
    partition with a single label, a sample without any label, ``rank < 1`` or ``rank``
    above ``min(N, sum_m k_m)``.

    References
    ----------
    Source document 003, *Maximum Margin Matrix Factorization for Ensemble Clustering*
    (draft): problems (1)-(5), the ALM (6)-(12) and Algorithm 1.
    Lin, Chen & Ma (2010), the augmented Lagrange multiplier method for robust PCA.
    Eckart & Young (1936), the best rank-k approximation.

    Examples
    --------
    >>> import numpy as np
    >>> from mmcedu.ensemble import RobustEnsembleClustering
    >>> truth = np.repeat([0, 1, 2], 10)
    >>> P = np.column_stack([truth, (truth + 1) % 3, truth, np.arange(30) % 3])
    >>> est = RobustEnsembleClustering(n_clusters=3, random_state=0).fit(P)
    >>> from mmcedu.metrics import adjusted_rand_score
    >>> float(adjusted_rand_score(truth, est.labels_))
    1.0
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "rank": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "loss": [StrOptions({"l12", "fro", "l1"})],
        "mu": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "rho": [Interval(numbers.Real, 1, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    _expected_failed_checks = {
        "check_clustering": (
            "it fits continuous blob features, which are not base partitions: fit rejects "
            "non-integer labels with a ValueError by design"
        ),
    }

    def __init__(
        self,
        n_clusters,
        *,
        rank=None,
        loss="l12",
        mu=None,
        rho=1.1,
        max_iter=500,
        tol=1e-7,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.rank = rank
        self.loss = loss
        self.mu = mu
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Base partitions are categorical: scikit-learn's checks then feed rounded integers.
        tags.input_tags.categorical = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the low-rank model to the base partitions and compute consensus labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_partitions)
            The base partitions ("partitions" in the book): integer labels, ``-1`` missing.
        y : Ignored

        Returns
        -------
        self
        """
        P = validate_data(self, X, dtype="numeric", ensure_min_samples=1)
        check_n_clusters(P.shape[0], self.n_clusters)
        L, owner, label = indicator_matrix(P)
        n, c = L.shape
        k = self.n_clusters if self.rank is None else self.rank
        if k > min(n, c):
            raise ValueError(
                f"rank={k} exceeds min(n_samples, sum_m k_m) = min({n}, {c}): a rank-{k} "
                "approximation is then L itself. Pass a smaller rank (or n_clusters)."
            )
        rng = check_random_state(self.random_state)
        X_, F, E, n_iter, residuals = robust_low_rank(
            L, k, loss=self.loss, mu=self.mu, rho=self.rho, max_iter=self.max_iter, tol=self.tol
        )
        km = KMeans(self.n_clusters, n_init=10, random_state=rng).fit(F)
        self.labels_ = km.labels_.astype(np.int64)
        self.low_rank_ = X_
        self.embedding_ = F
        self.error_ = E
        self.anomaly_scores_ = np.linalg.norm(E, axis=0)
        M = P.shape[1]
        e2 = np.bincount(owner, weights=self.anomaly_scores_**2, minlength=M)
        l2 = np.bincount(owner, weights=(L**2).sum(axis=0), minlength=M)
        self.partition_scores_ = np.sqrt(e2 / l2)
        self.column_partition_ = owner
        self.column_label_ = label
        self.n_iter_ = n_iter
        self.residuals_ = residuals
        return self


# ---------------------------------------------------------------------------------------------
# Ensembles and baselines for the experiment
# ---------------------------------------------------------------------------------------------
def base_partitions(
    X,
    n_partitions,
    n_clusters,
    *,
    feature_fraction=0.5,
    n_random=0,
    n_wrong_k=0,
    wrong_k=None,
    return_kinds=False,
    random_state=None,
):
    """A k-means ensemble, optionally with corrupted members.

    Each good member is k-means (``n_clusters``, one random initialisation) on a random
    subset of ``ceil(feature_fraction * n_features)`` features, but at least 2 (all of them
    for 2-D data): a random-subspace ensemble, which makes the members differ. Then ``n_random`` members, chosen at random, are
    replaced by uniformly random labelings with ``n_clusters`` labels, and ``n_wrong_k``
    others by k-means clusterings with a wrong number of clusters (drawn from ``wrong_k``,
    default ``{2, ..., 2 n_clusters} \\ {n_clusters}``).

    Returns
    -------
    partitions : ndarray of int, shape (n_samples, n_partitions)
    kinds : ndarray of str, shape (n_partitions,)
        ``"kmeans"``, ``"random"`` or ``"wrong_k"``; only with ``return_kinds=True``.
    """
    X = np.asarray(X, dtype=float)
    rng = check_random_state(random_state)
    n, d = X.shape
    if n_random + n_wrong_k > n_partitions:
        raise ValueError(
            f"n_random + n_wrong_k = {n_random + n_wrong_k} exceeds n_partitions={n_partitions}."
        )
    if wrong_k is None:
        wrong_k = [j for j in range(2, 2 * n_clusters + 1) if j != n_clusters]
    n_feat = min(d, max(2, int(np.ceil(feature_fraction * d))))  # never fewer than 2 features
    kinds = np.array(["kmeans"] * n_partitions, dtype=object)
    order = rng.permutation(n_partitions)
    kinds[order[:n_random]] = "random"
    kinds[order[n_random : n_random + n_wrong_k]] = "wrong_k"
    P = np.empty((n, n_partitions), dtype=np.int64)
    # Many small k-means runs: one thread each is faster than fighting over the cores.
    with threadpool_limits(limits=1):
        for m in range(n_partitions):
            if kinds[m] == "random":
                P[:, m] = rng.randint(n_clusters, size=n)
                continue
            k = n_clusters if kinds[m] == "kmeans" else int(rng.choice(wrong_k))
            feats = rng.choice(d, n_feat, replace=False)
            P[:, m] = KMeans(k, n_init=1, random_state=rng).fit(X[:, feats]).labels_
    kinds = kinds.astype(str)
    return (P, kinds) if return_kinds else P


def coassociation_matrix(partitions, dtype=np.float32):
    """Co-association matrix ``C_ij``: the share of base clusterings that put ``i, j`` together.

    Only base clusterings that label both samples count (missing labels are skipped; a pair
    that no clustering labels together gets 0). Needs ``O(N^2)`` memory -- the point of the
    comparison with the low-rank method -- so it is computed in ``float32`` by default
    (the counts are exact up to 2^24 base clusterings) with in-place operations.
    """
    P = check_partitions(partitions)
    L = indicator_matrix(P)[0].astype(dtype)
    C = L @ L.T
    observed = P != MISSING
    if observed.all():
        C /= P.shape[1]
    else:
        O = observed.astype(dtype)
        both = O @ O.T
        np.divide(C, both, out=C, where=both > 0)
        C[both == 0] = 0.0
        del both
    return C


def coassociation_clustering(partitions, n_clusters):
    """Evidence accumulation (Fred & Jain 2005): average linkage on ``1 - C``, cut at ``n_clusters``."""
    C = coassociation_matrix(partitions)
    np.subtract(1.0, C, out=C)  # distances, in place
    np.fill_diagonal(C, 0.0)
    d = squareform(C, checks=False)
    del C
    Z = linkage(d, method="average")
    return fcluster(Z, n_clusters, criterion="maxclust").astype(np.int64) - 1


def align_labels(reference, labels, n_clusters):
    """Rename ``labels`` to best agree with ``reference`` (Hungarian on the contingency table).

    Labels matched one-to-one get their partner's name; labels left over (when a base
    clustering has more clusters than ``n_clusters``) go to the reference cluster they
    overlap most. Missing labels (-1) stay -1.
    """
    reference = np.asarray(reference)
    labels = np.asarray(labels)
    seen = (labels != MISSING) & (reference != MISSING)
    own = np.unique(labels[labels != MISSING])
    C = np.zeros((own.size, n_clusters))
    idx = np.searchsorted(own, labels[seen])
    np.add.at(C, (idx, reference[seen]), 1.0)
    rows, cols = linear_sum_assignment(C, maximize=True)
    mapping = dict(zip(own[rows], cols))
    for i, lab in enumerate(own):
        if lab not in mapping:
            mapping[lab] = int(np.argmax(C[i]))
    target = np.array([mapping[lab] for lab in own], dtype=np.int64)
    out = np.full(labels.shape, MISSING, dtype=np.int64)
    has = labels != MISSING
    out[has] = target[np.searchsorted(own, labels[has])]
    return out


def majority_vote(partitions, n_clusters, *, max_rounds=10):
    """Majority vote after aligning every base clustering to a reference by the Hungarian method.

    The first reference is the first base clustering with ``n_clusters`` labels (or the
    first one); then the vote itself becomes the reference, until it stops changing.
    Ties go to the smallest label; missing labels do not vote.
    """
    P = check_partitions(partitions)
    n, M = P.shape
    k_m = [np.unique(P[:, m][P[:, m] != MISSING]).size for m in range(M)]
    first = next((m for m in range(M) if k_m[m] == n_clusters), 0)
    # Start from the first clustering's own labels (renamed 0, 1, ...; folded into n_clusters).
    col = P[:, first]
    ref = np.full(n, MISSING, dtype=np.int64)
    ref[col != MISSING] = np.unique(col[col != MISSING], return_inverse=True)[1] % n_clusters
    for _ in range(max_rounds):
        votes = np.zeros((n, n_clusters))
        for m in range(M):
            a = align_labels(ref, P[:, m], n_clusters)
            ok = a != MISSING
            votes[np.flatnonzero(ok), a[ok]] += 1.0
        new = np.argmax(votes, axis=1)
        if np.array_equal(new, ref):
            break
        ref = new
    return new.astype(np.int64)
