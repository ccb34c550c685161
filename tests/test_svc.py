"""Tests for support vector clustering (mmcedu.support_vector_clustering)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import pdist

from mmcedu import SupportVectorClustering
from mmcedu.datasets import moons, two_circles
from mmcedu.kernels import rbf_kernel
from mmcedu.metrics import adjusted_rand_score
from mmcedu.support_vector_clustering import cone_radius, gamma_path, svdd_dual, svdd_radius_squared


def _same_partition(a, b):
    return adjusted_rand_score(a, b) == pytest.approx(1.0) and len(set(a)) == len(set(b))


@pytest.fixture(scope="module")
def moons60():
    return moons(60, noise=0.05, random_state=1)


# ----------------------------------------------------------------------------- SVDD dual
@pytest.mark.parametrize("C", [1.0, 0.05])
@pytest.mark.parametrize("q", [0.5, 5.0, 50.0])
def test_libsvm_and_cvxpy_agree(moons60, C, q):
    X, _ = moons60
    K = rbf_kernel(X, gamma=q)
    b_lib, _ = svdd_dual(K, C, solver="libsvm")
    b_cvx, _ = svdd_dual(K, C, solver="cvxpy")
    assert np.max(np.abs(b_lib - b_cvx)) < 1e-5
    m_lib = SupportVectorClustering(gamma=q, C=C, solver="libsvm").fit(X)
    m_cvx = SupportVectorClustering(gamma=q, C=C, solver="cvxpy").fit(X)
    np.testing.assert_array_equal(m_lib.support_, m_cvx.support_)
    np.testing.assert_array_equal(m_lib.bounded_support_, m_cvx.bounded_support_)
    assert m_lib.radius_squared_ == pytest.approx(m_cvx.radius_squared_, abs=1e-6)
    np.testing.assert_array_equal(m_lib.labels_, m_cvx.labels_)


def test_dual_matches_generic_optimizer():
    """Brute-force oracle: SLSQP on the same dual reaches the same objective and beta."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 2))
    for C in (1.0, 0.2):
        K = rbf_kernel(X, gamma=0.7)
        beta, _ = svdd_dual(K, C)
        n = len(K)
        res = minimize(
            lambda b: b @ K @ b - np.diag(K) @ b,
            np.full(n, 1.0 / n),
            jac=lambda b: 2 * K @ b - np.diag(K),
            bounds=[(0, C)] * n,
            constraints=[{"type": "eq", "fun": lambda b: b.sum() - 1.0}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        assert res.success
        assert beta @ K @ beta - np.diag(K) @ beta <= res.fun + 1e-10
        np.testing.assert_allclose(beta, res.x, atol=1e-4)


@pytest.mark.parametrize("C", [1.0, 0.04])
def test_kkt_conditions(moons60, C):
    """Slide 18: beta = 0 inside, 0 < beta < C on the sphere, beta = C outside."""
    X, _ = moons60
    m = SupportVectorClustering(gamma=5.0, C=C).fit(X)
    b, R2, d2 = m.dual_coef_, m.radius_squared_, m.distances_squared_
    assert b.sum() == pytest.approx(1.0) and b.min() >= 0 and b.max() <= C + 1e-12
    sv = np.zeros(len(b), bool)
    sv[m.support_] = True
    bsv = np.zeros(len(b), bool)
    bsv[m.bounded_support_] = True
    free = sv & ~bsv
    assert free.any()
    np.testing.assert_allclose(d2[free], R2, atol=1e-6)
    assert np.all(d2[~sv] <= R2 + 1e-6)
    assert np.all(d2[bsv] >= R2 - 1e-6)
    if C < 1:
        assert bsv.any()
        np.testing.assert_allclose(b[bsv], C)
    # distance_squared on new points uses the same formula (slide 19)
    np.testing.assert_allclose(m.distance_squared(X), d2, atol=1e-10)


def test_infeasible_C_and_bounded_case():
    X, _ = moons(20, noise=0.05, random_state=0)
    with pytest.raises(ValueError, match="infeasible"):
        SupportVectorClustering(C=0.9 / 20).fit(X)
    with pytest.raises(ValueError, match="infeasible"):
        svdd_dual(np.eye(20), C=0.01)
    # C = 1/N: every beta at its bound, beta = 1/N is the only feasible point
    m = SupportVectorClustering(gamma=1.0, C=1.0 / 20).fit(X)
    np.testing.assert_allclose(m.dual_coef_, 1.0 / 20)
    assert len(m.bounded_support_) == 20
    assert m.labels_.shape == (20,)


# ----------------------------------------------------------------------------- lemmas
def test_lemma_q_zero_gives_R2_zero():
    X, _ = moons(30, noise=0.05, random_state=0)
    for solver in ("libsvm", "cvxpy"):
        K = np.ones((len(X), len(X)))  # the kernel at gamma = 0: every image is the same point
        beta, _ = svdd_dual(K, 1.0, solver=solver)
        R2, d2 = svdd_radius_squared(K, beta, 1.0)
        assert R2 == pytest.approx(0.0, abs=1e-10)
        np.testing.assert_allclose(d2, 0.0, atol=1e-10)
    m = SupportVectorClustering(gamma=1e-12).fit(X)
    assert m.radius_squared_ < 1e-9 and m.n_clusters_ == 1


@pytest.mark.parametrize("solver", ["libsvm", "cvxpy"])
def test_lemma_q_infinity(solver):
    """q -> infinity: K -> I, beta_i = 1/N and R^2 = 1 - 1/N (slide 28)."""
    X, _ = moons(40, noise=0.05, random_state=0)
    n = len(X)
    q = 1e3 / pdist(X, "sqeuclidean").min()
    m = SupportVectorClustering(gamma=q, solver=solver).fit(X)
    np.testing.assert_allclose(m.dual_coef_, 1.0 / n, atol=1e-6)
    assert m.radius_squared_ == pytest.approx(1 - 1.0 / n, abs=1e-9)
    assert len(m.support_) == n
    assert m.n_clusters_ == n  # every point its own cluster


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 25),
    q1=st.floats(0.01, 50.0),
    factor=st.floats(1.0, 10.0),
)
def test_R2_non_decreasing_in_q(seed, n, q1, factor):
    """Without bounded SVs, R^2(q) = 1 - min_beta beta^T K_q beta and K_q decreases entrywise."""
    X = np.random.default_rng(seed).normal(size=(n, 2))
    R2 = []
    for q in (q1, q1 * factor):
        K = rbf_kernel(X, gamma=q)
        beta, _ = svdd_dual(K, 1.0)
        R2.append(svdd_radius_squared(K, beta, 1.0)[0])
        assert R2[-1] <= 1 - 1 / n + 1e-9
    assert R2[1] >= R2[0] - 1e-7


