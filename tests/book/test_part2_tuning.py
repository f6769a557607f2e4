"""Optuna tuning loop: selection on validation only, resumable rows, split protocols, feature subsets."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

import hpstrat_book.part2.tuning as tuning
from hpstrat_lite.protocol import Execution, Protocol
from hpstrat_book.part2.linkpred import EdgeSplit
from hpstrat_book.part2.tuning import (FEATURE_STEPS, SEARCH_SPACE, TUNING_PROTOCOL, Search, feature_subsets,
                                             protocol_masks, random_split_masks, subset_features, tune,
                                             tune_link_predictor, tune_node_classifier)
from hpstrat_book.part2 import necessity as runners


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _graph(n=120, classes=3, dim=12, seed=0):
    """Homophilous toy graph: a ring within each class plus a few random edges; informative x."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    order = np.argsort(y, kind="stable")
    u = order
    v = np.roll(order.reshape(classes, -1), -1, axis=1).ravel()
    extra = rng.integers(0, n, size=(2, n // 4))
    a = np.r_[u, extra[0]]
    b = np.r_[v, extra[1]]
    keep = a != b
    a, b = a[keep], b[keep]
    key = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    a, b = key // n, key % n
    ei = torch.from_numpy(np.stack([np.r_[a, b], np.r_[b, a]]))
    x = np.eye(classes)[y] @ rng.standard_normal((classes, dim)) + rng.standard_normal((n, dim))
    return Data(x=torch.tensor(x, dtype=torch.float32), edge_index=ei, y=torch.from_numpy(y),
                num_nodes=n, name="toy")


def _fake_engine(calls):
    """train_runs stand-in: val rewards a small lr, test rewards a large one (opposite)."""
    def fake(data, model, tr, va, te, seeds, *, protocol, execution):
        kw = {**dataclasses.asdict(protocol), **dataclasses.asdict(execution)}  # the fields the call chose
        calls.append({"model": model, "runs": tr.shape[1], "seeds": list(seeds), **kw})
        return [{"val_acc": 1.0 - kw["lr"], "test_acc": kw["lr"], "best_epoch": 3}
                for _ in range(tr.shape[1])]
    return fake


def test_selects_on_validation_never_on_test(monkeypatch):
    calls = []
    monkeypatch.setattr(tuning, "train_runs", _fake_engine(calls))
    out = tune_node_classifier(_graph(), model="mlp", search=Search(n_trials=8, n_eval=3))
    trials = out["trials"]
    lrs = trials["lr"].to_numpy()
    assert out["best_params"]["lr"] == lrs.min()  # best validation score
    assert trials.loc[trials["test"].idxmax(), "lr"] != out["best_params"]["lr"]  # not best test
    assert out["best_val"] == pytest.approx(1 - lrs.min())
    # the 3 evaluation trials retrain the best config; the reported test is theirs
    assert out["test_mean"] == pytest.approx(lrs.min()) and out["test_std"] == pytest.approx(0)
    assert sorted(out["eval"]["eval_seed"].unique()) == [0, 1, 2]
    assert out["protocol"] == "hpstrat" and out["k"] == 5
    # k rounds batched; at evaluation seeds 1 and 2 x k (seed 0 is the tuning trial's own call, reused)
    assert [c["runs"] for c in calls] == [5] * 8 + [10]
    assert calls[0]["model"] == "MLP" and calls[-1]["seeds"] == [1] * 5 + [2] * 5


def test_evaluation_seed_of_the_tuning_trial_reuses_its_runs(monkeypatch):
    """Evaluation seed ``seed`` is the tuning trial's own call: its rows are that trial's runs, not trained
    again; a study whose best trial was read back from a file (not trained here) trains it."""
    calls = []
    fake = _fake_engine(calls)

    def per_run(data, model, tr, va, te, seeds, **kw):  # distinct numbers per run, to see which rows are reused
        rows = fake(data, model, tr, va, te, seeds, **kw)
        return [{**r, "val_acc": r["val_acc"] + 0.01 * i, "best_epoch": 10 * len(calls) + i} for i, r in enumerate(rows)]

    monkeypatch.setattr(tuning, "train_runs", per_run)
    out = tune_node_classifier(_graph(), model="mlp", search=Search(n_trials=4, n_eval=3), seed=2)
    best_call = next(i for i, c in enumerate(calls[:4]) if c["lr"] == out["best_params"]["lr"])
    ev = out["eval"]
    reused = ev[ev["eval_seed"] == 2].sort_values("round")
    assert reused["best_epoch"].to_list() == [10 * (best_call + 1) + i for i in range(5)]  # the trial's own runs
    assert reused["val"].to_list() == pytest.approx([1 - out["best_params"]["lr"] + 0.01 * i for i in range(5)])
    assert calls[4]["seeds"] == [0] * 5 + [1] * 5 and len(calls) == 5  # the other seeds in one batch
    assert ev["eval_seed"].to_list() == [0] * 5 + [1] * 5 + [2] * 5  # rows in seed order


def test_killed_evaluation_resumes_with_the_same_batches(monkeypatch, tmp_path):
    """A new process resuming a killed evaluation has not trained the best trial itself, so it trains the
    tuning seed again, in a call of its own: the other seeds form the same call as in the killed process
    (same run seeds and masks, hence the same checkpoint names), so its finished batches are reused."""
    calls = []
    fake = _fake_engine(calls)

    def recording_masks(killed_in_evaluation):
        def train_runs(data, model, tr, va, te, seeds, **kw):
            out = fake(data, model, tr, va, te, seeds, **kw)
            calls[-1]["masks"] = (tr.clone(), va.clone(), te.clone())
            if killed_in_evaluation and set(seeds) != {0}:
                raise KeyboardInterrupt  # killed while the evaluation's fresh seeds trained
            return out
        return train_runs

    data, path = _graph(), tmp_path / "res.csv"
    monkeypatch.setattr(tuning, "train_runs", recording_masks(killed_in_evaluation=True))
    with pytest.raises(KeyboardInterrupt):
        tune_node_classifier(data, model="gcn", search=Search(n_trials=3, n_eval=4), results=path)
    killed = calls[-1]
    assert killed["seeds"] == [1] * 5 + [2] * 5 + [3] * 5  # seed 0 was the best trial's own call, reused
    calls.clear()

    monkeypatch.setattr(tuning, "train_runs", recording_masks(killed_in_evaluation=False))
    out = tune_node_classifier(data, model="gcn", search=Search(n_trials=3, n_eval=4), results=path)
    assert [c["seeds"] for c in calls] == [[0] * 5, killed["seeds"]]  # trials read back; seed 0 alone
    for before, now in zip(killed["masks"], calls[1]["masks"]):
        assert torch.equal(before, now)
    assert {k: v for k, v in calls[1].items() if k != "masks"} == {k: v for k, v in killed.items() if k != "masks"}
    assert sorted(out["eval"]["eval_seed"].unique()) == [0, 1, 2, 3] and len(out["eval"]) == 20


def test_reused_evaluation_rows_are_what_training_again_gives():
    """On the real engine, the seed-0 evaluation rows taken from the tuning trial equal a fresh training
    of the same configuration on the same masks and run seeds."""
    data = _graph()
    out = tune_node_classifier(data, model="gcn", search=Search(n_trials=2, n_eval=2),
                               protocol=TUNING_PROTOCOL.replace(max_epochs=20), execution=Execution(device="cpu"))
    tr, va, te, _, _ = protocol_masks(data, protocol="hpstrat", seeds=[0], k=5, n_bins=10)
    trial = tuning._trial_protocol(out["best_params"], TUNING_PROTOCOL.replace(max_epochs=20))
    again = tuning.train_runs(data, "GCN", tr, va, te, [0] * 5, protocol=trial,
                              execution=Execution(device="cpu"))
    ev = out["eval"][out["eval"]["eval_seed"] == 0].sort_values("round")
    assert ev["test"].to_list() == [r["test_acc"] for r in again]
    assert ev["val"].to_list() == [r["val_acc"] for r in again]
    assert ev["best_epoch"].to_list() == [r["best_epoch"] for r in again]


def test_tune_generic_objective_and_budget():
    seen = []

    def objective(cfg):
        seen.append(cfg)
        return {"val": -abs(np.log10(cfg["lr"]) + 2), "test": np.log10(cfg["lr"])}

    space = {"lr": SEARCH_SPACE["lr"], "hidden": SEARCH_SPACE["hidden"]}
    study = tune(objective, 12, seed=1, space=space)
    assert len(seen) == 12 and set(seen[0]) == {"lr", "hidden"}
    best = max(study.trials, key=lambda t: t.value)
    assert study.best_trial.number == best.number
    assert all(1e-3 <= c["lr"] <= 1e-1 and c["hidden"] in (32, 64, 128, 256) for c in seen)
    again = []
    tune(lambda c: again.append(c) or {"val": 0.0}, 12, seed=1, space=space)
    assert [c["lr"] for c in again[:10]] == [c["lr"] for c in seen[:10]]  # seeded startup


def test_results_rows_and_resume(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(tuning, "train_runs", _fake_engine(calls))
    data = _graph()
    full = tune_node_classifier(data, model="gcn", split="random", search=Search(n_trials=6, n_eval=2),
                                results=tmp_path / "full.csv")
    path = tmp_path / "res.csv"
    tune_node_classifier(data, model="gcn", split="random", search=Search(n_trials=3, n_eval=2), results=path)
    calls.clear()
    resumed = tune_node_classifier(data, model="gcn", split="random", search=Search(n_trials=6, n_eval=2),
                                   results=path)
    # a resumed search proposes the same configurations as an uninterrupted one
    pd.testing.assert_frame_equal(resumed["trials"].drop(columns="seconds"),
                                  full["trials"].drop(columns="seconds"))
    assert resumed["best_params"] == full["best_params"]
    assert sum(c["seeds"] == [0] for c in calls) == 3  # only the 3 new trials were trained
    # a new best trial is evaluated on seed 1 only (seed 0 is its own run); an old one was evaluated before
    trained_here = any(c["seeds"] == [0] and c["lr"] == resumed["best_params"]["lr"] for c in calls)
    assert [c["seeds"] for c in calls if c["seeds"] != [0]] == ([[1]] if trained_here else [])
    rows = pd.read_csv(path)
    assert (rows["phase"] == "trial").sum() == 6
    assert set(rows.columns) >= {"params", "code_version", "val", "test", "protocol", "dataset", "host"}
    assert rows["host"].notna().all()
    assert rows["protocol"].eq("random").all() and rows["dataset"].eq("toy").all()
    assert json.loads(rows["params"].iloc[0]).keys() == SEARCH_SPACE.keys()
    assert {c["checkpoint"] for c in calls} == {tmp_path / ".res.checkpoints"}  # long batches resume too
    calls.clear()
    again = tune_node_classifier(data, model="gcn", split="random", search=Search(n_trials=6, n_eval=2), results=path)
    assert calls == [] and again["test_mean"] == resumed["test_mean"]  # nothing left to do
    assert len(pd.read_csv(path)) == len(rows)


def test_eval_batch_writes_each_batch_and_a_rerun_resumes_after_the_last(monkeypatch, tmp_path):
    calls = []
    fake = _fake_engine(calls)

    def dies_on_seed_2(data, model, tr, va, te, seeds, **kw):
        if 2 in seeds:
            raise KeyboardInterrupt  # the evaluation killed during its third seed
        return fake(data, model, tr, va, te, seeds, **kw)

    data, path = _graph(), tmp_path / "res.csv"
    monkeypatch.setattr(tuning, "train_runs", dies_on_seed_2)
    with pytest.raises(KeyboardInterrupt):
        tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=4), results=path,
                             execution=Execution(eval_batch=1))
    rows = pd.read_csv(path)
    assert sorted(rows.loc[rows["phase"] == "eval", "eval_seed"].unique()) == [0, 1]  # two seeds landed
    assert [c["seeds"] for c in calls[3:]] == [[1] * 5]  # one seed (k = 5 rounds) per batch; seed 0 reused
    calls.clear()
    monkeypatch.setattr(tuning, "train_runs", fake)
    out = tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=4), results=path,
                               execution=Execution(eval_batch=3))
    assert [c["seeds"] for c in calls] == [[2] * 5 + [3] * 5]  # only the missing seeds, in one batch
    assert sorted(out["eval"]["eval_seed"].unique()) == [0, 1, 2, 3] and len(out["eval"]) == 20
    everything = tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=4),
                                      results=tmp_path / "all.csv")
    assert out["test_mean"] == everything["test_mean"] and out["best_params"] == everything["best_params"]


