"""Edge split without leakage, negatives, and link-prediction training (Part II, Sections 5-6)."""
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_book.part2.linkpred import (LINK_PROTOCOL, EdgeSplit, edge_split, gcn_adjacency, run_link_prediction,
                                          sample_negative_pairs)
from hpstrat_lite.data.synthetic import watts_strogatz_graph
from hpstrat_lite.protocol import Execution


def _p(**changes):
    """:data:`LINK_PROTOCOL` with ``changes``."""
    return LINK_PROTOCOL.replace(**changes)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _set(pairs):
    p = pairs.numpy()
    return set(zip(p[0].tolist(), p[1].tolist()))


def _sbm(n=240, blocks=4, p_in=0.12, p_out=0.004, dim=16, seed=0):
    """Easy homophilous graph: dense blocks, features = noisy block indicator."""
    rng = np.random.default_rng(seed)
    block = np.arange(n) % blocks
    prob = np.where(block[:, None] == block[None, :], p_in, p_out)
    upper = np.triu(rng.random((n, n)) < prob, 1)
    u, v = np.nonzero(upper)
    ei = torch.from_numpy(np.stack([np.r_[u, v], np.r_[v, u]]))
    x = np.eye(blocks)[block] @ rng.standard_normal((blocks, dim)) + 0.5 * rng.standard_normal((n, dim))
    return Data(x=torch.tensor(x, dtype=torch.float32), edge_index=ei, num_nodes=n)


@pytest.fixture(scope="module")
def ws_split():
    ei = watts_strogatz_graph(200, k=4, beta=0.5, seed=0)
    return ei, edge_split(ei, 200, seed=0)


def test_edge_split_sizes(ws_split):
    _, s = ws_split
    assert [s[k].shape[1] for k in ("train_pos", "val_pos", "test_pos")] == [280, 40, 80]
    for part in ("train", "val", "test"):
        assert s[f"{part}_neg"].shape == s[f"{part}_pos"].shape  # as many negatives as positives
        for kind in ("pos", "neg"):
            p = s[f"{part}_{kind}"]
            assert p.dtype == torch.long and (p[0] < p[1]).all()


def test_edge_split_partitions_the_edges_without_leakage(ws_split):
    ei, s = ws_split
    edges = {(min(u, v), max(u, v)) for u, v in _set(ei)}
    tr, va, te = (_set(s[k]) for k in ("train_pos", "val_pos", "test_pos"))
    assert tr | va | te == edges and len(tr) + len(va) + len(te) == len(edges)
    mp = _set(s["train_edge_index"])
    assert mp == tr | {(v, u) for u, v in tr}  # message passing: train edges, both directions
    for u, v in va | te:  # no validation / test edge in the message-passing graph, either way
        assert (u, v) not in mp and (v, u) not in mp


def test_negatives_are_distinct_non_edges(ws_split):
    ei, s = ws_split
    edges = _set(ei)
    negs = [_set(s[k]) for k in ("train_neg", "val_neg", "test_neg")]
    allneg = set().union(*negs)
    assert len(allneg) == sum(len(x) for x in negs)  # no pair twice, within or across splits
    assert all(u != v and (u, v) not in edges for u, v in allneg)


def test_edge_split_is_seeded(ws_split):
    ei, s = ws_split
    again = edge_split(ei, 200, seed=0)
    other = edge_split(ei, 200, seed=1)
    assert all(torch.equal(s[k], again[k]) for k in s if k != "num_nodes")
    assert not torch.equal(s["test_pos"], other["test_pos"])
    assert not torch.equal(s["test_neg"], other["test_neg"])


@pytest.mark.parametrize("n,num_edges", [(30, 300), (3000, 200)])  # enumerated / rejection path
def test_sample_negative_pairs_both_paths(n, num_edges):
    rng = np.random.default_rng(0)
    a, b = np.triu_indices(n, 1)
    pick = rng.choice(a.size, num_edges, replace=False)
    excl = np.sort(a[pick].astype(np.int64) * n + b[pick])
    want = 100
    neg = sample_negative_pairs(excl, n, want, np.random.default_rng(1))
    keys = neg[0] * n + neg[1]
    assert neg.shape == (2, want) and (neg[0] < neg[1]).all()
    assert np.unique(keys).size == want and not np.isin(keys, excl).any()


