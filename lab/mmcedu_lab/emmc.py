"""Tables 1-3 of Zhang, Xia and Liu (EMMC), and the sensitivity and timing studies of the chapter.

Table 1 (the paper's protocol, borrowed from Zhang, Tsang and Kwok 2009): the 45 two-class
clustering tasks made from every pair of handwritten digit classes. Here the digits are
scikit-learn's 8 x 8 digits (1797 samples, inputs scaled to [0, 1]); every task uses all
samples of its two classes (about 360). Schemes: random labels, random labels refined by
EMMC, k-means (10 restarts), k-means refined by EMMC. EMMC uses L = 200 sigmoid nodes and
``balance = 0.1``; the paper states neither C nor L for this table, so several C are shown.

Tables 2-3 (accuracy against the number of hidden nodes L, one output vs m outputs): the
paper uses LetterABCD (UCI letters A-D) and USPS (10 digits). Neither ships with
scikit-learn, so digits 1-4 stand in for LetterABCD (4 classes) and all ten digits for USPS
(10 classes). Both outputs start from the same k-means labels.

``full=False`` (the chapter's quick protocol): one seed; Tables 2-3 at every L of the paper.
``full=True``: 5 seeds (hidden layers and k-means runs) averaged, every L of the paper.

Also the reference solvers of EMMC's balanced label step, against which the chapter and the
tests check :func:`mmcedu.emmc.box_assignment`: the transportation LP
(:func:`balanced_assignment`), the dynamic programme for one ordered output
(:func:`ordered_balanced_assignment`) and the optimality certificate
(:func:`box_optimality_gap`).
"""

from __future__ import annotations

import itertools
import numbers
import time

import numpy as np
from scipy.optimize import linear_sum_assignment, linprog
from scipy.sparse import coo_matrix
from sklearn.cluster import KMeans

from mmcedu.balance import _check_int, _check_outputs
from mmcedu.emmc import EMMC, ELMRidge, edge_weights, hidden_layer, shortest_paths
from mmcedu.metrics import clustering_accuracy, clustering_error

from .cache import cached
from .measure import best_time
from .parallel import map_tasks
from .registry import PAPER, PaperTable, load, stand_in

__all__ = [
    "PAIRS",
    "emmc_table1",
    "emmc_table2",
    "emmc_table3",
    "sensitivity",
    "numbering_dependence",
    "timing_study",
    "balanced_assignment",
    "ordered_balanced_assignment",
    "box_optimality_gap",
    "TABLES",
]

_SOURCE = "zhang_emmc"
PAIRS = list(itertools.combinations(range(10), 2))  # the 45 two-class tasks

N_HIDDEN = 200
BALANCE = 0.1


def _kmeans(X, k, seed):
    t0 = time.perf_counter()
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X).labels_
    return labels, time.perf_counter() - t0


def _timed_fit(model, X):
    t0 = time.perf_counter()
    model.fit(X)
    return model, time.perf_counter() - t0


def _pair(pair):
    """The registered digit pair ``(a, b)``: all its samples, pixels / 16."""
    return load(f"digits {pair[0]} vs {pair[1]}")


# (name, paper key, init, C, n_init) of the schemes of Table 1
_SCHEMES = [
    ("Random only", "Random only", "random", None, 1),
    ("Random + EMMC", "Random + EMMC", "random", 1.0, 1),
    ("Random + EMMC", "Random + EMMC", "random", 1e-3, 1),
    ("Random + EMMC", "Random + EMMC", "random", 1e-3, 5),
    ("KM only", "KM only", "kmeans", None, 1),
    ("KM + EMMC", "KM + EMMC", "kmeans", 1.0, 1),
    ("KM + EMMC", "KM + EMMC", "kmeans", 0.1, 1),
]


