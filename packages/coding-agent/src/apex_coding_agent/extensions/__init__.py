"""Extensions: Python modules that register tools, commands, providers and event handlers.

Host wiring, in order:

1. `runtime, result = await load_extensions(discover_extension_sources(...), inline=[...])` (global + CLI),
   `runner = ExtensionRunner(runtime, ui=..., mode=...)`, then `await runner.emit_project_trust(cwd)`; once
   trusted, `load_extensions(project_sources, runtime)` again.
2. `runner.flush_providers(model_runtime)`; tools from `runner.get_tools()`.
3. `runtime.bind_session(session_binding, runtime_actions)`; then `await runner.emit(SessionStartEvent(...))`.

The llama.cpp client and built-in extension live in `apex_coding_agent.extensions.llama` (imported on demand:
it pulls in httpx2).
"""

from apex_coding_agent.extensions.api import EventBus, ExtensionAPI, ExtensionRuntime
from apex_coding_agent.extensions.bindings import (
    ExtensionNotBoundError,
    NoUi,
    RuntimeActions,
    SessionBinding,
    StaleContextError,
    UiBinding,
)
from apex_coding_agent.extensions.context import ExtensionCommandContext, ExtensionContext, ProjectTrustContext
from apex_coding_agent.extensions.events import InputRejectedError
from apex_coding_agent.extensions.exec_command import ExecResult
from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
    ExtensionSource,
    InlineExtension,
    LoadExtensionsResult,
    discover_extension_sources,
    load_extensions,
)
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.extensions.types import Extension, ToolDefinition

__all__ = [
    "EventBus",
    "ExecResult",
    "Extension",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionDiagnostic",
    "ExtensionLoadError",
    "ExtensionNotBoundError",
    "ExtensionRunner",
    "ExtensionRuntime",
    "ExtensionSource",
    "InlineExtension",
    "InputRejectedError",
    "LoadExtensionsResult",
    "NoUi",
    "ProjectTrustContext",
    "RuntimeActions",
    "SessionBinding",
    "StaleContextError",
    "ToolDefinition",
    "UiBinding",
    "discover_extension_sources",
    "load_extensions",
]
