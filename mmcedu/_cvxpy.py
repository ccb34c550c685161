"""One wrapper around ``cvxpy.Problem.solve`` that checks the solver's status.

Every estimator and helper that solves a problem with cvxpy calls :func:`solve_cvxpy`, so the
back end is chosen the same way everywhere (``cvxpy_solver``, ``None`` meaning the caller's
documented default), its options are passed the same way (``solver_options``), and a failed or
inaccurate solve is reported the same way (:class:`mmcedu.exceptions.SolverError`,
:class:`mmcedu.exceptions.SolverWarning`).
"""

from __future__ import annotations

import difflib
import warnings

from .exceptions import SolverError, SolverWarning

__all__ = ["solve_cvxpy", "check_solver_options"]

# Keyword arguments of ``cvxpy.Problem.solve`` itself, accepted with every back end.
_CVXPY_SOLVE_OPTIONS = frozenset(
    {"verbose", "warm_start", "gp", "qcp", "requires_grad", "enforce_dpp", "ignore_dpp",
     "canon_backend", "bounds", "use_quad_obj"}
)
# The settings each back end accepts (SCS 3 and Clarabel 0.x, through cvxpy); a back end not
# listed here is not checked before the solve (its own error is translated afterwards).
_BACKEND_OPTIONS = {
    "SCS": frozenset(
        {"normalize", "scale", "adaptive_scale", "rho_x", "max_iters", "eps", "eps_abs",
         "eps_rel", "eps_infeas", "alpha", "time_limit_secs", "acceleration_lookback",
         "acceleration_interval", "write_data_filename", "log_csv_filename", "use_indirect",
         "gpu", "mkl"}
    ),
}


def _backend_options(name):
    """The option names of back end ``name``, or ``None`` when unknown."""
    if name in _BACKEND_OPTIONS:
        return _BACKEND_OPTIONS[name]
    if name == "CLARABEL":
        try:
            import clarabel
        except ImportError:  # pragma: no cover - cvxpy ships Clarabel
            return None
        settings = clarabel.DefaultSettings()
        return frozenset(a for a in dir(settings) if not a.startswith("_") and a != "default")
    return None


def _unknown_option_error(key, name, valid):
    hint = difflib.get_close_matches(key, sorted(valid), n=1)
    did_you_mean = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ValueError(
        f"solver_options key {key!r} is not an option of the cvxpy back end {name}"
        f"{did_you_mean}. {name} accepts: {', '.join(sorted(valid))}."
    )


def check_solver_options(cvxpy_solver, solver_options):
    """Raise a ``ValueError`` naming a ``solver_options`` key the back end does not accept.

    Checked before the solve for SCS and Clarabel (their settings plus the keyword arguments
    of :meth:`cvxpy.Problem.solve`); other back ends are checked by the back end itself.
    """
    if not solver_options:
        return
    if not isinstance(solver_options, dict):
        raise ValueError(f"solver_options must be a dict or None; got {type(solver_options).__name__}.")
    name = str(cvxpy_solver).upper()
    backend = _backend_options(name)
    if backend is None:
        return
    valid = backend | _CVXPY_SOLVE_OPTIONS
    for key in solver_options:
        if key not in valid:
            raise _unknown_option_error(key, name, valid)


def _interrupted(raw):
    """True when the back end's raw output says it stopped on SIGINT (Ctrl-C).

    ``raw`` is what the back end returned, before cvxpy maps its status (SCS: a dict whose
    ``info["status"]`` is ``"interrupted"``; cvxpy maps it to a generic solver error).
    """
    info = raw.get("info") if isinstance(raw, dict) else None
    status = info.get("status", "") if isinstance(info, dict) else getattr(raw, "status", "")
    return "interrupt" in str(status).lower()


