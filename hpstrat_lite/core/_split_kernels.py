"""numba kernels behind :func:`hpstrat_lite.node_homophily` with ``assume_simple=True`` and behind the dealing of
strata into folds (:func:`deal_strata`).

:func:`sorted_simple_homophily` reads an edge list sorted by (source, target) once, in
:data:`CHUNKS_PER_THREAD` chunks per numba thread taken dynamically; each chunk starts at a change of source, so a
thread owns the out-degree and the same-label count of every source in its chunk and the two counts never race.
The kernel reads the edges from one contiguous buffer with a stride (:func:`edge_buffer`), so a C-ordered
``[2, m]`` array and an F-ordered one (what ``ei[:, order]`` gives) share one compiled kernel and neither is
copied: a second layout would otherwise compile, or load from numba's cache, a second kernel on its first call. In the same pass it checks
what ``assume_simple=True`` promises and can be checked without a sort: ids in ``0..n-1``, keys
``(source, target)`` strictly increasing (sorted, no duplicates), no self-loops, and in-degree equal to
out-degree. The last is checked without a scatter into a per-node array (random writes that miss the cache
once n is in the millions): with a fixed pseudo-random 64-bit weight w(v) (splitmix64), in-degree equals
out-degree exactly when sum over edges of w(target) equals sum over nodes of out-degree(v) w(v); both sums
are taken modulo 2**64 in the same pass, so a mismatch goes unnoticed only if the weights happen to cancel
(about 2**-64 for a random mismatch). The labels of the targets are read at random; the pass asks for each one
:data:`LABELS_AHEAD` edges before it needs it.
"""
from __future__ import annotations

import numba
import numpy as np

from .._host import start_numba_threads
from .._prefetch import prefetch

#: How many edges ahead the counting pass asks for the label of an edge's target (:func:`prefetch`): the labels are
#: read at random, and a table of millions of them does not fit in L2; asked for early, the label is in cache
#: when its edge comes (``bench_split.py``: the pass 140-148 -> 90-93 ms on 612 k nodes; ``benchmarks/README.md``).
LABELS_AHEAD = 32

# error bits of sorted_simple_homophily
OUT_OF_RANGE, NOT_INCREASING, SELF_LOOP, DEGREE_MISMATCH = 1, 2, 4, 8


@numba.njit(cache=True)
def _chunk_start(flat, s0, step, m, t, chunks):
    """First edge of chunk ``t`` of ``chunks``: ``t * m // chunks``, moved forward to a change of source
    (the source of edge e is ``flat[s0 + e * step]``)."""
    if t >= chunks:
        return m
    e = t * m // chunks
    while 0 < e < m and flat[s0 + e * step] == flat[s0 + (e - 1) * step]:
        e += 1
    return e


@numba.njit(inline="always")
def _mix(v):
    """splitmix64's finaliser: a fixed pseudo-random 64-bit weight of node ``v``."""
    x = np.uint64(v) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(parallel=True, cache=True)
def _count(flat, s0, d0, step, m, labels, deg, same, balance, err):
    """Edge e is ``(flat[s0 + e * step], flat[d0 + e * step])``: one contiguous buffer whatever the edge
    list's layout (rows of a C-ordered ``[2, m]`` array, or pairs of an F-ordered one), so one compiled
    kernel per dtype serves both, with no copy."""
    n = deg.shape[0]
    chunks = err.shape[0]
    for t in numba.prange(chunks):
        lo = _chunk_start(flat, s0, step, m, t, chunks)
        hi = _chunk_start(flat, s0, step, m, t + 1, chunks)
        acc = np.uint64(0)
        flags = 0
        prev = np.int64(-1)
        if lo > 0:
            prev = np.int64(flat[s0 + (lo - 1) * step])
        e = lo
        while e < hi:  # one run of edges with the same source s
            s = np.int64(flat[s0 + e * step])
            if s < 0 or s >= n:
                flags |= OUT_OF_RANGE
                break
            if s <= prev:
                flags |= NOT_INCREASING
            label = labels[s]
            first = e
            matches = 0
            last = np.int64(-1)
            while e < hi and flat[s0 + e * step] == s:
                if e + LABELS_AHEAD < hi:
                    prefetch(labels, flat[d0 + (e + LABELS_AHEAD) * step])
                d = np.int64(flat[d0 + e * step])
                if d < 0 or d >= n:
                    flags |= OUT_OF_RANGE
                    break
                if d <= last:
                    flags |= NOT_INCREASING
                if d == s:
                    flags |= SELF_LOOP
                if labels[d] == label:
                    matches += 1
                acc += _mix(d)
                last = d
                e += 1
            if flags & OUT_OF_RANGE:
                break
            deg[s] += e - first
            same[s] += matches
            acc -= np.uint64(e - first) * _mix(s)
            prev = s
        balance[t] = acc
        err[t] = flags


