"""Synthetic Chinese ellipsis turns made from the CrossWOZ training dialogs (issue 26: synthetic data made by our own
code from licensed text, under half of any training set).

Why: CrossWOZ's weak labels mark only a named entity left out; a predicate or a common noun left out ("我也想吃" for
"我也想吃点心") is never a positive there, so a gate trained on it learns that short Chinese turns stand alone. Chinese
chit-chat follow-ups are mostly that kind of ellipsis.

How a synthetic turn is made (``ellipsis_turn``), from one CrossWOZ turn whose label is "stands alone" (the question
equals its rewrite) and the two messages before it (the previous question and the answer to it, the "context"):

1. the question's words (``text.tagged``: jieba words and tags) that may be left out: a noun, verb, name or idiom
   (tag ``n*``, ``v*``, ``l``, ``i``, ``j``) of two or more characters that is a content word (``learned.tokens``)
   and occurs in the context: the follow-up repeats it, so a speaker could leave it out;
2. the word left out: a noun before a verb or a name, then the longest, then the last in the question (the object
   slot, where "我也想吃点心" drops 点心); one ``的`` right after it goes too (``X的Y`` becomes ``Y``), as does a
   comma or space left at the start;
3. kept when what is left still has two CJK characters and a content word; the synthetic turn's question is what is
   left, its rewrite the original question (gate label "rewrite"; the left-out word becomes a needed candidate by
   ``labels.needed_term``), its history the source's, its dialog the source's (the same fold: no dialog on both
   sides of a split).

``ellipsis_set`` makes one turn per eligible source turn, and when more are eligible than ``share`` (default 0.4) of
the source set allows, keeps the ones whose SHA-1 of the id is smallest: deterministic, under half of the set.

>>> from convsearch.types import Message
>>> h = (Message("user", "附近有什么好吃的点心？"), Message("assistant", "推荐稻香村的点心。"))
>>> ellipsis_question(h, "我也想吃点心")
('我也想吃', '点心')
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from convsearch.learned.tokens import content_words
from convsearch.text import is_cjk, normalize, tagged
from convsearch.types import Message

from .data import Turn
from .labels import needs_rewrite

SUFFIX = "+ellipsis"  # the synthetic set's name: the source set's name with this suffix
SHARE = 0.4  # at most this share of the source set's turns (the data README: under half of any training set)
ANSWERS = True  # also the answer-side turns (answer_ellipsis_turn)
_TAGS = ("n", "v", "l", "i", "j")
_LEAD = " ，,、。；;：:"


def _rank(word: str, tag: str, pos: int) -> tuple[int, int, int]:
    """Sort key of an eligible word (the largest is left out): nouns first, then longer, then later."""
    return (int(tag.startswith("n")), len(word), pos)


def ellipsis_question(history: Sequence[Message], question: str, *, context: int = 2) -> tuple[str, str] | None:
    """(the question with one repeated word or name left out, what was left out), or None when nothing qualifies."""
    if not history:
        return None
    ctx = normalize("\n".join(m.content for m in history[-context:])).lower()
    content = set(content_words(question))
    toks: list[tuple[str, str, int]] = []  # (word, tag, start)
    pos = 0
    for w, tag in tagged(question):
        start = question.find(w, pos)
        if start >= 0:
            toks.append((w, tag, start))
            pos = start + len(w)
    best: tuple[tuple[int, int, int], int] | None = None
    for i, (w, tag, start) in enumerate(toks):
        if (len(w) >= 2 and tag.startswith(_TAGS) and all(is_cjk(ch) for ch in w) and w.lower() in content
                and w.lower() in ctx and not _in_brackets(question, start)):
            key = _rank(w, tag, start)
            if best is None or key > best[0]:
                best = (key, i)
    if best is None:
        return None
    lo = hi = best[1]
    # a word inside a longer repeated name (北京喇叭沟 | 原始森林 | 公园): the whole name is left out, not a piece
    while lo > 0 and toks[lo - 1][1].startswith(_NAMEISH) and _span(question, toks, lo - 1, hi).lower() in ctx:
        lo -= 1
    while (hi + 1 < len(toks) and toks[hi + 1][1].startswith(_NAMEISH)
           and _span(question, toks, lo, hi + 1).lower() in ctx):
        hi += 1
    start, end = toks[lo][2], toks[hi][2] + len(toks[hi][0])
    # a branch in brackets after the name goes with it (庆丰包子铺(月坛店)), and a bracket opened inside the span
    # is closed
    close = _CLOSE.get(question[end:end + 1])
    if close and close in question[end:]:
        end = question.index(close, end) + 1
    elif _in_brackets(question, end):
        closes = [i for i in (question.find(")", end), question.find("）", end)) if i >= 0]
        if not closes:
            return None
        end = min(closes) + 1
    dropped = question[start:end]
    if question[end:end + 1] == "的":
        end += 1
    left = (question[:start] + question[end:]).lstrip(_LEAD)
    if sum(is_cjk(ch) for ch in left) < 2 or not content_words(left) or not needs_rewrite(left, question):
        return None
    return left, dropped


_NAMEISH = ("n", "eng", "m", "j")
_CLOSE = {"(": ")", "（": "）"}


def _span(question: str, toks: list[tuple[str, str, int]], lo: int, hi: int) -> str:
    return question[toks[lo][2]:toks[hi][2] + len(toks[hi][0])]


def _in_brackets(question: str, at: int) -> bool:
    before = question[:at]
    return max(before.rfind("("), before.rfind("（")) > max(before.rfind(")"), before.rfind("）"))


def ellipsis_turn(t: Turn) -> Turn | None:
    """The synthetic ellipsis turn made from ``t`` (None when ``t`` needs a rewrite already or no word qualifies)."""
    if t.lang != "zh" or needs_rewrite(t.question, t.rewrite):
        return None
    got = ellipsis_question(t.history, t.question)
    if got is None:
        return None
    return replace(t, id=t.id + "~ellipsis", dataset=t.dataset + SUFFIX, question=got[0], rewrite=t.question)


def answer_ellipsis_turn(t: Turn) -> Turn | None:
    """A synthetic turn made from the answer before ``t`` (roles swapped, so the answer is the one asking): the
    answer with the word it repeats from the question it answers left out ("地址是在小汤山镇…" after "餐馆的地址是在哪
    啊？" becomes "是在小汤山镇…"), the rewrite the answer itself; the history the messages before the answer with
    user and assistant swapped. The terse reply that leans on the question it answers is the chit-chat follow-up
    CrossWOZ's questions lack ("是啊", "可以啊" for "可以给照啊")."""
    if t.lang != "zh" or len(t.history) < 2 or t.history[-1].role != "assistant":
        return None
    answer = t.history[-1].content
    got = ellipsis_question(t.history[:-1], answer, context=1)
    if got is None:
        return None
    history = tuple(Message("assistant" if m.role == "user" else "user", m.content) for m in t.history[:-1])
    return replace(t, id=t.id + "~answer", dataset=t.dataset + SUFFIX, history=history, question=got[0],
                   rewrite=answer)


def _order(turn_id: str) -> bytes:
    return hashlib.sha1(turn_id.encode("utf-8")).digest()


def ellipsis_set(source: Sequence[Turn], share: float = SHARE, *, answers: bool = ANSWERS) -> list[Turn]:
    """The synthetic turns of ``source`` (one per eligible turn, at most ``share`` × len(source)), in source order."""
    made = [s for t in source for s in (ellipsis_turn(t), answer_ellipsis_turn(t) if answers else None)
            if s is not None]
    cap = int(share * len(source))
    if len(made) > cap:
        keep = {s.id for s in sorted(made, key=lambda s: _order(s.id))[:cap]}
        made = [s for s in made if s.id in keep]
    return made


def base_set(dataset: str) -> str:
    """The training set a turn comes from (a synthetic set's source)."""
    return dataset.removesuffix(SUFFIX)
