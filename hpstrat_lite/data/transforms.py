"""PyTorch Geometric transforms: HpStrat k-fold masks written into a ``Data`` object."""
from __future__ import annotations

import torch
from torch_geometric.data import Data
from torch_geometric.data.datapipes import functional_transform
from torch_geometric.transforms import BaseTransform

from ..core._validate import check_k, check_n_bins, check_seed
from ..core.folds import fold_masks, hpstrat_folds
from ..core.homophily import node_homophily


@functional_transform("hpstrat_split")
class HpStratSplit(BaseTransform):
    """PyTorch Geometric transform writing HpStrat k-fold masks into a ``Data`` object.

    Sets ``train_mask``, ``val_mask``, ``test_mask`` of shape ``[num_nodes, k]`` (the layout of PyG's
    multi-split datasets such as ``WebKB``): column i is round i (test fold i, validation fold
    (i + 1) mod k, train the rest), plus ``fold`` (the fold id of each node) and ``homophily``.

    Examples
    --------
    >>> import torch
    >>> from torch_geometric.data import Data
    >>> data = Data(edge_index=torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]]), y=torch.tensor([0, 0, 1, 1]),
    ...             num_nodes=4)
    >>> HpStratSplit(k=3, seed=0)(data).train_mask.shape
    torch.Size([4, 3])
    """

    def __init__(self, *, k: int = 4, n_bins: int = 10, seed: int = 0):
        check_k(k, None)
        self.k, self.n_bins, self.seed = int(k), check_n_bins(n_bins), seed
        check_seed(seed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self.k}, n_bins={self.n_bins}, seed={self.seed})"

    def forward(self, data: Data) -> Data:
        if getattr(data, "y", None) is None:
            raise ValueError("HpStratSplit needs node labels: data.y is None (folds are stratified by class).")
        y = data.y.view(-1)
        h = node_homophily(data.edge_index, y, data.num_nodes)
        folds = hpstrat_folds(h, y, k=self.k, n_bins=self.n_bins, seed=self.seed)
        data.train_mask, data.val_mask, data.test_mask = fold_masks(folds, k=self.k)
        data.fold = torch.as_tensor(folds)
        data.homophily = torch.as_tensor(h, dtype=torch.float)
        return data
