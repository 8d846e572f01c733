"""Frame-based completion of follow-up fragments, by slot type (zh + en).

A fragment follow-up ("后天呢？", "那 X 呢", "And in 2020?", "What about the S24+?", "In JavaScript?") is resolved
against the frame of the latest user question: the fragment's phrase takes the place of the span of the same
slot type in the frame, and nothing else of the frame changes. Slot types come from the lexicons in
``data/slots.txt`` (places, time expressions by kind, platforms / languages / tools, attributes) and from the
shape of model and version numbers ("RTX 4090" → "4080 SUPER", "Go 1.22" → "1.21", "Llama 3.1 70B" → "8B"). A
preposition in the fragment anchors the slot ("And by TensorFlow 2.15?" replaces what follows "by"). A
comparison ("和 Y 比呢？", "How does Y compare?") keeps the frame's entity and predicate and adds Y beside it.

Precision first: when the fragment has no type the frame also holds, the completer answers None and the other
rules (or nothing) take over.

The steps that do it are each language's (``lang.zh.steps.FRAME_STEPS``, ``lang.en.steps.FRAME_STEPS``; the
comparison and the added condition are wholly theirs), run by ``rewrite.steps.complete_fragment``; this module holds
the slot primitives they are built on, reading what differs between languages from the pack's ``FrameForms``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .. import lexicon as lx
from ..lang import reading
from ..lang.en.frame import EN_PREPS
from ..text import TRAIL_MARKS, is_cjk, tagged
from ..types import Message
from ..lang.zh.markers import zh_proverb_ne
from .entities import mentions



# --- slot spans -------------------------------------------------------------------------------------
def _alternation(entries: tuple[str, ...]) -> str:
    # Longest entry first. The Latin entries share one pair of word-edge guards: a CJK-led and a Latin-led entry
    # never match at the same position, so the match at every position is the same as with a guard per entry,
    # and the patterns compile ~8x faster (import time).
    # Entries sharing a first character are tried under one branch on it (the entries' order kept within it): at any
    # position only the branch of that character can match (ASCII letters grouped by lower case, as IGNORECASE
    # compares them; a CJK character has no case), so the match is the same, and a text is scanned ~10x faster
    # (hundreds of place names at each position otherwise). With another leading character, one entry per branch.
    ordered = sorted(entries, key=len, reverse=True)
    grouped = all(e[:1].isascii() and e[:1].isalnum() or is_cjk(e[:1]) for e in ordered)
    cjk: dict[str, list[str]] = {}
    latin: dict[str, list[str]] = {}
    for e in ordered:
        esc = re.escape(e).replace(r"\ ", r"\s+")
        key = e[0].lower() if grouped else esc
        (cjk if is_cjk(e[0]) else latin).setdefault(key, []).append(esc[1:] if grouped else esc)

    def branches(table: dict[str, list[str]]) -> list[str]:
        if not grouped:
            return [alts[0] for alts in table.values()]
        return [key + (f"(?:{'|'.join(alts)})" if alts != [""] else "") for key, alts in table.items()]

    out = branches(cjk)
    if latin:
        out.append(rf"(?<![A-Za-z0-9])(?:{'|'.join(branches(latin))})(?![A-Za-z0-9+#])")
    return "|".join(out)


_KIND_RES = {kind: re.compile(_alternation(lx.SLOTS[kind]), re.IGNORECASE)
             for kind in ("place", "time_day", "time_part", "time_season", "time_year", "platform", "vehicle",
                          "person_group", "seat_class")}
_KIND_RES["time_year"] = re.compile(_KIND_RES["time_year"].pattern + r"|(?<![\d.])(?:19|20)\d\d(?:\s*年)?(?![\d.])",
                                    re.IGNORECASE)
_ZH_NUM = "一二两三四五六七八九十百千万0-9"
_KIND_RES["amount"] = re.compile(rf"[{_ZH_NUM}]+(?:千|万|元|块)(?:元|块)?(?:左右|以内|以下|以上)?|[$€£¥]\s?\d[\d,.]*")
ATTRIBUTE_RES = {lang: re.compile(_alternation(lx.SLOTS[f"attribute_{lang}"]), re.IGNORECASE) for lang in ("en", "zh")}


@lru_cache(maxsize=2048)
def slot_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    """Typed spans of ``text``: (start, end, kind), longest match first where they overlap, in text order.

    >>> text = "上海到成都的高铁明天几点"
    >>> [text[s:e] for s, e, _ in slot_spans(text)]
    ['上海', '成都', '高铁', '明天']
    """
    found: list[tuple[int, int, str]] = []
    for kind, rx in _KIND_RES.items():
        found.extend((m.start(), m.end(), kind) for m in rx.finditer(text))
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[tuple[int, int, str]] = []
    for s in found:
        if not out or s[0] >= out[-1][1]:
            out.append(s)
    return tuple(out)


_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def slot_kind(phrase: str) -> str | None:
    """The slot type of a whole phrase ("后天" → time_day, "a Mac" → platform), or None."""
    p = _ARTICLE_RE.sub("", phrase.strip())
    spans = slot_spans(p)
    return spans[0][2] if len(spans) == 1 and spans[0][0] == 0 and spans[0][1] == len(p) else None


# --- model and version numbers -----------------------------------------------------------------------
_MODEL_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-]*")


_LETTERS_RE = re.compile(r"[A-Za-z]+")
_DIGITS_RE = re.compile(r"[0-9]+")


def _shape(tok: str) -> str:
    """'4090' → '9', '70B' → '9a', '1.22' → '9.9', 'S24+' → 'a9'."""
    s = _DIGITS_RE.sub("9", _LETTERS_RE.sub("a", tok.rstrip("+")))
    return s


def _is_model(phrase: str) -> bool:
    return bool(phrase) and phrase.isascii() and any(c.isdigit() for c in phrase) and any(
        c.isalnum() for c in phrase) and len(phrase.split()) <= 4


def _model_names(frame: str, lang: str) -> list[tuple[int, int]]:
    """Spans of mixed-script names holding a number ("RTX 4090", "Llama 3.1 70B", "Galaxy S24 Ultra"), as the
    language finds them (none in a language whose pack has no ``FrameForms``)."""
    forms = reading(lang).frame
    names = forms.model_names(frame) if forms is not None else []
    out = []
    pos = 0
    for n in names:
        i = frame.find(n, pos)
        if i >= 0:
            out.append((i, i + len(n)))
            pos = i + len(n)
    return out


def _swap_model(x: str, frame: str, lang: str, prep: str = "") -> str | None:
    """A model or version fragment takes the number's place in the frame's name: 'RTX 4090' + '4080 SUPER' →
    'RTX 4080 SUPER'; a fragment naming a whole model ('o1-mini', 'Air 3') replaces the whole name (the one
    after ``prep`` first: "And by TensorFlow 2.15?")."""
    names = _model_names(frame, lang)
    if not names:
        return None
    if prep:
        names.sort(key=lambda se: not re.search(rf"\b{prep}\s+(?:the\s+)?$", frame[:se[0]], re.IGNORECASE))
    xt = x.split()
    for start, end in names:
        name = frame[start:end]
        for m in _MODEL_TOKEN_RE.finditer(name):
            tok = m.group(0)
            if any(c.isdigit() for c in tok) and _shape(tok) == _shape(xt[0]) and tok != xt[0]:
                i = start + m.start()
                rest = frame[end:]
                tail = " ".join(xt[1:])
                if tail and rest.lstrip().lower().startswith(tail.lower()):  # "30-year fixed" → "15-year fixed"
                    rest = rest.lstrip()[len(tail):]
                return frame[:i] + x + rest
    for start, end in names:
        # "Gen 11" after "… ThinkPad X1 Carbon Gen 12": the fragment's first word in the name starts the swap
        w = re.search(rf"(?<![A-Za-z0-9]){re.escape(xt[0])}(?![A-Za-z0-9])", frame[start:end], re.IGNORECASE)
        if w is not None and len(xt) > 1 and w.start() > 0:
            return frame[:start + w.start()] + x + frame[end:]
    if any(c.isalpha() for c in x) and not x.split()[0].isdigit():
        start, end = names[0]
        return frame[:start] + x + frame[end:]
    return None


# --- fragments ---------------------------------------------------------------------------------------
_EN_LEAD_RE = re.compile(r"^\W*(?:(?:so|ok|okay|but|also|then)\s*,?\s+)?"
                         r"(?:(?:(?:what|how)\s+about|what\s+of|same\s+for|and|"
                         r"any(?:thing|one)?|something)\b)?\s*", re.IGNORECASE)
_EN_PREP_RE = re.compile(r"^(" + "|".join(EN_PREPS) + r")\s+", re.IGNORECASE)
EN_FRAGMENT_WORDS = 4
_ZH_LEAD_RE = re.compile(r"^(?:那么|那|还有|换成|如果是|要是)\s*")
_ZH_TAIL_RE = re.compile(r"(?:的)?呢?[？?！!。.，,~～\s]*$")
_ZH_PREPS = ("从", "去", "到", "在", "用", "对于", "给")
ZH_FRAGMENT_CHARS = 12
_LATIN_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-]*")


def starts_with_preposition(phrase: str) -> bool:
    """ "from yesterday", "For who": a prepositional phrase, no name."""
    return _EN_PREP_RE.match(phrase) is not None


def zh_size(x: str) -> int:
    """A phrase's length in Chinese characters, a Latin word counting as one ("索尼 WF-1000XM5" is 3)."""
    return len(_LATIN_WORD_RE.sub("字", x).replace(" ", ""))


