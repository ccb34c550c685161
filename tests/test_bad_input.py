"""Bad input, edge cases and limits: every result is right, comes with a warning, or is a clear error.

A probe of the package as a careful user would use it (bad data, bad parameters, huge and tiny
scales, degenerate data, the command line, the cache). Each test states the outcome that is
right: the answer, a warning that says what happened, or an error whose message names the
cause (never a raw ``IndexError``, a numpy message, or NaN returned without a word). The
sections are organized by category; within a category by module (the helpers here; the
estimators have sections of their own).

Everything runs on at most a few hundred samples; memory guards use a small budget
(``mmcedu.config_context``) rather than allocating.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mmcedu
from mmcedu import balance, datasets, kernels, metrics, partitions
from mmcedu.datasets import two_gaussians
from mmcedu.exceptions import MemoryBudgetError
from mmcedu_lab.emmc import balanced_assignment, ordered_balanced_assignment
from mmcedu_lab.report import Table

X, Y = two_gaussians(20, distance=8.0, std=0.4, random_state=0)  # two compact, far-apart blobs
P = np.column_stack([Y, 1 - Y, Y, np.where(np.arange(20) < 2, 1 - Y, Y)])  # 4 base partitions

#: an error about finite data whose scale overflows must say so (not "contains NaN")
SCALE_WORDS = r"overflow|underflow|scale|standardi"


def _raises(call, match, exc=ValueError):
    with pytest.raises(exc, match=match):
        call()


# ============================================================================================
# Bad data
# ============================================================================================
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: kernels.rbf_kernel(X[:, 0]), r"2-D.*reshape"),
        (lambda: kernels.rbf_kernel(np.where(np.eye(20, 2) > 0, np.nan, X)), "NaN"),
        (lambda: kernels.rbf_kernel(X, np.ones((2, 3))), "features"),
        (lambda: kernels.rbf_kernel(X + 1j), "[Cc]omplex"),
        (lambda: kernels.rbf_kernel(np.full((3, 2), "a")), "convert|string"),
        (lambda: kernels.median_gamma(np.ones(5)), "2-D"),
        (lambda: kernels.pairwise_distance_range(X[:1]), "two samples"),
        (lambda: kernels.pairwise_distance_range(X[:, 0]), "2-D"),
        (lambda: kernels.pairwise_distance_range(np.where(np.eye(20, 2) > 0, np.nan, X)), "NaN"),
        (lambda: kernels.center_kernel(np.ones((3, 2))), "square"),
        (lambda: kernels.normalized_laplacian(np.ones((3, 2))), "square"),
        (lambda: kernels.degree(np.array([[1.0, np.nan], [np.nan, 1.0]])), "NaN"),
        (lambda: kernels.check_kernel_matrix(np.ones(3)), "square"),
        (lambda: kernels.check_kernel_matrix(np.array([["a", "b"], ["b", "a"]])), "convert|string"),
        (lambda: kernels.nystroem_factor(X[:, 0], 2), "2-D"),
    ],
    ids=["rbf 1-D", "rbf NaN", "rbf Y features", "rbf complex", "rbf strings", "median_gamma 1-D",
         "distance range 1 sample", "distance range 1-D", "distance range NaN", "center non-square",
         "laplacian non-square", "degree NaN", "check_kernel_matrix 1-D",
         "check_kernel_matrix strings", "nystroem 1-D"],
)
def test_kernels_reject_bad_data(call, match):
    _raises(call, match)


@pytest.mark.parametrize(
    "y_true, y_pred",
    [
        (None, None),
        (np.zeros((3, 2)), np.ones((3, 2))),
        (0, 1),
        (np.array([0, 1, np.nan]), np.array([0, 1, 1])),
        ({"a": 1}, {"b": 2}),
        ([0, None, 1], [0, 1, 1]),
        (np.array([1 + 1j, 2, 3]), [0, 1, 1]),
        ([0, 1, 1], [0, 1]),
        ([], []),
    ],
    ids=["None", "2-D", "scalars", "NaN labels", "dicts", "None label", "complex", "unequal lengths",
         "empty"],
)
def test_clustering_error_rejects_what_is_not_a_labelling(y_true, y_pred):
    with pytest.raises(ValueError, match=r"label|1-D|NaN|length|empty"):
        metrics.clustering_error(y_true, y_pred)


def test_clustering_error_accepts_labellings_of_any_form():
    assert metrics.clustering_error(Y[:, None], Y) == 0.0  # a column vector
    assert metrics.clustering_error(["a", "b", "b"], ["x", "y", "y"]) == 0.0  # strings
    assert metrics.clustering_error([0, 0, 1, 1], [0, 1, 2, 2]) == pytest.approx(0.25)  # more clusters
    assert metrics.clustering_accuracy(Y, 1 - Y) == 1.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: balance.balanced_sign([np.nan, 1.0, -1.0, 2.0], 0), "NaN"),
        (lambda: ordered_balanced_assignment([np.nan, 1.0, 2.0, 3.0], 2, 1, 3), "NaN"),
        (lambda: balanced_assignment(np.where(np.eye(4, 2) > 0, np.nan, 1.0), 1, 3), "NaN"),
        (lambda: balance.balanced_sign(np.ones((2, 2)), 0), "1-D"),
        (lambda: balanced_assignment(np.ones(4), 1, 3), "2-D"),
    ],
    ids=["balanced_sign NaN", "ordered NaN", "assignment NaN", "balanced_sign 2-D", "assignment 1-D"],
)
def test_balance_helpers_reject_bad_outputs(call, match):
    _raises(call, match)


def test_balanced_sign_accepts_a_column_of_outputs():
    np.testing.assert_array_equal(balance.balanced_sign(np.array([[1.0], [-2.0]]), 0), [1, -1])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: partitions.base_partitions(X[:, 0], 3, 2), r"2-D"),
        (lambda: partitions.base_partitions(np.where(np.eye(20, 2) > 0, np.nan, X), 3, 2), "NaN"),
        (lambda: partitions.check_partitions(Y), "2-D"),
        (lambda: partitions.check_partitions(np.array([["a", "b"], ["b", "a"]])), "integer"),
        (lambda: partitions.align_labels(np.array([0, 5, 1]), np.array([0, 1, 1]), 2), "reference"),
        (lambda: partitions.align_labels(np.array([0, 1]), np.array([0, 1, 1]), 2), "length"),
        (lambda: partitions.align_labels(np.array([0.5, 1]), np.array([0, 1]), 2), "integer"),
    ],
    ids=["base_partitions 1-D", "base_partitions NaN", "check_partitions 1-D",
         "check_partitions strings", "align_labels label >= n_clusters", "align_labels lengths",
         "align_labels floats"],
)
def test_partition_helpers_reject_bad_data(call, match):
    _raises(call, match)


@pytest.mark.parametrize(
    "call, match, exc",
    [
        (lambda: Table("abc", ["a"]), "string", ValueError),
        (lambda: Table([[1, 2]], ["a", "a"]), "unique", ValueError),
        (lambda: Table([[1, 2]], ["a"]), "cells", ValueError),
        (lambda: Table([1, 2], ["a"]), "sequence", ValueError),
        (lambda: Table([[1]], ["a"], floatfmt="%3"), "format", ValueError),
        (lambda: Table([[1]], ["a"], formats={"b": ".2f"}), "exist", ValueError),
        (lambda: Table([[1]], ["a"]).column("b"), "columns", KeyError),
    ],
    ids=["rows a string", "duplicate headers", "short row", "rows not sequences", "bad floatfmt",
         "format of a missing column", "unknown column"],
)
def test_report_table_rejects_malformed_tables(call, match, exc):
    _raises(call, match, exc)


# ============================================================================================
# Bad parameters
# ============================================================================================
@pytest.mark.parametrize("gamma", [-1.0, 0.0, float("nan"), float("inf"), "0.5", True])
def test_rbf_kernel_rejects_a_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma must be a positive finite number"):
        kernels.rbf_kernel(X, gamma=gamma)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: kernels.gamma_from_sigma(float("nan")), "sigma"),
        (lambda: kernels.gamma_from_sigma(float("inf")), "sigma"),
        (lambda: kernels.gamma_from_sigma(0.0), "positive"),
        (lambda: kernels.gamma_from_sigma([1.0, -1.0]), "positive"),
        (lambda: kernels.gamma_from_sigma(1.0, convention="bogus"), "convention"),
        (lambda: kernels.sigma_from_gamma(float("nan")), "gamma"),
        (lambda: kernels.sigma_from_gamma(float("inf")), "gamma"),
        (lambda: kernels.sigma_from_gamma(0.0), "gamma"),
        (lambda: kernels.kernel_matrix(X, "poly"), "kernel"),
        (lambda: kernels.width_grid(X, [0.1], reference="bogus"), "reference"),
        (lambda: kernels.gamma_grid(X, fractions=[-0.1]), "fractions"),
        (lambda: kernels.gamma_grid(X, fractions=[float("nan")]), "fractions"),
        (lambda: kernels.max_distance_gamma(X, 0.0), "fraction"),
        (lambda: kernels.median_gamma(X, max_samples=1), "max_samples"),
        (lambda: kernels.nystroem_factor(X, 0), "n_components"),
        (lambda: kernels.nystroem_factor(X, 2.5), "n_components"),
        (lambda: kernels.nystroem_factor(X, 21), "n_components"),
        (lambda: kernels.nystroem_factor(X, 5, gamma=-1.0), "gamma"),
    ],
    ids=["gamma_from_sigma nan", "gamma_from_sigma inf", "gamma_from_sigma 0",
         "gamma_from_sigma negative entry", "convention", "sigma_from_gamma nan",
         "sigma_from_gamma inf", "sigma_from_gamma 0", "kernel name", "reference", "negative fraction",
         "nan fraction", "max_distance_gamma fraction", "max_samples", "nystroem 0", "nystroem 2.5",
         "nystroem > n", "nystroem gamma"],
)
def test_kernel_helpers_reject_bad_parameters(call, match):
    _raises(call, match)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: datasets.two_gaussians(-5), "n_samples"),
        (lambda: datasets.jointed_circles(-5), "n_samples"),
        (lambda: datasets.two_gaussians(2.5), "n_samples"),
        (lambda: datasets.two_gaussians(True), "n_samples"),
        (lambda: datasets.two_circles(0), "n_samples"),
        (lambda: datasets.jointed_circles(1), "n_samples"),
        (lambda: datasets.moons(-5), "n_samples"),
        (lambda: datasets.blobs(-5), "n_samples"),
        (lambda: datasets.digits((3, 8), -1), "n_per_class"),
        (lambda: datasets.digits((3, 8), 0), "n_per_class"),
        (lambda: datasets.digits((3, 8), 1000), "n_per_class"),
        (lambda: datasets.digits(()), "classes"),
        (lambda: datasets.digits(3), "classes"),
        (lambda: datasets.digits((3, 11)), "classes"),
        (lambda: datasets.two_gaussians(10, weights=(float("nan"), 1.0)), "weights"),
        (lambda: datasets.two_gaussians(10, weights=(1.0, 0.0)), "weights"),
        (lambda: datasets.two_gaussians(10, std=-1.0), "std"),
        (lambda: datasets.two_gaussians(10, distance=float("inf")), "distance"),
        (lambda: datasets.jointed_circles(10, noise=-1.0), "noise"),
        (lambda: datasets.two_circles(10, noise=-1.0), "noise"),
        (lambda: datasets.two_circles(10, factor=2), "factor"),
        (lambda: datasets.moons(10, noise=float("nan")), "noise"),
        (lambda: datasets.blobs(10, cluster_std=-1.0), "cluster_std"),
        (lambda: datasets.blobs(10, centers=0), "centers"),
    ],
    ids=lambda v: None if callable(v) else str(v),
)
def test_datasets_reject_bad_sizes_and_parameters(call, match):
    _raises(call, match)


def test_datasets_accept_numpy_integers_and_zero_noise():
    Xg, yg = datasets.two_gaussians(np.int64(10), std=0.0)
    assert Xg.shape == (10, 2) and set(yg) == {0, 1}
    assert datasets.digits((3, 3))[0].shape[0] == 183  # a repeated class is one class


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: balance.max_imbalance(10, 1.5), "balance"),
        (lambda: balance.max_imbalance(10, float("nan")), "balance"),
        (lambda: balance.max_imbalance(-1, 0.1), "n_samples"),
        (lambda: balance.max_imbalance(3, 0.0), "odd"),
        (lambda: balance.balanced_sign([1.0, -1.0], -2), r"\bl\b"),
        (lambda: balance.balanced_sign([1.0, -1.0, 2.0], 0), "infeasible"),
        (lambda: balance.balanced_labelings(4, -1), r"\bl\b"),
        (lambda: balance.balanced_labelings(21, 1), "n <= 20"),
        (lambda: balance.count_bounds(10, 2, -1), r"\bl\b"),
        (lambda: balance.count_bounds(10, 3, 0), "cannot be met"),
        (lambda: balanced_assignment(np.ones((4, 2)), 3, 1), "lo <= hi"),
        (lambda: balanced_assignment(np.ones((4, 2)), 3, 4), "No labeling"),
    ],
    ids=["balance 1.5", "balance nan", "n=-1", "odd n, l=0", "balanced_sign l<0",
         "balanced_sign infeasible", "labelings l<0", "labelings n=21", "count_bounds l<0",
         "count_bounds infeasible", "assignment lo>hi", "assignment infeasible"],
)
def test_balance_helpers_reject_bad_parameters(call, match):
    _raises(call, match)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: partitions.base_partitions(X, 0, 2), "n_partitions"),
        (lambda: partitions.base_partitions(X, 3, 1), "n_clusters"),
        (lambda: partitions.base_partitions(X, 3, 21), "n_clusters"),
        (lambda: partitions.base_partitions(X, 3, 2, n_random=-1), "n_random"),
        (lambda: partitions.base_partitions(X, 3, 2, n_random=2, n_wrong_k=2), "exceeds"),
        (lambda: partitions.base_partitions(X, 3, 2, n_wrong_k=1, wrong_k=[]), "wrong_k"),
        (lambda: partitions.base_partitions(X, 3, 2, n_wrong_k=1, wrong_k=[1]), "wrong_k"),
        (lambda: partitions.base_partitions(X, 3, 2, feature_fraction=0.0), "feature_fraction"),
        (lambda: partitions.coassociation_clustering(P, 0), "n_clusters"),
        (lambda: partitions.coassociation_clustering(P, 21), "n_clusters"),
        (lambda: partitions.majority_vote(P, 0), "n_clusters"),
        (lambda: partitions.majority_vote(P, 2, max_rounds=0), "max_rounds"),
        (lambda: partitions.align_labels(np.array([0, 1]), np.array([0, 1]), 0), "n_clusters"),
        (lambda: partitions.noisy_copies(10, 0, 3), "n_clusters"),
        (lambda: partitions.noisy_copies(-1, 2, 3), "n_samples"),
        (lambda: partitions.noisy_copies(10, 2, 0), "n_partitions"),
        (lambda: partitions.noisy_copies(10, 2, 3, noise=2.0), "noise"),
    ],
    ids=["n_partitions=0", "n_clusters=1", "n_clusters > n", "n_random=-1", "too many corrupted",
         "wrong_k=[]", "wrong_k=[1]", "feature_fraction=0", "coassociation k=0",
         "coassociation k > n", "vote k=0", "vote max_rounds=0", "align k=0", "noisy k=0",
         "noisy n=-1", "noisy M=0", "noisy noise=2"],
)
def test_partition_helpers_reject_bad_parameters(call, match):
    _raises(call, match)


def _experiments():
    from mmcedu_lab import comparison, emmc, gmmc, measure, registry, robust_ensemble, sdp_mmc

    return comparison, emmc, gmmc, measure, registry, robust_ensemble, sdp_mmc


@pytest.mark.parametrize(
    "call, match",
    [
        ("registry.load('bogus', 10)", r"Unknown data set 'bogus'; choose from \["),
        ("registry.load('digits 3 vs 8', 1)", "n_samples"),
        ("registry.load('two circles', 2.5)", "n_samples"),
        ("registry.stand_in('valizadegan2006gmmc', 'bogus')", "known"),
        ("comparison.run_comparison(methods=['bogus'], tasks=['two circles'], n_samples=20)",
         r"Unknown method\(s\) \['bogus'\]; choose from \['k-means'"),
        ("comparison.run_comparison(methods=['k-means'], tasks=['bogus'], n_samples=20)",
         r"Unknown task\(s\) \['bogus'\]"),
        ("comparison.scaling([20], methods=['bogus'])", r"Unknown method\(s\)"),
        ("sdp_mmc.scaling([20], methods=['bogus'])", r"choose from \['SDP MMC'\]"),
        ("gmmc.scaling([20], methods=['bogus'])", r"choose from \['SDP MMC', 'GMMC'\]"),
        ("robust_ensemble.scaling([20], methods=['bogus'])", r"Unknown method\(s\)"),
        ("emmc.sensitivity('bogus', [1], pairs=[(3, 8)])", r"param must be one of"),
        ("emmc.sensitivity('C', [0.1], pairs=[])", "pairs"),
        ("emmc.sensitivity('C', [], pairs=[(3, 8)])", "value"),
        ("emmc.sensitivity('C', [0.1], pairs=[(3, 3)])", "pairs"),
        ("emmc.numbering_dependence(n_perm=0)", "n_perm"),
        ("measure.best_time(lambda: 1, 0)", "repeats"),
        ("measure.best_time(lambda: 1, -1)", "repeats"),
        ("measure.best_time(lambda: 1, 2, budget=float('nan'))", "budget"),
        ("measure.measure(lambda: 1, repeats=0)", "repeats"),
        ("measure.measure(lambda: 1, memory='bogus')", "memory"),
    ],
    ids=lambda v: v if isinstance(v, str) and "(" in v else None,
)
def test_experiment_functions_reject_bad_arguments(call, match):
    comparison, emmc, gmmc, measure, registry, robust_ensemble, sdp_mmc = _experiments()
    with pytest.raises(ValueError, match=match):
        eval(call)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_n_jobs_must_be_a_non_zero_integer(n_jobs):
    from mmcedu_lab.parallel import resolve_n_jobs

    with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
        resolve_n_jobs(n_jobs)


@pytest.mark.parametrize("value", ["abc", "0", "1.5"])
def test_n_jobs_variable_must_be_an_integer(monkeypatch, value):
    from mmcedu_lab.parallel import resolve_n_jobs

    monkeypatch.setenv("MMCEDU_N_JOBS", value)
    with pytest.raises(ValueError, match="MMCEDU_N_JOBS"):
        resolve_n_jobs(None)


def test_task_seed_rejects_what_is_not_a_description():
    from mmcedu_lab.parallel import task_seed

    for bad in [(), (-1,), (1.5,), ("a",)]:
        with pytest.raises(ValueError, match="non-negative integers"):
            task_seed(*bad)


# ============================================================================================
# Huge and tiny scales
# ============================================================================================
@pytest.mark.parametrize(
    "call",
    [
        lambda: kernels.rbf_kernel(X * 1e154),
        lambda: kernels.rbf_kernel(X * 1e200, gamma=1e-300),
        lambda: kernels.rbf_kernel(X, X * 1e200, gamma=1e-300),
        lambda: kernels.rbf_kernel(X * 1e-150),
        lambda: kernels.median_gamma(X * 1e200),
        lambda: kernels.pairwise_distance_range(X * 1e200),
        lambda: kernels.max_distance_gamma(X * 1e200),
        lambda: kernels.gamma_grid(X * 1e200, fractions=[0.5]),
        lambda: kernels.kernel_matrix(X * 1e160, "linear"),
        lambda: kernels.nystroem_factor(X * 1e200, 5, random_state=0),
        lambda: kernels.gamma_from_sigma(1e-200),
        lambda: kernels.sigma_from_gamma(1e-320),
    ],
    ids=["rbf x1e154", "rbf x1e200", "rbf Y x1e200", "rbf x1e-150", "median_gamma x1e200",
         "distance range x1e200", "max_distance_gamma x1e200", "gamma_grid x1e200",
         "linear kernel x1e160", "nystroem x1e200", "gamma_from_sigma 1e-200", "sigma_from_gamma 1e-320"],
)
def test_kernel_helpers_name_an_overflow_instead_of_returning_nan(call):
    with pytest.raises(ValueError, match=SCALE_WORDS + "|too small|too large"):
        call()


@pytest.mark.parametrize("scale", [1e-8, 1e3, 1e8])
def test_kernels_follow_the_data_scale(scale):
    """The median heuristic is scale-free: the kernel of ``X * s`` is the kernel of ``X``."""
    np.testing.assert_allclose(kernels.rbf_kernel(X * scale), kernels.rbf_kernel(X), atol=1e-10)
    lo, hi = kernels.pairwise_distance_range(X * scale)
    lo1, hi1 = kernels.pairwise_distance_range(X)
    assert hi == pytest.approx(scale * hi1) and lo == pytest.approx(scale * lo1)


# ============================================================================================
# Degenerate data
# ============================================================================================
def test_identical_points_give_a_documented_width_or_a_clear_error():
    same = np.ones((5, 2))
    assert kernels.median_gamma(same) == 1.0  # documented: no positive distance
    assert kernels.max_distance_gamma(same) == 1.0
    assert kernels.pairwise_distance_range(same) == (0.0, 0.0)
    with pytest.raises(ValueError, match="identical"):
        kernels.gamma_grid(same, fractions=[0.1])
    assert np.all(kernels.rbf_kernel(same) == 1.0)
    Phi, _ = kernels.nystroem_factor(np.ones((10, 2)), 5, random_state=0)
    assert np.all(np.isfinite(Phi))


def test_degenerate_kernels_are_handled():
    K = np.eye(3)
    K[0, 0] = 0.0
    with pytest.raises(ValueError, match="zero degree"):
        kernels.normalized_laplacian(K)
    Phi, _ = kernels.nystroem_factor(X, 5, gamma=1e12, random_state=0)  # K = I
    assert np.all(np.isfinite(Phi))


def test_degenerate_ensembles_are_handled():
    assert np.all(partitions.majority_vote(P, 1) == 0)  # one cluster asked for: one cluster
    same = np.column_stack([Y] * 4)
    assert metrics.clustering_error(Y, partitions.majority_vote(same, 2)) == 0.0
    assert metrics.clustering_error(Y, partitions.coassociation_clustering(same, 2)) == 0.0
    missing = P.copy()
    missing[0, :2] = partitions.MISSING  # a sample labelled by only two of four members
    assert metrics.clustering_error(Y, partitions.majority_vote(missing, 2)) == 0.0
    with pytest.raises(ValueError, match="no label"):
        partitions.check_partitions(np.where(np.arange(20)[:, None] == 0, -1, P))


def test_coassociation_refuses_before_allocating_beyond_the_budget():
    Pbig = np.random.RandomState(0).randint(3, size=(2000, 3))
    with mmcedu.config_context(memory_budget="1MB"):
        with pytest.raises(MemoryBudgetError, match="RobustEnsembleClustering"):
            partitions.coassociation_clustering(Pbig, 3)
        with pytest.raises(MemoryBudgetError, match="co-association"):
            partitions.coassociation_matrix(Pbig)


# ============================================================================================
# Command line
# ============================================================================================
def _fake_registry(monkeypatch, calls):
    import mmcedu_lab.reproduce as rep

    def make(name):
        def table(full=False, progress=None, n_jobs=None, refresh=False):
            """A fake table."""
            calls.append((name, full, n_jobs, refresh))
            return Table([[1, 2]], ["paper", "mmcedu"])

        return table

    monkeypatch.setattr(rep, "all_tables", lambda: {"t1": make("t1"), "t2": make("t2")})
    return rep


def test_cli_unknown_table_goes_to_stderr_with_exit_code_2():
    proc = subprocess.run([sys.executable, "-m", "mmcedu_lab.reproduce", "no_such_table"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "unknown table(s): no_such_table" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    "argv, words",
    [
        (["bogus"], "unknown table(s): bogus"),
        (["t1", "bogus", "t2"], "unknown table(s): bogus"),
        (["--list", "bogus"], "--list takes no table names"),
        (["--list", "--full"], "--list takes no"),
        (["--full"], "--full needs table names"),
        (["--refresh"], "--refresh needs table names"),
        (["--n-jobs", "2"], "--n-jobs needs table names"),
        (["t1", "--n-jobs", "0"], "n_jobs must be a non-zero integer"),
        (["t1", "--n-jobs", "two"], "invalid int value"),
        (["--prune", "t1"], "--prune takes no table names"),
        (["--max-size", "1G"], "go with --prune"),
        (["--prune", "--max-size", "lots"], "memory size"),
        (["--bogus-option"], "unrecognized arguments"),
    ],
)
def test_cli_errors_go_to_stderr_with_exit_code_2(monkeypatch, capsys, argv, words):
    calls = []
    rep = _fake_registry(monkeypatch, calls)
    assert rep.main(argv) == 2
    out, err = capsys.readouterr()
    assert words in err and out == "" and calls == []


def test_cli_bad_n_jobs_variable_is_an_error(monkeypatch, capsys):
    calls = []
    rep = _fake_registry(monkeypatch, calls)
    monkeypatch.setenv("MMCEDU_N_JOBS", "many")
    assert rep.main(["t1"]) == 2 and "MMCEDU_N_JOBS" in capsys.readouterr().err and calls == []


def test_cli_all_expands_and_names_run_once(monkeypatch):
    calls = []
    rep = _fake_registry(monkeypatch, calls)
    assert rep.main(["all", "t1"], stream=io.StringIO()) == 0
    assert [c[0] for c in calls] == ["t1", "t2"]
    calls.clear()
    assert rep.main(["t2", "t1", "t2"], stream=io.StringIO()) == 0
    assert [c[0] for c in calls] == ["t2", "t1"]


def test_cli_passes_protocol_jobs_and_refresh(monkeypatch):
    calls = []
    rep = _fake_registry(monkeypatch, calls)
    monkeypatch.setenv("MMCEDU_N_JOBS", "3")
    assert rep.main(["t1"], stream=io.StringIO()) == 0
    assert rep.main(["t2", "--full", "--n-jobs", "-1", "--refresh"], stream=io.StringIO()) == 0
    assert calls == [("t1", False, 3, False), ("t2", True, -1, True)]


def test_cli_without_arguments_lists_the_tables(monkeypatch):
    rep = _fake_registry(monkeypatch, [])
    out = io.StringIO()
    assert rep.main([], stream=out) == 0
    assert [line.split()[0] for line in out.getvalue().splitlines()] == ["t1", "t2"]


def test_cli_refuses_a_cache_folder_that_is_a_file_before_computing(monkeypatch, tmp_path, capsys):
    calls = []
    rep = _fake_registry(monkeypatch, calls)
    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("x")
    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(not_a_dir))
    assert rep.main(["t1"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err and calls == []


# ============================================================================================
# Cache
# ============================================================================================
@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A cached fake table in an empty cache folder: ``(table function, calls, folder)``."""
    from mmcedu_lab import cache as cache_module

    folder = tmp_path / "cache"
    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(folder))
    calls = []

    def probe_table(full=False, progress=None, n_jobs=None):
        calls.append(full)
        return Table([[len(calls), 0.5]], ["n", "seconds"])

    fn = cache_module.cached("test_bad_input_probe", timings=["seconds"])(probe_table)
    yield fn, calls, folder
    cache_module._RAW.pop("test_bad_input_probe", None)


