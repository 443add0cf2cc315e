"""The one lazy-export mechanism (PEP 562) behind this package's `__init__` modules.

Package roots re-export many names but must not import their modules up front: `apex-code --version`
imports the package root, and a print run should not pay for extensions, exports or compaction it
never touches. This module imports nothing beyond `sys` so the root stays cheap.

A lazy root declares each name once, as an import under its top-level `if TYPE_CHECKING:`,
`from M import N as N` (the redundant alias marks an explicit re-export, so strict mypy sees the type without a
literal `__all__`). At run time that block does not execute; `declared_exports` reads it from the module's source
into the `_EXPORTS` table `N -> M`, and `__all__` is derived from the table:

    if TYPE_CHECKING:
        from apex_coding_agent.runtime.agent_session import AgentSession as AgentSession

    _EXPORTS = declared_exports(__file__)
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    __all__ = sorted(_EXPORTS)

`apex_ai.testing.exports` parses the same block with `ast` and checks that it and the table agree.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # type checkers treat this name as true; `typing` stays unloaded at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def declared_exports(path: str) -> dict[str, str]:
    """`{N: M}` for each `from M import N as N` under the first top-level `if TYPE_CHECKING:` of the file at `path`.

    Plain string handling, no `ast` or `re`: this runs while `apex-code --version` imports the package root. Anything
    else in the block (another import form, an alias that renames) raises ImportError naming the file.
    """
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    try:
        start = lines.index("if TYPE_CHECKING:") + 1
    except ValueError:
        raise ImportError(f"{path}: no `if TYPE_CHECKING:` block declares its lazy exports") from None
    words: list[str] = []
    for line in lines[start:]:
        if line and not line[0].isspace():
            break
        code = line.partition("#")[0]
        words += code.replace("(", " ").replace(")", " ").replace(",", " , ").split()
    exports: dict[str, str] = {}
    module = ""
    i = 0
    while i < len(words):
        if words[i] == "from" and i + 2 < len(words) and words[i + 2] == "import":
            module, i = words[i + 1], i + 3
        elif words[i] == ",":
            i += 1
        elif module and i + 2 < len(words) and words[i + 1] == "as" and words[i] == words[i + 2]:
            exports[words[i]] = module
            i += 3
        else:
            raise ImportError(
                f"{path}: `if TYPE_CHECKING:` may hold only `from M import N as N` imports, at {words[i]!r}"
            )
    return exports


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


__all__ = ["declared_exports", "lazy_exports"]
