"""MCP tests: real servers written with the SDK's server side (`demo_server.py`), started as subprocesses."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
for _path in (_HERE, str(Path(_HERE).parent / "cli")):  # the CLI tests' helpers run the real command
    if _path not in sys.path:
        sys.path.insert(0, _path)

from mcp_helpers import DEMO  # noqa: E402 - needs the path above


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo server over streamable HTTP; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("http") / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, DEMO, "http", str(port)], stdout=err, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"the HTTP demo server did not listen: {log.read_text()}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()
