"""Part II tables ("Does the graph matter?"): result rows -> the paper's tables, beside its numbers.

The chapters read these through :mod:`hpstrat_book.necessity`, which adds the claims.

:func:`summarize` reduces the runners' rows (one per trial and evaluation run) to one line per study;
:func:`node_table`, :func:`part1_table`, :func:`link_table`, :func:`ws_gamma_table` and
:func:`feature_study_table` build the chapters' tables (the paper-protocol, baseline and budget tables are
in :mod:`hpstrat_book.baselines`); :data:`PAPER_NODE` and :data:`PAPER_LINK` hold
the paper's reported numbers, each labelled with its table. Every table carries the split protocol and
the trial budget its numbers come from.
"""
from __future__ import annotations

import dataclasses

from pathlib import Path

import numpy as np
import pandas as pd

from hpstrat_lite.core._validate import check_int
from hpstrat_lite._names import MODELS
from hpstrat_book.part2.plan import (FEATURE_COUNTS, LINK_DATASETS, NODE_DATASETS, WS_GAMMAS, results_file,
                                with_column_defaults)
from hpstrat_lite.experiments.sweep import default_results_path
from hpstrat_lite.rows import model_name, with_model_names
from .paths import RESULTS, read_rows
from .paper_values import PAPER_LINK, PAPER_NODE, PAPER_WS_GAMMA


def _paper_value(table, dataset, model):
    v = table.get(dataset, {}).get(model_name(model))
    if v is None:
        return np.nan, np.nan
    if isinstance(v, tuple):
        return float(v[0]), (np.nan if v[1] is None else float(v[1]))
    return float(v), np.nan



# ----------------------------------------------------------------------------------------------
# Table builders (read result rows)
# ----------------------------------------------------------------------------------------------

def _rows(rows, task):
    if rows is None:
        rows = results_file(task, results_dir=RESULTS)
    if isinstance(rows, (str, Path)):
        rows = read_rows(rows)  # model names already in their one spelling
    elif rows is not None:
        rows = with_model_names(rows)  # a frame built elsewhere may say "gcn" for GCN
    if rows is not None and not rows.empty:
        rows = with_column_defaults(rows)  # rows older than the precision column trained in float32
    return rows


STUDY_KEY = ["task", "dataset", "model", "protocol", "k", "tune_seed", "space_id", "num_features", "precision",
             "sampler_seed"]


