"""Shared fixtures: no real network, and every test runs in its own temporary directory."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from apex_ai.testing import block_network
from apex_ai.testing.hypothesis_profiles import register_profiles

register_profiles()  # property tests try the same examples on every run unless a profile says otherwise


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    with block_network():
        yield
    listing = sys.modules.get("apex_coding_agent.session.listing")
    if listing is not None:  # a first listing's index build ends inside its test, not in the next one's dir
        assert listing.wait_for_index_builds(timeout=60)
