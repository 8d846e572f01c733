"""How the CLI prints a turn (``convsearch search``, ``chat`` and the demo)."""

from __future__ import annotations

import json
from typing import Any

from .format import heading, origin

SHOW_ANALYSIS = [False]


def render_turn(r: Any, *, max_results: int = 5) -> str:
    """Human-readable summary of one turn (with ``--debug``, the turn's analysis too)."""
    rw = r.rewrite
    arrow = "→" if rw.changed else "="
    lines = [f"  query     : {r.query}",
             f"  standalone: {arrow} {r.standalone_query}   [{rw.method}: {rw.reason}]"
             + ("  (fell back)" if rw.fell_back else "")]
    if r.variants:
        lines.append(f"  variants  : {' | '.join(r.variants)}")
    if SHOW_ANALYSIS[0] and r.trace.facts is not None:
        described = r.trace.facts.describe(candidates=True)
        lines.append(f"  analysis  : {json.dumps(described, ensure_ascii=False, default=str)}")
    lines.append(f"  dedup     : {r.trace.hits_before_dedup} hits → {r.trace.hits_after_dedup} after dedup")
    for note in r.trace.notes:
        lines.append(f"  note      : {note}")
    for c in r.citations[:max_results]:
        # a passage of an indexed file names its section, file and pages: "Guide › NFS (guide.pdf, p. 12)"
        meta = ", ".join(x for x in (c.provider, *origin(c), c.date, "UNDATED" if c.undated else "",
                                     "STALE" if c.stale else "") if x)
        snippet = c.snippet if len(c.snippet) <= 90 else c.snippet[:90] + "…"
        lines.append(f"  [{c.n}] {heading(c)}{f' ({meta})' if meta else ''}  id={c.id}\n      {snippet}")
    return "\n".join(lines)
