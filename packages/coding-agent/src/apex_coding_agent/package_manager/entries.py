"""`packages` settings entries: the string and object forms, and merging global with project entries.

Object form: `{"source", "autoload"?, "extensions"?, "skills"?, "prompts"?, "themes"?}`. A kind key that is omitted
means every resource of that kind, `[]` means none, and a list narrows the package's resources
(`filters.apply_patterns`). `autoload: false` makes omitted kinds load nothing.

Global and project entries with the same identity: the project entry replaces the global one, unless it says
`autoload: false`; then it is a delta over the global entry: the global entry (and its user-scope install) stays, and
for each kind the project entry lists, its patterns are appended to the global entry's patterns for that kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from apex_coding_agent.package_manager.installer import Scope
from apex_coding_agent.package_manager.manifest import RESOURCE_KINDS, ResourceKind
from apex_coding_agent.package_manager.sources import source_identity


@dataclass(frozen=True)
class PackageEntry:
    """One configured package, with the directory its relative source resolves against."""

    source: str
    scope: Scope
    base_dir: Path
    filters: dict[ResourceKind, list[str]] = field(default_factory=dict)
    autoload: bool = True
    raw: Any = None
    """The settings value as written (str or dict), for rewriting the entry in place."""

    @property
    def identity(self) -> str:
        return source_identity(self.source, self.base_dir)

    @property
    def filtered(self) -> bool:
        return bool(self.filters) or not self.autoload

    def patterns(self, kind: ResourceKind) -> list[str] | None:
        """The filter for `kind`: None = everything, a list = narrow by patterns."""
        if kind in self.filters:
            return self.filters[kind]
        return None if self.autoload else []


def parse_entry(raw: Any, scope: Scope, base_dir: Path) -> PackageEntry | str:
    """An entry, or a warning text when `raw` is neither a string nor an object with a string `source`."""
    if isinstance(raw, str) and raw.strip():
        return PackageEntry(raw.strip(), scope, base_dir, raw=raw)
    if isinstance(raw, dict) and isinstance(raw.get("source"), str) and raw["source"].strip():
        filters: dict[ResourceKind, list[str]] = {}
        for kind in RESOURCE_KINDS:
            value = raw.get(kind)
            if isinstance(value, list):
                filters[kind] = [item for item in value if isinstance(item, str)]
        autoload = raw.get("autoload") is not False
        return PackageEntry(raw["source"].strip(), scope, base_dir, filters, autoload, raw)
    return f"Invalid package entry in {scope} settings: {raw!r}"


def parse_entries(raws: Sequence[Any], scope: Scope, base_dir: Path) -> tuple[list[PackageEntry], list[str]]:
    entries: list[PackageEntry] = []
    warnings: list[str] = []
    for raw in raws:
        parsed = parse_entry(raw, scope, base_dir)
        if isinstance(parsed, str):
            warnings.append(parsed)
        else:
            entries.append(parsed)
    return entries, warnings


def _delta(base: PackageEntry, over: PackageEntry) -> PackageEntry:
    filters = dict(base.filters)
    for kind, patterns in over.filters.items():
        # A kind the global entry leaves open means "all": the project's patterns then narrow all of it.
        filters[kind] = [*filters.get(kind, []), *patterns]
    return replace(base, filters=filters)


def merge_entries(user: Sequence[PackageEntry], project: Sequence[PackageEntry]) -> list[PackageEntry]:
    """Project entries first, then the global entries they do not replace (see the module docstring)."""
    user_by_id = {entry.identity: entry for entry in user}
    replaced: set[str] = set()
    deltas: dict[str, PackageEntry] = {}
    out: list[PackageEntry] = []
    for entry in project:
        base = user_by_id.get(entry.identity)
        if base is not None and not entry.autoload:
            deltas[entry.identity] = _delta(deltas.get(entry.identity, base), entry)
            continue
        if base is not None:
            replaced.add(entry.identity)
        out.append(entry)
    seen = {entry.identity for entry in out}
    for entry in user:
        if entry.identity in replaced or entry.identity in seen:
            continue
        seen.add(entry.identity)
        out.append(deltas.get(entry.identity, entry))
    return out


__all__ = ["PackageEntry", "merge_entries", "parse_entries", "parse_entry"]
