"""The tests of the training code (``research/learned/``, outside the installed package): the repository root goes on
``sys.path`` so that ``research.learned`` imports from the checkout, as ``make train`` runs it."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
