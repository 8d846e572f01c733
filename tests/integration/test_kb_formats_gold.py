"""The format-comparison set (eval/kb/formats.yaml): where the Debian PDFs are installed, every gold string of the
replayed conversations is in the PDF's converted text (the one with straight quotes too: the converter undoes the
curly quotes dblatex sets for ASCII ones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from convsearch.eval.kb import check_gold, load_kb

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def test_the_replayed_gold_strings_are_in_the_installed_pdfs() -> None:
    kb = load_kb(REPO / "eval" / "kb" / "formats.yaml")
    installed = [name for name, ds in kb.sets.items() if ds.files()]
    if not installed:
        pytest.skip("none of the Debian PDF builds is installed (scripts/kb-docs.sh)")
    assert check_gold(kb, installed) == []
