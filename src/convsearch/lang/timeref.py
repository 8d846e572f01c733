"""Is a phrase a time expression ("mid-April", "next summer", "2023", "下周末")? A time is when something
happens, never what a conversation is about: the focus search passes over it.

>>> [is_time_phrase(p) for p in ("mid-April", "the summer", "2019", "下周末", "national parks", "Fourth of July")]
[True, True, True, True, False, False]
"""

from __future__ import annotations

import re
from functools import lru_cache

from .. import lexicon as lx

_TIME_WORDS = sorted({w for k in ("time_day", "time_part", "time_season", "time_year") for w in lx.SLOTS[k]},
                     key=len, reverse=True)
_EN_MODIFIER = r"(?:(?:the|this|next|last|early|late|mid|end\s+of|beginning\s+of)[\s-]+)*"
_EN_WORDS = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in _TIME_WORDS if w.isascii())
_EN_TIME_RE = re.compile(r"^" + _EN_MODIFIER + r"(?:" + _EN_WORDS + r"|(?:19|20)\d\d)$", re.IGNORECASE)
_ZH_TIME_RE = re.compile(r"^(?:" + "|".join(re.escape(w) for w in _TIME_WORDS if not w.isascii())
                         + r"|(?:19|20)\d\d\s*年)+$")


@lru_cache(maxsize=4096)
def is_time_phrase(text: str) -> bool:
    """A whole phrase that only names a time: a day, a part of day, a month or season, a year (zh or en)."""
    t = text.strip()
    return bool(_EN_TIME_RE.match(t) or _ZH_TIME_RE.match(t))