_INSTEAD_RE = re.compile(r"\s+instead$", re.IGNORECASE)
_EN_AUX_WH = lx.EN_AUX | lx.EN_WH
_ENDS_NE_RE = re.compile(r"呢[？?！!。.，,~～\s]*$")


def en_fragment(q: str) -> tuple[str, str, str] | None:
    """(lead, preposition, phrase) of an English fragment follow-up, or None."""
    if not q.rstrip().endswith("?") or q.count(" ") > EN_FRAGMENT_WORDS + 3:
        return None  # a fragment is a short question: the cheap test first
    core = q.strip().rstrip(TRAIL_MARKS).strip()
    core = _INSTEAD_RE.sub("", core)
    m = _EN_LEAD_RE.match(core)
    lead = core[:m.end()] if m else ""
    rest = core[len(lead):]
    pm = _EN_PREP_RE.match(rest)
    prep = pm.group(1).lower() if pm else ""
    x = rest[pm.end():] if pm else rest
    if not x or len(x.split()) > EN_FRAGMENT_WORDS or not q.strip().endswith("?"):
        return None
    if not lead.strip() and not prep and len(x.split()) > 2:
        return None  # "Which one is cheaper?" is a question of its own
    if any(w.lower() in _EN_AUX_WH for w in x.split()):
        return None  # a clause, not a phrase ("And how long can it stay valid?")
    return lead, prep, x


