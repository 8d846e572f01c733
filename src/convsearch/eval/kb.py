"""``convsearch eval kb``: conversations over real documentation, scored on the cited context.

The conversations file (``eval/kb/conversations.yaml``) names document sets (a Debian package's folder and globs)
and conversations over them; each turn carries gold strings that the passage answering it contains. Each set is
synced into a local index under a cache dir (reused across runs: the sync skips unchanged files); each
conversation is played turn by turn through :func:`convsearch.pipeline.search_with_context` with the earlier
turns (and their ``answer``) as history. A turn is *answered* when a gold string occurs in the cited top-5 context
(``SearchResponse.context``); ``in_passages`` says whether one occurs in the top-5 passages' full text, so a
retrieval miss can be told from a snippet cut. Matching folds both sides with NFKC and collapses white space.

A file may also *replay* another file's conversations over its own sets (``eval/kb/formats.yaml``: the PDF builds of
books whose HTML build the dev conversations were written on): ``replay_from`` names the other file (relative to
this one) and ``replay`` maps each of this file's sets to the set there whose conversations it plays again.

A failing turn is labelled with its likely cause:

``boundary``      no indexed passage holds a gold string (split across passages, or not in the converted text)
``snippet``       a top-5 passage holds it, the cited context does not
``as-typed``      a follow-up searched as typed (the rewrite left it unchanged: right for a standalone one) and missed
``retrieval``     the query (rewritten or a first turn) did not bring the passage into the top 5
"""

from __future__ import annotations

import re
import shutil
import time
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataFileError, InputError
from .data import load_yaml
from .rewriters import load_rewriter
from .rewriters import option_name as _name

DEFAULT_CACHE = Path(".convsearch/kb-eval")
TOP_K = 5
LANGS = ("zh", "en")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

__all__ = ["Conversation", "DocSet", "KbFile", "Turn", "check_gold", "contains", "fold", "format_kb_table",
           "kb_report", "load_kb", "play", "sync_set"]


# --- the file --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DocSet:
    """One folder of documents: ``root`` with the ``include`` globs, provided by Debian package ``package``."""

    name: str
    root: Path
    include: tuple[str, ...]
    lang: str
    package: str = ""

    def files(self) -> list[Path]:
        """Every regular file the globs match under ``root``, sorted, each once."""
        found = {p for pattern in self.include for p in self.root.glob(pattern) if p.is_file()}
        return sorted(found)


@dataclass(frozen=True, slots=True)
class Turn:
    q: str
    gold: tuple[str, ...]
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    docs: str
    lang: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class KbFile:
    sets: dict[str, DocSet]
    conversations: tuple[Conversation, ...]


def _min_gold_len(gold: str) -> bool:
    """A gold string long enough to identify a passage: >= 3 CJK characters, or >= 4 characters otherwise."""
    return len(_CJK_RE.findall(gold)) >= 3 or len(gold.strip()) >= 4


