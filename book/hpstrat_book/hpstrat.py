"""Stage 6: result rows -> the HpStrat paper's tables (Section 5.2, Tables 3-4, Appendices C.4 and E).

The score of a split method on a (dataset, model) pair is the cross-fold standard deviation of test
accuracy: a protocol whose folds are alike gives a smaller spread (HpStrat's claim). With several split
seeds the std is taken over the folds of each seed, then averaged over seeds. The tables take
``metric=`` (default ``"accuracy"``, the paper's): balanced accuracy, macro-F1 or ROC-AUC read the matching
test column of the rows (:func:`hpstrat_lite.rows.score_column`).
"""
from __future__ import annotations

import pandas as pd

from hpstrat_lite import stats
from hpstrat_lite._extras import require
from hpstrat_lite.core.ranking import friedman_test, rank_methods, rank_tables
from hpstrat_lite.rows import score_column
from .paths import read_rows
from .paper_values import PAPER_APPENDIX_B_R2, PAPER_GLOBAL_MEAN_RANK, PAPER_HPSTRAT_FIRST_DATASETS  # noqa: F401

RUN_ID = ["dataset", "model", "method", "k", "seed", "fold"]  # one run across results files of one protocol



def cross_fold_std(rows: pd.DataFrame, *, models=None, metric: str = "accuracy") -> pd.DataFrame:
    """Std (ddof=1, in points x 100) and mean of the test ``metric`` over folds, per (dataset, model, method),
    averaged over split seeds. Columns: dataset, model, method, std, mean, seeds.

    ``metric``: ``"accuracy"`` (default), ``"balanced_accuracy"``, ``"macro_f1"`` or ``"roc_auc"``; rows
    without its test column raise ``ValueError`` (:func:`hpstrat_lite.rows.score_column`)."""
    df = rows if models is None else rows[rows["model"].isin(models)]
    if df.empty:
        raise ValueError("rows is empty: there are no results to analyse (run hpstrat experiment first).")
    per_seed = stats.cross_fold_std(df, score_column(df, metric), by=["dataset", "model", "method", "seed"])
    out = per_seed.groupby(["dataset", "model", "method"]).agg(std=("std", "mean"), mean=("mean", "mean"),
                                                               seeds=("seed", "nunique")).reset_index()
    return out


def rank_summary(rows: pd.DataFrame, *, models=None, metric: str = "accuracy"):
    """Table 3 (mean rank per model), Table 4 (mean rank per dataset) and the global mean rank, ranking the
    methods by the cross-fold std of the test ``metric`` (:func:`cross_fold_std`).

    Returns a dict with ``ranked`` (one row per (dataset, model, method) with its rank), ``per_model``,
    ``per_dataset``, ``global_mean``, and the Friedman test over all (dataset, model) blocks
    (``friedman``, a :class:`hpstrat_lite.stats.FriedmanResult`, and its ``friedman_stat``, ``friedman_p``,
    ``n_blocks``) and per model (the ``friedman_p`` column of ``per_model``).
    """
    std = cross_fold_std(rows, models=models, metric=metric)
    ranked = rank_methods(std, "std", blocks=("dataset", "model"))
    per_model, per_dataset, global_mean = rank_tables(ranked)
    friedman = friedman_test(std, "std", blocks=("dataset", "model"))
    per_model_p = pd.Series({m: friedman_test(g, "std", blocks=("dataset",)).pvalue for m, g in std.groupby("model")},
                            name="friedman_p")
    return {"ranked": ranked, "per_model": per_model.assign(friedman_p=per_model_p), "per_dataset": per_dataset,
            "global_mean": global_mean, "friedman_stat": friedman.statistic, "friedman_p": friedman.pvalue,
            "n_blocks": friedman.n_blocks, "friedman": friedman}


