"""Show that every layers and forbidden contract of pyproject.toml fails on the import it forbids.

Copies the real `[tool.importlinter]` section into a scratch project holding an empty package for each layer, plants
one violation per layers contract (its lowest layer imports its top one: `apex_ai` imports `apex_tui`,
`apex_coding_agent.tools` imports `apex_coding_agent.cli`, ...) and one per forbidden contract (its first source module
imports a module its first forbidden expression matches, `*` standing for `internal`: `apex_tui` imports
`apex_coding_agent.internal`), runs lint-imports there and exits non-zero unless lint-imports rejected every one of
them. The import cycles the contracts were written to break are planted again too (`CYCLES`): each back edge must be
rejected.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Back edges of cycles that once existed (importer, imported): a contract must keep rejecting each.
CYCLES = [
    ("apex_coding_agent.runtime.extension_host", "apex_coding_agent.runtime.agent_session"),
    ("apex_coding_agent.runtime.extension_host", "apex_coding_agent.runtime.session_runtime"),
    ("apex_coding_agent.runtime.session_wiring", "apex_coding_agent.runtime.agent_session"),
]


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"unexpected value in [tool.importlinter]: {value!r}")


def _layer_modules(contract: dict[str, Any]) -> list[list[str]]:
    """The full module names of each layer of a layers contract, top layer first (`a | b` siblings split)."""
    containers = contract.get("containers", [""])
    return [
        [
            f"{container}.{name.strip()}".strip(".")
            for container in containers
            for name in layer.replace(":", "|").split("|")
        ]
        for layer in (str(entry).strip("() ") for entry in contract["layers"])
    ]


def _package(base: Path, module: str) -> Path:
    """Create `module` (and its parents) as empty packages under `base`; its directory."""
    path = base
    for part in module.split("."):
        path = path / part
        path.mkdir(exist_ok=True)
        (path / "__init__.py").touch()
    return path


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[tool.importlinter]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in config.items() if k != "contracts"]
    for contract in config["contracts"]:
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in contract.items()]
    expected: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "pyproject.toml").write_text("\n".join(lines) + "\n")
        for pkg in config["root_packages"]:
            _package(base, pkg)
        for contract in config["contracts"]:
            if contract["type"] == "forbidden":
                source = contract["source_modules"][0]
                target = contract["forbidden_modules"][0].replace("**", "internal").replace("*", "internal")
                _package(base, target)
                (_package(base, source) / "violation.py").write_text(f"import {target}\n")
                expected.append(f"{source}.violation -> {target}")
                continue
            if contract["type"] != "layers":
                continue
            layers = _layer_modules(contract)
            for layer in layers:
                for module in layer:
                    _package(base, module)
            # The violation: the lowest layer reaches up to the top one.
            low, top = layers[-1][0], layers[0][0]
            (base / low.replace(".", "/") / "violation.py").write_text(f"import {top}\n")
            expected.append(f"{low}.violation -> {top}")
        for number, (importer, imported) in enumerate(CYCLES):
            _package(base, imported)
            (_package(base, importer) / f"cycle{number}.py").write_text(f"import {imported}\n")
            expected.append(f"{importer}.cycle{number} -> {imported}")
        env = {**os.environ, "PYTHONPATH": str(base)}
        proc = subprocess.run(["lint-imports"], cwd=base, env=env, capture_output=True, text=True)
    if proc.returncode == 0:
        print(f"FAIL: lint-imports accepted the upward imports {expected}", file=sys.stderr)
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return 1
    report = " ".join(proc.stdout.split())  # lint-imports wraps long lines to the terminal width
    missed = [violation for violation in expected if violation not in report]
    if missed:
        print(f"FAIL: lint-imports failed, but did not report the planted violations {missed}:", file=sys.stderr)
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return 1
    for violation in expected:
        print(f"ok: a contract rejects the forbidden import ({violation})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
