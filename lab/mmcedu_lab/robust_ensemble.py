"""Experiments for the robust ensemble clustering chapter (the source paper has no experiments).

The source is a draft without results, so the ``paper`` column of every table is empty
("--"), and the protocol is ours:

* ``ensemble_table1``: ARI of four consensus functions -- the l_{1,2} ALM
  (``mmcedu``), the Frobenius rank-k fit (problem (1)), co-association + average linkage
  and majority vote after Hungarian alignment -- on ensembles of M = 20 k-means
  clusterings of blobs and digits, with 0/20/40/60 % of the members replaced by random
  labelings or by k-means with a wrong k.
* ``ensemble_table2``: AUC of the per-partition anomaly scores for telling the corrupted
  members from the good ones (random: about 1; wrong k: about 0.5, see the chapter).
* ``ensemble_table3``: a stress test looking for where the l_{1,2} loss matters: random
  *binary* labelings (large columns) at high fractions, with a second solver of the same
  loss (IRLS) to separate the loss from the ALM's path.
* ``ensemble_table4``: late fusion (the source's motivation) of scikit-learn classifiers
  trained on different views of digits, some of them broken (trained on shuffled labels):
  score averaging and voting vs the low-rank fusions.

:func:`scaling` measures time and peak memory of the consensus functions against ``n``.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from mmcedu.metrics import adjusted_rand_score
from mmcedu.partitions import (
    base_partitions,
    coassociation_clustering,
    indicator_matrix,
    majority_vote,
    noisy_copies,
)
from mmcedu.robust_ensemble import RobustEnsembleClustering, best_rank_k, robust_low_rank

from . import measure as _measure
from .cache import cached
from .parallel import map_tasks
from .registry import DATASETS, PaperTable, load

__all__ = [
    "DATA_SETS",
    "N_SAMPLES",
    "MAX_N",
    "ensemble_table1",
    "ensemble_table2",
    "ensemble_table3",
    "ensemble_table4",
    "ensemble_paired",
    "PAIRED_SETTINGS",
    "l12_low_rank_irls",
    "scaling",
    "TABLES",
]

PAPER = "--"  # the source is a draft without experiments: nothing to quote
N_PARTITIONS = 20
FRACTIONS = (0.0, 0.2, 0.4, 0.6)
METHODS = ("mmcedu", "fro", "co-assoc", "vote")
#: The data sets of the tables (the tables' name -> the registered name).
DATA_SETS = {"blobs": "blobs (5 clusters, 8-D)", "digits": "digits"}
#: Their sizes in the quick and the full protocol (``None``: every sample).
N_SAMPLES = {"quick": {"blobs": 400, "digits": 500}, "full": {"blobs": 1000, "digits": None}}
#: The largest n at which :func:`scaling` runs each method by default: co-association needs
#: about 16 n^2 bytes (its float32 matrix and the condensed distances), 8 GB at this n.
MAX_N = {"co-assoc": int(np.sqrt(8e9 / 16))}


def _data(full):
    """``{name: (X, y, k)}`` of the protocol (quick or full)."""
    sizes = N_SAMPLES["full" if full else "quick"]
    out = {}
    for name, data in DATA_SETS.items():
        X, y = load(data, sizes[name])
        out[name] = (X, y, DATASETS[data].n_clusters)
    return out


def _consensus(P, k, seed):
    out = {}
    for name, loss in (("mmcedu", "l12"), ("fro", "fro")):
        est = RobustEnsembleClustering(k, partitions="precomputed", loss=loss, random_state=seed).fit(P)
        out[name] = est
    return out


def _corruption_run(task):
    """One ensemble and its consensus: ``task = (name, registered data, n, kind, frac, rep)``."""
    name, data, n, kind, frac, rep = task
    X, y = load(data, n)
    k = DATASETS[data].n_clusters
    nb = int(round(frac * N_PARTITIONS))
    P, kinds = base_partitions(
        X,
        N_PARTITIONS,
        k,
        n_random=nb if kind == "random" else 0,
        n_wrong_k=nb if kind == "wrong_k" else 0,
        return_kinds=True,
        random_state=1000 * rep + 1,
    )
    fits = _consensus(P, k, rep)
    ari = {m: adjusted_rand_score(y, fits[m].labels_) for m in ("mmcedu", "fro")}
    ari["co-assoc"] = adjusted_rand_score(y, coassociation_clustering(P, k))
    ari["vote"] = adjusted_rand_score(y, majority_vote(P, k))
    good = kinds == "kmeans"
    ari["member"] = float(np.mean([adjusted_rand_score(y, P[:, m]) for m in np.flatnonzero(good)]))
    auc = {}
    if 0 < nb < N_PARTITIONS:
        for m in ("mmcedu", "fro"):
            auc[m] = roc_auc_score(~good, fits[m].partition_scores_)
    return dict(data=name, kind=kind, frac=frac, rep=rep, ari=ari, auc=auc)


_RUNS = {}


def _corruption_runs(full, n_jobs=None, progress=None):
    """Every (data set, corruption, fraction, repeat): ARIs and anomaly AUCs (cached per process).

    One task per ensemble (``n_jobs`` at a time; the records do not depend on it).
    """
    full = bool(full)
    if full not in _RUNS:
        sizes = N_SAMPLES["full" if full else "quick"]
        repeats = 10 if full else 1
        fractions = FRACTIONS if full else (0.0, 0.2, 0.6)
        tasks = [(name, data, sizes[name], kind, frac, rep)
                 for name, data in DATA_SETS.items() for kind in ("random", "wrong_k")
                 for frac in fractions for rep in range(repeats)]
        _RUNS[full] = map_tasks(_corruption_run, tasks, n_jobs=n_jobs, progress=progress), fractions
    return _RUNS[full]


def _grouped(records):
    groups = {}
    for r in records:
        groups.setdefault((r["data"], r["kind"], r["frac"]), []).append(r)
    return groups


def _single_threaded(fn):
    """Run ``fn`` with one BLAS/OpenMP thread: many small problems (and fair timings)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1):
            return fn(*args, **kwargs)

    return wrapper


