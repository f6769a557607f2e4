"""The verdict rules: the closed set, orderings that must survive every committed rerun, and the
established-change rule of Appendix E (and the audit)."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.reports import scorecard, verdicts
from hpstrat_lite.reports.verdicts import VERDICTS, best_model_changes, ordering_verdict


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


def test_ordering_verdict_needs_the_test_and_every_rerun():
    assert ordering_verdict(True, beyond_noise=True, reruns={"a": True, "b": True}) == "agrees"
    assert ordering_verdict(True, beyond_noise=False) == "inconclusive"  # within the noise
    assert ordering_verdict(True, reruns={"a": True, "b": False}) == "inconclusive"  # a rerun flips it
    assert ordering_verdict(False, reruns={"a": False}) == "disagrees"
    assert ordering_verdict(False, reruns={"a": True}) == "inconclusive"
    assert verdicts.verdict(None) == "inconclusive" and verdicts.construction_verdict(True) == "holds by construction"


def test_a_rerun_that_flips_the_order_makes_the_ordering_verdicts_inconclusive():
    committed = sweep(GOOD)
    assert set(scorecard.gnn_claims(committed)["verdict"]) == {"agrees"}
    flipped = scorecard.rerun_variants(committed, {"rerun X": sweep(FLIPPED)})
    card = scorecard.gnn_claims(committed, reruns=flipped).set_index("section")
    t3 = card.loc["Table 3"].iloc[0]
    assert t3["verdict"] == "inconclusive" and "holds on 0 of 1 committed rerun" in t3["ours"]
    assert card.loc["Table C.4", "verdict"] == "agrees"  # HpStrat still below random on the rerun
    same = scorecard.gnn_claims(committed, reruns={"rerun Y": sweep(GOOD)})
    assert set(same["verdict"]) == {"agrees"} and "holds on 1 of 1 committed rerun" in same["ours"].iloc[0]
    stab = scorecard.stability_claims(committed, reruns=flipped).set_index("claim")
    assert stab.iloc[0]["verdict"] == "inconclusive" and "holds on 0 of 1 committed rerun" in stab.iloc[0]["ours"]


def test_rerun_variants_replace_only_the_pairs_a_partial_rerun_covers():
    committed = sweep(GOOD)
    part = sweep(FLIPPED, datasets=("A",), models=("GCN",))
    merged = scorecard.rerun_variants(committed, {"p": part})["p"]
    assert len(merged) == len(committed)
    key = ["dataset", "model", "method", "fold"]
    got = merged.set_index(key)["test_acc"]
    assert got.loc[("A", "GCN", "hpstrat", 0)] == pytest.approx(part.set_index(key)["test_acc"].loc[("A", "GCN", "hpstrat", 0)])
    assert got.loc[("B", "GAT", "hpstrat", 0)] == pytest.approx(committed.set_index(key)["test_acc"].loc[("B", "GAT", "hpstrat", 0)])


def test_table4_most_means_more_than_half_and_says_so():
    rows = pd.concat([sweep(GOOD, datasets=("A", "B")), sweep({"random": 1.0, "stratified": 2.0, "hpstrat": 3.0},
                                                              datasets=("C", "D"))])
    row = scorecard.gnn_claims(rows).set_index("section").loc["Table 4"]
    assert row["ours"].startswith("2/4 datasets") and row["verdict"] == "disagrees"  # 2 of 4 is not more than half
    assert "more than half" in row["rule"]


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


def test_appendix_e_compares_established_changes_with_the_papers_count():
    rows = changes_rows((1.0, 1.0), noise=0.1)
    rows = pd.concat([rows.assign(dataset=d) for d in "DEFGH"]).assign(k=4)
    rows = pd.concat([rows, rows[rows["method"] == "hpstrat"].assign(method="stratified")])
    row = scorecard.appendix_e_claims(rows).iloc[0]
    assert row["verdict"] == "agrees" and row["ours"].startswith("established on 5/5 datasets")
    calm = changes_rows((1.0, -1.0), noise=0.1)  # GCN best under both methods: nothing changes
    calm = pd.concat([calm.assign(dataset=d) for d in "DEFGHIJKLMNOP"]).assign(k=4)
    calm = pd.concat([calm, calm[calm["method"] == "hpstrat"].assign(method="stratified")])
    row = scorecard.appendix_e_claims(calm).iloc[0]
    assert row["ours"].startswith("established on 0/13") and row["verdict"] == "disagrees"  # 0/13 against 8/15


def test_every_claim_row_states_a_rule_and_a_verdict_from_the_closed_set():
    from tests.test_notebooks import quality_rows

    good = {"random": (0.5, 9.0, 0.01), "stratified": (0.5, 0.3, 0.008), "hpstrat": (0.5, 0.9, 0.001)}
    parts = [scorecard.fold_metric_claims(quality_rows({"A": good})), scorecard.gnn_claims(sweep(GOOD)),
             scorecard.stability_claims(sweep(GOOD)), scorecard.gnn_k5_claims(sweep(GOOD, k=5)),
             scorecard.appendix_e_claims(pd.concat([sweep(GOOD), sweep(GOOD, seed=1)])),
             scorecard.part2_scorecard(*["/nonexistent.csv"] * 3)]
    card = pd.concat(parts, ignore_index=True)
    assert set(card["verdict"]) <= set(VERDICTS)
    judged = card[~card["ours"].str.startswith("not run")]
    assert (judged["rule"].str.len() > 10).all(), judged.loc[judged["rule"].str.len() <= 10, "claim"].tolist()


def test_the_scorecard_on_real_data_gives_every_row_a_rule_and_a_closed_verdict(data_root):
    card = scorecard.scorecard(["Texas"], seeds=range(2), bins=(2, 10), root=data_root)
    assert set(card["verdict"]) <= set(VERDICTS)
    judged = card[~card["ours"].str.startswith("not run")]
    assert len(judged) >= 10 and (judged["rule"].str.len() > 10).all()
    assert (card["chapter"].str.len() > 0).all()


def test_the_scorecard_reads_the_result_files_it_is_given(data_root, tmp_path):
    missing = scorecard.Part1Files(gnn=tmp_path / "gnn.csv", appendix_b=tmp_path / "b.csv", gnn_k5=tmp_path / "k5.csv",
                                   gnn_seeds=[tmp_path / "seeds.csv"], reruns=[])
    card = scorecard.scorecard(["Texas"], seeds=range(1), bins=(2,), root=data_root, files=missing)
    not_run = card[card["ours"].str.startswith("not run")]
    assert set(not_run["verdict"]) == {verdicts.INCONCLUSIVE}
    assert {"gnn.csv", "b.csv", "k5.csv", "seeds.csv"} <= {c.rpartition(" ")[2] for c in not_run["claim"]}
    with pytest.raises(ValueError, match=r"files must be a hpstrat_lite.reports.scorecard.Part1Files; got dict"):
        scorecard.scorecard(["Texas"], root=data_root, files={"gnn": "x.csv"})
