"""Start-up of long-running processes (``convsearch serve``, ``convsearch mcp``, ``rewrite --batch``).

``warm_up`` runs the rule path once per language (gate, rules, variants, fuse, dedup, rerank, format) so the
dictionaries, the stemmer, the lexicons and the compiled patterns load before the first real turn waits on them.
``freeze_heap`` then moves everything alive out of the garbage collector's sight (``gc.freeze``, once per
process): a full collection walks only what later turns created, not the tens of thousands of objects start-up
leaves behind (imports, lexicons, jieba's dictionary: a full collection of the ~33,000 a rules-only process holds
takes ~15 ms on this project's 2-core VM, a p99 spike when it lands in a turn). A frozen object is still freed
when its last reference goes, but never as part of a reference cycle: the entry points freeze, once start-up is
done, never a library call on its own, and the tests check the freeze in a subprocess.

Example::

    warm_up()       # ['AnySearch 的价格', 'When did SpaceX launch?']
    freeze_heap()   # True the first time, False after
"""

from __future__ import annotations

import gc
import threading
from datetime import date

from .config import Settings
from .pipeline import finish_turn, plan_queries
from .types import Hit, Message

# one turn per language, each one a rule rewrite (the rewriter's own code paths, not only the gate's)
_TURNS = (("价格呢？", "AnySearch 支持哪些检索方式？"), ("When did it launch?", "Who founded SpaceX?"))
_HITS = (
    Hit("w1", "AnySearch 价格与套餐", "AnySearch 提供免费版和专业版，专业版按月计费。", 2.0,
        "https://docs.anysearch.example/pricing?utm_source=x", "2026-10-08"),
    Hit("w2", "SpaceX first launch", "SpaceX first launched the Falcon 1 rocket in 2006 from Kwajalein.", 1.5,
        "https://wiki.example.org/spacex", "2026-06-03"),
    Hit("w3", "AnySearch 价格与套餐", "AnySearch 提供免费版和专业版，专业版按月计费！", 1.0,
        "https://docs.anysearch.example/pricing/"),
)

_frozen = False
_lock = threading.Lock()


def warm_up(settings: Settings | None = None) -> list[str]:
    """Run one Chinese and one English follow-up through the rule path (no backend, nothing stored); returns
    their standalone queries."""
    from .resolve.rules import RuleRewriter

    s = settings or Settings()
    rules = RuleRewriter()
    out = []
    for query, before in _TURNS:
        _, rw, _, _ = plan_queries(query, (Message("user", before),), rewriter=rules, settings=s)
        finish_turn(query, rw, [list(_HITS), list(_HITS[::-1])], settings=s, top_k=s.top_k, today=date(2026, 12, 1))
        out.append(rw.rewritten)
    return out


def freeze_heap() -> bool:
    """Collect, then freeze every object alive (``gc.freeze``), the first time in this process only; returns
    whether this call froze. Call it once start-up is done: what later turns create stays collectable."""
    global _frozen
    with _lock:
        if _frozen:
            return False
        gc.collect()  # garbage left by start-up is freed first, not frozen for ever
        gc.freeze()
        _frozen = True
        return True


__all__ = ["freeze_heap", "warm_up"]
