"""What a trained resolver learns to predict: does a turn need a rewrite, and which history candidates does its
standalone form need (QuReTeC-style term labels: Voskarides et al., SIGIR 2020, "Query Resolution for
Conversational Search with Limited Supervision", read off the human rewrite, no annotation of our own).

The gate label is the one ``eval.metrics.gate_scores`` scores against: the human rewrite differs from the question
after ``match_key`` (normalise, lowercase, trailing punctuation and spaces dropped).

A candidate (a phrase of the history, ``Analysis.candidates``) is needed when the rewrite brings its words in: at
least one of its content words is in the human rewrite and not in the question, and at least half of its content
words are in the rewrite (a long phrase of which the rewrite took the head still counts; one shared word of a long
phrase does not). How words are read (``learned.tokens``), the same for both languages so one model learns from both:

- the words are ``convsearch.text.words``: jieba words for Chinese runs, lowercased ``\\w+`` runs for the rest;
- content words: not in the language pack's stopwords (zh and en lists both apply, a text may mix them), not a
  one-character Chinese particle (的, 了, 吗, …), not punctuation;
- a Latin word is in a text when its Snowball stem is among the text's stems (restaurants ~ restaurant);
- a Chinese word is in a text when it is a substring of the text (normalised, lowercased): jieba may cut the same
  name differently in the rewrite than in the history (故宫博物院 vs 故宫 / 博物院), and a substring test does not
  depend on the cut.

>>> needed_term("Zappa and the Mothers of Invention", "What kind of music did they play?",
...             "What kind of music did Zappa and the Mothers of Invention play?")
True
>>> needed_term("讲礼驴肉馆", "这家餐馆的地址是哪里？", "讲礼驴肉馆的地址是哪里？"), needs_rewrite("价格呢？", "价格呢")
(True, False)
"""

from __future__ import annotations

from convsearch.eval.metrics import match_key
from convsearch.learned.tokens import content_words, read


def needs_rewrite(question: str, rewrite: str) -> bool:
    """The gate label: the human rewrite differs from the question (compared as ``eval.metrics`` compares)."""
    return match_key(rewrite) != match_key(question)


def needed_term(candidate: str, question: str, rewrite: str) -> bool:
    """The term label of one candidate phrase for a turn (``question`` and its human ``rewrite``)."""
    cw = content_words(candidate)
    if not cw:
        return False
    q, rw = read(question), read(rewrite)
    in_rw = [rw.has(w) for w in cw]
    added = any(r and not q.has(w) for w, r in zip(cw, in_rw))
    return added and 2 * sum(in_rw) >= len(cw)


def added_words(question: str, rewrite: str) -> tuple[str, ...]:
    """The content words the human rewrite adds to the question (what the candidates should cover)."""
    q = read(question)
    return tuple(w for w in content_words(rewrite) if not q.has(w))
