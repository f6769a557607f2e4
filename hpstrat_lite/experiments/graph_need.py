"""Runners for the graph-need estimates (:func:`hpstrat_lite.experiments.probes.necessity`): rows under ``results/``.

- :func:`run_estimates` writes ``results/necessity_estimates.csv``: every estimate of every graph, with
  its cost in seconds, one row per (graph, k, seed, estimate).
- :func:`run_csbm_grid` writes ``results/csbm_gaps.csv``: on a grid of contextual SBMs
  (:func:`hpstrat_lite.data.synthetic.make_csbm`), the estimates and the measured test accuracy of an MLP
  and a GCN (:func:`hpstrat_lite.engine.train.train_runs`) on the same HpStrat folds, one row per
  (setting, fold).

Both resume: a row whose key is already in the file is not computed again. Every row carries the code
version, the host and its parameters.
"""
from __future__ import annotations

import time
from os import PathLike
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from .._host import host_name
from ..core._validate import check_int, check_k
from ..core.folds import fold_masks, hpstrat_folds
from ..core.homophily import node_homophily
from ..protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value
from .probes import REDUCED_DIM, necessity
from .results import results_dir, append_rows, code_version, read_rows
from ..rows import TRAINING_COLUMNS, key_value, training_values, with_training_columns
from .sweep import run_seed

ESTIMATES_FILE = "necessity_estimates.csv"
CSBM_FILE = "csbm_gaps.csv"
ESTIMATE_KEY = ["dataset", "k", "seed", "metric", "reduced_dim", "estimate"]
CSBM_KEY = ["n", "lam", "mu", "avg_degree", "num_features", "graph_seed", "k", "seed", "fold", "max_epochs",
            "patience", *TRAINING_COLUMNS]
"""Columns that identify one row of the cSBM grid: the setting, the fold and every protocol field but ``n_bins``
(B = 10 always); rows written before ``lr`` ... ``feature_norm`` were recorded read as the paper's
(:func:`hpstrat_lite.rows.with_training_columns`)."""
CSBM_LAMS = (-2.0, -1.0, 0.0, 1.0, 2.0)
"""Graph signal of the grid: expected edge homophily about 0.05, 0.28, 0.5, 0.72, 0.95 at degree 5."""
CSBM_MUS = (0.0, 0.75, 1.5, 2.25, 3.0)
"""Feature signal of the grid: from none to about GPR-GNN's features-only setting (phi = 0, xi = 2.5)."""
CSBM_PROTOCOL = PAPER_PROTOCOL.replace(max_epochs=200, patience=50)
"""The cSBM grid's protocol: the paper's, shortened to 200 epochs and patience 50."""
GAIN_PARTS = {"probe_gain": ("folds", "designs", "features", "sgc", "hetero"),
              "sgc_gain": ("folds", "designs", "features", "sgc"),
              "hetero_gain": ("folds", "designs", "features", "hetero"),
              "lp_gain": ("folds", "designs", "features", "label_propagation")}
"""The parts of :func:`necessity`'s timing each gain needs (its cost); a label-only measure costs ``measures``."""


def estimate_rows(result) -> list[dict]:
    """One row per estimate of a :class:`hpstrat_lite.experiments.probes.GraphNeed`: ``estimate``, ``value``,
    ``low``, ``high``, ``seconds`` (what that estimate alone costs), and the call's ``verdict``, ``gap``,
    ``total_seconds``."""
    rows = []
    for r in result.table().itertuples(index=False):
        parts = GAIN_PARTS.get(r.estimate, ("measures",))
        rows.append({"estimate": r.estimate, "value": r.value, "low": r.low, "high": r.high,
                     "seconds": float(sum(result.seconds.get(p, 0.0) for p in parts))})
    for row in rows:
        row.update(verdict=result.verdict, gap=result.gap, total_seconds=result.seconds.get("total", np.nan))
    return rows


def run_estimates(datasets, *, k: int = 4, seed: int = 0, metric: str = "accuracy", out=None, root=None,
                  log=print):
    """Compute (or resume) :func:`necessity` on each dataset and append its estimates to ``out``
    (default ``results/necessity_estimates.csv``); returns the file's rows."""
    out = results_dir() / ESTIMATES_FILE if out is None else out
    version, host = code_version(), host_name("cpu")
    for name in datasets:
        done = read_rows(out)
        if not done.empty and ((done["dataset"] == name) & (done["k"] == k) & (done["seed"] == seed)
                               & (done["metric"] == metric) & (done["reduced_dim"] == REDUCED_DIM)).any():
            continue
        res = necessity(name, metric=metric, k=k, seed=seed, root=root)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        rows = [{"dataset": res.name, "k": k, "seed": seed, "metric": metric, "reduced_dim": REDUCED_DIM, **r,
                 "host": host, "code_version": version, "finished_at": stamp} for r in estimate_rows(res)]
        append_rows(out, rows)
        log(f"{res.name}: {res.verdict} ({res.gap:+.2f} points), {res.seconds['total']:.1f} s")
    return read_rows(out)


