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
