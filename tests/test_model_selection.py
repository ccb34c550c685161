"""Label-free parameter search: API, determinism, criteria, bad input, failure modes."""

import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.mixture import GaussianMixture

from mmcedu import UMCRLS
from mmcedu.criteria import (
    is_trivial,
    kernel_silhouette,
    laplacian_eigengap,
    matched_disagreement,
    n_clusters_of,
    pair_stability,
    plateau_scores,
    silhouette,
    transfer_stability,
)
from mmcedu.kernels import gamma_grid, median_gamma
from mmcedu.metrics import permutation_mean_quadratic
from mmcedu.model_selection import LabelFreeSearch


@pytest.fixture(scope="module")
def triangle():
    """Three well-separated blobs at the corners of an equilateral triangle (k = 3)."""
    X, y = make_blobs(120, centers=[[0, 0], [6, 0], [3, 5.2]], cluster_std=0.8, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def circles():
    """The comparison's two circles: 200 samples, standardized."""
    from sklearn.preprocessing import StandardScaler

    from mmcedu.datasets import two_circles

    X, y = two_circles(200, random_state=0)
    return StandardScaler().fit_transform(X), y


# ----------------------------------------------------------------------------------------
# API
# ----------------------------------------------------------------------------------------
def test_api_and_cv_results(triangle):
    X, y = triangle
    search = LabelFreeSearch(KMeans(n_init=3), {"n_clusters": [2, 3, 4, 5]},
                             criterion="silhouette", n_resamples=3, score_on="subsamples",
                             random_state=0).fit(X)
    cv = search.cv_results_
    assert search.best_params_ == {"n_clusters": 3}
    assert search.best_index_ == 1 and search.best_score_ == cv["mean_score"][1]
    assert search.n_clusters_ == 3 and search.labels_.shape == (120,)
    assert adjusted_rand_score(y, search.labels_) > 0.95
    assert search.best_estimator_.n_clusters == 3
    for key in ("params", "param_n_clusters", "mean_score", "std_score", "rank_score",
                "split0_score", "split2_score", "mean_n_clusters", "std_n_clusters", "n_trivial",
                "mean_fit_time", "std_fit_time", "mean_score_time"):
        assert len(cv[key]) == 4, key
    assert "split3_score" not in cv
    assert isinstance(cv["param_n_clusters"], np.ma.MaskedArray)
    assert cv["rank_score"][1] == 1
    assert np.allclose(cv["mean_n_clusters"], [2, 3, 4, 5])
    # fit_predict gives labels_
    assert np.array_equal(clone(search).fit_predict(X), search.labels_)


def test_scores_on_the_full_data(triangle):
    X, _ = triangle
    search = LabelFreeSearch(KMeans(n_init=3), {"n_clusters": [2, 3, 4]},
                             criterion="silhouette", random_state=0).fit(X)
    cv = search.cv_results_
    assert search.n_splits_ == 0 and search.resample_indices_ == []
    assert "split0_score" not in cv and "n_trivial" not in cv
    assert np.all(np.isnan(cv["std_score"]))
    assert cv["full_n_clusters"].tolist() == [2, 3, 4]
    # the scored clustering is the one returned by the refit
    assert search.best_score_ == pytest.approx(silhouette(X, search.labels_))
    both = LabelFreeSearch(KMeans(n_init=3), {"n_clusters": [2, 3, 4]},
                           criterion=["stability", "silhouette"], n_resamples=3,
                           random_state=0).fit(X)
    assert "split2_score_stability" in both.cv_results_
    assert "split0_score_silhouette" not in both.cv_results_
    np.testing.assert_allclose(both.cv_results_["mean_score_silhouette"], cv["mean_score"])


def test_several_criteria_and_list_grid(triangle):
    X, _ = triangle
    grid = [{"n_clusters": [2, 3]}, {"n_clusters": [4], "init": ["random"]}]
    search = LabelFreeSearch(KMeans(n_init=2), grid, criterion=["stability", "silhouette"],
                             n_resamples=3, random_state=0, refit=False).fit(X)
    cv = search.cv_results_
    assert search.criteria_ == ["stability", "silhouette"]
    for c in ("stability", "silhouette"):
        assert {f"mean_score_{c}", f"std_score_{c}", f"rank_score_{c}"} <= set(cv)
    assert "split2_score_stability" in cv and "split0_score_silhouette" not in cv
    assert search.best_score_ == cv["mean_score_stability"][search.best_index_]
    assert cv["param_init"].mask.tolist() == [True, True, False]
    assert not hasattr(search, "labels_") and not hasattr(search, "best_estimator_")


def test_clone_and_params():
    search = LabelFreeSearch(UMCRLS(2, alpha=1.0), {"gamma": [0.1, 1.0]}, criterion="objective",
                             n_resamples=4, random_state=3)
    params = search.get_params()
    assert params["estimator__alpha"] == 1.0 and params["criterion"] == "objective"
    copy = clone(search)
    assert copy.get_params()["n_resamples"] == 4 and copy.estimator is not search.estimator
    copy.set_params(estimator__alpha=0.5, subsample=0.7)
    assert copy.estimator.alpha == 0.5 and copy.subsample == 0.7
    assert search.estimator.alpha == 1.0


@pytest.mark.parametrize("est", [
    GaussianMixture(n_init=1, random_state=0),
    AgglomerativeClustering(),
    SpectralClustering(gamma=0.5, random_state=0),
], ids=lambda e: type(e).__name__)
def test_scikit_learn_clusterers(triangle, est):
    X, _ = triangle
    name = "n_components" if isinstance(est, GaussianMixture) else "n_clusters"
    search = LabelFreeSearch(est, {name: [2, 3, 4]}, criterion="transfer_stability",
                             n_resamples=3, random_state=0).fit(X)
    assert search.best_params_ == {name: 3}
    assert search.n_clusters_ == 3


def test_noise_labels_dbscan(triangle):
    X, _ = triangle
    search = LabelFreeSearch(DBSCAN(min_samples=5), {"eps": [0.3, 0.8, 1.5]},
                             criterion=["silhouette", "stability"], n_resamples=3,
                             random_state=0).fit(X)
    assert search.best_params_ == {"eps": 1.5} and search.n_clusters_ == 3


def test_same_results_for_any_n_jobs():
    X, _ = make_blobs(80, centers=3, random_state=1)
    kw = {"criterion": ["stability", "transfer_stability", "objective", "silhouette"],
          "n_resamples": 3, "random_state": 7}
    grid = {"gamma": [0.05, 0.5], "n_clusters": [2, 3]}
    a = LabelFreeSearch(UMCRLS(alpha=0.1), grid, n_jobs=1, **kw).fit(X)
    b = LabelFreeSearch(UMCRLS(alpha=0.1), grid, n_jobs=2, **kw).fit(X)
    for key, value in a.cv_results_.items():
        if "score" in key and "time" not in key:
            np.testing.assert_array_equal(value, b.cv_results_[key], err_msg=key)
    assert np.array_equal(a.labels_, b.labels_)
    assert a.best_params_ == b.best_params_


def test_subsamples_and_seeds_shared_by_grid_points(triangle):
    X, _ = triangle
    s = LabelFreeSearch(KMeans(n_init=1), {"n_clusters": [2, 3]}, criterion="silhouette",
                        n_resamples=4, subsample=0.5, score_on="subsamples",
                        random_state=0).fit(X)
    assert len(s.resample_indices_) == 4
    assert all(idx.size == 60 for idx in s.resample_indices_)
    assert len({tuple(idx) for idx in s.resample_indices_}) == 4


# ----------------------------------------------------------------------------------------
# Criteria as functions
# ----------------------------------------------------------------------------------------
def test_trivial_labelings():
    assert n_clusters_of([0, 0, -1, 1]) == 2
    assert is_trivial([0, 0, 0]) and is_trivial([0, 1, 2]) and is_trivial([-1, -1, 0])
    assert not is_trivial([0, 0, 1])
    # naive stability scores one cluster against one cluster perfectly; ours does not
    one = np.zeros(10, dtype=int)
    assert adjusted_rand_score(one, one) == 1.0
    assert np.isnan(pair_stability(one, one))
    assert pair_stability(one, np.r_[np.zeros(5), np.ones(5)]) == 0.0
    assert np.isnan(transfer_stability(one, one))


def test_transfer_stability_normalization():
    rng = np.random.RandomState(0)
    a = np.repeat([0, 1, 2], 30)
    assert transfer_stability(a, (a + 1) % 3, random_state=0) == pytest.approx(1.0)
    assert matched_disagreement(a, (a + 1) % 3) == 0.0
    # independent random labelings: about 0 on average
    vals = [transfer_stability(a, rng.permutation(a), random_state=i) for i in range(30)]
    assert abs(np.mean(vals)) < 0.1


def test_permutation_mean_quadratic_is_exact():
    rng = np.random.RandomState(0)
    A = rng.randn(5, 5)
    v = np.array([1.0, 1.0, -1.0, 2.0, 0.5])
    brute = np.mean([v[list(p)] @ A @ v[list(p)] for p in itertools.permutations(range(5))])
    assert permutation_mean_quadratic(A, v) == pytest.approx(brute)


def test_silhouettes(triangle):
    X, y = triangle
    from sklearn.metrics import silhouette_score

    assert silhouette(X, y) == pytest.approx(silhouette_score(X, y))
    # linear kernel: the feature space is the input space
    assert kernel_silhouette(X @ X.T, y) == pytest.approx(silhouette(X, y), abs=1e-8)
    # RBF kernel: the input-space silhouette in the limit gamma -> 0
    assert kernel_silhouette(rbf_kernel(X, gamma=1e-6), y) == pytest.approx(
        silhouette(X, y), abs=1e-3)
    # noise counts 0 in the mean
    y_noise = y.copy()
    y_noise[:10] = -1
    keep = y_noise != -1
    assert silhouette(X, y_noise) == pytest.approx(
        silhouette_score(X[keep], y[keep]) * keep.mean())
    assert np.isnan(silhouette(X, np.zeros(120)))


def test_eigengap(triangle):
    X, _ = triangle
    K = rbf_kernel(X, gamma=0.5)
    gaps = [laplacian_eigengap(K, k) for k in (1, 2, 3, 4, 5)]
    assert int(np.argmax(gaps[1:])) + 2 == 3
    assert np.isnan(laplacian_eigengap(K, 0))


def test_plateau_scores():
    widths = 2.0 ** np.arange(8)
    counts = [1, 2, 2, 2, 2, 3, 3, 200]
    s = plateau_scores(widths[::-1], counts[::-1], 100)[::-1]  # order does not matter
    assert s[0] == 0 and s[-1] == 0  # trivial counts
    assert int(np.argmax(s)) in (2, 3)  # the middle of the run of 2s (widths 2..16)
    # the run of 2s spans log2 widths [0.5, 4.5]; the run of 3s [4.5, 6.5]
    assert s[2] == s[3] == pytest.approx(1.5) and s[5] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        plateau_scores([0.0, 1.0], [2, 2], 10)


def test_median_heuristic():
    X = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 4, 9
    assert median_gamma(X) == pytest.approx(1 / 8)
    assert gamma_grid(X, octaves=[0, 1]) == pytest.approx([1 / 8, 1 / 4])


# ----------------------------------------------------------------------------------------
# Each criterion picks right where it should
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("criterion", ["stability", "transfer_stability", "silhouette"])
def test_number_of_clusters_of_blobs(triangle, criterion):
    X, _ = triangle
    search = LabelFreeSearch(KMeans(n_init=3), {"n_clusters": [2, 3, 4, 5]},
                             criterion=criterion, n_resamples=4, random_state=0).fit(X)
    assert search.best_params_ == {"n_clusters": 3}


def test_eigengap_and_kernel_silhouette_pick_k(triangle):
    X, _ = triangle
    search = LabelFreeSearch(SpectralClustering(gamma=0.5, random_state=0),
                             {"n_clusters": [2, 3, 4, 5]},
                             criterion=["eigengap", "kernel_silhouette"], n_resamples=3,
                             random_state=0).fit(X)
    cv = search.cv_results_
    assert search.best_params_ == {"n_clusters": 3}
    assert int(np.argmax(cv["mean_score_kernel_silhouette"])) == 1


def test_objective_picks_width_on_circles(circles):
    X, y = circles
    search = LabelFreeSearch(UMCRLS(2, alpha=2.0**-3), {"gamma": gamma_grid(X)},
                             criterion="objective", n_resamples=3, random_state=0).fit(X)
    assert adjusted_rand_score(y, search.labels_) > 0.95


def test_plateau_picks_svc_width(circles):
    from mmcedu import SupportVectorClustering
    from mmcedu.support_vector_clustering import gamma_path

    X, y = circles
    q = [float(v) for v in gamma_path(X).gamma]
    search = LabelFreeSearch(SupportVectorClustering(), {"gamma": q}, criterion="plateau",
                             n_resamples=3, random_state=0).fit(X)
    assert search.n_clusters_ == 2
    assert adjusted_rand_score(y, search.labels_) > 0.95


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("grid, match", [
    ({}, "empty"),
    ([], "empty"),
    ({"n_clusters": []}, "empty list"),
    ({"n_clusters": 3}, "list of values"),
    ({"gamma": [0.1]}, "does not have"),
    ([{"n_clusters": [2]}, {}], "empty"),
])
def test_bad_grid(triangle, grid, match):
    X, _ = triangle
    with pytest.raises(ValueError, match=match):
        LabelFreeSearch(KMeans(), grid, criterion="silhouette").fit(X)


@pytest.mark.parametrize("kwargs, match", [
    ({"criterion": "accuracy"}, "criterion"),
    ({"criterion": []}, "empty"),
    ({"criterion": "objective"}, "objective_contrast"),
    ({"criterion": "stability", "n_resamples": 1}, "n_resamples >= 2"),
    ({"n_resamples": 0}, "n_resamples"),
    ({"subsample": 1.5}, "subsample"),
    ({"subsample": 0.01}, "at least 3"),
    ({"criterion": "plateau"}, "width parameter"),
    ({"score_on": "both"}, "score_on"),
])
def test_bad_arguments(triangle, kwargs, match):
    X, _ = triangle
    grid = {"n_clusters": [2, 3], "max_iter": [50, 100]}  # two numeric parameters, no gamma
    search = LabelFreeSearch(KMeans(n_init=1), grid, **kwargs)
    with pytest.raises(ValueError, match=match):
        search.fit(X)


def test_one_cluster_everywhere_is_an_error(triangle):
    X, _ = triangle
    search = LabelFreeSearch(DBSCAN(), {"eps": [50.0, 100.0]}, criterion="stability",
                             n_resamples=3, random_state=0)
    with pytest.raises(ValueError, match="cannot be computed at any grid point"):
        search.fit(X)


def test_trivial_grid_points_are_not_eligible(triangle):
    X, _ = triangle
    search = LabelFreeSearch(DBSCAN(), {"eps": [100.0, 1.5]}, criterion="stability",
                             n_resamples=3, random_state=0).fit(X)
    cv = search.cv_results_
    assert cv["mean_score"][0] == -np.inf and cv["n_trivial"][0] == 3
    assert search.best_params_ == {"eps": 1.5}


def test_kernel_silhouette_fallback_warns(triangle):
    X, _ = triangle
    with pytest.warns(UserWarning, match="fell back to the input space"):
        search = LabelFreeSearch(KMeans(n_init=1), {"n_clusters": [2, 3]},
                                 criterion=["kernel_silhouette", "silhouette"], n_resamples=2,
                                 random_state=0).fit(X)
    cv = search.cv_results_
    np.testing.assert_allclose(cv["mean_score_kernel_silhouette"], cv["mean_score_silhouette"])


def test_failed_fits_are_reported(triangle):
    X, _ = triangle
    with pytest.warns(Warning, match="fits failed"):
        search = LabelFreeSearch(KMeans(n_init=1), {"n_clusters": [3, 500]},
                                 criterion="silhouette", n_resamples=2, random_state=0).fit(X)
    assert search.best_params_ == {"n_clusters": 3}
    assert search.cv_results_["mean_score"][1] == -np.inf


# ----------------------------------------------------------------------------------------
# Known failure modes (the chapter shows them)
# ----------------------------------------------------------------------------------------
def test_silhouette_fails_on_circles(circles):
    """Rings are not convex: the silhouette prefers a width whose split is a straight cut."""
    X, y = circles
    search = LabelFreeSearch(UMCRLS(2, alpha=2.0**-3), {"gamma": gamma_grid(X)},
                             criterion=["silhouette", "stability"], n_resamples=3,
                             random_state=0).fit(X)
    cv = search.cv_results_
    assert adjusted_rand_score(y, search.labels_) < 0.2  # chosen by the silhouette
    chosen_by_stability = cv["params"][int(np.argmax(cv["mean_score_stability"]))]
    labels = clone(search.estimator).set_params(**chosen_by_stability, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, labels) > 0.95


def test_stability_prefers_few_clusters():
    """Two blobs 5 sigma apart and a far third: merging the near pair is the most stable."""
    X, y = make_blobs(200, centers=[[0, 0], [5, 0], [2.5, 8]], cluster_std=1.0, random_state=0)
    search = LabelFreeSearch(KMeans(n_init=5), {"n_clusters": [2, 3, 4, 5]},
                             criterion=["stability", "silhouette"], n_resamples=6,
                             random_state=0).fit(X)
    cv = search.cv_results_
    assert search.best_params_ == {"n_clusters": 2}  # chosen by stability
    assert cv["mean_score_stability"][0] == 1.0 > cv["mean_score_stability"][1] > 0.95
    assert int(np.argmax(cv["mean_score_silhouette"])) == 1  # the silhouette finds 3
    assert adjusted_rand_score(y, search.labels_) < 0.6


def test_tolerance_hands_near_ties_to_the_second_criterion(triangle):
    from mmcedu.model_selection import _best_index

    means = np.array([0.90, 0.97, 0.95, -np.inf])
    second = np.array([0.9, 0.1, 0.5, 1.0])
    k = np.array([2, 2, 2, 2])
    assert _best_index(means, k) == 1
    assert _best_index(means, k, tolerance=0.05, second=second) == 2
    assert _best_index(means, k, tolerance=0.1, second=second) == 0
    assert _best_index(np.array([1.0, 1.0]), np.array([2, 3])) == 1  # ties: more clusters
    X, _ = triangle
    with pytest.raises(ValueError, match="tolerance"):
        LabelFreeSearch(KMeans(), {"n_clusters": [2]}, criterion="silhouette",
                        tolerance=-1).fit(X)


def test_scikit_learn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    est = LabelFreeSearch(KMeans(n_init=1, random_state=0), {"n_clusters": [2, 3]},
                          criterion="silhouette", random_state=0)
    failed = [r["check_name"] for r in check_estimator(est, on_fail=None)
              if r["status"] == "failed"]
    assert failed == []


def test_every_fit_failing_raises_the_fit_error(triangle):
    X, _ = triangle
    with pytest.raises(ValueError, match="n_samples=96 should be >= n_clusters=500"):
        LabelFreeSearch(KMeans(), {"n_clusters": [500]}, criterion="stability",
                        n_resamples=2, random_state=0).fit(X)


def test_large_data_chooses_on_a_bounded_sample_and_fits_all_the_data_once():
    X, y = make_blobs(2600, centers=3, random_state=0)
    search = LabelFreeSearch(KMeans(n_init=2, random_state=0), {"n_clusters": [2, 3, 4]},
                             criterion="silhouette", random_state=0).fit(X)  # max_samples="auto"
    assert search.sample_indices_.shape == (1, 2000) and len(np.unique(search.sample_indices_)) == 2000
    assert search.labels_.shape == (2600,) and search.best_params_ == {"n_clusters": 3}
    # the choice is the search's on those rows alone
    alone = LabelFreeSearch(KMeans(n_init=2, random_state=0), {"n_clusters": [2, 3, 4]},
                            criterion="silhouette", random_state=0).fit(X[search.sample_indices_[0]])
    assert alone.sample_indices_ is None
    np.testing.assert_array_equal(alone.cv_results_["mean_score"], search.cv_results_["mean_score"])
    small = LabelFreeSearch(KMeans(n_init=2, random_state=0), {"n_clusters": [2, 3]},
                            criterion="silhouette", max_samples=300, random_state=0).fit(X[:1000])
    assert small.sample_indices_.shape == (3, 300) and small.labels_.shape == (1000,)
    assert len(np.unique(small.sample_indices_)) == 900  # disjoint: n // 300 = 3 samples
    everything = LabelFreeSearch(KMeans(n_init=2), {"n_clusters": [2, 3]}, criterion="silhouette",
                                 max_samples=None, random_state=0).fit(X[:2100])
    assert everything.sample_indices_ is None


def test_an_estimator_states_the_size_of_its_choice_samples():
    """SDP MMC's rule fits every width on ten subsamples: it chooses on samples of 500."""
    from mmcedu import SDPMMC

    X, _ = make_blobs(1200, centers=2, random_state=0)
    search = LabelFreeSearch(SDPMMC(n_components=20, random_state=0), {"gamma": [0.1]},
                             criterion="silhouette", refit=False, random_state=0).fit(X)
    assert SDPMMC._label_free_max_samples == 500 and search.sample_indices_.shape == (2, 500)
    kmeans = LabelFreeSearch(KMeans(n_init=1), {"n_clusters": [2]}, criterion="silhouette",
                             refit=False, random_state=0).fit(X)
    assert kmeans.sample_indices_ is None  # no stated size: 2,000


def test_several_choice_samples_pool_their_scores():
    X, _ = make_blobs(1000, centers=3, random_state=0)
    grid = {"n_clusters": [2, 3, 4]}

    def search(**kw):
        return LabelFreeSearch(KMeans(n_init=1, random_state=0), grid, criterion="silhouette",
                               random_state=0, **kw)

    pooled = search(max_samples=300, n_choice_samples=3).fit(X)
    rows = pooled.sample_indices_
    assert rows.shape == (3, 300) and pooled.n_choice_samples_ == 3
    assert len(np.unique(rows)) == 900  # 3 * 300 <= 1000: disjoint
    # each choice sample is scored as a search on it alone; the scores are pooled
    alone = [search(max_samples=None).fit(X[r]).cv_results_["mean_score"] for r in rows]
    np.testing.assert_allclose(pooled.cv_results_["mean_score"], np.mean(alone, axis=0))
    np.testing.assert_allclose(pooled.cv_results_["std_score"], np.std(alone, axis=0))
    assert pooled.best_params_ == {"n_clusters": 3} and pooled.labels_.shape == (1000,)
    # more samples than fit disjointly: drawn independently
    overlap = search(max_samples=300, n_choice_samples=4, refit=False).fit(X)
    assert overlap.sample_indices_.shape == (4, 300)
    assert all(len(np.unique(r)) == 300 for r in overlap.sample_indices_)
    # "auto": min(5, n // max_samples) samples; one sample up to twice max_samples
    assert search(max_samples=300, refit=False).fit(X).n_choice_samples_ == 3
    assert search(max_samples=600, refit=False).fit(X).n_choice_samples_ == 1
    assert search(max_samples=100, refit=False).fit(X).n_choice_samples_ == 5
    everything = search(max_samples=None, n_choice_samples=4, refit=False).fit(X)
    assert everything.sample_indices_ is None and everything.n_choice_samples_ == 1
    with pytest.raises(ValueError, match="n_choice_samples"):
        search(n_choice_samples=0).fit(X)


def test_the_choice_on_one_distribution_does_not_depend_on_n():
    """Same distribution, n = 5,000 and 50,000: the same grid point at every seed."""
    centers = [[0, 0], [2.6, 0], [8, 0], [4, 7]]  # two touching blobs: k = 3 or 4 compete
    choices = {}
    for n in (5000, 50000):
        X, _ = make_blobs(n, centers=centers, cluster_std=1.0, random_state=0)
        choices[n] = [
            LabelFreeSearch(KMeans(n_init=1, random_state=0), {"n_clusters": [2, 3, 4, 5]},
                            criterion="silhouette", max_samples=300, refit=False,
                            random_state=seed).fit(X).best_index_
            for seed in range(4)
        ]
    assert choices[5000] == choices[50000] == [1, 1, 1, 1]