def _table1_task(task):
    """Every scheme of Table 1 on one digit pair: ``task = (seed, pair)``.

    Returns ``(errors %, seconds)``, one entry per scheme of ``_SCHEMES``.
    """
    seed, pair = task
    X, y = _pair(pair)
    km, t_km = _kmeans(X, 2, seed)
    rng = np.random.RandomState(seed)
    t0 = time.perf_counter()
    rand = rng.randint(2, size=X.shape[0])
    t_rand = time.perf_counter() - t0
    errs, times = [], []
    for _, _, init, C, n_init in _SCHEMES:
        if C is None:
            labels, t = (rand, t_rand) if init == "random" else (km, t_km)
        elif init == "random":
            model, t = _timed_fit(
                EMMC(n_hidden=N_HIDDEN, C=C, balance=BALANCE, init="random", n_init=n_init,
                     random_state=seed), X)
            labels = model.labels_
        else:
            model, t = _timed_fit(
                EMMC(n_hidden=N_HIDDEN, C=C, balance=BALANCE, init=km, random_state=seed), X)
            labels, t = model.labels_, t + t_km
        errs.append(100 * clustering_error(y, labels))
        times.append(t)
    return errs, times


@cached("emmc_table1", timings=["mmcedu time s"])
def emmc_table1(full=False, progress=None, n_jobs=None):
    """Table 1: mean clustering error (%) and time over the 45 digit-pair tasks.

    Every (seed, pair) is an independent task (:func:`mmcedu_lab.parallel.map_tasks`,
    ``n_jobs`` at a time; the errors do not depend on ``n_jobs``, the times are measured
    while the other jobs run). The time column is not cached
    (:mod:`mmcedu_lab.cache`).

    Returns a :class:`~mmcedu_lab.registry.PaperTable` with columns ``scheme | C | restarts | paper |
    mmcedu | paper time s | mmcedu time s | note`` (errors in %, times per task).
    """
    seeds = range(5) if full else range(1)
    tasks = [(seed, pair) for seed in seeds for pair in PAIRS]
    results = map_tasks(_table1_task, tasks, n_jobs=n_jobs, progress=progress)
    # (scheme, seed, pair)
    err = np.array([r[0] for r in results]).T.reshape(len(_SCHEMES), len(seeds), len(PAIRS))
    tim = np.array([r[1] for r in results]).T.reshape(len(_SCHEMES), len(seeds), len(PAIRS))
    notes = {
        0: "uniform random labels",
        1: "C as for KM + EMMC: random labels are fitted, little changes",
        2: "small C: a smooth ELM, the labels move far",
        3: "lowest objective of 5 restarts (label-free choice)",
        4: "sklearn KMeans, 10 restarts",
        5: "L = 200 sigmoid nodes, balance 0.1",
        6: "smaller C: a smoother ELM",
    }
    rows = []
    paper = PAPER[_SOURCE]["Table 1"]
    for j, (name, key, _, C, n_init) in enumerate(_SCHEMES):
        rows.append([
            name,
            "-" if C is None else f"{C:g}",
            n_init,
            paper[key]["error"],
            float(err[j].mean()),
            paper[key]["time"],
            float(tim[j].mean()),
            notes[j] + ("" if full else "; quick: 1 seed"),
        ])
    table = PaperTable(
        rows,
        ["scheme", "C", "restarts", "paper", "mmcedu", "paper time s", "mmcedu time s", "note"],
        floatfmt=".4g",
        pairs=[("paper", "mmcedu", "error %"), ("paper time s", "mmcedu time s", "time s")],
        title="Table 1: mean clustering error (%) over the 45 digit-pair tasks",
    )
    # per-task errors (%, averaged over seeds), row by row, for plots
    table.per_task = {"pairs": list(PAIRS), "errors": err.mean(axis=1)}
    return table


def _kmeans_task(task):
    """k-means labels and time: ``task = (registered data set, seed)``."""
    data, seed = task
    X, y = load(data)
    return _kmeans(X, len(np.unique(y)), seed)


def _single_multi_task(task):
    """Accuracy (%) and time of one EMMC fit: ``task = (data set, L, output, C, km labels, seed)``."""
    data, L, output, C, km, seed = task
    X, y = load(data)
    k = len(np.unique(y))
    model, t = _timed_fit(
        EMMC(k, n_hidden=L, C=C, balance=BALANCE, init=km, output=output, random_state=seed), X)
    return 100 * clustering_accuracy(y, model.labels_), t


