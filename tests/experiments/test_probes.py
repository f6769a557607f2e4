import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite.experiments.probes import (ESTIMATES, FAMILY_GAINS, GAINS, PRACTICAL_GAP, PROBES, VERDICTS, adjacency,
                                             family_lines, label_propagation, necessity, propagators, t_interval,
                                             verdict)


def _random_graph(n, degree, rng):
    src = np.repeat(np.arange(n), degree)
    dst = rng.integers(0, n, size=src.size)
    return torch.as_tensor(np.stack([src, dst]))


def neighbour_feature_graph(n=800, seed=0):
    """Labels are a function of the neighbours' features only: y = [mean of the neighbours' x_0 > 0]."""
    rng = np.random.default_rng(seed)
    from hpstrat_lite.data.graphs import as_graph

    g = as_graph(Data(x=torch.randn(n, 8, generator=torch.Generator().manual_seed(seed)),
                      edge_index=_random_graph(n, 5, rng), y=torch.zeros(n, dtype=torch.long)))
    a = adjacency(g.edge_index.numpy(), n)
    mean_x0 = propagators(a)[1] @ g.x[:, 0].numpy().astype(float)
    return Data(x=g.x, edge_index=g.edge_index, y=torch.as_tensor((mean_x0 > np.median(mean_x0)).astype(np.int64)))


def informative_features_random_graph(n=800, seed=0):
    """Features tell the class (mean shift 1.5 in 4 of 8 columns); edges are drawn at random."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    x = rng.normal(size=(n, 8))
    x[np.arange(n), y] += 1.5
    return Data(x=torch.as_tensor(x, dtype=torch.float32), edge_index=_random_graph(n, 5, rng),
                y=torch.as_tensor(y))


def opposite_type_graph(n=800, degree=5, seed=0):
    """Every node has a type t (visible in its features: x_0 = 2t - 1 plus noise) drawn independently of
    its label y, so its own features say nothing of y; a node of label y links only to nodes of type 1 - y
    (and, the graph being undirected, a node of type t only to nodes of label 1 - t): its label is the
    opposite of its neighbours' type, which only their features show."""
    rng = np.random.default_rng(seed)
    y, t = rng.integers(0, 2, size=n), rng.integers(0, 2, size=n)
    x = rng.normal(size=(n, 8))
    x[:, 0] += 2 * t - 1
    # i - j is allowed iff t_j = 1 - y_i and t_i = 1 - y_j:
    # groups (y, t) = (0, 0) - (1, 1), (0, 1) - (0, 1), (1, 0) - (1, 0)
    partner = {(0, 0): (1, 1), (1, 1): (0, 0), (0, 1): (0, 1), (1, 0): (1, 0)}
    groups = {g: np.flatnonzero((y == g[0]) & (t == g[1])) for g in partner}
    src, dst = [], []
    for i in range(n):
        pool = groups[partner[(y[i], t[i])]]
        pool = pool[pool != i]
        src += [i] * degree
        dst += list(rng.choice(pool, size=degree))
    return Data(x=torch.as_tensor(x, dtype=torch.float32), edge_index=torch.as_tensor(np.array([src, dst])),
                y=torch.as_tensor(y))


def test_opposite_type_pattern_the_heterophily_aware_estimate_helps():
    data = opposite_type_graph()
    res = necessity(data)
    fam = res.families().set_index("family")
    assert fam.loc["heterophily", "verdict"] == "the graph helps" and fam.loc["heterophily", "gap"] > 10
    assert res.verdict == "the graph helps"
    assert res.folds["features"].mean() < 0.6  # the node's own features are at chance
    # the label is the opposite of the neighbours' type: the probe must weigh the neighbour channel negatively,
    # and the pattern is not homophily (edge homophily near 1/2)
    assert 0.3 < res.measures["edge_homophily"] < 0.7


def test_families_table_and_lines():
    res = necessity(neighbour_feature_graph(n=400))
    fam = res.families()
    assert list(fam["family"]) == list(FAMILY_GAINS)
    assert (fam["low"] <= fam["gap"]).all() and (fam["gap"] <= fam["high"]).all()
    lines = family_lines(res.table())
    assert len(lines) == 3 and all("expected GNN - MLP gap" in line for line in lines)
    assert fam.set_index("family").loc["graph", "verdict"] == res.verdict
    text = str(res)
    assert "heterophily-aware" in text and "practical threshold 0.5 points" in text


def test_practical_threshold_turns_a_small_gain_into_no_practical_difference():
    data = informative_features_random_graph()
    res = necessity(data, threshold=50.0)
    assert res.verdict in (VERDICTS[1], VERDICTS[3]) and res.threshold == 50.0


def test_labels_from_neighbours_features_the_graph_helps():
    res = necessity(neighbour_feature_graph())
    assert res.verdict == "the graph helps"
    assert res.gap > 10  # the features alone are at chance
    assert res.folds["features"].mean() < 0.6 < res.folds["graph"].mean()


def test_random_graph_over_informative_features_no_help():
    res = necessity(informative_features_random_graph())
    assert res.verdict in VERDICTS[1:]
    assert res.gap < 1


def test_deterministic_per_seed_and_folds_change_with_seed():
    data = informative_features_random_graph(n=300)
    a, b = necessity(data, seed=3, repeats=1), necessity(data, seed=3, repeats=1)  # one split: the same rule
    assert a.folds.equals(b.folds) and a.verdict == b.verdict
    other = necessity(data, seed=4, repeats=1).folds
    assert not other.drop(columns="split_seed").equals(a.folds.drop(columns="split_seed"))  # other folds, other scores


