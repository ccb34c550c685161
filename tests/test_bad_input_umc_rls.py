"""UMCRLS and its helpers on bad, extreme and degenerate input: a right answer, a warning that
says what happened, or a clear error -- never a silent wrong answer.

Categories: bad data, bad parameters, huge and tiny scales, degenerate data and kernels, the
clusters asked for, solver limits, memory and cost guards, and the helpers of
:mod:`mmcedu.umc_rls`. Every test runs on at most a few hundred samples, except the memory
guards, which run in a subprocess with a 2 GB address-space limit (nothing is allocated).
"""

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

import mmcedu
from mmcedu import UMCRLS, umc_rls
from mmcedu.datasets import blobs, two_gaussians
from mmcedu.exceptions import (
    BalanceWarning,
    ClusterCountWarning,
    DegenerateDataWarning,
    MemoryBudgetError,
)
from mmcedu.kernels import rbf_kernel
from mmcedu.metrics import clustering_error
from mmcedu.umc_rls import hat_matrix, low_rank_hat_factor, shaking_alpha
from mmcedu_lab.umc_rls import rls_cost, run_search, umc_objective

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)  # two compact, far blobs
SCALE_WORDS = r"overflow|underflow|Standardize"
PATHS = {"dense": {}, "low-rank": {"n_components": 8}}