@cached("ensemble_table1")
def ensemble_table1(full=False, progress=None, n_jobs=None):
    """Table 1: consensus ARI vs the share of corrupted base clusterings (mean over repeats)."""
    records, _ = _run_with_progress(full, progress, n_jobs)
    rows = []
    for (data, kind, frac), rs in _grouped(records).items():
        mean = {m: float(np.mean([r["ari"][m] for r in rs])) for m in METHODS + ("member",)}
        note = f"no experiment in source; l12 - fro = {mean['mmcedu'] - mean['fro']:+.3f}"
        rows.append(
            [data, kind, int(round(100 * frac)), PAPER, mean["mmcedu"], mean["fro"],
             mean["co-assoc"], mean["vote"], mean["member"], note]
        )
    return PaperTable(
        rows,
        ["data set", "corruption", "% bad", "paper", "mmcedu", "fro", "co-assoc", "vote",
         "good member", "note"],
        title="ARI of the consensus (mmcedu = l12 ALM), M = 20 base clusterings",
    )


@cached("ensemble_table2")
def ensemble_table2(full=False, progress=None, n_jobs=None):
    """Table 2: AUC of the partition anomaly scores, corrupted (positive) vs good members."""
    records, _ = _run_with_progress(full, progress, n_jobs)
    rows = []
    for (data, kind, frac), rs in _grouped(records).items():
        if not rs[0]["auc"]:
            continue
        l12 = float(np.mean([r["auc"]["mmcedu"] for r in rs]))
        fro = float(np.mean([r["auc"]["fro"] for r in rs]))
        note = (
            "random columns lie outside the common low-rank space"
            if kind == "random"
            else "coarser k-means: inside the span of the good indicators; finer: outside it"
        )
        rows.append([data, kind, int(round(100 * frac)), PAPER, l12, fro, note])
    return PaperTable(
        rows,
        ["data set", "corruption", "% bad", "paper", "mmcedu", "fro", "note"],
        title="AUC of the anomaly scores ||E_m||_F / ||L_m||_F (1 = corrupted ranked first)",
    )


#: The settings of :func:`ensemble_paired` in the quick protocol, (data set, corruption, share).
PAIRED_SETTINGS = (("blobs", "random", 0.6), ("digits", "random", 0.6), ("digits", "wrong_k", 0.6))


