"""Part II's readings, written from the numbers: the sentences under chapters 6, 8 and 9's tables.

Each function reads the same rows as the table it comments on and returns Markdown, so that a rerun on
other results rewrites the reading with the table. Comparisons with the paper carry Welch's p-value
(:func:`hpstrat_book.necessity.welch_p`, ours over the evaluation seeds against the paper's 5
trials); a difference with ``p >= alpha`` is reported as not established.
"""
from __future__ import annotations

import numpy as np

from .paths import RESULTS
from hpstrat_book.part2.plan import LINK_DATASETS, NODE_DATASETS, results_file
from .baselines import budget_curve, graph_free_share
from .necessity_tables import _as_summary, _baseline_rows, _cell, _vs_paper, mlp_gcn_gaps, ws_gamma_table
from .paper_values import PAPER_LINK, PAPER_NODE

__all__ = ["protocol_reading", "budget_reading", "graph_free_reading", "hgcn_reading", "ws_baseline_reading",
           "mlp_gnn_reading", "link_reading"]


def _p(p) -> str:
    return f"p {p:.2g}" if np.isfinite(p) else "p n/a"


def _versus(summary, paper_table, ds, model, alpha):
    """``(text, verdict)`` of our number against the paper's: verdict "same", "lower", "higher" or None."""
    mean, std, _, n, *_ = _cell(summary, ds, model)
    paper = paper_table.get(ds, {}).get(model)
    if not np.isfinite(mean) or paper is None:
        return None, None
    p = _vs_paper(mean, std, n, paper)
    word = "same" if not (p < alpha) else ("lower" if mean < paper[0] else "higher")
    return f"{ds} {mean:.1f} ± {std:.1f} against {paper[0]:.1f} ({_p(p)})", word


def _sorted_clauses(parts):
    groups = {"same": [], "lower": [], "higher": []}
    for text, word in parts:
        if text:
            groups[word].append(text)
    out = []
    if groups["same"]:
        out.append("reproduced within the noise on " + "; ".join(groups["same"]))
    if groups["lower"]:
        out.append("lower on " + "; ".join(groups["lower"]))
    if groups["higher"]:
        out.append("higher on " + "; ".join(groups["higher"]))
    return ", ".join(out) if out else "not run yet"


def protocol_reading(rows=None, *, book_rows=None, datasets=NODE_DATASETS, alpha=0.05) -> str:
    """Chapter 6: what the paper's splits reproduce (:func:`hpstrat_book.baselines.protocol_table`'s numbers).

    For each model, the datasets where ours on the paper's split equals the paper's value (Welch
    ``p >= alpha``), is lower or is higher; then, for the MLP, whether the paper's value lies between ours
    on its split and ours on the 60/20/20 HpStrat folds (the split of the paper's MLP is not stated).
    """
    summary = _as_summary(rows if rows is not None else results_file("node_protocols", results_dir=RESULTS), "node")
    book = _as_summary(book_rows, "node")
    book = book[book["protocol"] == "hpstrat"] if not book.empty else book
    lines = []
    for model, name in (("GCN", "GCN"), ("MLP", "tuned MLP")):
        parts = [_versus(summary, PAPER_NODE, ds, model, alpha) for ds in datasets]
        lines.append(f"- **{name}** on the paper's splits: {_sorted_clauses(parts)}.")
    between, outside = [], []
    for ds in datasets:
        sparse, dense = _cell(summary, ds, "MLP")[0], _cell(book, ds, "MLP")[0]
        paper = PAPER_NODE.get(ds, {}).get("MLP")
        if paper is None or not (np.isfinite(sparse) and np.isfinite(dense)):
            continue
        (between if sparse < paper[0] < dense else outside).append(
            f"{ds} ({sparse:.1f} < {paper[0]:.1f} < {dense:.1f})" if sparse < paper[0] < dense else ds)
    if between:
        lines.append("- The paper's MLP value lies between our MLP on its GNNs' split and our MLP on 60/20/20 "
                     f"folds on {', '.join(between)}"
                     + (f"; not on {', '.join(outside)}" if outside else "")
                     + ". The paper does not state its MLP's split, so which one it used is not established; "
                       "its Tables 1-2 may set an MLP trained on more labels beside GNNs trained on 20 per class.")
    return "\n".join(lines)


