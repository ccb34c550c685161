"""Unsupervised multi-class regularized least squares clustering (UMC-RLS): the estimator.

Pahikkala, Airola, Gieseke and Kramer (2012), "Unsupervised multi-class regularized least
squares classification". :class:`UMCRLS` minimises the summed cost of k one-vs-all regularized
least squares classifiers over the labellings by hill climbing. The formulas and the three
searches on a kernel matrix (:func:`hat_matrix`, :func:`rls_cost`, :func:`umc_objective`,
:func:`flip_delta`, :func:`shaking_alpha`, :func:`low_rank_hat_factor`, :func:`run_search`)
are defined in ``mmcedu._umc_rls_search`` and exported here.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._umc_rls_search import (
    _BLOCK_ENTRIES,
    _class_vectors,
    _dense_hat,
    _ExactScorer,
    _hat_factor_inplace,
    _hat_from_eig,
    _held_clusters,
    _initial_labels,
    _LowRankScorer,
    _row_blocks,
    _run,
    _shrinkage,
    _stochastic,
    flip_delta,
    hat_matrix,
    low_rank_hat_factor,
    rls_cost,
    run_search,
    shaking_alpha,
    umc_objective,
)
from ._validation import (
    all_identical,
    check_finite_result,
    check_memory,
    check_n_clusters,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from .balance import BALANCE_WARN_FRACTION
from .exceptions import BalanceWarning, ClusterCountWarning, DegenerateDataWarning
from .kernels import check_kernel_matrix, gamma_grid, kernel_matrix, median_gamma, rbf_kernel
from .metrics import permutation_mean_quadratic

__all__ = ["UMCRLS", "LABEL_FREE_OCTAVES", "hat_matrix", "low_rank_hat_factor", "rls_cost",
           "umc_objective", "flip_delta", "shaking_alpha", "run_search"]

#: Octaves j of the label-free width grid ``gamma = 2^j gamma_0`` (``gamma_0`` the median
#: heuristic) of :meth:`UMCRLS.label_free_rule`.
LABEL_FREE_OCTAVES = tuple(range(-2, 6))
# Algorithm 3 on the low-rank path: a claim of alpha points uses at most this many score
# evaluations (batches of ceil(alpha / _MAX_BATCHES) best points).
_MAX_BATCHES = 64
# The dense path warns about its O(n^3) eigendecomposition from this n on.
_DENSE_SLOW_N = 10_000
# Algorithms 1-2 on the low-rank path warn from this n on (about n moves of O(n r k) each).
_LOW_RANK_DESCENT_SLOW_N = 20_000


def _memory_bytes(n, n_clusters, n_components=None, itemsize=8, n_features=None, kernel="rbf"):
    """The formula of :meth:`UMCRLS.memory_bytes` (``n_components=None``: the dense path)."""
    if n_components is None:
        return int(16 * n * n + 8 * n * (3 * n_clusters + 40) + 8 * 2**20)
    r = min(n_components, n)
    b = itemsize * n * r + n * (itemsize * n_clusters + 72) + 40 * _BLOCK_ENTRIES
    if kernel == "linear":
        b += 16 * n * min(n, max(n if n_features is None else n_features, 1))
    elif kernel == "precomputed":
        b += 8 * n * n
    return int(b)


def _check_psd(s, scale, n, what="precomputed kernel", tol=1e-8):
    lam_min = float(np.min(s))
    if lam_min < -tol * scale * n:
        raise ValueError(f"The {what} is not positive semidefinite: its smallest eigenvalue is "
                         f"{lam_min:.3g} (relative {lam_min / scale:.3g}). Use a valid kernel, "
                         "or clip the negative eigenvalues to zero.")


def _warn_tiny_alpha(alpha, s, who="UMCRLS"):
    """R = I up to round-off when alpha is below the eigenvalues' round-off (n eps s_max)."""
    s_max = float(np.max(s)) if np.size(s) else 0.0
    noise = 100.0 * np.size(s) * np.finfo(float).eps * s_max
    if s_max > 0 and alpha < noise:
        warnings.warn(
            f"{who}: alpha={alpha:.3g} is below the round-off of the kernel's eigenvalues "
            f"(largest {s_max:.3g}, round-off ~{noise:.2g}): R = K (K + alpha I)^-1 is the "
            "identity up to round-off, every labelling has nearly the same cost and the "
            "labels are arbitrary. Use alpha in [2^-10, 2^-1] (the paper's range).",
            DegenerateDataWarning, stacklevel=3)
        return True
    return False


