"""mcp.json: shape, `$VAR` expansion, clear errors, trust gating, and writing (no server is started here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apex_coding_agent.mcp_servers.config import (
    McpConfigError,
    McpServerConfig,
    load_mcp_config,
    remove_server,
    write_server,
)


def _write(path: Path, servers: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def test_user_and_trusted_project_files_merge_later_wins(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    _write(agent / "mcp.json", {"a": {"command": "a-user"}, "b": {"url": "http://b/mcp"}})
    _write(cwd / ".mcp.json", {"a": {"command": "a-root"}})
    _write(cwd / ".apex-code" / "mcp.json", {"c": {"command": "c", "args": ["-x"], "enabled": False}})
    load = load_mcp_config(cwd, agent, project_trusted=True)
    assert load.errors == []
    assert {n: e.scope for n, e in load.servers.items()} == {"a": "project", "b": "user", "c": "project"}
    assert load.servers["a"].config.command == "a-root"
    assert load.servers["b"].config.transport == "http"
    assert load.servers["c"].config.enabled is False


def test_untrusted_project_files_are_never_read(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    _write(agent / "mcp.json", {"mine": {"command": "ok"}})
    _write(cwd / ".mcp.json", {"evil": {"command": "rm"}})
    (cwd / ".apex-code").mkdir()
    (cwd / ".apex-code" / "mcp.json").write_text("{not json", encoding="utf-8")  # not even parsed: no error
    load = load_mcp_config(cwd, agent, project_trusted=False)
    assert set(load.servers) == {"mine"}
    assert load.errors == []
    assert sorted(load.skipped_untrusted) == sorted([str(cwd / ".mcp.json"), str(cwd / ".apex-code" / "mcp.json")])


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"x": {"command": "a", "url": "http://u"}}, 'either "command"'),
        ({"x": {}}, 'either "command"'),
        ({"x": {"command": "a", "headers": {"h": "v"}}}, '"headers" do not apply'),
        ({"x": {"url": "http://u", "args": ["a"]}}, '"args", "env", "cwd"'),
        ({"x": {"command": "a", "timeoutMs": 0}}, "timeoutMs"),
        ({"x": {"command": "a", "comand": "typo"}}, "comand"),
        ({"x": {"command": 5}}, "command"),
        ({"bad name!": {"command": "a"}}, "may use only letters"),
        ({"x": "not an object"}, 'MCP server "x"'),
    ],
)
def test_a_bad_server_is_one_clear_error_and_the_others_still_load(
    tmp_path: Path, servers: dict[str, object], expected: str
) -> None:
    agent = tmp_path / "agent"
    _write(agent / "mcp.json", {"good": {"command": "ok"}, **servers})
    load = load_mcp_config(tmp_path, agent, project_trusted=False)
    assert set(load.servers) == {"good"}
    assert len(load.errors) == 1
    assert expected in load.errors[0] and str(agent / "mcp.json") in load.errors[0]


@pytest.mark.parametrize("text", ["{broken", "[]", '{"mcpServers": []}'])
def test_a_bad_file_is_an_error_naming_it(tmp_path: Path, text: str) -> None:
    (tmp_path / "mcp.json").write_text(text, encoding="utf-8")
    load = load_mcp_config(tmp_path / "none", tmp_path, project_trusted=True)
    assert load.servers == {}
    assert len(load.errors) == 1 and str(tmp_path / "mcp.json") in load.errors[0]


def test_variables_expand_and_a_missing_one_names_the_field(tmp_path: Path) -> None:
    _write(
        tmp_path / "mcp.json",
        {
            "s": {"command": "$BIN", "args": ["--token=${TOKEN}", "$$literal"], "env": {"K": "${TOKEN}"}},
            "h": {"url": "http://$HOST/mcp", "headers": {"Authorization": "Bearer ${NOPE}"}},
        },
    )
    load = load_mcp_config(tmp_path / "none", tmp_path, project_trusted=False)
    env = {"BIN": "/bin/srv", "TOKEN": "t0k", "HOST": "h"}
    stdio = load.servers["s"].resolve(env).config
    assert (stdio.command, stdio.args, stdio.env) == ("/bin/srv", ["--token=t0k", "$literal"], {"K": "t0k"})
    with pytest.raises(McpConfigError, match=r"headers\.Authorization uses \$NOPE, which is not set \(.*mcp\.json\)"):
        load.servers["h"].resolve(env)


def test_allowed_and_denied_tools() -> None:
    config = McpServerConfig.model_validate({"command": "x", "allowedTools": ["a", "b"], "deniedTools": ["b"]})
    assert [t for t in ("a", "b", "c") if config.tool_enabled(t)] == ["a"]
    assert McpServerConfig(command="x").tool_enabled("anything")


def test_write_and_remove_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"note": "kept", "mcpServers": {"old": {"command": "o"}}}), encoding="utf-8")
    write_server(path, "new", McpServerConfig(url="http://n/mcp", headers={"A": "$T"}))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "note": "kept",
        "mcpServers": {"old": {"command": "o"}, "new": {"url": "http://n/mcp", "headers": {"A": "$T"}}},
    }
    assert remove_server(path, "old") and not remove_server(path, "old")
    assert set(json.loads(path.read_text(encoding="utf-8"))["mcpServers"]) == {"new"}
    with pytest.raises(McpConfigError, match="may use only"):
        write_server(path, "a b", McpServerConfig(command="x"))
