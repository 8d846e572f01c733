"""Two retrieval steps for indexed documents: the follow-up's history variant (the previous question + the follow-up
as typed) and the widening of the best passage with its section's neighbours."""

from __future__ import annotations

from convsearch.config import Settings
from convsearch.pipeline import history_variant, plan_queries, widen_top
from convsearch.rewrite import get_rewriter
from convsearch.types import Hit, Message


def test_history_variant_is_the_previous_user_question_then_the_follow_up():
    h = [Message("user", "How do I dump a PostgreSQL database?"), Message("assistant", "Use pg_dump dbname.")]
    assert history_variant("And how do I restore it?", h) == "How do I dump a PostgreSQL database? And how do I " \
                                                              "restore it?"
    assert history_variant("hi", [Message("assistant", "Hello")]) is None
    long = Message("user", "x " * 1000)
    assert len(history_variant("q", [long]) or "") <= 302


def test_a_follow_up_is_also_searched_with_its_history_variant_and_a_standalone_question_is_not():
    h = [Message("user", "怎么给 SSH 生成密钥？"), Message("assistant", "用 ssh-keygen。")]
    rw = get_rewriter("rules")
    _, _, _, queries = plan_queries("那它的公钥放在哪里？", h, rewriter=rw, settings=Settings())
    assert queries[-1] == "怎么给 SSH 生成密钥？ 那它的公钥放在哪里？" and len(set(queries)) == len(queries)
    _, _, _, off = plan_queries("那它的公钥放在哪里？", h, rewriter=rw, settings=Settings(history_variant="off"))
    assert "怎么给 SSH 生成密钥？ 那它的公钥放在哪里？" not in off
    _, _, _, alone = plan_queries("How do I install Redis on Debian?", h, rewriter=rw, settings=Settings())
    assert all("SSH" not in q for q in alone)


def _p(chunk: int, section: str = "9.4. Processes", doc: str = "ch09") -> Hit:
    return Hit(f"{doc}#{chunk}", "Debian Reference", f"passage {chunk}", 1.0 / (chunk + 1),
               metadata={"doc_id": doc, "chunk": chunk, "section": section, "start": chunk * 100,
                         "end": chunk * 100 + 90})


def test_the_best_passage_is_widened_with_its_section_neighbours_in_one_fetch():
    store = {h.id: h for h in (_p(3), _p(5, section="9.5. Other"), _p(7), _p(8))}
    calls: list[list[str]] = []

    def fetch(ids: list[str]) -> dict[str, Hit]:
        calls.append(ids)
        return {i: store[i] for i in ids if i in store}

    out = widen_top([_p(4), _p(7), Hit("rec", "t", "a record", 0.5)], fetch, 1)
    assert calls == [["ch09#3", "ch09#5"]]
    assert out[0].text == "passage 3\n\npassage 4"  # #5 is another section: left out
    assert (out[0].metadata["chunk"], out[0].metadata["chunk_end"]) == (3, 4)
    assert (out[0].metadata["start"], out[0].metadata["end"]) == (300, 490)
    assert out[0].id == "ch09#4" and out[0].score == 1.0 / 5
    assert out[1:] == [_p(7), Hit("rec", "t", "a record", 0.5)]  # only the first n are widened
    assert widen_top([Hit("rec", "t", "a record", 0.5)], fetch, 3) == [Hit("rec", "t", "a record", 0.5)]
    assert len(calls) == 1  # nothing to fetch for records