def test_sample_negative_pairs_uniform_on_small_graph():
    # 4 nodes, edges (0,1),(2,3): four allowed pairs, each should be drawn about equally
    excl = np.array([0 * 4 + 1, 2 * 4 + 3])
    rng = np.random.default_rng(0)
    counts = {}
    for _ in range(400):
        u, v = sample_negative_pairs(excl, 4, 1, rng)[:, 0]
        counts[(u, v)] = counts.get((u, v), 0) + 1
    assert set(counts) == {(0, 2), (0, 3), (1, 2), (1, 3)}
    assert min(counts.values()) > 60


def test_gcn_adjacency_is_symmetric_normalised():
    ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    a = gcn_adjacency(ei, 3).matrix.to_dense()
    deg = torch.tensor([2.0, 3.0, 2.0])
    ref = (torch.eye(3) + torch.zeros(3, 3).index_put_((ei[0], ei[1]), torch.ones(4))) / torch.sqrt(
        deg[:, None] * deg[None, :])
    assert torch.allclose(a, ref)


def test_link_prediction_beats_chance_on_easy_graph():
    data = _sbm()
    rnd = run_link_prediction(data, encoder="random", seed=0)
    assert abs(rnd["test_auc"] - 0.5) < 0.1 and rnd["best_epoch"] == 0
    for enc in ("gcn", "mlp"):
        r = run_link_prediction(data, encoder=enc, seed=0, protocol=_p(max_epochs=60, patience=30, lr=0.01))
        assert r["test_auc"] > 0.8, (enc, r)
        assert 1 <= r["best_epoch"] <= r["epochs"] <= 60
        assert r["epochs"] - r["best_epoch"] <= 30
    r = run_link_prediction(data, encoder="gcn", seed=0, decoder="mlp",
                            protocol=_p(max_epochs=60, lr=0.01, feature_norm="standard", num_layers=3, dropout=0.2))
    assert r["test_auc"] > 0.7


def test_link_prediction_seeded_and_leaves_global_rng_alone():
    data = _sbm(n=120)
    state = torch.get_rng_state()
    a = run_link_prediction(data, encoder="gcn", seed=3, protocol=_p(max_epochs=15, dropout=0.3), history=True)
    assert torch.equal(state, torch.get_rng_state())
    b = run_link_prediction(data, encoder="gcn", seed=3, protocol=_p(max_epochs=15, dropout=0.3), history=True)
    assert a["history"] == b["history"] and a["test_auc"] == b["test_auc"]
    assert len(a["history"]["val_auc"]) == a["epochs"]
    c = run_link_prediction(data, encoder="gcn", seed=4, protocol=_p(max_epochs=15, dropout=0.3))
    assert c["split_seed"] == 4 and c["test_auc"] != a["test_auc"]


def test_sparse_and_dense_features_agree():
    data = _sbm(n=120)
    x = data.x.clone()
    x[x.abs() < 0.8] = 0  # a sparse-ish matrix
    dense = Data(x=x, edge_index=data.edge_index, num_nodes=120)
    sparse = Data(x=x.to_sparse_csr(), edge_index=data.edge_index, num_nodes=120)
    for enc in ("mlp", "gcn"):
        a = run_link_prediction(dense, encoder=enc, seed=0, protocol=_p(max_epochs=20, feature_norm="row"))
        b = run_link_prediction(sparse, encoder=enc, seed=0, protocol=_p(max_epochs=20, feature_norm="row"))
        assert a["best_epoch"] == b["best_epoch"]
        assert a["test_auc"] == pytest.approx(b["test_auc"], abs=2e-3)


