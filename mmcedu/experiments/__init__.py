"""Reproductions of the source documents' tables, shared by the chapters and the command line.

Each method module here defines ``TABLES``: a dict from a table name (``"umc_rls_table1"``)
to a function ``f(full=False, progress=None)`` that runs the experiment and returns a
:class:`mmcedu.report.Table` whose columns put the paper's number beside ours. ``full=False``
is the quick protocol the chapter runs (seconds); ``full=True`` is the paper's protocol
(all restarts, full grids; minutes to hours). ``progress``, when given, is called as
``progress(done, total)`` while the experiment runs.

``python -m mmcedu.reproduce --list`` lists every table; ``python -m mmcedu.reproduce NAME``
runs one.
"""

from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec

# Experiment modules, in the order of the book's chapters.
_MODULES = ["sdp_mmc", "gmmc", "umc_rls", "emmc", "svc", "ensemble"]


def all_tables():
    """Every registered table: ``{name: function}``, in chapter order."""
    tables = {}
    for name in _MODULES:
        if _find_spec(f"{__name__}.{name}") is not None:
            tables.update(_import_module(f".{name}", __name__).TABLES)
    return tables
