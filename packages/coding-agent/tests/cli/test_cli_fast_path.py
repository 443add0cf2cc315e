"""`apex-code --version` and `--help` answer without loading pydantic or an SDK (startup cost)."""

import subprocess
import sys

import apex_coding_agent

PROBE = """
import sys
from apex_coding_agent.cli import main
code = main([{flag!r}])
heavy = sorted(m for m in ("pydantic", "anthropic", "openai", "httpx2", "apex_ai.types") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
sys.exit(code)
"""


def _run(flag: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(flag=flag)], capture_output=True, text=True, timeout=60, check=False
    )


def test_version_prints_version_and_imports_nothing_heavy() -> None:
    proc = _run("--version")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == apex_coding_agent.__version__
    assert proc.stdout.splitlines()[-1] == "HEAVY:"


def test_help_lists_usage_and_imports_nothing_heavy() -> None:
    proc = _run("--help")
    assert proc.returncode == 0
    assert "Usage:" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "HEAVY:"
