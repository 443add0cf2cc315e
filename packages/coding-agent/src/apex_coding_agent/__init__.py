"""The headless coding agent of Apex Code: tools, sessions, settings, modes and the SDK.

Names are loaded on first access (PEP 562): `apex-code --version` imports this package and must not
pay for pydantic or the agent runtime.

    from apex_coding_agent import create_agent_session
    result = await create_agent_session(cwd=".")
    await result.session.prompt("List the files here")
"""

from __future__ import annotations

from apex_coding_agent._lazy import lazy_exports

# No `typing` import: this module is on the path of `apex-code --version`, which must start in a few
# milliseconds. Type checkers treat a constant named TYPE_CHECKING as true.
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # runtime / SDK
    "AgentSession": "apex_coding_agent.runtime",
    "AgentSessionRuntime": "apex_coding_agent.runtime",
    "CreateAgentSessionResult": "apex_coding_agent.runtime",
    "BashResult": "apex_coding_agent.runtime",
    "SessionEvent": "apex_coding_agent.runtime",
    "create_agent_session": "apex_coding_agent.runtime",
    "create_agent_session_runtime": "apex_coding_agent.runtime",
    "to_json_event": "apex_coding_agent.runtime",
    # modes
    "run_print_mode": "apex_coding_agent.modes.print_mode",
    "run_rpc_mode": "apex_coding_agent.modes.rpc",
    # sessions
    "SessionManager": "apex_coding_agent.session",
    "SessionContext": "apex_coding_agent.session",
    "SessionInfo": "apex_coding_agent.session",
    "SessionStats": "apex_coding_agent.session",
    "SessionFileError": "apex_coding_agent.session",
    "SessionLockedError": "apex_coding_agent.session",
    "SessionWriteError": "apex_coding_agent.session",
    "SearchHit": "apex_coding_agent.session.search",
    "search_sessions": "apex_coding_agent.session.search",
    # core services
    "SettingsManager": "apex_coding_agent.core.settings",
    "ModelRuntime": "apex_coding_agent.core.model_runtime",
    "AuthStorage": "apex_coding_agent.core.auth_storage",
    "PermissionGate": "apex_coding_agent.core.permissions",
    "PermissionRule": "apex_coding_agent.core.permissions",
    "TrustStore": "apex_coding_agent.core.trust",
    "resolve_project_trusted": "apex_coding_agent.core.trust",
    # messages and tools
    "BashExecutionMessage": "apex_coding_agent.messages",
    "CustomMessage": "apex_coding_agent.messages",
    "BranchSummaryMessage": "apex_coding_agent.messages",
    "CompactionSummaryMessage": "apex_coding_agent.messages",
    "convert_to_llm": "apex_coding_agent.messages",
    "create_coding_tools": "apex_coding_agent.tools",
    "create_read_only_tools": "apex_coding_agent.tools",
    "create_all_tools": "apex_coding_agent.tools",
    # paths
    "get_agent_dir": "apex_coding_agent.paths",
    # export
    "export_session_html": "apex_coding_agent.export",
    "export_session_jsonl": "apex_coding_agent.export",
    "import_session_jsonl": "apex_coding_agent.export",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from apex_coding_agent.core.auth_storage import AuthStorage as AuthStorage
    from apex_coding_agent.core.model_runtime import ModelRuntime as ModelRuntime
    from apex_coding_agent.core.permissions import PermissionGate as PermissionGate
    from apex_coding_agent.core.permissions import PermissionRule as PermissionRule
    from apex_coding_agent.core.settings import SettingsManager as SettingsManager
    from apex_coding_agent.core.trust import TrustStore as TrustStore
    from apex_coding_agent.core.trust import resolve_project_trusted as resolve_project_trusted
    from apex_coding_agent.export import export_session_html as export_session_html
    from apex_coding_agent.export import export_session_jsonl as export_session_jsonl
    from apex_coding_agent.export import import_session_jsonl as import_session_jsonl
    from apex_coding_agent.messages import BashExecutionMessage as BashExecutionMessage
    from apex_coding_agent.messages import BranchSummaryMessage as BranchSummaryMessage
    from apex_coding_agent.messages import CompactionSummaryMessage as CompactionSummaryMessage
    from apex_coding_agent.messages import CustomMessage as CustomMessage
    from apex_coding_agent.messages import convert_to_llm as convert_to_llm
    from apex_coding_agent.modes.print_mode import run_print_mode as run_print_mode
    from apex_coding_agent.modes.rpc import run_rpc_mode as run_rpc_mode
    from apex_coding_agent.paths import get_agent_dir as get_agent_dir
    from apex_coding_agent.runtime import AgentSession as AgentSession
    from apex_coding_agent.runtime import AgentSessionRuntime as AgentSessionRuntime
    from apex_coding_agent.runtime import BashResult as BashResult
    from apex_coding_agent.runtime import CreateAgentSessionResult as CreateAgentSessionResult
    from apex_coding_agent.runtime import SessionEvent as SessionEvent
    from apex_coding_agent.runtime import create_agent_session as create_agent_session
    from apex_coding_agent.runtime import create_agent_session_runtime as create_agent_session_runtime
    from apex_coding_agent.runtime import to_json_event as to_json_event
    from apex_coding_agent.session import SessionContext as SessionContext
    from apex_coding_agent.session import SessionFileError as SessionFileError
    from apex_coding_agent.session import SessionInfo as SessionInfo
    from apex_coding_agent.session import SessionLockedError as SessionLockedError
    from apex_coding_agent.session import SessionManager as SessionManager
    from apex_coding_agent.session import SessionStats as SessionStats
    from apex_coding_agent.session import SessionWriteError as SessionWriteError
    from apex_coding_agent.session.search import SearchHit as SearchHit
    from apex_coding_agent.session.search import search_sessions as search_sessions
    from apex_coding_agent.tools import create_all_tools as create_all_tools
    from apex_coding_agent.tools import create_coding_tools as create_coding_tools
    from apex_coding_agent.tools import create_read_only_tools as create_read_only_tools

__all__ = sorted([*_EXPORTS, "__version__"])
