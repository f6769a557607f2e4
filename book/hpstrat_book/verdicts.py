"""The verdict rules every claim of the book follows: a closed set of words, and how an ordering earns one.

A claim of a paper, checked on our numbers, gets exactly one of :data:`VERDICTS`:

- ``agrees``: the claim's rule holds on our numbers (and, for an ordering, the ordering is beyond chance
  by a stated test or margin and holds on every committed rerun of the same protocol);
- ``disagrees``: the rule fails on our numbers (for an ordering: on the committed run and on every rerun);
- ``inconclusive``: neither (a difference within the noise, a rerun that flips the order, or no numbers
  yet);
- ``holds by construction``: the claim follows from how a method is built (e.g. every split method deals
  nodes round-robin, so fold sizes tie); it is checked, but counted apart, never as a reproduction;
- ``exploratory``: the rows are those the effect was found on; a page shows the figure and gives no verdict
  (the claim is judged on held-out rows, under another id of the registry, :mod:`hpstrat_book.claims`).

The rules are symmetric (:func:`tested_verdict`): *agrees* and *disagrees* each need evidence beyond noise
(a test below its threshold, in the claimed or in the opposite direction); without it a claim is
*inconclusive*. A claim checked on reruns of the same protocol keeps its verdict only when every independent
rerun gives the same one (:func:`rerun_verdict`). Numbers compared with a paper's are compared at the precision
shown (:func:`at_precision`).

This module sits below the tables that use it (:mod:`hpstrat_book.scorecard`,
:mod:`hpstrat_book.necessity`) and reads no results file.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from hpstrat_lite import stats
from hpstrat_lite.rows import score_column

AGREES, DISAGREES, INCONCLUSIVE, BY_CONSTRUCTION = "agrees", "disagrees", "inconclusive", "holds by construction"
EXPLORATORY = "exploratory"
#: The closed set of verdicts a claim can get.
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, BY_CONSTRUCTION, EXPLORATORY)
#: Verdicts counted apart from the tested claims (no test of a reproduction stands behind them).
APART = (BY_CONSTRUCTION, EXPLORATORY)


def tested_verdict(effect, p_value, *, alpha: float = 0.05, claimed: str = "negative") -> str:
    """The symmetric rule: *agrees* when the test rejects chance (``p_value < alpha``) with ``effect`` of the
    ``claimed`` sign (``"negative"``: e.g. HpStrat's spread minus the other's below 0; ``"positive"``),
    *disagrees* when it rejects chance with the opposite sign, *inconclusive* otherwise (also for a NaN p or
    effect: no test).

    >>> tested_verdict(-0.4, 0.01), tested_verdict(-0.4, 0.2), tested_verdict(+0.4, 0.01)
    ('agrees', 'inconclusive', 'disagrees')
    """
    if claimed not in ("negative", "positive"):
        raise ValueError(f"claimed must be 'negative' or 'positive'; got {claimed!r}.")
    if not (p_value < alpha) or effect != effect or effect == 0:
        return INCONCLUSIVE
    return AGREES if (effect < 0) == (claimed == "negative") else DISAGREES


def rerun_verdict(verdict_: str, reruns: Mapping[str, str] | None = None) -> str:
    """The one rerun rule of every ordering claim: the verdict on the committed rows stands only when each
    independent rerun of the same protocol (``reruns``: name -> the verdict the same rule gives there) gives the
    same verdict; otherwise *inconclusive*. Near-copies of the sweep are not passed here: they count once, as
    the sweep (:func:`hpstrat_book.claim_checks.rerun_independence`).

    >>> rerun_verdict("agrees", {"h200": "agrees"}), rerun_verdict("agrees", {"h200": "inconclusive"})
    ('agrees', 'inconclusive')
    """
    if verdict_ in (AGREES, DISAGREES) and any(v != verdict_ for v in (reruns or {}).values()):
        return INCONCLUSIVE
    return verdict_


def at_precision(value, decimals: int = 1) -> float:
    """``value`` rounded to the ``decimals`` a page shows it with, so that a comparison reads what the reader
    reads: ``91.2 - 88.0`` is ``3.2000000000000028`` in floating point and ``3.2`` at one decimal.

    >>> 91.2 - 88.0 > 3.2, at_precision(91.2 - 88.0) > 3.2
    (True, False)
    """
    value = float(value)
    return float(f"{value:.{int(decimals)}f}") if value == value else value


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
    (ddof = 1) over split seeds. With one split seed there is no spread and no change is established
    (:func:`hpstrat_lite.stats.best_model_change`, applied to each dataset).

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
    acc = (100 * df.groupby(["dataset", "method", "model", "seed"])[column].mean()).rename("acc").reset_index()
    out = []
    for ds, scores in acc.groupby("dataset", sort=True):
        r = stats.best_model_change(scores, value="acc")
        out.append({"dataset": ds, **r.best_of(), "changes": r.changes, "top_two_gap": r.top_two_gap,
                    "margin": r.margin, "spread": r.spread, "seeds": r.n_seeds, "established": r.established})
    return pd.DataFrame(out).set_index("dataset")
