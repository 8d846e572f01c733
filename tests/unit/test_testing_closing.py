"""convsearch.testing.closing: clients handed to close_later are closed by close_opened, newest first, once."""

from __future__ import annotations

from convsearch.testing.closing import close_later, close_opened


class _Client:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def close(self) -> None:
        self.log.append(self.name)


def test_close_opened_closes_each_client_once_newest_first() -> None:
    close_opened()  # whatever an earlier step of this test's set-up opened
    log: list[str] = []
    a = close_later(_Client("a", log))
    assert a.name == "a" and log == []
    close_later(_Client("b", log))
    assert close_opened() == 2 and log == ["b", "a"]
    assert close_opened() == 0 and log == ["b", "a"]
