"""What the HpStrat sweeps cost: the reader's tables, and the measurement reports behind them.

For the reader (the book's appendix): :func:`sweep_command` (the command that reruns a results file),
:func:`hardware_label` (a machine in words), :func:`full_rerun_table` (each end-to-end timed sweep: hardware,
command, runs, wall time), :func:`recorded_cost_table` (the training time each committed results file
records), :func:`rerun_rank_table` (whether a rerun gives the same Table 3 score) and
:func:`minutes_per_dataset` (where the time goes).

For the benchmarks: the other functions turn result rows (and ``results/sweep_projection.csv``, written by
``benchmarks/bench_sweep.py``) into a list of *report items* that keep every measurement detail (engine
versions, hosts, timestamps): a string is a paragraph of Markdown, anything else (a ``DataFrame``, a
``Styler``, a ``Figure``) is shown as it is. :func:`show` displays such a list in a notebook.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from hpstrat_lite._extras import require
from hpstrat_lite.core.folds import SPLIT_METHODS
from .paths import RESULTS as RESULTS_DIR, read_rows
from .display import findings_box, format_number
from .hpstrat import (PAPER_GLOBAL_MEAN_RANK, rank_summary, rerun_comparison, retimed_wall_time, sweep_cost,
                      sweep_wall_time)
from hpstrat_lite.experiments.sweep import default_results_path
from hpstrat_lite.protocol import PAPER_PROTOCOL

#: The time the full k = 4, seed 0 sweep should take on the project's 2-core CPU machine (minutes).
BUDGET_MIN = 180
METHOD_LABELS = {"random": "random k-fold", "stratified": "class-stratified", "hpstrat": "HpStrat"}


# --------------------------------------------------------------------------------------------------
# For the reader: what a rerun costs, on which hardware, with which command


def hardware_label(host, *, device="cpu") -> str:
    """A machine in words, from a row's ``host`` and ``device``: the GPU for a CUDA run
    (``"NVIDIA H200 GPU"``), else the CPU and its number of CPUs (``"Intel Xeon CPU, 2 CPUs"``); ``"CPU"``
    or ``"GPU"`` alone when the row does not name its host.

    Examples
    --------
    >>> hardware_label("NVIDIA H200 + Intel(R) Xeon(R) Processor, 16 cpus, avx512+amx", device="cuda")
    'NVIDIA H200 GPU'
    >>> hardware_label("AMD EPYC, 2 cpus, avx512"), hardware_label(None)
    ('AMD EPYC CPU, 2 CPUs', 'CPU')
    """
    import re

    on_gpu = str(device).startswith("cuda")
    text = "" if host is None or (isinstance(host, float) and host != host) else str(host)
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        return "GPU" if on_gpu else "CPU"
    name = parts[0]
    if on_gpu:
        return (name.split(" + ")[0].strip() if " + " in name else "GPU").removesuffix(" GPU") + " GPU"
    cpu = re.sub(r"\((R|TM)\)", "", name.split(" + ")[-1]).replace("Processor", "").strip()
    cpus = next((part.split()[0] for part in parts[1:] if part.endswith("cpus")), None)
    return f"{cpu} CPU" + (f", {cpus} CPUs" if cpus else "")


def _machine(rows: pd.DataFrame) -> str:
    device = rows["device"].astype(str).mode().iloc[0] if "device" in rows else "cpu"
    host = rows["host"].dropna().mode().iloc[0] if "host" in rows and rows["host"].notna().any() else None
    return hardware_label(host, device=device)


def sweep_command(rows: pd.DataFrame, *, out=None) -> str:
    """The ``hpstrat experiment`` command that trains the runs of ``rows`` (a sweep's results file): its
    datasets in the order they were trained, its models unless all eight, its split methods unless all
    three, its ``k``, split seeds and device, the protocol's epochs and patience where they are not the
    paper's, and ``--out`` when ``out`` (the file) is not the command's default file."""
    if rows.empty:
        raise ValueError("rows is empty: there is no sweep to name a command for.")
    datasets = " ".join(dict.fromkeys(rows["dataset"]))
    models = list(dict.fromkeys(rows["model"]))
    ks = sorted(rows["k"].unique())
    seeds = " ".join(str(int(s)) for s in sorted(rows["seed"].unique()))
    cmd = f"hpstrat experiment --datasets {datasets}"
    if len(models) < 8:
        cmd += f" --models {' '.join(models)}"
    methods = [m for m in SPLIT_METHODS if m in set(rows["method"])] if "method" in rows else list(SPLIT_METHODS)
    if len(methods) < len(SPLIT_METHODS) or set(rows["method"]) - set(SPLIT_METHODS):
        cmd += f" --methods {' '.join(dict.fromkeys(rows['method']))}"
    cmd += f" --k {' '.join(str(int(k)) for k in ks)} --seeds {seeds}"
    for column, flag in (("max_epochs", "--max-epochs"), ("patience", "--patience")):
        default = getattr(PAPER_PROTOCOL, column)  # the paper's protocol: 1000 epochs, patience 100
        if column in rows and rows[column].nunique() == 1 and int(rows[column].iloc[0]) != default:
            cmd += f" {flag} {int(rows[column].iloc[0])}"
    if "device" in rows and rows["device"].astype(str).str.startswith("cuda").all():
        cmd += " --device cuda"
    if out is not None:
        kwargs = {c: int(rows[c].iloc[0]) for c in ("max_epochs", "patience", "n_bins") if c in rows}
        default = RESULTS_DIR / default_results_path(int(ks[0]), sorted(int(x) for x in rows["seed"].unique()), **kwargs).name
        if Path(out).name != Path(default).name:
            cmd += f" --out results/{Path(out).name}"
    return cmd


def full_rerun_table(timed_files) -> pd.DataFrame:
    """Each whole sweep trained again as one command (one results file per command and machine): the
    ``hardware`` (:func:`hardware_label`), the ``command`` (:func:`sweep_command`), ``runs``, ``wall time (min)``
    (the command's running time read back from its rows, :func:`~hpstrat_book.hpstrat.sweep_wall_time`;
    a command stopped and started again counts its running time only) and ``training (min)`` (the part spent
    training; the rest is loading data, making folds and writing rows). Fastest first."""

    out = []
    for path in map(Path, timed_files):
        rows = read_rows(path)
        if rows.empty:
            raise FileNotFoundError(f"timed_files names {str(path)!r}, which has no rows.")
        span = sweep_wall_time(rows)
        out.append({"hardware": _machine(rows), "command": sweep_command(rows), "runs": len(rows),
                    "wall time (min)": span["wall_min"], "training (min)": span["train_min"]})
    return pd.DataFrame(out).sort_values("wall time (min)", kind="stable", ignore_index=True)


def recorded_cost_table(results_files: dict) -> pd.DataFrame:
    """The training time each committed results file records: ``results_files`` maps a description (the
    protocol) to a file or list of files. One row each: ``hardware``, ``command`` (:func:`sweep_command`),
    ``runs`` and ``training (h)``, the sum of the rows' ``seconds`` (:func:`~hpstrat_book.hpstrat.sweep_cost`:
    each batch's wall time once; data loading left out). Such a file may have been trained in several
    sittings, so this is training time, not the wall time of one command."""

    out = []
    for what, files in results_files.items():
        rows = read_rows(files)
        if rows.empty:
            raise FileNotFoundError(f"results_files[{what!r}] = {files!r} has no rows.")
        single = files if isinstance(files, (str, Path)) else None
        out.append({"protocol": what, "hardware": _machine(rows), "command": sweep_command(rows, out=single),
                    "runs": len(rows), "training (h)": sweep_cost(rows).loc["total", "total"] / 60})
    return pd.DataFrame(out)


def rerun_rank_table(committed: pd.DataFrame, timed_files, *, models=None) -> pd.DataFrame:
    """Does a rerun give the same result? The global mean rank of each split method (Table 3's score over
    the (dataset, model) pairs; 1 = the smallest cross-fold std) from the paper, from the committed rows and
    from each timed rerun (columns named by their hardware), over the pairs every file has."""

    timed = {path: read_rows(path) for path in map(Path, timed_files)}
    models = [m for m in dict.fromkeys(committed["model"]) if m != "MLP"] if models is None else list(models)
    pairs = committed[["dataset", "model"]].drop_duplicates()
    for rows in timed.values():
        pairs = pairs.merge(rows[["dataset", "model"]].drop_duplicates())
    table = {"paper": pd.Series(PAPER_GLOBAL_MEAN_RANK),
             "committed results": rank_summary(committed.merge(pairs), models=models)["global_mean"]}
    seen = {}
    for rows in timed.values():
        label = _machine(rows)
        seen[label] = seen.get(label, 0) + 1
        name = f"rerun on {label}" + (f" ({seen[label]})" if seen[label] > 1 else "")
        table[name] = rank_summary(rows.merge(pairs), models=models)["global_mean"]
    return pd.DataFrame(table).reindex(list(SPLIT_METHODS)).rename(index=METHOD_LABELS).rename_axis("split method")


def minutes_per_dataset(timed_files) -> pd.DataFrame:
    """Training minutes of each dataset (rows, in training order) in each timed rerun (columns named by
    hardware, numbered when one machine timed twice)."""

    out, seen = {}, {}
    for path in map(Path, timed_files):
        rows = read_rows(path)
        label = _machine(rows)
        seen[label] = seen.get(label, 0) + 1
        out[label + (f" ({seen[label]})" if seen[label] > 1 else "")] = \
            rows.groupby("dataset", sort=False)["seconds"].sum() / 60
    return pd.DataFrame(out).rename_axis("dataset")


def rerun_findings(reruns: pd.DataFrame | None, *, ranks: pd.DataFrame | None = None,
                   recorded: pd.DataFrame | None = None) -> str:
    """The appendix's "Key findings" box (:func:`~hpstrat_book.display.findings_box`), from its tables:
    ``reruns`` (:func:`full_rerun_table`; None or empty when no timed rerun is committed): the wall time of a
    full rerun from the fastest to the slowest machine and the share of it spent training; ``ranks``
    (:func:`rerun_rank_table`): the largest difference of a rerun's global mean rank from the committed one, set
    against the committed gap between the two lowest methods, and how many reruns keep their order; ``recorded`` (:func:`recorded_cost_table`): the training hours
    the committed results files record."""
    bullets = []
    if reruns is None or reruns.empty:
        bullets.append("No timed rerun of this protocol is committed: the cost of one command is not measured here.")
    else:
        fast, slow = reruns.loc[reruns["wall time (min)"].idxmin()], reruns.loc[reruns["wall time (min)"].idxmax()]
        share = reruns["training (min)"] / reruns["wall time (min)"]
        bullets.append(f"A full rerun as one command took from **{format_number(fast['wall time (min)'], kind='integer')} "
                       f"minutes** ({fast['hardware']}, {format_number(fast['runs'], kind='integer')} runs) to "
                       f"**{format_number(slow['wall time (min)'] / 60, kind=1)} hours** ({slow['hardware']}, "
                       f"{format_number(slow['runs'], kind='integer')} runs) over {len(reruns)} timed reruns.")
        bullets.append(f"Training took {share.min():.1%}" + (f" to {share.max():.1%}" if len(reruns) > 1 else "")
                       + " of the wall time; the rest is loading the datasets, making the folds and writing the rows.")
    if ranks is not None and "committed results" in ranks.columns:
        runs = [c for c in ranks.columns if c.startswith("rerun")]
        ours = ranks["committed results"].sort_values(kind="stable")
        same = sum(list(ranks[c].sort_values(kind="stable").index) == list(ours.index) for c in runs)
        if runs and len(ours) > 1:
            diff = float(ranks[runs].sub(ranks["committed results"], axis=0).abs().max().max())
            gap = float(ours.iloc[1] - ours.iloc[0])
            fmt = lambda v: format_number(v, kind="rank")  # noqa: E731
            head = (f"The reruns' global mean ranks differ from the committed rows' by at most {fmt(diff)}; the "
                    f"committed rows' two lowest methods ({ours.index[0]} {fmt(ours.iloc[0])}, {ours.index[1]} "
                    f"{fmt(ours.iloc[1])}) are {fmt(gap)} apart, ")
            head += "beyond that difference" if gap > diff else "within it, so their order is rerun-to-rerun noise"
            bullets.append(head + f": {same} of the {len(runs)} reruns keep their order.")
    if recorded is not None and not recorded.empty:
        bullets.append(f"The {len(recorded)} committed results files of the GNN chapters record "
                       f"{format_number(recorded['training (h)'].sum(), kind=1)} hours of training in "
                       f"{format_number(recorded['runs'].sum(), kind='integer')} runs.")
    return findings_box(bullets, source="this page's timing rows")


# --------------------------------------------------------------------------------------------------
# For the benchmarks: every measurement detail


def show(items) -> None:
    """Display report items in a notebook: strings as Markdown, everything else as it is."""
    from IPython.display import Markdown, display

    for item in items:
        display(Markdown(item) if isinstance(item, str) else item)


def _is_main_protocol(k, seeds) -> bool:
    return k == 4 and list(seeds) == [0]


def projection_report(rows: pd.DataFrame, all_rows: pd.DataFrame, projection: pd.DataFrame, *, k: int, seeds,
                      datasets, models=None, projection_file="results/sweep_projection.csv") -> list:
    """The sweep with today's engine: the projected minutes per (dataset, model) pair for k = 4, seed 0
    (``projection``'s newest measurement per pair), or, for another protocol, what finishing it would take
    (:func:`project_remaining` on ``all_rows``, the protocol's rows so far)."""

    items = []
    if not _is_main_protocol(k, seeds) and not projection.empty:
        scope = projection["dataset"].isin(datasets) & (projection["model"].isin(models) if models else True)
        left = project_remaining(all_rows, projection[scope], k, seeds)
        if left.empty:
            return [f"Every measured (dataset, model) pair of *k* = {k}, seeds {list(seeds)} has all its runs."]
        items.append(
            f"The 3-hour budget concerns the *k* = 4, seed 0 sweep. This page's protocol (*k* = {k}, seeds "
            f"{list(seeds)}) still lacks {int(left['runs_left'].sum())} runs in {len(left)} (dataset, model) pairs "
            f"of this page's datasets: about **{left['low_min'].sum() / 60:.1f} hours** "
            f"({left['high_min'].sum() / 60:.1f} if no run were dropped) with today's engine on "
            f"{int(left['threads'].iloc[0])} threads, scaled from the measured 12-run pairs by the runs left "
            f"(from a shell, `python tools/progress.py sweep --k {k} --seeds {' '.join(str(s) for s in seeds)}` prints it per "
            "dataset with the commands that finish it).")
        items.append(left.pivot_table(index="dataset", columns="model", values="low_min", sort=False)
                     .style.format("{:.0f}", na_rep="").set_caption("minutes left per pair"))
        return items
    if not _is_main_protocol(k, seeds):
        return [f"The budget and the projection concern the *k* = 4, seed 0 sweep; this page shows *k* = {k}, "
                f"seeds {list(seeds)}."]
    if projection.empty:
        return [f"**Not measured yet:** `{projection_file}` does not exist (run `python benchmarks/bench_sweep.py`)."]
    latest = projection.drop_duplicates(["dataset", "model", "threads"], keep="last")  # newest row per pair
    latest = latest[latest["threads"] == latest["threads"].iloc[-1]]
    covered = set(zip(latest["dataset"], latest["model"]))
    unmeasured = sorted({(d, m) for d, m in zip(rows["dataset"], rows["model"])} - covered)
    low, high = latest["low_min"].sum(), latest["high_min"].sum()
    engines = ", ".join(f"`{v}` ({n} pairs)" for v, n in latest["code_version"].value_counts(sort=False).items())
    items.append(
        f"Engine(s) {engines}, {int(latest['threads'].iloc[-1])} threads, {len(latest)} (dataset, model) pairs: "
        f"projected **{low:.1f} minutes** ({low / 60:.1f} h) against the {BUDGET_MIN}-minute budget ({high:.1f} "
        f"minutes if no run were dropped); the same pairs' recorded time is {latest['recorded_min'].sum():.0f} minutes."
        + (f"  \n**Pairs not measured:** {', '.join(f'{d}/{m}' for d, m in unmeasured)}." if unmeasured else ""))
    table = latest.pivot_table(index="dataset", columns="model", values="low_min", sort=False)
    table["total"] = table.sum(axis=1)
    table.loc["total"] = table.sum(axis=0)
    items += ["Projected minutes per pair (each run dropped as it stops):", table.style.format("{:.1f}", na_rep="")]
    items.append("Every measurement so far, in order (`pairs`: how many pairs it timed; `host`: the CPU). The "
                 "machine is not always the same CPU and may be shared, so only two engines timed on the same "
                 "host in the same hour compare (`benchmarks/README.md`).")
    items.append(projection_history(projection).style.format({"low_min": "{:.0f}", "high_min": "{:.0f}"})
                 .hide(axis="index"))
    return items


def rerun_report(committed: pd.DataFrame, rerun_rows: pd.DataFrame, projection: pd.DataFrame) -> list:
    """One dataset's pairs trained again with today's engine, beside the committed rows and the projection
    (:func:`~hpstrat_book.hpstrat.rerun_comparison`)."""
    check = rerun_comparison(committed, rerun_rows, projection=projection)
    timed, low, high = check["timed (min)"].sum(), check["projected low"].sum(), check["projected high"].sum()
    moved = check.loc[~check["same ranks"], "model"].tolist()
    text = (
        f"Engine `{rerun_rows['code_version'].iloc[0]}`: the rerun trained for **{timed:.1f} minutes** against a "
        f"projected {low:.1f} (low) to {high:.1f} (high), a ratio of {timed / low:.2f} to the low figure. "
        f"{int(check['same best epoch'].sum())} of {int(check['runs'].sum())} runs stopped at the committed best "
        f"epoch; per run the test accuracy moved by at most {check['max |diff| run'].max():.2f} points, a "
        f"method's mean over folds by at most {check['max |diff| mean'].max():.2f}. The split methods' ranks on "
        f"the cross-fold std are the same for {int(check['same ranks'].sum())} of {len(check)} models"
        + (f"; they change for {', '.join(moved)}: on one dataset and one split seed, float-rounding noise is "
           "enough to reorder methods whose spreads differ by a few tenths of a point, which is why the paper "
           "averages over datasets and why the six-seed protocol exists." if moved else "."))
    dataset = check["dataset"].iloc[0]
    table = check.drop(columns="dataset").set_index("model").style.format(
        {"timed (min)": "{:.1f}", "projected low": "{:.1f}", "projected high": "{:.1f}",
         "max |diff| run": "{:.2f}", "max |diff| mean": "{:.2f}"}).set_caption(
        f"{dataset}, k = 4, seed 0: rerun against the committed rows (ranks in the order HpStrat / stratified / random)")
    return [text, table]


def _timed_text(span, check, committed, on_gpu) -> str:
    all_pairs = len(committed.groupby(["dataset", "model"]))
    done = span["pairs"] == all_pairs and span["runs"] == len(committed)
    low, high = check["projected low"].sum(), check["projected high"].sum()
    if done and on_gpu:
        head = f"**On the GPU the whole sweep took {span['wall_min']:.1f} minutes** (the budget is the CPU machine's)"
    elif done:
        head = (f"**The whole sweep took {span['wall_min']:.0f} minutes** ({span['wall_min'] / 60:.2f} h), "
                f"{span['wall_min'] / BUDGET_MIN:.2f} of the {BUDGET_MIN}-minute budget, "
                f"**{'within' if span['wall_min'] <= BUDGET_MIN else 'over'} it**")
    else:
        head = (f"**Partial:** the timed command has finished {span['pairs']} of {all_pairs} (dataset, model) pairs "
                f"({span['runs']} of {len(committed)} runs) in {span['wall_min']:.0f} minutes; the budget verdict "
                "waits for the rest")
    train = f"{span['train_min']:.{0 if span['train_min'] >= 10 else 1}f}"
    return (head + f": {span['runs']} runs, {train} minutes of training and {span['untracked_min']:.1f} of loading, "
            f"fold making and writing rows. The longest gap between batches that training does not explain is "
            f"{span['max_untracked_min']:.1f} minutes (before {span['max_untracked_before']}). "
            + (f"The command ran in {span['segments']} segments: it was stopped and restarted with the same arguments "
               f"(the runner skips finished runs), and the {span['paused_min']:.0f} minutes between them are not "
               "counted. " if span["segments"] > 1 else "")
            + f"Started {span['started']:%Y-%m-%d %H:%M}, last row {span['finished']:%Y-%m-%d %H:%M}; engine "
            f"{', '.join(f'`{v}`' for v in span['code_versions'])} on {'; '.join(span['hosts'])}. "
            + ("" if on_gpu else
               f"The projection of the same pairs by the newest measurement was {low:.0f} (low) to {high:.0f} (high) "
               f"minutes of training, a ratio of {span['train_min'] / low:.2f} to the low figure. ")
            + f"{int(check['same best epoch'].sum())} of {int(check['runs'].sum())} runs stopped at the committed "
            f"best epoch; the split methods' ranks on the cross-fold std are the same for "
            f"{int(check['same ranks'].sum())} of {len(check)} pairs.")


def _per_dataset(check, on_gpu):
    per = check.groupby("dataset", sort=False).agg(
        pairs=("model", "size"), **{"timed (min)": ("timed (min)", "sum"), "projected low": ("projected low", "sum"),
                                    "projected high": ("projected high", "sum"), "same ranks": ("same ranks", "sum"),
                                    "max |diff| mean": ("max |diff| mean", "max")})
    per.loc["total"] = per.sum()
    per.loc["total", "max |diff| mean"] = check["max |diff| mean"].max()
    if on_gpu:  # a CPU projection says nothing about a GPU's minutes
        per = per.drop(columns=["projected low", "projected high"])
    return per.style.format({"timed (min)": "{:.1f}", "projected low": "{:.1f}", "projected high": "{:.1f}",
                             "max |diff| mean": "{:.2f}", "pairs": "{:.0f}", "same ranks": "{:.0f}"}).set_caption(
        "Timed sweep per dataset: training minutes against the projection, pairs whose HpStrat / stratified / "
        "random ranks match the committed rows")


def timed_sweep_report(timed_rows: pd.DataFrame, committed: pd.DataFrame, projection: pd.DataFrame, *,
                       k: int = 4, seeds=(0,)) -> tuple[list, dict]:
    """One timed command (a whole sweep trained again as one command, its rows in ``timed_rows``): its wall
    time (:func:`~hpstrat_book.hpstrat.sweep_wall_time`) against the budget and the projection,
    per-dataset minutes, and the global mean ranks of its rows beside the committed ones. Returns the report
    items and the wall-time summary."""

    span = sweep_wall_time(timed_rows)
    on_gpu = bool(timed_rows["device"].astype(str).str.startswith("cuda").all())
    check = rerun_comparison(committed, timed_rows, projection=projection)
    items = [_timed_text(span, check, committed, on_gpu)]
    projected_on = set(projection.drop_duplicates(["dataset", "model"], keep="last")["host"].dropna())
    if projected_on and projected_on != set(span["hosts"]) and not on_gpu:  # ratios then compare CPUs too
        items.append(f"The projection's newest rows were measured on {'; '.join(sorted(projected_on))}, not on this "
                     "file's host: its ratios and the pairs flagged below compare two CPUs as well as the timing "
                     "against the projection.")
    if span["pairs"] < len(committed.groupby(["dataset", "model"])):
        rest = project_remaining(timed_rows, projection, k, seeds)
        items.append(f"The {len(rest)} pairs still to time are projected at {rest['low_min'].sum():.0f} (low) to "
                     f"{rest['high_min'].sum():.0f} (high) minutes; the same command, run again, times the rest.")
    items.append(_per_dataset(check, on_gpu))
    ratio = check["timed (min)"] / check["projected low"]
    slow = check.assign(ratio=ratio)[(ratio > 1.5) & (check["projected low"] >= 0.5)]
    if not on_gpu:  # pairs far over their CPU projection: a disturbed machine
        items.append("Pairs that took more than 1.5 times their projection (of those projected at half a minute or "
                     "more): " + (", ".join(f"{r.dataset} / {r.model} ({r.ratio:.1f}x)" for r in slow.itertuples())
                                  or "none") + ".")
    gnn_models = [m for m in dict.fromkeys(committed["model"]) if m != "MLP"]
    both = committed.merge(timed_rows[["dataset", "model", "method", "k", "seed", "fold"]])
    side = pd.DataFrame({"paper": pd.Series(PAPER_GLOBAL_MEAN_RANK),
                         "committed rows": rank_summary(both, models=gnn_models)["global_mean"],
                         "timed sweep": rank_summary(timed_rows, models=gnn_models)["global_mean"]})
    items.append(side.rename(index=METHOD_LABELS).rename_axis("global mean rank").style.format("{:.2f}").set_caption(
        f"Global mean rank of the split methods over the {len(check)} pairs the timed sweep covers (7 GNNs): the "
        "same Table 3 score from both trainings"))
    return items, span


def timed_sweeps_report(timed_files, committed: pd.DataFrame, projection: pd.DataFrame, *, k: int = 4,
                        seeds=(0,)) -> list:
    """Every timed command (one ``timed_k4_seed0*.csv`` file each) with :func:`timed_sweep_report`, the pairs of
    a file trained again alone (``re<file>``, :func:`~hpstrat_book.hpstrat.retimed_wall_time`), then
    the commands side by side and a figure of the training minutes per dataset on each machine."""

    items, spans, tables = [], {}, {}
    for path in map(Path, timed_files):
        tables[path.name] = timed_rows = read_rows(path)
        report, spans[path.name] = timed_sweep_report(timed_rows, committed, projection, k=k, seeds=seeds)
        items += [f"#### `{path.name}`", *report]
        retimed_file = path.with_name("re" + path.name)
        if retimed_file.exists():
            again = retimed_wall_time(timed_rows, read_rows(retimed_file))
            items.append(
                f"`{retimed_file.name}` trains {', '.join(again['pairs'])} again alone ({again['runs']} runs, "
                f"{again['same_results']} with the same best epoch and test accuracy): {again['retimed_min']:.1f} "
                f"minutes of training against {again['timed_min']:.1f} here. With those minutes in their place the "
                f"sweep comes to **{again['retimed_wall_min']:.0f} minutes** "
                f"({again['retimed_wall_min'] / BUDGET_MIN:.2f} of the budget) instead of {again['wall_min']:.0f}: "
                "a substitution, not one timed command.")
    items.append("#### Every timed command side by side")
    side = pd.DataFrame({name: {
        "host": "; ".join(s["hosts"]), "device": ", ".join(sorted(tables[name]["device"].astype(str).unique())),
        "pairs": s["pairs"], "wall (min)": s["wall_min"], "training (min)": s["train_min"]}
        for name, s in spans.items()}).T
    items.append(side.style.format({"wall (min)": "{:.1f}", "training (min)": "{:.1f}"}).set_caption(
        "Wall time of each timed k = 4, seed 0 command (a file with fewer than 96 pairs is not finished)"))
    minutes = timed_minutes_per_dataset(tables, committed, spans)
    items.append(timed_minutes_plot(minutes))
    return items


def timed_minutes_per_dataset(tables: dict, committed: pd.DataFrame, spans: dict) -> pd.DataFrame:
    """Training minutes per dataset (rows) and timed file (columns, named with their host), for the datasets
    whose every model the file has timed."""
    n_models = committed.groupby("dataset")["model"].nunique()

    def dataset_minutes(t):
        per = t.groupby("dataset", sort=False).agg(minutes=("seconds", "sum"), models=("model", "nunique"))
        return per.loc[per["models"] == n_models.reindex(per.index), "minutes"] / 60

    minutes = pd.DataFrame({f"{name} ({'; '.join(spans[name]['hosts']).replace('(R)', '')})": dataset_minutes(t)
                            for name, t in tables.items()})
    return minutes.reindex([d for d in dict.fromkeys(committed["dataset"]) if d in minutes.index])


def timed_minutes_plot(minutes: pd.DataFrame):
    """Horizontal bars, log scale: the training minutes per dataset of each timed command."""
    plt = require("matplotlib.pyplot", extra="reports")

    fig, ax = plt.subplots(figsize=(8, 6))
    minutes.plot.barh(logx=True, width=0.8, ax=ax)
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    ax.set_xlabel("training minutes per dataset (log scale), all pairs timed: 8 models x 12 runs")
    ax.set_title("The k = 4, seed 0 sweep, timed on each machine")
    plt.close(fig)
    return fig


def projection_history(projection: pd.DataFrame) -> pd.DataFrame:
    """One row per measurement of ``benchmarks/bench_sweep.py`` (code version, threads): ``pairs``,
    ``started`` and ``finished`` (the first and last pair's ``finished_at``), ``host`` (the CPU its rows
    name; empty for rows written before rows recorded it), and the summed ``low_min`` and ``high_min``,
    in the order they were measured.

    Consecutive measurements differ by the engine changes between them, by the host (the project's
    machine is not always the same CPU) and by the host's speed in that hour; a total is comparable
    only with one measured on the same host in the same hour (``benchmarks/bench_sweep.py --datasets ...
    --out`` on both engines).
    """
    cols = ["code_version", "threads", "pairs", "started", "finished", "host", "low_min", "high_min"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    projection = projection.assign(host=projection["host"].fillna("") if "host" in projection else "")
    out = (projection.groupby(["code_version", "threads"], sort=False)
           .agg(pairs=("dataset", "size"), started=("finished_at", "min"), finished=("finished_at", "max"),
                host=("host", "last"), low_min=("low_min", "sum"), high_min=("high_min", "sum"))
           .reset_index())
    return out.sort_values("started", kind="stable", ignore_index=True)[cols]


#: Runs of one (dataset, model) in the measured projection: k = 4 folds x 3 split methods, one seed.
PROJECTED_RUNS = 12
#: Where ``benchmarks/bench_sweep.py`` writes ``benchmarks/bench_sweep.py``'s rows.
PROJECTION_FILE = RESULTS_DIR / "sweep_projection.csv"


def _run_counts(rows: pd.DataFrame, k: int, seeds, by, methods=SPLIT_METHODS) -> dict:
    """Distinct runs of the protocol (``k`` folds, split ``seeds``, split ``methods``) in ``rows``, counted per
    ``by`` columns."""
    if rows.empty:
        return {}
    mine = rows[(rows["k"] == k) & rows["seed"].isin(seeds) & rows["method"].isin(list(methods))]
    return mine.drop_duplicates(["dataset", "model", "method", "seed", "fold"]).groupby(by).size().to_dict()


def project_remaining(rows: pd.DataFrame, projection: pd.DataFrame, k: int, seeds, *,
                      methods=SPLIT_METHODS) -> pd.DataFrame:
    """Minutes still needed to complete a protocol's (dataset, model) pairs with today's engine.

    Scales ``benchmarks/bench_sweep.py``'s measurement (``results/sweep_projection.csv``: the k = 4,
    seed 0 pairs, 12 runs each, on CPU) to the runs a pair still lacks: the protocol trains
    ``len(methods) * k * len(seeds)`` runs per pair (``methods``: the paper's three split methods by default;
    the controls' sweep passes ``("placebo", "degree")``), minus those with a row in ``rows``. The batched engine's
    per-epoch cost grows about linearly with the runs (its products are memory-bound), and the runs
    are assumed to train as many epochs as the k = 4, seed 0 ones did. Checkpoints of runs in progress
    are not subtracted.

    Parameters
    ----------
    rows : DataFrame
        The protocol's result rows so far (may be empty).
    projection : DataFrame
        Rows of ``results/sweep_projection.csv``; the newest measurement of each pair is used.
    k, seeds : the protocol (folds, split seeds).

    Returns
    -------
    pandas.DataFrame
        One row per pair with runs left: ``dataset``, ``model``, ``runs_left``, ``low_min``,
        ``high_min`` (the scaled projection), ``code_version`` and ``threads`` of the measurement.
    """
    seeds = [int(s) for s in seeds]
    cols = ["dataset", "model", "runs_left", "low_min", "high_min", "code_version", "threads"]
    if projection.empty:
        return pd.DataFrame(columns=cols)
    latest = projection.drop_duplicates(["dataset", "model"], keep="last").copy()
    total = len(methods) * k * len(seeds)
    present = _run_counts(rows, k, seeds, ["dataset", "model"], methods)
    latest["runs_left"] = [total - present.get((d, m), 0) for d, m in zip(latest["dataset"], latest["model"])]
    latest = latest[latest["runs_left"] > 0]
    scale = latest["runs_left"] / PROJECTED_RUNS
    latest["low_min"] = latest["low_min"] * scale
    latest["high_min"] = latest["high_min"] * scale
    return latest[cols].reset_index(drop=True)
