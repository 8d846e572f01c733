"""English as one ``Language``: the pack and its rule steps (``steps``), registered by ``lang.plugin``; the
fallback language (a code without a language of its own is read as English)."""

from __future__ import annotations

from ...resolve.language import Language
from . import PACK, steps

LANGUAGE = Language(PACK, gate=steps.GATE_STEPS, rules=steps.RULE_STEPS, rewrite=steps.REWRITE_STEPS,
                    frame=steps.FRAME_STEPS, composer=steps.resolve, fragment_max=14)
