"""Figures of the book (and the small tables they are drawn from).

Every function takes library outputs (homophily arrays, fold ids, :func:`quality_table` rows), returns a
matplotlib ``Figure`` and labels its axes, units and legend. Sizes fit the book's text column (about
7.5 inches at 100 dpi); call :func:`use_book_style` once at the top of a notebook.

One palette for the whole book, defined here and nowhere else: a colour per split method
(:data:`METHOD_COLORS`, the Okabe-Ito colours) and a colour per model (:data:`MODEL_COLORS`, Paul Tol's
"muted" colours, so that a model never takes a split method's colour), both chosen to stay distinct
under the common colour-vision deficiencies. :func:`method_color` and :func:`model_color` look them up.
Legends sit outside the axes (below the figure or to its right), never on the data. Part II's figures are
in :mod:`hpstrat_book.plots_part2`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hpstrat_lite._extras import require
from hpstrat_lite.core.homophily import homophily_bins, mean_homophily
from .display import column_kind, findings_box, format_mean_std, format_number, format_table

from hpstrat_lite.palette import METHOD_COLORS, METHOD_LABELS, OKABE_ITO  # noqa: E402  (one palette)

#: Paul Tol's colour-blind-safe "muted" scheme (https://personal.sron.nl/~pault/), for the models.
TOL_MUTED = {"indigo": "#332288", "cyan": "#88CCEE", "teal": "#44AA99", "green": "#117733", "olive": "#999933",
             "sand": "#DDCC77", "rose": "#CC6677", "wine": "#882255", "purple": "#AA4499"}
#: Colours that mean no method and no model: the paper's values and fitted lines (black), context such as
#: histogram bars or one dataset's thin line (light grey), a chance-level baseline (dark grey, dashed).
REFERENCE_COLOR, NEUTRAL_COLOR, CHANCE_COLOR = "#000000", "#BBBBBB", "#555555"

#: Colour of each model family: the feature-only MLP against the graph neural networks.
MODEL_FAMILY_COLORS = {"MLP": TOL_MUTED["indigo"], "GNN": TOL_MUTED["purple"]}
#: Colour of each model (the names of :data:`hpstrat_lite.engine.models.MODELS`): the MLP keeps its
#: family's colour, each GNN its own.
MODEL_COLORS = {"MLP": MODEL_FAMILY_COLORS["MLP"], "GCN": TOL_MUTED["rose"], "GAT": TOL_MUTED["sand"],
                "GraphSAGE": TOL_MUTED["green"], "MixHop": TOL_MUTED["wine"], "APPNP": TOL_MUTED["cyan"],
                "H2GCN": TOL_MUTED["teal"], "GPRGNN": TOL_MUTED["olive"]}
#: Display name of each fold-quality metric.
METRIC_LABELS = {"sdd": "SDD (nodes)", "cdd": "CDD (nodes)", "chd": "CHD (homophily)",
                 "w1": "W1 (homophily)"}
BOOK_WIDTH = 7.5


def method_color(method: str) -> str:
    """The colour of split method ``method`` (a key of :data:`METHOD_COLORS`).

    Examples
    --------
    >>> method_color("hpstrat")
    '#D55E00'
    """
    if method not in METHOD_COLORS:
        raise ValueError(f"method={method!r} has no colour; split methods are {sorted(METHOD_COLORS)}.")
    return METHOD_COLORS[method]


def model_color(model: str) -> str:
    """The colour of ``model``: its own for the built-in models (in any case, ``"gpr-gnn"`` as well), the
    GNN family's for a model of the user's own (a factory's name).

    Examples
    --------
    >>> model_color("MLP") == MODEL_FAMILY_COLORS["MLP"], model_color("my_net") == MODEL_FAMILY_COLORS["GNN"]
    (True, True)
    """
    name = _model_key(model)
    return MODEL_COLORS.get(name, MODEL_FAMILY_COLORS["GNN"])


def model_family(model: str) -> str:
    """``"MLP"`` for the feature-only MLP, ``"GNN"`` for every other model (built-in or the user's own)."""
    return "MLP" if _model_key(model) == "MLP" else "GNN"


def _model_key(model) -> str:
    """The :data:`MODEL_COLORS` key of a model name in any case, with or without ``-`` / ``_`` (``"gpr-gnn"``),
    or with a link decoder after a hyphen (``"MLP-dot"``); a name it does not know is returned as it is."""
    if not isinstance(model, str) or not model:
        raise ValueError(f"model={model!r} must be a non-empty model name, e.g. one of {sorted(MODEL_COLORS)}.")

    def fold(name):
        return name.lower().replace("-", "").replace("_", "")

    known = {fold(k): k for k in MODEL_COLORS}
    return known.get(fold(model)) or known.get(fold(model.partition("-")[0]), model)


def _subplots(*args, **kwargs):
    """``plt.subplots`` with constrained layout, so that a legend placed outside the axes gets its own room."""
    kwargs.setdefault("layout", "constrained")
    return _plt().subplots(*args, **kwargs)


def _legend_below(fig, handles=None, labels=None, *, ncol: int = 3):
    """The figure's legend below its axes (never on the data)."""
    if handles is None:
        handles, labels = [], []
        for ax in fig.axes:
            for h, label in zip(*ax.get_legend_handles_labels()):
                if label not in labels:
                    handles.append(h)
                    labels.append(label)
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=max(1, min(ncol, len(handles))))
    return fig


def book_table(df, *, digits: int = 1, hide_index: bool = False, caption: str | None = None,
               name: str | None = None):
    """A table as the book shows it (:func:`hpstrat_book.display.format_table`): ``digits`` decimals
    for measured values, homophily with 2 decimals, p-values (columns named ``p`` or ``p ...`` / ``... p``)
    with two significant digits, whole numbers (trial counts, seeds) without decimals, no ``-0.0``, and
    ``n/a`` for a missing value. Returns a pandas ``Styler`` (the frame is unchanged); with a ``name``
    (``tbl-...``) and a ``caption``, a numbered, captioned table
    (:class:`~hpstrat_book.display.NumberedTable`, "Table N" in the book, {numref}`name` in prose)."""

    kinds = {}
    for col in df.columns:
        kind = column_kind(col, df[col])
        kinds[col] = digits if kind in ("metric", "accuracy", "rank") else kind
    return format_table(df, kinds=kinds, hide_index=hide_index, caption=caption, name=name)


def use_book_style() -> None:
    """Matplotlib settings for figures legible at book width (fonts, dpi, grid), and the pages' one warning
    filter: the library warns when a class has fewer nodes than folds (scikit-learn's words), which holds for
    some of the book's small graphs on every page that splits them; their class sizes are in each page's
    dataset table, so the pages do not repeat the warning (the audit's page shows it, caught and printed)."""
    import warnings

    warnings.filterwarnings("ignore", message=r"The least populated class in y has only \d+ members")
    mpl = require("matplotlib", extra="reports")

    mpl.rcParams.update({
        "figure.dpi": 100, "savefig.dpi": 100, "figure.figsize": (BOOK_WIDTH, 3.2),
        "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9,
        "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "figure.constrained_layout.use": True,
    })


def _methods(names) -> list[str]:
    order = list(METHOD_COLORS)
    return sorted(names, key=lambda m: order.index(m) if m in order else len(order))


def _plt():
    return require("matplotlib.pyplot", extra="reports")


# --------------------------------------------------------------------------------------------------
# Chapter 1: the method


def homophily_histogram(homophily, *, n_bins: int = 10, title: str | None = None):
    """Node homophily histogram over the B equal-width bins HpStrat stratifies on (paper Figure 2).

    Bars count the nodes of each bin ``[b/B, (b+1)/B)`` (h = 1 in the last bin); the dashed line is the
    mean homophily; isolated nodes (undefined homophily, their own stratum) are counted in the legend.
    """
    h = np.asarray(homophily, dtype=float)
    bins = homophily_bins(h, n_bins=n_bins)
    counts = np.bincount(bins, minlength=n_bins + 1)
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.4))
    edges = np.linspace(0, 1, n_bins + 1)
    ax.bar(edges[:-1], counts[:n_bins], width=1 / n_bins, align="edge", color=NEUTRAL_COLOR, edgecolor=REFERENCE_COLOR,
           linewidth=0.6, label=f"nodes per bin (B = {n_bins})")
    if n_bins <= 20:
        for x, c in zip(edges[:-1], counts[:n_bins]):
            ax.annotate(f"{c}", (x + 0.5 / n_bins, c), ha="center", va="bottom", fontsize=8)
    mean = mean_homophily(h)
    ax.axvline(mean, color=REFERENCE_COLOR, linestyle="--", linewidth=1, label=f"mean homophily {mean:.2f}")
    ax.plot([], [], " ", label=f"isolated nodes (own stratum): {counts[n_bins]}")
    ax.set_xlim(0, 1)
    ax.set_xticks(edges if n_bins <= 10 else np.linspace(0, 1, 11))
    ax.set_xlabel("node homophily h(v) (share of neighbours with the same label)")
    ax.set_ylabel("number of nodes")
    ax.margins(y=0.12)
    fig.legend(loc="outside lower center", ncol=3)
    if title:
        ax.set_title(title)
    return fig


