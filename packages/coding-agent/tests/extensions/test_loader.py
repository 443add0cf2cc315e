"""Discovery and loading of extensions: files, packages, pyproject entries, trust gating, errors, conflicts."""

from __future__ import annotations

import textwrap
from pathlib import Path

from apex_coding_agent.extensions import (
    ExtensionRunner,
    InlineExtension,
    NoUi,
    ToolDefinition,
    discover_extension_sources,
    load_extensions,
)
from apex_coding_agent.extensions.api import ExtensionAPI
from apex_coding_agent.extensions.events import ToolCallEvent
from apex_coding_agent.extensions.tool_wrapper import ExtensionTool

REPO_ROOT = Path(__file__).resolve().parents[4]

EXAMPLE = """
from apex_coding_agent.extensions import ToolDefinition

async def _run(tool_call_id, params, signal, on_update, ctx):
    return "pong " + params["text"]

def extension(pi):
    pi.register_tool(ToolDefinition(name="ping", description="Ping", execute=_run,
                                    parameters={"type": "object", "properties": {"text": {"type": "string"}}}))

    @pi.register_command("ping", description="Ping command")
    async def ping(args, ctx):
        ctx.ui.notify("pinged " + args)

    @pi.on("input")
    async def shout(event, ctx):
        return {"action": "transform", "text": event.text.upper()}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


async def test_example_extension_registrations_are_visible(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    write(agent_dir / "extensions" / "ping.py", EXAMPLE)
    sources = discover_extension_sources(cwd=tmp_path, agent_dir=agent_dir, project_trusted=False)
    runtime, result = await load_extensions(sources)
    assert result.errors == []
    [ext] = result.extensions
    assert ext.source_info.scope == "user"
    runner = ExtensionRunner(runtime, ui=NoUi(), mode="print")

    [tool] = runner.get_tools()
    assert tool.name == "ping"
    output = await tool.execute("call-1", {"text": "x"}, None, None)
    assert [block.text for block in output.content] == ["pong x"]  # type: ignore[union-attr]

    assert runner.get_command_infos() == [
        {
            "name": "ping",
            "description": "Ping command",
            "source": "extension",
            "sourceInfo": {
                "path": str(agent_dir / "extensions" / "ping.py"),
                "source": "local",
                "scope": "user",
                "origin": "top-level",
            },
        }
    ]
    ui = NoUi()
    runner.set_ui(ui, "print")
    assert await runner.execute_command("ping", "now") is True
    assert ui.notifications == [("pinged now", None)]
    assert (await runner.emit_input("hi")).text == "HI"


async def test_repo_example_hello_tool_loads_and_blocks_robots() -> None:
    example = REPO_ROOT / "examples" / "extensions" / "hello_tool.py"
    sources = discover_extension_sources(cwd=".", agent_dir="nowhere", project_trusted=False, cli_paths=[example])
    runtime, result = await load_extensions(sources)
    assert result.errors == []
    runner = ExtensionRunner(runtime)
    [tool] = runner.get_tools()
    assert tool.parameters_schema()["required"] == ["name"]
    assert isinstance(tool, ExtensionTool) and tool.prompt_snippet == "Greet someone by name"
    done = await tool.execute("c1", {"name": "Ada"}, None, None)
    assert done.details == {"greeted": "Ada"}
    assert [c["name"] for c in runner.get_command_infos()] == ["hello"]
    blocked = await runner.emit_tool_call(ToolCallEvent(tool_name="hello", tool_call_id="c2", input={"name": "Robot"}))
    assert blocked is not None and blocked.reason == "Robots are not greeted"
    assert (
        await runner.emit_tool_call(ToolCallEvent(tool_name="hello", tool_call_id="c3", input={"name": "Ada"})) is None
    )


async def test_import_error_is_reported_with_location_and_others_still_load(tmp_path: Path) -> None:
    ext_dir = tmp_path / "agent" / "extensions"
    write(ext_dir / "a_good.py", "def extension(pi):\n    pi.register_flag('verbose-ping')\n")
    broken = write(ext_dir / "b_broken.py", "import os\n\nraise RuntimeError('exploded on import')\n")
    write(ext_dir / "c_nofactory.py", "X = 1\n")
    write(ext_dir / "d_good.py", "async def extension(pi):\n    pi.register_flag('other')\n")
    sources = discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=True)
    _, result = await load_extensions(sources)
    assert [Path(e.path).name for e in result.extensions] == ["a_good.py", "d_good.py"]
    assert [Path(e.path).name for e in result.errors] == ["b_broken.py", "c_nofactory.py"]
    error = result.errors[0]
    assert error.path == str(broken)
    assert error.location == f"{broken}:3"
    assert error.error == f"RuntimeError: exploded on import (at {broken}:3)"
    assert error.message().startswith(f'Failed to load extension "{broken}": RuntimeError')
    assert 'callable "extension(pi)"' in result.errors[1].error


async def test_syntax_error_location(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.py", "def extension(pi):\n    return (\n")
    _, result = await load_extensions(
        discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "none", project_trusted=False, cli_paths=[bad])
    )
    [error] = result.errors
    assert error.error.startswith("SyntaxError")
    assert error.location is not None and error.location.startswith(f"{bad}:")


async def test_untrusted_project_extensions_are_not_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    write(
        tmp_path / ".apex-code" / "extensions" / "evil.py",
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\ndef extension(pi):\n    pass\n",
    )
    untrusted = discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=False)
    _, result = await load_extensions(untrusted)
    assert result.extensions == [] and not marker.exists()

    trusted = discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=True)
    _, result = await load_extensions(trusted)
    assert [e.source_info.scope for e in result.extensions] == ["project"]
    assert marker.exists()


async def test_cli_extensions_load_with_no_extensions(tmp_path: Path) -> None:
    write(tmp_path / "agent" / "extensions" / "global_one.py", "def extension(pi):\n    pass\n")
    cli = write(tmp_path / "ext.py", "def extension(pi):\n    pi.register_flag('from-cli', default=True)\n")
    sources = discover_extension_sources(
        cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=True, cli_paths=["ext.py"], no_extensions=True
    )
    assert [s.path for s in sources] == [cli.resolve()]
    runtime, result = await load_extensions(sources)
    assert result.extensions[0].source_info.scope == "temporary"
    assert runtime.flag_values == {"from-cli": True}


async def test_directory_extension_with_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "agent" / "extensions" / "greeter"
    write(pkg / "__init__.py", "from .helpers import GREETING\n\ndef extension(pi):\n    pi.register_flag(GREETING)\n")
    write(pkg / "helpers.py", "from . import constants\nGREETING = constants.NAME\n")
    write(pkg / "constants.py", "NAME = 'greet-flag'\n")
    # A pyproject-declared extension directory whose entry is a package sub-directory.
    proj = tmp_path / "agent" / "extensions" / "declared"
    write(proj / "pyproject.toml", '[tool.pi]\nextensions = ["src/entry"]\n')
    write(proj / "src" / "entry" / "__init__.py", "from .impl import extension\n")
    write(proj / "src" / "entry" / "impl.py", "def extension(pi):\n    pi.register_flag('declared-flag')\n")
    runtime, result = await load_extensions(
        discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=False)
    )
    assert result.errors == []
    assert [Path(e.path).name for e in result.extensions] == ["entry", "greeter"]
    assert set(runtime.flag_values) == set() and {f for e in result.extensions for f in e.flags} == {
        "greet-flag",
        "declared-flag",
    }


async def test_conflicts_and_command_invocation_names(tmp_path: Path) -> None:
    body = """
        from apex_coding_agent.extensions import ToolDefinition
        async def run(*args):
            return "ok"
        def extension(pi):
            pi.register_tool(ToolDefinition(name="shared", description="d", execute=run))
            pi.register_flag("mode", type="string", default="{tag}")
            pi.register_command("review", lambda args, ctx: None, description="Review {tag}")
            pi.register_command("only-{tag}", lambda args, ctx: None)
    """
    first = write(tmp_path / "one.py", body.replace("{tag}", "one"))
    second = write(tmp_path / "two.py", body.replace("{tag}", "two"))
    runtime, result = await load_extensions(
        discover_extension_sources(
            cwd=tmp_path, agent_dir=tmp_path / "a", project_trusted=False, cli_paths=[first, second]
        )
    )
    assert [(d.message, d.path) for d in result.diagnostics] == [
        (f'Tool "shared" conflicts with {first}', str(second)),
        (f'Flag "mode" conflicts with {first}', str(second)),
    ]
    runner = ExtensionRunner(runtime)
    assert [(c["name"], c.get("description")) for c in runner.get_command_infos()] == [
        ("review:1", "Review one"),
        ("only-one", None),
        ("review:2", "Review two"),
        ("only-two", None),
    ]
    assert runner.get_command("review:2") is not None and runner.get_command("review") is None
    assert len(runner.get_tools()) == 1  # the first registration wins
    assert runtime.flag_values == {"mode": "one"}


async def test_inline_factories_and_second_phase(tmp_path: Path) -> None:
    seen: list[str] = []

    async def named(pi: ExtensionAPI) -> None:
        seen.append(pi.extension.path)

    def unnamed(pi: ExtensionAPI) -> None:
        seen.append(pi.extension.path)
        raise ValueError("inline failure")

    runtime, result = await load_extensions(inline=[InlineExtension(named, "my-ext"), InlineExtension(unnamed)])
    assert seen[0] == "my-ext" and seen[1].startswith("<inline:")
    assert [e.path for e in result.extensions] == ["my-ext"]
    assert result.errors[0].error.startswith("ValueError: inline failure (at ")

    write(tmp_path / ".apex-code" / "extensions" / "p.py", "def extension(pi):\n    pass\n")
    project = discover_extension_sources(
        cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=True, include_global=False
    )
    _, second = await load_extensions(project, runtime)
    assert [e.path for e in runtime.extensions] == ["my-ext", str(tmp_path / ".apex-code" / "extensions" / "p.py")]
    assert len(second.extensions) == 1
    _, again = await load_extensions(project, runtime)
    assert again.extensions == []  # already loaded


async def test_settings_paths_respect_scope_and_trust(tmp_path: Path) -> None:
    user_ext = write(tmp_path / "agent" / "mine" / "u.py", "def extension(pi):\n    pass\n")
    write(tmp_path / ".apex-code" / "shared" / "s.py", "def extension(pi):\n    pass\n")
    settings = [("mine", "user"), ("shared", "project")]
    untrusted = discover_extension_sources(
        cwd=tmp_path,
        agent_dir=tmp_path / "agent",
        project_trusted=False,
        settings_paths=settings,  # type: ignore[arg-type]
    )
    assert [s.path for s in untrusted] == [user_ext.resolve()]
    trusted = discover_extension_sources(
        cwd=tmp_path,
        agent_dir=tmp_path / "agent",
        project_trusted=True,
        settings_paths=settings,  # type: ignore[arg-type]
    )
    assert [s.path.name for s in trusted] == ["u.py", "s.py"]


def test_tool_definition_defaults() -> None:
    async def run(*args: object) -> str:
        return ""

    definition = ToolDefinition(name="t", description="d", execute=run)
    assert definition.parameters == {"type": "object", "properties": {}}


async def test_odd_pyproject_tables_do_not_break_discovery(tmp_path: Path) -> None:
    extensions = tmp_path / "agent" / "extensions"
    write(extensions / "pi-scalar" / "pyproject.toml", "[tool]\npi = 3\n")
    write(extensions / "pi-scalar" / "__init__.py", "def extension(pi):\n    pi.register_flag('scalar-flag')\n")
    write(extensions / "tool-scalar" / "pyproject.toml", 'tool = "x"\n')
    write(extensions / "broken-toml" / "pyproject.toml", "[tool.pi\n")
    write(extensions / "plain.py", "def extension(pi):\n    pi.register_flag('plain-flag')\n")
    sources = discover_extension_sources(cwd=tmp_path, agent_dir=tmp_path / "agent", project_trusted=False)
    # Without a usable `[tool.pi] extensions` list a directory counts only when it is a Python package.
    assert [s.path.name for s in sources] == ["pi-scalar", "plain.py"]
    _, result = await load_extensions(sources)
    assert result.errors == []
    assert {f for e in result.extensions for f in e.flags} == {"scalar-flag", "plain-flag"}


async def test_a_failing_callable_object_factory_is_reported_not_a_crash(tmp_path: Path) -> None:
    from apex_coding_agent.extensions.loader import _factory_file

    class Factory:
        def __call__(self, pi: object) -> None:
            raise RuntimeError("no")

    assert _factory_file(Factory()) == Path(__file__)
    assert _factory_file(len) is None
