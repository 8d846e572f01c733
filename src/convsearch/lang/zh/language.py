"""Chinese as one ``Language``: the pack and its rule steps (``steps``), registered by ``lang.plugin``."""

from __future__ import annotations

import re

from ...resolve.language import Language
from . import PACK, steps

LANGUAGE = Language(PACK, gate=steps.GATE_STEPS, rules=steps.RULE_STEPS, rewrite=steps.REWRITE_STEPS,
                    frame=steps.FRAME_STEPS, composer=steps.resolve,
                    script=re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"), fragment_max=24)
