"""Part II's figures: the tuned MLP against the tuned GCN, the Watts-Strogatz gamma sweep, the feature-subset
study; drawn in the book's style and palette (:mod:`hpstrat_book.plots`)."""
from __future__ import annotations

import numpy as np

from hpstrat_book.part2.plan import NODE_DATASETS
from .necessity_tables import _as_summary, _pct
from .paper_values import PAPER_LINK, PAPER_NODE
from .plots import (BOOK_WIDTH, CHANCE_COLOR, REFERENCE_COLOR, _legend_below, _subplots, model_color)

MODEL_LABELS = {"MLP": "tuned MLP (features only)", "GCN": "tuned GCN", "random": "random scores"}


def plot_mlp_vs_gcn(rows=None, *, datasets=None, task="node", paper: bool = True):
    """Tuned MLP vs GCN per dataset, bars with one-std error bars (chapters 6 and 9).

    ``rows``: result rows, their file or a :func:`summarize` output; ``task`` ``"node"`` (test
    accuracy, %) or ``"link"`` (test ROC AUC x 100). Datasets without both numbers are left out. With
    ``paper`` (default) the paper's mean of each model (Tables 1 and 2, or Table 4) is a black diamond over
    its bar, and the y-axis starts low enough to show every value of the paper as well as ours.
    """

    datasets = NODE_DATASETS if datasets is None else datasets
    if task not in ("node", "link"):
        raise ValueError(f"task must be one of ('node', 'link'), got {task!r}")
    summary = _as_summary(rows, task)
    names = [d for d in datasets if all(np.isfinite(_pct(summary, d, m)[0]) for m in ("MLP", "GCN"))]
    fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.6))
    label = "test accuracy (%)" if task == "node" else "test ROC AUC (x 100)"
    ax.set_ylabel(label)
    ax.set_title("Tuned MLP vs GCN, " + ("node classification" if task == "node"
                                        else "link prediction"))
    if not names:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", transform=ax.transAxes)
        return fig
    xs = np.arange(len(names))
    table = PAPER_NODE if task == "node" else PAPER_LINK
    shown = []
    for j, m in enumerate(("MLP", "GCN")):
        vals = [_pct(summary, d, m) for d in names]
        x = xs + (j - 0.5) * 0.38
        ax.bar(x, [v[0] for v in vals], width=0.38, yerr=[v[1] for v in vals], capsize=3, color=model_color(m),
               label=MODEL_LABELS[m])
        shown += [v[0] for v in vals]
        if paper:
            theirs = [(table.get(d, {}).get(m) or (np.nan,))[0] for d in names]
            ax.scatter(x, theirs, marker="D", s=28, color=REFERENCE_COLOR, edgecolors="white", linewidths=0.8,
                       zorder=4, label="the paper's mean" if j == 0 else None)
            shown += [t for t in theirs if np.isfinite(t)]
    lo = min(shown)
    ax.set_ylim(max(0, 10 * np.floor(lo / 10) - 10), 100)
    ax.set_xticks(xs, names)
    return _legend_below(fig, ncol=3)


def plot_ws_gamma(table, *, ax=None, random_level=0.5):
    """Figure 2 analogue: test ROC AUC against gamma, MLP and GCN, one-std error bars.

    ``table`` is :func:`ws_gamma_table`'s output (gamma 0 is WS1000's i.i.d. features).
    """
    if ax is None:
        fig, ax = _subplots(figsize=(BOOK_WIDTH, 3.6))
    else:
        fig = ax.figure
    for m in ("MLP", "GCN"):
        t = table[table["model"] == m].sort_values("gamma")
        if t.empty:
            continue
        ax.errorbar(t["gamma"], t["test_mean"], yerr=t["test_std"], marker="o", capsize=3,
                    color=model_color(m), label=f"{MODEL_LABELS[m]} ({int(t['n_trials'].max())} "
                    f"trials, {int(t['n_eval'].min())} seeds)")
    ax.axhline(random_level, color=CHANCE_COLOR, linestyle="--", linewidth=1,
               label=f"random guess ({random_level:g})")
    ax.set_xlabel(r"$\gamma$ (weight of the BFS parent's features; 0 = WS1000, i.i.d.)")
    ax.set_ylabel("test ROC AUC")
    ax.set_title("Link prediction on WS1000 and WS1000$_\\gamma$")
    return _legend_below(fig, ncol=3)


def plot_feature_study(table, *, datasets=None, ncols=2):
    """Figures 1 / 3 analogue: accuracy against the number of features, one panel per dataset.

    Lines are the mean test accuracy of the tuned MLP and GCN, bands one standard deviation over
    the evaluation seeds. ``table`` is :func:`feature_study_table`'s output.
    """
    names = list(datasets) if datasets is not None else list(dict.fromkeys(table["dataset"]))
    if not names:
        raise ValueError("table has no feature-study rows to plot (no dataset with >= 2 subsets)")
    ncols = min(ncols, len(names))
    nrows = int(np.ceil(len(names) / ncols))
    fig, axes = _subplots(nrows, ncols, figsize=(BOOK_WIDTH, 3.0 * nrows + 0.4), squeeze=False)
    for ax, ds in zip(axes.ravel(), names):
        for m in ("MLP", "GCN"):
            t = table[(table["dataset"] == ds) & (table["model"] == m)].sort_values("num_features")
            if t.empty:
                continue
            x, y, s = t["num_features"], 100 * t["test_mean"], 100 * t["test_std"]
            ax.plot(x, y, marker="o", markersize=3, color=model_color(m), label=MODEL_LABELS[m])
            ax.fill_between(x, y - s, y + s, color=model_color(m), alpha=0.2)
        trials = sorted({int(v) for v in table.loc[table["dataset"] == ds, "n_trials"]})
        ax.set_title(ds)
        ax.set_xlabel(f"number of features (first columns); {'/'.join(map(str, trials))} trials")
        ax.set_ylabel("test accuracy (%)")
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    return _legend_below(fig, ncol=2)