def load_kb(path: Path, *, replays: bool = True) -> KbFile:
    """Parse and check the conversations file; any problem is a DataFileError naming the conversation and turn.

    With ``replay`` (and ``replay_from``) the conversations of another file's sets are played over this file's
    sets too, unchanged (ids, turns, language); ``replays=False`` refuses a file that replays (the source must not)."""
    shown = str(path)
    doc = load_yaml(path)
    replaying = isinstance(doc, dict) and "replay" in doc
    if replaying and not replays:
        raise DataFileError(shown, "a replayed file must hold its own conversations (it has 'replay' itself)")
    if isinstance(doc, dict) and replaying and "conversations" not in doc:
        doc = {**doc, "conversations": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("sets"), dict) \
            or not isinstance(doc.get("conversations"), list):
        raise DataFileError(shown, "expected a mapping with 'sets' (a mapping) and 'conversations' (a list)")
    sets: dict[str, DocSet] = {}
    for name, raw in doc["sets"].items():
        if not isinstance(raw, dict) or not raw.get("root") or not raw.get("include"):
            raise DataFileError(shown, f"set {name!r}: needs 'root' and 'include'")
        include = raw["include"] if isinstance(raw["include"], list) else [raw["include"]]
        lang = str(raw.get("lang", "en"))
        if lang not in LANGS:
            raise DataFileError(shown, f"set {name!r}: lang must be one of {', '.join(LANGS)}")
        sets[str(name)] = DocSet(str(name), Path(str(raw["root"])), tuple(str(g) for g in include), lang,
                                 str(raw.get("package", "")))
    convs: list[Conversation] = []
    seen: set[str] = set()
    for i, raw in enumerate(doc["conversations"], start=1):
        where = f"conversation {i}"
        if not isinstance(raw, dict) or not raw.get("id"):
            raise DataFileError(shown, f"{where}: needs an 'id'")
        cid = str(raw["id"])
        where = f"conversation {cid!r}"
        if cid in seen:
            raise DataFileError(shown, f"{where}: duplicate id")
        seen.add(cid)
        set_name = str(raw.get("docs", ""))
        if set_name not in sets:
            raise DataFileError(shown, f"{where}: docs {set_name!r} is not one of the sets ({', '.join(sets)})")
        lang = str(raw.get("lang", sets[set_name].lang))
        if lang not in LANGS:
            raise DataFileError(shown, f"{where}: lang must be one of {', '.join(LANGS)}")
        raw_turns = raw.get("turns")
        if not isinstance(raw_turns, list) or not raw_turns:
            raise DataFileError(shown, f"{where}: needs a non-empty 'turns' list")
        turns: list[Turn] = []
        for j, t in enumerate(raw_turns, start=1):
            if not isinstance(t, dict) or not isinstance(t.get("q"), str) or not t["q"].strip():
                raise DataFileError(shown, f"{where} turn {j}: needs 'q' (the user's words)")
            gold = t.get("gold")
            if isinstance(gold, str):
                gold = [gold]
            if not isinstance(gold, list) or not gold or not all(isinstance(g, str) and g.strip() for g in gold):
                raise DataFileError(shown, f"{where} turn {j}: 'gold' must be 1-3 non-empty strings")
            if len(gold) > 3:
                raise DataFileError(shown, f"{where} turn {j}: at most 3 gold strings, got {len(gold)}")
            short = [g for g in gold if not _min_gold_len(g)]
            if short:
                raise DataFileError(shown, f"{where} turn {j}: gold too short to identify a passage: {short[0]!r}")
            answer = t.get("answer")
            if answer is not None and not isinstance(answer, str):
                raise DataFileError(shown, f"{where} turn {j}: 'answer' must be a string")
            turns.append(Turn(t["q"].strip(), tuple(gold), answer))
        convs.append(Conversation(cid, set_name, lang, tuple(turns)))
    if replaying:
        convs += _replayed(path, doc, sets)
    return KbFile(sets, tuple(convs))


def _replayed(path: Path, doc: dict[str, Any], sets: dict[str, DocSet]) -> list[Conversation]:
    """The conversations ``doc['replay']`` plays again over this file's sets, from the file ``replay_from``."""
    shown = str(path)
    mapping, source = doc.get("replay"), doc.get("replay_from")
    if not isinstance(mapping, dict) or not mapping:
        raise DataFileError(shown, "'replay' must map this file's sets to sets of the 'replay_from' file")
    if not isinstance(source, str) or not source.strip():
        raise DataFileError(shown, "'replay' needs 'replay_from': the conversations file it replays (relative path)")
    other = load_kb(path.parent / source, replays=False)
    out: list[Conversation] = []
    for target, origin in mapping.items():
        if str(target) not in sets:
            raise DataFileError(shown, f"replay: {target!r} is not one of the sets ({', '.join(sets)})")
        played = [c for c in other.conversations if c.docs == str(origin)]
        if not played:
            raise DataFileError(shown, f"replay: {target!r} <- {origin!r}: no conversations over {origin!r} in "
                                       f"{source}")
        if sets[str(target)].lang != other.sets[str(origin)].lang:
            raise DataFileError(shown, f"replay: {target!r} <- {origin!r}: the sets' languages differ")
        out += [Conversation(c.id, str(target), c.lang, c.turns) for c in played]
    return out


