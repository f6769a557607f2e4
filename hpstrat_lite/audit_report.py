"""An audit in words and in HTML: the text of :class:`hpstrat_lite.auditing.AuditResult`, apart from its computation.

:func:`format_audit` is the plain-text report (``hpstrat audit`` prints it); :func:`verdict`,
:func:`key_findings`, :func:`best_model_line`, :func:`method_line`, :func:`design_line`,
:func:`convergence_line`, :func:`changes_line` and :func:`necessity_line` are its parts, which the notebook
page and the HTML report (:func:`render_report`, executing ``templates/audit_report.ipynb``) show
one by one. Every sentence is computed from the result: a winner is named only where the result's
pairwise post-hoc test names one (:func:`hpstrat_lite.stats.posthoc`).
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path

from ._extras import require
from ._host import KERNEL_QUIET
from ._io import atomic_write
from .auditing import ALPHA, CAPPED_SHARE, AuditResult, load_audit
from ._format import findings_box, format_number
from .experiments.probes import family_lines
from .palette import METHOD_COLORS, METHOD_LABELS
from .stats import MIN_PAIRS, PosthocResult

#: The notebook :func:`render_report` executes (shipped with the package), and the file it writes.
REPORT_TEMPLATE = Path(__file__).resolve().parent / "templates" / "audit_report.ipynb"
REPORT_FILE = "report.html"
#: What a single split seed allows: no spread over seeds, so no lead can be judged.
ONE_SEED = "one split seed: no spread to judge a lead"


def seeds_needed(n_pairs: int, *, alpha: float = ALPHA, min_pairs: int = MIN_PAIRS) -> int:
    """The fewest units with which two-sided Wilcoxon tests, Holm-corrected over ``n_pairs`` pairs, can reach
    ``alpha`` (every unit favouring the leader: :math:`n_p 2^{1 - n} < \alpha`), and at least ``min_pairs``.

    >>> seeds_needed(1), seeds_needed(3)
    (6, 7)
    """
    return max(min_pairs, math.floor(math.log2(2 * max(n_pairs, 1) / alpha)) + 1)


def leader_pairs(r: PosthocResult) -> list[tuple[str, float, float, float]]:
    """``(other, median difference leader - other, p, Holm p)`` for every pair of ``r`` with the leader."""
    out = []
    for row in r.pairs.itertuples(index=False):
        if r.leader in (row.a, row.b):
            first = row.a == r.leader
            out.append((row.b if first else row.a, row.median_diff if first else -row.median_diff, row.pvalue,
                        row.p_holm))
    return out


def posthoc_text(r: PosthocResult, *, what: str, points: str) -> str:
    """The leader against each other (median difference, Wilcoxon and Holm p, the unit count), and whether a
    winner is named; ``what`` names the treatments ("split method", "model")."""
    if r.n_blocks <= 1:
        return f"{ONE_SEED} ({r.leader} leads)"
    needed = seeds_needed(len(r.pairs), alpha=r.alpha)
    if r.n_blocks < MIN_PAIRS:
        medians = "; ".join(f"{d:+.2f} {points} vs {o}" for o, d, _, _ in leader_pairs(r))
        return (f"over {r.n_blocks} {r.unit}s {r.leader} leads (median {medians}), untested: no {what} differs from "
                f"the next (a Wilcoxon test needs at least {MIN_PAIRS} {r.unit}s; a winner needs at least {needed})")
    pairs = "; ".join(f"{r.leader} - {o}: median {d:+.2f} {points}, Wilcoxon p = {format_number(p, kind='p')}, "
                      f"Holm p = {format_number(h, kind='p')}" for o, d, p, h in leader_pairs(r))
    head = f"over {r.n_blocks} {r.unit}s, {pairs}"
    if r.winner is not None:
        return f"{head}: {r.winner} is best (Holm p < {r.alpha} against every other {what})"
    text = f"{head}: no {what} differs from the next"
    if r.n_blocks < needed:
        best = min(1.0, len(r.pairs) * 2.0 ** (1 - r.n_blocks))
        text += (f" ({r.n_blocks} {r.unit}s can give at best Holm p = {format_number(best, kind='p')}; a winner "
                 f"needs at least {needed} {r.unit}s)")
    return text


def method_line(result: AuditResult) -> str:
    """Which split method gives the lowest spread, by the pairwise post-hoc test after the Friedman test."""
    if result.method_posthoc is None:
        return "pairwise post-hoc: one split method, nothing to compare."
    body = posthoc_text(result.method_posthoc, what="split method", points="points of std")
    return f"pairwise post-hoc (lowest cross-fold std; Wilcoxon signed-rank over split seeds, Holm): {body}."


def best_model_line(result: AuditResult) -> str:
    """One line: the best model under each split method, whether the pairwise tests name it, and whether it changes."""
    what = (f"best model (highest mean test {result.metric_name}; named only when the leader beats every other "
            f"model, Wilcoxon signed-rank over split seeds, Holm p < {ALPHA})")
    posthoc = result.model_posthoc
    if not posthoc:
        return f"{what}: one model, nothing to compare."
    per = "; ".join(f"{m}: {posthoc_text(r, what='model', points='points')}" for m, r in posthoc.items())
    if result.n_seeds == 1:
        return f"{what}: {ONE_SEED}; " + "; ".join(f"{m}: {r.leader}" for m, r in posthoc.items()) + "."
    if result.best_model_changes:
        return f"{what} CHANGES with the split method: {per}."
    if not any(result.best_model.values()):
        return f"{what}: no clear best model under any split method: {per}."
    return f"{what}: does not change with the split method; {per}."


def design_line(result: AuditResult) -> str:
    """What the Friedman design can answer: its smallest p-value and the blocks a significant answer needs."""
    f = result.friedman
    n_models = len(result.std)
    if f.n_methods < 2:
        return "the Friedman test needs at least 2 split methods."
    if f.blocks_needed is None:
        return ""
    seeds = math.ceil(f.blocks_needed / max(n_models, 1))
    line = (f"design: the blocks are (model, split seed) pairs, {f.n_blocks} here; the smallest p-value "
            f"{f.n_blocks} blocks and {f.n_methods} methods can give is {f.min_pvalue:.3g} (every block ranking "
            f"the methods alike), and such a perfectly consistent ordering reaches p < {ALPHA} from "
            f"{f.blocks_needed} blocks on ({seeds} split seed(s) with {n_models} model(s))")
    if f.pvalue == f.pvalue and f.pvalue >= ALPHA:
        if f.blocks_needed_observed is None:
            return line + "; at the observed agreement (Kendall's W = 0) no number of blocks would."
        more = math.ceil(f.blocks_needed_observed / max(n_models, 1))
        return line + (f"; at the observed agreement (Kendall's W = {f.kendall_w:.2f}) about "
                       f"{f.blocks_needed_observed} blocks ({more} split seeds with {n_models} model(s)).")
    return line + "."


def convergence_line(result: AuditResult) -> str:
    """The share of each model's runs that stopped at ``max_epochs``, a warning above :data:`CAPPED_SHARE`, and
    which to believe where the necessity estimate and the measured gap disagree."""
    c = result.convergence
    if c.empty:
        return ""
    cap = int(c["max_epochs"].max())
    share = ", ".join(f"{m} {int(r.capped)}/{int(r.runs)} ({r.share:.0%})" for m, r in c.iterrows())
    capped = result.capped_models
    if capped:
        line = (f"convergence: WARNING: more than {CAPPED_SHARE:.0%} of the runs of {', '.join(capped)} stopped at "
                f"max_epochs = {cap} instead of early ({share}): their scores may still be rising, and a lead or a gap "
                f"between models may be the cap's; raise max_epochs (--max-epochs) and audit into another folder.")
    else:
        line = (f"convergence: runs stopped at max_epochs = {cap}: {share} (none above the {CAPPED_SHARE:.0%} this "
                f"audit flags).")
    if result.necessity_disagrees:
        model, gap = result.graph_gap
        probe = result.necessity[result.necessity["estimate"] == "probe_gain"].iloc[0]
        both = (f" The necessity estimate ({probe['value']:+.2f} points [{probe['low']:+.2f}, {probe['high']:+.2f}]) "
                f"and the measured gap ({model} - MLP {gap:+.2f} points) disagree")
        if capped:
            line += (both + ": believe the necessity estimate until a rerun with a larger max_epochs (its linear probes "
                     "are fitted to convergence; the measured gap comes from models stopped before they converged).")
        else:
            line += (both + ": the runs converged, so believe the measured gap (trained models under the protocol); the "
                     "estimate is a linear probe's.")
    return line


def changes_line(result: AuditResult) -> str:
    """What loading changed in the graph: self-loops and duplicate edges dropped, reverse edges added,
    relabelled or encoded classes, identity features; empty for a built-in dataset."""
    c = result.graph_changes
    if not c:
        return ""
    parts = [f"{c[key]} {text}" for key, text in (("self_loops", "self-loop(s) dropped"),
                                                  ("duplicate_edges", "duplicate edge(s) dropped"),
                                                  ("reverse_edges", "reverse edge(s) added (made undirected)"))
             if c.get(key)]
    labels = c.get("labels")
    if labels:
        shown = ", ".join(map(repr, labels[:10])) + (", ..." if len(labels) > 10 else "")
        how = ("encoded in sorted order, as scikit-learn's LabelEncoder" if isinstance(labels[0], str)
               else "relabelled in sorted order")
        parts.append(f"class labels [{shown}] {how} to 0..{len(labels) - 1}")
    if c.get("identity_features"):
        parts.append("no node features: identity features (one-hot node ids) stood in")
    return "graph as read: " + ("; ".join(parts) if parts else "no self-loop, duplicate edge or relabelled class") + "."


def necessity_line(result: AuditResult) -> str:
    """Whether a graph model is worth it on this graph: the verdict of the cheap estimate."""
    n = result.necessity
    if n is None or n.empty:
        why = ("the graph has no node features" if result.graph_changes.get("identity_features")
               else "not requested, or the graph has no node features")
        return f"does the graph help? not estimated ({why})."
    first = n.iloc[0]
    probe = n[(n["estimate"] == "probe_gain") & n["low"].notna()]
    interval = f" [{probe['low'].iloc[0]:+.2f}, {probe['high'].iloc[0]:+.2f}]" if len(probe) else ""
    metric = n["metric"].iloc[0] if "metric" in n else result.metric
    note = f" in {metric}" if metric != result.metric else ""
    head = (f"does the graph help? {first['verdict']} (cheap estimate{note}: best probe on the graph minus on "
            f"features alone, {first['gap']:+.2f} points{interval}; hpstrat necessity)")
    families = family_lines(n) if {"estimate", "value", "low", "high"} <= set(n.columns) else []
    return "\n".join([head, *(f"- {line}" for line in families)])


def _friedman_head(result: AuditResult, *, markdown: bool) -> tuple[str | None, str]:
    """``(state, text)`` of the Friedman test: state None (undefined), "inconclusive" or "differ"."""
    f = result.friedman
    p = format_number(f.pvalue, kind="p") if markdown else f"{f.pvalue:.3g}"
    if f.pvalue != f.pvalue:
        return None, (f"the Friedman test needs at least 2 blocks and 2 split methods (got {f.n_blocks} (model, seed) "
                      f"block(s), {f.n_methods} method(s))")
    if f.pvalue >= ALPHA:
        return "inconclusive", (f"Friedman p = {p} >= {ALPHA} over {f.n_blocks} (model, seed) blocks; the smallest p "
                                f"this design can reach is {format_number(f.min_pvalue, kind='p')}")
    return "differ", f"Friedman chi2 = {f.statistic:.2f}, p = {p} < {ALPHA}, {f.n_blocks} (model, seed) blocks"


def verdict(result: AuditResult) -> str:
    """The result in words: whether the split methods' spreads differ (Friedman), which method is lowest (only by
    the pairwise post-hoc test), whether the models learned more than the majority class, and the best model."""
    state, friedman = _friedman_head(result, markdown=False)
    what = f"cross-fold spread of test {result.metric_name}"
    r = result.method_posthoc
    if state is None or r is None:
        head = f"inconclusive: {friedman}."
    elif state == "inconclusive":
        head = f"inconclusive: {friedman}; the split methods' {what} differ no more than chance would make them."
    elif result.best_method is not None:
        head = (f"the split methods differ ({friedman}): {result.best_method} gives the lowest {what} "
                f"({posthoc_text(r, what='split method', points='points of std')}).")
    else:
        head = (f"the split methods differ ({friedman}), but no method differs from the next in the pairwise tests: "
                f"{posthoc_text(r, what='split method', points='points of std')}.")
    models = list(result.std.index)
    if result.at_majority and len(result.at_majority) == len(models):
        head += (" Every model scores within noise of the majority-class baseline, so this rests only on models that "
                 "learned no more than the class shares: the spreads measure how the folds hold the classes, not the "
                 "models.")
    elif result.at_majority:
        head += (" Models within noise of the majority-class baseline (their spreads measure the folds' class shares): "
                 f"{', '.join(map(str, result.at_majority))}.")
    ranking = ", ".join(f"{m} {v:.2f}" for m, v in result.ranks.loc["mean"].sort_values().items())
    return f"{head} Mean ranks (1 = lowest spread): {ranking}. {best_model_line(result)}"


def key_findings(result: AuditResult) -> str:
    """The audit's "Key findings" box in Markdown (:func:`hpstrat_lite._format.findings_box`)."""
    state, friedman = _friedman_head(result, markdown=True)
    name = result.metric_name
    if state in (None, "inconclusive"):
        answer = f"**inconclusive** ({friedman})"
    elif result.best_method is not None:
        r = result.method_posthoc
        answer = (f"**yes**: {result.best_method} gives the lowest ({friedman}; against every other method Holm p <= "
                  f"{format_number(max(h for *_, h in leader_pairs(r)), kind='p')} over {r.n_blocks} split seeds)")
    else:
        answer = (f"**the methods differ, no winner** ({friedman}; no method differs from the next in the pairwise "
                  f"tests over {result.method_posthoc.n_blocks} split seed(s))")
    lowest = result.std.idxmin(axis=1).dropna()
    bullets = [f"Do the split methods change the cross-fold spread of test {name}? {answer}.",
               f"Cross-fold std of test {name} (points, mean over the models and split seeds): "
               + ", ".join(f"{m} {v:.2f}" for m, v in result.std.mean().items())
               + "; lowest per model: " + ", ".join(f"{model}: {m}" for model, m in lowest.items()) + "."]
    leaders = ", ".join(f"{m}: {r.leader}" for m, r in result.model_posthoc.items())
    if result.n_seeds == 1:
        bullets.append(f"Best model: {ONE_SEED} (leaders {leaders}).")
    elif result.best_model_changes:
        bullets.append(f"The best model **changes** with the split method ({leaders}).")
    elif not any(result.best_model.values()):
        bullets.append(f"No model differs from the next under any split method in the pairwise tests ({leaders}).")
    else:
        bullets.append(f"The best model does not change with the split method ({leaders}).")
    if result.capped_models:
        bullets.append(f"Runs capped at max_epochs (more than {CAPPED_SHARE:.0%}): {', '.join(result.capped_models)}; "
                       "raise max_epochs.")
    if result.at_majority:
        bullets.append("Within noise of the majority-class baseline (their spreads measure the folds' class "
                       f"shares): {', '.join(map(str, result.at_majority))}.")
    elif "majority" in result.baselines.index:
        bullets.append("Every model scores beyond its own spread of the majority-class baseline.")
    q = result.quality
    if {"chd", "cdd"} <= set(q.columns) and len(q):
        def lowest_of(metric):  # every method at the lowest value (ties within 1e-12)
            col = q[metric]
            return f"{' and '.join(col.index[col <= col.min() + 1e-12])} ({format_number(col.min())})"

        bullets.append(f"Fold quality: lowest CHD {lowest_of('chd')}, lowest CDD {lowest_of('cdd')}.")
    return findings_box(bullets, source="this audit's runs")


