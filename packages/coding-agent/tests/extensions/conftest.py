"""Extension tests import their stub llama.cpp router by name (pytest runs with --import-mode=importlib)."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from llama_router_stub import RouterState, serve_router  # noqa: E402  (needs the path above)


@pytest.fixture
def router() -> Iterator[tuple[str, RouterState]]:
    with serve_router() as served:
        yield served