def test_result_table_lists_every_estimate():
    res = necessity(informative_features_random_graph(n=300), k=3)
    tab = res.table()
    assert list(tab["estimate"]) == list(ESTIMATES)
    assert len(res.folds) == 3 * 5 and set(PROBES) <= set(res.folds.columns)  # 300 nodes: 5 split seeds
    assert sorted(res.folds["split_seed"].unique()) == [0, 1, 2, 3, 4]
    assert len(necessity(informative_features_random_graph(n=300), k=3, repeats=1).folds) == 3
    assert list(res.gains["estimate"]) == list(GAINS)
    assert res.verdict in str(res)


def test_roc_auc_for_binary_labels():
    res = necessity(neighbour_feature_graph(n=400), metric="roc_auc")
    assert ((res.folds[list(PROBES)] >= 0) & (res.folds[list(PROBES)] <= 1)).all().all()
    assert res.metric == "roc_auc" and res.folds["graph"].mean() > 0.7


def test_t_interval_matches_scipy():
    from scipy import stats

    v = np.array([1.0, 2.5, 0.5, 3.0])
    mean, low, high = t_interval(v)
    ci = stats.ttest_1samp(v, 0).confidence_interval(0.95)
    assert (mean, low, high) == pytest.approx((v.mean(), ci.low, ci.high))
    assert np.isnan(t_interval([1.0])[1])


@pytest.mark.parametrize("mean, low, high, expected", [
    (1.5, 0.1, 3, VERDICTS[0]),     # above 0 and at least the threshold
    (0.5, 0.1, 0.9, VERDICTS[3]),   # above 0 but within the threshold: no practical difference
    (1.3, 0.2, 2.4, VERDICTS[0]),
    (0.0, -3, 3, VERDICTS[1]),      # straddles 0 and the threshold: no evidence
    (-0.7, -1.2, -0.2, VERDICTS[1]),  # below 0, mean within the threshold, interval reaches past it
    (-0.7, -0.9, -0.5, VERDICTS[3]),
    (-2.0, -3, -0.2, VERDICTS[2]),
    (np.nan, np.nan, np.nan, VERDICTS[1])])
def test_verdict_rule(mean, low, high, expected):
    assert verdict(mean, low, high, threshold=1.0) == expected
    assert verdict(mean, low, high) == verdict(mean, low, high, threshold=PRACTICAL_GAP)


def test_split_repeats_reach_the_test_predictions_on_small_graphs():
    from hpstrat_lite.experiments.probes import MAX_REPEATS, MIN_TEST_PREDICTIONS, split_repeats

    assert split_repeats(MIN_TEST_PREDICTIONS) == 1 and split_repeats(10 ** 6) == 1
    assert split_repeats(MIN_TEST_PREDICTIONS // 2) == 2 and split_repeats(183) == MAX_REPEATS


def test_verdict_threshold_zero_is_the_interval_rule():
    assert verdict(0.3, 0.1, 0.5, threshold=0) == VERDICTS[0]
    assert verdict(-0.3, -0.5, -0.1, threshold=0) == VERDICTS[2]
    with pytest.raises(ValueError, match="threshold=-1.0: the practical threshold must be a number >= 0"):
        verdict(1.0, 0.5, 2.0, threshold=-1.0)


def test_label_propagation_on_two_cliques():
    # two 4-cliques, one labelled node in each: propagation labels every node right
    edges = [(i, j) for c in (0, 4) for i in range(c, c + 4) for j in range(c, c + 4) if i != j]
    a = adjacency(np.array(edges).T, 8)
    y = np.array([0] * 4 + [1] * 4)
    val, test = label_propagation(propagators(a)[2], y, np.array([0, 4]), np.array([1, 5]), np.array([2, 3, 6, 7]))
    assert val == test == 1.0


def test_no_edges_is_a_stated_answer():
    data = Data(x=torch.randn(40, 3), edge_index=torch.zeros((2, 0), dtype=torch.long),
                y=torch.arange(40) % 2)
    res = necessity(data)
    assert res.verdict == VERDICTS[1] and "no edges" in res.note and np.isnan(res.gap)


@pytest.mark.parametrize("data, kwargs, match", [
    (Data(edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.tensor([0, 1]), num_nodes=2), {}, "features"),
    (Data(x=torch.randn(6, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.zeros(6, dtype=torch.long)), {},
     "one class"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3),
     {"metric": "roc_auc"}, "binary"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3),
     {"metric": "f1"}, "metric"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3), {"k": 1}, "k"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3),
     {"threshold": -0.5}, r"threshold=-0.5: the practical threshold must be a number >= 0"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3),
     {"threshold": "1"}, r"threshold='1'"),
    (Data(x=torch.randn(9, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.arange(9) % 3),
     {"repeats": 0}, r"repeats must be an integer >= 1"),
])
def test_bad_input(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        necessity(data, **kwargs)


def test_cora_graph_helps(data_root):
    res = necessity("Cora", root=data_root)
    assert res.verdict == "the graph helps"
    assert res.measures["edge_homophily"] > 0.8
    fam = res.families().set_index("family")
    assert (fam["verdict"] == "the graph helps").all()  # both families use Cora's homophilous edges
