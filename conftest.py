"""pytest configuration shared by tests/ and the nbval run over book/chapters/.

Experiment results are cached on disk (mmcedu_lab.cache). A test run starts from an
empty cache folder of its own, so that every chapter really computes its tables; the chapters
that run later in the same session (the reproduction summary, the book build) then read what
they computed. The notebook kernels inherit the variable. A MMCEDU_CACHE_DIR set (and not
empty) before the run is respected.
"""

import os
import tempfile


def pytest_configure(config):
    # One BLAS thread per process unless the caller chose otherwise: the suite runs notebook
    # kernels and joblib workers side by side, and on a shared 2-core machine threaded BLAS
    # oversubscribes the cores (a 200 x 200 eigh took 1 s with default threads under load, 10 ms
    # with one). Set before the kernels start, which inherit it.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if not os.environ.get("MMCEDU_CACHE_DIR", "").strip():
        os.environ["MMCEDU_CACHE_DIR"] = tempfile.mkdtemp(prefix="mmcedu-cache-")
