"""EMMC under bad input, edge cases and limits: every result is right, warned about, or a clear error.

Categories: bad data, bad parameters, huge / tiny scales, degenerate data, defaults on
standardized real data, solver limits and memory guards. Each test states the outcome it
accepts; "right" is checked against the known clusters of two compact, far-apart blobs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from _bad_input import found, right_warned_or_clear
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import mmcedu
from mmcedu import EMMC, datasets, metrics
from mmcedu.datasets import blobs, two_gaussians
from mmcedu.emmc import ELMRidge
from mmcedu.exceptions import (
    BalanceWarning,
    DegenerateDataWarning,
    KMeansStartWarning,
    MemoryBudgetError,
)

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)  # two compact, far-apart blobs

MAKERS = {
    "single": lambda: EMMC(random_state=0),
    "multi": lambda: EMMC(2, output="multi", random_state=0),
    "local search": lambda: EMMC(local_search=True, random_state=0),
}


# ============================================================================ bad data
@pytest.mark.parametrize(
    "data, word",
    [
        (np.r_[X[:-1], [[np.nan, 0.0]]], "NaN"),
        (np.r_[X[:-1], [[np.inf, 0.0]]], "infinity"),
        (np.r_[X[:-1], [[-np.inf, 0.0]]], "infinity"),
        (np.empty((0, 2)), "0 sample"),
        (X[:, 0], "2D|2-D|1D|1-D"),
        (X[:, :, None], "dim"),
        (np.zeros((20, 0)), "0 feature"),
        (X[:1], "too few|sample"),
        (X.astype(complex), "Complex"),
        (np.array([["a", "b"]] * 20), "convert|string|float"),
    ],
    ids=["nan", "inf", "-inf", "empty", "1-D", "3-D", "no features", "one sample", "complex",
         "strings"],
)
def test_bad_data_is_refused_clearly(data, word):
    with pytest.raises(ValueError, match=word):
        EMMC(random_state=0).fit(data)


def test_sparse_input_is_refused_clearly():
    with pytest.raises(TypeError, match="[Ss]parse"):
        EMMC(random_state=0).fit(sparse.csr_matrix(X))


def test_fewer_samples_than_clusters():
    with pytest.raises(ValueError, match="too few for n_clusters=5"):
        EMMC(5, random_state=0).fit(X[:4])


@pytest.mark.parametrize(
    "convert",
    [
        lambda a: a.astype(np.float32),
        lambda a: np.round(a * 10).astype(int),
        lambda a: a.tolist(),
        lambda a: np.asfortranarray(a),
        lambda a: np.repeat(a, 2, axis=1)[:, ::2],
        lambda a: a.astype(object),
    ],
    ids=["float32", "int", "list", "fortran", "strided view", "object numbers"],
)
def test_unusual_but_valid_data_is_clustered(convert):
    assert found(EMMC(random_state=0).fit(convert(X)), Y)


def test_duplicated_rows_are_clustered():
    m = EMMC(random_state=0).fit(np.r_[X, X])
    assert found(m, np.r_[Y, Y])


def test_predict_checks_its_input():
    m = EMMC(random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.ones((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        m.predict(np.full((3, 2), np.nan))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        EMMC().predict(X)


# ============================================================================ bad parameters
@pytest.mark.parametrize(
    "params, name",
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 2.0}, "n_clusters"),
        ({"n_clusters": True}, "n_clusters"),
        ({"n_clusters": np.True_}, "n_clusters"),
        ({"n_hidden": 0}, "n_hidden"),
        ({"n_hidden": 2.5}, "n_hidden"),
        ({"C": 0.0}, "C"),
        ({"C": -1.0}, "C"),
        ({"C": float("nan")}, "C"),
        ({"activation": "softmax"}, "activation"),
        ({"balance": -0.1}, "balance"),
        ({"balance": 1.5}, "balance"),
        ({"balance": float("nan")}, "balance"),
        ({"init": "k-means++"}, "init"),
        ({"output": "both"}, "output"),
        ({"local_search": "yes"}, "local_search"),
        ({"n_init": 0}, "n_init"),
        ({"max_iter": 0}, "max_iter"),
        ({"random_state": "seed"}, "random_state"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises((ValueError, TypeError), match=name):
        EMMC(**params).fit(X)


@pytest.mark.parametrize(
    "make, word",
    [
        (lambda: EMMC(init=np.zeros(5, int)).fit(X), "init labels must have shape"),
        (lambda: EMMC(init=np.arange(20)).fit(X), "distinct labels"),
        (lambda: EMMC(balance=0.0).fit(np.r_[X, [[0.0, 0.0]]]), "odd number of samples"),
        (lambda: EMMC(3, balance=0.0).fit(X), "cannot be met"),
        (lambda: ELMRidge(np.ones((3, 2)), 0.0), "C must be positive"),
    ],
)
def test_infeasible_requests_are_clear_errors(make, word):
    with pytest.raises(ValueError, match=word):
        make()


@pytest.mark.parametrize(
    "params",
    [
        {"n_clusters": 1},
        {"n_hidden": 50},  # more hidden nodes than samples: the dual form
        {"C": 1e-12},
        {"C": 1e12},
        {"init": np.zeros(20, int)},  # one initial cluster
        {"init": np.where(Y == 1, "b", "a")},  # string labels
        {"init": "random", "n_init": 3},
        {"balance": 1.0},
    ],
    ids=lambda p: ",".join(f"{k}={v if np.isscalar(v) else 'array'}" for k, v in p.items()),
)
def test_unusual_but_valid_parameters(params):
    m = EMMC(random_state=0, **params).fit(X)
    if params.get("n_clusters") == 1:
        assert m.n_clusters_ == 1 and set(m.labels_) == {0}
    else:
        assert found(m, Y)
        assert m.n_clusters_ == 2
    if "n_hidden" in params:
        assert m.form_ == "dual"


# ============================================================================ scales
@pytest.mark.parametrize("key", list(MAKERS))
@pytest.mark.parametrize("scale", [1e154, 1e300, 1e-150])
def test_extreme_scales_are_clear_errors(key, scale):
    """Squared distances (k-means' start) overflow or underflow: say so, say standardize."""
    with pytest.raises(ValueError, match=r"overflow|underflow") as info:
        MAKERS[key]().fit(X * scale)
    assert "Standardize" in str(info.value)


@pytest.mark.parametrize("key", list(MAKERS))
@pytest.mark.parametrize("transform", ["x1e-8", "x1e-4", "+1e4", "+1e8"])
def test_saturated_hidden_layer_is_warned(key, transform):
    """The random layer expects standardized data: a nearly constant layer is named."""
    data = {"x1e-8": X * 1e-8, "x1e-4": X * 1e-4, "+1e4": X + 1e4, "+1e8": X + 1e8}[transform]
    with pytest.warns(DegenerateDataWarning, match="nearly constant.*Standardize X"):
        MAKERS[key]().fit(data)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu"])
@pytest.mark.parametrize("transform", ["x1e-2", "x1e2", "x1e4", "+1e2"])
def test_moderate_scales_are_right_or_warned(activation, transform):
    data = {"x1e-2": X * 1e-2, "x1e2": X * 1e2, "x1e4": X * 1e4, "+1e2": X + 1e2}[transform]
    right_warned_or_clear(
        EMMC(activation=activation, random_state=0), data, lambda m: found(m, Y),
        warn=r"standardi|constant", error=r"standardi",
    )


@pytest.mark.parametrize("transform", ["x1e8", "+1e8"])
def test_relu_on_huge_outputs_is_a_clear_error(transform):
    """The Cholesky factorization fails in floating point: a ValueError saying why."""
    data = X * 1e8 if transform == "x1e8" else X + 1e8
    with pytest.raises(ValueError, match=r"not positive definite.*hidden outputs up to.*Standardize X"):
        EMMC(activation="relu", random_state=0).fit(data)


def test_real_data_does_not_trigger_the_saturation_warning():
    for raw in (datasets.iris()[0], datasets.digits()[0], datasets.digits(scale=True)[0]):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DegenerateDataWarning)
            EMMC(3, random_state=0, max_iter=3, local_search=False).fit(raw)


