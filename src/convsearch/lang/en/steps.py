"""English rule steps, each list in the order it is tried: the gate's checks (``GATE_STEPS``, run by ``gate.decide``),
the rule steps before the rewrite (``RULE_STEPS``, ``rewrite.scoring``), the rewrite (``REWRITE_STEPS``, run by
``resolve``) and frame completion (``FRAME_STEPS``, run by ``rewrite.steps.complete_fragment``). Adding a rule is one
function here with a docstring example, one entry in its list, and a test."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from ... import lexicon as lx
from ...resolve import checks as c
from ...resolve import compose as r
from ...resolve import entities as e
from ...resolve import frame as f
from ...resolve import introduced, similar
from ...resolve import scoring as s
from ...resolve.analysis import Analysis
from ...resolve.compose import Outcome
from ...resolve.entities import definite_expansion, has_pronoun, mentions
from ...resolve.focus import alias_of, en_salient_noun, find_focus
from ...resolve.language import language
from ...resolve.shapes import SOCIAL_RE, own_thing_over_passage, shares_word, things_asked
from ...resolve.turn import Turn
from ...text import TRAIL_MARKS
from ...types import Decision, DecisionKind, Message
from ..base import Mention
from .frame import EN_ARTICLE_RE
from .markers import EN_REQUEST_RE, en_ellipsis, en_info_question
from .mentions import en_tokens

# the patterns of the rule steps below, compiled once at import (an inline re.match(r"…") compiles on its first use,
# inside a turn, and again after other patterns push it out of re's cache)
_EN_WORD_RE = re.compile(r"[a-z0-9][\w'’-]*")
_LEAD_PREP_RE = re.compile(r"(?:for|about|with|in|on|at|to|of|during|after|before)\s+", re.IGNORECASE)
_LEAD_ARTICLE_RE = re.compile(r"^(?:(?:the|a|an)\s+)", re.IGNORECASE)
_CVC_RE = re.compile(r"[^aeiou]*[aeiou][^aeiouwxy]")
_THEIR_RE = re.compile(r"\btheir\b", re.IGNORECASE)
_LAST_WORD_RE = re.compile(r"(\w+)\s+$")
_NEXT_WORD_RE = re.compile(r"\s+([\w']+)")
_NEXT_LATIN_RE = re.compile(r"\s*([A-Za-z]+)")

# --- the rewrite: section / class reference, ellipsis, pronoun, frame completion, exclusion -----------------


class EnTurn(Turn):
    """The turn as the English rewrite steps read it. Some steps only annotate it for the later ones: ``q`` (the
    query with a section's years or a class phrase's name put in), ``sref`` / ``cref`` (what they replaced) and
    ``out`` / ``how`` (the rewrite so far); ``section`` is the session topic's section."""

    __slots__ = ("section", "sref", "cref", "out", "how")

    def prepare(self) -> None:
        self.section = e.topic_section(self.topic) if self.topic else ""
        self.sref: tuple[int, int, str] | None = None
        self.cref: tuple[int, int, str] | None = None
        self.out: str | None = None
        self.how = "no focus"


def turn(query: str, history: Sequence[Message], topic: str | None = None) -> EnTurn:
    """The turn with the focus ``entities.find_focus`` gives (for examples and tests; the rewriter refines it)."""
    return EnTurn(Analysis(tuple(history), query, topic, language("en")), focus=find_focus(history, topic))


def passage_subject(t: EnTurn) -> None:
    """After an answer passage that never names the focus, what the passage names most often is what the follow-up
    is about: the focus was left behind (annotates ``focus`` / ``ent``).

    >>> from convsearch.types import Message as M
    >>> p = ("By the age of 50, most men have some hair loss. For most of them, hair loss starts at the temples and "
    ...      "spreads to the crown over the following years. Doctors say that hair loss can be slowed by treatment "
    ...      "when it is caught early enough, and a diet rich in iron helps too.")
    >>> t = turn("What treatments work for it?", [M("user", "Is my shampoo to blame?"), M("assistant", p)])
    >>> passage_subject(t), t.ent.text
    (None, 'hair loss')
    """
    last = t.history[-1] if t.history else None
    if last is None or last.role != "assistant" or t.ent is None or _still_named(t.ent, last.content):
        return
    sal = en_salient_noun(last.content, e.mentions(last.content, "en"))
    if sal is not None and sal.text.lower() not in t.q.lower():
        t.focus = replace(t.focus, entity=sal, subject=sal)


def _still_named(ent: Mention, text: str) -> bool:
    """Does ``text`` use a content word of ``ent`` ("water" for "water resource management")?"""
    low = _word_set(text)
    return any(w in low for w in _EN_WORD_RE.findall(ent.text.lower()) if w not in lx.STOP_EN)


@lru_cache(maxsize=1024)
def _word_set(text: str) -> frozenset[str]:
    """The lower-case words of a text (an answer is asked about on every turn that follows it)."""
    return frozenset(_EN_WORD_RE.findall(text.lower()))


def section_reference(t: EnTurn) -> None:
    """"during this time" in a session on a dated page section takes the section's years; "that year" the one
    year the latest user turn naming a year gave (annotates ``q``).

    >>> t = turn("What did he do during this time?", [], topic="Frank Zappa: Early career (1985-1989)")
    >>> section_reference(t), t.q
    (None, 'What did he do during 1985-1989?')
    """
    sref = (r.section_reference(t.q, t.section) if t.section else None) or r.year_reference(t.q, t.history)
    if sref is not None:
        t.q, t.sref = t.q[:sref[0]] + sref[2] + t.q[sref[1]:], sref


