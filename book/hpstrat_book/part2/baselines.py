"""Trivial link-prediction baselines beside the "feature-only" MLP (paper Tables 3 and 4, Figure 2).

The paper reads its MLP's link-prediction score as what the features alone can do. In transductive link
prediction that reading needs controls: the same nodes appear in training and test pairs, so a model can
learn node identities, and the graph's degrees alone rank edges above random pairs. Three baselines, on
exactly the edge splits of the tuned studies (evaluation seed s = the split of seed s):

- ``"feature cosine"``: ``cos(x_u, x_v)``, no training (:func:`hpstrat_book.part2.linkpred.feature_cosine_scores`);
- ``"feature cosine, signed row-sum"``: the same after HGCN's default feature normalisation
  (:func:`hpstrat_book.part2.linkpred.signed_rowsum`; flips the sign of rows with a negative sum);
- ``"degree product"``: ``deg(u) deg(v)`` on the training edges only, no feature
  (:func:`hpstrat_book.part2.linkpred.degree_product_scores`);
- ``"shuffled-feature MLP"``: the tuned MLP's configuration trained on features whose rows are permuted
  across nodes (:func:`hpstrat_book.part2.linkpred.shuffle_feature_rows`, permutation seed ``1000 + s``):
  the rows keep their values but no longer describe their node, only identify it.

:func:`run_link_baselines` appends one row per (dataset, baseline, protocol, evaluation seed) to
``results/part2_link_baselines.csv`` and skips rows already there.
"""
from __future__ import annotations

import json
import time
from pathlib import Path


from hpstrat_lite._host import host_cpu
from hpstrat_lite.core._validate import check_choice, check_int
from .linkpred import (HGCN_SPLIT, LINK_PROTOCOL, EdgeSplit, degree_product_scores, edge_split,
                               feature_cosine_scores, pair_auc, run_link_prediction, shuffle_feature_rows)
from hpstrat_lite.protocol import Execution, Protocol
from .plan import BASELINES
from hpstrat_lite.rows import results_dir as _results_dir, append_rows, code_version, read_rows

__all__ = ["BASELINES", "SPLITS", "BASELINE_COLUMNS", "baseline_scores", "tuned_params", "run_link_baselines"]

#: Edge splits by protocol name (:attr:`EdgeSplit.name`): the book's 70 / 10 / 20 and HGCN's 85 / 5 / 10.
SPLITS = {split.name: split for split in (EdgeSplit(), HGCN_SPLIT)}
BASELINE_COLUMNS = ["task", "dataset", "baseline", "protocol", "eval_seed", "val", "test", "params",
                    "seconds", "host", "code_version"]
#: Default configuration of the shuffled-feature MLP when no tuned MLP study exists for a dataset.
DEFAULT_MLP = {"hidden": 128, "num_layers": 2, "dropout": 0.2, "lr": 0.01, "weight_decay": 1e-5,
               "patience": 20, "feature_norm": "none"}


def baseline_scores(data, split, baseline):
    """Validation and test ROC AUC of an untrained baseline on one :func:`edge_split` split.

    ``baseline``: ``"feature cosine"``, ``"feature cosine, signed row-sum"`` or ``"degree product"``.

    Returns
    -------
    (float, float)
        ``(val_auc, test_auc)``.
    """
    n = int(split["num_nodes"])
    out = []
    for part in ("val", "test"):
        pos, neg = split[f"{part}_pos"].numpy(), split[f"{part}_neg"].numpy()
        if baseline == "degree product":
            s = [degree_product_scores(split["train_pos"].numpy(), n, p) for p in (pos, neg)]
        elif baseline in ("feature cosine", "feature cosine, signed row-sum"):
            norm = "signed_rowsum" if baseline.endswith("row-sum") else None
            s = [feature_cosine_scores(data.x, p, feature_norm=norm) for p in (pos, neg)]
        else:
            raise ValueError(f"baseline must be one of {BASELINES[:3]} (untrained), got {baseline!r}")
        out.append(pair_auc(*s))
    return tuple(out)


def tuned_params(rows, dataset, *, model="MLP-dot"):
    """The evaluated configuration of the largest-budget study of ``model`` on ``dataset`` in link
    result rows (a DataFrame or a file), as a dict; ``None`` when there is none."""
    df = read_rows(rows) if isinstance(rows, (str, Path)) else rows
    if df is None or df.empty:
        return None
    e = df[(df["phase"] == "eval") & (df["dataset"] == dataset) & (df["model"] == model)]
    if e.empty:
        return None
    return json.loads(e.sort_values("n_trials").iloc[-1]["params"])