def zh_fragment(q: str) -> tuple[str, str, str, str] | None:
    """(lead, preposition, phrase, verb tail) of a Chinese fragment follow-up ("那广州呢", "从重庆出发呢"), or None."""
    core = q.strip()
    core = zh_proverb_ne(core)  # "PostgreSQL 里怎么弄" reads as "PostgreSQL 呢"
    ends_ne = bool(_ENDS_NE_RE.search(core))
    m = _ZH_LEAD_RE.match(core)
    lead = m.group(0) if m else ""
    body = _ZH_TAIL_RE.sub("", core[len(lead):]).strip()
    if not body or not (ends_ne or lead):
        return None
    prep = next((p for p in _ZH_PREPS if body.startswith(p)), "")
    x = body[len(prep):].strip()
    tail = ""
    if prep:
        # "从重庆出发": the phrase is the slot right after the preposition, a short verb may follow
        sp = slot_spans(x)
        if sp and sp[0][0] == 0:
            x, tail = x[:sp[0][1]], x[sp[0][1]:].strip()
    if not x or zh_size(x) > ZH_FRAGMENT_CHARS:
        return None
    return lead, prep, x, tail


# --- completion --------------------------------------------------------------------------------------
def replace_span(frame: str, start: int, end: int, x: str) -> str:
    before, after = frame[:start], frame[end:]
    if before and x and not is_cjk(x[0]) and before[-1].isalnum() and not is_cjk(before[-1]):
        before += " "
    if after and x and not is_cjk(x[-1]) and after[0].isalnum() and not is_cjk(after[0]):
        after = " " + after
    if x and is_cjk(x[-1]) and after[:1] == " " and is_cjk(after[1:2]):
        after = after[1:]  # "iPhone 15 怎么…" → "安卓手机怎么…": the space belonged to the Latin name
    if x and is_cjk(x[0]) and before[-1:] == " " and is_cjk(before[-2:-1]):
        before = before[:-1]
    return before + x + after


