"""Part II's feature study: which (dataset, model) curves ran, and their full-feature point against chapter 6."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hpstrat_lite.core._validate import check_int

from hpstrat_book.part2.plan import FEATURE_BUDGET, FEATURE_STEPS, feature_subsets
from .necessity_tables import _as_summary, _rows, feature_study_table, full_feature_count, summarize

def feature_study_coverage(feature_rows=None, node_rows=None, *, datasets=tuple(FEATURE_STEPS),
                           models=("MLP", "GCN"), budget: int = FEATURE_BUDGET, min_eval: int = 1):
    """Chapter 7's coverage: which of the paper's feature-study datasets were run, with what budget,
    how far, and what the others would cost here.

    A studied dataset (rows in ``feature_rows``, default ``results/part2_features.csv``) shows its
    increment (smallest subset), points (subsets with an evaluated point), the trials and evaluation
    seeds of its points, and its status: "complete" when every model of ``models`` has every subset
    ``s, 2s, ..., F`` (``F`` the feature count: :data:`hpstrat_book.part2.tuning.FEATURE_COUNTS` where
    known, else the largest subset of its rows or of chapter 6's full-feature tuning), else "partial" with the points
    per model (e.g. ``MLP 7/7, GCN 2/7``).
    A point counts once ``min_eval`` evaluation seeds have landed; a point with fewer is named in the
    status as still evaluating (e.g. ``evaluating GCN 200 (1/5 seeds)``).
    For one not studied, the paper's increment (:data:`hpstrat_book.part2.tuning.FEATURE_STEPS`) and, when
    chapter 6 finished tuning both its MLP and its GCN (``node_rows``, default
    ``results/part2_node.csv``), an estimate from the recorded ``seconds`` of that tuning on the full
    features: one point costs, per model, ``budget`` (default :data:`FEATURE_BUDGET`, the feature
    study's trials) times its mean trial time plus its evaluation runs' time, and there is one point
    per subset (an upper bound: smaller subsets train a little faster).
    For a partial study (raw rows with ``seconds``), the estimate covers the points still to run: per
    model, its remaining subsets times the mean recorded time of its finished points here (trials
    plus evaluation runs), or chapter 6's estimate above for a model with no finished point yet.
    Both count the evaluation seed that repeats the selected trial's runs at the trial's time, so
    they lean high by about one trial a point.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``status`` ("complete" / "partial (...)" / "not started"), ``increment``, ``points``,
        ``trials``, ``eval seeds``, ``one point (min)`` and ``projected (h)`` (estimates, not-run
        datasets only).
    """
    raw = _rows(feature_rows, "features")
    summary = _as_summary(feature_rows, "features")  # every evaluated point, single ones included
    min_eval = check_int(min_eval, "min_eval", 1)
    table = summary[summary["n_eval"] >= min_eval] if len(summary) else summary
    pending = summary[summary["n_eval"] < min_eval] if len(summary) else summary
    node = _rows(node_rows, "node")
    out = []
    for ds in datasets:
        t = table[table["dataset"] == ds]
        wait = pending[pending["dataset"] == ds] if len(pending) else pending
        n = node[node["dataset"] == ds] if node is not None and len(node) else pd.DataFrame()
        full = int(n["num_features"].max()) if len(n) else 0  # chapter 6 tunes on all the features
        chapter6 = _chapter6_point_minutes(n, full, models, budget)
        row = {"dataset": ds, "status": "not started", "increment": np.nan,
               "points": np.nan, "trials": "", "eval seeds": "", "one point (min)": np.nan,
               "projected (h)": np.nan}
        if len(t) or len(wait):
            both = pd.concat([t, wait])
            step = int(both["num_features"].min())
            expected = len(feature_subsets(full_feature_count(ds, full, both["num_features"].max()), step))
            done = {m: int(t.loc[t["model"] == m, "num_features"].nunique()) for m in models}
            status = ("complete" if all(v == expected for v in done.values()) else
                      "partial (" + ", ".join(f"{m} {v}/{expected}" for m, v in done.items()) + ")")
            if len(wait):
                status += "; evaluating " + ", ".join(
                    f"{r.model} {r.num_features} ({r.n_eval}/{min_eval} seeds)"
                    for r in wait.sort_values(["model", "num_features"]).itertuples())
            row.update(status=status, increment=step, points=int(t["num_features"].nunique()),
                       trials="/".join(str(v) for v in sorted(both["n_trials"].unique())),
                       **{"eval seeds": "/".join(str(v) for v in sorted(t["n_eval"].unique()))})
            if status != "complete" and raw is not None and {"phase", "seconds"} <= set(raw.columns):
                finished = t.groupby("model")["num_features"].agg(set).to_dict()
                measured = _feature_point_minutes(raw[raw["dataset"] == ds], finished)
                per_model = {m: measured.get(m, chapter6.get(m)) for m in models}
                left = {m: expected - done[m] for m in models}
                if all(per_model[m] is not None for m in models if left[m]):
                    row.update(**{"one point (min)": sum(v for v in per_model.values() if v is not None),
                                  "projected (h)": sum(left[m] * per_model[m] for m in models if left[m]) / 60})
        else:
            step = FEATURE_STEPS.get(ds)
            row["increment"] = step
            if step and all(m in chapter6 for m in models):  # chapter 6 finished both studies
                points = len(feature_subsets(full, step))
                minutes = sum(chapter6[m] for m in models)
                row.update(points=points, trials=str(budget),
                           **{"one point (min)": minutes, "projected (h)": points * minutes / 60})
        out.append(row)
    return pd.DataFrame(out)


def _chapter6_point_minutes(node_rows, full, models, budget) -> dict:
    """Per model of ``models`` whose chapter-6 tuning (``node_rows`` of one dataset) finished: the
    minutes of one feature-study point estimated from it, ``budget`` x its mean trial time + its
    evaluation runs' time on the ``full`` features."""
    if not len(node_rows) or not {"phase", "seconds"} <= set(node_rows.columns):
        return {}
    n = node_rows[node_rows["num_features"] == full]
    finished = set(n.loc[n["phase"] == "eval", "model"])
    trials = n[n["phase"] == "trial"].groupby("model")["seconds"].mean()
    return {m: (float(trials.get(m, 0.0)) * budget
                + float(n.loc[(n["phase"] == "eval") & (n["model"] == m), "seconds"].sum())) / 60
            for m in models if m in finished}


def full_features_vs_chapter6(feature_rows=None, node_rows=None, *, min_eval: int = 1):
    """Each feature-study curve's last point (all the feature columns) beside chapter 6's tuning of
    the same dataset and model on the same features.

    The two are the same experiment (same protocol, search space and seeds), so they differ only by
    the trial budget (TPE's first draws are the same seeded random configurations, so a larger budget
    sees the smaller one's trials and more) and by the code version and host that trained them. A
    difference here measures how much the feature study's small budget costs at full features.

    Parameters
    ----------
    feature_rows, node_rows : pandas.DataFrame, str, os.PathLike or None
        Feature-study rows (default ``results/part2_features.csv``) and chapter 6's rows (default
        ``results/part2_node.csv``), or their files.
    min_eval : int
        A feature-study point counts once this many evaluation seeds have landed.

    Returns
    -------
    pandas.DataFrame
        ``dataset, model, features, feature study (%), study trials, chapter 6 (%), chapter 6 trials,
        difference (points)`` (feature study minus chapter 6) and ``same configuration`` (both
        selected the same hyperparameters); one row per curve that reached the full feature count,
        chapter 6 columns empty where chapter 6 has no evaluated study.
    """
    cols = ["dataset", "model", "features", "feature study (%)", "study trials", "chapter 6 (%)",
            "chapter 6 trials", "difference (points)", "same configuration"]
    points = _as_summary(feature_rows, "features")  # the rows are read and summarised once
    curves = feature_study_table(points, min_eval=min_eval)
    node = summarize(node_rows, task="node")
    out = []
    for (ds, model), g in curves.groupby(["dataset", "model"]):
        n = node[(node["dataset"] == ds) & (node["model"] == model)]
        full = full_feature_count(ds, g["num_features"].max(), *n["num_features"])
        last = g[g["num_features"] == full]
        if last.empty:
            continue  # the curve has not reached the full features yet
        last = last.iloc[0]
        p = points[(points["dataset"] == ds) & (points["model"] == model) & (points["num_features"] == full)
                   & (points["n_trials"] == last["n_trials"])]
        c = n[n["num_features"] == full]
        row = {"dataset": ds, "model": model, "features": full,
               "feature study (%)": 100 * last["test_mean"], "study trials": int(last["n_trials"]),
               "chapter 6 (%)": np.nan, "chapter 6 trials": np.nan, "difference (points)": np.nan,
               "same configuration": None}
        if len(c):
            c = c.iloc[0]
            row.update({"chapter 6 (%)": 100 * c["test_mean"], "chapter 6 trials": int(c["n_trials"]),
                        "difference (points)": 100 * (last["test_mean"] - c["test_mean"]),
                        "same configuration": bool(len(p)) and p.iloc[0]["params"] == c["params"]})
        out.append(row)
    return pd.DataFrame(out, columns=cols)


def _feature_point_minutes(rows, finished) -> dict:
    """Per model: the mean recorded minutes (trial rows + evaluation rows) of its ``finished``
    feature-study points (``{model: {num_features, ...}}``) in ``rows`` (one dataset's raw rows)."""
    out = {}
    for m, sizes in finished.items():
        r = rows[(rows["model"] == m) & rows["num_features"].isin(sizes)]
        if len(r):
            out[m] = float(r["seconds"].sum()) / 60 / len(sizes)
    return out


