"""The command line that reproduces the papers' tables, the cache and the parallel runner.

(Bad input to all three is in tests/test_bad_input.py.)
"""

import io
import subprocess
import sys

import numpy as np
import pytest

import mmcedu_lab.reproduce as rep
from mmcedu_lab import all_tables
from mmcedu_lab.parallel import map_tasks, task_seed
from mmcedu_lab.report import Table


def test_list_names_every_registered_table():
    out = io.StringIO()
    assert rep.main(["--list"], stream=out) == 0
    listed = [line.split()[0] for line in out.getvalue().splitlines() if line.strip()]
    assert listed == list(all_tables())


def test_unknown_name_is_an_error(capsys):
    out = io.StringIO()
    assert rep.main(["no_such_table"], stream=out) == 2
    assert "unknown table" in capsys.readouterr().err and out.getvalue() == ""


def test_runs_tables_with_the_requested_protocol_and_draws_progress(monkeypatch, capsys):
    calls = []

    def fake(full=False, progress=None, n_jobs=None, refresh=False):
        """A fake table."""
        for i in range(3):
            progress(i + 1, 3)
        calls.append(full)
        return Table([["x", 1.0, 2.0]], ["data", "paper", "mmcedu"])

    monkeypatch.setattr(rep, "all_tables", lambda: {"fake_a": fake, "fake_b": fake})
    out = io.StringIO()
    assert rep.main(["all", "--full"], stream=out) == 0
    assert calls == [True, True]
    assert out.getvalue().count("full protocol") == 2 and "mmcedu" in out.getvalue()
    assert rep.main(["fake_b"], stream=out) == 0 and calls[-1] is False
    err = capsys.readouterr().err  # the tqdm bars, on stderr
    assert "fake_a" in err and "3/3" in err


def test_module_runs_as_a_script():
    proc = subprocess.run([sys.executable, "-m", "mmcedu_lab.reproduce", "--list"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_cached_tables_are_computed_once_per_key_and_protocol(tmp_path, monkeypatch):
    from mmcedu_lab import cache

    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path))
    calls = []

    def fake(full=False, progress=None, n_jobs=None):
        calls.append(full)
        return Table([[len(calls)]], ["n"])

    fn = cache.cached("test_reproduce_fake")(fake)
    try:
        assert fn().rows == [[1]] and fn().rows == [[1]] and calls == [False]
        assert fn(full=True).rows == [[2]] and calls == [False, True]
        assert fn(refresh=True).rows == [[3]] and fn().rows == [[3]]
        assert fn().from_cache and not fn(full=True, refresh=True).from_cache
        assert len(cache.cache_entries(tmp_path)) == 2
        assert fn.table_name == "test_reproduce_fake" and fn.__doc__ is None
    finally:
        cache._RAW.pop("test_reproduce_fake", None)


def test_every_table_has_a_key_from_its_code():
    from mmcedu_lab.cache import table_key

    keys = {name: table_key(name) for name in all_tables() if name != "summary"}
    assert all(len(k["code"]) == 64 and k["protocol"] == "quick" for k in keys.values())
    # tables of one module share the code key, tables of different modules do not
    assert keys["emmc_table1"]["code"] == keys["emmc_table2"]["code"]
    assert keys["emmc_table1"]["code"] != keys["gmmc_table1"]["code"]
    assert table_key("gmmc_table1", full=True)["protocol"] == "full"


# ------------------------------------------------------------------------------ parallel runner
def _square_plus_noise(task):
    i, seed = task
    return i * i + np.random.default_rng(seed).random()


def test_map_tasks_returns_ordered_results_and_reports_progress():
    tasks = [(i, task_seed(7, i)) for i in range(6)]
    seen = []
    out = map_tasks(_square_plus_noise, tasks, n_jobs=1, progress=lambda d, t: seen.append((d, t)))
    assert [int(v) for v in out] == [0, 1, 4, 9, 16, 25]
    assert seen == [(i, 6) for i in range(7)]
    assert map_tasks(_square_plus_noise, [], n_jobs=2) == []
    assert len({task_seed(7, i) for i in range(100)}) == 100


def test_map_tasks_gives_the_same_results_for_any_n_jobs(monkeypatch):
    tasks = [(i, task_seed(0, i)) for i in range(8)]
    serial = map_tasks(_square_plus_noise, tasks, n_jobs=1)
    assert map_tasks(_square_plus_noise, tasks, n_jobs=2) == serial
    monkeypatch.setenv("MMCEDU_N_JOBS", "2")  # the notebooks' switch
    assert map_tasks(_square_plus_noise, tasks) == serial


