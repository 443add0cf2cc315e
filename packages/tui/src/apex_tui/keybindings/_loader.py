"""Reading `keybindings.json`: validate, warn, never crash."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from apex_tui.keybindings._keys import KeyParseError, KeySpec, parse_key
from apex_tui.keybindings._legacy import migrate_keybindings_file, migrate_legacy_ids
from apex_tui.keybindings._manager import KeybindingManager
from apex_tui.keybindings._platform import detect_platform
from apex_tui.keybindings._registry import KEYBINDING_IDS, KEYBINDINGS_BY_ID
from apex_tui.keybindings._routing import find_conflicts

KEYBINDINGS_FILE_NAME = "keybindings.json"


class LoadedKeybindings(NamedTuple):
    """What `load_keybindings` returns; unpacks as `(manager, warnings)`."""

    manager: KeybindingManager
    warnings: tuple[str, ...]


def keybindings_path(agent_dir: Path) -> Path:
    """`<agent dir>/keybindings.json`."""
    return Path(agent_dir) / KEYBINDINGS_FILE_NAME


def load_keybindings(
    agent_dir: Path,
    *,
    sys_platform: str | None = None,
    env: Mapping[str, str] | None = None,
    rewrite_legacy: bool = True,
) -> LoadedKeybindings:
    """Build the manager from `<agent_dir>/keybindings.json`.

    With `rewrite_legacy` (interactive startup and `/reload`), a file holding legacy ids is first rewritten
    with namespaced ids; legacy ids are mapped in memory either way. Problems become warnings (also on
    `manager.warnings`) and the affected ids keep their defaults. A missing file gives defaults and no warning.
    """
    platform = detect_platform(sys_platform, env)
    path = keybindings_path(agent_dir)
    if rewrite_legacy:
        migrate_keybindings_file(path)
    config, warnings = read_keybindings_config(path)
    user, entry_warnings = validate_keybindings_config(config, path.name)
    warnings.extend(entry_warnings)
    warnings.extend(find_conflicts(user, path.name))
    manager = KeybindingManager(
        platform,
        {id_: [str(s) for s in specs] for id_, specs in user.items()},
        warnings,
    )
    return LoadedKeybindings(manager, manager.warnings)


def read_keybindings_config(path: Path) -> tuple[dict[str, object], list[str]]:
    """The file's top-level object with legacy ids mapped, or `{}` plus a warning when unusable."""
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as error:
        return {}, [f"{name}: {_describe(error)}; using default keybindings"]
    try:
        parsed: object = json.loads(text)
    except ValueError as error:
        return {}, [f"{name}: {error}; using default keybindings"]
    except RecursionError:  # JSON nested past the parser's limit is not a ValueError
        return {}, [f"{name}: nested too deeply; using default keybindings"]
    if not isinstance(parsed, dict):
        return {}, [f"{name}: expected an object; using default keybindings"]
    return migrate_legacy_ids(parsed), []


def validate_keybindings_config(
    config: Mapping[str, object], file_name: str = KEYBINDINGS_FILE_NAME
) -> tuple[dict[str, tuple[KeySpec, ...]], list[str]]:
    """Validated overrides (id -> keys, canonical order) and the warnings for every rejected part."""
    user: dict[str, tuple[KeySpec, ...]] = {}
    warnings: list[str] = []
    for id_, value in config.items():
        if id_ not in KEYBINDINGS_BY_ID:
            hint = _suggest(id_)
            suffix = f' (did you mean "{hint}"?)' if hint else ""
            warnings.append(f'{file_name}: unknown keybinding id "{id_}"{suffix}')
            continue
        if isinstance(value, str):
            raw: list[str] = [value]
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            raw = [item for item in value if isinstance(item, str)]
        else:
            warnings.append(f'{file_name}: "{id_}" must be a key string or a list of key strings')
            continue
        specs: list[KeySpec] = []
        for text in raw:
            try:
                spec = parse_key(text)
            except KeyParseError as error:
                warnings.append(f'{file_name}: "{id_}": invalid key "{text}" ({error.reason})')
                continue
            if spec not in specs:
                specs.append(spec)
        if raw and not specs:
            # Every given key was bad: keep the default rather than silently disabling the action.
            continue
        user[id_] = tuple(specs)
    order = {id_: i for i, id_ in enumerate(KEYBINDING_IDS)}
    return dict(sorted(user.items(), key=lambda item: order[item[0]])), warnings


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def _suggest(unknown: str) -> str | None:
    """The nearest valid id within edit distance 3, if any."""
    best: tuple[int, str] | None = None
    for candidate in KEYBINDING_IDS:
        distance = _edit_distance(unknown, candidate, limit=3)
        if distance <= 3 and (best is None or distance < best[0]):
            best = (distance, candidate)
    return None if best is None else best[1]


def _edit_distance(a: str, b: str, *, limit: int) -> int:
    """Levenshtein distance, cut short at `limit + 1` once every row exceeds it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]
