"""tools/progress.py: how far the sweep and the Part II studies are, and the commands that finish them."""
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

import hpstrat_lite.engine.train as train_module
from hpstrat_lite import fold_masks, random_folds
from hpstrat_book.part2 import necessity as runners
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution
from hpstrat_book.timing import project_remaining  # noqa: F401 (the scaling the tool uses)
from experiments.test_experiment import _runs
from conftest import mirror_has
from engine.test_train import _toy_graph
from test_necessity import _frame, _rows

_spec = importlib.util.spec_from_file_location("progress", Path(__file__).resolve().parents[2] / "tools" / "progress.py")
progress = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(progress)
protocol_files, protocol_progress = progress.protocol_files, progress.protocol_progress
resume_commands, seed_commands = progress.resume_commands, progress.seed_commands


def test_protocol_progress_counts_runs_per_seed_and_resume_commands_name_the_missing_seeds():
    projection = pd.DataFrame({"dataset": ["A", "A", "B"], "model": ["GCN", "MLP", "GCN"],
                               "low_min": [12.0, 1.2, 4.8], "high_min": [24.0, 2.4, 9.6], "code_version": "v",
                               "threads": 2})
    rows = pd.DataFrame(_runs("A", "GCN", 4, range(6))                 # complete
                        + _runs("A", "MLP", 4, [0])                    # seeds 1-5 missing
                        + _runs("B", "GCN", 4, [0, 1, 2, 3], folds=[0, 1])  # half of seeds 0-3, none of 4-5
                        + _runs("B", "GCN", 5, [0]))                   # another protocol: ignored
    table = protocol_progress(rows, projection, 4, range(6)).set_index(["dataset", "model"])
    assert table.loc[("A", "GCN"), "runs_left"] == 0 and table.loc[("A", "GCN"), "low_min"] == 0
    assert table.loc[("A", "MLP"), ["runs_done", "runs_left"]].tolist() == [12, 60]
    assert table.loc[("A", "MLP"), "seeds_left"] == (1, 2, 3, 4, 5)
    assert table.loc[("B", "GCN"), ["runs_done", "runs_left"]].tolist() == [24, 48]
    assert table.loc[("B", "GCN"), "seeds_left"] == tuple(range(6))
    assert table.loc[("A", "MLP"), "low_min"] == pytest.approx(1.2 * 60 / 12)  # project_remaining's scaling
    commands = resume_commands(table.reset_index(), 4)
    assert commands == ["hpstrat experiment --datasets A --models MLP --k 4 --seeds 1 2 3 4 5",
                        "hpstrat experiment --datasets B --models GCN --k 4 --seeds 0",  # seed 0 has its own file
                        "hpstrat experiment --datasets B --models GCN --k 4 --seeds 1 2 3 4 5"]
    assert resume_commands(protocol_progress(rows, projection, 4, [0]).iloc[:2], 4) == []  # A complete for seed 0
    per_seed = seed_commands(table.reset_index(), 4, range(6))
    assert [c for c, _ in per_seed[:2]] == [
        "hpstrat experiment --datasets A --models MLP --k 4 --seeds 1 --out results/gnn_k4_seeds1-5.csv",
        "hpstrat experiment --datasets A --models MLP --k 4 --seeds 2 --out results/gnn_k4_seeds1-5.csv"]
    assert per_seed[5][0] == "hpstrat experiment --datasets B --models GCN --k 4 --seeds 0 --out results/gnn_k4_seed0.csv"
    assert len(per_seed) == 5 + 6
    assert per_seed[0][1] == pytest.approx(1.2 * 60 / 12 / 5)  # A/MLP's minutes shared among its 5 missing seeds
    assert sum(m for _, m in per_seed) == pytest.approx(table["low_min"].sum())
    assert seed_commands(protocol_progress(rows, projection, 4, [0]).iloc[:2], 4, [0]) == []
    assert protocol_progress(rows, projection.iloc[:0], 4, [0]).empty


