"""Chinese follow-up markers: an ellipsis ("X呢"), a leading 那 / 还有 / 另外, a proverb-like 呢, and a
demonstrative or classifier phrase naming something by its kind ("这张卡", "这款")."""

from __future__ import annotations

import re
from functools import lru_cache

from ... import lexicon as lx
from ...text import is_cjk, tagged
from ..base import Courtesy, IntroducedForms, Mention
from .mentions import mentions, zh_anaphor_at

# --- Chinese follow-up markers ---------------------------------------------------------------------

ZH_NE_RE = re.compile(r"呢[\s？?！!。.，,~～]*$")


_ZH_NOT_LEAD = frozenset("个款家种些位部台项件样里儿边时")


def zh_lead(query: str) -> str | None:
    """The follow-up marker a query opens with (那, 那么, 还有 …); not the 那 of 那个/那里."""
    q = query.strip()
    for lead in lx.ZH_LEADS:
        if q.startswith(lead) and len(q) > len(lead):
            if lead == "那" and q[1] in _ZH_NOT_LEAD:
                return None
            return lead
    return None


_ZH_NE_MAX_WORDS = 4


_ZH_PROVERB_RE = re.compile(r"\s*(里|上|中)?\s*(?:又|该|要)?(?:怎么弄|怎么搞|怎么操作|如何操作)[？?！!。.，,~～\s]*$")


def zh_proverb_ne(query: str) -> str:
    """A closing 怎么弄 / 怎么搞 / 怎么操作 stands for the frame's predicate, as 呢 does, after a place word (里/上/中)
    or a name alone: "PostgreSQL 里怎么弄" reads as "PostgreSQL 呢". Not 怎么办 / 怎么做, which ask a question of
    their own ("工作丢了怎么办？", "糖醋排骨怎么做？").

    >>> zh_proverb_ne("Apache 上怎么弄？"), zh_proverb_ne("我该怎么弄")
    ('Apache呢', '我该怎么弄')
    """
    m = _ZH_PROVERB_RE.search(query)
    if m is None or m.start() == 0:
        return query
    x = query[:m.start()].strip()
    if not m.group(1) and not (len(ms := mentions(x)) == 1 and ms[0].proper and ms[0].text == x):
        return query
    return x + "呢"


def zh_ellipsis(query: str) -> bool:
    """'X呢' where X is a short phrase without a verb ("价格呢", "那番禺呢", "末班十点呢", "Apache 上怎么弄"). In a
    longer clause or after a verb, 呢 is a modal particle ("你觉得呢", "我们正讨论呢"), not an ellipsis."""
    q = zh_proverb_ne(query.strip())
    if not ZH_NE_RE.search(q):
        return False
    core = ZH_NE_RE.sub("", q)
    lead = zh_lead(core)
    body = core[len(lead):] if lead else core
    toks = [(w, t) for w, t in tagged(body) if t not in ("x", "w") and w.strip()]
    if len(toks) > _ZH_NE_MAX_WORDS:
        return False
    return not any(t.startswith("v") and t != "vn" and w not in lx.ZH_NOMINAL_VERBS and w != "是" for w, t in toks)


def zh_det_tokens(text: str) -> list[tuple[str, str]]:
    """``tagged(text)`` with 这/那 + classifier + noun split as determiner + noun: jieba gives 这/张卡, 这/本书;
    this gives 这张/卡, 这本/书 (a determiner phrase standing for an earlier turn's entity).

    >>> zh_det_tokens("这张卡在国外刷有手续费吗")[:2]
    [('这张', 'r'), ('卡', 'n')]
    """
    toks = tagged(text)
    if not any(w in ("这", "那") for w, _ in toks):
        return toks
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(toks):
        w, t = toks[i]
        if w in ("这", "那") and i + 1 < len(toks) and len(toks[i + 1][0]) >= 2 and toks[i + 1][0][0] in lx.ZH_CLASSIFIERS:
            rest = toks[i + 1][0][1:]
            out.extend([(w + toks[i + 1][0][0], "r"), (rest, "n")])
            i += 2
            continue
        out.append((w, t))
        i += 1
    return out


@lru_cache(maxsize=1024)
def zh_kind_nouns(text: str) -> tuple[tuple[int, int, str, str], ...]:
    """Every "这张 + noun" / "那种 + noun" in ``text``: (start of the determiner, start of the noun, the noun as jieba
    cut it, its tag).

    >>> zh_kind_nouns("这张卡在国外刷有手续费吗")
    ((0, 2, '卡', 'n'),)
    """
    if "这" not in text and "那" not in text:
        return ()
    toks = zh_det_tokens(text)
    out = []
    pos = 0
    for i, (w, _) in enumerate(toks):
        start = text.find(w, pos)
        pos = start + len(w) if start >= 0 else pos
        if w in lx.ZH_CLASSIFIER_DETS and i + 1 < len(toks) and text.find(toks[i + 1][0], pos) == pos:
            out.append((start, pos, toks[i + 1][0], toks[i + 1][1]))
    return tuple(out)


