"""Entities an answer introduced: the referent of a pronoun after a which / who / 哪家 / 谁 / 什么 question.

"Which airline is the flag carrier of the Netherlands?" → "KLM Royal Dutch Airlines, founded in 1919, …" →
"What is its baggage allowance?": "its" is KLM, the name the answer brought in, not the Netherlands the user
named. Only when the latest user question asked for an entity and the latest answer named a new one.

>>> from convsearch.types import Message
>>> introduced_entity([Message("user", "报销差旅费要用哪个系统？"),
...                    Message("assistant", "差旅报销统一走「费控通」系统。")], "zh").text
'费控通'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..types import Message
from .entities import Mention, mentions

_ASKS_FOR_ENTITY = {
    "en": re.compile(r"^\W*(?:which|recommend|suggest|name)\b|\b(?:alternative|alternatives)\b|"
                     r"^\W*what(?:'s| is| are)?\s+(?:a|an|some|the best|the name)\b", re.IGNORECASE),
    "zh": re.compile(r"哪|谁|什么|推荐|有没有|有哪些"),
}
_ZH_QUOTED_RE = re.compile(r"[「《“『]([^」》”』]{1,20})[」》”』]")
_PERSON_WORDS = (2, 3)


def introduced_entity(history: Sequence[Message], lang: str, *, person: bool = False) -> Mention | None:
    """The one name the latest answer's first sentence introduced (not in the question it answers), when that
    question asked for an entity; None when the answer names several (a list: "它们" are the list, not its first
    item). With ``person``, a name of two or three words with no article before it."""
    if len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return None
    question, answer = history[-2].content, history[-1].content
    if not _ASKS_FOR_ENTITY[lang].search(question):
        return None
    first = _SENTENCE_END_RE.split(answer.strip(), maxsplit=1)[0]
    low_q = question.lower()
    if lang == "zh" and not person:
        quoted = [m.group(1).strip() for m in _ZH_QUOTED_RE.finditer(first) if m.group(1).strip() not in question]
        if len(quoted) == 1:
            return Mention(quoted[0], True, "nz", quoted[0])
    new = []
    for m in mentions(first, lang):
        if not m.proper or m.text.lower() in low_q or any(w in low_q.split() for w in m.text.lower().split()):
            continue
        if lang == "zh" and any(m.text[k:k + 2] in question for k in range(len(m.text) - 1)):
            continue  # "位于中国" after a question about 中国: not new
        if person and (m.det or len(m.text.split()) not in _PERSON_WORDS):
            continue
        if not any(m.text in n.text or n.text in m.text for n in new):
            new.append(m)
    return new[0] if len(new) == 1 else None


_SENTENCE_END_RE = re.compile(r"[.;!?。；！？:：]\s*")
