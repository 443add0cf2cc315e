"""Session files: entries, the JSONL file layer and the tree manager."""

from apex_coding_agent.session.branch_view import BranchView
from apex_coding_agent.session.context import LazyContextMessages, ModelRef, SessionContext
from apex_coding_agent.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from apex_coding_agent.session.file_errors import (
    NotARegularFileError,
    SessionFileError,
    SessionLockedError,
    SessionWriteError,
)
from apex_coding_agent.session.listing import SessionInfo
from apex_coding_agent.session.records import SessionIssue
from apex_coding_agent.session.session_manager import SessionManager, TreeNode
from apex_coding_agent.session.stats import SessionStats, compute_session_stats

__all__ = [
    "BranchSummaryEntry",
    "BranchView",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "EntryBase",
    "LabelEntry",
    "LazyContextMessages",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "NotARegularFileError",
    "SessionContext",
    "SessionFileError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionIssue",
    "SessionLockedError",
    "SessionManager",
    "SessionStats",
    "SessionWriteError",
    "ThinkingLevelChangeEntry",
    "TreeNode",
    "UnknownEntry",
    "compute_session_stats",
]
