"""One registry of the experiments' data sets and of the numbers quoted from the source papers.

Data sets
    :data:`DATASETS` maps a name to a :class:`DataSet`; :func:`load` is the one loader,
    ``load(name, n_samples=None, random_state=0, *, standardize=False) -> (X, y)``. A name
    fixes everything but the size and the seed (noise level, scaling, classes), so the same
    name is the same data in every experiment. Everything is generated or shipped with
    scikit-learn (:mod:`mmcedu.datasets`): nothing is downloaded.

Paper numbers
    :data:`PAPER` quotes every number the experiments compare with, once:
    ``PAPER[source][table][row][column]``, where ``source`` is the key of the source
    document in the book's bibliography (``book/references.bib``).

Stand-ins
    :data:`STAND_INS` says which registered data set replaces a data set of a paper that is
    not available offline, and why the numbers may differ (the ``note`` column of a table).

Tables
    :class:`PaperTable` is a :class:`mmcedu_lab.report.Table` that declares which of its
    columns put a paper number beside ours (read by :mod:`mmcedu_lab.summary`).
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import StandardScaler

from mmcedu import datasets
from mmcedu_lab.report import Table

__all__ = ["DataSet", "DATASETS", "load", "PAPER", "STAND_INS", "stand_in", "PaperTable"]


@dataclass(frozen=True)
class DataSet:
    """A registered data set.

    Attributes
    ----------
    make : callable
        ``make(n_samples, random_state) -> (X, y)``; ``n_samples=None`` means every sample
        there is (fixed-size data sets such as iris ignore ``n_samples``).
    n_clusters : int
        Number of classes of ``y``.
    n_samples : int or None
        Default size (``None``: all samples).
    description : str
    """

    make: Callable
    n_clusters: int
    n_samples: int | None
    description: str


def _digits(classes, *, scale):
    k = 10 if classes is None else len(classes)

    def make(n_samples, random_state):
        per_class = None if n_samples is None else n_samples // k
        return datasets.digits(classes, per_class, scale=scale, random_state=random_state)

    return make


def _noisy_digits(n_samples, random_state):
    """Digits resampled with replacement when needed, plus noise of 0.01 (for timings at any n)."""
    X, y = datasets.digits(scale=True)
    rng = np.random.RandomState(random_state)
    n = X.shape[0] if n_samples is None else n_samples
    idx = rng.choice(X.shape[0], n, replace=n > X.shape[0])
    return np.clip(X[idx] + 0.01 * rng.standard_normal((n, X.shape[1])), 0, 1), y[idx]


def _breast_cancer(n_samples, random_state):
    """WDBC as scikit-learn ships it; a stratified subsample of ``n_samples`` (None: all 569)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    if n_samples is None or n_samples >= len(y):
        return X, y
    X, _, y, _ = train_test_split(X, y, train_size=n_samples, stratify=y,
                                  random_state=random_state)
    return X, y


