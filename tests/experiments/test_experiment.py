import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hpstrat_book.hpstrat import best_model_changes, cross_fold_std, rank_summary, std_reduction_share, sweep_cost
from hpstrat_lite.experiments.sweep import RUN_KEY, run_experiment
from hpstrat_book.timing import project_remaining
from hpstrat_lite._host import host_cpu
from hpstrat_lite.rows import TRAINING_COLUMNS, read_rows
from hpstrat_lite import PAPER_PROTOCOL, Execution

GRID = dict(datasets=["Texas"], models=["MLP", "GCN"], seeds=[0],
            protocol=PAPER_PROTOCOL.replace(max_epochs=30, patience=5), execution=Execution(progress=False))
QUIET = Execution(progress=False)


def test_killed_sweep_resumes_without_losing_or_repeating_runs(data_root, tmp_path):
    out = tmp_path / "sweep.csv"
    code = ("import sys; from hpstrat_lite.experiments.sweep import run_experiment; "
            "from hpstrat_lite.protocol import Execution, Protocol; "
            f"run_experiment(out=sys.argv[1], root=sys.argv[2], **{GRID!r})")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out), str(data_root)], env=os.environ.copy())
    deadline = time.time() + 120
    while not out.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = read_rows(out)
    assert 0 < len(partial) < 24, "the sweep should be killed after its first batch and before the last"
    full = run_experiment(out=out, root=data_root, **GRID)
    assert len(full) == 24 and not full.duplicated(RUN_KEY).any()
    # rows written before the kill are kept verbatim
    pd.testing.assert_frame_equal(full.iloc[: len(partial)].reset_index(drop=True), partial)
    # and a rerun of the finished sweep trains nothing
    again = run_experiment(out=out, root=data_root, **GRID)
    pd.testing.assert_frame_equal(again, full)
    # every run reached by a fresh, uninterrupted sweep has the same test accuracy
    fresh = run_experiment(out=tmp_path / "fresh.csv", root=data_root, **GRID)
    merged = full.merge(fresh, on=RUN_KEY, suffixes=("", "_fresh"))
    np.testing.assert_allclose(merged["test_acc"], merged["test_acc_fresh"])
    assert {"code_version", "test_homophily", "best_epoch", "seconds", "host"} <= set(full.columns)
    assert (full["host"] == host_cpu()).all()
    _check_run_columns(full, data_root)


def _check_run_columns(rows, data_root):
    """Each row's test-fold homophily, isolated count and run seed are those of its own split: the
    fold of make_folds(method, seed) that the row names (Appendix B regresses on test_homophily)."""
    from hpstrat_lite import load_dataset, make_folds, node_homophily
    from hpstrat_lite.experiments.sweep import run_seed

    for name, part in rows.groupby("dataset"):
        data = load_dataset(name, root=data_root)
        y = data.y.numpy()
        h = node_homophily(data.edge_index, y, data.num_nodes)
        for (method, seed), runs in part.groupby(["method", "seed"]):
            folds = make_folds(method, h, y, k=4, seed=int(seed), n_bins=10)
            for row in runs.itertuples():
                ht = h[folds == row.fold]
                assert row.test_homophily == pytest.approx(np.nanmean(ht))
                assert row.test_isolated == int(np.isnan(ht).sum())
                assert row.run_seed == run_seed(seed, row.fold)
        # the methods' test folds differ, so their test homophily does too
        per_method = part.groupby("method")["test_homophily"].apply(lambda v: tuple(np.round(v, 9)))
        assert per_method.nunique() == len(per_method)


def test_finished_pairs_load_nothing(data_root, tmp_path, monkeypatch):
    """A call whose pairs are all in the results file trains nothing and loads no dataset; a new model
    loads its dataset once and trains only its own runs."""
    from hpstrat_lite.experiments import sweep as experiment

    out = tmp_path / "runs.csv"
    first = run_experiment(out=out, root=data_root, **{**GRID, "models": ["MLP"]})
    real_plan = experiment._dataset_plan
    loaded = []
    monkeypatch.setattr(experiment, "_dataset_plan", lambda name, grid: loaded.append(name) or real_plan(name, grid))
    again = run_experiment(out=out, root=data_root, **{**GRID, "models": ["MLP"]})
    pd.testing.assert_frame_equal(again, first)
    assert loaded == []
    more = run_experiment(out=out, root=data_root, **{**GRID, "datasets": ["texas"], "models": ["MLP", "GCN"]})
    assert loaded == ["Texas"]
    assert len(more) == 24 and set(more["model"]) == {"MLP", "GCN"} and not more.duplicated(RUN_KEY).any()
    pd.testing.assert_frame_equal(more[more["model"] == "MLP"].reset_index(drop=True), first)