def ellipsis(t: EnTurn) -> Outcome | None:
    """"What about X?" swaps X for the frame's entity of its kind, adds a prepositional X to the frame, or
    attaches the focus to a common noun.

    >>> from convsearch.types import Message as M
    >>> ellipsis(turn("What about NovaDB?", [M("user", "Does AnySearch support Chinese?"), M("assistant", "Yes.")]))
    Outcome(out='Does NovaDB support Chinese?', reason='entity swap: AnySearch → NovaDB')
    """
    q, focus, ent = t.q, t.focus, t.ent
    m = en_ellipsis(q)
    if not m:
        return None
    x_raw = q[m.end():].strip().rstrip(TRAIL_MARKS).strip()
    prep = _LEAD_PREP_RE.match(x_raw)
    x = _LEAD_ARTICLE_RE.sub("", x_raw[prep.end():] if prep else x_raw)
    if not x:
        return Outcome(None, "ellipsis without content")
    if len(x.split()) - (len(t.sref[2].split()) if t.sref is not None else 0) > 3:
        return Outcome(None, "the ellipsis names a whole request of its own")
    xm = e.mentions(x, "en") or [Mention(x, x[:1].isupper(), "proper" if x[:1].isupper() else "noun",
                                           x.split()[-1].lower())]
    if focus.frame:
        frame = focus.frame.strip()
        fm = list(focus.frame_mentions)
        target = r.swap_target(xm[:1], fm, frame)
        if target is None and xm[0].proper and ent is not None and ent.proper and ent.text in frame:
            target = ent
        if target is not None and target.text in frame:
            return Outcome(frame.replace(target.text, x, 1), f"entity swap: {target.text} → {x}")
        if not xm[0].relational and not e.attribute_noun(xm[0]):  # a peer, not an attribute ("the price")
            # "what about blueberries?" after "Can dogs eat grapes?", "for a powerlifter?" after "… should a
            # runner eat …": the frame's phrase nearest in meaning gives way
            cands = [m.text for m in focus.frame_mentions if not m.relational and m.text in frame]
            # and the nouns inside a compound ("baguette" of "a beginner baguette dough"), as in Chinese
            cands += [w for c in cands if not c[:1].isupper() and " " in c for w in c.split()
                      if w.lower() not in lx.STOP_EN and w.lower() not in lx.RELATIONAL_EN and w not in cands
                      and w.lower() not in x.lower().split()]  # ("Chinese food" for the food of "international food")
            old = similar.nearest(x, cands, min_sim=similar.PEER)
            if old is not None:
                return Outcome(frame.replace(old, x, 1), f"entity swap (nearest in meaning): {old} → {x}")
        if prep or (xm[0].proper and not m.group(1) and not f.starts_with_preposition(x_raw)):
            # "And for annual leave?" after "How long does approval take?": add to the frame; a bare name that takes
            # no phrase's place goes with the frame's predicate ("California state?" after "… a federal tax return?";
            # "What about the BBC experiment?" more often opens a subject of its own)
            core = frame.rstrip(TRAIL_MARKS)
            add = x_raw if prep else f"{'in' if f.slot_kind(x) == 'place' else 'for'} {x_raw}"
            return Outcome(f"{core} {add}{frame[len(core):].strip()}", f"ellipsis: frame + {add}")
    if not xm[0].proper and ent is not None and ent.text.lower() not in x.lower():
        # "What about pricing?" → "What about NovaDB pricing?", like "价格呢？" → "AnySearch 的价格"
        i = q.find(x, m.end())
        return Outcome(f"{q[:i]}{ent.text} {q[i:]}", f"ellipsis completion with {ent.text}")
    return Outcome(None, "ellipsis without a frame")


def class_reference(t: EnTurn) -> None:
    """"did that album sell well?" → "did the album Museum sell well?" (annotates ``q``; the rules go on from there).

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "What did they release next?"),
    ...      M("assistant", "The band's fourth album, Blue Harbour, came out in 2003.")]
    >>> t = turn("Was that album well received?", h, topic="Grey Owls")
    >>> class_reference(t), t.q
    (None, 'Was the album Blue Harbour well received?')
    """
    cref = e.class_reference(t.q, t.history, t.ent.text if t.ent is not None else "")
    if cref is not None:
        start, end, name = cref
        t.q, t.cref = f"{t.q[:start]}the {t.q[start:end].split()[-1]} {name}{t.q[end:]}", cref


_HOW_TO_RE = re.compile(r"^\W*(?:so\s+|and\s+)?how\s+(?:do|can|should|would|could)\s+(?:i|we|you)\s+([a-z]+)\s+(.+?)"
                        r"[\s?.!]*$", re.IGNORECASE)
# what an activity costs: "how long does it take", "how much does it cost", "is it worth it"
_ACTIVITY_IT_RE = re.compile(r"\b(?:does|will|would|did|is)\s+(it)\s+(?:take|cost|last|require|need|usually\s+take|"
                             r"worth)\b", re.IGNORECASE)


