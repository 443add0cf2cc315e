"""The live keybinding manager: resolved keys per id, compiled once into urwid key names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from apex_tui.keybindings._keys import DisplayStyle, KeySpec, format_keys, parse_key
from apex_tui.keybindings._platform import Platform
from apex_tui.keybindings._registry import KEYBINDINGS, KEYBINDINGS_BY_ID
from apex_tui.keybindings._urwid_keys import UrwidKey, to_urwid_names


class KeybindingManager:
    """Keys of every id for one platform, with user overrides applied.

    `user_bindings` maps ids to already validated key strings (an empty sequence disables the id); ids not in
    it keep their platform defaults. Widgets ask `matches(urwid_key, id)` and never compare literal keys.
    Unknown ids raise `KeyError`: they are programming errors, not user errors (user files are checked by
    `load_keybindings`).
    """

    def __init__(
        self,
        platform: Platform = "linux",
        user_bindings: Mapping[str, Sequence[str]] | None = None,
        warnings: Iterable[str] = (),
    ) -> None:
        self.platform: Platform = platform
        self.warnings: tuple[str, ...] = tuple(warnings)
        user = dict(user_bindings or {})
        for id_ in user:
            _check_id(id_)
        self._user: dict[str, tuple[str, ...]] = {
            d.id: tuple(str(s) for s in _dedupe(parse_key(k) for k in user[d.id])) for d in KEYBINDINGS if d.id in user
        }
        self._specs: dict[str, tuple[KeySpec, ...]] = {}
        self._names: dict[str, frozenset[str]] = {}
        self._ids_by_name: dict[str, list[str]] = {}
        for definition in KEYBINDINGS:
            keys = self._user.get(definition.id, definition.defaults_for(platform))
            specs = _dedupe(parse_key(k) for k in keys)
            self._specs[definition.id] = specs
            names = frozenset().union(*(to_urwid_names(s) for s in specs))
            self._names[definition.id] = names
            for name in names:
                self._ids_by_name.setdefault(name, []).append(definition.id)

    def get_keys(self, id: str) -> list[str]:
        """Key strings of `id` in binding order; `[]` when disabled or unbound by default."""
        _check_id(id)
        return [str(s) for s in self._specs[id]]

    def get_specs(self, id: str) -> tuple[KeySpec, ...]:
        """Parsed keys of `id`."""
        _check_id(id)
        return self._specs[id]

    def urwid_names(self, id: str) -> frozenset[str]:
        """The urwid key names that trigger `id`."""
        _check_id(id)
        return self._names[id]

    def matches(self, urwid_key: UrwidKey, id: str) -> bool:
        """True when the urwid key (as passed to `keypress`) is bound to `id`. Mouse tuples never match."""
        _check_id(id)
        return isinstance(urwid_key, str) and urwid_key in self._names[id]

    def ids_for(self, urwid_key: UrwidKey) -> list[str]:
        """Every id bound to `urwid_key`, in canonical order."""
        if not isinstance(urwid_key, str):
            return []
        return list(self._ids_by_name.get(urwid_key, ()))

    def resolved(self) -> dict[str, list[str]]:
        """id -> keys for all ids, in canonical order."""
        return {id_: [str(s) for s in specs] for id_, specs in self._specs.items()}

    def user_bindings(self) -> dict[str, list[str]]:
        """The overrides in effect (validated user file entries), in canonical order."""
        return {id_: list(keys) for id_, keys in self._user.items()}

    def display(self, id: str, *, style: DisplayStyle = "hint") -> str:
        """Keys of `id` for hints (`ctrl+o`) or `/hotkeys` (`Ctrl+O`), joined by `/`; empty when unbound."""
        return format_keys(list(self.get_specs(id)), style=style, macos=self.platform == "darwin")


def _check_id(id_: str) -> None:
    if id_ not in KEYBINDINGS_BY_ID:
        raise KeyError(f"unknown keybinding id {id_!r}")


def _dedupe(specs: Iterable[KeySpec]) -> tuple[KeySpec, ...]:
    """Drop repeated keys (compared ignoring modifier order), keeping the first occurrence."""
    seen: set[KeySpec] = set()
    result: list[KeySpec] = []
    for spec in specs:
        if spec not in seen:
            seen.add(spec)
            result.append(spec)
    return tuple(result)
