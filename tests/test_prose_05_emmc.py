"""Chapter 05 (EMMC): the chapter's prose agrees with the committed results.

The At-scale box quotes ``benchmarks/results/emmc_scale.csv`` and
``emmc_shared_subsample.csv`` (measured by ``benchmarks/bench_emmc.py``); the chapter plots
them, and these tests check the quoted numbers against the files.
"""

import csv
from pathlib import Path

import pytest

from mmcedu import EMMC

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


@pytest.fixture(scope="module")
def bench():
    with open(RESULTS / "emmc_scale.csv") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(rows, key=lambda r: int(r["n"]))


def test_sizes_and_settings(bench):
    """fig-emmc-scale's caption: 'one run per size ..., r = 200', sizes 10^3 to 10^5."""
    assert int(bench[0]["n"]) == 1_000 and int(bench[-1]["n"]) == 100_000
    assert {(r["n_hidden"], r["n_clusters"]) for r in bench} == {("200", "10")}


def test_time_per_alternation(bench):
    """'CPU time per alternation grows roughly linearly in n; a fit at 10^5 takes 21 CPU s'."""
    first, last = float(bench[0]["per_alternation_cpu_s"]), float(bench[-1]["per_alternation_cpu_s"])
    # roughly linear: x100 in n gives between x50 and x200 in time per alternation
    assert 50 < last / first < 200
    assert round(float(bench[-1]["fit_cpu_s"])) == 21


def test_memory(bench):
    """'the peak memory is 0.65 GB, below the package's upfront estimate memory_bytes (0.80 GB)'."""
    peak_gb = float(bench[-1]["peak_rss_mb"]) / 1e3
    assert round(peak_gb, 2) == 0.65 and all(float(r["peak_rss_mb"]) < 8 * 1024 for r in bench)
    estimate_gb = EMMC(10, n_hidden=200, local_search=True).memory_bytes(100_000, 64) / 1e9
    assert round(estimate_gb, 2) == 0.80 and peak_gb < estimate_gb


def test_ari_above_the_start(bench):
    """'the ARI against the digit classes stays at 0.68 to 0.72, above the k-means start's at every
    size'."""
    ari = [float(r["ari"]) for r in bench]
    start = [float(r["ari_kmeans_start"]) for r in bench]
    assert (round(min(ari), 2), round(max(ari), 2)) == (0.68, 0.72)
    assert all(a > s for a, s in zip(ari, start))


def test_shared_subsample():
    """'on the first 5,000 samples the fit at 10^5 and a fit of those alone have the same ARI
    (0.706)' (the At-scale box)."""
    with open(RESULTS / "emmc_shared_subsample.csv") as fh:
        shared = next(csv.DictReader(fh))
    assert int(shared["n"]) == 100_000 and int(shared["subsample"]) == 5_000
    large, small = float(shared["ari_large_on_subsample"]), float(shared["ari_small_fit"])
    assert round(large, 3) == round(small, 3) == 0.706