_VERSION_AFTER_RE = re.compile(r"\s*\d+(?:\.\d+)*(?![\d.%])(?:\s*(?:LTS|SP\d))?")


_QUALIFIER_KINDS = frozenset({"seat_class", "person_group"})


def typed_swap(x: str, frame: str, lang: str, prep: str = "") -> tuple[str, str] | None:
    """The fragment replaces the frame's span of its slot type (the one after ``prep`` when there is one)."""
    kind = slot_kind(x)
    forms = reading(lang).frame
    if forms is None:
        return None  # a language that does not say how its fragments fill a frame fills none
    bare = forms.article.sub("", x) if forms.article is not None else x
    if kind is not None:
        spans = [s for s in slot_spans(frame) if s[2] == kind and frame[s[0]:s[1]].lower() != bare.lower()]
        if prep and forms.after_prep is not None:
            anchored = [s for s in spans if forms.after_prep(prep, frame[:s[0]])]
            spans = anchored or spans
        if spans:
            s, e, _ = spans[0]
            if kind == "platform" and (v := _VERSION_AFTER_RE.match(frame, e)) is not None:
                e = v.end()  # "Debian 12" → "Arch Linux": the old platform's version goes with it
            # where the fragment goes and in what words: "on a Mac" replaces "on Windows 11" with its article
            s, rep = forms.place(x, bare, frame, s, kind) if forms.place is not None else (s, bare)
            return replace_span(frame, s, e, rep), f"entity swap ({kind}): {frame[s:e]} → {rep}"
        if kind in _QUALIFIER_KINDS and not any(k == kind for _, _, k in slot_spans(frame)):
            # "一等座呢？" after "北京到上海的高铁票多少钱": the frame names no class, the fragment adds one as a term
            return f"{frame.rstrip(TRAIL_MARKS)} {bare}", f"qualifier added ({kind}): {bare}"
    if kind is None and forms.slot_inside:
        # "预算五千左右": one typed span inside the phrase takes the place of the frame's span of that type
        xs = slot_spans(x)
        if len(xs) == 1:
            xk, piece = xs[0][2], x[xs[0][0]:xs[0][1]]
            spans = [s for s in slot_spans(frame) if s[2] == xk and frame[s[0]:s[1]] != piece]
            if len(spans) == 1 and x[:xs[0][0]] in frame[:spans[0][0]] and x[xs[0][1]:] in frame[spans[0][1]:]:
                s, e, _ = spans[0]
                return replace_span(frame, s, e, piece), f"entity swap ({xk}): {frame[s:e]} → {piece}"
    if _is_model(bare):
        out = _swap_model(bare, frame, lang, prep)
        if out is not None:
            return out, f"entity swap (model): → {bare}"
    if prep and forms.prep_slot is not None:
        # "And by TensorFlow 2.15?": what follows the same preposition in the frame, up to the next break
        m = forms.prep_slot(prep, frame)
        if m is not None and 0 < len(m.group(1).split()) <= EN_FRAGMENT_WORDS and name_like(bare):
            return replace_span(frame, m.start(1), m.end(1), x), f"entity swap ({prep} …): {m.group(1)} → {x}"
    return None


