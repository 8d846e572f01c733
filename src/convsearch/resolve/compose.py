"""What the rule steps write a resolved query with, and the tests they share: where a name goes (attached with 的,
substituted for a pronoun, put into a slot of the previous question, completed as the subject), which mention a new
one replaces, agreement of a pronoun with its antecedent, and what the latest answer said.

The language steps (``lang.zh.steps``, ``lang.en.steps``) are built on these; the rule rewriter
(``rewrite.rules``) runs the steps. Nothing here imports a step or the gate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from .. import lexicon as lx
from ..lang.base import Mention
from ..lang.en.focus import en_request_part
from ..lang.en.markers import demonstrative_det, en_feedback_pronoun, en_info_question
from ..lang.en.mentions import en_tokens
from ..lang.zh.markers import zh_det_tokens
from ..text import TRAIL_MARKS, is_cjk, tagged, word_at
from ..types import Message
from . import similar
from .entities import attribute_noun, leans_on_focus, mentions, named_in
from .focus import Focus, find_focus, informs, meaning_question, weak_anchor
from .frame import ATTRIBUTE_RES
from .introduced import introduced_work

_LATIN_RUN_RE = re.compile(r"[A-Za-z]+")

_PRODUCTISH = frozenset({"nz", "eng", "nt"})




class Outcome(NamedTuple):
    """A rewrite step's answer: the rewrite and how it came about, or ``out=None``: stop here, no rewrite, and
    say why. A step that does not apply returns None instead, and the next one is tried."""

    out: str | None
    reason: str


Step = Callable[[Any], "Outcome | None"]  # a language's rewrite step: its turn (``resolve.turn``) → Outcome or None


def first(steps: Sequence[Step], turn: Any) -> tuple[str | None, str]:
    """The first outcome of ``steps`` on ``turn`` (in order; a step may annotate the turn for the next ones)."""
    for step in steps:
        done = step(turn)
        if done is not None:
            return done
    return None, "no rule applies"


def attach(entity: str, rest: str, *, de: bool) -> str:
    """'AnySearch' + '价格' → 'AnySearch 的价格'; '入职流程' + '需要多久' (de=False) → '入职流程需要多久'."""
    glue = "的" if de else ""
    sep = " " if entity and not is_cjk(entity[-1]) and (glue or (rest and is_cjk(rest[0]))) else ""
    return f"{entity}{sep}{glue}{rest}"


def join_script(left: str, right: str) -> str:
    """Concatenate, with a space where a Latin word would touch a Chinese character."""
    if left and right and not left[-1].isspace() and not right[0].isspace() and (
            (left[-1].isascii() and left[-1].isalnum() and is_cjk(right[0]))
            or (is_cjk(left[-1]) and right[0].isascii() and right[0].isalnum())):
        return f"{left} {right}"
    return left + right


def _same_kind(x: Mention, y: Mention) -> bool:
    if x.proper and y.proper:
        return x.cls == y.cls or (x.cls in _PRODUCTISH and y.cls in _PRODUCTISH) or x.cls == "proper"
    if not x.proper and not y.proper:
        return x.head[-1:] == y.head[-1:] if is_cjk(x.head[-1:]) else x.head == y.head
    return False


def swap_target(x_mentions: Sequence[Mention], frame_mentions: Sequence[Mention], frame: str = "") -> Mention | None:
    """The frame's mention a lone new mention replaces: the first of its kind, or with ``frame`` (English) the
    first that is not a modifier of a common noun after it ("the AWS free tier … RDS" + "What about DynamoDB?":
    RDS, not AWS)."""
    if len(x_mentions) != 1:
        return None
    x = x_mentions[0]
    same = [m for m in frame_mentions if m.text != x.text and _same_kind(x, m)]
    if not same and len(x.text) >= 3 and is_cjk(x.text[-1]):
        # "农业银行" into "工商银行信用卡年费": a compound that holds a name of the same kind (…银行) before more
        same = [m for m in frame_mentions if m.text != x.text and 0 < m.text.find(x.text[-2:]) < len(m.text) - 2]
    if len(same) > 1:
        # "Is the Louvre free on Sundays?" + "what about the Orsay?": of two names, the one nearest in meaning;
        # else one that modifies no noun after it
        near = similar.nearest(x.text, [m.text for m in same])
        if near is not None:
            return next(m for m in same if m.text == near)
        if frame:
            same = [m for m in same if not _modifies_noun(frame, m.text)] or same
    return same[0] if same else None


_EN_NOUN_AFTER_RE = re.compile(r"\s+([a-z][a-z-]+)")
_LATIN_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
_BEFORE_THAT_PRONOUN = lx.EN_AUX | lx.EN_WH | {"about", "of", "is"}  # "that" after these is no relative pronoun


def _modifies_noun(frame: str, name: str) -> bool:
    """Is ``name`` followed in ``frame`` by a lower-case word that is no verb or function word (a noun it modifies)?"""
    i = frame.find(name)
    m = _EN_NOUN_AFTER_RE.match(frame, i + len(name)) if i >= 0 else None
    return m is not None and m.group(1) not in lx.EN_FUNCTION and m.group(1) not in lx.EN_VERBS \
        and m.group(1) not in lx.EN_AUX and m.group(1) not in lx.STOP_EN


_ZH_FRAME_REACH = 2
ZH_ATTRIBUTE_END_RE = re.compile("(?:" + "|".join(sorted(map(re.escape, lx.SLOTS["attribute_zh"]), key=len,
                                                           reverse=True))
                                  + ")$")
ZH_ATTRIBUTE_RE = ATTRIBUTE_RES["zh"]
# pronouns that take what the latest exchange named (or a focus a follow-up kept alive), like frame completion
ZH_RECENT_PRONOUNS = frozenset({"这个", "那个", "这些", "那些", "他", "她", "他们", "她们"})
# Interjections that are also adverbs of degree or copulas: "好的" / "好想吃", "是啊" / "是真的"
ZH_ADVERB_TOO = frozenset({"好", "是", "对"})
ZH_PREDICATE_TAGS = frozenset({"v", "vd", "vi", "a", "ad", "d", "l"})


def restated_head_cut(m: Mention, query: str) -> Mention:
    """The subject without its last word when the query says that word itself: "网上报名…" goes on about the
    报名 of "上海浦东幼儿园小班报名", so "上海浦东幼儿园小班" is what it leaves out.

    >>> restated_head_cut(Mention("幼儿园小班报名", True, "nr", "报名"), "网上报名几月开始").text
    '幼儿园小班'
    """
    if m.head == m.text or m.head not in query or not m.text.endswith(m.head):
        return m
    text = m.text[:-len(m.head)].rstrip()
    return replace(m, text=text, head=tagged(text)[-1][0])


def work_reference(query: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """"这本书" / "这部电影" after an answer that named one work in 《》 for a request: the phrase becomes that work
    ("推荐一本历史书" → "推荐黄仁宇的《万历十五年》" → "这本书有英文版吗？" → "黄仁宇《万历十五年》有英文版吗")."""
    if not any(d in query for d in lx.ZH_WORK_DETS):
        return None
    work = introduced_work(history)
    if work is None:
        return None
    body = query.strip().rstrip(TRAIL_MARKS)
    for d in sorted(lx.ZH_WORK_DETS):
        i = body.find(d)
        if i >= 0:
            toks = zh_det_tokens(body[i:])
            noun_next = len(toks) > 1 and toks[0][0] == d and toks[1][1].startswith("n")
            end = i + len(d) + (len(toks[1][0]) if noun_next else 0)
            return join_zh(body[:i], work, body[end:]), f"work reference {body[i:end]} → {work}"
    return None


_ALIAS_AFTER_RE = re.compile(r"\s*[(（]\s*([A-Z0-9][A-Za-z0-9.&-]{1,11})\s*[)）]")


def _bracketed_after(text: str, name: str) -> str | None:
    """The short form in brackets right after the first mention of ``name`` that has one ("… ETF (VTI)" → "VTI").
    A plain substring scan plus one precompiled pattern: no regex is built from conversation text per turn."""
    i = text.find(name)
    while i >= 0:
        m = _ALIAS_AFTER_RE.match(text, i + len(name))
        if m is not None:
            return m.group(1)
        i = text.find(name, i + 1)
    return None


def answer_alias(ent: Mention | None, history: Sequence[Message]) -> Mention | None:
    """The short name the user gave in brackets and the latest answer went on with: "the Vanguard Total Stock
    Market ETF (VTI)" → "VTI has …" → "How often does it pay?" asks about VTI (what a person would type).

    >>> answer_alias(Mention("Vanguard Total Stock Market ETF", True, "proper", "etf", "the "),
    ...              [Message("user", "What's the fee of the Vanguard Total Stock Market ETF (VTI)?"),
    ...               Message("assistant", "VTI charges 0.03%.")]).text
    'VTI'
    """
    if ent is None or len(history) < 2 or history[-1].role != "assistant":
        return None
    for msg in reversed(history):
        alias = _bracketed_after(msg.content, ent.text) if msg.role == "user" else None
        if alias is None:
            continue
        if re.search(r"(?<![A-Za-z0-9])" + re.escape(alias) + r"(?![A-Za-z0-9])", history[-1].content):
            return Mention(alias, True, ent.cls, alias.lower())
        return None
    return None


_ZH_LOOK_UP_RE = re.compile(lx.ZH_LOOK_UP)


def request_asked(history: Sequence[Message], topic: str | None) -> Mention | None:
    """What the user's request right before the assistant's question named ("帮我订酒店" → 酒店), when the
    assistant asked back instead of answering; None after a remark or a question of the user's own."""
    if len(history) < 2 or history[-2].role != "user" or not _ZH_LOOK_UP_RE.search(history[-2].content):
        return None
    ent = find_focus(history, topic).entity
    return ent if ent is not None and ent.text in history[-2].content else None


