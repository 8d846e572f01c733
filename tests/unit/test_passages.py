"""The passage splitter: headings start passages, sentences are never cut unless one alone is over the budget,
offsets point into the converted text, pages and ids are right."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from convsearch.ingest.passages import SECTION_SEP, estimate_tokens, spans, split
from convsearch.ingest.types import Converted, Heading


def doc(blocks: list[tuple[str, int]], *, title: str = "T", pages: tuple[int, ...] = ()) -> Converted:
    """A Converted from (text, heading level or 0) blocks joined by blank lines."""
    text, heads, pos = [], [], 0
    for body, level in blocks:
        if level:
            heads.append(Heading(pos, level, body))
        text.append(body)
        pos += len(body) + 2
    return Converted("\n\n".join(text), title, tuple(heads), pages)


def test_headings_start_passages_and_make_the_section_path():
    c = doc([("11. Network Services", 1), ("Intro to services.", 0), ("11.4. NFS File Server", 2),
             ("NFS exports folders.", 0), ("12. Printing", 1), ("CUPS prints.", 0)])
    ps = split(c, source="/d/ch11.html", doc_id="ch11")
    assert [p.text for p in ps] == ["Intro to services.", "NFS exports folders.", "CUPS prints."]
    assert [p.metadata["section"] for p in ps] == [
        "11. Network Services", f"11. Network Services{SECTION_SEP}11.4. NFS File Server", "12. Printing"]
    assert [p.id for p in ps] == ["ch11#0", "ch11#1", "ch11#2"]
    for p in ps:
        md = p.metadata
        assert c.text[md["start"]:md["end"]] == p.text
        assert md["source"] == "/d/ch11.html" and md["doc_id"] == "ch11" and md["title"] == "T"


def test_a_heading_with_no_body_makes_no_passage():
    c = doc([("Chapter 5", 1), ("5.1 Setup", 2), ("Install it.", 0)])
    ps = split(c, source="x", doc_id="d")
    assert [(p.text, p.metadata["section"]) for p in ps] == [("Install it.", f"Chapter 5{SECTION_SEP}5.1 Setup")]


def test_chinese_sentences_are_never_cut_inside():
    sentence = "这是一个描述系统配置方法的很长的句子，它说明了每一步该怎么做。"
    c = doc([("第一章 概述", 1), (sentence * 30, 0)])
    ps = split(c, source="x", doc_id="d", max_tokens=120)
    assert len(ps) > 3
    for p in ps:
        assert p.text.endswith("。") and p.text.startswith("这是")
        assert estimate_tokens(p.text) <= 120


def test_english_sentences_are_never_cut_inside():
    s = "The server reads its configuration file at start-up and reloads it on SIGHUP. "
    c = doc([(s * 40, 0)])
    for p in split(c, source="x", doc_id="d", max_tokens=60):
        assert p.text.endswith("SIGHUP.")


def test_a_sentence_over_the_budget_alone_is_cut_at_spaces():
    long = " ".join(f"word{i}" for i in range(400)) + "."
    c = doc([(long, 0)])
    ps = split(c, source="x", doc_id="d", max_tokens=50)
    assert len(ps) > 5
    assert "".join(c.text[p.metadata["start"]:p.metadata["end"]] for p in ps) == c.text
    assert all(estimate_tokens(p.text) <= 50 for p in ps)
    assert all(not p.text.endswith("word") for p in ps)  # cut at a space, not inside word123


def test_pages_of_a_passage():
    c = doc([("one. " * 5, 0), ("two. " * 5, 0), ("three. " * 5, 0)])
    p2, p3 = c.text.index("two"), c.text.index("three")
    c = Converted(c.text, "T", (), (0, p2, p3))
    ps = split(c, source="x.pdf", doc_id="d", max_tokens=14)
    assert [(p.metadata["page"], p.metadata.get("page_end")) for p in ps] == [(1, None), (2, None), (3, None)]
    whole = split(c, source="x.pdf", doc_id="d", max_tokens=200)
    assert len(whole) == 1 and whole[0].metadata["page"] == 1 and whole[0].metadata["page_end"] == 3


def test_ids_are_stable_and_lang_is_set():
    c = doc([("Guide", 1), ("Run make. 然后重启。", 0)])
    a, b = split(c, source="x", doc_id="d"), split(c, source="x", doc_id="d")
    assert [p.id for p in a] == [p.id for p in b]
    assert a[0].lang in ("zh", "en") and a[0].metadata["lang"] == a[0].lang
    zh = Converted("第一段。", "T", (), (), lang="zh-CN")
    assert split(zh, source="x", doc_id="z")[0].lang == "zh"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.sampled_from("ab 。.\n中文xyz"), min_size=1, max_size=300),
                          st.sampled_from([0, 0, 0, 1, 2])), min_size=1, max_size=12),
       st.integers(min_value=32, max_value=300))
def test_passages_cover_the_text_in_order_within_the_budget(blocks, budget):
    blocks = [(b.strip() or "x", lv) for b, lv in blocks]
    c = doc(blocks)
    got = spans(c, max_tokens=budget)
    ends = [e for _, _, e in got]
    starts = [s for _, s, _ in got]
    assert starts == sorted(starts) and all(s < e for _, s, e in got)
    assert all(e0 <= s1 for e0, s1 in zip(ends, starts[1:]))
    heading_starts = {h.start for h in c.headings}
    for _, s, e in got:
        # never a heading inside a passage, and within the budget unless one unit alone is over it
        assert not any(s < h < e for h in heading_starts)
        assert estimate_tokens(c.text[s:e]) <= budget + 2 * estimate_tokens("x")


def test_each_passage_has_its_own_language_over_the_declared_one():
    # KiCad's Chinese manual declares lang="en" on every page; a Chinese book quotes English commands
    text = ("A\n\n原理图编辑器用于绘制电路图，每个符号都有引脚。\n\n"
            "B\n\nWires that cross are not implicitly connected.\n\n"
            "C\n\n运行 apt-get install kicad-doc-zh kicad-packages3d kicad-symbols kicad-footprints "
            "kicad-templates 安装")
    heads = tuple(Heading(text.index(f"{h}\n"), 1, h) for h in "ABC")
    for declared, mixed in (("en", "en"), ("zh-CN", "zh"), (None, "en")):
        got = [d.lang for d in split(Converted(text, "T", heads, (), lang=declared), source="x", doc_id="d")]
        # Chinese text is zh, English text en whatever the page says; the last passage (a few Chinese characters
        # among many Latin letters) is what the page declares, else what detect_lang says
        assert got == ["zh", "en", mixed], declared
