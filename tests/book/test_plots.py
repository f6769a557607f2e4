"""One palette: a colour per split method and per model, used by every figure; legends off the data."""
import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from hpstrat_lite.core.folds import CONTROL_METHODS, SPLIT_METHODS, make_folds
from hpstrat_book import plots, plots_part2

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[2]
MODELS = ("MLP", "GCN", "GAT", "GraphSAGE", "MixHop", "APPNP", "H2GCN", "GPRGNN")  # engine.models.MODELS


def test_palette_maps_every_method_and_model_to_distinct_colours():
    from hpstrat_lite.engine.models import MODELS as ENGINE_MODELS

    assert set(ENGINE_MODELS) == set(MODELS)
    methods = [*SPLIT_METHODS, *CONTROL_METHODS, "covariate"]
    method_colours = [plots.method_color(m) for m in methods]
    model_colours = [plots.model_color(m) for m in MODELS]
    assert len(set(method_colours)) == len(methods) and len(set(model_colours)) == len(MODELS)
    assert not set(method_colours) & set(model_colours), "a model takes a split method's colour"
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in method_colours + model_colours)
    assert {plots.MODEL_FAMILY_COLORS["MLP"], plots.MODEL_FAMILY_COLORS["GNN"]}.isdisjoint(method_colours)
    assert plots.model_color("MLP") == plots.MODEL_FAMILY_COLORS["MLP"]
    assert [plots.model_family(m) for m in ("MLP", "mlp-dot", "GCN", "my_net")] == ["MLP", "MLP", "GNN", "GNN"]


def test_model_colour_takes_any_spelling_and_a_users_model_gets_the_gnn_family():
    assert plots.model_color("gpr-gnn") == plots.model_color("GPRGNN") == plots.MODEL_COLORS["GPRGNN"]
    assert plots.model_color("GCN-dot") == plots.MODEL_COLORS["GCN"]
    assert plots.model_color("TwoLayerSAGE") == plots.MODEL_FAMILY_COLORS["GNN"]


@pytest.mark.parametrize("bad", ["hp-strat", "", None])
def test_method_colour_names_the_unknown_method(bad):
    with pytest.raises(ValueError, match=r"method=.* has no colour; split methods are \['covariate', 'degree'"):
        plots.method_color(bad)


@pytest.mark.parametrize("bad", ["", None, 3])
def test_model_colour_rejects_a_non_name(bad):
    with pytest.raises(ValueError, match=r"model=.* must be a non-empty model name"):
        plots.model_color(bad)


