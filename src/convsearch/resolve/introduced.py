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
from functools import lru_cache

from .. import lexicon as lx
from ..lang import reading
from ..lang.base import IntroducedForms, Mention
from ..lang.en.focus import en_topic_setting
from ..lang.en.markers import INTRODUCED as EN_INTRODUCED
from ..lang.en.mentions import en_adverb, en_tokens, is_cap, plain_noun
from ..lang.zh.markers import INTRODUCED as ZH_INTRODUCED
from ..lang.zh.markers import zh_classifier_reference, zh_kind_nouns, zh_kind_phrase
from ..text import tagged
from ..types import Message
from .entities import mentions
from .focus import meaning_question
from .frame import coordinated_pair

_PERSON_WORDS = (2, 3)


def introduced_entity(history: Sequence[Message], lang: str, *, person: bool = False) -> Mention | None:
    """The one name the latest answer's first sentence introduced (not in the question it answers), when that
    question asked for an entity; None when the answer names several (a list: "它们" are the list, not its first
    item). With ``person``, a name of two or three words with no article before it."""
    if len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return None
    forms = reading(lang).introduced
    if forms is None:
        return None  # a language that does not say how its answers bring in a name has none brought in
    question, answer = history[-2].content, history[-1].content
    first = first_sentence(answer)
    if (chosen := _chosen_of_pair(question, first, lang, forms)) is not None:
        return chosen  # "Is Notion or Obsidian better …?" → "Obsidian, since …": the pick
    if not forms.asks.search(question) or meaning_question(
            question, history[-3] if len(history) > 2 else None):
        return None  # an answer saying what a word means introduces no new subject ("CLTC 是中国…工况")
    low_q = question.lower()
    if forms.quoted is not None and not person:
        quoted = [m.group(1).strip() for m in forms.quoted.finditer(first) if m.group(1).strip() not in question]
        if len(quoted) == 1:
            return Mention(quoted[0], True, "nz", quoted[0])
    # a name the question gave, or one sharing a word with a name it gave ("Toyota" after "Toyota Corolla"); a
    # common word of the question inside a name ("hybrid" in "Toyota RAV4 Hybrid") does not make it old
    q_names = {w for x in mentions(question, lang) if x.proper for w in x.text.lower().split()}
    new: list[Mention] = []
    for m in mentions(first, lang):
        if not m.proper or m.text.lower() in low_q or any(w in q_names for w in m.text.lower().split()):
            continue
        if forms.known is not None and forms.known(m, question):
            continue  # "位于中国" after a question about 中国: not new
        if person and (m.det or not person_shaped(m)):
            continue
        if not any(m.text in n.text or n.text in m.text for n in new):
            new.append(m)
    if len(new) > 1 and not person:
        # "是中信大厦，也叫中国尊。", "Try Timeshift, which takes … from a live USB.": the answer's first clause names
        # what it introduces, the rest describes it
        clause = _COMMA_RE.split(first, maxsplit=1)[0]
        in_clause = [m for m in new if m.text in clause]
        if len(in_clause) == 1:
            return in_clause[0]
        if forms.opens_on is not None and forms.opens_on(first, new[0].text):
            return new[0]  # "The University of al-Qarawiyyin in Fez, Morocco, …": the subject it opens on
    return new[0] if len(new) == 1 else None


def kind_referent(text: str, history: Sequence[Message]) -> tuple[Mention, tuple[int, int]] | None:
    """What "这种鱼" / "这款手机" names by its kind, with the phrase's span: the newest mention in the history that
    ends in the kind noun and is more than it ("孔雀鱼"), else the one name the latest answer introduced after a
    question asking for one ("推荐一款手机" → "荣耀 Magic6 …" → "这款手机").

    >>> h = [Message("user", "小缸养什么鱼"), Message("assistant", "可以养孔雀鱼。")]
    >>> kind_referent("这种鱼能跟斗鱼混养吗", h)[0].text
    '孔雀鱼'
    """
    kinds = zh_kind_nouns(text)
    if not kinds:
        return None
    for m in reversed(history):
        for x in mentions(m.content, "zh"):
            span = zh_classifier_reference(text, x.text)
            if span is not None and not x.relational and len(x.text) > span[1] - span[0] - 2:
                return x, span  # (the determiner is two characters: 这种, 那款)
    kind = zh_kind_phrase(text)
    if kind is None or len(history) < 2 or kind[2] not in history[-2].content:
        return None  # the kind must be what the question asked for ("推荐一款手机"): not "这种情况", "这种颜色"
    intro = introduced_entity(history, "zh")
    return (intro, kind[:2]) if intro is not None else None