def test_bad_arguments(data_root, tmp_path):
    with pytest.raises(ValueError, match=r"methods must be a subset of"):
        run_experiment(["Texas"], methods=["kfold"], out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"model must be one of .*; got 'GIN'"):
        run_experiment(["Texas"], models=["GIN"], out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"workers must be an integer >= 1; got 0"):
        run_experiment(["Texas"], execution=Execution(workers=0), out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"fresh_process must be True or False; got 'yes'"):
        run_experiment(["Texas"], execution=Execution(fresh_process="yes"), out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"protocol must be a hpstrat_lite.protocol.Protocol .*got dict"):
        run_experiment(["Texas"], protocol={"max_epochs": 5}, out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"execution must be a hpstrat_lite.protocol.Execution .*got str"):
        run_experiment(["Texas"], execution="cpu", out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"max_epochs must be an integer >= 1; got 0"):
        run_experiment(["Texas"], protocol=PAPER_PROTOCOL.replace(max_epochs=0), out=tmp_path / "x.csv",
                       root=data_root)
    # the training fields are checked before anything is read or written
    with pytest.raises(ValueError, match=r"lr must be a number > 0; got 0"):
        run_experiment(["Texas"], protocol=PAPER_PROTOCOL.replace(lr=0), out=tmp_path / "x.csv", root=data_root)
    with pytest.raises(ValueError, match=r"feature_norm must be one of \(None, 'row', 'standard'\); got 'l2'"):
        run_experiment(["Texas"], protocol=PAPER_PROTOCOL.replace(feature_norm="l2"), out=tmp_path / "x.csv",
                       root=data_root)
    with pytest.raises(ValueError, match=r"execution.precision='bfloat16': run_experiment trains in 'float32'"):
        run_experiment(["Texas"], execution=Execution(precision="bfloat16"), out=tmp_path / "x.csv", root=data_root)
    assert not (tmp_path / "x.csv").exists()


def test_the_protocol_reaches_the_runs_and_their_rows(data_root, tmp_path):
    """k, n_bins, max_epochs and patience of the Protocol train the runs and key their rows."""
    protocol = PAPER_PROTOCOL.replace(k=3, n_bins=5, max_epochs=4, patience=None)
    rows = run_experiment("Texas", models=["MLP"], methods=["hpstrat"], seeds=[1], protocol=protocol,
                          out=tmp_path / "r.csv", root=data_root, execution=QUIET)
    assert len(rows) == 3 and sorted(rows["fold"]) == [0, 1, 2]
    assert (rows["k"] == 3).all() and (rows["n_bins"] == 5).all() and (rows["max_epochs"] == 4).all()
    assert (rows["epochs_run"] == 4).all() and rows["patience"].isna().all()  # patience None: every epoch runs
    from hpstrat_lite import load_dataset, make_folds, node_homophily

    data = load_dataset("Texas", root=data_root)
    y = data.y.numpy()
    h = node_homophily(data.edge_index, y, data.num_nodes)
    folds = make_folds("hpstrat", h, y, k=3, seed=1, n_bins=5)
    for row in rows.itertuples():
        assert row.test_homophily == pytest.approx(np.nanmean(h[folds == row.fold]))



def _spy_train_runs(monkeypatch):
    """The (model, protocol) of every train_runs call of the sweep, which imports it when called."""
    from hpstrat_lite.engine import train

    calls, real = [], train.train_runs
    monkeypatch.setattr(train, "train_runs", lambda data, model, *a, protocol, **kw: calls.append(
        (model, protocol)) or real(data, model, *a, protocol=protocol, **kw))
    return calls


