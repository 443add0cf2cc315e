"""The screen invariant in tmux: after every modal flow, in both layouts, the screen equals a full repaint of the
same state (`TmuxApp.assert_repaint_stable`): dialogs leave nothing behind, the spinner stops, the editor and the
footer come back."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tmux_helpers import PROMPT, TmuxApp, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

LAYOUTS = ["inline", "fullscreen"]


def write_reasoning_model(agent_dir: Path, server: ScriptedModelServer) -> None:
    """`write_models` with a reasoning model: the thinking picker has levels to show."""
    write_models(agent_dir, server)
    config = json.loads((agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"][0]["reasoning"] = True
    (agent_dir / "models.json").write_text(json.dumps(config))


def layout_args(layout: str) -> tuple[str, ...]:
    return ("--tui-mode", "fullscreen") if layout == "fullscreen" else ()


def idle(app: TmuxApp) -> str:
    """Wait until the run ended (no `Working...`) and the footer shows."""
    return app.wait_until(lambda s: "Working" not in s and "fake-model" in s, "the app idle")


@pytest.fixture
def workdirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    yield cwd, tmp_path / "agent"


TOOL_TURN = {"tool_calls": [{"name": "bash", "arguments": {"command": "echo approved-42"}}]}
ANSWER_KEYS = {
    "allow once": ["Enter"],
    "for this session": ["Down", "Enter"],
    "deny": ["Down", "Down", "Enter"],
    "escape": ["Escape"],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("answer", list(ANSWER_KEYS))
def test_permission_dialog_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str, answer: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([TOOL_TURN, {"text": "All done here.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("run the command")
            app.keys("Enter")
            app.wait_for("Allow bash?")
            app.assert_repaint_stable("the permission dialog open")
            app.keys(*ANSWER_KEYS[answer])
            app.wait_for("All done here.")
            screen = idle(app)
            assert "Allow bash?" not in screen
            screen = app.assert_repaint_stable(f"after answering {answer}")
            assert "─" * 40 in screen and str(cwd.name) in screen
        finally:
            app.close()


def command(app: TmuxApp, text: str) -> None:
    """Type a slash command and run it (Escape first closes the autocomplete list it opens)."""
    app.type(text)
    app.wait_for(text)
    app.keys("Enter")


def open_and_close(opener: str, shows: str, *close: str) -> Callable[[TmuxApp], None]:
    def flow(app: TmuxApp) -> None:
        command(app, opener)
        app.wait_for(shows)
        app.assert_repaint_stable(f"{opener} open")
        app.keys(*close)
        app.wait_until(lambda s: shows not in s, f"{opener} closed")

    return flow


def tree_navigate(summary: str) -> Callable[[TmuxApp], None]:
    def flow(app: TmuxApp) -> None:
        command(app, "/tree")
        app.wait_for("first question")
        app.assert_repaint_stable("/tree open")
        # Up from the leaf to the first user message; Enter asks whether to summarize the branch left behind.
        app.keys("Up", "Up", "Up", "Enter")
        app.wait_for("Summarize branch?")
        app.assert_repaint_stable("/tree summary question")
        app.keys(*(["Down", "Enter"] if summary == "summarize" else ["Enter"]))
        app.wait_for("first question")
        app.wait_until(lambda s: "Summarize branch?" not in s and "Summarizing" not in s, "navigated")

    return flow


def settings_theme(app: TmuxApp) -> None:
    command(app, "/settings")
    app.wait_for("Settings")
    app.assert_repaint_stable("/settings open")
    app.type("theme")
    app.keys("Enter")
    app.wait_for("Theme")
    app.keys("Down")  # previews the next theme
    app.assert_repaint_stable("theme previewed")
    app.keys("Enter")
    app.wait_for("Theme: ")
    app.assert_repaint_stable("theme chosen, settings open")
    app.keys("Escape")
    app.wait_until(lambda s: "enter change" not in s, "/settings closed")


def settings_toggles(app: TmuxApp) -> None:
    command(app, "/settings")
    app.wait_for("Settings")
    for _ in range(3):  # the first rows change at once: each change repaints
        app.keys("Enter")
        app.assert_repaint_stable("a setting changed")
        app.keys("Down")
    app.keys("Escape")
    app.wait_until(lambda s: "enter change" not in s, "/settings closed")


def autocomplete(app: TmuxApp) -> None:
    app.type("/mo")
    app.wait_for("/model")
    app.assert_repaint_stable("autocomplete open")
    app.keys("Escape")
    app.wait_until(lambda s: "/scoped-models" not in s, "autocomplete closed")
    app.assert_repaint_stable("autocomplete closed")
    app.keys("C-c")


def fork(app: TmuxApp) -> None:
    command(app, "/fork")
    app.wait_for("Fork from message")
    app.assert_repaint_stable("/fork open")
    app.keys("Enter")
    app.wait_until(lambda s: "Fork from message" not in s, "forked")


def resume(app: TmuxApp) -> None:
    command(app, "/resume")
    app.wait_for("Resume Session")
    app.assert_repaint_stable("/resume open")
    app.keys("Enter")
    app.wait_until(lambda s: "Resume Session" not in s, "resumed")


FLOWS: dict[str, Callable[[TmuxApp], None]] = {
    "model picker": open_and_close("/model", "Select model", "Enter", "Enter"),
    "model picker escape": open_and_close("/model", "Select model", "Escape"),
    "thinking picker": open_and_close("/thinking", "Thinking level", "Escape"),
    "scoped models": open_and_close("/scoped-models", "Scoped models", "Escape"),
    "tree without summary": tree_navigate("none"),
    "tree with summary": tree_navigate("summarize"),
    "resume": resume,
    "fork": fork,
    "settings theme": settings_theme,
    "settings toggles": settings_toggles,
    "login": open_and_close("/login", "Login: choose provider", "Escape"),
    "hotkeys": lambda app: (command(app, "/hotkeys"), app.wait_for("Ctrl+O")) and None,
    "autocomplete": autocomplete,
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("flow", list(FLOWS))
def test_modal_flow_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str, flow: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "Reply text.", "repeat": True}]) as server:
        write_reasoning_model(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            for count, prompt in enumerate(("first question", "second question"), start=1):
                app.type(prompt)
                app.keys("Enter")
                app.wait_until(lambda s, n=count: s.count("Reply text.") == n and "Working" not in s, prompt)
            FLOWS[flow](app)
            idle(app)
            screen = app.assert_repaint_stable(f"after {flow}")
            assert "─" * 40 in screen and cwd.name in screen
        finally:
            app.close()


SIZES = [(120, 24), (90, 40), (120, 14)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_resize_during_a_dialog_keeps_every_option(workdirs: tuple[Path, Path], layout: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([TOOL_TURN, {"text": "All done here.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("run the command")
            app.keys("Enter")
            app.wait_for("Allow bash?")
            for width, height in [*SIZES, (120, 40)]:
                app.tmux("resize-window", "-t", app.name, "-x", str(width), "-y", str(height))
                app.wait_until(
                    lambda s, h=height: len(s.rstrip("\n").split("\n")) <= h and "Deny" in s, f"resized to {height}"
                )
                screen = app.assert_repaint_stable(f"the dialog at {width}x{height}")
                for option in ("Allow bash?", "Allow once", "Allow for this session", "Deny"):
                    assert option in screen, f"{option!r} missing at {width}x{height}:\n{screen}"
            app.keys("Enter")
            app.wait_for("All done here.")
            idle(app)
            app.assert_repaint_stable("after the resized dialog")
        finally:
            app.close()


EXTENSION = """
import asyncio
from apex_ai.abort import AbortController

