"""The static stylesheet and script of the exported HTML page (no session data in here)."""

from __future__ import annotations

PAGE_CSS = """
:root { color-scheme: light dark; --bg: #f6f6f4; --card: #ffffff; --fg: #1d1d1f; --muted: #6b6b70;
  --border: #dcdcde; --user: #eef3ff; --tool: #f4f4f6; --add: #1a7f37; --del: #cf222e; --addbg: #e6ffec;
  --delbg: #ffebe9; --err: #cf222e; --code: #f0f0f2; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #18181b; --card: #212126; --fg: #e6e6e8; --muted: #9a9aa2; --border: #34343a; --user: #232a3a;
    --tool: #1c1c21; --add: #56d364; --del: #f85149; --addbg: #12261a; --delbg: #2d1516; --err: #f85149;
    --code: #2a2a30; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 64px; }
h1 { font-size: 1.4em; margin: 0 0 12px; word-break: break-word; }
.session-header { background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: 16px;
  margin-bottom: 20px; }
.session-header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
.session-header dt { color: var(--muted); }
.session-header dd { margin: 0; word-break: break-all; font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 13px; }
.controls { margin-top: 12px; }
button { font: inherit; font-size: 13px; padding: 2px 10px; border: 1px solid var(--border); border-radius: 6px;
  background: var(--tool); color: var(--fg); cursor: pointer; }
.entry { background: var(--card); border: 1px solid var(--border); border-radius: 8px; margin: 12px 0;
  padding: 10px 14px; }
.entry.user { background: var(--user); }
.entry-head { display: flex; justify-content: space-between; gap: 12px; color: var(--muted); font-size: 13px;
  margin-bottom: 6px; }
.role { font-weight: 600; }
.plain { white-space: pre-wrap; word-break: break-word; }
.event { color: var(--muted); font-size: 13px; margin: 6px 14px; }
pre { background: var(--code); padding: 8px 10px; border-radius: 6px; overflow-x: auto; margin: 6px 0;
  font: 13px/1.45 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.92em; background: var(--code);
  padding: 0 3px; border-radius: 3px; }
pre code { background: none; padding: 0; }
.markdown p { margin: 6px 0; }
details { margin: 6px 0; }
summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.thinking pre { font-style: italic; color: var(--muted); }
.tool { background: var(--tool); border: 1px solid var(--border); border-radius: 6px; padding: 6px 10px;
  margin: 8px 0; }
.tool-error { border-color: var(--err); }
.tool-name { font-weight: 600; font-family: ui-monospace, Menlo, Consolas, monospace; }
.tool-summary { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; word-break: break-all; }
.status { margin-left: 8px; font-size: 12px; color: var(--muted); }
.status.failed, pre.error, .error { color: var(--err); }
.diff .diff-add { color: var(--add); background: var(--addbg); display: block; }
.diff .diff-del { color: var(--del); background: var(--delbg); display: block; }
.diff .diff-ctx { display: block; }
.image { max-width: 100%; border: 1px solid var(--border); border-radius: 4px; margin: 6px 0; display: block; }
.note, .empty, .image-missing, .args-line { color: var(--muted); font-size: 13px; }
.compaction, .branch-summary { border-style: dashed; }
"""

# The only script on the page: expand or collapse every <details> (tool outputs, thinking, summaries).
PAGE_SCRIPT = """
document.querySelectorAll("button[data-toggle]").forEach(function (button) {
  button.addEventListener("click", function () {
    var open = button.getAttribute("data-toggle") === "open";
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  });
});
"""

__all__ = ["PAGE_CSS", "PAGE_SCRIPT"]
