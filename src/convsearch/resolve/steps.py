"""The ordered rule steps of each language, and the runner of the frame-completion steps.

``REWRITE_STEPS[code]``: the rule rewriter's steps (run by ``rewrite.rules``). Each takes the language's ``Turn`` and
returns None (does not apply: the next step is tried; a step may annotate the turn for the later ones) or an
``Outcome(out, reason)``, which ends the rewrite; ``out=None`` stops it with the reason and no rewrite.

``GATE_STEPS[code]``: the gate's checks (the first half of the decision, run by ``gate.decide``): each takes the
turn's ``Analysis`` and returns a ``Decision`` or None (``rewrite.checks`` holds the ones every language shares).

``FRAME_STEPS[code]``: frame completion of a fragment. Each takes the follow-up and the frame (the latest user
question) and returns ``(rewrite, how)`` or None; the first step that answers wins (``complete_fragment``).

Adding a rule = one function with a docstring example in its language's ``lang/<code>/steps.py`` + one entry in its
list there + a test. A language outside this package registers its steps with ``register_steps``.

>>> complete_fragment("后天呢？", "杭州今天会下雨吗？", "zh")[0]
'杭州后天会下雨吗'
>>> complete_fragment("And on Saturday?", "What time does the store open on Sundays?", "en")[0]
'What time does the store open on Saturday?'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from ..lang import reading
from ..lang.en import steps as en
from ..lang.zh import steps as zh
from ..text import TRAIL_MARKS
from .compose import Turn, first
from .scoring import DEFAULT_STEPS

FrameStep = Callable[[str, str], "tuple[str, str] | None"]
RewriteStep = Callable[[Any], Any]

GateStep = Callable[[Any], Any]

FALLBACK = "en"  # a language with no gate checks of its own is gated as English is (see ``register_steps``)
GATE_STEPS: dict[str, tuple[GateStep, ...]] = {"zh": zh.GATE_STEPS, "en": en.GATE_STEPS}
FRAME_STEPS: dict[str, tuple[FrameStep, ...]] = {"zh": zh.FRAME_STEPS, "en": en.FRAME_STEPS}
REWRITE_STEPS: dict[str, tuple[RewriteStep, ...]] = {"zh": zh.REWRITE_STEPS, "en": en.REWRITE_STEPS}
# how a language runs its rewrite steps on a turn: (query, focus, history, topic, steps) -> (rewrite or None, how)
Resolve = Callable[[str, Any, Any, "str | None", Sequence[RewriteStep]], "tuple[str | None, str]"]
RESOLVE: dict[str, Resolve] = {"zh": zh.resolve, "en": en.resolve}
# the rule steps before a language's rewrite steps (``rewrite.scoring``)
RULE_STEPS: dict[str, tuple[Any, ...]] = {"zh": zh.RULE_STEPS, "en": en.RULE_STEPS}


def run_steps(query: str, focus: Any, history: Any, topic: str | None,
              steps: Sequence[RewriteStep]) -> tuple[str | None, str]:
    """A language's steps run on a plain turn (``compose.Turn``): the default ``resolve`` of a registered language."""
    return first(steps, Turn(query, focus, history))


def register_steps(code: str, *, gate: Sequence[GateStep] = (), rewrite: Sequence[RewriteStep] = (),
                   frame: Sequence[FrameStep] = (), resolve: Resolve = run_steps,
                   rule: Sequence[Any] = DEFAULT_STEPS) -> None:
    """Give a language's rule steps to the gate and the rule rewriter (a language pack of its own: see
    ``lang.register``). Its gate checks must end on one that always decides (``checks.standalone``); without
    any, it is gated as the fallback language is."""
    if gate:
        GATE_STEPS[code] = tuple(gate)
    REWRITE_STEPS[code] = tuple(rewrite)
    FRAME_STEPS[code] = tuple(frame)
    RESOLVE[code] = resolve
    RULE_STEPS[code] = tuple(rule)
    _complete.cache_clear()


def unregister_steps(code: str) -> None:
    """Take back what ``register_steps`` gave (the shipped languages' steps stay)."""
    if code not in ("zh", "en"):
        for registry in (GATE_STEPS, REWRITE_STEPS, FRAME_STEPS, RESOLVE, RULE_STEPS):
            registry.pop(code, None)  # type: ignore[attr-defined]
        _complete.cache_clear()


_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_MAX_EN_WORDS = 14  # every fragment, comparison and condition form is shorter: a cheap exit on the hot path
_MAX_ZH_CHARS = 24


def complete_fragment(query: str, frame: str, lang: str) -> tuple[str, str] | None:
    """(rewrite, how) when ``query`` is a fragment whose phrase has a slot type the ``frame`` holds, else None."""
    if not frame or not query.strip():
        return None
    if _CJK_RE.search(query):
        lang = "zh"  # "Windows 呢？" is a Chinese fragment, whatever its letters say
        if len(query) > _MAX_ZH_CHARS:
            return None
    elif len(query.split()) > _MAX_EN_WORDS:
        return None
    return _complete(query, frame, lang)


@lru_cache(maxsize=2048)
def _complete(query: str, frame: str, lang: str) -> tuple[str, str] | None:
    """The first answer of the language's ordered steps (``FRAME_STEPS``); the gate and
    the rewriter ask the same question per turn, so it is answered once."""
    frame_core = frame.strip()
    if reading(lang).unspaced:  # "杭州今天会下雨吗？": a frame written without spaces loses its final marks
        frame_core = frame_core.rstrip(TRAIL_MARKS)
    for step in FRAME_STEPS.get(lang, ()):
        done = step(query, frame_core)
        if done is not None:
            return done
    return None