def test_protocol_masks():
    data = _graph(n=150)
    tr, va, te, run_seed, run_round = protocol_masks(data, protocol="hpstrat", seeds=[0, 1], k=5)
    assert tr.shape == (150, 10) and list(run_seed) == [0] * 5 + [1] * 5
    assert (tr.int() + va.int() + te.int() == 1).all()  # every node in exactly one part per run
    assert (te[:, :5].sum(1) == 1).all()  # each node tested once per seed
    assert torch.equal(va[:, 0], te[:, 1])  # round i validates on fold i + 1
    tr, va, te, run_seed, _ = protocol_masks(data, protocol="random", seeds=[3, 4])
    assert tr.shape == (150, 2) and tr[:, 0].sum() == 90 and va[:, 0].sum() == 30
    assert (tr.int() + va.int() + te.int() == 1).all()
    assert not torch.equal(tr[:, 0], tr[:, 1])
    a = random_split_masks(150, [3])
    assert all(torch.equal(x[:, 0], y[:, 0]) for x, y in zip(a, (tr, va, te)))


def test_real_engine_node_and_link_smoke(tmp_path):
    data = _graph()
    space = {"lr": ("log", 0.01, 0.05), "hidden": ("cat", (16,)), "num_layers": ("cat", (2,)),
             "dropout": ("float", 0.0, 0.2), "feature_norm": ("cat", ("none", "standard")),
             "patience": ("cat", (10,))}
    out = tune_node_classifier(data, model="gcn", search=Search(n_trials=2, n_eval=2, space=space),
                               protocol=TUNING_PROTOCOL.replace(max_epochs=30, k=3), execution=Execution(device="cpu"),
                               results=tmp_path / "node.csv")
    assert out["k"] == 3 and 0.5 < out["test_mean"] <= 1 and len(out["eval"]) == 6
    link = tune_link_predictor(data, encoder="gcn", search=Search(n_trials=2, n_eval=2, space=space),
                               protocol=TUNING_PROTOCOL.replace(max_epochs=20), execution=Execution(device="cpu"),
                               results=tmp_path / "link.csv")
    # linked pairs share a class ring and informative features: well above chance
    assert link["protocol"] == "edge split 70/10/20" and 0.6 < link["test_mean"] <= 1
    assert pd.read_csv(tmp_path / "link.csv")["metric"].eq("roc_auc").all()


