"""The search agent's settings (``CONVSEARCH_AGENT_*``; the table in convsearch.config)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Section, Switch


@dataclass(frozen=True, slots=True)
class AgentSettings(Section):
    """Budgets of one agent task (searches, steps, time, prompt), result counts, and its search cache."""

    name = "agent"
    prefix = "CONVSEARCH_AGENT_"
    max_searches: int = 5
    max_steps: int = 6
    deadline_s: float = 30.0
    answer_reserve_s: float = 5.0
    llm_timeout_s: float = 15.0
    context_tokens: int = 6000
    max_answer_chars: int = 300
    strict: Switch = Switch.OFF
    top_k: int = 5
    top_k_compare: int = 8
    dynamic_count: Switch = Switch.ON
    top_k_fixed: int = 10
    compress: Switch = Switch.ON
    cache_size: int = 512
    cache_ttl_s: float = 300.0
    parallel: int = 4
    no_search_check: Switch = Switch.ON

    def check(self) -> None:
        self._require("max_steps", "deadline_s", "llm_timeout_s", "context_tokens", "max_answer_chars", "top_k",
                      "top_k_compare", "top_k_fixed", "cache_ttl_s", "parallel")
        self._require("max_searches", "cache_size", "answer_reserve_s", positive=False)


__all__ = ["AgentSettings"]