def test_the_controls_sweep_counts_its_own_methods_and_resumes_into_its_file(tmp_path, capsys):
    rows = [{"dataset": "Texas", "model": model, "method": m, "k": 4, "seed": s, "fold": f}
            for model, seeds in (("GCN", (0, 1, 2)), ("MLP", (0,))) for m in ("placebo", "degree")
            for s in seeds for f in range(4)]
    rows += [{"dataset": "Texas", "model": "MLP", "method": m, "k": 4, "seed": 1, "fold": f}  # the paper's methods
             for m in ("random", "stratified", "hpstrat") for f in range(4)]              # do not count here
    out = tmp_path / "controls.csv"
    pd.DataFrame(rows).to_csv(out, index=False)
    pd.DataFrame({"dataset": ["Texas", "Texas"], "model": ["GCN", "MLP"], "low_min": [1.2, 6.0],
                  "high_min": [2.4, 12.0], "code_version": "v", "threads": 2}).to_csv(tmp_path / "proj.csv", index=False)
    args = ["sweep", "--k", "4", "--seeds", "0", "1", "2", "--projection", str(tmp_path / "proj.csv"),
            "--methods", "placebo", "degree"]
    assert progress.main(args + ["--results", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 of 2 (dataset, model) pairs complete; 16 runs left, about 0.1 h" in printed  # 6.0 min x 16 / 12
    assert (f"hpstrat experiment --datasets Texas --models MLP --k 4 --seeds 1 2 --methods placebo degree "
            f"--out {out}") in printed
    assert progress.main(args + ["--results", str(out), str(out)]) == 2
    assert "needs the one results file of that sweep" in capsys.readouterr().err


def test_protocol_files_are_the_seed_files_of_one_k(tmp_path):
    for name in ("gnn_k4_seed0.csv", "gnn_k4_seeds1-5.csv", "gnn_k5_seed0.csv", "part2_node.csv"):
        (tmp_path / name).write_text("dataset\n")
    assert [f.name for f in protocol_files(4, tmp_path)] == ["gnn_k4_seed0.csv", "gnn_k4_seeds1-5.csv"]
    assert protocol_files(6, tmp_path) == []


def test_progress_prints_pairs_hours_and_the_commands(tmp_path, capsys):
    import pandas as pd

    rows = [{"dataset": "Texas", "model": "GCN", "method": m, "k": 5, "seed": 0, "fold": f}
            for m in ("random", "stratified", "hpstrat") for f in range(5)]
    pd.DataFrame(rows).to_csv(tmp_path / "gnn_k5_seed0.csv", index=False)
    pd.DataFrame({"dataset": ["Texas", "Texas"], "model": ["GCN", "MLP"], "low_min": [1.0, 6.0],
                  "high_min": [2.0, 12.0], "code_version": "v", "threads": 2}).to_csv(tmp_path / "proj.csv", index=False)
    assert progress.main(["sweep", "--k", "5", "--seeds", "0", "--results", str(tmp_path / "gnn_k5_seed0.csv"),
                 "--projection", str(tmp_path / "proj.csv")]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 (dataset, model) pairs complete; 15 runs left, about 0.1 h (0.2 h" in out
    assert "hpstrat experiment --datasets Texas --models MLP --k 5 --seeds 0" in out
    assert progress.main(["sweep", "--k", "5", "--seeds", "0", "1", "--results", str(tmp_path / "gnn_k5_seed0.csv"),
                 "--projection", str(tmp_path / "proj.csv"), "--per-seed"]) == 0
    out = capsys.readouterr().out.splitlines()
    # minutes scaled to k = 5 (15 runs per seed against the 12 measured): seed 1 needs GCN (1.25) and
    # MLP (7.5, half of its 15 for two missing seeds); seed 0 needs MLP only
    assert ("hpstrat experiment --datasets Texas --models GCN MLP --k 5 --seeds 1 --out results/gnn_k5_seed1.csv   "
            "# about 9 min") in out
    assert ("hpstrat experiment --datasets Texas --models MLP --k 5 --seeds 0 --out results/gnn_k5_seed0.csv   "
            "# about 8 min") in out
    assert progress.main(["sweep", "--k", "5", "--projection", str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err
    assert "none.csv has no rows" in err and "bench_sweep.py" in err


def test_study_progress_counts_trials_and_evaluation_runs(monkeypatch, data_root):
    for ds in ("Cora", "CiteSeer", "PubMed"):
        monkeypatch.setitem(runners.NODE_BUDGETS, ds, 3)
    df = _frame(_rows("Cora", "MLP", [[0.7, 0.8], [0.6, 0.7]], k=2),        # 3/3 trials, 2 seeds x 2 rounds
                _rows("Cora", "GCN", [], k=2, n_trials=2, trial_vals=(0.5, 0.6)),  # 2 of 3 trials
                _rows("CiteSeer", "MLP", [[0.7, 0.8]], k=2),                 # one seed of two
                _rows("CiteSeer", "GCN", [[0.7, 0.8], [0.7, 0.8]], k=3))      # another k: not this study
    p = progress.study_progress("node", df, datasets=["Cora", "CiteSeer", "PubMed"], n_eval=2, k=2,
                             root=data_root).set_index(["dataset", "model"])
    assert p.loc[("Cora", "MLP"), ["trials", "eval runs", "status", "command"]].tolist() == ["3/3", "4/4", "done", ""]
    assert p.loc[("Cora", "GCN"), ["trials", "status"]].tolist() == ["2/3", "tuning"]
    assert p.loc[("CiteSeer", "MLP"), ["eval runs", "status"]].tolist() == ["2/4", "evaluating"]
    assert p.loc[("CiteSeer", "MLP"), "command"].endswith("--datasets CiteSeer --models MLP --eval-batch 1")
    assert p.loc[("CiteSeer", "GCN"), "status"] == "not started"
    assert p.loc[("CiteSeer", "GCN"), "command"] == "python -m hpstrat_book.part2 tune node --datasets CiteSeer --models GCN"
    if not mirror_has("PubMed"):
        assert p.loc[("PubMed", "MLP"), "status"] == "raw files absent"
    link = _frame(_rows("WS1000", "MLP-dot", [[0.5]] * 5, task="link", k=1, protocol="edge split 70/10/20",
                        n_trials=12, trial_vals=(0.5,) * 12))
    p = progress.study_progress("link", link, datasets=["WS1000"]).set_index("model")
    assert p.loc["MLP", ["trials", "eval runs", "status"]].tolist() == ["12/12", "5/5", "done"]
    assert p.loc["GCN", "status"] == "not started"
    with pytest.raises(ValueError, match="feature_study_coverage"):
        progress.study_progress("features")


def test_command_line_progress_lists_what_is_left(tmp_path, capsys, data_root):
    node = _frame(_rows("Cora", "MLP", [[0.7] * 5] * 5, n_trials=30, trial_vals=(0.5,) * 30))
    node.to_csv(tmp_path / "part2_node.csv", index=False)
    assert progress.main(["studies", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "node: 1 of 14 studies done" in out and "link: 0 of 18 studies done" in out
    assert "python -m hpstrat_book.part2 tune node --datasets Cora --models GCN" in out
    assert "--datasets Cora --models MLP" not in out
    # feature studies not started: a command for each dataset whose raw files are here, none for PubMed
    assert "python -m hpstrat_book.part2 tune features --datasets Computers\n" in out
    assert "features --datasets PubMed" not in out
    # a partial feature study: the command that resumes it, with the hours its own points project
    feats = _frame(*[_rows("Cora", m, [[0.7] * 5] * 5, num_features=200) for m in ("MLP", "GCN")])
    feats["seconds"] = 60.0  # 3 trial rows + 25 evaluation rows: 28 minutes a point and model
    feats.to_csv(tmp_path / "part2_features.csv", index=False)
    assert progress.main(["studies", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "partial (MLP 1/8, GCN 1/8)" in out
    assert "features --datasets Cora  # about 6.5 h left here" in out  # 2 x 7 points x 28 min


def test_batches_in_flight_reads_the_checkpoints_of_an_interrupted_sweep(monkeypatch, tmp_path, capsys):
    """Two batches of two runs: the first finishes (its rows wait in a .rows.json), the second is killed
    after its first checkpoint; the engine reports both, and the sweep's status prints them."""
    data = _toy_graph(n=60, f=12)
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    ckpt = tmp_path / ".rows.checkpoints"
    monkeypatch.setattr(train_module, "CHECKPOINT_SECONDS", 0.0)
    real_save = train_module._save_checkpoint

    def killed_after_one_save_of_the_second_batch(*args, **kwargs):
        real_save(*args, **kwargs)
        if list(ckpt.glob("*.rows.json")):
            raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "_save_checkpoint", killed_after_one_save_of_the_second_batch)
    with pytest.raises(KeyboardInterrupt):
        train_module.train_runs(data, "GCN", tr, va, te, [0, 1, 2, 3],
                                protocol=PAPER_PROTOCOL.replace(max_epochs=30, patience=5),
                                execution=Execution(device="cpu", runs_per_batch=2, checkpoint=ckpt))
    flight = {batch["state"]: batch for batch in train_module.checkpoint_batches(ckpt)}
    assert sorted(flight) == ["finished", "training"]
    assert all(b["model"] == "GCN" and b["runs"] == 2 for b in flight.values())
    assert flight["training"]["epochs"] == 1 and flight["training"]["stopped"] == 0
    assert 1 <= flight["finished"]["epochs"] <= 30 and flight["finished"]["stopped"] == 2
    assert train_module.checkpoint_batches(tmp_path / "absent") == []
    assert progress.batches_in_flight(tmp_path / "absent").empty
    shown = progress.batches_in_flight(ckpt)
    assert sorted(shown["state"]) == ["finished", "training"]
    assert shown["saved"].str.match(r"\d{4}-\d\d-\d\d \d\d:\d\d$").all()

    pd.DataFrame({"dataset": ["Texas"], "model": ["GCN"], "low_min": [1.2], "high_min": [2.4], "code_version": "v",
                  "threads": 2}).to_csv(tmp_path / "projection.csv", index=False)
    pd.DataFrame([{"dataset": "Texas", "model": "GCN", "method": "placebo", "k": 4, "seed": 0, "fold": 0}]).to_csv(
        tmp_path / "rows.csv", index=False)
    assert progress.main(["sweep", "--k", "4", "--seeds", "0", "--methods", "placebo", "degree", "--results",
                          str(tmp_path / "rows.csv"), "--projection", str(tmp_path / "projection.csv")]) == 0
    out = capsys.readouterr().out
    assert "batches in flight" in out and "training" in out and "finished" in out
