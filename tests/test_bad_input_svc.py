"""Bad input, edge cases and solver limits of SupportVectorClustering and its helpers.

Every result is right, or comes with a warning or an error that says what happened and what
to change. Categories: bad data, bad parameters, huge and tiny scales, degenerate data,
solver limits, memory and time guards. Memory guards that could really allocate run in a
subprocess under an address-space limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from _bad_input import found, right_warned_or_clear
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import mmcedu
from mmcedu import SupportVectorClustering, datasets, metrics
from mmcedu import support_vector_clustering as svc
from mmcedu.datasets import two_gaussians
from mmcedu.exceptions import ClusterCountWarning, DegenerateDataWarning, MemoryBudgetError

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)  # two compact far-apart blobs
SCALE_WORDS = r"overflow|too large|magnitude|scale|standardi"
LABELINGS = ["cone", "complete_graph"]


def run_limited(code, *, gb=2.0, timeout=110):
    """Run ``code`` in a fresh interpreter with RLIMIT_AS = ``gb`` GB: (returncode, stderr)."""
    pre = (
        f"import resource; lim = int({gb!r} * 2**30); "
        "resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    )
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", pre + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stderr


# ============================================================================ bad data
@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize(
    "data, word",
    [
        (np.where(np.eye(20, 2) > 0, np.nan, X), "NaN"),
        (np.where(np.eye(20, 2) > 0, np.inf, X), "infinity"),
        (np.empty((0, 2)), "0 sample"),
        (np.empty((20, 0)), "0 feature"),
        (X[:1], "n_samples=1"),
        (X[:, 0], "2D array|2-D"),
        (X.astype(complex), "[Cc]omplex"),
    ],
    ids=["NaN", "inf", "empty", "no features", "one sample", "1-D", "complex"],
)
def test_bad_data_is_a_clear_error(labeling, data, word):
    with pytest.raises(ValueError, match=word):
        SupportVectorClustering(labeling=labeling).fit(data)


def test_sparse_input_is_a_clear_error():
    import scipy.sparse as sp

    with pytest.raises(TypeError, match="[Ss]parse|dense"):
        SupportVectorClustering().fit(sp.csr_matrix(X))


@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize(
    "prep",
    [lambda D: D.tolist(), lambda D: D.astype(object), lambda D: np.round(D).astype(int),
     lambda D: D.astype(np.float32), np.asfortranarray, lambda D: np.vstack([D, D]),
     lambda D: np.c_[D, D][:, ::2]],
    ids=["list", "object numbers", "int", "float32", "Fortran", "duplicated rows", "view"],
)
def test_legitimate_input_types_give_the_right_clusters(labeling, prep):
    data = prep(X)
    truth = np.r_[Y, Y] if len(data) == 40 else Y
    # gamma=0.5 (the median heuristic finds one cluster with complete-graph labeling here,
    # with a warning: tested below)
    assert found(SupportVectorClustering(gamma=0.5, labeling=labeling).fit(data), truth)


# ============================================================================ scales
@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize("scale", [1e154, 1e300])
def test_huge_finite_data_is_refused_with_a_scale_message(labeling, scale):
    """|x| ~ 1e154 overflowed the squared distances: 'Input X contains NaN' from libsvm."""
    with pytest.raises(ValueError, match=SCALE_WORDS):
        SupportVectorClustering(labeling=labeling).fit(X * scale)


@pytest.mark.parametrize("labeling", LABELINGS)
def test_tiny_scale_is_refused_or_right(labeling):
    right_warned_or_clear(SupportVectorClustering(labeling=labeling), X * 1e-150,
                          lambda m: found(m, Y), warn=SCALE_WORDS + "|underflow")


@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize("scale", [1e-8, 1e3, 1e8])
def test_default_gamma_follows_the_unit(labeling, scale):
    """The median heuristic scales with the data: same partition in any unit."""
    a = SupportVectorClustering(labeling=labeling)
    b = SupportVectorClustering(labeling=labeling)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterCountWarning)
        a.fit(X)
        b.fit(X * scale)
    assert b.gamma_ == pytest.approx(a.gamma_ / scale**2, rel=1e-9)
    assert metrics.clustering_error(a.labels_, b.labels_) == 0.0


@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize("offset", [1e4, 1e8])
def test_labelings_are_translation_invariant(labeling, offset):
    """Complete-graph labeling on X + 1e8 found 7 clusters: ||y||^2 - 2 y.x + ||x||^2
    cancelled catastrophically. Distances are computed on centred data."""
    a = SupportVectorClustering(labeling=labeling, gamma=0.5).fit(X)
    b = SupportVectorClustering(labeling=labeling, gamma=0.5).fit(X + offset)
    assert found(a, Y) and found(b, Y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(b.predict(X + offset), b.labels_)


@pytest.mark.parametrize("labeling", LABELINGS)
def test_default_gamma_ignores_a_constant_feature(labeling):
    """gamma=None used 1/(n_features X.var()), which a constant feature changed."""
    a = SupportVectorClustering(labeling=labeling)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterCountWarning)
        a.fit(X)
    b = SupportVectorClustering(labeling=labeling)
    right_warned_or_clear(b, np.c_[X, np.full(20, 5.0)], lambda m: found(m, Y),
                          warn="single cluster", category=ClusterCountWarning)
    assert b.gamma_ == pytest.approx(a.gamma_)


@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize("gamma", [1e4, 1e12])
def test_every_sample_a_support_vector_is_warned(labeling, gamma):
    """gamma=1e12 (K = I) gave 20 singleton clusters (cone) or 4 (complete graph) silently."""
    with pytest.warns(DegenerateDataWarning, match=r"too large.*support vector|own cluster"):
        m = SupportVectorClustering(gamma=gamma, labeling=labeling).fit(X)
    assert m.support_.size == 20


@pytest.mark.parametrize("labeling", LABELINGS)
def test_tiny_gamma_gives_one_cluster(labeling):
    """q -> 0: R^2 -> 0 and one cluster (slide 28, lemma 1); gamma was given, so no warning
    about the default width."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClusterCountWarning)
        m = SupportVectorClustering(gamma=1e-12, labeling=labeling).fit(X)
    assert m.n_clusters_ == 1 and m.radius_squared_ < 1e-9


