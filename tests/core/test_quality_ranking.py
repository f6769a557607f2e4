import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import wasserstein_distance

from hpstrat_lite import fold_quality, friedman_test, rank_methods, rank_tables


def literal_quality(folds, y, h, k):
    n, classes = len(y), sorted(set(y))
    sdd = sum(abs(sum(f == i for f in folds) - n / k) for i in range(k)) / k
    cdd = sum(abs(sum(1 for f, c in zip(folds, y) if f == i and c == cls) - sum(c == cls for c in y) / k)
              for i in range(k) for cls in classes) / (k * len(classes))
    hs = [v for v in h if not np.isnan(v)]
    g = sum(hs) / len(hs)
    per = [[v for f, v in zip(folds, h) if f == i and not np.isnan(v)] for i in range(k)]
    chd = sum(abs(sum(p) / len(p) - g) for p in per) / k
    w1 = sum(wasserstein_distance(p, hs) for p in per) / k
    return sdd, cdd, chd, w1


@settings(max_examples=50, deadline=None)
@given(st.integers(6, 40).flatmap(lambda n: st.tuples(
    st.integers(3, 5).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.integers(0, k - 1), min_size=n, max_size=n))),
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.lists(st.floats(0, 1), min_size=n, max_size=n))))
def test_metrics_match_paper_formulas(case):
    (k, folds), y, h = case
    folds = list(range(k)) + folds[k:]  # every fold non-empty
    q = fold_quality(np.array(folds), y, h, k=k)
    np.testing.assert_allclose([q["sdd"], q["cdd"], q["chd"], q["w1"]], literal_quality(folds, y, h, k),
                               atol=1e-9)


def test_homophily_balanced_folds_score_zero_chd_and_isolated_nodes_are_left_out():
    # 7 nodes in 3 folds cannot be balanced in size; class 1 (4 nodes) neither; but the homophily of the
    # non-isolated nodes is spread evenly (the isolated node, NaN, sits in fold 0 and is left out)
    q = fold_quality([0, 1, 2, 0, 1, 2, 0], [0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0, np.nan], k=3)
    assert q["sdd"] == pytest.approx(abs(3 - 7 / 3) / 3 + 2 * abs(2 - 7 / 3) / 3)
    assert q["cdd"] == pytest.approx((abs(2 - 4 / 3) + 2 * abs(1 - 4 / 3)) / 6)  # class 0 is exact
    assert q["chd"] == 0.0 and q["w1"] == 0.0


def test_all_isolated_nodes_give_nan_homophily_metrics():
    q = fold_quality([0, 1, 2], [0, 1, 0], [np.nan] * 3, k=3)
    assert q["sdd"] == 0.0 and np.isnan(q["chd"]) and np.isnan(q["w1"])


def test_quality_bad_input():
    with pytest.raises(ValueError, match=r"folds must hold fold ids in 0..2 \(k=3\)"):
        fold_quality([0, 1, 5], [0, 1, 0], [0.1, 0.2, 0.3], k=3)
    with pytest.raises(ValueError, match=r"folds must be a 1-D array of fold ids with one entry per node \(length 3\)"):
        fold_quality([0, 1], [0, 1, 0], [0.1, 0.2, 0.3], k=3)


def test_rank_ties_share_average_and_tables():
    df = pd.DataFrame({
        "dataset": ["A"] * 6 + ["B"] * 6,
        "model": (["GCN"] * 3 + ["GAT"] * 3) * 2,
        "method": ["hpstrat", "stratified", "random"] * 4,
        "std": [1, 2, 3, 1, 1, 3, 2, 1, 3, 1, 2, 3],
    })
    ranked = rank_methods(df, "std")
    assert ranked["rank"].tolist() == [1, 2, 3, 1.5, 1.5, 3, 2, 1, 3, 1, 2, 3]
    per_model, per_dataset, global_mean = rank_tables(ranked)
    assert per_model.loc["GCN", "hpstrat"] == 1.5 and per_model.loc["GAT", "stratified"] == 1.75
    assert per_dataset.loc["A", "hpstrat"] == 1.25
    assert global_mean["hpstrat"] == pytest.approx((1 + 1.5 + 2 + 1) / 4)
    assert global_mean.sum() == pytest.approx(6)  # ranks of 3 methods always sum to 6 per block


def test_rank_rejects_duplicates_and_missing_columns():
    df = pd.DataFrame({"dataset": ["A", "A"], "model": ["m", "m"], "method": ["r", "r"], "std": [1, 2]})
    with pytest.raises(ValueError, match="several rows for one"):
        rank_methods(df, "std")
    with pytest.raises(ValueError, match=r"df lacks column\(s\) \['cv'\]"):
        rank_methods(df, "cv")


def test_friedman_detects_consistent_ordering_and_not_noise():
    rng = np.random.default_rng(0)
    rows = []
    for b in range(20):
        for m, shift in [("hpstrat", 0.0), ("stratified", 1.0), ("random", 2.0)]:
            rows.append({"dataset": f"d{b}", "model": "GCN", "method": m, "std": shift + rng.normal(0, 0.1)})
    r = friedman_test(pd.DataFrame(rows), "std")
    assert r.n_blocks == 20 and r.pvalue < 1e-6 and r.unit == "(dataset, model)" and r.ranks().index[0] == "hpstrat"
    noise = pd.DataFrame(rows).assign(std=rng.normal(size=60))
    assert friedman_test(noise, "std").pvalue > 0.01
    assert np.isnan(friedman_test(pd.DataFrame(rows[:3]), "std").pvalue)  # one block


def _sweep_rows(accs, epochs, seconds=6.0):
    """Rows of one (dataset, model) pair: ``accs[method]`` the test accuracy of folds 0..3."""
    return pd.DataFrame([{"dataset": "Cora", "model": "GCN", "method": m, "k": 4, "seed": 0, "fold": f,
                          "test_acc": a, "best_epoch": epochs, "seconds": seconds}
                         for m, fold_accs in accs.items() for f, a in enumerate(fold_accs)])


def test_rerun_comparison_matches_runs_and_compares_ranks():
    from hpstrat_lite.reports.hpstrat import rerun_comparison

    committed = _sweep_rows({"hpstrat": [0.80, 0.80, 0.81, 0.80], "stratified": [0.78, 0.82, 0.80, 0.80],
                             "random": [0.75, 0.85, 0.80, 0.80]}, epochs=50)
    # the rerun: one accuracy moved by 6 points, which swaps HpStrat and stratified
    rerun = committed.copy()
    rerun.loc[(rerun["method"] == "hpstrat") & (rerun["fold"] == 0), "test_acc"] = 0.74
    rerun.loc[rerun["method"] == "random", "best_epoch"] = 60
    projection = pd.DataFrame({"dataset": ["Cora", "Cora"], "model": ["GCN", "GCN"], "low_min": [9.0, 1.0],
                               "high_min": [9.0, 2.0]})
    t = rerun_comparison(committed, rerun, projection=projection).iloc[0]
    assert t["runs"] == 12 and t["timed (min)"] == pytest.approx(12 * 6 / 60)
    assert (t["projected low"], t["projected high"]) == (1.0, 2.0)  # the newest projection row
    assert t["same best epoch"] == 8
    assert t["max |diff| run"] == pytest.approx(6.0) and t["max |diff| mean"] == pytest.approx(1.5)
    assert t["ranks committed"] == "1/2/3" and t["ranks rerun"] == "2/1/3" and not t["same ranks"]
    other = committed.assign(seed=1)
    with pytest.raises(ValueError, match="no run of `rerun`"):
        rerun_comparison(committed, other)
