"""``LiveServer``: ``convsearch serve`` as a real process on a free loopback port (tests and benchmarks).

Started with an explicit interpreter (so the PID is the server's own), ready when ``/healthz`` answers,
stopped by that PID (SIGTERM, then SIGKILL after a grace period).

Example::

    with LiveServer(data_dir, env={"CONVSEARCH_API_KEYS": "acme:k1"}) as srv:
        httpx.post(srv.url + "/v1/search", json={"query": "价格呢？"}, headers={"X-API-Key": "k1"})
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def stop_process(p: subprocess.Popen[bytes] | None, grace_s: float = 10.0) -> None:
    """SIGTERM a child we started, SIGKILL it after ``grace_s``; nothing when it is gone already."""
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(grace_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(5)


def sse_events(response: Any) -> Iterator[tuple[str | None, Any]]:
    """(event name, JSON data) per Server-Sent Event of a streamed ``httpx`` response, as they arrive."""
    event = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


class LiveServer:
    """``python -m convsearch.cli serve`` over ``data_dir`` with ``env`` added to a CONVSEARCH_*-free environment
    (dense retrieval off unless ``env`` says otherwise). ``prefix`` goes before the interpreter: a command that
    execs the rest keeps the PID the server's own (e.g. ``unshare -m`` with a read-only bind mount)."""

    def __init__(self, data_dir: Path | str, *, env: dict[str, str] | None = None, args: tuple[str, ...] = (),
                 host: str = "127.0.0.1", startup_s: float = 30.0, log: IO[bytes] | None = None,
                 prefix: tuple[str, ...] = ()) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = free_port(host)
        self.url = f"http://{host}:{self.port}"
        self.startup_s = startup_s
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
        self._env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
        self._env.update(env or {})
        self._args = args
        self._prefix = prefix
        self._log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "LiveServer":
        cmd = [*self._prefix, sys.executable, "-m", "convsearch.cli", "serve", "--data-dir", str(self.data_dir),
               "--host", self.host, "--port", str(self.port), "--log-level", "warning", *self._args]
        # a file, not a pipe: a chatty server must never block on a full pipe nobody reads
        self._stderr = self._log or tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, env=self._env, stdin=subprocess.DEVNULL,
                                     stdout=self._log or subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                rc, err = self.proc.returncode, self.stderr_text()
                self.close()
                raise RuntimeError(f"convsearch serve exited with {rc}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.05)
        self.close()
        raise RuntimeError(f"convsearch serve did not answer /healthz within {self.startup_s}s")

    def stop(self, grace_s: float = 10.0) -> None:
        p, self.proc = self.proc, None
        stop_process(p, grace_s)

    def stderr_text(self) -> str:
        """What the server wrote to stderr so far (empty when ``log`` was given)."""
        f = getattr(self, "_stderr", None)
        if f is None or f is self._log:
            return ""
        f.seek(0)
        return f.read().decode("utf-8", errors="replace")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def __enter__(self) -> "LiveServer":
        return self.start()

    def close(self) -> None:
        """Stop the server and release its log file."""
        self.stop()
        f, self._stderr = getattr(self, "_stderr", None), None
        if f is not None and f is not self._log:
            f.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["LiveServer", "free_port", "sse_events", "stop_process"]
