"""Build the whole book as a reader's machine would, and check the result.

Every page runs once per test run, under nbval: ``python -m pytest`` collects ``book/``
(``testpaths``, ``--nbval-lax``), so a failing cell, a verification assert included, fails the
run with the notebook and cell named. The root ``conftest.py`` keeps the outputs nbval
received, and ``built_book`` builds the site from those executions (``execute_notebooks:
off``, on a copy of the sources) with warnings as errors (``-W -n --keep-going``); it refuses to
build when a page failed under nbval. Run alone (``python -m pytest tests/test_book.py``), with
no nbval executions in the same run, it builds as README command (a) does, executing every
notebook afresh (``execute_notebooks: force``, ``raise_on_error``).
"""

import html as html_lib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _browser import NO_CHROMIUM, dump_dom, find_chromium, serve

ROOT = Path(__file__).resolve().parents[1]
CDN_HOSTS = [
    "unpkg.com",
    "jsdelivr.net",
    "cdnjs.cloudflare.com",
    "mathjax.org",
    "googleapis.com",
    "gstatic.com",
    "polyfill.io",
    "cloudflare.com",
]


def _executed_copy(executed, pages, dest):
    """A copy of the book's sources in ``dest`` whose notebooks hold the outputs that nbval
    received in this test run, with execution off and a status page listing those runs."""
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(
        ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints")
    )
    config = yaml.safe_load((dest / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    (dest / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    rows = []
    for page in pages:
        nb = json.loads(page.read_text())
        record = executed[str(page.resolve())]
        count = 0
        for cell in nb["cells"]:
            if cell["cell_type"] != "code" or cell.get("id") not in record["outputs"]:
                continue
            count += 1
            cell["execution_count"] = count
            cell["outputs"] = [dict(o) for o in record["outputs"][cell["id"]]]
            for out in cell["outputs"]:
                if out["output_type"] == "execute_result":
                    out["execution_count"] = count
        (dest / page.relative_to(ROOT)).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        doc = page.relative_to(ROOT / "book").with_suffix("").as_posix()
        rows.append(f"| {{doc}}`{doc}` | {count} | {record['seconds']:.0f} | \u2705 |")
    status = (ROOT / "book/status.md").read_text()
    table = "| notebook | code cells run | run time (s) | status |\n|---|---:|---:|---|\n" + "\n".join(rows)
    (dest / "book/status.md").write_text(status.replace("```{nb-exec-table}\n```", table))


@pytest.fixture(scope="module")
def built_book(tmp_path_factory, request):
    out = tmp_path_factory.mktemp("book")
    executed = getattr(request.config, "mmcedu_executed", {})
    pages = [ROOT / f"{f}.ipynb" for f in _toc_files() if (ROOT / f"{f}.ipynb").exists()]
    source = ROOT
    if pages and all(str(p.resolve()) in executed for p in pages):
        failed = {
            p.name: executed[str(p.resolve())]["failed"]
            for p in pages
            if executed[str(p.resolve())]["failed"]
        }
        assert not failed, f"pages that failed under nbval (code cells): {failed}"
        source = tmp_path_factory.mktemp("sources")
        _executed_copy(executed, pages, source)
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(source), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"book build failed:\n{log[-6000:]}"
    return out / "_build" / "html", log


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]


def _chapters():
    return [f for f in _toc_files() if f.startswith("book/chapters/")]


def _rewritten():
    """The chapters that book/course.yml marks as meeting the chapter standard."""
    course = yaml.safe_load((ROOT / "book/course.yml").read_text())
    return [
        f"book/chapters/{name}" for name, info in course["chapters"].items() if info["status"] == "rewritten"
    ]


def _soup(path):
    from bs4 import BeautifulSoup  # installed with the book's theme

    return BeautifulSoup(path.read_text(errors="replace"), "html.parser")


@pytest.mark.slow
def test_build_has_no_warnings(built_book):
    _, log = built_book
    warnings = [
        line
        for line in log.splitlines()
        if re.search(r"\bWARNING\b", line) and "Kernel is running over TCP" not in line
    ]
    assert not warnings, "\n".join(warnings)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", _chapters())
def test_chapter_ran_to_the_end(built_book, chapter):
    """Each chapter's page holds the outputs of its cells, and none of them is an error."""
    html, _ = built_book
    page = html / (chapter + ".html")
    assert page.exists(), chapter
    soup = _soup(page)
    outputs = soup.select(".cell_output")
    assert outputs, f"{chapter}: no cell output on the page (was it executed?)"
    text = "\n".join(o.get_text(" ") for o in outputs)
    for marker in ("Traceback (most recent call last)", "AssertionError", "CellExecutionError"):
        assert marker not in text, f"{chapter}: {marker} in a cell output"


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
    assert pages_with_math >= len(_chapters()) - 2  # the summary chapters may have none


@pytest.mark.slow
def test_rewritten_chapters_number_and_caption_every_figure_and_table(built_book):
    html, _ = built_book
    for f in _rewritten():
        article = _soup(html / (f + ".html")).select_one("article")
        images = article.select("div.cell_output img")
        assert images, f"{f}: no figures"
        for img in images:
            figure = img.find_parent("figure")
            assert figure is not None, f"{f}: an image outside a numbered figure: {img.get('src')}"
            number = figure.select_one("figcaption span.caption-number")
            assert number and re.match(r"Figure \d+\.\d+", number.get_text()), f"{f}: figure without a number"
            assert len(figure.select_one("figcaption span.caption-text").get_text(strip=True)) > 20, (
                f"{f}: short caption"
            )
        for table in article.select("table"):
            if table.find_parent(class_="admonition") or table.find_parent(class_="cell_output"):
                continue  # the symbols box; a table that a cell prints for the reader who runs it
            number = table.select_one("caption span.caption-number")
            assert number and re.match(r"Table \d+\.\d+", number.get_text()), f"{f}: a table without a number"


@pytest.mark.slow
def test_rewritten_chapters_have_exercises_with_hidden_solutions(built_book):
    html, _ = built_book
    for f in _rewritten():
        article = _soup(html / (f + ".html")).select_one("article")
        exercises = article.select("div.exercise.admonition")
        assert 5 <= len(exercises) <= 8, f"{f}: {len(exercises)} exercises"
        solved = {
            a["href"].split("#")[-1] for a in article.select("div.solution.admonition > p.admonition-title a")
        }
        for ex in exercises:
            assert ex["id"] in solved, f"{f}: exercise {ex['id']} has no solution"
        for sol in article.select("div.solution.admonition"):
            assert "dropdown" in sol["class"], f"{f}: a solution that is not hidden by default"


@pytest.mark.slow
def test_every_chapter_page_offers_its_notebook(built_book):
    html, _ = built_book
    for f in _chapters():
        soup = _soup(html / (f + ".html"))
        target = f"_sources/{f}.ipynb"
        links = [a["href"] for a in soup.select("a[href]") if a["href"].endswith(target)]
        assert links, f"{f}: no download link for its notebook"
        assert (html / target).exists(), target


@pytest.mark.slow
def test_index_and_status_pages(built_book):
    html, _ = built_book
    index = _soup(html / "genindex.html")
    entries = index.select("table.genindextable li")
    hrefs = [a["href"] for a in index.select("table.genindextable a[href]")]
    assert len(entries) >= 20, f"the index has only {len(entries)} entries"
    assert any("glossary.html#term-" in h for h in hrefs), "glossary terms are missing from the index"
    for f in _rewritten():
        assert any(h.startswith(f + ".html#") for h in hrefs), f"{f} has no index entries"
    status = _soup(html / "book/status.html")
    rows = {
        a["href"].split("#")[0]: tr.get_text(" ")
        for tr in status.select("table tr")
        for a in tr.select("a[href]")
    }
    for f in _chapters():
        name = f.split("/")[-1] + ".html"
        assert any(h.endswith(name) for h in rows), f"{f} is missing from the execution status table"
        assert "\u2705" in next(r for h, r in rows.items() if h.endswith(name)), (
            f"{f} did not execute cleanly"
        )


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None, reason=NO_CHROMIUM)
def test_pages_in_a_browser_with_the_network_closed(built_book):
    """Rewritten chapters and the teaching page, opened in headless Chromium that cannot reach
    any host: the solutions start hidden and open on a click, MathJax (the local copy)
    typesets every formula, every figure has a numbered caption and loads, and the page
    fetches nothing from outside the book."""
    html, _ = built_book
    probe_js = (Path(__file__).with_name("site_probe.js")).read_text()
    for f in _rewritten() + ["book/teaching"]:
        page = html / (f + ".html")
        probe = page.with_name("_probe_" + page.name)
        probe.write_text(page.read_text().replace("</body>", f"<script>{probe_js}</script></body>"))
        try:
            with serve(html) as base:
                dom = dump_dom(f"{base}/{probe.relative_to(html).as_posix()}")
        finally:
            probe.unlink()
        found = re.search(r'data-probe="([^"]*)"', dom)
        assert found, f"{f}: the probe did not report (page did not load?)"
        r = json.loads(html_lib.unescape(found.group(1)))
        assert r["external"] == [], f"{f} fetched from outside the book: {r['external']}"
        assert r["math"] > 0 and r["math_typeset"] == r["math"], f"{f}: math not typeset: {r}"
        assert r["figures"] >= 1 and r["figures_captioned"] == r["figures"], f"{f}: {r}"
        assert r["images_loaded"] == r["images"], f"{f}: images that did not load: {r}"
        if f != "book/teaching":
            assert r["solutions"] >= 5, f"{f}: {r}"
            assert r["hidden_before"] == r["solutions"], f"{f}: solutions visible before a click: {r}"
            assert r["shown_after_click"] == r["solutions"], f"{f}: solutions that do not open: {r}"
            assert r["with_code"] >= 1, f"{f}: no solution contains its checked code cell"
