"""A user's graph: load_graph (.pt / .npz), as_graph on a Data, dense features at the API boundary,
and every evaluation (quality_table, run_experiment, dataset_summary) on a Data or a file."""
import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite import make_folds, node_homophily, quality_table
from hpstrat_lite.data.datasets import load_dataset
from hpstrat_lite.data.graphs import dataset_summary
from hpstrat_lite.data.normalize import simple_undirected
from hpstrat_lite.data.feature_layout import engine_features
from hpstrat_lite.data.graphs import as_graph, load_graph
from hpstrat_lite.protocol import Execution

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _graph(n=60, seed=0, features=8):
    """A small undirected simple graph (ring + random chords) with 3 classes; edges both ways, sorted."""
    rng = np.random.default_rng(seed)
    src = np.r_[np.arange(n), rng.integers(0, n, 2 * n)]
    dst = np.r_[(np.arange(n) + 1) % n, rng.integers(0, n, 2 * n)]
    ei = simple_undirected(torch.from_numpy(np.stack([src, dst])), n)
    y = torch.from_numpy(rng.integers(0, 3, n))
    x = torch.from_numpy(rng.normal(size=(n, features)).astype(np.float32))
    return Data(x=x, edge_index=ei, y=y, num_nodes=n)


def _messy(data, seed=1):
    """The same graph as a directed list: one direction of each edge, duplicates, self-loops, shuffled."""
    ei = data.edge_index
    one_way = ei[:, ei[0] < ei[1]]
    rng = np.random.default_rng(seed)
    flip = torch.from_numpy(rng.random(one_way.shape[1]) < 0.5)
    one_way = torch.where(flip, one_way.flip(0), one_way)
    dup = one_way[:, rng.integers(0, one_way.shape[1], 30)]
    loops = torch.arange(5).repeat(2, 1)
    messy = torch.cat([one_way, dup, loops], 1)
    messy = messy[:, torch.from_numpy(rng.permutation(messy.shape[1]))]
    return Data(x=data.x, edge_index=messy, y=data.y)


def test_directed_duplicated_data_gives_the_folds_of_its_simple_version():
    simple = _graph()
    messy = _messy(simple)
    g = as_graph(messy)
    assert torch.equal(g.edge_index, simple.edge_index)
    assert g.num_classes == 3 and g.x.layout == torch.strided and g.x.dtype == torch.float32
    h = node_homophily(simple.edge_index, simple.y)
    hg = node_homophily(g.edge_index, g.y, g.num_nodes, assume_simple=True)
    np.testing.assert_array_equal(h, hg)
    for method in ("random", "stratified", "hpstrat"):
        np.testing.assert_array_equal(make_folds(method, h, simple.y.numpy(), k=4, seed=3),
                                      make_folds(method, hg, g.y.numpy(), k=4, seed=3))
    q_messy = quality_table([messy], k=4, seeds=[0, 1])
    q_simple = quality_table(as_graph(simple, name=q_messy["dataset"].iloc[0]), k=4, seeds=[0, 1])
    pd.testing.assert_frame_equal(q_messy, q_simple)
    assert as_graph(g) is g  # a canonical graph is not normalised again


