"""Tests of the dataset layer (hpstrat_lite.data.datasets).

Real-data tests read the mirror named by HPSTRAT_DATA (CI: ../shared/datasets) and skip, saying why,
when it is unset or lacks a dataset (PubMed, Roman-empire and Amazon-ratings are not in the mirror).
Each dataset is loaded once per module (the processed-graph cache is the test run's, see conftest).
"""
import dataclasses
import json
import multiprocessing as mp
import shutil
import stat
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch

from hpstrat_lite.data import datasets as ds
from hpstrat_lite.data.datasets import DATASETS, HPSTRAT_DATASETS, LINK_DATASETS, available_datasets, get_spec, load_dataset, read_musae
from hpstrat_lite.data.graphs import dataset_summary
from hpstrat_lite.data.normalize import SPARSE_MAX_DENSITY, feature_tensor, simple_undirected

from conftest import DATA_ROOT as MIRROR

# nodes, directed edges (both directions counted; None: checked against the raw edge file instead),
# features (None: checked against the raw file), classes -- from the mirror README / PyG docs.
EXPECTED = {
    "Cora": (2708, 10556, 1433, 7),
    "CiteSeer": (3327, 9104, 3703, 6),
    "PubMed": (19717, 88648, 500, 3),
    "Computers": (13752, 491722, 767, 10),
    "Photo": (7650, 238162, 745, 8),
    "CS": (18333, 163788, 6805, 15),
    "Physics": (34493, 495924, 8415, 5),
    "Cornell": (183, None, 1703, 5),
    "Texas": (183, None, 1703, 5),
    "Wisconsin": (251, None, 1703, 5),
    "Actor": (7600, None, 932, 5),
    "Chameleon": (890, None, 2325, 5),
    "Squirrel": (2223, None, 2089, 5),
    "Roman-empire": (22662, 65854, 300, 18),
    "Amazon-ratings": (24492, 186100, 300, 5),
    "Twitch-PTBR": (1912, None, None, 2),
    "Twitch-EN": (7126, None, None, 2),
    "Facebook": (22470, None, None, 4),
}
BAG_OF_WORDS = {"Cora", "CiteSeer", "PubMed", "Computers", "Photo", "CS", "Physics", "Cornell", "Texas",
                "Wisconsin", "Actor", "Chameleon", "Squirrel", "Twitch-PTBR", "Twitch-EN", "Facebook"}


def mirror_folder(name):
    """The dataset's raw folder in the mirror, or skip saying why it is not usable."""
    if not MIRROR:
        pytest.skip("HPSTRAT_DATA is not set: point it at the dataset mirror (CI sets ../shared/datasets)")
    spec = get_spec(name)
    folder = Path(MIRROR, spec.folder)
    missing = [f for f in spec.files if not (folder / f).is_file()]
    if missing:
        pytest.skip(f"{name}: {len(missing)} raw file(s) (e.g. {missing[0]}) are not under HPSTRAT_DATA={MIRROR} "
                    f"(the offline mirror omits PubMed, Roman-empire and Amazon-ratings)")
    return folder


@pytest.fixture(scope="module")
def loaded():
    """Load each mirror dataset at most once in this module (Physics and Computers are the slow ones), with
    bag-of-words features in their sparse form (the dense default is tested in tests/test_graphs.py)."""
    cache = {}

    def get(name):
        mirror_folder(name)
        if name not in cache:
            cache[name] = load_dataset(name, root=MIRROR, sparse_features=True)
        return cache[name]
    return get


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty processed-graph cache for this test only."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HPSTRAT_CACHE", str(cache))
    return cache


def undirected_pairs(edge_index):
    ei = edge_index.numpy()
    return ei[:, ei[0] < ei[1]].T


def raw_pairs(name, folder):
    """Oracle: the undirected simple edge set straight from the raw edge file (numpy, not PyG)."""
    spec = get_spec(name)
    if spec.kind in ("webkb", "actor"):
        e = np.loadtxt(folder / "out1_graph_edges.txt", skiprows=1, dtype=np.int64)
    elif spec.kind == "yandex":
        e = np.load(folder / spec.files[0])["edges"]
    else:
        e = pd.read_csv(folder / spec.files[0]).to_numpy(np.int64)[:, :2]
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(np.sort(e, axis=1), axis=0), len(e)


