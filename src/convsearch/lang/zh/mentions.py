"""Chinese mentions: noun phrases found from jieba's POS tags (proper-noun tags first, then noun runs), clause by
clause, with the names of mixed-script units ("小米 14 Ultra") kept whole."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ... import lexicon as lx
from ...text import CJK_RE, is_cjk, tagged
from ..base import Mention

# --- Chinese ---------------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def compiled(pattern: str) -> re.Pattern[str]:
    """Patterns built from conversation text recur turn after turn: compile each once (case-insensitive)."""
    return re.compile(pattern, re.IGNORECASE)


_ZH_CLAUSE_RE = re.compile(r"(?:[，。、！？；：,!?;:()（）\[\]【】“”\"'‘’~～…]|(?<!\d)\.|\.(?!\d))+")
_ZH_SPACE_RE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
_ZH_CLAUSE_CHARS = 4  # Chinese runs between spaces shorter than this on average: words, not clauses


def zh_clauses(text: str) -> list[str]:
    """The clauses of a Chinese text: split at punctuation, and at a space between two Chinese characters when the
    spaces part clauses ("第一次跑全马 目标是破5 赛前一周该咋安排"), not words ("上海 迪士尼 乐园 门票", text
    segmented word by word).

    >>> zh_clauses("第一次跑全马 目标是破5"), zh_clauses("上海 迪士尼 乐园 门票")
    (['第一次跑全马', '目标是破5'], ['上海 迪士尼 乐园 门票'])
    """
    out = []
    for clause in _ZH_CLAUSE_RE.split(text):
        gaps = len(_ZH_SPACE_RE.findall(clause))
        if gaps and len(CJK_RE.findall(clause)) >= _ZH_CLAUSE_CHARS * (gaps + 1):
            out.extend(_ZH_SPACE_RE.split(clause))
        else:
            out.append(clause)
    return out


def zh_mentions(text: str) -> list[Mention]:
    """Noun phrases of a Chinese (or mixed) text, in order of appearance; phrases never cross punctuation.
    "A 的 B" (both nouns, B not relational) also yields the whole phrase, before its parts."""
    out: list[Mention] = []
    for clause in zh_clauses(text):
        if clause.strip():
            out.extend(_zh_clause_mentions(clause))
    return out


# A mixed-script name is one unit: Latin/digit words separated by spaces ("RTX 4090", "GPT-4o mini",
# "MatePad Pro 13.2"), with a Chinese brand written right before it ("小米 14 Ultra", "小鹏 G6").
_ZH_LATIN_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-]*(?:[ \t]+[A-Za-z0-9][A-Za-z0-9.+\-]*)*")
_ZH_ASCII_ALNUM_RE = re.compile(r"[A-Za-z0-9]")
_ZH_BRAND_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz"})
_ZH_BRAND_MAX = 3


# a size: a number with its unit ("28c", "16GB", "4610mAh", "500g"; not the names 5G, 4K, 3D)
_ZH_SPEC_RE = re.compile(r"\d+(?:\.\d+)?(?:gb|tb|mb|mah|kwh|wh|kw|w|ghz|mhz|khz|hz|cm|mm|km|kg|ml|c|l)|\d{2,}g",
                         re.IGNORECASE)


def zh_name_tokens(text: str) -> list[tuple[str, str]]:
    """``tagged(text)`` with every mixed-script name as one token tagged 'eng', its spacing kept.

    >>> zh_name_tokens("小米 14 Ultra 支持卫星通信吗")[0]
    ('小米 14 Ultra', 'eng')
    """
    if not _ZH_ASCII_ALNUM_RE.search(text):
        return tagged(text)
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _ZH_LATIN_NAME_RE.finditer(text):
        name = m.group(0).rstrip(".-")
        if not any(c.isalpha() for c in name) or (" " not in name and not any(c.isdigit() for c in name)
                                                    and "-" not in name and "+" not in name):
            continue  # a plain number, or one Latin word: jieba's own tokens
        before = text[pos:m.start()]
        toks = tagged(before) if before.strip() else []
        if _ZH_SPEC_RE.fullmatch(name):  # "28c", "16GB", "30cm": a number with its unit is a size
            out.extend(toks)
            out.append((name, "m"))
            pos = m.start() + len(m.group(0).rstrip(".-"))
            continue
        if toks and toks[-1][1] in _ZH_BRAND_TAGS and len(toks[-1][0]) <= _ZH_BRAND_MAX and is_cjk(toks[-1][0][-1]) \
                and before.rstrip().endswith(toks[-1][0]) and before[len(before.rstrip()):] in ("", " "):
            brand = toks.pop()[0]
            name = brand + before[len(before.rstrip()):] + name
        out.extend(toks)
        out.append((name, "eng"))
        pos = m.start() + len(m.group(0).rstrip(".-"))
    if pos == 0:
        return tagged(text)
    if text[pos:].strip():
        out.extend(tagged(text[pos:]))
    return out


def as_written(words: Sequence[str], text: str) -> str:
    """Join words as ``join_tokens`` does, keeping a space the text has between a Latin word and Chinese
    ("git 设置 HTTP 代理", not "git设置HTTP代理")."""
    out = ""
    for t in words:
        latin_pair = out and not is_cjk(out[-1]) and not is_cjk(t[0]) and out[-1].isalnum() and t[0].isalnum()
        if out and (latin_pair or (is_cjk(out[-1]) != is_cjk(t[0]) and f"{out[-4:]} {t[:4]}" in text)):
            out += " "
        out += t
    return out


def _zh_clause_mentions(text: str) -> list[Mention]:
    toks = zh_name_tokens(text)
    out: list[Mention] = []
    run: list[tuple[str, str]] = []

    def flush() -> None:
        if not run:
            return
        words = [w for w, _ in run]
        if not all(w in lx.STOP_ZH for w in words):
            # 乜/nr, 遵/nr 医嘱: a one-character name tag inside a longer phrase is jieba's noise, not a name
            propers = [t for w, t in run if t in lx.ZH_PROPER_TAGS and (len(w) > 1 or len(run) == 1 or not is_cjk(w))]
            cls = propers[-1] if propers else "n"
            if cls in ("nrt", "nrfg"):
                cls = "nr"
            phrase = as_written(words, text)
            # 乜/nr, 爪/ns: one-character tags are noise, except a thing the speaker owns (我家猫, 我的车)
            if len(phrase) > 1 or (propers and not is_cjk(phrase)) or owned:
                out.append(Mention(phrase, bool(propers), cls, words[-1]))
        run.clear()

    n = len(toks)
    owned = False
    for i, (w, t) in enumerate(toks):
        nounish = (t in lx.ZH_NOUN_TAGS or w in lx.ZH_NOMINAL_VERBS) and w not in lx.STOP_ZH and w not in lx.ZH_PRONOUNS
        if not run:
            owned = _owned_noun(toks, i)
            nounish = nounish or owned
        if not nounish and t == "g" and run:
            nounish = True  # 二甲/b 双/n 胍/g: a bound morpheme is part of the word jieba did not know
        if not nounish and t == "b" and i + 1 < n and (toks[i + 1][1] in lx.ZH_NOUN_TAGS or toks[i + 1][1] == "g"):
            nounish = True  # 二甲双胍, 大型超市: a non-predicate adjective opens the noun it modifies
        if not nounish and t == "a" and len(w) == 1 and i + 1 < n and toks[i + 1][1] in lx.ZH_NOUN_TAGS:
            nounish = True  # 新员工
        if not nounish and t == "m" and len(w) == 1 and i + 1 < n and toks[i + 1][1] in lx.ZH_NOUN_TAGS:
            nounish = True  # 年假 is tagged 年/m 假/n
        if not nounish and run and _nominal_verb_inside(toks, i):
            nounish = True  # 旅游/vn 签证/v 一般, 卫生间 防水/v 墙面: a noun jieba tagged as a verb
        if nounish:
            run.append((w, t))
            continue
        # A two-character verb that opens a clause and heads straight into a noun joins the phrase:
        # 入职流程, 报销流程, 申请笔记本.
        clause_start = i == 0 or toks[i - 1][1] in ("x", "w")
        if (t == "v" and len(w) == 2 and clause_start and not run and i + 1 < n
                and toks[i + 1][1] in lx.ZH_NOUN_TAGS - {"eng"} and toks[i + 1][0] not in lx.STOP_ZH):
            run.append((w, t))
            continue
        flush()
    flush()
    merged: list[Mention] = []
    for a, b in zip(out, out[1:]):
        if not b.relational and _de_joined(text, a.text, b.text):
            phrase = f"{a.text} 的 {b.text}" if not is_cjk(a.text[-1]) or not is_cjk(b.text[0]) else f"{a.text}的{b.text}"
            merged.append(Mention(phrase, a.proper or b.proper, b.cls if b.proper else a.cls, b.head))
        elif a.proper and a.cls != "ns" and not b.proper and not b.relational \
                and _ZH_DET_CL_RE.fullmatch(_between(text, a.text, b.text)):
            # "招商银行那张信用卡": the card of that bank, one thing ("招商银行信用卡"); a place's is no name of it
            # ("北京那家医院" is not 北京医院)
            merged.append(Mention(f"{a.text}{' ' if not is_cjk(a.text[-1]) else ''}{b.text}", True, a.cls, b.head))
    return merged + out


def zh_person_word(word: str) -> bool:
    """A short common noun naming a person by one of its last two characters (新手, 孩子, 老人, 员工).

    >>> zh_person_word("孩子"), zh_person_word("新手"), zh_person_word("签证")
    (True, True, False)
    """
    return 1 < len(word) <= 3 and is_cjk(word[-1]) and any(ch in lx.ZH_PERSON_FINALS for ch in word[-2:])


def zh_common_person(m: Mention) -> bool:
    """A common noun naming a person (新手, 孩子, 老人): who a question is for."""
    return not m.proper and zh_person_word(m.text)


_ZH_AFTER_NOMINAL = frozenset({"一般", "要", "能", "可以", "需要", "大概", "通常", "一定", "得"})
_PERSON_TAGS = frozenset({"nr", "nrt", "nrfg"})


def _nominal_verb_inside(toks: Sequence[tuple[str, str]], i: int) -> bool:
    """A two-character word tagged as a verb, right after a noun and right before what opens a predicate (an
    adverb or a modal), is a noun of the phrase: 旅游签证 一般要…, 公司审批 需要….

    >>> _nominal_verb_inside([("旅游", "vn"), ("签证", "v"), ("一般", "a")], 1)
    True
    >>> _nominal_verb_inside([("北京", "ns"), ("下雨", "v"), ("了", "ul")], 1)
    False
    """
    w, t = toks[i]
    if t != "v" or len(w) != 2 or not is_cjk(w) or i + 1 >= len(toks) or toks[i - 1][1] not in lx.ZH_NOUN_TAGS \
            or toks[i - 1][1] in _PERSON_TAGS or zh_person_word(toks[i - 1][0]):
        return False  # (蔡徐坤 学习 …, 孩子 学习 要…: a person and what they do)
    return toks[i + 1][0] in _ZH_AFTER_NOMINAL


_ZH_OWNERS = frozenset({"我家", "你家", "他家", "她家", "我们家", "咱家"})
_ZH_OWNER_PRONOUNS = frozenset({"我", "你", "他", "她", "我们", "你们", "咱们"})


def _owned_noun(toks: Sequence[tuple[str, str]], i: int) -> bool:
    """A one-character noun someone owns: 我家/猫, 我/的/车 (jieba tags 车 'zg'), 他家的狗; a word, not noise."""
    w, t = toks[i]
    if len(w) != 1 or not is_cjk(w) or t not in ("n", "zg", "ng") or w in lx.STOP_ZH:
        return False
    if i >= 1 and toks[i - 1][0] in _ZH_OWNERS:
        return True
    return i >= 2 and toks[i - 1][0] == "的" and (toks[i - 2][0] in _ZH_OWNER_PRONOUNS or toks[i - 2][0] in _ZH_OWNERS)


# --- English ---------------------------------------------------------------------------------------

_ZH_DET_CL_RE = re.compile(r"\s*[这那][张款个台部辆家本只件套条份]\s*")


def _between(text: str, a: str, b: str) -> str:
    """The text between the first ``a`` and the ``b`` after it ("" when they are not in that order)."""
    i = text.find(a)
    j = text.find(b, i + len(a)) if i >= 0 else -1
    return text[i + len(a):j] if j >= 0 else ""


def _de_joined(text: str, a: str, b: str) -> bool:
    """True when ``a`` 的 ``b`` occur in ``text`` joined by 的 (spaces allowed around it)."""
    i = text.find(a)
    while i >= 0:
        rest = text[i + len(a):].lstrip()
        if rest.startswith("的") and rest[1:].lstrip().startswith(b):
            return True
        i = text.find(a, i + 1)
    return False


def follows_de(text: str, b: str) -> bool:
    """True when ``b`` comes right after a 的 (spaces allowed)."""
    i = text.find("的")
    while i >= 0:
        if text[i + 1:].lstrip().startswith(b):
            return True
        i = text.find("的", i + 1)
    return False


def zh_anaphor_at(toks: Sequence[tuple[str, str]], i: int) -> bool:
    """Is token i a pronoun standing for something of an earlier turn? Not the 这个 of 这个时候."""
    w = toks[i][0]
    if w not in lx.ZH_PRONOUNS:
        return False
    nxt = toks[i + 1] if i + 1 < len(toks) else ("", "")
    if w == "该":  # 该产品 (that product) but 该吃饭了 (should)
        return nxt[1] in lx.ZH_NOUN_TAGS
    return not (w in lx.ZH_DETERMINERS and nxt[0] in lx.ZH_DEICTIC_NOUNS)


@lru_cache(maxsize=8192)
def mentions(text: str) -> tuple[Mention, ...]:
    """The noun phrases of a Chinese text (cached: history turns are read again on every later turn)."""
    return tuple(zh_mentions(text))