# ============================================================================ degenerate data
@pytest.mark.parametrize("labeling", LABELINGS)
def test_identical_points_give_one_cluster_with_a_warning(labeling):
    with pytest.warns(DegenerateDataWarning, match="identical"):
        m = SupportVectorClustering(labeling=labeling).fit(np.ones((20, 2)))
    assert m.n_clusters_ == 1 and set(m.labels_) == {0}
    assert m.predict(np.zeros((3, 2))).tolist() == [0, 0, 0]


@pytest.mark.parametrize("labeling", LABELINGS)
def test_far_pair_is_its_own_cluster(labeling):
    """Complete-graph labeling merged two points 20 away from a 38-point blob into the blob:
    they are unbounded support vectors, i.e. on the sphere, but their R^2(x) exceeded R^2 by
    ~1e-8 (libsvm's accuracy) while the inside test allowed 1e-10."""
    rs = np.random.RandomState(0)
    data = np.r_[rs.randn(38, 2) * 0.3, [[20, 0], [20.1, 0]]]
    truth = np.r_[np.zeros(38, int), [1, 1]]
    m = SupportVectorClustering(labeling=labeling).fit(data)
    free = np.setdiff1d(m.support_, m.bounded_support_)
    assert {38, 39} <= set(free)
    assert found(m, truth)


