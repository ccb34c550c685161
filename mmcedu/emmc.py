"""EMMC: maximum margin clustering with an extreme learning machine (Zhang, Xia and Liu).

An extreme learning machine (ELM) maps ``x`` through a random hidden layer ``h(x) = g(x W + b)``
(``W``: d x L, ``b``: L, drawn once) and fits only the output weights ``beta`` by ridge regression
on targets ``T`` (the paper's (1), (4)):

    min_beta  1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2
    beta = (H^T H + I_L / C)^{-1} H^T T  =  H^T (H H^T + I_n / C)^{-1} T    (primal = dual).

EMMC makes the targets unknown ((2), (5)) and alternates two exact minimisations, so the
objective never increases: ``beta`` for fixed labels (one factorization per fit), then the labels
for fixed outputs ``F = H beta`` under ``|N_p - N_q| <= l``: ``t = sign(f)`` moved the least to
meet ``|e^T t| <= l`` (one output, two clusters; Proposition 1), the nearest id in ``1..m`` (one
output; not the paper's ``i - 1 < f <= i``) or ``argmax_k f_ik`` (``m`` one-hot outputs), and
:func:`box_assignment` when the sizes leave the box of :func:`mmcedu.balance.count_bounds`.

Local search. The alternation stops at a *partial* minimum (``t`` optimal for ``beta`` and
``beta`` for ``t``). With ``R = H (H^T H + I/C)^{-1} H^T`` the objective minimised over ``beta``
is ``J*(T) = C/2 tr(T^T (I - R) T)`` and ``F = R T``; changing the target of sample ``i`` by
``Delta`` changes ``J*`` by ``C (Delta . (t_i - f_i) + (1 - R_ii) ||Delta||^2 / 2)`` (a flip of
``t_i = +-1``: ``2 C (t_i f_i - R_ii) = 2 C (1 - R_ii) t_i f_i^(-i)``, ``f_i^(-i)`` the leave-one-out
output), and exchanging two labels adds ``C R_ij ||t_a - t_b||^2``: O(1) per candidate given ``F``
and ``diag(R)``, O(n L) per move (``R = Z Z^T``, ``Z = H U^{-T}``, ``U U^T`` the Cholesky
factorization of the primal system).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import LabelFreeMixin
from ._emmc_assignment import box_assignment, edge_weights, ordered_cost, shortest_paths
from ._validation import all_identical, check_finite_result, check_memory, check_n_clusters, check_scale
from .balance import BALANCE_WARN_FRACTION, balanced_sign, count_bounds, max_imbalance
from .exceptions import BalanceWarning, DegenerateDataWarning, KMeansStartWarning
from .metrics import permutation_mean_quadratic

__all__ = [
    "EMMC", "ELMRidge", "hidden_layer", "elm_objective", "assign_labels", "box_assignment",
    "ordered_cost", "edge_weights", "shortest_paths",
]

_ACTIVATIONS = {
    "sigmoid": lambda Z: 0.5 * (1.0 + np.tanh(0.5 * Z)),  # 1 / (1 + exp(-Z)) without overflow
    "tanh": np.tanh,
    "relu": lambda Z: np.maximum(Z, 0.0),
}

#: DegenerateDataWarning below this ratio of the hidden outputs' spread over the samples to their size.
SATURATION_RATIO = 1e-3

#: KMeansStartWarning above this fraction of the samples moved from k-means labels (see :class:`EMMC`).
START_MOVED_FRACTION = 0.05

#: The values of ``C`` that :meth:`EMMC.label_free_rule` compares (half-decade steps).
LABEL_FREE_C = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)

_STANDARDIZE = "Standardize X (sklearn.preprocessing.StandardScaler)"


def hidden_layer(X, W, b, activation="sigmoid"):
    """ELM hidden-layer outputs ``H[i] = h(x_i) = g(x_i W + b)``, shape (n_samples, L)."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}; got {activation!r}.")
    return _ACTIVATIONS[activation](np.asarray(X, dtype=float) @ W + b)


