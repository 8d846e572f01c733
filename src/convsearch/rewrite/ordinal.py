"""References to a listed item by its position: "the first one", "the third step", "the last two options",
"the latter", "option 2", "第二种", "最后一个".

An assistant answer that lists things lets the user pick from it by position. Two list shapes are read:

- numbered items: "1. Research your market. 2. Define your services." / "1) Executive Summary: …" / "1、…";
  an item is named by its title (the text before a colon) or else its first clause;
- an inline series: "the Hotel Navona, the Eitch Borromini Palazzo, and the Hotel Raphael",
  "Trello or Jira", "关键词检索、向量检索和混合检索"; an item is the noun phrase at its edge.

The reference is replaced by the item(s) it picks, from the most recent assistant turn whose list is long
enough (the answer just before may be about one of the items: "Tell me more about the last one." after a
paragraph on the first hotel). Everything here is pure string work on text already in the history, so the
rewrite stays faithful; lists are parsed once per distinct turn text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .. import lexicon as lx
from ..lang.base import Mention, join_tokens
from ..text import is_cjk, tagged
from ..types import Message
from .entities import mentions
from .offer import user_side

_EN_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
           "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
           "tenth": 10, "10th": 10, "last": -1, "final": -1}
_EN_COUNT = {"two": 2, "three": 3, "2": 2, "3": 3}
_ORD = "|".join(sorted(_EN_ORD, key=len, reverse=True))
# "the third step", "the first and second options", "the third or the fourth one"
_EN_ORD_RE = re.compile(rf"\bthe\s+({_ORD})(?:\s+(?:and|or|&)\s+(?:the\s+)?({_ORD}))?\s+([a-z][a-z-]*)\b", re.IGNORECASE)
# "the last two options", "the first three"
_EN_RUN_RE = re.compile(r"\bthe\s+(first|last)\s+(two|three|2|3)(?:\s+([a-z][a-z-]*))?\b", re.IGNORECASE)
_EN_BARE_ORD_RE = re.compile(rf"\bthe\s+({_ORD})(?=\s*(?:[?.!,;]|$))", re.IGNORECASE)
_EN_FORMER_RE = re.compile(r"\bthe\s+(former|latter)\b", re.IGNORECASE)
# "option 2", "step #3", "number 4"
_EN_NUM_RE = re.compile(r"\b(option|step|number|item|choice|point|no\.)\s*#?(\d{1,2})\b", re.IGNORECASE)

_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_CLS = "个种款家条步点项类部本首位套组样座所间台辆只门张件场支"
# not "第一点，" (firstly) or "最后一个问题" (one last question): those open the speaker's own list
_ZH_NOT_REF = r"(?!\s*(?:问题|[，,：:]))"
_ZH_ORD_RE = re.compile(rf"第\s*([一二三四五六七八九十]|\d{{1,2}})\s*([{_ZH_CLS}]){_ZH_NOT_REF}")
_ZH_LAST_RE = re.compile(rf"最后(?:一|那)?\s*([{_ZH_CLS}]){_ZH_NOT_REF}")
_ZH_FORMER_RE = re.compile(r"前者|后者")

# Numbered items: "1. ", "2) ", "3、", "(4) ", "（5）" at the start or after whitespace / sentence end.
_NUM_ITEM_RE = re.compile(r"(?:^|(?<=[\s。；;:：.!?！？]))[(（]?(\d{1,2})[.)）、](?!\d)\s*")
_TITLE_END_RE = re.compile(r"[:：]")
_CLAUSE_END_RE = re.compile(r"[.;,!?。；，！？]|\s[-–—]\s")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_EN_SERIES_LAST_RE = re.compile(r"^\s*(?:and|or)\s+", re.IGNORECASE)
_EN_PAIR_JOIN_RE = re.compile(r"\s(?:or|and)\s")
_MAX_NAME_WORDS = 4
_MAX_LIST_CHARS = 4000  # lists are read from the head of an answer: bounded work on the gate path
# "<kind> such as / like / including A, B and C" — the kind noun says what the items are
_EN_EXAMPLES_RE = re.compile(r"\b([a-z]+),?\s+(?:such as|like|including)\s+([^.;:!?()]+?)(?=\s*(?:[.;:!?()]|,\s+(?:that|which|who)\b|\s+(?:that|which|who|can|could|are|is|to|for|in|help)\b|$))")
_EN_SPLIT_RE = re.compile(r",\s*(?:and|or)?\s*|\s+(?:and|or)\s+")

_MAX_TITLE_WORDS = 10


@dataclass(frozen=True, slots=True)
class OrdinalRef:
    start: int
    end: int
    positions: tuple[int, ...]  # 1-based; negative counts from the end (-1 = last)
    noun: str  # the head noun the reference used ("step", "one"), "" when none
    strict: bool = False  # the noun is no list noun ("weeks"): only a list of that kind can answer
    pair: bool = False  # 前者 / 后者: one of exactly two items


def find_ordinal(query: str, lang: str) -> OrdinalRef | None:
    """The first positional reference in ``query``, or None."""
    if lang == "zh":
        m = _ZH_ORD_RE.search(query)
        if m:
            g = m.group(1)
            n = int(g) if g.isdigit() else _ZH_NUM[g]
            return OrdinalRef(m.start(), m.end(), (n,), m.group(2)) if n > 0 else None
        m = _ZH_LAST_RE.search(query)
        if m:
            return OrdinalRef(m.start(), m.end(), (-1,), m.group(1))
        m = _ZH_FORMER_RE.search(query)
        if m:  # one of two: only a list of exactly two answers it
            return OrdinalRef(m.start(), m.end(), (1 if m.group(0) == "前者" else -1,), "", pair=True)
        return None
    m = _EN_RUN_RE.search(query)
    if m:
        k = _EN_COUNT[m.group(2).lower()]
        noun = (m.group(3) or "").lower()
        strict = bool(noun) and not _list_noun(noun)  # "the last two technologies" / "the first two weeks"
        end = m.end(2) if strict else m.end()  # keep a noun that only says the kind
        pos = tuple(range(1, k + 1)) if m.group(1).lower() == "first" else tuple(range(-k, 0))
        return OrdinalRef(m.start(), end, pos, noun, strict)
    m = _EN_ORD_RE.search(query)
    if m and _list_noun(m.group(3).lower()):
        pos = (_EN_ORD[m.group(1).lower()],) + ((_EN_ORD[m.group(2).lower()],) if m.group(2) else ())
        return OrdinalRef(m.start(), m.end(), pos, m.group(3).lower())
    m = _EN_BARE_ORD_RE.search(query)
    if m:  # "What is the limit for the second?": a position closing the clause stands for the item
        return OrdinalRef(m.start(), m.end(), (_EN_ORD[m.group(1).lower()],), "")
    m = _EN_FORMER_RE.search(query)
    if m:
        return OrdinalRef(m.start(), m.end(), (1 if m.group(1).lower() == "former" else -1,), "")
    m = _EN_NUM_RE.search(query)
    if m and int(m.group(2)) > 0:
        return OrdinalRef(m.start(), m.end(), (int(m.group(2)),), m.group(1).lower())
    return None


def kind_ordinal(query: str, lang: str) -> OrdinalRef | None:
    """"the first trail": a position with a noun that is no list noun, strict (only a list whose items or
    question name that noun can answer it: "Red Rocks Trail", not "the first time")."""
    if lang != "en":
        return None
    m = _EN_ORD_RE.search(query)
    if m is None or m.group(3).lower() in lx.EN_FUNCTION:
        return None
    pos = (_EN_ORD[m.group(1).lower()],) + ((_EN_ORD[m.group(2).lower()],) if m.group(2) else ())
    return OrdinalRef(m.start(), m.end(), pos, m.group(3).lower(), True)


def _list_noun(word: str) -> bool:
    """Nouns that name a member of a list ("one", "option", "step", "hotel" …): not "the first time"."""
    return word in lx.EN_LIST_NOUNS or word.rstrip("s") in lx.EN_LIST_NOUNS


_MAX_TURNS_BACK = 2  # assistant turns searched for the list, newest first


def resolve_ordinal(query: str, history: Sequence[Message], lang: str) -> tuple[int, int, str] | None:
    """(start, end, replacement) for a positional reference whose list is in one of the latest assistant
    turns; else None. A series of plain nouns ("air conditioning, wi-fi, and an elevator") only answers a
    reference that names their kind; "the last one" looks for numbered items or names."""
    ref = find_ordinal(query, lang) or kind_ordinal(query, lang)
    if ref is None:
        return None
    need = max(max(ref.positions), -min(ref.positions), 2)
    idx = [i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"][:_MAX_TURNS_BACK]
    answers = [history[i] for i in idx]
    for age, (i, msg) in enumerate(zip(idx, answers)):
        asked = next((m.content for m in reversed(history[:i]) if m.role == "user"), "")
        for items, kind in reversed(lists_in(msg.content, lang)):  # the list named last is the one meant
            if len(items) < need or (ref.pair and len(items) != 2):
                continue
            if (ref.strict or kind not in ("names", "numbered")) and not _names_kind(ref.noun, kind, items, asked) \
                    and not (not ref.strict and ref.noun in ("", "one", "ones") and _asks_for_several(asked)):
                continue
            if age and not any(it.lower() in answers[0].content.lower() for it in items):
                continue  # an older list only while the latest answer is about one of its items
            picked = [items[p - 1] if p > 0 else items[p] for p in ref.positions]
            return ref.start, ref.end, ("和" if lang == "zh" else " and ").join(picked)
    return None


_EN_ASKS_SEVERAL_RE = re.compile(r"^\W*(?:which|what)\b(?:\s+\w+){0,3}?\s+\w+s\b", re.IGNORECASE)


def _asks_for_several(asked: str) -> bool:
    """Did the question a list answers ask for several things ("Which vaccines are recommended …?")? Then the
    series is the answer, and "the third" picks from it even when its items are plain nouns."""
    return bool(_EN_ASKS_SEVERAL_RE.search(asked))


def _names_kind(noun: str, kind: str, items: Sequence[str], asked: str = "") -> bool:
    """Does the reference's noun name what the items are? "the last two technologies" for "technologies
    like reverse osmosis and nanofiltration", "the second drink" for "… coffee, tea, and a soft drink",
    "the second option" when the question the list answers asked for "deployment options"."""
    if not noun or noun in ("one", "ones") or len(noun) == 1:
        return False
    stem = noun.rstrip("s")
    if kind.rstrip("s") == stem or any(it.lower().rstrip("s").endswith(stem) for it in items):
        return True
    return bool(asked) and re.search(rf"\b{re.escape(stem)}s?\b", asked, re.IGNORECASE) is not None


def list_items(text: str, lang: str) -> tuple[str, ...]:
    """The items of the last list an answer gives (numbered items, names or nouns in a series)."""
    found = lists_in(text, lang)
    return found[-1][0] if found else ()


@lru_cache(maxsize=2048)
def lists_in(text: str, lang: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Every list in an answer, in order, each with its kind: "numbered", "names" or "nouns"."""
    text = text[:_MAX_LIST_CHARS]
    numbered = _numbered_items(text, lang)
    if len(numbered) >= 2:
        return ((numbered, "numbered"),)
    out: list[tuple[tuple[str, ...], str]] = []
    # "卡坦岛（资源交易和修路，…）、璀璨宝石（…）": what a bracket says of an item is no part of the series
    for sentence in _SENTENCE_RE.split(_ASIDE_RE.sub("", text)):
        for items, kind in (_zh_series(sentence) if lang == "zh" else _en_series(sentence)):
            out.append((items, kind))
    return tuple(out)


