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

from . import balance, datasets, kernels, metrics
from .emmc import EMMC
from .ensemble import RobustEnsembleClustering
from .gmmc import GMMC
from .sdp_mmc import SDPMMC
from .svc import SupportVectorClustering
from .umc_rls import UMCRLS

__version__ = "0.1.0"

__all__ = [
    "SDPMMC",
    "GMMC",
    "UMCRLS",
    "EMMC",
    "SupportVectorClustering",
    "RobustEnsembleClustering",
]
