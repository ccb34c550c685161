"""Exceptions and warnings raised by mmcedu (as :mod:`sklearn.exceptions` is for scikit-learn).

Every result of the package is either right, or comes with one of these (or a
``ValueError`` saying what is wrong with the input):

========================  =========================================================================
class                     meaning
========================  =========================================================================
``SolverError``           a numerical solver gave no usable answer (the message names the status
                          and what to change)
``SolverWarning``         a solver stopped early or returned a solution of reduced accuracy; a
                          :class:`sklearn.exceptions.ConvergenceWarning`, like every
                          non-convergence warning of the package
``MemoryBudgetError``     a dense path would allocate more than the memory budget
                          (:func:`mmcedu.get_config`); raised *before* allocating, naming the
                          low-rank or subsampling parameter to use
``DegenerateDataWarning`` the data (or the kernel at this width) has no structure to cluster:
                          identical samples, a kernel that is numerically the identity or all
                          ones; the labels are then arbitrary
``ClusterCountWarning``   the result has a different number of clusters than asked for, or a
                          single cluster where a split was expected
``BalanceWarning``        a class-balance constraint decided the answer (it moved samples that
                          the objective alone would have put elsewhere)
``KMeansStartWarning``    a method started from k-means labels and relabelled many samples into
                          clusters that are less compact (larger k-means objective) than its
                          start
========================  =========================================================================
"""

from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "SolverError",
    "SolverWarning",
    "MemoryBudgetError",
    "DegenerateDataWarning",
    "ClusterCountWarning",
    "BalanceWarning",
    "KMeansStartWarning",
    "ConvergenceWarning",
]


class SolverError(RuntimeError):
    """A numerical solver failed or returned an unusable status."""


class SolverWarning(ConvergenceWarning):
    """A numerical solver stopped early or returned a solution of reduced accuracy."""


class MemoryBudgetError(MemoryError):
    """A computation would need more memory than the budget; raised before allocating."""


class DegenerateDataWarning(UserWarning):
    """The data, or the kernel at the chosen width, has no cluster structure to find."""


class ClusterCountWarning(UserWarning):
    """The number of clusters found differs from the number asked for (or is one)."""


class BalanceWarning(UserWarning):
    """A class-balance constraint, not the objective, decided part of the answer."""


class KMeansStartWarning(UserWarning):
    """A fit started from k-means labels ended, after relabelling many samples, with a larger
    k-means objective (within-cluster sum of squares) than its start."""
