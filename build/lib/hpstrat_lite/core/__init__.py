"""The paper's method: node homophily, homophily bins, folds, fold quality, ranking, splitters.

numpy, scipy, numba, pandas and scikit-learn only (scikit-learn is loaded with the splitters); torch only
where a function returns tensors (:func:`~hpstrat_lite.core.folds.fold_masks`, the ``[pyg]`` extra).
"""
