"""The held-out battery: small data sets of the clustering benchmark suite, with published ARIs.

The book judges its label-free rules, frozen in the estimators, on data that no rule was
tuned on: a selection from Gagolewski's *Framework for Benchmarking Clustering Algorithms*
(SoftwareX 20:101270, 2022), benchmark suite version 1.1.0. Nothing in the battery chooses
anything; it only scores.

Selection
    :data:`BATTERY` lists, in a fixed order, every data set of the batteries ``fcps``,
    ``graves``, ``other``, ``sipu``, ``uci`` and ``wut`` with at most 1,100 points and at most
    15 reference clusters in its ``labels0`` partition (45 sets), with ``n``, ``d`` and ``k``.
    Four of them are not held out from the book (``BatterySet.seen``): iris, wine and the
    Wisconsin breast cancer data (``wdbc``) are tasks of the book's comparison, and ``iris5``
    is a subset of iris; :data:`HELD_OUT` leaves them out.

Data
    :func:`load_battery` returns ``(X, y, k)``: the features (standardized by default, as
    the comparison does), the reference labels ``0..k-1`` with the framework's noise points
    as ``-1``, and ``k``, the number of non-noise reference clusters. Noise points are left
    out of every score: :func:`ari_without_noise`.

Published results
    :func:`published_ari` reads the ARIs of the framework's reference algorithms (Genie,
    ITM, k-means, Gaussian mixtures, spectral clustering) at the reference ``k``, scored on
    the non-noise points from the label vectors the framework publishes.

Where the files are
    :func:`data_dir`: the folder ``clustering-data-v1`` named by ``$MMCEDU_BATTERY_DATA``,
    else ``lab/data/clustering-data-v1``, else ``shared/clustering-data-v1`` in a folder
    above the repository (the project's shared folder, beside the repository). Its
    ``README.md`` states the source, versions, license and attribution of every file.
    Nothing is downloaded.
"""

from __future__ import annotations

import csv
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

__all__ = [
    "BatterySet",
    "BATTERY",
    "HELD_OUT",
    "METHOD_NAMES",
    "data_dir",
    "load_battery",
    "published_ari",
    "ari_without_noise",
]

DATA_ENV = "MMCEDU_BATTERY_DATA"
"""Environment variable naming the folder that holds the battery's files."""

_FOLDER = "clustering-data-v1"


@dataclass(frozen=True)
class BatterySet:
    """One data set of the battery.

    Attributes
    ----------
    battery : str
        The framework's battery (``"fcps"``, ``"graves"``, ``"other"``, ``"sipu"``,
        ``"uci"``, ``"wut"``).
    name : str
        The data set's name within its battery.
    n : int
        Number of points, noise points included.
    d : int
        Number of features as stored (``load_battery`` with ``standardize=True`` drops
        constant ones: one of ``uci/ionosphere``'s 34).
    k : int
        Number of non-noise reference clusters of ``labels0``.
    n_noise : int
        Number of points labelled noise (``-1`` from :func:`load_battery`).
    seen : bool
        True for the sets the book already uses (iris, wine, breast cancer) or a part of
        one (``iris5``): not held out.
    """

    battery: str
    name: str
    n: int
    d: int
    k: int
    n_noise: int = 0
    seen: bool = False


