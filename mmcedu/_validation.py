"""Input checks and guards shared by the estimators.

Each check either passes silently, or raises / warns with a message that says what happened
and what to change (see :mod:`mmcedu.exceptions`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._config import get_config
from .exceptions import DegenerateDataWarning, MemoryBudgetError

__all__ = [
    "check_n_clusters",
    "format_bytes",
    "array_bytes",
    "check_memory",
    "check_scale",
    "check_finite_result",
    "all_identical",
    "warn_degenerate_kernel",
]

# float64 overflows above ~1.8e308: a squared distance of vectors with entries of size a in
# d dimensions is up to 4 d a^2, so entries above ~1e150 (less in high dimension) overflow.
_MAX_ENTRY = 1e150
# ... and squared distances of entries below ~1e-150 underflow towards subnormal numbers.
_MIN_SCALE = 1e-140


def check_n_clusters(n_samples, n_clusters):
    """Raise a clear ``ValueError`` when there are fewer samples than clusters."""
    if n_samples < max(2, n_clusters):
        raise ValueError(
            f"n_samples={n_samples} is too few for n_clusters={n_clusters}: every cluster "
            f"needs at least one sample (and clustering needs at least 2). Pass more samples "
            f"or ask for fewer clusters."
        )


def format_bytes(nbytes):
    """``1288490188.8 -> '1.2 GiB'``: a byte count for messages."""
    nbytes = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(nbytes) < 1024 or unit == "TiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.1f} TiB"  # pragma: no cover


def array_bytes(*shapes, itemsize=8):
    """Bytes of arrays of the given shapes (float64 by default), without allocating them."""
    return int(sum(math.prod(int(s) for s in shape) for shape in shapes) * itemsize)


def check_memory(nbytes, *, what, alternative=""):
    """Raise :class:`~mmcedu.exceptions.MemoryBudgetError` if ``nbytes`` exceed the budget.

    Call it *before* allocating. ``what`` names the arrays ("SDPMMC's n x n kernel and the
    SDP's two PSD blocks for n = 40,000"), ``alternative`` says what to use instead.
    """
    budget = get_config()["memory_budget"]
    if nbytes > budget:
        raise MemoryBudgetError(
            f"{what} would need about {format_bytes(nbytes)}, above the memory budget of "
            f"{format_bytes(budget)}. {alternative} (The budget is set by "
            "mmcedu.set_config(memory_budget=...) or the environment variable "
            "MMCEDU_MEMORY_BUDGET.)".replace("  ", " ")
        )


def check_scale(X, *, name="X"):
    """Raise a clear ``ValueError`` when squared distances of ``X`` would overflow or underflow.

    Distances between rows with entries above ~1e150 overflow float64; rows that differ only
    by less than ~1e-140 have squared distances that underflow. Either way every kernel value
    becomes 0, 1 or NaN, so the error says to standardize ``X``.
    """
    X = np.asarray(X)
    if X.size == 0 or not np.issubdtype(X.dtype, np.number):
        return
    amax = float(np.max(np.abs(X)))
    if not np.isfinite(amax):
        return  # NaN / inf: scikit-learn's own validation reports those
    if amax * math.sqrt(max(X.shape[-1], 1)) > _MAX_ENTRY:
        raise ValueError(
            f"{name} has entries up to {amax:.2g}: squared distances between samples overflow "
            "float64 (largest 1.8e308). Standardize it (sklearn.preprocessing.StandardScaler) "
            "or divide it by its scale."
        )
    spread = float(np.max(np.ptp(X, axis=0))) if X.ndim == 2 and X.shape[0] > 1 else amax
    if 0 < spread < _MIN_SCALE:
        raise ValueError(
            f"The samples of {name} differ by at most {spread:.2g}: their squared distances "
            "underflow float64. Standardize it (sklearn.preprocessing.StandardScaler) or "
            "multiply it by a scale factor."
        )


def check_finite_result(A, *, what, hint):
    """Raise a ``ValueError`` naming ``what`` when the computed array ``A`` is not finite.

    For values computed from finite input (a kernel matrix, hidden-layer outputs, a
    factorization): NaN or infinity there means an overflow, which ``hint`` explains.
    """
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{what} is not finite (NaN or infinity) although the input is: {hint}")


def all_identical(X):
    """True when every row of ``X`` equals the first (no structure to cluster)."""
    X = np.asarray(X)
    return X.shape[0] > 0 and bool(np.all(X == X[:1]))


def warn_degenerate_kernel(K, gamma, *, who, stacklevel=3):
    """Warn when an RBF kernel matrix is numerically the identity or all ones.

    Then every labeling looks alike to a kernel method and the answer is arbitrary. The test
    looks at the median off-diagonal entry of ``K`` (a sample of at most 1000 rows).

    Returns
    -------
    degenerate : bool
    """
    K = np.asarray(K)
    n = K.shape[0]
    if n < 2:
        return False
    m = min(n, 1000)
    sub = K[:m, :m]
    off = sub[~np.eye(m, dtype=bool)]
    med = float(np.median(off))
    if med < 1e-8:
        msg = (
            f"{who}: the rbf kernel at gamma={gamma:.3g} is numerically the identity (median "
            f"off-diagonal entry {med:.2g}): every sample is isolated and every split looks "
            "alike. Use a smaller gamma (gamma=None is the median heuristic)."
        )
    elif med > 1 - 1e-8:
        msg = (
            f"{who}: the rbf kernel at gamma={gamma:.3g} is numerically all ones (median "
            f"off-diagonal entry {med:.10f}): every sample looks like every other. Use a "
            "larger gamma (gamma=None is the median heuristic)."
        )
    else:
        return False
    warnings.warn(msg, DegenerateDataWarning, stacklevel=stacklevel)
    return True