_ASIDE_RE = re.compile(r"（[^（）]{0,80}）|\([^()]{0,80}\)")


def _numbered_items(text: str, lang: str) -> tuple[str, ...]:
    marks = list(_NUM_ITEM_RE.finditer(text))
    # keep the first run 1, 2, 3 … in order
    run: list[re.Match[str]] = []
    for m in marks:
        if int(m.group(1)) == len(run) + 1:
            run.append(m)
    if len(run) < 2:
        return ()
    out: list[str] = []
    for i, m in enumerate(run):
        end = run[i + 1].start() if i + 1 < len(run) else len(text)
        body = text[m.end():end].strip()
        out.append(_title(body, lang))
    return tuple(x for x in out if x) if all(out) else ()


def _title(body: str, lang: str) -> str:
    """An item's name: the text before a colon when short, else its first clause (capped)."""
    t = _TITLE_END_RE.search(body)
    if t and _n_words(body[: t.start()], lang) <= _MAX_TITLE_WORDS:
        return body[: t.start()].strip()
    c = _CLAUSE_END_RE.search(body)
    head = body[: c.start()] if c else body
    if lang == "zh":
        return head.strip()[:24]
    return " ".join(head.split()[:_MAX_TITLE_WORDS])


def _n_words(s: str, lang: str) -> int:
    return len(tagged(s)) if lang == "zh" else len(s.split())