BATTERY = (
    BatterySet("fcps", "atom", 800, 3, 2),
    BatterySet("fcps", "chainlink", 1000, 3, 2),
    BatterySet("fcps", "hepta", 212, 3, 7),
    BatterySet("fcps", "lsun", 400, 2, 3),
    BatterySet("fcps", "target", 770, 2, 6),
    BatterySet("fcps", "tetra", 400, 3, 4),
    BatterySet("fcps", "twodiamonds", 800, 2, 2),
    BatterySet("fcps", "wingnut", 1016, 2, 2),
    BatterySet("graves", "dense", 200, 2, 2),
    BatterySet("graves", "fuzzyx", 1000, 2, 5),
    BatterySet("graves", "line", 250, 2, 2),
    BatterySet("graves", "parabolic", 1000, 2, 2),
    BatterySet("graves", "ring", 1000, 2, 2),
    BatterySet("graves", "ring_noisy", 1050, 2, 2, n_noise=43),
    BatterySet("graves", "ring_outliers", 1030, 2, 5),
    BatterySet("graves", "zigzag", 250, 2, 3),
    BatterySet("graves", "zigzag_noisy", 300, 2, 3, n_noise=38),
    BatterySet("graves", "zigzag_outliers", 280, 2, 3, n_noise=30),
    BatterySet("other", "iris", 150, 4, 3, seen=True),
    BatterySet("other", "iris5", 105, 4, 3, seen=True),
    BatterySet("other", "square", 1000, 2, 2),
    BatterySet("sipu", "aggregation", 788, 2, 7),
    BatterySet("sipu", "compound", 399, 2, 6),
    BatterySet("sipu", "flame", 240, 2, 2),
    BatterySet("sipu", "jain", 373, 2, 2),
    BatterySet("sipu", "pathbased", 300, 2, 3),
    BatterySet("sipu", "r15", 600, 2, 15),
    BatterySet("sipu", "spiral", 312, 2, 3),
    BatterySet("uci", "ecoli", 336, 7, 8),
    BatterySet("uci", "glass", 214, 9, 6),
    BatterySet("uci", "ionosphere", 351, 34, 2),
    BatterySet("uci", "sonar", 208, 60, 2),
    BatterySet("uci", "wdbc", 569, 30, 2, seen=True),
    BatterySet("uci", "wine", 178, 13, 3, seen=True),
    BatterySet("wut", "mk1", 300, 2, 3),
    BatterySet("wut", "mk2", 1000, 2, 2),
    BatterySet("wut", "mk3", 600, 3, 3),
    BatterySet("wut", "smile", 1000, 2, 6),
    BatterySet("wut", "twosplashes", 400, 2, 2),
    BatterySet("wut", "x1", 120, 2, 3),
    BatterySet("wut", "x2", 120, 2, 3),
    BatterySet("wut", "x3", 185, 2, 4),
    BatterySet("wut", "z1", 192, 2, 3),
    BatterySet("wut", "z2", 900, 2, 5),
    BatterySet("wut", "z3", 1000, 2, 4),
)
"""The selection, ordered by battery and name."""

HELD_OUT = tuple(s for s in BATTERY if not s.seen)
"""The sets of :data:`BATTERY` the book uses nowhere else (41)."""

_BY_KEY = {(s.battery, s.name): s for s in BATTERY}

METHOD_NAMES = {
    "k-means": "sklearn_kmeans",
    "GMM": "sklearn_gm",
    "Genie": "Genie_G0.3",
    "ITM": "ITM",
    "spectral": "sklearn_spectral_Arbf_G1",
}
"""Short names of the reference algorithms and the framework's name of the variant meant.

``"Genie"`` is genieclust's default gini threshold 0.3 (``Genie_G0.1`` ... ``Genie_G1.0``
are the other variants); ``"spectral"`` is scikit-learn's default affinity and width (RBF,
``gamma=1`` on the framework's scaling); the ``published_ari.csv`` file also has the RBF
and Laplacian affinities at ``gamma`` 0.25, 0.5, 1, 2.5 and 5.
"""


def data_dir():
    """The folder that holds the battery's files.

    The first of: ``$MMCEDU_BATTERY_DATA``; ``lab/data/clustering-data-v1``;
    ``shared/clustering-data-v1`` in the nearest folder above this module that has one.

    Returns
    -------
    path : pathlib.Path

    Raises
    ------
    FileNotFoundError
        If none of them exists.
    """
    here = Path(__file__).resolve()
    candidates = []
    if os.environ.get(DATA_ENV):
        candidates.append(Path(os.environ[DATA_ENV]))
    candidates.append(here.parents[1] / "data" / _FOLDER)
    candidates += [parent / "shared" / _FOLDER for parent in here.parents[1:]]
    for path in candidates:
        if (path / "published_ari.csv").is_file():
            return path
    raise FileNotFoundError(
        f"The battery's files are in none of: ${DATA_ENV}, {here.parents[1] / 'data' / _FOLDER}, "
        f"shared/{_FOLDER} in a folder above {here.parents[1]}."
    )


