"""Runners that write result rows, resumable, with the code version and parameters in every row.

``sweep`` (the HpStrat experiment: datasets x models x split methods x folds) and ``executors`` (where its
(dataset, model) pairs train: here, or as Ray tasks); ``probes`` (the cheap does-the-graph-help estimates:
:func:`necessity`), ``graph_need`` (their rows and the cSBM grid), ``ladder`` (HpStrat's controls on contextual
SBMs whose homophily and size are set by design). A runner writes to the file or folder it is given, else to
``results/`` of the working directory. The rows themselves are read and appended by :mod:`hpstrat_lite.rows`,
below every runner (``results`` is its name in the notebooks). Part II's reproduction runners (Optuna studies
of the second paper) live beside the book, in ``hpstrat_book.part2``.
"""
