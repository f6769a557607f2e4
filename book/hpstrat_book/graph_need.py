"""Does the graph help? Each cheap estimate against the measured MLP-versus-GNN gaps.

Measured gaps (points, test accuracy x 100), each with a two-sided p-value:

- Part I (:func:`part1_gaps`): the sweep's MLP and seven GNNs under one protocol on HpStrat folds (k = 4,
  split seeds 0-5); per graph the best GNN (highest mean test accuracy) minus the MLP, the best of each
  model family (:data:`MODEL_FAMILIES`) minus the MLP and GCN minus MLP, paired over the (seed, fold) runs
  they share (paired t-test). Picking the best GNN on the test scores flatters it; GCN minus MLP does not
  pick.
- Part II (:func:`part2_gaps`): the tuned GCN minus the tuned MLP (HpStrat k = 5 studies), Welch's t-test
  over evaluation seeds (:func:`hpstrat_book.necessity.welch_p`).
- cSBM grid (:func:`csbm_gaps`): GCN minus MLP, and the best model of each family minus MLP, on each
  setting, paired t-test over its k folds.

:func:`calibration` sets a family's estimate (``aggregation_gain``, ``heterophily_gain``, ``probe_gain`` for
the best of both) beside the measured gap of the same family, with the verdict of the estimate and whether it
has the sign of a significant gap (:func:`is_significant`: ``|gap| >=`` :data:`MEASURED_GAP` and
``p < 0.05``); :func:`calibration_summary` gives Spearman and the sign counts per family, and
:func:`calibration_plot` the predicted-against-measured panels with the line y = x.

:func:`validation` scores every estimate against a set of gaps: Spearman's rank correlation with a
bootstrap interval over graphs and a permutation p-value, and the share of graphs with a significant gap
(p < 0.05) where the estimate's side of its neutral point (:data:`NEUTRAL`) has the gap's sign.
:func:`recommended` names the estimate to trust by a stated rule; :func:`need_findings` is the page's
"Key findings" box.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hpstrat_lite.core.graph_measures import LABEL_MEASURES
from hpstrat_lite.experiments.graph_need import CSBM_FILE, ESTIMATES_FILE, csbm_name, with_probe_version
from hpstrat_lite.experiments.probes import (ESTIMATES, FAMILY_GAINS, FAMILY_NAMES, MEASURED_GAP, PRACTICAL_GAP, PROBE_VERSION,
                                  VERDICTS,
                                  verdict as gain_verdict)
from .paths import RESULTS as RESULTS_DIR, read_rows
from hpstrat_lite.rows import TRAINING_COLUMNS, with_training_columns
from hpstrat_lite.stats import spearman
from .display import findings_box, format_number
from .necessity_tables import _sample_std, summarize, welch_p
from .plots import BOOK_WIDTH, NEUTRAL_COLOR, OKABE_ITO, _plt
from .verdicts import AGREES, DISAGREES, INCONCLUSIVE

PART1_FILES = ("gnn_k4_seed0.csv", "gnn_k4_seeds1-5.csv")
NEUTRAL = {"edge_homophily": 0.5, "node_homophily": 0.5, "adjusted_homophily": 0.0,
           "label_informativeness": np.nan, "probe_gain": 0.0, "aggregation_gain": 0.0, "heterophily_gain": 0.0,
           "lp_gain": 0.0}
"""Where each estimate says "no effect": a gap is predicted positive above it, negative below. Edge and node
homophily: 0.5 (the usual homophilous / heterophilous divide); adjusted homophily: 0 (chance); the gains: 0.
Label informativeness has no side (it is 0 for independent labels and 1 for both perfect homophily and
perfect heterophily), so it gets no sign agreement."""
ALPHA = 0.05
MODEL_FAMILIES = {"aggregation": ("GCN", "GAT", "APPNP"), "heterophily": ("H2GCN", "GPRGNN", "MixHop", "GraphSAGE")}
"""The measured models of each family: aggregation GNNs mix a node with its neighbours; the heterophily-aware
ones keep ego and neighbour channels apart (H2GCN, GraphSAGE's root weight, MixHop's power-0 block) or weigh
hops with learned signs (GPR-GNN). ``graph`` (the best of both) is every GNN."""


def _rows(rows, default) -> pd.DataFrame:
    """``rows`` itself when a frame, else the rows of the file(s) ``rows`` or ``default``."""
    return rows if isinstance(rows, pd.DataFrame) else read_rows(default if rows is None else rows)


def _paired_p(diff) -> float:
    from scipy import stats

    d = np.asarray(diff, dtype=float)
    if d.size < 2 or np.all(d == d[0]):
        return np.nan
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def _family_gaps(wide: pd.DataFrame, families: dict) -> dict:
    """Per family of ``families`` (name -> models) present in ``wide`` (one column per model, ``MLP``
    included, one row per paired run): ``<family>_gnn`` (its model of highest mean), ``<family>_gap`` (that
    model minus the MLP, mean of the paired differences) and ``<family>_p`` (paired t-test)."""
    row = {}
    for fam, models in families.items():
        have = [m for m in models if m in wide and wide[m].notna().any()]
        if not have:
            row.update({f"{fam}_gnn": "", f"{fam}_gap": np.nan, f"{fam}_p": np.nan})
            continue
        best = max(have, key=lambda m: wide[m].mean())
        d = (wide[best] - wide["MLP"]).dropna()
        row.update({f"{fam}_gnn": best, f"{fam}_gap": float(d.mean()) if d.size else np.nan,
                    f"{fam}_p": _paired_p(d)})
    return row


def part1_gaps(rows=None, *, method: str = "hpstrat", k: int = 4) -> pd.DataFrame:
    """Per graph of the Part I sweep: ``best_gnn``, ``best_gap`` and ``best_p`` (best GNN minus MLP),
    ``gcn_gap`` and ``gcn_p`` (GCN minus MLP), ``<family>_gnn``, ``<family>_gap``, ``<family>_p`` for each
    family of :data:`MODEL_FAMILIES` and for ``graph`` (all GNNs: the same as ``best``), ``n_runs`` (paired
    (seed, fold) runs), in points."""
    df = _rows(rows, [RESULTS_DIR / f for f in PART1_FILES])
    df = df[(df["method"] == method) & (df["k"] == k)]
    out = []
    for ds, g in df.groupby("dataset", sort=True):
        wide = g.pivot_table(index=["seed", "fold"], columns="model", values="test_acc", aggfunc="first") * 100
        if "MLP" not in wide:
            continue
        gnns = [m for m in wide.columns if m != "MLP"]
        wide = wide.dropna(subset=["MLP"])
        best = max(gnns, key=lambda m: wide[m].mean())
        row = {"dataset": ds, "best_gnn": best, "n_runs": int(wide[best].notna().sum())}
        for tag, model in (("best", best), ("gcn", "GCN")):
            d = (wide[model] - wide["MLP"]).dropna() if model in wide else pd.Series(dtype=float)
            row[f"{tag}_gap"], row[f"{tag}_p"] = (float(d.mean()) if d.size else np.nan), _paired_p(d)
        row.update(_family_gaps(wide, {**MODEL_FAMILIES, "graph": tuple(gnns)}))
        out.append(row)
    return pd.DataFrame(out)


def part2_gaps(rows=None) -> pd.DataFrame:
    """Per graph of the Part II HpStrat studies: ``gap`` (tuned GCN minus tuned MLP, points), ``p`` (Welch),
    ``n_eval``, ``n_trials`` of the MLP study."""
    summary = summarize(rows)
    summary = summary[summary["protocol"] == "hpstrat"]
    out = []
    for ds, g in summary.groupby("dataset", sort=True):
        cell = {m: g[g["model"] == m].sort_values("n_trials").iloc[-1] for m in ("MLP", "GCN") if (g["model"] == m).any()}
        if len(cell) < 2:
            continue
        a, b = cell["GCN"], cell["MLP"]
        p = welch_p(a["test_mean"], _sample_std(a["test_std"], a["n_eval"]), a["n_eval"],
                    b["test_mean"], _sample_std(b["test_std"], b["n_eval"]), b["n_eval"])
        out.append({"dataset": ds, "gap": 100 * (a["test_mean"] - b["test_mean"]), "p": p,
                    "n_eval": int(min(a["n_eval"], b["n_eval"])), "n_trials": int(b["n_trials"])})
    return pd.DataFrame(out)


CSBM_FAMILIES = {"aggregation": ("GCN",), "heterophily": ("H2GCN", "GPRGNN", "MixHop")}
"""The cSBM grid's models of each family (:data:`hpstrat_lite.experiments.graph_need.CSBM_MODELS`)."""