DATASETS: dict[str, DataSet] = {
    "two circles": DataSet(
        lambda n, s: datasets.two_circles(n, random_state=s), 2, 200,
        "two concentric rings (radii 0.5 and 1, noise 0.05)"),
    "two circles (noise 0.03)": DataSet(
        lambda n, s: datasets.two_circles(n, noise=0.03, random_state=s), 2, 200,
        "two concentric rings (radii 0.5 and 1, noise 0.03)"),
    "jointed circles": DataSet(
        lambda n, s: datasets.jointed_circles(n, random_state=s), 2, 200,
        "two unit circles touching at the origin (noise 0.03)"),
    "two Gaussians": DataSet(
        lambda n, s: datasets.two_gaussians(n, random_state=s), 2, 200,
        "two unit-variance Gaussians in 2-D, means 3 apart (Bayes error about 7 %)"),
    "moons": DataSet(
        lambda n, s: datasets.moons(n, noise=0.1, random_state=s), 2, 500,
        "two moons (make_moons, noise 0.1)"),
    "moons (noise 0.05)": DataSet(
        lambda n, s: datasets.moons(n, noise=0.05, random_state=s), 2, 200,
        "two moons (make_moons, noise 0.05)"),
    "blobs": DataSet(
        lambda n, s: datasets.blobs(n, random_state=s), 3, 300,
        "three Gaussian blobs in 2-D (make_blobs, std 1)"),
    "blobs (std 0.5)": DataSet(
        lambda n, s: datasets.blobs(n, cluster_std=0.5, random_state=s), 3, 200,
        "three Gaussian blobs in 2-D (make_blobs, std 0.5)"),
    "blobs (5 clusters, 8-D)": DataSet(
        lambda n, s: datasets.blobs(n, centers=5, n_features=8, cluster_std=3.0, random_state=s),
        5, 400, "five overlapping Gaussian blobs in 8-D (make_blobs, std 3)"),
    "iris": DataSet(
        lambda n, s: datasets.iris(), 3, 150, "Fisher's iris, 150 x 4, raw features"),
    "digits": DataSet(
        _digits(None, scale=True), 10, None, "scikit-learn 8x8 digits, pixels / 16"),
    "digits 1-4": DataSet(
        _digits((1, 2, 3, 4), scale=True), 4, None, "digits 1-4, pixels / 16"),
    "digits 1-4 (raw)": DataSet(
        _digits((1, 2, 3, 4), scale=False), 4, 500, "digits 1-4, raw pixels 0..16"),
    "digits 5-8 (raw)": DataSet(
        _digits((5, 6, 7, 8), scale=False), 4, 500, "digits 5-8, raw pixels 0..16"),
    "two Gaussians (4.5 apart)": DataSet(
        lambda n, s: datasets.two_gaussians(n, distance=4.5, random_state=s), 2, 200,
        "two unit-variance Gaussians in 2-D, means 4.5 apart (Bayes error Phi(-2.25) = 1.2 %)"),
    "breast cancer": DataSet(
        _breast_cancer, 2, 285,
        "Wisconsin diagnostic breast cancer (scikit-learn, 569 x 30, raw features), "
        "stratified subsample"),
    "digits (resampled, noisy)": DataSet(
        _noisy_digits, 10, 500, "digits / 16 resampled to any size, plus noise 0.01"),
}
# The 45 digit pairs are "digits a vs b" (a range of classes is written "digits 1-4").
for _a, _b in itertools.combinations(range(10), 2):
    DATASETS[f"digits {_a} vs {_b}"] = DataSet(
        _digits((_a, _b), scale=True), 2, None, f"digits {_a} and {_b}, pixels / 16")
del _a, _b


def load(name, n_samples=None, random_state=0, *, standardize=False):
    """The registered data set ``name``: ``(X, y)``.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    n_samples : int or None, default=None
        Size; ``None`` means the data set's default (:attr:`DataSet.n_samples`). Subsets of
        the digits are balanced (``n_samples // n_clusters`` per class).
    random_state : int, default=0
        Seed of the generator or of the subsample.
    standardize : bool, default=False
        Scale every feature to zero mean and unit variance.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Reference labels, for evaluation only.
    """
    if not isinstance(name, str) or name not in DATASETS:
        raise ValueError(f"Unknown data set {name!r}; choose from {sorted(DATASETS)}.")
    entry = DATASETS[name]
    if n_samples is not None and (
        isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral)
        or n_samples < entry.n_clusters
    ):
        raise ValueError(
            f"n_samples must be None or an integer >= {entry.n_clusters} (the number of "
            f"classes of data set {name!r}, each needs a sample); got {n_samples!r}."
        )
    X, y = entry.make(entry.n_samples if n_samples is None else n_samples, random_state)
    if standardize:
        X = StandardScaler().fit_transform(X)
    return X, y


