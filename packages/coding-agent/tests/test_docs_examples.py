"""Every Python example in the READMEs and docs/ runs, and the reference tables in docs/ list everything.

Examples run as scripts in a subprocess, in a temporary folder, with no API key in the environment and an agent
dir whose `models.json` points a provider `local` (model `fake-model`, also the default model) at a scripted model
server, so an example that uses the configured model talks to that server. An HTML comment right before a
```python block controls it: `<!-- example: package=tui -->` (run by that package's tests, since each package's
tests run in a venv holding only that package and its dependencies), `<!-- example: expect="text" -->` (stdout
must contain the text). A block that must not run is not a ```python block (use ```text). Blocks in `packages/tui/` default
to `package=tui`; all others to this package (`apex_ai` and `apex_agent` are installed here too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest

from apex_ai.testing.scripted_server import ScriptedModelServer  # the one place that names the scripted server's module

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "coding-agent"
SCRIPTED_REPLY = "Hello from the scripted server."

_BLOCK = re.compile(r"(?:<!--\s*example:(?P<directive>[^>]*)-->\s*\n)?```python\n(?P<code>.*?)```", re.DOTALL)
_SETTING = re.compile(r'(\w+)=(?:"([^"]*)"|(\S+))')


@dataclass(frozen=True)
class Example:
    path: Path
    line: int
    code: str
    package: str
    expect: str | None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md")), *sorted(ROOT.glob("docs/*.md"))]


def examples(package: str) -> list[Example]:
    """The Python examples of every doc file that `package`'s tests run."""
    found: list[Example] = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        default = "tui" if path.is_relative_to(ROOT / "packages" / "tui") else PACKAGE
        for match in _BLOCK.finditer(text):
            settings = {key: quoted or bare for key, quoted, bare in _SETTING.findall(match["directive"] or "")}
            example = Example(
                path=path,
                line=text.count("\n", 0, match.start("code")) + 1,
                code=match["code"],
                package=settings.get("package", default),
                expect=settings.get("expect"),
            )
            if example.package == package:
                found.append(example)
    return found


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([{"text": SCRIPTED_REPLY, "repeat": True}]) as server:
        yield server


def example_env(tmp_path: Path, server: ScriptedModelServer) -> dict[str, str]:
    """An environment without keys whose agent dir makes `local/fake-model` on `server` the default model."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    provider = {"baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "test-key"}
    models = {"providers": {"local": {**provider, "models": [{"id": "fake-model"}]}}}
    (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "local", "defaultModel": "fake-model"}
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env["APEX_CODE_CODING_AGENT_DIR"] = str(agent_dir)
    return env


def run_example(example: Example, tmp_path: Path, server: ScriptedModelServer) -> None:
    """Run `example` as a script in a fresh folder; it must exit 0 and print what its directive expects."""
    work = tmp_path / "work"
    work.mkdir()
    script = work / "example.py"
    script.write_text(example.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env=example_env(tmp_path, server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{example.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    if example.expect is not None:
        assert example.expect in done.stdout, f"{example.name} printed:\n{done.stdout}\n{done.stderr}"


_OURS = examples(PACKAGE)


@pytest.mark.slow
@pytest.mark.parametrize("example", _OURS, ids=[e.name for e in _OURS])
def test_example_runs(example: Example, tmp_path: Path, scripted_server: ScriptedModelServer) -> None:
    run_example(example, tmp_path, scripted_server)


def test_every_python_block_is_an_example() -> None:
    """No ```python block escapes the parser (a stray directive or fence would hide an example from the test)."""
    packages = [path.name for path in (ROOT / "packages").iterdir() if (path / "pyproject.toml").exists()]
    everything = [example for package in packages for example in examples(package)]
    for path in doc_files():
        blocks = path.read_text(encoding="utf-8").count("```python\n")
        assert blocks == len([e for e in everything if e.path == path]), path


def test_the_root_readme_provider_example_runs_and_is_documented() -> None:
    """The root README's `apex_ai` example is run (by `test_example_runs`) and says what it prints without a key."""
    root = [e for e in _OURS if e.path == ROOT / "README.md" and "from apex_ai import" in e.code]
    assert len(root) == 1
    assert "asyncio.run(" in root[0].code
    assert root[0].expect == "No API key for provider: anthropic"
    assert root[0].expect in (ROOT / "README.md").read_text(encoding="utf-8").split("```python")[-1]


# --------------------------------------------------------------------------- reference tables


def _table_names(doc: str, heading: str) -> set[str]:
    """The backticked names in the first column of the tables under `heading` (up to the next `## `)."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)`", section, re.MULTILINE))


def test_rpc_docs_list_every_command_and_event() -> None:
    from apex_coding_agent.events import AgentEvent, SessionOnlyEvent
    from apex_coding_agent.modes.rpc.rpc_types import COMMAND_MODELS

    assert _table_names("rpc.md", "Commands") == set(COMMAND_MODELS)
    kinds = {model.model_fields["type"].default for model in (*get_args(AgentEvent), *get_args(SessionOnlyEvent))}
    assert _table_names("rpc.md", "Events") == kinds


def test_settings_docs_list_every_known_key() -> None:
    from apex_coding_agent.core.settings import SETTING_KINDS

    documented = _table_names("settings.md", "Every key")
    assert documented == set(SETTING_KINDS)
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    for key, kind in SETTING_KINDS.items():
        assert re.search(rf"^\| `{re.escape(key)}` \| {kind} \|", text, re.MULTILINE), key


def test_extension_docs_list_every_api_method_and_event() -> None:
    from apex_coding_agent.extensions import ExtensionAPI
    from apex_coding_agent.extensions.events import EVENT_NAMES

    text = (ROOT / "docs" / "extensions.md").read_text(encoding="utf-8")
    section = text.split("## The API (`pi`)\n", 1)[1].split("\n## ", 1)[0]
    documented = {
        name for cell in re.findall(r"^\| ([^|]+) \|", section, re.MULTILINE) for name in re.findall(r"`(\w+)`", cell)
    }
    assert documented == {name for name in dir(ExtensionAPI) if not name.startswith("_")}
    assert _table_names("extensions.md", "Events") == set(EVENT_NAMES)


def test_models_docs_list_every_key_variable_and_compat_key() -> None:
    from apex_ai import ENV_API_KEYS
    from apex_ai.providers.openai_compat import _CAMEL_TO_FIELD

    text = (ROOT / "docs" / "models-and-providers.md").read_text(encoding="utf-8")
    for provider, names in ENV_API_KEYS.items():
        assert f"| `{provider}` | " + ", ".join(f"`{n}`" for n in names) + " |" in text, provider
    assert set(_CAMEL_TO_FIELD) <= _table_names("models-and-providers.md", "OpenAI-compatible servers")


def test_relative_links_in_the_docs_resolve() -> None:
    for path in doc_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("#"):
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve()
            assert resolved.exists(), f"{path.relative_to(ROOT)}: {target}"
            if anchor and resolved.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", resolved.read_text(encoding="utf-8"), re.MULTILINE)
                slugs = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
                assert anchor in slugs, f"{path.relative_to(ROOT)}: {target}"
