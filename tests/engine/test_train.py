"""Batched training engine: a run inside a batch equals the same run alone, early stopping, best-weight
testing, the models against PyG's layers (or a dense re-implementation), and input checks."""
import dataclasses
import math
import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from hpstrat_lite import fold_masks, random_folds
from hpstrat_lite.engine.models import MODELS, build_model, native_bfloat16
from hpstrat_lite.engine.operators import SparseOp, TwoHopOp, graph_operators, two_hop_edges, two_hop_operator
from hpstrat_lite.engine.train import Features, train_runs

from conftest import mirror_has
from hpstrat_lite.engine import operators
from hpstrat_lite.engine import randomness
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution, Protocol


def _train(data, model, tr, va, te, seeds, **options):
    """:func:`train_runs` with the :class:`Protocol` and :class:`Execution` fields a test varies as keywords."""
    fields = {f.name for f in dataclasses.fields(Protocol)}
    return train_runs(data, model, tr, va, te, seeds,
                      protocol=PAPER_PROTOCOL.replace(**{k: v for k, v in options.items() if k in fields}),
                      execution=Execution(**{k: v for k, v in options.items() if k not in fields}))


FAST = dict(max_epochs=40, patience=6, device="cpu")


def _toy_graph(n=90, f=40, c=3, seed=0, sparse=True):
    """A small homophilous graph with bag-of-words features that carry class signal."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    p = np.where(y[:, None] == y[None, :], 0.08, 0.015)
    upper = np.triu(rng.random((n, n)) < p, 1)
    src, dst = np.nonzero(upper | upper.T)
    signal = rng.random((n, f)) < np.where(np.arange(f)[None, :] % c == y[:, None], 0.3, 0.05)
    x = torch.tensor(signal, dtype=torch.float32)
    return Data(x=x.to_sparse_csr() if sparse else x, edge_index=torch.tensor(np.stack([src, dst])),
                y=torch.tensor(y), num_nodes=n)


@pytest.fixture(scope="module")
def toy():
    data = _toy_graph()
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    return data, tr[:, :3], va[:, :3], te[:, :3]


def _assert_same_run(a, b, loss_rtol=1e-4):
    assert a["best_epoch"] == b["best_epoch"]
    assert a["epochs_run"] == b["epochs_run"]
    for key in ("train_acc", "val_acc", "test_acc"):
        assert a[key] == pytest.approx(b[key], abs=1e-6), key
    assert a["val_loss"] == pytest.approx(b["val_loss"], rel=loss_rtol)


# ----------------------------------------------------------------------------------------------
# A run in a batch == the same run alone
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS)
def test_batched_run_equals_solo_run(toy, model):
    data, tr, va, te = toy
    seeds = [11, 12, 13]
    batch = _train(data, model, tr, va, te, seeds, **FAST)
    assert [r["run"] for r in batch] == [0, 1, 2] and [r["seed"] for r in batch] == seeds
    for r in range(3):
        solo = _train(data, model, tr[:, r:r + 1], va[:, r:r + 1], te[:, r:r + 1], [seeds[r]], **FAST)
        _assert_same_run(batch[r], solo[0])
    # the runs really differ (own weights, masks and dropout), so the comparison is not vacuous
    assert len({(r["best_epoch"], r["val_loss"]) for r in batch}) == 3
    assert all(0.0 <= r["test_acc"] <= 1.0 and math.isfinite(r["val_loss"]) for r in batch)


@pytest.mark.parametrize("model", ["GCN", "GAT"])
def test_runs_that_stop_at_different_epochs_stay_independent(toy, model, monkeypatch):
    """Once a run stops, the batch keeps training the others and drops the stopped one from the model
    at once; every run's result equals the same run trained alone."""
    import hpstrat_lite.engine.train as train

    calls = []
    compact = train._compact
    monkeypatch.setattr(train, "_compact", lambda model, opt, keep, hp: calls.append(keep.numel()) or
                        compact(model, opt, keep, hp))
    data, tr, va, te = toy
    seeds = [1, 2, 3, 4, 5, 6]
    tr6, va6, te6 = (torch.cat([m, m], 1) for m in (tr, va, te))
    batch = train_runs(data, model, tr6, va6, te6, seeds,
                       protocol=PAPER_PROTOCOL.replace(max_epochs=120, patience=15),
                       execution=Execution(device="cpu"))
    assert len({r["epochs_run"] for r in batch}) > 1
    stops = sorted({r["epochs_run"] for r in batch})[:-1]  # epochs in which some (not all) runs stopped
    # the batch shrank in each of those epochs, to the runs still training
    assert calls == [sum(r["epochs_run"] > e for r in batch) for e in stops]
    for r in range(6):
        solo = train_runs(data, model, tr6[:, r], va6[:, r], te6[:, r], [seeds[r]],
                          protocol=PAPER_PROTOCOL.replace(max_epochs=120, patience=15),
                          execution=Execution(device="cpu"))
        _assert_same_run(batch[r], solo[0])


def test_split_batches_give_the_same_runs(toy):
    data, tr, va, te = toy
    one = _train(data, "GraphSAGE", tr, va, te, [4, 5, 6], **FAST)
    split = _train(data, "GraphSAGE", tr, va, te, [4, 5, 6], runs_per_batch=2, **FAST)
    assert [r["batch_size"] for r in split] == [2, 2, 1]
    for a, b in zip(one, split):
        _assert_same_run(a, b)


@pytest.mark.parametrize("model,layers", [("MLP", 1), ("MLP", 3), ("GCN", 1), ("GCN", 3)])
def test_depth_and_width_options(toy, model, layers):
    data, tr, va, te = toy
    kw = dict(FAST, num_layers=layers, hidden=16, dropout=0.3, lr=0.02, weight_decay=1e-3)
    batch = _train(data, model, tr[:, :2], va[:, :2], te[:, :2], [7, 8], **kw)
    solo = _train(data, model, tr[:, 1], va[:, 1], te[:, 1], [8], **kw)
    _assert_same_run(batch[1], solo[0])


# ----------------------------------------------------------------------------------------------
# Protocol: early stopping and best weights
# ----------------------------------------------------------------------------------------------

def test_early_stopping_patience(toy):
    data, tr, va, te = toy
    rows = train_runs(data, "GCN", tr, va, te, [0, 1, 2], protocol=PAPER_PROTOCOL.replace(max_epochs=300, patience=7),
                      execution=Execution(device="cpu"))
    for r in rows:
        assert r["stopped_early"]
        assert r["epochs_run"] == r["best_epoch"] + 7
    fixed = train_runs(data, "GCN", tr, va, te, [0, 1, 2],
                       protocol=PAPER_PROTOCOL.replace(max_epochs=25, patience=None),
                       execution=Execution(device="cpu"))
    assert all(r["epochs_run"] == 25 and not r["stopped_early"] for r in fixed)
    assert all(1 <= r["best_epoch"] <= 25 for r in fixed)


def test_test_accuracy_uses_the_best_validation_epoch(toy):
    """Training exactly ``best_epoch`` epochs ends on the best weights: same test accuracy and val loss."""
    data, tr, va, te = toy
    kw = dict(device="cpu")
    full = _train(data, "GCN", tr, va, te, [3, 4, 5], max_epochs=200, patience=20, **kw)
    assert all(r["epochs_run"] > r["best_epoch"] for r in full)
    for r, row in enumerate(full):
        cut = _train(data, "GCN", tr[:, r], va[:, r], te[:, r], [row["seed"]], max_epochs=row["best_epoch"],
                     patience=None, **kw)[0]
        assert cut["best_epoch"] == row["best_epoch"]
        assert cut["test_acc"] == pytest.approx(row["test_acc"], abs=1e-6)
        assert cut["val_loss"] == pytest.approx(row["val_loss"], rel=1e-5)


@pytest.mark.parametrize("aligned", [True, False])
def test_keep_best_copies_the_improved_runs_only(monkeypatch, aligned):
    """Both copy paths (one copy per run for a parameter of many entries per run, ``torch.where`` or a gather and
    scatter for a small one) write the improved runs' weights and leave the others' bests as they were."""
    from hpstrat_lite.engine import train as engine_train

    monkeypatch.setattr(engine_train, "RUN_COPY_MIN", 10)  # [.., 5, 3]: 15 per run, per-run copies; [.., 1, 2]: where
    model = torch.nn.Module()
    model.big = torch.nn.Parameter(torch.randn(4, 5, 3))
    model.small = torch.nn.Parameter(torch.randn(4, 1, 2))
    best = {k: torch.randn(6 if not aligned else 4, *p.shape[1:]) for k, p in model.named_parameters()}
    before = {k: v.clone() for k, v in best.items()}
    improved = torch.tensor([True, False, True, False])
    idx = improved.nonzero().view(-1)
    orig = torch.tensor([0, 2]) if aligned else torch.tensor([5, 1])  # slots 0, 2 hold runs 5, 1 once runs dropped
    engine_train._keep_best(best, model, improved, idx, orig, aligned)
    for k, p in model.named_parameters():
        for slot, run in zip(idx.tolist(), orig.tolist()):
            assert torch.equal(best[k][run], p.detach()[slot])
        untouched = [r for r in range(best[k].shape[0]) if r not in orig.tolist()]
        assert torch.equal(best[k][untouched], before[k][untouched])


