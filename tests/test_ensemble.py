"""Tests of mmcedu.robust_ensemble and mmcedu.partitions: the two ALM steps against oracles,
the estimator, the generation of ensembles and the baselines."""

import functools
import hashlib

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from mmcedu._cvxpy import solve_cvxpy
from mmcedu.datasets import blobs
from mmcedu.metrics import adjusted_rand_score
from mmcedu.partitions import (
    align_labels,
    base_partitions,
    check_partitions,
    coassociation_clustering,
    coassociation_matrix,
    indicator_matrix,
    majority_vote,
    noisy_copies,
)
from mmcedu.robust_ensemble import (
    RobustEnsembleClustering,
    best_rank_k,
    column_shrinkage,
    l12_norm,
    robust_low_rank,
    soft_threshold,
    tangent_residual,
)
from mmcedu_lab.robust_ensemble import l12_low_rank_irls

#: The estimator on given base partitions.
on_partitions = functools.partial(RobustEnsembleClustering, partitions="precomputed")


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
        cp.Minimize(2 * cp.sum(cp.norm(E2, 2, axis=0)) + cp.sum(cp.multiply(Lam, R2))
                    + mu / 2 * cp.sum_squares(R2))
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
    est = on_partitions(3, random_state=0).fit(P)
    assert est.low_rank_.shape == (P.shape[0], sum(k_m))
    assert est.anomaly_scores_.shape == (sum(k_m),)
    np.testing.assert_array_equal(np.bincount(est.column_partition_), k_m)


# --------------------------------------------------------------------------- estimator
def test_perfect_ensemble_recovers_truth():
    truth = np.repeat(np.arange(4), 15)
    rng = np.random.RandomState(0)
    P = np.column_stack([rng.permutation(4)[truth] for _ in range(5)])
    for loss in ["l12", "fro", "l1"]:
        est = on_partitions(4, loss=loss, random_state=0).fit(P)
        assert adjusted_rand_score(truth, est.labels_) == 1.0
        np.testing.assert_allclose(est.anomaly_scores_, 0, atol=1e-5)


def test_alm_converges_and_does_not_lose_to_frobenius_on_its_own_loss():
    P, _, _ = _ensemble(M=10, n_random=4, seed=1)
    L, _, _ = indicator_matrix(P)
    l12 = on_partitions(3, random_state=0).fit(P)
    fro = on_partitions(3, loss="fro", random_state=0).fit(P)
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
    est = on_partitions(3, random_state=0).fit(P)
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
    a = on_partitions(3, random_state=0).fit(P)
    b = on_partitions(3, random_state=0).fit(Q[:, order])
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(a.partition_scores_[order], b.partition_scores_, atol=1e-6)


def test_integer_valued_floats_equal_integers():
    P, _, _ = _ensemble(M=5)
    a = on_partitions(3, random_state=0).fit(P)
    b = on_partitions(3, random_state=0).fit(P.astype(float))
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_missing_labels_are_documented_zero_rows():
    P, _, y = _ensemble(n=150, M=8, seed=4)
    rng = np.random.RandomState(1)
    Pm = P.copy()
    Pm[rng.rand(*P.shape) < 0.2] = -1
    Pm[np.all(Pm == -1, axis=1), 0] = P[np.all(Pm == -1, axis=1), 0]
    est = on_partitions(3, random_state=0).fit(Pm)
    L, owner, _ = indicator_matrix(Pm)
    for m in range(P.shape[1]):
        assert np.all(L[Pm[:, m] == -1][:, owner == m] == 0)
    # With 20 % of the votes removed the consensus is still as good as the worst full member.
    members = [adjusted_rand_score(y, P[:, m]) for m in range(P.shape[1])]
    assert adjusted_rand_score(y, est.labels_) >= min(members)


def test_convergence_warning():
    P, _, _ = _ensemble(M=5, n_random=1)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        on_partitions(3, max_iter=2).fit(P)


