"""The claims registry: one claim, one verdict; tests at independent units; symmetric rules; discovery rows."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_book import claim_checks as cc
from hpstrat_book import claims
from hpstrat_book.display import answer_in_short, counts_sentence, headline_table, key_findings
from hpstrat_book.necessity import _line_verdict
from hpstrat_book import verdicts
from hpstrat_book.verdicts import at_precision, rerun_verdict

RUN_COLS = ["dataset", "model", "method", "k", "seed", "fold", "test_acc"]


def sweep(effect, *, datasets=("A", "B", "C", "D", "E", "F", "G"), models=("GCN", "GAT"), seeds=(0,), k=4,
          noise=0.0, rng=0):
    """Run rows whose cross-fold std is ``effect[method]`` (points), the same on every (dataset, model, seed)."""
    gen = np.random.default_rng(rng)
    rows = []
    base = np.array([-1.5, -0.5, 0.5, 1.5]) / np.std([-1.5, -0.5, 0.5, 1.5], ddof=1)
    for d in datasets:
        for m in models:
            for s in seeds:
                for method, sd in effect.items():
                    spread = sd + noise * gen.standard_normal()
                    for f in range(k):
                        rows.append([d, m, method, k, s, f, 0.8 + spread * base[f] / 100])
    return pd.DataFrame(rows, columns=RUN_COLS)


def test_symmetric_rule_needs_evidence_both_ways():
    assert verdicts.tested_verdict(-1.0, 0.01) == "agrees"
    assert verdicts.tested_verdict(+1.0, 0.01) == "disagrees"
    assert verdicts.tested_verdict(+1.0, 0.30) == "inconclusive"  # an ordering that fails without a test is not disagrees
    assert verdicts.tested_verdict(-1.0, float("nan")) == "inconclusive"
    assert verdicts.tested_verdict(+1.0, 0.01, claimed="positive") == "agrees"
    with pytest.raises(ValueError, match="claimed must be 'negative' or 'positive'; got 'up'"):
        verdicts.tested_verdict(1.0, 0.01, claimed="up")


def test_one_rerun_rule_for_both_directions():
    assert rerun_verdict("agrees", {"x": "agrees"}) == "agrees"
    assert rerun_verdict("agrees", {"x": "inconclusive"}) == "inconclusive"
    assert rerun_verdict("disagrees", {"x": "inconclusive"}) == "inconclusive"
    assert rerun_verdict("inconclusive", {"x": "agrees"}) == "inconclusive"


def test_float_artefact_is_compared_at_the_shown_precision():
    gap = 91.2 - 88.0
    assert gap > 3.2 and at_precision(gap) == 3.2
    # the paper's own gap sits on the line: below it at the shown precision, so not "above the line"
    verdict, _ = _line_verdict({"Photo": (at_precision(gap), 0.001, 30, 30)}, 3.2, claimed="below", alpha=0.05,
                               min_trials=30)
    assert verdict == "agrees"


def test_gap_rule_is_symmetric_and_knows_the_budget():
    above = {"A": (4.8, 1e-6, 30, 30)}
    assert _line_verdict(above, 3.2, claimed="below", alpha=0.05, min_trials=30)[0] == "disagrees"
    v, note = _line_verdict({"A": (4.8, 1e-6, 5, 5)}, 3.2, claimed="below", alpha=0.05, min_trials=30)
    assert v == "inconclusive" and "budget" in note and "A" in note  # 5 trials can explain a too-large gap
    assert _line_verdict({"A": (4.0, 0.4, 30, 30)}, 3.2, claimed="below", alpha=0.05, min_trials=30)[0] == "inconclusive"
    assert _line_verdict({"A": (1.0, 0.01, 5, 5)}, 2.0, claimed="above", alpha=0.05, min_trials=30)[0] == "inconclusive"
    assert _line_verdict({"A": (5.0, 0.01, 5, 5)}, 2.0, claimed="above", alpha=0.05, min_trials=30)[0] == "agrees"


def test_stability_is_tested_over_dataset_seed_units_not_model_pairs():
    rows = sweep({"hpstrat": 1.0, "stratified": 2.0, "random": 3.0}, models=("GCN", "GAT", "APPNP"))
    e = cc.stability(rows, "stratified")
    assert e.unit == "(dataset, seed)" and e.n == 7  # 7 datasets x 1 seed; the 3 GNNs share each unit
    assert e.verdict == "agrees" and e.p < 0.05
    worse = cc.stability(sweep({"hpstrat": 3.0, "stratified": 2.0, "random": 1.0}), "stratified")
    assert worse.verdict == "disagrees"


def test_near_copy_reruns_count_once(tmp_path):
    committed = sweep({"hpstrat": 1.0, "stratified": 2.0, "random": 3.0})
    copy = committed.copy()
    copy.loc[copy.index[:10], "test_acc"] += 0.001  # a few runs differ: a near-copy
    fresh = sweep({"hpstrat": 1.0, "stratified": 2.0, "random": 3.0}, noise=0.5, rng=1)
    table = cc.rerun_independence(committed, {"copy": copy, "fresh": fresh})
    assert table.set_index("rerun")["independent"].to_dict() == {"copy": False, "fresh": True}
    flipped = sweep({"hpstrat": 3.0, "stratified": 2.0, "random": 1.0})
    e = cc.with_reruns(lambda r: cc.stability(r, "stratified"), committed, {"flipped": flipped})
    assert e.verdict == "inconclusive" and "flipped disagrees" in e.ours


def test_discovery_rows_are_exploratory_and_held_out_rows_get_a_verdict(monkeypatch):
    datasets = [f"G{i}" for i in range(8)]
    homophily = pd.Series(np.linspace(0.1, 0.9, 8), index=datasets)
    props = pd.DataFrame({"homophily": homophily, "nodes": np.arange(8) * 10.0 + 100})
    monkeypatch.setattr(cc, "graph_properties", lambda names, root=None: props.loc[list(names)])
    parts = [sweep({"hpstrat": 2.0 - 2 * h, "stratified": 2.0, "random": 3.0}, datasets=(d,), seeds=(0, 1))
             for d, h in homophily.items()]
    rows = pd.concat(parts, ignore_index=True)
    found = cc.trend(rows, role="discovery")
    assert found.verdict == "exploratory" and found.unit == "graph" and found.n == 8
    held = cc.trend(rows, role="held-out")
    assert held.verdict != "exploratory" and held.number("rho") < 0
    assert cc.groups(rows, role="discovery").verdict == "exploratory"


def test_appendix_e_compares_the_papers_count_like_with_like():
    rows = []
    for s in range(3):
        for d in "ABCDEFGH":
            for method in ("random", "stratified", "hpstrat"):
                for m, acc in (("GCN", 0.80 if method == "hpstrat" else 0.70), ("GAT", 0.75)):
                    rows += [[d, m, method, 4, s, f, acc + 0.01 * f] for f in range(4)]
    e = cc.appendix_e(pd.DataFrame(rows, columns=RUN_COLS), paper=(8, 15))
    assert e.number("simple") == 8 and "Fisher" in e.ours  # GCN under HpStrat, GAT otherwise: 8/8 change
    assert e.number("strict") == 8 and e.p >= 0.05  # 8/8 against 8/15: Fisher's two-sided p is above 0.05
    assert e.verdict == "agrees"  # the counts do not differ and the changes survive the seed-to-seed spread


def test_registry_ids_are_unique_and_rules_are_stated():
    assert len(claims.REGISTRY) == len(set(claims.REGISTRY))
    for cid, c in claims.REGISTRY.items():
        assert c.id == cid and c.unit and c.test and c.role in claims.ROLES
    assert [c.role for c in claims.REGISTRY.values()].count("discovery") >= 1
    with pytest.raises(ValueError, match="claim_id 'Z9' is not registered"):
        claims.claim("Z9")


@pytest.fixture(scope="module")
def own():
    """This book's claims on the committed rows (the controls, the held-out trend, the ladder)."""
    return claims.claims_frame(claims.ids("B"))


