"""The contract every history store passes (HistoryStore + MemoryStore), as a pytest base class.

Subclass it and provide a ``store`` fixture that returns a fresh, empty store with the default 64 KB
message limit::

    class TestMyStore(HistoryStoreContract):
        @pytest.fixture
        def store(self):
            return MyStore()

Needs pytest (a dev dependency); nothing else in convsearch imports this module.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from ..errors import InputError, MessageIdConflict, MessageTooLarge
from ..types import Message
from ..window import history_window
from .base import CitedResult, Fact, HistoryStore, MemoryStore, Scope, Summary
from .summary import refresh_summary

A = Scope("acme", "bot", "s1")


def contents(rows: Any) -> list[str]:
    return [r.content for r in rows]


class HistoryStoreContract:
    """Behaviour every store shares: ordering, idempotency, windowing, limits, isolation, rooms, layers."""

    @pytest.fixture
    def store(self) -> Any:  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    # --- the protocols ----------------------------------------------------------------------------
    def test_meets_both_protocols(self, store):
        assert isinstance(store, HistoryStore) and isinstance(store, MemoryStore)

    # --- appends and ordering ---------------------------------------------------------------------
    def test_append_then_read_back_in_order(self, store):
        rows = [store.append(A, {"role": r, "content": f"{r} {i}"}) for i, r in enumerate(["user", "assistant"] * 3)]
        assert [r.seq for r in rows] == sorted(r.seq for r in rows) and len({r.seq for r in rows}) == 6
        got = store.messages(A)
        assert contents(got) == [f"{r} {i}" for i, r in enumerate(["user", "assistant"] * 3)]
        assert [g.id for g in got] == [r.id for r in rows] and all(g.created_at is not None for g in got)
        assert contents(store.messages(A, limit=2)) == ["user 4", "assistant 5"]
        assert contents(store.messages(A, after=rows[3].seq)) == ["user 4", "assistant 5"]

    def test_message_fields_round_trip(self, store):
        store.append(A, Message("assistant", "", kind="tool_call", name="search"), message_id="c1")
        store.append(A, {"role": "tool", "content": "{\"hits\": []}", "tool_call_id": "c1"}, message_id="c2")
        store.append(A, Message("assistant", "正在输入…", partial=True), message_id="c3")
        text = "AnySearch 的价格？😀 naïve – “quotes” \\ ' % _"
        store.append(A, {"role": "user", "content": text}, message_id="c4", speaker="alice")
        got = {r.id: r for r in store.messages(A)}
        assert (got["c1"].kind, got["c1"].name, got["c1"].content) == ("tool_call", "search", "")
        assert (got["c2"].role, got["c2"].kind) == ("tool", "tool_result")
        assert got["c3"].partial is True
        assert (got["c4"].content, got["c4"].speaker, got["c4"].thread) == (text, "alice", "alice")

    def test_append_is_idempotent_by_message_id(self, store):
        a = store.append(A, {"role": "user", "content": "价格呢？"}, message_id="m1")
        b = store.append(A, {"role": "user", "content": "价格呢？"}, message_id="m1")
        assert a.seq == b.seq and a.id == b.id == "m1"
        assert contents(store.messages(A)) == ["价格呢？"]

    def test_reusing_a_message_id_for_other_content_is_a_conflict(self, store):
        store.append(A, {"role": "user", "content": "价格呢？"}, message_id="m1")
        with pytest.raises(MessageIdConflict, match="m1"):
            store.append(A, {"role": "user", "content": "something else"}, message_id="m1")
        assert contents(store.messages(A)) == ["价格呢？"]

    def test_message_ids_are_per_session(self, store):
        store.append(A, {"role": "user", "content": "one"}, message_id="m1")
        store.append(Scope("acme", "bot", "s2"), {"role": "user", "content": "two"}, message_id="m1")
        assert contents(store.messages(A)) == ["one"]
        assert contents(store.messages(Scope("acme", "bot", "s2"))) == ["two"]

    # --- bad input --------------------------------------------------------------------------------
    def test_oversized_message_is_refused_and_nothing_is_stored(self, store):
        limit = store.max_message_bytes
        store.append(A, {"role": "user", "content": "a" * limit})  # exactly at the limit is fine
        with pytest.raises(MessageTooLarge, match="limit") as e:
            store.append(A, {"role": "user", "content": "界" * (limit // 3 + 1)})  # counted in UTF-8 bytes
        assert e.value.http_status == 413 and isinstance(e.value, InputError)
        assert len(store.messages(A)) == 1

    @pytest.mark.parametrize("bad", [{"role": "robot", "content": "x"}, {"role": "user", "content": "a\x00b"},
                                     {"role": "user", "content": "lone \ud800 surrogate"}])
    def test_bad_messages_are_input_errors_and_nothing_is_stored(self, store, bad):
        with pytest.raises(InputError):
            store.append(A, bad)
        assert store.messages(A) == []

    @pytest.mark.parametrize("kw", [{"message_id": ""}, {"message_id": "x" * 129}, {"speaker": "a\nb"}])
    def test_bad_ids_are_input_errors(self, store, kw):
        with pytest.raises(InputError):
            store.append(A, {"role": "user", "content": "hi"}, **kw)
        assert store.messages(A) == []

    # --- unknown sessions -------------------------------------------------------------------------
    def test_unknown_session_is_empty_not_an_error(self, store):
        nobody = Scope("nobody", "none", "never")
        assert store.messages(nobody) == [] and store.window(nobody, 8) == []
        assert store.summary(nobody) is None and store.cited(nobody) == []
        assert store.facts(nobody, "u") == [] and store.delete_session(nobody) == 0
        assert store.mark_cited(nobody, [1]) == 0 and store.forget(nobody, "u") == 0

    # --- the window -------------------------------------------------------------------------------
    def test_window_applies_the_spine_filter(self, store):
        msgs = [Message("system", "You are a bot."), Message("user", "AnySearch 支持哪些检索方式？"),
                Message("assistant", "", kind="tool_call"), Message("tool", "secret tool output", kind="tool_result"),
                Message("assistant", "支持三种。"), Message("user", "   "), Message("assistant", "正在", partial=True),
                Message("user", "价格呢？")]
        for m in msgs:
            store.append(A, m)
        assert contents(store.window(A, 8)) == ["AnySearch 支持哪些检索方式？", "支持三种。", "价格呢？"]
        assert contents(store.window(A, 2)) == ["支持三种。", "价格呢？"]
        assert store.window(A, 0) == []
        assert "secret tool output" not in " ".join(contents(store.window(A, None)))

    def test_window_matches_history_window_on_random_conversations(self, store):
        roles = ["user", "assistant", "system", "tool"]
        for seed in range(8):
            rng = random.Random(seed)
            scope = Scope("acme", "bot", f"random-{seed}")
            msgs = []
            for i in range(rng.randint(0, 25)):
                role = rng.choice(roles)
                kind = "tool_result" if role == "tool" else rng.choice(["text"] * 5 + ["tool_call"])
                content = rng.choice(["", "  ", f"message {i}", f"消息 {i}"])
                msgs.append(Message(role, content, kind=kind, partial=rng.random() < 0.15))  # type: ignore[arg-type]
            for m in msgs:
                store.append(scope, m)
            for n in (1, 3, 8, 30):
                want = history_window(msgs, n)
                got = tuple(r.as_message() for r in store.window(scope, n))
                assert got == want, (seed, n)

    # --- isolation --------------------------------------------------------------------------------
    def test_tenants_agents_and_sessions_are_isolated(self, store):
        scopes = [Scope("acme", "bot", "s1"), Scope("globex", "bot", "s1"), Scope("acme", "other", "s1"),
                  Scope("acme", "bot", "s2"), Scope("' OR 1=1 --", "bot", "s1"), Scope("acme%", "b_t", "s*")]
        for i, sc in enumerate(scopes):
            store.append(sc, {"role": "user", "content": f"secret of {i}"}, message_id="same-id")
            store.save_summary(sc, Summary(f"summary {i}", 1 + i, 1, "extractive"))
            store.record_results(sc, "same-id", [CitedResult("", 1, f"doc-{i}")])
            store.mark_cited(sc, [1])
            store.remember(sc, "u", [Fact("budget", f"{i} 元")])
        for i, sc in enumerate(scopes):
            assert contents(store.messages(sc)) == [f"secret of {i}"]
            assert contents(store.window(sc, 8)) == [f"secret of {i}"]
            assert store.summary(sc).text == f"summary {i}"
            assert [r.id for r in store.cited(sc)] == [f"doc-{i}"]
        # the profile is per tenant → agent → user (shared by that user's sessions)
        assert store.facts(Scope("acme", "bot", "s2"), "u")[0].value == store.facts(scopes[0], "u")[0].value
        assert store.facts(Scope("globex", "bot", "x"), "u")[0].value == "1 元"
        assert store.delete_session(scopes[0]) == 1
        assert store.messages(scopes[0]) == [] and store.summary(scopes[0]) is None and store.cited(scopes[0]) == []
        for i, sc in enumerate(scopes[1:], start=1):
            assert contents(store.messages(sc)) == [f"secret of {i}"] and store.summary(sc) is not None

    def test_deleted_session_can_start_again(self, store):
        store.append(A, {"role": "user", "content": "old"}, message_id="m1")
        store.delete_session(A)
        store.append(A, {"role": "user", "content": "new"}, message_id="m1")
        assert contents(store.messages(A)) == ["new"]

    # --- shared rooms -----------------------------------------------------------------------------
    def test_room_threads_hold_the_askers_turns_and_the_replies_to_them(self, store):
        room = Scope("acme", "bot", "room")
        store.append(room, {"role": "user", "content": "AnySearch 支持哪些检索方式？"}, speaker="alice", message_id="a1")
        store.append(room, {"role": "assistant", "content": "三种。"})                       # → latest user: alice
        store.append(room, {"role": "user", "content": "NovaDB 怎么收费？"}, speaker="bob", message_id="b1")
        store.append(room, {"role": "user", "content": "它支持私有部署吗？"}, speaker="alice", message_id="a2")
        store.append(room, {"role": "assistant", "content": "按节点收费。"}, reply_to="b1")    # explicit: bob
        store.append(room, {"role": "assistant", "content": "支持。"}, speaker="alice")        # named asker
        alice = contents(store.window(room, 8, speaker="alice"))
        bob = contents(store.window(room, 8, speaker="bob"))
        assert alice == ["AnySearch 支持哪些检索方式？", "三种。", "它支持私有部署吗？", "支持。"]
        assert bob == ["NovaDB 怎么收费？", "按节点收费。"]
        assert len(store.window(room, 8)) == 6  # without a speaker: the whole room
        assert store.window(room, 8, speaker="carol") == []

    # --- summaries --------------------------------------------------------------------------------
    def test_summary_only_moves_forward(self, store):
        assert store.save_summary(A, Summary("first", 10, 6, "extractive")) is True
        assert store.save_summary(A, Summary("older", 5, 3, "extractive")) is False
        assert store.save_summary(A, Summary("same", 10, 6, "extractive")) is False
        assert store.save_summary(A, Summary("newer", 12, 8, "llm")) is True
        s = store.summary(A)
        assert (s.text, s.through, s.folded, s.method) == ("newer", 12, 8, "llm") and s.updated_at is not None

    def test_summaries_are_per_thread(self, store):
        store.save_summary(A, Summary("room", 3, 3, "extractive"))
        store.save_summary(A, Summary("alice", 2, 2, "extractive"), speaker="alice")
        assert store.summary(A).text == "room" and store.summary(A, speaker="alice").text == "alice"
        assert store.summary(A, speaker="bob") is None

    def test_refresh_summary_folds_all_but_the_last_eight_past_fourteen(self, store):
        for i in range(14):
            store.append(A, {"role": "user" if i % 2 == 0 else "assistant", "content": f"AnySearch question {i}?"})
        assert refresh_summary(store, A) is None  # 14 is not past the threshold
        store.append(A, {"role": "user", "content": "NovaDB question 14?"})
        s = refresh_summary(store, A)
        rows = store.window(A, None)
        assert s is not None and s.folded == 7 and s.through == rows[6].seq and len(s.text) <= 1200
        assert "AnySearch" in s.text
        for i in range(15, 18):
            store.append(A, {"role": "assistant", "content": f"answer {i}"})
        s2 = refresh_summary(store, A)
        assert s2.folded == 10 and s2.through == store.window(A, None)[9].seq
        assert refresh_summary(store, A) == s2  # nothing new to fold

    # --- task stack -------------------------------------------------------------------------------
    def test_task_stack_keeps_only_cited_results_of_recent_rounds(self, store):
        for t in range(5):
            store.record_results(A, f"t{t}", [CitedResult("", n, f"doc-{t}-{n}", f"title {t}.{n}") for n in (1, 2, 3)])
            if t != 3:  # round t3 cited nothing
                assert store.mark_cited(A, [2, 9] if t % 2 else [1, 3]) == (1 if t % 2 else 2)
        assert [r.id for r in store.cited(A, rounds=3)] == ["doc-4-1", "doc-4-3", "doc-2-1", "doc-2-3"]
        assert [r.id for r in store.cited(A, rounds=1)] == ["doc-4-1", "doc-4-3"]
        assert store.cited(A, rounds=0) == []
        assert store.mark_cited(A, [2], turn_id="t0") == 1
        assert [r.id for r in store.cited(A, rounds=10)][-3:] == ["doc-0-1", "doc-0-2", "doc-0-3"]
        r = store.cited(A, rounds=1)[0]
        assert (r.turn_id, r.n, r.title) == ("t4", 1, "title 4.1")

    def test_recording_results_twice_keeps_one_copy(self, store):
        res = [CitedResult("", 1, "d1"), CitedResult("", 2, "d2")]
        store.record_results(A, "t1", res)
        store.record_results(A, "t1", res)
        store.mark_cited(A, [1, 2])
        assert [r.id for r in store.cited(A)] == ["d1", "d2"]

    def test_task_stack_per_thread(self, store):
        store.record_results(A, "ta", [CitedResult("", 1, "alice-doc")], speaker="alice")
        store.record_results(A, "tb", [CitedResult("", 1, "bob-doc")], speaker="bob")
        assert store.mark_cited(A, [1], speaker="alice") == 1  # alice's latest turn, not bob's newer one
        assert [r.id for r in store.cited(A, speaker="alice")] == ["alice-doc"]
        assert store.cited(A, speaker="bob") == []

    # --- profile ----------------------------------------------------------------------------------
    def test_profile_facts_upsert_and_forget(self, store):
        store.remember(A, "u1", [Fact("budget", "5000 元", "m1"), Fact("location", "深圳")])
        store.remember(A, "u1", [Fact("budget", "8000 元", "m7")])
        assert [(f.key, f.value, f.source) for f in store.facts(A, "u1")] == [
            ("budget", "8000 元", "m7"), ("location", "深圳", None)]
        assert store.facts(A, "u2") == []
        assert store.forget(A, "u1", ["budget"]) == 1
        assert [f.key for f in store.facts(A, "u1")] == ["location"]
        assert store.forget(A, "u1") == 1 and store.facts(A, "u1") == []

    # --- concurrency ------------------------------------------------------------------------------
    def test_concurrent_appends_lose_nothing_and_duplicate_nothing(self, store):
        errors: list[BaseException] = []

        def writer(w: int) -> None:
            try:
                for i in range(15):
                    store.append(A, {"role": "user", "content": f"w{w} m{i}"}, message_id=f"w{w}-{i}")
                    store.append(A, {"role": "user", "content": "shared"}, message_id="shared")  # all race on one id
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        rows = store.messages(A)
        assert sorted(r.id for r in rows) == sorted([f"w{w}-{i}" for w in range(4) for i in range(15)] + ["shared"])
        assert len({r.seq for r in rows}) == len(rows)
