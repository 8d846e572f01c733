"""``serve(settings, workers=2)``: every setting reaches every worker, the ones made in code included (the workers
rebuild their app from the environment; before, only the data dir was handed to them)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import httpx
import pytest

from convsearch.testing.live_server import free_port, stop_process

pytestmark = pytest.mark.integration

SERVE = """
import sys
from convsearch.config import Settings
from convsearch.server import serve
# settings made in code, none of them in the environment: the workers must still see them
serve(Settings.from_env(data_dir=sys.argv[1], server_port=int(sys.argv[2]), rewriter="passthrough", window=2),
      workers=2, log_level="warning")
"""


def test_two_workers_see_the_settings_made_in_code(tmp_path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-c", SERVE, str(tmp_path), str(port)], env=env, stdout=log,
                                stderr=log)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"the server did not start: {log.read().decode(errors='replace')[-2000:]}")
                time.sleep(0.2)
            body = {"query": "价格呢？", "messages": [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}]}
            methods = set()
            for _ in range(12):  # new connections: the kernel spreads them over both workers
                with httpx.Client(timeout=10) as c:
                    r = c.post(f"{url}/v1/rewrite", json=body)
                assert r.status_code == 200, r.text
                methods.add(r.json()["rewrite"]["method"])
            assert methods == {"passthrough"}  # the rule rewriter (the default) would say "rules"
        finally:
            stop_process(proc)
