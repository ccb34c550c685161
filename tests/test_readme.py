"""The README gives exactly two fresh-machine commands, and .ci/run runs the second verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Two commands for a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    build, test = commands
    assert "\n" not in build and "\n" not in test, "each command is one line"
    assert '".[book]"' in build and "jupyter-book build . -W -n --keep-going" in build
    assert build.endswith("_build/html/index.html")
    assert '".[book,test]"' in test and test.endswith("python -m pytest")
    # both install the book's laboratory beside the package (lab/: not part of `pip install mmcedu`)
    assert "-e ./lab" in build and "-e ./lab" in test


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci/run").read_text().splitlines()
    commands = [l for l in ci if l.strip() and not l.startswith("#") and not l.startswith(("set ", "cd "))]
    assert commands == [_readme_commands()[1]]
    assert (ROOT / ".ci/run").stat().st_mode & 0o111, ".ci/run must be executable"


def _python_examples(text):
    return re.findall(r"```python\n(.*?)\n```", text, flags=re.S)


def test_usage_examples_run_and_cluster_their_data():
    from mmcedu.metrics import adjusted_rand_score

    examples = _python_examples((ROOT / "README.md").read_text()) + _python_examples(
        (ROOT / "book/intro.md").read_text()
    )
    assert len(examples) == 3
    for code in examples:
        namespace = {}
        exec(compile(code, "<example>", "exec"), namespace)
        assert adjusted_rand_score(namespace["y"], namespace["labels"]) > 0.95
