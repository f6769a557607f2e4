"""The one palette of split methods, shared by the audit's figure and the book's figures
(``hpstrat_book.plots`` builds its plot style on it)."""

#: The Okabe-Ito colours (Okabe and Ito, *Color Universal Design*, 2008): distinct for viewers with
#: protanopia, deuteranopia or tritanopia, and in grey-scale print by their lightness.
OKABE_ITO = {"orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "black": "#000000"}
#: Colour of each split method: HpStrat vermillion, class-stratified blue, random k-fold grey (it
#: balances nothing), the covariate controls in the remaining Okabe-Ito colours.
METHOD_COLORS = {"random": "#7F7F7F", "stratified": OKABE_ITO["blue"], "hpstrat": OKABE_ITO["vermillion"],
                 "degree": OKABE_ITO["bluish green"], "placebo": OKABE_ITO["reddish purple"],
                 "covariate": OKABE_ITO["sky blue"]}
#: Display name of each split method.
METHOD_LABELS = {"random": "random k-fold", "stratified": "class-stratified", "hpstrat": "HpStrat",
                 "degree": "degree-stratified", "placebo": "placebo-stratified", "covariate": "covariate-stratified"}
