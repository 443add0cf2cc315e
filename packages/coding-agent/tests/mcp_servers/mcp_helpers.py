"""Helpers of the MCP tests: the demo server's config, and what its start marker file says."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEMO = str(Path(__file__).parent / "demo_server.py")


def demo_config(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [DEMO], **extra}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def started_pids(marker: Path) -> list[int]:
    if not marker.exists():
        return []
    return [int(line.split()[1]) for line in marker.read_text(encoding="utf-8").splitlines() if line]
