"""What every mmcedu estimator shares: its recommended label-free rule and its kernel tag."""

from __future__ import annotations

__all__ = ["LabelFreeMixin"]


class LabelFreeMixin:
    """``label_free_rule(X)`` from class-level facts, and the ``pairwise`` tag.

    An estimator states its rule as ``_label_free_grid(X)`` (the grid, relative to ``X`` where
    it is a width), ``_label_free_criterion``, ``_label_free_tolerance`` and the size of
    :class:`~mmcedu.LabelFreeSearch`'s choice samples, ``_label_free_max_samples``; its class
    docstring says why. With ``kernel="precomputed"`` its input is a kernel matrix, which
    scikit-learn's tools slice by rows and columns (the ``pairwise`` tag).
    """

    _label_free_criterion = ("silhouette",)
    _label_free_tolerance = 0.0
    _label_free_max_samples = 2000

    def label_free_rule(self, X):
        """The recommended way to choose this estimator's parameters without labels, on ``X``.

        :class:`mmcedu.LabelFreeSearch` uses it when it is given no grid and no criterion.

        Returns
        -------
        rule : dict
            ``"param_grid"``: a dict ``{name: [values, ...]}`` for LabelFreeSearch, relative to
            ``X`` where it is a width; ``"criterion"``: a list of LabelFreeSearch criterion names
            (the first chooses, the second breaks ties within ``tolerance``); ``"tolerance"``: float.
        """
        return {"param_grid": self._label_free_grid(X), "criterion": list(self._label_free_criterion),
                "tolerance": float(self._label_free_tolerance)}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "kernel", None) == "precomputed"
        return tags
