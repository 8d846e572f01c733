"""``convsearch ask "…" [--session S] [--json]``: the search agent on the command line (registered by cli.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from ..config import Settings
from ..errors import ConfigError
from ..llm import llm_configured


def render_sources(answer: Any) -> str:
    """The numbered sources the answer cites, one per line."""
    lines = []
    for c in answer.citations:
        meta = ", ".join(x for x in (c.domain, c.date or "") if x)
        lines.append(f"[{c.n}] {c.title}" + (f" ({meta})" if meta else "") + (f"  {c.url}" if c.url else ""))
    return "\n".join(lines)


class AnswerPrinter:
    """Writes the streamed answer to ``out``. On a terminal tokens appear as they come; a ``replace`` cannot
    take back what is on the screen, so a retraction ("") ends the line and says on ``err`` that the text above
    was dropped, and a new whole text starts on its own lines. Elsewhere (a pipe, a file) the text is held and
    written once, at the end: what the file gets is exactly ``Answer.text``."""

    DROPPED = "  (the text above was dropped: the model searched further)"

    def __init__(self, out: Any, err: Any, *, live: bool | None = None) -> None:
        self.out, self.err = out, err
        self.live = bool(out.isatty()) if live is None else live
        self.text = ""  # what stands now

    def _write(self, s: str) -> None:
        self.out.write(s)
        self.out.flush()

    def token(self, piece: str) -> None:
        self.text += piece
        if self.live:
            self._write(piece)

    def replace(self, text: str) -> None:
        shown, self.text = self.text, text
        if not self.live:
            return
        if not text:
            if shown:
                self._write("\n")
                self.err.write(self.DROPPED + "\n")
                self.err.flush()
        else:
            self._write(("\n\n" if shown else "") + text)

    def finish(self) -> None:
        self._write(("" if self.live else self.text) + "\n")


def ask(question: str = typer.Argument(..., help="The question."),
        data_dir: Path | None = typer.Option(None, "--data-dir", help="Index directory (default: "
                                                "$CONVSEARCH_DATA_DIR or ./.convsearch)."),
        session: str | None = typer.Option(None, "--session", help="Session id: the conversation so far (and "
                                              "the results it cited) come from the history store; the answer is "
                                              "recorded there."),
        tenant: str = typer.Option("local", "--tenant", help="History scope: tenant."),
        agent: str = typer.Option("cli", "--agent", help="History scope: agent."),
        as_json: bool = typer.Option(False, "--json", help="Print the whole answer (steps, calls, flags) as JSON."),
        ) -> None:
    """Ask the search agent: it searches the index, then answers citing numbered sources. Needs an
    OpenAI-compatible LLM (CONVSEARCH_LLM_BASE_URL, CONVSEARCH_LLM_MODEL, CONVSEARCH_LLM_API_KEY); without
    one it shows the most relevant sources, says so, and exits 3 (configuration)."""
    s = Settings.from_env(data_dir=data_dir)
    from ..backends.registry import open_backend
    from ..llm import NoLLM, shared_llm
    from .loop import Agent

    backend = open_backend(s)  # CONVSEARCH_BACKENDS (default: the local index)
    store = None
    if session:
        from ..history import open_store

        store = open_store(s)
    configured = llm_configured(s)
    a = Agent(backend, shared_llm(s) if configured else NoLLM(), s, tenant=tenant, name=agent, store=store)
    if as_json:
        answer = a.ask(question, session=session)
        typer.echo(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2, default=str))
        _exit_unless(configured)
        return
    answer = None
    printer = AnswerPrinter(sys.stdout, sys.stderr)
    for ev in a.stream(question, session=session):
        if ev.kind == "search":
            st = ev.data
            what = (f"error: {st.error}" if st.error
                    else f"{len(st.results)} results" + (" (cached)" if st.cached else ""))
            typer.echo(f"  searching: {st.searched or st.query} → {what}", err=True)
        elif ev.kind == "token":
            printer.token(ev.data)
        elif ev.kind == "replace":  # a retracted preamble (""), or the repaired / degraded text
            printer.replace(ev.data)
        elif ev.kind == "done":
            answer = ev.data
    printer.finish()
    f = answer.flags if answer is not None else None
    if answer is not None and answer.citations and not (f and f.degraded and not f.no_llm):  # that text lists them
        typer.echo("\n" + render_sources(answer))
    _exit_unless(configured)


def _exit_unless(configured: bool) -> None:
    """Exit 3 (configuration) after the sources were shown, when no LLM is configured."""
    if not configured:
        from ..llm import NOT_CONFIGURED

        raise ConfigError(NOT_CONFIGURED)


def register(app: typer.Typer) -> None:
    app.command(name="ask")(ask)


__all__ = ["AnswerPrinter", "ask", "register", "render_sources"]
