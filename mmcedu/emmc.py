"""EMMC: maximum margin clustering with an extreme learning machine (Zhang, Xia and Liu).

An extreme learning machine (ELM) maps every input ``x`` through a random hidden layer,

    h(x) = g(x W + b)          (W: d x L, b: L, drawn once; g: sigmoid / tanh / relu),

and fits only the output weights ``beta`` by ridge regression on targets ``T``:

    min_beta  1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2                 (1), (4)
    beta = (H^T H + I_L / C)^{-1} H^T T         (primal, L x L system)
         = H^T (H H^T + I_n / C)^{-1} T         (dual, n x n system).

EMMC makes the targets unknown and alternates (the paper's (2) and (5), with ``t`` added to
the minimisation variables, see the errata in the book):

1. fix the labels ``t``, fit ``beta`` (one ridge solve: the matrix is factorized once per
   fit, only ``T`` changes);
2. fix ``beta``, choose the labels that minimise ``sum_i ||h(x_i) beta - t_i||^2`` under the
   class-balance constraint ``|N_p - N_q| <= l``;

until the labels stop changing. Both steps minimise the same objective exactly, so it never
increases and the iteration cannot cycle (ties aside).

Label steps (``f = H beta``):

* one output, two clusters, ``t_i in {-1, +1}``: ``t = sign(f)``, moved the least to meet
  ``|e^T t| <= l`` (:func:`mmcedu.balance.balanced_sign`; Proposition 1).
* one output, ``m > 2`` clusters, ``t_i in {1, ..., m}``: the nearest integer to ``f_i``
  clipped to ``[1, m]`` (not the paper's ``i - 1 < f <= i``, see the errata).
* ``m`` outputs, one-hot targets: ``argmax_k f_ik``.

When the unconstrained labels violate the balance constraint, an exact balanced assignment
is solved (a dynamic programme over the sorted outputs for one output, a transportation
linear programme for several): cluster sizes ``lo <= N_k <= hi``,
``hi - lo <= l`` (for two clusters this box is exactly ``|N_1 - N_2| <= l``; for more
clusters it is a sufficient condition centred at ``n / m``).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import check_n_clusters
from .balance import (
    balanced_assignment,
    balanced_sign,
    count_bounds,
    max_imbalance,
    ordered_balanced_assignment,
)

__all__ = [
    "EMMC",
    "ELMRidge",
    "hidden_layer",
    "elm_objective",
    "count_bounds",
    "balanced_assignment",
    "ordered_balanced_assignment",
    "assign_labels",
]

_ACTIVATIONS = {
    "sigmoid": lambda Z: 0.5 * (1.0 + np.tanh(0.5 * Z)),  # 1 / (1 + exp(-Z)) without overflow
    "tanh": np.tanh,
    "relu": lambda Z: np.maximum(Z, 0.0),
}


def hidden_layer(X, W, b, activation="sigmoid"):
    """ELM hidden-layer outputs ``H[i] = h(x_i) = g(x_i W + b)``, shape (n_samples, L)."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}; got {activation!r}.")
    return _ACTIVATIONS[activation](np.asarray(X, dtype=float) @ W + b)


