"""The data sets of the defaults studies (``bench_gmmc.py --defaults``, ``bench_emmc.py
--defaults``): standardized data with known classes.

Each study names its own sets (its rule, written before measuring, lists them); the pieces
they share live here: the held-out real data sets, the digit classes, and the digit pairs
(with an unbalanced 0 vs 6) of the chosen-on groups.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

#: The digit pairs every chosen-on group starts with.
CHOSEN_PAIRS = [(0, 6), (4, 9), (5, 9), (1, 7), (2, 3)]


def digit_classes(*classes):
    """``(X, y)``: every sample of scikit-learn's digits of the given classes."""
    digits = load_digits()
    keep = np.isin(digits.target, classes)
    return digits.data[keep], digits.target[keep]


def held_out():
    """The real data sets the packages report and no default was chosen on."""
    return {
        "iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True),
        "breast cancer": load_breast_cancer(return_X_y=True),
        "digits 3 vs 8": digit_classes(3, 8),
    }


def chosen_on_pairs():
    """The digit pairs of :data:`CHOSEN_PAIRS` and digits 0 vs 6 with a third of the sixes."""
    data = {f"digits {a} vs {b}": digit_classes(a, b) for a, b in CHOSEN_PAIRS}
    X, y = digit_classes(0, 6)
    i6 = np.flatnonzero(y == 6)
    keep = np.r_[np.flatnonzero(y == 0),
                 np.random.RandomState(100).choice(i6, len(i6) // 3, replace=False)]
    data["digits 0 vs 6 (178/60)"] = (X[keep], y[keep])
    return data


def standardized(data):
    """``{name: (StandardScaler().fit_transform(X), y)}``."""
    return {k: (StandardScaler().fit_transform(X), y) for k, (X, y) in data.items()}
