"""hpstrat_lite.stats against scipy, hand-checked values and published examples."""
import itertools
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps

from hpstrat_lite import stats
from hpstrat_lite.stats.paired import _signed_rank_null


def test_import_loads_no_torch():
    code = "import sys, hpstrat_lite.stats; assert 'torch' not in sys.modules, 'torch loaded'"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- Holm -----------------------------------------------------------------------------------------

def test_holm_hand_values_and_nan():
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, np.nan]), [0.03, 0.06, 0.06, np.nan])
    np.testing.assert_allclose(stats.holm([0.5, 0.2]), [0.5, 0.4])  # monotone: never below an earlier step
    assert stats.holm([]).size == 0


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_bounds(p):
    adj = stats.holm(p)
    assert np.all(adj >= np.asarray(p) - 1e-15) and np.all(adj <= 1)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= 0)


def test_holm_bad_input():
    with pytest.raises(ValueError, match=r"p_values must lie in \[0, 1\]"):
        stats.holm([0.1, 1.5])


# --- Wilcoxon, Hodges-Lehmann, sign test ----------------------------------------------------------

# R's ?wilcox.test example (Hollander & Wolfe 1973, p. 29): depression scores before and after therapy;
# R gives V = 40, p-value = 0.01953 for alternative = "greater".
X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def test_wilcoxon_matches_r_example():
    t = stats.wilcoxon_test(X, Y, alternative="greater", unit="patient")
    assert t.pvalue == pytest.approx(0.01953, abs=5e-6) and t.n == 9 and t.unit == "patient"
    two = stats.wilcoxon_test(X, Y)
    assert two.pvalue == pytest.approx(sps.wilcoxon(np.subtract(X, Y)).pvalue)
    assert two.rank_biserial_r == pytest.approx((40 - 5) / 45)  # W+ = 40, W- = 45 - 40


def test_wilcoxon_drops_zeros_and_nan_and_needs_min_pairs():
    t = stats.wilcoxon_test([1.0, 2, 3, np.nan, 5], [1.0, 3, 4, 4, 6])
    assert (t.n, t.n_nonzero) == (4, 3) and np.isnan(t.pvalue)  # 3 non-zero differences < 6
    assert t.rank_biserial_r == -1.0 and t.share_a_smaller == 0.75


def test_hodges_lehmann_is_median_of_walsh_averages():
    d = np.subtract(X, Y)
    walsh = [(d[i] + d[j]) / 2 for i in range(9) for j in range(i, 9)]
    shift, lo, hi = stats.hodges_lehmann(d)
    assert shift == pytest.approx(np.median(walsh))
    # n = 9 at 95 %: P(W+ <= 5) = 0.0195 < 0.025 <= P(W+ <= 6) = 0.0273, so the 6th smallest / largest
    walsh.sort()
    assert (lo, hi) == (pytest.approx(walsh[5]), pytest.approx(walsh[-6]))


def test_signed_rank_null_distribution():
    for n in (1, 5, 12):
        p = _signed_rank_null(n)
        w = np.arange(p.size)
        assert p.sum() == pytest.approx(1) and np.allclose(p, p[::-1])
        assert (p * w).sum() == pytest.approx(n * (n + 1) / 4)
        assert (p * (w - n * (n + 1) / 4) ** 2).sum() == pytest.approx(n * (n + 1) * (2 * n + 1) / 24)
    # scipy's exact one-sided p of a sample whose W+ is 3 (n = 8, ranks 1 and 2 positive)
    d = -np.arange(1.0, 9)
    d[:2] *= -1
    assert np.cumsum(_signed_rank_null(8))[3] == pytest.approx(sps.wilcoxon(d, alternative="less").pvalue)


def test_sign_test_hand_values():
    t = stats.sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 5], alternative="less", unit="graph")
    assert (t.n, t.n_less, t.n_greater, t.n_ties, t.unit) == (5, 4, 0, 1, "graph")
    assert t.pvalue == pytest.approx(1 / 16) and t.share_less == 0.8
    assert stats.sign_test([1, 2], [2, 1]).pvalue == 1.0
    assert np.isnan(stats.sign_test([1.0], [1.0]).pvalue)


