"""Reproductions of the source documents' tables, shared by the chapters and the command line.

Each method module here defines ``TABLES``: a dict from a table name (``"umc_rls_table1"``)
to a function ``f(full=False, progress=None)`` that runs the experiment and returns a
:class:`mmcedu.report.Table` whose columns put the paper's number beside ours. ``full=False``
is the quick protocol the chapter runs (seconds); ``full=True`` is the paper's protocol
(all restarts, full grids; minutes to hours). ``progress``, when given, is called as
``progress(done, total)`` while the experiment runs.

The functions are wrapped by :func:`cached`: a result is stored on disk under a key made of
the table's name, the protocol and a hash of the whole ``mmcedu`` source, so the reproduction
summary shows exactly what the chapters computed, and any change to the package recomputes.
The folder is ``$MMCEDU_CACHE_DIR`` (default ``~/.cache/mmcedu``).

``python -m mmcedu.reproduce --list`` lists every table; ``python -m mmcedu.reproduce NAME``
runs one.
"""

import functools
import hashlib
import os
import pickle
import time
from importlib import import_module as _import_module
from pathlib import Path

__all__ = ["all_tables", "best_time", "cached", "cache_dir", "source_hash"]

# Experiment modules, in the order of the book's chapters.
_MODULES = ["sdp_mmc", "gmmc", "umc_rls", "emmc", "svc", "ensemble", "comparison", "summary"]


def all_tables():
    """Every registered table: ``{name: function}``, in chapter order."""
    tables = {}
    for name in _MODULES:
        tables.update(_import_module(f".{name}", __name__).TABLES)
    return tables


@functools.lru_cache(maxsize=1)
def source_hash():
    """SHA-256 of every ``.py`` file of the installed ``mmcedu`` package (names and contents)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir():
    """Folder of cached experiment results: ``$MMCEDU_CACHE_DIR`` or ``~/.cache/mmcedu``."""
    return Path(os.environ.get("MMCEDU_CACHE_DIR", Path.home() / ".cache" / "mmcedu"))


def cached(name):
    """Decorator: store the table of experiment ``name`` on disk, keyed by protocol and source.

    The wrapped function is called as ``f(full=False, progress=None)``; a result computed
    before by the same ``mmcedu`` source and protocol is loaded instead of recomputed.
    """

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(full=False, progress=None):
            path = cache_dir() / f"{name}-{'full' if full else 'quick'}-{source_hash()}.pkl"
            if path.exists():
                with open(path, "rb") as fh:
                    return pickle.load(fh)
            table = fn(full=full, progress=progress)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(table, fh)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
            return table

        wrapper.table_name = name
        return wrapper

    return decorate


def best_time(fn, repeats, budget=float("inf")):
    """Best wall time of up to ``repeats`` calls of ``fn()`` and the last call's result.

    Calls stop early once they have taken more than ``budget`` seconds together, so that
    only small, fast (and noisy) calls are repeated.
    """
    best, spent, result = float("inf"), 0.0, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
        if spent > budget:
            break
    return best, result
