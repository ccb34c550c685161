"""EMMC: maximum margin clustering with an extreme learning machine (Zhang, Xia and Liu).

An extreme learning machine (ELM) maps every input ``x`` through a random hidden layer
``h(x) = g(x W + b)`` (``W``: d x L, ``b``: L, drawn once; ``g``: sigmoid, tanh or relu) and
fits only the output weights ``beta`` by ridge regression on targets ``T`` ((1), (4)):

    min_beta  1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2
    beta = (H^T H + I_L / C)^{-1} H^T T         (primal, L x L system)
         = H^T (H H^T + I_n / C)^{-1} T         (dual, n x n system).

EMMC makes the targets unknown and alternates (the paper's (2) and (5), with ``t`` among the
minimisation variables): fit ``beta`` for fixed labels (the matrix is factorized once per fit,
only ``T`` changes), then choose the labels that minimise ``sum_i ||h(x_i) beta - t_i||^2``
under the class-balance constraint ``|N_p - N_q| <= l``, until the labels stop changing. Both
steps minimise the same objective exactly, so it never increases and the iteration cannot
cycle (ties aside). The end point is a *partial* minimum (``t`` is optimal for ``beta(t)`` and
``beta(t)`` for ``t``): a single label flip can still lower the objective, which the local
search of ``EMMC(local_search=True)`` removes.

Label steps (``f = H beta``):

* one output, two clusters, ``t_i in {-1, +1}``: ``t = sign(f)``, moved the least to meet
  ``|e^T t| <= l`` (:func:`mmcedu.balance.balanced_sign`; Proposition 1);
* one output, ``m > 2`` clusters, ``t_i in {1, ..., m}``: the nearest integer to ``f_i``
  clipped to ``[1, m]`` (not the paper's ``i - 1 < f <= i``);
* ``m`` outputs, one-hot targets: ``argmax_k f_ik``.

When these labels violate the balance constraint, :func:`box_assignment` solves the balanced
assignment exactly in O(n m) memory, with sizes ``lo <= N_k <= hi``, ``hi - lo <= l``
(:func:`mmcedu.balance.count_bounds`: exactly ``|N_1 - N_2| <= l`` for two clusters, a
sufficient condition centred at ``n / m`` for more).

Local search. With ``K = H H^T`` and ``R = K (K + I/C)^{-1} = H (H^T H + I/C)^{-1} H^T`` the
objective minimised over ``beta`` is ``J*(T) = C/2 tr(T^T (I - R) T)`` and ``F = H beta = R T``.
Changing the target of sample ``i`` by ``Delta`` changes it by exactly

    C (Delta . (t_i - f_i) + (1 - R_ii) ||Delta||^2 / 2),

``2 C (t_i f_i - R_ii) = 2 C (1 - R_ii) t_i f_i^(-i)`` for a flip of ``t_i in {-1, +1}``
(``f_i^(-i)`` the leave-one-out output); a swap of two labels adds ``C R_ij ||t_a - t_b||^2``.
Every candidate costs O(1) given ``F`` and ``diag(R)``; a move updates ``F`` by a column of
``R = Z Z^T`` (``Z = H L^{-T}``, ``L`` the Cholesky factor of the primal system: O(n L)).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._emmc_assignment import box_assignment, box_optimality_gap, edge_weights, ordered_cost, shortest_paths
from ._emmc_local_search import _hat_diagonal, _HatMatrix, _local_search, _move_deltas
from ._validation import all_identical, check_finite_result, check_memory, check_n_clusters, check_scale
from .balance import BALANCE_WARN_FRACTION, balanced_sign, count_bounds, max_imbalance
from .exceptions import BalanceWarning, DegenerateDataWarning, KMeansStartWarning
from .metrics import permutation_mean_quadratic

__all__ = [
    "EMMC", "ELMRidge", "hidden_layer", "elm_objective", "assign_labels", "box_assignment",
    "box_optimality_gap", "ordered_cost", "edge_weights", "shortest_paths",
]

_ACTIVATIONS = {
    "sigmoid": lambda Z: 0.5 * (1.0 + np.tanh(0.5 * Z)),  # 1 / (1 + exp(-Z)) without overflow
    "tanh": np.tanh,
    "relu": lambda Z: np.maximum(Z, 0.0),
}

#: Below this ratio of the hidden outputs' spread over the samples to their size, the
#: hidden layer is called (nearly) constant: DegenerateDataWarning.
SATURATION_RATIO = 1e-3

#: A KMeansStartWarning is emitted when a fit from k-means labels (``init="kmeans"``)
#: relabelled more than this fraction of the samples and ended with a larger k-means objective
#: (within-cluster sum of squares in X) than its start.
START_MOVED_FRACTION = 0.05

#: The values of ``C`` that :meth:`EMMC.label_free_rule` compares (half-decade steps).
LABEL_FREE_C = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)

_STANDARDIZE = "Standardize X (sklearn.preprocessing.StandardScaler)"


# --------------------------------------------------------------------------------------------
# The ELM
# --------------------------------------------------------------------------------------------
def hidden_layer(X, W, b, activation="sigmoid"):
    """ELM hidden-layer outputs ``H[i] = h(x_i) = g(x_i W + b)``, shape (n_samples, L)."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}; got {activation!r}.")
    return _ACTIVATIONS[activation](np.asarray(X, dtype=float) @ W + b)


