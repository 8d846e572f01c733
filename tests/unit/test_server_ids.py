"""The API's id pattern (session, agent, message ids) accepts exactly what the history store accepts: found by
the schemathesis run, which sent agent '\\u0085' (schema-valid, then refused by the store as blank)."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from convsearch.errors import InputError
from convsearch.history.base import Scope
from convsearch.server.models import _ID, SearchRequest


@pytest.mark.parametrize("value", ["default", "客服机器人", "s-42", " a ", "bot\u00a0one", "😀"])
def test_ids_the_store_takes_match_the_pattern(value: str) -> None:
    assert re.fullmatch(_ID, value)
    Scope("acme", value, value)  # the store takes it too


@pytest.mark.parametrize("value", [" ", "\u0085", "\u3000", "\u2028", "\t", "a\x00b", "a\x1fb"])
def test_blank_or_control_ids_are_refused_by_both(value: str) -> None:
    assert not re.fullmatch(_ID, value)
    with pytest.raises(InputError):
        Scope("acme", value, "s-1")
    with pytest.raises(ValidationError):
        SearchRequest(query="价格呢？", agent=value)
