"""The gate's checks that read the same in every language: each takes the turn's ``Analysis`` and returns a
``Decision`` (it decides: the checks after it are not run) or None (it does not apply).

A language's gate is its ordered list of checks (``GATE_STEPS`` in ``lang/<code>/steps.py``): these, and the
language's own (its markers, its remark, its subject test) in between. Two checks are made from a language's
callables: ``short(word_count, most)`` and ``after_closing(asks)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import lexicon as lx
from ..text import words
from ..types import Decision, DecisionKind
from .entities import partial_name_span, topic_entity
from .focus import closes_exchange
from .shapes import is_social

if TYPE_CHECKING:  # the analysis is built above the steps that read it
    from .analysis import Analysis

Check = Callable[["Analysis"], "Decision | None"]


def no_context(a: Analysis) -> Decision | None:
    """No history and no session topic: nothing to lean on."""
    if not a.history and not a.topic:
        return Decision(False, "no history and no session topic", 1.0, DecisionKind.NO_CONTEXT)
    return None


def social(a: Analysis) -> Decision | None:
    """Thanks and goodbyes ask for nothing."""
    if is_social(a.q):
        return Decision(False, "a social turn (thanks, goodbye), not a request", 0.8, DecisionKind.SOCIAL)
    return None


def partial_name(a: Analysis) -> Decision | None:
    """A partial name of the session topic ("Divac" on a page about "Vlade Divac")."""
    if a.named_topic and partial_name_span(a.q, a.named_topic):
        return Decision(True, "partial name of the session topic", 0.8, DecisionKind.PARTIAL_NAME)
    return None


def offer(a: Analysis) -> Decision | None:
    """A bare yes to the latest answer's offer of information ("Yes please")."""
    if a.history and a.offer() is not None:
        return Decision(True, "a yes to the latest answer's offer of information", 0.8, DecisionKind.OFFER)
    return None


def ordinal(a: Analysis) -> Decision | None:
    """A positional reference to an item the latest answer listed."""
    if a.history and a.ordinal() is not None:
        return Decision(True, "positional reference to a listed item ('the third step', '第二种')", 0.85,
                        DecisionKind.ORDINAL)
    return None


def fragment(a: Analysis) -> Decision | None:
    """A fragment that fills a slot of the latest user question, or asks which of two things it named."""
    if a.history and a.frame and (a.fragment() is not None or a.compared() is not None):
        return Decision(True, "a fragment that fills a slot of the previous question", 0.85, DecisionKind.ELLIPSIS)
    return None


def named(a: Analysis) -> Decision | None:
    """The query names its own entity: standalone, as typed."""
    if any(m.proper for m in a.mentions):
        return Decision(False, "names its own entity", 0.8, DecisionKind.NAMED)
    return None


def short(word_count: Callable[[str], int], most: int) -> Check:
    """A check: a query of at most ``most`` words (as the language counts them) leans on the conversation."""
    def very_short(a: Analysis) -> Decision | None:
        """A query of a few words leans on the conversation."""
        if word_count(a.q) <= most:
            return Decision(True, "very short query", 0.6, DecisionKind.SHORT)
        return None
    return very_short


def no_noun(a: Analysis) -> Decision | None:
    """A query without any content noun asks about something unnamed."""
    if not a.mentions:
        return Decision(True, "no content noun", 0.6, DecisionKind.SHORT)
    return None


def relational_only(a: Analysis) -> Decision | None:
    """A query whose only nouns are relational (价格, types) asks about an aspect of something unnamed."""
    if all(m.relational for m in a.mentions):
        return Decision(True, "only relational nouns (the price / the types of what?)", 0.7, DecisionKind.SHORT)
    return None


def topic(a: Analysis) -> Decision | None:
    """With a session topic, a query naming nothing of it is about it (low confidence)."""
    if not a.topic:
        return None
    topic_words = {w for w in words(topic_entity(a.topic)) if w not in lx.STOP_EN and w not in lx.STOP_ZH}
    if topic_words & set(words(a.q)):
        return Decision(False, "names the session topic", 0.7, DecisionKind.TOPIC)
    return Decision(True, "does not name the session topic", 0.5, DecisionKind.TOPIC)


def after_closing(asks: Callable[[str], bool]) -> Check:
    """A check: a question (``asks``, as the language tells one) after the user closed a digression goes back to
    what the digression turned aside from."""
    def resumes(a: Analysis) -> Decision | None:
        """A question after a closed digression goes back to what it turned aside from."""
        if a.history and closes_exchange(a.frame or "") and asks(a.q):
            f = a.topic_focus  # (only after a closing: the focus search is not repeated on every turn)
            if f.resumed and f.entity is not None and f.entity.text.lower() not in a.q.lower():
                return Decision(True, "asks on after a closed digression ('对了…' … '好的谢谢')", 0.5,
                                DecisionKind.SUBJECT)
        return None
    return resumes


def standalone(a: Analysis) -> Decision | None:
    """None of the checks before it applied."""
    return Decision(False, "standalone", 0.7, DecisionKind.STANDALONE)
