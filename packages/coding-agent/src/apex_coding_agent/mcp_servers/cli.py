"""`apex-code mcp list|get|add|remove`: the configured MCP servers, without starting any.

`add` writes `<agent dir>/mcp.json` (`--scope user`, the default) or the project's `.mcp.json`
(`--scope project`); `remove` takes a server out of the file that holds it. `list` and `get` read the files as the
agent would and say when a project's servers would not start because the project is not trusted.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TextIO

from apex_coding_agent.mcp_servers.config import (
    McpConfigError,
    McpServerConfig,
    McpServerEntry,
    parse_servers,
    project_config_paths,
    read_config_file,
    remove_server,
    user_config_path,
    write_server,
)

USAGE = """usage: apex-code mcp list [--json]
       apex-code mcp get NAME
       apex-code mcp add NAME [--scope user|project] [--env KEY=VALUE]... [--timeout-ms N] -- COMMAND [ARGS...]
       apex-code mcp add NAME [--scope user|project] [--header 'Name: value']... [--timeout-ms N] --url URL
       apex-code mcp remove NAME [--scope user|project]
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # raise instead of exiting
        raise McpConfigError(message)


def _project_trusted(cwd: str, agent_dir: Path) -> bool:
    from apex_coding_agent.core.trust import TrustStore, resolve_project_trusted

    try:
        return resolve_project_trusted(cwd, TrustStore(agent_dir / "trust.json")).trusted
    except Exception:  # an unreadable trust file: treat the project as untrusted, as the agent would
        return False


def _all_entries(cwd: str, agent_dir: Path) -> tuple[list[McpServerEntry], list[str]]:
    """Every file's servers in load order (a later one of the same name wins), and the errors met."""
    entries: list[McpServerEntry] = []
    errors: list[str] = []
    files = [(user_config_path(agent_dir), "user"), *((p, "project") for p in project_config_paths(cwd))]
    for path, scope in files:
        try:
            data = read_config_file(path)
        except McpConfigError as exc:
            errors.append(str(exc))
            continue
        if data is None:
            continue
        servers, problems = parse_servers(data, str(path), scope)  # type: ignore[arg-type]  # one of the literals
        entries.extend(servers.values())
        errors.extend(problems)
    return entries, errors


def _target(config: McpServerConfig) -> str:
    if config.url is not None:
        return config.url
    return " ".join([config.command or "", *config.args])


def _list(out: TextIO, err: TextIO, cwd: str, agent_dir: Path, as_json: bool) -> int:
    entries, errors = _all_entries(cwd, agent_dir)
    trusted = _project_trusted(cwd, agent_dir)
    effective = {e.name: e for e in entries if e.scope == "user" or trusted}
    rows = []
    for entry in entries:
        note = ""
        if entry.scope == "project" and not trusted:
            note = "not started: the project is not trusted"
        elif effective.get(entry.name) is not entry:
            note = "overridden by a later file"
        elif not entry.config.enabled:
            note = "disabled"
        rows.append((entry, note))
    if as_json:
        data = [
            {
                "name": e.name,
                "scope": e.scope,
                "source": e.source,
                "transport": e.config.transport,
                "config": e.config.to_json(),
                **({"note": note} if note else {}),
            }
            for e, note in rows
        ]
        out.write(json.dumps(data, indent=2) + "\n")
    elif not rows and not errors:  # with errors, "none configured" would hide that some are, wrongly
        out.write(
            f"No MCP servers configured. Add one with `apex-code mcp add NAME -- COMMAND` ({user_config_path(agent_dir)}).\n"
        )
    for entry, note in rows if not as_json else []:
        out.write(f"{entry.name}  {entry.config.transport}  {_target(entry.config)}  [{entry.scope}: {entry.source}]")
        out.write(f"  ({note})\n" if note else "\n")
    for line in errors:
        err.write(f"Error: {line}\n")
    return 1 if errors else 0


