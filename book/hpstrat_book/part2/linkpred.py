"""Link prediction: edge split, MLP / GCN encoders, dot-product or MLP decoder, ROC AUC.

Part II of the book ("Revisiting the Necessity of Graph Learning and Common Graph Benchmarks",
Katsman, Lou and Gilbert, 2024, Sections 5-6) scores link prediction on WS1000, WS1000_gamma and
the MUSAE Twitch / Facebook graphs. The protocol implemented here:

1. :func:`edge_split` splits the undirected edges (each once) into train / validation / test
   positives (default 70 / 10 / 20 %), and draws for each split an equal number of negative pairs:
   node pairs that are not edges of the *full* graph, no self-loops, no pair twice (within or
   across splits). The message-passing graph holds the training edges only, in both directions,
   so no validation or test edge is ever propagated over.
2. An encoder maps nodes to embeddings ``z``: an MLP on the features alone, or a GCN
   (Kipf and Welling, 2017) on the message-passing graph,
   ``H^{l+1} = D^{-1/2} (A + I) D^{-1/2} H^l W^l`` with ReLU between layers.
3. A decoder scores a pair: the dot product ``s(u, v) = z_u . z_v``, an MLP on ``z_u * z_v``, or
   the Fermi-Dirac distance decoder of HGCN (Chami et al., 2019), ``p(u, v) = 1 / (exp((d^2 - r) / t)
   + 1)`` with ``d^2 = ||z_u - z_v||^2``, ``r = 2``, ``t = 1`` (its logit is ``(r - d^2) / t``).
4. Training minimises binary cross-entropy on the training positives and as many negatives,
   sampled afresh every epoch (seeded) among the non-edges of the training graph. Early stopping
   on validation ROC AUC; the test ROC AUC (``sklearn.metrics.roc_auc_score``) is measured once,
   with the weights of the best validation epoch.

A ``random`` baseline scores every pair uniformly at random (ROC AUC about 0.5).

The training protocol is a :class:`hpstrat_lite.protocol.Protocol`; :data:`LINK_PROTOCOL` is the default of
one untuned link predictor (the tuned studies draw ``lr``, ``hidden``... per trial,
:mod:`hpstrat_book.part2.tuning`). The edge split fractions are an :class:`EdgeSplit`.

The HGCN-style pipeline that the paper's supplementary code builds on (its sweep file lives in
``graphdatasets_hgcn/``, paper Appendix C) is :data:`HGCN_SPLIT` (85 / 5 / 10 edge split), the
``"fd"`` decoder and, optionally, HGCN's default feature normalisation ``"signed_rowsum"``: every
row divided by its *signed* sum (``x / sum(x)``; a row summing to 0 stays as it is), which flips
the sign of rows with a negative sum and blows up rows whose sum is near 0 (real-valued Gaussian
features such as WS1000's). Trivial baselines that need no training (:func:`feature_cosine_scores`,
:func:`degree_product_scores`) and the feature-row permutation of the shuffled-feature control
(:func:`shuffle_feature_rows`) live here too.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Mapping

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score

from hpstrat_lite.core._validate import check_choice, check_int, check_real, check_training_fields
from hpstrat_lite.core.homophily import simple_undirected_pairs
from hpstrat_lite.protocol import Execution, Protocol, check_protocol_value
from hpstrat_lite.engine.train import Features, reuse_freed_memory, reuse_freed_memory_applies
from hpstrat_lite.engine.operators import gcn_operator

__all__ = [
    "ENCODERS",
    "DECODERS",
    "FEATURE_NORMS",
    "edge_split",
    "sample_negative_pairs",
    "gcn_adjacency",
    "LinkEncoder",
    "EdgeSplit",
    "LINK_PROTOCOL",
    "run_link_prediction",
    "HGCN_SPLIT",
    "signed_rowsum",
    "shuffle_feature_rows",
    "feature_cosine_scores",
    "degree_product_scores",
    "pair_auc",
]

ENCODERS = ("gcn", "mlp", "random")
DECODERS = ("dot", "mlp", "fd")
FEATURE_NORMS = (None, "none", "row", "standard", "signed_rowsum")


@dataclasses.dataclass(frozen=True)
class EdgeSplit:
    """The fractions of an edge split (:func:`edge_split`): validation and test, the rest trains.

    The default is the book's 70 / 10 / 20 split of Part II's link studies (chapters 8 and 9; the paper's
    Sections 5-6 do not state theirs). :attr:`name` is how result rows record it.

    >>> EdgeSplit().name, HGCN_SPLIT.name
    ('edge split 70/10/20', 'edge split 85/5/10')
    """

    val_ratio: float = 0.1
    test_ratio: float = 0.2

    @property
    def name(self) -> str:
        """``"edge split <train>/<val>/<test>"`` in percent, the ``protocol`` column of the link rows."""
        train = round(100 * (1 - self.val_ratio - self.test_ratio))
        return f"edge split {train}/{round(100 * self.val_ratio)}/{round(100 * self.test_ratio)}"


#: Edge split of HGCN's link-prediction pipeline (paper Appendix C's ``graphdatasets_hgcn/``): 85 / 5 / 10.
HGCN_SPLIT = EdgeSplit(val_ratio=0.05, test_ratio=0.1)
#: Training protocol of one link predictor when none is given: Adam with learning rate 1e-3 and no weight
#: decay, 128 hidden channels, 2 layers, no dropout, at most 1000 epochs with early stopping after 100
#: epochs without a higher validation ROC AUC (``k`` and ``n_bins`` do not apply). The paper states no fixed
#: protocol for its link predictors (Sections 5-6 and Appendix C: Bayesian sweeps); the tuned studies replace
#: these values by each trial's draw.
LINK_PROTOCOL = Protocol(lr=0.001, weight_decay=0.0, hidden=128, dropout=0.0)
#: Fermi-Dirac decoder constants of HGCN (``r``, ``t``).
FD_R, FD_T = 2.0, 1.0

# below this many candidate pairs, negatives are drawn from the enumerated non-edges
_ENUMERATE_PAIRS = 2_000_000


def _num_nodes(data):
    n = data.num_nodes
    if n is None:
        raise ValueError("data.num_nodes is None; the graph needs a node count")
    return int(n)


def _pair_keys(u, v, n):
    return np.minimum(u, v).astype(np.int64) * np.int64(n) + np.maximum(u, v)


def sample_negative_pairs(exclude_keys, num_nodes, num, rng):
    """Draw ``num`` distinct node pairs ``u < v`` that are not in ``exclude_keys``.

    Pairs are uniform over the allowed pairs (no self-loops). ``exclude_keys`` are the sorted,
    unique keys ``u * num_nodes + v`` (``u < v``) of the pairs to avoid. Small graphs
    (``num_nodes * (num_nodes - 1) / 2 <= 2e6`` candidate pairs) draw without replacement from the
    enumerated allowed pairs when those are few (excluded plus wanted above a quarter of all
    pairs); otherwise vectorised rejection sampling.

    Parameters
    ----------
    exclude_keys : numpy.ndarray of int64, sorted and unique
    num_nodes : int
    num : int
        Number of pairs wanted.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64, shape [2, num]
        Rows ``u`` and ``v`` with ``u < v``.
    """
    n = int(num_nodes)
    total = n * (n - 1) // 2
    available = total - exclude_keys.size
    if num > available:
        raise ValueError(
            f"cannot draw {num} negative pairs: the graph with num_nodes={n} has only {available} "
            f"node pairs that are not edges"
        )
    if num == 0:
        return np.zeros((2, 0), dtype=np.int64)
    if total <= _ENUMERATE_PAIRS and exclude_keys.size + num > total // 4:
        a, b = np.triu_indices(n, 1)
        keys = a.astype(np.int64) * n + b
        keys = keys[~np.isin(keys, exclude_keys, assume_unique=True)]
        chosen = rng.choice(keys, size=num, replace=False)
    else:
        chosen = np.zeros(0, dtype=np.int64)
        while chosen.size < num:
            m = 2 * (num - chosen.size) + 64
            u = rng.integers(0, n, size=m)
            v = rng.integers(0, n, size=m)
            keys = _pair_keys(u, v, n)[u != v]
            pos = np.searchsorted(exclude_keys, keys).clip(max=max(exclude_keys.size - 1, 0))
            if exclude_keys.size:
                keys = keys[exclude_keys[pos] != keys]
            keys = np.concatenate([chosen, keys])
            _, first = np.unique(keys, return_index=True)
            chosen = keys[np.sort(first)][:num]
    return np.stack([chosen // n, chosen % n])


def edge_split(edge_index, num_nodes, *, val_ratio=0.1, test_ratio=0.2, seed=0):
    """Split the undirected edges into train / validation / test positives and negatives.

    Each undirected edge counts once (self-loops and duplicates dropped). A seeded permutation
    gives ``floor(test_ratio * E)`` test edges, ``floor(val_ratio * E)`` validation edges and the
    rest for training. Every split gets as many negative pairs as it has positives: pairs
    ``u < v`` that are not edges of the full graph, no self-loops, all distinct across the three
    splits. The message-passing graph ``train_edge_index`` holds the training edges only, in both
    directions, sorted by (source, target).

    Parameters
    ----------
    edge_index : array-like or torch.Tensor, shape [2, E]
        Edges of the graph (read as undirected).
    num_nodes : int
        Number of nodes.
    val_ratio, test_ratio : float
        Fractions of the undirected edges for validation and test, each in (0, 1) with
        ``val_ratio + test_ratio < 1``.
    seed : int or numpy.random.Generator
        Seed of the permutation and of the negatives.

    Returns
    -------
    dict
        ``train_pos``, ``val_pos``, ``test_pos``, ``train_neg``, ``val_neg``, ``test_neg``:
        LongTensors of shape [2, m] with ``u < v``; ``train_edge_index``: LongTensor
        [2, 2 * |train_pos|]; ``num_nodes``.

    Examples
    --------
    >>> from hpstrat_lite.data.synthetic import watts_strogatz_graph
    >>> s = edge_split(watts_strogatz_graph(100, k=4, beta=0.5), 100)
    >>> s["train_pos"].shape[1], s["val_pos"].shape[1], s["test_pos"].shape[1]
    (140, 20, 40)
    """
    n = check_int(num_nodes, "num_nodes", 2)
    for name, r in (("val_ratio", val_ratio), ("test_ratio", test_ratio)):
        check_real(r, name, 0.0, 1.0, low_open=True, high_open=True)
    if val_ratio + test_ratio >= 1.0:
        raise ValueError(
            f"val_ratio + test_ratio must be < 1 to leave training edges, got "
            f"{val_ratio} + {test_ratio} = {val_ratio + test_ratio}"
        )
    rng = np.random.default_rng(seed)
    a, b = simple_undirected_pairs(edge_index, n)
    m = a.size
    n_test = int(np.floor(test_ratio * m))
    n_val = int(np.floor(val_ratio * m))
    n_train = m - n_val - n_test
    if min(n_test, n_val, n_train) < 1:
        raise ValueError(
            f"edge_index has {m} undirected edges: too few for val_ratio={val_ratio}, "
            f"test_ratio={test_ratio} (each split needs at least one edge)"
        )
    perm = rng.permutation(m)
    parts = np.split(perm, [n_test, n_test + n_val])
    test_i, val_i, train_i = parts
    edge_keys = a * np.int64(n) + b  # sorted and unique
    neg = sample_negative_pairs(edge_keys, n, n_train + n_val + n_test, rng)

    def pairs(idx):
        sel = np.sort(idx)
        return torch.from_numpy(np.stack([a[sel], b[sel]]))

    train_pos = pairs(train_i)
    src = torch.cat([train_pos[0], train_pos[1]])
    dst = torch.cat([train_pos[1], train_pos[0]])
    order = torch.from_numpy(np.lexsort((dst.numpy(), src.numpy())))
    return {
        "train_pos": train_pos,
        "val_pos": pairs(val_i),
        "test_pos": pairs(test_i),
        "train_neg": torch.from_numpy(neg[:, :n_train].copy()),
        "val_neg": torch.from_numpy(neg[:, n_train:n_train + n_val].copy()),
        "test_neg": torch.from_numpy(neg[:, n_train + n_val:].copy()),
        "train_edge_index": torch.stack([src[order], dst[order]]),
        "num_nodes": n,
    }


def _check_feature_norm(how):
    check_choice(how, "feature_norm", FEATURE_NORMS)
    return None if how == "none" else how


def gcn_adjacency(edge_index, num_nodes, *, device="cpu"):
    """Symmetric GCN propagation matrix ``D^{-1/2} (A + I) D^{-1/2}`` of the message-passing graph: the
    Part I models' operator (:func:`hpstrat_lite.engine.models.gcn_operator`, a
    :class:`~hpstrat_lite.engine.models.SparseOp`).

    ``edge_index`` should hold every undirected edge in both directions and no self-loops
    (the message-passing graph of :func:`edge_split`); the self-loops are added here.
    """
    from torch_geometric.data import Data

    return gcn_operator(Data(edge_index=edge_index, num_nodes=int(num_nodes)), device)


class LinkEncoder(torch.nn.Module):
    """MLP or GCN node encoder with a dot-product or MLP pair decoder.

    Layer widths ``in -> hidden -> ... -> hidden -> out`` (``num_layers`` linear maps), ReLU and
    dropout between layers (not on the input, which may be sparse). ``kind="gcn"`` multiplies
    every layer's output by the propagation matrix ``adj`` (see :func:`gcn_adjacency`);
    ``kind="mlp"`` ignores the graph. ``decoder="fd"`` scores a pair by the Fermi-Dirac logit
    ``(r - ||z_u - z_v||^2) / t`` (HGCN). The input is a :class:`~hpstrat_lite.engine.train.Features` (normalised,
    possibly sparse features), whose ``project`` computes the first product.
    """

    def __init__(self, in_dim, hidden=128, out=64, num_layers=2, dropout=0.0, kind="gcn",
                 decoder="dot"):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out]
        self.lins = torch.nn.ModuleList(
            torch.nn.Linear(dims[i], dims[i + 1]) for i in range(num_layers)
        )
        self.kind = kind
        self.dropout = dropout
        self.decoder = decoder
        if decoder == "mlp":
            self.dec = torch.nn.Sequential(
                torch.nn.Linear(out, out), torch.nn.ReLU(), torch.nn.Linear(out, 1)
            )

    def encode(self, feats, adj=None):
        h = None
        for i, lin in enumerate(self.lins):
            if i == 0:
                h = feats.project(lin.weight.t()[None])[0]  # one "run"
            else:
                h = F.dropout(F.relu(h), p=self.dropout, training=self.training)
                h = h @ lin.weight.t()
            if self.kind == "gcn":
                h = (adj @ h[None])[0]
            h = h + lin.bias
        return h

    def decode(self, z, pairs):
        if self.decoder == "fd":  # Fermi-Dirac logit (r - ||z_u - z_v||^2) / t
            d2 = (z[pairs[0]] - z[pairs[1]]).pow(2).sum(-1)
            return (FD_R - d2) / FD_T
        prod = z[pairs[0]] * z[pairs[1]]
        if self.decoder == "dot":
            return prod.sum(-1)
        return self.dec(prod).squeeze(-1)


def _auc(pos, neg):
    y = np.r_[np.ones(pos.size), np.zeros(neg.size)]
    return float(roc_auc_score(y, np.r_[pos, neg]))


def _resolve_device(device):
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def run_link_prediction(data, *, encoder: str = "gcn", decoder: str = "dot", seed: int = 0,
                        split: Mapping | EdgeSplit | None = None, split_seed: int | None = None,
                        protocol: Protocol = LINK_PROTOCOL, out: int = 64, execution: Execution | None = None,
                        history: bool = False) -> dict:
    """Train and evaluate one link predictor; ROC AUC on validation and test.

    Parameters
    ----------
    data : torch_geometric.data.Data
        Graph with ``x`` (dense or sparse CSR) and ``edge_index``.
    encoder : {"gcn", "mlp", "random"}
        GCN on the message-passing graph, MLP on the features alone, or uniform random scores (any case).
    decoder : {"dot", "mlp", "fd"}
        Dot product ``z_u . z_v``, an MLP on ``z_u * z_v`` or HGCN's Fermi-Dirac distance decoder.
    seed : int
        Seed of the weights, the dropout and the per-epoch negatives (and of the split when
        ``split_seed`` is None).
    split : dict or EdgeSplit, optional
        A split made by :func:`edge_split`, reused as it is; or the fractions of a new one
        (:class:`EdgeSplit`, default ``EdgeSplit()``: 70 / 10 / 20), drawn with ``split_seed``.
    split_seed : int, optional
        Seed of a new edge split (default: ``seed``).
    protocol : Protocol
        The training protocol (:class:`hpstrat_lite.protocol.Protocol`, default :data:`LINK_PROTOCOL`):
        ``hidden`` (hidden width) and ``num_layers`` (encoder layers, >= 1); ``dropout`` between encoder
        layers, in [0, 1); Adam's ``lr`` and ``weight_decay``; at most ``max_epochs`` full-batch epochs,
        stopping after ``patience`` epochs without a better validation ROC AUC (``None``: every epoch);
        ``feature_norm``, one of None, ``"none"``, ``"row"``, ``"standard"``, ``"signed_rowsum"``: the
        node-classification engine's preprocessing (:class:`hpstrat_lite.engine.train.Features`, the same
        code: raw, rows scaled to unit L1 norm, or columns standardised; sparse features stay sparse) or
        HGCN's default (:func:`signed_rowsum`). ``k`` and ``n_bins`` do not apply.
    out : int
        Embedding width (the encoder's last layer).
    execution : Execution, optional
        How the run trains (:class:`hpstrat_lite.protocol.Execution`); only ``device`` applies (``"auto"``:
        CUDA when available), and ``precision`` must be ``"float32"``.
    history : bool
        Also return the per-epoch training loss and validation ROC AUC (``"history"``: dict of
        lists ``loss``, ``val_auc``).

    Returns
    -------
    dict
        ``val_auc``, ``test_auc`` (at the best validation epoch), ``best_epoch``, ``epochs``
        (epochs run), ``seconds``, ``encoder``, ``decoder``, ``seed``, ``split_seed`` and the
        numbers of positive edges ``num_train``, ``num_val``, ``num_test``.

    Examples
    --------
    >>> from hpstrat_lite.data.synthetic import make_ws1000
    >>> r = run_link_prediction(make_ws1000(1.0), encoder="mlp", split=HGCN_SPLIT,
    ...                         protocol=LINK_PROTOCOL.replace(max_epochs=3), execution=Execution(device="cpu"))
    >>> r["num_train"], r["num_val"], r["num_test"], r["epochs"]
    (1700, 100, 200, 3)
    """
    protocol, execution = check_protocol_value(protocol, execution=execution)
    if execution.precision != "float32":
        raise ValueError(f"execution.precision must be 'float32' for link prediction (it trains in float32); "
                         f"got {execution.precision!r}")
    if split is None:
        split = EdgeSplit()
    if not isinstance(split, (EdgeSplit, Mapping)):
        raise ValueError(f"split must be a split made by edge_split (a dict) or an EdgeSplit (e.g. "
                         f"EdgeSplit(val_ratio=0.05, test_ratio=0.1)); got {type(split).__name__}")
    fields = check_training_fields(protocol, feature_norms=FEATURE_NORMS)
    hidden, num_layers, dropout = fields["hidden"], fields["num_layers"], fields["dropout"]
    lr, weight_decay, max_epochs, patience = (fields["lr"], fields["weight_decay"], fields["max_epochs"],
                                              fields["patience"])
    feature_norm, device = protocol.feature_norm, execution.device
    encoder = check_choice(encoder.lower() if isinstance(encoder, str) else encoder, "encoder", ENCODERS)  # "GCN" too
    check_choice(decoder, "decoder", DECODERS)
    check_int(out, "out")
    if getattr(data, "edge_index", None) is None:
        raise ValueError("data has no edge_index; link prediction needs a graph")
    if encoder != "random" and getattr(data, "x", None) is None:
        raise ValueError(f"data has no node features x; encoder={encoder!r} needs them")
    n = _num_nodes(data)
    split_seed = seed if split_seed is None else split_seed
    if isinstance(split, EdgeSplit):
        split = edge_split(data.edge_index, n, val_ratio=split.val_ratio, test_ratio=split.test_ratio,
                           seed=split_seed)
    elif split.get("num_nodes") != n:
        raise ValueError(f"split was made for num_nodes={split.get('num_nodes')}, data has {n}")
    info = {
        "encoder": encoder, "decoder": decoder, "seed": seed, "split_seed": split_seed,
        "num_train": int(split["train_pos"].shape[1]), "num_val": int(split["val_pos"].shape[1]),
        "num_test": int(split["test_pos"].shape[1]),
    }
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    if encoder == "random":
        s = {k: rng.random(split[k].shape[1]) for k in ("val_pos", "val_neg", "test_pos", "test_neg")}
        return {"val_auc": _auc(s["val_pos"], s["val_neg"]),
                "test_auc": _auc(s["test_pos"], s["test_neg"]), "best_epoch": 0, "epochs": 0,
                "seconds": time.perf_counter() - t0, **info}

    dev = _resolve_device(device)
    norm = _check_feature_norm(feature_norm)
    x = data.x
    if norm == "signed_rowsum":
        x, norm = signed_rowsum(x), None
    feats = Features(x, norm, dev)
    adj = gcn_adjacency(split["train_edge_index"], n, device=dev) if encoder == "gcn" else None
    train_pos = split["train_pos"].to(dev)
    eval_pairs = {k: split[k].to(dev) for k in ("val_pos", "val_neg", "test_pos", "test_neg")}
    tp = split["train_pos"].numpy()
    train_keys = np.sort(_pair_keys(tp[0], tp[1], n))
    n_train = tp.shape[1]
    target = torch.cat([torch.ones(n_train), torch.zeros(n_train)]).to(dev)

    fork_devices = [dev] if dev.type == "cuda" else []
    # freed activations stay mapped for the next epoch (on CPU unless Execution(reuse_freed_memory=False))
    reuse = reuse_freed_memory_applies(execution.reuse_freed_memory, dev)
    with torch.random.fork_rng(devices=fork_devices), reuse_freed_memory(reuse):
        torch.manual_seed(seed)
        model = LinkEncoder(feats.shape[1], hidden, out, num_layers, dropout, encoder, decoder).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

        def scores(keys):
            model.eval()
            with torch.no_grad():
                z = model.encode(feats, adj)
                return {k: model.decode(z, eval_pairs[k]).cpu().numpy() for k in keys}

        best_auc, best_epoch, best_state, epoch = -np.inf, 0, None, 0
        trace = {"loss": [], "val_auc": []}
        for epoch in range(1, max_epochs + 1):
            model.train()
            opt.zero_grad()
            neg = torch.from_numpy(sample_negative_pairs(train_keys, n, n_train, rng)).to(dev)
            z = model.encode(feats, adj)
            logits = torch.cat([model.decode(z, train_pos), model.decode(z, neg)])
            loss = F.binary_cross_entropy_with_logits(logits, target)
            loss.backward()
            opt.step()
            s = scores(("val_pos", "val_neg"))
            val_auc = _auc(s["val_pos"], s["val_neg"])
            trace["loss"].append(float(loss.detach()))
            trace["val_auc"].append(val_auc)
            if val_auc > best_auc:
                best_auc, best_epoch = val_auc, epoch
                best_state = copy.deepcopy(model.state_dict())
            elif patience is not None and epoch - best_epoch >= patience:
                break
        model.load_state_dict(best_state)
        s = scores(("test_pos", "test_neg"))
    result = {"val_auc": float(best_auc), "test_auc": _auc(s["test_pos"], s["test_neg"]),
              "best_epoch": best_epoch, "epochs": epoch,
              "seconds": time.perf_counter() - t0, **info}
    if history:
        result["history"] = trace
    return result


# ----------------------------------------------------------------------------------------------
# Feature transforms and trivial baselines (no training)
# ----------------------------------------------------------------------------------------------

def _dense_numpy(x):
    if torch.is_tensor(x):
        if x.layout != torch.strided:
            x = x.to_dense()
        return x.detach().cpu().numpy().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def signed_rowsum(x):
    """HGCN's default feature normalisation: each row divided by its signed sum.

    ``x[v] / sum_j x[v, j]``; a row whose sum is 0 is left as it is (HGCN sets ``1 / 0`` to 0 and
    so zeroes it; keeping it avoids erasing a node). Unlike the L1 ``"row"`` normalisation this
    flips the sign of rows with a negative sum and inflates rows whose sum is near 0.

    Returns
    -------
    torch.Tensor
        Dense float32 ``[N, d]``.

    Examples
    --------
    >>> signed_rowsum(torch.tensor([[1.0, 3.0], [1.0, -3.0]])).tolist()
    [[0.25, 0.75], [-0.5, 1.5]]
    """
    a = _dense_numpy(x)
    rs = a.sum(1, keepdims=True)
    rs[rs == 0] = 1.0
    return torch.from_numpy((a / rs).astype(np.float32))


def shuffle_feature_rows(data, seed):
    """A shallow copy of ``data`` whose feature rows are permuted across nodes (seeded).

    Node ``v`` gets the feature row of node ``perm[v]``; columns, the graph and every other
    attribute are unchanged. The control of the "feature-only" MLP in transductive link
    prediction: a unique feature row identifies its node, so an MLP can memorise the training
    edges of node ids whatever the features mean; after the permutation the rows no longer carry
    the node's own attributes, only an identity.

    Returns
    -------
    (torch_geometric.data.Data, numpy.ndarray)
        The copy and the permutation ``perm``.
    """
    n = _num_nodes(data)
    perm = np.random.default_rng(seed).permutation(n)
    out = copy.copy(data)
    x = data.x
    idx = torch.from_numpy(perm)
    if x.layout == torch.strided:
        out.x = x[idx]
    else:
        import scipy.sparse as sp

        csr = x.to_sparse_csr() if x.layout != torch.sparse_csr else x
        m = sp.csr_matrix((csr.values().numpy(), csr.col_indices().numpy(), csr.crow_indices().numpy()),
                          shape=tuple(x.shape))[perm].tocsr()
        m.sort_indices()
        out.x = torch.sparse_csr_tensor(torch.from_numpy(m.indptr).long(), torch.from_numpy(m.indices).long(),
                                        torch.from_numpy(m.data), size=m.shape, check_invariants=False)
    return out, perm


def feature_cosine_scores(x, pairs, *, feature_norm=None):
    """Untrained feature similarity of node pairs: ``cos(x_u, x_v)`` (0 where a row is all zeros).

    ``feature_norm="signed_rowsum"`` first applies :func:`signed_rowsum` (which multiplies the
    cosine by the signs of the two row sums). ``pairs``: ``[2, m]`` node ids.
    """
    if feature_norm not in (None, "none", "signed_rowsum"):
        raise ValueError(f"feature_norm must be None, 'none' or 'signed_rowsum', got {feature_norm!r}")
    import scipy.sparse as sp

    p = np.asarray(pairs)
    if torch.is_tensor(x) and x.layout != torch.strided:  # sparse bag of words: stay sparse
        csr = x.to_sparse_csr() if x.layout != torch.sparse_csr else x
        m = sp.csr_matrix((csr.values().numpy().astype(np.float64), csr.col_indices().numpy(),
                           csr.crow_indices().numpy()), shape=tuple(x.shape))
        sign = np.ones(m.shape[0])
        if feature_norm == "signed_rowsum":
            sign = np.sign(np.asarray(m.sum(1)).ravel())
            sign[sign == 0] = 1.0
        norm = np.sqrt(np.asarray(m.multiply(m).sum(1)).ravel())
        norm[norm == 0] = 1.0
        dots = np.asarray(m[p[0]].multiply(m[p[1]]).sum(1)).ravel()
        return dots * sign[p[0]] * sign[p[1]] / (norm[p[0]] * norm[p[1]])
    a = signed_rowsum(x).numpy().astype(np.float64) if feature_norm == "signed_rowsum" else _dense_numpy(x)
    norm = np.linalg.norm(a, axis=1)
    norm[norm == 0] = 1.0
    u, v = a[p[0]] / norm[p[0], None], a[p[1]] / norm[p[1], None]
    return np.sum(u * v, axis=1)


def degree_product_scores(train_pos, num_nodes, pairs):
    """Preferential-attachment score ``deg(u) * deg(v)`` on the *training* graph (``train_pos``,
    ``[2, m]`` undirected edges, each once); no feature and no held-out edge is read."""
    tp = np.asarray(train_pos)
    deg = np.bincount(tp.ravel(), minlength=int(num_nodes)).astype(np.float64)
    p = np.asarray(pairs)
    return deg[p[0]] * deg[p[1]]


def pair_auc(pos_scores, neg_scores):
    """ROC AUC of positive against negative pair scores (``sklearn.metrics.roc_auc_score``)."""
    return _auc(np.asarray(pos_scores, dtype=np.float64), np.asarray(neg_scores, dtype=np.float64))
