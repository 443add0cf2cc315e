"""RPC mode: JSONL commands on stdin, responses and session events on stdout."""

from apex_coding_agent.modes.rpc.rpc_mode import EXIT_SIGHUP, EXIT_SIGTERM, RpcServer, run_rpc_mode
from apex_coding_agent.modes.rpc.rpc_ui import RpcUi

__all__ = ["EXIT_SIGHUP", "EXIT_SIGTERM", "RpcServer", "RpcUi", "run_rpc_mode"]
