"""Does the graph help my task? Cheap estimates, without a hyperparameter sweep.

The second paper (*Revisiting the Necessity of Graph Learning and Common Graph Benchmarks*, Section 8)
asks for a way to tell whether a graph model is worth it on a dataset "without the need to sweep
hyperparameters for an MLP". :func:`necessity` answers in seconds with two kinds of estimates:

- label-only measures (:mod:`hpstrat_lite.core.graph_measures`): edge, node and adjusted homophily and
  label informativeness. They ignore the features;
- linear probes on HpStrat folds: one multinomial logistic regression (scikit-learn, the inverse
  regularisation ``C`` chosen on the validation fold) on the features alone, and the same probe on the
  features joined with what a graph model of each *family* sees:

  * **aggregation** (GCN, SGC-like): SGC's ``[X, ÂZ, Â²Z]`` with ``Â = D̃^{-1/2}(A + I)D̃^{-1/2}``
    (Wu et al., 2019);
  * **heterophily-aware** (H2GCN, GPR-GNN, MixHop-like: ego and neighbour channels with separate weights,
    several hops, Zhu et al., 2020; Abu-El-Haija et al., 2019): ``mean`` ``[X, ĀZ, s·T]``, ``hops``
    ``[X, ĀZ, Ā²Z, s·T]`` and ``compat`` ``[X, ĀY_tr, Ā²Y_tr, s·T]``, with ``Ā = D^{-1}A`` the mean over a
    node's neighbours without itself, ``Y_tr`` the one-hot training labels (so ``ĀY_tr`` is a node's row of
    the empirical class-compatibility counts) and ``T`` the structural columns ``[log(1 + d), Ā log(1 + d),
    Â 1]`` scaled by ``s =`` :data:`STRUCTURE_WEIGHT` (a handful of columns, penalised less than the
    hundreds of feature columns).

  A family's probe on a fold is its member with the best validation score; the *best of both* is the
  graph probe with the best validation score. Each family's *gain* is its probe's test score minus the
  feature probe's, per fold: the expected gap between the family's best GNN and the MLP. Label propagation
  (Zhou et al., 2004) is a graph-only baseline.

Each fold is one HpStrat round (test fold i, validation fold i + 1 mod k, training the rest), as in the
GNN experiments. On graphs under :data:`MIN_TEST_PREDICTIONS` nodes several HpStrat splits (split seeds)
are used, as the measured gaps average over split seeds (:func:`split_repeats`). The paired gain's
confidence interval across the m rounds (k folds x splits) is a Student t interval,
``mean ± t_{0.975, m-1} s / sqrt(m)``; the rounds' training sets overlap, so it is an approximation that
errs on the narrow side (Nadeau and Bengio, 2003).

The verdict (:func:`verdict`) comes from the best-of-both gain with a practical threshold
:data:`PRACTICAL_GAP`: "the graph helps" when the interval lies above 0 *and* the mean is at least the
threshold, "the graph hurts" when it lies below 0 and the mean is at most minus the threshold, "the graph
makes no practical difference" when the whole interval lies within the threshold, else "no evidence that the
graph helps". Each family gets the same rule (:meth:`GraphNeed.families`).

Cost: wide features are kept sparse for the feature probe and reduced to :data:`REDUCED_DIM` columns by a
randomised truncated SVD before they are propagated, so the propagated blocks stay small and dense.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..core._validate import check_choice, check_int, check_k, check_seed
from ..core.folds import fold_rounds, hpstrat_folds
from ..core.graph_measures import LABEL_MEASURES, label_measures
from ..core.homophily import node_homophily

METRICS = ("accuracy", "roc_auc")
FAMILIES = {"aggregation": ("sgc",), "heterophily": ("mean", "hops", "compat")}
"""The graph probes of each model family."""
FAMILY_NAMES = {"aggregation": "aggregation (GCN, SGC-like)",
                "heterophily": "heterophily-aware (H2GCN, GPR-GNN, MixHop-like)", "graph": "best of both"}
PROBES = ("features", *FAMILIES["aggregation"], *FAMILIES["heterophily"], *FAMILIES, "graph", "label_propagation")
"""Per-fold scores: the feature probe, each graph probe, each family's probe and the best of both chosen on
validation, label propagation."""
GAINS = {"probe_gain": "graph", "aggregation_gain": "aggregation", "heterophily_gain": "heterophily",
         "lp_gain": "label_propagation"}
"""Each gain estimate and the probe whose score minus the feature probe's it is (``probe_gain``: best of both)."""
FAMILY_GAINS = {"aggregation": "aggregation_gain", "heterophily": "heterophily_gain", "graph": "probe_gain"}
"""The gain estimate of each family (``graph``: the best of both)."""
ESTIMATES = LABEL_MEASURES + tuple(GAINS)
"""Every estimate :func:`necessity` returns, label-only measures first."""
VERDICTS = ("the graph helps", "no evidence that the graph helps", "the graph hurts",
            "the graph makes no practical difference")