def extension(pi):
    async def fetch(args, ctx):
        # The shape of `/llama`'s load and download flows: a choice, a waiting dialog that closes itself when the
        # work ends (with a status line meanwhile), a confirmation and a text input.
        choice = await ctx.ui.select("Pick a model to load", ["tiny-a", "tiny-b", "tiny-c"])
        ctx.ui.set_status("demo", "loading " + str(choice))
        done = AbortController()
        asyncio.get_running_loop().call_later(1.5, done.abort)
        await ctx.ui.select("Loading " + str(choice) + " (Escape to stop)", ["Keep waiting"], signal=done.signal)
        ctx.ui.set_status("demo", None)
        if await ctx.ui.confirm("Download another?", "It is large."):
            name = await ctx.ui.input("Repository", "owner/name")
            ctx.ui.notify("asked for " + str(name), "info")
        ctx.ui.notify("fetch finished", "info")

    pi.register_command("fetch", fetch, description="A demo flow")
"""


@pytest.mark.parametrize("layout", LAYOUTS)
def test_extension_dialogs_leave_a_clean_screen(workdirs: tuple[Path, Path], layout: str, tmp_path: Path) -> None:
    cwd, agent_dir = workdirs
    extension = tmp_path / "demo.py"
    extension.write_text(EXTENSION)
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=("-e", str(extension), *layout_args(layout)))
        try:
            app.wait_for("fake-model")
            command(app, "/fetch")
            app.wait_for("Pick a model to load")
            app.assert_repaint_stable("extension select open")
            app.keys("Down", "Enter")
            app.wait_for("Loading tiny-b")
            app.wait_until(lambda s: "Loading tiny-b" not in s, "the waiting dialog closed itself")
            app.wait_for("Download another?")
            app.assert_repaint_stable("extension confirm open")
            app.keys("Enter")
            app.wait_for("Repository")
            app.assert_repaint_stable("extension input open")
            app.type("me/repo")
            app.keys("Enter")
            app.wait_for("fetch finished")
            screen = app.assert_repaint_stable("after the extension flow")
            assert "asked for me/repo" in screen and "loading tiny-b" not in screen
        finally:
            app.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_layout_setting_applies_at_once(workdirs: tuple[Path, Path], layout: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "Reply text.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("hello")
            app.keys("Enter")
            app.wait_for("Reply text.")
            fullscreen = layout == "fullscreen"
            assert app.alternate_on() is fullscreen
            command(app, "/settings")
            app.wait_for("Settings")
            app.type("TUI mode")
            for switched in (not fullscreen, fullscreen):
                app.keys("Enter")
                app.wait_until(lambda s, f=switched: "TUI mode: " + ("fullscreen" if f else "regular") in s, "changed")
                assert app.alternate_on() is switched
                screen = app.assert_repaint_stable(f"switched to fullscreen={switched}")
                assert "Reply text." in screen and "next start" not in screen
            app.keys("Escape")
            idle(app)
            screen = app.assert_repaint_stable("after /settings")
            assert "Reply text." in screen
        finally:
            app.close()


@pytest.mark.parametrize("args", [("--no-session",), ()], ids=["no session", "session"])
def test_on_exit_the_last_frame_stays_whole_and_the_prompt_comes_below(
    workdirs: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "Reply text.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=args, interactive_shell=True)
        try:
            app.wait_for("fake-model")
            app.type("hello")
            app.keys("Enter")
            app.wait_until(lambda s: "Reply text." in s and "Working" not in s, "the reply")
            app.keys("C-c", "C-c")
            rows = app.wait_until(lambda s: s.rstrip().endswith(PROMPT), "the shell prompt").rstrip().split("\n")
            footer = max(i for i, row in enumerate(rows) if "fake-model" in row)
            assert "0.0%" in rows[footer] or "%/" in rows[footer]  # the footer's usage row, not overwritten
            assert cwd.name in rows[footer - 1]
            after = [row for row in rows[footer + 1 :] if row.strip()]
            assert after[-1].strip() == PROMPT and all("─" not in row for row in after)
        finally:
            app.close()


@pytest.mark.parametrize("extended_keys", ["off", "on"])
def test_tmux_without_extended_keys_says_once_what_to_add_to_tmux_conf(
    workdirs: tuple[Path, Path], tmp_path: Path, extended_keys: str
) -> None:
    cwd, agent_dir = workdirs
    conf = tmp_path / "tmux.conf"
    conf.write_text(f"set -s extended-keys {extended_keys}\n")
    with ScriptedModelServer([{"text": "Reply text.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, tmux_conf=str(conf))
        try:
            app.wait_for("fake-model")
            app.type("hello")
            app.keys("Enter")
            screen = app.wait_until(lambda s: "Reply text." in s and "Working" not in s, "the reply")
            flat = " ".join(screen.split())
            if extended_keys == "off":
                assert flat.count("extended-keys is off") == 1
                assert "set -s extended-keys on" in flat and "~/.tmux.conf" in flat
            else:
                assert "extended-keys" not in flat and "modified keys" not in flat
                # With the option on, tmux forwards modified keys to the app, which asks for them.
                app.type("a")
                app.keys("S-Enter")
                app.type("b")
                app.keys("Enter")
                app.wait_until(lambda s: s.count("Reply text.") == 2, "the second reply")
                assert "a\\nb" in json.dumps(server.requests[-1]["body"])
        finally:
            app.close()


PICKERS = {
    "model picker": ("/model", "Select model", "local"),
    "settings": ("/settings", "Settings", "Auto-compact"),
    "tree": ("/tree", "first question", "Reply text."),
    "thinking": ("/thinking", "Thinking level", "high"),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("picker", list(PICKERS))
def test_a_resize_during_a_picker_keeps_it_whole(workdirs: tuple[Path, Path], layout: str, picker: str) -> None:
    cwd, agent_dir = workdirs
    opener, title, item = PICKERS[picker]
    with ScriptedModelServer([{"text": "Reply text.", "repeat": True}]) as server:
        write_reasoning_model(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("first question")
            app.keys("Enter")
            app.wait_until(lambda s: "Reply text." in s and "Working" not in s, "the reply")
            command(app, opener)
            app.wait_for(title)
            for width, height in [*SIZES, (120, 40)]:
                app.tmux("resize-window", "-t", app.name, "-x", str(width), "-y", str(height))
                app.wait_until(lambda s, h=height: len(s.rstrip("\n").split("\n")) <= h, f"resized to {height}")
                screen = app.assert_repaint_stable(f"{picker} at {width}x{height}")
                assert title in screen and item in screen, f"{picker} at {width}x{height}:\n{screen}"
            app.keys("Escape")
            idle(app)
            app.assert_repaint_stable(f"after the resized {picker}")
        finally:
            app.close()


class LlamaRouter:
    """A llama.cpp router stand-in: one unloaded model that loads after two status polls."""

    def __init__(self) -> None:
        self.models: dict[str, dict[str, Any]] = {"tiny-idle": {"id": "tiny-idle", "status": {"value": "unloaded"}}}
        self.polls = 0
        self.hub_details = {
            "id": "org/tiny-GGUF",
            "siblings": [
                {"rfilename": "tiny-Q4_K_M.gguf", "size": 1_000_000},
                {"rfilename": "tiny-Q8_0.gguf", "size": 2_000_000},
            ],
        }
        self.download_requested = threading.Event()
        self.download_spec = ""
        router = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _send(self, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.startswith("/api/models/"):  # Hugging Face: repository details
                    self._send(router.hub_details)
                elif self.path.startswith("/api/models"):  # Hugging Face: search
                    self._send([{"id": "org/tiny-GGUF", "downloads": 1234}])
                elif self.path.startswith("/models/sse"):
                    self._download_events()
                elif self.path.startswith("/models"):
                    model = router.models["tiny-idle"]
                    if model["status"]["value"] == "loading":
                        router.polls += 1
                        if router.polls > 2:
                            model["status"] = {"value": "loaded"}
                    self._send({"data": list(router.models.values())})
                else:
                    self._send({"status": "ok"})

            def _download_events(self) -> None:
                """The router's event stream: once a download was asked for, its progress and its end."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if router.download_requested.wait(15):
                    spec = router.download_spec
                    for event, data in (
                        ("download_progress", {"downloaded": 1, "total": 2}),
                        ("download_finished", {}),
                    ):
                        frame = json.dumps({"model": spec, "event": event, "data": data})
                        self.wfile.write(f"data: {frame}\n\n".encode())
                        self.wfile.flush()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                if self.path == "/models":  # download `owner/repo:QUANT`
                    router.download_spec = str(body.get("model"))
                    router.download_requested.set()
                if self.path == "/models/load":
                    router.models["tiny-idle"]["status"] = {"value": "loading"}
                self._send({"success": True})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> LlamaRouter:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.download_requested.set()  # an event stream still waiting ends now
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_llama_load_flow_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server, LlamaRouter() as router:
        write_models(agent_dir, server)
        env = {"LLAMA_BASE_URL": router.url, "LLAMA_API_KEY": "secret"}
        # The router's models are listed at start too; the scripted model stays the one in use.
        args = [*layout_args(layout), "--model", "local/fake-model"]
        app = TmuxApp(cwd, agent_dir, args=args, env=env)
        try:
            app.wait_for("fake-model")
            command(app, "/llama")
            app.wait_for("tiny-idle (unloaded)")
            app.assert_repaint_stable("/llama model list")
            app.keys("Enter")
            app.wait_for("Loaded tiny-idle")
            idle(app)
            screen = app.assert_repaint_stable("after the llama load")
            assert "Escape to stop" not in screen and "Keep waiting" not in screen
        finally:
            app.close()


