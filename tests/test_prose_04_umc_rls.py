"""Chapter 04 (UMC-RLS): the chapter's prose agrees with the committed results.

The At-scale section and the paragraph on the defaults quote numbers from
``benchmarks/results/umc_rls_scale.csv`` and ``umc_rls_defaults.csv``; the chapter plots and
quotes them, and these tests check the quoted numbers against the files.
"""

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _rows(name):
    with open(RESULTS / name) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@pytest.fixture(scope="module")
def scale():
    return _rows("umc_rls_scale.csv")


def _low_rank(scale, n, dtype="float32"):
    return next(
        r
        for r in scale
        if r["source"].startswith("estimator")
        and r["path"] == "low-rank"
        and r["n"] == str(n)
        and r["dtype"] == dtype
        and not r["error"]
    )


def test_million_samples(scale):
    """'n = 10^6 takes about 294 CPU seconds and 670 MB, ARI 0.966' (r = 100, float32)."""
    big = _low_rank(scale, 1_000_000)
    assert big["r"] == "100"
    assert round(float(big["fit_cpu_s"])) == 294
    assert abs(float(big["peak_rss_mb"]) - 670) < 5 and float(big["peak_rss_mb"]) < 8 * 1024
    assert round(float(big["ari"]), 3) == 0.966


def test_shared_subsample(scale):
    """'on a shared subsample of 5000 points agrees with the exact path at ARI 0.999'."""
    big = _low_rank(scale, 1_000_000)
    assert int(big["n_sub"]) == 5000
    assert round(float(big["ari_sub_scale_vs_dense"]), 3) == 0.999
    assert abs(float(big["ari_sub_scale_vs_truth"]) - float(big["ari_sub_dense_vs_truth"])) <= 0.05


def test_exact_path_measured_to_4000(scale):
    """'The exact path ... was measured up to n = 4000.'"""
    exact = [int(r["n"]) for r in scale if r["path"] != "low-rank" and not r["error"] and r["peak_rss_mb"]]
    assert max(exact) == 4000


def test_defaults_against_kmeans():
    """The defaults paragraph and the equal-size remark: mean ARI over 5 seeds per data set."""
    ari = defaultdict(list)
    for r in _rows("umc_rls_defaults.csv"):
        ari[(r["data"], r["method"])].append(float(r["ari"]))
    mean = {key: np.mean(v) for key, v in ari.items()}
    assert all(len(v) == 5 for v in ari.values())
    sets = sorted({d for d, _ in mean})
    assert len(sets) == 8, "eight data sets"
    # the box names them: Iris, wine, breast cancer, digits 0-9, 1-4, 3-8 and 1-7, the blobs 200/50/50
    assert set(sets) == {
        "iris",
        "wine",
        "breast cancer",
        "digits 0-9",
        "digits 1-4",
        "digits 3-8",
        "digits 1-7",
        "blobs 200/50/50",
    }
    assert round(np.mean([mean[(d, "UMCRLS()")] for d in sets]), 2) == 0.80
    assert round(np.mean([mean[(d, "KMeans")] for d in sets]), 2) == 0.77
    better = {d for d in sets if mean[(d, "UMCRLS()")] > mean[(d, "KMeans")] + 0.005}
    assert better == {"iris", "breast cancer", "digits 0-9", "digits 1-4", "digits 3-8"}
    assert round(mean[("digits 1-7", "UMCRLS()")], 2) == round(mean[("digits 1-7", "KMeans")], 2)
    assert (round(mean[("wine", "UMCRLS()")], 2), round(mean[("wine", "KMeans")], 2)) == (0.81, 0.90)
    assert (
        round(mean[("blobs 200/50/50", "UMCRLS()")], 2),
        round(mean[("blobs 200/50/50", "KMeans")], 2),
    ) == (0.43, 1.00), "worse on the unbalanced blobs (0.43 against 1.00)"
    worse = {d for d in sets if mean[(d, "UMCRLS()")] < mean[(d, "KMeans")] - 0.005}
    assert worse == {"wine", "blobs 200/50/50"}, "worse on wine and on the unbalanced blobs"


def test_defaults_kmeans_setting():
    """'both cells with KMeans(n_init=10)': the CSV's k-means runs use n_init=10."""
    with open(RESULTS / "umc_rls_defaults.csv") as fh:
        header = fh.readline()
    assert header.startswith("#") and "KMeans(n_init=10)" in header


def test_defaults_wine():
    """'worse on wine (about 0.81 against 0.90)': mean ARI over 5 seeds."""
    ari = defaultdict(list)
    for r in _rows("umc_rls_defaults.csv"):
        if r["data"] == "wine":
            ari[r["method"]].append(float(r["ari"]))
    assert len(ari["UMCRLS()"]) == len(ari["KMeans"]) == 5
    assert round(np.mean(ari["UMCRLS()"]), 2) == 0.81 and round(np.mean(ari["KMeans"]), 2) == 0.90