def _graph(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    h = rng.uniform(0, 1, n)
    h[:3] = np.nan  # isolated nodes
    return h, y


def _bar_colours(ax):
    return {to_hex(p.get_facecolor()).upper() for p in ax.patches}


def _legend_is_off_the_axes(fig):
    """No legend inside an axes; the figure legend's box does not overlap any axes' box."""
    assert all(ax.get_legend() is None for ax in fig.axes)
    assert fig.legends, "no legend"
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend_box = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        if ax.get_visible():
            assert not legend_box.overlaps(ax.get_window_extent(renderer)), "the legend covers an axes"


def test_fold_figures_colour_each_method_with_its_palette_colour():
    h, y = _graph()
    folds = {m: make_folds(m, h, y, k=4, seed=0, n_bins=5) for m in SPLIT_METHODS}
    spreads = {m: plots.stratum_spread(h, y, folds[m], 4, n_bins=5) for m in SPLIT_METHODS}
    fig = plots.stratum_spread_plot(spreads)
    assert _bar_colours(fig.axes[0]) == {plots.METHOD_COLORS[m] for m in SPLIT_METHODS}
    _legend_is_off_the_axes(fig)
    fig = plots.fold_deviation_plot(plots.fold_homophily_table(h, folds, 4))
    assert _bar_colours(fig.axes[0]) == {plots.METHOD_COLORS[m] for m in SPLIT_METHODS}
    _legend_is_off_the_axes(fig)
    matplotlib.pyplot.close("all")


def test_method_findings_are_computed_from_the_folds_the_page_shows():
    from hpstrat_lite import fold_quality

    h, y = _graph(n=400)
    h[3:250] = 0.95  # most nodes in the last bin
    folds = {m: make_folds(m, h, y, k=4, seed=0, n_bins=5) for m in SPLIT_METHODS}

    def box(folds):
        spreads = {m: plots.stratum_spread(h, y, folds[m], 4, n_bins=5) for m in folds}
        quality = pd.DataFrame({m: fold_quality(folds[m], y, h, k=4) for m in folds}).T
        return plots.method_findings(h, spreads, quality, n_bins=5), spreads, quality

    text, spreads, quality = box(folds)
    share = (h[~np.isnan(h)] >= 0.8).mean()
    assert text.startswith("**Key findings** (computed from this page's folds):")
    assert f"the fullest bin [0.8, 1] holds {share:.0%} of the nodes with neighbours" in text
    assert "3 isolated nodes form a stratum of their own" in text
    largest = {m: int(t["spread"].max()) for m, t in spreads.items()}
    assert largest["hpstrat"] <= 1 and "**holds by construction**" in text
    assert f"random k-fold {largest['random']}, class-stratified {largest['stratified']}, HpStrat 1;" in text
    chd = quality["chd"]
    assert f"**{'yes' if chd['hpstrat'] < chd['random'] else 'no'}** on this split" in text
    swapped, _, _ = box({"random": folds["hpstrat"], "hpstrat": folds["random"]})  # random folds under HpStrat's name
    assert "**does not hold**" in swapped and "**no** on this split" in swapped


def test_cross_fold_std_and_audit_figures_use_the_method_colours():
    std = pd.DataFrame([{"dataset": d, "model": mo, "method": me, "std": v}
                        for d, base in (("A", 1.0), ("B", 2.0)) for mo in ("GCN", "MLP")
                        for me, v in zip(SPLIT_METHODS, (base, base * 0.8, base * 0.5))])
    fig = plots.cross_fold_std_plot(std)
    scatter_colours = {to_hex(c).upper() for coll in fig.axes[0].collections for c in coll.get_facecolors()}
    assert scatter_colours == {plots.METHOD_COLORS[m] for m in SPLIT_METHODS}
    wide = std[std["dataset"] == "A"].pivot(index="model", columns="method", values="std")
    fig = plots.split_spread_plot(wide, title="A")
    assert _bar_colours(fig.axes[0]) == {plots.METHOD_COLORS[m] for m in SPLIT_METHODS}
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == sorted(np.round(wide.to_numpy().ravel(), 6))
    _legend_is_off_the_axes(fig)
    with pytest.raises(ValueError, match=r"std has column\(s\) \['GCN', 'MLP'\] that are not split methods"):
        plots.split_spread_plot(wide.T)
    matplotlib.pyplot.close("all")


def test_mlp_vs_gcn_uses_the_model_colours_and_shows_the_papers_values():
    from hpstrat_book.paper_values import PAPER_LINK

    summary = pd.DataFrame([{"dataset": "Facebook", "model": m, "test_mean": v, "test_std": 0.01, "n_trials": 3,
                             "num_features": 10, "protocol": "edge split", "n_eval": 3}
                            for m, v in (("MLP", 0.92), ("GCN", 0.95))])
    fig = plots_part2.plot_mlp_vs_gcn(summary, datasets=["Facebook"], task="link")
    ax = fig.axes[0]
    assert _bar_colours(ax) == {plots.model_color("MLP"), plots.model_color("GCN")}
    paper_mlp = PAPER_LINK["Facebook"]["MLP"][0]  # 50.3: far below our 92
    assert ax.get_ylim()[0] <= paper_mlp, "the y-axis cuts the paper's MLP value"
    diamonds = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections])
    assert paper_mlp in diamonds
    _legend_is_off_the_axes(fig)
    matplotlib.pyplot.close("all")


def test_no_colour_literal_outside_the_plotting_module():
    """The split methods' colours are defined once, in the library's palette module (``hpstrat_lite.palette``,
    which the book's plots extend): no hex colour or named-colour keyword elsewhere in the library, its templates
    included."""
    offenders = []
    for path in (REPO / "hpstrat_lite").rglob("*"):
        if path.suffix not in (".py", ".ipynb") or path.name == "palette.py" or "__pycache__" in path.parts:
            continue
        text = path.read_text()
        if re.search(r"#[0-9A-Fa-f]{6}\b|\bcolou?rs?=\s*[\"'\[]|\bcmap=", text):
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders, offenders


def test_reference_neutral_and_chance_colours_are_no_method_or_model_colour():
    context = {plots.REFERENCE_COLOR, plots.NEUTRAL_COLOR, plots.CHANCE_COLOR}
    assert len(context) == 3
    assert context.isdisjoint(plots.METHOD_COLORS.values()) and context.isdisjoint(plots.MODEL_COLORS.values())
