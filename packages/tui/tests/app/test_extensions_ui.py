"""Extensions in the app: `ctx.ui` dialogs and widgets, extension commands in autocomplete, shortcuts by key."""

import asyncio
from pathlib import Path
from typing import Any

from app_helpers import AppHarness

from apex_ai.abort import AbortController
from apex_ai.providers.faux import faux_assistant_message
from apex_coding_agent.extensions.loader import InlineExtension
from apex_tui.app._extension_ui import EditorDialog
from apex_tui.widgets.pickers import ConfirmDialog, InputDialog, SelectDialog


def deployer(log: list[str]) -> InlineExtension:
    """A tiny extension: `/deploy` asks, notifies, sets a status and two widgets; three shortcuts."""

    def factory(pi: Any) -> None:
        # Any: the ExtensionAPI object handed to factories.
        async def deploy(args: str, ctx: Any) -> None:
            ok = await ctx.ui.confirm("Deploy?", f"Ship {args} now?")
            ctx.ui.notify(f"deploy confirmed: {ok}", "info")
            ctx.ui.set_status("deploy", "deploy: done" if ok else "deploy: skipped")
            ctx.ui.set_widget("steps", ["step one ok", "step two ok"])
            ctx.ui.set_widget("tail", ["under the editor"], "belowEditor")
            log.append(f"deploy {args} {ok} mode={ctx.mode}")

        pi.register_command("deploy", deploy, description="Ship the build")
        pi.on("session_start", lambda event, ctx: log.append("session_start"))
        pi.register_shortcut("alt+k", lambda ctx: log.append(f"alt+k idle={ctx.is_idle()}"))
        pi.register_shortcut("ctrl+c", lambda ctx: log.append("stolen ctrl+c"))
        pi.register_shortcut("alt+up", lambda ctx: log.append("alt+up"))

    return InlineExtension(factory, "deployer")


async def test_command_dialog_notify_status_and_widgets(tmp_path: Path) -> None:
    log: list[str] = []
    harness = AppHarness(tmp_path)
    app = await harness.start(extensions=[deployer(log)])
    await harness.until_true(lambda: "session_start" in log)
    assert "[Extensions] deployer" in harness.text()

    harness.type("/dep")
    assert "/deploy" in [s.label for s in app.editor.suggestions]
    assert "Ship the build" in harness.text()
    app.editor.set_text("")

    harness.type("/deploy prod")
    harness.press("enter")
    await harness.until("Deploy?")
    assert isinstance(app.slot.original_widget, ConfirmDialog)
    assert "Ship prod now?" in harness.text()
    harness.press("enter")
    await harness.until("deploy confirmed: True")
    await harness.settle()
    assert log[-1] == "deploy prod True mode=tui"
    assert app.slot.original_widget is app.editor
    rows = harness.screen()
    assert any("deploy: done" in row for row in rows[-3:])  # footer line 3
    above = next(i for i, row in enumerate(rows) if "step one ok" in row)
    below = next(i for i, row in enumerate(rows) if "under the editor" in row)
    assert rows[above + 1].strip() == "step two ok"
    editor_rules = [i for i, row in enumerate(rows) if row.startswith("─")]
    assert above < editor_rules[-2] and editor_rules[-1] < below  # above the editor's top rule, below its bottom


async def test_shortcuts_follow_the_precedence_rules(tmp_path: Path) -> None:
    log: list[str] = []
    harness = AppHarness(tmp_path)
    app = await harness.start(extensions=[deployer(log)])
    text = harness.text()
    assert "shortcut ctrl+c skipped: it is reserved by" in text
    assert "shortcut alt+up overrides app.message.dequeue" in text

    harness.press("meta k")
    assert log[-1] == "alt+k idle=True"
    harness.press("meta up")
    assert log[-1] == "alt+up"  # wins over the built-in dequeue (no "No queued messages" status)
    assert "No queued messages to restore" not in harness.text()
    harness.type("abc")
    harness.press("ctrl c")
    assert "stolen ctrl+c" not in log and app.editor.text == ""  # reserved: the built-in clear ran

    harness.type("/settings")
    harness.press("enter")
    harness.press("meta k")  # a picker has the keys: extension shortcuts only act in the editor
    assert log.count("alt+k idle=True") == 1


