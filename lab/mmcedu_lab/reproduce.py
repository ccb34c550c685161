"""Reproduce the source documents' tables from the command line.

Usage::

    python -m mmcedu_lab.reproduce --list                  # name every table
    python -m mmcedu_lab.reproduce NAME [NAME ...]         # run tables (quick protocol)
    python -m mmcedu_lab.reproduce all --full --n-jobs 2   # every table, full protocols, 2 jobs
    python -m mmcedu_lab.reproduce NAME --refresh          # recompute, overwrite the cached table
    python -m mmcedu_lab.reproduce --prune                 # drop cache entries no key can read
    python -m mmcedu_lab.reproduce --prune --max-size 2G --max-age 90
    python -m mmcedu_lab.reproduce --clear                 # remove every cached table

The quick protocol is exactly what the book's chapters run; ``--full`` runs every restart
and the full parameter grids of the papers (this can take hours). ``--n-jobs N`` runs N
independent fits at a time (default ``$MMCEDU_N_JOBS``, else 1; ``-1``: every core); the
tables do not depend on it. ``all`` stands for every table and may be combined with names;
a name given twice runs once. Tables are cached (:mod:`mmcedu_lab.cache`); the
cache folder is ``$MMCEDU_CACHE_DIR``, else ``$XDG_CACHE_HOME/mmcedu``, else
``~/.cache/mmcedu``. Errors in the command go to stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm.auto import tqdm

from mmcedu._config import parse_bytes

from . import all_tables
from .cache import cache_dir, clear, prune, ready_cache_dir
from .parallel import N_JOBS_ENV, resolve_n_jobs

__all__ = ["main"]

_PROG = "python -m mmcedu_lab.reproduce"


class _Bar:
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr (from its first call)."""

    def __init__(self, label):
        self.label = label
        self.bar = None

    def __call__(self, done, total):
        if self.bar is None:
            self.bar = tqdm(desc=self.label, total=total, unit="fit", file=sys.stderr,
                            dynamic_ncols=True)
        if self.bar.total != total:
            self.bar.reset(total=total)
        self.bar.update(done - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _parser():
    p = argparse.ArgumentParser(
        prog=_PROG,
        description="Reproduce the tables of the source documents, paper beside mmcedu.",
        epilog="Without arguments, lists the tables.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="table names, or 'all'")
    p.add_argument("--list", action="store_true", help="list the table names and exit")
    p.add_argument("--full", action="store_true", help="the papers' full protocols (slow)")
    p.add_argument("--n-jobs", type=int, default=None, metavar="N",
                   help=f"independent fits run at a time (default ${N_JOBS_ENV}, else 1; "
                        "-1: every core); the tables do not depend on it")
    p.add_argument("--refresh", action="store_true",
                   help="recompute the named tables and overwrite their cached results")
    p.add_argument("--prune", action="store_true",
                   help="remove the cache entries that no current table can read, and exit")
    p.add_argument("--clear", action="store_true",
                   help="remove every cached table, and exit")
    p.add_argument("--max-size", metavar="SIZE", default=None,
                   help="with --prune: then keep at most SIZE bytes (e.g. 2G), least recently "
                        "used entries first")
    p.add_argument("--max-age", metavar="DAYS", type=float, default=None,
                   help="with --prune: then remove entries not used for DAYS days")
    return p


def _error(parser, message):
    """Usage and message on stderr; exit code 2 (as argparse does)."""
    parser.print_usage(sys.stderr)
    sys.stderr.write(f"{parser.prog}: error: {message}\n")
    return 2


def _expand(names, tables):
    """``all`` expanded, duplicates dropped (first occurrence kept); unknown names listed."""
    out = []
    for name in names:
        for n in (tables if name == "all" else [name]):
            if n not in out:
                out.append(n)
    return out, [n for n in out if n not in tables]


def _list(tables, out):
    for name, fn in tables.items():
        doc = (fn.__doc__ or "").strip().splitlines()
        out.write(f"{name:32s} {doc[0] if doc else ''}\n")


def _prune(args, out):
    max_bytes = None if args.max_size is None else parse_bytes(args.max_size)
    if args.max_age is not None and not args.max_age >= 0:
        raise ValueError(f"--max-age must be a non-negative number of days; got {args.max_age}.")
    res = prune(max_bytes=max_bytes, max_age=args.max_age)
    _report_removal(res, out)


def _report_removal(res, out):
    out.write(f"{cache_dir()}: removed {res['removed']} entr{'y' if res['removed'] == 1 else 'ies'} "
              f"({res['freed'] / 2**20:.1f} MiB), kept {res['kept']}\n")


def main(argv=None, stream=None):
    """Entry point; returns the process exit code (2 for an error in the command)."""
    out = sys.stdout if stream is None else stream
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message on stderr
        return exc.code
    pruning = args.max_size is not None or args.max_age is not None
    if pruning and not args.prune:
        return _error(parser, "--max-size and --max-age go with --prune")
    if args.clear:
        if args.prune or pruning or args.names or args.list or args.full or args.refresh \
                or args.n_jobs is not None:
            return _error(parser, "--clear takes no table names and no other option")
        try:
            _report_removal(clear(), out)
        except (ValueError, OSError) as exc:
            return _error(parser, str(exc))
        return 0
    if args.prune:
        if args.names or args.list or args.full or args.refresh or args.n_jobs is not None:
            return _error(parser, "--prune takes no table names and no other option than "
                                  "--max-size and --max-age")
        try:
            _prune(args, out)
        except (ValueError, OSError) as exc:
            return _error(parser, str(exc))
        return 0
    if args.list:
        if args.names or args.full or args.refresh or args.n_jobs is not None:
            return _error(parser, "--list takes no table names and no other option")
        _list(all_tables(), out)
        return 0
    if not args.names:
        given = [o for o, v in (("--full", args.full), ("--refresh", args.refresh),
                                ("--n-jobs", args.n_jobs is not None)) if v]
        if given:
            return _error(parser, f"{', '.join(given)} needs table names (or 'all'); "
                                  "--list names the tables")
        _list(all_tables(), out)
        return 0
    tables = all_tables()
    names, unknown = _expand(args.names, tables)
    if unknown:
        return _error(parser, f"unknown table(s): {', '.join(unknown)}; "
                              f"'{_PROG} --list' names them")
    try:
        n_jobs = resolve_n_jobs(args.n_jobs)
        ready_cache_dir()  # a bad cache folder fails before anything is computed
    except (ValueError, OSError) as exc:
        return _error(parser, str(exc))
    protocol = "full" if args.full else "quick"
    for name in names:
        t0 = time.perf_counter()
        bar = _Bar(name)
        try:
            table = tables[name](full=args.full, progress=bar, n_jobs=n_jobs, refresh=args.refresh)
        finally:
            bar.close()
        source = ", read from the cache" if getattr(table, "from_cache", False) else ""
        out.write(f"\n{table}\n({name}, {protocol} protocol, "
                  f"{time.perf_counter() - t0:.1f} s{source})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