def test_feature_subsets_and_subset_features():
    subsets = feature_subsets(1433, FEATURE_STEPS["Cora"])
    assert [len(c) for c in subsets] == [200, 400, 600, 800, 1000, 1200, 1400, 1433]
    assert all(np.array_equal(a, b[:len(a)]) for a, b in zip(subsets, subsets[1:]))  # nested
    shuffled = feature_subsets(50, 20, seed=0)
    assert [len(c) for c in shuffled] == [20, 40, 50] and sorted(shuffled[-1]) == list(range(50))
    data = _graph()
    x = data.x.clone()
    x[x.abs() < 1] = 0
    cols = np.array([5, 0, 7])
    dense = subset_features(Data(x=x, edge_index=data.edge_index), cols)
    sparse = subset_features(Data(x=x.to_sparse_csr(), edge_index=data.edge_index), cols)
    assert torch.equal(dense.x, x[:, [5, 0, 7]])
    assert sparse.x.layout == torch.sparse_csr and torch.equal(sparse.x.to_dense(), dense.x)
    assert data.x.shape[1] == 12  # the original is untouched


def test_cora_feature_subset_real_data(data_root):
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora", root=data_root)
    sub = subset_features(data, feature_subsets(data.x.shape[1], FEATURE_STEPS["Cora"])[0])
    assert tuple(sub.x.shape) == (2708, 200)
    ref = data.x.to_dense()[:, :200] if data.x.layout != torch.strided else data.x[:, :200]
    got = sub.x.to_dense() if sub.x.layout != torch.strided else sub.x
    assert torch.equal(got, ref)


