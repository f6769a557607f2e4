"""The plan of the Part II studies: datasets, trial budgets, feature steps, result files and their columns.

Plain values and small functions without torch or Optuna: the runners (:mod:`hpstrat_book.part2.necessity`,
:mod:`hpstrat_book.part2.tuning`) train by them, and the reports read rows by them without loading the engine.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hpstrat_lite.core._validate import check_choice, check_int
from hpstrat_lite.rows import results_dir as _results_dir

#: The gamma values of the WS1000_gamma family in the paper.
WS_GAMMAS = (0.2, 0.4, 0.6, 0.8, 1.0)

#: Node-classification datasets of the paper's Tables 1 and 2 (PubMed is not in the offline mirror).
NODE_DATASETS = ("Computers", "Photo", "CS", "Physics", "Cora", "CiteSeer", "PubMed")
#: The paper's suggested link-prediction benchmarks (Table 4).
LINK_DATASETS = ("Twitch-PTBR", "Twitch-EN", "Facebook")
#: WS1000 and the WS1000_gamma family (Table 3, Figure 2).
WS_DATASETS = ("WS1000",) + tuple(f"WS1000_{g}" for g in WS_GAMMAS)
#: Optuna trial budget of every point of the feature study (chapter 7; the committed studies).
FEATURE_BUDGET = 3
#: Evaluation seeds of every committed study (the runners' default ``n_eval``): the book counts a
#: feature-study point once all of them have landed.
N_EVAL = 5

#: The split of the GNN numbers the paper copies, per dataset: ``"per_class"`` (20 / 30 per class,
#: Shchur et al. 2018; paper Table 1) or ``"planetoid"`` (public split; paper Table 2).
NODE_PROTOCOLS = {"Computers": "per_class", "Photo": "per_class", "CS": "per_class", "Physics": "per_class",
                  "Cora": "planetoid", "CiteSeer": "planetoid", "PubMed": "planetoid"}

#: The trivial baselines, in table order.
BASELINES = ("feature cosine", "feature cosine, signed row-sum", "degree product", "shuffled-feature MLP")

#: Feature-subset increments of the paper (Section 4.2).
FEATURE_STEPS = {"Computers": 100, "Photo": 100, "Cora": 200, "CiteSeer": 600, "CS": 1000,
                 "Physics": 1000, "PubMed": 100}
#: Feature columns of the released datasets of the feature study (PyG's Planetoid, Amazon and
#: Coauthor files): a study has reached the full feature set when its largest subset has this many.
FEATURE_COUNTS = {"Computers": 767, "Photo": 745, "Cora": 1433, "CiteSeer": 3703, "CS": 6805,
                  "Physics": 8415, "PubMed": 500}

RESULT_COLUMNS = [
    "phase", "task", "dataset", "model", "protocol", "k", "tune_seed", "space_id", "num_features",
    "n_trials", "trial", "eval_seed", "round", "params", "metric", "val", "test", "best_epoch",
    "seconds", "precision", "host", "code_version", "sampler_seed",
]

#: Values of key columns added after the first results were written (rows without them had these).
COLUMN_DEFAULTS = {"precision": "float32"}


def with_column_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every column of :data:`COLUMN_DEFAULTS` present and its missing values filled (rows
    written before the column existed trained with the default); ``sampler_seed``, where absent, is the
    row's ``tune_seed`` (the TPE sampler used the split seed before the two were separated), as an int."""
    df = df.copy()
    for col, default in COLUMN_DEFAULTS.items():
        df[col] = df[col].astype(object).fillna(default) if col in df else default
    if "tune_seed" in df:
        fill = pd.to_numeric(df["tune_seed"], errors="coerce")
        ss = pd.to_numeric(df["sampler_seed"], errors="coerce") if "sampler_seed" in df else fill
        df["sampler_seed"] = ss.fillna(fill).fillna(0).astype("int64")
    return df


#: Result files of the Part II runners, inside the results folder: node classification (chapter 6),
#: link prediction (chapters 8-9) and the feature study (chapter 7). The feature study has its own
#: file so that it can run beside the node runner (two processes never append to the same file).
RESULTS_FILES = {"node": "part2_node.csv", "link": "part2_link.csv", "features": "part2_features.csv",
                 "node_protocols": "part2_node_protocols.csv", "link_hgcn": "part2_link_hgcn.csv",
                 "link_baselines": "part2_link_baselines.csv"}


#: The SQLite file of the stored Part II studies, inside the results folder (not committed: the result rows
#: are the record; the file lets several processes share a study, see :func:`default_storage`).
STUDIES_FILE = "part2_studies.db"


def default_storage(results_dir=None):
    """``sqlite:///<results folder>/part2_studies.db``: the Optuna storage ``python -m hpstrat_book.part2 tune`` keeps its
    studies in unless ``--storage`` names another (a ``postgresql://`` or ``mysql://`` URL for studies
    shared by several machines)."""
    folder = _results_dir(results_dir)
    return f"sqlite:///{(folder / STUDIES_FILE).resolve()}"


def results_file(task, *, results_dir=None):
    """Path of the Part II results file of ``task``: ``"node"``, ``"link"``, ``"features"``, the
    paper-protocol files ``"node_protocols"`` and ``"link_hgcn"``, or ``"link_baselines"``
    (:data:`RESULTS_FILES`), in ``results_dir`` (default ``$HPSTRAT_RESULTS`` or the checkout's
    ``results/``)."""
    check_choice(task, "task", RESULTS_FILES)
    folder = _results_dir(results_dir)
    return folder / RESULTS_FILES[task]


def feature_subsets(num_features, step, *, seed=None):
    """Nested column subsets ``cols[:step], cols[:2*step], ...`` ending with all columns.

    Parameters
    ----------
    num_features : int
        Number of feature columns.
    step : int
        Increment (the paper's: :data:`FEATURE_STEPS`).
    seed : int, optional
        ``None``: the columns in their natural order; else a seeded permutation of them.

    Returns
    -------
    list of numpy.ndarray of int
        Sizes ``step, 2*step, ..., num_features`` (the last may be a partial step).

    Examples
    --------
    >>> [len(c) for c in feature_subsets(1433, 200)]
    [200, 400, 600, 800, 1000, 1200, 1400, 1433]
    """
    num_features, step = check_int(num_features, "num_features"), check_int(step, "step")
    cols = np.arange(num_features) if seed is None else np.random.default_rng(seed).permutation(
        num_features)
    sizes = list(range(step, num_features, step)) + [num_features]
    return [cols[:m].copy() for m in sizes]
