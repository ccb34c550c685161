"""pyproject.toml and environment.yml declare the same dependencies; the layout is complete."""

import json
import re
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: Sphinx (a book dependency) installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _split(requirement):
    """'scikit-learn>=1.6' -> ('scikit-learn', '>=1.6'); pip extras are dropped:
    'dask[distributed]>=2023.1' -> ('dask', '>=2023.1') (conda-forge's dask includes distributed)."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*(.*?)\s*", requirement)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def _pyproject():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    # the laboratory beside the book (lab/): its own dependencies, installed by the same commands
    lab = tomllib.loads((ROOT / "lab/pyproject.toml").read_text())["project"]
    reqs += [r for r in lab["dependencies"] if _split(r)[0] != "mmcedu"]
    return dict(_split(r) for r in reqs), project


def _environment():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    reqs = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for p in dep["pip"]:
                if not p.startswith("-e"):
                    reqs.update([_split(p)])
        else:
            reqs.update([_split(dep)])
    return reqs, env


def test_environment_and_pyproject_agree():
    py, project = _pyproject()
    env, data = _environment()
    assert data["channels"] == ["conda-forge"]
    assert env.pop("python") == project["requires-python"]
    env.pop("pip")
    assert env == py, (
        f"only in environment.yml: {sorted(set(env.items()) - set(py.items()))}; "
        f"only in pyproject.toml: {sorted(set(py.items()) - set(env.items()))}"
    )


def test_extras_and_pins():
    py, project = _pyproject()
    assert project["name"] == "mmcedu" and project["requires-python"] == ">=3.10"
    assert set(project["optional-dependencies"]) == {"book", "distributed", "test"}
    # the test extra runs the Dask cluster test (the README's test command installs it)
    extras = project["optional-dependencies"]
    assert set(extras["distributed"]) <= set(extras["test"])
    assert py["jupyter-book"] == ">=1.0.4,<2"
    for name in ["numpy", "scipy", "scikit-learn", "matplotlib", "cvxpy", "jupyterlab", "nbval",
                 "joblib", "dask"]:
        assert name in py


def test_layout():
    for path in [
        "book/intro.md",
        "book/chapters",
        "book/references.bib",
        "mmcedu/__init__.py",
        "lab/pyproject.toml",
        "lab/mmcedu_lab/__init__.py",
        "tests",
        "benchmarks",
        "_config.yml",
        "_toc.yml",
        "environment.yml",
        "pyproject.toml",
        "README.md",
        ".ci/run",
    ]:
        assert (ROOT / path).exists(), path


CHAPTER_PARTS = ["Foundations", "Methods", "Comparison"]
BOOK_PART = "Using the book"  # pages about the book (teaching, glossary, status), after the chapters


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        if part["caption"] in CHAPTER_PARTS:
            assert part.get("numbered") is True, part["caption"]
            files += [c["file"] for c in part["chapters"]]
    return toc, files


def test_toc_lists_every_chapter_in_order_and_nothing_else():
    toc, files = _toc_files()
    assert toc["format"] == "jb-book"
    notebooks = sorted(p.relative_to(ROOT).with_suffix("").as_posix()
                       for p in (ROOT / "book/chapters").glob("*.ipynb"))
    assert files[1:] == notebooks, "every chapter notebook is in the toc, in file order, and no other"
    captions = [p["caption"] for p in toc["parts"]]
    chapter_captions = [c for c in captions if c != BOOK_PART]
    assert chapter_captions == CHAPTER_PARTS[: len(chapter_captions)]
    assert captions == chapter_captions or captions == chapter_captions + [BOOK_PART], captions
    for part in toc["parts"]:
        if part["caption"] == BOOK_PART:
            assert not part.get("numbered"), "the pages about the book are not numbered chapters"
            for c in part["chapters"]:
                assert c["file"].startswith("book/") and not c["file"].startswith("book/chapters/"), c["file"]
                files.append(c["file"])
    for f in files:
        assert (ROOT / (f + ".md")).exists() or (ROOT / (f + ".ipynb")).exists(), f
    # The chapters' order (the file names sort in it): Foundations, SDP MMC, GMMC, UMC-RLS,
    # EMMC, support vector clustering, robust ensemble clustering, comparison.
    order = ["foundations", "sdp_mmc", "gmmc", "umc_rls", "emmc", "svc", "robust_ensemble", "comparison"]
    stems = [f.split("/")[-1].split("_", 1)[1] for f in files[1:] if f.startswith("book/chapters/")]
    present = [o for o in order if o in stems]
    assert [s for s in stems if s in order] == present


def test_notebooks_are_stored_without_outputs():
    for nb_path in sorted((ROOT / "book").rglob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell.get("outputs", []) == [], f"{nb_path.name} has stored outputs"
                assert cell.get("execution_count") is None, f"{nb_path.name} has execution counts"


def test_notebooks_read_the_full_switch_and_have_one_title():
    for nb_path in sorted((ROOT / "book/chapters").glob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "MMCEDU_FULL" in code, f"{nb_path.name} does not read the MMCEDU_FULL switch"
        assert "assert" in code, f"{nb_path.name} verifies nothing"
        titles = [l for l in md.splitlines() if re.match(r"# \S", l)]
        assert len(titles) == 1, f"{nb_path.name} must have exactly one '# ' title, has {titles}"


def test_pip_install_installs_the_library_only():
    # `pip install .` takes the package `mmcedu` and its subpackages; the book's laboratory
    # (lab/mmcedu_lab: tables, ledger, comparison protocol, cache) is a project of its own
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["tool"]["setuptools"]["packages"]["find"]["include"] == ["mmcedu", "mmcedu.*"]
    assert not (ROOT / "mmcedu/experiments").exists() and not (ROOT / "mmcedu/reproduce.py").exists()
    lab = tomllib.loads((ROOT / "lab/pyproject.toml").read_text())
    assert lab["project"]["name"] == "mmcedu-lab"
    assert lab["tool"]["setuptools"]["packages"]["find"]["include"] == ["mmcedu_lab", "mmcedu_lab.*"]
