"""The `read` tool: text files with paging and truncation, images as attachments."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.types import ImageContent, TextContent
from apex_coding_agent.tools._common import (
    check_aborted,
    number_param,
    object_schema,
    optional_int,
    os_error_message,
    required_str,
    string_param,
    text_result,
)
from apex_coding_agent.tools.image import detect_image_mime, prepare_image
from apex_coding_agent.tools.path_utils import resolve_read_path
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

NO_IMAGE_SUPPORT_NOTE = "[Current model does not support images. The image will be omitted from this request.]"
_BINARY_SNIFF_BYTES = 8192


class ReadOperations(Protocol):
    """Where `read` gets its bytes; replace to read over SSH or inside a container."""

    async def read_file(self, path: str) -> bytes: ...

    async def access(self, path: str) -> None:
        """Raise `OSError` unless `path` exists and is readable."""
        ...

    async def detect_image_mime(self, path: str) -> str | None: ...


class LocalReadOperations:
    """`ReadOperations` on the local filesystem."""

    async def read_file(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    async def access(self, path: str) -> None:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
        if not os.access(path, os.R_OK):
            raise PermissionError(13, "Permission denied", path)

    async def detect_image_mime(self, path: str) -> str | None:
        with open(path, "rb") as handle:
            return detect_image_mime(handle.read(64))


@dataclass
class ReadToolOptions:
    """`auto_resize_images` mirrors the `images.autoResize` setting; `supports_images` asks the current model."""

    auto_resize_images: bool = True
    supports_images: Callable[[], bool] | None = None
    operations: ReadOperations | None = None


class ReadTool(AgentTool):
    name = "read"
    label = "read"
    description = (
        "Read a file. Text files come back as plain text; images (jpg, png, gif, webp, bmp) are attached so you can "
        f"see them. Text output stops after {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB, whichever "
        "comes first. For long files pass offset/limit, and keep reading with the offset given in the notice until "
        "you have what you need."
    )
    parameters = object_schema(
        {
            "path": string_param("File to read, relative to the working directory or absolute"),
            "offset": number_param("First line to return, counting from 1"),
            "limit": number_param("Largest number of lines to return"),
        },
        ["path"],
    )
    prompt_snippet = "Read file contents"
    capabilities: tuple[str, ...] = ("fs.read",)

    def __init__(self, cwd: str, options: ReadToolOptions | None = None) -> None:
        self.cwd = cwd
        self.options = options or ReadToolOptions()
        self.operations: ReadOperations = self.options.operations or LocalReadOperations()

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        path = required_str(params, "path")
        offset = optional_int(params, "offset")
        limit = optional_int(params, "limit")
        check_aborted(signal)
        absolute = resolve_read_path(path, self.cwd)
        try:
            await self.operations.access(absolute)
            mime = await self.operations.detect_image_mime(absolute)
            check_aborted(signal)
            raw = await self.operations.read_file(absolute)
        except OSError as exc:
            raise ToolExecutionError(os_error_message(exc, "open", absolute)) from exc
        check_aborted(signal)
        if mime is not None:
            return self._image_result(raw, mime)
        if b"\x00" in raw[:_BINARY_SNIFF_BYTES]:
            return text_result(
                f"{path} looks like a binary file ({format_size(len(raw))}) and is not shown. "
                "Use bash (for example `file` or `xxd | head`) to inspect it."
            )
        return _text_result(raw.decode("utf-8", "replace"), path, offset, limit)

    def _image_result(self, raw: bytes, mime: str) -> AgentToolResult:
        prepared = prepare_image(raw, mime, self.options.auto_resize_images)
        header = f"Read image file [{prepared.mime_type}]"
        supports = self.options.supports_images() if self.options.supports_images is not None else True
        if prepared.data is None:
            text = f"Read image file [{mime}]\n{prepared.error}"
            if not supports:
                text += "\n" + NO_IMAGE_SUPPORT_NOTE
            return text_result(text)
        lines = [header, *prepared.hints]
        if not supports:
            lines.append(NO_IMAGE_SUPPORT_NOTE)
        return AgentToolResult(
            content=[TextContent(text="\n".join(lines)), ImageContent(data=prepared.data, mime_type=prepared.mime_type)]
        )


def _text_result(text: str, path: str, offset: int | None, limit: int | None) -> AgentToolResult:
    lines = text.split("\n")
    total = len(lines)
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise ToolExecutionError(f"Offset {offset} is beyond end of file ({total} lines total)")
    if limit is not None:
        selected = lines[start : start + limit]
    else:
        selected = lines[start:]
    truncation = truncate_head("\n".join(selected), DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    first = start + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(len(lines[start].encode("utf-8")))
        limit_text = format_size(DEFAULT_MAX_BYTES)
        message = (
            f"[Line {first} is {size}, exceeds {limit_text} limit. "
            f"Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return text_result(message, {"truncation": truncation.to_wire()})
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        if truncation.truncated_by == "lines":
            notice = f"[Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.]"
        else:
            notice = (
                f"[Showing lines {first}-{last} of {total} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                f"Use offset={last + 1} to continue.]"
            )
        return text_result(f"{truncation.content}\n\n{notice}", {"truncation": truncation.to_wire()})
    if limit is not None and start + limit < total:
        remaining = total - (start + limit)
        notice = f"[{remaining} more lines in file. Use offset={start + limit + 1} to continue.]"
        return text_result(f"{truncation.content}\n\n{notice}")
    return text_result(truncation.content)


__all__ = ["NO_IMAGE_SUPPORT_NOTE", "LocalReadOperations", "ReadOperations", "ReadTool", "ReadToolOptions"]
