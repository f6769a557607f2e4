"""Node features at the API boundary (dense, as PyG's loaders give them) and inside the engine (sparse).

A graph returned by :func:`hpstrat_lite.load_dataset`, :func:`hpstrat_lite.data.graphs.load_graph` or
:func:`hpstrat_lite.data.graphs.as_graph` carries a dense, strided ``float32`` ``x``: ``F.dropout(data.x)``,
``data.x.numpy()``, ``data.x[:5]`` and PyG transforms work on it. When the features are a sparse bag of
words (:func:`hpstrat_lite.data.normalize.feature_tensor`), the dense tensor remembers its sparse CSR form
(:func:`dense_features`), and the training engine multiplies that form (:func:`engine_features`): the
same CSR tensor the engine received before features became dense, so its numbers do not change, and
no conversion is paid per call. The memory is keyed by the dense tensor's identity and its in-place
version counter: a tensor changed in place (``data.x.mul_(2)``) or replaced (``data.x = data.x / 2``)
is used as it is.
"""
from __future__ import annotations

import warnings
import weakref

import torch

_SPARSE_FORM: dict = {}  # id(dense x) -> (its _version when registered, sparse CSR form)


def dense_features(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a dense strided ``float32`` tensor; a sparse ``x`` is densified and remembered as the
    sparse form of the result (see :func:`engine_features`)."""
    if x.layout == torch.strided:
        return x
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
        dense = x.to_dense().to(torch.float32).contiguous()
    key = id(dense)
    _SPARSE_FORM[key] = (dense._version, x)
    weakref.finalize(dense, _SPARSE_FORM.pop, key, None)
    return dense


def engine_features(x: torch.Tensor) -> torch.Tensor:
    """The form of ``x`` the training engine multiplies: the sparse CSR tensor a dense ``x`` was made
    from by :func:`dense_features` (while ``x`` is unchanged), else ``x`` itself."""
    entry = _SPARSE_FORM.get(id(x))
    if entry is not None and entry[0] == x._version:
        return entry[1]
    return x