def stratum_spread(homophily, y, folds, k: int, *, n_bins: int = 10) -> pd.DataFrame:
    """Fold counts of every non-empty (homophily bin, class) stratum.

    One row per stratum in HpStrat's processing order: ``bin`` (``B`` = isolated nodes), ``class``,
    ``size``, ``first fold`` (where HpStrat starts dealing the stratum: the number of nodes dealt before
    it, mod k), the node count of each fold (columns ``fold 0`` ... ``fold k-1``) and ``spread`` =
    max - min of those counts. HpStrat deals every stratum round-robin, so its spread is at most 1.
    """
    y = np.asarray(y)
    bins = homophily_bins(homophily, n_bins=n_bins)
    n_classes = int(y.max()) + 1
    stratum = bins * n_classes + y
    counts = np.bincount(stratum * k + np.asarray(folds), minlength=(n_bins + 1) * n_classes * k)
    counts = counts.reshape(-1, k)
    present = np.flatnonzero(counts.sum(axis=1))
    df = pd.DataFrame(counts[present], columns=[f"fold {i}" for i in range(k)])
    df.insert(0, "size", counts[present].sum(axis=1))
    df.insert(0, "class", present % n_classes)
    df.insert(0, "bin", present // n_classes)
    df.insert(3, "first fold", (df["size"].cumsum() - df["size"]) % k)
    df["spread"] = counts[present].max(axis=1) - counts[present].min(axis=1)
    return df


def method_findings(homophily, spreads: dict, quality: pd.DataFrame, *, n_bins: int = 10) -> str:
    """The "Key findings" box of the method chapter (:func:`findings_box`), from what its page computes.

    ``homophily`` is the graph's node homophily (NaN: isolated), ``spreads`` maps a split method to its
    :func:`stratum_spread` table and ``quality`` has one row per method (index) with its ``chd``
    (:func:`hpstrat_lite.fold_quality`). Bullets: how node homophily fills the ``n_bins`` equal-width bins
    (mean, sample std, the share of the fullest bin, the bins under 5%, isolated nodes); the largest stratum
    spread (max - min fold count of a (bin, class) stratum) of each method, HpStrat's at most 1 by construction;
    CHD of each method, and whether HpStrat's is below random k-fold's on this one split.
    """
    h = np.asarray(homophily, dtype=float)
    finite = h[~np.isnan(h)]
    counts = np.bincount(homophily_bins(h, n_bins=n_bins), minlength=n_bins + 1)
    shares = counts[:n_bins] / max(len(finite), 1)
    full = int(np.argmax(shares))
    sparse = int((shares < 0.05).sum())
    mean, std = (format_number(v, kind="homophily") for v in (finite.mean(), np.std(finite, ddof=1)))
    n_iso = int(counts[n_bins])
    isolated = (f"; {n_iso} isolated node{' forms' if n_iso == 1 else 's form'} a stratum of their own"
                if n_iso else "")
    thin = {0: "", 1: "; 1 bin holds under 5%"}.get(sparse, f"; {sparse} bins hold under 5% each")
    bullets = [f"Node homophily over the {n_bins} bins: mean {mean}, std {std}; the fullest bin "
               f"{_bin(full, n_bins)} holds {shares[full]:.0%} of the nodes with neighbours{thin}{isolated}."]
    if "hpstrat" in spreads:
        largest = {m: int(t["spread"].max()) for m, t in spreads.items()}
        over = {m: int((t["spread"] > 1).sum()) for m, t in spreads.items()}
        verdict = "holds by construction" if largest["hpstrat"] <= 1 else "does not hold"
        words = lambda d: ", ".join(f"{METHOD_LABELS.get(m, m)} {d[m]}" for m in spreads)  # noqa: E731
        bullets.append(f"HpStrat deals each of the {len(spreads['hpstrat'])} (bin, class) strata evenly, its fold "
                       f"counts differing by at most one node: **{verdict}** (largest spread: {words(largest)}; "
                       f"strata with a spread above 1: {words(over)}).")
    if "chd" in quality.columns and {"hpstrat", "random"} <= set(quality.index):
        chd = quality["chd"]
        lower = bool(chd["hpstrat"] < chd["random"])
        times = chd["random"] / chd["hpstrat"] if lower and chd["hpstrat"] > 0 else 0.0
        ratio = f"; random's is {times:.0f} times HpStrat's" if times >= 2 else ""
        bullets.append(f"HpStrat's folds follow the graph's mean homophily more closely than random k-fold's: "
                       f"**{'yes' if lower else 'no'}** on this split (CHD: "
                       + ", ".join(f"{METHOD_LABELS.get(m, m)} {format_number(v, kind='metric')}"
                                   for m, v in chd.items())
                       + f"{ratio}; one seed, so a single draw, not a test).")
    return findings_box(bullets, source="this page's folds")


def _bin(b: int, n_bins: int) -> str:
    return f"[{b / n_bins:.2g}, {(b + 1) / n_bins:.2g}{']' if b == n_bins - 1 else ')'}"


def stratum_spread_plot(spreads: dict):
    """How evenly each method deals the (bin, class) strata: number of strata per spread value.

    ``spreads`` maps a method name to its :func:`stratum_spread` table. A spread of 0 or 1 means the
    stratum is split as evenly as its size allows. Large spreads are grouped (3-4, 5-9, 10-19, ...).
    """
    methods = _methods(spreads)
    top = max(int(df["spread"].max()) for df in spreads.values())
    edges = [0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]
    edges = [e for e in edges if e <= top] + [top + 1]
    labels = [str(a) if b - a == 1 else f"{a}-{b - 1}" for a, b in zip(edges[:-1], edges[1:])]
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.0))
    width = 0.8 / len(methods)
    x = np.arange(len(labels))
    for i, m in enumerate(methods):
        group = np.searchsorted(edges, spreads[m]["spread"].to_numpy(), side="right") - 1
        counts = np.bincount(group, minlength=len(labels))
        ax.bar(x + (i - (len(methods) - 1) / 2) * width, counts, width=width, color=method_color(m),
               label=METHOD_LABELS.get(m, m))
    ax.set_xticks(x, labels)
    ax.set_xlabel("spread of a stratum: largest minus smallest fold count (nodes)")
    ax.set_ylabel("number of (bin, class) strata")
    return _legend_below(fig, ncol=len(methods))


