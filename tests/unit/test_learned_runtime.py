"""What the learned path imports at run time: ``get_rewriter("learned")`` and ``learned.auto`` answer turns with
numpy arithmetic over the shipped model file, and load nothing of training, fitting or evaluation (issue 36, item 5).

Checked in a fresh interpreter (this test process may have imported anything), by the modules it has loaded after
a turn of each."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import json, sys
from convsearch.learned.auto import AskWhenUnsure
from convsearch.rewrite import get_rewriter
from convsearch.rewrite.enhance import EnhanceRequest, Passthrough
from convsearch.types import Message as M

h = (M("user", "What is The Waterboys?"), M("assistant", "A rock band formed in 1983 by Mike Scott."))
rw = get_rewriter("learned")
out = rw.rewrite(list(h), "What did they do in 1990?")
a = AskWhenUnsure(Passthrough(), rw).assess(EnhanceRequest("What did they do in 1990?", h))
print(json.dumps({"modules": sorted(sys.modules), "rewritten": out.rewritten, "source": a.source,
                  "folds": len(rw.resolver.models.folds)}))
"""


def test_the_learned_rewriter_and_auto_load_nothing_of_training() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert "Waterboys" in got["rewritten"] and got["source"] == "doubt" and got["folds"] == 0
    mods = got["modules"]
    assert not [m for m in mods if m.split(".")[0] in {"research", "sklearn", "torch", "scipy"}]
    assert not [m for m in mods if m.startswith("convsearch.eval")]  # the fold map is the evaluation's, not a turn's
    learned = {m.rsplit(".", 1)[1] for m in mods if m.startswith("convsearch.learned.")}
    training = {"train", "export", "experiments", "ask_train", "synth", "embcache", "labels", "data", "fit"}
    assert learned & training == set() and {"resolver", "ask", "auto", "rewriter"} <= learned
