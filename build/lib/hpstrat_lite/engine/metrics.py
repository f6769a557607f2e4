"""Scores of a run's predictions: accuracy, balanced accuracy, macro-F1 and ROC-AUC (numpy and scipy only).

Every training run (built-in batched models, :func:`hpstrat_lite.engine.train.train_runs`, and a user's
factories, :func:`hpstrat_lite.engine.user_models.train_factory_runs`) scores the predictions of its
best-validation-loss weights with all four, on its validation and test nodes, so one run serves every
metric. Model selection and early stopping stay on the validation loss (HpStrat Section 5).

With ``C`` the confusion matrix of the split's nodes (true class by row, predicted class by column),
``support_c`` its row sums and ``predicted_c`` its column sums:

* accuracy: :math:`\\sum_c C_{cc} / n`;
* balanced accuracy: the mean recall :math:`C_{cc} / support_c` over the classes present in the split
  (scikit-learn's ``balanced_accuracy_score``);
* macro-F1: the mean of :math:`F1_c = 2 C_{cc} / (support_c + predicted_c)` over the classes that are
  present or predicted (scikit-learn's ``f1_score(average="macro")``);
* ROC-AUC: with two classes, the AUC of the class-1 probability (Mann-Whitney U over average ranks);
  with more, the one-vs-rest macro average over the classes that have both positive and negative nodes
  in the split (scikit-learn's ``roc_auc_score(multi_class="ovr")`` when every class is present). NaN
  when no class qualifies.
"""
from __future__ import annotations

import numpy as np

from ..rows import METRICS  # the metrics of a row and the suffix of their columns


def classification_scores(probs, y, *, mask=None) -> dict[str, float]:
    """The four :data:`METRICS` of one split.

    Parameters
    ----------
    probs : array of shape (n, C)
        Class probabilities (or any scores monotone in them per class, e.g. a softmax's input for
        accuracy; ROC-AUC ranks them) of every node.
    y : array of shape (n,)
        True class ids ``0..C-1``.
    mask : bool array of shape (n,), optional
        The split's nodes (default: all).

    Returns
    -------
    dict with keys ``accuracy``, ``balanced_accuracy``, ``macro_f1``, ``roc_auc``.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.8, 0.2]])
    >>> s = classification_scores(p, np.array([0, 1, 1, 0]))
    >>> s["accuracy"], s["balanced_accuracy"], round(s["macro_f1"], 4), s["roc_auc"]
    (0.75, 0.75, 0.7333, 1.0)
    """
    from scipy.stats import rankdata

    probs = np.asarray(probs, dtype=np.float64)
    y = np.asarray(y).astype(np.int64, copy=False)
    if mask is not None:
        probs, y = probs[mask], y[mask]
    n, n_classes = probs.shape
    nan = float("nan")
    if n == 0:
        return dict.fromkeys(METRICS, nan)
    pred = probs.argmax(1)
    cm = np.bincount(y * n_classes + pred, minlength=n_classes * n_classes).reshape(n_classes, n_classes)
    tp, support, predicted = np.diag(cm), cm.sum(1), cm.sum(0)
    present = support > 0
    either = (support + predicted) > 0
    out = {"accuracy": float(tp.sum() / n),
           "balanced_accuracy": float((tp[present] / support[present]).mean()),
           "macro_f1": float((2 * tp[either] / (support[either] + predicted[either])).mean())}
    positives = np.zeros((n, n_classes), dtype=bool)
    positives[np.arange(n), y] = True
    n_pos = positives.sum(0)
    columns = [1] if n_classes == 2 else list(range(n_classes))
    ok = [c for c in columns if 0 < n_pos[c] < n]
    if not ok:
        out["roc_auc"] = nan
        return out
    ranks = rankdata(probs[:, ok], axis=0)  # average ranks of tied scores
    rank_sum = (ranks * positives[:, ok]).sum(0)
    pos = n_pos[ok].astype(np.float64)
    out["roc_auc"] = float(((rank_sum - pos * (pos + 1) / 2) / (pos * (n - pos))).mean())
    return out


def run_scores(probs, y, masks, *, splits=("val", "test")) -> list[dict[str, float]]:
    """Per run, the :data:`METRICS` of each split as row columns (``val_acc``, ``test_roc_auc``, ...).

    ``probs`` ``[R, N, C]`` (each run's class probabilities), ``y`` ``[N]``, ``masks`` a sequence of
    boolean ``[R, N]`` arrays, one per name in ``splits``."""
    probs = np.asarray(probs)
    rows = []
    for r in range(probs.shape[0]):
        row = {}
        for split, mask in zip(splits, masks):
            for name, value in classification_scores(probs[r], y, mask=np.asarray(mask[r])).items():
                row[f"{split}_{METRICS[name]}"] = value
        rows.append(row)
    return rows
