"""The one lazy-export mechanism (PEP 562) behind this package's `__init__` modules.

Package roots re-export many names but must not import their modules up front: `apex-code --version`
imports the package root, and a print run should not pay for extensions, exports or compaction it
never touches. This module imports nothing beyond `sys` so the root stays cheap.

A lazy root writes each name in two places: an `if TYPE_CHECKING:` import `from M import N as N` (the redundant
alias marks an explicit re-export, so strict mypy sees the type without a literal `__all__`) and the `_EXPORTS`
table `N -> M`; `__all__` is derived from the table. `apex_ai.testing.exports` checks that the two agree.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # type checkers treat this name as true; `typing` stays unloaded at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def lazy_exports(
    module_name: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `module_name`.

    `exports` maps an exported name to the module defining it, absolute or relative to `module_name`
    (`".resolve"`). The first access imports that module and caches the value on the package, so later
    lookups never come back here.
    """

    def __getattr__(name: str) -> object:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(target, module_name), name)
        setattr(sys.modules[module_name], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module_name]), *exports})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
