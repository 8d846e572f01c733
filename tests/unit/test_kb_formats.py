"""A conversations file that replays another's conversations over its own sets (eval/kb/formats.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from convsearch.errors import DataFileError
from convsearch.eval.kb import load_kb

REPO = Path(__file__).resolve().parents[2]
TURN = {"q": "How do I limit APT's bandwidth?", "gold": ["Dl-Limit"]}
SOURCE = {"sets": {"html": {"root": "/docs/html", "include": ["*.html"], "lang": "en", "package": "p"},
                   "other": {"root": "/docs/other", "include": ["*.html"], "lang": "zh", "package": "q"}},
          "conversations": [{"id": "apt", "docs": "html", "turns": [TURN, {"q": "And for one run?", "gold": ["-o x"]}]},
                            {"id": "zh", "docs": "other", "turns": [{"q": "怎么办？", "gold": ["软件包"]}]}]}
PDF_SET = {"pdf": {"root": "/docs", "include": ["book.pdf"], "lang": "en", "package": "p"}}


def _write(path: Path, doc: object) -> Path:
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def test_replayed_conversations_are_the_sources_over_the_new_set(tmp_path: Path) -> None:
    _write(tmp_path / "conversations.yaml", SOURCE)
    kb = load_kb(_write(tmp_path / "formats.yaml", {"sets": PDF_SET, "replay_from": "conversations.yaml",
                                                    "replay": {"pdf": "html"}}))
    assert list(kb.sets) == ["pdf"]  # only this file's sets are played
    assert [(c.id, c.docs, c.lang) for c in kb.conversations] == [("apt", "pdf", "en")]
    assert kb.conversations[0].turns == load_kb(tmp_path / "conversations.yaml").conversations[0].turns


@pytest.mark.parametrize(("doc", "source", "problem"), [
    ({"sets": PDF_SET, "replay": {"pdf": "html"}}, SOURCE, "needs 'replay_from'"),
    ({"sets": PDF_SET, "replay_from": "conversations.yaml", "replay": {"nope": "html"}}, SOURCE,
     "'nope' is not one of the sets"),
    ({"sets": PDF_SET, "replay_from": "conversations.yaml", "replay": {"pdf": "missing"}}, SOURCE,
     "no conversations over 'missing'"),
    ({"sets": PDF_SET, "replay_from": "conversations.yaml", "replay": {"pdf": "other"}}, SOURCE, "languages differ"),
    ({"sets": PDF_SET, "replay_from": "absent.yaml", "replay": {"pdf": "html"}}, SOURCE, "no such file"),
    ({"sets": PDF_SET, "replay_from": "conversations.yaml", "replay": {"pdf": "html"}},
     {**SOURCE, "replay_from": "x.yaml", "replay": {"html": "html"}}, "must hold its own conversations"),
])
def test_a_bad_replay_is_one_line_naming_it(tmp_path: Path, doc: dict[str, object], source: dict[str, object],
                                            problem: str) -> None:
    _write(tmp_path / "conversations.yaml", source)
    with pytest.raises(DataFileError, match=problem) as info:
        load_kb(_write(tmp_path / "formats.yaml", doc))
    assert "\n" not in str(info.value)


def test_the_shipped_formats_file_replays_every_conversation_of_its_html_sets() -> None:
    dev = load_kb(REPO / "eval" / "kb" / "conversations.yaml")
    formats = load_kb(REPO / "eval" / "kb" / "formats.yaml")
    replay = yaml.safe_load((REPO / "eval" / "kb" / "formats.yaml").read_text(encoding="utf-8"))["replay"]
    assert set(replay) == set(formats.sets)
    for pdf, html in replay.items():
        assert formats.sets[pdf].include[0].endswith(".pdf") and formats.sets[pdf].package == dev.sets[html].package
        assert [c.turns for c in formats.conversations if c.docs == pdf] == \
            [c.turns for c in dev.conversations if c.docs == html]
