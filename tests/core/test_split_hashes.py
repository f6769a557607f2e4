"""Node homophily and HpStrat folds are pinned bit for bit: SHA-256 of the float64 homophily (NaN
included) and of the int64 folds, on Cora and on a seeded generated graph, for both edge-list paths
(raw, and ``assume_simple=True`` on the sorted simple graph) and several (k, n_bins, seed) settings.
A faster implementation must reproduce every digest. ``python tests/test_split_hashes.py`` prints them."""
import hashlib

import numpy as np
import pytest
import torch

from hpstrat_lite import hpstrat_folds, node_homophily
from hpstrat_lite.core.homophily import simple_undirected_pairs

SETTINGS = [(4, 10, 0), (4, 10, 1), (5, 10, 0), (5, 10, 1), (5, 3, 0)]  # (k, n_bins, seed)



def digest(a, dtype) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=dtype).tobytes()).hexdigest()


def generated_graph(n=5000, m=30000, c=7, seed=0):
    """Directed edges with reverse pairs, duplicates and self-loops, skewed classes, isolated nodes."""
    rng = np.random.default_rng(seed)
    y = rng.choice(c, size=n, p=np.arange(c, 0, -1) / np.arange(c, 0, -1).sum()).astype(np.int64)
    src = rng.integers(0, n - 300, m)  # the last 300 nodes stay isolated
    dst = np.where(rng.random(m) < 0.6, src + rng.integers(-40, 40, m), rng.integers(0, n - 300, m))
    dst = np.clip(dst, 0, n - 301)
    dup = rng.integers(0, m, m // 20)
    src[: dup.size], dst[: dup.size] = dst[dup], src[dup]  # reverse pairs and duplicates
    return np.stack([src, dst]), y


def simple_sorted(ei, n):
    """The sorted, symmetric, duplicate- and loop-free edge list (as ``load_dataset`` returns)."""
    a, b = simple_undirected_pairs(ei, n)
    sym = np.stack([np.concatenate([a, b]), np.concatenate([b, a])])
    return sym[:, np.lexsort((sym[1], sym[0]))]


def cora():
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora")
    return data.edge_index, data.y, data.num_nodes


def homophily_cases(name, ei, y, n):
    """(path, homophily) for each way of calling node_homophily on this graph."""
    ei_np = np.asarray(ei)
    simple = simple_sorted(ei_np, n)
    return {
        "raw": node_homophily(ei, y, n),
        "raw_int32": node_homophily(ei_np.astype(np.int32), np.asarray(y), n),
        "simple": node_homophily(simple, np.asarray(y), n, assume_simple=True),
        "simple_torch": node_homophily(torch.from_numpy(simple), torch.as_tensor(np.asarray(y)), n,
                                       assume_simple=True),
    }


def all_digests(name, ei, y, n):
    hs = homophily_cases(name, ei, y, n)
    out = {("homophily", name, path): digest(h, np.float64) for path, h in hs.items()}
    for k, b, seed in SETTINGS:
        out[("folds", name, k, b, seed)] = digest(hpstrat_folds(hs["simple"], y, k=k, n_bins=b, seed=seed), np.int64)
    return out


def check(name, ei, y, n):
    got = all_digests(name, ei, y, n)
    want = {key: value for key, value in EXPECTED.items() if key[1] == name}
    assert got == want


def test_generated_graph_digests():
    ei, y = generated_graph()
    check("generated", ei, y, len(y))


def test_cora_digests(data_root):
    check("cora", *cora())


EXPECTED = {  # digests of the implementation these tests were written against
    ('homophily', 'generated', 'raw'): '511812f96b646dd739194e704739a83b6e490dbf75950c2c5188894ac6e9905d',
    ('homophily', 'generated', 'raw_int32'): '511812f96b646dd739194e704739a83b6e490dbf75950c2c5188894ac6e9905d',
    ('homophily', 'generated', 'simple'): '511812f96b646dd739194e704739a83b6e490dbf75950c2c5188894ac6e9905d',
    ('homophily', 'generated', 'simple_torch'): '511812f96b646dd739194e704739a83b6e490dbf75950c2c5188894ac6e9905d',
    ('folds', 'generated', 4, 10, 0): 'a9ee55f2c5b7ace04a5e92bcc69a7bb9ddf035d3b61dd308689a89242a011a7b',
    ('folds', 'generated', 4, 10, 1): '9e0db4c5b4a317c6db034b4e3f61d08670971f0f8fd14a0e50dea51f4a614251',
    ('folds', 'generated', 5, 10, 0): '2f8479c03fda0b44ef33a9c2d20f4f057dda2f7834fc0897569b31fd1e05c60e',
    ('folds', 'generated', 5, 10, 1): 'cb06c65442429ad8c825073c7640a2c063277908623546843f9b9378a9ce8606',
    ('folds', 'generated', 5, 3, 0): '0b5734dcbd836f39769817d2bb0df7799c92732c2f7026f19057eacab0d189c5',
    ('homophily', 'cora', 'raw'): 'c1596f5285cc55aa4269c0c18852fc37ec33550084fb017a951cbb43a046e248',
    ('homophily', 'cora', 'raw_int32'): 'c1596f5285cc55aa4269c0c18852fc37ec33550084fb017a951cbb43a046e248',
    ('homophily', 'cora', 'simple'): 'c1596f5285cc55aa4269c0c18852fc37ec33550084fb017a951cbb43a046e248',
    ('homophily', 'cora', 'simple_torch'): 'c1596f5285cc55aa4269c0c18852fc37ec33550084fb017a951cbb43a046e248',
    ('folds', 'cora', 4, 10, 0): 'e07b0965217400e19408563dd07ba0183d024eb4cd0282270f4ea2a5655b8d6d',
    ('folds', 'cora', 4, 10, 1): '6684951df30cfb165159ebedfe134c8faf18c7dfcaee2edaaab16e7bd7af312c',
    ('folds', 'cora', 5, 10, 0): '9afb65c7e1546063a18df38218091ada272300d1fe8415ea542f20d34c09b1e3',
    ('folds', 'cora', 5, 10, 1): 'f3ca516e7af9b82977b1e712e19ea8c492eda1ea97f3b5662162a308286916ac',
    ('folds', 'cora', 5, 3, 0): '41458609944ff5e4ce87be254cf1228cf896a2b65b687e0749b126096046db50',
}


if __name__ == "__main__":
    ei, y = generated_graph()
    for name, graph in [("generated", (ei, y, len(y))), ("cora", cora())]:
        for key, value in all_digests(name, *graph).items():
            print(f"    {key!r}: {value!r},")