def std_reduction_share(rows: pd.DataFrame, *, against: str = "random", models=None,
                        metric: str = "accuracy") -> pd.DataFrame:
    """Table C.4: for each model, the share of datasets where HpStrat's cross-fold std of the test ``metric``
    is lower than ``against``'s, plus the overall share of (dataset, model) pairs (row ``all``)."""
    wide = cross_fold_std(rows, models=models, metric=metric).pivot_table(index=["dataset", "model"], columns="method", values="std")
    if "hpstrat" not in wide or against not in wide:
        raise ValueError(f"rows must contain the methods 'hpstrat' and {against!r}; got {list(wide.columns)}.")
    lower = (wide["hpstrat"] < wide[against]).rename("lower")
    per_model = lower.groupby(level="model").agg(["mean", "size"])
    per_model.loc["all"] = [lower.mean(), lower.size]
    return per_model.rename(columns={"mean": f"share_hpstrat_lower_than_{against}", "size": "pairs"})


def best_model_changes(rows: pd.DataFrame, *, models=None, metric: str = "accuracy") -> pd.DataFrame:
    """Appendix E: the best model (highest mean of the test ``metric`` over folds and split seeds) of each dataset
    under each split method, and whether its name differs between methods (``changes``).

    A different name is not yet a change: :func:`hpstrat_book.verdicts.best_model_changes` adds the
    rule the book's verdicts use (:func:`hpstrat_lite.stats.best_model_change`: the winner's margin beyond its
    cross-seed spread, ``established``)."""
    std = cross_fold_std(rows, models=models, metric=metric)
    out = {}
    for dataset, g in std.groupby("dataset"):
        r = stats.best_model_change(g.assign(seed=0), value="mean")
        out[dataset] = {**r.best_of(), "changes": r.changes}
    wide = pd.DataFrame.from_dict(out, orient="index").rename_axis("dataset")
    methods = sorted(c for c in wide.columns if c != "changes")
    return wide[methods + ["changes"]].rename_axis(columns="method")


def rerun_comparison(committed: pd.DataFrame, rerun: pd.DataFrame, *, projection: pd.DataFrame | None = None,
                     methods=("hpstrat", "stratified", "random")) -> pd.DataFrame:
    """The same runs trained twice: the committed rows of a sweep against a rerun of some of its
    (dataset, model) pairs by another engine version, per pair.

    Runs are matched on (dataset, model, method, k, seed, fold). Columns: the rerun's training time
    (``timed (min)``: sum of its ``seconds``), the projected ``low`` / ``high`` minutes of the pair when
    ``projection`` (rows of ``results/sweep_projection.csv``; the newest per pair) is given, how many runs
    stopped at the ``same best epoch``, the largest per-run and per-method-mean test-accuracy differences
    (points), and each side's ranks of ``methods`` on the cross-fold std (order of ``methods``, e.g.
    ``2/1/3``) with ``same ranks``. Engines that sum in another order give float-rounding differences, which
    can move an early-stopping epoch on a flat validation curve; the ranks show whether the HpStrat
    comparison survives that noise.
    """
    both = rerun.merge(committed, on=RUN_ID, suffixes=("_rerun", "_committed"))
    if both.empty:
        raise ValueError("no run of `rerun` is in `committed` (matched on dataset, model, method, k, seed, fold).")
    latest = (projection.drop_duplicates(["dataset", "model"], keep="last").set_index(["dataset", "model"])
              if projection is not None and not projection.empty else None)

    def ranks(side):
        std = both.assign(test_acc=both[f"test_acc_{side}"]).pipe(cross_fold_std)
        ranked = rank_methods(std[std["method"].isin(methods)], "std", blocks=("dataset", "model"))
        wide = ranked.pivot_table(index=["dataset", "model"], columns="method", values="rank")[list(methods)]
        return wide.apply(lambda r: "/".join(f"{v:g}" for v in r), axis=1)

    out = []
    for (ds, model), g in both.groupby(["dataset", "model"], sort=False):
        means = g.groupby("method")[["test_acc_rerun", "test_acc_committed"]].mean()
        row = {"dataset": ds, "model": model, "runs": len(g), "timed (min)": g["seconds_rerun"].sum() / 60}
        if latest is not None and (ds, model) in latest.index:
            row.update({"projected low": latest.loc[(ds, model), "low_min"],
                        "projected high": latest.loc[(ds, model), "high_min"]})
        row.update({"same best epoch": int((g["best_epoch_rerun"] == g["best_epoch_committed"]).sum()),
                    "max |diff| run": 100 * (g["test_acc_rerun"] - g["test_acc_committed"]).abs().max(),
                    "max |diff| mean": 100 * (means["test_acc_rerun"] - means["test_acc_committed"]).abs().max()})
        out.append(row)
    table = pd.DataFrame(out).set_index(["dataset", "model"])
    table["ranks committed"], table["ranks rerun"] = ranks("committed"), ranks("rerun")
    table["same ranks"] = table["ranks committed"] == table["ranks rerun"]
    return table.reset_index()


