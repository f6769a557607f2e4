"""The GNN chapter's loading and timing reports (hpstrat_book.hpstrat / .timing) on the committed rows."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from hpstrat_lite.rows import read_rows
from matplotlib.colors import to_hex

from hpstrat_book import plots, timing
from hpstrat_book.hpstrat import protocol_line, protocol_rows, random_split_rows

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _rows(dataset, model, method, seed, folds=4, acc=0.5):
    return [dict(dataset=dataset, model=model, method=method, k=folds, seed=seed, fold=f, test_acc=acc + f / 100,
                 max_epochs=1000, patience=100) for f in range(folds)]


def test_protocol_rows_keeps_complete_pairs_only(tmp_path):
    full = [r for m in ("random", "stratified", "hpstrat") for r in _rows("Cora", "GCN", m, 0)]
    partial = _rows("Texas", "GCN", "random", 0)
    other_k = _rows("Cora", "GAT", "random", 0, folds=5)
    path = tmp_path / "rows.csv"
    pd.DataFrame(full + partial + [dict(r, k=5) for r in other_k]).to_csv(path, index=False)
    rows, all_rows, coverage = protocol_rows(path, k=4, seeds=[0])
    assert set(rows["dataset"]) == {"Cora"} and len(rows) == 12
    assert len(all_rows) == 16  # the Texas pair is a run of the protocol, not yet a complete pair
    assert set(coverage["dataset"]) >= {"Cora", "Texas"}
    assert protocol_line(rows, 4).startswith("12 runs: 1 datasets x 1 models x 3 split methods x 4 folds")
    only = protocol_rows(path, k=4, seeds=[0], models=["GAT"])[1]
    assert only.empty


def test_protocol_rows_names_an_empty_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="results_file .*missing.csv.* has no rows"):
        protocol_rows(tmp_path / "missing.csv", k=4, seeds=[0])


def test_random_split_rows_filters_and_names_absent_pairs():
    rows = pd.DataFrame(_rows("Cora", "GCN", "random", 0) + _rows("Cora", "GCN", "random", 12)
                        + _rows("Cora", "GCN", "hpstrat", 0) + _rows("Texas", "MLP", "random", 1))
    kept, pairs, absent = random_split_rows(rows, datasets=["Cora", "Texas"], models=["GCN", "MLP"], k=4, n_seeds=10)
    assert len(kept) == 8 and pairs == [("Cora", "GCN"), ("Texas", "MLP")]
    assert absent == [("Cora", "MLP"), ("Texas", "GCN")]


def test_timing_reports_on_the_committed_sweep():
    committed = read_rows(RESULTS / "gnn_k4_seed0.csv")
    projection = read_rows(RESULTS / "sweep_projection.csv")
    items = timing.projection_report(committed, committed, projection, k=4, seeds=[0], datasets=["Cora"])
    assert isinstance(items[0], str) and "projected" in items[0]
    other = timing.projection_report(committed, committed, projection, k=5, seeds=[0], datasets=["Cora"])
    assert all(isinstance(i, str) or hasattr(i, "to_html") for i in other)
    files = sorted(RESULTS.glob("timed_k4_seed0*.csv"))
    report = timing.timed_sweeps_report(files, committed, projection)
    assert sum(isinstance(i, str) and i.startswith("#### `timed_k4_seed0") for i in report) == len(files)
    assert type(report[-1]).__name__ == "Figure"
    rerun = timing.rerun_report(committed, read_rows(RESULTS / "rerun_photo_k4_seed0.csv"), projection)
    assert "the rerun trained for" in rerun[0]


# --------------------------------------------------------------------------------------------------
# The reader's tables of the appendix


def test_hardware_label_names_the_machine_in_words():
    assert timing.hardware_label("NVIDIA H200 + Intel(R) Xeon(R) Processor, 16 cpus, avx512+amx", device="cuda") == \
        "NVIDIA H200 GPU"
    assert timing.hardware_label("Intel(R) Xeon(R) Processor, 2 cpus, avx512+amx", device="cpu") == "Intel Xeon CPU, 2 CPUs"
    assert timing.hardware_label("AMD EPYC, 2 cpus, avx512") == "AMD EPYC CPU, 2 CPUs"
    assert timing.hardware_label(None) == "CPU" and timing.hardware_label(float("nan"), device="cuda:0") == "GPU"


def test_sweep_command_says_what_differs_from_the_defaults():
    rows = pd.DataFrame(_rows("Texas", "GCN", "random", 0) + _rows("Cora", "MLP", "random", 0)
                        + _rows("Cora", "MLP", "random", 1))
    assert timing.sweep_command(rows) == ("hpstrat experiment --datasets Texas Cora --models GCN MLP --methods random "
                                          "--k 4 --seeds 0 1")
    quick = rows.assign(max_epochs=20, patience=20, device="cuda")
    assert timing.sweep_command(quick, out="results/gnn_k4_seeds0-1_e20_p20.csv").endswith(
        "--max-epochs 20 --patience 20 --device cuda")
    assert timing.sweep_command(rows, out="results/mine.csv").endswith("--out results/mine.csv")
    with pytest.raises(ValueError, match="rows is empty"):
        timing.sweep_command(rows.iloc[:0])


def test_reader_tables_on_the_committed_timed_sweeps():
    timed = sorted(RESULTS.glob("timed_k4_seed0*.csv"))
    if not timed:
        pytest.skip("no timed sweep committed")
    reruns = timing.full_rerun_table(timed)
    assert len(reruns) == len(timed) and (reruns["runs"] == 1152).all()
    assert (reruns["wall time (min)"] >= reruns["training (min)"] - 1e-9).all()
    assert reruns["wall time (min)"].is_monotonic_increasing
    assert reruns["command"].str.startswith("hpstrat experiment --datasets ").all()
    assert not reruns.to_string().count("dirty") and not reruns.to_string().count("(R)")  # no lab-log details
    committed = read_rows(RESULTS / "gnn_k4_seed0.csv")
    ranks = timing.rerun_rank_table(committed, timed)
    assert list(ranks.index) == ["random k-fold", "class-stratified", "HpStrat"]
    assert ranks.shape[1] == 2 + len(timed)
    assert ((ranks >= 1) & (ranks <= 3)).all().all()
    assert (ranks.drop(columns="paper").sum() - 6).abs().max() < 1e-9  # three methods' mean ranks sum to 6
    minutes = timing.minutes_per_dataset(timed)
    assert minutes.shape == (12, len(timed)) and minutes.columns.is_unique
    fig = plots.minutes_by_dataset_plot(minutes)
    used = {to_hex(c).upper() for coll in fig.axes[0].collections for c in coll.get_facecolors()}
    assert not used & set(plots.METHOD_COLORS.values()) and not used & set(plots.MODEL_COLORS.values())
    cost = timing.recorded_cost_table({"k = 4, seed 0": RESULTS / "gnn_k4_seed0.csv"})
    assert cost.loc[0, "runs"] == len(committed) and cost.loc[0, "training (h)"] > 0


def test_rerun_findings_read_the_cost_and_the_ranks_from_the_tables():
    reruns = pd.DataFrame({"hardware": ["GPU", "CPU", "CPU"], "command": ["c"] * 3, "runs": [1152] * 3,
                           "wall time (min)": [6.0, 150.0, 210.0], "training (min)": [5.4, 147.0, 189.0]})
    ranks = pd.DataFrame({"paper": [2.31, 2.20, 1.49], "committed results": [2.3, 1.9, 1.8],
                          "rerun on GPU": [2.3, 1.8, 1.9], "rerun on CPU": [2.35, 1.85, 1.8]},
                         index=["random k-fold", "class-stratified", "HpStrat"])
    recorded = pd.DataFrame({"runs": [1152, 1440], "training (h)": [3.25, 4.5]})
    box = timing.rerun_findings(reruns, ranks=ranks, recorded=recorded)
    assert "from **6 minutes** (GPU, 1152 runs) to **3.5 hours** (CPU, 1152 runs) over 3 timed reruns" in box
    assert "Training took 90.0% to 98.0% of the wall time" in box
    assert ("differ from the committed rows' by at most 0.10; the committed rows' two lowest methods (HpStrat 1.80, "
            "class-stratified 1.90) are 0.10 apart, within it, so their order is rerun-to-rerun noise: 1 of the 2 "
            "reruns keep their order.") in box
    assert "The 2 committed results files of the GNN chapters record 7.8 hours of training in 2592 runs." in box
    clear = timing.rerun_findings(reruns, ranks=ranks.assign(**{"committed results": [2.5, 2.0, 1.5]}))
    assert "are 0.50 apart, beyond that difference" in clear
    assert "No timed rerun of this protocol is committed" in timing.rerun_findings(None, recorded=recorded)


def test_reader_tables_name_a_file_without_rows(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"results_files\['x'\] = .*missing.csv.* has no rows"):
        timing.recorded_cost_table({"x": tmp_path / "missing.csv"})
    with pytest.raises(FileNotFoundError, match=r"timed_files names .*missing.csv.*, which has no rows"):
        timing.full_rerun_table([tmp_path / "missing.csv"])
    with pytest.raises(ValueError, match="minutes is empty"):
        plots.minutes_by_dataset_plot(pd.DataFrame())
