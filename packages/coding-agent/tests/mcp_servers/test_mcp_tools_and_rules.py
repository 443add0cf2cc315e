"""MCP tools as agent tools: names, result mapping with the built-in truncation, permission rules by name, plan mode."""

from __future__ import annotations

from pathlib import Path

import mcp_types
import pytest

from apex_ai.types import ImageContent, TextContent
from apex_coding_agent.core.permissions import (
    RUNTIME_CONTRACTS,
    PermissionGate,
    PermissionMode,
    PermissionRule,
    RuleSet,
    Source,
    tool_name_matches,
)
from apex_coding_agent.mcp_servers.host import _contract
from apex_coding_agent.mcp_servers.tools import McpTool, map_content, tool_name
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES


def test_tool_names_are_prefixed_safe_and_short() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("s", "a.b/c d") == "mcp__s__a_b_c_d"
    long = tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp__server__x")


def test_text_is_cut_like_the_builtin_tools_and_images_are_kept() -> None:
    many = "\n".join(f"line {i}" for i in range(DEFAULT_MAX_LINES + 500))
    blocks = map_content(
        [
            mcp_types.TextContent(type="text", text=many),
            mcp_types.ImageContent(type="image", data="iVBORw0=", mime_type="image/png"),
        ]
    )
    text, image = blocks
    assert isinstance(text, TextContent) and isinstance(image, ImageContent)
    kept = text.text.split("\n\n[Output truncated")[0]
    assert kept.count("\n") + 1 == DEFAULT_MAX_LINES
    assert f"{DEFAULT_MAX_LINES} of {DEFAULT_MAX_LINES + 500} lines" in text.text
    wide = map_content([mcp_types.TextContent(type="text", text="y" * 200 + "\n" + "z" * DEFAULT_MAX_BYTES)])
    assert len(wide[0].text.encode()) < DEFAULT_MAX_BYTES and "[Output truncated" in wide[0].text  # type: ignore[union-attr]
    assert image.mime_type == "image/png" and image.data == "iVBORw0="


def test_structured_only_results_and_empty_ones_still_say_something() -> None:
    (only,) = map_content([], {"answer": 42})
    assert isinstance(only, TextContent) and '"answer": 42' in only.text
    assert map_content([]) == [TextContent(text="(no output)")]


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__githubx__create_issue", False),
        ("mcp__github", "mcp__github__create_issue", True),
        ("mcp__github", "mcp__github_two__x", False),
        ("mcp__*", "mcp__a__b", True),
        ("mcp__*", "bash", False),
        ("bash", "bash", True),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
    ],
)
def test_rule_tool_names_match_whole_servers_and_globs(pattern: str, name: str, matches: bool) -> None:
    assert tool_name_matches(pattern, name) is matches


def _tool(name: str, read_only: bool) -> McpTool:
    annotations = mcp_types.ToolAnnotations(read_only_hint=True) if read_only else None
    made = McpTool(
        lambda: None, "srv", mcp_types.Tool(name=name, input_schema={"type": "object"}, annotations=annotations)
    )
    RUNTIME_CONTRACTS[made.name] = _contract(made)
    return made


@pytest.fixture
def tools() -> tuple[McpTool, McpTool]:
    made = (_tool("look", True), _tool("change", False))
    yield made
    for tool in made:
        RUNTIME_CONTRACTS.pop(tool.name, None)


@pytest.mark.parametrize(
    ("mode", "rules", "look", "change"),
    [
        ("default", [], "ask", "ask"),
        ("plan", [], "allow", "ask"),  # plan: read-only by the server's annotations runs, the rest asks
        ("plan", [PermissionRule("mcp__srv__*", "deny")], "deny", "deny"),
        ("default", [PermissionRule("mcp__srv__*", "allow")], "allow", "allow"),
        ("default", [PermissionRule("mcp__srv", "allow"), PermissionRule("mcp__srv__change", "deny")], "allow", "deny"),
        ("dontAsk", [], "deny", "deny"),
        ("bypassPermissions", [], "allow", "allow"),
    ],
)
def test_gate_decides_mcp_tools_by_name_and_mode(
    tools: tuple[McpTool, McpTool],
    tmp_path: Path,
    mode: PermissionMode,
    rules: list[PermissionRule],
    look: str,
    change: str,
) -> None:
    source: Source = "user"
    gate = PermissionGate(tmp_path, stores={source: RuleSet(rules)}, flag_mode=mode)
    assert gate.check(tools[0].name, {}).behavior == look
    assert gate.check(tools[1].name, {}).behavior == change
