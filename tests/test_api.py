"""One API: a vocabulary shared by every estimator, clean layers, declared dependencies, habits.

* every estimator exposes ``labels_``, ``n_clusters_`` and ``n_iter_``; every kernel estimator
  exposes the RBF parameter it used as ``gamma_`` (the median heuristic for ``gamma=None``) and
  says ``pairwise`` in its tags with ``kernel="precomputed"``;
* a parameter shared by two estimators has one documented meaning and default;
* the package is layered (core <- estimators <- experiments), every module states its public
  names in ``__all__``, the notebooks import no private names;
* the dependencies declared in pyproject.toml are the ones the package imports;
* ruff is clean and no text refers to anything outside the repository.
"""

import ast
import inspect
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils import get_tags

import mmcedu
from mmcedu import EMMC, GMMC, SDPMMC, UMCRLS, RobustEnsembleClustering, SupportVectorClustering
from mmcedu.datasets import two_circles
from mmcedu.kernels import median_gamma, rbf_kernel

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: Sphinx (a book dependency) installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = [SDPMMC, GMMC, UMCRLS, EMMC, SupportVectorClustering, RobustEnsembleClustering]
KERNEL_ESTIMATORS = [SDPMMC, GMMC, UMCRLS, SupportVectorClustering]
PRECOMPUTED = [SDPMMC, GMMC, UMCRLS]  # the estimators that accept kernel="precomputed"


@pytest.fixture(scope="module")
def circles():
    X, _ = two_circles(40, random_state=0)
    return X


