"""`build_runtime_from_args` hands the installed packages' themes to its caller (the app's theme catalog)."""

from __future__ import annotations

import json
from pathlib import Path

from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    provider = {
        "baseUrl": "http://127.0.0.1:9/v1",
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "m-a"}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return work, agent


async def test_the_build_carries_the_package_themes(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    themes = tmp_path / "pkg" / "themes"
    themes.mkdir(parents=True)
    (themes / "night.json").write_text("{}")
    (agent / "settings.json").write_text(json.dumps({"packages": ["../pkg"]}))

    build = await build_runtime_from_args(
        parse_args(["--model", "local/m-a", "--no-session"]), cwd=str(work), agent_dir=agent, mode="print"
    )

    assert build.runtime is not None and build.errors == []
    try:
        assert [(theme.path.name, theme.scope) for theme in build.package_themes] == [("night.json", "user")]
    finally:
        await build.runtime.dispose()


async def test_no_packages_means_no_package_themes(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    build = await build_runtime_from_args(
        parse_args(["--model", "local/m-a", "--no-session"]), cwd=str(work), agent_dir=agent, mode="print"
    )
    assert build.runtime is not None
    try:
        assert build.package_themes == []
    finally:
        await build.runtime.dispose()