def sweep_cost(rows: pd.DataFrame) -> pd.DataFrame:
    """Training wall time of a sweep, in minutes, per dataset (rows) and model (columns), with totals.

    Each row's ``seconds`` is its batch's wall time divided by the runs in the batch
    (:func:`hpstrat_lite.engine.train.train_runs`), so summing ``seconds`` over rows gives the wall time the
    batches took, whatever their sizes. Data loading and fold making are not included.
    """
    if rows.empty:
        raise ValueError("rows is empty: there are no results to analyse (run hpstrat experiment first).")
    if "seconds" not in rows:
        raise ValueError("rows has no 'seconds' column: it was not written by hpstrat_lite.experiments.sweep.")
    minutes = rows.pivot_table(index="dataset", columns="model", values="seconds", aggfunc="sum", sort=False) / 60
    minutes["total"] = minutes.sum(axis=1)
    minutes.loc["total"] = minutes.sum(axis=0)
    return minutes.rename_axis(index="dataset", columns=None)


def sweep_wall_time(rows: pd.DataFrame, *, pause_min: float = 5.0) -> dict:
    """Wall time of a sweep command, reconstructed from its rows' ``finished_at`` stamps.

    Rows finishing at the same stamp come from one training batch, whose wall time is the sum of their
    ``seconds`` (:func:`sweep_cost`). Between two stamps, the time not spent training the later batch is
    *untracked*: loading a dataset, making folds, writing rows (seconds), or a pause. A command killed and
    restarted with the same arguments (the runner skips finished runs) leaves the pause between the two
    invocations as one long untracked gap; gaps longer than ``pause_min`` minutes split the rows into
    ``segments`` and are left out, so

    .. math:: T_\\mathrm{wall} = t_\\mathrm{last} - t_\\mathrm{first} + s_\\mathrm{first}
              - \\sum_{g > \\mathrm{pause}} g

    with :math:`s_\\mathrm{first}` the first batch's training seconds (the sweep started one batch before its
    first stamp; the first dataset's loading, a second or two, is not counted) and :math:`g` the untracked
    gaps. A batch cut by the kill and trained again from the start after the restart counts once; one resumed
    from its checkpoint counts only the resumed part. Returns ``wall_min``, ``train_min`` (all batches'
    training time), ``untracked_min`` (wall minus training), ``segments``, ``paused_min`` (the gaps left out),
    ``max_untracked_min`` with ``max_untracked_before`` (the dataset and model after the longest gap kept in
    the wall time), ``runs``, ``pairs``, ``started``, ``finished`` and the ``hosts`` and ``code_versions``.
    """
    if rows.empty:
        raise ValueError("rows is empty: there are no results to analyse (run hpstrat experiment first).")
    missing = {"finished_at", "seconds"} - set(rows.columns)
    if missing:
        raise ValueError(f"rows lack the column(s) {sorted(missing)}: they were not written by hpstrat_lite.experiments.sweep.")
    if not pause_min > 0:
        raise ValueError(f"pause_min must be > 0 minutes, got {pause_min!r}")
    stamp = pd.to_datetime(rows["finished_at"])
    batches = (rows.assign(stamp=stamp).groupby("stamp")
               .agg(train_s=("seconds", "sum"), dataset=("dataset", "first"), model=("model", "first"))
               .sort_index())
    since_previous = batches.index.to_series().diff().dt.total_seconds()
    untracked = (since_previous - batches["train_s"]).clip(lower=0).fillna(0.0)
    pauses = untracked > 60 * pause_min
    kept = untracked[~pauses]
    span = (batches.index[-1] - batches.index[0]).total_seconds() + batches["train_s"].iloc[0]
    wall, train = float(span - untracked[pauses].sum()), float(batches["train_s"].sum())
    gap_at = kept.idxmax()
    return {"wall_min": wall / 60, "train_min": train / 60, "untracked_min": max(wall - train, 0.0) / 60,
            "segments": 1 + int(pauses.sum()), "paused_min": float(untracked[pauses].sum()) / 60,
            "max_untracked_min": float(kept.max()) / 60,
            "max_untracked_before": f"{batches.loc[gap_at, 'dataset']} / {batches.loc[gap_at, 'model']}",
            "runs": len(rows), "pairs": len(rows.groupby(["dataset", "model"])),
            "started": batches.index[0] - pd.Timedelta(seconds=batches["train_s"].iloc[0]),
            "finished": batches.index[-1],
            "hosts": sorted(rows["host"].dropna().unique()) if "host" in rows else [],
            "code_versions": sorted(rows["code_version"].unique()) if "code_version" in rows else []}


