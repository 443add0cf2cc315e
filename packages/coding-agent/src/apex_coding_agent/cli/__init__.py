"""The `apex-code` command: parsing (`args`), `--help` (`help`), model and session choice (`models`, `session`), the
shared startup path (`startup`) and the entry point (`main`).

Importing this package loads only the standard library (plus `apex_coding_agent`'s own `__init__`): `--version` and
`--help` answer without pydantic or a provider SDK.
"""

from apex_coding_agent.cli.main import main

__all__ = ["main"]
