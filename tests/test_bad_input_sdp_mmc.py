"""SDPMMC on bad or edge-case input: every result is right, warned, or a clear error.

Categories: bad data (huge / tiny scales, a kernel that is not finite, identical samples),
bad parameters (solver_options keys, solvers), degenerate kernels, solver limits (SCS and
Clarabel stopped early, the low-rank solver at max_iter), interrupts, memory and time guards,
and the low-rank solver against the cvxpy one.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mmcedu
from mmcedu import SDPMMC, metrics
from mmcedu._cvxpy import _interrupted, check_solver_options
from mmcedu.datasets import two_gaussians
from mmcedu.exceptions import (
    DegenerateDataWarning,
    MemoryBudgetError,
    SolverError,
    SolverWarning,
)
from mmcedu.kernels import center_kernel, rbf_kernel
from mmcedu.sdp_mmc import sdp_lower_bound, solve_sdp_mmc, solve_sdp_mmc_lowrank

RS = np.random.RandomState(0)
X = np.r_[RS.randn(10, 2) * 0.3, RS.randn(10, 2) * 0.3 + [4.0, 0.0]]
Y = np.repeat([0, 1], 10)


def fit_recording(est, data):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        est.fit(data)
    return est, ws


def said(ws, pattern, category=Warning):
    return any(issubclass(w.category, category) and re.search(pattern, str(w.message)) for w in ws)


class _Reached(Exception):
    """The solver was reached: the guard under test did not stop the fit first."""


@pytest.fixture
def forbid_solve(monkeypatch):
    import cvxpy as cp

    def boom(self, *a, **k):
        raise _Reached("the solver was reached")

    monkeypatch.setattr(cp.Problem, "solve", boom)


# ------------------------------------------------------------------------------------------
# Scales
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("scale", [1e154, 1e200, 1e300])
def test_huge_finite_data_is_refused_with_a_scale_message(kernel, scale, forbid_solve):
    with pytest.raises(ValueError, match=r"overflow.*Standardize"):
        SDPMMC(random_state=0, kernel=kernel).fit(X * scale)


def test_tiny_data_is_refused_with_a_scale_message(forbid_solve):
    with pytest.raises(ValueError, match=r"underflow.*Standardize"):
        SDPMMC(random_state=0).fit(X * 1e-150)


@pytest.mark.parametrize("scale", [1e-8, 1e3, 1e8])
def test_default_gamma_follows_the_data_scale(scale):
    m = SDPMMC(random_state=0).fit(X * scale)
    assert metrics.clustering_error(Y, m.labels_) == 0.0
    assert np.isfinite(m.gamma_) and m.gamma_ > 0


def test_a_kernel_equal_to_the_identity_is_warned():
    _, ws = fit_recording(SDPMMC(random_state=0, gamma=1e12), X)
    assert said(ws, r"identity.*gamma", DegenerateDataWarning)


def test_a_kernel_that_is_not_finite_is_named(monkeypatch, forbid_solve):
    import mmcedu.sdp_mmc as mod

    monkeypatch.setattr(mod, "kernel_matrix", lambda *a, **k: np.full((20, 20), np.inf))
    with pytest.raises(ValueError, match=r"rbf kernel matrix is not finite.*standardize"):
        SDPMMC(random_state=0, gamma=0.5).fit(X)


# ------------------------------------------------------------------------------------------
# Degenerate data
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_identical_points_give_one_cluster_with_a_warning(kernel, forbid_solve):
    m, ws = fit_recording(SDPMMC(random_state=0, kernel=kernel), np.ones((20, 2)))
    assert said(ws, r"identical.*cluster 0", DegenerateDataWarning)
    assert m.n_clusters_ == 1 and set(m.labels_) == {0} and m.n_iter_ == 0
    # every labeling has the same objective 2 n C when the centred kernel is zero
    assert m.objective_ == m.labeling_objective_ == pytest.approx(2 * 20 * 1.0)


def test_a_constant_precomputed_kernel_gives_one_cluster(forbid_solve):
    m, ws = fit_recording(SDPMMC(random_state=0, kernel="precomputed"), np.ones((20, 20)))
    assert said(ws, r"identical", DegenerateDataWarning) and m.n_clusters_ == 1


def test_an_indefinite_precomputed_kernel_is_refused():
    with pytest.raises(ValueError, match="semidefinite"):
        SDPMMC(random_state=0, kernel="precomputed").fit(np.eye(20) - 0.3 * np.ones((20, 20)))


def test_too_few_samples_for_the_balance_is_refused():
    with pytest.raises(ValueError, match="balance"):
        SDPMMC(random_state=0, balance=0.0).fit(np.r_[X, [[0, 0]]])


# ------------------------------------------------------------------------------------------
# Parameters of the back end
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cvxpy_solver, options, hint",
    [
        (None, {"max_iter": 50}, "max_iters"),
        ("SCS", {"bogus": 1}, "max_iters"),
        ("CLARABEL", {"max_iters": 5}, "max_iter"),
        ("clarabel", {"eps": 1e-6}, "tol_gap_rel"),
    ],
)
def test_misspelt_solver_options_are_named_before_solving(cvxpy_solver, options, hint,
                                                          forbid_solve):
    key = next(iter(options))
    with pytest.raises(ValueError, match=rf"solver_options key '{key}'.*accepts:.*{hint}"):
        SDPMMC(random_state=0, cvxpy_solver=cvxpy_solver, solver_options=options).fit(X)


def test_cvxpy_keywords_are_valid_options():
    check_solver_options("SCS", {"verbose": False, "max_iters": 10, "eps_abs": 1e-5})
    check_solver_options("CLARABEL", {"verbose": False, "max_iter": 10, "tol_gap_rel": 1e-6})
    check_solver_options("ECOS", {"anything": 1})  # unknown back ends are left to themselves


def test_a_back_end_typeerror_becomes_a_valueerror(monkeypatch):
    import cvxpy as cp

    def refuse(self, *a, **k):
        raise TypeError("'foo' is an invalid keyword argument for this function")

    monkeypatch.setattr(cp.Problem, "solve", refuse)
    with pytest.raises(ValueError, match=r"solver_options .* refused by the cvxpy back end ECOS"):
        SDPMMC(random_state=0, cvxpy_solver="ECOS", solver_options={"foo": 1}).fit(X)


@pytest.mark.parametrize("name", ["FOO", "OSQP"])
def test_an_unusable_cvxpy_solver_is_named(name):
    with pytest.raises((ValueError, SolverError), match=name):
        SDPMMC(random_state=0, cvxpy_solver=name).fit(X)


def test_solve_sdp_mmc_non_square_kernel_blames_the_shape():
    with pytest.raises(ValueError, match="square"):
        solve_sdp_mmc(np.ones((3, 2)))


# ------------------------------------------------------------------------------------------
# Solver limits: one behaviour for SCS and Clarabel, and objective_ stays a lower bound
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sdp_value():
    """The SDP value on two_gaussians(40), solved accurately."""
    Xg, _ = two_gaussians(40, random_state=0)
    m = SDPMMC(random_state=0, solver_options={"eps": 1e-7, "max_iters": 100000}).fit(Xg)
    return Xg, m.objective_


@pytest.mark.parametrize(
    "cvxpy_solver, options",
    [("SCS", {"max_iters": 5}), ("CLARABEL", {"max_iter": 2})],
)
def test_a_back_end_stopped_early_warns_and_reports_a_certified_bound(cvxpy_solver, options,
                                                                      sdp_value):
    """SCS stopped after 5 iterations used to return objective_ = -57 (not a bound) with
    only cvxpy's warning, while Clarabel at its limit raised."""
    Xg, value = sdp_value
    m, ws = fit_recording(SDPMMC(random_state=0, cvxpy_solver=cvxpy_solver, solver_options=options), Xg)
    assert said(ws, rf"{cvxpy_solver} stopped early.*not a lower bound.*certified lower bound",
                SolverWarning)
    assert m.solver_info_["status"] in ("optimal_inaccurate", "user_limit")
    assert 0.0 <= m.objective_ <= value + 1e-6 * max(1.0, value)
    assert m.objective_ <= m.labeling_objective_
    assert m.n_iter_ == {"SCS": 5, "CLARABEL": 2}[cvxpy_solver]


