"""Beyond one process: the sweep on Ray (same rows as the local executor, resumable after a kill) and
Part II studies shared by several processes through an Optuna SQLite storage."""
import functools
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import torch

from hpstrat_lite.rows import read_rows
from hpstrat_lite.experiments.sweep import RUN_KEY, run_experiment
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution

GRID = dict(models=["MLP", "GCN"], seeds=[0], protocol=PAPER_PROTOCOL.replace(max_epochs=20, patience=5))
LOCAL, RAY = Execution(), Execution(executor="ray")
RESULT_COLS = ["run_seed", "best_epoch", "epochs_run", "train_acc", "val_acc", "test_acc", "val_loss",
               "test_homophily", "test_isolated", "batch_size", "device"]


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of 2 CPUs, no dashboard, shared by the module's tests and shut down after them;
    yields its address (for a second process to join)."""
    ray = pytest.importorskip("ray")
    # the workers import this module's factories, as a cluster's workers import a user's package
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(__file__), old]))
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.mark.serial
def test_ray_executor_gives_the_local_rows_bit_for_bit(data_root, tmp_path, local_ray):
    grid = {**GRID, "datasets": ["Texas", "Cornell"]}
    local = run_experiment(out=tmp_path / "local.csv", root=data_root, execution=LOCAL, **grid)
    out = tmp_path / "ray.csv"
    remote = run_experiment(out=out, root=data_root, execution=RAY, **grid)
    assert len(local) == len(remote) == 48 and not remote.duplicated(RUN_KEY).any()
    assert list(remote.columns) == list(local.columns)
    merged = local.merge(remote, on=RUN_KEY, suffixes=("", "_ray"))
    assert len(merged) == 48
    for col in RESULT_COLS:
        np.testing.assert_array_equal(merged[col].to_numpy(), merged[f"{col}_ray"].to_numpy(), err_msg=col)
    again = run_experiment(out=out, root=data_root, execution=RAY, **grid)  # nothing left to train
    pd.testing.assert_frame_equal(again, remote)


@pytest.mark.serial
def test_killed_ray_run_resumes_without_lost_or_repeated_rows(data_root, tmp_path, local_ray):
    """A driver joined to a Ray cluster is killed once the first pair's rows have landed; the same
    command again completes the grid, keeping the rows that landed and training the rest once."""
    out = tmp_path / "sweep.csv"
    datasets = ["Texas", "Cornell", "Wisconsin"]
    cmd = [sys.executable, "-m", "hpstrat_lite.cli", "--root", str(data_root), "experiment", "--datasets",
           *datasets, "--models", "MLP", "GCN", "--max-epochs", "20", "--patience", "5", "--out", str(out),
           "--executor", "ray", "--ray-address", local_ray]
    proc = subprocess.Popen(cmd, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 90
        while not out.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver's process group: the run is killed midway
        proc.wait()
    partial = read_rows(out)
    assert 0 < len(partial) < 72, "the run should be killed after its first pair and before its last"
    full = run_experiment(datasets, out=out, root=data_root, execution=RAY, **GRID)
    assert len(full) == 72 and not full.duplicated(RUN_KEY).any()
    pd.testing.assert_frame_equal(full.iloc[: len(partial)].reset_index(drop=True), partial)


class LinearNet(torch.nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = torch.nn.Linear(i, o)

    def forward(self, x, edge_index):
        return self.lin(x)


def make_linear_dying_once(in_channels, out_channels, *, marker):
    """A user's factory whose process dies the first time it is called (a lost Ray worker)."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return LinearNet(in_channels, out_channels)