def test_run_feature_study_writes_the_feature_study_file(monkeypatch, data_root, tmp_path):
    """The runner's rows go to part2_features.csv (chapter 7's file), never into the node table."""
    monkeypatch.setattr(tuning, "train_runs", _fake_engine([]))
    table = runners.run_feature_study("Cora", model="mlp", search=Search(n_trials=1, n_eval=1), step=1000,
                                      protocol=TUNING_PROTOCOL.replace(max_epochs=2), results_dir=tmp_path,
                                      root=data_root)
    assert table["num_features"].to_list() == [1000, 1433]
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == ["part2_features.csv"]
    rows = pd.read_csv(tmp_path / "part2_features.csv")
    assert rows["dataset"].eq("Cora").all() and sorted(rows["num_features"].unique()) == [1000, 1433]
    assert runners.results_file("features", results_dir=tmp_path) == tmp_path / "part2_features.csv"
    with pytest.raises(ValueError, match=r"task must be one of \('node', 'link', 'features', .*\); got 'graph'"):
        runners.results_file("graph")
    with pytest.raises(ValueError, match=r"task must be one of \('node', 'link'\), got 'features'"):
        runners.run_tuning("Cora", task="features", root=data_root)


@pytest.mark.parametrize("kwargs,match", [
    (dict(model="gat"), "model must be one of"),
    (dict(split="kfold"), "split must be one of"),
    (dict(search=Search(n_trials=0)), r"search.n_trials must be an integer >= 1 \(one study; a dict per dataset is "
                                      r"for the runners\); got 0."),
    (dict(search=Search(n_trials={"toy": 2})), r"search.n_trials must be an integer >= 1 .*got \{'toy': 2\}"),
    (dict(search=Search(n_trials=2, n_eval=0)), "search.n_eval must be an integer >= 1; got 0."),
    (dict(search={"n_trials": 2}), r"search must be a hpstrat_book.part2.search.Search .*got dict"),
    (dict(protocol="hpstrat"), r"protocol must be a hpstrat_lite.protocol.Protocol .*got str"),
    (dict(execution="cpu"), r"execution must be a hpstrat_lite.protocol.Execution .*got str"),
    (dict(execution=Execution(eval_batch=0)), "execution.eval_batch must be None or an integer >= 1; got 0."),
    (dict(search=Search(n_trials=2, space={"lr": ("log", 0, 1)})), r"space\['lr'\] = .* is not a valid spec"),
])
def test_bad_inputs(monkeypatch, kwargs, match):
    monkeypatch.setattr(tuning, "train_runs", _fake_engine([]))
    with pytest.raises(ValueError, match=match):
        tune_node_classifier(_graph(), **{"search": Search(n_trials=2), **kwargs})


