"""Factories and the parameter schemas the model sees (spec tools.md §1)."""

import json
from pathlib import Path
from typing import Any

from apex_coding_agent.tools import (
    ALL_TOOL_NAMES,
    create_all_tools,
    create_coding_tools,
    create_read_only_tools,
)

UPSTREAM = json.loads((Path(__file__).parent / "data" / "upstream_tool_schemas.json").read_text())


def _shape(schema: Any) -> Any:
    """The schema without its descriptions (those are ours, written in our own words)."""
    if isinstance(schema, dict):
        return {key: _shape(value) for key, value in schema.items() if key != "description"}
    if isinstance(schema, list):
        return [_shape(item) for item in schema]
    return schema


def test_default_and_read_only_sets(tmp_path: Path) -> None:
    assert [tool.name for tool in create_coding_tools(str(tmp_path))] == ["read", "bash", "edit", "write"]
    assert [tool.name for tool in create_read_only_tools(str(tmp_path))] == ["read", "grep", "find", "ls"]
    assert list(create_all_tools(str(tmp_path))) == list(ALL_TOOL_NAMES)


def test_schemas_match_the_upstream_shapes(tmp_path: Path) -> None:
    tools = create_all_tools(str(tmp_path))
    assert set(UPSTREAM) == {"read", "bash", "edit", "write"}
    for name, upstream in UPSTREAM.items():
        ours = dict(tools[name].declaration().parameters)
        # The capture is an Anthropic request, whose input_schema carries only type/properties/required;
        # the OpenAI captures show the edit schema is also closed with a top-level additionalProperties.
        closed = ours.pop("additionalProperties", None)
        assert closed is (False if name == "edit" else None), name
        assert _shape(ours) == _shape(upstream), name


def test_every_tool_describes_itself(tmp_path: Path) -> None:
    for tool in create_all_tools(str(tmp_path)).values():
        schema = tool.parameters_schema()
        assert tool.description
        assert all(prop["description"] for prop in schema["properties"].values())
    assert "required" not in create_all_tools(str(tmp_path))["ls"].parameters_schema()
