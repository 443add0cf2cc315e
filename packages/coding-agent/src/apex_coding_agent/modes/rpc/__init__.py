"""RPC mode (spec modes.md §7): JSONL commands on stdin, responses and session events on stdout."""