def recent_focus(ent: Mention | None, history: Sequence[Message], resumed: bool = False) -> Mention | None:
    """What a query that names nothing leaves out comes from the last exchange: a noun named two exchanges ago
    is no longer the subject of a chat, the reply's first noun is. On restoration-200k a focus older than the
    last two turns supplies 8% of the words it adds, the reply's noun 37%."""
    if ent is None or not history:
        return ent
    if any(named_in(ent, m.content) for m in history[-_ZH_FRAME_REACH:]):
        return ent  # "特斯拉 Model Y 的 续航" written "特斯拉 Model Y 的续航"; "Mate 60 Pro" for "华为 Mate 60 Pro"
    at = next((i for i in range(len(history) - 1, -1, -1) if history[i].role == "user"), None)
    asked = history[at].content if at is not None else ""
    if asked and leans_on_focus(asked, "zh"):
        return ent  # "价格呢？" in between kept the focus alive (AnySearch → 价格呢 → 怎么部署)
    if at is not None and meaning_question(asked, history[at - 1] if at > 0 else None):
        return ent  # "CLTC 是什么意思？" asked what a word means: the subject is still what it was
    if ent.proper and len(history) >= 3 and history[-3].role == "assistant" and named_in(ent, history[-3].content) and \
            any(not x.relational and x.text in history[-3].content for x in mentions(asked, "zh")):
        return ent  # "旺季是指哪几个月？" asked about a detail of the answer on 拙政园: 拙政园 is still the subject
    if resumed:  # ``Focus.resumed``: "对了，…" … "好的谢谢" closed a digression
        return ent  # the subject is what it had turned aside from
    last = history[-1]
    if last.role != "assistant":
        return None
    if informs(last):
        return ent  # an answer that informs, not a chat reply: the user's subject is still the subject
    return next((x for x in mentions(last.content, "zh") if not x.relational), None)