def test_complete_graph_counts_every_support_vector_inside():
    rs = np.random.RandomState(1)
    data = np.r_[rs.randn(30, 2), rs.randn(30, 2) + [6, 0]]
    for solver in ("libsvm", "cvxpy"):
        m = SupportVectorClustering(gamma=2.0, labeling="complete_graph", solver=solver).fit(data)
        free = np.setdiff1d(m.support_, m.bounded_support_)
        labels, inside = svc.complete_graph_labels(
            data, m.dual_coef_, m.gamma_, m.radius_squared_, m.distances_squared_, C=m.C
        )
        assert inside[free].all()
        np.testing.assert_array_equal(labels, m.labels_)


@pytest.mark.parametrize("labeling", LABELINGS)
def test_degenerate_but_clear_structure_is_found(labeling):
    two_points = np.repeat([[0.0, 0.0], [10.0, 0.0]], 10, axis=0)
    t = np.r_[np.linspace(0, 1, 10), np.linspace(5, 6, 10)]
    line = np.outer(t, [1, 2, 0.5, -1, 3])
    truth = np.repeat([0, 1], 10)
    for data in (two_points, line):
        m = SupportVectorClustering(labeling=labeling, gamma=None)
        right_warned_or_clear(m, data, lambda m: found(m, truth), warn="single cluster",
                              category=ClusterCountWarning)


# ============================================================================ defaults
def _std(X_, y_):
    return StandardScaler().fit_transform(X_), y_


DEFAULT_DATA = {
    "digits 3-8": lambda: _std(*datasets.digits((3, 8), 30, random_state=0)),
    "two_gaussians": lambda: _std(*two_gaussians(60, distance=4.0, random_state=0)),
    "iris": lambda: _std(*datasets.iris()),
}


@pytest.mark.parametrize("labeling", LABELINGS)
@pytest.mark.parametrize("data", list(DEFAULT_DATA))
def test_defaults_are_as_sensible_as_kmeans_or_warn(labeling, data):
    """The median heuristic finds one cluster on standardized real data: say so, and say that
    the number of clusters grows with gamma."""
    Xr, yr = DEFAULT_DATA[data]()
    k = np.unique(yr).size
    km = metrics.clustering_error(yr, KMeans(k, n_init=10, random_state=0).fit_predict(Xr))
    outcome = right_warned_or_clear(
        SupportVectorClustering(labeling=labeling), Xr,
        lambda m: metrics.clustering_error(yr, m.labels_) <= km + 0.05,
        warn=r"single cluster.*grows with gamma.*gamma_path", category=ClusterCountWarning,
    )
    assert outcome in ("right", "warned")


def test_one_cluster_at_a_given_gamma_is_not_warned():
    """A single cluster at a width the user chose is an answer, not a default gone wrong.

    (Complete graph: at small widths only two support vectors remain, and two balls of the
    cone radius around them never meet, see test_cone_labeling_splits_two_support_vectors.)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClusterCountWarning)
        m = SupportVectorClustering(gamma=1e-3, labeling="complete_graph").fit(X)
        assert m.n_clusters_ == 1


@pytest.mark.parametrize("q", [1e-6, 1e-3, 1e-2])
def test_cone_labeling_splits_two_support_vectors(q):
    """A known limit of the ball rule ||v_i - v_j|| <= 2 Z: with two support vectors at
    distance D and beta = 1/2 each, R^2 = (1 - e)/2 with e = exp(-q D^2), and
    (2 Z)^2 = -2 ln((1 + e)/2) / q < D^2 = -ln(e) / q since ((1 + e)/2)^2 > e. The two are
    never joined, although the sphere's contour (a single ball at small q) is connected."""
    cone = SupportVectorClustering(gamma=q, labeling="cone").fit(X)
    cg = SupportVectorClustering(gamma=q, labeling="complete_graph").fit(X)
    assert cone.support_.size == 2 and cone.n_clusters_ == 2 and cg.n_clusters_ == 1
    v = X[cone.support_]
    assert np.linalg.norm(v[0] - v[1]) > 2 * cone.cone_radius_


