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
    q = fold_quality(np.array(folds), y, h, k)
    np.testing.assert_allclose([q["sdd"], q["cdd"], q["chd"], q["w1"]], literal_quality(folds, y, h, k),
                               atol=1e-9)


def test_perfect_folds_score_zero_and_isolated_nodes_are_left_out():
    q = fold_quality([0, 1, 2, 0, 1, 2, 0], [0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0, np.nan], 3)
    assert q["sdd"] == pytest.approx(abs(3 - 7 / 3) / 3 + 2 * abs(2 - 7 / 3) / 3)
    assert q["chd"] == 0.0 and q["w1"] == 0.0


def test_quality_bad_input():
    with pytest.raises(ValueError, match=r"folds must hold fold ids in 0..2 \(k=3\)"):
        fold_quality([0, 1, 5], [0, 1, 0], [0.1, 0.2, 0.3], 3)
    with pytest.raises(ValueError, match=r"folds must be a 1-D array of fold ids with one entry per node \(length 3\)"):
        fold_quality([0, 1], [0, 1, 0], [0.1, 0.2, 0.3], 3)


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
    stat, p, n = friedman_test(pd.DataFrame(rows), "std")
    assert n == 20 and p < 1e-6
    noise = pd.DataFrame(rows).assign(std=rng.normal(size=60))
    assert friedman_test(noise, "std")[1] > 0.01
    assert np.isnan(friedman_test(pd.DataFrame(rows[:3]), "std")[1])
