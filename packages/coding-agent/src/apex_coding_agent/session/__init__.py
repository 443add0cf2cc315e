"""Session files: entries, the JSONL file layer and the tree manager (spec sessions.md)."""
