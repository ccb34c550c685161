"""Reproduce the source documents' tables from the command line.

Usage::

    python -m mmcedu.reproduce --list            # name every table
    python -m mmcedu.reproduce NAME [NAME ...]   # run tables (quick protocol)
    python -m mmcedu.reproduce all --full        # every table, the papers' full protocols

The quick protocol is exactly what the book's chapters run; ``--full`` runs every restart
and the full parameter grids of the papers (this can take hours).
"""

from __future__ import annotations

import argparse
import sys
import time

from .experiments import all_tables

__all__ = ["main", "ProgressBar"]


class ProgressBar:
    """A text progress bar on a stream, called as ``bar(done, total)``."""

    def __init__(self, label, stream=None, width=30):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.start = time.perf_counter()

    def __call__(self, done, total):
        total = max(int(total), 1)
        frac = min(max(done / total, 0.0), 1.0)
        filled = int(round(frac * self.width))
        elapsed = time.perf_counter() - self.start
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
            f"{done}/{total} {elapsed:6.1f} s"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m mmcedu.reproduce",
        description="Reproduce the tables of the source documents, paper beside mmcedu.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="table names, or 'all'")
    p.add_argument("--full", action="store_true", help="the papers' full protocols (slow)")
    p.add_argument("--list", action="store_true", help="list the table names and exit")
    return p


def main(argv=None, stream=None):
    """Entry point; returns the process exit code."""
    out = sys.stdout if stream is None else stream
    args = _parser().parse_args(argv)
    tables = all_tables()
    if args.list or not args.names:
        for name, fn in tables.items():
            doc = (fn.__doc__ or "").strip().splitlines()
            out.write(f"{name:32s} {doc[0] if doc else ''}\n")
        return 0
    names = list(tables) if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in tables]
    if unknown:
        out.write(f"unknown table(s): {', '.join(unknown)}; --list names them\n")
        return 2
    for name in names:
        t0 = time.perf_counter()
        table = tables[name](full=args.full, progress=ProgressBar(name))
        out.write(f"\n{table}\n({name}, {'full' if args.full else 'quick'} protocol, "
                  f"{time.perf_counter() - t0:.1f} s)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