def budget_reading(rows=None, *, dataset="Cora", protocol="planetoid", at=10, task="node_protocols") -> str:
    """Chapter 6: how much the best validation accuracy moved after ``at`` trials, per model (from
    :func:`hpstrat_book.baselines.budget_curve` of the rows, by default those of ``task``'s file)."""
    curve = budget_curve(rows, dataset=dataset, protocol=protocol, task=task)
    if curve.empty:
        return f"No {protocol} trials of {dataset} in the results yet."
    parts = []
    for model, g in curve.groupby("model"):
        g = g.set_index("trials")
        last = int(g.index.max())
        if last <= at:
            parts.append(f"the {model.upper()} ran {last} trials only")
            continue
        gain = g.loc[last, "best_val"] - g.loc[at, "best_val"]
        when = int(g.index[g["best_val"] == g["best_val"].max()][0])
        parts.append(f"the {model.upper()}'s best validation accuracy moves from {g.loc[at, 'best_val']:.1f} "
                     f"({at} trial{'s' if at != 1 else ''}) to {g.loc[last, 'best_val']:.1f} ({last}; {gain:+.1f} points, last gain at "
                     f"trial {when})")
    split = {"planetoid": "public split", "hpstrat": "HpStrat folds", "per_class": "20 / 30 per class"}.get(
        protocol, f"{protocol} split")
    return f"On {dataset} ({split}) " + "; ".join(parts) + "."


def graph_free_reading(baseline_rows=None, link_rows=None, *, datasets=LINK_DATASETS) -> str:
    """Chapter 9: the share of the tuned MLP's margin over chance that the controls without the
    node's own features reach (:func:`hpstrat_book.baselines.graph_free_share`)."""
    share = graph_free_share(baseline_rows, link_rows, datasets=datasets).set_index("dataset")
    parts = []
    for ds, r in share.iterrows():
        if not np.isfinite(r["MLP"]):
            continue
        bits = [f"tuned MLP {r['MLP']:.1f}"]
        if np.isfinite(r["degree"]):
            bits.append(f"degree product {r['degree']:.1f} ({100 * r['degree_share']:.0f} % of the MLP's margin)")
        if np.isfinite(r["shuffled"]):
            bits.append(f"shuffled-feature MLP {r['shuffled']:.1f} ({100 * r['shuffled_share']:.0f} %)")
        paper = PAPER_LINK.get(ds, {}).get("MLP")
        if paper is not None:
            bits.append(f"paper's MLP {paper[0]:.1f}")
        parts.append(f"{ds}: " + ", ".join(bits))
    if not parts:
        return "No link-prediction rows yet."
    return ("; ".join(parts) + ". Where a control without the node's own features reaches most of the MLP's margin, "
            "the \"feature-only\" score is node identity and degree, which the graph provides; a control above the "
            "paper's MLP value means that value cannot come from these features under this protocol.")


def hgcn_reading(rows=None, *, datasets=LINK_DATASETS, alpha=0.05) -> str:
    """Chapter 9: the HGCN-style pipeline's MLP and GCN against the paper's Table 4."""
    summary = _as_summary(rows if rows is not None else results_file("link_hgcn", results_dir=RESULTS), "link")
    run = [ds for ds in datasets if np.isfinite(_cell(summary, ds, "MLP")[0])]
    if not run:
        return "The HGCN-style pipeline has no rows yet."
    lines = []
    for model, name in (("MLP", "MLP"), ("GCN", "GCN")):
        parts = [_versus(summary, PAPER_LINK, ds, model, alpha) for ds in run]
        lines.append(f"- **{name}** in the HGCN-style pipeline (ROC AUC x 100): {_sorted_clauses(parts)}.")
    absent = [ds for ds in datasets if ds not in run]
    if absent:
        lines.append(f"- Not run in this pipeline: {', '.join(absent)} (see the budget note below).")
    return "\n".join(lines)


def ws_baseline_reading(link_rows=None, baseline_rows=None) -> str:
    """Chapter 8: the untrained feature cosine (raw and signed row-sum normalised) beside the tuned MLP
    on WS1000_gamma, and WS1000 against Table 3."""
    wt = ws_gamma_table(link_rows)
    b = _baseline_rows(baseline_rows)
    mlp = wt[(wt["model"] == "MLP") & (wt["gamma"] > 0)].sort_values("gamma")
    if mlp.empty or b is None or len(b) == 0:
        return "No WS1000_gamma rows yet."

    def cos(base):
        vals = []
        for g in mlp["gamma"]:
            sel = b[(b["dataset"] == f"WS1000_{float(g)}") & (b["baseline"] == base)]
            vals.append(100 * sel["test"].mean() if len(sel) else np.nan)
        return np.array(vals)

    raw, signed = cos("feature cosine"), cos("feature cosine, signed row-sum")
    ours = 100 * mlp["test_mean"].to_numpy()
    gammas = " / ".join(f"{g:g}" for g in mlp["gamma"])
    text = (f"For γ = {gammas}: the untrained raw feature cosine scores "
            f"{' / '.join(f'{v:.1f}' for v in raw)}, our tuned MLP {' / '.join(f'{v:.1f}' for v in ours)}, "
            f"so the MLP adds {np.nanmin(ours - raw):+.1f} to {np.nanmax(ours - raw):+.1f} points to what the "
            f"features give without learning. After HGCN's signed row-sum normalisation the same untrained score "
            f"is {' / '.join(f'{v:.1f}' for v in signed)}: rows with a negative sum flip sign and rows summing to "
            f"nearly 0 blow up. That the paper's Figure 2 (MLP below 60, about 60 from γ = 0.6) comes from this "
            f"normalisation is a hypothesis consistent with these numbers, not established: the figure's values "
            f"are not in the paper's text.")
    return text


