"""Per-language rule steps, as ordered lists of small named functions (``zh.FRAME_STEPS``, ``en.FRAME_STEPS``).

Each step takes the follow-up and the frame (the latest user question) and returns ``(rewrite, how)`` or None; the
first step that answers wins (``rewrite.frame.complete_fragment``). Adding a rule = one function with a docstring
example + one entry in its language's list + a test.
"""

from __future__ import annotations

from collections.abc import Callable

from . import en, zh

Step = Callable[[str, str], "tuple[str, str] | None"]

FRAME_STEPS: dict[str, tuple[Step, ...]] = {"zh": zh.FRAME_STEPS, "en": en.FRAME_STEPS}

__all__ = ["FRAME_STEPS", "Step"]