def test_any_protocol_trains_and_its_rows_record_every_field(data_root, tmp_path, monkeypatch):
    """lr, weight decay, architecture and feature_norm reach train_runs and key the rows; a file holds one protocol."""
    from hpstrat_lite.experiments import sweep

    calls = _spy_train_runs(monkeypatch)
    out = tmp_path / "lr.csv"
    protocol = PAPER_PROTOCOL.replace(max_epochs=2, patience=None, lr=0.005, hidden=16, feature_norm="row")
    grid = dict(models=["MLP"], methods=["random"], out=out, root=data_root, execution=QUIET)
    rows = run_experiment("Texas", protocol=protocol, **grid)
    assert [(m, p) for m, p in calls] == [("MLP", protocol)]
    assert len(rows) == 4 and (rows["lr"] == 0.005).all() and (rows["hidden"] == 16).all()
    assert (rows["feature_norm"] == "row").all() and (rows["weight_decay"] == 5e-4).all()
    assert (rows["num_layers"] == 2).all() and (rows["dropout"] == 0.5).all() and (rows["epochs_run"] == 2).all()
    pd.testing.assert_frame_equal(run_experiment("Texas", protocol=protocol, **grid), rows)  # resumed: nothing trains
    assert len(calls) == 1
    # the same file with another lr (or the paper's) is refused; no row is added
    with pytest.raises(ValueError, match=r"holds rows of another protocol .*'lr': 0.005.*this run has .*'lr': 0.01"):
        run_experiment("Texas", protocol=PAPER_PROTOCOL.replace(max_epochs=2, patience=None), **grid)
    assert len(calls) == 1 and len(read_rows(out)) == 4
    # the default file names what differs from the paper
    monkeypatch.chdir(tmp_path)
    assert sweep.default_results_path(4, [0], lr=0.005).name == "gnn_k4_seed0_lr0.005.csv"
    assert sweep.default_results_path(4, [0], max_epochs=20, patience=20, hidden=32, feature_norm="row",
                                      dropout=0.2).name == "gnn_k4_seed0_e20_p20_h32_do0.2_fnrow.csv"
    assert sweep.default_results_path(4, [0], lr=0.01, feature_norm=None).name == "gnn_k4_seed0.csv"
    with pytest.raises(ValueError, match=r"default_results_path has no protocol field 'lrate'"):
        sweep.default_results_path(4, [0], lrate=0.1)


def test_rows_without_the_training_columns_are_paper_protocol_runs(data_root, tmp_path, monkeypatch):
    """Rows written before lr ... feature_norm were recorded (the committed files) are the paper's runs: done
    for a sweep of the paper's training fields, kept so when new rows add the columns, refused for another lr."""
    quick = PAPER_PROTOCOL.replace(max_epochs=2, patience=None)
    out = tmp_path / "old.csv"
    grid = dict(methods=["random"], out=out, root=data_root, execution=QUIET)
    first = run_experiment("Texas", models=["MLP"], protocol=quick, **grid)
    first.drop(columns=list(TRAINING_COLUMNS)).to_csv(out, index=False)  # as such rows were written
    calls = _spy_train_runs(monkeypatch)
    rows = run_experiment("Texas", models=["MLP", "GCN"], protocol=quick, **grid)
    assert [m for m, _ in calls] == ["GCN"]  # the old MLP rows are done
    raw = read_rows(out)  # GCN's rows brought the columns: the old rows' cells are empty
    assert len(raw) == 8 and raw["lr"].isna().sum() == 4 and raw["feature_norm"].isna().sum() == 4
    assert len(rows) == 8 and (rows["lr"] == 0.01).all() and (rows["feature_norm"] == "none").all()
    assert (rows["hidden"] == 64).all() and not rows.duplicated(RUN_KEY).any()
    run_experiment("Texas", models=["MLP", "GCN"], protocol=quick, **grid)
    assert len(calls) == 1
    with pytest.raises(ValueError, match=r"holds rows of another protocol"):
        run_experiment("Texas", models=["MLP"], protocol=quick.replace(dropout=0.2), **grid)


def _rows(stds):
    """Synthetic result rows whose per-(dataset, model, method) fold accuracies have the given spreads."""
    rows = []
    for (dataset, model, method), spread in stds.items():
        for fold, delta in enumerate([-1.5, -0.5, 0.5, 1.5]):
            rows.append({"dataset": dataset, "model": model, "method": method, "seed": 0, "fold": fold,
                         "test_acc": 0.5 + (0.1 if model == "B" and method == "random" else 0) + spread * delta / 100})
    return pd.DataFrame(rows)