def test_bad_inputs_other_helpers():
    with pytest.raises(ValueError, match="encoder must be one of"):
        tune_link_predictor(_graph(), encoder="random", search=Search(n_trials=1))
    with pytest.raises(ValueError, match=r"split must be a hpstrat_book.part2.linkpred.EdgeSplit .*got tuple"):
        tune_link_predictor(_graph(), encoder="mlp", split=(0.05, 0.1))
    with pytest.raises(ValueError, match="step must be an integer >= 1"):
        feature_subsets(10, 0)
    with pytest.raises(ValueError, match=r"cols must lie in 0..11"):
        subset_features(_graph(), [0, 12])
    with pytest.raises(ValueError, match="ratios must be three positive fractions"):
        random_split_masks(10, [0], ratios=(0.5, 0.5, 0.0))
    with pytest.raises(ValueError, match="objective returned val=nan"):
        tune(lambda c: {"val": float("nan")}, 1)


def test_resume_keeps_recorded_trials_when_replay_differs(monkeypatch, tmp_path):
    monkeypatch.setattr(tuning, "train_runs", _fake_engine([]))
    path = tmp_path / "res.csv"
    tune_node_classifier(_graph(), model="mlp", split="random", search=Search(n_trials=3, n_eval=1), results=path)
    rows = pd.read_csv(path)
    params = json.loads(rows.loc[1, "params"])
    params["lr"] = 0.0011  # as if recorded under another history: the replay cannot match it
    rows.loc[1, "params"] = json.dumps(params, sort_keys=True)
    rows.loc[1, "val"] = 1 - 0.0011
    rows.to_csv(path, index=False)
    out = tune_node_classifier(_graph(), model="mlp", split="random", search=Search(n_trials=4, n_eval=1),
                               results=path)
    assert len(out["trials"]) == 4 and 0.0011 in out["trials"]["lr"].to_list()
    assert out["best_params"]["lr"] == out["trials"]["lr"].min()