class ELMRidge:
    """Ridge output weights of an ELM, factorized once for many target matrices.

    Solves ``min_beta 1/2 ||beta||^2 + C/2 ||H beta - T||_F^2`` (the paper's (1) and (4)) in
    the ``"primal"`` form ``beta = (H^T H + I_L / C)^{-1} H^T T`` (an L x L Cholesky factor) or
    the ``"dual"`` form ``beta = H^T (H H^T + I_n / C)^{-1} T`` (n x n); ``"auto"`` takes the
    smaller system (primal when ``L <= n``). Both give the same ``beta`` (push-through identity).

    Raises
    ------
    ValueError
        When the system overflows or is not positive definite in floating point (hidden
        outputs far from the unit scale): the message says to standardize ``X`` or to
        decrease ``C``.
    """

    def __init__(self, H, C, form="auto"):
        H = np.asarray(H, dtype=float)
        if H.ndim != 2:
            raise ValueError(f"H must be 2-D; got shape {H.shape}.")
        if not C > 0:
            raise ValueError(f"C must be positive; got {C}.")
        n, L = H.shape
        if form == "auto":
            form = "primal" if L <= n else "dual"
        if form not in ("primal", "dual"):
            raise ValueError(f"form must be 'auto', 'primal' or 'dual'; got {form!r}.")
        self.H, self.C, self.form = H, float(C), form
        A = H.T @ H if form == "primal" else H @ H.T
        hmax = float(np.max(np.abs(H))) if H.size else 0.0
        hint = (
            f"hidden outputs up to {hmax:.3g}, C={self.C:g}. {_STANDARDIZE}, or decrease C "
            "(a larger ridge penalty 1/C)."
        )
        check_finite_result(A, what="The ridge system of the ELM output weights", hint=hint)
        A[np.diag_indices_from(A)] += 1.0 / self.C
        try:
            self._factor = cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError as exc:
            raise ValueError(
                f"The ridge system of the ELM output weights is not positive definite in "
                f"floating point ({hint})"
            ) from exc
        if not np.all(np.isfinite(np.diag(self._factor[0]))):
            raise ValueError(f"The ridge system of the ELM output weights overflowed ({hint})")

    def solve(self, T):
        """Output weights ``beta`` (shape (L,) or (L, m), like ``T``) for targets ``T``."""
        T = np.asarray(T, dtype=float)
        if self.form == "primal":
            return cho_solve(self._factor, self.H.T @ T, check_finite=False)
        return self.H.T @ cho_solve(self._factor, T, check_finite=False)


def elm_objective(H, beta, T, C):
    """The ELM objective ``1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2`` ((1), (4))."""
    xi = np.asarray(T, dtype=float) - H @ beta
    return 0.5 * float(np.sum(beta**2)) + 0.5 * C * float(np.sum(xi**2))


def assign_labels(F, n_clusters, output, lo, hi, l=None):
    """The label step: labels minimising ``sum_i ||f_i - t_i||^2`` under the balance box.

    Exact in every case: sorting for two clusters with one output (``l`` bounds
    ``|N_+ - N_-|``, default ``hi - lo``), otherwise the unconstrained minimiser if it meets
    ``lo <= N_k <= hi``, else :func:`box_assignment`.

    Parameters
    ----------
    F : ndarray of shape (n_samples,) for one output or (n_samples, n_clusters) for several.
    n_clusters : int
    output : {"single", "multi"}
    lo, hi : int
        Count bounds from :func:`mmcedu.balance.count_bounds`.
    l : int, default=None

    Returns
    -------
    labels : ndarray of int in ``{0, ..., n_clusters - 1}``
    """
    m = n_clusters
    if output == "single" and m == 2:
        return (balanced_sign(F, hi - lo if l is None else l) > 0).astype(int)
    labels = _decide(F, m, output)
    counts = np.bincount(labels, minlength=m)
    if counts.min() >= lo and counts.max() <= hi:
        return labels
    if output == "single":
        return box_assignment(ordered_cost(F, m), lo, hi)
    return box_assignment(-2.0 * F, lo, hi)  # ||f_i - e_k||^2 = ||f_i||^2 - 2 f_ik + 1


