"""Project trust: whether a project may configure the agent.

An untrusted project's settings, extensions, skills, prompts, themes and SYSTEM files are not
loaded, so opening a hostile repository cannot change what the agent does. Context files
(AGENTS.md, CLAUDE.md) are never gated. Trust is an input-loading guard, not a sandbox.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from apex_coding_agent.core.file_lock import locked, write_atomic

TrustAnswer: TypeAlias = Literal["yes", "no", "undecided"]
DefaultTrust: TypeAlias = Literal["ask", "always", "never"]

PROJECT_CONFIG_DIR = ".apex-code"
TRUST_REQUIRING = (
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    "mcp.json",
)
ROOT_TRUST_REQUIRING = (".mcp.json",)
"""Files at the project root that need trust: MCP servers they name would run commands."""


class TrustFileError(ValueError):
    """trust.json exists but is not a `{dir: true|false|null}` object."""


@dataclass(frozen=True)
class TrustHandlerResult:
    """What a `project_trust` handler (an extension) answered."""

    trusted: TrustAnswer
    remember: bool = False


TrustHandler: TypeAlias = Callable[[Path], "TrustHandlerResult | None"]
TrustPrompt: TypeAlias = Callable[[Path], "TrustChoice | None"]
TrustChoice: TypeAlias = Literal["trust", "trust_parent", "trust_session", "deny", "deny_session"]


def canonical_project_path(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def trust_requiring_resources(cwd: str | Path, home: str | Path | None = None) -> list[Path]:
    """Project resources that need trust, found from `cwd` (and `.agents/skills` in any ancestor)."""
    root = canonical_project_path(cwd)
    home_dir = canonical_project_path(home if home is not None else Path.home())
    found = [
        root / PROJECT_CONFIG_DIR / name for name in TRUST_REQUIRING if (root / PROJECT_CONFIG_DIR / name).exists()
    ]
    found.extend(root / name for name in ROOT_TRUST_REQUIRING if (root / name).exists())
    for directory in (root, *root.parents):
        skills = directory / ".agents" / "skills"
        if directory != home_dir and skills.is_dir():
            found.append(skills)
    return found


class TrustStore:
    """`trust.json`: `{canonical dir: true|false|null}`, sorted, written under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, bool | None]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise TrustFileError(f"{self.path}: invalid JSON: {exc.msg}") from exc
        except UnicodeDecodeError as exc:
            raise TrustFileError(f"{self.path}: not UTF-8 text (byte {exc.start})") from exc
        except RecursionError as exc:
            raise TrustFileError(f"{self.path}: invalid JSON: nested too deeply") from exc
        except OSError as exc:
            raise TrustFileError(f"could not read {self.path}: {exc.strerror or exc}") from exc
        if not isinstance(data, dict) or not all(v is None or isinstance(v, bool) for v in data.values()):
            raise TrustFileError(f"{self.path}: expected an object of directory -> true/false/null")
        return data

    def lookup(self, cwd: str | Path) -> tuple[bool, Path] | None:
        """The nearest saved decision walking up from `cwd`: (trusted, where it was saved)."""
        data = self.load()
        root = canonical_project_path(cwd)
        for directory in (root, *root.parents):
            value = data.get(str(directory))
            if isinstance(value, bool):
                return value, directory
        return None

    def save(self, decisions: dict[Path, bool | None]) -> None:
        with locked(self.path):
            data = self.load()
            for directory, value in decisions.items():
                data[str(canonical_project_path(directory))] = value
            text = json.dumps(dict(sorted(data.items())), indent=2) + "\n"
            write_atomic(self.path, text)


@dataclass(frozen=True)
class TrustDecision:
    trusted: bool
    reason: str
    """Which step decided: `flag`, `no-resources`, `extension`, `saved`, `default`, `no-ui`, `prompt`."""


def resolve_project_trusted(
    cwd: str | Path,
    store: TrustStore,
    *,
    approve: bool | None = None,
    default_trust: str | None = None,
    handlers: Sequence[TrustHandler] = (),
    prompt: TrustPrompt | None = None,
    warn: Callable[[str], None] | None = None,
    home: str | Path | None = None,
) -> TrustDecision:
    """The decision flow, steps 1-6. `prompt` is None in print/json/rpc modes."""
    root = canonical_project_path(cwd)
    if approve is not None:
        return TrustDecision(approve, "flag")
    if not trust_requiring_resources(root, home):
        return TrustDecision(True, "no-resources")
    for handler in handlers:
        try:
            result = handler(root)
        except Exception as exc:  # an extension's bug must not decide trust or crash startup
            if warn is not None:
                warn(f"project_trust handler error: {exc}")
            continue
        if result is None or result.trusted == "undecided":
            continue
        trusted = result.trusted == "yes"
        if result.remember:
            store.save({root: trusted})
        return TrustDecision(trusted, "extension")
    saved = store.lookup(root)
    if saved is not None:
        return TrustDecision(saved[0], "saved")
    if default_trust == "always":
        return TrustDecision(True, "default")
    if default_trust == "never":
        return TrustDecision(False, "default")
    if prompt is None:
        return TrustDecision(False, "no-ui")
    choice = prompt(root)
    if choice == "trust":
        store.save({root: True})
    elif choice == "trust_parent":
        store.save({root.parent: True, root: None})
    elif choice == "deny":
        store.save({root: False})
    return TrustDecision(choice in ("trust", "trust_parent", "trust_session"), "prompt")


__all__ = [
    "TrustDecision",
    "TrustFileError",
    "TrustHandler",
    "TrustHandlerResult",
    "TrustStore",
    "canonical_project_path",
    "resolve_project_trusted",
    "trust_requiring_resources",
]
