"""The follow-up gate: does this query lean on earlier turns? The first half of the decision.

The turn is analysed once (``resolve.analysis.Analysis``, built by the pipeline's plan); its language's ordered
checks (``Language.gate``: ``GATE_STEPS`` in ``lang/zh/steps.py`` and ``lang/en/steps.py``, built of
``resolve.checks`` and the language's own) read it, and the first that decides wins: a Decision with its reason, its
kind and a confidence. The rule rewriter is handed the same analysis and reads what the gate found instead of
analysing the turn again. The checks, in order:

1. no history and no session topic → no rewrite (nothing to lean on); thanks and goodbyes → no rewrite; a
   first-person remark on the answer that asks for nothing ("I'll consider those.", "我会考虑这些的。") → no rewrite;
   a partial name of the topic ("Divac" on a page about "Vlade Divac") → rewrite;
2. a bare yes to the latest answer's offer of information ("Yes please" after "would you like their
   location?", ``rewrite/offer.py``) → rewrite; a positional reference to a listed item ("the third step",
   "第二种", ``rewrite/ordinal.py``) → rewrite;
3. a pronoun or demonstrative standing alone (它/这款/前者…, it/they/his/that…) → rewrite, unless its
   antecedent is named earlier in the same query ("What is Rock City, and why is it famous?", "我妈说她…")
   or it points at nothing ("That's very helpful", "Will it rain?", "这个时候");
4. an English definite noun phrase whose head an earlier turn named in full ("the expedition") → rewrite;
   an ellipsis frame: a short verbless "X呢", a leading 那/那么/还有/另外, "what about X", "and X?" → rewrite;
   a bare Chinese yes/no reply ("会", "不想", "是啊" after "你会游泳吗？"): the predicate it answers is left out
   (``rewrite/reply.py``) → rewrite; so does a fragment answering the other speaker's short wh-question
   ("你在哪里上班？" → "二环": 在二环上班);
5. the query names its own entity (a proper noun) → standalone, typed exactly as is;
5b. Chinese, no topic, the latest answer informs: a question that goes on with the conversation (names no
   thing, or shares a word with it) and does not name the subject the conversation opened on → rewrite with
   that subject (``DecisionKind.OPENING``, ``_opening_left_out``); fresh-f +2 cases, two held-out sets +3;
6. very short (≤ 3 zh words / ≤ 2 en words), without any content noun, or whose only nouns are
   relational (价格, 区别, types, benefits: an aspect of something unnamed) → rewrite;
7. a session topic exists and the query names nothing of it → rewrite (low confidence): the topic is
   what the conversation is about, even a descriptive one ("Finding a university") helps retrieval; the
   opening question of a session on a descriptive topic is standalone;
8. English, no topic: an information question with at most one plain noun that names nothing of the
   conversation's subject → rewrite (confidence 0.5): "What are popular hiking trails?" after questions on
   Lisbon. A real change of subject ("What is machine learning?") is rewritten too — the price of this
   rule (CAsT 2019 gate recall .58 → .84). The rerank still scores hits against the original query, the
   verdict carries a low confidence, and with an LLM configured (rewriter ``auto``) the LLM, not the rules,
   writes these rewrites;
9. Chinese, the same idea held tighter: a question (吗, 什么, 怎么, ？…) with at most one plain noun, while the
   focus is a proper noun the user named and the question does not name it ("有免费额度吗？" after questions
   on AnySearch) → rewrite (confidence 0.5); su2019 F1 +0.3, restoration-200k unchanged.
   Neither 8 nor 9 after a passage (an answer of more than 40 words) when the question names a compound noun
   of its own ("What does the slow blink mean?", "冷冻疗法有效吗？"): it asks about that thing, most often one the
   passage brought up (CAsT 2021: restoration precision 26.2 → 29.6%, exact match and BLEU above copy);
10. otherwise standalone.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import Decision, Message
from .analysis import Analysis, analyse
from .language import FALLBACK, language
from .shapes import asked_form, is_social, split_opener, with_courtesy

__all__ = ["asked_form", "decide", "is_social", "needs_rewrite", "split_opener", "with_courtesy"]


def needs_rewrite(history: Sequence[Message], query: str, *, topic: str | None = None,
                  lang: str | None = None) -> Decision:
    """Decide whether ``query`` needs a rewrite given the (windowed) ``history``: the turn analysed
    (``analysis.analyse``) and its gate run (``decide``). A caller that goes on to rewrite builds the analysis itself
    and hands it to both, so that the rewriter reads what the gate found instead of finding it again.

    >>> needs_rewrite([Message("user", "AnySearch 支持哪些检索方式？")], "价格呢？").needed
    True
    """
    return decide(analyse(history, query, topic, lang=lang))


def decide(a: Analysis) -> Decision:
    """The first Decision of the language's ordered checks (``Language.gate``; a language without checks of its
    own is read with the fallback language's)."""
    for check in a.language.gate or language(FALLBACK).gate:
        d = check(a)
        if d is not None:
            return d
    raise AssertionError(f"the gate's checks for {a.lang!r} decide nothing")  # every list ends on standalone