def _target_table(n_clusters, output):
    """Row ``k`` is the target of label ``k``: ``-1 / +1``, the id ``k + 1``, or ``e_k``."""
    if output == "single" and n_clusters == 2:
        return np.array([[-1.0], [1.0]])
    if output == "single":
        return np.arange(1.0, n_clusters + 1.0)[:, None]
    return np.eye(n_clusters)


def _targets(labels, n_clusters, output):
    T = _target_table(n_clusters, output)[labels]
    return T[:, 0] if output == "single" else T


def _decide(F, n_clusters, output):
    """Unconstrained labels (no balance constraint): sign, nearest id in ``1..m``, or argmax."""
    if output == "single" and n_clusters == 2:
        return (F >= 0).astype(int)  # as balanced_sign: f = 0 goes to +1
    if output == "single":
        return np.clip(np.rint(F), 1, n_clusters).astype(int) - 1
    return np.argmax(F, axis=1)


def _inertia(X, labels):
    """k-means objective of ``labels``: the within-cluster sum of squared distances to the
    cluster means."""
    total = 0.0
    for c in np.unique(labels):
        Xc = X[labels == c]
        total += float(np.sum((Xc - Xc.mean(axis=0)) ** 2))
    return total


class EMMC(ClusterMixin, BaseEstimator):
    """Maximum margin clustering with an extreme learning machine (EMMC).

    Alternating optimisation of the ELM problems (2) (one output) and (5) (``m`` outputs)
    of Zhang, Xia and Liu [1]_ over the output weights ``beta`` and the labels ``t``
    (alternating as in [3]_, with the ELM of [2]_), optionally followed by a local search:

    ``min_{t, beta} 1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2``
    subject to ``|N_p - N_q| <= l`` for every pair of clusters,

    with ``h(x)`` the random hidden layer (``L = n_hidden`` nodes), ``t_i`` the target of
    sample ``i`` (``+-1``, the id ``1..m`` or a one-hot vector: ``output``) and
    ``l = floor(balance * n)``. The alternation stops at a *partial* minimum (the labels are
    optimal for ``beta`` and ``beta`` for the labels); a single label change may still lower
    the objective.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters ``m`` (``1`` is allowed and puts every sample in cluster 0).
    n_hidden : int, default=200
        Number of hidden nodes ``L``. The ridge system is ``L x L`` (primal) when
        ``L <= n`` and ``n x n`` (dual) otherwise.
    C : float, default=1.0
        Inverse regularization: the weight of the squared training errors in (1) / (4); the
        ridge penalty is ``1 / C``.
    activation : {"sigmoid", "tanh", "relu"}, default="sigmoid"
        Hidden-node activation ``g``. Input weights and biases are drawn uniformly from
        ``[-1, 1]`` once per fit, which suits standardized features (a
        ``DegenerateDataWarning`` says when the hidden outputs are nearly constant).
    balance : float in [0, 1], default=0.1
        Class balance as a fraction of n: every two cluster sizes differ by at most
        ``l = floor(balance n)``, ``|N_p - N_q| <= floor(balance n)`` (a hard bound; capped at
        ``n - 2`` for two clusters so that neither is empty). A ``BalanceWarning`` says when
        the bound decided the labels of many samples.
    init : {"kmeans", "random"} or array-like of shape (n_samples,), default="kmeans"
        Initial labels: k-means (10 restarts), uniformly random labels, or given labels
        (then a single run is made whatever ``n_init``).
    output : {"auto", "single", "multi"}, default="auto"
        One output node (targets ``+-1`` or integer cluster ids ``1..m``, the paper's (2))
        or ``m`` output nodes with one-hot targets ((5)). One output with ``m > 2`` regresses
        the ids, so the result depends on how the clusters are numbered and is often worse
        than the k-means start; ``"auto"`` is ``"single"`` for two clusters and ``"multi"``
        for more (the one used is ``output_``).
    local_search : bool, default=False
        After the alternation, move single labels (inside the balance box) and exchange
        pairs of labels while the objective decreases, then alternate again, until neither
        changes anything: the labels end at a *local* minimum (no single move keeping the sizes
        in ``count_bounds_`` and no exchange of two labels lowers ``objective_``), never above
        the plain alternation from the same start. ``False`` is the paper's algorithm. Costs
        an ``n x L`` array (``n x n`` in the dual form) and O(n L) per move.
    n_init : int, default=1
        Number of runs from different initial labels (same hidden layer, so the objectives
        are comparable); the run with the lowest objective is kept (no labels used).
    max_iter : int, default=50
        Maximum number of alternations per run (local-search rounds included).
    random_state : int, RandomState instance or None, default=None
        Seed of the hidden layer and the initialisations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in ``{0, ..., n_clusters - 1}``.
    n_clusters_ : int
        Number of clusters in ``labels_`` (``n_clusters``: the balance box keeps every
        cluster non-empty; 1 for identical samples).
    objective_ : float
        Objective (2) / (5) of the kept run at its final labels.
    objective_path_ : list of float
        Objective after every alternation and after every local-search round of the kept run
        (non-increasing).
    n_iter_ : int
        Alternations made by the kept run.
    n_flips_, n_swaps_ : int
        Single label moves and exchanges of two labels made by the local search of the kept
        run.
    balance_decided_ : int
        A lower bound on the number of samples whose label the balance constraint decided:
        the larger of (a) the samples the initial labels (when they use all ``n_clusters``
        labels) had to give up to meet ``count_bounds_`` and (b) the samples that, at the
        end, the label step without the constraint would move, or whose move alone to
        another cluster would lower the objective but leave ``count_bounds_``.
    init_labels_ : ndarray of shape (n_samples,)
        Initial labels of the kept run.
    start_moved_ : int
        Samples whose final label differs from their initial label (``init_labels_``).
    inertia_ratio_ : float
        k-means objective (within-cluster sum of squares in ``X``) of ``labels_`` over that
        of ``init_labels_``: above 1 when the fit ended with less compact clusters than its
        start.
    beta_ : ndarray of shape (n_hidden,) or (n_hidden, n_clusters)
        Output weights.
    input_weights_ : ndarray of shape (n_features, n_hidden)
        Hidden-layer input weights ``W``.
    biases_ : ndarray of shape (n_hidden,)
        Hidden-layer biases ``b``.
    output_ : {"single", "multi"}
        The output scheme used (``output="auto"`` resolved).
    l_ : int
        Balance bound used, ``floor(balance * n)``.
    count_bounds_ : tuple of int
        ``(lo, hi)``: every cluster size lies in ``[lo, hi]`` with ``hi - lo <= l_``.
    form_ : {"primal", "dual"}
        Which ridge system was factorized.
    n_features_in_ : int
        Number of features seen during fit.

    Warns
    -----
    DegenerateDataWarning
        All samples are identical (all go to cluster 0), or the hidden-layer outputs are
        nearly constant (unstandardized features saturate the random layer).
    BalanceWarning
        ``balance_decided_ > 0.05 n`` (:data:`mmcedu.balance.BALANCE_WARN_FRACTION`): if the
        clusters may differ in size, raise ``balance``.
    KMeansStartWarning
        From a k-means start, the fit relabelled more than 5 % of the samples
        (``start_moved_``) into less compact clusters (``inertia_ratio_ > 1``).
    ConvergenceWarning
        ``max_iter`` alternations (or the local search's budget of ``n`` moves per round)
        ran out before a fixed point.

    Raises
    ------
    MemoryBudgetError
        Before anything is allocated, when :meth:`memory_bytes` exceeds the memory budget
        (``mmcedu.get_config()["memory_budget"]``); the message names ``n_hidden``.
    ValueError
        Distances that overflow / underflow, or a ridge system that is not positive definite
        in floating point: standardize ``X``.

    Notes
    -----
    Label-free rule (:meth:`label_free_rule`): ``C`` on the grid ``0.01, 0.03, ..., 30``
    (half-decade steps), chosen by the silhouette of the labels in ``X``; EMMC's partitions
    change little with ``C``, and the silhouette ranks them as well as the costlier stability
    and objective criteria.

    The alternation leaves the k-means start for the partition the ELM ridge fit prefers,
    which need not be closer to the classes: on standardized iris the defaults relabel a few
    samples and agree slightly less with the species than k-means, without a warning;
    ``init_labels_`` then holds the k-means labels.

    Memory: :meth:`memory_bytes`. Time per alternation: O(n L q) for ``H^T T`` and ``H beta``
    (``q`` outputs) plus the label step (O(n m), or :func:`box_assignment`); once per fit: the
    hidden layer O(n d L), ``H^T H`` O(n L^2) and its Cholesky factor O(L^3).

    See Also
    --------
    UMCRLS : the same least-squares cost of the labels, with a kernel and a local search.
    SDPMMC, GMMC : convex relaxations of maximum margin clustering (two clusters).

    References
    ----------
    .. [1] C. Zhang, S. Xia, B. Liu. Maximum margin clustering using extreme learning
       machine. (Equations (1)-(5), Proposition 1, Tables 1-3.)
    .. [2] G.-B. Huang, H. Zhou, X. Ding, R. Zhang. Extreme learning machine for regression
       and multiclass classification. IEEE Trans. SMC-B 42(2):513-529, 2012.
    .. [3] K. Zhang, I. W. Tsang, J. T. Kwok. Maximum margin clustering made practical. IEEE
       Trans. Neural Networks 20 (2009) 583-596.

    Examples
    --------
    >>> from mmcedu import EMMC, datasets
    >>> from mmcedu.metrics import clustering_error
    >>> X, y = datasets.digits(classes=(3, 8), scale=True)
    >>> model = EMMC(C=0.1, random_state=0).fit(X)
    >>> clustering_error(y, model.labels_) < 0.1
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_hidden": [Interval(numbers.Integral, 1, None, closed="left")],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "balance": [Interval(numbers.Real, 0, 1, closed="both")],
        "init": [StrOptions({"kmeans", "random"}), "array-like"],
        "output": [StrOptions({"auto", "single", "multi"})],
        "local_search": ["boolean"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        n_hidden=200,
        C=1.0,
        activation="sigmoid",
        balance=0.1,
        init="kmeans",
        output="auto",
        local_search=False,
        n_init=1,
        max_iter=50,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_hidden = n_hidden
        self.C = C
        self.activation = activation
        self.balance = balance
        self.init = init
        self.output = output
        self.local_search = local_search
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def label_free_rule(self, X):
        """The recommended way to choose this estimator's parameters without labels, on ``X``.

        Returns
        -------
        rule : dict
            ``"param_grid"``: a dict ``{name: [values, ...]}`` for LabelFreeSearch, relative to
            ``X`` where it is a width; ``"criterion"``: a list of LabelFreeSearch criterion names
            (the first chooses, the second breaks ties within ``tolerance``); ``"tolerance"``: float.
            For EMMC: ``C`` in :data:`LABEL_FREE_C` (not relative to ``X``), the silhouette, 0.
        """
        return {"param_grid": {"C": list(LABEL_FREE_C)}, "criterion": ["silhouette"],
                "tolerance": 0.0}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        For targets ``T`` built from ``labels_`` as the fit builds them (``output_``), the ELM
        objective minimised over ``beta`` is ``J(T) = 1/2 tr(T^T (H H^T + I / C)^{-1} T)``
        (ridge regression and the Woodbury identity; ``H`` the hidden layer of ``X``). The
        chance level is its exact mean over the relabelings ``sigma`` that keep the cluster
        sizes, ``E_sigma J(sigma(T))`` (:func:`mmcedu.metrics.permutation_mean_quadratic`), and
        the contrast is ``1 - J(T) / E_sigma J(sigma(T))``: a ratio, because raw objectives
        are not comparable across values of ``C`` and hidden layers. NaN when the chance level
        is not positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data the estimator was fitted on.
        random_state : int, RandomState instance or None, default=None
            Unused: the chance level is exact.

        Returns
        -------
        contrast : float
        """
        check_is_fitted(self)
        H = self._hidden(validate_data(self, X, dtype=np.float64, reset=False))
        _, idx = np.unique(self.labels_, return_inverse=True)
        T = _target_table(max(int(idx.max()) + 1, self.n_clusters), self.output_)[idx]
        A = H @ H.T
        A[np.diag_indices_from(A)] += 1.0 / self.C
        A = np.linalg.inv(A)
        J = 0.5 * float(np.sum(T * (A @ T)))
        J_rand = 0.5 * permutation_mean_quadratic(A, T)
        if not J_rand > 0:
            return np.nan
        return float(1.0 - J / J_rand)

    def memory_bytes(self, n_samples, n_features=None):
        """Bytes (float64) of the largest arrays a fit with these parameters holds at once.

        ``16 n d`` (the validated data and k-means' copy) ``+ 24 n L`` (the hidden layer and
        its temporaries) ``+ 8 s^2`` (the Cholesky factor of the ``s x s`` ridge system,
        ``s = min(n, L)``) ``+ 8 n (2 q + m)`` (targets, outputs and costs; ``q`` outputs)
        ``+ 24 n m + 48 n`` (the balanced label step), and with ``local_search=True``
        ``8 n L`` (``Z``, primal form) or ``16 n^2`` (``R`` and a temporary, dual form
        ``L > n``). The fit checks it against the memory budget before allocating anything.

        Parameters
        ----------
        n_samples : int
        n_features : int, default=None
            ``None``: ``n_features_in_`` when fitted, else the data are not counted.
        """
        if n_features is None:
            n_features = getattr(self, "n_features_in_", 0)
        n, d, L, m = (int(v) for v in (n_samples, n_features, self.n_hidden, self.n_clusters))
        q = 1 if self._output() == "single" else m
        total = 16 * n * d + 24 * n * L + 8 * min(n, L) ** 2 + 8 * n * (2 * q + m)
        total += 24 * n * m + 48 * n
        if self.local_search:
            total += 16 * n * n if L > n else 8 * n * L
        return total

    def _output(self):
        if self.output == "auto":
            return "single" if self.n_clusters <= 2 else "multi"
        return self.output

    def _hidden(self, X):
        return hidden_layer(X, self.input_weights_, self.biases_, self.activation)

    def _initial_labels(self, X, rng):
        m = self.n_clusters
        if not isinstance(self.init, str):
            init = np.asarray(self.init)
            if init.shape != (X.shape[0],):
                raise ValueError(f"init labels must have shape ({X.shape[0]},); got {init.shape}.")
            values, labels = np.unique(init, return_inverse=True)
            if values.size > m:
                raise ValueError(f"init has {values.size} distinct labels but n_clusters={m}.")
            return labels.astype(int)
        if self.init == "random":
            return rng.randint(m, size=X.shape[0])
        km = KMeans(n_clusters=m, n_init=10, random_state=rng.randint(np.iinfo(np.int32).max))
        return km.fit(X).labels_.astype(int)

    def _check_memory(self, n, d):
        L, m = self.n_hidden, self.n_clusters
        form = "primal (L x L)" if L <= n else "dual (n x n)"
        check_memory(
            self.memory_bytes(n, d),
            what=(
                f"EMMC on n={n} samples with n_hidden={L} ({form} ridge system, "
                f"{m} clusters{', local search' if self.local_search else ''})"
            ),
            alternative=(
                "Decrease n_hidden (memory grows as n * n_hidden, plus n_hidden^2 or, "
                "when n_hidden > n_samples, n_samples^2)"
                + (", or set local_search=False" if self.local_search else "")
                + ", or fit a subsample and predict the rest."
            ),
        )

    def _warn_saturation(self, H):
        """DegenerateDataWarning when the hidden outputs hardly vary over the samples."""
        spread = float(np.sqrt(np.mean(np.var(H, axis=0))))
        size = float(np.sqrt(np.mean(H**2)))
        if size == 0.0 or spread < SATURATION_RATIO * size:
            ratio = 0.0 if size == 0.0 else spread / size
            warnings.warn(
                f"EMMC: the hidden-layer outputs are nearly constant over the samples (their "
                f"spread is {ratio:.2g} of their size; activation={self.activation!r}): the "
                f"random input weights in [-1, 1] expect standardized features, and the "
                f"labels are close to arbitrary. {_STANDARDIZE}.",
                DegenerateDataWarning,
                stacklevel=4,
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` by alternating ELM training and balanced label assignment.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored

        Returns
        -------
        self : EMMC
        """
        if isinstance(self.n_clusters, (bool, np.bool_)):
            raise InvalidParameterError(
                "The 'n_clusters' parameter of EMMC must be an int in the range [1, inf). "
                f"Got {self.n_clusters!r} instead."
            )
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        m = self.n_clusters
        check_n_clusters(n, m)
        check_scale(X)
        self.output_ = output = self._output()
        # balance bound l (the paper's |N_p - N_q| <= l); infeasible -> clear error, not cycling
        if m == 2:
            l = min(max_imbalance(n, self.balance), n - 2)  # neither cluster empty
        else:
            l = int(np.floor(self.balance * n + 1e-12))
        lo, hi = count_bounds(n, m, l)
        self.l_, self.count_bounds_ = l, (lo, hi)
        self._check_memory(n, d)  # before any large array and before k-means
        rng = check_random_state(self.random_state)
        # random hidden layer, drawn once per fit; ridge system factorized once per fit
        self.input_weights_ = rng.uniform(-1.0, 1.0, size=(d, self.n_hidden))
        self.biases_ = rng.uniform(-1.0, 1.0, size=self.n_hidden)
        H = self._hidden(X)
        check_finite_result(
            H, what="EMMC's hidden-layer output", hint=f"X is too large. {_STANDARDIZE}."
        )
        ridge = ELMRidge(H, self.C)
        self.form_ = ridge.form
        if all_identical(X):
            return self._fit_identical(H, ridge, n, output)
        self._warn_saturation(H)
        hat = _HatMatrix(ridge) if self.local_search else None
        best = None
        for _ in range(self.n_init if isinstance(self.init, str) else 1):
            run = self._run(H, ridge, hat, self._initial_labels(X, rng), l, lo, hi, output)
            if best is None or run["objective"] < best["objective"]:
                best = run
        self._keep(best)
        self._warn_balance(H, ridge, hat, output, n, l, lo, hi)
        self._warn_left_kmeans_start(X)
        return self

    def _keep(self, best):
        """Store the kept run (ConvergenceWarning if it did not reach a fixed point)."""
        if not best["converged"]:
            warnings.warn(
                f"EMMC did not converge in max_iter={self.max_iter} alternations (labels still "
                "changing"
                + (", or the local search's budget of n moves ran out" if self.local_search
                   else "")
                + "). Increase max_iter.",
                ConvergenceWarning,
                stacklevel=4,
            )
        self.labels_ = best["labels"]
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.beta_ = best["beta"]
        self.objective_ = best["objective"]
        self.objective_path_ = best["path"]
        self.n_iter_ = best["n_iter"]
        self.n_flips_ = best["flips"]
        self.n_swaps_ = best["swaps"]
        self.init_labels_ = best["init"]

    def _warn_balance(self, H, ridge, hat, output, n, l, lo, hi):
        """Set ``balance_decided_``; BalanceWarning above ``BALANCE_WARN_FRACTION`` of ``n``."""
        start = np.bincount(self.init_labels_, minlength=self.n_clusters)
        excess = 0
        if np.all(start > 0):  # a partition into m clusters (not a one-cluster start)
            excess = int(max(np.maximum(start - hi, 0).sum(), np.maximum(lo - start, 0).sum()))
        at_end = self._balance_decided(H, ridge, hat, output, lo, hi)
        self.balance_decided_ = max(excess, at_end)
        if self.balance_decided_ > BALANCE_WARN_FRACTION * n:
            sizes = np.bincount(self.labels_, minlength=self.n_clusters).tolist()
            warnings.warn(
                f"EMMC: the balance constraint (balance={self.balance:g}: every cluster size "
                f"in [{lo}, {hi}], |N_p - N_q| <= {l}) decided the label of at least "
                f"{self.balance_decided_} of {n} samples (the initial labels had cluster sizes "
                f"{start.tolist()}; at the end {at_end} samples would lower the objective in "
                f"another cluster; final sizes {sizes}). If the clusters may differ in size, "
                "raise balance.",
                BalanceWarning,
                stacklevel=4,
            )

    def _warn_left_kmeans_start(self, X):
        """KMeansStartWarning: many samples relabelled into less compact clusters than the
        k-means start (``init="kmeans"`` only; sets ``start_moved_`` and
        ``inertia_ratio_``)."""
        n = X.shape[0]
        moved = int(np.count_nonzero(self.labels_ != self.init_labels_))
        end, start = _inertia(X, self.labels_), _inertia(X, self.init_labels_)
        self.start_moved_ = moved
        self.inertia_ratio_ = end / start if start > 0 else 1.0
        if not (isinstance(self.init, str) and self.init == "kmeans"):
            return
        if moved > START_MOVED_FRACTION * n and end > start * (1 + 1e-12):
            warnings.warn(
                f"EMMC moved {moved} of {n} samples ({moved / n:.0%}) away from its k-means "
                f"start (init_labels_) to clusters that are less compact: the within-cluster "
                f"sum of squares grew by {self.inertia_ratio_ - 1:.1%}. EMMC's objective "
                "prefers these labels, which need not agree better with the classes than the "
                "k-means labels. If compact clusters are wanted, use the k-means labels "
                "init_labels_; if the clusters may differ in size, raise balance.",
                KMeansStartWarning,
                stacklevel=4,
            )

    def _fit_identical(self, H, ridge, n, output):
        warnings.warn(
            f"All {n} samples are identical: there is no cluster structure; every sample is "
            "put in cluster 0 (n_clusters_=1).",
            DegenerateDataWarning,
            stacklevel=4,
        )
        labels = np.zeros(n, dtype=int)
        self.beta_, self.objective_ = self._ridge_fit(H, ridge, labels, output)
        self.labels_, self.init_labels_ = labels, labels.copy()
        self.n_clusters_ = 1
        self.objective_path_ = [self.objective_]
        self.n_iter_ = self.n_flips_ = self.n_swaps_ = self.balance_decided_ = 0
        self.start_moved_, self.inertia_ratio_ = 0, 1.0
        return self

    def _balance_decided(self, H, ridge, hat, output, lo, hi):
        """Samples whose final label the box decided (moved, or kept from a better cluster).

        A sample counts when the label step of the final outputs without the box would give
        it another label, or when moving it alone to another cluster would lower the
        objective but leaves a cluster size outside ``[lo, hi]``.
        """
        m, labels = self.n_clusters, self.labels_
        if m == 1:
            return 0
        V = _target_table(m, output)
        F = (H @ self.beta_).reshape(H.shape[0], V.shape[1])
        moved = _decide(F if output == "multi" else F[:, 0], m, output) != labels
        r = hat.diag if hat is not None else _hat_diagonal(ridge)
        G = V @ V.T
        g = np.diag(G).copy()
        delta = _move_deltas(F, labels, V, G, g, r, self.C)
        counts = np.bincount(labels, minlength=m)
        forbidden = ~((counts[labels] > lo)[:, None] & (counts < hi)[None, :])
        tol = 1e-9 * self.C * max(1.0, float(g.max()))
        blocked = np.any(forbidden & (delta < -tol), axis=1)
        return int(np.count_nonzero(moved | blocked))

    def _alternate(self, H, ridge, labels, l, lo, hi, output, budget):
        """Alternations from ``labels`` until a fixed point or ``budget`` alternations."""
        m = self.n_clusters
        path = []
        n_iter = 0
        while n_iter < budget:
            n_iter += 1
            T = _targets(labels, m, output)
            beta = ridge.solve(T)  # step 2: ELM training with the labels fixed
            F = H @ beta
            new = assign_labels(F, m, output, lo, hi, l)  # steps 3-4
            T_new = _targets(new, m, output)
            obj = 0.5 * float(np.sum(beta**2)) + 0.5 * self.C * float(np.sum((T_new - F) ** 2))
            path.append(obj)
            if np.array_equal(new, labels):
                return labels, n_iter, True, path
            labels = new
            # exact alternating minimisation never increases the objective: a tie means a
            # fixed point up to ties, stop instead of cycling
            if len(path) > 1 and path[-1] >= path[-2] * (1 - 1e-12):
                return labels, n_iter, True, path
        return labels, n_iter, False, path

    def _run(self, H, ridge, hat, labels, l, lo, hi, output):
        n, init = H.shape[0], labels.copy()
        V = _target_table(self.n_clusters, output)
        path, n_iter, flips, swaps = [], 0, 0, 0
        while True:
            labels, it, converged, p = self._alternate(
                H, ridge, labels, l, lo, hi, output, self.max_iter - n_iter
            )
            n_iter += it
            path += p
            if hat is None:
                break
            F = (H @ ridge.solve(V[labels])).reshape(n, V.shape[1])
            labels, f, s, finished = _local_search(F, labels.copy(), V, hat, self.C, lo, hi, n)
            flips, swaps = flips + f, swaps + s
            if f + s == 0:
                break
            path.append(self._ridge_fit(H, ridge, labels, output)[1])
            converged = False  # the polished labels are not yet a fixed point
            if not finished or n_iter >= self.max_iter:
                break
        beta, obj = self._ridge_fit(H, ridge, labels, output)  # beta consistent with labels
        return {"labels": labels, "beta": beta, "objective": obj, "path": path + [obj],
                "n_iter": n_iter, "flips": flips, "swaps": swaps, "init": init,
                "converged": converged}

    def _ridge_fit(self, H, ridge, labels, output):
        """Output weights fitted to ``labels`` and their objective."""
        T = _targets(labels, self.n_clusters, output)
        beta = ridge.solve(T)
        return beta, elm_objective(H, beta, T, self.C)

    def decision_function(self, X):
        """ELM outputs ``h(x) beta`` of new points: shape (n,) or (n, n_clusters)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._hidden(X) @ self.beta_

    def predict(self, X):
        """Assign new points with the trained ELM (sign / nearest id / largest output).

        The balance constraint is not applied to new points.
        """
        return _decide(self.decision_function(X), self.n_clusters, self.output_)