_ZH_PREDICATE_STARTS = frozenset("能要会可该得都也还就不没是有在很太")


def zh_classifier_reference(text: str, entity: str) -> tuple[int, int] | None:
    """The span of "这张卡" / "这辆车" in ``text`` when its noun ends ``entity`` (the focus "经典白金卡"): the phrase
    names that entity by its kind. A noun the entity does not end in ("这本书" after a card) is no reference.

    >>> zh_classifier_reference("这张卡在国外刷有手续费吗", "招商银行的经典白金卡")
    (0, 3)
    """
    for start, at, noun, _ in zh_kind_nouns(text):
        if not entity.endswith(noun) and len(noun) == 2 and noun[1] in _ZH_PREDICATE_STARTS \
                and entity.endswith(noun[:1]):
            noun = noun[:1]  # 这种/鱼能/跟斗: jieba glued the kind noun to the word after it (not 鱼缸, 鱼饵)
        if entity.endswith(noun):
            return start, at + len(noun)
    return None


def zh_kind_phrase(text: str) -> tuple[int, int, str] | None:
    """The span and noun of the first "这种 + noun" / "这台 + noun" in ``text`` (a thing named by its kind), not one
    pointing at the situation (这种时候).

    >>> zh_kind_phrase("这种药饭后吃吗"), zh_kind_phrase("这种时候要换水吗")
    ((0, 3, '药'), None)
    """
    for start, at, noun, _ in zh_kind_nouns(text):
        if is_cjk(noun[:1]) and len(noun) <= 2 and noun not in lx.ZH_DEICTIC_NOUNS and noun not in lx.STOP_ZH:
            return start, at + len(noun), noun
    return None


# a question: a question mark, 吗, a final 呢, a question word or an A-not-A form
ZH_QUESTION_RE = re.compile(r"[？?]|吗|呢\s*$|什么|怎么|哪|谁|多少|多久|(?<![许很好差])多[长大远]|如何|几|是否|有没有|"
                             r"能不能|可不可以|"
                             + lx.ZH_A_NOT_A)


def has_pronoun(text: str) -> bool:
    """A pronoun or demonstrative standing for something named before (它, 这款, 前者; not the 这个 of 这个时候)."""
    ztoks = zh_det_tokens(text)
    pronouns = lx.ZH_PRONOUNS  # (``zh_anaphor_at`` is asked only of a pronoun: no other token is one)
    return any(w in pronouns and zh_anaphor_at(ztoks, i) for i, (w, _) in enumerate(ztoks))


# Openers with nothing to search for in them, one or several: a courtesy (请问, 想问一下, 我想知道) needs no separator
# (请问下 / 问下 not before 午 / 面 / 雨: 下午); an interjection (嗯, ok) needs a comma. A closer: a question's mood
# particle 啊 / 呀 (not 呢 or 吗, which ask), taken off a question only (a reply's 啊 stays: "可以啊").
COURTESY = Courtesy(
    opener=re.compile(r"^(?:\s*(?:(?:那)?(?:请问一下|请问下(?![午面雨])|请问|想问一下|想问下(?![午面雨])|问一下|"
                      r"问下(?![午面雨])|麻烦问一下|麻烦问下(?![午面雨])|我?想知道|我想问问|我想问一下|请告诉我)[，,：:\s]*|"
                      r"\s*(?:嗯嗯|嗯|哦|噢|额|呃|好的|好吧|ok|OK)\s*[，,！!。.~～]+\s*))+"),
    closer=re.compile(r"([啊呀]+)(\s*[？?！!。.~～]*\s*)$"),
    closer_after=1,
    closer_asks=lambda text: bool(ZH_QUESTION_RE.search(text)),
)


def _known(m: Mention, question: str) -> bool:
    """Is ``m`` a name the question gave in other words: two characters of it in the question ("位于中国" after a
    question about 中国), unless it is one of a kind the question asked for, named in full ("双子座流星雨" after
    "有没有值得看的流星雨": its name ends in a common noun of the question and says more)?"""
    return any(m.text[k:k + 2] in question for k in range(len(m.text) - 1)) and not any(
        not x.proper and len(m.text) > len(x.text) and m.text.endswith(x.text) for x in mentions(question))


# A question asking for an entity (哪 / 谁 / 什么 / 推荐 …); one of two names picked by a word of it longer than one
# character (a word of an unspaced clause is found inside it); a name the answer sets in quotes or title marks.
INTRODUCED = IntroducedForms(
    asks=re.compile(r"哪|谁|什么|推荐|有没有|有哪些"),
    picks=lambda name, clause: any(len(w) > 1 and w in clause for w in name.lower().split()),
    quoted=re.compile(r"[「《“『]([^」》”』]{1,20})[」》”』]"),
    known=_known,
)
