"""GMMC on bad input, edge cases and solver limits: every result is right, warned about, or a
clear error (bad data, bad parameters, huge/tiny scales, degenerate data, solver limits,
memory guards)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mmcedu import GMMC, config_context, datasets
from mmcedu.datasets import two_circles, two_gaussians
from mmcedu.exceptions import (
    ClusterCountWarning,
    DegenerateDataWarning,
    MemoryBudgetError,
    SolverWarning,
)
from mmcedu.metrics import clustering_error

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)  # two compact, far-apart blobs

ESTIMATORS = {
    "lowrank": lambda: GMMC(random_state=0),
    "cvxpy": lambda: GMMC(solver="cvxpy"),
    "nystroem": lambda: GMMC(n_components=15, random_state=0),
}
SCALE_WORDS = r"overflow|underflow|standardi"


def found(est, truth=Y):
    return clustering_error(truth, est.labels_) == 0.0


def fit_recording(est, data):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(data)
    return est, [w for w in rec if not issubclass(w.category, DeprecationWarning)]


def said(ws, category, pattern):
    return any(issubclass(w.category, category) and re.search(pattern, str(w.message), re.I)
               for w in ws)


# ---------------------------------------------------------------------------------------------
# scales
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e154, 1e300])
@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_huge_finite_data_is_refused_with_a_scale_message(key, scale):
    with pytest.raises(ValueError, match=SCALE_WORDS) as info:
        ESTIMATORS[key]().fit(X * scale)
    assert "precomputed" not in str(info.value) and "NaN" not in str(info.value)


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_tiny_scale_is_refused_with_a_scale_message(key):
    with pytest.raises(ValueError, match=SCALE_WORDS):
        ESTIMATORS[key]().fit(X * 1e-150)


@pytest.mark.parametrize("scale", [1e-8, 1e3, 1e8])
@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_default_gamma_follows_the_data_scale(key, scale):
    m = ESTIMATORS[key]().fit(X * scale)
    assert found(m)
    assert np.isfinite(m.gamma_) and m.gamma_ > 0


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_kernel_equal_to_identity_is_warned(key):
    est, ws = fit_recording(ESTIMATORS[key]().set_params(gamma=1e12), X)
    assert found(est) or said(ws, DegenerateDataWarning, r"identity.*smaller gamma")


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_kernel_equal_to_all_ones_is_warned(key):
    est, ws = fit_recording(ESTIMATORS[key]().set_params(gamma=1e-12), X)
    assert found(est) or said(ws, DegenerateDataWarning, r"all ones.*larger gamma")


def test_a_narrow_kernel_that_links_neighbours_is_not_called_degenerate():
    """The median affinity of two circles at gamma=20 is ~1e-9, yet every sample has close
    neighbours: no degenerate-kernel warning, and the right answer."""
    Xc, yc = two_circles(100, random_state=0)
    est, ws = fit_recording(GMMC(gamma=20.0, random_state=0), Xc)
    assert found(est, yc)
    assert not any(issubclass(w.category, DegenerateDataWarning) for w in ws)


# ---------------------------------------------------------------------------------------------
# degenerate data
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_all_identical_points_give_one_cluster_and_a_warning(key):
    with pytest.warns(DegenerateDataWarning, match="identical"):
        est = ESTIMATORS[key]().set_params(n_components=None).fit(np.ones((20, 2)))
    assert est.n_clusters_ == 1 and set(est.labels_) == {0}
    assert est.labels_.shape == (20,) and est.duality_gap_ == 0.0


def test_two_samples_are_split():
    est = GMMC(random_state=0).fit(np.array([[0.0, 0.0], [1.0, 1.0]]))
    assert est.n_clusters_ == 2


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_data_is_refused(bad):
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        GMMC().fit(Xb)


def test_one_sample_is_refused():
    with pytest.raises(ValueError, match="n_samples"):
        GMMC().fit(X[:1])


def test_indefinite_precomputed_kernel_is_refused():
    from mmcedu.kernels import rbf_kernel

    K = rbf_kernel(X, gamma=0.5) - 2.7 * np.eye(20)
    with pytest.raises(ValueError, match="semidefinite|PSD|negative"):
        GMMC(kernel="precomputed").fit(K)


# ---------------------------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["lowrank", "cvxpy"])
def test_zero_balance_penalty_is_refused(solver):
    with pytest.raises(ValueError, match=r"balance_penalty=0.*one cluster"):
        GMMC(balance_penalty=0.0, solver=solver, random_state=0).fit(X)


def test_printed_variant_with_the_normalized_laplacian_is_warned():
    est, ws = fit_recording(GMMC(variant="printed", random_state=0, max_iter=50), X)
    assert said(ws, UserWarning, r"degenerate.*variant='repaired'")


def test_one_cluster_result_is_warned(monkeypatch):
    """Whatever the cause, labels with one cluster come with a ClusterCountWarning."""
    import mmcedu.gmmc as g

    monkeypatch.setattr(g, "labels_from_primal", lambda W=None, V=None: (
        np.zeros(len(V), dtype=int), -np.ones(len(V))))
    with pytest.warns(ClusterCountWarning, match="one cluster"):
        est = GMMC(random_state=0).fit(X)
    assert est.n_clusters_ == 1


@pytest.mark.parametrize(
    "kw, word",
    [({"n_components": 5, "kernel": "precomputed"}, "precomputed"),
     ({"n_components": 5, "solver": "cvxpy"}, "cvxpy"),
     ({"n_components": 5, "laplacian": "unnormalized"}, "laplacian"),
     ({"n_components": 5, "variant": "printed"}, "variant"),
     ({"n_components": 50}, "n_samples")],
)
def test_unsupported_nystroem_options_are_refused(kw, word):
    data = np.eye(20) if kw.get("kernel") == "precomputed" else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # variant='printed' is warned about
        with pytest.raises(ValueError, match=word):
            GMMC(**kw).fit(data)


@pytest.mark.parametrize("kw", [{"tol": 0.0}, {"tol": -1.0}, {"n_components": 0},
                                {"max_iter": 0}, {"rank": 0}])
def test_bad_numbers_are_refused(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        GMMC(**kw).fit(X)


@pytest.mark.parametrize(
    "kw, word",
    [({"rank": 0}, "rank"), ({"max_iter": 0}, "max_iter"), ({"V0": np.ones((3, 2))}, "V0")],
)
def test_solve_lowrank_rejects_bad_arguments(kw, word):
    from mmcedu.gmmc import solve_lowrank

    with pytest.raises(ValueError, match=word):
        solve_lowrank(np.eye(4), **kw)


# ---------------------------------------------------------------------------------------------
# solver limits: an uncertified answer is a ConvergenceWarning
# ---------------------------------------------------------------------------------------------
def test_the_gap_tolerance_is_a_parameter():
    assert GMMC().get_params()["tol"] == 1e-4


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda: GMMC(gamma=20.0, max_iter=5, random_state=0),
         lambda: two_circles(100, random_state=0)),
        (lambda: GMMC(max_iter=1, random_state=0), lambda: (X, Y)),
        (lambda: GMMC(balance_penalty=1e4, random_state=0), lambda: (X, Y)),
        (lambda: GMMC(random_state=0), lambda: datasets.digits((3, 8), 60)),
        (lambda: GMMC(n_components=60, max_iter=2, gamma=20.0, random_state=0),
         lambda: two_circles(100, random_state=0)),
    ],
    ids=["circles max_iter=5", "max_iter=1", "balance_penalty=1e4", "raw digits 3-8",
         "nystroem max_iter=2"],
)
def test_uncertified_result_is_a_convergence_warning(make, data):
    Xd, _ = data()
    est, ws = fit_recording(make(), Xd)
    if est.duality_gap_ > est.tol * max(1.0, abs(est.objective_)):
        assert said(ws, ConvergenceWarning, r"duality gap.*(max_iter|C=)")
    else:
        assert not any(issubclass(w.category, ConvergenceWarning) for w in ws)


def test_max_iter_5_on_circles_is_warned_and_says_what_to_change():
    Xc, yc = two_circles(100, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"tol=0.0001.*Increase max_iter"):
        est = GMMC(gamma=20.0, max_iter=5, random_state=0).fit(Xc)
    assert est.duality_gap_ > 1e-4 * est.objective_


def test_a_tighter_tol_is_honoured_or_warned():
    est, ws = fit_recording(GMMC(tol=1e-12, max_iter=200, random_state=0), X)
    rel = est.duality_gap_ / max(est.objective_, 1.0)
    assert rel <= 1e-12 or said(ws, ConvergenceWarning, "tol=1e-12")


def test_a_certified_fit_is_silent():
    est, ws = fit_recording(GMMC(random_state=0), X)
    assert found(est) and est.duality_gap_ <= 1e-4 * max(est.objective_, 1.0)
    assert not ws, [str(w.message) for w in ws]


def test_binding_soft_margin_says_why_the_gap_cannot_close():
    Xc, _ = two_circles(40, random_state=0)
    hard = GMMC(gamma=20.0, random_state=0).fit(Xc)
    C = 0.5 * float(hard.dual_coef_.max())
    with pytest.warns(ConvergenceWarning, match=r"reach C=.*hard-margin"):
        GMMC(gamma=20.0, C=C, random_state=0).fit(Xc)


def test_cvxpy_reports_the_back_ends_iterations():
    m = GMMC(solver="cvxpy").fit(X)
    assert m.n_iter_ == m.solver_info_["n_iter"] > 1


class _Reached(Exception):
    pass


def test_slow_cvxpy_solve_is_announced_before_solving(monkeypatch):
    import cvxpy as cp

    def boom(self, *a, **k):
        raise _Reached

    monkeypatch.setattr(cp.Problem, "solve", boom)
    Xn = np.random.RandomState(0).randn(60, 2)  # Clarabel: ~9 s, Ctrl-C waits for it
    with pytest.warns(SolverWarning, match=r"n_samples=60.*solver='lowrank'"):
        with pytest.raises(_Reached):
            GMMC(gamma=0.5, solver="cvxpy").fit(Xn)


# ---------------------------------------------------------------------------------------------
# memory guards (raised before allocating, naming the alternative)
# ---------------------------------------------------------------------------------------------
def _forbid_kernel(monkeypatch):
    import mmcedu.gmmc as g

    def boom(*a, **k):
        raise _Reached("the kernel was computed")

    monkeypatch.setattr(g, "kernel_matrix", boom)
    monkeypatch.setattr(g, "nystroem_factor", boom)


def test_dense_path_refuses_before_allocating(monkeypatch):
    _forbid_kernel(monkeypatch)
    Xn = np.random.RandomState(0).randn(2000, 2)  # 6 * 8 * 2000^2 bytes = 192 MB > 100 MB
    with config_context(memory_budget="100MB"):
        with pytest.raises(MemoryBudgetError, match=r"n = 2,000.*n_components"):
            GMMC(gamma=0.5).fit(Xn)


def test_cvxpy_path_refuses_before_allocating(monkeypatch):
    """Clarabel's dense PSD-cone block for n = 1500 is ~10 TB: it used to abort the process."""
    _forbid_kernel(monkeypatch)
    Xn = np.random.RandomState(0).randn(1500, 2)
    with pytest.raises(MemoryBudgetError, match=r"cvxpy.*solver='lowrank'"):
        GMMC(gamma=0.5, solver="cvxpy").fit(Xn)


def test_nystroem_path_memory_is_linear_in_n_and_guarded(monkeypatch):
    est = GMMC(n_components=300)
    b1, b2 = est.memory_bytes(10_000), est.memory_bytes(100_000)
    assert b2 == 10 * b1 and b2 < 2 * 2**30  # below 2 GiB at n = 100,000
    _forbid_kernel(monkeypatch)
    with config_context(memory_budget="1MB"):
        with pytest.raises(MemoryBudgetError, match="n_components"):
            GMMC(n_components=10, gamma=0.5).fit(np.random.RandomState(0).randn(2000, 2))


@pytest.mark.timeout(120)
def test_dense_path_at_n_40000_refuses_in_a_memory_limited_process():
    code = """
        import resource; lim = 2 * 2**30; resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        import numpy as np
        from mmcedu import GMMC
        GMMC(gamma=0.5).fit(np.random.RandomState(0).randn(40000, 2))
    """
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=110, env=env)
    assert proc.returncode != 0
    assert "Unable to allocate" not in proc.stderr
    assert re.search(r"MemoryBudgetError.*n_components", proc.stderr), proc.stderr[-600:]