_OBJECT_SLOT_MAX_WORDS = 2
_ZH_SUBJECT_PRONOUNS = frozenset({"我", "你", "他", "她", "我们", "你们", "他们", "她们", "咱", "咱们", "俺", "人家"})
_ZH_VERB_TAGS = frozenset({"v", "vd", "vg", "vi", "vq"})
_ZH_FINAL_TAGS = frozenset({"x", "w", "y", "e", "ul", "uj", "zg"})


def object_slot(toks: Sequence[tuple[str, str]]) -> int | None:
    """Where an omitted object goes: right after the clause's last word when that word is a verb (only
    sentence-final particles and punctuation after it): "都懒得去了" → after 去; None otherwise."""
    j = len(toks)
    while j > 0 and (toks[j - 1][1] in _ZH_FINAL_TAGS or toks[j - 1][0] in lx.ZH_FINAL_PARTICLES):
        j -= 1
    k = j - 1 if j > 1 and toks[j - 1][0] in ("过", "着") else j  # 吃过 / 看着: the aspect marker stays on the verb
    if k == 0 or toks[k - 1][1] not in _ZH_VERB_TAGS or toks[k - 1][0] in lx.ZH_INTERJECTIONS:
        return None
    if toks[k - 1][0] in lx.ZH_VERB_OBJECT:  # 吃饭, 睡觉: the object is built into the verb
        return None
    # in a longer clause the object is usually there already, or not wanted; a clause counts from its last
    # subject pronoun ("我不知道我没吃过": 我没吃过)
    start = max((i + 1 for i in range(k - 1) if toks[i][0] in _ZH_SUBJECT_PRONOUNS), default=0)
    if k - start > _OBJECT_SLOT_MAX_WORDS:
        return None
    return j


