"""The experiment cache: a table computed once is read back until the code or the libraries change.

A full protocol can take hours, and the reproduction summary shows the tables the chapters
computed, so every registered table (see :mod:`mmcedu_lab`) goes through
:func:`cached`, which stores its result with :class:`joblib.Memory`.

The key
    A stored table is read back only under the same key (:func:`table_key`):

    * the table's name and protocol (``"quick"`` or ``"full"``);
    * ``code``: a SHA-256 of the code that computes it: the abstract syntax tree of the module
      that defines the table function and of every ``mmcedu`` module it imports,
      transitively (:func:`code_digest`). Docstrings and comments are not in a syntax tree
      (string statements are dropped), so editing them keeps the results; any change to
      what runs computes the table again. This module, which only stores and loads, is not
      part of the key;
    * ``versions``: the versions of the numerical libraries the results depend on
      (:data:`DEPENDENCIES`: NumPy, SciPy, scikit-learn, cvxpy, SCS, Clarabel, joblib), so an
      upgrade recomputes;
    * :data:`FORMAT`, the layout of a stored entry.

    ``n_jobs`` is not part of the key: results do not depend on it
    (:mod:`mmcedu_lab.parallel`).

Timings are never read from the cache
    Measured times belong to the run that measured them. A table declares its measured
    columns (``cached(name, timings=[...])``): they are blanked (``None``) in what is stored,
    so a table read from the cache shows no times, says so in its title, and has
    ``times_measured = False``; a freshly computed one has its times and
    ``times_measured = True``. A table made only of timings (``timings="all"``) is not
    cached at all: it is measured at every call.

Where
    ``$MMCEDU_CACHE_DIR``, else ``$XDG_CACHE_HOME/mmcedu``, else ``~/.cache/mmcedu``
    (:func:`cache_dir`; an empty variable counts as unset, a relative ``MMCEDU_CACHE_DIR`` is
    refused and a relative ``XDG_CACHE_HOME`` is ignored, as the XDG specification says).

Robustness
    An entry that cannot be read (truncated, empty, not a pickle) or that holds something
    else than this table is recomputed with a :class:`CacheWarning`, never returned; a cache
    folder that is a file raises :class:`NotADirectoryError` before anything is computed; a
    write interrupted (Ctrl-C) leaves no temporary file behind.

Maintenance
    ``python -m mmcedu_lab.reproduce NAME --refresh`` recomputes and overwrites;
    ``python -m mmcedu_lab.reproduce --prune`` removes every entry that no current key can read
    (:func:`prune`), and ``--max-size`` / ``--max-age`` evict the least recently used entries
    beyond a size or an age (:meth:`joblib.Memory.reduce_size`);
    ``python -m mmcedu_lab.reproduce --clear`` removes every stored table (:func:`clear`).
"""

from __future__ import annotations

import ast
import copy
import datetime
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

from joblib import Memory

from mmcedu_lab.report import Table

__all__ = [
    "CACHE_ENV",
    "DEPENDENCIES",
    "FORMAT",
    "CacheWarning",
    "cache_dir",
    "ready_cache_dir",
    "code_digest",
    "source_digest",
    "dependency_versions",
    "table_key",
    "cached",
    "cache_entries",
    "prune",
    "clear",
]

#: The environment variable naming the cache folder.
CACHE_ENV = "MMCEDU_CACHE_DIR"
#: Distributions whose versions are part of every key.
DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "cvxpy", "scs", "clarabel", "joblib")
#: Layout of a stored entry; part of every key (raise it when the layout changes).
FORMAT = 1
#: Modules that store and load but compute nothing: not part of the code digest.
_NOT_COMPUTING = {__name__}
# the packages whose code keys a table: the library and this laboratory
_TRACKED = ("mmcedu", "mmcedu_lab")
#: The fields of a key, in the order of the arguments of ``_compute_table``.
_KEY_FIELDS = ("name", "protocol", "code", "versions", "layout")
#: The raw (undecorated) table functions, by table name.
_RAW = {}
#: Freshly computed tables (with their times) of this process, handed from the joblib call
#: to the caller.
_FRESH = {}