def test_an_accurate_solve_does_not_warn(sdp_value):
    Xg, value = sdp_value
    m, ws = fit_recording(SDPMMC(random_state=0, solver_options={"eps": 1e-7, "max_iters": 100000}), Xg)
    assert not said(ws, r".", SolverWarning)
    assert m.solver_info_["status"] == "optimal" and m.objective_ == pytest.approx(value)


def test_the_certified_bound_is_below_the_sdp_value_for_any_alpha(sdp_value):
    Xg, value = sdp_value
    K = center_kernel(rbf_kernel(Xg, gamma=mmcedu.kernels.median_gamma(Xg)))
    rs = np.random.RandomState(1)
    for _ in range(5):
        lower, info = sdp_lower_bound(K, rs.uniform(0, 1, 40), 4, lam=rs.randn(40))
        assert lower <= value + 1e-6 and info["tau"] >= 0


# ------------------------------------------------------------------------------------------
# Ctrl-C
# ------------------------------------------------------------------------------------------
def test_keyboardinterrupt_from_the_solver_propagates(monkeypatch):
    import cvxpy as cp

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cp.Problem, "solve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        SDPMMC(random_state=0).fit(X)


def test_the_interrupted_status_of_scs_is_recognised():
    assert _interrupted({"info": {"status": "interrupted", "status_val": -5}})
    assert not _interrupted({"info": {"status": "solved", "status_val": 1}})
    assert not _interrupted(None)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_an_scs_solve_is_a_keyboardinterrupt():
    """SCS catches SIGINT itself and returns 'interrupted', which cvxpy reports as a solver
    failure: it used to read 'SolverError ... Try another solver'."""
    code = """
        import os, signal, threading
        from mmcedu import SDPMMC
        from mmcedu.datasets import two_gaussians
        X, _ = two_gaussians(60, distance=3.0, random_state=0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            SDPMMC(random_state=0, solver_options={"eps": 1e-9, "max_iters": 10**6}).fit(X)
            print("FINISHED")
        except KeyboardInterrupt:
            print("KEYBOARDINTERRUPT")
    """
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=200, env=env)
    assert "KEYBOARDINTERRUPT" in proc.stdout or "FINISHED" in proc.stdout, proc.stderr[-800:]
    assert "SolverError" not in proc.stderr
    assert signal.SIGINT  # the test relies on it