@pytest.mark.slow
def test_a_paper_table_is_identical_for_one_and_two_jobs():
    from mmcedu_lab.gmmc import gmmc_kernel_learning

    one = gmmc_kernel_learning(n_jobs=1, refresh=True)
    two = gmmc_kernel_learning(n_jobs=2, refresh=True)
    assert one.rows == two.rows and not two.from_cache


@pytest.mark.slow
def test_the_comparison_runs_on_a_dask_cluster_with_the_serial_results():
    import joblib
    from dask.distributed import Client, LocalCluster

    from mmcedu_lab.comparison import run_comparison
    from mmcedu_lab.gmmc import gmmc_kernel_learning

    kw = dict(methods=["k-means", "spectral (nn)", "UMC-RLS"], tasks=["two circles", "iris"], n_samples=40)
    serial = run_comparison(**kw, n_jobs=1)
    serial_table = gmmc_kernel_learning(n_jobs=1, refresh=True)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        with joblib.parallel_config(backend="dask"):
            remote = run_comparison(**kw, n_jobs=2)
            # a paper table through the cache, as the README's three lines run it
            remote_table = gmmc_kernel_learning(n_jobs=-1, refresh=True)
    drop = lambda recs: [{k: v for k, v in r.items() if k != "time"} for r in recs]  # noqa: E731
    assert drop(remote) == drop(serial)
    assert remote_table.rows == serial_table.rows and not remote_table.from_cache


def test_summary_rows_pair_paper_and_mmcedu_columns():
    from mmcedu_lab.summary import summary_rows

    t1 = Table([["Iris", "UMC", 0.96, 0.95, "raw"], ["Moons", "UMC", "--", 1.0, "ours only"]],
               ["data set", "method", "paper", "mmcedu", "note"])
    t2 = Table([[3, 0.5]], ["n", "mmcedu"])  # no paper column: left out
    rows = summary_rows({"a": t1, "b": t2})
    assert rows == [["a", "Iris, method = UMC", 0.96, 0.95, "raw"]]


def test_summary_rows_follow_the_declared_column_pairs():
    from mmcedu_lab.registry import PaperTable
    from mmcedu_lab.summary import summary_rows

    t = PaperTable([["Digits", 5.6, 0.5, 35, 2.0, "n"]],
                   ["data set", "paper", "mmcedu", "paper NC", "NC", "note"],
                   pairs=[("paper", "mmcedu", "GMMC"), ("paper NC", "NC", "normalized cut")])
    assert summary_rows({"g": t}) == [["g", "Digits, GMMC", 5.6, 0.5, "n"],
                                      ["g", "Digits, normalized cut", 35, 2.0, "n"]]


def test_table_functions_are_named_as_their_tables():
    tables = all_tables()
    assert all(fn.__name__ == name for name, fn in tables.items())
    assert {"sdp_mmc_table1", "gmmc_table1", "umc_rls_table1", "emmc_table1", "svc_qlist",
            "ensemble_table1", "comparison", "summary"} <= set(tables)


def test_measure_reports_time_memory_and_the_result():
    from mmcedu_lab.measure import measure, scaling

    out = measure(lambda: list(range(10_000)), memory="tracemalloc", repeats=3)
    assert out["seconds"] > 0 and out["peak_mb"] > 0.05 and out["result"][-1] == 9999
    assert measure(lambda: 1)["peak_mb"] is None
    runs = scaling([2, 3], {"a": lambda d: d, "b": lambda d: -d}, lambda n: n, max_n={"b": 2},
                   describe=lambda name, res, data: {"res": res})
    assert [(r["n"], r["method"], r["skipped"], r.get("res")) for r in runs] == [
        (2, "a", False, 2), (2, "b", False, -2), (3, "a", False, 3), (3, "b", True, None)]


def test_best_time_keeps_the_fastest_call_and_respects_the_budget():
    import time

    from mmcedu_lab.measure import best_time

    calls = []

    def fn():
        calls.append(1)
        time.sleep(0.02 if len(calls) == 1 else 0.0)
        return len(calls)

    best, last = best_time(fn, 3)
    assert len(calls) == 3 and last == 3 and best < 0.02
    calls.clear()
    best, last = best_time(fn, 3, budget=0.01)  # the first call already spends the budget
    assert len(calls) == 1 and last == 1 and best >= 0.02


def test_readme_dask_lines_name_real_functions():
    import ast
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```py\n(.*?)\n```", readme, flags=re.S)
    assert len(blocks) == 1 and len(blocks[0].splitlines()) == 3
    tree = ast.parse(blocks[0])
    imported = [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
    for module, name in imported:
        assert hasattr(__import__(module, fromlist=[name]), name), (module, name)
    assert 'parallel_config(backend="dask")' in blocks[0] and "n_jobs=-1" in blocks[0]
