"""Fixtures for the real llama.cpp server tests (`uv run nox -s llama`; not part of the default run).

`APEX_LLAMA_SERVER` names the `llama-server` binary (the nox session builds it once per machine with
`scripts/build_llama_server.py`). Without it the tests fail with what to run: they are never skipped.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from tiny_gguf import write_tiny_model  # noqa: E402  (needs the path above)


class LlamaServer:
    """A running `llama-server` on a free loopback port; `url` is its root (no `/v1`)."""

    def __init__(self, args: list[str], log: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [_binary(), "--host", "127.0.0.1", "--port", str(self.port), *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready(log)

    def _wait_ready(self, log: Path) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"llama-server exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx2.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"llama-server not ready after 60 s: {log.read_text(errors='replace')[-2000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self._log.close()


def _binary() -> str:
    path = os.environ.get("APEX_LLAMA_SERVER")
    if not path or not Path(path).exists():
        raise AssertionError("APEX_LLAMA_SERVER is not set: run these tests with `uv run nox -s llama`")
    return path


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny-2k.gguf and tiny-4k.gguf: the same tiny model with context windows of 2048 and 4096."""
    directory = tmp_path_factory.mktemp("models")
    write_tiny_model(directory / "tiny-2k.gguf", n_ctx=2048)
    write_tiny_model(directory / "tiny-4k.gguf", n_ctx=4096)
    return directory


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[type[LlamaServer]]:
    """Start servers with `serve(args)`-like calls: `server = serve.start([...])`; all stop after the test."""
    started: list[LlamaServer] = []

    class Starter(LlamaServer):
        def __init__(self, args: list[str]) -> None:
            super().__init__(args, tmp_path / f"llama-server-{len(started)}.log")
            started.append(self)

    yield Starter
    for server in started:
        server.stop()
