"""Check the built wheels: one per package, and every dependency on a sibling layer has a range.

A wheel that lists `apex-ai` without a version would let pip pair layers that do not fit.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

EXPECTED = {"apex_ai", "apex_agent", "apex_coding_agent", "apex_tui"}


def main(folder: str) -> int:
    wheels = {p.name.split("-")[0]: p for p in Path(folder).glob("*.whl")}
    missing = EXPECTED - set(wheels)
    if missing:
        print(f"FAIL: no wheel for {sorted(missing)}", file=sys.stderr)
        return 1
    failures = []
    for path in sorted(wheels.values()):
        with zipfile.ZipFile(path) as wheel:
            metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            requires = [
                line.split(":", 1)[1].strip()
                for line in wheel.read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")
            ]
            if not any(n.endswith("py.typed") for n in wheel.namelist()):
                failures.append(f"{path.name}: no py.typed")
        failures.extend(
            f"{path.name}: sibling dependency without a version range: {req}"
            for req in requires
            if req.startswith("apex-") and not any(op in req for op in (">=", "<", "==", "~="))
        )
        print(f"ok: {path.name} requires {requires}")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
