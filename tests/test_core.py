"""Unit tests for the shared core: kernels, metrics, datasets, balance, solver checks, tables."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf_kernel
from sklearn.preprocessing import KernelCenterer

from mmcedu import balance, datasets, kernels, metrics
from mmcedu._cvxpy import solve_cvxpy
from mmcedu._validation import check_n_clusters
from mmcedu.exceptions import SolverError, SolverWarning
from mmcedu_lab.report import Table

RNG = np.random.default_rng(0)


# --------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("gamma", [None, 0.01, 0.5, 3.0])
def test_rbf_kernel_equals_sklearn(gamma):
    X = RNG.normal(size=(30, 4))
    Y = RNG.normal(size=(7, 4))
    g = kernels.median_gamma(X) if gamma is None else gamma  # None: the median heuristic on X
    np.testing.assert_allclose(kernels.rbf_kernel(X, gamma=gamma), sk_rbf_kernel(X, gamma=g))
    np.testing.assert_allclose(kernels.rbf_kernel(X, Y, gamma=gamma), sk_rbf_kernel(X, Y, gamma=g))
    assert np.all(np.diag(kernels.rbf_kernel(X, gamma=gamma)) == 1.0)
    np.testing.assert_allclose(kernels.kernel_matrix(X, "rbf", gamma), sk_rbf_kernel(X, gamma=g))
    np.testing.assert_allclose(kernels.kernel_matrix(X, "linear"), X @ X.T)


def _median_by_definition(X):
    d2 = [np.sum((a - b) ** 2) for a, b in itertools.combinations(np.asarray(X, float), 2)]
    d2 = [v for v in d2 if v > 0]
    return 1.0 / (2.0 * float(np.median(d2)))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(1, 4), st.integers(0, 2**31 - 1), st.booleans())
def test_median_gamma_is_the_median_heuristic(n, d, seed, duplicates):
    X = np.random.default_rng(seed).normal(size=(n, d))
    if duplicates:  # identical rows have distance 0 and do not count
        X[n // 2 :] = X[0]
    if np.all(X == X[0]):
        assert kernels.median_gamma(X) == 1.0
    else:
        assert kernels.median_gamma(X) == pytest.approx(_median_by_definition(X), rel=1e-12)


def test_median_gamma_subsamples_large_data_deterministically():
    import tracemalloc

    X = np.random.default_rng(1).normal(size=(20_000, 3))
    tracemalloc.start()
    g1 = kernels.median_gamma(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.01 * 8 * X.shape[0] ** 2  # no n x n array (3.2 GB here)
    assert g1 == kernels.median_gamma(X)  # fixed seed
    # the pairs of 1000 random rows estimate the median over all pairs closely
    from scipy.spatial.distance import pdist

    assert g1 == pytest.approx(1 / (2 * np.median(pdist(X[:3000], "sqeuclidean"))), rel=0.05)
    assert kernels.median_gamma(X, max_samples=50) != g1
    assert kernels.median_gamma(np.ones((5, 2))) == 1.0  # no positive distance
    with pytest.raises(ValueError, match="2-D"):
        kernels.median_gamma(np.ones(5))


def test_max_distance_gamma_is_the_umc_rls_rule():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]])  # largest distance 4
    assert kernels.max_distance_gamma(X) == pytest.approx(1 / (0.5 * 4) ** 2)
    assert kernels.max_distance_gamma(X, 0.25, convention="two_sigma_squared") == pytest.approx(0.5)
    assert kernels.max_distance_gamma(np.zeros((3, 2))) == 1.0


@pytest.mark.parametrize("convention", ["two_sigma_squared", "sigma_squared"])
def test_width_conventions_match_their_formulas(convention):
    X = RNG.normal(size=(20, 3))
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    sigma = 1.7
    direct = np.exp(-d2 / (2 * sigma**2)) if convention == "two_sigma_squared" else np.exp(-d2 / sigma**2)
    gamma = kernels.gamma_from_sigma(sigma, convention=convention)
    np.testing.assert_allclose(kernels.rbf_kernel(X, gamma=gamma), direct, atol=1e-12)
    assert kernels.sigma_from_gamma(gamma, convention=convention) == pytest.approx(sigma)


def test_width_conventions_reject_bad_values():
    with pytest.raises(ValueError, match="positive"):
        kernels.gamma_from_sigma(0.0)
    with pytest.raises(ValueError, match="convention"):
        kernels.gamma_from_sigma(1.0, convention="sigma")


def test_width_grid_references():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]])  # distances 1, 3, 4
    assert kernels.pairwise_distance_range(X) == (1.0, 4.0)
    Z = RNG.normal(size=(300, 3))
    from scipy.spatial.distance import pdist

    d = pdist(Z)
    for block in (1, 1000, 2**22):  # blocked computation equals the full one
        lo, hi = kernels.pairwise_distance_range(Z, block_size=block)
        assert lo == pytest.approx(d.min()) and hi == pytest.approx(d.max())
    np.testing.assert_allclose(kernels.width_grid(X, [0.5, 1.0]), [2.0, 4.0])
    np.testing.assert_allclose(kernels.width_grid(X, [0.5, 1.0], reference="range"), [1.5, 3.0])
    np.testing.assert_allclose(
        kernels.gamma_grid(X, fractions=[0.5], convention="sigma_squared"), [1 / 4.0]
    )


def test_laplacians_null_vectors_and_definitions():
    X = RNG.normal(size=(25, 2))
    K = kernels.rbf_kernel(X, gamma=0.5)
    d = K.sum(1)
    L = kernels.unnormalized_laplacian(K)
    Ln = kernels.normalized_laplacian(K)
    np.testing.assert_allclose(L, np.diag(d) - K)
    np.testing.assert_allclose(Ln, np.eye(25) - K / np.sqrt(np.outer(d, d)))
    np.testing.assert_allclose(L @ np.ones(25), 0, atol=1e-12)
    np.testing.assert_allclose(Ln @ np.sqrt(d), 0, atol=1e-12)
    assert np.linalg.eigvalsh(Ln).min() > -1e-12 and np.linalg.eigvalsh(Ln).max() < 2 + 1e-12


def test_normalized_laplacian_rejects_isolated_point():
    K = np.eye(3)
    K[0, 0] = 0.0  # sample 0 has zero degree
    with pytest.raises(ValueError, match="zero degree"):
        kernels.normalized_laplacian(K)


def test_center_kernel_equals_feature_space_centring():
    X = RNG.normal(size=(15, 3))
    K = X @ X.T
    Xc = X - X.mean(0)
    np.testing.assert_allclose(kernels.center_kernel(K), Xc @ Xc.T, atol=1e-12)
    Kr = kernels.rbf_kernel(X, gamma=0.3)
    np.testing.assert_allclose(kernels.center_kernel(Kr), KernelCenterer().fit_transform(Kr))


def test_nystroem_factor_exact_with_all_landmarks_and_matches_sklearn():
    X = RNG.normal(size=(40, 3))
    K = kernels.rbf_kernel(X, gamma=0.4)
    Phi, landmarks = kernels.nystroem_factor(X, 40, gamma=0.4, random_state=0)
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-6)
    Phi, landmarks = kernels.nystroem_factor(X, 10, gamma=0.4, random_state=0)
    assert Phi.shape[0] == 40 and Phi.shape[1] <= 10 and landmarks.size == 10
    # Same landmarks => same approximation as scikit-learn's Nystroem
    ny = Nystroem(gamma=0.4, n_components=10).fit(X[landmarks])
    Z = ny.transform(X)
    np.testing.assert_allclose(Phi @ Phi.T, Z @ Z.T, atol=1e-6)
    with pytest.raises(ValueError, match="n_components"):
        kernels.nystroem_factor(X, 0)


def test_check_kernel_matrix_messages():
    with pytest.raises(ValueError, match="square"):
        kernels.check_kernel_matrix(np.ones((3, 2)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        kernels.check_kernel_matrix(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        kernels.check_kernel_matrix(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"smallest eigenvalue is -1"):
        kernels.check_kernel_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]), psd=True)
    K = kernels.check_kernel_matrix(np.eye(3), psd=True)
    assert K.shape == (3, 3)
    with pytest.raises(ValueError, match="kernel must be"):
        kernels.kernel_matrix(np.eye(3), kernel="poly")


# --------------------------------------------------------------------------- metrics
def _brute_force_error(y_true, y_pred):
    """Error minimised over every injective relabelling of the predicted clusters."""
    classes, clusters = np.unique(y_true), np.unique(y_pred)
    targets = list(classes) + [None] * max(0, len(clusters) - len(classes))
    best = 0
    for perm in itertools.permutations(targets, len(clusters)):
        mapped = np.array([perm[np.searchsorted(clusters, c)] for c in y_pred], dtype=object)
        best = max(best, int(np.sum(mapped == y_true)))
    return 1 - best / len(y_true)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=0, max_value=2**31 - 1),
)
def test_clustering_error_equals_brute_force(k_true, k_pred, n, seed):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, k_true, n)
    y_pred = rng.integers(0, k_pred, n) * 7 + 3  # arbitrary label values
    assert metrics.clustering_error(y_true, y_pred) == pytest.approx(
        _brute_force_error(y_true, y_pred)
    )


def test_clustering_error_properties():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert metrics.clustering_error(y, [5, 5, 9, 9, 1, 1]) == 0.0
    assert metrics.clustering_accuracy(y, [5, 5, 9, 9, 1, 1]) == 1.0
    assert metrics.clustering_error(y, np.zeros(6)) == pytest.approx(4 / 6)
    mapping, n_correct = metrics.best_matching(y, [5, 5, 9, 9, 1, 1])
    assert mapping == {5: 0, 9: 1, 1: 2} and n_correct == 6
    with pytest.raises(ValueError, match="same length"):
        metrics.clustering_error([0, 1], [0])
    assert metrics.adjusted_rand_score(y, [5, 5, 9, 9, 1, 1]) == 1.0


# --------------------------------------------------------------------------- datasets
@pytest.mark.parametrize(
    "make",
    [
        datasets.two_circles,
        datasets.jointed_circles,
        datasets.two_gaussians,
        datasets.moons,
        datasets.blobs,
    ],
)
def test_generated_datasets_are_seeded_and_shaped(make):
    X1, y1 = make(random_state=3)
    X2, y2 = make(random_state=3)
    X3, _ = make(random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert X1.ndim == 2 and X1.shape[0] == y1.shape[0] and np.all(np.isfinite(X1))


def test_jointed_circles_touch_at_the_origin():
    X, y = datasets.jointed_circles(n_samples=400, noise=0.0, random_state=0)
    np.testing.assert_allclose(np.linalg.norm(X[y == 0] - [-1, 0], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(X[y == 1] - [1, 0], axis=1), 1.0)


def test_two_gaussians_weights():
    X, y = datasets.two_gaussians(n_samples=100, weights=(0.8, 0.2))
    assert np.bincount(y).tolist() == [80, 20]
    with pytest.raises(ValueError, match="weights"):
        datasets.two_gaussians(weights=(1.0, -1.0))


def test_iris_and_digits():
    X, y = datasets.iris()
    assert X.shape == (150, 4) and set(y) == {0, 1, 2}
    X, y = datasets.digits(classes=(3, 8), n_per_class=90, random_state=0, scale=True)
    assert X.shape == (180, 64) and sorted(set(y)) == [3, 8]
    assert np.bincount(y)[[3, 8]].tolist() == [90, 90] and X.max() <= 1.0
    X2, _ = datasets.digits(classes=(3, 8), n_per_class=90, random_state=0, scale=True)
    np.testing.assert_array_equal(X, X2)
    with pytest.raises(ValueError, match="only"):
        datasets.digits(classes=(1,), n_per_class=10_000)
    with pytest.raises(ValueError, match="digits 0..9"):
        datasets.digits(classes=(11,))


# --------------------------------------------------------------------------- balance
def test_max_imbalance_and_infeasible_constraint():
    assert balance.max_imbalance(100, 0.1) == 10
    assert balance.max_imbalance(11, 0.1) == 1
    with pytest.raises(ValueError, match="cannot be met"):
        balance.max_imbalance(11, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        balance.max_imbalance(1, 0.5)


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=2, max_value=10), st.integers(min_value=0, max_value=10),
       st.integers(0, 2**31 - 1))
def test_balanced_sign_is_the_best_balanced_labeling(n, l, seed):
    if l < n % 2:
        return
    f = np.random.default_rng(seed).normal(size=n)
    y = balance.balanced_sign(f, l)
    assert balance.is_balanced(y, l)
    best = max(float(f @ z) for z in balance.balanced_labelings(n, l, fix_first=False))
    assert float(f @ y) == pytest.approx(best)


def test_balanced_labelings_count():
    from math import comb

    n, l = 8, 2
    ys = list(balance.balanced_labelings(n, l, fix_first=False))
    assert len(ys) == sum(comb(n, k) for k in range(n + 1) if abs(2 * k - n) <= l)
    assert len(list(balance.balanced_labelings(n, l))) == len(ys) // 2


# --------------------------------------------------------------------------- validation
def test_check_n_clusters():
    check_n_clusters(5, 3)
    with pytest.raises(ValueError, match="too few"):
        check_n_clusters(2, 3)
    with pytest.raises(ValueError, match="too few"):
        check_n_clusters(1, 1)


def test_solve_cvxpy_status_checks():
    import cvxpy as cp

    x = cp.Variable()
    prob = cp.Problem(cp.Minimize((x - 2) ** 2))
    stats = solve_cvxpy(prob, default="CLARABEL")
    assert stats["status"] == "optimal" and stats["objective"] == pytest.approx(0, abs=1e-7)
    assert stats["n_iter"] == prob.solver_stats.num_iters and stats["solver"] == "CLARABEL"
    with pytest.raises(SolverError, match="infeasible"):
        solve_cvxpy(cp.Problem(cp.Minimize(x), [x >= 1, x <= 0]), default="CLARABEL")
    # One SCS iteration on a badly scaled problem cannot converge: inaccurate or failed.
    y = cp.Variable(5)
    A = np.random.default_rng(0).normal(size=(20, 5)) * 1e3
    prob = cp.Problem(cp.Minimize(cp.norm(A @ y - 1)), [y >= 0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            solve_cvxpy(prob, "SCS", solver_options={"max_iters": 1})
        except SolverError as exc:
            assert "SCS" in str(exc)
        else:
            assert any(issubclass(w.category, SolverWarning) and "SCS" in str(w.message) for w in caught)


# --------------------------------------------------------------------------- report
def test_table_renders():
    t = Table([["a", 1.23456, 3], ["b", None, 4]], ["name", "x", "n"], floatfmt=".2f", title="T")
    md = t._repr_markdown_()
    assert "| a | 1.23 | 3 |" in md and md.startswith("**T**")
    assert "1.23" in str(t) and t.column("n") == [3, 4]
    assert "| 2 \\| 3 |" in Table([["2 | 3"]], ["a"])._repr_markdown_()
    with pytest.raises(ValueError, match="cells"):
        Table([[1]], ["a", "b"])
    t = Table([[1.5, 2e-5]], ["x", "gap"], floatfmt=".2f", formats={"gap": ".1e"})
    assert "| 1.50 | 2.0e-05 |" in t._repr_markdown_()
    with pytest.raises(ValueError, match="do not exist"):
        Table([[1]], ["a"], formats={"b": ".1f"})
