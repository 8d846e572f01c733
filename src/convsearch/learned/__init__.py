"""The trained resolver (issue 26), phase 1: data, labels, features and a numpy logistic regression.

Nothing here is wired into a rewriter yet; the shipped rules decide every turn as before. The modules:

- ``data``      the licensed training sets as ``Turn`` objects, split by dialog into 5 folds;
- ``labels``    the gate label of a turn and the term label of each history candidate;
- ``features``  a numeric vector per turn (the gate) and per candidate (term selection) from the turn's
                ``Analysis`` and the rules' ``Decision``, with an IDF table built from training text;
- ``model``     L2-regularised logistic regression fitted by Newton's method in numpy (no torch, no sklearn);
- ``train``     the out-of-fold report (``python -m convsearch.learned.train``).
"""
