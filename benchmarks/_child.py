"""Run a benchmark point in a fresh Python process and read back its result.

Peak resident memory (``ru_maxrss``) is per process, so the scale benchmarks measure each
point in a child of its own. The child prints one line ``@@RESULT@@`` followed by the JSON
of its result dictionary; :func:`run_child_code` returns that dictionary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MARKER = "@@RESULT@@"


def run_child_code(code, *, timeout=3600, env=None):
    """Run ``code`` with this interpreter in a new process.

    Returns
    -------
    (dict or None, str, float)
        The child's result (``None`` if it printed none), the error (a timeout, or the end
        of the child's stderr; empty on success) and the wall seconds of the process.
    """
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=dict(os.environ) if env is None else env)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout} s", time.perf_counter() - t0
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):]), "", wall
    return None, proc.stderr.strip() or "?", wall
