"""Watts-Strogatz generator and WS1000 / WS1000_gamma features (Part II, Section 5)."""
import numpy as np
import pytest
import torch

from hpstrat_book.part2.plan import WS_GAMMAS
from hpstrat_lite.data.synthetic import bfs_parents, load_ws, make_ws1000, save_ws, watts_strogatz_graph, ws_features


def _pairs(ei):
    ei = ei.numpy()
    return set(zip(ei[0].tolist(), ei[1].tolist()))


def _parent_corr(x, parent):
    child = np.flatnonzero(parent >= 0)
    a = x[child] - x[child].mean(1, keepdims=True)
    b = x[parent[child]] - x[parent[child]].mean(1, keepdims=True)
    return float(np.mean((a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))))


@pytest.mark.parametrize("n,k,beta", [(1000, 4, 0.5), (50, 6, 0.0), (50, 6, 1.0), (11, 4, 0.3)])
def test_ws_graph_is_simple_undirected_with_mean_degree_k(n, k, beta):
    ei = watts_strogatz_graph(n, k=k, beta=beta, seed=3)
    assert ei.dtype == torch.long and tuple(ei.shape) == (2, n * k)
    src, dst = ei.numpy()
    assert (src != dst).all()
    pairs = _pairs(ei)
    assert len(pairs) == n * k  # no duplicate directed edge
    assert all((v, u) in pairs for u, v in pairs)  # both directions
    assert np.bincount(src, minlength=n).mean() == k
    key = src.astype(np.int64) * n + dst
    assert (np.diff(key) > 0).all()  # sorted by (source, target)


def test_ws_beta_zero_is_the_ring_lattice_and_beta_half_keeps_half():
    n, k = 40, 4
    ring = {(u, (u + j) % n) for u in range(n) for j in (1, 2)}
    ring |= {(v, u) for u, v in ring}
    assert _pairs(watts_strogatz_graph(n, k=k, beta=0.0, seed=0)) == ring
    n = 2000
    lattice = {(min(u, (u + j) % n), max(u, (u + j) % n)) for u in range(n) for j in (1, 2)}
    ei = watts_strogatz_graph(n, k=4, beta=0.5, seed=1).numpy()
    kept = {(u, v) for u, v in zip(*ei) if u < v} & lattice
    assert abs(len(kept) / len(lattice) - 0.5) < 0.03  # 4000 edges: sd of the share ~0.008


def test_ws_degree_spread_matches_networkx_model():
    nx = pytest.importorskip("networkx")
    ours = [np.bincount(watts_strogatz_graph(1000, k=4, beta=0.5, seed=s)[0].numpy()).std()
            for s in range(5)]
    ref = [np.std([d for _, d in nx.watts_strogatz_graph(1000, 4, 0.5, seed=s).degree()])
           for s in range(5)]
    assert abs(np.mean(ours) - np.mean(ref)) < 0.1


def test_ws_is_seeded():
    a = watts_strogatz_graph(300, k=4, beta=0.5, seed=7)
    assert torch.equal(a, watts_strogatz_graph(300, k=4, beta=0.5, seed=7))
    assert not torch.equal(a, watts_strogatz_graph(300, k=4, beta=0.5, seed=8))
    d1, d2 = make_ws1000(0.4, seed=2), make_ws1000(0.4, seed=2)
    assert torch.equal(d1.x, d2.x) and torch.equal(d1.edge_index, d2.edge_index)
    assert not torch.equal(d1.x, make_ws1000(0.4, seed=3).x)


def test_make_ws1000_sizes_names_and_shared_graph():
    base = make_ws1000()
    assert base.name == "WS1000" and tuple(base.x.shape) == (1000, 1000)
    assert base.x.dtype == torch.float32 and base.num_nodes == 1000
    assert base.edge_index.shape[1] / base.num_nodes == 4  # mean degree 4
    x = base.x.numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01  # N(0, I)
    for g in WS_GAMMAS:
        d = make_ws1000(g)
        assert d.name == f"WS1000_{g}" and d.gamma == g
        assert torch.equal(d.edge_index, base.edge_index)  # one graph for the whole family