def join_zh(before: str, entity: str, after: str) -> str:
    """Put ``entity`` between two pieces of Chinese text, with a space only next to a Latin word."""
    left = " " if before and not is_cjk(before[-1]) and before[-1].isalnum() and entity[:1].isalnum() else ""
    right = " " if after and not is_cjk(entity[-1]) and after[:1].isalnum() and not is_cjk(after[0]) else ""
    return f"{before}{left}{entity}{right}{after}"


# --- English ---------------------------------------------------------------------------------------

# Function words the English rules write themselves to attach an entity ("features of X", "trails in X",
# "happened to X", "Besides X, ...", the possessive 's, "the address of X"). The guard lets any stop word through;
# the unit tests check that these are the only ones the rules add.
EN_GLUE = frozenset({"of", "in", "to", "besides", "s", "the"})

_EN_PRON_RE = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her|this|that|these|those)\b", re.IGNORECASE)


_EN_SECTION_TIME_RE = re.compile(r"\b(?:this|that)\s+(?:time\s+(?:period|frame)|time|period|era)\b", re.IGNORECASE)
_EN_YEARS_RE = re.compile(r"\b(?:1[5-9]|20)\d\d(?:\s*[-–]\s*(?:\d{4}|\d{2}|present))?\b")


def section_reference(q: str, section: str) -> tuple[int, int, str] | None:
    """ "during this time (period)" in a session on a page section dated by its title ("1966-1982", "Early career
    (1985-1989)") → (start, end, those years). A section without years is no time span: left alone (naming the
    section title instead gained nothing on CANARD dev)."""
    m = _EN_SECTION_TIME_RE.search(q)
    if m is None:
        return None
    y = _EN_YEARS_RE.search(section)
    return (m.start(), m.end(), y.group(0)) if y is not None else None


_EN_GIST_WHOLE_WORDS = 6  # an answer this short is itself what was said ("Beverly Hills,", "named the Series MVP.")
_EN_GIST_NAMES = 4  # "Besides Tony Esperti, Jim Robinson, Donnie Fleeman, ...": people list what the answer listed
_EN_GIST_STRIP = ' ,;:."“”'


def answer_gist(answer: str, focus: Focus) -> str | None:
    """What the last answer already said, for "Besides <it>, what else ...": a short fragment whole, else the names
    it gave (up to four, without the conversation's own entity), else its first proper noun.
    On CANARD dev this beats the first proper noun alone by +0.3 BLEU and +0.3 restoration F1."""
    text = _fragment_answer(answer)
    if text is not None:
        return text  # a fragment, not a sentence about someone ("He played for Texas.")
    own = focus.entity.text if focus.entity is not None else ""
    names: list[str] = []
    for m in mentions(answer, "en"):
        if m.proper and m.text not in names and m.text not in own:
            names.append(m.text)
    if names:
        return ", ".join(names[:_EN_GIST_NAMES])
    return focus.last_answer.text if focus.last_answer is not None else None


def answer_said(history: Sequence[Message]) -> Mention | None:
    """What a standalone "that" / "this" stands for: the last answer when it is a short fragment ("Country Boy",
    "the album Calling All Lovers"). Its first proper noun instead cost iKAT 1.1 restoration F1."""
    if not history or history[-1].role != "assistant":
        return None
    text = _fragment_answer(history[-1].content)
    return Mention(text, True, "proper", text.split()[-1].lower()) if text is not None else None


_EN_FINITE = frozenset({"is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did", "will",
                        "would", "can", "could", "should", "may", "might", "must"})


