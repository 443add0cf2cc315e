"""The `edit` tool: exact (or whitespace/quote tolerant) text replacement in one file."""

from __future__ import annotations

import json
import os
from typing import Any, Protocol

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    check_aborted,
    errno_name,
    object_schema,
    required_str,
    string_param,
    text_result,
)
from apex_coding_agent.tools.edit_diff import (
    Edit,
    apply_edits,
    detect_line_ending,
    generate_diff_string,
    generate_patch,
    normalize_to_lf,
    restore_line_endings,
    strip_bom,
)
from apex_coding_agent.tools.file_mutation_queue import with_file_mutation_queue
from apex_coding_agent.tools.path_utils import resolve_to_cwd

INVALID_EDITS_MESSAGE = "Edit tool input is invalid. edits must contain at least one replacement."


class EditOperations(Protocol):
    """File access used by `edit`; replace to edit over SSH or inside a container."""

    async def read_file(self, path: str) -> bytes: ...

    async def write_file(self, path: str, content: bytes) -> None: ...

    async def access(self, path: str) -> None:
        """Raise `OSError` unless `path` is readable and writable."""
        ...


class LocalEditOperations:
    async def read_file(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    async def write_file(self, path: str, content: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(content)

    async def access(self, path: str) -> None:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
        if not os.access(path, os.R_OK | os.W_OK):
            raise PermissionError(13, "Permission denied", path)


_EDITS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["oldText", "newText"],
        "properties": {
            "oldText": string_param("Text to replace; must occur exactly once in the original file"),
            "newText": string_param("Text to put in its place"),
        },
        "additionalProperties": False,
    },
    "description": (
        "Replacements, each matched against the original file (not against the result of earlier ones); "
        "targets must not overlap"
    ),
}


class EditTool(AgentTool):
    name = "edit"
    label = "edit"
    description = (
        "Change part of a file by replacing text. Every oldText has to appear exactly once in the file and the "
        "regions must not overlap; give enough surrounding lines to make each one unique. Several replacements in "
        "one file go into a single call via edits."
    )
    # Closed like the upstream's schema: arguments the model invents are refused, not silently ignored.
    parameters = {
        **object_schema(
            {
                "path": string_param("File to change, relative to the working directory or absolute"),
                "edits": _EDITS_SCHEMA,
            },
            ["path", "edits"],
        ),
        "additionalProperties": False,
    }
    prompt_snippet = "Make precise replacements in files"
    capabilities: tuple[str, ...] = ("fs.read", "fs.write")

    def __init__(self, cwd: str, operations: EditOperations | None = None) -> None:
        self.cwd = cwd
        self.operations: EditOperations = operations or LocalEditOperations()

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Accept `edits` sent as a JSON string and the legacy top-level `oldText`/`newText` pair."""
        prepared = dict(args)
        edits = prepared.get("edits")
        if isinstance(edits, str):
            try:
                parsed = json.loads(edits)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                prepared["edits"] = parsed
        old_text, new_text = prepared.get("oldText"), prepared.get("newText")
        if isinstance(old_text, str) and isinstance(new_text, str):
            existing = prepared.get("edits")
            merged = list(existing) if isinstance(existing, list) else []
            merged.append({"oldText": old_text, "newText": new_text})
            prepared["edits"] = merged
            del prepared["oldText"]
            del prepared["newText"]
        return prepared

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        path = required_str(params, "path")
        edits = _parse_edits(params.get("edits"))
        absolute = resolve_to_cwd(path, self.cwd)
        check_aborted(signal)

        async def mutate() -> AgentToolResult:
            check_aborted(signal)
            try:
                await self.operations.access(absolute)
                raw = await self.operations.read_file(absolute)
            except OSError as exc:
                raise ToolExecutionError(f"Could not edit file: {path}. Error code: {errno_name(exc)}.") from exc
            check_aborted(signal)
            bom, text = strip_bom(raw.decode("utf-8", "replace"))
            ending = detect_line_ending(text)
            original = normalize_to_lf(text)
            updated = apply_edits(original, edits, path)
            check_aborted(signal)
            final = bom + restore_line_endings(updated, ending)
            try:
                await self.operations.write_file(absolute, final.encode("utf-8", "surrogatepass"))
            except OSError as exc:
                raise ToolExecutionError(f"Could not edit file: {path}. Error code: {errno_name(exc)}.") from exc
            diff, first_changed = generate_diff_string(original, updated)
            details = {
                "diff": diff,
                "patch": generate_patch(original, updated, path),
                "firstChangedLine": first_changed,
            }
            return text_result(f"Successfully replaced {len(edits)} block(s) in {path}.", details)

        return await with_file_mutation_queue(absolute, mutate)


def _parse_edits(value: Any) -> list[Edit]:
    # `value` is raw model JSON, hence Any; every element is checked below.
    if not isinstance(value, list) or not value:
        raise ToolExecutionError(INVALID_EDITS_MESSAGE)
    edits: list[Edit] = []
    for item in value:
        if not isinstance(item, dict):
            raise ToolExecutionError(INVALID_EDITS_MESSAGE)
        old_text, new_text = item.get("oldText"), item.get("newText")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise ToolExecutionError(INVALID_EDITS_MESSAGE)
        edits.append(Edit(old_text, new_text))
    return edits


__all__ = ["INVALID_EDITS_MESSAGE", "EditOperations", "EditTool", "LocalEditOperations"]
