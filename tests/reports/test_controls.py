"""The controls' paired tests and reading, on constructed rows where the answer is known."""
import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.reports.controls import (block_std, complete_blocks, control_claims, control_reading,
                                           control_tests, holm, paired_test)

METHODS = ("random", "stratified", "hpstrat", "degree", "placebo")


def make_rows(spread, n_datasets=4, n_models=3, seeds=(0, 1, 2), k=4, seed=0):
    """Rows whose per-fold accuracies have the given std (points) per method, with block noise."""
    rng = np.random.default_rng(seed)
    out = []
    for d in range(n_datasets):
        for m in range(n_models):
            for s in seeds:
                for method in METHODS:
                    sd = spread[method] * rng.uniform(0.8, 1.2)
                    acc = 70 + sd * rng.standard_normal(k)
                    for fold in range(k):
                        out.append({"dataset": f"G{d}", "model": f"M{m}", "method": method, "seed": s, "k": k,
                                    "fold": fold, "test_acc": acc[fold] / 100})
    return pd.DataFrame(out)


def test_placebo_matching_hpstrat_reads_as_finer_strata():
    rows = make_rows({"random": 6, "stratified": 5, "hpstrat": 2, "degree": 5, "placebo": 2})
    tests = control_tests(rows)
    pw = tests["pairwise"].set_index(["a", "b"])
    assert pw.loc[("placebo", "stratified"), "verdict"] == "a smaller"
    assert pw.loc[("hpstrat", "degree"), "verdict"] == "a smaller"
    assert "the gain comes from finer strata, not from homophily" in control_reading(tests)
    claims = control_claims(tests)
    assert set(claims["verdict"]) <= {"agrees", "disagrees", "inconclusive"}


def test_hpstrat_below_placebo_reads_as_homophily():
    rows = make_rows({"random": 6, "stratified": 5, "hpstrat": 1, "degree": 5, "placebo": 5})
    reading = control_reading(control_tests(rows))
    assert "homophily carries information beyond the number of strata" in reading


def test_equal_methods_are_inconclusive():
    rows = make_rows({m: 4 for m in METHODS}, seed=3)
    tests = control_tests(rows)
    assert (tests["pairwise"]["verdict"] == "inconclusive").all()
    assert "inconclusive" in control_reading(tests)


def test_blocks_are_complete_and_std_is_sample_std():
    rows = make_rows({m: 4 for m in METHODS})
    part = rows[~((rows["dataset"] == "G0") & (rows["model"] == "M0") & (rows["method"] == "placebo")
                  & (rows["seed"] == 1) & (rows["fold"] == 3))]
    kept, coverage = complete_blocks(part, methods=METHODS)
    assert kept.groupby(["dataset", "model", "seed"]).ngroups == 4 * 3 * 3 - 1
    assert coverage.set_index("dataset").loc["G0", "blocks complete"] == 8
    std = block_std(rows)
    one = rows[(rows["dataset"] == "G1") & (rows["model"] == "M2") & (rows["seed"] == 0) & (rows["method"] == "hpstrat")]
    assert std.loc[("G1", "M2", 0), "hpstrat"] == pytest.approx(np.std(100 * one["test_acc"], ddof=1))


def test_holm_and_small_samples():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, np.nan]), [0.03, 0.06, 0.06, np.nan])
    t = paired_test(pd.Series([1.0, 2, 3]), pd.Series([2.0, 3, 4]))
    assert np.isnan(t["p_value"]) and t["verdict"] == "inconclusive"


def test_missing_methods_say_so():
    rows = make_rows({m: 4 for m in METHODS})
    with pytest.raises(ValueError, match="hold no run of the methods"):
        complete_blocks(rows, methods=METHODS, seeds=(7,))
