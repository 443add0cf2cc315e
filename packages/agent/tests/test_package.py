import tomllib
from pathlib import Path

import apex_agent


def test_version_matches_pyproject() -> None:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert apex_agent.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]
