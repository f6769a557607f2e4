"""The README's code runs and does what the README says."""
import numpy as np

from conftest import REPO


def test_readme_five_lines_run(data_root, capsys):
    block = (REPO / "README.md").read_text().split("## The library in five lines")[1].split("```python")[1]
    code = block.split("```")[0]
    names = {}
    exec(compile(code, "README.md", "exec"), names)
    n = names["data"].num_nodes
    sizes = np.bincount(names["folds"], minlength=4)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1  # four folds of (almost) equal size
    train, val, test = (np.asarray(part) for part in (names["train"], names["val"], names["test"]))
    assert np.array_equal(test, np.flatnonzero(names["folds"] == 0))  # round 0: test fold 0, val fold 1
    assert np.array_equal(val, np.flatnonzero(names["folds"] == 1))
    assert len(np.intersect1d(train, np.concatenate([val, test]))) == 0 and len(train) + len(val) + len(test) == n
    printed = capsys.readouterr().out
    assert all(f"'{metric}'" in printed for metric in ("sdd", "cdd", "chd", "w1"))
