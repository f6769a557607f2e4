"""The scikit-learn cross-validators by contract, and the PyG transform's key= and covariate=."""
import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import BaseCrossValidator, GridSearchCV, check_cv, cross_validate

from hpstrat_lite import CovariateStratifiedKFold, HomophilyStratifiedKFold, HpStratSplit, hpstrat_folds
from hpstrat_lite.core.covariates import covariate_bins, covariate_folds


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), np.arange(n) % 3, rng.random(n)


def _tests(cv, X, y, groups):
    return [test.tolist() for _, test in cv.split(X, y, groups)]


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_a_scikit_learn_cross_validator(cls):
    cv = cls(n_splits=3, shuffle=True, random_state=0)
    assert isinstance(cv, BaseCrossValidator) and check_cv(cv) is cv and cv.get_n_splits() == 3
    assert cv.get_metadata_routing().consumes("split", ["groups"]) == {"groups"}
    X, y, h = _data()
    tests = _tests(cv, X, y, h)
    assert sorted(sum(tests, [])) == list(range(60)) and len(tests) == 3


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_random_state_has_scikit_learn_semantics(cls):
    X, y, h = _data(300)
    state = np.random.get_state()[1].copy()
    fresh = cls(n_splits=4, shuffle=True)
    assert _tests(fresh, X, y, h) != _tests(fresh, X, y, h)  # None: new folds on every call
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # numpy's global state untouched
    seeded = cls(n_splits=4, shuffle=True, random_state=7)
    assert _tests(seeded, X, y, h) == _tests(seeded, X, y, h)
    instance = cls(n_splits=4, shuffle=True, random_state=np.random.RandomState(3))
    first, second = _tests(instance, X, y, h), _tests(instance, X, y, h)
    assert first != second  # an instance is drawn from: successive calls differ...
    assert _tests(cls(n_splits=4, shuffle=True, random_state=np.random.RandomState(3)), X, y, h) == first  # ...reproducibly
    generator = cls(n_splits=4, shuffle=True, random_state=np.random.default_rng(3))
    assert _tests(generator, X, y, h) != _tests(generator, X, y, h)


def test_an_int_random_state_gives_hpstrat_folds_of_that_seed():
    X, y, h = _data()
    folds = hpstrat_folds(h, y, k=4, seed=5)
    assert _tests(HomophilyStratifiedKFold(n_splits=4, shuffle=True, random_state=5), X, y, h) == \
        [np.flatnonzero(folds == i).tolist() for i in range(4)]
    c = np.random.default_rng(1).lognormal(size=60)
    folds = covariate_folds(c, y, k=4, n_bins=5, binning="quantile", seed=5)
    cv = CovariateStratifiedKFold(n_splits=4, n_bins=5, binning="quantile", shuffle=True, random_state=5)
    assert _tests(cv, X, y, c) == [np.flatnonzero(folds == i).tolist() for i in range(4)]


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_checks_in_init_and_split(cls):
    X, y, h = _data()
    with pytest.raises(ValueError, match="Setting a random_state has no effect since shuffle is False"):
        cls(shuffle=False, random_state=0)
    with pytest.raises(ValueError, match=r"random_state must be None, a non-negative integer.*got -1"):
        cls(shuffle=True, random_state=-1)
    with pytest.raises(ValueError, match=r"shuffle must be True or False; got 'yes'"):
        cls(shuffle="yes")
    with pytest.raises(ValueError, match=r"requires at least one train/test split .* got n_splits=1"):
        cls(n_splits=1)
    with pytest.raises(ValueError, match=r"n_splits must be an integer >= 2; got 2.5"):
        cls(n_splits=2.5)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[10, 60, 60\]"):
        list(cls().split(X[:10], y, h))
    with pytest.raises(ValueError, match=r"groups \(the .*\) is required"):
        list(cls().split(X, y))
    with pytest.raises(ValueError, match=r"n_splits=4 greater than the number of samples: n_samples=3"):
        list(cls().split(X[:3], y[:3], h[:3]))


def test_covariate_splitter_checks_binning_and_covariate():
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"binning must be one of \('uniform', 'quantile'\); got 'log'"):
        CovariateStratifiedKFold(binning="log")
    c = np.random.default_rng(0).random(60)
    c[4] = np.inf
    with pytest.raises(ValueError, match="groups contains an infinite value at node 4"):
        list(CovariateStratifiedKFold().split(X, y, c))


