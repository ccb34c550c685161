"""The prose of the support vector clustering chapters agrees with the committed results.

Section "Beyond the paper: SVC at scale" of ``book/chapters/06b_svc_labeling.ipynb`` (the
second page of chapter 06) quotes numbers of the benchmark's results,
``benchmarks/results/svc_scale.csv``. The chapter draws the figure from that file and computes
nothing from it; this test reads the CSV and checks every number the prose and the figure
caption quote, and the structural facts the text states about the run (memory, ARI, counted
work). Times are read only where the
prose quotes them; nothing is inferred from them.
"""

import csv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks/results/svc_scale.csv"


def _series():
    with CSV.open() as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    out = {}
    for name in ("scalable", "dense", "max_samples"):
        sel = sorted((r for r in rows if r["series"] == name), key=lambda r: int(r["n"]))
        cols = [k for k in sel[0] if k not in ("series", "solver", "error")]
        out[name] = {k: np.array([float(r[k]) if r[k] != "" else np.nan for r in sel]) for k in cols}
    return rows, out


@pytest.fixture(scope="module")
def run():
    return _series()


def test_every_point_finished(run):
    rows, _ = run
    assert rows and not any(r["error"] for r in rows)


def test_scalable_series_quoted_numbers(run):
    sc = run[1]["scalable"]
    n = sc["n"]
    assert list(n) == [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6], "from 10^3 to 10^6 points"
    assert round(sc["fit_cpu_s"][-1]) == 92, "92 CPU seconds at 10^6"
    assert round(sc["peak_rss_mb"][-1]) == 549, "549 MiB at 10^6"
    assert sc["peak_rss_mb"][-1] < 8 * 1024, "under the 8 GB target"
    assert int(sc["n_support"][-1]) == 728 and int(sc["n_support"][0]) == 407, "N_sv from 407 to 728"
    assert int(sc["n_support"][list(n).index(1e5)]) == 684, "N_sv = 684 at 10^5"
    assert int(sc["n_clusters"][-1]) == 3 and sc["ari"].min() == 1.0, "the three clusters, ARI 1.0"
    # support vectors sit on the contour: N_sv / N falls at every step, under 1 % at the largest n
    assert np.all(np.diff(sc["n_support"] / n) < 0) and sc["n_support"][-1] < 0.01 * n[-1]
    # the caption: the CPU time falls from 10^4 to 3 10^4 points, where the looser tol takes over
    assert sc["fit_cpu_s"][list(n).index(3e4)] < sc["fit_cpu_s"][list(n).index(1e4)]


def test_counted_work_columns(run):
    # R^2(x) of every point is N N_sv + N_sv^2 kernel evaluations; the cone labeling none
    for name in ("scalable", "max_samples"):
        s = run[1][name]
        assert np.array_equal(s["radius_kernel_evaluations"], s["n"] * s["n_support"] + s["n_support"] ** 2)
        assert not s["labeling_kernel_evaluations"].any()


def test_shared_subsample_agrees_with_dense_path(run):
    sc = run[1]["scalable"]
    assert sc["ari_shared_vs_dense"].min() == 1.0, "the two labelings agree at ARI 1.0 at every n"
    assert sc["ari_shared_vs_truth"].min() == 1.0 and sc["ari_shared_dense_vs_truth"].min() == 1.0


def test_dense_series_quoted_numbers(run):
    de, sc = run[1]["dense"], run[1]["scalable"]
    assert list(de["n"]) == [1000, 2000, 4000]
    assert (round(de["peak_rss_mb"][0]), round(de["peak_rss_mb"][-1])) == (245, 1419), "245 to 1,419 MiB"
    # the dense path holds the N x N kernel: its peak grows by at least 8 bytes per new kernel entry
    assert np.all(np.diff(de["peak_rss_mb"]) * 2**20 >= 8 * np.diff(de["n"] ** 2))
    assert sc["peak_rss_mb"][-1] < de["peak_rss_mb"][-1], "scalable at 10^6 below dense at 4,000"


def test_max_samples_series_quoted_numbers(run):
    ms = run[1]["max_samples"]
    assert list(ms["n"]) == [1e4, 1e5, 1e6]
    assert np.all(ms["n_fitted"] == 5000), "the dual is solved on 5,000 points"
    assert np.all((ms["n_support"] > 3900) & (ms["n_support"] < 4100)), "about 4,000 support vectors"
    assert ms["ari"].min() == 1.0, "ARI 1.0 at each size"
    assert round(ms["fit_cpu_s"][-1]) == 55 and round(ms["peak_rss_mb"][-1]) == 273, "55 CPU s, 273 MiB"