class ELMRidge:
    """Ridge output weights of an ELM, factorized once for many target matrices.

    Solves ``min_beta 1/2 ||beta||^2 + C/2 ||H beta - T||_F^2`` (the paper's (1) and (4)):

    * ``form="primal"``: ``beta = (H^T H + I_L / C)^{-1} H^T T`` (an L x L Cholesky factor);
    * ``form="dual"``: ``beta = H^T alpha`` with ``alpha = (H H^T + I_n / C)^{-1} T`` (an
      n x n Cholesky factor). The residuals are then ``T - H beta = alpha / C``.
    * ``form="auto"``: primal when ``L <= n``, dual otherwise (the smaller system).

    Both forms give the same ``beta`` (push-through identity
    ``(H^T H + I/C)^{-1} H^T = H^T (H H^T + I/C)^{-1}``).

    Parameters
    ----------
    H : ndarray of shape (n_samples, L)
    C : float > 0
    form : {"auto", "primal", "dual"}
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
        if form == "primal":
            A = H.T @ H
        else:
            A = H @ H.T
        A[np.diag_indices_from(A)] += 1.0 / self.C
        self._factor = cho_factor(A, lower=True, check_finite=False)

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
    """The label step: targets minimising ``sum_i ||f_i - t_i||^2`` under the balance box.

    Parameters
    ----------
    F : ndarray of shape (n_samples,) for one output or (n_samples, n_clusters) for several.
    n_clusters : int
    output : {"single", "multi"}
    lo, hi : int
        Count bounds from :func:`count_bounds`.
    l : int, default=None
        The bound on ``|N_+ - N_-|`` (one output, two clusters: :func:`balanced_sign`).

    Returns
    -------
    labels : ndarray of int in ``{0, ..., n_clusters - 1}``
    """
    m = n_clusters
    if output == "single" and m == 2:
        if l is None:
            l = hi - lo
        return (balanced_sign(F, l) > 0).astype(int)
    if output == "single":
        # nearest integer in {1..m} (the minimiser of (3)), as a 0-based label
        labels = np.clip(np.rint(F), 1, m).astype(int) - 1
        cost = (F[:, None] - np.arange(1, m + 1)[None, :]) ** 2
    else:
        labels = np.argmax(F, axis=1)
        cost = -2.0 * F  # ||f_i - e_k||^2 = ||f_i||^2 - 2 f_ik + 1
    counts = np.bincount(labels, minlength=m)
    if counts.min() >= lo and counts.max() <= hi:
        return labels
    if output == "single":
        return ordered_balanced_assignment(F, m, lo, hi)
    return balanced_assignment(cost, lo, hi)


def _targets(labels, n_clusters, output):
    if output == "single" and n_clusters == 2:
        return np.where(labels == 1, 1.0, -1.0)
    if output == "single":
        return labels.astype(float) + 1.0
    T = np.zeros((labels.size, n_clusters))
    T[np.arange(labels.size), labels] = 1.0
    return T


def _decide(F, n_clusters, output):
    """Unconstrained labels of new points (no balance constraint)."""
    if output == "single" and n_clusters == 2:
        return (F > 0).astype(int)
    if output == "single":
        return np.clip(np.rint(F), 1, n_clusters).astype(int) - 1
    return np.argmax(F, axis=1)


class EMMC(ClusterMixin, BaseEstimator):
    """Maximum margin clustering with an extreme learning machine (EMMC).

    Alternating optimisation of the ELM problems (2) (one output) and (5) (``m`` outputs)
    of Zhang, Xia and Liu over the output weights ``beta`` and the labels ``t``:

    ``min_{t, beta} 1/2 ||beta||^2 + C/2 sum_i ||h(x_i) beta - t_i||^2``
    subject to ``|N_p - N_q| <= l`` for every pair of clusters.

    Symbols: ``h(x)`` is the hidden-layer row vector (``L`` = ``n_hidden`` random sigmoid
    nodes), ``beta`` the output weights, ``t_i`` the target of sample ``i`` (``+-1`` for two
    clusters with one output, ``1..m`` for ``m`` clusters with one output, a one-hot vector
    with ``m`` outputs), ``xi_i = t_i - h(x_i) beta`` the training error, ``C`` the
    regularisation trade-off and ``l = floor(balance * n)`` the class-balance bound.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters ``m`` (``1`` is allowed and puts every sample in cluster 0).
    n_hidden : int, default=200
        Number of hidden nodes ``L``. The ridge system is ``L x L`` (primal) when
        ``L <= n`` and ``n x n`` (dual) otherwise.
    C : float, default=1.0
        Weight of the squared training errors in (1) / (4); the ridge penalty is ``1 / C``.
    activation : {"sigmoid", "tanh", "relu"}, default="sigmoid"
        Hidden-node activation ``g``. Input weights and biases are drawn uniformly from
        ``[-1, 1]`` once per fit.
    balance : float in [0, 1], default=0.1
        Class-balance bound as a fraction of ``n``: ``|N_p - N_q| <= l = floor(balance * n)``
        (capped at ``n - 2`` for two clusters so that neither is empty).
    init : {"kmeans", "random"} or array-like of shape (n_samples,), default="kmeans"
        Initial labels: k-means (10 restarts), uniformly random labels, or given labels
        (then a single run is made whatever ``n_init``).
    output : {"single", "multi"}, default="single"
        One output node (targets ``+-1`` or integer cluster ids ``1..m``, the paper's (2))
        or ``m`` output nodes with one-hot targets ((5)). One output with ``m > 2`` depends
        on how the clusters are numbered; prefer ``"multi"`` there.
    n_init : int, default=1
        Number of runs from different initial labels (same hidden layer, so the objectives
        are comparable); the run with the lowest objective is kept (no labels used).
    max_iter : int, default=50
        Maximum number of alternations per run.
    random_state : int, RandomState instance or None, default=None
        Seeds the hidden layer and the initialisations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels in ``{0, ..., n_clusters - 1}``.
    objective_ : float
        Objective (2) / (5) of the kept run at its final labels.
    objective_path_ : list of float
        Objective after every alternation of the kept run (non-increasing).
    n_iter_ : int
        Alternations made by the kept run.
    init_labels_ : ndarray of shape (n_samples,)
        Initial labels of the kept run.
    beta_ : ndarray of shape (n_hidden,) or (n_hidden, n_clusters)
        Output weights.
    input_weights_ : ndarray of shape (n_features, n_hidden)
        Hidden-layer input weights ``W``.
    biases_ : ndarray of shape (n_hidden,)
        Hidden-layer biases ``b``.
    l_ : int
        Balance bound used, ``floor(balance * n)``.
    count_bounds_ : tuple of int
        ``(lo, hi)``: every cluster size lies in ``[lo, hi]`` with ``hi - lo <= l_``.
    form_ : {"primal", "dual"}
        Which ridge system was factorized.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    C. Zhang, S. Xia, B. Liu. Maximum margin clustering using extreme learning machine.
    (Equations (1)-(5), Proposition 1, Tables 1-3.)

    G.-B. Huang, H. Zhou, X. Ding, R. Zhang. Extreme learning machine for regression and
    multiclass classification. IEEE Trans. SMC-B, 2012.

    K. Zhang, I. W. Tsang, J. T. Kwok. Maximum margin clustering made practical. IEEE Trans.
    Neural Networks 20 (2009) 583-596.

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
        "output": [StrOptions({"single", "multi"})],
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
        output="single",
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
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def _hidden(self, X):
        return hidden_layer(X, self.input_weights_, self.biases_, self.activation)

    def _initial_labels(self, X, rng):
        m = self.n_clusters
        if not isinstance(self.init, str):
            init = np.asarray(self.init)
            if init.shape != (X.shape[0],):
                raise ValueError(
                    f"init labels must have shape ({X.shape[0]},); got {init.shape}."
                )
            values, labels = np.unique(init, return_inverse=True)
            if values.size > m:
                raise ValueError(
                    f"init has {values.size} distinct labels but n_clusters={m}."
                )
            return labels.astype(int)
        if self.init == "random":
            return rng.randint(m, size=X.shape[0])
        km = KMeans(n_clusters=m, n_init=10, random_state=rng.randint(np.iinfo(np.int32).max))
        return km.fit(X).labels_.astype(int)

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
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        m = self.n_clusters
        check_n_clusters(n, m)
        rng = check_random_state(self.random_state)

        # balance bound l (the paper's |N_p - N_q| <= l); infeasible -> clear error, not cycling
        if m == 2:
            l = max_imbalance(n, self.balance)
            l = min(l, n - 2)  # neither cluster empty
        else:
            l = int(np.floor(self.balance * n + 1e-12))
        lo, hi = count_bounds(n, m, l)
        self.l_, self.count_bounds_ = l, (lo, hi)

        # random hidden layer, drawn once per fit; ridge system factorized once per fit
        L = self.n_hidden
        self.input_weights_ = rng.uniform(-1.0, 1.0, size=(d, L))
        self.biases_ = rng.uniform(-1.0, 1.0, size=L)
        H = self._hidden(X)
        ridge = ELMRidge(H, self.C)
        self.form_ = ridge.form

        n_runs = self.n_init if isinstance(self.init, str) else 1
        best = None
        for _ in range(n_runs):
            run = self._run(H, ridge, self._initial_labels(X, rng), l, lo, hi)
            if best is None or run["objective"] < best["objective"]:
                best = run
        if not best["converged"]:
            warnings.warn(
                f"EMMC did not converge in max_iter={self.max_iter} alternations (labels still "
                "changing). Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.labels_ = best["labels"]
        self.beta_ = best["beta"]
        self.objective_ = best["objective"]
        self.objective_path_ = best["path"]
        self.n_iter_ = best["n_iter"]
        self.init_labels_ = best["init"]
        return self

    def _run(self, H, ridge, labels, l, lo, hi):
        m, output = self.n_clusters, self.output
        init = labels.copy()
        path = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            T = _targets(labels, m, output)
            beta = ridge.solve(T)  # step 2: ELM training with the labels fixed
            F = H @ beta
            new = assign_labels(F, m, output, lo, hi, l)  # steps 3-4
            T_new = _targets(new, m, output)
            obj = 0.5 * float(np.sum(beta**2)) + 0.5 * self.C * float(np.sum((T_new - F) ** 2))
            path.append(obj)
            if np.array_equal(new, labels):
                converged = True
                break
            labels = new
            # exact alternating minimisation never increases the objective: a tie means a
            # fixed point up to ties, stop instead of cycling
            if len(path) > 1 and path[-1] >= path[-2] * (1 - 1e-12):
                converged = True
                break
        # final beta for the final labels (labels and beta consistent for predict)
        T = _targets(labels, m, output)
        beta = ridge.solve(T)
        obj = elm_objective(H, beta, T, self.C)
        return {
            "labels": labels,
            "beta": beta,
            "objective": obj,
            "path": path + [obj],
            "n_iter": n_iter,
            "init": init,
            "converged": converged,
        }

    def decision_function(self, X):
        """ELM outputs ``h(x) beta`` of new points: shape (n,) or (n, n_clusters)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._hidden(X) @ self.beta_

    def predict(self, X):
        """Assign new points with the trained ELM (sign / nearest id / largest output).

        The balance constraint is not applied to new points.
        """
        return _decide(self.decision_function(X), self.n_clusters, self.output)
