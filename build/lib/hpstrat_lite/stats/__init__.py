"""Evaluation statistics, each written once, each returning a typed frozen result (numpy, scipy, pandas).

Every test takes the independent unit of its observations as an argument and reports it with its count:
folds of one split are not independent, nor are the models evaluated on the same folds, so a long frame is
aggregated to its unit first (:func:`unit_means`). A winner among several methods is named by the pairwise
post-hoc test (:func:`posthoc`) only, never by the omnibus Friedman test.

==========================  ===========================================================  ====================
function                    what                                                         result
==========================  ===========================================================  ====================
:func:`cross_fold_std`      std over folds (ddof = 1), mean, fold count per group        DataFrame
:func:`friedman`            Friedman test, Kendall's W, smallest p the design can reach  FriedmanResult
:func:`posthoc`             pairwise Wilcoxon, Holm; a winner only if it beats all       PosthocResult
:func:`wilcoxon_test`       signed-rank test, rank-biserial r, Hodges-Lehmann shift      PairedTest
:func:`sign_test`           binomial sign test                                           SignTest
:func:`holm`                Holm's step-down adjustment                                  ndarray
:func:`spearman`            rho, bootstrap interval, permutation p                       SpearmanResult
:func:`partial_spearman`    rho holding a third variable fixed                           PartialSpearmanResult
:func:`unit_means`          a long frame -> one row per independent unit                 DataFrame
:func:`best_model_change`   Appendix E: does the best model change with the split?       BestModelChange
==========================  ===========================================================  ====================

Importing this module loads neither torch nor any other part of the library.
"""
from ._checks import unit_name
from .correlation import PartialSpearmanResult, SpearmanResult, partial_spearman, spearman
from .models import BestModelChange, best_model_change
from .omnibus import FriedmanResult, PosthocResult, friedman, posthoc
from .paired import MIN_PAIRS, PairedTest, SignTest, hodges_lehmann, holm, sign_test, wilcoxon_test
from .units import cross_fold_std, friedman_at_unit, paired_test_at_unit, posthoc_at_unit, unit_means

__all__ = ["cross_fold_std", "friedman", "FriedmanResult", "posthoc", "PosthocResult", "wilcoxon_test",
           "PairedTest", "sign_test", "SignTest", "holm", "hodges_lehmann", "spearman", "SpearmanResult",
           "partial_spearman", "PartialSpearmanResult", "unit_means", "paired_test_at_unit", "friedman_at_unit",
           "posthoc_at_unit", "best_model_change", "BestModelChange", "MIN_PAIRS", "unit_name"]
