"""One check of the export declarations of every package `__init__` of a distribution, shared by each layer's tests.

A package root declares its public names in `__all__`. A root that loads names lazily (PEP 562) also has a
`_EXPORTS` table (name -> defining module) and, for type checkers, `if TYPE_CHECKING:` imports of the same names.
`export_problems("apex_x")` walks `apex_x` and all its subpackages and returns what disagrees:

- `__all__` has a duplicate, or a name `getattr` cannot resolve;
- a `_EXPORTS` key is missing from `__all__`, or a name of `__all__` is neither in `_EXPORTS` nor defined by the
  import of the package itself (so it would only exist once something else imports it);
- a lazy name is also defined eagerly (declared twice);
- the `TYPE_CHECKING` imports name other names, or other modules, than `_EXPORTS`.

For a lazy package the eager side is read in a fresh interpreter, so names cached by earlier lazy accesses cannot hide an eager duplicate.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

_PROBE = "import importlib, json, sys; print(json.dumps(sorted(vars(importlib.import_module(sys.argv[1])))))"


def _packages(root_name: str) -> list[str]:
    root = importlib.import_module(root_name)
    subpackages = pkgutil.walk_packages(root.__path__, root.__name__ + ".")
    return [root.__name__, *(info.name for info in subpackages if info.ispkg)]


def _defined_by_import(name: str) -> set[str]:
    """The names `import name` defines, in a fresh interpreter (no lazy name accessed yet)."""
    out = subprocess.run([sys.executable, "-c", _PROBE, name], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout))


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """Name -> absolute module of each `from M import N` under `if TYPE_CHECKING:` at the top of `module`."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module is not None:
                base = stmt.module
                if stmt.level:
                    base = importlib.util.resolve_name("." * stmt.level + stmt.module, module.__name__)
                for alias in stmt.names:
                    found[alias.asname or alias.name] = base
    return found


def export_problems(root_name: str) -> list[str]:
    """Every disagreement in the export declarations of `root_name` and its subpackages (empty when all agree)."""
    problems: list[str] = []
    for name in _packages(root_name):
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        lazy: dict[str, str] = getattr(module, "_EXPORTS", {})
        if exported is None:
            if lazy:
                problems.append(f"{name}: has _EXPORTS but no __all__")
            continue
        exported = list(exported)
        seen: set[str] = set()
        for export in exported:
            if export in seen:
                problems.append(f"{name}: {export!r} appears twice in __all__")
            seen.add(export)
            try:
                getattr(module, export)
            except AttributeError:
                problems.append(f"{name}: {export!r} is in __all__ but does not resolve")
        defined = _defined_by_import(name) if lazy else set(vars(module))
        problems.extend(f"{name}: lazy name {key!r} is not in __all__" for key in lazy if key not in seen)
        problems.extend(f"{name}: lazy name {key!r} is also defined eagerly" for key in lazy if key in defined)
        problems.extend(
            f"{name}: {export!r} is in __all__ but neither lazy nor defined by the import"
            for export in exported
            if export not in lazy and export not in defined
        )
        if lazy:
            absolute = {key: importlib.util.resolve_name(target, name) for key, target in lazy.items()}
            typed = _type_checking_imports(module)
            problems.extend(
                f"{name}: {key!r} is lazy from {absolute.get(key)} but TYPE_CHECKING imports it from {typed.get(key)}"
                for key in sorted(absolute.keys() | typed.keys())
                if typed.get(key) != absolute.get(key)
            )
    return problems


__all__ = ["export_problems"]
