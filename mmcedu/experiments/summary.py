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

    Each table names the columns to compare in ``Table.pairs`` (default: ``paper`` against
    ``mmcedu``). ``what`` joins the cells left of the first paper column (a first cell that is text as
    it is, the others as ``header = value``) and the pair's label; rows whose paper cell is empty
    (our additions, with nothing in the paper to compare) are left out.
    """
    rows = []
    for name, table in tables.items():
        headers = table.headers
        pairs = [p for p in getattr(table, "pairs", [("paper", "mmcedu", "")])
                 if p[0] in headers and p[1] in headers]
        if not pairs:
            continue
        i_key = min(headers.index(p[0]) for p in pairs)
        i_note = headers.index("note") if "note" in headers else None
        for r in table.rows:
            key = [(h, c) for h, c in zip(headers[:i_key], r[:i_key]) if not _blank(c)]
            what = ", ".join(c if j == 0 and isinstance(c, str) else f"{h} = {c}"
                             for j, (h, c) in enumerate(key))
            note = "" if i_note is None else r[i_note]
            for paper_col, ours_col, label in pairs:
                paper, ours = r[headers.index(paper_col)], r[headers.index(ours_col)]
                if _blank(paper):
                    continue
                full_what = ", ".join(x for x in (what or table.title or name, label) if x)
                rows.append([name, full_what, paper, ours, note])
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
