"""The book's laboratory: reproductions of the source documents' tables, shared by the chapters
and the command line. It lives in the repository beside the book (``lab/``) and is not part of
the ``mmcedu`` package: it uses the package, the package never uses it. The README's two
commands install it (``pip install -e ./lab``).

Layout:

* :mod:`mmcedu_lab.registry`: the data sets (one loader) and the papers' numbers.
* :mod:`mmcedu_lab.measure`: timing, peak memory and scaling studies.
* :mod:`mmcedu_lab.parallel` and :mod:`mmcedu_lab.cache`: running the independent fits of a
  protocol, and storing its table (below).
* one module per method (``sdp_mmc``, ``gmmc``, ``umc_rls``, ``emmc``,
  ``support_vector_clustering``, ``robust_ensemble``), :mod:`mmcedu_lab.comparison` (every
  method under one protocol) and :mod:`mmcedu_lab.summary` (every paper number beside ours).
* :mod:`mmcedu_lab.reproduce`: the command line, ``python -m mmcedu_lab.reproduce``.

Each of those modules defines ``TABLES``: a dict from a table name (``"umc_rls_table1"``)
to the function of the same name, ``umc_rls_table1(full=False, progress=None, n_jobs=None,
refresh=False)``, which runs the experiment and returns a
:class:`~mmcedu_lab.registry.PaperTable` whose columns put the paper's number beside
ours. ``full=False`` is the quick protocol the chapter runs (seconds); ``full=True`` is the
paper's protocol (all restarts, full grids; minutes to hours). ``progress``, when given, is
called as ``progress(done, total)`` while the experiment runs.

Two layers serve every table:

* :mod:`~mmcedu_lab.parallel`: the independent fits of a protocol go through
  :func:`~mmcedu_lab.parallel.map_tasks` (joblib), ``n_jobs`` of them at a time
  (``n_jobs=None``: ``$MMCEDU_N_JOBS``, else one), with the same results for any ``n_jobs``;
  a Dask cluster runs them through ``joblib.parallel_config(backend="dask")``. Studies of
  time (the ``scaling`` functions, :func:`~mmcedu_lab.emmc.timing_study`,
  :func:`~mmcedu_lab.support_vector_clustering.labeling_times` and the
  ``svc_complexity`` table) stay serial: concurrent jobs would distort what they measure.
* :mod:`~mmcedu_lab.cache`: the table is stored with :class:`joblib.Memory`, keyed on
  the code that computes it (its syntax tree, docstrings and comments left out), the
  versions of the numerical libraries and the protocol; measured times are never read back.
  ``refresh=True`` recomputes. The folder is ``$MMCEDU_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/mmcedu``, else ``~/.cache/mmcedu``.

``python -m mmcedu_lab.reproduce --list`` lists every table; ``python -m mmcedu_lab.reproduce NAME``
runs one (``--full``, ``--n-jobs N``, ``--refresh``; ``--prune`` cleans the cache).
"""

from importlib import import_module as _import_module

from .cache import cache_dir, cached
from .parallel import map_tasks

__all__ = ["all_tables", "cached", "cache_dir", "map_tasks"]

# Experiment modules, in the order of the book's chapters.
_MODULES = [
    "sdp_mmc", "gmmc", "umc_rls", "emmc", "support_vector_clustering", "robust_ensemble",
    "comparison", "summary",
]


def all_tables():
    """Every registered table: ``{name: function}``, in chapter order."""
    tables = {}
    for name in _MODULES:
        tables.update(_import_module(f".{name}", __name__).TABLES)
    return tables