def assert_simple_undirected(data):
    ei = data.edge_index
    assert ei.dtype == torch.int64 and ei.dim() == 2 and ei.size(0) == 2
    n = data.num_nodes
    row, col = ei.numpy().astype(np.int64)
    assert row.min() >= 0 and max(row.max(), col.max()) < n
    assert not np.any(row == col), "self-loops left"
    key = row * n + col
    assert np.all(np.diff(key) > 0), "edge_index not sorted by (row, col) or has duplicates"
    assert np.array_equal(np.sort(col * n + row), key), "edge_index is not symmetric"


# ----------------------------------------------------------------------------------------------
# Registry, names, folders
# ----------------------------------------------------------------------------------------------

def test_registry_lists_the_18_datasets_with_files_and_urls():
    assert list(DATASETS) == list(EXPECTED)
    assert HPSTRAT_DATASETS == tuple(EXPECTED)[:15] and LINK_DATASETS == ("Twitch-PTBR", "Twitch-EN", "Facebook")
    for spec in DATASETS.values():
        assert spec.files and len(spec.urls) == len(spec.files)
        assert all(u.startswith("https://") for u in spec.urls)
    assert get_spec("Cornell").folder == "cornell/raw" and get_spec("Twitch-PTBR").folder == "musae/twitch_PTBR"
    assert get_spec("Actor").files[2] == "film_split_0.6_0.2_0.npz"


@pytest.mark.parametrize("alias, canonical", [("cora", "Cora"), ("CITESEER", "CiteSeer"),
                                              ("roman_empire", "Roman-empire"), ("amazon-RATINGS", "Amazon-ratings"),
                                              ("twitch-en", "Twitch-EN"), ("facebook", "Facebook")])
def test_name_lookup_is_case_insensitive(alias, canonical):
    assert get_spec(alias).name == canonical


@pytest.mark.parametrize("bad", ["Cora2", "", "ogbn-arxiv", None, 3])
def test_unknown_name_lists_allowed_names(bad):
    with pytest.raises(ValueError, match=r"name=.* is not a known dataset; allowed names .*Cora, CiteSeer, PubMed"):
        load_dataset(bad)
    with pytest.raises(ValueError, match="not a known dataset"):
        dataset_summary([bad])


def test_roots_follow_argument_then_environment_then_default(tmp_path, monkeypatch):
    monkeypatch.delenv("HPSTRAT_DATA", raising=False)
    assert ds.data_root() == Path("~/.cache/hpstrat_lite/data").expanduser()
    monkeypatch.setenv("HPSTRAT_DATA", str(tmp_path / "env"))
    assert ds.data_root() == tmp_path / "env"
    assert ds.data_root(tmp_path / "arg") == tmp_path / "arg"
    with pytest.raises(ValueError, match="root must be a folder path"):
        ds.data_root(5)
    monkeypatch.setenv("HPSTRAT_CACHE", str(tmp_path / "c"))
    assert ds.cache_root() == tmp_path / "c" and (tmp_path / "c").is_dir()


def test_relative_roots_are_made_absolute_against_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HPSTRAT_DATA", "../mirror")
    monkeypatch.setenv("HPSTRAT_CACHE", "cache")
    assert ds.data_root().is_absolute() and ds.data_root().resolve() == (tmp_path.parent / "mirror").resolve()
    assert ds.data_root("rel") == tmp_path / "rel"
    assert ds.cache_root().resolve() == (tmp_path / "cache").resolve()


