"""Audit a graph: do the split methods change what a k-fold evaluation of your models says?

:func:`audit` runs HpStrat's GNN experiment (Section 5) on one graph — a built-in dataset, a graph file
or a PyG ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`) — for a few models (built-in names and/or
factories of your own, :mod:`hpstrat_lite.engine.user_models`) and the three split methods, and reads the
result the way the paper's tables do:

* ``std``: the cross-fold standard deviation of test accuracy (points x 100), per model and method,
  averaged over split seeds (Section 5.2, :func:`hpstrat_lite.reports.hpstrat.cross_fold_std`): lower means a
  protocol whose folds give more alike scores;
* ``ranks``: the methods ranked on that std within each model (1 = lowest spread), and their mean rank
  (Table 3, :func:`hpstrat_lite.core.ranking.rank_methods`);
* ``friedman``: a Friedman test of the methods with the models as blocks (Section 5.2): with
  ``pvalue >= 0.05`` the differences in spread are within chance, the audit is *inconclusive*;
* ``best_model``: the model with the highest mean test accuracy under each split method and whether it
  changes with the split (Appendix E);
* ``quality``: SDD, CDD, CHD and W1 of the folds (Section 4.2, :func:`hpstrat_lite.quality_table`), mean
  over split seeds.
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pandas as pd

from .._extras import require

#: Files an audit with ``out=`` writes: the result rows (one per run, resumable) and the fold quality.
ROWS_FILE, QUALITY_FILE = "rows.csv", "quality.csv"
#: Below this Friedman p-value the split methods' spreads are said to differ.
ALPHA = 0.05


@dataclasses.dataclass(frozen=True)
class FriedmanResult:
    """Friedman test of the split methods (treatments) over the models (blocks)."""

    statistic: float
    pvalue: float
    n_blocks: int


@dataclasses.dataclass(frozen=True, repr=False)
class AuditResult:
    """What :func:`audit` found on one graph (see the module docstring for each table).

    Attributes
    ----------
    rows : DataFrame
        One row per (model, method, seed, fold), the columns of :func:`hpstrat_lite.experiments.sweep.run_experiment`.
    std, ranks, friedman, best_model, quality
        The tables of the module docstring; ``ranks`` has a last row ``mean``; ``best_model`` is a
        Series (one entry per method, and ``changes``).
    accuracy : DataFrame
        Mean test accuracy (points x 100) per model and method.
    dataset : str
        The graph's name in the rows.
    """

    rows: pd.DataFrame
    std: pd.DataFrame
    accuracy: pd.DataFrame
    ranks: pd.DataFrame
    friedman: FriedmanResult
    best_model: pd.Series
    quality: pd.DataFrame
    dataset: str

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, quality: pd.DataFrame) -> "AuditResult":
        """Build the result from an audit's rows and its fold-quality table (long, one row per
        (method, seed), as :func:`hpstrat_lite.quality_table` returns; or already averaged per method)."""
        from ..reports.hpstrat import best_model_changes, cross_fold_std
        from ..core.ranking import friedman_test, rank_methods

        if rows.empty:
            raise ValueError("rows is empty: the audit trained no run.")
        datasets = rows["dataset"].unique()
        if len(datasets) != 1:
            raise ValueError(f"an audit covers one graph; rows hold {sorted(map(str, datasets))}.")
        methods = [m for m in ("random", "stratified", "hpstrat") if m in set(rows["method"])]
        models = list(dict.fromkeys(rows["model"]))
        cfs = cross_fold_std(rows)
        std = cfs.pivot(index="model", columns="method", values="std").reindex(index=models, columns=methods)
        accuracy = cfs.pivot(index="model", columns="method", values="mean").reindex(index=models, columns=methods)
        ranked = rank_methods(cfs, "std", blocks=("dataset", "model"))
        ranks = ranked.pivot(index="model", columns="method", values="rank").reindex(index=models, columns=methods)
        ranks.loc["mean"] = ranks.mean()
        stat, p, blocks = friedman_test(cfs, "std", blocks=("dataset", "model"))
        best = best_model_changes(rows).iloc[0]
        best = pd.Series({**{m: best[m] for m in methods}, "changes": bool(best["changes"])}, name="best model")
        if "seed" in quality.columns:
            quality = quality.groupby("method")[["sdd", "cdd", "chd", "w1"]].mean()
        quality = quality.reindex([m for m in methods if m in quality.index])
        for table in (std, accuracy, ranks):
            table.columns.name = "method"
        return cls(rows=rows.reset_index(drop=True), std=std, accuracy=accuracy, ranks=ranks,
                   friedman=FriedmanResult(stat, p, blocks), best_model=best, quality=quality,
                   dataset=str(datasets[0]))

    @property
    def conclusive(self) -> bool:
        """True when the Friedman test says the methods' spreads differ (p < :data:`ALPHA`)."""
        return bool(self.friedman.pvalue < ALPHA)  # NaN (fewer than 2 models) compares False

    def best_model_line(self) -> str:
        """One line: the best model under each split method, and whether it changes."""
        per = ", ".join(f"{m}: {self.best_model[m]}" for m in self.best_model.index if m != "changes")
        if self.best_model["changes"]:
            return f"best model (highest mean test accuracy) CHANGES with the split method: {per}."
        return f"best model (highest mean test accuracy): {self.best_model.iloc[0]} under every split method."

    def verdict(self) -> str:
        """The result in words: which method gives the most stable folds, and whether that is significant."""
        mean = self.ranks.loc["mean"].sort_values()
        lowest, n_models = mean.index[0], len(self.std)
        p, stat = self.friedman.pvalue, self.friedman.statistic
        if p != p:  # NaN: fewer than 2 models or 3 methods
            head = (f"inconclusive: the Friedman test needs at least 2 models and 3 split methods "
                    f"(got {n_models} model(s), {len(self.std.columns)} method(s)).")
        elif p >= ALPHA:
            head = (f"inconclusive: Friedman p = {p:.3g} >= {ALPHA} over {n_models} models; the split methods' "
                    f"cross-fold spreads differ no more than chance would make them at this number of models and "
                    f"seeds.")
        else:
            head = (f"the split methods differ (Friedman chi2 = {stat:.2f}, p = {p:.3g} < {ALPHA}, {n_models} "
                    f"models): {lowest} gives the lowest cross-fold spread of test accuracy (mean rank "
                    f"{mean.iloc[0]:.2f}).")
        ranking = ", ".join(f"{m} {r:.2f}" for m, r in mean.items())
        return f"{head} Mean ranks (1 = lowest spread): {ranking}. {self.best_model_line()}"

    def summary(self) -> str:
        """A plain-text report: the std table, the ranks, the Friedman test, the verdict, fold quality."""
        n_seeds = self.rows["seed"].nunique()
        k = int(self.rows["k"].iloc[0])
        fmt = {"float_format": lambda v: f"{v:.2f}"}
        p = self.friedman.pvalue
        lines = [f"audit of {self.dataset}: k = {k}, {n_seeds} split seed(s), {len(self.std)} model(s), "
                 f"{len(self.rows)} runs",
                 "", "cross-fold std of test accuracy (points; lower = more stable folds), mean over seeds:",
                 self.std.to_string(**fmt),
                 "", "ranks of the split methods per model (1 = lowest std):", self.ranks.to_string(**fmt),
                 "", f"Friedman test over models: statistic = {self.friedman.statistic:.3f}, "
                     f"p = {p:.4g}" + (" (inconclusive)" if not self.conclusive else ""),
                 self.best_model_line(),
                 "", "fold quality (mean over seeds; lower is better):",
                 self.quality.to_string(float_format=lambda v: f"{v:.4f}"),
                 "", "verdict: " + self.verdict()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"AuditResult(dataset={self.dataset!r}, models={list(self.std.index)}, "
                f"methods={list(self.std.columns)}, runs={len(self.rows)}, friedman_p={self.friedman.pvalue:.4g})\n"
                + self.summary())

    def plot(self, ax=None):
        """Figure of the cross-fold spread: per model, each method's std of test accuracy (points)."""
        plt = require("matplotlib.pyplot", extra="reports")

        if ax is None:
            _, ax = plt.subplots(figsize=(1.6 + 1.1 * len(self.std), 3.2))
        self.std.plot.bar(ax=ax, rot=0, width=0.8)
        ax.set_ylabel("cross-fold std of test accuracy (points)")
        ax.set_xlabel("")
        ax.set_title(f"{self.dataset}: spread of test accuracy over folds")
        ax.legend(title="split method", fontsize="small")
        return ax


