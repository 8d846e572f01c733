# ruff: noqa: E501 (fixture documents are written as they would appear in a file)
"""Plain-text converter, encoding detection and the errors every converter shares (size, permission, empty)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from convsearch.ingest.convert import SUFFIXES, convert, kind_of
from convsearch.ingest.encoding import decode, looks_binary
from convsearch.ingest.types import ConvertError

ZH_SIMPLIFIED = "这是一个测试文件，用来检查编码检测是否正确。中文文本在不同的编码下应该能被正确识别。我们今天去公园散步，天气很好。"
ZH_TRADITIONAL = "這是一個測試檔案，用來檢查編碼偵測是否正確。中文文字在不同的編碼下應該能被正確辨識。我們今天去公園散步，天氣很好。"


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_kind_of_every_suffix() -> None:
    assert kind_of(Path("a/B.HTM")) == "html" and kind_of(Path("x.pdf")) == "pdf"
    assert kind_of(Path("x.jsonl")) is None and kind_of(Path("README")) is None
    assert set(SUFFIXES.values()) == {"html", "pdf", "docx", "markdown", "text"}


def test_text_paragraphs_and_title(tmp_path: Path) -> None:
    c = convert(_file(tmp_path, "a.txt", b"\n\n  First line title\nwrapped   here\n\n\n\nSecond paragraph.\n   \n"))
    assert c.kind == "text" and c.title == "First line title"
    assert c.text == "First line title wrapped here\n\nSecond paragraph."
    assert c.headings == () and c.pages == ()


def test_text_title_is_cut_to_200_chars(tmp_path: Path) -> None:
    c = convert(_file(tmp_path, "long.txt", ("word " * 100).encode()))
    assert len(c.title) <= 201 and c.title.endswith("…")


def test_utf8_with_bom(tmp_path: Path) -> None:
    c = convert(_file(tmp_path, "bom.txt", "\ufeff你好，世界。\n".encode()))
    assert c.text == "你好，世界。"


def test_utf16_with_bom(tmp_path: Path) -> None:
    c = convert(_file(tmp_path, "u16.txt", "Hello 世界".encode("utf-16")))
    assert c.text == "Hello 世界"


@pytest.mark.parametrize(("codec", "text"), [("gbk", ZH_SIMPLIFIED), ("big5", ZH_TRADITIONAL)])
def test_legacy_chinese_encodings_decode(tmp_path: Path, codec: str, text: str) -> None:
    raw = (text + "\n\n" + text).encode(codec)
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    c = convert(_file(tmp_path, f"{codec}.txt", raw))
    assert c.text == f"{text}\n\n{text}"


def test_cp1252_decodes(tmp_path: Path) -> None:
    text = "Café crème brûlée — “quoted” naïve façade, déjà vu. " * 5
    assert convert(_file(tmp_path, "w.txt", text.encode("cp1252"))).text == text.strip()


def test_binary_under_text_suffix(tmp_path: Path) -> None:
    with pytest.raises(ConvertError, match="binary data, not text"):
        convert(_file(tmp_path, "garbage.txt", bytes(range(256)) * 40))
    assert looks_binary(b"\x01\x02\x03\x04abc") and not looks_binary("普通文本\n\tok".encode())


def test_empty_and_whitespace_only(tmp_path: Path) -> None:
    for name, data in (("e.txt", b""), ("w.txt", b" \n\t\n"), ("e.md", b"---\ntitle: x\n---\n\n")):
        with pytest.raises(ConvertError, match="the file is empty") as err:
            convert(_file(tmp_path, name, data))
        assert str(err.value).startswith(str(tmp_path / name))


def test_size_limit_checked_before_reading(tmp_path: Path) -> None:
    p = _file(tmp_path, "big.txt", b"x" * (3 * 2**20 + 10))
    with pytest.raises(ConvertError, match=r"over the size limit \(3\.0 MB > 2 MB\)"):
        convert(p, max_bytes=2 * 2**20)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file: permission denied cannot be produced")
def test_permission_denied(tmp_path: Path) -> None:
    p = _file(tmp_path, "secret.txt", b"hidden")
    p.chmod(0)
    try:
        with pytest.raises(ConvertError, match=r"cannot read \(permission denied\)"):
            convert(p)
    finally:
        p.chmod(0o600)


def test_permission_error_from_the_read_is_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _file(tmp_path, "secret.txt", b"hidden")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(ConvertError, match=r"secret.txt: cannot read \(permission denied\)$"):
        convert(p)


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConvertError, match=r"cannot read \(No such file or directory\)"):
        convert(tmp_path / "gone.txt")


def test_unsupported_suffix(tmp_path: Path) -> None:
    with pytest.raises(ConvertError, match=r"unsupported file type \.odt"):
        convert(_file(tmp_path, "a.odt", b"x"))


def test_decode_declared_charset_and_stale_label() -> None:
    assert decode("中文".encode("gb18030"), "x", declared="gb2312") == "中文"
    # valid UTF-8 under a legacy label is UTF-8 in practice
    assert decode("déjà".encode(), "x", declared="iso-8859-1") == "déjà"
    # an unknown label is ignored
    assert decode(b"plain", "x", declared="no-such-charset") == "plain"


# --- gzip-compressed files (Debian ships docs over 4 kB as README.md.gz, manual.pdf.gz) --------------------------
def test_kind_of_a_compressed_file_is_the_kind_inside_it() -> None:
    assert kind_of(Path("README.md.gz")) == "markdown" and kind_of(Path("a/Guide.HTML.GZ")) == "html"
    assert kind_of(Path("manual.pdf.gz")) == "pdf" and kind_of(Path("changelog.Debian.gz")) is None
    assert kind_of(Path("src.tar.gz")) is None and kind_of(Path("x.gz")) is None


def test_a_compressed_file_converts_as_the_file_itself(tmp_path: Path) -> None:
    import gzip

    text = "# 安装指南\n\n先运行配置脚本。\n\n## Upgrade\n\nRun the migration once.\n".encode()
    plain = convert(_file(tmp_path, "guide.md", text))
    packed = convert(_file(tmp_path, "guide.md.gz", gzip.compress(text)))
    assert packed == plain and packed.title == "安装指南"
    # two members (what `cat a.gz b.gz` makes) and the zero padding some writers leave: all of it is read
    two = gzip.compress(text[:20]) + gzip.compress(text[20:]) + bytes(8)
    assert convert(_file(tmp_path, "two.md.gz", two)) == plain


def test_a_bad_compressed_file_is_one_line_naming_it(tmp_path: Path) -> None:
    import gzip

    body = gzip.compress(b"Title\n\n" + b"All work and no play. " * 5000)
    with pytest.raises(ConvertError, match=r"cut\.txt\.gz: not a readable gzip file \(truncated\)"):
        convert(_file(tmp_path, "cut.txt.gz", body[: len(body) // 2]))
    with pytest.raises(ConvertError, match=r"bad\.txt\.gz: not a readable gzip file \(corrupt\)"):
        convert(_file(tmp_path, "bad.txt.gz", b"\x1f\x8b\x08\x00" + bytes(range(200))))
    with pytest.raises(ConvertError, match=r"not a readable gzip file"):
        convert(_file(tmp_path, "plain.txt.gz", b"not compressed at all"))
    # a small file that decompresses past the size limit (a gzip bomb) stops at the limit
    assert len(body) < 2000
    with pytest.raises(ConvertError, match=r"bomb\.txt\.gz: over the size limit once decompressed \(> 0\.1 MB\)"):
        convert(_file(tmp_path, "bomb.txt.gz", body), max_bytes=100_000)
