"""Runners that write result rows under ``results/``, resumable, with the code version in every row.

``sweep`` (the HpStrat experiment: datasets x models x split methods x folds), ``tuning`` (Optuna
search and evaluation), ``necessity`` (Part II's studies), ``probes`` (the cheap does-the-graph-help estimates: :func:`necessity`),
``graph_need`` (their rows and the cSBM grid), ``results`` (reading and appending rows).
"""
