"""The web playground end to end: ``convsearch serve`` on loopback, Debian's Chromium (headless) driven by
Playwright, a conversation typed into the chat box.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium fonts-wqy-zenhei``; ``.ci/run`` installs it). Locally a
missing browser is a visible skip; with CI=true it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex
from convsearch.types import Document

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
KEY = "key-play"
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
EVIL = Document("zh-evil", f"AnySearch 价格 {XSS} 请勿相信", title=f"AnySearch 价格 {XSS}",
                url="javascript:window.__pwned=3", date="2024-01-01")


def _need_browser() -> None:
    if not (Path(CHROMIUM).exists() and shutil.which(CHROMIUM)):
        msg = f"{CHROMIUM} is missing (apt-get install -y chromium fonts-wqy-zenhei)"
        if IN_CI:
            pytest.fail(f"CI=true: {msg}; .ci/run must install it")
        pytest.skip(msg)
    try:
        import playwright  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("CI=true: playwright is not installed (it is in the [servertest] extra)")
        pytest.skip("playwright is not installed: pip install 'convsearch[servertest]'")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, corpus) -> Iterator[str]:
    _need_browser()
    from convsearch.testing.live_server import LiveServer

    d = tmp_path_factory.mktemp("playground")
    LocalIndex(d / "index", embedder=None).add([*corpus, EVIL])
    with LiveServer(d, env={"CONVSEARCH_API_KEYS": f"play:{KEY}", "CONVSEARCH_RATE_LIMIT": "0"}) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, server: str) -> Iterator[object]:
    # bypass_csp: the escaping must hold on its own (the page's CSP is defence in depth, tested in unit tests);
    # it also lets Playwright evaluate its wait conditions
    ctx = browser.new_context(locale="zh-CN", bypass_csp=True)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server + "/")
    pg.fill("#api-key", KEY)
    pg.dispatch_event("#api-key", "change")
    yield pg
    ctx.close()
    assert errors == [], errors


def ask(page, text: str, n: int):
    page.fill("#query", text)
    page.click("#send")
    page.wait_for_function(f"document.querySelectorAll('[data-testid=turn], [data-testid=error]').length >= {n}",
                           timeout=20_000)
    return page.locator("[data-testid=turn]").nth(n - 1)


def test_a_conversation_shows_standalone_queries_why_variants_and_citations(page, tmp_path: Path) -> None:
    first = ask(page, "深圳最近三天适合露营吗？", 1)
    assert first.locator("[data-testid=standalone]").inner_text() == "深圳最近三天适合露营吗？"
    assert first.locator("[data-testid=method]").inner_text() == "gate"
    assert first.locator("[data-testid=result]").count() >= 1

    second = ask(page, "那番禺呢？", 2)
    assert second.locator("[data-testid=standalone]").inner_text() == "番禺最近三天适合露营吗"
    assert "深圳 → 番禺" in second.locator("[data-testid=reason]").inner_text()
    assert "variants:" in second.locator("[data-testid=variants]").inner_text()
    top = second.locator("[data-testid=result]").first
    assert top.inner_text().startswith("[1]") and "番禺最近三天露营天气" in top.inner_text()
    assert top.locator("a").get_attribute("href") == "https://weather.example/panyu"
    page.screenshot(path=str(tmp_path / "playground.png"), full_page=True)

    third = ask(page, "Who founded SpaceX?", 3)
    assert third.locator("[data-testid=result]").first.inner_text().startswith("[1] SpaceX founding")
    fourth = ask(page, "When did it first launch a rocket?", 4)
    assert fourth.locator("[data-testid=standalone]").inner_text() == "When did SpaceX first launch a rocket?"


def test_result_text_is_escaped_never_markup(page) -> None:
    turn = ask(page, "AnySearch 价格 请勿相信", 1)
    evil = turn.locator("[data-testid=result]", has_text="请勿相信").first
    assert XSS in evil.inner_text()  # shown as text …
    assert page.locator("[data-testid=turn] img").count() == 0  # … never parsed as markup
    assert page.locator("[data-testid=turn] script").count() == 0
    assert evil.locator("a").count() == 0  # a javascript: URL gets no link
    assert page.evaluate("window.__pwned === undefined")


def test_errors_are_shown_from_the_error_body(browser, server: str) -> None:
    ctx = browser.new_context(bypass_csp=True)
    pg = ctx.new_page()
    pg.goto(server + "/")
    pg.fill("#api-key", "wrong-key")
    pg.fill("#query", "hello")
    pg.click("#send")
    pg.wait_for_selector("[data-testid=error]", timeout=20_000)
    assert pg.locator("[data-testid=error]").inner_text().startswith("401")
    ctx.close()