def _gap_text(ds, g):
    return f"{ds} ({g.gap:+.1f}, {_p(g.welch_p())}; {int(g.mlp_trials)}/{int(g.gcn_trials)} trials)"


def mlp_gnn_reading(rows=None, *, datasets=NODE_DATASETS, line=None, alpha=0.05) -> str:
    """Chapter 6's closing reading, from the HpStrat rows (or their :func:`summarize` output): where the tuned
    MLP is ahead of the GCN (Welch p < ``alpha``), where the two do not differ beyond the noise, where the GCN
    leads (p < ``alpha``) within ``line`` points (default: the widest GCN - MLP gap of the
    paper's own Tables 1-2 on Computers, Photo, CS and Physics) and where it leads by more, each gap with Welch's
    p-value and the trial budgets (MLP/GCN)."""
    summary = _as_summary(rows, "node")
    if line is None:
        line = max(PAPER_NODE[d]["GCN"][0] - PAPER_NODE[d]["MLP"][0] for d in ("Computers", "Photo", "CS", "Physics"))
    gaps = mlp_gcn_gaps(summary, datasets)
    if not gaps:
        return "No dataset has both a tuned MLP and a tuned GCN yet."
    sig = {d: bool(g.welch_p() < alpha) for d, g in gaps.items()}
    ahead = [_gap_text(d, g) for d, g in gaps.items() if g.gap < 0 and sig[d]]
    noise = [_gap_text(d, g) for d, g in gaps.items() if not sig[d]]
    near = [_gap_text(d, g) for d, g in gaps.items() if 0 <= g.gap <= line and sig[d]]
    far = [_gap_text(d, g) for d, g in gaps.items() if g.gap > line and sig[d]]
    parts = []
    if ahead:
        parts.append("the tuned MLP is ahead of the GCN on " + "; ".join(ahead))
    if noise:
        parts.append(f"no difference is established (p >= {alpha:g}, or too few seeds for a test) on " + "; ".join(noise))
    if near:
        parts.append(f"the GCN leads by at most {line:.1f} points on " + "; ".join(near))
    if far:
        parts.append(f"it leads by more than {line:.1f} points on " + "; ".join(far))
    text = "On this run " + ", ".join(parts) + " (GCN - MLP in points, Welch p over the evaluation seeds, trials MLP/GCN)."
    absent = [d for d in datasets if d not in gaps]
    if absent:
        text += f" No tuned rows for {', '.join(absent)} (the page \"Data, reruns and provenance\" says why)."
    return text


def link_reading(rows=None, *, datasets=LINK_DATASETS, gap=2.0, alpha=0.05) -> str:
    """Chapter 9's closing reading: per dataset the GCN's margin over the tuned MLP (ROC AUC x 100) with
    Welch's p-value, sorted into "GCN clearly ahead" (more than ``gap`` points, p < ``alpha``), "MLP ahead"
    (negative margin, p < ``alpha``) and "within the noise or under ``gap``", beside the paper's margin."""
    summary = _as_summary(rows if rows is not None else results_file("link", results_dir=RESULTS), "link")
    gaps = mlp_gcn_gaps(summary, datasets)
    if not gaps:
        return "No link-prediction dataset has both a tuned MLP and a tuned GCN yet."
    groups = {"the GCN is clearly ahead": [], "the MLP is ahead": [], "the margin is under the line or within the noise": []}
    for ds, g in gaps.items():
        paper = PAPER_LINK.get(ds, {})
        margin = (f"; paper {paper['GCN'][0] - paper['MLP'][0]:+.1f}" if paper.get("GCN") and paper.get("MLP") else "")
        text = _gap_text(ds, g)[:-1] + margin + ")"
        if g.gap > gap and g.welch_p() < alpha:
            groups["the GCN is clearly ahead"].append(text)
        elif g.gap < 0 and g.welch_p() < alpha:
            groups["the MLP is ahead"].append(text)
        else:
            groups["the margin is under the line or within the noise"].append(text)
    parts = [f"{name} on {'; '.join(items)}" for name, items in groups.items() if items]
    return ("GCN - MLP (ROC AUC x 100, Welch p, trials MLP/GCN): " + ", ".join(parts)
            + f". The line is {gap:g} points; the paper's proposal needs the first case on every dataset.")