def _fit(cls, X, **params):
    if cls is RobustEnsembleClustering:  # fits base partitions, not features
        X = np.column_stack([np.repeat([0, 1], 20), np.repeat([1, 0], 20), np.arange(40) % 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an inaccurate SCS solve is not the point here
        return cls(**params).fit(X)


# ----------------------------------------------------------------------------- fitted attributes
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_estimator_reports_clusters_and_iterations(cls, circles):
    model = _fit(cls, circles)
    assert model.n_clusters_ == np.unique(model.labels_).size
    assert isinstance(model.n_iter_, (int, np.integer)) and model.n_iter_ >= 1


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS, ids=lambda c: c.__name__)
def test_gamma_none_is_the_median_heuristic_everywhere(cls, circles):
    assert _fit(cls, circles).gamma_ == median_gamma(circles)
    assert _fit(cls, circles, gamma=3.0).gamma_ == 3.0
    assert inspect.signature(cls).parameters["gamma"].default is None


@pytest.mark.parametrize("cls", PRECOMPUTED, ids=lambda c: c.__name__)
def test_precomputed_kernels_are_pairwise(cls, circles):
    from sklearn.utils.metaestimators import _safe_split

    assert get_tags(cls()).input_tags.pairwise is False
    est = cls(kernel="precomputed")
    assert get_tags(est).input_tags.pairwise is True
    K = rbf_kernel(circles, gamma=2.0)
    train = np.arange(0, 40, 2)
    # scikit-learn's tools (cross-validation, ...) now slice rows and columns of the kernel
    K_train, _ = _safe_split(est, K, None, train)
    np.testing.assert_array_equal(K_train, K[np.ix_(train, train)])
    seed = {"random_state": 0}  # SDPMMC: the randomized rounding of its default
    model = _fit(cls, K, kernel="precomputed", **seed)
    assert model.gamma_ is None and model.n_clusters_ == 2
    # the same clustering as the estimator computing the same kernel itself
    np.testing.assert_array_equal(model.labels_, _fit(cls, circles, gamma=2.0, **seed).labels_)


# ----------------------------------------------------------------------------- vocabulary
def _parameter_docs(cls):
    """``{name: (type line, description)}`` from the numpydoc Parameters section."""
    doc = inspect.getdoc(cls)
    section = doc.split("Parameters\n----------\n", 1)[1].split("\n\nAttributes\n", 1)[0]
    out, name = {}, None
    for line in section.splitlines():
        m = re.match(r"^(\w+(?:, \w+)*) : (.*)$", line)
        if m:
            name = m.group(1)
            out[name] = [m.group(2), ""]
        elif name is not None:
            out[name][1] += " " + line.strip()
    return {k: (t, " ".join(d.split())) for k, (t, d) in out.items()}


# Each shared parameter: phrases its description contains in every estimator that has it.
VOCABULARY = {
    "n_clusters": ["Number of clusters"],
    "kernel": ['"precomputed"'],
    "gamma": ["RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``", "median heuristic"],
    "C": ["Inverse regularization"],
    "balance": ["Class balance as a fraction of n", "floor(balance n)"],
    "solver": ["Algorithm"],
    "cvxpy_solver": ["cvxpy back end", "``None`` means"],
    "solver_options": ["Passed to the back end"],
    "n_components": ["Rank of a kernel approximation"],
    "rank": ["Rank bound of the low-rank solution"],
    "max_iter": ["Maximum number of"],
    "tol": ["Stop when"],
    "random_state": ["Seed"],
}
# Shared parameters whose default is the same in every estimator.
SAME_DEFAULT = ["gamma", "balance", "cvxpy_solver", "solver_options", "random_state"]


def test_the_vocabulary_covers_every_shared_parameter():
    counts = {}
    for cls in ESTIMATORS:
        for name in inspect.signature(cls).parameters:
            counts[name] = counts.get(name, 0) + 1
    shared = {name for name, c in counts.items() if c >= 2}
    assert shared <= set(VOCABULARY), sorted(shared - set(VOCABULARY))


@pytest.mark.parametrize("name", sorted(VOCABULARY))
def test_a_shared_parameter_has_one_meaning(name):
    having = [cls for cls in ESTIMATORS if name in inspect.signature(cls).parameters]
    assert having, name
    for cls in having:
        docs = _parameter_docs(cls)
        assert name in docs, f"{cls.__name__} does not document {name}"
        type_line, text = docs[name]
        for phrase in VOCABULARY[name]:
            assert phrase in text, f"{cls.__name__}.{name}: {phrase!r} not in {text!r}"
        if name == "random_state":
            assert type_line == "int, RandomState instance or None, default=None", cls.__name__
    if name in SAME_DEFAULT:
        defaults = {inspect.signature(c).parameters[name].default for c in having}
        assert len(defaults) == 1, (name, defaults)


def test_n_clusters_is_first_and_two_cluster_methods_explain_why_they_have_none():
    for cls in (UMCRLS, EMMC, RobustEnsembleClustering):
        first = next(iter(inspect.signature(cls).parameters.values()))
        assert first.name == "n_clusters" and first.kind == first.POSITIONAL_OR_KEYWORD
    assert inspect.signature(UMCRLS).parameters["n_clusters"].default == 2
    assert inspect.signature(EMMC).parameters["n_clusters"].default == 2
    assert inspect.signature(RobustEnsembleClustering).parameters["n_clusters"].default is None
    for cls in (SDPMMC, GMMC):
        assert "n_clusters" not in inspect.signature(cls).parameters
        notes = inspect.getdoc(cls).split("\nNotes\n-----\n", 1)[1]
        assert "two-cluster method" in notes and "UMCRLS" in notes and "EMMC" in notes


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_docstrings_cite_and_cross_reference(cls):
    doc = inspect.getdoc(cls)
    assert "\nReferences\n----------\n.. [1]" in doc, "numbered citations"
    assert "\nSee Also\n--------\n" in doc
    assert "\nExamples\n--------\n>>>" in doc  # run by --doctest-modules


def test_the_intro_lists_each_shared_parameter_once():
    intro = (ROOT / "book/intro.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|", intro, flags=re.M)
    for name in VOCABULARY:
        assert rows.count(name) == 1, (name, rows.count(name))


# ----------------------------------------------------------------------------- layers
CORE = {"balance", "datasets", "kernels", "metrics", "partitions", "exceptions", "_config", "_base",
        "_validation", "_cvxpy", "_box_qp"}
ESTIMATOR_MODULES = {"sdp_mmc", "gmmc", "umc_rls", "emmc", "support_vector_clustering",
                     "robust_ensemble"}
META_MODULES = {"model_selection", "criteria"}


def _package_modules():
    return sorted(p for p in (ROOT / "mmcedu").rglob("*.py"))


def _mmcedu_imports(path):
    """Top-level mmcedu modules imported by ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text())
    pkg = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg[: len(pkg) - node.level + 1])
                parts = base + (node.module.split(".") if node.module else [])
                if not node.module:  # from . import x
                    parts += [node.names[0].name]
            else:
                parts = (node.module or "").split(".")
            if parts and parts[0] == "mmcedu" and len(parts) > 1:
                out.add(parts[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "mmcedu" and len(parts) > 1:
                    out.add(parts[1])
    return out


def _layer_name(name):
    """An estimator's private helper module (``_gmmc_solver``) belongs to the estimator's layer."""
    for est in ESTIMATOR_MODULES:
        if name.lstrip("_").startswith(est + "_"):
            return est
    return name


def test_layers_point_downwards_only():
    for path in _package_modules():
        rel = path.relative_to(ROOT / "mmcedu").with_suffix("")
        name = _layer_name(rel.parts[0])
        imports = {_layer_name(i) for i in _mmcedu_imports(path)}
        if name in CORE:
            assert imports <= CORE, (str(rel), imports - CORE)
        elif name in ESTIMATOR_MODULES:
            assert imports <= CORE | {name}, (str(rel), imports - CORE)
        elif name in META_MODULES:  # searches over estimators (and their criteria): never imported by them
            allowed = CORE | ESTIMATOR_MODULES | META_MODULES
            assert imports <= allowed, (str(rel), imports - allowed)
    # every module is in a layer: core, estimators or meta-estimators
    names = {_layer_name(p.relative_to(ROOT / "mmcedu").parts[0].removesuffix(".py"))
             for p in _package_modules()}
    assert names == CORE | ESTIMATOR_MODULES | META_MODULES | {"__init__"}


def test_the_package_never_imports_the_laboratory():
    # the book's laboratory (lab/mmcedu_lab) uses the package; the package never uses it, so
    # that `pip install mmcedu` installs a library that works alone
    for path in _package_modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "mmcedu_lab" for n in names), path.name


def test_every_module_states_its_public_names():
    for path in _package_modules():
        tree = ast.parse(path.read_text())
        all_nodes = [n for n in tree.body if isinstance(n, ast.Assign)
                     and any(getattr(t, "id", None) == "__all__" for t in n.targets)]
        assert all_nodes, f"{path.relative_to(ROOT)} has no __all__"
        exported = set(ast.literal_eval(all_nodes[0].value))
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        public = {d for d in defined if not d.startswith("_")}
        assert public <= exported, f"{path.relative_to(ROOT)}: public but not in __all__: {public - exported}"


def _notebook_code(nb_path):
    """``(code, index)`` of every code cell, IPython magics (``%matplotlib inline``) blanked."""
    nb = json.loads(nb_path.read_text())
    blank = lambda src: "\n".join("" if ln.lstrip().startswith("%") else ln for ln in src.splitlines())  # noqa: E731
    return [(blank("".join(c["source"])), i) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def test_notebooks_import_no_private_names():
    for nb_path in sorted((ROOT / "book/chapters").glob("*.ipynb")):
        for code, i in _notebook_code(nb_path):
            for node in ast.walk(ast.parse(code)):
                where = f"{nb_path.name} cell {i}"
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mmcedu"):
                    assert not any(p.startswith("_") for p in node.module.split(".")), where
                    assert not any(a.name.startswith("_") for a in node.names), where
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    if node.value.id in {"mmcedu", "experiments", "comparison", "kernels", "svc"}:
                        assert not node.attr.startswith("_"), f"{where}: {node.value.id}.{node.attr}"


# ----------------------------------------------------------------------------- dependencies
IMPORT_TO_DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml", "bs4": "beautifulsoup4"}


def _requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = lambda r: re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower()  # noqa: E731
    extras = {k: {name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    return {name(r) for r in project["dependencies"]}, extras


def _third_party_imports(paths):
    out = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("mmcedu", "mmcedu_lab"):
                    out.add(IMPORT_TO_DISTRIBUTION.get(top, top))
    return out


def test_declared_dependencies_match_the_imports():
    runtime, extras = _requirements()
    package = _third_party_imports(_package_modules())
    assert package <= runtime, f"imported but not declared: {package - runtime}"
    assert "matplotlib" not in package and "matplotlib" not in runtime
    assert "matplotlib" in extras["book"]
    # cvxpy's back ends are runtime dependencies without an import of their own
    assert runtime - package <= {"clarabel", "scs"}
    tests = _third_party_imports(sorted((ROOT / "tests").glob("*.py")) + [ROOT / "conftest.py"])
    tests -= {p.stem for p in (ROOT / "tests").glob("*.py")}  # the tests' own helper modules
    allowed = runtime | extras["test"] | {"tomli"}  # tomli: Python 3.10's tomllib, see above
    assert tests <= allowed, f"tests import undeclared packages: {tests - allowed}"
    bench = _third_party_imports(sorted((ROOT / "benchmarks").glob("*.py")))
    bench -= {p.stem for p in (ROOT / "benchmarks").glob("*.py")}  # their own helper modules
    assert bench <= runtime, f"benchmarks import what the package does not install: {bench - runtime}"


# ----------------------------------------------------------------------------- habits
def test_ruff_is_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "mmcedu", "lab", "tests", "benchmarks"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# Words that point outside the repository (to a tracker, to the documents' file names, to the
# process that wrote the code). Assembled from pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([r"\bissue" + r" #?\d", r"document" + r" 0\d\d", r"seed" + r" 0\d\d",
                               r"\bthe" + r" session\b", r"source" + r" 00\d"]), re.I)


def test_no_text_refers_outside_the_repository():
    paths = [*_package_modules(), *sorted((ROOT / "tests").glob("*.py")),
             *sorted((ROOT / "benchmarks").glob("*.py")), ROOT / "README.md", ROOT / "book/intro.md",
             ROOT / "book/references.bib"]
    for path in paths:
        for i, line in enumerate(path.read_text().splitlines(), 1):
            assert not OUTSIDE.search(line), f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
    for nb_path in sorted((ROOT / "book/chapters").glob("*.ipynb")):
        for cell in json.loads(nb_path.read_text())["cells"]:
            text = "".join(cell["source"])
            assert not OUTSIDE.search(text), f"{nb_path.name}: {OUTSIDE.search(text).group(0)}"


def test_public_api_is_stated_in_one_place():
    doc = mmcedu.__doc__
    for cls in ESTIMATORS:
        assert f":class:`{cls.__name__}` in :mod:`{cls.__module__}`" in doc, cls.__name__
    for module in sorted(CORE):
        if not module.startswith("_"):
            assert f":mod:`mmcedu.{module}`" in doc, module
    import mmcedu_lab

    for module in ("registry", "measure", "comparison", "summary", "cache", "reproduce"):
        assert f"mmcedu_lab.{module}" in mmcedu_lab.__doc__, module


# ----------------------------------------------------------------------------- size
def test_the_package_is_small():
    # what `pip install` installs: under 10,000 lines with docstrings, modules under 1,000
    # lines, functions under 100 (a library small enough to read in an afternoon)
    total = 0
    for path in _package_modules():
        text = path.read_text()
        lines = len(text.splitlines())
        total += lines
        assert lines <= 1000, f"{path.relative_to(ROOT)}: {lines} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 100, f"{path.relative_to(ROOT)}: {node.name} has {length} lines"
    assert total < 10_000, f"the package has {total} lines"


def test_every_page_draws_its_figures_whatever_the_matplotlib_backend():
    # headless servers often set MPLBACKEND=Agg; the pages' numbered figures must not vanish
    for nb_path in [*sorted((ROOT / "book/chapters").glob("*.ipynb")), ROOT / "book/teaching.ipynb"]:
        nb = json.loads(nb_path.read_text())
        first = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert first.startswith("%matplotlib inline\n"), nb_path.name
