"""`/settings`, `/login`, `/logout`, theme from settings and the terminal title, through the real app."""

import json
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from app_helpers import AppHarness

from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.extensions.llama.extension import create_llama_extension
from apex_tui.theme import builtin_theme
from apex_tui.widgets.pickers import InputDialog, SelectList


async def test_settings_rows_cycle_apply_and_persist(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    settings = app.session.settings_manager
    harness.type("/settings")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, SelectList)
    assert "Auto-compact: on" in harness.text()
    harness.press("enter")
    assert settings.get("compaction.enabled") is False
    assert "Auto-compact: off" in harness.text()
    assert not app.session.auto_compaction_enabled

    harness.press("down", "enter")  # Hide thinking blocks
    assert settings.get("hideThinkingBlock") is True and app.ctx.hide_thinking

    harness.type("theme")
    harness.press("enter")
    assert "── Theme" in harness.text() and "› dark" in harness.text()  # the theme menu, dark highlighted
    harness.press("down")
    assert app.theme is builtin_theme("light") and settings.get("theme") is None  # preview only
    harness.press("esc")
    assert app.theme is builtin_theme("dark")
    harness.press("enter", "down", "enter")
    assert settings.get("theme") == "light" and app.theme is builtin_theme("light")
    assert "Theme: light" in harness.text()
    assert isinstance(app.slot.original_widget, SelectList) and "Settings" in harness.text()
    harness.press("esc", "esc")
    assert app.slot.original_widget is app.editor


async def test_theme_comes_from_settings_and_unknown_names_fall_back_to_dark(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(settings={"theme": "light"})
    assert app.theme is builtin_theme("light")
    (tmp_path / "other").mkdir()
    other = AppHarness(tmp_path / "other")
    assert (await other.start(settings={"theme": "neon"})).theme is builtin_theme("dark")


async def test_login_stores_a_masked_api_key_and_logout_removes_it(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    auth_file = harness.agent_dir / "auth.json"
    harness.model_runtime.auth = AuthStorage(auth_file)
    app = await harness.start()
    harness.type("/login")
    harness.press("enter")
    assert "Login: choose provider" in harness.text()
    harness.type("faux")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, InputDialog)
    harness.type("sk-secret-1")
    assert "sk-secret-1" not in harness.text() and "***********" in harness.text()
    harness.press("enter")
    assert json.loads(auth_file.read_text()) == {"faux": {"type": "api_key", "key": "sk-secret-1"}}
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600
    assert "Saved API key for faux in auth.json" in harness.text()

    harness.type("/logout")
    harness.press("enter")
    harness.press("enter")
    assert json.loads(auth_file.read_text()) == {}
    assert "Logged out of faux" in harness.text()
    harness.type("/logout")
    harness.press("enter")
    assert "No stored credentials" in harness.text()
    harness.type("/login nowhere")
    harness.press("enter")
    assert "Unknown provider: nowhere" in harness.text()


async def test_terminal_title_follows_the_session_name(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    titles: list[str] = []
    app.title_sink = titles.append
    app.update_title()
    harness.type("/name release prep")
    harness.press("enter")
    assert titles == ["apex-code - work", "apex-code - release prep - work"]


class _Router(BaseHTTPRequestHandler):
    """A llama.cpp router that wants key `secret`, with one model on disk."""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != "Bearer secret":
            body, status = {"error": {"message": "Invalid API Key"}}, 401
        elif self.path == "/props":
            body, status = {"role": "router", "models_autoload": True}, 200
        elif self.path == "/models":
            body, status = {"data": [{"id": "tiny-q4", "status": {"value": "unloaded"}}]}, 200
        else:
            body, status = {"error": {"message": "not found"}}, 404
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


async def test_login_llama_cpp_asks_for_the_server_url_and_an_optional_key(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Router)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        harness = AppHarness(tmp_path)
        auth_file = harness.agent_dir / "auth.json"
        auth = harness.model_runtime.auth = AuthStorage(auth_file)
        app = await harness.start(extensions=[create_llama_extension(get_credential=auth.get, interactive=None)])
        assert harness.model_runtime.registry.list_models("llama.cpp") == []

        harness.type("/login")
        harness.press("enter")
        assert "llama.cpp" in harness.text()  # offered although it lists no models yet
        harness.press("esc")
        harness.type("/login llama.cpp")
        harness.press("enter")
        assert isinstance(app.slot.original_widget, InputDialog)
        assert "llama.cpp server URL" in harness.text() and "http://127.0.0.1:8080" in harness.text()
        harness.press(*["backspace"] * len("http://127.0.0.1:8080"))
        harness.type(f"{url}/v1/")  # normalized: the trailing /v1 and slash go
        harness.press("enter")
        assert "API key for llama.cpp at " + url in harness.text()
        harness.type("secret")
        assert "secret" not in harness.text()
        harness.press("enter")
        assert json.loads(auth_file.read_text()) == {
            "llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": url}, "key": "secret"}
        }
        await harness.until("1 model(s) available")
        assert [m.id for m in app.session.model_runtime.registry.list_models("llama.cpp")] == ["tiny-q4"]
    finally:
        server.shutdown()
        server.server_close()
