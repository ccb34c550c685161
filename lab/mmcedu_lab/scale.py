"""The scale table: the rows of ``benchmarks/results/label_free_scale.csv``, typed.

``benchmarks/bench_label_free_scale.py`` measures the one-line label-free call,
``LabelFreeSearch(estimator).fit(X)``, for every estimator at a small and a large ``n`` in
fresh processes and writes that file; the README's Large-data table and the chapters' At-scale
sections read it through :func:`rows`. The file is found relative to this module (the
laboratory is installed editable from ``lab/`` of the repository).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

__all__ = ["CSV", "rows"]

#: The measured table, relative to the repository this module lives in.
CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "label_free_scale.csv"

_INT = ("n", "n_clusters", "best_index", "grid_size", "n_choice_samples")
_FLOAT = ("wall_s", "cpu_s", "peak_rss_mb", "ari", "load_before", "load_after", "process_wall_s")
_JSON = ("best_params", "criteria", "warnings")


def _typed(row):
    out = {}
    for key, value in row.items():
        if value in ("", None):
            out[key] = None
        elif key in _INT:
            out[key] = int(float(value))
        elif key in _FLOAT:
            out[key] = float(value)
        elif key in _JSON:
            out[key] = json.loads(value)
        else:
            out[key] = value
    return out


def rows(estimator=None, *, path=None):
    """The rows of the scale table as dicts, in file order.

    Parameters
    ----------
    estimator : str, default=None
        Only the rows of this estimator (its class name, e.g. ``"GMMC"``); ``None``: all.
    path : path-like, default=None
        Another file of the same layout (default: :data:`CSV`).

    Returns
    -------
    list of dict
        Keys as the CSV's columns: ``n``, ``n_clusters``, ``best_index``, ``grid_size`` and
        ``n_choice_samples`` as ints; times, ``peak_rss_mb``, ``ari`` and loads as floats;
        ``best_params``, ``criteria`` and ``warnings`` parsed from JSON; ``estimator`` and
        ``error`` as strings. Empty cells are ``None``.

    Examples
    --------
    >>> from mmcedu_lab.scale import rows
    >>> {r["estimator"] for r in rows()} >= {"UMCRLS", "GMMC", "EMMC"}
    True
    """
    with open(CSV if path is None else path, newline="") as f:
        table = [_typed(r) for r in csv.DictReader(f)]
    if estimator is None:
        return table
    return [r for r in table if r["estimator"] == estimator]
