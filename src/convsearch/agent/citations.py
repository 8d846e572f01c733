"""The citation check after generation (pure): every [n] exists among the results shown; sentences that state
facts without a citation, and answers that cite nothing while results exist, are flagged.

>>> c = check_citations("深圳未来三天多云 [1]。露营要带帐篷 [7]。", shown={1, 2})
>>> c.unknown, c.cited
((7,), (1,))
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from ..history.memory import cited_refs
from ..resolve.guard import content_words
from ..text import CJK_RE
from .prompts import texts

_SPLIT_RE = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])\s+(?=[A-Z\"'(\[])")
_REF_RE = re.compile(r"[\[［【]\s*\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\s*[\]］】]")
_GROUP_NUM_RE = re.compile(r"\d{1,3}")
# sentences that are about the answer rather than facts of the world
_META_RE = re.compile(
    r"^(?:sources?|references?|来源|参考|注[:：]|note[:：])|"
    r"\b(?:i (?:could not|couldn't|did not|didn't|cannot|can't) find|no (?:result|information)|not (?:sure|found)|"
    r"let me know|hope this helps|here (?:is|are)|based on the (?:search )?results)\b|"
    r"没有找到|未找到|找不到|无法确定|不确定|希望.*帮|以下是|根据(?:搜索)?结果|如下",
    re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The answer split into sentences (Chinese and English end marks, line breaks)."""
    return [s.strip() for s in _SPLIT_RE.split(text) if s and s.strip()]


def refs_in(text: str) -> list[int]:
    """Citation numbers, including grouped ones: "[1, 3]" → [1, 3]."""
    out: list[int] = []
    for m in _REF_RE.finditer(text):
        out.extend(int(x) for x in _GROUP_NUM_RE.findall(m.group(0)))
    return list(dict.fromkeys(out + cited_refs(text)))


def states_fact(sentence: str) -> bool:
    """Whether a sentence looks like it states a fact: not a question, not about the answer itself, and with a
    number or enough content (4 content words in English, 8 Chinese characters)."""
    s = _REF_RE.sub("", sentence).strip()
    if not s or s.endswith(("?", "？")) or _META_RE.search(s) or s.startswith(("#", "|")):
        return False
    if re.search(r"\d", s):
        return True
    if len(CJK_RE.findall(s)) >= 8:
        return True
    return len(content_words(s)) >= 4 and not CJK_RE.search(s)


@dataclass(frozen=True, slots=True)
class CitationCheck:
    cited: tuple[int, ...]               # known numbers the answer cites, in order of first use
    unknown: tuple[int, ...]             # numbers no shown result carries
    uncited_sentences: tuple[str, ...]   # factual-looking sentences without a citation
    cites_nothing: bool                  # results were shown and the answer cites none of them

    @property
    def ok(self) -> bool:
        return not (self.unknown or self.uncited_sentences or self.cites_nothing)

    def problems(self, lang: str) -> str:
        """The problems as one instruction for a repair call."""
        t = texts(lang)
        parts: list[str] = []
        if self.unknown:
            parts.append(t.cites_unknown.format(nums=", ".join(f"[{n}]" for n in self.unknown)))
        if self.cites_nothing:
            parts.append(t.cites_nothing)
        for s in self.uncited_sentences[:5]:
            parts.append(t.uncited.format(sentence=s))
        return t.problems_sep.join(parts)


def check_citations(text: str, shown: Collection[int]) -> CitationCheck:
    """Check ``text`` against the task numbers of the results shown to the model."""
    known = set(shown)
    all_refs = refs_in(text)
    cited = tuple(n for n in all_refs if n in known)
    unknown = tuple(n for n in all_refs if n not in known)
    uncited = tuple(s for s in sentences(text) if not refs_in(s) and states_fact(s)) if known else ()
    return CitationCheck(cited, unknown, uncited, bool(known) and not cited)


__all__ = ["CitationCheck", "check_citations", "refs_in", "sentences", "states_fact"]
