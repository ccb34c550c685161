"""Bad and edge-case input to RobustEnsembleClustering and the helpers of mmcedu.robust_ensemble.

Every case gives the right answer, a warning that says what happened, or a clear error naming
what to change: bad data, bad parameters, degenerate ensembles, solver limits, memory guards,
huge and tiny scales, and the defaults against k-means.
"""

import functools
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import mmcedu
from mmcedu import RobustEnsembleClustering
from mmcedu import robust_ensemble as ens
from mmcedu.datasets import digits, iris, two_gaussians
from mmcedu.exceptions import ClusterCountWarning, DegenerateDataWarning, MemoryBudgetError
from mmcedu.metrics import clustering_error
from mmcedu.partitions import base_partitions, noisy_copies

#: The estimator on given base partitions.
on_partitions = functools.partial(RobustEnsembleClustering, partitions="precomputed")

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)
P = np.column_stack([Y, 1 - Y, Y, np.where(np.arange(20) < 2, 1 - Y, Y)])  # 4 base partitions


def fit(data=P, **params):
    params.setdefault("random_state", 0)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = on_partitions(**params).fit(data)
    return est, [w for w in rec if not issubclass(w.category, DeprecationWarning)]


def found(est, truth=Y):
    return clustering_error(truth, est.labels_) == 0


def said(ws, pattern, category=Warning):
    import re

    return any(issubclass(w.category, category) and re.search(pattern, str(w.message)) for w in ws)


def hard_ensemble(seed=3):
    """Digits, 12 of 20 members replaced by random binary labelings: a near-tie of the 10th and
    11th singular values of L, where a fast-growing penalty freezes the ALM."""
    from sklearn.utils import check_random_state

    from mmcedu_lab.registry import load

    Xd, yd = load("digits", 500)
    Q, kinds = base_partitions(Xd, 20, 10, n_random=12, return_kinds=True, random_state=seed)
    rng = check_random_state(100 + seed)
    for m in np.flatnonzero(kinds == "random"):
        Q[:, m] = rng.randint(2, size=Q.shape[0])
    return Q, yd


# ============================================================================================
# Bad data
# ============================================================================================
BAD_DATA = {
    "NaN": lambda D: np.where(np.arange(D.size).reshape(D.shape) == 3, np.nan, D),
    "inf": lambda D: np.where(np.arange(D.size).reshape(D.shape) == 3, np.inf, D),
    "-inf": lambda D: np.where(np.arange(D.size).reshape(D.shape) == 3, -np.inf, D),
    "empty": lambda D: D[:0],
    "zero partitions": lambda D: D[:, :0],
    "1-D": lambda D: D[:, 0],
    "3-D": lambda D: D[:, :, None],
    "complex": lambda D: D + 1j,
    "strings": lambda D: np.full(D.shape, "abc", dtype=object),
    "one sample": lambda D: D[:1],
    "non-integer labels (features)": lambda D: X,
    "a one-label partition": lambda D: np.c_[D, np.zeros(len(D), int)],
    "a sample without any label": lambda D: np.r_[D, np.full((1, D.shape[1]), -1)],
    "all labels missing": lambda D: np.full(D.shape, -1),
}


@pytest.mark.parametrize("bad", list(BAD_DATA))
def test_bad_data_is_a_clear_error(bad):
    with pytest.raises(ValueError):
        on_partitions(2).fit(BAD_DATA[bad](P))


@pytest.mark.parametrize(
    "data, word",
    [
        (X, "integer"),
        (np.c_[P, np.zeros(20, int)], "1 distinct label"),
        (np.r_[P, [[-1, -1, -1, -1]]], "no label in any base partition"),
        (np.column_stack([np.r_[-1, Y[1:]], np.r_[-1, Y[1:]]]), "no label"),
        (P[:3], "1 distinct label"),  # three samples: some column is constant
    ],
)
def test_bad_partitions_say_what_is_wrong(data, word):
    with pytest.raises(ValueError, match=word):
        on_partitions(2).fit(data)


