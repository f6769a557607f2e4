import numpy as np
import pytest
import torch

from hpstrat_lite.core.graph_measures import edge_homophily
from hpstrat_lite.data.synthetic import csbm_edge_homophily, make_csbm


@pytest.mark.parametrize("lam", [-1.5, 0.0, 1.5])
def test_measured_edge_homophily_and_degree_follow_lam(lam):
    data = make_csbm(2000, lam=lam, mu=1.0, avg_degree=5, seed=1)
    h = edge_homophily(data.edge_index, data.y)
    assert h == pytest.approx(csbm_edge_homophily(lam, avg_degree=5), abs=0.03)
    assert data.edge_index.shape[1] / data.num_nodes == pytest.approx(5, rel=0.1)
    assert np.bincount(data.y.numpy()).tolist() == [1000, 1000]


@pytest.mark.parametrize("mu", [0.0, 1.0, 4.0])
def test_measured_feature_signal_follows_mu(mu):
    """The class-mean difference along u is 2 sqrt(mu / n) |u|, plus noise of standard deviation
    2 / sqrt(n F): sqrt(mu) is recovered within a few noise widths."""
    n = 2000
    data = make_csbm(n, lam=0.0, mu=mu, seed=2)
    x, y, u = data.x.double().numpy(), data.y.numpy(), data.csbm_u.numpy()
    proj = (x[y == 1].mean(0) - x[y == 0].mean(0)) @ u / np.linalg.norm(u)
    root_mu = proj * np.sqrt(n) / (2 * np.linalg.norm(u))
    noise = 1 / np.sqrt(x.shape[1]) / np.linalg.norm(u)  # std of root_mu's estimate
    assert root_mu == pytest.approx(np.sqrt(mu), abs=4 * noise)


def test_seed_fixes_the_graph_and_knobs_change_it():
    a, b = make_csbm(300, lam=1.0, mu=2.0, seed=3), make_csbm(300, lam=1.0, mu=2.0, seed=3)
    assert np.array_equal(a.edge_index, b.edge_index) and np.array_equal(a.x, b.x)
    assert not torch.equal(make_csbm(300, lam=1.0, mu=2.0, seed=4).edge_index, a.edge_index)
    assert a.name == "cSBM_lam1_mu2_s3" and a.x.shape == (300, 150)


@pytest.mark.parametrize("kwargs, match", [({"lam": 3.0}, "lam"), ({"mu": -1.0}, "mu"), ({"avg_degree": 0}, "avg_degree"),
                                           ({"n": 2}, "n"), ({"num_features": 0}, "num_features")])
def test_bad_knobs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_csbm(**{"n": 100, **kwargs})
