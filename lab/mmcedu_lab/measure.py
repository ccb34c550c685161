"""Measuring time and memory: best-of-repeats timing, peak memory and scaling studies.

Timings on a shared machine are noisy: :func:`best_time` repeats small, fast calls and
keeps the best; the book asserts on deterministic counts (iterations, sizes) and shows the
times. Peak memory is measured two ways (:func:`measure`): ``"rss"``, the growth of the
resident set size during the call (Linux, everything the process allocates, including the C
heaps of the solvers), and ``"tracemalloc"``, the peak of the Python-traced heap (numpy
reports its arrays there; C libraries' own heaps are not traced).

Every experiment module that studies cost against size has a function
``scaling(sizes, *, methods=None, max_n=None, max_seconds=inf, repeats=1, memory=None,
random_state=0, progress=None)`` built on :func:`scaling` here, returning one record per
(size, method) with the keys ``n``, ``method``, ``seconds``, ``peak_mb``, ``memory`` and
``skipped`` (plus what the method adds: iterations, errors...).
"""

from __future__ import annotations

import numbers
import time
import tracemalloc

__all__ = ["best_time", "measure", "scaling", "select_methods"]

_MEMORY = (None, "rss", "tracemalloc")


def _check_repeats(repeats, budget):
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer; got {repeats!r}.")
    if not budget >= 0:  # also refuses NaN
        raise ValueError(f"budget must be a non-negative number of seconds; got {budget!r}.")


def select_methods(methods, available):
    """``{name: available[name]}`` for the names in ``methods`` (``None``: all of them).

    Raises a ``ValueError`` naming the unknown names and the valid ones.
    """
    if methods is None:
        return dict(available)
    if isinstance(methods, str):
        methods = [methods]
    unknown = [m for m in methods if m not in available]
    if unknown:
        raise ValueError(f"Unknown method(s) {unknown}; choose from {list(available)}.")
    return {m: available[m] for m in methods}


def best_time(fn, repeats, budget=float("inf")):
    """Best wall time of up to ``repeats`` calls of ``fn()`` and the last call's result.

    Calls stop early once they have taken more than ``budget`` seconds together, so that
    only small, fast (and noisy) calls are repeated.

    Returns
    -------
    seconds : float
    result : the value of the last call
    """
    _check_repeats(repeats, budget)
    best, spent, result = float("inf"), 0.0, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
        if spent > budget:
            break
    return best, result


def _rss_mb(field):
    """``VmRSS`` / ``VmHWM`` of this process in MiB (Linux ``/proc``), or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _reset_peak_rss():
    """Reset the kernel's peak-RSS counter (``echo 5 > /proc/self/clear_refs``); True if it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _rss_mb("VmRSS") is not None
    except OSError:
        return False


def measure(fn, *, memory=None, repeats=1, budget=2.0):
    """Wall time and peak memory of ``fn()``.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    memory : {None, "rss", "tracemalloc"}, default=None
        How to measure the peak memory of the first call: ``None`` (not at all), ``"rss"``
        (growth of the resident set size, peak minus start; Linux only, the kernel's peak
        counter is reset through ``/proc/self/clear_refs``; falls back to
        ``"tracemalloc"`` elsewhere) or ``"tracemalloc"``.
    repeats : int, default=1
        Calls timed; the best time is kept. Repeats stop once the calls took ``budget``
        seconds together (only fast calls are repeated).
    budget : float, default=2.0

    Returns
    -------
    dict with ``seconds``, ``peak_mb`` (MiB, None without ``memory``), ``memory`` (the method
    used) and ``result`` (the value of the last call).
    """
    if memory not in _MEMORY:
        raise ValueError(f"memory must be one of {_MEMORY}, got {memory!r}.")
    _check_repeats(repeats, budget)
    used = memory
    if used == "rss" and not _reset_peak_rss():
        used = "tracemalloc"
    if used == "tracemalloc":
        tracemalloc.start()
    rss0 = _rss_mb("VmRSS") if used == "rss" else None
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    peak = None
    if used == "tracemalloc":
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    elif used == "rss":
        peak = _rss_mb("VmHWM") - rss0
    if repeats > 1 and seconds <= budget:
        more, result = best_time(fn, repeats - 1, budget - seconds)
        seconds = min(seconds, more)
    return {"seconds": seconds, "peak_mb": peak, "memory": used, "result": result}


def scaling(sizes, methods, make_data, *, max_n=None, max_seconds=float("inf"), repeats=1,
            budget=2.0, memory=None, describe=None, warm_up=None, progress=None):
    """Time (and memory) of several methods as the data grow, all measured in one run.

    Parameters
    ----------
    sizes : sequence of int
    methods : dict
        ``{name: fn}``; ``fn(data)`` runs the method once and returns its result.
    make_data : callable
        ``make_data(n)`` returns the ``data`` of size ``n`` (built outside the timing).
    max_n : dict, default=None
        ``{name: largest n}``: a method is not run at larger sizes.
    max_seconds : float, default=inf
        A method is not run at larger sizes once one of its runs took longer than this.
    repeats, budget, memory
        As in :func:`measure`.
    describe : callable, default=None
        ``describe(name, result, data)`` returns a dict of extra columns for a record.
    warm_up : int, default=None
        Run every method once, untimed, on ``make_data(warm_up)`` first, so that import and
        cache costs are not charged to the first size.
    progress : callable, default=None
        Called as ``progress(done, total)`` after each size.

    Returns
    -------
    list of dict
        One record per (size, method): ``n``, ``method``, ``seconds``, ``peak_mb``,
        ``memory``, ``skipped`` (``seconds`` and ``peak_mb`` are None for a skipped run),
        plus the columns of ``describe``.
    """
    max_n = dict(max_n or {})
    if warm_up is not None:
        data = make_data(warm_up)
        for fn in methods.values():
            fn(data)
    stopped, out = set(), []
    for i, n in enumerate(sizes):
        data = make_data(n)
        for name, fn in methods.items():
            if name in stopped or n > max_n.get(name, float("inf")):
                out.append({"n": int(n), "method": name, "seconds": None, "peak_mb": None,
                            "memory": None, "skipped": True})
                continue
            m = measure(lambda fn=fn: fn(data), memory=memory, repeats=repeats, budget=budget)
            record = {"n": int(n), "method": name, "seconds": m["seconds"], "peak_mb": m["peak_mb"],
                      "memory": m["memory"], "skipped": False}
            if describe is not None:
                record.update(describe(name, m["result"], data))
            out.append(record)
            if m["seconds"] > max_seconds:
                stopped.add(name)
        if progress is not None:
            progress(i + 1, len(sizes))
    return out
