"""SDP maximum margin clustering: exact dual, relaxation vs brute force, KKT, rounding, bad input."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmcedu import SDPMMC, datasets
from mmcedu.balance import balanced_labelings, is_balanced, max_imbalance
from mmcedu.exceptions import SolverError, SolverWarning
from mmcedu.kernels import center_kernel, rbf_kernel
from mmcedu.metrics import clustering_error
from mmcedu.sdp_mmc import (
    eigenvector_rounding,
    randomized_rounding,
    solve_sdp_mmc,
    svm_dual_objective,
)
from mmcedu_lab.sdp_mmc import brute_force_mmc, kkt_residuals

ACCURATE = {"cvxpy_solver": "CLARABEL"}  # interior point: tight duals on tiny problems


def _kernel(n=10, distance=6.0, gamma=0.5, seed=0, weights=(0.5, 0.5)):
    X, y = datasets.two_gaussians(n, distance=distance, weights=weights, random_state=seed)
    return center_kernel(rbf_kernel(X, gamma=gamma)), X, y


def _qp_oracle(K, y, C):
    """omega(y) by cvxpy (Clarabel): an independent solver of the same box QP."""
    n = len(y)
    G = K * np.outer(y, y)
    a = cp.Variable(n)
    cons = [a >= 0] + ([a <= C] if C is not None else [])
    prob = cp.Problem(cp.Maximize(2 * cp.sum(a) - cp.quad_form(a, cp.psd_wrap(G))), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


# ---------------------------------------------------------------- the exact SVM dual
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 12),
    C=st.sampled_from([0.1, 1.0, 10.0, None]),
    gamma=st.floats(0.05, 2.0),
    linear=st.booleans(),
)
def test_svm_dual_objective_matches_independent_qp_solver(seed, n, C, gamma, linear):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    # a linear kernel makes G singular (rank <= 2): the hard case for the active-set solver
    K = center_kernel(X @ X.T if linear else rbf_kernel(X, gamma=gamma))
    y = rng.choice([-1, 1], n)
    y[0], y[1] = 1, -1
    omega, alpha = svm_dual_objective(K, y, C, return_alpha=True)
    oracle = _qp_oracle(K, y, C)
    if np.isinf(omega):  # hard margin without a separator through the origin
        assert C is None and (np.isinf(oracle) or oracle > 1e8)
        return
    assert np.all(alpha >= 0) and (C is None or np.all(alpha <= C + 1e-12))
    assert omega == pytest.approx(oracle, rel=1e-6, abs=1e-6)
    # the returned alpha attains the returned value
    G = K * np.outer(y, y)
    assert 2 * alpha.sum() - alpha @ G @ alpha == pytest.approx(omega, rel=1e-9, abs=1e-9)


def test_svm_dual_objective_symmetry_and_scaling():
    K, _, y = _kernel(8, seed=3)
    ypm = np.where(y == 0, 1, -1)
    w = svm_dual_objective(K, ypm, 1.0)
    assert svm_dual_objective(K, -ypm, 1.0) == pytest.approx(w, rel=1e-10)
    # omega_{sK, C}(y) = omega_{K, sC}(y) / s  (substitute alpha = beta / s)
    s = 3.0
    assert svm_dual_objective(s * K, ypm, 1.0) == pytest.approx(
        svm_dual_objective(K, ypm, s * 1.0) / s, rel=1e-7
    )
    # soft margin is the hard margin with a box: omega_C <= omega_hard, and <= 2 C n
    assert w <= svm_dual_objective(K, ypm, None) + 1e-9
    assert w <= 2 * 1.0 * len(ypm) + 1e-9


def test_svm_dual_objective_refuses_zero_one_labels():
    K, _, y = _kernel(6)
    with pytest.raises(ValueError, match="2 \\* y - 1"):
        svm_dual_objective(K, y, 1.0)
    assert svm_dual_objective(K, 2 * y - 1, 1.0) > 0


def test_hard_margin_single_cluster_is_unbounded():
    K, _, _ = _kernel(6)
    assert np.isinf(svm_dual_objective(K, np.ones(6), None))  # K e = 0 after centring


def test_brute_force_is_the_minimum_over_balanced_labelings():
    K, _, _ = _kernel(8, seed=5)
    y_bf, w_bf = brute_force_mmc(K, 1.0, 0.25)
    l = max_imbalance(8, 0.25)
    assert is_balanced(y_bf, l)
    values = [svm_dual_objective(K, y, 1.0) for y in balanced_labelings(8, l)]
    assert w_bf == pytest.approx(min(values), rel=1e-12)


# ---------------------------------------------------------------- the relaxation
@pytest.mark.parametrize("C", [1.0, None])
@pytest.mark.parametrize("seed,distance,n", [(0, 2.0, 8), (1, 4.0, 10), (2, 6.0, 12), (3, 1.0, 9)])
def test_sdp_is_a_lower_bound_on_brute_force(seed, distance, n, C):
    K, _, _ = _kernel(n, distance=distance, seed=seed)
    sol = solve_sdp_mmc(K, C, 0.2, **ACCURATE)
    _, w_bf = brute_force_mmc(K, C, 0.2)
    assert sol.delta <= w_bf + 1e-6 * max(1.0, w_bf)
    # the rounded labeling is feasible for MMC, so its omega is an upper bound
    y = eigenvector_rounding(sol.M, sol.l)
    assert is_balanced(y, sol.l)
    assert svm_dual_objective(K, y, C) >= w_bf - 1e-9


def test_sdp_with_default_scs_is_a_lower_bound():
    K, _, _ = _kernel(10, distance=3.0, seed=4)
    sol = solve_sdp_mmc(K, 1.0, 0.2)
    assert sol.info["solver"] == "SCS" and sol.info["status"] == "optimal"
    _, w_bf = brute_force_mmc(K, 1.0, 0.2)
    assert sol.delta <= w_bf * (1 + 1e-3)


@pytest.mark.parametrize("C", [1.0, None])
def test_sdp_at_a_rank_one_M_is_exactly_omega(C):
    """Fixing M = y y^T reduces the SDP to the SVM dual: the Schur-complement step."""
    K, _, y = _kernel(8, seed=6)
    for ypm in (np.where(y == 0, 1, -1), np.array([1, -1] * 4)):
        sol = solve_sdp_mmc(
            K, C, 0.25, fix_M=np.outer(ypm, ypm), cvxpy_solver="SCS",
            solver_options={"eps": 1e-9, "max_iters": 200_000},
        )
        assert sol.delta == pytest.approx(svm_dual_objective(K, ypm, C), rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_well_separated_labels_equal_brute_force_and_bound_is_tight(seed):
    model = SDPMMC(random_state=0, gamma=0.1, balance=0.2, **ACCURATE).fit(
        datasets.two_gaussians(10, distance=10.0, random_state=seed)[0]
    )
    K = model.kernel_matrix_
    y_bf, w_bf = brute_force_mmc(K, 1.0, 0.2)
    y_sdp = np.where(model.labels_ == 0, 1, -1)
    assert np.array_equal(y_sdp, y_bf) or np.array_equal(y_sdp, -y_bf)
    # tight: the SDP value is attained by the rank-one M = y y^T of the brute-force optimum
    assert model.objective_ == pytest.approx(w_bf, rel=1e-5)
    assert model.labeling_objective_ == pytest.approx(w_bf, rel=1e-9)
    # and the dual's alpha is the SVM solution of that labeling
    _, alpha = svm_dual_objective(K, y_bf, 1.0, return_alpha=True)
    np.testing.assert_allclose(model.dual_coef_, alpha, atol=1e-4)


@pytest.mark.parametrize("C", [1.0, None])
def test_kkt_residuals_vanish_at_the_solution(C):
    K, _, _ = _kernel(9, distance=3.0, seed=7)
    sol = solve_sdp_mmc(K, C, 0.2, **ACCURATE)
    res = kkt_residuals(K, sol)
    assert set(res) >= {"gap", "stationarity_M", "compl_block", "compl_M", "compl_balance"}
    for name, value in res.items():  # products of primal and dual: interior-point accuracy
        assert value < (1e-4 if name.startswith("compl") else 1e-6), (name, value)
    # the residuals are not trivially zero: a perturbed primal breaks complementarity
    sol.M = np.eye(9)
    assert kkt_residuals(K, sol)["compl_block"] > 1e-3


def test_balance_constraint_holds_on_unbalanced_data():
    X, _ = datasets.two_gaussians(30, distance=6.0, weights=(0.8, 0.2), random_state=0)
    model = SDPMMC(random_state=0, gamma=0.5, balance=0.1).fit(X)
    l = max_imbalance(30, 0.1)
    y = np.where(model.labels_ == 0, 1, -1)
    assert abs(y.sum()) <= l
    assert np.all(np.abs(model.M_.sum(axis=1)) <= l + 1e-3)
    np.testing.assert_allclose(np.diag(model.M_), 1.0, atol=1e-3)
    assert np.linalg.eigvalsh(model.M_)[0] > -1e-3


# ---------------------------------------------------------------- rounding
def test_eigenvector_rounding_recovers_a_rank_one_M():
    y = np.array([1, -1, -1, 1, 1, -1])
    assert np.array_equal(eigenvector_rounding(np.outer(y, y), 0), y)


def test_randomized_rounding_never_worse_than_eigenvector_and_seeded():
    K, _, _ = _kernel(12, distance=2.0, seed=8)
    sol = solve_sdp_mmc(K, 1.0, 0.2, **ACCURATE)
    y_r, w_r = randomized_rounding(sol.M, K, 1.0, sol.l, n_hyperplanes=30, random_state=0)
    y_e = eigenvector_rounding(sol.M, sol.l)
    assert is_balanced(y_r, sol.l)
    assert w_r == pytest.approx(svm_dual_objective(K, y_r, 1.0))
    assert w_r <= svm_dual_objective(K, y_e, 1.0) + 1e-12
    assert w_r >= sol.delta - 1e-6
    y_r2, _ = randomized_rounding(sol.M, K, 1.0, sol.l, n_hyperplanes=30, random_state=0)
    assert np.array_equal(y_r, y_r2)


def test_randomized_estimator_objective_not_above_eigenvector():
    X, _ = datasets.two_gaussians(20, distance=2.5, random_state=3)
    a = SDPMMC(gamma=0.5, rounding="eigenvector").fit(X)
    b = SDPMMC(gamma=0.5, rounding="randomized", n_hyperplanes=20, random_state=0).fit(X)
    assert b.labeling_objective_ <= a.labeling_objective_ + 1e-9
    assert b.objective_ <= b.labeling_objective_ + 1e-3 * b.labeling_objective_


# ---------------------------------------------------------------- estimator behaviour
def test_fit_on_two_gaussians_and_centred_kernel():
    X, y = datasets.two_gaussians(30, distance=6.0, random_state=1)
    model = SDPMMC(random_state=0, gamma=0.1).fit(X)
    assert clustering_error(y, model.labels_) == 0.0
    np.testing.assert_allclose(model.kernel_matrix_.sum(axis=0), 0.0, atol=1e-10)
    assert model.labels_[0] == 0 and set(model.labels_) == {0, 1}
    assert model.solver_info_["solver"] == "SCS"


def test_hard_margin_estimator_bounds_its_labeling():
    X, _ = datasets.two_gaussians(10, distance=4.0, random_state=4)
    model = SDPMMC(random_state=0, C=None, gamma=0.1, balance=0.2, **ACCURATE).fit(X)
    y = np.where(model.labels_ == 0, 1, -1)
    assert model.labeling_objective_ == pytest.approx(
        svm_dual_objective(model.kernel_matrix_, y, None), rel=1e-9
    )
    _, w_bf = brute_force_mmc(model.kernel_matrix_, None, 0.2)
    assert model.objective_ <= w_bf * (1 + 1e-6) <= model.labeling_objective_ * (1 + 1e-6)


def test_precomputed_and_linear_kernels():
    X, y = datasets.two_gaussians(16, distance=8.0, random_state=2)
    K = rbf_kernel(X, gamma=0.1)
    a = SDPMMC(random_state=0, kernel="precomputed", **ACCURATE).fit(K)
    b = SDPMMC(random_state=0, gamma=0.1, **ACCURATE).fit(X)
    assert np.array_equal(a.labels_, b.labels_)
    c = SDPMMC(random_state=0, kernel="linear", **ACCURATE).fit(X)
    assert clustering_error(y, c.labels_) == 0.0


# ---------------------------------------------------------------- bad input and solver failures
def test_bad_input_errors():
    X = np.random.default_rng(0).standard_normal((6, 2))
    with pytest.raises(ValueError, match="n_samples=1"):
        SDPMMC(random_state=0).fit(X[:1])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SDPMMC(random_state=0).fit(Xn)
    Xi = X.copy()
    Xi[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SDPMMC(random_state=0).fit(Xi)
    with pytest.raises(ValueError, match="n_clusters"):
        SDPMMC(random_state=0).set_params(n_clusters=3)
    with pytest.raises(ValueError, match="balance"):
        SDPMMC(random_state=0, balance=1.5).fit(X)
    with pytest.raises(ValueError, match="odd number of samples"):
        SDPMMC(random_state=0, balance=0.0).fit(X[:5])


def test_non_psd_precomputed_kernel_says_how_far():
    K = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # eigenvalues -1, 1, 3
    with pytest.raises(ValueError, match=r"smallest eigenvalue is -1"):
        SDPMMC(random_state=0, kernel="precomputed").fit(K)
    with pytest.raises(ValueError, match="symmetric"):
        SDPMMC(random_state=0, kernel="precomputed").fit(np.triu(K + 1))


def test_solver_failure_and_inaccuracy_are_reported():
    K, _, _ = _kernel(8)
    with pytest.raises(SolverError, match="OSQP"):
        solve_sdp_mmc(K, 1.0, 0.25, cvxpy_solver="OSQP")
    X = datasets.two_gaussians(8, random_state=0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cvxpy's own generic warning
        warnings.simplefilter("always", SolverWarning)
        with pytest.warns(SolverWarning, match="SCS"):
            SDPMMC(random_state=0, solver_options={"max_iters": 5}).fit(X)


# ---------------------------------------------------------------- measurement and experiments
def test_scaling_reports_time_memory_and_iterations():
    from mmcedu_lab.sdp_mmc import scaling

    rows = scaling([8, 12], memory="tracemalloc")
    assert [r["n"] for r in rows] == [8, 12] and {r["method"] for r in rows} == {"SDP MMC"}
    assert all(r["status"] == "optimal" and r["seconds"] > 0 and r["peak_mb"] > 0 for r in rows)
    assert all(r["n_iter"] > 0 and r["memory"] == "tracemalloc" for r in rows)
    with pytest.raises(ValueError, match="memory"):
        scaling([8], memory="psutil")


def test_table1_is_registered_with_the_paper_column():
    from mmcedu_lab import all_tables
    from mmcedu_lab.registry import PAPER
    from mmcedu_lab.sdp_mmc import DATA_SETS

    assert "sdp_mmc_table1" in all_tables()
    # two Gaussians, two circles and four digit pairs: the rows of Table 1 with an MMC number
    assert set(DATA_SETS) == {"Two Gaussian", "Two Circles"} | {
        f"Digits {p}" for p in ("3-8", "1-7", "2-7", "8-9")
    }
    assert all(PAPER["valizadegan2006gmmc"]["Table 1"][d]["MMC"] >= 0 for d in DATA_SETS)


def test_balance_warning_when_the_bound_decides_the_split():
    from mmcedu.exceptions import BalanceWarning
    from mmcedu.sdp_mmc import balance_moves

    # 32/8 points: the default bound |N+ - N-| <= 4 cannot hold the true split
    X, y = datasets.two_gaussians(40, distance=6.0, weights=(0.8, 0.2), random_state=0)
    with pytest.warns(BalanceWarning, match=r"balance bound.*decided the split.*raise balance"):
        model = SDPMMC(random_state=0, gamma=0.1).fit(X)
    assert model.balance_decided_ >= 0.05 * 40
    assert model.balance_decided_ == balance_moves(model.M_, max_imbalance(40, 0.1))[0]
    # with the bound lifted nothing is moved, and the split is less balanced than the bound
    with warnings.catch_warnings():
        warnings.simplefilter("error", BalanceWarning)
        free = SDPMMC(random_state=0, gamma=0.1, balance=1.0).fit(X)
    assert free.balance_decided_ == 0
    sizes = np.bincount(free.labels_, minlength=2)
    assert abs(int(sizes[0] - sizes[1])) > max_imbalance(40, 0.1)


def test_no_balance_warning_on_balanced_data():
    from mmcedu.exceptions import BalanceWarning

    X, y = datasets.two_gaussians(40, distance=6.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BalanceWarning)
        model = SDPMMC(random_state=0, gamma=0.1).fit(X)
    assert model.balance_decided_ == 0
    assert clustering_error(y, model.labels_) == 0.0


# ---------------------------------------------------------------- the default rounding
def _standardized_iris(classes=None):
    from sklearn.preprocessing import StandardScaler

    X, y = datasets.iris()
    if classes is not None:
        keep = np.isin(y, classes)
        X, y = X[keep], y[keep]
    return StandardScaler().fit_transform(X), y


def test_default_rounding_is_randomized_with_cvxpy_and_beats_the_eigenvector_on_iris():
    # on standardized iris versicolor vs virginica the eigenvector rounding of M_ gives ARI 0.20
    # (k-means 0.43), the randomized rounding of the same M_ 0.81 +- 0.04 (seeds 0-4;
    # benchmarks/results/sdp_mmc_defaults.md)
    from sklearn.metrics import adjusted_rand_score

    X, y = _standardized_iris(classes=[1, 2])
    model = SDPMMC(random_state=0).fit(X)
    assert model.rounding == "auto" and model.rounding_ == "randomized"
    assert adjusted_rand_score(y, model.labels_) >= 0.6
    # never worse by the objective than the eigenvector labels of the same M_
    y_eig = eigenvector_rounding(model.M_, max_imbalance(len(y), 0.1))
    assert model.labeling_objective_ <= svm_dual_objective(model.kernel_matrix_, y_eig, 1.0) + 1e-9
    assert adjusted_rand_score(y, (y_eig < 0).astype(int)) <= 0.3, "the eigenvector labels of M_ miss"


def test_balance_warning_on_iris_with_the_default_rounding():
    # the warning is about the sign of M_'s leading eigenvector, whichever rounding labels the data
    from mmcedu.exceptions import BalanceWarning
    from mmcedu.sdp_mmc import balance_moves

    X, _ = _standardized_iris()
    with pytest.warns(BalanceWarning, match=r"balance bound.*decided the split"):
        model = SDPMMC(random_state=0).fit(X)
    assert model.rounding_ == "randomized"
    assert model.balance_decided_ == balance_moves(model.M_, max_imbalance(150, 0.1))[0] >= 0.05 * 150


def test_auto_rounding_switches_to_the_eigenvector_on_large_lowrank_fits(monkeypatch):
    import mmcedu.sdp_mmc as sdp

    X, _ = datasets.two_gaussians(30, distance=6.0, random_state=0)
    calls = []
    real = sdp.randomized_rounding
    monkeypatch.setattr(sdp, "randomized_rounding", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert SDPMMC(gamma=0.5, solver="lowrank", random_state=0).fit(X).rounding_ == "randomized"
    assert len(calls) == 1
    monkeypatch.setattr(sdp, "_AUTO_RANDOMIZED_MAX_N_LOWRANK", 29)  # 30 samples: above the limit
    low = SDPMMC(gamma=0.5, solver="lowrank", random_state=0).fit(X)
    assert low.rounding_ == "eigenvector" and len(calls) == 1
    assert np.array_equal(low.labels_, (eigenvector_rounding(low.M_, max_imbalance(30, 0.1)) < 0).astype(int))
    # the cvxpy path rounds by random hyperplanes at any n; an explicit choice is kept
    assert SDPMMC(gamma=0.5, random_state=0).fit(X).rounding_ == "randomized"
    assert SDPMMC(gamma=0.5, rounding="eigenvector").fit(X).rounding_ == "eigenvector"
    assert sdp._resolve_rounding("auto", "cvxpy", 10**6) == "randomized"
    assert sdp._resolve_rounding("randomized", "lowrank", 10**6) == "randomized"


# ---------------------------------------------------------------- label-free rule and objective
def _reference_svm_dual_value(G, C):
    """The formula of the former model_selection._svm_dual_value (the reference)."""
    from scipy.optimize import minimize

    n = G.shape[0]

    def f(a):
        Ga = G @ a
        return float(a @ Ga - 2.0 * a.sum()), 2.0 * Ga - 2.0

    res = minimize(f, np.full(n, min(C, 1.0) / 2), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, C)] * n, options={"maxiter": 5000, "ftol": 1e-12, "gtol": 1e-9})
    return -float(res.fun)


def _reference_margin_contrast(est, X, seed, n_labelings=5):
    """The former model_selection.margin_contrast via _objective_sdpmmc, as it computed it."""
    from sklearn.metrics.pairwise import rbf_kernel as sk_rbf_kernel
    from sklearn.utils import check_random_state

    p = est.get_params()
    X = np.asarray(X, dtype=float)
    K = {"precomputed": lambda: X, "linear": lambda: X @ X.T,
         "rbf": lambda: sk_rbf_kernel(X, X, gamma=float(est.gamma_))}[p["kernel"]]()
    labels, C = est.labels_, p["C"]
    if C is None or np.unique(labels).size != 2:
        return np.nan
    if p["center"]:
        K = K - K.mean(axis=0)[None, :] - K.mean(axis=1)[:, None] + K.mean()
    y = np.where(labels == np.unique(labels)[0], 1.0, -1.0)
    rng = check_random_state(seed)
    w = _reference_svm_dual_value(K * np.outer(y, y), C)
    w_rand = np.mean([_reference_svm_dual_value(K * np.outer(ys, ys), C)
                      for ys in (rng.permutation(y) for _ in range(n_labelings))])
    return np.nan if not w_rand > 0 else float(1.0 - w / w_rand)


class _MySDPMMC(SDPMMC):
    pass


@pytest.mark.parametrize("params, data", [
    ({"random_state": 0}, "gaussians"),
    ({"gamma": 2.0, "rounding": "eigenvector", "C": 3}, "moons"),
    ({"kernel": "linear", "random_state": 1, "center": False}, "gaussians"),
    ({"kernel": "precomputed", "random_state": 0, "C": 0.3}, "kernel"),
    ({"solver": "lowrank", "random_state": 0}, "moons"),
    ({"C": None, "balance": 0.3, "random_state": 0}, "gaussians"),
])
def test_objective_contrast_is_the_former_margin_contrast_bit_for_bit(params, data):
    Xg, _ = datasets.two_gaussians(30, distance=3.0, random_state=0)
    X = {"gaussians": Xg, "moons": datasets.moons(30, noise=0.1, random_state=1)[0],
         "kernel": rbf_kernel(Xg, gamma=0.5)}[data]
    for cls in (SDPMMC, _MySDPMMC):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(**params).fit(X)
        for seed in (0, 3):
            got, ref = est.objective_contrast(X, random_state=seed), _reference_margin_contrast(est, X, seed)
            assert (np.isnan(got) and np.isnan(ref)) if params.get("C", 1.0) is None else got == ref
            assert params.get("C", 1.0) is None or 0.0 < got < 1.0


def test_label_free_rule_is_the_comparisons_rule():
    from mmcedu.kernels import gamma_grid, median_gamma

    X, _ = datasets.moons(40, noise=0.1, random_state=0)
    for cls in (SDPMMC, _MySDPMMC):
        rule = cls().label_free_rule(X)
        assert rule == {"param_grid": {"gamma": gamma_grid(X, octaves=(-2, 0, 2, 4, 5, 6, 7, 8))},
                        "criterion": ["transfer_stability"], "tolerance": 0.01}
        assert rule["param_grid"]["gamma"][1] == median_gamma(X)


def test_label_free_tolerance_ties_the_recorded_near_equal_widths():
    """The scale benchmark's recorded SDP MMC searches (two Gaussians, 10^4 and 10^5, search
    seeds 1-4) chose grid points 1 and 2 at tolerance 0; with the rule's tolerance they all
    choose one grid point, the widest."""
    import json
    import pathlib

    from mmcedu.model_selection import _best_index

    path = pathlib.Path(__file__).parents[1] / "benchmarks" / "results" / "label_free_stability.jsonl"
    runs = [r for r in map(json.loads, path.read_text().splitlines())
            if r.get("estimator") == "SDPMMC" and "scores" in r]
    assert len(runs) >= 4 and {r["n"] for r in runs} == {10**4, 10**5}
    tol = SDPMMC().label_free_rule(datasets.moons(40, random_state=0)[0])["tolerance"]
    for r in runs:
        means = np.asarray(r["scores"]["transfer_stability"], dtype=float)
        assert _best_index(means, np.full(8, 2.0), 0.0) == r["best_index"]
        assert _best_index(means, np.full(8, 2.0), tol) == 0, r
    assert {r["best_index"] for r in runs} != {0}  # tolerance 0 did not choose one grid point


# ---------------------------------------------------------------- the kernel factor (n_components)
def _fit_quiet(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


@pytest.mark.parametrize("data", ["gaussians", "iris"])
def test_factor_path_with_every_landmark_matches_the_exact_path(data):
    """n_components = n: Z Z^T is the kernel (to round-off), so the two certified brackets
    overlap (two Gaussians and standardized iris); where the relaxation is nearly tight (two
    Gaussians) the rounded clusters agree, on iris the roundings of the two near-optimal M differ."""
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    X = StandardScaler().fit_transform(load_iris().data) if data == "iris" else (
        datasets.two_gaussians(80, random_state=0)[0])
    n = X.shape[0]
    exact = _fit_quiet(SDPMMC(gamma=0.5, solver="lowrank", random_state=0), X)
    fact = _fit_quiet(SDPMMC(gamma=0.5, n_components=n, random_state=0), X)
    assert fact.solver_info_["solver"] == "lowrank" and fact.solver_info_["n_components"] == n
    assert fact.M_ is None and fact.kernel_matrix_ is None and fact.M_factor_.shape[0] == n
    lo_e, hi_e = exact.objective_, exact.objective_ + exact.duality_gap_
    lo_f, hi_f = fact.objective_, fact.objective_ + fact.duality_gap_
    assert lo_f <= hi_e + 1e-6 and lo_e <= hi_f + 1e-6, ((lo_e, hi_e), (lo_f, hi_f))
    assert fact.duality_gap_ <= 1e-3 * max(hi_f, 1.0)
    if data == "gaussians":
        assert abs(fact.labeling_objective_ - exact.labeling_objective_) <= 1e-5 * exact.labeling_objective_
        assert clustering_error(exact.labels_, fact.labels_) <= 0.05


@pytest.mark.parametrize("seed, weights, balance", [(0, (0.5, 0.5), 0.1), (1, (0.8, 0.2), 0.1),
                                                    (2, (0.7, 0.3), 0.3)])
def test_factor_bracket_contains_the_sdp_value_of_the_same_factor_kernel(seed, weights, balance):
    """The certificate is for Z Z^T: Clarabel's SDP value on that kernel lies in the bracket, and
    the lower bound holds for any alpha in the box and any balance multipliers."""
    from mmcedu.sdp_mmc import factor_lower_bound

    X, _ = datasets.two_gaussians(40, weights=weights, random_state=seed)
    est = _fit_quiet(SDPMMC(gamma=0.5, n_components=15, balance=balance, random_state=0), X)
    Z = est._kernel_factor(X)  # the fitted map: the factor the solver used
    assert np.allclose(Z.mean(axis=0), 0.0)
    delta = solve_sdp_mmc(Z @ Z.T, 1.0, balance, **ACCURATE).delta
    assert est.objective_ <= delta * (1 + 1e-7)
    assert delta <= (est.objective_ + est.duality_gap_) * (1 + 1e-7)
    l, rng = max_imbalance(40, balance), np.random.default_rng(seed)
    for _ in range(3):
        alpha, lam = rng.uniform(0.0, 1.0, 40), 0.1 * rng.standard_normal(40)
        assert factor_lower_bound(Z, alpha, l, est.M_factor_, lam)[0] <= delta * (1 + 1e-7)
        assert factor_lower_bound(Z, alpha, l, est.M_factor_)[0] <= delta * (1 + 1e-7)


def test_factor_path_builds_no_n_by_n_array(monkeypatch):
    """Memory linear in n, no n x n routine reached, and a measured peak below a quarter of one
    n x n array."""
    import tracemalloc

    import mmcedu.sdp_mmc as sdp

    est = SDPMMC(gamma=0.5, n_components=20, random_state=0)
    b1, b2 = est.memory_bytes(10**5), est.memory_bytes(2 * 10**5)
    assert 1.9 * b1 <= b2 <= 2.01 * b1 and b1 < 0.01 * 8 * 10**10
    for name in ("kernel_matrix", "center_kernel", "svm_dual_objective", "sdp_lower_bound",
                 "solve_sdp_mmc_lowrank", "solve_sdp_mmc"):
        monkeypatch.setattr(sdp, name, lambda *a, _name=name, **k: pytest.fail(f"{_name} was called"))
    n = 3000
    X, y = datasets.two_gaussians(n, random_state=0)
    tracemalloc.start()
    try:
        est.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est.memory_bytes(n) and peak < 8 * n * n / 4, peak
    assert est.solver_info_["converged"] and clustering_error(y, est.labels_) < 0.15


def test_auto_solver_is_cvxpy_for_small_n_and_the_hard_margin_lowrank_above():
    est = SDPMMC()
    assert est._resolved_solver(200) == "cvxpy" and est._resolved_solver(201) == "lowrank"
    assert SDPMMC(C=None)._resolved_solver(10**4) == "cvxpy"
    assert SDPMMC(n_components=50)._resolved_solver(20) == "lowrank"
    assert SDPMMC(solver="cvxpy")._resolved_solver(10**4) == "cvxpy"
    assert SDPMMC().memory_bytes(600) == 128 * 600**2 and SDPMMC().memory_bytes(200) == 2000 * 200**2
    X, _ = datasets.two_gaussians(201, random_state=0)
    model = SDPMMC(gamma=0.5, random_state=0).fit(X)
    assert model.solver_info_["solver"] == "lowrank" and model.M_.shape == (201, 201)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_factor_path_kernels_and_the_objective_contrast(kernel):
    X, y = datasets.two_gaussians(60, distance=5.0, random_state=0)
    fact = _fit_quiet(SDPMMC(kernel=kernel, n_components=30, random_state=0), X)
    assert clustering_error(y, fact.labels_) <= 0.05
    assert fact.objective_ <= fact.labeling_objective_
    assert 0.0 < fact.objective_contrast(X, random_state=0) < 1.0
    if kernel == "linear":  # two features: Z is the centred X, the exact linear kernel
        exact = SDPMMC(kernel="linear", solver="lowrank", random_state=0).fit(X)
        assert abs(fact.objective_ - exact.objective_) <= fact.duality_gap_ + exact.duality_gap_ + 1e-8


def test_factor_path_randomized_rounding_is_never_worse_than_the_eigenvector():
    X, _ = datasets.moons(60, noise=0.1, random_state=0)
    eig = SDPMMC(n_components=40, rounding="eigenvector", random_state=0).fit(X)
    rnd = SDPMMC(n_components=40, rounding="randomized", n_hyperplanes=20, random_state=0).fit(X)
    assert rnd.rounding_ == "randomized"
    assert SDPMMC(n_components=40, random_state=0).fit(X).rounding_ == "randomized"  # n <= 200
    assert rnd.labeling_objective_ <= eig.labeling_objective_ * (1 + 1e-9)
