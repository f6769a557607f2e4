"""Where the (dataset, model) pairs of a sweep train: in this process, or as Ray tasks.

:func:`hpstrat_lite.experiments.sweep.run_experiment` takes ``execution=Execution(executor=...)``
(:class:`hpstrat_lite.protocol.Execution`):

- ``"local"`` (the default): the pairs train one after the other in the calling process.
- ``"ray"``: every pending (dataset, model) pair is one Ray task that declares what it needs as Ray
  resources (``num_cpus`` CPU threads, one GPU when it trains on CUDA). The task trains the pair's
  missing runs and *returns* their rows; the calling process (the driver) is the only one that
  writes the results file, appending each pair's rows as its task ends. Resuming, deduplication and
  the row schema are therefore those of the local executor. A task lost with its worker process or
  node is run again by Ray, at most :data:`MAX_RETRIES` times, before the sweep stops with one line
  (:class:`LostTaskError`); a pair whose task never finished (a killed driver, say) left no rows, and
  the same command trains it again. A user's model factory travels with its task (a factory defined in
  a module must be importable on the workers; one defined in a script or notebook is sent by value).

Ray runs on a cluster joined with ``address=`` (``ray start --head`` on one machine,
``ray start --address=<head>:6379`` on the others, then ``hpstrat experiment ... --executor ray
--ray-address <head>:6379``, or ``Execution(executor="ray", ray_address="<head>:6379")``), or on a local Ray
started for the call and sized to this machine (``num_cpus``), which the call shuts down when it ends. A Ray already initialised in the calling
process is used as it is and left running.
"""
from __future__ import annotations

import contextlib
import os
import sys

from .._extras import require
from ..core._validate import check_bool, check_choice, check_int
from ..protocol import Execution

EXECUTORS = ("local", "ray")
"""The values of ``executor``."""

#: How many times Ray runs a pair's task again when its worker process or node dies (not when the
#: task's own code raises: that error is the pair's answer and ends the sweep).
MAX_RETRIES = 2


class LostTaskError(RuntimeError):
    """A pair's Ray task was lost with its worker more than :data:`MAX_RETRIES` times; the rows of the
    pairs that finished are in the results file, and the same command trains the rest."""


def check_executor(execution: Execution) -> str:
    """The executor a sweep runs on (``execution.executor``), after checking the fields of ``execution``
    (:class:`hpstrat_lite.protocol.Execution`) that say how its pairs run.

    Raises ``ValueError`` naming the field for an unknown executor, ``workers``, ``ray_address``,
    ``cpus_per_pair`` or ``fresh_process`` given to the local executor, and ``workers > 1`` with a cluster
    address (``workers`` sizes a local Ray)."""
    executor, workers, ray_address = execution.executor, execution.workers, execution.ray_address
    check_int(workers, "workers", 1)
    check_bool(execution.fresh_process, "fresh_process")
    check_int(execution.cpus_per_pair, "cpus_per_pair", 1, allow_none=True)
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address):
        raise ValueError(f"ray_address must be a non-empty string such as '10.0.0.1:6379' or 'auto'; "
                         f"got {ray_address!r}.")
    check_choice(executor, "executor", EXECUTORS)
    if executor == "local":
        for name in ("workers", "fresh_process", "ray_address", "cpus_per_pair"):
            value, default = getattr(execution, name), getattr(Execution, name)
            if value != default:
                raise ValueError(f"{name}={value!r} needs executor='ray' (the local executor trains the pairs "
                                 f"one after the other in this process); got executor='local'.")
    if workers > 1 and ray_address is not None:
        raise ValueError(f"workers={workers} sizes a local Ray and cannot be combined with ray_address="
                         f"{ray_address!r}: a cluster's size is its own.")
    return executor


@contextlib.contextmanager
def ray_runtime(address=None, *, num_cpus=None):
    """Ray for the block: the one already initialised in this process, the cluster at ``address``
    (``"auto"``: the one ``ray start`` runs on this machine), or a local Ray of ``num_cpus`` CPUs
    (default: this machine's), started without a dashboard and shut down when the block ends.
    Yields the ``ray`` module."""
    ray = require("ray", extra="ray")

    if ray.is_initialized():
        yield ray
        return
    if address is not None:
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False, logging_level="WARNING",
                 log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def pair_resources(ray, device, *, cpus_per_pair=1) -> tuple[dict, str]:
    """``(resources, device)``: the Ray resources one pair's task declares and the device it trains on.

    ``device="cpu"``: ``cpus_per_pair`` CPUs. ``"cuda"`` (or ``"cuda:<i>"``): one GPU as well, which Ray
    picks (the task sees it as ``"cuda"``). ``"auto"``: a GPU when the cluster has one, else CPU."""
    if device == "auto":
        device = "cuda" if ray.cluster_resources().get("GPU", 0) > 0 else "cpu"
    if isinstance(device, str) and device.startswith("cuda"):
        if ray.cluster_resources().get("GPU", 0) <= 0:
            raise ValueError(f"device={device!r} needs a GPU, and the Ray cluster has none "
                             f"(resources {ray.cluster_resources()}).")
        return {"num_cpus": cpus_per_pair, "num_gpus": 1}, "cuda"
    if device != "cpu":
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda' with executor='ray'; got {device!r}.")
    return {"num_cpus": cpus_per_pair, "num_gpus": 0}, "cpu"


