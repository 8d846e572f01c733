"""Reading documents from JSONL, Markdown (front matter) and text, with errors naming file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convsearch import DataFileError, InputError
from convsearch.ingest import load_all, read_documents


def write(p: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def jsonl(*objs) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)) + "\n" for o in objs)


def test_jsonl_fields_and_defaults(tmp_path):
    f = write(tmp_path / "kb.jsonl", jsonl(
        {"id": "a", "title": "AnySearch 价格", "text": "专业版每月 99 元", "url": "https://x.example/a",
         "date": "2024-01-01", "lang": "zh", "metadata": {"team": "sales"}},
        {"text": "SpaceX was founded in 2002."},
        {"content": "content is accepted too"},
    ) + "\n   \n")
    docs = list(read_documents(f))
    assert [d.id for d in docs] == ["a", "kb-2", "kb-3"]
    a = docs[0]
    assert (a.title, a.text, a.url, a.date, a.lang, a.metadata) == (
        "AnySearch 价格", "专业版每月 99 元", "https://x.example/a", "2024-01-01", "zh", {"team": "sales"})
    assert docs[2].text == "content is accepted too"


def test_markdown_front_matter(tmp_path):
    f = write(tmp_path / "leave.md", "---\nid: hr-leave\ntitle: \"年假制度\"\nurl: https://hr.example/leave\n"
                                     "date: 2023-02-01\nlang: zh\n---\n# 年假\n\n员工每年享有五天带薪年假。\n")
    (d,) = read_documents(f)
    assert (d.id, d.title, d.url, d.date, d.lang) == ("hr-leave", "年假制度", "https://hr.example/leave", "2023-02-01", "zh")
    assert d.text.startswith("# 年假") and "---" not in d.text
    assert d.metadata == {"path": str(f)}


def test_markdown_without_front_matter_takes_heading_as_title(tmp_path):
    f = write(tmp_path / "spacex.md", "\n# SpaceX history\n\nFounded in 2002.\n")
    (d,) = read_documents(f)
    assert d.title == "SpaceX history"
    assert d.id.startswith("spacex-")


def test_text_file_first_line_is_title_and_ids_are_stable(tmp_path):
    f = write(tmp_path / "note.txt", "入职流程说明\n签订合同，领取电脑。\n")
    (d1,) = read_documents(f)
    (d2,) = read_documents(f)
    assert d1.title == "入职流程说明" and "领取电脑" in d1.text
    assert d1.id == d2.id


def test_load_all_walks_folders_and_skips_other_files(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "a.jsonl", jsonl({"id": "a", "text": "x"}))
    write(tmp_path / "sub" / "b.md", "# B\nbody")
    write(tmp_path / "sub" / "c.txt", "C\nbody")
    write(tmp_path / "sub" / "ignore.csv", "x,y")
    docs = load_all([tmp_path])
    assert len(docs) == 3 and {d.title for d in docs} >= {"B", "C"}


def test_invalid_utf8_names_the_line(tmp_path):
    f = write(tmp_path / "bad.jsonl", b'{"id": "1", "text": "ok"}\n{"id": "2", "text": "ok"}\n{"id": "3", "text": "\xff\xfe"}\n')
    with pytest.raises(DataFileError) as ei:
        list(read_documents(f))
    e = ei.value
    assert e.line == 3 and e.path == str(f)
    assert str(e).startswith(f"{f}:3: ") and "UTF-8" in str(e)
    assert isinstance(e, InputError)


def test_invalid_utf8_in_text_file(tmp_path):
    f = write(tmp_path / "bad.txt", "标题\n正文\n".encode() + b"\xc3\x28 broken\n")
    with pytest.raises(DataFileError) as ei:
        list(read_documents(f))
    assert ei.value.line == 3


def test_malformed_json_line_names_the_line(tmp_path):
    f = write(tmp_path / "kb.jsonl", jsonl({"id": "a", "text": "ok"}, "", '{"id": "b", "text": ', {"text": "c"}))
    with pytest.raises(DataFileError) as ei:
        list(read_documents(f))
    assert ei.value.line == 3
    assert "malformed JSON" in str(ei.value) and f"{f}:3:" in str(ei.value)


@pytest.mark.parametrize("bad", [{"id": "x"}, {"id": "x", "text": ""}, {"id": "x", "text": "   "}, {"id": "x", "text": 42}])
def test_missing_text_names_the_line(tmp_path, bad):
    f = write(tmp_path / "kb.jsonl", jsonl({"id": "a", "text": "ok"}, bad))
    with pytest.raises(DataFileError) as ei:
        list(read_documents(f))
    assert ei.value.line == 2 and "text" in ei.value.problem


def test_non_object_line(tmp_path):
    f = write(tmp_path / "kb.jsonl", jsonl([1, 2]))
    with pytest.raises(DataFileError) as ei:
        list(read_documents(f))
    assert ei.value.line == 1 and "object" in str(ei.value)


def test_empty_markdown_and_missing_or_unsupported_paths(tmp_path):
    with pytest.raises(DataFileError, match="empty"):
        list(read_documents(write(tmp_path / "e.md", "---\ntitle: x\n---\n  \n")))
    with pytest.raises(DataFileError, match="no such file"):
        load_all([tmp_path / "missing.jsonl"])
    with pytest.raises(DataFileError, match="unsupported"):
        load_all([write(tmp_path / "x.pdf", "x")])


def test_load_all_fails_on_the_first_bad_file_before_returning_anything(tmp_path):
    write(tmp_path / "a.jsonl", jsonl({"id": "a", "text": "ok"}))
    write(tmp_path / "b.jsonl", jsonl({"id": "b", "text": "ok"}, "{broken"))
    with pytest.raises(DataFileError) as ei:
        load_all([tmp_path])
    assert ei.value.path.endswith("b.jsonl") and ei.value.line == 2
