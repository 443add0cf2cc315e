"""Scanning shared by the file-based resource kinds (prompt templates, skills, themes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from apex_coding_agent.resources.diagnostics import ResourceDiagnostic

R = TypeVar("R")


def list_resource_files(
    directory: Path, suffix: str, label: str, *, skip_hidden: bool = False
) -> tuple[list[Path], list[ResourceDiagnostic]]:
    """The files directly in `directory` whose names end with `suffix`, sorted by name (symlinks followed).

    A missing directory gives nothing; one that cannot be listed gives a warning `could not list <label>
    directory: ...`. `skip_hidden` leaves out dotfiles. Entries that vanish or cannot be inspected are skipped.
    """
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [ResourceDiagnostic("warning", f"could not list {label} directory: {exc}", directory)]
    files: list[Path] = []
    for entry in entries:
        if not entry.name.endswith(suffix) or (skip_hidden and entry.name.startswith(".")):
            continue
        try:
            is_file = entry.is_file()  # follows symlinks
        except OSError:
            continue
        if is_file:
            files.append(Path(entry.path))
    return files, []


def first_of_each_name(
    groups: Iterable[tuple[Sequence[R], Sequence[ResourceDiagnostic]]],
    name: Callable[[R], str],
    path: Callable[[R], Path | None],
    collision: Callable[[R, R], ResourceDiagnostic],
) -> tuple[list[R], list[ResourceDiagnostic]]:
    """Merge `(resources, diagnostics)` groups in order: the first resource of a name wins.

    A later one of a taken name adds `collision(winner, loser)`; one whose file (by real path) was already
    seen is dropped silently. Resources without a path (built-ins) are never counted as seen files.
    Each group's own diagnostics come before the collisions its resources cause.
    """
    kept: list[R] = []
    diagnostics: list[ResourceDiagnostic] = []
    by_name: dict[str, R] = {}
    seen_files: set[str] = set()
    for resources, group_diagnostics in groups:
        diagnostics.extend(group_diagnostics)
        for resource in resources:
            resource_path = path(resource)
            if resource_path is not None:
                real = os.path.realpath(resource_path)
                if real in seen_files:
                    continue
                seen_files.add(real)
            winner = by_name.get(name(resource))
            if winner is not None:
                diagnostics.append(collision(winner, resource))
                continue
            by_name[name(resource)] = resource
            kept.append(resource)
    return kept, diagnostics


__all__ = ["first_of_each_name", "list_resource_files"]