def retimed_wall_time(timed_rows: pd.DataFrame, retimed_rows: pd.DataFrame, *, pause_min: float = 5.0) -> dict:
    """A timed sweep's wall time with some pairs' training replaced by a re-timing of the same runs.

    When other jobs shared the machine while some (dataset, model) pairs of a timed sweep trained, those
    pairs trained again alone (same engine, same kind of host, another results file) say what the sweep
    would have taken undisturbed. With :math:`P` the re-timed pairs and :math:`s` a run's ``seconds``,

    .. math:: T' = T_\\mathrm{wall} - \\sum_{r \\in P} s^\\mathrm{timed}_r + \\sum_{r \\in P} s^\\mathrm{retimed}_r

    (:func:`sweep_wall_time` gives :math:`T_\\mathrm{wall}`). Every re-timed pair must hold exactly the runs
    the timed file has for it. Returns ``wall_min`` (:math:`T_\\mathrm{wall}`), ``retimed_wall_min``
    (:math:`T'`), ``pairs`` (``"dataset / model"``), ``timed_min`` and ``retimed_min`` (those pairs'
    training in each file), ``runs`` and ``same_results`` (runs with the same best epoch and test accuracy
    in both files).
    """
    for name, frame in (("timed_rows", timed_rows), ("retimed_rows", retimed_rows)):
        if frame.empty:
            raise ValueError(f"{name} is empty: there are no results to compare.")
        missing = set(RUN_ID + ["seconds", "best_epoch", "test_acc"]) - set(frame.columns)
        if missing:
            raise ValueError(f"{name} lack the column(s) {sorted(missing)}: they were not written by hpstrat_lite.experiments.sweep.")
    pairs = retimed_rows[["dataset", "model"]].drop_duplicates()
    in_pairs = timed_rows.merge(pairs, on=["dataset", "model"])
    timed_keys = set(map(tuple, in_pairs[RUN_ID].to_numpy().tolist()))
    retimed_keys = set(map(tuple, retimed_rows[RUN_ID].to_numpy().tolist()))
    if timed_keys != retimed_keys or len(retimed_keys) != len(retimed_rows):
        raise ValueError(f"the re-timed rows are not the timed file's runs of their pairs: {len(retimed_rows)} re-timed "
                         f"rows ({len(retimed_keys)} distinct runs) against {len(timed_keys)} timed runs of the same "
                         f"{len(pairs)} pair(s); re-time whole (dataset, model) pairs with the timed command's --k and --seeds.")
    both = in_pairs.merge(retimed_rows, on=RUN_ID, suffixes=("", "_retimed"))
    same = int(((both["best_epoch"] == both["best_epoch_retimed"]) & (both["test_acc"] == both["test_acc_retimed"])).sum())
    wall = sweep_wall_time(timed_rows, pause_min=pause_min)["wall_min"]
    timed_min, retimed_min = in_pairs["seconds"].sum() / 60, retimed_rows["seconds"].sum() / 60
    return {"wall_min": wall, "retimed_wall_min": float(wall - timed_min + retimed_min),
            "pairs": [f"{d} / {m}" for d, m in pairs.itertuples(index=False)], "timed_min": float(timed_min),
            "retimed_min": float(retimed_min), "runs": len(retimed_rows), "same_results": same}


