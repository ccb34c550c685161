"""Chapter 02's prose agrees with the committed results.

The At-scale section of ``book/chapters/02_sdp_mmc.ipynb`` quotes numbers from
``benchmarks/results/sdp_mmc_scale.csv``; the chapter itself only asserts what it computes.
Each test reads the CSV, rounds as the prose does, and checks that the chapter still quotes
that text, so that a new benchmark run or an edit of the prose that disagree fail here.
"""

import csv
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks/results/sdp_mmc_scale.csv"
CHAPTER = ROOT / "book/chapters/02_sdp_mmc.ipynb"


@pytest.fixture(scope="module")
def runs():
    with open(CSV) as fh:
        rows = [r for r in csv.DictReader(fh) if r["source"] == "package"]
    return {(r["solver"], int(r["n"])): r for r in rows}


@pytest.fixture(scope="module")
def prose():
    """The chapter's markdown, whitespace collapsed (the prose wraps lines anywhere)."""
    cells = json.loads(CHAPTER.read_text())["cells"]
    md = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", md)


def _low(runs):
    return {n: r for (s, n), r in runs.items() if s == "lowrank"}


def test_every_lowrank_fit_is_certified_before_max_iter(runs, prose):
    low = _low(runs)
    assert max(low) >= 2000, "the run reaches n = 2000"
    for n, r in low.items():
        assert r["status"] == "optimal" and float(r["rel_gap"]) <= 1e-3, n
        assert int(r["n_iter"]) < 1000, n
        assert float(r["objective"]) <= float(r["upper"]), n
    quoted = "Every low-rank fit reached the certified gap `tol = 1e-3` before the default `max_iter = 1000`"
    assert quoted in prose


def test_largest_fit_and_growth_quoted(runs, prose):
    low = _low(runs)
    it, cpu = int(low[2000]["n_iter"]), {n: float(low[n]["cpu_seconds"]) for n in (1000, 2000)}
    peak = float(low[2000]["peak_mb"])
    assert f"$n = 2000$ in {it} iterations ({cpu[2000]:.0f} CPU s, {peak:.0f} MiB)" in prose
    assert round(cpu[2000] / cpu[1000]) == 7 and "grew about sevenfold" in prose


def test_cvxpy_memory_estimate_gap_quoted(runs, prose):
    """The prose calls 2000 n^2 bytes rough: from n = 50 to 200 the measured peak of the cvxpy
    fits grew about 15 % more than the estimate (the imports cancel in the difference)."""
    from mmcedu import SDPMMC

    est = SDPMMC(solver="cvxpy").memory_bytes
    peak = {n: float(runs[("cvxpy", n)]["peak_mb"]) for n in (50, 200)}
    ratio = (peak[200] - peak[50]) / ((est(200) - est(50)) / 2**20)
    assert 1.10 <= ratio <= 1.20, ratio
    assert "roughly $2000\\,n^2$ bytes" in prose
    assert "from $n = 50$ to 200 the measured peak grew about 15 % more than this estimate" in prose


def test_scs_time_quoted(runs, prose):
    cpu = float(runs[("cvxpy", 200)]["cpu_seconds"])
    assert f"SCS took {cpu:.0f} CPU s at $n = 200$" in prose


def test_scs_iterations_grow_as_quoted(runs, prose):
    """The prose says SCS's iterations grow too, about 1.5 times per doubling of n."""
    it = {n: int(runs[("cvxpy", n)]["n_iter"]) for n in (50, 100, 200)}
    assert it[50] < it[100] < it[200], it
    assert all(1.3 <= it[2 * n] / it[n] <= 1.7 for n in (50, 100)), it
    assert f"SCS needed {it[50]}, {it[100]} and {it[200]} iterations at $n = 50$, 100 and 200" in prose
    assert "about 1.5 times as many per doubling of $n$" in prose


def test_scs_value_lies_in_the_lowrank_bracket(runs):
    """Where both solvers ran, SCS's delta (its own tolerance, about 1e-4) is in the bracket."""
    low = _low(runs)
    both = [n for (s, n) in runs if s == "cvxpy" and n in low]
    assert both, "the run has sizes measured by both solvers"
    for n in both:
        d_scs = float(runs[("cvxpy", n)]["objective"])
        assert float(low[n]["objective"]) <= d_scs * (1 + 1e-4), n
        assert d_scs <= float(low[n]["upper"]) * (1 + 1e-4), n


def test_memory_ratios_quoted_in_the_changelog(runs):
    """CHANGELOG.md (SDPMMC, 0.3.0) explains the 128 n^2 estimate by the measured peak above the
    interpreter's being 2.0 and 1.6 times six n x n arrays (48 n^2 bytes) at n = 1000 and 2000."""
    low = _low(runs)
    base = float(low[min(low)]["peak_mb"])
    ratio = {n: (float(low[n]["peak_mb"]) - base) / (48 * n**2 / 2**20) for n in (1000, 2000)}
    assert (round(ratio[1000], 1), round(ratio[2000], 1)) == (2.0, 1.6), ratio
    text = re.sub(r"\s+", " ", (ROOT / "CHANGELOG.md").read_text())
    assert "was 2.0 times that at n = 1000 and 1.6 times at n = 2000" in text


def test_the_factor_path_numbers_quoted(runs, prose):
    r = runs[("nystroem", 100000)]
    assert r["status"] == "optimal" and float(r["rel_gap"]) <= 1e-3
    assert "$3.4 \\cdot 10^{-4}$" in prose and f"{float(r['rel_gap']):.1e}" == "3.4e-04"
    assert f"in {float(r['cpu_seconds']):.0f} CPU seconds and {float(r['peak_mb']):.0f} MiB" in prose
    assert f"ARI {float(r['ari']):.3f} (an error of {100 * float(r['clustering_error']):.1f} %" in prose
