import numpy as np
import pandas as pd
import pytest

from hpstrat_book.graph_need import (csbm_gaps, estimates, part1_gaps, recommended,
                                             validation, verdict_agreement)


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


def test_csbm_gaps_keep_two_protocols_of_one_setting_apart():
    from hpstrat_lite.experiments.probes import ESTIMATES

    rows = []
    for lr, gain in ((0.01, 0.1), (0.001, -0.05)):
        for fold in range(4):
            rows.append({"n": 100, "lam": 1.0, "mu": 0.5, "avg_degree": 5, "num_features": 10, "graph_seed": 0,
                         "k": 4, "seed": 0, "max_epochs": 50, "patience": np.nan, "lr": lr, "fold": fold,
                         "mlp_test": 0.5, "gcn_test": 0.5 + gain + 0.001 * fold, "verdict": "v",
                         "estimate_seconds": 1.0, "train_seconds": 2.0, **{e: 0.0 for e in ESTIMATES}})
    grid = csbm_gaps(pd.DataFrame(rows)).set_index("lr")
    assert len(grid) == 2  # patience None (NaN) does not drop the rows either
    assert grid.loc[0.01, "gap"] == pytest.approx(10.15) and grid.loc[0.001, "gap"] == pytest.approx(-4.85)


def test_trust_reading_names_the_recommended_estimate_and_failures():
    from hpstrat_book.graph_need import trust_reading

    v = pd.DataFrame({"estimate": ["probe_gain", "edge_homophily"], "spearman": [0.9, 0.1], "low": [0.6, -0.3],
                      "high": [1.0, 0.5], "sign_agreement": [1.0, 0.25], "n_significant": [4, 4]})
    text = trust_reading({"real": v}, verdicts={"real": {"n_significant": 4, "right": 3, "wrong": 0, "silent": 1}})
    assert "`probe_gain`" in text.split("Recommended:")[1].split("\n")[0]
    assert "wrong side on 75% of 4" in text and "interval [-0.30, 0.50]" in text


def test_study_seconds_sum_the_first_trials_and_ratios_divide():
    from hpstrat_book.graph_need import cost_ratios, mlp_study_seconds

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


def _sets(rng):
    """A set of 12 graphs whose gaps follow probe_gain, a set of 3 (thin evidence) and a cSBM-like grid."""
    gain = np.linspace(-6, 10, 12)
    real = pd.DataFrame({"dataset": [f"G{i}" for i in range(12)], "probe_gain": gain,
                         "edge_homophily": rng.uniform(0, 1, 12), "gap": gain + rng.normal(0, 0.5, 12),
                         "p": 0.001, "verdict": np.where(gain > 1, "the graph helps", np.where(
                             gain < -1, "the graph hurts", "no evidence that the graph helps"))})
    grid = pd.DataFrame({"lam": [-1.0, -1.0, 0.0, 1.0, 1.0], "mu": [0.0, 3.0, 0.0, 0.0, 3.0],
                         "probe_gain": [4.0, 1.0, 0.5, 9.0, 3.0], "edge_homophily": [0.3, 0.3, 0.5, 0.7, 0.7],
                         "gap": [-8.0, -12.0, 0.4, 20.0, 6.0], "p": [0.01, 0.01, 0.6, 0.001, 0.02],
                         "verdict": ["the graph helps", "no evidence that the graph helps",
                                     "no evidence that the graph helps", "the graph helps", "the graph helps"]})
    return {"real": real, "few": real.iloc[[0, 5, 11]], "grid": grid}