# ============================================================================ degenerate data
@pytest.mark.parametrize("key", list(MAKERS))
def test_identical_points_form_one_cluster_with_a_warning(key):
    est = MAKERS[key]()
    with pytest.warns(DegenerateDataWarning, match="All 20 samples are identical"):
        est.fit(np.ones((20, 2)))
    assert est.n_clusters_ == 1 and set(est.labels_) == {0}
    assert est.n_iter_ == 0
    np.testing.assert_array_equal(est.predict(np.ones((3, 2))), 0)


def test_identical_points_with_more_clusters():
    est = EMMC(3, random_state=0)
    with pytest.warns(DegenerateDataWarning, match="identical"):
        est.fit(np.full((12, 4), 7.0))
    assert est.n_clusters_ == 1


def test_nearly_identical_points_are_not_called_identical():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        m = EMMC(random_state=0).fit(X + 1e-12 * np.random.default_rng(0).standard_normal(X.shape))
    assert found(m, Y)


@pytest.mark.parametrize("key", list(MAKERS))
def test_binding_balance_constraint_is_warned(key):
    """38 + 2 far-apart points: the balance bound forces a split of the big blob."""
    rs = np.random.RandomState(0)
    data = np.r_[rs.randn(38, 2) * 0.3, [[20, 0], [20.1, 0]]]
    est = MAKERS[key]()
    with pytest.warns(BalanceWarning, match=r"balance constraint.*decided.*raise balance"):
        est.fit(data)
    assert est.balance_decided_ >= 16  # the pair's cluster needs 16 more members (box [18, 22])
    # with a bound that allows it the two far points form their own cluster
    est.set_params(balance=0.95)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BalanceWarning)
        est.fit(data)
    assert found(est, np.r_[np.zeros(38, int), [1, 1]])


