"""Every assert in a chapter could fail if its claim were false.

Mechanical checks on the asserts of every ``book/chapters/*.ipynb`` (reads the notebooks,
runs nothing). An assert fails the test when

- it reads a clock: ``perf_counter``, ``time.time``, ``process_time``, ``monotonic``,
  ``timeit`` or a name, attribute or string key containing ``time``, ``secs``, ``seconds``
  or ``(s)`` appears in the asserted expression, or a name assigned (directly or through other names)
  from a clock reading does;
- it has a conditional expression with a constant branch (``... if c else True``);
- it compares an expression with itself (``x == x``, ``x <= x``);
- it asserts literal constants only (no name in the expression);
- none of its names is assigned or computed in the notebook (only imported constants);
- every name it uses that the notebook binds comes from a committed file (``open``,
  ``csv.DictReader``, ``read_csv``, ``json.load``, ``np.load``/``loadtxt``, ``read_text``, or a
  function of the notebook that calls one), so that it compares a stored result with a
  literal. Stored results are checked against the prose in ``tests/``; a chapter asserts what
  it computes, or a stored value against a value it computes.
"""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book/chapters").glob("*.ipynb"))
CLOCK_CALLS = {
    "perf_counter",
    "perf_counter_ns",
    "process_time",
    "process_time_ns",
    "monotonic",
    "monotonic_ns",
    "timeit",
    "time",
    "time_ns",
    "default_timer",
    "thread_time",
}
CLOCK_WORD = re.compile(r"time|secs|seconds|\(s\)", re.IGNORECASE)  # "(s)": a column in seconds
FILE_READS = {"open", "DictReader", "read_csv", "loadtxt", "genfromtxt", "read_text", "read_bytes"}
FILE_LOADERS = {"json", "np", "numpy", "pickle", "yaml"}  # their ``load``/``safe_load`` read a file
# chapter stem -> reason, for a chapter whose fix is on its way
XFAIL = {}


def _code(path):
    """The code cells of a notebook as (index, parsed module), IPython magics blanked."""
    cells = json.loads(path.read_text())["cells"]
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        src = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)
        out.append((i, ast.parse(src)))
    return out


def _bound_in_comprehensions(node):
    bound = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.comprehension):
            bound |= {n.id for n in ast.walk(sub.target) if isinstance(n, ast.Name)}
        elif isinstance(sub, ast.Lambda):
            bound |= {a.arg for a in sub.args.args}
    return bound


def _free_names(node):
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names - _bound_in_comprehensions(node)


def _assigned(trees):
    """Names the notebook binds by computation (not by import)."""
    out = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                out.add(node.name)
    return out


def _reads_clock_directly(node):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in CLOCK_CALLS:
                return True
    return False


def _reads_file(node, readers=()):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in FILE_READS or name in readers:
                return True
            if (
                name in ("load", "safe_load")
                and isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id in FILE_LOADERS
            ):
                return True
    return False


def _file_names(trees):
    """Names bound (to a fixed point) from a read of a file: names whose every binding
    (assignment, ``for`` target, ``with ... as``) reads a file or uses such a name; functions of
    the notebook that read a file count as readers."""
    readers = set()
    binds = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _reads_file(node):
                readers.add(node.name)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                binds += [(n.id, node.value) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            elif isinstance(node, (ast.For, ast.comprehension)):
                binds += [(n.id, node.iter) for n in ast.walk(node.target) if isinstance(n, ast.Name)]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                binds += [
                    (n.id, node.context_expr) for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)
                ]
    values = {}
    for name, value in binds:
        values.setdefault(name, []).append(value)
    tainted, changed = set(), True
    while changed:  # a name counts only when every binding of it comes from a file
        changed = False
        for name, vals in values.items():
            if name not in tainted and all(_reads_file(v, readers) or _free_names(v) & tainted for v in vals):
                tainted.add(name)
                changed = True
    return tainted


