"""The common comparison protocol (mmcedu_lab.comparison)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import DBSCAN

from mmcedu import LabelFreeSearch
from mmcedu.metrics import adjusted_rand_score
from mmcedu_lab import comparison


def test_tasks_are_sized_standardized_and_labelled():
    for name, n, k in [("wine", 178, 3), ("iris", 150, 3), ("breast cancer", 200, 2),
                       ("digits 1 vs 7", 200, 2), ("moons", 200, 2), ("digits 1-4", 200, 4)]:
        X, y, kk = comparison.load_task(name, 1)
        assert X.shape[0] == len(y) == n and kk == k == np.unique(y).size, name
        assert np.allclose(X.mean(0), 0, atol=1e-10) and np.allclose(X.std(0), 1), name
    # breast cancer: a stratified subsample (212:357 kept), another one for another seed
    X0, y0, _ = comparison.load_task("breast cancer", 0)
    X1, _, _ = comparison.load_task("breast cancer", 1)
    assert np.bincount(y0).tolist() == [75, 125] and not np.allclose(X0, X1)
    with pytest.raises(ValueError, match="Unknown task 'bogus'"):
        comparison.load_task("bogus")


def test_every_method_has_a_budget_of_at_most_g_points_and_a_rule():
    X, y, k = comparison.load_task("moons", 0)
    rules = comparison.rules(X, k)
    for m, spec in comparison.METHODS.items():
        est, grid, criterion, tolerance = spec.setup(X, k, 0)
        if grid is None:
            assert criterion is None and rules[m] == "none (default settings, one fit)", m
            continue
        (values,) = grid.values()
        assert len(values) == comparison.GRID_SIZE, m
        assert criterion and rules[m].startswith(" > ".join(criterion)), m
        if spec.mmcedu:  # the rule is the estimator's own
            assert grid == est.label_free_rule(X)["param_grid"], m
    assert rules["UMC-RLS"] == "transfer_stability > objective @ 0.1, over 8 values of gamma"
    assert set(comparison.MMCEDU) == {"UMC-RLS", "EMMC", "SVC (cone)", "ensemble", "GMMC", "SDP MMC"}


def test_records_hold_the_label_free_choice_and_the_best_grid_point():
    recs = comparison.run_comparison(methods=["k-means", "UMC-RLS"], tasks=["two circles"],
                                     n_samples=60, seeds=[0, 1])
    assert [(r["method"], r["seed"]) for r in recs] == [("k-means", 0), ("k-means", 1),
                                                        ("UMC-RLS", 0), ("UMC-RLS", 1)]
    km, sp = recs[0], recs[2]
    assert km["ari_best"] == km["ari_free"] and km["param_free"] == {}  # one fit, no choice
    X, y, k = comparison.load_task("two circles", 0, 60)
    est, grid, _, _ = comparison.METHODS["UMC-RLS"].setup(X, k, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the best grid point: the highest ARI of fits to all the data, recomputed here
        aris = [adjusted_rand_score(y, clone(est).set_params(gamma=g).fit(X).labels_) for g in grid["gamma"]]
        # the label-free choice: LabelFreeSearch with the estimator's own rule, refitted
        search = LabelFreeSearch(est, n_resamples=3, random_state=0).fit(X)
    assert sp["ari_best"] == pytest.approx(max(aris))
    assert sp["param_free"] == search.best_params_
    assert sp["ari_free"] == pytest.approx(adjusted_rand_score(y, search.labels_))
    assert sp["ari_free"] <= sp["ari_best"] + 1e-12


def test_a_search_that_refuses_to_choose_is_recorded_as_one_cluster(monkeypatch):
    spec = comparison.Method(lambda X, k, s: DBSCAN(), lambda X: {"eps": [50.0, 100.0]},
                             ("silhouette",))  # one cluster everywhere
    monkeypatch.setitem(comparison.METHODS, "DBSCAN", spec)
    (rec,) = comparison.run_comparison(methods=["DBSCAN"], tasks=["moons"], n_samples=40, seeds=[0])
    assert rec["refused"] and rec["ari_free"] == 0.0 and rec["k_free"] == 1 and rec["param_free"] is None
    assert rec["ari_best"] == pytest.approx(0.0)


def test_binary_only_methods_skip_multiclass_tasks():
    recs = comparison.run_comparison(methods=["GMMC"], tasks=["iris", "moons"], n_samples=40, seeds=[0])
    assert [r["task"] for r in recs] == ["moons"]


def test_quick_protocol_has_five_seeds_and_no_slow_methods():
    assert comparison.N_SEEDS >= 5 and comparison.N >= 200
    quick = [m for m, spec in comparison.METHODS.items() if spec.quick]
    assert "SDP MMC" not in quick and "GMMC" in quick and "UMC-RLS" in quick
    # GMMC is in the quick protocol with its iteration cap (the near-disconnected widths)
    X = np.random.default_rng(0).normal(size=(20, 2))
    est, grid, _, _ = comparison.METHODS["GMMC"].setup(X, 2, 0)
    assert est.max_iter == comparison.GMMC_MAX_ITER < 5000 and len(grid["gamma"]) == comparison.GRID_SIZE
    assert set(comparison.TASKS_QUICK) <= set(comparison.TASKS)
    assert {"iris", "wine", "breast cancer"} <= set(comparison.TASKS_QUICK) & set(comparison.REAL)


def test_baselines_run_once_at_their_documented_defaults():
    """No baseline is tuned by a rule (no silhouette-tuned density clustering, no eigengap over
    widths); each gets its default settings and the true k where it takes one."""
    from sklearn.cluster import HDBSCAN, SpectralClustering
    from sklearn.mixture import GaussianMixture

    X, _, k = comparison.load_task("iris", 0)
    assert set(comparison.BASELINES) == {"k-means", "GMM", "Ward", "single linkage",
                                         "spectral (nn)", "Genie", "HDBSCAN"}
    for m in comparison.BASELINES:
        est, grid, criterion, tol = comparison.METHODS[m].setup(X, k, 0)
        assert grid is None and criterion is None and tol == 0.0, m
    est = {m: comparison.METHODS[m].setup(X, k, 0)[0] for m in comparison.BASELINES}
    assert isinstance(est["GMM"], GaussianMixture) and est["GMM"].covariance_type == "full"
    assert est["GMM"].n_init >= 10 and est["GMM"].n_components == k
    assert isinstance(est["spectral (nn)"], SpectralClustering)
    assert est["spectral (nn)"].affinity == "nearest_neighbors" and est["spectral (nn)"].n_clusters == k
    assert est["spectral (nn)"].n_neighbors == SpectralClustering().n_neighbors  # the default
    genie = type(est["Genie"])  # genieclust.Genie (a dependency of the laboratory, not of the tests)
    assert genie.__module__.startswith("genieclust") and est["Genie"].n_clusters == k
    assert est["Genie"].gini_threshold == genie().gini_threshold
    assert est["HDBSCAN"].get_params() == HDBSCAN().get_params()
    assert est["k-means"].n_clusters == est["Ward"].n_clusters == k


def test_development_and_held_out_tasks_are_apart():
    """A rule is judged only on tasks it was not chosen on: the held-out tasks are none of the
    label-free study's eleven development tasks nor the ten tasks of GMMC's guard study."""
    dev, held = set(comparison.DEVELOPMENT), set(comparison.HELDOUT)
    assert not dev & held and set(comparison.TASKS) <= dev | held
    assert set(comparison.TASKS_QUICK) & held == {"digits 2 vs 7", "digits 8 vs 9", "two spirals"}
    guard_study = {"digits 0 vs 6", "digits 4 vs 9", "digits 5 vs 9", "digits 2 vs 3",
                   "moons (noise 0.15)", "circles (factor 0.4, noise 0.07)"}
    assert not held & guard_study
    for t in held:
        X, y, k = comparison.load_task(t, 3)
        assert len(y) == (comparison.N if t != "iris" else 150) and np.unique(y).size == k
        assert np.allclose(X.mean(0), 0, atol=1e-10)
    X, y = comparison.two_spirals(100, random_state=1)
    assert X.shape == (100, 2) and np.bincount(y).tolist() == [50, 50]
    # the second spiral is the first turned by 180 degrees, up to the noise
    Xq, _ = comparison.two_spirals(100, noise=0.0, random_state=1)
    assert np.allclose(Xq[:50], -Xq[50:])


def test_summary_and_table_layout():
    recs = [
        {"task": "a", "method": "m", "seed": s, "ari_best": 0.9, "ari_free": v, "time": 1.0}
        for s, v in enumerate([0.4, 0.6])
    ]
    summ = comparison.summarize(recs)
    assert summ["a", "m"]["free"] == pytest.approx((0.5, 0.1)) and summ["a", "m"]["n_seeds"] == 2
    t = comparison.comparison(records=recs)
    assert t.headers == ["method", "a"] and t.rows == [["m", "0.50 ± 0.10 (0.90)"]]


def test_scaling_stops_a_method_past_the_time_limit():
    runs = comparison.scaling([30, 60, 90], methods=["k-means"], max_seconds=0.0)
    assert [(r["n"], r["skipped"]) for r in runs] == [(30, False), (60, True), (90, True)]
    runs = comparison.scaling([30, 60], methods=["k-means", "UMC-RLS"], max_seconds=60.0)
    assert [r["n"] for r in runs if not r["skipped"]] == [30, 30, 60, 60]
    assert all(r["seconds"] > 0 for r in runs)


def test_records_do_not_depend_on_the_number_of_jobs():
    kw = dict(methods=["k-means", "EMMC", "UMC-RLS"], tasks=["moons", "two circles"], n_samples=40,
              seeds=[0, 1])
    one = comparison.run_comparison(**kw, n_jobs=1)
    two = comparison.run_comparison(**kw, n_jobs=2)
    drop = lambda recs: [{k: v for k, v in r.items() if k != "time"} for r in recs]  # noqa: E731
    assert drop(one) == drop(two) and len(one) == 12


def test_unknown_methods_and_tasks_are_named():
    with pytest.raises(ValueError, match=r"Unknown method\(s\) \['bogus'\]; choose from \['k-means'"):
        comparison.run_comparison(methods=["bogus"], tasks=["moons"], n_samples=20)
    with pytest.raises(ValueError, match=r"Unknown task\(s\) \['bogus'\]"):
        comparison.run_comparison(methods=["k-means"], tasks=["bogus"], n_samples=20)


def test_capped_scored_counts_scored_fits_that_reach_max_iter():
    """The records count the fits to all the data that ran to max_iter at a scored grid point."""
    X, _, k = comparison.load_task("moons", 0, 60)
    est, grid, _, _ = comparison.METHODS["GMMC"].setup(X, k, 0)
    grid = {"gamma": grid["gamma"][:3]}
    for cap, expect_all in ((1, True), (5000, False)):
        est.set_params(max_iter=cap)
        search = comparison._Search(est, grid, criterion=["objective"], n_resamples=1,
                                    random_state=0, refit=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X)
        scored = int(np.isfinite(search.cv_results_["mean_score"]).sum())
        assert search.full_n_iter_ == [cap] * 3 if expect_all else max(search.full_n_iter_) < cap
        assert scored > 0 and comparison._capped_scored(search, est) == (scored if expect_all else 0)
