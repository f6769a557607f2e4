import os
from pathlib import Path

import pytest

from hpstrat_lite.data.datasets import _env_path

REPO = Path(__file__).resolve().parents[1]
_MIRROR = REPO.parent / "shared" / "datasets"  # the layout CI uses: ../shared beside the clone
if "HPSTRAT_DATA" not in os.environ and _MIRROR.is_dir():
    os.environ["HPSTRAT_DATA"] = str(_MIRROR)
# the mirror as the loaders read it (made absolute by the library's own reader), or None
_root = _env_path("HPSTRAT_DATA")
DATA_ROOT = str(_root) if _root else None


def mirror_has(*parts: str) -> bool:
    """True when the data root holds the given path (e.g. mirror_has('Cora', 'raw'))."""
    return bool(DATA_ROOT) and Path(DATA_ROOT, *parts).exists()


def bins_oracle(h, n_bins: int):
    """Homophily bins written out independently of the library: bin b holds h in [b/B, (b+1)/B),
    h = 1 goes to the last bin B - 1, and NaN (isolated nodes) to bin B (HpStrat, Algorithm A.1)."""
    import numpy as np

    return np.where(np.isnan(h), n_bins, np.minimum(np.floor(np.nan_to_num(h) * n_bins), n_bins - 1)).astype(int)


SMOKE_OUT = REPO / "_build" / "smoke-test"
#: The environment of the smoke book's kernels: one thread each, as the tests' workers train, since two kernels
#: run at once beside the other test worker on a 2-core machine (spinning thread pools stall each other).
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def build_smoke_book(build: bool) -> dict:
    """Run the book's smoke profile into SMOKE_OUT, two notebooks at a time, each kernel on one thread and forked
    from a server that has imported the third-party libraries (``preload``); notebooks already executed in this
    pytest run are reused (tests/book/test_notebooks.py and tests/book/test_book.py share them, in one test
    worker: their ``xdist_group``)."""
    import hpstrat_book.build as book

    with pytest.MonkeyPatch.context() as env:  # the kernels inherit it; the worker's own setting comes back after
        for name, value in ONE_THREAD.items():
            env.setenv(name, value)
        return book.build_book("smoke", build=build, out_dir=SMOKE_OUT, workers=2, preload=True, log=lambda *a: None)


@pytest.fixture(scope="session")
def data_root():
    if not DATA_ROOT:
        if os.environ.get("CI"):
            pytest.fail("CI must run the real-data tests: set HPSTRAT_DATA to the dataset mirror")
        pytest.skip("HPSTRAT_DATA is not set: point it at the dataset mirror (CI sets ../shared/datasets)")
    return Path(DATA_ROOT)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny graphs: one torch thread avoids oversubscription on a shared 2-core machine
    (a module opts in with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``)."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="session", autouse=True)
def _writable_cache(tmp_path_factory):
    """Processed-graph caches go to a per-run writable folder unless the caller set one."""
    if "HPSTRAT_CACHE" not in os.environ:
        os.environ["HPSTRAT_CACHE"] = str(tmp_path_factory.mktemp("hpstrat_cache"))
    yield


@pytest.fixture(scope="session", autouse=True)
def _one_thread_per_test_worker():
    """Under ``pytest -n 2`` (``make test``) each of the two workers trains with one torch thread, so the
    workers do not oversubscribe the two cores."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
