"""Packages whose public names load on first use (convsearch.infra.lazy): the agent and history packages."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_a_lazy_name_is_imported_on_first_use_and_then_kept() -> None:
    code = ("import sys, convsearch.agent as a; assert 'convsearch.agent.loop' not in sys.modules; "
            "A = a.Agent; assert 'convsearch.agent.loop' in sys.modules; assert a.__dict__['Agent'] is A; "
            "print(A.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "convsearch.agent.loop"


@pytest.mark.parametrize("package", ["convsearch.agent", "convsearch.history"])
def test_an_unknown_name_is_an_attribute_error_naming_it(package: str) -> None:
    mod = __import__(package, fromlist=["_"])
    with pytest.raises(AttributeError, match=rf"module '{package}' has no attribute 'nope'"):
        mod.nope  # noqa: B018
    for name in mod.__all__:
        assert getattr(mod, name) is not None