def test_reusing_a_split():
    data = _sbm(n=120)
    s = edge_split(data.edge_index, 120, seed=9)
    r = run_link_prediction(data, encoder="mlp", seed=0, split=s, protocol=_p(max_epochs=5))
    assert r["num_test"] == s["test_pos"].shape[1]
    with pytest.raises(ValueError, match="split was made for num_nodes=120"):
        run_link_prediction(_sbm(n=100), encoder="mlp", split=s)


@pytest.mark.parametrize("kwargs,match", [
    (dict(num_nodes=1), "num_nodes must be an integer >= 2"),
    (dict(val_ratio=0.0), r"val_ratio must be a number in \(0, 1\)"),
    (dict(test_ratio=1.2), r"test_ratio must be a number in \(0, 1\)"),
    (dict(val_ratio=0.5, test_ratio=0.5), "val_ratio \\+ test_ratio must be < 1"),
])
def test_edge_split_bad_inputs(kwargs, match):
    ei = watts_strogatz_graph(20, k=4, beta=0.5)
    args = {"num_nodes": 20, **kwargs}
    with pytest.raises(ValueError, match=match):
        edge_split(ei, **args)


def test_edge_split_too_few_edges_or_non_edges():
    with pytest.raises(ValueError, match="too few for"):
        edge_split(torch.tensor([[0, 1], [1, 2]]), 3)
    a, b = np.triu_indices(6, 1)  # complete graph: no negative pair exists
    with pytest.raises(ValueError, match="cannot draw .* negative pairs"):
        edge_split(torch.from_numpy(np.stack([a, b])), 6)
    with pytest.raises(ValueError, match="node ids"):
        edge_split(torch.tensor([[0, 7], [1, 2]]), 3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(encoder="gat"), "encoder must be one of"),
    (dict(decoder="bilinear"), "decoder must be one of"),
    (dict(protocol=_p(feature_norm="l2")), "feature_norm must be one of"),
    (dict(protocol=_p(dropout=1.0)), r"dropout must be a number in \[0, 1\)"),
    (dict(protocol=_p(lr=0.0)), "lr must be a number > 0"),
    (dict(protocol=_p(hidden=0)), "hidden must be an integer >= 1"),
    (dict(protocol=_p(patience=1.5)), "patience must be None or an integer >= 1"),
    (dict(protocol={"max_epochs": 5}), r"protocol must be a hpstrat_lite.protocol.Protocol .*got dict"),
    (dict(execution="cpu"), r"execution must be a hpstrat_lite.protocol.Execution .*got str"),
    (dict(execution=Execution(precision="bfloat16")), "execution.precision must be 'float32' for link prediction"),
    (dict(split=(0.1, 0.2)), r"split must be a split made by edge_split \(a dict\) or an EdgeSplit .*got tuple"),
])
def test_run_link_prediction_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_link_prediction(_sbm(n=60), **kwargs)
    with pytest.raises(ValueError, match="no node features x"):
        run_link_prediction(Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=5), encoder="gcn")


def test_link_prediction_trains_with_freed_memory_reused_and_the_same_numbers(monkeypatch):
    # the training loop runs inside train.reuse_freed_memory (glibc keeps freed activations mapped),
    # and where the memory comes from does not change a number
    from hpstrat_book.part2 import linkpred
    from hpstrat_lite.engine import train

    data = _sbm()
    calls = []
    real = train.reuse_freed_memory

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(linkpred, "reuse_freed_memory", spy)
    kw = dict(encoder="gcn", seed=0, protocol=_p(max_epochs=8, patience=8), history=True)
    runs = {}
    for flag in (False, True, "auto"):
        runs[flag] = run_link_prediction(data, execution=Execution(device="cpu", reuse_freed_memory=flag), **kw)
    assert calls == [(False,), (True,), (True,)]  # "auto": on, since this trains on CPU
    for key in ("val_auc", "test_auc", "best_epoch", "history"):
        assert runs[False][key] == runs[True][key], key


# ---------------------------------------------------------------------------------------------
# HGCN-style pieces and trivial baselines
# ---------------------------------------------------------------------------------------------