def test_controls_aggregate_to_36_graph_seed_units(own):
    rows = cc.control_rows(claims.Sources())
    wide = cc.unit_stds(rows, methods=("hpstrat", "placebo", "degree", "stratified", "random"))
    assert len(wide) == 36 and wide.attrs["unit"] == "(dataset, seed)"
    assert rows.groupby(["dataset", "model", "seed"]).ngroups == 288  # the blocks the units average
    b1 = own.set_index("id").loc["B1"]
    assert b1["n"] == 36 and b1["unit"] == "(dataset, seed)" and "36 (dataset, seed) units" in b1["p (units)"]


def test_a_claim_has_one_verdict_wherever_it_is_rendered(own):
    again = claims.claims_frame(["B1", "B6", "B7"]).set_index("id")["verdict"]
    assert (own.set_index("id").loc[again.index, "verdict"] == again).all()
    assert claims.evaluate("B1") is claims.evaluate("B1")  # computed once per sources
    assert own.set_index("id").loc["B6", "verdict"] == "exploratory"
    box = key_findings(own, limit=len(own))
    for _, r in own.iterrows():
        assert f"**{r['verdict']}** [{r['id']}]" in box
    assert "exploratory" in counts_sentence(own) and f"{len(own) - 2} claims tested" in counts_sentence(own)