def name_like(x: str) -> bool:
    """A capitalised word, a camel-case name ("iPad", "eBay") or a number: a name, not a common noun."""
    return any(c.isupper() for c in x.split()[0][:2]) or any(c.isdigit() for c in x) if x.split() else False


def _plain_phrase(x: str) -> bool:
    """A short lowercase noun phrase ("fuel economy"): no name, no number, no clause, no typed slot."""
    ws = x.split()
    return 0 < len(ws) <= 3 and all(w.isalpha() and w.islower() for w in ws) and not any(
        w in lx.EN_AUX or w in lx.EN_WH or w in lx.EN_PRONOUNS for w in ws) and slot_kind(x) is None


def possessor_swap(x: str, frame: str) -> tuple[str, str] | None:
    """The frame's owner noun (the first mention 的 follows) replaced by ``x`` ("苹果公司的市值" → "微软的市值");
    ``x`` is a short phrase without a verb, and no attribute itself ("价格的呢" is no owner)."""
    if not x or len(x) > 8 or ATTRIBUTE_RES["zh"].fullmatch(x) or x in lx.RELATIONAL_ZH or any(
            t.startswith("v") or t in ("r", "d", "p") for _, t in tagged(x)):
        return None
    for mt in mentions(frame, "zh"):
        i = frame.find(mt.text)
        if "的" in mt.text or mt.relational or i < 0 or x in mt.text or mt.text in x:
            continue
        if frame[i + len(mt.text):].lstrip().startswith("的"):
            return replace_span(frame, i, i + len(mt.text), x), f"entity swap (owner): {mt.text} → {x}"
        return None  # the frame's first noun owns nothing: no confident slot
    return None


def attribute_shift(x: str, frame: str, lang: str) -> tuple[str, str] | None:
    """'And its price?' after 'What is the battery life of the X?' → 'What is the price of the X?'."""
    forms = reading(lang).frame
    if forms is None or lang not in ATTRIBUTE_RES:
        return None  # a language with no attribute lexicon or no possessives shifts none
    bare = forms.possessive.sub("", x)
    rx = ATTRIBUTE_RES[lang]
    if not rx.fullmatch(bare):
        return None
    if not rx.search(frame):
        shaped = forms.attribute_frame.match(frame) if forms.attribute_frame is not None else None
        if shaped is None or not _plain_phrase(bare) or shaped.group(2).lower() == bare.lower():
            return None
        # "What's the horsepower of the Ford Mustang GT?" + "And the fuel economy?": the frame's own shape says
        # which words are the attribute, whatever the lexicon holds
        return frame[:shaped.start(2)] + bare + frame[shaped.end(2):], f"attribute shift: {shaped.group(2)} → {bare}"
    m = rx.search(frame)
    if m is None or m.group(0).lower() == bare.lower():
        return None
    return replace_span(frame, m.start(), m.end(), bare), f"attribute shift: {m.group(0)} → {bare}"


def frame_entity(frame: str, lang: str, other: str) -> str | None:
    """The frame's first proper name as written (not a merged "A 的 B" phrase), other than ``other``."""
    for m in mentions(frame, lang):
        if m.proper and m.text in frame and "的" not in m.text and other.lower() not in m.text.lower() \
                and m.text.lower() not in other.lower():
            return m.text
    forms = reading(lang).frame
    if forms is not None and forms.opening_noun:
        # "茅台今年的股价涨了多少": no proper name, but the noun the question opens with is what it is about
        first = next(iter(mentions(frame, lang)), None)
        if first is not None and not first.relational and frame.startswith(first.text) and "的" not in first.text \
                and first.text not in other and other not in first.text:
            return first.text
    return None