PRACTICAL_GAP = 0.5
"""Smallest estimated gap in points (score x 100) that a verdict calls a help or a harm (:func:`verdict`):
half of the 1-point gap a measured difference needs to count (:data:`MEASURED_GAP`), because a linear probe's
gain runs below the gap of the best of several tuned GNNs (picked on its test score) on graphs where both are
small; the interval must also exclude 0."""
MEASURED_GAP = 1.0
"""Smallest measured GNN - MLP gap in points that counts as a practical difference (with p < 0.05)."""
STRUCTURE_WEIGHT = 4.0
"""Scale of the standardised structural columns in the heterophily-aware probes (their L2 penalty is
``1 / STRUCTURE_WEIGHT**2`` of a feature column's)."""
MIN_TEST_PREDICTIONS = 2000
"""Test predictions (nodes x splits) the intervals rest on at least, where :data:`MAX_REPEATS` allows."""
MAX_REPEATS = 5
"""Most HpStrat splits :func:`necessity` averages over (on graphs under :data:`MIN_TEST_PREDICTIONS` nodes)."""
PROBE_VERSION = 3
"""Version of the probes: 1 had ``sgc`` and ``hetero`` ``[X, ĀZ, Z - ĀZ]`` only and no practical threshold;
2 adds the heterophily-aware family (``mean``, ``hops``, ``compat``, structural columns) and the threshold;
3 adds the repeated splits of small graphs (:func:`split_repeats`)."""
C_GRID = (0.01, 0.1, 1.0, 10.0)
"""Inverse L2 regularisation strengths the probe tries (chosen on the validation fold)."""
LP_ALPHAS = (0.5, 0.9, 0.99)
"""Label propagation's alpha, chosen on the validation fold."""
LP_STEPS = 30
SPARSE_BELOW = 0.2
"""Features with a smaller share of non-zeros are kept sparse (the engine's threshold, ``DENSE_ABOVE``)."""
DENSE_MAX_ENTRIES = 5 * 10 ** 7
"""Denser features are made dense only up to this many entries (400 MB of float64)."""
REDUCED_DIM = 128
"""Columns of the features after the truncated SVD that precedes propagation (when they are wider)."""


def _scipy_features(x):
    """Node features as a scipy CSR matrix (under :data:`SPARSE_BELOW` non-zeros, or too large to densify) or a
    dense float64 array."""
    import scipy.sparse as sp
    import torch

    from ..data.feature_layout import engine_features

    if isinstance(x, torch.Tensor):
        x = engine_features(x)
        if x.layout == torch.sparse_csr:
            x = sp.csr_matrix((x.values().numpy().astype(np.float64), x.col_indices().numpy(),
                               x.crow_indices().numpy()), shape=tuple(x.shape))
        elif x.layout == torch.sparse_coo:
            x = x.coalesce()
            i = x.indices().numpy()
            x = sp.csr_matrix((x.values().numpy().astype(np.float64), (i[0], i[1])), shape=tuple(x.shape))
        else:
            x = x.detach().cpu().numpy()
    x = sp.csr_matrix(x, dtype=np.float64) if sp.issparse(x) else np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"data.x must be a 2-D feature matrix; got shape {x.shape}.")
    nonzero = x.nnz if sp.issparse(x) else np.count_nonzero(x)
    dense = x.size == 0 or (nonzero >= SPARSE_BELOW * x.shape[0] * x.shape[1]
                            and x.shape[0] * x.shape[1] <= DENSE_MAX_ENTRIES)
    if dense:  # a dense BLAS product is many times faster than a sparse one at this density
        return x.toarray() if sp.issparse(x) else x
    return x if sp.issparse(x) else sp.csr_matrix(x)


def adjacency(edge_index, n: int):
    """The symmetric 0/1 adjacency ``A`` (scipy CSR) of an undirected simple ``edge_index``."""
    import scipy.sparse as sp

    ei = np.asarray(edge_index)
    return sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))