# --------------------------------------------------------------------------- bad input
def test_bad_input_errors():
    good = np.array([[0, 1], [0, 0], [1, 1], [1, 0]])
    with pytest.raises(ValueError, match="column\\) 1 has 1 distinct"):
        on_partitions(2).fit(np.array([[0, 3], [1, 3], [1, 3], [0, 3]]))
    with pytest.raises(ValueError, match="no label in any base partition"):
        on_partitions(2).fit(np.vstack([good, [-1, -1]]))
    with pytest.raises(ValueError, match="rank"):
        on_partitions(2, rank=0).fit(good)
    with pytest.raises(ValueError, match="rank=5 exceeds"):
        on_partitions(2, rank=5).fit(good)
    with pytest.raises(ValueError, match="integer labels"):
        on_partitions(2).fit(good + 0.5)
    with pytest.raises(ValueError, match="too few"):
        on_partitions(5).fit(good)
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
    with pytest.raises(ValueError, match="loss"):
        robust_low_rank(np.eye(3), 1, loss="huber")


def test_scaling_helper_on_tiny_sizes():
    from mmcedu_lab.robust_ensemble import MAX_N, scaling

    P, truth = noisy_copies(50, 3, 4, noise=0.0, random_state=0)
    assert P.shape == (50, 4)
    assert all(adjusted_rand_score(truth, P[:, m]) == 1.0 for m in range(4))
    runs = scaling([40, 80], max_n={"co-assoc": 0}, memory="tracemalloc")
    assert {r["method"] for r in runs} == {"l12 ALM", "fro", "co-assoc", "vote"}
    assert all(r["skipped"] for r in runs if r["method"] == "co-assoc")
    assert all(r["seconds"] > 0 and r["peak_mb"] > 0 for r in runs if not r["skipped"])
    assert MAX_N["co-assoc"] ** 2 * 16 <= 8e9  # the default keeps co-association within 8 GB


def test_n_clusters_none_is_the_median_number_of_clusters_of_the_members():
    truth = np.repeat(np.arange(4), 6)
    coarse = truth // 2  # 2 clusters
    P = np.column_stack([truth, truth, coarse, (truth + 1) % 4, coarse])
    est = on_partitions(random_state=0).fit(P)  # k_m = 4, 4, 2, 4, 2: median 4
    assert est.n_clusters_ == 4 and adjusted_rand_score(truth, est.labels_) == 1.0
    assert on_partitions(2, random_state=0).fit(P).n_clusters_ == 2


# --------------------------------------------------------------------------- stationarity (KKT)
def _kkt_ensemble(seed=0):
    """blobs, 15 members (3 random, 3 wrong-k), 10 % missing labels: a well separated gap."""
    X, _ = blobs(600, centers=3, n_features=4, cluster_std=1.5, random_state=seed)
    P = base_partitions(X, 15, 3, n_random=3, n_wrong_k=3, random_state=seed)
    P[np.random.RandomState(seed).rand(*P.shape) < 0.1] = -1
    P[np.all(P == -1, axis=1), 0] = 0
    return P


def test_the_end_point_is_stationary():
    P = _kkt_ensemble()
    est = on_partitions(3, random_state=0).fit(P)
    L, _, _ = indicator_matrix(P)
    X, E, Lam = est.low_rank_, est.error_, est.multipliers_
    assert est.converged_ and est.kkt_residuals_["primal"][-1] < est.tol
    # (i) feasibility, (ii) Lambda in the subdifferential of ||E||_{1,2}, (iii) P_T(Lambda) = 0.
    np.testing.assert_allclose(X + E, L, atol=1e-6)
    norms = np.linalg.norm(E, axis=0)
    on = norms > 1e-9
    np.testing.assert_allclose(Lam[:, on], E[:, on] / norms[on], atol=1e-6)
    assert np.all(np.linalg.norm(Lam[:, ~on], axis=0) <= 1 + 1e-9)
    assert tangent_residual(L, X, Lam, 3) < est.kkt_tol
    np.testing.assert_allclose(tangent_residual(L, X, Lam, 3), est.tangent_residual_, rtol=1e-4)
    # An independent local solver of the same loss ends at the same loss.
    assert l12_norm(L - X) <= 1.001 * l12_norm(L - l12_low_rank_irls(L, 3))


