"""Runtime tests: a faux provider, its models in a private registry, and a session builder over tmp dirs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from runtime_helpers import Harness  # noqa: E402 - needs the path above


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = tmp_path / "agent"
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)
    for name in ("APEX_CODE_SESSION_ID", "PI_SESSION_ID", "APEX_CODE_MODEL", "PI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return agent


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)
