"""Real MCP servers for the `/mcp` panel's tests: the coding agent's demo server (written with the SDK's server
side), as is and behind a gate that makes it fail until a file exists."""

from __future__ import annotations

import sys
from pathlib import Path

DEMO = str(Path(__file__).resolve().parents[3] / "coding-agent" / "tests" / "mcp_servers" / "demo_server.py")
GATED = (
    "import os, runpy, sys\n"
    "flag, demo = sys.argv[1:3]\n"
    "if not os.path.exists(flag):\n"
    "    sys.exit('no licence file at ' + flag)\n"
    "sys.argv = [demo]\n"
    "runpy.run_path(demo, run_name='__main__')\n"
)
"""The demo server behind a gate: it exits at once (before `initialize`) until the flag file exists."""


def gated_server(flag: Path) -> dict[str, object]:
    return {"command": sys.executable, "args": ["-c", GATED, str(flag), DEMO]}