def test_labels_are_mapped_and_a_data_gets_a_stable_name():
    d = _graph()
    d.y = d.y * 10 + 5  # labels 5, 15, 25
    g = as_graph(d)
    assert g.y.tolist() == ((d.y - 5) // 10).tolist() and g.num_classes == 3
    assert g.name.startswith("graph-") and as_graph(_graph()).name != as_graph(_graph(seed=4)).name
    named = _graph()
    named.name = "mine"
    assert as_graph(named).name == "mine" and as_graph(named, name="other").name == "other"
    no_x = as_graph(Data(edge_index=d.edge_index, y=d.y, num_nodes=d.num_nodes))
    assert torch.equal(no_x.x, torch.eye(d.num_nodes))  # identity features


@pytest.mark.parametrize("layout", ["edges", "edge_index"])
@pytest.mark.parametrize("with_x", [True, False])
def test_load_graph_npz(tmp_path, layout, with_x):
    d = _graph()
    messy = _messy(d)
    arrays = {"edges": messy.edge_index.numpy().T} if layout == "edges" else {"edge_index": messy.edge_index.numpy()}
    arrays["node_labels" if layout == "edges" else "y"] = d.y.numpy()
    if with_x:
        arrays["node_features" if layout == "edges" else "x"] = d.x.numpy()
    np.savez(tmp_path / "my_graph.npz", **arrays)
    g = load_graph(tmp_path / "my_graph.npz")
    assert g.name == "my_graph" and torch.equal(g.edge_index, d.edge_index) and torch.equal(g.y, d.y)
    assert torch.equal(g.x, d.x if with_x else torch.eye(d.num_nodes))
    assert as_graph(str(tmp_path / "my_graph.npz")).name == "my_graph"  # a path wherever a name is taken


@pytest.mark.parametrize("with_x", [True, False])
def test_load_graph_pt(tmp_path, with_x):
    d = _messy(_graph())
    if not with_x:
        del d.x
    torch.save(d, tmp_path / "g.pt")
    g = load_graph(tmp_path / "g.pt")
    assert g.name == "g" and torch.equal(g.edge_index, _graph().edge_index)
    assert g.x.shape == ((60, 8) if with_x else (60, 60))
    torch.save({"edge_index": d.edge_index, "y": d.y}, tmp_path / "d.pt")  # a dict of tensors works too
    assert torch.equal(load_graph(tmp_path / "d.pt").edge_index, g.edge_index)


def test_bag_of_words_features_are_dense_outside_sparse_inside():
    rng = np.random.default_rng(0)
    d = _graph()
    d.x = torch.from_numpy((rng.random((60, 40)) < 0.1).astype(np.float32))
    g = as_graph(d)
    assert g.x.layout == torch.strided and torch.equal(g.x, d.x)
    assert engine_features(g.x).layout == torch.sparse_csr  # what the engine multiplies
    assert as_graph(d, sparse_features=True).x.layout == torch.sparse_csr
    changed = g.x.clone()
    assert engine_features(changed) is changed
    g.x.mul_(2)  # changed in place: the engine uses the tensor as it is now
    assert engine_features(g.x) is g.x


def test_bad_inputs_name_the_problem(tmp_path):
    d = _graph()
    with pytest.raises(ValueError, match=r"data.y is missing"):
        as_graph(Data(x=d.x, edge_index=d.edge_index))
    with pytest.raises(ValueError, match=r"data.y must hold integer class labels.*non-integer value 0.5"):
        as_graph(Data(x=d.x, edge_index=d.edge_index, y=torch.full((60,), 0.5)))
    with pytest.raises(ValueError, match=r"data.y must hold non-negative"):
        as_graph(Data(x=d.x, edge_index=d.edge_index, y=d.y - 1))
    with pytest.raises(ValueError, match=r"data.y has length 59 but the graph has 60 nodes"):
        as_graph(Data(x=d.x, edge_index=d.edge_index, y=d.y[:59], num_nodes=60))
    with pytest.raises(ValueError, match=r"data.edge_index holds node ids in \[0, 60\].*0..59"):
        as_graph(Data(x=d.x, edge_index=torch.tensor([[0, 60], [1, 2]]), y=d.y))
    with pytest.raises(ValueError, match=r"data.edge_index must hold integer node ids; got dtype torch.float32"):
        as_graph(Data(x=d.x, edge_index=d.edge_index.float(), y=d.y))
    with pytest.raises(ValueError, match=r"data.x must have shape \[num_nodes, num_features\] = \[60, F\]"):
        as_graph(Data(x=d.x[:10], edge_index=d.edge_index, y=d.y, num_nodes=60))
    with pytest.raises(ValueError, match=r"'Kora' is not a known dataset and not a graph file.*Cora"):
        as_graph("Kora")
    with pytest.raises(FileNotFoundError, match=r"graph file .*missing.npz' does not exist"):
        load_graph(tmp_path / "missing.npz")
    np.savez(tmp_path / "nolabels.npz", edges=np.array([[0, 1]]))
    with pytest.raises(ValueError, match=r"nolabels.npz' has no key 'y' or 'node_labels'; it has \['edges'\]"):
        load_graph(tmp_path / "nolabels.npz")
    np.savez(tmp_path / "noedges.npz", y=np.array([0, 1]))
    with pytest.raises(ValueError, match=r"noedges.npz' has no key 'edge_index' or 'edges'"):
        load_graph(tmp_path / "noedges.npz")
    (tmp_path / "junk.pt").write_text("not a torch file")
    with pytest.raises(ValueError, match=r"junk.pt' cannot be read with torch.load"):
        load_graph(tmp_path / "junk.pt")
    (tmp_path / "g.csv").write_text("0,1\n")
    with pytest.raises(ValueError, match=r"suffix '.csv'; allowed: .pt, .pth, .npz"):
        load_graph(tmp_path / "g.csv")


def test_run_experiment_and_dataset_summary_take_a_data(tmp_path):
    from hpstrat_lite.experiments.sweep import run_experiment

    d = _messy(_graph())
    d.name = "toy"
    from hpstrat_lite import PAPER_PROTOCOL, Execution

    kw = dict(models=["MLP"], seeds=[0], methods=["random", "hpstrat"],
              protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5), execution=Execution(device="cpu"))
    rows = run_experiment([d], out=tmp_path / "rows.csv", **kw)
    assert len(rows) == 8 and set(rows["dataset"]) == {"toy"} and set(rows["model"]) == {"MLP"}
    again = run_experiment(d, out=tmp_path / "rows.csv", **kw)  # resumes: nothing trained again
    pd.testing.assert_frame_equal(again, rows)
    table = dataset_summary([d])
    assert table.loc[0, "dataset"] == "toy" and table.loc[0, "edges"] == _graph().edge_index.shape[1] // 2
    assert table.loc[0, "status"] == "ok" and table.loc[0, "classes"] == 3