# --- matching --------------------------------------------------------------------------------------
def fold(text: str) -> str:
    """NFKC (full-width forms, no-break spaces) and white space runs collapsed to one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def contains(text: str, gold: Iterable[str], *, folded: bool = False) -> str | None:
    """The first gold string that occurs in ``text`` (both folded), or None."""
    hay = text if folded else fold(text)
    for g in gold:
        if fold(g) in hay:
            return g
    return None


def check_gold(kb: KbFile, sets: Iterable[str] | None = None,
               text_of: Callable[[Path], str] | None = None) -> list[str]:
    """Gold strings found in no document of their set (converted text, folded): one line each; empty when all
    are there. ``text_of`` defaults to the ingest converter's text."""
    if text_of is None:
        from ..ingest.convert import convert

        def text_of(p: Path) -> str:
            return convert(p).text

    wanted = set(sets) if sets is not None else set(kb.sets)
    problems: list[str] = []
    for name in sorted(wanted):
        ds = kb.sets[name]
        golds = {(c.id, j, g) for c in kb.conversations if c.docs == name
                 for j, t in enumerate(c.turns, start=1) for g in t.gold}
        if not golds:
            continue
        texts = []
        for p in ds.files():
            try:
                texts.append(fold(text_of(p)))
            except DataFileError:
                continue
        if not texts:
            problems.append(f"{name}: no documents under {ds.root} (install {ds.package or 'the documents'})")
            continue
        for cid, j, g in sorted(golds):
            fg = fold(g)
            if not any(fg in t for t in texts):
                problems.append(f"{name}: {cid} turn {j}: gold {g!r} is in no document")
    return problems


# --- indexing --------------------------------------------------------------------------------------
def _settings(data_dir: Path, dense: bool) -> Any:
    from ..config import Settings

    return Settings.from_env(data_dir=str(data_dir), dense="on" if dense else "off")


def default_cache() -> Path:
    """``<data dir>/kb-eval`` (``.convsearch/kb-eval`` unless CONVSEARCH_DATA_DIR says otherwise)."""
    from ..config import Settings

    return Path(Settings.from_env().data_dir) / DEFAULT_CACHE.name


def set_dir(cache: Path, name: str, dense: bool) -> Path:
    """Where a set's index lives: ``<cache>/<set>`` (dense off) or ``<cache>/<set>-dense``."""
    return cache / (f"{name}-dense" if dense else name)


def sync_roots(ds: DocSet, files: Sequence[Path]) -> list[Path]:
    """What to hand the sync: the set's root folder when its globs select every file the sync would index there
    (one manifest, and files that leave the folder are pruned), else the selected files one by one."""
    from ..ingest.sync import kind_of

    chosen = set(files)
    indexable = (p for p in ds.root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in
                                                                          p.relative_to(ds.root).parts))
    if all(p in chosen for p in indexable if kind_of(p) is not None):
        return [ds.root]
    return list(files)


def sync_set(ds: DocSet, cache: Path, *, dense: bool, progress: Any = None) -> tuple[Any, Any, dict[str, Any]]:
    """Open (creating) the set's local index and sync its files into it; returns (backend, settings, stats)."""
    from ..backends.factory import open_local
    from ..ingest.sync import sync_paths

    files = ds.files()
    if not files:
        hint = f" (install the Debian package {ds.package}: scripts/kb-docs.sh)" if ds.package else ""
        raise InputError(f"set {ds.name}: no files match {', '.join(ds.include)} under {ds.root}{hint}")
    settings = _settings(set_dir(cache, ds.name, dense), dense)
    backend = open_local(settings, create=True)
    t0 = time.perf_counter()
    try:
        report = sync_paths(backend, sync_roots(ds, files), settings=settings, prune=True, progress=progress)
        if report.changed or report.removed or report.passages_deleted:
            # a cached index that had to replace passages keeps the deleted ones in its BM25 statistics until its
            # segments merge: scores, and so the numbers, would depend on the cache's history. Build it anew.
            backend.close()
            shutil.rmtree(settings.data_dir / "index")
            backend = open_local(settings, create=True)
            report = sync_paths(backend, sync_roots(ds, files), settings=settings, prune=True, progress=progress)
    except BaseException:
        backend.close()
        raise
    stats = {"files": len(files), "index_seconds": time.perf_counter() - t0, "passages": len(backend),
             "sync": _sync_summary(report)}
    return backend, settings, stats


