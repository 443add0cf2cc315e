"""Work the app does for a long session (issue 7), counted in block builds rather than timed.

A session written with the `SessionManager` API is opened by the real app: the first frame shows the newest
messages and lays out only the blocks on screen; typing into the editor re-lays out no transcript block; older
blocks are laid out only when scrolled to.
"""

from pathlib import Path

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider
from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.keybindings import load_keybindings

SIZE = (100, 30)
ENTRIES = 1500
MAX_VISIBLE_BLOCKS = 15
"""More than a 30-row screen can show of these messages (each takes at least 2 rows)."""


def write_session(directory: Path, entries: int) -> Path:
    manager = SessionManager.create(str(directory), directory / "sessions")
    for index in range(entries):
        kind = index % 3
        if kind == 0:
            manager.append_message(UserMessage(content=f"question {index}: why?", timestamp=1))
        elif kind == 1:
            content: list[TextContent | ToolCall] = [
                TextContent(text=f"answer {index}: the **parser** keeps state."),
                ToolCall(id=f"call_{index}", name="bash", arguments={"command": "pytest -q"}),
            ]
            message = AssistantMessage(
                content=list(content), api="faux", provider="faux", model="faux-1", stop_reason="toolUse", timestamp=1
            )
            manager.append_message(message)
        else:
            result = [TextContent(text="1 passed")]
            manager.append_message(
                ToolResultMessage(tool_call_id=f"call_{index - 1}", tool_name="bash", content=result, timestamp=1)
            )
    path = manager.session_file
    assert path is not None
    manager.close()
    return path


async def open_app(root: Path, session_file: Path) -> InteractiveApp:
    faux = FauxProvider(models=[{"id": "faux-1"}])
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    cwd = root / "work"
    cwd.mkdir()
    agent_dir = root / "agent"
    agent_dir.mkdir()
    result = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(agent_dir),
        model=faux.model("faux-1"),
        session_manager=SessionManager.open(session_file),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
    )
    return InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(agent_dir),
        cwd=str(cwd),
        agent_dir=agent_dir,
        version="0.0.test",
    )


def frame(app: InteractiveApp) -> str:
    canvas = app.root.render(SIZE, focus=True)
    return "\n".join(row.decode("utf-8") for row in canvas.text)


def builds(app: InteractiveApp) -> int:
    return sum(block.builds for block in app.transcript.walker)


async def test_a_long_session_opens_at_the_newest_messages_and_lays_out_only_what_is_on_screen(
    tmp_path: Path,
) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    screen = frame(app)
    newest = 3 * ((ENTRIES - 1) // 3)
    assert f"question {newest}: why?" in screen
    assert "question 0: why?" not in screen
    assert len(app.transcript) > ENTRIES // 2
    assert 0 < builds(app) <= MAX_VISIBLE_BLOCKS
    await app.runtime.dispose()


async def test_typing_re_lays_out_no_transcript_block(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    frame(app)
    before = builds(app)
    typed = ""
    for char in "hello there":
        app.root.keypress(SIZE, char)
        typed += char
        assert typed in frame(app)
    assert app.editor.text == "hello there"
    assert builds(app) == before
    await app.runtime.dispose()


async def test_older_blocks_are_laid_out_only_when_scrolled_to(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    frame(app)
    before = builds(app)
    app.transcript.scroll_to_top()
    screen = frame(app)
    assert "question 0: why?" in screen
    assert 0 < builds(app) - before <= MAX_VISIBLE_BLOCKS
    middle = len(app.transcript) // 2
    assert app.transcript.walker[middle].builds == 0
    await app.runtime.dispose()