def test_runner_writes_under_results_dir(tmp_path):
    out = runners.run_tuning("WS1000_0.4", task="link", model="mlp", search=Search(n_trials=1, n_eval=1),
                             protocol=TUNING_PROTOCOL.replace(max_epochs=2), results_dir=tmp_path)
    rows = pd.read_csv(tmp_path / "part2_link.csv")
    assert rows["dataset"].eq("WS1000_0.4").all() and set(rows["phase"]) == {"trial", "eval"}
    assert out["n_trials"] == 1
    assert runners.load_part2_dataset("WS1000").name == "WS1000"
    with pytest.raises(ValueError, match="synthetic names are 'WS1000' or 'WS1000_<gamma>'"):
        runners.load_part2_dataset("WS1000x")
    with pytest.raises(ValueError, match="task must be one of"):
        runners.run_tuning("WS1000", task="graph")


@pytest.mark.parametrize("name, gamma", [("WS1000", None), ("WS1000_0.4", 0.4), ("WS1000_0", 0.0),
                                         ("cora", None), ("Twitch-PTBR", None)])
def test_check_part2_dataset_names(name, gamma):
    assert runners.check_part2_dataset(name) == gamma


@pytest.mark.parametrize("name, message", [("WS1000_-1", "gamma >= 0"), ("WS1000_nan", "gamma >= 0"),
                                           ("WS1000x", "synthetic names"), ("Corra", "not a known dataset")])
def test_check_part2_dataset_rejects(name, message):
    with pytest.raises(ValueError, match=message):
        runners.check_part2_dataset(name)


def test_feature_study_rows_per_subset(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(tuning, "train_runs", _fake_engine(calls))
    table = tuning.feature_study(_graph(), model="gcn", step=5, search=Search(n_trials=2, n_eval=2),
                                 results=tmp_path / "fs.csv")
    assert table["num_features"].to_list() == [5, 10, 12]
    assert table["protocol"].eq("hpstrat").all() and table["test_std"].notna().all()
    rows = pd.read_csv(tmp_path / "fs.csv")
    assert sorted(rows["num_features"].unique()) == [5, 10, 12]
    assert (rows.groupby("num_features")["phase"].apply(lambda p: (p == "trial").sum()) == 2).all()
    calls.clear()
    tuning.feature_study(_graph(), model="gcn", step=5, search=Search(n_trials=2, n_eval=2),
                         results=tmp_path / "fs1.csv", execution=Execution(eval_batch=1))
    # per subset: 2 trials, then the 2 seeds one at a time, seed 0 being the best trial's own runs
    assert [c["runs"] for c in calls] == [5, 5, 5] * 3
    with pytest.raises(ValueError, match="step is needed for dataset 'toy'"):
        tuning.feature_study(_graph(), model="gcn", search=Search(n_trials=1))


def test_startup_trials_are_a_seeded_random_search():
    """The book's budgets (<= N_STARTUP_TRIALS) sample exactly what Optuna's RandomSampler would: TPE only
    models the scores after the start-up trials (what chapters 6-9 say)."""
    import optuna

    space = {"lr": SEARCH_SPACE["lr"], "hidden": SEARCH_SPACE["hidden"], "dropout": SEARCH_SPACE["dropout"]}
    seen = []
    tune(lambda c: seen.append(c) or {"val": -c["lr"]}, tuning.N_STARTUP_TRIALS, seed=3, space=space)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=3))
    dists = tuning.space_distributions(space)
    rand = []
    for _ in range(tuning.N_STARTUP_TRIALS):
        trial = study.ask(dists)
        rand.append(dict(trial.params))
        study.tell(trial, -trial.params["lr"])
    assert seen == rand


