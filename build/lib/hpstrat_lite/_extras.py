"""Optional dependencies: import one, or say in one line which extra of ``hpstrat_lite`` installs it.

The core (node homophily, folds, fold quality, the scikit-learn splitters) needs numpy, scipy, numba,
scikit-learn, pandas, tqdm and filelock only. The rest comes with extras::

    pip install 'hpstrat_lite[pyg]'      # torch, torch_geometric: datasets, the PyG transform, training
    pip install 'hpstrat_lite[studies]'  # optuna (and [pyg]): Part II's tuning
    pip install 'hpstrat_lite[ray]'      # ray: the sweep on a Ray cluster
    pip install 'hpstrat_lite[reports]'  # matplotlib, statsmodels: figures and the Appendix B regression
    pip install 'hpstrat_lite[book]'     # papermill, Jupyter Book: the notebooks and the HTML book
    pip install 'hpstrat_lite[all]'      # all of the above
"""
from __future__ import annotations

import importlib

#: The extra that installs each optional top-level module.
EXTRA_OF = {"torch": "pyg", "torch_geometric": "pyg", "optuna": "studies", "ray": "ray", "matplotlib": "reports",
            "statsmodels": "reports", "papermill": "book", "nbformat": "book", "nbconvert": "book"}


def require(module: str, *, extra: str | None = None):
    """Import and return ``module``; when it (or the package it belongs to) is not installed, raise a
    ``ModuleNotFoundError`` whose one-line message names the extra that installs it.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"statsmodels.api"``.
    extra : str, optional
        The extra to name; default :data:`EXTRA_OF` of the module's top-level package.

    Examples
    --------
    >>> require("numpy").__name__
    'numpy'
    >>> require("no_such_module", extra="ray")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ModuleNotFoundError: no_such_module is not installed: it comes with hpstrat_lite's [ray] extra (pip install ...
    """
    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = (err.name or "").partition(".")[0]
        if missing not in (top, *EXTRA_OF):
            raise  # a module the optional package itself needs: its own message says more
        extra = extra or EXTRA_OF.get(top) or EXTRA_OF[missing]
        raise ModuleNotFoundError(f"{missing} is not installed: it comes with hpstrat_lite's [{extra}] extra "
                                  f"(pip install 'hpstrat_lite[{extra}]').", name=missing) from None
