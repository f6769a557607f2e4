"""The words every claim table of the book uses for a claim of a paper checked on our numbers."""
from __future__ import annotations

#: ``agrees``: the claim holds on our numbers; ``disagrees``: it does not; ``not run``: the numbers it
#: needs are not in the results yet. Statistical comparisons add ``inconclusive``
#: (:func:`hpstrat_lite.reports.hpstrat.stability_verdict`).
VERDICTS = ("agrees", "disagrees", "not run")


def verdict(ok) -> str:
    """``"agrees"`` for a truthy ``ok``, ``"disagrees"`` for a falsy one, ``"not run"`` for ``None``."""
    if ok is None:
        return "not run"
    return "agrees" if ok else "disagrees"
