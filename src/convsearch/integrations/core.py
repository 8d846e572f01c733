"""What every framework adapter shares: one conversational turn, chat history in any framework's shape, and the
metadata each returned document carries (framework-free, so it is tested once)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import InputError
from ..types import Hit, Message, SearchResponse

if TYPE_CHECKING:
    from ..pipeline import TurnRequest

_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "system": "system",
          "tool": "tool", "function": "tool", "chatbot": "assistant", "model": "assistant"}


def _role(value: Any) -> str:
    raw = getattr(value, "value", value)  # enums (LlamaIndex MessageRole, Haystack ChatRole)
    role = _ROLES.get(str(raw).lower())
    if role is None:
        raise InputError(f"unknown chat role {raw!r}; use user/human, assistant/ai, system or tool")
    return role


def to_messages(history: Iterable[Any] | None) -> list[Message]:
    """Chat history from any of: our ``Message``, OpenAI-style dicts, ``(role, text)`` pairs, LangChain
    ``BaseMessage`` (``.type``), LlamaIndex ``ChatMessage`` (``.role``, ``.content``), Haystack ``ChatMessage``
    (``.role``, ``.text``)."""
    out: list[Message] = []
    for m in history or ():
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, Mapping):
            out.append(Message.from_dict({**m, "role": _role(m.get("role", ""))}))
        elif isinstance(m, tuple) and len(m) == 2:
            out.append(Message(_role(m[0]), str(m[1])))
        elif hasattr(m, "type") and hasattr(m, "content") and not hasattr(m, "role"):  # LangChain
            kind = "tool_result" if m.type == "tool" else ("tool_call" if getattr(m, "tool_calls", None) else "text")
            content = m.content if isinstance(m.content, str) else " ".join(
                p.get("text", "") if isinstance(p, dict) else str(p) for p in m.content)
            out.append(Message(_role(m.type), content, kind=kind))
        elif hasattr(m, "role"):
            text = getattr(m, "text", None)
            if text is None:
                text = getattr(m, "content", "")
            out.append(Message(_role(m.role), str(text or "")))
        else:
            raise InputError(f"cannot read a chat message from {type(m).__name__}")
    return out


def hit_metadata(r: SearchResponse, hit: Hit, n: int) -> dict[str, Any]:
    """The metadata a returned document carries: where it is from and how this turn found it."""
    cite = next((c for c in r.citations if c.id == hit.id), None)
    md: dict[str, Any] = {k: v for k, v in hit.metadata.items() if v is not None}
    md.update({
        "id": hit.id, "title": hit.title, "source": hit.url or hit.metadata.get("source", ""), "url": hit.url,
        "date": hit.date, "citation": cite.n if cite else n, "score": hit.score,
        "stale": bool(cite.stale) if cite else False,
        "standalone_query": r.standalone_query, "original_query": r.query,
        "rewrite_method": r.rewrite.method, "rewrite_reason": r.rewrite.reason,
    })
    return md


class Turn:
    """One conversational search turn over a ``convsearch.Pipeline``: ``run(query, history=…, session_id=…, k=…)``.

    ``pipeline``: a Pipeline to use (its owner closes it); otherwise one is built on first use over ``backend``
    from ``settings`` (default: the environment, ``Settings.from_env()``; the rewriter is ``CONVSEARCH_REWRITER``)
    and released by ``close()``. With neither, the backends the settings configure (``CONVSEARCH_BACKENDS``,
    default the local index under ``CONVSEARCH_DATA_DIR``) are opened on the first search and closed with it, as
    the framework's own retrievers build themselves from their environment. ``store`` (a ``convsearch.history``
    store) makes ``session_id`` mean a stored conversation under ``tenant`` / ``agent``: its history is the
    context and the turn is recorded; without a store a ``session_id`` is an InputError (nothing to read it from).
    """

    def __init__(self, backend: Any = None, settings: Settings | None = None, store: Any = None,
                 tenant: str = "local", agent: str = "integration", filters: Mapping[str, Any] | None = None, *,
                 pipeline: Any = None) -> None:
        self.backend, self.settings, self.store = backend, settings, store
        self.tenant, self.agent, self.filters = tenant, agent, dict(filters) if filters else None
        self._pipeline, self._owned = pipeline, pipeline is None

    @property
    def pipeline(self) -> Any:
        if self._pipeline is None:
            from ..pipeline import Pipeline

            self._pipeline = Pipeline.from_settings(self.settings or Settings.from_env(), backend=self.backend)
        return self._pipeline

    def _session(self, session_id: str | None) -> Any:
        if not session_id:
            return None
        if self.store is None:
            raise InputError("a session_id needs a history store (pass store=convsearch.history.open_store(...))")
        from ..history import Conversation, Scope

        return Conversation(self.store, Scope(self.tenant, self.agent, str(session_id)))

    def run(self, query: str, *, history: Sequence[Any] | None = None, session_id: str | None = None,
            k: int | None = None) -> SearchResponse:
        return self.pipeline.search(self._request(query, history, session_id, k))

    async def arun(self, query: str, *, history: Sequence[Any] | None = None, session_id: str | None = None,
                   k: int | None = None) -> SearchResponse:
        return await self.pipeline.asearch(self._request(query, history, session_id, k))

    def _request(self, query: str, history: Sequence[Any] | None, session_id: str | None,
                 k: int | None) -> TurnRequest:
        from ..pipeline import TurnRequest

        return TurnRequest(query, to_messages(history), top_k=k, filters=self.filters,
                           session=self._session(session_id))

    def close(self) -> None:
        """Release the Pipeline this Turn built (not one it was given, nor the backend)."""
        if self._owned and self._pipeline is not None:
            self._pipeline.close()
            self._pipeline = None


def missing(extra: str, exc: ImportError) -> ImportError:
    """The ImportError an adapter raises when its framework is absent: which pip install fixes it."""
    return ImportError(f"{exc.name or 'the framework'} is not installed: pip install 'convsearch[{extra}]'")
