"""Generating and combining base clusterings (the inputs and baselines of ensemble clustering).

A *base partition* (base clustering) is a vector of integer labels, one per sample, ``-1``
for a sample it leaves unlabelled; an ensemble is the matrix whose columns are the base
partitions (shape ``(n_samples, n_partitions)``).

* Representation: :func:`check_partitions` validates an ensemble, :func:`indicator_matrix`
  stacks the 0/1 cluster indicators of its members side by side (the matrix ``L`` of
  :class:`mmcedu.RobustEnsembleClustering`).
* Generation: :func:`base_partitions` (a random-subspace k-means ensemble, optionally with
  corrupted members) and :func:`noisy_copies` (relabelled noisy copies of a ground truth).
* Combination (consensus baselines): co-association with average linkage
  (:func:`coassociation_matrix`, :func:`coassociation_clustering`) and majority vote after
  Hungarian alignment (:func:`align_labels`, :func:`majority_vote`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import squareform
from sklearn.cluster import KMeans
from sklearn.utils import check_array, check_random_state
from threadpoolctl import threadpool_limits

from ._validation import array_bytes, check_memory

__all__ = [
    "MISSING",
    "check_partitions",
    "indicator_matrix",
    "base_partitions",
    "noisy_copies",
    "coassociation_matrix",
    "coassociation_clustering",
    "align_labels",
    "majority_vote",
]

#: The label of a sample that a base partition leaves unlabelled (as DBSCAN's noise).
MISSING = -1


def _check_int(value, name, minimum, maximum=None):
    """``value`` as an int in ``[minimum, maximum]``, or a ``ValueError`` naming ``name``."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum
            or (maximum is not None and value > maximum)):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {bound}; got {value!r}.")
    return int(value)


def _check_fraction(value, name, *, low_open=False):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (0 < value <= 1 if low_open else 0 <= value <= 1)
    if not ok:
        raise ValueError(f"{name} must be a number in {'(0, 1]' if low_open else '[0, 1]'}; got {value!r}.")
    return float(value)


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
    for 2-D data): a random-subspace ensemble, which makes the members differ. Then
    ``n_random`` members, chosen at random, are replaced by uniformly random labelings with
    ``n_clusters`` labels, and ``n_wrong_k`` others by k-means clusterings with a wrong
    number of clusters (drawn from ``wrong_k``, default ``{2, ..., 2 n_clusters} \\ {n_clusters}``).

    Returns
    -------
    partitions : ndarray of int, shape (n_samples, n_partitions)
    kinds : ndarray of str, shape (n_partitions,)
        ``"kmeans"``, ``"random"`` or ``"wrong_k"``; only with ``return_kinds=True``.
    """
    if np.ndim(X) != 2:
        raise ValueError(
            f"X must be 2-D (n_samples, n_features); got shape {np.shape(X)}. Reshape one "
            "feature with X.reshape(-1, 1)."
        )
    X = check_array(X, dtype=np.float64, ensure_min_samples=2)
    rng = check_random_state(random_state)
    n, d = X.shape
    n_partitions = _check_int(n_partitions, "n_partitions", 1)
    n_clusters = _check_int(n_clusters, "n_clusters", 2, n)
    n_random = _check_int(n_random, "n_random", 0)
    n_wrong_k = _check_int(n_wrong_k, "n_wrong_k", 0)
    feature_fraction = _check_fraction(feature_fraction, "feature_fraction", low_open=True)
    if n_random + n_wrong_k > n_partitions:
        raise ValueError(
            f"n_random + n_wrong_k = {n_random + n_wrong_k} exceeds n_partitions={n_partitions}."
        )
    if wrong_k is None:
        wrong_k = [j for j in range(2, 2 * n_clusters + 1) if j != n_clusters and j <= n]
    elif n_wrong_k:
        wrong_k = list(np.atleast_1d(wrong_k))
        if not wrong_k or any(isinstance(j, (bool, np.bool_)) or not isinstance(j, numbers.Integral)
                              or not 2 <= j <= n for j in wrong_k):
            raise ValueError(
                f"wrong_k must be a non-empty list of integers in [2, n_samples={n}]; got {wrong_k!r}."
            )
    if n_wrong_k and not wrong_k:
        raise ValueError(
            f"No wrong number of clusters fits n_samples={n} with n_clusters={n_clusters}; "
            "pass wrong_k or n_wrong_k=0."
        )
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


def noisy_copies(n_samples, n_clusters, n_partitions, *, noise=0.3, random_state=0):
    """A cheap synthetic ensemble for timing: relabelled copies of a ground truth.

    Each base clustering renames the true clusters at random and gives a share ``noise``
    of the samples a uniformly random label. Returns ``(partitions, truth)``.
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    n_clusters = _check_int(n_clusters, "n_clusters", 2, n_samples)
    n_partitions = _check_int(n_partitions, "n_partitions", 1)
    noise = _check_fraction(noise, "noise")
    rng = check_random_state(random_state)
    truth = rng.randint(n_clusters, size=n_samples)
    P = np.empty((n_samples, n_partitions), dtype=np.int64)
    for m in range(n_partitions):
        lab = rng.permutation(n_clusters)[truth]
        flip = rng.rand(n_samples) < noise
        lab[flip] = rng.randint(n_clusters, size=flip.sum())
        P[:, m] = lab
    return P, truth