# ----------------------------------------------------------------------------- q-list
def test_gamma_path(moons60):
    X, _ = moons60
    ql = gamma_path(X)
    d2 = pdist(X, "sqeuclidean")
    assert ql.gamma[0] == pytest.approx(1 / d2.max())
    assert ql.estimated_length == pytest.approx(np.log2(d2.max()) - np.log2(d2.min()))
    assert np.all(np.diff(ql.gamma) > 0)
    assert np.all(np.diff(ql.radius_squared) >= -1e-9)
    assert ql.radius_squared[-1] <= ql.radius_squared_limit == 1 - 1 / len(X)
    assert ql.n_support[-1] == len(X) or ql.radius_squared_limit - ql.radius_squared[-1] < 1e-3
    # the secant step: q_{k+1} - q_k = (T - R2_k)(q_k - q_{k-1}) / (R2_k - R2_{k-1})
    qq = np.r_[0.0, ql.gamma]
    rr = np.r_[0.0, ql.radius_squared]
    for k in range(1, len(ql.gamma) - 1):
        step = (ql.radius_squared_limit - rr[k]) * (qq[k] - qq[k - 1]) / (rr[k] - rr[k - 1])
        assert qq[k + 1] == pytest.approx(max(qq[k] + step, 1.01 * qq[k]))
    assert 0.5 < len(ql.gamma) / ql.estimated_length < 2.0
    with pytest.raises(ValueError, match="at least 2"):
        gamma_path(X[:1])
    with pytest.raises(ValueError, match="NaN"):
        gamma_path(np.where(np.eye(60, 2) > 0, np.nan, X))


