"""The `bash` tool: run a shell command, stream its output, keep the model-facing part bounded."""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    emit_update,
    number_param,
    object_schema,
    required_str,
    string_param,
    text_result,
)
from apex_coding_agent.tools.bash_operations import BashOperations, LocalBashOperations, run_operations
from apex_coding_agent.tools.output_accumulator import LOG_HEAD_BYTES, LOG_TAIL_BYTES, OutputAccumulator
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, format_size

UPDATE_INTERVAL_SECONDS = 0.1
_MAX_TIMEOUT_MS = 2147483647

# Canonical session variables and their `PI_` twins, in the order the spec lists them.
SESSION_ENV_NAMES: tuple[tuple[str, str], ...] = (
    ("APEX_CODE_SESSION_ID", "PI_SESSION_ID"),
    ("APEX_CODE_SESSION_FILE", "PI_SESSION_FILE"),
    ("APEX_CODE_PROVIDER", "PI_PROVIDER"),
    ("APEX_CODE_MODEL", "PI_MODEL"),
    ("APEX_CODE_REASONING_LEVEL", "PI_REASONING_LEVEL"),
)


@dataclass(frozen=True)
class SessionEnvironment:
    """Facts about the running session exposed to commands; `session_file` only when the session is persisted."""

    session_id: str | None = None
    session_file: str | None = None
    provider: str | None = None
    model: str | None = None
    reasoning_level: str | None = None

    def values(self) -> tuple[str | None, ...]:
        return (self.session_id, self.session_file, self.provider, self.model, self.reasoning_level)


@dataclass
class SpawnContext:
    """What a spawn hook may rewrite before the command starts."""

    command: str
    cwd: str
    env: dict[str, str]


def build_command_env(
    base: Mapping[str, str],
    agent_dir: str | None = None,
    session: SessionEnvironment | None = None,
    expose_session_environment: bool = True,
) -> dict[str, str]:
    """The environment of a command: `base` with `<agent_dir>/bin` on PATH and the session variables replaced."""
    env = dict(base)
    if agent_dir:
        bin_dir = os.path.join(agent_dir, "bin")
        entries = env.get("PATH", "").split(os.pathsep) if env.get("PATH") else []
        if bin_dir not in entries:
            env["PATH"] = os.pathsep.join([bin_dir, *entries])
    for canonical, alias in SESSION_ENV_NAMES:
        env.pop(canonical, None)
        env.pop(alias, None)
    if expose_session_environment and session is not None:
        for (canonical, alias), value in zip(SESSION_ENV_NAMES, session.values(), strict=True):
            if value is not None:
                env[canonical] = value
                env[alias] = value
    return env


@dataclass
class BashToolOptions:
    """Settings of the `bash` tool.

    `session_environment` is called when each command starts so the values are current. `spawn_hook` may rewrite the
    command, cwd and environment. Output beyond the model-facing limits goes to a log that keeps the first
    `log_head_bytes` and the last `log_tail_bytes`. `kill_grace` > 0 sends SIGTERM that long before SIGKILL (the spec's default is an
    immediate SIGKILL). `operations` runs commands somewhere else than this machine (SSH, a container); the working
    directory is then theirs to check, and `shell_path`/`kill_grace` do not apply.
    """

    shell_path: str | None = None
    command_prefix: str | None = None
    agent_dir: str | None = None
    session_environment: Callable[[], SessionEnvironment | None] | None = None
    expose_session_environment: bool = True
    spawn_hook: Callable[[SpawnContext], SpawnContext] | None = None
    temp_dir: str | None = None
    kill_grace: float = 0.0
    base_env: Mapping[str, str] | None = None
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES
    log_head_bytes: int = LOG_HEAD_BYTES
    log_tail_bytes: int = LOG_TAIL_BYTES
    clock: Callable[[], float] = field(default=time.monotonic)
    operations: BashOperations | None = None