def run_csbm_grid(lams: Iterable[float] = CSBM_LAMS, *, mus: Iterable[float] = CSBM_MUS, n: int = 1000,
                  avg_degree: float = 5.0, num_features: int | None = None, graph_seed: int = 0, seed: int = 0,
                  protocol: Protocol = CSBM_PROTOCOL, out: str | PathLike | None = None,
                  log: Callable[[str], object] = print) -> pd.DataFrame:
    """Measure the MLP-versus-GCN gap and compute the estimates on each cSBM of the grid ``lams x mus``.

    Each setting is one graph (:func:`hpstrat_lite.data.synthetic.make_csbm` with ``graph_seed``), its HpStrat
    folds (``protocol.k`` folds, split seed ``seed``, B = 10), an MLP and a GCN trained on every round on the
    CPU under ``protocol`` (default :data:`CSBM_PROTOCOL`: the paper's, hidden 64, 2 layers, dropout 0.5, Adam
    lr 0.01, weight decay 5e-4, shortened to ``max_epochs=200`` and ``patience=50`` so that the 25 settings
    train in minutes on two CPU cores; every field but ``n_bins`` may change and is written in each row; run
    seeds as in the sweep), and :func:`necessity` on the same folds.
    One row per (setting, fold):
    the knobs, ``mlp_test``, ``gcn_test``, the probes' scores on that fold, the setting's estimates
    (``<estimate>`` columns: label measures as fractions, gains in points), ``verdict``,
    ``estimate_seconds`` (the necessity call) and ``train_seconds`` (both models).
    """
    from ..data.synthetic import make_csbm
    from ..engine.train import train_runs

    protocol, _ = check_protocol_value(protocol)
    if protocol.n_bins != CSBM_PROTOCOL.n_bins:
        raise ValueError(f"protocol.n_bins={protocol.n_bins!r}: run_csbm_grid uses B = {CSBM_PROTOCOL.n_bins} bins "
                         "(its rows do not record n_bins).")
    out = results_dir() / CSBM_FILE if out is None else out
    k, max_epochs, patience = check_k(protocol.k, n), protocol.max_epochs, protocol.patience
    check_int(graph_seed, "graph_seed", 0)
    version, host = code_version(), host_name("cpu")
    for lam in lams:
        for mu in mus:
            data = make_csbm(n, lam=lam, mu=mu, avg_degree=avg_degree, num_features=num_features, seed=graph_seed)
            key = {"n": n, "lam": float(lam), "mu": float(mu), "avg_degree": float(avg_degree),
                   "num_features": int(data.x.shape[1]), "graph_seed": graph_seed, "k": k, "seed": seed,
                   "max_epochs": max_epochs, "patience": patience, **training_values(protocol)}
            done = read_rows(out)
            if not done.empty and _has_setting(done, key):
                continue
            res = necessity(data, k=k, seed=seed)
            y = data.y.numpy()
            folds = hpstrat_folds(node_homophily(data.edge_index, y), y, k=k, seed=seed)
            train, val, test = fold_masks(folds, k=k)
            t = time.perf_counter()
            acc = {m: [r["test_acc"] for r in train_runs(data, m, train, val, test,
                                                          [run_seed(seed, f) for f in range(k)],
                                                          protocol=protocol, execution=Execution(device="cpu"))]
                   for m in ("MLP", "GCN")}
            train_seconds = time.perf_counter() - t
            estimates = {e: v for e, v in zip(res.table()["estimate"], res.table()["value"])}
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            rows = []
            for f in range(k):
                probes = res.folds.set_index("fold").loc[f]
                rows.append({**key, "fold": f, "mlp_test": acc["MLP"][f], "gcn_test": acc["GCN"][f],
                             **{f"probe_{p}": probes[p] for p in ("features", "sgc", "hetero", "graph",
                                                                  "label_propagation")},
                             **estimates, "verdict": res.verdict, "estimate_seconds": res.seconds["total"],
                             "train_seconds": train_seconds, "host": host, "code_version": version,
                             "finished_at": stamp})
            append_rows(out, rows)
            log(f"lam={lam:g} mu={mu:g}: GCN - MLP {100 * (np.mean(acc['GCN']) - np.mean(acc['MLP'])):+.1f}, "
                f"probe gain {res.gap:+.1f} ({res.verdict}); train {train_seconds:.0f} s")
    return read_rows(out)


def _has_setting(rows, key: dict) -> bool:
    rows = with_training_columns(rows)  # rows without the training fields: the paper's (CSBM_PROTOCOL's)
    mask = np.ones(len(rows), dtype=bool)
    for c, v in key.items():
        if c not in rows:
            return False
        mask &= rows[c].map(key_value).to_numpy() == key_value(v)
    return bool(mask.any())