def _en_series(sentence: str) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    chunks = sentence.rstrip(" .!?").split(",")
    if len(chunks) >= 2 and not any(_EN_SERIES_LAST_RE.match(c) for c in chunks[1:]):
        # "A, B and C" without the serial comma: the first later chunk with one join splits there, and what
        # follows the series ("…, plus a prescription") is not part of it
        at = next((i for i in range(1, len(chunks)) if _EN_PAIR_JOIN_RE.search(chunks[i])), None)
        j = list(_EN_PAIR_JOIN_RE.finditer(chunks[at])) if at is not None else []
        if at is not None and len(j) == 1:
            last = chunks[at][j[0].end():]
            name = _cap_run(last.split()[:_MAX_NAME_WORDS], from_end=False)  # "Oracle Cloud all have …"
            chunks = [*chunks[:at], chunks[at][: j[0].start()], f" {j[0].group(0).strip()} {name or last.strip()}"]
    if len(chunks) >= 3 and _EN_SERIES_LAST_RE.match(chunks[-1]):
        items: list[str] = []
        proper = True
        for i, chunk in enumerate(chunks):
            chunk = _EN_SERIES_LAST_RE.sub("", chunk).strip()
            if i == 0 and ":" in chunk:
                chunk = chunk.rsplit(":", 1)[1].strip()  # "There are three: a 401(k), …": the list starts after it
                if chunk and len(chunk.split()) <= _MAX_NAME_WORDS:
                    items.append(chunk)
                    proper = proper and chunk[:1].isupper()
                    continue
            ms = mentions(chunk, "en")
            m = (ms[-1] if i == 0 else ms[0]) if ms else None  # "Hotels near X include the Hotel Navona"
            if m is None or (i > 0 and len(chunk.split()) > 6 and not m.proper):
                items = []
                break
            proper = proper and m.proper
            item = _series_item(chunk, m) if i else _with_det(chunk, m.text)
            if i == len(chunks) - 1 and proper and len(chunks) > 2:
                # "Ryanair, easyJet, and Wizz Air all fly that route": a series of names ends with the name
                item = _cap_run(chunk.split()[:_MAX_NAME_WORDS], from_end=False) or item
            items.append(item)
        if items:
            out.append((tuple(items), "names" if proper else "nouns"))
    for ex in _EN_EXAMPLES_RE.finditer(sentence):  # "treatment technologies, like reverse osmosis and nanofiltration"
        parts = [p.strip() for p in _EN_SPLIT_RE.split(ex.group(2)) if p.strip()]
        if len(parts) >= 2 and all(len(p.split()) <= 4 for p in parts):
            names = all(p[:1].isupper() for p in parts)
            out.append((tuple(parts), "names" if names else ex.group(1).lower()))
    for j in _EN_PAIR_JOIN_RE.finditer(sentence):  # "Tools such as Trello or Jira": two names
        a = _cap_run(sentence[: j.start()].split()[-_MAX_NAME_WORDS:], from_end=True)
        b = _cap_run(sentence[j.end():].split()[:_MAX_NAME_WORDS], from_end=False)
        if a and b and a.split()[0].lower() not in lx.STOP_EN and b.split()[0].lower() not in lx.STOP_EN \
                and not any(a in items and b in items for items, _ in out):  # the tail of a longer series
            out.append(((a, b), "names"))
    return out