def fold_homophily_table(homophily, folds_by_method: dict, k: int) -> pd.DataFrame:
    """Mean homophily of every fold under each method, and its deviation from the whole graph's mean.

    One row per (method, fold): ``nodes``, ``mean homophily`` (isolated nodes left out) and
    ``deviation`` = fold mean - graph mean; CHD is the mean absolute deviation over the folds.
    """
    h = np.asarray(homophily, dtype=float)
    finite = ~np.isnan(h)
    overall = h[finite].mean()
    rows = []
    for m in _methods(folds_by_method):
        f = np.asarray(folds_by_method[m])
        n = np.bincount(f, minlength=k)
        nf = np.bincount(f[finite], minlength=k)
        s = np.bincount(f[finite], weights=h[finite], minlength=k)
        mean = s / np.maximum(nf, 1)
        for i in range(k):
            rows.append({"method": m, "fold": i, "nodes": int(n[i]), "mean homophily": mean[i],
                         "deviation": mean[i] - overall})
    return pd.DataFrame(rows)


def fold_homophily_distributions(homophily, folds_by_method: dict, k: int, *, n_bins: int = 10):
    """Each fold's homophily distribution, one column per split method, side by side.

    Top row: the share of each fold's nodes in every homophily bin (the B bins HpStrat uses), with
    the whole graph dashed. Bottom row: the same shares minus the whole graph's, in percentage
    points, so that small differences in the dominant bins stay visible. Isolated nodes are left out.
    """
    h = np.asarray(homophily, dtype=float)
    finite = ~np.isnan(h)
    bins = homophily_bins(h, n_bins=n_bins)[finite]
    methods = _methods(folds_by_method)
    fig, axes = _subplots(2, len(methods), figsize=(BOOK_WIDTH, 5.0), sharex=True, sharey="row",
                                squeeze=False)
    centers = (np.arange(n_bins) + 0.5) / n_bins
    overall = np.bincount(bins, minlength=n_bins) / bins.size
    cmap = _plt().get_cmap("viridis")
    for col, m in enumerate(methods):
        top, bottom = axes[0, col], axes[1, col]
        f = np.asarray(folds_by_method[m])[finite]
        for i in range(k):
            share = np.bincount(bins[f == i], minlength=n_bins) / max((f == i).sum(), 1)
            style = dict(marker="o", markersize=3, linewidth=1, color=cmap(i / max(k - 1, 1)), label=f"fold {i}")
            top.plot(centers, share, **style)
            bottom.plot(centers, 100 * (share - overall), **style)
        top.plot(centers, overall, color=REFERENCE_COLOR, linestyle="--", linewidth=1.2, label="whole graph")
        bottom.axhline(0, color=REFERENCE_COLOR, linestyle="--", linewidth=1.2)
        top.set_title(METHOD_LABELS.get(m, m))
        bottom.set_xlabel("node homophily (bin centre)")
        bottom.set_xlim(0, 1)
    axes[0, 0].set_ylabel("share of the fold's nodes")
    axes[1, 0].set_ylabel("fold share - graph share\n(percentage points)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(k + 1, 6))
    return fig


def fold_deviation_plot(table: pd.DataFrame):
    """Fold mean homophily minus graph mean homophily, per fold, grouped by method (CHD's ingredients).

    ``table`` is :func:`fold_homophily_table` output.
    """
    methods = _methods(table["method"].unique())
    k = int(table["fold"].max()) + 1
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 2.8))
    width = 0.8 / len(methods)
    for j, m in enumerate(methods):
        d = table[table["method"] == m].sort_values("fold")
        ax.bar(np.arange(k) + (j - (len(methods) - 1) / 2) * width, d["deviation"], width=width,
               color=method_color(m), label=METHOD_LABELS.get(m, m))
    ax.axhline(0, color=REFERENCE_COLOR, linewidth=0.8)
    lim = float(np.nanmax(np.abs(table["deviation"]))) * 1.15 or 1e-3
    ax.set_ylim(-lim, lim)
    ax.set_xticks(np.arange(k), [f"fold {i}" for i in range(k)])
    ax.set_ylabel("fold mean - graph mean\n(node homophily)")
    return _legend_below(fig, ncol=len(methods))


