"""What every language pack shares: the ``Mention`` a mention finder returns, and joining words across scripts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import lexicon as lx
from ..text import is_cjk


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    proper: bool
    cls: str  # zh: POS class of the proper head (ns, nr, nt, nz, eng) or "n"; en: "proper" or "noun"
    head: str  # last word, used to match same-kind common nouns (年假/病假, throat cancer/lung cancer)
    det: str = ""  # "the " when the text said "the Stanford Experiment": kept when the mention is put back

    @property
    def phrase(self) -> str:
        """The mention as it should be written into a query."""
        return self.det + self.text

    @property
    def relational(self) -> bool:
        """A common noun that names an aspect of something else (price, types, 价格, 区别)."""
        if self.proper:
            return False
        if self.text.isascii():  # "price", "phone number": every word relational
            return all(w in lx.RELATIONAL_EN for w in self.text.lower().split())
        return self.text.lower() == self.head and self.head in lx.RELATIONAL_ZH


def join_tokens(tokens: Sequence[str]) -> str:
    """Join words, with a space only between two Latin words."""
    out = ""
    for t in tokens:
        if out and not is_cjk(out[-1]) and not is_cjk(t[0]) and out[-1].isalnum() and t[0].isalnum():
            out += " "
        out += t
    return out