def _single_vs_multi(data, Ls, paper, seeds, C, progress, stand_in, n_jobs):
    X, y = load(data)
    kms = map_tasks(_kmeans_task, [(data, seed) for seed in seeds], n_jobs=n_jobs)
    km_acc = [100 * clustering_accuracy(y, km) for km, _ in kms]
    tasks = [(s_i, L_i, o_i, (data, L, output, C, kms[s_i][0], seed))
             for s_i, seed in enumerate(seeds) for L_i, L in enumerate(Ls)
             for o_i, output in enumerate(("single", "multi"))]
    results = map_tasks(_single_multi_task, [t[3] for t in tasks], n_jobs=n_jobs,
                        progress=progress)
    acc = np.zeros((len(Ls), 2, len(seeds)))
    tim = np.zeros_like(acc)
    for (s_i, L_i, o_i, _), (a, t) in zip(tasks, results):
        acc[L_i, o_i, s_i] = a
        tim[L_i, o_i, s_i] = t + kms[s_i][1]
    note = (f"{stand_in}; k-means alone {np.mean(km_acc):.1f} %; C = {C:g}; "
            f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}")
    rows = []
    for L_i, L in enumerate(Ls):
        p = paper[L]
        rows.append([
            L, p["single"], p["multi"], float(acc[L_i, 0].mean()), float(acc[L_i, 1].mean()),
            p["single time"], p["multi time"], float(tim[L_i, 0].mean()),
            float(tim[L_i, 1].mean()), note,
        ])
    headers = [
        "L", "paper single", "paper multi", "mmcedu single", "mmcedu multi",
        "paper time single s", "paper time multi s", "time single s", "time multi s", "note",
    ]
    return rows, headers


# the columns the reproduction summary compares in Tables 2 and 3
_SINGLE_MULTI_PAIRS = [("paper single", "mmcedu single", "one output"),
                       ("paper multi", "mmcedu multi", "one output per cluster")]


_TIMES = ["time single s", "time multi s"]


def _paper_single_vs_multi(table, data_set, n_clusters, full, progress, n_jobs):
    """Tables 2 and 3: accuracy (%) at every L of the paper's ``table``, one output vs
    ``n_clusters`` outputs, on the stand-in of ``data_set``; 5 seeds in full, 1 in quick."""
    data, note = stand_in(_SOURCE, data_set)
    paper = PAPER[_SOURCE][table]
    seeds = range(5) if full else range(1)
    rows, headers = _single_vs_multi(data, list(paper), paper, seeds, 1.0, progress, note, n_jobs)
    return PaperTable(rows, headers, floatfmt=".4g", pairs=_SINGLE_MULTI_PAIRS,
                      title=f"{table}: accuracy (%) vs L, {n_clusters} clusters (single vs multi output)")


@cached("emmc_table2", timings=_TIMES)
def emmc_table2(full=False, progress=None, n_jobs=None):
    """Table 2 shape: accuracy (%) vs L, one vs 4 outputs, digits 1-4 (for LetterABCD).

    Every (seed, L, output) is an independent fit (``n_jobs`` at a time); the time columns
    are not cached.
    """
    return _paper_single_vs_multi("Table 2", "LetterABCD", 4, full, progress, n_jobs)


@cached("emmc_table3", timings=_TIMES)
def emmc_table3(full=False, progress=None, n_jobs=None):
    """Table 3 shape: accuracy (%) vs L, one vs 10 outputs, all ten digits (for USPS).

    Every (seed, L, output) is an independent fit (``n_jobs`` at a time); the time columns
    are not cached.
    """
    return _paper_single_vs_multi("Table 3", "USPS", 10, full, progress, n_jobs)


_KM_CACHE: dict = {}


def _pair_with_kmeans(pair, seed):
    """A digit pair and its k-means labels (cached: the sensitivity curves reuse them)."""
    key = (pair, seed)
    if key not in _KM_CACHE:
        X, y = _pair(pair)
        _KM_CACHE[key] = (X, y, _kmeans(X, 2, seed)[0])
    return _KM_CACHE[key]


_SENSITIVITY_PARAMS = ("C", "n_hidden", "balance")


def _sensitivity_task(task):
    """KM + EMMC errors (%) on one pair for every value: ``task = (pair, seed, param, values, base)``."""
    pair, seed, param, values, base = task
    X, y, km = _pair_with_kmeans(pair, seed)
    errs = []
    for v in values:
        kw = dict(base, **{param: v})
        model = EMMC(init=km, random_state=seed, **kw).fit(X)
        errs.append(100 * clustering_error(y, model.labels_))
    return 100 * clustering_error(y, km), errs