class UMCRLS(ClusterMixin, BaseEstimator):
    """Unsupervised multi-class regularized least squares clustering (UMC-RLS).

    Finds labels ``c`` in {0..k-1}^n that minimise ``Q(c) = sum_h F(p_h(c))`` (eq. 10), the
    summed cost of k one-vs-all regularized least squares classifiers trained on the +-1
    vectors ``p_h(c)`` (eq. 8), by hill climbing with O(1) evaluation of every single-point
    move (Appendix, eq. 13), as in Pahikkala et al. (2012) [1]_. Symbols: n samples,
    k = ``n_clusters`` (the paper's |C|), lambda = ``alpha``, K the kernel matrix,
    ``R = K (K + lambda I)^-1`` (eq. 12), ``F(y) = n - y^T R y`` (Lemma 1, corrected).

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    alpha : float, default=0.125
        Regularization parameter lambda > 0 of eq. (3) (named as in ``KernelRidge``); the
        paper selects it from 2^-10..2^-1.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        ``"precomputed"``: ``X`` is the (n, n) kernel matrix K (square, finite, symmetric
        and positive semidefinite).
    gamma : float, default=None
        RBF parameter of ``K(x, y) = exp(-gamma ||x - y||^2)``; ``None``: the median heuristic
        :func:`mmcedu.kernels.median_gamma`. The paper's width (sigma = 0.5 x the largest
        distance in ``exp(-d^2 / sigma^2)``) is :func:`mmcedu.kernels.max_distance_gamma`.
        Ignored unless ``kernel="rbf"``.
    search : {"shaking", "steepest", "stochastic"}, default="shaking"
        ``"stochastic"``: Algorithm 1 (Stoc-RLS); ``"steepest"``: Algorithm 2 (Steep-RLS);
        ``"shaking"``: Algorithm 3 (UMC-RLS), whose moves are made even when Q rises.
    n_rounds : int, default=20
        The paper's s, the number of shakings: Algorithm 3 runs the rounds i = 0, 1, ..., s
        (``search="shaking"`` only).
    final_descent : bool, default=True
        With ``search="shaking"``: after Algorithm 3, run Algorithm 1 until no single move
        lowers Q. Algorithm 3 ends with every cluster at about n/k samples, in general not a
        local minimum of Q; the descent keeps its basin but lets the sizes follow Q.
        ``False``: the paper's algorithm as printed.
    n_components : int, default=None
        Rank of a kernel approximation. ``None``: the exact R (memory about ``16 n^2`` bytes,
        :meth:`memory_bytes`; time O(n^3)). An int r: a rank-r factor R = L L^T (Nystroem for
        ``"rbf"``, truncated SVD for ``"linear"``, the r leading eigenvectors for
        ``"precomputed"``); memory ``itemsize n r`` plus O(n k), time O(n r^2) for the factor
        and O(n r k) per score evaluation. Algorithm 3 then claims points in at most 64
        batches per claim (one at a time when a claim has <= 64 points).
    dtype : {"float64", "float32"}, default="float64"
        Type of the low-rank factor L: ``"float32"`` halves its memory and the memory traffic
        of each score evaluation; the caches and Q stay float64. Ignored on the dense path.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial labelling (line 1 of Algorithms 1-3) and the Nystroem landmarks.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        ``n_clusters``, or 1 for identical samples.
    objective_ : float
        Q(c) of eq. (10) (under the rank-r kernel when ``n_components`` is set).
    n_iter_ : int
        Single-point moves made (the "steepest descent steps" of Fig. 5), the final
        descent's included.
    converged_ : bool
        A single-move local minimum of Q was reached (Algorithm 3 without the final descent:
        its claims ended before the move limit).
    solver_info_ : dict
        ``"solver"`` (the search), ``"n_iter"``, ``"status"`` (``"converged"`` or
        ``"move limit"``), ``"n_descent_moves"`` (moves of the final descent) and
        ``"n_evaluations"`` (batches of move scores computed: one claim step of Algorithm 3,
        one chunk of Algorithm 1, one step of Algorithm 2; O(n r k) each on the low-rank path).
    gamma_ : float or None
        The RBF parameter used (``None`` for the linear and precomputed kernels).
    n_features_in_ : int

    Warns
    -----
    DegenerateDataWarning
        Identical samples (one cluster), an RBF kernel that is numerically the identity or
        all ones, or an ``alpha`` so small that R is the identity up to round-off.
    ClusterCountWarning
        Fewer distinct samples than ``n_clusters``, or a cluster of a single sample that only
        the rule "every cluster is non-empty" keeps (Q would move that sample).
    BalanceWarning
        With ``final_descent=False``: a descent of Q from the end point of Algorithm 3 would
        move more than 5 % of the samples (the claims of eq. 11 decided the sizes).
    ConvergenceWarning
        The search stopped at its move limit (100 n k + 1000 moves) before a local minimum.
    UserWarning
        A fit that will take minutes: the dense path from n = 10,000 on, Algorithms 1-2 on
        the low-rank path from n = 20,000 on.

    Raises
    ------
    MemoryBudgetError
        Before allocating, when the fit needs more than the memory budget
        (:func:`mmcedu.get_config`); the message names ``n_components``.
    ValueError
        Fewer samples than clusters; squared distances that overflow or underflow; a
        precomputed kernel that is not square, finite, symmetric and positive semidefinite.

    See Also
    --------
    EMMC : alternating optimization of a regularized least-squares (ELM) fit and the labels.
    SDPMMC, GMMC : convex relaxations of maximum margin clustering (two clusters).

    Notes
    -----
    Every search returns k non-empty clusters: Algorithms 1-2 and the final descent make no
    move that empties a cluster, and a cluster left empty by the random start or by the end
    of Algorithm 3 claims the sample whose move costs least.

    Clusters of very different sizes are a limitation of the *search*, not of Q: Algorithm
    3's claims push every cluster towards n/k samples, and single-point moves do not undo
    the split of a large cluster. When small clusters are expected, compare ``objective_``
    with :func:`umc_objective` of a candidate labelling (k-means', say): a lower Q is a
    better answer to the same problem.

    Label-free rule (:meth:`label_free_rule`): the widths ``gamma = 2^j gamma_0``, j = -2..5
    (``gamma_0`` the median heuristic), chosen by transfer stability, near-ties (within 0.1)
    broken by :meth:`objective_contrast`. Q itself always prefers the narrowest kernel; a
    labelling that is stable and fits far better than chance marks a width with real clusters.

    References
    ----------
    .. [1] T. Pahikkala, A. Airola, F. Gieseke, O. Kramer. Unsupervised multi-class
       regularized least squares classification. ICDM 2012.

    Examples
    --------
    >>> from mmcedu import UMCRLS
    >>> from mmcedu.datasets import blobs
    >>> X, y = blobs(n_samples=150, centers=3, random_state=0)
    >>> model = UMCRLS(n_clusters=3, random_state=0).fit(X)
    >>> model.n_clusters_, sorted(set(model.labels_.tolist()))
    (3, [0, 1, 2])
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "search": [StrOptions({"stochastic", "steepest", "shaking"})],
        "n_rounds": [Interval(Integral, 0, None, closed="left")],
        "final_descent": ["boolean"],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": [StrOptions({"float64", "float32"}), type],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, alpha=0.125, kernel="rbf", gamma=None, search="shaking",
                 n_rounds=20, final_descent=True, n_components=None, dtype="float64",
                 random_state=None):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.search = search
        self.n_rounds = n_rounds
        self.final_descent = final_descent
        self.n_components = n_components
        self.dtype = dtype
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def label_free_rule(self, X):
        """The recommended way to choose this estimator's parameters without labels, on ``X``.

        The widths ``gamma = 2^j gamma_0``, j in :data:`LABEL_FREE_OCTAVES` (-2..5),
        chosen by transfer stability; near-ties (within 0.1) go to :meth:`objective_contrast`.

        Returns
        -------
        rule : dict
            ``"param_grid"``: a dict ``{name: [values, ...]}`` for LabelFreeSearch, relative to
            ``X`` where it is a width; ``"criterion"``: a list of LabelFreeSearch criterion
            names (the first chooses, the second breaks ties within ``tolerance``);
            ``"tolerance"``: float.
        """
        return {"param_grid": {"gamma": gamma_grid(X, octaves=LABEL_FREE_OCTAVES)},
                "criterion": ["transfer_stability", "objective"], "tolerance": 0.1}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        ``1 - Q(c) / E_sigma Q(sigma(c))``: ``Q(c) = sum_h (n - p_h^T R p_h)`` (eq. 10) with
        the exact ``R = K (K + alpha I)^-1`` of the kernel of ``X`` (after a low-rank fit
        too), c = ``labels_`` and ``n_clusters`` vectors p_h (an empty cluster's is -e); the
        chance level is its exact mean over the labellings sigma(c) with the same cluster
        sizes (:func:`mmcedu.metrics.permutation_mean_quadratic`). 0: no better than chance;
        1: Q = 0. A ratio because Q of *every* labelling falls as the kernel narrows
        (``R -> I / (1 + alpha)``, ``Q -> k n alpha / (1 + alpha)`` as ``gamma -> inf``):
        raw Q values are not comparable across widths.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            The data of the fit (the kernel matrix for ``kernel="precomputed"``).
        random_state : ignored (the contrast is exact)

        Returns
        -------
        contrast : float
            NaN when the chance level is not positive.
        """
        check_is_fitted(self, "labels_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if X.shape[0] != self.labels_.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but the estimator was fitted on "
                             f"{self.labels_.shape[0]}: pass the data it was fitted on.")
        K = X if self.kernel == "precomputed" else kernel_matrix(X, self.kernel, self.gamma_)
        s, V = np.linalg.eigh((K + K.T) / 2)
        R = (V * _shrinkage(s, float(self.alpha))) @ V.T
        P = _class_vectors(self.labels_, max(self.n_clusters_, self.n_clusters))
        Q, Q_rand = P.size - float(np.sum(P * (R @ P))), P.size - permutation_mean_quadratic(R, P)
        return float(1.0 - Q / Q_rand) if Q_rand > 0 else np.nan

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes of the largest arrays a fit with these parameters holds at once (besides X).

        The fit checks this number against the memory budget before it allocates. Dense path:
        ``16 n^2 + 8 n (3 k + 40) + 8 MiB``: two n x n arrays (the kernel and its eigenvectors,
        LAPACK working in the kernel's memory, then the eigenvectors and R), the k x n caches
        and n-vectors of the search, the median heuristic's sample. Low-rank path (r =
        min(n_components, n)): ``itemsize n r + n (itemsize k + 72) + 40 MiB`` (the factor L,
        the product L G of one score evaluation, the blocks in which L is built), plus
        ``16 n min(n, d)`` for the thin SVD of ``kernel="linear"`` (d = ``n_features``, n
        when ``None``) or ``8 n^2`` for LAPACK's copy of a precomputed kernel.
        """
        return _memory_bytes(n_samples, self.n_clusters, self.n_components,
                             self._check_params().itemsize, n_features, self.kernel)

    def _check_params(self):
        for name in ("n_clusters", "n_rounds", "n_components"):
            if isinstance(getattr(self, name), bool):
                raise ValueError(f"The {name!r} parameter of UMCRLS must be an int, not a bool; "
                                 f"got {getattr(self, name)!r}.")
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}.")
        return dtype

    def _fit_identical(self, X):
        """Every sample identical: one cluster, with the closed-form Q (K = kappa e e^T)."""
        n = X.shape[0]
        warnings.warn(f"UMCRLS: all {n} samples are identical: there is no cluster structure; "
                      "every sample is put in cluster 0 (n_clusters_=1).",
                      DegenerateDataWarning, stacklevel=3)
        kappa = {"rbf": 1.0, "linear": float(X[0] @ X[0])}.get(self.kernel, float(X[0, 0]))
        # K = kappa e e^T: e^T R e = n (n kappa) / (n kappa + lambda), the same for every p_h
        self.objective_ = float(self.n_clusters * n * self.alpha / (n * kappa + self.alpha))
        self.labels_, self.n_clusters_, self.n_iter_ = np.zeros(n, dtype=np.intp), 1, 0
        self.converged_ = True
        self.solver_info_ = {"solver": None, "n_iter": 0, "status": "identical samples",
                             "n_descent_moves": 0, "n_evaluations": 0}
        return self

    def _dense_scorer(self, X, c):
        n = X.shape[0]
        low_rank = format_bytes(_memory_bytes(n, self.n_clusters, 200, 8, X.shape[1], self.kernel))
        check_memory(
            self.memory_bytes(n, X.shape[1]),
            what=f"UMCRLS's dense path (the n x n kernel, its eigenvectors and R for n = {n:,})",
            alternative=(f"Pass n_components (e.g. n_components=200) for the low-rank path: "
                         f"{low_rank} at r = 200, or less with dtype='float32'."))
        if n >= _DENSE_SLOW_N:
            warnings.warn(
                f"UMCRLS: the dense path at n = {n:,} needs an eigendecomposition of the n x n "
                f"kernel, about {9 * float(n) ** 3:.1e} floating-point operations (minutes). "
                "Pass n_components (e.g. 200) for the low-rank path, O(n r^2).",
                UserWarning, stacklevel=3)
        if self.kernel == "precomputed":
            R, s = _dense_hat(X, self.alpha)
            _check_psd(s, max(1.0, float(np.max(np.abs(X)))), n)
        else:
            K = kernel_matrix(X, self.kernel, self.gamma_)
            check_finite_result(
                K, what=f"The {self.kernel} kernel matrix of X",
                hint="the squared distances or inner products overflow; standardize X.")
            if self.kernel == "rbf":
                warn_degenerate_kernel(K, self.gamma_, who="UMCRLS", stacklevel=4)
            # K is dropped before R is formed: at most two n x n arrays live at once
            s, V = eigh(K.T, overwrite_a=True, check_finite=False)  # K.T: Fortran order, no copy
            del K
            R = _hat_from_eig(s, V, self.alpha)
            del V
        _warn_tiny_alpha(self.alpha, np.clip(s, 0.0, None))
        return _ExactScorer(R, c, self.n_clusters, keep_nonempty=True)

    def _low_rank_factor(self, X, r, rng, dtype):
        """Phi (n x r, ``dtype``) with K ~ Phi Phi^T, built block by block."""
        n = X.shape[0]
        if self.kernel == "rbf":
            ny = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=r, random_state=rng).fit(X)
            warn_degenerate_kernel(rbf_kernel(ny.components_, gamma=self.gamma_), self.gamma_,
                                   who="UMCRLS", stacklevel=5)
            Phi = np.empty((n, r), dtype=dtype)
            for rows in _row_blocks(n, r):
                Phi[rows] = ny.transform(X[rows])
            return Phi
        if self.kernel == "linear":
            U, sv, _ = np.linalg.svd(X, full_matrices=False)
            return np.asarray(U[:, :r] * sv[:r], dtype=dtype)
        # precomputed: only the r leading eigenpairs (a truncated eigensolver)
        _check_psd(eigh(X, eigvals_only=True, subset_by_index=[0, 0]),
                   max(1.0, float(np.max(np.abs(X)))), n)
        s, V = eigh(X, subset_by_index=[n - r, n - 1])
        return np.asarray(V * np.sqrt(np.clip(s, 0.0, None)), dtype=dtype)

    def _low_rank_scorer(self, X, c, rng, dtype):
        n, r = X.shape[0], min(self.n_components, X.shape[0])
        check_memory(self.memory_bytes(n, X.shape[1]),
                     what=f"UMCRLS's low-rank path (an n x r factor for n = {n:,}, r = {r})",
                     alternative="Use a smaller n_components, or dtype='float32' (half the factor).")
        if self.search != "shaking" and n >= _LOW_RANK_DESCENT_SLOW_N:
            warnings.warn(f"UMCRLS: search={self.search!r} on the low-rank path at n = {n:,} "
                          "makes about n moves of O(n r k) each (hours). Use search='shaking'.",
                          UserWarning, stacklevel=3)
        L = self._low_rank_factor(X, r, rng, dtype)
        check_finite_result(L, what="The low-rank kernel factor of X",
                            hint="the kernel overflows; standardize X.")
        _warn_tiny_alpha(self.alpha, _hat_factor_inplace(L, self.alpha))
        return _LowRankScorer(L, c, self.n_clusters, keep_nonempty=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` (or the precomputed kernel ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : ignored

        Returns
        -------
        self
        """
        dtype = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        if self.kernel == "precomputed":
            X = check_kernel_matrix(X)
        else:
            check_scale(X)
        n, k = X.shape[0], self.n_clusters
        check_n_clusters(n, k)
        rng = check_random_state(self.random_state)
        if self.kernel == "rbf":
            self.gamma_ = median_gamma(X) if self.gamma is None else float(self.gamma)
        else:
            self.gamma_ = None
        if bool(np.all(X == X[0, 0])) if self.kernel == "precomputed" else all_identical(X):
            return self._fit_identical(X)
        if k > 2 and self.kernel != "precomputed" and np.unique(X, axis=0).shape[0] < k:
            m = np.unique(X, axis=0).shape[0]
            warnings.warn(f"UMCRLS: X has only {m} distinct samples, fewer than n_clusters={k}: "
                          f"copies of one sample are put in different clusters. Ask for at most "
                          f"n_clusters={m}.", ClusterCountWarning, stacklevel=2)
        c = _initial_labels(n, k, rng)
        if self.n_components is None:
            self._search(self._dense_scorer(X, c), None)
        else:
            self._search(self._low_rank_scorer(X, c, rng, dtype), _MAX_BATCHES)
        return self

    def _search(self, scorer, max_batches):
        """Run the search on ``scorer``, set the fitted attributes, warn about the result."""
        n, k = scorer.n, self.n_clusters
        max_iter = 100 * n * k + 1000
        descent = self.final_descent and self.search == "shaking"
        n_iter, converged, descent_moves = _run(scorer, self.search, self.n_rounds,
                                                max_batches=max_batches, max_iter=max_iter,
                                                descent=descent)
        if not converged:
            warnings.warn(f"UMCRLS search={self.search!r} stopped after {n_iter} moves (the "
                          "limit 100 n k + 1000) without reaching a local minimum. Use "
                          "search='shaking'.", ConvergenceWarning, stacklevel=3)
        self.objective_ = scorer.objective()
        check_finite_result(np.asarray(self.objective_), what="UMCRLS's objective Q",
                            hint="the kernel or R overflowed; standardize X or use a larger alpha.")
        self.n_iter_, self.converged_ = int(n_iter), bool(converged)
        self.solver_info_ = {"solver": self.search, "n_iter": self.n_iter_,
                             "status": "converged" if converged else "move limit",
                             "n_descent_moves": int(descent_moves),
                             "n_evaluations": int(scorer.counts["evaluations"])}
        self.labels_ = np.unique(scorer.c, return_inverse=True)[1].astype(np.intp)
        self.n_clusters_ = int(self.labels_.max()) + 1
        if self.n_clusters_ < k:  # not expected: every search keeps the clusters non-empty
            warnings.warn(f"UMCRLS returned {self.n_clusters_} of n_clusters={k} clusters.",
                          ClusterCountWarning, stacklevel=3)
        held = _held_clusters(scorer)
        if held:
            warnings.warn(
                f"UMCRLS: {len(held)} of the n_clusters={k} clusters hold a single sample that "
                "would lower Q by joining another cluster; only the rule that every cluster is "
                "non-empty keeps them. Q prefers fewer clusters here (a kernel too wide or an "
                "alpha too large for this k), or the search is stuck: search='shaking' finds "
                "better labellings.", ClusterCountWarning, stacklevel=3)
        if self.search == "shaking" and not descent and converged:
            twin = scorer.copy()  # a descent from shaking's end point, on a copy: a diagnosis
            m = _stochastic(twin, None, max_iter)[0]
            if m > BALANCE_WARN_FRACTION * n:
                warnings.warn(
                    f"UMCRLS: the shaking rounds, whose claims (eq. 11) force every cluster "
                    f"towards n/k = {n / k:.0f} samples, decided the labels: a descent of Q "
                    f"from their end point would move {m} of {n} samples (sizes "
                    f"{sorted(np.bincount(self.labels_, minlength=k).tolist())} -> "
                    f"{sorted(twin.sizes.tolist())}). Set final_descent=True to let Q decide, "
                    "or check the cluster sizes.", BalanceWarning, stacklevel=3)
