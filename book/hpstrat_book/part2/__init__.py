"""Part II's reproduction runners ("Does the graph matter?"): Optuna studies of the paper's protocol (``tuning``,
``studies``, ``search``), its datasets, budgets and result files (``plan``), the papers' splits (``protocols``),
link prediction (``linkpred``), link-prediction controls (``baselines``) and the studies' runners
(``necessity``); ``python -m hpstrat_book.part2 tune ...`` runs them from a shell.
"""
