"""`python -m apex_coding_agent.cli`: the same entry as the `apex-code` console script."""

import sys

from apex_coding_agent.cli.main import main

if __name__ == "__main__":  # pragma: no cover - run by `python -m`
    sys.exit(main())
