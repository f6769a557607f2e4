"""Cache hints of the fused edge loops (:mod:`hpstrat_lite.engine.kernels`): no effect on any value."""
import numba
import numpy as np
import pytest


def test_prefetch_row_asks_for_rows_and_changes_nothing():
    from hpstrat_lite.engine.kernels import _prefetch_row

    @numba.njit
    def gather(x, rows):
        out = np.zeros(x.shape[1:], x.dtype)
        for r in rows:
            _prefetch_row(x, r)
            out += x[r]
        return out

    x = np.arange(5 * 8 * 8, dtype=np.float32).reshape(5, 8, 8)  # [N, H, C]: 256 bytes a row, four lines
    before = x.copy()
    assert np.array_equal(gather(x, np.array([4, 0, 2])), x[4] + x[0] + x[2])
    assert np.array_equal(x, before)
    narrow = np.arange(6, dtype=np.float64).reshape(3, 2)  # rows within one line
    assert np.array_equal(gather(narrow, np.array([2])), narrow[2])
    with pytest.raises(numba.core.errors.TypingError):  # only C-contiguous arrays: their flat index is known
        gather(np.asfortranarray(narrow), np.array([1]))


def test_ahead_names_the_source_some_edges_on_and_stops_at_the_end():
    from hpstrat_lite.engine.kernels import PREFETCH_EDGES, _ahead

    ahead = numba.njit(lambda src, e, far: _ahead(src, e, far))
    src = np.arange(100, 100 + PREFETCH_EDGES + 3, dtype=np.int64)
    assert ahead(src, 0, True) == src[PREFETCH_EDGES]
    assert ahead(src, 2, True) == src[PREFETCH_EDGES + 2]
    assert ahead(src, 3, True) == -1  # past the last edge
    assert ahead(src, 0, False) == -1  # rows narrower than a cache line: no requests