class CacheWarning(UserWarning):
    """A cache entry could not be used (unreadable, foreign): the table is recomputed."""


# ---------------------------------------------------------------------------------------- where
def cache_dir():
    """The cache folder (an absolute path; not created here).

    ``$MMCEDU_CACHE_DIR`` if set and not empty (``~`` is expanded; it must be absolute), else
    ``$XDG_CACHE_HOME/mmcedu`` if that is set to an absolute path, else ``~/.cache/mmcedu``.

    Raises
    ------
    ValueError
        When ``MMCEDU_CACHE_DIR`` is a relative path (it would name a different folder in
        every working directory: notebooks run in ``book/chapters``, the command line
        anywhere).
    """
    raw = os.environ.get(CACHE_ENV, "").strip()
    if raw:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise ValueError(
                f"{CACHE_ENV}={raw!r} is a relative path, which would name another folder in "
                f"every working directory; give an absolute path, e.g. {CACHE_ENV}="
                f"{Path(raw).resolve()}."
            )
        return path
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).expanduser().is_absolute():
        return Path(xdg).expanduser() / "mmcedu"
    return Path.home() / ".cache" / "mmcedu"


def ready_cache_dir():
    """:func:`cache_dir`, created if needed; a clear error if it cannot be a folder."""
    path = cache_dir()
    origin = (
        f"(from {CACHE_ENV})" if os.environ.get(CACHE_ENV, "").strip() else
        f"(the default; set {CACHE_ENV} to use another folder)"
    )
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(
            f"The cache folder {path} {origin} is a file, not a folder. Remove it, or set "
            f"{CACHE_ENV} to a folder."
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        (path / "joblib").mkdir(exist_ok=True)
    except OSError as exc:
        raise NotADirectoryError(
            f"Cannot create the cache folder {path} {origin}: {exc}. Set {CACHE_ENV} to a "
            "folder you can write to."
        ) from exc
    if not (path / "joblib").is_dir():
        raise NotADirectoryError(f"{path / 'joblib'} in the cache folder {path} is a file; remove it.")
    return path


# ------------------------------------------------------------------------------------ the key
class _StripDocstrings(ast.NodeTransformer):
    """Drop string statements (docstrings and bare strings): they do not change what runs."""

    def generic_visit(self, node):
        super().generic_visit(node)
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and all(isinstance(s, ast.stmt) for s in body):
            kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                            and isinstance(s.value.value, str))]
            node.body = kept or [ast.Pass()]
        return node


def code_digest(source):
    """SHA-256 (hex) of the syntax tree of Python ``source`` without docstrings.

    Comments, blank lines, formatting and docstrings do not change it; any change to the code
    does.

    Examples
    --------
    >>> a = code_digest('def f(x):\\n    "Doc."\\n    return x + 1  # one\\n')
    >>> a == code_digest("def f(x):\\n    return (x +\\n            1)\\n")
    True
    >>> a == code_digest("def f(x):\\n    return x + 2\\n")
    False
    """
    tree = _StripDocstrings().visit(ast.parse(source))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


@functools.lru_cache(maxsize=256)
def _file_digest(path, mtime_ns, size):
    source = Path(path).read_text(encoding="utf-8")
    return code_digest(source), _imported_names(source)