def test_balanced_blobs_give_no_balance_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = EMMC(random_state=0).fit(X)
    assert m.balance_decided_ == 0


@pytest.mark.parametrize("key", ["single", "local search"])
def test_three_blobs_with_the_default_output(key):
    """One output regressing the ids 1..3 used to lose to its own k-means start."""
    Xb, yb = blobs(60, centers=3, cluster_std=0.5, random_state=0)
    est = MAKERS[key]().set_params(n_clusters=3).fit(Xb)
    assert est.output_ == "multi"
    assert found(est, yb)


def test_explicit_single_output_for_three_clusters_is_still_available():
    Xb, _ = blobs(60, centers=3, cluster_std=0.5, random_state=0)
    est = EMMC(3, output="single", random_state=0).fit(Xb)
    assert est.output_ == "single" and est.beta_.ndim == 1


# ============================================================================ defaults vs k-means
def _std(X_, y_):
    return StandardScaler().fit_transform(X_), y_


@pytest.mark.parametrize(
    "data",
    [
        lambda: _std(*datasets.digits((3, 8), 30, random_state=0)),
        lambda: _std(*two_gaussians(60, distance=4.0, random_state=0)),
        lambda: _std(*datasets.iris()),
        lambda: _std(*datasets.digits((1, 2, 3, 4), 40, random_state=0)),
    ],
    ids=["digits 3-8", "two_gaussians", "iris", "digits 1-4"],
)
def test_defaults_are_as_sensible_as_kmeans_or_warned(data):
    Xr, yr = data()
    k = np.unique(yr).size
    km = metrics.clustering_error(yr, KMeans(k, n_init=10, random_state=0).fit_predict(Xr))
    right_warned_or_clear(
        EMMC(k, random_state=0), Xr, lambda m: metrics.clustering_error(yr, m.labels_) <= km + 0.05,
        warn=r"balance|output",
    )


def test_unbalanced_real_data_is_warned_about_the_balance():
    """Breast cancer (212 / 357): k-means' start lies outside the default balance box."""
    from sklearn.datasets import load_breast_cancer

    Xr, _ = _std(*load_breast_cancer(return_X_y=True))
    with pytest.warns(BalanceWarning, match=r"initial labels had cluster sizes"):
        m = EMMC(random_state=0).fit(Xr)
    assert m.balance_decided_ > 0.05 * Xr.shape[0]


def _unbalanced_blobs():
    """40 / 120 points: k-means finds them, the default balance box (|N_1 - N_2| <= 16) cannot."""
    from sklearn.datasets import make_blobs

    return _std(*make_blobs([40, 120], 2, cluster_std=2.5, random_state=10))


def test_leaving_the_kmeans_start_for_less_compact_clusters_is_warned():
    """The fit relabels > 5 % of its k-means start into clusters with a larger within-cluster
    sum of squares: KMeansStartWarning, and init_labels_ hold the k-means labels it names."""
    Xu, yu = _unbalanced_blobs()
    with pytest.warns(KMeansStartWarning, match=r"init_labels_"):
        m = EMMC(random_state=0).fit(Xu)
    assert m.start_moved_ == np.count_nonzero(m.labels_ != m.init_labels_) > 0.05 * len(yu)
    assert m.inertia_ratio_ > 1.0
    km = KMeans(2, n_init=10, random_state=0).fit(Xu)
    wss = [sum(((Xu[lab == c] - Xu[lab == c].mean(0)) ** 2).sum() for c in (0, 1))
           for lab in (m.labels_, m.init_labels_)]
    assert np.isclose(m.inertia_ratio_, wss[0] / wss[1])
    assert np.isclose(wss[1], km.inertia_)  # the start is k-means' own optimum
    assert metrics.clustering_error(yu, m.init_labels_) < metrics.clustering_error(yu, m.labels_)
    assert metrics.clustering_error(yu, km.labels_) < metrics.clustering_error(yu, m.labels_)


def test_keeping_the_kmeans_start_is_not_warned():
    Xu, _ = _unbalanced_blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("error", KMeansStartWarning)
        m = EMMC(balance=1.0, random_state=0).fit(Xu)  # no box: only a few samples move
        EMMC(random_state=0).fit(X)  # compact, far-apart, balanced blobs
        r = EMMC(init="random", random_state=0).fit(Xu)  # no k-means start to compare with
    assert m.start_moved_ <= 0.05 * Xu.shape[0]
    assert r.start_moved_ > 0.05 * Xu.shape[0]  # many moved, but the start was not k-means