def solve_cvxpy(
    problem, cvxpy_solver=None, *, default="SCS", what="problem", solver_options=None,
    accept_user_limit=False, warn=True,
):
    """Solve a cvxpy problem and check its status.

    Parameters
    ----------
    problem : cvxpy.Problem
    cvxpy_solver : str or None, default=None
        cvxpy solver name; ``None`` means ``default``.
    default : str, default="SCS"
        The solver used when ``cvxpy_solver`` is ``None``.
    what : str, default="problem"
        Name of the problem, used in messages.
    solver_options : dict or None, default=None
        Keyword arguments of :meth:`cvxpy.Problem.solve` (passed to the back end). Keys the
        back end does not accept raise a ``ValueError`` that lists the valid ones.
    accept_user_limit : bool, default=False
        Treat the status ``user_limit`` (the back end stopped at an iteration or time limit
        and returned its last iterate) like ``optimal_inaccurate`` instead of raising.
    warn : bool, default=True
        Emit the :class:`SolverWarning` of an inaccurate solve here; ``False`` leaves it to
        the caller (which reads ``stats["status"]``).

    Returns
    -------
    stats : dict
        ``solver``, ``status``, ``objective``, ``solve_time``, ``setup_time`` and ``n_iter``
        (the back end's iteration count, ``None`` when it does not report one).

    Raises
    ------
    SolverError
        When the status is not optimal (infeasible, unbounded, solver error...).
    ValueError
        When ``solver_options`` has a key the back end does not accept.
    KeyboardInterrupt
        When the solve was interrupted (Ctrl-C); SCS catches the signal itself and returns
        the status ``interrupted``, which is turned back into a ``KeyboardInterrupt``.

    Warns
    -----
    SolverWarning
        When the solver reports ``optimal_inaccurate`` (or ``user_limit`` with
        ``accept_user_limit=True``), unless ``warn=False``.
    """
    import cvxpy as cp

    name = default if cvxpy_solver is None else cvxpy_solver
    check_solver_options(name, solver_options)
    _solve(problem, name, what, solver_options)
    status = problem.status
    early = status == cp.OPTIMAL_INACCURATE or (accept_user_limit and status == cp.USER_LIMIT)
    if early and problem.value is None:
        raise SolverError(
            f"cvxpy solver {name} returned status '{status}' on the {what} without an iterate; "
            "allow more iterations (solver_options)."
        )
    if early and warn:
        warnings.warn(
            f"cvxpy solver {name} returned status '{status}' on the {what}: the solution is "
            "inaccurate. Allow more iterations or tighten the tolerances (solver_options), "
            "or try another back end (cvxpy_solver).",
            SolverWarning,
            stacklevel=3,
        )
    elif not early and status != cp.OPTIMAL:
        raise SolverError(
            f"cvxpy solver {name} returned status '{status}' on the {what}; no usable solution."
        )
    st = problem.solver_stats
    n_iter = getattr(st, "num_iters", None)
    return {
        "solver": name,
        "status": status,
        "objective": float(problem.value),
        "solve_time": getattr(st, "solve_time", None),
        "setup_time": getattr(st, "setup_time", None),
        "n_iter": None if n_iter is None else int(n_iter),
    }


def _solve(problem, name, what, solver_options):
    """``problem.solve`` with back end ``name``; its failures as SolverError / ValueError, Ctrl-C
    as KeyboardInterrupt (the unpacking step sees the back end's raw status first)."""
    import cvxpy as cp

    unpack = problem.unpack_results

    def unpack_checked(solution, chain, inverse_data):
        if _interrupted(solution):
            raise KeyboardInterrupt(f"cvxpy solver {name} was interrupted (Ctrl-C).")
        return unpack(solution, chain, inverse_data)

    problem.unpack_results = unpack_checked
    try:
        problem.solve(solver=name, **(solver_options or {}))
    except TypeError as exc:
        msg = str(exc)
        if "keyword" not in msg and "setting" not in msg:
            raise
        raise ValueError(
            f"solver_options {sorted(solver_options or {})} were refused by the cvxpy back end "
            f"{name}: {msg}. Check the option names of {name}."
        ) from exc
    except cp.error.SolverError as exc:
        raise SolverError(
            f"cvxpy solver {name} failed on the {what}: {exc}. Try another back end "
            "(cvxpy_solver='CLARABEL' or 'SCS'), more iterations (solver_options), or a "
            "better-scaled problem."
        ) from exc
    finally:
        del problem.unpack_results