# --------------------------------------------------------------------------------------------------
# Chapter 2: fold metrics


def metric_summary(table: pd.DataFrame, *, metrics=("sdd", "cdd", "chd", "w1"), by=("dataset", "method"),
                   digits: int | None = None) -> pd.DataFrame:
    """``mean ± std`` over seeds of each metric (HpStrat Appendix D layout), one row per ``by`` group.

    The mean has 3 significant digits and the std the same decimals
    (:func:`hpstrat_book.display.format_mean_std`); ``digits`` fixes the decimals of both instead."""

    by = list(by)
    if "method" in by:  # methods in the book's order, not alphabetical
        table = table.assign(method=pd.Categorical(table["method"], _methods(table["method"].unique())))
    g = table.groupby(by, sort="method" in by, observed=True)[list(metrics)]
    mean, std = g.mean(), g.std(ddof=1).fillna(0.0)
    out = pd.DataFrame(index=mean.index)
    for m in metrics:
        out[METRIC_LABELS.get(m, m)] = [format_mean_std(a, b) if digits is None else f"{a:.{digits}f} ± {b:.{digits}f}"
                                        for a, b in zip(mean[m], std[m])]
    return out


def metrics_by_seed(table: pd.DataFrame, *, metrics=("sdd", "cdd", "chd", "w1")):
    """One panel per metric: the value of every seed (dots) and the mean (bar) for each method."""
    methods = _methods(table["method"].unique())
    fig, axes = _subplots(1, len(metrics), figsize=(BOOK_WIDTH, 3.0))
    rng = np.random.default_rng(0)  # jitter only, for legibility
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        for i, m in enumerate(methods):
            v = table.loc[table["method"] == m, metric].to_numpy()
            ax.bar(i, v.mean(), color=method_color(m), alpha=0.35, width=0.7)
            ax.scatter(i + rng.uniform(-0.2, 0.2, v.size), v, s=10, color=method_color(m), zorder=3)
        ax.set_xticks(range(len(methods)), [METHOD_LABELS.get(m, m) for m in methods], rotation=30, ha="right")
        ax.set_title(METRIC_LABELS.get(metric, metric))
        ax.set_ylim(bottom=0)
    np.atleast_1d(axes)[0].set_ylabel("value per seed (lower is better)")
    return fig


