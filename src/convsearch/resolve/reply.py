"""Chinese chat replies that leave out what the other speaker's latest turn said: a bare yes/no reply echoes the
predicate it answers (``answer_echo``), a fragment fills a short wh-question (``wh_answer``), a comment on a short
remark takes the remark as its topic (``remark_topic``).

Chinese answers a yes/no question (or agrees with a remark) by repeating its verb or modal alone, leaving
the rest out: "你会游泳吗？" → "会" (会游泳), "想去看海吗" → "不想" (不想去看海), "他迟到了么" → "是啊"
(是啊他迟到了). The reply is complete only with what follows that verb in the other turn.

Precision first: the reply must be the polarity word alone (after an interjection, before particles or a new
clause opened by 我 / 你 or a conjunction), and the echoed predicate one clause, short (``PREDICATE_MAX``
characters) and holding a verb or an adjective; otherwise nothing is echoed. On restoration-200k's tuning half
the words the echo and the wh fill add are the human's 50-60% of the time (the rules' average: 26%).

>>> from convsearch.types import Message
>>> answer_echo("不会", [Message("user", "周末有空"), Message("assistant", "你会游泳吗？")])
('不会游泳', 'a bare reply echoes the predicate it answers: 不会 → 游泳')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import wraps

from .. import lexicon as lx
from ..text import tagged
from ..types import Message
from .entities import has_pronoun

# Words that answer a yes/no question on their own (the verb or modal of the question, with or without 不/没)
POLAR = frozenset({"是", "不是", "没有", "没", "有", "会", "不会", "能", "不能", "可以", "不可以", "要", "不要", "不用",
                   "敢", "不敢", "想", "不想", "行", "不行", "对", "不对", "不"})
PREDICATE_MAX = 12  # characters: the reply's missing part is a short verb phrase ("去看海"), not a whole remark
_PARTICLES = frozenset({"啊", "呀", "阿", "的", "呢", "哈", "哦", "嘛", "吧", "啦", "呐", "哒", "滴", "喔", "诶"})
_Q_END = frozenset({"吗", "么", "嘛", "呢", "吧", "啊", "呀", "不", "没", "咩", "请问", "没有"})
_OPENERS = frozenset(lx.ZH_INTERJECTIONS - POLAR - {"是啊", "对啊", "对呀", "好", "好的"}) | {"好吧"}
_SPEAKERS = frozenset({"我", "你", "我们", "你们", "咱", "咱们", "俺"})  # who is who flips between the turns
_NOISE = frozenset({"x", "w", "y", "e"})


def _toks(text: str) -> list[tuple[str, str]]:
    return [(w, t) for w, t in tagged(text) if w.strip()]


def polar_reply(query: str, asked: str = "") -> tuple[str, int] | None:
    """The polarity word a bare reply consists of and where its echo goes (after the word and its particles);
    a verb of the ``asked`` turn, or its negation, answers as one too ("听过" to "你听过那首歌没").

    >>> polar_reply("嗯是呀")
    ('是', 3)
    >>> polar_reply("不长，刚剪的") is None  # 不长 says its own predicate
    True
    """
    toks = _toks(query)
    i = 0
    while i < len(toks) and (toks[i][0] in _OPENERS or toks[i][1] in _NOISE):
        i += 1
    if i >= len(toks):
        return None
    word = toks[i][0]
    base = word[:-1] if word not in POLAR and word[-1:] in ("啊", "呀", "的") else word  # jieba keeps 是啊 whole
    j = i + 1
    if asked and base in ("不", "没", "没有") and j < len(toks) and _asked_verb(toks[j][0], asked):
        base, j = base + toks[j][0], j + 1  # "不" "需要": one answer, 不需要
    if asked and base[-1:] in _ASPECT and len(base) > 1 and _asked_verb(base[:-1], asked):
        base = base[:-1]  # jieba writes "听过" whole when the question has "听" "过"
    verb = asked and (toks[i][1].startswith(("v", "u")) or base != word) and _asked_verb(base, asked)
    if verb and j < len(toks) and toks[j][0] in _ASPECT:
        j += 1  # "吃" "过": the aspect marker stays with the answered verb
    if base not in POLAR and not verb:
        return None
    while j < len(toks) and (toks[j][0] in _PARTICLES or toks[j][1] in _NOISE):
        j += 1
    if j < len(toks) and toks[j][0] not in _SPEAKERS and toks[j][1] != "c":
        return None  # "没时间了", "不是组里的人": the reply goes on with its own predicate (not "但是 …", "我 …")
    k = i + 1
    while k < j and (toks[k][0] in _VOCATIVE or toks[k][0] in _ASPECT or k == i + 1 and base != word):
        k += 1  # "是啊" + 他迟到了, but "不是" + 住唐镇 + 呢: a sentence-final 呢 / 吧 stays last
    at = 0
    for w, _ in toks[:k]:
        at = query.index(w, at) + len(w)
    return base, at


def _asked_verb(word: str, asked: str) -> bool:
    """Is ``word`` (less a leading 不 / 没) a verb of the ``asked`` turn?"""
    bare = word[1:] if word[:1] in ("不", "没") and len(word) > 1 else word
    return any(w in (word, bare) and t.startswith("v") for w, t in _toks(asked))


_CLAUSE_END = frozenset({"吗", "么", "嘛", "呢", "吧", "啊", "呀", "咩"})
_SENTENCE_RE = re.compile(r"[。！？!?；;]")
_ASPECT = frozenset({"过", "了", "着"})
_SAME_MODAL = {"可以": ("能", "可"), "能": ("可以",)}  # "明天能来吗？" is answered "可以"
_VOCATIVE = frozenset({"啊", "呀", "阿", "的", "哦", "喔", "诶"})


def echoed_predicate(turn: str, polar: str) -> str | None:
    """What follows the answered verb in ``turn`` (or the whole clause, less the speaker, when it has none of
    the reply's words): "你会游泳吗" + 不会 → "游泳"; "他迟到了么" + 是 → "他迟到了".

    >>> echoed_predicate("想去看海吗？", "不想")
    '去看海'
    """
    turn = _SENTENCE_RE.split(turn.strip().rstrip("。！？!?；;…~～ "))[-1]  # "支持。需要我介绍…吗？": the last
    toks = _toks(turn)
    while toks and (toks[-1][0] in _Q_END or toks[-1][1] in _NOISE):
        toks = toks[:-1]
    while toks and (toks[0][0] in _OPENERS or toks[0][1] in _NOISE):
        toks = toks[1:]
    base = polar[1:] if polar[:1] in ("不", "没") and len(polar) > 1 else polar
    bases = {base, *_SAME_MODAL.get(base, ())}
    asked = {polar, *bases, *(neg + b for b in bases for neg in ("不", "没"))} if polar not in ("不", "没") else set()
    k = next((i for i, (w, _) in enumerate(toks) if w in asked), None)
    longest = sorted(asked, key=len, reverse=True)
    glued = next(((i, a) for i, (w, t) in enumerate(toks) if t.startswith("v") for a in longest
                  if len(w) > len(a) and w.startswith(a)), None) if k is None else None
    if glued is not None:  # jieba writes "能来" as one word: the modal is 能, the echo starts at 来
        i, a = glued
        rest_w = toks[i][0][len(a):].removeprefix("否")  # 可否 / 能否: 否 goes too
        if rest_w.startswith(("不" + a, "没" + a)):
            rest_w = rest_w[1 + len(a):]  # 有没有 / 是不是 written as one word: its second half goes too
        toks = [(rest_w, toks[i][1]), *toks[i + 1:]] if rest_w else toks[i + 1:]
    elif k is not None:
        rest = toks[k + 1:]
        if rest and rest[0][0] in ("不" + toks[k][0], "没" + toks[k][0]):
            rest = rest[1:]  # "会不会被删": the A-not-A question's second half
        if rest and rest[0][0] in _ASPECT:
            rest = rest[1:]  # "你吃过榴莲吗" + "吃过": the reply has its own 过
        toks = rest
    elif (ab := next((i for i, (w, _) in enumerate(toks) if len(w) == 3 and w[1] in "不没" and w[0] == w[2]
                      and w[0] in bases), None)) is not None:
        toks = toks[ab + 1:]  # jieba writes 是不是 / 有没有 as one word: "他是不是迟到了" + 是 → 迟到了
    elif toks and toks[0][0] in _SPEAKERS:
        toks = toks[1:]
    cut = next((i for i, (w, t) in enumerate(toks) if w in _CLAUSE_END or t in _NOISE), len(toks))
    toks = toks[:cut]  # "好玩吗最近有好多游戏": the answered clause ends at its question particle
    if polar in ("不", "没") and toks and toks[0][0][:1] == polar:
        toks = [(toks[0][0][1:], toks[0][1]), *toks[1:]] if len(toks[0][0]) > 1 else toks[1:]  # 不 + 不去: 不去
    pred = "".join(w for w, _ in toks)
    # a polarity word leaves out a predicate; an answered verb only its object ("吃过" + 榴莲); an offer of the
    # other speaker's ("需要我再推荐几本吗") is no predicate of the reply's speaker
    if not pred or len(pred) > PREDICATE_MAX or (polar in POLAR and not any(t[:1] in ("v", "a") for _, t in toks)) \
            or any(w in ("我", "你", "您") for w, _ in toks):
        return None
    return pred


_Completion = Callable[[str, Sequence[Message]], "tuple[str, str] | None"]


def _of_latest_turn(fn: _Completion) -> _Completion:
    """``fn`` reads only the latest turn (the analysis keeps its answer for the turn: ``Analysis.echo`` / ``wh``)."""

    @wraps(fn)
    def on_latest(query: str, history: Sequence[Message]) -> tuple[str, str] | None:
        return fn(query, (history[-1],)) if history else None
    return on_latest


def _answer_echo_of(query: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """The bare reply completed with the predicate of the other speaker's latest turn, and why; None when the
    query is no bare reply, the latest turn is the user's own, or its predicate is long or verbless."""
    if not history or history[-1].role != "assistant":
        return None
    if has_pronoun(query, "zh"):
        return None  # "对的，你觉得它怎么样": the pronoun is what the reply leaves to the earlier turn
    found = polar_reply(query.strip(), history[-1].content)
    if found is None:
        return None
    polar, at = found
    q = query.strip()
    pred = echoed_predicate(history[-1].content, polar)
    if pred is None or pred in q:
        return None
    return q[:at] + pred + q[at:], f"a bare reply echoes the predicate it answers: {polar} → {pred}"


# a question of the comment's own ("你在哪", "今天天气怎么样"): with a noun or pronoun of its own it has its own topic
_ASKS_OWN_RE = re.compile(r"[？?吗么]|什么|怎么|哪|谁|几|多少")
# characters: "出去走走"; a longer remark is seldom the topic whole (8 and 10 add more words, at lower precision)
REMARK_MAX = 6


def remark_topic(query: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """A comment on a short remark that names no thing takes the remark as its topic ("出去走走" → "太热了" →
    "出去走走太热了"): Chinese drops the topic a reply comments on. Only a remark of at most ``REMARK_MAX``
    characters once its particles, interjections and speaker are gone, holding a verb (an evaluation like
    "真好" is a reaction, not a topic), and only when the query repeats none of it; None otherwise.

    >>> from convsearch.types import Message
    >>> remark_topic("太热了", [Message("user", "好无聊"), Message("assistant", "出去走走")])
    ('出去走走太热了', 'a comment takes the short remark it answers as its topic: 出去走走')
    """
    if not history or history[-1].role != "assistant" or len(history[-1].content) > 3 * REMARK_MAX:
        return None  # (the length first: a long answer is never tokenised here)
    qt = _toks(query)
    own = _ASKS_OWN_RE.search(query) and any(t[:1] in ("n", "r") for w, t in qt if not _WH_RE.fullmatch(w))
    if not qt or own or all(w in lx.ZH_INTERJECTIONS or t in _NOISE or w in _PARTICLES for w, t in qt):
        return None  # "你在哪", "今天天气怎么样": a subject of its own; "哦哦": no comment at all
    toks = _toks(history[-1].content)
    while toks and (toks[-1][0] in _Q_END or toks[-1][0] in _PARTICLES or toks[-1][1] in _NOISE):
        toks = toks[:-1]
    while toks and (toks[0][0] in _OPENERS or toks[0][0] in lx.ZH_INTERJECTIONS or toks[0][1] in _NOISE):
        toks = toks[1:]
    if toks and toks[0][0] in _SPEAKERS:
        toks = toks[1:]
    remark = "".join(w for w, _ in toks)
    q = query.strip()
    if not remark or len(remark) > REMARK_MAX or not any(t[:1] == "v" for _, t in toks) \
            or any(w in q for w, t in toks if t[:1] in ("v", "a", "n")):
        return None
    return remark + q, f"a comment takes the short remark it answers as its topic: {remark}"


# Question words a fragment answer fills in place ("在哪里" + "北京" → "在北京"); not 多大 / 多高 / 怎么样, which
# ask for a degree or an opinion the answer states in its own words ("还行")
_WH_RE = re.compile(r"什么时候|啥时候|什么地方|哪里|哪儿|哪个|哪些|哪|什么|啥|谁|几")
_WH_TURN_MAX = 12  # characters of the question, its speaker and interjections gone: one short question
_ANSWER_MAX = 6
_THING_TAGS = ("n", "m", "t", "s", "eng", "f")
_OPEN_RE = re.compile(r"^(?:(?:哈|呵|嘿|嗯|恩|哦|噢|啊|哇|哟|咦|好吧|那)+)")
_SPEAKER_RE = re.compile(r"^(?:你们|你|您)(?:家)?")


def _wh_answer_of(query: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """A fragment that answers the other speaker's short wh-question takes the question's place around it:
    "你在哪里上班？" + "二环" → "在二环上班" (the asker's 你 is not the answerer's). Only a verbless fragment
    naming a thing, a number, a time or a place (≤ ``_ANSWER_MAX`` characters), after a question of at most
    ``_WH_TURN_MAX`` characters with exactly one question word; None otherwise.

    >>> from convsearch.types import Message
    >>> wh_answer("北京啊", [Message("user", "我也在外地"), Message("assistant", "你在哪里上班？")])
    ('在北京上班', 'a fragment answer fills the question word: 哪里 → 北京')
    """
    if not history or history[-1].role != "assistant" or len(history[-1].content) > 2 * _WH_TURN_MAX \
            or _INDEFINITE_RE.search(history[-1].content):
        return None  # "我去过几个地方", "没什么特别的": a question word that asks nothing
    asked = _TRAIL_RE.sub("", history[-1].content.strip())
    asked = _SPEAKER_RE.sub("", _OPEN_RE.sub("", asked))
    hits = list(_WH_RE.finditer(asked))
    if len(hits) != 1 or len(asked) > _WH_TURN_MAX:
        return None
    frag = _TRAIL_RE.sub("", query.strip())
    toks = _toks(frag)
    verbless = not any(t.startswith(("v", "a", "d")) for _, t in toks)
    if not frag or len(frag) > _ANSWER_MAX or _WH_RE.search(frag) or not verbless \
            or not any(t.startswith(_THING_TAGS) for _, t in toks):
        return None
    wh = hits[0]
    end = wh.end()
    while end < len(asked) and asked[wh.end():end + 1] in frag:
        end += 1  # "几点" + "10点" / "9点半": the answer brings its own measure word
    nxt = _toks(asked[end:])[:1]
    kinds = _NAME_TAGS if wh.group() in ("什么", "啥") else _PLACE_TIME_TAGS  # (jieba tags 师范 'nr')
    if nxt and nxt[0][1].startswith(("n", "q", "t")) and wh.group() in ("什么", "哪个", "哪", "几", "啥") and (
            frag.endswith(nxt[0][0][-1]) or all(t in kinds for _, t in toks)):
        end += len(nxt[0][0])  # "你叫什么名字" + "小明" → "叫小明"; "哪个城市" + "杭州" → "杭州"
    out = asked[:wh.start()] + frag + asked[end:]
    if out == frag:
        return None
    return out, f"a fragment answer fills the question word: {wh.group()} → {frag}"


# a question word used indefinitely: after 没/有/不/去过 or before 都/也 ("没什么", "去过几个地方", "哪儿都行")
_INDEFINITE_RE = re.compile(r"(?:[没有不]|去过|过)(?:什么|啥|几|哪)|(?:什么|啥|哪儿|哪里)[都也]|几乎")
_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "t", "m", "eng"})
_PLACE_TIME_TAGS = frozenset({"ns", "t", "m"})
_TRAIL_RE = re.compile(r"(?:吗|么|呢|呀|啊|吖|啦|吧|哦|的|[？?！!。.~～=\s])+$")

# the gate's and the rewriter's entry points (module-level names the rules import)
answer_echo = _of_latest_turn(_answer_echo_of)
wh_answer = _of_latest_turn(_wh_answer_of)