def _chosen_of_pair(question: str, first: str, lang: str, forms: IntroducedForms) -> Mention | None:
    """The one of two things a question joined that the answer's first clause picks ("Honda Civic 和 Toyota
    Corolla 哪个更省油？" → "Corolla Hybrid 更省。" → Toyota Corolla), by a word of its name (a whole word in
    English: "Go" is not in "good"); a clause that negates ("Neither …", "都不") picks nothing."""
    pair = coordinated_pair(question, lang)
    if not pair:
        return None
    clause = _COMMA_RE.split(first, maxsplit=1)[0].lower()
    if _NEGATED_RE.search(clause):
        return None
    hits = [p for p in pair if forms.picks(p, clause)]
    return Mention(hits[0], True, "proper", hits[0].split()[-1].lower()) if len(hits) == 1 else None


_COMMA_RE = re.compile(r"[，,]")
_CLAUSE_END_RE = re.compile(r"[,;(–—]")
_LOWER_WORD_RE = re.compile(r"[a-z0-9][\w'’-]*")
_NEGATED_RE = re.compile(r"\b(?:neither|nor|not|no|never)\b|都不|都没|不如|没有", re.IGNORECASE)


def introduced_work(history: Sequence[Message]) -> str | None:
    """The one work the latest answer named in 《》 after a request for one, with its author when the answer gave
    one as "X 的《…》" ("推荐一本书" → "推荐余华的《活着》。" → "余华《活着》"): what "这本书" then stands for.

    >>> introduced_work([Message("user", "推荐一本讲历史的书。"),
    ...                  Message("assistant", "推荐黄仁宇的《万历十五年》，好读。")])
    '黄仁宇《万历十五年》'
    """
    if len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return None
    question, answer = history[-2].content, history[-1].content
    if not ZH_INTRODUCED.asks.search(question):
        return None
    text = answer.strip()
    titles = list(_ZH_WORK_RE.finditer(text))
    end = next((m.start() for m in _SENTENCE_END_RE.finditer(text)
                if not any(t.start() < m.start() < t.end() for t in titles)), len(text))  # "《Python 编程：…》"
    first = text[:end]
    works = [m for m in _ZH_WORK_RE.finditer(first) if m.group(0) not in question]
    if len(works) != 1:
        return None
    title = f"《{works[0].group(1).strip()}》"
    before = first[:works[0].start()]
    if before.endswith("的"):
        toks = tagged(before[:-1])
        if toks and toks[-1][1].startswith("nr") and (len(toks) == 1 or toks[-2][1].startswith(("v", "p", "x"))):
            # a whole name after a verb ("推荐余华的"); a transliterated one the tagger splits
            # ("埃里克·马瑟斯") is left out
            return toks[-1][0] + title
    return title


_ZH_WORK_RE = re.compile(r"《([^》]{1,30})》")


def person_shaped(m: Mention) -> bool:
    """A name shaped like a person's: two or three capitalised words of letters ("Nikola Jokić", "LeBron James",
    "Mary Anne Evans", with a small particle inside: "Virgil van Dijk"), no acronym or number ("Finals MVP",
    "RTX 4090" are no one's name).

    >>> [person_shaped(Mention(t, True, "proper", t.split()[-1])) for t in ("Nikola Jokić", "NBA Finals")]
    [True, False]
    """
    words = m.text.split()
    inner = words[1:-1]
    names = [words[0], *(w for w in inner if not _PARTICLE_RE.fullmatch(w)), words[-1]] if len(words) > 1 else words
    return len(names) in _PERSON_WORDS and all(_PERSON_WORD_RE.fullmatch(w) for w in names)


_PERSON_WORD_RE = re.compile(r"[^\W\d_a-z](?=[^\W\d_]*[^\W\d_A-Z])[^\W\d_]+(?:[-'][^\W\d_][^\W\d_A-Z]*)?")
_PARTICLE_RE = re.compile(r"[a-z]{1,3}")  # van, de, von, da, bin: lower-case inside a name
_SENTENCE_END_RE = re.compile(r"[.;!?。；！？:：]\s*")


def first_sentence(text: str) -> str:
    """An answer's first sentence (up to . ; ! ? : in either script): where it brings in what it is about.

    >>> first_sentence("Try Timeshift: it takes snapshots. Or Back In Time.")
    'Try Timeshift'
    """
    return _SENTENCE_END_RE.split(text.strip(), maxsplit=1)[0]


