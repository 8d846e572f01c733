"""Quality kept as data: rerun the rows of ``eval/expected.yaml`` and compare (pyserini 2cr style).

The file::

    rows:
      - name: canard-dev/rules
        command: eval rewrite --data ../shared/data/conv-rewrite/canard/dev.jsonl --rewriter rules --json
        tolerance: 0.01            # absolute, for every metric of the row
        expected:
          datasets.canard.systems.rules.bleu: 41.2345
          datasets.canard.systems.rules.faithful: null     # null = "expected undefined"

``command`` is the argv after ``convsearch`` (a string or a list); relative paths in it are resolved
against the repo root (the nearest ancestor of the YAML file holding ``pyproject.toml``). Each row
runs in-process. A row with an empty ``expected`` gets its default metrics on ``--update``.
"""

from __future__ import annotations

import math
import shlex
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConvsearchError, DataFileError
from .cli import RUNNERS, eval_app
from .data import load_yaml

DEFAULT_TOLERANCE = 0.01
REWRITE_METRICS = ("bleu", "em", "rest_p1", "rest_f1", "rest_f2", "gate_acc", "gate_f1", "changed", "faithful")
RETRIEVAL_METRICS = ("recall@10", "mrr@10", "ndcg@3")
FOLLOWUPS_METRICS = ("pass", "min_category")


@dataclass(slots=True)
class Row:
    """One condition: a command and the scores it should reproduce."""

    name: str
    argv: list[str]
    expected: dict[str, Any]
    tolerance: float = DEFAULT_TOLERANCE
    command_as_string: bool = True
    measured: dict[str, Any] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None
    seconds: float | None = None

    def command(self) -> str | list[str]:
        return shlex.join(self.argv) if self.command_as_string else list(self.argv)


# --- the file --------------------------------------------------------------------------------------
def load_rows(path: Path) -> list[Row]:
    """Parse the expected-scores YAML; any malformed row is a DataFileError naming it."""
    shown = str(path)
    doc = load_yaml(path)
    raw_rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(raw_rows, list):
        raise DataFileError(shown, "expected a mapping with a 'rows' list")
    rows: list[Row] = []
    for i, raw in enumerate(raw_rows, start=1):
        where = f"row {i}"
        if not isinstance(raw, dict) or "name" not in raw or "command" not in raw:
            raise DataFileError(shown, f"{where}: needs 'name' and 'command'")
        command = raw["command"]
        if isinstance(command, str):
            argv, as_string = shlex.split(command), True
        elif isinstance(command, list) and all(isinstance(a, str) for a in command):
            argv, as_string = list(command), False
        else:
            raise DataFileError(shown, f"{where} ({raw['name']}): 'command' must be a string or a list of strings")
        expected = raw.get("expected") or {}
        if not isinstance(expected, dict):
            raise DataFileError(shown, f"{where} ({raw['name']}): 'expected' must be a mapping")
        tol = raw.get("tolerance", DEFAULT_TOLERANCE)
        if not isinstance(tol, (int, float)) or tol < 0:
            raise DataFileError(shown, f"{where} ({raw['name']}): 'tolerance' must be a number >= 0")
        rows.append(Row(str(raw["name"]), argv, {str(k): v for k, v in expected.items()}, float(tol), as_string))
    return rows


def _header_comments(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            lines.append(line)
        else:
            break
    return "\n".join(lines).rstrip() + "\n" if lines else ""


def save_rows(path: Path, rows: list[Row]) -> None:
    """Write the rows back, keeping the file's leading comment block."""
    header = _header_comments(path) if path.is_file() else ""
    doc = {"rows": [{"name": r.name, "command": r.command(), "tolerance": r.tolerance, "expected": r.expected}
                    for r in rows]}
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
    path.write_text(header + body, encoding="utf-8")


def repo_root_for(path: Path) -> Path:
    """The nearest ancestor of ``path`` with a pyproject.toml (else the YAML file's parent's parent)."""
    start = path.resolve().parent
    for d in (start, *start.parents):
        if (d / "pyproject.toml").is_file():
            return d
    return start.parent


# --- metrics ---------------------------------------------------------------------------------------
def lookup(report: dict[str, Any], metric_path: str) -> Any:
    """``report["a"]["b"]["c"]`` for "a.b.c"; KeyError names the first missing part."""
    node: Any = report
    for part in metric_path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"{metric_path}: no {part!r}")
        node = node[part]
    return node


