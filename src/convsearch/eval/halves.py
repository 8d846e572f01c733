"""``convsearch eval halves``: every dev set scored on its tuning half and its frozen half, as one table.

The sets are the ``rewrite/<set>/rules`` rows of ``eval/expected.yaml`` (their ``--data`` and ``--no-topic``),
plus the search follow-ups row; each is scored on all dialogs and on each half of ``eval.split`` with the rule
rewriter and the copy baseline, in-process. The report holds, per set and half: restoration F1 / precision,
BLEU and exact match (each beside copy), gate accuracy and *keep-EM* (of the questions the human left
unchanged, the share the rules left unchanged too). ``render_markdown`` turns it into section 5b of
docs/BENCHMARKS.md, with a start column read from a report saved earlier (``eval/halves_start.json``, the
numbers of the branch point), so the table is regenerated, never edited by hand.

Example::

    report = halves_report(Path("eval/expected.yaml"))
    report["sets"]["canard-dev"]["frozen"]["rest_f1"]
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from . import metrics as m
from .data import load_records
from .followups import evaluate_followups, followups_half, load_followups
from .regress import load_rows, repo_root_for
from .rewrite_eval import evaluate_rewrite
from .split import select_half

HALF_NAMES = ("all", "tune", "frozen")
RULES_KEYS = ("rest_f1", "rest_p1", "bleu", "em", "gate_acc", "changed")


class _Recorder:
    """The rule rewriter, remembering every output (keep-EM needs them; ``evaluate_rewrite`` returns scores)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "rules")
        self.outputs: list[str] = []

    def rewrite(self, history: Any, query: str, **kw: Any) -> Any:
        result = self.inner.rewrite(history, query, **kw)
        self.outputs.append(result.rewritten)
        return result

    def close(self) -> None:
        self.inner.close()


def dev_sets(expected: Path) -> list[tuple[str, Path, bool]]:
    """(name, data file, use topic) of every ``rewrite/<set>/rules`` row of the expected-scores file (with the
    topic: a ``--no-topic`` row reads a set a second time)."""
    root = repo_root_for(expected)
    out: list[tuple[str, Path, bool]] = []
    for row in load_rows(expected):
        parts = row.name.split("/")
        if len(parts) != 3 or parts[0] != "rewrite" or parts[2] != "rules" or "--data" not in row.argv \
                or "--no-topic" in row.argv:
            continue  # (the no-topic condition is a second reading of a set, not a set)
        data = Path(row.argv[row.argv.index("--data") + 1])
        out.append((parts[1], data if data.is_absolute() else root / data, "--no-topic" not in row.argv))
    return out


def followups_file(expected: Path) -> Path | None:
    """The data file of the expected-scores file's follow-ups row, if any."""
    for row in load_rows(expected):
        if len(row.argv) > 1 and row.argv[1] == "followups" and "--data" in row.argv and "--half" not in row.argv:
            data = Path(row.argv[row.argv.index("--data") + 1])
            return data if data.is_absolute() else repo_root_for(expected) / data
    return None


def other_followups(expected: Path) -> list[tuple[str, Path]]:
    """The expected-scores file's other follow-up rows (``followups/<name>/rules`` beside the dev set's): their
    names and data files, scored whole (they carry their own tuning / held-out split as separate files)."""
    dev, out = followups_file(expected), []
    for row in load_rows(expected):
        parts = row.name.split("/")
        if len(parts) == 3 and parts[0] == "followups" and parts[2] == "rules" and "--data" in row.argv \
                and "--half" not in row.argv:
            data = Path(row.argv[row.argv.index("--data") + 1])
            data = data if data.is_absolute() else repo_root_for(expected) / data
            if data != dev:
                out.append((parts[1], data))
    return out


def _set_scores(records: Sequence[Any], rewriter: _Recorder, topic: bool) -> dict[str, Any]:
    usable = [r for r in records if r.question.strip() and r.rewrite.strip()]
    rewriter.outputs = []
    report = evaluate_rewrite(records, rewriter, use_topic=topic)
    if len(report["datasets"]) != 1 or len(rewriter.outputs) != len(usable):
        # keep-EM pairs each question with the output recorded for it: a skipped turn would shift every pair
        raise DataFileError("<halves>", f"expected one dataset and {len(usable)} rewrites, got "
                            f"{len(report['datasets'])} and {len(rewriter.outputs)}")
    ds = next(iter(report["datasets"].values()))
    rules, copy = ds["systems"][rewriter.name], ds["systems"]["copy"]
    keep = [m.match_key(out) == m.match_key(r.question) for r, out in zip(usable, rewriter.outputs)
            if m.match_key(r.rewrite) == m.match_key(r.question)]
    out = {k: rules[k] for k in RULES_KEYS}
    out.update(n=ds["n"], copy_bleu=copy["bleu"], copy_em=copy["em"], n_keep=len(keep),
               keep_em=sum(keep) / len(keep) if keep else None)
    return out


