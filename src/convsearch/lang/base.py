"""The language-pack contract (``LanguagePack``) and what every pack shares: the ``Mention`` its mention finder
returns, ``Pack`` (a pack made of data and callables handed in), and joining words across scripts.

A pack is the bottom of the follow-up resolver: it imports nothing of the rule layer. What it gives:

- ``code`` (ISO 639-1, the key every registry of steps and texts uses) and ``name``;
- ``claims(text)``: how surely a text is in this language (0..1); ``lang.detect`` picks the highest claim;
- ``words(text)``: the text's word tokens (lower-cased), and ``stopwords``;
- ``mentions(text)``: the noun phrases a text names, as ``Mention``s (names first-class: "Galaxy S23 Ultra");
- ``has_pronoun(text)``: does the text use a pronoun or demonstrative standing for something named before?
- ``agent``: what the search agent says to the model and shows the user in this language (``AgentTexts``);
- ``stated``: how a user states their machine, budget or child in this language (``StatedForms``);
- ``llm``: the LLM rewrite, variants, HyDE and summary prompts in this language (``LLMTexts``);
- ``unspaced``: written without spaces between words (lengths then count characters);
- ``courtesy``: the openers and closers around a request that ask for nothing (``Courtesy``);
- ``ordinal``: how a reference picks a listed item by position, and how an answer lists things (``OrdinalForms``);
- ``introduced``: how an answer brings in the entity a question asked for (``IntroducedForms``);
- ``focus``: what moves a conversation's focus in this language (``FocusForms``);
- ``frame``: how a fragment fills the frame of the previous question (``FrameForms``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .. import lexicon as lx
from ..text import is_cjk


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    proper: bool
    cls: str  # zh: POS class of the proper head (ns, nr, nt, nz, eng) or "n"; en: "proper" or "noun"
    head: str  # last word, used to match same-kind common nouns (年假/病假, throat cancer/lung cancer)
    det: str = ""  # "the " when the text said "the Stanford Experiment": kept when the mention is put back

    @property
    def phrase(self) -> str:
        """The mention as it should be written into a query."""
        return self.det + self.text

    @property
    def relational(self) -> bool:
        """A common noun that names an aspect of something else (price, types, 价格, 区别)."""
        if self.proper:
            return False
        if self.text.isascii():  # "price", "phone number": every word relational
            return all(w in lx.RELATIONAL_EN for w in self.text.lower().split())
        return self.text.lower() == self.head and self.head in lx.RELATIONAL_ZH


def join_tokens(tokens: Sequence[str]) -> str:
    """Join words, with a space only between two Latin words."""
    out = ""
    for t in tokens:
        if out and not is_cjk(out[-1]) and not is_cjk(t[0]) and out[-1].isalnum() and t[0].isalnum():
            out += " "
        out += t
    return out


@dataclass(frozen=True, slots=True)
class AgentTexts:
    """What the search agent says to the model and shows the user, in one language (``str.format`` templates; the
    names in braces are filled by ``agent.prompts``)."""

    system: str  # {today} {max_searches} {max_chars} {max_words}
    no_tool: str
    searched: str  # {searched}
    your_query: str  # {query}
    no_results: str
    none: str
    repeat_refusal: str  # {query} {refs}
    budget_refusal: str  # {used}
    deadline_refusal: str
    final_instruction: str  # {reason}
    research_head: str
    cited_head: str
    memory_summary: str  # {summary}
    memory_cited: str
    repair: str  # {problems} {nums}
    degraded: str
    no_results_note: str
    no_llm: str
    no_llm_nothing: str
    stop_deadline: str
    stop_budget: str
    stop_steps: str
    cites_unknown: str  # {nums}
    cites_nothing: str
    uncited: str  # {sentence}
    problems_sep: str


@dataclass(frozen=True, slots=True)
class LLMTexts:
    """What the LLM stages say in one language (``rewrite.llm``; ``{name}`` placeholders, ``{{`` for a brace)."""

    rewrite: str  # the rewrite's system prompt: {topic_clause} {topic_line} {max_zh_chars} {max_en_words}
    topic_clause: str
    topic_line: str  # {topic}
    reask: str  # {why} {cap}
    variants: str  # {n} {max_zh_chars} {max_en_words}
    hyde: str  # {max_chars}
    summary: str  # {max_chars}
    summary_ask: str
    summary_line: str  # {summary}: the stored summary, in the rewrite's system prompt
    previous_summary: str  # {summary}: the summary so far, for the summariser to update


@dataclass(frozen=True, slots=True)
class Courtesy:
    """The words around a request that ask for nothing, in one language (``rewrite.shapes``): ``opener`` (courtesy
    or discourse openers, one or several), ``closer`` (group 1 the closer, group 2 the marks after it),
    ``closer_after`` (words the request needs before a closer), ``closer_asks`` (a closer comes off a question
    only: a reply's 啊 stays), ``lower_after_opener`` (a wh-word or auxiliary after an opener goes lower case:
    "hey, how do I …"), ``asked`` (the language's own reading of the rest: "whats" → "what's")."""

    opener: re.Pattern[str]
    closer: re.Pattern[str]
    closer_after: int = 1
    closer_asks: Callable[[str], bool] | None = None
    lower_after_opener: bool = False
    asked: Callable[[str], str] | None = None


@dataclass(frozen=True, slots=True)
class StatedForms:
    """How a user states something about themselves in one language, and what each goes with (``rewrite.stated``):
    ``may_state`` a cheap test first (most turns state nothing); ``own`` ends right before a platform the user
    owns ("我用的是", "I'm on a"); ``budget`` (group 1: the amount), ``age`` and ``allergy`` (``age_text`` /
    ``allergy_text`` turn a match into the words carried); ``howto`` / ``buy`` / ``for_person``: the requests a
    platform, a budget and a person's age or allergy go with."""

    may_state: re.Pattern[str]
    own: re.Pattern[str]
    budget: re.Pattern[str]
    age: re.Pattern[str]
    age_text: Callable[[re.Match[str]], str]
    allergy: re.Pattern[str]
    allergy_text: Callable[[re.Match[str]], str]
    howto: re.Pattern[str]
    buy: re.Pattern[str]
    for_person: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class OrdinalRef:
    """A reference to a listed item by its position ("the third step", "第二种"), found by a pack's ``OrdinalForms``."""

    start: int
    end: int
    positions: tuple[int, ...]  # 1-based; negative counts from the end (-1 = last)
    noun: str  # the head noun the reference used ("step", "one"), "" when none
    strict: bool = False  # the noun is no list noun ("weeks"): only a list of that kind can answer
    pair: bool = False  # 前者 / 后者: one of exactly two items


# the lists of one sentence, each with its kind: "names", "nouns" or the kind noun the sentence gave ("technologies")
Series = list[tuple[tuple[str, ...], str]]


@dataclass(frozen=True, slots=True)
class OrdinalForms:
    """How a reference picks a listed item by position in one language, and how its answers list things
    (``rewrite.ordinal``): ``find`` the first positional reference of a query ("the last two options", "第二种");
    ``kind`` a position with a noun that is no list noun ("the first trail": only a list of that kind answers it;
    None: the language has none); ``series`` the inline lists of one sentence ("A, B and C", "甲、乙和丙");
    ``title_words`` the words of a numbered item's title (a long one is cut to its first clause); ``and_word`` joins
    the items picked ("the first and second" → "A and B")."""

    find: Callable[[str], OrdinalRef | None]
    series: Callable[[str], Series]
    title_words: Callable[[str], int]
    and_word: str
    kind: Callable[[str], OrdinalRef | None] | None = None


@dataclass(frozen=True, slots=True)
class IntroducedForms:
    """How an answer in one language brings in the entity its question asked for (``rewrite.introduced``): ``asks``
    a question asking for one ("Which airline …", "推荐"); ``picks(name, clause)`` does the answer's first clause
    (lower case) pick ``name``, one of two the question joined, by a word of it; ``quoted`` a name set in quotes
    ("「费控通」": the one quoted name the question did not give is the one brought in; None: quotes say nothing);
    ``known(mention, question)`` a name the question gave in other words ("位于中国" after a question on 中国; None:
    only its words count); ``opens_on(sentence, name)`` does the sentence open on the name (the subject, when the
    answer names several; None: no such reading)."""

    asks: re.Pattern[str]
    picks: Callable[[str, str], bool]
    quoted: re.Pattern[str] | None = None
    known: Callable[[Mention, str], bool] | None = None
    opens_on: Callable[[str, str], bool] | None = None


@dataclass(frozen=True, slots=True)
class FocusForms:
    """What moves a conversation's focus in one language (``rewrite.focus``); each left None is a reading the
    language does without. ``answer_words`` an answer's size in words (None: split at spaces); ``informs_at`` the
    characters at which an answer informs rather than chats (its own noun then is no reply's noun to fill in);
    ``request_part`` a user turn without what is only feedback on the answer ("Thanks for that. Are there …");
    ``request`` a request stated rather than asked ("想买…") and ``owned`` a thing of the user's own ("我家猫…"):
    the user's noun is then what the conversation is about; ``points_back(text, phrase)`` a phrase the turn names
    as already known ("the system"), passed over when something came before; ``head_rank(text, mention)`` the
    order a turn's mentions are picked in (lower first: the noun after 的); ``sets_topic`` a turn that opens a
    (sub)topic ("Tell me about X"; None: every turn naming something does); ``meaning`` a question about what a
    word of the answer means ("CLTC 是什么意思？"); ``ellipsis_keeps`` an ellipsis that goes on about the focus (a
    呢-ellipsis; English "what about X" names a new subject of its own)."""

    answer_words: Callable[[str], int] | None = None
    informs_at: int | None = None
    request_part: Callable[[str], str] | None = None
    request: re.Pattern[str] | None = None
    owned: re.Pattern[str] | None = None
    points_back: Callable[[str, str], bool] | None = None
    head_rank: Callable[[str, Mention], int] | None = None
    sets_topic: Callable[[str], bool] | None = None
    meaning: re.Pattern[str] | None = None
    ellipsis_keeps: Callable[[str], bool] | None = None  # an ellipsis that keeps the focus ("价格呢？")


@dataclass(frozen=True, slots=True)
class FrameForms:
    """How a fragment fills the frame of the previous question in one language (``rewrite.frame``): ``model_names``
    the names of a frame holding a number ("RTX 4090"); ``pair_join`` the words between two things a question
    joins ("A or B", "A和B"), ``alternatives`` two it joins that are no mentions (None: none); ``which`` a question
    asking which of two ("Which is cheaper …", "哪个更…") and ``which_of(query, names)`` it completed with the
    names; ``possessive`` what an attribute fragment opens with ("its", "它的"); ``attribute_frame`` a frame whose
    shape says which words are its attribute ("What's the X of Y": group 2; None: the lexicon alone says);
    ``opening_noun`` a frame naming no proper name is about the noun it opens with.

    A typed fragment takes the place of the frame's span of its type; each of these left None is a reading the
    language does without: ``article`` a leading article the fragment's bare form drops ("the UK"); with a
    preposition in the fragment, ``after_prep(prep, before)`` does the text before a span end with it (the span it
    anchors) and ``prep_slot(prep, frame)`` the phrase after the same preposition in the frame (group 1; "And by
    TensorFlow 2.15?"); ``place(x, bare, frame, start, kind)`` where the fragment goes and in what words (None: at
    the span, bare); ``slot_inside`` one typed span inside an untyped phrase swaps ("预算五千左右")."""

    model_names: Callable[[str], list[str]]
    pair_join: re.Pattern[str]
    which: re.Pattern[str]
    which_of: Callable[[str, list[str]], tuple[str, str] | None]
    possessive: re.Pattern[str]
    alternatives: Callable[[str], list[str]] | None = None
    attribute_frame: re.Pattern[str] | None = None
    opening_noun: bool = False
    article: re.Pattern[str] | None = None
    after_prep: Callable[[str, str], bool] | None = None
    prep_slot: Callable[[str, str], re.Match[str] | None] | None = None
    place: Callable[[str, str, str, int, str], tuple[int, str]] | None = None
    slot_inside: bool = False


@runtime_checkable
class LanguagePack(Protocol):
    """What the resolver asks of a language (see the module docstring)."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def stopwords(self) -> frozenset[str]: ...

    def claims(self, text: str) -> float: ...

    def words(self, text: str) -> list[str]: ...

    def mentions(self, text: str) -> tuple[Mention, ...]: ...

    def has_pronoun(self, text: str) -> bool: ...

    @property
    def agent(self) -> AgentTexts | None: ...

    @property
    def stated(self) -> StatedForms | None: ...

    @property
    def llm(self) -> LLMTexts | None: ...

    @property
    def unspaced(self) -> bool: ...

    @property
    def mark_asks(self) -> bool: ...

    @property
    def term_lexicon(self) -> str | None: ...

    @property
    def courtesy(self) -> Courtesy | None: ...

    @property
    def ordinal(self) -> OrdinalForms | None: ...

    @property
    def introduced(self) -> IntroducedForms | None: ...

    @property
    def focus(self) -> FocusForms | None: ...

    @property
    def frame(self) -> FrameForms | None: ...


@dataclass(frozen=True, slots=True)
class Pack:
    """A ``LanguagePack`` made of data and callables handed in (the shipped packs are two of these).

    >>> toy = Pack("xx", "Toy", claims=lambda t: 1.0 if t.startswith("xx:") else 0.0, words=str.split,
    ...            mentions=lambda t: (), has_pronoun=lambda t: "it" in t.split(), stopwords=frozenset({"the"}))
    >>> isinstance(toy, LanguagePack), toy.claims("xx: hi"), toy.has_pronoun("is it open")
    (True, 1.0, True)
    """

    code: str
    name: str
    claims: Callable[[str], float]
    words: Callable[[str], list[str]]
    mentions: Callable[[str], tuple[Mention, ...]]
    has_pronoun: Callable[[str], bool]
    stopwords: frozenset[str] = frozenset()
    agent: AgentTexts | None = None  # None: the agent speaks English (the fallback's texts)
    stated: StatedForms | None = None  # None: nothing the user states about themselves is carried
    llm: LLMTexts | None = None  # None: the LLM stages speak English (the fallback's texts)
    # written without spaces between words (Chinese): lengths count characters (a Latin name as one), the
    # length cap is the characters cap, and words join without a space
    unspaced: bool = False
    # a question mark after thanks makes a request ("Thanks! What else is there?"); not in Chinese
    mark_asks: bool = True
    # a lexicon of this language's technical terms with their English (tab-separated, in convsearch's package
    # data): the mixed-language query variant (``variants.mixed_variant``); None: no such variant
    term_lexicon: str | None = None
    courtesy: Courtesy | None = None  # None: no opener or closer is set aside
    ordinal: OrdinalForms | None = None  # None: no item of a list is picked by its position
    introduced: IntroducedForms | None = None  # None: no answer brings in what a pronoun then stands for
    focus: FocusForms | None = None  # None: the focus moves on what every language shares (FocusForms())
    frame: FrameForms | None = None  # None: no fragment swaps a model, joins a pair or asks which of two
