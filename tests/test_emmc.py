"""Tests of EMMC (maximum margin clustering with an extreme learning machine)."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.linear_model import Ridge

from mmcedu import EMMC, balance, datasets
from mmcedu.balance import count_bounds
from mmcedu.emmc import (
    LABEL_FREE_C,
    ELMRidge,
    _hat_diagonal,
    _HatMatrix,
    _move_deltas,
    _target_table,
    assign_labels,
    box_assignment,
    elm_objective,
    hidden_layer,
    ordered_cost,
)
from mmcedu.metrics import clustering_error, permutation_mean_quadratic
from mmcedu_lab.emmc import balanced_assignment, box_optimality_gap, ordered_balanced_assignment

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


def _cost_of(cost, labels):
    return float(cost[np.arange(len(labels)), labels].sum())


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 7), m=st.integers(2, 3), seed=st.integers(0, 10_000), ties=st.booleans())
def test_box_assignment_matches_brute_force_for_any_box(n, m, seed, ties):
    rng = np.random.default_rng(seed)
    lo = int(rng.integers(0, n // m + 1))
    hi = int(rng.integers(max(lo, -(-n // m)), n + 1))
    cost = rng.integers(-2, 3, size=(n, m)).astype(float) if ties else rng.normal(size=(n, m))
    labels, info = box_assignment(cost, lo, hi, return_info=True)
    counts = np.bincount(labels, minlength=m)
    assert lo <= counts.min() and counts.max() <= hi
    assert _cost_of(cost, labels) == pytest.approx(_brute_force(cost, lo, hi), abs=1e-9)
    assert box_optimality_gap(cost, labels, lo, hi) >= -1e-9 and info["gap"] >= -1e-9


@pytest.mark.parametrize("kind", ["normal", "ties", "skewed"])
@pytest.mark.parametrize("n, m", [(400, 3), (1500, 5), (2000, 10)])
def test_box_assignment_equals_the_transportation_lp(n, m, kind):
    rng = np.random.default_rng(n + m)
    F = rng.integers(0, 3, size=(n, m)).astype(float) if kind == "ties" else rng.normal(size=(n, m))
    if kind == "skewed":
        F[:, 0] += 1.5  # most samples prefer cluster 0: the box binds
    lo, hi = count_bounds(n, m, int(0.1 * n))
    ours = box_assignment(-2.0 * F, lo, hi)
    lp = balanced_assignment(-2.0 * F, lo, hi)
    assert _cost_of(-2.0 * F, ours) == pytest.approx(_cost_of(-2.0 * F, lp), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("n, m", [(300, 3), (1000, 5), (800, 8)])
def test_box_assignment_equals_the_ordered_dynamic_programme(n, m):
    f = np.random.default_rng(n).normal(size=n) * m / 3 + (m + 1) / 2 + 0.7
    lo, hi = count_bounds(n, m, int(0.1 * n))
    cost = ordered_cost(f, m)
    ours = box_assignment(cost, lo, hi)
    dp = ordered_balanced_assignment(f, m, lo, hi)
    assert _cost_of(cost, ours) == pytest.approx(_cost_of(cost, dp), rel=1e-12)


def test_box_assignment_for_two_clusters_is_the_sorting_solution():
    rng = np.random.default_rng(1)
    for n, l in [(50, 4), (51, 3), (200, 20)]:
        f = rng.normal(size=n) + 0.8
        lo, hi = count_bounds(n, 2, l)
        t = balance.balanced_sign(f, l)
        cost = np.column_stack([(f + 1) ** 2, (f - 1) ** 2])
        ours = box_assignment(cost, lo, hi)
        assert _cost_of(cost, ours) == pytest.approx(_cost_of(cost, (t > 0).astype(int)))


def test_certificate_detects_a_suboptimal_labeling():
    rng = np.random.default_rng(5)
    cost = rng.normal(size=(300, 4))
    lo, hi = count_bounds(300, 4, 30)
    best = box_assignment(cost, lo, hi)
    worse = best.copy()
    i, j = np.flatnonzero(best == 0)[0], np.flatnonzero(best == 1)[0]
    worse[i], worse[j] = 1, 0  # an exchange keeps the counts
    assert _cost_of(cost, worse) > _cost_of(cost, best)
    assert box_optimality_gap(cost, worse, lo, hi) < 0
    with pytest.raises(ValueError, match="violates the box"):
        box_optimality_gap(cost, np.zeros(300, int), lo, hi)


def test_label_step_memory_is_linear_in_n_times_m():
    import tracemalloc

    n, m = 20_000, 10
    F = np.random.default_rng(0).normal(size=(n, m))
    F[:, 0] += 2.0  # the box binds: prices and repairs run
    lo, hi = count_bounds(n, m, int(0.1 * n))
    cost = -2.0 * F
    tracemalloc.start()
    box_assignment(cost, lo, hi)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 24 * n * m + 48 * n  # the label step's share of EMMC.memory_bytes


def test_price_phase_leaves_no_one_sample_repairs(monkeypatch):
    """Structureless data, three clusters: the price phase used to stop at the first
    feasible counts and left 30-60 one-sample shortest-path repairs per label step at
    n = 20,000 (hundreds, about 12 CPU s per alternation, at n = 100,000). Run to dual
    optimality it leaves none, and every step still carries its certificate."""
    import mmcedu.emmc as emmc_module

    infos = []

    def recorded(cost, lo, hi):
        labels, info = box_assignment(cost, lo, hi, return_info=True)
        infos.append(info)
        return labels

    monkeypatch.setattr(emmc_module, "box_assignment", recorded)
    X = np.random.RandomState(0).randn(20_000, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        EMMC(3, n_hidden=20, max_iter=8, random_state=0).fit(X)
    assert len(infos) >= 3, "the balanced step was hardly needed"
    assert sum(info["repairs"] for info in infos) <= 2
    assert all(info["gap"] >= -1e-9 for info in infos)
    assert all(info["sweeps"] <= 20 for info in infos)


# ---------------------------------------------------------------- estimator behaviour


@pytest.fixture(scope="module")
def digits38():
    return datasets.digits(classes=(3, 8), scale=True)


@pytest.mark.parametrize("output", ["single", "multi"])
@pytest.mark.parametrize("init", ["kmeans", "random"])
@pytest.mark.parametrize("local_search", [False, True])
def test_objective_never_increases_and_fit_is_a_fixed_point(digits38, output, init, local_search):
    X, _ = digits38
    model = EMMC(C=0.1, output=output, init=init, random_state=0, local_search=local_search).fit(X)
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
@pytest.mark.parametrize("local_search", [False, True])
def test_multi_output_is_equivariant_to_cluster_numbering_single_output_is_not(local_search):
    X, _ = datasets.digits(classes=(1, 2, 3, 4), n_per_class=40, scale=True)
    km = KMeans(4, n_init=10, random_state=0).fit(X).labels_
    perm = np.array([2, 0, 3, 1])
    kw = dict(n_clusters=4, C=1.0, random_state=0, local_search=local_search)
    multi = EMMC(init=km, **kw).fit(X)
    assert multi.output_ == "multi"  # the default for more than two clusters
    multi_p = EMMC(output="multi", init=perm[km], **kw).fit(X)
    np.testing.assert_array_equal(perm[multi.labels_], multi_p.labels_)
    assert multi.objective_ == pytest.approx(multi_p.objective_)
    # one output regressing ids 1..4: relabelling the same partition changes the problem
    objs = {
        EMMC(init=np.array(p)[km], max_iter=1, output="single", **kw).fit(X).objective_
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


@pytest.mark.parametrize("output", ["single", "multi"])
@pytest.mark.parametrize("local_search", [False, True])
def test_scalable_label_step_gives_the_same_fit_as_the_lp_and_dp(monkeypatch, output, local_search):
    """The O(n m) label step against the transportation LP / ordered DP inside the estimator:
    the same labels after every alternation (random start, so the box binds)."""
    import mmcedu.emmc as emmc_module

    X, _ = datasets.digits(classes=(0, 1, 2, 3, 4), n_per_class=120, scale=True, random_state=0)
    kw = dict(n_clusters=5, output=output, init="random", local_search=local_search, C=1.0,
              random_state=0)
    calls = []

    def counted(cost, lo, hi):
        calls.append(1)
        return box_assignment(cost, lo, hi)

    monkeypatch.setattr(emmc_module, "box_assignment", counted)
    ours = EMMC(**kw).fit(X)
    assert calls, "the balanced step was never needed"

    def reference(cost, lo, hi):
        if output == "single":  # cost = (f - k)^2: recover f from the first two columns
            f = (3.0 - (cost[:, 1] - cost[:, 0])) / 2.0
            return ordered_balanced_assignment(f, cost.shape[1], lo, hi)
        return balanced_assignment(cost, lo, hi)

    monkeypatch.setattr(emmc_module, "box_assignment", reference)
    ref = EMMC(**kw).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.objective_path_, ref.objective_path_, rtol=1e-12)
    assert ours.n_iter_ == ref.n_iter_


# ---------------------------------------------------------------- local search


def _exact_J(H, T, C):
    """``J*(T) = 1/2 T^T (K + I/C)^{-1} T`` summed over the outputs (K = H H^T)."""
    T = T.reshape(len(T), -1)
    return 0.5 * float(np.sum(T * np.linalg.solve(H @ H.T + np.eye(len(T)) / C, T)))


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_hat_matrix_rows_and_diagonal(form):
    rng = np.random.default_rng(0)
    H = rng.uniform(size=(40, 25 if form == "primal" else 60))
    ridge = ELMRidge(H, 0.7)
    assert ridge.form == form
    R = H @ H.T @ np.linalg.inv(H @ H.T + np.eye(40) / 0.7)  # K (K + I/C)^{-1}
    hat = _HatMatrix(ridge)
    np.testing.assert_allclose(hat.diag, np.diag(R), atol=1e-10)
    np.testing.assert_allclose(_hat_diagonal(ridge, block=7), np.diag(R), atol=1e-10)
    np.testing.assert_allclose(hat.column(3), R[:, 3], atol=1e-10)
    np.testing.assert_allclose(hat.block([1, 5], [0, 2, 9]), R[np.ix_([1, 5], [0, 2, 9])], atol=1e-10)
    # the outputs are F = R T
    T = rng.standard_normal(40)
    np.testing.assert_allclose(H @ ridge.solve(T), R @ T, atol=1e-9)


@pytest.mark.parametrize("output, m", [("single", 2), ("single", 3), ("multi", 3)])
def test_single_move_and_swap_changes_are_exact(output, m):
    X, _ = datasets.digits(classes=(1, 2, 3)[:m], n_per_class=25, scale=True)
    model = EMMC(m, C=0.5, output=output, local_search=False, random_state=0).fit(X)
    H = hidden_layer(X, model.input_weights_, model.biases_)
    V = _target_table(m, output)
    labels = model.labels_
    T = V[labels]
    F = (H @ ELMRidge(H, model.C).solve(T)).reshape(len(T), -1)
    R = H @ H.T @ np.linalg.inv(H @ H.T + np.eye(len(T)) / model.C)
    delta = _move_deltas(F, labels, V, np.diag(R), model.C)
    J0 = _exact_J(H, T, model.C)
    for i in range(0, len(T), 7):
        for b in range(m):
            if b == labels[i]:
                continue
            T2 = T.copy()
            T2[i] = V[b]
            assert delta[i, b] == pytest.approx(_exact_J(H, T2, model.C) - J0, abs=1e-9)
    if output == "single" and m == 2:  # the flip formula 2 C (t_i f_i - R_ii)
        t, f = T[:, 0], F[:, 0]
        flips = delta[np.arange(len(t)), 1 - labels]
        np.testing.assert_allclose(flips, 2 * model.C * (t * f - np.diag(R)), atol=1e-10)
    i, j = np.flatnonzero(labels == 0)[0], np.flatnonzero(labels == 1)[0]
    T2 = T.copy()
    T2[i], T2[j] = V[1], V[0]
    swap = delta[i, 1] + delta[j, 0] + model.C * R[i, j] * np.sum((V[0] - V[1]) ** 2)
    assert swap == pytest.approx(_exact_J(H, T2, model.C) - J0, abs=1e-9)


def _neighbourhood(model, X):
    """Best feasible single move and best swap of the fitted labels, by direct recomputation
    of ``J*`` from the definition (no formula of the package)."""
    H = hidden_layer(X, model.input_weights_, model.biases_)
    V = _target_table(model.n_clusters, model.output_)
    labels = model.labels_
    m, (lo, hi) = model.n_clusters, model.count_bounds_
    counts = np.bincount(labels, minlength=m)
    M = np.linalg.inv(H @ H.T + np.eye(len(labels)) / model.C)
    T = V[labels]
    J0 = 0.5 * np.sum(T * (M @ T))
    best_move = best_swap = np.inf
    for i in range(len(labels)):
        for b in range(m):
            a = labels[i]
            if b == a or counts[a] <= lo or counts[b] >= hi:
                continue
            D = V[b] - V[a]  # J*(T + e_i D) - J*(T), expanded
            best_move = min(best_move, float(D @ (M[i] @ T)) + 0.5 * float(D @ D) * M[i, i])
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            a, b = labels[i], labels[j]
            if a == b:
                continue
            D = V[b] - V[a]
            change = D @ (M[i] @ T) - D @ (M[j] @ T) + 0.5 * D @ D * (M[i, i] + M[j, j] - 2 * M[i, j])
            best_swap = min(best_swap, float(change))
    return best_move, best_swap, J0


def test_plain_alternation_stops_at_a_partial_minimum_that_a_flip_improves(digits38):
    X, _ = digits38
    plain = EMMC(C=0.1, random_state=0, local_search=False).fit(X)
    move, swap, J0 = _neighbourhood(plain, X)
    assert J0 == pytest.approx(plain.objective_)
    assert move < -1e-6  # one flip inside the balance box lowers the objective
    assert EMMC().local_search is False  # the paper's algorithm by default
    polished = EMMC(C=0.1, random_state=0, local_search=True).fit(X)
    assert polished.n_flips_ + polished.n_swaps_ >= 1
    assert polished.objective_ < plain.objective_
    move, swap, J0 = _neighbourhood(polished, X)
    assert J0 == pytest.approx(polished.objective_)
    assert move >= -1e-9 and swap >= -1e-9  # a local minimum: no improving move or swap


@pytest.mark.parametrize("output", ["single", "multi"])
def test_local_search_ends_at_a_local_minimum_with_several_clusters(output):
    X, _ = datasets.digits(classes=(1, 2, 3, 4), n_per_class=30, scale=True)
    model = EMMC(4, C=1.0, output=output, random_state=1, local_search=True).fit(X)
    move, swap, J0 = _neighbourhood(model, X)
    assert J0 == pytest.approx(model.objective_)
    assert move >= -1e-9 and swap >= -1e-9


def test_local_search_reaches_the_global_minimum_of_a_tiny_problem():
    Xs, _ = datasets.digits(classes=(3, 8), n_per_class=7, scale=True, random_state=1)
    kw = dict(n_hidden=30, C=1.0, balance=0.0, random_state=0)
    with pytest.warns(UserWarning):  # the box [7, 7] decides the labels
        plain = EMMC(local_search=False, **kw).fit(Xs)
        polished = EMMC(local_search=True, **kw).fit(Xs)
    H = hidden_layer(Xs, plain.input_weights_, plain.biases_)
    M = np.linalg.inv(H @ H.T + np.eye(14))
    J_best = min(0.5 * t @ M @ t for t in balance.balanced_labelings(14, 0))
    assert plain.objective_ > J_best + 0.1  # the alternation stops after one step
    assert polished.objective_ == pytest.approx(J_best, abs=1e-10)
    assert (polished.n_flips_, polished.n_swaps_) == (0, 1)  # flips cannot keep 7 / 7


@pytest.mark.parametrize("seed", range(4))
def test_local_search_never_ends_above_the_plain_alternation(seed):
    X, _ = datasets.digits(classes=(1, 2, 3, 4), n_per_class=40, scale=True)
    for output in ("single", "multi"):
        kw = dict(n_clusters=4, output=output, random_state=seed)
        plain = EMMC(local_search=False, **kw).fit(X)
        polished = EMMC(local_search=True, **kw).fit(X)
        np.testing.assert_array_equal(plain.init_labels_, polished.init_labels_)
        assert polished.objective_ <= plain.objective_ + 1e-12
        assert plain.n_flips_ == plain.n_swaps_ == 0


def test_dual_form_local_search_equals_primal(monkeypatch):
    import mmcedu.emmc as emmc_module

    X, _ = datasets.digits(classes=(3, 8), n_per_class=30, scale=True)
    a = EMMC(n_hidden=50, C=0.3, random_state=0, local_search=True).fit(X)  # L <= n: primal
    assert a.form_ == "primal"
    # the same hidden layer, solved in the dual form
    original = emmc_module.ELMRidge.__init__

    def dual(self, H, C, form="auto"):
        original(self, H, C, form="dual")

    monkeypatch.setattr(emmc_module.ELMRidge, "__init__", dual)
    b = EMMC(n_hidden=50, C=0.3, random_state=0, local_search=True).fit(X)
    assert b.form_ == "dual"
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-9)
    assert (a.n_flips_, a.n_swaps_) == (b.n_flips_, b.n_swaps_)


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


# ---------------------------------------------------------------- label-free rule and objective


class _Sub(EMMC):
    pass


@pytest.mark.parametrize("cls", [EMMC, _Sub])
def test_label_free_rule(cls):
    X, _ = datasets.digits(classes=(3, 8), n_per_class=20, scale=True)
    rule = cls(3).label_free_rule(X)
    assert rule == {"param_grid": {"C": [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]},
                    "criterion": ["silhouette"], "tolerance": 0.0}
    assert rule["param_grid"]["C"] == list(LABEL_FREE_C)


def _elm_contrast(H, labels, C, *, output="single", n_clusters=None):
    """The objective contrast as ``mmcedu.model_selection.elm_contrast`` computed it."""
    H = np.asarray(H, dtype=float)
    _, idx = np.unique(np.asarray(labels), return_inverse=True)
    m = max(int(idx.max()) + 1, int(n_clusters or 0))
    if output == "single" and m == 2:
        T = np.where(idx == 1, 1.0, -1.0)[:, None]
    elif output == "single":
        T = (idx + 1.0)[:, None]
    else:
        T = np.zeros((idx.size, m))
        T[np.arange(idx.size), idx] = 1.0
    A = H @ H.T
    A[np.diag_indices_from(A)] += 1.0 / C
    A = np.linalg.inv(A)
    J = 0.5 * float(np.sum(T * (A @ T)))
    J_rand = 0.5 * permutation_mean_quadratic(A, T)
    return np.nan if not J_rand > 0 else float(1.0 - J / J_rand)


def _old_objective_emmc(est, X):
    """``model_selection._objective_emmc``: its own activation table and the ``output`` parameter."""
    act = {"sigmoid": lambda Z: 1.0 / (1.0 + np.exp(-Z)), "tanh": np.tanh,
           "relu": lambda Z: np.maximum(Z, 0.0)}[est.activation]
    H = act(np.asarray(X, dtype=float) @ est.input_weights_ + est.biases_)
    return _elm_contrast(H, est.labels_, float(est.C), output=est.output, n_clusters=est.n_clusters)


@pytest.mark.parametrize("cls", [EMMC, _Sub])
@pytest.mark.parametrize("m, params", [
    (2, {"C": 0.1}), (2, {"output": "single", "activation": "tanh"}),
    (2, {"output": "multi", "activation": "relu", "C": 3.0}), (4, {}),
    (4, {"output": "single", "activation": "tanh"}), (4, {"activation": "relu", "C": 0.3}),
    (2, {"n_hidden": 100, "output": "single"}),  # the dual form (L > n)
])
def test_objective_contrast_is_the_elm_contrast(cls, m, params):
    classes = (3, 8) if m == 2 else (1, 2, 3, 4)
    X, _ = datasets.digits(classes=classes, n_per_class=30, scale=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(m, random_state=0, **params).fit(X)
    value = est.objective_contrast(X, random_state=0)
    H = hidden_layer(X, est.input_weights_, est.biases_, est.activation)
    # bit for bit the formula, on the fit's hidden layer and targets
    assert value == _elm_contrast(H, est.labels_, est.C, output=est.output_, n_clusters=m)
    assert 0 < value < 1 and est.objective_contrast(X, random_state=5) == value
    if est.output != "auto" and est.activation != "sigmoid":
        assert value == _old_objective_emmc(est, X)  # the same inputs as the old criterion
    elif est.output != "auto":  # the old criterion's own sigmoid, 1 / (1 + exp(-z)), rounds differently
        assert value == pytest.approx(_old_objective_emmc(est, X), rel=1e-12)
    # J is the fit's objective: 1/2 tr(T^T (H H^T + I/C)^{-1} T) = objective_
    T = _target_table(m, est.output_)[est.labels_]
    J = 0.5 * np.sum(T * np.linalg.solve(H @ H.T + np.eye(len(X)) / est.C, T))
    assert J == pytest.approx(est.objective_, rel=1e-8)
