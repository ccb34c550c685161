"""The common comparison protocol (mmcedu.experiments.comparison)."""

import numpy as np
import pytest

from mmcedu.experiments import comparison
from mmcedu.metrics import adjusted_rand_score


def test_tasks_are_standardized_and_sized():
    X, y, k = comparison.load_task("digits 1-4", 80)
    assert X.shape == (80, 64) and k == 4 and np.bincount(y)[1:5].tolist() == [20] * 4
    assert np.allclose(X.mean(0), 0, atol=1e-12)
    for name, (k, _) in comparison.TASKS.items():
        X, y, kk = comparison.load_task(name, 40)
        assert kk == k == np.unique(y).size, name


def test_records_select_best_and_label_free_points():
    recs = comparison.run_comparison(methods=["k-means", "spectral"], tasks=["two circles"], n_samples=60)
    assert [r["method"] for r in recs] == ["k-means", "spectral"]
    km, sp = recs
    assert km["param_best"] is None and km["ari_best"] == km["ari_free"]  # no grid
    # spectral: the best point is the grid point with the highest ARI, recomputed here
    X, y, k = comparison.load_task("two circles", 60)
    aris = [adjusted_rand_score(y, comparison._spectral(k, g, 0, X)) for g in comparison._grid("gamma", X, False)]
    assert sp["ari_best"] == pytest.approx(max(aris))
    assert any(sp["ari_free"] == pytest.approx(a) for a in aris)


def test_binary_only_methods_skip_multiclass_tasks():
    recs = comparison.run_comparison(methods=["GMMC"], tasks=["iris", "moons"], n_samples=40)
    assert [r["task"] for r in recs] == ["moons"]


def test_table_layout():
    recs = [
        {"task": "a", "method": "m", "ari_best": 0.9, "ari_free": 0.5, "error_free": 0.1, "time": 1.0,
         "param_best": 1, "param_free": 2},
    ]
    t = comparison.comparison_table(records=recs)
    assert t.headers == ["method", "a", "mean s / fit"] and t.rows == [["m", "0.50 / 0.90", 1.0]]


def test_scaling_stops_a_method_past_the_time_limit():
    times = comparison.scaling([30, 60, 90], methods=["k-means"], max_seconds=0.0)
    assert [n for n, _ in times["k-means"]] == [30]
    times = comparison.scaling([30, 60], methods=["k-means"], max_seconds=60.0)
    assert [n for n, _ in times["k-means"]] == [30, 60]
