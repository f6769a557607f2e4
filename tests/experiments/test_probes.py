import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite.experiments.probes import (ESTIMATES, GAINS, PROBES, VERDICTS, adjacency, label_propagation,
                                             necessity, propagators, t_interval, verdict)


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
    a, b = necessity(data, seed=3), necessity(data, seed=3)
    assert a.folds.equals(b.folds) and a.verdict == b.verdict
    assert not necessity(data, seed=4).folds.equals(a.folds)


def test_result_table_lists_every_estimate():
    res = necessity(informative_features_random_graph(n=300), k=3)
    tab = res.table()
    assert list(tab["estimate"]) == list(ESTIMATES)
    assert len(res.folds) == 3 and set(PROBES) <= set(res.folds.columns)
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


@pytest.mark.parametrize("low, high, expected", [(0.1, 2, VERDICTS[0]), (-1, 1, VERDICTS[1]), (-3, -0.2, VERDICTS[2]),
                                                 (np.nan, np.nan, VERDICTS[1])])
def test_verdict_rule(low, high, expected):
    assert verdict(low, high) == expected


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
])
def test_bad_input(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        necessity(data, **kwargs)


def test_cora_graph_helps(data_root):
    res = necessity("Cora", root=data_root)
    assert res.verdict == "the graph helps"
    assert res.measures["edge_homophily"] > 0.8
