import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.reports.graph_need import (csbm_gaps, estimates, part1_gaps, recommended, spearman_interval,
                                             validation, verdict_agreement)


def test_spearman_interval_contains_rho_and_is_one_for_monotone():
    x = np.arange(10.0)
    rho, lo, hi = spearman_interval(x, x ** 3)
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0) and hi == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=40), rng.normal(size=40)
    rho, lo, hi = spearman_interval(a, a + b)
    assert lo < rho < hi and 0 < rho
    assert np.isnan(spearman_interval([1, 2], [1, 2])[0])


def test_validation_sign_agreement_counts_significant_graphs_only():
    table = pd.DataFrame({"probe_gain": [5.0, -2.0, 1.0, 3.0], "adjusted_homophily": [0.5, 0.2, -0.3, 0.1],
                          "label_informativeness": [0.1, 0.2, 0.3, 0.4],
                          "gap": [4.0, -3.0, 2.0, 0.1], "p": [0.001, 0.01, 0.02, 0.9]})
    v = validation(table).set_index("estimate")
    assert v.loc["probe_gain", "sign_agreement"] == 1.0
    assert v.loc["adjusted_homophily", "sign_agreement"] == pytest.approx(1 / 3)  # right on the first only
    assert np.isnan(v.loc["label_informativeness", "sign_agreement"])
    assert v.loc["probe_gain", "n_significant"] == 3 and v.loc["probe_gain", "n_graphs"] == 4


def test_verdict_agreement():
    table = pd.DataFrame({"verdict": ["the graph helps", "the graph hurts", "no evidence that the graph helps",
                                      "the graph helps", "the graph helps"],
                          "gap": [2.0, 3.0, -1.0, -2.0, 1.0], "p": [0.01, 0.01, 0.01, 0.01, 0.5]})
    assert verdict_agreement(table) == {"n_significant": 4, "right": 1, "wrong": 2, "silent": 1}


def test_part1_gaps_pairs_runs():
    rows = []
    for seed in range(2):
        for fold in range(4):
            for model, acc in (("MLP", 0.5), ("GCN", 0.6 + 0.01 * fold), ("GAT", 0.55)):
                rows.append({"dataset": "G", "model": model, "method": "hpstrat", "k": 4, "seed": seed, "fold": fold,
                             "test_acc": acc})
    g = part1_gaps(pd.DataFrame(rows)).iloc[0]
    assert g["best_gnn"] == "GCN" and g["best_gap"] == pytest.approx(11.5) and g["n_runs"] == 8
    assert g["gcn_p"] < 0.001


def test_recommended_takes_the_best_worst_lower_bound():
    a = pd.DataFrame({"estimate": ["x", "y"], "low": [0.5, 0.2]})
    b = pd.DataFrame({"estimate": ["x", "y"], "low": [-0.1, 0.1]})
    name, table = recommended({"real": a, "csbm": b})
    assert name == "y" and table.loc["x", "worst"] == -0.1


def test_committed_rows_read(tmp_path):
    """The committed rows (when present) give one line per graph / setting with every estimate."""
    est = estimates()
    if not est.empty:
        assert {"probe_gain", "edge_homophily", "total_seconds", "verdict"} <= set(est.columns)
        assert est["dataset"].is_unique
    grid = csbm_gaps()
    if not grid.empty:
        assert grid[["lam", "mu"]].drop_duplicates().shape[0] == len(grid)


def test_trust_reading_names_the_recommended_estimate_and_failures():
    from hpstrat_lite.reports.graph_need import trust_reading

    v = pd.DataFrame({"estimate": ["probe_gain", "edge_homophily"], "spearman": [0.9, 0.1], "low": [0.6, -0.3],
                      "high": [1.0, 0.5], "sign_agreement": [1.0, 0.25], "n_significant": [4, 4]})
    text = trust_reading({"real": v}, verdicts={"real": {"n_significant": 4, "right": 3, "wrong": 0, "silent": 1}})
    assert "`probe_gain`" in text.split("Recommended:")[1].split("\n")[0]
    assert "wrong side on 75% of 4" in text and "interval [-0.30, 0.50]" in text


def test_study_seconds_sum_the_first_trials_and_ratios_divide():
    from hpstrat_lite.reports.graph_need import cost_ratios, mlp_study_seconds

    trials = pd.DataFrame({"phase": "trial", "model": "MLP", "dataset": "G", "protocol": "hpstrat",
                           "trial": np.arange(40), "seconds": 2.0, "host": "h"})
    study = mlp_study_seconds(trials, n_trials=30)
    assert study["study_seconds"].tolist() == [60.0] and study["trials_timed"].tolist() == [30]
    few = mlp_study_seconds(trials.assign(seconds=np.arange(40.0)).head(4), n_trials=30)
    assert few["study_seconds"].tolist() == [30 * 1.5] and few["trials_timed"].tolist() == [4]
    assert mlp_study_seconds(trials, protocol="per_class").empty
    est = pd.DataFrame({"dataset": ["G"], "total_seconds": [3.0], "probe_gain_seconds": [1.2]})
    r = cost_ratios(est, study)
    assert r["probe_gain_ratio"].iloc[0] == pytest.approx(0.02)