# ============================================================================ parameters
@pytest.mark.parametrize(
    "params, word",
    [
        ({"C": 1e-3}, r"\bC\b.*infeasible"),
        ({"C": 0.0}, r"'C' parameter"),
        ({"C": -1.0}, r"'C' parameter"),
        ({"gamma": -1.0}, "gamma"),
        ({"gamma": 0.0}, "gamma"),
        ({"labeling": "bogus"}, "labeling"),
        ({"n_segment_points": 0}, "n_segment_points"),
        ({"solver": "bogus"}, "solver"),
        ({"tol": 0.0}, "tol"),
        ({"tol": -1.0}, "tol"),
        ({"max_samples": 1}, "max_samples"),
        ({"max_samples": 0.0}, "max_samples"),
        ({"max_samples": 5, "C": 0.1}, r"max_samples.*infeasible|infeasible.*max_samples"),
    ],
)
def test_bad_parameters_are_clear_errors(params, word):
    with pytest.raises(ValueError, match=word):
        SupportVectorClustering(**params).fit(X)


@pytest.mark.parametrize("solver", ["libsvm", "cvxpy"])
def test_every_sample_bounded_is_warned(solver):
    """C = 1/n: every sample a bounded support vector, one cluster, no word."""
    with pytest.warns(DegenerateDataWarning, match=r"bounded.*C = 1/n_samples"):
        m = SupportVectorClustering(C=1 / 20, gamma=0.5, solver=solver).fit(X)
    assert m.bounded_support_.size == 20


def test_C_above_one_is_the_problem_at_C_one():
    a = SupportVectorClustering(gamma=2.0, C=1.0).fit(X)
    b = SupportVectorClustering(gamma=2.0, C=50.0).fit(X)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, atol=1e-8)
    assert b.bounded_support_.size == 0


def test_solver_options_reach_libsvm():
    m = SupportVectorClustering(gamma=2.0, solver_options={"tol": 1e-6, "cache_size": 50}).fit(X)
    assert m.solver_info_["libsvm_tol"] == 1e-6 and m.solver_info_["n_fits"] == 1
    with pytest.raises(TypeError, match="bogus"):
        SupportVectorClustering(solver_options={"bogus": 1}).fit(X)


def test_predict_on_the_training_data_returns_labels():
    for labeling in LABELINGS:
        for params in ({"gamma": 5.0}, {"gamma": 0.5, "C": 0.2}):
            m = SupportVectorClustering(labeling=labeling, **params).fit(X)
            np.testing.assert_array_equal(m.predict(X), m.labels_)
            assert np.array_equal(np.unique(m.labels_), np.arange(m.n_clusters_))
    with pytest.raises(ValueError, match="NaN"):
        m.predict(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="features"):
        m.predict(np.ones((2, 3)))


# ============================================================================ memory and time
@pytest.mark.timeout(200)
def test_large_n_runs_without_an_n_by_n_array():
    """n = 40,000: the former precomputed kernel asked for 11.9 GiB. libsvm now computes
    kernel columns on demand; the fit runs under a 2 GB address-space limit."""
    rc, err = run_limited("""
        import numpy as np
        from mmcedu import SupportVectorClustering
        Xbig = np.random.RandomState(0).randn(40000, 2)
        m = SupportVectorClustering(gamma=0.5).fit(Xbig)
        assert m.labels_.shape == (40000,) and m.n_iter_ >= 1
    """, timeout=190)
    assert rc == 0, err[-800:]


def test_cvxpy_path_refuses_before_allocating(monkeypatch):
    monkeypatch.setattr(svc, "rbf_kernel", lambda *a, **k: pytest.fail("allocated the kernel"))
    data = np.random.RandomState(0).randn(3000, 2)
    with mmcedu.config_context(memory_budget="100MB"):
        with pytest.raises(MemoryBudgetError, match=r"solver='libsvm'.*max_samples"):
            SupportVectorClustering(gamma=0.5, solver="cvxpy").fit(data)
        with pytest.raises(MemoryBudgetError, match="solver='libsvm'"):
            svc.svdd_dual(np.eye(3000), solver="cvxpy")


