"""The controls' paired tests and reading, on constructed rows where the answer is known."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.reports.controls import (block_std, complete_blocks, control_claims, control_reading,
                                           control_tests, paired_tests_by_graph, effect_homophily_correlation,
                                           holm, homophily_trends, trends_table)
from hpstrat_lite.reports.hpstrat import signed_rank_test

METHODS = ("random", "stratified", "hpstrat", "degree", "placebo")


def make_rows(spread, n_datasets=4, n_models=3, seeds=(0, 1, 2), k=4, seed=0):
    """Rows whose per-fold accuracies have the given std (points) per method, with block noise."""
    rng = np.random.default_rng(seed)
    out = []
    for d in range(n_datasets):
        for m in range(n_models):
            for s in seeds:
                for method in METHODS:
                    sd = spread[method] * rng.uniform(0.8, 1.2)
                    acc = 70 + sd * rng.standard_normal(k)
                    for fold in range(k):
                        out.append({"dataset": f"G{d}", "model": f"M{m}", "method": method, "seed": s, "k": k,
                                    "fold": fold, "test_acc": acc[fold] / 100})
    return pd.DataFrame(out)


def test_placebo_matching_hpstrat_reads_as_finer_strata():
    rows = make_rows({"random": 6, "stratified": 5, "hpstrat": 2, "degree": 5, "placebo": 2})
    tests = control_tests(rows)
    pw = tests["pairwise"].set_index(["a", "b"])
    assert pw.loc[("placebo", "stratified"), "verdict"] == "a smaller"
    assert pw.loc[("hpstrat", "degree"), "verdict"] == "a smaller"
    assert "the gain comes from finer strata, not from homophily" in control_reading(tests)
    claims = control_claims(tests)
    assert set(claims["verdict"]) <= {"agrees", "disagrees", "inconclusive"}


def test_hpstrat_below_placebo_reads_as_homophily():
    rows = make_rows({"random": 6, "stratified": 5, "hpstrat": 1, "degree": 5, "placebo": 5})
    reading = control_reading(control_tests(rows))
    assert "homophily carries information beyond the number of strata" in reading


def test_equal_methods_are_inconclusive():
    rows = make_rows({m: 4 for m in METHODS}, seed=3)
    tests = control_tests(rows)
    assert (tests["pairwise"]["verdict"] == "inconclusive").all()
    assert "inconclusive" in control_reading(tests)


def test_by_graph_finds_the_graph_where_homophily_matters():
    """HpStrat below the placebo on G0 only: the per-graph tests find G0 and call the others inconclusive."""
    rows = make_rows({m: 4 for m in METHODS}, n_models=4, seeds=range(6), seed=5)
    g0_hp = (rows["dataset"] == "G0") & (rows["method"] == "hpstrat")
    rows.loc[g0_hp, "test_acc"] = 0.7 + (rows.loc[g0_hp, "test_acc"] - 0.7) / 4
    by_graph = paired_tests_by_graph(rows).set_index("dataset")
    assert list(by_graph.index) == ["G0", "G1", "G2", "G3"] and (by_graph["pairs"] == 24).all()
    assert by_graph.loc["G0", "verdict"] == "a smaller" and by_graph.loc["G0", "share_a_smaller"] > 0.8
    assert (by_graph.loc[["G1", "G2", "G3"], "verdict"] == "inconclusive").all()
    assert (by_graph["p_holm"] >= by_graph["p_value"]).all()
    degree = paired_tests_by_graph(rows, a="hpstrat", b="degree").set_index("dataset")
    assert degree.loc["G0", "median_diff"] < 0
    with pytest.raises(ValueError, match="no .dataset, model, seed. block has all of"):
        paired_tests_by_graph(rows[rows["method"] != "placebo"])


def _rows_with_gain_growing_with_homophily(n_graphs=12):
    """HpStrat's spread shrunk by a factor that grows with the graph's index; homophily = index / n_graphs."""
    rows = make_rows({m: 4 for m in METHODS}, n_datasets=n_graphs, n_models=4, seeds=range(4), seed=7)
    for d in range(n_graphs):
        hp = (rows["dataset"] == f"G{d}") & (rows["method"] == "hpstrat")
        rows.loc[hp, "test_acc"] = 0.7 + (rows.loc[hp, "test_acc"] - 0.7) / (1 + 0.12 * d)
    return rows, {f"G{d}": d / n_graphs for d in range(n_graphs)}


def test_trends_find_a_gain_that_grows_with_homophily_and_claim_it():
    rows, homophily = _rows_with_gain_growing_with_homophily()
    tests = control_tests(rows, homophily=homophily)
    trends = tests["trends"].set_index("b")
    assert set(trends.index) == {"stratified", "placebo", "degree"} and (trends["graphs"] == 12).all()
    assert (trends["rho"] < -0.6).all() and (trends["verdict"] == "effect grows with homophily").all()
    assert (trends["p_holm"] >= trends["p_value"]).all()
    assert (trends["loo_p_max"] >= trends["p_value"]).all() and set(trends["loo_without"]) <= set(homophily)
    reading = control_reading(tests)
    assert "leaving out one graph at a time, the largest unadjusted p is" in reading
    assert "the more homophilous the graph, the smaller HpStrat's spread relative to placebo-stratified's" in reading
    claims = control_claims(tests)
    trend_claims = claims[claims["claim"].str.contains("grows with the graph's homophily")]
    assert len(trend_claims) == 3 and (trend_claims["verdict"] == "agrees").all()
    assert trend_claims["claim"].str.contains("where the trend was found").all()
    assert len(control_claims(tests, with_trends=False)) == len(claims) - 3  # the scorecard judges them held out
    # reversed homophily: the same gains now shrink with homophily, and the claims disagree
    reverse = {g: 1 - h for g, h in homophily.items()}
    flipped = control_tests(rows, homophily=reverse)
    assert (flipped["trends"]["verdict"] == "effect shrinks with homophily").all()
    assert (control_claims(flipped).tail(3)["verdict"] == "disagrees").all()
    # a trend that one graph carries is not claimed
    fragile = dict(tests, trends=tests["trends"].assign(loo_p_max=0.2))
    assert (control_claims(fragile).tail(3)["verdict"] == "inconclusive").all()


def test_leaving_out_the_graph_that_carries_a_trend_names_it():
    from scipy.stats import spearmanr

    r = [0.3, 0.2, 0.35, 0.1, 0.15, -0.5, -0.4]
    by_graph = pd.DataFrame({"dataset": list("ABCDEFG"), "rank_biserial_r": r})
    h = dict(zip("ABCDEFG", [0.1, 0.2, 0.3, 0.4, 0.5, 0.8, 0.9]))
    out = effect_homophily_correlation(by_graph, h)
    assert out["p_value"] == pytest.approx(spearmanr(r, list(h.values()))[1]) and out["rho"] < 0
    loo = {d: spearmanr([v for g, v in zip("ABCDEFG", r) if g != d], [h[g] for g in "ABCDEFG" if g != d])[1]
           for d in "ABCDEFG"}
    assert out["loo_without"] == max(loo, key=loo.get) and out["loo_p_max"] == pytest.approx(max(loo.values()))


def test_no_trend_is_inconclusive_and_few_graphs_give_no_test():
    rows = make_rows({m: 4 for m in METHODS}, n_datasets=6, seed=11)
    homophily = {f"G{d}": d / 6 for d in range(6)}
    tests = control_tests(rows, homophily=homophily)
    assert (tests["trends"]["verdict"] == "inconclusive").all()
    assert "is **inconclusive** (Spearman rho" in control_reading(tests)
    by_graph = paired_tests_by_graph(rows)
    few = effect_homophily_correlation(by_graph, {"G0": 0.1, "G1": 0.5, "G2": 0.9})  # three graphs with a value
    assert few["graphs"] == 3 and np.isnan(few["p_value"]) and few["verdict"] == "inconclusive"
    assert np.isnan(few["loo_p_max"]) and few["loo_without"] is None
    assert homophily_trends({("hpstrat", "placebo"): by_graph}, {})["graphs"].tolist() == [0]
    assert "trends" not in control_tests(rows)  # no homophily given: no per-graph part


def test_effect_by_graph_plot_orders_graphs_by_homophily():
    from hpstrat_lite.reports import plots

    rows, homophily = _rows_with_gain_growing_with_homophily(5)
    tests = control_tests(rows, homophily={g: 1 - h for g, h in homophily.items()})
    fig = plots.effect_by_graph_plot(tests["by_graph"], {g: 1 - h for g, h in homophily.items()})
    labels = [t.get_text().split("\n")[0] for t in fig.axes[0].get_xticklabels()]
    assert labels == ["G4", "G3", "G2", "G1", "G0"]
    assert len(fig.legends[0].get_texts()) == 3


def test_blocks_are_complete_and_std_is_sample_std():
    rows = make_rows({m: 4 for m in METHODS})
    part = rows[~((rows["dataset"] == "G0") & (rows["model"] == "M0") & (rows["method"] == "placebo")
                  & (rows["seed"] == 1) & (rows["fold"] == 3))]
    kept, coverage = complete_blocks(part, methods=METHODS)
    assert kept.groupby(["dataset", "model", "seed"]).ngroups == 4 * 3 * 3 - 1
    assert coverage.set_index("dataset").loc["G0", "blocks complete"] == 8
    std = block_std(rows)
    one = rows[(rows["dataset"] == "G1") & (rows["model"] == "M2") & (rows["seed"] == 0) & (rows["method"] == "hpstrat")]
    assert std.loc[("G1", "M2", 0), "hpstrat"] == pytest.approx(np.std(100 * one["test_acc"], ddof=1))


def test_holm_and_small_samples():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, np.nan]), [0.03, 0.06, 0.06, np.nan])
    t = signed_rank_test(pd.Series([1.0, 2, 3]), pd.Series([2.0, 3, 4]))
    assert np.isnan(t["p_value"]) and t["rank_biserial_r"] == -1 and t["pairs"] == 3


def test_signed_rank_test_drops_zero_and_missing_differences():
    a = pd.Series([1.0, 2, 3, 4, 5, 6, 7, 8, 9, np.nan])
    b = pd.Series([1.5, 3, 4.5, 6, 4.5, 9, 10.5, 12, 9, 1])  # differences -0.5 -1 -1.5 -2 +0.5 -3 -3.5 -4 0
    t = signed_rank_test(a, b)
    # 8 non-zero differences; ranks of |d|: the two 0.5s share rank 1.5, so W+ = 1.5 and W- = 34.5
    assert t["pairs"] == 9 and t["rank_biserial_r"] == pytest.approx((1.5 - 34.5) / 36)
    assert t["wilcoxon_W"] == 1.5 and t["share_a_smaller"] == pytest.approx(7 / 9) and t["median_diff"] == -1.5


def test_verdict_is_read_from_the_holm_adjusted_p():
    """One comparison significant on its own (0.01 < p < 0.05) and one null: Holm doubles the smaller p over
    0.05, so the verdict is inconclusive although the raw p would call it."""
    z = np.array([-1.5, -0.5, 0.5, 1.5]) / np.std([-1.5, -0.5, 0.5, 1.5], ddof=1)  # fold offsets of std 1
    d = -np.arange(1, 11) / 10
    d[:3] *= -1  # hpstrat - stratified: seven of ten blocks smaller, the three smallest differences larger
    e = np.arange(1, 11) / 10 * np.array([1, -1, -1, 1, 1, -1, -1, 1, 1, -1])  # placebo - stratified: balanced
    block = {"stratified": np.full(10, 3.0)}
    block["hpstrat"], block["placebo"] = block["stratified"] + d, block["stratified"] + e
    rows = pd.DataFrame([{"dataset": f"G{b}", "model": "M", "method": m, "seed": 0, "k": 4, "fold": f,
                          "test_acc": (70 + std[b] * z[f]) / 100}
                         for m, std in block.items() for b in range(10) for f in range(4)])
    tests = control_tests(rows, methods=("stratified", "hpstrat", "placebo"),
                          comparisons=(("hpstrat", "stratified"), ("placebo", "stratified")))
    pw = tests["pairwise"].set_index(["a", "b"])
    hp = pw.loc[("hpstrat", "stratified")]
    assert hp["pairs"] == 10 and 0.01 < hp["p_value"] < 0.05 <= hp["p_holm"] == 2 * hp["p_value"]
    assert (pw["verdict"] == "inconclusive").all()
    loose = control_tests(rows, methods=("stratified", "hpstrat", "placebo"), alpha=0.2,
                          comparisons=(("hpstrat", "stratified"), ("placebo", "stratified")))
    assert loose["pairwise"].set_index(["a", "b"]).loc[("hpstrat", "stratified"), "verdict"] == "a smaller"


def test_missing_methods_say_so():
    rows = make_rows({m: 4 for m in METHODS})
    with pytest.raises(ValueError, match="hold no run of the methods"):
        complete_blocks(rows, methods=METHODS, seeds=(7,))


def test_split_method_trends_on_the_committed_six_seed_sweep(data_root):
    """Real rows and graphs: every graph of the six-seed sweep gets its per-graph tests, its homophily and a
    trend row per comparison; the claims follow the trend verdicts."""
    from hpstrat_lite.reports.controls import split_trends_from_files, trend_claims

    out = split_trends_from_files(seeds=range(6), root=data_root)
    by_graph, trends = out["by_graph"], out["trends"]
    assert set(by_graph) == {("hpstrat", "stratified"), ("hpstrat", "random")}
    graphs = set(by_graph[("hpstrat", "stratified")]["dataset"])
    assert len(graphs) >= 10 and out["blocks"] == by_graph[("hpstrat", "stratified")]["pairs"].sum()
    assert (trends["graphs"] == len(graphs)).all() and trends["p_value"].between(0, 1).all()
    claims = trend_claims(trends, scope="GNNs, split seeds 0-5", chapter="03c", section="Homophily trend")
    expected = ["agrees" if v == "effect grows with homophily" and lo < 0.05 else
                "disagrees" if v == "effect shrinks with homophily" and lo < 0.05 else "inconclusive"
                for v, lo in zip(trends["verdict"], trends["loo_p_max"])]
    assert claims["verdict"].tolist() == expected and claims["claim"].str.endswith("(GNNs, split seeds 0-5)").all()


def test_size_that_explains_the_trend_makes_the_claim_inconclusive():
    rows, homophily = _rows_with_gain_growing_with_homophily()
    size_like_homophily = {g: 100 * (1 + 10 * h) for g, h in homophily.items()}  # same order as homophily
    tests = control_tests(rows, homophily=homophily, size=size_like_homophily)
    trends = tests["trends"]
    assert trends["p_given_size"].isna().sum() == 0 and (trends["p_given_size"] > 0.05).all()
    assert "size could explain it" in control_reading(tests)
    assert (control_claims(tests).tail(3)["verdict"] == "inconclusive").all()
    unrelated = {g: float(v) for g, v in zip(homophily, [5, 1, 9, 3, 7, 2, 8, 4, 6, 11, 10, 12])}
    tests = control_tests(rows, homophily=homophily, size=unrelated)
    assert (tests["trends"]["p_given_size"] < 0.05).all() and "size does not explain it" in control_reading(tests)
    table = trends_table(tests["trends"])
    assert list(table.columns) == ["comparison", "graphs", "Spearman rho", "Holm p", "verdict", "one graph out",
                                   "size held fixed"]
    assert table["size held fixed"].str.match(r"rho [+-]\d\.\d\d, p \d").all()
    assert trends_table(control_tests(rows, homophily=homophily)["trends"])["size held fixed"].eq("n/a").all()


def test_trend_by_seed_reads_each_seed_alone():
    from hpstrat_lite.reports.controls import split_method_trends, trend_by_seed

    rows, homophily = _rows_with_gain_growing_with_homophily()
    rows = rows[rows["method"].isin(["random", "stratified", "hpstrat"])]
    per_seed = trend_by_seed(rows, homophily)
    assert per_seed["seed"].tolist() == [0, 1, 2, 3] and (per_seed["graphs"] == 12).all()
    one = split_method_trends(rows[rows["seed"] == 2], homophily, others=("stratified",))["trends"].iloc[0]
    assert per_seed.set_index("seed").loc[2, "rho"] == pytest.approx(one["rho"])
    assert (per_seed["rho"] < 0).sum() >= 3  # the built-in trend shows on most single seeds


def test_held_out_claims_test_the_trend_on_rows_not_used_to_find_it(data_root, tmp_path):
    from hpstrat_lite.reports.controls import HELD_OUT, held_out_claims, held_out_reading

    held_out = held_out_claims(root=data_root)
    assert len(held_out) == len(HELD_OUT) and held_out["claim"].str.contains("held-out split seeds 3-5").any()
    assert (held_out["graphs"] >= 10).all() and held_out["p_value"].between(0, 1).all()
    reading = held_out_reading(held_out)
    assert reading.count("\n- ") == len(held_out) - 1 and "the trend" in reading
    # a missing sweep gives no row, and no rows at all say what to run
    none = held_out_claims(held_out=(("nothing", [str(tmp_path / "absent.csv")], (0,), 4),), root=data_root)
    assert none.empty and "No held-out rows yet" in held_out_reading(none)


def test_held_out_reading_names_what_the_trend_rests_on():
    from hpstrat_lite.reports.controls import held_out_reading

    rows = pd.DataFrame({"claim": ["x grows (GNNs, a)", "x grows (GNNs, b)", "x grows (GNNs, c)"],
                         "verdict": ["inconclusive", "agrees", "inconclusive"], "blocks": [10, 10, 10],
                         "graphs": [12, 12, 12], "rho": [-0.7, -0.8, 0.3], "p_value": [0.01, 0.001, 0.3],
                         "loo_p_max": [0.2, 0.01, 0.5], "loo_without": ["Cora", "CS", "Texas"],
                         "rho_given_size": [-0.6, -0.7, 0.1], "p_given_size": [0.03, 0.01, 0.7]})
    lines = held_out_reading(rows).splitlines()
    assert lines[0].startswith("- GNNs, a: the trend replicates") and "rests on Cora" in lines[0]
    assert "survives leaving any one graph out and holds with the graphs' size fixed (**agrees**)" in lines[1]
    assert "does not replicate" in lines[2]


def make_ladder_rows(spread_of, sizes=(100, 200, 400), lams=(-1.5, -0.75, 0.0, 0.75, 1.5), graph_seeds=(0, 1),
                     models=("MLP", "GCN"), seeds=(0, 1, 2), k=4, seed=0):
    """Ladder rows whose per-fold accuracies have std ``spread_of(method, n, h)`` (points), with block noise;
    each run's test homophily is the cell's expected one."""
    from hpstrat_lite.experiments.ladder import ladder_graph_name

    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        for lam in lams:
            h = 0.5 + lam / (2 * np.sqrt(5))
            for g in graph_seeds:
                name = ladder_graph_name(n, lam, snr=0.75, num_features=64, avg_degree=5.0, graph_seed=g)
                for m in models:
                    for s in seeds:
                        for method in ("stratified", "hpstrat", "placebo"):
                            acc = 70 + spread_of(method, n, h) * rng.uniform(0.8, 1.2) * rng.standard_normal(k)
                            out.extend({"dataset": name, "model": m, "method": method, "seed": s, "k": k, "fold": f,
                                        "test_acc": acc[f] / 100, "test_homophily": h} for f in range(k))
    return pd.DataFrame(out)


def test_ladder_finds_an_effect_that_follows_homophily_not_size():
    """HpStrat's spread shrinks with homophily at every size: the trend with homophily holds with size held
    fixed, the one with size does not, and the reading says homophily moves it."""
    from hpstrat_lite.reports.controls import (ladder_claims, ladder_reading, ladder_table, ladder_tests,
                                               ladder_trends_table)

    rows = make_ladder_rows(lambda method, n, h: 5 * (1.1 - h) if method == "hpstrat" else 5.0)
    tests = ladder_tests(rows)
    assert tests["blocks"] == 15 * 12 and (tests["cells"]["blocks"] == 12).all()
    assert tests["cells"]["homophily"].round(3).nunique() == 5
    trend = tests["trends"].set_index(["a", "b"]).loc[("hpstrat", "stratified")]
    assert trend["verdict"] == "effect grows with homophily" and trend["p_given_size"] < 0.05
    size = tests["size_trends"].set_index(["a", "b"]).loc[("hpstrat", "stratified")]
    assert size["verdict"] == "inconclusive"
    placebo = tests["trends"].set_index(["a", "b"]).loc[("placebo", "stratified")]
    assert placebo["verdict"] == "inconclusive"
    assert "HpStrat vs class-stratified: pooled over 180 blocks, HpStrat's spread is smaller" in ladder_reading(tests)
    assert "homophily moves it" in ladder_reading(tests)
    table = ladder_table(tests)
    assert len(table) == 15 and table["r"].iloc[-1] < table["r"].iloc[0] + 1e-9
    shown = ladder_trends_table(tests).iloc[0]
    assert shown["comparison"] == "HpStrat vs class-stratified" and shown["verdict"] == "effect grows with homophily"
    assert shown["with homophily"].startswith("rho -") and shown["verdict (size)"] == "inconclusive"
    claim = ladder_claims(tests).iloc[0]
    assert claim["verdict"] == "agrees" and "15 cells" in claim["ours"] and claim["section"].startswith("Homophily ladder")
    assert "GCN, MLP on contextual SBMs" in claim["claim"]


def test_ladder_finds_an_effect_that_follows_size_not_homophily():
    from hpstrat_lite.reports.controls import ladder_claims, ladder_reading, ladder_tests

    rows = make_ladder_rows(lambda method, n, h: 5 * 100 / n if method == "hpstrat" else 2.5, seed=1)
    tests = ladder_tests(rows)
    size = tests["size_trends"].set_index(["a", "b"]).loc[("hpstrat", "stratified")]
    assert size["verdict"] == "effect grows with size" and size["p_given_homophily"] < 0.05
    assert tests["trends"].set_index(["a", "b"]).loc[("hpstrat", "stratified"), "p_given_size"] > 0.05
    assert "size moves it, homophily does not" in ladder_reading(tests)
    assert ladder_claims(tests).iloc[0]["verdict"] == "inconclusive"


def test_ladder_accuracy_per_homophily_level():
    from hpstrat_lite.reports.controls import ladder_accuracy

    rows = make_ladder_rows(lambda method, n, h: 0.0, sizes=(100, 200), lams=(-1.5, 1.5))
    rows.loc[(rows["model"] == "GCN") & rows["dataset"].str.contains("lam1.5"), "test_acc"] = 0.9
    table = ladder_accuracy(rows)
    assert list(table.columns) == ["GCN", "MLP"] and list(table.index.get_level_values("lam")) == [-1.5, 1.5]
    assert table.loc[1.5, "GCN"].item() == pytest.approx(90) and table["MLP"].tolist() == pytest.approx([70, 70])
    assert table.index.get_level_values("expected homophily").tolist() == [0.16, 0.84]


def test_balance_table_per_family():
    from hpstrat_lite.reports.controls import balance_table

    def q(hp, st):
        return pd.DataFrame({"method": ["hpstrat", "stratified", "placebo", "random"] * 2,
                             "chd": [hp, st, st, 9.0] * 2, "w1": [1.0, 2.0, 2.0, 9.0] * 2})

    table = balance_table({"benchmarks": q(0.01, 0.04), "ladder": q(0.002, 0.02)}).set_index("graphs")
    assert table.loc["benchmarks", "CHD HpStrat / class-stratified"] == pytest.approx(0.25)
    assert table.loc["ladder", "CHD HpStrat / class-stratified"] == pytest.approx(0.1)
    assert "CHD random k-fold" not in table.columns and table.loc["ladder", "W1 class-stratified"] == 2.0


def test_ladder_of_one_model_and_bad_rows():
    from hpstrat_lite.reports.controls import ladder_tests

    rows = make_ladder_rows(lambda method, n, h: 4.0, sizes=(100, 200), lams=(0.0, 1.5), seed=2)
    assert ladder_tests(rows, models=["GCN"])["blocks"] == 4 * 2 * 3
    with pytest.raises(ValueError, match=r"rows hold no run of the models \('GAT',\)"):
        ladder_tests(rows, models=["GAT"])
    with pytest.raises(ValueError, match="is not a ladder graph's name"):
        ladder_tests(rows.assign(dataset="Cora"))


def test_ladder_plot_has_a_panel_per_comparison_and_a_line_per_size():
    from hpstrat_lite.reports import plots
    from hpstrat_lite.reports.controls import ladder_tests

    tests = ladder_tests(make_ladder_rows(lambda method, n, h: 5 * (1.1 - h) if method == "hpstrat" else 5.0))
    fig = plots.ladder_plot(tests)
    assert len(fig.axes) == 3 and [len(ax.get_lines()) for ax in fig.axes] == [3 + 1] * 3  # sizes, zero line
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["n = 100", "n = 200", "n = 400"]
    x, y = fig.axes[0].get_lines()[0].get_data()
    assert list(x) == sorted(x) and y[-1] < y[0]  # HpStrat's r falls as homophily rises


def test_graph_properties_load_each_graph_once(data_root, monkeypatch):
    import hpstrat_lite.data.graphs as graphs
    from hpstrat_lite.reports.controls import graph_properties

    calls = []
    summary = graphs.dataset_summary
    monkeypatch.setattr(graphs, "dataset_summary", lambda names, **kw: calls.append(list(names)) or summary(names, **kw))
    monkeypatch.setattr("hpstrat_lite.reports.controls._GRAPH_PROPERTIES", {})
    first = graph_properties(["Texas", "Cornell", "PubMed"], root=data_root)
    assert list(first.index) == ["Texas", "Cornell"]  # PubMed's raw files are not in the mirror
    assert first.loc["Texas", "nodes"] == 183 and 0 < first.loc["Texas", "homophily"] < 0.2
    again = graph_properties(["Cornell", "Texas"], root=data_root)
    assert calls == [["Texas", "Cornell", "PubMed"]]  # the loaded graphs are not read again
    assert again.loc["Texas"].tolist() == first.loc["Texas"].tolist()