def ensemble_paired(full=False, n_ensembles=5, n_jobs=None, progress=None):
    """The consensus functions compared on the same ensembles, several ensembles per setting.

    For each setting (data set, corruption, share of corrupted members), ``n_ensembles``
    ensembles (the repeats ``0, ..., n_ensembles - 1`` of :func:`ensemble_table1`'s protocol).
    Returns ``{setting: {"ari": {method: array over ensembles}, "auc": array}}`` with the ARIs
    of ``mmcedu`` (the l_{1,2} ALM), ``fro``, ``co-assoc`` and ``vote`` and the AUC of the
    l_{1,2} anomaly scores (corrupted against good members), so that a claim such as "l_{1,2}
    and Frobenius differ by less than ..." is judged by a paired interval over ensembles. The
    quick protocol runs :data:`PAIRED_SETTINGS`; the full one reuses the 10 repeats of every
    setting of table 1.
    """
    full = bool(full)
    if full:
        records, _ = _corruption_runs(True, n_jobs, progress)
    else:
        sizes = N_SAMPLES["quick"]
        tasks = [
            (name, DATA_SETS[name], sizes[name], kind, frac, rep)
            for name, kind, frac in PAIRED_SETTINGS
            for rep in range(n_ensembles)
        ]
        records = map_tasks(_corruption_run, tasks, n_jobs=n_jobs, progress=progress)
    out = {}
    for key, rs in _grouped(records).items():
        out[key] = {
            "ari": {m: np.array([r["ari"][m] for r in rs]) for m in METHODS},
            "auc": np.array([r["auc"]["mmcedu"] for r in rs if r["auc"]]),
        }
    return out


def _run_with_progress(full, progress, n_jobs=None):
    records, fractions = _corruption_runs(full, n_jobs, progress)
    if progress is not None:
        progress(len(records), len(records))
    return records, fractions


_T3_FITS = ("mmcedu", "rho 1.01", "fro", "irls")


def l12_low_rank_irls(L, k, *, max_iter=300, tol=1e-10, eps=1e-8):
    """An independent local solver of problem (3), for checking the ALM.

    Iteratively reweighted least squares (a majorize-minimize scheme): with column weights
    ``w_j = 1 / max(||(L - X)_{:, j}||_2, eps)``, the weighted problem
    ``min_{rank X <= k} sum_j w_j ||L_j - X_j||^2`` is solved exactly by
    ``X = best_rank_k(L W^{1/2}) W^{-1/2}`` (scaling columns does not change the rank), and
    each step does not increase the (``eps``-smoothed) l_{1,2} loss.
    """
    L = np.asarray(L, dtype=float)
    w = np.ones(L.shape[1])
    prev = np.inf
    for _ in range(max_iter):
        s = np.sqrt(w)
        X = best_rank_k(L * s, k)[0] / s
        r = np.linalg.norm(L - X, axis=0)
        w = 1.0 / np.maximum(r, eps)
        value = r.sum()
        if prev - value <= tol * max(1.0, value):
            break
        prev = value
    return X


def _table3_task(task):
    """ARIs and l12 losses of the four fits of one ensemble: ``task = (full, frac, rep)``."""
    from sklearn.cluster import KMeans

    full, frac, rep = task
    X, y, k = _data(full)["digits"]
    nb = int(round(frac * N_PARTITIONS))
    P, kinds = base_partitions(X, N_PARTITIONS, k, n_random=nb, return_kinds=True, random_state=rep)
    rng = check_random_state(100 + rep)
    for m in np.flatnonzero(kinds == "random"):
        P[:, m] = rng.randint(2, size=P.shape[0])
    L, _, _ = indicator_matrix(P)
    acc, obj = {}, {}
    for m, loss, rho in (("mmcedu", "l12", 1.1), ("rho 1.01", "l12", 1.01), ("fro", "fro", 1.1)):
        est = RobustEnsembleClustering(k, partitions="precomputed", loss=loss, rho=rho, max_iter=3000,
                                       random_state=rep).fit(P)
        acc[m] = adjusted_rand_score(y, est.labels_)
        obj[m] = np.linalg.norm(L - est.low_rank_, axis=0).sum()
    Xi = l12_low_rank_irls(L, k)
    F = best_rank_k(Xi, k)[1]
    labels = KMeans(k, n_init=10, random_state=rep).fit(F).labels_
    acc["irls"] = adjusted_rand_score(y, labels)
    obj["irls"] = np.linalg.norm(L - Xi, axis=0).sum()
    return acc, obj


