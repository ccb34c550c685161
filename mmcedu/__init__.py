"""mmcedu: maximum margin clustering and its relatives, implemented to be read.

The public API, in layers (each layer uses only the layers below it)::

    LabelFreeSearch and its criteria  ->  estimators  ->  core helpers

Estimators (scikit-learn clusterers: ``fit``, ``fit_predict``, ``labels_``, ``n_clusters_``,
``n_iter_``), importable from ``mmcedu`` and defined with their mathematics in:

- :class:`SDPMMC` in :mod:`mmcedu.sdp_mmc`: SDP maximum margin clustering (Xu et al. 2004),
  the exact SVM dual ``svm_dual_objective``, the cvxpy relaxation, a certified low-rank
  solver and the roundings.
- :class:`GMMC` in :mod:`mmcedu.gmmc`: generalized maximum margin clustering (Valizadegan &
  Jin 2006), its reduced matrices and a certified low-rank solver.
- :class:`UMCRLS` in :mod:`mmcedu.umc_rls`: unsupervised multi-class regularized least squares
  (Pahikkala et al. 2012), the hat matrix and the three searches with O(1) flip updates.
- :class:`EMMC` in :mod:`mmcedu.emmc`: maximum margin clustering with an extreme learning
  machine (Zhang, Xia & Liu), the ELM ridge solve and the balanced label step.
- :class:`SupportVectorClustering` in :mod:`mmcedu.support_vector_clustering`: support vector
  clustering (Ben-Hur et al. 2001) with the q-list (``gamma_path``) and cone cluster
  labeling (Lee & Daniels 2007).
- :class:`RobustEnsembleClustering` in :mod:`mmcedu.robust_ensemble`: robust ensemble
  clustering with an l_{1,2} loss solved by an augmented Lagrangian.

Choosing parameters without labels (a meta-estimator over any of the above or any
scikit-learn clusterer; no estimator imports it):

- :class:`LabelFreeSearch` in :mod:`mmcedu.model_selection`: a grid search scored by a
  label-free criterion, parallel through joblib. ``LabelFreeSearch(UMCRLS(n_clusters=3)).fit(X)``
  takes the estimator's recommended rule (``label_free_rule(X)``: grid, criterion, tolerance).
- :mod:`mmcedu.criteria`: the criteria, as functions: stability, transfer stability,
  silhouettes, the eigengap and the cluster-count plateau; the ``"objective"`` criterion is
  each estimator's own ``objective_contrast(X)``.

Core helpers (no estimator inside):

- :mod:`mmcedu.kernels`: kernel matrices, the median heuristic ``median_gamma`` (the meaning
  of ``gamma=None`` everywhere), the one width-grid builder ``gamma_grid`` (octaves around the
  median heuristic, or the papers' fractions of the distances), Laplacians, centring, Nystroem.
- :mod:`mmcedu.balance`: class-balance constraints and balanced label assignments.
- :mod:`mmcedu.partitions`: generating and combining base clusterings (ensembles, the
  co-association and majority-vote baselines).
- :mod:`mmcedu.metrics`: clustering error under the best matching, ARI, NMI, and the exact
  chance level of a quadratic objective under random relabelings.
- :mod:`mmcedu.datasets`: the seeded offline data sets of the book.
- :mod:`mmcedu.exceptions`: the errors and warnings of the package, and what each means.
- :func:`get_config`, :func:`set_config`, :func:`config_context`: package settings (the
  memory budget that dense paths check before allocating).

The book's laboratory (the papers' tables, the comparison protocol, the ledger, the experiment
cache) is not part of this package: it lives beside the book in the repository, as the
``mmcedu_lab`` package in ``lab/``, and uses this package; this package never uses it.

Every estimator has ``label_free_rule(X)`` (its recommended way to choose its parameters
without labels), ``memory_bytes(n_samples, n_features)`` (what a fit holds at once) and
``solver_info_`` after a fit; the four with an objective (SDPMMC, GMMC, UMCRLS, EMMC) have
``objective_contrast(X)``.

The shared parameters (``n_clusters``, ``kernel``, ``gamma``, ``C``, ``balance``, ``solver``,
``cvxpy_solver``, ``solver_options``, ``n_components``, ``max_iter``, ``tol``,
``random_state``) have one meaning in every estimator; the book's introduction lists them.
"""

from . import balance, criteria, datasets, exceptions, kernels, metrics, model_selection, partitions
from ._config import config_context, get_config, set_config
from .emmc import EMMC
from .gmmc import GMMC
from .model_selection import LabelFreeSearch
from .robust_ensemble import RobustEnsembleClustering
from .sdp_mmc import SDPMMC
from .support_vector_clustering import SupportVectorClustering
from .umc_rls import UMCRLS

__version__ = "0.1.0"

__all__ = [
    "SDPMMC",
    "GMMC",
    "UMCRLS",
    "EMMC",
    "SupportVectorClustering",
    "RobustEnsembleClustering",
    "LabelFreeSearch",
    "balance",
    "criteria",
    "datasets",
    "exceptions",
    "kernels",
    "metrics",
    "model_selection",
    "partitions",
    "get_config",
    "set_config",
    "config_context",
]
