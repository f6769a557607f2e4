"""The controls' paired tests and reading, on constructed rows where the answer is known."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_book.controls import (block_std, complete_blocks, control_tests, paired_tests_by_graph, effect_homophily_correlation,
                                           holm)
from hpstrat_book.hpstrat import signed_rank_test

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


def test_effect_by_graph_plot_orders_graphs_by_homophily():
    from hpstrat_book import plots

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


def test_trend_by_seed_reads_each_seed_alone():
    from hpstrat_book.controls import split_method_trends, trend_by_seed

    rows, homophily = _rows_with_gain_growing_with_homophily()
    rows = rows[rows["method"].isin(["random", "stratified", "hpstrat"])]
    per_seed = trend_by_seed(rows, homophily)
    assert per_seed["seed"].tolist() == [0, 1, 2, 3] and (per_seed["graphs"] == 12).all()
    one = split_method_trends(rows[rows["seed"] == 2], homophily, others=("stratified",))["trends"].iloc[0]
    assert per_seed.set_index("seed").loc[2, "rho"] == pytest.approx(one["rho"])
    assert (per_seed["rho"] < 0).sum() >= 3  # the built-in trend shows on most single seeds


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


def test_ladder_accuracy_per_homophily_level():
    from hpstrat_book.controls import ladder_accuracy

    rows = make_ladder_rows(lambda method, n, h: 0.0, sizes=(100, 200), lams=(-1.5, 1.5))
    rows.loc[(rows["model"] == "GCN") & rows["dataset"].str.contains("lam1.5"), "test_acc"] = 0.9
    table = ladder_accuracy(rows)
    assert list(table.columns) == ["GCN", "MLP"] and list(table.index.get_level_values("lam")) == [-1.5, 1.5]
    assert table.loc[1.5, "GCN"].item() == pytest.approx(90) and table["MLP"].tolist() == pytest.approx([70, 70])
    assert table.index.get_level_values("expected homophily").tolist() == [0.16, 0.84]


def test_balance_table_per_family():
    from hpstrat_book.controls import balance_table

    def q(hp, st):
        return pd.DataFrame({"method": ["hpstrat", "stratified", "placebo", "random"] * 2,
                             "chd": [hp, st, st, 9.0] * 2, "w1": [1.0, 2.0, 2.0, 9.0] * 2})

    table = balance_table({"benchmarks": q(0.01, 0.04), "ladder": q(0.002, 0.02)}).set_index("graphs")
    assert table.loc["benchmarks", "CHD HpStrat / class-stratified"] == pytest.approx(0.25)
    assert table.loc["ladder", "CHD HpStrat / class-stratified"] == pytest.approx(0.1)
    assert "CHD random k-fold" not in table.columns and table.loc["ladder", "W1 class-stratified"] == 2.0


def test_ladder_of_one_model_and_bad_rows():
    from hpstrat_book.controls import ladder_tests

    rows = make_ladder_rows(lambda method, n, h: 4.0, sizes=(100, 200), lams=(0.0, 1.5), seed=2)
    assert ladder_tests(rows, models=["GCN"])["blocks"] == 4 * 2 * 3
    with pytest.raises(ValueError, match=r"rows hold no run of the models \('GAT',\)"):
        ladder_tests(rows, models=["GAT"])
    with pytest.raises(ValueError, match="is not a ladder graph's name"):
        ladder_tests(rows.assign(dataset="Cora"))


def test_ladder_plot_has_a_panel_per_comparison_and_a_line_per_size():
    from hpstrat_book import plots
    from hpstrat_book.controls import ladder_tests

    tests = ladder_tests(make_ladder_rows(lambda method, n, h: 5 * (1.1 - h) if method == "hpstrat" else 5.0))
    fig = plots.ladder_plot(tests)
    assert len(fig.axes) == 3 and [len(ax.get_lines()) for ax in fig.axes] == [3 + 1] * 3  # sizes, zero line
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["n = 100", "n = 200", "n = 400"]
    x, y = fig.axes[0].get_lines()[0].get_data()
    assert list(x) == sorted(x) and y[-1] < y[0]  # HpStrat's r falls as homophily rises


def test_graph_properties_load_each_graph_once(data_root, monkeypatch):
    import hpstrat_lite.data.graphs as graphs
    from hpstrat_book.controls import graph_properties

    calls = []
    summary = graphs.dataset_summary
    monkeypatch.setattr(graphs, "dataset_summary", lambda names, **kw: calls.append(list(names)) or summary(names, **kw))
    monkeypatch.setattr("hpstrat_book.controls._GRAPH_PROPERTIES", {})
    first = graph_properties(["Texas", "Cornell", "PubMed"], root=data_root)
    assert list(first.index) == ["Texas", "Cornell"]  # PubMed's raw files are not in the mirror
    assert first.loc["Texas", "nodes"] == 183 and 0 < first.loc["Texas", "homophily"] < 0.2
    again = graph_properties(["Cornell", "Texas"], root=data_root)
    assert calls == [["Texas", "Cornell", "PubMed"]]  # the loaded graphs are not read again
    assert again.loc["Texas"].tolist() == first.loc["Texas"].tolist()