def homophily_regression(rows: pd.DataFrame, *, x: str = "test_homophily", y: str = "test_acc") -> dict:
    """Appendix B: OLS of test accuracy on test-set mean homophily (statsmodels), one point per run.

    .. math:: \\mathrm{acc}_r = \\beta_0 + \\beta_1 \\bar h_{\\mathrm{test}, r} + \\varepsilon_r

    Returns ``slope``, ``intercept``, ``p_value`` (two-sided t-test of the slope), ``r2``, ``n`` and the
    fitted ``model`` (a statsmodels results object, for plotting confidence bands).
    """
    sm = require("statsmodels.api", extra="reports")

    df = rows[[x, y]].dropna()
    if len(df) < 3:
        raise ValueError(f"rows needs at least 3 runs with finite {x!r} and {y!r} for a regression; got {len(df)}.")
    if df[x].nunique() < 2:
        raise ValueError(f"{x!r} takes a single value across runs; a slope cannot be fitted.")
    fit = sm.OLS(df[y].to_numpy(), sm.add_constant(df[x].to_numpy())).fit()
    return {"slope": float(fit.params[1]), "intercept": float(fit.params[0]), "p_value": float(fit.pvalues[1]),
            "r2": float(fit.rsquared), "n": int(fit.nobs), "model": fit}


def regression_table(rows: pd.DataFrame, *, metric: str = "accuracy") -> pd.DataFrame:
    """:func:`homophily_regression` of the test ``metric`` for every (dataset, model) in ``rows``: slope,
    p-value, R^2, n and whether the slope is significant at 0.05."""
    out = []
    for (dataset, model), g in rows.groupby(["dataset", "model"]):
        fit = homophily_regression(g, y=score_column(g, metric))
        out.append({"dataset": dataset, "model": model, **{k: v for k, v in fit.items() if k != "model"},
                    "significant": fit["p_value"] < 0.05})
    return pd.DataFrame(out)


def complete_pairs(rows, *, methods=("random", "stratified", "hpstrat"), seeds=None):
    """The rows of the (dataset, model) pairs that have every fold of every split method and seed.

    A sweep in progress, or one stopped early, can leave a pair with some methods or seeds only;
    ranking the methods needs all of them. ``seeds``: the split seeds a pair must have (default: every
    seed in ``rows``, so that a multi-seed protocol never ranks a pair on fewer seeds). Returns
    ``(complete_rows, coverage)``: ``coverage`` has one row per dataset of ``rows`` with the models that
    are complete and the models of ``rows`` that are missing or incomplete there.
    """
    if rows.empty:
        return rows, pd.DataFrame(columns=["dataset", "models complete", "models missing or incomplete"])
    n_seeds = len(set(seeds) if seeds is not None else set(rows["seed"]))
    if seeds is not None:
        rows = rows[rows["seed"].isin(list(seeds))]
    k = rows.groupby(["dataset", "model", "method", "seed"])["fold"].nunique()
    expected = rows.groupby(["dataset", "model", "method", "seed"])["k"].first()
    full = (k == expected).groupby(["dataset", "model", "seed"]).agg(["all", "size"])
    per_seed = full["all"] & (full["size"] == len(methods))
    ok = per_seed.groupby(["dataset", "model"]).agg(lambda s: bool(s.all()) and len(s) == n_seeds)
    keep = rows.set_index(["dataset", "model"]).index.isin(ok[ok].index)
    coverage = []
    models = list(dict.fromkeys(rows["model"]))
    for dataset in dict.fromkeys(rows["dataset"]):
        d = ok.loc[dataset]
        coverage.append({"dataset": dataset, "models complete": ", ".join(d.index[d]),
                         "models missing or incomplete": ", ".join(m for m in models if not d.get(m, False))})
    return rows[keep], pd.DataFrame(coverage)


