"""User shell commands (`!cmd`, `!!cmd`, RPC `bash`).

Not a model tool: the same shell resolution and process-tree kill as the `bash` tool, but no session
variables, and every chunk is cleaned for display (ANSI escapes, `\\r` and other control characters
removed) before it is reported and kept.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from apex_ai.abort import AbortSignal
from apex_coding_agent.tools import (
    BashOperations,
    LocalBashOperations,
    build_command_env,
    run_operations,
    truncate_tail,
)
from apex_coding_agent.tools.output_accumulator import CappedLog, new_spill_path
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES

ROLLING_BUFFER_CHARS = 100 * 1024
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# C0/C1 controls except tab and newline, plus format characters that reorder or hide text.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def sanitize_output(text: str) -> str:
    """Display-safe text: no ANSI escapes, no carriage returns, no control or bidi/format characters."""
    return _UNSAFE.sub("", _ANSI.sub("", text).replace("\r", ""))


@dataclass(frozen=True)
class BashResult:
    """How a user command ended. `exit_code` is None when it was cancelled (or ended by a signal)."""

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None


async def execute_user_bash(
    command: str,
    cwd: str,
    *,
    on_chunk: Callable[[str], None] | None = None,
    signal: AbortSignal | None = None,
    shell_path: str | None = None,
    agent_dir: str | None = None,
    temp_dir: str | None = None,
    operations: BashOperations | None = None,
) -> BashResult:
    """Run `command` in `cwd`; `on_chunk` gets each cleaned chunk as it arrives.

    `operations` (from a `user_bash` handler) runs it elsewhere than this machine; `shell_path` is then unused.
    """
    runner = operations or LocalBashOperations(shell_path)
    if isinstance(runner, LocalBashOperations):
        runner.shell  # noqa: B018 - resolves the shell now: a missing custom shell fails before anything runs
    env = build_command_env(os.environ, agent_dir, None, expose_session_environment=False)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    parts: list[str] = []
    size = [0, 0]  # [chars kept in parts, raw bytes seen]
    spill: list[CappedLog] = []
    spill_path: list[str] = []

    def keep(text: str) -> None:
        if not text:
            return
        if spill:
            spill[0].write(text.encode("utf-8", "surrogatepass"))
        parts.append(text)
        size[0] += len(text)
        while size[0] > ROLLING_BUFFER_CHARS and len(parts) > 1:
            size[0] -= len(parts.pop(0))
        if on_chunk is not None:
            on_chunk(text)

    def on_data(chunk: bytes) -> None:
        size[1] += len(chunk)
        text = sanitize_output(decoder.decode(chunk))
        if not spill and size[1] > DEFAULT_MAX_BYTES:
            path = new_spill_path(temp_dir)
            handle = CappedLog(path)
            handle.write("".join(parts).encode("utf-8", "surrogatepass"))
            spill.append(handle)
            spill_path.append(path)
        keep(text)

    try:
        outcome = await run_operations(runner, command, cwd, env, on_data, signal)
        keep(sanitize_output(decoder.decode(b"", final=True)))
    finally:
        for handle in spill:
            handle.close()
    truncation = truncate_tail("".join(parts))
    cancelled = outcome.aborted
    return BashResult(
        output=truncation.content,
        exit_code=None if cancelled else outcome.exit_code,
        cancelled=cancelled,
        truncated=truncation.truncated or bool(spill_path),
        full_output_path=spill_path[0] if spill_path else None,
    )


__all__ = ["ROLLING_BUFFER_CHARS", "BashResult", "execute_user_bash", "sanitize_output"]
