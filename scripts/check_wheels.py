"""Check the built wheels: one per package, every dependency on a sibling layer has a range, and the packages whose
changelog `/changelog` shows carry it.

A wheel that lists `apex-ai` without a version would let pip pair layers that do not fit. A wheel without
`<module>/CHANGELOG.md` (or with one that differs from `packages/<folder>/CHANGELOG.md`, say a symlink checked out as a
plain file) would leave `/changelog` and the start-up "what's new" with nothing to show.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

EXPECTED = {"apex_ai", "apex_agent", "apex_coding_agent", "apex_tui"}
CHANGELOGS = {"apex_coding_agent": "coding-agent", "apex_tui": "tui"}
"""Import name -> folder under `packages/` of the wheels that must ship `<import name>/CHANGELOG.md`."""
REPO = Path(__file__).resolve().parent.parent


def changelog_problems(wheel: zipfile.ZipFile, module: str, expected: str) -> list[str]:
    """What is wrong with the changelog inside `wheel` for package `module`; empty when it equals `expected`."""
    member = f"{module}/CHANGELOG.md"
    if member not in wheel.namelist():
        return [f"no {member}"]
    record = next((n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")), None)
    problems = []
    if record is None or not any(line.startswith(f"{member},") for line in wheel.read(record).decode().splitlines()):
        problems.append(f"{member} is not listed in RECORD")
    if wheel.read(member).decode("utf-8", errors="replace") != expected:
        problems.append(f"{member} differs from the project's CHANGELOG.md")
    return problems


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
            module = path.name.split("-")[0]
            if module in CHANGELOGS:
                expected = (REPO / "packages" / CHANGELOGS[module] / "CHANGELOG.md").read_text(encoding="utf-8")
                failures.extend(f"{path.name}: {problem}" for problem in changelog_problems(wheel, module, expected))
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
