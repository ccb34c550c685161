"""Every estimator exported in ``mmcedu.__all__`` passes scikit-learn's estimator checks.

An estimator may list checks it is expected to fail in a class attribute
``_expected_failed_checks = {"check_name": "written reason", ...}``; a check listed there
without a reason is itself an error.
"""

import inspect

import pytest
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.estimator_checks import parametrize_with_checks

import mmcedu

# Constructor arguments for estimators that have a required parameter.
REQUIRED_ARGS = {"RobustEnsembleClustering": {"n_clusters": 2}}

ESTIMATOR_CLASSES = [
    getattr(mmcedu, name)
    for name in mmcedu.__all__
    if inspect.isclass(getattr(mmcedu, name)) and issubclass(getattr(mmcedu, name), BaseEstimator)
]
ESTIMATORS = [cls(**REQUIRED_ARGS.get(cls.__name__, {})) for cls in ESTIMATOR_CLASSES]


def _expected_failed_checks(estimator):
    return dict(getattr(estimator, "_expected_failed_checks", {}))


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


if ESTIMATORS:

    @parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
    def test_sklearn_compatible_estimator(estimator, check):
        check(estimator)