def csbm_gaps(rows=None) -> pd.DataFrame:
    """Per cSBM setting: the knobs, ``dataset`` (:func:`hpstrat_lite.experiments.graph_need.csbm_name`),
    ``gap`` (GCN minus MLP over folds, points), ``p`` (paired t over folds), ``mlp``, ``gcn`` (mean test
    accuracy, points), ``<family>_gnn`` / ``_gap`` / ``_p`` for each family of :data:`CSBM_FAMILIES` and for
    ``graph`` (every GNN of the rows) and ``train_seconds``; the current probes' estimates of each setting are
    :func:`estimates`' row of the same ``dataset``. The rows of one (setting, fold)
    are joined first: a model added later has rows of its own
    (:func:`hpstrat_lite.experiments.graph_need.run_csbm_grid`)."""
    df = _rows(rows, RESULTS_DIR / CSBM_FILE)
    if df.empty:
        return pd.DataFrame()
    df = with_training_columns(df)  # rows written before these were recorded: the paper's protocol
    keys = ["n", "lam", "mu", "avg_degree", "num_features", "graph_seed", "k", "seed", "max_epochs", "patience",
            *TRAINING_COLUMNS]
    models = {c[:-len("_test")]: c for c in df.columns if c.endswith("_test")}
    names = {m.lower(): m for fam in CSBM_FAMILIES.values() for m in fam}
    out = []
    for key, g in df.groupby(keys, sort=True, dropna=False):
        folds = g.groupby("fold", sort=True).first()  # the first non-empty value of each column per fold
        wide = pd.DataFrame({names.get(m, m.upper()): 100 * folds[c] for m, c in models.items()})
        d = wide["GCN"] - wide["MLP"]
        info = dict(zip(keys, key))
        row = {**info, "dataset": csbm_name(info["lam"], info["mu"], n=int(info["n"]), avg_degree=info["avg_degree"],
                                           graph_seed=int(info["graph_seed"])),
               "gap": float(d.mean()), "p": _paired_p(d.dropna()), "mlp": wide["MLP"].mean(), "gcn": wide["GCN"].mean()}
        gnns = tuple(m for m in wide if m != "MLP" and wide[m].notna().all())
        row.update(_family_gaps(wide, {**CSBM_FAMILIES, "graph": gnns}))
        if "train_seconds" in g:  # each call's seconds once (its k rows repeat them)
            calls = g.drop_duplicates("finished_at") if "finished_at" in g else g.iloc[:1]
            row["train_seconds"] = float(calls["train_seconds"].sum())
        out.append(row)
    return pd.DataFrame(out)


