"""Small helpers shared by the built-in tools."""

from __future__ import annotations

import asyncio
import errno
import inspect
import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias

from apex_agent.tools import AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.types import TextContent
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

ABORTED_MESSAGE = "Operation aborted"

ReadFilter: TypeAlias = Callable[[], Callable[[str], bool] | None]
"""Asked once per call: a predicate telling which absolute paths reading is denied for, or None when none can be.

Searching and listing tools leave such paths out and say how many they skipped; the permission gate's
`read_filter` is one.
"""


def check_aborted(signal: AbortSignal | None) -> None:
    """Raise the tools' standard abort error when `signal` has fired."""
    if signal is not None and signal.aborted:
        raise ToolExecutionError(ABORTED_MESSAGE)


def text_result(text: str, details: Any = None) -> AgentToolResult:
    # details are tool-specific JSON values, hence Any.
    return AgentToolResult(content=[TextContent(text=text)], details=details)


async def emit_update(on_update: ToolUpdateCallback | None, result: AgentToolResult) -> None:
    """Call a sync or async update callback and wait for it.

    The wait is shielded: cancelling the caller (a tool's progress pump is cancelled when its command ends)
    stops the wait but never the update itself, which the agent still delivers and tracks.
    """
    if on_update is None:
        return
    outcome = on_update(result)
    if inspect.isawaitable(outcome):
        await asyncio.shield(outcome)


def os_error_message(exc: OSError, operation: str, path: str) -> str:
    """Node-like error text, e.g. `ENOENT: no such file or directory, open '/x'`."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    reason = (exc.strerror or str(exc)).lower()
    return f"{code}: {reason}, {operation} '{path}'"


def errno_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, "EIO")


def optional_int(params: dict[str, Any], key: str) -> int | None:
    """An optional numeric parameter as an int (JSON numbers may arrive as floats)."""
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolExecutionError(f"Invalid {key}: must be a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolExecutionError(f"Invalid {key}: must be a finite number")
        return int(value)
    return value


def limit_param(params: dict[str, Any], default: int) -> int:
    """The `limit` parameter of a listing tool: `default` when absent, never below 1."""
    raw = optional_int(params, "limit")
    return max(1, raw if raw is not None else default)


def required_str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise ToolExecutionError(f"Invalid {key}: must be a string")
    return value


def optional_str(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolExecutionError(f"Invalid {key}: must be a string")
    return value


def string_param(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def number_param(description: str) -> dict[str, Any]:
    return {"type": "number", "description": description}


def boolean_param(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An object schema; like the upstream's, `required` is left out when nothing is required."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


class Notice(NamedTuple):
    """One bracketed note under a tool's output, and the `details` keys that say the same to programs."""

    text: str
    details: dict[str, Any]  # Any: tool-specific JSON values, as in `text_result`


def head_limited_result(
    text: str, before: list[Notice] | None = None, after: list[Notice] | None = None
) -> AgentToolResult:
    """`text` cut to `DEFAULT_MAX_BYTES` from its head, followed by `[note. note]`.

    The notes are `before`, then the byte-limit one when the text was cut, then `after`; `details` merges
    theirs in the same order (None when there are none).
    """
    truncation = truncate_head(text, 10**12, DEFAULT_MAX_BYTES)
    notices = list(before or [])
    if truncation.truncated:
        notices.append(Notice(f"{format_size(DEFAULT_MAX_BYTES)} limit reached", {"truncation": truncation.to_wire()}))
    notices += after or []
    details: dict[str, Any] = {}
    for notice in notices:
        details.update(notice.details)
    output = truncation.content
    if notices:
        output += "\n\n[" + ". ".join(notice.text for notice in notices) + "]"
    return text_result(output, details or None)


def skipped_notice(count: int) -> list[Notice]:
    """The note saying how many paths a search or listing left out because reading them is denied."""
    if count == 0:
        return []
    text = f"{count} path{'' if count == 1 else 's'} skipped: reading them is denied by the permission rules"
    return [Notice(text, {"skippedDenied": count})]