def propagators(a):
    """``(Â, Ā, S)``: ``Â = D̃^{-1/2}(A + I)D̃^{-1/2}`` (SGC), ``Ā = D^{-1}A`` (neighbour mean, a zero row for
    an isolated node) and ``S = D^{-1/2} A D^{-1/2}`` (label propagation), all scipy CSR."""
    import scipy.sparse as sp

    deg = np.asarray(a.sum(1)).ravel()
    n = a.shape[0]
    dt = 1.0 / np.sqrt(deg + 1.0)
    a_hat = sp.diags(dt) @ (a + sp.identity(n, format="csr")) @ sp.diags(dt)
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    a_mean = sp.diags(inv) @ a
    inv_sqrt = np.sqrt(inv)
    return a_hat.tocsr(), a_mean.tocsr(), (sp.diags(inv_sqrt) @ a @ sp.diags(inv_sqrt)).tocsr()


def reduce_features(x, *, dim: int = REDUCED_DIM, seed=0) -> np.ndarray:
    """Dense ``[n, min(dim, F)]`` features: ``x`` itself when it has at most ``dim`` columns, else its
    projection on the top ``dim`` right singular vectors (scikit-learn's randomised ``TruncatedSVD``)."""
    import scipy.sparse as sp

    if x.shape[1] <= dim:
        return x.toarray() if sp.issparse(x) else np.asarray(x)
    from sklearn.decomposition import TruncatedSVD

    return TruncatedSVD(n_components=dim, n_iter=4, random_state=_int_seed(seed)).fit_transform(x)


def _int_seed(seed) -> int:
    return int(check_seed(seed).integers(2 ** 31 - 1)) if isinstance(seed, np.random.Generator) else int(seed)


def structure_columns(a) -> np.ndarray:
    """``[log(1 + d), Ā log(1 + d), Â 1]``: a node's log degree, its neighbours' mean log degree and the
    row sums of ``Â`` (what a symmetric normalisation tells a GCN about degrees), ``[n, 3]``."""
    a_hat, a_mean, _ = propagators(a)
    log_deg = np.log1p(np.asarray(a.sum(1)).ravel())[:, None]
    return np.hstack([log_deg, a_mean @ log_deg, a_hat @ np.ones((a.shape[0], 1))])


def _join(base, blocks, structure=None):
    """``[base, standardised blocks, STRUCTURE_WEIGHT x standardised structure]``, sparse when ``base`` is."""
    import scipy.sparse as sp
    from sklearn.preprocessing import StandardScaler

    extra = [StandardScaler().fit_transform(np.hstack(blocks))]
    if structure is not None:
        extra.append(STRUCTURE_WEIGHT * StandardScaler().fit_transform(structure))
    extra = np.hstack(extra)
    return sp.hstack([base, sp.csr_matrix(extra)], format="csr") if sp.issparse(base) else np.hstack([base, extra])


def probe_designs(x, a, *, dim: int = REDUCED_DIM, seed=0) -> dict:
    """The design matrices the probes fit, but ``compat`` (it needs a fold's training labels,
    :func:`compat_design`): ``features`` (``x``, column-scaled), ``sgc`` ``[X, ÂZ, Â²Z]``, ``mean``
    ``[X, ĀZ, s·T]`` and ``hops`` ``[X, ĀZ, Ā²Z, s·T]``, with ``Z`` the reduced features
    (:func:`reduce_features`) standardised and ``T`` :func:`structure_columns`. Sparse ``x`` stays sparse
    (the dense blocks are appended). Also ``structure`` (``T``) and ``a_mean`` (``Ā``) for
    :func:`compat_design`."""
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    a_hat, a_mean, _ = propagators(a)
    base = MaxAbsScaler().fit_transform(x)
    z = StandardScaler().fit_transform(reduce_features(x, dim=dim, seed=seed))
    a_z = a_hat @ z
    m_z = a_mean @ z
    structure = structure_columns(a)
    return {"features": base, "sgc": _join(base, [a_z, a_hat @ a_z]), "mean": _join(base, [m_z], structure),
            "hops": _join(base, [m_z, a_mean @ m_z], structure), "structure": structure, "a_mean": a_mean}


