"""The search space of the Part II studies and one Optuna trial drawn from it (shared by the in-memory search of
:mod:`hpstrat_book.part2.tuning` and the stored studies of :mod:`hpstrat_book.part2.studies`), and a
search's budget as one value (:class:`Search`)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping

import numpy as np

from hpstrat_lite._extras import require
from hpstrat_lite.core._validate import check_int
from .plan import N_EVAL

optuna = require("optuna", extra="studies")

#: The search space: name -> ("log", low, high) | ("float", low, high) | ("cat", choices).
SEARCH_SPACE = {
    "lr": ("log", 1e-3, 1e-1),
    "weight_decay": ("log", 1e-6, 1e-2),
    "hidden": ("cat", (32, 64, 128, 256)),
    "num_layers": ("cat", (1, 2, 3)),
    "dropout": ("float", 0.0, 0.8),
    "feature_norm": ("cat", ("none", "row", "standard")),
    "patience": ("cat", (50, 100, 200)),
}

#: Random trials before TPE starts modelling the scores (Optuna's default). A search of at most this many
#: trials is a seeded random search over the space; TPE guides the trials after it.
N_STARTUP_TRIALS = 10


@dataclasses.dataclass(frozen=True)
class Search:
    """A hyperparameter search and the evaluation of its best configuration, as one value.

    Every field left at ``None`` is the caller's default: a single study
    (:func:`hpstrat_book.part2.tuning.tune_node_classifier`) runs 50 trials over :data:`SEARCH_SPACE`
    with the tuning seed as sampler seed; the book's runners (:mod:`hpstrat_book.part2.necessity`) use
    their budget tables, their search spaces and, for the paper-protocol studies, a sampler seed per dataset
    and model.

    Attributes
    ----------
    n_trials : int, dict or None
        Trials of the search; the runners also take a dict dataset -> trials.
    n_eval : int
        Evaluation seeds of the best configuration (5: the paper reports means over 5 trials, Sections 3-6).
    space : dict, optional
        Search space, name -> spec (see :data:`SEARCH_SPACE`).
    storage : str, optional
        An Optuna RDB storage (``sqlite:///...``, ``postgresql://...``, ``mysql://...`` or a SQLite file path)
        holding the study, shared by every process given the same one
        (:func:`hpstrat_book.part2.studies.tune_shared`); ``None``: the search lives in memory and
        resumes from the results rows.
    sampler_seed : int, optional
        Seed of the TPE sampler; written in the rows and part of the study's key.

    Examples
    --------
    >>> Search(n_trials=20).n_eval
    5
    """

    n_trials: int | Mapping[str, int] | None = None
    n_eval: int = N_EVAL
    space: Mapping | None = None
    storage: str | None = None
    sampler_seed: int | None = None


def check_search(search) -> Search:
    """``search`` after checking its type and ``n_eval`` / ``sampler_seed`` (``None``: the default
    :class:`Search`); a ``ValueError`` names the field and what it must be."""
    search = Search() if search is None else search
    if not isinstance(search, Search):
        raise ValueError(f"search must be a hpstrat_book.part2.search.Search (e.g. Search(n_trials=20, "
                         f"n_eval=5)); got {type(search).__name__}.")
    check_int(search.n_eval, "search.n_eval")
    check_int(search.sampler_seed, "search.sampler_seed", 0, allow_none=True)
    return search


def check_space(space):
    space = SEARCH_SPACE if space is None else space
    if not isinstance(space, dict) or not space:
        raise ValueError(f"space must be a non-empty dict name -> spec, got {space!r}")
    for name, spec in space.items():
        ok = isinstance(spec, tuple) and spec and spec[0] in ("log", "float", "cat")
        if ok and spec[0] in ("log", "float"):
            ok = len(spec) == 3 and spec[1] < spec[2] and (spec[0] == "float" or spec[1] > 0)
        if ok and spec[0] == "cat":
            ok = len(spec) == 2 and len(spec[1]) > 0
        if not ok:
            raise ValueError(
                f"space[{name!r}] = {spec!r} is not a valid spec; allowed are ('log', low, high) "
                f"with 0 < low < high, ('float', low, high) with low < high, ('cat', choices)"
            )
    return space


def space_distributions(space=None):
    """Optuna distributions of a search space (used to feed finished trials back to a study)."""
    space = check_space(space)
    dists = {}
    for name, spec in space.items():
        if spec[0] == "cat":
            dists[name] = optuna.distributions.CategoricalDistribution(list(spec[1]))
        else:
            dists[name] = optuna.distributions.FloatDistribution(spec[1], spec[2],
                                                                 log=spec[0] == "log")
    return dists


def suggest_config(trial, *, space=None):
    """Draw one configuration from ``space`` (default :data:`SEARCH_SPACE`) with an Optuna trial."""
    space = check_space(space)
    cfg = {}
    for name, spec in space.items():
        if spec[0] == "cat":
            cfg[name] = trial.suggest_categorical(name, list(spec[1]))
        else:
            cfg[name] = trial.suggest_float(name, spec[1], spec[2], log=spec[0] == "log")
    return cfg


def space_id(space):
    flat = {k: [v[0], *(list(v[1]) if v[0] == "cat" else v[1:])] for k, v in space.items()}
    text = json.dumps(flat, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def run_trial(trial, objective, space, on_trial, number) -> float:
    """One Optuna trial: draw a configuration of ``space``, score it with ``objective`` (its ``"val"`` must be
    finite; the other keys become the trial's user attributes), report it to ``on_trial(number, cfg,
    result)`` and return the validation score."""
    cfg = suggest_config(trial, space=space)
    res = objective(cfg)
    val = float(res["val"])
    if not np.isfinite(val):
        raise ValueError(f"objective returned val={val!r} for config {cfg}; it must be finite")
    for key, value in res.items():
        if key != "val":
            trial.set_user_attr(key, value)
    if on_trial is not None:
        on_trial(number, cfg, res)
    return val
