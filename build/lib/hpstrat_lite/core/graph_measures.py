"""Label-only graph measures: how much the graph's edges say about the labels, ignoring the features.

All four are computed on the undirected simple graph (each edge once per direction, no self-loops,
duplicates counted once), with ``E`` its set of undirected edges, ``d(v)`` the degree of node ``v``,
``y`` the labels in ``0..C-1`` and ``D_c = sum_{v: y_v = c} d(v)`` the total degree of class ``c``:

- edge homophily (Zhu et al., 2020): the share of edges joining two nodes of one class;
- node homophily (Pei et al., 2020): the mean over non-isolated nodes of
  :func:`hpstrat_lite.core.homophily.node_homophily`;
- adjusted homophily and label informativeness (Platonov et al., *Characterizing graph datasets for node
  classification: homophily-heterophily dichotomy and beyond*, NeurIPS 2023, Sections 3 and 4): edge
  homophily corrected for the share of same-class edges expected from the classes' degrees alone, and the
  information a neighbour's label gives about a node's label.

numpy only, vectorised (one unique-sort of the edge keys, bincounts).
"""
from __future__ import annotations

import numpy as np

from ._validate import check_choice, check_int, check_labels, to_numpy
from .homophily import mean_homophily, node_homophily_of_pairs, simple_undirected_pairs

LABEL_MEASURES = ("edge_homophily", "node_homophily", "adjusted_homophily", "label_informativeness")
"""The measures :func:`label_measures` returns, in order."""

HOMOPHILY_METHODS = ("edge", "node", "edge_insensitive", "adjusted", "label_informativeness")
"""The ``method`` values of :func:`homophily`."""


def _checked(edge_index, y, num_nodes):
    n = len(to_numpy(y)) if num_nodes is None else num_nodes
    n = check_int(n, "num_nodes", 1)
    labels = check_labels(y, n)
    a, b = simple_undirected_pairs(edge_index, n)
    return labels, a, b


def edge_homophily(edge_index, y, num_nodes: int | None = None) -> float:
    """Edge homophily: the share of the graph's edges whose two ends have one label.

    .. math:: h_{edge} = \\frac{|\\{\\{u, v\\} \\in E : y_u = y_v\\}|}{|E|}

    NaN for a graph without edges.

    Examples
    --------
    >>> edge_homophily([[0, 1, 2], [1, 2, 3]], [0, 0, 1, 1])
    0.6666666666666666
    """
    labels, a, b = _checked(edge_index, y, num_nodes)
    return float(np.mean(labels[a] == labels[b])) if a.size else float("nan")


def _degree_shares(labels, a, b) -> np.ndarray:
    """``p_c = D_c / (2 |E|)``: class ``c``'s share of the edge ends."""
    c = int(labels.max()) + 1
    ends = np.concatenate([labels[a], labels[b]])
    return np.bincount(ends, minlength=c) / ends.size


def adjusted_homophily(edge_index, y, num_nodes: int | None = None) -> float:
    """Adjusted (class-adjusted) homophily of Platonov et al. (2023), Section 3.

    .. math:: h_{adj} = \\frac{h_{edge} - \\sum_{c} p_c^2}{1 - \\sum_{c} p_c^2}, \\qquad
              p_c = \\frac{D_c}{2|E|}

    where :math:`\\sum_c p_c^2` is the edge homophily expected when edges join ends drawn independently
    in proportion to the classes' degrees (the configuration model). 0 means no more same-class edges
    than chance, 1 only same-class edges, negative values fewer than chance. NaN without edges or when
    every edge end has one class.

    Examples
    --------
    Two classes of equal degree, half of the edges within a class: chance level, 0.

    >>> adjusted_homophily([[0, 1, 2, 3], [1, 2, 3, 0]], [0, 0, 1, 1])
    0.0
    """
    labels, a, b = _checked(edge_index, y, num_nodes)
    if not a.size:
        return float("nan")
    p = _degree_shares(labels, a, b)
    chance = float(np.sum(p ** 2))
    if chance >= 1.0:
        return float("nan")
    return (float(np.mean(labels[a] == labels[b])) - chance) / (1.0 - chance)


