import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from hpstrat_lite import homophily_bins, mean_homophily, node_homophily
from hpstrat_lite.core.homophily import is_sorted_simple_undirected, simple_undirected_pairs


def naive_homophily(edges, y, n):
    nbrs = [set() for _ in range(n)]
    for u, v in edges:
        if u != v:
            nbrs[u].add(v)
            nbrs[v].add(u)
    return np.array([np.mean([y[u] == y[v] for u in nbrs[v]]) if nbrs[v] else np.nan for v in range(n)])


def test_small_example_by_hand():
    # path 0-1-2 with labels 0,0,1; a duplicate, a reverse edge and a self-loop that must not count
    ei = np.array([[0, 1, 1, 0, 2], [1, 2, 0, 1, 2]])
    h = node_homophily(ei, [0, 0, 1])
    np.testing.assert_allclose(h, [1.0, 0.5, 0.0])


def test_isolated_nodes_are_nan_and_excluded_from_mean():
    h = node_homophily(np.array([[0], [1]]), [0, 0, 1])
    assert h[0] == 1 and h[1] == 1 and np.isnan(h[2])
    assert mean_homophily(h) == 1.0
    assert np.isnan(mean_homophily([np.nan, np.nan]))


def test_accepts_torch_and_num_nodes():
    h = node_homophily(torch.tensor([[0, 1], [1, 0]]), torch.tensor([0, 1, 1, 1]), num_nodes=4)
    np.testing.assert_allclose(h[:2], [0.0, 0.0])
    assert np.isnan(h[2:]).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 25).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60),
    st.lists(st.integers(0, 3), min_size=n, max_size=n))))
def test_matches_naive_definition(case):
    n, edges, y = case
    ei = np.array(edges, dtype=np.int64).reshape(-1, 2).T
    np.testing.assert_allclose(node_homophily(ei, y), naive_homophily(edges, y, n), equal_nan=True)
    # the fast path on the normalised graph gives the same values
    a, b = simple_undirected_pairs(ei, n)
    sym = np.stack([np.concatenate([a, b]), np.concatenate([b, a])])
    sym = sym[:, np.lexsort((sym[1], sym[0]))]
    assert is_sorted_simple_undirected(sym, n)
    np.testing.assert_allclose(node_homophily(sym, y, assume_simple=True), naive_homophily(edges, y, n),
                               equal_nan=True)


def test_assume_simple_rejects_unnormalised_input():
    with pytest.raises(ValueError, match="assume_simple=True but edge_index"):
        node_homophily(np.array([[0, 1, 1], [1, 0, 0]]), [0, 1], assume_simple=True)


def test_bins_equal_width_last_bin_closed_nan_extra():
    h = np.array([0.0, 0.099, 0.1, 0.5, 0.999, 1.0, np.nan])
    assert homophily_bins(h, 10).tolist() == [0, 0, 1, 5, 9, 9, 10]
    assert homophily_bins(h, 1).tolist() == [0, 0, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("kwargs, message", [
    (dict(edge_index=np.array([[0, 5], [1, 0]]), y=[0, 1]), r"edge_index holds node ids in \[0, 5\] but num_nodes=2"),
    (dict(edge_index=np.array([[0, -1], [1, 0]]), y=[0, 1]), r"ids must lie in 0..1"),
    (dict(edge_index=np.array([0, 1, 2]), y=[0, 1]), r"edge_index must have shape \(2, m\)"),
    (dict(edge_index=np.array([[0.5], [1.0]]), y=[0, 1]), r"edge_index must hold integer node ids"),
    (dict(edge_index=np.zeros((2, 0), int), y=[]), r"num_nodes must be a positive integer"),
    (dict(edge_index=np.zeros((2, 0), int), y=[0, 1], num_nodes=3), r"y has length 2 but the graph has 3 nodes"),
    (dict(edge_index=np.zeros((2, 0), int), y=[0, -1]), r"y must hold non-negative class labels"),
    (dict(edge_index=np.zeros((2, 0), int), y=[0, 1.5]), r"non-integer value 1.5"),
    (dict(edge_index=np.zeros((2, 0), int), y=[0, np.nan]), r"y contains NaN at 1 node"),
    (dict(edge_index=np.zeros((2, 0), int), y=["a", "b"]), r"y must hold integer class labels"),
])
def test_bad_input_messages(kwargs, message):
    with pytest.raises(ValueError, match=message):
        node_homophily(**kwargs)


def test_bad_n_bins_message():
    with pytest.raises(ValueError, match=r"n_bins must be an integer >= 1; got 0"):
        homophily_bins([0.5], 0)


def test_homophily_bins_refuses_values_outside_the_unit_interval():
    # a value above 1 or below 0 would otherwise land in a bin past B or a negative bin, silently
    with pytest.raises(ValueError, match=r"homophily values must lie in \[0, 1\].*got range \[-0.2, 1.5\]"):
        homophily_bins([1.5, -0.2, float("nan")], 10)
    with pytest.raises(ValueError, match=r"homophily must be a 1-D array"):
        homophily_bins([[0.5]], 10)
