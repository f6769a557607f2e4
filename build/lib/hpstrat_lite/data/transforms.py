"""PyTorch Geometric transforms: HpStrat k-fold masks written into a ``Data`` object."""
from __future__ import annotations

import torch
from torch_geometric.data import Data
from torch_geometric.data.datapipes import functional_transform
from torch_geometric.transforms import BaseTransform

from ..core._validate import check_choice, check_k, check_n_bins, check_seed
from ..core.covariates import BINNINGS, covariate_folds
from ..core.folds import fold_masks, hpstrat_folds
from ..core.homophily import node_homophily


@functional_transform("hpstrat_split")
class HpStratSplit(BaseTransform):
    """PyTorch Geometric transform writing HpStrat k-fold masks into a ``Data`` object.

    Sets ``train_mask``, ``val_mask``, ``test_mask`` of shape ``[num_nodes, k]`` (the layout of PyG's
    multi-split datasets such as ``WebKB``): column i is round i (test fold i, validation fold
    (i + 1) mod k, train the rest), plus ``fold`` (the fold id of each node). By default the strata are
    (node-homophily bin, class), HpStrat (:func:`hpstrat_folds`), and ``homophily`` (float64, so that
    re-splitting from it gives the same bins) is written too; with
    ``covariate=`` they are (covariate bin, class) (:func:`hpstrat_lite.core.covariates.covariate_folds`).

    Parameters
    ----------
    k : int, default 4
        Number of folds (and of mask columns), at least 3.
    n_bins : int, default 10
        Number B of bins.
    seed : int, default 0
        Seed of the shuffle within each stratum.
    key : str, default "y"
        The attribute holding the node labels, as in PyG's ``RandomNodeSplit``.
    covariate : None, str or array-like, default None
        ``None``: the node homophily of ``data[key]`` on ``data.edge_index``. A string: the name of a node
        attribute of ``data`` (e.g. ``"degree"``); an array or tensor: one value per node.
    binning : {"uniform", "quantile"}, default "uniform"
        How the covariate is binned (:func:`hpstrat_lite.core.covariates.covariate_bins`); with
        ``covariate=None`` and ``"uniform"`` the bins are HpStrat's, equal-width on [0, 1].

    Examples
    --------
    >>> import torch
    >>> from torch_geometric.data import Data
    >>> data = Data(edge_index=torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]]), y=torch.tensor([0, 0, 1, 1]),
    ...             num_nodes=4)
    >>> HpStratSplit(k=3, seed=0)(data).train_mask.shape
    torch.Size([4, 3])
    >>> data.score = torch.tensor([0.1, 0.9, 0.2, 0.8])
    >>> HpStratSplit(k=3, n_bins=2, covariate="score")(data).fold.shape
    torch.Size([4])
    """

    def __init__(self, *, k: int = 4, n_bins: int = 10, seed: int = 0, key: str = "y", covariate=None,
                 binning: str = "uniform"):
        check_k(k, None)
        self.k, self.n_bins, self.seed = int(k), check_n_bins(n_bins), seed
        check_seed(seed)
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be the name of the attribute holding the node labels; got {key!r}.")
        if isinstance(covariate, str) and not covariate:
            raise ValueError("covariate must be None, a node attribute name or an array; got ''.")
        self.key, self.covariate, self.binning = key, covariate, check_choice(binning, "binning", BINNINGS)

    def __repr__(self) -> str:
        covariate = self.covariate if self.covariate is None or isinstance(self.covariate, str) else "<array>"
        return (f"{type(self).__name__}(k={self.k}, n_bins={self.n_bins}, seed={self.seed}, key={self.key!r}, "
                f"covariate={covariate!r}, binning={self.binning!r})")

    def forward(self, data: Data) -> Data:
        y = getattr(data, self.key, None)
        if y is None:
            raise ValueError(f"HpStratSplit needs node labels: data.{self.key} is None (key={self.key!r}; folds "
                             f"are stratified by class).")
        y = y.view(-1)
        if self.covariate is None:
            h = node_homophily(data.edge_index, y, data.num_nodes)
            data.homophily = torch.as_tensor(h)  # float64: float32 would move values across bin edges
            if self.binning == "uniform":
                folds = hpstrat_folds(h, y, k=self.k, n_bins=self.n_bins, seed=self.seed)
            else:
                folds = covariate_folds(h, y, k=self.k, n_bins=self.n_bins, binning=self.binning, seed=self.seed)
        else:
            folds = covariate_folds(self._covariate_of(data), y, k=self.k, n_bins=self.n_bins,
                                    binning=self.binning, seed=self.seed)
        data.train_mask, data.val_mask, data.test_mask = fold_masks(folds, k=self.k)
        data.fold = torch.as_tensor(folds)
        return data

    def _covariate_of(self, data: Data):
        if not isinstance(self.covariate, str):
            return self.covariate
        value = getattr(data, self.covariate, None)
        if value is None:
            raise ValueError(f"covariate={self.covariate!r} names no attribute of data; node attributes: "
                             f"{sorted(k for k in data.keys() if data.is_node_attr(k))}.")
        return value