# ------------------------------------------------------------------------------------------
# Memory and time guards (before allocating, before solving)
# ------------------------------------------------------------------------------------------
def test_the_memory_formulas():
    assert SDPMMC(solver="cvxpy").memory_bytes(600) == 2000 * 600**2
    assert SDPMMC(solver="lowrank").memory_bytes(1000, n_features=5) == 128 * 1000**2
    m, r, n = 200, 10, 10**5
    assert SDPMMC(n_components=m).memory_bytes(n) == 8 * (11 * n * (m + 2) // 10 + 24 * n * r + 40 * n
                                                          + 5 * (m * r) ** 2 + 4096 * m * r + 24576 * (m + 2))


@pytest.mark.parametrize("solver, alternative", [("cvxpy", "solver='lowrank'.*n_components"),
                                                 ("lowrank", "n_components.*subsample"),
                                                 ("auto", "n_components=200")])
def test_the_memory_guard_refuses_before_allocating(solver, alternative, forbid_solve):
    Xbig = np.random.RandomState(0).randn(40000, 2)  # the kernel alone would be 12.8 GB
    with pytest.raises(MemoryBudgetError, match=rf"n = 40,000.*memory budget.*{alternative}"):
        SDPMMC(random_state=0, gamma=0.5, solver=solver).fit(Xbig)