def protocol_rows(results_files, *, k: int, seeds, models=None):
    """The rows of one protocol (``k``, split ``seeds``) from one results file or a list of them, the way the
    GNN chapter shows them.

    Returns ``(rows, all_rows, coverage)``: the runs of the (dataset, model) pairs that have every fold of
    every split method for every seed (a pair counts once complete), every run of the protocol so far, and
    the coverage table of :func:`complete_pairs`. ``models`` (a list) keeps
    those models only. A file with no rows raises ``FileNotFoundError`` naming it.
    """
    rows = read_rows(results_files)
    if rows.empty:
        raise FileNotFoundError(f"results_file {results_files!r} has no rows; run `hpstrat experiment` or set "
                                "recompute=True.")
    rows = rows[(rows["k"] == k) & rows["seed"].isin(list(seeds))]
    if models is not None:
        rows = rows[rows["model"].isin(models)]
    complete, coverage = complete_pairs(rows, seeds=seeds)
    return complete, rows, coverage


def protocol_line(rows: pd.DataFrame, k: int) -> str:
    """One line that says what ``rows`` hold: runs, datasets x models x methods x folds, seeds, protocol."""
    protocol = "; ".join(f"at most {int(r['max_epochs'])} epochs, patience {int(r['patience'])}"
                         for r in rows[["max_epochs", "patience"]].drop_duplicates().to_dict("records"))
    seeds = sorted(int(s) for s in rows["seed"].unique())
    seeds = (f"split seed {seeds[0]}" if len(seeds) == 1 else
             f"split seeds {seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else
             "split seeds " + ", ".join(map(str, seeds)))
    return (f"{len(rows)} runs: {rows['dataset'].nunique()} datasets x {rows['model'].nunique()} models x "
            f"{rows['method'].nunique()} split methods x {k} folds, {seeds}; {protocol}")


def random_split_rows(rows: pd.DataFrame, *, datasets, models, k: int, n_seeds: int):
    """The runs Appendix B regresses: random k-fold splits with seeds ``0..n_seeds-1`` of the given datasets
    and models. Returns ``(rows, pairs, absent)``: the runs, the (dataset, model) pairs that have runs (in
    the rows' order) and the requested pairs that have none."""
    rows = rows[(rows["method"] == "random") & (rows["k"] == k) & (rows["seed"] < n_seeds)
                & rows["dataset"].isin(datasets) & rows["model"].isin(models)]
    pairs = list(dict.fromkeys(zip(rows["dataset"], rows["model"])))
    absent = [(d, m) for d in datasets for m in models if (d, m) not in pairs]
    return rows, pairs, absent


#: Fewest non-zero paired differences the Wilcoxon test is run on (with 5, the smallest two-sided p is 0.0625).
MIN_TEST_PAIRS = stats.MIN_PAIRS


def signed_rank_test(a: pd.Series, b: pd.Series) -> dict:
    """Two-sided Wilcoxon signed-rank test of the paired values ``a`` and ``b`` with its rank-biserial r
    (:func:`hpstrat_lite.stats.wilcoxon_test`), as the columns of the book's tables.

    Returns a dict: ``pairs``, ``median_diff`` (median of a - b), ``share_a_smaller``, ``wilcoxon_W``,
    ``p_value``, ``rank_biserial_r``.

    >>> t = signed_rank_test(pd.Series([1.0, 2, 3, 4, 5, 6]), pd.Series([2.0, 4, 6, 8, 10, 12]))
    >>> t["rank_biserial_r"], round(t["p_value"], 4)
    (-1.0, 0.0312)
    """
    t = stats.wilcoxon_test(a, b, min_pairs=MIN_TEST_PAIRS)
    return {"pairs": t.n, "median_diff": t.median_diff, "share_a_smaller": t.share_a_smaller,
            "wilcoxon_W": t.statistic, "p_value": t.pvalue, "rank_biserial_r": t.rank_biserial_r}


def paired_verdict(p_value: float, r: float, *, alpha: float = 0.05, subject: str = "a") -> str:
    """The verdict of a paired comparison: ``"<subject> smaller"`` (r < 0) or ``"<subject> larger"`` when
    ``p_value`` < ``alpha``, else ``"inconclusive"`` (also for a NaN p: no test).

    >>> paired_verdict(0.01, -0.8, subject="HpStrat"), paired_verdict(float("nan"), -1.0)
    ('HpStrat smaller', 'inconclusive')
    """
    if not p_value < alpha:
        return "inconclusive"
    return f"{subject} {'smaller' if r < 0 else 'larger'}"