def answer_opening(history: Sequence[Message], *, plural: bool = False) -> Mention | None:
    """What the latest English answer's first sentence brought in as its subject, when the question it answers did
    not name it: the thing an identification names ("That's almost certainly a European robin."; for ``plural``,
    the "they" of a kind, in the plural: European robins), or a name opening the sentence before its verb ("The
    Statue of Liberty–Ellis Island Foundation has a free database …"): what a following it / they stands for. A
    name of one capitalised word opening a sentence may be any word ("Cattle were …", "Research shows …") and a
    person's name is no it / they: both are left out.

    >>> answer_opening([Message("user", "small brown bird with an orange chest in my garden"),
    ...                 Message("assistant", "That's almost certainly a European robin.")], plural=True).text
    'European robins'
    >>> answer_opening([Message("user", "where can I find old passenger lists?"),
    ...                 Message("assistant", "The Ellis Island Foundation has a free passenger database.")]).text
    'Ellis Island Foundation'
    """
    if len(history) < 2 or history[-1].role != "assistant" or history[-2].role != "user":
        return None
    return _answer_opening(history[-2].content, history[-1].content, history[-3] if len(history) > 2 else None,
                           plural)


@lru_cache(maxsize=1024)
def _answer_opening(question: str, answer: str, before: Message | None, plural: bool) -> Mention | None:
    """``answer_opening`` on the latest exchange (remembered: every pronoun turn after an answer asks again)."""
    if meaning_question(question, before, "en"):
        return None  # "What does EPA-rated mean?" → "It's the figure from …": a word explained, no new subject
    first = first_sentence(answer)
    return (plural and _people_named(first, question)) or _identified_kind(first, question, plural) \
        or _recommended_name(first, question) or _described_name(first, question) or _opening_name(first, question)


_WHO_ASKED_RE = re.compile(r"^\W*(?:(?:so|and|ok|okay)\W+)?who\b", re.IGNORECASE)


def _people_named(first: str, question: str) -> Mention | None:
    """The people a who-question's answer names together ("Who designed the Forth Bridge?" → "… by Sir John Fowler
    and Sir Benjamin Baker …"): what a following "they" stands for."""
    if not _WHO_ASKED_RE.match(question):
        return None
    for m in mentions(first, "en"):
        parts = m.text.split(" and ")
        if len(parts) == 2 and m.text.lower() not in question.lower() and all(
                person_shaped(Mention(p, True, "proper", p.split()[-1].lower())) for p in parts):
            return Mention(m.text, True, "proper", m.head)
    return None


_DESCRIBED_RE = re.compile(r"^\W*(?:[Tt]he|[Aa]n?|[Yy]our|[Oo]ne)\s+(?:[a-z][\w'’+-]*\s+){1,5}(?:is|would\s+be)\s+")


def _described_name(first: str, question: str) -> Mention | None:
    """The name a description is said to be ("The best option is Paramount+, which …", "A good place to start is
    freeCodeCamp"): the name right after the verb, unless the question gave it."""
    m = _DESCRIBED_RE.match(first)
    if m is None:
        return None
    rest = _CLAUSE_END_RE.split(first[m.end():], maxsplit=1)[0]
    name = next(iter(mentions(rest, "en")), None)
    if name is None or not name.proper or not rest.lower().startswith((name.det + name.text).lower()) \
            or name.text.lower() in question.lower() or (not name.det and person_shaped(name)):
        return None
    return name


_RECOMMEND_RE = re.compile(r"^\W*(?:(?:yes|yeah|sure|ok|okay)\W+)?"
                           r"(?:(?:you\s+(?:can|could|might|should)|i['’]d|i\s+would)\s+)?(?:try|use|recommend|suggest|check\s+out|look\s+(?:at|into)|consider|go\s+with)\b",
                           re.IGNORECASE)


def _recommended_name(first: str, question: str) -> Mention | None:
    """The name a recommending answer opens with ("You can use the free app iMazing HEIC Converter.", "Try
    Hardcore History by Dan Carlin"): the first name of its first clause, unless the question gave it whole."""
    m = _RECOMMEND_RE.match(first)
    if m is None:
        return None
    clause = _CLAUSE_END_RE.split(first[m.end():], maxsplit=1)[0]
    name = next((x for x in mentions(clause, "en") if x.proper), None)
    if name is None or name.text.lower() in question.lower() or person_shaped(name) and not name.det:
        return None
    return name