async def test_dialogs_answer_time_out_and_abort(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    ui = app.ui

    chosen = asyncio.ensure_future(ui.select("Pick one", ["red", "green", "blue"]))
    await harness.until("Pick one")
    assert isinstance(app.slot.original_widget, SelectDialog)
    harness.press("down", "enter")
    assert await chosen == "green"
    assert app.slot.original_widget is app.editor

    typed = asyncio.ensure_future(ui.input("Your name", "e.g. Ada"))
    await harness.until("e.g. Ada")
    assert isinstance(app.slot.original_widget, InputDialog)
    harness.type("Grace")
    harness.press("enter")
    assert await typed == "Grace"

    edited = asyncio.ensure_future(ui.editor("Commit message", "fix: "))
    await harness.until("Commit message")
    assert isinstance(app.slot.original_widget, EditorDialog)
    harness.type("typo")
    harness.press("enter")
    assert await edited == "fix: typo"

    cancelled = asyncio.ensure_future(ui.editor("Other", "x"))
    await harness.until("Other")
    harness.press("esc")
    assert await cancelled is None

    assert await ui.confirm("Quick?", "times out", timeout=20) is False
    assert app.slot.original_widget is app.editor and "Quick?" not in harness.text()

    controller = AbortController()
    pending = asyncio.ensure_future(ui.select("Aborted?", ["a"], signal=controller.signal))
    await harness.until("Aborted?")
    controller.abort()
    assert await pending is None
    assert app.slot.original_widget is app.editor


async def test_editor_text_title_and_themes_through_ctx_ui(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    titles: list[str] = []
    app.title_sink = titles.append
    ui = app.ui
    ui.set_editor_text("draft")
    assert app.editor.text == "draft" and ui.get_editor_text() == "draft"
    ui.paste_to_editor(" more")
    assert app.editor.text == "draft more"
    ui.set_title("deploying")
    assert titles == ["deploying"]
    ui.notify("careful", "warning")
    assert "Warning: careful" in harness.text()
    assert [t["name"] for t in ui.get_all_themes()] == ["dark", "light"]
    assert ui.set_theme("light") == {"success": True}
    theme = ui.get_theme()
    assert theme is not None and theme.name == "light" and app.theme is theme
    assert ui.set_theme("neon") == {"success": False, "error": 'Theme "neon" not found'}
    ui.set_status("a", "first")
    ui.set_status("a", None)
    assert app.footer.state.extension_statuses == ()


async def test_extension_commands_run_without_a_model(tmp_path: Path) -> None:
    log: list[str] = []
    harness = AppHarness(tmp_path)
    app = await harness.start(model=None, extensions=[deployer(log)])
    harness.type("/deploy staging")
    harness.press("enter")
    await harness.until("Deploy?")
    harness.press("esc")
    await harness.until("deploy confirmed: False")
    await harness.settle()
    assert log[-1] == "deploy staging False mode=tui" and app.session.model is None
    harness.type("hello")
    harness.press("enter")
    assert "No model selected" in harness.text()


def announcer() -> InlineExtension:
    """`/announce` sends a displayed custom message; before each prompt another one is attached to the run."""

    def factory(pi: Any) -> None:
        # Any: the ExtensionAPI object handed to factories.
        async def announce(args: str, ctx: Any) -> None:
            pi.send_message({"customType": "notice", "content": f"announced {args}", "display": True})
            pi.send_message({"customType": "hidden", "content": "never shown", "display": False})

        pi.register_command("announce", announce, description="Send a custom message")
        pi.on(
            "before_agent_start",
            lambda event, ctx: {"message": {"customType": "context", "content": "attached context", "display": True}},
        )

    return InlineExtension(factory, "announcer")


async def test_displayed_custom_messages_show_live_without_a_restart(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("Noted."))
    await harness.start(extensions=[announcer()])

    harness.type("/announce release")
    harness.press("enter")
    await harness.until("announced release")
    assert "never shown" not in harness.text()

    harness.type("hello")
    harness.press("enter")
    await harness.until("Noted.")
    text = harness.text()
    assert "attached context" in text
    assert text.index("attached context") < text.index("Noted.")
    assert text.count("announced release") == 1 and text.count("attached context") == 1
