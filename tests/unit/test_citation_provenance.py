"""Citations name file, section and page: Citation.metadata, the [n] lines of the context and of the CLI, the
whole-passage snippet cap, the wire model; results without provenance print exactly as before."""

from __future__ import annotations

import json
from datetime import date
from types import SimpleNamespace

import pytest

from convsearch.config import Settings
from convsearch.errors import ConfigError
from convsearch.format import citations, context, file_name, pages
from convsearch.pipeline import finish_turn
from convsearch.render import render_turn
from convsearch.server.models import Result, result
from convsearch.text import count_tokens
from convsearch.types import Hit, RewriteResult

TODAY = date(2026, 12, 1)
SECTION = "11. Network Services › 11.4. NFS File Server"
HEAD = f"[1] NAS Admin Guide › {SECTION}"
LONG_EN = ("The NFS server exports shared folders to Linux clients; enable it under Network Services, then set the "
           "allowed hosts and the squash option for each shared folder before mounting it. ") * 20


def passage(i: str = "admin-3f2a#7", text: str = "Enable NFS under Network Services.", *, url: str = "",
            date_: str | None = None, **md: object) -> Hit:
    meta = {"source": "/srv/docs/manuals/admin.pdf", "title": "NAS Admin Guide", "section": SECTION, "page": 12,
            "page_end": 13, "doc_id": "admin-3f2a", "chunk": 7, "start": 4100, "end": 4420, "lang": "en", **md}
    return Hit(i, "NAS Admin Guide", text, 0.8, url, date_, "local", 1, {k: v for k, v in meta.items()
                                                                         if v is not None})


def record(i: str = "r1", **md: object) -> Hit:
    return Hit(i, "AnySearch pricing", "AnySearch Pro costs 99 a month.", 0.7,
               "https://www.anysearch.example/pricing", "2026-10-01", "local", 2, {"lang": "en", **md})


def web(i: str = "w1") -> Hit:
    md = {"provider": "brave", "rank": 1, "domain": "weather.example.cn", "source": "weather.example.cn",
          "source_type": "web"}
    return Hit(i, "深圳天气", "多云", 0.9, "https://weather.example.cn/a", None, "brave", 1, md)


def test_citation_carries_the_hits_metadata():
    (c,) = citations([passage()], today=TODAY)
    assert c.metadata["source"] == "/srv/docs/manuals/admin.pdf"
    assert c.metadata["section"] == SECTION
    assert (c.metadata["page"], c.metadata["page_end"], c.metadata["chunk"]) == (12, 13, 7)
    assert citations([Hit("x", "t", "text", 1.0)], today=TODAY)[0].metadata == {}


def test_non_scalar_metadata_is_left_out():
    (c,) = citations([passage(tags=["a", "b"], extra={"k": 1}, ok=True, ratio=float("nan"))], today=TODAY)
    assert "tags" not in c.metadata and "extra" not in c.metadata and "ratio" not in c.metadata
    assert c.metadata["ok"] is True


def test_context_names_title_section_file_and_pages():
    ctx = context(citations([passage()], today=TODAY))
    assert ctx.splitlines()[0] == "[1] NAS Admin Guide › 11. Network Services › 11.4. NFS File Server " \
                                  "(admin.pdf, p. 12–13)"
    assert ctx.splitlines()[1] == "Enable NFS under Network Services."


@pytest.mark.parametrize("md,line", [
    ({"page_end": None}, f"{HEAD} (admin.pdf, p. 12)"),
    ({"page": None, "page_end": None}, f"{HEAD} (admin.pdf)"),
    ({"section": None, "page": None, "page_end": None}, "[1] NAS Admin Guide (admin.pdf)"),
    ({"section": "NAS Admin Guide › Quotas"}, "[1] NAS Admin Guide › Quotas (admin.pdf, p. 12–13)"),  # title once
    ({"source": "C:\\docs\\admin.docx", "page": None, "page_end": None},
     f"{HEAD} (admin.docx)"),
])
def test_context_line_variants(md, line):
    assert context(citations([passage(**md)], today=TODAY)).splitlines()[0] == line


def test_a_passage_with_a_url_names_its_domain_then_date_and_stale():
    (c,) = citations([passage(url="https://docs.nas.example/admin", date_="2020-01-01")], today=TODAY)
    assert context([c]).splitlines()[0] == ("[1] NAS Admin Guide › 11. Network Services › 11.4. NFS File Server "
                                            "(docs.nas.example, p. 12–13, 2020-01-01, stale)")


def test_results_without_provenance_print_as_before():
    # web results (their `source` is the domain) and records (a bare `source` tag is no file) are unchanged
    cs = citations([record(), record("r2", source="blog"), web()], today=TODAY, time_sensitive=True)
    assert context(cs) == ("[1] AnySearch pricing (anysearch.example, 2026-10-01)\nAnySearch Pro costs 99 a month.\n\n"
                           "[2] AnySearch pricing (anysearch.example, 2026-10-01)\nAnySearch Pro costs 99 a month.\n\n"
                           "[3] 深圳天气 (weather.example.cn, undated)\n多云")