def test_paired_bad_input():
    with pytest.raises(ValueError, match="a and b must have the same length; got 2 and 3"):
        stats.wilcoxon_test([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="alternative must be one of"):
        stats.sign_test([1, 2], [2, 1], alternative="smaller")


# --- Friedman and the post-hoc test ---------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(3, 5), st.integers(0, 2**31 - 1))
def test_friedman_matches_scipy(n, m, seed):
    values = np.random.default_rng(seed).integers(0, 4, size=(n, m)).astype(float)  # ties on purpose
    r = stats.friedman(pd.DataFrame(values))
    if np.all(values == values[:, :1]):
        assert (r.statistic, r.pvalue) == (0.0, 1.0)
        return
    ref = sps.friedmanchisquare(*values.T)
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    assert r.kendall_w == pytest.approx(ref.statistic / (n * (m - 1)))


def test_friedman_two_methods_is_the_rank_formula():
    a = np.array([1.0, 2, 3, 4, 5, 6, 7])
    b = np.array([2.0, 3, 4, 5, 6, 6, 6])  # a < b in 5 blocks, a = b in 1, a > b in 1
    r = stats.friedman(pd.DataFrame({"a": a, "b": b}), unit="graph")
    ranks = sps.rankdata(np.column_stack([a, b]), axis=1)
    n, m, sums = 7, 2, ranks.sum(0)
    raw = 12 / (n * m * (m + 1)) * (sums ** 2).sum() - 3 * n * (m + 1)
    ties = 1 - 1 * (2 ** 3 - 2) / (n * m * (m * m - 1))
    assert r.statistic == pytest.approx(raw / ties) == pytest.approx((5 - 1) ** 2 / 6)
    assert r.unit == "graph" and r.n_blocks == 7 and r.methods == ("a", "b")


def test_friedman_design_limits_and_degenerate_tables():
    t = pd.DataFrame({"a": [1.0] * 3, "b": [2.0] * 3, "c": [3.0] * 3})
    r = stats.friedman(t)
    assert r.min_pvalue == pytest.approx(sps.chi2.sf(6, 2)) and r.pvalue == pytest.approx(r.min_pvalue)
    assert r.blocks_needed == 3 and r.mean_ranks == (1.0, 2.0, 3.0) and r.ranks().index[0] == "a"
    one = stats.friedman(t.iloc[:1])
    assert np.isnan(one.pvalue) and one.n_blocks == 1
    with pytest.raises(ValueError, match="table must have at least 2 columns"):
        stats.friedman(t[["a"]])
    with pytest.raises(ValueError, match="table must be a pandas DataFrame"):
        stats.friedman(np.ones((3, 3)))


def _three(n=10, gap=1.0, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    return pd.DataFrame({"hp": base + rng.normal(0, 0.01, n), "st": base + gap + rng.normal(0, 0.01, n),
                         "rnd": base + 2 * gap + rng.normal(0, 0.01, n)})


def test_posthoc_names_a_winner_only_when_it_beats_every_other():
    clear = stats.posthoc(_three(), unit="graph")
    assert clear.winner == "hp" and clear.leader == "hp" and clear.n_blocks == 10 and clear.unit == "graph"
    assert len(clear.pairs) == 3 and (clear.pairs["p_holm"] >= clear.pairs["pvalue"]).all()
    # two methods alike, the third worse: Friedman is significant, the post-hoc test names no winner
    tie = _three()
    rng = np.random.default_rng(1)
    tie["st"] = tie["hp"] + rng.normal(0, 0.01, 10)
    assert stats.friedman(tie).pvalue < 0.001
    r = stats.posthoc(tie)
    assert r.winner is None and r.leader in {"hp", "st"}
    better = r.pairs.set_index(["a", "b"])["better"]
    assert pd.isna(better[("hp", "st")]) and better[("hp", "rnd")] == "hp"


def test_posthoc_higher_is_better_and_too_few_units():
    r = stats.posthoc(-_three(), lower_is_better=False)
    assert r.winner == "hp"
    few = stats.posthoc(_three(n=5))  # 5 units: no Wilcoxon test (at least 6), no winner
    assert few.winner is None and few.pairs["pvalue"].isna().all()


# --- Spearman -------------------------------------------------------------------------------------

def test_spearman_against_scipy_and_exact_permutation():
    x = np.arange(6.0)
    r = stats.spearman(x, x ** 3, unit="graph")
    assert r.rho == 1.0 and r.pvalue == pytest.approx(2 / 720) and r.low == r.high == 1.0
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=20), rng.normal(size=20)
    r = stats.spearman(a, a + b)
    ref = sps.spearmanr(a, a + b)
    assert r.rho == pytest.approx(ref.statistic) and r.pvalue_t == pytest.approx(ref.pvalue)
    assert r.low < r.rho < r.high and r.n == 20
    assert stats.spearman(rng.normal(size=30), rng.normal(size=30), n_perm=999).pvalue > 0.05


def test_spearman_degenerate_and_skips():
    assert np.isnan(stats.spearman([1, 2], [1, 2]).rho)
    assert np.isnan(stats.spearman(np.arange(5.0), np.ones(5)).pvalue)
    r = stats.spearman([1, 2, 3, np.nan], [1, 3, 2, 4], n_boot=0, n_perm=0)
    assert r.n == 3 and np.isnan(r.low) and np.isnan(r.pvalue) and r.rho == 0.5
    with pytest.raises(ValueError, match="n_boot must be an integer >= 0"):
        stats.spearman([1, 2, 3], [1, 2, 3], n_boot=-1)
    with pytest.raises(ValueError, match="x and y must have the same length"):
        stats.spearman([1, 2, 3], [1, 2])


def test_partial_spearman():
    r = stats.partial_spearman([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], [1, 1, 2, 2, 3, 3], unit="graph")
    assert r.rho == pytest.approx(-1.0) and r.pvalue < 0.05 and r.unit == "graph"
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=40), rng.normal(size=40)
    r = stats.partial_spearman(x, x + z, np.ones(40))  # nothing to hold fixed: Spearman's rho itself
    assert r.rho == pytest.approx(sps.spearmanr(x, x + z).statistic) and r.n == 40
    assert np.isnan(stats.partial_spearman([1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]).rho)