def metric_by_dataset(table: pd.DataFrame, *, metrics=("cdd", "chd")):
    """Mean ± std over seeds of each metric per dataset and method; log x-axis, one panel per metric."""
    from matplotlib.ticker import NullFormatter

    methods = _methods(table["method"].unique())
    datasets = list(dict.fromkeys(table["dataset"]))
    height = max(2.6, 1.2 + 0.28 * len(datasets) * max(1, len(methods) / 3))
    fig, axes = _subplots(1, len(metrics), figsize=(BOOK_WIDTH, height), sharey=True)
    g = table.groupby(["dataset", "method"])
    mean, std = g[list(metrics)].mean(), g[list(metrics)].std(ddof=1).fillna(0.0)
    y0 = np.arange(len(datasets))
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        for j, m in enumerate(methods):
            mu = np.array([mean.loc[(d, m), metric] for d in datasets])
            sd = np.array([std.loc[(d, m), metric] for d in datasets])
            ax.errorbar(mu, y0 + (j - (len(methods) - 1) / 2) * min(0.22, 0.8 / len(methods)), xerr=sd, fmt="o", markersize=4,
                        color=method_color(m), label=METHOD_LABELS.get(m, m), capsize=2)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(METRIC_LABELS.get(metric, metric))
        ax.set_xlabel("mean ± std over seeds (log)")
    ax0 = np.atleast_1d(axes)[0]
    ax0.set_yticks(y0, datasets)
    ax0.set_ylim(len(datasets) - 0.5, -0.5)
    handles, labels = ax0.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(methods))
    return fig


# --------------------------------------------------------------------------------------------------
# Chapter 5: Appendix G, the number of bins


def bins_sensitivity(table: pd.DataFrame, *, metrics=("chd", "cdd", "w1"), baseline: str = "stratified"):
    """HpStrat's fold metrics against the number of bins B, relative to ``baseline`` folds.

    ``table`` holds :func:`quality_table` rows of HpStrat for several ``n_bins`` and of ``baseline`` (whose
    folds do not depend on B). Thin lines: one dataset, mean over seeds of HpStrat divided by the
    baseline's mean; thick black line: the median over datasets. Below 1, HpStrat is better.
    """
    hp = table[table["method"] == "hpstrat"].groupby(["dataset", "n_bins"])[list(metrics)].mean()
    base = table[table["method"] == baseline].groupby("dataset")[list(metrics)].mean()
    ratio = hp.div(base, level="dataset")
    ratio.index = ratio.index.set_levels(ratio.index.levels[1].astype(int), level="n_bins")
    fig, axes = _subplots(1, len(metrics), figsize=(BOOK_WIDTH, 3.2), sharex=True)
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        wide = ratio[metric].unstack("dataset")
        for d in wide.columns:
            ax.plot(wide.index, wide[d], color=NEUTRAL_COLOR, linewidth=0.8, alpha=0.8)
        ax.plot(wide.index, wide.median(axis=1), color=REFERENCE_COLOR, linewidth=2, marker="o", label="median")
        ax.axhline(1, color=method_color(baseline), linestyle="--", linewidth=1,
                   label=f"{METHOD_LABELS.get(baseline, baseline)} (ratio 1)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.minorticks_off()
        ax.set_xticks(list(wide.index), [str(int(b)) for b in wide.index])
        lo, hi = np.nanmin(wide.to_numpy()), np.nanmax(wide.to_numpy())
        lo, hi = min(lo, 1.0) / 1.3, max(hi, 1.0) * 1.3
        nice = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo <= t <= hi]
        ax.set_ylim(lo, hi)
        ax.set_yticks(nice, [f"{t:g}" for t in nice])
        ax.set_xlabel("number of bins B")
        ax.set_title(METRIC_LABELS.get(metric, metric).split(" ")[0])
    np.atleast_1d(axes)[0].set_ylabel(f"HpStrat / {METHOD_LABELS.get(baseline, baseline)}\n(ratio of means, log)")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    from matplotlib.lines import Line2D

    handles.insert(0, Line2D([], [], color=NEUTRAL_COLOR, linewidth=0.8))
    labels.insert(0, "one dataset")
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fig