def _imported_names(source):
    """``(level, module, names)`` of every import statement of ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(0, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or "", tuple(a.name for a in node.names)))
    return tuple(out)


def _module_file(name):
    """``(path of the source file, is a package)`` of module ``name``; ``(None, False)`` if none."""
    mod = sys.modules.get(name)
    if mod is not None and getattr(mod, "__file__", None):
        path = mod.__file__
        is_package = hasattr(mod, "__path__")
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            spec = None
        if spec is None or not spec.origin:
            return None, False
        path, is_package = spec.origin, spec.submodule_search_locations is not None
    return (path, is_package) if str(path).endswith(".py") else (None, False)


def _is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def _mmcedu_imports(name, is_package, imports):
    """The ``mmcedu`` and ``mmcedu_lab`` modules that module ``name`` imports."""
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for level, module, names in imports:
        base = importlib.util.resolve_name("." * level + module, package) if level else module
        if base.split(".")[0] not in _TRACKED:
            continue
        if not names:  # import mmcedu.a.b: the module and its parents
            parts = base.split(".")
            out.update(".".join(parts[: i + 1]) for i in range(1, len(parts)))
            continue
        for n in names:
            out.add(f"{base}.{n}" if n != "*" and _is_module(f"{base}.{n}") else base)
    return out


def source_digest(module):
    """SHA-256 (hex) of the code of ``module`` and of the ``mmcedu`` modules it imports, transitively.

    Each module contributes its name and :func:`code_digest`; this module (the cache, which
    computes nothing) does not. ``module`` is a module name (``"mmcedu_lab.gmmc"``).
    """
    seen, todo, parts = set(), [module], []
    while todo:
        name = todo.pop()
        if name in seen or name in _NOT_COMPUTING:
            continue
        seen.add(name)
        path, is_package = _module_file(name)
        if path is None:
            parts.append(f"{name}:unavailable")
            continue
        st = os.stat(path)
        digest, imports = _file_digest(path, st.st_mtime_ns, st.st_size)
        parts.append(f"{name}:{digest}")
        todo.extend(sorted(_mmcedu_imports(name, is_package, imports) - seen))
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()


def dependency_versions():
    """``((distribution, version), ...)`` of :data:`DEPENDENCIES` (``None``: not installed)."""
    out = []
    for dist in DEPENDENCIES:
        try:
            out.append((dist, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            out.append((dist, None))
    return tuple(out)


def table_key(name, full=False, module=None):
    """The key a table is stored under: a dict of ``name``, ``protocol``, ``code``, ``versions``, ``layout``.

    ``module`` is the module of the table function (default: the one registered under
    ``name`` by :func:`cached`).
    """
    if module is None:
        if name not in _RAW:
            from . import all_tables

            all_tables()  # imports every experiment module, registering their tables
        if name not in _RAW:
            raise ValueError(f"No cached table is registered under the name {name!r}.")
        module = _RAW[name].__module__
    return {
        "name": name,
        "protocol": "full" if full else "quick",
        "code": source_digest(module),
        "versions": dependency_versions(),
        "layout": FORMAT,
    }


# ------------------------------------------------------------------------ storing and loading
def _blank(table, columns):
    """A copy of ``table`` whose ``columns`` are ``None``, marked as read from the cache."""
    missing = [c for c in columns if c not in table.headers]
    if missing:
        raise ValueError(f"The table declares time columns {missing} it does not have: {table.headers}.")
    out = copy.copy(table)
    idx = [out.headers.index(c) for c in columns]
    out.rows = [[None if j in idx else v for j, v in enumerate(r)] for r in table.rows]
    out.times_measured, out.from_cache = False, True
    out.title = (f"{table.title}; " if table.title else "") + (
        "times are not cached: recompute with `python -m mmcedu_lab.reproduce NAME --refresh` "
        "to measure them"
    )
    return out


# The function whose results joblib.Memory stores. Its arguments (but progress and n_jobs)
# are the key; it returns the entry to store, {"table": name, "protocol": protocol, "value":
# Table}, with the measured columns blanked, and leaves the table with its times in _FRESH.
# joblib forgets every stored entry when the text of this function changes: keep it short,
# without a docstring, and edit it only when the stored layout changes (then raise FORMAT).
def _compute_table(name, protocol, code, versions, layout, progress=None, n_jobs=None):
    fn = _RAW[name]
    table = fn(full=protocol == "full", progress=progress, n_jobs=n_jobs)
    if not isinstance(table, Table):
        raise TypeError(f"The table function {name!r} returned {type(table).__name__}, not a Table.")
    timings = fn.cache_timings
    table.times_measured, table.from_cache = True, False
    _FRESH[(name, protocol)] = table
    stored = _blank(table, timings) if timings else table
    return {"table": name, "protocol": protocol, "value": stored}


def _memory(location):
    return Memory(str(location), verbose=0).cache(_compute_table, ignore=["progress", "n_jobs"])


def _remove_partial_writes(location):
    """Delete joblib's temporary files left by this process (an interrupted write)."""
    pattern = re.compile(rf"\.[0-9a-f]{{32}}-{os.getpid()}-\d+$")
    for dirpath, _, filenames in os.walk(Path(location) / "joblib"):
        for f in filenames:
            if pattern.search(f):
                try:
                    os.remove(os.path.join(dirpath, f))
                except OSError:
                    pass


