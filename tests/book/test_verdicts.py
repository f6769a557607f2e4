"""The verdict rules: the closed set, orderings that must survive every committed rerun, and the
established-change rule of Appendix E (and the audit)."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_book.verdicts import best_model_changes


def sweep(spread, *, datasets=("A", "B", "C"), models=("GCN", "GAT"), seed=0, k=4):
    """Run rows whose cross-fold std of each (dataset, model) is ``spread[method]`` times a block factor."""
    rows = []
    for i, d in enumerate(datasets):
        for j, m in enumerate(models):
            for method, s in spread.items():
                dev = np.linspace(-1.5, 1.5, k) * s * (1 + 0.1 * i + 0.01 * j) / 100
                rows += [{"dataset": d, "model": m, "method": method, "k": k, "seed": seed, "fold": f,
                          "test_acc": 0.6 + 0.05 * j + dev[f]} for f in range(k)]
    return pd.DataFrame(rows)


GOOD = {"random": 3.0, "stratified": 2.0, "hpstrat": 1.0}
FLIPPED = {"random": 3.0, "stratified": 1.0, "hpstrat": 2.0}


def changes_rows(margins, seeds=range(4), noise=0.0):
    """Dataset D: under hpstrat GCN beats GAT by ``margins[0]`` points, under random GAT beats GCN by
    ``margins[1]``; a per-seed wobble of ``noise`` points."""
    rows = []
    for s in seeds:
        wobble = noise * (-1) ** s
        for method, (x, y) in {"hpstrat": (70 + margins[0] + wobble, 70), "random": (70, 70 + margins[1] + wobble)}.items():
            for model, acc in (("GCN", x), ("GAT", y)):
                rows += [{"dataset": "D", "model": model, "method": method, "seed": s, "fold": f,
                          "test_acc": acc / 100} for f in range(4)]
    return pd.DataFrame(rows)


def test_best_model_changes_counts_a_change_only_beyond_the_cross_seed_spread():
    clear = best_model_changes(changes_rows((1.0, 1.0), noise=0.1)).loc["D"]
    assert clear["hpstrat"] == "GCN" and clear["random"] == "GAT" and clear["changes"] and clear["established"]
    assert clear["margin"] == pytest.approx(1.0) and clear["spread"] == pytest.approx(np.std([0.1, -0.1] * 2, ddof=1))
    noisy = best_model_changes(changes_rows((0.24, 0.24), noise=0.5)).loc["D"]
    assert noisy["changes"] and not noisy["established"]  # a 0.24-point margin inside a 0.5-point wobble
    one_seed = best_model_changes(changes_rows((1.0, 1.0), seeds=[0])).loc["D"]
    assert one_seed["changes"] and not one_seed["established"] and one_seed["seeds"] == 1  # no spread, no rule
    alone = changes_rows((1.0, 1.0))
    alone = best_model_changes(alone[alone["model"] == "GCN"]).loc["D"]  # one model: no runner-up, no change
    assert not alone["changes"] and np.isnan(alone["top_two_gap"])
    with pytest.raises(ValueError, match="test_acc"):
        best_model_changes(pd.DataFrame({"dataset": ["D"]}))