# ============================================================================ solver limits
def test_alternation_limit_is_warned():
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        EMMC(max_iter=1, init="random", random_state=0).fit(X)


def test_local_search_budget_is_part_of_the_warning():
    Xd, _ = datasets.digits((1, 2, 3, 4), 30, scale=True, random_state=0)
    with pytest.warns(ConvergenceWarning, match="local search"):
        EMMC(4, max_iter=1, init="random", local_search=True, random_state=0).fit(Xd)


def test_documented_properties_hold():
    e = EMMC(init="random", random_state=0, C=0.5).fit(two_gaussians(60, distance=2.0, random_state=0)[0])
    assert np.all(np.diff(e.objective_path_) <= 1e-9 * max(1.0, abs(e.objective_path_[0])))
    lo, hi = e.count_bounds_
    counts = np.bincount(e.labels_, minlength=2)
    assert lo <= counts.min() and counts.max() <= hi and abs(counts[0] - counts[1]) <= e.l_


# ============================================================================ memory guards
def _run_limited(code, *, gb=2.0, timeout=300):
    pre = f"import resource; lim = int({gb!r} * 2**30); resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", pre + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_memory_budget_is_checked_before_kmeans(monkeypatch):
    def reached(*args, **kwargs):
        raise AssertionError("k-means ran before the memory check")

    monkeypatch.setattr(KMeans, "fit", reached)
    with mmcedu.config_context(memory_budget="100KB"):
        with pytest.raises(MemoryBudgetError, match=r"n_hidden.*memory budget|memory budget") as info:
            EMMC(random_state=0).fit(np.random.default_rng(0).standard_normal((500, 2)))
    assert "Decrease n_hidden" in str(info.value)


def test_dense_dual_system_is_refused_before_allocating():
    """n_hidden > n_samples: the dual n x n system (and the local search's R) at n = 40,000."""
    rc, _, err = _run_limited("""
        import numpy as np
        from mmcedu import EMMC
        EMMC(n_hidden=40001, random_state=0).fit(np.random.RandomState(0).randn(40000, 2))
    """, timeout=120)
    assert rc != 0 and "MemoryBudgetError" in err and "Unable to allocate" not in err, err[-600:]
    assert "n_hidden" in err


def test_memory_bytes_formula():
    n, d, L, m = 1000, 8, 50, 3
    est = EMMC(m, n_hidden=L, local_search=True)
    assert est.memory_bytes(n, d) == (
        16 * n * d + 24 * n * L + 8 * L * L + 8 * n * (2 * m + m) + 24 * n * m + 48 * n + 8 * n * L
    )
    assert est.memory_bytes(n) == est.memory_bytes(n, 0)  # unfitted: the data are not counted
    # one output for two clusters (output="auto"); the dual form's local search stores R (n x n)
    two = EMMC(n_hidden=500, local_search=True)
    single = EMMC(n_hidden=500, output="single", local_search=True)
    assert two.memory_bytes(100, 2) == single.memory_bytes(100, 2)
    plain = EMMC(n_hidden=500, local_search=False)
    assert two.memory_bytes(100, 2) - plain.memory_bytes(100, 2) == 16 * 100 * 100
    fitted = EMMC(random_state=0).fit(X)
    assert fitted.memory_bytes(50) == fitted.memory_bytes(50, X.shape[1])


def test_memory_budget_is_checked_against_memory_bytes():
    est = EMMC(random_state=0)
    need = est.memory_bytes(*X.shape)
    with mmcedu.config_context(memory_budget=need - 1):
        with pytest.raises(MemoryBudgetError):
            est.fit(X)
    with mmcedu.config_context(memory_budget=need):
        est.fit(X)


@pytest.mark.slow
def test_many_samples_many_clusters_run_in_little_memory():
    """The balanced label step for > 2 clusters is O(n m) memory (it used to need
    (n + 1) x (balance n + 1) arrays, ~39 GiB at n = 100,000)."""
    rc, out, err = _run_limited("""
        import numpy as np
        from mmcedu import EMMC
        X = np.random.RandomState(0).randn(100000, 2)
        m = EMMC(3, n_hidden=20, output="single", random_state=0, max_iter=5).fit(X)
        print(np.bincount(m.labels_).tolist(), m.count_bounds_)
    """, gb=2.0, timeout=900)
    assert rc == 0, err[-800:]
    sizes = eval(out.strip().splitlines()[-1].split("] ")[0] + "]")
    assert len(sizes) == 3
