"""The verdict rules every claim of the book follows: a closed set of words, and how an ordering earns one.

A claim of a paper, checked on our numbers, gets exactly one of :data:`VERDICTS`:

- ``agrees``: the claim's rule holds on our numbers (and, for an ordering, the ordering is beyond chance
  by a stated test or margin and holds on every committed rerun of the same protocol);
- ``disagrees``: the rule fails on our numbers (for an ordering: on the committed run and on every rerun);
- ``inconclusive``: neither (a difference within the noise, a rerun that flips the order, or no numbers
  yet);
- ``holds by construction``: the claim follows from how a method is built (e.g. every split method deals
  nodes round-robin, so fold sizes tie); it is checked, but counted apart, never as a reproduction.

This module sits below the tables that use it (:mod:`hpstrat_lite.reports.scorecard`,
:mod:`hpstrat_lite.reports.necessity`) and reads no results file.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..rows import score_column

AGREES, DISAGREES, INCONCLUSIVE, BY_CONSTRUCTION = "agrees", "disagrees", "inconclusive", "holds by construction"
#: The closed set of verdicts a claim can get.
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, BY_CONSTRUCTION)


def verdict(ok) -> str:
    """``"agrees"`` for a truthy ``ok``, ``"disagrees"`` for a falsy one, ``"inconclusive"`` for ``None``
    (the numbers the rule needs are missing)."""
    if ok is None:
        return INCONCLUSIVE
    return AGREES if ok else DISAGREES


def construction_verdict(ok: bool) -> str:
    """A claim that follows from a method's construction: ``"holds by construction"`` when the check
    confirms it, ``"disagrees"`` when it does not (then the implementation, not the paper, is wrong)."""
    return BY_CONSTRUCTION if ok else DISAGREES


def ordering_verdict(holds: bool, *, beyond_noise: bool = True, reruns: Mapping[str, bool] | None = None) -> str:
    """The verdict of an ordering (or count) claim under the book's rule.

    Parameters
    ----------
    holds : bool
        Whether the claimed ordering holds on the committed run.
    beyond_noise : bool
        Whether its test rejects chance (p below the stated threshold) or its margin exceeds the stated
        rerun-to-rerun spread.
    reruns : mapping of str to bool, optional
        For each committed rerun of the same protocol, whether the ordering holds there.

    Returns
    -------
    str
        ``"agrees"`` when it holds, beyond noise, and on every rerun; ``"disagrees"`` when it fails on the
        committed run and on every rerun; ``"inconclusive"`` otherwise.

    Examples
    --------
    >>> ordering_verdict(True, beyond_noise=True, reruns={"rerun A": True, "rerun B": False})
    'inconclusive'
    >>> ordering_verdict(False, reruns={"rerun A": False})
    'disagrees'
    """
    again = list((reruns or {}).values())
    if holds and beyond_noise and all(again):
        return AGREES
    if not holds and not any(again):
        return DISAGREES
    return INCONCLUSIVE


def reruns_text(figures: Mapping[str, str], holds: Mapping[str, bool]) -> str:
    """``"; reruns: holds on 2 of 3 committed reruns"`` for the ``ours`` cell of an ordering claim ('' for
    none). The reruns' figures and files are listed on the book's page *Data, reruns and provenance*, not in
    the cell (``figures`` gives the reruns' names)."""
    if not figures:
        return ""
    ok = sum(bool(holds[name]) for name in figures)
    n = len(figures)
    return f"; reruns: holds on {ok} of {n} committed rerun{'s' if n != 1 else ''}"


def best_model_changes(rows: pd.DataFrame, *, models=None, metric: str = "accuracy") -> pd.DataFrame:
    """Does the best model of a dataset change with the split method? (HpStrat Appendix E), by a rule that
    survives the split seed.

    Per (dataset, method, model, split seed) the score is the mean of the test ``metric`` over the folds
    (points; accuracy by default);
    the best model of a method is the one with the highest mean over seeds. The best models *differ*
    (``changes``) when two methods name different ones. The change is *established* only when, under every
    method, its best model beats each other method's best model by a mean margin larger than the cross-seed
    spread of that margin,

    .. math:: \\bar d_{m,o} > s_{m,o}, \\quad d_{m,o,s} = a_{m,b_m,s} - a_{m,b_o,s},

    with :math:`b_m` the best model under method :math:`m` and :math:`s` the sample standard deviation
    (ddof = 1) over split seeds. With one split seed there is no spread and no change is established.

    Parameters
    ----------
    rows : pandas.DataFrame
        Run rows with ``dataset, model, method, seed, fold`` and the metric's test column (``test_acc``).
    models : list of str, optional
        Keep these models only.
    metric : {"accuracy", "balanced_accuracy", "macro_f1", "roc_auc"}, default "accuracy"
        The test score (:func:`hpstrat_lite.rows.score_column`).

    Returns
    -------
    pandas.DataFrame
        Index ``dataset``; one column per method (its best model), ``changes`` (bool), ``top_two_gap`` (median
        over methods of best minus second-best mean, points), ``margin`` and ``spread`` (the pair closest to the
        rule's line: the smallest :math:`\\bar d - s`; NaN when nothing changes), ``seeds`` and ``established``
        (bool).
    """
    column = score_column(rows, metric)
    need = {"dataset", "model", "method", "seed"} - set(rows.columns)
    if need:
        raise ValueError(f"rows lack the column(s) {sorted(need)}; expected run rows of hpstrat experiment.")
    df = rows if models is None else rows[rows["model"].isin(list(models))]
    if df.empty:
        raise ValueError("rows is empty: there are no results to compare (run hpstrat experiment first).")
    acc = (100 * df.groupby(["dataset", "method", "model", "seed"])[column].mean()).rename("acc")
    mean = acc.groupby(["dataset", "method", "model"]).mean()
    out = []
    for ds, per in mean.groupby(level="dataset", sort=False):
        per = per.droplevel("dataset")
        best = {m: per.loc[m].idxmax() for m in per.index.get_level_values("method").unique()}
        gaps = [float(np.subtract(*per.loc[m].nlargest(2).to_numpy())) if len(per.loc[m]) > 1 else np.nan
                for m in best]
        seeds = int(acc.loc[ds].index.get_level_values("seed").nunique())
        changes = len(set(best.values())) > 1
        margin = spread = np.nan
        established = False
        if changes:
            worst = None
            for m, bm in best.items():
                for other in set(best.values()) - {bm}:
                    d = (acc.loc[(ds, m, bm)] - acc.loc[(ds, m, other)]).dropna()
                    s = float(d.std(ddof=1)) if len(d) > 1 else np.nan
                    slack = float(d.mean()) - s if np.isfinite(s) else -np.inf
                    if worst is None or slack < worst[0]:
                        worst = (slack, float(d.mean()), s)
            _, margin, spread = worst
            established = bool(seeds > 1 and np.isfinite(spread) and margin > spread)
        out.append({"dataset": ds, **best, "changes": changes, "top_two_gap": float(np.median(finite)) if (finite := [g for g in gaps if np.isfinite(g)]) else np.nan,
                    "margin": margin, "spread": spread, "seeds": seeds, "established": established})
    return pd.DataFrame(out).set_index("dataset")
