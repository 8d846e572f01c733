"""Property tests over the pure stages: gate, rules, variants, fuse, dedup, format.

For any input (Unicode up to 10,000 characters: Chinese, English, other scripts, emoji, control characters;
an empty history up to 200 messages) each stage never raises and gives the same output twice (memo caches
cleared in between, so the second answer is computed, not remembered), and a rule rewrite adds only words
found in the history, the query or the topic (``rewrite.guard.unfaithful_words``, the guard's definition).

Bounded and deterministic by default (``derandomize``: the same examples every run, no example database
written). A longer random search: ``CONVSEARCH_PROPERTY_EXAMPLES=2000 pytest tests/unit/test_properties.py``.
"""

from __future__ import annotations

import os
import string
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convsearch.dedup import dedup
from convsearch.format import citations, context
from convsearch.fuse import fuse
from convsearch.resolve import entities, gate, ordinal
from convsearch.resolve.gate import needs_rewrite
from convsearch.resolve.guard import unfaithful_words
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Decision, Hit, Message
from convsearch.variants import make_variants

_N = int(os.environ.get("CONVSEARCH_PROPERTY_EXAMPLES", "0") or 0)
PROPS = settings(max_examples=_N or 40, derandomize=not _N, database=None, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(PROPS, max_examples=_N or 6)  # 10,000-character inputs, 200-message histories

# --- inputs -------------------------------------------------------------------------------------------
# Words the rules act on (pronouns, ellipsis frames, leading words, ordinals, names, relational nouns) mixed with
# anything at all: the interesting paths need the vocabulary, the crashes need the noise.
ZH = ["AnySearch", "支持", "哪些", "检索", "方式", "价格", "呢", "？", "它", "他", "她", "这个", "那个", "那",
      "那么", "还有", "另外", "第二种", "第三个", "番禺", "深圳", "最近", "三天", "适合", "露营", "吗", "的", "和",
      "是", "好的", "谢谢", "专业版", "每月", "99", "元", "前者", "后者", "怎么样", "，", "。", "NovaDB", "向量",
      "混合", "1.", "2."]
EN = ["Who", "founded", "SpaceX", "?", "When", "did", "it", "first", "launch", "a", "rocket", "what", "about", "and",
      "the", "price", "they", "them", "its", "their", "he", "she", "this", "that", "one", "second", "third", "step",
      "yes", "please", "thanks", "Elon", "Musk", "in", "2002", "Falcon", "1", "how", "much", "is", "does", "cost",
      "Divac", "Vlade", ".", ",", "tell", "me", "more", "company", "expedition", "-", "1)", "2)"]
ODD = ["😀", "👩‍💻", "🇨🇳", "\u200b", "\u200d", "\ufeff", "\x00", "\x07", "\t", "\n", "\r\n", "\x1b[31m", "\u202e",
       "ñ", "é", "ß", "İ", "ﬁ", "Ω", "Ж", "ж", "مرحبا", "שלום", "नमस्ते", "こんにちは", "カタカナ", "한국어", "ไทย",
       "𠀀", "\U0010ffff", "\ud7ff", "{}", "[1]", "```", "<think>", "\\", "'", '"', "  "]
_token = st.one_of(st.sampled_from(ZH), st.sampled_from(EN), st.sampled_from(ODD),
                   st.text(max_size=6), st.text(alphabet=string.printable, max_size=6))


@st.composite
def mixed(draw: st.DrawFn, max_tokens: int = 30) -> str:
    """Text of mixed scripts: words joined with or without spaces (Chinese has none)."""
    toks = draw(st.lists(_token, max_size=max_tokens))
    seps = draw(st.lists(st.sampled_from(["", " ", " ", "  ", "\n"]), min_size=len(toks), max_size=len(toks)))
    return "".join(t + s for t, s in zip(toks, seps))


texts = st.one_of(mixed(), st.text(max_size=200))
long_texts = st.one_of(st.text(min_size=5_000, max_size=10_000),
                       mixed(max_tokens=400).map(lambda s: (s * (10_000 // max(len(s), 1) + 1))[:10_000]))
topics = st.one_of(st.none(), texts, st.sampled_from(["AnySearch 产品文档", "SpaceX | History", "Vlade Divac"]))
roles = st.sampled_from(["user", "assistant", "user", "assistant", "system", "tool"])


def _messages(content: st.SearchStrategy[str], max_size: int) -> st.SearchStrategy[tuple[Message, ...]]:
    return st.lists(st.builds(Message, roles, content), max_size=max_size).map(tuple)


histories = _messages(texts, 12)
long_histories = st.one_of(_messages(texts, 200),
                           st.lists(st.builds(Message, roles, mixed(8)), min_size=200, max_size=200).map(tuple))


def _fresh() -> None:
    """Forget every memo of the gate and the rules, so a second call computes its answer again."""
    for mod in (gate, entities, ordinal):
        for obj in vars(mod).values():
            clear = getattr(obj, "cache_clear", None)
            if callable(clear):
                clear()


def twice(fn, *args, **kw):  # type: ignore[no-untyped-def]
    first = fn(*args, **kw)
    _fresh()
    second = fn(*args, **kw)
    assert first == second, f"{fn.__name__} gave two answers for the same input"
    return first


# --- gate and rules ------------------------------------------------------------------------------------
def _check_rules(history: tuple[Message, ...], query: str, topic: str | None) -> None:
    d = twice(needs_rewrite, history, query, topic=topic)
    assert isinstance(d, Decision) and 0.0 <= d.confidence <= 1.0 and d.reason
    r = twice(RuleRewriter().rewrite, history, query, topic=topic)
    assert r.original == query and isinstance(r.rewritten, str)
    if r.changed:
        assert r.rewritten.strip(), "a rule rewrite must not be empty"
        added = unfaithful_words(r.rewritten, query, history, topic)
        assert not added, f"rule rewrite added words found nowhere in the conversation: {sorted(added)}"
    # handing the rewriter the gate's decision (gate once) must not change its answer
    assert RuleRewriter().rewrite(history, query, topic=topic, decision=d) == r


@PROPS
@given(histories, texts, topics)
def test_gate_and_rules_on_any_input(history: tuple[Message, ...], query: str, topic: str | None) -> None:
    _check_rules(history, query, topic)


@PROPS
@given(st.just(()), texts, st.none())
def test_gate_and_rules_with_an_empty_history(history: tuple[Message, ...], query: str, topic: None) -> None:
    _check_rules(history, query, topic)


@SLOW
@given(long_histories, st.one_of(texts, long_texts), topics)
def test_gate_and_rules_on_long_inputs(history: tuple[Message, ...], query: str, topic: str | None) -> None:
    _check_rules(history, query, topic)


@PROPS
@given(st.sampled_from([
    (("user", "AnySearch 支持哪些检索方式？"), ("assistant", "支持 BM25、向量和混合检索。")),
    (("user", "深圳最近三天适合露营吗？"), ("assistant", "深圳未来三天晴，适合露营。")),
    (("user", "Who founded SpaceX?"), ("assistant", "Elon Musk founded SpaceX in 2002.")),
    (("user", "What are the steps?"), ("assistant", "1. Sign up\n2. Create an index\n3. Upload documents")),
]), mixed(12), topics)
def test_rule_rewrites_of_real_conversations_stay_faithful(turns: tuple[tuple[str, str], ...], query: str,
                                                           topic: str | None) -> None:
    """Real first turns make the rules fire (rather than the gate stopping them): every rewrite stays faithful."""
    _check_rules(tuple(Message(r, c) for r, c in turns), query, topic)


# --- variants -------------------------------------------------------------------------------------------
@PROPS
@given(st.one_of(texts, st.sampled_from(["AnySearch 的价格", "SpaceX launch cost", "NovaDB 的免费额度"])),
       st.integers(min_value=-1, max_value=5))
def test_variants_on_any_input(query: str, n: int) -> None:
    out = twice(make_variants, query, max_variants=n)
    assert isinstance(out, list) and len(out) <= max(n, 0)
    assert query.strip() not in out and len(set(out)) == len(out)


@SLOW
@given(long_texts)
def test_variants_on_long_inputs(query: str) -> None:
    assert len(twice(make_variants, query, max_variants=3)) <= 3


# --- fuse, dedup, format ----------------------------------------------------------------------------------
_urls = st.one_of(st.just(""), st.sampled_from([
    "https://docs.anysearch.example/pricing", "http://例子.中国/价格?a=1#x", "HTTPS://Docs.AnySearch.example/pricing/",
    "ftp://x", "not a url", "https://[::1]:99999/", "http://%zz", "https://a.b/😀"]), st.text(max_size=40))
_dates = st.one_of(st.none(), st.sampled_from(["2025-06-01", "2025-13-40", "0001-01-01", "9999-12-31", "昨天", ""]),
                   st.text(max_size=12))
hits = st.builds(Hit, id=st.sampled_from([f"d{i}" for i in range(8)]) | st.text(max_size=4), title=texts, text=texts,
                 score=st.floats(allow_nan=False, allow_infinity=False, width=32), url=_urls, date=_dates)
hit_lists = st.lists(st.lists(hits, max_size=12), max_size=5)


@PROPS
@given(hit_lists, st.sampled_from(["rrf", "max"]), st.one_of(st.none(), st.integers(min_value=0, max_value=20)))
def test_fuse_on_any_lists(lists: list[list[Hit]], mode: str, limit: int | None) -> None:
    out = twice(fuse, lists, mode, limit=limit)
    ids = [h.id for h in out]
    assert len(ids) == len(set(ids)) and set(ids) <= {h.id for lst in lists for h in lst}
    assert limit is None or len(out) <= limit
    assert [h.rank for h in out] == list(range(1, len(out) + 1))


@PROPS
@given(st.lists(hits, max_size=25), st.integers(min_value=0, max_value=64), st.floats(min_value=0.0, max_value=1.0))
def test_dedup_on_any_hits(hs: list[Hit], bits: int, jac: float) -> None:
    kept, stats = twice(dedup, hs, max_bits=bits, min_jaccard=jac)
    assert stats.before == len(hs) and stats.after == len(kept) <= len(hs)
    assert stats.by_url + stats.by_hash + stats.by_near == len(hs) - len(kept)
    assert {h.id for h in kept} <= {h.id for h in hs}


@SLOW
@given(st.lists(st.builds(Hit, id=st.text(max_size=4), title=texts, text=long_texts, score=st.just(1.0), url=_urls),
                max_size=6))
def test_dedup_and_format_on_long_texts(hs: list[Hit]) -> None:
    kept, _ = twice(dedup, hs)
    cites = twice(citations, kept, snippet_tokens=120, today=date(2026, 1, 1))
    assert all(len(c.snippet) <= 10_000 for c in cites)


@PROPS
@given(st.lists(hits, max_size=12), st.integers(min_value=1, max_value=300), st.integers(min_value=0, max_value=4000))
def test_format_on_any_hits(hs: list[Hit], snippet_tokens: int, stale_days: int) -> None:
    cites = twice(citations, hs, snippet_tokens=snippet_tokens, stale_days=stale_days, today=date(2026, 1, 1))
    assert [c.n for c in cites] == list(range(1, len(hs) + 1))
    ctx = twice(context, cites)
    assert isinstance(ctx, str) and all(f"[{c.n}]" in ctx for c in cites)


# --- what the properties found (kept as plain examples) ---------------------------------------------------
def test_a_topic_fragment_inside_a_latin_word_is_no_partial_name() -> None:
    """'An' of the topic '㐀0An' is not a mention inside 'AnySearch' (the alias rewrite used to give
    '㐀0AnySearch'); a real partial name still is, in both languages."""
    assert RuleRewriter().rewrite((), "AnySearch", topic="㐀0An").rewritten == "AnySearch"
    assert RuleRewriter().rewrite((), "Divac 哪年退役？", topic="Vlade Divac").rewritten == "Vlade Divac 哪年退役？"
    assert RuleRewriter().rewrite((), "When did Divac retire?", topic="Vlade Divac").rewritten == (
        "When did Vlade Divac retire?")


def test_dedup_counts_each_removed_hit_once() -> None:
    """A url-duplicate group that is then merged as a near-duplicate counted its members twice."""
    same = "AnySearch 专业版每月 99 元，免费版每月 1000 次查询。"
    hs = [Hit("b", "价格", same + "！", 1.0), Hit("a", "价格", same, 0.9, url="https://x.example/p"),
          Hit("c", "价格", same, 0.8, url="https://x.example/p/")]
    kept, stats = dedup(hs, min_jaccard=0.5)
    assert len(kept) == 1 and stats.by_url + stats.by_hash + stats.by_near == 2