def halves_report(expected: Path, *, only: Sequence[str] = (), compare: Sequence[str] = ()) -> dict[str, Any]:
    """Score the rules on every dev set of ``expected`` (all / tune / frozen) and on the follow-ups; each rewriter
    of ``compare`` (e.g. ``learned``) is scored beside them (``report["compare"][name]``, same shape as ``sets`` and
    ``followups``; a training file is scored out of fold, ``eval.cli.out_of_fold``)."""
    from ..rewrite import get_rewriter
    from .cli import out_of_fold

    t0 = time.perf_counter()
    rw = _Recorder(get_rewriter("rules"))
    others_rw = {name: _Recorder(get_rewriter(name)) for name in compare}
    cmp: dict[str, Any] = {name: {"sets": {}, "followups": {}} for name in compare}
    sets: dict[str, Any] = {}
    for name, data, topic in dev_sets(expected):
        if only and name not in only:
            continue
        records = load_records(data)
        sets[name] = {half: _set_scores(select_half(records, half), rw, topic) for half in HALF_NAMES}
        for cname, crw in others_rw.items():
            oof = out_of_fold(crw.inner, data)
            cmp[cname]["sets"][name] = {half: {**_set_scores(select_half(records, half), crw, topic),
                                               "out_of_fold": bool(oof)} for half in HALF_NAMES}
    followups: dict[str, Any] = {}
    path = followups_file(expected)
    if path is not None and not only:
        cases = load_followups(path)
        for half in HALF_NAMES:
            rep = evaluate_followups(followups_half(cases, half), rw.inner)
            s, c = rep["systems"][rw.name], rep["systems"]["copy"]
            followups[half] = {"n": s["n"], "pass": s["pass"], "min_category": s["min_category"],
                               "categories": s["categories"], "keep_exact": s["keep_exact"], "copy_pass": c["pass"]}
        for cname, crw in others_rw.items():
            out_of_fold(crw.inner, path)  # (the follow-up set is no training file: the full model)
            for half in HALF_NAMES:
                rep = evaluate_followups(followups_half(cases, half), crw.inner)
                s = rep["systems"][crw.name]
                cmp[cname]["followups"][half] = {"n": s["n"], "pass": s["pass"], "min_category": s["min_category"],
                                                 "categories": s["categories"]}
    others = {name: _pass_rates(load_followups(data), rw.inner) for name, data in other_followups(expected)} \
        if not only else {}
    out = {"sets": sets, "followups": followups, "others": others, "seconds": time.perf_counter() - t0}
    if compare:
        out["compare"] = cmp
    return out


def _pass_rates(cases: Sequence[Any], rewriter: Any) -> dict[str, Any]:
    rep = evaluate_followups(cases, rewriter)
    s, c = rep["systems"][rewriter.name], rep["systems"]["copy"]
    return {"n": s["n"], "pass": s["pass"], "copy_pass": c["pass"]}