def sensitivity(param, values, *, pairs=None, seed=0, n_jobs=None, **params):
    """Mean KM + EMMC error (%) over digit pairs as one parameter varies.

    Parameters
    ----------
    param : {"C", "n_hidden", "balance"}
    values : sequence
    pairs : list of (int, int), default=PAIRS (all 45 tasks)
    seed : int
    n_jobs : int, default=None
        Pairs processed at the same time (:func:`mmcedu_lab.parallel.map_tasks`); the
        result does not depend on it.
    **params
        Other EMMC parameters (defaults: ``C=0.1, n_hidden=200, balance=0.1``).

    Returns
    -------
    errors : ndarray of shape (len(values),)
        Mean clustering error (%) of KM + EMMC.
    km_error : float
        Mean clustering error (%) of the k-means labels it starts from.
    """
    if param not in _SENSITIVITY_PARAMS:
        raise ValueError(f"param must be one of {_SENSITIVITY_PARAMS}; got {param!r}.")
    pairs = PAIRS if pairs is None else [tuple(p) for p in pairs]
    values = list(values)
    if not pairs or not values:
        raise ValueError(
            f"sensitivity needs at least one pair and one value; got pairs={pairs!r}, "
            f"values={values!r}."
        )
    bad = [p for p in pairs if len(p) != 2 or not set(p) <= set(range(10)) or p[0] == p[1]]
    if bad:
        raise ValueError(f"pairs must be pairs of two different digits 0..9; got {bad}.")
    base = {"C": 0.1, "n_hidden": N_HIDDEN, "balance": BALANCE}
    base.update(params)
    tasks = [(pair, seed, param, values, base) for pair in pairs]
    results = map_tasks(_sensitivity_task, tasks, n_jobs=n_jobs)
    errors = np.zeros(len(values))
    km_err = []
    for km_e, errs in results:  # summed in the order of the pairs, as a serial loop would
        km_err.append(km_e)
        for i, e in enumerate(errs):
            errors[i] += e / len(pairs)
    return errors, float(np.mean(km_err))


def numbering_dependence(data="digits", *, n_perm=6, n_hidden=1000, C=1.0, seed=0, n_jobs=None):
    """Accuracy (%) of one-output and m-output EMMC started from the same k-means partition
    under ``n_perm`` random renumberings of its clusters.

    One output regresses the integer ids 1..m, so renaming the clusters changes the
    problem; m outputs (one-hot targets) are equivariant to the renaming.

    Parameters
    ----------
    data : str, default="digits"
        A registered data set (:data:`mmcedu_lab.registry.DATASETS`).
    n_jobs : int, default=None
        Fits run at the same time (:func:`mmcedu_lab.parallel.map_tasks`); the result
        does not depend on it.

    Returns
    -------
    single, multi : ndarray of shape (n_perm,)
    km_accuracy : float
    """
    if isinstance(n_perm, bool) or not isinstance(n_perm, numbers.Integral) or n_perm < 1:
        raise ValueError(f"n_perm must be a positive integer; got {n_perm!r}.")
    X, y = load(data)
    k = len(np.unique(y))
    km, _ = _kmeans(X, k, seed)
    rng = np.random.RandomState(seed)
    perms = [np.arange(k) if i == 0 else rng.permutation(k) for i in range(n_perm)]
    tasks = [(data, n_hidden, out, C, perm[km], seed) for perm in perms for out in ("single", "multi")]
    acc = np.array([a for a, _ in map_tasks(_single_multi_task, tasks, n_jobs=n_jobs)])
    return acc[0::2], acc[1::2], 100 * clustering_accuracy(y, km)


def _sample(n, seed):
    return load("digits (resampled, noisy)", n, seed)[0]