# ----------------------------------------------------------------------------------------------
# Missing files and downloads (no network needed: file:// URLs stand in for upstream)
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Cora", "Chameleon", "Facebook", "Roman-empire"])
def test_offline_missing_raises_filenotfound_naming_files_and_url(name, tmp_path, fresh_cache, monkeypatch):
    monkeypatch.setenv("HPSTRAT_OFFLINE", "1")
    spec = get_spec(name)
    with pytest.raises(FileNotFoundError) as err:
        load_dataset(name.lower(), root=tmp_path / "empty")
    msg = str(err.value)
    assert f"dataset {name!r}" in msg and "HPSTRAT_OFFLINE" in msg and "HPSTRAT_DATA" in msg
    assert spec.files[0] in msg and spec.urls[0] in msg and spec.folder in msg
    assert not (tmp_path / "empty").exists(), "a missing dataset must not create folders in the data root"
    assert available_datasets(tmp_path / "empty") == []


def test_download_false_and_failed_download_raise_filenotfound(tmp_path, fresh_cache, monkeypatch):
    monkeypatch.delenv("HPSTRAT_OFFLINE", raising=False)
    with pytest.raises(FileNotFoundError, match="download=False"):
        load_dataset("Texas", root=tmp_path, download=False)
    spec = get_spec("Texas")
    bad = dataclasses.replace(spec, urls=tuple((tmp_path / "nowhere" / f).as_uri() for f in spec.files))
    monkeypatch.setitem(DATASETS, "Texas", bad)
    with pytest.raises(FileNotFoundError, match=r"dataset 'Texas'.*download failed.*out1_node_feature_label.txt"):
        load_dataset("Texas", root=tmp_path)
    assert not list((fresh_cache / "raw").rglob("*.tmp")), "a failed download left a partial file"


def test_download_fills_the_cache_and_never_writes_the_named_root(loaded, tmp_path, fresh_cache, monkeypatch):
    monkeypatch.delenv("HPSTRAT_OFFLINE", raising=False)
    folder = mirror_folder("Cornell")
    spec = get_spec("Cornell")
    monkeypatch.setitem(DATASETS, "Cornell",
                        dataclasses.replace(spec, urls=tuple((folder / f).as_uri() for f in spec.files)))
    root = tmp_path / "root"
    root.mkdir()
    data = load_dataset("Cornell", root=root)
    assert list(root.iterdir()) == []
    assert sorted(p.name for p in (fresh_cache / "raw" / "cornell" / "raw").iterdir()) == sorted(spec.files)
    ref = loaded("Cornell")
    assert torch.equal(data.edge_index, ref.edge_index) and torch.equal(data.y, ref.y)
    assert "Cornell" in available_datasets(root)


def test_musae_download_extracts_from_a_snap_style_archive(loaded, tmp_path, fresh_cache, monkeypatch):
    """SNAP's twitch.zip nests files as twitch/PTBR/ and names the features musae_PTBR.json."""
    monkeypatch.delenv("HPSTRAT_OFFLINE", raising=False)
    folder = mirror_folder("Twitch-PTBR")
    archive = tmp_path / "twitch.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(folder / "musae_PTBR_edges.csv", "twitch/PTBR/musae_PTBR_edges.csv")
        zf.write(folder / "musae_PTBR_features.json", "twitch/PTBR/musae_PTBR.json")
        zf.write(folder / "musae_PTBR_target.csv", "twitch/PTBR/musae_PTBR_target.csv")
    spec = get_spec("Twitch-PTBR")
    monkeypatch.setitem(DATASETS, "Twitch-PTBR", dataclasses.replace(spec, urls=(archive.as_uri(),) * 3))
    data = load_dataset("Twitch-PTBR", root=tmp_path / "empty")
    ref = loaded("Twitch-PTBR")
    assert torch.equal(data.edge_index, ref.edge_index) and torch.equal(data.y, ref.y)
    assert torch.equal(data.x.to_dense(), ref.x.to_dense())


# ----------------------------------------------------------------------------------------------
# Normalisation helpers (no data needed)
# ----------------------------------------------------------------------------------------------

def test_simple_undirected_symmetrises_dedups_drops_loops_and_sorts():
    ei = torch.tensor([[2, 0, 1, 1, 2, 3], [0, 1, 0, 1, 0, 2]])
    out = simple_undirected(ei, 4)
    assert out.tolist() == [[0, 0, 1, 2, 2, 3], [1, 2, 0, 0, 3, 2]]
    assert out.dtype == torch.int64
    with pytest.raises(ValueError, match=r"node ids in \[0, 4\] but num_nodes=4"):
        simple_undirected(torch.tensor([[0], [4]]), 4)
    with pytest.raises(ValueError, match="edge_index must have shape"):
        simple_undirected(torch.zeros(3, 2, dtype=torch.long), 4)