def test_partial_spearman_removes_a_shared_driver_and_keeps_a_direct_link():
    rng = np.random.default_rng(0)
    z = rng.normal(size=60)
    x, y = z + 0.3 * rng.normal(size=60), z + 0.3 * rng.normal(size=60)  # linked only through z
    r = stats.partial_spearman(x, y, z)
    assert abs(r.rho) < 0.3 and r.pvalue > 0.05
    y2 = x + 0.3 * rng.normal(size=60)  # a direct link survives holding z fixed
    r2 = stats.partial_spearman(x, y2, z)
    assert r2.rho > 0.5 and r2.pvalue < 1e-4
    # a monotone transform of z changes nothing (ranks)
    assert stats.partial_spearman(x, y2, np.exp(z)) == r2


# --- units, spread, best model ----------------------------------------------------------------------

def _long(n_graphs=8, seeds=(0, 1, 2), models=("GCN", "GAT", "SAGE")):
    rng = np.random.default_rng(0)
    out = [{"dataset": f"g{g}", "seed": s, "model": m, "method": meth,
            "std": 2.0 + (meth == "st") * 0.5 + rng.normal(0, 0.1)}
           for g, s, m, meth in itertools.product(range(n_graphs), seeds, models, ("hp", "st"))]
    return pd.DataFrame(out)