def _gerund(verb: str) -> str:
    """renew → renewing, make → making, get → getting, see → seeing."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if len(v) <= 4 and _CVC_RE.fullmatch(v):
        return v + v[-1] + "ing"
    return v + "ing"


# the pronoun as what is done, or as the object of the verb "do": the action itself ("Can that be done online?",
# "How is it done?", "Should I do that first?"); "do" after a subject or a modal is the main verb, not "Does it …?"
_DONE_RE = re.compile(r"\b(that|this|it)\s+(?:be|get|gets|is|was)\s+(?:\w+ly\s+)?done\b|"
                      r"\b(?:is|was|can|could|should|will|would)\s+(that|this|it)\s+(?:be\s+)?(?:\w+ly\s+)?done\b",
                      re.IGNORECASE)
_DO_IT_RE = re.compile(r"\b(?:to|i|we|you|can|could|should|would|will)\s+(do\s+(?:that|this|it))\b", re.IGNORECASE)


def activity(t: EnTurn) -> Outcome | None:
    """After "how do I renew my passport by mail?", the "it" of "how long does it take?" is the renewing; the "that"
    of "can that be done …?" too, and "do that" is the renewing done ("how do I do that online?").

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "how do i renew my passport by mail"), M("assistant", "Use DS-82.")]
    >>> activity(turn("how long does it take", h))
    Outcome(out='how long does renewing my passport by mail take', reason='activity it → renewing my passport by mail')
    >>> activity(turn("Can that be done from abroad?", h)).out
    'Can renewing my passport by mail be done from abroad?'
    """
    how = _HOW_TO_RE.match(t.focus.frame or "")
    if how is None or how.group(1).lower() in lx.EN_AUX or how.group(1).lower() == "do":
        return None
    q = t.q
    it = _ACTIVITY_IT_RE.search(q)
    done = _DONE_RE.search(q) if it is None else None
    if it is not None or done is not None:
        span = it.span(1) if it is not None else done.span(1) if done.group(1) else done.span(2)  # type: ignore[union-attr]
        doing = f"{_gerund(how.group(1))} {how.group(2) if it is not None else _coordinated(how.group(2), _gerund)}"
        if done is not None:
            doing = _without_slots(doing, q[span[1]:])
        return Outcome(q[:span[0]] + doing + q[span[1]:], f"activity {q[span[0]:span[1]]} → {doing}")
    do = _DO_IT_RE.search(q)
    if do is not None:
        act = _without_slots(f"{how.group(1).lower()} {_coordinated(how.group(2), str)}", q[do.end(1):])
        return Outcome(q[:do.start(1)] + act + q[do.end(1):], f"activity {do.group(1)} → {act}")
    return None


_EN_COORD_VERB_RE = re.compile(r"\b(and|but|or)\s+([a-z]+)\b")
_EN_SLOT_PREP_RE = re.compile(r"\b(?:on|in|at|for|from|with|under|using|via)\s+$", re.IGNORECASE)


def _coordinated(rest: str, form: Callable[[str], str]) -> str:
    """The verbs of a coordinated predicate in ``form`` ("… but keep its data" → "… but keeping its data")."""
    return _EN_COORD_VERB_RE.sub(lambda m: f"{m.group(1)} {form(m.group(2))}" if m.group(2) in lx.EN_VERBS
                                 else m.group(0), rest)


def _without_slots(act: str, after: str) -> str:
    """The action without its phrase of a slot type the rest of the query names anew ("install Docker on Ubuntu" +
    "on Windows?" → "install Docker")."""
    kinds = {k for _, _, k in f.slot_spans(after)}
    for s0, e0, k in reversed(f.slot_spans(act)):
        prep = _EN_SLOT_PREP_RE.search(act[:s0])
        if k in kinds and prep is not None:
            act = (act[:prep.start()].rstrip() + " " + act[e0:].lstrip()).strip()
    return act


_ANSWER_SUBJECT_RE = re.compile(r"^\W*(?:[Tt]he\s+)?((?:[A-Z][\w'’&-]*\s+){0,3}[A-Z][\w'’&-]*)\s+"
                                r"(?:is|serves|offers|has|meets|was|are|provides|sells)\b")


def answer_subject(t: EnTurn) -> None:
    """"their" after an answer that opens on a name the user did not give ("Cote is a French restaurant …") is that
    name's: the answer brought it in as its subject (annotates ``ent``).

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "How about a French restaurant?"), M("assistant", "Cote is a French restaurant in the centre.")]
    >>> t = turn("What is their phone number?", h); answer_subject(t); t.ent.text
    'Cote'
    """
    if len(t.history) < 2 or t.history[-1].role != "assistant" or t.history[-2].role != "user":
        return
    m = _THEIR_RE.search(t.q)
    if m is None:
        return
    sm = _ANSWER_SUBJECT_RE.match(t.history[-1].content)
    if sm is None:
        return
    name = sm.group(1)
    low = name.lower()
    if low in t.history[-2].content.lower() or low in t.q.lower() or low.split()[0] in lx.STOP_EN \
            or not any(x.proper and x.text.lower() == low for x in e.mentions(t.history[-1].content, "en")):
        return  # the user's own name, "This is …", "There are …"; not a name ("Parking is free …", "Monday is …")
    t.focus = replace(t.focus, entity=Mention(name, True, "proper", name.split()[-1].lower()))


_EN_IT_THEY_RE = re.compile(r"\b(?:(it|its)|they|them|their)\b", re.IGNORECASE)


def opened_subject(t: EnTurn) -> None:
    """"it" / "they" after an answer whose first sentence brought in a subject of its own is that subject: what the
    answer identified ("That's almost certainly a European robin." → "do they migrate?" → European robins) or
    the name it opened on ("The Ellis Island Foundation has …" → "does it have …"); not what the user named, nor a
    name the answer brought in that ``answer_subject`` took already (annotates ``ent``).

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "small brown bird with an orange chest in my garden, UK"),
    ...      M("assistant", "That's almost certainly a European robin. They sing all winter.")]
    >>> t = turn("do they migrate", h); opened_subject(t); t.ent.text
    'European robins'
    """
    if len(t.history) < 2 or t.history[-1].role != "assistant" or t.history[-2].role != "user":
        return
    m = _EN_IT_THEY_RE.search(t.q)
    if m is None or (t.ent is not None and _brought_in(t.ent, t.history)):
        return  # the focus is a name the answer brought in already ("Which VPN client …?" → "… is GlobalProtect")
    intro = introduced.answer_opening(t.history, plural=m.group(1) is None)
    if intro is None and m.group(1) is None:
        # "they" / "their" for a company or a team a which-question's answer named ("I'm looking for a budget airline"
        # → "Vueling flies that route …" → "what's their baggage allowance"); one person is no "they"
        named = introduced.introduced_entity(t.history, "en")
        intro = named if named is not None and named.proper and not introduced.person_shaped(named) \
            and not _names_several(t.history) else None  # ("Ryanair …, followed by easyJet and Wizz Air": they all)
    if intro is None:
        intro = shortened_name(t.history)
        if intro is not None and m.group(1) is None and introduced.person_shaped(intro):
            intro = None  # one person is no "they"
    if intro is not None and intro.text.lower() not in t.q.lower() and (
            m.group(1) is None or intro.det != "the " or not r.plural(intro)):  # "The Arabs …" is no "it"
        t.focus = replace(t.focus, entity=intro, subject=intro)


def shortened_name(history: Sequence[Message]) -> Mention | None:
    """The user's name the latest answer goes on with in short ("… in a Piper PA-28-161 Warrior" → "Nice, the
    Warrior is a forgiving trainer." → "whats its stall speed": the Piper PA-28-161 Warrior, not the PPL the question
    named first): the one name of the question holding the first name of the answer's first sentence.

    >>> shortened_name([Message("user", "im doing my PPL training in a Piper PA-28-161 Warrior"),
    ...                 Message("assistant", "Nice, the Warrior is a forgiving trainer.")]).text
    'Piper PA-28-161 Warrior'
    """
    if len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return None
    short = next((x for x in e.mentions(introduced.first_sentence(history[-1].content), "en") if x.proper), None)
    if short is None:
        return None
    q_ms = e.mentions(history[-2].content, "en")
    if any(x.text == short.text for x in q_ms):
        return None  # the user wrote the short form too ("the Invesco QQQ Trust (QQQ)"): the alias it is
    full = [x for x in q_ms if x.proper and alias_of(short, x)]
    return full[0] if len(full) == 1 else None


_EN_PERSONAL_RE = re.compile(r"\b(?:(he|him|his|she|her)|they|them|their)\b", re.IGNORECASE)
_EN_ROLE_RE = re.compile(r"\b(my|our|your|the)\s+(" + "|".join(sorted(lx.EN_PERSON_NOUNS)) + r")(s?)\b", re.IGNORECASE)
_EN_PLACE_PREPS = ("in ", "near ")  # ("my doctor at Kaiser Permanente": at / from a name is as often a company)


def person_agreement(t: EnTurn) -> None:
    """he / she / they stand for the person the latest question named by role ("my landlord", "my son"), not for a
    place or a thing it also named: "can my landlord in NYC raise the rent?" → "can they refuse to renew?" is about
    the landlord (annotates ``ent`` for they, the focus's ``person`` for he / she).

    >>> from convsearch.types import Message as M
    >>> t = turn("how old should he be to start", [M("user", "my son wants to learn piano in Seattle"),
    ...                                            M("assistant", "Seattle has many teachers.")])
    >>> person_agreement(t); t.focus.person.phrase
    'my son'
    """
    m = _EN_PERSONAL_RE.search(t.q)
    role = _role_named(t.focus.frame or "")
    if m is None or role is None or role[1].text.lower() in t.q.lower():
        return
    frame = t.focus.frame or ""
    if m.group(1) is not None:  # he / she: one person
        target = t.focus.person or t.ent
        if not role[0] and (target is None or _place_in(target, frame) or not target.proper):
            t.focus = replace(t.focus, person=role[1])
    elif r.agrees(role[1], "they") and (t.ent is None or _place_in(t.ent, frame)
                                        or (not t.ent.proper and not r.plural(t.ent))):
        t.focus = replace(t.focus, entity=role[1])  # they: the landlord, not NYC; one person or several ("my kids")


def _role_named(text: str) -> tuple[bool, Mention] | None:
    """The one person a text names by role with a possessive or "the" before it ("my landlord"), and whether in the
    plural; None for none or several."""
    found = _EN_ROLE_RE.findall(text) if text else []
    if len(found) != 1:
        return None
    det, noun, s = found[0]
    return bool(s), Mention(noun + s, False, "noun", (noun + s).lower(), f"{det.lower()} ")


def _place_in(m: Mention, text: str) -> bool:
    """Is ``m`` a place: of the place lexicon, or written after in / near ("my apartment in NYC")?"""
    return f.slot_kind(m.text) == "place" or any(p + m.text in text for p in _EN_PLACE_PREPS)


def _names_several(history: Sequence[Message]) -> bool:
    """Does the latest answer's first sentence name more than one name the question did not?"""
    question, first = history[-2].content.lower(), introduced.first_sentence(history[-1].content)
    return sum(1 for x in e.mentions(first, "en") if x.proper and x.text.lower() not in question) > 1


def _brought_in(ent: Mention, history: Sequence[Message]) -> bool:
    """Is ``ent`` a name the latest answer gave and the question it answers did not?"""
    return ent.proper and ent.text in history[-1].content and ent.text.lower() not in history[-2].content.lower()


def pronoun(t: EnTurn) -> None:
    """The first pronoun standing for the focus (or the person, or what the answer said) is replaced (annotates
    ``out`` / ``how``).

    >>> from convsearch.types import Message as M
    >>> t = turn("How much does it cost?", [M("user", "What is AnySearch?"), M("assistant", "A search service.")])
    >>> pronoun(t), t.out, t.how
    (None, 'How much does AnySearch cost?', 'pronoun it → AnySearch')
    """
    focus, ent, history = t.focus, t.ent, t.history
    ent = _plural_referent(t.q, ent, focus.frame_mentions)
    said = r.answer_said(history) if ent is not None else None
    t.out, t.how = r.replace_pronoun(t.q, ent, focus.person, r.candidates(focus, history),
                                      r.things_named(focus, history), said) if ent is not None else (None, "no focus")
    if t.out is not None and ent is not None and t.how.startswith(("pronoun they → ", "pronoun They → ")) \
            and r.person_noun(ent) and not r.plural(ent):
        t.out = singular_verb(t.out, ent.phrase)


_EN_VERB_BEFORE = {"do": "does", "are": "is", "were": "was", "have": "has"}
_EN_VERB_AFTER = {"are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't", "aren't": "isn't"}


def singular_verb(out: str, phrase: str) -> str:
    """The verb a singular they was written with, made to agree with the one person it became.

    >>> singular_verb("do my employer have to pay me extra", "my employer")
    'does my employer have to pay me extra'
    >>> singular_verb("what if my landlord are late", "my landlord")
    'what if my landlord is late'
    """
    i = out.lower().find(phrase.lower())
    if i < 0:
        return out
    before, after = out[:i], out[i + len(phrase):]
    m = _LAST_WORD_RE.search(before)
    if m is not None and m.group(1).lower() in _EN_VERB_BEFORE:
        before = before[:m.start(1)] + _match_case(_EN_VERB_BEFORE[m.group(1).lower()], m.group(1)) + before[m.end(1):]
    else:
        m = _NEXT_WORD_RE.match(after)
        if m is not None and m.group(1).lower() in _EN_VERB_AFTER:
            after = after[:m.start(1)] + _EN_VERB_AFTER[m.group(1).lower()] + after[m.end(1):]
    return before + out[i:i + len(phrase)] + after


def _match_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


_EN_PLURAL_PRONOUN_RE = re.compile(r"\b(?:they|them|their)\b", re.IGNORECASE)


def _plural_referent(q: str, ent: Mention | None, frame_mentions: Sequence[Mention]) -> Mention | None:
    """"they" does not stand for one definite thing ("the warm side"): the frame's generic or plural common noun
    does ("a leopard gecko" → "how long do they live").

    >>> side = Mention("warm side", False, "noun", "side", "the ")
    >>> gecko = Mention("leopard gecko", False, "noun", "gecko")
    >>> _plural_referent("how long do they live", side, [side, gecko]).text
    'leopard gecko'
    """
    if ent is None or ent.proper or ent.det.strip().lower() != "the" or ent.head.lower().endswith("s") \
            or not _EN_PLURAL_PRONOUN_RE.search(q):
        return ent
    return next((m for m in frame_mentions if m is not ent and not m.proper and not m.relational
                 and m.det.strip().lower() != "the"), ent)


def definite_reference(t: EnTurn) -> Outcome | None:
    """With no pronoun and no class phrase, a definite phrase takes the fuller name the history gave it.

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "Tell me about the Golden Gate Bridge."), M("assistant", "It opened in 1937.")]
    >>> t = turn("How long is the bridge?", h); pronoun(t); definite_reference(t)
    Outcome(out='How long is the Golden Gate Bridge?', reason='definite reference: bridge → Golden Gate Bridge')
    """
    if t.out is None and t.cref is None:
        d = e.definite_expansion(t.q, t.history)
        if d is not None:
            start, end, full = d
            return Outcome(t.q[:start] + full + t.q[end:], f"definite reference: {t.q[start:end]} → {full}")
    return None


def no_focus(t: EnTurn) -> Outcome | None:
    """Without a focus the rules stop here (with the class phrase's name, if one was put in).

    >>> no_focus(turn("How much does it cost?", []))
    Outcome(out=None, reason='no focus')
    """
    if t.ent is None:
        return Outcome(t.q, f"class reference: {t.cref[2]}") if t.cref is not None else Outcome(None, "no focus")
    return None


def frame_completion(t: EnTurn) -> None:
    """A question that names neither the focus nor the subject gets it where English puts it (annotates ``out``).

    >>> from convsearch.types import Message as M
    >>> h = [M("user", "Tell me about the Volvo XC90."), M("assistant", "A large SUV.")]
    >>> t = turn("What are the safety features?", h)
    >>> pronoun(t); frame_completion(t); t.out, t.how
    ('What are the safety features of Volvo XC90?', 'frame completion with Volvo XC90')
    """
    focus, ent, q = t.focus, t.ent, t.q
    if ent is None:  # ``no_focus`` stopped such a turn before this step
        return
    subject = focus.subject or ent
    if t.out is None and not r.en_names(q, ent) and not r.en_names(q, subject):
        t.out, t.how = r.complete_en(q, r.relational_owner(q, focus) or r.attribute_owner(subject))


def exclusion(t: EnTurn) -> None:
    """"what else …" excludes what a short answer said: "Besides X, what else …" (annotates ``out`` / ``how``). A
    long passage says too much to name in a query (CANARD answers: median 13 words; CAsT 2021 / iKAT passages:
    76-171).

    >>> from convsearch.types import Message as M
    >>> t = turn("What else did he write?", [M("user", "What did Mark Twain write?"), M("assistant", "Tom Sawyer.")])
    >>> pronoun(t); exclusion(t); t.out, t.how
    ('Besides Tom Sawyer, what else did Mark Twain write?', 'pronoun he → Mark Twain; exclusion: besides Tom Sawyer')
    """
    focus, history, q = t.focus, t.history, t.q
    excluding = focus.last_answer is not None and r.asks_for_more(q) and bool(history) and \
        len(history[-1].content.split()) <= r.EN_EXCLUDE_MAX_WORDS
    gist = r.answer_gist(history[-1].content, focus) if excluding and history else None
    if excluding and gist and gist.lower() not in (t.out or q).lower():
        base = t.out or q
        # before the sentence that asks for more ("Thanks! What else ...?" → "Thanks! Besides X, what else ...?")
        m_else = r.EN_ELSE_RE.search(base)
        cut = max((mm.end() for mm in r.EN_SENT_END_RE.finditer(base, 0, m_else.start() if m_else else 0)), default=0)
        head, tail = base[:cut], base[cut:]
        t.out = f"{head}Besides {gist}, {tail[:1].lower()}{tail[1:]}"
        t.how = (t.how + "; " if t.out is not None and t.how != "no pronoun" else "") + f"exclusion: besides {gist}"


def finish(t: EnTurn) -> Outcome:
    """The rewrite so far, with how the section or class reference came in; the query when nothing was to add.

    >>> from convsearch.types import Message as M
    >>> t = turn("Is AnySearch free?", [M("user", "What is AnySearch?"), M("assistant", "A search service.")])
    >>> pronoun(t); finish(t)
    Outcome(out=None, reason='already names the focus')
    """
    out, how, sref, cref = t.out, t.how, t.sref, t.cref
    if sref is not None and cref is None:
        return Outcome(out or t.q, f"section reference: {sref[2]}" + (f"; {how}" if out else ""))
    if cref is not None:
        return Outcome(out or t.q, f"class reference: {t.query.strip()[cref[0]:cref[1]]} → {cref[2]}"
                       + (f"; {how}" if out else ""))
    return Outcome(out, how if out is not None else "already names the focus")


REWRITE_STEPS = (passage_subject, section_reference, ellipsis, class_reference, activity, answer_subject,
                 opened_subject, person_agreement, pronoun,
                 definite_reference, no_focus, frame_completion, exclusion, finish)


def resolve(t: Turn, steps: Sequence[r.Step]) -> tuple[str | None, str]:
    """The composer: the first answer of ``steps`` (this language's ``REWRITE_STEPS``) on the turn as the English
    steps read it, with a locative "there" first given the place the latest question named
    (``frame.locative_there``)."""
    history = t.history
    answer = history[-1].content if history and history[-1].role == "assistant" else ""
    there = f.locative_there(t.query, t.focus.frame, answer)
    q_in = there[0] if there is not None else t.query
    out, op = r.first(steps, t.extend(EnTurn, query=q_in))
    if there is not None:
        out, op = (out or q_in), f"{there[1]}; {op}"
    return out, op

# --- frame completion of a fragment -------------------------------------------------------------------------


_EN_COMPARE_RE = re.compile(r"^\W*(?:(?:and|so|but|ok)\s*,?\s+)?(?:how\s+(?:does|do|did|would|will)\s+(.+?)\s+"
                            r"(?:compare|stack\s+up|measure\s+up|fare)\b.*|(?:(?:and\s+)?(?:compared\s+(?:to|with)|"
                            r"vs\.?|versus)\s+(.+?)))\s*[?.!]*$", re.IGNORECASE)
_EN_COMPARE_TO_RE = re.compile(r"\b(?:compare|compares|stack\s+up|measure\s+up)\s+(?:to|with|against)\s+"
                               r"(.+?)\s*[?.!]*$", re.IGNORECASE)
# "Is Ally better?", "Are the Sony ones cheaper?": a comparative with no "than" compares with the frame's entity
_EN_BETTER_RE = re.compile(r"^\W*(?:(?:and|so|but|ok)\s*,?\s+)?(is|are|was|were|would)\s+(.+?)\s+(?:any\s+|much\s+)?"
                           r"(better|worse|cheaper|faster|slower|safer|bigger|smaller|larger|lighter|heavier|easier|"
                           r"harder|more\s+\w+|less\s+\w+)(\s+(?:for|at|in)\s+[^?]+?)?\s*\?$", re.IGNORECASE)
_EN_CONDITION_RE = re.compile(r"^\W*(?:(?:and|so|ok|okay|but)\s*,?\s+)?(?:any|anything|something|ones?)\s+"
                              r"((?:under|over|below|above|with|without|near|within|less than|cheaper than|"
                              r"for less than)"
                              r"\b[^?]*?)\s*(?:instead)?\s*[?.!]*$", re.IGNORECASE)
_EN_REQUEST_RE = re.compile(r"^\W*(?:what are|what's|what is|which|find|show|recommend|suggest|list|give me|any|"
                            r"are there|where can i)\b", re.IGNORECASE)


def comparison(query: str, frame: str) -> tuple[str, str] | None:
    """"How does Y compare?" keeps the frame's entity and predicate and adds Y beside it.

    >>> comparison("How does Gemini 1.5 Pro compare?", "What's the context window of Claude 3.5 Sonnet?")[0]
    "What's the context window of Claude 3.5 Sonnet and Gemini 1.5 Pro?"
    """
    b = _EN_BETTER_RE.match(query.strip())
    if b is not None and f.name_like(b.group(2)) and len(b.group(2).split()) <= f.EN_FRAGMENT_WORDS:
        e = f.frame_entity(frame, "en", b.group(2))
        if e is not None and e.lower() not in query.lower():
            core = query.strip().rstrip(TRAIL_MARKS)
            cut = b.start(4) if b.group(4) else len(core)
            return f"{core[:cut]} than {e}{core[cut:]}?", f"comparison: {b.group(2)} than {e}"
    m = _EN_COMPARE_RE.match(query.strip())
    if not m:
        return None
    y = (m.group(1) or m.group(2) or "").strip()
    if y.lower() in ("that", "it", "this", "they", "those", "these"):
        # "And how does that compare to the Galaxy Buds 2 Pro?": the compared thing follows "to"
        t = _EN_COMPARE_TO_RE.search(query)
        y = t.group(1).strip() if t else ""
    e = f.frame_entity(frame, "en", y) if y else None
    if not e or len(EN_ARTICLE_RE.sub("", y).split()) > f.EN_FRAGMENT_WORDS:
        return None
    i = frame.find(e)
    return frame[:i + len(e)] + f" and {y}" + frame[i + len(e):], f"comparison: {e} and {y}"


def typed_swap(query: str, frame: str) -> tuple[str, str] | None:
    """The fragment's phrase replaces the frame's span of its slot type; a preposition anchors the slot.

    >>> typed_swap("And in 2020?", "How many electric cars did Norway sell in 2023?")[0]
    'How many electric cars did Norway sell in 2020?'
    >>> typed_swap("And by TensorFlow 2.15?", "Is Python 3.12 supported by PyTorch 2.2?")[0]
    'Is Python 3.12 supported by TensorFlow 2.15?'
    """
    ef = f.en_fragment(query)
    return f.typed_swap(ef[2], frame, "en", ef[1]) if ef is not None else None


def attribute_shift(query: str, frame: str) -> tuple[str, str] | None:
    """An attribute replaces the frame's attribute and keeps its entity.

    >>> attribute_shift("And its price?", "What is the battery life of the Sony WH-1000XM5?")[0]
    'What is the price of the Sony WH-1000XM5?'
    """
    ef = f.en_fragment(query)
    return f.attribute_shift(ef[2], frame, "en") if ef is not None else None


def condition(query: str, frame: str) -> tuple[str, str] | None:
    """A condition is added to a request for recommendations.

    >>> condition("Any under $500?", "What are the best mirrorless cameras for beginners?")[0]
    'What are the best mirrorless cameras for beginners under $500?'
    """
    m = _EN_CONDITION_RE.match(query.strip())
    if not m or not _EN_REQUEST_RE.match(frame):
        return None
    core = frame.rstrip(TRAIL_MARKS)
    return f"{core} {m.group(1)}{frame[len(core):].strip()[:1] or '?'}", f"condition added: {m.group(1)}"


FRAME_STEPS = (comparison, typed_swap, attribute_shift, condition)

# --- the gate: this language's checks, in the order they are tried (the first half of the decision) ----------

_EN_REMARK_RE = re.compile(r"^\W*(?:(?:ok|okay|great|thanks|thank you|no|yes|sure|alright|well)\W+)*"
                           r"(?:i(?:'ll|’ll| will| shall| am going to|'m going to|’m going to)|we(?:'ll|’ll| will))\s+"
                           r"(?!want|need|like|prefer|have to)", re.IGNORECASE)
_EN_SENTENCE_RE = re.compile(r"[^.!?]+[.!?]*")


def is_remark(query: str) -> bool:
    """A first-person remark on the answer that asks for nothing: what the user will do with it ("I'll consider
    those.", "I will keep this in mind, thanks."). Its this/that/those is the answer itself, and there is nothing to
    search for. A wish or a question is no remark ("I'll need that in blue", "I'll take it — how much is it?")."""
    if "?" in query or not any(w in lx.EN_DEMONSTRATIVES for w in _WORD_RE.findall(query.lower())):
        return False
    sents = [x.strip() for x in _EN_SENTENCE_RE.findall(query) if x.strip()]
    if not sents or any(en_info_question(x) or EN_REQUEST_RE.match(x) for x in sents):
        return False
    if _EN_PRONOUN_RE.search(query):
        return False  # "I'll ask her", "I'll buy it": a person or a thing, not the answer
    dem = [x for x in sents if any(w in lx.EN_DEMONSTRATIVES for w in _WORD_RE.findall(x.lower()))]
    return all((_EN_REMARK_RE.match(x) and _demonstratives_alone(x)) or SOCIAL_RE.search(x) for x in dem)


def _demonstratives_alone(sentence: str) -> bool:
    """Does every this/that/these/those of the sentence stand alone ("consider those", "keep this in mind"), none
    picking an item ("that hotel", "that one": a choice the rewrite should name)?"""
    toks = _WORD_RE.findall(sentence.lower())
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in lx.EN_DEMONSTRATIVES and nxt and (nxt in ("one", "ones") or nxt not in lx.EN_FUNCTION):
            return False
    return True


def remark(a: Analysis) -> Decision | None:
    """A remark on the answer ("I'll consider those.") asks for nothing: no rewrite.

    >>> from convsearch.resolve.gate import needs_rewrite
    >>> from convsearch.types import Message as M
    >>> h = [M("user", "Any good books?"), M("assistant", "Dune and Emma.")]
    >>> needs_rewrite(h, "I'll consider those.").kind.value
    'social'
    """
    if is_remark(a.q):
        return Decision(False, "a remark on the answer ('I'll consider those'), not a request", 0.6,
                        DecisionKind.SOCIAL)
    return None


def _antecedent_inside(q: str) -> bool:
    """'What is Rock City, and why is it famous?': a proper noun before the first pronoun is its antecedent."""
    m = _EN_PRONOUN_RE.search(q)
    if not m:
        return False
    before = q[: m.start()]
    word = m.group(1).lower()
    nxt = _NEXT_LATIN_RE.match(q[m.end():])
    possessive_her = word == "her" and nxt is not None and nxt.group(1).lower() not in lx.EN_FUNCTION
    if word in ("it", "them", "him", "her", "they") and not possessive_her and not _EN_CLAUSE_BREAK_RE.search(before):
        # "Why did Elon Musk start it?": an object pronoun is not the subject of its own clause
        # ("Who are the Electors and what were they doing?" has a clause break before "they")
        return False
    if word in ("he", "him", "his", "she", "her") and _EN_PERSON_NOUN_RE.search(before):
        return True  # "My sister says her knee clicks": the sister
    ms = mentions(before, "en")
    if any(x.proper for x in ms):
        return True
    if word in ("it", "its") and _EN_CLAUSE_BREAK_RE.search(before):
        # "What is mortadella and where is it from?", "A heat pump seems right. How much does it cost?": a thing
        # the query named in an earlier clause
        return any(not x.relational and not x.text.lower().endswith("s") and _introduced_here(before, x.text)
                   for x in ms)
    return False


def _introduced_here(before: str, noun: str) -> bool:
    """Is ``noun`` brought in by the query itself ("a heat pump", "our lunch date", "What is mortadella"), not
    something the assistant said ("your answer")? (Up to three words may stand between the opener and the head.)"""
    toks = _WORD_RE.findall(before.lower())
    head = noun.split()[-1].lower()
    for i, tok in enumerate(toks):
        if tok != head:
            continue
        window = toks[max(0, i - 4):i]
        if any(w in _INTRO_DETS for w in window) or any(
                a in ("what", "who") and b in ("is", "was", "are") for a, b in zip(window, window[1:])):
            return True
    return False


_WORD_RE = re.compile(r"[\w-]+")
_INTRO_DETS = frozenset({"a", "an", "my", "our", "this", "about"})


_EN_PERSON_NOUN_RE = re.compile(r"\b(?:my|our|your|a|his|her)\s+(?:" + "|".join(sorted(lx.EN_PERSON_NOUNS)) + r")s?\b",
                                re.IGNORECASE)
_EN_CLAUSE_BREAK_RE = re.compile(r"[,;:.?!]|\b(?:and|but|or|so|because|when|if|since|while)\b", re.IGNORECASE)


_EN_PRONOUN_RE = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her)\b", re.IGNORECASE)


