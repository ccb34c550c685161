"""The SDP relaxation of :mod:`mmcedu.sdp_mmc` solved by cvxpy, and its KKT conditions.

The program (Eq. (2) of Valizadegan & Jin 2006 with Xu et al.'s balance rows) is written out
in :class:`mmcedu.SDPMMC`; the notation is that of :mod:`mmcedu.sdp_mmc`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._cvxpy import solve_cvxpy
from .balance import max_imbalance

__all__ = ["SDPSolution", "solve_sdp_mmc"]


@dataclass
class SDPSolution:
    """Primal and dual solution of the SDP of :func:`solve_sdp_mmc`.

    ``alpha`` is read from the dual of the block constraint: its dual matrix is
    ``[[A, -alpha], [-alpha^T, 1]]``, so ``alpha = -Z[:n, n] / Z[n, n]``. ``info`` is the
    back end's report (``solver``, ``status``, ``n_iter``, ``objective``, times).
    """

    M: np.ndarray
    delta: float
    mu: np.ndarray
    nu: np.ndarray | None
    C: float | None
    l: int
    alpha: np.ndarray
    duals: dict = field(repr=False)
    info: dict = field(default_factory=dict)


def _as_column(v, n):
    import cvxpy as cp

    return cp.reshape(v, (n, 1), order="F")


def solve_sdp_mmc(
    K, C=1.0, balance=0.1, *, cvxpy_solver=None, solver_options=None, fix_M=None, warn=True,
):
    """Solve the SDP relaxation of maximum margin clustering (source Eq. (2)) with cvxpy.

    ``K`` is used as given: centre it first (:func:`mmcedu.kernels.center_kernel`), as
    :class:`mmcedu.SDPMMC` does, whose docstring writes the program out.

    Parameters
    ----------
    K : array-like of shape (n, n)
    C : float or None, default=1.0
        ``None``: hard margin (no ``nu``).
    balance : float, default=0.1
        ``l = floor(balance n)`` bounds ``|M e|`` row-wise.
    cvxpy_solver : str or None, default=None
        cvxpy back end; ``None`` means SCS.
    solver_options : dict or None, default=None
        Passed to the back end (keyword arguments of ``cvxpy.Problem.solve``).
    fix_M : array-like of shape (n, n), default=None
        Add the constraint ``M = fix_M``. With ``fix_M = y y^T`` the optimum is exactly
        ``svm_dual_objective(K, y, C)`` (the Schur-complement step of the derivation).
    warn : bool, default=True
        Warn (:class:`~mmcedu.exceptions.SolverWarning`) when the back end stopped early;
        ``False`` leaves it to the caller, which reads ``info["status"]``.

    Returns
    -------
    SDPSolution
        When the back end stopped at its iteration limit or inaccurately
        (``info["status"]`` is ``"optimal_inaccurate"`` or ``"user_limit"``), its last
        iterate: ``delta`` is then not the SDP value and may even be negative; use
        :func:`mmcedu.sdp_mmc.sdp_lower_bound` for a certified bound.

    Memory: about ``2000 n^2`` bytes, cvxpy's problem data (:meth:`mmcedu.SDPMMC.memory_bytes`).
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}.")
    n = K.shape[0]
    l = max_imbalance(n, balance)
    e = np.ones(n)
    M = cp.Variable((n, n), symmetric=True, name="M")
    mu = cp.Variable(n, name="mu")
    delta = cp.Variable(name="delta")
    if C is None:
        nu = None
        g = e + mu
        corner = delta
    else:
        nu = cp.Variable(n, name="nu")
        g = e + mu - nu
        corner = delta - 2.0 * C * cp.sum(nu)
    block = cp.bmat(
        [
            [cp.multiply(K, M), _as_column(g, n)],
            [_as_column(g, n).T, cp.reshape(corner, (1, 1), order="F")],
        ]
    )
    cons = {
        "block": block >> 0,
        "M_psd": M >> 0,
        "diag": cp.diag(M) == 1,
        "balance_upper": M @ e <= l,
        "balance_lower": M @ e >= -l,
        "mu": mu >= 0,
    }
    if nu is not None:
        cons["nu"] = nu >= 0
    if fix_M is not None:
        cons["fix_M"] = M == np.asarray(fix_M, dtype=float)
    problem = cp.Problem(cp.Minimize(delta), list(cons.values()))
    info = solve_cvxpy(
        problem, cvxpy_solver, default="SCS", what="SDP maximum margin clustering relaxation",
        solver_options=solver_options, accept_user_limit=True, warn=warn,
    )
    Mv = np.asarray(M.value)
    Mv = (Mv + Mv.T) / 2.0
    duals = {k: (None if c.dual_value is None else np.asarray(c.dual_value)) for k, c in cons.items()}
    Z = duals["block"]
    alpha = -Z[:n, n] / Z[n, n] if Z is not None and Z[n, n] > 0 else np.full(n, np.nan)
    return SDPSolution(
        M=Mv,
        delta=float(delta.value),
        mu=np.asarray(mu.value),
        nu=None if nu is None else np.asarray(nu.value),
        C=C,
        l=l,
        alpha=alpha,
        duals=duals,
        info=info,
    )