def _fit(est, data):
    """``(est, warnings)`` of ``est.fit(data)``."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(data)
    return est, [w for w in rec if not issubclass(w.category, DeprecationWarning)]


def _found(est, truth):
    return clustering_error(truth, est.labels_) == 0.0


def _run_limited(code, *, gb=2.0, timeout=120):
    pre = "import resource; lim = int(%r * 2**30); resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", pre % gb + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stderr


# ----------------------------------------------------------------------------- bad data
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("path", PATHS)
def test_non_finite_data_is_refused(bad, path):
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        UMCRLS(**PATHS[path]).fit(Xb)


@pytest.mark.parametrize(
    "data, word",
    [(np.zeros((0, 2)), "0 sample"), (np.zeros((5, 0)), "0 feature"), (np.ones(5), "2D"),
     (np.ones((3, 2, 2)), "dim"), (np.ones((3, 2)) + 1j, "omplex")],
)
def test_malformed_data_is_refused(data, word):
    with pytest.raises(ValueError, match=word):
        UMCRLS().fit(data)


def test_too_few_samples():
    with pytest.raises(ValueError, match="too few for n_clusters"):
        UMCRLS(5).fit(X[:4])
    with pytest.raises(ValueError, match="too few"):
        UMCRLS(1).fit(X[:1])


def test_odd_but_valid_data_is_right():
    assert _found(UMCRLS(random_state=0).fit(np.asfortranarray(X)), Y)
    assert _found(UMCRLS(random_state=0).fit(X.astype(np.float32)), Y)
    assert _found(UMCRLS(random_state=0).fit(np.r_[X, X]), np.r_[Y, Y])  # every row twice
    assert _found(UMCRLS(random_state=0).fit(X.tolist()), Y)


# ----------------------------------------------------------------------------- bad parameters
@pytest.mark.parametrize(
    "params",
    [{"n_clusters": 0}, {"n_clusters": 2.0}, {"n_clusters": True}, {"alpha": 0.0},
     {"alpha": -1.0}, {"alpha": np.nan}, {"gamma": 0.0}, {"gamma": -1.0}, {"kernel": "poly"},
     {"search": "greedy"}, {"n_rounds": -1}, {"n_rounds": True}, {"n_components": 0},
     {"n_components": True}, {"final_descent": "yes"}, {"dtype": "float16"}, {"dtype": int},
     {"random_state": "seed"}],
    ids=str,
)
def test_bad_parameters_are_refused_by_name(params):
    name = next(iter(params))
    with pytest.raises((ValueError, TypeError), match=name):
        UMCRLS(**params).fit(X)


@pytest.mark.parametrize("params", [{"alpha": 1e300}, {"n_components": 100},
                                    {"n_components": 100, "kernel": "linear"}, {"n_rounds": 5},
                                    {"dtype": "float32", "n_components": 8},
                                    {"dtype": np.float32, "n_components": 8}], ids=str)
def test_unusual_but_valid_parameters_are_right(params):
    assert _found(UMCRLS(random_state=0, **params).fit(X), Y)


def test_no_shaking_rounds_is_right_or_warned():
    """n_rounds=0 with k = 2: cluster 0 claims every sample but one, then cluster 1 claims
    every sample but one: a singleton cluster that Q would empty."""
    est, ws = _fit(UMCRLS(n_rounds=0, random_state=0), X)
    assert _found(est, Y) or any(issubclass(w.category, ClusterCountWarning) for w in ws)


def test_one_cluster_is_a_valid_request():
    m = UMCRLS(1).fit(X)
    assert m.n_clusters_ == 1 and set(m.labels_) == {0}


# ----------------------------------------------------------------------------- scales
@pytest.mark.parametrize("scale", [1e154, 1e300])
@pytest.mark.parametrize("path", PATHS)
def test_huge_finite_data_is_refused_with_a_scale_message(scale, path):
    with pytest.raises(ValueError, match=SCALE_WORDS):
        UMCRLS(**PATHS[path]).fit(X * scale)


def test_linear_kernel_on_huge_data_is_refused():
    with pytest.raises(ValueError, match=SCALE_WORDS):
        UMCRLS(kernel="linear").fit(X * 1e200)


@pytest.mark.parametrize("path", PATHS)
def test_tiny_scale_is_refused_with_a_scale_message(path):
    with pytest.raises(ValueError, match="underflow"):
        UMCRLS(**PATHS[path]).fit(X * 1e-150)


@pytest.mark.parametrize("transform", ["x1e-8", "x1e3", "x1e8", "+1e4"])
@pytest.mark.parametrize("path", PATHS)
def test_the_default_width_follows_the_data(transform, path):
    data = {"x1e-8": X * 1e-8, "x1e3": X * 1e3, "x1e8": X * 1e8, "+1e4": X + 1e4}[transform]
    assert _found(UMCRLS(random_state=0, **PATHS[path]).fit(data), Y)


@pytest.mark.parametrize("path", PATHS)
def test_kernel_equal_to_the_identity_is_warned(path):
    est, ws = _fit(UMCRLS(gamma=1e12, random_state=0, **PATHS[path]), X)
    assert any(issubclass(w.category, DegenerateDataWarning)
               and "numerically the identity" in str(w.message) for w in ws)


@pytest.mark.parametrize("path", PATHS)
def test_kernel_equal_to_all_ones_is_right_or_warned(path):
    est, ws = _fit(UMCRLS(gamma=1e-12, random_state=0, **PATHS[path]), X)
    assert _found(est, Y) or any("all ones" in str(w.message) for w in ws)
    assert any(issubclass(w.category, DegenerateDataWarning) for w in ws)


@pytest.mark.parametrize("path", PATHS)
def test_tiny_alpha_is_warned(path):
    """alpha = 1e-300: R = I up to round-off, every labelling costs the same."""
    est, ws = _fit(UMCRLS(alpha=1e-300, random_state=0, **PATHS[path]), X)
    assert any(issubclass(w.category, DegenerateDataWarning) and "alpha" in str(w.message)
               for w in ws), [str(w.message) for w in ws]


def test_a_reasonable_alpha_is_not_warned():
    for alpha in (2.0**-10, 2.0**-1):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            UMCRLS(alpha=alpha, random_state=0).fit(X)


# ----------------------------------------------------------------------------- precomputed
def test_indefinite_precomputed_kernel_is_refused():
    K = rbf_kernel(X, gamma=0.5) - 2.7 * np.eye(20)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        UMCRLS(kernel="precomputed").fit(K)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        UMCRLS(kernel="precomputed", n_components=5).fit(K)


@pytest.mark.parametrize(
    "K, word",
    [(np.ones((4, 3)), "square"), (rbf_kernel(X) + np.triu(np.ones((20, 20)), 1), "symmetric"),
     (np.full((20, 20), np.nan), "NaN")],
)
def test_malformed_precomputed_kernels_are_refused(K, word):
    with pytest.raises(ValueError, match=word):
        UMCRLS(kernel="precomputed").fit(K)


def test_precomputed_round_off_is_accepted():
    K = rbf_kernel(X, gamma=0.5)
    K = K + 1e-13 * (np.random.RandomState(0).rand(20, 20) - 0.5)
    K = (K + K.T) / 2
    assert _found(UMCRLS(kernel="precomputed", random_state=0).fit(K), Y)


# ----------------------------------------------------------------------------- degenerate data
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_identical_points_give_one_cluster_and_a_warning(path, kernel):
    est, ws = _fit(UMCRLS(kernel=kernel, random_state=0, **PATHS[path]), np.ones((20, 2)))
    assert est.n_clusters_ == 1 and set(est.labels_) == {0}
    assert any(issubclass(w.category, DegenerateDataWarning) and "identical" in str(w.message)
               for w in ws)
    K = rbf_kernel(np.ones((20, 2))) if kernel == "rbf" else np.full((20, 20), 2.0)
    assert est.objective_ == pytest.approx(umc_objective(K, est.labels_, est.alpha, 2))


def test_identical_precomputed_kernel_gives_one_cluster():
    est, ws = _fit(UMCRLS(kernel="precomputed"), np.ones((10, 10)))
    assert est.n_clusters_ == 1 and any("identical" in str(w.message) for w in ws)


def test_fewer_distinct_samples_than_clusters_is_warned():
    data = np.repeat([[0.0, 0.0], [5.0, 5.0]], 10, axis=0)
    est, ws = _fit(UMCRLS(4, random_state=0), data)
    assert est.n_clusters_ == 4
    assert any(issubclass(w.category, ClusterCountWarning) and "distinct" in str(w.message)
               for w in ws)


def test_collinear_and_constant_feature_data_are_right():
    line = np.outer(np.r_[np.linspace(0, 1, 10), np.linspace(5, 6, 10)], [1, 2, 0.5, -1, 3])
    truth = np.repeat([0, 1], 10)
    assert _found(UMCRLS(random_state=0).fit(line), truth)
    assert _found(UMCRLS(random_state=0).fit(np.c_[X, np.full(20, 5.0)]), Y)


# ----------------------------------------------------------------------------- clusters asked for
@pytest.mark.parametrize("search", ["steepest", "stochastic"])
@pytest.mark.parametrize("path", PATHS)
def test_descent_searches_keep_every_cluster(search, path):
    """Without the non-empty constraint, steepest / stochastic descent emptied a cluster of
    these two blobs for 4 / 5 of 10 seeds."""
    outcomes = []
    for seed in range(10):
        est, ws = _fit(UMCRLS(2, search=search, random_state=seed, **PATHS[path]), X)
        assert est.n_clusters_ == 2 == np.unique(est.labels_).size, seed
        held = [w for w in ws if issubclass(w.category, ClusterCountWarning)]
        # a descent that would have emptied a cluster stops at a singleton: said so
        assert _found(est, Y) or (held and min(np.bincount(est.labels_)) == 1), seed
        outcomes.append(_found(est, Y))
    assert 0 < sum(outcomes) < 10  # both happen on these seeds


@pytest.mark.parametrize("k, n", [(5, 20), (10, 40), (20, 21)])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("search", ["shaking", "steepest", "stochastic"])
def test_more_clusters_than_structure_still_gives_k_clusters(k, n, path, search):
    """Shaking with k = 10 on 40 points used to return 7 clusters."""
    data = X if n == 20 else two_gaussians(n, random_state=0)[0]
    est = UMCRLS(k, search=search, random_state=0, **PATHS[path]).fit(data)
    assert est.n_clusters_ == k == np.unique(est.labels_).size
    assert np.array_equal(np.unique(est.labels_), np.arange(k))


def test_the_paper_search_as_printed_can_empty_clusters():
    """run_search's defaults are the paper's algorithms: they may lose a cluster; the
    estimator's constraint (keep_nonempty=True) never does."""
    K = rbf_kernel(X, gamma=0.0113)
    lost = [np.unique(run_search(K, 0.125, 2, search="steepest", random_state=s)["labels"]).size
            for s in range(10)]
    kept = [np.unique(run_search(K, 0.125, 2, search="steepest", random_state=s,
                                 keep_nonempty=True)["labels"]).size for s in range(10)]
    assert min(lost) == 1 and kept == [2] * 10