@numba.njit(parallel=True, cache=True)
def _ratio(deg, same, h):
    for v in numba.prange(deg.shape[0]):
        if deg[v] == 0:
            h[v] = np.nan
        else:
            h[v] = same[v] / deg[v]


#: Chunks of the edge list per numba thread: threads take chunks as they finish (dynamic scheduling), so one
#: thread held up by another process on a shared machine does not hold up the pass by a whole share.
CHUNKS_PER_THREAD = 8


def edge_buffer(ei: np.ndarray) -> tuple[np.ndarray, int, int, int]:
    """``(flat, s0, d0, step)`` with edge e = ``(flat[s0 + e * step], flat[d0 + e * step])``: a view of a C- or
    F-ordered ``[2, m]`` array as one contiguous 1-D buffer (an F-ordered array, as ``ei[:, order]`` returns,
    holds the pairs side by side); a copy only for other strides."""
    m = ei.shape[1]
    if not (ei.flags.c_contiguous or ei.flags.f_contiguous):
        ei = np.ascontiguousarray(ei)
    if ei.flags.c_contiguous:
        return ei.reshape(-1), 0, m, 1
    return ei.T.reshape(-1), 0, 1, 2


def sorted_simple_homophily(ei, labels, n: int) -> tuple[np.ndarray, int]:
    """Node homophily ``same(v) / deg(v)`` (NaN where ``deg(v) = 0``) of a sorted symmetric simple edge list.

    ``ei``: int32 or int64 array of shape (2, m), C- or F-ordered (:func:`edge_buffer`: no copy, and the same
    compiled kernel for both); ``labels``: non-negative integers, length n. Returns the homophily and the
    error bits (``OUT_OF_RANGE | NOT_INCREASING | SELF_LOOP | DEGREE_MISMATCH``, 0 when the list passed every
    check; the homophily is meaningless otherwise).
    """
    m = ei.shape[1]
    flat, s0, d0, step = edge_buffer(ei)
    start_numba_threads()  # idle threads sleep: see hpstrat_lite._host
    chunks = max(1, min(CHUNKS_PER_THREAD * numba.get_num_threads(), m // 65536 + 1))
    c = int(labels.max()) + 1 if labels.shape[0] else 1
    labels = labels.astype(np.int8 if c <= 127 else np.int16 if c <= 32767 else np.int32 if c < 2**31
                           else np.int64)  # a small table for the random reads labels[target]
    deg = np.zeros(n, dtype=np.int64)
    same = np.zeros(n, dtype=np.int64)
    balance = np.zeros(chunks, dtype=np.uint64)
    err = np.zeros(chunks, dtype=np.int64)
    with numba.parallel_chunksize(1):
        _count(flat, s0, d0, step, m, labels, deg, same, balance, err)
    flags = int(np.bitwise_or.reduce(err))
    h = np.empty(n, dtype=np.float64)
    if flags & OUT_OF_RANGE:
        return h, flags
    if int(balance.sum(dtype=np.uint64)) != 0:  # sum over targets of w(t) - sum over nodes of deg(v) w(v)
        flags |= DEGREE_MISMATCH
    _ratio(deg, same, h)
    return h, flags


@numba.njit(cache=True)
def _deal(priority, bins, labels, n_classes, n_strata, k, stratum, folds):
    """Counting sort of the nodes, taken in shuffled order, by stratum ``bins[v] * n_classes + labels[v]`` (stable),
    dealing ``fold = rank mod k``: the size of each stratum, the node at each shuffled position (the inverse of
    ``priority``), then each node's rank as its stratum's next slot."""
    n = priority.shape[0]
    start = np.zeros(n_strata + 1, dtype=np.int64)
    node_at = np.empty(n, dtype=np.int64)
    for v in range(n):
        s = bins[v] * n_classes + labels[v]
        stratum[v] = s
        start[s + 1] += 1
        node_at[priority[v]] = v
    for s in range(n_strata):
        start[s + 1] += start[s]
    for p in range(n):
        v = node_at[p]
        s = stratum[v]
        folds[v] = start[s] % k
        start[s] += 1


def deal_strata(priority: np.ndarray, bins: np.ndarray, labels: np.ndarray, n_classes: int, n_strata: int,
                k: int) -> np.ndarray:
    """``folds[v] = rank(v) mod k``, where ``rank`` orders the nodes by stratum ``bins[v] * n_classes + labels[v]``
    (in ``0..n_strata-1``) and, within a stratum, by their shuffled position ``priority[v]`` (a permutation of
    ``0..n-1``): what a stable sort of the nodes in shuffled order by stratum gives, in O(n + n_strata) (one
    counting pass, one dealing pass)."""
    n = priority.shape[0]
    folds = np.empty(n, dtype=np.int64)
    stratum = np.empty(n, dtype=np.int16 if n_strata <= 2**15 else np.int64)  # small for the dealing pass's reads
    _deal(priority, bins, labels, n_classes, n_strata, k, stratum, folds)
    return folds
