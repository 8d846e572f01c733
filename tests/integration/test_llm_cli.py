"""``convsearch rewrite --batch`` and ``convsearch eval rewrite`` with ``--rewriter llm|auto``, as subprocesses
talking to the loopback OpenAI-compatible server (and a clean error when no LLM is configured)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convsearch.rewrite import get_rewriter
from convsearch.testing.openai_server import FakeOpenAIServer, Reply, answer_by_query
from convsearch.types import Message

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

KEY = "sk-cli-SECRET-8d2b6e"
RECORDS = [
    {"id": "a1", "history": [], "history_roles": [], "question": "AnySearch 支持哪些检索方式？",
     "rewrite": "AnySearch 支持哪些检索方式？"},
    {"id": "a2", "history": ["AnySearch 支持哪些检索方式？", "支持 BM25、向量和混合检索。"],
     "history_roles": ["user", "assistant"], "question": "价格呢？", "rewrite": "AnySearch 的价格"},
    {"id": "b1", "history": ["Who founded SpaceX?", "Elon Musk founded SpaceX in 2002."],
     "history_roles": ["user", "assistant"], "question": "When did it first launch a rocket?",
     "rewrite": "When did SpaceX first launch a rocket?"},
]
ANSWERS = {"价格呢？": "AnySearch 的价格", "When did it first launch a rocket?": "When did SpaceX first launch a rocket?"}



@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps({**r, "dataset": "mini", "lang": "zh" if r["id"][0] == "a" else "en",
                                     "split": "dev", "needs_rewrite": bool(r["history"])}, ensure_ascii=False) + "\n"
                         for r in RECORDS), encoding="utf-8")
    return p


@pytest.fixture
def srv():
    with FakeOpenAIServer(answer_by_query(ANSWERS)) as s:
        yield s


def env_for(srv: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    return {"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
            "CONVSEARCH_LLM_API_KEY": KEY, **extra}


def _out(tmp_path: Path) -> list[dict]:
    return [json.loads(x) for x in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("args", [
    ("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--rewriter", "llm"),
    ("eval", "rewrite", "--data", "in.jsonl", "--rewriter", "llm"),
])
def test_llm_without_configuration_is_a_clean_error(run_cli, data, tmp_path, args):
    p = run_cli(*args)
    assert p.returncode == 3, p.stderr
    assert p.stderr.startswith("error: no LLM is configured: set CONVSEARCH_LLM_BASE_URL")
    assert "CONVSEARCH_LLM_MODEL" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_auto_without_configuration_is_the_rule_rewriter(run_cli, data, tmp_path):
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--rewriter", "auto")
    assert p.returncode == 0, p.stderr
    out = _out(tmp_path)
    assert [r["method"] for r in out] == ["rules"] * 3 and out[1]["rewrite"] == "AnySearch 的价格"


def test_batch_with_the_llm_rewriter(run_cli, data, tmp_path, srv):
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--rewriter", "llm", env=env_for(srv))
    assert p.returncode == 0, p.stderr
    out = _out(tmp_path)
    assert [r["id"] for r in out] == ["a1", "a2", "b1"]  # input order, though turns ran side by side
    assert [r["method"] for r in out] == ["gate", "llm", "llm"]
    assert [r["rewrite"] for r in out] == [RECORDS[0]["question"], "AnySearch 的价格",
                                          "When did SpaceX first launch a rocket?"]
    assert len(srv.requests) == 2  # the standalone first turn cost no call
    assert KEY not in p.stdout + p.stderr


def test_batch_with_auto_falls_back_to_rules_when_the_llm_is_slow(run_cli, data, tmp_path, srv):
    srv.latency_s = 3.0
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--rewriter", "auto",
                env=env_for(srv, CONVSEARCH_LLM_TIMEOUT_S="0.2", CONVSEARCH_LLM_UNSURE_BELOW="-1"))
    assert p.returncode == 0, p.stderr
    out = _out(tmp_path)
    assert [r["method"] for r in out] == ["gate", "rules", "rules"]
    assert out[1]["rewrite"] == "AnySearch 的价格" and "llm fell back: timed out" in out[1]["reason"]


def test_batch_with_the_learned_auto_asking_on_every_turn_falls_back_to_the_offline_answer(
        run_cli, data, tmp_path, srv):
    srv.latency_s = 3.0  # the learned auto (the default kind) with a threshold above every confidence
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--rewriter", "auto",
                env=env_for(srv, CONVSEARCH_LLM_TIMEOUT_S="0.2", CONVSEARCH_LLM_UNSURE_BELOW="1.5"))
    assert p.returncode == 0, p.stderr
    out = _out(tmp_path)
    offline = [get_rewriter("learned").rewrite([Message(r, c) for r, c in zip(rec["history_roles"], rec["history"])],
                                               rec["question"]).rewritten for rec in RECORDS]
    assert [r["rewrite"] for r in out] == offline
    asked = [r for r in out if "asked the LLM" in r["reason"]]
    assert len(asked) == 2 and all(r["method"] == "learned" and "timed out" in r["reason"] for r in asked)
    assert out[0]["reason"].startswith("nothing to ask (no_context): no LLM call")  # the first turn: no history


def test_eval_rewrite_with_the_llm(run_cli, data, srv):
    p = run_cli("eval", "rewrite", "--data", "in.jsonl", "--rewriter", "auto", "--json", env=env_for(srv))
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["rewriter"] == "auto"
    assert report["datasets"]["mini"]["systems"]["auto"]["em"] == 1.0


def test_search_uses_the_configured_llm(run_cli, srv, tmp_path):
    (tmp_path / "docs.jsonl").write_text(json.dumps({"id": "p", "title": "AnySearch 价格", "text": "AnySearch 的价格：专业版每月 99 元。"},
                                                    ensure_ascii=False) + "\n", encoding="utf-8")
    assert run_cli("index", "docs.jsonl").returncode == 0
    first = run_cli("search", "AnySearch 支持哪些检索方式？", "--session", "s1", "--json", env=env_for(srv))
    assert first.returncode == 0, first.stderr
    assert srv.requests == []  # a standalone first turn: no call
    srv.push(Reply.of("AnySearch 的价格"))
    p = run_cli("search", "价格呢？", "--session", "s1", "--json", env=env_for(srv))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["standalone_query"] == "AnySearch 的价格" and r["rewrite"]["method"] == "llm"
    assert len(srv.requests) == 1 and srv.messages(0)[-1]["content"] == "价格呢？"