def test_gamma_zero_features_are_independent_of_the_parent():
    ei = watts_strogatz_graph(400, k=4, beta=0.5, seed=0)
    x0, parent = ws_features(ei, 400, dim=300, gamma=0.0, seed=1, return_parents=True)
    assert abs(_parent_corr(x0.numpy(), parent)) < 0.02
    # gamma = 0 with nu = 1 is the i.i.d. noise itself, the same draw as gamma=None
    assert torch.equal(x0, ws_features(ei, 400, dim=300, gamma=None, seed=1))


def test_parent_correlation_grows_with_gamma():
    ei = watts_strogatz_graph(400, k=4, beta=0.5, seed=0)
    corr = []
    for g in (0.0, *WS_GAMMAS):
        x, parent = ws_features(ei, 400, dim=300, gamma=g, seed=1, return_parents=True)
        corr.append(_parent_corr(x.numpy(), parent))
    assert np.all(np.diff(corr) > 0.03), corr
    # gamma = 0.2: corr(x_v, x_parent) = 0.2 * sqrt(s_{d-1} / s_d) with s_d = sum_i 0.04^i ~ 0.196
    assert abs(corr[1] - 0.196) < 0.03
    assert corr[-1] > 0.8  # gamma = 1: sqrt(d / (d + 1))


def test_bfs_forest_one_root_per_component_and_parents_are_neighbours():
    # two components: a path 0-1-2-3 and a triangle 4-5-6, plus the isolated node 7
    ei = torch.tensor([[0, 1, 2, 4, 5, 6], [1, 2, 3, 5, 6, 4]])
    parent, depth = bfs_parents(ei, 8, seed=0)
    assert (parent == -1).sum() == 3 and parent[7] == -1 and depth[7] == 0
    pairs = _pairs(torch.cat([ei, ei.flip(0)], 1))
    child = np.flatnonzero(parent >= 0)
    assert all((int(parent[v]), int(v)) in pairs for v in child)
    assert (depth[child] == depth[parent[child]] + 1).all()
    roots = {int(r) for r in np.flatnonzero(parent == -1)}
    seen = {frozenset(np.flatnonzero(parent == -1)[:2].tolist())}
    for s in range(1, 20):  # the root is drawn uniformly, so it varies with the seed
        p, _ = bfs_parents(ei, 8, seed=s)
        seen.add(frozenset(np.flatnonzero(p == -1)[:2].tolist()))
    assert 7 in roots and len(seen) > 3


def test_save_load_roundtrip(tmp_path):
    d = make_ws1000(0.6, seed=1, n=60, dim=8)
    folder = save_ws(d, tmp_path / "ws")
    lines = (folder / "edges.csv").read_text().splitlines()
    assert lines[0] == "source,target" and len(lines) == 1 + 60 * 4 // 2
    back = load_ws(folder)
    assert torch.equal(back.x, d.x) and torch.equal(back.edge_index, d.edge_index)
    assert back.name == d.name == "WS60_0.6" and back.gamma == 0.6 and back.num_nodes == 60
    assert np.isnan(load_ws(save_ws(make_ws1000(None, n=60, dim=4), tmp_path / "b")).gamma)


@pytest.mark.parametrize("kwargs,match", [
    (dict(n=2), "n must be"),
    (dict(n=10, k=3), "k must be an even integer"),
    (dict(n=10, k=10), "k must be an even integer"),
    (dict(n=10, beta=1.5), r"beta must be a number in \[0, 1\]"),
])
def test_ws_graph_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        watts_strogatz_graph(**kwargs)


def test_ws_features_bad_inputs(tmp_path):
    ei = watts_strogatz_graph(20, k=4, beta=0.5)
    with pytest.raises(ValueError, match="gamma must be None or a number >= 0"):
        ws_features(ei, 20, dim=4, gamma=-0.5)
    with pytest.raises(ValueError, match="nu must be a number > 0"):
        ws_features(ei, 20, dim=4, gamma=0.5, nu=0)
    with pytest.raises(ValueError, match="node ids in"):
        ws_features(ei, 10, dim=4, gamma=0.5)
    with pytest.raises(ValueError, match="seed must be an integer"):
        make_ws1000(seed=1.5)
    with pytest.raises(FileNotFoundError, match="has no edges.csv"):
        load_ws(tmp_path / "missing")
