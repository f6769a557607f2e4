"""User model factories under the HpStrat protocol, audit() and ``hpstrat audit``."""
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite import fold_masks, random_folds
from hpstrat_lite.experiments.audit import AuditResult, audit, load_audit
from hpstrat_lite.data.datasets import simple_undirected
from hpstrat_lite.engine.train import train_runs
from hpstrat_lite.engine.user_models import model_label, resolve_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class TinyGCN(torch.nn.Module):
    """A user's PyG model: two GCNConv layers with dropout."""

    def __init__(self, in_channels, out_channels, hidden=16):
        super().__init__()
        from torch_geometric.nn import GCNConv

        self.conv1, self.conv2 = GCNConv(in_channels, hidden), GCNConv(hidden, out_channels)

    def forward(self, x, edge_index):
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        x = self.conv1(x, edge_index).relu()
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        return self.conv2(x, edge_index)


def make_tiny(in_channels, out_channels):
    return TinyGCN(in_channels, out_channels)


def _graph(n=80, seed=0):
    """Three classes, homophilous edges for classes 0 and 1, heterophilous for class 2; weak features."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    src, dst = rng.integers(0, n, 6 * n), rng.integers(0, n, 6 * n)
    keep = (y[src] == y[dst]) == (y[src] < 2)
    ei = simple_undirected(torch.from_numpy(np.stack([src[keep], dst[keep]])), n)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    x[np.arange(n), y] += 1.0
    data = Data(x=torch.from_numpy(x), edge_index=ei, y=torch.from_numpy(y), num_nodes=n)
    data.name = "toy"
    return data


def test_factory_trains_under_the_protocol_and_repeats_exactly():
    data = _graph()
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    state = torch.random.get_rng_state()
    kw = dict(max_epochs=100, patience=5, device="cpu")
    a = train_runs(data, make_tiny, tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
    b = train_runs(data, make_tiny, tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
    assert torch.equal(torch.random.get_rng_state(), state)  # the caller's random state is untouched
    assert [r["model"] for r in a] == [f"{__name__}.make_tiny"] * 2
    for ra, rb in zip(a, b):
        assert ra["stopped_early"] and ra["epochs_run"] == ra["best_epoch"] + 5 < 100  # early stopping
        assert 0 <= ra["test_acc"] <= 1 and ra["batch_size"] == 1
        drop = {"seconds", "batch_seconds"}
        assert {k: v for k, v in ra.items() if k not in drop} == {k: v for k, v in rb.items() if k not in drop}
    other = train_runs(data, make_tiny, tr[:, :1], va[:, :1], te[:, :1], [5], **kw)[0]
    assert other["val_loss"] != a[0]["val_loss"]  # another seed, another run
    built_in = train_runs(data, "GCN", tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
    assert set(built_in[0]) == set(a[0])  # same row keys as the built-in models


def test_model_arguments_and_their_errors():
    assert resolve_model("gcn") == "GCN" and model_label(TinyGCN) == f"{__name__}.TinyGCN"
    assert resolve_model("hpstrat_lite.engine.models:build_model") is not None
    data = _graph()
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    with pytest.raises(ValueError, match=r"torch.nn.Module instance \(TinyGCN\); pass a factory"):
        train_runs(data, TinyGCN(6, 3), tr[:, 0], va[:, 0], te[:, 0], [0])
    with pytest.raises(ValueError, match=r"model must be one of MLP, GCN.*or a factory.*got 'GCNN'"):
        resolve_model("GCNN")
    with pytest.raises(ValueError, match=r"cannot import the factory 'make' from module 'no_such_pkg'"):
        resolve_model("no_such_pkg:make")
    with pytest.raises(ValueError, match=r"returned a int; it must return a torch.nn.Module"):
        train_runs(data, lambda i, o: 3, tr[:, 0], va[:, 0], te[:, 0], [0], max_epochs=2)
    with pytest.raises(ValueError, match=r"forward\(x, edge_index\) failed: .*takes 2 positional arguments"):
        train_runs(data, lambda i, o: torch.nn.Linear(i, o), tr[:, 0], va[:, 0], te[:, 0], [0], max_epochs=2)
    with pytest.raises(ValueError, match=r"must return logits of shape \[num_nodes, out_channels\] = \[80, 3\]; "
                                         r"got \(80, 5\)"):
        train_runs(data, lambda i, o: LinearModel(i, 5), tr[:, 0], va[:, 0], te[:, 0], [0], max_epochs=2)


class LinearModel(torch.nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = torch.nn.Linear(i, o)

    def forward(self, x, edge_index):
        return self.lin(x)


def test_audit_of_a_small_graph_with_a_built_in_and_a_user_model(tmp_path):
    data = _graph()
    kw = dict(k=4, seeds=[0, 1], max_epochs=40, patience=10, device="cpu")
    result = audit(data, ["GCN", make_tiny, LinearModel], out=tmp_path / "a", **kw)
    assert isinstance(result, AuditResult) and result.dataset == "toy"
    models = ["GCN", f"{__name__}.make_tiny", f"{__name__}.LinearModel"]
    assert len(result.rows) == 3 * 3 * 2 * 4 and list(result.std.index) == models
    assert list(result.std.columns) == ["random", "stratified", "hpstrat"]
    # std: cross-fold std of test accuracy (points), mean over the split seeds
    one = result.rows[(result.rows["model"] == "GCN") & (result.rows["method"] == "hpstrat")]
    expected = one.groupby("seed")["test_acc"].std().mean() * 100
    assert result.std.loc["GCN", "hpstrat"] == pytest.approx(expected)
    assert list(result.ranks.index) == models + ["mean"]
    assert np.allclose(result.ranks.loc[models].sum(axis=1), 6.0)  # ranks 1..3 in every model
    assert 0 <= result.friedman.pvalue <= 1 and result.friedman.statistic >= 0
    assert set(result.best_model.index) == {"random", "stratified", "hpstrat", "changes"}
    assert list(result.quality.columns) == ["sdd", "cdd", "chd", "w1"]
    text = repr(result)
    assert "Friedman" in text and "best model" in text and "verdict" in text
    if result.friedman.pvalue >= 0.05:
        assert "inconclusive" in result.verdict()
    # out: rows.csv is written, and a rerun resumes without training
    assert (tmp_path / "a" / "rows.csv").is_file()
    again = audit(data, ["GCN", make_tiny, LinearModel], out=tmp_path / "a", **kw)
    pd.testing.assert_frame_equal(again.rows, result.rows)
    assert load_audit(tmp_path / "a").std.equals(result.std)


def test_cli_audit_prints_the_tables_and_writes_rows_and_report(tmp_path, capsys, monkeypatch):
    from hpstrat_lite.cli import main

    data = _graph()
    np.savez(tmp_path / "toy.npz", edges=data.edge_index.numpy().T, node_labels=data.y.numpy(),
             node_features=data.x.numpy())
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "usernets.py").write_text(textwrap.dedent("""
        import torch

        def make(in_channels, out_channels):
            return Lin(in_channels, out_channels)

        class Lin(torch.nn.Module):
            def __init__(self, i, o):
                super().__init__()
                self.lin = torch.nn.Linear(i, o)

            def forward(self, x, edge_index):
                return self.lin(x)
    """))
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setenv("PYTHONPATH", str(pkg) + ":" + ":".join(sys.path))  # the report's kernel imports too
    out = tmp_path / "audit"
    rc = main(["audit", "--data", str(tmp_path / "toy.npz"), "--models", "MLP", "usernets:make", "--k", "4",
               "--seeds", "0", "--max-epochs", "20", "--patience", "5", "--device", "cpu", "--out", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "cross-fold std" in printed and "usernets.make" in printed and "Friedman" in printed
    assert "best model" in printed and (out / "rows.csv").is_file()
    html = (out / "report.html").read_text()
    assert "data:image/png" in html and "Fold quality" in html and "Verdict" in html
    assert ("inconclusive" in html) == (load_audit(out).friedman.pvalue >= 0.05 or
                                        np.isnan(load_audit(out).friedman.pvalue))


def test_cli_audit_names_a_missing_or_unreadable_file(tmp_path, capsys):
    from hpstrat_lite.cli import main

    assert main(["audit", "--data", str(tmp_path / "nope.npz"), "--models", "GCN", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nope.npz' does not exist" in err and "Traceback" not in err
    (tmp_path / "bad.pt").write_bytes(b"\x00garbage")
    assert main(["audit", "--data", str(tmp_path / "bad.pt"), "--models", "GCN", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hpstrat audit: error: graph file") and "bad.pt' cannot be read" in err
