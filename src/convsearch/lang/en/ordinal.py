"""English references to a listed item by position ("the third step", "the last two options", "the latter",
"option 2") and the inline series of an English answer ("the Hotel Navona, the Eitch Borromini Palazzo, and the
Hotel Raphael", "Trello or Jira"): ``ORDINAL``, read by ``rewrite.ordinal``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ... import lexicon as lx
from ..base import Mention, OrdinalForms, OrdinalRef, Series
from .markers import user_side
from .mentions import mentions

_EN_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
           "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
           "tenth": 10, "10th": 10, "last": -1, "final": -1}
_EN_COUNT = {"two": 2, "three": 3, "2": 2, "3": 3}
_ORD = "|".join(sorted(_EN_ORD, key=len, reverse=True))
# "the third step", "the first and second options", "the third or the fourth one"
_EN_ORD_RE = re.compile(rf"\bthe\s+({_ORD})(?:\s+(?:and|or|&)\s+(?:the\s+)?({_ORD}))?\s+([a-z][a-z-]*)\b",
                        re.IGNORECASE)
# "the last two options", "the first three"
_EN_RUN_RE = re.compile(r"\bthe\s+(first|last)\s+(two|three|2|3)(?:\s+([a-z][a-z-]*))?\b", re.IGNORECASE)
_EN_BARE_ORD_RE = re.compile(rf"\bthe\s+({_ORD})(?=\s*(?:[?.!,;]|$))", re.IGNORECASE)
_EN_FORMER_RE = re.compile(r"\bthe\s+(former|latter)\b", re.IGNORECASE)
# "option 2", "step #3", "number 4"
_EN_NUM_RE = re.compile(r"\b(option|step|number|item|choice|point|no\.)\s*#?(\d{1,2})\b", re.IGNORECASE)
_EN_SERIES_LAST_RE = re.compile(r"^\s*(?:and|or)\s+", re.IGNORECASE)
_EN_PAIR_JOIN_RE = re.compile(r"\s(?:or|and)\s")
_MAX_NAME_WORDS = 4
# "<kind> such as / like / including A, B and C" — the kind noun says what the items are
_EN_EXAMPLES_RE = re.compile(r"\b([a-z]+),?\s+(?:such as|like|including)\s+([^.;:!?()]+?)"
                             r"(?=\s*(?:[.;:!?()]|,\s+(?:that|which|who)\b|"
                             r"\s+(?:that|which|who|can|could|are|is|to|for|in|help)\b|$))")
_EN_SPLIT_RE = re.compile(r",\s*(?:and|or)?\s*|\s+(?:and|or)\s+")


def find_ordinal(query: str) -> OrdinalRef | None:
    """The first positional reference in an English ``query``, or None."""
    m = _EN_RUN_RE.search(query)
    if m:
        k = _EN_COUNT[m.group(2).lower()]
        noun = (m.group(3) or "").lower()
        strict = bool(noun) and not _list_noun(noun)  # "the last two technologies" / "the first two weeks"
        end = m.end(2) if strict else m.end()  # keep a noun that only says the kind
        pos = tuple(range(1, k + 1)) if m.group(1).lower() == "first" else tuple(range(-k, 0))
        return OrdinalRef(m.start(), end, pos, noun, strict)
    m = _EN_ORD_RE.search(query)
    if m and _list_noun(m.group(3).lower()):
        pos = (_EN_ORD[m.group(1).lower()],) + ((_EN_ORD[m.group(2).lower()],) if m.group(2) else ())
        return OrdinalRef(m.start(), m.end(), pos, m.group(3).lower())
    m = _EN_BARE_ORD_RE.search(query)
    if m:  # "What is the limit for the second?": a position closing the clause stands for the item
        return OrdinalRef(m.start(), m.end(), (_EN_ORD[m.group(1).lower()],), "")
    m = _EN_FORMER_RE.search(query)
    if m:
        return OrdinalRef(m.start(), m.end(), (1 if m.group(1).lower() == "former" else -1,), "")
    m = _EN_NUM_RE.search(query)
    if m and int(m.group(2)) > 0:
        return OrdinalRef(m.start(), m.end(), (int(m.group(2)),), m.group(1).lower())
    return None


def kind_ordinal(query: str) -> OrdinalRef | None:
    """"the first trail": a position with a noun that is no list noun, strict (only a list whose items or
    question name that noun can answer it: "Red Rocks Trail", not "the first time")."""
    m = _EN_ORD_RE.search(query)
    if m is None or m.group(3).lower() in lx.EN_FUNCTION:
        return None
    pos = (_EN_ORD[m.group(1).lower()],) + ((_EN_ORD[m.group(2).lower()],) if m.group(2) else ())
    return OrdinalRef(m.start(), m.end(), pos, m.group(3).lower(), True)


def _list_noun(word: str) -> bool:
    """Nouns that name a member of a list ("one", "option", "step", "hotel" …): not "the first time"."""
    return word in lx.EN_LIST_NOUNS or word.rstrip("s") in lx.EN_LIST_NOUNS


def _en_series(sentence: str) -> Series:
    out: list[tuple[tuple[str, ...], str]] = []
    chunks = sentence.rstrip(" .!?").split(",")
    if len(chunks) >= 2 and not any(_EN_SERIES_LAST_RE.match(c) for c in chunks[1:]):
        # "A, B and C" without the serial comma: the first later chunk with one join splits there, and what
        # follows the series ("…, plus a prescription") is not part of it
        at = next((i for i in range(1, len(chunks)) if _EN_PAIR_JOIN_RE.search(chunks[i])), None)
        j = list(_EN_PAIR_JOIN_RE.finditer(chunks[at])) if at is not None else []
        if at is not None and len(j) == 1:
            last = chunks[at][j[0].end():]
            name = _cap_run(last.split()[:_MAX_NAME_WORDS], from_end=False)  # "Oracle Cloud all have …"
            chunks = [*chunks[:at], chunks[at][: j[0].start()], f" {j[0].group(0).strip()} {name or last.strip()}"]
    if len(chunks) >= 3 and _EN_SERIES_LAST_RE.match(chunks[-1]):
        items: list[str] = []
        proper = True
        for i, chunk in enumerate(chunks):
            chunk = _EN_SERIES_LAST_RE.sub("", chunk).strip()
            if i == 0 and ":" in chunk:
                chunk = chunk.rsplit(":", 1)[1].strip()  # "There are three: a 401(k), …": the list starts after it
                if chunk and len(chunk.split()) <= _MAX_NAME_WORDS:
                    items.append(chunk)
                    proper = proper and chunk[:1].isupper()
                    continue
            ms = mentions(chunk)
            m = (ms[-1] if i == 0 else ms[0]) if ms else None  # "Hotels near X include the Hotel Navona"
            if m is None or (i > 0 and len(chunk.split()) > 6 and not m.proper):
                items = []
                break
            proper = proper and m.proper
            item = _series_item(chunk, m) if i else _with_det(chunk, m.text)
            if i == len(chunks) - 1 and proper and len(chunks) > 2:
                # "Ryanair, easyJet, and Wizz Air all fly that route": a series of names ends with the name
                item = _cap_run(chunk.split()[:_MAX_NAME_WORDS], from_end=False) or item
            items.append(item)
        if items:
            out.append((tuple(items), "names" if proper else "nouns"))
    for ex in _EN_EXAMPLES_RE.finditer(sentence):  # "treatment technologies, like reverse osmosis and nanofiltration"
        parts = [p.strip() for p in _EN_SPLIT_RE.split(ex.group(2)) if p.strip()]
        if len(parts) >= 2 and all(len(p.split()) <= 4 for p in parts):
            names = all(p[:1].isupper() for p in parts)
            out.append((tuple(parts), "names" if names else ex.group(1).lower()))
    for join in _EN_PAIR_JOIN_RE.finditer(sentence):  # "Tools such as Trello or Jira": two names
        a = _cap_run(sentence[: join.start()].split()[-_MAX_NAME_WORDS:], from_end=True)
        b = _cap_run(sentence[join.end():].split()[:_MAX_NAME_WORDS], from_end=False)
        if a and b and a.split()[0].lower() not in lx.STOP_EN and b.split()[0].lower() not in lx.STOP_EN \
                and not any(a in items and b in items for items, _ in out):  # the tail of a longer series
            out.append(((a, b), "names"))
    return out


def _cap_run(words: Sequence[str], *, from_end: bool) -> str:
    """The capitalised words next to a join ("Trello" before "or", "Jira" after it), at most a few."""
    seq = list(reversed(words)) if from_end else list(words)
    run: list[str] = []
    for w in seq:
        if from_end and run and w.endswith((",", ";")):
            break  # "Google Cloud, Microsoft Azure or …": the comma ends the name before the join
        w = w.strip(",;:()\"'“”")
        if not w or not w[0].isupper():
            break
        run.append(w)
        if w != seq[0] and not from_end and w.endswith((".", ",")):
            break
    return " ".join(reversed(run) if from_end else run).rstrip(".")


_LEAD_PREP_RE = re.compile(r"^(?:(?:as|on|in|at|with|by|via|through|from|for|to)\s+)+", re.IGNORECASE)
_NOT_ITEM_START = frozenset({"which", "that", "who", "where", "when", "to", "can", "could", "will", "would", "is",
                             "are", "was", "were", "it", "they", "this", "these", "you", "we", "i"})


def _series_item(chunk: str, first: Mention) -> str:
    """A later member of a series: the whole short chunk ("your own Kubernetes with the NovaDB Operator",
    "a single binary"), or its first noun phrase when the chunk is long or a clause."""
    item = _LEAD_PREP_RE.sub("", chunk).strip()
    words = item.split()
    if words and len(words) <= 8 and words[0].lower() not in _NOT_ITEM_START:
        return user_side(item)
    return first.phrase


def _with_det(chunk: str, text: str) -> str:
    i = chunk.find(text)
    return ("the " + text) if i >= 4 and chunk[i - 4:i].lower() == "the " else text



ORDINAL = OrdinalForms(find=find_ordinal, kind=kind_ordinal, series=_en_series, title_words=lambda s: len(s.split()),
                       and_word=" and ")
