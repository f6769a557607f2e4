"""The paper's node-classification splits as named protocols beside the book's HpStrat folds.

"Revisiting the Necessity of Graph Learning and Common Graph Benchmarks" copies its GNN numbers from
earlier papers (Section 4.1; the "other baselines" paragraph of Section 7): Table 1's from Shchur et al.
(2018) via Liu et al. (2020), on 20 training / 30 validation nodes per class; Table 2's from papers on
the public Planetoid split of Yang et al. (2016). It does not state the split of its own tuned MLP.
:data:`NODE_PROTOCOLS` names the split each dataset's copied GNN numbers come from;
:func:`with_public_split` attaches the public Planetoid masks to a loaded graph (the loader drops them),
and :func:`hpstrat_lite.experiments.tuning.protocol_masks` turns either protocol into masks.
"""
from __future__ import annotations

import copy

import torch

from ..data.datasets import _find_raw, data_root, get_spec

__all__ = ["NODE_PROTOCOLS", "PLANETOID_DATASETS", "paper_protocol", "public_split", "with_public_split"]

#: Datasets with a public Planetoid split (``ind.<name>.*`` raw files).
PLANETOID_DATASETS = ("Cora", "CiteSeer", "PubMed")
#: The split of the GNN numbers the paper copies, per dataset: ``"per_class"`` (20 / 30 per class,
#: Shchur et al. 2018; paper Table 1) or ``"planetoid"`` (public split; paper Table 2).
NODE_PROTOCOLS = {"Computers": "per_class", "Photo": "per_class", "CS": "per_class", "Physics": "per_class",
                  "Cora": "planetoid", "CiteSeer": "planetoid", "PubMed": "planetoid"}


def paper_protocol(dataset):
    """The protocol of the GNN numbers the paper reports for ``dataset`` (:data:`NODE_PROTOCOLS`)."""
    if dataset not in NODE_PROTOCOLS:
        raise ValueError(f"dataset {dataset!r} has no paper protocol; known: {sorted(NODE_PROTOCOLS)}")
    return NODE_PROTOCOLS[dataset]


def public_split(name, root=None):
    """The public Planetoid masks of ``name`` (Cora, CiteSeer, PubMed), read from its raw files.

    PyG's reader gives the first ``20 * C`` nodes to training, the next 500 to validation and the
    1000 nodes of ``ind.<name>.test.index`` to test, in the node order of
    :func:`hpstrat_lite.load_dataset` (the same reader).

    Returns
    -------
    (train_mask, val_mask, test_mask) : torch.BoolTensor [N] each
    """
    from torch_geometric.io import read_planetoid_data

    spec = get_spec(name)
    if spec.kind != "planetoid":
        raise ValueError(f"dataset {name!r} has no public Planetoid split; allowed: {PLANETOID_DATASETS}")
    raw = _find_raw(spec, data_root(root))
    if raw is None:
        raise FileNotFoundError(f"dataset {spec.name!r}: raw files {list(spec.files)} not found under "
                                f"{data_root(root)}")
    d = read_planetoid_data(str(raw), spec.pyg_name.lower())
    return d.train_mask.bool(), d.val_mask.bool(), d.test_mask.bool()


def with_public_split(data, root=None):
    """A shallow copy of ``data`` with the public Planetoid masks as ``train_mask``, ``val_mask`` and
    ``test_mask`` (:func:`public_split` of ``data.name``)."""
    tr, va, te = public_split(data.name, root)
    if tr.numel() != int(data.num_nodes):
        raise ValueError(f"public split of {data.name!r} has {tr.numel()} nodes, data has {int(data.num_nodes)}")
    out = copy.copy(data)
    out.train_mask, out.val_mask, out.test_mask = tr, va, te
    return out