def factory_modules(factories) -> dict[str, str]:
    """``{label: module}`` of the factories Ray ships by reference (defined in an importable module; one
    defined in a script or notebook, module ``__main__``, travels by value)."""
    out = {}
    for label, factory in factories.items():
        target = getattr(factory, "func", factory)  # functools.partial: its function's module
        module = getattr(target, "__module__", None) or type(target).__module__
        if module and module != "__main__":
            out[label] = module
    return out


def _import_modules(modules):
    """In a worker: ``{module: "ErrorType: message"}`` for each module that does not import there."""
    import importlib

    failed = {}
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as err:  # ImportError, or the module's own error at import
            failed[module] = f"{type(err).__name__}: {err}"
    return failed


def check_worker_imports(ray, modules: dict[str, str]) -> None:
    """Import the factories' modules in a Ray worker before any pair is sent; a module the workers cannot
    import raises ``ValueError`` naming the factory, the module, the driver's folder of it and the fix."""
    if not modules:
        return
    failed = ray.get(ray.remote(_import_modules).options(num_cpus=0).remote(sorted(set(modules.values()))))
    for label, module in modules.items():
        if module in failed:
            top = getattr(sys.modules.get(module.partition(".")[0]), "__file__", None)
            folder = os.path.dirname(os.path.dirname(top) if top.endswith("__init__.py") else top) if top else None
            fix = (f"export PYTHONPATH={folder}:$PYTHONPATH before `ray start` (a cluster) or before this run (a "
                   f"local Ray), or install the package on every worker" if folder else
                   "install it on every worker, or put its folder on PYTHONPATH before `ray start`")
            raise ValueError(f"model factory {label!r}: Ray's workers cannot import its module {module!r} "
                             f"({failed[module]}); the driver imports it from {folder!r}. Fix: {fix}.")


def run_pairs_on_ray(tasks, pair_task, on_rows, bar, *, device="cpu", address=None, num_cpus=None, cpus_per_pair=1,
                     fresh_process=False, modules=None) -> None:
    """Run one Ray task per pair and hand each task's rows to ``on_rows`` as it ends (in the calling process).

    Parameters
    ----------
    tasks : list of (str, tuple)
        One entry per pair: its label (shown on ``bar``) and the positional arguments of ``pair_task``.
    pair_task : callable
        ``pair_task(*args, device=..., threads=...) -> list of dict``: the rows of one pair, trained in a Ray
        worker on ``threads`` torch threads (a module-level function, so that Ray can ship it).
    on_rows : callable
        ``on_rows(rows)``: called in this process with the rows of each finished task (which writes them).
    bar : tqdm
        Progress over the pairs.
    device : str
        ``"cpu"``, ``"cuda"`` or ``"auto"``, resolved against the cluster by :func:`pair_resources`.
    address : str, optional
        A Ray cluster to join; default: a local Ray of ``num_cpus`` CPUs (this machine's by default).
    cpus_per_pair : int
        CPUs each task declares and torch threads it trains on.
    fresh_process : bool
        A new worker process for every pair (``max_calls=1``), so that none inherits the heap of the
        pairs before it.
    modules : dict, optional
        ``{factory label: module}`` (:func:`factory_modules`): imported in a worker before any pair is sent
        (:func:`check_worker_imports`).

    A task lost with its worker process or node is run again, at most :data:`MAX_RETRIES` times, then
    :class:`LostTaskError` ends the sweep. A task whose code raises re-raises that error here (the
    original exception, not Ray's wrapper) once the tasks ahead of it have landed. Either way the tasks
    not yet finished are cancelled, and their pairs train again when the command is rerun.
    """
    with ray_runtime(address, num_cpus=num_cpus) as ray:
        resources, device = pair_resources(ray, device, cpus_per_pair=cpus_per_pair)
        check_worker_imports(ray, modules or {})
        total_cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus_per_pair > total_cpus:
            raise ValueError(f"cpus_per_pair={cpus_per_pair} is more than the Ray cluster's {total_cpus} CPUs.")
        options = {"max_calls": 1} if fresh_process else {}
        task = ray.remote(pair_task).options(max_retries=MAX_RETRIES, retry_exceptions=False, **resources,
                                             **options)
        pending = {task.remote(*args, device=device, threads=cpus_per_pair): label for label, args in tasks}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                label = pending.pop(ready[0])
                rows = _task_rows(ray, ready[0], label)
                if rows:
                    on_rows(rows)
                bar.set_postfix_str(label)
                bar.update(1)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)


def _task_rows(ray, ref, label):
    """The rows a pair's task returned; its own exception re-raised as it was raised in the task, a task
    lost with its worker :data:`MAX_RETRIES` + 1 times as :class:`LostTaskError`."""
    from ray.exceptions import RayError, RayTaskError

    try:
        return ray.get(ref)
    except RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise
    except RayError as err:  # WorkerCrashedError, NodeDiedError, ObjectLostError, ...
        raise LostTaskError(f"the Ray task of pair {label} was lost {MAX_RETRIES + 1} times "
                            f"({type(err).__name__}); the rows of the finished pairs are saved, rerun the same "
                            f"command to train the rest.") from None