_IDENTIFIED_RE = re.compile(
    r"^\W*(?:(?:yes|yeah|so)\W+)?(?:(?:that|this|it)(?:['’]s|\s+is|\s+looks\s+like|\s+sounds\s+like|\s+(?:would|could|may|might|must)\s+be)"
    r"(?:\s+called)?|(?:sounds|looks)\s+like|you['’]re\s+thinking\s+of|you\s+mean)\s+"
    r"(?:(?:almost\s+certainly|most\s+likely|very\s+likely|probably|likely|definitely|certainly|clearly)\s+)?"
    r"(?:(a|an|the)\s+)?", re.IGNORECASE)
_THIS_RE = re.compile(r"\b(?:this|that|these|those)\b", re.IGNORECASE)  # "what's this bird": asks what it is
_IT_OPENS_RE = re.compile(r"^\W*(?:(?:yes|yeah|so|no)\W+)?it\b", re.IGNORECASE)
_WORD_RE = re.compile(r"\s*([A-Za-z][\w'’-]*)")
_KIND_MAX_WORDS = 4
# small words inside a title: "the Treaty of Versailles", "Ticket to Ride"
_TITLE_INNER = frozenset({"of", "the", "and", "to", "in", "on", "for", "a"})


def _identified_kind(first: str, question: str, plural: bool) -> Mention | None:
    """The kind an identification names: the content words after it, up to a clause mark or a function word ("a
    yellow garden spider, …", "Bohemian Rhapsody by Queen"); not "a sign of …", "a great question" or what the
    question said ("Yes, that's a spider" after "is this a spider?")."""
    m = _IDENTIFIED_RE.match(first)
    if m is None or (en_topic_setting(question) and not _THIS_RE.search(question)):
        return None  # "What is a virtual machine?" → "It is software that …": the answer defines what was named
    if _IT_OPENS_RE.match(first) and (any(x.proper for x in mentions(question, "en"))
                                      or (m.group(1) is None and not first[m.end():m.end() + 1].isupper())):
        return None  # "It's free, though …" / "It's a four-day hike" after a question on the British Museum / the
        # Inca Trail: what is said of the question's thing, no new one
    words_: list[str] = []
    k = m.end()
    while (w := _WORD_RE.match(first, k)) is not None and len(words_) <= _KIND_MAX_WORDS:
        low = w.group(1).lower()
        nxt = _WORD_RE.match(first, w.end())
        if low in lx.STOP_EN and not (words_ and words_[-1][:1].isupper() and low in _TITLE_INNER
                                      and nxt is not None and nxt.group(1)[:1].isupper()):
            if low == "of":
                return None  # "a sign of …", "a type of …": what it is comes after
            break  # ("Bohemian Rhapsody by Queen"; "the Treaty of Versailles" goes on)
        words_.append(w.group(1))
        k = w.end()
    if not words_ or len(words_) > _KIND_MAX_WORDS or words_[-1].lower() in lx.RELATIONAL_EN or any(
            w.lower() in lx.EN_EVALUATIVE or en_adverb(w) or (w.lower().endswith("ed") and not m.group(1))
            or w.lower() in lx.EN_VERBS or w.lower() in lx.EN_PARTICIPLES for w in words_):
        return None  # "it is predicted that …": no kind ("a brown marmorated stink bug" is one)
    text = " ".join(words_)
    if text.lower() in question.lower():
        return None
    if plural and not (m.group(1) or "").lower() == "the" and not words_[-1][:1].isupper():
        return Mention(" ".join([*words_[:-1], plural_of(words_[-1])]), False, "noun", words_[-1].lower())
    det = f"{m.group(1).lower()} " if m.group(1) else ""
    return Mention(text, words_[-1][:1].isupper(), "proper" if words_[-1][:1].isupper() else "noun",
                   words_[-1].lower(), det)



def plural_of(word: str) -> str:
    """robin → robins, berry → berries, finch → finches, goose → geese; a word already plural, or the same in both
    (deer, sheep), stays."""
    low = word.lower()
    if low in _SAME_PLURAL:
        return word
    if low in lx.EN_IRREGULAR_PLURALS:
        return word[:1] + lx.EN_IRREGULAR_PLURALS[low][1:]
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return word + ("es" if not low.endswith("s") else "")
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


_SAME_PLURAL = frozenset({"deer", "sheep", "fish", "moose", "salmon", "trout", "bison", "series", "species",
                          "aircraft"})


