"""``MilvusLiteServer``: Milvus Lite's engine behind its own gRPC server, as a real process on loopback.

``python -m milvus_lite server`` speaks the Milvus protocol over gRPC (pymilvus's remote client path, the one a
``http://host:19530`` URI takes), but it accepts every call: it has no authentication. So this launcher builds
the same server (Lite's ``MilvusServicer`` on a gRPC server) with one interceptor added that refuses a call
whose ``authorization`` header is not ``base64(token)``, the header pymilvus sends and a Milvus server with
authentication on checks. That makes the token handling testable; it is still the Lite engine, not Milvus
standalone.

``python -m convsearch.testing.milvus_server --data-dir DIR [--token T]`` binds 127.0.0.1 on a free port and
prints ``listening on 127.0.0.1:PORT`` once it serves; SIGTERM stops it.

Example::

    with MilvusLiteServer(tmp_path / "milvus", token="root:secret") as srv:
        MilvusBackend(srv.uri, token=srv.token)
"""

from __future__ import annotations

import argparse
import base64
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from .live_server import stop_process


def _token_interceptor(token: str) -> Any:
    import grpc

    want = base64.b64encode(token.encode()).decode()

    def refuse(request: Any, context: Any) -> Any:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong token (authorization header)")

    class TokenCheck(grpc.ServerInterceptor):  # type: ignore[misc]
        def intercept_service(self, continuation: Any, details: Any) -> Any:
            got = dict(details.invocation_metadata or ()).get("authorization")
            if got == want:
                return continuation(details)
            return grpc.unary_unary_rpc_method_handler(refuse)

    return TokenCheck()


def serve(data_dir: str, *, token: str | None = None, host: str = "127.0.0.1", port: int = 0,
          parent_pipe: bool = False) -> None:
    """Serve until SIGTERM/SIGINT (or, with ``parent_pipe``, until stdin reaches EOF: the parent that holds the
    pipe's other end exited, even by SIGKILL, so no server outlives its test run); prints the bound address on
    stdout when ready."""
    from concurrent import futures

    import grpc
    from milvus_lite.adapter.grpc.servicer import MilvusServicer
    from milvus_lite.db import MilvusLite
    from pymilvus.grpc_gen import milvus_pb2_grpc

    db = MilvusLite(data_dir)
    size = 256 * 1024 * 1024  # Lite's own server and Milvus standalone allow 256 MB messages
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=10),
                         interceptors=[_token_interceptor(token)] if token else [],
                         options=[("grpc.max_receive_message_length", size), ("grpc.max_send_message_length", size)])
    milvus_pb2_grpc.add_MilvusServiceServicer_to_server(MilvusServicer(db), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if parent_pipe:
        threading.Thread(target=lambda: (sys.stdin.buffer.read(), stop.set()), daemon=True).start()
    server.start()
    print(f"listening on {host}:{bound}", flush=True)
    try:
        stop.wait()
    finally:
        server.stop(grace=2).wait()
        db.close()


class MilvusLiteServer:
    """This module as a child process (explicit interpreter, so the PID is the server's); ``uri`` once started."""

    def __init__(self, data_dir: Path | str, *, token: str | None = None, startup_s: float = 60.0) -> None:
        self.data_dir = Path(data_dir)
        self.token = token
        self.startup_s = startup_s
        self.uri = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    def start(self) -> MilvusLiteServer:
        cmd = [sys.executable, "-m", "convsearch.testing.milvus_server", "--data-dir", str(self.data_dir),
               "--parent-pipe"]
        if self.token:
            cmd += ["--token", self.token]
        self._out = tempfile.TemporaryFile()  # a file, not a pipe: nobody has to keep reading it
        # stdin is a pipe we never write to: it reaches EOF when this process is gone, and the server stops
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self._out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + self.startup_s
            while time.monotonic() < deadline:
                text = self.output()
                if "listening on " in text:
                    self.uri = "http://" + text.split("listening on ", 1)[1].split()[0]
                    return self
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the Milvus Lite gRPC server exited with {self.proc.returncode}: "
                                       f"{text[-2000:]}")
                time.sleep(0.05)
            raise RuntimeError(f"the Milvus Lite gRPC server did not start within {self.startup_s}s")
        except BaseException:  # a failed start or an interrupt while waiting: no child left behind
            self.close()
            raise

    def output(self) -> str:
        if self._out is None:
            return ""
        self._out.seek(0)
        return self._out.read().decode("utf-8", errors="replace")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def close(self, grace_s: float = 10.0) -> None:
        p, self.proc = self.proc, None
        stop_process(p, grace_s)
        if p is not None and p.stdin is not None:
            p.stdin.close()
        out, self._out = self._out, None
        if out is not None:
            out.close()

    def __enter__(self) -> MilvusLiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m convsearch.testing.milvus_server", description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--token", default=None, help="refuse calls without this token (as a Milvus server with auth)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port (printed when ready)")
    ap.add_argument("--parent-pipe", action="store_true", help="stop when stdin reaches EOF (the parent exited)")
    a = ap.parse_args(argv)
    serve(a.data_dir, token=a.token, host=a.host, port=a.port, parent_pipe=a.parent_pipe)


if __name__ == "__main__":
    main()

__all__ = ["MilvusLiteServer", "serve"]
