import pandas as pd

from hpstrat_lite.experiments.graph_need import run_csbm_grid, run_estimates
from hpstrat_lite.experiments.probes import ESTIMATES


def test_csbm_grid_writes_rows_and_resumes(tmp_path):
    out = tmp_path / "grid.csv"
    logs = []
    rows = run_csbm_grid([0.0, 1.5], mus=[2.0], n=200, max_epochs=5, patience=5, out=out, log=logs.append)
    assert len(rows) == 2 * 4 and len(logs) == 2
    assert set(ESTIMATES) <= set(rows.columns) and rows["code_version"].notna().all()
    assert (rows["max_epochs"] == 5).all() and rows["mlp_test"].between(0, 1).all()
    again = run_csbm_grid([0.0, 1.5], mus=[2.0], n=200, max_epochs=5, patience=5, out=out, log=logs.append)
    assert len(again) == 8 and len(logs) == 2  # nothing recomputed


def test_estimates_rows_and_resume(tmp_path, data_root):
    out = tmp_path / "est.csv"
    rows = run_estimates(["Texas"], out=out, root=data_root, log=lambda m: None)
    assert list(rows["estimate"]) == list(ESTIMATES) and (rows["seconds"] > 0).all()
    assert rows["verdict"].nunique() == 1
    assert len(run_estimates(["Texas"], out=out, root=data_root, log=lambda m: None)) == len(ESTIMATES)
    assert isinstance(pd.read_csv(out)["code_version"].iloc[0], str)