def _cap_run(words: Sequence[str], *, from_end: bool) -> str:
    """The capitalised words next to a join ("Trello" before "or", "Jira" after it), at most a few."""
    seq = list(reversed(words)) if from_end else list(words)
    run: list[str] = []
    for w in seq:
        if from_end and run and w.endswith((",", ";")):
            break  # "Google Cloud, Microsoft Azure or …": the comma ends the name before the join
        w = w.strip(",;:()\"'“”")
        if not w or not w[0].isupper():
            break
        run.append(w)
        if w != seq[0] and not from_end and w.endswith((".", ",")):
            break
    return " ".join(reversed(run) if from_end else run).rstrip(".")


_LEAD_PREP_RE = re.compile(r"^(?:(?:as|on|in|at|with|by|via|through|from|for|to)\s+)+", re.IGNORECASE)
_NOT_ITEM_START = frozenset({"which", "that", "who", "where", "when", "to", "can", "could", "will", "would", "is",
                             "are", "was", "were", "it", "they", "this", "these", "you", "we", "i"})


def _series_item(chunk: str, first: Mention) -> str:
    """A later member of a series: the whole short chunk ("your own Kubernetes with the NovaDB Operator",
    "a single binary"), or its first noun phrase when the chunk is long or a clause."""
    item = _LEAD_PREP_RE.sub("", chunk).strip()
    words = item.split()
    if words and len(words) <= 8 and words[0].lower() not in _NOT_ITEM_START:
        return user_side(item)
    return first.phrase


