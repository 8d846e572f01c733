"""``Secret``: a credential that remembers where it came from and never prints its value.

Every key, token and connection URL that may hold a password (``CONVSEARCH_LLM_API_KEY``,
``CONVSEARCH_API_KEYS``, ``CONVSEARCH_DB_URL``) is held as one: ``repr``/``str`` show only the variable's
name, ``reveal()`` is the one way to the value, used at the moment a request or connection is made.

>>> s = Secret.from_token("sk-123")
>>> s, s.reveal()
(Secret(<token>), 'sk-123')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential: ``repr``/``str`` show the variable's name only; ``scrub(text)`` masks the value in text
    from elsewhere (error bodies)."""

    env_var: str | None
    _value: str = field(repr=False, compare=True)

    @classmethod
    def from_env_var(cls, *names: str, env: Mapping[str, str] | None = None) -> Secret | None:
        """The first of ``names`` that is set (and not blank), or None."""
        src = os.environ if env is None else env
        for name in names:
            value = src.get(name)
            if value and value.strip():
                return cls(name, value.strip())
        return None

    @classmethod
    def from_token(cls, value: str) -> Secret:
        return cls(None, value)

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return f"Secret(env={self.env_var!r})" if self.env_var else "Secret(<token>)"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # pickling (multiprocessing) is fine; it is printing that is not
        return (Secret, (self.env_var, self._value))


def reveal(secret: Secret | None) -> str:
    """The value, or ``""`` for an unset secret."""
    return secret.reveal() if secret is not None else ""


__all__ = ["Secret", "reveal"]
