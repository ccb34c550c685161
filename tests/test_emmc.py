"""Tests of EMMC (maximum margin clustering with an extreme learning machine)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.linear_model import Ridge

from mmcedu import EMMC, datasets
from mmcedu.balance import balanced_assignment, count_bounds, ordered_balanced_assignment
from mmcedu.emmc import ELMRidge, assign_labels, elm_objective, hidden_layer
from mmcedu.metrics import clustering_error

# ---------------------------------------------------------------- ridge output weights


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 30),
    L=st.integers(1, 40),
    m=st.integers(1, 3),
    logC=st.floats(-3, 2),
    seed=st.integers(0, 10_000),
)
def test_primal_equals_dual_equals_sklearn_ridge(n, L, m, logC, seed):
    rng = np.random.default_rng(seed)
    H = rng.uniform(0, 1, size=(n, L))
    T = rng.standard_normal((n, m))
    C = 10.0**logC
    b_primal = ELMRidge(H, C, form="primal").solve(T)
    b_dual = ELMRidge(H, C, form="dual").solve(T)
    # sklearn Ridge minimises ||T - H beta||^2 + alpha ||beta||^2: alpha = 1 / C
    b_sk = Ridge(alpha=1.0 / C, fit_intercept=False, solver="svd").fit(H, T).coef_.T
    b_sk = b_sk.reshape(b_primal.shape)  # sklearn drops the axis of a one-column T
    scale = 1.0 + np.abs(b_sk).max()
    np.testing.assert_allclose(b_primal, b_sk, atol=1e-7 * scale)
    np.testing.assert_allclose(b_dual, b_sk, atol=1e-7 * scale)


def test_ridge_solution_is_stationary_and_auto_form():
    rng = np.random.default_rng(0)
    H, T, C = rng.uniform(size=(15, 40)), rng.standard_normal(15), 0.7
    ridge = ELMRidge(H, C)
    assert ridge.form == "dual"  # L > n
    assert ELMRidge(H.T[:, :15], C).form == "primal"
    beta = ridge.solve(T)
    grad = beta + C * H.T @ (H @ beta - T)  # gradient of (1)
    np.testing.assert_allclose(grad, 0, atol=1e-9)
    # perturbing beta cannot lower the strictly convex objective
    for _ in range(5):
        assert elm_objective(H, beta, T, C) < elm_objective(
            H, beta + 1e-3 * rng.standard_normal(beta.shape), T, C
        )


# ---------------------------------------------------------------- label step


def _brute_force(cost, lo, hi):
    n, m = cost.shape
    best = np.inf
    for lab in itertools.product(range(m), repeat=n):
        counts = np.bincount(lab, minlength=m)
        if counts.min() >= lo and counts.max() <= hi:
            best = min(best, cost[np.arange(n), lab].sum())
    return best


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 11), balance=st.floats(0.0, 1.0), seed=st.integers(0, 10_000))
def test_two_cluster_single_output_label_step_is_optimal(n, balance, seed):
    from mmcedu.balance import balanced_labelings, max_imbalance

    try:
        l = max_imbalance(n, balance)
    except ValueError:
        return
    l = min(l, n - 2)
    f = np.random.default_rng(seed).standard_normal(n)
    t = 2 * assign_labels(f, 2, "single", *count_bounds(n, 2, l), l) - 1
    assert abs(t.sum()) <= l
    best = min(
        min(np.sum((f - y) ** 2), np.sum((f + y) ** 2)) for y in balanced_labelings(n, l)
    )
    assert np.sum((f - t) ** 2) == pytest.approx(best, abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 7),
    m=st.integers(2, 3),
    l=st.integers(0, 3),
    output=st.sampled_from(["single", "multi"]),
    seed=st.integers(0, 10_000),
)
def test_balanced_label_step_matches_brute_force(n, m, l, output, seed):
    if l == 0 and n % m:
        with pytest.raises(ValueError, match="cannot be met"):
            count_bounds(n, m, l)
        return
    lo, hi = count_bounds(n, m, l)
    assert hi - lo <= l and m * lo <= n <= m * hi
    rng = np.random.default_rng(seed)
    if output == "single":
        F = rng.uniform(0, m + 1, size=n)
        cost = (F[:, None] - np.arange(1, m + 1)) ** 2
    else:
        F = rng.standard_normal((n, m))
        cost = ((F[:, None, :] - np.eye(m)[None]) ** 2).sum(axis=2)
    if output == "single" and m == 2:
        return  # covered by the +-1 test above
    labels = assign_labels(F, m, output, lo, hi, l)
    counts = np.bincount(labels, minlength=m)
    assert counts.min() >= lo and counts.max() <= hi
    assert cost[np.arange(n), labels].sum() == pytest.approx(_brute_force(cost, lo, hi))


def test_balanced_assignment_fallback_agrees_with_lp():
    rng = np.random.default_rng(3)
    cost = rng.standard_normal((9, 3))
    lab = balanced_assignment(cost, 3, 3)
    assert np.array_equal(np.bincount(lab, minlength=3), [3, 3, 3])
    assert cost[np.arange(9), lab].sum() == pytest.approx(_brute_force(cost, 3, 3))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(20, 120), m=st.integers(3, 6), l=st.integers(1, 15), seed=st.integers(0, 999))
def test_ordered_dynamic_programme_equals_transportation_lp(n, m, l, seed):
    lo, hi = count_bounds(n, m, l)
    f = np.random.default_rng(seed).gamma(2.0, 1.0, size=n)  # skewed: the box is active
    cost = (f[:, None] - np.arange(1, m + 1)) ** 2
    dp = ordered_balanced_assignment(f, m, lo, hi)
    lp = balanced_assignment(cost, lo, hi)
    counts = np.bincount(dp, minlength=m)
    assert counts.min() >= lo and counts.max() <= hi
    assert cost[np.arange(n), dp].sum() == pytest.approx(cost[np.arange(n), lp].sum(), abs=1e-8)


def test_two_cluster_box_is_exactly_the_balance_constraint():
    for n in range(2, 30):
        for l in range(n % 2, n + 1):
            lo, hi = count_bounds(n, 2, l)
            box = {k for k in range(1, n) if lo <= k <= hi and lo <= n - k <= hi}
            exact = {k for k in range(1, n) if abs(2 * k - n) <= l}
            assert box == exact, (n, l)


def test_proposition1_ceil_rule_is_not_the_minimiser_nearest_integer_is():
    f = np.linspace(0.6, 3.4, 57)
    m = 3
    nearest = assign_labels(f, m, "single", 1, f.size, None) + 1  # box never active
    ceil_rule = np.clip(np.ceil(f), 1, m)  # the paper's "i - 1 < f <= i"
    per_point_best = np.min((f[:, None] - np.arange(1, m + 1)) ** 2, axis=1)
    np.testing.assert_allclose((f - nearest) ** 2, per_point_best)
    assert np.sum((f - ceil_rule) ** 2) > np.sum((f - nearest) ** 2) + 1.0


# ---------------------------------------------------------------- estimator behaviour


@pytest.fixture(scope="module")
def digits38():
    return datasets.digits(classes=(3, 8), scale=True)


@pytest.mark.parametrize("output", ["single", "multi"])
@pytest.mark.parametrize("init", ["kmeans", "random"])
def test_objective_never_increases_and_fit_is_a_fixed_point(digits38, output, init):
    X, _ = digits38
    model = EMMC(C=0.1, output=output, init=init, random_state=0).fit(X)
    path = np.array(model.objective_path_)
    assert np.all(np.diff(path) <= 1e-9 * path[:-1])
    assert model.objective_ == pytest.approx(path[-1])
    # the stored beta is the ELM fitted to the final labels, and those labels are the
    # balanced label step of its outputs (a fixed point of the alternation)
    H = hidden_layer(X, model.input_weights_, model.biases_, model.activation)
    lo, hi = model.count_bounds_
    assert np.array_equal(
        assign_labels(H @ model.beta_, 2, output, lo, hi, model.l_), model.labels_
    )
    counts = np.bincount(model.labels_, minlength=2)
    assert abs(counts[0] - counts[1]) <= model.l_ == int(0.1 * X.shape[0])


def test_kmeans_then_emmc_improves_kmeans_on_digit_pairs():
    errs_km, errs_emmc = [], []
    for pair in [(3, 8), (1, 7), (4, 9), (5, 9), (2, 3), (7, 9)]:
        X, y = datasets.digits(classes=pair, scale=True)
        km = KMeans(2, n_init=10, random_state=0).fit(X).labels_
        model = EMMC(C=0.1, init=km, random_state=0).fit(X)
        assert np.array_equal(model.init_labels_, km)
        errs_km.append(clustering_error(y, km))
        errs_emmc.append(clustering_error(y, model.labels_))
    assert np.mean(errs_emmc) < np.mean(errs_km)


def test_more_restarts_never_raise_the_objective(digits38):
    X, _ = digits38
    # the hidden layer and the first initialisation come first from the same seed, so the
    # n_init=5 fit contains the n_init=1 run and keeps the lowest objective
    one = EMMC(C=1e-3, init="random", n_init=1, random_state=4).fit(X)
    five = EMMC(C=1e-3, init="random", n_init=5, random_state=4).fit(X)
    np.testing.assert_array_equal(one.input_weights_, five.input_weights_)
    assert five.objective_ <= one.objective_ + 1e-12


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # max_iter=1
def test_multi_output_is_equivariant_to_cluster_numbering_single_output_is_not():
    X, _ = datasets.digits(classes=(1, 2, 3, 4), n_per_class=40, scale=True)
    km = KMeans(4, n_init=10, random_state=0).fit(X).labels_
    perm = np.array([2, 0, 3, 1])
    kw = dict(n_clusters=4, C=1.0, random_state=0)
    multi = EMMC(output="multi", init=km, **kw).fit(X)
    multi_p = EMMC(output="multi", init=perm[km], **kw).fit(X)
    np.testing.assert_array_equal(perm[multi.labels_], multi_p.labels_)
    assert multi.objective_ == pytest.approx(multi_p.objective_)
    # one output regressing ids 1..4: relabelling the same partition changes the problem
    objs = {
        EMMC(init=np.array(p)[km], max_iter=1, **kw).fit(X).objective_
        for p in itertools.permutations(range(4))
    }
    assert max(objs) > 1.05 * min(objs)


def test_dual_form_when_more_hidden_nodes_than_samples():
    X, y = datasets.blobs(60, centers=2, random_state=1)
    model = EMMC(n_hidden=100, random_state=0).fit(X)
    assert model.form_ == "dual"
    assert clustering_error(y, model.labels_) == 0.0
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    assert EMMC(n_hidden=20, random_state=0).fit(X).form_ == "primal"


def test_predict_new_points_and_determinism():
    X, y = datasets.blobs(300, centers=3, cluster_std=0.6, random_state=2)
    a = EMMC(3, output="multi", random_state=5).fit(X[::2])
    b = EMMC(3, output="multi", random_state=5).fit(X[::2])
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert clustering_error(y[1::2], a.predict(X[1::2])) < 0.02
    assert a.decision_function(X[1::2]).shape == (150, 3)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu"])
def test_activations(activation):
    X, y = datasets.blobs(80, centers=2, random_state=1)
    model = EMMC(activation=activation, random_state=0).fit(X)
    assert clustering_error(y, model.labels_) < 0.05


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input(bad):
    X = np.random.default_rng(0).standard_normal((10, 2))
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        EMMC().fit(X)


def test_bad_input_messages():
    X = np.random.default_rng(0).standard_normal((5, 2))
    with pytest.raises(ValueError, match="too few for n_clusters=6"):
        EMMC(n_clusters=6).fit(X)
    with pytest.raises(ValueError, match="n_hidden"):
        EMMC(n_hidden=0).fit(X)
    with pytest.raises(ValueError, match="odd number of samples"):
        EMMC(balance=0.0).fit(X)
    with pytest.raises(ValueError, match="cannot be met"):
        EMMC(n_clusters=3, balance=0.0, output="multi").fit(np.r_[X, X[:2]])
    X6 = np.r_[X, X[:1] + 1.0]
    with pytest.raises(ValueError, match="init labels must have shape"):
        EMMC(init=np.zeros(3)).fit(X6)
    with pytest.raises(ValueError, match="distinct labels"):
        EMMC(init=np.arange(6)).fit(X6)
    with pytest.raises(ValueError, match="2-D|1D|1-D"):
        EMMC().fit(np.arange(5.0))
    with pytest.raises(ValueError, match="C must be positive"):
        ELMRidge(np.ones((3, 2)), 0.0)
