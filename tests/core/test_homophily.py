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
    assert homophily_bins(h, n_bins=10).tolist() == [0, 0, 1, 5, 9, 9, 10]
    assert homophily_bins(h, n_bins=1).tolist() == [0, 0, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("kwargs, message", [
    (dict(edge_index=np.array([[0, 5], [1, 0]]), y=[0, 1]), r"edge_index holds node ids in \[0, 5\] but num_nodes=2"),
    (dict(edge_index=np.array([[0, -1], [1, 0]]), y=[0, 1]), r"ids must lie in 0..1"),
    (dict(edge_index=np.array([0, 1, 2]), y=[0, 1]), r"edge_index must have shape \(2, m\)"),
    (dict(edge_index=np.array([[0.5], [1.0]]), y=[0, 1]), r"edge_index must hold integer node ids"),
    (dict(edge_index=np.zeros((2, 0), int), y=[]),
     r"num_nodes must be an integer >= 1 \(an empty graph cannot be split\)"),
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
        homophily_bins([0.5], n_bins=0)


def test_homophily_bins_refuses_values_outside_the_unit_interval():
    # a value above 1 or below 0 would otherwise land in a bin past B or a negative bin, silently
    with pytest.raises(ValueError, match=r"homophily values must lie in \[0, 1\].*got range \[-0.2, 1.5\]"):
        homophily_bins([1.5, -0.2, float("nan")], n_bins=10)
    with pytest.raises(ValueError, match=r"homophily must be a 1-D array"):
        homophily_bins([[0.5]], n_bins=10)


def _sorted_symmetric(n, m, seed):
    rng = np.random.default_rng(seed)
    a, b = simple_undirected_pairs(rng.integers(0, n, (2, m)), n)
    sym = np.stack([np.concatenate([a, b]), np.concatenate([b, a])])
    return sym[:, np.lexsort((sym[1], sym[0]))]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32])
def test_assume_simple_over_many_chunks_equals_raw_path(dtype):
    # > 65536 edges per thread: the one-pass kernel splits the edges at changes of source
    import numba

    n = 3000
    sym = _sorted_symmetric(n, 150_000, 0)
    y = np.random.default_rng(1).integers(0, 5, n)
    old = numba.get_num_threads()
    try:
        for threads in {1, old}:
            numba.set_num_threads(threads)
            fast = node_homophily(sym.astype(dtype), y, assume_simple=True)
            np.testing.assert_array_equal(fast, node_homophily(sym, y))
        fast = node_homophily(torch.from_numpy(sym), torch.from_numpy(y), assume_simple=True)
        np.testing.assert_array_equal(fast, node_homophily(sym, y))
    finally:
        numba.set_num_threads(old)


def test_assume_simple_over_many_chunks_with_isolated_nodes_everywhere():
    # nodes without edges before the first source, between sources (also across chunk boundaries) and after
    # the last one: NaN, as on the raw path
    import numba

    n = 4000
    sym = _sorted_symmetric(n, 150_000, 2)
    gone = (np.arange(n) % 7 == 0) | (np.arange(n) < 5) | (np.arange(n) >= n - 5)
    sym = np.ascontiguousarray(sym[:, ~gone[sym[0]] & ~gone[sym[1]]])
    y = np.random.default_rng(3).integers(0, 4, n)
    old = numba.get_num_threads()
    try:
        for threads in {1, old}:
            numba.set_num_threads(threads)
            fast = node_homophily(sym, y, assume_simple=True)
            assert np.isnan(fast[gone]).all() and not np.isnan(fast[~gone]).any()
            np.testing.assert_array_equal(fast, node_homophily(sym, y))
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize("break_it", ["duplicate", "self_loop", "unsorted", "one_direction", "late_duplicate"])
def test_assume_simple_rejects_each_broken_promise(break_it):
    n = 3000
    sym = _sorted_symmetric(n, 150_000, 2)
    y = np.zeros(n, dtype=np.int64)
    if break_it == "duplicate":
        sym = np.insert(sym, 10, sym[:, 10], axis=1)
    elif break_it == "late_duplicate":  # in the last chunk
        sym = np.insert(sym, sym.shape[1] - 5, sym[:, -5], axis=1)
    elif break_it == "self_loop":
        v = sym[0, 100]
        keep = np.flatnonzero(sym[0] == v)
        pos = keep[np.searchsorted(sym[1, keep], v)] if np.any(sym[1, keep] > v) else keep[-1] + 1
        sym = np.insert(sym, pos, [v, v], axis=1)
    elif break_it == "unsorted":
        sym = sym.copy()
        sym[:, [200_000, 200_001]] = sym[:, [200_001, 200_000]]
    else:  # sorted, loop- and duplicate-free, but an edge without its reverse
        sym = np.delete(sym, 7, axis=1)
    with pytest.raises(ValueError, match="assume_simple=True but edge_index"):
        node_homophily(sym, y, assume_simple=True)


def test_assume_simple_names_out_of_range_ids():
    with pytest.raises(ValueError, match=r"edge_index holds node ids in \[0, 5\] but num_nodes=3"):
        node_homophily(np.array([[0, 1, 5], [1, 0, 0]]), [0, 1, 1], assume_simple=True)
    with pytest.raises(ValueError, match=r"edge_index holds node ids in \[-4, 1\]"):
        node_homophily(np.array([[-4, 0], [0, 1]]), [0, 1, 1], assume_simple=True)
    with pytest.raises(ValueError, match=r"edge_index must hold integer node ids"):
        node_homophily(np.array([[0.0], [1.0]]), [0, 1], assume_simple=True)


def test_assume_simple_empty_edge_list_is_all_isolated():
    assert np.isnan(node_homophily(np.zeros((2, 0), dtype=np.int64), [0, 1, 2], assume_simple=True)).all()
