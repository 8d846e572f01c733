"""One LLM client per endpoint per process (issue 27 item 1): the rewriter, the variants, HyDE and the agent of
every Pipeline and tenant share it, and CONVSEARCH_LLM_MAX_CONCURRENCY caps the process's requests in flight
(counted at the loopback LLM server while several tenants send turns at once). ``close()`` is part of the LLM
contract: a Pipeline gives its handles back, and the client closes with the last one."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytest.importorskip("openai")

import convsearch.llm as llm_mod  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.llm import Slots, shared_llm  # noqa: E402
from convsearch.pipeline import Pipeline  # noqa: E402
from convsearch.testing.openai_server import FakeOpenAIServer, Reply  # noqa: E402

pytestmark = pytest.mark.integration

HISTORY = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
           {"role": "assistant", "content": "支持 BM25、向量和混合检索。"}]
TENANTS = ("acme", "beta", "gamma", "delta")



def llm_env(srv: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    return {"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
            "CONVSEARCH_LLM_API_KEY": "sk-test", "CONVSEARCH_LLM_TIMEOUT_S": "20", **extra}


def test_several_tenants_at_once_stay_within_the_process_limit(tmp_path, corpus) -> None:
    pytest.importorskip("fastapi")
    import httpx

    from convsearch.backends.local import LocalIndex
    from convsearch.testing.live_server import LiveServer

    LocalIndex(tmp_path / "index", embedder=None).add(corpus)
    with FakeOpenAIServer(lambda req: Reply.of("AnySearch 的价格"), latency_s=0.15) as llm:
        env = llm_env(llm, CONVSEARCH_LLM_MAX_CONCURRENCY="2", CONVSEARCH_REWRITER="llm",
                      CONVSEARCH_LLM_VARIANTS="on", CONVSEARCH_HYDE="on", CONVSEARCH_LLM_CACHE_SIZE="0",
                      CONVSEARCH_CACHE_SIZE="0", CONVSEARCH_RATE_LIMIT="0", CONVSEARCH_DEADLINE_S="60",
                      CONVSEARCH_API_KEYS=",".join(f"{t}:key-{t}" for t in TENANTS))
        with LiveServer(tmp_path, env=env) as srv:
            def turn(i: int) -> int:
                t = TENANTS[i % len(TENANTS)]
                r = httpx.post(srv.url + "/v1/search", headers={"Authorization": f"Bearer key-{t}"}, timeout=60,
                               json={"query": "价格呢？" + "！" * (i // len(TENANTS)), "messages": HISTORY})
                return r.status_code

            with ThreadPoolExecutor(16) as pool:
                codes = list(pool.map(turn, range(16)))
    assert codes == [200] * 16
    assert len(llm.requests) >= 16  # every turn asked the LLM (rewrite; variants and HyDE too)
    assert llm.max_in_flight == 2, llm.max_in_flight  # the process's limit, whatever the tenants


def test_pipelines_of_every_tenant_share_one_client_and_give_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(lambda req: Reply.of("AnySearch 的价格")) as llm:
        s = Settings.from_env(llm_env(llm, CONVSEARCH_REWRITER="llm", CONVSEARCH_LLM_VARIANTS="on",
                                      CONVSEARCH_HYDE="on", CONVSEARCH_BACKENDS="memory"))
        closed: list[Any] = []
        monkeypatch.setattr(llm_mod.OpenAILLM, "close", lambda self: closed.append(self))
        before = dict(llm_mod._SHARED)
        pipes = [Pipeline.from_settings(s) for _ in TENANTS]
        new = {k: v for k, v in llm_mod._SHARED.items() if k not in before}
        assert len(new) == 1  # one client for the endpoint
        [(client, handles)] = new.values()
        assert handles == 3 * len(TENANTS)  # rewriter, variants and HyDE of each Pipeline hold a handle
        plan = pipes[0].plan("价格呢？", HISTORY)
        assert plan.standalone_query == "AnySearch 的价格" and len(llm.requests) >= 1
        for p in pipes[:-1]:
            p.close()
        assert closed == [] and llm_mod._SHARED[next(iter(new))][1] == 3
        pipes[-1].close()
        pipes[-1].close()  # idempotent
        assert closed == [client] and next(iter(new)) not in llm_mod._SHARED


def test_a_handle_is_the_llm_contract_with_close() -> None:
    with FakeOpenAIServer(lambda req: Reply.of("pong")) as llm:
        s = Settings.from_env(llm_env(llm))
        a, b = shared_llm(s), shared_llm(s)
        assert a.client is b.client and a.model == "fake-model"
        assert a.complete([{"role": "user", "content": "ping"}]).text == "pong"
        async def once() -> str:
            try:
                return (await b.acomplete([{"role": "user", "content": "ping"}])).text
            finally:
                await b.aclose()  # the async client of this loop, which ends here

        assert asyncio.run(once()) == "pong"
        a.close()
        assert b.complete([{"role": "user", "content": "ping"}]).text == "pong"  # b still holds it
        b.close()
        c = shared_llm(s)
        assert c.client is not a.client  # the last handle closed the old one; a new one starts fresh
        c.close()
    from convsearch.llm import LLM, NoLLM, ScriptedLLM

    assert "close" in dir(LLM) and callable(NoLLM().close) and callable(ScriptedLLM().close)


def test_slots_hold_one_limit_for_threads_and_every_event_loop() -> None:
    slots = Slots(2)
    lock = threading.Lock()
    now = [0]
    peak = [0]

    def enter() -> None:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])

    def leave() -> None:
        with lock:
            now[0] -= 1

    def sync_worker() -> None:
        assert slots.acquire(5)
        enter()
        time.sleep(0.02)
        leave()
        slots.release()

    async def one() -> None:
        assert await slots.aacquire(5)
        enter()
        await asyncio.sleep(0.02)
        leave()
        slots.release()

    def loop_worker() -> None:
        async def main() -> None:
            await asyncio.gather(*(one() for _ in range(8)))

        asyncio.run(main())

    threads = [threading.Thread(target=sync_worker) for _ in range(8)]
    threads += [threading.Thread(target=loop_worker) for _ in range(3)]  # three loops of their own
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert peak[0] == 2 and slots.in_flight == 0

    assert slots.acquire(1) and slots.acquire(1)
    t0 = time.perf_counter()
    assert not slots.acquire(0.05) and time.perf_counter() - t0 < 1  # full: gives up at its timeout

    async def cancelled() -> None:
        task = asyncio.ensure_future(slots.aacquire(5))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not await slots.aacquire(0.01)

    asyncio.run(cancelled())
    slots.release()
    slots.release()
    assert slots.in_flight == 0  # neither the timed-out nor the cancelled waiter kept a slot