def test_a_passage_is_cited_whole_up_to_passage_tokens():
    assert count_tokens(LONG_EN) > 400
    (p, r) = citations([passage(text=LONG_EN), record(text_ignored=1)], today=TODAY)
    assert 120 < count_tokens(p.snippet) <= 400
    (p2,) = citations([passage(text=LONG_EN)], today=TODAY, passage_tokens=50)
    assert count_tokens(p2.snippet) <= 50
    short = "Enable   NFS\n\nunder Network Services."
    assert citations([passage(text=short)], today=TODAY)[0].snippet == "Enable NFS under Network Services."


def test_a_record_keeps_the_snippet_cap():
    hit = Hit("r", "Record", LONG_EN, 1.0)
    (c,) = citations([hit], today=TODAY, passage_tokens=400)
    assert count_tokens(c.snippet) <= 120


def test_web_hit_with_a_chunk_field_keeps_the_snippet_cap():
    hit = Hit("w", "Page", LONG_EN, 1.0, "https://x.example/a", metadata={"source_type": "web", "chunk": 2})
    assert count_tokens(citations([hit], today=TODAY)[0].snippet) <= 120


def test_helpers():
    assert file_name("/a/b/report.pdf") == "report.pdf" and file_name("report.pdf") == "report.pdf"
    assert pages({"page": 3}) == "p. 3" and pages({"page": 3, "page_end": 5}) == "p. 3–5"
    assert pages({"page": 3, "page_end": 3}) == "p. 3" and pages({}) == ""


def _turn(hits: list[Hit]) -> SimpleNamespace:
    s = Settings()
    rw = RewriteResult("how do I enable NFS", "how do I enable NFS", "gate", "standalone")
    ranked, stats, cites, ctx = finish_turn(rw.original, rw, [hits], settings=s, top_k=5, today=TODAY)
    trace = SimpleNamespace(decision=SimpleNamespace(analysis=None), hits_before_dedup=stats.before,
                            hits_after_dedup=stats.after, notes=())
    return SimpleNamespace(query=rw.original, standalone_query=rw.rewritten, rewrite=rw, variants=(), trace=trace,
                           citations=cites, context=ctx)


def test_cli_line_names_section_file_and_pages():
    out = render_turn(_turn([passage()]))
    assert ("  [1] NAS Admin Guide › 11. Network Services › 11.4. NFS File Server (admin.pdf, p. 12–13)  "
            "id=admin-3f2a#7\n      Enable NFS under Network Services.") in out


def test_cli_line_without_provenance_is_unchanged():
    out = render_turn(_turn([record()]))
    assert ("  [1] AnySearch pricing (anysearch.example, 2026-10-01)  id=r1\n"
            "      AnySearch Pro costs 99 a month.") in out


def test_finish_turn_groups_passages_of_one_document():
    hits = [passage("d#1", "one nfs", chunk=1, page=1, page_end=None),
            passage("d#2", "two nfs", chunk=2, page=2, page_end=None),
            passage("d#5", "five nfs", chunk=5), passage("d#9", "nine nfs", chunk=9),
            passage("e#0", "other nfs", doc_id="e", chunk=0, source="/srv/docs/e.md")]
    t = _turn(hits)
    docs = [c.metadata["doc_id"] for c in t.citations]
    # CONVSEARCH_PER_DOC=2: its third gave way to e, then came back as nothing else was left to fill the top k
    assert docs == ["admin-3f2a", "admin-3f2a", "e", "admin-3f2a"]
    merged = next(c for c in t.citations if c.metadata.get("chunk_end"))
    assert (merged.metadata["chunk"], merged.metadata["chunk_end"]) == (1, 2)
    assert merged.snippet == "one nfs two nfs"
    assert "(admin.pdf, p. 1–2)" in t.context


def test_result_model_carries_metadata_and_validates():
    (c,) = citations([passage(ok=True)], today=TODAY)
    r = result(c)
    assert r.metadata["section"] == SECTION and r.metadata["page"] == 12 and r.metadata["ok"] is True
    body = json.loads(r.model_dump_json())
    assert body["metadata"]["source"] == "/srv/docs/manuals/admin.pdf"
    assert Result.model_validate(body) == r
    schema = Result.model_json_schema()["properties"]["metadata"]
    assert schema["type"] == "object"
    assert {t.get("type") for t in schema["additionalProperties"]["anyOf"]} == {"boolean", "integer", "number",
                                                                                "string", "null"}


def test_result_of_a_record_has_its_metadata_only():
    (c,) = citations([record()], today=TODAY)
    assert result(c).metadata == {"lang": "en"}


def test_settings_passage_tokens_and_per_doc():
    s = Settings.from_env({"CONVSEARCH_PASSAGE_TOKENS": "250", "CONVSEARCH_PER_DOC": "0"})
    assert (s.passage_tokens, s.per_doc) == (250, 0)
    assert (Settings().passage_tokens, Settings().per_doc) == (400, 2)
    with pytest.raises(ConfigError, match="CONVSEARCH_PER_DOC must be zero or more"):
        Settings.from_env({"CONVSEARCH_PER_DOC": "-1"})
    with pytest.raises(ConfigError, match="CONVSEARCH_PASSAGE_TOKENS must be positive"):
        Settings.from_env({"CONVSEARCH_PASSAGE_TOKENS": "0"})