def stability_tests(rows: pd.DataFrame, *, models=None, alpha: float = 0.05, metric: str = "accuracy") -> dict:
    """Is HpStrat's cross-fold spread smaller than the other methods'? Paired tests over (dataset, model) pairs.

    For each other method X, a two-sided Wilcoxon signed-rank test on the paired cross-fold stds of the test
    ``metric`` (:func:`cross_fold_std`, averaged over split seeds) of HpStrat and X, with the median
    difference HpStrat - X (points) and the matched-pairs rank-biserial correlation r as effect size
    (negative: HpStrat smaller; :func:`signed_rank_test`); and the Friedman test of the three methods with
    Kendall's :math:`W = \\chi^2_F / (n (k - 1))` (:func:`hpstrat_lite.stats.friedman`). The verdict of a comparison is ``"HpStrat smaller"`` or
    ``"HpStrat larger"`` when its p-value is below ``alpha``, else ``"inconclusive"`` (also when fewer than
    :data:`MIN_TEST_PAIRS` pairs differ: no test is run, p is NaN).

    Returns a dict: ``pairwise`` (one row per other method: pairs, median difference, share of pairs
    where HpStrat is smaller, W statistic, p-value, r, verdict), ``friedman`` (statistic, p-value, W,
    pairs: :func:`hpstrat_lite.stats.friedman`, NaN with fewer than 2 pairs or methods) and ``mean_std`` (mean std per method over the pairs).
    """
    std = cross_fold_std(rows, models=models, metric=metric)
    wide = std.pivot_table(index=["dataset", "model"], columns="method", values="std")
    if "hpstrat" not in wide:
        raise ValueError(f"rows must contain the method 'hpstrat'; got {list(wide.columns)}.")
    wide = wide.dropna()
    out = []
    for other in [m for m in ("stratified", "random") if m in wide]:
        t = {("share_hpstrat_smaller" if key == "share_a_smaller" else key): v
             for key, v in signed_rank_test(wide["hpstrat"], wide[other]).items()}
        out.append({"against": other, **t,
                    "verdict": paired_verdict(t["p_value"], t["rank_biserial_r"], alpha=alpha, subject="HpStrat")})
    methods = [m for m in ("hpstrat", "stratified", "random") if m in wide]
    f = stats.friedman(wide[methods], unit="(dataset, model)", alpha=alpha) if len(methods) >= 2 else None
    nan = float("nan")
    return {"pairwise": pd.DataFrame(out).set_index("against"),
            "friedman": {"statistic": f.statistic if f else nan, "p_value": f.pvalue if f else nan,
                         "kendall_w": f.kendall_w if f else nan, "pairs": len(wide)},
            "mean_std": wide[methods].mean()}


def stability_verdict(tests: dict, *, alpha: float = 0.05) -> str:
    """The sentence a page may state about HpStrat's spread, read from :func:`stability_tests`."""
    parts = []
    for other, t in tests["pairwise"].iterrows():
        name = {"stratified": "class-stratified", "random": "random"}[other]
        stat = (f"median difference {t['median_diff']:+.2f} points over {t['pairs']} pairs, "
                + (f"Wilcoxon p = {t['p_value']:.2g}, r = {t['rank_biserial_r']:+.2f}" if t["p_value"] == t["p_value"]
                   else f"too few pairs for a test (at least {MIN_TEST_PAIRS})"))
        if t["verdict"] == "inconclusive":
            parts.append(f"against {name} k-fold the difference is **inconclusive** ({stat})")
        else:
            word = "smaller" if t["verdict"] == "HpStrat smaller" else "larger"
            parts.append(f"HpStrat's cross-fold std is **{word}** than {name} k-fold's ({stat})")
    f = tests["friedman"]
    if f["p_value"] != f["p_value"]:
        return "; ".join(parts) + f"; too few pairs ({f['pairs']}) for the Friedman test."
    friedman = (f"the Friedman test of the three methods gives p = {f['p_value']:.2g} (Kendall's W = "
                f"{f['kendall_w']:.2f}): " + ("the methods' ranks differ by more than chance"
                                              if f["p_value"] < alpha else "their ranks do not differ by more than chance"))
    return "; ".join(parts) + "; " + friedman + "."