def test_shuffle_feature_rows_permutes_rows_only():
    import torch
    from torch_geometric.data import Data

    from hpstrat_book.part2.linkpred import shuffle_feature_rows

    x = torch.arange(20, dtype=torch.float32).reshape(5, 4)
    data = Data(x=x, edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=5)
    out, perm = shuffle_feature_rows(data, seed=3)
    assert sorted(perm.tolist()) == list(range(5)) and perm.tolist() != list(range(5))
    assert torch.equal(out.x, x[torch.from_numpy(perm)])           # whole rows moved, columns untouched
    assert out.edge_index is data.edge_index and torch.equal(data.x, x)
    sparse, p2 = shuffle_feature_rows(Data(x=x.to_sparse_csr(), num_nodes=5), seed=3)
    assert torch.equal(sparse.x.to_dense(), out.x) and (p2 == perm).all()


def test_trivial_baselines_on_a_tiny_graph_with_a_known_answer():
    import numpy as np

    from hpstrat_book.part2.linkpred import degree_product_scores, feature_cosine_scores, pair_auc, signed_rowsum

    # star 0-1, 0-2, 0-3 on the training graph: degrees 3, 1, 1, 1, 0
    train = np.array([[0, 0, 0], [1, 2, 3]])
    pos, neg = np.array([[0], [4]]), np.array([[1], [4]])
    assert degree_product_scores(train, 5, pos)[0] == 0.0
    assert list(degree_product_scores(train, 5, np.array([[0, 1], [1, 2]]))) == [3.0, 1.0]
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    cos = feature_cosine_scores(x, np.array([[0, 0], [1, 2]]))
    assert np.allclose(cos, [1.0, 0.0])
    # signed row-sum flips the sign of a row with a negative sum: cos(0, 3) changes sign
    pairs = np.array([[0], [3]])
    assert feature_cosine_scores(x, pairs, feature_norm="signed_rowsum")[0] == pytest.approx(np.sqrt(0.5))
    assert signed_rowsum(x)[3].tolist() == [0.5, 0.5]
    assert pair_auc([0.9, 0.8], [0.1, 0.2]) == 1.0 and pair_auc([0.1], [0.9]) == 0.0


def test_fermi_dirac_decoder_and_hgcn_split():
    from hpstrat_lite.data.synthetic import make_ws1000
    from hpstrat_book.part2.linkpred import HGCN_SPLIT, run_link_prediction

    data = make_ws1000(1.0, seed=0)
    r = run_link_prediction(data, encoder="mlp", seed=0, split=HGCN_SPLIT, decoder="fd", out=16,
                            protocol=LINK_PROTOCOL.replace(feature_norm="signed_rowsum", max_epochs=5, hidden=16),
                            execution=Execution(device="cpu"))
    assert (r["num_train"], r["num_val"], r["num_test"]) == (1700, 100, 200)  # 85 / 5 / 10 of 2000 edges
    assert 0.0 <= r["test_auc"] <= 1.0 and r["decoder"] == "fd"


def test_the_protocol_reaches_the_run_and_patience_none_trains_every_epoch():
    data = _sbm(n=120)
    full = run_link_prediction(data, encoder="mlp", seed=0, protocol=_p(max_epochs=7, patience=None), history=True)
    assert full["epochs"] == 7 and len(full["history"]["loss"]) == 7
    early = run_link_prediction(data, encoder="mlp", seed=0, protocol=_p(max_epochs=40, patience=1, lr=0.5))
    assert early["epochs"] < 40 and early["epochs"] - early["best_epoch"] == 1  # stopped by patience 1
    s = run_link_prediction(data, encoder="random", seed=1, split=EdgeSplit(val_ratio=0.2, test_ratio=0.3),
                            split_seed=5)
    edges = s["num_train"] + s["num_val"] + s["num_test"]
    assert s["split_seed"] == 5 and s["num_test"] == int(np.floor(0.3 * edges))
    assert EdgeSplit(0.2, 0.3).name == "edge split 50/20/30"
