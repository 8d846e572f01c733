"""The splitter's prefix-sum counts give what ``estimate_tokens`` and ``detect_lang`` give on the same text."""

from __future__ import annotations

import random

import pytest

from convsearch.ingest.passages import _Counts, _spans, estimate_tokens, split
from convsearch.ingest.types import Converted, Heading
from convsearch.text import detect_lang

# Every character class the estimate and the language test tell apart: CJK of either table (ideographs, kana,
# Hangul, compatibility ideographs), CJK and ASCII punctuation, the ideographic space, white space that only
# str.split knows as such (\x1c-\x1f, NBSP, U+2028), letters with accents, digits of other scripts, "_",
# a character outside the BMP, a lone surrogate and an unassigned code point.
ALPHABET = list("安装配置数据库服务。，！？；：“”（）【】…ー가나ｱＡ１　 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\xa0\u2028"
                "abcXYZ019_-./:;!?'\"()[]éüßΩ٣²½Ⅷ") + ["\U0001f600", "\U00020000", "\ud800", "\u0378", "ー", "・"]


def random_text(rng: random.Random, n: int) -> str:
    words = ["PostgreSQL", "pg_dump -Fc", "apt-get install", "配置文件", "服务器", "的", "。", " ", "\n", "  ",
             "“引号”"]
    out = []
    for _ in range(n):
        out.append(rng.choice(ALPHABET) if rng.random() < 0.6 else rng.choice(words))
    return "".join(out)


@pytest.mark.parametrize("seed", range(6))
def test_counts_match_estimate_tokens_on_every_span(seed):
    rng = random.Random(seed)
    text = random_text(rng, 400)
    counts = _Counts(text)
    spans_checked = 0
    for _ in range(3000):
        a = rng.randrange(len(text) + 1)
        b = rng.randrange(a, len(text) + 1)
        assert counts.tokens(a, b) == estimate_tokens(text[a:b]), (a, b, text[a:b])
        spans_checked += 1
    assert counts.tokens(0, len(text)) == estimate_tokens(text) and counts.tokens(5, 5) == estimate_tokens("")
    assert spans_checked == 3000


@pytest.mark.parametrize("sample", [
    "先运行配置脚本，然后重启服务。", "Rocky Linux 呢", "What does 你好 mean?", "How to pronounce 呢",
    "那 Windows 11 呢", "Debian 参考手册 Debian Reference is a guide", "“quoted” English — with dashes…",
    "PostgreSQL 的 pg_dump 和 pg_restore 用法", "apt-get install python3-pip python3-venv 安装",
])
def test_counts_language_is_detect_lang(sample):
    text = f"前文 preamble\n\n{sample}\n\nafter"
    a = text.index(sample)
    assert _Counts(text).lang(a, a + len(sample), sample) == detect_lang(sample)


def test_counts_language_on_random_samples_is_detect_lang():
    rng = random.Random(7)
    text = random_text(rng, 3000)
    counts = _Counts(text)
    for _ in range(500):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 400))
        assert counts.lang(a, b, text[a:b]) == detect_lang(text[a:b])


def test_a_mixed_document_splits_the_same_with_and_without_the_counts():
    """End to end on a non-ASCII document: the passages found with the counts are those found by slicing the text
    and calling estimate_tokens on each piece (blocks, sentences, and the cuts of an over-long sentence)."""
    para = "数据库服务器的配置文件位于 /etc/postgresql 目录。修改以后需要重新启动服务。" * 6
    long_sentence = "很长的一句话没有标点" * 80  # over any budget: cut inside the sentence
    body = "\n\n".join([para, long_sentence, para, "Run pg_ctl reload after editing the file. " * 30])
    text = f"安装\n\n{body}\n\nUsage in English\n\nRun pg_ctl reload after editing the file. " * 2
    heads, pos = [], 0
    for h in ("安装", "Usage in English") * 2:
        pos = text.index(h, pos)
        heads.append(Heading(pos, 1, h))
        pos += len(h)
    conv = Converted(text, "手册", tuple(heads))
    for budget in (40, 120, 400):
        fast = _spans(conv, budget, _Counts(text))
        assert fast == _spans(conv, budget, None) and len(fast) > 4
    docs = split(conv, source="m.html", doc_id="m", max_tokens=120)
    assert {d.metadata["lang"] for d in docs} == {"zh", "en"}
    assert [d.id for d in docs] == [f"m#{i}" for i in range(len(docs))]