def test_analysis_tables_on_known_rows():
    stds = {}
    for d in ["d1", "d2", "d3"]:
        for m in ["A", "B"]:
            stds[(d, m, "hpstrat")], stds[(d, m, "stratified")], stds[(d, m, "random")] = 1.0, 2.0, 3.0
    stds[("d3", "B", "hpstrat")] = 4.0
    rows = _rows(stds)
    std = cross_fold_std(rows)
    assert std.loc[(std.dataset == "d1") & (std.model == "A") & (std.method == "hpstrat"), "std"].item() == \
        pytest.approx(np.std([-1.5, -0.5, 0.5, 1.5], ddof=1))
    summary = rank_summary(rows)
    assert summary["per_model"].loc["A", "hpstrat"] == 1.0
    assert summary["per_model"].loc["B", "hpstrat"] == pytest.approx((1 + 1 + 3) / 3)
    assert summary["per_dataset"].loc["d3", "hpstrat"] == 2.0
    assert summary["global_mean"]["hpstrat"] == pytest.approx(8 / 6)
    assert summary["n_blocks"] == 6
    share = std_reduction_share(rows)
    assert share.loc["A"].iloc[0] == 1.0 and share.loc["B"].iloc[0] == pytest.approx(2 / 3)
    assert share.loc["all"].iloc[0] == pytest.approx(5 / 6)
    best = best_model_changes(rows)
    assert best.loc["d1", "random"] == "B" and best.loc["d1", "hpstrat"] == "A" and best["changes"].all()


def test_sweep_cost_sums_batch_wall_time():
    # one batch of 3 runs that took 60 s (20 s each) and one solo run of 30 s
    rows = pd.DataFrame({"dataset": ["d1", "d1", "d1", "d2"], "model": ["A", "A", "A", "B"],
                         "seconds": [20.0, 20.0, 20.0, 30.0]})
    cost = sweep_cost(rows)
    assert cost.loc["d1", "A"] == pytest.approx(1.0) and cost.loc["d2", "B"] == pytest.approx(0.5)
    assert np.isnan(cost.loc["d1", "B"])
    assert cost.loc["total", "total"] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="no 'seconds' column"):
        sweep_cost(rows.drop(columns="seconds"))


def test_analysis_rejects_empty_rows():
    with pytest.raises(ValueError, match="rows is empty"):
        cross_fold_std(pd.DataFrame(columns=["dataset", "model", "method", "seed", "test_acc"]))


def test_homophily_regression_recovers_a_known_slope():
    from hpstrat_book.hpstrat import homophily_regression, regression_table

    rng = np.random.default_rng(0)
    h = rng.uniform(0.2, 0.8, 200)
    rows = pd.DataFrame({"dataset": "d", "model": "m", "test_homophily": h,
                         "test_acc": 0.3 + 0.5 * h + rng.normal(0, 0.05, 200)})
    fit = homophily_regression(rows)
    assert fit["slope"] == pytest.approx(0.5, abs=0.05) and fit["p_value"] < 1e-10 and 0.5 < fit["r2"] < 1
    noise = rows.assign(test_acc=rng.normal(0.5, 0.05, 200))
    assert homophily_regression(noise)["p_value"] > 0.01
    table = regression_table(pd.concat([rows, noise.assign(model="noise")]))
    assert table.set_index("model")["significant"].to_dict() == {"m": True, "noise": False}
    with pytest.raises(ValueError, match="at least 3 runs"):
        homophily_regression(rows.iloc[:2])


def _append_many(path, worker, count):
    from hpstrat_lite.rows import append_rows

    for i in range(count):
        append_rows(path, [{"worker": worker, "i": i}])