# ----------------------------------------------------------------------------- labeling
def _naive_complete_graph(model, X, m):
    """Loop-by-loop complete graph (Ben-Hur et al. 2001) using model.distance_squared.

    Inside the sphere: R^2(x) <= R^2 + the scatter of the unbounded support vectors around
    R^2 (the accuracy of the solve), and every unbounded support vector.
    """
    R2 = model.radius_squared_
    free = np.setdiff1d(model.support_, model.bounded_support_)
    tol = max(np.abs(model.distances_squared_[free] - R2).max(), 1e-10)
    inside = np.union1d(np.flatnonzero(model.distances_squared_ <= R2 + tol), free)
    A = np.zeros((len(X), len(X)), bool)
    t = np.arange(1, m + 1) / (m + 1)
    for i, j in itertools.combinations(inside, 2):
        seg = X[i] + t[:, None] * (X[j] - X[i])
        A[i, j] = np.all(model.distance_squared(seg) <= R2 + tol)
    _, lab = connected_components(A[np.ix_(inside, inside)], directed=False)
    labels = np.empty(len(X), int)
    labels[inside] = lab
    for k in np.setdiff1d(np.arange(len(X)), inside):
        labels[k] = labels[inside[np.argmin(((X[inside] - X[k]) ** 2).sum(1))]]
    return labels


def _naive_cone(model, X):
    V = np.setdiff1d(model.support_, model.bounded_support_)
    cos_theta = np.sqrt(1 - model.radius_squared_)
    Z = np.sqrt(-np.log(cos_theta) / model.gamma_)
    A = np.array([[np.linalg.norm(X[i] - X[j]) <= 2 * Z for j in V] for i in V])
    _, lab = connected_components(A, directed=False)
    near = [V[np.argmin(np.linalg.norm(X[V] - x, axis=1))] for x in X]
    return np.array([lab[list(V).index(v)] for v in near])


@pytest.mark.parametrize("C", [1.0, 0.05])
@pytest.mark.parametrize("q", [3.0, 15.0])
def test_labelings_match_naive_oracles(moons60, C, q):
    X, _ = moons60
    cg = SupportVectorClustering(gamma=q, C=C, labeling="complete_graph", n_segment_points=7)
    cg.fit(X)
    assert _same_partition(cg.labels_, _naive_complete_graph(cg, X, 7))
    cone = SupportVectorClustering(gamma=q, C=C, labeling="cone").fit(X)
    assert _same_partition(cone.labels_, _naive_cone(cone, X))
    for model in (cg, cone):
        assert set(model.labels_) == set(range(model.n_clusters_))
        np.testing.assert_array_equal(model.predict(X), model.labels_)
        np.testing.assert_array_equal(model.fit_predict(X), model.labels_)


def test_cone_radius_geometry():
    """exp(-q Z^2) = cos(theta) = sqrt(1 - R^2): the ball of radius Z is the cone's footprint."""
    for R2, q in [(0.3, 0.5), (0.9, 10.0), (0.99, 1e3)]:
        Z = cone_radius(R2, q)
        assert np.exp(-q * Z**2) == pytest.approx(np.sqrt(1 - R2))
    with pytest.raises(ValueError, match="R\\^2"):
        cone_radius(1.0, 1.0)


def test_pythagoras_residual(moons60):
    """1 - ||a||^2 - R^2 = C sum xi: zero without bounded SVs, positive with them."""
    X, _ = moons60
    m = SupportVectorClustering(gamma=5.0, C=1.0).fit(X)
    assert len(m.bounded_support_) == 0 and abs(m.pythagoras_residual_) < 1e-7
    m = SupportVectorClustering(gamma=5.0, C=0.04).fit(X)
    xi = np.maximum(m.distances_squared_ - m.radius_squared_, 0.0)
    assert len(m.bounded_support_) > 0
    assert m.pythagoras_residual_ == pytest.approx(m.C * xi.sum(), abs=1e-7)
    assert m.pythagoras_residual_ > 1e-4


def test_cone_is_coarser_than_complete_graph():
    """At the q where the complete graph separates the moons, cone labeling does not yet;
    a several times larger q separates them with cones too."""
    X, y = moons(200, noise=0.05, random_state=0)
    cg = SupportVectorClustering(gamma=12.5, labeling="complete_graph").fit(X)
    assert adjusted_rand_score(y, cg.labels_) == pytest.approx(1.0)
    assert SupportVectorClustering(gamma=12.5, labeling="cone").fit(X).n_clusters_ == 1
    cone = SupportVectorClustering(gamma=8 * 12.5, labeling="cone").fit(X)
    assert adjusted_rand_score(y, cone.labels_) == pytest.approx(1.0)