def test_an_empty_start_is_repaired_by_the_cheapest_claim():
    K = rbf_kernel(X, gamma=0.0113)
    init = np.zeros(20, dtype=int)  # clusters 1 and 2 empty
    moves = []
    out = run_search(K, 0.125, 3, search="steepest", init=init, keep_nonempty=True,
                     on_move=lambda j, d, dq: moves.append((j, d, dq)))
    assert np.unique(out["labels"]).size == 3
    (j1, d1, q1), (j2, d2, q2) = moves[:2]
    assert (d1, d2) == (1, 2)
    c = init.copy()
    deltas = [umc_objective(K, np.where(np.arange(20) == j, 1, c), 0.125, 3)
              - umc_objective(K, c, 0.125, 3) for j in range(20)]
    assert j1 == int(np.argmin(deltas)) and q1 == pytest.approx(min(deltas))


# ----------------------------------------------------------------------------- balance
def test_balance_warning_when_the_claims_decide():
    """Breast cancer (212 : 357): shaking alone ends at 284 : 285, and a descent of Q from
    there moves about 90 samples. With final_descent=False that is said."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    data, truth = load_breast_cancer(return_X_y=True)
    data = StandardScaler().fit_transform(data)
    est, ws = _fit(UMCRLS(final_descent=False, random_state=0), data)
    assert sorted(np.bincount(est.labels_)) == [284, 285]
    msgs = [str(w.message) for w in ws if issubclass(w.category, BalanceWarning)]
    assert msgs and "final_descent=True" in msgs[0], [str(w.message) for w in ws]
    est2, ws = _fit(UMCRLS(random_state=0), data)
    assert not any(issubclass(w.category, BalanceWarning) for w in ws)
    assert est2.converged_ and est2.solver_info_["n_descent_moves"] > 0.05 * len(data)
    assert str(est2.solver_info_["n_descent_moves"]) in msgs[0]


def test_no_balance_warning_on_balanced_data():
    data, _ = blobs(150, centers=3, random_state=0)
    est, ws = _fit(UMCRLS(3, final_descent=False, random_state=0), data)
    assert not any(issubclass(w.category, BalanceWarning) for w in ws)


# ----------------------------------------------------------------------------- solver limits
def test_move_limit_is_a_convergence_warning(monkeypatch):
    real = umc_rls._run

    def limited(scorer, search, n_rounds, **kw):
        kw["max_iter"] = 3
        return real(scorer, search, n_rounds, **kw)

    monkeypatch.setattr(umc_rls, "_run", limited)
    with pytest.warns(ConvergenceWarning, match="stopped after 3 moves"):
        est = UMCRLS(search="steepest", random_state=1).fit(X)
    assert est.converged_ is False and est.n_iter_ == 3


# ----------------------------------------------------------------------------- memory and cost
def test_dense_path_refuses_before_allocating(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the kernel was computed before the memory check")

    monkeypatch.setattr(umc_rls, "kernel_matrix", boom)
    with mmcedu.config_context(memory_budget="20MB"):
        with pytest.raises(MemoryBudgetError, match=r"n_components.*budget|budget.*n_components"):
            UMCRLS().fit(np.random.RandomState(0).randn(2000, 2))


def test_low_rank_path_refuses_before_allocating():
    with mmcedu.config_context(memory_budget="50MB"):
        with pytest.raises(MemoryBudgetError, match="n_components|float32"):
            UMCRLS(n_components=500).fit(np.random.RandomState(0).randn(20000, 2))


def test_memory_formulas():
    assert UMCRLS(3).memory_bytes(1000) == 16 * 10**6 + 8 * 1000 * 49 + 8 * 2**20
    small, big = UMCRLS(3, n_components=100, dtype="float32"), UMCRLS(3, n_components=100)
    assert small.memory_bytes(10**6, 2) < big.memory_bytes(10**6, 2)
    assert small.memory_bytes(10**6, 2) < 0.6e9
    assert UMCRLS(n_components=100).memory_bytes(50) == UMCRLS(n_components=50).memory_bytes(50)
    # the linear kernel adds the thin SVD of X, 16 n min(n, d) bytes (d = n when not given)
    lin = UMCRLS(kernel="linear", n_components=10)
    assert lin.memory_bytes(1000, 5) - UMCRLS(n_components=10).memory_bytes(1000, 5) == 16 * 1000 * 5
    assert lin.memory_bytes(1000) == lin.memory_bytes(1000, 1000)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("params", ["gamma=0.5", ""])
def test_dense_path_at_n_40000_refuses_in_a_small_process(params):
    rc, err = _run_limited(f"""
        import numpy as np
        from mmcedu import UMCRLS
        UMCRLS(2, {params}).fit(np.random.RandomState(0).randn(40000, 2))
    """)
    assert rc != 0 and "Unable to allocate" not in err, err[-800:]
    assert "MemoryBudgetError" in err and "n_components" in err, err[-800:]


def test_dense_path_cost_is_announced(monkeypatch):
    monkeypatch.setattr(umc_rls, "_DENSE_SLOW_N", 50)
    with pytest.warns(UserWarning, match="eigendecomposition.*n_components"):
        UMCRLS(random_state=0).fit(np.random.RandomState(0).randn(60, 2))


def test_descent_search_on_the_low_rank_path_cost_is_announced(monkeypatch):
    monkeypatch.setattr(umc_rls, "_LOW_RANK_DESCENT_SLOW_N", 50)
    with pytest.warns(UserWarning, match="search='shaking'"):
        UMCRLS(search="steepest", n_components=5, random_state=0).fit(
            np.random.RandomState(0).randn(60, 2))


def test_the_default_width_is_linear_in_n():
    """median_gamma on at most 1,000 rows: the width costs the same at any n."""
    from mmcedu.kernels import median_gamma

    big = np.random.RandomState(0).randn(200_000, 2)
    assert np.isfinite(median_gamma(big))


# ----------------------------------------------------------------------------- helpers
@pytest.mark.parametrize("alpha", [0.0, -1.0, np.nan, np.inf, True, "1"])
def test_helpers_refuse_a_bad_alpha(alpha):
    K = np.ones((3, 3))
    for call in (lambda: hat_matrix(K, alpha), lambda: rls_cost(K, np.ones(3), alpha),
                 lambda: umc_objective(K, [0, 1, 0], alpha),
                 lambda: low_rank_hat_factor(np.ones((3, 1)), alpha)):
        with pytest.raises(ValueError, match="alpha"):
            call()


def test_umc_objective_refuses_labels_beyond_n_clusters():
    with pytest.raises(ValueError, match="n_clusters"):
        umc_objective(np.eye(3), [0, 1, 2], 1.0, n_clusters=2)
    with pytest.raises(ValueError, match="labels"):
        umc_objective(np.eye(3), [0, -1, 1], 1.0)
    with pytest.raises(ValueError, match="labels"):
        umc_objective(np.eye(3), [0, 1], 1.0)
    with pytest.raises(ValueError, match="n_clusters"):
        umc_objective(np.eye(3), [0, 0, 0], 1.0, n_clusters=0)


def test_helpers_refuse_non_square_matrices():
    with pytest.raises(ValueError, match="square"):
        hat_matrix(np.ones((3, 2)), 1.0)
    with pytest.raises(ValueError, match="square"):
        umc_objective(np.ones((3, 2)), [0, 1, 0], 1.0)


@pytest.mark.parametrize("args, word", [((10, 0, 0, 0), "n_clusters"), ((10, 2, -1, 0), "i"),
                                        ((10, 2, 0, 11), "size"), ((-1, 2, 0, 0), "n"),
                                        ((10, 2.5, 0, 0), "n_clusters")])
def test_shaking_alpha_refuses_bad_arguments(args, word):
    with pytest.raises(ValueError, match=word):
        shaking_alpha(*args)


def test_run_search_refuses_bad_arguments():
    K = rbf_kernel(X)
    with pytest.raises(ValueError, match="search"):
        run_search(K, 1.0, 2, search="greedy")
    with pytest.raises(ValueError, match="n_clusters"):
        run_search(K, 1.0, 0)
    with pytest.raises(ValueError, match="alpha"):
        run_search(K, 0.0, 2)
    with pytest.raises(ValueError, match="labels"):
        run_search(K, 1.0, 2, init=np.full(20, 3))
    with pytest.raises(ValueError, match="Pass the kernel"):
        run_search(None, 1.0, 2)


# ----------------------------------------------------------------------------- guarantees
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("search", ["shaking", "steepest", "stochastic"])
def test_documented_properties(path, search):
    data, _ = blobs(60, centers=3, random_state=1)
    est = UMCRLS(3, search=search, random_state=0, **PATHS[path]).fit(data)
    assert est.n_clusters_ == 3 and np.array_equal(np.unique(est.labels_), np.arange(3))
    assert isinstance(est.n_iter_, int) and est.n_iter_ >= 1 and est.converged_
    assert np.isfinite(est.objective_)
    if path == "dense":
        K = rbf_kernel(data, gamma=est.gamma_)
        assert est.objective_ == pytest.approx(umc_objective(K, est.labels_, est.alpha, 3))
    assert re.fullmatch(r"\d+", str(est.solver_info_["n_evaluations"]))


def test_a_far_small_cluster_is_a_search_limitation_not_the_objective():
    # 38 points in one blob and 2 far points: the search splits the blob (the claims of
    # eq. 11 balance the sizes); the true labelling has a much lower Q, as documented.
    X = np.r_[np.random.RandomState(0).randn(38, 2) * 0.3, [[20, 0], [20.1, 0]]]
    truth = np.r_[np.zeros(38, int), [1, 1]]
    m = UMCRLS(2, random_state=0).fit(X)
    K = rbf_kernel(X, gamma=m.gamma_)
    q_truth = umc_objective(K, truth, m.alpha, 2)
    assert np.isclose(m.objective_, umc_objective(K, m.labels_, m.alpha, 2))
    assert q_truth < m.objective_ / 10
    assert np.bincount(m.labels_).min() > 2  # the far pair is not isolated