def test_sparse_input_is_a_clear_error():
    with pytest.raises(TypeError, match="[Ss]parse|dense"):
        on_partitions(2).fit(sp.csr_matrix(P))


@pytest.mark.parametrize(
    "prep",
    [lambda D: D.tolist(), lambda D: D.astype(object), lambda D: D.astype(np.float32),
     lambda D: D.astype(bool), np.asfortranarray, lambda D: np.repeat(D, 2, axis=1)[:, ::2],
     lambda D: np.vstack([D, D]), lambda D: D.astype(np.int8)],
    ids=["list", "object numbers", "float32", "bool", "Fortran", "strided view", "duplicated rows",
         "int8"],
)
def test_legitimate_input_types_give_the_right_clusters(prep):
    data = prep(P)
    truth = np.r_[Y, Y] if len(data) == 40 else Y
    est, ws = fit(data, n_clusters=2)
    assert found(est, truth) and not ws


# ============================================================================================
# Bad parameters
# ============================================================================================
@pytest.mark.parametrize(
    "params, word",
    [
        ({"n_clusters": True}, "n_clusters"),
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 2.0}, "n_clusters"),
        ({"rank": False}, "rank"),
        ({"rank": 0}, "rank"),
        ({"rank": 100}, "rank"),
        ({"mu": 0}, "mu"),
        ({"mu": -1.0}, "mu"),
        ({"mu": np.inf}, "mu"),
        ({"rho": 1}, "rho"),
        ({"rho": np.inf}, "rho"),
        ({"rho": np.nan}, "rho"),
        ({"max_iter": 0}, "max_iter"),
        ({"max_iter": True}, "max_iter"),
        ({"tol": -1.0}, "tol"),
        ({"tol": np.nan}, "tol"),
        ({"kkt_tol": -1.0}, "kkt_tol"),
        ({"loss": "huber"}, "loss"),
        ({"solver": "sparse"}, "solver"),
        ({"loss": "l1", "solver": "compressed"}, "solver='compressed' needs loss='l12' or 'fro'"),
        ({"n_clusters": 5}, "too few|n_clusters"),
    ],
)
def test_bad_parameters_are_named(params, word):
    data = P[:4] if params.get("n_clusters") == 5 else P
    if params.get("n_clusters") == 5:
        data = np.array([[0, 1], [0, 0], [1, 1], [1, 0]])
    with pytest.raises(ValueError, match=word):
        on_partitions(**params).fit(data)


def test_n_clusters_none_is_the_median_number_of_clusters():
    est, ws = fit(P)
    assert est.n_clusters_ == 2 and found(est) and not ws


# ============================================================================================
# On data (partitions="kmeans", the default)
# ============================================================================================
@pytest.mark.parametrize(
    "data, params, word",
    [
        (X[:3], {"n_clusters": 2, "base_k": 5}, "base_k=5 exceeds n_samples=3"),
        (X[:1], {}, "n_samples=1"),
        (np.where(np.arange(40).reshape(20, 2) == 3, np.nan, X), {}, "NaN"),
        (np.ones((20, 2)), {}, "too few distinct samples"),
        (X, {"base_k": 1}, "base_k"),
        (X, {"base_k": True}, "base_k"),
        (X, {"n_partitions": 0}, "n_partitions"),
        (X, {"n_partitions": True}, "n_partitions"),
        (X, {"partitions": "labels"}, "partitions"),
    ],
)
def test_bad_data_and_parameters_on_data_are_named(data, params, word):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # k-means on identical rows
        with pytest.raises(ValueError, match=word):
            RobustEnsembleClustering(**params).fit(data)


def test_on_data_the_defaults_find_two_separated_clusters():
    est = RobustEnsembleClustering(random_state=0).fit(X)
    assert est.n_clusters_ == 2 and found(est) and est.converged_
    assert est.solver_info_ == {"solver": "dense", "n_iter": est.n_iter_, "status": "converged"}


