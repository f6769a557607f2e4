"""The paper's node-classification splits as named protocols beside the book's HpStrat folds.

"Revisiting the Necessity of Graph Learning and Common Graph Benchmarks" copies its GNN numbers from
earlier papers (Section 4.1; the "other baselines" paragraph of Section 7): Table 1's from Shchur et al.
(2018) via Liu et al. (2020), on 20 training / 30 validation nodes per class; Table 2's from papers on
the public Planetoid split of Yang et al. (2016). It does not state the split of its own tuned MLP.
:data:`NODE_PROTOCOLS` names the split each dataset's copied GNN numbers come from;
:func:`with_public_split` attaches the public Planetoid masks to a loaded graph (the loader drops them),
:func:`per_class_split_masks` draws the 20 / 30-per-class split, :func:`study_sampler_seed` gives every
(dataset, model) a TPE sampler seed of its own, and :func:`protocol_masks`
turns either protocol into masks.
"""
from __future__ import annotations

import copy
import hashlib

import numpy as np
import torch

from hpstrat_lite.core._validate import check_choice, check_int
from hpstrat_lite.core.folds import fold_masks, hpstrat_folds
from hpstrat_lite.core.homophily import node_homophily
from hpstrat_lite.data.datasets import _find_raw, data_root, get_spec
from .plan import NODE_PROTOCOLS

__all__ = ["PROTOCOLS", "random_split_masks", "protocol_masks", "NODE_PROTOCOLS", "PLANETOID_DATASETS", "PER_CLASS", "paper_protocol", "public_split", "with_public_split",
           "per_class_split_masks", "study_sampler_seed"]

#: Split protocols of the node-classification studies: HpStrat k-fold rounds (the book's), a random
#: 60/20/20 split, 20 / 30 nodes per class (Shchur et al., 2018) and the public Planetoid split.
PROTOCOLS = ("hpstrat", "random", "per_class", "planetoid")

#: Training and validation nodes per class of the ``"per_class"`` protocol (Shchur et al., 2018).
PER_CLASS = (20, 30)

#: Datasets with a public Planetoid split (``ind.<name>.*`` raw files).
PLANETOID_DATASETS = ("Cora", "CiteSeer", "PubMed")
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


def per_class_split_masks(y, seeds, *, n_train=PER_CLASS[0], n_val=PER_CLASS[1]):
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


def study_sampler_seed(dataset, model, *, base=0):
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



def random_split_masks(num_nodes, seeds, *, ratios=(0.6, 0.2, 0.2)):
    """Random train/validation/test masks, one column per seed.

    Node order is permuted with ``numpy.random.default_rng(seed)``; the first
    ``round(ratios[0] * N)`` nodes train, the next ``round(ratios[1] * N)`` validate, the rest test.

    Returns
    -------
    (train_mask, val_mask, test_mask) : torch.BoolTensor, each [num_nodes, len(seeds)]
    """
    n = int(num_nodes)
    if len(ratios) != 3 or min(ratios) <= 0 or abs(sum(ratios) - 1) > 1e-9:
        raise ValueError(f"ratios must be three positive fractions summing to 1, got {ratios!r}")
    n_tr, n_va = int(round(ratios[0] * n)), int(round(ratios[1] * n))
    if n_tr < 1 or n_va < 1 or n - n_tr - n_va < 1:
        raise ValueError(f"num_nodes={n} is too small for ratios {ratios}: every split needs a node")
    masks = np.zeros((3, n, len(seeds)), dtype=bool)
    for j, s in enumerate(seeds):  # one permutation per run, not per node
        perm = np.random.default_rng(s).permutation(n)
        masks[0, perm[:n_tr], j] = True
        masks[1, perm[n_tr:n_tr + n_va], j] = True
        masks[2, perm[n_tr + n_va:], j] = True
    return tuple(torch.from_numpy(m) for m in masks)


def protocol_masks(data, *, protocol="hpstrat", seeds=(0,), k=5, n_bins=10):
    """Masks of every round of every seed under a split protocol.

    Parameters
    ----------
    data : torch_geometric.data.Data
        Graph with ``edge_index`` and labels ``y``.
    protocol : {"hpstrat", "random", "per_class", "planetoid"}
        HpStrat k-fold rounds (``k`` runs per seed), a random 60/20/20 split, 20 / 30 nodes per class
        or the fixed public Planetoid split (one run per seed; see the module docstring).
    seeds : sequence of int
        Seeds of the folds / splits.
    k, n_bins : int
        Folds and homophily bins of the HpStrat protocol.

    Returns
    -------
    train_mask, val_mask, test_mask : torch.BoolTensor [N, R]
    run_seed, run_round : numpy.ndarray [R]
        The seed and the round (0 for random splits) of each column.
    """
    check_choice(protocol, "protocol", PROTOCOLS)
    n = int(data.num_nodes)
    seeds = [int(s) for s in seeds]
    if protocol == "random":
        tr, va, te = random_split_masks(n, seeds)
        return tr, va, te, np.array(seeds), np.zeros(len(seeds), dtype=np.int64)
    if protocol == "per_class":
        tr, va, te = per_class_split_masks(data.y, seeds)
        return tr, va, te, np.array(seeds), np.zeros(len(seeds), dtype=np.int64)
    if protocol == "planetoid":
        fixed = [getattr(data, m, None) for m in ("train_mask", "val_mask", "test_mask")]
        if any(m is None for m in fixed):
            raise ValueError("protocol='planetoid' needs data.train_mask, data.val_mask and data.test_mask "
                             "(the public split; see hpstrat_book.part2.protocols.with_public_split)")
        tr, va, te = (m.reshape(-1, 1).bool().repeat(1, len(seeds)) for m in fixed)
        return tr, va, te, np.array(seeds), np.zeros(len(seeds), dtype=np.int64)
    h = node_homophily(data.edge_index, data.y, n)
    parts = [fold_masks(hpstrat_folds(h, data.y, k=k, n_bins=n_bins, seed=s), k=k) for s in seeds]
    tr, va, te = (torch.cat([p[i] for p in parts], dim=1) for i in range(3))
    return tr, va, te, np.repeat(seeds, k), np.tile(np.arange(k), len(seeds))