def audit(data, models, *, k: int = 4, seeds=(0,), methods=("random", "stratified", "hpstrat"), n_bins: int = 10,
          max_epochs: int = 1000, patience: int = 100, out=None, root=None, device="auto",
          progress: bool = False) -> AuditResult:
    """Audit one graph: train ``models`` on the folds of each split method and compare the spreads.

    The HpStrat protocol (Section 5): k-fold splits of each method and split seed (round i: test fold i,
    validation fold i + 1 mod k), each model trained on every round (Adam, lr 0.01, weight decay 5e-4,
    early stopping with ``patience`` on the validation loss, at most ``max_epochs`` epochs), test
    accuracy with the best validation weights. Built-in models train batched
    (:func:`hpstrat_lite.engine.train.train_runs`), factories one run at a time with the same protocol, folds
    and run seeds (:mod:`hpstrat_lite.engine.user_models`).

    Parameters
    ----------
    data : str, os.PathLike or torch_geometric.data.Data
        A dataset name, a graph file or a ``Data`` (:func:`hpstrat_lite.data.graphs.as_graph`).
    models : sequence
        Built-in model names (:data:`hpstrat_lite.engine.models.MODELS`), ``"module:function"`` strings or
        factories ``factory(in_channels, out_channels) -> torch.nn.Module``.
    k, seeds, methods, n_bins
        Folds, split seeds, split methods, homophily bins B.
    max_epochs, patience
        Training protocol (1000, 100).
    out : path, optional
        A folder: the rows go to ``out/rows.csv`` and the fold quality to ``out/quality.csv``; a rerun
        with the same ``out`` trains only the runs missing there. Without it the rows live in a
        temporary folder.
    root, device, progress
        Data root of the built-in datasets, training device, progress bars.

    Returns
    -------
    AuditResult
        ``.rows``, ``.std``, ``.ranks``, ``.friedman`` (``.statistic``, ``.pvalue``), ``.best_model``,
        ``.quality``; ``print(result)`` or ``result.summary()`` gives the report in text.

    Examples
    --------
    >>> from hpstrat_lite.experiments.audit import audit                          # doctest: +SKIP
    >>> result = audit("graph.npz", ["GCN", "mypkg.nets:make"], seeds=[0, 1, 2], out="audit")  # doctest: +SKIP
    >>> print(result.summary())                                         # doctest: +SKIP
    """
    from ..core._validate import check_k
    from .sweep import run_experiment
    from ..data.graphs import as_graph
    from ..core.quality import quality_table
    from ..engine.user_models import model_label, resolve_model

    graph = as_graph(data, root=root)
    if isinstance(models, str) or callable(models):
        models = [models]
    models = [resolve_model(m) for m in models]
    if not models:
        raise ValueError("models is empty; name at least one model (a built-in name or a factory).")
    labels = [model_label(m) for m in models]
    check_k(k, graph.num_nodes)
    methods = [methods] if isinstance(methods, str) else list(methods)
    grid = dict(k=k, seeds=seeds, methods=methods, n_bins=n_bins, max_epochs=max_epochs, patience=patience,
                device=device, progress=progress)
    with tempfile.TemporaryDirectory(prefix="hpstrat-audit-") as tmp:
        folder = Path(out) if out is not None else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rows = run_experiment([graph], models=models, out=folder / ROWS_FILE, **grid)
    seeds_used = sorted({int(s) for s in seeds}) if not isinstance(seeds, int) else [int(seeds)]
    mine = rows[(rows["dataset"] == graph.name) & rows["model"].isin(labels) & rows["method"].isin(methods)
                & rows["seed"].isin(seeds_used) & (rows["k"] == k) & (rows["n_bins"] == n_bins)
                & (rows["max_epochs"] == max_epochs) & (rows["patience"] == patience)]
    mine = mine.drop_duplicates(["model", "method", "seed", "fold"], keep="last")
    order = {m: i for i, m in enumerate(labels)}
    mine = mine.sort_values(["model", "method", "seed", "fold"], key=lambda c: c.map(order) if c.name == "model"
                            else c.map({m: i for i, m in enumerate(methods)}) if c.name == "method" else c,
                            kind="stable")
    quality = quality_table([graph], k=k, seeds=seeds_used, n_bins=n_bins, methods=methods)
    if out is not None:
        from .results import atomic_write

        atomic_write(Path(out) / QUALITY_FILE, lambda tmp: quality.to_csv(tmp, index=False))
    return AuditResult.from_rows(mine, quality)


def load_audit(out) -> AuditResult:
    """The :class:`AuditResult` of an audit written to the folder ``out`` (``rows.csv``, ``quality.csv``)."""
    from .results import read_rows

    folder = Path(out)
    for name in (ROWS_FILE, QUALITY_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{str(folder / name)!r} does not exist; run audit(..., out={str(folder)!r}) "
                                    f"(or hpstrat audit --out {folder}) first.")
    return AuditResult.from_rows(read_rows(folder / ROWS_FILE), pd.read_csv(folder / QUALITY_FILE))


#: The notebook :func:`render_report` executes (shipped with the package).
REPORT_TEMPLATE = Path(__file__).resolve().parents[1] / "reports" / "templates" / "audit_report.ipynb"
REPORT_FILE = "report.html"


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
                                kernel_name=kernel_name, cwd=str(folder), progress_bar=False, log_output=False)
        except pm.PapermillExecutionError as err:
            raise RuntimeError(f"the report notebook failed: {err.ename}: {err.evalue}") from None
        nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    from .results import atomic_write

    path = folder / REPORT_FILE
    atomic_write(path, lambda tmp: Path(tmp).write_text(body, encoding="utf-8"))
    return path
