"""The headless coding agent of Apex Code: tools, sessions, settings, modes and the SDK.

This root is the package's public API: every name a program (the terminal app included) may use is exported here,
and the app imports nothing from below it (an import-linter contract in the workspace's pyproject.toml).

Names are loaded on first access (PEP 562): `apex-code --version` imports this package and must not
pay for pydantic or the agent runtime.

    from apex_coding_agent import create_agent_session
    result = await create_agent_session(cwd=".")
    await result.session.prompt("List the files here")
"""

from __future__ import annotations

from apex_coding_agent._lazy import declared_exports, lazy_exports

# No `typing` import: this module is on the path of `apex-code --version`, which must start in a few
# milliseconds. Type checkers treat a constant named TYPE_CHECKING as true.
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from apex_coding_agent.checkpoints import Checkpoint as Checkpoint
    from apex_coding_agent.checkpoints import Checkpoints as Checkpoints
    from apex_coding_agent.checkpoints import RewindMode as RewindMode
    from apex_coding_agent.checkpoints import RewindResult as RewindResult
    from apex_coding_agent.checkpoints import collect_unreferenced_blobs as collect_unreferenced_blobs
    from apex_coding_agent.cli.args import Args as Args
    from apex_coding_agent.cli.args import parse_args as parse_args
    from apex_coding_agent.cli.startup import build_runtime_from_args as build_runtime_from_args
    from apex_coding_agent.collector import collector_paused as collector_paused
    from apex_coding_agent.core.auth_storage import AuthError as AuthError
    from apex_coding_agent.core.auth_storage import AuthStorage as AuthStorage
    from apex_coding_agent.core.model_runtime import ModelRuntime as ModelRuntime
    from apex_coding_agent.core.permissions import PermissionGate as PermissionGate
    from apex_coding_agent.core.permissions import PermissionRule as PermissionRule
    from apex_coding_agent.core.permissions import Responder as Responder
    from apex_coding_agent.core.permissions import ResponderAnswer as ResponderAnswer
    from apex_coding_agent.core.settings import SettingsManager as SettingsManager
    from apex_coding_agent.core.trust import TrustFileError as TrustFileError
    from apex_coding_agent.core.trust import TrustPrompt as TrustPrompt
    from apex_coding_agent.core.trust import TrustStore as TrustStore
    from apex_coding_agent.core.trust import canonical_project_path as canonical_project_path
    from apex_coding_agent.core.trust import resolve_project_trusted as resolve_project_trusted
    from apex_coding_agent.events import AgentSettledEvent as AgentSettledEvent
    from apex_coding_agent.events import AutoRetryStartEvent as AutoRetryStartEvent
    from apex_coding_agent.events import BashExecutionUpdateEvent as BashExecutionUpdateEvent
    from apex_coding_agent.events import CompactionEndEvent as CompactionEndEvent
    from apex_coding_agent.events import CompactionStartEvent as CompactionStartEvent
    from apex_coding_agent.events import QueueUpdateEvent as QueueUpdateEvent
    from apex_coding_agent.events import SessionEvent as SessionEvent
    from apex_coding_agent.events import SessionInfoChangedEvent as SessionInfoChangedEvent
    from apex_coding_agent.events import SessionWriteErrorEvent as SessionWriteErrorEvent
    from apex_coding_agent.events import ThinkingLevelChangedEvent as ThinkingLevelChangedEvent
    from apex_coding_agent.events import to_json_event as to_json_event
    from apex_coding_agent.export import ExportError as ExportError
    from apex_coding_agent.export import export_session_html as export_session_html
    from apex_coding_agent.export import export_session_jsonl as export_session_jsonl
    from apex_coding_agent.export import import_session_jsonl as import_session_jsonl
    from apex_coding_agent.extensions.llama import LLAMA_DEFAULT_BASE_URL as LLAMA_DEFAULT_BASE_URL
    from apex_coding_agent.extensions.llama import LLAMA_PROVIDER_ID as LLAMA_PROVIDER_ID
    from apex_coding_agent.extensions.llama import normalize_llama_url as normalize_llama_url
    from apex_coding_agent.extensions.runner import ExtensionRunner as ExtensionRunner
    from apex_coding_agent.extensions.types import RegisteredShortcut as RegisteredShortcut
    from apex_coding_agent.log_lines import record_text as record_text
    from apex_coding_agent.mcp_servers import McpHost as McpHost
    from apex_coding_agent.mcp_servers import McpServerConfig as McpServerConfig
    from apex_coding_agent.mcp_servers import bind_mcp_runtime as bind_mcp_runtime
    from apex_coding_agent.mcp_servers import create_mcp_extension as create_mcp_extension
    from apex_coding_agent.mcp_servers import mcp_host_of as mcp_host_of
    from apex_coding_agent.messages import BashExecutionMessage as BashExecutionMessage
    from apex_coding_agent.messages import BranchSummaryMessage as BranchSummaryMessage
    from apex_coding_agent.messages import CompactionSummaryMessage as CompactionSummaryMessage
    from apex_coding_agent.messages import CustomMessage as CustomMessage
    from apex_coding_agent.messages import convert_to_llm as convert_to_llm
    from apex_coding_agent.modes.print_mode import run_print_mode as run_print_mode
    from apex_coding_agent.modes.rpc import run_rpc_mode as run_rpc_mode
    from apex_coding_agent.paths import get_agent_dir as get_agent_dir
    from apex_coding_agent.paths import is_default_session_dir as is_default_session_dir
    from apex_coding_agent.resources.loader import PackageResource as PackageResource
    from apex_coding_agent.resources.themes import DEFAULT_THEME as DEFAULT_THEME
    from apex_coding_agent.resources.themes import ThemeFlags as ThemeFlags
    from apex_coding_agent.resources.themes import ThemeLoadResult as ThemeLoadResult
    from apex_coding_agent.resources.themes import ThemeSource as ThemeSource
    from apex_coding_agent.resources.themes import discover_themes as discover_themes
    from apex_coding_agent.resources.themes import load_theme_file as load_theme_file
    from apex_coding_agent.resources.themes import select_theme as select_theme
    from apex_coding_agent.runtime import AgentSession as AgentSession
    from apex_coding_agent.runtime import AgentSessionRuntime as AgentSessionRuntime
    from apex_coding_agent.runtime import BashResult as BashResult
    from apex_coding_agent.runtime import CreateAgentSessionResult as CreateAgentSessionResult
    from apex_coding_agent.runtime import ScopedModel as ScopedModel
    from apex_coding_agent.runtime import create_agent_session as create_agent_session
    from apex_coding_agent.runtime import create_agent_session_runtime as create_agent_session_runtime
    from apex_coding_agent.session import BranchSummaryEntry as BranchSummaryEntry
    from apex_coding_agent.session import CompactionEntry as CompactionEntry
    from apex_coding_agent.session import CustomEntry as CustomEntry
    from apex_coding_agent.session import CustomMessageEntry as CustomMessageEntry
    from apex_coding_agent.session import EntryBase as EntryBase
    from apex_coding_agent.session import LabelEntry as LabelEntry
    from apex_coding_agent.session import LazyContextMessages as LazyContextMessages
    from apex_coding_agent.session import MessageEntry as MessageEntry
    from apex_coding_agent.session import ModelChangeEntry as ModelChangeEntry
    from apex_coding_agent.session import SessionContext as SessionContext
    from apex_coding_agent.session import SessionFileError as SessionFileError
    from apex_coding_agent.session import SessionInfo as SessionInfo
    from apex_coding_agent.session import SessionInfoEntry as SessionInfoEntry
    from apex_coding_agent.session import SessionLockedError as SessionLockedError
    from apex_coding_agent.session import SessionManager as SessionManager
    from apex_coding_agent.session import SessionStats as SessionStats
    from apex_coding_agent.session import SessionWriteError as SessionWriteError
    from apex_coding_agent.session import ThinkingLevelChangeEntry as ThinkingLevelChangeEntry
    from apex_coding_agent.session import TreeNode as TreeNode
    from apex_coding_agent.session.search import SearchError as SearchError
    from apex_coding_agent.session.search import SearchHit as SearchHit
    from apex_coding_agent.session.search import search_sessions as search_sessions
    from apex_coding_agent.tools import create_all_tools as create_all_tools
    from apex_coding_agent.tools import create_coding_tools as create_coding_tools
    from apex_coding_agent.tools import create_read_only_tools as create_read_only_tools
    from apex_coding_agent.tools.edit_diff import preview_edit_diff as preview_edit_diff

__all__ = sorted([*_EXPORTS, "__version__"])