def test_feature_tensor_keeps_bags_sparse_and_real_values_dense():
    rng = np.random.default_rng(0)
    bag = (rng.random((50, 40)) < 0.05).astype(np.float32)
    counts = bag * rng.integers(1, 4, size=bag.shape)
    for x in (bag, counts, sp.csr_matrix(counts)):
        out = feature_tensor(x)
        assert out.layout == torch.sparse_csr and out.dtype == torch.float32
        assert np.array_equal(out.to_dense().numpy(), np.asarray(x.todense() if sp.issparse(x) else x))
    dense_real = rng.normal(size=(50, 8)).astype(np.float32)
    assert feature_tensor(dense_real).layout == torch.strided
    assert feature_tensor((rng.random((50, 40)) < 0.9).astype(np.float32)).layout == torch.strided
    assert feature_tensor(sp.csr_matrix(np.ones((4, 3)))).layout == torch.strided


def test_read_musae_maps_ids_labels_and_feature_bags(tmp_path):
    pd.DataFrame({"from": [0, 1, 2, 2], "to": [1, 2, 0, 2]}).to_csv(tmp_path / "musae_X_edges.csv", index=False)
    (tmp_path / "musae_X_features.json").write_text(json.dumps({"2": [4, 4, 0], "0": [1]}))
    pd.DataFrame({"id": [99, 98, 97], "mature": [True, False, True], "new_id": [2, 0, 1]}).to_csv(
        tmp_path / "musae_X_target.csv", index=False)
    data = read_musae(tmp_path, "X", "new_id", "mature")
    assert data.y.tolist() == [0, 1, 1]  # node 0 <- new_id 0 (False), node 1 (True), node 2 (True)
    assert data.x.toarray().tolist() == [[0, 1, 0, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 1]]
    with pytest.raises(ValueError, match="no column 'page_type'"):
        read_musae(tmp_path, "X", "new_id", "page_type")


def test_heterophilous_npz_goes_through_pyg_and_keeps_real_features_dense(tmp_path, fresh_cache):
    """Roman-empire / Amazon-ratings are not in the mirror: a small file in their yandex layout checks
    the HeterophilousGraphDataset path (dense real-valued features, masks dropped, graph made simple)."""
    rng = np.random.default_rng(1)
    n = 30
    edges = np.concatenate([rng.integers(0, n, size=(60, 2)), [[3, 3], [4, 5], [5, 4], [4, 5]]])
    folder = tmp_path / "roman_empire" / "raw"
    folder.mkdir(parents=True)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = np.arange(n) % 4
    masks = rng.random((10, n)) < 0.5
    np.savez(folder / "roman_empire.npz", node_features=x, node_labels=y, edges=edges,
             train_masks=masks, val_masks=~masks, test_masks=masks)
    data = load_dataset("roman_empire", root=tmp_path)
    assert data.name == "Roman-empire" and data.num_classes == 4 and data.x.layout == torch.strided
    assert torch.equal(data.x, torch.from_numpy(x)) and data.y.tolist() == y.tolist()
    assert_simple_undirected(data)
    e = edges[edges[:, 0] != edges[:, 1]]
    assert np.array_equal(undirected_pairs(data.edge_index), np.unique(np.sort(e, axis=1), axis=0))
    assert "train_mask" not in data
    assert _tree(tmp_path / "roman_empire") == ["raw", "raw/roman_empire.npz"], "wrote into the data root"


