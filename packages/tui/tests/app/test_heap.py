"""`session_load`: the collector pauses while a session loads, then the loaded objects are frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from apex_tui.app._heap import session_load


@pytest.fixture
def collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
        else:
            gc.disable()


def test_paused_inside_then_frozen_and_resumed(collector: None) -> None:
    gc.enable()
    with session_load():
        assert not gc.isenabled()
        loaded = [[index] for index in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(loaded)


def test_a_failed_load_still_resumes_collection(collector: None) -> None:
    gc.enable()
    with pytest.raises(OSError), session_load():
        raise OSError("unreadable")
    assert gc.isenabled()


def test_a_collector_paused_by_someone_else_stays_paused(collector: None) -> None:
    gc.disable()
    with session_load():
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
