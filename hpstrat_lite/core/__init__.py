"""The paper's method: node homophily, homophily bins, folds, fold quality, ranking, splitters.

numpy, scipy and scikit-learn only; torch is imported lazily where a function returns tensors
(:func:`~hpstrat_lite.core.folds.fold_masks`) or reads a ``Data`` (the splitters).
"""
