"""Headless Chromium for the tests that look at pages as a reader's browser shows them.

The browser runs with the network closed: host names do not resolve (except 127.0.0.1, where
the tests serve the pages), so a page that needs anything from outside shows it.
"""

import contextlib
import functools
import http.server
import os
import shutil
import socket
import subprocess
import tempfile
import threading

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium():
    """The Chromium executable (``MMCEDU_CHROMIUM`` overrides the search), or None."""
    if os.environ.get("MMCEDU_CHROMIUM"):
        return os.environ["MMCEDU_CHROMIUM"]
    for name in _NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


NO_CHROMIUM = "headless Chromium is not installed (set MMCEDU_CHROMIUM to its path to run this test)"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dump_dom(url, *, budget_ms=30000, window="1400,3000", timeout=300):
    """The page's DOM after its scripts ran for ``budget_ms`` of virtual time."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [find_chromium(), "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
               f"--window-size={window}", f"--virtual-time-budget={budget_ms}", "--dump-dom", url]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.insert(2, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc.stdout


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory):
    """Serve ``directory`` on 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