def test_unshuffled_covariate_splitter_deals_each_stratum_in_index_order():
    rng = np.random.default_rng(2)
    X, y, c = np.zeros((80, 1)), rng.integers(0, 2, 80), rng.exponential(size=80)
    c[:3] = np.nan
    cv = CovariateStratifiedKFold(n_splits=3, n_bins=4, binning="quantile", shuffle=False)
    folds = cv.fold_ids(y, c)
    bins = covariate_bins(c, n_bins=4, binning="quantile")
    dealt = 0
    for b in range(5):
        for label in range(2):
            members = np.flatnonzero((bins == b) & (y == label))
            np.testing.assert_array_equal(folds[members], (dealt + np.arange(members.size)) % 3)
            dealt += members.size
    assert _tests(cv, X, y, c) == _tests(cv, X, y, c)


@pytest.mark.parametrize("routing", [False, True])
def test_cross_validate_and_grid_search_with_metadata_routing_on_and_off(routing):
    X, y, h = _data(90)
    cv = HomophilyStratifiedKFold(n_splits=3, shuffle=True, random_state=1)
    folds = hpstrat_folds(h, y, k=3, seed=1)
    expected = [np.flatnonzero(folds == i).tolist() for i in range(3)]
    with sklearn.config_context(enable_metadata_routing=routing):
        kwargs = {"params": {"groups": h}} if routing else {"groups": h}
        result = cross_validate(LogisticRegression(), X, y, cv=cv, return_indices=True, **kwargs)
        assert [t.tolist() for t in result["indices"]["test"]] == expected
        search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=cv).fit(X, y, groups=h)
        assert search.n_splits_ == 3 and len(search.cv_results_["split2_test_score"]) == 2
        with pytest.raises(ValueError, match=r"groups \(the node homophily"):
            cross_validate(LogisticRegression(), X, y, cv=cv)
    assert not sklearn.get_config()["enable_metadata_routing"]


def test_covariate_splitter_with_routing():
    X, y, _ = _data(90)
    degree = np.random.default_rng(4).integers(1, 40, 90)
    cv = CovariateStratifiedKFold(n_splits=3, binning="quantile", shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        result = cross_validate(LogisticRegression(), X, y, cv=cv, params={"groups": np.log1p(degree)},
                                return_indices=True)
    folds = covariate_folds(np.log1p(degree), y, k=3, binning="quantile", seed=0)
    assert [t.tolist() for t in result["indices"]["test"]] == [np.flatnonzero(folds == i).tolist() for i in range(3)]


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_scikit_learn_conventions_repr_defaults_and_n_splits(cls):
    cv = cls()
    assert not cv.shuffle and cv.random_state is None and cv.n_splits == 4  # StratifiedKFold's shuffle default
    assert repr(cls(n_splits=2)).startswith(f"{cls.__name__}(") and "n_splits=2" in repr(cls(n_splits=2))
    assert cls(n_splits=5).get_n_splits() == 5 and cls(n_splits=5).get_n_splits(np.zeros(3), [0] * 3) == 5
    X, y, h = _data(30)
    assert _tests(cls(), X, y, h) == _tests(cls(), X, y, h)  # unshuffled: deterministic
    two = _tests(cls(n_splits=2, shuffle=True, random_state=0), X, y, h)
    assert len(two) == 2 and sorted(sum(two, [])) == list(range(30))


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_labels_are_encoded_as_stratified_kfold_encodes_them(cls):
    X, y, h = _data(60)
    cv = cls(n_splits=3, shuffle=True, random_state=2)
    names = np.array(["ant", "bee", "cat"])[y]
    gaps = np.array([3, 10, 42])[y]
    assert _tests(cv, X, names, h) == _tests(cv, X, y, h) == _tests(cv, X, gaps, h) == _tests(cv, X, list(names), h)
    with pytest.raises(ValueError, match="Supported target types are: \\('binary', 'multiclass'\\). Got 'continuous'"):
        list(cv.split(X, h, h))
    with pytest.raises(ValueError, match="n_splits=3 cannot be greater than the number of members in each class"):
        list(cls(n_splits=3).split(X[:4], [0, 0, 1, 1], h[:4]))


@pytest.mark.parametrize("cls", [HomophilyStratifiedKFold, CovariateStratifiedKFold])
def test_small_class_warns_as_stratified_kfold(cls):
    X, _, h = _data(30)
    y = np.array(["a"] * 28 + ["b"] * 2)
    with pytest.warns(UserWarning, match=r"The least populated class in y has only 2 members, which is less "
                                         r"than n_splits=3\."):
        list(cls(n_splits=3).split(X, y, h))


def test_hpstrat_folds_and_covariate_folds_warn_on_a_small_class():
    _, _, h = _data(30)
    y = np.array([0] * 28 + [2] * 2)  # a gap: label 1 absent, not a class of size 0
    with pytest.warns(UserWarning, match=r"The least populated class in y has only 2 members, which is less than k=4\."):
        hpstrat_folds(h, y, k=4)
    with pytest.warns(UserWarning, match="which is less than k=4"):
        covariate_folds(h, y, k=4)


def test_cross_val_score_and_grid_search_with_string_labels():
    from sklearn.model_selection import cross_val_score

    X, y, h = _data(90)
    names = np.array(["1-low", "2-mid", "3-high"])[y]  # sorted as 0, 1, 2: the same strata, the same folds
    cv = HomophilyStratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    scores = cross_val_score(LogisticRegression(), X, names, cv=cv, groups=h)
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
    np.testing.assert_array_equal(scores, cross_val_score(LogisticRegression(), X, y, cv=cv, groups=h))
    search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=cv).fit(X, names, groups=h)
    assert search.n_splits_ == 3 and search.best_estimator_.classes_.tolist() == ["1-low", "2-mid", "3-high"]


