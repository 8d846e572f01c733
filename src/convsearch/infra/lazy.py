"""A package's public names, imported on first use (PEP 562's module ``__getattr__``).

``import convsearch`` stays cheap when a package re-exports names from heavy modules: the package lists where each
name lives and hands out this ``__getattr__``; the first access imports the module and keeps the value in the
package, so later accesses are plain attribute reads.

Example (in ``convsearch/agent/__init__.py``)::

    __getattr__ = lazy_exports(__name__, {"Agent": "loop", "check_citations": "citations"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``package.<homes[name]>`` on the first access of
    ``name`` and keeps the value in the package; any other name raises AttributeError as a module does."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_exports"]
