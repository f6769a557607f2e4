"""The shared input checks in ``hpstrat_lite.core._validate``."""
import numpy as np
import pytest

from hpstrat_lite.core._validate import check_int, check_n_bins


@pytest.mark.parametrize("value, kwargs, expected", [
    (1, {}, 1),
    (np.int64(7), {}, 7),
    (2, dict(low=2), 2),
    (5, dict(low=0, high=5), 5),
    (None, dict(allow_none=True), None),
])
def test_check_int_accepts_and_returns_int(value, kwargs, expected):
    out = check_int(value, "x", **kwargs)
    assert out == expected and (out is None or type(out) is int)


@pytest.mark.parametrize("value, kwargs, message", [
    (0, {}, r"^x must be an integer >= 1; got 0\.$"),
    (True, {}, r"^x must be an integer >= 1; got True\.$"),
    (2.0, {}, r"^x must be an integer >= 1; got 2\.0\.$"),
    ("3", {}, r"^x must be an integer >= 1; got '3'\.$"),
    (None, {}, r"^x must be an integer >= 1; got None\.$"),
    (1, dict(low=2), r"^x must be an integer >= 2; got 1\.$"),
    (6, dict(low=0, high=5), r"^x must be an integer in 0\.\.5; got 6\.$"),
    (0, dict(allow_none=True), r"^x must be None or an integer >= 1; got 0\.$"),
    (0, dict(hint=" (or a dict)"), r"^x must be an integer >= 1 \(or a dict\); got 0\.$"),
])
def test_check_int_rejects_with_message(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_int(value, "x", **kwargs)


def test_check_n_bins_uses_its_name():
    assert check_n_bins(np.int32(10)) == 10
    with pytest.raises(ValueError, match=r"^bins must be an integer >= 1; got -1\.$"):
        check_n_bins(-1, name="bins")
