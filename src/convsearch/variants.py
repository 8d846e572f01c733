"""Query variants from a heuristic synonym table kept as data (``data/synonyms.yaml``)."""

from __future__ import annotations

import re
from functools import lru_cache

from . import lexicon as lx
from .text import detect_lang, words

# Short structured questions (yes/no, a number, a code) gain nothing from synonyms.
_STRUCTURED_RE = re.compile(r"^[A-Za-z0-9_\-./:#]{1,24}$|^\d[\d\s.,:/-]*$")


@lru_cache(maxsize=2)
def _table(lang: str) -> dict[str, tuple[str, ...]]:
    """word → the other members of its group, in table order."""
    out: dict[str, tuple[str, ...]] = {}
    for group in lx.synonyms().get(lang, ()):
        for w in group:
            out.setdefault(w.lower(), tuple(g for g in group if g.lower() != w.lower()))
    return out


def make_variants(query: str, *, max_variants: int = 3) -> list[str]:
    """Up to ``max_variants`` rewrites of ``query``, each swapping one word for a synonym; never the query.

    >>> make_variants("AnySearch 的价格")
    ['AnySearch 的收费', 'AnySearch 的费用', 'AnySearch 的多少钱']
    """
    q = query.strip()
    if max_variants <= 0 or not q or _STRUCTURED_RE.match(q):
        return []
    lang = detect_lang(q)
    table = _table(lang)
    toks = words(q, lower=False)
    if len(toks) < 2:
        return []
    seen = {q.lower()}
    out: list[str] = []
    lowered = q.lower()
    lowered_words = set(words(q))
    # multi-word English entries ("rate limit") are matched on the text, single words on tokens
    candidates = [w for w in toks if w.lower() in table]
    if lang == "en":
        candidates += [k for k in table if " " in k and k in lowered]
    for w in candidates:
        if lang == "en" and w[:1].isupper():
            continue  # part of a name ("Helix Launch Systems")
        for syn in table.get(w.lower(), ()):
            lw, ls = w.lower(), syn.lower()
            if ls in lowered or lw in ls or ls in lw or (lang == "en" and any(
                    part in lowered_words for part in ls.split() if part not in lx.STOP_EN)):
                continue  # 免费 → 免费额度, reimbursement → expense claim would repeat words already there
            if lang == "en":
                v = re.sub(rf"\b{re.escape(w)}\b", syn, q, count=1, flags=re.IGNORECASE)
            else:
                v = q.replace(w, syn, 1)
            if v.lower() not in seen and v != q:
                seen.add(v.lower())
                out.append(v)
                if len(out) >= max_variants:
                    return out
    return out
