"""The command line that reproduces the papers' tables."""

import io
import subprocess
import sys

import mmcedu.reproduce as rep
from mmcedu.experiments import all_tables
from mmcedu.report import Table


def test_list_names_every_registered_table():
    out = io.StringIO()
    assert rep.main(["--list"], stream=out) == 0
    listed = [line.split()[0] for line in out.getvalue().splitlines() if line.strip()]
    assert listed == list(all_tables())


def test_unknown_name_is_an_error():
    out = io.StringIO()
    assert rep.main(["no_such_table"], stream=out) == 2
    assert "unknown table" in out.getvalue()


def test_runs_tables_with_the_requested_protocol(monkeypatch):
    calls = []

    def fake(full=False, progress=None):
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


def test_progress_bar_draws_and_ends_the_line():
    s = io.StringIO()
    bar = rep.ProgressBar("t", stream=s, width=10)
    bar(5, 10)
    bar(10, 10)
    text = s.getvalue()
    assert "[#####.....] 5/10" in text and "[##########] 10/10" in text and text.endswith("\n")


def test_module_runs_as_a_script():
    proc = subprocess.run([sys.executable, "-m", "mmcedu.reproduce", "--list"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_cached_tables_are_computed_once_per_source_and_protocol(tmp_path, monkeypatch):
    from mmcedu import experiments

    monkeypatch.setenv("MMCEDU_CACHE_DIR", str(tmp_path))
    calls = []

    @experiments.cached("fake")
    def fake(full=False, progress=None):
        calls.append(full)
        return Table([[len(calls)]], ["n"])

    assert fake().rows == [[1]] and fake().rows == [[1]] and calls == [False]
    assert fake(full=True).rows == [[2]] and calls == [False, True]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"fake-full-{experiments.source_hash()}.pkl", f"fake-quick-{experiments.source_hash()}.pkl"]
    assert fake.table_name == "fake" and fake.__doc__ is None


def test_source_hash_covers_the_package():
    from mmcedu import experiments

    h = experiments.source_hash()
    assert len(h) == 16 and int(h, 16) >= 0


def test_summary_rows_pair_paper_and_mmcedu_columns():
    from mmcedu.experiments.summary import summary_rows

    t1 = Table([["Iris", "UMC", 0.96, 0.95, "raw"], ["Moons", "UMC", "--", 1.0, "ours only"]],
               ["data set", "method", "paper", "mmcedu", "note"])
    t2 = Table([[3, 0.5]], ["n", "mmcedu"])  # no paper column: left out
    rows = summary_rows({"a": t1, "b": t2})
    assert rows == [["a", "Iris, method = UMC", 0.96, 0.95, "raw"]]


def test_summary_rows_follow_the_declared_column_pairs():
    from mmcedu.experiments.summary import summary_rows

    t = Table([["Digits", 5.6, 0.5, 35, 2.0, "n"]], ["data set", "paper", "mmcedu", "paper NC", "NC", "note"],
              pairs=[("paper", "mmcedu", "GMMC"), ("paper NC", "NC", "normalized cut")])
    assert summary_rows({"g": t}) == [["g", "Digits, GMMC", 5.6, 0.5, "n"],
                                      ["g", "Digits, normalized cut", 35, 2.0, "n"]]


def test_best_time_keeps_the_fastest_call_and_respects_the_budget():
    import time

    from mmcedu.experiments import best_time

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
