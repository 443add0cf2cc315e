"""Shared fixtures: no real network, and every test runs in its own temporary directory."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from apex_ai.testing import block_network


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    with block_network():
        yield