def _sync_summary(report: Any) -> dict[str, Any]:
    """The SyncReport's counts as plain data (whatever fields it has that are numbers or lists)."""
    out: dict[str, Any] = {}
    names = getattr(report, "__dataclass_fields__", None) or getattr(report, "__dict__", {})
    for name in names:
        value = getattr(report, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = value
        elif isinstance(value, (list, tuple)):
            out[name] = len(value)
    failed = getattr(report, "failed", None) or []
    if failed:  # which files, and why (e.g. a contents-only page with no text), the first 20
        out["failed_files"] = [f"{Path(str(getattr(f, 'path', f))).name}: {getattr(f, 'reason', '')}"
                               for f in failed[:20]]
    return out


# --- playing ---------------------------------------------------------------------------------------
@dataclass(slots=True)
class TurnResult:
    conv: str
    index: int  # 0-based: 0 is the first turn
    q: str
    standalone: str
    gold: tuple[str, ...]
    in_context: str | None
    in_passages: str | None
    sources: list[str] = field(default_factory=list)
    cause: str | None = None


def _history(turns: Sequence[Turn]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for t in turns:
        out.append({"role": "user", "content": t.q})
        if t.answer:
            out.append({"role": "assistant", "content": t.answer})
    return out


def _source(hit: Any) -> str:
    md = hit.metadata or {}
    name = Path(str(md.get("source") or hit.url or hit.id)).name
    section = md.get("section")
    return f"{name} › {section}" if section else name


def play(conv: Conversation, backend: Any, rewriter: Any, settings: Any, *, top_k: int = TOP_K) -> list[TurnResult]:
    """Each turn of ``conv`` searched with the turns before it (and their answers) as history."""
    from ..pipeline import search_with_context

    results: list[TurnResult] = []
    for i, turn in enumerate(conv.turns):
        r = search_with_context(turn.q, _history(conv.turns[:i]), backend=backend, rewriter=rewriter,
                                settings=settings, top_k=top_k)
        hits = list(r.hits[:top_k])
        # each passage on its own: a gold string must not match across a title and a text, or two passages
        in_passages = next((g for h in hits for g in (contains(h.text, turn.gold),) if g), None)
        results.append(TurnResult(conv.id, i, turn.q, r.standalone_query, turn.gold, contains(r.context, turn.gold),
                                  in_passages, [_source(h) for h in hits]))
    return results


def _holders(backend: Any, golds: set[str]) -> dict[str, int]:
    """How many indexed passages hold each gold string (folded): 0 means no passage boundary keeps it whole."""
    counts = {g: 0 for g in golds}
    folded = {g: fold(g) for g in golds}
    it = getattr(backend, "iter_documents", None)
    if it is None or not golds:
        return counts
    for d in it():
        text = fold(d.text)
        for g, fg in folded.items():
            if fg in text:
                counts[g] += 1
    return counts


def _cause(t: TurnResult, holders: dict[str, int]) -> str:
    if not any(holders.get(g, 0) for g in t.gold):
        return "boundary"
    if t.in_passages:
        return "snippet"
    if t.index > 0 and fold(t.standalone) == fold(t.q):
        return "as-typed"
    return "retrieval"


def _rate(results: Sequence[TurnResult]) -> float | None:
    return round(sum(r.in_context is not None for r in results) / len(results), 4) if results else None


def _summary(results: Sequence[TurnResult]) -> dict[str, Any]:
    first = [r for r in results if r.index == 0]
    follow = [r for r in results if r.index > 0]
    in_passages = (round(sum(r.in_passages is not None for r in results) / len(results), 4) if results else None)
    return {"turns": len(results), "answered": _rate(results), "first": _rate(first), "followups": _rate(follow),
            "n_first": len(first), "n_followups": len(follow), "in_passages": in_passages}


def kb_report(data: Sequence[Path] | Path, sets: Sequence[str] | None = None, dense: Any = "off",
              cache: Path | None = None, rewriter: Any = "rules", limit: int | None = None,
              progress: Any = None, **_: Any) -> dict[str, Any]:
    """Sync each set, play its conversations, and score them (per set, per language, overall, the failures).

    ``data``: the conversations file, optionally followed by the document folders the run needs (the regression
    file lists them so that a machine without the documents skips the row); ``limit``: the first N conversations
    of each set."""

    paths = [Path(data)] if isinstance(data, (str, Path)) else [Path(p) for p in data]
    files = [p for p in paths if p.suffix in (".yaml", ".yml")]
    if len(files) != 1:
        raise InputError("give exactly one conversations file (.yaml) with --data; any other --data is a "
                         "documents folder the run needs")
    for p in paths:
        if p not in files and not p.exists():
            raise InputError(f"no such documents folder: {p}")
    kb = load_kb(files[0])
    wanted = list(sets) if sets else sorted({c.docs for c in kb.conversations})
    unknown = [s for s in wanted if s not in kb.sets]
    if unknown:
        raise InputError(f"no such set: {', '.join(unknown)} (sets: {', '.join(kb.sets)})")
    use_dense = _name(dense) == "on"
    cache_dir = Path(cache) if cache is not None else default_cache()
    rw = load_rewriter(_name(rewriter))
    t_all = time.perf_counter()
    report: dict[str, Any] = {"data": str(files[0]), "dense": "on" if use_dense else "off",
                              "rewriter": getattr(rw, "name", _name(rewriter)), "top_k": TOP_K, "sets": {},
                              "failures": []}
    everything: list[tuple[str, TurnResult]] = []
    try:
        for name in wanted:
            ds = kb.sets[name]
            convs = [c for c in kb.conversations if c.docs == name][:limit]
            backend, settings, stats = sync_set(ds, cache_dir, dense=use_dense, progress=progress)
            try:
                t0 = time.perf_counter()
                results = [r for c in convs for r in play(c, backend, rw, settings)]
                play_s = time.perf_counter() - t0
                missed = [r for r in results if r.in_context is None]
                holders = _holders(backend, {g for r in missed for g in r.gold})
            finally:
                backend.close()
            lang_of = {c.id: c.lang for c in convs}
            for r in missed:
                r.cause = _cause(r, holders)
                report["failures"].append({"set": name, "lang": lang_of[r.conv], "conv": r.conv, "turn": r.index + 1,
                                           "q": r.q, "standalone": r.standalone, "gold": list(r.gold),
                                           "in_passages": r.in_passages is not None, "cause": r.cause,
                                           "sources": r.sources})
            everything += [(lang_of[r.conv], r) for r in results]
            report["sets"][name] = {"lang": ds.lang, "package": ds.package, "conversations": len(convs), **stats,
                                    "play_seconds": round(play_s, 2), **_summary(results)}
            report["sets"][name]["index_seconds"] = round(stats["index_seconds"], 2)
    finally:
        rw.close()  # an LLM rewriter holds an HTTP client
    report["langs"] = {lang: _summary([r for lg, r in everything if lg == lang]) for lang in LANGS
                       if any(lg == lang for lg, _ in everything)}
    report["all"] = _summary([r for _, r in everything])
    causes: dict[str, int] = {}
    for f in report["failures"]:
        causes[f["cause"]] = causes.get(f["cause"], 0) + 1
    report["causes"] = causes
    report["seconds"] = round(time.perf_counter() - t_all, 2)
    return report


# --- formatting ------------------------------------------------------------------------------------
def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def format_kb_table(report: dict[str, Any]) -> str:
    """Sets and languages × turns, answered %, first turns %, follow-ups %, in top-5 passages %; then failures."""
    header = ["set", "lang", "turns", "answered", "first", "follow-ups", "in passages", "index s", "passages"]
    rows = []
    for name, s in report["sets"].items():
        rows.append([name, s["lang"], str(s["turns"]), _pct(s["answered"]), _pct(s["first"]), _pct(s["followups"]),
                     _pct(s["in_passages"]), f"{s['index_seconds']:.1f}", str(s["passages"])])
    for lang, s in report["langs"].items():
        rows.append(["(all)", lang, str(s["turns"]), _pct(s["answered"]), _pct(s["first"]), _pct(s["followups"]),
                     _pct(s["in_passages"]), "", ""])
    a = report["all"]
    rows.append(["(all)", "", str(a["turns"]), _pct(a["answered"]), _pct(a["first"]), _pct(a["followups"]),
                 _pct(a["in_passages"]), "", ""])
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header, ["-" * w for w in widths], *rows]]
    lines.append(f"dense={report['dense']} rewriter={report['rewriter']} top_k={report['top_k']} "
                 f"seconds={report['seconds']} causes: "
                 + (", ".join(f"{k} {v}" for k, v in sorted(report["causes"].items())) or "none"))
    for f in report["failures"]:
        lines.append(f"MISS [{f['cause']}] {f['set']} {f['conv']} #{f['turn']}: {f['q']}  →  {f['standalone']}  "
                     f"(gold {' | '.join(f['gold'])}; top: {'; '.join(f['sources'][:3])})")
    return "\n".join(lines)
