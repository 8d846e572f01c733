"""The format-comparison set (eval/kb/formats.yaml): where the Debian PDFs are installed, every gold string of the
replayed conversations is in the PDF's converted text but the one the PDF typesets with other quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from convsearch.eval.kb import check_gold, load_kb

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# the HTML has straight quotes where the PDF (dblatex) sets ”-v”: a finding about the set, kept visible here
KNOWN = {'debref-en-pdf: en-deb-screen turn 2: gold \'run ssh with the "-v" option\' is in no document'}


def test_the_replayed_gold_strings_are_in_the_installed_pdfs() -> None:
    kb = load_kb(REPO / "eval" / "kb" / "formats.yaml")
    installed = [name for name, ds in kb.sets.items() if ds.files()]
    if not installed:
        pytest.skip("none of the Debian PDF builds is installed (scripts/kb-docs.sh)")
    problems = set(check_gold(kb, installed))
    assert problems <= KNOWN, problems - KNOWN
