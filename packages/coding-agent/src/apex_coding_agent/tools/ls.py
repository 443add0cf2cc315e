"""The `ls` tool: list one directory, dotfiles included."""

from __future__ import annotations

import os
import stat
from typing import Any, Protocol

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    Notice,
    ReadFilter,
    check_aborted,
    head_limited_result,
    limit_param,
    number_param,
    object_schema,
    optional_str,
    skipped_notice,
    string_param,
)
from apex_coding_agent.tools.path_utils import resolve_to_cwd
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_LS_LIMIT = 500


class LsOperations(Protocol):
    """Directory access used by `ls`; replace to list over SSH or inside a container."""

    async def exists(self, path: str) -> bool: ...

    async def is_directory(self, path: str) -> bool:
        """Raise `OSError` when `path` cannot be inspected."""
        ...

    async def readdir(self, path: str) -> list[str]: ...


class LocalLsOperations:
    async def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    async def is_directory(self, path: str) -> bool:
        return stat.S_ISDIR(os.stat(path).st_mode)

    async def readdir(self, path: str) -> list[str]:
        return os.listdir(path)


class LsTool(AgentTool):
    name = "ls"
    label = "ls"
    description = (
        "List a directory's entries, dotfiles included, sorted alphabetically; directories end with '/'. "
        f"At most {DEFAULT_LS_LIMIT} entries (change with limit) and {DEFAULT_MAX_BYTES // 1024}KB are returned."
    )
    parameters = object_schema(
        {
            "path": string_param("Directory to list (default: the working directory)"),
            "limit": number_param(f"Largest number of entries to return (default: {DEFAULT_LS_LIMIT})"),
        },
        [],
    )
    prompt_snippet = "List directory contents"
    capabilities: tuple[str, ...] = ("fs.read",)

    def __init__(self, cwd: str, operations: LsOperations | None = None, read_filter: ReadFilter | None = None) -> None:
        self.cwd = cwd
        self.operations: LsOperations = operations or LocalLsOperations()
        self.read_filter = read_filter

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        check_aborted(signal)
        directory = resolve_to_cwd(optional_str(params, "path") or ".", self.cwd)
        limit = limit_param(params, DEFAULT_LS_LIMIT)
        ops = self.operations
        if not await ops.exists(directory):
            raise ToolExecutionError(f"Path not found: {directory}")
        if not await ops.is_directory(directory):
            raise ToolExecutionError(f"Not a directory: {directory}")
        try:
            names = await ops.readdir(directory)
        except OSError as exc:
            raise ToolExecutionError(f"Cannot read directory: {exc.strerror or exc}") from exc
        names.sort(key=str.lower)
        denied = self.read_filter() if self.read_filter is not None else None
        entries: list[str] = []
        skipped = 0
        for name in names:
            check_aborted(signal)
            if denied is not None and denied(os.path.join(directory, name)):
                skipped += 1
                continue
            try:
                is_dir = await ops.is_directory(os.path.join(directory, name))
            except OSError:
                continue  # vanished or unreadable entries are skipped, as the spec asks
            entries.append(name + "/" if is_dir else name)
        if not entries:
            return head_limited_result("(empty directory)", skipped_notice(skipped))
        shown = entries[:limit]
        notices: list[Notice] = []
        if len(entries) > limit:
            text = f"{len(shown)} of {len(entries)} total entries shown. Use limit={limit * 2} for more"
            notices.append(Notice(text, {"entryLimitReached": limit, "totalEntries": len(entries)}))
        return head_limited_result("\n".join(shown), notices, skipped_notice(skipped))


__all__ = ["DEFAULT_LS_LIMIT", "LocalLsOperations", "LsOperations", "LsTool"]