# ----------------------------------------------------------------------------------------------
# Features: sparse == dense, normalisations
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", [None, "row", "standard"])
def test_sparse_and_dense_features_agree(norm):
    sp, de = _toy_graph(sparse=True), _toy_graph(sparse=False)
    tr, va, te = fold_masks(random_folds(sp.y.numpy(), k=4, seed=1), k=4)
    a = _train(sp, "GCN", tr[:, :2], va[:, :2], te[:, :2], [0, 1], feature_norm=norm, **FAST)
    b = _train(de, "GCN", tr[:, :2], va[:, :2], te[:, :2], [0, 1], feature_norm=norm, **FAST)
    for ra, rb in zip(a, b):
        _assert_same_run(ra, rb, loss_rtol=1e-3)


def test_sparse_features_stay_sparse_unless_dense():
    toy = _toy_graph(sparse=True).x  # about 13% non-zeros
    assert Features(toy, None, "cpu").op is not None and Features(toy, None, "cpu").dense is None
    full = (torch.rand(50, 20, generator=torch.Generator().manual_seed(0)) < 0.35).float()  # like Amazon's 35%
    f = Features(full.to_sparse_csr(), "row", "cpu")
    assert f.op is None and f.dense is not None
    w = torch.randn(2, 20, 4)
    rows = full / full.sum(1, keepdim=True).clamp(min=1e-12)
    torch.testing.assert_close(f.project(w), rows @ w, atol=1e-5, rtol=1e-5)


def test_feature_normalisations_match_their_formulas():
    x = _toy_graph(sparse=False).x
    x[:, 3] = 0.0  # a constant column: standardised to zero
    w = torch.randn(2, x.shape[1], 6, dtype=torch.float32)
    mu, sd = x.mean(0), x.std(0, unbiased=False)
    z = torch.where(sd > 0, (x - mu) / sd.clamp(min=1e-12), torch.zeros_like(x))
    rows = x / x.sum(1, keepdim=True).clamp(min=1e-12)
    blocks = (z @ w).view(2, -1, 2, 3).permute(2, 0, 1, 3)  # w as two column blocks of width 3
    for xs in (x, x.to_sparse_csr()):
        torch.testing.assert_close(Features(xs, "standard", "cpu").project(w, 2), blocks, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(Features(xs, "standard", "cpu").project(w), z @ w, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(Features(xs, "row", "cpu").project(w), rows @ w, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(Features(xs, None, "cpu").project(w), x @ w, atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------------------------
# The models compute what PyG's layers (or the papers' formulas) compute
# ----------------------------------------------------------------------------------------------

def _batched(data, name, **kw):
    ops = graph_operators(data, name, "cpu")
    model = build_model(name, [21, 22], data.x.shape[1], int(data.y.max()) + 1, ops, **kw).eval()
    with torch.no_grad():
        out = model(Features(data.x, None, "cpu").project(model.w_in, model.in_blocks), None)
    return model, out


def _dense_gcn_adj(data, self_loops=True):
    n = data.num_nodes
    a = torch.zeros(n, n)
    a[data.edge_index[1], data.edge_index[0]] = 1.0
    if self_loops:
        a = a + torch.eye(n)
    d = a.sum(1).pow(-0.5).masked_fill(a.sum(1) == 0, 0.0)
    return d[:, None] * a * d[None, :]


def test_models_match_pyg_layers():
    from torch_geometric.nn import APPNP as PygAPPNP
    from torch_geometric.nn import GATConv, GCNConv, MixHopConv, SAGEConv

    data = _toy_graph(sparse=False)
    x, ei, r = data.x, data.edge_index, 1
    f, c = x.shape[1], int(data.y.max()) + 1
    with torch.no_grad():
        m, out = _batched(data, "GCN")
        c1, c2 = GCNConv(f, 64), GCNConv(64, c)
        c1.lin.weight.copy_(m.w_in[r].T), c1.bias.copy_(m.b0[r, 0])
        c2.lin.weight.copy_(m.w1[r]), c2.bias.copy_(m.b1[r, 0])
        torch.testing.assert_close(out[r], c2(c1(x, ei).relu(), ei), atol=1e-5, rtol=1e-4)

        m, out = _batched(data, "GAT")
        g1, g2 = GATConv(f, 8, heads=8), GATConv(64, c, heads=1, concat=False)
        for g, i, w in ((g1, 0, m.w_in[r].T), (g2, 1, m.w1[r])):
            g.lin.weight.copy_(w), g.bias.copy_(getattr(m, f"b{i}")[r, 0])
            g.att_src.copy_(getattr(m, f"att_src{i}")[r]), g.att_dst.copy_(getattr(m, f"att_dst{i}")[r])
        torch.testing.assert_close(out[r], g2(torch.nn.functional.elu(g1(x, ei)), ei), atol=1e-5, rtol=1e-4)

        m, out = _batched(data, "GraphSAGE")
        s1, s2 = SAGEConv(f, 64), SAGEConv(64, c)
        s1.lin_l.weight.copy_(m.w_in[r, :, :64].T), s1.lin_r.weight.copy_(m.w_in[r, :, 64:].T)
        s1.lin_l.bias.copy_(m.b0[r, 0])
        s2.lin_l.weight.copy_(m.w1[r, :c]), s2.lin_r.weight.copy_(m.w1[r, c:]), s2.lin_l.bias.copy_(m.b1[r, 0])
        torch.testing.assert_close(out[r], s2(s1(x, ei).relu(), ei), atol=1e-5, rtol=1e-4)

        m, out = _batched(data, "MixHop")
        h1, h2 = MixHopConv(f, 64), MixHopConv(192, 64)
        for p in range(3):
            h1.lins[p].weight.copy_(m.w_in[r, :, 64 * p:64 * (p + 1)].T)
            h2.lins[p].weight.copy_(m.w1[r, 64 * p:64 * (p + 1)])
        h1.bias.copy_(m.b0[r, 0]), h2.bias.copy_(m.b1[r, 0])
        hid = h2(h1(x, ei).relu(), ei).relu()
        torch.testing.assert_close(out[r], hid @ m.w_out[r].T + m.b_out[r, 0], atol=1e-5, rtol=1e-4)

        m, out = _batched(data, "APPNP")
        mlp = (x @ m.w_in[r] + m.b0[r, 0]).relu() @ m.w1[r].T + m.b1[r, 0]
        torch.testing.assert_close(out[r], PygAPPNP(K=10, alpha=0.1)(mlp, ei), atol=1e-5, rtol=1e-4)


def _attention_case(seed, heads=2, channels=5):
    """Inputs of the fused attention tests on a 50-node toy graph: ``(graph, x, upstream, keep, gen)`` with
    features ``x`` ``[3, 50, heads, channels]`` (requiring gradients), an upstream gradient whose every third
    row is zero (rows outside the loss: the backward pass skips their edges), a 0/1 dropout keep-mask over
    the edges and the generator that drew them, for the test's own draws. Rows of ``heads * channels``
    floats from 16 on span a cache line, where the edge loops ask for their sources ahead."""
    from hpstrat_lite.engine.operators import AttentionGraph

    graph = AttentionGraph(_toy_graph(n=50), "cpu")
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 50, heads, channels, generator=gen, requires_grad=True)
    upstream = torch.randn(3, 50, heads, channels, generator=gen)
    upstream[:, ::3] = 0.0
    keep = (torch.rand(3, heads, graph.num_edges, generator=gen) > 0.5).to(torch.uint8)
    return graph, x, upstream, keep, gen


@pytest.mark.parametrize("span, factored", [(20.0, True), (79.0, True), (400.0, False)])
def test_fused_attention_matches_per_edge_reference(span, factored, monkeypatch):
    """The numba GAT kernel (forward and all three gradients, with and without the dropout mask)
    against the same maths written per edge with PyG's ``softmax``: with the factorised exponentials
    (source scores spanning 20, and 79, just under ``FACTORED_SPAN``, where the smallest weights come
    near float32's smallest normal numbers) and with the per-edge ones (spanning 400, where node-level
    factors would leave float32's range)."""
    from torch_geometric.utils import softmax

    import hpstrat_lite.engine.kernels as kernels
    from hpstrat_lite.engine.kernels import GATAggregate

    chosen = []
    for name in ("_forward_factored", "_forward"):
        real = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, _real=real, _name=name: (chosen.append(_name), _real(*a)))
    graph, x, upstream, keep, gen = _attention_case(0, heads=4)  # rows of 20 floats: sources asked for ahead
    R, N, H, C = x.shape
    a_src, a_dst = torch.randn(2, R, N, H, generator=gen)  # both LeakyReLU branches
    scale = span / (a_src.amax(1) - a_src.amin(1)).max()  # the widest (run, head) spans `span`
    a_src, a_dst = (scale * a_src).requires_grad_(), (scale * a_dst).requires_grad_()
    for mask, k in ((None, 1.0), (keep, 2.0)):
        out = GATAggregate.apply(x, a_src, a_dst, mask, k, graph)
        got = torch.autograd.grad((out * upstream).sum(), (x, a_src, a_dst))
        e = torch.nn.functional.leaky_relu(a_src[:, graph.src] + a_dst[:, graph.dst], 0.2)  # [R, E, H]
        alpha = softmax(e, graph.dst, num_nodes=N, dim=1)
        if mask is not None:
            alpha = alpha * mask.permute(0, 2, 1) * k
        ref = torch.zeros(R, N, H, C).index_add(1, graph.dst, alpha[..., None] * x[:, graph.src])
        want = torch.autograd.grad((ref * upstream).sum(), (x, a_src, a_dst))
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-4)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-4)
    assert chosen == ["_forward_factored" if factored else "_forward"] * 2


