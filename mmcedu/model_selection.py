"""Choosing a clustering estimator's parameters without labels: :class:`LabelFreeSearch`.

``LabelFreeSearch`` runs one estimator (any mmcedu estimator or any scikit-learn clusterer) at
every point of a parameter grid, on ``n_resamples`` random subsamples of the data, scores every
grid point with a label-free criterion (:mod:`mmcedu.criteria`) and keeps the best one. It is
organized like :class:`sklearn.model_selection.GridSearchCV`: ``best_params_``,
``best_estimator_``, ``best_score_``, ``best_index_`` and a ``cv_results_`` table, and every
(grid point, resample) fit is an independent joblib task (a Dask or Ray joblib backend spreads
them over a cluster unchanged). Without a grid or a criterion it takes the estimator's own
recommended rule, ``estimator.label_free_rule(X)``.

Resample ``r`` (``r = 0 .. R-1``, ``R = n_resamples``) is a subset ``S_r`` of
``m = round(subsample * n)`` samples drawn without replacement. The stability criteria are
computed on the resamples; ``mean_score`` is the mean over the resamples whose fit is not
trivial, and a grid point where more than half the fits are trivial or failed is not eligible
(``mean_score = -inf``, ranked last). The other criteria judge one clustering: by default
(``score_on="full"``) the fit of the grid point to all the data, which is not eligible when it
is trivial or failed (``score_on="subsamples"``: the mean over the resamples, as for
stability). When no grid point is eligible, :meth:`LabelFreeSearch.fit` raises ``ValueError``
(there is nothing to choose from).
"""

from __future__ import annotations

import numbers
import pickle
import time
import warnings
from collections import Counter
from types import SimpleNamespace

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import ParameterGrid
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .criteria import (
    CRITERIA,
    _params,
    _positive_number,
    estimator_kernel,
    is_trivial,
    kernel_silhouette,
    laplacian_eigengap,
    n_clusters_of,
    pair_stability,
    plateau_scores,
    silhouette,
    transfer_stability,
)

__all__ = ["LabelFreeSearch"]

# criteria computed inside each fitting task (they need the fitted estimator)
_PER_FIT = ("silhouette", "kernel_silhouette", "objective", "eigengap")
# criteria that compare fits of different subsamples
_RESAMPLING = ("stability", "transfer_stability")
# n_choice_samples="auto": at most this many choice samples
_AUTO_CHOICE_SAMPLES = 5


# ----------------------------------------------------------------------------------------
# One fitting task
# ----------------------------------------------------------------------------------------
def _is_pairwise(estimator):
    try:
        from sklearn.utils import get_tags

        return bool(get_tags(estimator).input_tags.pairwise)
    except Exception:  # pragma: no cover
        return _params(estimator).get("kernel") == "precomputed"


def _take(X, rows, cols, pairwise):
    if pairwise:
        return X[np.ix_(rows, cols)]
    return X[rows]


def _fit_labels(est, X):
    if hasattr(est, "fit_predict"):
        labels = est.fit_predict(X)
    else:
        est.fit(X)
        labels = est.labels_ if hasattr(est, "labels_") else est.predict(X)
    return np.asarray(labels).ravel()