def _valid_entry(entry, name, protocol):
    return (isinstance(entry, dict) and entry.get("table") == name
            and entry.get("protocol") == protocol and isinstance(entry.get("value"), Table))


def _load_or_compute(name, full, progress, n_jobs, refresh):
    location = ready_cache_dir()  # before computing: a bad folder fails first
    key = table_key(name, full)
    args = tuple(key[k] for k in _KEY_FIELDS)
    func = _memory(location)
    if not refresh and func.check_call_in_cache(*args):
        try:
            entry = func.call_and_shelve(*args).get()
        except Exception as exc:  # noqa: BLE001 - any unreadable entry is recomputed
            warnings.warn(
                f"The cached table {name!r} ({key['protocol']} protocol) in {location} cannot "
                f"be read ({type(exc).__name__}: {exc}); computing it again.",
                CacheWarning, stacklevel=3,
            )
        else:
            if _valid_entry(entry, name, key["protocol"]):
                entry["value"].from_cache = True
                return entry["value"]
            warnings.warn(
                f"The cache entry for table {name!r} ({key['protocol']} protocol) in {location} "
                f"holds {type(entry).__name__}, not this table; computing it again.",
                CacheWarning, stacklevel=3,
            )
    try:
        func.call(*args, progress=progress, n_jobs=n_jobs)
        return _FRESH.pop((name, key["protocol"]))
    finally:
        _FRESH.pop((name, key["protocol"]), None)
        _remove_partial_writes(location)  # of an interrupted or failed write


def cached(name, *, timings=()):
    """Decorator: store the table of experiment ``name`` in the cache (see the module docstring).

    The decorated function is called as ``f(full=False, progress=None, n_jobs=None)`` and
    returns a :class:`~mmcedu_lab.report.Table`; the wrapper is called as
    ``f(full=False, progress=None, n_jobs=None, refresh=False)``: ``refresh=True`` computes
    the table again and overwrites the stored one.

    Parameters
    ----------
    name : str
        The table's name (the key of the registry and of the cache).
    timings : sequence of str or "all", default=()
        The columns that hold measured times: not stored (see the module docstring).
        ``"all"``: the table is a measurement, never cached.
    """

    def decorate(fn):
        if name in _RAW and _RAW[name].__module__ != fn.__module__:
            raise ValueError(f"Two cached tables are named {name!r}.")
        fn.cache_timings = "all" if timings == "all" else tuple(timings)
        _RAW[name] = fn

        @functools.wraps(fn)
        def wrapper(full=False, progress=None, n_jobs=None, refresh=False):
            if fn.cache_timings == "all":
                table = fn(full=full, progress=progress, n_jobs=n_jobs)
                table.times_measured, table.from_cache = True, False
                return table
            return _load_or_compute(name, bool(full), progress, n_jobs, refresh)

        wrapper.table_name = name
        wrapper.cache_timings = fn.cache_timings
        return wrapper

    return decorate


# ---------------------------------------------------------------------------------- pruning
def cache_entries(location=None):
    """Every stored entry: dicts ``path``, ``input`` (the key as stored), ``bytes``, ``last_access``."""
    location = Path(location) if location is not None else cache_dir()
    out = []
    if not (location / "joblib").is_dir():
        return out
    func = _memory(location)
    own = Path(func.store_backend.location, *func.func_id.split("/"))
    for item in func.store_backend.get_items():
        if Path(item.path).parent != own:
            continue
        meta = {}
        try:
            meta = json.loads((Path(item.path) / "metadata.json").read_text())
        except (OSError, ValueError):
            pass
        out.append({"path": Path(item.path), "input": meta.get("input_args"), "bytes": item.size,
                    "last_access": item.last_access})
    return out


