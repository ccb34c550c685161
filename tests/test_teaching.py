"""The teaching material is consistent: book/course.yml against the chapters, the chapter
standard (book/CONTRIBUTING-chapters.md) on every chapter marked "rewritten", and the
citation and changelog files. Fast: reads files, builds nothing."""

import json
import re
from pathlib import Path

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: Sphinx (a book dependency) installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
COURSE = yaml.safe_load((ROOT / "book/course.yml").read_text())
CHAPTERS = COURSE["chapters"]
REWRITTEN = [name for name, info in CHAPTERS.items() if info["status"] == "rewritten"]
EXERCISE = re.compile(r"(?:```|:::)\{exercise\}[ \t]*([^\n]*)\n(?::[a-z]+:[^\n]*\n)*?:label:[ \t]*(\S+)")
KINDS = ("(derivation)", "(coding)", "(experiment)")


def _cells(name):
    return json.loads((ROOT / "book/chapters" / f"{name}.ipynb").read_text())["cells"]


def _src(cell):
    return "".join(cell["source"])


def _markdown(name):
    return "\n".join(_src(c) for c in _cells(name) if c["cell_type"] == "markdown")


def _exercises(name):
    return EXERCISE.findall(_markdown(name))


def test_course_lists_the_chapters_of_the_toc_in_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [
        c["file"].split("/")[-1]
        for p in toc["parts"]
        for c in p["chapters"]
        if c["file"].startswith("book/chapters/")
    ]
    assert list(CHAPTERS) == chapters
    for k, (name, info) in enumerate(CHAPTERS.items()):
        assert info["status"] in ("rewritten", "pending"), name
        assert set(info["needs"]) <= set(chapters[:k]), f"{name} needs a later chapter: {info['needs']}"
        assert info["short"]


def test_syllabi_assign_existing_exercises():
    assigned = set()
    for syllabus in COURSE["syllabi"]:
        weeks = [w["week"] for w in syllabus["weeks"]]
        assert weeks == list(range(1, len(weeks) + 1)), syllabus["name"]
        for week in syllabus["weeks"]:
            assert week["chapters"] and set(week["chapters"]) <= set(CHAPTERS), week
            if week["exercises"] == "placeholder":
                assert any(CHAPTERS[c]["status"] == "pending" for c in week["chapters"]), (
                    f"{syllabus['name']} week {week['week']}: fill in the exercises of a rewritten chapter"
                )
                continue
            labels = {label for c in week["chapters"] for _, label in _exercises(c)}
            for label in week["exercises"]:
                assert label in labels, f"{syllabus['name']} week {week['week']}: no exercise {label}"
            assigned |= set(week["exercises"])
    for name in REWRITTEN:
        used = {label for _, label in _exercises(name)} & assigned
        assert len(used) >= 2, f"{name}: a syllabus assigns fewer than two of its exercises"


def test_syllabi_plan_a_realistic_weekly_load():
    """About one chapter a week and at most four assigned exercises a week."""
    for syllabus in COURSE["syllabi"]:
        for week in syllabus["weeks"]:
            where = f"{syllabus['name']} week {week['week']}"
            assert len(week["chapters"]) == 1, f"{where}: {week['chapters']}"
            assert len(week["exercises"]) <= 4, f"{where}: {len(week['exercises'])} exercises"


def test_teaching_page_quotes_the_readme_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Two commands for a fresh machine", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)
    page = "\n".join(_src(c) for c in json.loads((ROOT / "book/teaching.ipynb").read_text())["cells"])
    assert len(commands) == 2
    for command in commands:
        assert command in page, f"book/teaching.ipynb must quote the README's command verbatim: {command}"


MAIN_TEXT_WORDS = 5000
# chapter -> reason, while its split or trim is on its way
TOO_LONG = {}


def main_text_words(name):
    """Words of main-text prose: every markdown cell but the exercises and their solutions
    (a cell that opens an ``{exercise}`` or ``{solution}`` block), counted as
    whitespace-separated tokens, display mathematics, tables, summary and notes on the
    sources included."""
    words = 0
    for cell in _cells(name):
        text = _src(cell)
        if cell["cell_type"] == "markdown" and not re.search(r"\{(solution|exercise)", text[:300]):
            words += len(text.split())
    return words


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.xfail(reason=TOO_LONG[n], strict=False)] if n in TOO_LONG else [])
        for n in CHAPTERS
    ],
)
def test_chapter_main_text_fits_one_session(name):
    """A chapter page holds what one or two 90-minute sessions can teach: at most about
    5,000 words of main-text prose (exercises, solutions and notes on the sources on top)."""
    words = main_text_words(name)
    assert words <= MAIN_TEXT_WORDS, f"{name}: {words} words of main text (at most {MAIN_TEXT_WORDS})"