def _mlp_protocol(params, max_epochs) -> Protocol:
    """The shuffled-feature MLP's protocol: the tuned ``params`` (else :data:`DEFAULT_MLP`), ``max_epochs``."""
    p = {**DEFAULT_MLP, **(params or {})}
    return LINK_PROTOCOL.replace(hidden=int(p["hidden"]), num_layers=int(p["num_layers"]), dropout=float(p["dropout"]),
                                 lr=float(p["lr"]), weight_decay=float(p["weight_decay"]),
                                 patience=int(p["patience"]), feature_norm=p["feature_norm"],
                                 max_epochs=int(max_epochs))


def run_link_baselines(datasets, *, baselines=BASELINES, n_eval=5, protocol="edge split 70/10/20",
                       results_dir=None, link_rows=None, max_epochs=200, root=None, device="cpu", log=None):
    """Trivial baselines on the edge splits of the tuned link studies; rows to the results folder.

    Parameters
    ----------
    datasets : sequence of str
        Part II link datasets (WS names or MUSAE names).
    baselines : sequence of str
        From :data:`BASELINES`.
    n_eval : int
        Evaluation seeds: seed s scores the split of seed s (the split of the tuned studies' seed s).
    protocol : str
        A key of :data:`SPLITS`.
    results_dir : path, optional
        Folder of ``part2_link_baselines.csv`` (default ``$HPSTRAT_RESULTS`` or ``results/``).
    link_rows : path or DataFrame, optional
        Tuned link rows whose MLP configuration the shuffled-feature MLP uses (default
        ``part2_link.csv`` in the same folder; :data:`DEFAULT_MLP` where a dataset has none).
    max_epochs : int
        Epoch budget of the shuffled-feature MLP (early stopping on validation ROC AUC).
    root, device, log
        Data root, training device and a progress callback.

    Returns
    -------
    pandas.DataFrame
        The rows of these datasets, baselines and protocol (old and new), :data:`BASELINE_COLUMNS`.
    """
    from .necessity import _check_datasets, _quiet, load_part2_dataset

    datasets = _check_datasets(datasets)
    bad = [b for b in baselines if b not in BASELINES]
    if bad or not baselines:
        raise ValueError(f"baselines must be a non-empty sequence from {BASELINES}, got {tuple(baselines)!r}")
    check_choice(protocol, "protocol", SPLITS)
    check_int(n_eval, "n_eval")
    folder = _results_dir(results_dir)
    path = folder / "part2_link_baselines.csv"
    link_rows = folder / "part2_link.csv" if link_rows is None else link_rows
    fractions = SPLITS[protocol]
    old = read_rows(path)
    have = set() if old.empty else set(zip(old["dataset"], old["baseline"], old["protocol"],
                                           old["eval_seed"].astype(int)))
    for ds in datasets:
        with _quiet(1):
            data = load_part2_dataset(ds, root=root)
        params = tuned_params(link_rows, data.name)
        for s in range(n_eval):
            todo = [b for b in baselines if (data.name, b, protocol, s) not in have]
            if not todo:
                continue
            split = edge_split(data.edge_index, int(data.num_nodes), val_ratio=fractions.val_ratio,
                               test_ratio=fractions.test_ratio, seed=s)
            rows = []
            for b in todo:
                t0 = time.perf_counter()
                if b == "shuffled-feature MLP":
                    shuffled, _ = shuffle_feature_rows(data, 1000 + s)
                    with _quiet(1):
                        mlp = _mlp_protocol(params, max_epochs)
                        r = run_link_prediction(shuffled, encoder="MLP", seed=s, split=split, protocol=mlp,
                                                out=mlp.hidden, execution=Execution(device=device))
                    val, test, used = r["val_auc"], r["test_auc"], json.dumps(params or DEFAULT_MLP, sort_keys=True)
                else:
                    (val, test), used = baseline_scores(data, split, b), "{}"
                rows.append({"task": "link", "dataset": data.name, "baseline": b, "protocol": protocol,
                             "eval_seed": s, "val": val, "test": test, "params": used,
                             "seconds": time.perf_counter() - t0, "host": host_cpu(),
                             "code_version": code_version()})
                if log:
                    log(f"{data.name} {b} seed {s}: test ROC AUC {test:.4f}")
            append_rows(path, rows)
    out = read_rows(path)
    names = set(datasets) | {load_part2_dataset(d, root=root).name for d in datasets if not d.startswith("WS")}
    out = out[out["dataset"].isin(names) & out["baseline"].isin(list(baselines)) & (out["protocol"] == protocol)]
    return out[BASELINE_COLUMNS].reset_index(drop=True)
