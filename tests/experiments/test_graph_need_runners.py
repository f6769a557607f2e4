import numpy as np
import pandas as pd

import pytest

from hpstrat_lite.experiments.graph_need import CSBM_PROTOCOL, run_csbm_grid, run_estimates
from hpstrat_lite.experiments.probes import ESTIMATES, PROBE_VERSION


def test_csbm_grid_writes_rows_and_resumes(tmp_path):
    out = tmp_path / "grid.csv"
    logs = []
    quick = CSBM_PROTOCOL.replace(max_epochs=5, patience=5)
    rows = run_csbm_grid([0.0, 1.5], mus=[2.0], n=1000, protocol=quick, out=out, log=logs.append)
    assert len(rows) == 2 * 4 and len(logs) == 2
    assert set(ESTIMATES) <= set(rows.columns) and rows["code_version"].notna().all()
    assert (rows["max_epochs"] == 5).all() and rows["mlp_test"].between(0, 1).all()
    again = run_csbm_grid([0.0, 1.5], mus=[2.0], n=1000, protocol=quick, out=out, log=logs.append)
    assert len(again) == 8 and len(logs) == 2  # nothing recomputed
    # rows without the training fields (written before they were recorded) are the paper's: still done
    again.drop(columns=["lr", "weight_decay", "hidden", "num_layers", "dropout", "feature_norm"]).to_csv(out, index=False)
    assert len(run_csbm_grid([0.0, 1.5], mus=[2.0], n=1000, protocol=quick, out=out, log=logs.append)) == 8
    assert len(logs) == 2
    # another lr is another row of the same setting
    rows = run_csbm_grid([0.0], mus=[2.0], n=1000, protocol=quick.replace(lr=0.005), out=out, log=logs.append)
    assert len(logs) == 3 and len(rows) == 12 and (rows["lr"] == 0.005).sum() == 4


def test_csbm_grid_adds_a_model_to_settings_already_there(tmp_path):
    from hpstrat_book.graph_need import csbm_gaps

    out = tmp_path / "grid.csv"
    logs = []
    quick = CSBM_PROTOCOL.replace(max_epochs=5, patience=5)
    run_csbm_grid([-1.0], mus=[2.0], n=1000, protocol=quick, models=("MLP", "GCN"), out=out, log=logs.append)
    rows = run_csbm_grid([-1.0], mus=[2.0], n=1000, protocol=quick, models=("MLP", "GCN", "gpr-gnn"), out=out,
                         log=logs.append)
    assert len(logs) == 2 and "added GPRGNN" in logs[1]
    assert len(rows) == 8 and rows["gprgnn_test"].notna().sum() == 4 and rows["mlp_test"].notna().sum() == 4
    assert rows["code_version"].notna().all() and rows["lr"].notna().all()
    grid = csbm_gaps(rows)
    assert len(grid) == 1 and grid["heterophily_gnn"].iloc[0] == "GPRGNN" and np.isfinite(grid["heterophily_gap"]).all()
    run_csbm_grid([-1.0], mus=[2.0], n=1000, protocol=quick, models=("MLP", "GPRGNN"), out=out, log=logs.append)
    assert len(logs) == 2  # nothing missing
    with pytest.raises(ValueError, match="models=()"):
        run_csbm_grid([-1.0], mus=[2.0], n=1000, protocol=quick, models=(), out=out, log=logs.append)


def test_csbm_grid_checks_its_protocol(tmp_path):
    assert (CSBM_PROTOCOL.max_epochs, CSBM_PROTOCOL.patience, CSBM_PROTOCOL.lr) == (200, 50, 0.01)
    for bad, match in ((dict(max_epochs=5), r"protocol must be a hpstrat_lite.protocol.Protocol .*got dict"),
                       (CSBM_PROTOCOL.replace(n_bins=5), r"protocol.n_bins=5: run_csbm_grid uses B = 10 bins"),
                       (CSBM_PROTOCOL.replace(k=2), r"k=2 is too small")):
        with pytest.raises(ValueError, match=match):
            run_csbm_grid([0.0], mus=[2.0], n=200, protocol=bad, out=tmp_path / "g.csv", log=print)
    assert not (tmp_path / "g.csv").exists()


def test_estimates_rows_resume_and_old_probe_rows_do_not_count_as_done(tmp_path, data_root):
    out = tmp_path / "est.csv"
    pd.DataFrame([{"dataset": "Texas", "k": 4, "seed": 0, "metric": "accuracy", "reduced_dim": 128,
                   "estimate": "probe_gain", "value": 0.0}]).to_csv(out, index=False)  # a version-1 row
    logs = []
    rows = run_estimates(["Texas"], out=out, root=data_root, log=logs.append)
    assert len(logs) == 1  # the old row did not count as done
    new = rows[rows["probe_version"] == PROBE_VERSION]
    assert len(rows) == 1 + len(ESTIMATES) and rows["probe_version"].isna().sum() == 1
    assert list(new["estimate"]) == list(ESTIMATES) and (new["seconds"] > 0).all()
    assert new["verdict"].nunique() == 1
    again = run_estimates(["Texas"], out=out, root=data_root, log=logs.append)  # resumes: nothing computed
    assert len(logs) == 1 and len(again) == len(rows)
    assert isinstance(pd.read_csv(out)["code_version"].iloc[-1], str)
