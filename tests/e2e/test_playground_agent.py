"""The playground's agent side in a real browser: the raw-vs-rewritten comparison under a rewritten turn, and
Answer mode streaming the agent's searches and answer (without an LLM configured: one line saying so, the most
relevant sources listed once, 0 LLM calls in the footer; with the loopback LLM: text a step streamed before its tool
call is dropped from the page when the retraction comes)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
KEY = "key-play"


def _need_browser() -> None:
    if not (Path(CHROMIUM).exists() and shutil.which(CHROMIUM)):
        if IN_CI:
            pytest.fail(f"CI=true: {CHROMIUM} is missing; .ci/run must install it")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium fonts-wqy-zenhei)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("CI=true: playwright is not installed (it is in the [servertest] extra)")
        pytest.skip("playwright is not installed: pip install 'convsearch[servertest]'")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:  # one per process: the sync API refuses a second one while this one runs
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


def _open(browser: object, url: str, errors: list[str]) -> object:
    pg = browser.new_context(locale="zh-CN", bypass_csp=True).new_page()  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(url + "/")
    pg.fill("#api-key", KEY)
    pg.dispatch_event("#api-key", "change")
    return pg


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, corpus, browser) -> Iterator[object]:
    from convsearch.testing.live_server import LiveServer

    d = tmp_path_factory.mktemp("playground-agent")
    LocalIndex(d / "index", embedder=None).add(corpus)
    with LiveServer(d, env={"CONVSEARCH_API_KEYS": f"play:{KEY}", "CONVSEARCH_RATE_LIMIT": "0"}) as srv:
        errors: list[str] = []
        pg = _open(browser, srv.url, errors)
        yield pg
        pg.context.close()  # type: ignore[attr-defined]
        assert errors == [], errors


def test_compare_and_answer_mode(page) -> None:
    page.fill("#query", "AnySearch 支持哪些检索方式？")
    page.click("#send")
    page.wait_for_function("document.querySelectorAll('[data-testid=turn]').length >= 1", timeout=20_000)
    page.fill("#query", "价格呢？")
    page.click("#send")
    page.wait_for_selector("[data-testid=compare]", timeout=20_000)
    compare = page.locator("[data-testid=compare]").first.inner_text()
    assert "raw: 价格呢？" in compare and "rewritten: AnySearch 的价格" in compare and "keyword hit gain: +" in compare

    page.select_option("#mode", "answer")
    page.fill("#query", "When was SpaceX founded?")
    page.click("#send")
    page.wait_for_selector("[data-testid=answer] [data-testid=citation]", timeout=30_000)
    card = page.locator("[data-testid=answer]").last
    assert card.locator("[data-testid=step]").first.inner_text().startswith("searched ")
    page.wait_for_function("[...document.querySelectorAll('[data-testid=answer] .meta')].some("
                           "(e) => e.textContent.includes('LLM calls'))", timeout=30_000)
    text = card.locator("[data-testid=answer-text]").inner_text()
    assert text == "no LLM configured: showing the most relevant sources"
    cites = card.locator("[data-testid=citation]").all_inner_texts()
    assert cites[0].startswith("[1] ") and any("SpaceX founding" in c for c in cites)
    assert card.inner_text().count("SpaceX founding") == 1  # the sources once
    assert "0 LLM calls · 0 tokens" in card.inner_text()


def test_answer_mode_drops_the_text_a_step_streamed_before_its_tool_call(tmp_path, corpus, browser) -> None:
    pytest.importorskip("openai")
    from convsearch.testing.live_server import LiveServer
    from convsearch.testing.openai_server import FakeOpenAIServer, Reply

    LocalIndex(tmp_path / "index", embedder=None).add(corpus)
    errors: list[str] = []
    with FakeOpenAIServer() as llm:
        llm.push(Reply.tool_calls_of(("web_search", {"query": "深圳 露营 天气"}), text="我先查一下天气预报。")
                 .streamed(chunk_delay_s=0.02),
                 Reply.of("深圳最近三天多云转晴，适合露营 [1]。").streamed(chunk_delay_s=0.02))
        env = {"CONVSEARCH_API_KEYS": f"play:{KEY}", "CONVSEARCH_RATE_LIMIT": "0", "CONVSEARCH_LLM_BASE_URL":
               llm.base_url, "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_AGENT_STRICT": "off"}
        with LiveServer(tmp_path, env=env) as srv:
            pg = _open(browser, srv.url, errors)
            pg.select_option("#mode", "answer")
            pg.fill("#query", "深圳最近三天适合露营吗？")
            pg.click("#send")
            pg.wait_for_selector("[data-testid=answer] [data-testid=citation]", timeout=30_000)
            text = pg.locator("[data-testid=answer] [data-testid=answer-text]").last.inner_text()
            pg.context.close()
    assert len(llm.requests) == 2 and text == "深圳最近三天多云转晴，适合露营 [1]。" and errors == []
