"""The one turn every rule step reads: a view of the turn's ``Analysis`` with the gate's decision and what the steps
annotate for the ones after them.

The gate's checks read the ``Analysis`` itself; the rule steps (``resolve.scoring``, ``Language.rules``) and the
rewrite steps (``Language.rewrite``, run by the language's composer) read a ``Turn``: ``query`` (the asked form;
a composer may hand its steps another, "there" given its place), ``q`` (stripped; the English steps put a class
phrase's name into it), ``history``, ``topic``, ``lang``, ``focus`` (the conversation's focus, read from the
analysis on first use; steps annotate it) and ``ent`` (the focus's entity). A language whose steps work more out of
the query extends it (``lang.zh.steps.ZhTurn``: the follow-up marker and the body of an ellipsis;
``lang.en.steps.EnTurn``: the section, the references replaced, the rewrite so far), built by its composer with
``Turn.extend``.

>>> from convsearch.resolve.analysis import analyse
>>> from convsearch.types import Message
>>> t = Turn(analyse([Message("user", "Who founded SpaceX?")], "When did it launch?"))
>>> t.q, t.ent.text, t.lang
('When did it launch?', 'SpaceX', 'en')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..lang.base import Mention
from ..types import Decision, Message
from .focus import Focus

if TYPE_CHECKING:
    from .analysis import Analysis

T = TypeVar("T", bound="Turn")


class Turn:
    """A turn as the rule steps read it (see the module docstring). ``decision`` is the gate's verdict (a turn built
    for an example or a learned choice may have none: reading it then is an error); ``resolve_frame(focus)``
    resolves the previous question a frame ellipsis completes, when the scorer hands a way to."""

    __slots__ = ("a", "_decision", "query", "q", "history", "topic", "lang", "_focus", "_frames")

    def __init__(self, a: Analysis, decision: Decision | None = None, *, query: str | None = None,
                 focus: Focus | None = None, frames: Callable[[Analysis, Focus], Focus] | None = None) -> None:
        self.a = a
        self._decision = decision
        self.query = a.query if query is None else query
        self.q = self.query.strip()
        self.history: tuple[Message, ...] = a.history
        self.topic = a.topic
        self.lang = a.lang
        self._focus = focus
        self._frames = frames
        self.prepare()

    @property
    def decision(self) -> Decision:
        if self._decision is None:
            raise ValueError("this turn was built without the gate's decision")
        return self._decision

    @property
    def focus(self) -> Focus:
        if self._focus is None:
            self._focus = self.a.topic_focus
        return self._focus

    @focus.setter
    def focus(self, value: Focus) -> None:
        self._focus = value

    @property
    def ent(self) -> Mention | None:
        """The focus's entity."""
        return self.focus.entity

    def resolve_frame(self, focus: Focus) -> Focus:
        """The focus with its frame (the previous question) resolved as it was meant, when the scorer can."""
        return focus if self._frames is None else self._frames(self.a, focus)

    def why(self, how: str) -> str:
        """The reason of a rewrite: the gate's verdict, then how the step wrote it."""
        return f"gate: {self.decision.reason}; {how}"

    def extend(self, cls: type[T], *, query: str | None = None) -> T:
        """This turn as a language's extension ``cls`` (a subclass) sees it: the same analysis, decision and focus
        (the extension's own annotations are its own), ``query`` in place of this turn's if given."""
        return cls(self.a, self._decision, query=self.query if query is None else query, focus=self.focus,
                   frames=self._frames)

    def prepare(self) -> None:
        """What a language's extension works out of the query, when the turn is built (nothing here)."""


__all__ = ["Turn"]
