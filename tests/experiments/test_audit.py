"""User model factories under the HpStrat protocol, audit() and ``hpstrat audit``."""
import dataclasses
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite import fold_masks, random_folds
from hpstrat_lite.audit_report import design_line, format_audit, key_findings, necessity_line, verdict
from hpstrat_lite.auditing import AuditResult, audit, load_audit
from hpstrat_lite.data.normalize import simple_undirected
from hpstrat_lite.engine.train import train_runs
from hpstrat_lite.engine.user_models import model_label, resolve_model
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution, Protocol


def _train(data, model, tr, va, te, seeds, **options):
    """:func:`train_runs` with the :class:`Protocol` and :class:`Execution` fields a test varies as keywords."""
    fields = {f.name for f in dataclasses.fields(Protocol)}
    return train_runs(data, model, tr, va, te, seeds,
                      protocol=PAPER_PROTOCOL.replace(**{k: v for k, v in options.items() if k in fields}),
                      execution=Execution(**{k: v for k, v in options.items() if k not in fields}))


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
    a = _train(data, make_tiny, tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
    b = _train(data, make_tiny, tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
    assert torch.equal(torch.random.get_rng_state(), state)  # the caller's random state is untouched
    assert [r["model"] for r in a] == [f"{__name__}.make_tiny"] * 2
    for ra, rb in zip(a, b):
        assert ra["stopped_early"] and ra["epochs_run"] == ra["best_epoch"] + 5 < 100  # early stopping
        assert 0 <= ra["test_acc"] <= 1 and ra["batch_size"] == 1
        drop = {"seconds", "batch_seconds"}
        assert {k: v for k, v in ra.items() if k not in drop} == {k: v for k, v in rb.items() if k not in drop}
    other = _train(data, make_tiny, tr[:, :1], va[:, :1], te[:, :1], [5], **kw)[0]
    assert other["val_loss"] != a[0]["val_loss"]  # another seed, another run
    built_in = _train(data, "GCN", tr[:, :2], va[:, :2], te[:, :2], [3, 4], **kw)
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
        train_runs(data, lambda i, o: 3, tr[:, 0], va[:, 0], te[:, 0], [0],
                   protocol=PAPER_PROTOCOL.replace(max_epochs=2))
    with pytest.raises(ValueError, match=r"forward\(x, edge_index\) failed: .*takes 2 positional arguments"):
        train_runs(data, lambda i, o: torch.nn.Linear(i, o), tr[:, 0], va[:, 0], te[:, 0], [0],
                   protocol=PAPER_PROTOCOL.replace(max_epochs=2))
    with pytest.raises(ValueError, match=r"must return logits of shape \[num_nodes, out_channels\] = \[80, 3\]; "
                                         r"got \(80, 5\)"):
        train_runs(data, lambda i, o: LinearModel(i, 5), tr[:, 0], va[:, 0], te[:, 0], [0],
                   protocol=PAPER_PROTOCOL.replace(max_epochs=2))


class LinearModel(torch.nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = torch.nn.Linear(i, o)

    def forward(self, x, edge_index):
        return self.lin(x)


def test_audit_of_a_small_graph_with_a_built_in_and_a_user_model(tmp_path):
    data = _graph()
    kw = dict(seeds=[0, 1], protocol=PAPER_PROTOCOL.replace(max_epochs=15, patience=5),
              execution=Execution(device="cpu"), necessity=False)  # the estimate: its own tests below
    result = audit(data, ["GCN", make_tiny, LinearModel], out=tmp_path / "a", **kw)
    assert isinstance(result, AuditResult) and result.dataset == "toy"
    # the protocol trains every run and keys its row
    assert (result.rows["max_epochs"] == 15).all() and (result.rows["patience"] == 5).all()
    assert (result.rows["epochs_run"] <= 15).all() and (result.rows["k"] == 4).all()
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
    assert set(result.best_model) == {"random", "stratified", "hpstrat"}
    assert list(result.quality.columns) == ["sdd", "cdd", "chd", "w1"]
    text = format_audit(result)
    assert "Friedman" in text and "best model" in text and "verdict" in text
    assert repr(result).count("\n") == 0 and "runs=72" in repr(result)  # short: the report is format_audit's
    if result.friedman.pvalue >= 0.05:
        assert "inconclusive" in verdict(result)
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
               "--seeds", "0", "--max-epochs", "20", "--patience", "5", "--device", "cpu", "--out", str(out),
               "--no-necessity"])
    captured = capsys.readouterr()
    printed = captured.out
    assert rc == 0, captured.err
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


# ---------------------------------------------------------------------------------------------------
# Metrics, baselines, statistics, outputs, errors
# ---------------------------------------------------------------------------------------------------

def _constructed_rows(spread, *, models=("A", "B"), seeds=(0, 1, 2), k=4, level=None, seed=0):
    """Rows of an audit whose test scores per (model, method, seed) are level + spread[method] * z_fold."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in models:
        for method, s in spread.items():
            for split_seed in seeds:
                z = rng.standard_normal(k)
                z = (z - z.mean()) / z.std(ddof=1)
                base = (level or {}).get(model, 0.7)
                for fold in range(k):
                    value = base + s * z[fold]
                    rows.append({"dataset": "toy", "model": model, "method": method, "seed": split_seed,
                                 "fold": fold, "k": k, "test_acc": value, "test_balanced_acc": value,
                                 "test_macro_f1": value, "test_roc_auc": value})
    return pd.DataFrame(rows)


QUALITY = pd.DataFrame({"method": ["random", "stratified", "hpstrat"], "sdd": 0.0, "cdd": 0.0, "chd": 0.0,
                        "w1": 0.0}).set_index("method")


def test_two_models_three_seeds_can_reach_significance():
    rows = _constructed_rows({"random": 0.05, "stratified": 0.03, "hpstrat": 0.01})
    result = AuditResult.from_rows(rows, QUALITY)
    assert result.friedman.n_blocks == 6 and result.friedman.min_pvalue < 0.05
    assert result.friedman.pvalue == pytest.approx(np.exp(-6))  # every block ranks hpstrat < stratified < random
    assert result.conclusive and "the split methods differ" in verdict(result)
    assert result.ranks.loc["mean"].idxmin() == "hpstrat"
    # models as blocks with seeds averaged away could not: 2 blocks reach at best p = exp(-2)
    one_seed = AuditResult.from_rows(rows[rows["seed"] == 0], QUALITY)
    assert one_seed.friedman.min_pvalue == pytest.approx(np.exp(-2)) and not one_seed.conclusive
    assert one_seed.friedman.blocks_needed == 3 and "from 3 blocks on" in design_line(one_seed)


def test_key_findings_state_the_verdict_the_measured_spreads_and_the_baselines():
    rows = _constructed_rows({"random": 0.05, "stratified": 0.03, "hpstrat": 0.01}, seeds=range(7))
    quality = QUALITY.assign(chd=[0.02, 0.03, 0.001], cdd=[1.5, 0.2, 0.4])
    result = AuditResult.from_rows(rows, quality)
    box = key_findings(result)
    assert box.startswith("**Key findings** (computed from this audit's runs):")
    # a winner only after the pairwise tests: 7 split seeds, every one ranking hpstrat lowest
    assert result.best_method == "hpstrat" and result.method_posthoc.n_blocks == 7
    assert "**yes**: hpstrat gives the lowest (Friedman chi2 = 28.00, p = 8.3e-07 < 0.05, 14 (model, seed) " \
           "blocks; against every other method Holm p <= 0.047 over 7 split seeds)" in box
    assert "random 5.00, stratified 3.00, hpstrat 1.00; lowest per model: A: hpstrat, B: hpstrat." in box
    assert "lowest CHD hpstrat (0.00100), lowest CDD stratified (0.200)" in box
    # three seeds: Friedman over 6 blocks differs, but 3 split seeds cannot name a winner
    three = AuditResult.from_rows(rows[rows["seed"] < 3], quality)
    assert three.conclusive and three.best_method is None
    assert "**the methods differ, no winner**" in key_findings(three)
    assert "over 3 split seeds hpstrat leads (median -4.00 points of std vs random; -2.00 points of std vs " \
           "stratified), untested: no split method differs from the next (a Wilcoxon test needs at least 6 split " \
           "seeds; a winner needs at least 7)" in verdict(three)
    one_seed = key_findings(AuditResult.from_rows(rows[rows["seed"] == 0], quality))
    assert "**inconclusive** (Friedman p = 0.14 >= 0.05 over 2 (model, seed) blocks; the smallest p this design " \
           "can reach is 0.14)" in one_seed
    assert "Best model: one split seed: no spread to judge a lead" in one_seed
    flat = _constructed_rows({"random": 0.05, "stratified": 0.0, "hpstrat": 0.01}, level={"A": 0.78, "B": 0.90})
    base = pd.DataFrame([{"baseline": "majority", "method": m, "seed": s, "fold": f,
                          **{f"test_{c}": 0.78 for c in ("acc", "balanced_acc", "macro_f1", "roc_auc")}}
                         for m in ("random", "stratified", "hpstrat") for s in range(3) for f in range(4)])
    assert "Within noise of the majority-class baseline (their spreads measure the folds' class shares): A." in \
        key_findings(AuditResult.from_rows(flat, quality, baselines=base))


def test_the_audits_friedman_test_is_scipys_over_model_seed_blocks():
    from scipy.stats import friedmanchisquare

    rows = _constructed_rows({"random": 0.05, "stratified": 0.04, "hpstrat": 0.045}, seeds=range(4), seed=3)
    rows["test_acc"] += np.random.default_rng(2).normal(0, 0.02, len(rows))
    result = AuditResult.from_rows(rows, QUALITY)
    per = rows.groupby(["model", "seed", "method"])["test_acc"].std().unstack()[["random", "stratified", "hpstrat"]]
    stat, p = friedmanchisquare(*[per[c] for c in per])
    assert result.friedman.statistic == pytest.approx(stat) and result.friedman.pvalue == pytest.approx(p)
    assert result.friedman.n_blocks == 8 and result.friedman.unit == "(model, split seed) block"
    one_method = AuditResult.from_rows(rows[rows["method"] == "hpstrat"], QUALITY)
    assert np.isnan(one_method.friedman.pvalue) and one_method.method_posthoc is None
    assert "inconclusive" in verdict(one_method)


def _per_seed_rows(values, k=4):
    """Rows whose fold scores average to the given per-seed means: {(model, method): [per-seed means]}."""
    return pd.DataFrame([{"dataset": "toy", "model": m, "method": meth, "seed": s, "fold": f, "k": k,
                          "test_acc": v / 100 + (f - 1.5) * 0.01}
                         for (m, meth), vs in values.items() for s, v in enumerate(vs) for f in range(k)])


def test_best_model_is_named_only_by_the_pairwise_tests_and_agrees_with_the_text():
    from hpstrat_lite.audit_report import best_model_line

    quality = QUALITY.loc[["random", "hpstrat"]]
    flip = _per_seed_rows({("A", "random"): [80, 81, 79, 82, 80, 81], ("B", "random"): [70, 71, 69, 72, 71, 70],
                           ("A", "hpstrat"): [70, 71, 69, 72, 71, 70], ("B", "hpstrat"): [80, 80, 81, 79, 82, 80]})
    result = AuditResult.from_rows(flip, quality)
    r = result.model_posthoc["random"]
    assert (r.leader, r.winner, r.n_blocks, r.unit) == ("A", "A", 6, "split seed")
    assert r.pairs["pvalue"].iloc[0] == pytest.approx(2 / 2 ** 6)  # exact: every seed favours A
    assert result.best_model == {"random": "A", "hpstrat": "B"} and result.best_model_changes
    line = best_model_line(result)
    assert "CHANGES with the split method" in line and "A is best" in line and "B is best" in line
    assert "over 6 split seeds, A - B: median +10.00 points, Wilcoxon p = 0.031, Holm p = 0.031" in line
    # leads that flip from seed to seed: no model is named, and the text says so
    noisy = _per_seed_rows({("A", "random"): [80, 70, 81, 72, 80, 70], ("B", "random"): [70, 80, 70.5, 79, 71, 80],
                            ("A", "hpstrat"): [70, 80, 70, 79, 71, 80], ("B", "hpstrat"): [80, 70, 80.5, 72, 80, 70]})
    result = AuditResult.from_rows(noisy, quality)
    assert result.best_model == {"random": None, "hpstrat": None} and not result.best_model_changes
    assert "no clear best model under any split method" in best_model_line(result)
    assert "no model differs from the next" in best_model_line(result)
    # one split seed: a 10-point lead is no lead, and the text says why
    one = AuditResult.from_rows(flip[flip["seed"] == 0], quality)
    assert one.best_model == {"random": None, "hpstrat": None}
    assert "one split seed: no spread to judge a lead" in best_model_line(one)
    assert "within noise" not in best_model_line(one)


def test_baselines_mark_models_at_the_majority_rate():
    rows = _constructed_rows({"random": 0.05, "stratified": 0.0, "hpstrat": 0.01},
                             level={"A": 0.78, "B": 0.90})
    base = []
    for method in ("random", "stratified", "hpstrat"):
        for seed in range(3):
            for fold in range(4):
                for name, v in (("majority", 0.78), ("logistic", 0.85)):
                    base.append({"baseline": name, "method": method, "seed": seed, "fold": fold,
                                 **{f"test_{c}": v for c in ("acc", "balanced_acc", "macro_f1", "roc_auc")}})
    result = AuditResult.from_rows(rows, QUALITY, baselines=pd.DataFrame(base), class_counts=[9192, 2566])
    assert result.at_majority == ("A",) and list(result.baselines.index) == ["majority", "logistic"]
    assert result.baselines.loc["majority", "hpstrat"] == pytest.approx(78.0)
    assert "within noise of the majority-class baseline" in verdict(result) and "A" in verdict(result)
    assert result.imbalanced_binary and "metric='roc_auc'" in format_audit(result)
    only_a = AuditResult.from_rows(rows[rows["model"] == "A"], QUALITY, baselines=pd.DataFrame(base))
    assert "rests only on models that learned no more than the class shares" in verdict(only_a)


def test_rows_without_the_new_metrics_still_read():
    rows = _constructed_rows({"random": 0.05, "stratified": 0.03, "hpstrat": 0.01})
    old = rows.drop(columns=["test_balanced_acc", "test_macro_f1", "test_roc_auc"])
    assert AuditResult.from_rows(old, QUALITY).std.shape == (2, 3)
    with pytest.raises(ValueError, match=r"metric='roc_auc': 72 of the 72 rows have no 'test_roc_auc'"):
        AuditResult.from_rows(old, QUALITY, metric="roc_auc")


def test_roc_auc_audit_of_an_imbalanced_binary_graph_with_baselines(data_root, tmp_path):
    """Twitch-PTBR: two classes, 65 % of the nodes in the larger one."""
    from hpstrat_lite import load_dataset

    result = audit(load_dataset("Twitch-PTBR", root=data_root), ["MLP"], seeds=[0], metric="roc_auc",
                   protocol=PAPER_PROTOCOL.replace(max_epochs=10, patience=5), execution=Execution(device="cpu"),
                   out=tmp_path / "a", necessity=False)
    rows = result.rows
    assert len(rows) == 12 and rows["test_roc_auc"].between(0, 1).all()
    assert result.std.loc["MLP", "hpstrat"] == pytest.approx(
        100 * rows[rows["method"] == "hpstrat"]["test_roc_auc"].std())
    assert result.baselines.loc["majority"].tolist() == [50.0, 50.0, 50.0]  # a constant score: ROC-AUC 0.5
    assert (result.baselines.loc["logistic"] > 50).all()
    assert result.imbalanced_binary and result.class_counts == (1251, 661)
    # the same folder read back on another metric: one run served every metric
    acc = load_audit(tmp_path / "a", metric="accuracy")
    assert acc.baselines.loc["majority"].round(0).tolist() == [65.0, 65.0, 65.0]
    assert "metric='roc_auc'" in format_audit(acc) and "metric='roc_auc'" not in format_audit(result)


def test_control_methods_and_a_user_covariate(tmp_path):
    data = _graph()
    cov = np.arange(data.num_nodes, dtype=float)
    kw = dict(seeds=[0], protocol=PAPER_PROTOCOL.replace(max_epochs=10, patience=5),
              execution=Execution(device="cpu"), necessity=False)
    result = audit(data, ["MLP"], methods=["hpstrat", "degree", "placebo", "covariate"], covariate=cov,
                   out=tmp_path / "c", **kw)
    assert list(result.std.columns) == ["hpstrat", "degree", "placebo", "covariate"]
    assert list(result.quality.index) == ["hpstrat", "degree", "placebo", "covariate"]
    assert set(pd.read_csv(tmp_path / "c" / "baselines.csv")["method"]) == set(result.std.columns)
    with pytest.raises(ValueError, match=r"method 'covariate' and covariate= go together"):
        audit(data, ["MLP"], methods=["covariate"], **kw)
    with pytest.raises(ValueError, match=r"methods must be one of .*got 'degre'"):
        audit(data, ["MLP"], methods=["degre"], **kw)


def test_an_out_folder_of_another_graph_is_refused(tmp_path):
    kw = dict(seeds=[0], protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5),
              execution=Execution(device="cpu"), out=tmp_path / "a", necessity=False)
    audit(_graph(seed=0), ["MLP"], **kw)
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir() if p.is_file()}
    other = _graph(seed=1)
    other.name = "other"
    with pytest.raises(ValueError, match=r"holds the audit of another graph \('toy', 80 nodes, id [0-9a-f]{16}\); "
                                         r"this one is 'other' \(80 nodes, id [0-9a-f]{16}\), its edges and labels and "
                                         r"features differ: name another folder \(nothing in .* was changed\)"):
        audit(other, ["MLP"], **kw)
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir() if p.is_file()} == before  # nothing written


def test_a_graph_whose_features_changed_is_never_answered_with_the_first_graphs_runs(tmp_path):
    kw = dict(seeds=[0], methods=["hpstrat"], protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5),
              execution=Execution(device="cpu"), out=tmp_path / "a", necessity=False)
    data = _graph()
    first = audit(data, ["MLP"], **kw)
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir() if p.is_file()}
    noise = data.clone()
    noise.x = torch.from_numpy(np.random.default_rng(9).normal(size=tuple(data.x.shape)).astype(np.float32))
    with pytest.raises(ValueError, match=r"holds the audit of another graph \('toy', 80 nodes, id [0-9a-f]{16}\); "
                                         r"this one is 'toy' \(80 nodes, id [0-9a-f]{16}\), its features differ"):
        audit(noise, ["MLP"], **kw)
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir() if p.is_file()} == before  # nothing touched
    fresh = audit(noise, ["MLP"], **{**kw, "out": tmp_path / "b"})  # its own folder: trained, not reused
    assert not np.array_equal(fresh.rows["val_loss"].to_numpy(), first.rows["val_loss"].to_numpy())
    assert load_audit(tmp_path / "a").rows.equals(first.rows)
    # the protocol is part of the folder's identity too, and refused before anything is written
    with pytest.raises(ValueError, match=r"holds rows of another protocol .*'max_epochs': 5.*this run has .*"
                                         r"'max_epochs': 6"):
        audit(data, ["MLP"], **{**kw, "protocol": kw["protocol"].replace(max_epochs=6)})
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir() if p.is_file()} == before



def test_audit_trains_another_lr_and_keeps_one_protocol_per_folder(tmp_path):
    data = _graph()
    quick = PAPER_PROTOCOL.replace(max_epochs=3, patience=3, lr=0.005)
    kw = dict(seeds=[0], methods=["hpstrat"], execution=Execution(device="cpu"), out=tmp_path / "a",
              necessity=False)
    result = audit(data, ["GCN"], protocol=quick, **kw)
    assert len(result.rows) == 4 and (result.rows["lr"] == 0.005).all() and (result.rows["hidden"] == 64).all()
    with pytest.raises(ValueError, match=r"holds rows of another protocol .*'lr': 0.005"):
        audit(data, ["GCN"], protocol=quick.replace(lr=0.01), **kw)


def test_small_classes_warn_and_arguments_fail_before_any_work(tmp_path):
    data = _graph()
    y = data.y.clone()
    y[0], y[1:3] = 3, 4  # class 3 has one node, class 4 two: both fewer than k = 4
    data.y = y
    quick = PAPER_PROTOCOL.replace(max_epochs=5, patience=5)
    kw = dict(seeds=[0], protocol=quick, execution=Execution(device="cpu"), necessity=False)
    with pytest.warns(UserWarning, match=r"have a single node") as record:
        audit(data, ["MLP"], **kw)
    assert any("fewer than k=4" in str(w.message) and "StratifiedKFold" in str(w.message) for w in record)
    out = tmp_path / "never"
    for bad, match in ((dict(protocol=quick.replace(max_epochs=0)), r"max_epochs must be an integer >= 1; got 0"),
                       (dict(protocol=quick.replace(patience=-1)), r"patience must be an integer >= 1; got -1"),
                       (dict(protocol=quick.replace(k=1)), r"k=1 is too small"),
                       (dict(protocol=quick.replace(dropout=1.0)), r"dropout must be a number in \[0, 1\); got 1.0"),
                       (dict(protocol=dict(max_epochs=5)), r"protocol must be a hpstrat_lite.protocol.Protocol"),
                       (dict(metric="auc"), r"metric must be one of .*'roc_auc'.*got 'auc'"),
                       (dict(seeds=[]), r"seeds must name at least one split seed"),
                       (dict(execution=Execution(progress="yes")), r"progress must be True or False"),
                       (dict(execution=Execution(workers=2)), r"workers=2 needs executor='ray'"),
                       (dict(execution=Execution(precision="bfloat16")), r"audit trains in 'float32'")):
        with pytest.raises(ValueError, match=match):
            audit(data, ["MLP"], **{**kw, **bad, "out": out})
        assert not out.exists()


class Broken(torch.nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = torch.nn.Linear(i, o)

    def forward(self, x, edge_index):
        raise ZeroDivisionError("a bug in the user's forward")


def test_cli_one_line_for_a_failing_user_model_and_other_bad_inputs(tmp_path, capsys, monkeypatch):
    from hpstrat_lite.cli import main

    data = _graph()
    np.savez(tmp_path / "toy.npz", edges=data.edge_index.numpy().T, node_labels=data.y.numpy(),
             node_features=data.x.numpy())
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "brokennets.py").write_text(textwrap.dedent("""
        import torch

        class Broken(torch.nn.Module):
            def __init__(self, i, o):
                super().__init__()
                self.lin = torch.nn.Linear(i, o)

            def forward(self, x, edge_index):
                return self.lin(x) / 0 if self.training else 1 / 0
    """))
    monkeypatch.syspath_prepend(str(pkg))
    args = ["audit", "--data", str(tmp_path / "toy.npz"), "--models", "brokennets:Broken", "--max-epochs", "3",
            "--device", "cpu", "--out", str(tmp_path / "out"), "--no-report"]
    assert main(args) == 2
    printed = capsys.readouterr().err.strip()
    err = printed.splitlines()[-1]  # the progress bars above it, then one line
    assert "Traceback" not in printed and err.startswith("hpstrat audit: error: ")
    assert "model brokennets.Broken: forward(x, edge_index) raised ZeroDivisionError" in err
    assert "split method random, split seed 0, fold 0" in err and "--traceback" in err
    from hpstrat_lite.engine.user_models import ModelError

    with pytest.raises(ModelError) as info:  # --traceback: the full trace, down to the user's line
        main(args + ["--traceback"])
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    capsys.readouterr()
    # --max-epochs 0 fails before any progress bar or file
    assert main([*args[:5], "MLP", "--max-epochs", "0", "--out", str(tmp_path / "z")]) == 2
    captured = capsys.readouterr()
    assert "max_epochs must be an integer >= 1; got 0" in captured.err and "(dataset, model)" not in captured.err
    assert not (tmp_path / "z").exists()
    # a text file named .npz
    (tmp_path / "text.npz").write_text("node,label\n0,1\n")
    assert main(["audit", "--data", str(tmp_path / "text.npz"), "--models", "MLP", "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not an .npz archive" in err and "pickled" not in err


class Flaky(torch.nn.Module):
    """A user's model whose factory fails on its BUILDS-th call while FAIL_AT is set (an interrupted audit)."""

    BUILDS, FAIL_AT = [0], [None]

    def __init__(self, i, o):
        super().__init__()
        Flaky.BUILDS[0] += 1
        if Flaky.FAIL_AT[0] is not None and Flaky.BUILDS[0] >= Flaky.FAIL_AT[0]:
            raise KeyboardInterrupt  # stands for a kill: not an error of the model
        self.lin = torch.nn.Linear(i, o)

    def forward(self, x, edge_index):
        return self.lin(x)


def test_an_interrupted_factory_audit_resumes_from_its_finished_runs(tmp_path):
    data = _graph()
    kw = dict(seeds=[0], methods=["random", "hpstrat"], necessity=False,
              protocol=PAPER_PROTOCOL.replace(max_epochs=15, patience=5), execution=Execution(device="cpu"))
    clean = audit(data, [Flaky], out=tmp_path / "clean", **kw)
    Flaky.BUILDS[0], Flaky.FAIL_AT[0] = 0, 6
    with pytest.raises(KeyboardInterrupt):
        audit(data, [Flaky], out=tmp_path / "a", **kw)
    saved = list((tmp_path / "a").glob(".rows.checkpoints/*.run.json"))
    assert len(saved) == 5  # the runs finished before the interruption
    Flaky.BUILDS[0], Flaky.FAIL_AT[0] = 0, None
    resumed = audit(data, [Flaky], out=tmp_path / "a", **kw)
    assert Flaky.BUILDS[0] == 3  # only the 3 runs that had not finished
    cols = ["method", "seed", "fold", "run_seed", "best_epoch", "test_acc", "test_roc_auc", "val_loss"]
    pd.testing.assert_frame_equal(resumed.rows[cols], clean.rows[cols])
    assert not list((tmp_path / "a").glob(".rows.checkpoints/*.run.json"))


def test_notebook_models_are_named_by_their_own_name():
    def make(i, o):
        return LinearModel(i, o)

    make.__module__ = "__main__"
    assert model_label(make) == make.__qualname__ and "__main__" not in model_label(make)


def test_cli_audit_takes_a_metric_control_methods_and_a_covariate_file(tmp_path, capsys):
    from hpstrat_lite.cli import main

    data = _graph()
    np.savez(tmp_path / "toy.npz", edges=data.edge_index.numpy().T, node_labels=data.y.numpy(),
             node_features=data.x.numpy())
    np.save(tmp_path / "cov.npy", np.linspace(0, 1, data.num_nodes))
    out = tmp_path / "audit"
    rc = main(["audit", "--data", str(tmp_path / "toy.npz"), "--models", "MLP", "--methods", "stratified", "degree",
               "placebo", "--covariate", str(tmp_path / "cov.npy"), "--metric", "macro_f1", "--max-epochs", "5",
               "--patience", "5", "--device", "cpu", "--out", str(out), "--no-report", "--no-necessity"])
    printed = capsys.readouterr().out
    assert rc == 0 and "macro-F1" in printed and "[majority baseline]" in printed
    result = load_audit(out)
    assert result.metric == "macro_f1" and list(result.quality.index) == ["stratified", "degree", "placebo",
                                                                            "covariate"]
    (tmp_path / "cov.txt").write_text("1 2 3")
    assert main(["audit", "--data", str(tmp_path / "toy.npz"), "--models", "MLP", "--covariate",
                 str(tmp_path / "cov.txt"), "--out", str(tmp_path / "x")]) == 2
    assert "--covariate" in capsys.readouterr().err


def test_progress_is_shown_by_default_in_a_terminal(monkeypatch):
    import io

    from hpstrat_lite import auditing as audit_module

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert audit_module._show_progress()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert not audit_module._show_progress()


def test_audit_reports_whether_the_graph_helps(tmp_path):
    """The audit carries the cheap necessity estimate of the same graph, in the summary and in its folder."""
    out = tmp_path / "audit"
    result = audit(_graph(), ["MLP"], seeds=[0], methods=["random", "hpstrat"],
                   protocol=PAPER_PROTOCOL.replace(max_epochs=3, patience=3), out=out,
                   execution=Execution(progress=False))
    assert result.necessity is not None and "probe_gain" in set(result.necessity["estimate"])
    assert result.necessity["verdict"].iloc[0] in ("the graph helps", "no evidence that the graph helps",
                                                   "the graph hurts")
    assert "does the graph help? " + result.necessity["verdict"].iloc[0] in format_audit(result)
    again = load_audit(out)
    assert necessity_line(again) == necessity_line(result)


# ---------------------------------------------------------------------------------------------------
# Said, not silent: convergence, multi-class ROC-AUC, what loading changed, bad inputs in one line
# ---------------------------------------------------------------------------------------------------

def test_capped_runs_are_reported_with_a_warning_and_which_estimate_to_believe(tmp_path):
    from hpstrat_lite.audit_report import convergence_line

    data = _graph()
    result = audit(data, ["MLP", "GCN"], seeds=[0], methods=["random", "hpstrat"], necessity=False,
                   protocol=PAPER_PROTOCOL.replace(max_epochs=4, patience=4), execution=Execution(device="cpu"))
    conv = result.convergence  # patience = max_epochs: no run can stop early
    assert conv.loc["MLP", "runs"] == 8 and conv.loc["MLP", "capped"] == 8 and conv.loc["GCN", "share"] == 1.0
    assert result.capped_models == ["MLP", "GCN"] and result.necessity is None
    line = convergence_line(result)
    assert line.startswith("convergence: WARNING: more than 25% of the runs of MLP, GCN stopped at max_epochs = 4 "
                           "instead of early (MLP 8/8 (100%), GCN 8/8 (100%))") and "raise max_epochs" in line
    assert line in format_audit(result) and "does the graph help? not estimated (not requested" in format_audit(result)
    # the necessity estimate says +5 points [3, 7]; the capped GCN measures another gap: believe the estimate
    gap = result.graph_gap
    assert gap[0] == "GCN" and gap[1] == pytest.approx((result.score.loc["GCN"] - result.score.loc["MLP"]).mean())
    table = pd.DataFrame({"estimate": ["probe_gain"], "value": [gap[1] + 5], "low": [gap[1] + 3],
                          "high": [gap[1] + 7], "verdict": ["the graph helps"], "gap": [gap[1] + 5],
                          "metric": ["accuracy"]})
    capped = dataclasses.replace(result, necessity=table)
    assert capped.necessity_disagrees
    assert "disagree: believe the necessity estimate until a rerun with a larger max_epochs" in \
        convergence_line(capped)
    converged = dataclasses.replace(capped, convergence=capped.convergence.assign(capped=0, share=0.0))
    assert "none above the 25% this audit flags" in convergence_line(converged)
    assert "the runs converged, so believe the measured gap" in convergence_line(converged)
    agree = dataclasses.replace(result, necessity=table.assign(low=gap[1] - 1))
    assert not agree.necessity_disagrees and "disagree" not in convergence_line(agree)


def test_roc_auc_is_one_vs_rest_macro_on_five_classes(tmp_path):
    from sklearn.metrics import roc_auc_score

    from hpstrat_lite.engine.metrics import classification_scores

    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 200)
    probs = rng.dirichlet(np.ones(5), 200) + 0.3 * np.eye(5)[y]
    assert classification_scores(probs, y)["roc_auc"] == pytest.approx(
        roc_auc_score(y, probs / probs.sum(1, keepdims=True), multi_class="ovr", average="macro"))
    data = _graph(n=100)
    data.y = torch.from_numpy(np.random.default_rng(1).integers(0, 5, 100))
    result = audit(data, ["MLP"], seeds=[0], methods=["hpstrat"], metric="roc_auc", out=tmp_path / "a",
                   protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5), execution=Execution(device="cpu"))
    assert result.rows["test_roc_auc"].between(0, 1).all() and result.metric == "roc_auc"
    assert (result.necessity["metric"] == "accuracy").all()  # the estimate's ROC-AUC is binary: said, not raised
    assert "does the graph help? " in format_audit(result) and "(cheap estimate in accuracy:" in format_audit(result)


