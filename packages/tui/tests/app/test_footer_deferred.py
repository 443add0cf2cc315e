"""The footer's usage figures come after the first frame (reading them walks the whole session).

The real app over a real session runtime holding replies with usage, drawn by a real `MainLoop` on urwid's
`ScriptedScreen`; the screen notes, for every frame, how often the app had read the session's statistics by then.
"""

import asyncio
from pathlib import Path
from typing import Any

from app_helpers import SIZE, AppHarness
from urwid.testing import ScriptedScreen

from apex_ai.types import AssistantMessage, Cost, TextContent, Usage, UserMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.keybindings import load_keybindings
from apex_tui.widgets import format_tokens

EXCHANGES = 300
INPUT, OUTPUT, COST = 1200, 30, 0.01


class CountingScreen(ScriptedScreen):
    """Records `(app.stats_reads, footer rows)` at every draw."""

    def __init__(self, app: InteractiveApp) -> None:
        super().__init__(size=SIZE, inputs=[[] for _ in range(100)])
        self.app = app
        self.frames: list[tuple[int, str]] = []

    def draw_screen(self, size: tuple[int, int], canvas: Any) -> None:
        # Any: urwid's Canvas; only its text rows are read.
        super().draw_screen(size, canvas)
        rows = [row.decode("utf-8") for row in canvas.text]
        self.frames.append((self.app.stats_reads, "\n".join(rows[-2:])))


async def open_app(harness: AppHarness) -> InteractiveApp:
    """The app over a session of EXCHANGES prompts and replies, each reply with the same usage."""
    manager = SessionManager.in_memory(str(harness.cwd))
    for index in range(EXCHANGES):
        manager.append_message(UserMessage(content=f"question {index}", timestamp=1))
        usage = Usage(input=INPUT, output=OUTPUT, total_tokens=INPUT + OUTPUT, cost=Cost(total=COST))
        reply = AssistantMessage(
            content=[TextContent(text=f"answer {index}")],
            api="faux",
            provider="faux",
            model="faux-1",
            usage=usage,
            stop_reason="stop",
            timestamp=1,
        )
        manager.append_message(reply)
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        model=harness.faux.model("faux-1"),
        session_manager=manager,
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
    )
    harness.app = InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(harness.agent_dir),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        version="0.0.test",
    )
    return harness.app


async def test_the_first_frame_has_no_usage_figures_and_the_next_one_has_them(tmp_path: Path) -> None:
    app = await open_app(AppHarness(tmp_path))
    assert app.stats_reads == 0  # building the app read no statistics
    up, down = f"↑{format_tokens(EXCHANGES * INPUT)}", f"↓{format_tokens(EXCHANGES * OUTPUT)}"
    cost = f"${EXCHANGES * COST:.3f}"
    screen = CountingScreen(app)
    main_loop = app.make_main_loop(screen, asyncio.get_running_loop())
    main_loop.start()
    try:
        for _ in range(200):
            await asyncio.sleep(0.002)
            if screen.frames and up in screen.frames[-1][1]:
                break
    finally:
        main_loop.stop()
    reads, footer = screen.frames[0]
    assert reads == 0  # nothing read before the first frame was on screen
    assert "faux-1" in footer and "work" in footer  # the rest of the footer is there
    assert up not in footer and cost not in footer and "%/" not in footer
    reads, footer = screen.frames[-1]
    assert reads == 1
    assert up in footer and down in footer and cost in footer and "%/200k" in footer
    stats = app.session.get_session_stats()
    assert (stats.tokens.input, stats.tokens.output) == (EXCHANGES * INPUT, EXCHANGES * OUTPUT)


async def test_without_a_main_loop_the_first_render_fills_the_figures_in(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(harness)
    assert app.stats_reads == 0
    footer = "\n".join(harness.screen()[-2:])
    assert app.stats_reads == 1
    assert f"↑{format_tokens(EXCHANGES * INPUT)}" in footer
    harness.screen()
    assert app.stats_reads == 1  # filled in once; later frames do not read them again


async def test_a_full_update_before_the_first_frame_fills_them_in(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(harness)
    app.cycle_thinking()  # any footer update with figures
    assert app.stats_reads == 1
    assert app.footer.state.stats_pending is False
    assert app.footer.state.input_tokens == EXCHANGES * INPUT
    harness.screen()
    assert app.stats_reads == 1
