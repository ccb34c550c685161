"""Tests of UMC-RLS (Pahikkala et al. 2012): formulas, fast path vs naive oracle, behaviour."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmcedu import UMCRLS
from mmcedu.datasets import blobs, iris, moons
from mmcedu.exceptions import BalanceWarning
from mmcedu.kernels import max_distance_gamma, nystroem_factor, rbf_kernel
from mmcedu.metrics import adjusted_rand_score
from mmcedu.umc_rls import _class_vectors, _ExactScorer, hat_matrix, low_rank_hat_factor, shaking_alpha
from mmcedu_lab.umc_rls import flip_delta, rls_cost, run_search, umc_objective


def _problem(seed, n, d=2, width=1.0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    return X, rbf_kernel(X, gamma=1.0 / width**2)


def _iris_kernel(fraction=0.5):
    X, y = iris()
    gamma = max_distance_gamma(X, fraction)  # the paper's width
    return X, y, gamma, rbf_kernel(X, gamma=gamma)


# --- Lemma 1 and eq. (13) --------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 25),
    log2_lam=st.integers(-10, 3),
)
def test_lemma1_rls_cost_is_n_minus_yRy(seed, n, log2_lam):
    _, K = _problem(seed, n)
    lam = 2.0**log2_lam
    y = np.where(np.random.RandomState(seed + 1).rand(n) < 0.5, -1.0, 1.0)
    R = hat_matrix(K, lam)
    assert np.allclose(R, K @ np.linalg.inv(K + lam * np.eye(n)), atol=1e-8)
    assert rls_cost(K, y, lam) == pytest.approx(n - y @ R @ y, rel=1e-8, abs=1e-8)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 25),
    log2_lam=st.integers(-10, 3),
    data=st.data(),
)
def test_flip_formula_matches_retraining(seed, n, log2_lam, data):
    _, K = _problem(seed, n)
    lam = 2.0**log2_lam
    y = np.where(np.random.RandomState(seed + 2).rand(n) < 0.5, -1.0, 1.0)
    j = data.draw(st.integers(0, n - 1))
    y2 = y.copy()
    y2[j] = -y2[j]
    exact = rls_cost(K, y2, lam) - rls_cost(K, y, lam)
    assert flip_delta(hat_matrix(K, lam), y, j) == pytest.approx(exact, rel=1e-7, abs=1e-7)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 20),
    k=st.integers(2, 5),
    data=st.data(),
)
def test_move_delta_and_cache_updates(seed, n, k, data):
    """Delta(j, d) = 4 (t_a[j] - t_d[j]) - 8 R_jj, and t_a -= 2R_j, t_d += 2R_j stay exact."""
    _, K = _problem(seed, n)
    lam = 0.1
    R = hat_matrix(K, lam)
    c = np.random.RandomState(seed).randint(k, size=n)
    scorer = _ExactScorer(R, c.copy(), k)
    for _ in range(5):
        j = data.draw(st.integers(0, n - 1))
        d = data.draw(st.integers(0, k - 1).filter(lambda v, cj=scorer.c[j]: v != cj))
        trial = scorer.c.copy()
        trial[j] = d
        expected = umc_objective(K, trial, lam, k) - umc_objective(K, scorer.c, lam, k)
        assert scorer.delta_rows(np.array([j]))[0, d] == pytest.approx(expected, rel=1e-7, abs=1e-7)
        assert scorer.delta_to(d)[j] == pytest.approx(expected, rel=1e-7, abs=1e-7)
        scorer.move(j, d)
        assert np.allclose(scorer.T, _class_vectors(scorer.c, k).T @ R, atol=1e-9)
        assert scorer.objective() == pytest.approx(umc_objective(K, scorer.c, lam, k), abs=1e-7)


def test_low_rank_factor_reproduces_R():
    X, _ = _problem(0, 40)
    Phi, _ = nystroem_factor(X, 15, gamma=1.0, random_state=0)
    K = Phi @ Phi.T
    L = low_rank_hat_factor(Phi, 0.3)
    assert L.shape == (40, Phi.shape[1])
    assert np.allclose(L @ L.T, K @ np.linalg.inv(K + 0.3 * np.eye(40)), atol=1e-9)


def test_shaking_alpha_is_eq_11():
    for n, k, i, size in [(150, 3, 0, 50), (150, 3, 1, 10), (500, 4, 5, 200), (7, 2, 3, 0)]:
        raw = np.floor(n / (2**i * k) + n / k - size)
        assert shaking_alpha(n, k, i, size) == min(max(raw, 0), n - size)
    assert shaking_alpha(10, 2, 0, 3) == 7  # round 0 with k = 2: every other point


# --- fast path vs the naive oracle -----------------------------------------------------


@pytest.mark.parametrize("search", ["shaking", "steepest", "stochastic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_path_makes_the_oracles_moves(search, seed):
    n, k, lam = 24, 3, 2.0**-4
    _, K = _problem(seed, n, width=1.5)
    moves = {}
    results = {}
    for naive in (False, True):
        log = []
        results[naive] = run_search(
            K,
            lam,
            k,
            search=search,
            n_rounds=4,
            random_state=seed,
            naive=naive,
            on_move=lambda j, d, delta, log=log: log.append((j, d, delta)),
        )
        moves[naive] = log
    fast, slow = moves[False], moves[True]
    assert len(fast) == len(slow) > 0
    assert [(j, d) for j, d, _ in fast] == [(j, d) for j, d, _ in slow]
    assert np.allclose([x[2] for x in fast], [x[2] for x in slow], atol=1e-7)
    assert np.array_equal(results[False]["labels"], results[True]["labels"])
    q = umc_objective(K, results[False]["labels"], lam, k)
    assert results[False]["objective"] == pytest.approx(q, abs=1e-8)
    assert results[True]["objective"] == pytest.approx(q, abs=1e-10)
    if search != "shaking":  # a local minimum: no single move lowers Q
        assert results[True]["converged"]


@pytest.mark.parametrize("final_descent", [True, False])
def test_estimator_objective_is_eq_10_of_its_labels(final_descent):
    X, K = _problem(3, 30, width=1.5)
    model = UMCRLS(3, alpha=0.05, gamma=1 / 1.5**2, n_rounds=5, final_descent=final_descent,
                   random_state=3).fit(X)
    ref = run_search(K, 0.05, 3, n_rounds=5, random_state=3, naive=True, keep_nonempty=True,
                     descent=final_descent)
    assert np.array_equal(ref["labels"], model.labels_)
    assert model.n_iter_ == ref["n_iter"] and model.solver_info_["n_descent_moves"] == ref["descent_moves"]
    assert model.objective_ == pytest.approx(umc_objective(K, model.labels_, 0.05, 3), abs=1e-8)
    assert model.objective_ == pytest.approx(ref["objective"], abs=1e-8)


@pytest.mark.parametrize("search", ["shaking", "steepest", "stochastic"])
@pytest.mark.parametrize("seed", [0, 1])
def test_constrained_search_and_descent_make_the_oracles_moves(search, seed):
    """keep_nonempty (and the final descent after shaking) on the fast and naive scorers."""
    n, k, lam = 18, 5, 2.0**-4
    _, K = _problem(seed, n, width=1.0)
    logs = {}
    for naive in (False, True):
        log = []
        out = run_search(K, lam, k, search=search, n_rounds=3, random_state=seed, naive=naive,
                         keep_nonempty=True, descent=True,
                         on_move=lambda j, d, dq, log=log: log.append((j, d, dq)))
        logs[naive] = (log, out)
    (fast, a), (slow, b) = logs[False], logs[True]
    assert [m[:2] for m in fast] == [m[:2] for m in slow]
    assert np.allclose([m[2] for m in fast], [m[2] for m in slow], atol=1e-7)
    assert np.array_equal(a["labels"], b["labels"]) and np.unique(a["labels"]).size == k
    assert a["converged"] and "solves" not in a["counts"] and b["counts"]["solves"] > 0


def test_shaking_ends_off_a_local_minimum_and_the_descent_reaches_one():
    """Shaking's end point (equal sizes) is not a single-move local minimum of Q; the final
    descent (Algorithm 1 from there) is, and it lowers Q by exactly the sum of its moves."""
    X, y = iris()
    K = rbf_kernel(X, gamma=max_distance_gamma(X))
    R = hat_matrix(K, 2.0**-7)
    shaken = run_search(None, 2.0**-7, 3, R=R, random_state=0)
    assert sorted(np.bincount(shaken["labels"])) == [50, 50, 50]
    scorer = _ExactScorer(R, shaken["labels"].copy(), 3)
    assert scorer.delta_rows(np.arange(150)).min() < -1e-6  # an improving move exists
    log = []
    done = run_search(None, 2.0**-7, 3, R=R, random_state=0, descent=True,
                      on_move=lambda j, d, dq: log.append(dq))
    assert done["descent_moves"] > 0 and done["converged"]
    assert done["objective"] == pytest.approx(shaken["objective"] + sum(log[-done["descent_moves"]:]))
    assert _ExactScorer(R, done["labels"].copy(), 3).delta_rows(np.arange(150)).min() >= -1e-9


def test_counted_work_per_move():
    """One claim of Algorithm 3: the fast scorer scores the n - |C_d| candidates in O(1) each
    and updates 2n cache entries; the naive oracle solves n - |C_d| + 1 linear systems."""
    n, k = 40, 3
    _, K = _problem(7, n)
    init = np.random.RandomState(7).randint(k, size=n)
    size0 = int(np.sum(init == 0))
    fast = run_search(K, 0.1, k, init=init, max_iter=1)
    naive = run_search(K, 0.1, k, init=init, max_iter=1, naive=True)
    assert fast["counts"] == {"scores": n - size0, "evaluations": 1, "cache_updates": 2 * n}
    assert naive["counts"]["solves"] == n - size0 + 1
    assert naive["counts"]["scores"] == n - size0
    full = run_search(K, 0.1, k, init=init)
    assert full["counts"]["cache_updates"] == 2 * n * full["n_iter"]
    assert full["counts"]["evaluations"] == full["n_iter"]  # shaking: one evaluation per claim


def test_full_rank_factor_makes_the_same_moves_as_exact_R():
    _, K = _problem(5, 60, width=1.2)
    lam = 2.0**-6
    s, V = np.linalg.eigh(K)
    Phi = V * np.sqrt(np.clip(s, 0, None))
    logs = []
    for kw in ({"R": hat_matrix(K, lam)}, {"L": low_rank_hat_factor(Phi, lam)}):
        log = []
        out = run_search(
            None, lam, 3, random_state=5, on_move=lambda j, d, _, log=log: log.append((j, d)), **kw
        )
        logs.append((log, out["objective"]))
    assert logs[0][0] == logs[1][0]
    assert logs[0][1] == pytest.approx(logs[1][1], abs=1e-6)


# --- behaviour the chapter teaches -----------------------------------------------------


def test_q_is_degenerate_one_cluster_beats_the_truth():
    _, y, _, K = _iris_kernel()
    lam = 2.0**-7
    q_true = umc_objective(K, y, lam, 3)
    q_one = umc_objective(K, np.zeros_like(y), lam, 3)
    assert q_one < 0.05 * q_true


def test_iris_shaking_recovers_species():
    """The paper's algorithm (shaking alone) at the paper's width and lambda."""
    X, y, gamma, _ = _iris_kernel()
    scores = [
        adjusted_rand_score(y, UMCRLS(3, alpha=2**-7, gamma=gamma, final_descent=False,
                                      random_state=s).fit_predict(X))
        for s in range(5)
    ]
    assert np.mean(scores) >= 0.9


def _standardized(loader):
    from sklearn.preprocessing import StandardScaler

    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("name", ["iris", "breast_cancer"])
def test_defaults_are_as_sensible_as_kmeans(name):
    """UMCRLS() on standardized data vs k-means, 5 seeds (the defaults study)."""
    import sklearn.datasets
    from sklearn.cluster import KMeans

    X, y = _standardized(getattr(sklearn.datasets, f"load_{name}"))
    k = len(np.unique(y))
    ours = [adjusted_rand_score(y, UMCRLS(k, random_state=s).fit_predict(X)) for s in range(5)]
    km = [adjusted_rand_score(y, KMeans(k, n_init=10, random_state=s).fit_predict(X))
          for s in range(5)]
    assert np.mean(ours) >= np.mean(km)


def test_final_descent_frees_the_sizes_on_unbalanced_data():
    """Breast cancer (212 : 357): shaking alone returns 284 : 285; the descent follows Q."""
    from sklearn.datasets import load_breast_cancer

    X, y = _standardized(load_breast_cancer)
    alone = UMCRLS(final_descent=False, random_state=0)
    with pytest.warns(BalanceWarning):
        alone.fit(X)
    both = UMCRLS(random_state=0).fit(X)
    assert sorted(np.bincount(alone.labels_)) == [284, 285]
    assert min(np.bincount(both.labels_)) < 250 and both.objective_ < alone.objective_
    assert adjusted_rand_score(y, both.labels_) > adjusted_rand_score(y, alone.labels_) + 0.15


def test_two_clusters_do_not_depend_on_the_start():
    X, _ = moons(200, random_state=1)
    labels = [UMCRLS(2, alpha=2**-7, random_state=s).fit(X).labels_ for s in range(3)]
    assert all(np.array_equal(labels[0], lab) for lab in labels[1:])


def test_precomputed_kernel_equals_rbf():
    X, _ = blobs(90, centers=3, random_state=2)
    gamma = 0.05
    a = UMCRLS(3, alpha=0.01, gamma=gamma, random_state=0).fit(X)
    b = UMCRLS(3, alpha=0.01, kernel="precomputed", random_state=0).fit(rbf_kernel(X, gamma=gamma))
    assert np.array_equal(a.labels_, b.labels_)
    assert a.objective_ == pytest.approx(b.objective_)


def test_low_rank_path_memory_and_accuracy():
    X, y = blobs(8000, centers=4, cluster_std=0.6, random_state=0)
    tracemalloc.start()
    gamma = max_distance_gamma(X)  # the paper's width, in O(n) memory
    model = UMCRLS(4, alpha=2**-7, gamma=gamma, n_components=40, random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.1 * 8 * X.shape[0] ** 2  # far below one n x n matrix (512 MB)
    assert adjusted_rand_score(y, model.labels_) > 0.9
    assert np.bincount(model.labels_).min() > 0


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("n", [600, 1500])
def test_dense_path_memory_is_its_formula(kernel, n):
    """The traced peak of a dense fit stays within memory_bytes (two n x n arrays)."""
    X, _ = blobs(n, centers=3, random_state=0)
    tracemalloc.start()
    UMCRLS(3, kernel=kernel, random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 2 * 8 * n * n < peak <= UMCRLS(3, kernel=kernel).memory_bytes(n, 2)


def test_batched_claims_keep_the_result():
    X, y = blobs(1500, centers=3, cluster_std=1.5, random_state=1)
    Phi, _ = nystroem_factor(X, 60, gamma=0.02, random_state=0)
    L = low_rank_hat_factor(Phi, 2**-7)
    one = run_search(None, 2**-7, 3, L=L, random_state=0)
    batched = run_search(None, 2**-7, 3, L=L.copy(), random_state=0, max_batches=8)
    a1 = adjusted_rand_score(y, one["labels"])
    a2 = adjusted_rand_score(y, batched["labels"])
    assert a1 > 0.9 and abs(a1 - a2) < 0.02
    assert batched["objective"] == pytest.approx(one["objective"], rel=0.02)


# --- bad input -------------------------------------------------------------------------


def test_fewer_samples_than_clusters():
    with pytest.raises(ValueError, match="too few for n_clusters"):
        UMCRLS(n_clusters=5).fit(np.random.RandomState(0).randn(3, 2))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input(bad):
    X = np.random.RandomState(0).randn(10, 2)
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        UMCRLS().fit(X)


def test_bad_precomputed_kernels():
    with pytest.raises(ValueError, match="square"):
        UMCRLS(kernel="precomputed").fit(np.ones((4, 3)))
    K = rbf_kernel(np.random.RandomState(0).randn(6, 2))
    K[0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric"):
        UMCRLS(kernel="precomputed").fit(K)


def test_bad_parameters():
    X = np.random.RandomState(0).randn(10, 2)
    with pytest.raises(ValueError, match="search"):
        UMCRLS(search="greedy").fit(X)
    with pytest.raises(ValueError, match="alpha"):
        UMCRLS(alpha=0.0).fit(X)


# --- the Table I reproduction module ---------------------------------------------------


def test_table1_data_and_registry():
    from mmcedu_lab import umc_rls as exp
    from mmcedu_lab.registry import DATASETS, load, stand_in

    assert set(exp.TABLES) == {"umc_rls_table1", "umc_rls_table2", "umc_rls_selection"}
    assert exp.DATA_SETS == ("Iris", "Moons", "USPS 1-4", "USPS 5-8")
    data = stand_in("pahikkala2012umc", "USPS 5-8")[0]
    X, y = load(data)
    assert X.shape == (500, 64) and DATASETS[data].n_clusters == 4
    assert np.array_equal(np.bincount(y)[5:], [125] * 4) and X.max() == 16  # raw pixels
    X, y = load(stand_in("pahikkala2012umc", "Iris")[0])
    assert X.shape == (150, 4)
    with pytest.raises(ValueError, match="Unknown data set"):
        load("COIL")
    with pytest.raises(ValueError, match="No stand-in"):
        stand_in("pahikkala2012umc", "COIL")


def test_precomputed_low_rank_uses_the_leading_eigenvectors():
    """n_components with a precomputed kernel: the r leading eigenpairs (a truncated
    eigensolver) give the same factor, hence the same moves, as a full decomposition."""
    X, _ = blobs(120, centers=3, random_state=4)
    K = rbf_kernel(X, gamma=0.1)
    r = 12
    model = UMCRLS(3, alpha=0.01, kernel="precomputed", n_components=r, random_state=0).fit(K)
    s, V = np.linalg.eigh(K)
    Phi = V[:, -r:] * np.sqrt(np.clip(s[-r:], 0, None))
    ref = run_search(None, 0.01, 3, L=low_rank_hat_factor(Phi, 0.01), random_state=0,
                     max_batches=64, keep_nonempty=True, descent=True)
    assert np.array_equal(ref["labels"], model.labels_)
    assert model.n_iter_ == ref["n_iter"] and model.objective_ == pytest.approx(ref["objective"])


def test_rbf_low_rank_path_is_the_search_on_the_nystroem_factor():
    """The estimator draws the start, then the landmarks, from one stream; L is built block
    by block (here in several blocks) and equals the one-shot factor."""
    from sklearn.kernel_approximation import Nystroem

    from mmcedu import umc_rls as search

    X, _ = blobs(500, centers=3, random_state=5)
    rng = np.random.RandomState(0)
    init = rng.randint(3, size=500)
    Phi = Nystroem(gamma=0.2, n_components=40, random_state=rng).fit(X).transform(X)
    L = low_rank_hat_factor(Phi, 0.125)
    ref = run_search(None, 0.125, 3, L=L, init=init, max_batches=64, keep_nonempty=True,
                     descent=True)
    old = search._BLOCK_ENTRIES
    try:
        search._BLOCK_ENTRIES = 40 * 64  # 64 rows per block: eight blocks
        model = UMCRLS(3, gamma=0.2, n_components=40, random_state=0).fit(X)
        L_blocks = Phi.copy()
        search._hat_factor_inplace(L_blocks, 0.125)
    finally:
        search._BLOCK_ENTRIES = old
    assert np.allclose(L_blocks, L, atol=1e-10)
    assert np.array_equal(ref["labels"], model.labels_) and model.n_iter_ == ref["n_iter"]
    assert model.solver_info_["n_evaluations"] == ref["counts"]["evaluations"]


def test_full_rank_low_rank_path_makes_the_dense_paths_moves():
    """n <= 64: every claim is one point at a time, so a full-rank factor (the precomputed
    kernel's eigenvectors) gives exactly the dense path's search."""
    X, _ = blobs(60, centers=3, random_state=2)
    K = rbf_kernel(X, gamma=0.1)
    dense = UMCRLS(3, kernel="precomputed", random_state=4).fit(K)
    low = UMCRLS(3, kernel="precomputed", n_components=60, random_state=4).fit(K)
    assert np.array_equal(dense.labels_, low.labels_) and dense.n_iter_ == low.n_iter_
    assert dense.objective_ == pytest.approx(low.objective_, rel=1e-9)


def test_scale_path_agrees_with_the_dense_path():
    """Nystroem r = 100 vs the exact R on 2,000 points: ARI within 0.05 (vs the truth and vs
    each other); float32 gives the same labels as float64 and Q to 1e-6 relative."""
    X, y = blobs(2000, centers=[[0, 0], [4, 0], [2, 3.5]], cluster_std=0.8, random_state=3)
    dense = UMCRLS(3, random_state=0).fit(X)
    low = UMCRLS(3, n_components=100, random_state=0).fit(X)
    low32 = UMCRLS(3, n_components=100, dtype="float32", random_state=0).fit(X)
    a_dense, a_low = adjusted_rand_score(y, dense.labels_), adjusted_rand_score(y, low.labels_)
    assert a_dense > 0.9 and abs(a_dense - a_low) < 0.05
    assert adjusted_rand_score(dense.labels_, low.labels_) > 0.95
    assert np.array_equal(low.labels_, low32.labels_)
    assert low32.objective_ == pytest.approx(low.objective_, rel=1e-6)


# --- the label-free rule, the objective contrast and the memory estimate -----------------
def _old_rls_contrast(est, X):
    """The ``"objective"`` criterion as ``mmcedu.model_selection`` computed it before the
    formula moved into the estimator (``estimator_kernel`` + ``rls_contrast``), kept verbatim
    as the reference of :meth:`UMCRLS.objective_contrast`."""
    from sklearn.metrics.pairwise import rbf_kernel as sk_rbf

    from mmcedu.metrics import permutation_mean_quadratic

    X = np.asarray(X, dtype=float)
    if est.kernel == "precomputed":
        K = X
    elif est.kernel == "linear":
        K = X @ X.T
    else:
        K = sk_rbf(X, X, gamma=float(est.gamma_))
    s, V = np.linalg.eigh((K + K.T) / 2)
    s = np.clip(s, 0.0, None)
    R = (V * (s / (s + est.alpha))) @ V.T
    _, idx = np.unique(est.labels_, return_inverse=True)
    k = max(int(idx.max()) + 1, int(est.n_clusters or 0))
    P = -np.ones((idx.size, k))
    P[np.arange(idx.size), idx] = 1.0
    n, k = P.shape
    Q = k * n - float(np.sum(P * (R @ P)))
    Q_rand = k * n - permutation_mean_quadratic(R, P)
    return np.nan if Q_rand <= 0 else float(1.0 - Q / Q_rand)


def test_label_free_rule_is_the_comparisons():
    from mmcedu.kernels import gamma_grid

    X, _ = moons(80, random_state=0)
    rule = UMCRLS(2).label_free_rule(X)
    assert rule == {"param_grid": {"gamma": gamma_grid(X, octaves=range(-2, 6))},
                    "criterion": ["transfer_stability", "objective"], "tolerance": 0.1}
    assert len(rule["param_grid"]["gamma"]) == 8


@pytest.mark.parametrize("params", [
    {}, {"alpha": 2.0**-7}, {"alpha": 1.0, "n_clusters": 3}, {"n_components": 15},
    {"kernel": "linear"}, {"kernel": "precomputed"}, {"gamma": 40.0}, {"gamma": 0.01},
])
def test_objective_contrast_is_the_old_formula_bit_for_bit(params):
    X, _ = blobs(70, centers=3, random_state=1)
    data = rbf_kernel(X, gamma=0.3) if params.get("kernel") == "precomputed" else X
    est = UMCRLS(**{"n_clusters": 2, **params}, random_state=0).fit(data)
    assert est.objective_contrast(data, random_state=5) == _old_rls_contrast(est, data)


def test_objective_contrast_of_identical_samples_and_of_a_subclass():
    class Mine(UMCRLS):
        pass

    X, _ = moons(60, random_state=2)
    mine = Mine(2, random_state=0).fit(X)
    assert mine.objective_contrast(X) == _old_rls_contrast(mine, X) > 0
    assert mine.label_free_rule(X) == UMCRLS(2).label_free_rule(X)
    with pytest.warns(Warning):
        same = UMCRLS(3).fit(np.ones((10, 2)))
    assert same.objective_contrast(np.ones((10, 2))) == _old_rls_contrast(same, np.ones((10, 2)))
    with pytest.raises(ValueError, match="fitted on"):
        mine.objective_contrast(X[:30])


def test_the_fit_checks_memory_bytes(monkeypatch):
    """The fit asks ``memory_bytes`` (one formula) before it allocates, on both paths."""
    import mmcedu

    asked = []
    real = UMCRLS.memory_bytes

    def spy(self, n_samples, n_features=None):
        asked.append((n_samples, n_features))
        return real(self, n_samples, n_features)

    monkeypatch.setattr(UMCRLS, "memory_bytes", spy)
    X, _ = blobs(50, centers=2, random_state=0)
    UMCRLS(random_state=0).fit(X)
    UMCRLS(n_components=10, random_state=0).fit(X)
    assert asked == [(50, 2), (50, 2)]
    budget = UMCRLS(n_components=10).memory_bytes(50, 2) - 1
    with mmcedu.config_context(memory_budget=budget):
        with pytest.raises(mmcedu.exceptions.MemoryBudgetError):
            UMCRLS(n_components=10).fit(X)