def format_audit(result: AuditResult) -> str:
    """A plain-text report: the tables, the Friedman test, its design and the pairwise tests, the best model,
    convergence, fold quality, the verdict and whether the graph helps."""
    k = int(result.rows["k"].iloc[0])
    fmt = {"float_format": lambda v: f"{v:.2f}"}
    f = result.friedman
    lines = [f"audit of {result.dataset}: k = {k}, {result.n_seeds} split seed(s), {len(result.std)} model(s), "
             f"{len(result.rows)} runs; metric: test {result.metric_name} (points x 100; model selection and early "
             f"stopping on the validation loss)"]
    lines += [line for line in (changes_line(result),) if line]
    if result.imbalanced_binary and result.metric != "roc_auc":
        share = max(result.class_counts) / sum(result.class_counts)
        lines.append(f"note: the labels are binary and imbalanced (the larger class holds {share:.0%} of the "
                     f"nodes); metric='roc_auc' (--metric roc_auc) scores what a majority-class predictor cannot.")
    name = result.metric_name
    lines += ["", f"cross-fold std of test {name} (points; lower = more stable folds), mean over seeds:",
              result.std.to_string(**fmt),
              "", f"mean test {name} (points), with the baselines on the same folds:",
              result.score_table().to_string(**fmt),
              "", "ranks of the split methods per model (1 = lowest std; mean over seeds):",
              result.ranks.to_string(**fmt),
              "", f"Friedman test over (model, seed) blocks: statistic = {f.statistic:.3f}, p = {f.pvalue:.4g}"
                  + (" (inconclusive)" if not result.conclusive else ""),
              design_line(result), method_line(result), best_model_line(result),
              "", convergence_line(result),
              "", "fold quality (mean over seeds; lower is better):",
              result.quality.to_string(float_format=lambda v: f"{v:.4f}"),
              "", "verdict: " + verdict(result), "", necessity_line(result)]
    return "\n".join(lines)