@pytest.mark.parametrize("name", REWRITTEN)
def test_rewritten_chapter_front_and_back_matter(name):
    md = _markdown(name)
    for box in ("Learning objectives", "Prerequisites", "Symbols"):
        assert re.search(r":::\{admonition\} " + box, md), f"{name}: no {box!r} box"
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings[-3:] == ["Summary", "Exercises", "Notes on the sources"], headings
    assert "{index}" in md, f"{name}: no index entry (the site's index lists every chapter)"
    assert "{margin}" not in md, "use an admonition with :class: margin note (renders in JupyterLab too)"
    assert not re.search(r"\{(warning|caution|danger|attention)\}", md), "no warning boxes in the main line"
    assert not re.search(r"[^\n`]:::\{", md), "a colon fence starts its own line"
    assert "{number}" not in md, "write {numref}`label`; a custom text shows literally in JupyterLab"
    assert not re.search(r"```\{[^}]+\}[^\n]*`", md), (
        "a backtick fence whose first line has a backtick: use :::"
    )


@pytest.mark.parametrize("name", REWRITTEN)
def test_rewritten_chapter_exercises_and_solutions(name):
    cells = _cells(name)
    exercises = _exercises(name)
    assert 5 <= len(exercises) <= 8, f"{name}: {len(exercises)} exercises"
    kinds = [next((k for k in KINDS if title.rstrip().endswith(k)), None) for title, _ in exercises]
    assert None not in kinds, f"{name}: every exercise title ends with one of {KINDS}"
    assert {"(derivation)", "(coding)"} <= set(kinds), f"{name}: derivations and coding exercises"
    tagged = lambda c: "solution" in c.get("metadata", {}).get("tags", [])  # noqa: E731
    for (_title, label), kind in zip(exercises, kinds):
        assert label.startswith("ex-"), label
        starts = [
            i
            for i, c in enumerate(cells)
            if re.search(r"\{solution(-start)?\}[ \t]*" + re.escape(label) + r"\s", _src(c) + "\n")
        ]
        assert len(starts) == 1, f"{name}: exercise {label} needs exactly one solution"
        i = starts[0]
        assert tagged(cells[i]) and ":class: dropdown" in _src(cells[i]), (
            f"{label}: solution cell tagged and hidden"
        )
        assert "{exercise}" not in _src(cells[i]), f"{label}: the exercise and its solution share a cell"
        if "{solution-start}" in _src(cells[i]):
            j = next(j for j in range(i + 1, len(cells)) if "{solution-end}" in _src(cells[j]))
            body = cells[i + 1 : j + 1]
            assert all(tagged(c) for c in body), f"{label}: every cell of the solution is tagged 'solution'"
            code = [c for c in body if c["cell_type"] == "code"]
            for c in code:
                assert c["metadata"].get("jupyter", {}).get("source_hidden"), (
                    f"{label}: solution code collapsed in JupyterLab"
                )
        else:
            code = []
        if kind in ("(coding)", "(experiment)"):
            assert any(re.search(r"^\s*assert ", _src(c), flags=re.M) for c in code), (
                f"{label}: a {kind[1:-1]} solution ends in asserts that the build runs"
            )
    student = "\n".join(_src(c) for c in cells if not tagged(c))
    assert "{solution" not in student, f"{name}: a solution outside the cells tagged 'solution'"
    assert len(EXERCISE.findall(student)) == len(exercises), f"{name}: an exercise inside a solution cell"


@pytest.mark.parametrize("name", REWRITTEN)
def test_rewritten_chapter_figures_tables_and_asserts(name):
    cells = _cells(name)
    md = _markdown(name)
    for c in cells:
        if c["cell_type"] != "code":
            continue
        src = _src(c)
        figure = c["metadata"].get("mystnb", {}).get("figure")
        if "plt.subplots" in src or "plt.figure" in src:
            assert figure, f"{name}: a figure cell without a caption and name:\n{src[:200]}"
        if figure:
            assert figure["name"].startswith("fig-") and len(figure["caption"]) > 40, figure
            assert "{numref}`" + figure["name"] + "`" in md, (
                f"{name}: the text never refers to {figure['name']}"
            )
            assert "print(" not in src, f"{figure['name']}: a figure cell has one output, the figure"
        for key in re.findall(r"glue\(\s*\"(tab-[^\"]+)\"", src):
            assert "remove-output" in c["metadata"].get("tags", []), (
                f"{key}: the glued table shows once on the site"
            )
            assert re.search(r":::\{table\}[^\n]*\n:name: " + re.escape(key) + r"\n", md), (
                f"{key}: no numbered table"
            )
            assert "{numref}`" + key + "`" in md, f"{name}: the text never refers to {key}"
        for line in src.splitlines():
            if line.lstrip().startswith("assert"):
                assert not re.search(
                    r"perf_counter|time\.time\(|process_time|monotonic|secs|seconds", line
                ), f"{name}: an assert that reads a clock: {line.strip()}"
                assert not re.search(r"\belse True\b", line), f"{name}: a vacuous assert: {line.strip()}"


def test_citation_file_and_changelog():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    for key in ("cff-version", "message", "title", "authors", "version"):
        assert cff.get(key), f"CITATION.cff lacks {key}"
    assert cff["cff-version"] == "1.2.0"
    assert all(a.get("name") or a.get("family-names") for a in cff["authors"])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert cff["version"] == version, "CITATION.cff cites the version that pyproject.toml declares"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.M)
    assert version in versions, f"CHANGELOG.md has no section for {version}"
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
