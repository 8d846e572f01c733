"""infra.interrupt.term_as_interrupt: SIGTERM heard as Ctrl-C inside the block, the old handlers back after it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from convsearch.infra.interrupt import term_as_interrupt


def test_sigterm_in_the_block_is_a_keyboard_interrupt_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with term_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between bytecodes of the main thread
                pass
    assert signal.getsignal(signal.SIGTERM) is before


def test_ctrl_c_is_heard_in_the_block_even_when_it_was_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt):
            with term_as_interrupt():
                assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):
                    pass
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # ignored again after the block
    finally:
        signal.signal(signal.SIGINT, before)


def test_off_the_main_thread_it_changes_nothing():
    seen = []

    def run():
        with term_as_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [before]