# ----------------------------------------------------------------------------------------------
# Real data: load_dataset gives dense x, and the engine's numbers are those of the committed sweep


@pytest.fixture(scope="module")
def texas(data_root):
    return load_dataset("Texas", root=data_root)


def test_load_dataset_x_is_dense_and_pyg_idioms_work(texas, data_root):
    import torch.nn.functional as F
    import torch_geometric.transforms as T

    x = texas.x
    assert x.layout == torch.strided and x.dtype == torch.float32 and x.is_contiguous()
    sparse = load_dataset("Texas", root=data_root, sparse_features=True).x
    assert sparse.layout == torch.sparse_csr and torch.equal(sparse.to_dense(), x)
    inner = engine_features(x)
    assert inner.layout == torch.sparse_csr
    assert all(torch.equal(a, b) for a, b in zip((inner.crow_indices(), inner.col_indices(), inner.values()),
                                                 (sparse.crow_indices(), sparse.col_indices(), sparse.values())))
    assert F.dropout(x, 0.5, training=False).shape == x.shape and x.numpy().shape == tuple(x.shape)
    assert x[:5].shape == (5, x.shape[1])
    normed = T.NormalizeFeatures()(texas.clone())
    assert torch.allclose(normed.x.sum(1)[x.sum(1) > 0], torch.ones(1))


@pytest.mark.parametrize("model", ["MLP", "GCN"])
def test_dense_x_reproduces_the_committed_sweep(texas, model):
    """The full protocol (1000 epochs, patience 100) on Texas with the dense x of load_dataset gives the
    committed rows of results/gnn_k4_seed0.csv (HpStrat folds, split seed 0) exactly."""
    from conftest import REPO
    from hpstrat_lite.experiments.sweep import _run_masks, run_seed
    from hpstrat_lite.engine.train import train_runs

    ref = pd.read_csv(REPO / "results" / "gnn_k4_seed0.csv")
    ref = ref[(ref["dataset"] == "Texas") & (ref["model"] == model) & (ref["method"] == "hpstrat")
              & (ref["seed"] == 0)].sort_values("fold")
    assert len(ref) == 4
    y = texas.y.numpy()
    h = node_homophily(texas.edge_index, y, texas.num_nodes, assume_simple=True)
    folds = make_folds("hpstrat", h, y, k=4, seed=0, n_bins=10)
    masks = _run_masks([(folds, f) for f in range(4)], 4)
    rows = train_runs(texas, model, *masks, seeds=[run_seed(0, f) for f in range(4)],
                      execution=Execution(device="cpu"))
    assert [r["best_epoch"] for r in rows] == ref["best_epoch"].tolist()
    assert [r["epochs_run"] for r in rows] == ref["epochs_run"].tolist()
    np.testing.assert_allclose([r["test_acc"] for r in rows], ref["test_acc"], rtol=0, atol=1e-6)
    np.testing.assert_allclose([r["val_loss"] for r in rows], ref["val_loss"], rtol=1e-5)


