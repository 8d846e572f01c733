"""A server logging to a file (stderr not a terminal) writes one line per record: the MCP SDK's rich handler
wrapped them at 80 columns (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
import httpx  # noqa: E402

from convsearch.backends.local import LocalIndex  # noqa: E402
from convsearch.testing.live_server import LiveServer  # noqa: E402

pytestmark = pytest.mark.integration


def test_server_warnings_are_one_line_each_in_a_log_file(tmp_path: Path, corpus) -> None:
    LocalIndex(tmp_path / "index", embedder=None).add(corpus[:3])
    with LiveServer(tmp_path) as srv:  # stderr goes to a temporary file
        r = httpx.post(srv.url + "/v1/search", json={"query": "AnySearch 价格"},
                       headers={"Authorization": "Bearer sk-unused"}, timeout=30)
        assert r.status_code == 200
        log = srv.stderr_text()
    lines = [x for x in log.splitlines() if "API key" in x or "CONVSEARCH_API_KEYS" in x]
    assert len(lines) == 1, log
    line = lines[0]
    assert "WARNING convsearch.server: a request carried an API key" in line and line.endswith("(logged once)")
    assert all(len(x) > 100 for x in lines)  # the whole record on its line
