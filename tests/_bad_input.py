"""Helpers shared by the probe suites (tests/test_bad_input_*.py): fit while recording the
warnings, and classify an outcome as right, warned or a clear error."""

import re
import warnings

import numpy as np

from mmcedu import metrics

# numpy's own floating-point warnings: they do not count as the estimator saying something
_RAW = re.compile(r"overflow encountered|invalid value encountered|divide by zero")


def found(est, truth):
    """The labels equal ``truth`` up to renaming."""
    return metrics.clustering_error(truth, est.labels_) == 0.0


def fit_recording(est, data):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(data)
    return est, [w for w in rec if not issubclass(w.category, DeprecationWarning)]


def said(ws, pattern, category=Warning):
    """Some ``category`` warning of ``ws`` matches ``pattern`` (not a raw numpy warning)."""
    return any(
        issubclass(w.category, category) and re.search(pattern, str(w.message), re.I)
        and not _RAW.search(str(w.message))
        for w in ws
    )


def right_warned_or_clear(est, data, ok, *, warn, category=Warning, error=None):
    """'right' (``ok(est)``), 'warned' (a ``category`` warning matching ``warn``) or 'clear
    error' (a ValueError matching ``error`` or ``warn``); anything else fails."""
    try:
        est, ws = fit_recording(est, data)
    except ValueError as exc:
        assert re.search(error or warn, str(exc), re.I), f"unclear error: {exc!r}"
        return "clear error"
    if ok(est):
        return "right"
    assert said(ws, warn, category), (
        f"silent wrong answer: n_clusters_={getattr(est, 'n_clusters_', None)}, labels "
        f"{np.asarray(est.labels_)[:10]}..., warnings {[str(w.message)[:80] for w in ws]}"
    )
    return "warned"