def test_the_factor_path_has_its_own_memory_guard(forbid_solve):
    with mmcedu.config_context(memory_budget=SDPMMC(n_components=5).memory_bytes(20) - 1):
        with pytest.raises(MemoryBudgetError, match=r"n_components=5.*Lower n_components"):
            SDPMMC(n_components=5, random_state=0).fit(X)


@pytest.mark.parametrize("params", [{"kernel": "precomputed"}, {"solver": "cvxpy"}, {"C": None}])
def test_n_components_refuses_what_it_cannot_do(params, forbid_solve):
    data = rbf_kernel(X, gamma=0.5) if params.get("kernel") == "precomputed" else X
    with pytest.raises(ValueError, match=r"n_components=5 .*n_components=None for the exact kernel"):
        SDPMMC(n_components=5, **params).fit(data)


def test_a_long_exact_lowrank_fit_names_n_components(monkeypatch):
    import mmcedu.sdp_mmc as sdp

    monkeypatch.setattr(sdp, "_SLOW_LOWRANK_N", 19)
    _, ws = fit_recording(SDPMMC(random_state=0, solver="lowrank"), X)
    assert said(ws, r"n_samples=20.*O\(n\^3\).*n_components=200", UserWarning)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_identical_points_on_the_factor_path_give_one_cluster(kernel, forbid_solve):
    m, ws = fit_recording(SDPMMC(random_state=0, kernel=kernel, n_components=5), np.ones((20, 2)))
    assert said(ws, "identical", DegenerateDataWarning) and m.n_clusters_ == 1 and m.M_ is None
    assert m.objective_ == m.labeling_objective_ == 2.0 * 20


def test_a_factor_fit_at_max_iter_warns_with_the_gap():
    Xg, _ = two_gaussians(40, random_state=0)
    m, ws = fit_recording(SDPMMC(random_state=0, n_components=10, max_iter=1, tol=1e-9), Xg)
    assert said(ws, r"stopped after 1 iterations.*certified relative gap", SolverWarning)
    assert 0 <= m.objective_ <= m.labeling_objective_ and m.duality_gap_ > 0


def test_the_memory_guard_follows_the_budget(forbid_solve):
    with mmcedu.config_context(memory_budget=SDPMMC().memory_bytes(20) - 1):
        with pytest.raises(MemoryBudgetError, match="lowrank"):
            SDPMMC(random_state=0).fit(X)
    with mmcedu.config_context(memory_budget=SDPMMC().memory_bytes(20)):
        with pytest.raises(_Reached):
            SDPMMC(random_state=0).fit(X)


def test_a_long_cvxpy_solve_is_announced_before_solving(forbid_solve):
    Xn = np.random.RandomState(0).randn(600, 2)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        with pytest.raises(_Reached):
            SDPMMC(random_state=0, gamma=0.5, solver="cvxpy").fit(Xn)
    assert said(ws, r"180,300 unknowns.*minutes to hours.*solver='lowrank'", UserWarning)


# ------------------------------------------------------------------------------------------
# The low-rank solver
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_lowrank_brackets_the_cvxpy_value_and_finds_the_same_clusters(seed):
    """On n = 40 the certified bracket [objective_, objective_ + duality_gap_] of
    solver='lowrank' contains the SDP value of an accurate cvxpy solve, within tol, and the
    two labelings agree."""
    Xg, yg = two_gaussians(40, random_state=seed)
    dense = SDPMMC(rounding="eigenvector", solver_options={"eps": 1e-7, "max_iters": 100000}).fit(Xg)
    low, ws = fit_recording(SDPMMC(rounding="eigenvector", solver="lowrank", tol=1e-3), Xg)
    assert not said(ws, r".", SolverWarning)
    value = dense.objective_
    assert low.objective_ <= value + 1e-5 * value
    assert value <= low.objective_ + low.duality_gap_ + 1e-5 * value
    assert low.duality_gap_ <= 1e-3 * max(1.0, low.objective_ + low.duality_gap_) + 1e-12
    assert low.objective_ <= low.labeling_objective_
    assert low.M_.shape == (40, 40) and low.M_factor_.shape[0] == 40
    assert np.allclose(np.diag(low.M_), 1.0)
    assert metrics.clustering_error(dense.labels_, low.labels_) <= 0.05
    assert low.solver_info_["solver"] == "lowrank" and low.n_iter_ >= 1


