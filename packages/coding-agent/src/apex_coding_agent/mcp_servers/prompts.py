"""MCP prompts as `/mcp:<server>:<prompt> args` and resources as `@<server>:<uri>` in what the user types.

Both expand in the extensions' `input` step, before the text reaches the model: a prompt's messages replace the
command line, a resource's text is appended to the message in a `<resource>` block. Prompt arguments are given in
the order the server declares them (`/mcp:docs:review src/app.py high`) or as `name=value`; a value with spaces
is quoted. A missing required argument, an unknown prompt or a server that is not connected is an error the user
sees (the text is not sent).
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apex_coding_agent.mcp_servers.host import McpHost

COMMAND = re.compile(r"^/mcp:([A-Za-z0-9_-]+):(\S+)(?:\s+(.*))?$", re.DOTALL)
RESOURCE = re.compile(r"(?<!\S)@([A-Za-z0-9_-]+):(\S+)")


class McpInputError(ValueError):
    """Input naming an MCP prompt or resource that cannot be expanded; the message says why."""


def prompt_arguments(declared: list[Any], raw: str) -> dict[str, str]:  # Any: mcp PromptArgument
    """`name=value` words by name, the other words in declaration order."""
    try:
        words = shlex.split(raw)
    except ValueError as exc:
        raise McpInputError(f"cannot read the arguments: {exc}") from exc
    names = [a.name for a in declared]
    out: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            out[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in out]
    if len(positional) > len(free):
        if not free:
            raise McpInputError(f"takes no more arguments (declared: {', '.join(names) or 'none'})")
        # The rest of the line belongs to the last argument.
        positional[len(free) - 1 :] = [" ".join(positional[len(free) - 1 :])]
    out.update(zip(free, positional, strict=False))
    missing = [a.name for a in declared if a.required and a.name not in out]
    if missing:
        raise McpInputError(f"missing argument(s): {', '.join(missing)}")
    return out


def _content_text(content: Any) -> str:  # Any: an MCP content block
    kind = getattr(content, "type", None)
    if kind == "text":
        return str(content.text)
    if kind == "resource":
        return str(getattr(content.resource, "text", "") or "")
    return ""


async def expand_input(host: McpHost, text: str) -> str | None:
    """The text with MCP prompts and resources expanded; None when it names none."""
    changed = False
    match = COMMAND.match(text.strip())
    if match is not None:
        server, prompt, raw = match.group(1), match.group(2), match.group(3) or ""
        connection = host.connections.get(server)
        if connection is None or connection.status != "connected":
            status = connection.status if connection is not None else host.statuses.get(server, (None, None))[0]
            state = f"is not connected ({status})" if status is not None else "is not configured"
            raise McpInputError(f'/mcp:{server}:{prompt}: the MCP server "{server}" {state}')
        found = next((p for p in connection.prompts if p.name == prompt), None)
        if found is None:
            known = ", ".join(p.name for p in connection.prompts) or "none"
            raise McpInputError(f"/mcp:{server}:{prompt}: the server has no such prompt (prompts: {known})")
        try:
            arguments = prompt_arguments(list(found.arguments or []), raw)
        except McpInputError as exc:
            raise McpInputError(f"/mcp:{server}:{prompt}: {exc}") from exc
        result = await connection.get_prompt(prompt, arguments)
        text = "\n\n".join(t for t in (_content_text(m.content) for m in result.messages) if t)
        changed = True
    attachments: list[str] = []
    for server, uri in RESOURCE.findall(text):
        connection = host.connections.get(server)
        if connection is None:
            continue  # not ours: an @mention of something else
        read = await connection.read_resource(uri)
        body = "\n".join(
            str(getattr(c, "text", "") or f"[binary {getattr(c, 'mime_type', '')}]") for c in read.contents
        )
        attachments.append(f'<resource server="{server}" uri="{uri}">\n{body}\n</resource>')
    if attachments:
        text = text + "\n\n" + "\n\n".join(attachments)
        changed = True
    return text if changed else None


__all__ = ["McpInputError", "expand_input", "prompt_arguments"]
