"""The sweep's report functions read the test score named by ``metric=``, on rows where accuracy and
balanced accuracy order the split methods (and the models) the opposite way."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_book import verdicts
from hpstrat_book.controls import block_std, control_tests
from hpstrat_book.hpstrat import (best_model_changes, cross_fold_std, rank_summary, regression_table,
                                          stability_tests, std_reduction_share)
from hpstrat_lite.rows import score_column

Z = np.array([-1.5, -0.5, 0.5, 1.5])  # fold offsets: the cross-fold std of c + s * Z is s * std(Z)
ACC_SPREAD = {"hpstrat": 0.01, "stratified": 0.02, "random": 0.03}  # HpStrat the most stable in accuracy ...
BAL_SPREAD = {"hpstrat": 0.03, "stratified": 0.02, "random": 0.01}  # ... and the least in balanced accuracy
LEVEL = {"GCN": (0.80, 0.70), "GAT": (0.78, 0.72)}  # GCN best in accuracy, GAT in balanced accuracy


def metric_rows(n_datasets=8, seeds=(0, 1)):
    rows = []
    for d in range(n_datasets):
        for model, (acc, bal) in LEVEL.items():
            for method in ACC_SPREAD:
                for seed in seeds:
                    wobble = 1 + (d + seed) / 50  # pairs differ, orders do not
                    for fold in range(4):
                        rows.append({"dataset": f"D{d}", "model": model, "method": method, "k": 4, "seed": seed,
                                     "fold": fold, "test_homophily": 0.5 + Z[fold] / 10,
                                     "test_acc": acc + wobble * ACC_SPREAD[method] * Z[fold],
                                     "test_balanced_acc": bal + wobble * BAL_SPREAD[method] * Z[fold] * (1 - d / 100)})
    return pd.DataFrame(rows)


def test_cross_fold_std_reads_the_metric_column():
    rows = metric_rows()
    for metric, column in (("accuracy", "test_acc"), ("balanced_accuracy", "test_balanced_acc")):
        std = cross_fold_std(rows, metric=metric).set_index(["dataset", "model", "method"])
        one = rows[(rows["dataset"] == "D3") & (rows["model"] == "GAT") & (rows["method"] == "random")]
        expected = np.mean([np.std(100 * g[column], ddof=1) for _, g in one.groupby("seed")])
        assert std.loc[("D3", "GAT", "random"), "std"] == pytest.approx(expected)
    assert cross_fold_std(rows).equals(cross_fold_std(rows, metric="accuracy"))


def test_ranks_tests_and_shares_follow_the_metric():
    rows = metric_rows()
    acc, bal = rank_summary(rows), rank_summary(rows, metric="balanced_accuracy")
    assert acc["global_mean"].to_dict() == {"hpstrat": 1.0, "stratified": 2.0, "random": 3.0}
    assert bal["global_mean"].to_dict() == {"hpstrat": 3.0, "stratified": 2.0, "random": 1.0}
    assert (stability_tests(rows)["pairwise"]["verdict"] == "HpStrat smaller").all()
    assert (stability_tests(rows, metric="balanced_accuracy")["pairwise"]["verdict"] == "HpStrat larger").all()
    assert std_reduction_share(rows).loc["all"].iloc[0] == 1.0
    assert std_reduction_share(rows, metric="balanced_accuracy").loc["all"].iloc[0] == 0.0


def test_control_tests_follow_the_metric():
    rows = metric_rows()
    three = dict(methods=("random", "stratified", "hpstrat"), comparisons=(("hpstrat", "stratified"), ("hpstrat", "random")))
    assert (control_tests(rows, **three)["pairwise"]["verdict"] == "a smaller").all()
    assert (control_tests(rows, metric="balanced_accuracy", **three)["pairwise"]["verdict"] == "a larger").all()
    one = rows[(rows["dataset"] == "D1") & (rows["model"] == "GCN") & (rows["seed"] == 1) & (rows["method"] == "hpstrat")]
    assert block_std(rows, metric="balanced_accuracy").loc[("D1", "GCN", 1), "hpstrat"] == \
        pytest.approx(np.std(100 * one["test_balanced_acc"], ddof=1))


def test_best_model_follows_the_metric():
    rows = metric_rows()
    assert (best_model_changes(rows)[list(ACC_SPREAD)] == "GCN").all().all()
    assert (best_model_changes(rows, metric="balanced_accuracy")[list(ACC_SPREAD)] == "GAT").all().all()
    assert (verdicts.best_model_changes(rows)[list(ACC_SPREAD)] == "GCN").all().all()
    assert (verdicts.best_model_changes(rows, metric="balanced_accuracy")[list(ACC_SPREAD)] == "GAT").all().all()


def test_regression_reads_the_metric_column():
    rows = metric_rows()
    g = rows[(rows["dataset"] == "D0") & (rows["model"] == "GCN")]
    table = regression_table(rows, metric="balanced_accuracy").set_index(["dataset", "model"])
    slope = np.polyfit(g["test_homophily"], g["test_balanced_acc"], 1)[0]
    assert table.loc[("D0", "GCN"), "slope"] == pytest.approx(slope)
    assert regression_table(rows).set_index(["dataset", "model"]).loc[("D0", "GCN"), "slope"] == \
        pytest.approx(np.polyfit(g["test_homophily"], g["test_acc"], 1)[0])


def test_rows_without_the_metric_say_which_metrics_they_hold():
    old = metric_rows().drop(columns="test_balanced_acc")  # rows written before runs recorded the other scores
    for call in (lambda: cross_fold_std(old, metric="balanced_accuracy"),
                 lambda: stability_tests(old, metric="balanced_accuracy"),
                 lambda: control_tests(old, metric="balanced_accuracy"),
                 lambda: verdicts.best_model_changes(old, metric="balanced_accuracy")):
        with pytest.raises(ValueError, match=r"metric='balanced_accuracy': 384 of the 384 rows have no "
                                             r"'test_balanced_acc'.*every row holds the metrics \['accuracy'\]"):
            call()
    mixed = pd.concat([old, metric_rows(n_datasets=1)], ignore_index=True)  # an old file read with a new one
    with pytest.raises(ValueError, match="384 of the 432 rows have no 'test_balanced_acc'"):
        rank_summary(mixed, metric="balanced_accuracy")
    with pytest.raises(ValueError, match=r"metric must be one of \['accuracy', 'balanced_accuracy', 'macro_f1', "
                                         r"'roc_auc'\]; got 'f1'"):
        score_column(old, "f1")
