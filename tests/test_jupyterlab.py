"""The chapters render in JupyterLab as a student opens them, not as raw MyST.

Starts JupyterLab (with the ``jupyterlab-myst`` extension of the book's dependencies) on a
copy of the rewritten chapters, opens each in headless Chromium, and reads the rendered
Markdown cells: every one is rendered by MyST, no directive fence or role is left as
literal text, the mathematics is typeset, the exercises are numbered and their solutions
collapsed. What ``jupyterlab-myst`` cannot do (citations from a BibTeX file, glued tables)
is listed in book/CONTRIBUTING-chapters.md, section 14.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from _browser import NO_CHROMIUM, dump_dom, find_chromium, free_port

ROOT = Path(__file__).resolve().parents[1]
LITERAL_MYST = [":::{", "```{", "{cite:", "{numref}`", "{ref}`", "{term}`", "{doc}`", "{index}`", "$$"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_chromium() is None, reason=NO_CHROMIUM),
]


def _rewritten():
    course = yaml.safe_load((ROOT / "book/course.yml").read_text())
    return [name for name, info in course["chapters"].items() if info["status"] == "rewritten"]


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    pytest.importorskip("jupyterlab_myst", reason="jupyterlab-myst is installed with the book extra")
    root = tmp_path_factory.mktemp("lab")  # a copy: JupyterLab writes checkpoints next to what it opens
    for name in _rewritten():
        shutil.copy(ROOT / "book/chapters" / f"{name}.ipynb", root)
    settings = tmp_path_factory.mktemp("lab-settings")
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))  # render every cell, not only the visible ones
    # a workspace of its own, not ~/.jupyter's: a stale workspace reopens old tabs
    workspaces = tmp_path_factory.mktemp("lab-workspaces")
    port = free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
           f"--LabApp.workspaces_dir={workspaces}",
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {proc.stderr.read()[-3000:]}")
                time.sleep(1)
        else:
            pytest.fail("JupyterLab did not start within two minutes")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.parametrize("name", _rewritten())
def test_chapter_renders_myst_in_jupyterlab(jupyterlab, name):
    from bs4 import BeautifulSoup  # installed with the book's theme

    nb = json.loads((ROOT / "book/chapters" / f"{name}.ipynb").read_text())
    n_markdown = sum(c["cell_type"] == "markdown" for c in nb["cells"])
    source = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    n_exercises = source.count("{exercise}")

    # ?reset: a workspace holding only this notebook (the tabs of the previous test are closed)
    dom = dump_dom(f"{jupyterlab}/lab/tree/{name}.ipynb?reset", budget_ms=40000)
    soup = BeautifulSoup(dom, "html.parser")
    cells = soup.select(".jp-MarkdownCell")
    assert len(cells) == n_markdown, f"{len(cells)} of {n_markdown} Markdown cells shown"
    # jupyterlab-myst's output sits beside the hidden editor; its blocks nest further ``.myst``
    # elements (admonitions, exercises), so each cell is read through its outermost one
    rendered = [c.select_one(".myst") for c in cells]
    missing = [i for i, r in enumerate(rendered) if r is None]
    assert not missing, f"Markdown cells {missing} of {n_markdown} are not rendered by MyST"
    text = "\n".join(r.get_text(" ") for r in rendered)
    for literal in LITERAL_MYST:
        assert literal not in text, f"raw MyST {literal!r} shown in JupyterLab"
    assert len(soup.select(".jp-MarkdownCell .myst .katex")) > 20, "mathematics is not typeset"
    assert len(soup.select(".jp-MarkdownCell .myst-admonition")) >= 3, "objectives, prerequisites, symbols"
    for k in range(1, n_exercises + 1):
        assert f"Exercise {k}" in text, f"exercise {k} is not rendered"
    solutions = soup.select(".jp-MarkdownCell .myst details")
    solutions = [d for d in solutions if "Solution" in d.get_text(" ")]
    assert len(solutions) >= n_exercises, "every exercise has a collapsible solution"
    assert not [d for d in solutions if d.has_attr("open")], "solutions start collapsed"
