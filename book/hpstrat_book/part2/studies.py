"""Shared Optuna studies: one study in an RDB storage (SQLite, PostgreSQL, MySQL), several processes.

Every process given the same storage URL and study name draws its trials from the same study: Optuna
hands them out, none runs twice, and a trial whose process was killed is freed after its heartbeat
stops (:data:`HEARTBEAT_GRACE`). :func:`hpstrat_book.part2.tuning.tune` uses :func:`tune_shared`
when it is given a storage; the CSV rows stay the results of record.
"""
from __future__ import annotations
import time
from pathlib import Path
import numpy as np
from hpstrat_lite._extras import require
from hpstrat_lite._io import file_lock
from hpstrat_lite.core._validate import check_int

optuna = require("optuna", extra="studies")
from .search import N_STARTUP_TRIALS, check_space, run_trial, space_distributions

# ----------------------------------------------------------------------------------------------
# Shared studies (an Optuna RDB storage: several processes, one study)
# ----------------------------------------------------------------------------------------------

#: Seconds between the heartbeats of a running trial in a stored study; a trial whose process has sent
#: none for :data:`HEARTBEAT_GRACE` seconds (killed) is marked failed, and another trial takes its place.
HEARTBEAT_SECONDS = 10
HEARTBEAT_GRACE = 30
#: Seconds between two looks at a stored study while the trials of other processes finish.
POLL_SECONDS = 2.0
STORAGE_SCHEMES = ("sqlite", "postgresql", "mysql")


def storage_url(storage):
    """The SQLAlchemy URL of an Optuna RDB storage: a URL of :data:`STORAGE_SCHEMES` (with an optional
    driver, e.g. ``postgresql+psycopg2://...``) as it is, any other string a SQLite file path.

    >>> storage_url("sqlite:///results/part2_studies.db")
    'sqlite:///results/part2_studies.db'
    """
    if not isinstance(storage, (str, Path)) or not str(storage):
        raise ValueError(f"storage must be a database URL (sqlite:///file.db, postgresql://..., mysql://...) or "
                         f"a SQLite file path; got {storage!r}")
    text = str(storage)
    if "://" not in text:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    scheme = text.split("://", 1)[0].split("+", 1)[0]
    if scheme not in STORAGE_SCHEMES:
        raise ValueError(f"storage {text!r}: the URL scheme must be one of {STORAGE_SCHEMES} (Optuna's RDB "
                         f"storage), got {scheme!r}")
    return text


def study_name(key, **settings):
    """The name of a stored study: the task, dataset, model, protocol, folds, feature count, precision,
    sampler seed and search space of ``key`` (as in the results rows), then ``settings`` that change what
    a trial trains (``max_epochs=500`` -> ``max_epochs=500``), joined by ``/``. Two studies differ in
    name exactly when their trials are not interchangeable; the trial budget is not part of it, so a
    larger budget extends a study."""
    order = ("task", "dataset", "model", "protocol", "k", "num_features", "precision", "tune_seed",
             "sampler_seed", "space_id")
    parts = [f"{name}={key[name]}" for name in order if name in key]
    parts += [f"{name}={value}" for name, value in sorted(settings.items())]
    return "/".join(parts)


class TrialSeededSampler(optuna.samplers.BaseSampler):
    """Optuna's TPE sampler, seeded afresh for every trial by ``(seed, trial number)``.

    Several processes sharing a stored study each hold a sampler; seeded by the trial's number (which
    the storage hands out once), their draws differ, and the same study history gives the same draw in
    any process. ``constant_liar`` makes TPE count the trials still running as poor, so that concurrent
    trials spread over the space.
    """

    def __init__(self, *, seed=0, n_startup_trials=N_STARTUP_TRIALS):
        self.seed = int(seed)
        self.n_startup_trials = n_startup_trials
        self._samplers = {}

    def __repr__(self):
        return f"TrialSeededSampler(seed={self.seed}, n_startup_trials={self.n_startup_trials})"

    def _tpe(self, trial):
        if trial.number not in self._samplers:
            seed = int(np.random.SeedSequence([self.seed, trial.number]).generate_state(1)[0])
            self._samplers = {trial.number: optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=self.n_startup_trials, constant_liar=True)}
        return self._samplers[trial.number]

    def infer_relative_search_space(self, study, trial):
        return self._tpe(trial).infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space):
        return self._tpe(trial).sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._tpe(trial).sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study, trial):
        self._tpe(trial).before_trial(study, trial)

    def after_trial(self, study, trial, state, values):
        self._tpe(trial).after_trial(study, trial, state, values)


