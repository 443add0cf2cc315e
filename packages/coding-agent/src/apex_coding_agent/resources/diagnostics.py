"""What resource loading reports besides the resources themselves, and where each resource came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

DiagnosticType: TypeAlias = Literal["warning", "error", "collision"]
ResourceKind: TypeAlias = Literal["skill", "prompt"]
Scope: TypeAlias = Literal["user", "project", "temporary"]
Origin: TypeAlias = Literal["top-level", "package"]


@dataclass(frozen=True)
class SourceInfo:
    """Where a resource was found (the `sourceInfo` of `get_commands`).

    `source` is `"local"` for discovered and settings paths, `"cli"` for command-line paths, or a package source.
    `scope` is `user` (agent dir, home), `project` (the cwd and its ancestors) or `temporary` (CLI).
    """

    path: Path
    source: str
    scope: Scope
    origin: Origin = "top-level"
    base_dir: Path | None = None

    def to_json(self) -> dict[str, str]:
        out = {"path": str(self.path), "source": self.source, "scope": self.scope, "origin": self.origin}
        if self.base_dir is not None:
            out["baseDir"] = str(self.base_dir)
        return out


@dataclass(frozen=True)
class ResourceCollision:
    """Two resources of one kind share a name; the first found (`winner_path`) is kept."""

    kind: ResourceKind
    name: str
    winner_path: Path
    loser_path: Path


@dataclass(frozen=True)
class ResourceDiagnostic:
    """A problem found while loading. `str()` gives `<path>: <message>` so every warning names its file."""

    type: DiagnosticType
    message: str
    path: Path | None = None
    collision: ResourceCollision | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path is not None else self.message


def collision_diagnostic(kind: ResourceKind, name: str, winner: Path, loser: Path) -> ResourceDiagnostic:
    label = "skill" if kind == "skill" else "prompt template"
    return ResourceDiagnostic(
        "collision",
        f'{label} name "{name}" collides with {winner}; keeping the first one',
        loser,
        ResourceCollision(kind, name, winner, loser),
    )


__all__ = [
    "DiagnosticType",
    "Origin",
    "ResourceCollision",
    "ResourceDiagnostic",
    "ResourceKind",
    "Scope",
    "SourceInfo",
    "collision_diagnostic",
]
