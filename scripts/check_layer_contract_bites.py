"""Show that the layer contract of pyproject.toml fails on an upward import.

Copies the real `[tool.importlinter]` section into a scratch project whose `apex_ai` imports
`apex_agent`, runs lint-imports there and exits non-zero unless lint-imports rejected it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"unexpected value in [tool.importlinter]: {value!r}")


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[tool.importlinter]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in config.items() if k != "contracts"]
    for contract in config["contracts"]:
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in contract.items()]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "pyproject.toml").write_text("\n".join(lines) + "\n")
        for pkg in config["root_packages"]:
            (base / pkg).mkdir()
            (base / pkg / "__init__.py").write_text("")
        # The violation: the lowest layer reaches up to the one above it.
        (base / "apex_ai" / "violation.py").write_text("import apex_agent\n")
        env = {**os.environ, "PYTHONPATH": str(base)}
        proc = subprocess.run(["lint-imports"], cwd=base, env=env, capture_output=True, text=True)
    if proc.returncode == 0:
        print("FAIL: lint-imports accepted apex_ai importing apex_agent", file=sys.stderr)
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return 1
    if "apex_ai.violation -> apex_agent" not in proc.stdout:
        print("FAIL: lint-imports failed, but not for the planted violation:", file=sys.stderr)
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return 1
    print("ok: the layer contract rejects an upward import (apex_ai.violation -> apex_agent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