def _transfer(est, X, idx, labels, pairwise):
    """Labels of all points: own on ``idx``, predicted (or nearest neighbour) elsewhere."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    out[idx] = labels
    rest = np.setdiff1d(np.arange(n), idx)
    if rest.size == 0:
        return out
    if hasattr(est, "predict"):
        try:
            out[rest] = np.asarray(est.predict(_take(X, rest, idx, pairwise))).ravel()
            return out
        except Exception:  # noqa: BLE001, S110 - predict not usable here: nearest neighbour
            pass
    if pairwise:  # nearest = largest similarity
        out[rest] = labels[np.argmax(X[np.ix_(rest, idx)], axis=1)]
    else:
        knn = KNeighborsClassifier(n_neighbors=1).fit(X[idx], labels)
        out[rest] = knn.predict(X[rest])
    return out


def _criterion_value(name, est, Xs, labels, pairwise, seed):
    """A per-fit criterion; returns ``(value, note)`` (note: a fallback/why-NaN message)."""
    if is_trivial(labels):
        return np.nan, None
    if name == "silhouette":
        if pairwise:
            return kernel_silhouette(Xs, labels), None
        return silhouette(Xs, labels), None
    if name == "kernel_silhouette":
        K, kind = (Xs, "precomputed") if pairwise else estimator_kernel(est, Xs)
        if K is None:
            return silhouette(Xs, labels), f"kernel_silhouette fell back to the input space: {kind}"
        if kind == "linear":
            return silhouette(Xs, labels), None
        return kernel_silhouette(K, labels), None
    if name == "objective":
        return float(est.objective_contrast(Xs, random_state=seed)), None
    if name == "eigengap":
        K, kind = (Xs, "precomputed") if pairwise else estimator_kernel(est, Xs)
        if K is None or kind == "linear":
            return np.nan, f"eigengap needs an RBF or precomputed kernel: {kind}"
        return laplacian_eigengap(K, n_clusters_of(labels)), None
    raise ValueError(name)  # pragma: no cover


def _seed_for(base, *key):
    return int(np.random.default_rng([base, *key]).integers(np.iinfo(np.int32).max))


def _subsample(base, r, n, m):
    rng = np.random.default_rng([base, r, 0])
    if m >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, m, replace=False))


def _fit_task(estimator, params, X, idx, seed, per_fit, transfer, pairwise, set_seed):
    est = clone(estimator).set_params(**params)
    if set_seed:
        est.set_params(random_state=seed)
    Xs = _take(X, idx, idx, pairwise)
    out = {"error": None, "warnings": [], "labels": None, "transfer": None,
           "scores": {}, "notes": [], "fit_time": np.nan, "score_time": 0.0, "n_iter": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            labels = _fit_labels(est, Xs)
        except Exception as exc:  # a failed fit is reported, not raised (see fit)
            out["error"] = f"{type(exc).__name__}: {exc}"
            try:  # sent back from a worker only when it can be (to re-raise it as it was)
                pickle.loads(pickle.dumps(exc))
                out["exception"] = exc
            except Exception:  # noqa: BLE001
                pass
            out["fit_time"] = time.perf_counter() - t0
            out["warnings"] = _summarize_caught(caught)
            return out
        out["fit_time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out["labels"] = labels
        out["n_iter"] = getattr(est, "n_iter_", None)
        for name in per_fit:
            try:
                value, note = _criterion_value(name, est, Xs, labels, pairwise, seed)
            except Exception as exc:
                value, note = np.nan, f"{name} failed: {type(exc).__name__}: {exc}"
            out["scores"][name] = value
            if note:
                out["notes"].append(note)
        if transfer:
            out["transfer"] = _transfer(est, X, idx, labels, pairwise)
        out["score_time"] = time.perf_counter() - t0
    out["warnings"] = _summarize_caught(caught)
    return out


def _summarize_caught(caught):
    return [(w.category, str(w.message).splitlines()[0][:200]) for w in caught]


def _count(t):
    return np.nan if t["labels"] is None else n_clusters_of(t["labels"])


def _trivial(t):
    return t["labels"] is None or is_trivial(t["labels"])


# ----------------------------------------------------------------------------------------
# The search
# ----------------------------------------------------------------------------------------
def _check_grid(param_grid, estimator):
    grids = [param_grid] if isinstance(param_grid, dict) else param_grid
    if not isinstance(grids, (list, tuple)) or len(grids) == 0:
        raise ValueError(
            "param_grid is empty: pass a dict {name: [values, ...]} or a non-empty list of "
            "such dicts."
        )
    valid = set(estimator.get_params(deep=True))
    for g in grids:
        if not isinstance(g, dict) or len(g) == 0:
            raise ValueError(
                f"param_grid contains an empty or non-dict entry ({g!r}); every entry must be "
                "a non-empty dict {name: [values, ...]}."
            )
        for name, values in g.items():
            if name not in valid:
                raise ValueError(
                    f"param_grid names {name!r}, which {type(estimator).__name__} does not "
                    f"have. Valid parameters: {sorted(valid)}."
                )
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                raise ValueError(
                    f"param_grid[{name!r}] must be a list of values; got {values!r}."
                )
            if len(values) == 0:
                raise ValueError(f"param_grid[{name!r}] is an empty list of values.")
    return list(ParameterGrid(grids))


def _width_param(candidates):
    names = set().union(*(c.keys() for c in candidates))
    if "gamma" in names:
        return "gamma"
    numeric = [
        n for n in names
        if all(_positive_number(c.get(n)) for c in candidates if n in c)
        and len({c[n] for c in candidates if n in c}) > 1
    ]
    if len(numeric) == 1:
        return numeric[0]
    raise ValueError(
        "criterion='plateau' needs one width parameter along which to look for the plateau: "
        f"'gamma' in the grid, or a single numeric parameter that varies; got {sorted(names)}."
    )


def _best_index(means, n_clusters, tolerance=0.0, second=None, atol=1e-12):
    """The selection rule of :class:`LabelFreeSearch`.

    Grid points whose score is within ``tolerance`` (plus ``atol``) of the largest are tied;
    among them the largest ``second`` score wins (when given), then the most clusters, then
    the first grid point.
    """
    means = np.asarray(means, dtype=float)
    best = np.max(means)
    tied = np.flatnonzero(means >= best - tolerance - atol)
    if second is not None:
        s2 = np.asarray(second, dtype=float)[tied]
        s2 = np.where(np.isfinite(s2), s2, -np.inf)
        if np.isfinite(s2).any():
            tied = tied[s2 >= s2.max() - atol]
    k = np.nan_to_num(np.asarray(n_clusters, dtype=float)[tied], nan=-np.inf)
    return int(tied[np.flatnonzero(k == k.max())[0]])


class LabelFreeSearch(ClusterMixin, BaseEstimator):
    """Choose a clusterer's parameters from a grid without labels.

    Every grid point is scored by the criterion: the stability criteria fit it on
    ``n_resamples`` random subsamples of the data (the same subsamples and estimator seeds at
    every grid point), the criteria that judge one clustering score its fit to all the data
    (``score_on="full"``) or average over the subsamples. The grid point with the largest
    (mean) score is kept. Ties (scores within
    ``tolerance`` of the best; exactly equal scores by default, e.g. several perfectly stable
    grid points) go to the largest score of the second criterion when several are given,
    then to the grid point with more clusters on average, then to the first in grid order:
    among equally good answers the finest, which counters stability's preference for few
    clusters. The criteria are defined in :mod:`mmcedu.model_selection`.

    Parameters
    ----------
    estimator : estimator object
        A clusterer with ``fit_predict`` or ``fit`` and ``labels_`` (any mmcedu estimator,
        :class:`~sklearn.cluster.KMeans`, :class:`~sklearn.cluster.SpectralClustering`,
        :class:`~sklearn.cluster.AgglomerativeClustering`, :class:`~sklearn.cluster.DBSCAN`,
        :class:`~sklearn.cluster.HDBSCAN`, :class:`~sklearn.mixture.GaussianMixture`, ...).
    param_grid : dict or list of dicts, default=None
        As in :class:`~sklearn.model_selection.GridSearchCV`; ``n_clusters`` may be in it
        (the number of clusters is then chosen by the criterion too). ``None``: the grid of
        the estimator's recommended rule, ``estimator.label_free_rule(X)`` (every mmcedu
        estimator has one; its docstring states it).
    criterion : str or list of str, default=None
        One of :data:`~mmcedu.criteria.CRITERIA`, or several: all are computed from the same
        fits and reported in ``cv_results_`` with the criterion's name as suffix; the first
        one chooses and the second one breaks its ties (see ``tolerance``). ``None``: the
        criterion of the estimator's recommended rule, else ``"stability"``.
    n_resamples : int, default=10
        Subsamples per grid point (``"stability"`` compares all pairs of them and needs
        at least 2).
    subsample : float in (0, 1], default=0.8
        Fraction of the samples in each subsample (Ben-Hur et al. use 0.8). With 1.0 every
        resample fits all the data and differs only in the estimator's seed.
    n_jobs : int, default=None
        Number of joblib workers over the (grid point, resample) fits. The results do not
        depend on it: each fit's subsample and seed derive from ``(random_state, resample)``.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsamples, the permutations of ``"transfer_stability"`` and
        ``"objective"`` and, when the estimator has a ``random_state`` parameter set to
        ``None``, the estimator (a different seed per resample, the same at every grid point).
    score_on : {"full", "subsamples"}, default="full"
        Where the criteria that judge one clustering (``"silhouette"``,
        ``"kernel_silhouette"``, ``"objective"``, ``"eigengap"``, ``"plateau"``) are computed:
        ``"full"``: on one fit of every grid point to all the data (seeded like the refit, so
        the scored clustering is the one ``refit`` returns); ``"subsamples"``: averaged over
        the subsample fits. The stability criteria always use the subsamples; with only
        full-data criteria no subsample is fitted.
    tolerance : float, default=None
        Grid points whose mean score (first criterion) is within ``tolerance`` of the best
        count as equally good; with several criteria the second one chooses among them.
        ``None``: the tolerance of the estimator's recommended rule when ``criterion`` is
        ``None`` too, else 0.
        Example: ``criterion=["transfer_stability", "objective"], tolerance=0.1`` keeps the
        grid points nearly as stable as the most stable one and takes the one whose own
        objective is best relative to chance.
    max_samples : int, "auto" or None, default="auto"
        Large data: the search chooses on random subsets ("choice samples") of this many
        samples (drawn with ``random_state``) and then fits the chosen grid point once on all
        of ``X`` (``labels_``), so the cost of the choice does not grow with ``n``.
        ``"auto"``: ``min(n_samples, 2000)``, or the smaller size an estimator's rule states
        (:class:`~mmcedu.SDPMMC`: 500); ``None``: every sample (one choice sample,
        ``X`` itself). The estimator's own large-data parameters (``n_components``,
        ``solver``, ...) apply to the final fit.
    n_choice_samples : int or "auto", default="auto"
        With ``max_samples`` below ``n_samples``: the number ``B`` of choice samples
        (disjoint when ``B * max_samples <= n_samples``). The grid comes from the first; every
        grid point is scored on each, its mean score is the mean over every split of every
        choice sample, and it is eligible when eligible, with a defined score, in more than
        half of them. Pooling divides a score's sampling noise by about ``sqrt(B)``, so that
        near-ties are not decided by the draw. ``"auto"``: ``min(5, n_samples //
        max_samples)``, at least 1. Ignored when the search uses all of ``X``.
    refit : bool, default=True
        Fit the best grid point on all the data (``best_estimator_``, ``labels_``).
    verbose : int, default=0
        ``> 0`` prints one line per grid point; ``> 1`` also joblib's progress.

    Attributes
    ----------
    cv_results_ : dict of ndarrays
        ``params``, ``param_<name>`` (masked arrays), ``mean_score``, ``std_score``,
        ``rank_score``, ``split<i>_score`` (with several criteria: ``..._score_<criterion>``),
        ``mean_n_clusters``, ``std_n_clusters``, ``n_trivial`` (trivial or failed fits),
        ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``, ``std_score_time``; with
        ``score_on="full"``: ``full_n_clusters``, and the full-data criteria have
        ``mean_score`` (the full fit's score) and ``rank_score`` but no split scores
        (``std_score`` is NaN with one choice sample; with several, the spread of their
        full fits' scores). Without subsample fits (only full-data criteria) the
        ``*_n_clusters`` of subsamples and ``n_trivial`` are absent.
    best_index_ : int
    best_params_ : dict
    best_score_ : float
    best_estimator_ : estimator (``refit=True``)
    labels_ : ndarray of shape (n_samples,) (``refit=True``)
    n_clusters_ : int
        Clusters in ``labels_`` (noise ``-1`` not counted).
    criteria_ : list of str
        The criteria used (the first chose).
    tolerance_ : float
        The tolerance used.
    n_splits_ : int
        Number of subsamples fitted per grid point, over all choice samples (0 when no
        criterion needs them).
    sample_indices_ : ndarray of shape (n_choice_samples_, max_samples) or None
        The rows of ``X`` of each choice sample (``None``: the search chose on all of ``X``;
        see ``max_samples``).
    n_choice_samples_ : int
        Number of choice samples (1 when the search chose on all of ``X``).
    resample_indices_ : list of ndarrays
        The subsample of each resample (rows of ``X``; per choice sample in turn).
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.cluster import KMeans
    >>> from sklearn.datasets import make_blobs
    >>> from mmcedu.model_selection import LabelFreeSearch
    >>> X, _ = make_blobs(200, centers=3, random_state=0)
    >>> search = LabelFreeSearch(KMeans(n_init=4), {"n_clusters": [2, 3, 4, 5]},
    ...                          criterion="silhouette", n_resamples=4, random_state=0)
    >>> search.fit(X).best_params_
    {'n_clusters': 3}

    An mmcedu estimator brings its own recommended grid, criterion and tolerance:

    >>> from mmcedu import UMCRLS
    >>> from mmcedu.datasets import two_circles
    >>> X, y = two_circles(120, noise=0.05, random_state=0)
    >>> search = LabelFreeSearch(UMCRLS(n_clusters=2), n_resamples=3, random_state=0).fit(X)
    >>> search.criteria_, search.tolerance_
    (['transfer_stability', 'objective'], 0.1)
    """


    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list, None],
        "criterion": [StrOptions(set(CRITERIA)), list, tuple, None],
        "n_resamples": [Interval(numbers.Integral, 1, None, closed="left")],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right")],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "score_on": [StrOptions({"full", "subsamples"})],
        "tolerance": [Interval(numbers.Real, 0, None, closed="left"), None],
        "max_samples": [Interval(numbers.Integral, 3, None, closed="left"), StrOptions({"auto"}),
                        None],
        "n_choice_samples": [Interval(numbers.Integral, 1, None, closed="left"),
                             StrOptions({"auto"})],
        "refit": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        param_grid=None,
        *,
        criterion=None,
        n_resamples=10,
        subsample=0.8,
        n_jobs=None,
        random_state=None,
        score_on="full",
        tolerance=None,
        max_samples="auto",
        n_choice_samples="auto",
        refit=True,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.criterion = criterion
        self.n_resamples = n_resamples
        self.subsample = subsample
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.score_on = score_on
        self.tolerance = tolerance
        self.max_samples = max_samples
        self.n_choice_samples = n_choice_samples
        self.refit = refit
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = _is_pairwise(self.estimator)
        return tags

    # -- the rule: grid, criteria, tolerance -------------------------------------------
    def _rule(self, X):
        """``(candidates, criteria, tolerance)``: the given ones, else the estimator's rule."""
        rule = {}
        if (self.param_grid is None or self.criterion is None) and hasattr(
            self.estimator, "label_free_rule"
        ):
            rule = self.estimator.label_free_rule(X)
        grid = self.param_grid if self.param_grid is not None else rule.get("param_grid")
        if grid is None:
            raise ValueError(
                f"param_grid=None takes the estimator's recommended grid, but "
                f"{type(self.estimator).__name__} has no label_free_rule(X); pass a grid, "
                "e.g. {'n_clusters': [2, 3, 4, 5]}."
            )
        crit = self.criterion if self.criterion is not None else rule.get("criterion", "stability")
        crit = [crit] if isinstance(crit, str) else list(crit)
        if not crit:
            raise ValueError("criterion is empty; choose from " + ", ".join(CRITERIA) + ".")
        for c in crit:
            if c not in CRITERIA:
                raise ValueError(f"Unknown criterion {c!r}; choose from {', '.join(CRITERIA)}.")
        if len(set(crit)) != len(crit):
            raise ValueError(f"criterion lists a name twice: {crit}.")
        if self.tolerance is not None:
            tolerance = float(self.tolerance)
        else:
            tolerance = float(rule.get("tolerance", 0.0)) if self.criterion is None else 0.0
        return _check_grid(grid, self.estimator), crit, tolerance

    def _plan(self, n, crit):
        """The subsamples, seeds and per-fit criteria of a search over ``n`` samples."""
        R = self.n_resamples
        if ("stability" in crit or "transfer_stability" in crit) and R < 2:
            raise ValueError("The stability criteria compare pairs of fits: n_resamples >= 2.")
        m = int(round(self.subsample * n))
        if m < 3:
            raise ValueError(
                f"subsample={self.subsample} of n_samples={n} leaves {m} samples per fit; at "
                "least 3 are needed. Use a larger subsample."
            )
        if "objective" in crit and not hasattr(self.estimator, "objective_contrast"):
            raise ValueError(
                f"criterion='objective' needs an estimator with an objective_contrast(X) method "
                f"(UMCRLS, GMMC, SDPMMC, EMMC), not {type(self.estimator).__name__}; use "
                "'stability' or 'silhouette'."
            )
        base = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        on_full = self.score_on == "full"
        full_scored = [c for c in crit if c not in _RESAMPLING] if on_full else []
        R = int(R) if (any(c in _RESAMPLING for c in crit) or not on_full) else 0
        params = self.estimator.get_params(deep=False)
        return SimpleNamespace(
            n=n, m=m, R=R, base=base, full_scored=full_scored,
            subsets=[_subsample(base, r, n, m) for r in range(R)],
            seeds=[_seed_for(base, r, 1) for r in range(R)],
            full_seed=_seed_for(base, 0, 2),  # also the refit's seed; independent of R
            set_seed="random_state" in params and params["random_state"] is None,
            per_fit_sub=[] if on_full else [c for c in crit if c in _PER_FIT],
            per_fit_full=[c for c in full_scored if c in _PER_FIT],
            transfer="transfer_stability" in crit,
            pairwise=_is_pairwise(self.estimator),
        )

    # -- fit -----------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Score every grid point and (``refit=True``) fit the best one on all of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) for an
            estimator with ``kernel="precomputed"``
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=None)
        samples = self._choice_samples(X)
        candidates, crit, tolerance = self._rule(samples[0])
        parts = []
        for Xc in samples:
            plan = self._plan(Xc.shape[0], crit)
            res, full = self._fit_grid(Xc, candidates, plan)
            parts.append((res, full, self._score(candidates, crit, res, full, plan)))
        res, full, scores, counts, trivial, full_counts = self._combine(parts, crit)
        self.cv_results_ = self._results(
            candidates, crit, scores, counts, trivial, res, full, full_counts, plan.full_scored
        )
        self._choose(candidates, crit, tolerance, plan, len(samples))
        if self.sample_indices_ is not None:
            self.resample_indices_ = [
                rows_b[sub] for rows_b in self.sample_indices_ for sub in plan.subsets
            ]
        if self.refit:
            est = clone(self.estimator).set_params(**self.best_params_)
            if plan.set_seed:
                est.set_params(random_state=plan.full_seed)
            self.labels_ = _fit_labels(est, X)
            self.best_estimator_ = est
            self.n_clusters_ = n_clusters_of(self.labels_)
        return self

    def _choice_samples(self, X):
        """The sample(s) the search chooses on: ``[X]``, or ``B`` subsets of ``m`` rows each.

        ``m`` is ``max_samples`` and ``B`` is ``n_choice_samples``. The subsets are disjoint
        when ``B m <= n`` (consecutive blocks of one random draw), else drawn independently.
        """
        n = X.shape[0]
        auto = getattr(self.estimator, "_label_free_max_samples", 2000)
        m = min(n, auto) if self.max_samples == "auto" else (self.max_samples or n)
        self.sample_indices_ = None
        if m >= n:
            self.n_choice_samples_ = 1
            return [X]
        if self.n_choice_samples == "auto":
            B = max(1, min(_AUTO_CHOICE_SAMPLES, n // m))
        else:
            B = int(self.n_choice_samples)
        base = int(check_random_state(self.random_state).randint(2**31 - 1))
        if B * m <= n:
            drawn = np.random.default_rng(_seed_for(base, 0, 4)).choice(n, B * m, replace=False)
            blocks = [drawn[b * m:(b + 1) * m] for b in range(B)]
        else:
            blocks = [np.random.default_rng(_seed_for(base, b, 4)).choice(n, m, replace=False)
                      for b in range(B)]
        self.sample_indices_ = np.sort(np.asarray(blocks), axis=1)
        self.n_choice_samples_ = B
        pairwise = _is_pairwise(self.estimator)
        return [_take(X, rows, rows, pairwise) for rows in self.sample_indices_]

    @staticmethod
    def _combine(parts, crit):
        """The scores of several choice samples as one search's (see ``n_choice_samples``).

        Per criterion the per-split scores of the samples sit side by side; a NaN score in a
        sample (e.g. an estimator's guard) counts against eligibility there. Every fit of a
        grid point is in its row of the returned ``res``; ``full`` is ``None``.
        """
        if len(parts) == 1:
            res, full, (scores, counts, trivial, full_counts) = parts[0]
            return res, full, scores, counts, trivial, full_counts
        res = [sum((res[g] + ([full[g]] if full else []) for res, full, _ in parts), [])
               for g in range(len(parts[0][0]))]
        counts = np.hstack([p[2][1] for p in parts])
        trivial = np.hstack([p[2][2] for p in parts])
        full_counts = None
        if parts[0][2][3] is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                full_counts = np.nanmean(np.column_stack([p[2][3] for p in parts]), axis=1)
        scores = {}
        for c in crit:
            S = np.hstack([p[2][0][c][0] for p in parts])
            votes = 0
            for p in parts:  # eligible in a sample: as there, and a defined (finite) score
                S_b, eligible_b = p[2][0][c]
                votes = votes + (eligible_b & np.isfinite(S_b).any(axis=1))
            scores[c] = (S, votes > len(parts) / 2)
        return res, None, scores, counts, trivial, full_counts

    def _fit_grid(self, X, candidates, plan):
        """Every (grid point, resample) fit and every full-data fit, as joblib tasks."""
        G, R = len(candidates), plan.R
        tasks = [(g, r) for g in range(G) for r in range(R)]
        if plan.full_scored:
            tasks += [(g, -1) for g in range(G)]
        everything = np.arange(plan.n)
        results = Parallel(n_jobs=self.n_jobs, verbose=max(0, int(self.verbose) - 1))(
            delayed(_fit_task)(
                self.estimator, candidates[g], X,
                plan.subsets[r] if r >= 0 else everything,
                plan.seeds[r] if r >= 0 else plan.full_seed,
                plan.per_fit_sub if r >= 0 else plan.per_fit_full,
                plan.transfer and r >= 0, plan.pairwise, plan.set_seed,
            )
            for g, r in tasks
        )
        res = [[results[g * R + r] for r in range(R)] for g in range(G)]
        full = [results[G * R + g] for g in range(G)] if plan.full_scored else None
        self._report_problems(
            [row + ([full[g]] if full else []) for g, row in enumerate(res)], candidates
        )
        if all(t["error"] is not None for t in results):
            exc = results[0].get("exception")
            if isinstance(exc, Exception):
                exc.add_note("Every fit of LabelFreeSearch failed; this is the first error.")
                raise exc
            raise ValueError(f"Every fit failed; the first error: {results[0]['error']}")
        return res, full

    def _score(self, candidates, crit, res, full, plan):
        """Per criterion, the per-split scores ``(G, splits)`` and the eligible grid points."""
        G, R = len(candidates), plan.R
        width = _width_param(candidates) if "plateau" in crit else None
        counts = np.array([[_count(t) for t in row] for row in res], dtype=float).reshape(G, R)
        trivial = np.array([[_trivial(t) for t in row] for row in res], dtype=bool).reshape(G, R)
        full_counts = full_trivial = None
        if full:
            full_counts = np.array([_count(t) for t in full], dtype=float)
            full_trivial = np.array([_trivial(t) for t in full])
        scores = {}
        for c in crit:
            if c in plan.full_scored:
                if c == "plateau":
                    S = self._plateau(candidates, width, full_counts[:, None], plan.n, G, 1)
                else:
                    S = np.array([[t["scores"].get(c, np.nan)] for t in full], dtype=float)
                S[full_trivial] = np.nan
                scores[c] = (S, ~full_trivial)
                continue
            if c in _PER_FIT:
                S = np.array([[t["scores"].get(c, np.nan) for t in row] for row in res],
                             dtype=float).reshape(G, R)
            elif c == "stability":
                S = self._stability(res, plan.subsets, G, R)
            elif c == "transfer_stability":
                S = self._transfer_stability(res, plan.base, G, R)
            else:  # plateau on the subsamples
                S = self._plateau(candidates, width, counts, plan.m, G, R)
            S[trivial] = np.nan
            scores[c] = (S, trivial.sum(axis=1) <= R / 2)
        return scores, counts, trivial, full_counts

    def _choose(self, candidates, crit, tolerance, plan, n_sets=1):
        """``best_index_`` and the other results of the choice (or a ValueError: none eligible)."""
        res = self.cv_results_
        means = res["mean_score" if len(crit) == 1 else f"mean_score_{crit[0]}"]
        k_key = "full_n_clusters" if (crit[0] in plan.full_scored or not plan.R) else "mean_n_clusters"
        if not np.isfinite(means).any():
            raise ValueError(
                f"criterion {crit[0]!r} cannot be computed at any grid point: at every grid "
                "point the fits gave a trivial clustering (one cluster, or one per sample; for "
                "scores on subsamples: more than half of them) or failed, or the criterion was "
                "undefined (see the warnings). Numbers of clusters per grid point: "
                f"{np.round(res[k_key], 2).tolist()}. Widen the grid (e.g. larger kernel widths "
                "gamma or another n_clusters) or choose another criterion."
            )
        second = res[f"mean_score_{crit[1]}"] if len(crit) > 1 else None
        self.best_index_ = _best_index(means, res[k_key], tolerance, second)
        self.best_params_ = dict(candidates[self.best_index_])
        self.best_score_ = float(means[self.best_index_])
        self.criteria_ = crit
        self.tolerance_ = tolerance
        self.n_splits_ = plan.R * n_sets
        self.resample_indices_ = plan.subsets
        if self.verbose:
            for g, c in enumerate(candidates):
                mark = "*" if g == self.best_index_ else " "
                print(f"{mark} {c}  score={means[g]:.4f}  clusters={res[k_key][g]:.2f}")

    @staticmethod
    def _pair_means(G, R, agreement):
        """Per grid point and resample, the mean of ``agreement(g, r, t)`` over the other
        resamples ``t`` (NaN pairs left out; NaN when none is left)."""
        S = np.full((G, R), np.nan)
        for g in range(G):
            P = np.full((R, R), np.nan)
            for r in range(R):
                for t in range(r + 1, R):
                    P[r, t] = P[t, r] = agreement(g, r, t)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                S[g] = np.nanmean(P, axis=1)
        return S

    def _stability(self, res, subsets, G, R):
        def agreement(g, r, t):
            a, b = res[g][r]["labels"], res[g][t]["labels"]
            if a is None or b is None:
                return np.nan
            common, ia, ib = np.intersect1d(subsets[r], subsets[t], return_indices=True)
            return pair_stability(a[ia], b[ib]) if common.size >= 2 else np.nan

        return self._pair_means(G, R, agreement)

    def _transfer_stability(self, res, base, G, R):
        def agreement(g, r, t):
            a, b = res[g][r]["transfer"], res[g][t]["transfer"]
            if a is None or b is None:
                return np.nan
            rs = np.random.RandomState(_seed_for(base, r, t, 3))
            return transfer_stability(a, b, random_state=rs)

        return self._pair_means(G, R, agreement)

    @staticmethod
    def _plateau(candidates, width, counts, m, G, R):
        S = np.full((G, R), np.nan)
        groups = {}
        for g, c in enumerate(candidates):
            if width not in c:
                continue
            key = repr(sorted((k, repr(v)) for k, v in c.items() if k != width))
            groups.setdefault(key, []).append(g)
        for members in groups.values():
            w = np.array([float(candidates[g][width]) for g in members])
            for r in range(R):
                cnt = counts[members, r]
                ok = np.isfinite(cnt)
                if ok.sum() == 0:
                    continue
                vals = plateau_scores(w[ok], cnt[ok], m)
                S[np.asarray(members)[ok], r] = vals
        return S

    def _results(self, candidates, crit, scores, counts, trivial, res, full, full_counts,
                 full_scored):
        G = len(candidates)
        R = counts.shape[1]
        out = {"params": candidates}
        names = sorted(set().union(*(c.keys() for c in candidates)))
        for name in names:
            arr = np.ma.MaskedArray(np.empty(G, dtype=object), mask=True)
            for g, c in enumerate(candidates):
                if name in c:
                    arr[g] = c[name]
            out[f"param_{name}"] = arr
        rows = [list(row) + ([full[g]] if full else []) for g, row in enumerate(res)]
        fit_t = np.array([[t["fit_time"] for t in row] for row in rows], dtype=float)
        score_t = np.array([[t["score_time"] for t in row] for row in rows], dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out["mean_fit_time"] = np.nanmean(fit_t, axis=1)
            out["std_fit_time"] = np.nanstd(fit_t, axis=1)
            out["mean_score_time"] = np.nanmean(score_t, axis=1)
            out["std_score_time"] = np.nanstd(score_t, axis=1)
            if R:
                out["mean_n_clusters"] = np.nanmean(counts, axis=1)
                out["std_n_clusters"] = np.nanstd(counts, axis=1)
                out["n_trivial"] = trivial.sum(axis=1)
        if full_counts is not None:
            out["full_n_clusters"] = full_counts
        for c in crit:
            sfx = "" if len(crit) == 1 else f"_{c}"
            S, eligible = scores[c]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(S, axis=1)
                std = np.nanstd(S, axis=1) if S.shape[1] > 1 else np.full(G, np.nan)
            ok = eligible & np.isfinite(mean)
            mean = np.where(ok, mean, -np.inf)
            if c not in full_scored:
                for r in range(S.shape[1]):
                    out[f"split{r}_score{sfx}"] = S[:, r]
            out[f"mean_score{sfx}"] = mean
            out[f"std_score{sfx}"] = np.where(ok, std, np.nan)
            out[f"rank_score{sfx}"] = rankdata(-mean, method="min").astype(np.int32)
        return out

    def _report_problems(self, res, candidates):
        total = sum(len(row) for row in res)
        errors = [(g, r["error"]) for g, row in enumerate(res) for r in row if r["error"]]
        if errors:
            warnings.warn(
                f"{len(errors)} of {total} fits failed; they count as trivial. First failure "
                f"(at {candidates[errors[0][0]]}): {errors[0][1]}",
                FitFailedWarning,
                stacklevel=3,
            )
        caught = Counter()
        for row in res:
            for r in row:
                for cat, msg in set(r["warnings"]):
                    caught[(cat, msg)] += 1
        by_cat = {}
        for (cat, msg), k in caught.items():
            by_cat.setdefault(cat, []).append((k, msg))
        for cat, items in by_cat.items():
            items.sort(key=lambda t: -t[0])
            k, msg = items[0]
            more = f" (and {len(items) - 1} other messages)" if len(items) > 1 else ""
            warnings.warn(
                f"{k} of {total} fits warned: {msg}{more}",
                cat if isinstance(cat, type) and issubclass(cat, Warning) else UserWarning,
                stacklevel=3,
            )
        notes = Counter(note for row in res for r in row for note in r["notes"])
        for note, k in notes.items():
            warnings.warn(f"{k} of {total} fits: {note}", UserWarning, stacklevel=3)

    # -- delegation ----------------------------------------------------------------------
    def _best_has(name):  # a decorator factory, not a method
        def check(self):
            check_is_fitted(self, "best_estimator_")
            return hasattr(self.best_estimator_, name)

        return check

    @available_if(_best_has("predict"))
    def predict(self, X):
        """``best_estimator_.predict(X)`` (when the best estimator has ``predict``)."""
        return self.best_estimator_.predict(X)
