"""The paper's node-classification splits as named protocols beside the book's HpStrat folds.

"Revisiting the Necessity of Graph Learning and Common Graph Benchmarks" copies its GNN numbers from
earlier papers (Section 4.1; the "other baselines" paragraph of Section 7): Table 1's from Shchur et al.
(2018) via Liu et al. (2020), on 20 training / 30 validation nodes per class; Table 2's from papers on
the public Planetoid split of Yang et al. (2016). It does not state the split of its own tuned MLP.
:data:`NODE_PROTOCOLS` names the split each dataset's copied GNN numbers come from;
:func:`with_public_split` attaches the public Planetoid masks to a loaded graph (the loader drops them),
:func:`per_class_split_masks` draws the 20 / 30-per-class split, :func:`study_sampler_seed` gives every
(dataset, model) a TPE sampler seed of its own, and :func:`hpstrat_lite.experiments.tuning.protocol_masks`
turns either protocol into masks.
"""
from __future__ import annotations

import copy


import hashlib

import numpy as np
import torch

from ..core._validate import check_int
from ..data.datasets import _find_raw, data_root, get_spec

__all__ = ["NODE_PROTOCOLS", "PLANETOID_DATASETS", "PER_CLASS", "paper_protocol", "public_split", "with_public_split",
           "per_class_split_masks", "study_sampler_seed"]

#: Training and validation nodes per class of the ``"per_class"`` protocol (Shchur et al., 2018).
PER_CLASS = (20, 30)

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


def per_class_split_masks(y, seeds, n_train=PER_CLASS[0], n_val=PER_CLASS[1]):
    """``n_train`` training and ``n_val`` validation nodes per class, the rest test; one column per seed.

    The split of Shchur et al. (2018), "Pitfalls of Graph Neural Network Evaluation" (20 / 30 per
    class), whose GNN numbers the paper's Table 1 copies. Per seed, the nodes of every class are
    permuted with ``numpy.random.default_rng(seed)`` (one permutation of all nodes, read class by
    class); a class with fewer than ``n_train + n_val + 1`` nodes gives its first ``n_train`` to
    training, up to ``n_val`` to validation and keeps at least one for test when it can.

    Returns
    -------
    (train_mask, val_mask, test_mask) : torch.BoolTensor, each [num_nodes, len(seeds)]

    Examples
    --------
    >>> import numpy as np
    >>> tr, va, te = per_class_split_masks(np.repeat([0, 1], 60), [0])
    >>> int(tr.sum()), int(va.sum()), int(te.sum())
    (40, 60, 20)
    """
    n_train, n_val = check_int(n_train, "n_train"), check_int(n_val, "n_val")
    y = np.asarray(y.cpu() if torch.is_tensor(y) else y).reshape(-1)
    n = y.size
    masks = np.zeros((3, n, len(seeds)), dtype=bool)
    for j, s in enumerate(seeds):
        perm = np.random.default_rng(int(s)).permutation(n)
        ys = y[perm]
        for c in np.unique(y):
            nodes = perm[ys == c]
            a = min(n_train, max(nodes.size - 1, 1))
            b = min(n_val, max(nodes.size - a - 1, 0))
            masks[0, nodes[:a], j] = True
            masks[1, nodes[a:a + b], j] = True
            masks[2, nodes[a + b:], j] = True
    return tuple(torch.from_numpy(m) for m in masks)


def study_sampler_seed(dataset, model, base=0):
    """A TPE sampler seed of its own for every (dataset, model): the first 8 hex digits of
    ``sha1("<dataset>|<model>|<base>")`` as an int (stable across machines and Python versions).

    With one shared seed every study draws the same start-up configurations, so the MLP and the GCN
    of a dataset often end on the identical configuration; distinct seeds make them independent
    searches.

    Examples
    --------
    >>> study_sampler_seed("Cora", "mlp") != study_sampler_seed("Cora", "gcn")
    True
    """
    h = hashlib.sha1(f"{dataset}|{str(model).lower()}|{int(base)}".encode()).hexdigest()
    return int(h[:8], 16)