def test_the_primal_residual_decays_for_any_iterates_the_tangent_residual_does_not():
    P, _, _ = _ensemble(M=10, n_random=4, seed=1)
    L, _, _ = indicator_matrix(P)
    est = on_partitions(3, rho=1.1, kkt_tol=np.inf, random_state=0).fit(P)
    c = L.shape[1]
    mu = 1.25 / np.linalg.norm(L, 2) * 1.1 ** np.arange(est.n_iter_)
    # ||L - X - E|| = ||Lambda^{t+1} - Lambda^t|| / mu_t <= 2 sqrt(c) / mu_t: automatic.
    primal = np.array(est.kkt_residuals_["primal"]) * np.linalg.norm(L)
    assert np.all(primal <= 2 * np.sqrt(c) / mu + 1e-12)
    # P_T(Lambda^{t+1}) = mu_t P_T(E^t - E^{t+1}): the tangent residual is at most the dual one.
    t, d = est.kkt_residuals_["tangent"], est.kkt_residuals_["dual"]
    assert np.all(t <= d * (1 + 1e-8) + 1e-12)


@pytest.mark.parametrize("solver", ["dense", "compressed"])
def test_kkt_tol_inf_is_the_sources_primal_only_rule(solver):
    # Algorithm 1 as printed: stop when ||L - X - E|| / ||L|| < tol, penalty growth rho = 1.1.
    P, _, _ = _ensemble(M=10, n_random=4, seed=2)
    L, _, _ = indicator_matrix(P)
    mu, E, Lam = 1.25 / np.linalg.norm(L, 2), np.zeros_like(L), np.zeros_like(L)
    for t in range(1, 501):  # noqa: B007 (t is the iteration count after the loop)
        U, s, Vt = np.linalg.svd(L - E + Lam / mu, full_matrices=False)
        X = (U[:, :3] * s[:3]) @ Vt[:3]
        Y = L - X + Lam / mu
        E = Y * np.maximum(0.0, 1.0 - (1.0 / mu) / np.maximum(np.linalg.norm(Y, axis=0), 1e-300))
        Lam = Lam + mu * (L - X - E)
        mu *= 1.1
        if np.linalg.norm(L - X - E) / np.linalg.norm(L) < 1e-7:
            break
    est = on_partitions(3, rho=1.1, kkt_tol=np.inf, solver=solver, random_state=0).fit(P)
    assert est.converged_ and est.n_iter_ == t
    np.testing.assert_allclose(est.low_rank_, X, atol=1e-6)


def test_a_slower_penalty_reaches_stationarity_where_a_fast_one_stalls():
    from sklearn.utils import check_random_state

    from mmcedu_lab.registry import load

    Xd, _ = load("digits", 500)
    P, kinds = base_partitions(Xd, 20, 10, n_random=12, return_kinds=True, random_state=0)
    rng = check_random_state(100)
    for m in np.flatnonzero(kinds == "random"):
        P[:, m] = rng.randint(2, size=P.shape[0])
    with pytest.warns(ConvergenceWarning, match="stalled"):
        fast = on_partitions(10, rho=1.1, random_state=0).fit(P)
    slow = on_partitions(10, random_state=0).fit(P)  # the default rho
    assert fast.residuals_[-1] < fast.tol and fast.tangent_residual_ > 10 * fast.kkt_tol
    assert slow.converged_ and slow.tangent_residual_ < slow.kkt_tol
    assert slow.anomaly_scores_.sum() < fast.anomaly_scores_.sum()  # a lower l12 loss


# --------------------------------------------------------------------------- the compressed path
def test_codes_and_gram_from_codes_equal_the_indicator_matrix():
    from mmcedu._robust_ensemble_codes import encode, gram, indicator

    P = _kkt_ensemble(seed=2)
    P[:, 1] = P[:, 1] * 7 - 3  # arbitrary label names, -1 stays the missing label
    P[P[:, 0] == -1, 1] = -1
    P[np.all(P == -1, axis=1), 2] = 5
    L, owner, label = indicator_matrix(P)
    codes, owner2, label2 = encode(check_partitions(P))
    np.testing.assert_array_equal(indicator(codes, L.shape[1]), L)
    np.testing.assert_array_equal(owner, owner2)
    np.testing.assert_array_equal(label, label2)
    np.testing.assert_array_equal(gram(codes, L.shape[1]), L.T @ L)


