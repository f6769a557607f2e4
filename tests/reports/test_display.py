"""Displayed numbers: each kind rounded to the precision that carries meaning, no -0, integers as integers."""
import re

import numpy as np
import pandas as pd
import pytest

from hpstrat_lite.reports.display import column_kind, format_frame, format_number, format_table
from hpstrat_lite.reports.plots import book_table


@pytest.mark.parametrize("value, kind, shown", [
    (0.825158, "homophily", "0.83"), (81.2743, "accuracy", "81.3"), (0.72, "p", "0.72"),
    (0.000123456, "p", "0.00012"), (3.2e-12, "p", "3.2e-12"), (1.0, "p", "1"), (12.2825, "metric", "12.3"),
    (0.0123456, "metric", "0.0123"), (1234.5678, "metric", "1235"), (0.000123456, "metric", "1.23e-04"), (1.6667, "rank", "1.67"), (8.0, "integer", "8"),
    (np.int64(2708), "integer", "2708"), (-0.0004, "homophily", "0.00"), (-0.04, "accuracy", "0.0"),
    (-0.0, 3, "0.000"), (-1.26, "accuracy", "-1.3"), (float("nan"), "accuracy", "n/a"), (None, "p", "n/a"),
    (pd.NA, "metric", "n/a"), ("GCN", "accuracy", "GCN"), (0.5, 3, "0.500"), (np.inf, "metric", "∞"),
])
def test_format_number_rounds_each_kind(value, kind, shown):
    assert format_number(value, kind=kind) == shown


@pytest.mark.parametrize("kind", ["percent", -1, 13, True, 1.5])
def test_format_number_names_a_bad_kind(kind):
    with pytest.raises(ValueError, match=r"kind=.* is not a kind of value; use one of \['accuracy', 'homophily'"):
        format_number(1.0, kind=kind)


def test_column_kind_from_name_and_values():
    floats = [0.1, 0.2]
    assert [column_kind(name, floats) for name in ("p", "p-value", "friedman_p", "Wilcoxon p", "p (Welch)",
                                                   "mean homophily", "test_acc", "CDD (nodes)", "w1",
                                                   "mean rank", "gap")] == \
        ["p", "p", "p", "p", "p", "homophily", "accuracy", "metric", "metric", "rank", "metric"]
    assert column_kind("nodes", [2708.0, 183.0]) == "integer"
    assert column_kind("nodes", [2708, 183]) == "integer"
    assert column_kind("model", ["GCN", "MLP"]) == "text" and column_kind("same", [True, False]) == "text"
    assert column_kind(("Cora", "p"), floats) == "p"  # the last level of a column MultiIndex


def test_format_table_shows_no_float_with_more_than_the_kinds_digits():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"dataset": ["Cora", "Texas", "Actor"], "mean homophily": rng.uniform(0, 1, 3),
                       "test accuracy": rng.uniform(50, 90, 3), "p": [0.0123456, 0.5, np.nan],
                       "CDD (nodes)": [12.28250, 0.000123, 3.0], "trials": [8.0, 100.0, 3.0],
                       "deviation": [-0.00001, 0.3, -0.2]}, index=pd.Index([2.0, 3.0, 10.0], name="B"))
    shown = format_frame(df, kinds={"deviation": "homophily"})
    assert shown["mean homophily"].str.fullmatch(r"\d\.\d\d").all()
    assert shown["test accuracy"].str.fullmatch(r"\d+\.\d").all()
    assert shown["p"].tolist() == ["0.012", "0.5", "n/a"]
    assert shown["CDD (nodes)"].tolist() == ["12.3", "1.23e-04", "3.00"]
    assert shown["trials"].tolist() == ["8", "100", "3"]
    assert shown["deviation"].tolist() == ["0.00", "0.30", "-0.20"]
    assert list(shown.index) == ["2", "3", "10"]
    html = format_table(df, kinds={"deviation": "homophily"}, caption="Table: a test").to_html()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert "-0.00" not in cells and "Table: a test" in html
    assert not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c)], "a float with more than 4 decimals"
    assert df["mean homophily"].dtype == float  # the frame itself is unchanged


def test_format_table_names_bad_arguments():
    df = pd.DataFrame({"a": [1.0]})
    with pytest.raises(ValueError, match=r"kinds names column\(s\) \['b'\] that df does not have; its columns are \['a'\]"):
        format_table(df, kinds={"b": "p"})
    with pytest.raises(ValueError, match=r"kind='pct' is not a kind of value"):
        format_table(df, kinds={"a": "pct"})
    with pytest.raises(ValueError, match=r"df must be a pandas DataFrame; got list"):
        format_table([1, 2])


def test_book_table_keeps_its_digits_and_follows_the_kinds():
    df = pd.DataFrame({"MLP": [82.5912, -0.01], "p": [0.000312, 0.9], "n_trials": [100.0, 8.0],
                       "homophily": [0.8251, 0.1]})
    html = book_table(df, digits=1).to_html()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells == ["82.6", "0.00031", "100", "0.83", "0.0", "0.9", "8", "0.10"]


def test_mean_std_shares_the_means_decimals():
    from hpstrat_lite.reports.display import format_mean_std

    assert format_mean_std(12.28250, 0.41875) == "12.3 ± 0.4"
    assert format_mean_std(0.000412, 0.0000333) == "4.12e-04 ± 3.33e-05"
    assert format_mean_std(float("nan"), 1.0) == "n/a" and format_mean_std(2.5, float("nan")) == "2.50"
    assert format_mean_std(-0.00001, 0.2, kind="homophily") == "0.00 ± 0.20"


def test_metric_summary_rounds_to_three_significant_digits():
    from hpstrat_lite.reports.plots import metric_summary

    rows = pd.DataFrame({"dataset": "A", "method": ["hpstrat", "hpstrat", "random", "random"],
                         "cdd": [12.1, 12.4565, 30.0, 31.0]})
    out = metric_summary(rows, metrics=("cdd",))
    assert out["CDD (nodes)"].tolist() == ["30.5 ± 0.7", "12.3 ± 0.3"]  # the book's method order