def _get(out: TextIO, cwd: str, agent_dir: Path, name: str) -> int:
    entries, _ = _all_entries(cwd, agent_dir)
    found = [e for e in entries if e.name == name]
    if not found:
        raise McpConfigError(f'no MCP server named "{name}" is configured')
    for entry in found:
        out.write(
            json.dumps({"name": name, "scope": entry.scope, "source": entry.source, **entry.config.to_json()}, indent=2)
        )
        out.write("\n")
    return 0


def _scope_path(scope: str, cwd: str, agent_dir: Path) -> Path:
    return user_config_path(agent_dir) if scope == "user" else project_config_paths(cwd)[0]


def _pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise McpConfigError(f"{what} must look like KEY{sep}VALUE, got {item!r}")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """`apex-code mcp ...`; returns the exit code."""
    from apex_coding_agent.paths import get_agent_dir

    agent_dir = Path(get_agent_dir())
    cwd = os.getcwd()
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if command == "list":
            parser = _Parser(prog="apex-code mcp list", add_help=False)
            parser.add_argument("--json", action="store_true")
            return _list(stdout, stderr, cwd, agent_dir, parser.parse_args(rest).json)
        if command == "get":
            parser = _Parser(prog="apex-code mcp get", add_help=False)
            parser.add_argument("name")
            return _get(stdout, cwd, agent_dir, parser.parse_args(rest).name)
        if command == "add":
            head, dash, tail = (
                (rest[: rest.index("--")], True, rest[rest.index("--") + 1 :]) if "--" in rest else (rest, False, [])
            )
            parser = _Parser(prog="apex-code mcp add", add_help=False)
            parser.add_argument("name")
            parser.add_argument("--scope", choices=("user", "project"), default="user")
            parser.add_argument("--env", action="append", default=[])
            parser.add_argument("--header", action="append", default=[])
            parser.add_argument("--url")
            parser.add_argument("--timeout-ms", type=int)
            args = parser.parse_args(head)
            if dash == (args.url is not None):
                raise McpConfigError("give either `-- COMMAND [ARGS...]` or `--url URL`")
            if dash and not tail:
                raise McpConfigError("a command is missing after `--`")
            raw: dict[str, object] = (
                {"url": args.url, "headers": _pairs(args.header, ":", "--header")}
                if args.url is not None
                else {"command": tail[0], "args": tail[1:], "env": _pairs(args.env, "=", "--env")}
            )
            if args.timeout_ms is not None:
                raw["timeoutMs"] = args.timeout_ms
            try:
                config = McpServerConfig.model_validate(raw)
            except ValueError as exc:
                raise McpConfigError(str(exc).splitlines()[-1].strip()) from exc
            path = _scope_path(args.scope, cwd, agent_dir)
            write_server(path, args.name, config)
            stdout.write(f'Added MCP server "{args.name}" to {path}\n')
            return 0
        if command == "remove":
            parser = _Parser(prog="apex-code mcp remove", add_help=False)
            parser.add_argument("name")
            parser.add_argument("--scope", choices=("user", "project"))
            args = parser.parse_args(rest)
            scopes = [args.scope] if args.scope else ["user", "project"]
            for scope in scopes:
                path = _scope_path(scope, cwd, agent_dir)
                if remove_server(path, args.name):
                    stdout.write(f'Removed MCP server "{args.name}" from {path}\n')
                    return 0
            raise McpConfigError(
                f'no MCP server named "{args.name}" in {" or ".join(str(_scope_path(s, cwd, agent_dir)) for s in scopes)}'
            )
    except McpConfigError as exc:
        stderr.write(f"Error: {exc}\n")
        return 1
    stderr.write(
        USAGE if command in ("", "help", "--help", "-h") else f"Error: unknown mcp command {command!r}\n{USAGE}"
    )
    return 0 if command in ("help", "--help", "-h") else 1


__all__ = ["run"]
