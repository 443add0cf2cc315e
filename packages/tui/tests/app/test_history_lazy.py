"""Loading every kept-aside message at once (Home, transcript search) builds the same blocks as an eager load,
without a view's per-append bookkeeping (`BlockCollector`)."""

from pathlib import Path

import urwid
from app_helpers import AppHarness

from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from apex_tui.app._feed import TranscriptFeed
from apex_tui.app._history import INITIAL_MESSAGES, BlockCollector
from apex_tui.widgets import RenderContext, ToolCallBlock, TranscriptView


def conversation(exchanges: int) -> list[object]:
    """Prompt, reply with a tool call, tool result; `exchanges` times."""
    messages: list[object] = []
    for index in range(exchanges):
        messages.append(UserMessage(content=f"question {index}", timestamp=1))
        call = ToolCall(id=f"call_{index}", name="bash", arguments={"command": f"echo {index}"})
        reply = AssistantMessage(
            content=[TextContent(text=f"answer {index}"), call],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
            timestamp=1,
        )
        messages.append(reply)
        result = [TextContent(text=f"output {index}")]
        messages.append(ToolResultMessage(tool_call_id=f"call_{index}", tool_name="bash", content=result, timestamp=1))
    return messages


def eager_texts(messages: list[object]) -> list[tuple[str, str]]:
    """(block type, search text) of every block a feed over a real view makes from `messages`."""
    ctx = RenderContext()
    view = TranscriptView(ctx)
    feed = TranscriptFeed(view, ctx)
    for message in messages:
        feed.add_message(message)
    return [(type(block).__name__, block.search_text()) for block in view.walker]


def test_a_collector_gets_the_blocks_a_view_would_get_without_announcing_each() -> None:
    messages = conversation(20)
    ctx = RenderContext()
    collector = BlockCollector(ctx)
    announced: list[object] = []
    urwid.connect_signal(collector.walker, "modified", lambda: announced.append(None))
    feed = TranscriptFeed(collector, ctx)
    for message in messages:
        feed.add_message(message)
    assert [(type(block).__name__, block.search_text()) for block in collector.blocks] == eager_texts(messages)
    assert len(collector) == len(collector.blocks) and collector.last is collector.blocks[-1]
    assert announced == [] and len(collector.walker) == 0
    tools = [block for block in collector.blocks if isinstance(block, ToolCallBlock)]
    assert len(tools) == 20 and all(block.status == "success" for block in tools)  # results found their calls


async def test_load_all_matches_an_eager_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    messages = conversation(INITIAL_MESSAGES)  # three messages each: most are kept aside
    for message in messages:
        app.session.session_manager.append_message(message)  # type: ignore[arg-type]  # messages of the session
    app.session.agent.state.messages = list(messages)  # type: ignore[assignment]  # what a resumed session holds
    app.rebind_session()
    assert app.history.remaining > 0
    modified: list[object] = []
    urwid.connect_signal(app.transcript.walker, "modified", lambda: modified.append(None))
    app.load_history()
    assert app.history.remaining == 0
    texts = [(type(block).__name__, block.search_text()) for block in app.transcript.walker]
    assert texts[app.history.head :] == eager_texts(messages)
    assert len(modified) <= 2  # one splice (clear + extend), not one announcement per block
    harness.screen()  # the view learns its size
    app.transcript.scroll_to_top()
    assert "question 0" in harness.text()
