"""The training protocol as one value (:mod:`hpstrat_lite.protocol`) and how the engine checks it."""
import dataclasses

import pytest

from hpstrat_lite.protocol import PAPER_PROTOCOL, Execution, Protocol, check_protocol_value


def test_the_default_protocol_is_the_papers():
    assert (PAPER_PROTOCOL.max_epochs, PAPER_PROTOCOL.patience, PAPER_PROTOCOL.lr, PAPER_PROTOCOL.weight_decay,
            PAPER_PROTOCOL.hidden, PAPER_PROTOCOL.num_layers, PAPER_PROTOCOL.dropout, PAPER_PROTOCOL.k,
            PAPER_PROTOCOL.n_bins) == (1000, 100, 0.01, 5e-4, 64, 2, 0.5, 4, 10)
    assert PAPER_PROTOCOL == Protocol() and PAPER_PROTOCOL.feature_norm is None


def test_protocol_is_frozen_and_replace_changes_only_what_is_named():
    quick = PAPER_PROTOCOL.replace(max_epochs=20, patience=None)
    assert (quick.max_epochs, quick.patience, quick.lr) == (20, None, 0.01)
    assert PAPER_PROTOCOL.max_epochs == 1000
    with pytest.raises(dataclasses.FrozenInstanceError):
        PAPER_PROTOCOL.max_epochs = 5
    assert hash(quick) != hash(PAPER_PROTOCOL)  # usable as a dict key


def test_replace_names_an_unknown_field():
    with pytest.raises(ValueError, match=r"Protocol has no field 'epochs'; its fields are max_epochs, patience"):
        PAPER_PROTOCOL.replace(epochs=5)


def test_check_protocol_value_names_the_wrong_argument():
    assert check_protocol_value(PAPER_PROTOCOL) == (PAPER_PROTOCOL, Execution())
    with pytest.raises(ValueError, match=r"protocol must be a hpstrat_lite.protocol.Protocol .*got dict"):
        check_protocol_value({"max_epochs": 5})
    with pytest.raises(ValueError, match=r"execution must be a hpstrat_lite.protocol.Execution .*got str"):
        check_protocol_value(PAPER_PROTOCOL, execution="cpu")


def test_train_runs_takes_the_protocol_and_checks_its_fields(data_root):
    torch = pytest.importorskip("torch")
    from hpstrat_lite import fold_masks, load_dataset, random_folds
    from hpstrat_lite.engine.train import train_runs

    data = load_dataset("Texas", data_root)
    tr, va, te = fold_masks(random_folds(data.y, k=4, seed=0), k=4)
    quick = PAPER_PROTOCOL.replace(max_epochs=3, patience=None, hidden=16)
    rows = train_runs(data, "MLP", tr[:, :2], va[:, :2], te[:, :2], [0, 1], protocol=quick,
                      execution=Execution(device="cpu"))
    assert [r["epochs_run"] for r in rows] == [3, 3]
    with pytest.raises(ValueError, match=r"protocol must be a hpstrat_lite.protocol.Protocol"):
        train_runs(data, "MLP", tr, va, te, [0, 1, 2, 3], protocol={"max_epochs": 3})
    with pytest.raises(ValueError, match=r"hidden must be an integer >= 1; got 0"):
        train_runs(data, "MLP", tr, va, te, [0, 1, 2, 3], protocol=quick.replace(hidden=0))
    assert torch.is_tensor(tr)