def test_lowrank_at_max_iter_warns_with_the_gap():
    Xg, _ = two_gaussians(40, random_state=0)
    m, ws = fit_recording(SDPMMC(random_state=0, solver="lowrank", max_iter=1, tol=1e-9), Xg)
    assert said(ws, r"stopped after 1 iterations.*certified relative gap", SolverWarning)
    assert 0 <= m.objective_ <= m.labeling_objective_ and m.duality_gap_ > 0


def test_lowrank_needs_a_finite_c():
    with pytest.raises(ValueError, match="finite C"):
        SDPMMC(random_state=0, solver="lowrank", C=None).fit(X)


def test_lowrank_reports_the_balance_bound():
    K = center_kernel(rbf_kernel(X, gamma=0.5))
    V, info = solve_sdp_mmc_lowrank(K, 1.0, 0.1)  # l = 2
    assert info["l"] == 2 and V.shape == (20, info["rank"])
    assert np.all(np.abs(V @ V.sum(axis=0)) <= 2 * (1 + 1e-3)) or info["mix"] > 0


# ------------------------------------------------------------------------------------------
# Documented properties
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["cvxpy", "lowrank"])
def test_documented_properties_hold(solver):
    Xg, _ = two_gaussians(30, random_state=1)
    m = SDPMMC(solver=solver, rounding="randomized", random_state=0).fit(Xg)
    assert 0 <= m.objective_ <= m.labeling_objective_ + 1e-6
    assert np.all(np.isfinite(m.dual_coef_))
    assert m.dual_coef_.min() > -1e-3 and m.dual_coef_.max() < 1.0 + 1e-3
    assert m.n_clusters_ == np.unique(m.labels_).size == 2
    assert isinstance(m.n_iter_, (int, np.integer)) and m.n_iter_ >= 1


# ------------------------------------------------------------------------------------------
# The shared cvxpy wrapper keeps its behaviour for its other callers
# ------------------------------------------------------------------------------------------
def _small_sdp():
    import cvxpy as cp

    M = cp.Variable((4, 4), symmetric=True)
    A = np.arange(16.0).reshape(4, 4)
    return cp.Problem(cp.Minimize(cp.trace((A + A.T) @ M)), [M >> 0, cp.diag(M) == 1])


def test_solve_cvxpy_user_limit_still_raises_by_default():
    from mmcedu._cvxpy import solve_cvxpy

    with pytest.raises(SolverError, match="user_limit"):
        solve_cvxpy(_small_sdp(), "CLARABEL", solver_options={"max_iter": 1})


def test_solve_cvxpy_user_limit_accepted_on_request_warns():
    from mmcedu._cvxpy import solve_cvxpy

    with pytest.warns(SolverWarning, match="user_limit"):
        stats = solve_cvxpy(_small_sdp(), "CLARABEL", solver_options={"max_iter": 1},
                            accept_user_limit=True)
    assert stats["status"] == "user_limit" and stats["n_iter"] == 1


def test_solve_sdp_mmc_warns_when_called_directly():
    K = center_kernel(rbf_kernel(X, gamma=0.5))
    with pytest.warns(SolverWarning, match="inaccurate"):
        sol = solve_sdp_mmc(K, solver_options={"max_iters": 5})
    assert sol.info["status"] == "optimal_inaccurate"
