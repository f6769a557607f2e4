"""Stratification on any node covariate: HpStrat as a special case, the degree and placebo controls."""
import hashlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hpstrat_lite import (covariate_folds, degree_folds, fold_quality, hpstrat_folds, make_folds, node_homophily,
                          placebo_folds)
from hpstrat_lite.core.covariates import covariate_bins, node_degree, placebo_covariate
from test_folds import graph_cases


@pytest.fixture(scope="module")
def cora(data_root):
    from hpstrat_lite import load_dataset

    return load_dataset("Cora", root=data_root)


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.int64).tobytes()).hexdigest()


@settings(max_examples=60, deadline=None)
@given(graph_cases())
def test_homophily_as_covariate_gives_hpstrat_folds_hash_equal(case):
    h, y, k, b, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = hpstrat_folds(h, y, k=k, n_bins=b, seed=seed)
        c = covariate_folds(h, y, k=k, n_bins=b, binning="uniform", bin_range=(0, 1), seed=seed)
    assert digest(a) == digest(c)


def covariate_cases(max_n=80):
    return st.integers(3, max_n).flatmap(lambda n: st.tuples(
        st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(np.nan), st.sampled_from([0.0, 1.0, 7.0])),
                 min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.integers(3, min(n, 7)), st.integers(1, 12), st.sampled_from(["uniform", "quantile"]),
        st.integers(0, 2**32 - 1)))


@settings(max_examples=80, deadline=None)
@given(covariate_cases())
def test_strata_invariants_hold_for_any_covariate(case):
    c, y, k, b, binning, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folds = covariate_folds(c, y, k=k, n_bins=b, binning=binning, seed=seed)
    bins = covariate_bins(c, n_bins=b, binning=binning)
    assert bins.min() >= 0 and bins.max() <= b
    assert (bins[np.isnan(np.array(c, float))] == b).all()
    sizes = np.bincount(folds, minlength=k)
    assert sizes.max() - sizes.min() <= 1
    y = np.array(y)
    for key in set(zip(bins.tolist(), y.tolist())):
        counts = np.bincount(folds[(bins == key[0]) & (y == key[1])], minlength=k)
        assert counts.max() - counts.min() <= 1


def test_degree_bins_are_quantiles():
    degree = np.arange(1, 1001)
    bins = covariate_bins(np.log1p(degree), n_bins=10, binning="quantile")
    assert np.array_equal(np.bincount(bins), np.full(10, 100))
    assert np.array_equal(bins, np.repeat(np.arange(10), 100))  # monotone in the degree
    # ties stay in one bin: half the nodes of degree 1 fill the low bins' share
    tied = covariate_bins(np.log1p(np.r_[np.ones(500), np.arange(2, 502)]), n_bins=10, binning="quantile")
    assert len(np.unique(tied[:500])) == 1


def test_degree_method_on_a_real_graph_balances_degree(cora):
    y = cora.y.numpy()
    degree = np.bincount(cora.edge_index[0].numpy(), minlength=cora.num_nodes)
    h = node_homophily(cora.edge_index, y)
    spread = {}
    for method in ("random", "degree"):
        means = [[np.log1p(degree)[make_folds(method, h, y, k=4, seed=s, degree=degree) == i].mean() for i in range(4)]
                 for s in range(5)]
        spread[method] = np.mean(np.ptp(means, axis=1))
    assert spread["degree"] < spread["random"] / 2
    np.testing.assert_array_equal(make_folds("degree", h, y, k=4, seed=3, degree=degree),
                                  degree_folds(degree, y, k=4, seed=3))


def neighbour_sets_degree(edges, n):
    """Degree written out independently of the library: the size of each node's set of other nodes it
    shares an edge with, in either direction."""
    nbrs = [set() for _ in range(n)]
    for u, v in zip(*edges):
        if u != v:
            nbrs[u].add(v)
            nbrs[v].add(u)
    return [len(s) for s in nbrs]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80))))
