"""What may be searched on the web and how its results are weighed: site tiers, allow / deny lists, sensitive
queries, and how many results a query deserves (pure functions + a wrapper).

- **Site policy** (``CONVSEARCH_SITE_POLICY``: a TOML file)::

      allow = []                          # when not empty: only these domains (and their subdomains)
      deny = ["spam.example"]             # always dropped
      [tiers]                             # 1 = most credible … 3 = least; unlisted: no tier
      "gov.cn" = 1
      "docs.anysearch.example" = 1
      "blog.example.cn" = 3

  Denied (or not allowed) domains are dropped; the tier goes into ``metadata["tier"]`` (shown in the context) and
  is a small rerank prior: a tier-1 result's score × 1.1, tier 3 × 0.9, then the list is re-ranked (stable).
- **Sensitive queries** (``data/sensitive_terms.txt``, zh + en; ``CONVSEARCH_SENSITIVE_TERMS`` replaces it):
  such a query is sent to no provider; the search returns nothing and the trace says ``refused: policy``.
- **Result count** (``result_count``): 5 per search for a simple question, 8 for a comparison or two entities,
  10 for three or more: fewer results are fewer tokens in the prompt (and some providers bill by depth).

>>> [result_count(q) for q in ("AnySearch 的价格", "AnySearch 和 NovaDB 哪个便宜", "Tavily vs Brave vs SerpApi")]
[5, 8, 10]
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...infra import turn
from ...types import Hit
from ..base import Filters, Recency, SearchBackend

TIER_PRIOR = {1: 1.1, 2: 1.0, 3: 0.9}
REFUSED = "refused: policy"

_CMP_ZH = ("对比", "比较", "区别", "差别", "差异", "哪个好", "哪个更", "哪个便宜", "哪家", "相比", "还是", "优劣")
_CMP_EN_RE = re.compile(r"\b(vs\.?|versus|compare[ds]?|comparison|difference between|differences between|"
                        r"better than|cheaper than|which is better|or)\b", re.I)
_SPLIT_RE = re.compile(r"\s*(?:和|与|跟|及|以及|、|,|，|\band\b|\bvs\.?\b|\bversus\b|\bor\b|还是|对比)\s*", re.I)


def result_count(query: str) -> int:
    """5 for a simple question; 8 for a comparison or two entities; 10 for three or more."""
    parts = [p for p in _SPLIT_RE.split(query) if p and p.strip()]
    comparison = any(w in query for w in _CMP_ZH) or bool(_CMP_EN_RE.search(query))
    if len(parts) >= 3:
        return 10
    if comparison or len(parts) == 2:
        return 8
    return 5


@dataclass(frozen=True)
class SitePolicy:
    """Domain tiers and allow / deny lists (domains match themselves and their subdomains)."""

    tiers: dict[str, int] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: str | Path) -> SitePolicy:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"CONVSEARCH_SITE_POLICY={str(p)!r}: no such file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"CONVSEARCH_SITE_POLICY={str(p)!r} is not valid TOML: {exc}") from None
        tiers = data.get("tiers", {})
        if not isinstance(tiers, dict) or not all(isinstance(v, int) and v in TIER_PRIOR for v in tiers.values()):
            raise ConfigError(f"CONVSEARCH_SITE_POLICY={str(p)!r}: [tiers] maps domains to 1, 2 or 3")
        for k in ("allow", "deny"):
            if not isinstance(data.get(k, []), list):
                raise ConfigError(f"CONVSEARCH_SITE_POLICY={str(p)!r}: {k} must be a list of domains")
        norm = _norm_domain
        return cls({norm(k): v for k, v in tiers.items()}, tuple(norm(d) for d in data.get("allow", [])),
                   tuple(norm(d) for d in data.get("deny", [])))

    def _match(self, domain: str, names: Any) -> str | None:
        d = _norm_domain(domain)
        for n in names:
            if d == n or d.endswith("." + n):
                return str(n)
        return None

    def admits(self, domain: str) -> bool:
        if self._match(domain, self.deny):
            return False
        return not self.allow or self._match(domain, self.allow) is not None

    def tier(self, domain: str) -> int | None:
        best = None
        d = _norm_domain(domain)
        for n, t in self.tiers.items():  # the longest matching suffix wins (a.gov.cn over gov.cn)
            if (d == n or d.endswith("." + n)) and (best is None or len(n) > len(best[0])):
                best = (n, t)
        return best[1] if best else None

    def apply(self, hits: list[Hit]) -> tuple[list[Hit], int]:
        """Drop what the lists refuse, tag tiers, re-rank by the tier prior; (hits, how many dropped)."""
        kept: list[tuple[float, int, Hit]] = []
        dropped = 0
        for i, h in enumerate(hits):
            dom = str(h.metadata.get("domain") or "")
            if not self.admits(dom):
                dropped += 1
                continue
            t = self.tier(dom)
            md = {**h.metadata, "tier": t} if t is not None else h.metadata
            score = h.score * TIER_PRIOR.get(t or 2, 1.0)
            kept.append((-score, i, Hit(h.id, h.title, h.text, score, h.url, h.date, h.source, h.rank, md)))
        kept.sort(key=lambda x: (x[0], x[1]))
        out = [Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, {**h.metadata, "rank": r})
               for r, (_, _, h) in enumerate(kept, start=1)]
        return out, dropped


def _norm_domain(d: str) -> str:
    return str(d).strip().lower().removeprefix("www.").rstrip(".")


@lru_cache(maxsize=8)
def sensitive_terms(path: str | None = None) -> tuple[frozenset[str], tuple[str, ...]]:
    """(zh terms, en terms) from ``path`` or the bundled list."""
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"CONVSEARCH_SENSITIVE_TERMS={path!r} cannot be read: {exc.strerror}") from None
    else:
        text = resources.files("convsearch.data").joinpath("sensitive_terms.txt").read_text(encoding="utf-8")
    zh, en = set(), []
    for line in text.splitlines():
        t = line.strip()
        if not t or t.startswith("#"):
            continue
        (en.append(t.lower()) if t.isascii() else zh.add(t))
    return frozenset(zh), tuple(en)


def sensitive(query: str, *, path: str | None = None) -> str | None:
    """The sensitive term ``query`` contains, or None."""
    zh, en = sensitive_terms(path)
    for t in zh:
        if t in query:
            return t
    low = " ".join(re.findall(r"[a-z0-9']+", query.lower()))
    for t in en:
        if re.search(rf"(?<![a-z0-9']){re.escape(t)}(?![a-z0-9'])", low):
            return t
    return None


class Policed:
    """A web backend behind the policy: sensitive queries go nowhere, the result count fits the question, the
    site lists and tiers apply to what comes back."""

    def __init__(self, backend: SearchBackend, *, site_policy: SitePolicy | None = None,
                 dynamic_count: bool = True, sensitive_path: str | None = None) -> None:
        self.backend = backend
        self.site_policy = site_policy
        self.dynamic_count = dynamic_count
        self.sensitive_path = sensitive_path
        self.name = getattr(backend, "name", "web")
        self.capabilities = backend.capabilities
        self.providers = tuple(getattr(backend, "providers", (self.name,)))
        sensitive_terms(sensitive_path)  # a bad path fails at open, not at the first query

    def _before(self, query: str, top_k: int) -> int | None:
        term = sensitive(query, path=self.sensitive_path)
        if term is not None:
            turn.note(f"{REFUSED} ({self.name}): the query matches a sensitive term; sent to no provider")
            return None
        if not self.dynamic_count:
            return top_k
        n = min(top_k, result_count(query))
        if n < top_k:
            turn.note(f"{self.name}: {n} results asked (dynamic count for this question)")
        return n

    def _after(self, hits: list[Hit]) -> list[Hit]:
        if self.site_policy is None:
            return hits
        out, dropped = self.site_policy.apply(hits)
        if dropped:
            turn.note(f"{self.name}: {dropped} result(s) dropped by the site policy")
        return out

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        n = self._before(query, top_k)
        if n is None:
            return []
        return self._after(self.backend.search(query, top_k=n, filters=filters, recency=recency))

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        n = self._before(query, top_k)
        if n is None:
            return []
        return self._after(await self.backend.asearch(query, top_k=n, filters=filters, recency=recency))

    def close(self) -> None:
        self.backend.close()

    def __repr__(self) -> str:
        return f"Policed({self.backend!r})"


__all__ = ["REFUSED", "TIER_PRIOR", "Policed", "SitePolicy", "result_count", "sensitive", "sensitive_terms"]