def _entry(battery, name):
    try:
        return _BY_KEY[(battery, name)]
    except KeyError:
        raise ValueError(
            f"Unknown battery set {battery}/{name}; choose from BATTERY "
            f"(e.g. {BATTERY[0].battery!r}, {BATTERY[0].name!r})."
        ) from None


def load_battery(battery, name, *, standardize=True):
    """Load one data set of the battery.

    Parameters
    ----------
    battery, name : str
        The set, as in :data:`BATTERY` (e.g. ``"wut", "x2"``).
    standardize : bool, default=True
        Drop constant features and standardize every other one to mean 0 and variance 1
        (``StandardScaler``), as the comparison does for its data. ``False`` returns the
        features as stored.

    Returns
    -------
    X : ndarray of shape (n, d) of float
        The features (``d`` less the constant features if ``standardize``).
    y : ndarray of shape (n,) of int
        Reference labels ``0..k-1``, and ``-1`` for the points the framework labels noise;
        leave those out of a score (:func:`ari_without_noise`).
    k : int
        Number of non-noise reference clusters.
    """
    entry = _entry(battery, name)
    folder = data_dir() / entry.battery
    with gzip.open(folder / f"{entry.name}.data.gz", "rt") as f:
        X = np.loadtxt(f, ndmin=2, dtype=float)
    with gzip.open(folder / f"{entry.name}.labels0.gz", "rt") as f:
        labels0 = np.loadtxt(f, ndmin=1, dtype=int)
    if standardize:
        X = StandardScaler().fit_transform(X[:, X.std(axis=0) > 0])
    return X, labels0 - 1, int(labels0.max())


def published_ari(method=None, *, preprocess="original"):
    """The reference algorithms' ARIs on the battery at the reference ``k``.

    Parameters
    ----------
    method : str or None, default=None
        A key of :data:`METHOD_NAMES` (``"k-means"``, ``"GMM"``, ``"Genie"``, ``"ITM"``,
        ``"spectral"``) or a name as the framework writes it (e.g. ``"Genie_G0.5"``,
        ``"sklearn_spectral_Alaplacian_G5"``). ``None``: every method.
    preprocess : {"original", "scale_standard"}, default="original"
        The framework's data space: ``"original"`` keeps the data's shape (every column
        centred, all scaled by one factor); ``"scale_standard"`` standardizes every column,
        like :func:`load_battery` (results for ``Genie_G*``, ``ITM`` and ``sklearn_kmeans``
        only).

    Returns
    -------
    ari : dict
        ``{(battery, name): ari}`` for one method, ``{(battery, name, method): ari}`` for
        ``method=None``; ARI on the non-noise points of ``labels0``.
    """
    if preprocess not in ("original", "scale_standard"):
        raise ValueError(f"preprocess must be 'original' or 'scale_standard', got {preprocess!r}.")
    wanted = METHOD_NAMES.get(method, method)
    with open(data_dir() / "published_ari.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["preprocess"] == preprocess]
    if wanted is None:
        return {(r["battery"], r["dataset"], r["method"]): float(r["ari"]) for r in rows}
    out = {(r["battery"], r["dataset"]): float(r["ari"]) for r in rows if r["method"] == wanted}
    if not out:
        names = sorted({r["method"] for r in rows})
        raise ValueError(
            f"No published results for method {method!r} ({preprocess}); choose from "
            f"{sorted(METHOD_NAMES)} or {names}."
        )
    return out


def ari_without_noise(y_true, labels):
    """Adjusted Rand index on the points whose reference label is not ``-1``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Reference labels, ``-1`` for noise (as :func:`load_battery` returns them).
    labels : array-like of shape (n,)
        A clustering of all ``n`` points.

    Returns
    -------
    ari : float
    """
    y_true, labels = np.asarray(y_true), np.asarray(labels)
    if y_true.shape != labels.shape or y_true.ndim != 1:
        raise ValueError(
            f"y_true and labels must be 1-d of one length, got {y_true.shape} and {labels.shape}."
        )
    keep = y_true != -1
    if not keep.any():
        raise ValueError("Every point is noise (-1): there is nothing to score.")
    return float(adjusted_rand_score(y_true[keep], labels[keep]))