def estimates(rows=None, *, k: int = 4, seed: int = 0, metric: str = "accuracy",
              probe_version: int = PROBE_VERSION) -> pd.DataFrame:
    """The estimates of each graph as one row (columns :data:`ESTIMATES`, ``<gain>_low`` and ``<gain>_high``
    for the gains, ``verdict``, ``total_seconds`` and ``<estimate>_seconds``) from
    ``results/necessity_estimates.csv`` (the latest row of each, of probes ``probe_version``)."""
    df = with_probe_version(_rows(rows, RESULTS_DIR / ESTIMATES_FILE))
    if not df.empty:
        df = df[(df["k"] == k) & (df["seed"] == seed) & (df["metric"] == metric)
                & (df["probe_version"] == probe_version)]
    if df.empty:
        return pd.DataFrame(columns=["dataset", *ESTIMATES, "verdict", "total_seconds"])
    df = df.drop_duplicates(["dataset", "estimate"], keep="last")
    values = df.pivot(index="dataset", columns="estimate", values="value")
    bounds = [df.pivot(index="dataset", columns="estimate", values=b)[[g for g in FAMILY_GAINS.values()]]
              .add_suffix(f"_{b}") for b in ("low", "high")]
    cost = df.pivot(index="dataset", columns="estimate", values="seconds").add_suffix("_seconds")
    meta = df.groupby("dataset")[["verdict", "total_seconds"]].last()
    return pd.concat([values[[e for e in ESTIMATES if e in values]], *bounds, meta, cost], axis=1).reset_index()


