"""Scores of a run's predictions (hpstrat_lite.engine.metrics) against scikit-learn's."""
import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from hpstrat_lite.engine.metrics import METRICS, classification_scores, run_scores


@pytest.mark.parametrize("n_classes", [2, 3, 6])
def test_scores_equal_scikit_learn(n_classes):
    rng = np.random.default_rng(n_classes)
    y = rng.integers(0, n_classes, 300)
    p = rng.random((300, n_classes))
    p[np.arange(300), y] += 0.4
    p[:20] = p[20:40]  # tied scores
    p /= p.sum(1, keepdims=True)
    mask = rng.random(300) < 0.6
    got = classification_scores(p, y, mask=mask)
    yt, pt = y[mask], p[mask]
    pred = pt.argmax(1)
    assert got["accuracy"] == pytest.approx((pred == yt).mean())
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(yt, pred))
    assert got["macro_f1"] == pytest.approx(f1_score(yt, pred, average="macro"))
    auc = roc_auc_score(yt, pt[:, 1]) if n_classes == 2 else roc_auc_score(yt, pt, multi_class="ovr")
    assert got["roc_auc"] == pytest.approx(auc)


def test_constant_scores_and_missing_classes():
    y = np.array([0, 0, 0, 1, 1, 2])
    majority = np.zeros((6, 3))
    majority[:, 0] = 1.0
    s = classification_scores(majority, y)
    assert s["accuracy"] == 0.5 and s["balanced_accuracy"] == pytest.approx(1 / 3)
    assert s["roc_auc"] == 0.5  # a constant score ranks every node alike
    # a class absent from the split is left out of the one-vs-rest mean; none with both sides: NaN
    p = np.eye(3)[[0, 0, 1, 1]] * 0.8 + 0.1
    assert classification_scores(p, np.array([0, 0, 1, 1]))["roc_auc"] == 1.0
    assert np.isnan(classification_scores(p[:2], np.array([0, 0]))["roc_auc"])
    assert np.isnan(classification_scores(p, np.array([0, 0, 1, 1]), mask=np.zeros(4, bool))["accuracy"])


def test_run_scores_names_the_columns():
    rng = np.random.default_rng(0)
    probs = rng.random((2, 10, 2))
    y = rng.integers(0, 2, 10)
    masks = [rng.random((2, 10)) < 0.5, rng.random((2, 10)) < 0.5]
    rows = run_scores(probs, y, masks)
    assert len(rows) == 2 and set(rows[0]) == {f"{s}_{c}" for s in ("val", "test") for c in METRICS.values()}
    assert rows[1]["test_roc_auc"] == classification_scores(probs[1], y, mask=masks[1][1])["roc_auc"]
