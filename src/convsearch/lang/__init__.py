"""Language packs: what differs between languages, handed down as data and callables.

The bottom layer of the follow-up resolver: a pack imports nothing of the rule layer. Chinese and English ship
(``lang/zh``, ``lang/en``: each a ``Pack`` with its mentions and markers beside it; their rule steps,
``lang/<code>/steps.py``, sit above the rule primitives and are gathered by ``rewrite.steps``). A language of one's
own is a ``Pack`` given to ``register`` and its steps given to ``rewrite.steps.register_steps``: no other file
changes.

>>> detect("AnySearch 支持哪些检索方式？").code, detect("Who founded SpaceX?").code
('zh', 'en')
>>> get("zh").name, [m.text for m in get("en").mentions("Who founded SpaceX?")]
('Chinese', ['SpaceX'])
"""

from __future__ import annotations

from .base import LanguagePack, Mention, Pack
from .en import PACK as EN
from .zh import PACK as ZH

_PACKS: dict[str, LanguagePack] = {ZH.code: ZH, EN.code: EN}
BUILT_IN = (ZH.code, EN.code)


def register(pack: LanguagePack) -> None:
    """Add a language (or replace the pack of a code); ``detect`` asks it from now on."""
    _PACKS[pack.code] = pack


def unregister(code: str) -> None:
    """Remove a language added with ``register`` (the shipped ones stay)."""
    if code not in BUILT_IN:
        _PACKS.pop(code, None)


def get(code: str) -> LanguagePack:
    """The pack of a language code; an unknown code is a KeyError naming the codes there are."""
    try:
        return _PACKS[code]
    except KeyError:
        raise KeyError(f"no language pack {code!r}; registered: {', '.join(_PACKS)}") from None


def reading(code: str) -> LanguagePack:
    """The pack a text of language ``code`` is read with: its own, or the fallback (English) for a code no pack
    was registered for."""
    return _PACKS.get(code, EN)


def codes() -> tuple[str, ...]:
    """The registered language codes, shipped ones first."""
    return tuple(_PACKS)


def detect(text: str) -> LanguagePack:
    """The pack that claims ``text`` most surely (the first registered on a tie)."""
    best, score = EN, -1.0
    for pack in _PACKS.values():
        s = pack.claims(text)
        if s > score:
            best, score = pack, s
    return best


__all__ = ["BUILT_IN", "LanguagePack", "Mention", "Pack", "codes", "detect", "get", "reading", "register",
           "unregister"]