def coordinated_pair(text: str, lang: str) -> list[str]:
    """The two nouns a question joins ("布洛芬和对乙酰氨基酚都能退烧吗", "the Kindle Paperwhite or the Kobo Clara"):
    two mentions next to each other with only a conjunction between them; [] otherwise.

    >>> coordinated_pair("Should I get the Kindle Paperwhite or the Kobo Clara?", "en")
    ['Kindle Paperwhite', 'Kobo Clara']
    """
    forms = reading(lang).frame
    if forms is None:
        return []  # a language that does not say how it joins two things joins none
    ms = [m for m in mentions(text, lang) if not m.relational and "的" not in m.text]
    for a, b in zip(ms, ms[1:]):
        i = text.find(a.text)
        j = text.find(b.text, i + len(a.text)) if i >= 0 else -1
        if j > i >= 0 and forms.pair_join.fullmatch(text[i + len(a.text):j]) and a.text.lower() != b.text.lower():
            return [a.text, b.text]
    return forms.alternatives(text) if forms.alternatives is not None else []


def compared_names(frames: list[str], lang: str) -> list[str]:
    """The two nouns one of the user's last two questions joins (the later first), else the first proper name of
    each of the user's last two questions, when they differ."""
    for f in frames[-1:-3:-1]:  # "有围棋班也有国际象棋班" → "两个他都挺感兴趣的" → "哪个更容易入门"
        if pair := coordinated_pair(f, lang):
            return pair
    out: list[str] = []
    for f in frames[-2:]:
        m = next((x.text for x in mentions(f, lang) if x.proper and x.text in f and "的" not in x.text), None)
        if m is None:
            return []
        out.append(m)
    return out if len(out) == 2 and out[0].lower() != out[1].lower() else []


def compare_in_history(query: str, history: Sequence[Message], lang: str) -> tuple[str, str] | None:
    """``_which_of`` over the proper names of the user's last two questions in ``history``, read in language
    ``lang`` (the analysis gives the language the question is written in: ``Analysis.compared``)."""
    forms = reading(lang).frame
    if forms is None or not forms.which.search(query):
        return None
    frames = [m.content for m in history if m.role == "user"]
    names = compared_names(frames, lang) if frames else []
    return forms.which_of(query, names) if len(names) == 2 else None


_EN_THERE_RE = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )"
                          r"\bthere\b(?!\s+(?:is|are|was|were|be|'s)\b)"
                          r"(?!['’]s)", re.IGNORECASE)
_EN_MOTION_RE = re.compile(r"\b(?:get|go|going|travel|fly|drive|walk|move|commute|ride)\s+$", re.IGNORECASE)


def locative_there(query: str, frame: str | None, answer: str = "") -> tuple[str, str] | None:
    """A locative "there" takes the place the latest question named (else the latest answer): "Was that his
    first win there?" after "Who won the Monaco Grand Prix?" → "… first win in Monaco?"; the existential "is
    there" stays.

    >>> locative_there("Was that his first win there?", "Who won the Monaco Grand Prix in 2024?")[0]
    'Was that his first win in Monaco?'
    """
    m = _EN_THERE_RE.search(query)
    if m is None or m.start() == 0 or any(k == "place" for _, _, k in slot_spans(query)):
        return None
    for text in (frame or "", answer):
        places = [text[s:e] for s, e, k in slot_spans(text) if k == "place"]
        if places:
            place = places[-1] if text is frame else places[0]
            prep = "to" if _EN_MOTION_RE.search(query[:m.start()]) else "in"
            return query[:m.start()] + f"{prep} {place}" + query[m.end():], f"there → {prep} {place}"
    return None