# ----------------------------------------------------------------------------------------------
# Every dataset of the mirror
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DATASETS))
def test_mirror_dataset_counts_and_graph_form(name, loaded):
    data = loaded(name)
    nodes, directed, features, classes = EXPECTED[name]
    assert data.name == name and data.num_nodes == nodes == data.y.numel() == data.x.shape[0]
    assert data.num_classes == classes
    assert data.y.dtype == torch.int64 and np.all(np.bincount(data.y.numpy(), minlength=classes) > 0)
    assert data.y.max().item() == classes - 1
    if features is not None:
        assert data.x.shape[1] == features
    assert data.x.dtype == torch.float32
    assert_simple_undirected(data)
    if directed is not None:
        assert data.edge_index.size(1) == directed
    else:
        pairs, raw_rows = raw_pairs(name, mirror_folder(name))
        assert np.array_equal(undirected_pairs(data.edge_index), pairs)
        assert len(pairs) <= raw_rows
    for key in ("train_mask", "val_mask", "test_mask"):
        assert key not in data, f"{name}: shipped split {key} should be dropped"


def test_feature_study_counts_are_the_checked_feature_counts():
    """tuning.FEATURE_COUNTS (when a feature study is complete) agrees with EXPECTED, which
    test_mirror_dataset_counts_and_graph_form checks against the raw files."""
    from hpstrat_book.part2.tuning import FEATURE_COUNTS, FEATURE_STEPS

    assert set(FEATURE_COUNTS) == set(FEATURE_STEPS)
    assert FEATURE_COUNTS == {name: EXPECTED[name][2] for name in FEATURE_COUNTS}


@pytest.mark.parametrize("name", sorted(BAG_OF_WORDS, key=list(DATASETS).index))
def test_mirror_bag_of_words_features_are_sparse_binary(name, loaded):
    data = loaded(name)
    x = data.x
    assert x.layout == torch.sparse_csr, f"{name}: bag-of-words features should be CSR, got {x.layout}"
    density = x.values().numel() / (x.shape[0] * x.shape[1])
    assert 0 < density <= SPARSE_MAX_DENSITY
    assert torch.all(x.values() == 1)


def test_sparse_features_match_the_raw_files(loaded):
    ch = loaded("Chameleon")
    raw = np.load(mirror_folder("Chameleon") / "chameleon_filtered.npz")
    assert np.array_equal(ch.x.to_dense().numpy(), raw["node_features"])
    assert np.array_equal(ch.y.numpy(), raw["node_labels"])
    folder = mirror_folder("Twitch-EN")
    feats = json.loads((folder / "musae_ENGB_features.json").read_text())
    tw = loaded("Twitch-EN").x
    crow, col = tw.crow_indices().numpy(), tw.col_indices().numpy()
    for node in ("0", "17", str(len(feats) - 1)):
        v = int(node)
        assert sorted(col[crow[v]:crow[v + 1]].tolist()) == sorted(set(feats[node]))
    assert tw.shape[1] == 1 + max(max(f) for f in feats.values() if f)


def test_musae_labels_follow_target_columns(loaded):
    tw = loaded("Twitch-PTBR")
    target = pd.read_csv(mirror_folder("Twitch-PTBR") / "musae_PTBR_target.csv").sort_values("new_id")
    assert np.array_equal(tw.y.numpy(), target["mature"].astype(int).to_numpy())
    fb = loaded("Facebook")
    target = pd.read_csv(mirror_folder("Facebook") / "musae_facebook_target.csv").sort_values("id")
    types = sorted(target["page_type"].unique())
    assert np.array_equal(fb.y.numpy(), target["page_type"].map(types.index).to_numpy())


# ----------------------------------------------------------------------------------------------
# Read-only shared root, parallel processes
# ----------------------------------------------------------------------------------------------

