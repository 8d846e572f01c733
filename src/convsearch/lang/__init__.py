"""Per-language rule steps, as ordered lists of small named functions.

``zh.REWRITE_STEPS`` / ``en.REWRITE_STEPS``: the rule rewriter's steps (``rewrite.rules._rewrite_zh`` /
``_rewrite_en``). Each takes the language's ``Turn`` and returns None (does not apply: the next step is tried; a
step may annotate the turn for the later ones) or an ``Outcome(out, reason)``, which ends the rewrite; ``out=None``
stops it with the reason and no rewrite.

``zh.FRAME_STEPS`` / ``en.FRAME_STEPS``: frame completion of a fragment. Each takes the follow-up and the frame
(the latest user question) and returns ``(rewrite, how)`` or None; the first step that answers wins
(``rewrite.frame.complete_fragment``).

Adding a rule = one function with a docstring example + one entry in its language's list + a test.
"""

from __future__ import annotations

from collections.abc import Callable

from . import en, zh

Step = Callable[[str, str], "tuple[str, str] | None"]

FRAME_STEPS: dict[str, tuple[Step, ...]] = {"zh": zh.FRAME_STEPS, "en": en.FRAME_STEPS}
REWRITE_STEPS = {"zh": zh.REWRITE_STEPS, "en": en.REWRITE_STEPS}

__all__ = ["FRAME_STEPS", "REWRITE_STEPS", "Step"]