# --------------------------------------------------------------------------------------------------
# Chapter 3: GNN experiments (Tables 3 and 4)


def cross_fold_std_plot(std: pd.DataFrame):
    """Cross-fold std of test accuracy for each model and split method (HpStrat Section 5.2).

    ``std`` is :func:`hpstrat_book.hpstrat.cross_fold_std` output. One group per model: a pale bar per
    split method is the mean over the datasets of that model, the dots on it are the datasets. Lower is a
    more stable protocol.
    """
    methods = _methods(std["method"].unique())
    models = sorted(dict.fromkeys(std["model"]), key=lambda m: (m == "MLP", m))  # the MLP reference last
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.6))
    width = 0.8 / len(methods)
    rng = np.random.default_rng(0)  # jitter only, for legibility
    for j, m in enumerate(methods):
        x0 = np.arange(len(models)) + (j - (len(methods) - 1) / 2) * width
        d = std[std["method"] == m]
        means = d.groupby("model")["std"].mean().reindex(models)
        ax.bar(x0, means, width=width * 0.9, color=method_color(m), alpha=0.35)
        for i, model in enumerate(models):
            v = d.loc[d["model"] == model, "std"].to_numpy()
            ax.scatter(x0[i] + rng.uniform(-0.25, 0.25, v.size) * width, v, s=8, color=method_color(m),
                       zorder=3, linewidths=0)
        ax.plot([], [], "s", color=method_color(m), alpha=0.6, label=METHOD_LABELS.get(m, m))
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_xlim(-0.6, len(models) - 0.4)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("cross-fold std of test accuracy\n(percentage points, lower is better)")
    ax.plot([], [], " ", label="bar: mean over datasets; dot: one dataset")
    fig.legend(loc="outside lower center", ncol=len(methods) + 1)
    return fig


def mean_rank_plot(per_model: pd.DataFrame, global_mean: pd.Series, *, paper: dict | None = None):
    """Mean rank of each split method per model (Table 3) with the global mean rank, and the paper's
    global mean ranks as dashed lines (1 = the smallest cross-fold std of the three methods)."""
    methods = _methods([c for c in per_model.columns if c in METHOD_COLORS])
    models = list(per_model.index)
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.2))
    width = 0.8 / len(methods)
    x = np.arange(len(models) + 1)
    for j, m in enumerate(methods):
        values = list(per_model[m]) + [global_mean.get(m, np.nan)]
        ax.bar(x + (j - (len(methods) - 1) / 2) * width, values, width=width, color=method_color(m),
               label=METHOD_LABELS.get(m, m))
        if paper and m in paper:
            ax.axhline(paper[m], color=method_color(m), linestyle="--", linewidth=1)
    if paper:
        ax.plot([], [], "k--", linewidth=1, label="paper's global mean rank")
    ax.set_xticks(x, models + ["global"])
    ax.set_ylim(0, 3.05)
    ax.set_yticks(np.arange(0, 3.01, 0.5))
    ax.set_ylabel("mean rank (1 = most stable)")
    fig.legend(loc="outside lower center", ncol=len(methods) + 1)
    return fig


# --------------------------------------------------------------------------------------------------
# Chapter 4: Appendix B, accuracy against test-set homophily


def homophily_scatter(rows: pd.DataFrame, fit: dict, *, title: str | None = None, ax=None, legend: bool = True):
    """Test accuracy against the test fold's mean node homophily, one dot per run, with the OLS line
    and its 95 % confidence band (``fit`` is :func:`hpstrat_book.hpstrat.homophily_regression` output).
    The slope (accuracy points per unit of homophily), p-value and R^2 are in the title."""
    fig = None
    if ax is None:
        fig, ax = _subplots(figsize=(BOOK_WIDTH * 0.6, 3.4))
    x, y = rows["test_homophily"].to_numpy(float), 100 * rows["test_acc"].to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y)
    models = rows["model"].unique() if "model" in rows else []
    dots = model_color(str(models[0])) if len(models) == 1 else NEUTRAL_COLOR  # one model: its colour
    ax.scatter(x[ok], y[ok], s=14, color=dots, alpha=0.7, linewidths=0, label="one run")
    grid = np.linspace(x[ok].min(), x[ok].max(), 50)
    pred = fit["model"].get_prediction(np.column_stack([np.ones_like(grid), grid])).summary_frame(alpha=0.05)
    ax.plot(grid, 100 * pred["mean"], color=REFERENCE_COLOR, linewidth=1.5, label="OLS fit")
    ax.fill_between(grid, 100 * pred["mean_ci_lower"], 100 * pred["mean_ci_upper"], color=REFERENCE_COLOR, alpha=0.12,
                    linewidth=0, label="95 % confidence band of the fit")
    ax.set_xlabel("mean node homophily of the test fold")
    ax.set_ylabel("test accuracy (%)")
    stats = f"slope {100 * fit['slope']:.1f} points, p = {fit['p_value']:.2g}, $R^2$ = {fit['r2']:.3f}"
    ax.set_title(f"{title}\n{stats}" if title else stats, fontsize=10)
    if legend and fig is not None:
        _legend_below(fig)
    elif legend:  # right of the axes, off the data
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8)
    return fig if fig is not None else ax.figure