def label_informativeness(edge_index, y, num_nodes: int | None = None) -> float:
    """Edge label informativeness of Platonov et al. (2023), Section 4.

    Take a uniformly random edge and a random direction on it, ``(xi, eta)``; the labels ``y_xi`` and
    ``y_eta`` have the joint law :math:`p_{c_1 c_2} = |\\{(u, v): \\{u, v\\} \\in E, y_u = c_1, y_v = c_2\\}| / (2|E|)`
    (both directions of each edge counted) and the marginal :math:`p_c = D_c / (2|E|)`. Label informativeness
    is the share of the uncertainty of a node's label that its neighbour's label removes:

    .. math:: LI = \\frac{I(y_\\xi, y_\\eta)}{H(y_\\xi)}
                 = 2 - \\frac{\\sum_{c_1, c_2} p_{c_1 c_2} \\log p_{c_1 c_2}}{\\sum_c p_c \\log p_c}

    In [0, 1]: 1 when a neighbour's label determines the node's (perfect homophily, or a perfect
    bipartite pattern), 0 when labels are independent along edges. NaN without edges or with one class
    among the edge ends.

    Examples
    --------
    A bipartite graph whose edges all join class 0 to class 1: a neighbour's label tells the node's.

    >>> label_informativeness([[0, 0, 1, 1], [2, 3, 2, 3]], [0, 0, 1, 1])
    1.0
    """
    labels, a, b = _checked(edge_index, y, num_nodes)
    if not a.size:
        return float("nan")
    c = int(labels.max()) + 1
    src = np.concatenate([labels[a], labels[b]])
    dst = np.concatenate([labels[b], labels[a]])
    joint = np.bincount(src * c + dst, minlength=c * c) / src.size
    marginal = np.bincount(src, minlength=c) / src.size
    h_marginal = -np.sum(marginal[marginal > 0] * np.log(marginal[marginal > 0]))
    if h_marginal <= 0:
        return float("nan")
    h_joint = -np.sum(joint[joint > 0] * np.log(joint[joint > 0]))
    return float(2.0 - h_joint / h_marginal)


def label_measures(edge_index, y, num_nodes: int | None = None) -> dict:
    """The four label-only measures of :data:`LABEL_MEASURES` in one dict, plus ``num_edges`` (undirected)
    and ``isolated`` (the number of nodes without neighbours, left out of node homophily)."""
    labels, a, b = _checked(edge_index, y, num_nodes)
    n = labels.shape[0]
    pairs = np.stack([a, b])
    h = node_homophily_of_pairs(labels, a, b)
    return {"edge_homophily": edge_homophily(pairs, labels, n), "node_homophily": mean_homophily(h),
            "adjusted_homophily": adjusted_homophily(pairs, labels, n),
            "label_informativeness": label_informativeness(pairs, labels, n),
            "num_edges": int(a.size), "isolated": int(np.isnan(h).sum())}


def _insensitive(labels, a, b) -> float:
    """Class-insensitive edge homophily from checked labels and the undirected simple edges."""
    c = int(labels.max()) + 1
    if c < 2:
        return float("nan")
    eq = (labels[a] == labels[b]).astype(np.float64)
    ends = np.concatenate([labels[a], labels[b]])  # each edge end: its node's class
    same = np.bincount(ends, weights=np.concatenate([eq, eq]), minlength=c)
    total = np.bincount(ends, minlength=c)
    h_c = np.divide(same, total, out=np.zeros(c), where=total > 0)
    share = np.bincount(labels, minlength=c) / labels.size
    return float(np.clip(h_c - share, 0, None).sum() / (c - 1))


def homophily(edge_index, y, num_nodes: int | None = None, *, method: str = "edge") -> float:
    """The homophily of a graph, one number, by ``method`` (PyG's ``torch_geometric.utils.homophily``, on the
    undirected simple graph: self-loops dropped, each edge once per direction, duplicates counted once).

    - ``"edge"`` (Zhu et al., *Beyond homophily in graph neural networks*, NeurIPS 2020): the share of edges
      joining two nodes of one class, :math:`\\frac{|\\{(u, v) \\in E : y_u = y_v\\}|}{|E|}`
      (:func:`edge_homophily`);
    - ``"node"`` (Pei et al., *Geom-GCN*, ICLR 2020): the mean over nodes of
      :math:`\\frac{|\\{u \\in N(v) : y_u = y_v\\}|}{|N(v)|}`
      (:func:`hpstrat_lite.core.homophily.node_homophily`); isolated nodes are left out (PyG counts them as 0);
    - ``"edge_insensitive"`` (Lim et al., *Large scale learning on non-homophilous graphs*, NeurIPS 2021):
      :math:`\\frac{1}{C - 1} \\sum_{k} \\max(0, h_k - \\frac{|C_k|}{n})`, :math:`h_k` the edge homophily
      of the edge ends in class :math:`k`, so that a class's own share is not rewarded;
    - ``"adjusted"`` (Platonov et al., NeurIPS 2023): edge homophily corrected for chance
      (:func:`adjusted_homophily`);
    - ``"label_informativeness"`` (Platonov et al., 2023): :func:`label_informativeness`.

    NaN where a measure is undefined (no edges, one class, every node isolated).

    Examples
    --------
    >>> edge_index = [[0, 1, 2, 3], [1, 2, 0, 4]]
    >>> y = [0, 0, 1, 1, 1]
    >>> homophily(edge_index, y, method="edge")
    0.5
    >>> round(homophily(edge_index, y, method="node"), 4)  # (1/2 + 1/2 + 0 + 1 + 1) / 5
    0.6
    >>> round(homophily(edge_index, y, method="edge_insensitive"), 4)
    0.1
    """
    check_choice(method, "method", HOMOPHILY_METHODS)
    labels, a, b = _checked(edge_index, y, num_nodes)
    if method == "node":
        return mean_homophily(node_homophily_of_pairs(labels, a, b))
    if method == "edge_insensitive":
        return _insensitive(labels, a, b)
    pairs = np.stack([a, b])
    return {"edge": edge_homophily, "adjusted": adjusted_homophily,
            "label_informativeness": label_informativeness}[method](pairs, labels, labels.shape[0])