@cached("ensemble_table3")
def ensemble_table3(full=False, progress=None, n_jobs=None):
    """Table 3: random binary labelings (big columns) at high fractions, digits.

    Four rank-k fits of the same ``L``: the l_{1,2} ALM with the usual ``rho = 1.1`` of the
    inexact ALM (``mmcedu``) and with the package's slower ``rho = 1.01``, the Frobenius fit, and IRLS on the
    l_{1,2} loss (another local solver of the same problem (3)); ARI of k-means on each fit,
    and the l_{1,2} loss each reaches. One task per (fraction, repeat), ``n_jobs`` at a time.
    """
    fractions = (0.4, 0.6, 0.7) if full else (0.6,)
    repeats = 5 if full else 2
    tasks = [(bool(full), frac, rep) for frac in fractions for rep in range(repeats)]
    results = map_tasks(_table3_task, tasks, n_jobs=n_jobs, progress=progress)
    rows = []
    for frac in fractions:
        runs = [r for t, r in zip(tasks, results) if t[1] == frac]
        rows.append(
            [int(round(100 * frac)), PAPER]
            + [float(np.mean([acc[m] for acc, _ in runs])) for m in _T3_FITS]
            + [float(np.mean([obj[m] for _, obj in runs])) for m in _T3_FITS]
        )
    return PaperTable(
        rows,
        ["% random binary", "paper", "mmcedu", "ALM rho=1.01", "fro", "IRLS",
         "loss mmcedu", "loss rho=1.01", "loss fro", "loss IRLS"],
        title="Digits, random binary labelings: ARI, and the l12 loss each fit reaches",
    )


def _views(X):
    """Feature views of 8x8 digits: all pixels, top/bottom/left/right halves."""
    img = X.reshape(-1, 8, 8)
    return {
        "all": X,
        "top": img[:, :4, :].reshape(len(X), -1),
        "bottom": img[:, 4:, :].reshape(len(X), -1),
        "left": img[:, :, :4].reshape(len(X), -1),
        "right": img[:, :, 4:].reshape(len(X), -1),
    }


_T4_MEMBERS = [(m, v) for m in ("logreg", "nb", "knn") for v in ("all", "top", "bottom", "left", "right")]


