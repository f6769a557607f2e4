"""The homophily ladder's graphs and runner."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.core.homophily import node_homophily
from hpstrat_lite.data.synthetic import csbm_edge_homophily
from hpstrat_lite.experiments.ladder import (LADDER_PROTOCOL, LadderDesign, ladder_graph, ladder_graph_name, ladder_knobs,
                                            run_csbm_ladder, with_ladder_knobs)


def test_graph_names_carry_their_knobs():
    data = ladder_graph(300, -0.75, graph_seed=2, design=LadderDesign(snr=0.5, num_features=16, avg_degree=4.0))
    assert data.name == "cSBM_n300_lam-0.75_snr0.5_F16_d4_g2" == ladder_graph_name(
        300, -0.75, snr=0.5, num_features=16, avg_degree=4.0, graph_seed=2)
    knobs = ladder_knobs([data.name]).iloc[0]
    assert (knobs["n"], knobs["lam"], knobs["snr"], knobs["num_features"], knobs["avg_degree"], knobs["graph_seed"]) \
        == (300, -0.75, 0.5, 16, 4.0, 2)
    assert knobs["expected_homophily"] == pytest.approx(0.5 - 0.75 / 4)
    assert data.x.shape == (300, 16) and data.mu == pytest.approx(0.5 ** 2 * 300 / 16)


def test_rows_gain_the_knobs_of_their_graph():
    names = [ladder_graph_name(n, lam, snr=1.0, num_features=8, avg_degree=5.0, graph_seed=0)
             for n, lam in [(200, 0.5), (400, -0.5), (200, 0.5)]]
    rows = with_ladder_knobs(pd.DataFrame({"dataset": names, "test_acc": [0.1, 0.2, 0.3]}))
    assert rows["n"].tolist() == [200, 400, 200] and rows["lam"].tolist() == [0.5, -0.5, 0.5]
    assert rows["expected_homophily"].tolist() == pytest.approx(
        [csbm_edge_homophily(lam, avg_degree=5.0) for lam in (0.5, -0.5, 0.5)])
    assert rows["test_acc"].tolist() == [0.1, 0.2, 0.3]
    assert with_ladder_knobs(rows[["dataset"]], columns=["lam"]).columns.tolist() == ["dataset", "lam"]


def test_homophily_follows_lam_and_the_feature_signal_does_not_change_with_size():
    """Measured edge homophily near the expected one; the best linear read-out of the features (along the
    generator's direction u) separates the classes about as well at 400 and at 3200 nodes."""
    snrs = []
    for n in (400, 3200):
        data = ladder_graph(n, 1.5, graph_seed=0, design=LadderDesign(snr=1.0, num_features=32))
        y = data.y.numpy()
        src, dst = data.edge_index.numpy()
        assert abs((y[src] == y[dst]).mean() - (0.5 + 1.5 / (2 * np.sqrt(5)))) < 0.05
        assert np.nanmean(node_homophily(data.edge_index, y)) > 0.7
        score = data.x.numpy() @ data.csbm_u.numpy()
        snrs.append(abs(score[y == 1].mean() - score[y == 0].mean()) / 2 / score[y == 1].std())
    assert snrs[0] == pytest.approx(snrs[1], rel=0.25) and snrs[1] == pytest.approx(1.0, rel=0.25)


def test_a_name_that_is_not_a_ladder_graph_is_refused():
    with pytest.raises(ValueError, match=r"'Cora' is not a ladder graph's name \(cSBM_n<n>_lam<lam>"):
        ladder_knobs(["Cora"])
    with pytest.raises(ValueError, match=r"lam must be"):
        ladder_graph(100, 3.0)
    with pytest.raises(ValueError, match="design must be a LadderDesign, got dict"):
        ladder_graph(100, 0.0, design={"snr": 1.0})
    with pytest.raises(ValueError, match="at least one size"):
        run_csbm_ladder([0.0], sizes=[])


def test_ladder_writes_rows_and_resumes(tmp_path):
    out = tmp_path / "ladder.csv"
    quick = LADDER_PROTOCOL.replace(max_epochs=5, patience=5)
    rows = run_csbm_ladder([0.0, 1.5], sizes=[120], graph_seeds=[0], seeds=[0], models=["MLP"], protocol=quick,
                           out=out)
    assert len(rows) == 2 * 3 * 4  # graphs x methods x folds
    assert set(rows["method"]) == {"stratified", "hpstrat", "placebo"} and rows["code_version"].notna().all()
    assert set(ladder_knobs(rows["dataset"].unique())["lam"]) == {0.0, 1.5}
    stamps = sorted(rows["finished_at"])
    again = run_csbm_ladder([0.0, 1.5], sizes=[120], graph_seeds=[0], seeds=[0], models=["MLP"], protocol=quick,
                            out=out)
    assert sorted(again["finished_at"]) == stamps  # nothing retrained


def test_ladder_quality_of_every_cell():
    from hpstrat_lite.experiments.ladder import ladder_quality

    q = ladder_quality([-1.5, 1.5], sizes=[200, 400], seeds=[0, 1])
    assert len(q) == 4 * 3 * 2 and set(q["n"]) == {200, 400} and set(q["lam"]) == {-1.5, 1.5}
    chd = q.groupby("method")["chd"].mean()
    assert chd["hpstrat"] < chd["stratified"] and chd["hpstrat"] < chd["placebo"]  # HpStrat balances homophily
    with pytest.raises(ValueError, match="at least one size and one lam"):
        ladder_quality([], sizes=[200])
