"""Stage 3b: fold quality (HpStrat Section 4.2, Table 2, Appendix D).

With n nodes, k folds F_1..F_k, classes V_1..V_C and node homophily h (NaN for isolated nodes,
left out of every mean):

- SDD (size deviation):      (1/k)  sum_i | |F_i| - n/k |
- CDD (class deviation):     (1/kC) sum_i sum_c | |F_i ∩ V_c| - |V_c|/k |
- CHD (homophily deviation): (1/k)  sum_i | mean_{v in F_i} h(v) - mean_{v in V} h(v) |
- W1 (not in the paper):     (1/k)  sum_i W_1(h|F_i, h|V), the 1-Wasserstein distance between each
  fold's homophily distribution and the whole graph's. CHD only compares means; W1 sees shape too.
"""
from __future__ import annotations

import numpy as np

from ._validate import check_folds, check_homophily, check_k, check_labels

METRICS = ("sdd", "cdd", "chd", "w1")


def fold_quality(folds, y, homophily, *, k: int) -> dict[str, float]:
    """SDD, CDD, CHD and W1 of one fold assignment (formulas in the module docstring).

    Examples
    --------
    >>> q = fold_quality([0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 0], k=3)
    >>> q["sdd"], q["cdd"], q["chd"]
    (0.0, 0.0, 0.0)
    """
    labels = check_labels(y)
    n = labels.shape[0]
    k = check_k(k, n)
    return quality_of_folds(check_folds(folds, k, n), labels, check_homophily(homophily, n), k)


def quality_of_folds(f, labels, h, k) -> dict[str, float]:
    """:func:`fold_quality` on checked inputs."""
    n = labels.shape[0]
    sizes = np.bincount(f, minlength=k)
    sdd = float(np.abs(sizes - n / k).mean())
    n_classes = int(labels.max()) + 1
    counts = np.bincount(f * n_classes + labels, minlength=k * n_classes).reshape(k, n_classes)
    present = np.bincount(labels, minlength=n_classes) > 0
    class_sizes = counts.sum(axis=0)
    cdd = float(np.abs(counts[:, present] - class_sizes[present] / k).mean())
    finite = ~np.isnan(h)
    if finite.any():
        hf, ff = h[finite], f[finite]
        fold_n = np.bincount(ff, minlength=k)
        fold_mean = np.bincount(ff, weights=hf, minlength=k) / np.maximum(fold_n, 1)
        fold_mean[fold_n == 0] = np.nan
        chd = float(np.nanmean(np.abs(fold_mean - hf.mean())))
        w1 = float(np.mean([_wasserstein_1(hf[ff == i], hf) for i in range(k) if fold_n[i]]))
    else:
        chd = w1 = float("nan")
    return {"sdd": sdd, "cdd": cdd, "chd": chd, "w1": w1}


def _wasserstein_1(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import wasserstein_distance

    return float(wasserstein_distance(a, b))
