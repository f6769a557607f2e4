"""Stage 1: graphs. Dataset loaders (raw files -> undirected simple PyG ``Data``) and synthetic benchmarks.

Needs the ``[pyg]`` extra (torch, torch_geometric); without it, importing any module here says so in one line."""
from .._extras import require

require("torch", extra="pyg")
require("torch_geometric", extra="pyg")
