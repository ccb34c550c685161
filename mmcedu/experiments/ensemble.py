"""Experiments for the robust ensemble clustering chapter (source 003 has no experiments).

The source is a draft without results, so the ``paper`` column of every table is empty
("--"), and the protocol is ours (issue 8):

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
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from ..datasets import blobs, digits
from ..ensemble import (
    RobustEnsembleClustering,
    base_partitions,
    coassociation_clustering,
    indicator_matrix,
    l12_low_rank_irls,
    majority_vote,
    robust_low_rank,
)
from ..metrics import adjusted_rand_score
from ..report import Table
from . import cached

__all__ = [
    "corruption_ari",
    "anomaly_auc",
    "where_l12_matters",
    "late_fusion",
    "data_sets",
    "noisy_copies",
    "scaling",
    "TABLES",
]

PAPER = "--"  # the source is a draft without experiments: nothing to quote
N_PARTITIONS = 20
FRACTIONS = (0.0, 0.2, 0.4, 0.6)
METHODS = ("mmcedu", "fro", "co-assoc", "vote")


def data_sets(full=False):
    """``{name: (X, y, k)}``: blobs (5 clusters in 8-D, overlapping) and digits (scaled)."""
    Xb, yb = blobs(1000 if full else 400, centers=5, n_features=8, cluster_std=3.0, random_state=0)
    Xd, yd = digits(scale=True) if full else digits(n_per_class=50, scale=True, random_state=0)
    return {"blobs": (Xb, yb, 5), "digits": (Xd, yd, 10)}


def _consensus(P, k, seed):
    out = {}
    for name, loss in (("mmcedu", "l12"), ("fro", "fro")):
        est = RobustEnsembleClustering(k, loss=loss, random_state=seed).fit(P)
        out[name] = est
    return out


@functools.lru_cache(maxsize=2)
def _corruption_runs(full):
    """Every (data set, corruption, fraction, repeat): ARIs and anomaly AUCs. Cached."""
    sets = data_sets(full)
    repeats = 10 if full else 1
    fractions = FRACTIONS if full else (0.0, 0.2, 0.6)
    records = []
    for name, (X, y, k) in sets.items():
        for kind in ("random", "wrong_k"):
            for frac in fractions:
                for rep in range(repeats):
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
                    records.append(dict(data=name, kind=kind, frac=frac, rep=rep, ari=ari, auc=auc))
    return records, fractions


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
@_single_threaded
def corruption_ari(full=False, progress=None):
    """Table 1: consensus ARI vs the share of corrupted base clusterings (mean over repeats)."""
    records, _ = _run_with_progress(full, progress)
    rows = []
    for (data, kind, frac), rs in _grouped(records).items():
        mean = {m: float(np.mean([r["ari"][m] for r in rs])) for m in METHODS + ("member",)}
        note = f"no experiment in source; l12 - fro = {mean['mmcedu'] - mean['fro']:+.3f}"
        rows.append(
            [data, kind, int(round(100 * frac)), PAPER, mean["mmcedu"], mean["fro"],
             mean["co-assoc"], mean["vote"], mean["member"], note]
        )
    return Table(
        rows,
        ["data set", "corruption", "% bad", "paper", "mmcedu", "fro", "co-assoc", "vote",
         "good member", "note"],
        title="ARI of the consensus (mmcedu = l12 ALM), M = 20 base clusterings",
    )


@cached("ensemble_table2")
@_single_threaded
def anomaly_auc(full=False, progress=None):
    """Table 2: AUC of the partition anomaly scores, corrupted (positive) vs good members."""
    records, _ = _run_with_progress(full, progress)
    rows = []
    for (data, kind, frac), rs in _grouped(records).items():
        if not rs[0]["auc"]:
            continue
        l12 = float(np.mean([r["auc"]["mmcedu"] for r in rs]))
        fro = float(np.mean([r["auc"]["fro"] for r in rs]))
        note = (
            "random columns lie outside the common low-rank space"
            if kind == "random"
            else "coarser/finer k-means are (nearly) in the span of the good indicators"
        )
        rows.append([data, kind, int(round(100 * frac)), PAPER, l12, fro, note])
    return Table(
        rows,
        ["data set", "corruption", "% bad", "paper", "mmcedu", "fro", "note"],
        title="AUC of the anomaly scores ||E_m||_F / ||L_m||_F (1 = corrupted ranked first)",
    )


def _run_with_progress(full, progress):
    records, fractions = _corruption_runs(bool(full))
    if progress is not None:
        progress(len(records), len(records))
    return records, fractions


@cached("ensemble_table3")
@_single_threaded
def where_l12_matters(full=False, progress=None):
    """Table 3: random binary labelings (big columns) at high fractions, digits.

    Four rank-k fits of the same ``L``: the l_{1,2} ALM with the default ``rho = 1.1``
    (``mmcedu``) and with a slower ``rho = 1.01``, the Frobenius fit, and IRLS on the
    l_{1,2} loss (another local solver of the same problem (3)); ARI of k-means on each fit,
    and the l_{1,2} loss each reaches.
    """
    from sklearn.cluster import KMeans

    from ..ensemble import best_rank_k

    X, y, k = data_sets(full)["digits"]
    fractions = (0.4, 0.6, 0.7) if full else (0.6,)
    repeats = 5 if full else 2
    fits = ("mmcedu", "rho 1.01", "fro", "irls")
    rows, done, total = [], 0, len(fractions) * repeats
    for frac in fractions:
        acc = {m: [] for m in fits}
        obj = {m: [] for m in fits}
        for rep in range(repeats):
            nb = int(round(frac * N_PARTITIONS))
            P, kinds = base_partitions(
                X, N_PARTITIONS, k, n_random=nb, return_kinds=True, random_state=rep
            )
            rng = check_random_state(100 + rep)
            for m in np.flatnonzero(kinds == "random"):
                P[:, m] = rng.randint(2, size=P.shape[0])
            L, _, _ = indicator_matrix(P)
            for m, loss, rho in (("mmcedu", "l12", 1.1), ("rho 1.01", "l12", 1.01), ("fro", "fro", 1.1)):
                est = RobustEnsembleClustering(
                    k, loss=loss, rho=rho, max_iter=3000, random_state=rep
                ).fit(P)
                acc[m].append(adjusted_rand_score(y, est.labels_))
                obj[m].append(np.linalg.norm(L - est.low_rank_, axis=0).sum())
            Xi = l12_low_rank_irls(L, k)
            F = best_rank_k(Xi, k)[1]
            labels = KMeans(k, n_init=10, random_state=rep).fit(F).labels_
            acc["irls"].append(adjusted_rand_score(y, labels))
            obj["irls"].append(np.linalg.norm(L - Xi, axis=0).sum())
            done += 1
            if progress is not None:
                progress(done, total)
        rows.append(
            [int(round(100 * frac)), PAPER]
            + [float(np.mean(acc[m])) for m in fits]
            + [float(np.mean(obj[m])) for m in fits]
        )
    return Table(
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


@cached("ensemble_table4")
@_single_threaded
def late_fusion(full=False, progress=None):
    """Table 4: late fusion of classifier outputs on digits, some classifiers broken.

    Members: {logistic regression, Gaussian naive Bayes, 5-NN} x {5 feature views} = 15
    classifiers trained on half of digits; a share of them are "broken" (trained on
    shuffled labels). Fusions on the test half: score averaging (mean of predicted
    probabilities), voting (mean of one-hot predictions), and the rank-10 fits of the
    stacked one-hot predictions (label fusion, as in the source) or of the stacked scores
    (score fusion), each read out by summing the fitted columns of each class.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier

    X, y = digits(scale=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    vtr, vte = _views(Xtr), _views(Xte)
    models = {
        "logreg": lambda: LogisticRegression(max_iter=300),
        "nb": GaussianNB,
        "knn": lambda: KNeighborsClassifier(5),
    }
    members = [(m, v) for m in models for v in vtr]
    broken_shares = (0.0, 0.2, 0.4, 0.6) if full else (0.0, 0.4)
    repeats = 5 if full else 1
    k = 10
    rows, done, total = [], 0, len(broken_shares) * repeats
    for share in broken_shares:
        res = {}
        for rep in range(repeats):
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
                "best member": max(np.mean(np.argmax(S[:, k * i : k * i + k], 1) == yte) for i in range(len(members))),
                "score average": np.mean(np.argmax(S.reshape(len(yte), -1, k).sum(1), 1) == yte),
                "vote": np.mean(np.argmax(H.reshape(len(yte), -1, k).sum(1), 1) == yte),
            }
            for name, L in (("labels", H), ("scores", S)):
                for loss in ("l12", "fro"):
                    Xf = robust_low_rank(L, k, loss=loss)[0]
                    fused = Xf.reshape(len(yte), -1, k).sum(1)
                    accs[f"{loss} {name}"] = np.mean(np.argmax(fused, 1) == yte)
            for key, val in accs.items():
                res.setdefault(key, []).append(float(val))
            done += 1
            if progress is not None:
                progress(done, total)
        mean = {key: float(np.mean(v)) for key, v in res.items()}
        rows.append(
            [int(round(100 * share)), PAPER, mean["l12 labels"], mean["fro labels"], mean["l12 scores"],
             mean["fro scores"], mean["score average"], mean["vote"], mean["best member"]]
        )
    return Table(
        rows,
        ["% broken", "paper", "mmcedu", "fro labels", "l12 scores", "fro scores", "score average",
         "vote", "best member"],
        title="Late fusion on digits (test accuracy), 15 classifiers (3 models x 5 views)",
    )