def marker(a: Analysis) -> Decision | None:
    """A pronoun or demonstrative standing alone (it, they, his, that; unless the query named its antecedent before
    it), an ellipsis ("what about X", "and X?"), or a definite phrase whose head an earlier turn named in full
    ("the expedition")."""
    q = a.q
    if has_pronoun(q, "en"):
        if _antecedent_inside(q):
            return Decision(False, "the pronoun refers to an entity named earlier in the query", 0.6,
                            DecisionKind.ANTECEDENT_INSIDE)
        return Decision(True, "pronoun or demonstrative", 0.9, DecisionKind.PRONOUN)
    if en_ellipsis(q):
        return Decision(True, "ellipsis: 'what about X' / 'and X'", 0.9, DecisionKind.ELLIPSIS)
    if a.history and definite_expansion(q, a.history):
        return Decision(True, "definite reference to an earlier turn ('the expedition')", 0.7, DecisionKind.DEFINITE)
    return None


def word_count(q: str) -> int:
    """Word tokens (punctuation left out)."""
    return sum(1 for t in en_tokens(q) if t[0].isalnum())


SHORT_WORDS = 2  # a query of at most this many words leans on the conversation


def descriptive_topic(a: Analysis) -> Decision | None:
    """A descriptive topic ("head and neck cancer") names a subject area; the opening question of the session
    picks its own subject in it ("What is throat cancer?")."""
    if a.topic and not a.history and not a.named_topic:
        return Decision(False, "opens a session on a descriptive topic", 0.6, DecisionKind.TOPIC)
    return None