def test_what_loading_changed_is_counted_in_the_report(tmp_path):
    data = _graph()
    ei = data.edge_index
    loops = torch.tensor([[0, 1, 2], [0, 1, 2]])
    raw = torch.cat([ei[:, ei[0] < ei[1]], ei[:, :5][:, ei[0, :5] < ei[1, :5]], loops], 1)  # one direction
    y = data.y.numpy() * 2 + 1  # labels {1, 3, 5}
    changed = Data(x=data.x, edge_index=raw, y=torch.from_numpy(y), num_nodes=data.num_nodes)
    changed.name = "raw"
    result = audit(changed, ["MLP"], seeds=[0], methods=["hpstrat"], necessity=False,
                   protocol=PAPER_PROTOCOL.replace(max_epochs=3, patience=3), execution=Execution(device="cpu"))
    dups = int((ei[0, :5] < ei[1, :5]).sum())
    assert result.graph_changes == {"self_loops": 3, "duplicate_edges": dups, "reverse_edges": ei.shape[1] // 2,
                                    "labels": [1, 3, 5], "identity_features": False}
    assert (f"graph as read: 3 self-loop(s) dropped; {dups} duplicate edge(s) dropped; {ei.shape[1] // 2} reverse "
            f"edge(s) added (made undirected); class labels [1, 3, 5] relabelled in sorted order to 0..2.") \
        in format_audit(result)


