"""The reference numbers of the two papers: constants quoted from their tables and text, never computed.

Part I, "Not All Nodes Are Created Equal" (HpStrat): :data:`PAPER_GLOBAL_MEAN_RANK`,
:data:`PAPER_HPSTRAT_FIRST_DATASETS`, :data:`PAPER_APPENDIX_B_R2` (:mod:`hpstrat_book.hpstrat` reads
them). Part II, "Revisiting the Necessity of Graph Learning and Common Graph Benchmarks" (Katsman, Lou and
Gilbert, 2024): :data:`PAPER`, :data:`PAPER_NODE`, :data:`PAPER_LINK`, :data:`PAPER_WS_GAMMA`
(:mod:`hpstrat_book.necessity` re-exports them)."""
from __future__ import annotations

from hpstrat_book.part2.plan import WS_GAMMAS

PAPER_GLOBAL_MEAN_RANK = {"hpstrat": 1.49, "stratified": 2.20, "random": 2.31}
"""HpStrat paper, Section 5.2: global mean rank of each split method over 15 datasets x 7 models."""
PAPER_HPSTRAT_FIRST_DATASETS = (13, 15)
"""HpStrat paper, Table 4: HpStrat has the best mean rank on 13 of the 15 datasets."""
PAPER_APPENDIX_B_R2 = (0.021, 0.289)
"""HpStrat paper, Appendix B: on several (dataset, model) pairs the slope of test accuracy on test-set
mean homophily is significant (p < 0.05) with R^2 between 0.021 and 0.289."""


#: Where each reference number comes from (the paper's text: ``../shared/papers/003_*.txt`` beside the
#: repository; arXiv:2412.06173).
PAPER = {
    "title": "Revisiting the Necessity of Graph Learning and Common Graph Benchmarks",
    "authors": "Katsman, Lou and Gilbert",
    "year": 2024,
    "arxiv": "2412.06173",
    "node_source": "Tables 1 and 2 (test accuracy %, mean ± std over 5 trials)",
    "ws_source": "Table 3 (WS1000 link prediction, test ROC AUC x 100)",
    "gamma_source": "Figure 2 and Section 5 text (WS1000_gamma link prediction, MLP test ROC AUC vs gamma)",
    "link_source": "Table 4 (suggested benchmarks, link prediction test ROC AUC x 100)",
    # the abstract: a well-tuned feature-only MLP against graph methods on seven common datasets gains
    # "little benefit from using graph structure on five"
    "abstract_claim": (5, 7),
    # what the paper says about splits and tuning (Section 4.1, Section 7 "other baselines", Appendix C)
    "node_gnn_provenance": ("GNN numbers copied from prior work (Liu et al. 2020, Hoang & Lee 2023, Shirzad "
                            "et al. 2023); Section 7: 'we report results from preexisting papers for all "
                            "models other than the MLP in Tables 1 and 2'"),
    "mlp_split": "not stated",
    "tuning": "Bayesian sweeps with Weights & Biases (Appendix C); about 4000 GPU hours in total",
}

#: Paper Tables 1 and 2: test accuracy (%) of the tuned MLP ("MLP (tuned)") and of the GCN (Kipf &
#: Welling, copied from prior work), ``(mean, std)`` over 5 trials.
PAPER_NODE = {
    "Computers": {"MLP": (82.6, 0.6), "GCN": (82.6, 2.4)},
    "Photo": {"MLP": (88.0, 1.0), "GCN": (91.2, 1.2)},
    "CS": {"MLP": (92.8, 0.2), "GCN": (91.1, 0.5)},
    "Physics": {"MLP": (94.8, 0.4), "GCN": (92.8, 1.0)},
    "Cora": {"MLP": (69.4, 1.3), "GCN": (81.3, 0.8)},
    "CiteSeer": {"MLP": (66.0, 0.5), "GCN": (71.1, 0.7)},
    "PubMed": {"MLP": (86.8, 0.4), "GCN": (78.8, 0.6)},
}
#: Paper Tables 1 and 2, "MLP (original)" row (Liu et al., 2020): the untuned MLP the paper improves on.
PAPER_NODE_MLP_ORIGINAL = {"Computers": (44.9, 5.8), "Photo": (69.6, 3.8), "CS": (88.3, 0.7),
                           "Physics": (88.9, 1.1), "Cora": (61.6, 0.6), "CiteSeer": (61.0, 1.0),
                           "PubMed": (74.2, 0.7)}

#: Paper Tables 3 and 4: link prediction test ROC AUC (x 100), ``(mean, std)``; Table 3's random
#: baseline is 50 by construction of ROC AUC. Table 4's columns: "Musae-Twitch" (the paper does not state
#: which Twitch edition; we use Twitch-EN), "Twitch-PTBR", "Musae-Facebook" (Facebook). Figure 2 has no numbers in the text (:data:`PAPER_WS_GAMMA` holds its
#: statements), so the WS1000_gamma entries are ``None``.
PAPER_LINK = {
    "WS1000": {"random": (50.0, 0.0), "MLP": (49.1, 2.2), "GCN": (54.7, 0.4)},
    **{f"WS1000_{g}": {"MLP": None, "GCN": None} for g in WS_GAMMAS},
    "Twitch-PTBR": {"MLP": (60.1, 4.3), "GCN": (85.4, 0.4)},
    "Twitch-EN": {"MLP": (56.5, 4.1), "GCN": (82.8, 0.8)},
    "Facebook": {"MLP": (50.3, 0.5), "GCN": (90.6, 0.4)},
}

#: Figure 2 (WS1000_gamma, MLP only) in the paper's words (Section 5): the MLP improves as gamma grows;
#: "the highest attained performance being approximately 60% test ROC AUC for gamma >= 0.6"; "as
#: parental dependence increases in the features, the MLP begins to outperform the GCN" (the GCN of
#: Table 3, 54.7 on WS1000). ``max_mlp`` is the approximate ceiling, ``from_gamma`` where it is reached.
PAPER_WS_GAMMA = {
    "max_mlp": 60.0, "from_gamma": 0.6, "gcn_reference": 54.7,
    "statements": ("Introducing parental dependence in node features very quickly leads the MLP to improve "
                   "on link prediction (Figure 2 caption)",
                   "the highest attained performance being approximately 60% test ROC AUC for gamma >= 0.6",
                   "as parental dependence increases in the features, the MLP begins to outperform the GCN"),
}


def paper_figures() -> set[str]:
    """Every number the two papers state that this package quotes, as the strings a page may print them
    (``"82.6"``, ``"1.49"``, ``"0.021"``, ...): the values of this module, the HpStrat paper's constants, the WS1000 gammas and the arXiv id. A hand-written page may type
    these and no other measured figure (the book's test scans for the rest)."""
    values = [PAPER["year"], *PAPER["abstract_claim"], *PAPER_WS_GAMMA.values(), *WS_GAMMAS,
              *PAPER_GLOBAL_MEAN_RANK.values(), *PAPER_APPENDIX_B_R2]
    for table in (PAPER_NODE, PAPER_LINK):
        for cells in table.values():
            values += [v for cell in cells.values() if cell for v in cell]
    values += [v for cell in PAPER_NODE_MLP_ORIGINAL.values() for v in cell]
    out = {PAPER["arxiv"]}
    for v in values:
        if isinstance(v, (int, float)):
            out |= {f"{v:g}", f"{v:.1f}", f"{v:.2f}", f"{v:.3f}"}
    return out
