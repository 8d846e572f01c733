"""The ``eval`` commands that run the others: ``regress`` (every row of the expected-scores file, each parsed by the
``eval`` app itself) and ``halves``. They are added to ``eval.cli.eval_app`` here, above the runners they use, so that
``regress`` can read the app's commands without the app importing it back (``oracle``, a runner ``regress`` reads,
lives in ``eval.cli``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import ConvsearchError, InputError
from .cli import JsonOpt, _fail, eval_app
from .halves import halves_report, load_report, render_markdown, splice_section
from .regress import run_regress

__all__ = ["eval_app"]


@eval_app.command("regress")
def regress_cmd(
    expected: Path = typer.Option(Path("eval/expected.yaml"), "--expected", help="Expected scores (YAML)."),
    update: bool = typer.Option(False, "--update", help="Rewrite the expected values from this run."),
    markdown: Path | None = typer.Option(None, "--markdown", help="Also write a markdown table here."),
    allow_missing_data: bool = typer.Option(False, "--allow-missing-data",
                                            help="Exit 0 when rows are skipped because the data is absent."),
) -> None:
    """Rerun every row of the expected-scores file and print OK / FAIL per metric; exit 1 on any FAIL."""
    try:
        code = run_regress(expected, update=update, markdown=markdown, allow_missing_data=allow_missing_data)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    if code:
        raise typer.Exit(code)


@eval_app.command("halves")
def halves_cmd(
    expected: Path = typer.Option(Path("eval/expected.yaml"), "--expected",
                                  help="Expected scores (YAML): its rewrite/<set>/rules and followups rows name "
                                       "the sets."),
    start: Path | None = typer.Option(Path("eval/halves_start.json"), "--start",
                                      help="A report saved with --json: the start column (a missing file: none)."),
    markdown: Path | None = typer.Option(None, "--markdown",
                                         help="Write section 5b here; an existing file that holds the section "
                                              "gets just that section replaced."),
    only: list[str] = typer.Option([], "--only", help="Score only this set (repeatable; no follow-ups then)."),
    compare: list[str] = typer.Option(["learned"], "--compare",
                                      help="Also score this rewriter beside the rules (repeatable; out of fold on "
                                           "its training files). --compare none: the rules alone."),
    as_json: bool = JsonOpt,
) -> None:
    """Every dev set on its tuning and its frozen half (rules vs copy): the table of docs/BENCHMARKS.md 5b."""
    try:
        base = load_report(start) if start is not None and start.is_file() else None
        report = halves_report(expected, only=only, compare=[c for c in compare if c != "none"])
        if base is not None:
            report["start"] = base.get("commit", str(start))
        if as_json:
            typer.echo(json.dumps(report, ensure_ascii=False, indent=1))
        section = render_markdown(report, base, command="convsearch eval halves --markdown docs/BENCHMARKS.md")
        if markdown is not None:
            doc = markdown.read_text(encoding="utf-8") if markdown.is_file() else ""
            if doc.strip() and "## 5b." not in doc:  # never replace a whole file that is something else
                raise InputError(f"{markdown} has no section '## 5b.' to replace (give a new file, or one that has it)")
            markdown.write_text(splice_section(doc, section) if doc.strip() else section, encoding="utf-8")
        elif not as_json:
            typer.echo(section)
    except ConvsearchError as exc:
        raise _fail(exc) from None