def test_node_degree_counts_distinct_neighbours(case):
    n, pairs = case
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2).T  # duplicates, self-loops, one direction only
    assert node_degree(edges, n).tolist() == neighbour_sets_degree(edges, n)
    # the same graph made undirected and simple: the fast path counts the edges leaving each node
    a, b = np.minimum(*edges), np.maximum(*edges)
    keys = np.unique(a[a != b] * n + b[a != b])
    simple = np.concatenate([np.stack([keys // n, keys % n]), np.stack([keys % n, keys // n])], axis=1)
    assert node_degree(simple, n, assume_simple=True).tolist() == neighbour_sets_degree(edges, n)


def test_node_degree_of_a_loaded_graph(cora):
    degree = node_degree(cora.edge_index, cora.num_nodes, assume_simple=True)
    assert degree.dtype == np.int64 and degree.shape == (cora.num_nodes,) and degree.sum() == cora.edge_index.shape[1]
    np.testing.assert_array_equal(degree, node_degree(cora.edge_index, cora.num_nodes))


@pytest.mark.parametrize("call, message", [
    (lambda: node_degree([[0, 1], [1, 3]], 3), r"node ids in \[0, 3\] but num_nodes=3"),
    (lambda: node_degree([[0, 1], [1, 3]], 3, assume_simple=True), r"node ids in \[0, 3\] but num_nodes=3"),
    (lambda: node_degree([[-1, 1], [1, 0]], 3, assume_simple=True), r"node ids in \[-1, 1\]"),
    (lambda: node_degree([0, 1, 2], 3), r"edge_index must have shape \(2, m\); got shape \(3,\)"),
    (lambda: node_degree([[0.0, 1.0], [1.0, 0.0]], 2), "edge_index must hold integer node ids; got dtype float64"),
    (lambda: node_degree([[0, 1], [1, 0]], 0), "num_nodes must be an integer >= 1; got 0"),
])
def test_node_degree_bad_input_says_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_placebo_is_deterministic_per_seed_and_has_hpstrat_strata_count():
    y = np.arange(400) % 4
    a, b = placebo_folds(y, k=4, seed=5), placebo_folds(y, k=4, seed=5)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, placebo_folds(y, k=4, seed=6))
    assert np.array_equal(placebo_covariate(5, seed=1), placebo_covariate(5, seed=1))
    bins = covariate_bins(placebo_covariate(400, seed=5), n_bins=10, bin_range=(0, 1))
    assert len(np.unique(bins)) == 10
    assert fold_quality(a, y, np.full(400, 0.5), k=4)["cdd"] < 2


def test_make_folds_controls_and_quality(cora):
    y = cora.y.numpy()
    h = node_homophily(cora.edge_index, y)
    degree = np.bincount(cora.edge_index[0].numpy(), minlength=cora.num_nodes)
    for method in ("degree", "placebo"):
        folds = make_folds(method, h, y, k=4, seed=0, degree=degree)
        q = fold_quality(folds, y, h, k=4)
        assert q["sdd"] == 0.0 and q["cdd"] < 2


@pytest.mark.parametrize("call, message", [
    (lambda: covariate_folds([1.0, 2.0], [0, 1, 0], k=3), r"covariate must be a 1-D array with one value per node \(length 3\)"),
    (lambda: covariate_folds([1.0, np.inf, 2.0], [0, 1, 0], k=3), "infinite value at node 1"),
    (lambda: covariate_folds(["a", "b", "c"], [0, 1, 0], k=3), "covariate must hold real numbers"),
    (lambda: covariate_folds([1.0, 2.0, 3.0], [0, 1, 0], k=3, binning="log"), "binning must be one of"),
    (lambda: covariate_folds([1.0, 2.0, 3.0], [0, 1, 0], k=3, bin_range=(0, 2)), r"must lie in bin_range \[0, 2\]"),
    (lambda: covariate_folds([1.0, 2.0, 3.0], [0, 1, 0], k=3, bin_range=(2, 1)), "lo < hi"),
    (lambda: make_folds("degree", None, [0, 1, 0], k=3), "method='degree' needs degree="),
    (lambda: degree_folds([-1, 2, 3], [0, 1, 0], k=3), "degree must be non-negative"),
])
def test_bad_covariates_say_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_constant_or_all_nan_covariate_falls_back_to_class_strata_and_says_so():
    y = np.arange(30) % 3
    for c in (np.full(30, 2.0), np.full(30, np.nan)):
        with pytest.warns(UserWarning, match="stratified by class only"):
            folds = covariate_folds(c, y, k=3, seed=0)
        assert all(np.ptp(np.bincount(folds[y == cls], minlength=3)) <= 1 for cls in range(3))
