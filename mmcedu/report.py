"""Small helpers for the book: tables that render as Markdown in notebooks and as text in a terminal."""

from __future__ import annotations

import numbers

__all__ = ["Table"]


def _fmt(value, floatfmt):
    if value is None:
        return ""
    if isinstance(value, numbers.Integral) or isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Real):
        return format(float(value), floatfmt)
    return str(value)


class Table:
    """A list of rows with column headers.

    Displays as a Markdown table in Jupyter (``_repr_markdown_``) and as aligned text with
    ``print``. Cells that are real numbers are formatted with ``floatfmt``.

    Parameters
    ----------
    rows : list of sequences
    headers : sequence of str
    floatfmt : str, default=".3f"
    title : str, default=None
    formats : dict, default=None
        ``{header: format}`` for columns that need another format than ``floatfmt``.
    pairs : list of (str, str, str), default=None
        ``(paper column, our column, label)`` triples naming which columns the
        reproduction summary compares (:mod:`mmcedu.experiments.summary`); ``None`` means
        ``[("paper", "mmcedu", "")]``.
    """

    def __init__(self, rows, headers, *, floatfmt=".3f", title=None, formats=None, pairs=None):
        self.rows = [list(r) for r in rows]
        self.headers = list(headers)
        self.floatfmt = floatfmt
        self.title = title
        self.formats = dict(formats or {})
        self.pairs = [("paper", "mmcedu", "")] if pairs is None else [tuple(p) for p in pairs]
        unknown = set(self.formats) - set(self.headers)
        if unknown:
            raise ValueError(f"formats names columns that do not exist: {sorted(unknown)}.")
        for r in self.rows:
            if len(r) != len(self.headers):
                raise ValueError(f"Row {r} has {len(r)} cells for {len(self.headers)} headers.")

    def _cells(self):
        fmts = [self.formats.get(h, self.floatfmt) for h in self.headers]
        return [[_fmt(v, f) for v, f in zip(r, fmts)] for r in self.rows]

    def column(self, name):
        """The values of one column, unformatted."""
        j = self.headers.index(name)
        return [r[j] for r in self.rows]

    def _repr_markdown_(self):
        lines = []
        if self.title:
            lines += [f"**{self.title}**", ""]
        esc = lambda cell: cell.replace("|", "\\|")  # a literal | would end the cell
        lines.append("| " + " | ".join(map(esc, self.headers)) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(map(esc, r)) + " |" for r in self._cells()]
        return "\n".join(lines)

    def __str__(self):
        cells = [self.headers] + self._cells()
        widths = [max(len(r[j]) for r in cells) for j in range(len(self.headers))]
        out = [self.title] if self.title else []
        for i, r in enumerate(cells):
            out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
            if i == 0:
                out.append("  ".join("-" * w for w in widths))
        return "\n".join(out)

    __repr__ = __str__