def open_study(storage, name, *, seed=0, n_startup_trials=N_STARTUP_TRIALS):
    """The study ``name`` in the RDB ``storage`` (:func:`storage_url`), created when absent, with a
    :class:`TrialSeededSampler` and heartbeats (:data:`HEARTBEAT_SECONDS`) on its running trials."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"study_name must be a non-empty string with storage={storage!r}; got {name!r}")
    import contextlib

    import sqlalchemy.exc

    url = storage_url(storage)
    lock = contextlib.nullcontext()
    if url.startswith("sqlite:///"):
        db = Path(url[len("sqlite:///"):])
        db.parent.mkdir(parents=True, exist_ok=True)
        lock = file_lock(db.parent / f".{db.name}.lock")  # processes creating the file's tables take turns
    engine = {"connect_args": {"timeout": 120}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    with lock:
        for attempt in range(5):  # a database server's tables created by another process at the same moment
            try:
                rdb = optuna.storages.RDBStorage(url, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_SECONDS,
                                                 grace_period=HEARTBEAT_GRACE)
                return optuna.create_study(storage=rdb, study_name=name, direction="maximize", load_if_exists=True,
                                           sampler=TrialSeededSampler(seed=seed, n_startup_trials=n_startup_trials))
            except sqlalchemy.exc.SQLAlchemyError:
                if attempt == 4:
                    raise
                time.sleep(1 + attempt)


_LIVE = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.RUNNING, optuna.trial.TrialState.WAITING)


def _rank(study, number):
    """The place (0, 1, ...) in the budget of trial ``number``: trials ahead of it that are complete or
    running keep the place recorded in their ``rank`` attribute, or (not recorded yet) take the lowest
    free one in the order of their numbers; trial ``number`` takes the lowest place left. A place freed
    by a failed trial (its process was killed) is taken again."""
    taken = set()

    def free():
        return next(r for r in range(len(taken) + 1) if r not in taken)

    for t in sorted(study.get_trials(deepcopy=False, states=_LIVE), key=lambda t: t.number):
        if t.number >= number:
            break
        taken.add(t.user_attrs.get("rank", free()))
    return free()


def tune_shared(objective, n_trials, storage, name, *, seed=0, space=None, done=(), on_trial=None,
                n_startup_trials=N_STARTUP_TRIALS):
    """:func:`tune` on a study shared through an RDB storage; returns ``(study, evaluate)``.

    This process runs one trial after another while the study holds fewer than ``n_trials`` complete
    or running trials. A trial first takes its place in the budget (:func:`_rank`, ``0..n_trials-1``,
    written in its ``rank`` attribute and passed to ``on_trial`` as its number); a trial that finds the
    budget taken (another process claimed the last place at the same moment) is pruned untrained.
    So the processes together run ``n_trials`` trials, each configuration once.

    ``evaluate`` is True for the process whose trial took the last place (it waits for the other
    processes' trials to end, so that the best trial is final), and for a process that found the study
    complete with no trial running (a rerun, which finishes an evaluation a killed process left). A
    process that came while the budget was taken and trials were running waits for them, taking the
    place of any trial whose process was killed (its heartbeat stale after :data:`HEARTBEAT_GRACE`
    seconds).
    ``done`` fills the study when the storage does not hold it yet (trials recorded elsewhere, e.g. in a
    results file written before the study was stored).
    """
    import warnings

    check_int(n_trials, "n_trials")
    space = check_space(space)
    dists = space_distributions(space)
    old_level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
            study = open_study(storage, name, seed=seed, n_startup_trials=n_startup_trials)
            if done and not study.get_trials(deepcopy=False):
                for rank, (cfg, res) in enumerate(done):
                    attrs = {k: v for k, v in res.items() if k != "val"}
                    study.add_trial(optuna.trial.create_trial(params=dict(cfg), distributions=dists,
                                                              value=float(res["val"]),
                                                              user_attrs={**attrs, "rank": rank}))
            ran, last, idle = False, False, None
            while True:
                optuna.storages.fail_stale_trials(study)
                live = study.get_trials(deepcopy=False, states=_LIVE)
                running = any(t.state == optuna.trial.TrialState.RUNNING for t in live)
                if idle is None:  # the study was complete and no trial was running when this process came
                    idle = len(live) >= n_trials and not running
                if len(live) < n_trials:
                    ranks = []

                    def _objective(trial):
                        rank = _rank(study, trial.number)
                        if rank >= n_trials:
                            raise optuna.TrialPruned()
                        trial.set_user_attr("rank", rank)
                        ranks.append(rank)
                        return run_trial(trial, objective, space, on_trial, rank)

                    study.optimize(_objective, n_trials=1)
                    ran = ran or bool(ranks)
                    last = last or ranks == [n_trials - 1]
                    continue
                if not running:
                    return study, last or idle
                if ran and not last:
                    return study, False  # the process holding the last place evaluates
                # holding the last place: wait for the best trial to be final; having run nothing: wait,
                # to take the place of a trial whose process was killed once its heartbeat is stale
                time.sleep(POLL_SECONDS)
    finally:
        optuna.logging.set_verbosity(old_level)