# ============================================================================================
# Degenerate ensembles
# ============================================================================================
@pytest.mark.parametrize(
    "data",
    [
        np.column_stack([Y, 1 - Y, Y, Y]),                 # all members agree (up to renaming)
        np.column_stack([Y * 10**12, Y, 1 - Y]),           # huge label values
        np.column_stack([Y - 5, Y, 1 - Y]),                # negative labels other than -1
        np.column_stack([np.where(np.arange(20) % 2, -1, Y), np.where(np.arange(20) % 2, Y, -1), Y]),
        Y[:, None],                                        # a single base partition
        np.column_stack([Y, 1 - Y] * 30),                  # many identical members
    ],
    ids=["all identical", "huge labels", "negative labels", "missing labels", "single member",
         "60 identical members"],
)
def test_degenerate_but_clear_ensembles_are_right(data):
    est, ws = fit(data, n_clusters=2)
    assert found(est) and not ws
    assert est.converged_


def test_more_clusters_than_distinct_rows_warns():
    est, ws = fit(np.column_stack([Y, 1 - Y, Y, Y]), n_clusters=5)
    assert said(ws, "distinct", ClusterCountWarning)
    assert est.n_clusters_ == 2


def test_rank_above_the_rank_of_L_warns():
    # Two two-cluster partitions: L has rank 3 (each block sums to the ones vector).
    Q = np.column_stack([Y, np.arange(20) % 2])
    est, ws = fit(Q, n_clusters=2, rank=4)
    assert said(ws, "rank of L", DegenerateDataWarning)
    np.testing.assert_allclose(est.anomaly_scores_, 0.0, atol=1e-6)


# ============================================================================================
# Solver limits: convergence warnings
# ============================================================================================
@pytest.mark.parametrize(
    "params, word",
    [
        ({"max_iter": 1}, "max_iter=1"),
        ({"tol": 0.0, "max_iter": 50}, "max_iter=50"),
        ({"rho": 1.0001, "max_iter": 50}, "max_iter=50"),
        ({"mu": 1e-300}, "max_iter"),
    ],
)
def test_iteration_limits_warn(params, word):
    est, ws = fit(P, n_clusters=2, **params)
    assert said(ws, word, ConvergenceWarning) and not est.converged_
    assert found(est)  # the labels of this easy ensemble are still right


def test_a_stalled_alm_warns_and_names_rho():
    Q, _ = hard_ensemble()
    est, ws = fit(Q, n_clusters=10, rho=1.1)
    assert said(ws, r"stalled.*not stationary.*rho closer to 1", ConvergenceWarning)
    assert not est.converged_ and est.tangent_residual_ > est.kkt_tol
    assert est.residuals_[-1] < est.tol  # feasible: the primal residual alone said "converged"
    # The source's primal-only rule stops silently at the same point.
    quiet, ws2 = fit(Q, n_clusters=10, rho=1.1, kkt_tol=np.inf)
    assert not ws2 and quiet.converged_ and quiet.n_iter_ <= est.n_iter_


def test_huge_mu_is_the_frobenius_fit():
    est, ws = fit(P, n_clusters=2, mu=1e300)
    fro, _ = fit(P, n_clusters=2, loss="fro")
    assert not ws and est.n_iter_ == 1 and found(est)
    np.testing.assert_allclose(est.low_rank_, fro.low_rank_, atol=1e-9)