def subject_left_out(a: Analysis) -> Decision | None:
    """An information question with at most one plain noun that names nothing of the conversation's subject
    (confidence 0.5): "What are popular hiking trails?" after questions on Lisbon; not after a passage when the
    question names a compound noun of its own."""
    q, ms = a.q, a.mentions
    if en_info_question(q) and things_asked(ms) <= 1:
        subject = a.focus.subject
        if subject is not None and not shares_word(q, subject.text) and not own_thing_over_passage(a.history, ms, "en"):
            return Decision(True, "does not name the conversation's focus", 0.5, DecisionKind.SUBJECT)
    return None


_FORMER_LATTER_RE = re.compile(r"\bthe\s+(former|latter)\b", re.IGNORECASE)


def _one_of_two(q: str, history: Sequence[Message]) -> tuple[int, int, str] | None:
    """(start, end, name): "the former" / "the latter" standing for one of the two things the latest user question
    joined; not "the former president" (an adjective before its noun)."""
    m = _FORMER_LATTER_RE.search(q)
    if m is None:
        return None
    nxt = _NEXT_LATIN_RE.match(q[m.end():])
    if nxt is not None and nxt.group(1).lower() not in lx.STOP_EN | lx.EN_AUX | lx.EN_FUNCTION | lx.EN_VERBS:
        return None
    frame = next((x.content for x in reversed(history) if x.role == "user"), "")
    pair = f.coordinated_pair(frame, "en") if frame else []
    if len(pair) != 2:
        return None
    return m.start(), m.end(), pair[0] if m.group(1).lower() == "former" else pair[1]