def default_metric_paths(kind: str, report: dict[str, Any]) -> list[str]:
    """The metrics a new row records: the rewriter's headline scores, or all four query sets."""
    if kind == "rewrite":
        system = report["rewriter"]
        return [f"datasets.{ds}.systems.{system}.{m}" for ds in report["datasets"] for m in REWRITE_METRICS]
    if kind == "followups":
        return [*(f"systems.{s}.{m}" for s in report["systems"] for m in FOLLOWUPS_METRICS),
                *(f"systems.{report['rewriter']}.categories.{c}"
                  for c in report["systems"][report["rewriter"]]["categories"])]
    if kind == "oracle":  # at the shipped threshold, per set: calls, recall, the oracle's, the rules' auto
        return [f"sets.{n}.shipped.{m}" for n in report["sets"]
                for m in ("threshold", "calls_per_100", "recall@10", "oracle_recall@10", "rules_auto.calls_per_100",
                          "rules_auto.recall@10")]
    if kind == "perturb":
        return ["pass_as_typed", *(f"perturbations.{p}.{m}" for p in report["perturbations"] for m in ("pass", "lost"))]
    return [*(f"systems.{q}.{m}" for q in ("raw", "system", "human", "dual") for m in RETRIEVAL_METRICS),
            "gap_closed", "n_queries"]


def matches(expected: Any, measured: Any, tolerance: float) -> bool:
    """Equal within ``tolerance`` (absolute); ``None`` only matches ``None``."""
    if expected is None or measured is None:
        return expected is None and measured is None
    try:
        e, v = float(expected), float(measured)
    except (TypeError, ValueError):
        return expected == measured
    if math.isnan(e) or math.isnan(v):
        return math.isnan(e) and math.isnan(v)
    return abs(e - v) <= tolerance + 1e-9


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    return value


# --- running ---------------------------------------------------------------------------------------
def _parse(argv: list[str]) -> tuple[str, dict[str, Any]]:
    """(command, params) for ``eval <command> ...`` using the real CLI's parser."""
    import typer.main
    from typer.exceptions import TyperException  # typer >= 0.20 vendors click; its errors derive from this

    if len(argv) < 2 or argv[0] != "eval" or argv[1] not in RUNNERS:
        raise ValueError(f"command must start with 'eval {' | '.join(RUNNERS)}', got {shlex.join(argv)!r}")
    cmd = typer.main.get_command(eval_app).commands[argv[1]]  # type: ignore[attr-defined]
    try:
        ctx = cmd.make_context(argv[1], list(argv[2:]))
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        raise ValueError(f"bad arguments: {message}") from exc
    return argv[1], dict(ctx.params)


def run_row(row: Row, root: Path) -> tuple[str, dict[str, Any]] | None:
    """Run one row in-process; None (and ``row.skipped`` set) when its data file is absent."""
    kind, params = _parse(row.argv)
    given = params["data"] if isinstance(params["data"], (list, tuple)) else [params["data"]]  # oracle: several
    paths = [Path(d) if Path(d).is_absolute() else root / d for d in given]
    missing = [p for p in paths if not p.exists()]
    if missing or not paths:
        row.skipped = f"data not found: {', '.join(map(str, missing)) or 'no --data'}"
        return None
    params["data"] = paths if isinstance(params["data"], (list, tuple)) else paths[0]
    params.pop("as_json", None)
    t0 = time.perf_counter()
    report = RUNNERS[kind](**params)
    row.seconds = time.perf_counter() - t0
    return kind, report


