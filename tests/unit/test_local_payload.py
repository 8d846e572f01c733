"""The payload format of the embedded index (format 2): what a Hit shows, encoded and decoded without tantivy."""

from __future__ import annotations

import struct

import pytest

from convsearch.backends.base import Filters
from convsearch.backends.local import decode_payload, encode_payload
from convsearch.errors import InputError
from convsearch.types import Document


def round_trip(d: Document, lang: str):
    b = encode_payload(d, lang)
    (n,) = struct.unpack_from("<I", b)
    assert n == len(b) - 4
    return decode_payload(b[4:].decode("utf-8"))


@pytest.mark.parametrize("d,lang", [
    (Document("zh-1", "番禺最近三天适合露营吗？", title="番禺露营", url="https://w.ex/p", date="2024-11-28"), "zh"),
    (Document("en-1", "Falcon 1 reached orbit.", title="Falcon", date=None, metadata={"source": "news"}), "en"),
    (Document("e", "", title="", url="", date=""), "en"),  # empty date stays empty, not None
])
def test_plain_fields_round_trip(d, lang):
    assert round_trip(d, lang) == (d.id, d.title, d.text, d.url, d.date, {**d.metadata, "lang": lang})


def test_a_field_holding_the_separator_falls_back_to_json():
    d = Document("a\x1fb", "text \x1f with the unit separator 检索", title="t\x1f", date=None,
                 metadata={"k": [1, "二"], "lang": "ignored"})
    b = encode_payload(d, "zh")
    assert b[4:5] == b"J"
    assert round_trip(d, "zh") == (d.id, d.title, d.text, "", None, {"k": [1, "二"], "lang": "zh"})


def test_metadata_json_cannot_hold_is_refused_before_anything_is_written():
    with pytest.raises(TypeError):
        encode_payload(Document("x", "y", metadata={"obj": object()}), "en")


@pytest.mark.parametrize("bad", ["last week", "2026-13-01", "11/30/2026"])
def test_filters_refuse_dates_that_are_not_iso(bad):
    with pytest.raises(InputError, match="is not an ISO date"):
        Filters.of({"date_to": bad})
    assert Filters.of({"date_from": "2026-11"}) == Filters(date_from="2026-11")
