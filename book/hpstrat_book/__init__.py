"""Rows -> what the book shows: tables, statistical tests, claims against the papers, figures.

``hpstrat`` (Part I's tables and tests), ``necessity`` (Part II's tables and the paper's numbers),
``graph_need`` (the cheap estimates against the measured MLP-versus-GNN gaps),
``progress`` (how far the Part II studies are), ``scorecard`` (every testable claim of both papers),
``plots`` (the figures, the book's plot style and its one palette), ``display`` (numbers rounded for reading),
``timing`` (what a rerun costs).
"""
