"""Checkpoint tests: real sessions over the faux provider (the runtime tests' harness), in tmp projects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

for _folder in (Path(__file__).parent, Path(__file__).parent.parent / "runtime"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from runtime_helpers import Harness  # noqa: E402 - needs the path above


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = tmp_path / "agent"
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)
    return agent


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)