def _tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_read_only_root_is_never_written(loaded, tmp_path, fresh_cache):
    src = mirror_folder("Cornell")
    ro = tmp_path / "ro"
    shutil.copytree(src, ro / "cornell" / "raw")
    for p in [*ro.rglob("*"), ro]:
        p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
                                                               if p.is_dir() else 0))
    before = _tree(ro)
    try:
        data = load_dataset("cornell", root=ro)
        again = load_dataset("Cornell", root=ro)  # second call: from the processed cache
    finally:
        for p in [ro, *ro.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert _tree(ro) == before, "loading wrote into the read-only data root"
    assert len(list((fresh_cache / "processed").glob("*.pt"))) == 1
    assert not list((fresh_cache / "work").iterdir()), "PyG's working folder was not cleaned up"
    ref = loaded("Cornell")
    for d in (data, again):
        assert torch.equal(d.edge_index, ref.edge_index) and torch.equal(d.y, ref.y)
        assert torch.equal(d.x.to_dense(), ref.x.to_dense())


def _load_in_child(name, root, ready, queue):
    ready.set()
    try:
        data = load_dataset(name, root=root)
        queue.put((name, data.num_nodes, data.edge_index.numpy().tobytes(), data.y.numpy().tobytes()))
    except BaseException as err:  # report, do not hang the parent
        queue.put(("error", repr(err), b"", b""))


def test_two_processes_loading_at_once_both_succeed(fresh_cache):
    """Both children block on the dataset lock held here, then race: one processes, the other waits
    and reads the finished file; neither may see a half-written one."""
    folder = mirror_folder("Wisconsin")
    root = str(folder.parents[1])
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    readies = [ctx.Event() for _ in range(2)]
    procs = [ctx.Process(target=_load_in_child, args=("Wisconsin", root, r, queue)) for r in readies]
    with ds._locked(get_spec("Wisconsin")):
        for p in procs:
            p.start()
        assert all(r.wait(120) for r in readies), "child processes did not start"
        time.sleep(0.5)  # both are now inside load_dataset, waiting for the lock
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(r[0] == "Wisconsin" for r in results), results
    assert results[0] == results[1]
    files = list((fresh_cache / "processed").iterdir())
    assert len(files) == 1 and files[0].suffix == ".pt", files


# ----------------------------------------------------------------------------------------------
# Table 1 summary
# ----------------------------------------------------------------------------------------------

def test_dataset_summary_table(loaded, monkeypatch):
    from torch_geometric.utils import homophily

    monkeypatch.setenv("HPSTRAT_OFFLINE", "1")
    mirror_folder("Cora")
    mirror_folder("CiteSeer")
    df = dataset_summary(["cora", "CiteSeer", "PubMed"], root=MIRROR)
    assert list(df.columns) == ["dataset", "nodes", "edges", "features", "classes", "homophily", "isolated",
                                "status"]
    cora, cite, pubmed = (df.iloc[i] for i in range(3))
    assert (cora.dataset, cora.nodes, cora.edges, cora.features, cora.classes, cora.isolated, cora.status) == (
        "Cora", 2708, 5278, 1433, 7, 0, "ok")
    data = loaded("Cora")  # Cora has no isolated node, so PyG's node homophily (isolated = 0) agrees
    assert cora.homophily == pytest.approx(homophily(data.edge_index, data.y, method="node"), abs=1e-6)
    deg = np.bincount(loaded("CiteSeer").edge_index[0].numpy(), minlength=3327)
    assert cite.isolated == int(np.sum(deg == 0)) > 0 and 0 < cite.homophily < 1
    if "PubMed" not in available_datasets(MIRROR):
        assert pubmed.status.startswith("missing:") and "ind.pubmed" in pubmed.status
        assert pd.isna(pubmed.nodes) and np.isnan(pubmed.homophily)


@pytest.mark.parametrize("alias, name", [("film", "Actor"), ("amazon-photo", "Photo"), ("Coauthor_CS", "CS"),
                                         ("coauthor physics", "Physics"), ("TWITCH_EN", "Twitch-EN"),
                                         ("twitch-en-gb", "Twitch-EN"), ("chameleon_filtered", "Chameleon"),
                                         ("facebook-page-page", "Facebook"), ("cora", "Cora")])
def test_aliases_and_spellings_resolve_to_the_registry_name(alias, name):
    assert ds.canonical_name(alias) == name and get_spec(alias) is DATASETS[name]


def test_unknown_name_lists_the_allowed_names():
    with pytest.raises(ValueError, match=r"name='Coraa' is not a known dataset; allowed names \(case-insensitive\): "
                                         r"Cora, CiteSeer"):
        ds.canonical_name("Coraa")