def _locate(path: Path) -> Path:
    """``path`` as given, or (when relative and absent) under the repo this package lives in."""
    if path.is_file() or path.is_absolute():
        return path
    candidate = Path(__file__).resolve().parents[3] / path  # src/convsearch/eval/regress.py → repo root
    return candidate if candidate.is_file() else path


def run_regress(expected_path: Path, *, update: bool = False, markdown: Path | None = None,
                allow_missing_data: bool = False, echo: Callable[[str], None] | None = None,
                names: Collection[str] | None = None) -> int:
    """Rerun every row (or only the rows ``names`` lists: the test suite spreads the rows over its parallel
    workers), print OK/FAIL/SKIP lines and return the exit code (0 ok, 1 FAIL, 2 data missing)."""
    if echo is None:
        import typer

        echo = typer.echo
    expected_path = _locate(expected_path)
    rows = load_rows(expected_path)
    if names is not None:
        if update:
            raise ValueError("--update rewrites the whole file: it cannot run a subset of the rows")
        wanted = set(names)
        unknown = wanted - {r.name for r in rows}
        if unknown:
            raise ValueError(f"no such row in {expected_path}: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r.name in wanted]
    root = repo_root_for(expected_path)
    t_all = time.perf_counter()
    n_ok = n_fail = n_error = 0
    for row in rows:
        try:
            result = run_row(row, root)
        except (ConvsearchError, ValueError, KeyError) as exc:
            row.error = str(exc)
            n_error += 1
            echo(f"ERROR {row.name}: {exc}")
            continue
        if result is None:
            echo(f"SKIP  {row.name}: {row.skipped}")
            continue
        kind, report = result
        paths = list(row.expected) or default_metric_paths(kind, report)
        echo(f"== {row.name}  ({row.seconds:.1f} s)  convsearch {shlex.join(row.argv)}")
        for path in paths:
            try:
                row.measured[path] = _rounded(lookup(report, path))
            except KeyError as exc:
                row.measured[path] = None
                row.status[path] = "FAIL"
                n_fail += 1
                echo(f"FAIL  {row.name}  {path}  missing from the report ({exc})")
                continue
            if path not in row.expected:
                row.status[path] = "NEW"
                echo(f"NEW   {row.name}  {path}  measured {_show(row.measured[path])}")
                continue
            ok = matches(row.expected[path], row.measured[path], row.tolerance)
            row.status[path] = "OK" if ok else "FAIL"
            n_ok += ok
            n_fail += not ok
            echo(f"{'OK  ' if ok else 'FAIL'}  {row.name}  {path}  measured {_show(row.measured[path])}  "
                 f"expected {_show(row.expected[path])}  (tol {row.tolerance:g})")
    n_skip = sum(r.skipped is not None for r in rows)
    echo(f"{n_ok} OK, {n_fail} FAIL, {n_error} ERROR, {n_skip} SKIP in {time.perf_counter() - t_all:.1f} s")
    if update:
        for row in rows:
            if row.measured:
                row.expected = dict(row.measured)
                row.status = {p: "OK" for p in row.measured}  # the new expectation: nothing fails it
        save_rows(expected_path, rows)
        echo(f"updated {expected_path}")
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        targets = load_targets(expected_path.with_name("targets.yaml"))
        markdown.write_text(markdown_report(rows, targets), encoding="utf-8")
        echo(f"wrote {markdown}")
    if n_error or (n_fail and not update):
        return 1
    if n_skip and not allow_missing_data:
        echo(f"error: {n_skip} row(s) skipped because their data is missing; pass --allow-missing-data to accept")
        return 2
    return 0


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


# --- markdown --------------------------------------------------------------------------------------
def _short(path: str) -> str:
    parts = path.split(".")
    if parts[0] == "datasets" and len(parts) == 5:  # datasets.<ds>.systems.<system>.<metric>
        return parts[4]
    if parts[0] == "systems" and len(parts) == 3:  # systems.<query set>.<metric>
        return f"{parts[1]} {parts[2]}"
    if parts[0] == "sets" and len(parts) >= 4 and parts[2] == "shipped":  # sets.<set>.shipped.<metric>[.<sub>]
        return " ".join(parts[3:])
    return path


def load_targets(path: Path) -> dict[str, Any]:
    """The targets file beside expected.yaml (``targets.yaml``), or nothing."""
    if not path.is_file():
        return {}
    data = load_yaml(path) or {}
    if not isinstance(data, dict):
        raise DataFileError(str(path), "expected a mapping with 'targets' and 'above_baseline' lists")
    return data


def _value(rows_by_name: dict[str, Row], name: str, path: str) -> Any:
    r = rows_by_name.get(name)
    return None if r is None else r.measured.get(path, r.expected.get(path))


def targets_report(rows: list[Row], targets: dict[str, Any] | None) -> list[str]:
    """MET / NOT MET per target: floors on metrics, and system-above-baseline pairs."""
    if not targets:
        return []
    by_name = {r.name: r for r in rows}
    out = ["## Targets", "", "| target | measured | floor | verdict |", "|---|---:|---:|---|"]
    for t in targets.get("targets", []):
        v = _value(by_name, t["row"], t["metric"])
        verdict = "n/a" if v is None else ("MET" if float(v) >= float(t["min"]) else "**NOT MET**")
        out.append(f"| {t.get('what', t['row'])} | {_show(v)} | {t['min']} | {verdict} |")
    for t in targets.get("above_baseline", []):
        metric_of = lambda name: next((p for p in (by_name[name].measured or by_name[name].expected)  # noqa: E731
                                       if p.endswith("." + t["metric"])), None) if name in by_name else None
        sys_path, base_path = metric_of(t["row"]), metric_of(t["baseline"])
        v = _value(by_name, t["row"], sys_path) if sys_path else None
        b = _value(by_name, t["baseline"], base_path) if base_path else None
        verdict = "n/a" if v is None or b is None else ("MET" if float(v) > float(b) else "**NOT MET**")
        out.append(f"| {t['row']} {t['metric']} above {t['baseline']} | {_show(v)} | {_show(b)} | {verdict} |")
    return out + [""]


def _metric(row: Row | None, metric: str) -> float | None:
    if row is None:
        return None
    for p in row.measured or row.expected:
        if p.endswith("." + metric):
            v = row.measured.get(p, row.expected.get(p))
            return None if v is None else float(v)
    return None


def generalisation_report(rows: list[Row]) -> list[str]:
    """Per set: restoration F1 of the rules on the whole set (and its change against the expected value, i.e.
    against the committed numbers when run without --update), on the tuning half and on the frozen half, and
    BLEU against copy per half; then the mean F1 across sets and the worst per-set change."""
    by_name = {r.name: r for r in rows}
    sets = [r.name[len("rewrite/"):-len("/rules")] for r in rows
            if r.name.startswith("rewrite/") and r.name.endswith("/rules") and r.name.count("/") == 2]
    sets = [s for s in sets if f"rewrite/{s}/rules/tune" in by_name]
    if not sets:
        return []
    out = ["## Generalisation (tuning half vs frozen half, split by dialog: `eval.split`)", "",
           ("| set | R-F1 all | Δ vs expected | R-F1 tune | R-F1 frozen | frozen − tune | BLEU tune (copy) | "
            "BLEU frozen (copy) |"), "|---|---:|---:|---:|---:|---:|---:|---:|"]
    f1s: list[float] = []
    deltas: list[tuple[float, str]] = []

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}"

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    for s in sets:
        full = by_name[f"rewrite/{s}/rules"]
        f1 = _metric(full, "rest_f1")
        exp = next((float(v) for p, v in full.expected.items() if p.endswith(".rest_f1") and v is not None), None)
        delta = None if f1 is None or exp is None else f1 - exp
        if f1 is not None:
            f1s.append(f1)
        if delta is not None:
            deltas.append((delta, s))
        t, f = (_metric(by_name.get(f"rewrite/{s}/rules/{h}"), "rest_f1") for h in ("tune", "frozen"))
        bt, bf = (_metric(by_name.get(f"rewrite/{s}/rules/{h}"), "bleu") for h in ("tune", "frozen"))
        ct, cf = (_metric(by_name.get(f"rewrite/{s}/passthrough/{h}"), "bleu") for h in ("tune", "frozen"))
        gap = None if t is None or f is None else f - t
        out.append(f"| {s} | {pct(f1)} | {'-' if delta is None else f'{100 * delta:+.1f}'} | {pct(t)} | {pct(f)} | "
                   f"{'-' if gap is None else f'{100 * gap:+.1f}'} | {num(bt)} ({num(ct)}) | {num(bf)} ({num(cf)}) |")
    fu = {h: _metric(by_name.get(f"followups/search-followups-dev/rules{'' if h == 'all' else '/' + h}"), "rules.pass")
          for h in ("all", "tune", "frozen")}
    out.append("")
    if f1s:
        out.append(f"Mean restoration F1 across the {len(f1s)} sets: **{100 * sum(f1s) / len(f1s):.1f}**; "
                   f"worst per-set "
                   f"change against the expected values: "
                   + (f"{100 * min(deltas)[0]:+.1f} ({min(deltas)[1]})" if deltas else "-") + ".")
    if fu["all"] is not None:
        out.append(f"Search follow-ups pass rate: {pct(fu['all'])}% (tune {pct(fu['tune'])}%, "
                   f"frozen {pct(fu['frozen'])}%).")
    return out + [""]