def plot_audit(result: AuditResult, *, ax=None):
    """Figure of the cross-fold spread: per model, each method's std of the test metric (points)."""
    plt = require("matplotlib.pyplot", extra="reports")

    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 1.1 * len(result.std), 3.2))
    std = result.std.rename(columns=lambda m: METHOD_LABELS.get(m, m))
    colors = [METHOD_COLORS.get(m, METHOD_COLORS["random"]) for m in result.std.columns]
    std.plot.bar(ax=ax, rot=0, width=0.8, color=colors)
    ax.set_ylabel(f"cross-fold std of test {result.metric_name} (points)")
    ax.set_xlabel("")
    ax.set_title(f"{result.dataset}: spread of test {result.metric_name} over folds")
    ax.legend(title="split method", fontsize="small")
    return ax


def render_report(out, *, template=None, kernel_name: str = "python3") -> Path:
    """Write the one-page report ``out/report.html`` of an audit written to the folder ``out``.

    The template notebook (default :data:`REPORT_TEMPLATE`) is executed with papermill (parameter
    ``out``: it reads ``rows.csv`` and ``quality.csv`` there with :func:`load_audit`) and converted to
    HTML without its code cells by nbconvert: the fold-quality table, a figure of the cross-fold spread
    per model and method, the tables of the audit and the verdict in words. Needs papermill, nbconvert
    and a Jupyter kernel ``kernel_name`` that imports this library (the ``book`` extra installs them).

    Raises
    ------
    FileNotFoundError
        ``out`` lacks the audit's files, or the template is missing.
    RuntimeError
        The template notebook failed (the message names the error).
    """
    import nbformat

    try:
        import papermill as pm
        from nbconvert import HTMLExporter
    except ImportError as err:
        raise RuntimeError(f"the HTML report needs papermill and nbconvert ({err}); install them with "
                           f"pip install 'hpstrat_lite[book]'.") from None
    folder = Path(out).absolute()
    load_audit(folder)  # the files are there and readable, before a kernel starts
    template = Path(template) if template is not None else REPORT_TEMPLATE
    if not template.is_file():
        raise FileNotFoundError(f"report template {str(template)!r} does not exist.")
    with tempfile.TemporaryDirectory(prefix="hpstrat-report-") as tmp:
        executed = Path(tmp) / "report.ipynb"
        try:
            pm.execute_notebook(str(template), str(executed), parameters={"out": str(folder)},
                                kernel_name=kernel_name, cwd=str(folder), progress_bar=False, log_output=False,
                                extra_arguments=KERNEL_QUIET)
        except pm.PapermillExecutionError as err:
            raise RuntimeError(f"the report notebook failed: {err.ename}: {err.evalue}") from None
        nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)

    path = folder / REPORT_FILE
    atomic_write(path, lambda tmp: Path(tmp).write_text(body, encoding="utf-8"))
    return path
