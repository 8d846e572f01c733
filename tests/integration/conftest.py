"""Integration fixtures for the history store: a real PostgreSQL when ``CONVSEARCH_TEST_PG_URL`` is set.

Start one with ``eval "$(scripts/pg.sh start)"`` (``.ci/run`` does). Without it the PostgreSQL tests skip
with that reason and the run ends with a line saying the history tests ran on SQLite only; with CI=true a
missing PostgreSQL fails them instead.
"""

from __future__ import annotations

import os
import uuid

import pytest

# Haystack sends usage telemetry and writes ~/.haystack/config.yaml unless this is off when it is imported;
# tests never reach the internet nor write outside tmp dirs
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

# Read at import: the autouse fixture in tests/conftest.py removes CONVSEARCH_* variables from every test.
PG_URL = os.environ.get("CONVSEARCH_TEST_PG_URL", "").strip()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SQLITE_ONLY = ("CONVSEARCH_TEST_PG_URL is not set: the history store tests ran on SQLite only "
               "(start PostgreSQL with: eval \"$(scripts/pg.sh start)\")")


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    """The test PostgreSQL's URL; skips (fails in CI) when there is none."""
    if not PG_URL:
        if IN_CI:
            pytest.fail("CI=true but CONVSEARCH_TEST_PG_URL is not set: .ci/run must start PostgreSQL "
                        "(scripts/pg.sh start) before make test")
        pytest.skip(SQLITE_ONLY)
    return PG_URL


def _admin(url: str):
    import psycopg

    return psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True, connect_timeout=5)


@pytest.fixture
def pg_url(pg_server_url: str):
    """A URL whose connections live in a fresh, empty schema (dropped afterwards): every test migrates
    its own database, as a first open in production would."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with _admin(pg_server_url) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in pg_server_url else "?"
    yield f"{pg_server_url}{sep}options=-csearch_path%3D{schema}"
    with _admin(pg_server_url) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


# The run's closing lines (which tiers ran on PostgreSQL, Redis, a Milvus server) are written by
# tests/conftest.py's pytest_terminal_summary: under pytest-xdist this conftest is imported by the workers only,
# and the controller prints the summary. It learns what ran from the reports' user properties set here.


# --- Redis (the shared web cache and outbound limiter), when CONVSEARCH_TEST_REDIS_URL is set -----------------

REDIS_URL = os.environ.get("CONVSEARCH_TEST_REDIS_URL", "").strip()
NO_REDIS = ("CONVSEARCH_TEST_REDIS_URL is not set: the shared web cache / rate limiter tests did not run on Redis "
            "(start one with: eval \"$(scripts/redis.sh start)\")")


@pytest.fixture
def redis_url() -> str:
    """A real Redis, flushed before the test; skips (fails in CI) when there is none."""
    if not REDIS_URL:
        if IN_CI:
            pytest.fail("CI=true but CONVSEARCH_TEST_REDIS_URL is not set: .ci/run must start Redis "
                        "(scripts/redis.sh start) before make test")
        pytest.skip(NO_REDIS)
    import redis

    url = _redis_db_for_this_worker(REDIS_URL)
    redis.Redis.from_url(url).flushdb()
    return url


def _redis_db_for_this_worker(url: str) -> str:
    """Under pytest-xdist each worker gets its own logical database (gw0 → 0, gw1 → 1, … of Redis's 16), so one
    worker's FLUSHDB never empties another's keys mid-test; a plain run keeps the URL's database."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{int(worker[2:]) % 16}"))


# --- Milvus: Lite in tmp_path always; a server tier through pymilvus's remote (gRPC) client ----------------
# CONVSEARCH_TEST_MILVUS_URI (+ CONVSEARCH_TEST_MILVUS_TOKEN) = a real Milvus server; without it the session
# starts Milvus Lite's engine behind a gRPC server on loopback (convsearch.testing.milvus_server, which refuses
# calls without its token), so the remote client path, the URI and the token handling still run.
MILVUS_URI = os.environ.get("CONVSEARCH_TEST_MILVUS_URI", "").strip()
MILVUS_TOKEN = os.environ.get("CONVSEARCH_TEST_MILVUS_TOKEN", "").strip() or None
_MILVUS_SERVER = {"where": ""}


@pytest.fixture(scope="session")
def _milvus_server_session(tmp_path_factory):
    if MILVUS_URI:
        _MILVUS_SERVER["where"] = f"the Milvus server at {MILVUS_URI}"
        yield MILVUS_URI, MILVUS_TOKEN
        return
    from convsearch.testing.milvus_server import MilvusLiteServer

    token = f"root:{uuid.uuid4().hex}"
    with MilvusLiteServer(tmp_path_factory.mktemp("milvus-server") / "data", token=token) as srv:
        _MILVUS_SERVER["where"] = (f"Milvus Lite's engine behind a gRPC server at {srv.uri} (token required; "
                                   "not Milvus standalone: set CONVSEARCH_TEST_MILVUS_URI=http://host:19530 for one)")
        yield srv.uri, token


@pytest.fixture
def milvus_server(_milvus_server_session, request):
    """(uri, token) of the server tier: a real Milvus server when CONVSEARCH_TEST_MILVUS_URI is set, else Milvus
    Lite behind a gRPC server on loopback, started once per session (per xdist worker); tests pick their own
    collection prefix. The test's report carries where it ran, for the run's summary line."""
    request.node.user_properties.append(("convsearch_milvus_server", _MILVUS_SERVER["where"]))
    return _milvus_server_session


@pytest.fixture(scope="module")
def openai_server():
    """A loopback OpenAI-compatible server (``convsearch.testing.openai_server``), one per test module; a module's
    own fixture resets it to the state its tests start from."""
    from convsearch.testing.openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        yield srv
