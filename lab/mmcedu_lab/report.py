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


def _escape(cell):
    """A Markdown table cell: a literal | would end the cell."""
    return cell.replace("|", "\\|")


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

    Examples
    --------
    >>> from mmcedu_lab.report import Table
    >>> print(Table([["a", 1.23456]], ["name", "x"], floatfmt=".2f"))
    name  x
    ----  ----
    a     1.23
    """

    def __init__(self, rows, headers, *, floatfmt=".3f", title=None, formats=None):
        if isinstance(headers, (str, bytes)):
            raise ValueError(f"headers must be a sequence of column names, not the string {headers!r}.")
        self.headers = [str(h) for h in headers]
        duplicates = sorted({h for h in self.headers if self.headers.count(h) > 1})
        if duplicates:
            raise ValueError(f"Column names must be unique; repeated: {duplicates}.")
        if isinstance(rows, (str, bytes)):
            raise ValueError("rows must be a sequence of rows (sequences of cells), not a string.")
        self.rows = []
        for r in rows:
            if isinstance(r, (str, bytes)) or not hasattr(r, "__len__"):
                raise ValueError(f"Each row must be a sequence of cells; got {r!r}.")
            self.rows.append(list(r))
        self.floatfmt = floatfmt
        self.title = title
        self.formats = dict(formats or {})
        unknown = set(self.formats) - set(self.headers)
        if unknown:
            raise ValueError(f"formats names columns that do not exist: {sorted(unknown)}.")
        for name, fmt in [("floatfmt", floatfmt)] + [(f"formats[{k!r}]", v) for k, v in self.formats.items()]:
            try:
                format(1.5, fmt)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a format specification for numbers such as "
                                 f"'.3f'; got {fmt!r}.") from None
        for r in self.rows:
            if len(r) != len(self.headers):
                raise ValueError(f"Row {r} has {len(r)} cells for {len(self.headers)} headers.")

    def _cells(self):
        fmts = [self.formats.get(h, self.floatfmt) for h in self.headers]
        return [[_fmt(v, f) for v, f in zip(r, fmts)] for r in self.rows]

    def column(self, name):
        """The values of one column, unformatted."""
        if name not in self.headers:
            raise KeyError(f"No column {name!r}; the columns are {self.headers}.")
        j = self.headers.index(name)
        return [r[j] for r in self.rows]

    def _repr_markdown_(self):
        lines = []
        if self.title:
            lines += [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(map(_escape, self.headers)) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(map(_escape, r)) + " |" for r in self._cells()]
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