# Numbers quoted from the source documents: PAPER[source][table][row][column].
PAPER = {
    # Valizadegan & Jin (2006), Table 1: clustering error (%) at the optimal kernel width of
    # normalized cut (NC), SDP MMC (MMC; on 80-sample subsets of the UCI data sets), GMMC, and GMMC with the
    # unsupervised kernel learning (UKL).
    "valizadegan2006gmmc": {
        "Table 1": {
            "Two Circles": {"NC": 2.0, "MMC": 0.0, "GMMC": 0.0, "UKL": 0.0},
            "Two Jointed Circles": {"NC": 7.0, "MMC": 6.25, "GMMC": 0.0, "UKL": 0.0},
            "Two Gaussian": {"NC": 1.25, "MMC": 2.5, "GMMC": 1.25, "UKL": 3.75},
            "Digits 3-8": {"NC": 35.0, "MMC": 10.0, "GMMC": 5.6, "UKL": 5.6},
            "Digits 1-7": {"NC": 45.0, "MMC": 31.25, "GMMC": 2.2, "UKL": 3.0},
            "Digits 2-7": {"NC": 34.0, "MMC": 1.25, "GMMC": 0.5, "UKL": 5.6},
            "Digits 8-9": {"NC": 48.0, "MMC": 3.75, "GMMC": 16.0, "UKL": 12.0},
        },
        # The three UCI rows of Table 1 the method tables leave out (same columns). The paper's
        # "Breast" (285 x 32) names no file; WDBC, which scikit-learn ships, stands in for it.
        "Table 1 (UCI rows)": {
            "Vote": {"NC": 25.0, "MMC": 15.0, "GMMC": 9.6, "UKL": 11.90},
            "Ionosphere": {"NC": 25.0, "MMC": 21.25, "GMMC": 23.5, "UKL": 27.3},
            "Breast": {"NC": 36.5, "MMC": 38.75, "GMMC": 36.1, "UKL": 37.0},
        },
        # Table 1, self-tuning spectral clustering (Zelnik-Manor & Perona), best and worst
        # error (%) over the neighbour count k = 1..15.
        "Table 1 (ST)": {
            "Two Circles": {"ST best k": 0.0, "ST worst k": 50.0},
            "Two Jointed Circles": {"ST best k": 1.0, "ST worst k": 45.0},
            "Two Gaussian": {"ST best k": 5.0, "ST worst k": 7.5},
            "Vote": {"ST best k": 11.0, "ST worst k": 40.0},
            "Digits 3-8": {"ST best k": 5.0, "ST worst k": 50.0},
            "Digits 1-7": {"ST best k": 0.0, "ST worst k": 47.0},
            "Digits 2-7": {"ST best k": 1.5, "ST worst k": 50.0},
            "Digits 8-9": {"ST best k": 9.0, "ST worst k": 48.0},
            "Ionosphere": {"ST best k": 26.5, "ST worst k": 48.0},
            "Breast": {"ST best k": 37.5, "ST worst k": 41.5},
        },
        # Section 3.2: the soft-margin constant of the experiments.
        "Section 3.2": {"soft margin": {"C": 1e5}},
    },
    # Pahikkala et al. (2012), Table I: (mean ARI, standard deviation) over ten repetitions.
    "pahikkala2012umc": {
        "Table I": {
            "Iris": {
                "UMC-RLS": (0.96, 0.00), "Steep-RLS": (0.56, 0.13), "Stoc-RLS": (0.45, 0.25),
                "k-means": (0.70, 0.09), "GMM": (0.96, 0.00), "SC": (0.43, 0.00),
            },
            "Moons": {
                "UMC-RLS": (1.00, 0.00), "Steep-RLS": (0.07, 0.05), "Stoc-RLS": (0.21, 0.35),
                "k-means": (0.65, 0.00), "GMM": (0.78, 0.00), "SC": (0.99, 0.00),
            },
            "USPS 1-4": {
                "UMC-RLS": (0.85, 0.02), "Steep-RLS": (0.38, 0.08), "Stoc-RLS": (0.38, 0.12),
                "k-means": (0.61, 0.01), "GMM": (0.48, 0.00), "SC": (0.66, 0.00),
            },
            "USPS 5-8": {
                "UMC-RLS": (0.91, 0.02), "Steep-RLS": (0.34, 0.14), "Stoc-RLS": (0.26, 0.12),
                "k-means": (0.67, 0.00), "GMM": (0.64, 0.00), "SC": (0.93, 0.00),
            },
        },
        # Table I, the cells the method table leaves out: the rows whose data are not offline
        # (COIL-20 and its subsets, Letter) and the CPMMC column (no COIL entry in the paper).
        "Table I (other cells)": {
            "Coil": {
                "UMC-RLS": (0.84, 0.06), "Steep-RLS": (0.43, 0.07), "Stoc-RLS": (0.31, 0.10),
                "k-means": (0.58, 0.02), "GMM": (0.55, 0.01), "SC": (0.74, 0.01),
            },
            "Coil 1-4": {
                "UMC-RLS": (1.00, 0.00), "Steep-RLS": (0.29, 0.09), "Stoc-RLS": (0.29, 0.11),
                "k-means": (0.49, 0.00), "GMM": (0.50, 0.00), "SC": (0.70, 0.00),
                "CPMMC": (0.47, 0.08),
            },
            "Coil 5-8": {
                "UMC-RLS": (0.97, 0.09), "Steep-RLS": (0.37, 0.10), "Stoc-RLS": (0.35, 0.06),
                "k-means": (0.60, 0.04), "GMM": (0.61, 0.03), "SC": (0.74, 0.06),
                "CPMMC": (0.62, 0.05),
            },
            "Letter": {
                "UMC-RLS": (0.46, 0.09), "Steep-RLS": (0.20, 0.12), "Stoc-RLS": (0.19, 0.12),
                "k-means": (0.43, 0.00), "GMM": (0.45, 0.00), "SC": (0.38, 0.00),
                "CPMMC": (0.39, 0.10),
            },
            "Iris": {"CPMMC": (0.69, 0.08)},
            "Moons": {"CPMMC": (0.69, 0.45)},
            "USPS 1-4": {"CPMMC": (0.59, 0.19)},
            "USPS 5-8": {"CPMMC": (0.57, 0.11)},
        },
        # Table II: the maximum ARI of the ten final runs (CPMMC: no COIL entry).
        "Table II": {
            "Coil": {"UMC-RLS": 1.00, "Steep-RLS": 0.58, "Stoc-RLS": 0.43, "k-means": 0.62,
                     "GMM": 0.57, "SC": 0.75},
            "Coil 1-4": {"UMC-RLS": 1.00, "Steep-RLS": 0.43, "Stoc-RLS": 0.50, "k-means": 0.49,
                         "GMM": 0.50, "SC": 0.70, "CPMMC": 0.56},
            "Coil 5-8": {"UMC-RLS": 1.00, "Steep-RLS": 0.51, "Stoc-RLS": 0.42, "k-means": 0.65,
                         "GMM": 0.65, "SC": 0.79, "CPMMC": 0.67},
            "Iris": {"UMC-RLS": 0.96, "Steep-RLS": 0.92, "Stoc-RLS": 0.85, "k-means": 0.62,
                     "GMM": 0.96, "SC": 0.43, "CPMMC": 0.76},
            "Letter": {"UMC-RLS": 0.57, "Steep-RLS": 0.36, "Stoc-RLS": 0.37, "k-means": 0.43,
                       "GMM": 0.45, "SC": 0.38, "CPMMC": 0.49},
            "Moons": {"UMC-RLS": 1.00, "Steep-RLS": 0.14, "Stoc-RLS": 0.95, "k-means": 0.65,
                      "GMM": 0.78, "SC": 0.99, "CPMMC": 0.99},
            "USPS 1-4": {"UMC-RLS": 0.88, "Steep-RLS": 0.52, "Stoc-RLS": 0.51, "k-means": 0.62,
                         "GMM": 0.48, "SC": 0.66, "CPMMC": 0.92},
            "USPS 5-8": {"UMC-RLS": 0.93, "Steep-RLS": 0.57, "Stoc-RLS": 0.51, "k-means": 0.68,
                         "GMM": 0.65, "SC": 0.93, "CPMMC": 0.68},
        },
    },
    # Zhang, Xia & Liu (EMMC). Table 1: mean clustering error (%) and CPU time (s) over the 45
    # two-digit tasks. Tables 2 (LetterABCD) and 3 (USPS): by the number L of hidden nodes,
    # accuracy (%) and time (s) with one output ("single") and with m outputs ("multi").
    "zhang_emmc": {
        "Table 1": {
            "Random only": {"error": 48.21, "time": 0.001},
            "Random + EMMC": {"error": 26.37, "time": 11.06},
            "KM only": {"error": 3.49, "time": 0.025},
            "KM + EMMC": {"error": 1.84, "time": 1.69},
        },
        "Table 2": {
            100: {"single": 40.17, "single time": 3.36, "multi": 40.86, "multi time": 3.79},
            150: {"single": 56.35, "single time": 4.70, "multi": 56.25, "multi time": 5.58},
            200: {"single": 60.74, "single time": 6.27, "multi": 61.44, "multi time": 7.36},
            300: {"single": 68.25, "single time": 13.32, "multi": 68.73, "multi time": 14.86},
            500: {"single": 69.67, "single time": 19.68, "multi": 70.85, "multi time": 22.52},
            1000: {"single": 71.53, "single time": 103.76, "multi": 71.72, "multi time": 109.69},
        },
        "Table 3": {
            200: {"single": 42.65, "single time": 30.51, "multi": 41.31, "multi time": 32.62},
            400: {"single": 75.29, "single time": 87.90, "multi": 75.54, "multi time": 92.11},
            600: {"single": 87.38, "single time": 190.56, "multi": 87.74, "multi time": 196.885},
            800: {"single": 92.26, "single time": 342.21, "multi": 92.45, "multi time": 350.875},
            1000: {"single": 94.47, "single time": 536.61, "multi": 94.89, "multi time": 547.045},
            1200: {"single": 94.75, "single time": 742.05, "multi": 95.03, "multi time": 754.705},
            1500: {"single": 95.11, "single time": 1173.06, "multi": 95.57, "multi time": 1188.76},
        },
    },
    # Lee & Daniels (2007), slides: no result tables; slide 29 states the accuracy of the
    # q-list length estimate, slide 41 the labeling complexities (row "TOTAL").
    "lee2007cone": {
        "slide 29": {"q-list length estimate": {"accuracy": 0.89}},
        # slide 31: the "actual number" of q values as a share of the estimate and of the
        # secant-like list, in 2-D and in higher dimensions.
        "slide 31": {"2-D": {"of estimate": 0.32, "of secant length": 0.22},
                     "higher-D": {"of estimate": 1.12, "of secant length": 0.82}},
        "slide 41": {"TOTAL": {"complete graph": "O(N^2 Nsv m)", "cone": "O(N Nsv)"}},
    },
    # The ensemble clustering draft has no experiments: nothing to quote.
    "mmmf_ensemble": {},
}