DEAD_PROXY = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"}
"""Makes any https request (Hugging Face) fail at once, offline: the CLI has no way to point the hub URL at a
stand-in (`create_llama_extension(hub_url=...)` is not reachable from the command line or the environment)."""


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ending", ["escape at the search", "hub unreachable"])
def test_the_llama_download_flow_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str, ending: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server, LlamaRouter() as router:
        write_models(agent_dir, server)
        env = {"LLAMA_BASE_URL": router.url, "LLAMA_API_KEY": "secret", **DEAD_PROXY}
        args = [*layout_args(layout), "--model", "local/fake-model"]
        app = TmuxApp(cwd, agent_dir, args=args, env=env)
        try:
            app.wait_for("fake-model")
            command(app, "/llama")
            app.wait_for("Download model…")
            app.keys("Down", "Enter")
            app.wait_for("Download model: search Hugging Face")
            app.assert_repaint_stable("/llama download search open")
            if ending == "escape at the search":
                app.keys("Escape")
            else:
                app.type("qwen tiny")
                app.keys("Enter")
                app.wait_for("Hugging Face: Cannot reach")
            app.wait_until(lambda s: "Download model" not in s, "the download flow closed")
            idle(app)
            screen = app.assert_repaint_stable(f"after the llama download flow ({ending})")
            assert "tiny-idle (unloaded)" not in screen and "Escape to stop" not in screen
        finally:
            app.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_whole_llama_download_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server, LlamaRouter() as router:
        write_models(agent_dir, server)
        # HF_ENDPOINT points the app's Hugging Face client at the stand-in, as it would at a mirror.
        env = {"LLAMA_BASE_URL": router.url, "LLAMA_API_KEY": "secret", "HF_ENDPOINT": router.url}
        args = [*layout_args(layout), "--model", "local/fake-model"]
        app = TmuxApp(cwd, agent_dir, args=args, env=env)
        try:
            app.wait_for("fake-model")
            command(app, "/llama")
            app.wait_for("Download model…")
            app.keys("Down", "Enter")
            app.wait_for("Download model: search Hugging Face")
            app.type("qwen tiny")
            app.keys("Enter")
            app.wait_for("org/tiny-GGUF · 1.2k downloads")
            app.assert_repaint_stable("/llama search results")
            app.keys("Enter")
            app.wait_for("Quantization of org/tiny-GGUF")
            app.assert_repaint_stable("/llama quantization picker")
            app.keys("Enter")
            app.wait_for("Downloaded org/tiny-GGUF:Q4_K_M")
            idle(app)
            screen = app.assert_repaint_stable("after a whole llama download")
            assert "Escape to stop" not in screen and "Keep waiting" not in screen
            assert router.download_spec == "org/tiny-GGUF:Q4_K_M"
        finally:
            app.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_login_with_a_typed_key_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            command(app, "/login")
            app.wait_for("Login: choose provider")
            app.type("local")
            app.keys("Enter")
            app.wait_for("API key for local")
            app.assert_repaint_stable("/login key dialog open")
            app.type("sk-typed-key")
            app.wait_for("*" * len("sk-typed-key"))
            app.assert_repaint_stable("/login key typed")
            app.keys("Enter")
            app.wait_for("Saved API key for local in auth.json")
            idle(app)
            screen = app.assert_repaint_stable("after /login saved a key")
            assert "esc cancel" not in screen and "sk-typed-key" not in screen
            assert json.loads((agent_dir / "auth.json").read_text()) == {
                "local": {"type": "api_key", "key": "sk-typed-key"}
            }
        finally:
            app.close()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("key", ["Tab", "Enter", "Escape"])
def test_file_autocomplete_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str, key: str) -> None:
    cwd, agent_dir = workdirs
    for name in ("notes-a.txt", "notes-longer-b.md", "other.py"):  # the shorter match comes first
        (cwd / name).write_text("x\n")
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("look at @notes")
            app.wait_until(lambda s: "notes-a.txt" in s and "notes-longer-b.md" in s, "the @file popup")
            app.assert_repaint_stable("@file popup open")
            app.keys(key)
            app.wait_until(lambda s: "notes-longer-b.md" not in s, "the @file popup closed")
            screen = app.assert_repaint_stable(f"@file popup closed with {key}")
            if key == "Escape":
                assert "look at @notes" in screen and "notes-a.txt" not in screen
            else:
                assert "look at @notes-a.txt" in screen
            app.keys("C-c")  # clears the editor
            app.wait_until(lambda s: "look at" not in s, "the editor cleared")
            idle(app)
            app.assert_repaint_stable("after @file autocomplete")
        finally:
            app.close()
