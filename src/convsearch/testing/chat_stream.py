"""A strict reader of ``chat.completion.chunk`` streams (tests and benchmarks of ``POST /v1/chat/completions``).

Every event is checked, not only the text: ``data:`` lines only, JSON objects of one id / model / created,
``object: chat.completion.chunk``, exactly one choice of index 0 with a ``delta`` (the role first, then text
only), no chunk after the one with ``finish_reason`` but the usage chunk (no choices), and ``[DONE]`` last.
A violation is a ``StreamError`` naming the event.

Example::

    with httpx.stream("POST", url, json=body, headers=h) as r:
        s = read_stream(r.iter_lines())
    s.content, s.final["citations"], s.usage
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


class StreamError(AssertionError):
    """A stream that is not a well-formed chat.completion.chunk stream."""


@dataclass
class ChatStream:
    """What a stream said: the content, every chunk, the one that finished, the usage chunk (if any)."""

    content: str = ""
    chunks: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    done: bool = False


def read_stream(lines: Iterable[str]) -> ChatStream:
    """Parse and check the lines of a server-sent chat stream (blank lines separate events)."""
    out = ChatStream()
    finished = False
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"event {len(out.chunks) + 1} (line {n + 1})"
        if out.done:
            raise StreamError(f"{where}: data after [DONE]: {line[:80]!r}")
        if not line.startswith("data: "):
            raise StreamError(f"{where}: not a data line: {line[:80]!r}")
        data = line[6:]
        if data == "[DONE]":
            out.done = True
            continue
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError as exc:
            raise StreamError(f"{where}: not JSON ({exc})") from exc
        if not isinstance(chunk, dict):
            raise StreamError(f"{where}: not an object")
        if "error" in chunk:
            raise StreamError(f"{where}: an error event: {chunk['error']}")
        _check_chunk(chunk, out, where)
        out.chunks.append(chunk)
        choices = chunk["choices"]
        if not choices:  # the usage chunk: after the finish, once
            if not finished or out.usage is not None or not isinstance(chunk.get("usage"), dict):
                raise StreamError(f"{where}: a chunk without choices must be the one usage chunk after the finish")
            out.usage = chunk["usage"]
            continue
        if finished:
            raise StreamError(f"{where}: a choice after finish_reason")
        delta = choices[0]["delta"]
        if len(out.chunks) == 1 and delta.get("role") != "assistant":
            raise StreamError(f"{where}: the first delta must carry role 'assistant'")
        if len(out.chunks) > 1 and set(delta) - {"content"}:
            raise StreamError(f"{where}: unexpected delta fields {sorted(set(delta) - {'content'})}")
        text = delta.get("content")
        if text is not None and not isinstance(text, str):
            raise StreamError(f"{where}: content is {type(text).__name__}")
        out.content += text or ""
        if choices[0]["finish_reason"] is not None:
            if choices[0]["finish_reason"] not in ("stop", "length"):
                raise StreamError(f"{where}: finish_reason {choices[0]['finish_reason']!r}")
            finished = True
            out.final = chunk
    if not out.done:
        raise StreamError("the stream ended without [DONE]")
    if not finished:
        raise StreamError("no chunk carried a finish_reason")
    return out


def _check_chunk(chunk: dict[str, Any], out: ChatStream, where: str) -> None:
    if chunk.get("object") != "chat.completion.chunk":
        raise StreamError(f"{where}: object is {chunk.get('object')!r}")
    for key, kind in (("id", str), ("model", str), ("created", int), ("choices", list)):
        if not isinstance(chunk.get(key), kind):
            raise StreamError(f"{where}: {key} missing or not a {kind.__name__}")
    if out.chunks:
        first = out.chunks[0]
        for key in ("id", "model", "created"):
            if chunk[key] != first[key]:
                raise StreamError(f"{where}: {key} changed from {first[key]!r} to {chunk[key]!r}")
    choices = chunk["choices"]
    if len(choices) > 1:
        raise StreamError(f"{where}: {len(choices)} choices")
    if choices:
        c = choices[0]
        if not isinstance(c, dict) or c.get("index") != 0 or not isinstance(c.get("delta"), dict) \
                or "finish_reason" not in c:
            raise StreamError(f"{where}: a choice needs index 0, a delta object and finish_reason")


__all__ = ["ChatStream", "StreamError", "read_stream"]