def compat_design(designs: dict, y, train) -> np.ndarray:
    """``[X, ĀY_tr, Ā²Y_tr, s·T]``: each node's share of neighbours (and of 2-hop walks) ending in a training
    node of each class: its row of the class-compatibility counts seen from the training labels only."""
    c = int(y.max()) + 1
    onehot = np.zeros((y.shape[0], c))
    onehot[train, y[train]] = 1.0
    h1 = designs["a_mean"] @ onehot
    return _join(designs["features"], [h1, designs["a_mean"] @ h1], designs["structure"])


def score(y_true, proba, metric: str) -> float:
    """Accuracy of the arg-max class, or the ROC AUC of the class-1 score (binary labels)."""
    if metric == "roc_auc":
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(y_true, proba[:, 1])) if np.unique(y_true).size == 2 else float("nan")
    return float(np.mean(proba.argmax(1) == y_true))


def fit_probe(design, y, train, val, test, *, metric: str = "accuracy", c_grid=C_GRID) -> tuple[float, float]:
    """``(validation score, test score)`` of the logistic regression whose ``C`` in ``c_grid`` has the best
    validation score; the fits run from small to large ``C``, each warm-started from the one before."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(max_iter=300, warm_start=True, tol=1e-3)
    best = (-np.inf, np.nan)
    classes = np.unique(y[train])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for c in c_grid:
            clf.set_params(C=c).fit(design[train], y[train])
            v = score(y[val], _proba(clf, design[val], classes, y), metric)
            if v > best[0]:
                best = (v, score(y[test], _proba(clf, design[test], classes, y), metric))
    return best


def _proba(clf, design, classes, y):
    """Class probabilities over all of ``y``'s classes (a class missing from training gets 0)."""
    out = np.zeros((design.shape[0], int(y.max()) + 1))
    out[:, classes] = clf.predict_proba(design)
    return out


def label_propagation(s, y, train, val, test, *, metric: str = "accuracy", alphas=LP_ALPHAS,
                      steps: int = LP_STEPS) -> tuple[float, float]:
    """Label propagation (Zhou et al., 2004): ``F <- alpha S F + (1 - alpha) Y_train`` for ``steps`` steps
    with ``S = D^{-1/2} A D^{-1/2}``; ``alpha`` in ``alphas`` chosen on validation. A node the labels do not
    reach gets the training class frequencies. Returns ``(validation score, test score)``."""
    c = int(y.max()) + 1
    seeds = np.zeros((y.shape[0], c))
    seeds[train, y[train]] = 1.0
    prior = np.bincount(y[train], minlength=c) / train.size
    best = (-np.inf, np.nan)
    for alpha in alphas:
        f = seeds.copy()
        for _ in range(steps):
            f = alpha * (s @ f) + (1 - alpha) * seeds
        total = f.sum(1, keepdims=True)
        p = np.where(total > 1e-12, f / np.maximum(total, 1e-300), prior[None, :])
        v = score(y[val], p[val], metric)
        if v > best[0]:
            best = (v, score(y[test], p[test], metric))
    return best


