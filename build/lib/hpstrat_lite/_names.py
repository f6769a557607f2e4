"""Model names as rows and tables spell them; torch-free, so that reading rows never loads torch.

:mod:`hpstrat_lite.engine.models` builds the architectures named here.
"""
from __future__ import annotations

#: The eight architectures of :mod:`hpstrat_lite.engine.models`: the seven GNNs of HpStrat's Table 2 and the
#: feature-only MLP reference.
MODELS = ("MLP", "GCN", "GAT", "GraphSAGE", "MixHop", "APPNP", "H2GCN", "GPRGNN")


def match_model(model) -> str | None:
    """The name in :data:`MODELS` that ``model`` matches, case-insensitively and ignoring ``-``/``_``, or None.

    >>> match_model("gpr-gnn"), match_model("sage")
    ('GPRGNN', None)
    """
    key = model.lower().replace("-", "").replace("_", "") if isinstance(model, str) else None
    return next((name for name in MODELS if name.lower() == key), None)


def model_name(name) -> str:
    """The one spelling of a model in rows and tables: the name of :data:`MODELS` it matches
    case-insensitively (``"gcn"`` -> ``"GCN"``), a link decoder kept after a hyphen
    (``"mlp-dot"`` -> ``"MLP-dot"``); other names (``"random"``, a user's model) unchanged.

    >>> model_name("gcn"), model_name("mlp-fd"), model_name("GraphSAGE"), model_name("random")
    ('GCN', 'MLP-fd', 'GraphSAGE', 'random')
    """
    if not isinstance(name, str):
        return name
    base, dash, decoder = name.partition("-")
    canonical = match_model(base)
    return name if canonical is None else canonical + dash + decoder