def homophily_scatter_grid(rows: pd.DataFrame, fits: dict, *, ncols: int = 2):
    """:func:`homophily_scatter` for every (dataset, model) pair of ``rows``, one legend below;
    ``fits`` maps each pair to its :func:`hpstrat_book.hpstrat.homophily_regression` output."""
    pairs = list(fits)
    ncols = min(ncols, len(pairs))
    nrows = -(-len(pairs) // ncols)
    fig, axes = _subplots(nrows, ncols, figsize=(BOOK_WIDTH, 3.0 * nrows + 0.4), squeeze=False)
    for ax, (dataset, model) in zip(axes.flat, pairs):
        g = rows[(rows["dataset"] == dataset) & (rows["model"] == model)]
        homophily_scatter(g, fits[(dataset, model)], title=f"{dataset}, {model} ({len(g)} runs)", ax=ax,
                          legend=False)
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    handles[0] = _plt().Line2D([], [], marker="o", linestyle="", color=NEUTRAL_COLOR)  # any model's dots
    return _legend_below(fig, handles, labels, ncol=3)


def paired_differences_plot(block_std: pd.DataFrame, comparisons):
    """Per-block differences of the cross-fold std, one strip per comparison ``(a, b)``: a - b in accuracy
    points for every (dataset, model, seed) block (:func:`hpstrat_book.controls.block_std`), with
    the median as a black bar. Below zero: ``a`` gives the smaller spread on that block."""
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.4))
    rng = np.random.default_rng(0)  # jitter only, for legibility
    labels = []
    for i, (a, b) in enumerate(comparisons):
        d = (block_std[a] - block_std[b]).dropna().to_numpy()
        ax.scatter(i + rng.uniform(-0.25, 0.25, d.size), d, s=9, color=method_color(a), alpha=0.7,
                   linewidths=0, zorder=3)
        ax.plot([i - 0.3, i + 0.3], [np.median(d)] * 2, color=REFERENCE_COLOR, linewidth=2.2, zorder=4)
        labels.append(f"{METHOD_LABELS.get(a, a)}\n- {METHOD_LABELS.get(b, b)}")
    ax.axhline(0, color=REFERENCE_COLOR, linewidth=0.8)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("difference of cross-fold std\n(points; below 0: first smaller)")
    return fig


def effect_by_graph_plot(by_graph: dict, homophily, *, alpha: float = 0.05):
    """Each graph's effect size, graphs ordered by homophily, one series per comparison: ``by_graph`` maps a
    comparison ``(a, b)`` to its :func:`hpstrat_book.controls.paired_tests_by_graph` table. The y axis
    is the rank-biserial r of a vs b over the graph's (model, seed) blocks (below 0: a smaller); a filled
    marker is a graph where the Holm-adjusted p is below ``alpha``, an open one a graph where it is not. The
    colour is ``b``'s method colour; the tick labels give each graph's mean node homophily."""
    h = pd.Series(homophily, dtype=float)
    graphs = sorted({d for t in by_graph.values() for d in t["dataset"] if d in h.index}, key=lambda d: (h[d], d))
    x = {d: i for i, d in enumerate(graphs)}
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.8))
    markers, n = "osD^v", len(by_graph)
    for i, ((a, b), table) in enumerate(by_graph.items()):
        t = table[table["dataset"].isin(graphs)]
        pos = t["dataset"].map(x) + (i - (n - 1) / 2) * 0.18
        sig = (t["p_holm"] < alpha).to_numpy()
        color, marker, label = method_color(b), markers[i % len(markers)], \
            f"{METHOD_LABELS.get(a, a)} vs {METHOD_LABELS.get(b, b)}"
        ax.scatter(pos[sig], t["rank_biserial_r"][sig], s=42, marker=marker, color=color, zorder=3, label=label)
        ax.scatter(pos[~sig], t["rank_biserial_r"][~sig], s=42, marker=marker, facecolors="none", edgecolors=color,
                   linewidths=1.2, zorder=3, label=None if sig.any() else label)
    ax.axhline(0, color=REFERENCE_COLOR, linewidth=0.8)
    ax.set_xticks(range(len(graphs)), [f"{d}\n{h[d]:.2f}" for d in graphs], fontsize=8, rotation=45, ha="right",
                  rotation_mode="anchor")
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("graph (mean node homophily), least homophilous first")
    ax.set_ylabel("rank-biserial r over\nthe graph's blocks\n(below 0: first smaller)")
    _legend_below(fig, ncol=3)
    return fig


