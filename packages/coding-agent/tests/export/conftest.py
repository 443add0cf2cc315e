"""Export tests import their helpers module by name; each test gets its own agent dir."""

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = tmp_path / "agent"
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)
    return agent
