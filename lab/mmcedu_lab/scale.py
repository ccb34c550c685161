"""The scale table: the rows of ``benchmarks/results/label_free_scale.csv``, typed.

``benchmarks/bench_label_free_scale.py`` measures the one-line label-free call,
``LabelFreeSearch(estimator).fit(X)``, for every estimator at a small and a large ``n`` in
fresh processes and writes that file; the README's Large-data table and the chapters' At-scale
sections read it through :func:`rows`. The file is found relative to this module (the
laboratory is installed editable from ``lab/`` of the repository). :func:`data` rebuilds the
benchmark's data sets, :func:`search_rule` the grid its search took on its first choice sample,
:func:`interpreter_mb` the memory a fresh interpreter holds before any fit, so that a chapter
can set the measured peaks against ``memory_bytes``.
"""

from __future__ import annotations

import csv
import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

__all__ = ["CSV", "data", "interpreter_mb", "moons_and_disk", "rows", "search_rule"]

#: The measured table, relative to the repository this module lives in.
CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "label_free_scale.csv"

#: the centres of the Gaussians of the benchmark (the first two for the two-cluster methods)
CENTRES = [[0, 0], [4, 0], [2, 3.5]]
#: the estimators that split into two clusters (the others run on three)
TWO_CLUSTERS = ("GMMC", "SDPMMC")

_INT = ("n", "n_clusters", "best_index", "grid_size", "n_choice_samples")
_FLOAT = ("wall_s", "cpu_s", "peak_rss_mb", "ari", "load_before", "load_after", "process_wall_s",
          "tolerance")
_JSON = ("best_params", "criteria", "warnings", "scores", "grid_n_clusters")


def _typed(row):
    out = dict.fromkeys(_INT + _FLOAT + _JSON)  # a column the file lacks reads as None
    for key, value in row.items():
        if value in ("", None):
            out[key] = None
        elif key in _INT:
            out[key] = int(float(value))
        elif key in _FLOAT:
            out[key] = float(value)
        elif key in _JSON:
            out[key] = json.loads(value)
        else:
            out[key] = value
    return out


def rows(estimator=None, *, path=None):
    """The rows of the scale table as dicts, in file order.

    Parameters
    ----------
    estimator : str, default=None
        Only the rows of this estimator (its class name, e.g. ``"GMMC"``); ``None``: all.
    path : path-like, default=None
        Another file of the same layout (default: :data:`CSV`).

    Returns
    -------
    list of dict
        Keys as the CSV's columns: ``n``, ``n_clusters``, ``best_index``, ``grid_size`` and
        ``n_choice_samples`` as ints; times, ``peak_rss_mb``, ``ari``, loads and ``tolerance``
        as floats; ``best_params``, ``criteria``, ``warnings``, ``scores`` (criterion: pooled
        score per grid point) and ``grid_n_clusters`` parsed from JSON; ``estimator`` and
        ``error`` as strings. Empty cells (and columns a file lacks) are ``None``.

    Examples
    --------
    >>> from mmcedu_lab.scale import rows
    >>> {r["estimator"] for r in rows()} >= {"UMCRLS", "GMMC", "EMMC"}
    True
    """
    with open(CSV if path is None else path, newline="") as f:
        table = [_typed(r) for r in csv.DictReader(f)]
    if estimator is None:
        return table
    return [r for r in table if r["estimator"] == estimator]


def moons_and_disk(n, *, width=0.1, random_state=0):
    """Two moons with bounded radial noise ``U(-width, width)`` and a uniform disk: three
    clusters of equal expected size that stay separated at any ``n``. Returns ``(X, y)``."""
    rng = np.random.RandomState(random_state)
    y = rng.randint(3, size=n)
    t = rng.uniform(0.0, np.pi, size=n)
    r = 1.0 + rng.uniform(-width, width, size=n)
    X = np.empty((n, 2))
    m0, m1, d = y == 0, y == 1, y == 2
    X[m0, 0], X[m0, 1] = r[m0] * np.cos(t[m0]), r[m0] * np.sin(t[m0])
    X[m1, 0], X[m1, 1] = 1.0 - r[m1] * np.cos(t[m1]), 0.5 - r[m1] * np.sin(t[m1])
    rad = 0.3 * np.sqrt(rng.uniform(size=d.sum()))
    ang = rng.uniform(0.0, 2 * np.pi, size=d.sum())
    X[d, 0], X[d, 1] = 2.8 + rad * np.cos(ang), 1.2 + rad * np.sin(ang)
    return X, y


def data(estimator, n):
    """The benchmark's data for the rows of ``estimator`` (its class name), ``n`` samples, seed 0.

    Two moons and a disk for ``SupportVectorClustering``; otherwise Gaussians of standard
    deviation 0.8 around :data:`CENTRES` (two of them for GMMC and SDP MMC). Returns ``(X, y)``.
    """
    if estimator == "SupportVectorClustering":
        return moons_and_disk(n, random_state=0)
    from mmcedu.datasets import blobs

    k = 2 if estimator in TWO_CLUSTERS else 3
    return blobs(n, centers=CENTRES[:k], cluster_std=0.8, random_state=0)


def search_rule(estimator, n):
    """The rule the benchmark's search applied at ``n`` samples, rebuilt exactly.

    The benchmark's data (:func:`data`, by the estimator's class name), its choice samples as
    ``LabelFreeSearch(estimator, random_state=0)`` (the benchmark's seed) draws them, and
    ``estimator.label_free_rule`` of the first of them, where the search takes its grid. Cheap:
    no fit, only the data and the rule's grid (for support vector clustering the q-list of 2,000
    points, a few seconds).

    Returns
    -------
    rule : dict
        ``"param_grid"``, ``"criterion"`` and ``"tolerance"`` as ``label_free_rule`` returns them.
    n_choice_samples : int
        The number of choice samples the search pools at ``n``.
    """
    from mmcedu.model_selection import LabelFreeSearch

    X = data(type(estimator).__name__, n)[0]
    search = LabelFreeSearch(estimator, random_state=0)
    first = search._choice_samples(X)[0]  # the draw fit() makes, before any fit
    return estimator.label_free_rule(first), search.n_choice_samples_


@functools.cache
def interpreter_mb():
    """Peak resident memory (MiB) of a fresh interpreter that has imported what the benchmark's
    process imports, before it builds any data or fits.

    The measured peak of a row minus this is the memory of the data and of the fits; a chapter
    compares it with the estimator's ``memory_bytes``. Measured once per session, in a child
    process of this interpreter (so with the same packages): its ``VmHWM`` (Linux), the high-water
    mark of its own address space, because the child's ``ru_maxrss`` would start from this
    interpreter's size at the fork; elsewhere ``ru_maxrss`` (KiB on Linux, bytes on macOS).
    """
    code = (
        "import resource, sys\n"
        "from mmcedu import *\n"
        "from mmcedu.datasets import blobs\n"
        "from mmcedu.metrics import adjusted_rand_score\n"
        "from joblib.externals.loky import get_reusable_executor\n"
        "try:\n"
        "    with open('/proc/self/status') as f:\n"
        "        kib = next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))\n"
        "except (OSError, StopIteration):\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    kib = peak / 1024 if sys.platform == 'darwin' else peak\n"
        "print(kib / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])
