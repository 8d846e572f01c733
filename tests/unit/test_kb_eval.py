"""The knowledge-base conversations file (eval/kb/conversations.yaml) and the pure parts of eval.kb."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from convsearch.errors import DataFileError
from convsearch.eval.kb import (
    TurnResult,
    _cause,
    _summary,
    contains,
    fold,
    format_kb_table,
    load_kb,
    sync_roots,
)

REPO = Path(__file__).resolve().parents[2]
KB = REPO / "eval" / "kb" / "conversations.yaml"


def test_the_shipped_file_has_the_shape_the_issue_asks_for() -> None:
    kb = load_kb(KB)  # every turn has q and 1-3 gold strings long enough; every conversation names a set
    convs = kb.conversations
    assert len(convs) >= 40
    by_lang = {lang: [c for c in convs if c.lang == lang] for lang in ("zh", "en")}
    assert min(len(v) for v in by_lang.values()) >= 18  # about half each
    assert sum(len(c.turns) for c in convs) >= 110
    assert all(2 <= len(c.turns) <= 4 for c in convs)
    assert all(c.docs in kb.sets for c in convs)
    for ds in kb.sets.values():
        assert ds.package and ds.root.is_absolute() and ds.include
    zh_sets = {c.docs for c in by_lang["zh"]}
    assert all(kb.sets[s].lang == "zh" for s in zh_sets)


def test_every_set_is_used_and_has_a_package_in_the_install_script() -> None:
    kb = load_kb(KB)
    script = (REPO / "scripts" / "kb-docs.sh").read_text(encoding="utf-8")
    for name, ds in kb.sets.items():
        assert any(c.docs == name for c in kb.conversations), name
        assert ds.package in script, ds.package


def _write(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "kb.yaml"
    p.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return p


GOOD_SET = {"s": {"root": "/nowhere", "include": ["*.html"], "lang": "en", "package": "p"}}


@pytest.mark.parametrize(("conv", "problem"), [
    ({"id": "a", "docs": "other", "turns": [{"q": "x?", "gold": ["long enough"]}]}, "not one of the sets"),
    ({"id": "a", "docs": "s", "turns": [{"gold": ["long enough"]}]}, "needs 'q'"),
    ({"id": "a", "docs": "s", "turns": [{"q": "x?"}]}, "'gold' must be"),
    ({"id": "a", "docs": "s", "turns": [{"q": "x?", "gold": ["ab"]}]}, "too short"),
    ({"id": "a", "docs": "s", "turns": [{"q": "x?", "gold": ["中文"]}]}, "too short"),
    ({"id": "a", "docs": "s", "turns": [{"q": "x?", "gold": ["aaaa", "bbbb", "cccc", "dddd"]}]}, "at most 3"),
    ({"id": "a", "docs": "s", "turns": []}, "non-empty 'turns'"),
    ({"id": "a", "docs": "s", "lang": "fr", "turns": [{"q": "x?", "gold": ["long"]}]}, "lang must be"),
])
def test_a_malformed_conversation_is_one_line_naming_it(tmp_path: Path, conv: dict[str, object],
                                                         problem: str) -> None:
    with pytest.raises(DataFileError, match=problem) as info:
        load_kb(_write(tmp_path, {"sets": GOOD_SET, "conversations": [conv]}))
    assert "\n" not in str(info.value)


def test_duplicate_ids_and_missing_sections_are_refused(tmp_path: Path) -> None:
    turn = {"q": "x?", "gold": ["long enough"]}
    with pytest.raises(DataFileError, match="duplicate id"):
        load_kb(_write(tmp_path, {"sets": GOOD_SET, "conversations": [{"id": "a", "docs": "s", "turns": [turn]}] * 2}))
    with pytest.raises(DataFileError, match="'sets'"):
        load_kb(_write(tmp_path, {"conversations": []}))
    with pytest.raises(DataFileError, match="no such file"):
        load_kb(tmp_path / "absent.yaml")


def test_three_cjk_characters_are_enough_and_a_string_gold_is_a_list(tmp_path: Path) -> None:
    kb = load_kb(_write(tmp_path, {"sets": GOOD_SET, "conversations": [
        {"id": "a", "docs": "s", "lang": "zh", "turns": [{"q": "怎么办？", "gold": "软件包", "answer": "好"}]}]}))
    assert kb.conversations[0].turns[0].gold == ("软件包",)
    assert kb.conversations[0].lang == "zh"


def test_matching_folds_width_no_break_spaces_and_line_breaks() -> None:
    assert fold("ａｂｃ\u00a0 d\n\n e") == "abc d e"
    assert contains("run   pg_dump\ndbname > dumpfile now", ["nope", "pg_dump dbname > dumpfile"]) == \
        "pg_dump dbname > dumpfile"
    assert contains("APT::Periodic", ["apt::periodic"]) is None  # case is kept: gold strings are exact


def _tr(index: int, q: str, standalone: str, *, in_passages: str | None = None) -> TurnResult:
    return TurnResult("c", index, q, standalone, ("gold text",), None, in_passages)


def test_causes_of_a_miss() -> None:
    held = {"gold text": 2}
    assert _cause(_tr(1, "and it?", "and it?"), {"gold text": 0}) == "boundary"
    assert _cause(_tr(1, "and it?", "and it?", in_passages="gold text"), held) == "snippet"
    assert _cause(_tr(1, "and it?", "and  it?"), held) == "as-typed"
    assert _cause(_tr(1, "and it?", "and pg_dump?"), held) == "retrieval"
    assert _cause(_tr(0, "what is x?", "what is x?"), held) == "retrieval"


def test_summary_splits_first_turns_from_follow_ups_and_the_table_shows_misses() -> None:
    results = [TurnResult("c", 0, "q0", "q0", ("g",), "g", "g"), TurnResult("c", 1, "q1", "q1", ("g",), None, None),
               TurnResult("c", 2, "q2", "q2 x", ("g",), "g", "g"), TurnResult("d", 0, "q3", "q3", ("g",), None, "g")]
    s = _summary(results)
    assert (s["turns"], s["answered"], s["first"], s["followups"], s["in_passages"]) == (4, 0.5, 0.5, 0.5, 0.75)
    assert _summary([])["answered"] is None
    report = {"sets": {"s": {"lang": "en", **s, "index_seconds": 1.0, "passages": 9}}, "langs": {"en": s}, "all": s,
              "dense": "off", "rewriter": "rules", "top_k": 5, "seconds": 1.0, "causes": {"retrieval": 1},
              "failures": [{"cause": "retrieval", "set": "s", "conv": "c", "turn": 2, "q": "q1", "standalone": "q1",
                            "gold": ["g"], "sources": ["a.html › Intro"]}]}
    text = format_kb_table(report)
    assert "50.0" in text and "MISS [retrieval] s c #2: q1" in text and "a.html › Intro" in text


def test_sync_roots_is_the_folder_only_when_the_globs_select_everything_indexable(tmp_path: Path) -> None:
    from convsearch.eval.kb import DocSet

    for name in ("a.en.html", "a.zh-cn.html", "style.css"):
        (tmp_path / name).write_text("<p>x</p>", encoding="utf-8")
    en = DocSet("en", tmp_path, ("*.en.html",), "en")
    every = DocSet("all", tmp_path, ("*.html",), "en")
    assert sync_roots(en, en.files()) == [tmp_path / "a.en.html"]
    assert sync_roots(every, every.files()) == [tmp_path]  # the stylesheet is not indexable: the folder will do
