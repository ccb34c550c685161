"""Input checks and solver-status checks shared by all estimators."""

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning

__all__ = ["check_n_clusters", "solve_cvxpy", "SolverError", "SolverWarning"]


class SolverError(RuntimeError):
    """A numerical solver failed or returned an unusable status."""


class SolverWarning(ConvergenceWarning):
    """A numerical solver returned a solution of reduced accuracy."""


def check_n_clusters(n_samples, n_clusters):
    """Raise a clear ``ValueError`` when there are fewer samples than clusters."""
    if n_samples < max(2, n_clusters):
        raise ValueError(
            f"n_samples={n_samples} is too few for n_clusters={n_clusters}: every cluster "
            f"needs at least one sample (and clustering needs at least 2). Pass more samples "
            f"or ask for fewer clusters."
        )


def solve_cvxpy(problem, solver=None, *, default="SCS", what="problem", **solver_options):
    """Solve a cvxpy problem and check its status.

    Parameters
    ----------
    problem : cvxpy.Problem
    solver : str or None
        cvxpy solver name; ``None`` means ``default``.
    what : str
        Name of the problem, used in messages.
    **solver_options
        Passed to :meth:`cvxpy.Problem.solve`.

    Returns
    -------
    stats : dict
        ``solver``, ``status``, ``objective``, ``solve_time``, ``setup_time``, ``num_iters``.

    Raises
    ------
    SolverError
        When the status is not optimal (infeasible, unbounded, solver error...).

    Warns
    -----
    SolverWarning
        When the solver reports ``optimal_inaccurate``.
    """
    import cvxpy as cp

    name = default if solver is None else solver
    try:
        problem.solve(solver=name, **solver_options)
    except cp.error.SolverError as exc:
        raise SolverError(
            f"cvxpy solver {name} failed on the {what}: {exc}. Try another solver "
            "(solver='CLARABEL' or 'SCS'), more iterations, or a better-scaled problem."
        ) from exc
    status = problem.status
    if status == cp.OPTIMAL_INACCURATE:
        warnings.warn(
            f"cvxpy solver {name} returned status '{status}' on the {what}: the solution is "
            "inaccurate. Increase max_iters / tighten eps, or try another solver.",
            SolverWarning,
            stacklevel=3,
        )
    elif status != cp.OPTIMAL:
        raise SolverError(
            f"cvxpy solver {name} returned status '{status}' on the {what}; no usable solution."
        )
    st = problem.solver_stats
    return {
        "solver": name,
        "status": status,
        "objective": float(problem.value),
        "solve_time": getattr(st, "solve_time", None),
        "setup_time": getattr(st, "setup_time", None),
        "num_iters": getattr(st, "num_iters", None),
    }

