"""Session export (self-contained HTML, session JSONL) and JSONL import."""

from apex_coding_agent.export._load import ExportError
from apex_coding_agent.export.html import (
    DEFAULT_EXPORT_PREFIX,
    default_html_path,
    export_session_html,
    render_session_html,
)
from apex_coding_agent.export.jsonl import (
    ImportResult,
    SessionCheck,
    check_session_jsonl,
    export_session_jsonl,
    import_session_jsonl,
)

__all__ = [
    "DEFAULT_EXPORT_PREFIX",
    "ExportError",
    "ImportResult",
    "SessionCheck",
    "check_session_jsonl",
    "default_html_path",
    "export_session_html",
    "export_session_jsonl",
    "import_session_jsonl",
    "render_session_html",
]
