"""Package-wide settings: the memory budget that the dense paths check before allocating.

``mmcedu.get_config()``, ``mmcedu.set_config(...)`` and the context manager
``mmcedu.config_context(...)`` work like their scikit-learn namesakes.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading

__all__ = ["get_config", "set_config", "config_context", "default_memory_budget", "parse_bytes"]

_GIB = 2**30
_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    # one letter, as joblib and ``ls -h`` write sizes: powers of 1024
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
}
_state = threading.local()


def parse_bytes(value):
    """A number of bytes from an int/float or a string such as ``"8GB"``, ``"512 MiB"``, ``"2e9"``.

    ``kB``, ``MB``, ``GB``, ``TB`` are powers of 1000; ``KiB`` ... ``TiB`` and the one-letter
    ``K``, ``M``, ``G``, ``T`` (joblib's sizes) are powers of 1024.

    Examples
    --------
    >>> parse_bytes("8GiB") == 8 * 2**30
    True
    >>> parse_bytes("1.5 GB")
    1500000000
    >>> parse_bytes("2G") == 2 * 2**30
    True
    """
    if isinstance(value, bool):
        raise ValueError(f"A memory size must be a number of bytes or a string like '8GB'; got {value!r}.")
    if isinstance(value, (int, float)):
        nbytes = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError(
                f"Cannot read the memory size {value!r}: use a number of bytes or a number with "
                "a unit, e.g. '8GB', '512MiB'."
            )
        nbytes = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not nbytes > 0 or nbytes == float("inf"):
        raise ValueError(f"A memory size must be positive and finite; got {value!r}.")
    return int(nbytes)


def default_memory_budget():
    """``$MMCEDU_MEMORY_BUDGET`` if set, else the smaller of 8 GiB and half the physical memory."""
    env = os.environ.get("MMCEDU_MEMORY_BUDGET", "").strip()
    if env:
        return parse_bytes(env)
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        physical = 16 * _GIB
    return int(min(8 * _GIB, physical // 2))


def _config():
    if not hasattr(_state, "config"):
        _state.config = {"memory_budget": None}
    return _state.config


def get_config():
    """The current settings as a dict.

    ``memory_budget``: the largest number of bytes a single dense array (or the arrays of one
    step) of an estimator may take. A path that would need more raises
    :class:`mmcedu.exceptions.MemoryBudgetError` *before* allocating, naming the low-rank or
    subsampling parameter to use instead. Default: :func:`default_memory_budget`.
    """
    cfg = dict(_config())
    if cfg["memory_budget"] is None:
        cfg["memory_budget"] = default_memory_budget()
    return cfg


def set_config(memory_budget=None):
    """Change the settings for this thread (``None`` leaves a setting as it is).

    Parameters
    ----------
    memory_budget : int, float or str, default=None
        Bytes, or a string such as ``"16GB"``; see :func:`get_config`.
    """
    if memory_budget is not None:
        _config()["memory_budget"] = parse_bytes(memory_budget)


@contextlib.contextmanager
def config_context(*, memory_budget=None):
    """Temporarily change the settings (see :func:`set_config`).

    Examples
    --------
    >>> import mmcedu
    >>> with mmcedu.config_context(memory_budget="1GB"):
    ...     mmcedu.get_config()["memory_budget"]
    1000000000
    """
    old = dict(_config())
    try:
        set_config(memory_budget=memory_budget)
        yield
    finally:
        _config().clear()
        _config().update(old)