@pytest.mark.timeout(200)
def test_complete_graph_memory_does_not_grow_with_n_features():
    """40 samples with 100,000 features (32 MB of data): the segment test built a
    (pairs * m) x n_features array, 5.24 GiB. Segments now cost m N_sv kernel evaluations
    whatever the dimension."""
    rc, err = run_limited("""
        import numpy as np
        from mmcedu import SupportVectorClustering
        rs = np.random.RandomState(0)
        Xw = np.zeros((40, 100000))
        Xw[:, :10] = np.repeat([[0.0], [3.0]], 20, axis=0) + 0.1 * rs.randn(40, 10)
        m = SupportVectorClustering(gamma=0.05, labeling="complete_graph").fit(Xw)
        assert m.n_clusters_ == 2, m.n_clusters_
    """, gb=2.0, timeout=190)
    assert rc == 0, err[-800:]


def test_complete_graph_memory_guard_names_the_cone_labeling():
    data = np.random.RandomState(0).randn(400, 2)
    with mmcedu.config_context(memory_budget="33MB"):
        with pytest.raises(MemoryBudgetError, match="labeling='cone'"):
            SupportVectorClustering(gamma=50.0, labeling="complete_graph").fit(data)


def test_long_complete_graph_labeling_is_announced_before_it_starts(monkeypatch):
    """n = 5,000 in 2-D at gamma = 50 ran for more than a minute without a word."""

    class Reached(Exception):
        pass

    def boom(*a, **k):
        raise Reached

    monkeypatch.setattr(svc, "_complete_graph", boom)
    data = np.random.RandomState(0).randn(3000, 2)  # below the announcement before the solve
    with pytest.warns(UserWarning, match=r"evaluate the kernel about .* labeling='cone'"):
        with pytest.raises(Reached):
            # tol=0.05: a loose solve (the default 1e-7 at n <= 10,000 takes minutes here)
            SupportVectorClustering(gamma=50.0, labeling="complete_graph", tol=0.05).fit(data)


def test_gamma_path_refuses_before_allocating():
    with mmcedu.config_context(memory_budget="50MB"):
        with pytest.raises(MemoryBudgetError, match="subsample"):
            svc.gamma_path(np.random.RandomState(0).randn(3000, 2))