def timing_study(ns=(250, 500, 1000, 2000), Ls=(50, 100, 200, 400, 800), *, n_fixed=500,
                 L_fixed=200, form_cases=((1000, 100), (1000, 400), (200, 1000), (100, 2000)),
                 repeats=3, seed=0):
    """Fit time of EMMC vs n and vs L, and primal / dual ridge time ratios, in one run.

    Returns
    -------
    dict with
        ``"n"``: list of (n, fit seconds, seconds per alternation) at ``L = L_fixed``;
        ``"L"``: list of (L, fit seconds, seconds per alternation) at ``n = n_fixed``;
        ``"forms"``: list of (n, L, primal seconds, dual seconds, dual / primal ratio) for
        factorizing and solving the ridge system once, plus the form ``"auto"`` picks.
    Times are the best of ``repeats`` runs (noisy on a shared machine; read the ratios).
    """
    out = {"n": [], "L": [], "forms": []}
    for n in ns:
        X = _sample(n, seed)
        model = EMMC(n_hidden=L_fixed, C=0.1, init="random", random_state=seed)
        t = best_time(lambda: model.fit(X), repeats)[0]
        out["n"].append((n, t, t / model.n_iter_))
    X = _sample(n_fixed, seed)
    for L in Ls:
        model = EMMC(n_hidden=L, C=0.1, init="random", random_state=seed)
        t = best_time(lambda: model.fit(X), repeats)[0]
        out["L"].append((L, t, t / model.n_iter_))
    rng = np.random.RandomState(seed)
    for n, L in form_cases:
        X = _sample(n, seed)
        H = hidden_layer(X, rng.uniform(-1, 1, (X.shape[1], L)), rng.uniform(-1, 1, L))
        T = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
        tp = best_time(lambda: ELMRidge(H, 1.0, "primal").solve(T), repeats)[0]
        td = best_time(lambda: ELMRidge(H, 1.0, "dual").solve(T), repeats)[0]
        out["forms"].append((n, L, tp, td, td / tp, "primal" if L <= n else "dual"))
    return out


# --------------------------------------------------------------------------------------------
# Reference solvers of the balanced label step (the chapter's and the tests' oracles for
# mmcedu.emmc.box_assignment; formerly in mmcedu.balance and mmcedu.emmc)
# --------------------------------------------------------------------------------------------
def _check_bounds(lo, hi):
    lo, hi = _check_int(lo, "lo"), _check_int(hi, "hi")
    if lo > hi:
        raise ValueError(f"The size bounds need lo <= hi; got lo={lo}, hi={hi}.")
    return lo, hi