def test_need_findings_count_verdicts_rank_the_gaps_and_read_the_grid():
    from hpstrat_book.graph_need import need_findings, rank_verdict

    sets = _sets(np.random.default_rng(0))
    scores = {name: validation(t, n_boot=200) for name, t in sets.items()}
    verdicts = {name: verdict_agreement(t) for name, t in sets.items()}
    text = need_findings(sets["real"], scores, verdicts, sets["grid"])
    assert text.startswith("**Key findings** (computed from this page's estimates and measured gaps):")
    assert "**the graph helps** on 7" in text and "**the graph hurts** on 4" in text
    assert "**no evidence that the graph helps** on 1 (G4)" in text
    real = scores["real"].set_index("estimate").loc["probe_gain"]
    assert real["spearman_p"] < 0.001 and rank_verdict(real) == "agrees"
    assert "real: **agrees**" in text and "p < 0.001, 12 graphs" in text
    few = scores["few"].set_index("estimate").loc["probe_gain"]
    assert few["spearman"] == pytest.approx(1.0) and few["spearman_p"] == pytest.approx(1 / 3)  # 2 of 3! pairings
    assert "few: **inconclusive**" in text  # a perfect rank order of 3 graphs is thin evidence
    assert "grid: the gap's sign on 2 of 4, the opposite sign on 1, \"no evidence\" on 1" in text
    assert "GCN minus MLP runs from -12.0 to +20.0" in text
    assert "wins significantly (|gap| ≥ 1, p < 0.05) on 2 (λ = 1: 2) and loses on 2 (λ = -1: 2)" in text
    assert "the verdict has its sign on 2 of 4 and the wrong sign on 1 (λ, μ) = (-1, 0)." in text
    best = sets["grid"].assign(graph_gap=[8.0, 5.0, 0.4, 20.0, 6.0], graph_p=[0.01, 0.01, 0.6, 0.001, 0.02])
    text = need_findings(sets["real"], scores, verdicts, best)
    assert "the best GNN minus MLP runs from +0.4 to +20.0" in text and "loses on 0 (none)" in text
    assert "the verdict has its sign on 3 of 4 and the wrong sign on 0." in text
    assert "no estimate shows a rank relation on every set" in text  # no interval is above 0 on the 3 graphs
    alone = need_findings(sets["real"], {"real": scores["real"]}, {}, pd.DataFrame())
    assert "the estimate to trust is `probe_gain`; its interval lies above 0 on every set" in alone  # not the noise
    flipped = {**sets, "real": sets["real"].assign(gap=-sets["real"]["gap"])}
    row = validation(flipped["real"], n_boot=200).set_index("estimate").loc["probe_gain"]
    assert rank_verdict(row) == "disagrees"
    assert need_findings(pd.DataFrame(), {}, {}, pd.DataFrame()).startswith("**Key findings.** Nothing is computed")


def test_calibration_per_family_counts_the_verdict_on_significant_gaps():
    from hpstrat_book.graph_need import calibration, calibration_summary, cannot_tell

    est = pd.DataFrame({"dataset": ["A", "B", "C", "D"], "heterophily_gain": [5.0, -3.0, 0.2, 2.0],
                        "heterophily_gain_low": [2.0, -5.0, -8.0, -0.5], "heterophily_gain_high": [8.0, -1.0, 9.0, 4.5]})
    gaps = pd.DataFrame({"dataset": ["A", "B", "C", "D", "E"], "heterophily_gap": [13.0, -3.6, 4.0, 0.5, 1.0],
                         "heterophily_p": [1e-10, 0.04, 0.001, 0.01, 0.2]})
    t = calibration(est, gaps, "heterophily").set_index("dataset")
    assert list(t.index) == ["A", "B", "C", "D"]  # E has no estimate
    assert list(t["verdict"]) == ["the graph helps", "the graph hurts", "no evidence that the graph helps",
                                  "no evidence that the graph helps"]
    assert list(t["significant"]) == [True, True, True, False]  # D: |gap| < 1 point
    assert t.loc["A", "agrees"] == 1 and t.loc["B", "agrees"] == 1 and t.loc["C", "agrees"] == 0
    assert np.isnan(t.loc["D", "agrees"])
    s = calibration_summary({("set", "heterophily"): t.reset_index()}, n_boot=100).iloc[0]
    assert (s["n_significant"], s["right"], s["wrong"], s["silent"]) == (3, 2, 0, 1)
    assert s["spearman"] == pytest.approx(0.8)
    assert list(cannot_tell(t.reset_index())["dataset"]) == ["C"]
    with pytest.raises(ValueError, match="family='mixhop': expected one of"):
        calibration(est, gaps, "mixhop")
    with pytest.raises(ValueError, match="measured='aggregation': the gap table has no aggregation_gap column"):
        calibration(est, gaps, "heterophily", measured="aggregation")


def test_recommended_breaks_a_tie_of_worst_bounds_by_the_mean_bound():
    a = pd.DataFrame({"estimate": ["x", "y"], "low": [0.4, 0.8]})
    b = pd.DataFrame({"estimate": ["x", "y"], "low": [0.0, 0.0]})
    assert recommended({"real": a, "few": b})[0] == "y"