def test_tests_count_units_not_rows():
    rows = _long()
    t = stats.paired_test_at_unit(rows, "std", "hp", "st")
    assert t.n == 24 and t.unit == "(dataset, seed)"  # 8 graphs x 3 seeds, the 3 models averaged
    by_graph = stats.paired_test_at_unit(rows, "std", "hp", "st", unit="dataset")
    assert by_graph.n == 8 and by_graph.unit == "dataset"
    f = stats.friedman_at_unit(rows, "std", unit="dataset")
    assert f.n_blocks == 8 and f.unit == "dataset"
    wide = stats.unit_means(rows, "std", unit=("dataset", "seed"))
    assert wide.shape == (24, 2)
    assert wide.loc[("g0", 0), "hp"] == pytest.approx(rows.query("dataset == 'g0' and seed == 0 and method == 'hp'")["std"].mean())
    with pytest.raises(ValueError, match=r"rows lacks the column\(s\) \['fold'\]"):
        stats.unit_means(rows, "std", unit="fold")
    with pytest.raises(ValueError, match="method 'placebo' is not in rows"):
        stats.paired_test_at_unit(rows, "std", "hp", "placebo")


def test_cross_fold_std_is_sample_std():
    rng = np.random.default_rng(0)
    rows = pd.DataFrame({"m": np.repeat(["a", "b"], 5), "test_acc": rng.uniform(size=10)})
    out = stats.cross_fold_std(rows, "test_acc", by="m").set_index("m")
    assert out.loc["a", "std"] == pytest.approx(100 * np.std(rows["test_acc"][:5], ddof=1))
    assert out.loc["b", "folds"] == 5
    with pytest.raises(ValueError, match="rows is empty"):
        stats.cross_fold_std(rows.iloc[:0], "test_acc", by="m")


def _scores(lead, noise, seeds=(0, 1, 2)):
    rng = np.random.default_rng(0)
    out = []
    for method, best in (("random", "GCN"), ("hpstrat", "GAT")):
        for s in seeds:
            for model in ("GCN", "GAT", "MLP"):
                out.append({"method": method, "model": model, "seed": s,
                            "score": 80 + (model == best) * lead + rng.normal(0, noise) - (model == "MLP") * 10})
    return pd.DataFrame(out)


def test_best_model_change_rule():
    clear = stats.best_model_change(_scores(1.0, 0.1))
    assert clear.changes and clear.established and clear.best_of() == {"hpstrat": "GAT", "random": "GCN"}
    noisy = _scores(1.0, 0.0)
    gat = (noisy["method"] == "random") & (noisy["model"] == "GAT")
    noisy.loc[gat, "score"] = [77.0, 81.0, 79.0]  # GCN (81) - GAT per seed: 4, 0, 2: mean 2, not above std 2
    noisy = stats.best_model_change(noisy)
    assert noisy.changes and not noisy.established
    assert (noisy.margin, noisy.spread) == (pytest.approx(2.0), pytest.approx(2.0))
    one = stats.best_model_change(_scores(1.0, 0.1, seeds=(0,)))
    assert one.changes and not one.established and one.n_seeds == 1
    with pytest.raises(ValueError, match=r"scores lacks the column\(s\) \['seed'\]"):
        stats.best_model_change(_scores(1, 0.1).drop(columns="seed"))


def test_hodges_lehmann_normal_approximation_meets_the_exact_interval():
    from hpstrat_lite.stats import paired

    d = np.random.default_rng(0).normal(1.0, 1.0, size=paired.EXACT_MAX + 1)
    approx = stats.hodges_lehmann(d)
    exact_max = paired.EXACT_MAX
    try:
        paired.EXACT_MAX = d.size
        exact = stats.hodges_lehmann(d)
    finally:
        paired.EXACT_MAX = exact_max
    assert approx[0] == exact[0] and approx[1:] == pytest.approx(exact[1:], abs=0.01)
    assert approx[1] < 1.0 < approx[2]
    assert np.isnan(stats.hodges_lehmann(np.ones(paired.WALSH_MAX + 1))[0])
