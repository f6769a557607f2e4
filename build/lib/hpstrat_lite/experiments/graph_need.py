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
from .probes import FAMILIES, PROBE_VERSION, PROBES, REDUCED_DIM, necessity
from .results import results_dir, append_rows, code_version, read_rows
from ..rows import TRAINING_COLUMNS, key_value, training_values, with_training_columns
from .sweep import run_seed

ESTIMATES_FILE = "necessity_estimates.csv"
CSBM_FILE = "csbm_gaps.csv"
ESTIMATE_KEY = ["dataset", "k", "seed", "metric", "reduced_dim", "probe_version", "estimate"]
"""Columns that identify one estimate row; rows written before ``probe_version`` was recorded are version 1."""
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
_SHARED = ("folds", "designs", "features")
GAIN_PARTS = {"probe_gain": (*_SHARED, *FAMILIES["aggregation"], *FAMILIES["heterophily"]),
              "aggregation_gain": (*_SHARED, *FAMILIES["aggregation"]),
              "heterophily_gain": (*_SHARED, *FAMILIES["heterophily"]),
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
    (default ``results/necessity_estimates.csv``); returns the file's rows. An item of ``datasets`` is a
    name, or a pair ``(name, data)`` (a graph of :func:`hpstrat_lite.data.graphs.as_graph`'s kinds). Rows of
    an older :data:`hpstrat_lite.experiments.probes.PROBE_VERSION` do not count as done."""
    out = results_dir() / ESTIMATES_FILE if out is None else out
    version, host = code_version(), host_name("cpu")
    for item in datasets:
        name, data = item if isinstance(item, tuple) else (str(item), item)
        done = with_probe_version(read_rows(out))
        if not done.empty and ((done["dataset"] == name) & (done["k"] == k) & (done["seed"] == seed)
                               & (done["metric"] == metric) & (done["reduced_dim"] == REDUCED_DIM)
                               & (done["probe_version"] == PROBE_VERSION)).any():
            continue
        res = necessity(data, metric=metric, k=k, seed=seed, root=root)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        rows = [{"dataset": name, "k": k, "seed": seed, "metric": metric, "reduced_dim": REDUCED_DIM,
                 "probe_version": PROBE_VERSION, **r, "host": host, "code_version": version, "finished_at": stamp}
                for r in estimate_rows(res)]
        append_rows(out, rows)
        log(f"{name}: {res.verdict} ({res.gap:+.2f} points), {res.seconds['total']:.1f} s")
    return read_rows(out)


def with_probe_version(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a ``probe_version`` column: rows written before it was recorded are version 1."""
    if rows.empty:
        return rows
    rows = rows.copy()
    rows["probe_version"] = rows["probe_version"].fillna(1).astype(int) if "probe_version" in rows else 1
    return rows


def csbm_name(lam: float, mu: float, *, n: int = 1000, avg_degree: float = 5.0, graph_seed: int = 0) -> str:
    """The ``dataset`` name of a cSBM setting in the estimates file: ``cSBM(n=1000,lam=-2,mu=0,d=5,seed=0)``."""
    return f"cSBM(n={n},lam={lam:g},mu={mu:g},d={avg_degree:g},seed={graph_seed})"


def run_csbm_estimates(lams: Iterable[float] = CSBM_LAMS, *, mus: Iterable[float] = CSBM_MUS, n: int = 1000,
                       avg_degree: float = 5.0, num_features: int | None = None, graph_seed: int = 0,
                       k: int = 4, seed: int = 0, out=None, log=print) -> pd.DataFrame:
    """:func:`run_estimates` on the graphs of the cSBM grid (the graphs :func:`run_csbm_grid` trains on), each
    named by :func:`csbm_name`: the current probes' estimates of the grid without retraining its models."""
    from ..data.synthetic import make_csbm

    graphs = [(csbm_name(lam, mu, n=n, avg_degree=avg_degree, graph_seed=graph_seed),
               make_csbm(n, lam=lam, mu=mu, avg_degree=avg_degree, num_features=num_features, seed=graph_seed))
              for lam in lams for mu in mus]
    return run_estimates(graphs, k=k, seed=seed, out=out, log=log)


CSBM_MODELS = ("MLP", "GCN", "H2GCN", "GPRGNN", "MixHop")
"""Models the cSBM grid trains on every setting: the MLP, an aggregation GNN (GCN) and three heterophily-aware
ones (H2GCN: ego and neighbour channels kept apart, 1- and 2-hop; GPR-GNN: learned signed weights over 10 hops;
MixHop: powers 0, 1, 2 with separate weights)."""


def test_column(model: str) -> str:
    """The cSBM grid's column of ``model``'s test accuracy: ``<model>_test`` in lower case (``gcn_test``)."""
    from ..engine.models import check_model

    return f"{check_model(model).lower()}_test"


def run_csbm_grid(lams: Iterable[float] = CSBM_LAMS, *, mus: Iterable[float] = CSBM_MUS, n: int = 1000,
                  avg_degree: float = 5.0, graph_seed: int = 0, seed: int = 0,
                  protocol: Protocol = CSBM_PROTOCOL, models: Iterable[str] = CSBM_MODELS,
                  out: str | PathLike | None = None, log: Callable[[str], object] = print) -> pd.DataFrame:
    """Measure each model's test accuracy and compute the estimates on each cSBM of the grid ``lams x mus``.

    Each setting is one graph (:func:`hpstrat_lite.data.synthetic.make_csbm` with ``graph_seed``), its HpStrat
    folds (``protocol.k`` folds, split seed ``seed``, B = 10), every model of ``models`` (default
    :data:`CSBM_MODELS`) trained on every round on the CPU under ``protocol`` (default :data:`CSBM_PROTOCOL`:
    the paper's, hidden 64, 2 layers, dropout 0.5, Adam lr 0.01, weight decay 5e-4, shortened to
    ``max_epochs=200`` and ``patience=50`` so that the 25 settings train in minutes on two CPU cores; every
    field but ``n_bins`` may change and is written in each row; run seeds as in the sweep), and
    :func:`necessity` on the same folds.

    One row per (setting, fold): the knobs, one ``<model>_test`` column per model (:func:`test_column`), the
    probes' scores on that fold, the setting's estimates (``<estimate>`` columns: label measures as fractions,
    gains in points), ``verdict``, ``estimate_seconds`` (the necessity call) and ``train_seconds`` (the
    models of that row). A setting whose rows lack some models' columns (written by a run with fewer
    ``models``) gets one more row per fold with the key and only those models' columns (and its own
    ``train_seconds``, host and code version): :func:`hpstrat_book.graph_need.csbm_gaps` joins the
    rows of a (setting, fold).
    """
    from ..data.synthetic import make_csbm
    from ..engine.train import train_runs

    protocol, _ = check_protocol_value(protocol)
    if protocol.n_bins != CSBM_PROTOCOL.n_bins:
        raise ValueError(f"protocol.n_bins={protocol.n_bins!r}: run_csbm_grid uses B = {CSBM_PROTOCOL.n_bins} bins "
                         "(its rows do not record n_bins).")
    from ..engine.models import check_model

    models = tuple(dict.fromkeys(check_model(m) for m in ((models,) if isinstance(models, str) else models)))
    if not models:
        raise ValueError("models=(): run_csbm_grid needs at least one model of hpstrat_lite.engine.models.MODELS.")
    columns = {m: test_column(m) for m in models}
    out = results_dir() / CSBM_FILE if out is None else out
    k, max_epochs, patience = check_k(protocol.k, n), protocol.max_epochs, protocol.patience
    check_int(graph_seed, "graph_seed", 0)
    version, host = code_version(), host_name("cpu")
    for lam in lams:
        for mu in mus:
            data = make_csbm(n, lam=lam, mu=mu, avg_degree=avg_degree, seed=graph_seed)  # make_csbm's feature count
            key = {"n": n, "lam": float(lam), "mu": float(mu), "avg_degree": float(avg_degree),
                   "num_features": int(data.x.shape[1]), "graph_seed": graph_seed, "k": k, "seed": seed,
                   "max_epochs": max_epochs, "patience": patience, **training_values(protocol)}
            done = _setting_rows(read_rows(out), key)
            missing = [m for m in models if done is None or columns[m] not in done
                       or done[columns[m]].notna().sum() < k]
            if not missing:
                continue
            y = data.y.numpy()
            folds = hpstrat_folds(node_homophily(data.edge_index, y), y, k=k, seed=seed)
            train, val, test = fold_masks(folds, k=k)
            t = time.perf_counter()
            acc = {m: [r["test_acc"] for r in train_runs(data, m, train, val, test,
                                                          [run_seed(seed, f) for f in range(k)],
                                                          protocol=protocol, execution=Execution(device="cpu"))]
                   for m in missing}
            train_seconds = time.perf_counter() - t
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            meta = {"train_seconds": train_seconds, "host": host, "code_version": version, "finished_at": stamp}
            if done is not None:  # the setting is there: only the missing models' columns
                append_rows(out, [{**key, "fold": f, **{columns[m]: acc[m][f] for m in missing}, **meta}
                                  for f in range(k)])
                log(f"lam={lam:g} mu={mu:g}: added {', '.join(missing)}; train {train_seconds:.0f} s")
                continue
            res = necessity(data, k=k, seed=seed)  # its first split is the models' folds
            estimates = {e: v for e, v in zip(res.table()["estimate"], res.table()["value"])}
            rows = []
            for f in range(k):
                probes = res.folds[res.folds["split_seed"] == seed].set_index("fold").loc[f]
                rows.append({**key, "fold": f, **{columns[m]: acc[m][f] for m in missing},
                             **{f"probe_{p}": probes[p] for p in PROBES},
                             "probe_version": PROBE_VERSION,
                             **estimates, "verdict": res.verdict, "estimate_seconds": res.seconds["total"],
                             **meta})
            append_rows(out, rows)
            gaps = ", ".join(f"{m} - MLP {100 * (np.mean(acc[m]) - np.mean(acc['MLP'])):+.1f}"
                             for m in missing if m != "MLP" and "MLP" in acc)
            log(f"lam={lam:g} mu={mu:g}: {gaps}, probe gain {res.gap:+.1f} ({res.verdict}); "
                f"train {train_seconds:.0f} s")
    return read_rows(out)


def _setting_rows(rows, key: dict):
    """The rows of ``rows`` with this setting's ``key`` (rows without the training fields read as the
    paper's, :func:`hpstrat_lite.rows.with_training_columns`), or None when there are none."""
    if rows.empty:
        return None
    rows = with_training_columns(rows)
    mask = np.ones(len(rows), dtype=bool)
    for c, v in key.items():
        if c not in rows:
            return None
        mask &= rows[c].map(key_value).to_numpy() == key_value(v)
    return rows[mask] if mask.any() else None