def _entry(folder):
    from mmcedu_lab.cache import cache_entries

    entries = cache_entries(folder)
    assert len(entries) == 1, entries
    return entries[0]["path"] / "output.pkl"


@pytest.mark.parametrize("content", ["truncated", "empty", "garbage"])
def test_unreadable_cache_entry_is_recomputed_with_a_warning(cache, content):
    from mmcedu_lab.cache import CacheWarning

    fn, calls, folder = cache
    fn()
    path = _entry(folder)
    good = path.read_bytes()
    path.write_bytes({"truncated": good[: len(good) // 2], "empty": b"", "garbage": b"not a pickle"}[content])
    with pytest.warns(CacheWarning, match="cannot be read"):
        assert fn().rows == [[2, 0.5]]
    assert fn().rows == [[2, None]] and len(calls) == 2  # repaired: read back (times blank)


def test_cache_entry_holding_another_object_is_recomputed(cache):
    from mmcedu_lab.cache import CacheWarning

    fn, calls, folder = cache
    fn()
    _entry(folder).write_bytes(pickle.dumps({"a": 1}))
    with pytest.warns(CacheWarning, match="holds dict, not this table"):
        table = fn()
    assert isinstance(table, Table) and table.rows == [[2, 0.5]] and len(calls) == 2


def test_cache_folder_that_is_a_file_fails_before_computing(cache):
    fn, calls, folder = cache
    folder.write_text("x")
    with pytest.raises(NotADirectoryError, match="MMCEDU_CACHE_DIR"):
        fn()
    assert calls == []


def test_interrupted_cache_write_leaves_no_temporary_file(cache, monkeypatch):
    import joblib.numpy_pickle

    fn, calls, folder = cache

    def interrupted(value, fh, *args, **kwargs):
        fh.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(joblib.numpy_pickle, "dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fn()
    left = [p.name for p in folder.rglob("*") if p.is_file() and not p.name.endswith(
        ("func_code.py", ".gitignore"))]
    assert left == []
    monkeypatch.undo()


def test_cache_location_variables(monkeypatch, tmp_path):
    from mmcedu_lab.cache import cache_dir

    monkeypatch.setenv("MMCEDU_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert cache_dir() == Path.home() / ".cache" / "mmcedu"  # empty means unset
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "mmcedu"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # the XDG rule: ignored
    assert cache_dir() == Path.home() / ".cache" / "mmcedu"
    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("MMCEDU_CACHE_DIR", "rel/cache")
    with pytest.raises(ValueError, match="relative path"):
        cache_dir()


def test_measured_times_are_never_read_from_the_cache(cache):
    fn, calls, folder = cache
    fresh = fn()
    assert fresh.rows == [[1, 0.5]] and fresh.times_measured and not fresh.from_cache
    back = fn()
    assert back.rows == [[1, None]] and back.times_measured is False and back.from_cache
    assert "times are not cached" in back.title and calls == [False]
    assert fn(refresh=True).rows == [[2, 0.5]] and fn().rows == [[2, None]]


def test_a_table_of_timings_is_never_cached(monkeypatch, tmp_path):
    from mmcedu_lab import cache as cache_module

    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path))
    calls = []

    def timing_table(full=False, progress=None, n_jobs=None):
        calls.append(1)
        return Table([[time.perf_counter()]], ["seconds"])

    fn = cache_module.cached("test_bad_input_timings", timings="all")(timing_table)
    try:
        fn(), fn()
        assert len(calls) == 2 and cache_module.cache_entries(tmp_path) == []
    finally:
        cache_module._RAW.pop("test_bad_input_timings", None)


def test_a_misdeclared_time_column_is_an_error_not_a_cached_time(monkeypatch, tmp_path):
    from mmcedu_lab import cache as cache_module

    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path))

    def renamed(full=False, progress=None, n_jobs=None):
        return Table([[1, 0.5]], ["n", "time (s)"])  # declared below as "seconds"

    fn = cache_module.cached("test_bad_input_renamed", timings=["seconds"])(renamed)
    try:
        with pytest.raises(ValueError, match=r"time columns \['seconds'\]"):
            fn()
        assert cache_module.cache_entries(tmp_path) == []
    finally:
        cache_module._RAW.pop("test_bad_input_renamed", None)


def test_prune_keeps_current_entries_and_drops_the_rest(cache):
    from mmcedu_lab import cache as cache_module

    fn, calls, folder = cache
    fn(), fn(full=True)
    (folder / "old_table-quick-0123456789abcdef.pkl").write_bytes(b"x")  # the earlier layout
    (folder / "notes.txt").write_text("a file of the user's")
    real = cache_module.dependency_versions
    cache_module.dependency_versions = lambda: (("numpy", "0.0"),)
    try:
        fn()  # an entry under other library versions
    finally:
        cache_module.dependency_versions = real
    assert len(cache_module.cache_entries(folder)) == 3 and len(calls) == 3
    res = cache_module.prune(tables=["test_bad_input_probe"], location=folder)
    assert res["removed"] == 2 and res["kept"] == 2
    assert (folder / "notes.txt").exists() and not (folder / "old_table-quick-0123456789abcdef.pkl").exists()
    fn(), fn(full=True)
    assert len(calls) == 3  # the current entries survived
    res = cache_module.prune(tables=["test_bad_input_probe"], location=folder, max_bytes=1)
    assert res["kept"] == 0
    res = cache_module.prune(tables=["test_bad_input_probe"], location=folder,
                             max_age=datetime.timedelta(days=1))
    assert res == {"removed": 0, "freed": 0, "kept": 0}


def test_cli_prune_reports_what_it_removed(monkeypatch, tmp_path):
    import mmcedu_lab.reproduce as rep

    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path))
    (tmp_path / "old_table-full-0123456789abcdef.pkl").write_bytes(b"x" * 10)
    out = io.StringIO()
    assert rep.main(["--prune", "--max-size", "1G", "--max-age", "30"], stream=out) == 0
    assert re.search(r"removed 1 entry .* kept 0", out.getvalue())


