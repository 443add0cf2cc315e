"""File checkpoints tied to the session tree: what each user turn changed, and rewinding to before it.

Imported lazily: a session builds its `Checkpoints` at start, but the scanner, the store and the restore engine
are loaded only when a turn first changes a file or a rewind is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from .blobs import BlobStore as BlobStore
    from .gc import collect_garbage as collect_garbage
    from .manager import Checkpoint as Checkpoint
    from .manager import Checkpoints as Checkpoints
    from .manager import RewindResult as RewindResult
    from .manifest import CHECKPOINT_TYPE as CHECKPOINT_TYPE
    from .manifest import REDO_TYPE as REDO_TYPE
    from .manifest import REWIND_TYPE as REWIND_TYPE
    from .manifest import RewindMode as RewindMode
    from .restore import Conflict as Conflict

_EXPORTS = {
    "BlobStore": ".blobs",
    "collect_garbage": ".gc",
    "Checkpoint": ".manager",
    "Checkpoints": ".manager",
    "RewindResult": ".manager",
    "CHECKPOINT_TYPE": ".manifest",
    "REDO_TYPE": ".manifest",
    "REWIND_TYPE": ".manifest",
    "RewindMode": ".manifest",
    "Conflict": ".restore",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
