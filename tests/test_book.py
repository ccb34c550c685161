"""Build the whole book as a reader's machine would, and check the result.

The build executes every notebook afresh (``execute_notebooks: force``) with warnings as
errors (``-W -n --keep-going``), into a temporary folder.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CDN_HOSTS = ["unpkg.com", "jsdelivr.net", "cdnjs.cloudflare.com", "mathjax.org",
             "googleapis.com", "gstatic.com", "polyfill.io", "cloudflare.com"]


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=1800,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"book build failed:\n{log[-6000:]}"
    return out / "_build" / "html", log


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]


@pytest.mark.slow
def test_build_has_no_warnings(built_book):
    _, log = built_book
    warnings = [l for l in log.splitlines() if re.search(r"\bWARNING\b", l) and "Kernel is running over TCP" not in l]
    assert not warnings, "\n".join(warnings)


@pytest.mark.slow
def test_every_toc_page_is_built(built_book):
    html, _ = built_book
    assert (html / "index.html").exists()
    for f in _toc_files():
        assert (html / (f + ".html")).exists(), f


@pytest.mark.slow
def test_no_page_references_a_cdn(built_book):
    html, _ = built_book
    pages = list(html.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(errors="replace")
        for host in CDN_HOSTS:
            assert host not in text, f"{page.relative_to(html)} references {host}"
        external = re.findall(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="(https?:)?//[^"]+"', text)
        assert not external, f"{page.relative_to(html)} loads external resources: {external}"


@pytest.mark.slow
def test_math_is_rendered_by_the_local_mathjax(built_book):
    html, _ = built_book
    assert (html / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 100_000
    pages_with_math = 0
    for page in html.rglob("*.html"):
        text = page.read_text(errors="replace")
        if 'class="math' in text:  # any math on the page, its navigation bar included
            pages_with_math += 1
            assert re.search(r'<script[^>]+src="(\.\./)*_static/mathjax/tex-chtml\.js"', text), (
                f"{page.relative_to(html)} has math but does not load the local MathJax"
            )
    assert pages_with_math >= len(_toc_files()) - 2  # the summary chapters may have none