def test_cli_clear_removes_every_table_and_leaves_other_files(cache, capsys):
    import mmcedu_lab.reproduce as rep

    fn, calls, folder = cache
    fn(), fn()
    (folder / "notes.txt").write_text("mine")  # a folder the user also keeps other files in
    out = io.StringIO()
    assert rep.main(["--clear"], stream=out) == 0
    assert re.search(r"removed 1 entry .* kept 0", out.getvalue())
    assert (folder / "notes.txt").read_text() == "mine" and not (folder / "joblib").exists()
    assert fn().rows == [[2, 0.5]] and len(calls) == 2  # computed again
    for argv in (["--clear", "gmmc_table1"], ["--clear", "--prune"], ["--clear", "--n-jobs", "2"]):
        assert rep.main(argv) == 2
        assert "--clear takes no table names" in capsys.readouterr().err


def test_test_runs_start_from_their_own_cache():
    """The root conftest gives every test session a new, empty cache folder of its own."""
    folder = Path(os.environ["MMCEDU_CACHE_DIR"])
    if not folder.name.startswith("mmcedu-cache-"):
        pytest.skip("MMCEDU_CACHE_DIR was set for this run")
    assert folder.is_absolute() and folder.is_dir()


def test_cache_key_follows_the_code_not_its_docstrings(monkeypatch, tmp_path):
    from mmcedu_lab import cache as cache_module

    mod = tmp_path / "mmcedu_probe_module.py"
    mod.write_text('"""A module."""\nfrom mmcedu.kernels import rbf_kernel\n\n\n'
                   'def table():\n    """Doc."""\n    return 1  # one\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    digest = cache_module.source_digest("mmcedu_probe_module")
    time.sleep(0.01)
    mod.write_text('"""Another docstring."""\n# a comment\nfrom mmcedu.kernels import rbf_kernel\n\n\n'
                   'def table():\n    """Other doc."""\n    return (1)\n')
    assert cache_module.source_digest("mmcedu_probe_module") == digest
    mod.write_text('from mmcedu.kernels import rbf_kernel\n\n\ndef table():\n    return 2\n')
    assert cache_module.source_digest("mmcedu_probe_module") != digest
    # the modules it imports count, transitively: a change in mmcedu._validation (imported by
    # mmcedu.kernels) changes the digest
    before = cache_module.source_digest("mmcedu_probe_module")
    real = cache_module._file_digest

    def edited(path, *args):
        digest, imports = real(path, *args)
        return (digest[::-1], imports) if path.endswith("_validation.py") else (digest, imports)

    monkeypatch.setattr(cache_module, "_file_digest", edited)
    assert cache_module.source_digest("mmcedu_probe_module") != before


def test_cache_key_holds_versions_protocol_and_code(cache, monkeypatch):
    from mmcedu_lab import cache as cache_module

    fn, calls, folder = cache
    key = cache_module.table_key("test_bad_input_probe")
    assert key["protocol"] == "quick" and len(key["code"]) == 64
    assert [d for d, _ in key["versions"]] == ["numpy", "scipy", "scikit-learn", "cvxpy", "scs",
                                               "clarabel", "joblib"]
    fn()
    monkeypatch.setattr(cache_module, "dependency_versions", lambda: (("scs", "99"),))
    fn()  # another SCS: computed again
    monkeypatch.setattr(cache_module, "source_digest", lambda module: "0" * 64)
    fn()  # other code: computed again
    assert calls == [False, False, False]
    meta = json.loads((cache_module.cache_entries(folder)[0]["path"] / "metadata.json").read_text())
    assert set(meta["input_args"]) == {"name", "protocol", "code", "versions", "layout"}
