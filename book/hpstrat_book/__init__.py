"""The book's side of hpstrat_lite: rows -> what the book shows (tables, statistical tests, claims against the
papers, figures), the book runner, and Part II's reproduction runners. Installed (editable) by ``make install``
for the notebooks; not part of the ``hpstrat_lite`` wheel.

``hpstrat`` (Part I's tables and tests), ``controls`` (this book's own claims about why HpStrat works),
``necessity`` / ``necessity_tables`` / ``baselines`` / ``readings`` (Part II's tables and the paper's numbers),
``graph_need`` (the cheap estimates against the measured MLP-versus-GNN gaps), ``progress`` (how far the
Part II studies are), ``scorecard`` (every testable claim of both papers), ``plots`` (the figures, the book's
plot style and its one palette), ``display`` (numbers rounded for reading, numbered tables), ``timing`` (what a
rerun costs), ``paths`` (where the committed rows are), ``build`` (the book runner: papermill + Jupyter Book),
``part2`` (the second paper's Optuna studies: ``python -m hpstrat_book.part2 tune ...``).

Design notes: where the line between the wheel and the book runs
------------------------------------------------------------------
The wheel holds what a user runs on their own graph and model: the method (``core``), loaders (``data``),
batched training (``engine``), the runners of the HpStrat sweep, the controls and the graph-need estimate
(``experiments``), the statistics (``stats``), the audit and ``necessity()``, and the ``hpstrat`` command.
Everything that exists to show the papers is here instead: the papers' own numbers, claims and verdict
prose, page tables, the plot style, the book runner. Part II's reproduction runners (Optuna studies on the
paper's datasets, budgets and splits, and the link-prediction pipeline they train) are here too, not an
extra of the wheel: they reproduce one paper's tables with that paper's protocol, a user's question about
their own graph ("does the graph help?") is answered by ``hpstrat_lite.necessity`` and ``audit``, and keeping
the studies beside the book keeps the wheel small enough to read.
"""
