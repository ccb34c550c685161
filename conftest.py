"""pytest configuration shared by tests/ and the nbval run over book/chapters/.

Experiment results are cached on disk (mmcedu.experiments.cached). A test run starts from an
empty cache so that every chapter really computes its tables; the chapters that run later in
the same session (the reproduction summary, the book build) then read what they computed.
"""

import os
import tempfile


def pytest_configure(config):
    if "MMCEDU_CACHE_DIR" not in os.environ:
        os.environ["MMCEDU_CACHE_DIR"] = tempfile.mkdtemp(prefix="mmcedu-cache-")