def is_significant(gap, p, *, alpha: float = ALPHA, min_gap: float = MEASURED_GAP):
    """Whether a measured gap counts as significant: ``|gap| >= min_gap`` points and ``p < alpha``."""
    return (np.abs(np.asarray(gap, float)) >= min_gap) & (np.asarray(p, float) < alpha)


def calibration(estimate_table: pd.DataFrame, gap_table: pd.DataFrame, family: str, *,
                measured: str | None = None, alpha: float = ALPHA, min_gap: float = MEASURED_GAP) -> pd.DataFrame:
    """A family's estimate against its measured gap, one row per graph in both tables (joined on
    ``dataset``): ``estimate``, ``low``, ``high`` (the family's gain of :data:`FAMILY_GAINS`, points),
    ``gap``, ``p`` (the measured ``<measured>_gap`` and ``_p``, default ``measured = family``), ``verdict``
    (the estimate's, :func:`hpstrat_lite.experiments.probes.verdict`), ``significant``
    (:func:`is_significant`) and ``agrees`` (on a significant gap: whether the verdict has its sign)."""
    if family not in FAMILY_GAINS:
        raise ValueError(f"family={family!r}: expected one of {sorted(FAMILY_GAINS)}.")
    gain, measured = FAMILY_GAINS[family], measured or family
    if f"{measured}_gap" not in gap_table:
        raise ValueError(f"measured={measured!r}: the gap table has no {measured}_gap column.")
    m = estimate_table.merge(gap_table, on="dataset", suffixes=("", "_rows"))
    out = pd.DataFrame({"dataset": m["dataset"], "estimate": m[gain], "low": m[f"{gain}_low"],
                        "high": m[f"{gain}_high"], "gap": m[f"{measured}_gap"], "p": m[f"{measured}_p"]})
    out["verdict"] = [gain_verdict(e, lo, hi) for e, lo, hi in zip(out["estimate"], out["low"], out["high"])]
    out["significant"] = is_significant(out["gap"], out["p"], alpha=alpha, min_gap=min_gap)
    said = _said(out["verdict"])
    out["agrees"] = np.where(out["significant"], said == np.sign(out["gap"]), np.nan)
    return out


