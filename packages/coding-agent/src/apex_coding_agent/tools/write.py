"""The `write` tool: create or overwrite a file, making parent directories."""

from __future__ import annotations

import hashlib
import os
from typing import Any, Protocol

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    check_aborted,
    object_schema,
    os_error_message,
    required_str,
    string_param,
    text_result,
)
from apex_coding_agent.tools.file_mutation_queue import with_file_mutation_queue
from apex_coding_agent.tools.path_utils import resolve_to_cwd


class WriteOperations(Protocol):
    """Where `write` puts bytes; replace to write over SSH or inside a container."""

    async def write_file(self, path: str, content: bytes) -> None: ...

    async def mkdir(self, path: str) -> None:
        """Create `path` and its parents; an existing directory is fine."""
        ...


class LocalWriteOperations:
    async def write_file(self, path: str, content: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(content)

    async def mkdir(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)


class WriteTool(AgentTool):
    name = "write"
    label = "write"
    description = (
        "Write text to a file, replacing whatever it held. Missing parent directories are created. "
        "Use it for new files or complete rewrites; prefer edit for changes to part of a file."
    )
    parameters = object_schema(
        {
            "path": string_param("File to write, relative to the working directory or absolute"),
            "content": string_param("The complete new contents of the file"),
        },
        ["path", "content"],
    )
    prompt_snippet = "Create or overwrite files"
    capabilities: tuple[str, ...] = ("fs.write",)

    def __init__(self, cwd: str, operations: WriteOperations | None = None) -> None:
        self.cwd = cwd
        self.operations: WriteOperations = operations or LocalWriteOperations()

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        path = required_str(params, "path")
        content = required_str(params, "content")
        absolute = resolve_to_cwd(path, self.cwd)
        check_aborted(signal)

        async def mutate() -> AgentToolResult:
            # Abort is checked between steps, but only once the lock is held, so a later call never sees a
            # half-finished write.
            check_aborted(signal)
            data = content.encode("utf-8", "surrogatepass")
            try:
                await self.operations.mkdir(os.path.dirname(absolute))
                check_aborted(signal)
                await self.operations.write_file(absolute, data)
            except OSError as exc:
                raise ToolExecutionError(os_error_message(exc, "open", absolute)) from exc
            check_aborted(signal)
            details = {"byteCount": len(data), "contentHash": hashlib.sha256(data).hexdigest()}
            return text_result(f"Successfully wrote {len(content)} bytes to {path}", details)

        return await with_file_mutation_queue(absolute, mutate)


__all__ = ["LocalWriteOperations", "WriteOperations", "WriteTool"]