def balanced_assignment(cost, lo, hi):
    """Labels minimising ``sum_i cost[i, label_i]`` subject to ``lo <= N_k <= hi``.

    A transportation problem: its constraint matrix is totally unimodular, so the linear
    programme (solved by HiGHS) has an integral optimal vertex. If the returned solution is
    not integral, an exact fallback solves the same problem as a rectangular assignment
    problem (every cluster expanded into ``hi`` slots, the first ``lo`` of them mandatory).

    Parameters
    ----------
    cost : ndarray of shape (n_samples, n_clusters)
    lo, hi : int
        Bounds on every cluster's size (``n_clusters * lo <= n_samples <= n_clusters * hi``).

    Returns
    -------
    labels : ndarray of int of shape (n_samples,)
    """
    cost = np.asarray(cost, dtype=float)
    if cost.ndim != 2 or 0 in cost.shape:
        raise ValueError(f"cost must be a 2-D (n_samples, n_clusters) array; got shape {cost.shape}.")
    if not np.all(np.isfinite(cost)):
        raise ValueError("cost contains NaN or infinity: every assignment needs a finite cost.")
    lo, hi = _check_bounds(lo, hi)
    n, m = cost.shape
    if not m * lo <= n <= m * hi:
        raise ValueError(f"No labeling of {n} samples into {m} clusters has {lo} <= N_k <= {hi}.")
    idx = np.arange(n * m)
    A_eq = coo_matrix((np.ones(n * m), (idx // m, idx)), shape=(n, n * m))
    A_ub = coo_matrix(
        (np.r_[np.ones(n * m), -np.ones(n * m)], (np.r_[idx % m, m + idx % m], np.r_[idx, idx])),
        shape=(2 * m, n * m),
    )
    res = linprog(
        cost.ravel(),
        A_ub=A_ub,
        b_ub=np.r_[np.full(m, hi), -np.full(m, lo)],
        A_eq=A_eq,
        b_eq=np.ones(n),
        bounds=(0, 1),
        method="highs",
    )
    if res.status == 0:
        x = res.x.reshape(n, m)
        labels = x.argmax(axis=1)
        counts = np.bincount(labels, minlength=m)
        if np.abs(x - np.round(x)).max() < 1e-6 and counts.min() >= lo and counts.max() <= hi:
            return labels
    # exact fallback: expand each cluster into hi slots, the first lo of them mandatory
    cols = np.repeat(np.arange(m), hi)
    slot = np.tile(np.arange(hi), m)
    bonus = np.where(slot < lo, 1.0 + 2.0 * n * (np.ptp(cost) + 1.0), 0.0)
    _, c = linear_sum_assignment(cost[:, cols] - bonus[None, :])
    return cols[c]


def ordered_balanced_assignment(f, n_clusters, lo, hi):
    """Ids ``t_i in {1..m}`` (returned 0-based) minimising ``sum_i (f_i - t_i)^2``
    subject to ``lo <= N_k <= hi``, by dynamic programming.

    For scalar outputs and ordered targets the cost ``(f - k)^2 = f^2 - 2 f k + k^2`` has
    the Monge property, so for fixed cluster sizes the optimal assignment gives the
    ``N_1`` smallest outputs id 1, the next ``N_2`` id 2, and so on. A dynamic programme
    over the sorted outputs then picks the sizes: ``D_k(c)`` is the least cost of giving
    the ``c`` smallest outputs ids ``1..k``,
    ``D_k(c) = min_{lo <= N <= hi} D_{k-1}(c - N) + sum_{i = c - N}^{c - 1} (g_i - k)^2``,
    with prefix sums making every term O(1). O(m n (hi - lo + 1)) time.
    """
    f = _check_outputs(f)
    lo, hi = _check_bounds(lo, hi)
    n, m = f.size, _check_int(n_clusters, "n_clusters", 1)
    if not m * lo <= n <= m * hi:
        raise ValueError(f"No labeling of {n} samples into {m} clusters has {lo} <= N_k <= {hi}.")
    order = np.argsort(f, kind="stable")
    g = f[order]
    S1 = np.r_[0.0, np.cumsum(g)]
    S2 = np.r_[0.0, np.cumsum(g * g)]
    D = np.full(n + 1, np.inf)
    D[0] = 0.0
    choice = np.zeros((m, n + 1), dtype=int)
    Ns = np.arange(lo, min(hi, n) + 1)[None, :]  # candidate sizes of the last block
    b = np.arange(n + 1)[:, None]  # end of the block (exclusive)
    a = b - Ns  # start of the block g[a:b]
    valid = a >= 0
    a = np.where(valid, a, 0)
    for k in range(1, m + 1):
        cand = D[a] + (S2[b] - S2[a]) - 2 * k * (S1[b] - S1[a]) + k * k * Ns
        cand[~valid] = np.inf
        j = np.argmin(cand, axis=1)
        D = cand[np.arange(n + 1), j]
        choice[k - 1] = Ns[0, j]
    labels_sorted = np.empty(n, dtype=int)
    c = n
    for k in range(m, 0, -1):
        N = choice[k - 1, c]
        labels_sorted[c - N : c] = k - 1
        c -= N
    labels = np.empty(n, dtype=int)
    labels[order] = labels_sorted
    return labels


def box_optimality_gap(cost, labels, lo, hi):
    """Certificate: the least change of the cost by any exchange, for a labeling in the box.

    The minimum over the cycles of the residual graph of
    :func:`mmcedu.emmc.edge_weights` (the diagonal of the shortest-path matrix of
    :func:`mmcedu.emmc.shortest_paths`) and over the paths ``s -> t`` with ``N_s > lo``,
    ``N_t < hi``. A value ``>= 0`` (up to round-off) proves that ``labels`` minimise
    ``sum_i cost[i, label_i]`` under ``lo <= N_k <= hi``; a negative value is the gain of a
    better labeling.

    Raises
    ------
    ValueError
        When ``labels`` violate the box.
    """
    cost = np.asarray(cost, dtype=np.float64)
    labels = np.asarray(labels)
    counts = np.bincount(labels, minlength=cost.shape[1])
    if counts.min() < lo or counts.max() > hi:
        raise ValueError(f"The labeling violates the box: counts {counts.tolist()}, [{lo}, {hi}].")
    d, _ = shortest_paths(edge_weights(cost, labels, cost.shape[1])[0])
    paths = np.isfinite(d) & (counts[:, None] > lo) & (counts[None, :] < hi)
    np.fill_diagonal(paths, False)
    return min(float(np.diag(d).min()), float(d[paths].min()) if paths.any() else np.inf)


TABLES = {"emmc_table1": emmc_table1, "emmc_table2": emmc_table2, "emmc_table3": emmc_table3}
