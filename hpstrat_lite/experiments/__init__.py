"""Runners that write result rows under ``results/``, resumable, with the code version in every row.

``sweep`` (the HpStrat experiment: datasets x models x split methods x folds) and ``executors`` (where its
(dataset, model) pairs train: here, or as Ray tasks); ``plan`` (Part II's datasets, budgets, result files;
torch-free), ``search`` (the search space and one Optuna trial), ``studies`` (stored Optuna studies shared by
processes), ``tuning`` (search and evaluation), ``necessity`` (Part II's studies), ``probes`` (the cheap does-the-graph-help estimates: :func:`necessity`), ``graph_need`` (their rows and the cSBM grid), ``protocols`` (the papers'
splits), ``baselines`` (link-prediction controls), ``ladder`` (HpStrat's controls on contextual SBMs whose homophily and
size are set by design). The rows themselves are read and appended by
:mod:`hpstrat_lite.rows`, below every runner (``results`` is its name in the notebooks).
"""