def test_precision_is_passed_on_recorded_and_keyed(monkeypatch, tmp_path):
    from hpstrat_book.necessity import summarize

    calls = []
    monkeypatch.setattr(tuning, "train_runs", _fake_engine(calls))
    data, path = _graph(), tmp_path / "res.csv"
    tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=2), results=path)
    assert {c["precision"] for c in calls} == {"float32"}
    rows = pd.read_csv(path)
    assert rows["precision"].eq("float32").all()
    # rows written before the column existed count as float32: the same call resumes them (trains nothing)
    rows.drop(columns="precision").to_csv(path, index=False)
    calls.clear()
    tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=2), results=path)
    assert calls == []
    # a bfloat16 study of the same configuration is a study of its own
    out = tune_node_classifier(data, model="mlp", search=Search(n_trials=3, n_eval=2), results=path,
                               execution=Execution(precision="bfloat16"))
    assert len(calls) == 3 + 1 and {c["precision"] for c in calls} == {"bfloat16"}
    assert out["precision"] == "bfloat16"
    rows = pd.read_csv(path)
    assert rows["precision"].isna().sum() == 13 and rows["precision"].eq("bfloat16").sum() == 13  # 3 trials + 2 x 5 runs
    summary = summarize(path)
    assert len(summary) == 1 and summary["precision"].iloc[0] == "float32"  # float32 preferred at equal budget
    summary = summarize(rows[rows["precision"].eq("bfloat16")])
    assert summary["precision"].tolist() == ["bfloat16"]
    with pytest.raises(ValueError, match=r"precision must be one of \('float32', 'bfloat16'\); got 'half'"):
        tune_node_classifier(data, model="mlp", search=Search(n_trials=1), execution=Execution(precision="half"))


# ---------------------------------------------------------------------------------------------
# The paper's split protocols and sampler seeds
# ---------------------------------------------------------------------------------------------

def test_per_class_split_counts():
    import numpy as np

    from hpstrat_book.part2.tuning import per_class_split_masks

    y = np.repeat([0, 1, 2], [100, 60, 55])
    tr, va, te = per_class_split_masks(y, [0, 1])
    for j in range(2):
        for c in range(3):
            assert int(tr[y == c, j].sum()) == 20 and int(va[y == c, j].sum()) == 30
        assert int(te[:, j].sum()) == len(y) - 150
        assert not (tr[:, j] & va[:, j]).any() and ((tr[:, j] | va[:, j] | te[:, j]).all())
    assert not (tr[:, 0] == tr[:, 1]).all()  # seeds give different splits


def test_planetoid_public_split_sizes():
    import pytest

    from hpstrat_lite import available_datasets
    from hpstrat_book.part2.protocols import public_split, with_public_split
    from hpstrat_book.part2.tuning import protocol_masks

    if "Cora" not in available_datasets():
        pytest.skip("Cora's raw files are not in the data root")
    tr, va, te = public_split("Cora")
    assert (int(tr.sum()), int(va.sum()), int(te.sum())) == (140, 500, 1000)
    from hpstrat_lite import load_dataset

    data = with_public_split(load_dataset("Cora"))
    mtr, mva, mte, run_seed, _ = protocol_masks(data, protocol="planetoid", seeds=[0, 1, 2])
    assert mtr.shape == (2708, 3) and (mtr[:, 1] == tr).all() and list(run_seed) == [0, 1, 2]
    with pytest.raises(ValueError, match="public split"):
        protocol_masks(load_dataset("Cora"), protocol="planetoid", seeds=[0])
    with pytest.raises(ValueError, match="no public Planetoid split"):
        public_split("Photo")


def test_sampler_seed_differs_per_dataset_and_model(tmp_path):
    from torch_geometric.data import Data
    import torch

    from hpstrat_book.part2.tuning import study_sampler_seed, tune_node_classifier

    seeds = {study_sampler_seed(d, m) for d in ("Cora", "CiteSeer", "Photo") for m in ("mlp", "gcn")}
    assert len(seeds) == 6 and study_sampler_seed("Cora", "MLP") == study_sampler_seed("Cora", "mlp")
    g = torch.Generator().manual_seed(0)
    data = Data(x=torch.randn(60, 4, generator=g), edge_index=torch.tensor([[i, i + 1] for i in range(59)]).t(),
                y=torch.arange(60) % 2, num_nodes=60)
    data.edge_index = torch.cat([data.edge_index, data.edge_index.flip(0)], 1)
    kw = dict(split="random", protocol=TUNING_PROTOCOL.replace(max_epochs=3), execution=Execution(device="cpu"),
              results=tmp_path / "r.csv")
    space = {"lr": ("log", 1e-3, 1e-1), "hidden": ("cat", (8, 16))}
    a = tune_node_classifier(data, model="mlp", search=Search(n_trials=2, n_eval=1, space=space,
                                                              sampler_seed=study_sampler_seed("x", "mlp")), **kw)
    b = tune_node_classifier(data, model="gcn", search=Search(n_trials=2, n_eval=1, space=space,
                                                              sampler_seed=study_sampler_seed("x", "gcn")), **kw)
    assert a["sampler_seed"] != b["sampler_seed"]
    assert list(a["trials"]["lr"]) != list(b["trials"]["lr"])  # different draws
    import pandas as pd

    rows = pd.read_csv(tmp_path / "r.csv")
    assert set(rows["sampler_seed"]) == {a["sampler_seed"], b["sampler_seed"]}