def test_cli_takes_a_graph_file_wherever_it_takes_a_dataset(tmp_path, capsys):
    from hpstrat_lite.cli import main

    d = _messy(_graph())
    np.savez(tmp_path / "mine.npz", edges=d.edge_index.numpy().T, node_labels=d.y.numpy(), node_features=d.x.numpy())
    path = str(tmp_path / "mine.npz")
    assert main(["split", "--dataset", path, "--k", "4", "--out", str(tmp_path / "f.npy")]) == 0
    assert np.load(tmp_path / "f.npy").shape == (60,) and "mine: hpstrat k=4" in capsys.readouterr().out
    assert main(["quality", "--dataset", path, "--k", "4", "--seeds", "2"]) == 0
    assert "hpstrat" in capsys.readouterr().out
    assert main(["datasets", path]) == 0
    assert "mine" in capsys.readouterr().out
    assert main(["quality", "--dataset", str(tmp_path / "gone.npz")]) == 2
    assert "gone.npz' does not exist" in capsys.readouterr().err


def test_string_labels_are_encoded_as_scikit_learn_encodes_them(tmp_path):
    from sklearn.preprocessing import LabelEncoder

    from hpstrat_lite.data.graphs import graph_changes

    names = np.array(["dog", "cat", "eel", "cat", "dog", "bee"])
    np.savez(tmp_path / "named.npz", edges=np.array([[0, 1], [1, 2], [2, 3], [4, 5]]), node_labels=names,
             node_features=np.ones((6, 2)))
    g = load_graph(tmp_path / "named.npz")
    assert g.y.tolist() == LabelEncoder().fit_transform(names).tolist() and g.num_classes == 4
    assert graph_changes(g)["labels"] == ["bee", "cat", "dog", "eel"]
    d = Data(x=torch.ones(6, 2), edge_index=torch.tensor([[0, 1], [1, 2]]), y=names.astype(object), num_nodes=6)
    assert as_graph(d).y.tolist() == g.y.tolist()
    with pytest.raises(ValueError, match=r"data.y mixes label types \['int', 'str'\]; give one class label per node, "
                                         r"all strings or all integers"):
        as_graph(Data(x=torch.ones(2, 1), edge_index=torch.tensor([[0], [1]]), y=np.array(["a", 1], dtype=object)))


def test_missing_features_warn_and_are_refused_above_the_stated_size():
    from hpstrat_lite.data.graphs import IDENTITY_MAX_NODES, graph_changes

    d = Data(edge_index=torch.tensor([[0, 1, 1], [1, 2, 2]]), y=torch.tensor([0, 1, 1]))
    with pytest.warns(UserWarning, match=r"has no node features \(data.x is missing\): identity features \(one-hot "
                                         r"node ids, \[3, 3\]"):
        g = as_graph(d, name="tiny")
    assert torch.equal(g.x, torch.eye(3)) and graph_changes(g)["identity_features"]
    assert graph_changes(g)["duplicate_edges"] == 1 and graph_changes(g)["reverse_edges"] == 2
    n = IDENTITY_MAX_NODES + 1
    with pytest.raises(ValueError, match=rf"graph 'big' has no node features \(data.x is missing\) and {n} nodes: "
                                         rf"identity features would take 1.6 GB \(\[N, N\] float32\); allowed up to "
                                         rf"{IDENTITY_MAX_NODES} nodes. Give data.x"):
        as_graph(Data(edge_index=torch.tensor([[0], [1]]), y=torch.arange(n) % 2), name="big")
