"""The settings a command-line helper reads in a project: the project's own only when the project is trusted.

Commands other than the agent itself (`apex-code sessions`, the package manager) never ask about trust; they take
the saved decision or `defaultProjectTrust`, as the agent would without a prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import TrustFileError, TrustStore, resolve_project_trusted


def settings_for_project(
    cwd: str | Path, agent_dir: Path, err: TextIO, *, approve: bool | None = None
) -> tuple[SettingsManager, bool]:
    """The merged settings for `cwd` and whether the project counted as trusted; problems go to `err` as lines."""
    default_trust = SettingsManager(agent_dir / "settings.json", None).get("defaultProjectTrust")
    try:
        trusted = resolve_project_trusted(
            str(cwd), TrustStore(agent_dir / "trust.json"), approve=approve, default_trust=default_trust
        ).trusted
    except TrustFileError as exc:
        err.write(f"Warning: {exc}\n")
        trusted = False
    settings = SettingsManager.create(str(cwd), agent_dir, project_trusted=trusted)
    for error in settings.drain_errors():
        err.write(f"{error}\n")
    return settings, trusted


__all__ = ["settings_for_project"]