def test_protocol_search_and_execution_reach_the_runs_rows_and_study_name(monkeypatch, tmp_path):
    """Every field of the three values reaches what it decides: the runs (epochs, width, folds, device,
    threads), the rows (k, sampler seed, evaluation seeds) and the stored study's name."""
    import optuna

    calls = []
    monkeypatch.setattr(tuning, "train_runs", _fake_engine(calls))
    base = TUNING_PROTOCOL.replace(max_epochs=33, k=3, n_bins=4, hidden=24, dropout=0.1)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    out = tune_node_classifier(_graph(), model="mlp", protocol=base, results=tmp_path / "r.csv",
                               search=Search(n_trials=2, n_eval=2, space={"lr": SEARCH_SPACE["lr"]}, sampler_seed=7,
                                             storage=storage),
                               execution=Execution(device="cpu", num_threads=1))
    # the space draws lr only: the other fields are the protocol's, in every trial and evaluation
    assert {(c["max_epochs"], c["hidden"], c["dropout"], c["device"], c["num_threads"]) for c in calls} == {
        (33, 24, 0.1, "cpu", 1)}
    assert [c["runs"] for c in calls] == [3, 3, 3]  # k = 3 rounds: 2 trials, evaluation seed 1 (seed 0 reused)
    rows = pd.read_csv(tmp_path / "r.csv")
    assert rows["k"].eq(3).all() and rows["sampler_seed"].eq(7).all() and out["sampler_seed"] == 7
    assert sorted(rows.loc[rows["phase"] == "eval", "eval_seed"].unique()) == [0, 1]
    (name,) = optuna.get_all_study_names(storage)
    assert name.endswith("/dropout=0.1/hidden=24/max_epochs=33/n_bins=4")  # fixed fields name the study


def test_study_settings_of_the_default_protocols_are_those_of_the_committed_studies():
    # the stored studies' names (book/distributed.md) carry max_epochs and n_bins only
    from hpstrat_book.part2.necessity import LINK_SPACE, LINK_STUDY_PROTOCOL, NODE_SPACE, NODE_STUDY_PROTOCOL

    assert tuning._study_settings(NODE_STUDY_PROTOCOL, NODE_SPACE, ("max_epochs", "n_bins")) == {
        "max_epochs": 500, "n_bins": 10}
    assert tuning._study_settings(LINK_STUDY_PROTOCOL, LINK_SPACE, ("max_epochs",)) == {"max_epochs": 400}
    assert isinstance(TUNING_PROTOCOL, Protocol) and TUNING_PROTOCOL.k == 5


def test_link_tuning_passes_the_protocol_and_split_to_every_run(monkeypatch, tmp_path):
    seen = []

    def fake(data, **kw):
        seen.append(kw)
        return {"val_auc": 1 - kw["protocol"].lr, "test_auc": 0.5, "best_epoch": 1, "seconds": 0.0}

    monkeypatch.setattr(tuning, "run_link_prediction", fake)
    out = tune_link_predictor(_graph(), encoder="mlp", decoder="fd", split=EdgeSplit(0.05, 0.1),
                              search=Search(n_trials=2, n_eval=2), results=tmp_path / "l.csv",
                              protocol=TUNING_PROTOCOL.replace(max_epochs=17), execution=Execution(device="cpu"))
    assert {kw["protocol"].max_epochs for kw in seen} == {17} and {kw["decoder"] for kw in seen} == {"fd"}
    assert all(kw["out"] == kw["protocol"].hidden for kw in seen)  # embedding width = drawn width
    assert [kw["split"] for kw in seen[2:]] == [EdgeSplit(0.05, 0.1)] * 2  # evaluation: a new split per seed
    assert out["protocol"] == "edge split 85/5/10"
    assert set(pd.read_csv(tmp_path / "l.csv")["protocol"]) == {"edge split 85/5/10"}
