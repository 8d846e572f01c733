"""Language packs: what differs between languages, handed down as data and callables.

The bottom layer of the follow-up resolver: a pack imports nothing of the rule layer. A language is registered as
one object (``resolve.language.Language``: its pack and its rule steps) through ``convsearch.plugins``
(``r.language("module:LANGUAGE")``); the shipped Chinese and English go the same way (``lang.plugin``). This module
reads the packs of the registered languages: ``detect`` a text's, ``get`` / ``reading`` a code's.

>>> detect("AnySearch 支持哪些检索方式？").code, detect("Who founded SpaceX?").code
('zh', 'en')
>>> get("zh").name, [m.text for m in get("en").mentions("Who founded SpaceX?")]
('Chinese', ['SpaceX'])
"""

from __future__ import annotations

from typing import Any

from .. import plugins
from .base import LanguagePack, Mention, Pack
from .en import PACK as EN

_STATE: dict[str, Any] = {"key": None}


def _load() -> dict[str, Any]:
    """The registered languages and their packs, read again only when the plugins' registry changed."""
    reg = plugins.load()
    state = _STATE
    key = state["key"]
    if key is None or key[0] is not reg or key[1] != reg.version:
        objects = tuple(plugins.languages().values())
        table: dict[str, LanguagePack] = {}
        for obj in objects:
            pack = getattr(obj, "pack", obj)  # a Language, or a bare pack
            table.setdefault(pack.code, pack)
        state.update(objects=objects, packs=table, ordered=tuple(table.values()), key=(reg, reg.version))
    return state


def registered() -> tuple[Any, ...]:
    """The registered language objects (``resolve.language.Language``, or a bare pack), shipped ones first; the
    same tuple until a plugin is added or removed."""
    return _load()["objects"]  # type: ignore[no-any-return]


def get(code: str) -> LanguagePack:
    """The pack of a language code; an unknown code is a KeyError naming the codes there are."""
    table = _load()["packs"]
    try:
        return table[code]  # type: ignore[no-any-return]
    except KeyError:
        raise KeyError(f"no language pack {code!r}; registered: {', '.join(table)}") from None


def reading(code: str) -> LanguagePack:
    """The pack a text of language ``code`` is read with: its own, or the fallback (English) for a code no pack
    was registered for."""
    return _load()["packs"].get(code, EN)  # type: ignore[no-any-return]


def codes() -> tuple[str, ...]:
    """The registered language codes, shipped ones first."""
    return tuple(_load()["packs"])


def detect(text: str) -> LanguagePack:
    """The pack that claims ``text`` most surely (the first registered on a tie)."""
    best, score = EN, -1.0
    for pack in _load()["ordered"]:
        s = pack.claims(text)
        if s > score:
            best, score = pack, s
    return best


__all__ = ["LanguagePack", "Mention", "Pack", "codes", "detect", "get", "reading", "registered"]
