"""Tests of mmcedu.ensemble: the two ALM steps against oracles, the estimator, the baselines."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from mmcedu._validation import solve_cvxpy
from mmcedu.datasets import blobs
from mmcedu.ensemble import (
    RobustEnsembleClustering,
    align_labels,
    base_partitions,
    best_rank_k,
    check_partitions,
    coassociation_clustering,
    coassociation_matrix,
    column_shrinkage,
    indicator_matrix,
    l12_norm,
    l12_low_rank_irls,
    majority_vote,
    soft_threshold,
)
from mmcedu.metrics import adjusted_rand_score


def _ensemble(n=120, k=3, M=8, n_random=0, n_wrong_k=0, seed=0):
    X, y = blobs(n, centers=k, n_features=4, cluster_std=1.5, random_state=seed)
    P, kinds = base_partitions(
        X, M, k, n_random=n_random, n_wrong_k=n_wrong_k, return_kinds=True, random_state=seed
    )
    return P, kinds, y


# --------------------------------------------------------------------------- proximal steps
@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5])
def test_column_shrinkage_matches_cvxpy(alpha):
    rng = np.random.RandomState(0)
    Y = rng.randn(6, 5) * np.array([0.1, 0.5, 1.0, 2.0, 4.0])  # some columns below alpha
    E = cp.Variable(Y.shape)
    obj = alpha * cp.sum(cp.norm(E, 2, axis=0)) + 0.5 * cp.sum_squares(E - Y)
    prob = cp.Problem(cp.Minimize(obj))
    solve_cvxpy(prob, "CLARABEL", what="column-shrinkage prox")
    ours = column_shrinkage(Y, alpha)
    np.testing.assert_allclose(ours, E.value, atol=1e-5)
    value = alpha * l12_norm(ours) + 0.5 * np.sum((ours - Y) ** 2)
    assert value <= prob.value + 1e-7


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 6), st.integers(1, 6), st.floats(0.01, 5.0), st.integers(0, 2**31 - 1)
)
def test_column_shrinkage_optimality_conditions(n, c, alpha, seed):
    # 0 in alpha * d||E_j|| + E_j - Y_j: a zero column needs ||Y_j|| <= alpha, a non-zero
    # column needs Y_j - E_j = alpha E_j / ||E_j||.
    Y = np.random.RandomState(seed).randn(n, c) * 2
    E = column_shrinkage(Y, alpha)
    for j in range(c):
        nE = np.linalg.norm(E[:, j])
        if nE == 0:
            assert np.linalg.norm(Y[:, j]) <= alpha + 1e-12
        else:
            np.testing.assert_allclose(Y[:, j] - E[:, j], alpha * E[:, j] / nE, atol=1e-10)


def test_soft_threshold_matches_cvxpy():
    rng = np.random.RandomState(1)
    Y = rng.randn(5, 4)
    E = cp.Variable(Y.shape)
    prob = cp.Problem(cp.Minimize(0.7 * cp.sum(cp.abs(E)) + 0.5 * cp.sum_squares(E - Y)))
    solve_cvxpy(prob, "CLARABEL", what="l1 prox")
    np.testing.assert_allclose(soft_threshold(Y, 0.7), E.value, atol=1e-5)


def test_e_step_threshold_is_one_over_mu_not_two():
    # Problem (10): min ||E||_{1,2} + <Lam, L - X - E> + mu/2 ||L - X - E||^2.
    rng = np.random.RandomState(2)
    L, X, Lam = rng.rand(7, 5), rng.rand(7, 5), rng.randn(7, 5)
    mu = 0.8

    def obj10(E):
        R = L - X - E
        return l12_norm(E) + np.sum(Lam * R) + mu / 2 * np.sum(R**2)

    Y = L - X + Lam / mu
    E = cp.Variable(L.shape)
    R = L - X - E
    prob = cp.Problem(
        cp.Minimize(cp.sum(cp.norm(E, 2, axis=0)) + cp.sum(cp.multiply(Lam, R)) + mu / 2 * cp.sum_squares(R))
    )
    solve_cvxpy(prob, "CLARABEL", what="E step (10)")
    right, wrong = column_shrinkage(Y, 1 / mu), column_shrinkage(Y, 2 / mu)
    np.testing.assert_allclose(right, E.value, atol=1e-5)
    assert obj10(right) < obj10(wrong) - 1e-6
    # 2/mu is the exact E step of the ALM for 2 ||E||_{1,2} (same minimisers, other path).
    E2 = cp.Variable(L.shape)
    R2 = L - X - E2
    prob2 = cp.Problem(
        cp.Minimize(2 * cp.sum(cp.norm(E2, 2, axis=0)) + cp.sum(cp.multiply(Lam, R2)) + mu / 2 * cp.sum_squares(R2))
    )
    solve_cvxpy(prob2, "CLARABEL", what="E step for 2||E||")
    np.testing.assert_allclose(wrong, E2.value, atol=1e-5)


@pytest.mark.parametrize("shape", [(30, 8), (6, 12)])
def test_best_rank_k_is_truncated_svd(shape):
    rng = np.random.RandomState(3)
    A = rng.randn(*shape)
    k = 3
    X, F = best_rank_k(A, k)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(X, (U[:, :k] * s[:k]) @ Vt[:k], atol=1e-9)
    assert np.linalg.matrix_rank(X) == k
    np.testing.assert_allclose(np.linalg.svd(F, compute_uv=False), s[:k], rtol=1e-9)
    # Eckart-Young: no random rank-k matrix is closer.
    for _ in range(20):
        Z = rng.randn(shape[0], k) @ rng.randn(k, shape[1])
        assert np.linalg.norm(A - X) <= np.linalg.norm(A - Z)


# --------------------------------------------------------------------------- indicator matrix
def test_indicator_matrix_blocks_and_missing():
    P = np.array([[0, 5], [1, 5], [1, -1], [0, 7]])
    L, owner, label = indicator_matrix(P)
    expected = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [0, 1, 0, 0], [1, 0, 0, 1]], float)
    np.testing.assert_array_equal(L, expected)
    np.testing.assert_array_equal(owner, [0, 0, 1, 1])
    np.testing.assert_array_equal(label, [0, 1, 5, 7])


def test_different_k_gives_sum_km_columns():
    P, _, _ = _ensemble(M=6, n_wrong_k=3)
    k_m = [np.unique(P[:, m]).size for m in range(P.shape[1])]
    est = RobustEnsembleClustering(3, random_state=0).fit(P)
    assert est.low_rank_.shape == (P.shape[0], sum(k_m))
    assert est.anomaly_scores_.shape == (sum(k_m),)
    np.testing.assert_array_equal(np.bincount(est.column_partition_), k_m)


# --------------------------------------------------------------------------- estimator
def test_perfect_ensemble_recovers_truth():
    truth = np.repeat(np.arange(4), 15)
    rng = np.random.RandomState(0)
    P = np.column_stack([rng.permutation(4)[truth] for _ in range(5)])
    for loss in ["l12", "fro", "l1"]:
        est = RobustEnsembleClustering(4, loss=loss, random_state=0).fit(P)
        assert adjusted_rand_score(truth, est.labels_) == 1.0
        np.testing.assert_allclose(est.anomaly_scores_, 0, atol=1e-5)


def test_alm_converges_and_does_not_lose_to_frobenius_on_its_own_loss():
    P, _, _ = _ensemble(M=10, n_random=4, seed=1)
    L, _, _ = indicator_matrix(P)
    l12 = RobustEnsembleClustering(3, random_state=0).fit(P)
    fro = RobustEnsembleClustering(3, loss="fro", random_state=0).fit(P)
    assert l12.residuals_[-1] < l12.tol and l12.n_iter_ < l12.max_iter
    assert np.linalg.matrix_rank(l12.low_rank_, tol=1e-6) == 3
    np.testing.assert_allclose(l12.error_, L - l12.low_rank_, atol=1e-5)
    # The Frobenius solution is feasible for (3): the ALM must reach an l12 loss no worse...
    assert l12_norm(L - l12.low_rank_) <= l12_norm(L - fro.low_rank_) + 1e-6
    # ... and about the loss of an independent local solver (IRLS, a majorize-minimize).
    X_irls = l12_low_rank_irls(L, 3)
    assert l12_norm(L - l12.low_rank_) <= 1.01 * l12_norm(L - X_irls)
    # ... while Frobenius wins on its own loss (Eckart-Young).
    assert np.linalg.norm(L - fro.low_rank_) <= np.linalg.norm(L - l12.low_rank_) + 1e-9


def test_random_partitions_get_the_highest_anomaly_scores():
    P, kinds, y = _ensemble(n=150, M=10, n_random=3, seed=2)
    est = RobustEnsembleClustering(3, random_state=0).fit(P)
    bad = est.partition_scores_[kinds == "random"]
    good = est.partition_scores_[kinds == "kmeans"]
    assert bad.min() > good.max()
    # The consensus beats the typical good member despite the random ones.
    members = [adjusted_rand_score(y, P[:, m]) for m in np.flatnonzero(kinds == "kmeans")]
    assert adjusted_rand_score(y, est.labels_) >= np.median(members)


def test_invariant_to_renaming_labels_and_reordering_partitions():
    P, _, _ = _ensemble(M=6, n_random=2, seed=3)
    rng = np.random.RandomState(0)
    Q = np.column_stack([rng.permutation(10)[P[:, m]] + 100 for m in range(P.shape[1])])
    order = rng.permutation(P.shape[1])
    a = RobustEnsembleClustering(3, random_state=0).fit(P)
    b = RobustEnsembleClustering(3, random_state=0).fit(Q[:, order])
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(a.partition_scores_[order], b.partition_scores_, atol=1e-6)


def test_integer_valued_floats_equal_integers():
    P, _, _ = _ensemble(M=5)
    a = RobustEnsembleClustering(3, random_state=0).fit(P)
    b = RobustEnsembleClustering(3, random_state=0).fit(P.astype(float))
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_missing_labels_are_documented_zero_rows():
    P, _, y = _ensemble(n=150, M=8, seed=4)
    rng = np.random.RandomState(1)
    Pm = P.copy()
    Pm[rng.rand(*P.shape) < 0.2] = -1
    Pm[np.all(Pm == -1, axis=1), 0] = P[np.all(Pm == -1, axis=1), 0]
    est = RobustEnsembleClustering(3, random_state=0).fit(Pm)
    L, owner, _ = indicator_matrix(Pm)
    for m in range(P.shape[1]):
        assert np.all(L[Pm[:, m] == -1][:, owner == m] == 0)
    # With 20 % of the votes removed the consensus is still as good as the worst full member.
    members = [adjusted_rand_score(y, P[:, m]) for m in range(P.shape[1])]
    assert adjusted_rand_score(y, est.labels_) >= min(members)


def test_convergence_warning():
    P, _, _ = _ensemble(M=5, n_random=1)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        RobustEnsembleClustering(3, max_iter=2).fit(P)


# --------------------------------------------------------------------------- bad input
def test_bad_input_errors():
    good = np.array([[0, 1], [0, 0], [1, 1], [1, 0]])
    with pytest.raises(ValueError, match="column\\) 1 has 1 distinct"):
        RobustEnsembleClustering(2).fit(np.array([[0, 3], [1, 3], [1, 3], [0, 3]]))
    with pytest.raises(ValueError, match="no label in any base partition"):
        RobustEnsembleClustering(2).fit(np.vstack([good, [-1, -1]]))
    with pytest.raises(ValueError, match="rank"):
        RobustEnsembleClustering(2, rank=0).fit(good)
    with pytest.raises(ValueError, match="rank=5 exceeds"):
        RobustEnsembleClustering(2, rank=5).fit(good)
    with pytest.raises(ValueError, match="integer labels"):
        RobustEnsembleClustering(2).fit(good + 0.5)
    with pytest.raises(ValueError, match="too few"):
        RobustEnsembleClustering(5).fit(good)
    with pytest.raises(ValueError, match="2-D"):
        check_partitions(np.arange(4))


# --------------------------------------------------------------------------- baselines
def test_coassociation_matrix_brute_force():
    rng = np.random.RandomState(5)
    P = rng.randint(3, size=(12, 4))
    P[rng.rand(12, 4) < 0.2] = -1
    P[np.all(P == -1, axis=1), 0] = 0
    P[0, :] = [0, 1, 2, 0]
    P[1, :] = [1, 2, 0, 1]
    C = coassociation_matrix(P)
    for i in range(12):
        for j in range(12):
            both = [(P[i, m], P[j, m]) for m in range(4) if P[i, m] >= 0 and P[j, m] >= 0]
            want = np.mean([a == b for a, b in both]) if both else 0.0
            assert C[i, j] == pytest.approx(want)


def test_baselines_on_relabelled_copies():
    truth = np.repeat(np.arange(3), 10)
    rng = np.random.RandomState(0)
    P = np.column_stack([rng.permutation(3)[truth] for _ in range(4)])
    assert adjusted_rand_score(truth, majority_vote(P, 3)) == 1.0
    assert adjusted_rand_score(truth, coassociation_clustering(P, 3)) == 1.0
    perm = np.array([2, 0, 1])
    np.testing.assert_array_equal(align_labels(truth, perm[truth], 3), truth)


def test_base_partitions_kinds():
    X, _ = blobs(80, centers=3, n_features=4, random_state=0)
    P, kinds = base_partitions(X, 10, 3, n_random=3, n_wrong_k=2, return_kinds=True, random_state=0)
    assert P.shape == (80, 10)
    assert sorted(kinds.tolist()) == sorted(["random"] * 3 + ["wrong_k"] * 2 + ["kmeans"] * 5)
    for m in range(10):
        k_m = np.unique(P[:, m]).size
        if kinds[m] == "wrong_k":
            assert k_m != 3
        else:
            assert k_m == 3
    with pytest.raises(ValueError, match="exceeds n_partitions"):
        base_partitions(X, 3, 3, n_random=2, n_wrong_k=2)


def test_majority_vote_folds_extra_clusters_into_their_best_partner():
    truth = np.repeat(np.arange(3), 8)
    finer = truth.copy()
    finer[truth == 2] = np.where(np.arange(8) < 4, 2, 3)  # cluster 2 split in two
    P = np.column_stack([truth, (truth + 1) % 3, finer])
    assert adjusted_rand_score(truth, majority_vote(P, 3)) == 1.0
    np.testing.assert_array_equal(align_labels(truth, finer, 3), truth)


def test_robust_low_rank_rejects_unknown_loss():
    from mmcedu.ensemble import robust_low_rank

    with pytest.raises(ValueError, match="loss must be"):
        robust_low_rank(np.eye(3), 1, loss="huber")


def test_scaling_helper_on_tiny_sizes():
    from mmcedu.experiments.ensemble import noisy_copies, scaling

    P, truth = noisy_copies(50, 3, 4, noise=0.0, random_state=0)
    assert P.shape == (50, 4)
    assert all(adjusted_rand_score(truth, P[:, m]) == 1.0 for m in range(4))
    runs = scaling([40, 80], n_clusters=3, n_partitions=4, coassoc_max_gb=0.0)
    assert {r["method"] for r in runs} == {"l12 ALM", "fro", "co-assoc", "vote"}
    assert all(r["skipped"] for r in runs if r["method"] == "co-assoc")
    assert all(r["seconds"] > 0 for r in runs if not r["skipped"])