def _with_det(chunk: str, text: str) -> str:
    i = chunk.find(text)
    return ("the " + text) if i >= 4 and chunk[i - 4:i].lower() == "the " else text


_ZH_TITLE_RE = re.compile(r"《[^《》]{1,30}》")


_ZH_ASIDE_RE = re.compile(r"[（(][^（）()]{0,30}[）)]")
# the first opener after at least one character ("常用的肥料有有机肥" → "有机肥"; "是非题" has none)
_ZH_LIST_OPENER_RE = re.compile(r".+?(?:有|是|包括|包含|比如|例如|推荐|去|如|[:：])")
_ZH_ITEM_MAX = 12
_ZH_SERIES_BREAK_RE = re.compile(r"[，,；;]")
_ZH_SUFFIX_TAGS = frozenset({"a", "ng", "k", "b"})
_ZH_SERIES_TAIL_RE = re.compile(r"(?:[一二三四五六七八九十两几\d]+\s*[个种款家条类项样部本]|等|这|都|也|可以|各有|均).*$")


def _zh_item(chunk: str, first: bool, last: bool) -> str | None:
    """A short chunk of a 、 series is itself the item ("睡眠限制疗法"; the first after 有/包括/："常见的有认知行为
    疗法" → "认知行为疗法"; the last before a count or 等: "混合检索三种方式" → "混合检索"); None when it is longer
    than a name."""
    text = _ZH_ASIDE_RE.sub("", chunk).strip().rstrip("。.；;！!？?")
    if first:
        colon = max(text.rfind("："), text.rfind(":"))
        m = _ZH_LIST_OPENER_RE.match(text) if colon < 0 else None
        # "主要有三类：防癌险": after a colon the list begins, whatever came before it
        text = text[colon + 1:].strip() if colon >= 0 else text[m.end():].strip() if m else text
    if last:
        text = _ZH_SERIES_TAIL_RE.sub("", text).strip()
    # all Chinese (a chunk with a Latin name goes by its mentions, which keep "小米 14 Ultra" whole), a noun at
    # its end, no pronoun or preposition and no one-character verb opening it ("你去故宫", "长城看看": a clause)
    if not (1 < len(text) <= _ZH_ITEM_MAX and all(is_cjk(c) for c in text)):
        return None
    toks = tagged(text)
    # a noun at the end, or a one-character suffix after one (防癌/vn 险/a; not a particle: "颐和园呢")
    noun_end = toks[-1][1].startswith(("n", "vn")) or (
        len(toks) > 1 and len(toks[-1][0]) == 1 and toks[-1][1] in _ZH_SUFFIX_TAGS and toks[-2][1].startswith(("n", "vn")))
    if not noun_end or any(t[:1] in ("r", "p") for _, t in toks) or (
            len(toks[0][0]) == 1 and toks[0][1].startswith("v")):
        return None
    return text