# ============================================================================ helpers
@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: svc.cone_radius(0.5, 0.0), r"\bq\b.*gamma"),
        (lambda: svc.cone_radius(0.5, -1.0), r"\bq\b.*gamma"),
        (lambda: svc.cone_radius(0.5, float("nan")), r"\bq\b.*gamma"),
        (lambda: svc.cone_radius(1.0, 1.0), r"R\^2"),
        (lambda: svc.cone_radius(float("nan"), 1.0), r"R\^2"),
        (lambda: svc.svdd_dual(np.ones((3, 2))), "square"),
        (lambda: svc.svdd_dual(np.where(np.eye(3) > 0, np.nan, 0.5)), "NaN"),
        (lambda: svc.svdd_dual(np.eye(3), solver="bogus"), "solver"),
        (lambda: svc.svdd_dual(np.diag([1.0, 2.0, 3.0])), "constant diagonal"),
        (lambda: svc.svdd_dual(np.eye(5), C=0.1), "infeasible"),
        (lambda: svc.svdd_radius_squared(np.eye(3), np.ones(2), 1.0), "shape"),
        (lambda: svc.gamma_path(X * 1e200), SCALE_WORDS),
        (lambda: svc.gamma_path(np.ones((5, 2))), "identical"),
        (lambda: svc.gamma_path(X[:1]), "at least 2"),
        (lambda: svc.gamma_path(X, max_length=0), "max_length"),
        (lambda: svc.gamma_path(X, rtol=0.0), "rtol"),
        (lambda: svc.cone_labels(X, np.zeros(20, bool), 1.0, 0.5), "support vector"),
    ],
)
def test_helpers_reject_bad_arguments(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_gamma_path_ceiling_with_duplicate_points():
    """Iris has one duplicate pair: R^2 tends to 1 - 1/149, not 1 - 1/150. With rtol=1e-6
    the old ceiling made the list jump x3.6e6 and then double silently to max_length."""
    Xi, _ = datasets.iris()
    assert np.unique(Xi, axis=0).shape[0] == 149
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = svc.gamma_path(Xi, rtol=1e-6)
    assert path.radius_squared_limit == 1 - 1 / 149
    assert path.radius_squared[-1] <= path.radius_squared_limit + 1e-9
    ratios = path.gamma[1:] / path.gamma[:-1]
    assert ratios.max() < 5 and len(path.gamma) < 40
    # the limit is what the dual gives at a huge width
    K = mmcedu.kernels.rbf_kernel(Xi, gamma=path.gamma[-1] * 1e6)
    beta, _ = svc.svdd_dual(K)
    assert svc.svdd_radius_squared(K, beta, 1.0)[0] == pytest.approx(1 - 1 / 149, abs=1e-7)


@pytest.mark.parametrize("C", [1.0, 0.3, 0.2])
def test_radius_squared_limit_matches_the_dual(C):
    """Groups of identical points (sizes 1, 1, 3): the limit by water-filling equals R^2 of the
    dual at a width where K is the block matrix of the groups."""
    data = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0], [0.0, 5.0], [0.0, 5.0]])
    K = mmcedu.kernels.rbf_kernel(data, gamma=1e3)
    for solver in ("libsvm", "cvxpy"):
        beta, _ = svc.svdd_dual(K, C, solver=solver)
        R2 = svc.svdd_radius_squared(K, beta, C)[0]
        assert R2 == pytest.approx(svc._radius_squared_limit([1, 1, 3], C), abs=1e-6)


def test_gamma_path_at_max_length_warns():
    with pytest.warns(ConvergenceWarning, match="max_length=3"):
        path = svc.gamma_path(X, max_length=3)
    assert len(path.gamma) == 3


@pytest.mark.parametrize("labeling", LABELINGS)
def test_one_cluster_plus_singletons_at_the_default_width_is_warned(labeling):
    """Standardized digits 1 and 7 (361 samples): the median width gave one cluster of 360
    samples and one isolated sample, ARI 0, without a word."""
    from sklearn.datasets import load_digits

    Xd, yd = load_digits(return_X_y=True)
    mask = np.isin(yd, (1, 7))
    data = StandardScaler().fit_transform(Xd[mask])
    with pytest.warns(ClusterCountWarning, match=r"single cluster of \d+ samples and 1 singleton"):
        m = SupportVectorClustering(labeling=labeling).fit(data)
    assert sorted(np.bincount(m.labels_)) == [1, 360]


def test_long_complete_graph_labeling_is_announced_before_the_solve(monkeypatch):
    """The probe's n = 5,000 complete-graph fit gave no word for more than a minute: the
    solve itself is long at the default tolerance. The pair count is known before it."""

    class Reached(Exception):
        pass

    def boom(*a, **k):
        raise Reached

    monkeypatch.setattr(svc, "_svdd_libsvm", boom)
    data = np.random.RandomState(0).randn(5000, 2)
    with pytest.warns(UserWarning, match=r"12,497,500 pairs .* labeling='cone'"):
        with pytest.raises(Reached):
            SupportVectorClustering(gamma=50.0, labeling="complete_graph").fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(Reached):
            SupportVectorClustering(gamma=50.0, labeling="complete_graph").fit(data[:3000])