def noisy_copies(n_samples, n_clusters, n_partitions, *, noise=0.3, random_state=0):
    """A cheap synthetic ensemble for timing: relabelled copies of a ground truth.

    Each base clustering renames the true clusters at random and gives a share ``noise``
    of the samples a uniformly random label. Returns ``(partitions, truth)``.
    """
    rng = check_random_state(random_state)
    truth = rng.randint(n_clusters, size=n_samples)
    P = np.empty((n_samples, n_partitions), dtype=np.int64)
    for m in range(n_partitions):
        lab = rng.permutation(n_clusters)[truth]
        flip = rng.rand(n_samples) < noise
        lab[flip] = rng.randint(n_clusters, size=flip.sum())
        P[:, m] = lab
    return P, truth


@_single_threaded
def scaling(sizes, *, n_clusters=10, n_partitions=20, coassoc_max_gb=8.0, progress=None):
    """Time and peak memory of the consensus functions as N grows (one run).

    For each ``N`` in ``sizes``: the l_{1,2} ALM, the Frobenius fit, co-association +
    average linkage (skipped when its estimated ``16 N^2`` bytes exceed ``coassoc_max_gb``)
    and majority vote, on :func:`noisy_copies` ensembles. Peak memory is measured with
    :mod:`tracemalloc` (numpy reports its allocations there). Returns a list of dicts with
    keys ``n``, ``method``, ``seconds``, ``peak_mb``, ``ari``, ``n_iter``. Runs with one
    BLAS/OpenMP thread, so that every method is timed on the same footing.
    """
    import time
    import tracemalloc

    methods = {
        "l12 ALM": lambda P: RobustEnsembleClustering(n_clusters, random_state=0).fit(P),
        "fro": lambda P: RobustEnsembleClustering(n_clusters, loss="fro", random_state=0).fit(P),
        "co-assoc": lambda P: coassociation_clustering(P, n_clusters),
        "vote": lambda P: majority_vote(P, n_clusters),
    }
    out, done = [], 0
    for n in sizes:
        P, truth = noisy_copies(n, n_clusters, n_partitions, random_state=n)
        for name, run in methods.items():
            if name == "co-assoc" and 16.0 * n * n / 1e9 > coassoc_max_gb:
                out.append(dict(n=n, method=name, seconds=np.nan, peak_mb=16.0 * n * n / 1e6,
                                ari=np.nan, n_iter=0, skipped=True))
                continue
            tracemalloc.start()
            t0 = time.perf_counter()
            res = run(P)
            seconds = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            labels = res.labels_ if hasattr(res, "labels_") else res
            out.append(dict(n=n, method=name, seconds=seconds, peak_mb=peak,
                            ari=adjusted_rand_score(truth, labels),
                            n_iter=getattr(res, "n_iter_", 0), skipped=False))
        done += 1
        if progress is not None:
            progress(done, len(sizes))
    return out


TABLES = {
    "ensemble_table1": corruption_ari,
    "ensemble_table2": anomaly_auc,
    "ensemble_table3": where_l12_matters,
    "ensemble_table4": late_fusion,
}
