"""How a Chinese fragment fills the frame of the previous question (``FRAME``, read by ``rewrite.frame``): model
names in a frame, two things a question joins (with 还是 between words the tagger found no mention of), "哪个更…"
over the user's last two questions, an attribute fragment ("它的价格呢") and a frame's opening noun as what it is
about."""

from __future__ import annotations

import re

from ... import lexicon as lx
from ...text import TRAIL_MARKS, is_cjk, tagged
from ..base import FrameForms
from .mentions import zh_name_tokens

_ZH_WHICH_RE = re.compile(r"哪个更|哪个比较|哪一个更|哪款更|哪家更|谁更")


def _model_names(frame: str) -> list[str]:
    """The Latin names of a frame holding a number ("RTX 4090", "小米 14 Ultra")."""
    return [w for w, t in zh_name_tokens(frame) if t == "eng" and any(c.isdigit() for c in w)]


def _which_of(q: str, names: list[str]) -> tuple[str, str] | None:
    """"哪个更快" after questions on A and on B → "A和B哪个更快"."""
    if not _ZH_WHICH_RE.search(q) or any(n in q for n in names):
        return None
    a, b = names
    sep = " " if not is_cjk(a[-1]) or not is_cjk(b[0]) else ""
    body = q.strip().rstrip(TRAIL_MARKS)
    which = _ZH_WHICH_RE.search(body)
    if which is None:  # (never: the question matched, and its final marks are no part of the pattern)
        return None
    i = which.start()
    head = body[:i].rstrip("，, ")
    if head in lx.ZH_LEADS:
        head = ""  # "那哪个更适合…": the follow-up marker has nothing left to mark
    return f"{head}{'，' if head else ''}{a}{sep}和{sep}{b}{body[i:]}", f"comparison between {a} and {b}"


_ZH_CHUNK_STOP = frozenset({"v", "p", "x", "w", "uj", "ul", "uz", "c", "r", "y", "m", "q", "a"})


def _zh_alternatives(text: str) -> list[str]:
    """"纠结尤克里里还是民谣吉他": the two words either side of 还是, where the tagger found no mention of them (jieba
    splits 尤/克里/里 and tags 民谣吉他 an idiom): from the verb before to the clause's end.

    >>> _zh_alternatives("30岁了想学个乐器，在纠结尤克里里还是民谣吉他")
    ['尤克里里', '民谣吉他']
    """
    if "还是" not in text:
        return []
    toks = tagged(text)
    k = next((i for i, (w, _) in enumerate(toks) if w == "还是"), None)
    if k is None:
        return []
    i = k
    while i > 0 and toks[i - 1][1] not in _ZH_CHUNK_STOP:
        i -= 1
    j = k + 1
    while j < len(toks) and toks[j][1] not in _ZH_CHUNK_STOP:
        j += 1
    a, b = "".join(w for w, _ in toks[i:k]), "".join(w for w, _ in toks[k + 1:j])
    return [a, b] if 2 <= len(a) <= 8 and 2 <= len(b) <= 8 and a != b else []


FRAME = FrameForms(
    model_names=_model_names,
    pair_join=re.compile(r"\s*(?:和|与|跟|还是|或者|或|[，,]?也有)\s*"),
    alternatives=_zh_alternatives,
    which=_ZH_WHICH_RE,
    which_of=_which_of,
    possessive=re.compile(r"^(?:它的|它|其)"),
    # "茅台今年的股价涨了多少": no proper name, but the noun the question opens with is what it is about
    opening_noun=True,
    # "预算五千左右": one typed span inside an untyped phrase takes the place of the frame's span of that type
    slot_inside=True,
)