@pytest.mark.parametrize("rho", [1.1, 1.02])
def test_compressed_iterates_equal_the_dense_ones(rho):
    P = _kkt_ensemble(seed=1)
    L, _, _ = indicator_matrix(P)
    d = on_partitions(3, rho=rho, solver="dense", random_state=0).fit(P)
    c = on_partitions(3, rho=rho, solver="compressed", random_state=0).fit(P)
    assert (d.solver_info_["solver"], c.solver_info_["solver"]) == ("dense", "compressed")
    assert d.n_iter_ == c.n_iter_ and d.converged_ == c.converged_
    for key in ("primal", "tangent", "dual"):  # the same residuals at every iteration
        np.testing.assert_allclose(c.kkt_residuals_[key], d.kkt_residuals_[key], rtol=1e-6, atol=1e-10)
    for name in ("low_rank_", "error_", "multipliers_"):  # U times the c x c iterates
        np.testing.assert_allclose(getattr(c, name), getattr(d, name), atol=1e-8)
    np.testing.assert_allclose(c.anomaly_scores_, d.anomaly_scores_, atol=1e-8)
    np.testing.assert_allclose(c.partition_scores_, d.partition_scores_, atol=1e-10)
    np.testing.assert_allclose(c.singular_values_, d.singular_values_, rtol=1e-9, atol=1e-9)
    # the embedding, up to the signs of its columns, and then the same k-means labels
    signs = np.sign(np.sum(c.embedding_ * d.embedding_, axis=0))
    np.testing.assert_allclose(c.embedding_ * signs, d.embedding_, atol=1e-8)
    np.testing.assert_array_equal(c.labels_, d.labels_)
    rows = np.array([0, 7, 99])
    np.testing.assert_allclose(c.reconstruct_rows("error", rows), d.error_[rows], atol=1e-8)
    # ... and the dense iterates are those of the ALM written out on L
    X1 = robust_low_rank(L, 3, rho=rho, tol=d.tol, kkt_tol=d.kkt_tol)[0]
    np.testing.assert_allclose(X1, d.low_rank_, atol=1e-8)