# ============================================================================================
# Memory guards: raise before allocating, naming the alternative
# ============================================================================================
def test_dense_path_above_the_budget_names_the_compressed_solver():
    Pbig, _ = noisy_copies(20_000, 10, 20, random_state=0)  # c = 200: dense ~ 240 MB
    with mmcedu.config_context(memory_budget="30MB"):  # compressed ~24 MB, 8 N c = 32 MB
        tracemalloc.start()
        with pytest.raises(MemoryBudgetError, match="solver='compressed'"):
            on_partitions(10, solver="dense").fit(Pbig)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 20e6, "the guard must fire before L is allocated"
        with pytest.raises(MemoryBudgetError, match="loss='l12' or 'fro'"):
            on_partitions(10, loss="l1").fit(Pbig)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # 30 iterations: not the point
            est = on_partitions(10, max_iter=30, random_state=0).fit(Pbig)
        assert est.solver_info_["solver"] == "compressed"
        # The N x c matrices are rebuilt on demand, under the same budget.
        with pytest.raises(MemoryBudgetError, match="reconstruct_rows"):
            est.low_rank_  # noqa: B018
        rows = est.reconstruct_rows("low_rank", np.arange(5))
        assert rows.shape == (5, 200) and np.all(np.isfinite(rows))


def test_many_samples_just_work_on_the_default_path():
    rs = np.random.RandomState(0)
    Pbig = np.column_stack([rs.randint(3, size=200_000) for _ in range(5)])
    est, _ = fit(Pbig, n_clusters=3, max_iter=30)
    assert est.solver_info_["solver"] == "compressed" and est.labels_.shape == (200_000,)


# ============================================================================================
# Defaults against k-means on standardized data (base partitions from k-means members)
# ============================================================================================
@pytest.mark.parametrize(
    "load, k",
    [(lambda: digits((3, 8), 30, random_state=0), 2),
     (lambda: two_gaussians(60, distance=4.0, random_state=0), 2),
     (iris, 3)],
    ids=["digits 3-8", "two gaussians", "iris"],
)
def test_defaults_are_no_worse_than_kmeans(load, k):
    Xr, yr = load()
    Xr = StandardScaler().fit_transform(Xr)
    km = clustering_error(yr, KMeans(k, n_init=10, random_state=0).fit_predict(Xr))
    est, ws = fit(base_partitions(Xr, 10, k, random_state=0))  # n_clusters inferred
    assert est.n_clusters_ == k and not ws
    assert clustering_error(yr, est.labels_) <= km + 0.05


# ============================================================================================
# Helpers of the module
# ============================================================================================
@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: ens.robust_low_rank(np.eye(3), 0), "rank"),
        (lambda: ens.robust_low_rank(np.eye(3), 4), "rank"),
        (lambda: ens.robust_low_rank(np.eye(3), True), "rank"),
        (lambda: ens.robust_low_rank(np.where(np.eye(3) > 0, np.nan, 0.0), 1, max_iter=5), "NaN"),
        (lambda: ens.robust_low_rank(np.eye(3), 1, rho=1.0), "rho"),
        (lambda: ens.robust_low_rank(np.eye(3), 1, mu=-1.0), "mu"),
        (lambda: ens.robust_low_rank(np.eye(3), 1, loss="huber"), "loss"),
        (lambda: ens.robust_low_rank(np.ones(3), 1), "2-D"),
        (lambda: ens.column_shrinkage(np.eye(3), -1.0), "alpha"),
        (lambda: ens.column_shrinkage(np.eye(3), np.nan), "alpha"),
        (lambda: ens.soft_threshold(np.eye(3), -1.0), "alpha"),
        (lambda: ens.best_rank_k(np.eye(3), 0), "rank"),
        (lambda: ens.best_rank_k(np.eye(3), 4), "rank"),
        (lambda: ens.best_rank_k(np.ones(3), 1), "2-D"),
        (lambda: ens.tangent_residual(np.eye(3), np.eye(3), np.eye(2), 1), "shape"),
    ],
)
def test_helpers_reject_bad_arguments(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_robust_low_rank_warns_when_it_stops_early():
    L = np.random.RandomState(0).rand(30, 8)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        ens.robust_low_rank(L, 2, max_iter=3)


def test_reconstruct_rows_rejects_unknown_names_and_unfitted_estimators():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RobustEnsembleClustering().low_rank_  # noqa: B018
    assert not hasattr(RobustEnsembleClustering(), "error_")
    est, _ = fit(P, n_clusters=2)
    with pytest.raises(ValueError, match="name"):
        est.reconstruct_rows("X")
