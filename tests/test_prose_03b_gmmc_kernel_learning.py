"""The chapter's prose agrees with the committed results: chapter 03b (GMMC at scale).

The section "At scale" and the caption of its figure quote ``benchmarks/results/gmmc_scale.csv``
(and the CPU seconds of its ``.md``); this reads the files and the notebook, and checks each
quoted number.
"""

import csv
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _prose():
    cells = json.loads((ROOT / "book/chapters/03b_gmmc_kernel_learning.ipynb").read_text())["cells"]
    parts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    parts += [c["metadata"].get("mystnb", {}).get("figure", {}).get("caption", "") for c in cells]
    return re.sub(r"\s+", " ", "\n".join(parts))


def _rows():
    with open(RESULTS / "gmmc_scale.csv") as fh:
        return [r for r in csv.DictReader(fh) if r["n_components"] == "300"]


def test_nystroem_counts_gaps_and_ari():
    rows = _rows()
    n = [int(r["n"]) for r in rows]
    it = [int(r["n_iter"]) for r in rows]
    mv = [int(r["n_matvec"]) for r in rows]
    assert (min(n), max(n)) == (1000, 100_000)
    assert (min(it), max(it), min(mv), max(mv)) == (154, 208, 1976, 3128)
    assert it[-1] <= 1.5 * it[0] and mv[-1] <= 1.5 * mv[0], "no growth of the work per sample with n"
    assert max(float(r["rel_gap"]) for r in rows) <= 2.2e-6 < 1e-4
    assert all(float(r["ari"]) == 1.0 for r in rows)
    prose = _prose()
    for quoted in (
        "between 154 and 208",
        "between 1,976 and 3,128",
        r"at most $2.2 \cdot 10^{-6}$",
        "adjusted Rand index 1.0 at every size",
    ):
        assert quoted in prose, quoted


def test_the_largest_fit():
    big = next(r for r in _rows() if r["n"] == "100000")
    assert round(float(big["peak_mb"])) == 1414
    md = (RESULTS / "gmmc_scale.md").read_text()
    cpu = re.search(r"\| 100,000 \| [\d.]+ \| ([\d.]+) \|", md)
    assert cpu and 92.5 <= float(cpu.group(1)) < 93.5, "CPU seconds of the n = 100,000 fit"
    prose = _prose()
    assert "took 93 CPU seconds and 1,414 MiB" in prose
