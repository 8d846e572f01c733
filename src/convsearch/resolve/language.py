"""A language of the follow-up resolver, as one object, and the languages the plugins registered.

A ``Language`` holds everything the resolver reads of one language: its pack (``lang.base.LanguagePack``: detection,
words, mentions, pronouns, the texts of the agent and the LLM stages), the gate's ordered checks, the rule steps that
run before the rewrite, the rewrite steps and the composer that runs them, and the frame steps that complete a
fragment. The shipped Chinese and English are ``lang.zh.language.LANGUAGE`` and ``lang.en.language.LANGUAGE``;
``lang.plugin`` registers them through ``convsearch.plugins``, the path a third-party language takes too: an
installed package whose ``convsearch.plugins`` entry point calls ``r.language("its_module:LANGUAGE")``.

>>> detect("那番禺呢？").code, detect("What about NovaDB?").code
('zh', 'en')
>>> language("xx").code  # a code no plugin registered is read as the fallback language
'en'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import lang as packs
from ..lang.base import LanguagePack
from ..text import TRAIL_MARKS
from ..types import Decision
from .compose import Outcome, first

FALLBACK = "en"  # the language a code without a Language of its own is read as (``lang.reading`` agrees)

# The steps' argument types are the analysis and the rule turn (``resolve.analysis``, ``resolve.scoring``), which
# are built above this module: named here as Any, so that no import (not even a type-checking one) goes upward.
GateCheck = Callable[[Any], "Decision | None"]  # Analysis -> Decision or None
RuleStep = Callable[[Any], Any]  # resolve.turn.Turn -> Resolution or None
RewriteStep = Callable[[Any], "Outcome | None"]  # the language's own turn (its composer builds it) → Outcome or None
FrameStep = Callable[[str, str], "tuple[str, str] | None"]
# runs a language's rewrite steps on a turn (``resolve.turn.Turn``, which the composer may extend with what its
# steps read): (turn, steps) -> (rewrite or None, how)
Composer = Callable[[Any, Sequence[RewriteStep]], "tuple[str | None, str]"]


def run_steps(t: Any, steps: Sequence[RewriteStep]) -> tuple[str | None, str]:
    """The plainest composer: ``steps`` in order on the turn itself (a language without a composer of its own)."""
    return first(steps, t)


@dataclass(frozen=True, slots=True, eq=False)
class Language:
    """One language: its ``pack`` and its ordered rule lists.

    - ``gate``: the gate's checks (``Analysis -> Decision | None``), ending on one that always decides
      (``checks.standalone``); empty: the fallback language's checks;
    - ``rules``: the steps before the rewrite (``Turn -> Resolution | None``, ``resolve.scoring``); None: the
      shared ones (``scoring.DEFAULT_STEPS``);
    - ``rewrite``: the rewrite steps, run by ``composer`` (which builds the language's turn from the query, the
      focus, the history and the topic);
    - ``frame``: frame completion of a fragment (``(query, frame) -> (rewrite, how) | None``);
    - ``script``: a fragment written in this script is completed with this language's frame steps whatever the
      turn's language ("Windows 呢？" is a Chinese fragment);
    - ``fragment_max``: the longest fragment, in characters for a language written without spaces, else in words
      (every fragment, comparison and condition form is shorter: a cheap exit on the hot path)."""

    pack: LanguagePack
    gate: tuple[GateCheck, ...] = ()
    rules: tuple[RuleStep, ...] | None = None
    rewrite: tuple[RewriteStep, ...] = ()
    frame: tuple[FrameStep, ...] = ()
    composer: Composer = run_steps
    script: re.Pattern[str] | None = None
    fragment_max: int | None = None  # a longer query is no fragment (characters if unspaced, else words)

    @property
    def code(self) -> str:
        return self.pack.code

    @property
    def name(self) -> str:
        return self.pack.name

    def __repr__(self) -> str:
        return f"Language({self.code!r})"


_CACHE: dict[str, Any] = {"key": None}


def _table() -> dict[str, Language]:
    """code → Language, for the registered languages (rebuilt when the plugins' registry changes)."""
    objects = packs.registered()
    if _CACHE["key"] is not objects:
        table: dict[str, Language] = {}
        for obj in objects:
            lang = obj if isinstance(obj, Language) else Language(obj)  # a bare pack: the fallback's gate
            table.setdefault(lang.code, lang)
        _CACHE["table"], _CACHE["key"] = table, objects
    return _CACHE["table"]  # type: ignore[no-any-return]


def languages() -> tuple[Language, ...]:
    """The registered languages, the shipped ones first."""
    return tuple(_table().values())


def language(code: str) -> Language:
    """The language of ``code``, or the fallback language for a code no plugin registered."""
    table = _table()
    got = table.get(code)
    return got if got is not None else table[FALLBACK]


def detect(text: str) -> Language:
    """The language whose pack claims ``text`` most surely (``lang.detect``)."""
    return language(packs.detect(text).code)


def by_script(text: str) -> Language | None:
    """The first language whose ``script`` the text is written in, if any."""
    for lang in _table().values():
        if lang.script is not None and lang.script.search(text):
            return lang
    return None


def complete_fragment(query: str, frame: str, lang: Language) -> tuple[str, str] | None:
    """(rewrite, how) when ``query`` is a fragment whose phrase has a slot type the ``frame`` holds, else None: the
    first answer of the frame steps of the language the fragment is written in (``by_script``, else ``lang``).

    >>> complete_fragment("后天呢？", "杭州今天会下雨吗？", language("zh"))[0]
    '杭州后天会下雨吗'
    >>> complete_fragment("And on Saturday?", "What time does the store open on Sundays?", language("en"))[0]
    'What time does the store open on Saturday?'
    """
    if not frame or not query.strip():
        return None
    lang = by_script(query) or lang
    cap = lang.fragment_max
    if cap is not None and (len(query) if lang.pack.unspaced else len(query.split())) > cap:
        return None
    frame_core = frame.strip()
    if lang.pack.unspaced:  # "杭州今天会下雨吗？": a frame written without spaces loses its final marks
        frame_core = frame_core.rstrip(TRAIL_MARKS)
    for step in lang.frame:
        done = step(query, frame_core)
        if done is not None:
            return done
    return None


__all__ = ["FALLBACK", "Composer", "FrameStep", "GateCheck", "Language", "RewriteStep", "RuleStep", "by_script",
           "complete_fragment", "detect", "language", "languages", "run_steps"]
