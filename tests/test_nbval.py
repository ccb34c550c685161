"""The README's test command runs every page of the book under nbval, once.

``python -m pytest`` collects ``book/`` (``testpaths`` in pyproject.toml) with ``--nbval-lax``:
every code cell of every notebook page is a test item, run in one kernel per notebook, in order.
tests/test_book.py then builds the site from those executions (see its docstring).
"""

import json
import subprocess
import sys
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: Sphinx (a book dependency) installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _notebook_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]
    return [f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").exists()]


def test_the_default_run_collects_every_page_under_nbval():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "book" in options["testpaths"] and "--nbval-lax" in options["addopts"]
    assert options["testpaths"].index("book") < options["testpaths"].index("tests"), (
        "the pages run before tests/test_book.py builds the site from their executions"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "book"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    collected = {line.split("::")[0] for line in proc.stdout.splitlines() if "::Cell " in line}
    assert collected == set(_notebook_pages()), proc.stdout[-2000:]


def test_a_broken_assert_fails_the_run_and_names_the_page(tmp_path):
    page = tmp_path / "07_broken.ipynb"
    cells = [
        {"cell_type": "code", "source": "x = 2 + 2", "metadata": {}, "outputs": [], "execution_count": None},
        {
            "cell_type": "code",
            "source": "assert x == 5, 'deliberately broken'",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        },
    ]
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    page.write_text(json.dumps(nb))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--nbval-lax",
            "--nbval-current-env",
            "-q",
            str(page),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "07_broken.ipynb::Cell 1" in proc.stdout and "deliberately broken" in proc.stdout
