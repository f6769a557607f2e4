"""The training engine: R runs of one (dataset, model) trained as one batched model.

``operators`` (sparse graph operators), ``randomness`` (per-run generators), ``models`` (the eight
batched architectures), ``kernels`` (numba kernels for CPU), ``train`` (the training loop with early
stopping). Link prediction (Part II's encoders and decoders) lives beside the book, in ``hpstrat_book.part2``.

Needs the ``[pyg]`` extra (torch, torch_geometric); without it, importing any module here says so in one line.
"""
from .._extras import require

require("torch", extra="pyg")
require("torch_geometric", extra="pyg")
