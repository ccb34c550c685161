"""The reproduction summary: every paper number beside ours, from every chapter's tables.

Each registered table (see :mod:`mmcedu.experiments`) has a ``paper`` and an ``mmcedu``
column; this module collects their rows into one table. It recomputes nothing that a chapter
already computed: the tables come through :func:`mmcedu.experiments.cached`.
"""

from __future__ import annotations

from ..report import Table
from . import all_tables

__all__ = ["summary_rows", "summary_table", "TABLES"]

_SKIP = {"comparison", "summary"}


def _blank(value):
    return value is None or (isinstance(value, str) and value.strip() in {"", "-", "--", "—", "n/a"})


def summary_rows(tables):
    """Rows ``[table, what, paper, mmcedu, note]`` from ``{name: Table}``.

    ``what`` joins the cells left of the ``paper`` column (the first as it is, the others as
    ``header = value``); rows whose paper cell is empty
    (our additions, with nothing in the paper to compare) are left out.
    """
    rows = []
    for name, table in tables.items():
        headers = table.headers
        if "paper" not in headers or "mmcedu" not in headers:
            continue
        i_paper, i_ours = headers.index("paper"), headers.index("mmcedu")
        i_note = headers.index("note") if "note" in headers else None
        for r in table.rows:
            if _blank(r[i_paper]):
                continue
            key = [(h, c) for h, c in zip(headers[:i_paper], r[:i_paper]) if not _blank(c)]
            what = ", ".join(str(c) if j == 0 else f"{h} = {c}" for j, (h, c) in enumerate(key))
            note = "" if i_note is None else r[i_note]
            title = table.title or name
            rows.append([name, what or title, r[i_paper], r[i_ours], note])
    return rows


def summary_table(full=False, progress=None):
    """Reproduction summary: every paper table cell that runs offline, paper vs mmcedu."""
    fns = {n: f for n, f in all_tables().items() if n not in _SKIP}
    tables = {}
    for i, (name, fn) in enumerate(fns.items()):
        tables[name] = fn(full=full)
        if progress is not None:
            progress(i + 1, len(fns))
    return Table(summary_rows(tables), ["table", "what", "paper", "mmcedu", "note"], floatfmt=".4g",
                 title="Paper vs mmcedu")


TABLES = {"summary": summary_table}