def _format_seconds(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _validate_timeout(value: Any) -> float | None:
    # `value` is raw model JSON, hence Any.
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ToolExecutionError("Invalid timeout: must be a finite number of seconds")
    if value * 1000 > _MAX_TIMEOUT_MS:
        raise ToolExecutionError("Invalid timeout: maximum is 2147483.647 seconds")
    return float(value)


class BashTool(AgentTool):
    name = "bash"
    label = "bash"
    description = (
        "Run a shell command in the working directory and get back its combined stdout and stderr. Only the last "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB of output are returned; when output is cut, the "
        "complete output is written to a temp file whose path is given. Pass timeout (seconds) for commands that "
        "might not finish."
    )
    parameters = object_schema(
        {
            "command": string_param("Shell command line to run"),
            "timeout": number_param("Seconds to wait before the command is killed (no limit when omitted)"),
        },
        ["command"],
    )
    prompt_snippet = "Execute bash commands (ls, grep, find, etc.)"
    capabilities: tuple[str, ...] = ("exec",)

    def __init__(self, cwd: str, options: BashToolOptions | None = None) -> None:
        self.cwd = cwd
        self.options = options or BashToolOptions()

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        command = required_str(params, "command")
        timeout = _validate_timeout(params.get("timeout"))
        opts = self.options
        if signal is not None and signal.aborted:
            raise ToolExecutionError("Command aborted")
        local = opts.operations is None
        if local and not os.path.isdir(self.cwd):
            raise ToolExecutionError(f"Working directory does not exist: {self.cwd}\nCannot execute bash commands.")
        operations = opts.operations or LocalBashOperations(opts.shell_path, opts.kill_grace)
        shell = operations.shell if isinstance(operations, LocalBashOperations) else None
        if opts.command_prefix:
            command = f"{opts.command_prefix}\n{command}"
        session = opts.session_environment() if opts.session_environment is not None else None
        env = build_command_env(
            opts.base_env if opts.base_env is not None else os.environ,
            opts.agent_dir,
            session,
            opts.expose_session_environment,
        )
        spawn = SpawnContext(command, self.cwd, env)
        if opts.spawn_hook is not None:
            spawn = opts.spawn_hook(spawn)

        accumulator = OutputAccumulator(
            opts.max_lines, opts.max_bytes, opts.temp_dir, opts.log_head_bytes, opts.log_tail_bytes
        )
        await emit_update(on_update, AgentToolResult(content=[], details=None))
        new_data = asyncio.Event()

        def on_data(chunk: bytes) -> None:
            accumulator.append(chunk)
            new_data.set()

        updater = asyncio.ensure_future(self._stream_updates(accumulator, new_data, on_update))
        try:
            outcome = await run_operations(operations, spawn.command, spawn.cwd, spawn.env, on_data, signal, timeout)
        finally:
            updater.cancel()
            accumulator.finish()
            accumulator.close()

        text, details = _final_output(accumulator)
        execution: dict[str, Any] = {"cwd": spawn.cwd}
        if shell is not None:
            execution.update(executable=shell, argv=[shell, "-c", spawn.command])
        execution["exitCode"] = outcome.exit_code
        details["execution"] = execution
        if outcome.aborted:
            raise ToolExecutionError(_with_suffix(text, "Command aborted"), details)
        if outcome.timed_out:
            assert timeout is not None  # only a timeout can time out
            message = _with_suffix(text, f"Command timed out after {_format_seconds(timeout)} seconds")
            raise ToolExecutionError(message, details)
        if outcome.exit_code not in (0, None):
            raise ToolExecutionError(
                f"{text or '(no output)'}\n\nCommand exited with code {outcome.exit_code}", details
            )
        return text_result(text or "(no output)", details)

    async def _stream_updates(
        self, accumulator: OutputAccumulator, new_data: asyncio.Event, on_update: ToolUpdateCallback | None
    ) -> None:
        """Send the current tail at most every `UPDATE_INTERVAL_SECONDS` while output arrives.

        The first chunk is sent at once (like the reference, whose quick commands show their output immediately).
        """
        if on_update is None:
            return
        last: float | None = None
        while True:
            await new_data.wait()
            wait = 0.0 if last is None else UPDATE_INTERVAL_SECONDS - (self.options.clock() - last)
            if wait > 0:
                await asyncio.sleep(wait)
            new_data.clear()
            snapshot = accumulator.snapshot()
            details: dict[str, Any] = {}
            if snapshot.truncated:
                details["truncation"] = snapshot.to_wire()
            if accumulator.full_output_path:
                details["fullOutputPath"] = accumulator.full_output_path
            last = self.options.clock()
            await emit_update(on_update, text_result(snapshot.content, details))


def _with_suffix(text: str, suffix: str) -> str:
    return f"{text}\n\n{suffix}" if text else suffix


def _final_output(accumulator: OutputAccumulator) -> tuple[str, dict[str, Any]]:
    """The model-facing text (tail plus truncation notice) and the `details` that describe it."""
    truncation = accumulator.snapshot()
    details: dict[str, Any] = {}
    path = accumulator.full_output_path
    if path:
        details["fullOutputPath"] = path
    if not truncation.truncated:
        return truncation.content, details
    details["truncation"] = truncation.to_wire()
    return f"{truncation.content}\n\n{_notice(accumulator, truncation, path)}", details


def _notice(accumulator: OutputAccumulator, truncation: TruncationResult, path: str | None) -> str:
    total = accumulator.total_lines
    end = total
    start = total - truncation.output_lines + 1
    full = f"Full output: {path}" if path else "Full output unavailable"
    if truncation.last_line_partial:
        shown = format_size(truncation.output_bytes)
        return f"[Showing last {shown} of line {end} (line is {format_size(accumulator.last_line_bytes)}). {full}]"
    if truncation.truncated_by == "lines":
        return f"[Showing lines {start}-{end} of {total}. {full}]"
    return f"[Showing lines {start}-{end} of {total} ({format_size(accumulator.max_bytes)} limit). {full}]"


__all__ = [
    "SESSION_ENV_NAMES",
    "BashTool",
    "BashToolOptions",
    "SessionEnvironment",
    "SpawnContext",
    "build_command_env",
]
