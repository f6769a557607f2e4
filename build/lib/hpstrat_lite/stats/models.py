"""Does the best model change with the split method? The rule of HpStrat Appendix E, with the margin a change
needs to be more than split-seed noise."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd


@dataclasses.dataclass(frozen=True)
class BestModelChange:
    """Result of :func:`best_model_change` on one graph.

    ``best``: ``((method, model), ...)``, the best model (highest mean score over seeds) of each method;
    ``changes``: two methods name different models; ``established``: the change is beyond the split-seed
    noise (see :func:`best_model_change`); ``margin`` and ``spread``: the (method, rival) pair closest to
    the rule's line (smallest margin - spread; NaN when nothing changes); ``top_two_gap``: median over methods
    of best minus second-best mean; ``n_seeds`` units named ``unit``."""

    best: tuple
    changes: bool
    established: bool
    margin: float
    spread: float
    top_two_gap: float
    n_seeds: int
    unit: str = "split seed"

    def best_of(self) -> dict:
        """``{method: best model}``."""
        return dict(self.best)


def best_model_change(scores: pd.DataFrame, *, value: str = "score") -> BestModelChange:
    """Appendix E on one graph: ``scores`` holds one row per (``method``, ``model``, ``seed``) with ``value``
    (e.g. the mean test accuracy over the folds of that split seed).

    The best model :math:`b_m` of method :math:`m` has the highest mean over seeds. The best models *change*
    when two methods name different ones; the change is *established* only when, under every method, its best
    model beats each other method's best model by a mean margin larger than the cross-seed spread of that
    margin,

    .. math:: \\bar d_{m,o} > s_{m,o}, \\quad d_{m,o,s} = a_{m,b_m,s} - a_{m,b_o,s},

    :math:`s` the sample standard deviation (ddof = 1) over split seeds (the independent unit: the models of
    one seed share its folds). With one split seed there is no spread and no change is established.

    >>> s = pd.DataFrame({"method": ["r"] * 4 + ["h"] * 4, "model": ["A", "A", "B", "B"] * 2,
    ...                   "seed": [0, 1] * 4, "score": [80, 81, 70, 71, 70, 72, 80, 81.0]})
    >>> r = best_model_change(s)
    >>> r.best_of(), r.changes, r.established, r.margin
    ({'h': 'B', 'r': 'A'}, True, True, 9.5)
    """
    missing = [c for c in ("method", "model", "seed", value) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lacks the column(s) {missing}; it has {list(scores.columns)}.")
    if scores.empty:
        raise ValueError("scores is empty: there is no model to compare.")
    acc = scores.set_index(["method", "model", "seed"])[value].sort_index()
    mean = acc.groupby(["method", "model"]).mean()
    best = {m: mean.loc[m].idxmax() for m in mean.index.get_level_values("method").unique()}
    gaps = [float(np.subtract(*mean.loc[m].nlargest(2).to_numpy())) if len(mean.loc[m]) > 1 else np.nan
            for m in best]
    finite = [g for g in gaps if np.isfinite(g)]
    seeds = int(acc.index.get_level_values("seed").nunique())
    changes = len(set(best.values())) > 1
    margin = spread = np.nan
    established = False
    if changes:
        worst = None
        for m, bm in best.items():
            for other in set(best.values()) - {bm}:
                d = (acc.loc[(m, bm)] - acc.loc[(m, other)]).dropna()
                s = float(d.std(ddof=1)) if len(d) > 1 else np.nan
                slack = float(d.mean()) - s if np.isfinite(s) else -np.inf
                if worst is None or slack < worst[0]:
                    worst = (slack, float(d.mean()), s)
        _, margin, spread = worst
        established = bool(seeds > 1 and np.isfinite(spread) and margin > spread)
    return BestModelChange(best=tuple(best.items()), changes=bool(changes), established=established,
                           margin=float(margin), spread=float(spread),
                           top_two_gap=float(np.median(finite)) if finite else float("nan"), n_seeds=seeds)
