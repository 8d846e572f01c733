"""The ``eval`` commands that run the others: ``regress`` (every row of the expected-scores file, each parsed by the
``eval`` app itself), ``halves`` and ``oracle`` (``auto`` with the human rewrite for the LLM's answer). They are added
to ``eval.cli.eval_app`` here, above the runners they use, so that ``regress`` can read the app's commands without the
app importing it back."""

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


@eval_app.command("oracle")
def oracle_cmd(
    data: list[Path] = typer.Option([], "--data", help="A JSONL file (repeatable; default: iKAT 2023 train, CANARD dev "
                                                       "and CAsT 2019 under ../shared/data)."),
    choose_on: list[str] = typer.Option([], "--choose-on",
                                        help="Choose the threshold on these sets (folder/stem, repeatable; default: "
                                             "the iKAT 2023 and CANARD files)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Score only the first N turns of each file."),
    markdown: Path | None = typer.Option(None, "--markdown", help="Write the section here (an existing file gets "
                                                                   "just its oracle section replaced)."),
    as_json: bool = JsonOpt,
) -> None:
    """`auto` with an oracle (the human rewrite for the LLM's answer): LLM calls per 100 turns vs recall@10 per
    threshold of the learned confidence, and the threshold chosen on folds (docs/BENCHMARKS.md)."""
    from .oracle import DEV_SETS, oracle_report, render_markdown, splice

    paths = list(data) or [Path("../shared/data") / p for p in DEV_SETS]
    try:
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise InputError(f"no such data file: {', '.join(missing)}")
        report = oracle_report(paths, choose_on=list(choose_on) or None, limit=limit)
    except (ConvsearchError, ValueError) as exc:
        raise _fail(exc if isinstance(exc, ConvsearchError) else InputError(str(exc))) from None
    section = render_markdown(report)
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=1))
    elif markdown is None:
        typer.echo(section)
    if markdown is not None:
        doc = markdown.read_text(encoding="utf-8") if markdown.is_file() else ""
        markdown.write_text(splice(doc, section) if doc.strip() else section, encoding="utf-8")