def test_front_page_reads_the_same_rows_by_id():
    part1 = pd.DataFrame({"id": ["H1", "H6", "H7", "H12"], "claim": ["a", "b", "c", "e"],
                          "verdict": ["holds by construction", "agrees", "inconclusive", "agrees"],
                          "p": [float("nan"), 0.01, 0.3, 0.02], "paper": ["", "smaller", "smaller", "smaller"],
                          "ours": ["", "median -1.0 points (12 units), p = 0.01; reruns: x", "p = 0.3", "p = 0.02"]})
    part2 = pd.DataFrame({"id": ["N1"], "claim": ["d"], "verdict": ["inconclusive"], "p": [float("nan")]})
    text = answer_in_short(part1, part2, part2.iloc[:0])
    # counts in words, one claim in the singular, no zero count, the central claim's verdict under each protocol
    assert "3 tested claims, 2 agree and 1 is inconclusive (1 more holds by construction)" in text
    assert "agrees under both protocols (p = 0.01 and 0.02)" in text
    assert "one tested claim is inconclusive" in text and " 0 " not in text and "claims tested" not in text
    table = headline_table(part1, ["H6", "H7", "X9"], caption="Headline claims", link_base="card.html",
                           anchors={"H": "part-i"})
    assert table.count("<tr>") == 3 and "<caption>Headline claims</caption>" in table  # header and two claims
    assert 'href="card.html#part-i"' in table and "reruns" not in table and "(12 units)" not in table
    assert table.index("<strong>agrees</strong>") < table.index("smaller")  # the verdict before the figures
    with pytest.raises(ValueError, match="at most 10"):
        headline_table(part1, [f"H{i}" for i in range(11)], caption="x")


def test_change_log_lists_moved_verdicts_with_their_reason():
    now = pd.DataFrame({"id": ["B1", "B6"], "claim": ["x", "y"], "verdict": ["inconclusive", "exploratory"]})
    before = pd.DataFrame({"id": ["B1", "B6"], "verdict": ["agrees", "agrees"]})
    log = claims.change_log(now, before=before)
    assert list(log["id"]) == ["B1", "B6"] and log["why"].str.len().gt(0).all()
    assert log.set_index("id").loc["B6", "after"] == "exploratory"