def test_concurrent_appends_from_several_processes_lose_no_rows(tmp_path):
    """Two sweeps (or a sweep and a Part II runner) may append to one results file at once."""
    import multiprocessing as mp

    from hpstrat_lite.rows import TRAINING_COLUMNS, read_rows

    path = tmp_path / "rows.csv"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(path, w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    rows = read_rows(path)
    assert len(rows) == 100
    assert sorted(map(tuple, rows[["worker", "i"]].to_numpy().tolist())) == [(w, i) for w in range(4) for i in range(25)]


def test_read_rows_concatenates_a_list_of_files_and_skips_missing_ones(tmp_path):
    from hpstrat_lite.rows import append_rows, read_rows

    append_rows(tmp_path / "a.csv", [{"seed": 0, "acc": 0.5}])
    append_rows(tmp_path / "b.csv", [{"seed": 1, "acc": 0.6}, {"seed": 2, "acc": 0.7}])
    rows = read_rows([tmp_path / "a.csv", tmp_path / "missing.csv", tmp_path / "b.csv"])
    assert rows["seed"].tolist() == [0, 1, 2] and rows.index.tolist() == [0, 1, 2]
    assert read_rows([tmp_path / "missing.csv"]).empty and read_rows(tmp_path / "missing.csv").empty


def test_project_sweep_time_bounds_and_resumes(data_root, tmp_path):
    project_sweep_time = _script("benchmarks/bench_sweep.py").project_sweep_time

    rows = run_experiment(out=tmp_path / "sweep.csv", root=data_root, **GRID)
    out = tmp_path / "projection.csv"
    table = project_sweep_time(rows, threads=1, short=1, long=3, root=data_root, out=out, progress=False)
    assert list(zip(table["dataset"], table["model"])) == [("Texas", "MLP"), ("Texas", "GCN")]
    for model, pair in rows.groupby("model"):
        got = table.set_index("model").loc[model]
        assert got["runs"] == 12 and got["sum_epochs_run"] == pair["epochs_run"].sum()
        assert got["max_epochs_run"] == pair["epochs_run"].max()
    assert (table["per_epoch_s"] >= 0).all() and (table["low_min"] <= table["high_min"]).all()
    assert table["load_s"].iloc[0] > 0 and table["load_s"].iloc[1] == 0  # loading counted once per dataset
    assert {"code_version", "threads", "short", "long", "host"} <= set(read_rows(out).columns)
    again = project_sweep_time(rows, threads=1, short=1, long=3, root=data_root, out=out, progress=False)
    pd.testing.assert_frame_equal(again, read_rows(out))  # resumed: nothing re-timed
    with pytest.raises(ValueError, match="0 < short < long"):
        project_sweep_time(rows, short=3, long=3)
    with pytest.raises(ValueError, match="rows is empty"):
        project_sweep_time(pd.DataFrame())


def test_projection_history_sums_each_measurement_in_order():
    from hpstrat_book.timing import projection_history

    projection = pd.DataFrame({
        "dataset": ["A", "B", "A", "B", "A"], "model": "GCN", "low_min": [1.0, 2.0, 4.0, 8.0, 16.0],
        "high_min": [2.0, 3.0, 5.0, 9.0, 17.0], "code_version": ["new", "new", "old", "old", "new"],
        "threads": [2, 2, 2, 2, 1],
        "finished_at": ["2026-11-30T12:00:00", "2026-11-30T12:01:00", "2026-11-30T09:00:00",
                        "2026-11-30T09:05:00", "2026-11-30T13:00:00"]})
    got = projection_history(projection)
    assert list(zip(got["code_version"], got["threads"])) == [("old", 2), ("new", 2), ("new", 1)]
    assert got["pairs"].tolist() == [2, 2, 1] and got["low_min"].tolist() == [12.0, 3.0, 16.0]
    assert got["high_min"].tolist() == [14.0, 5.0, 17.0]
    assert got.loc[1, "started"] == "2026-11-30T12:00:00" and got.loc[1, "finished"] == "2026-11-30T12:01:00"
    assert got["host"].tolist() == ["", "", ""]  # rows from before hosts were recorded
    assert projection_history(projection.iloc[:0]).empty
    hosts = projection.assign(host=["Intel", "Intel", None, None, "AMD"])
    assert projection_history(hosts)["host"].tolist() == ["", "Intel", "AMD"]


def test_results_files_get_the_usual_permissions(tmp_path):
    import stat

    from hpstrat_lite.rows import append_rows

    path = tmp_path / "rows.csv"
    append_rows(path, [{"a": 1}])
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_project_remaining_scales_the_measured_pairs_by_the_runs_left():
    projection = pd.DataFrame({"dataset": ["A", "A", "B", "A"], "model": ["GCN", "MLP", "GCN", "GCN"],
                               "low_min": [99.0, 1.2, 4.8, 12.0], "high_min": [99.0, 2.4, 9.6, 24.0],
                               "code_version": ["old", "v", "v", "v"], "threads": 2})  # A/GCN measured twice
    done = [{"dataset": "A", "model": "GCN", "method": m, "k": 5, "seed": 0, "fold": f}
            for m in ("random", "stratified", "hpstrat") for f in range(5)]
    partial = [{"dataset": "A", "model": "MLP", "method": "random", "k": 5, "seed": 0, "fold": f} for f in range(5)]
    other_k = [{"dataset": "B", "model": "GCN", "method": "random", "k": 4, "seed": 0, "fold": 0}]
    left = project_remaining(pd.DataFrame(done + partial + other_k), projection, 5, [0]).set_index(["dataset", "model"])
    assert list(left.index) == [("A", "MLP"), ("B", "GCN")]  # A/GCN has all 15 runs
    assert left.loc[("A", "MLP"), "runs_left"] == 10 and left.loc[("B", "GCN"), "runs_left"] == 15
    assert left.loc[("A", "MLP"), "low_min"] == pytest.approx(1.2 * 10 / 12)
    assert left.loc[("B", "GCN"), "high_min"] == pytest.approx(9.6 * 15 / 12)
    six = project_remaining(pd.DataFrame(done), projection, 4, range(6))  # 72 runs a pair; the newest A/GCN row
    assert six.set_index(["dataset", "model"]).loc[("A", "GCN"), "low_min"] == pytest.approx(12.0 * 72 / 12)
    assert project_remaining(pd.DataFrame(), projection.iloc[:0], 5, [0]).empty


def _runs(dataset, model, k, seeds, folds=None, methods=("random", "stratified", "hpstrat")):
    return [{"dataset": dataset, "model": model, "method": m, "k": k, "seed": s, "fold": f}
            for s in seeds for m in methods for f in (range(k) if folds is None else folds)]


def test_sweep_wall_time_reconstructs_the_command_span():
    from hpstrat_book.hpstrat import sweep_wall_time

    # batch 1: 2 runs, 10 s each, done at 12:00:20; batch 2: 2 runs, 30 s each, done at 12:01:30
    # (60 s of training in the 70 s since the previous stamp: 10 s untracked); batch 3: 1 run of 5 s
    # done at 12:11:35, 605 s after batch 2 with only 5 s of training: a 10-minute pause. The command
    # started at 12:00:00 (the first batch's 20 s before its stamp); 695 s passed until the last stamp.
    rows = pd.DataFrame({"dataset": ["d1", "d1", "d1", "d1", "d2"], "model": ["A", "A", "B", "B", "A"],
                         "seconds": [10.0, 10.0, 30.0, 30.0, 5.0],
                         "finished_at": ["2026-01-01T12:00:20"] * 2 + ["2026-01-01T12:01:30"] * 2
                         + ["2026-01-01T12:11:35"],
                         "host": ["cpu x"] * 5, "code_version": ["v1"] * 5})
    t = sweep_wall_time(rows)  # the 10-minute gap is a pause (> 5 min): two segments, 95 s of work
    assert (t["segments"], t["paused_min"]) == (2, pytest.approx(600 / 60))
    assert t["wall_min"] == pytest.approx(95 / 60) and t["train_min"] == pytest.approx(85 / 60)
    assert t["untracked_min"] == pytest.approx(10 / 60)
    assert t["max_untracked_min"] == pytest.approx(10 / 60) and t["max_untracked_before"] == "d1 / B"
    assert (t["runs"], t["pairs"]) == (5, 3)
    assert t["started"] == pd.Timestamp("2026-01-01T12:00:00")
    assert t["finished"] == pd.Timestamp("2026-01-01T12:11:35")
    assert t["hosts"] == ["cpu x"] and t["code_versions"] == ["v1"]
    one_go = sweep_wall_time(rows, pause_min=20)  # a longer threshold keeps the gap in the wall time
    assert (one_go["segments"], one_go["paused_min"]) == (1, 0.0)
    assert one_go["wall_min"] == pytest.approx(695 / 60) and one_go["untracked_min"] == pytest.approx(610 / 60)
    assert one_go["max_untracked_min"] == pytest.approx(600 / 60) and one_go["max_untracked_before"] == "d2 / A"
    with pytest.raises(ValueError, match="finished_at"):
        sweep_wall_time(rows.drop(columns="finished_at"))
    with pytest.raises(ValueError, match="rows is empty"):
        sweep_wall_time(rows.iloc[:0])
    with pytest.raises(ValueError, match="pause_min must be > 0"):
        sweep_wall_time(rows, pause_min=0)


def test_retimed_wall_time_swaps_the_retimed_pairs_training():
    from hpstrat_book.hpstrat import retimed_wall_time

    # the sweep of test_sweep_wall_time_reconstructs_the_command_span (95 s of wall time), plus run keys;
    # pair d1 / B (two runs of 30 s, disturbed) trained again alone in 12 s each
    timed = pd.DataFrame({"dataset": ["d1", "d1", "d1", "d1", "d2"], "model": ["A", "A", "B", "B", "A"],
                          "method": ["random", "hpstrat", "random", "hpstrat", "random"], "k": 4, "seed": 0,
                          "fold": 0, "best_epoch": [3, 4, 5, 6, 7], "test_acc": [0.5, 0.6, 0.7, 0.8, 0.9],
                          "seconds": [10.0, 10.0, 30.0, 30.0, 5.0],
                          "finished_at": ["2026-01-01T12:00:20"] * 2 + ["2026-01-01T12:01:30"] * 2
                          + ["2026-01-01T12:11:35"]})
    retimed = timed.iloc[2:4].assign(seconds=12.0, finished_at="2026-01-02T09:00:00")
    t = retimed_wall_time(timed, retimed.assign(best_epoch=[5, 9]))
    assert t["wall_min"] == pytest.approx(95 / 60)
    assert t["retimed_wall_min"] == pytest.approx((95 - 60 + 24) / 60)
    assert (t["timed_min"], t["retimed_min"]) == (pytest.approx(1.0), pytest.approx(0.4))
    assert (t["pairs"], t["runs"], t["same_results"]) == (["d1 / B"], 2, 1)
    with pytest.raises(ValueError, match="not the timed file's runs of their pairs"):
        retimed_wall_time(timed, retimed.iloc[:1])  # half a pair
    with pytest.raises(ValueError, match="not the timed file's runs of their pairs"):
        retimed_wall_time(timed, retimed.assign(fold=1))  # runs the timed file does not have
    with pytest.raises(ValueError, match="not the timed file's runs of their pairs"):
        retimed_wall_time(timed, pd.concat([retimed, retimed]))  # a run twice
    with pytest.raises(ValueError, match=r"retimed_rows lack the column\(s\) \['seconds'\]"):
        retimed_wall_time(timed, retimed.drop(columns="seconds"))
    with pytest.raises(ValueError, match="timed_rows is empty"):
        retimed_wall_time(timed.iloc[:0], retimed)


def test_code_version_is_taken_once_when_first_asked_not_at_import():
    """Importing the library runs no git; the first runner's call takes the version, later calls reuse it."""
    import subprocess
    import sys

    probe = ("import hpstrat_lite, hpstrat_lite.rows as r; a = r.code_version.cache_info().misses; "
             "print(a, r.code_version() == r.code_version(), r.code_version.cache_info().misses, "
             "r.code_version().startswith('0.'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "True", "1", "True"]


@pytest.mark.parametrize("commit, expected", [("abc1234", "0.1.0+abc1234.copy"), ("", "0.1.0")])
def test_code_version_of_a_copy_reads_hpstrat_commit(tmp_path, commit, expected):
    """The tree sent to a GPU machine: its rows name the commit passed in $HPSTRAT_COMMIT (without it and
    without .git, the version alone)."""
    import shutil

    import hpstrat_lite

    shutil.copytree(Path(hpstrat_lite.__file__).parent, tmp_path / "hpstrat_lite",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "HPSTRAT_COMMIT": commit, "PYTHONPATH": str(tmp_path),
           "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    probe = "import hpstrat_lite.rows as r; print(r.code_version())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env=env).stdout
    assert out.strip() == expected


def test_host_name_names_the_gpu_of_cuda_rows(monkeypatch):
    import torch

    from hpstrat_lite._host import host_name

    assert host_name("cpu") == host_cpu() and host_name(torch.device("cpu")) == host_cpu()
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda dev=None: "NVIDIA H200")
    assert host_name("cuda:0") == f"NVIDIA H200 + {host_cpu()}"


def test_hpstrat_commit_wins_over_the_git_of_the_checkout():
    """A copy of the checkout with an older .git: $HPSTRAT_COMMIT names the code that ran."""
    env = {**os.environ, "HPSTRAT_COMMIT": "abc1234"}
    probe = "import hpstrat_lite.rows as r; print(r.code_version())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "0.1.0+abc1234.copy"


@pytest.mark.slow
def test_device_sweep_script_rehearses_on_cpu(data_root, tmp_path):
    """benchmarks/device_sweep.sh, the GPU machine's one prepared script, run on a CPU for Texas: it unpacks
    the packed mirror, runs the CUDA tests (skipped here), trains every model (5 epochs: a rehearsal of the
    script, not of the training) and reports the wall time."""
    import tarfile

    repo = Path(__file__).resolve().parents[2]
    with tarfile.open(tmp_path / "data.tar.xz", "w:xz") as tar:
        tar.add(data_root / "texas", arcname="texas")
    env = {**os.environ, "DATASETS": "Texas", "DEVICE": "cpu", "PYTHON": sys.executable, "HPSTRAT_COMMIT": "test",
           "SWEEP_ARGS": "--max-epochs 5 --patience 5", "WORKDIR": str(tmp_path / "work")}
    out, logs = tmp_path / "run" / "timed.csv", tmp_path / "logs"
    done = subprocess.run(["bash", str(repo / "benchmarks" / "device_sweep.sh"), str(tmp_path / "data.tar.xz"),
                           str(out), str(logs), "300"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = read_rows(out)
    assert len(rows) == 8 * 3 * 4 and set(rows["dataset"]) == {"Texas"}  # 8 models x 3 methods x 4 folds
    assert (rows["host"] == host_cpu()).all() and (rows["code_version"] == "0.1.0+test.copy").all()
    assert read_rows(logs / "timed.csv").equals(rows)
    log = (logs / "device_sweep.log").read_text()
    assert "== CUDA tests" in log and "sweep exit code 0" in log and "'pairs': 8" in log



def test_sweep_masks_are_every_round_of_the_three_split_methods(data_root, monkeypatch):
    """The 12 runs of one (dataset, model) pair at k = 4: method after method (SPLIT_METHODS' order), round i
    tests on fold i, validates on fold i + 1 mod 4 and trains on the rest."""
    import torch

    from hpstrat_lite import load_dataset
    from hpstrat_lite.experiments.sweep import _labels_and_homophily, sweep_masks
    from hpstrat_lite.core.folds import SPLIT_METHODS, make_folds

    monkeypatch.setenv("HPSTRAT_DATA", str(data_root))
    data = load_dataset("Texas")
    tr, va, te = sweep_masks(data)
    assert tr.shape == va.shape == te.shape == (data.num_nodes, 3 * 4)
    assert ((tr.int() + va.int() + te.int()) == 1).all()
    y, h = _labels_and_homophily(data)
    for m, method in enumerate(SPLIT_METHODS):
        folds = torch.as_tensor(make_folds(method, h, y, k=4, seed=0))
        for i in range(4):
            assert torch.equal(te[:, 4 * m + i], folds == i)
            assert torch.equal(va[:, 4 * m + i], folds == (i + 1) % 4)


def test_a_quick_run_of_another_protocol_leaves_committed_results_untouched(data_root, tmp_path, monkeypatch):
    """`hpstrat experiment --max-epochs 20 --patience 20` on a committed sweep's file refuses; without --out it
    writes its own file named by the protocol."""
    import shutil

    from hpstrat_lite.experiments import sweep

    committed = Path(__file__).resolve().parents[2] / "results" / "gnn_k4_seed0.csv"
    copy = tmp_path / "gnn_k4_seed0.csv"
    shutil.copyfile(committed, copy)
    before = copy.read_bytes()
    with pytest.raises(ValueError, match=r"holds rows of another protocol .*'max_epochs': 20"):
        sweep.run_experiment(["Texas"], models=["MLP"], out=copy, protocol=PAPER_PROTOCOL.replace(max_epochs=20,
                                                                                                  patience=20),
                             execution=QUIET)
    assert copy.read_bytes() == before
    # the paper's protocol recognises the committed runs as done: nothing loaded, nothing trained
    loaded = []
    monkeypatch.setattr(sweep, "_dataset_plan", lambda name, grid: loaded.append(name))
    committed_rows = sweep.run_experiment(["Texas"], models=["MLP"], out=copy, execution=QUIET)
    assert loaded == [] and copy.read_bytes() == before and len(committed_rows) == len(read_rows(committed))
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)  # a runner's default folder is results/ of the working directory
    assert sweep.default_results_path(4, [0], max_epochs=20, patience=20).name == "gnn_k4_seed0_e20_p20.csv"
    assert sweep.default_results_path(4, [0]).name == "gnn_k4_seed0.csv"
    rows = sweep.run_experiment(["Texas"], models=["MLP"], methods=["random"],
                                protocol=PAPER_PROTOCOL.replace(max_epochs=5, patience=5), execution=QUIET)
    assert (tmp_path / "results" / "gnn_k4_seed0_e5_p5.csv").exists() and len(rows) == 4
    assert copy.read_bytes() == before


def _script(path):
    """A script of the repository (``benchmarks/``, ``tools/``: folders that are not packages), loaded from its file."""
    import importlib.util
    from pathlib import Path

    file = Path(__file__).resolve().parents[2] / path
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
