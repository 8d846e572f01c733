"""A search agent that answers with citations: a ReAct loop over any OpenAI-compatible LLM.

    from convsearch.agent import Agent
    agent = Agent(pipeline_or_backend, llm, Settings.from_env())     # llm: convsearch.llm.open_llm(settings)
    a = agent.ask("深圳最近三天适合露营吗？顺便告诉我露营要带什么")
    a.text                                                            # '…[1]…[3]'
    [(c.n, c.domain) for c in a.citations], a.flags.partial, [s.query for s in a.searches]
    for ev in agent.stream("compare A, B and C on battery and camera"): ...  # search/token/replace/citations/done

(a runnable example with a scripted LLM is in ``convsearch.agent.loop``.)

Modules: ``loop`` (the Agent), ``prompts`` (zh / en), ``policy`` and ``citations`` (pure decisions and the
citation check), ``search`` (the Searcher over a Pipeline or a backend; the scoped result cache), ``testing``
(scripted tool-call replies for ``llm.ScriptedLLM`` and a delayed backend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..infra.lazy import lazy_exports

if TYPE_CHECKING:
    from .citations import CitationCheck, check_citations
    from .loop import Agent
    from .search import BackendSearcher, PipelineSearcher, ResultCache, Searcher, as_searcher
    from .types import AgentEvent, Answer, AnswerCitation, AnswerFlags, LLMCallRecord, SearchStep, Source

# Loaded on first use: ``import convsearch`` registers the agent's settings section (``agent.settings``) without
# paying for the loop, its prompts and the server's tool schema (~0.2 s) until an agent is built.
_HOME = {"CitationCheck": "citations", "check_citations": "citations", "Agent": "loop", "BackendSearcher": "search",
         "PipelineSearcher": "search", "ResultCache": "search", "Searcher": "search", "as_searcher": "search",
         **{n: "types" for n in ("AgentEvent", "Answer", "AnswerCitation", "AnswerFlags", "LLMCallRecord",
                                  "SearchStep", "Source")}}


__getattr__ = lazy_exports(__name__, _HOME)

__all__ = ["Agent", "AgentEvent", "Answer", "AnswerCitation", "AnswerFlags", "BackendSearcher", "CitationCheck",
           "LLMCallRecord", "PipelineSearcher", "ResultCache", "SearchStep", "Searcher", "Source", "as_searcher",
           "check_citations"]