def _fragment_answer(answer: str) -> str | None:
    """The last answer when it is a short fragment ("Beverly Hills", "the album Calling All Lovers"): at most a
    few words, no pronoun and no verb — not a sentence ("Spring and autumn are best.")."""
    text = answer.strip().strip(_EN_GIST_STRIP)
    words = text.split()
    if not 0 < len(words) <= _EN_GIST_WHOLE_WORDS or _EN_PRON_RE.search(text):
        return None
    if any(w.lower().strip(",.;:!?") in _EN_FINITE or w.lower() in lx.EN_VERBS for w in words):
        return None
    return text


_EN_THAT_YEAR_RE = re.compile(r"\b(?:(in|during)\s+)?(?:that|the same)\s+year\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<![\d.])(?:1[5-9]|20)\d\d(?!\d|\.\d)")  # "in 2015." is a year, "2015.5" no


def year_reference(q: str, history: Sequence[Message]) -> tuple[int, int, str] | None:
    """ "that year" / "the same year" → (start, end, "in <year>") with the one year the latest user turn that
    names a year gave ("What was Microsoft's revenue in fiscal 2023?" … "And the net income that year?"). A turn
    naming two years is no single antecedent: None."""
    m = _EN_THAT_YEAR_RE.search(q)
    if m is None:
        return None
    for msg in reversed(history):
        if msg.role != "user":
            continue
        years = set(_YEAR_RE.findall(msg.content))
        if years:
            return (m.start(), m.end(), f"{m.group(1) or 'in'} {years.pop()}") if len(years) == 1 else None
    return None


_EN_HAPPEN_RE = re.compile(r"\b(happen(?:ed|s)?)\b", re.IGNORECASE)
_EN_CLASS_NP_RE = re.compile(r"\b(the)\s+(" + "|".join(sorted(lx.EN_CLASS_NOUNS)) + r")\b", re.IGNORECASE)


_EN_QUESTION_RE = re.compile(r"\?|^\s*(?:what|who|when|where|why|how|which|is|are|do|does|did|can|could|will|would|"
                             r"should|tell me|describe|explain)\b", re.IGNORECASE)


def relational_owner(q: str, focus: Focus) -> Mention | None:
    """For a query whose only nouns are relational ("How long does approval take?"), the thing they belong
    to is what the previous question was about: its first plain common noun ("expense reimbursement")."""
    qm = mentions(q, "en")
    if not qm or not all(m.relational for m in qm) or not focus.frame or not _EN_QUESTION_RE.search(focus.frame):
        return None  # the previous turn must have asked about something ("I don't care." names nothing)
    common = next((m for m in focus.frame_mentions if not m.proper and not m.relational), None)
    ent = focus.entity
    if ent is not None and ent.proper and ent in focus.frame_mentions and (
            common is None or attribute_noun(common)
            or not re.search(r"\bat\s+(?:the\s+)?" + re.escape(ent.text), focus.frame)):
        # "the daily dose of vitamin D" + "the symptoms of too much": vitamin D's; but "an expense reimbursement
        # at Acme" + "approval": the reimbursement's (a name after "at" is where, not whose)
        return attribute_owner(ent)
    return common


