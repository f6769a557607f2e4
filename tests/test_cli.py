import numpy as np
import pytest

from hpstrat_lite.cli import main


def test_datasets_prints_table1(data_root, capsys):
    assert main(["--root", str(data_root), "datasets", "Cora", "Texas"]) == 0
    out = capsys.readouterr().out
    assert "Cora" in out and "2708" in out and "Texas" in out


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_split_writes_folds(data_root, tmp_path, capsys, suffix):
    out = tmp_path / f"folds{suffix}"
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "hpstrat", "--k", "4",
                 "--seed", "3", "--out", str(out)]) == 0
    folds = np.load(out) if suffix == ".npy" else np.loadtxt(out, delimiter=",", skiprows=1, dtype=int)[:, 1]
    assert folds.shape == (183,) and set(folds.tolist()) == {0, 1, 2, 3}
    assert "fold sizes [46, 46, 46, 45]" in capsys.readouterr().out
    # the folds are the library's for the method, seed and bins given (not the defaults)
    from hpstrat_lite import hpstrat_folds, load_dataset, node_homophily

    data = load_dataset("Texas", root=data_root)
    h = node_homophily(data.edge_index, data.y, data.num_nodes)
    np.testing.assert_array_equal(folds, hpstrat_folds(h, data.y.numpy(), k=4, n_bins=10, seed=3))
    assert not np.array_equal(folds, hpstrat_folds(h, data.y.numpy(), k=4, n_bins=10, seed=0))
    from hpstrat_lite import random_folds

    def split(*flags):
        other = tmp_path / f"other{suffix}"
        assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--k", "4", "--seed", "3", *flags,
                     "--out", str(other)]) == 0
        return np.load(other) if suffix == ".npy" else np.loadtxt(other, delimiter=",", skiprows=1, dtype=int)[:, 1]

    np.testing.assert_array_equal(split("--method", "random"), random_folds(data.y.numpy(), k=4, seed=3))
    bins5 = split("--method", "hpstrat", "--bins", "5")
    np.testing.assert_array_equal(bins5, hpstrat_folds(h, data.y.numpy(), k=4, n_bins=5, seed=3))
    assert not np.array_equal(bins5, folds)


def test_quality_prints_three_methods(data_root, capsys):
    assert main(["--root", str(data_root), "quality", "--dataset", "Cornell", "--k", "4", "--seeds", "3"]) == 0
    out = capsys.readouterr().out
    for word in ["hpstrat", "stratified", "random", "chd", "cdd", "sdd"]:
        assert word in out


def test_user_errors_exit_2_with_message(data_root, tmp_path, capsys):
    assert main(["--root", str(data_root), "split", "--dataset", "Coraa", "--out", str(tmp_path / "f.npy")]) == 2
    assert "Coraa" in capsys.readouterr().err
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--k", "2",
                 "--out", str(tmp_path / "f.npy")]) == 2
    assert "k=2 is too small" in capsys.readouterr().err
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--out", str(tmp_path / "f.txt")]) == 2
    assert "--out must end in .npy or .csv" in capsys.readouterr().err
    assert main(["--root", str(data_root), "quality", "--dataset", "Texas", "--seeds", "0"]) == 2
    assert "--seeds must be an integer >= 1; got 0." in capsys.readouterr().err
    # every dataset name, k and seed is checked before the first pair trains (the typo is last)
    out = tmp_path / "rows.csv"
    assert main(["--root", str(data_root), "experiment", "--datasets", "Texas", "Typo", "--models", "MLP",
                 "--out", str(out)]) == 2
    assert "'Typo' is not a known dataset" in capsys.readouterr().err and not out.exists()
    for flags, message in [(["--seeds", "-1"], "seeds must be an integer >= 0; got -1."),
                           (["--k", "2"], "k=2 is too small: a round needs a train, a validation and a test fold"),
                           (["--models", "GIN"], "model must be one of MLP, GCN"),
                           (["--workers", "0"], "workers must be an integer >= 1; got 0."),
                           (["--cpus-per-pair", "2"], "cpus_per_pair=2 needs executor='ray'"),
                           (["--executor", "local", "--fresh-process"], "fresh_process=True needs executor='ray'")]:
        assert main(["--root", str(data_root), "experiment", "--datasets", "Texas", *flags, "--out", str(out)]) == 2
        assert message in capsys.readouterr().err and not out.exists()


def test_experiment_appends_rows(data_root, tmp_path):
    import pandas as pd

    out = tmp_path / "rows.csv"
    args = ["--root", str(data_root), "experiment", "--datasets", "Cornell", "--models", "MLP", "--k", "3",
            "--seeds", "0", "1", "--bins", "5", "--max-epochs", "5", "--patience", "2", "--out", str(out)]
    assert main(args) == 0
    rows = pd.read_csv(out)
    assert len(rows) == 3 * 2 * 3 and set(rows["method"]) == {"random", "stratified", "hpstrat"}
    assert rows["epochs_run"].max() <= 5
    # the flags build the protocol that keys each row
    assert rows[["k", "n_bins", "max_epochs", "patience"]].drop_duplicates().values.tolist() == [[3, 5, 5, 2]]
    # the optimiser and model flags too: another protocol, refused in this file, recorded in its own
    flags = ["--lr", "0.005", "--weight-decay", "0", "--hidden", "16", "--num-layers", "3", "--dropout", "0.2",
             "--feature-norm", "row", "--seeds", "0"]
    assert main(args + flags) == 2 and len(pd.read_csv(out)) == 3 * 2 * 3
    other = tmp_path / "other.csv"
    assert main(args[:-1] + [str(other)] + flags) == 0
    rows = pd.read_csv(other)
    assert len(rows) == 3 * 3 and set(rows["seed"]) == {0}
    assert rows[["lr", "weight_decay", "hidden", "num_layers", "dropout", "feature_norm"]].drop_duplicates() \
        .values.tolist() == [[0.005, 0.0, 16, 3, 0.2, "row"]]