@pytest.mark.serial
def test_a_factory_trains_on_ray_and_a_lost_worker_is_retried(data_root, tmp_path, local_ray):
    """The task receives the factory itself; its worker dies on the first call, Ray runs the task again
    (executors.MAX_RETRIES) and the rows equal a local run's."""
    (tmp_path / "local.marker").touch()
    grid = dict(datasets=["Texas"], seeds=[0], methods=["random", "hpstrat"],
                protocol=PAPER_PROTOCOL.replace(max_epochs=10, patience=5))
    local = run_experiment(models=[functools.partial(make_linear_dying_once, marker=str(tmp_path / "local.marker"))],
                           out=tmp_path / "local.csv", root=data_root, execution=LOCAL, **grid)
    dying = functools.partial(make_linear_dying_once, marker=str(tmp_path / "ray.marker"))
    remote = run_experiment(models=[dying], out=tmp_path / "ray.csv", root=data_root, execution=RAY, **grid)
    assert (tmp_path / "ray.marker").exists()  # the first worker died
    assert len(remote) == len(local) == 8 and set(remote["model"]) == {"test_distributed.make_linear_dying_once"}
    merged = local.merge(remote, on=RUN_KEY, suffixes=("", "_ray"))
    for col in ["test_acc", "val_loss", "test_roc_auc", "test_macro_f1", "best_epoch"]:
        np.testing.assert_array_equal(merged[col].to_numpy(), merged[f"{col}_ray"].to_numpy(), err_msg=col)


@pytest.mark.serial
def test_a_factory_the_workers_cannot_import_is_refused_before_any_pair(data_root, tmp_path, local_ray, monkeypatch):
    """A factory importable from the driver's sys.path but not from Ray's workers: one line with the fix, from a
    worker's import, before any pair is sent and without a Ray traceback."""
    import importlib
    import textwrap

    from hpstrat_lite import load_dataset
    from hpstrat_lite.auditing import audit

    pkg = tmp_path / "driver_only"
    pkg.mkdir()
    (pkg / "mymods.py").write_text(textwrap.dedent("""
        import torch

        def make(i, o):
            return torch.nn.Linear(i, o)
    """))
    monkeypatch.syspath_prepend(str(pkg))  # the driver's sys.path only, not PYTHONPATH: the workers lack it
    factory = importlib.import_module("mymods").make
    message = (rf"model factory 'mymods.make': Ray's workers cannot import its module 'mymods' \(ModuleNotFoundError: "
               rf"No module named 'mymods'\); the driver imports it from '{pkg}'\. Fix: export PYTHONPATH={pkg}:"
               rf"\$PYTHONPATH before `ray start`")
    with pytest.raises(ValueError, match=message):
        run_experiment(["Texas"], models=[factory], seeds=[0], methods=["hpstrat"], out=tmp_path / "x.csv",
                       root=data_root, execution=RAY, protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5))
    assert not (tmp_path / "x.csv").exists()  # no pair ran
    with pytest.raises(ValueError, match=message):
        audit(load_dataset("Texas", root=data_root), ["mymods:make"], methods=["hpstrat"], necessity=False,
              execution=Execution(executor="ray", progress=False),
              protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5))


def test_executor_arguments_are_checked(data_root, tmp_path):
    x = dict(datasets=["Texas"], out=tmp_path / "x.csv", root=data_root)
    for bad, match in ((dict(executor="dask"), r"executor must be one of \('local', 'ray'\); got 'dask'"),
                       (dict(workers=2), r"workers=2 needs executor='ray'"),
                       (dict(fresh_process=True), r"fresh_process=True needs executor='ray'"),
                       (dict(ray_address="h:6379"), r"ray_address='h:6379' needs executor='ray'"),
                       (dict(cpus_per_pair=2), r"cpus_per_pair=2 needs executor='ray'"),
                       (dict(executor="ray", workers=2, ray_address="h:6379"), r"workers=2 sizes a local Ray"),
                       (dict(executor="ray", ray_address=""), r"ray_address must be a non-empty string"),
                       (dict(executor="ray", cpus_per_pair=0),
                        r"cpus_per_pair must be None or an integer >= 1; got 0")):
        with pytest.raises(ValueError, match=match):
            run_experiment(execution=Execution(**bad), **x)
    assert not read_rows(x["out"]).shape[0]


