"""Each estimator owns its label-free rule: the one-line call chooses what the rules chose.

``tests/data/label_free_choices.json`` holds the grid point that every mmcedu method of
chapter 09's quick protocol chose on every task and seed, recorded when the rules were still
assembled by hand in the comparison (an estimator, a grid with the right octaves, a list of
criteria and a tolerance). The comparison now runs ``LabelFreeSearch(estimator)`` with no grid
and no criterion; it must make the same choices.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils import check_random_state

import mmcedu
from mmcedu import (
    EMMC,
    GMMC,
    SDPMMC,
    UMCRLS,
    LabelFreeSearch,
    RobustEnsembleClustering,
    SupportVectorClustering,
)
from mmcedu.datasets import two_circles
from mmcedu_lab import comparison

RECORDED = json.loads((Path(__file__).parent / "data" / "label_free_choices.json").read_text())


def _key(params):
    return {k: round(float(v), 12) for k, v in params.items()}


@pytest.mark.slow
def test_the_estimators_rules_make_the_recorded_choices_on_the_quick_protocol():
    methods = sorted({r["method"] for r in RECORDED})
    tasks = list(dict.fromkeys(r["task"] for r in RECORDED))  # the quick tasks when recorded
    records = comparison.run_comparison(full=False, methods=methods, tasks=tasks, n_jobs=2)
    got = {(r["task"], r["method"], r["seed"]): r for r in records}
    assert len(got) == len(RECORDED) == 140
    for old in RECORDED:
        new = got[old["task"], old["method"], old["seed"]]
        where = (old["task"], old["method"], old["seed"])
        assert _key(new["param_free"]) == _key(old["param_free"]), where
        assert new["ari_free"] == pytest.approx(old["ari_free"], abs=1e-12), where
        assert new["ari_best"] == pytest.approx(old["ari_best"], abs=1e-12), where


ALL = [UMCRLS(n_clusters=2), GMMC(), SDPMMC(), EMMC(n_clusters=2), SupportVectorClustering(),
       RobustEnsembleClustering(n_clusters=2)]


@pytest.mark.parametrize("est", ALL, ids=lambda e: type(e).__name__)
def test_every_estimator_states_a_rule_that_label_free_search_takes(est):
    X, _ = two_circles(60, noise=0.05, random_state=0)
    rule = est.label_free_rule(X)
    assert set(rule) == {"param_grid", "criterion", "tolerance"}
    (name, values), = rule["param_grid"].items()
    assert name in est.get_params() and len(values) == 8
    assert set(rule["criterion"]) <= set(mmcedu.criteria.CRITERIA)
    assert ("objective" in rule["criterion"]) <= hasattr(est, "objective_contrast")

    class Mine(type(est)):  # a subclass inherits the rule and the objective
        pass

    mine = Mine(**est.get_params())
    assert mine.label_free_rule(X) == rule


@pytest.mark.slow
def test_the_one_line_call_works_for_every_estimator_and_a_subclass():
    X, y = two_circles(80, noise=0.05, random_state=0)

    class MyUMC(UMCRLS):
        pass

    for est in [*ALL, MyUMC(n_clusters=2)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = LabelFreeSearch(est, n_resamples=3, random_state=0).fit(X)
        assert search.labels_.shape == (80,) and search.best_params_, type(est).__name__
        assert search.criteria_ == list(est.label_free_rule(X)["criterion"])


def test_a_given_grid_keeps_the_estimators_criterion_and_a_given_criterion_tolerance_zero():
    X, _ = two_circles(60, noise=0.05, random_state=0)
    grid = {"gamma": [0.5, 2.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = LabelFreeSearch(UMCRLS(2), grid, n_resamples=2, random_state=0).fit(X)
        b = LabelFreeSearch(UMCRLS(2), grid, criterion="silhouette", random_state=0).fit(X)
    assert a.criteria_ == ["transfer_stability", "objective"] and a.tolerance_ == 0.1
    assert b.criteria_ == ["silhouette"] and b.tolerance_ == 0.0


def test_an_estimator_without_a_rule_needs_a_grid():
    from sklearn.cluster import KMeans

    X = check_random_state(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match="has no label_free_rule"):
        LabelFreeSearch(KMeans()).fit(X)
    assert np.isfinite(LabelFreeSearch(KMeans(n_init=2), {"n_clusters": [2, 3]}, n_resamples=2,
                                       random_state=0).fit(X).best_score_)