def _clock_words(node):
    words = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    words |= {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return any(CLOCK_WORD.search(w) for w in words)


def _clock_names(trees):
    """Names assigned from a clock reading, or from arithmetic on such names (to a fixed point).

    A value reads a clock when it calls one, reads a key or attribute named like a time
    (``r["seconds"]``), or uses a name that does. Only plain names are followed, pairwise
    through tuple assignments; a literal container that holds a time among other results (a
    row of a table) is not, so that its other entries can still be asserted.
    """
    containers = (ast.Tuple, ast.List, ast.Dict, ast.Set)
    assigns = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    pairs = [(target, node.value)]
                    if (
                        isinstance(target, ast.Tuple)
                        and isinstance(node.value, ast.Tuple)
                        and len(target.elts) == len(node.value.elts)
                    ):
                        pairs = list(zip(target.elts, node.value.elts))
                    assigns += [
                        (t.id, v)
                        for t, v in pairs
                        if isinstance(t, ast.Name) and not isinstance(v, containers)
                    ]
    tainted = set()
    changed = True
    while changed:
        changed = False
        for name, value in assigns:
            if name not in tainted and (
                _reads_clock_directly(value) or _clock_words(value) or _free_names(value) & tainted
            ):
                tainted.add(name)
                changed = True
    return tainted


def _problems(path):
    code = _code(path)
    trees = [t for _, t in code]
    assigned = _assigned(trees)
    clock = _clock_names(trees)
    stored = _file_names(trees)
    found = []
    for i, tree in code:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assert):
                continue
            test = node.test
            where = f"cell {i}: assert {ast.unparse(test)[:120]}"
            names = _free_names(test)
            if (
                _reads_clock_directly(test)
                or _clock_words(test)
                or names & clock
                or any(CLOCK_WORD.search(n.id) for n in ast.walk(test) if isinstance(n, ast.Name))
            ):
                found.append(f"reads a clock: {where}")
            for sub in ast.walk(test):
                if isinstance(sub, ast.IfExp) and any(
                    isinstance(b, ast.Constant) and isinstance(b.value, bool) for b in (sub.body, sub.orelse)
                ):
                    found.append(f"conditional with a constant branch: {where}")
                if isinstance(sub, ast.Compare):
                    operands = [sub.left, *sub.comparators]
                    if any(ast.dump(a) == ast.dump(b) for a, b in zip(operands, operands[1:])):
                        found.append(f"compares an expression with itself: {where}")
            if not names and not any(isinstance(n, ast.Name) for n in ast.walk(test)):
                found.append(f"literal constants only: {where}")
            elif not names & assigned:
                found.append(f"no name computed in the notebook: {where}")
            elif names & assigned <= stored:
                found.append(f"compares a committed file with a literal: {where}")
    return found


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            id=p.stem,
            marks=([pytest.mark.xfail(reason=XFAIL[p.stem], strict=False)] if p.stem in XFAIL else []),
        )
        for p in CHAPTERS
    ],
)
def test_chapter_asserts_can_fail(path):
    problems = _problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("src", "kind"),
    [
        ("import time\nt0 = time.perf_counter()\nsecs = time.perf_counter() - t0\nassert secs > 0", "clock"),
        (
            "import time\nt0 = time.perf_counter()\ndt = time.perf_counter() - t0\nr = 2 * dt\nassert r > 1",
            "clock",
        ),
        ("rows = [{'seconds': 1.0}]\nassert rows[0]['seconds'] > 0", "clock"),
        ("rows = [{'seconds': 1.0}]\nsecs = [r['seconds'] for r in rows]\nassert secs[0] > 0", "clock"),
        (
            "rows = [{'seconds': 1.0}]\nsp = [r['seconds'] for r in rows]\nq = sp[0] / 2\nassert q > 0",
            "clock",
        ),
        ("x = 1\nassert x > 0 if x else True", "constant branch"),
        ("x = [1]\nassert x == x", "itself"),
        ("assert 6 < 7.5", "literal"),
        ("from math import pi\nassert pi > 3", "no name computed"),
        (
            "import csv\nwith open('r.csv') as fh:\n    rows = list(csv.DictReader(fh))\n"
            "six = {int(r['n']): float(r['x']) for r in rows}\nassert round(six[1000], 1) == 2.0",
            "committed file",
        ),
        (
            "import json\ndef load(p):\n    return json.load(open(p))\n"
            "t = load('t.json')\nassert t['a'] == (1, 2)",
            "committed file",
        ),
    ],
)
def test_the_checks_catch_the_patterns(tmp_path, src, kind):
    nb = {"cells": [{"cell_type": "code", "source": src, "metadata": {}, "outputs": []}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    assert any(kind in p for p in _problems(path))


def test_the_checks_pass_a_stored_value_against_a_computed_one(tmp_path):
    src = (
        "import csv\nwith open('r.csv') as fh:\n    rows = list(csv.DictReader(fh))\n"
        "peak = float(rows[0]['peak'])\nestimate = 2.0 * 3\nassert estimate <= peak"
    )
    nb = {"cells": [{"cell_type": "code", "source": src, "metadata": {}, "outputs": []}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    assert _problems(path) == []


def test_the_checks_pass_a_falsifiable_assert(tmp_path):
    src = "import numpy as np\nx = np.arange(3)\nassert np.all(x[1:] > x[:-1]), 'increasing'"
    nb = {"cells": [{"cell_type": "code", "source": src, "metadata": {}, "outputs": []}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    assert _problems(path) == []