def test_circles_and_predict_new_points():
    X, y = two_circles(100, noise=0.03, random_state=0)
    m = SupportVectorClustering(gamma=80.0, labeling="cone").fit(X)
    assert adjusted_rand_score(y, m.labels_) == pytest.approx(1.0)
    Xn, yn = two_circles(50, noise=0.03, random_state=5)
    assert adjusted_rand_score(yn, m.predict(Xn)) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    X, _ = moons(20, noise=0.05, random_state=0)
    with pytest.raises(ValueError, match="n_samples=1"):
        SupportVectorClustering().fit(X[:1])
    Xn = X.copy()
    Xn[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SupportVectorClustering().fit(Xn)
    Xn[3, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SupportVectorClustering().fit(Xn)
    with pytest.raises(ValueError, match="labeling"):
        SupportVectorClustering(labeling="gradient").fit(X)
    with pytest.raises(ValueError, match="solver"):
        SupportVectorClustering(solver="smo").fit(X)
    with pytest.raises(ValueError, match="gamma"):
        SupportVectorClustering(gamma=-1.0).fit(X)
    with pytest.raises(ValueError, match="constant diagonal"):
        svdd_dual(np.diag(np.arange(1.0, 5.0)), 1.0, solver="libsvm")


# ----------------------------------------------------------------------------- label-free rule, memory
def test_label_free_rule_is_eight_widths_of_the_q_list(moons60):
    X, _ = moons60
    q = gamma_path(X).gamma
    idx = np.unique(np.linspace(0, q.size - 1, min(8, q.size)).round().astype(int))
    grid = {"gamma": [float(v) for v in q[idx]]}
    expected = {"param_grid": grid, "criterion": ["plateau"], "tolerance": 0.0}
    assert SupportVectorClustering().label_free_rule(X) == expected
    assert len(expected["param_grid"]["gamma"]) == 8 and idx[0] == 0 and idx[-1] == q.size - 1

    class Mine(SupportVectorClustering):
        pass

    assert Mine().label_free_rule(X) == expected
    # a list shorter than eight: every width
    short = SupportVectorClustering().label_free_rule(X[:4])["param_grid"]["gamma"]
    np.testing.assert_array_equal(short, gamma_path(X[:4]).gamma)


def test_label_free_rule_makes_the_recorded_choices():
    """The comparison's recorded label-free widths (tests/data/label_free_choices.json) follow
    from label_free_rule and LabelFreeSearch alone."""
    import json
    import pathlib
    import warnings

    from mmcedu import LabelFreeSearch
    from mmcedu_lab.comparison import load_task

    path = pathlib.Path(__file__).parent / "data" / "label_free_choices.json"
    records = [r for r in json.loads(path.read_text()) if r["method"] == "SVC (cone)"]
    assert len(records) == 30
    for r in records:
        X, _, _ = load_task(r["task"], r["seed"], 200)
        est = SupportVectorClustering(labeling="cone")
        rule = est.label_free_rule(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = LabelFreeSearch(est, rule["param_grid"], criterion=rule["criterion"],
                                     tolerance=rule["tolerance"], n_resamples=3, random_state=r["seed"],
                                     refit=False, n_jobs=1).fit(X)
        assert search.best_params_ == r["param_free"], (r["task"], r["seed"])


@pytest.mark.parametrize("params", [{}, {"solver": "cvxpy"}, {"max_samples": 50}, {"max_samples": 0.25},
                                    {"solver_options": {"cache_size": 1}}])
def test_memory_bytes_is_what_the_fit_checks(params):
    import mmcedu
    from mmcedu.exceptions import MemoryBudgetError

    X, _ = moons(200, noise=0.05, random_state=0)
    est = SupportVectorClustering(gamma=5.0, random_state=0, **params)
    nbytes = est.memory_bytes(*X.shape)
    m = {50: 50, 0.25: 50}.get(params.get("max_samples"), 200)
    data = 8 * (200 + m) * 2
    if params.get("solver") == "cvxpy":
        assert nbytes == data + 32 * m * m
    else:
        cache = 4 * m * m if "solver_options" not in params else min(2**20, 4 * m * m)
        assert nbytes == data + cache + 8 * 200 * m
    assert est.memory_bytes(200) == nbytes - data
    with mmcedu.config_context(memory_budget=nbytes):
        est.fit(X)
    with mmcedu.config_context(memory_budget=nbytes - 1):
        with pytest.raises(MemoryBudgetError, match="max_samples"):
            est.fit(X)

    class Mine(SupportVectorClustering):
        pass

    assert Mine(gamma=5.0, **params).memory_bytes(200, 2) == nbytes
