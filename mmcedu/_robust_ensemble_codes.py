"""``L`` from the label codes, for :class:`mmcedu.RobustEnsembleClustering`.

Sample ``i`` is in column ``codes[i, m]`` of the indicator matrix ``L``. The dense path builds
``L`` from the codes; the compressed path never stores it: the Gram matrix ``G = L^T L``, the
c x c compression ``Sigma V^T`` and any product ``L B`` come from the codes (the derivation is
in :mod:`mmcedu.robust_ensemble`). ``path_bytes`` is the memory formula of both paths.
"""

from __future__ import annotations

import numpy as np

from .partitions import MISSING

__all__ = ["encode", "indicator", "gram", "compress", "gather_rows", "path_bytes"]

#: Rows of L written at a time by ``gram`` (float32 counts are exact below 2^24).
_GRAM_BLOCK = 8192
# Peak of the dense fit in N x c float64 arrays, by loss (L, X, E, Lambda and one iteration's
# temporaries).
_DENSE_ARRAYS = {"l12": 7.5, "l1": 7.5, "fro": 3.5}


def encode(P):
    """Label codes of validated partitions ``P`` (int64, N x M): ``codes[i, m]`` is the column
    of ``L`` that sample ``i`` is in for partition ``m`` (``-1`` for a missing label), with
    the columns ordered as :func:`mmcedu.partitions.indicator_matrix` orders them.

    Returns ``codes`` (int32, N x M), ``owner`` and ``label`` (c,). Time O(N M log N).
    """
    N, M = P.shape
    codes = np.empty((N, M), dtype=np.int32)
    owner, label = [], []
    offset = 0
    for m in range(M):
        labels, inv = np.unique(P[:, m], return_inverse=True)
        inv = inv.reshape(-1)
        j = int(np.searchsorted(labels, MISSING))  # other negative labels sort before -1
        if j < labels.size and labels[j] == MISSING:
            labels = np.delete(labels, j)
            codes[:, m] = np.where(inv == j, -1, inv - (inv > j) + offset)
        else:
            codes[:, m] = inv + offset
        owner.append(np.full(labels.size, m))
        label.append(labels)
        offset += labels.size
    return codes, np.concatenate(owner), np.concatenate(label)


def _fill(out, codes):
    """Set ``out[i, codes[i, m]] = 1`` for every label present; ``out`` holds zeros."""
    rows = np.broadcast_to(np.arange(codes.shape[0])[:, None], codes.shape)
    ok = codes >= 0
    out[rows[ok], codes[ok]] = 1.0
    return out


def indicator(codes, c):
    """The dense ``L`` (N x c float64) from the codes: ``indicator_matrix`` without re-validating."""
    return _fill(np.zeros((codes.shape[0], c)), codes)


def gram(codes, c):
    """``G = L^T L`` (c x c float64; block ``(m, m')`` is the contingency table of partitions
    ``m`` and ``m'``), one block of rows of ``L`` at a time: ``G += L_b^T L_b`` in float32
    (exact: the entries of a block product are counts below ``_GRAM_BLOCK < 2^24``).
    Time O(N c^2) BLAS flops, memory ``8 c^2 + 4 _GRAM_BLOCK c`` bytes."""
    N = codes.shape[0]
    G = np.zeros((c, c))
    Lb = np.zeros((min(_GRAM_BLOCK, N), c), dtype=np.float32)
    for s in range(0, N, _GRAM_BLOCK):
        cb = codes[s:s + _GRAM_BLOCK]
        nb = cb.shape[0]
        Lb[:nb] = 0.0
        _fill(Lb[:nb], cb)
        G += Lb[:nb].T @ Lb[:nb]
    return G


def compress(G, rcond=1e-10):
    """``(L_hat, V, sigma, keep)`` with ``L_hat = Sigma V^T`` (c x c), ``L_hat^T L_hat = G``.

    ``sigma`` (descending) are the singular values of ``L``. Eigenvalues of ``G`` below
    ``rcond * max`` are set to exactly zero: they are the null space of ``L`` (the columns of
    a fully labelled partition sum to the all-ones vector, so ``rank L <= c - M + 1``) computed
    as round-off, whose square roots (~1e-8 ||L||) would otherwise sit in ``L_hat``.
    """
    w, V = np.linalg.eigh((G + G.T) / 2.0)
    w, V = w[::-1], V[:, ::-1]
    keep = w > rcond * max(float(w[0]), 1e-300)
    sigma = np.sqrt(np.where(keep, w, 0.0))
    return sigma[:, None] * V.T, V, sigma, keep


def gather_rows(codes, B, rows=None, *, block=65536):
    """``L[rows] @ B`` from the codes: row ``i`` is ``sum_m B[codes[i, m]]`` (-1 skipped).

    Time O(N M B.shape[1]); memory the output plus one block."""
    codes = np.asarray(codes) if rows is None else np.asarray(codes)[rows]
    N, M = codes.shape
    Bz = np.vstack([np.asarray(B, dtype=float), np.zeros((1, B.shape[1]))])  # code -1 -> 0
    out = np.empty((N, B.shape[1]))
    for s in range(0, N, block):
        cb = codes[s:s + block]
        acc = np.zeros((cb.shape[0], B.shape[1]))
        for m in range(M):
            acc += Bz[cb[:, m]]
        out[s:s + block] = acc
    return out


def path_bytes(n, c, M, k, loss, solver):
    """Peak bytes of one path of the fit for N samples, c base clusters, M partitions, rank k.

    ``"dense"``: ``a * 8 N c + 12 N M`` with ``a = 7.5`` for ``loss="l12"`` or ``"l1"`` and
    ``3.5`` for ``"fro"`` (L, X, E, Lambda and one iteration's temporaries in float64), plus the
    labels as int64 and their int32 codes. ``"compressed"``: ``12 N M + 40 N k`` (the embedding
    and k-means' copies of it) ``+ 24 N + 100 c^2`` (G, its eigenvectors, the c x c iterates)
    ``+ 4 * 8192 c`` (one block of rows of L in float32).
    """
    if solver == "dense":
        return _DENSE_ARRAYS[loss] * 8.0 * n * c + 12.0 * n * M
    return 12.0 * n * M + 40.0 * n * k + 24.0 * n + 100.0 * c * c + 4.0 * _GRAM_BLOCK * c
