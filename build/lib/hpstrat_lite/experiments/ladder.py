"""The homophily ladder: HpStrat against its controls on synthetic graphs whose homophily and size are set
by design.

On the benchmark graphs homophily and size go together (the homophilous ones are also the larger ones), so
a trend of HpStrat's advantage with the graphs' homophily may be a trend with their size. On a contextual
SBM (:func:`hpstrat_lite.data.synthetic.make_csbm`) both are knobs: ``lam`` sets the expected edge homophily
:math:`1/2 + \\lambda / (2\\sqrt d)` and ``n`` the number of nodes, while the mean degree ``d`` and the
features' signal-to-noise ratio stay fixed: with ``F`` features and ``mu = snr^2 n / F`` the best linear
read-out of a node's features has :math:`\\mathrm{SNR} = \\sqrt{\\mu F / n} = \\mathrm{snr}` at every size.

:func:`run_csbm_ladder` trains the sweep's models under the split methods on several graphs of every
(n, lam) cell with :func:`hpstrat_lite.experiments.sweep.run_experiment` (resumable, one row per run, the
code version and the protocol in each row); each graph's name holds its knobs (:func:`ladder_graph_name`,
read back by :func:`ladder_knobs`). :func:`hpstrat_book.controls.ladder_tests` reads the rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from os import PathLike
from typing import Iterable, Sequence

import pandas as pd

from ..core._validate import check_int, check_real
from ..protocol import Execution, Protocol
from .graph_need import CSBM_PROTOCOL
from .results import results_dir
from .sweep import run_experiment

LADDER_FILE = "controls_csbm_ladder.csv"
LADDER_LAMS = (-1.5, -0.75, 0.0, 0.75, 1.5)
"""Graph signal of the ladder: expected edge homophily about 0.16, 0.33, 0.5, 0.67, 0.84 at degree 5."""
LADDER_SIZES = (200, 500, 1000, 2000, 4000)
"""Numbers of nodes of the ladder: the range of the small and middle benchmark graphs (Texas and Cornell 183,
Wisconsin 251, Cora 2,708, CiteSeer 3,327)."""
LADDER_METHODS = ("stratified", "hpstrat", "placebo")
"""Class-stratified k-fold, HpStrat, and the placebo with HpStrat's number of strata and no information."""
LADDER_MODELS = ("MLP", "GCN", "GraphSAGE")
LADDER_PROTOCOL = CSBM_PROTOCOL
"""The cSBM grid's protocol: the paper's (k = 4, B = 10), shortened to 200 epochs and patience 50."""
LADDER_GRAPH_SEEDS = tuple(range(5))
"""Graphs per (n, lam) cell."""


@dataclass(frozen=True)
class LadderDesign:
    """What every graph of the ladder shares: the features' signal-to-noise ratio ``snr`` (``mu = snr**2 * n /
    num_features`` in :func:`hpstrat_lite.data.synthetic.make_csbm`), the feature dimension ``num_features`` and
    the mean degree ``avg_degree``."""
    snr: float = 0.75
    num_features: int = 64
    avg_degree: float = 5.0


LADDER_DESIGN = LadderDesign()
"""The ladder's graphs: SNR 0.75 along one direction of 64 features, mean degree 5."""

_NAME = re.compile(r"^cSBM_n(?P<n>\d+)_lam(?P<lam>-?[0-9.e+-]+)_snr(?P<snr>[0-9.e+-]+)_F(?P<num_features>\d+)"
                   r"_d(?P<avg_degree>[0-9.e+-]+)_g(?P<graph_seed>\d+)$")


def ladder_graph_name(n: int, lam: float, *, snr: float, num_features: int, avg_degree: float,
                      graph_seed: int) -> str:
    """The name a ladder graph's rows carry, e.g. ``cSBM_n1000_lam0.75_snr0.75_F64_d5_g0``
    (:func:`ladder_knobs` reads it back)."""
    return f"cSBM_n{n}_lam{lam:g}_snr{snr:g}_F{num_features}_d{avg_degree:g}_g{graph_seed}"


def ladder_graph(n: int, lam: float, *, graph_seed: int = 0, design: LadderDesign = LADDER_DESIGN):
    """One graph of the ladder: :func:`hpstrat_lite.data.synthetic.make_csbm` with ``mu = snr**2 * n /
    num_features`` (the features' signal-to-noise ratio ``design.snr`` at every size), named by
    :func:`ladder_graph_name`."""
    from ..data.synthetic import make_csbm

    if not isinstance(design, LadderDesign):
        raise ValueError(f"design must be a LadderDesign, got {type(design).__name__}.")
    n = check_int(n, "n", 4)
    snr = check_real(design.snr, "snr", 0.0, float("inf"))
    num_features = check_int(design.num_features, "num_features", 1)
    data = make_csbm(n, lam=lam, mu=snr ** 2 * n / num_features, avg_degree=design.avg_degree,
                     num_features=num_features, seed=graph_seed)
    data.name = ladder_graph_name(n, float(data.lam), snr=snr, num_features=num_features,
                                  avg_degree=float(data.avg_degree), graph_seed=int(data.seed))
    return data


