"""File checkpoints tied to the session tree: what each user turn changed, and rewinding to before it."""

from apex_coding_agent.checkpoints.blobs import BlobStore
from apex_coding_agent.checkpoints.gc import collect_garbage
from apex_coding_agent.checkpoints.manager import Checkpoint, Checkpoints, RewindResult
from apex_coding_agent.checkpoints.manifest import CHECKPOINT_TYPE, REDO_TYPE, REWIND_TYPE, RewindMode
from apex_coding_agent.checkpoints.restore import Conflict

__all__ = [
    "CHECKPOINT_TYPE",
    "REDO_TYPE",
    "REWIND_TYPE",
    "BlobStore",
    "Checkpoint",
    "Checkpoints",
    "Conflict",
    "RewindMode",
    "RewindResult",
    "collect_garbage",
]