def markdown_report(rows: list[Row], targets: dict[str, Any] | None = None) -> str:
    """Pivot tables (one per command kind: rows × metrics), the targets, and the commands."""
    out = ["<!-- generated by `convsearch eval regress --markdown`; do not edit by hand -->", ""]
    for kind, title in (("rewrite", "Rewrite quality"), ("followups", "Search follow-ups (pass rate)"),
                        ("perturb", "Search follow-ups re-typed (pass rate; passing cases lost)"),
                        ("retrieval", "Retrieval"),
                        ("oracle", "auto with an oracle, at the shipped threshold (calls per 100 turns, recall@10)")):
        kind_rows = [r for r in rows if len(r.argv) > 1 and r.argv[1] == kind]
        if not kind_rows:
            continue
        columns: list[str] = []
        for r in kind_rows:
            for p in r.measured or r.expected:
                if _short(p) not in columns:
                    columns.append(_short(p))
        out += [f"## {title}", "", "| condition | " + " | ".join(columns) + " |",
                "|---|" + "---:|" * len(columns)]
        for r in kind_rows:
            cells = {}
            for p in r.measured or r.expected:
                value = r.measured.get(p, r.expected.get(p))
                mark = " ✗" if r.status.get(p) == "FAIL" else ""
                cells[_short(p)] = _show(value) + mark
            if r.skipped:
                cells = {c: "skip" for c in columns}
            elif r.error:
                cells = {c: "error" for c in columns}
            out.append(f"| {r.name} | " + " | ".join(cells.get(c, "") for c in columns) + " |")
        out.append("")
    out += generalisation_report(rows)
    out += targets_report(rows, targets)
    out += ["## Commands", "", "| condition | command | seconds |", "|---|---|---:|"]
    for r in rows:
        secs = f"{r.seconds:.1f}" if r.seconds is not None else ""
        out.append(f"| {r.name} | `convsearch {shlex.join(r.argv)}` | {secs} |")
    return "\n".join(out) + "\n"