def _zh_series(sentence: str) -> list[tuple[tuple[str, ...], str]]:
    titles = _ZH_TITLE_RE.findall(sentence)
    if "、" not in sentence:
        # "周志华的《机器学习》和李航的《统计学习方法》": two or more titles are the list
        return [(tuple(titles), "names")] if len(titles) >= 2 else []
    chunks = sentence.split("、")
    # the series ends at the clause it is in: "……和意外险，老人优先考虑……" (and begins after a clause before it)
    chunks[0] = _ZH_SERIES_BREAK_RE.split(chunks[0])[-1]
    chunks[-1] = _ZH_SERIES_BREAK_RE.split(chunks[-1])[0]
    if len(_ZH_TITLE_RE.findall(chunks[-1])) >= 2:  # "《B》和《C》": the titles themselves
        chunks = chunks[:-1] + _ZH_TITLE_RE.findall(chunks[-1])
        return [(tuple(t for c in chunks for t in _ZH_TITLE_RE.findall(c)[:1]), "names")] if all(
            _ZH_TITLE_RE.search(c) for c in chunks) else []
    # the last member follows a conjunction word (和/与/或者), found by the tokenizer: not the 和 of 颐和园
    toks = tagged(chunks[-1])
    k = next((i for i, (w, t) in enumerate(toks) if i > 0 and t == "c" and w in lx.ZH_SERIES_JOINS), None)
    if k is not None:
        # (re-joined with the spaces of Latin names: "Bose QC Ultra", not "BoseQCUltra")
        chunks = chunks[:-1] + [join_tokens([w for w, _ in toks[:k]]), join_tokens([w for w, _ in toks[k + 1:]])]
    items: list[str] = []
    for i, chunk in enumerate(chunks):
        title = _ZH_TITLE_RE.search(chunk)
        if title is not None:  # "《流畅的 Python》": a title in book-title marks is the item, whole
            items.append(title.group(0))
            continue
        whole = _zh_item(chunk, i == 0, i == len(chunks) - 1)
        if whole is not None:
            items.append(whole)
            continue
        ms = [m for m in mentions(chunk, "zh") if "的" not in m.text] or list(mentions(chunk, "zh"))
        if not ms:
            return []
        items.append((ms[-1] if i == 0 else ms[0]).text)
    # a Chinese series names its members as answers to the question ("支持哪些检索方式"): usable as listed
    return [(tuple(items), "names")] if len(items) >= 2 else []


__all__ = ["OrdinalRef", "find_ordinal", "list_items", "lists_in", "resolve_ordinal"]
