"""Run a benchmark point in a fresh Python process and read back its result.

Peak resident memory (``ru_maxrss``) is per process, so the scale benchmarks measure each
point in a child of its own. The child prints one line ``@@RESULT@@`` followed by the JSON
of its result dictionary; :func:`run_child_code` returns that dictionary.
"""

from __future__ import annotations

import json
import os
import signal
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
    # a session of its own: on a timeout the child's process group, its joblib workers
    # included, is killed, so no worker outlives the point
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ) if env is None else env)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, f"timeout after {timeout} s", time.perf_counter() - t0
    wall = time.perf_counter() - t0
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):]), "", wall
    return None, stderr.strip() or "?", wall