@pytest.mark.parametrize("scale", [2.0, 40.0])  # factorised and per-edge exponentials
def test_gat_aggregate_ahead_gives_the_floats_of_the_separate_calls(scale):
    """One pass for the evaluation output and the next training step's output: bit for bit the two separate
    kernel calls, and the prepared output (forward and gradients) is used only for its own inputs and mask."""
    from hpstrat_lite.engine.kernels import GATAggregate, gat_aggregate_ahead

    graph, x, upstream, keep, gen = _attention_case(1)
    R, N, H, C = x.shape
    a_src = (scale * torch.randn(R, N, H, generator=gen)).requires_grad_()
    a_dst = (scale * torch.randn(R, N, H, generator=gen)).requires_grad_()
    with torch.no_grad():
        out_eval, prepared = gat_aggregate_ahead(x, a_src, a_dst, keep, 2.0, graph)
        assert torch.equal(out_eval, GATAggregate.apply(x, a_src, a_dst, None, 1.0, graph))
    results = []
    for ahead in (prepared, None):
        out = GATAggregate.apply(x, a_src, a_dst, keep, 2.0, graph, ahead)
        results.append((out,) + torch.autograd.grad((out * upstream).sum(), (x, a_src, a_dst)))
    for got, want in zip(*results):
        assert torch.equal(got, want)
    assert results[0][0].data_ptr() == prepared.out.data_ptr()  # the prepared output itself was used
    other = keep.clone()  # same bits, another mask object: computed afresh
    assert not prepared.matches(x, a_src, a_dst, other, 2.0) and not prepared.matches(x, a_src, a_dst, keep, 1.0)
    assert GATAggregate.apply(x, a_src, a_dst, other, 2.0, graph, prepared).data_ptr() != prepared.out.data_ptr()


@pytest.mark.parametrize("scale", [1.0, 30.0])  # factorised and per-edge exponentials
def test_gat_layer_equals_scores_then_aggregate(scale):
    """The fused layer (scores inside, their gradient added into that of ``x`` by one kernel) against the
    scores as an einsum followed by ``GATAggregate``: outputs and the gradients of ``x`` and both score vectors,
    with and without the dropout mask; its evaluation pass computed ahead gives the floats of the separate calls."""
    from hpstrat_lite.engine.kernels import GATAggregate, GATLayer, gat_layer_ahead

    graph, x, upstream, keep, gen = _attention_case(0, heads=4, channels=4)  # one cache line a row
    R, N, H, C = x.shape
    att_src = (scale * torch.randn(R, H, C, generator=gen)).requires_grad_()
    att_dst = (scale * torch.randn(R, H, C, generator=gen)).requires_grad_()
    inputs = (x, att_src, att_dst)
    for mask, k in ((None, 1.0), (keep, 2.0)):
        out = GATLayer.apply(x, att_src, att_dst, mask, k, graph)
        got = torch.autograd.grad((out * upstream).sum(), inputs)
        a_src, a_dst = (torch.einsum("rnhc,rhc->rnh", x, a) for a in (att_src, att_dst))
        ref = GATAggregate.apply(x, a_src, a_dst, mask, k, graph)
        want = torch.autograd.grad((ref * upstream).sum(), inputs)
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-4)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)
    with torch.no_grad():
        out_eval, prepared = gat_layer_ahead(x, att_src, att_dst, keep, 2.0, graph)
        assert torch.equal(out_eval, GATLayer.apply(x, att_src, att_dst, None, 1.0, graph))
    results = []
    for ahead in (prepared, None):
        out = GATLayer.apply(x, att_src, att_dst, keep, 2.0, graph, ahead)
        results.append((out,) + torch.autograd.grad((out * upstream).sum(), inputs))
    for got, want in zip(*results):
        assert torch.equal(got, want)
    assert results[0][0].data_ptr() == prepared.out.data_ptr()


def test_run_linear_gradients_equal_autograd_bmm():
    """The per-run linear map's own backward pass (``models._RunLinear``) against autograd's ``bmm``: the
    gradients of the input, the weights and the bias, with and without a bias."""
    from hpstrat_lite.engine.models import _RunLinear

    gen = torch.Generator().manual_seed(3)
    h = torch.randn(3, 50, 16, generator=gen, requires_grad=True)
    w = torch.randn(3, 7, 16, generator=gen, requires_grad=True)
    b = torch.randn(3, 1, 7, generator=gen, requires_grad=True)
    up = torch.randn(3, 50, 7, generator=gen)
    for bias in (None, b):
        out = _RunLinear.apply(h, w, bias)
        ref = torch.bmm(h, w.transpose(1, 2)) + (0 if bias is None else bias)
        inputs = (h, w) if bias is None else (h, w, b)
        got = torch.autograd.grad((out * up).sum(), inputs)
        want = torch.autograd.grad((ref * up).sum(), inputs)
        torch.testing.assert_close(out, ref)
        for g, wnt in zip(got, want):
            torch.testing.assert_close(g, wnt, rtol=1e-5, atol=1e-5)