def test_auto_solver_and_frobenius_on_the_compressed_path():
    P = _kkt_ensemble(seed=3)
    L, _, _ = indicator_matrix(P)
    assert on_partitions(3, random_state=0).fit(P).solver_info_["solver"] == "compressed"
    assert on_partitions(3, loss="l1", random_state=0).fit(P[:40]).solver_info_["solver"] == "dense"
    small = np.column_stack([np.arange(6) % 2, np.arange(6) % 3, np.arange(6) // 3])
    assert on_partitions(2, random_state=0).fit(small).solver_info_["solver"] == "dense"  # N <= c
    fro = on_partitions(3, loss="fro", random_state=0).fit(P)
    X_ref, _ = best_rank_k(L, 3)
    np.testing.assert_allclose(fro.low_rank_, X_ref, atol=1e-8)
    assert fro.n_iter_ == 1 and fro.tangent_residual_ < 1e-10  # Eckart-Young is stationary


def test_singular_values_and_gap():
    P = _kkt_ensemble(seed=4)
    L, _, _ = indicator_matrix(P)
    s = np.linalg.svd(L, compute_uv=False)
    est = on_partitions(3, random_state=0).fit(P)
    np.testing.assert_allclose(est.singular_values_[:10], s[:10], rtol=1e-9)
    assert est.singular_value_gap_ == pytest.approx((s[2] - s[3]) / s[2], rel=1e-9)


# --------------------------------------------------------------------------- on data
# mmcedu_lab.comparison.EnsembleOnData clustered data before the estimator could: a k-means
# ensemble drawn from check_random_state(random_state), then the ALM with the same generator.
# Its labels (sha256 of the int64 array, first 16 hex digits), recorded at commit 10c0e66:
ON_DATA_LABELS = {
    ("iris", 3, None, 0): "d8f959765fde38c5",
    ("iris", 3, 5, 1): "271832609f3431cb",
    ("iris", 2, 4, 7): "1564942a09b1b246",
    ("two circles", 2, 3, 0): "050fbf6ebaa4fb4d",
}


@pytest.mark.parametrize("case", list(ON_DATA_LABELS), ids=str)
def test_on_data_it_is_the_ensemble_of_kmeans_partitions(case, monkeypatch):
    from sklearn.utils import check_random_state

    from mmcedu.datasets import iris, two_circles
    from mmcedu_lab import comparison

    name, k, base_k, seed = case
    X = iris()[0] if name == "iris" else two_circles(80, random_state=0)[0]
    labels = RobustEnsembleClustering(k, base_k=base_k, random_state=seed).fit(X).labels_
    assert hashlib.sha256(labels.astype(np.int64).tobytes()).hexdigest()[:16] == ON_DATA_LABELS[case]
    rng = check_random_state(seed)  # the same pipeline by hand
    P = base_partitions(X, 10, base_k or k, random_state=rng)
    np.testing.assert_array_equal(labels, on_partitions(k, random_state=rng).fit(P).labels_)
    if hasattr(comparison, "EnsembleOnData"):  # the reference, while it exists (on partitions)
        monkeypatch.setattr(comparison, "RobustEnsembleClustering", on_partitions)
        ref = comparison.EnsembleOnData(k, base_k=base_k, random_state=seed).fit(X).labels_
        np.testing.assert_array_equal(labels, ref)


def test_on_data_n_clusters_none_follows_base_k():
    X, y = blobs(90, centers=3, n_features=4, random_state=0)
    assert RobustEnsembleClustering(random_state=0).fit(X).n_clusters_ == 2  # base_k = 2
    est = RobustEnsembleClustering(base_k=3, n_partitions=4, random_state=0).fit(X)
    assert est.n_clusters_ == 3 and adjusted_rand_score(y, est.labels_) == 1.0
    assert est.partition_scores_.shape == (4,) and est.n_features_in_ == 4
    np.testing.assert_array_equal(np.bincount(est.column_partition_), [3] * 4)
    assert not RobustEnsembleClustering().__sklearn_tags__().input_tags.categorical
    assert on_partitions().__sklearn_tags__().input_tags.categorical


def test_label_free_rule_is_the_comparisons():
    X, _ = blobs(60, centers=3, n_features=4, random_state=0)
    rule = RobustEnsembleClustering(3).label_free_rule(X)
    assert rule == {"param_grid": {"base_k": [3, 4, 5, 6, 7, 8, 9, 10]},
                    "criterion": ["silhouette"], "tolerance": 0.0}

    class Mine(RobustEnsembleClustering):
        pass

    assert Mine(3).label_free_rule(X) == rule
    with pytest.raises(ValueError, match="precomputed' has no label-free rule"):
        on_partitions(3).label_free_rule(X)
    with pytest.raises(ValueError, match="needs n_clusters"):
        RobustEnsembleClustering().label_free_rule(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("task, seed", [("iris", 0), ("wine", 1)])
def test_the_label_free_rule_makes_the_recorded_choices(task, seed):
    import json
    from pathlib import Path

    from mmcedu import LabelFreeSearch
    from mmcedu_lab.comparison import load_task

    records = json.loads((Path(__file__).parent / "data/label_free_choices.json").read_text())
    (want,) = [r["param_free"] for r in records
               if (r["task"], r["method"], r["seed"]) == (task, "ensemble", seed)]
    X, _, k = load_task(task, seed)
    est = RobustEnsembleClustering(k, random_state=seed)
    rule = est.label_free_rule(X)
    search = LabelFreeSearch(est, rule["param_grid"], criterion=rule["criterion"],
                             tolerance=rule["tolerance"], n_resamples=3, random_state=seed,
                             refit=False).fit(X)
    assert search.best_params_ == want


def test_memory_bytes_is_the_bound_the_fit_checks():
    import mmcedu
    from mmcedu.exceptions import MemoryBudgetError

    P, _ = noisy_copies(3000, 4, 6, noise=0.5, random_state=0)  # 6 members of 4 labels: c = 24
    for solver in ("dense", "compressed"):
        est = on_partitions(4, solver=solver, random_state=0)
        need = est.memory_bytes(3000, 6)
        with mmcedu.config_context(memory_budget=need - 1):
            with pytest.raises(MemoryBudgetError):
                est.fit(P)
        with mmcedu.config_context(memory_budget=need):
            est.fit(P)
    assert on_partitions(10, solver="dense").memory_bytes(10**6, 50) > 8 * 2**30  # c = 500
    assert on_partitions(10).memory_bytes(10**6, 50) < 2 * 2**30  # compressed ("auto")
    on_data = RobustEnsembleClustering(10, n_partitions=50)
    assert on_data.memory_bytes(10**6, 20) == on_data.memory_bytes(10**6) + 8 * 10**6 * 20
    assert on_data.memory_bytes(10**6) == on_partitions(10).memory_bytes(10**6, 50)
