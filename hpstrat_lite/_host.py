"""The machine a run happens on: CPU model and instruction-set flags, host name (recorded in result rows)."""
from __future__ import annotations

import functools
import os


def cpu_flags(cpuinfo="/proc/cpuinfo") -> set:
    """The instruction-set flags of the first CPU in ``cpuinfo`` (empty where it cannot be read)."""
    try:
        with open(cpuinfo) as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@functools.lru_cache(maxsize=None)
def host_cpu(cpuinfo="/proc/cpuinfo") -> str:
    """The machine a row was timed on, written in its ``host`` column: CPU model, usable CPUs and the
    widest matrix instructions, e.g. ``"AMD EPYC, 2 cpus, avx2"``.

    One name of a machine may stand for different CPUs over time, and the same float32 product takes very
    different times on them (``benchmarks/README.md``, Hosts), so a row's ``seconds`` can only be compared
    with rows of the same ``host``. ``"unknown"`` where ``cpuinfo`` is unreadable.
    """
    model = ""
    try:
        with open(cpuinfo) as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = " ".join(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    flags = cpu_flags(cpuinfo)
    simd = ("avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "avx" if "avx" in flags else "")
    if "amx_tile" in flags:
        simd = f"{simd}+amx" if simd else "amx"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if not model:
        return "unknown"
    return ", ".join(p for p in (model, f"{cpus} cpus", simd) if p)


def host_name(device="cpu") -> str:
    """:func:`host_cpu`, preceded by the GPU's name for rows trained on CUDA, e.g.
    ``"NVIDIA H200 + AMD EPYC, 16 cpus, avx512"``: the ``host`` column of a row trained on ``device``."""
    device = str(device)
    if not device.startswith("cuda"):
        return host_cpu()
    import torch

    return f"{torch.cuda.get_device_name(torch.device(device))} + {host_cpu()}"


#: Options of the Jupyter kernels the library and the book start (the audit report, the book's pages): errors only,
#: not the kernel's start-up warning about unencrypted local TCP ports, which is not the reader's concern.
KERNEL_QUIET = ["--IPKernelApp.log_level=ERROR"]

#: Environment variables through which a user sets OpenMP's idle-wait policy themselves (then left alone).
_OMP_WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def start_numba_threads() -> None:
    """Start numba's thread pool (once per process), with its idle threads sleeping instead of spinning when
    numba is the first to load OpenMP.

    numba's OpenMP threading layer and PyTorch both run on GNU libgomp, and in one process they share one copy of it
    and one pool of workers (checked with ``LD_DEBUG=bindings`` and by the CPU time idle workers take; figures:
    ``benchmarks/README.md``, bench_train.py):

    * PyTorch imported first (the training path: the engine imports torch before its first kernel call): PyTorch's
      libgomp is in the process's global symbol scope, so numba's calls into OpenMP bind to it, and its wait
      policy, read when PyTorch loaded it, applies: an idle worker spins for about 10 ms after each parallel
      region, numba's or PyTorch's, before it sleeps;
    * numba first (a split or homophily computed before PyTorch is imported): numba loads the system's libgomp,
      which later also serves PyTorch (the same ``libgomp.so.1``). libgomp reads its wait policy once, when it
      is loaded, so this sets ``OMP_WAIT_POLICY=PASSIVE`` for the moment numba launches its pool and removes it
      again (child processes keep their defaults): on a machine shared with other processes, a spinning worker
      costs the CPU share the work needs.

    Nothing changes when the pool is already running, or when the user set ``OMP_WAIT_POLICY`` or
    ``GOMP_SPINCOUNT``. Same numbers either way: only how idle threads wait changes.
    """
    from numba.np.ufunc import parallel

    if parallel._is_initialized:
        return
    if any(v in os.environ for v in _OMP_WAIT_VARIABLES):
        parallel._launch_threads()
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        parallel._launch_threads()
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)
