"""Independent fits spread over cores or a cluster, with the same results for any number of jobs.

Every grid of the experiments (the papers' full protocols, the comparison) is a list of
independent *tasks*; :func:`map_tasks` runs a function on each of them through
:class:`joblib.Parallel` and returns the results in the order of the tasks.

Reproducible for any ``n_jobs``
    A task carries everything that decides its result, its seed included (a seed is part of
    the task's description: ``(data set, width, restart)``, never drawn from a generator
    shared by the tasks of one worker). :func:`task_seed` derives a seed from such a
    description when the protocol has none of its own. Every task runs with one BLAS/OpenMP
    thread (:func:`threadpoolctl.threadpool_limits`), whatever ``n_jobs``, so its arithmetic is
    the same in a serial run, in a worker process and on a cluster, and two jobs on two cores
    do not oversubscribe them.

How many jobs
    ``n_jobs=None`` reads the environment variable ``MMCEDU_N_JOBS`` (the switch the chapters
    and the command line share); when it is unset, joblib's own default applies: one job,
    or what an enclosing :func:`joblib.parallel_config` says. ``-1`` means every core.

On a cluster
    The same code runs on a Dask cluster through joblib's ``"dask"`` back end::

        from dask.distributed import Client
        client = Client("tcp://scheduler:8786")          # or Client(LocalCluster(...))
        with joblib.parallel_config(backend="dask"):
            table = gmmc_table1(full=True, n_jobs=-1)
"""

from __future__ import annotations

import numbers
import os

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

__all__ = ["N_JOBS_ENV", "resolve_n_jobs", "task_seed", "map_tasks"]

#: The environment variable holding the default number of jobs.
N_JOBS_ENV = "MMCEDU_N_JOBS"


def resolve_n_jobs(n_jobs=None):
    """The number of jobs to ask joblib for.

    Parameters
    ----------
    n_jobs : int or None
        A positive number of jobs, or a negative one in joblib's convention (``-1``: every
        core, ``-2``: every core but one...). ``None`` reads ``$MMCEDU_N_JOBS``; when that is
        unset or empty, ``None`` is returned (joblib's default: one job, unless an enclosing
        :func:`joblib.parallel_config` says otherwise).

    Raises
    ------
    ValueError
        When ``n_jobs`` (or the variable) is 0 or not an integer.
    """
    source = "n_jobs"
    if n_jobs is None:
        raw = os.environ.get(N_JOBS_ENV, "").strip()
        if not raw:
            return None
        source = f"the environment variable {N_JOBS_ENV}"
        try:
            n_jobs = int(raw)
        except ValueError:
            raise ValueError(
                f"{source} must be an integer (1 for serial runs, -1 for every core); got {raw!r}."
            ) from None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(
            f"{source} must be a non-zero integer (1 for serial runs, -1 for every core); "
            f"got {n_jobs!r}."
        )
    return int(n_jobs)


def task_seed(*description):
    """A seed in ``[0, 2**32)`` derived from a task's description (non-negative integers).

    ``task_seed(table_seed, i)`` is the seed of the ``i``-th task of a table: a
    :class:`numpy.random.SeedSequence` of the description, so seeds of different tasks are
    statistically independent and do not depend on which worker runs the task.

    Examples
    --------
    >>> task_seed(0, 1) == task_seed(0, 1) != task_seed(0, 2)
    True
    """
    if not description or any(
        isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0 for d in description
    ):
        raise ValueError(f"A task description is one or more non-negative integers; got {description!r}.")
    return int(np.random.SeedSequence([int(d) for d in description]).generate_state(1)[0])


def _run_one(fn, task):
    with threadpool_limits(limits=1):
        return fn(task)


def map_tasks(fn, tasks, *, n_jobs=None, progress=None):
    """``[fn(task) for task in tasks]``, spread over ``n_jobs`` workers by joblib.

    Parameters
    ----------
    fn : callable
        Called as ``fn(task)``; a module-level function (or a :func:`functools.partial` of
        one), so that worker processes can import it. Its result must be picklable.
    tasks : iterable
        The tasks' descriptions (small, picklable: names, parameters, seeds).
    n_jobs : int or None, default=None
        See :func:`resolve_n_jobs`.
    progress : callable, default=None
        Called as ``progress(done, total)`` each time a result arrives (in task order).

    Returns
    -------
    list
        The results, in the order of ``tasks``, the same for any ``n_jobs`` and back end.
    """
    tasks = list(tasks)
    total = len(tasks)
    n_jobs = resolve_n_jobs(n_jobs)
    if progress is not None:
        progress(0, total)
    if total == 0:
        return []
    jobs = (delayed(_run_one)(fn, t) for t in tasks)
    try:
        results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    except ValueError:  # a back end that cannot yield results as they come
        results = Parallel(n_jobs=n_jobs)(delayed(_run_one)(fn, t) for t in tasks)
    out = []
    for res in results:
        out.append(res)
        if progress is not None:
            progress(len(out), total)
    return out
