"""Shared helpers of the session tests: sample files, message factories and golden normalisation."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from apex_ai.types import AssistantMessage, TextContent, Usage, UserMessage

DATA = Path(__file__).parent / "data"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def copy_sample(name: str, directory: Path) -> Path:
    """Copy `data/<name>` into `directory` and return the copy."""
    target = directory / name
    shutil.copyfile(DATA / name, target)
    return target


def user(text: str, ts: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def assistant(text: str, ts: int = 2, model: str = "fake-model", provider: str = "fake") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="anthropic-messages",
        provider=provider,
        model=model,
        usage=Usage(input=90, output=7, total_tokens=97),
        stop_reason="stop",
        timestamp=ts,
    )


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def normalize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace volatile values: ids by `id1, id2, ...` in order of appearance (references follow), ISO timestamps by
    `<ts>`, the header's session id by `<session>`, and its cwd by `<cwd>`."""
    ids: dict[str, str] = {}

    def ref(value: Any) -> Any:
        return ids.get(value, value) if isinstance(value, str) else value

    out: list[dict[str, Any]] = []
    for record in records:
        item = dict(record)
        if item.get("type") == "session":
            item["id"] = "<session>"
            item["cwd"] = "<cwd>"
        elif "id" in item:
            ids[item["id"]] = f"id{len(ids) + 1}"
            item["id"] = ids[record["id"]]
        for key in ("parentId", "targetId", "firstKeptEntryId", "fromId"):
            if key in item:
                item[key] = ref(item[key])
        if isinstance(item.get("timestamp"), str) and ISO.match(item["timestamp"]):
            item["timestamp"] = "<ts>"
        out.append(item)
    return out