def _singular(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith(_EN_SINGULAR_S) else w


def en_names(q: str, m: Mention) -> bool:
    """Does ``q`` already name ``m``: its text, or (for a common noun) its head in either number
    ("the best universities" names "university")?"""
    if m.text.lower() in q.lower():
        return True
    if m.proper:
        return False
    head = _singular(m.head)
    return any(_singular(w) == head for w in _LATIN_WORD_RE.findall(q))


def complete_en(q: str, ent: Mention) -> tuple[str | None, str]:
    """Put the focus where English puts it: "What happened in 1990?" → "What happened to X in 1990?";
    "Did the band tour?" → "Did the X band tour?"; "What are the safety features?" → "... features of X?";
    otherwise after the question. A vague focus ("help", "tips", "finding") is no subject: nothing is added."""
    if weak_anchor(ent):
        return None, f"no subject to complete with ({ent.text} is too vague)"
    m = _EN_HAPPEN_RE.search(q)
    if m:
        return f"{q[:m.end()]} to {ent.text}{q[m.end():]}", f"frame completion with {ent.text}"
    m = _EN_CLASS_NP_RE.search(q)
    if m:
        return f"{q[:m.end(1)]} {ent.text}{q[m.end(1):]}", f"frame completion with {ent.text}"
    core = q.rstrip(TRAIL_MARKS)
    last = mentions(core, "en")
    if last and (last[-1].head in lx.RELATIONAL_EN or last[-1].text.lower() in _EN_ATTRIBUTES) \
            and core.lower().endswith(last[-1].text.lower()):
        return f"{core} of {ent.text}{q[len(core):].strip()}", f"frame completion with {ent.text}"
    rel = next((m for m in mentions(en_request_part(core), "en")
                if m.relational and not ent.proper and not _EN_OF_AFTER_RE.match(
        core.lower(), core.lower().find(m.text.lower()) + len(m.text))), None)  # "the name of X" has its owner
    if rel is not None:  # "How long does approval take?" → "How long does expense reimbursement approval take?"
        i = next(iter(word_at(q.lower(), rel.text.lower())), -1)
        if i >= 0:
            return f"{q[:i]}{ent.text} {q[i:]}", f"frame completion with {ent.text}"
    if not en_info_question(q):
        return None, "not a question: nothing to complete"  # "Yes.", "Answer that.", "Change that to video."
    return f"{core} in {ent.phrase}{q[len(core):].strip()}", f"frame completion with {ent.text}"


EN_SENT_END_RE = re.compile(r"[.!?]+\s+")
EN_EXCLUDE_MAX_WORDS = 60
_EN_ATTRIBUTES = lx.ATTRIBUTES_EN
_EN_ATTRIBUTE_OF_RE = re.compile(r"^(?:the\s+)?(?:"
                                 + "|".join(sorted(map(re.escape, _EN_ATTRIBUTES), key=len, reverse=True))
                                 + r")\s+of\s+(?:the\s+)?(.+)$", re.IGNORECASE)


def attribute_owner(ent: Mention) -> Mention:
    """'CEO of Nvidia' → 'Nvidia': a question about another attribute is about the owner, not the attribute."""
    m = _EN_ATTRIBUTE_OF_RE.match(ent.text)
    if m is None:
        return ent
    rest = m.group(1)
    return Mention(rest, rest[:1].isupper(), "proper" if rest[:1].isupper() else "noun", rest.split()[-1].lower())
_EN_OF_AFTER_RE = re.compile(r"\s+(?:of|for)\b")


def asks_for_more(q: str) -> bool:
    """'What else ...', 'Did he play any other sports?', 'Other songs?': else/other asks for more (after any/what,
    or among the first four words of its sentence), not 'the risk of developing other health conditions'."""
    if _EN_MORE_RE.search(q):
        return True
    return any(EN_ELSE_RE.search(" ".join(sent.split()[:4])) for sent in EN_SENT_END_RE.split(q))


_EN_MORE_RE = re.compile(r"\b(?:any|anything|anyone|anybody|anywhere|something|what|who|where)\s+"
                         r"(?:else|other|another)\b|"
                         r"\bbesides\b", re.IGNORECASE)
EN_ELSE_RE = re.compile(r"\b(else|other|another|besides|additional)\b", re.IGNORECASE)
def _possessive_suffix(name: str) -> str:
    if name.endswith(("'s", "’s")):
        return ""
    return "'" if name.endswith("s") and not name.endswith("ss") else "'s"


_EN_PERSON = frozenset({"he", "him", "his", "she", "her"})
_EN_EXTRAPOSED_IT_RE = re.compile(r"it\s+(?:usually\s+|typically\s+)?(?:cost|costs|take|takes|took)\b"
                                  r"[^.?!]{0,30}?\bto\s+[a-z]+",
                                  re.IGNORECASE)
# ("call her later", "email her again?"; but "her later years": a possessive before a noun)
_EN_AFTER_OBJECT_RE = re.compile(r"\s*(?:(?:later|today|tonight|tomorrow|again|soon)"
                                 r"(?:\s*(?:[.,!?]|$)|\s+(?:please|when|"
                                 r"after|at|on|in|to|for|with|about|and|or)\b)|back(?:\s*(?:[.,!?]|$)|\s+(?:now|"
                                 r"later|today|tonight|tomorrow|soon|please|when|after|at|on|in)\b))", re.IGNORECASE)


def _adverb_after_object(rest: str) -> bool:
    """Does an object "her" come before an adverb, not a noun it owns ("call her back now", "see her tomorrow"; but
    "her back pain", "her first job")?"""
    return bool(_EN_AFTER_OBJECT_RE.match(rest))


_OF_POSSESSIVES = frozenset({"their", "its"})


_EN_SINGULAR_S = ("ss", "us", "is", "ics", "ous", "sis")


def plural(m: Mention) -> bool:
    """A plural noun phrase: "lavender plants", "red blood cells", "The Avengers", "Cubesats"."""
    head = m.text.split()[-1].lower()
    return (len(head) > 3 and head.endswith("s") and not head.endswith(_EN_SINGULAR_S) and head[-2:] != "'s") \
        or head in lx.EN_SINGULAR_OF


def agrees(m: Mention, pronoun: str) -> bool:
    """Number agreement: it/its stand for a singular phrase, they/them/their for a plural one."""
    if pronoun in ("it", "its"):
        return not plural(m) or m.proper  # "Fleet Foxes", "A-Teens": names of one band, one album
    if pronoun in ("they", "them", "their", "these", "those"):
        # "my landlord … can they refuse": a singular they stands for a role, not for "my brother"
        return plural(m) or m.proper or (person_noun(m) and _singular(m.head) not in lx.EN_GENDERED_PERSON_NOUNS)
    return True


def person_noun(m: Mention) -> bool:
    """A common noun naming a person by role or kin ("my landlord", "my kids")."""
    return not m.proper and _singular(m.head) in lx.EN_PERSON_NOUNS


def candidates(focus: Focus, history: Sequence[Message]) -> list[Mention]:
    """Antecedents other than the focus, most likely first: the subject of the conversation, then what the
    user's turns named, most recent first."""
    out = [focus.subject] if focus.subject is not None else []
    for msg in reversed(history):
        if msg.role == "user":
            out.extend(x for x in mentions(msg.content, "en") if not x.relational)
    return out


def _person_pronoun_used(history: Sequence[Message]) -> bool:
    """Did the user call someone he or she (so the session's person is a person, not an "it")?"""
    return any(m.role == "user" and _EN_PERSON_RE.search(m.content) for m in history)


_EN_NAME_ANSWER_WORDS = 5
_EN_PERSON_RE = re.compile(r"\b(?:he|she|him|his|her|hers)\b", re.IGNORECASE)


def things_named(focus: Focus, history: Sequence[Message]) -> list[Mention]:
    """What "it" may stand for once the user has called the session's person he or she: the names the latest
    answer gave (the album, the film, the memorial), then those the user's turns gave, most recent first,
    never the person under another name ("Kaif" for "Katrina Kaif")."""
    person = focus.person
    if person is None or not person.proper or not _person_pronoun_used(history):
        return []
    out: list[Mention] = []
    for msg in reversed(history):
        ms = mentions(msg.content, "en")
        out.extend(x for x in ms if x.cls == "title")  # a quoted title names a work
        if msg is history[-1] and msg.role == "assistant" and len(msg.content.split()) <= _EN_NAME_ANSWER_WORDS:
            out.extend(x for x in ms if x.proper)  # "Streetlife Serenade.": the answer is the name
    pw = {w.lower() for w in person.text.split()}
    return [x for x in out if not ({w.lower() for w in x.text.split()} & pw) and len(x.text) > 2]


def replace_pronoun(q: str, ent: Mention, person: Mention | None = None,
                     others: Sequence[Mention] = (), things: Sequence[Mention] = (),
                     said: Mention | None = None) -> tuple[str | None, str]:
    """Replace the first personal pronoun (or, failing that, a demonstrative standing alone). ``things``: what
    it/its stand for when the focus is the session's person (see ``things_named``)."""
    toks = en_tokens(q)
    words_lower = [t.lower() for t in toks]
    matches = list(_EN_PRON_RE.finditer(q))
    personal = [mt for mt in matches if mt.group(1).lower() not in lx.EN_DEMONSTRATIVES]
    for mt in personal or matches:
        w = mt.group(1).lower()
        k = next((i for i, t in enumerate(words_lower) if t == w), None)
        if k is not None and en_feedback_pronoun(toks, k):
            continue  # "That's very helpful": the answer, not an entity
        if w == "it" and len(personal) > 1 and _EN_EXTRAPOSED_IT_RE.match(q, mt.start()):
            continue  # "how much does it cost to replace them": the "it" of "to replace them", whose them is meant
        if w in lx.EN_DEMONSTRATIVES:
            if k is not None and demonstrative_det(toks, k):
                continue  # "that album": a determiner
            if w == "that" and k is not None and k > 0 \
                    and words_lower[k - 1] not in _BEFORE_THAT_PRONOUN:
                continue  # a relative pronoun ("the band that ...")
        target = person if (w in _EN_PERSON and person is not None) else ent
        if w in ("this", "that") and said is not None and said.text.lower() not in q.lower():
            target = said  # a standalone "that" points at what the last answer named ("Who was that by?")
        if w in ("it", "its") and things and person is not None and target.text == person.text:
            target = next((x for x in things if x.text.lower() not in q.lower()), target)  # a person is no "it"
        if w in _EN_PERSON and not target.proper and not person_noun(target):
            continue  # he/she name a person: "market research" is no antecedent of "She is a business major"
        # "Tell me about its invention" after "What are the types of networks?"
        if not agrees(target, w) or weak_anchor(target):
            target = next((x for x in others
                           if agrees(x, w) and not weak_anchor(x) and x.text.lower() not in q.lower()),
                          target)
        if weak_anchor(target):
            return None, f"pronoun {mt.group(1)}: no antecedent ({target.text} is too vague)"
        phrase = target.phrase if mt.start() > 0 else target.phrase[:1].upper() + target.phrase[1:]
        possessive = w in lx.EN_POSSESSIVE
        if w == "her":
            nxt_word = _LATIN_RUN_RE.match(q[mt.end():].lstrip())
            possessive = nxt_word is not None and nxt_word.group(0).lower() not in lx.EN_FUNCTION \
                and not _adverb_after_object(q[mt.end():])
        if possessive and w in _OF_POSSESSIVES and target.proper:
            # "their address and phone number" → "the address and phone number of Cote"
            if (of := possessive_of(q, mt.start(), mt.end(), target.phrase)) is not None:
                return of, f"pronoun {mt.group(1)} → {target.text}"
        rep = phrase + (_possessive_suffix(target.text) if possessive else "")
        return q[: mt.start()] + rep + q[mt.end():], f"pronoun {mt.group(1)} → {target.text}"
    return None, "no pronoun"


_NON_SPACE_RE = re.compile(r"\S+")
_NP_CLOSES_RE = re.compile(r"\s*(?:[?.!,;]|please\b|as well\b|too\b)", re.IGNORECASE)
_OF_NP_RE = re.compile(r"\s*((?:[A-Za-z][\w'’-]*)(?:\s+(?:and\s+)?[A-Za-z][\w'’-]*){0,4})")


def possessive_of(q: str, start: int, end: int, owner: str) -> str | None:
    """A possessive pronoun at ``q[start:end]`` whose noun phrase closes its clause becomes "the <noun phrase> of
    <owner>", as search queries put it ("their address and phone number" → "the address and phone number of Cote");
    None when no plain noun phrase follows.

    >>> possessive_of("What is their address and phone number?", 8, 13, "Cote")
    'What is the address and phone number of Cote?'
    >>> possessive_of("Did their album sell well in Japan?", 4, 9, "Fleet Foxes") is None
    True
    """
    if _EN_AUX_OPENER_RE.fullmatch(q[:start].strip()):
        return None  # "Is their food tasty?": the subject of a yes/no question goes on past its noun (not "the
        # food tasty of Cote"); "Can you give me their address" ends on it
    m = _OF_NP_RE.match(q, end)
    if m is None:
        return None
    spans = [(w.start(), w.end()) for w in _NON_SPACE_RE.finditer(q[:m.end(1)]) if w.start() >= m.start(1)]
    while spans and q[spans[-1][0]:spans[-1][1]].lower() in _NP_TRAILERS:
        spans.pop()  # "their address and", "their address too": the noun phrase ends before them
    if not spans:
        return None
    np_end = spans[-1][1]
    words_ = [q[a:b] for a, b in spans]
    if any(w.lower() in lx.STOP_EN and w.lower() != "and" or w.lower() in lx.EN_VERBS for w in words_):
        return None
    rest = q[np_end:]
    if rest.strip() and not _NP_CLOSES_RE.match(rest):
        return None  # the phrase goes on ("their album sell well"): the possessive reads better
    the = "The" if not q[:start].strip() or q[:start].rstrip()[-1] in ".!?" else "the"
    return f"{q[:start]}{the} {' '.join(words_)} of {owner}{rest}"


_NP_TRAILERS = lx.STOP_EN | {"please", "too"}
_EN_AUX_OPENER_RE = re.compile(r"\W*(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)",
                               re.IGNORECASE)