def _current_inputs(tables):
    """The stored form (joblib's ``input_args``) of every current key of ``tables``."""
    out = []
    for name in tables:
        for full in (False, True):
            key = table_key(name, full)
            out.append({k: repr(key[k]) for k in _KEY_FIELDS})
    return out


#: Files of the earlier cache layout (``<name>-<protocol>-<hash>.pkl`` and their ``.tmp`` files).
_OLD_LAYOUT = re.compile(r"^[A-Za-z0-9_]+-(quick|full)-[0-9a-f]{16}(\.\d+\.tmp|\.pkl)$")


def prune(*, max_bytes=None, max_age=None, location=None, tables=None):
    """Remove cache entries that no current key can read, then enforce a size / an age.

    Parameters
    ----------
    max_bytes : int or str, default=None
        Keep at most this many bytes (``"2G"`` and the like are accepted), dropping the least
        recently used entries first (:meth:`joblib.Memory.reduce_size`).
    max_age : datetime.timedelta or float, default=None
        Drop entries not used for longer than this (a float is a number of days).
    location : path, default=None
        The cache folder (default :func:`cache_dir`).
    tables : iterable of str, default=None
        The tables whose current keys are kept (default: every registered table).

    Returns
    -------
    dict
        ``removed`` (number of entries), ``freed`` (bytes), ``kept`` (number of entries).
    """
    location = Path(location) if location is not None else ready_cache_dir()
    if tables is None:
        from . import all_tables

        all_tables()  # imports every experiment module, registering their tables
        tables = [n for n in _RAW if n in all_tables()]
    current = _current_inputs(tables)
    removed = freed = 0
    for entry in cache_entries(location):  # an entry without output is an interrupted write
        if entry["input"] in current and (entry["path"] / "output.pkl").is_file():
            continue
        shutil.rmtree(entry["path"], ignore_errors=True)
        removed, freed = removed + 1, freed + entry["bytes"]
    for f in location.iterdir() if location.is_dir() else []:
        if f.is_file() and _OLD_LAYOUT.match(f.name):
            freed += f.stat().st_size
            f.unlink()
            removed += 1
    if max_bytes is not None or max_age is not None:
        before = cache_entries(location)
        if isinstance(max_age, (int, float)):
            max_age = datetime.timedelta(days=max_age)
        Memory(str(location), verbose=0).reduce_size(bytes_limit=max_bytes, age_limit=max_age)
        after = {e["path"] for e in cache_entries(location)}
        gone = [e for e in before if e["path"] not in after]
        removed += len(gone)
        freed += sum(e["bytes"] for e in gone)
    return {"removed": removed, "freed": freed, "kept": len(cache_entries(location))}


def clear(location=None):
    """Remove every stored table (the next call of each table computes it again).

    Only the store that :func:`cached` writes (the folder's ``joblib`` subfolder and the files
    of the earlier layout) is removed; the cache folder itself, which a user may have pointed
    at a folder holding other files, is left in place.

    Parameters
    ----------
    location : path, default=None
        The cache folder (default :func:`cache_dir`).

    Returns
    -------
    dict
        ``removed`` (number of entries), ``freed`` (bytes), ``kept`` (0).
    """
    location = Path(location) if location is not None else ready_cache_dir()
    entries = cache_entries(location)
    removed, freed = len(entries), sum(e["bytes"] for e in entries)
    for f in location.iterdir() if location.is_dir() else []:
        if f.is_file() and _OLD_LAYOUT.match(f.name):
            freed += f.stat().st_size
            f.unlink()
            removed += 1
    if (location / "joblib").is_dir():
        shutil.rmtree(location / "joblib")
    return {"removed": removed, "freed": freed, "kept": len(cache_entries(location))}