def ladder_knobs(names: Iterable[str]) -> pd.DataFrame:
    """The knobs of ladder graphs from their names (:func:`ladder_graph_name`): one row per name, columns
    ``dataset``, ``n``, ``lam``, ``snr``, ``num_features``, ``avg_degree``, ``graph_seed`` and
    ``expected_homophily`` (:func:`hpstrat_lite.data.synthetic.csbm_edge_homophily`). A name that is not a
    ladder graph's raises ``ValueError``."""
    from ..data.synthetic import csbm_edge_homophily

    out = []
    for name in names:
        match = _NAME.match(str(name))
        if match is None:
            raise ValueError(f"{name!r} is not a ladder graph's name (cSBM_n<n>_lam<lam>_snr<snr>_F<F>_d<d>_g<seed>).")
        knobs = match.groupdict()
        out.append({"dataset": str(name), "n": int(knobs["n"]), "lam": float(knobs["lam"]),
                    "snr": float(knobs["snr"]), "num_features": int(knobs["num_features"]),
                    "avg_degree": float(knobs["avg_degree"]), "graph_seed": int(knobs["graph_seed"])})
    table = pd.DataFrame(out, columns=["dataset", "n", "lam", "snr", "num_features", "avg_degree", "graph_seed"])
    table["expected_homophily"] = [csbm_edge_homophily(lam, avg_degree=d)
                                   for lam, d in zip(table["lam"], table["avg_degree"])]
    return table


def with_ladder_knobs(rows: pd.DataFrame, *,
                      columns: Sequence[str] = ("n", "lam", "expected_homophily")) -> pd.DataFrame:
    """``rows`` (with a ``dataset`` column of ladder graph names) with the knobs ``columns`` of each row's graph
    (:func:`ladder_knobs`) added."""
    knobs = ladder_knobs(sorted(rows["dataset"].unique())).set_index("dataset")
    return rows.assign(**{column: rows["dataset"].map(knobs[column]) for column in columns})


def run_csbm_ladder(lams: Iterable[float] = LADDER_LAMS, *, sizes: Iterable[int] = LADDER_SIZES,
                    graph_seeds: Iterable[int] = LADDER_GRAPH_SEEDS, seeds: Iterable[int] = (0, 1, 2),
                    models: Sequence[str] = LADDER_MODELS, methods: Sequence[str] = LADDER_METHODS,
                    design: LadderDesign = LADDER_DESIGN, protocol: Protocol = LADDER_PROTOCOL,
                    out: str | PathLike | None = None, execution: Execution | None = None) -> pd.DataFrame:
    """Train ``models`` under the split ``methods`` and split ``seeds`` on the graphs
    :func:`ladder_graph` (``sizes`` x ``lams`` x ``graph_seeds``, each of ``design``), resuming the rows already in ``out``
    (default ``results/controls_csbm_ladder.csv``), and return every row of the file.

    Each graph is a dataset of :func:`hpstrat_lite.experiments.sweep.run_experiment` (one block per (graph,
    model, split seed), as in the controls' sweep); the default protocol is :data:`LADDER_PROTOCOL`, the
    default execution one process on the CPU with a progress bar over the (graph, model) pairs."""
    graphs = [ladder_graph(n, lam, graph_seed=g, design=design) for n in sizes for lam in lams for g in graph_seeds]
    if not graphs:
        raise ValueError("the ladder needs at least one size, one lam and one graph seed.")
    out = results_dir() / LADDER_FILE if out is None else out
    execution = Execution(device="cpu", progress=True) if execution is None else execution
    return run_experiment(graphs, models=list(models), seeds=seeds, methods=list(methods), protocol=protocol,
                          out=out, execution=execution)


def ladder_quality(lams: Iterable[float] = LADDER_LAMS, *, sizes: Iterable[int] = LADDER_SIZES, graph_seed: int = 0,
                   seeds: Iterable[int] = (0, 1, 2), methods: Sequence[str] = LADDER_METHODS, k: int = 4,
                   n_bins: int = 10, design: LadderDesign = LADDER_DESIGN) -> pd.DataFrame:
    """Fold quality (SDD, CDD, CHD, W1: :func:`hpstrat_lite.data.quality.quality_table`) of the split ``methods``
    on one graph of every (n, lam) cell of the ladder (:func:`ladder_graph` with ``graph_seed``), split
    ``seeds``: how much homophily imbalance between folds each method leaves, with no training. One row per
    (graph, method, seed), with the graph's ``n`` and ``lam``."""
    from ..data.quality import quality_table

    graphs = [ladder_graph(n, lam, graph_seed=graph_seed, design=design) for n in sizes for lam in lams]
    if not graphs:
        raise ValueError("the ladder needs at least one size and one lam.")
    table = quality_table(graphs, k=k, seeds=seeds, n_bins=n_bins, methods=methods)
    return with_ladder_knobs(table, columns=["n", "lam"])