def former_latter(a: Analysis) -> Decision | None:
    """"The former" / "the latter" after a question that named two things leans on it.

    >>> from convsearch.resolve.gate import needs_rewrite
    >>> from convsearch.types import Message as M
    >>> needs_rewrite([M("user", "Which is bigger, Lyon or Marseille?")], "Does the former have a metro?").kind.value
    'pronoun'
    """
    if a.history and _one_of_two(a.q, a.history) is not None:
        return Decision(True, "the former / the latter of two things the last question named", 0.85,
                        DecisionKind.PRONOUN)
    return None


GATE_STEPS = (c.no_context, c.social, remark, c.partial_name, c.offer, c.ordinal, c.fragment, former_latter, marker,
              c.named,
              c.short(word_count, SHORT_WORDS), c.no_noun, c.relational_only, descriptive_topic, c.topic,
              subject_left_out, c.after_closing(en_info_question), c.standalone)


# --- the rule half of the decision: this language's steps before its rewrite steps (``rewrite.scoring``) -------

_PERSON_PRON_RE = re.compile(r"\b(?:he|she|him|his|her)\b", re.IGNORECASE)
_PLURAL_PRON_RE = re.compile(r"\b(?:they|them|their|these|those)\b", re.IGNORECASE)

def one_of_two(t: Turn) -> s.Resolution | None:
    """"The former" / "the latter" takes the first / the second of the two things the latest question joined.

    >>> from convsearch.resolve.rules import RuleRewriter
    >>> from convsearch.types import Message as M
    >>> RuleRewriter().rewrite([M("user", "Which is bigger, Lyon or Marseille?")], "How old is the latter?").rewritten
    'How old is Marseille?'
    """
    found = _one_of_two(t.query, t.history)
    if found is None:
        return None
    start, end, name = found
    return s.Resolution(t.query[:start] + name + t.query[end:], t.why(f"{t.query[start:end]} → {name}"), "one_of_two")


RULE_STEPS = (s.not_needed, s.ordinal(), one_of_two, s.offer, s.root_focus, s.opening_focus, s.frame_focus,
              s.introduced_focus(_PERSON_PRON_RE, _PLURAL_PRON_RE, person_by_name=True), s.fragment, s.topic_alias,
              s.passage_names)
