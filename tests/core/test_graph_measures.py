import math

import numpy as np
import pytest

from hpstrat_lite.core.graph_measures import (HOMOPHILY_METHODS, LABEL_MEASURES, adjusted_homophily, edge_homophily,
                                              homophily, label_informativeness, label_measures)
from hpstrat_lite.core.homophily import node_homophily, simple_undirected_pairs

# A triangle of class 0 (nodes 0, 1, 2), a tail 2 - 3 - 4 into class 1 (nodes 3, 4).
TOY_EDGES = [[0, 0, 1, 2, 3], [1, 2, 2, 3, 4]]
TOY_Y = [0, 0, 0, 1, 1]


def test_toy_graph_by_hand():
    # 5 edges, 4 within a class
    assert edge_homophily(TOY_EDGES, TOY_Y) == pytest.approx(4 / 5)
    # degrees 2, 2, 3, 2, 1: D_0 = 7, D_1 = 3 of 2|E| = 10 edge ends; chance = 0.7^2 + 0.3^2 = 0.58
    assert adjusted_homophily(TOY_EDGES, TOY_Y) == pytest.approx((0.8 - 0.58) / (1 - 0.58))
    # directed label pairs: (0,0) 6 times, (1,1) 2, (0,1) 1, (1,0) 1 of 10
    h_joint = -(0.6 * math.log(0.6) + 2 * 0.1 * math.log(0.1) + 0.2 * math.log(0.2))
    h_marg = -(0.7 * math.log(0.7) + 0.3 * math.log(0.3))
    assert label_informativeness(TOY_EDGES, TOY_Y) == pytest.approx(2 - h_joint / h_marg)
    m = label_measures(TOY_EDGES, TOY_Y)
    assert list(m)[:4] == list(LABEL_MEASURES)
    # node homophily 1, 1, 2/3, 1/2, 1
    assert m["node_homophily"] == pytest.approx((1 + 1 + 2 / 3 + 1 / 2 + 1) / 5)
    assert m["num_edges"] == 5 and m["isolated"] == 0


def test_direction_duplicates_and_loops_do_not_count():
    e = np.array(TOY_EDGES)
    messy = np.concatenate([e, e[::-1], e[:, :2], [[4], [4]]], axis=1)
    assert label_measures(messy, TOY_Y) == label_measures(TOY_EDGES, TOY_Y)
    a, b = simple_undirected_pairs(messy, 5)
    assert (a < b).all() and a.size == 5


def test_renaming_classes_changes_nothing():
    y = np.array(TOY_Y)
    assert label_measures(TOY_EDGES, 1 - y) == pytest.approx(label_measures(TOY_EDGES, y))


def test_bipartite_pattern_is_informative_but_heterophilous():
    # complete bipartite graph between classes 0 and 1: no same-class edge, yet a neighbour tells the label
    edges = [[0, 0, 1, 1], [2, 3, 2, 3]]
    y = [0, 0, 1, 1]
    assert edge_homophily(edges, y) == 0.0
    assert adjusted_homophily(edges, y) == pytest.approx(-1.0)  # (0 - 0.5) / (1 - 0.5)
    assert label_informativeness(edges, y) == pytest.approx(1.0)


def test_perfect_homophily():
    edges, y = [[0, 2], [1, 3]], [0, 0, 1, 1]
    assert edge_homophily(edges, y) == adjusted_homophily(edges, y) == label_informativeness(edges, y) == 1.0


def test_random_labels_near_chance():
    rng = np.random.default_rng(0)
    n = 3000
    edges = rng.integers(0, n, size=(2, 30000))
    y = rng.integers(0, 3, size=n)
    assert abs(adjusted_homophily(edges, y)) < 0.02
    assert label_informativeness(edges, y) < 0.01
    assert edge_homophily(edges, y) == pytest.approx(1 / 3, abs=0.02)


def test_no_edges_and_one_class_give_nan():
    m = label_measures(np.zeros((2, 0), dtype=int), [0, 1, 1])
    assert all(math.isnan(m[k]) for k in LABEL_MEASURES) and m["isolated"] == 3
    assert math.isnan(adjusted_homophily([[0], [1]], [0, 0]))
    assert math.isnan(label_informativeness([[0], [1]], [0, 0]))
    assert edge_homophily([[0], [1]], [0, 0]) == 1.0


@pytest.mark.parametrize("edges, y, match", [([[0], [5]], [0, 1], "node ids"), ([[0], [1]], [0.5, 1], "y"),
                                              ([0, 1], [0, 1], "shape")])
def test_bad_input(edges, y, match):
    with pytest.raises(ValueError, match=match):
        label_measures(edges, y)


def test_cora_matches_pyg(data_root):
    from torch_geometric.utils import homophily

    from hpstrat_lite import load_dataset

    data = load_dataset("Cora", root=data_root)
    m = label_measures(data.edge_index, data.y)
    assert m["edge_homophily"] == pytest.approx(float(homophily(data.edge_index, data.y, method="edge")), abs=1e-6)
    assert m["node_homophily"] == pytest.approx(float(homophily(data.edge_index, data.y, method="node")), abs=1e-6)
    assert 0 < m["adjusted_homophily"] < m["edge_homophily"] and 0 < m["label_informativeness"] < 1


def test_homophily_methods_reuse_the_measures():
    m = label_measures(TOY_EDGES, TOY_Y)
    assert homophily(TOY_EDGES, TOY_Y) == m["edge_homophily"]  # PyG's default method
    assert homophily(TOY_EDGES, TOY_Y, method="node") == m["node_homophily"]
    assert homophily(TOY_EDGES, TOY_Y, method="node") == pytest.approx(np.nanmean(node_homophily(TOY_EDGES, TOY_Y)))
    assert homophily(TOY_EDGES, TOY_Y, method="adjusted") == m["adjusted_homophily"]
    assert homophily(TOY_EDGES, TOY_Y, method="label_informativeness") == m["label_informativeness"]
    # class 0: 7 edge ends, 6 same-class, share 3/5 of nodes; class 1: 3 ends, 2 same, share 2/5
    assert homophily(TOY_EDGES, TOY_Y, method="edge_insensitive") == pytest.approx(
        max(0, 6 / 7 - 3 / 5) + max(0, 2 / 3 - 2 / 5))
    with pytest.raises(ValueError, match=r"method must be one of \('edge', 'node'"):
        homophily(TOY_EDGES, TOY_Y, method="nodes")


def test_homophily_matches_pyg():
    torch = pytest.importorskip("torch")
    pyg = pytest.importorskip("torch_geometric.utils")
    rng = np.random.default_rng(0)
    n = 60
    ei = rng.integers(0, n, size=(2, 400))
    ei = ei[:, ei[0] != ei[1]]
    ei = np.concatenate([ei, ei[::-1]], axis=1)
    key = np.unique(ei[0] * n + ei[1])
    ei = np.stack([key // n, key % n])  # undirected, simple
    y = rng.integers(0, 3, size=n)
    assert np.all(np.bincount(ei[0], minlength=n) > 0)  # no isolated node: PyG's node mean counts them as 0
    t_ei, t_y = torch.from_numpy(ei), torch.from_numpy(y)
    for method in ("edge", "node", "edge_insensitive"):
        assert homophily(ei, y, method=method) == pytest.approx(pyg.homophily(t_ei, t_y, method=method), abs=1e-6)
    assert set(HOMOPHILY_METHODS) >= {"edge", "node", "edge_insensitive"}