# The GMMC digit pairs are the paper's own data, not a stand-in: the paper's UCI "Digits" (64
# features) is optdigits, whose test set scikit-learn ships as its 8x8 digits; only the
# paper's 180-sample subsets are not published, so ours are another balanced subsample (the
# ledger counts these rows on the paper's data, below the paper's size in the quick protocol).
# STAND_INS maps each paper data set to the registered one that the tables load.
_DIGITS_NOTE = "scikit-learn 8x8 digits (balanced subset), not the paper's 180-sample UCI subset"

# STAND_INS[source][the paper's data set] = (registered data set, note).
STAND_INS = {
    "valizadegan2006gmmc": {
        "Two Circles": ("two circles", "stand-in: datasets.two_circles (noise 0.05, factor 0.5)"),
        "Two Jointed Circles": ("jointed circles", "stand-in: datasets.jointed_circles"),
        "Two Gaussian": (
            "two Gaussians", "stand-in: datasets.two_gaussians (means 3 std apart; Bayes error ~7 %)"),
        "Digits 3-8": ("digits 3 vs 8", _DIGITS_NOTE),
        "Digits 1-7": ("digits 1 vs 7", _DIGITS_NOTE),
        "Digits 2-7": ("digits 2 vs 7", _DIGITS_NOTE),
        "Digits 8-9": ("digits 8 vs 9", _DIGITS_NOTE),
    },
    "pahikkala2012umc": {
        "Iris": ("iris", "raw features"),
        "Moons": ("moons", "make_moons(500, noise=0.1)"),
        "USPS 1-4": ("digits 1-4 (raw)", "stand-in: sklearn digits 1-4, 125/class"),
        "USPS 5-8": ("digits 5-8 (raw)", "stand-in: sklearn digits 5-8, 125/class"),
    },
    "zhang_emmc": {
        "LetterABCD": ("digits 1-4", "digits 1-4 stand in for LetterABCD"),
        "USPS": ("digits", "all 10 digits stand in for USPS"),
    },
}


def stand_in(source, name):
    """``(registered data set, note)`` standing in for the data set ``name`` of ``source``."""
    try:
        return STAND_INS[source][name]
    except KeyError:
        raise ValueError(
            f"No stand-in for data set {name!r} of {source!r}; known: "
            f"{sorted(STAND_INS.get(source, {}))}."
        ) from None


class PaperTable(Table):
    """A :class:`mmcedu_lab.report.Table` that puts numbers of a paper beside ours.

    Parameters
    ----------
    rows, headers, **kwargs
        As for :class:`mmcedu_lab.report.Table`.
    pairs : list of (str, str, str), default=None
        ``(paper column, our column, label)`` triples naming which columns the reproduction
        summary compares (:mod:`mmcedu_lab.summary`); ``None`` means
        ``[("paper", "mmcedu", "")]``.
    """

    def __init__(self, rows, headers, *, pairs=None, **kwargs):
        super().__init__(rows, headers, **kwargs)
        self.pairs = [("paper", "mmcedu", "")] if pairs is None else [tuple(p) for p in pairs]
