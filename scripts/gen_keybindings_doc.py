"""Print the keybindings reference tables (markdown) generated from the apex_tui registry.

Usage: uv run python scripts/gen_keybindings_doc.py > docs-table.md
"""

from __future__ import annotations

import sys

from apex_tui.keybindings import render_keybindings_reference


def main() -> int:
    sys.stdout.write(render_keybindings_reference())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