def coassociation_matrix(partitions, dtype=np.float32):
    """Co-association matrix ``C_ij``: the share of base clusterings that put ``i, j`` together.

    Only base clusterings that label both samples count (missing labels are skipped; a pair
    that no clustering labels together gets 0). Needs ``O(N^2)`` memory -- the point of the
    comparison with the low-rank method -- so it is computed in ``float32`` by default
    (the counts are exact up to 2^24 base clusterings) with in-place operations.
    """
    P = check_partitions(partitions)
    n = P.shape[0]
    itemsize = np.dtype(dtype).itemsize
    check_memory(
        array_bytes((n, n), itemsize=itemsize) * (1 if (P != MISSING).all() else 2),
        what=f"The co-association matrix of n_samples={n}",
        alternative="Use mmcedu.RobustEnsembleClustering (a low-rank fit, O(n sum k_m) memory) "
                    "or majority_vote instead.",
    )
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
    """Evidence accumulation (Fred & Jain 2005): average linkage on ``1 - C``, cut at ``n_clusters``.

    Memory: the n x n float32 co-association matrix, then its condensed float64 copy for the
    linkage, about ``8 n^2`` bytes at the peak; checked against the memory budget
    (:func:`mmcedu.get_config`) before allocating.
    """
    P = check_partitions(partitions)
    n = P.shape[0]
    n_clusters = _check_int(n_clusters, "n_clusters", 1, n)
    check_memory(
        array_bytes((n, n), itemsize=8),
        what=f"Co-association clustering of n_samples={n} (an n x n matrix and the linkage's "
             "condensed distances)",
        alternative="Use mmcedu.RobustEnsembleClustering (a low-rank fit, O(n sum k_m) memory) "
                    "or majority_vote instead.",
    )
    C = coassociation_matrix(P)
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
    reference, labels = np.asarray(reference), np.asarray(labels)
    n_clusters = _check_int(n_clusters, "n_clusters", 1)
    for name, a in (("reference", reference), ("labels", labels)):
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise ValueError(
                f"{name} must be a 1-D array of integer labels; got {a.dtype} of shape {a.shape}."
            )
    if reference.shape != labels.shape:
        raise ValueError(
            f"reference and labels must have the same length; got {reference.size} and {labels.size}."
        )
    bad = reference[(reference != MISSING) & ((reference < 0) | (reference >= n_clusters))]
    if bad.size:
        raise ValueError(
            f"reference has label {bad[0]} outside 0..n_clusters-1 = 0..{n_clusters - 1} "
            f"(and -1 for a missing label); rename its labels 0, 1, ... or raise n_clusters."
        )
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
    n_clusters = _check_int(n_clusters, "n_clusters", 1, n)
    max_rounds = _check_int(max_rounds, "max_rounds", 1)
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
