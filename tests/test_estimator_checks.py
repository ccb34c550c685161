"""Every estimator exported in ``mmcedu.__all__`` passes scikit-learn's estimator checks.

An estimator may list checks it is expected to fail in a class attribute
``_expected_failed_checks = {"check_name": "written reason", ...}``; a check listed there
without a reason is itself an error.
"""

import inspect

import pytest
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.utils.estimator_checks import parametrize_with_checks

import mmcedu

# Meta-estimators take an estimator and a grid: checked with a small instance of each.
META_ESTIMATORS = {
    "LabelFreeSearch": lambda: mmcedu.LabelFreeSearch(
        KMeans(n_init=1, random_state=0), {"n_clusters": [2, 3]}, criterion="silhouette", random_state=0
    ),
}
ESTIMATOR_CLASSES = [
    getattr(mmcedu, name)
    for name in mmcedu.__all__
    if inspect.isclass(getattr(mmcedu, name))
    and issubclass(getattr(mmcedu, name), BaseEstimator)
    and name not in META_ESTIMATORS
]
# every parameter has a default
ESTIMATORS = [cls() for cls in ESTIMATOR_CLASSES] + [make() for make in META_ESTIMATORS.values()]


def _expected_failed_checks(estimator):
    return dict(getattr(estimator, "_expected_failed_checks", {}))


def test_every_estimator_is_checked():
    assert {c.__name__ for c in ESTIMATOR_CLASSES} == {
        "SDPMMC", "GMMC", "UMCRLS", "EMMC", "SupportVectorClustering", "RobustEnsembleClustering"
    }
    exported = {n for n in mmcedu.__all__ if inspect.isclass(getattr(mmcedu, n))
                and issubclass(getattr(mmcedu, n), BaseEstimator)}
    assert exported == {c.__name__ for c in ESTIMATOR_CLASSES} | set(META_ESTIMATORS)


@pytest.mark.parametrize("cls", ESTIMATOR_CLASSES, ids=lambda c: c.__name__)
def test_estimator_conventions(cls):
    assert issubclass(cls, ClusterMixin) and issubclass(cls, BaseEstimator)
    assert hasattr(cls, "_parameter_constraints"), "declare _parameter_constraints"
    for check, reason in _expected_failed_checks(cls).items():
        assert check.startswith("check_"), check
        assert isinstance(reason, str) and len(reason.split()) >= 5, (
            f"{cls.__name__} excludes {check} without a written reason"
        )
    assert cls.__doc__ and "Parameters" in cls.__doc__ and "Attributes" in cls.__doc__


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
