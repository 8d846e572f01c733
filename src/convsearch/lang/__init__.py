"""Language packs: what differs between languages, handed down as data and callables.

The bottom layer of the follow-up resolver: a pack imports nothing of the rule layer. ``zh`` and ``en`` ship
(``lang/zh``, ``lang/en``); their rule steps (``lang/<code>/steps.py``) sit above the rule primitives and are
gathered by ``rewrite.steps``.
"""
