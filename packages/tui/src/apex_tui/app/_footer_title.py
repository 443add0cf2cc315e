"""The footer's figures and the terminal title."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from apex_ai.types import Model

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def update_footer(app: InteractiveApp, *, stats: bool = True) -> None:
    """Model, thinking level, session name and usage totals; with `stats=False`, everything but the usage
    figures, which the footer then leaves out until a full update (`stats_reads` counts full updates)."""
    session = app.session
    model = session.model
    changes: dict[str, Any] = {
        "session_name": session.session_name,
        "model_id": model.id if model else None,
        "provider": model.provider if model else None,
        "reasoning": bool(model.reasoning) if model else False,
        "thinking_level": session.thinking_level,
        "auto_compact": session.auto_compaction_enabled,
    }
    if not stats:
        changes["stats_pending"] = True
        app.footer.update(**changes)
        return
    app._stats_due = False
    app.stats_reads += 1
    # Looked up with the usage figures (after the first frame): it walks the model catalog.
    changes["show_provider"] = several_providers(app)
    changes["stats_pending"] = False
    try:
        figures = session.get_session_stats()
    except Exception:  # stats are decoration: a footer must never break the app
        figures = None
    if figures is not None:
        changes.update(
            input_tokens=figures.tokens.input,
            output_tokens=figures.tokens.output,
            cache_read_tokens=figures.tokens.cache_read,
            cache_write_tokens=figures.tokens.cache_write,
            cost=figures.cost,
        )
        usage = figures.context_usage
        if usage is not None:
            changes.update(context_percent=usage.percent, context_window=usage.context_window)
    app.footer.update(**changes)


def several_providers(app: InteractiveApp) -> bool:
    """Whether models of more than one provider can be used: the footer then names the model's provider."""
    runtime = app.session.model_runtime
    try:
        first: dict[str, Model] = {}  # one model per provider: availability is per provider
        for model in runtime.registry.list_models():
            first.setdefault(model.provider, model)
        return len(first) > 1 and sum(1 for m in first.values() if runtime.is_available(m)) > 1
    except Exception:  # decoration: a footer must never break the app
        return False


def update_title(app: InteractiveApp) -> None:
    """Terminal title `apex-code - <session name> - <cwd basename>` (name omitted when unnamed)."""
    app.custom_title = None
    if app.title_sink is None:
        return
    name = app.session.session_name
    parts = ["apex-code", *([name] if name else []), os.path.basename(app.cwd.rstrip("/")) or "/"]
    app.title_sink(" - ".join(parts))


def set_title(app: InteractiveApp, title: str) -> None:
    """An extension's terminal title (kept until the session name changes)."""
    app.custom_title = title
    if app.title_sink is not None:
        app.title_sink(title)
