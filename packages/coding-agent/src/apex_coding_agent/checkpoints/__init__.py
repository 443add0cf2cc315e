"""File checkpoints tied to the session tree: what each user turn changed, and rewinding to before it.

Imported lazily: a session builds its `Checkpoints` at start, but the scanner, the store and the restore engine
are loaded only when a turn first changes a file or a rewind is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.checkpoints.blobs import BlobStore as BlobStore
    from apex_coding_agent.checkpoints.gc import GarbageReport as GarbageReport
    from apex_coding_agent.checkpoints.gc import collect_garbage as collect_garbage
    from apex_coding_agent.checkpoints.gc import collect_unreferenced_blobs as collect_unreferenced_blobs
    from apex_coding_agent.checkpoints.manager import Checkpoint as Checkpoint
    from apex_coding_agent.checkpoints.manager import Checkpoints as Checkpoints
    from apex_coding_agent.checkpoints.manager import RewindResult as RewindResult
    from apex_coding_agent.checkpoints.manifest import CHECKPOINT_TYPE as CHECKPOINT_TYPE
    from apex_coding_agent.checkpoints.manifest import REDO_TYPE as REDO_TYPE
    from apex_coding_agent.checkpoints.manifest import REWIND_TYPE as REWIND_TYPE
    from apex_coding_agent.checkpoints.manifest import RewindMode as RewindMode
    from apex_coding_agent.checkpoints.restore import Conflict as Conflict

_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
