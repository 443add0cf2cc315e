"""`apex_coding_agent.collector`: the CLI's start-up pause (frozen and resumed once the provider is imported) and
`collector_paused` for bulk loads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from apex_coding_agent import collector as startup_gc


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the test process's collector as it was, whatever the test did."""
    was_enabled = gc.isenabled()
    try:
        yield
    finally:
        startup_gc._paused = False
        gc.unfreeze()
        if was_enabled:
            gc.enable()
        else:
            gc.disable()


def _wait_for_resume_thread() -> None:
    for thread in threading.enumerate():
        if thread.name == "apex-gc-resume":
            thread.join(timeout=30)


def test_resume_without_an_api_is_immediate_and_freezes(collector: None) -> None:
    gc.enable()
    startup_gc.pause_collection()
    assert not gc.isenabled()
    startup_gc.resume_collection_after_import(None)
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # start-up objects moved out of the collector's way


def test_resume_waits_for_the_provider_import_then_enables(collector: None) -> None:
    gc.enable()
    startup_gc.pause_collection()
    startup_gc.resume_collection_after_import("faux")
    _wait_for_resume_thread()
    assert gc.isenabled()


def test_an_unknown_api_still_resumes(collector: None) -> None:
    gc.enable()
    startup_gc.pause_collection()
    startup_gc.resume_collection_after_import("no-such-api")
    _wait_for_resume_thread()
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_theirs(collector: None) -> None:
    gc.disable()
    startup_gc.pause_collection()  # not ours to pause: nothing to resume
    startup_gc.resume_collection_after_import(None)
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_load_is_paused_inside_then_frozen_and_resumed(collector: None) -> None:
    gc.enable()
    with startup_gc.collector_paused(freeze=True):
        assert not gc.isenabled()
        loaded = [[index] for index in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(loaded)


def test_a_failed_load_still_resumes_collection(collector: None) -> None:
    gc.enable()
    with pytest.raises(OSError), startup_gc.collector_paused(freeze=True):
        raise OSError("unreadable")
    assert gc.isenabled()


def test_a_collector_paused_by_someone_else_stays_paused(collector: None) -> None:
    gc.disable()
    with startup_gc.collector_paused(freeze=True):
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_no_pause_asked_leaves_the_collector_running(collector: None) -> None:
    gc.enable()
    with startup_gc.collector_paused(False, freeze=True):
        assert gc.isenabled()
    assert gc.get_freeze_count() == 0