def calibration_summary(tables: dict, *, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per (set, family) of ``tables`` ((set, family) -> :func:`calibration` frame): ``spearman`` with its
    bootstrap ``low`` / ``high``, ``n_graphs``, ``n_significant`` and the verdict's ``right`` (the gap's
    sign), ``wrong`` (the other sign) and ``silent`` counts on the significant gaps, ``mean_abs_error`` (points)."""
    out = []
    for (name, family), t in tables.items():
        corr = spearman(t["estimate"], t["gap"], unit="graph", n_boot=n_boot, n_perm=0, seed=seed)
        rho, lo, hi = corr.rho, corr.low, corr.high
        sig = t[t["significant"].astype(bool)]
        said = _said(sig["verdict"])
        out.append({"set": name, "family": family, "spearman": rho, "low": lo, "high": hi,
                    "n_graphs": int(t[["estimate", "gap"]].dropna().shape[0]), "n_significant": int(len(sig)),
                    "right": int(((said != 0) & (said == np.sign(sig["gap"]))).sum()),
                    "wrong": int(((said != 0) & (said != np.sign(sig["gap"]))).sum()),
                    "silent": int((said == 0).sum()),
                    "mean_abs_error": float((t["estimate"] - t["gap"]).abs().mean())})
    return pd.DataFrame(out)


def calibration_plot(tables: dict):
    """One panel per family: the estimate (x, with its 95 % interval) against the measured gap (y) for each
    set of graphs, on ``tables`` ((set, family) -> :func:`calibration` frame), with the line y = x and the
    band ``± MEASURED_GAP`` of measured gaps too small to count. Significant gaps are filled markers, the
    others hollow."""
    plt = _plt()
    families = list(dict.fromkeys(f for _, f in tables))
    fig, axes = plt.subplots(1, len(families), figsize=(BOOK_WIDTH * 1.3, 3.2), squeeze=False)
    markers = dict(zip(dict.fromkeys(n for n, _ in tables), ["o", "s", "^", "D"]))
    for ax, fam in zip(axes[0], families):
        lim = [np.inf, -np.inf]
        for i, ((name, f), t) in enumerate(tables.items()):
            if f != fam or t.empty:
                continue
            color = SET_COLORS[list(markers).index(name) % len(SET_COLORS)]
            err = np.vstack([t["estimate"] - t["low"], t["high"] - t["estimate"]])
            ax.errorbar(t["estimate"], t["gap"], xerr=np.nan_to_num(err), fmt="none", ecolor=color, alpha=0.35, lw=0.8)
            sig = t["significant"].astype(bool)
            ax.scatter(t["estimate"][sig], t["gap"][sig], marker=markers[name], color=color, s=20, label=name)
            ax.scatter(t["estimate"][~sig], t["gap"][~sig], marker=markers[name], facecolors="none",
                       edgecolors=color, s=20)
            lim = [min(lim[0], t[["estimate", "gap"]].min().min()), max(lim[1], t[["estimate", "gap"]].max().max())]
        if np.isfinite(lim[0]):
            ax.plot(lim, lim, color=NEUTRAL_COLOR, lw=0.8, ls="--")
        ax.axhspan(-MEASURED_GAP, MEASURED_GAP, color=NEUTRAL_COLOR, alpha=0.15, lw=0)
        ax.set_title(FAMILY_NAMES[fam], fontsize=8)
        ax.set_xlabel("estimated gap (points)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel("measured gap (points)", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    return fig


#: Colours of the sets of graphs in the calibration panels (Okabe-Ito colours no split method uses).
SET_COLORS = [OKABE_ITO["orange"], OKABE_ITO["black"], OKABE_ITO["yellow"], OKABE_ITO["sky blue"]]


def cannot_tell(table: pd.DataFrame, *, width: float = 10.0) -> pd.DataFrame:
    """The graphs of a :func:`calibration` frame where the estimate cannot tell: its interval is wider than
    ``width`` points and straddles 0."""
    wide = (table["high"] - table["low"] > width) & (table["low"] < 0) & (table["high"] > 0)
    return table[wide]


def validation(table: pd.DataFrame, *, gap: str = "gap", p: str = "p", n_boot: int = 2000, seed: int = 0,
               alpha: float = ALPHA, n_perm: int = 9999) -> pd.DataFrame:
    """Per estimate of :data:`ESTIMATES` found in ``table`` (one row per graph, with the measured ``gap``
    and its ``p``): ``spearman``, ``low``, ``high`` (bootstrap interval, ``n_boot`` resamples),
    ``spearman_p`` (the permutation p, ``n_perm`` permutations; both from :func:`hpstrat_lite.stats.spearman`), ``n_graphs``, ``n_significant``
    (graphs with ``p < alpha``), ``sign_agreement`` (share of those where the estimate lies on the gap's side
    of :data:`NEUTRAL`; NaN for an estimate without a side)."""
    out = []
    sig = table[table[p] < alpha]
    for e in ESTIMATES:
        if e not in table:
            continue
        corr = spearman(table[e], table[gap], unit="graph", n_boot=n_boot, n_perm=n_perm, seed=seed)
        neutral = NEUTRAL[e]
        agree = (np.sign(sig[e] - neutral) == np.sign(sig[gap])).mean() if len(sig) and np.isfinite(neutral) else np.nan
        out.append({"estimate": e, "kind": "label-only" if e in LABEL_MEASURES else "probe", "spearman": corr.rho,
                    "low": corr.low, "high": corr.high, "spearman_p": corr.pvalue,
                    "n_graphs": int(table[[e, gap]].dropna().shape[0]),
                    "n_significant": int(len(sig)), "sign_agreement": float(agree)})
    return pd.DataFrame(out)


def _said(verdicts: pd.Series) -> pd.Series:
    """The sign a verdict of :func:`hpstrat_lite.experiments.probes.necessity` gives the gap (0: no evidence)."""
    return verdicts.map({"the graph helps": 1, "the graph hurts": -1}).fillna(0)


def verdict_agreement(table: pd.DataFrame, *, gap: str = "gap", p: str = "p", alpha: float = ALPHA,
                      min_gap: float = MEASURED_GAP) -> dict:
    """How :func:`hpstrat_lite.experiments.probes.necessity`'s verdict fares on the graphs of ``table``:
    ``right`` (a significant gap of the verdict's sign), ``wrong`` (a significant gap of the other sign),
    ``silent`` (no helps / hurts where the gap is significant), ``n_significant``; significant:
    :func:`is_significant` (``|gap| >= min_gap`` and ``p < alpha``)."""
    sig = table[is_significant(table[gap], table[p], alpha=alpha, min_gap=min_gap)]
    said = _said(sig["verdict"])
    truth = np.sign(sig[gap])
    return {"n_significant": int(len(sig)), "right": int(((said != 0) & (said == truth)).sum()),
            "wrong": int(((said != 0) & (said != truth)).sum()), "silent": int((said == 0).sum())}


def mlp_study_seconds(rows=None, *, n_trials: int = 30, protocol: str = "hpstrat") -> pd.DataFrame:
    """Seconds of a ``n_trials``-trial tuned-MLP study per graph, from the Part II trial rows of ``protocol``
    (default the HpStrat k-fold studies of ``results/part2_node.csv``, the folds the estimates use): the sum
    of the first ``n_trials`` trials' ``seconds`` when the study ran that many (``trials_timed = n_trials``),
    else ``n_trials`` times the mean seconds of the trials it ran (``trials_timed`` says how many). Also the
    ``host`` the trials ran on."""
    frames = _rows(rows, RESULTS_DIR / "part2_node.csv")
    t = frames[(frames["phase"] == "trial") & (frames["model"] == "MLP") & (frames["protocol"] == protocol)]
    out = []
    for ds, g in t.groupby("dataset", sort=True):
        g = g.drop_duplicates("trial", keep="last")
        g = g[g["trial"] < n_trials]
        seconds = float(g["seconds"].sum()) if len(g) == n_trials else n_trials * float(g["seconds"].mean())
        out.append({"dataset": ds, "protocol": protocol, "trials_timed": int(len(g)), "study_seconds": seconds,
                    "host": str(g["host"].dropna().iloc[0]) if "host" in g and g["host"].notna().any() else ""})
    return pd.DataFrame(out, columns=["dataset", "protocol", "trials_timed", "study_seconds", "host"])


def cost_ratios(estimate_table: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """Per graph with a 30-trial MLP study: each estimate's seconds over the study's seconds (a share)."""
    m = estimate_table.merge(study, on="dataset")
    cols = {e: m[f"{e}_seconds"] / m["study_seconds"] for e in ESTIMATES if f"{e}_seconds" in m}
    return pd.concat([m[["dataset", "study_seconds", "total_seconds"]],
                      pd.DataFrame(cols).add_suffix("_ratio")], axis=1)


def recommended(scores: dict) -> tuple[str, pd.DataFrame]:
    """The estimate to trust: the one whose worst lower bound of the Spearman interval, over the sets of
    graphs in ``scores`` (name -> :func:`validation` frame), is highest (ties: the higher mean lower bound). Returns its name and the table of
    lower bounds (one column per set, ``worst``)."""
    low = pd.concat({name: v.set_index("estimate")["low"] for name, v in scores.items()}, axis=1)
    low["worst"] = low.min(axis=1)
    tie_break = low[list(scores)].mean(axis=1)  # equal worst bounds: the higher mean lower bound
    low = low.assign(_mean=tie_break).sort_values(["worst", "_mean"], ascending=False).drop(columns="_mean")
    return str(low.index[0]), low


def scatter(points: dict, *, estimates_shown=ESTIMATES):
    """One panel per estimate: the estimate (x) against the measured gap (y, points) for each set of graphs in
    ``points`` (name -> frame with the estimates, ``gap`` and an optional ``label``)."""
    plt = _plt()
    cols = 4
    rows = int(np.ceil(len(estimates_shown) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(BOOK_WIDTH * 1.3, 2.6 * rows), squeeze=False)
    markers = ["o", "s", "^", "D"]
    for ax, e in zip(axes.ravel(), estimates_shown):
        for i, (name, df) in enumerate(points.items()):
            if e not in df:
                continue
            ax.scatter(df[e], df["gap"], s=18, marker=markers[i % 4], alpha=0.75, label=name)
            if "label" in df:
                for x, y, t in zip(df[e], df["gap"], df["label"]):
                    ax.annotate(str(t), (x, y), fontsize=6, alpha=0.7)
        ax.axhline(0, color=NEUTRAL_COLOR, lw=0.6)
        ax.set_title(e, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(estimates_shown):]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("measured gap (points)", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    return fig


def trust_reading(scores: dict, *, verdicts: dict | None = None) -> str:
    """Markdown: the rule of :func:`recommended`, the estimate it names with its lower bounds, and where each
    estimate fails (a set of graphs whose Spearman interval reaches 0 or below, or whose sign agreement is
    under one half); ``verdicts`` (set name -> :func:`verdict_agreement`) adds the verdict's record."""
    name, low = recommended(scores)
    bounds = ", ".join(f"{s}: {low.loc[name, s]:.2f}" for s in scores)
    text = [f"**Rule.** Trust the estimate whose Spearman interval has the highest lower bound on its worst set "
            f"of graphs (ties: the highest mean lower bound). **Recommended: `{name}`** (lower bounds {bounds}).",
            "", "**Where each estimate fails.**"]
    for e in low.index:
        fails = []
        for s, v in scores.items():
            r = v.set_index("estimate").loc[e]
            if not (r["low"] > 0):
                fails.append(f"{s}: no rank relation shown (interval [{r['low']:.2f}, {r['high']:.2f}])")
            if np.isfinite(r["sign_agreement"]) and r["sign_agreement"] < 0.5:
                fails.append(f"{s}: wrong side on {1 - r['sign_agreement']:.0%} of {r['n_significant']} significant gaps")
        text.append(f"- `{e}`: " + ("; ".join(fails) if fails else "no failure by these two checks"))
    for s, v in (verdicts or {}).items():
        text.append(f"\n**Verdict on {s}.** Of {v['n_significant']} significant gaps, the verdict has the gap's "
                    f"sign on {v['right']}, the opposite sign on {v['wrong']}, and says \"no evidence\" on "
                    f"{v['silent']}.")
    return "\n".join(text)


def rank_verdict(row, *, alpha: float = ALPHA) -> str:
    """Whether an estimate ranks a set of gaps, from its :func:`validation` row: *agrees* when Spearman's
    permutation p is below ``alpha`` and the bootstrap interval lies above 0, *disagrees* when p is below
    ``alpha`` and the interval lies below 0, else *inconclusive* (thin evidence: few graphs, a wide interval)."""
    if not row["spearman_p"] < alpha:
        return INCONCLUSIVE
    return AGREES if row["low"] > 0 else DISAGREES if row["high"] < 0 else INCONCLUSIVE


def _p_words(p) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {format_number(p, kind='p')}"


def need_findings(table: pd.DataFrame, scores: dict, verdicts: dict, grid: pd.DataFrame, *,
                  estimate: str = "probe_gain", alpha: float = ALPHA) -> str:
    """The "Key findings" box of the "does the graph help?" page (:func:`findings_box`), from what it computes.

    ``table``: :func:`estimates` (one row per graph with its ``verdict``); ``scores``: set name ->
    :func:`validation` frame; ``verdicts``: set name -> :func:`verdict_agreement`; ``grid``: :func:`csbm_gaps`.
    Bullets: how many graphs get each verdict of :data:`~hpstrat_lite.experiments.probes.VERDICTS`; whether
    ``estimate`` ranks each set's gaps (:func:`rank_verdict`: Spearman's rho, its bootstrap interval and
    permutation p); the verdict's record on the significant gaps (``p < alpha``); the cSBM settings where GCN
    wins or loses significantly, by graph signal lambda, and those where the verdict has the wrong sign; the
    estimate :func:`recommended` names.
    """
    bullets = []
    if len(table):
        parts = [f"**{v}** on {len(g)} ({', '.join(g['dataset'])})"
                 for v in VERDICTS for g in [table[table["verdict"] == v]] if len(g)]
        graphs = f"{len(table)} graph" + ("s" if len(table) != 1 else "")
        bullets.append(f"The verdict of `necessity` on the {graphs} of the estimates table: "
                       + "; ".join(parts) + ".")
    ranked = [(name, v.set_index("estimate").loc[estimate]) for name, v in scores.items()
              if estimate in set(v["estimate"])]
    if ranked:
        bullets.append(f"Does `{estimate}` rank the measured gaps? " + "; ".join(
            f"{name}: **{rank_verdict(r, alpha=alpha)}** (Spearman {r['spearman']:.2f}, 95 % interval "
            f"[{r['low']:.2f}, {r['high']:.2f}], {_p_words(r['spearman_p'])}, {r['n_graphs']} graphs)"
            for name, r in ranked) + ".")
    if verdicts:
        bullets.append(f"The verdict against the significant gaps (p < {alpha:g}): " + "; ".join(
            f"{name}: the gap's sign on {v['right']} of {v['n_significant']}, the opposite sign on {v['wrong']}, "
            f"\"no evidence\" on {v['silent']}" for name, v in verdicts.items()) + ".")
    if len(grid):
        gap, p = ("graph_gap", "graph_p") if "graph_gap" in grid else ("gap", "p")
        sig = grid[is_significant(grid[gap], grid[p], alpha=alpha)]
        by_lam = lambda d: ", ".join(f"λ = {lam:g}: {n}" for lam, n in d.groupby("lam").size().items())  # noqa: E731
        won, lost = sig[sig[gap] > 0], sig[sig[gap] < 0]
        said = _said(sig["verdict"]) if "verdict" in sig else pd.Series(0, index=sig.index)
        wrong = sig[(said != 0) & (said != np.sign(sig[gap]))]
        right = sig[(said != 0) & (said == np.sign(sig[gap]))]
        where = ", ".join(f"({r.lam:g}, {r.mu:g})" for r in wrong.itertuples())
        who = "the best GNN" if gap == "graph_gap" else "GCN"
        bullets.append(f"On the {len(grid)} cSBM settings {who} minus MLP runs from {grid[gap].min():+.1f} to "
                       f"{grid[gap].max():+.1f} points (GCN minus MLP: {grid['gap'].min():+.1f} to "
                       f"{grid['gap'].max():+.1f}): it wins significantly (|gap| ≥ {MEASURED_GAP:g}, "
                       f"p < {alpha:g}) on "
                       f"{len(won)} ({by_lam(won) or 'none'}) and loses on {len(lost)} ({by_lam(lost) or 'none'}); "
                       f"the verdict has its sign on {len(right)} of {len(sig)} and the wrong sign on {len(wrong)}"
                       + (f" (λ, μ) = {where}." if len(wrong) else "."))
    name, low = recommended(scores) if scores else ("", pd.DataFrame())
    worst = low.loc[name, list(scores)].astype(float).dropna() if scores else pd.Series(dtype=float)
    if len(worst):
        reach = ("its interval lies above 0 on every set" if worst.min() > 0 else
                 f"yet its interval reaches {worst.min():.2f} on {worst.idxmin()}, so no estimate shows a rank "
                 "relation on every set")
        bullets.append(f"By the page's rule (the highest lower bound of the Spearman interval on the worst set of "
                       f"graphs) the estimate to trust is `{name}`; {reach}.")
    closing = (f"Rank rule: **agrees** when Spearman's permutation p is below {alpha:g} and its bootstrap interval "
               "lies above 0, **disagrees** when p is below it and the interval lies below 0, else **inconclusive**. "
               "Gaps: GNN minus MLP, points of test accuracy.") if ranked else None
    return findings_box(bullets, source="this page's estimates and measured gaps", closing=closing)