def summarize(rows=None, *, task="node"):
    """One line per tuned study: the best configuration's test score over its evaluation seeds.

    A *study* is one (dataset, model, protocol, k, tune seed, search space, number of features)
    with a trial budget ``n_trials``. Its evaluation rows (``phase = "eval"``) hold the test score
    of the best configuration per evaluation seed and round; a seed's score is its mean over
    rounds (HpStrat: the k folds), and the study's score is the mean and the sample standard
    deviation (ddof = 1) over seeds, as :func:`hpstrat_book.part2.tuning.tune_node_classifier` returns. When a
    study was run with several budgets, the largest budget is kept; with both precisions at that
    budget, the float32 one.

    Parameters
    ----------
    rows : pandas.DataFrame, str, os.PathLike or None
        Result rows, or their file (default ``results/part2_<task>.csv``).
    task : {"node", "link", "features"}
        Used only to find the default file.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, protocol, k, num_features, n_trials, trials_done, n_eval,
        test_mean, test_std, best_val, params, precision, sampler_seed``; scores as fractions (accuracy or ROC AUC).
        ``model`` is ``MLP`` / ``GCN`` / ``random`` (the link decoder suffix is dropped).
    """
    df = _rows(rows, task)
    cols = ["dataset", "model", "protocol", "k", "num_features", "n_trials", "trials_done",
            "n_eval", "test_mean", "test_std", "best_val", "params", "precision", "sampler_seed"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for rec, _, per_seed, t in _studies(df):
        best_val = np.nan
        if len(t):
            match = t[t["params"] == rec["params"]]
            best_val = float(match["val"].max()) if len(match) else float(t["val"].max())
        out.append({**rec, "trials_done": int(t["trial"].nunique()), "n_eval": int(per_seed.size),
                    "test_mean": float(per_seed.mean()), "test_std": float(per_seed.std(ddof=1)),
                    "best_val": best_val})
    if not out:  # trials landed, no evaluation yet
        return pd.DataFrame(columns=cols)
    return _largest_budget(pd.DataFrame(out))[cols]


def _studies(df):
    """``(record, evaluation rows, per-seed test, trial rows)`` of every evaluated study in the rows ``df``: the
    record holds :data:`STUDY_KEY`, ``n_trials`` and the evaluated ``params``; a seed's test score is its mean
    over rounds."""
    df = df.copy()
    df["space_id"] = df["space_id"].astype(str)
    trials = df[df["phase"] == "trial"]

    def trials_of(rec):
        t = trials
        for c in STUDY_KEY:
            t = t[t[c].astype(str) == str(rec[c])]
        return t

    evaluated, seen = {}, set()
    for key, g in df[df["phase"] == "eval"].groupby(STUDY_KEY + ["n_trials", "params"], dropna=False, sort=False):
        rec = dict(zip(STUDY_KEY + ["n_trials", "params"], key))
        evaluated.setdefault((tuple(str(rec[c]) for c in STUDY_KEY), str(rec["params"])), g)
        seen.add((tuple(str(rec[c]) for c in STUDY_KEY), int(rec["n_trials"])))
        t = trials_of(rec)
        yield rec, g, g.groupby("eval_seed")["test"].mean(), t[t["trial"] < rec["n_trials"]]
    # A larger budget whose search selected a configuration already evaluated under a smaller one reuses
    # that evaluation (the tuner writes no new rows for it): the study of that budget is listed too.
    for key, g in trials.groupby(STUDY_KEY + ["n_trials"], dropna=False, sort=False):
        rec = dict(zip(STUDY_KEY + ["n_trials"], key))
        ident = tuple(str(rec[c]) for c in STUDY_KEY)
        if (ident, int(rec["n_trials"])) in seen:
            continue
        t = trials_of(rec)
        t = t[t["trial"] < rec["n_trials"]].sort_values("trial")
        if t["trial"].nunique() < int(rec["n_trials"]):
            continue  # the search is not finished
        best = str(t.loc[t["val"].idxmax(), "params"])
        if (ident, best) in evaluated:
            ev = evaluated[(ident, best)]
            yield {**rec, "params": best}, ev, ev.groupby("eval_seed")["test"].mean(), t


def _model_family(models: pd.Series) -> pd.Series:
    """``MLP`` / ``GCN`` / ``random``: link model names lose their decoder suffix (``GCN-dot`` -> ``GCN``)."""
    return models.astype(str).str.replace(r"-(dot|mlp|fd)$", "", regex=True)


def _largest_budget(res):
    """One row per study (the largest trial budget it was run with; float32 before bfloat16 at equal
    budgets), sorted; link models lose their decoder suffix."""
    res = res.copy()
    res["model"] = _model_family(res["model"])
    res["_f32"] = res["precision"] == "float32"
    res = res.sort_values(["n_trials", "_f32"]).drop(columns="_f32").groupby(
        ["dataset", "model", "protocol", "k", "num_features", "tune_seed", "space_id", "sampler_seed"],
        dropna=False, sort=False).tail(1)
    return res.sort_values(["dataset", "model", "num_features"]).reset_index(drop=True)


def selection_optimism(rows=None, *, task="node"):
    """How much the evaluation seed that repeats the tuning split flatters a study (points x 100).

    The tuning trials train on the split of seed ``tune_seed`` (0) and the best configuration is then
    evaluated on the splits of seeds ``0..n_eval-1``, with the same initial weights per seed. The
    evaluation seed equal to ``tune_seed`` therefore re-trains the selected trial itself (same folds, same
    weights: ``tuning_seed_test`` equals ``best_trial_test`` when both ran on the same code version,
    ``same_code``; another engine's float rounding can move early stopping), and it shares the luck that
    made that trial win on validation; the other seeds are fresh splits.
    ``optimism = tuning_seed_test - other_seeds_test``: positive where the tuning split flatters.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, num_features, n_trials, best_trial_test, tuning_seed_test, other_seeds_test,
        optimism`` (test accuracy or ROC AUC x 100), ``same_code``; one row per study with both kinds of seed.
    """
    df = _rows(rows, task)
    cols = ["dataset", "model", "num_features", "n_trials", "best_trial_test", "tuning_seed_test",
            "other_seeds_test", "optimism", "same_code"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for rec, evals, per_seed, t in _studies(df):
        seed = int(rec["tune_seed"])
        others = per_seed[per_seed.index != seed]
        if seed not in per_seed.index or others.empty:
            continue
        match = t[t["params"] == rec["params"]]
        best = match.loc[match["val"].idxmax()] if len(match) else None
        mine, rest = 100 * float(per_seed[seed]), 100 * float(others.mean())
        out.append({**rec, "best_trial_test": np.nan if best is None else 100 * float(best["test"]),
                    "tuning_seed_test": mine, "other_seeds_test": rest, "optimism": mine - rest,
                    "same_code": best is not None and set(evals["code_version"]) == {best["code_version"]}})
    if not out:
        return pd.DataFrame(columns=cols)
    return _largest_budget(pd.DataFrame(out))[cols]


def _pct(summary, dataset, model, num_features=None):
    s = summary[(summary["dataset"] == dataset) & (summary["model"] == model_name(model))]
    if num_features is not None:
        s = s[s["num_features"] == num_features]
    elif len(s):
        s = s[s["num_features"] == s["num_features"].max()]
    if s.empty:
        return np.nan, np.nan, np.nan, ""
    r = s.sort_values("n_trials").iloc[-1]
    return 100 * r["test_mean"], 100 * r["test_std"], r["n_trials"], r["protocol"]


def _fmt(mean, std, digits=1):
    if mean is None or not np.isfinite(mean):
        return "n/a"
    if std is None or not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def node_table(rows=None, *, datasets=NODE_DATASETS, missing=()):
    """Chapter 6's table: tuned MLP and GCN accuracy (%), ours beside the paper's (Tables 1, 2).

    Parameters
    ----------
    rows : DataFrame, path or None
        Node-classification result rows (default ``results/part2_node.csv``) or a
        :func:`summarize` output.
    datasets : sequence of str
        Row order; datasets without results show ``n/a``.
    missing : sequence of str
        Datasets known to be absent (their ``note`` says so).

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; columns ``MLP (ours)``, ``MLP (paper)``, ``GCN (ours)``,
        ``GCN (paper)`` (strings "mean ± std"), numeric ``gap ours`` and ``gap paper``
        (GCN - MLP, points), ``trials MLP/GCN``, ``protocol``, ``note``.
    """
    summary = _as_summary(rows, "node")
    out = []
    for ds in datasets:
        mm, ms, mt, mp = _pct(summary, ds, "MLP")
        gm, gs, gt, gp = _pct(summary, ds, "GCN")
        pm, pms = _paper_value(PAPER_NODE, ds, "MLP")
        pg, pgs = _paper_value(PAPER_NODE, ds, "GCN")
        note = ""
        if ds in missing:
            note = "not in this book (see the appendix Data, reruns and provenance)"
        elif not np.isfinite(mm) and not np.isfinite(gm):
            note = "no results yet"
        out.append({"dataset": ds, "MLP (ours)": _fmt(mm, ms), "MLP (paper)": _fmt(pm, pms),
                    "GCN (ours)": _fmt(gm, gs), "GCN (paper)": _fmt(pg, pgs),
                    "gap ours": gm - mm, "gap paper": pg - pm,
                    "trials MLP/GCN": f"{_int(mt)}/{_int(gt)}", "protocol": mp or gp, "note": note})
    return pd.DataFrame(out).set_index("dataset")


def part1_table(part1_rows=None, node_rows=None, *, datasets=NODE_DATASETS, k=5, seed=0):
    """Chapter 6's second table: the tuned MLP and GCN beside Part I's untuned MLP and seven GNNs.

    Part I's k = 5 sweep (``part1_rows``; default ``results/gnn_k5_seed0.csv``, the file of
    ``hpstrat experiment --k 5 --seeds 0``, :func:`hpstrat_lite.experiments.sweep.default_results_path`)
    trains every model with the HpStrat paper's fixed hyperparameters (2 layers, 64 hidden, dropout
    0.5, Adam lr 0.01, weight decay 5e-4, patience 100 on validation loss) on the HpStrat k = 5 folds
    of split seed 0: the protocol of this chapter's tuning trials. A Part I cell is the mean test accuracy (%) over the k test folds
    ± its std over the folds; a model shows ``n/a`` until all k folds are in the file. The tuned
    columns are :func:`node_table`'s (mean ± std over the evaluation seeds).

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; columns ``MLP tuned``, ``GCN tuned``, then ``MLP`` and each GNN of
        :data:`hpstrat_lite.engine.models.MODELS` (Part I, strings "mean ± std"), ``best Part I GNN``,
        ``tuned MLP - best GNN`` and ``tuned MLP - Part I MLP`` (what the search bought; points,
        NaN where a number is missing).
    """
    summary = _as_summary(node_rows, "node")
    if part1_rows is None:
        part1_rows = RESULTS / default_results_path(k, [seed]).name
    p1 = part1_rows if isinstance(part1_rows, pd.DataFrame) else read_rows(part1_rows)
    cells = pd.DataFrame(columns=["dataset", "model", "mean", "std"])
    if not p1.empty:
        p1 = p1[(p1["method"] == "hpstrat") & (p1["k"] == k) & (p1["seed"] == seed)]
        p1 = p1.drop_duplicates(["dataset", "model", "fold"], keep="last")
        g = p1.groupby(["dataset", "model"])["test_acc"]
        cells = g.agg(mean="mean", std=lambda a: a.std(ddof=1), folds="size").reset_index()
        cells = cells[cells["folds"] == k]
    out = []
    for ds in datasets:
        mm, ms, *_ = _pct(summary, ds, "MLP")
        gm, gs, *_ = _pct(summary, ds, "GCN")
        row = {"dataset": ds, "MLP tuned": _fmt(mm, ms), "GCN tuned": _fmt(gm, gs)}
        gnn, part1_mlp = {}, np.nan
        for m in MODELS:
            c = cells[(cells["dataset"] == ds) & (cells["model"] == m)]
            mean, std = (100 * c["mean"].iloc[0], 100 * c["std"].iloc[0]) if len(c) else (np.nan, np.nan)
            row[m] = _fmt(mean, std)
            if m == "MLP":
                part1_mlp = mean
            elif np.isfinite(mean):
                gnn[m] = mean
        best = max(gnn, key=gnn.get) if gnn else None
        row["best Part I GNN"] = best or "n/a"
        row["tuned MLP - best GNN"] = mm - gnn[best] if best else np.nan
        row["tuned MLP - Part I MLP"] = mm - part1_mlp
        out.append(row)
    return pd.DataFrame(out).set_index("dataset")


def _int(v):
    return "-" if v is None or not np.isfinite(v) else str(int(v))


def _as_summary(rows, task):
    df = _rows(rows, task)
    if df is not None and "phase" not in df.columns and "test_mean" in df.columns:
        return df
    return summarize(df, task=task)


def link_table(rows=None, *, datasets=LINK_DATASETS, models=("MLP", "GCN")):
    """Chapters 8 and 9: link-prediction test ROC AUC (x 100), ours beside the paper's.

    Parameters
    ----------
    rows : DataFrame, path or None
        Link result rows (default ``results/part2_link.csv``) or a :func:`summarize` output.
    datasets : sequence of str
        Table 3: ``("WS1000",)`` with ``models=("random", "MLP", "GCN")``; Table 4:
        :data:`LINK_DATASETS`.
    models : sequence of str

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; for each model ``<MODEL> (ours)`` and ``<MODEL> (paper)``; then
        ``gap ours`` (GCN - MLP, points), ``trials`` and ``protocol``.
    """
    summary = _as_summary(rows, "link")
    models = tuple(model_name(m) for m in models)
    out = []
    for ds in datasets:
        rec = {"dataset": ds}
        vals, trials, protocol = {}, [], ""
        for m in models:
            mean, std, nt, p = _pct(summary, ds, m)
            pm, ps = _paper_value(PAPER_LINK, ds, m)
            rec[f"{m.upper()} (ours)"] = _fmt(mean, std)
            rec[f"{m.upper()} (paper)"] = _fmt(pm, ps)
            vals[m] = mean
            if m != "random":
                trials.append(_int(nt))
            protocol = protocol or p
        if "MLP" in vals and "GCN" in vals:
            rec["gap ours"] = vals["GCN"] - vals["MLP"]
        rec["trials " + "/".join(m.upper() for m in models if m != "random")] = "/".join(trials)
        rec["protocol"] = protocol
        out.append(rec)
    return pd.DataFrame(out).set_index("dataset")


def ws_gamma_table(rows=None, *, gammas=WS_GAMMAS, include_base=True):
    """Figure 2's data: test ROC AUC of the tuned MLP and GCN against gamma.

    Returns
    -------
    pandas.DataFrame
        One row per (gamma, model): ``gamma`` (0 for WS1000's i.i.d. features when
        ``include_base``), ``model``, ``dataset``, ``test_mean``, ``test_std``, ``n_trials``,
        ``n_eval`` (fractions, not percent). Missing runs are left out.
    """
    summary = _as_summary(rows, "link")
    names = ([("WS1000", 0.0)] if include_base else []) + [(f"WS1000_{g}", float(g)) for g in gammas]
    out = []
    for name, g in names:
        for m in ("MLP", "GCN"):
            s = summary[(summary["dataset"] == name) & (summary["model"] == m)]
            if s.empty:
                continue
            r = s.sort_values("n_trials").iloc[-1]
            out.append({"gamma": g, "model": m, "dataset": name, "test_mean": r["test_mean"],
                        "test_std": r["test_std"], "n_trials": int(r["n_trials"]),
                        "n_eval": int(r["n_eval"])})
    return pd.DataFrame(out, columns=["gamma", "model", "dataset", "test_mean", "test_std",
                                      "n_trials", "n_eval"])


def feature_study_table(rows=None, *, datasets=None, min_eval: int = 1):
    """Figures 1 and 3's data: accuracy against the number of features, MLP and GCN.

    ``rows``: feature-study rows (default ``results/part2_features.csv``), their file or a
    :func:`summarize` output. ``min_eval``: a point counts once this many evaluation seeds have
    landed (the book passes its ``n_eval``, :data:`N_EVAL`, so a point whose evaluation is still
    running is left out rather than shown as a mean of fewer seeds).

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, num_features, test_mean, test_std, n_trials, n_eval, protocol``
        (fractions), sorted; only (dataset, model) pairs with at least two feature counts (a
        single full-feature run is not a study).
    """
    summary = _as_summary(rows, "features")
    cols = ["dataset", "model", "num_features", "test_mean", "test_std", "n_trials", "n_eval",
            "protocol"]
    if summary.empty:
        return pd.DataFrame(columns=cols)
    s = summary if datasets is None else summary[summary["dataset"].isin(list(datasets))]
    s = s[s["n_eval"] >= check_int(min_eval, "min_eval", 1)]
    counts = s.groupby(["dataset", "model"])["num_features"].transform("nunique")
    s = s[counts >= 2]
    # one budget per curve: the budget used by most of its points (the full-feature point may also
    # exist with the larger budget of chapter 6)
    keep = []
    for _, g in s.groupby(["dataset", "model"]):
        budget = g.groupby("n_trials")["num_features"].nunique().idxmax()
        g = g[g["n_trials"] == budget] if (g["n_trials"] == budget).sum() >= 2 else g
        keep.append(g.sort_values("n_trials").groupby("num_features").head(1))
    s = pd.concat(keep) if keep else s.iloc[:0]
    return s[cols].sort_values(["dataset", "model", "num_features"]).reset_index(drop=True)



def ws_summary(gammas=(None,) + WS_GAMMAS, *, seed=0):
    """The WS1000 family at a glance: graph size, degree and how much a node's features tell about
    its BFS parent.

    For each gamma (``None`` = WS1000), :func:`hpstrat_lite.data.synthetic.make_ws1000` with ``seed``;
    ``parent_corr`` is the mean over non-root nodes of the Pearson correlation between ``x(v)``
    and ``x(parent(v))`` (0 for i.i.d. features; ``gamma / sqrt(1 + gamma^2)`` for a child of a
    root and larger deeper down), ``edge_cos`` the mean cosine similarity of the features of the
    two ends of an edge, ``nonedge_cos`` the same for as many random non-adjacent pairs.

    Returns
    -------
    pandas.DataFrame
        One row per gamma: ``dataset, gamma, nodes, edges, mean_degree, parent_corr, edge_cos,
        nonedge_cos``.
    """
    from hpstrat_book.part2.linkpred import sample_negative_pairs
    from hpstrat_lite.data.synthetic import make_ws1000, ws_features

    out = []
    for g in gammas:
        d = make_ws1000(g, seed=seed)
        n = int(d.num_nodes)
        ei = d.edge_index.numpy()
        graph_seed, feat_seed = np.random.SeedSequence(int(seed)).spawn(2)
        _, parent = ws_features(d.edge_index, n, dim=int(d.x.shape[1]), gamma=g, seed=feat_seed,
                                return_parents=True)
        x = d.x.numpy().astype(np.float64)
        xc = x - x.mean(1, keepdims=True)
        xn = xc / np.linalg.norm(xc, axis=1, keepdims=True)
        child = np.flatnonzero(parent >= 0)
        corr = float(np.mean(np.sum(xn[child] * xn[parent[child]], 1))) if child.size else 0.0
        once = ei[:, ei[0] < ei[1]]
        unit = x / np.linalg.norm(x, axis=1, keepdims=True)
        ecos = float(np.mean(np.sum(unit[once[0]] * unit[once[1]], 1)))
        keys = np.sort(once[0].astype(np.int64) * n + once[1])
        neg = sample_negative_pairs(keys, n, once.shape[1], np.random.default_rng(seed))
        ncos = float(np.mean(np.sum(unit[neg[0]] * unit[neg[1]], 1)))
        out.append({"dataset": d.name, "gamma": 0.0 if g is None else float(g), "nodes": n,
                    "edges": once.shape[1], "mean_degree": ei.shape[1] / n,
                    "parent_corr": corr, "edge_cos": ecos, "nonedge_cos": ncos})
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------------------------
# Claims: the paper's statements checked on our rows (the scorecard's Part II rows)
# ----------------------------------------------------------------------------------------------

def paper_comparison(node_rows=None, link_rows=None, *, node_datasets=NODE_DATASETS,
                     link_datasets=("WS1000",) + LINK_DATASETS, missing=()):
    """Every number of Part II beside the paper's, with its source and our trial budget.

    Parameters
    ----------
    node_rows, link_rows : DataFrame, path or None
        Result rows (defaults: the results files) or :func:`summarize` outputs.
    node_datasets, link_datasets : sequences of str
    missing : sequence of str
        Datasets absent offline (noted).

    Returns
    -------
    pandas.DataFrame
        One row per (task, dataset, model): ``ours`` and ``paper`` (numbers x 100: accuracy %
        or ROC AUC x 100), ``ours std``, ``paper std``, ``difference`` (ours - paper), ``Welch p``
        (ours over ``n_eval`` seeds against the paper's 5 trials), ``source``
        (paper table / figure), ``metric``, ``protocol``, ``n_trials`` and ``n_eval`` of our run,
        and a ``note``.
    """
    out = []
    node = _as_summary(node_rows, "node")
    link = _as_summary(link_rows, "link")
    for task, summary, datasets, ref, models in (
        ("node", node, node_datasets, PAPER_NODE, ("MLP", "GCN")),
        ("link", link, link_datasets, PAPER_LINK, ("random", "MLP", "GCN")),
    ):
        for ds in datasets:
            for m in models:
                if m == "random" and ds != "WS1000":
                    continue
                mean, std, nt, prot = _pct(summary, ds, m)
                s = summary[(summary["dataset"] == ds) & (summary["model"] == m)]
                n_eval = int(s.sort_values("n_trials")["n_eval"].iloc[-1]) if len(s) else 0
                pm, ps = _paper_value(ref, ds, m)
                if task == "node":
                    source, metric = "Tables 1-2", "accuracy %"
                elif ds == "WS1000":
                    source, metric = "Table 3", "ROC AUC x 100"
                elif ds.startswith("WS1000_"):
                    source, metric = "Figure 2", "ROC AUC x 100"
                else:
                    source, metric = "Table 4", "ROC AUC x 100"
                notes = []
                if ds in missing:
                    notes.append("not in this book (see the appendix Data, reruns and provenance)")
                elif not np.isfinite(mean):
                    notes.append("no result yet")
                if not np.isfinite(pm) and ds.startswith("WS1000_") and m == "MLP":
                    g = float(ds.split("_")[1])
                    if g >= PAPER_WS_GAMMA["from_gamma"]:
                        pm = PAPER_WS_GAMMA["max_mlp"]
                        notes.append("paper: approximately 60 at best for gamma >= 0.6 (Section 5 text)")
                    else:
                        notes.append("Figure 2 has no number for this gamma in the text (see ws_gamma_comparison)")
                elif not np.isfinite(pm):
                    notes.append("the paper reports no number for this model here")
                p = _vs_paper(mean, std, n_eval, None if not np.isfinite(ps) else (pm, ps))
                out.append({"task": task, "dataset": ds, "model": m, "ours": mean, "ours std": std,
                            "paper": pm, "paper std": ps, "difference": mean - pm, "Welch p": p,
                            "metric": metric, "source": source, "protocol": prot,
                            "n_trials": nt, "n_eval": n_eval, "note": "; ".join(notes)})
    return pd.DataFrame(out)


def welch_p(mean1, std1, n1, mean2, std2, n2):
    """Two-sided p-value of Welch's t-test from summary statistics (``scipy.stats.ttest_ind_from_stats``).

    ``std1`` / ``std2`` are sample standard deviations (ddof = 1). NaN where a number is missing, a
    sample has fewer than two values, or both standard deviations are 0.
    """
    from scipy.stats import ttest_ind_from_stats

    vals = [mean1, std1, n1, mean2, std2, n2]
    if any(v is None or not np.isfinite(v) for v in vals) or min(n1, n2) < 2 or (std1 == 0 and std2 == 0):
        return np.nan
    return float(ttest_ind_from_stats(mean1, std1, n1, mean2, std2, n2, equal_var=False).pvalue)


def _sample_std(std, n):
    """The sample std (ddof = 1, what :func:`summarize` reports) over ``n`` seeds; NaN with fewer than two."""
    return std if n and n > 1 else np.nan


def _cell(summary, ds, model):
    """``(mean %, sample std %, n_trials, n_eval, protocol, sampler_seed)`` of the largest-budget study."""
    s = summary[(summary["dataset"] == ds) & (summary["model"] == model_name(model))]
    if s.empty:
        return np.nan, np.nan, np.nan, 0, "", np.nan
    r = s.sort_values("n_trials").iloc[-1]
    return (100 * r["test_mean"], 100 * r["test_std"], r["n_trials"], int(r["n_eval"]), r["protocol"],
            r.get("sampler_seed", np.nan))


@dataclasses.dataclass(frozen=True)
class MlpGcnGap:
    """One dataset's tuned MLP and GCN (their largest-budget studies, in points): means, sample standard deviations
    over the evaluation seeds, evaluation seeds and trials."""

    mlp: float
    mlp_std: float
    mlp_eval: int
    mlp_trials: float
    gcn: float
    gcn_std: float
    gcn_eval: int
    gcn_trials: float

    @property
    def gap(self) -> float:
        """GCN - MLP (points)."""
        return self.gcn - self.mlp

    def welch_p(self, line: float = 0.0) -> float:
        """Welch's p-value of the GCN against the MLP shifted by ``line`` points (0: the gap itself)."""
        return welch_p(self.mlp + line, self.mlp_std, self.mlp_eval, self.gcn, self.gcn_std, self.gcn_eval)


def mlp_gcn_gaps(summary, datasets) -> dict:
    """``{dataset: MlpGcnGap}`` for each of ``datasets`` with both a tuned MLP and a tuned GCN in ``summary``
    (:func:`summarize` output), in the order of ``datasets``."""
    out = {}
    for ds in datasets:
        mm, ms, mt, mn, *_ = _cell(summary, ds, "MLP")
        gm, gs, gt, gn, *_ = _cell(summary, ds, "GCN")
        if np.isfinite(mm) and np.isfinite(gm):
            out[ds] = MlpGcnGap(mm, _sample_std(ms, mn), mn, mt, gm, _sample_std(gs, gn), gn, gt)
    return out


def _vs_paper(mean, std, n, paper):
    """Welch p of ours (sample std over n seeds) against the paper's (mean, std) over 5 trials."""
    if paper is None:
        return np.nan
    return welch_p(mean, _sample_std(std, n), n, paper[0], paper[1], 5)


def _baseline_rows(rows):
    if rows is None:
        rows = results_file("link_baselines", results_dir=RESULTS)
    return read_rows(rows) if isinstance(rows, (str, Path)) else rows


def full_feature_count(dataset, *seen) -> int:
    """The full feature count of ``dataset``: :data:`hpstrat_book.part2.tuning.FEATURE_COUNTS` where it is
    known, else the largest of the feature counts ``seen`` in its rows."""
    return max(FEATURE_COUNTS.get(dataset, 0), *(int(n) for n in seen))
