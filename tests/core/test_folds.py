import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from hpstrat_lite import HomophilyStratifiedKFold, HpStratSplit, fold_masks, fold_rounds, homophily_bins, hpstrat_folds, make_folds, random_folds, stratified_folds
from reference import hpstrat_folds_reference
from conftest import bins_oracle


def graph_cases(max_n=60):
    """Random labelled nodes with homophily values (some NaN = isolated) and a k."""
    return st.integers(3, max_n).flatmap(lambda n: st.tuples(
        st.lists(st.one_of(st.floats(0, 1), st.just(np.nan), st.sampled_from([0.0, 0.5, 1.0])),
                 min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.integers(3, min(n, 7)),
        st.integers(1, 12),
        st.integers(0, 2**32 - 1)))


@settings(max_examples=80, deadline=None)
@given(graph_cases())
def test_fast_equals_literal_algorithm(case):
    h, y, k, b, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = hpstrat_folds(h, y, k=k, n_bins=b, seed=seed)
        slow = hpstrat_folds_reference(h, y, k, n_bins=b, seed=seed)
    np.testing.assert_array_equal(fast, slow)


@settings(max_examples=80, deadline=None)
@given(graph_cases())
def test_balance_invariants(case):
    h, y, k, b, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folds = hpstrat_folds(h, y, k=k, n_bins=b, seed=seed)
    sizes = np.bincount(folds, minlength=k)
    assert sizes.max() - sizes.min() <= 1
    bins = homophily_bins(np.array(h, float), n_bins=b)
    y = np.array(y)
    for key in set(zip(bins.tolist(), y.tolist())):
        members = (bins == key[0]) & (y == key[1])
        counts = np.bincount(folds[members], minlength=k)
        assert counts.max() - counts.min() <= 1
    # per class too (a class is a union of strata dealt consecutively)
    for c in np.unique(y):
        counts = np.bincount(folds[y == c], minlength=k)
        assert counts.max() - counts.min() <= len(np.unique(bins[y == c]))


@settings(max_examples=30, deadline=None)
@given(graph_cases())
def test_same_seed_or_its_generator_gives_the_same_folds(case):
    h, y, k, b, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(hpstrat_folds(h, y, k=k, n_bins=b, seed=seed), hpstrat_folds(h, y, k=k, n_bins=b, seed=seed))
        np.testing.assert_array_equal(hpstrat_folds(h, y, k=k, n_bins=b, seed=seed),
                                      hpstrat_folds(h, y, k=k, n_bins=b, seed=np.random.default_rng(seed)))


def test_other_seeds_give_other_folds():
    rng = np.random.default_rng(5)
    h, y = rng.random(200), rng.integers(0, 4, 200)
    distinct = {tuple(hpstrat_folds(h, y, k=4, seed=s)) for s in range(20)}
    assert len(distinct) == 20


def test_seed_is_portable_golden_value():
    # the same seed gives the same folds on every machine (numpy's PCG64 stream is platform-independent):
    # the literal folds were recorded once (2026-12-01) and pin the algorithm, not only fast == reference
    rng = np.random.default_rng(123)
    h, y = rng.random(20), rng.integers(0, 3, 20)
    golden = [2, 0, 0, 1, 2, 1, 2, 1, 0, 3, 0, 3, 2, 2, 0, 3, 3, 3, 1, 1]
    assert hpstrat_folds(h, y, k=4, seed=7).tolist() == golden
    assert hpstrat_folds_reference(h, y, 4, seed=7).tolist() == golden
    assert not np.array_equal(hpstrat_folds(h, y, k=4, seed=7), hpstrat_folds(h, y, k=4, seed=8))


def test_no_global_rng_state_touched():
    state = np.random.get_state()[1].copy()
    hpstrat_folds(np.random.default_rng(0).random(50), np.arange(50) % 3, k=4, seed=1)
    random_folds(np.arange(50) % 3, k=4, seed=1)
    stratified_folds(np.arange(50) % 3, k=4, seed=1)
    np.testing.assert_array_equal(state, np.random.get_state()[1])


def test_all_isolated_splits_by_class_and_says_so():
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    with pytest.warns(UserWarning, match="every node is isolated"):
        folds = hpstrat_folds(np.full(9, np.nan), y, k=3, seed=0)
    for c in range(3):
        assert sorted(folds[y == c]) == [0, 1, 2]


def test_random_and_stratified_match_sklearn():
    from sklearn.model_selection import KFold, StratifiedKFold

    y = np.arange(40) % 4
    folds = stratified_folds(y, k=4, seed=3)
    for i, (_, test) in enumerate(StratifiedKFold(4, shuffle=True, random_state=3).split(y, y)):
        assert (folds[test] == i).all()
    folds = random_folds(y, k=4, seed=3)
    for i, (_, test) in enumerate(KFold(4, shuffle=True, random_state=3).split(y)):
        assert (folds[test] == i).all()


def test_make_folds_dispatch_and_unknown_method():
    y, h = np.arange(12) % 2, np.linspace(0, 1, 12)
    np.testing.assert_array_equal(make_folds("hpstrat", h, y, k=3, seed=1), hpstrat_folds(h, y, k=3, seed=1))
    with pytest.raises(ValueError, match=r"method must be one of \('random', 'stratified', 'hpstrat', 'degree', 'placebo', 'covariate'\); got 'kfold'"):
        make_folds("kfold", h, y, k=3)


def test_rounds_and_masks_follow_the_convention():
    folds = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    rounds = fold_rounds(folds, k=4)
    for i, (train, val, test) in enumerate(rounds):
        assert set(folds[test]) == {i} and set(folds[val]) == {(i + 1) % 4}
        assert set(folds[train]) == set(range(4)) - {i, (i + 1) % 4}
    train_m, val_m, test_m = fold_masks(folds, k=4)
    assert train_m.shape == (8, 4) and train_m.dtype == torch.bool
    assert (train_m.int() + val_m.int() + test_m.int() == 1).all()
    for i, (train, val, test) in enumerate(rounds):
        assert torch.equal(torch.nonzero(test_m[:, i]).view(-1), torch.as_tensor(test))
        assert torch.equal(torch.nonzero(val_m[:, i]).view(-1), torch.as_tensor(val))


@pytest.mark.parametrize("call, message", [
    (lambda: hpstrat_folds([0.5] * 10, [0] * 10, k=2), r"k=2 is too small.*must be >= 3"),
    (lambda: hpstrat_folds([0.5] * 4, [0] * 4, k=5), r"k=5 is larger than the number of nodes n=4"),
    (lambda: hpstrat_folds([0.5] * 4, [0] * 4, k=3.0), r"k must be an integer >= 3; got 3.0"),
    (lambda: hpstrat_folds([0.5] * 4, [0] * 4, k=3, n_bins=0), r"n_bins must be an integer >= 1; got 0"),
    (lambda: hpstrat_folds([0.5] * 4, [0, 1, -2, 0], k=3), r"y must hold non-negative class labels 0..C-1; got -2"),
    (lambda: hpstrat_folds([0.5] * 4, [0, 1, 0.5, 0], k=3), r"non-integer value 0.5"),
    (lambda: hpstrat_folds([0.5] * 4, [0, 1, np.nan, 0], k=3), r"y contains NaN"),
    (lambda: hpstrat_folds([0.5] * 3, [0, 1, 1, 0], k=3), r"homophily must be a 1-D array with one value per node \(length 4\)"),
    (lambda: hpstrat_folds([0.5, 2, 0, 0], [0, 1, 1, 0], k=3), r"homophily values must lie in \[0, 1\]"),
    (lambda: hpstrat_folds([0.5] * 4, [0, 1, 1, 0], k=3, seed=-1), r"seed must be a non-negative integer"),
    (lambda: hpstrat_folds([], [], k=3), r"y is empty"),
    (lambda: random_folds([0, 1, 0, 1], k=2), r"k=2 is too small"),
    (lambda: stratified_folds([0, 1, 0, 1], k=3), r"k=3 is larger than the size of every class"),
    (lambda: fold_rounds([0, 1, 3], k=3), r"folds must hold fold ids in 0..2"),
    (lambda: HomophilyStratifiedKFold(n_splits=1), r"requires at least one train/test split .* got n_splits=1"),
    (lambda: HomophilyStratifiedKFold(n_bins=0), r"n_bins must be an integer >= 1"),
    (lambda: list(HomophilyStratifiedKFold(3).split(np.zeros(3), [0, 1, 0])), r"groups \(the node homophily"),
    (lambda: HpStratSplit(k=1), r"k=1 is too small: a round needs a train, a validation and a test fold, "
                                r"so k must be >= 3"),
])
def test_bad_input_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sklearn_splitter_matches_hpstrat_and_works_with_cross_val_score():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(0)
    X, y, h = rng.normal(size=(60, 3)), np.arange(60) % 3, rng.random(60)
    cv = HomophilyStratifiedKFold(n_splits=4, shuffle=True, random_state=5)
    assert repr(cv) == "HomophilyStratifiedKFold(n_bins=10, n_splits=4, random_state=5, shuffle=True)"
    folds = hpstrat_folds(h, y, k=4, seed=5)
    for i, (train, test) in enumerate(cv.split(X, y, groups=h)):
        np.testing.assert_array_equal(test, np.flatnonzero(folds == i))
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == 60
    scores = cross_val_score(LogisticRegression(), X, y, groups=h, cv=cv)
    assert scores.shape == (4,)
    unshuffled = [t.tolist() for _, t in HomophilyStratifiedKFold(2, shuffle=False).split(X[:6], y[:6], h[:6])]
    assert sorted(sum(unshuffled, [])) == list(range(6))


def test_unshuffled_splitter_deals_each_stratum_in_index_order():
    rng = np.random.default_rng(1)
    y, h = rng.integers(0, 3, 90), rng.random(90)
    h[:4] = np.nan
    folds = HomophilyStratifiedKFold(4, n_bins=5, shuffle=False).fold_ids(y, h)
    bins = bins_oracle(h, 5)
    dealt = 0  # nodes dealt before the stratum: it starts at fold dealt mod k (HpStrat, Algorithm A.1)
    for b in range(6):
        for c in range(3):
            members = np.flatnonzero((bins == b) & (y == c))  # index order, no shuffle
            expected = (dealt + np.arange(members.size)) % 4
            np.testing.assert_array_equal(folds[members], expected)
            dealt += members.size
    with pytest.raises(ValueError, match=r"groups must be a 1-D array with one value per node \(length 90\)"):
        HomophilyStratifiedKFold(4, shuffle=False).fold_ids(y, h[:50])
    with pytest.raises(ValueError, match=r"groups values must lie in \[0, 1\]"):
        HomophilyStratifiedKFold(4, shuffle=False).fold_ids(y, h + 2)


def test_pyg_transform_writes_multi_split_masks():
    from torch_geometric.data import Data

    ei = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    data = HpStratSplit(k=3, seed=0)(Data(edge_index=ei, y=torch.tensor([0, 0, 1, 1, 0, 1]), num_nodes=6))
    assert data.train_mask.shape == data.val_mask.shape == data.test_mask.shape == (6, 3)
    assert (data.train_mask.int() + data.val_mask.int() + data.test_mask.int() == 1).all()
    assert data.fold.tolist() == hpstrat_folds(data.homophily.numpy(), data.y, k=3, seed=0).tolist()


@pytest.mark.parametrize("scale, n_bins", [(1, 10), (10**9, 10), (10**9, 10**9), (10**12, 10**9)])
def test_any_number_of_strata_gives_the_sorted_deal(scale, n_bins):
    # up to 2**15 strata: a radix sort; more: a merge sort; a stratum id past int64: a lexsort
    rng = np.random.default_rng(3)
    h = rng.random(40)
    h[:3] = np.nan
    small = rng.integers(0, 4, 40)
    order = np.lexsort((np.random.default_rng(5).permutation(40), small, bins_oracle(h, n_bins)))
    expected = np.empty(40, dtype=np.int64)
    expected[order] = np.arange(40) % 4  # sort by (bin, class, shuffled position), deal rank mod k
    np.testing.assert_array_equal(hpstrat_folds(h, small * scale, k=4, n_bins=n_bins, seed=5), expected)


def test_hpstrat_split_is_a_registered_pyg_transform():
    """HpStratSplit is a BaseTransform (composable with T.Compose, registered as data.hpstrat_split) and names
    what a Data without labels lacks."""
    import torch
    import torch_geometric.transforms as T
    from torch_geometric.data import Data
    from torch_geometric.transforms import BaseTransform

    assert isinstance(HpStratSplit(), BaseTransform)
    assert repr(HpStratSplit(k=5, n_bins=3, seed=1)) == ("HpStratSplit(k=5, n_bins=3, seed=1, key='y', covariate=None, "
                                                         "binning='uniform')")
    ei = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 5, 4]])
    data = T.Compose([T.ToUndirected(), HpStratSplit(k=3)])(Data(edge_index=ei, y=torch.tensor([0, 0, 1, 1, 0, 1]),
                                                                  num_nodes=6))
    assert data.train_mask.shape == (6, 3) and data.fold.tolist() == HpStratSplit(k=3)(data.clone()).fold.tolist()
    with pytest.raises(ValueError, match="data.y is None"):
        HpStratSplit()(Data(edge_index=ei, num_nodes=6))