def _opening_name(first: str, question: str) -> Mention | None:
    """A name the question did not give that opens ``first`` before its verb, with "the" before it kept and a
    common noun after it ("Most Canadian Tire stores have …"): two or more capitalised words, one with a capital
    inside ("KLM"), or one after "Yes," ("Yes, Zotero does that"), "the" or "most" (not a sentence's first word);
    no person's name. A name saying more than the question's is new ("Heathrow Express" after "Heathrow")."""
    if any(x.proper for x in mentions(question, "en")) and not (
            EN_INTRODUCED.asks.search(question) or _ASKS_WHERE_TO_RE.search(question)):
        return None  # "Does the Kindle Paperwhite support audiobooks?" → "Yes, Amazon has …", "What is Ozempic used
        # for?" → "The FDA has approved it …": still the Kindle, still Ozempic ("where can I look up … New York"
        # asks for a place to look: the answer's Foundation is new)
    toks = en_tokens(first)
    i = 2 if len(toks) > 2 and toks[0].lower() in _ANSWER_LEADS and toks[1] == "," else 0
    led = i > 0
    if i < len(toks) and toks[i].lower() in _SUBJECT_QUANTIFIERS:
        i, led = i + 1, True
    the = i < len(toks) and toks[i].lower() == "the"
    i += the
    j = i
    while j < len(toks) and (is_cap(toks[j]) or (j > i and toks[j] in _NAME_INNER)):
        j += 1
    while j > i and not is_cap(toks[j - 1]):
        j -= 1
    span = toks[i:j]
    k = j
    while k < len(toks) and k - j < 2 and _lower_noun(toks[k]) and not _finite_verb(toks[k]):
        k += 1  # "Canadian Tire stores"
    if not span or k >= len(toks) or not _finite_verb(toks[k]) or (k > j and toks[k].lower() in ("is", "are")):
        return None  # "The IT-approved VPN client is GlobalProtect": a description, the name comes after
    words_ = [w for w in span if w[:1].isalnum()]
    if len(words_) < 2 and not (led or the or any(c.isupper() for c in span[0][1:])):
        return None
    if span[0].lower() in lx.STOP_EN or span[0].lower() in lx.EN_OPENERS or en_adverb(span[0]):
        return None  # "Unfortunately Teavana is …", "This Sunday …"
    q_words = set(_LOWER_WORD_RE.findall(question.lower()))
    text = " ".join([_joined(span), *toks[j:k]])
    name = Mention(text, j == k, "proper" if j == k else "noun", toks[k - 1].lower(), "the " if the else "")
    if all(w.lower() in q_words for w in words_ if w.lower() not in lx.STOP_EN) or (not the and person_shaped(name)):
        return None  # ("the" before a name says it is no person's: "The Ellis Island Foundation")
    return name


_ASKS_WHERE_TO_RE = re.compile(r"^\W*(?:where|how)\s+(?:can|could|do|should)\s+(?:i|we|you)\b|"
                               r"\bis\s+there\s+(?:a|an|any)\b", re.IGNORECASE)
_ANSWER_LEADS = frozenset({"yes", "yeah", "yep", "sure", "no", "nope"})
_SUBJECT_QUANTIFIERS = frozenset({"most", "many", "all", "some"})


def _lower_noun(tok: str) -> bool:
    """A lower-case word that can end a noun phrase: no function word, verb or adverb."""
    return tok.isalpha() and tok.islower() and plain_noun(tok) and not en_adverb(tok)


_NAME_INNER = frozenset({"of", "the", "and", "&", "for", "de", "–", "-"})
# present-tense verbs that describe what a thing is or does: an answer bringing in a resource or a product ("The
# Foundation has …"; not a source reporting: "The GoodRx site lists it …");
# a past-tense narrative ("The Detroit Free Press produced …") tells of what the user asked about
_FINITE_VERB_RE = re.compile(r"(?:is|are|has|have|offers|provides|runs|keeps|lets|makes|sells|serves|covers|holds|"
                             r"includes|maintains|publishes|hosts|operates|gives|tracks|supports|works|"
                             r"does|can|will|accepts|takes|charges)")


def _finite_verb(tok: str) -> bool:
    """A verb that describes its subject: "has", "offers", "is"."""
    return bool(_FINITE_VERB_RE.fullmatch(tok))


def _joined(span: Sequence[str]) -> str:
    """Tokens as written: a dash joins its neighbours without spaces ("Liberty–Ellis")."""
    out = ""
    for k, t in enumerate(span):
        glue = "" if k == 0 or t in ("–", "-") or span[k - 1] in ("–", "-") else " "
        out += glue + t
    return out