def test_a_graph_without_features_warns_and_a_large_one_is_refused(tmp_path):
    data = _graph()
    bare = Data(edge_index=data.edge_index, y=data.y, num_nodes=data.num_nodes)
    bare.name = "bare"
    with pytest.warns(UserWarning, match=r"graph 'bare' has no node features \(data.x is missing\): identity "
                                         r"features \(one-hot node ids, \[80, 80\]"):
        result = audit(bare, ["MLP"], seeds=[0], methods=["hpstrat"],
                       protocol=PAPER_PROTOCOL.replace(max_epochs=3, patience=3), execution=Execution(device="cpu"))
    assert result.graph_changes["identity_features"] and result.necessity is None
    assert "no node features: identity features (one-hot node ids) stood in" in format_audit(result)
    assert "does the graph help? not estimated (the graph has no node features)" in format_audit(result)
    n = 20_001
    big = Data(edge_index=torch.tensor([[0], [1]]), y=torch.arange(n) % 2, num_nodes=n)
    with pytest.raises(ValueError, match=r"graph 'big' has no node features \(data.x is missing\) and 20001 nodes: "
                                         r"identity features would take 1.6 GB \(\[N, N\] float32\); allowed up to "
                                         r"20000 nodes"):
        audit(Data(**{**big.to_dict(), "name": "big"}), ["MLP"], out=tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_string_labels_are_encoded_and_a_single_class_is_refused_before_training(tmp_path, capsys):
    from hpstrat_lite.cli import main

    data = _graph()
    names = np.array(["cat", "dog", "eel"])[data.y.numpy()]
    np.savez(tmp_path / "named.npz", edges=data.edge_index.numpy().T, node_labels=names,
             node_features=data.x.numpy())
    rc = main(["audit", "--data", str(tmp_path / "named.npz"), "--models", "MLP", "--methods", "hpstrat",
               "--max-epochs", "3", "--patience", "3", "--device", "cpu", "--out", str(tmp_path / "a"),
               "--no-report", "--no-necessity"])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert "class labels ['cat', 'dog', 'eel'] encoded in sorted order, as scikit-learn's LabelEncoder to 0..2" \
        in printed.out
    assert load_audit(tmp_path / "a").class_counts == tuple(np.bincount(data.y.numpy()))
    np.savez(tmp_path / "one.npz", edges=data.edge_index.numpy().T, node_labels=np.zeros(80, int),
             node_features=data.x.numpy())
    assert main(["audit", "--data", str(tmp_path / "one.npz"), "--models", "MLP", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("hpstrat audit: error: data.y has a single class (80 nodes, all of one label): there is nothing to "
                   "classify; an audit needs at least two classes.")
    assert not (tmp_path / "b").exists()
    mixed = Data(x=data.x, edge_index=data.edge_index, y=np.array(["a", 1] * 40, dtype=object), num_nodes=80)
    with pytest.raises(ValueError, match=r"data.y mixes label types \['int', 'str'\]; give one class label per node"):
        audit(mixed, ["MLP"])
    with pytest.raises(ValueError, match=r"necessity must be True or False; got 'yes'"):
        audit(data, ["MLP"], necessity="yes")