_SHARED_STUDY = r"""
import sys, time
import numpy as np, torch
from torch_geometric.data import Data
import hpstrat_book.part2.tuning as tuning

CALLS = []

def train_runs(data, model, tr, va, te, seeds, *, protocol, execution):
    kw = {"lr": protocol.lr, "dropout": protocol.dropout}
    CALLS.append(kw["lr"])
    time.sleep(0.3)  # a trial takes a while, so the two processes interleave
    score = 1.0 - abs(np.log10(kw["lr"]) + 2) / 3 - kw["dropout"] / 10
    return [{"val_acc": score, "test_acc": score, "best_epoch": 3} for _ in range(tr.shape[1])]

tuning.train_runs = train_runs
n, rng = 60, np.random.default_rng(0)
y = torch.arange(n) % 3
ei = torch.from_numpy(np.stack([np.arange(n), (np.arange(n) + 3) % n]))
ei = torch.cat([ei, ei.flip(0)], 1)
data = Data(x=torch.from_numpy(rng.standard_normal((n, 4)).astype("float32")), edge_index=ei, y=y,
            num_nodes=n, name="toy")
out = tuning.tune_node_classifier(data, model="mlp", split="random", results=sys.argv[1],
                                  search=tuning.Search(n_trials=int(sys.argv[3]), n_eval=2, storage=sys.argv[2]))
print(len(CALLS), "evaluated" if len(out["eval"]) else "searched")
"""


def test_two_processes_share_one_sqlite_study(tmp_path, monkeypatch, capsys):
    """Two processes given the same SQLite storage run the budget between them: n_trials trials in
    total, every configuration once, ranks 0..n_trials-1, and one evaluation."""
    import optuna

    import hpstrat_book.part2.tuning as tuning

    results, storage, n_trials = tmp_path / "part2_node.csv", f"sqlite:///{tmp_path / 'studies.db'}", 10
    args = [sys.executable, "-c", _SHARED_STUDY, str(results), storage, str(n_trials)]
    procs = [subprocess.Popen(args, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=100) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    calls, roles = zip(*(o.strip().splitlines()[-1].split() for o, _ in outputs))
    assert sorted(roles) == ["evaluated", "searched"]
    assert min(map(int, calls)) >= 1 and sum(map(int, calls)) >= n_trials  # both processes ran trials
    rows = pd.read_csv(results)
    trials = rows[rows["phase"] == "trial"]
    assert len(trials) == n_trials and sorted(trials["trial"]) == list(range(n_trials))
    assert trials["params"].nunique() == n_trials  # no configuration trained twice
    (summary,) = optuna.get_all_study_summaries(storage)
    study = optuna.load_study(study_name=summary.study_name, storage=storage)
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(complete) == n_trials
    assert {t.user_attrs["rank"] for t in complete} == set(range(n_trials))
    assert summary.study_name.startswith("task=node/dataset=toy/model=MLP/protocol=random/k=1/")
    assert "max_epochs=1000" in summary.study_name
    evals = rows[rows["phase"] == "eval"]
    assert sorted(evals["eval_seed"]) == [0, 1]  # evaluated once, by one process
    assert (evals["params"] == trials.loc[trials["val"].idxmax(), "params"]).all()
    # a rerun (here, in this process: the script's fake training restored afterwards) finds the study
    # complete and idle: it trains nothing and adds no row
    monkeypatch.setattr(tuning, "train_runs", tuning.train_runs)
    monkeypatch.setattr(sys, "argv", args[2:])
    script = {}
    exec(_SHARED_STUDY, script)
    assert script["CALLS"] == [] and capsys.readouterr().out.split()[0] == "0"
    assert len(pd.read_csv(results)) == len(rows)


def test_storage_url_and_study_name():
    from hpstrat_book.part2.studies import storage_url, study_name

    assert storage_url("postgresql+psycopg2://u:p@h/db") == "postgresql+psycopg2://u:p@h/db"
    assert storage_url("studies.db").startswith("sqlite:////")
    with pytest.raises(ValueError, match=r"storage 'redis://h': the URL scheme must be one of"):
        storage_url("redis://h")
    key = {"task": "link", "dataset": "WS1000", "model": "gcn-dot", "protocol": "edge split 70/10/20", "k": 1,
           "num_features": 8, "tune_seed": 0, "space_id": "abc"}
    assert study_name(key, max_epochs=400) == ("task=link/dataset=WS1000/model=gcn-dot/protocol=edge split "
                                               "70/10/20/k=1/num_features=8/tune_seed=0/space_id=abc/max_epochs=400")


def test_cli_refuses_a_bad_storage_before_loading_anything(capsys):
    from hpstrat_book.part2.__main__ import main

    assert main(["tune", "node", "--datasets", "Cora", "--storage", "redis://h"]) == 2
    assert "the URL scheme must be one of ('sqlite', 'postgresql', 'mysql')" in capsys.readouterr().err
