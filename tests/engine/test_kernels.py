"""Small fused kernels of :mod:`hpstrat_lite.engine.kernels`: cache hints (no effect on any value) and the
ReLU + dropout op (the floats of the separate ops)."""
import numba
import numpy as np
import pytest
import torch


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


def test_relu_keep_gives_the_floats_of_relu_then_the_mask():
    """``relu_keep`` (one pass each way) against ``torch.relu`` then ``apply_keep_mask``: outputs and gradients
    equal bit for bit, with exact zeros, negative values and dropped entries among the inputs."""
    from hpstrat_lite.engine.kernels import apply_keep_mask, relu_keep

    gen = torch.Generator().manual_seed(0)
    z = torch.randn(3, 40, 17, generator=gen)
    z[0, :5] = 0.0  # ReLU's gradient at 0 is 0, as in PyTorch
    keep = (torch.rand(3, 40, 17, generator=gen) > 0.5).to(torch.uint8)
    upstream = torch.randn(3, 40, 17, generator=gen)
    results = []
    for op in (relu_keep, lambda t, k: apply_keep_mask(torch.relu(t), k)):
        zz = z.clone().requires_grad_()
        out = op(zz, keep)
        out.backward(upstream)
        results.append((out.detach(), zz.grad))
    (out, grad), (want_out, want_grad) = results
    assert torch.equal(out, want_out) and torch.equal(grad, want_grad)
    assert bool((grad[keep == 0] == 0).all()) and bool((grad[z <= 0] == 0).all())