def _table4_task(task):
    """Test accuracies of the fusions of one ensemble: ``task = (share of broken members, rep)``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier

    share, rep = task
    X, y = load("digits")
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    vtr, vte = _views(Xtr), _views(Xte)
    models = {
        "logreg": lambda: LogisticRegression(max_iter=300),
        "nb": GaussianNB,
        "knn": lambda: KNeighborsClassifier(5),
    }
    members = _T4_MEMBERS
    k = 10
    rng = check_random_state(rep)
    n_broken = int(round(share * len(members)))
    broken = set(rng.choice(len(members), n_broken, replace=False).tolist())
    S, H = [], []
    for i, (m, v) in enumerate(members):
        target = rng.permutation(ytr) if i in broken else ytr
        clf = models[m]().fit(vtr[v], target)
        proba = clf.predict_proba(vte[v])
        S.append(proba)
        H.append(np.eye(k)[clf.classes_[np.argmax(proba, axis=1)]])
    S, H = np.hstack(S), np.hstack(H)
    accs = {
        "best member": max(
            np.mean(np.argmax(S[:, k * i : k * i + k], 1) == yte) for i in range(len(members))
        ),
        "score average": np.mean(np.argmax(S.reshape(len(yte), -1, k).sum(1), 1) == yte),
        "vote": np.mean(np.argmax(H.reshape(len(yte), -1, k).sum(1), 1) == yte),
    }
    for name, L in (("labels", H), ("scores", S)):
        for loss in ("l12", "fro"):
            Xf = robust_low_rank(L, k, loss=loss)[0]
            fused = Xf.reshape(len(yte), -1, k).sum(1)
            accs[f"{loss} {name}"] = np.mean(np.argmax(fused, 1) == yte)
    return {key: float(val) for key, val in accs.items()}


@cached("ensemble_table4")
def ensemble_table4(full=False, progress=None, n_jobs=None):
    """Table 4: late fusion of classifier outputs on digits, some classifiers broken.

    Members: {logistic regression, Gaussian naive Bayes, 5-NN} x {5 feature views} = 15
    classifiers trained on half of digits; a share of them are "broken" (trained on
    shuffled labels). Fusions on the test half: score averaging (mean of predicted
    probabilities), voting (mean of one-hot predictions), and the rank-10 fits of the
    stacked one-hot predictions (label fusion, as in the source) or of the stacked scores
    (score fusion), each read out by summing the fitted columns of each class. One task per
    (share, repeat), ``n_jobs`` at a time.
    """
    broken_shares = (0.0, 0.2, 0.4, 0.6) if full else (0.0, 0.4)
    repeats = 5 if full else 1
    tasks = [(share, rep) for share in broken_shares for rep in range(repeats)]
    results = map_tasks(_table4_task, tasks, n_jobs=n_jobs, progress=progress)
    rows = []
    for share in broken_shares:
        runs = [r for t, r in zip(tasks, results) if t[0] == share]
        mean = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
        rows.append(
            [int(round(100 * share)), PAPER, mean["l12 labels"], mean["fro labels"], mean["l12 scores"],
             mean["fro scores"], mean["score average"], mean["vote"], mean["best member"]]
        )
    return PaperTable(
        rows,
        ["% broken", "paper", "mmcedu", "fro labels", "l12 scores", "fro scores", "score average",
         "vote", "best member"],
        title="Late fusion on digits (test accuracy), 15 classifiers (3 models x 5 views)",
    )


def _consensus_methods(n_clusters):
    def low_rank(loss):
        return lambda P: RobustEnsembleClustering(n_clusters, partitions="precomputed", loss=loss,
                                                  random_state=0).fit(P)

    return {
        "l12 ALM": low_rank("l12"),
        "fro": low_rank("fro"),
        "co-assoc": lambda P: coassociation_clustering(P, n_clusters),
        "vote": lambda P: majority_vote(P, n_clusters),
    }


@_single_threaded
def scaling(sizes, *, methods=None, max_n=None, max_seconds=np.inf, repeats=1, memory=None,
            random_state=0, progress=None):
    """Time and peak memory of the consensus functions as n grows (one run).

    For each ``n`` in ``sizes``: the l_{1,2} ALM, the Frobenius fit, co-association +
    average linkage and majority vote, on :func:`mmcedu.partitions.noisy_copies` ensembles
    (10 clusters, 20 base partitions, seed ``random_state + n``). Runs with one BLAS/OpenMP
    thread, so that every method is timed on the same footing.

    Parameters
    ----------
    sizes : sequence of int
    methods : list of str, default=None
        A subset of ``["l12 ALM", "fro", "co-assoc", "vote"]``; ``None``: all four.
    max_n : dict, default=None
        ``{method: largest n}``; ``None`` means :data:`MAX_N` (co-association within 8 GB).
    max_seconds, repeats, memory, progress
        As in :func:`mmcedu_lab.measure.scaling`; ``memory="tracemalloc"`` traces
        numpy's arrays, which is all these methods allocate.
    random_state : int, default=0

    Returns
    -------
    list of dict
        ``n``, ``method``, ``seconds``, ``peak_mb``, ``memory``, ``skipped``, ``ari``
        (against the ground truth) and ``n_iter`` (0 for the baselines).
    """
    all_methods = _consensus_methods(10)
    chosen = _measure.select_methods(methods, all_methods)

    def describe(name, res, data):
        labels = res.labels_ if hasattr(res, "labels_") else res
        return {"ari": adjusted_rand_score(data[1], labels), "n_iter": getattr(res, "n_iter_", 0)}

    return _measure.scaling(
        sizes, {m: (lambda data, fn=fn: fn(data[0])) for m, fn in chosen.items()},
        lambda n: noisy_copies(int(n), 10, 20, random_state=random_state + int(n)),
        max_n=MAX_N if max_n is None else max_n, max_seconds=max_seconds, repeats=repeats,
        memory=memory, describe=describe, progress=progress,
    )


TABLES = {
    "ensemble_table1": ensemble_table1,
    "ensemble_table2": ensemble_table2,
    "ensemble_table3": ensemble_table3,
    "ensemble_table4": ensemble_table4,
}
