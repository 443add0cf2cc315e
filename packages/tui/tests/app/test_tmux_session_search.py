"""tmux end to end: `-r`, Ctrl+F searches every message of every session, Enter opens the session at the hit."""

from pathlib import Path

from tmux_helpers import TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent import SessionManager
from apex_coding_agent.paths import default_session_dir


def test_full_text_search_in_the_resume_picker_opens_the_hit(tmp_path: Path) -> None:
    from apex_ai.types import AssistantMessage, TextContent, Usage, UserMessage

    cwd, agent_dir = tmp_path / "work", tmp_path / "agent"
    cwd.mkdir()
    directory = default_session_dir(str(cwd), {"APEX_CODE_CODING_AGENT_DIR": str(agent_dir)})
    for question, answer in (("deploy the site", "use the staging bucket"), ("fix flaky test", "a race in the pool")):
        manager = SessionManager.create(str(cwd), directory)
        manager.append_message(UserMessage(content=question, timestamp=1))
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=answer)],
                api="x",
                provider="p",
                model="m",
                usage=Usage(),
                stop_reason="stop",
                timestamp=2,
            )  # fmt: skip
        )
        manager.close()
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=("-r",))
        try:
            app.wait_for("Resume Session (Current Folder)")
            app.keys("C-f")
            app.wait_for("Search Messages (Current Folder)")
            app.type("pool")
            screen = app.wait_for("a race in the pool")
            assert "staging" not in screen
            app.keys("Enter")
            screen = app.wait_for("Navigated to selected point")
            assert "a race in the pool" in screen
        finally:
            app.close()
