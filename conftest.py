"""pytest configuration shared by tests/ and the nbval run over book/chapters/.

Experiment results are cached on disk (mmcedu_lab.cache). A test run starts from an
empty cache folder of its own, so that every chapter really computes its tables; the chapters
that run later in the same session (the reproduction summary, the book build) then read what
they computed. The notebook kernels inherit the variable. A MMCEDU_CACHE_DIR set (and not
empty) before the run is respected.
"""

import os
import tempfile

collect_ignore = ["book/_ext", "book/_build", "_build"]  # the Sphinx extension and build output


def pytest_configure(config):
    # One BLAS thread per process unless the caller chose otherwise: the suite runs notebook
    # kernels and joblib workers side by side, and on a shared 2-core machine threaded BLAS
    # oversubscribes the cores (a 200 x 200 eigh took 1 s with default threads under load, 10 ms
    # with one). Set before the kernels start, which inherit it.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if not os.environ.get("MMCEDU_CACHE_DIR", "").strip():
        os.environ["MMCEDU_CACHE_DIR"] = tempfile.mkdtemp(prefix="mmcedu-cache-")


# --- The notebooks run once per test run, under nbval ----------------------------------------
# ``python -m pytest`` collects book/ (testpaths) with ``--nbval-lax``: every code cell of every
# page is a test item, and a failing cell (a verification assert included) fails the run with
# the notebook and cell named. The outputs nbval received are kept here, per notebook, so that
# tests/test_book.py builds the site from these executions instead of executing the notebooks
# a second time.
import pytest  # noqa: E402

EXECUTED = {}  # resolved notebook path -> {"outputs": {cell id: [outputs]}, "failed": [...], "seconds": s}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when != "call" or not hasattr(item, "cell") or not hasattr(item, "test_outputs"):
        return
    report = outcome.get_result()
    record = EXECUTED.setdefault(str(item.path.resolve()), {"outputs": {}, "failed": [], "seconds": 0.0})
    record["outputs"][item.cell.get("id", item.cell_num)] = list(item.test_outputs or [])
    record["seconds"] += call.duration
    if report.failed:
        record["failed"].append(item.cell_num)
    item.config.mmcedu_executed = EXECUTED