def test_dropout_bits_are_the_bits_of_the_random_words():
    """The CPU path of ``RunRandom`` (random words unpacked by ``kernels.unpack_bits``) gives the bits that
    PyTorch's shifts (``randomness._shift_bits``, the path off CPU) take from the same generators' words, for
    lengths that are and are not multiples of 8."""
    from hpstrat_lite.engine.kernels import unpack_bits
    from hpstrat_lite.engine.randomness import RunRandom, _shift_bits

    for shape in [(8, 1000), (13,), (3, 7, 5), (64,)]:
        fast, plain = RunRandom([0, 4, 9], "cpu"), RunRandom([0, 4, 9], "cpu")
        n = math.prod(shape)
        for _ in range(2):  # the generators advance alike
            words = torch.stack([torch.randint(-2 ** 63, 2 ** 63 - 1, ((n + 63) // 64,), dtype=torch.int64,
                                               generator=g) for g in plain.gens])
            assert torch.equal(fast.keep(shape, 0.5), _shift_bits(words, n).view(3, *shape))
    words = torch.tensor([[0b1011_0001 - 2 ** 63]], dtype=torch.int64)  # the top bit set: bit 63
    bits = unpack_bits(words, 64)[0]
    assert bits[:8].tolist() == [1, 0, 0, 0, 1, 1, 0, 1] and bits[63] == 1 and int(bits.sum()) == 5
    with pytest.raises(ValueError, match="65 bits asked of 1 64-bit words"):
        unpack_bits(words, 65)


def test_masks_drawn_ahead_are_the_masks_drawn_later():
    from hpstrat_lite.engine.randomness import RunRandom

    plain, ahead = RunRandom([0, 1, 2], "cpu"), RunRandom([0, 1, 2], "cpu")
    first = [plain.keep((4, 6), 0.5), plain.keep((5,), 0.3), plain.keep((4, 6), 0.5)]
    before = ahead.states()
    peeked = ahead.peek((4, 6), 0.5)
    assert all(torch.equal(a, b) for a, b in zip(ahead.states(), before))  # what a checkpoint saves
    assert ahead.keep((4, 6), 0.5) is peeked and torch.equal(peeked, first[0])
    assert torch.equal(ahead.keep((5,), 0.3), first[1])
    ahead.peek((4, 6), 0.5)
    ahead.subset([0, 2])  # runs 0 and 2 remain: their generators and their rows of the mask drawn ahead
    assert torch.equal(ahead.keep((4, 6), 0.5), first[2][[0, 2]]) and len(ahead.gens) == 2
    ahead.peek((4, 6), 0.5)
    with pytest.raises(RuntimeError, match=r"keep\(\(5,\), 0.5\) after peek\(\(4, 6\), 0.5\)"):
        ahead.keep((5,), 0.5)


def test_bias_elu_keep_equals_torch_ops():
    """The fused GAT activation: ELU(h + b) * keep, forward and both gradients, with and without a mask."""
    from hpstrat_lite.engine.kernels import bias_elu_keep

    gen = torch.Generator().manual_seed(2)
    h = torch.randn(3, 700, 16, generator=gen, requires_grad=True)  # more rows than one parallel block
    b = torch.randn(3, 1, 16, generator=gen, requires_grad=True)
    up = torch.randn(3, 700, 16, generator=gen)
    for keep in (None, (torch.rand(3, 700, 16, generator=gen) > 0.5).to(torch.uint8)):
        out = bias_elu_keep(h, b, keep)
        got = torch.autograd.grad((out * up).sum(), (h, b))
        ref = torch.nn.functional.elu(h + b) * (1 if keep is None else keep)
        want = torch.autograd.grad((ref * up).sum(), (h, b))
        assert torch.equal(out, ref)  # the same torch ELU on the same values
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_keep_mask_kernel_equals_torch_mul():
    from hpstrat_lite.engine.kernels import apply_keep_mask

    gen = torch.Generator().manual_seed(0)
    h = torch.randn(3, 7, 5, generator=gen, requires_grad=True)
    keep = (torch.rand(3, 7, 5, generator=gen) > 0.5).to(torch.uint8)
    up = torch.randn(3, 7, 5, generator=gen)
    out = apply_keep_mask(h, keep)
    (grad,) = torch.autograd.grad((out * up).sum(), h)
    assert torch.equal(out, h.detach() * keep) and torch.equal(grad, up * keep)
    strided = keep.transpose(0, 1)  # non-contiguous inputs
    assert torch.equal(apply_keep_mask(h.detach().transpose(0, 1), strided), (h.detach() * keep).transpose(0, 1))


@pytest.mark.parametrize("switch, exact", [("FUSED_ATTENTION", False), ("GAT_AHEAD", True)])
def test_gat_trains_the_same_runs_on_every_path(toy, monkeypatch, switch, exact):
    """CPU uses the fused kernel, CUDA the PyTorch-op path: both give the same runs; with or without the
    evaluation pass computing the next step's first layer ahead: the same floats."""
    import hpstrat_lite.engine.models as models

    data, tr, va, te = toy
    default = _train(data, "GAT", tr, va, te, [0, 1, 2], **FAST)
    monkeypatch.setattr(models, switch, False)
    other = _train(data, "GAT", tr, va, te, [0, 1, 2], **FAST)
    for a, b in zip(default, other):
        _assert_same_run(a, b, loss_rtol=1e-3)
        if exact:
            assert (a["test_acc"], a["val_loss"]) == (b["test_acc"], b["val_loss"])


@pytest.mark.parametrize("runs, width", [(3, 24), (12, 40), (12, 8), (20, 15), (1, 5)])
def test_numba_spmm_matches_torch_mm_with_gradients(runs, width, monkeypatch):
    """The CPU kernel behind every sparse product (propagation and sparse-feature projection, forward and
    backward) equals torch's CSR matmul; (12, 8) and (20, 15) take the channel-stack branch (few columns
    in all / narrow runs), (3, 24) and (12, 40) one product per run."""
    import hpstrat_lite.engine.models as models

    g = torch.Generator().manual_seed(0)
    dense = torch.rand(40, 30, generator=g) * (torch.rand(40, 30, generator=g) < 0.2)
    idx = dense.nonzero().T
    op = operators.SparseOp.from_edges(idx[0], idx[1], dense[idx[0], idx[1]], (40, 30), "cpu")
    h = torch.randn(runs, 30, width, generator=g)
    w = torch.randn(runs, 30, 3 * width, generator=g)
    results = {}
    for numba_on in (True, False):
        monkeypatch.setattr(operators, "NUMBA_SPMM", numba_on)
        hh, ww = h.clone().requires_grad_(), w.clone().requires_grad_()
        prop, proj = op @ hh, op.project(ww, blocks=3)
        (prop.square().sum() + (proj * torch.arange(proj.numel()).view_as(proj)).sum()).backward()
        results[numba_on] = (prop, proj, hh.grad, ww.grad)
    expected = (torch.einsum("ij,rjd->rid", dense, h),
                torch.einsum("ij,rjbc->bric", dense, w.view(runs, 30, 3, width)))
    for got, want in zip(results[True], results[False]):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for got, want in zip(results[True][:2], expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("runs, width", [(1, 64), (4, 17), (12, 40)])
def test_scattered_transposed_product_equals_the_gathered_one(runs, width):
    """``spmm_t`` (scatter from A's rows, parallel over runs) gives the floats of ``spmm`` on A^T's CSR, bit for
    bit, and the projection's backward takes it with two or more runs per thread."""
    import hpstrat_lite.engine.models as models
    from hpstrat_lite.engine.kernels import csr_arrays, spmm, spmm_t

    g = torch.Generator().manual_seed(3)
    dense = torch.rand(60, 45, generator=g) * (torch.rand(60, 45, generator=g) < 0.3)
    idx = dense.nonzero().T
    op = operators.SparseOp.from_edges(idx[0], idx[1], dense[idx[0], idx[1]], (60, 45), "cpu")
    grad = torch.randn(runs, 60, width, generator=g)
    got = spmm_t(csr_arrays(op.matrix), tuple(op.matrix.shape), grad)
    assert torch.equal(got, spmm(csr_arrays(op.transpose), tuple(op.transpose.shape), grad))
    torch.testing.assert_close(got, torch.einsum("ij,rid->rjd", dense, grad), rtol=1e-5, atol=1e-5)
    assert torch.equal(operators._bmm_sparse_t(op.matrix, op.transpose, grad), got)


def test_gprgnn_and_h2gcn_match_dense_formulas():
    data = _toy_graph(sparse=False)
    x, r = data.x, 0
    with torch.no_grad():
        m, out = _batched(data, "GPRGNN")
        h = (x @ m.w_in[r] + m.b0[r, 0]).relu() @ m.w1[r].T + m.b1[r, 0]
        a = _dense_gcn_adj(data)
        gamma = 0.1 * 0.9 ** torch.arange(11.0)
        gamma[-1] = 0.9 ** 10
        torch.testing.assert_close(m.gamma[r].view(-1), gamma)
        ref = sum(gamma[k] * torch.linalg.matrix_power(a, k) @ h for k in range(11))
        torch.testing.assert_close(out[r], ref, atol=1e-5, rtol=1e-4)

        m, out = _batched(data, "H2GCN")
        n = data.num_nodes
        adj = torch.zeros(n, n)
        adj[data.edge_index[1], data.edge_index[0]] = 1.0
        two = ((adj @ adj) > 0).float() * (1 - adj) * (1 - torch.eye(n))  # exactly two hops away

        def norm(b):
            d = b.sum(1).pow(-0.5).masked_fill(b.sum(1) == 0, 0.0)
            return d[:, None] * b * d[None, :]

        a1, a2 = norm(adj), norm(two)
        r0 = (x @ m.w_in[r] + m.b0[r, 0]).relu()
        r1 = torch.cat([a1 @ r0, a2 @ r0], 1)
        r2 = torch.cat([a1 @ r1, a2 @ r1], 1)
        ref = torch.cat([r0, r1, r2], 1) @ m.w_out[r].T + m.b_out[r, 0]
        torch.testing.assert_close(out[r], ref, atol=1e-5, rtol=1e-4)


def test_h2gcn_trunk_on_64_wide_pieces_is_bit_identical_to_the_concatenation(data_root):
    # H2GCN's rounds multiply the hidden-wide pieces separately; the paper's form multiplies the
    # concatenation [A1 r || A2 r]. Same columns, same sums: equal bit for bit, forward and backward,
    # on Cora's factorised 2-hop operator.
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora", root=data_root)
    ops = graph_operators(data, "H2GCN", "cpu")
    assert isinstance(ops["hop2"], TwoHopOp)
    m = build_model("H2GCN", [0, 1, 2], data.num_features, int(data.y.max()) + 1, ops)
    x0 = torch.randn(3, data.num_nodes, 64, generator=torch.Generator().manual_seed(0))
    g = torch.randn(3, data.num_nodes, 7 * 64, generator=torch.Generator().manual_seed(1))

    def concatenated(y):
        r = y.add(m.b0).relu()
        reps = [r]
        for _ in range(2):
            r = torch.cat([ops["hop1"] @ r, ops["hop2"] @ r], dim=2)
            reps.append(r)
        return torch.cat(reps, dim=2)

    outs, grads = [], []
    for trunk in (lambda y: m.trunk(y * 1.0), concatenated):
        x = x0.clone().requires_grad_()
        out = trunk(x)
        (out * g).sum().backward()
        outs.append(out.detach())
        grads.append(x.grad)
    assert torch.equal(outs[0], outs[1])
    assert torch.equal(grads[0], grads[1])


def test_two_hop_neighbourhood_excludes_self_and_one_hop():
    # path 0-1-2-3 plus triangle 3-4-5: N2(0) = {2}; N2(3) = {1}; 4 and 5 are 1-hop of each other
    und = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (3, 5)]
    ei = torch.tensor([[a for a, b in und] + [b for a, b in und], [b for a, b in und] + [a for a, b in und]])
    src, dst = two_hop_edges(Data(edge_index=ei, num_nodes=6))
    got = sorted(zip(src.tolist(), dst.tolist()))
    want = sorted({(0, 2), (2, 0), (1, 3), (3, 1), (2, 4), (4, 2), (2, 5), (5, 2)})
    assert got == want


def _dense_two_hop(data):
    n = data.num_nodes
    adj = torch.zeros(n, n)
    adj[data.edge_index[1], data.edge_index[0]] = 1.0
    adj.fill_diagonal_(0.0)
    two = ((adj @ adj) > 0).float() * (1 - adj) * (1 - torch.eye(n))
    d = two.sum(1).pow(-0.5).masked_fill(two.sum(1) == 0, 0.0)
    return d[:, None] * two * d[None, :]


@pytest.mark.parametrize("share, kind", [(0.8, TwoHopOp), (0.0, SparseOp)])
def test_two_hop_operator_factorised_equals_explicit_matrix(share, kind):
    # dense clusters: many 2-hop pairs joined by several paths, so the factorised form is chosen at 0.8
    data = _toy_graph(n=120, seed=3)
    data.edge_index = torch.cat([data.edge_index, torch.tensor([[0, 1, 1, 0], [0, 0, 2, 2]])], 1)  # loop, dup
    op = two_hop_operator(data, "cpu", factor_share=share)
    assert isinstance(op, kind)
    h = torch.randn(3, 120, 5, requires_grad=True)
    out = op @ h
    ref = _dense_two_hop(data)
    torch.testing.assert_close(out, ref @ h.detach(), atol=1e-5, rtol=1e-5)
    g = torch.randn_like(out)
    out.backward(g)
    torch.testing.assert_close(h.grad, ref.T @ g, atol=1e-5, rtol=1e-5)


def test_two_hop_operator_keeps_explicit_matrix_on_sparse_graphs():
    # a path: every 2-hop pair has one path, so the factorised form would read more entries
    ei = torch.tensor([[i for i in range(29)] + [i + 1 for i in range(29)],
                       [i + 1 for i in range(29)] + [i for i in range(29)]])
    data = Data(edge_index=ei, num_nodes=30)
    op = two_hop_operator(data, "cpu")
    assert isinstance(op, SparseOp)
    torch.testing.assert_close(op @ torch.eye(30)[None], _dense_two_hop(data)[None])


def test_models_have_independent_runs_and_seeded_init():
    data = _toy_graph()
    ops = graph_operators(data, "GAT", "cpu")
    a = build_model("GAT", [5, 6], 40, 3, ops)
    b = build_model("GAT", [6], 40, 3, ops)
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        torch.testing.assert_close(pa[1], pb[0], msg=name)
    assert not torch.equal(a.w_in[0], a.w_in[1])


def test_gprgnn_gamma_has_no_weight_decay():
    from hpstrat_lite.engine.train import _optimizer

    data = _toy_graph()
    model = build_model("GPRGNN", [0, 1], 40, 3, graph_operators(data, "GPRGNN", "cpu"))
    groups = _optimizer(model, {"weight_decay": 5e-4, "lr": 0.01}).param_groups
    assert [g["weight_decay"] for g in groups] == [5e-4, 0.0]
    assert groups[1]["params"] == [model.gamma]


# ----------------------------------------------------------------------------------------------
# Real data
# ----------------------------------------------------------------------------------------------

@pytest.mark.skipif(not mirror_has("Cora", "raw"), reason="HPSTRAT_DATA with Cora is not available")
def test_cora_batch_equals_solo_sparse_equals_dense():
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora", sparse_features=True)
    assert data.x.layout == torch.sparse_csr
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    kw = dict(max_epochs=30, patience=5, device="cpu")
    batch = _train(data, "GCN", tr[:, :3], va[:, :3], te[:, :3], [0, 1, 2], **kw)
    solo = _train(data, "GCN", tr[:, 2], va[:, 2], te[:, 2], [2], **kw)
    _assert_same_run(batch[2], solo[0])
    assert all(r["test_acc"] > 0.7 for r in batch)  # GCN on Cora learns within 30 epochs
    dense = Data(x=data.x.to_dense(), edge_index=data.edge_index, y=data.y)
    same = _train(dense, "GCN", tr[:, :3], va[:, :3], te[:, :3], [0, 1, 2], **kw)
    for a, b in zip(batch, same):
        _assert_same_run(a, b, loss_rtol=1e-3)


def _cora_rows():
    """Cora and the ``[runs, nodes]`` train and validation masks of the four rounds of k = 4 random folds."""
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora")
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    return data, tr.t(), va.t()


@pytest.mark.skipif(not mirror_has("Cora", "raw"), reason="HPSTRAT_DATA with Cora is not available")
@pytest.mark.parametrize("share", [0.8, 0.0])  # factorised (TwoHopOp) and explicit (SparseOp) 2-hop operator
def test_selected_product_equals_the_full_one_where_it_is_read(share):
    """``op.select(h, rows)``: the full product's floats at the rows a run reads, zeros elsewhere; its
    backward (entries of non-live columns left out) gives exactly the full backward of a gradient that is
    zero outside the live rows."""
    from hpstrat_lite.engine.operators import RunRows

    data, tr, va = _cora_rows()
    op = two_hop_operator(data, "cpu", factor_share=share)
    rows = RunRows(tr | va, tr)
    h = torch.randn(4, data.num_nodes, 64, generator=torch.Generator().manual_seed(0))
    g = torch.randn(h.shape, generator=torch.Generator().manual_seed(1)) * tr[:, :, None]
    outs, grads = [], []
    for select in (False, True):
        x = h.clone().requires_grad_()
        out = op.select(x, rows) if select else op @ x
        out.backward(g)
        outs.append(out.detach())
        grads.append(x.grad)
    need = (tr | va)[:, :, None]
    assert torch.equal(outs[1], outs[0] * need)
    assert torch.equal(grads[1], grads[0])
    # a subset follows dropped runs: runs 3 and 1 of the batch, in that order
    sub = rows.subset(torch.tensor([3, 1]))
    x = h[[3, 1]].clone().requires_grad_()
    op.select(x, sub).backward(g[[3, 1]])
    assert torch.equal(x.grad, grads[0][[3, 1]])


@pytest.mark.parametrize("model", ["H2GCN", "GAT"])
def test_row_selection_trains_the_same_runs(monkeypatch, model):
    """Products computed only where the runs read them (H2GCN's last round; GAT's output layer at the rows a
    step's loss or the evaluation reads): the same runs, float for float, through early stopping (subsets of the
    batch; the selection depends on the runs and the width, not on the graph's size: a small graph serves)."""
    import hpstrat_lite.engine.models as models
    from hpstrat_lite.engine import kernels

    # the switch, the op that computes the selected rows, and whether one call of it selected rows
    module, switch, op, selects = {
        "H2GCN": (operators, "SELECT_ROWS", operators._SelectSpMM, lambda args: True),
        "GAT": (models, "GAT_SELECT_ROWS", kernels.GATLayer, lambda args: args[-1] is not None)}[model]
    data = _toy_graph()
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    kw = dict(max_epochs=60, patience=10, device="cpu")
    selected, apply = [], op.apply
    monkeypatch.setattr(op, "apply", lambda *a: selected.append(selects(a)) or apply(*a))
    got = {}
    for select in (False, True):
        selected.clear()
        monkeypatch.setattr(module, switch, select)
        got[select] = _train(data, model, tr, va, te, [0, 1, 2, 3], **kw)
        assert any(selected) == select  # the selected product ran only when switched on
    keys = ("best_epoch", "epochs_run", "train_loss", "val_loss", "test_loss", "train_acc", "val_acc", "test_acc")
    assert [[r[k] for k in keys] for r in got[True]] == [[r[k] for k in keys] for r in got[False]]
    assert len({r["epochs_run"] for r in got[True]}) > 1  # runs stopped at different epochs: subsets were used


@pytest.mark.parametrize("factored", [True, False])
def test_gat_layer_on_selected_rows_gives_those_rows_and_the_same_gradients(monkeypatch, factored):
    """``GATLayer`` with a row list computes exactly the listed rows of each run (zeros elsewhere), and with a
    gradient that is zero outside them gives the full layer's gradients, float for float; both forward kernels
    (node-level factors and one exponential per edge)."""
    import numpy as np

    from hpstrat_lite.engine import kernels
    from hpstrat_lite.engine.operators import AttentionGraph, _row_lists

    if not factored:
        monkeypatch.setattr(kernels, "FACTORED_SPAN", -1.0)
    data = _toy_graph()
    graph = AttentionGraph(data, "cpu")
    gen = torch.Generator().manual_seed(5)
    R, n, H, C = 3, data.num_nodes, 2, 5
    x = torch.randn(R, n, H, C, generator=gen)
    att_src, att_dst = torch.randn(R, H, C, generator=gen), torch.randn(R, H, C, generator=gen)
    keep = (torch.rand(R, H, graph.num_edges, generator=gen) > 0.3).to(torch.uint8)
    chosen = torch.rand(R, n, generator=gen) < 0.4
    rows = _row_lists(chosen.numpy())
    up = torch.randn(R, n, H, C, generator=gen) * chosen[:, :, None, None]
    results = []
    for sel in (None, rows):
        leaves = [t.clone().requires_grad_() for t in (x, att_src, att_dst)]
        out = kernels.GATLayer.apply(*leaves, keep, 2.0, graph, None, sel)
        grads = torch.autograd.grad((out * up).sum(), leaves)
        results.append((out.detach(), grads))
    (full, full_grads), (part, part_grads) = results
    assert torch.equal(part, full * chosen[:, :, None, None])
    for a, b in zip(part_grads, full_grads):
        assert torch.equal(a, b)
    assert np.array_equal(rows[1], np.concatenate([[0], np.cumsum(chosen.sum(1).numpy())]))


def test_run_rows_rejects_masks_of_other_shapes():
    from hpstrat_lite.engine.operators import RunRows

    with pytest.raises(ValueError, match=r"boolean \[runs, nodes\] masks of one shape.*\(3, 5\).*\(3, 4\)"):
        RunRows(torch.zeros(3, 5, dtype=torch.bool), torch.zeros(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="torch.float32"):
        RunRows(torch.zeros(3, 5), torch.zeros(3, 5, dtype=torch.bool))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("model", MODELS)
def test_batched_run_equals_solo_run_on_cuda(toy, model):
    """The batch-equals-alone check on a GPU (the PyTorch-op path; cuSPARSE and atomics sum in their own order)."""
    data, tr, va, te = toy
    seeds = [11, 12, 13]
    batch = _train(data, model, tr, va, te, seeds, **dict(FAST, device="cuda"))
    for r in range(3):
        solo = _train(data, model, tr[:, r:r + 1], va[:, r:r + 1], te[:, r:r + 1], [seeds[r]],
                      **dict(FAST, device="cuda"))
        _assert_same_run(batch[r], solo[0])
    assert len({(r["best_epoch"], r["val_loss"]) for r in batch}) == 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu(toy):
    data, tr, va, te = toy
    cpu = _train(data, "GCN", tr, va, te, [0, 1, 2], **FAST)
    gpu = _train(data, "GCN", tr, va, te, [0, 1, 2], **dict(FAST, device="cuda"))
    for a, b in zip(cpu, gpu):
        assert b["device"].startswith("cuda")
        assert abs(a["test_acc"] - b["test_acc"]) <= 0.05


# ----------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------

def test_bad_inputs_raise_clear_errors(toy):
    data, tr, va, te = toy
    seeds = [0, 1, 2]
    with pytest.raises(ValueError, match=r"model must be one of MLP, GCN, GAT.*GPRGNN; got 'GIN'"):
        train_runs(data, "GIN", tr, va, te, seeds)
    from hpstrat_lite.engine.models import check_model

    # names match case-insensitively, ignoring - and _, and come back as written in MODELS
    assert [check_model(m) for m in ("gcn", "GraphSage", "gpr-gnn", "H2GCN", "mix_hop")] == [
        "GCN", "GraphSAGE", "GPRGNN", "H2GCN", "MixHop"]
    with pytest.raises(ValueError, match=r"model must be one of .*; got 3"):
        check_model(3)
    with pytest.raises(ValueError, match=r"seeds has 2 entries but the masks have 3 run"):
        train_runs(data, "GCN", tr, va, te, [0, 1])
    with pytest.raises(ValueError, match=r"seeds must be an integer >= 0; got -1"):
        train_runs(data, "GCN", tr, va, te, [0, 1, -1])
    with pytest.raises(ValueError, match=r"same shape \[num_nodes, runs\]"):
        train_runs(data, "GCN", tr, va[:, :2], te, seeds)
    with pytest.raises(ValueError, match=r"val_mask must have shape \[num_nodes, runs\] = \[90, R\]; got \(80, 3\)"):
        train_runs(data, "GCN", tr, va[:80], te, seeds)
    with pytest.raises(ValueError, match=r"train_mask must be a boolean tensor.*got dtype torch.int64"):
        train_runs(data, "GCN", tr.long(), va, te, seeds)
    empty = tr.clone()
    empty[:, 1] = False
    with pytest.raises(ValueError, match=r"train_mask selects no node in run\(s\) \[1\]"):
        train_runs(data, "GCN", empty, va, te, seeds)
    with pytest.raises(ValueError, match=r"overlap in run 0"):
        train_runs(data, "GCN", tr, tr, te, seeds)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\); got 1.0"):
        train_runs(data, "GCN", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(dropout=1.0))
    with pytest.raises(ValueError, match=r"patience must be None or an integer >= 1; got 0"):
        train_runs(data, "GCN", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(patience=0))
    with pytest.raises(ValueError, match=r"max_epochs must be an integer >= 1; got 2.5"):
        train_runs(data, "GCN", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(max_epochs=2.5))
    with pytest.raises(ValueError, match=r"lr must be a number > 0; got 0"):
        train_runs(data, "GCN", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(lr=0))
    with pytest.raises(ValueError, match=r"feature_norm must be one of \(None, 'row', 'standard'\); got 'l2'"):
        train_runs(data, "GCN", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(feature_norm="l2"))
    with pytest.raises(ValueError, match=r"device must be 'auto', 'cpu', 'cuda'.*got 'tpu'"):
        train_runs(data, "GCN", tr, va, te, seeds, execution=Execution(device="tpu"))
    with pytest.raises(ValueError, match=r"hidden=20 must be divisible by the 8 GAT heads"):
        train_runs(data, "GAT", tr, va, te, seeds, protocol=PAPER_PROTOCOL.replace(hidden=20))
    with pytest.raises(ValueError, match=r"num_threads must be an integer >= 1; got 0"):
        train_runs(data, "GCN", tr, va, te, seeds, execution=Execution(num_threads=0))
    with pytest.raises(ValueError, match=r"runs_per_batch must be an integer >= 1; got 0"):
        train_runs(data, "GCN", tr, va, te, seeds, execution=Execution(runs_per_batch=0))
    bad_y = Data(x=data.x, edge_index=data.edge_index, y=data.y - 1, num_nodes=data.num_nodes)
    with pytest.raises(ValueError, match=r"data.y must hold class ids 0..C-1; got -1"):
        train_runs(bad_y, "GCN", tr, va, te, seeds)


_CHECKPOINTED = """
import sys
import hpstrat_lite.engine.train as T
from hpstrat_lite import fold_masks, load_dataset, random_folds
from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution
T.CHECKPOINT_SECONDS = 0.0  # save after every epoch
data = load_dataset("Texas", root=sys.argv[2])
tr, va, te = fold_masks(random_folds(data.y, k=4, seed=0), k=4)
T.train_runs(data, sys.argv[3], tr, va, te, [0, 1, 2, 3], protocol=PAPER_PROTOCOL.replace(max_epochs=300, patience=30),
             execution=Execution(device="cpu", runs_per_batch=2, checkpoint=sys.argv[1]))
"""


@pytest.mark.parametrize("model", ["GCN", "GAT"])
def test_killed_training_resumes_from_its_checkpoint_with_the_same_numbers(model, data_root, tmp_path, monkeypatch):
    """A batch killed midway continues from its saved state (weights, Adam, dropout generators, early
    stopping) and gives the numbers of an uninterrupted call; a finished batch is not retrained. GCN's
    call is killed in another process (SIGKILL: no handler runs); GAT's (its attention and dropout state
    saved and restored the same way) is interrupted in this one, at the same point."""
    import subprocess
    import sys
    import time

    import hpstrat_lite.engine.train as train_module
    from hpstrat_lite import fold_masks, load_dataset, random_folds

    ckpt = tmp_path / "ckpt"

    def second_batch_saved():  # the first batch (runs 0-1) has finished and the second one has saved a state
        return len(list(ckpt.glob("*.rows.json"))) >= 1 and len(list(ckpt.glob("*.pt"))) >= 2

    data = load_dataset("Texas", root=data_root)
    tr, va, te = fold_masks(random_folds(data.y, k=4, seed=0), k=4)
    args = dict(max_epochs=300, patience=30, device="cpu", runs_per_batch=2)
    if model == "GCN":
        proc = subprocess.Popen([sys.executable, "-c", _CHECKPOINTED, str(ckpt), str(data_root), model])
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not second_batch_saved():
            time.sleep(0.02)
        proc.kill()
        proc.wait()
        assert proc.returncode != 0, "the call should be killed in its second batch, before it returns"
    else:
        real_losses = train_module._run_losses

        def interrupted(*a):
            if second_batch_saved():
                raise KeyboardInterrupt
            return real_losses(*a)

        with monkeypatch.context() as m:
            m.setattr(train_module, "CHECKPOINT_SECONDS", 0.0)  # save after every epoch, as _CHECKPOINTED does
            m.setattr(train_module, "_run_losses", interrupted)
            with pytest.raises(KeyboardInterrupt):
                _train(data, model, tr, va, te, [0, 1, 2, 3], checkpoint=ckpt, **args)
    assert len(list(ckpt.glob("*.rows.json"))) == 1 and len(list(ckpt.glob("*.pt"))) == 2

    resumed = _train(data, model, tr, va, te, [0, 1, 2, 3], checkpoint=ckpt, **args)
    fresh = _train(data, model, tr, va, te, [0, 1, 2, 3], **args)
    for a, b in zip(resumed, fresh):
        assert (a["best_epoch"], a["epochs_run"], a["test_acc"], a["val_acc"]) == (
            b["best_epoch"], b["epochs_run"], b["test_acc"], b["val_acc"])
        assert a["val_loss"] == pytest.approx(b["val_loss"], rel=1e-6)
    assert not list(ckpt.iterdir())  # cleaned up


def test_checkpoint_of_other_data_is_not_continued(toy, monkeypatch, tmp_path):
    """Same runs and checkpoint folder, other features: the old state is ignored (with a warning)."""
    import hpstrat_lite.engine.train as train_module

    data, tr, va, te = toy
    monkeypatch.setattr(train_module, "CHECKPOINT_SECONDS", 0.0)
    real_losses, calls = train_module._run_losses, {"n": 0}

    def interrupted(*args):
        calls["n"] += 1
        if calls["n"] > 30:
            raise KeyboardInterrupt
        return real_losses(*args)

    monkeypatch.setattr(train_module, "_run_losses", interrupted)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        _train(data, "GCN", tr, va, te, [0, 1, 2], checkpoint=ckpt, **FAST)
    assert list(ckpt.glob("*.pt"))
    monkeypatch.setattr(train_module, "_run_losses", real_losses)
    other = data.clone()
    other.x = data.x * 2
    with pytest.warns(UserWarning, match="written for other data"):
        resumed = _train(other, "GCN", tr, va, te, [0, 1, 2], checkpoint=ckpt, **FAST)
    fresh = _train(other, "GCN", tr, va, te, [0, 1, 2], **FAST)
    for a, b in zip(resumed, fresh):
        assert (a["best_epoch"], a["test_acc"]) == (b["best_epoch"], b["test_acc"])


@pytest.mark.parametrize("width", [1, 7, 64])
def test_unrolled_spmm_is_bit_identical_to_the_plain_loop(width):
    """The kernel's four-entries-per-pass local accumulation adds in the same order as one entry at a
    time, so it must give exactly the same floats (rows of 0 to 11 entries cover the remainder loop)."""
    import numpy as np

    from hpstrat_lite.engine.kernels import _spmm, _spmm_plain

    rng = np.random.default_rng(0)
    n_out, n_in, runs = 60, 50, 3
    counts = np.arange(n_out) % 12
    crow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    col = rng.integers(0, n_in, crow[-1]).astype(np.int64)
    val = rng.standard_normal(crow[-1]).astype(np.float32)
    h = rng.standard_normal((runs, n_in, width)).astype(np.float32)
    got, want = np.full((runs, n_out, width), np.nan, np.float32), np.empty((runs, n_out, width), np.float32)
    _spmm(crow, col, val, h, got)
    _spmm_plain(crow, col, val, h, want)
    assert np.array_equal(got, want)
    assert np.all(got[:, counts == 0] == 0)


@pytest.mark.parametrize("runs, blocks, width", [(1, 1, 7), (5, 1, 64), (3, 3, 5), (12, 2, 16)])
def test_stacked_projection_gives_the_floats_of_one_product_per_run_and_block(runs, blocks, width):
    """``kernels.project`` sums each output row for every run and block in one pass over a row-major copy of
    the weights: each output must be exactly the float ``spmm`` gives for its run and block (rows of 0 to 11
    entries cover the remainder loop), and the projection op must take it on CPU."""
    import numpy as np

    from hpstrat_lite.engine.kernels import _spmm, project

    rng = np.random.default_rng(1)
    n_out, n_in = 60, 50
    counts = np.arange(n_out) % 12
    crow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    col = rng.integers(0, n_in, crow[-1]).astype(np.int64)
    val = rng.standard_normal(crow[-1]).astype(np.float32)
    w = torch.from_numpy(rng.standard_normal((runs, n_in, blocks * width)).astype(np.float32))
    got = project((crow, col, val), (n_out, n_in), w, blocks=blocks)
    assert got.shape == ((runs, n_out, width) if blocks == 1 else (blocks, runs, n_out, width))
    assert got._base is None  # not a view: the projection op's output is modified in place by the models
    got = got.view(blocks, runs, n_out, width)
    for b in range(blocks):
        slab = np.ascontiguousarray(w[:, :, b * width:(b + 1) * width].numpy())
        want = np.empty((runs, n_out, width), np.float32)
        _spmm(crow, col, val, slab, want)
        assert np.array_equal(got[b].numpy(), want)
    assert torch.all(got[:, :, counts == 0] == 0)

    op = operators.SparseOp.from_edges(torch.from_numpy(np.repeat(np.arange(n_out), counts)), torch.from_numpy(col),
                                       torch.from_numpy(val), (n_out, n_in), "cpu")
    dense = op.matrix.to_dense()
    out = op.project(w, blocks)
    expected = torch.einsum("ij,rjbc->bric", dense, w.view(runs, n_in, blocks, width))
    torch.testing.assert_close(out, expected[0] if blocks == 1 else expected, rtol=1e-5, atol=1e-4)


def _benchmark_script(name: str):
    """The module of ``benchmarks/<name>.py``, loaded from its file (the folder is not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_bench_spmm_runs_on_real_operators(data_root, capsys, monkeypatch):
    """Smoke run of benchmarks/bench_spmm.py on a small real graph: both kernels agree on every row."""
    monkeypatch.setenv("HPSTRAT_DATA", str(data_root))
    bench = _benchmark_script("bench_spmm")
    bench.main(["--dataset", "Texas", "--runs", "2"])
    out = capsys.readouterr().out.splitlines()
    lines = [ln for ln in out if ln.startswith(("H2GCN", "GCN", "  as two"))]
    assert len(lines) == 8 and all(ln.split()[-1] == "True" and ln.split()[-2].endswith("x") for ln in lines)
    assert sum(ln.startswith("  as two 64-wide pieces") for ln in lines) == 2
    selection = [ln for ln in out if ln.startswith(("  rows a run reads", "  backward, live cols"))]
    assert len(selection) == 2 and all(ln.split()[-1] == "True" for ln in selection)


# ----------------------------------------------------------------------------------------------
# Mixed precision (precision="bfloat16")
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS)
def test_bfloat16_products_give_the_float32_logits_up_to_rounding(model):
    from hpstrat_lite.engine import models as m

    data = _toy_graph(sparse=False)  # dense features: the input projection is a bfloat16 GEMM too
    net, ref = _batched(data, model)
    feats = Features(data.x, None, "cpu")
    with torch.no_grad(), m.matmul_precision("bfloat16"):
        low = net(feats.project(net.w_in, net.in_blocks), None)
    assert m._MATMUL_DTYPE is None  # the context restores float32
    assert low.dtype == torch.float32 and low.shape == ref.shape
    err = float((low - ref).abs().max() / ref.abs().max())
    assert 0 < err < 3e-2, err  # > 0: the products really ran in bfloat16 (8 significant bits)


def test_matmul_precision_restores_float32_after_an_error():
    from hpstrat_lite.engine import models as m

    with pytest.raises(RuntimeError, match="boom"):
        with m.matmul_precision("bfloat16"):
            assert m._MATMUL_DTYPE is torch.bfloat16
            raise RuntimeError("boom")
    assert m._MATMUL_DTYPE is None


@pytest.mark.parametrize("model", ["MLP", "GCN"])
@pytest.mark.filterwarnings("ignore:precision='bfloat16' on a CPU without native")  # slow, still correct there
def test_bfloat16_training_on_cora_matches_float32(model):
    """Mixed-precision runs on real data (dense features, so the projection is bfloat16 as well) land
    within a few test nodes of the float32 runs."""
    from hpstrat_lite import load_dataset

    data = load_dataset("Cora")
    dense = Data(x=data.x.to_dense(), edge_index=data.edge_index, y=data.y)
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    kw = dict(max_epochs=60, patience=10, device="cpu", hidden=128)
    f32 = _train(dense, model, tr, va, te, [0, 1, 2, 3], **kw)
    b16 = _train(dense, model, tr, va, te, [0, 1, 2, 3], precision="bfloat16", **kw)
    assert [r["precision"] for r in f32] == ["float32"] * 4 and [r["precision"] for r in b16] == ["bfloat16"] * 4
    diff = np.abs([a["test_acc"] - b["test_acc"] for a, b in zip(f32, b16)])
    assert diff.max() <= 0.02, diff  # 0.02 of a 677-node test fold: 13 nodes
    assert all(b["test_acc"] > (0.7 if model == "GCN" else 0.5) for b in b16)
    assert sum(a["best_epoch"] == b["best_epoch"] for a, b in zip(f32, b16)) >= 2


def test_native_bfloat16_reads_the_cpu_flags(tmp_path):
    from hpstrat_lite.engine import models as m
    from hpstrat_lite._host import cpu_flags, host_cpu

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n"
                    "flags\t\t: fpu sse avx2 fma avx512f amx_bf16 amx_tile\n")
    assert {"avx2", "amx_bf16"} <= cpu_flags(info)
    assert cpu_flags(tmp_path / "missing") == set()
    assert host_cpu(info).startswith("Intel(R) Xeon(R) Platinum 8480+, ") and host_cpu(info).endswith(
        " cpus, avx512+amx")
    info.write_text("model name\t: AMD EPYC\nflags\t\t: fpu sse avx avx2 fma\n")
    host_cpu.cache_clear()
    assert host_cpu(info).endswith(" cpus, avx2") and host_cpu(tmp_path / "missing") == "unknown"
    assert m.native_bfloat16("cpu", flags={"avx2", "amx_bf16"}) and m.native_bfloat16("cpu", flags={"avx512_bf16"})
    assert not m.native_bfloat16("cpu", flags={"avx", "avx2", "fma"})  # an AVX2-only CPU emulates bfloat16
    assert m.native_bfloat16("cuda", flags=set())


def test_bfloat16_on_a_cpu_without_native_support_warns(toy, monkeypatch):
    import hpstrat_lite.engine.train as t

    data, tr, va, te = toy
    monkeypatch.setattr(t, "native_bfloat16", lambda device: False)
    with pytest.warns(RuntimeWarning, match=r"precision='bfloat16' on a CPU without native bfloat16 products"):
        rows = train_runs(data, "MLP", tr, va, te, [0, 1, 2], protocol=PAPER_PROTOCOL.replace(max_epochs=2),
                          execution=Execution(precision="bfloat16", device="cpu"))
    assert [r["precision"] for r in rows] == ["bfloat16"] * 3
    monkeypatch.setattr(t, "native_bfloat16", lambda device: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        train_runs(data, "MLP", tr, va, te, [0, 1, 2], protocol=PAPER_PROTOCOL.replace(max_epochs=2),
                   execution=Execution(precision="bfloat16", device="cpu"))


def test_precision_checks_and_checkpoint_keys(toy):
    from hpstrat_lite.engine.train import _batch_key

    data, tr, va, te = toy
    with pytest.raises(ValueError, match=r"precision must be one of \('float32', 'bfloat16'\); got 'float16'"):
        train_runs(data, "GCN", tr, va, te, [0, 1, 2], execution=Execution(precision="float16"))
    hp = {"hidden": 64, "lr": 0.01}
    # a float32 call never continues a bfloat16 checkpoint of the same runs (and vice versa)
    assert _batch_key("GCN", tr[:, None], [0], hp, None, 3) != _batch_key(
        "GCN", tr[:, None], [0], {**hp, "precision": "bfloat16"}, None, 3)


def test_bench_precision_runs(data_root, capsys, monkeypatch):
    """Smoke run of benchmarks/bench_precision.py on a small real graph: one timing line per case, a
    ratio, and the accuracy check."""
    monkeypatch.setenv("HPSTRAT_DATA", str(data_root))
    bench = _benchmark_script("bench_precision")
    bench.main(["--datasets", "Texas", "--models", "MLP", "--epochs", "2", "--repeats", "1",
                "--threads", "1", "--check-epochs", "3"])
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("Texas")]
    assert len(rows) == 3  # two timed shapes, one accuracy check
    assert all(float(r[-1]) > 0 for r in rows[:2]) and "overall:" in out
    assert ("native bfloat16 products on this CPU: yes" in out) == native_bfloat16("cpu")
    assert 0.0 <= float(rows[2][2]) <= 1.0 and 0.0 <= float(rows[2][3]) <= 1.0


def test_bench_eval_batch_runs(data_root, capsys, monkeypatch):
    """Smoke run of benchmarks/bench_eval_batch.py on a small real graph: one line per case with both
    batch sizes and their ratio."""
    monkeypatch.setenv("HPSTRAT_DATA", str(data_root))
    bench = _benchmark_script("bench_eval_batch")
    bench.main(["--datasets", "Texas", "--models", "MLP", "GCN", "--k", "3", "--seeds", "2", "--epochs", "2",
                "--repeats", "1", "--threads", "1"])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Texas")]
    assert len(lines) == 2
    for ln in lines:
        assert "3 runs a batch" in ln and "6 runs a batch" in ln
        assert float(ln.split("ratio")[1].strip().rstrip("x")) > 0


# ----------------------------------------------------------------------------------------------
# Allocator: freed activations reused (train.reuse_freed_memory)
# ----------------------------------------------------------------------------------------------

class _FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


def test_reuse_freed_memory_sets_glibc_options_and_restores_them(monkeypatch):
    from hpstrat_lite.engine import train

    fake = _FakeLibc()
    monkeypatch.setattr(train, "_LIBC", [fake])
    with pytest.raises(RuntimeError, match="inside"):  # restored on the way out of an exception too
        with train.reuse_freed_memory():
            assert fake.calls == [("mallopt", -4, 0), ("mallopt", -1, 2 ** 31 - 1)]  # M_MMAP_MAX, M_TRIM_THRESHOLD
            raise RuntimeError("inside")
    # memory given back, then glibc's mmap count default and the thresholds its dynamic rule settles at
    assert fake.calls[2:] == [("malloc_trim", 0), ("mallopt", -4, 65536), ("mallopt", -3, 32 * 2 ** 20),
                              ("mallopt", -1, 64 * 2 ** 20)]


@pytest.mark.parametrize("how", ["argument", "no mallopt"])
def test_reuse_freed_memory_can_be_off(monkeypatch, how):
    from hpstrat_lite.engine import train

    fake = _FakeLibc()
    monkeypatch.setattr(train, "_LIBC", [None if how == "no mallopt" else fake])
    with train.reuse_freed_memory(False if how == "argument" else True):
        pass
    assert fake.calls == []


def test_training_reuses_freed_memory_on_cpu_unless_told_not_to(monkeypatch):
    """``train_runs`` trains inside glibc's reuse settings by default on CPU (``"auto"``) and with ``True``, and
    leaves the allocator alone with ``Execution(reuse_freed_memory=False)``."""
    import torch
    from torch_geometric.data import Data

    from hpstrat_lite.engine import train
    from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution

    fake = _FakeLibc()
    monkeypatch.setattr(train, "_LIBC", [fake])
    g = torch.Generator().manual_seed(0)
    data = Data(x=torch.randn(20, 4, generator=g), y=torch.arange(20) % 2,
                edge_index=torch.tensor([[i for i in range(19)] + [i + 1 for i in range(19)],
                                         [i + 1 for i in range(19)] + [i for i in range(19)]]))
    masks = [torch.zeros(20, 1, dtype=torch.bool) for _ in range(3)]
    for m, part in zip(masks, (range(0, 10), range(10, 15), range(15, 20))):
        m[list(part), 0] = True
    protocol = PAPER_PROTOCOL.replace(max_epochs=2, patience=None)
    train.train_runs(data, "MLP", *masks, [0], protocol=protocol, execution=Execution(device="cpu",
                                                                                       reuse_freed_memory=False))
    assert fake.calls == []
    for setting in ("auto", True):
        fake.calls.clear()
        train.train_runs(data, "MLP", *masks, [0], protocol=protocol,
                         execution=Execution(device="cpu", reuse_freed_memory=setting))
        assert fake.calls[:2] == [("mallopt", -4, 0), ("mallopt", -1, 2 ** 31 - 1)]
        assert fake.calls[2] == ("malloc_trim", 0)


def test_reuse_setting_auto_means_cpu_and_bad_values_are_named():
    from hpstrat_lite.engine.train import reuse_freed_memory_applies

    assert reuse_freed_memory_applies("auto", "cpu") and not reuse_freed_memory_applies("auto", "cuda")
    assert reuse_freed_memory_applies(True, "cuda") and not reuse_freed_memory_applies(False, "cpu")
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="reuse_freed_memory must be 'auto', True or False; got"):
            reuse_freed_memory_applies(bad, "cpu")


def test_the_c_library_lookup_finds_mallopt_on_glibc():
    import platform

    from hpstrat_lite.engine import train

    libc = train._libc_mallopt()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert libc is not None and hasattr(libc, "mallopt")


def test_reused_memory_trains_the_same_numbers(data_root, monkeypatch):
    # only where the activations live changes: every number of every run is equal, bit for bit
    from hpstrat_lite import load_dataset
    from hpstrat_lite.engine import train

    data = load_dataset("Cora", root=data_root)
    tr, va, te = fold_masks(random_folds(data.y.numpy(), k=4, seed=0), k=4)
    kw = dict(max_epochs=5, patience=None, device="cpu")
    for model in ("GCN", "MixHop", "H2GCN"):
        rows = {}
        for flag in (False, True):
            rows[flag] = _train(data, model, tr, va, te, [0, 1, 2, 3], reuse_freed_memory=flag, **kw)
        for a, b in zip(rows[False], rows[True]):
            for key in ("best_epoch", "val_loss", "test_loss", "val_acc", "test_acc", "train_loss"):
                assert a[key] == b[key], (model, key)


def test_bench_train_runs_and_prints_its_ratio(data_root, capsys, monkeypatch):
    """Smoke run of benchmarks/bench_train.py (the >= 10x target's script) on Texas, 2 runs, 3 epochs."""
    monkeypatch.setenv("HPSTRAT_DATA", str(data_root))
    bench = _benchmark_script("bench_train")
    bench.main(["--datasets", "Texas", "--runs", "2", "--epochs", "3", "--device", "cpu"])
    out = capsys.readouterr().out
    assert out.startswith(f"torch {torch.__version__}, cpu, ")
    assert out.count("Texas ") == 2 and "overall wall: baseline" in out and out.rstrip().endswith("x")
    assert out.count("(warm-up ") == 2  # both cases warmed up, untimed
    bench.main(["--datasets", "Texas", "--runs", "2", "--epochs", "2", "--models", "GCN", "--warmup-epochs", "0"])
    assert "warm-up" not in capsys.readouterr().out


@pytest.mark.parametrize("user_policy", [None, "ACTIVE"])
def test_numba_pool_starts_with_sleeping_threads_and_leaves_the_environment(user_policy):
    """In a fresh process: the first kernel call starts numba's pool with its OpenMP copy reading
    OMP_WAIT_POLICY=PASSIVE (unless the user set a policy, which stays), and the environment is as before."""
    import os
    import subprocess
    import sys

    code = (
        "import os, numba, numpy as np, torch\n"
        "from numba.np.ufunc import parallel\n"
        "from hpstrat_lite.engine.kernels import apply_keep_mask\n"
        "seen = []\n"
        "launch = parallel._launch_threads\n"
        "def spy():\n"
        "    seen.append(os.environ.get('OMP_WAIT_POLICY'))\n"
        "    launch()\n"
        "parallel._launch_threads = spy\n"
        "h = torch.ones(4, 5, requires_grad=True)\n"
        "out = apply_keep_mask(h, torch.ones(4, 5, dtype=torch.uint8))\n"
        "assert parallel._is_initialized and torch.equal(out, h.detach())\n"
        "print(seen[0], os.environ.get('OMP_WAIT_POLICY'))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    if user_policy:
        env["OMP_WAIT_POLICY"] = user_policy
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ([user_policy, user_policy] if user_policy else ["PASSIVE", "None"])