def _graph():
    import torch
    from torch_geometric.data import Data

    ei = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6, 7, 8], [1, 0, 2, 1, 4, 3, 6, 5, 8, 7]])
    return Data(edge_index=ei, label=torch.tensor([0, 0, 1, 1, 0, 1, 1, 0, 1]), num_nodes=9)


def test_pyg_transform_reads_labels_from_key():
    data = HpStratSplit(k=3, seed=2, key="label")(_graph())
    assert data.fold.tolist() == hpstrat_folds(data.homophily.numpy(), data.label, k=3, seed=2).tolist()
    assert data.train_mask.shape == (9, 3)
    with pytest.raises(ValueError, match=r"data.y is None \(key='y'"):
        HpStratSplit(k=3)(_graph())
    with pytest.raises(ValueError, match=r"key must be the name of the attribute holding the node labels; got 3"):
        HpStratSplit(key=3)


def test_pyg_transform_stratifies_on_a_covariate():
    import torch

    data = _graph()
    data.score = torch.linspace(0, 1, 9)
    by_name = HpStratSplit(k=3, n_bins=3, key="label", covariate="score", binning="quantile", seed=4)(data.clone())
    expected = covariate_folds(data.score, data.label, k=3, n_bins=3, binning="quantile", seed=4)
    assert by_name.fold.tolist() == expected.tolist() and "homophily" not in by_name
    by_array = HpStratSplit(k=3, n_bins=3, key="label", covariate=data.score.numpy(), binning="quantile", seed=4)
    assert by_array(data.clone()).fold.tolist() == expected.tolist()
    assert "covariate='<array>'" in repr(by_array)
    quantile_h = HpStratSplit(k=3, n_bins=2, key="label", binning="quantile")(data.clone())
    assert quantile_h.fold.tolist() == covariate_folds(quantile_h.homophily.numpy(), data.label, k=3, n_bins=2,
                                                       binning="quantile", seed=0).tolist()
    with pytest.raises(ValueError, match=r"covariate='degree' names no attribute of data; node attributes: "):
        HpStratSplit(k=3, key="label", covariate="degree")(data)
    with pytest.raises(ValueError, match=r"covariate must be a 1-D array with one value per node \(length 9\)"):
        HpStratSplit(k=3, key="label", covariate=np.ones(4))(data)
    with pytest.raises(ValueError, match=r"binning must be one of"):
        HpStratSplit(binning="log")


def test_splitter_and_transform_agree_on_cora(data_root):
    """Real data: the splitter with the node homophily as groups gives HpStratSplit's folds; degree quantile
    strata keep each fold's degree distribution close to the graph's."""
    import torch
    from torch_geometric.utils import degree as node_degree

    from hpstrat_lite import load_dataset

    data = HpStratSplit(k=4, seed=3)(load_dataset("Cora", root=data_root))
    n = data.num_nodes
    cv = HomophilyStratifiedKFold(n_splits=4, shuffle=True, random_state=3)
    tests = list(cv.split(np.zeros(n), data.y.numpy(), data.homophily.numpy()))
    for i, (_, test) in enumerate(tests):
        np.testing.assert_array_equal(test, np.flatnonzero(data.fold.numpy() == i))
    deg = node_degree(data.edge_index[0], n).numpy()
    cv = CovariateStratifiedKFold(n_splits=4, binning="quantile", shuffle=True, random_state=0)
    means = [np.log1p(deg[test]).mean() for _, test in cv.split(np.zeros(n), data.y.numpy(), np.log1p(deg))]
    assert max(means) - min(means) < 0.05 * np.log1p(deg).mean()
    assert torch.equal(data.train_mask.sum(1) + data.val_mask.sum(1) + data.test_mask.sum(1),
                       torch.full((n,), 4))
