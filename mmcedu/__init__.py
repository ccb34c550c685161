"""mmcedu: maximum margin clustering and its relatives, implemented to be read.

Estimators (scikit-learn API: ``fit``, ``fit_predict``, ``labels_``):

- :class:`SDPMMC`: SDP maximum margin clustering (Xu et al. 2004).
- :class:`GMMC`: generalized maximum margin clustering (Valizadegan & Jin 2006).
- :class:`UMCRLS`: unsupervised multi-class regularized least squares (Pahikkala et al. 2012).
- :class:`EMMC`: maximum margin clustering with an extreme learning machine (Zhang et al.).
- :class:`SupportVectorClustering`: support vector clustering with cone cluster labeling
  (Ben-Hur et al. 2001; Lee & Daniels 2007).
- :class:`RobustEnsembleClustering`: robust ensemble clustering with an l_{1,2} loss.

Shared pieces: :mod:`mmcedu.kernels`, :mod:`mmcedu.metrics`, :mod:`mmcedu.datasets`,
:mod:`mmcedu.balance`.
"""

from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec

from . import balance, datasets, kernels, metrics

__version__ = "0.1.0"

# (module, estimator) pairs; a module enters the package when its file exists.
_ESTIMATORS = [
    ("sdp_mmc", "SDPMMC"),
    ("gmmc", "GMMC"),
    ("umc_rls", "UMCRLS"),
    ("emmc", "EMMC"),
    ("svc", "SupportVectorClustering"),
    ("ensemble", "RobustEnsembleClustering"),
]

__all__ = []
for _module, _name in _ESTIMATORS:
    if _find_spec(f"{__name__}.{_module}") is not None:
        globals()[_name] = getattr(_import_module(f".{_module}", __name__), _name)
        __all__.append(_name)
del _module, _name