def load_report(path: Path) -> dict[str, Any]:
    """A report saved with ``--json`` (the start column); a missing or malformed file is a DataFileError."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataFileError(str(path), "no such file") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataFileError(str(path), f"not a JSON report: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("sets"), dict):
        raise DataFileError(str(path), "expected a JSON object with a 'sets' mapping")
    return doc


# --- markdown ----------------------------------------------------------------------------------------
def _pct(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{100 * v:.{digits}f}"


def _get(report: dict[str, Any] | None, name: str, half: str, key: str) -> float | None:
    try:
        v = report["sets"][name][half][key]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    return None if v is None else float(v)


def _delta(now: float | None, start: float | None) -> str:
    return "" if now is None or start is None else f" ({100 * (now - start):+.2f})"


ANSWER_BEARING = ("cast2021-eval", "ikat2023-train", "ikat2024-test")
HEADING = "## 5b. Issue 15: offline rewriting that generalises (tuned vs frozen halves)"


def render_markdown(report: dict[str, Any], start: dict[str, Any] | None = None, *, command: str = "") -> str:
    """Section 5b: per set and half, R-F1 start → now, then precision, BLEU, EM, keep-EM and gate accuracy."""
    commit = (start or {}).get("commit", "")
    lines = [HEADING, "",
             "Every dev set is split by dialog into a tuning half and a frozen half (`eval/split.py`: SHA-1 parity of "
             "the dialog's first turn; `convsearch eval rewrite|followups --half tune|frozen`). Rules are changed "
             "looking at tuning-half cases only; the frozen half is scored beside it and its cases are not read. "
             + (f"*start* is the branch point (commit {commit}, before any issue-15 rule change), " if commit else "")
             + "R-F1 is restoration F1 (×100; the change since the start in brackets); *keep-EM*: of the questions "
             "the human left unchanged, the share the rules left unchanged too (n in brackets).", "",
             "<!-- generated by `convsearch eval halves --markdown`; do not edit by hand -->", "",
             "| set | half | R-F1 start → now | R-P1 | BLEU (copy) | EM (copy) | keep-EM (n) | gate acc |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    f1_now: list[float] = []
    changes: list[tuple[float, str]] = []
    for name, halves in report["sets"].items():
        for half in HALF_NAMES:
            s = halves[half]
            f1, f1s = s["rest_f1"], _get(start, name, half, "rest_f1")
            if half == "all":
                f1_now.append(f1)
            if f1s is not None:
                changes.append((f1 - f1s, f"{name} {half}"))
            keep = "-" if s["keep_em"] is None else f"{s['keep_em']:.3f} ({s['n_keep']})"
            shown = f"{_pct(f1s)} → **{_pct(f1)}**" if f1s is not None else f"**{_pct(f1)}**"
            lines.append(f"| {name if half == 'all' else ''} | {half} | {shown}{_delta(f1, f1s)} | "
                         f"{_pct(s['rest_p1'])} | {s['bleu']:.2f} ({s['copy_bleu']:.2f}) | {s['em']:.3f} "
                         f"({s['copy_em']:.3f}) | {keep} | {_pct(s['gate_acc'])}% |")
    lines.append("")
    if f1_now:
        starts = [_get(start, n, "all", "rest_f1") for n in report["sets"]]
        mean_start = (f"{_pct(sum(x for x in starts if x is not None) / len(starts))} → "
                      if start and all(x is not None for x in starts) else "")
        worst = min(changes) if changes else None
        mean_now = _pct(sum(f1_now) / len(f1_now))
        lines.append(f"Mean R-F1 across the {len(f1_now)} sets (all dialogs): {mean_start}**{mean_now}**"
                     + (f"; worst change since the start, over sets and halves: {100 * worst[0]:+.2f} ({worst[1]})."
                        if worst else "."))
    fu, fs = report.get("followups") or {}, (start or {}).get("followups") or {}
    if fu:
        def rate(d: dict[str, Any], h: str) -> str:
            return _pct(d[h]["pass"]) + "%" if h in d else "-"
        lines.append("search-followups pass: " + "; ".join(
            f"{h} {rate(fs, h) + ' → ' if fs else ''}**{rate(fu, h)}**" for h in HALF_NAMES)
            + f" (copy {_pct(fu['all']['copy_pass'])}%).")
        for h in HALF_NAMES:
            cats = ", ".join(f"{c} {_pct(v, 0)}%" for c, v in fu[h]["categories"].items())
            lines.append(f"categories, {h}: {cats}.")
    if report.get("others"):
        so = (start or {}).get("others") or {}
        lines.append("other follow-up sets (scored whole): " + "; ".join(
            f"{n} {(_pct(so[n]['pass']) + '% → ') if n in so else ''}**{_pct(o['pass'])}%** (n {o['n']}, copy "
            f"{_pct(o['copy_pass'])}%)" for n, o in report["others"].items()) + ".")
    lines += ["", *targets_lines(report, start), ""]
    for cname, c in (report.get("compare") or {}).items():
        lines += compare_lines(report, cname, c)
    if command:
        lines += [f"Rerun: `{command}` ({report.get('seconds', 0):.0f} s).", ""]
    return "\n".join(lines)


def compare_lines(report: dict[str, Any], name: str, c: dict[str, Any]) -> list[str]:
    """Rules and the rewriter ``name`` side by side per set and half: R-F1, EM, BLEU, gate accuracy, keep-EM."""
    out = [f"Rules and `{name}` side by side (rules / {name}; a set {name} was trained on is scored out of fold, "
           "marked OOF):", "",
           "| set | half | R-F1 | EM | BLEU | gate acc | keep-EM |", "|---|---|---:|---:|---:|---:|---:|"]
    for set_name, halves in c["sets"].items():
        for half in HALF_NAMES:
            r, x = report["sets"][set_name][half], halves[half]
            keep = " / ".join("-" if v is None else f"{v:.3f}" for v in (r["keep_em"], x["keep_em"]))
            label = (set_name + (" (OOF)" if x.get("out_of_fold") else "")) if half == "all" else ""
            out.append(f"| {label} | {half} | {_pct(r['rest_f1'])} / **{_pct(x['rest_f1'])}** | {r['em']:.3f} / "
                       f"**{x['em']:.3f}** | {r['bleu']:.2f} / **{x['bleu']:.2f}** | {_pct(r['gate_acc'])} / "
                       f"**{_pct(x['gate_acc'])}** | {keep} |")
    fu, cf = report.get("followups") or {}, c.get("followups") or {}
    if fu and cf:
        out += ["", "search-followups pass, rules / " + name + ": " + "; ".join(
            f"{h} {_pct(fu[h]['pass'])}% / **{_pct(cf[h]['pass'])}%**" for h in HALF_NAMES)
            + f" (lowest category, all: {_pct(fu['all']['min_category'])}% / {_pct(cf['all']['min_category'])}%)."]
    return out + [""]


def _verdict(ok: bool) -> str:
    return "MET" if ok else "**NOT MET**"


def targets_lines(report: dict[str, Any], start: dict[str, Any] | None = None) -> list[str]:
    """Issue 15's dev targets that these numbers decide, MET / NOT MET (with the start's halves beside the last)."""
    sets, fu = report["sets"], report.get("followups") or {}
    out = ["| target (issue 15, dev) | measured | verdict |", "|---|---|---|"]
    if fu:
        out.append(f"| search-followups ≥ 90% of cases pass | {_pct(fu['all']['pass'])}% (tune "
                   f"{_pct(fu['tune']['pass'])}%, frozen {_pct(fu['frozen']['pass'])}%) | "
                   f"{_verdict(fu['all']['pass'] >= 0.9)} |")
        out.append(f"| every category ≥ 75% | lowest {_pct(fu['all']['min_category'])}% | "
                   f"{_verdict(fu['all']['min_category'] >= 0.75)} |")
    for name in ANSWER_BEARING:
        if name in sets:
            a = sets[name]["all"]
            out.append(f"| {name}: BLEU and EM above copy | BLEU {a['bleu']:.2f} vs {a['copy_bleu']:.2f}, EM "
                       f"{a['em']:.3f} vs {a['copy_em']:.3f} | "
                       f"{_verdict(a['bleu'] > a['copy_bleu'] and a['em'] > a['copy_em'])} |")
            out.append(f"| {name}: restoration precision ≥ 50% | {_pct(a['rest_p1'])}% | "
                       f"{_verdict(a['rest_p1'] >= 0.5)} |")
    if "restoration200k-zh-valid" in sets:
        a = sets["restoration200k-zh-valid"]["all"]
        out.append(f"| restoration-200k valid: BLEU above copy, gate ≥ 65% | BLEU {a['bleu']:.2f} vs "
                   f"{a['copy_bleu']:.2f}, gate {_pct(a['gate_acc'])}% | "
                   f"{_verdict(a['bleu'] > a['copy_bleu'] and a['gate_acc'] >= 0.65)} |")
    off = [(n, sets[n]["frozen"]["rest_f1"] - sets[n]["tune"]["rest_f1"]) for n in sets]
    bad = [f"{n} {100 * d:+.1f}" for n, d in off if abs(d) > 0.01]
    was = ""
    if start:
        gaps = [(_get(start, n, "frozen", "rest_f1") or 0.0) - (_get(start, n, "tune", "rest_f1") or 0.0)
                for n in sets if _get(start, n, "tune", "rest_f1") is not None]
        if gaps:  # the halves differed before any tuning: small sets split by dialog
            was = f"; at the start {sum(abs(g) <= 0.01 for g in gaps)} of {len(gaps)}"
    out.append(f"| frozen half within 1 R-F1 point of the tuning half | {len(off) - len(bad)} of {len(off)} sets"
               + (f" (off: {', '.join(bad)})" if bad else "") + was + f" | {_verdict(not bad)} |")
    return out


def splice_section(doc: str, section: str, heading: str = HEADING) -> str:
    """``doc`` with the section that starts at ``heading`` (up to the next ``## `` heading) replaced."""
    start = doc.find(heading)
    if start < 0:
        raise DataFileError("<markdown>", f"no section {heading!r} to replace")
    nxt = doc.find("\n## ", start + len(heading))
    end = len(doc) if nxt < 0 else nxt + 1
    return doc[:start] + section.rstrip() + "\n\n" + doc[end:]


__all__ = ["compare_lines", "dev_sets", "halves_report", "load_report", "render_markdown", "splice_section",
           "targets_lines"]
