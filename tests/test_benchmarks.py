"""Every benchmark script runs in its quick mode and prints its measured table."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def test_every_method_has_a_benchmark():
    names = {p.stem.removeprefix("bench_") for p in SCRIPTS}
    assert {"sdp_mmc", "gmmc", "umc_rls", "emmc", "svc", "ensemble"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_quick_mode_runs(script):
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [l for l in proc.stdout.splitlines() if any(ch.isdigit() for ch in l)]
    assert len(lines) >= 3, proc.stdout


@pytest.mark.slow
def test_parallel_search_benchmark_gives_equal_results_for_any_n_jobs():
    script = ROOT / "benchmarks" / "bench_parallel.py"
    proc = subprocess.run([sys.executable, str(script), "--search", "--n-samples", "60"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "cv_results_ equal: True" in proc.stdout
    assert "ratio n_jobs=1 / n_jobs=2" in proc.stdout


def test_emmc_defaults_quick_mode_runs():
    """``bench_emmc.py --defaults --quick``: EMMC() against k-means on two held-out sets."""
    script = ROOT / "benchmarks" / "bench_emmc.py"
    proc = subprocess.run([sys.executable, str(script), "--defaults", "--quick"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [l for l in proc.stdout.splitlines() if l.startswith("held-out")]
    assert [r.split()[1] for r in rows] == ["iris", "digits"], proc.stdout


#: bench_label_free_scale.py's estimators and the largest n of each
LARGEST = {"UMCRLS": 10**6, "SupportVectorClustering": 10**6, "RobustEnsembleClustering": 10**6,
           "GMMC": 10**6, "EMMC": 10**6, "SDPMMC": 10**5}


def _table(text):
    """The rows of the first Markdown table in ``text`` whose first cell is code, as cell lists."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| `"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows


def _n(cell):
    return 10 ** int(cell[3:]) if cell.startswith("10^") else int(cell.replace(",", ""))


def _agrees(cell, value):
    """``cell`` shows ``value`` as rounded there (its number of decimals)."""
    text = cell.replace(",", "").split()[0]
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - value) <= 0.5 * 10**-decimals + 1e-9


def _estimator(cell):
    return cell.strip("`").split("(")[0]


def test_scale_tables_read_the_csv():
    """The README's Large-data table and label_free_scale.md show the CSV's numbers; every
    estimator has a measured row at its largest n."""
    from mmcedu_lab.scale import rows

    table = rows()
    assert {r["estimator"] for r in table} == set(LARGEST)
    by_key = {(r["estimator"], r["n"]): r for r in table}
    for name, largest in LARGEST.items():
        row = by_key[(name, largest)]  # measured, or the reason it was not (e.g. a timeout)
        assert (row["cpu_s"] is not None and row["ari"] is not None) or row["error"], name
    md = _table((ROOT / "benchmarks" / "results" / "label_free_scale.md").read_text())
    assert len(md) == len(table)
    for cells in md:
        r = by_key[(_estimator(cells[0]), _n(cells[1]))]
        if r["cpu_s"] is None:
            assert cells[2].startswith("not measured") and r["error"][:40] in cells[2], cells
            continue
        for cell, key in zip(cells[2:6], ["cpu_s", "wall_s", "peak_rss_mb", "ari"]):
            assert _agrees(cell, r[key]), (cells, key, r[key])
        assert int(cells[6]) == r["best_index"] and int(cells[7]) == r["n_choice_samples"]
    readme = (ROOT / "README.md").read_text()
    large = _table(readme[readme.index("## Large data"):])
    assert {_estimator(c[0]) for c in large} == set(LARGEST)
    for cells in large:
        name = _estimator(cells[0])
        r = by_key[(name, _n(cells[1]))]
        assert r["n"] == LARGEST[name]
        if r["cpu_s"] is None:
            assert cells[2].startswith("not measured") and r["error"][:40] in cells[2], cells
            continue
        wall, cpu = cells[2].split(" (")
        assert _agrees(wall, r["wall_s"]) and _agrees(cpu.rstrip(")"), r["cpu_s"]), cells
        assert _agrees(cells[3], r["peak_rss_mb"]) and _agrees(cells[4], r["ari"]), cells
        small_index, large_index = (int(v) for v in cells[5].split(" / "))
        assert (small_index, large_index) == (by_key[(name, 10**4)]["best_index"], r["best_index"])


def test_scale_data_is_the_benchmarks():
    """``mmcedu_lab.scale.data`` rebuilds the data of ``bench_label_free_scale.py``'s child (the
    chapters compute the label-free rule's grid on it)."""
    import ast

    import numpy as np

    from mmcedu.datasets import blobs
    from mmcedu_lab import scale

    src = (ROOT / "benchmarks" / "bench_label_free_scale.py").read_text()
    assert f"blobs({{n}}, centers={scale.CENTRES}[:{{k}}], cluster_std=0.8, random_state=0)" in src
    assert "from bench_svc import moons_and_disk" in src and "moons_and_disk({n}, random_state=0)" in src
    assert "from mmcedu_lab.scale import moons_and_disk" in (ROOT / "benchmarks" / "bench_svc.py").read_text()
    node = next(
        n
        for n in ast.parse(src).body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "ESTIMATORS"
    )
    estimators = eval(compile(ast.Expression(node.value), "ESTIMATORS", "eval"))  # literals only
    assert set(estimators) == set(LARGEST)
    for name, (_, k, _) in estimators.items():
        X, y = scale.data(name, 300)
        if name == "SupportVectorClustering":
            X_ref, y_ref = scale.moons_and_disk(300, random_state=0)
        else:
            X_ref, y_ref = blobs(300, centers=scale.CENTRES[:k], cluster_std=0.8, random_state=0)
        assert np.array_equal(X, X_ref) and np.array_equal(y, y_ref) and len(set(y)) == k, name
