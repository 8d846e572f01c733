"""The learned resolver at inference (issue 26): what ``--rewriter learned`` runs on every turn, and what ``auto``
runs when an LLM is configured and the model file is present (the offline answer and the doubt that decides whether
the LLM is asked). Numpy arithmetic over the shipped model file (``convsearch/models/learned.json``); nothing here
fits anything. The modules:

- ``rewriter``  ``LearnedRewriter``: the ``learned`` rewriter (``get_rewriter("learned")``), combined with the rules;
- ``auto``      ``AskWhenUnsure`` / ``learned_auto``: ``auto`` on the learned answer, the LLM only where it doubts;
- ``ask``       the doubt over the offline answer (the model file's ``ask`` section);
- ``resolver``  the model file loaded once per path; the gate and term selector on one turn (``Resolved``);
- ``features``  a numeric vector per turn and per history candidate, read off the turn's ``Analysis``;
- ``compose``   the chosen terms put into the question through the language pack's composer;
- ``model``, ``alt_models``  the three model kinds a file may hold (logistic, boosted trees, MLP), predict only;
- ``policy``    how the learned gate and the rules' verdict combine; ``tokens``: the words the features read;
- ``oof``       evaluation only (``convsearch eval``): a training file's records scored by the fold models that never
                saw their dialogs, read from the checkout's ``research/learned/folds.json.gz``.

Training, experiments, exports and the combination grid live outside the package, in ``research/learned/`` of the
repository (``make train``; research/README.md).
"""
