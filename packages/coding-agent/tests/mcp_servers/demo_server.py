"""A real MCP server written with the SDK's server side, for the tests: `python demo_server.py [stdio|http PORT|mute]`.

`APEX_TEST_MCP_MARKER`, when set, names a file the server appends one line to when it starts (proof of execution).
`mute` reads its input and never answers (a server that never answers `initialize`). `APEX_TEST_MCP_WAIT_FOR`, when
set, names a file the server waits for before it answers anything (a server that is ready only when the test says).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time
from typing import Any

marker = os.environ.get("APEX_TEST_MCP_MARKER")
if marker:
    with open(marker, "a", encoding="utf-8") as out:
        out.write(f"started {os.getpid()}\n")

mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
if mode == "mute":
    print("muted server started", file=sys.stderr, flush=True)
    for _line in sys.stdin:
        pass
    sys.exit(0)

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402

server = MCPServer("demo")
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text, prefixed."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    from mcp.server.mcpserver.exceptions import ToolError

    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def lines(count: int) -> str:
    """Return `count` numbered lines."""
    return "\n".join(f"line {i}" for i in range(count))


@server.tool()
def picture() -> list[object]:
    """A caption and a 1x1 PNG."""
    from mcp_types import ImageContent, TextContent

    return [TextContent(type="text", text="a red dot"), ImageContent(type="image", data=PIXEL, mime_type="image/png")]


@server.tool()
def crash() -> str:
    """Kill the server mid-call."""
    print("crashing now", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


_listed_extra: list[asyncio.Event] = []
_list_tools = server.list_tools


async def _list_tools_seen() -> Any:  # Any: the SDK's tool list
    tools = await _list_tools()
    if any(tool.name == "extra" for tool in tools):
        for event in _listed_extra:
            event.set()
    return tools


server.list_tools = _list_tools_seen  # type: ignore[method-assign]


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra`, tell the client the list changed, and answer once it has fetched the new list (a
    moment later, so the client has taken it in before the answer arrives)."""
    listed = asyncio.Event()
    _listed_extra.append(listed)
    server.add_tool(lambda: f"extra at {time.time()}", name="extra", description="Added later.")
    await ctx.session.send_tool_list_changed()
    await asyncio.wait_for(listed.wait(), 30)
    await asyncio.sleep(0.2)
    return "grown"


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Ask for a review of a file."""
    return f"Please review {path}, looking for {focus}."


@server.resource("note://hello")
def hello() -> str:
    """A short note."""
    return "hello from the note"


wait_for = os.environ.get("APEX_TEST_MCP_WAIT_FOR")
while wait_for and not os.path.exists(wait_for):
    time.sleep(0.02)
print(f"demo server starting ({mode})", file=sys.stderr, flush=True)
if mode == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run()
