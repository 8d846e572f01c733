"""The server's settings (``CONVSEARCH_SERVER_*``, the API keys, rate limits, body cap, MCP tenant, inline turns and
the chat endpoint's agent profiles; the table in convsearch.config)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from ..config import AutoSwitch, Section, named
from ..errors import ConfigError
from ..secret import Secret


class InlineTurns(StrEnum):
    """auto: a turn whose rewriter is pure CPU work runs on the event loop; off: always in a thread."""

    AUTO = "auto"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class ServerSettings(Section):
    """``convsearch serve`` / ``mcp``: bind address, authentication and per-tenant limits."""

    name = "server"
    prefix = "CONVSEARCH_SERVER_"
    host: str = "127.0.0.1"
    port: int = 8000
    auth: AutoSwitch = AutoSwitch.AUTO
    api_keys: Secret | None = field(default=None, repr=False, metadata={"env": "CONVSEARCH_API_KEYS"})
    api_keys_file: str = named("CONVSEARCH_API_KEYS_FILE", "")
    rate_limit: float = named("CONVSEARCH_RATE_LIMIT", 50.0)
    rate_burst: int = named("CONVSEARCH_RATE_BURST", 100)
    max_body_bytes: int = named("CONVSEARCH_MAX_BODY_BYTES", 1_048_576)
    mcp_tenant: str = named("CONVSEARCH_MCP_TENANT", "local")
    inline_turns: InlineTurns = named("CONVSEARCH_INLINE_TURNS", InlineTurns.AUTO)
    # the OpenAI-compatible chat endpoint (server/chat.py): agent profiles offered as models convsearch/NAME
    chat_profiles: str = named("CONVSEARCH_CHAT_PROFILES", "")

    def check(self) -> None:
        if not 0 < self.port < 65536:
            raise ConfigError(f"CONVSEARCH_SERVER_PORT must be between 1 and 65535, not {self.port}")
        self._require("rate_burst", "max_body_bytes")
        self._require("rate_limit", positive=False)
        self.chat_profile_specs  # noqa: B018 - parsed here so a bad value fails at start-up

    @property
    def chat_profile_specs(self) -> dict[str, tuple[str, ...]]:
        """CONVSEARCH_CHAT_PROFILES parsed: agent name → the backends it searches (() = all of the server's).

        >>> ServerSettings(chat_profiles="support-bot, web=tavily+brave").chat_profile_specs
        {'support-bot': (), 'web': ('tavily', 'brave')}
        """
        out: dict[str, tuple[str, ...]] = {}
        for item in (x.strip() for x in self.chat_profiles.split(",")):
            if not item:
                continue
            name, eq, spec = (x.strip() for x in item.partition("="))
            parts = [b.strip().lower() for b in spec.split("+")] if eq else []
            backends = tuple(dict.fromkeys(parts))
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) or name in out \
                    or not all(re.fullmatch(r"[a-z0-9_.-]{1,64}", b) for b in parts):
                raise ConfigError(f"CONVSEARCH_CHAT_PROFILES: bad profile {item!r}: NAME or NAME=BACKEND+BACKEND, "
                                  "NAME 1-64 letters, digits, '_', '.', '-', each once (the model is convsearch/NAME)")
            out[name] = backends
        return out


__all__ = ["InlineTurns", "ServerSettings"]
