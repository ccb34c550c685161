"""Chapter 07's prose agrees with the committed results.

The At-scale section, the caption of its figure and the summary of
``book/chapters/07_robust_ensemble.ipynb`` quote the measured fits of
``benchmarks/results/ensemble_scale.csv``; the chapter itself only asserts what it computes
(and the package's memory formula against the stored peak). Each test reads the CSV, checks
the stored run, rounds as the prose does, and checks that the chapter still quotes that
text, so that a new benchmark run or an edit of the prose that disagree fail here.
"""

import csv
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks/results/ensemble_scale.csv"
CHAPTER = ROOT / "book/chapters/07_robust_ensemble.ipynb"


@pytest.fixture(scope="module")
def scale():
    with open(CSV) as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def fits(scale):
    return {(r["solver"], int(r["n"])): r for r in scale if r["part"] == "fit"}


@pytest.fixture(scope="module")
def prose():
    """The chapter's markdown, whitespace collapsed (the prose wraps lines anywhere)."""
    cells = json.loads(CHAPTER.read_text())["cells"]
    md = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", md)


def gb(mib):
    """``peak_rss_mb`` is ``ru_maxrss / 1024``, i.e. MiB; the chapter quotes GB = 10^9 bytes."""
    return float(mib) * 2**20 / 1e9


def test_million_samples_converged_at_about_1_gb(fits, prose):
    big = fits["compressed", 10**6]
    assert big["converged"] == "True"
    assert f"{gb(big['peak_rss_mb']):.1f}" == "1.0", "the summary says: about 1 GB"
    assert "$10^6$ samples in 23 CPU seconds and about 1 GB" in prose
    assert round(float(big["fit_cpu_s"])) == 23


def test_million_samples_memory_formula(prose):
    """The formula the prose quotes beside the measured peak (the chapter asserts that the peak
    above a fresh interpreter is half to all of it)."""
    from mmcedu import RobustEnsembleClustering

    est = RobustEnsembleClustering(10, partitions="precomputed", solver="compressed")
    formula = est.memory_bytes(10**6, 50) / 1e9
    assert f"the peak above a fresh interpreter is half to all of its {formula:.3f} GB (asserted)" in prose
    assert f"{formula:.3f}" == "1.065"


def test_compressed_path_converges_at_every_size(fits, prose):
    compressed = [r for (s, _), r in fits.items() if s == "compressed"]
    assert len(compressed) >= 4 and all(r["converged"] == "True" for r in compressed)
    assert "the compressed path converges at every size" in prose


@pytest.mark.parametrize("n", [1000, 10000])
def test_compressed_has_the_dense_iterates(fits, n):
    """The stored runs agree with the chapter's induction: the same iterates, labels and ARI."""
    c, d = fits["compressed", n], fits["dense", n]
    assert c["n_iter"] == d["n_iter"] and c["ari"] == d["ari"]


def test_shared_run_within_0_05_of_the_dense_path(scale):
    shared = next(r for r in scale if r["part"] == "shared")
    assert float(shared["ari_big_vs_dense"]) == 1.0
    assert abs(float(shared["ari_big_on_shared_vs_truth"]) - float(shared["ari"])) <= 0.05


def test_generating_costs_more_than_fitting_at_a_million(scale, fits, prose):
    gen = next(r for r in scale if r["part"] == "generate" and int(r["n"]) == 10**6)
    assert float(gen["generate_cpu_s"]) > float(fits["compressed", 10**6]["fit_cpu_s"])
    assert "at $n = 10^6$ generating the ensemble costs more than fitting it" in prose


@pytest.fixture(scope="module")
def scale_caption():
    """The caption of the figure of the measured fits (``fig-ens-scale``), whitespace collapsed."""
    cells = json.loads(CHAPTER.read_text())["cells"]
    caps = [
        c["metadata"]["mystnb"]["figure"]["caption"]
        for c in cells
        if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-ens-scale"
    ]
    assert len(caps) == 1
    return re.sub(r"\s+", " ", caps[0])


def test_scale_caption_quotes_the_million_sample_fit(fits, scale_caption):
    big = fits["compressed", 10**6]
    cpu, peak = float(big["fit_cpu_s"]), gb(big["peak_rss_mb"])  # the figure plots GB = 10^9 bytes
    tangent = float(big["tangent_residual"])
    assert f"takes {cpu:.1f} CPU s and {peak:.2f} GB, ARI {float(big['ari']):.3f}" in scale_caption
    assert (cpu, peak) == pytest.approx((22.7, 1.00), abs=0.05)
    assert f"tangent residual ${round(tangent * 1e9)} \\cdot 10^{{-9}}$" in scale_caption
    assert round(tangent * 1e9) == 7


def test_scale_caption_memory_at_import(scale, scale_caption):
    """The smallest process (imports and the smallest ensemble) sets the floor of the right panel."""
    floor_gb = min(gb(r["peak_rss_mb"]) for r in scale)
    assert f"imports included, about {floor_gb:.2f} GB" in scale_caption
    assert f"{floor_gb:.2f}" == "0.15"


def test_scale_caption_shared_subsample(fits, scale, scale_caption):
    shared = next(r for r in scale if r["part"] == "shared")
    assert int(shared["n"]) == 10_000 and float(shared["ari_big_vs_dense"]) == 1.0
    assert (
        "restricted to the first 10,000 samples its labels equal a dense fit of those samples (ARI 1.0)"
        in scale_caption
    )
