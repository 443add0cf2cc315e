"""Export a session's active branch as one self-contained HTML file (CLI `--export`, `/export`, RPC `export_html`).

The page has inline CSS and a few lines of inline script (expand/collapse all tool outputs); it loads nothing: a
Content-Security-Policy forbids every network fetch, and images are embedded as `data:` URIs. All session text is
HTML-escaped; assistant text goes through a small Markdown subset that escapes before adding its own tags.
"""

from __future__ import annotations

import os
from pathlib import Path

from apex_ai.types import AssistantMessage
from apex_coding_agent.export._load import ExportError, resolve_session
from apex_coding_agent.export._markdown import escape
from apex_coding_agent.export._page import PAGE_CSS, PAGE_SCRIPT
from apex_coding_agent.export._render import BranchRenderer
from apex_coding_agent.session.entries import EntryBase, MessageEntry, ModelChangeEntry
from apex_coding_agent.session.session_manager import SessionManager, session_file_name

DEFAULT_EXPORT_PREFIX = "apex-code-session-"
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def default_html_path(session_file: str | Path, cwd: str | Path | None = None) -> Path:
    """`<cwd>/apex-code-session-<session file stem>.html` (cwd defaults to the process cwd), as the reference
    product names it: relative to where the command runs, not next to the session file."""
    base = Path(cwd) if cwd is not None else Path(os.getcwd())
    return base / f"{DEFAULT_EXPORT_PREFIX}{Path(session_file).stem}.html"


def _models(entries: list[EntryBase]) -> list[str]:
    """Models used on the branch, in first-use order (model changes and assistant replies)."""
    seen: list[str] = []
    for entry in entries:
        name = None
        if isinstance(entry, ModelChangeEntry):
            name = f"{entry.provider}/{entry.model_id}"
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            name = f"{entry.message.provider}/{entry.message.model}"
        if name is not None and name not in seen:
            seen.append(name)
    return seen


def _row(label: str, value: str | None) -> str:
    return f"<dt>{escape(label)}</dt><dd>{escape(value)}</dd>" if value else ""


def render_session_html(manager: SessionManager, session_file: Path | None = None) -> str:
    """The complete HTML document for `manager`'s active branch (root -> leaf)."""
    header = manager.get_header()
    entries = manager.get_branch()
    name = manager.get_session_name()
    title = name or f"Session {header.id}"
    message_count = sum(1 for entry in entries if isinstance(entry, MessageEntry))
    rows = [
        _row("Session", header.id),
        _row("Name", name),
        _row("Working directory", header.cwd),
        _row("Created", header.timestamp),
        _row("Last entry", entries[-1].timestamp if entries else None),
        _row("File", str(session_file) if session_file is not None else None),
        _row("Parent session", header.parent_session),
        _row("Models", ", ".join(_models(entries))),
        _row("Messages on this branch", str(message_count)),
    ]
    body = "\n".join(BranchRenderer(entries).render()) or '<div class="empty">(no messages)</div>'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{PAGE_CSS}</style></head>\n"
        f'<body><main><header class="session-header"><h1>{escape(title)}</h1>'
        f"<dl>{''.join(rows)}</dl>"
        '<div class="controls"><button type="button" data-toggle="open">Expand all</button> '
        '<button type="button" data-toggle="close">Collapse all</button></div></header>\n'
        f'<div class="transcript">\n{body}\n</div></main>\n'
        f"<script>{PAGE_SCRIPT}</script></body></html>\n"
    )


def export_session_html(
    session: str | Path | SessionManager, output_path: str | Path | None = None, cwd: str | Path | None = None
) -> Path:
    """Write the active branch of `session` (a session file path or a live manager) as HTML; returns the path.

    The default output is `default_html_path(session file)` in `cwd` (default: the process cwd); an in-memory
    session without a file is named after its header as a file would be. A relative `output_path` is taken
    relative to `cwd`. A path is read without modifying it (old versions are migrated in memory only). Raises
    ExportError for a missing or non-session file, OSError when the output cannot be written.
    """
    manager, session_file = resolve_session(session)
    base = Path(cwd) if cwd is not None else Path(os.getcwd())
    if output_path is None:
        stem_source = session_file if session_file is not None else Path(session_file_name(manager.get_header()))
        target = default_html_path(stem_source, base)
    else:
        target = base / Path(output_path).expanduser()
    document = render_session_html(manager, session_file)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(document, encoding="utf-8")
    return target


__all__ = ["DEFAULT_EXPORT_PREFIX", "ExportError", "default_html_path", "export_session_html", "render_session_html"]