def t_interval(values, *, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the Student t interval ``mean ± t_{(1+level)/2, n-1} s / sqrt(n)`` (``s`` with
    ddof = 1) of paired differences; NaN bounds for fewer than two values."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (float(v.mean()) if v.size else float("nan")), float("nan"), float("nan")
    half = stats.t.ppf((1 + level) / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def verdict(mean: float, low: float, high: float, *, threshold: float = PRACTICAL_GAP) -> str:
    """One of :data:`VERDICTS` from a gain's mean and interval (points) and the practical ``threshold``:
    *helps* when ``low > 0`` and ``mean >= threshold``, *hurts* when ``high < 0`` and ``mean <= -threshold``,
    *no practical difference* when ``-threshold < low`` and ``high < threshold``, else (an interval that
    straddles 0 or is undefined) *no evidence that the graph helps*."""
    threshold = float(threshold)
    if not threshold >= 0:
        raise ValueError(f"threshold={threshold!r}: the practical threshold must be a number >= 0 (points).")
    if np.isfinite(low) and low > 0 and mean >= threshold:
        return VERDICTS[0]
    if np.isfinite(high) and high < 0 and mean <= -threshold:
        return VERDICTS[2]
    if np.isfinite(low) and np.isfinite(high) and -threshold < low and high < threshold:
        return VERDICTS[3]
    return VERDICTS[1]


def family_lines(table: pd.DataFrame, *, threshold: float = PRACTICAL_GAP) -> list[str]:
    """One line per family of :data:`FAMILY_GAINS` from an estimates table (:meth:`GraphNeed.table`, or the
    same columns read back from a CSV): "<family>: expected GNN - MLP gap +x points [lo, hi]: <verdict>"."""
    tab = table.set_index("estimate")
    lines = []
    for fam, gain in FAMILY_GAINS.items():
        if gain not in tab.index:
            continue
        r = tab.loc[gain]
        mean, low, high = float(r["value"]), float(r["low"]), float(r["high"])
        lines.append(f"{FAMILY_NAMES[fam]}: expected GNN - MLP gap {mean:+.1f} points [{low:+.1f}, {high:+.1f}]: "
                     f"{verdict(mean, low, high, threshold=threshold)}")
    return lines


def probe_scores(x, edge_index, y, folds, *, k: int, metric: str = "accuracy", seed=0,
                 dim: int = REDUCED_DIM) -> tuple[pd.DataFrame, dict]:
    """Per-fold test scores of every probe of :data:`PROBES` on the k rounds of ``folds``.

    ``folds``: one fold assignment, or a dict ``split seed -> fold assignment`` (several HpStrat splits of
    one graph). Returns ``(table, seconds)``: one row per (split, fold) (``split_seed``, ``fold``, one column
    per probe, ``<family>_choice`` and ``graph_choice``: the member chosen on validation), and the seconds
    spent preparing the designs and in each probe.
    """
    splits = folds if isinstance(folds, dict) else {seed: folds}
    t0 = time.perf_counter()
    n = y.shape[0]
    a = adjacency(edge_index, n)
    designs = probe_designs(x, a, dim=dim, seed=seed)
    s = propagators(a)[2]
    members = [p for fam in FAMILIES.values() for p in fam]
    seconds = {"designs": time.perf_counter() - t0, "features": 0.0, **{p: 0.0 for p in members},
               "label_propagation": 0.0}
    rows = []
    rounds = [(sd, i, r) for sd, f in splits.items() for i, r in enumerate(fold_rounds(f, k=k))]
    for split_seed, i, (train, val, test) in rounds:
        row, vals = {"split_seed": split_seed, "fold": i}, {}
        for name in ("features", *members):
            t = time.perf_counter()
            design = compat_design(designs, y, train) if name == "compat" else designs[name]
            vals[name], row[name] = fit_probe(design, y, train, val, test, metric=metric)
            seconds[name] += time.perf_counter() - t
        for fam, names in {**FAMILIES, "graph": tuple(members)}.items():
            choice = max(names, key=lambda p: vals[p])  # ties: the first (the simpler design)
            row[fam], row[f"{fam}_choice"] = row[choice], choice
        t = time.perf_counter()
        row["label_propagation"] = label_propagation(s, y, train, val, test, metric=metric)[1]
        seconds["label_propagation"] += time.perf_counter() - t
        rows.append(row)
    return pd.DataFrame(rows), seconds


def _load_solvers():
    import scipy.sparse.linalg  # noqa: F401
    import sklearn.decomposition  # noqa: F401
    import sklearn.linear_model  # noqa: F401


@dataclass(frozen=True)
class GraphNeed:
    """What :func:`necessity` found on one graph.

    Attributes
    ----------
    name, metric, k, seed
        The graph's name and the call's settings.
    measures : dict
        The label-only measures (:data:`hpstrat_lite.core.graph_measures.LABEL_MEASURES`), ``num_edges``,
        ``isolated``.
    folds : pandas.DataFrame
        Test scores of each probe (:data:`PROBES`) per round: ``split_seed``, ``fold`` (several split seeds
        on a small graph, :func:`split_repeats`).
    gains : pandas.DataFrame
        One row per gain of :data:`GAINS`: ``mean``, ``low``, ``high`` (the 95 % t interval over folds), in
        points (score x 100).
    verdict : str
        One of :data:`VERDICTS`, from the best-of-both ``probe_gain`` and ``threshold`` (:func:`verdict`).
    gap : float
        The estimated gap in points: the mean best-of-both probe gain.
    seconds : dict
        Wall time of each part (``measures``, ``folds``, ``designs``, each probe) and ``total``.
    note : str
        Why the verdict needed no probe (a graph without edges), else empty.
    threshold : float
        The practical threshold of the verdicts, in points (:data:`PRACTICAL_GAP`).
    """
    name: str
    metric: str
    k: int
    seed: int
    measures: dict
    folds: pd.DataFrame
    gains: pd.DataFrame
    verdict: str
    gap: float
    seconds: dict = field(default_factory=dict)
    note: str = ""
    threshold: float = PRACTICAL_GAP

    def families(self) -> pd.DataFrame:
        """The expected GNN - MLP gap per model family (:data:`FAMILY_GAINS`): ``family``, ``models`` (what the
        family stands for), ``gap``, ``low``, ``high`` (points, 95 % t interval over folds) and ``verdict``
        (:func:`verdict` with :attr:`threshold`). What the audit prints."""
        g = self.gains.set_index("estimate")
        return pd.DataFrame([{"family": fam, "models": FAMILY_NAMES[fam], "gap": g.loc[gain, "mean"],
                              "low": g.loc[gain, "low"], "high": g.loc[gain, "high"],
                              "verdict": verdict(g.loc[gain, "mean"], g.loc[gain, "low"], g.loc[gain, "high"],
                                                 threshold=self.threshold)}
                             for fam, gain in FAMILY_GAINS.items()])

    def table(self) -> pd.DataFrame:
        """Every estimate in one frame: ``estimate``, ``value`` (label measures as fractions, gains in
        points), ``low``, ``high`` (gains only)."""
        rows = [{"estimate": m, "value": self.measures[m], "low": np.nan, "high": np.nan} for m in LABEL_MEASURES]
        rows += [{"estimate": g, "value": r["mean"], "low": r["low"], "high": r["high"]}
                 for g, r in self.gains.set_index("estimate").iterrows()]
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        lines = [f"Does the graph help? {self.name} ({self.metric}, HpStrat k={self.k}, seed={self.seed})"]
        tab = self.table()
        for r in tab.itertuples(index=False):
            if np.isfinite(r.low):
                lines.append(f"  {r.estimate:24s} {r.value:+7.2f} points  [{r.low:+.2f}, {r.high:+.2f}]")
            else:
                lines.append(f"  {r.estimate:24s} {r.value:7.3f}")
        lines += ["  " + line for line in family_lines(tab, threshold=self.threshold)]
        lines.append(f"verdict: {self.verdict} (estimated best GNN - MLP gap {self.gap:+.2f} points, best graph "
                     f"probe minus feature probe; practical threshold {self.threshold:g} points)"
                     f"{'; ' + self.note if self.note else ''}")
        lines.append(f"time: {self.seconds.get('total', float('nan')):.1f} s")
        return "\n".join(lines)


def _graph_of(data, root):
    """The canonical graph of ``data`` with its features; errors for input the probes cannot use."""
    from ..data.graphs import as_graph

    if getattr(data, "x", "absent") is None:
        raise ValueError("data has no node features (data.x is None): the probes compare a model of the "
                         "features alone with one of features and graph; give x, or use the label-only "
                         "measures of hpstrat_lite.core.graph_measures.label_measures.")
    graph = as_graph(data, root, sparse_features=True)
    y = graph.y.numpy()
    if np.unique(y).size < 2:
        raise ValueError(f"data.y has one class ({int(y[0])}) only: there is nothing to classify; "
                         "at least two classes are needed.")
    return graph, y


def split_repeats(n: int) -> int:
    """HpStrat splits :func:`necessity` averages over on a graph of ``n`` nodes (``repeats="auto"``): enough
    for :data:`MIN_TEST_PREDICTIONS` test predictions, at most :data:`MAX_REPEATS`."""
    return int(min(MAX_REPEATS, max(1, np.ceil(MIN_TEST_PREDICTIONS / max(int(n), 1)))))


def necessity(data, *, metric: str = "accuracy", k: int = 4, seed: int = 0, root=None,
              dim: int = REDUCED_DIM, threshold: float = PRACTICAL_GAP, repeats="auto") -> GraphNeed:
    """Does the graph help on this node-classification task? Cheap estimates and a verdict.

    Computes the label-only measures, builds HpStrat folds (node homophily, B = 10 bins, ``k`` folds,
    ``seed``) and fits the linear probes of this module on each round. Each family (aggregation,
    heterophily-aware, best of both) gets its expected GNN - MLP gap with a 95 % t interval over folds; the
    verdict comes from the best of both and the practical ``threshold`` (:func:`verdict`): "the graph
    helps" when the interval lies above 0 and the gap is at least ``threshold`` points, "the graph hurts"
    symmetrically, "no practical difference" when the interval lies within ``± threshold``, else "no
    evidence that the graph helps".

    Parameters
    ----------
    data : str, os.PathLike or torch_geometric.data.Data
        A dataset name, a graph file or a ``Data`` with ``x``, ``edge_index`` and ``y``
        (:func:`hpstrat_lite.data.graphs.as_graph`).
    metric : {"accuracy", "roc_auc"}
        ROC AUC of the class-1 score needs binary labels.
    k : int
        Number of HpStrat folds (each round: test fold i, validation fold i + 1, training the rest).
    seed : int
        Seed of the folds and of the SVD.
    root : path, optional
        Data root for dataset names.
    dim : int
        Columns kept by the truncated SVD before propagation (:func:`reduce_features`).
    threshold : float
        Practical threshold of the verdicts, points (default :data:`PRACTICAL_GAP`).
    repeats : int or "auto"
        HpStrat splits (seeds ``seed``, ``seed + 1``, ...) whose k rounds all enter the interval; "auto"
        (:func:`split_repeats`): one on graphs of at least :data:`MIN_TEST_PREDICTIONS` nodes, more on
        smaller ones (at most :data:`MAX_REPEATS`), as the measured gaps average over split seeds.

    Returns
    -------
    GraphNeed
        ``print(result)`` shows the table and the verdict; ``result.table()`` is the table as a frame.

    Raises
    ------
    ValueError
        Features missing, a single class, ``metric="roc_auc"`` on more than two classes, a bad ``k``.

    Examples
    --------
    >>> from hpstrat_lite import necessity                   # doctest: +SKIP
    >>> print(necessity("Cora"))                              # doctest: +SKIP
    """
    t_start = time.perf_counter()
    check_choice(metric, "metric", METRICS)
    seed = check_int(seed, "seed", 0)
    dim = check_int(dim, "dim", 1)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold >= 0:
        raise ValueError(f"threshold={threshold!r}: the practical threshold must be a number >= 0 (points).")
    auto = isinstance(repeats, str) and repeats == "auto"
    if not auto:
        check_int(repeats, "repeats", 1, hint=' or "auto"')
    graph, y = _graph_of(data, root)
    if metric == "roc_auc" and np.unique(y).size != 2:
        raise ValueError(f"metric='roc_auc' needs binary labels; data.y has {np.unique(y).size} classes. "
                         "Use metric='accuracy'.")
    k = check_k(k, y.shape[0])
    t = time.perf_counter()
    measures = label_measures(graph.edge_index, y, y.shape[0])
    seconds = {"measures": time.perf_counter() - t}
    name = str(getattr(graph, "name", "graph"))
    if measures["num_edges"] == 0:
        gains = pd.DataFrame({"estimate": list(GAINS), "mean": np.nan, "low": np.nan, "high": np.nan})
        seconds["total"] = time.perf_counter() - t_start
        return GraphNeed(name, metric, k, seed, measures, pd.DataFrame(columns=["fold", *PROBES]), gains,
                         VERDICTS[1], float("nan"), seconds, note="the graph has no edges, so no model can use it",
                         threshold=float(threshold))
    t = time.perf_counter()
    ei = graph.edge_index.numpy()
    h = node_homophily(ei, y, y.shape[0])
    splits = split_repeats(y.shape[0]) if auto else check_int(repeats, "repeats", 1)
    folds = {seed + r: hpstrat_folds(h, y, k=k, seed=seed + r) for r in range(splits)}
    seconds["folds"] = time.perf_counter() - t
    _load_solvers()  # threadpoolctl limits the thread pools of libraries loaded before it is entered
    with threadpool_limits(limits=1):  # small BLAS products: one thread is many times faster on a busy machine
        table, probe_seconds = probe_scores(_scipy_features(graph.x), ei, y, folds, k=k, metric=metric,
                                            seed=seed, dim=dim)
    seconds.update(probe_seconds)
    gains = []
    for g, probe in GAINS.items():
        mean, low, high = t_interval(100 * (table[probe] - table["features"]))
        gains.append({"estimate": g, "mean": mean, "low": low, "high": high})
    gains = pd.DataFrame(gains)
    main = gains.iloc[0]
    seconds["total"] = time.perf_counter() - t_start
    return GraphNeed(name, metric, k, seed, measures, table, gains,
                     verdict(main["mean"], main["low"], main["high"], threshold=threshold), float(main["mean"]),
                     seconds, threshold=float(threshold))
