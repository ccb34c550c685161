"""Class-balance constraints for two-cluster labelings y in {-1, +1}^n.

Maximum margin objectives are minimised by putting every point in one cluster (an infinite
margin), so every method constrains the cluster sizes. For two clusters with ``N_+`` and
``N_-`` members the constraint is

    |N_+ - N_-| = |e^T y| <= l,

with ``l = floor(balance * n)``: ``balance`` is the largest allowed imbalance as a fraction
of ``n`` (``balance = 0.1``: the two clusters differ by at most 10 % of the samples). This is
the form of Xu et al. (2004) (``-l <= e^T y <= l``, relaxed to ``-l e <= M e <= l e`` for
``M = y y^T``) and of EMMC's ``|N_p - N_q| <= l``.

For ``m > 2`` clusters, :func:`count_bounds` turns ``|N_p - N_q| <= l`` into a box
``lo <= N_k <= hi`` on every cluster size.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from ._validation import check_n_clusters

__all__ = [
    "max_imbalance",
    "is_balanced",
    "balanced_sign",
    "balanced_labelings",
    "count_bounds",
]


#: The fraction of the samples a balance constraint or penalty must move before GMMC, SDPMMC,
#: UMCRLS and EMMC emit a :class:`~mmcedu.exceptions.BalanceWarning`.
BALANCE_WARN_FRACTION = 0.05


def _check_int(value, name, minimum=0):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_outputs(f, name="f"):
    """``f`` as a finite 1-D float array, or a clear ``ValueError``."""
    f = np.asarray(f, dtype=float)
    if f.ndim == 2 and f.shape[1] == 1:
        f = f[:, 0]
    if f.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per sample); got shape {f.shape}.")
    if not np.all(np.isfinite(f)):
        raise ValueError(f"{name} contains NaN or infinity at sample(s) "
                         f"{np.flatnonzero(~np.isfinite(f))[:5].tolist()}: outputs must be finite.")
    return f


def max_imbalance(n_samples, balance):
    """The bound ``l = floor(balance * n)`` on ``|N_+ - N_-|``, checked for feasibility.

    ``N_+ - N_-`` has the parity of ``n``, so an odd ``n`` needs ``l >= 1``.

    Raises
    ------
    ValueError
        When no labeling of ``n_samples`` points into two non-empty clusters meets the bound.
    """
    if isinstance(balance, bool) or not isinstance(balance, numbers.Real) or not 0 <= balance <= 1:
        raise ValueError(f"balance must be in [0, 1], got {balance}.")
    n_samples = _check_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(f"Two clusters need at least 2 samples; got n_samples={n_samples}.")
    l = int(np.floor(balance * n_samples + 1e-12))
    if l < n_samples % 2:
        raise ValueError(
            f"The balance constraint |N+ - N-| <= {l} (balance={balance} x n={n_samples}) "
            f"cannot be met: with an odd number of samples the two clusters differ by at "
            f"least 1. Use balance >= {1 / n_samples:.3g} or an even number of samples."
        )
    return l


def is_balanced(y, l):
    """True when the +-1 labeling ``y`` has ``|e^T y| <= l``."""
    return abs(int(np.sum(np.sign(y)))) <= l


def balanced_sign(f, l):
    """Labels ``y = sign(f)`` moved the least to meet ``|e^T y| <= l``.

    While the larger cluster has too many members, its member with the smallest ``|f|``
    (the one closest to the decision boundary) changes side. Equivalently: sort ``f`` and
    threshold it so that the cluster sizes differ by at most ``l``. Among all balanced
    labelings this one maximises ``sum_i y_i f_i``.

    Parameters
    ----------
    f : array-like of shape (n_samples,)
        Real-valued outputs (decision values, eigenvector entries...).
    l : int
        Largest allowed ``|N_+ - N_-|`` (see :func:`max_imbalance`).

    Returns
    -------
    y : ndarray of int in {-1, +1}
    """
    f = _check_outputs(f)
    l = _check_int(l, "l")
    n = f.size
    if l < n % 2:
        raise ValueError(f"|N+ - N-| <= {l} is infeasible for n={n} samples.")
    y = np.where(f >= 0, 1, -1)
    excess = int(y.sum())
    if abs(excess) <= l:
        return y
    s = 1 if excess > 0 else -1
    n_flip = int(np.ceil((abs(excess) - l) / 2))
    members = np.flatnonzero(y == s)
    order = members[np.argsort(s * f[members], kind="stable")]  # closest to the boundary first
    y[order[:n_flip]] = -s
    return y


def balanced_labelings(n_samples, l, *, fix_first=True):
    """Every labeling ``y in {-1, +1}^n`` with ``|e^T y| <= l`` (for brute force on tiny n).

    With ``fix_first=True`` the first sample is labelled +1, which removes the sign symmetry
    y ~ -y (every clustering is listed once).

    Yields
    ------
    y : ndarray of int of shape (n_samples,)
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    l = _check_int(l, "l")
    if n_samples > 20:
        raise ValueError(f"Enumerating 2^{n_samples} labelings is too expensive; use n <= 20.")
    return _labelings(n_samples, l, fix_first)


def _labelings(n_samples, l, fix_first):
    rest = n_samples - 1 if fix_first else n_samples
    for tail in itertools.product((1, -1), repeat=rest):
        y = np.array(((1,) if fix_first else ()) + tail)
        if abs(int(y.sum())) <= l:
            yield y


def count_bounds(n_samples, n_clusters, l):
    """Per-cluster count bounds ``lo <= N_k <= hi`` with ``hi - lo <= l`` (so ``|N_p - N_q| <= l``).

    The box ``[a, a + l]`` with ``a = floor(n / m) - floor(l / 2)`` (and ``lo >= 1`` so no
    cluster is empty). For two clusters the box is exactly ``|N_1 - N_2| <= l``.

    Raises
    ------
    ValueError
        When no labeling of ``n_samples`` points into ``n_clusters`` non-empty clusters meets
        ``|N_p - N_q| <= l`` (``l = 0`` and ``n`` not a multiple of ``m``).
    """
    n, m = _check_int(n_samples, "n_samples"), _check_int(n_clusters, "n_clusters", 1)
    if isinstance(l, bool) or not isinstance(l, numbers.Integral) or l < 0:
        raise ValueError(f"The balance bound l must be an integer >= 0; got {l!r}.")
    l = int(l)
    check_n_clusters(n, m)
    if l == 0 and n % m:
        raise ValueError(
            f"The balance constraint |N_p - N_q| <= 0 cannot be met: {n} samples do not split "
            f"into {m} clusters of equal size. Increase balance (l = floor(balance * n) must "
            f"be >= 1) or use a number of samples divisible by {m}."
        )
    a = n // m - l // 2
    lo, hi = max(a, 1), a + l
    return lo, max(hi, lo)