class ELMRidge:
    """Ridge output weights of an ELM for hidden outputs ``H`` (n x L) and ``C > 0``, factorized
    once for many targets: the Cholesky factor of the ``form="primal"`` (L x L) or ``"dual"``
    (n x n) system of :mod:`mmcedu.emmc`; ``"auto"`` takes the smaller (primal when ``L <= n``).

    Raises
    ------
    ValueError
        When the system overflows or is not positive definite in floating point (hidden outputs
        far from the unit scale): standardize ``X`` or decrease ``C``.
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
        what = "The ridge system of the ELM output weights"
        hint = (f"hidden outputs up to {float(np.max(np.abs(H))) if H.size else 0.0:.3g}, C={self.C:g}. "
                f"{_STANDARDIZE}, or decrease C (a larger ridge penalty 1/C).")
        check_finite_result(A, what=what, hint=hint)
        A[np.diag_indices_from(A)] += 1.0 / self.C
        try:
            self._factor = cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError as exc:
            raise ValueError(f"{what} is not positive definite in floating point ({hint})") from exc
        if not np.all(np.isfinite(np.diag(self._factor[0]))):
            raise ValueError(f"{what} overflowed ({hint})")

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
    """The label step: labels in ``0..n_clusters - 1`` minimising ``sum_i ||f_i - t_i||^2`` subject
    to ``lo <= N_k <= hi``, exactly, for outputs ``F`` of shape (n_samples,) (``output="single"``)
    or (n_samples, n_clusters) (``"multi"``). Two clusters with one output: sorting, with
    ``|N_+ - N_-| <= l`` (default ``hi - lo``); otherwise the unconstrained minimiser if it meets
    the box, else :func:`box_assignment`."""
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
    """Within-cluster sum of squared distances to the cluster means (k-means' objective)."""
    total = 0.0
    for c in np.unique(labels):
        Xc = X[labels == c]
        total += float(np.sum((Xc - Xc.mean(axis=0)) ** 2))
    return total


class _HatMatrix:
    """``R = H (H^T H + I/C)^{-1} H^T`` by columns and blocks: ``R = Z Z^T`` (primal form, ``Z``
    stored, ``8 n L`` bytes) or ``R = I - (H H^T + I/C)^{-1} / C`` (dual form, ``R`` stored,
    ``8 n^2`` bytes, twice that while it is computed)."""

    def __init__(self, ridge):
        c, lower = ridge._factor
        n = ridge.H.shape[0]
        if ridge.form == "primal":
            self.Z = np.ascontiguousarray(solve_triangular(c, ridge.H.T, lower=lower, check_finite=False).T)
            self.R = None
            self.diag = np.einsum("ij,ij->i", self.Z, self.Z)
        else:
            M = cho_solve(ridge._factor, np.eye(n), check_finite=False)
            M *= -1.0 / ridge.C
            M[np.diag_indices(n)] += 1.0
            self.R, self.Z = M, None
            self.diag = np.diag(M).copy()

    def column(self, i):
        return self.Z @ self.Z[i] if self.R is None else self.R[:, i]

    def block(self, rows, cols):
        return self.Z[rows] @ self.Z[cols].T if self.R is None else self.R[np.ix_(rows, cols)]


def _hat_diagonal(ridge, block=4096):
    """``diag(R)`` of :class:`_HatMatrix` by blocks of rows, without storing ``Z`` or ``R``."""
    c, lower = ridge._factor
    H = ridge.H
    n = H.shape[0]
    out = np.empty(n)
    for start in range(0, n, block):
        rows = slice(start, start + block)
        if ridge.form == "primal":
            Zt = solve_triangular(c, H[rows].T, lower=lower, check_finite=False)
            out[rows] = np.einsum("ij,ij->j", Zt, Zt)
        else:
            E = np.zeros((n, min(block, n - start)))
            E[np.arange(start, start + E.shape[1]), np.arange(E.shape[1])] = 1.0
            M = cho_solve(ridge._factor, E, check_finite=False)
            out[rows] = 1.0 - M[np.arange(start, start + E.shape[1]), np.arange(E.shape[1])] / ridge.C
    return out


def _move_deltas(F, labels, V, r, C):
    """``delta[i, b]``: the change of ``J*`` when sample ``i`` takes label ``b`` (own label: inf),
    for the target table ``V`` and ``r = diag(R)``."""
    n, a = F.shape[0], labels
    G = V @ V.T
    g = np.diag(G)
    D = F if V.shape[1] > 1 else F @ V.T  # one-hot targets: V = I
    Ga = G[a]  # G[a_i, b]
    gaa = g[a][:, None]
    Dia = D[np.arange(n), a][:, None]
    delta = C * ((Ga - gaa) - (D - Dia) + 0.5 * (1.0 - r)[:, None] * (g[None, :] - 2.0 * Ga + gaa))
    delta[np.arange(n), a] = np.inf
    return delta


def _best_swap(delta, labels, V, r, hat, C, tol, block=1 << 20):
    """The best exchange of two labels, ``(gain, i, j)`` (``gain >= 0``: none). Exchanging ``i``
    (label ``a``) and ``j`` (``b``) changes ``J*`` by ``delta[i, b] + delta[j, a] + C R_ij ||t_a - t_b||^2``;
    pairs are pruned with ``R_ij >= -sqrt(R_ii R_jj)``, the rest evaluated ``block`` pairs at a time."""
    G = V @ V.T
    g, m = np.diag(G), G.shape[0]
    s = np.sqrt(np.maximum(r, 0.0))
    members = [np.flatnonzero(labels == k) for k in range(m)]
    best = (0.0, -1, -1)
    for a in range(m):
        for b in range(a + 1, m):
            Ia, Jb = members[a], members[b]
            if Ia.size == 0 or Jb.size == 0:
                continue
            u, v = delta[Ia, b], delta[Jb, a]
            w = C * (g[a] - 2.0 * G[a, b] + g[b])
            ci = u + v.min() - w * s[Ia] * s[Jb].max() < -tol
            cj = v + u.min() - w * s[Jb] * s[Ia].max() < -tol
            if not ci.any() or not cj.any():
                continue
            I, J, uI, vJ = Ia[ci], Jb[cj], u[ci], v[cj]
            step = max(1, block // J.size)
            for start in range(0, I.size, step):
                rows = slice(start, start + step)
                vals = uI[rows, None] + vJ[None, :] + w * hat.block(I[rows], J)
                k = int(np.argmin(vals))
                if vals.flat[k] < best[0]:
                    p, q = divmod(k, J.size)
                    best = (float(vals.flat[k]), int(I[rows][p]), int(J[q]))
    return best


def _tolerance(V, C):
    """Changes of ``J*`` above ``-tol`` count as zero (round-off)."""
    return 1e-9 * C * max(1.0, float(np.diag(V @ V.T).max()))


def _local_search(F, labels, V, hat, C, lo, hi, max_moves):
    """Steepest descent over single moves inside the box and swaps, from outputs ``F = R T``
    (updated in place): ``(labels, flips, swaps, finished)``, ``finished=False`` when
    ``max_moves`` ran out."""
    m, r = V.shape[0], hat.diag
    counts = np.bincount(labels, minlength=m)
    tol = _tolerance(V, C)
    flips = swaps = 0
    while flips + swaps < max_moves:
        delta = _move_deltas(F, labels, V, r, C)
        feasible = (counts[labels] > lo)[:, None] & (counts < hi)[None, :]
        masked = np.where(feasible, delta, np.inf)
        k = int(np.argmin(masked))
        i, b = divmod(k, m)
        if masked[i, b] < -tol:
            a = labels[i]
            F += np.outer(hat.column(i), V[b] - V[a])
            labels[i] = b
            counts[a] -= 1
            counts[b] += 1
            flips += 1
            continue
        gain, i, j = _best_swap(delta, labels, V, r, hat, C, tol)
        if gain < -tol:
            a, b = labels[i], labels[j]
            F += np.outer(hat.column(i), V[b] - V[a]) + np.outer(hat.column(j), V[a] - V[b])
            labels[i], labels[j] = b, a
            swaps += 1
            continue
        return labels, flips, swaps, True
    return labels, flips, swaps, False


class EMMC(LabelFreeMixin, ClusterMixin, BaseEstimator):
    """Maximum margin clustering with an extreme learning machine (EMMC).

    Alternating minimisation [3]_ of the ELM [2]_ problems (2) (one output) and (5) (``m`` outputs)
    of Zhang, Xia and Liu [1]_ over the output weights ``beta`` and the labels,
    ``min_{t, beta} 1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2`` s.t. ``|N_p - N_q| <= l``,
    with ``h`` the random hidden layer, ``t_i`` the target of sample ``i`` (``+-1``, the id ``1..m``
    or a one-hot vector) and ``l = floor(balance * n)``; optionally followed by a local search
    (the steps and their formulas: :mod:`mmcedu.emmc`).

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters ``m`` (``1`` puts every sample in cluster 0).
    n_hidden : int, default=200
        Number of hidden nodes ``L``.
    C : float, default=1.0
        Inverse regularization: the weight of the squared errors; the ridge penalty is ``1 / C``.
    activation : {"sigmoid", "tanh", "relu"}, default="sigmoid"
        Hidden-node activation ``g``. Input weights and biases are drawn uniformly from
        ``[-1, 1]`` once per fit, which suits standardized features.
    balance : float in [0, 1], default=0.1
        Class balance as a fraction of n: every two cluster sizes differ by at most
        ``l = floor(balance n)`` (a hard bound; at most ``n - 2`` for two clusters).
    init : {"kmeans", "random"} or array-like of shape (n_samples,), default="kmeans"
        Initial labels: k-means (10 restarts), uniformly random, or given (then one run).
    output : {"auto", "single", "multi"}, default="auto"
        One output node (targets ``+-1``, or the ids ``1..m``: the result then depends on how the
        clusters are numbered, and is often worse than the k-means start) or ``m`` output nodes
        with one-hot targets; ``"auto"`` is ``"single"`` for two clusters and ``"multi"`` for more.
    local_search : bool, default=False
        After the alternation, single label moves inside the balance box and exchanges of two
        labels while the objective decreases, and alternations again, until a *local* minimum
        (never above the plain alternation from the same start; ``False``: the paper's
        algorithm). Costs an ``n x L`` array (``n x n`` in the dual form) and O(n L) per move.
    n_init : int, default=1
        Runs from different initial labels (same hidden layer); the lowest objective is kept.
    max_iter : int, default=50
        Maximum number of alternations per run (local-search rounds included).
    random_state : int, RandomState instance or None, default=None
        Seed of the hidden layer and the initialisations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in ``{0, ..., n_clusters - 1}``.
    n_clusters_ : int
        Number of clusters in ``labels_`` (1 for identical samples, else ``n_clusters``).
    objective_, objective_path_ : float, list of float
        Objective (2) / (5) of the kept run at its final labels, and after every alternation
        and local-search round (non-increasing).
    n_iter_, n_flips_, n_swaps_ : int
        Alternations, single label moves and exchanges of two labels of the kept run.
    balance_decided_ : int
        A lower bound on the samples whose label the balance constraint decided: the larger of
        those the initial labels (when they use every label) gave up to meet ``count_bounds_``
        and those that, at the end, the label step without the box would move or whose move
        alone would lower the objective but leave ``count_bounds_``.
    init_labels_ : ndarray of shape (n_samples,)
        Initial labels of the kept run.
    start_moved_ : int
        Samples whose final label differs from ``init_labels_``.
    inertia_ratio_ : float
        Within-cluster sum of squares in ``X`` of ``labels_`` over that of ``init_labels_``.
    beta_ : ndarray of shape (n_hidden,) or (n_hidden, n_clusters)
        Output weights.
    input_weights_, biases_ : ndarray of shape (n_features, n_hidden), (n_hidden,)
        The hidden layer's ``W`` and ``b``.
    output_ : {"single", "multi"}
        The output scheme used (``output="auto"`` resolved).
    l_, count_bounds_ : int, tuple of int
        Balance bound used, and ``(lo, hi)``: every cluster size in ``[lo, hi]``, ``hi - lo <= l_``.
    form_ : {"primal", "dual"}
        Which ridge system was factorized.
    n_features_in_ : int
        Number of features seen during fit.

    Warns
    -----
    DegenerateDataWarning
        Identical samples (all go to cluster 0), or nearly constant hidden outputs.
    BalanceWarning
        ``balance_decided_`` above :data:`mmcedu.balance.BALANCE_WARN_FRACTION` of ``n``.
    KMeansStartWarning
        From k-means labels, more than :data:`START_MOVED_FRACTION` of the samples moved into
        less compact clusters (``inertia_ratio_ > 1``).
    ConvergenceWarning
        ``max_iter`` alternations (or the local search's ``n`` moves per round) ran out.

    Raises
    ------
    MemoryBudgetError
        Before anything is allocated, when :meth:`memory_bytes` exceeds the memory budget.
    ValueError
        Distances, hidden outputs or the ridge system overflow: standardize ``X``.

    Notes
    -----
    Label-free rule (:meth:`label_free_rule`): ``C`` on the grid ``0.01, 0.03, ..., 30``
    (half-decade steps), chosen by the silhouette of the labels in ``X``; EMMC's partitions
    change little with ``C``, and the silhouette ranks them as well as the costlier stability
    and objective criteria.

    The alternation may leave the k-means start for a partition the ELM prefers but that agrees
    less with the classes; ``init_labels_`` keeps the start. Time per alternation: O(n L q)
    (``q`` outputs) plus the label step; once per fit: O(n d L + n L^2 + L^3).

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

    _label_free_criterion = ("silhouette",)
    _label_free_tolerance = 0.0

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

    def __init__(self, n_clusters=2, *, n_hidden=200, C=1.0, activation="sigmoid", balance=0.1,
                 init="kmeans", output="auto", local_search=False, n_init=1, max_iter=50,
                 random_state=None):
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

    def _label_free_grid(self, X):
        return {"C": list(LABEL_FREE_C)}

    def objective_contrast(self, X, *, random_state=None):
        """The fitted clustering's own objective relative to chance (larger is better).

        For the targets ``T`` of ``labels_`` (built as the fit builds them, ``output_``) the
        objective minimised over ``beta`` is ``J(T) = 1/2 tr(T^T (H H^T + I / C)^{-1} T)``, ``H``
        the hidden layer of ``X``, the data the estimator was fitted on. The contrast is
        ``1 - J(T) / E_sigma J(sigma(T))``, the exact mean over the relabelings ``sigma`` that
        keep the cluster sizes (:func:`mmcedu.metrics.permutation_mean_quadratic`): a ratio,
        because raw objectives are not comparable across values of ``C`` and hidden layers. NaN
        when the chance level is not positive. ``random_state`` is unused (the level is exact).
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

        ``16 n d`` (the data and k-means' copy; ``d = n_features``, by default ``n_features_in_``
        when fitted, else 0) ``+ 24 n L`` (the hidden layer and temporaries) ``+ 8 s^2`` (the
        factor of the ``s x s`` ridge system, ``s = min(n, L)``) ``+ 8 n (2 q + m)`` (targets,
        outputs and costs of ``q`` outputs) ``+ 24 n m + 48 n`` (the balanced label step), and
        with ``local_search=True`` ``8 n L`` (``Z``, primal form) or ``16 n^2`` (``R`` and a
        temporary, dual form ``L > n``). The fit checks it against the memory budget first.
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
        L, search = self.n_hidden, ", local search" if self.local_search else ""
        form = "primal (L x L)" if L <= n else "dual (n x n)"
        alternative = ", or set local_search=False" if search else ""
        check_memory(self.memory_bytes(n, d),
                     what=f"EMMC on n={n} samples with n_hidden={L} ({form} ridge system, "
                          f"{self.n_clusters} clusters{search})",
                     alternative="Decrease n_hidden (memory grows as n * n_hidden, plus n_hidden^2 or, when "
                                 f"n_hidden > n_samples, n_samples^2){alternative}, or fit a subsample and "
                                 "predict the rest.")

    def _warn_saturation(self, H):
        """DegenerateDataWarning when the hidden outputs hardly vary over the samples."""
        spread = float(np.sqrt(np.mean(np.var(H, axis=0))))
        size = float(np.sqrt(np.mean(H**2)))
        if size == 0.0 or spread < SATURATION_RATIO * size:
            warnings.warn(f"EMMC: the hidden-layer outputs are nearly constant over the samples (their "
                          f"spread is {0.0 if size == 0.0 else spread / size:.2g} of their size; activation="
                          f"{self.activation!r}): the random input weights in [-1, 1] expect standardized "
                          f"features, and the labels are close to arbitrary. {_STANDARDIZE}.",
                          DegenerateDataWarning, stacklevel=4)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster ``X`` (array-like of shape (n_samples, n_features); ``y`` is ignored) by
        alternating ELM training and balanced label assignment. Returns ``self``."""
        if isinstance(self.n_clusters, (bool, np.bool_)):
            raise InvalidParameterError("The 'n_clusters' parameter of EMMC must be an int in the range "
                                        f"[1, inf). Got {self.n_clusters!r} instead.")
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        m = self.n_clusters
        check_n_clusters(n, m)
        check_scale(X)
        self.output_ = output = self._output()
        if m == 2:  # neither cluster empty; count_bounds then gives hi - lo = l exactly
            l = min(max_imbalance(n, self.balance), n - 2)
        else:
            l = int(np.floor(self.balance * n + 1e-12))
        lo, hi = count_bounds(n, m, l)
        self.l_, self.count_bounds_ = l, (lo, hi)
        self._check_memory(n, d)  # before any large array and before k-means
        rng = check_random_state(self.random_state)
        self.input_weights_ = rng.uniform(-1.0, 1.0, size=(d, self.n_hidden))
        self.biases_ = rng.uniform(-1.0, 1.0, size=self.n_hidden)
        H = self._hidden(X)
        check_finite_result(H, what="EMMC's hidden-layer output", hint=f"X is too large. {_STANDARDIZE}.")
        ridge = ELMRidge(H, self.C)
        self.form_ = ridge.form
        if all_identical(X):
            warnings.warn(f"All {n} samples are identical: there is no cluster structure; every sample "
                          "is put in cluster 0 (n_clusters_=1).", DegenerateDataWarning, stacklevel=3)
            self._keep(self._result(H, ridge, np.zeros(n, dtype=int), output))
            self.balance_decided_, self.start_moved_, self.inertia_ratio_ = 0, 0, 1.0
            return self
        self._warn_saturation(H)
        hat = _HatMatrix(ridge) if self.local_search else None
        best = None
        for _ in range(self.n_init if isinstance(self.init, str) else 1):
            run = self._run(H, ridge, hat, self._initial_labels(X, rng), lo, hi, output)
            if best is None or run["objective_"] < best["objective_"]:
                best = run
        self._keep(best)
        self._check_balance(H, ridge, hat, output, l, lo, hi)
        self._warn_left_kmeans_start(X)
        return self

    def _alternate(self, H, ridge, labels, lo, hi, output, budget):
        """Alternations from ``labels`` until a fixed point or ``budget`` alternations."""
        m, path = self.n_clusters, []
        for n_iter in range(1, budget + 1):
            beta = ridge.solve(_targets(labels, m, output))  # the ELM for fixed labels
            F = H @ beta
            new = assign_labels(F, m, output, lo, hi)  # the labels for fixed outputs
            residual = _targets(new, m, output) - F
            path.append(0.5 * float(np.sum(beta**2)) + 0.5 * self.C * float(np.sum(residual**2)))
            if np.array_equal(new, labels):
                return labels, n_iter, True, path
            labels = new
            # exact alternating minimisation never increases the objective: a tie means a fixed
            # point up to ties, stop instead of cycling
            if len(path) > 1 and path[-1] >= path[-2] * (1 - 1e-12):
                return labels, n_iter, True, path
        return labels, budget, False, path

    def _run(self, H, ridge, hat, labels, lo, hi, output):
        """One run from ``labels``: alternations, then (with ``hat``) local-search rounds."""
        n, init = H.shape[0], labels.copy()
        V = _target_table(self.n_clusters, output)
        path, n_iter, flips, swaps = [], 0, 0, 0
        while True:
            budget = self.max_iter - n_iter
            labels, it, converged, p = self._alternate(H, ridge, labels, lo, hi, output, budget)
            n_iter += it
            path += p
            if hat is None:
                break
            F = (H @ ridge.solve(V[labels])).reshape(n, V.shape[1])
            labels, f, s, finished = _local_search(F, labels.copy(), V, hat, self.C, lo, hi, n)
            flips, swaps = flips + f, swaps + s
            if f + s == 0:
                break
            path.append(self._result(H, ridge, labels, output)["objective_"])
            converged = False  # the polished labels are not yet a fixed point
            if not finished or n_iter >= self.max_iter:
                break
        return self._result(H, ridge, labels, output, init, path, n_iter, flips, swaps, converged)

    def _result(self, H, ridge, labels, output, init=None, path=(), n_iter=0, flips=0, swaps=0,
                converged=True):
        """The fitted attributes of a run ending at ``labels``, with ``beta`` fitted to them."""
        T = _targets(labels, self.n_clusters, output)
        beta = ridge.solve(T)
        objective = elm_objective(H, beta, T, self.C)
        return {"labels_": labels, "beta_": beta, "objective_": objective,
                "objective_path_": [*path, objective], "n_iter_": n_iter, "n_flips_": flips,
                "n_swaps_": swaps, "init_labels_": labels.copy() if init is None else init,
                "converged": converged}

    def _keep(self, run):
        """Store the kept run (ConvergenceWarning if it did not reach a fixed point)."""
        if not run.pop("converged"):
            budget = ", or the local search's budget of n moves ran out" if self.local_search else ""
            warnings.warn(f"EMMC did not converge in max_iter={self.max_iter} alternations (labels still "
                          f"changing{budget}). Increase max_iter.", ConvergenceWarning, stacklevel=4)
        for name, value in run.items():
            setattr(self, name, value)
        self.n_clusters_ = int(np.unique(self.labels_).size)

    def _check_balance(self, H, ridge, hat, output, l, lo, hi):
        """Set ``balance_decided_`` (see :class:`EMMC`); BalanceWarning above ``BALANCE_WARN_FRACTION``."""
        (n, m), labels = (H.shape[0], self.n_clusters), self.labels_
        start = np.bincount(self.init_labels_, minlength=m)
        excess = 0
        if np.all(start > 0):  # a partition into m clusters (not a one-cluster start)
            excess = int(max(np.maximum(start - hi, 0).sum(), np.maximum(lo - start, 0).sum()))
        at_end = 0
        if m > 1:
            V = _target_table(m, output)
            F = (H @ self.beta_).reshape(n, V.shape[1])
            moved = _decide(F if output == "multi" else F[:, 0], m, output) != labels
            r = hat.diag if hat is not None else _hat_diagonal(ridge)
            delta = _move_deltas(F, labels, V, r, self.C)
            counts = np.bincount(labels, minlength=m)
            forbidden = ~((counts[labels] > lo)[:, None] & (counts < hi)[None, :])
            blocked = np.any(forbidden & (delta < -_tolerance(V, self.C)), axis=1)
            at_end = int(np.count_nonzero(moved | blocked))
        self.balance_decided_ = max(excess, at_end)
        if self.balance_decided_ > BALANCE_WARN_FRACTION * n:
            warnings.warn(f"EMMC: the balance constraint (balance={self.balance:g}: every cluster size in "
                          f"[{lo}, {hi}], |N_p - N_q| <= {l}) decided the label of at least "
                          f"{self.balance_decided_} of {n} samples (the initial labels had cluster sizes "
                          f"{start.tolist()}; at the end {at_end} samples would lower the objective in "
                          f"another cluster; final sizes {np.bincount(labels, minlength=m).tolist()}). If "
                          "the clusters may differ in size, raise balance.", BalanceWarning, stacklevel=4)

    def _warn_left_kmeans_start(self, X):
        """Set ``start_moved_`` and ``inertia_ratio_``; KMeansStartWarning (``init="kmeans"``) when
        many samples moved into less compact clusters than the start."""
        n = X.shape[0]
        self.start_moved_ = moved = int(np.count_nonzero(self.labels_ != self.init_labels_))
        end, start = _inertia(X, self.labels_), _inertia(X, self.init_labels_)
        self.inertia_ratio_ = end / start if start > 0 else 1.0
        kmeans = isinstance(self.init, str) and self.init == "kmeans"
        if kmeans and moved > START_MOVED_FRACTION * n and end > start * (1 + 1e-12):
            warnings.warn(f"EMMC moved {moved} of {n} samples ({moved / n:.0%}) away from its k-means start "
                          f"(init_labels_) to clusters that are less compact: the within-cluster sum of "
                          f"squares grew by {self.inertia_ratio_ - 1:.1%}. EMMC's objective prefers these "
                          "labels, which need not agree better with the classes than the k-means labels. If "
                          "compact clusters are wanted, use the k-means labels init_labels_; if the clusters "
                          "may differ in size, raise balance.", KMeansStartWarning, stacklevel=4)

    def decision_function(self, X):
        """ELM outputs ``h(x) beta`` of new points: shape (n,) or (n, n_clusters)."""
        check_is_fitted(self)
        return self._hidden(validate_data(self, X, dtype=np.float64, reset=False)) @ self.beta_

    def predict(self, X):
        """Labels of new points by the trained ELM (sign, nearest id or largest output; no balance)."""
        return _decide(self.decision_function(X), self.n_clusters, self.output_)