def test_training_flags_default_to_the_paper_protocol_and_are_checked(data_root, tmp_path, capsys):
    from hpstrat_lite.cli import _protocol, build_parser
    from hpstrat_lite.protocol import PAPER_PROTOCOL

    args = build_parser().parse_args(["experiment", "--datasets", "Cora"])
    assert _protocol(args) == PAPER_PROTOCOL
    args = build_parser().parse_args(["audit", "--data", "Cora", "--models", "GCN", "--out", "x", "--lr", "0.1"])
    assert _protocol(args) == PAPER_PROTOCOL.replace(lr=0.1)
    out = tmp_path / "rows.csv"
    for flags, message in [(["--dropout", "1"], "dropout must be a number in [0, 1); got 1.0"),
                           (["--lr", "0"], "lr must be a number > 0")]:
        assert main(["--root", str(data_root), "experiment", "--datasets", "Texas", "--models", "MLP", *flags,
                     "--out", str(out)]) == 2
        assert message in capsys.readouterr().err and not out.exists()




def test_split_with_the_controls_and_a_user_covariate(data_root, tmp_path, capsys):
    from hpstrat_lite import load_dataset
    from hpstrat_lite.core.covariates import covariate_folds, degree_folds, placebo_folds

    data = load_dataset("Texas", root=data_root)
    y = data.y.numpy()
    out = tmp_path / "f.npy"
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "degree", "--seed", "2",
                 "--out", str(out)]) == 0
    degree = np.bincount(data.edge_index[0].numpy(), minlength=data.num_nodes)
    np.testing.assert_array_equal(np.load(out), degree_folds(degree, y, k=4, seed=2))
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "placebo", "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), placebo_folds(y, k=4, seed=0))
    cov = tmp_path / "c.npy"
    np.save(cov, np.arange(183.0) ** 2)
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "covariate", "--covariate",
                 str(cov), "--binning", "quantile", "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), covariate_folds(np.arange(183.0) ** 2, y, k=4, binning="quantile"))
    capsys.readouterr()
    np.save(cov, np.arange(10.0))
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "covariate", "--covariate",
                 str(cov), "--out", str(out)]) == 2
    assert "covariate must be a 1-D array with one value per node (length 183)" in capsys.readouterr().err
    assert main(["--root", str(data_root), "split", "--dataset", "Texas", "--method", "covariate", "--out", str(out)]) == 2
    assert "--method covariate needs --covariate FILE.npy" in capsys.readouterr().err


def test_quality_prints_the_controls(data_root, capsys):
    assert main(["--root", str(data_root), "quality", "--dataset", "Texas", "--seeds", "2", "--methods", "hpstrat",
                 "placebo", "degree"]) == 0
    out = capsys.readouterr().out
    assert "placebo" in out and "degree" in out and "random" not in out


def test_necessity_prints_estimates_and_verdict(tmp_path, capsys):
    import numpy as np

    from hpstrat_lite.cli import main

    rng = np.random.default_rng(0)
    n = 2000  # enough test predictions for one split (probes.MIN_TEST_PREDICTIONS): the estimate's cheapest case
    y = rng.integers(0, 2, size=n)
    x = rng.normal(size=(n, 4)) + y[:, None]
    np.savez(tmp_path / "g.npz", edges=rng.integers(0, n, size=(3 * n, 2)), node_labels=y, node_features=x)
    assert main(["necessity", "--data", str(tmp_path / "g.npz"), "--metric", "roc_auc"]) == 0
    out = capsys.readouterr().out
    assert "label_informativeness" in out and "probe_gain" in out and "verdict: " in out
    assert main(["necessity", "--data", str(tmp_path / "missing.npz")]) == 2
    assert "necessity" in capsys.readouterr().err


def test_ladder_writes_rows_and_checks_lam(tmp_path, capsys):
    import pandas as pd

    from hpstrat_lite.cli import main

    out = tmp_path / "ladder.csv"
    assert main(["ladder", "--sizes", "80", "--lams", "0", "1", "--graph-seeds", "0", "--seeds", "0", "--models", "MLP",
                 "--threads", "1", "--out", str(out)]) == 0
    rows = pd.read_csv(out)
    assert len(rows) == 2 * 3 * 4 and set(rows["dataset"]) == {"cSBM_n80_lam0_snr0.75_F64_d5_g0",
                                                                "cSBM_n80_lam1_snr0.75_F64_d5_g0"}
    assert main(["ladder", "--sizes", "80", "--lams", "3", "--out", str(tmp_path / "bad.csv")]) == 2
    assert "hpstrat ladder: error: lam must be" in capsys.readouterr().err


def test_threads_flag_reaches_the_execution():
    from hpstrat_lite.cli import _execution, build_parser

    for command in (["experiment", "--datasets", "Texas"], ["audit", "--data", "Texas", "--models", "GCN", "--out", "a"]):
        assert _execution(build_parser().parse_args(command)).num_threads == "auto"
        assert _execution(build_parser().parse_args([*command, "--threads", "1"])).num_threads == 1


def test_reuse_freed_memory_flags_reach_the_execution():
    from hpstrat_lite.cli import _execution, build_parser

    command = ["experiment", "--datasets", "Texas"]
    assert _execution(build_parser().parse_args(command)).reuse_freed_memory == "auto"
    assert _execution(build_parser().parse_args([*command, "--reuse-freed-memory"])).reuse_freed_memory is True
    assert _execution(build_parser().parse_args([*command, "--no-reuse-freed-memory"])).reuse_freed_memory is False