def ladder_plot(tests: dict, *, comparisons=None, alpha: float = 0.05):
    """The homophily ladder (:func:`hpstrat_book.controls.ladder_tests`): one panel per comparison
    (a, b), each cell's rank-biserial r of a vs b over its (graph, model, seed) blocks (below 0: a smaller)
    against the cell's measured mean node homophily, one line per number of nodes (darker: larger). A filled
    marker is a cell where the Holm-adjusted p (over the cells) is below ``alpha``. The colour is ``b``'s
    method colour."""
    from matplotlib.colors import to_rgb

    comparisons = list(tests["by_cell"]) if comparisons is None else list(comparisons)
    cells = tests["cells"].set_index("cell")
    sizes = sorted(cells["n"].unique())
    fig, axes = _subplots(1, len(comparisons), figsize=(BOOK_WIDTH, 3.4), sharey=True, squeeze=False)
    markers = "osD^v<>p"
    for ax, (a, b) in zip(axes[0], comparisons):
        t = tests["by_cell"][(a, b)].set_index("dataset")
        base = np.array(to_rgb(method_color(b)))
        for i, n in enumerate(sizes):
            c = cells[cells["n"] == n].sort_values("homophily")
            c = c[c.index.isin(t.index)]
            shade = 0.35 + 0.65 * (i + 1) / len(sizes)  # larger graphs darker, toward the method's colour
            color = tuple(1 - shade * (1 - base))
            r, sig = t.loc[c.index, "rank_biserial_r"], (t.loc[c.index, "p_holm"] < alpha).to_numpy()
            ax.plot(c["homophily"], r, color=color, linewidth=1.2, zorder=2)
            marker = markers[i % len(markers)]
            ax.scatter(c["homophily"][sig], r[sig], s=36, marker=marker, color=color, zorder=3)
            ax.scatter(c["homophily"][~sig], r[~sig], s=36, marker=marker, facecolors="white", edgecolors=color,
                       linewidths=1.2, zorder=3, label=f"n = {n}" if ax is axes[0][0] else None)
        ax.axhline(0, color=REFERENCE_COLOR, linewidth=0.8)
        ax.set_title(f"{METHOD_LABELS.get(a, a)} vs\n{METHOD_LABELS.get(b, b)}", fontsize=9)
        ax.set_xlabel("mean node homophily")
        ax.set_ylim(-1.05, 1.05)
    axes[0][0].set_ylabel("rank-biserial r over the\ncell's blocks (below 0:\nfirst smaller)")
    _legend_below(fig, ncol=len(sizes))
    return fig


# --------------------------------------------------------------------------------------------------
# Your graph: the audit


def split_spread_plot(std: pd.DataFrame, *, title: str | None = None):
    """Cross-fold std of test accuracy per model (groups) and split method (bars in the method's colour).

    ``std`` is a wide table, models as rows and split methods as columns, as
    :attr:`hpstrat_lite.auditing.AuditResult.std` holds it (points, lower is more stable).
    """
    methods = _methods(list(std.columns))
    unknown = [m for m in methods if m not in METHOD_COLORS]
    if unknown:
        raise ValueError(f"std has column(s) {unknown} that are not split methods; expected some of "
                         f"{sorted(METHOD_COLORS)}.")
    models = [str(m) for m in std.index]
    fig, ax = _subplots(figsize=(min(BOOK_WIDTH, 2.4 + 1.3 * len(models)), 3.4))
    width = 0.8 / len(methods)
    x = np.arange(len(models))
    for j, m in enumerate(methods):
        ax.bar(x + (j - (len(methods) - 1) / 2) * width, std[m].to_numpy(float), width=width, color=method_color(m),
               label=METHOD_LABELS.get(m, m))
    ax.set_xticks(x, models)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("cross-fold std of test accuracy\n(points, lower = more stable)")
    if title:
        ax.set_title(title)
    return _legend_below(fig, ncol=len(methods))


# --------------------------------------------------------------------------------------------------
# Appendix: what a rerun costs


def minutes_by_dataset_plot(minutes: pd.DataFrame):
    """Training minutes per dataset (rows of ``minutes``, log x-axis) on each machine (columns, a marker shape
    each, in greys: machines are neither split methods nor models), e.g.
    :func:`hpstrat_book.timing.minutes_per_dataset` output."""
    from matplotlib.ticker import FuncFormatter

    if minutes.empty:
        raise ValueError("minutes is empty: no timed sweep to plot.")
    datasets = [str(d) for d in minutes.index]
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 1.2 + 0.3 * len(datasets)))
    y = np.arange(len(datasets))
    shades = [REFERENCE_COLOR, CHANCE_COLOR, NEUTRAL_COLOR, REFERENCE_COLOR, CHANCE_COLOR]
    markers = ["o", "s", "^", "D", "v"]
    for j, machine in enumerate(minutes.columns):
        ax.scatter(minutes[machine].to_numpy(float), y, s=30, marker=markers[j % len(markers)],
                   color=shades[j % len(shades)], edgecolors=REFERENCE_COLOR, linewidths=0.5, zorder=3,
                   label=str(machine))
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_yticks(y, datasets)
    ax.set_ylim(len(datasets) - 0.5, -0.5)
    ax.set_xlabel("training minutes per dataset (log scale; all models, split methods and folds)")
    return _legend_below(fig, ncol=2)
